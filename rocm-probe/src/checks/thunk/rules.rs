//! Layer 3 (thunk) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::checks::runtime;
use crate::finding::declare_rules;

declare_rules! {
    THUNK_RULES;
    THUNK_NOT_CAPTURED = "thunk.not-captured", Thunk, Skip;
    THUNK_NO_RUNTIME = "thunk.no-runtime", Thunk, Skip;
    THUNK_BUILT_IN = "thunk.built-into-rocr", Thunk, Pass;
    THUNK_SHARED = "thunk.libhsakmt-shared", Thunk, Pass;
    THUNK_MISSING = "thunk.missing", Thunk, Fail => [
        runtime::rules::ROCR_LOAD_FAILED,
        HSAKMT_NOT_INSTALLED,
    ];
}

declare_rules! {
    THUNK_ACTIVE_RULES;
    HSAKMT_ANSWERS = "thunk.hsakmt-answers", Thunk, Pass;
    HSAKMT_FAILED = "thunk.hsakmt-failed", Thunk, Fail => [
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    HSAKMT_NOT_INSTALLED = "thunk.hsakmt-not-installed", Thunk, Info;
    HSAKMT_LOAD_FAILED = "thunk.hsakmt-load-failed", Thunk, Warn;
    HSAKMT_NODE_MISMATCH = "thunk.hsakmt-node-mismatch", Thunk, Warn;
}
