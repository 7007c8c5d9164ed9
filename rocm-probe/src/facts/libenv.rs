//! Layer 5: the environment the ROCm libraries run in, beyond their files — where MIOpen keeps
//! its user databases and on what kind of mount, a pip-installed `amdsmi` Python package beside
//! the frameworks, and the copy-engine variables ROCr reads.
//!
//! - MIOpen: its user database directory is `MIOPEN_USER_DB_PATH`, else `$HOME/.config/miopen`;
//!   its kernel cache `MIOPEN_CUSTOM_CACHE_DIR`, else `$HOME/.cache/miopen` (MIOpen's
//!   `db_path.cpp.in`). The mount holding each is the longest mount point of
//!   `/proc/self/mountinfo` (proc(5): mount point, mount options, file system type) that is a
//!   prefix of the path, compared by path components without resolving links; a fixture
//!   without that file has no mounts captured.
//! - `amdsmi`: the `amdsmi-<version>.dist-info` of a framework site directory
//!   ([`SiteDir::amdsmi`](crate::facts::frameworks::SiteDir::amdsmi)).
//! - The variables of `rocm-probe/data/environment.toml` ([`SETTINGS`]), read by name.

pub mod data;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::mounts::MountTable;
use crate::source::Source;
use crate::source::problem::Problem;

/// One row of `data/environment.toml`: a value of a variable and what its reader does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The variable.
    pub variable: &'static str,
    /// The value.
    pub value: &'static str,
    /// What reads it (`ROCr`).
    pub reader: &'static str,
    /// The catalogue message that says what it does.
    pub message: &'static str,
    /// The release that fixed what the setting works around.
    pub fixed_in: Option<(u32, u32)>,
    /// Where the reader's handling of it is written.
    pub source: &'static str,
    /// The public report of what it works around.
    pub report: Option<&'static str>,
}

include!(concat!(env!("OUT_DIR"), "/environment.rs"));

/// The mount table of the probing process (proc(5)).
pub use crate::facts::mounts::MOUNTINFO;
/// MIOpen's user database directory, when set.
pub const MIOPEN_USER_DB_PATH: &str = "MIOPEN_USER_DB_PATH";
/// MIOpen's kernel cache directory, when set.
pub const MIOPEN_CUSTOM_CACHE_DIR: &str = "MIOPEN_CUSTOM_CACHE_DIR";
/// MIOpen's default user database directory under `$HOME`.
pub const MIOPEN_DEFAULT_USER_DB: &str = ".config/miopen";
/// MIOpen's default kernel cache directory under `$HOME`.
pub const MIOPEN_DEFAULT_CACHE: &str = ".cache/miopen";
/// The file system types MIOpen counts as networked (`IsNetworked` in MIOpen's
/// `src/expanduser.cpp`, added by ROCm/MIOpen#2092: NFS, SMB, SMB2, CIFS, Coda, OCFS2, AFS,
/// Lustre and Ceph magic numbers), as `/proc/self/mountinfo` names them.
pub const NETWORK_FS: [&str; 10] = [
    "nfs", "nfs4", "smbfs", "smb3", "cifs", "coda", "ocfs2", "afs", "lustre", "ceph",
];

/// One mount of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// Where it is mounted.
    pub point: String,
    /// The file system type (`nfs4`, `ext4`). The mount source (a server's name) is not kept:
    /// the type is what matters, and reports are pasted in public.
    pub fstype: String,
    /// Whether it is mounted read-only.
    pub read_only: bool,
}

impl Mount {
    /// Whether MIOpen counts the file system as networked.
    pub fn networked(&self) -> bool {
        NETWORK_FS.contains(&self.fstype.as_str())
    }
}

/// Which of MIOpen's directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MiopenRole {
    /// The user performance and find databases.
    UserDb,
    /// The compiled-kernel cache.
    Cache,
}

/// One of MIOpen's per-user directories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MiopenDir {
    /// Which one.
    pub role: MiopenRole,
    /// The directory.
    pub path: String,
    /// The variable that set it; `None` for the default under `$HOME`.
    pub from_env: Option<&'static str>,
    /// The mount it is on, when the mount table was captured.
    pub mount: Option<Mount>,
}

/// A variable of [`SETTINGS`] that is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvSetting {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// The row for this value; `None` when the reader takes no such value (it then keeps its
    /// default).
    pub setting: Option<Setting>,
}

/// Layer 5's environment facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LibEnvFacts {
    /// Whether the mount table was read.
    pub mounts_captured: bool,
    /// MIOpen's user directories (none when neither variable nor `HOME` is set).
    pub miopen: Vec<MiopenDir>,
    /// The variables of [`SETTINGS`] that are set, in the table's order.
    pub settings: Vec<EnvSetting>,
}

impl Collect for LibEnvFacts {
    type Needs<'a> = Option<&'a MountTable>;
    type Output = Self;

    fn collect(source: &Source, mounts: Self::Needs<'_>, _: &mut Vec<Problem>) -> Self {
        let host = source.host();
        let home = host
            .env("HOME")
            .map(|h| h.trim_end_matches('/').to_owned())
            .filter(|h| h.starts_with('/'));
        let mut miopen = Vec::new();
        for (role, var, default) in [
            (
                MiopenRole::UserDb,
                MIOPEN_USER_DB_PATH,
                MIOPEN_DEFAULT_USER_DB,
            ),
            (
                MiopenRole::Cache,
                MIOPEN_CUSTOM_CACHE_DIR,
                MIOPEN_DEFAULT_CACHE,
            ),
        ] {
            let set = host.env(var).filter(|v| v.starts_with('/'));
            let (path, from_env) = match (set, &home) {
                (Some(v), _) => (v.trim_end_matches('/').to_owned(), Some(var)),
                (None, Some(h)) => (format!("{h}/{default}"), None),
                (None, None) => continue,
            };
            let mount = mounts.and_then(|m| m.holding(&path)).map(|m| Mount {
                point: m.point.clone(),
                fstype: m.fstype.clone(),
                read_only: m.read_only(),
            });
            miopen.push(MiopenDir {
                role,
                path,
                from_env,
                mount,
            });
        }
        let mut settings: Vec<EnvSetting> = Vec::new();
        for row in SETTINGS {
            if settings.iter().any(|s| s.variable == row.variable) {
                continue;
            }
            if let Some(value) = host.env(row.variable) {
                let setting = SETTINGS
                    .iter()
                    .find(|s| s.variable == row.variable && s.value == value)
                    .copied();
                settings.push(EnvSetting {
                    variable: row.variable,
                    value,
                    setting,
                });
            }
        }
        Self {
            mounts_captured: mounts.is_some(),
            miopen,
            settings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_file_systems_are_miopens_list() {
        let on = |fstype: &str| Mount {
            point: "/home".into(),
            fstype: fstype.into(),
            read_only: false,
        };
        assert!(on("nfs4").networked());
        assert!(!on("ext4").networked());
    }

    #[test]
    fn the_table_names_catalogued_messages_and_sources() {
        assert!(!SETTINGS.is_empty());
        for s in SETTINGS {
            assert!(s.source.starts_with("https://"));
            assert!(s.message.starts_with("libraries.env-"));
        }
    }
}
