//! A node's configuration as fleet tooling compares it (`diff`), and its `fingerprint`: a hash
//! of the parts that make two nodes interchangeable — GPU models and targets, counts, partition
//! modes, driver/ROCm/library versions — and never findings, counters, times or addresses, so
//! a fleet can be grouped by it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::facts::Facts;
use crate::facts::agent::Inventory;

/// One physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GpuConfig {
    /// Index among the physical GPUs.
    pub index: usize,
    /// PCI address (not part of the fingerprint).
    pub pci_address: Option<String>,
    /// PCI device id, `"0x740f"` (a number in schema version 1).
    #[serde(serialize_with = "crate::facts::hex::opt")]
    #[schemars(with = "Option<String>")]
    pub device_id: Option<u32>,
    /// Marketing name.
    pub marketing_name: Option<String>,
    /// gfx target.
    pub gfx: Option<String>,
    /// GPU agents (partitions).
    pub agents: usize,
    /// Compute units over its agents.
    pub compute_units: Option<u32>,
    /// Memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Firmware: VBIOS version (not part of the fingerprint).
    pub vbios: Option<String>,
    /// Firmware: MEC version (not part of the fingerprint).
    pub mec_firmware: Option<u32>,
    /// Firmware: SDMA version (not part of the fingerprint).
    pub sdma_firmware: Option<u32>,
    /// Firmware: the versions of `device/fw_version/<component>_fw_version` by component
    /// (`mes`, `smc`, …), as sysfs prints them (not part of the fingerprint).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub firmware: BTreeMap<String, String>,
}

/// The node's configuration beside its GPUs (which the report lists in `facts.gpus`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NodeConfig {
    /// Compute partition mode: amdgpu's, else implied by the KFD nodes.
    pub compute_partition: Option<String>,
    /// amdgpu's memory partition mode, when reported.
    pub memory_partition: Option<String>,
    /// Running kernel release.
    pub kernel: Option<String>,
    /// amdgpu module version (amdgpu-dkms).
    pub amdgpu: Option<String>,
    /// The ROCm release a process uses.
    pub rocm: Option<String>,
    /// ROCm library versions of that install, by stem.
    pub libraries: BTreeMap<String, String>,
    /// [`fingerprint`] of the above and the GPUs.
    pub fingerprint: String,
}

/// The physical GPUs with KFD nodes, in index order, as the configuration compares them.
pub fn gpus(facts: &Facts) -> Vec<GpuConfig> {
    let mut out = Vec::new();
    if let Some(inv) = &facts.inventory {
        for g in inv.gpus.iter().filter(|g| !g.nodes.is_empty()) {
            let agents: Vec<_> = inv
                .agents
                .iter()
                .filter(|a| g.nodes.contains(&a.node))
                .collect();
            let drm = agents
                .iter()
                .find_map(|a| facts.kfd.as_ref()?.render_nodes.get(&a.drm_render_minor?));
            out.push(GpuConfig {
                index: g.index,
                pci_address: g.pci_address.clone(),
                device_id: g.device_id,
                marketing_name: g.marketing_name.clone(),
                gfx: g.gfx.map(|x| x.name()),
                agents: g.nodes.len(),
                compute_units: g.compute_units,
                memory_bytes: g.memory_bytes,
                vbios: drm.and_then(|d| d.vbios_version.clone()),
                mec_firmware: agents.iter().find_map(|a| a.mec_firmware),
                sdma_firmware: agents.iter().find_map(|a| a.sdma_firmware),
                firmware: facts
                    .fw_versions
                    .gpus
                    .iter()
                    .find(|f| f.gpu == g.index)
                    .map(|f| {
                        f.components
                            .iter()
                            .map(|(k, v)| (k.clone(), v.text.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            });
        }
    }
    out
}

impl NodeConfig {
    /// Reads the configuration from the facts; `gpus` are [`gpus`]'s, for the fingerprint.
    pub fn from_facts(facts: &Facts, gpus: &[GpuConfig]) -> Self {
        let mut c = Self {
            compute_partition: partition_mode(facts, true),
            memory_partition: partition_mode(facts, false),
            ..Self::default()
        };
        if let Some(m) = &facts.module {
            c.kernel = m.kernel_release.clone();
            c.amdgpu = m.version.clone();
        }
        if let Some(i) = facts.installs.effective() {
            c.rocm = i.version.map(|v| v.to_string());
            if let Some(libs) = facts
                .libraries
                .installs
                .iter()
                .find(|l| l.prefix == i.prefix)
            {
                for p in &libs.present {
                    if let Some(v) = &p.version {
                        c.libraries.insert(p.name.clone(), v.clone());
                    }
                }
            }
        }
        c.fingerprint = fingerprint(&c, gpus);
        c
    }
}

/// The partition mode of the machine's GPUs: one mode when every GPU that has one agrees,
/// `mixed` when they differ, `None` when none has one. `compute` picks the compute mode (read,
/// else derived), else the memory mode (read only).
pub fn partition_mode(facts: &Facts, compute: bool) -> Option<String> {
    let inv = facts.inventory.as_ref()?;
    let modes: BTreeSet<String> = inv
        .gpus
        .iter()
        .filter_map(|g| {
            let first = inv.agents.iter().find(|a| Some(&a.node) == g.nodes.first());
            let read = first
                .and_then(|a| a.drm_render_minor)
                .and_then(|m| facts.kfd.as_ref()?.render_nodes.get(&m))
                .and_then(|r| {
                    if compute {
                        r.compute_partition.clone()
                    } else {
                        r.memory_partition.clone()
                    }
                })
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty());
            match read {
                Some(mode) => Some(mode),
                None if compute => derived_compute_mode(inv, &g.nodes),
                None => None,
            }
        })
        .collect();
    match modes.len() {
        0 => None,
        1 => modes.into_iter().next(),
        _ => Some("mixed".to_owned()),
    }
}

/// The compute partition mode one physical GPU's KFD nodes imply: one node with several
/// compute dies (XCCs) is SPX, several nodes of one XCC each are CPX, 2/3/4 nodes of several
/// XCCs are DPX/TPX/QPX; anything else has no mode.
fn derived_compute_mode(inv: &Inventory, nodes: &[u32]) -> Option<String> {
    let xccs: Vec<Option<u32>> = nodes
        .iter()
        .map(|n| {
            inv.agents
                .iter()
                .find(|a| a.node == *n)
                .and_then(|a| a.num_xcc)
        })
        .collect();
    let mode = match xccs.as_slice() {
        [] => return None,
        [Some(x)] if *x > 1 => "SPX",
        [_] => return None,
        many if many.iter().all(|x| *x == Some(1)) => "CPX",
        many if many.iter().all(|x| x.is_some_and(|x| x > 1)) => match many.len() {
            2 => "DPX",
            3 => "TPX",
            4 => "QPX",
            _ => return None,
        },
        _ => return None,
    };
    Some(mode.to_owned())
}

/// The first 16 hex digits of the MD5 of the configuration's interchangeable parts, in a
/// canonical text written here (one `key=value` line each, fixed order), so the value does not
/// depend on any serializer. Not a security hash: a grouping key.
pub fn fingerprint(c: &NodeConfig, gpus: &[GpuConfig]) -> String {
    fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
        v.as_ref().map_or_else(|| "-".to_owned(), |v| v.to_string())
    }
    let mut text = String::new();
    for g in gpus {
        text.push_str(&format!(
            "gpu device={} name={} gfx={} agents={} cu={} memory={}\n",
            opt(&g.device_id),
            opt(&g.marketing_name),
            opt(&g.gfx),
            g.agents,
            opt(&g.compute_units),
            opt(&g.memory_bytes)
        ));
    }
    for (k, v) in [
        ("compute_partition", &c.compute_partition),
        ("memory_partition", &c.memory_partition),
        ("kernel", &c.kernel),
        ("amdgpu", &c.amdgpu),
        ("rocm", &c.rocm),
    ] {
        text.push_str(&format!("{k}={}\n", opt(v)));
    }
    for (k, v) in &c.libraries {
        text.push_str(&format!("library {k}={v}\n"));
    }
    let digest = md5::compute(text.as_bytes());
    format!("{digest:x}")[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_ignores_addresses_and_firmware_but_not_models() {
        let gpu = GpuConfig {
            index: 0,
            pci_address: Some("0000:03:00.0".into()),
            device_id: Some(0x740f),
            marketing_name: Some("AMD Instinct MI210".into()),
            gfx: Some("gfx90a".into()),
            agents: 1,
            compute_units: Some(104),
            memory_bytes: Some(64 << 30),
            vbios: Some("113-D67301-063".into()),
            mec_firmware: Some(78),
            sdma_firmware: Some(8),
            firmware: BTreeMap::from([("mes".to_owned(), "0x00000080".to_owned())]),
        };
        let a = NodeConfig {
            rocm: Some("6.2.0".into()),
            ..Default::default()
        };
        let ga = vec![gpu.clone()];
        let mut gb = ga.clone();
        gb[0].pci_address = Some("0000:83:00.0".into());
        gb[0].vbios = None;
        gb[0]
            .firmware
            .insert("mes".to_owned(), "0x00000083".to_owned());
        assert_eq!(fingerprint(&a, &ga), fingerprint(&a, &gb));
        gb[0].device_id = Some(0x74a1);
        assert_ne!(fingerprint(&a, &ga), fingerprint(&a, &gb));
        let mut c = a.clone();
        c.rocm = Some("6.2.1".into());
        assert_ne!(fingerprint(&a, &ga), fingerprint(&c, &ga));
        // Schema version 2 moved the GPUs out of the configuration; the text hashed is the same,
        // so a fleet mixing both versions groups alike.
        assert_eq!(fingerprint(&a, &ga), "4bdd37a303a3deab");
        assert_eq!(fingerprint(&a, &ga).len(), 16);
    }
}

/// Who the machine is for; sets the severity of platform-tuning rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// An APU or one Radeon.
    Desktop,
    /// Anything between.
    Workstation,
    /// Any Instinct GPU, an XGMI hive, or 4+ GPUs.
    Cluster,
}

impl Profile {
    /// The id used on the command line and in JSON.
    pub fn id(self) -> &'static str {
        match self {
            Profile::Desktop => "desktop",
            Profile::Workstation => "workstation",
            Profile::Cluster => "cluster",
        }
    }

    /// ARCHITECTURE.md §5's auto-detection.
    pub fn detect(inventory: Option<&Inventory>) -> Self {
        let Some(inv) = inventory else {
            return Profile::Workstation;
        };
        let instinct = inv.gpus.iter().any(|g| {
            g.marketing_name
                .as_deref()
                .is_some_and(|n| n.contains("Instinct"))
                || g.gfx.is_some_and(|x| {
                    matches!(
                        x.name().as_str(),
                        "gfx908" | "gfx90a" | "gfx940" | "gfx941" | "gfx942" | "gfx950"
                    )
                })
        });
        if instinct || !inv.hives.is_empty() || inv.gpus.len() >= 4 {
            Profile::Cluster
        } else if inv.gpu_agents().any(|a| a.integrated == Some(true)) || inv.gpus.len() == 1 {
            Profile::Desktop
        } else {
            Profile::Workstation
        }
    }
}
