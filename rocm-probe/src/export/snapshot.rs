//! `snapshot`: writes a fixture holding exactly what a report read — the files with the bytes
//! that were read, the directory listings, symlinks and existence probes, and a `fixture.toml`
//! with the identity, the environment variables looked up and the device nodes — so that the
//! report of the snapshot equals the report of the machine (ARCHITECTURE.md §4a).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::export::redact::Redactor;
pub use crate::export::redact::redact_text;
use crate::msg;
use crate::report::{Options, Report};
use crate::source::Source;
use crate::source::fixture::{FIXTURE_FILE, FixtureConfig};
use crate::source::record::Record;
use crate::source::root::ReadErrorKind;

/// What a snapshot wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files written.
    pub files: usize,
    /// Symlinks written.
    pub links: usize,
    /// Reads that had failed, and so could not be copied (path and reason).
    pub failed: Vec<String>,
}

/// Runs a full report on `source` while recording, then writes the fixture into `dir` (which
/// must not exist or be empty), or into a gzip-compressed tar archive when `dir` ends in
/// `.tar.gz` or `.tgz`. Values that identify a machine or person are redacted unless `redact`
/// is false.
pub fn snapshot(source: Source, dir: &Path, redact: bool) -> io::Result<Summary> {
    // Learned before recording starts: what the redactor reads is not part of the snapshot.
    let redactor = redact.then(|| Redactor::for_source(&source));
    let (source, recorder) = source.record();
    let _ = Report::collect(&source, Options::default());
    // `agents`, `targets` and `ps` read a subset of what the report reads.
    let records = recorder.records();
    let redactor = redactor.map(|mut r| {
        r.learn_records(&records);
        r.for_fixture()
    });
    let name = dir.to_string_lossy();
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz")) {
        return write_with(&records, dir, redactor.as_ref());
    }
    // The archive's name is claimed first, so nothing can be put in its place meanwhile.
    let file = create_archive(dir)?;
    let result = write_archive(&records, dir, file, redactor.as_ref());
    if result.is_err() {
        let _ = std::fs::remove_file(dir);
    }
    result
}

/// Writes the fixture into a private staging directory next to the archive (same filesystem,
/// unpredictable name, removed when dropped), then packs it into `file`.
fn write_archive(
    records: &[Record],
    archive: &Path,
    file: File,
    redactor: Option<&Redactor>,
) -> io::Result<Summary> {
    let parent = archive
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let staging = tempfile::Builder::new()
        .prefix(".rocm-probe-snapshot-")
        .tempdir_in(parent)
        .map_err(|e| at(parent, &e))?;
    let tree = staging.path().join("snapshot");
    let summary = write_with(records, &tree, redactor)?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    tar.append_dir_all("snapshot", &tree)
        .map_err(|e| at(archive, &e))?;
    tar.into_inner()?.finish().map_err(|e| at(archive, &e))?;
    Ok(summary)
}

/// Creates the archive file, refusing anything already at `path` — a file, a symlink (even a
/// dangling one: it would be written at its target), a FIFO (opening it would wait), a device
/// or a directory. `O_EXCL` makes the same refusal atomic; the file is private until whole.
fn create_archive(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            msg!("snapshot.archive-exists", path = path.display()),
        ));
    }
    let file = crate::source::atomic::create_new(path, 0o600).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => io::Error::new(
            io::ErrorKind::AlreadyExists,
            msg!("snapshot.archive-exists", path = path.display()),
        ),
        _ => at(path, &e),
    })?;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
        .map_err(|e| at(path, &e))?;
    Ok(file)
}

/// An I/O error that names the path it happened at.
fn at(path: &Path, e: &io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        msg!("snapshot.io", path = path.display(), error = e),
    )
}

/// Creates the directories from `root` (exclusive) down to `dir` one level at a time; an
/// existing level must be a real directory, never a symlink.
fn make_dirs(root: &Path, dir: &Path) -> io::Result<()> {
    let Ok(rel) = dir.strip_prefix(root) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            msg!("snapshot.has-dotdot", path = dir.display()),
        ));
    };
    let mut here = root.to_path_buf();
    for part in rel.components() {
        here.push(part);
        match std::fs::create_dir(&here) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let real_dir = std::fs::symlink_metadata(&here).is_ok_and(|m| m.is_dir());
                if !real_dir {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        msg!("snapshot.not-a-directory", path = here.display()),
                    ));
                }
            }
            Err(e) => return Err(at(&here, &e)),
        }
    }
    Ok(())
}

/// Creates a new file (never an existing one, never through a symlink) below `root`.
fn create_file(root: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        make_dirs(root, parent)?;
    }
    let mut file = crate::source::atomic::create_new(path, 0o644).map_err(|e| at(path, &e))?;
    file.write_all(bytes).map_err(|e| at(path, &e))
}

/// Writes recorded accesses as a fixture, redacted with what the records themselves name when
/// `redact` is set.
pub fn write(records: &[Record], dir: &Path, redact: bool) -> io::Result<Summary> {
    let redactor = redact.then(|| {
        let mut r = Redactor::default();
        r.learn_records(records);
        r.for_fixture()
    });
    write_with(records, dir, redactor.as_ref())
}

/// Writes recorded accesses as a fixture, every path, link target, directory entry, file and
/// `fixture.toml` value through `redactor` when there is one.
fn write_with(records: &[Record], dir: &Path, redactor: Option<&Redactor>) -> io::Result<Summary> {
    let redact = redactor.is_some();
    let path_of = |p: &str| redactor.map_or_else(|| p.to_owned(), |r| r.path(p));
    crate::source::atomic::output_dir(dir, true).map_err(|e| at(dir, &e))?;
    let inside = |abs: &str| -> io::Result<PathBuf> {
        let abs = path_of(abs);
        let rel = abs.trim_start_matches('/');
        if rel.split('/').any(|c| c == "..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                msg!("snapshot.has-dotdot", path = abs),
            ));
        }
        Ok(dir.join(rel))
    };
    let mut summary = Summary::default();
    let mut config = FixtureConfig {
        description: Some(format!(
            "snapshot written by rocm-probe {}{}",
            env!("CARGO_PKG_VERSION"),
            if redact {
                " (identifying values redacted)"
            } else {
                ""
            }
        )),
        ..FixtureConfig::default()
    };
    let moved = Moved::new(records);
    let inside_as_live = |abs: &str| inside(&moved.path(abs, true));
    let inside_link = |abs: &str| inside(&moved.path(abs, false));
    let mut written: BTreeSet<String> = BTreeSet::new();
    let mut placeholders: BTreeMap<PathBuf, bool> = BTreeMap::new();
    // Symlinks are made after the files: while files are written no symlink exists in the
    // snapshot, so no write can be redirected through one (an absolute target would lead out).
    let mut links: Vec<(PathBuf, String)> = Vec::new();
    let mut undecodable: Vec<PathBuf> = Vec::new();
    let mut unset: Vec<String> = Vec::new();
    for record in records {
        match record {
            Record::File { path, bytes } => {
                // Read by two names (`/lib/x` and `/usr/lib/x` when /lib leads to usr/lib):
                // written once, where the machine has it.
                let live = moved.path(path, true);
                if !written.insert(live.clone()) {
                    continue;
                }
                let target = inside(&live)?;
                let bytes = match redactor {
                    Some(r) => r.file(path, bytes),
                    None => bytes.clone(),
                };
                create_file(dir, &target, &bytes)?;
                summary.files += 1;
            }
            Record::Link { path, target } => links.push((inside_link(path)?, path_of(target))),
            Record::Dir { path, entries } => {
                let at = inside_as_live(path)?;
                make_dirs(dir, &at)?;
                for e in entries {
                    // Listed but never read (a misnamed node directory, a PCI function of
                    // another vendor's child): keep the name so the listing is the same.
                    placeholders.entry(at.join(path_of(e))).or_insert(true);
                }
            }
            Record::Exists {
                path,
                dir: Some(is_dir),
            } => {
                placeholders.insert(inside_as_live(path)?, *is_dir);
            }
            Record::Exists { dir: None, .. } => {}
            // Absence is reproduced by not writing the path.
            Record::Failed {
                error: ReadErrorKind::NotFound,
                ..
            } => {}
            // A path read as the wrong kind (`read_link` on a regular file to learn that it is
            // not a link): the path itself is reproduced by its other records.
            Record::Failed {
                error: ReadErrorKind::WrongType,
                ..
            } => {}
            Record::Failed { path, error } => {
                summary.failed.push(format!("{}: {error}", path_of(path)))
            }
            Record::Env {
                name,
                value: Some(v),
            } => {
                config.env.insert(name.clone(), v.clone());
            }
            Record::Env { value: None, .. } => {}
            // Not reproducible as it is: refused, by name, rather than written altered.
            Record::EntryNotUtf8 { dir, lossy } => {
                let path = format!("{}/{lossy}", dir.trim_end_matches('/'));
                let reason = msg!("snapshot.name-not-utf8", name = format!("{lossy:?}"));
                summary.failed.push(format!("{}: {reason}", path_of(&path)));
                undecodable.push(inside(&path)?);
            }
            Record::EnvNotUtf8 { name } => {
                summary
                    .failed
                    .push(format!("env:{name}: {}", msg!("snapshot.env-not-utf8")));
                unset.push(name.clone());
            }
            Record::Identity(id) => config.identity = id.clone(),
            Record::Active(a) => config.active = Some((**a).clone()),
            Record::Device {
                node: Some(node), ..
            } => {
                if let Some(e) = node.acl_error {
                    let reason = msg!("snapshot.acl-not-recorded", reason = e.text());
                    summary
                        .failed
                        .push(format!("device:{}: {reason}", node.path));
                }
                if !config.devices.iter().any(|d| d.path == node.path) {
                    config.devices.push(node.clone());
                }
            }
            Record::Device { node: None, .. } => {}
            Record::Xattr {
                path,
                name,
                value: Some(v),
            } => {
                config
                    .xattr
                    .entry(path.clone())
                    .or_default()
                    .insert(name.clone(), v.clone());
            }
            Record::Xattr { value: None, .. } => {}
        }
    }
    // Links after the files (so no write goes through one), placeholders last and never below
    // a link (an absolute target would lead out of the snapshot, into the host).
    for (at, target) in links {
        if std::fs::symlink_metadata(&at).is_err() && !below_symlink(dir, &at) {
            if let Some(parent) = at.parent() {
                make_dirs(dir, parent)?;
            }
            std::os::unix::fs::symlink(&target, &at).map_err(|e| self::at(&at, &e))?;
            summary.links += 1;
        }
    }
    for path in &undecodable {
        placeholders.remove(path);
    }
    for name in &unset {
        config.env.remove(name);
    }
    for (path, is_dir) in placeholders {
        if std::fs::symlink_metadata(&path).is_ok() || below_symlink(dir, &path) {
            continue;
        }
        if is_dir {
            make_dirs(dir, &path)?;
        } else {
            create_file(dir, &path, b"")?;
        }
    }
    let mut value = toml::Value::try_from(&config).map_err(io::Error::other)?;
    if let Some(r) = redactor {
        redact_strings(&mut value, r);
    }
    let text = toml::to_string(&value).map_err(io::Error::other)?;
    create_file(dir, &dir.join(FIXTURE_FILE), text.as_bytes())?;
    Ok(summary)
}

/// Whether a directory between `root` and `path` is a symlink.
fn below_symlink(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return true;
    };
    let mut at = root.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}

/// Directories recorded as symlinks with records below them (a live machine's `/bin` →
/// `usr/bin`): what is below is written where the link leads, and the link itself is made, so
/// that relative links inside resolve in the snapshot as they did on the machine.
struct Moved {
    /// Link path → where it leads (absolute, normalized; never above the root).
    links: BTreeMap<String, String>,
}

impl Moved {
    fn new(records: &[Record]) -> Self {
        let paths: Vec<&str> = records
            .iter()
            .filter_map(|r| match r {
                Record::File { path, .. }
                | Record::Dir { path, .. }
                | Record::Link { path, .. }
                | Record::Exists { path, .. } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        let mut links = BTreeMap::new();
        for r in records {
            let Record::Link { path, target } = r else {
                continue;
            };
            let below = format!("{path}/");
            if !paths.iter().any(|p| p.starts_with(&below)) {
                continue;
            }
            let joined = if target.starts_with('/') {
                target.clone()
            } else {
                let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
                format!("{parent}/{target}")
            };
            if let Some(to) = normalized(&joined) {
                if to != *path && !to.starts_with(&below) {
                    links.insert(path.clone(), to);
                }
            }
        }
        Self { links }
    }

    /// Where `abs` is on the machine: each recorded directory link on the way replaced by where
    /// it leads (`whole`: the path itself too, unless it is the link being written).
    fn path(&self, abs: &str, whole: bool) -> String {
        let mut p = abs.to_owned();
        // Bounded like the kernel's own symlink resolution.
        for _ in 0..40 {
            let hit = self.links.iter().find(|(link, _)| {
                p.strip_prefix(link.as_str())
                    .is_some_and(|rest| rest.starts_with('/') || (whole && rest.is_empty()))
            });
            let Some((link, to)) = hit else { break };
            p = format!("{to}{}", &p[link.len()..]);
        }
        p
    }
}

/// `/a/./b/../c` → `/a/c`; `None` when `..` would climb above `/`.
fn normalized(abs: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in abs.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Every string of `fixture.toml` (environment values, the active run's library paths, the
/// description); keys are names the format defines, or ids, and stay.
fn redact_strings(value: &mut toml::Value, redactor: &Redactor) {
    match value {
        toml::Value::String(s) => *s = redactor.text(s),
        toml::Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, redactor)),
        toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| redact_strings(v, redactor)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merged-/usr machine: `/bin` → `usr/bin`, and in it a relative link to
    /// `../libexec/…` (Debian's rocm-smi). Live, the probe reads both as `/bin/…`; the snapshot
    /// must place them under `usr/bin` and make `bin` the link, or the tool's link dangles.
    #[test]
    fn what_lies_below_a_linked_directory_is_written_where_the_link_leads() {
        let out = tempfile::tempdir().unwrap();
        let snap = out.path().join("snap");
        let link = |path: &str, target: &str| Record::Link {
            path: path.into(),
            target: target.into(),
        };
        let file = |path: &str, text: &str| Record::File {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        };
        let records = vec![
            link("/bin", "usr/bin"),
            link("/bin/rocm-smi", "../libexec/rocm_smi/rocm_smi.py"),
            file("/bin/rocminfo", "elf"),
            file("/usr/libexec/rocm_smi/rocm_smi.py", "py"),
            link("/lib", "usr/lib"),
            file("/lib/modprobe.d/a.conf", "one"),
            file("/usr/lib/modprobe.d/a.conf", "one"),
            // A link whose target climbs above the root moves nothing.
            link("/opt/x", "../../../../etc"),
            file("/opt/x/y", "z"),
        ];
        let summary = write(&records, &snap, false).unwrap();
        assert!(summary.failed.is_empty(), "{:?}", summary.failed);
        let is_link = |p: &str| {
            std::fs::symlink_metadata(snap.join(p)).is_ok_and(|m| m.file_type().is_symlink())
        };
        assert!(is_link("bin") && is_link("lib") && is_link("usr/bin/rocm-smi"));
        assert_eq!(
            std::fs::read(snap.join("usr/bin/rocminfo")).unwrap(),
            b"elf"
        );
        assert_eq!(
            std::fs::read(snap.join("usr/lib/modprobe.d/a.conf")).unwrap(),
            b"one"
        );
        assert_eq!(std::fs::read(snap.join("opt/x/y")).unwrap(), b"z");
        // Read back as a fixture, the tool's link resolves as it did on the machine.
        let root = crate::source::root::SysRoot::fixture(&snap);
        assert_eq!(root.read("/bin/rocm-smi").unwrap(), b"py");
        assert_eq!(root.read("/bin/rocminfo").unwrap(), b"elf");
        assert_eq!(normalized("/a/./b/../c"), Some("/a/c".into()));
        assert_eq!(normalized("/a/../.."), None);
    }

    #[test]
    fn nothing_is_written_through_a_recorded_symlink() {
        let host = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let snap = out.path().join("snap");
        let target = host.path().to_string_lossy().into_owned();
        let records = vec![
            Record::Link {
                path: "/opt/rocm".into(),
                target,
            },
            Record::Exists {
                path: "/opt/rocm/.info".into(),
                dir: Some(true),
            },
            Record::Exists {
                path: "/opt/rocm/bin/hipcc".into(),
                dir: Some(false),
            },
            Record::File {
                path: "/opt/rocm-6.2.0/.info/version".into(),
                bytes: b"6.2.0\n".to_vec(),
            },
        ];
        let summary = write(&records, &snap, false).unwrap();
        assert_eq!(summary.links, 1);
        assert!(
            std::fs::symlink_metadata(snap.join("opt/rocm"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_dir(host.path()).unwrap().count(),
            0,
            "wrote into the host"
        );
    }

    /// A live environment variable that is not UTF-8 (only the live host can hold one).
    #[derive(Debug)]
    struct Latin1Home;

    impl crate::source::host::Host for Latin1Home {
        fn env(&self, name: &str) -> Option<String> {
            (name == "HOME").then(|| "/home/caf\u{FFFD}".to_owned())
        }
        fn env_is_utf8(&self, name: &str) -> bool {
            name != "HOME"
        }
        fn identity(&self) -> Option<crate::source::fixture::Identity> {
            None
        }
        fn device(&self, _: &str) -> Option<crate::source::fixture::DeviceNode> {
            None
        }
    }

    #[test]
    fn a_non_utf8_environment_value_is_refused_not_altered() {
        use crate::source::host::{Host, RecordingHost};
        let recorder = std::sync::Arc::new(crate::source::record::Recorder::default());
        let host = RecordingHost::new(Box::new(Latin1Home), recorder.clone());
        host.env("HOME");
        host.env("PATH");
        let out = tempfile::tempdir().unwrap();
        let snap = out.path().join("snap");
        let summary = write(&recorder.records(), &snap, false).unwrap();
        assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
        assert!(
            summary.failed[0].starts_with("env:HOME: "),
            "{:?}",
            summary.failed
        );
        let toml = std::fs::read_to_string(snap.join(FIXTURE_FILE)).unwrap();
        assert!(!toml.contains("HOME"), "{toml}");
    }
}
