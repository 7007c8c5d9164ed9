//! Layer 4 (runtime) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    RUNTIME_RULES;
    NOT_CAPTURED = "runtime.not-captured", Runtime, Skip,
        "ROCm installs not captured",
        "The fixture holds neither an `opt` directory nor a system library directory \
         (usr/lib/x86_64-linux-gnu, usr/lib64) nor etc/ld.so.conf, so the install checks (which \
         ROCm is installed, which one a process loads, whether it supports the GPUs) are skipped. \
         The environment checks (HSA_OVERRIDE_GFX_VERSION, *_VISIBLE_DEVICES) still run on the \
         fixture's [env]. Live runs always read /opt and the loader's directories.";
    NO_ROCM = "runtime.no-rocm", Runtime, Fail,
        "No ROCm userspace is installed",
        "No ROCr (libhsa-runtime64.so.1) or HIP (libamdhip64.so.N) was found: not under /opt \
         (rocm, rocm-X.Y.Z), not where ROCM_PATH, HIP_PATH or LD_LIBRARY_PATH point, not in the \
         ld.so.conf directories or the system library directories. The kernel driver alone cannot \
         run GPU code; users see `rocminfo: command not found`, HIP programs fail with \
         `error while loading shared libraries: libamdhip64.so.6: cannot open shared object file`. \
         This is a failure of layer 4 because a machine probed for ROCm without ROCm is broken \
         there. One exception: a Python wheel that bundles its own ROCm (PyTorch's ROCm wheels, \
         TheRock's rocm-sdk) runs without a system install; the frameworks layer looks inside \
         site-packages for that. On a machine without an AMD GPU this finding follows from \
         layer 1 and is marked so.";
    INSTALLS_FOUND = "runtime.installs-found", Runtime, Pass,
        "ROCm installs found",
        "Lists every ROCm install with its version and libraries: AMD's /opt/rocm-X.Y.Z trees (the \
         version from .info/version, else include/rocm-core/rocm_version.h), a distribution's \
         packages in the system library directories (the version from HIP's file name, \
         libamdhip64.so.5.2.21153 = ROCm 5.2), and installs named by ROCM_PATH, HIP_PATH or \
         LD_LIBRARY_PATH; where /opt/rocm points; and which directory a process loads \
         libhsa-runtime64.so.1 from: the first of LD_LIBRARY_PATH, the ld.so.conf directories (in \
         file order) and the default directories that holds it. /etc/ld.so.cache is not read, so \
         a cache that ldconfig has not rebuilt can differ, and a program's own RUNPATH (hipcc \
         builds carry /opt/rocm/lib) is searched before the cache.";
    ROCR_NOT_ON_SEARCH_PATH = "runtime.rocr-not-on-search-path", Runtime, Info,
        "ROCr is installed but not on the library search path",
        "No directory of LD_LIBRARY_PATH, ld.so.conf or the default directories holds \
         libhsa-runtime64.so.1, although an install has it. Programs built by hipcc find ROCm \
         through their RUNPATH (/opt/rocm/lib) and work; programs that load ROCm by name at run \
         time (Python ctypes users, prebuilt binaries without RUNPATH) fail with \
         `error while loading shared libraries: libhsa-runtime64.so.1: cannot open shared object \
         file`. AMD's post-install step adds the library directories to /etc/ld.so.conf.d.";
    MIXED_INSTALLS = "runtime.mixed-installs", Runtime, Warn,
        "More than one ROCm install is reachable",
        "Several ROCm installs can be reached by one process: through /opt/rocm, ROCM_PATH, \
         HIP_PATH, LD_LIBRARY_PATH, the ld.so.conf directories or the system library directories. \
         Libraries then come from one release and their data files or sibling libraries from \
         another: `rocBLAS error: Could not load /opt/rocm-6.0.0/lib/rocblas/library/\
         TensileLibrary_lazy_gfx1030.dat` / `Could not initialize Tensile library`, missing \
         sonames (libhipblas.so.1 vs .so.2), crashes inside libamdhip64. Side-by-side installs \
         under /opt are supported by AMD as long as only one is referenced; this warns only when \
         more than one is. The evidence names each install and how it is reached; keep one \
         (remove the stale LD_LIBRARY_PATH entry or ld.so.conf.d file, or point ROCM_PATH at the \
         install /opt/rocm names).";
    OPT_ROCM_DANGLING = "runtime.opt-rocm-dangling", Runtime, Warn,
        "/opt/rocm points at an install that does not exist",
        "/opt/rocm is a symlink (usually through /etc/alternatives/rocm) whose target is gone, \
         typically after an uninstall that left the alternatives link behind. Everything that uses \
         the conventional path breaks: /opt/rocm/bin/rocminfo is `No such file or directory`, \
         hipcc-built programs (RUNPATH /opt/rocm/lib) cannot load libamdhip64. Point it at an \
         installed release (`sudo update-alternatives --config rocm`) or reinstall.";
    ROCM_PATH_INVALID = "runtime.rocm-path-invalid", Runtime, Warn,
        "ROCM_PATH or HIP_PATH names no ROCm install",
        "ROCM_PATH (or HIP_PATH) is set to a directory that does not exist or holds neither \
         .info/version nor ROCr/HIP libraries. hipcc, CMake's find_package(hip), PyTorch's \
         extension builder and many scripts take the install from these variables and fail with \
         errors about missing headers or libraries. Unset it or point it at an install.";
    INSTALL_FILES_UNREADABLE = "runtime.install-files-unreadable", Runtime, Skip,
        "Unreadable ROCm install files",
        "Version files, library links or loader configuration under /opt, the library directories \
         or /etc/ld.so.conf* could not be read (permission denied, not a regular file, too large, \
         a symlink out of the fixture). The values in them are unknown.";
    INSTALL_FILES_MALFORMED = "runtime.install-files-malformed", Runtime, Warn,
        "Malformed ROCm install files",
        "A version file (.info/version, rocm_version.h) or loader configuration could not be \
         parsed; the version of that install is unknown, so the checks that need it skip. A \
         damaged .info/version usually means a partial install or an upgrade interrupted halfway.";
    HSA_OVERRIDE_MALFORMED = "runtime.hsa-override-malformed", Runtime, Fail,
        "HSA_OVERRIDE_GFX_VERSION is not MAJOR.MINOR.STEPPING",
        "libhsakmt parses HSA_OVERRIDE_GFX_VERSION with sscanf(\"%u.%u.%u%c\") and accepts only \
         three numbers, major ≤ 63, minor and stepping ≤ 255, with nothing after them (not even a \
         space or newline). Anything else (`gfx1030`, `10.3`, `11.0.0 `, an empty value) makes \
         hsaKmtAcquireSystemProperties fail, and ROCr ends up without GPUs: rocminfo prints \
         `hsa api call failure: HSA_STATUS_ERROR_OUT_OF_RESOURCES`, HIP programs `no ROCm-capable \
         device is detected`, rocm_agent_enumerator `Invalid HSA_OVERRIDE_GFX_VERSION format \
         expected \"1.2.3\"` and gfx000; libhsakmt's own message (`HSA_OVERRIDE_GFX_VERSION … is \
         invalid`) appears only with HSAKMT_DEBUG_LEVEL=3. An empty value is common in containers \
         and compose files that pass the variable through unset (ROCm/ROCR-Runtime#354). The GPU \
         checks of this layer are skipped while it is set this way.";
    HSA_OVERRIDE_UNKNOWN_TARGET = "runtime.hsa-override-unknown-target", Runtime, Fail,
        "HSA_OVERRIDE_GFX_VERSION names a processor ROCr does not know",
        "The override is well formed but names no processor in ROCr's ISA table (for example \
         11.0.5: there is no gfx1105). ROCr cannot create the GPU agent: `Agent creation failed. \
         The GPU node has an unrecognized id.` (HSA_STATUS_ERROR_INVALID_ISA), and the GPU \
         disappears from rocminfo and every ROCm program. The table used is ROCr's isa.cpp \
         (gfx700 … gfx1201, gfx950 and gfx1153 in newer releases). The GPU checks of this layer are \
         skipped while it is set this way.";
    HSA_OVERRIDE_WRONG_FAMILY = "runtime.hsa-override-wrong-family", Runtime, Fail,
        "HSA_OVERRIDE_GFX_VERSION names another GPU family",
        "The override makes ROCr load code objects built for a different family than the GPU: \
         another major version, another minor version from GFX10 on (RDNA 3.5 gfx1150 is not RDNA \
         3 gfx1100), or on GFX9 another of gfx900–gfx90c / gfx908 / gfx90a / gfx940–gfx950. The \
         instructions differ, so kernels fault: `HSA_STATUS_ERROR_INVALID_ISA: The instruction \
         set architecture is invalid. code: 0x100f` (gfx1150 forced to 11.0.0, \
         likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU#37), `Memory access fault by GPU node-N … \
         Reason: Page not present or supervisor privilege`, `HIP error: invalid device function`. \
         Newer libhsakmt rejects cross-major overrides outright (ROCm/rocm-systems#5686). Use a \
         build that has code for the real target, or an override within its family.";
    HSA_OVERRIDE_SAME_FAMILY = "runtime.hsa-override-same-family", Runtime, Warn,
        "HSA_OVERRIDE_GFX_VERSION runs the GPU as a sibling target",
        "The override makes a GPU that prebuilt ROCm libraries lack code for (gfx1031, gfx1103, \
         gfx1036 …) load the code objects of a sibling of the same family (10.3.0 → gfx1030, \
         11.0.0 → gfx1100). This is the widespread workaround and usually works, which is why it \
         is a warning, not a failure: the siblings share an instruction set, but not always the \
         same number of compute units per shader array, cache sizes or every instruction, so \
         tuned kernels can be slower, produce wrong results in corner cases, or fault, and AMD \
         does not support it. The override also applies to every GPU in the system (see \
         runtime.hsa-override-igpu); per-GPU overrides `HSA_OVERRIDE_GFX_VERSION_<node>` exist \
         from ROCm 6.3.";
    HSA_OVERRIDE_REDUNDANT = "runtime.hsa-override-redundant", Runtime, Info,
        "HSA_OVERRIDE_GFX_VERSION equals the GPU's own version",
        "The override names the processor the GPU already is, so it changes nothing for it. It is \
         harmless by itself, often a leftover from an older GPU or copied from a guide; it still \
         applies to every other GPU in the system.";
    HSA_OVERRIDE_IGPU = "runtime.hsa-override-igpu", Runtime, Warn,
        "HSA_OVERRIDE_GFX_VERSION also applies to the integrated GPU",
        "The variable is global: libhsakmt applies it to every GPU node, so with an integrated GPU \
         (an APU's Radeon graphics, a Ryzen desktop iGPU) beside the discrete one, both are \
         presented to ROCr as the overridden target, and work placed on the iGPU runs code built \
         for the dGPU: `HIP error: invalid device function`, `hipErrorInvalidImage`, or a GPU \
         memory fault. Hide the iGPU (ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, see \
         runtime.igpu-beside-dgpu) or, from ROCm 6.3, override per node with \
         HSA_OVERRIDE_GFX_VERSION_<node> (node = KFD topology node id).";
    VISIBLE_DEVICES_OUT_OF_RANGE = "runtime.visible-devices-out-of-range", Runtime, Warn,
        "A *_VISIBLE_DEVICES entry names no GPU",
        "ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES or GPU_DEVICE_ORDINAL has \
         an entry that is not a GPU: an index at or beyond the number of GPUs, a UUID (GPU-<16 \
         hex>, ROCr accepts a unique prefix) that matches none, a range such as 0-3 (not \
         supported), or a GPU listed twice (ROCr). Both ROCr and HIP stop reading the list at the \
         first bad entry, so every GPU after it is dropped too; ROCr also ignores entries beyond \
         the GPU count. HIP's indices count the GPUs ROCR_VISIBLE_DEVICES leaves, so \
         ROCR_VISIBLE_DEVICES=1 with HIP_VISIBLE_DEVICES=1 leaves none \
         (mcmonkeyprojects/SwarmUI#565). When no GPU is left the finding is a failure: \
         `hipErrorNoDevice`, `no ROCm-capable device is detected`, torch.cuda.is_available() is \
         False. An empty ROCR_VISIBLE_DEVICES hides every GPU; an empty HIP_VISIBLE_DEVICES is \
         ignored. Parsing follows ROCr's RvdFilter and HIP's rocdevice.cpp.";
    VISIBLE_DEVICES_MASK = "runtime.visible-devices-mask", Runtime, Info,
        "A *_VISIBLE_DEVICES mask selects some GPUs",
        "A device mask is set and every entry in it names a GPU. The evidence lists which GPUs \
         (KFD node, target, UUID) ROCr and HIP programs see and in which order, so that device \
         0 in a framework can be matched to a physical GPU.";
    IGPU_BESIDE_DGPU = "runtime.igpu-beside-dgpu", Runtime, Warn,
        "An integrated GPU is visible beside a discrete one",
        "ROCr exposes the integrated GPU (APU graphics such as Radeon 780M, or a Ryzen desktop \
         iGPU such as gfx1036) next to the discrete GPU, in KFD node order. Frameworks then pick \
         or split work onto the iGPU, which prebuilt ROCm libraries usually have no code for: \
         `HIP error: invalid device function` (ROCm/legacy-rocm-build#3401, fixed by \
         HIP_VISIBLE_DEVICES=1), `rocBLAS error: Cannot read …/TensileLibrary.dat: No such file \
         or directory for GPU arch : gfx1036`, a llama.cpp crash after splitting onto ROCm1. The \
         remedy names the mask that keeps only the discrete GPUs, by index (ROCr's order = \
         KFD node order) and by UUID.";
    TARGET_SUPPORTED = "runtime.target-supported", Runtime, Pass,
        "The GPUs' targets are supported by the installed ROCm release",
        "Every visible GPU's gfx target is listed as supported for the release a process uses, \
         according to AMD's published system requirements and compatibility matrices (the table \
         in rocm-probe's support module cites the page of each release).";
    TARGET_DEPRECATED = "runtime.target-deprecated", Runtime, Info,
        "A GPU's target is deprecated in the installed ROCm release",
        "AMD lists the target as deprecated (⚠️) for this release: it still works, gets no new \
         features or optimisations, and a later release removes it (gfx906: deprecated in 6.1, unsupported in 6.4). Plan \
         to stay on a release that supports it or to replace the GPU.";
    TARGET_UNSUPPORTED = "runtime.target-unsupported", Runtime, Warn,
        "A GPU's target is not supported by the installed ROCm release",
        "The GPU's gfx target is not listed for this release (or listed as ❌). ROCr and HIP run \
         on it, but AMD's prebuilt libraries may have no code for it: `rocBLAS error: Cannot read \
         /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for GPU arch \
         : gfx1103`, `hipErrorNoBinaryForGpu: Unable to find code object for all current \
         devices!`, `HIP error: invalid device function`. It is a warning because some libraries \
         do ship code for unlisted targets; the libraries layer checks the code objects \
         themselves. When HSA_OVERRIDE_GFX_VERSION maps the GPU onto a supported sibling, the \
         finding is information. Releases missing from the table are skipped, never guessed.";
    RELEASE_UNKNOWN = "runtime.release-unknown", Runtime, Skip,
        "The ROCm release is not in the support table",
        "The GPU support check needs the release a process uses and AMD's list for it. Either \
         the version is unknown (no .info/version, no version in the library names: Debian's \
         libhsa-runtime64.so.1.5.0 alone), or the table has no row for it (distribution releases \
         such as 5.2, future releases). Nothing is guessed.";
    GPU_CHECKS_SKIPPED = "runtime.gpu-checks-skipped", Runtime, Skip,
        "GPU-dependent runtime checks skipped",
        "The checks that look at GPUs (device masks, overrides against the real target, iGPU \
         beside dGPU, release support) need a working layer 1–3: a GPU in the KFD topology and \
         a driver and thunk that let ROCr open it. A lower layer failed, so these checks would \
         only repeat its consequences; its finding is the one to fix first.";
}

declare_rules! {
    RUNTIME_ACTIVE_RULES;
    ROCR_ANSWERS = "runtime.rocr-answers", Runtime, Pass,
        "ROCr initialises and lists its agents (--active)",
        "The active probe loaded libhsa-runtime64.so.1 from the install a process would use, \
         called hsa_init, read the runtime's HSA version, iterated the agents with their ISAs \
         and memory pools, and called hsa_shut_down. A GPU node of the KFD topology missing from \
         ROCr's agents is runtime.rocr-agent-missing. This is what rocminfo does, without its output format; hsa_init \
         acquires a VM on every GPU, which wakes a runtime-suspended GPU.";
    ROCR_INIT_FAILED = "runtime.rocr-init-failed", Runtime, Fail,
        "hsa_init failed (--active)",
        "hsa_init returned the status shown, with its meaning from hsa.h. The common one, \
         HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008), is what ROCr returns when it cannot open \
         /dev/kfd or no GPU agent comes up — rocminfo prints `hsa api call failure at: \
         rocminfo.cc:… Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES`; a lower layer \
         usually names why. hsa_shut_down is called anyway (it returns \
         HSA_STATUS_ERROR_NOT_INITIALIZED after a failed init).";
    ROCR_NOT_INSTALLED = "runtime.rocr-not-installed", Runtime, Warn,
        "No ROCr to load (--active)",
        "No libhsa-runtime64.so.1 was found where a process would load it (or the path given \
         with --hsa-runtime-lib does not exist), so the runtime could not be asked. Every HIP \
         program needs it; runtime.no-rocm says the same passively.";
    ROCR_LOAD_FAILED = "runtime.rocr-load-failed", Runtime, Fail,
        "ROCr exists but could not be loaded (--active)",
        "The dynamic loader refused libhsa-runtime64.so.1: a missing dependency (libnuma.so.1, \
         libdrm_amdgpu.so.1, libelf.so.1, or a shared libhsakmt for distribution builds), a \
         wrong architecture or a truncated file; the loader's message is shown. Every HIP \
         program fails the same way (`error while loading shared libraries`).";
    ROCR_AGENT_MISSING = "runtime.rocr-agent-missing", Runtime, Fail,
        "A GPU in the KFD topology is not among ROCr's agents (--active)",
        "ROCr enumerates GPUs through the thunk and leaves out those it cannot use: a GPU \
         hidden by ROCR_VISIBLE_DEVICES (or HIP_VISIBLE_DEVICES for HIP), one whose render node \
         this user cannot open, one whose processor this ROCr does not know (a GPU newer than \
         the release; HSA_OVERRIDE_GFX_VERSION is the usual workaround for Radeon parts), or an \
         integrated GPU ROCr skips beside discrete ones. The evidence names the missing nodes and \
         ROCr's agents; the likely cause is named from the environment and lower findings.";
    HIP_ANSWERS = "runtime.hip-answers", Runtime, Pass,
        "HIP counts the GPUs and names their architectures (--active)",
        "The active probe loaded libamdhip64 from the install a process would use and called \
         hipRuntimeGetVersion, hipDriverGetVersion, hipGetDeviceCount and, per device, \
         hipGetDeviceProperties for gcnArchName (the target ID HIP compiles and loads code \
         for). HIP devices are ROCr's GPU agents after HIP_VISIBLE_DEVICES.";
    HIP_FAILED = "runtime.hip-failed", Runtime, Fail,
        "HIP finds no usable GPU (--active)",
        "hipGetDeviceCount returned an error (hipErrorNoDevice: no GPU visible; \
         hipErrorInsufficientDriver: the kernel driver is too old for this HIP; \
         hipErrorNotInitialized: ROCr failed underneath) — what every HIP program, PyTorch's \
         torch.cuda.is_available() included, sees. The lower layers usually name why.";
    HIP_NOT_INSTALLED = "runtime.hip-not-installed", Runtime, Info,
        "No HIP runtime to load (--active)",
        "No libamdhip64.so.N was found where a process would load it (or the path given with \
         --hip-lib does not exist). Programs that bundle their own (PyTorch wheels) do not need \
         the system's.";
    DISPATCH_OK = "runtime.dispatch-ok", Runtime, Pass,
        "Every GPU ran an AQL barrier packet (--dispatch)",
        "For each GPU agent the probe created the smallest user-mode queue, published one AQL \
         barrier-AND packet (no dependencies, system-scope fences, a completion signal; the \
         64-byte packet written with an INVALID header first and its real header stored last \
         with release order), rang the doorbell and waited for the completion signal. This \
         proves queue creation, doorbells, the command processor and signalling without any \
         code object. The round-trip time is shown per GPU.";
    DISPATCH_FAILED = "runtime.dispatch-failed", Runtime, Fail,
        "A GPU did not complete an AQL barrier packet (--dispatch)",
        "Either a step failed (hsa_queue_create, hsa_signal_create: the status is named) or the \
         completion signal did not arrive before the timeout: the GPU's command processor does \
         not process its queues — a hung GPU, firmware that failed to load (dmesg: amdgpu \
         errors), or a GPU in reset. Check dmesg, then `amd-smi reset`, and reboot if it \
         persists.";
}
