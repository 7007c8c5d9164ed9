//! Layer 1: is there an AMD GPU, and is what KFD says about it sound?

pub mod platform;
pub mod rules;
pub mod telemetry;

use std::collections::BTreeMap;

use crate::facts::agent::{AgentFacts, Inventory, PhysicalGpu};
use crate::facts::drm::{DRM_DIR, RenderNode, gts};

use crate::facts::Facts;
use crate::facts::pci::{PCI_DEVICES, VENDOR_AMD};
use crate::facts::topology::TOPOLOGY_DIR;
use crate::finding::{
    APU_CARVEOUT_UNSEEN, APU_SMALL_MEMORY, Action, Evidence, Finding, GPUS_FOUND, LARGE_BAR_OFF,
    NO_AMD_GPU, PARTITION_MISSING, PARTITION_MODE_MISMATCH, PCI_NOT_CAPTURED, PCIE_LINK_DEGRADED,
    RAS_CORRECTABLE, RAS_UNCORRECTABLE, RETIRED_PAGES, RUNTIME_SUSPENDED, RemedyStep, Rule,
    SYSFS_MALFORMED, SYSFS_UNREADABLE, Status, Subject, WSL_PARAVIRTUAL,
};
use crate::source::problem::{Problem, ProblemKind};
use crate::{i18n, msg};

/// Layer 1 findings.
pub fn check(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let kfd_gpus = f.inventory.as_ref().map_or(0, |i| i.gpu_agents().count());
    let pci_gpus = f.pci.as_ref().map(|p| p.gpus.len());

    if kfd_gpus > 0 {
        out.push(gpus_found(f));
    } else if !f.platform.wsl_markers.is_empty() {
        out.push(
            WSL_PARAVIRTUAL
                .finding(msg!("hardware.wsl-paravirtual"))
                .with_all(f.platform.wsl_markers.iter().map(super::marker_evidence)),
        );
    } else {
        match (&f.pci, pci_gpus) {
            (Some(pci), Some(0)) => {
                let kfd = f
                    .kfd_error
                    .as_ref()
                    .map_or_else(|| msg!("hardware.no-gpu-node"), |p| p.message.to_string());
                out.push(
                    NO_AMD_GPU
                        .finding(msg!("hardware.no-amd-gpu"))
                        .with(Evidence::new(
                            PCI_DEVICES,
                            msg!(
                                "hardware.no-amd-gpu-functions",
                                functions = pci.functions,
                                vendor = format!("0x{VENDOR_AMD:04x}")
                            ),
                        ))
                        .with(Evidence::new(TOPOLOGY_DIR, kfd))
                        .remedy(msg!("hardware.no-amd-gpu-remedy")),
                );
            }
            (Some(pci), Some(n)) => out.push(
                GPUS_FOUND
                    .finding(msg!("hardware.gpus-not-in-kfd", count = n))
                    .with_all(pci.gpus.iter().map(|g| {
                        Evidence::new(
                            format!("{PCI_DEVICES}/{}", g.address),
                            msg!(
                                "hardware.pci-device",
                                device = format!("0x{:04x}", g.device.unwrap_or_default())
                            ),
                        )
                    })),
            ),
            _ => {}
        }
    }
    if f.pci.is_none() {
        out.push(PCI_NOT_CAPTURED.finding(msg!("hardware.pci-not-captured")));
    }
    out.extend(platform::bars_unassigned(f));
    // The inventory's problems include the topology's and the drm/amdgpu.ids ones.
    let mut sysfs: Vec<&Problem> = f.inventory.iter().flat_map(|i| &i.problems).collect();
    sysfs.extend(
        f.problems
            .system
            .iter()
            .filter(|p| p.path.starts_with(PCI_DEVICES)),
    );
    out.extend(problems(
        &sysfs,
        "sysfs",
        [SYSFS_UNREADABLE, SYSFS_MALFORMED],
    ));
    if let Some(inv) = &f.inventory {
        out.extend(partition_missing(inv, f.kfd.as_ref()));
        if let Some(kfd) = &f.kfd {
            out.extend(devices(inv, kfd));
        }
        out.extend(platform::memory_capped(f, inv));
        out.extend(telemetry::check(f, inv));
    }
    out
}

/// Per physical GPU, what its drm device says: link, BAR, APU memory, RAS, runtime PM,
/// partition modes. The first node of a GPU carries the PCI function's files.
fn devices(inv: &Inventory, kfd: &AgentFacts) -> Vec<Finding> {
    let mut all = Vec::new();
    for g in &inv.gpus {
        let mut out = Vec::new();
        gpu_device(inv, kfd, g, &mut out);
        // Each of these is about this GPU alone: layer 9 judges the others without it.
        all.extend(
            out.into_iter()
                .map(|f| f.about(Subject::gpu(g.index, g.pci_address.clone()))),
        );
    }
    all.extend(partition_modes(inv, kfd));
    all
}

/// One GPU's device checks: link, BAR, APU memory, RAS.
fn gpu_device(inv: &Inventory, kfd: &AgentFacts, g: &PhysicalGpu, out: &mut Vec<Finding>) {
    let Some(agent) = inv.agents.iter().find(|a| a.node == g.nodes[0]) else {
        return;
    };
    let Some(drm) = agent
        .drm_render_minor
        .and_then(|m| kfd.render_nodes.get(&m))
    else {
        return;
    };
    let dev = format!("{DRM_DIR}/renderD{}/device", drm.minor);
    let name = inv.gpu_name(g).to_string();
    // What the steps act on: the GPU's PCI address, its stable identity.
    let object = g
        .pci_address
        .clone()
        .unwrap_or_else(|| format!("GPU {}", g.index));
    let integrated = agent.integrated == Some(true);
    if drm.runtime_status.as_deref() == Some("suspended") && !integrated {
        out.push(
            RUNTIME_SUSPENDED
                .finding(msg!("hardware.runtime-suspended", gpu = name))
                .with(Evidence::new(
                    format!("{dev}/power/runtime_status"),
                    "suspended",
                )),
        );
    }
    out.extend(link(&name, &object, &dev, drm));
    if let (false, Some(vram), Some(vis)) = (integrated, drm.vram_total, drm.vis_vram_total) {
        if vis < vram {
            out.push(
                LARGE_BAR_OFF
                    .finding(msg!(
                        "hardware.large-bar-off",
                        gpu = name,
                        visible = vis >> 20,
                        vram = vram >> 20
                    ))
                    .with(Evidence::new(
                        format!("{dev}/mem_info_vram_total"),
                        vram.to_string(),
                    ))
                    .with(Evidence::new(
                        format!("{dev}/mem_info_vis_vram_total"),
                        vis.to_string(),
                    ))
                    .remedy(msg!("hardware.large-bar-off-remedy"))
                    // A firmware setting: no command reaches it.
                    .step(RemedyStep::say(
                        Action::FirmwareSetting,
                        &object,
                        msg!("hardware.step-large-bar"),
                    )),
            );
        }
    }
    if let (true, Some(kfd_mem), Some(gtt)) = (integrated, agent.memory_bytes, drm.gtt_total) {
        if kfd_mem.saturating_mul(2) < gtt && drm.vram_total.is_some_and(|v| kfd_mem <= v) {
            out.push(
                APU_SMALL_MEMORY
                    .finding(msg!(
                        "hardware.apu-small-memory",
                        gpu = name,
                        seen = kfd_mem >> 20,
                        usable = gtt >> 20
                    ))
                    .with(Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes/{}/mem_banks", agent.node),
                        kfd_mem.to_string(),
                    ))
                    .with_all(drm.vram_total.map(|v| {
                        Evidence::new(format!("{dev}/mem_info_vram_total"), v.to_string())
                    }))
                    .with(Evidence::new(
                        format!("{dev}/mem_info_gtt_total"),
                        gtt.to_string(),
                    ))
                    .remedy(msg!("hardware.apu-small-memory-remedy"))
                    .step(RemedyStep::say(
                        Action::FirmwareSetting,
                        &object,
                        msg!("hardware.step-uma-size"),
                    )),
            );
        }
    }
    // The opposite case: a large carve-out KFD does not hand to ROCm. Kernels before 6.16.9 give
    // an APU's KFD node its GTT size whatever the carve-out (ROCm/ROCm#5444: 15.5 GiB of a
    // 96 GiB carve-out), so memory set aside for the GPU is lost to ROCm and to the CPU alike.
    if let (true, Some(kfd_mem), Some(vram)) = (integrated, agent.memory_bytes, drm.vram_total) {
        if carveout_unseen(kfd_mem, vram) {
            out.push(
                APU_CARVEOUT_UNSEEN
                    .finding(msg!(
                        "hardware.apu-carveout-unseen",
                        gpu = name,
                        seen = kfd_mem >> 20,
                        carveout = vram >> 20
                    ))
                    .with(Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes/{}/mem_banks", agent.node),
                        kfd_mem.to_string(),
                    ))
                    .with(Evidence::new(
                        format!("{dev}/mem_info_vram_total"),
                        vram.to_string(),
                    ))
                    .with_all(
                        drm.gtt_total.map(|g| {
                            Evidence::new(format!("{dev}/mem_info_gtt_total"), g.to_string())
                        }),
                    )
                    .remedy(msg!("hardware.apu-carveout-unseen-remedy"))
                    .step(RemedyStep::say(
                        Action::FirmwareSetting,
                        &object,
                        msg!("hardware.step-uma-minimum"),
                    )),
            );
        }
    }
    out.extend(ras(&name, &object, &dev, drm));
}

/// Whether KFD gives an integrated GPU clearly less than its carve-out (`mem_info_vram_total`):
/// under three quarters of it, well below what any kernel that reports the carve-out shows.
pub(crate) fn carveout_unseen(kfd_bytes: u64, carveout_bytes: u64) -> bool {
    kfd_bytes.saturating_mul(4) < carveout_bytes.saturating_mul(3)
}

/// A physical GPU's partition modes, as its drm device gives them.
struct GpuModes<'a> {
    gpu: &'a PhysicalGpu,
    /// `current_compute_partition` and the drm device directory it was read in.
    compute: Option<(String, String)>,
    /// `current_memory_partition` and the drm device directory it was read in.
    memory: Option<(String, String)>,
}

/// Each physical GPU's partition modes. In a partitioned mode only the PCI function (the first
/// partition) has `current_compute_partition` / `current_memory_partition`; the other
/// partitions' render nodes are platform devices without them, so each GPU's modes are the
/// first ones any of its partitions gives, and a partition without the files adds nothing.
fn gpu_modes<'a>(inv: &'a Inventory, kfd: Option<&AgentFacts>) -> Vec<GpuModes<'a>> {
    inv.gpus
        .iter()
        .map(|gpu| {
            let drms: Vec<&RenderNode> = gpu
                .nodes
                .iter()
                .filter_map(|n| inv.agents.iter().find(|a| a.node == *n))
                .filter_map(|a| a.drm_render_minor)
                .filter_map(|m| kfd?.render_nodes.get(&m))
                .collect();
            let first = |pick: fn(&RenderNode) -> Option<&String>| {
                drms.iter().find_map(|d| {
                    pick(d).map(|v| (v.clone(), format!("{DRM_DIR}/renderD{}/device", d.minor)))
                })
            };
            GpuModes {
                gpu,
                compute: first(|d| d.compute_partition.as_ref()),
                memory: first(|d| d.memory_partition.as_ref()),
            }
        })
        .collect()
}

/// GPUs by the mode `pick` gives them (GPUs without one left out).
fn by_mode<'g, 'a>(
    gpus: &[&'g GpuModes<'a>],
    pick: impl for<'m> Fn(&'m GpuModes) -> Option<&'m (String, String)>,
) -> BTreeMap<String, Vec<&'g GpuModes<'a>>> {
    let mut modes: BTreeMap<String, Vec<&GpuModes>> = BTreeMap::new();
    for m in gpus {
        if let Some((mode, _)) = pick(m) {
            modes.entry(mode.clone()).or_default().push(m);
        }
    }
    modes
}

/// "2 × CPX", one per mode.
fn mode_counts(modes: &BTreeMap<String, Vec<&GpuModes>>) -> Vec<String> {
    modes
        .iter()
        .map(|(mode, gpus)| msg!("hardware.partition-mode-count", count = gpus.len(), mode))
        .collect()
}

/// GPUs of one model in different partition modes. Different compute modes are a
/// heterogeneous node, a configuration AMD documents (the GPU Operator's `mixed` resource
/// naming strategy exists for it): information saying which GPUs run which mode. A memory
/// (NPS) mode is set for every GPU of a hive at once (`amd-smi set --memory-partition`), so
/// GPUs of one model that differ in it are a warning. GPUs whose modes are not known are left
/// out.
fn partition_modes(inv: &Inventory, kfd: &AgentFacts) -> Vec<Finding> {
    let all = gpu_modes(inv, Some(kfd));
    let mut by_model: BTreeMap<Option<u32>, Vec<&GpuModes>> = BTreeMap::new();
    for m in &all {
        by_model.entry(m.gpu.device_id).or_default().push(m);
    }
    let mut out = Vec::new();
    for gpus in by_model.values() {
        let compute = by_mode(gpus, |m| m.compute.as_ref());
        if compute.len() > 1 {
            let modes = mode_counts(&compute);
            out.push(
                PARTITION_MODE_MISMATCH
                    .finding_with(
                        Status::Info,
                        msg!(
                            "hardware.partition-compute-mixed",
                            modes = i18n::list(&modes)
                        ),
                    )
                    .with_all(compute.iter().flat_map(|(mode, gpus)| {
                        gpus.iter().map(move |m| compute_evidence(inv, m, mode))
                    }))
                    .remedy(msg!("hardware.partition-compute-mixed-remedy")),
            );
        }
        let memory = by_mode(gpus, |m| m.memory.as_ref());
        if memory.len() > 1 {
            let modes = mode_counts(&memory);
            out.push(
                PARTITION_MODE_MISMATCH
                    .finding(msg!(
                        "hardware.partition-memory-mixed",
                        modes = i18n::list(&modes)
                    ))
                    .with_all(memory.iter().flat_map(|(mode, gpus)| {
                        gpus.iter().filter_map(move |m| {
                            let (_, dev) = m.memory.as_ref()?;
                            Some(Evidence::new(
                                format!("{dev}/current_memory_partition"),
                                msg!(
                                    "hardware.partition-memory-gpu",
                                    gpu = inv.gpu_name(m.gpu).to_string(),
                                    mode = *mode
                                ),
                            ))
                        })
                    }))
                    .remedy(msg!("hardware.partition-memory-mixed-remedy")),
            );
        }
    }
    out
}

/// One GPU of a heterogeneous node: its compute mode, and how many devices of what size it is.
fn compute_evidence(inv: &Inventory, m: &GpuModes, mode: &str) -> Evidence {
    let dev = m.compute.as_ref().map_or("", |(_, dev)| dev.as_str());
    let gpu = inv.gpu_name(m.gpu).to_string();
    let partitions = m.gpu.nodes.len();
    // The partitions of one mode are equal; the first one's compute units stand for each.
    let cus = m
        .gpu
        .nodes
        .first()
        .and_then(|n| inv.agents.iter().find(|a| a.node == *n))
        .and_then(|a| a.compute_units);
    let value = match cus {
        Some(cus) => msg!("hardware.partition-compute-gpu", gpu, mode, partitions, cus),
        None => msg!(
            "hardware.partition-compute-gpu-no-cus",
            gpu,
            mode,
            partitions
        ),
    };
    Evidence::new(format!("{dev}/current_compute_partition"), value)
}

fn link(name: &str, object: &str, dev: &str, drm: &RenderNode) -> Option<Finding> {
    let (cur_w, max_w) = (drm.current_link_width?, drm.max_link_width?);
    let speeds = drm
        .current_link_speed
        .as_deref()
        .and_then(gts)
        .zip(drm.max_link_speed.as_deref().and_then(gts));
    let evidence = [
        ("current_link_width", cur_w.to_string()),
        ("max_link_width", max_w.to_string()),
        (
            "current_link_speed",
            drm.current_link_speed.clone().unwrap_or_default(),
        ),
        (
            "max_link_speed",
            drm.max_link_speed.clone().unwrap_or_default(),
        ),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(k, v)| Evidence::new(format!("{dev}/{k}"), v));
    if cur_w < max_w {
        return Some(
            PCIE_LINK_DEGRADED
                .finding(msg!(
                    "hardware.pcie-link-narrow",
                    gpu = name,
                    width = cur_w,
                    max_width = max_w
                ))
                .with_all(evidence)
                .remedy(msg!("hardware.pcie-link-narrow-remedy"))
                .step(RemedyStep::say(
                    Action::ServiceHardware,
                    object,
                    msg!("hardware.step-pcie-slot"),
                )),
        );
    }
    match speeds {
        Some((cur, max)) if cur < max => Some(
            PCIE_LINK_DEGRADED
                .finding_with(
                    Status::Info,
                    msg!(
                        "hardware.pcie-link-slow",
                        gpu = name,
                        speed = cur,
                        max_speed = max
                    ),
                )
                .with_all(evidence),
        ),
        _ => None,
    }
}

/// The GPU's RAS findings; `object` (its PCI address) is what their steps act on: amd-smi's ECC
/// counts and bad-page list to collect for the vendor (once), draining and service in words.
fn ras(name: &str, object: &str, dev: &str, drm: &RenderNode) -> Vec<Finding> {
    let mut out = Vec::new();
    let counts = |pick: fn(&crate::facts::drm::RasCount) -> Option<u64>| -> Vec<Evidence> {
        drm.ras
            .iter()
            .filter_map(|r| pick(r).filter(|n| *n > 0).map(|n| (r, n)))
            .map(|(r, n)| Evidence::new(format!("{dev}/ras/{}_err_count", r.block), n.to_string()))
            .collect()
    };
    let bad_pages = || {
        RemedyStep::run(
            Action::ReadLog,
            object,
            "amd-smi bad-pages",
            msg!("hardware.step-bad-pages"),
        )
    };
    let ue = counts(|r| r.uncorrectable);
    let uncorrectable = !ue.is_empty();
    if uncorrectable {
        out.push(
            RAS_UNCORRECTABLE
                .finding(msg!(
                    "hardware.ras-uncorrectable",
                    gpu = name,
                    blocks = ue.len()
                ))
                .with_all(ue)
                .remedy(msg!("hardware.ras-uncorrectable-remedy"))
                .step(RemedyStep::say(
                    Action::HideGpu,
                    object,
                    msg!("hardware.step-drain"),
                ))
                .step(RemedyStep::run(
                    Action::ReadLog,
                    object,
                    "amd-smi metric --ecc",
                    msg!("hardware.step-ecc"),
                ))
                .step(bad_pages()),
        );
    }
    let ce = counts(|r| r.correctable);
    if !ce.is_empty() {
        out.push(
            RAS_CORRECTABLE
                .finding(msg!(
                    "hardware.ras-correctable",
                    gpu = name,
                    blocks = ce.len()
                ))
                .with_all(ce),
        );
    }
    let retired = drm.retired_pages.unwrap_or(0) + drm.pending_pages.unwrap_or(0);
    if retired > 0 {
        out.push(
            RETIRED_PAGES
                .finding(msg!(
                    "hardware.retired-pages",
                    gpu = name,
                    retired = drm.retired_pages.unwrap_or(0),
                    pending = drm.pending_pages.unwrap_or(0)
                ))
                .with(Evidence::new(
                    format!("{dev}/ras/gpu_vram_bad_pages"),
                    msg!("hardware.bad-pages-entries", count = retired),
                ))
                .remedy(msg!("hardware.retired-pages-remedy"))
                // The uncorrectable errors' steps list the bad pages already.
                .with_steps((!uncorrectable).then(bad_pages))
                .step(RemedyStep::say(
                    Action::ServiceHardware,
                    object,
                    msg!("hardware.step-service-memory"),
                )),
        );
    }
    out
}

fn gpus_found(f: &Facts) -> Finding {
    let inv = f.inventory.as_ref().expect("called with GPUs");
    let mut by_target: BTreeMap<String, usize> = BTreeMap::new();
    for a in inv.gpu_agents() {
        *by_target
            .entry(a.target_id.clone().unwrap_or_else(unknown))
            .or_default() += 1;
    }
    let targets: Vec<String> = by_target
        .iter()
        .map(|(t, n)| format!("{n} × {t}"))
        .collect();
    let agents = inv.gpu_agents().count();
    GPUS_FOUND
        .finding(msg!(
            "hardware.gpus-found",
            gpus = inv.gpus.len(),
            agents,
            targets = i18n::list(&targets)
        ))
        .with_all(inv.gpus.iter().map(|g| {
            let target = g.gfx.map_or_else(unknown, |x| x.name());
            let address = pci_address(g.pci_address.as_deref());
            let partitions = g.nodes.len();
            let value = match (&g.marketing_name, partitions > 1) {
                (Some(product), false) => msg!("hardware.gpu-node", target, product, address),
                (Some(product), true) => msg!(
                    "hardware.gpu-node-partitions",
                    target,
                    product,
                    address,
                    partitions
                ),
                (None, false) => msg!("hardware.gpu-node-unnamed", target, address),
                (None, true) => msg!(
                    "hardware.gpu-node-unnamed-partitions",
                    target,
                    address,
                    partitions
                ),
            };
            Evidence::new(format!("{TOPOLOGY_DIR}/nodes/{}", g.nodes[0]), value)
        }))
}

/// One finding per kind of input problem: unreadable (the checks that need it skip) and
/// malformed (a warning about the input), each counting files and naming each file once with
/// its count and first messages (see [`crate::source::problem::group`]).
pub(crate) fn problems(problems: &[&Problem], what: &str, rules: [Rule; 2]) -> Vec<Finding> {
    let groups = crate::source::problem::group(problems.iter().copied());
    let mut out = Vec::new();
    for (kind, rule) in [ProblemKind::Unreadable, ProblemKind::Malformed]
        .into_iter()
        .zip(rules)
    {
        let files: Vec<_> = groups.iter().filter(|g| g.kind == kind).cloned().collect();
        if files.is_empty() {
            continue;
        }
        let count = files.len();
        let summary = if kind == ProblemKind::Unreadable {
            msg!("hardware.files-unreadable", count, what)
        } else {
            msg!("hardware.files-malformed", count, what)
        };
        out.push(
            rule.finding(summary)
                .with_all(super::problems_evidence(&files)),
        );
    }
    out
}

/// Partitioned GPUs with fewer partitions than another GPU of the same model in the same compute
/// mode. A GPU whose mode is not known is compared with every partitioned GPU of its model; GPUs
/// in different known modes (a CPX GPU's 8 partitions beside a DPX GPU's 2, a heterogeneous
/// node) are not compared.
fn partition_missing(inv: &Inventory, kfd: Option<&AgentFacts>) -> Vec<Finding> {
    let modes = gpu_modes(inv, kfd);
    let mode = |g: &PhysicalGpu| {
        modes
            .iter()
            .find(|m| m.gpu.index == g.index)
            .and_then(|m| m.compute.as_ref())
            .map(|(mode, _)| mode.as_str())
    };
    let split: Vec<&PhysicalGpu> = inv.gpus.iter().filter(|g| g.nodes.len() > 1).collect();
    split
        .iter()
        .filter_map(|g| {
            let want = split
                .iter()
                .filter(|o| o.device_id == g.device_id)
                .filter(|o| match (mode(g), mode(o)) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                })
                .map(|o| o.nodes.len())
                .max()?;
            (g.nodes.len() < want).then(|| {
                PARTITION_MISSING
                    .finding(msg!(
                        "hardware.partition-missing",
                        gpu = inv.gpu_name(g).to_string(),
                        partitions = g.nodes.len(),
                        siblings = want
                    ))
                    .with(Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes"),
                        msg!(
                            "hardware.partition-nodes",
                            nodes = crate::i18n::list(&g.nodes),
                            index = g.index
                        ),
                    ))
                    .remedy(msg!("hardware.partition-missing-remedy"))
            })
        })
        .collect()
}

/// `unknown`, for a value the inputs do not give.
fn unknown() -> String {
    msg!("hardware.unknown")
}

/// A GPU's PCI address, or words saying it is unknown.
fn pci_address(address: Option<&str>) -> String {
    address.map_or_else(|| msg!("hardware.unknown-pci-address"), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    /// One physical MI300X: its PCI bus, its compute and memory modes (on the first partition's
    /// drm device only, as amdgpu lays them out) and how many KFD nodes it has.
    struct Gpu {
        bus: u32,
        compute: Option<&'static str>,
        memory: Option<&'static str>,
        partitions: u32,
    }

    const fn gpu(bus: u32, compute: &'static str, memory: &'static str, partitions: u32) -> Gpu {
        Gpu {
            bus,
            compute: Some(compute),
            memory: Some(memory),
            partitions,
        }
    }

    /// A machine tree with a CPU node and the GPUs' nodes, render minors 128 + 8 × GPU index +
    /// partition, 304 CUs per GPU split evenly between its partitions.
    fn findings(gpus: &[Gpu]) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: String, text: String| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let topo = "sys/class/kfd/kfd/topology";
        write(format!("{topo}/generation_id"), "1\n".into());
        write(
            format!("{topo}/system_properties"),
            "platform_oem 0\n".into(),
        );
        write(
            format!("{topo}/nodes/0/properties"),
            "cpu_cores_count 96\nsimd_count 0\ngfx_target_version 0\n".into(),
        );
        let mut node = 1;
        for (i, g) in gpus.iter().enumerate() {
            for p in 0..g.partitions {
                let minor = 128 + 8 * i as u32 + p;
                let location = if g.partitions > 1 {
                    (g.bus << 8) | p
                } else {
                    g.bus << 8
                };
                write(
                    format!("{topo}/nodes/{node}/properties"),
                    format!(
                        "cpu_cores_count 0\nsimd_count {}\nsimd_per_cu 4\n\
                         gfx_target_version 90402\nvendor_id 4098\ndevice_id 29857\n\
                         location_id {location}\ndomain 0\ndrm_render_minor {minor}\n",
                        1216 / g.partitions
                    ),
                );
                let dev = format!("sys/class/drm/renderD{minor}/device");
                write(format!("{dev}/uevent"), "DRIVER=amdgpu\n".into());
                if p == 0 {
                    if let Some(c) = g.compute {
                        write(format!("{dev}/current_compute_partition"), format!("{c}\n"));
                    }
                    if let Some(m) = g.memory {
                        write(format!("{dev}/current_memory_partition"), format!("{m}\n"));
                    }
                }
                node += 1;
            }
        }
        let facts = Facts::collect(&Source::fixture(dir.path()).unwrap());
        check(&facts)
    }

    fn of<'a>(out: &'a [Finding], id: &str) -> Vec<&'a Finding> {
        out.iter().filter(|f| f.id == id).collect()
    }

    #[test]
    fn different_compute_modes_are_a_heterogeneous_node() {
        // ROCm/gpu-operator#382's profile cpx-2x-spx-6x-nps1, on four GPUs.
        let out = findings(&[
            gpu(0x05, "CPX", "NPS1", 8),
            gpu(0x27, "CPX", "NPS1", 8),
            gpu(0x47, "SPX", "NPS1", 1),
            gpu(0x65, "SPX", "NPS1", 1),
        ]);
        let mixed = of(&out, PARTITION_MODE_MISMATCH.id);
        assert_eq!(mixed.len(), 1, "{out:#?}");
        let f = mixed[0];
        assert_eq!(f.status, Status::Info);
        assert!(f.summary.contains("2 × CPX, 2 × SPX"), "{}", f.summary);
        // One piece of evidence per physical GPU (not per partition), from the file of the
        // first partition.
        let sources: Vec<&str> = f.evidence.iter().map(|e| e.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                "/sys/class/drm/renderD128/device/current_compute_partition",
                "/sys/class/drm/renderD136/device/current_compute_partition",
                "/sys/class/drm/renderD144/device/current_compute_partition",
                "/sys/class/drm/renderD152/device/current_compute_partition",
            ]
        );
        let values: Vec<&str> = f
            .evidence
            .iter()
            .filter_map(|e| e.value.as_deref())
            .collect();
        assert!(
            values[0].ends_with(": CPX, 8 device(s) of 38 CUs"),
            "{values:?}"
        );
        assert!(
            values[2].ends_with(": SPX, 1 device(s) of 304 CUs"),
            "{values:?}"
        );
        assert!(f.remedy.as_deref().unwrap().contains("`mixed`"));
        // Two CPX GPUs with 8 partitions each beside SPX ones: no partition is missing.
        assert!(of(&out, PARTITION_MISSING.id).is_empty(), "{out:#?}");
    }

    #[test]
    fn uniform_modes_give_nothing() {
        let out = findings(&[gpu(0x05, "CPX", "NPS4", 8), gpu(0x27, "CPX", "NPS4", 8)]);
        assert!(of(&out, PARTITION_MODE_MISMATCH.id).is_empty(), "{out:#?}");
        let out = findings(&[gpu(0x05, "SPX", "NPS1", 1), gpu(0x27, "SPX", "NPS1", 1)]);
        assert!(of(&out, PARTITION_MODE_MISMATCH.id).is_empty(), "{out:#?}");
        // Partitions without the files are not an unknown mode of their own.
        let out = findings(&[
            gpu(0x05, "CPX", "NPS1", 8),
            Gpu {
                bus: 0x27,
                compute: None,
                memory: None,
                partitions: 8,
            },
        ]);
        assert!(of(&out, PARTITION_MODE_MISMATCH.id).is_empty(), "{out:#?}");
    }

    #[test]
    fn different_memory_modes_are_a_warning() {
        let out = findings(&[gpu(0x05, "CPX", "NPS4", 8), gpu(0x27, "CPX", "NPS1", 8)]);
        let mixed = of(&out, PARTITION_MODE_MISMATCH.id);
        assert_eq!(mixed.len(), 1, "{out:#?}");
        assert_eq!(mixed[0].status, Status::Warn);
        assert!(mixed[0].summary.contains("memory"), "{}", mixed[0].summary);
        assert_eq!(
            mixed[0].evidence[0].source,
            "/sys/class/drm/renderD136/device/current_memory_partition"
        );
    }

    #[test]
    fn partitions_are_compared_within_one_compute_mode() {
        // A DPX GPU's 2 partitions beside a CPX GPU's 8 are not a lost partition…
        let out = findings(&[gpu(0x05, "CPX", "NPS1", 8), gpu(0x27, "DPX", "NPS1", 2)]);
        assert!(of(&out, PARTITION_MISSING.id).is_empty(), "{out:#?}");
        // …but a CPX GPU with 7 beside one with 8 is, and so is one whose mode is unknown.
        let out = findings(&[gpu(0x05, "CPX", "NPS1", 8), gpu(0x27, "CPX", "NPS1", 7)]);
        assert_eq!(of(&out, PARTITION_MISSING.id).len(), 1, "{out:#?}");
        let out = findings(&[
            gpu(0x05, "CPX", "NPS1", 8),
            Gpu {
                bus: 0x27,
                compute: None,
                memory: None,
                partitions: 7,
            },
        ]);
        assert_eq!(of(&out, PARTITION_MISSING.id).len(), 1, "{out:#?}");
    }

    #[test]
    fn a_carve_out_is_unseen_only_when_kfd_reports_well_under_it() {
        const GIB: u64 = 1 << 30;
        // ROCm/ROCm#5444: 15.9 GiB of GTT reported for a 96 GiB carve-out.
        assert!(carveout_unseen(17_050_894_336, 96 * GIB));
        // KFD reports the carve-out itself, or GTT larger than a small carve-out.
        assert!(!carveout_unseen(96 * GIB, 96 * GIB));
        assert!(!carveout_unseen(62 * GIB, GIB / 2));
        // A bank a little under the carve-out (reservations) is not a lost carve-out.
        assert!(!carveout_unseen(15 * GIB, 16 * GIB));
        assert!(carveout_unseen(11 * GIB, 16 * GIB));
        assert!(!carveout_unseen(u64::MAX, u64::MAX));
    }
}
