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
pub mod isolate;
pub mod kfd;
pub mod rocr;
pub mod status;
pub mod thunk;

use std::path::PathBuf;

// The results are data of the source stage (a fixture's `[active]` table holds them too); the
// probes fill them in.
pub use crate::source::active_results::*;

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
    /// The `rocm-probe` binary to run each library in, in a process of its own
    /// ([`isolate`]); `None` loads them into this process.
    pub isolate_with: Option<PathBuf>,
}

/// Not installed when the file does not exist, else the loader's message.
pub(crate) fn load_error(path: &std::path::Path, e: &libloading::Error) -> LoadError {
    if !path.exists() {
        LoadError::NotInstalledAt(path.display().to_string())
    } else {
        LoadError::Other(e.to_string())
    }
}
