//! Layer 2: amdgpu, KFD and the device nodes ROCm opens.

pub mod active;
pub mod container;
pub mod firmware_versions;
pub mod kernel_bad;
pub mod kernel_log;
pub mod platform;
pub mod rules;
pub mod selinux_user;
pub mod wsl;

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::access::{Access, Class, DeviceFacts, access, decide, group_would_grant};
use crate::facts::config::Profile;
use crate::facts::module::{AMDGPU_MODULE, DKMS_AMDGPU, OSRELEASE};
use crate::facts::os_release::Distro;
use crate::facts::pci::PCI_DEVICES;
use crate::facts::platform::{
    CMDLINE, IOMMU_CLASS, NUMA_BALANCING as NUMA_BALANCING_FILE, SECURE_BOOT_VAR,
};
use crate::facts::topology::TOPOLOGY_DIR;
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    AMDGPU_BLACKLISTED, AMDGPU_NOT_LOADED, Action, CONTAINER, DEVICE_ACCESS_SEAT_ACL,
    DKMS_NOT_BUILT, Evidence, Finding, GPU_NOT_BOUND, GPU_NOT_IN_KFD, IDENTITY_NOT_RECORDED,
    INPUT_MALFORMED, INPUT_UNREADABLE, IOMMU_NOT_PASSTHROUGH, KERNEL_TOO_OLD, KFD_DEVICE_MISSING,
    KFD_DEVICE_NOT_ADDED, KFD_MISSING, KFD_PERMISSION_DENIED, KFD_READY, KFD_UNREADABLE,
    NO_AMD_GPU, NOMODESET, NUMA_BALANCING, OUT_OF_TREE_DRIVER, RENDER_NODE_MISSING,
    RENDER_PERMISSION_DENIED, RemedyStep, Rule, SECURE_BOOT, Status, WSL,
};
use crate::target;
use crate::{i18n, msg};

/// Layer 2 findings; `below` are the layer-1 findings (to mark consequences).
pub fn check(f: &Facts, below: &[Finding], profile: Profile) -> Vec<Finding> {
    let no_gpu = below.iter().any(|x| x.id == NO_AMD_GPU.id);
    let mut out = Vec::new();
    let inputs: Vec<&crate::source::problem::Problem> = f
        .problems
        .system
        .iter()
        .filter(|p| !p.path.starts_with(PCI_DEVICES))
        .collect();
    out.extend(super::hardware::problems(
        &inputs,
        &msg!("driver.input-files"),
        [INPUT_UNREADABLE, INPUT_MALFORMED],
    ));
    environment(f, &mut out);
    wsl::check(f, &mut out);
    if !f.platform.wsl_markers.is_empty() && f.kfd.is_none() {
        // WSL has neither amdgpu nor KFD by design; their absence is not a fault.
        return out;
    }
    let unbound = bindings(f, &mut out);
    kernel_log::check(f, &mut out);
    let cause = if no_gpu {
        Some(&NO_AMD_GPU)
    } else if unbound {
        Some(&GPU_NOT_BOUND)
    } else {
        None
    };
    module(f, cause, &mut out);
    if let Some(refused) = &f.kfd_unreadable {
        out.push(kfd_unreadable(refused));
        return out;
    }
    if f.kfd.is_none() {
        if f.module.as_ref().is_none_or(|m| m.present) {
            let finding = KFD_MISSING
                .finding(msg!("driver.kfd-missing"))
                .with(Evidence::new(
                    TOPOLOGY_DIR,
                    f.kfd_error
                        .as_ref()
                        .map_or_else(absent, |p| p.message.to_string()),
                ))
                .remedy(msg!("driver.kfd-missing-remedy"))
                .step(read_log("kfd"));
            out.push(finding);
        }
        return out;
    }
    not_in_kfd(f, &mut out);
    firmware_versions::check(f, &mut out);
    kernel_bad::check(f, &mut out);
    devices(f, &mut out);
    container::check(f, &mut out);
    selinux_user::check(f, &mut out);
    tuning(f, profile, &mut out);
    out
}

/// KFD is there but its topology was refused: its own diagnosis, never "no KFD".
fn kfd_unreadable(r: &crate::facts::topology::KfdUnreadable) -> Finding {
    let seen = match (r.mode, r.owner_uid, r.owner_gid) {
        (Some(mode), Some(owner), Some(group)) => msg!(
            "driver.kfd-unreadable-evidence",
            uid = r.uid,
            mode = format!("{mode:04o}"),
            owner,
            group
        ),
        _ => msg!("driver.kfd-unreadable-no-stat", uid = r.uid),
    };
    KFD_UNREADABLE
        .finding(msg!("driver.kfd-unreadable", uid = r.uid, path = r.path))
        .with(Evidence::new(r.path.clone(), seen))
        .remedy(msg!("driver.kfd-unreadable-remedy", path = r.path))
}

/// Platform tuning that matters on multi-GPU nodes (ARCHITECTURE.md §5 profiles): warnings on cluster
/// nodes, information elsewhere. Only with GPUs in KFD.
fn tuning(f: &Facts, profile: Profile, out: &mut Vec<Finding>) {
    if f.inventory
        .as_ref()
        .is_none_or(|i| i.gpu_agents().next().is_none())
    {
        return;
    }
    let status = if profile == Profile::Cluster {
        Status::Warn
    } else {
        Status::Info
    };
    let words: Vec<&str> = f.platform.cmdline_words().collect();
    let passthrough = words
        .iter()
        .any(|w| *w == "iommu=pt" || *w == "amd_iommu=pt");
    if f.platform.iommu == Some(true) && f.platform.cmdline.is_some() && !passthrough {
        // Two or more discrete GPUs talk peer to peer (RCCL): a warning on any profile.
        let dgpus = platform::discrete_gpus(f);
        let (iommu_status, summary) = if dgpus >= 2 && status == Status::Info {
            (
                Status::Warn,
                msg!("driver.iommu-not-passthrough-p2p", gpus = dgpus),
            )
        } else {
            (
                status,
                msg!(
                    "driver.iommu-not-passthrough",
                    profile = profile_name(profile)
                ),
            )
        };
        out.push(
            IOMMU_NOT_PASSTHROUGH
                .finding_with(iommu_status, summary)
                .with(Evidence::new(IOMMU_CLASS, msg!("driver.iommu-units")))
                .with(Evidence::new(
                    CMDLINE,
                    f.platform.cmdline.clone().unwrap_or_default(),
                ))
                .remedy(msg!("driver.iommu-not-passthrough-remedy"))
                .with_steps(kernel_parameter_steps(f, true, &["iommu=pt"]))
                .step(reboot("iommu=pt")),
        );
    }
    platform::acs(f, out);
    if f.platform.numa_balancing == Some(1) {
        out.push(
            NUMA_BALANCING
                .finding_with(
                    status,
                    msg!("driver.numa-balancing", profile = profile_name(profile)),
                )
                .with(Evidence::new(NUMA_BALANCING_FILE, "1"))
                .remedy(msg!("driver.numa-balancing-remedy"))
                .step(RemedyStep::run(
                    Action::Sysctl,
                    "kernel.numa_balancing",
                    "sudo sysctl -w kernel.numa_balancing=0",
                    msg!("driver.step-numa-now"),
                ))
                .step(RemedyStep::run(
                    Action::Sysctl,
                    "kernel.numa_balancing",
                    format!("echo kernel.numa_balancing=0 | sudo tee {NUMA_SYSCTL_FILE}"),
                    msg!("driver.step-numa-persist", path = NUMA_SYSCTL_FILE),
                )),
        );
    }
}

fn environment(f: &Facts, out: &mut Vec<Finding>) {
    let p = &f.platform;
    if !p.wsl_markers.is_empty() {
        out.push(
            WSL.finding(msg!("driver.wsl"))
                .with_all(p.wsl_markers.iter().map(super::marker_evidence)),
        );
    }
    if f.in_container() {
        out.push(
            CONTAINER.finding(msg!("driver.container")).with_all(
                p.container_markers
                    .iter()
                    .chain(&f.container.markers)
                    .map(super::marker_evidence),
            ),
        );
    }
}

/// `cause`: what makes amdgpu's absence expected (no AMD GPU, or every GPU bound elsewhere).
fn module(f: &Facts, cause: Option<&Rule>, out: &mut Vec<Finding>) {
    let Some(m) = &f.module else { return };
    if m.present {
        if let Some(version) = &m.version {
            let mut finding = OUT_OF_TREE_DRIVER
                .finding(msg!("driver.out-of-tree-driver", version))
                .with(Evidence::new(
                    format!("{AMDGPU_MODULE}/version"),
                    version.clone(),
                ));
            if let Some(taint) = &m.taint {
                finding = finding.with(Evidence::new(
                    format!("{AMDGPU_MODULE}/taint"),
                    taint.clone(),
                ));
            }
            out.push(finding);
        }
        return;
    }
    let mut causes: Vec<Finding> = Vec::new();
    let blacklist_words: Vec<&str> = f
        .platform
        .cmdline_words()
        .filter(|w| {
            ["modprobe.blacklist=", "module_blacklist="]
                .iter()
                .any(|k| {
                    w.strip_prefix(k)
                        .is_some_and(|list| list.split(',').any(|m| m == "amdgpu"))
                })
        })
        .collect();
    if !f.platform.blacklists.is_empty() || !blacklist_words.is_empty() {
        causes.push(
            AMDGPU_BLACKLISTED
                .finding(msg!("driver.amdgpu-blacklisted"))
                .with_all(
                    f.platform
                        .blacklists
                        .iter()
                        .map(|b| Evidence::new(b.path.clone(), b.line.clone())),
                )
                .with_all(blacklist_words.iter().map(|w| Evidence::new(CMDLINE, *w)))
                .remedy(msg!("driver.amdgpu-blacklisted-remedy"))
                .with_steps(unblacklist_steps(f, &blacklist_words)),
        );
    }
    let mut nomodeset: Vec<&str> = f
        .platform
        .cmdline_words()
        .filter(|w| *w == "nomodeset" || *w == "amdgpu.modeset=0")
        .collect();
    nomodeset.sort_unstable();
    nomodeset.dedup();
    if !nomodeset.is_empty() {
        causes.push(
            NOMODESET
                .finding(msg!("driver.nomodeset"))
                .with_all(nomodeset.iter().map(|w| Evidence::new(CMDLINE, *w)))
                .remedy(msg!("driver.nomodeset-remedy"))
                .with_steps(kernel_parameter_steps(f, false, &nomodeset))
                .step(reboot(&nomodeset.join(" "))),
        );
    }
    if let Some(kernel) = &m.kernel_release {
        let built = m.dkms.iter().any(|b| b.kernels.contains(kernel));
        if !m.dkms.is_empty() && !built {
            causes.push(
                DKMS_NOT_BUILT
                    .finding(msg!("driver.dkms-not-built", kernel))
                    .with(Evidence::new(OSRELEASE, kernel.clone()))
                    .with_all(m.dkms.iter().map(|b| {
                        Evidence::new(
                            format!("{DKMS_AMDGPU}/{}", b.version),
                            if b.kernels.is_empty() {
                                msg!("driver.dkms-built-for-none")
                            } else {
                                msg!("driver.dkms-built-for", kernels = i18n::list(&b.kernels))
                            },
                        )
                    }))
                    .remedy(msg!("driver.dkms-not-built-remedy", kernel))
                    .with_steps(dkms_steps(f)),
            );
        }
    }
    if f.platform.secure_boot == Some(true) {
        causes.push(
            SECURE_BOOT
                .finding(msg!("driver.secure-boot"))
                .with(Evidence::new(SECURE_BOOT_VAR, "1"))
                .remedy(msg!("driver.secure-boot-remedy"))
                .with_steps(mok_steps(f)),
        );
    }
    // Every AMD GPU held for virtual machines (a passthrough or MxGPU host): the host itself
    // runs no ROCm work, and amdgpu's absence — blacklisted, as AMD's MxGPU host setup asks
    // (amd/MxGPU-Virtualization#13) — is how it is set up, not a fault.
    let vm_host = f.pci.as_ref().is_some_and(|p| {
        !p.gpus.is_empty()
            && p.gpus
                .iter()
                .all(|g| g.driver.as_deref().is_some_and(|d| VM_DRIVERS.contains(&d)))
    });
    if vm_host {
        out.push(
            AMDGPU_NOT_LOADED
                .finding_with(Status::Info, msg!("driver.amdgpu-not-loaded-vm-host"))
                .with(Evidence::absent(AMDGPU_MODULE))
                .with_all(causes.iter().flat_map(|c| c.evidence.iter().cloned()))
                .caused_by(&GPU_NOT_BOUND),
        );
        return;
    }
    let mut finding = AMDGPU_NOT_LOADED
        .finding(msg!("driver.amdgpu-not-loaded"))
        .with(Evidence::absent(AMDGPU_MODULE))
        .remedy(msg!("driver.amdgpu-not-loaded-remedy"))
        .step(RemedyStep::run(
            Action::LoadModule,
            "amdgpu",
            "sudo modprobe amdgpu",
            msg!("driver.step-load-amdgpu"),
        ))
        .step(read_log("amdgpu"));
    // Blacklist, nomodeset, DKMS and Secure Boot are its causes in the cause graph
    // (rules.rs); what makes its absence expected is known here only.
    if let Some(cause) = cause {
        finding = finding.caused_by(cause);
    }
    out.extend(causes);
    out.push(finding);
}

/// Drivers that hold a GPU for virtual machines on purpose: `vfio-pci` (passthrough) and `gim`,
/// AMD's MxGPU host driver, which binds the physical function and creates the SR-IOV virtual
/// functions handed to guests (amd/MxGPU-Virtualization: `modprobe gim`).
const VM_DRIVERS: [&str; 2] = ["vfio-pci", "gim"];

/// AMD GPUs on the PCI bus that amdgpu does not drive. Returns whether every AMD GPU is bound
/// elsewhere (then amdgpu not being loaded is expected, not the cause).
fn bindings(f: &Facts, out: &mut Vec<Finding>) -> bool {
    let Some(pci) = &f.pci else { return false };
    let mut elsewhere = 0;
    for g in &pci.gpus {
        let path = format!("{PCI_DEVICES}/{}", g.address);
        let generation = g.device.and_then(target::gcn_generation);
        let too_new = platform::kernel_too_old(f, g);
        // A kernel too old for the GPU is fixed first (its amdgpu never asks for the firmware):
        // its finding comes before the firmware's.
        let firmware = platform::firmware_missing(f, g, too_new.is_some());
        if too_new.is_none() {
            out.extend(firmware.clone());
        }
        match g.driver.as_deref() {
            Some("amdgpu") => continue,
            Some(driver) if VM_DRIVERS.contains(&driver) => out.push(
                GPU_NOT_BOUND
                    .finding_with(
                        Status::Info,
                        msg!("driver.gpu-reserved-for-vms", address = g.address, driver),
                    )
                    .with(Evidence::new(format!("{path}/driver"), driver)),
            ),
            None if f.module.as_ref().is_some_and(|m| !m.present) => {
                // amdgpu is not loaded at all: its own finding says why; this one follows.
                out.push(
                    GPU_NOT_BOUND
                        .finding(msg!("driver.gpu-unbound", address = g.address))
                        .with(Evidence::absent(format!("{path}/driver"))),
                );
            }
            None if too_new.is_some() => {
                // amdgpu is loaded but this kernel's amdgpu does not know the GPU.
                if let Some(row) = too_new {
                    out.push(platform::kernel_too_old_finding(f, g, row));
                }
                out.extend(firmware.clone());
                out.push(
                    GPU_NOT_BOUND
                        .finding(msg!("driver.gpu-unbound", address = g.address))
                        .with(Evidence::absent(format!("{path}/driver")))
                        .caused_by(&KERNEL_TOO_OLD),
                );
            }
            other => {
                let remedy = match generation {
                    Some(1) => msg!("driver.gpu-not-bound-gcn1-remedy"),
                    Some(2) => msg!("driver.gpu-not-bound-gcn2-remedy"),
                    _ => msg!("driver.gpu-not-bound-remedy"),
                };
                let steps = if generation == Some(2) {
                    let mut steps = kernel_parameter_steps(f, true, &CIK_PARAMETERS);
                    steps.push(reboot(&CIK_PARAMETERS.join(" ")));
                    steps
                } else {
                    Vec::new()
                };
                out.push(
                    GPU_NOT_BOUND
                        .finding(match other {
                            None => msg!("driver.gpu-unbound", address = g.address),
                            Some(driver) => {
                                msg!("driver.gpu-bound-elsewhere", address = g.address, driver)
                            }
                        })
                        .with(Evidence::new(
                            format!("{path}/driver"),
                            other.map_or_else(absent, str::to_owned),
                        ))
                        .with_all(
                            g.device.map(|d| {
                                Evidence::new(format!("{path}/device"), format!("0x{d:04x}"))
                            }),
                        )
                        .remedy(remedy)
                        .with_steps(steps),
                );
            }
        }
        if g.driver.as_deref() != Some("amdgpu") && g.driver.is_some() {
            elsewhere += 1;
        }
    }
    !pci.gpus.is_empty() && elsewhere == pci.gpus.len()
}

/// GPUs amdgpu drives that KFD did not add.
fn not_in_kfd(f: &Facts, out: &mut Vec<Finding>) {
    let (Some(pci), Some(inv)) = (&f.pci, &f.inventory) else {
        return;
    };
    // Partitions and functions of one device share (domain, bus).
    let bus_of = |address: &str| address.rsplit_once(':').map(|(db, _)| db.to_owned());
    let kfd_buses: Vec<Option<String>> = inv
        .gpus
        .iter()
        .map(|g| g.pci_address.as_deref().and_then(bus_of))
        .collect();
    for g in pci
        .gpus
        .iter()
        .filter(|g| g.driver.as_deref() == Some("amdgpu"))
    {
        if kfd_buses.contains(&bus_of(&g.address)) {
            continue;
        }
        let path = format!("{PCI_DEVICES}/{}", g.address);
        // The kernel log's own reason beats a guess from the GPU's family.
        let logged = kernel_log::kfd_refusal(f, &g.address, g.device);
        let why = match (logged, g.device.and_then(target::gcn_generation)) {
            (Some(rule), _) if rule.id == KFD_DEVICE_NOT_ADDED.id => {
                msg!("driver.gpu-not-in-kfd-logged")
            }
            (_, Some(1)) => msg!("driver.gpu-not-in-kfd-gcn1"),
            (_, Some(2)) => msg!("driver.gpu-not-in-kfd-gcn2"),
            _ => msg!("driver.gpu-not-in-kfd-atomics"),
        };
        let mut finding =
            GPU_NOT_IN_KFD.finding(msg!("driver.gpu-not-in-kfd", address = g.address, why));
        if let Some(rule) = logged {
            finding = finding.caused_by(rule);
        }
        out.push(
            finding
                .with(Evidence::new(format!("{path}/driver"), "amdgpu"))
                .with_all(
                    g.device
                        .map(|d| Evidence::new(format!("{path}/device"), format!("0x{d:04x}"))),
                )
                .with(Evidence::new(
                    format!("{TOPOLOGY_DIR}/nodes"),
                    msg!("driver.no-node-at-address"),
                ))
                .remedy(msg!("driver.gpu-not-in-kfd-remedy"))
                // The kernel log says why KFD skipped it; once per report.
                .with_steps(
                    (!out.iter().any(|x| x.id == GPU_NOT_IN_KFD.id)).then(|| read_log("kfd")),
                ),
        );
    }
}

fn node_evidence(d: &DeviceFacts) -> Evidence {
    match &d.node {
        None => Evidence::absent(format!("device:{}", d.path)),
        Some(n) => {
            let mode = format!("{:04o}", n.mode);
            let (uid, gid) = (n.uid, n.gid);
            let group = d
                .group_name
                .clone()
                .unwrap_or_else(|| msg!("driver.no-group-name"));
            Evidence::new(
                format!("device:{}", d.path),
                match &n.acl {
                    None => msg!("driver.device-node", mode, uid, gid, group),
                    Some(acl) => msg!(
                        "driver.device-node-acl",
                        mode,
                        uid,
                        gid,
                        group,
                        acl = acl.to_text().join(",")
                    ),
                },
            )
        }
    }
}

/// The remedy of a node an ACL refuses whatever group the user joins (a named entry for the
/// user without read-write, or a mask without it): the entry is what to change, so no
/// `usermod` is offered.
fn acl_refusal(d: &DeviceFacts, f: &Facts) -> Option<String> {
    let node = d.node.as_ref()?;
    let acl = node.acl.as_ref()?;
    let id = f.identity.as_ref()?;
    (!group_would_grant(node, id)).then(|| {
        msg!(
            "driver.acl-denied-remedy",
            path = d.path.clone(),
            acl = acl.to_text().join(",")
        )
    })
}

/// Nodes this user opens only through a `user:<uid>:` ACL entry: systemd-logind's grant to
/// the active session of a local seat, which other sessions of the same user do not have.
fn seat_acl(f: &Facts, out: &mut Vec<Finding>) {
    let Some(id) = f.identity.as_ref() else {
        return;
    };
    let through_acl: Vec<&DeviceFacts> = f
        .devices
        .iter()
        .filter(|d| {
            d.node
                .as_ref()
                .is_some_and(|n| decide(n, id) == (Class::NamedUser, true))
        })
        .collect();
    let Some(first) = through_acl.first() else {
        return;
    };
    let group = first
        .group_name
        .clone()
        .unwrap_or_else(|| first.node.as_ref().map(|n| n.gid).unwrap_or(0).to_string());
    let nodes = through_acl
        .iter()
        .map(|d| d.path.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    out.push(
        DEVICE_ACCESS_SEAT_ACL
            .finding(msg!(
                "driver.seat-acl",
                nodes,
                uid = id.uid,
                group = group.clone()
            ))
            .with_all(through_acl.iter().map(|d| node_evidence(d)))
            .with(identity_evidence(f))
            .remedy(msg!("driver.seat-acl-remedy", group))
            .with_steps(join_step(first)),
    );
}

/// Reading the kernel log for `word`: `sudo`, since `kernel.dmesg_restrict=1` (the default on
/// Debian, Ubuntu and Fedora kernels) keeps it from other users.
fn read_log(word: &str) -> RemedyStep {
    RemedyStep::run(
        Action::ReadLog,
        "kernel log",
        format!("sudo dmesg | grep -i {word}"),
        msg!("driver.step-read-log", word),
    )
}

/// Joining the group that owns a device node, when it has a name.
fn join_step(d: &DeviceFacts) -> Option<RemedyStep> {
    let group = d.group_name.as_ref().filter(|_| d.node.is_some())?;
    // A group name from /etc/group is not trusted into a shell command unless it is a plain
    // name (useradd's own rule).
    let plain = group
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    plain.then(|| {
        RemedyStep::run(
            Action::JoinGroup,
            group.clone(),
            format!("sudo usermod -aG {group} \"$USER\""),
            msg!("driver.step-join-group", group),
        )
    })
}

/// Where the persistent form of `kernel.numa_balancing=0` is written (sysctl.d(5)).
const NUMA_SYSCTL_FILE: &str = "/etc/sysctl.d/90-numa-balancing.conf";

/// What makes amdgpu drive a GCN 2 (Sea Islands) GPU instead of radeon.
const CIK_PARAMETERS: [&str; 2] = ["radeon.cik_support=0", "amdgpu.cik_support=1"];

/// DKMS's signing certificate (dkms README, "Module signing" and "Secure Boot": generated on
/// first use "and placed in /var/lib/dkms"; the dkms packages of Debian, Fedora, openSUSE and
/// Arch keep that default — dkms-project/dkms#429 shows it on Debian bookworm and Fedora 40,
/// CachyOS/wiki#482 on Arch).
const DKMS_MOK: &str = "/var/lib/dkms/mok.pub";
/// Ubuntu's dkms signs with the key `update-secureboot-policy --new-key` makes instead
/// (dkms-project/dkms#104, Ubuntu's sign_build with `update-secureboot-policy --new-key` and
/// kmodsign; wiki.ubuntu.com/UEFI/SecureBoot/DKMS; the dkms README names the shim-signed key as
/// the Debian/Ubuntu alternative).
const UBUNTU_MOK: &str = "/var/lib/shim-signed/mok/MOK.der";

/// The families whose variants a remedy gives (the machine's, else all). The driver's remedies
/// act on the kernel, its command line and its modules: in a container that is the host's, whose
/// family the container's os-release does not tell (a Fedora host runs Ubuntu images), so there
/// the kernel's own release decides, and when it does not, every family's variant is given.
fn families(f: &Facts) -> Vec<Distro> {
    if !f.in_container() {
        return crate::facts::os_release::families(f.os_release.as_ref());
    }
    let host = f
        .module
        .as_ref()
        .and_then(|m| m.kernel_release.as_deref())
        .and_then(crate::facts::os_release::kernel_family);
    host.map_or_else(|| Distro::ALL.to_vec(), |d| vec![d])
}

/// A path from the machine that may go into a shell command as it is: absolute, no `..`, and
/// only characters the shell takes literally (the same caution as `join_step`'s group names).
fn plain_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.split('/').any(|c| c == "..")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.' | '+'))
}

/// Adding (`add`) or removing kernel command-line `words` for good, per family. `words` are
/// the probe's own constants or words it matched exactly; the caller adds the reboot.
pub(crate) fn kernel_parameter_steps(f: &Facts, add: bool, words: &[&str]) -> Vec<RemedyStep> {
    let object = words.join(" ");
    // One shell word: quoted when it holds several parameters.
    let arg = if words.len() > 1 {
        format!("\"{object}\"")
    } else {
        object.clone()
    };
    let mut steps = Vec::new();
    for d in families(f) {
        let edit = || {
            RemedyStep::run(
                Action::KernelParameter,
                object.clone(),
                "sudoedit /etc/default/grub",
                if add {
                    msg!("driver.step-grub-add", words = object)
                } else {
                    msg!("driver.step-grub-remove", words = object)
                },
            )
            .on(d)
        };
        let regenerate = |command: &str| {
            RemedyStep::run(
                Action::KernelParameter,
                object.clone(),
                command,
                msg!("driver.step-grub-regenerate"),
            )
            .on(d)
        };
        match d {
            // Debian and Ubuntu: GRUB reads /etc/default/grub; `update-grub` regenerates
            // /boot/grub/grub.cfg from it (wiki.debian.org/Grub, "Configuring GRUB v2";
            // help.ubuntu.com/community/Grub2/Setup).
            Distro::Debian => steps.extend([edit(), regenerate("sudo update-grub")]),
            // Fedora and RHEL boot BootLoaderSpec entries: `grubby` changes every installed
            // kernel's entry and the default for kernels installed later (Fedora docs, "Working
            // with the GRUB 2 Boot Loader"; RHEL 9 "Managing, monitoring and updating the
            // kernel", "Configuring kernel command-line parameters").
            Distro::Fedora => {
                let (option, text) = if add {
                    ("args", msg!("driver.step-grubby-add", words = object))
                } else {
                    (
                        "remove-args",
                        msg!("driver.step-grubby-remove", words = object),
                    )
                };
                steps.push(
                    RemedyStep::run(
                        Action::KernelParameter,
                        object.clone(),
                        format!("sudo grubby --update-kernel=ALL --{option}={arg}"),
                        text,
                    )
                    .on(d),
                );
            }
            // SUSE: GRUB 2's configuration lives under /boot/grub2 (SLES 15 Administration
            // Guide, "The boot loader GRUB 2": edit /etc/default/grub, then
            // `grub2-mkconfig -o /boot/grub2/grub.cfg`).
            Distro::Suse => steps.extend([
                edit(),
                regenerate("sudo grub2-mkconfig -o /boot/grub2/grub.cfg"),
            ]),
            // Arch: wiki.archlinux.org "Kernel parameters" (GRUB) and "GRUB" ("Generate the
            // main configuration file": `grub-mkconfig -o /boot/grub/grub.cfg`).
            Distro::Arch => steps.extend([
                edit(),
                regenerate("sudo grub-mkconfig -o /boot/grub/grub.cfg"),
            ]),
        }
    }
    steps
}

/// Rebooting into what the steps before changed (`object`).
pub(crate) fn reboot(object: &str) -> RemedyStep {
    RemedyStep::run(
        Action::Reboot,
        object,
        "sudo reboot",
        msg!("driver.step-reboot"),
    )
}

/// Undoing amdgpu's blacklisting: each modprobe.d file's line, each kernel parameter, then the
/// initramfs (which carries a copy of modprobe.d into early boot) and a reboot.
fn unblacklist_steps(f: &Facts, words: &[&str]) -> Vec<RemedyStep> {
    let mut steps = Vec::new();
    let mut paths: Vec<&str> = f
        .platform
        .blacklists
        .iter()
        .map(|b| b.path.as_str())
        .collect();
    paths.dedup();
    for path in &paths {
        let text = msg!("driver.step-unblacklist-file", path);
        steps.push(if plain_path(path) {
            RemedyStep::run(Action::Unblacklist, *path, format!("sudoedit {path}"), text)
        } else {
            RemedyStep::say(Action::Unblacklist, *path, text)
        });
    }
    for word in words {
        // Only a parameter that names amdgpu alone is removed whole: another module in its
        // list stays blacklisted (text only).
        if matches!(
            *word,
            "modprobe.blacklist=amdgpu" | "module_blacklist=amdgpu"
        ) {
            steps.extend(kernel_parameter_steps(f, false, &[word]));
        } else {
            steps.push(RemedyStep::say(
                Action::KernelParameter,
                *word,
                msg!("driver.step-unblacklist-parameter", word),
            ));
        }
    }
    if !paths.is_empty() {
        for d in families(f) {
            // update-initramfs(8) on Debian/Ubuntu; dracut(8) on Fedora/RHEL and SUSE (SLES 15
            // Administration Guide, "Generating an initramfs": `dracut --force`); mkinitcpio(8)
            // on Arch (`-P`: every preset, wiki.archlinux.org "Mkinitcpio").
            let command = match d {
                Distro::Debian => "sudo update-initramfs -u",
                Distro::Fedora | Distro::Suse => "sudo dracut --force",
                Distro::Arch => "sudo mkinitcpio -P",
            };
            steps.push(
                RemedyStep::run(
                    Action::RebuildInitramfs,
                    "initramfs",
                    command,
                    msg!("driver.step-initramfs"),
                )
                .on(d),
            );
        }
    }
    if !steps.is_empty() {
        steps.push(reboot("amdgpu"));
    }
    steps
}

/// Building amdgpu-dkms for the running kernel: its headers (per family), the build, loading it.
fn dkms_steps(f: &Facts) -> Vec<RemedyStep> {
    let mut steps: Vec<RemedyStep> = families(f)
        .into_iter()
        .map(|d| {
            // The package with the running kernel's build tree: linux-headers-<release>
            // (Debian, Ubuntu), kernel-devel-<release> (Fedora, RHEL), kernel-default-devel
            // (SUSE's default flavour), linux-headers for Arch's stock `linux` kernel.
            let command = match d {
                Distro::Debian => "sudo apt install linux-headers-\"$(uname -r)\"",
                Distro::Fedora => "sudo dnf install kernel-devel-\"$(uname -r)\"",
                Distro::Suse => "sudo zypper install kernel-default-devel",
                Distro::Arch => "sudo pacman -S --needed linux-headers",
            };
            let text = if d == Distro::Arch {
                msg!("driver.step-kernel-headers-arch")
            } else {
                msg!("driver.step-kernel-headers")
            };
            RemedyStep::run(Action::Install, "kernel headers", command, text).on(d)
        })
        .collect();
    steps.push(RemedyStep::run(
        Action::BuildModule,
        "amdgpu-dkms",
        "sudo dkms autoinstall -k \"$(uname -r)\"",
        msg!("driver.step-dkms-build"),
    ));
    steps.push(RemedyStep::run(
        Action::LoadModule,
        "amdgpu",
        "sudo modprobe amdgpu",
        msg!("driver.step-load-amdgpu"),
    ));
    steps
}

/// Enrolling DKMS's signing certificate as a Machine Owner Key, then the reboot in which
/// shim's MOK manager asks for the password. Ubuntu keeps the key elsewhere.
fn mok_steps(f: &Facts) -> Vec<RemedyStep> {
    let ubuntu = f
        .os_release
        .as_ref()
        .map(|o| o.id.as_deref() == Some("ubuntu") || o.id_like.iter().any(|w| w == "ubuntu"));
    let (key, text) = match ubuntu {
        Some(true) => (UBUNTU_MOK, msg!("driver.step-enroll-mok")),
        Some(false) => (DKMS_MOK, msg!("driver.step-enroll-mok")),
        None => (
            DKMS_MOK,
            msg!("driver.step-enroll-mok-or-ubuntu", ubuntu = UBUNTU_MOK),
        ),
    };
    vec![
        RemedyStep::run(
            Action::EnrollKey,
            key,
            format!("sudo mokutil --import {key}"),
            text,
        ),
        RemedyStep::run(
            Action::Reboot,
            key,
            "sudo reboot",
            msg!("driver.step-reboot-mok"),
        ),
    ]
}

/// The gid the kernel shows for a group a user namespace does not map (`overflowgid`, 65534 unless
/// an administrator changed `/proc/sys/kernel/overflowgid`; include/linux/highuid.h).
const OVERFLOW_GID: u32 = 65534;

/// A node whose group this container's user namespace does not map: it shows as the overflow gid
/// (`nobody`/`nogroup`), and no group inside the container is that host group, so joining
/// `nobody` there gives nothing (89luca89/distrobox#1230). Only the host user's own groups,
/// carried in by the engine (`--group-add keep-groups`), can open it.
fn unmapped_group(f: &Facts, d: &DeviceFacts) -> bool {
    f.container.user_namespace == Some(true)
        && d.node.as_ref().is_some_and(|n| n.gid == OVERFLOW_GID)
}

/// What to do about a node the user cannot open: join its group; when the group is not mapped
/// into this user namespace, the host-side fix; when an ACL refuses whatever group the user
/// joins, the ACL.
fn access_remedy(f: &Facts, d: &DeviceFacts) -> (String, Option<RemedyStep>) {
    if unmapped_group(f, d) {
        let shown = match &d.group_name {
            Some(name) => format!("{name}, {OVERFLOW_GID}"),
            None => OVERFLOW_GID.to_string(),
        };
        (
            msg!("driver.join-unmapped-remedy", path = d.path, shown),
            None,
        )
    } else if let Some(refusal) = acl_refusal(d, f) {
        (refusal, None)
    } else {
        (join_remedy(d), join_step(d))
    }
}

fn join_remedy(d: &DeviceFacts) -> String {
    match (&d.node, &d.group_name) {
        (Some(_), Some(group)) => msg!("driver.join-group-remedy", group),
        (Some(n), None) => msg!("driver.join-gid-remedy", gid = n.gid),
        (None, _) => String::new(),
    }
}

fn identity_evidence(f: &Facts) -> Evidence {
    match &f.identity {
        Some(id) => Evidence::new(
            msg!("driver.identity"),
            msg!(
                "driver.identity-value",
                uid = id.uid,
                groups = format!("{:?}", id.groups)
            ),
        ),
        None => Evidence::absent(msg!("driver.identity")),
    }
}

/// Inside a Flatpak sandbox `/dev/kfd` exists only when the app's permissions bind it:
/// `devices=all`, or `devices=dri` from Flatpak 1.17.8 on (flatpak/flatpak#5383, #6648). The
/// remedy is a command for the host (a sentence, not a step: the probe runs inside the sandbox),
/// naming the app when its id is plain.
fn flatpak_remedy(finding: Finding, info: &crate::facts::container::FlatpakInfo) -> Finding {
    let app = info
        .app
        .as_deref()
        .filter(|a| crate::checks::runtime::plain_value(a))
        .unwrap_or("<app-id>");
    let version = info.version.as_deref().unwrap_or("?");
    let devices = if info.devices.is_empty() {
        msg!("driver.flatpak-no-devices")
    } else {
        info.devices.join(";")
    };
    let dri = info.devices.iter().any(|d| d == "dri");
    let text = match info.dri_includes_kfd() {
        Some(false) if dri => msg!("driver.kfd-missing-flatpak-old", version, app),
        _ => msg!("driver.kfd-missing-flatpak", version, devices, app),
    };
    finding
        .with(Evidence::new(
            crate::facts::platform::FLATPAK_INFO,
            format!("flatpak-version={version}; devices={devices}"),
        ))
        .remedy(text)
}

fn devices(f: &Facts, out: &mut Vec<Finding>) {
    let Some((kfd, renders)) = f.devices.split_first() else {
        return;
    };
    debug_assert_eq!(kfd.path, KFD_DEVICE);
    let mut failed = false;
    match access(kfd.node.as_ref(), f.identity.as_ref()) {
        Access::Missing => {
            failed = true;
            let container = f.in_container();
            let flatpak = f.container.flatpak.as_ref();
            let finding = KFD_DEVICE_MISSING
                .finding(msg!("driver.kfd-device-missing"))
                .with(node_evidence(kfd));
            out.push(match flatpak {
                Some(info) => flatpak_remedy(finding, info),
                None => finding.remedy(if container {
                    msg!("driver.kfd-device-missing-container-remedy")
                } else {
                    msg!("driver.kfd-device-missing-remedy")
                }),
            });
        }
        Access::Unknown => {
            out.push(IDENTITY_NOT_RECORDED.finding(msg!("driver.identity-not-recorded")));
            return;
        }
        Access::Denied => {
            failed = true;
            let (remedy, step) = access_remedy(f, kfd);
            out.push(
                KFD_PERMISSION_DENIED
                    .finding(match &kfd.group_name {
                        Some(group) => msg!("driver.kfd-permission-denied", group),
                        None => msg!("driver.kfd-permission-denied-nameless"),
                    })
                    .with(node_evidence(kfd))
                    .with(identity_evidence(f))
                    .remedy(remedy)
                    .with_steps(step),
            );
        }
        Access::Granted => {}
    }
    let missing: Vec<&DeviceFacts> = renders.iter().filter(|d| d.node.is_none()).collect();
    let denied: Vec<&DeviceFacts> = renders
        .iter()
        .filter(|d| access(d.node.as_ref(), f.identity.as_ref()) == Access::Denied)
        .collect();
    // A container given some render nodes is how orchestrators hand out a subset of GPUs.
    let container = f.in_container();
    for (rule, list) in [
        (&RENDER_NODE_MISSING, &missing),
        (&RENDER_PERMISSION_DENIED, &denied),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut finding = render_finding(rule, list, renders.len(), f);
        if kfd.node.is_none() {
            finding = finding.caused_by(&KFD_DEVICE_MISSING);
        }
        // The same missing group as /dev/kfd's: one cause, one `usermod` to give.
        if rule.id == RENDER_PERMISSION_DENIED.id
            && access(kfd.node.as_ref(), f.identity.as_ref()) == Access::Denied
            && kfd.node.as_ref().map(|n| n.gid) == list[0].node.as_ref().map(|n| n.gid)
        {
            finding = finding.caused_by(&KFD_PERMISSION_DENIED);
        }
        if container && rule.id == RENDER_NODE_MISSING.id && list.len() < renders.len() {
            finding.status = Status::Info;
            let given: Vec<&DeviceFacts> = renders.iter().filter(|d| d.node.is_some()).collect();
            finding.summary = partitions_given(f, &given, renders.len()).unwrap_or_else(|| {
                msg!(
                    "driver.render-nodes-partial",
                    given = given.len(),
                    total = renders.len()
                )
            });
        } else {
            failed = true;
        }
        out.push(finding);
    }
    if !failed && !renders.is_empty() {
        out.push(
            KFD_READY
                .finding(msg!(
                    "driver.kfd-ready",
                    count = renders.len() - missing.len()
                ))
                .with(node_evidence(kfd)),
        );
    }
    seat_acl(f, out);
}

/// On a partitioned GPU (MI300 CPX, …) render nodes are partitions, not GPUs: which physical
/// GPUs the nodes a container was given belong to. `None` when no GPU is partitioned or a node
/// cannot be placed.
fn partitions_given(f: &Facts, given: &[&DeviceFacts], total: usize) -> Option<String> {
    let inv = f.inventory.as_ref()?;
    if inv.gpus.iter().all(|g| g.nodes.len() < 2) {
        return None;
    }
    let minors: BTreeSet<u32> = given
        .iter()
        .map(|d| d.path.strip_prefix("/dev/dri/renderD")?.parse().ok())
        .collect::<Option<_>>()?;
    let minor_of = |node: u32| {
        inv.gpu_agents()
            .find(|a| a.node == node)
            .and_then(|a| a.drm_render_minor)
    };
    // The physical GPUs holding the given nodes, each with whether all its partitions came.
    let mut gpus: BTreeMap<usize, bool> = BTreeMap::new();
    for &m in &minors {
        let agent = inv.gpu_agents().find(|a| a.drm_render_minor == Some(m))?;
        let g = inv.gpus.get(agent.physical_gpu?)?;
        let whole = g
            .nodes
            .iter()
            .all(|&n| minor_of(n).is_some_and(|m| minors.contains(&m)));
        gpus.insert(g.index, whole);
    }
    let names: Vec<String> = gpus
        .keys()
        .map(|&i| inv.gpu_name(&inv.gpus[i]).to_string())
        .collect();
    Some(msg!(
        "driver.render-nodes-partial-partitions",
        given = given.len(),
        total,
        gpus = crate::i18n::list(&names),
        count = gpus.len(),
        whole = gpus.values().filter(|w| **w).count(),
        physical = inv.gpus.len()
    ))
}

fn render_finding(rule: &Rule, list: &[&DeviceFacts], total: usize, f: &Facts) -> Finding {
    let count = list.len();
    let summary = if rule.id == RENDER_PERMISSION_DENIED.id {
        msg!("driver.render-permission-denied", count, total)
    } else {
        msg!("driver.render-node-missing", count, total)
    };
    let mut finding = rule
        .finding(summary)
        .with_all(list.iter().map(|d| node_evidence(d)));
    if rule.id == RENDER_PERMISSION_DENIED.id {
        let (remedy, step) = access_remedy(f, list[0]);
        finding = finding
            .with(identity_evidence(f))
            .remedy(remedy)
            .with_steps(step);
    } else {
        finding = finding.remedy(msg!("driver.render-node-missing-remedy"));
    }
    finding
}

/// `absent`, for a file or driver that is not there.
fn absent() -> String {
    msg!("driver.absent")
}

/// A profile's name in prose (`cluster` in English).
fn profile_name(profile: Profile) -> String {
    match profile {
        Profile::Desktop => msg!("driver.profile-desktop"),
        Profile::Workstation => msg!("driver.profile-workstation"),
        Profile::Cluster => msg!("driver.profile-cluster"),
    }
}
