//! Layer 9 (workloads) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::finding::declare_rules;

declare_rules! {
    WORKLOADS_RULES;
    COMPUTE = "workloads.compute", Workloads, Pass;
    MULTI_GPU = "workloads.multi-gpu", Workloads, Pass;
    NO_P2P = "workloads.no-p2p", Workloads, Warn;
    NO_RCCL = "workloads.no-rccl", Workloads, Info;
    LLM_FIT = "workloads.llm-fit", Workloads, Info;
    FRAMEWORK_READY = "workloads.framework", Workloads, Pass;
}
