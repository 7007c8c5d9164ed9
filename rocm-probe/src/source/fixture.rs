//! `fixture.toml`: what a fixture directory cannot hold as files (ARCHITECTURE.md §4a).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::source::acl::{Acl, AclError};

/// The name of the optional description file at the top of a fixture.
pub const FIXTURE_FILE: &str = "fixture.toml";

/// The longest extended-attribute value the probe reads or a fixture may state (an SELinux
/// context is far shorter; the kernel's own limit is 64 KiB).
pub const XATTR_VALUE_MAX: usize = 4096;
/// The longest attribute name (the kernel's `XATTR_NAME_MAX`).
pub const XATTR_NAME_MAX: usize = 255;

/// A parsed `fixture.toml`. Unknown tables and keys are errors, so a typo cannot silently turn
/// a check off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureConfig {
    /// One line saying what machine or scenario this is.
    pub description: Option<String>,
    /// Who runs the probe; absent means identity-dependent checks are skipped.
    pub identity: Option<Identity>,
    /// The probing process's environment; absent means empty.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Device nodes; a node without an entry does not exist.
    #[serde(default, rename = "device")]
    pub devices: Vec<DeviceNode>,
    /// Extended attributes of device nodes, `path → name → value` (`[xattr."/dev/kfd"]
    /// "security.selinux" = "…"`): what a directory cannot hold. A path or name without an
    /// entry has no such attribute (or it was not recorded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub xattr: BTreeMap<String, BTreeMap<String, String>>,
    /// Results of active probes, for fixtures that model them.
    pub active: Option<crate::source::active_results::ActiveFacts>,
    /// Faults the KFD emulator injects when the real ROCm stack runs on this fixture
    /// (`scripts/emulate`); the probe itself never reads them.
    pub emulate: Option<Emulate>,
    /// What the report must say; checked by the fixture sweep test.
    pub expect: Option<Expect>,
}

/// The `[emulate]` table: what `emulator/kfd_emu.c` answers differently from a healthy KFD, to
/// reproduce an `[active]` scenario with the real stack. Checked here so that a typo is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Emulate {
    /// The KFD ioctl interface `GET_VERSION` reports (`[1, 8]`: no AVAILABLE_MEMORY ioctl).
    pub kfd_version: Option<[u32; 2]>,
    /// `gpu_id`s a device cgroup denies: left out of the process apertures.
    #[serde(default)]
    pub hidden_gpus: Vec<u32>,
    /// `gpu_id`s whose AQL queues never complete a packet.
    #[serde(default)]
    pub dispatch_hang: Vec<u32>,
    /// The errno an open of `/dev/kfd` fails with, for refusals the fixture's files cannot show
    /// (a container's device cgroup, a security module): 13 is EACCES.
    pub kfd_open_errno: Option<u32>,
    /// Render minors whose opens fail with EPERM though their mode allows them (a device cgroup
    /// or a security module refusing one GPU's node): libhsakmt then drops that GPU silently.
    #[serde(default)]
    pub render_eperm: Vec<u32>,
    /// Libraries made absent for the run (every file of the library directory whose name is one
    /// of these or starts with it and a dot), as a machine without them would be: `scripts/emulate`
    /// hides them in a private mount namespace, so the real loader fails as it would there.
    #[serde(default)]
    pub hide_libraries: Vec<String>,
    /// Whose table the KFD ioctl numbers are read in: a kernel whose KFD predates upstream's
    /// numbering takes the same request number for another ioctl.
    pub kfd_numbering: Option<KfdNumbering>,
}

/// An ioctl table other than upstream's, `[emulate] kfd_numbering`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum KfdNumbering {
    /// ROCm 1.6's own kernel (interface 1.2): 0x14 is UNMAP_MEMORY_FROM_GPU, not
    /// GET_PROCESS_APERTURES_NEW.
    #[serde(rename = "roc-1.6")]
    Roc16,
}

/// The identity the probe runs as.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// User id.
    pub uid: u32,
    /// Primary group id; defaults to the first of `groups`.
    pub gid: Option<u32>,
    /// All group ids the process holds (primary and supplementary).
    #[serde(default)]
    pub groups: Vec<u32>,
}

/// A device node such as `/dev/kfd` or `/dev/dri/renderD128`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceNode {
    /// Absolute path of the node.
    pub path: String,
    /// Permission bits, written in octal as `ls -l` users think of them (`"0660"`).
    #[serde(with = "octal_mode")]
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Owning group.
    pub gid: u32,
    /// Its POSIX access ACL in `getfacl -n`'s text form (`acl = ["user::rw-",
    /// "user:1000:rw-", "group::rw-", "mask::rw-", "other::---"]`); absent when the node has
    /// none beyond its mode. Its owner, mask (else owning-group) and other entries must equal
    /// the mode's triples, as the kernel keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acl: Option<Acl>,
    /// Why the live node's ACL attribute could not be decoded (the mode bits decide then). A
    /// fixture cannot state it; a snapshot records the node without the ACL.
    #[serde(skip)]
    pub acl_error: Option<AclError>,
}

/// What the report of this fixture must say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Exit code.
    pub exit: Option<i32>,
    /// 0 for healthy, else the lowest layer carrying the root cause.
    pub root_layer: Option<u8>,
    /// `pass`, `warn` or `fail`.
    pub root_status: Option<String>,
    /// The verdict's root cause: the id of the deepest cause present, or `"none"` for a
    /// healthy machine.
    pub root: Option<String>,
    /// Finding ids that must be present.
    pub findings: Option<Vec<String>>,
    /// Number of GPU agents.
    pub agents: Option<usize>,
    /// gfx names of GPU nodes in node order.
    pub targets: Option<Vec<String>>,
}

/// A `fixture.toml` that could not be read or parsed, with the place and key at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureError {
    /// The file at fault.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The dotted key at fault, when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FixtureError {}

impl FixtureConfig {
    /// Parses `fixture.toml` text; `file` only names the file in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Self, FixtureError> {
        let config: Self = toml::from_str(text).map_err(|err| {
            let line = err
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let key = line.and_then(|l| key_at_line(text, l));
            FixtureError {
                file: file.to_owned(),
                line,
                key,
                message: err.message().trim().to_owned(),
            }
        })?;
        config
            .check_xattr()
            .map_err(|(key, message)| FixtureError {
                file: file.to_owned(),
                line: text
                    .lines()
                    .position(|l| l.contains(&key.0) && l.trim_start().starts_with("[xattr"))
                    .map(|i| i + 1),
                key: Some(format!("xattr.{:?}.{:?}", key.0, key.1)),
                message,
            })?;
        config
            .check_acl_mode()
            .map_err(|(index, message)| FixtureError {
                file: file.to_owned(),
                line: text
                    .match_indices("[[device]]")
                    .nth(index)
                    .map(|(at, _)| text[..at].matches('\n').count() + 1),
                key: Some("device.acl".to_owned()),
                message,
            })?;
        Ok(config)
    }

    /// A node's ACL and its mode describe the same permissions on a real machine (chmod
    /// rewrites the ACL's owner, mask and other entries; setfacl the mode): a fixture where
    /// they differ states something no kernel shows.
    fn check_acl_mode(&self) -> Result<(), (usize, String)> {
        for (index, node) in self.devices.iter().enumerate() {
            if let Some(acl) = &node.acl {
                let bits = acl.mode_bits();
                if bits != node.mode & 0o777 {
                    return Err((
                        index,
                        format!(
                            "the ACL's owner, mask (or group) and other entries give {bits:03o}, \
                             the mode {:03o}",
                            node.mode & 0o777
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[xattr]` holds what a live read could give: absolute paths without `..`, attribute
    /// names of a namespace (`security.selinux`), values of at most [`XATTR_VALUE_MAX`] bytes
    /// without NUL. Anything else is malformed (the run stops with exit 2, like any other
    /// malformed `fixture.toml`).
    fn check_xattr(&self) -> Result<(), ((String, String), String)> {
        for (path, attrs) in &self.xattr {
            for (name, value) in attrs {
                let key = || (path.clone(), name.clone());
                if !path.starts_with('/') || path.split('/').any(|c| c == "..") {
                    return Err((
                        key(),
                        format!("{path:?} is not an absolute path without `..`"),
                    ));
                }
                let namespaced = name
                    .split_once('.')
                    .is_some_and(|(ns, rest)| !ns.is_empty() && !rest.is_empty());
                if !namespaced || name.len() > XATTR_NAME_MAX || name.contains('\0') {
                    return Err((
                        key(),
                        format!("{name:?} is not an attribute name such as \"security.selinux\""),
                    ));
                }
                if value.len() > XATTR_VALUE_MAX || value.contains('\0') {
                    return Err((
                        key(),
                        format!("the value is longer than {XATTR_VALUE_MAX} bytes or holds a NUL"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads `fixture.toml` at the top of a fixture, through the fixture's own reader: a link
    /// there resolves inside the fixture like every other fixture file (never to a file outside
    /// it), a FIFO or device is refused without blocking, and the file is capped at
    /// [`crate::source::root::READ_CAP`]. A missing file is an empty config.
    pub fn load(root: &crate::source::root::SysRoot) -> Result<Self, FixtureError> {
        let file = root.base().join(FIXTURE_FILE);
        match root.read_text(&format!("/{FIXTURE_FILE}")) {
            Ok(text) => Self::parse(&text, &file),
            Err(e) if e.is_not_found() => Ok(Self::default()),
            Err(e) => Err(FixtureError {
                file,
                line: None,
                key: None,
                message: e.kind.to_string(),
            }),
        }
    }
}

/// The dotted key a line assigns, with the table header above it (`identity.uid`).
fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if let Some(header) = l.strip_prefix('[') {
            table = header
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_owned();
        }
        if i + 1 == line {
            if l.starts_with('[') {
                return Some(table);
            }
            let (key, _) = l.split_once('=')?;
            let key = key.trim();
            return Some(if table.is_empty() {
                key.to_owned()
            } else {
                format!("{table}.{key}")
            });
        }
    }
    None
}

mod octal_mode {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(mode: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{mode:04o}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let text = String::deserialize(d)?;
        let digits = text.strip_prefix("0o").unwrap_or(&text);
        match u32::from_str_radix(digits, 8) {
            Ok(mode) if mode <= 0o7777 && !digits.is_empty() => Ok(mode),
            _ => Err(D::Error::custom(format!(
                "mode {text:?} is not an octal permission such as \"0660\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
description = "8x MI300X, CPX mode, ROCm 6.2; real capture"
[identity]
uid = 1000
groups = [1000, 44]
[env]
HSA_OVERRIDE_GFX_VERSION = "11.0.0"
[[device]]
path = "/dev/kfd"
mode = "0660"
uid = 0
gid = 109
[active]
kfd_open = "ok"
kfd_version = [1, 14]
[expect]
exit = 1
findings = ["driver.kfd-permission-denied"]
agents = 63
targets = ["gfx942"]
"#;

    #[test]
    fn parses_every_table() {
        let c = FixtureConfig::parse(FULL, Path::new("f.toml")).unwrap();
        assert_eq!(c.identity.as_ref().unwrap().groups, [1000, 44]);
        assert_eq!(c.env["HSA_OVERRIDE_GFX_VERSION"], "11.0.0");
        assert_eq!(c.devices[0].mode, 0o660);
        assert_eq!(c.devices[0].gid, 109);
        assert_eq!(c.active.as_ref().unwrap().kfd_version, Some([1, 14]));
        let e = c.expect.unwrap();
        assert_eq!((e.exit, e.agents), (Some(1), Some(63)));
    }

    #[test]
    fn empty_file_is_an_empty_config() {
        assert_eq!(
            FixtureConfig::parse("", Path::new("f")).unwrap(),
            FixtureConfig::default()
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let bad = FULL.replace("uid = 1000", "uid = \"me\"");
        let err = FixtureConfig::parse(&bad, Path::new("fx/fixture.toml")).unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
        assert_eq!(err.key.as_deref(), Some("identity.uid"));
        assert!(
            err.to_string()
                .starts_with("fx/fixture.toml:4: key `identity.uid`: "),
            "{err}"
        );

        let bad = FULL.replace("mode = \"0660\"", "mode = \"rw-rw----\"");
        let err = FixtureConfig::parse(&bad, Path::new("f")).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("device.mode"), "{err}");
        assert!(err.message.contains("octal"), "{err}");

        let bad = FULL.replace("[active]", "[active]\nkfd_opened = \"ok\"");
        let err = FixtureConfig::parse(&bad, Path::new("f")).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("active.kfd_opened"), "{err}");
        assert!(err.message.contains("unknown field"), "{err}");

        let err = FixtureConfig::parse("[identity\nuid = 1", Path::new("f")).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
    }

    const SEAT_KFD: &str = r#"
[[device]]
path = "/dev/kfd"
mode = "0660"
uid = 0
gid = 993
acl = ["user::rw-", "user:1000:rw-", "group::rw-", "mask::rw-", "other::---"]
"#;

    #[test]
    fn device_acl_is_getfacl_text() {
        let c = FixtureConfig::parse(SEAT_KFD, Path::new("f")).unwrap();
        let acl = c.devices[0].acl.as_ref().unwrap();
        assert_eq!(acl.perm(crate::source::acl::AclTag::User(1000)), Some(0o6));
        // Written back the way a snapshot writes it, and a node without one stays without.
        let text = toml::to_string(&c).unwrap();
        assert!(text.contains("user:1000:rw-"), "{text}");
        assert_eq!(FixtureConfig::parse(&text, Path::new("f")).unwrap(), c);
        let bare = FULL.replace("gid = 109\n", "gid = 109\nacl = []\n");
        assert!(FixtureConfig::parse(&bare, Path::new("f")).is_err());
        let c = FixtureConfig::parse(FULL, Path::new("f")).unwrap();
        assert!(!toml::to_string(&c).unwrap().contains("acl"));
    }

    #[test]
    fn malformed_device_acls_are_errors_naming_the_key() {
        for (from, to) in [
            ("\"user:1000:rw-\"", "\"user:alice:rw-\""),
            ("\"user:1000:rw-\"", "\"usr:1000:rw-\""),
            ("\"mask::rw-\", ", ""),
            ("\"other::---\"", "\"other::---\", \"other::---\""),
            ("\"other::---\"", "3"),
            // The mode's triples and the ACL disagree: no kernel shows that.
            ("mode = \"0660\"", "mode = \"0666\""),
            ("\"mask::rw-\"", "\"mask::r--\""),
        ] {
            let text = SEAT_KFD.replace(from, to);
            assert_ne!(text, SEAT_KFD);
            let err = FixtureConfig::parse(&text, Path::new("f")).unwrap_err();
            assert!(err.key.as_deref().unwrap().starts_with("device"), "{err}");
            assert!(err.line.is_some(), "{err}");
        }
    }

    #[test]
    fn xattr_table_holds_device_labels() {
        let text = "[xattr.\"/dev/dri/renderD128\"]\n\"security.selinux\" = \"system_u:object_r:dri_device_t:s0\"\n";
        let c = FixtureConfig::parse(text, Path::new("f")).unwrap();
        assert_eq!(
            c.xattr["/dev/dri/renderD128"]["security.selinux"],
            "system_u:object_r:dri_device_t:s0"
        );
        // Written back the same way a snapshot writes it.
        let again = FixtureConfig::parse(&toml::to_string(&c).unwrap(), Path::new("f")).unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn malformed_xattr_entries_are_errors_naming_the_key() {
        for (path, name, value) in [
            ("dev/kfd", "security.selinux", "x"),
            ("/dev/../etc/kfd", "security.selinux", "x"),
            ("/dev/kfd", "selinux", "x"),
            ("/dev/kfd", "security.", "x"),
            ("/dev/kfd", "security.selinux", "a\\u0000b"),
        ] {
            let text = format!("[xattr.\"{path}\"]\n\"{name}\" = \"{value}\"\n");
            let err = FixtureConfig::parse(&text, Path::new("f")).unwrap_err();
            assert!(err.key.as_deref().unwrap().starts_with("xattr."), "{err}");
            assert_eq!(err.line, Some(1), "{err}");
        }
        let long = "x".repeat(XATTR_VALUE_MAX + 1);
        let text = format!("[xattr.\"/dev/kfd\"]\n\"security.selinux\" = \"{long}\"\n");
        assert!(FixtureConfig::parse(&text, Path::new("f")).is_err());
    }
}
