//! What the probe learns about its own process and the device nodes: identity, environment,
//! device-node metadata. The live implementation asks the kernel; the fixture implementation
//! answers from `fixture.toml` and never looks at the real process.

use std::fmt::Debug;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use std::sync::Arc;

use crate::source::fixture::{DeviceNode, FixtureConfig, Identity, XATTR_VALUE_MAX};
use crate::source::record::{Record, Recorder};

/// The non-file facts about the probing process.
pub trait Host: Debug + Send + Sync {
    /// An environment variable of the probing process.
    fn env(&self, name: &str) -> Option<String>;
    /// Whether that variable, when set, is UTF-8 ([`Host::env`] decodes it lossily otherwise),
    /// so that a snapshot can refuse what it cannot reproduce.
    fn env_is_utf8(&self, _name: &str) -> bool {
        true
    }
    /// Who the probe runs as; `None` when not recorded (fixture without `[identity]`).
    fn identity(&self) -> Option<Identity>;
    /// A device node's metadata; `None` when it does not exist.
    fn device(&self, path: &str) -> Option<DeviceNode>;
    /// An extended attribute of a path (`security.selinux`), the path itself never followed
    /// when it is a symlink; `None` when the path or the attribute is absent, unreadable, not
    /// UTF-8 or longer than [`XATTR_VALUE_MAX`]. A trailing NUL (SELinux stores one) is dropped.
    fn xattr(&self, _path: &str, _name: &str) -> Option<String> {
        None
    }
}

/// The real process and machine.
#[derive(Debug, Default)]
pub struct LiveHost;

impl Host for LiveHost {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn env_is_utf8(&self, name: &str) -> bool {
        std::env::var_os(name).is_none_or(|v| v.to_str().is_some())
    }

    fn identity(&self) -> Option<Identity> {
        let gid = nix::unistd::getgid().as_raw();
        let mut groups: Vec<u32> = nix::unistd::getgroups()
            .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
            .unwrap_or_default();
        if !groups.contains(&gid) {
            groups.insert(0, gid);
        }
        Some(Identity {
            uid: nix::unistd::getuid().as_raw(),
            gid: Some(gid),
            groups,
        })
    }

    fn device(&self, path: &str) -> Option<DeviceNode> {
        let meta = std::fs::metadata(path).ok()?;
        let ft = meta.file_type();
        if !(ft.is_char_device() || ft.is_block_device()) {
            return None;
        }
        // The ACL of the node the metadata describes: `lgetxattr` on a link would read the
        // link's own (none).
        let (acl, acl_error) = match std::fs::canonicalize(path)
            .map_or(Ok(None), |real| crate::source::acl::read_live(&real))
        {
            Ok(acl) => (acl, None),
            Err(e) => (None, Some(e)),
        };
        Some(DeviceNode {
            path: path.to_owned(),
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
            acl,
            acl_error,
        })
    }

    fn xattr(&self, path: &str, name: &str) -> Option<String> {
        // lgetxattr(2): a symlink's own attributes, never its target's. The kernel caps a
        // value at 64 KiB; a longer one than the probe keeps is refused, not cut.
        let bytes = xattr::get(path, name).ok()??;
        xattr_text(bytes)
    }
}

/// An attribute value as text: without the trailing NUL SELinux stores, UTF-8, within
/// [`XATTR_VALUE_MAX`], no NUL inside.
fn xattr_text(mut bytes: Vec<u8>) -> Option<String> {
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    if bytes.len() > XATTR_VALUE_MAX || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Answers from a fixture's `fixture.toml`.
#[derive(Debug)]
pub struct FixtureHost {
    config: FixtureConfig,
}

impl FixtureHost {
    /// Wraps a parsed fixture description.
    pub fn new(config: FixtureConfig) -> Self {
        Self { config }
    }
}

impl Host for FixtureHost {
    fn env(&self, name: &str) -> Option<String> {
        self.config.env.get(name).cloned()
    }

    fn identity(&self) -> Option<Identity> {
        self.config.identity.clone()
    }

    fn device(&self, path: &str) -> Option<DeviceNode> {
        self.config.devices.iter().find(|d| d.path == path).cloned()
    }

    fn xattr(&self, path: &str, name: &str) -> Option<String> {
        self.config.xattr.get(path)?.get(name).cloned()
    }
}

/// Wraps another host and records every answer it gives.
#[derive(Debug)]
pub struct RecordingHost {
    inner: Box<dyn Host>,
    recorder: Arc<Recorder>,
}

impl RecordingHost {
    /// Records `inner`'s answers into `recorder`.
    pub fn new(inner: Box<dyn Host>, recorder: Arc<Recorder>) -> Self {
        Self { inner, recorder }
    }
}

impl Host for RecordingHost {
    fn env(&self, name: &str) -> Option<String> {
        let value = self.inner.env(name);
        self.recorder.push(Record::Env {
            name: name.to_owned(),
            value: value.clone(),
        });
        if !self.inner.env_is_utf8(name) {
            self.recorder.push(Record::EnvNotUtf8 {
                name: name.to_owned(),
            });
        }
        value
    }

    fn env_is_utf8(&self, name: &str) -> bool {
        self.inner.env_is_utf8(name)
    }

    fn identity(&self) -> Option<Identity> {
        let id = self.inner.identity();
        self.recorder.push(Record::Identity(id.clone()));
        id
    }

    fn device(&self, path: &str) -> Option<DeviceNode> {
        let node = self.inner.device(path);
        self.recorder.push(Record::Device {
            path: path.to_owned(),
            node: node.clone(),
        });
        node
    }

    fn xattr(&self, path: &str, name: &str) -> Option<String> {
        let value = self.inner.xattr(path, name);
        self.recorder.push(Record::Xattr {
            path: path.to_owned(),
            name: name.to_owned(),
            value: value.clone(),
        });
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_host_never_reads_the_real_process() {
        let host = FixtureHost::new(FixtureConfig::default());
        // PATH is set in every test process; the fixture's environment is empty.
        assert!(std::env::var_os("PATH").is_some());
        assert_eq!(host.env("PATH"), None);
        assert_eq!(host.identity(), None);
        assert_eq!(host.device("/dev/null"), None);
    }

    #[test]
    fn live_host_reads_the_real_process() {
        let host = LiveHost;
        assert!(host.env("PATH").is_some());
        let id = host.identity().unwrap();
        assert_eq!(id.uid, nix::unistd::getuid().as_raw());
        let null = host.device("/dev/null").unwrap();
        assert_eq!(null.mode, 0o666);
        assert_eq!(host.device("/etc/hostname"), None);
        assert_eq!(host.xattr("/nonexistent/kfd", "security.selinux"), None);
    }

    /// A character device as logind leaves `/dev/kfd` for a seat user (`setfacl` from Debian's
    /// `acl` package writes the entry through the kernel), read as a live node: through a link
    /// too, whose own attributes are not the node's.
    #[test]
    fn live_host_reads_a_device_nodes_acl() {
        if !nix::unistd::Uid::effective().is_root() {
            assert!(std::env::var_os("CI").is_none(), "CI runs as root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let kfd = dir.path().join("kfd");
        let run = |cmd: &str, args: &[&str]| {
            let ok = std::process::Command::new(cmd)
                .args(args)
                .arg(&kfd)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{cmd} {args:?}");
        };
        std::process::Command::new("mknod")
            .args(["-m", "0660"])
            .arg(&kfd)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        let host = LiveHost;
        let path = kfd.to_str().unwrap();
        let plain = host.device(path).unwrap();
        assert_eq!(
            (plain.mode, plain.acl, plain.acl_error),
            (0o660, None, None)
        );
        run("setfacl", &["-m", "u:1000:rw"]);
        let link = dir.path().join("kfd-link");
        std::os::unix::fs::symlink(&kfd, &link).unwrap();
        for p in [path, link.to_str().unwrap()] {
            let node = host.device(p).unwrap();
            let acl = node.acl.expect("the ACL setfacl wrote");
            assert_eq!(
                acl.to_text(),
                [
                    "user::rw-",
                    "user:1000:rw-",
                    "group::rw-",
                    "mask::rw-",
                    "other::---"
                ]
            );
            assert_eq!(acl.mode_bits(), node.mode);
        }
    }

    #[test]
    fn xattr_values_are_bounded_text() {
        assert_eq!(
            xattr_text(b"system_u:object_r:dri_device_t:s0\0".to_vec()).as_deref(),
            Some("system_u:object_r:dri_device_t:s0")
        );
        assert_eq!(xattr_text(b"a\0b".to_vec()), None);
        assert_eq!(xattr_text(vec![0xff, 0xfe]), None);
        assert_eq!(xattr_text(vec![b'x'; XATTR_VALUE_MAX + 1]), None);
        assert!(xattr_text(vec![b'x'; XATTR_VALUE_MAX]).is_some());
    }

    #[test]
    fn fixture_host_answers_xattr_from_its_table() {
        let mut config = FixtureConfig::default();
        config.xattr.entry("/dev/kfd".into()).or_default().insert(
            "security.selinux".into(),
            "system_u:object_r:hsa_device_t:s0".into(),
        );
        let host = FixtureHost::new(config);
        assert_eq!(
            host.xattr("/dev/kfd", "security.selinux").as_deref(),
            Some("system_u:object_r:hsa_device_t:s0")
        );
        assert_eq!(host.xattr("/dev/kfd", "security.ima"), None);
        assert_eq!(host.xattr("/dev/dri/renderD128", "security.selinux"), None);
    }
}
