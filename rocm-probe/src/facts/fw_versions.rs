//! The firmware each GPU runs, as amdgpu exposes it (issue 19, item 3): `device/fw_version/
//! <component>_fw_version` (hex, `0x00000080`; `mes`, `mes_kiq`, `smc`, `sos`, `mec`, `rlc`,
//! `sdma`, `vcn`, …) and `device/vbios_version`. The kernel fills these at initialisation, so
//! they are read even on a runtime-suspended GPU. Not to be confused with `facts/firmware.rs`,
//! the firmware files on disk.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::agent::{AgentFacts, Inventory};
use crate::facts::telemetry::gpu_devices;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// One firmware component's version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FwVersion {
    /// As sysfs prints it (`0x00000080`).
    pub text: String,
    /// Its value; `None` when not hex.
    pub value: Option<u64>,
}

/// One physical GPU's firmware.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuFirmwareVersions {
    /// The physical GPU's index in the inventory.
    pub gpu: usize,
    /// Its PCI address.
    pub pci_address: Option<String>,
    /// `vbios_version`.
    pub vbios: Option<String>,
    /// Components by name (`mes`, `smc`, …: the file name without `_fw_version`).
    pub components: BTreeMap<String, FwVersion>,
}

/// Every GPU's firmware versions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FwVersionFacts {
    /// GPUs with a VBIOS version or a `fw_version` directory.
    pub gpus: Vec<GpuFirmwareVersions>,
}

impl FwVersionFacts {
    /// A GPU's version of one component.
    pub fn version(&self, gpu: usize, component: &str) -> Option<&FwVersion> {
        self.gpus
            .iter()
            .find(|g| g.gpu == gpu)?
            .components
            .get(component)
    }
}

/// Parses a `fw_version` value (`0x00000080`).
pub fn parse_version(text: &str) -> Option<u64> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

impl Collect for FwVersionFacts {
    type Needs<'a> = (Option<&'a Inventory>, Option<&'a AgentFacts>);
    type Output = Self;

    /// Lists each physical GPU's `device/fw_version` and reads every `*_fw_version` in it; the
    /// VBIOS version comes from the render node the agent view read.
    fn collect(
        source: &Source,
        (inventory, agents): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let mut facts = Self::default();
        for (gpu, pci_address, minor, dir) in gpu_devices(inventory) {
            let mut g = GpuFirmwareVersions {
                gpu,
                pci_address,
                vbios: agents
                    .and_then(|a| a.render_nodes.get(&minor))
                    .and_then(|n| n.vbios_version.clone()),
                components: BTreeMap::new(),
            };
            let fw = format!("{dir}/fw_version");
            for name in optional(root.read_dir(&fw), problems).unwrap_or_default() {
                let Some(component) = name.strip_suffix("_fw_version") else {
                    continue;
                };
                let path = format!("{fw}/{name}");
                let Some(text) = optional(root.read_value(&path), problems) else {
                    continue;
                };
                let value = parse_version(&text);
                if value.is_none() {
                    problems.push(Problem::new(
                        path,
                        crate::text!("facts.not-a-number", text = format!("{text:?}")),
                    ));
                }
                g.components
                    .insert(component.to_owned(), FwVersion { text, value });
            }
            if g.vbios.is_some() || !g.components.is_empty() {
                facts.gpus.push(g);
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_hex() {
        assert_eq!(parse_version("0x00000083"), Some(0x83));
        assert_eq!(parse_version("0x0911801b"), Some(0x0911_801b));
        assert_eq!(parse_version("131"), None);
        assert_eq!(parse_version("0xzz"), None);
    }

    #[test]
    fn reads_a_phoenix_capture() {
        let base =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/apu-phoenix-780m");
        let source = Source::fixture(&base).unwrap();
        let (agents, _) = crate::facts::collect::<AgentFacts>(
            &source,
            crate::facts::agent::AgentNeeds::All(Default::default()),
        );
        let agents = agents.unwrap();
        let inv = Inventory::from_facts(&agents);
        let mut p = Vec::new();
        let f = FwVersionFacts::collect(&source, (Some(&inv), Some(&agents)), &mut p);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.gpus.len(), 1);
        let g = &f.gpus[0];
        assert_eq!(g.vbios.as_deref(), Some("113-PHXGENERIC-001"));
        assert_eq!(g.components.len(), 12);
        assert_eq!(f.version(0, "mes").and_then(|v| v.value), Some(0x80));
        assert_eq!(
            f.version(0, "smc").map(|v| v.text.as_str()),
            Some("0x004c6000")
        );
    }
}
