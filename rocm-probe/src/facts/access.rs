//! Device nodes and whether the probing identity may open them read-write — decided from the
//! node's real mode and owning group, never by assuming `video` or `render`, and without
//! opening anything.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::agent::Inventory;
use crate::facts::{Collect, KFD_DEVICE};
use crate::source::Source;
use crate::source::fixture::{DeviceNode, Identity};
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// The group database inside the root.
pub const ETC_GROUP: &str = "/etc/group";

/// What the probe knows about one device node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceFacts {
    /// The node's path.
    pub path: String,
    /// Its metadata; `None` when it does not exist.
    pub node: Option<DeviceNode>,
    /// The owning group's name from `/etc/group`; `None` when the gid has no entry (a host gid
    /// seen inside a container).
    pub group_name: Option<String>,
}

/// Whether an identity may open a node read-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read and write allowed.
    Granted,
    /// The node exists but the permission bits refuse read-write.
    Denied,
    /// The node does not exist.
    Missing,
    /// No identity recorded.
    Unknown,
}

/// Decides access the way the kernel's DAC check does: root passes; otherwise the owner bits
/// apply to the owner, the group bits to group members, the other bits to everyone else.
pub fn access(node: Option<&DeviceNode>, identity: Option<&Identity>) -> Access {
    let Some(node) = node else {
        return Access::Missing;
    };
    let Some(id) = identity else {
        return Access::Unknown;
    };
    let bits = if id.uid == 0 {
        return Access::Granted;
    } else if id.uid == node.uid {
        node.mode >> 6
    } else if id.groups.contains(&node.gid) || id.gid == Some(node.gid) {
        node.mode >> 3
    } else {
        node.mode
    };
    if bits & 0o6 == 0o6 {
        Access::Granted
    } else {
        Access::Denied
    }
}

impl Collect for DeviceFacts {
    /// The inventory, for the GPUs' render nodes; `None` without KFD.
    type Needs<'a> = Option<&'a Inventory>;
    /// [`KFD_DEVICE`], then the render node of each GPU agent (each once).
    type Output = Vec<Self>;

    /// Looks the nodes up through the source's host, their groups' names in `/etc/group`.
    fn collect(
        source: &Source,
        inventory: Option<&Inventory>,
        problems: &mut Vec<Problem>,
    ) -> Vec<Self> {
        let mut paths = vec![KFD_DEVICE.to_owned()];
        if let Some(inv) = inventory {
            for minor in inv.gpu_agents().filter_map(|a| a.drm_render_minor) {
                let path = format!("/dev/dri/renderD{minor}");
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        let nodes: Vec<_> = paths.iter().map(|p| source.host().device(p)).collect();
        let mut gids: Vec<u32> = nodes.iter().flatten().map(|n| n.gid).collect();
        gids.sort_unstable();
        gids.dedup();
        let names = group_names(source.root(), &gids, problems);
        paths
            .into_iter()
            .zip(nodes)
            .map(|(path, node)| DeviceFacts {
                group_name: node.as_ref().and_then(|n| names.get(&n.gid).cloned()),
                path,
                node,
            })
            .collect()
    }
}

/// Group names by gid from `/etc/group` (only the gids asked for).
fn group_names(root: &SysRoot, gids: &[u32], problems: &mut Vec<Problem>) -> BTreeMap<u32, String> {
    if gids.is_empty() {
        return BTreeMap::new();
    }
    let Some(text) = optional(root.read_text(ETC_GROUP), problems) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(':');
            let name = f.next()?;
            let gid: u32 = f.nth(1)?.parse().ok()?;
            gids.contains(&gid).then(|| (gid, name.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(mode: u32) -> DeviceNode {
        DeviceNode {
            path: "/dev/kfd".into(),
            mode,
            uid: 0,
            gid: 109,
        }
    }

    fn user(groups: &[u32]) -> Identity {
        Identity {
            uid: 1000,
            gid: Some(1000),
            groups: groups.to_vec(),
        }
    }

    #[test]
    fn dac_rules() {
        assert_eq!(
            access(Some(&node(0o660)), Some(&user(&[1000, 109]))),
            Access::Granted
        );
        assert_eq!(
            access(Some(&node(0o660)), Some(&user(&[1000, 44]))),
            Access::Denied
        );
        assert_eq!(
            access(Some(&node(0o666)), Some(&user(&[1000]))),
            Access::Granted
        );
        assert_eq!(
            access(Some(&node(0o640)), Some(&user(&[109]))),
            Access::Denied
        );
        let root = Identity {
            uid: 0,
            gid: Some(0),
            groups: vec![0],
        };
        assert_eq!(access(Some(&node(0o600)), Some(&root)), Access::Granted);
        assert_eq!(access(None, Some(&root)), Access::Missing);
        assert_eq!(access(Some(&node(0o660)), None), Access::Unknown);
        // The owner's bits apply to the owner even when the group would allow more.
        let owner = DeviceNode {
            uid: 1000,
            ..node(0o466)
        };
        assert_eq!(access(Some(&owner), Some(&user(&[109]))), Access::Denied);
    }
}
