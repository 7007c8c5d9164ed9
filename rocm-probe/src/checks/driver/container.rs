//! Layer 2 in a container: what the runtime does to KFD's device nodes while every file the
//! passive checks read looks healthy (`facts/container.rs` collects it). Each finding needs its
//! evidence present; an unknown state says nothing.
//!
//! - An unprivileged container (a user namespace) with `/dev/kfd` passed in: KFD's open has
//!   been refused there with EINVAL (ROCm/ROCm#5379, Proxmox LXC; #4043, Docker).
//! - `/dev/kfd` on a `noexec` mount beside a GPU that uses the IOMMUv2 path: `kfd_open` maps
//!   the trap handler from `/dev/kfd` with `PROT_EXEC` (`kfd_process_init_cwsr_apu`), which a
//!   `noexec` mount refuses (ROCm/ROCm#1185, ROCm/rocminfo#40).
//! - SELinux enforcing, the probe confined as `container_t`, render nodes labelled
//!   `dri_device_t`: denied unless `container_use_dri_devices` is on
//!   (containers/container-selinux#269, #278, #289).

use crate::facts::container::{
    ATTR_CURRENT, ContainerKind, MOUNTINFO, SELINUX_BOOLEANS, SELINUX_ENFORCE, SELINUX_XATTR,
    UID_MAP, selinux_type,
};
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    Action, CONTAINER_UNPRIVILEGED, DEV_NOEXEC, Evidence, Finding, RemedyStep,
    SELINUX_DEVICE_DENIED, Status,
};
use crate::msg;

/// `HSA_CAP_ATS_PRESENT` in a node's `capability`: KFD sets it exactly for GPUs it drives
/// through IOMMUv2 (`kfd_topology_add_device`: `if (use_iommu_v2) capability |=
/// HSA_CAP_ATS_PRESENT`), the GPUs whose trap handler `kfd_open` maps from `/dev/kfd`.
pub const HSA_CAP_ATS_PRESENT: u32 = 0x2;
/// The boolean that lets `container_t` use `dri_device_t` nodes (containers/container-selinux#278).
const DRI_BOOLEAN: &str = "container_use_dri_devices";
/// Confined container domains (`svirt_lxc_net_t` is the older name of `container_t`).
const CONFINED: [&str; 2] = ["container_t", "svirt_lxc_net_t"];
/// The label of render and card nodes in the reference policy.
const DRI_DEVICE: &str = "dri_device_t";

/// The container findings.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    unprivileged(f, out);
    noexec(f, out);
    selinux(f, out);
}

fn kfd_present(f: &Facts) -> bool {
    f.devices
        .iter()
        .any(|d| d.path == KFD_DEVICE && d.node.is_some())
}

/// Whether the modes, groups and ACLs open this device node to the probe's user.
fn granted(f: &Facts, d: &crate::facts::access::DeviceFacts) -> bool {
    crate::facts::access::access(d.node.as_ref(), f.identity.as_ref())
        == crate::facts::access::Access::Granted
}

fn unprivileged(f: &Facts, out: &mut Vec<Finding>) {
    let c = &f.container;
    if c.user_namespace != Some(true) || !kfd_present(f) {
        return;
    }
    let kind = c.kind.as_ref().map_or_else(
        || msg!("driver.container-kind-unknown"),
        |k| k.name().to_owned(),
    );
    let podman = c.kind == Some(ContainerKind::Podman);
    // Rootless Podman with the host user's groups carried in (`--group-add keep-groups`) is the
    // documented working setup: once /dev/kfd and every render node are open to this user there
    // is nothing left to warn about. LXC and remapped Docker have refused the open itself.
    if podman && f.devices.iter().all(|d| granted(f, d)) {
        return;
    }
    let summary = if podman {
        msg!("driver.container-unprivileged-podman")
    } else {
        msg!("driver.container-unprivileged", kind)
    };
    let mut finding = CONTAINER_UNPRIVILEGED
        .finding(summary)
        .with(Evidence::new(
            UID_MAP,
            c.uid_map.clone().unwrap_or_default(),
        ))
        .with_all(c.markers.iter().map(super::super::marker_evidence))
        .with_all(
            f.platform
                .container_markers
                .iter()
                .map(super::super::marker_evidence),
        );
    if let Some(d) = f.devices.iter().find(|d| d.path == KFD_DEVICE) {
        finding = finding.with(super::node_evidence(d));
    }
    // Rootless Podman (toolbox, distrobox) opens /dev/kfd once the host user's groups are
    // carried in; the refusals reported are LXC's and user-namespace-remapped Docker's.
    let remedy = if podman {
        msg!("driver.container-unprivileged-podman-remedy")
    } else {
        msg!("driver.container-unprivileged-remedy")
    };
    out.push(finding.remedy(remedy));
}

fn noexec(f: &Facts, out: &mut Vec<Finding>) {
    let Some(mount) = f.container.mount_of(KFD_DEVICE).filter(|m| m.has("noexec")) else {
        return;
    };
    let Some(kfd) = &f.kfd else { return };
    let ats: Vec<(u32, u32)> = kfd
        .topology
        .gpu_nodes()
        .filter_map(|n| {
            let cap = n.properties.as_ref()?.capability?;
            (cap & HSA_CAP_ATS_PRESENT != 0).then_some((n.id, cap))
        })
        .collect();
    if ats.is_empty() {
        return;
    }
    out.push(
        DEV_NOEXEC
            .finding(msg!(
                "driver.dev-noexec",
                mount = mount.mount_point,
                gpus = crate::checks::gpu_names(f, ats.iter().map(|&(id, _)| id))
            ))
            .with(Evidence::new(
                MOUNTINFO,
                msg!(
                    "driver.dev-noexec-mount",
                    path = KFD_DEVICE,
                    mount = mount.mount_point,
                    fstype = mount.fstype,
                    options = mount.options.join(",")
                ),
            ))
            .with_all(ats.iter().map(|(id, cap)| {
                Evidence::new(
                    format!(
                        "{}/nodes/{id}/properties",
                        crate::facts::topology::TOPOLOGY_DIR
                    ),
                    msg!("driver.dev-noexec-ats", capability = format!("{cap:#x}")),
                )
            }))
            .remedy(msg!("driver.dev-noexec-remedy", mount = mount.mount_point))
            .step(super::read_log("tba")),
    );
}

fn selinux(f: &Facts, out: &mut Vec<Finding>) {
    let c = &f.container;
    let Some((label, _)) = c.selinux_process().filter(|(_, t)| CONFINED.contains(t)) else {
        return;
    };
    let denied: Vec<&String> = c
        .labels
        .iter()
        .filter(|(_, l)| selinux_type(l) == Some(DRI_DEVICE))
        .map(|(p, _)| p)
        .collect();
    if denied.is_empty() {
        return;
    }
    let boolean_path = format!("{SELINUX_BOOLEANS}/{DRI_BOOLEAN}");
    let known = c.selinux_enforcing == Some(true);
    let (status, boolean, remedy, step) = match c.selinux_booleans.get(DRI_BOOLEAN) {
        Some(Some(true)) => return,
        Some(Some(false)) => (
            Status::Fail,
            Evidence::new(boolean_path, msg!("driver.selinux-boolean-off")),
            msg!(
                "driver.selinux-device-denied-remedy-boolean",
                boolean = DRI_BOOLEAN
            ),
            Some(RemedyStep::run(
                Action::Sysctl,
                DRI_BOOLEAN,
                format!("sudo setsebool -P {DRI_BOOLEAN} 1"),
                msg!("driver.step-setsebool", boolean = DRI_BOOLEAN),
            )),
        ),
        Some(None) => (
            Status::Fail,
            Evidence::absent(boolean_path),
            msg!(
                "driver.selinux-device-denied-remedy-policy",
                boolean = DRI_BOOLEAN
            ),
            Some(RemedyStep::say(
                Action::Upgrade,
                "container-selinux",
                msg!(
                    "driver.step-upgrade-container-selinux",
                    boolean = DRI_BOOLEAN
                ),
            )),
        ),
        None => (
            Status::Warn,
            Evidence::new(boolean_path, msg!("driver.selinux-boolean-unknown")),
            msg!(
                "driver.selinux-device-denied-remedy-unknown",
                boolean = DRI_BOOLEAN
            ),
            None,
        ),
    };
    // Only a known enforcing mode and a known policy make it a failure.
    let status = if known { status } else { Status::Warn };
    let nodes = crate::i18n::list(&denied);
    let summary = if status == Status::Fail {
        msg!("driver.selinux-device-denied", nodes)
    } else {
        msg!("driver.selinux-device-denied-maybe", nodes)
    };
    let enforce = if known {
        Evidence::new(SELINUX_ENFORCE, msg!("driver.selinux-enforcing"))
    } else {
        Evidence::new(SELINUX_ENFORCE, msg!("driver.selinux-mode-unknown"))
    };
    let mut finding =
        SELINUX_DEVICE_DENIED
            .finding_with(status, summary)
            .with(enforce)
            .with(Evidence::new(ATTR_CURRENT, label))
            .with_all(c.labels.iter().map(|(path, l)| {
                Evidence::new(format!("device:{path} {SELINUX_XATTR}"), l.clone())
            }))
            .with(boolean)
            .remedy(remedy);
    if let Some(step) = step.filter(|_| status == Status::Fail) {
        finding = finding.step(step);
    }
    out.push(finding);
}
