//! Layer 2 with active results: what `/dev/kfd` answered (open, version, apertures, memory,
//! failed ioctls).

use crate::active::KfdOpen;
use crate::checks::active::{SOURCE, gpu_nodes, kfd_hides};
use crate::facts::os_release::Distro;
use crate::facts::topology::{Node, TOPOLOGY_DIR};
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    Action, Evidence, Finding, KFD_ANSWERS, KFD_GPUS_HIDDEN, KFD_INTERFACE_OLD, KFD_IOCTL_FAILED,
    KFD_OPEN_FAILED, RemedyStep, Status, WSL_NO_KFD,
};
use crate::msg;

/// What an errno means when `/dev/kfd` will not open.
fn open_meaning(errno: &str) -> String {
    match errno {
        "ENOENT" => msg!("active.open-enoent"),
        "EACCES" | "EPERM" => msg!("active.open-eacces"),
        "ENODEV" | "ENXIO" => msg!("active.open-enodev"),
        "EBUSY" => msg!("active.open-ebusy"),
        _ => msg!("active.open-refused"),
    }
}

/// Layer 2: the KFD ioctls.
pub fn check(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(a) = &f.active else { return out };
    let Some(open) = &a.kfd_open else { return out };
    let device = Evidence::new(
        format!(
            "{SOURCE}:{}",
            msg!("active.source-open", device = KFD_DEVICE)
        ),
        open.to_string(),
    );
    if let KfdOpen::Errno(errno) = open {
        if errno.as_str() == "ENOENT" && !f.platform.wsl_markers.is_empty() {
            // WSL has no KFD by design (its GPU is reached through /dev/dxg): no node to open
            // is what a healthy WSL shows; layer 2's WSL findings judge /dev/dxg.
            out.push(
                WSL_NO_KFD
                    .finding(msg!("active.kfd-absent-wsl", device = KFD_DEVICE))
                    .with(device),
            );
            return out;
        }
        out.push(
            KFD_OPEN_FAILED
                .finding(msg!(
                    "active.kfd-open-failed",
                    device = KFD_DEVICE,
                    errno,
                    meaning = open_meaning(errno)
                ))
                .with(device)
                .remedy(msg!("active.kfd-open-failed-remedy")),
        );
        return out;
    }
    let mut parts = Vec::new();
    let mut evidence = vec![device];
    // A kernel numbering its ioctls as ROCm ≤ 1.8 did is the one cause of the old interface too:
    // kfd-ioctl-failed carries the remedy.
    let old_numbering = a
        .kfd_errors
        .as_ref()
        .and_then(|e| numbering_predates_upstream(a.kfd_version, e));
    if let Some([major, minor]) = a.kfd_version {
        parts.push(msg!("active.kfd-part-interface", major, minor));
        evidence.push(Evidence::new(
            format!("{SOURCE}:GET_VERSION"),
            format!("{major}.{minor}"),
        ));
        let (status, why) = if major != 1 {
            (Some(Status::Fail), msg!("active.interface-major"))
        } else if minor < 5 {
            (Some(Status::Warn), msg!("active.interface-no-svm"))
        } else if minor < 9 {
            (
                Some(Status::Warn),
                msg!("active.interface-no-available-memory"),
            )
        } else if minor < 13 {
            (Some(Status::Info), msg!("active.interface-no-debugger"))
        } else {
            (None, String::new())
        };
        if let Some(status) = status {
            let finding = KFD_INTERFACE_OLD
                .finding_with(status, msg!("active.interface-old", major, minor, why))
                .with(Evidence::new(
                    format!("{SOURCE}:GET_VERSION"),
                    format!("{major}.{minor}"),
                ));
            out.push(if old_numbering.is_some() {
                finding.caused_by(&KFD_IOCTL_FAILED)
            } else {
                finding
                    .remedy(msg!("active.interface-old-remedy"))
                    // Installing a driver and rebooting for the debugger alone (info) is the
                    // user's call: steps only where something fails or degrades.
                    .with_steps(if status == Status::Info {
                        Vec::new()
                    } else {
                        interface_steps(f)
                    })
            });
        }
    }
    let gpus = gpu_nodes(f);
    if let Some(seen) = &a.kfd_gpus {
        parts.push(msg!("active.kfd-part-gpus", gpus = seen.len()));
        let hidden: Vec<&&Node> = gpus.iter().filter(|n| kfd_hides(f, n.gpu_id)).collect();
        if !hidden.is_empty() {
            out.push(
                KFD_GPUS_HIDDEN
                    .finding(msg!(
                        "active.gpus-hidden",
                        seen = seen.len(),
                        total = gpus.len(),
                        gpus = crate::checks::gpu_names(f, hidden.iter().map(|n| n.id))
                    ))
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_PROCESS_APERTURES_NEW"),
                        format!("gpu_ids {seen:?}"),
                    ))
                    .with_all(hidden.iter().map(|n| {
                        Evidence::new(
                            format!("{TOPOLOGY_DIR}/nodes/{}/gpu_id", n.id),
                            n.gpu_id.map(|g| g.to_string()).unwrap_or_default(),
                        )
                    })),
            );
        }
    }
    if let Some(memory) = &a.kfd_available_memory
        && !memory.is_empty()
    {
        let total: u64 = memory.values().sum();
        parts.push(msg!(
            "active.kfd-part-memory",
            gib = format!("{:.1}", total as f64 / (1u64 << 30) as f64),
            gpus = memory.len()
        ));
        evidence.push(Evidence::new(
            format!("{SOURCE}:AVAILABLE_MEMORY"),
            memory
                .iter()
                .map(|(id, b)| format!("{id}: {b}"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    if let Some(errors) = a.kfd_errors.as_ref().filter(|e| !e.is_empty()) {
        let evidence = errors
            .iter()
            .map(|e| Evidence::new(format!("{SOURCE}:ioctl"), e.clone()));
        let finding = match old_numbering {
            Some([major, minor]) => KFD_IOCTL_FAILED
                .finding_with(
                    Status::Fail,
                    msg!(
                        "active.ioctl-numbering-old",
                        count = errors.len(),
                        errors = errors.join("; "),
                        major,
                        minor
                    ),
                )
                .with_all(evidence)
                .remedy(msg!("active.ioctl-numbering-old-remedy"))
                .with_steps(interface_steps(f)),
            None => KFD_IOCTL_FAILED
                .finding(msg!(
                    "active.ioctl-failed",
                    count = errors.len(),
                    errors = errors.join("; ")
                ))
                .with_all(evidence),
        };
        out.push(finding);
    }
    out.insert(
        0,
        KFD_ANSWERS
            .finding(msg!(
                "active.kfd-answers",
                device = KFD_DEVICE,
                parts = parts.join("; ")
            ))
            .with_all(evidence),
    );
    out
}

/// The interface, when the failures show a KFD numbered before upstream: GET_PROCESS_APERTURES_NEW
/// refused as a whole (EINVAL, ENOTTY) by an interface below 1.3. Upstream went from 1.1 to 1.3
/// (the history in `kfd_ioctl.h`), and only the kernels of ROCm 1.8 and earlier numbered 0x14 as
/// another ioctl (ROCT-Thunk-Interface roc-1.6.0 and roc-1.8.0 `include/linux/kfd_ioctl.h`:
/// UNMAP_MEMORY_FROM_GPU, which refuses the zeroed request). libhsakmt since ROCm 1.9 opens KFD
/// with upstream's numbers: past the apertures (it falls back to the old fixed-size ioctl, 0x06 in
/// both tables) it sends ACQUIRE_VM, 0x15, ALLOC_MEMORY_OF_SCRATCH there, which refuses it. No
/// current ROCm runs on such a kernel: a failure, not a missing figure.
fn numbering_predates_upstream(version: Option<[u32; 2]>, errors: &[String]) -> Option<[u32; 2]> {
    let [major, minor] = version?;
    let refused = errors.iter().any(|e| {
        e == "GET_PROCESS_APERTURES_NEW: EINVAL" || e == "GET_PROCESS_APERTURES_NEW: ENOTTY"
    });
    (major == 1 && minor < 3 && refused).then_some([major, minor])
}

/// A newer KFD interface: AMD's amdgpu-dkms (the package name in AMD's repositories for apt,
/// dnf and zypper, ROCm install-on-linux "Installing the AMDGPU driver"), then the reboot that
/// loads it. AMD publishes no Arch packages; Arch's own kernel follows upstream, so there the
/// step is the system upgrade that brings the current kernel.
fn interface_steps(f: &Facts) -> Vec<RemedyStep> {
    let mut steps: Vec<RemedyStep> = crate::facts::os_release::families(f.os_release.as_ref())
        .into_iter()
        .map(|d| {
            if d == Distro::Arch {
                RemedyStep::run(
                    Action::Upgrade,
                    "kernel",
                    "sudo pacman -Syu",
                    msg!("driver.step-upgrade-kernel-arch"),
                )
            } else {
                RemedyStep::run(
                    Action::Install,
                    "amdgpu-dkms",
                    d.install("amdgpu-dkms"),
                    msg!("driver.step-install-amdgpu-dkms"),
                )
            }
            .on(d)
        })
        .collect();
    steps.push(super::reboot("kfd"));
    steps
}

#[cfg(test)]
mod tests {
    use super::numbering_predates_upstream;

    fn errors(list: &[&str]) -> Vec<String> {
        list.iter().map(|e| (*e).to_owned()).collect()
    }

    /// Only a whole-call refusal of the apertures by a pre-1.3 interface names the old
    /// numbering: upstream 1.3+ has the ioctl, and a per-GPU error is about one GPU.
    #[test]
    fn the_old_numbering_needs_the_apertures_refused_below_1_3() {
        let refused = errors(&["GET_PROCESS_APERTURES_NEW: EINVAL"]);
        assert_eq!(
            numbering_predates_upstream(Some([1, 2]), &refused),
            Some([1, 2])
        );
        assert_eq!(
            numbering_predates_upstream(
                Some([1, 1]),
                &errors(&["GET_PROCESS_APERTURES_NEW: ENOTTY"])
            ),
            Some([1, 1])
        );
        assert_eq!(numbering_predates_upstream(Some([1, 3]), &refused), None);
        assert_eq!(numbering_predates_upstream(Some([2, 0]), &refused), None);
        assert_eq!(numbering_predates_upstream(None, &refused), None);
        assert_eq!(
            numbering_predates_upstream(
                Some([1, 2]),
                &errors(&["GET_PROCESS_APERTURES_NEW: EBADF"])
            ),
            None
        );
        assert_eq!(
            numbering_predates_upstream(Some([1, 2]), &errors(&["GET_VERSION: EINVAL"])),
            None
        );
    }
}
