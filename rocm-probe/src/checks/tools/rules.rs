//! Layer 8 (tools) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::finding::declare_rules;

declare_rules! {
    TOOLS_RULES;
    TOOLS_NOT_CAPTURED = "tools.not-captured", Tools, Skip;
    TOOLS_NONE = "tools.none", Tools, Info;
    TOOLS_FOUND = "tools.found", Tools, Pass;
    TOOLS_RENAMED_PROFILER = "tools.renamed-profiler", Tools, Info;
    TOOLS_DEPRECATED_PROFILER = "tools.deprecated-profiler", Tools, Info;
    TOOLS_ROCM_SMI_WITHOUT_AMD_SMI = "tools.rocm-smi-without-amd-smi", Tools, Info;
    TOOLS_VERSION_MISMATCH = "tools.version-mismatch", Tools, Info;
    TOOLS_AMDSMI_BUILTIN_DRIVER = "tools.amdsmi-builtin-driver", Tools, Warn;
    TOOLS_FILES_UNREADABLE = "tools.files-unreadable", Tools, Skip;
    TOOLS_FILES_MALFORMED = "tools.files-malformed", Tools, Warn;
}
