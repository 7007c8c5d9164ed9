//! The container around the probe and what it does to KFD's device nodes: which runtime made
//! it (from the files each leaves), whether it runs in a user namespace (unprivileged), how the
//! filesystem holding `/dev/kfd` and the render nodes is mounted (`noexec`, `nodev`), and the
//! Linux security modules: which are active, SELinux's mode and booleans, the probe's own
//! label, and the labels on the device nodes.
//!
//! `facts/platform.rs` keeps the engine markers it always had (`/.dockerenv`,
//! `/run/.containerenv`, the `container` variable); the kind here is decided from those and
//! the files below, never by reading them twice.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::access::DeviceFacts;
use crate::facts::platform::PlatformFacts;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// systemd's record of the container manager (`lxc`, `docker`, `podman`, `systemd-nspawn`…),
/// written by the manager or by systemd as PID 1 (systemd's CONTAINER_INTERFACE).
pub const SYSTEMD_CONTAINER: &str = "/run/systemd/container";
/// The probe's cgroups; v1 paths name the runtime (`/docker/…`, `/kubepods/…`, `/lxc/…`).
pub const SELF_CGROUP: &str = "/proc/self/cgroup";
/// The probe's user-namespace uid map: `0 0 4294967295` in the initial namespace.
pub const UID_MAP: &str = "/proc/self/uid_map";
/// The probe's mounts, with per-mount options (proc(5)).
pub use crate::facts::mounts::MOUNTINFO;
/// The active Linux security modules, comma-separated.
pub const LSM: &str = "/sys/kernel/security/lsm";
/// SELinux: `1` enforcing, `0` permissive.
pub const SELINUX_ENFORCE: &str = "/sys/fs/selinux/enforce";
/// SELinux booleans, one file each: `<current> <pending>`.
pub const SELINUX_BOOLEANS: &str = "/sys/fs/selinux/booleans";
/// The probe's own security context (SELinux) or AppArmor profile.
pub const ATTR_CURRENT: &str = "/proc/self/attr/current";
/// The security modules that give a process a label in `/proc/self/attr/current`.
const PROCESS_LABEL_LSMS: [&str; 3] = ["selinux", "apparmor", "smack"];
/// The extended attribute holding a file's SELinux label.
pub const SELINUX_XATTR: &str = "security.selinux";
/// The SELinux booleans that decide whether a container may use GPU device nodes
/// (containers/container-selinux#278: `container_use_dri_devices`; `container_use_devices` for
/// nodes labelled `device_t`).
pub const CONTAINER_BOOLEANS: [&str; 2] = ["container_use_dri_devices", "container_use_devices"];
/// Environment variable Kubernetes sets in every container of a pod.
pub const KUBERNETES_ENV: &str = "KUBERNETES_SERVICE_HOST";

/// Which runtime made the container.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContainerKind {
    /// Docker (`/.dockerenv`).
    Docker,
    /// Podman or another libpod engine (`/run/.containerenv`).
    Podman,
    /// LXC, LXD, Incus, Proxmox containers (`container=lxc`).
    Lxc,
    /// systemd-nspawn.
    SystemdNspawn,
    /// A Kubernetes pod (its service variable, or a `kubepods` cgroup).
    Kubernetes,
    /// A Flatpak sandbox (`/.flatpak-info`).
    Flatpak,
    /// Apptainer or Singularity (`/.singularity.d`).
    Apptainer,
    /// A manager that names itself otherwise (`container=oci`, …).
    Other(String),
}

impl ContainerKind {
    /// From a manager's own name (`container=`, `/run/systemd/container`).
    fn from_name(name: &str) -> Self {
        match name.trim() {
            "docker" => Self::Docker,
            "podman" => Self::Podman,
            "lxc" | "lxc-libvirt" | "lxd" | "incus" => Self::Lxc,
            "systemd-nspawn" => Self::SystemdNspawn,
            "flatpak" => Self::Flatpak,
            other => Self::Other(other.to_owned()),
        }
    }

    /// A short name for prose (`LXC`, `Docker`).
    pub fn name(&self) -> &str {
        match self {
            Self::Docker => "Docker",
            Self::Podman => "Podman",
            Self::Lxc => "LXC/LXD/Incus",
            Self::SystemdNspawn => "systemd-nspawn",
            Self::Kubernetes => "Kubernetes",
            Self::Flatpak => "Flatpak",
            Self::Apptainer => "Apptainer/Singularity",
            Self::Other(name) => name,
        }
    }
}

/// How the filesystem holding a device node is mounted (`/proc/self/mountinfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceMount {
    /// The device node.
    pub path: String,
    /// The mount point holding it.
    pub mount_point: String,
    /// The filesystem type (`devtmpfs`, `tmpfs`).
    pub fstype: String,
    /// The per-mount options (`rw,nosuid,noexec`).
    pub options: Vec<String>,
}

impl DeviceMount {
    /// Whether the mount has this per-mount option.
    pub fn has(&self, option: &str) -> bool {
        self.options.iter().any(|o| o == option)
    }
}

/// The container facts. Every field is `None` (or empty) when its source was not captured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContainerFacts {
    /// The runtime, when a marker names one.
    pub kind: Option<ContainerKind>,
    /// The markers that name it, source → value (besides the platform's engine markers).
    pub markers: BTreeMap<String, String>,
    /// `Some(true)` in a user namespace (the uid map is not the identity map: an unprivileged
    /// container), `Some(false)` in the initial one.
    pub user_namespace: Option<bool>,
    /// The uid map as read, its lines joined by `; `.
    pub uid_map: Option<String>,
    /// How the filesystems holding `/dev/kfd` and the render nodes are mounted.
    pub mounts: Vec<DeviceMount>,
    /// The active security modules.
    pub lsm: Option<Vec<String>>,
    /// SELinux enforcing (`true`) or permissive.
    pub selinux_enforcing: Option<bool>,
    /// The container booleans, name → current value; `None` when SELinux lists its booleans
    /// but the loaded policy has no such one. Empty when the booleans were not captured.
    pub selinux_booleans: BTreeMap<String, Option<bool>>,
    /// The probe's own security context or AppArmor profile.
    pub process_label: Option<String>,
    /// The SELinux label of each device node that has one, path → label.
    pub labels: BTreeMap<String, String>,
    /// What `/.flatpak-info` says, in a Flatpak sandbox.
    pub flatpak: Option<FlatpakInfo>,
}

/// The parts of `/.flatpak-info` that decide which devices the sandbox has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlatpakInfo {
    /// `[Application] name` (`ai.jan.Jan`).
    pub app: Option<String>,
    /// `[Instance] flatpak-version` (`1.16.1`).
    pub version: Option<String>,
    /// `[Context] devices`, split (`dri`, `all`, `kvm`, …).
    pub devices: Vec<String>,
}

impl FlatpakInfo {
    /// Reads the key file; unknown groups and keys are ignored, values are taken as written.
    pub fn parse(text: &str) -> Self {
        let mut info = Self::default();
        let mut group = "";
        for line in text.lines().map(str::trim) {
            if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                group = g;
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim();
            match (group, key.trim()) {
                ("Application", "name") => info.app = Some(value.to_owned()),
                ("Instance", "flatpak-version") => info.version = Some(value.to_owned()),
                ("Context", "devices") => {
                    info.devices = value
                        .split(';')
                        .filter(|d| !d.is_empty())
                        .map(str::to_owned)
                        .collect();
                }
                _ => {}
            }
        }
        info
    }

    /// Whether this Flatpak binds `/dev/kfd` for `devices=dri`: from 1.17.8 on
    /// (flatpak/flatpak#6648, merged for 1.18; before it only `devices=all` exposed it).
    /// `None` when the version is not known.
    pub fn dri_includes_kfd(&self) -> Option<bool> {
        let v: Vec<u32> = self
            .version
            .as_deref()?
            .split('.')
            .map_while(|p| p.parse().ok())
            .collect();
        (v.len() >= 2).then(|| {
            let patch = v.get(2).copied().unwrap_or(0);
            (v[0], v[1], patch) >= (1, 17, 8)
        })
    }
}

impl ContainerFacts {
    /// The mount holding a device node.
    pub fn mount_of(&self, path: &str) -> Option<&DeviceMount> {
        self.mounts.iter().find(|m| m.path == path)
    }

    /// Whether SELinux is among the active modules; `None` when the list was not captured.
    pub fn selinux_active(&self) -> Option<bool> {
        self.lsm.as_ref().map(|l| l.iter().any(|m| m == "selinux"))
    }

    /// The probe's own SELinux context and its type, unless SELinux is known to deny nothing
    /// (permissive, or not among the active modules). Inside a container selinuxfs is usually
    /// masked, and a confined process label is proof enough that SELinux is on.
    pub fn selinux_process(&self) -> Option<(&str, &str)> {
        if self.selinux_enforcing == Some(false) || self.selinux_active() == Some(false) {
            return None;
        }
        let label = self.process_label.as_deref()?;
        Some((label, selinux_type(label)?))
    }
}

/// The type of an SELinux context (`system_u:object_r:dri_device_t:s0` → `dri_device_t`).
pub fn selinux_type(context: &str) -> Option<&str> {
    context.split(':').nth(2).filter(|t| !t.is_empty())
}

impl Collect for ContainerFacts {
    type Needs<'a> = (
        &'a PlatformFacts,
        &'a [DeviceFacts],
        Option<&'a crate::facts::mounts::MountTable>,
    );
    type Output = Self;

    fn collect(
        source: &Source,
        (platform, devices, table): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let host = source.host();
        let mut markers = BTreeMap::new();
        let mut kinds: Vec<ContainerKind> = Vec::new();
        if let Some(text) = optional(root.read_value(SYSTEMD_CONTAINER), problems) {
            if !text.is_empty() {
                kinds.push(ContainerKind::from_name(&text));
                markers.insert(SYSTEMD_CONTAINER.to_owned(), text);
            }
        }
        // PID 1's environment (`container=` there) is not read: it is mode 0400 and guarded by
        // ptrace rules, refused even to root in many sandboxes, and under systemd the same name
        // is in /run/systemd/container.
        if let Some(engine) = platform.container_markers.get("env:container") {
            kinds.push(ContainerKind::from_name(engine));
        }
        if platform.container_markers.contains_key("/.dockerenv") {
            kinds.push(ContainerKind::Docker);
        }
        if platform
            .container_markers
            .contains_key("/run/.containerenv")
        {
            kinds.push(ContainerKind::Podman);
        }
        if platform
            .container_markers
            .contains_key(crate::facts::platform::APPTAINER_DIR)
        {
            kinds.push(ContainerKind::Apptainer);
        }
        if let Some(text) = optional(root.read_text(SELF_CGROUP), problems) {
            if let Some((kind, line)) = cgroup_kind(&text) {
                kinds.push(kind);
                markers.insert(SELF_CGROUP.to_owned(), line);
            }
        }
        let mut flatpak = None;
        if platform
            .container_markers
            .contains_key(crate::facts::platform::FLATPAK_INFO)
        {
            kinds.push(ContainerKind::Flatpak);
            flatpak = optional(
                root.read_text(crate::facts::platform::FLATPAK_INFO),
                problems,
            )
            .map(|t| FlatpakInfo::parse(&t));
        }
        if let Some(v) = host.env(KUBERNETES_ENV) {
            markers.insert(format!("env:{KUBERNETES_ENV}"), v);
            kinds.push(ContainerKind::Kubernetes);
        }
        // The most specific first: a pod's engine is Kubernetes' business, a named manager
        // beats a guess from a cgroup path, and an engine's own marker file beats a generic
        // name in `container=` (`oci`, which runc and crun-based tools set).
        let kind = kinds
            .iter()
            .find(|k| **k == ContainerKind::Kubernetes)
            .or_else(|| kinds.iter().find(|k| !matches!(k, ContainerKind::Other(_))))
            .or_else(|| kinds.first())
            .cloned();

        let uid_map = optional(root.read_text(UID_MAP), problems);
        let user_namespace = uid_map.as_deref().and_then(|m| {
            let verdict = is_user_namespace(m);
            if verdict.is_none() {
                let first = m.lines().next().unwrap_or_default();
                let shown: String = first.chars().take(80).collect();
                problems.push(Problem::new(
                    UID_MAP,
                    crate::text!("facts.uid-map-line", text = format!("{shown:?}")),
                ));
            }
            verdict
        });
        let uid_map = uid_map.map(|m| {
            m.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        });

        let present: Vec<&str> = devices
            .iter()
            .filter(|d| d.node.is_some())
            .map(|d| d.path.as_str())
            .collect();
        let mut mounts = Vec::new();
        if let Some(table) = table {
            {
                for path in &present {
                    if let Some(m) = table.holding(path) {
                        mounts.push(DeviceMount {
                            path: (*path).to_owned(),
                            mount_point: m.point.clone(),
                            fstype: m.fstype.clone(),
                            options: m.options.clone(),
                        });
                    }
                }
            }
        }

        let lsm = optional(root.read_value(LSM), problems).map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        });
        let selinux_enforcing =
            optional(root.read_value(SELINUX_ENFORCE), problems).and_then(|v| match v.as_str() {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            });
        let mut selinux_booleans = BTreeMap::new();
        if root.exists(SELINUX_BOOLEANS) {
            for name in CONTAINER_BOOLEANS {
                let path = format!("{SELINUX_BOOLEANS}/{name}");
                match root.read_value(&path) {
                    Ok(v) => match v.split_whitespace().next() {
                        Some("1") => selinux_booleans.insert(name.to_owned(), Some(true)),
                        Some("0") => selinux_booleans.insert(name.to_owned(), Some(false)),
                        _ => None,
                    },
                    Err(e) if e.is_not_found() => selinux_booleans.insert(name.to_owned(), None),
                    Err(e) => {
                        problems.push(e.into());
                        None
                    }
                };
            }
        }
        // Without a module that provides it the read answers EINVAL: no label, and no problem
        // either. When the active modules are known and none of them labels processes, it is
        // not read at all.
        let labels_processes = lsm
            .as_ref()
            .is_none_or(|l| l.iter().any(|m| PROCESS_LABEL_LSMS.contains(&m.as_str())));
        let process_label = labels_processes
            .then(|| root.read(ATTR_CURRENT).ok())
            .flatten()
            .and_then(|b| {
                let text = String::from_utf8_lossy(&b);
                let label = text.trim_end_matches(['\0', '\n']).trim();
                (!label.is_empty()).then(|| label.to_owned())
            });
        let labels = present
            .iter()
            .filter_map(|p| {
                host.xattr(p, SELINUX_XATTR)
                    .map(|label| ((*p).to_owned(), label))
            })
            .collect();

        Self {
            kind,
            markers,
            user_namespace,
            uid_map,
            mounts,
            lsm,
            selinux_enforcing,
            selinux_booleans,
            process_label,
            labels,
            flatpak,
        }
    }
}

/// The runtime a cgroup v1 path names, with the line that names it (v2 inside a cgroup
/// namespace is `0::/` and names nothing).
fn cgroup_kind(text: &str) -> Option<(ContainerKind, String)> {
    text.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        let kind = if path.contains("/kubepods") {
            ContainerKind::Kubernetes
        } else if path.contains("/docker/") || path.contains("/docker-") {
            ContainerKind::Docker
        } else if path.contains("/libpod-") || path.contains("/machine.slice/libpod") {
            ContainerKind::Podman
        } else if path.starts_with("/lxc/") || path.starts_with("/lxc.payload") {
            ContainerKind::Lxc
        } else {
            return None;
        };
        Some((kind, line.trim().to_owned()))
    })
}

/// `Some(false)` for the initial namespace's identity map (`0 0 4294967295`), `Some(true)` for
/// any other, `None` when the text has no mapping line.
fn is_user_namespace(text: &str) -> Option<bool> {
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect();
    if lines.is_empty() || lines.iter().any(|w| w.len() != 3) {
        return None;
    }
    Some(!(lines.len() == 1 && lines[0] == ["0", "0", "4294967295"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatpak_info_and_when_dri_binds_kfd() {
        let info = FlatpakInfo::parse(
            "[Application]\nname=ai.jan.Jan\n\n[Context]\nshared=network;ipc;\ndevices=dri;\n\n\
             [Instance]\nflatpak-version=1.16.1\n",
        );
        assert_eq!(info.app.as_deref(), Some("ai.jan.Jan"));
        assert_eq!(info.devices, ["dri"]);
        assert_eq!(info.dri_includes_kfd(), Some(false));
        let v = |version: &str| {
            FlatpakInfo {
                version: Some(version.to_owned()),
                ..FlatpakInfo::default()
            }
            .dri_includes_kfd()
        };
        assert_eq!(v("1.17.7"), Some(false));
        assert_eq!(v("1.17.8"), Some(true));
        assert_eq!(v("1.18.0"), Some(true));
        assert_eq!(v("2.0"), Some(true));
        assert_eq!(v("garbage"), None);
        // A key outside its group, junk lines and an empty file are ignored.
        let odd = FlatpakInfo::parse("devices=all\n[Context]\n\0\u{1b}[31m\ndevices=\n");
        assert!(odd.devices.is_empty() && odd.app.is_none());
        assert_eq!(FlatpakInfo::parse(""), FlatpakInfo::default());
    }

    #[test]
    fn uid_maps() {
        assert_eq!(
            is_user_namespace("         0          0 4294967295\n"),
            Some(false)
        );
        assert_eq!(is_user_namespace("0 100000 65536\n"), Some(true));
        assert_eq!(is_user_namespace("0 1000 1\n1 100000 65536\n"), Some(true));
        assert_eq!(is_user_namespace(""), None);
        assert_eq!(is_user_namespace("0 0\n"), None);
    }

    #[test]
    fn markers_name_the_runtime() {
        assert_eq!(ContainerKind::from_name("lxc\n"), ContainerKind::Lxc);
        assert_eq!(
            cgroup_kind("12:devices:/docker/0123abcd\n").map(|k| k.0),
            Some(ContainerKind::Docker)
        );
        assert_eq!(
            cgroup_kind("0::/kubepods/besteffort/pod1/abc\n").map(|k| k.0),
            Some(ContainerKind::Kubernetes)
        );
        assert_eq!(cgroup_kind("0::/\n"), None);
        assert_eq!(
            selinux_type("system_u:object_r:dri_device_t:s0"),
            Some("dri_device_t")
        );
        assert_eq!(selinux_type("unconfined"), None);
    }
}
