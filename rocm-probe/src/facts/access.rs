//! Device nodes and whether the probing identity may open them read-write — decided from the
//! node's real mode, owning group and POSIX ACL, never by assuming `video` or `render`, and
//! without opening anything.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::agent::Inventory;
use crate::facts::{Collect, KFD_DEVICE};
use crate::source::Source;
use crate::source::acl::AclTag;
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

/// Which part of a node's permissions decided for an identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Root, which the permissions do not bind.
    Root,
    /// The owner's bits or `user::` entry.
    Owner,
    /// A `user:<uid>:` ACL entry for this identity, limited by the mask: what systemd-logind
    /// gives the user of a local seat session on nodes tagged `uaccess`.
    NamedUser,
    /// The owning group's bits, or the group class of the ACL (`group::` and `group:<gid>:`
    /// entries of the identity's groups, limited by the mask).
    Group,
    /// The other bits or `other::` entry.
    Other,
}

/// The part of `node`'s permissions that applies to `id`, and whether it allows read-write —
/// the kernel's check (acl(5), "ACCESS CHECK ALGORITHM"): root passes; the owner gets the
/// owner entry; a user with a named entry gets it under the mask; otherwise, when any of the
/// user's groups is the owning group or a named one, read-write is granted when one of those
/// entries under the mask allows it and refused otherwise; everyone else gets the other entry.
/// Without an ACL the mode's triples are those entries.
pub fn decide(node: &DeviceNode, id: &Identity) -> (Class, bool) {
    let rw = |perm: u32| perm & 0o6 == 0o6;
    let holds = |gid: u32| id.groups.contains(&gid) || id.gid == Some(gid);
    if id.uid == 0 {
        return (Class::Root, true);
    }
    let Some(acl) = &node.acl else {
        return if id.uid == node.uid {
            (Class::Owner, rw(node.mode >> 6))
        } else if holds(node.gid) {
            (Class::Group, rw(node.mode >> 3))
        } else {
            (Class::Other, rw(node.mode))
        };
    };
    let perm = |tag| u32::from(acl.perm(tag).unwrap_or(0));
    let mask = acl.perm(AclTag::Mask).map_or(0o7, u32::from);
    if id.uid == node.uid {
        return (Class::Owner, rw(perm(AclTag::UserObj)));
    }
    if acl.perm(AclTag::User(id.uid)).is_some() {
        return (Class::NamedUser, rw(perm(AclTag::User(id.uid)) & mask));
    }
    let mut matched = false;
    let mut granted = false;
    for e in acl.entries() {
        let member = match e.tag {
            AclTag::GroupObj => holds(node.gid),
            AclTag::Group(gid) => holds(gid),
            _ => false,
        };
        if member {
            matched = true;
            granted |= rw(u32::from(e.perm) & mask);
        }
    }
    if matched {
        (Class::Group, granted)
    } else {
        (Class::Other, rw(perm(AclTag::Other)))
    }
}

/// Whether joining the node's owning group would give an identity read-write: not when the
/// owner entry or a named entry for the user decides first, nor when the owning group's entry
/// (under the mask) lacks read-write.
pub fn group_would_grant(node: &DeviceNode, id: &Identity) -> bool {
    let member = Identity {
        groups: [id.groups.as_slice(), &[node.gid]].concat(),
        ..id.clone()
    };
    decide(node, &member) == (Class::Group, true)
        && match &node.acl {
            Some(acl) => {
                let mask = acl.perm(AclTag::Mask).unwrap_or(0o7);
                acl.perm(AclTag::GroupObj).unwrap_or(0) & mask & 0o6 == 0o6
            }
            None => true,
        }
}

/// Whether an identity may open a node read-write ([`decide`]).
pub fn access(node: Option<&DeviceNode>, identity: Option<&Identity>) -> Access {
    let Some(node) = node else {
        return Access::Missing;
    };
    let Some(id) = identity else {
        return Access::Unknown;
    };
    if decide(node, id).1 {
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
        for node in nodes.iter().flatten() {
            if let Some(e) = node.acl_error {
                problems.push(Problem::new(
                    node.path.clone(),
                    crate::text!("facts.acl-unusable", reason = e.text()),
                ));
            }
        }
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
            acl: None,
            acl_error: None,
        }
    }

    /// `/dev/kfd` as systemd 260's logind leaves it for the seat user 1000: `crw-rw----+ root
    /// render` with the given extra entries.
    fn with_acl(mode: u32, lines: &[&str]) -> DeviceNode {
        DeviceNode {
            acl: Some(crate::source::acl::Acl::from_text(lines).unwrap()),
            ..node(mode)
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

    #[test]
    fn acl_rules() {
        let seat = [
            "user::rw-",
            "user:1000:rw-",
            "group::rw-",
            "mask::rw-",
            "other::---",
        ];
        let kfd = with_acl(0o660, &seat);
        // Not in render, yet granted through the named entry.
        assert_eq!(decide(&kfd, &user(&[1000])), (Class::NamedUser, true));
        assert_eq!(access(Some(&kfd), Some(&user(&[1000]))), Access::Granted);
        assert!(!group_would_grant(&kfd, &user(&[1000])));
        // Another user is judged by the group class and other entry, as without the ACL.
        let other = Identity {
            uid: 1001,
            ..user(&[1001])
        };
        assert_eq!(decide(&kfd, &other), (Class::Other, false));
        assert!(group_would_grant(&kfd, &other));
        assert_eq!(
            decide(
                &kfd,
                &Identity {
                    uid: 1001,
                    ..user(&[109])
                }
            ),
            (Class::Group, true)
        );

        // A mask without write denies the named user though the entry says rw-.
        let masked = with_acl(
            0o640,
            &[
                "user::rw-",
                "user:1000:rw-",
                "group::rw-",
                "mask::r--",
                "other::---",
            ],
        );
        assert_eq!(decide(&masked, &user(&[1000])), (Class::NamedUser, false));
        assert_eq!(access(Some(&masked), Some(&user(&[1000]))), Access::Denied);
        // The mask limits the owning group's entry too: render members are refused.
        let member = Identity {
            uid: 1001,
            ..user(&[109])
        };
        assert_eq!(decide(&masked, &member), (Class::Group, false));
        assert!(!group_would_grant(&masked, &member));

        // A named entry without rw denies its user even inside the owning group: the named
        // user entry is looked at before the groups.
        let refused = with_acl(
            0o660,
            &[
                "user::rw-",
                "user:1000:---",
                "group::rw-",
                "mask::rw-",
                "other::---",
            ],
        );
        assert_eq!(
            access(Some(&refused), Some(&user(&[1000, 109]))),
            Access::Denied
        );
        assert!(!group_would_grant(&refused, &user(&[1000])));

        // A named group entry grants its members; the mode's group bits are the mask.
        let video = with_acl(
            0o660,
            &[
                "user::rw-",
                "group::---",
                "group:44:rw-",
                "mask::rw-",
                "other::---",
            ],
        );
        assert_eq!(decide(&video, &user(&[44])), (Class::Group, true));
        // Any matching group entry suffices, whichever comes first.
        assert_eq!(decide(&video, &user(&[109, 44])), (Class::Group, true));
        assert_eq!(decide(&video, &user(&[109])), (Class::Group, false));
        // A group member is never judged by the other entry.
        let open_other = with_acl(
            0o606,
            &[
                "user::rw-",
                "group::---",
                "group:44:---",
                "mask::---",
                "other::rw-",
            ],
        );
        assert_eq!(decide(&open_other, &user(&[44])), (Class::Group, false));
        assert_eq!(decide(&open_other, &user(&[1000])), (Class::Other, true));

        // The owner entry decides for the owner, root passes regardless.
        let owned = DeviceNode {
            uid: 1000,
            ..with_acl(0o060, &["user::---", "group::rw-", "other::---"])
        };
        assert_eq!(decide(&owned, &user(&[109])), (Class::Owner, false));
        let root = Identity {
            uid: 0,
            gid: Some(0),
            groups: vec![0],
        };
        assert_eq!(decide(&masked, &root), (Class::Root, true));
    }
}
