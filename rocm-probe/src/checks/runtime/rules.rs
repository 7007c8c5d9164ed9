//! Layer 4 (runtime) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::checks::{compiler, frameworks, libraries, thunk};
use crate::finding::declare_rules;

declare_rules! {
    RUNTIME_RULES;
    NOT_CAPTURED = "runtime.not-captured", Runtime, Skip;
    NO_ROCM = "runtime.no-rocm", Runtime, Fail;
    NIX_STORE_NOT_SEARCHED = "runtime.nix-store-not-searched", Runtime, Skip;
    WHEEL_RUNTIME_ONLY = "runtime.wheel-runtime-only", Runtime, Info;
    TARGET_DISTRIBUTION_BUILD = "runtime.target-distribution-build", Runtime, Info;
    INSTALLS_FOUND = "runtime.installs-found", Runtime, Pass;
    ROCR_NOT_ON_SEARCH_PATH = "runtime.rocr-not-on-search-path", Runtime, Info;
    MIXED_INSTALLS = "runtime.mixed-installs", Runtime, Warn;
    OPT_ROCM_DANGLING = "runtime.opt-rocm-dangling", Runtime, Warn;
    ROCM_PATH_INVALID = "runtime.rocm-path-invalid", Runtime, Warn => [
        compiler::rules::DEVICE_LIBS_HIDDEN,
    ];
    INSTALL_FILES_UNREADABLE = "runtime.install-files-unreadable", Runtime, Skip;
    INSTALL_FILES_MALFORMED = "runtime.install-files-malformed", Runtime, Warn;
    HSA_OVERRIDE_MALFORMED = "runtime.hsa-override-malformed", Runtime, Fail => [
        thunk::rules::HSAKMT_FAILED,
        ROCR_INIT_FAILED,
        HIP_FAILED,
    ];
    HSA_OVERRIDE_UNKNOWN_TARGET = "runtime.hsa-override-unknown-target", Runtime, Fail => [
        ROCR_AGENT_MISSING,
        ROCR_INIT_FAILED,
        HIP_FAILED,
        DISPATCH_FAILED,
    ];
    HSA_OVERRIDE_WRONG_FAMILY = "runtime.hsa-override-wrong-family", Runtime, Fail => [
        HIP_FAILED,
        DISPATCH_FAILED,
    ];
    HSA_OVERRIDE_SAME_FAMILY = "runtime.hsa-override-same-family", Runtime, Warn;
    HSA_OVERRIDE_REDUNDANT = "runtime.hsa-override-redundant", Runtime, Info;
    HSA_OVERRIDE_IGPU = "runtime.hsa-override-igpu", Runtime, Warn;
    HSA_OVERRIDE_PER_NODE_IGNORED = "runtime.hsa-override-per-node-ignored", Runtime, Info => [
        TARGET_UNSUPPORTED,
    ];
    HSA_OVERRIDE_NODE_NOT_GPU = "runtime.hsa-override-node-not-gpu", Runtime, Warn => [
        TARGET_UNSUPPORTED,
    ];
    VISIBLE_DEVICES_OUT_OF_RANGE = "runtime.visible-devices-out-of-range", Runtime, Warn;
    VISIBLE_DEVICES_MASK = "runtime.visible-devices-mask", Runtime, Info;
    // The global override reaches the iGPU only because it is visible (hiding it, the remedy,
    // leaves the override without effect there).
    // Not the cause of hsa-override-igpu: that finding's remedy (unset the override, hide the
    // iGPU, or a per-node override) is the whole advice, so it stays a root of its own.
    IGPU_BESIDE_DGPU = "runtime.igpu-beside-dgpu", Runtime, Warn;
    TARGET_SUPPORTED = "runtime.target-supported", Runtime, Pass;
    TARGET_DEPRECATED = "runtime.target-deprecated", Runtime, Info;
    // A release AMD says breaks the GPU's target until a later one (facts::rocm_bad).
    RELEASE_KNOWN_BAD = "runtime.release-known-bad", Runtime, Warn;
    // AMD lists the release's Ryzen APUs on a page the data did not read: not judged, so
    // information, and the libraries layer's own verdict on the code stands.
    APU_SUPPORT_UNJUDGED = "runtime.apu-support-unjudged", Runtime, Info;
    TARGET_UNSUPPORTED = "runtime.target-unsupported", Runtime, Warn => [
        libraries::rules::ROCBLAS_NO_KERNELS_FOR_TARGET,
        libraries::rules::HIPBLASLT_NO_KERNELS_FOR_TARGET,
        libraries::rules::MIOPEN_NO_KDB_FOR_TARGET,
        libraries::rules::NO_CODE_OBJECT_FOR_TARGET,
        frameworks::rules::BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET,
        frameworks::rules::FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET,
        compiler::rules::NO_DEVICE_LIBS_FOR_TARGET,
    ];
    // The installed ROCr's ISA registry lacks the GPU's processor: ROCr drops the GPU, so the
    // missing agent, an hsa_init left without GPU agents, and every missing-code finding for
    // it follow from that. HIP's failure is reached through ROCr's (a HIP that fails to load for
    // its own reason must not be blamed on the registry).
    ROCR_UNKNOWN_TARGET = "runtime.rocr-unknown-target", Runtime, Fail => [
        ROCR_AGENT_MISSING,
        ROCR_INIT_FAILED,
        libraries::rules::ROCBLAS_NO_KERNELS_FOR_TARGET,
        libraries::rules::HIPBLASLT_NO_KERNELS_FOR_TARGET,
        libraries::rules::MIOPEN_NO_KDB_FOR_TARGET,
        libraries::rules::NO_CODE_OBJECT_FOR_TARGET,
        frameworks::rules::BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET,
        frameworks::rules::FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET,
        compiler::rules::NO_DEVICE_LIBS_FOR_TARGET,
    ];
    RELEASE_UNKNOWN = "runtime.release-unknown", Runtime, Skip;
    GPU_CHECKS_SKIPPED = "runtime.gpu-checks-skipped", Runtime, Skip;
    WSL_RUNTIME_OUTSIDE_WSL = "runtime.wsl-runtime-outside-wsl", Runtime, Fail => [
        ROCR_LOAD_FAILED,
        ROCR_INIT_FAILED,
        HIP_FAILED,
    ];
}

declare_rules! {
    RUNTIME_ACTIVE_RULES;
    ROCR_ANSWERS = "runtime.rocr-answers", Runtime, Pass;
    ROCR_INIT_FAILED = "runtime.rocr-init-failed", Runtime, Fail => [
        HIP_FAILED,
    ];
    ROCR_NOT_INSTALLED = "runtime.rocr-not-installed", Runtime, Warn;
    ROCR_LOAD_FAILED = "runtime.rocr-load-failed", Runtime, Fail => [
        HIP_FAILED,
    ];
    ROCR_AGENT_MISSING = "runtime.rocr-agent-missing", Runtime, Fail;
    HIP_ANSWERS = "runtime.hip-answers", Runtime, Pass;
    HIP_FAILED = "runtime.hip-failed", Runtime, Fail;
    HIP_NOT_INSTALLED = "runtime.hip-not-installed", Runtime, Info;
    DISPATCH_OK = "runtime.dispatch-ok", Runtime, Pass;
    DISPATCH_FAILED = "runtime.dispatch-failed", Runtime, Fail;
}

declare_rules! {
    RUNTIME_EXPECT_RULES;
    EXPECT_ROCM = "runtime.expect-rocm", Runtime, Fail;
}
