//! Layer 6 (compiler) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::finding::declare_rules;

declare_rules! {
    COMPILER_RULES;
    COMPILER_NOT_CAPTURED = "compiler.not-captured", Compiler, Skip;
    NO_COMPILER = "compiler.no-compiler", Compiler, Info;
    COMPILERS_FOUND = "compiler.found", Compiler, Pass;
    NO_DEVICE_LIBS_FOR_TARGET = "compiler.no-device-libs-for-target", Compiler, Warn;
    DEVICE_LIBS_HIDDEN = "compiler.device-libs-hidden", Compiler, Warn;
    DEVICE_LIBS_OTHER_CLANG = "compiler.device-libs-other-clang", Compiler, Warn;
    OFFLOAD_ARCH = "compiler.offload-arch", Compiler, Pass;
    BUILD_TARGETS_EXCLUDE_GPU = "compiler.build-targets-exclude-gpu", Compiler, Warn;
}
