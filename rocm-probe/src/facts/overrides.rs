//! The processor each GPU runs as under `HSA_OVERRIDE_GFX_VERSION[_<node>]`, derived once from
//! the facts (ARCHITECTURE.md §3): layer 4 judges the overrides, layers 5–7 pick code objects
//! for the processor they name.
//!
//! libhsakmt decides it in `topology_sysfs_get_node_props`: a GPU's own
//! `HSA_OVERRIDE_GFX_VERSION_<node>` on releases that read it (ROCm 6.3 on), else the global
//! variable. `<node>` is libhsakmt's node id, which numbers CPU nodes and the GPU nodes whose
//! render node opens, in KFD order (`crate::target::hsakmt_node_ids`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::access::DeviceFacts;
use crate::facts::agent::{Agent, DeviceType, Inventory};
use crate::facts::install::{InstallFacts, RocmVersion};
use crate::target::{
    GfxVersion, PER_NODE_OVERRIDE_SINCE, effective_override, hsakmt_node_ids, parse_override,
    per_node_override_node,
};

/// The overrides as libhsakmt applies them on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OverrideFacts {
    /// Whether the install's libhsakmt reads the per-node variables: from ROCm 6.3
    /// ([`PER_NODE_OVERRIDE_SINCE`]); assumed when the release is unknown.
    pub per_node_read: bool,
    /// The install's release, when known.
    pub release: Option<RocmVersion>,
    /// KFD node → libhsakmt's node id, for the nodes libhsakmt numbers.
    pub hsakmt: BTreeMap<u32, u32>,
    /// KFD node of each GPU → (variable, value) libhsakmt reads for it.
    pub by_node: BTreeMap<u32, (String, String)>,
    /// The per-node variables set: libhsakmt node id → (variable, value).
    pub per_node: BTreeMap<u32, (String, String)>,
}

impl OverrideFacts {
    /// Derives them from the inventory, the installs (the release decides whether per-node
    /// variables are read), the environment and the device nodes (a GPU whose render node is
    /// known to be absent is not numbered: libhsakmt's `topology_sysfs_check_node_supported`).
    pub fn derive(
        inventory: Option<&Inventory>,
        installs: &InstallFacts,
        env: &BTreeMap<String, String>,
        devices: &[DeviceFacts],
    ) -> Self {
        let release = installs.effective().and_then(|i| i.version);
        let per_node_read = release.is_none_or(|v| (v.major, v.minor) >= PER_NODE_OVERRIDE_SINCE);
        // Device nodes count as not captured when /dev/kfd is absent too.
        let captured = devices.first().is_some_and(|d| d.node.is_some());
        let opens = |a: &Agent| {
            !captured
                || a.drm_render_minor.is_none_or(|m| {
                    let path = format!("/dev/dri/renderD{m}");
                    !devices.iter().any(|d| d.path == path && d.node.is_none())
                })
        };
        let hsakmt = hsakmt_node_ids(inventory.iter().flat_map(|i| {
            i.agents
                .iter()
                .map(|a| (a.node, a.device_type == DeviceType::Cpu || opens(a)))
        }));
        let by_node = inventory
            .iter()
            .flat_map(|i| i.gpu_agents())
            .filter_map(|a| {
                let node = *hsakmt.get(&a.node)?;
                let (var, value) = effective_override(env, node, per_node_read)?;
                Some((a.node, (var, value.to_owned())))
            })
            .collect();
        let per_node = env
            .iter()
            .filter_map(|(k, v)| Some((per_node_override_node(k)?, (k.clone(), v.clone()))))
            .collect();
        Self {
            per_node_read,
            release,
            hsakmt,
            by_node,
            per_node,
        }
    }

    /// The variable a GPU's override comes from and the processor it names, when libhsakmt
    /// accepts the value.
    pub fn of(&self, a: &Agent) -> Option<(&str, GfxVersion)> {
        let (var, value) = self.by_node.get(&a.node)?;
        parse_override(value).ok().map(|g| (var.as_str(), g))
    }

    /// libhsakmt's node id of a GPU (its KFD node id when libhsakmt does not number it).
    pub fn node(&self, a: &Agent) -> u32 {
        self.hsakmt.get(&a.node).copied().unwrap_or(a.node)
    }

    /// Each GPU's effective override by KFD node, for the layers that pick code objects.
    pub fn effective(&self, inventory: Option<&Inventory>) -> BTreeMap<u32, GfxVersion> {
        inventory
            .iter()
            .flat_map(|i| i.gpu_agents())
            .filter_map(|a| self.of(a).map(|(_, o)| (a.node, o)))
            .collect()
    }
}
