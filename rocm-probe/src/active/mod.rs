//! Active probes (`--active`, `--dispatch`): ask each layer to answer instead of reading what it
//! claims. Layer 2: `/dev/kfd` ioctls; layer 3: libhsakmt; layer 4: ROCr (`hsa_init`, agents,
//! ISAs, pools, and with `--dispatch` one AQL barrier-AND packet per GPU) and HIP.
//!
//! Nothing here changes device state. Opening `/dev/kfd` creates a KFD process for the probe
//! (ended when it exits); `hsaKmtAcquireSystemProperties` and `hsa_init` acquire a GPU VM on
//! every GPU, which wakes a runtime-suspended GPU — which is why all of this is opt-in.
//!
//! The results are plain data, [`ActiveFacts`], which is also the `[active]` table of
//! `fixture.toml`: a fixture models an active run by stating its results, and the checks that
//! consume them run on scenarios no machine here can produce.
//!
//! The modules that call foreign code opt back into `unsafe` one by one: [`ioctl`] (the
//! `/dev/kfd` ioctls), [`thunk`] (libhsakmt), [`rocr`] (ROCr, the AQL packet write included)
//! and [`hip`].

pub mod dispatch;
pub mod hip;
pub mod ioctl;
pub mod kfd;
pub mod outcome;
pub mod rocr;
pub mod status;
pub mod thunk;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use outcome::{DispatchOutcome, KfdOpen, LoadError};

use crate::install::InstallFacts;
use crate::topology::Topology;

/// What to probe and with which libraries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActiveOptions {
    /// Also dispatch one AQL barrier-AND packet per GPU agent.
    pub dispatch: bool,
    /// libhsakmt to load instead of the one a process would load.
    pub hsakmt_lib: Option<PathBuf>,
    /// ROCr to load instead of the one a process would load.
    pub hsa_runtime_lib: Option<PathBuf>,
    /// HIP to load instead of the one a process would load.
    pub hip_lib: Option<PathBuf>,
    /// How long a dispatch may take before it is reported as timed out.
    pub dispatch_timeout_ms: Option<u64>,
}

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
    /// `GET_CLOCK_COUNTERS` read twice: the `gpu_id`s whose GPU counter did not advance.
    pub kfd_clock_stuck: Option<Vec<u32>>,
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

impl ActiveFacts {
    /// Runs the active probes on the live machine. `topology` gives the GPUs' `gpu_id`s and
    /// nodes; `installs` the libraries a process would load.
    pub fn probe_live(
        topology: Option<&Topology>,
        installs: &InstallFacts,
        options: &ActiveOptions,
    ) -> Self {
        let gpu_ids: Vec<u32> = topology
            .map(|t| t.gpu_nodes().filter_map(|n| n.gpu_id).collect())
            .unwrap_or_default();
        let mut facts = kfd::probe(crate::facts::KFD_DEVICE, &gpu_ids);
        facts.hsakmt = Some(thunk::probe(installs, options.hsakmt_lib.as_deref()));
        let (rocr, dispatch) = rocr::probe(installs, options);
        facts.rocr = Some(rocr);
        facts.dispatch = dispatch;
        facts.hip = Some(hip::probe(installs, options.hip_lib.as_deref()));
        facts
    }
}

/// Not installed when the file does not exist, else the loader's message.
pub(crate) fn load_error(path: &std::path::Path, e: &libloading::Error) -> LoadError {
    if !path.exists() {
        LoadError::NotInstalledAt(path.display().to_string())
    } else {
        LoadError::Other(e.to_string())
    }
}
