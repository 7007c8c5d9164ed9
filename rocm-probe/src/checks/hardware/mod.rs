//! Layer 1: is there an AMD GPU, and is what KFD says about it sound?

pub mod rules;

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::agent::{AgentFacts, Inventory};
use crate::facts::drm::{DRM_DIR, RenderNode, gts};

use crate::facts::Facts;
use crate::facts::pci::{PCI_DEVICES, VENDOR_AMD};
use crate::facts::topology::TOPOLOGY_DIR;
use crate::finding::{
    APU_SMALL_MEMORY, Evidence, Finding, GPUS_FOUND, LARGE_BAR_OFF, NO_AMD_GPU, PARTITION_MISSING,
    PARTITION_MODE_MISMATCH, PCI_NOT_CAPTURED, PCIE_LINK_DEGRADED, RAS_CORRECTABLE,
    RAS_UNCORRECTABLE, RETIRED_PAGES, RUNTIME_SUSPENDED, Rule, SYSFS_MALFORMED, SYSFS_UNREADABLE,
    Status, WSL_PARAVIRTUAL,
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
        out.extend(partition_missing(inv));
        if let Some(kfd) = &f.kfd {
            out.extend(devices(inv, kfd));
        }
    }
    out
}

/// Per physical GPU, what its drm device says: link, BAR, APU memory, RAS, runtime PM,
/// partition modes. The first node of a GPU carries the PCI function's files.
fn devices(inv: &Inventory, kfd: &AgentFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    /// GPU index with its compute and memory partition modes.
    type Modes = (usize, Option<String>, Option<String>);
    let mut modes: BTreeMap<Option<u32>, Vec<Modes>> = BTreeMap::new();
    for g in &inv.gpus {
        let Some(agent) = inv.agents.iter().find(|a| a.node == g.nodes[0]) else {
            continue;
        };
        let Some(drm) = agent
            .drm_render_minor
            .and_then(|m| kfd.render_nodes.get(&m))
        else {
            continue;
        };
        let dev = format!("{DRM_DIR}/renderD{}/device", drm.minor);
        let name = inv.gpu_name(g).to_string();
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
        out.extend(link(&name, &dev, drm));
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
                        .remedy(msg!("hardware.large-bar-off-remedy")),
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
                        .remedy(msg!("hardware.apu-small-memory-remedy")),
                );
            }
        }
        out.extend(ras(&name, &dev, drm));
        modes.entry(g.device_id).or_default().push((
            g.index,
            drm.compute_partition.clone(),
            drm.memory_partition.clone(),
        ));
    }
    for gpus in modes.values() {
        let compute: BTreeSet<_> = gpus.iter().filter_map(|g| g.1.as_deref()).collect();
        let memory: BTreeSet<_> = gpus.iter().filter_map(|g| g.2.as_deref()).collect();
        if compute.len() > 1 || memory.len() > 1 {
            out.push(
                PARTITION_MODE_MISMATCH
                    .finding(msg!("hardware.partition-mode-mismatch"))
                    .with_all(gpus.iter().map(|(i, c, m)| {
                        Evidence::new(
                            format!("GPU {i}"),
                            msg!(
                                "hardware.partition-modes",
                                compute = c.clone().unwrap_or_else(unknown),
                                memory = m.clone().unwrap_or_else(unknown)
                            ),
                        )
                    }))
                    .remedy(msg!("hardware.partition-mode-mismatch-remedy")),
            );
        }
    }
    out
}

fn link(name: &str, dev: &str, drm: &RenderNode) -> Option<Finding> {
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
                .remedy(msg!("hardware.pcie-link-narrow-remedy")),
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

fn ras(name: &str, dev: &str, drm: &RenderNode) -> Vec<Finding> {
    let mut out = Vec::new();
    let counts = |pick: fn(&crate::facts::drm::RasCount) -> Option<u64>| -> Vec<Evidence> {
        drm.ras
            .iter()
            .filter_map(|r| pick(r).filter(|n| *n > 0).map(|n| (r, n)))
            .map(|(r, n)| Evidence::new(format!("{dev}/ras/{}_err_count", r.block), n.to_string()))
            .collect()
    };
    let ue = counts(|r| r.uncorrectable);
    if !ue.is_empty() {
        out.push(
            RAS_UNCORRECTABLE
                .finding(msg!(
                    "hardware.ras-uncorrectable",
                    gpu = name,
                    blocks = ue.len()
                ))
                .with_all(ue)
                .remedy(msg!("hardware.ras-uncorrectable-remedy")),
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
                .remedy(msg!("hardware.retired-pages-remedy")),
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

fn partition_missing(inv: &Inventory) -> Vec<Finding> {
    let mut most: BTreeMap<Option<u32>, usize> = BTreeMap::new();
    for g in inv.gpus.iter().filter(|g| g.nodes.len() > 1) {
        let m = most.entry(g.device_id).or_default();
        *m = (*m).max(g.nodes.len());
    }
    inv.gpus
        .iter()
        .filter(|g| g.nodes.len() > 1)
        .filter(|g| most.get(&g.device_id).is_some_and(|&m| g.nodes.len() < m))
        .map(|g| {
            let want = most[&g.device_id];
            PARTITION_MISSING
                .finding(msg!(
                    "hardware.partition-missing",
                    index = g.index,
                    address = pci_address(g.pci_address.as_deref()),
                    partitions = g.nodes.len(),
                    siblings = want
                ))
                .with(Evidence::new(
                    format!("{TOPOLOGY_DIR}/nodes"),
                    msg!(
                        "hardware.partition-nodes",
                        nodes = format!("{:?}", g.nodes),
                        index = g.index
                    ),
                ))
                .remedy(msg!("hardware.partition-missing-remedy"))
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
