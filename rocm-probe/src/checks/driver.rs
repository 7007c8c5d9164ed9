//! Layer 2: amdgpu, KFD and the device nodes ROCm opens.

use crate::access::{Access, DeviceFacts, access};
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    AMDGPU_BLACKLISTED, AMDGPU_NOT_LOADED, CONTAINER, DKMS_NOT_BUILT, Evidence, Finding,
    GPU_NOT_BOUND, GPU_NOT_IN_KFD, IDENTITY_NOT_RECORDED, INPUT_MALFORMED, INPUT_UNREADABLE,
    IOMMU_NOT_PASSTHROUGH, KFD_DEVICE_MISSING, KFD_MISSING, KFD_PERMISSION_DENIED, KFD_READY,
    NO_AMD_GPU, NOMODESET, NUMA_BALANCING, OUT_OF_TREE_DRIVER, RENDER_NODE_MISSING,
    RENDER_PERMISSION_DENIED, Rule, SECURE_BOOT, Status, WSL,
};
use crate::module::{AMDGPU_MODULE, DKMS_AMDGPU, OSRELEASE};
use crate::pci::PCI_DEVICES;
use crate::platform::{
    CMDLINE, IOMMU_CLASS, NUMA_BALANCING as NUMA_BALANCING_FILE, SECURE_BOOT_VAR,
};
use crate::report::Profile;
use crate::target;
use crate::topology::TOPOLOGY_DIR;

/// Layer 2 findings; `below` are the layer-1 findings (to mark consequences).
pub fn check(f: &Facts, below: &[Finding], profile: Profile) -> Vec<Finding> {
    let no_gpu = below.iter().any(|x| x.id == NO_AMD_GPU.id);
    let mut out = Vec::new();
    let inputs: Vec<&crate::problem::Problem> = f
        .problems
        .iter()
        .filter(|p| !p.path.starts_with(PCI_DEVICES))
        .collect();
    out.extend(super::hardware::problems(
        &inputs,
        "driver or platform",
        [INPUT_UNREADABLE, INPUT_MALFORMED],
    ));
    environment(f, &mut out);
    if !f.platform.wsl_markers.is_empty() && f.kfd.is_none() {
        // WSL has neither amdgpu nor KFD by design; their absence is not a fault.
        return out;
    }
    let unbound = bindings(f, &mut out);
    let cause = if no_gpu {
        Some(&NO_AMD_GPU)
    } else if unbound {
        Some(&GPU_NOT_BOUND)
    } else {
        None
    };
    module(f, cause, &mut out);
    if f.kfd.is_none() {
        if f.module.as_ref().is_none_or(|m| m.present) {
            let mut finding = KFD_MISSING
                .finding("No KFD: ROCm cannot use any GPU")
                .with(Evidence::new(
                    TOPOLOGY_DIR,
                    f.kfd_error
                        .as_ref()
                        .map_or("absent".into(), |p| p.message.clone()),
                ))
                .remedy(
                    "Use a kernel built with CONFIG_HSA_AMD (every distribution kernel is), and \
                     look for `kfd` lines in the kernel log (dmesg | grep -i kfd).",
                );
            if no_gpu {
                finding = finding.caused_by(&NO_AMD_GPU);
            }
            out.push(finding);
        }
        return out;
    }
    not_in_kfd(f, &mut out);
    devices(f, &mut out);
    tuning(f, profile, &mut out);
    out
}

/// Platform tuning that matters on multi-GPU nodes (DESIGN §5 profiles): warnings on cluster
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
        out.push(
            IOMMU_NOT_PASSTHROUGH
                .finding_with(
                    status,
                    format!("IOMMU active without iommu=pt ({} profile)", profile.id()),
                )
                .with(Evidence::new(IOMMU_CLASS, "IOMMU units present"))
                .with(Evidence::new(
                    CMDLINE,
                    f.platform.cmdline.clone().unwrap_or_default(),
                ))
                .remedy("Add `iommu=pt` to GRUB_CMDLINE_LINUX, run `sudo update-grub` and reboot."),
        );
    }
    if f.platform.numa_balancing == Some(1) {
        out.push(
            NUMA_BALANCING
                .finding_with(
                    status,
                    format!("Automatic NUMA balancing is on ({} profile)", profile.id()),
                )
                .with(Evidence::new(NUMA_BALANCING_FILE, "1"))
                .remedy("sudo sysctl kernel.numa_balancing=0, and persist it in /etc/sysctl.d/."),
        );
    }
}

fn environment(f: &Facts, out: &mut Vec<Finding>) {
    let p = &f.platform;
    if !p.wsl_markers.is_empty() {
        out.push(
            WSL.finding("Running under WSL: ROCm goes through /dev/dxg, not KFD")
                .with_all(
                    p.wsl_markers
                        .iter()
                        .map(|(k, v)| Evidence::new(k.clone(), v.clone())),
                ),
        );
    }
    if !p.container_markers.is_empty() {
        out.push(
            CONTAINER
                .finding(
                    "Running in a container: device nodes and groups come from its launch options",
                )
                .with_all(
                    p.container_markers
                        .iter()
                        .map(|(k, v)| Evidence::new(k.clone(), v.clone())),
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
                .finding(format!("amdgpu {version} is an out-of-tree (DKMS) build"))
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
                .finding("amdgpu is blacklisted, so it never loads")
                .with_all(
                    f.platform
                        .blacklists
                        .iter()
                        .map(|b| Evidence::new(b.path.clone(), b.line.clone())),
                )
                .with_all(blacklist_words.iter().map(|w| Evidence::new(CMDLINE, *w)))
                .remedy(
                    "Delete the blacklist line (or the whole leftover file), run \
                     `sudo update-initramfs -u` (dracut -f on Fedora/RHEL) and reboot.",
                ),
        );
    }
    let nomodeset: Vec<&str> = f
        .platform
        .cmdline_words()
        .filter(|w| *w == "nomodeset" || *w == "amdgpu.modeset=0")
        .collect();
    if !nomodeset.is_empty() {
        causes.push(
            NOMODESET
                .finding("The kernel command line disables modesetting, so amdgpu refuses to load")
                .with_all(nomodeset.iter().map(|w| Evidence::new(CMDLINE, *w)))
                .remedy(
                    "Remove `nomodeset` from GRUB_CMDLINE_LINUX in /etc/default/grub, run \
                     `sudo update-grub` and reboot.",
                ),
        );
    }
    if let Some(kernel) = &m.kernel_release {
        let built = m.dkms.iter().any(|b| b.kernels.contains(kernel));
        if !m.dkms.is_empty() && !built {
            causes.push(
                DKMS_NOT_BUILT
                    .finding(format!("amdgpu-dkms has no build for the running kernel {kernel}"))
                    .with(Evidence::new(OSRELEASE, kernel.clone()))
                    .with_all(m.dkms.iter().map(|b| {
                        Evidence::new(
                            format!("{DKMS_AMDGPU}/{}", b.version),
                            if b.kernels.is_empty() {
                                "built for no kernel".to_owned()
                            } else {
                                format!("built for {}", b.kernels.join(", "))
                            },
                        )
                    }))
                    .remedy(format!(
                        "Run `sudo dkms autoinstall -k {kernel}` and read the build log it names; if \
                         the kernel is too new for this amdgpu-dkms, boot a supported kernel or \
                         remove amdgpu-dkms and use the in-tree amdgpu."
                    )),
            );
        }
    }
    if f.platform.secure_boot == Some(true) {
        causes.push(
            SECURE_BOOT
                .finding("Secure Boot is on: an unsigned amdgpu-dkms module is refused")
                .with(Evidence::new(SECURE_BOOT_VAR, "1"))
                .remedy(
                    "Sign the DKMS module with an enrolled Machine Owner Key (mokutil --import), \
                     or use the distribution's in-tree amdgpu.",
                ),
        );
    }
    let mut finding = AMDGPU_NOT_LOADED
        .finding("The amdgpu kernel module is not loaded: no GPU is driven, no /dev/kfd")
        .with(Evidence::absent(AMDGPU_MODULE))
        .remedy("sudo modprobe amdgpu, then read the kernel log (dmesg | grep -i amdgpu) for why it failed.");
    if let Some(cause) = cause {
        finding = finding.caused_by(cause);
    } else if let Some(first) = causes.iter().find(|c| c.status == Status::Fail) {
        finding.caused_by = Some(first.id);
    }
    out.extend(causes);
    out.push(finding);
}

/// AMD GPUs on the PCI bus that amdgpu does not drive. Returns whether every AMD GPU is bound
/// elsewhere (then amdgpu not being loaded is expected, not the cause).
fn bindings(f: &Facts, out: &mut Vec<Finding>) -> bool {
    let Some(pci) = &f.pci else { return false };
    let mut elsewhere = 0;
    for g in &pci.gpus {
        let path = format!("{PCI_DEVICES}/{}", g.address);
        let generation = g.device.and_then(target::gcn_generation);
        match g.driver.as_deref() {
            Some("amdgpu") => continue,
            Some("vfio-pci") => out.push(
                GPU_NOT_BOUND
                    .finding_with(
                        Status::Info,
                        format!("GPU {} is reserved for VMs (vfio-pci)", g.address),
                    )
                    .with(Evidence::new(format!("{path}/driver"), "vfio-pci")),
            ),
            None if f.module.as_ref().is_some_and(|m| !m.present) => {
                // amdgpu is not loaded at all: its own finding says why; this one follows.
                out.push(
                    GPU_NOT_BOUND
                        .finding(format!("GPU {} is not bound to any driver", g.address))
                        .with(Evidence::absent(format!("{path}/driver")))
                        .caused_by(&AMDGPU_NOT_LOADED),
                );
            }
            other => {
                let remedy = match generation {
                    Some(1) => "This is a GCN 1 (Southern Islands) GPU: KFD never supported it, so \
                                ROCm cannot use it with any driver. Use a GCN 3 (gfx8) or newer GPU."
                        .to_owned(),
                    Some(2) => "This is a GCN 2 (Sea Islands) GPU: boot with radeon.cik_support=0 \
                                amdgpu.cik_support=1 so amdgpu drives it; KFD supports only Kaveri and \
                                Hawaii of this generation, and current ROCm releases none."
                        .to_owned(),
                    _ => "Bind it to amdgpu: `sudo modprobe amdgpu`, and remove whatever claims it \
                          (a driver_override, a vfio-pci.ids= option)."
                        .to_owned(),
                };
                out.push(
                    GPU_NOT_BOUND
                        .finding(format!(
                            "GPU {} is {}",
                            g.address,
                            other.map_or("not bound to any driver".into(), |d| format!(
                                "bound to {d}, not amdgpu"
                            ))
                        ))
                        .with(Evidence::new(
                            format!("{path}/driver"),
                            other.unwrap_or("absent"),
                        ))
                        .with_all(
                            g.device.map(|d| {
                                Evidence::new(format!("{path}/device"), format!("0x{d:04x}"))
                            }),
                        )
                        .remedy(remedy),
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
        let why = match g.device.and_then(target::gcn_generation) {
            Some(1) => "GCN 1 (Southern Islands) GPUs are not supported by KFD".to_owned(),
            Some(2) => "of GCN 2 (Sea Islands), KFD supports only Kaveri and Hawaii".to_owned(),
            _ => {
                "the platform likely rejects PCIe atomics (dmesg: `PCI rejects atomics`)".to_owned()
            }
        };
        out.push(
            GPU_NOT_IN_KFD
                .finding(format!("GPU {} is driven by amdgpu but KFD skipped it: {why}", g.address))
                .with(Evidence::new(format!("{path}/driver"), "amdgpu"))
                .with_all(g.device.map(|d| Evidence::new(format!("{path}/device"), format!("0x{d:04x}"))))
                .with(Evidence::new(format!("{TOPOLOGY_DIR}/nodes"), "no node at this PCI address"))
                .remedy(
                    "Check `dmesg | grep kfd`. For atomics: move the GPU to a CPU-attached x16 slot \
                     (not a chipset slot or riser) and enable Above 4G decoding / Resizable BAR in \
                     the firmware. An unsupported family cannot be fixed by configuration.",
                ),
        );
    }
}

fn node_evidence(d: &DeviceFacts) -> Evidence {
    match &d.node {
        None => Evidence::absent(format!("device:{}", d.path)),
        Some(n) => Evidence::new(
            format!("device:{}", d.path),
            format!(
                "mode {:04o}, owner uid {}, group {} ({})",
                n.mode,
                n.uid,
                n.gid,
                d.group_name.as_deref().unwrap_or("no name in /etc/group")
            ),
        ),
    }
}

fn join_remedy(d: &DeviceFacts) -> String {
    match (&d.node, &d.group_name) {
        (Some(_), Some(name)) => format!(
            "sudo usermod -aG {name} $USER, then log out and back in (group membership is read at login)."
        ),
        (Some(n), None) => format!(
            "Group {} has no name here (a host gid inside a container): start the container with \
             --group-add {}.",
            n.gid, n.gid
        ),
        (None, _) => String::new(),
    }
}

fn identity_evidence(f: &Facts) -> Evidence {
    match &f.identity {
        Some(id) => Evidence::new(
            "identity",
            format!("uid {}, groups {:?}", id.uid, id.groups),
        ),
        None => Evidence::absent("identity"),
    }
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
            let container = !f.platform.container_markers.is_empty();
            out.push(
                KFD_DEVICE_MISSING
                    .finding("KFD is in sysfs but /dev/kfd does not exist")
                    .with(node_evidence(kfd))
                    .remedy(if container {
                        "Start the container with --device=/dev/kfd --device=/dev/dri (docker/podman), \
                         or --bind /dev/kfd,/dev/dri (apptainer)."
                    } else {
                        "udev did not create /dev/kfd: check that systemd-udevd runs and look for kfd \
                         in the kernel log."
                    }),
            );
        }
        Access::Unknown => {
            out.push(
                IDENTITY_NOT_RECORDED
                    .finding("Identity not recorded in this fixture: device access not checked"),
            );
            return;
        }
        Access::Denied => {
            failed = true;
            out.push(
                KFD_PERMISSION_DENIED
                    .finding(format!(
                        "This user cannot open /dev/kfd read-write (group {})",
                        kfd.group_name.as_deref().unwrap_or("without a name")
                    ))
                    .with(node_evidence(kfd))
                    .with(identity_evidence(f))
                    .remedy(join_remedy(kfd)),
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
    let container = !f.platform.container_markers.is_empty();
    for (rule, list, what) in [
        (&RENDER_NODE_MISSING, &missing, "do not exist"),
        (&RENDER_PERMISSION_DENIED, &denied, "are not accessible"),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut finding = render_finding(rule, list, what, renders.len(), f);
        if kfd.node.is_none() {
            finding = finding.caused_by(&KFD_DEVICE_MISSING);
        }
        if container && rule.id == RENDER_NODE_MISSING.id && list.len() < renders.len() {
            finding.status = Status::Info;
            finding.summary = format!(
                "This container was given {} of {} GPUs' render nodes: ROCm sees only those \
                 (intended when GPUs are handed out per container)",
                renders.len() - list.len(),
                renders.len()
            );
        } else {
            failed = true;
        }
        out.push(finding);
    }
    if !failed && !renders.is_empty() {
        out.push(
            KFD_READY
                .finding(format!(
                    "amdgpu and KFD are up; /dev/kfd and {} render node(s) are open to this user",
                    renders.len() - missing.len()
                ))
                .with(node_evidence(kfd)),
        );
    }
}

fn render_finding(
    rule: &Rule,
    list: &[&DeviceFacts],
    what: &str,
    total: usize,
    f: &Facts,
) -> Finding {
    let mut finding = rule
        .finding(format!(
            "{} of {total} GPU render node(s) {what}; libhsakmt skips those GPUs",
            list.len()
        ))
        .with_all(list.iter().map(|d| node_evidence(d)));
    if rule.id == RENDER_PERMISSION_DENIED.id {
        finding = finding
            .with(identity_evidence(f))
            .remedy(join_remedy(list[0]));
    } else {
        finding = finding.remedy(
            "Pass /dev/dri into the container (--device=/dev/dri), or check udev for the missing nodes.",
        );
    }
    finding
}
