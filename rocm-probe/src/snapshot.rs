//! `snapshot`: writes a fixture holding exactly what a report read — the files with the bytes
//! that were read, the directory listings, symlinks and existence probes, and a `fixture.toml`
//! with the identity, the environment variables looked up and the device nodes — so that the
//! report of the snapshot equals the report of the machine (DESIGN §4).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use crate::fixture::{FIXTURE_FILE, FixtureConfig};
use crate::record::Record;
use crate::redact::Redactor;
pub use crate::redact::redact_text;
use crate::report::{Options, Report};
use crate::root::ReadErrorKind;
use crate::source::Source;

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
    if dir.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", dir.display()),
        ));
    }
    let staging = tempfile_dir(dir)?;
    let result =
        write_with(&records, &staging.join("snapshot"), redactor.as_ref()).and_then(|summary| {
            let file = std::fs::File::create(dir)?;
            let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            let mut tar = tar::Builder::new(gz);
            tar.follow_symlinks(false);
            tar.append_dir_all("snapshot", staging.join("snapshot"))?;
            tar.into_inner()?.finish()?;
            Ok(summary)
        });
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// A fresh staging directory next to the archive (same filesystem, cleaned up by the caller).
fn tempfile_dir(archive: &Path) -> io::Result<PathBuf> {
    let parent = archive
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for n in 0..100 {
        let candidate = parent.join(format!(".rocm-probe-snapshot-{}-{n}", std::process::id()));
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free staging directory name"))
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
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not empty", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let inside = |abs: &str| -> io::Result<PathBuf> {
        let abs = path_of(abs);
        let rel = abs.trim_start_matches('/');
        if rel.split('/').any(|c| c == "..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{abs}: has .."),
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
    let mut written: BTreeSet<String> = BTreeSet::new();
    let mut placeholders: BTreeMap<PathBuf, bool> = BTreeMap::new();
    // Symlinks are made after the files: while files are written no symlink exists in the
    // snapshot, so no write can be redirected through one (an absolute target would lead out).
    let mut links: Vec<(PathBuf, String)> = Vec::new();
    for record in records {
        match record {
            Record::File { path, bytes } => {
                if !written.insert(path.clone()) {
                    continue;
                }
                let target = inside(path)?;
                create_parent(&target)?;
                let bytes = match redactor {
                    Some(r) => r.file(path, bytes),
                    None => bytes.clone(),
                };
                std::fs::write(&target, bytes)?;
                summary.files += 1;
            }
            Record::Link { path, target } => links.push((inside(path)?, path_of(target))),
            Record::Dir { path, entries } => {
                let at = inside(path)?;
                std::fs::create_dir_all(&at)?;
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
                placeholders.insert(inside(path)?, *is_dir);
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
            Record::Identity(id) => config.identity = id.clone(),
            Record::Active(a) => config.active = Some((**a).clone()),
            Record::Device {
                node: Some(node), ..
            } => {
                if !config.devices.iter().any(|d| d.path == node.path) {
                    config.devices.push(node.clone());
                }
            }
            Record::Device { node: None, .. } => {}
        }
    }
    // Links after the files (so no write goes through one), placeholders last and never below
    // a link (an absolute target would lead out of the snapshot, into the host).
    for (at, target) in links {
        if std::fs::symlink_metadata(&at).is_err() && !below_symlink(dir, &at) {
            create_parent(&at)?;
            std::os::unix::fs::symlink(target, &at)?;
            summary.links += 1;
        }
    }
    for (path, is_dir) in placeholders {
        if std::fs::symlink_metadata(&path).is_ok() || below_symlink(dir, &path) {
            continue;
        }
        if is_dir {
            std::fs::create_dir_all(&path)?;
        } else {
            create_parent(&path)?;
            std::fs::write(&path, b"")?;
        }
    }
    let mut value = toml::Value::try_from(&config).map_err(io::Error::other)?;
    if let Some(r) = redactor {
        redact_strings(&mut value, r);
    }
    let text = toml::to_string(&value).map_err(io::Error::other)?;
    std::fs::write(dir.join(FIXTURE_FILE), text)?;
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

fn create_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) => std::fs::create_dir_all(p),
        None => Ok(()),
    }
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
}
