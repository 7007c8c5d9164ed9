//! Layer 6 (compiler) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    COMPILER_RULES;
    COMPILER_NOT_CAPTURED = "compiler.not-captured", Compiler, Skip,
        "ROCm installs not captured: compiler checks skipped",
        "The fixture holds neither an `opt` directory nor a system library directory nor \
         etc/ld.so.conf, so no install was looked at and the compilers of layer 6 (hipcc, \
         amdclang++, clang) and their device libraries are unknown. Live runs always look.";
    NO_COMPILER = "compiler.no-compiler", Compiler, Info,
        "No HIP compiler (hipcc, amdclang++, clang) found",
        "None of the installs has bin/hipcc, bin/amdclang++ or lib/llvm/bin/clang, and the \
         distribution has neither /usr/bin/hipcc nor /usr/lib/llvm-*/bin/clang. Running HIP \
         programs, PyTorch or llama.cpp binaries needs no compiler, so this is information only: \
         building HIP code (pip installs that compile extensions, llama.cpp from source) needs \
         AMD's hip-dev/rocm-llvm packages (`sudo apt install rocm-hip-sdk`) or the \
         distribution's `hipcc`. The probe checks existence only and never runs a compiler.";
    COMPILERS_FOUND = "compiler.found", Compiler, Pass,
        "HIP compilers found, with their versions",
        "Lists each compiler driver found per install (hipcc, amdclang++, clang) with its version \
         as the install's files state it — the probe never runs a compiler: hipcc's is HIP's \
         version from <prefix>/share/hip/version (or the older bin/.hipVersion; \
         HIP_VERSION_MAJOR/MINOR/PATCH, e.g. 5.2.21153 for Debian's HIP 5.2.3, 6.2.41133 for \
         ROCm 6.2.0), clang's and amdclang++'s is the name of the clang resource directory \
         (<llvm>/lib/clang/17 for ROCm 6.x's LLVM 17, /usr/lib/llvm-15/lib/clang/15.0.6 for \
         Debian's clang 15), which is the release the compiler was built as. Also lists the \
         device-library directories and the processors they cover.";
    NO_DEVICE_LIBS_FOR_TARGET = "compiler.no-device-libs-for-target", Compiler, Warn,
        "The device libraries have no bitcode for a GPU's target",
        "HIP-Clang links every kernel against the ROCm device libraries (ocml, ockl, and one \
         oclc_isa_version_<n>.bc per processor: oclc_isa_version_1100.bc for gfx1100, \
         oclc_isa_version_90a.bc for gfx90a), found in <prefix>/amdgcn/bitcode (ROCm ≤ 6.2), \
         <prefix>/lib/llvm/lib/clang/<N>/lib/amdgcn/bitcode (ROCm ≥ 6.3) or Debian's \
         /usr/lib/x86_64-linux-gnu/amdgcn/bitcode. Without the file for the GPU's processor, \
         compiling for it fails (`clang: error: cannot find ROCm device library for gfx1103; \
         provide its path via '--rocm-path' or '--rocm-device-lib-path', or pass '-nogpulib' \
         to build without ROCm device library`): the device libraries are older than the GPU. \
         Prebuilt programs still run. Install device libraries of a release that knows the \
         target (AMD's rocm-device-libs / rocm-llvm of a newer ROCm), or compile with \
         --rocm-device-lib-path pointing at such a directory.";
    OFFLOAD_ARCH = "compiler.offload-arch", Compiler, Pass,
        "The --offload-arch flags for this machine's GPUs",
        "The exact flags to compile HIP code for the GPUs of this machine: one \
         --offload-arch=<target ID> per distinct target, in node order, with the sramecc and \
         xnack settings the driver reports (gfx90a:sramecc+:xnack-); a feature whose setting is \
         unknown is left out, which means \"any\" to the compiler. Pass them to hipcc or clang \
         -x hip, or use the same list in CMake's GPU_TARGETS / CMAKE_HIP_ARCHITECTURES and \
         PyTorch's PYTORCH_ROCM_ARCH (without the features there). Also lists the compilers \
         and device libraries found.";
}
