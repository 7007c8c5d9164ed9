//! Layer 1: is there an AMD GPU, and is what KFD says about it sound?

use std::collections::BTreeMap;

use crate::facts::Facts;
use crate::finding::{
    Evidence, Finding, GPUS_FOUND, NO_AMD_GPU, PARTITION_MISSING, PCI_NOT_CAPTURED, Rule,
    SYSFS_MALFORMED, SYSFS_UNREADABLE,
};
use crate::pci::{PCI_DEVICES, VENDOR_AMD};
use crate::problem::{Problem, ProblemKind};
use crate::topology::TOPOLOGY_DIR;

/// Layer 1 findings.
pub fn check(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let kfd_gpus = f.inventory.as_ref().map_or(0, |i| i.gpu_agents().count());
    let pci_gpus = f.pci.as_ref().map(|p| p.gpus.len());

    if kfd_gpus > 0 {
        out.push(gpus_found(f));
    } else {
        match (&f.pci, pci_gpus) {
            (Some(pci), Some(0)) => {
                let kfd = f
                    .kfd_error
                    .as_ref()
                    .map_or_else(|| "no GPU node".to_owned(), |p| p.message.clone());
                out.push(
                    NO_AMD_GPU
                        .finding("No AMD GPU on the PCI bus: there is nothing for ROCm to run on")
                        .with(Evidence::new(
                            PCI_DEVICES,
                            format!(
                                "{} PCI functions, none with vendor 0x{VENDOR_AMD:04x} and a \
                                 display or accelerator class",
                                pci.functions
                            ),
                        ))
                        .with(Evidence::new(TOPOLOGY_DIR, kfd))
                        .remedy(
                            "Run on a machine with an AMD GPU. In a VM, pass the GPU through \
                             (VFIO); in a container, the host itself must have the GPU.",
                        ),
                );
            }
            (Some(pci), Some(n)) => out.push(
                GPUS_FOUND
                    .finding(format!(
                        "{n} AMD GPU(s) on the PCI bus, none in the KFD topology"
                    ))
                    .with_all(pci.gpus.iter().map(|g| {
                        Evidence::new(
                            format!("{PCI_DEVICES}/{}", g.address),
                            format!("device 0x{:04x}", g.device.unwrap_or_default()),
                        )
                    })),
            ),
            _ => {}
        }
    }
    if f.pci.is_none() {
        out.push(
            PCI_NOT_CAPTURED
                .finding("PCI bus not captured in this fixture: PCI-level checks skipped"),
        );
    }
    // The inventory's problems include the topology's and the drm/amdgpu.ids ones.
    let mut sysfs: Vec<&Problem> = f.inventory.iter().flat_map(|i| &i.problems).collect();
    sysfs.extend(
        f.problems
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
    }
    out
}

fn gpus_found(f: &Facts) -> Finding {
    let inv = f.inventory.as_ref().expect("called with GPUs");
    let mut by_target: BTreeMap<String, usize> = BTreeMap::new();
    for a in inv.gpu_agents() {
        *by_target
            .entry(a.target_id.clone().unwrap_or_else(|| "unknown".into()))
            .or_default() += 1;
    }
    let targets: Vec<String> = by_target
        .iter()
        .map(|(t, n)| format!("{n} × {t}"))
        .collect();
    let agents = inv.gpu_agents().count();
    GPUS_FOUND
        .finding(format!(
            "{} physical GPU(s), {agents} GPU agent(s): {}",
            inv.gpus.len(),
            targets.join(", ")
        ))
        .with_all(inv.gpus.iter().map(|g| {
            Evidence::new(
                format!("{TOPOLOGY_DIR}/nodes/{}", g.nodes[0]),
                format!(
                    "{} {} at {}{}",
                    g.gfx.map_or("unknown".into(), |x| x.name()),
                    g.marketing_name.as_deref().unwrap_or("(no marketing name)"),
                    g.pci_address.as_deref().unwrap_or("unknown PCI address"),
                    if g.nodes.len() > 1 {
                        format!(", {} partitions", g.nodes.len())
                    } else {
                        String::new()
                    }
                ),
            )
        }))
}

/// One finding per kind of input problem: unreadable (the checks that need it skip) and
/// malformed (a warning about the input), each listing every path.
pub(crate) fn problems(problems: &[&Problem], what: &str, rules: [Rule; 2]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (kind, rule) in [ProblemKind::Unreadable, ProblemKind::Malformed]
        .into_iter()
        .zip(rules)
    {
        let hits: Vec<&&Problem> = problems.iter().filter(|p| p.kind == kind).collect();
        if hits.is_empty() {
            continue;
        }
        let adjective = if kind == ProblemKind::Unreadable {
            "unreadable"
        } else {
            "malformed"
        };
        out.push(
            rule.finding(format!(
                "{} {adjective} {what} file(s); their values are unknown",
                hits.len()
            ))
            .with_all(
                hits.iter()
                    .map(|p| Evidence::new(p.path.clone(), p.message.clone())),
            ),
        );
    }
    out
}

fn partition_missing(inv: &crate::agent::Inventory) -> Vec<Finding> {
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
                .finding(format!(
                    "GPU {} ({}) has {} partitions, its siblings {want}",
                    g.index,
                    g.pci_address.as_deref().unwrap_or("unknown PCI address"),
                    g.nodes.len()
                ))
                .with(Evidence::new(
                    format!("{TOPOLOGY_DIR}/nodes"),
                    format!("nodes {:?} form GPU {}", g.nodes, g.index),
                ))
                .remedy(
                    "Check that every partition has its render node (/dev/dri) and that the \
                     partition mode is the same on every GPU (amd-smi partition).",
                )
        })
        .collect()
}
