//! Layer 7 (frameworks) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    FRAMEWORKS_RULES;
    FRAMEWORKS_NOT_CAPTURED = "frameworks.not-captured", Frameworks, Skip,
        "Python environments not captured: framework checks skipped",
        "The fixture holds no Python directory (usr/lib/python3, usr/lib/python3.*, \
         usr/local/lib/python3.*, opt/conda) and its [env] names no environment (VIRTUAL_ENV, \
         CONDA_PREFIX, PYTHONPATH), so which frameworks are installed is unknown. Live runs always \
         look: at VIRTUAL_ENV, CONDA_PREFIX, PYTHONPATH, ~/.local, ~/.pyenv, conda installs and \
         the system's site-packages and dist-packages.";
    FRAMEWORKS_UNREADABLE = "frameworks.files-unreadable", Frameworks, Skip,
        "Some Python package files could not be read",
        "A site directory, torch/version.py, a METADATA file or a library directory of a \
         framework exists but could not be read (permission denied, binary content, larger than \
         1 MiB, a symlink out of the fixture). What it would have said is unknown; the evidence \
         names each path and the reason. Another user's virtual environment under a private home \
         directory is the usual cause.";
    FRAMEWORKS_NONE = "frameworks.none", Frameworks, Info,
        "No PyTorch, JAX, TensorFlow, vLLM or ONNX Runtime found",
        "None of the site directories looked at (the active virtual or conda environment, \
         PYTHONPATH, ~/.local, pyenv and conda installs, /usr/lib/python3/dist-packages, \
         /usr/local/lib/python3.*/dist-packages …) holds a framework of layer 7. Running HIP \
         programs needs none; to use the GPU from Python install a ROCm build, for PyTorch `pip \
         install torch --index-url https://download.pytorch.org/whl/rocm6.2` (the ROCm release in \
         the URL), for JAX AMD's jax_rocm plugin. Environments elsewhere (a venv that is not \
         active) are not searched.";
    FRAMEWORKS_FOUND = "frameworks.found", Frameworks, Pass,
        "Frameworks found, with what each was built for",
        "One finding per site directory that holds a framework: PyTorch with its version (from \
         torch/version.py, never by importing it), the accelerator it was built for (the local \
         version label +rocm6.2 / +cu121 / +cpu, `hip` and `cuda` in version.py) and the ROCm \
         release it targets, the ROCm libraries it bundles in torch/lib; JAX and its \
         jax_rocm*_plugin; TensorFlow (tensorflow-rocm or the upstream wheel); vLLM; ONNX Runtime \
         and its execution providers; TheRock's rocm-sdk wheels. A site directory reached through \
         two paths is reported once.";
    TORCH_CPU_BUILD = "frameworks.torch-cpu-build", Frameworks, Warn,
        "PyTorch is a CPU-only build on a machine with AMD GPUs",
        "The installed torch was built without GPU support: its local version label is +cpu, or \
         torch/version.py says `hip: Optional[str] = None` and `cuda: Optional[str] = None` \
         (Debian's python3-torch is such a build). It runs, on the CPU only: \
         `torch.cuda.is_available()` returns False and `torch.version.hip` is None, so training \
         and inference silently fall back to the CPU, orders of magnitude slower. Usually a plain \
         `pip install torch` (PyPI's Linux wheels are CUDA builds, the CPU index gives +cpu), or a \
         dependency that pulled torch in. A warning, not a failure: the machine itself is \
         healthy and another environment may hold a ROCm build, so a node is not drained for it. \
         Install the ROCm wheel into the environment: `pip install torch --index-url \
         https://download.pytorch.org/whl/rocm<X.Y>` matching the system's ROCm release.";
    TORCH_CUDA_BUILD = "frameworks.torch-cuda-build", Frameworks, Warn,
        "PyTorch is a CUDA build on a machine with AMD GPUs",
        "The installed torch was built for NVIDIA's CUDA: its local version label is +cu121 \
         (or none: PyPI's default Linux wheels are CUDA builds), torch/version.py has `cuda: \
         Optional[str] = '12.1'` and `hip: Optional[str] = None`. On AMD GPUs it cannot use the \
         GPU: `torch.cuda.is_available()` returns False and `print(torch.version.cuda)` shows a \
         CUDA version although no NVIDIA driver exists, and work runs on the CPU. A warning for \
         the same reason as a CPU build. Replace it with the ROCm wheel: `pip uninstall torch` \
         then `pip install torch --index-url https://download.pytorch.org/whl/rocm<X.Y>`.";
    BUNDLED_ROCM_DIFFERS = "frameworks.bundled-rocm-differs", Frameworks, Info,
        "A framework bundles a ROCm release other than the system's",
        "PyTorch's ROCm wheels carry their own copies of ROCm's libraries in torch/lib \
         (libamdhip64.so, libhsa-runtime64.so, librocblas.so, libMIOpen.so, rocblas/library/ …) \
         and load them through their RUNPATH, and TheRock's rocm-sdk wheels carry a whole ROCm in \
         _rocm_sdk_core. The release they bundle (from the local version label +rocm6.0, `hip` in \
         torch/version.py, or AMD's encoded file names librocblas.so.4.2.60200) is named next to \
         the release a process would load from the system (/opt/rocm, the loader's path). Two \
         releases side by side work as long as each process loads one of them; they break when \
         LD_LIBRARY_PATH or LD_PRELOAD mixes them (`rocBLAS error: Could not load \
         /opt/rocm-6.0.0/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat`, `Could not \
         initialize Tensile library`), when extensions compiled with the system's hipcc are \
         loaded into the wheel's torch, or when the bundled release predates the GPU. Information \
         only; to align them install the wheel for the system's release (download.pytorch.org/whl/\
         rocm<X.Y>).";
    BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET = "frameworks.bundled-rocblas-no-kernels-for-target", Frameworks, Fail,
        "A framework's bundled rocBLAS has no Tensile kernels for a GPU's target",
        "PyTorch's ROCm wheels ship rocBLAS's GEMM kernels in torch/lib/rocblas/library/, one set \
         of files per processor (TensileLibrary_lazy_gfx90a.dat, Kernels.so-000-gfx90a.hsaco \
         …), and use them instead of the system's. When none carries the GPU's target the first \
         matmul aborts with `rocBLAS error: Cannot read \
         …/site-packages/torch/lib/rocblas/library/TensileLibrary.dat: No such file or directory \
         for GPU arch : gfx1103` and `List of available TensileLibrary Files`, or fails with \
         `RuntimeError: HIP error: invalid device function`. The target is the effective one \
         (HSA_OVERRIDE_GFX_VERSION replaces it, as for libraries.rocblas-no-kernels-for-target). \
         Install a wheel whose ROCm release supports the GPU, or set HSA_OVERRIDE_GFX_VERSION to a \
         same-family target the wheel has (not supported by AMD).";
    FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET = "frameworks.no-code-object-for-target", Frameworks, Fail,
        "A framework's GPU code has nothing for a GPU's target",
        "A framework's own HIP libraries (PyTorch's torch/lib/libtorch_hip.so and libc10_hip.so, \
         and the ROCm libraries a wheel bundles: rocBLAS, MIOpen, RCCL, …) carry one code object \
         per target they were built for (PyTorch: the PYTORCH_ROCM_ARCH list of the wheel). When \
         none matches the GPU, `import torch` and `torch.cuda.is_available()` still succeed, and \
         the first kernel fails: `RuntimeError: HIP error: invalid device function`, or \
         `hipErrorNoBinaryForGpu: Unable to find code object for all current devices!` and an \
         abort. This is what `roc-obj-ls libtorch_hip.so | grep gfx1103` shows by hand; the \
         probe reads the bundle headers the same way and decides per bundle as the HIP runtime \
         does (processor equal or a generic target covering it; xnack and sramecc compatible), \
         for the effective target (HSA_OVERRIDE_GFX_VERSION applied). Install a wheel built for \
         the target (AMD's repo.radeon.com wheels or a source build with \
         PYTORCH_ROCM_ARCH=<gfx>), or, where the wheel has a target of the same family, \
         HSA_OVERRIDE_GFX_VERSION set to it (unsupported by AMD).";
    FRAMEWORK_CODE_OBJECT_NEEDS_FEATURE_CHANGE = "frameworks.code-object-needs-feature-change", Frameworks, Fail,
        "A framework's GPU code loads only with another xnack or sramecc setting",
        "The framework's library carries code for the GPU's processor but only with a feature \
         setting the GPU does not have as set up (gfx90a:xnack+ code while XNACK is off for \
         processes), so the HIP runtime refuses it: `No compatible code objects found for: \
         gfx90a:sramecc+:xnack- in …/libtorch_hip.so … Available code objects: \
         [amdgcn-amd-amdhsa--gfx90a:xnack+]`. The remedy names the setting that makes it load \
         (HSA_XNACK=1, amdgpu noretry=0) or a build for the GPU's setting.";
    FRAMEWORK_FILES_MALFORMED = "frameworks.files-malformed", Frameworks, Warn,
        "A framework library's GPU code is malformed",
        "A framework's HIP library opened but its fat binary could not be read (a truncated or \
         corrupt offload bundle, sizes that do not add up, an empty file): usually an \
         interrupted pip install or a full disk. The HIP runtime reading the same bytes fails or \
         crashes. The evidence names the file and offset; reinstall the package.";
    TENSORFLOW_NOT_ROCM = "frameworks.tensorflow-not-rocm", Frameworks, Warn,
        "TensorFlow is not a ROCm build on a machine with AMD GPUs",
        "The `tensorflow` wheels from PyPI are CUDA (or CPU) builds; TensorFlow's ROCm builds are \
         AMD's: `tensorflow-rocm` (PyPI until ROCm 6.0, https://repo.radeon.com/rocm/manylinux \
         since ROCm 6.1) and TheRock's `rocm-tensorflow`. Without one TensorFlow sees no AMD GPU: \
         `tf.config.list_physical_devices('GPU')` returns [] and everything runs on the CPU. A \
         warning for the same reason as frameworks.torch-cpu-build. Uninstall `tensorflow` and \
         install AMD's wheel for the system's ROCm release, or use the rocm/tensorflow container.";
    TENSORFLOW_UNVALIDATED = "frameworks.tensorflow-unvalidated", Frameworks, Info,
        "TensorFlow's version is not one AMD validated for this ROCm release",
        "AMD validates three TensorFlow releases per ROCm release (ROCm 6.3: 2.17.0, 2.16.2, \
         2.15.1; 6.2: 2.16.1, 2.15.1, 2.14.1; 6.1: 2.15.0, 2.14.0, 2.13.1; 6.0: 2.14.0, 2.13.1, \
         2.12.1 — ROCm's compatibility matrix) and builds tensorflow-rocm only for those; AMD's \
         current TensorFlow install page covers Instinct GPUs only. A tensorflow-rocm of another \
         release (one built for a newer ROCm, a source build) may work but is untested, and GPUs outside AMD's list are ignored at start: \
         `Ignoring visible gpu device … with AMDGPU version : gfx1031. The supported AMDGPU \
         versions are gfx1030, gfx900, …`. When the system's ROCm release is newer than this \
         probe's table (6.3), the finding says so instead. Information only: pick a validated \
         pair, or the rocm/tensorflow container.";
    JAX_PLUGIN_MISMATCH = "frameworks.jax-plugin-mismatch", Frameworks, Info,
        "JAX's ROCm plugin was built for another ROCm major release",
        "JAX reaches AMD GPUs through a plugin whose name carries the ROCm major it was built \
         for (jax_rocm60_plugin and jax_rocm60_pjrt for ROCm 6, jax_rocm7_plugin and \
         jax_rocm7_pjrt for ROCm 7); it loads the system's ROCm libraries (or TheRock's wheels). \
         When the major differs from the ROCm release a process loads, the plugin fails to load \
         (missing libamdhip64.so.6 / .so.7) and `jax.devices()` lists CPU devices only. Install the plugin pair for the system's release \
         (`pip install jax[rocm7-local]`, or AMD's wheels from repo.radeon.com).";
    JAX_NO_ROCM_PLUGIN = "frameworks.jax-no-rocm-plugin", Frameworks, Info,
        "JAX is installed without a ROCm plugin on a machine with AMD GPUs",
        "jax and jaxlib alone run on the CPU; AMD GPUs need the jax_rocm*_plugin and \
         jax_rocm*_pjrt wheels of the matching release (`pip install jax[rocm7-local]`, or AMD's \
         wheels from repo.radeon.com). Many libraries install jax as a dependency without meaning \
         to use a GPU with it, so this is information only: `jax.devices()` shows [CpuDevice(id=0)] \
         in this environment.";
    ONNXRUNTIME_NO_ROCM_PROVIDER = "frameworks.onnxruntime-no-rocm-provider", Frameworks, Info,
        "ONNX Runtime has no ROCm or MIGraphX execution provider",
        "ONNX Runtime uses AMD GPUs through its MIGraphX execution provider (and, in older \
         releases, its ROCm provider): onnxruntime/capi/libonnxruntime_providers_migraphx.so or \
         libonnxruntime_providers_rocm.so, shipped by AMD's onnxruntime-rocm / \
         onnxruntime-migraphx wheels. The `onnxruntime` wheel from PyPI is CPU-only, \
         `onnxruntime-gpu` is CUDA: `onnxruntime.get_available_providers()` then lacks \
         MIGraphXExecutionProvider and inference runs on the CPU. Information only, as \
         onnxruntime is often a dependency used on the CPU on purpose.";
}
