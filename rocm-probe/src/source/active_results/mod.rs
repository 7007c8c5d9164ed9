//! The results of the active probes as data: what `--active` found on a live machine, and what
//! a fixture's `[active]` table states (documented key by key in `fixtures/README.md`). Plain
//! data of the source stage, so that reading a fixture never depends on the live probes; the
//! probes in `active` fill it in.

pub mod outcome;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use outcome::{DispatchOutcome, KfdOpen, LoadError};

/// Results of the active probes; the `[active]` table of `fixture.toml` (documented in
/// `fixtures/README.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActiveFacts {
    /// Opening `/dev/kfd` read-write: `"ok"` or the errno name (`"EACCES"`, `"ENOENT"`).
    pub kfd_open: Option<KfdOpen>,
    /// `GET_VERSION`: the KFD ioctl interface `[major, minor]`.
    pub kfd_version: Option<[u32; 2]>,
    /// `GET_PROCESS_APERTURES_NEW`: the `gpu_id`s this process can use.
    pub kfd_gpus: Option<Vec<u32>>,
    /// `AVAILABLE_MEMORY`: bytes still allocatable per `gpu_id` (keys are decimal `gpu_id`s).
    pub kfd_available_memory: Option<BTreeMap<String, u64>>,
    /// Ioctls that failed, as `NAME gpu_id: ERRNO`.
    pub kfd_errors: Option<Vec<String>>,
    /// Layer 3: libhsakmt.
    pub hsakmt: Option<ThunkResult>,
    /// Layer 4: ROCr.
    pub rocr: Option<RocrResult>,
    /// Layer 4: HIP.
    pub hip: Option<HipResult>,
    /// `--dispatch`: one result per GPU agent.
    pub dispatch: Option<Vec<DispatchResult>>,
}

/// What libhsakmt answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThunkResult {
    /// The file loaded.
    pub library: Option<String>,
    /// Why it could not be loaded (`not installed: <path>`, or the loader's message).
    pub load_error: Option<LoadError>,
    /// ROCr's release, when libhsakmt is built into it (ROCm ≥ 4.3 in AMD's packages, ≥ 6.3
    /// everywhere): then there is no shared libhsakmt to load and layer 4 carries the proof.
    pub built_into_rocr: Option<String>,
    /// `hsaKmtOpenKFD`'s status name.
    pub open: Option<String>,
    /// `hsaKmtGetVersion`: the KFD interface `[major, minor]` libhsakmt sees.
    pub version: Option<[u32; 2]>,
    /// `hsaKmtAcquireSystemProperties`'s status name.
    pub acquire: Option<String>,
    /// Per node, in libhsakmt's order: the ABI-stable properties.
    pub nodes: Option<Vec<ThunkNode>>,
    /// How the process the library ran in ended, when it did not return (an abort, a signal).
    pub crashed: Option<Crash>,
}

/// One node as libhsakmt reports it (fields whose offsets are the same in every ABI).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ThunkNode {
    /// `NumCPUCores`.
    pub cpu_cores: u32,
    /// `NumFComputeCores` (SIMDs; 0 for CPUs).
    pub simds: u32,
}

/// What ROCr answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RocrResult {
    /// The file loaded.
    pub library: Option<String>,
    /// Why it could not be loaded.
    pub load_error: Option<LoadError>,
    /// `hsa_init`'s status name.
    pub init: Option<String>,
    /// `HSA_SYSTEM_INFO_VERSION_MAJOR/MINOR` `[major, minor]`: what rocminfo prints as
    /// "Runtime Version" (1.1 up to ROCm 5.x; ROCr's own version since: 1.14 in 6.3).
    pub version: Option<[u32; 2]>,
    /// The agents, in ROCr's order.
    pub agents: Option<Vec<RocrAgent>>,
    /// `hsa_shut_down`'s status name.
    pub shut_down: Option<String>,
    /// How the process the library ran in ended, when it did not return (an abort, a signal).
    pub crashed: Option<Crash>,
}

/// One ROCr agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RocrAgent {
    /// `HSA_AGENT_INFO_NAME` (`gfx90a`, or the CPU's name).
    pub name: String,
    /// `cpu`, `gpu` or `other`.
    pub device: String,
    /// `HSA_AGENT_INFO_NODE`: the KFD node.
    pub node: Option<u32>,
    /// Its ISA names (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
    #[serde(default)]
    pub isas: Vec<String>,
    /// How many memory pools it has.
    pub pools: Option<u32>,
}

/// What HIP answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HipResult {
    /// The file loaded.
    pub library: Option<String>,
    /// Why it could not be loaded.
    pub load_error: Option<LoadError>,
    /// `hipGetDeviceCount`'s error name.
    pub count_status: Option<String>,
    /// The device count, when the call succeeded.
    pub device_count: Option<i32>,
    /// `hipRuntimeGetVersion` (`HIP_VERSION`: 50221153 is 5.2.21153).
    pub runtime_version: Option<i32>,
    /// `hipDriverGetVersion`.
    pub driver_version: Option<i32>,
    /// Each device's `gcnArchName`.
    pub devices: Option<Vec<String>>,
    /// How the process the library ran in ended, when it did not return (an abort, a signal).
    pub crashed: Option<Crash>,
}

/// A library that did not return: the active probe runs each one in a process of its own, so
/// an assertion in ROCr ends that process, not the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// The signal that ended it (`SIGABRT`, `SIGSEGV`), when one did.
    pub signal: Option<String>,
    /// Its exit status, when it exited without answering.
    pub exit: Option<i32>,
    /// Whether it was stopped because it ran past its time.
    #[serde(default)]
    pub timed_out: bool,
    /// The last lines it wrote to stderr (an assertion's message), control characters removed.
    pub stderr: Option<String>,
}

/// One AQL dispatch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DispatchResult {
    /// The GPU's KFD node.
    pub node: Option<u32>,
    /// Its agent name.
    pub agent: String,
    /// `"ok"`, `"timeout"`, or the status name of the step that failed (`hsa_queue_create:
    /// HSA_STATUS_ERROR_OUT_OF_RESOURCES`).
    pub result: DispatchOutcome,
    /// Doorbell to completion signal, when it completed.
    pub microseconds: Option<u64>,
}
