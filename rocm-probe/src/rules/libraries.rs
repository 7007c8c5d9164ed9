//! Layer 5 (libraries) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    LIBRARIES_RULES;
    LIBRARIES_NOT_CAPTURED = "libraries.not-captured", Libraries, Skip,
        "ROCm installs not captured: library checks skipped",
        "The fixture holds neither an `opt` directory nor a system library directory nor \
         etc/ld.so.conf, so no install was looked at and the libraries of layer 5 (rocBLAS, \
         hipBLASLt, MIOpen, the hip* wrappers) are unknown. Live runs always read the installs.";
    ROCBLAS_NO_KERNELS_FOR_TARGET = "libraries.rocblas-no-kernels-for-target", Libraries, Fail,
        "rocBLAS has no Tensile kernels for a GPU's target",
        "rocBLAS finds its GEMM kernels in <lib>/rocblas/library/, one set of files per processor \
         (TensileLibrary_lazy_gfx90a.dat, TensileLibrary_Type_*_gfx90a.co, \
         Kernels.so-000-gfx90a.hsaco, or a library/gfx90a/ subdirectory). When none carries the \
         GPU's target, the first rocBLAS call (every PyTorch matmul, llama.cpp's hipBLAS path) \
         aborts with `rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: \
         No such file or directory for GPU arch : gfx1103` followed by `List of available \
         TensileLibrary Files`. The evidence names the directory and the targets it does have. \
         The target is the effective one: HSA_OVERRIDE_GFX_VERSION replaces the GPU's own, which \
         is how users of unlisted Radeon GPUs run AMD's libraries (11.0.0 for gfx1103, at their \
         own risk; see runtime.hsa-override-same-family). Otherwise install a release or a build \
         of rocBLAS that lists the target (GPU_TARGETS / -a gfx1103 when building), or point \
         ROCBLAS_TENSILE_LIBPATH at a directory that has it. rocBLAS's non-Tensile kernels live in \
         librocblas.so's own fat binary, checked by libraries.no-code-object-for-target.";
    HIPBLASLT_NO_KERNELS_FOR_TARGET = "libraries.hipblaslt-no-kernels-for-target", Libraries, Warn,
        "hipBLASLt has no kernels for a GPU's target",
        "hipBLASLt keeps its kernels in <lib>/hipblaslt/library/ (TensileLibrary_*_gfx942.co, \
         Kernels.so-000-gfx942.hsaco, extop_gfx942.co) and supports few targets (Instinct \
         gfx90a/gfx94x/gfx950 and some RDNA 3/4 parts, release by release). Frameworks that prefer \
         it (PyTorch's TunableOp and `torch.backends.cuda.preferred_blas_library`, vLLM) fall back \
         to rocBLAS or fail with `hipBLASLt error: No kernels for this architecture` depending on \
         the version, so this is a warning: check that the workload does not require hipBLASLt \
         (PyTorch: TORCH_BLAS_PREFER_HIPBLASLT=0).";
    MIOPEN_NO_KDB_FOR_TARGET = "libraries.miopen-no-kdb-for-target", Libraries, Info,
        "MIOpen has no precompiled kernel database for a GPU's target",
        "MIOpen ships precompiled kernels per target and CU count as <prefix>/share/miopen/db/\
         <gfx><CUs>.kdb (gfx90a68.kdb: gfx90a with 0x68 = 104 CUs; older gfx1030_40.kdb), from \
         the miopen-hip-<gfx>kdb packages. Without one MIOpen compiles each convolution kernel \
         at first use: the first epoch or the first inference is minutes slower and the cache \
         under ~/.cache/miopen fills, but nothing is broken. Install the kdb package for the \
         target when one exists.";
    HIP_WRAPPER_WITHOUT_BACKEND = "libraries.hip-wrapper-without-backend", Libraries, Fail,
        "A hip* library is installed without its roc* backend",
        "The hip* libraries (hipBLAS, hipFFT, hipSPARSE, hipSOLVER, hipRAND) are portable \
         wrappers: on AMD GPUs each forwards every call to its roc* backend (rocBLAS, rocFFT, \
         rocSPARSE, rocSOLVER, rocRAND), which it links against. With the backend missing, \
         anything linked against the wrapper fails to start: `error while loading shared \
         libraries: librocblas.so.4: cannot open shared object file: No such file or directory`. \
         Usually a partial install (the hipblas package kept after rocblas was removed) or a copy \
         of a few libraries into a container. Install the backend of the same release.";
    NO_CODE_OBJECT_FOR_TARGET = "libraries.no-code-object-for-target", Libraries, Fail,
        "A ROCm library's own GPU code has nothing for a GPU's target",
        "Besides their data files, the ROCm libraries (rocBLAS, rocSPARSE, rocFFT, rocSOLVER, \
         rocRAND, RCCL, MIOpen, hipBLASLt) carry GPU code in their own fat binary: a .hip_fatbin \
         section of offload bundles, one bundle per translation unit, each with one code object \
         per target the library was built for (hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-). When the \
         library is loaded the HIP runtime needs, in every bundle, a code object whose target ID \
         matches the GPU (processor equal, or a generic target covering it; xnack and sramecc \
         equal or `any`). Without one, the program stops with `hipErrorNoBinaryForGpu: Unable to \
         find code object for all current devices!` (PyTorch: `RuntimeError: HIP error: invalid \
         device function`), or with AMD_LOG_LEVEL unset a bare segmentation fault. The probe \
         reads the bundle headers of the library's real file (a memory map; only a few pages are \
         touched) and decides as the runtime does, per bundle; the target checked is the \
         effective one (HSA_OVERRIDE_GFX_VERSION replaces the processor). Install a build of the \
         library that lists the target; `rocm-probe inspect <file>` lists what it carries.";
    CODE_OBJECT_NEEDS_FEATURE_CHANGE = "libraries.code-object-needs-feature-change", Libraries, Fail,
        "A ROCm library's GPU code loads only with another xnack or sramecc setting",
        "The library carries code for the GPU's processor, but only with a feature setting the \
         GPU does not have right now: gfx90a:xnack+ code on a GPU where XNACK is off for the \
         process (the default; amdgpu's noretry=1), or sramecc- code on a board with ECC on. \
         The HIP runtime refuses such code objects (`No compatible code objects found for: \
         gfx90a:sramecc+:xnack- in …`, then `hipErrorNoBinaryForGpu`). The remedy names the \
         change that makes it load: HSA_XNACK=1 for the process (GPUs with a per-process XNACK \
         mode: gfx90a, gfx940-gfx942), amdgpu noretry=0 (every GFX9 GPU), or a driver setting for \
         SRAM ECC; or install a build of the library for the GPU's setting (most ship both \
         xnack- and xnack+ or a bare target, which loads either way).";
    LIBRARY_FILES_UNREADABLE = "libraries.files-unreadable", Libraries, Skip,
        "Library directories or files could not be read",
        "A library directory, a Tensile or MIOpen directory, or a library file whose GPU code was \
         to be read could not be opened (permission denied, not a regular file). What it would \
         have shown is unknown and the checks that need it say nothing about it. The evidence \
         names each path and the error.";
    LIBRARY_FILES_MALFORMED = "libraries.files-malformed", Libraries, Warn,
        "A library file's GPU code is malformed",
        "A library file opened but its fat binary could not be read: a truncated or corrupt \
         offload bundle, a compressed bundle whose sizes or hash do not add up, a section \
         pointing past the end of the file, or an empty file where a library should be. The HIP \
         runtime reading the same bytes fails or crashes; usually an interrupted install or a \
         disk problem. The evidence names the file and the offset. Reinstall the package the \
         file belongs to.";
    COVERAGE = "libraries.coverage", Libraries, Pass,
        "ROCm libraries found, with the targets their kernels cover",
        "Lists, per install, the libraries present (rocBLAS, hipBLAS, hipBLASLt, MIOpen, rocFFT, \
         rocSPARSE, RCCL and the other roc*/hip* pairs, by their sonames), the processors the \
         rocBLAS and hipBLASLt kernel files and the MIOpen kernel databases carry, and which GPU \
         targets of this machine they cover, and the targets each library's own fat binary \
         carries (read from its bundle headers). Versions come from the real file names: \
         librocblas.so.4.2.60200 is rocBLAS 4.2 built for ROCm 6.2.0.";
}
