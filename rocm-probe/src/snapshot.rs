//! `snapshot`: writes a fixture holding exactly what a report read — the files with the bytes
//! that were read, the directory listings, symlinks and existence probes, and a `fixture.toml`
//! with the identity, the environment variables looked up and the device nodes — so that the
//! report of the snapshot equals the report of the machine (DESIGN §4).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use crate::fixture::{FIXTURE_FILE, FixtureConfig};
use crate::record::Record;
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
    let (source, recorder) = source.record();
    let _ = Report::collect(&source, Options::default());
    // `agents`, `targets` and `ps` read a subset of what the report reads.
    let name = dir.to_string_lossy();
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz")) {
        return write(&recorder.records(), dir, redact);
    }
    if dir.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", dir.display()),
        ));
    }
    let staging = tempfile_dir(dir)?;
    let result =
        write(&recorder.records(), &staging.join("snapshot"), redact).and_then(|summary| {
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

/// Writes recorded accesses as a fixture.
pub fn write(records: &[Record], dir: &Path, redact: bool) -> io::Result<Summary> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not empty", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let inside = |abs: &str| -> io::Result<PathBuf> {
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
    let mut links: Vec<(PathBuf, &str)> = Vec::new();
    for record in records {
        match record {
            Record::File { path, bytes } => {
                if !written.insert(path.clone()) {
                    continue;
                }
                let target = inside(path)?;
                create_parent(&target)?;
                let bytes = if redact {
                    redact_file(path, bytes)
                } else {
                    bytes.clone()
                };
                std::fs::write(&target, bytes)?;
                summary.files += 1;
            }
            Record::Link { path, target } => links.push((inside(path)?, target)),
            Record::Dir { path, entries } => {
                let at = inside(path)?;
                std::fs::create_dir_all(&at)?;
                for e in entries {
                    // Listed but never read (a misnamed node directory, a PCI function of
                    // another vendor's child): keep the name so the listing is the same.
                    placeholders.entry(at.join(e)).or_insert(true);
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
            Record::Failed { path, error } => summary.failed.push(format!("{path}: {error}")),
            Record::Env {
                name,
                value: Some(v),
            } => {
                let v = if redact { redact_home(v) } else { v.clone() };
                config.env.insert(name.clone(), v);
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
    let text = toml::to_string(&config).map_err(io::Error::other)?;
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

/// Replaces what identifies a machine or a person: serial numbers and unique ids, the user and
/// host that built the kernel, the members of groups (user names).
fn redact_file(path: &str, bytes: &[u8]) -> Vec<u8> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if matches!(name, "serial_number" | "unique_id" | "product_number") {
        return b"REDACTED\n".to_vec();
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bytes.to_vec();
    };
    let out = match (path, name) {
        (_, "properties") if path.contains("/kfd/") => text
            .lines()
            .map(|l| match l.split_once(' ') {
                Some(("unique_id", _)) => "unique_id 0".to_owned(),
                _ => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        // Members are user names; so are the names of users' private groups (gid >= 1000).
        ("/etc/group", _) => text
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                match f.as_slice() {
                    [name, pw, gid, ..] => match gid.parse::<u32>() {
                        Ok(g) if g >= 1000 => format!("group{g}:{pw}:{gid}:"),
                        _ => format!("{name}:{pw}:{gid}:"),
                    },
                    _ => l.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        ("/proc/version", _) => match (text.find('('), text.find(')')) {
            (Some(a), Some(b)) if a < b && text[a..b].contains('@') => {
                format!("{}(user@host{}", &text[..a], &text[b..])
            }
            _ => text.to_owned(),
        },
        _ => return bytes.to_vec(),
    };
    let mut out = out.into_bytes();
    if text.ends_with('\n') && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out
}

/// `/home/alice/x` → `/home/user/x`.
/// Redacts free text the way a snapshot redacts files, for reports pasted where others read
/// them (`report --format markdown`): home directories (`/home/alice/…` → `/home/user/…`),
/// `user@host` pairs, and the GPUs' unique ids (`GPU-a1b2…`, `unique_id 1234…`).
pub fn redact_text(text: &str) -> String {
    let words: Vec<String> = text
        .split(' ')
        .map(|w| {
            let w = redact_home(w);
            // `(alice@box)` as /proc/version prints it, or a bare alice@box.
            let core = w.trim_matches(|c: char| "()[],;:'\"".contains(c));
            if let Some((user, host)) = core.split_once('@')
                && !user.is_empty()
                && !host.is_empty()
                && !host.contains('/')
                && user
                    .chars()
                    .chain(host.chars())
                    .all(|c| c.is_alphanumeric() || "-_.".contains(c))
            {
                return w.replace(core, "user@host");
            }
            if let Some(id) = core.strip_prefix("GPU-")
                && id.len() >= 8
                && id.chars().all(|c| c.is_ascii_hexdigit())
            {
                return w.replace(core, "GPU-REDACTED");
            }
            w
        })
        .collect();
    let joined = words.join(" ");
    // `unique_id 1234…`: the value after the key.
    let mut out = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while let Some(i) = rest.find("unique_id") {
        let (head, tail) = rest.split_at(i + "unique_id".len());
        out.push_str(head);
        let sep_len = tail.len() - tail.trim_start_matches([' ', ':', '=']).len();
        let (sep, after) = tail.split_at(sep_len);
        let digits = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        out.push_str(sep);
        if sep_len > 0 && digits > 0 {
            out.push_str("REDACTED");
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn redact_home(value: &str) -> String {
    value
        .split(':')
        .map(|part| match part.strip_prefix("/home/") {
            Some(rest) => match rest.split_once('/') {
                Some((_, tail)) => format!("/home/user/{tail}"),
                None => "/home/user".to_owned(),
            },
            None => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(":")
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

    #[test]
    fn free_text_redaction() {
        assert_eq!(
            redact_text("loads /home/alice/venv/lib (alice@box) GPU-1f2e3d4c5b6a7980 ok"),
            "loads /home/user/venv/lib (user@host) GPU-REDACTED ok"
        );
        assert_eq!(
            redact_text("unique_id 1234567890 next"),
            "unique_id REDACTED next"
        );
        assert_eq!(
            redact_text("gfx90a:sramecc+:xnack- at 0000:03:00.0"),
            "gfx90a:sramecc+:xnack- at 0000:03:00.0"
        );
        assert_eq!(
            redact_text("packages@pytorch.org/x"),
            "packages@pytorch.org/x"
        );
    }

    #[test]
    fn redaction() {
        let props = b"simd_count 4\nunique_id 1234\nnum_xcc 1\n";
        assert_eq!(
            redact_file("/sys/class/kfd/kfd/topology/nodes/1/properties", props),
            b"simd_count 4\nunique_id 0\nnum_xcc 1\n"
        );
        assert_eq!(
            redact_file(
                "/etc/group",
                b"render:x:109:alice,bob\nvideo:x:44:\nalice:x:1000:\n"
            ),
            b"render:x:109:\nvideo:x:44:\ngroup1000:x:1000:\n"
        );
        assert_eq!(
            redact_file("/proc/version", b"Linux version 6.1 (alice@box) (gcc) #1\n"),
            b"Linux version 6.1 (user@host) (gcc) #1\n"
        );
        assert_eq!(
            redact_file("/sys/x/serial_number", b"0xABC\n"),
            b"REDACTED\n"
        );
        assert_eq!(redact_file("/proc/cmdline", b"quiet\n"), b"quiet\n");
        assert_eq!(
            redact_home("/home/alice/rocm/lib:/opt/rocm/lib"),
            "/home/user/rocm/lib:/opt/rocm/lib"
        );
    }
}
