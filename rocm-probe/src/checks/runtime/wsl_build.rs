//! AMD's WSL build of ROCr on a machine that is not WSL.
//!
//! ROCm 6.1–6.4 ship a WSL runtime, `hsa-runtime-rocr4wsl-amdgpu` (and `rocminfo4wsl-amdgpu`),
//! whose `libhsa-runtime64.so.1` links Microsoft's `libdxcore.so`, which only WSL provides. Put
//! on a native Linux machine (by `amdgpu-install --usecase=wsl`, or a package pulled in by
//! mistake) it replaces the standard ROCr, and every ROCm program fails before reaching the GPU:
//! `rocminfo: error while loading shared libraries: libdxcore.so: cannot open shared object
//! file`, `amdgpu-arch`: `Failed to load libamdhip64.so: libdxcore.so: …` (Linux Mint 22 with a
//! Radeon 780M and ROCm 6.2.4, ROCm/legacy-rocm-build#4053). The kernel side is healthy, so
//! nothing below this layer shows it. Under WSL the same library is right, and the driver layer
//! judges it (`checks/driver/wsl.rs`).

use crate::facts::Facts;
use crate::facts::wsl::DXCORE_SONAME;
use crate::finding::{Action, Evidence, Finding, RemedyStep};
use crate::msg;

use super::rules::WSL_RUNTIME_OUTSIDE_WSL;

/// The WSL packages, AMD's package names (ROCm/legacy-rocm-build#4053's `dpkg -l`).
const WSL_PACKAGES: &str = "hsa-runtime-rocr4wsl-amdgpu rocminfo4wsl-amdgpu";
/// The standard packages they replace: ROCr and rocminfo (AMD's Ubuntu repository names).
const NATIVE_PACKAGES: &str = "hsa-rocr rocminfo";

pub(super) fn check(f: &Facts, out: &mut Vec<Finding>) {
    if !f.platform.wsl_markers.is_empty() {
        return;
    }
    let Some(rocr) = f.rocr_build.as_ref().filter(|r| r.wsl() == Some(true)) else {
        return;
    };
    let needed = rocr.needed.as_deref().unwrap_or_default().join(", ");
    // The WSL runtime is packaged for Ubuntu only (AMD's "ROCm on WSL" install pages), so the
    // commands are apt's whatever the distribution claims to be.
    out.push(
        WSL_RUNTIME_OUTSIDE_WSL
            .finding(msg!(
                "runtime.wsl-runtime-outside-wsl",
                path = rocr.path,
                dxcore = DXCORE_SONAME
            ))
            .with(Evidence::new(rocr.path.clone(), needed))
            .with(Evidence::new("/proc/version", msg!("runtime.wsl-not-wsl")))
            .remedy(msg!(
                "runtime.wsl-runtime-outside-wsl-remedy",
                wsl = WSL_PACKAGES,
                native = NATIVE_PACKAGES
            ))
            .step(RemedyStep::run(
                Action::Remove,
                WSL_PACKAGES,
                format!("sudo apt remove {WSL_PACKAGES}"),
                msg!("runtime.step-remove-wsl-runtime"),
            ))
            .step(RemedyStep::run(
                Action::Install,
                NATIVE_PACKAGES,
                format!("sudo apt install {NATIVE_PACKAGES}"),
                msg!("runtime.step-install-native-runtime"),
            )),
    );
}
