//! `SysRoot`: every file the probe reads goes through here.
//!
//! The live machine is the root `/`; a fixture is a directory that mirrors absolute paths. Both
//! run the same reader code. In a fixture, symlinks are followed by hand so that an absolute
//! target resolves inside the fixture and nothing can resolve outside it; the live root lets the
//! kernel follow links, since sysfs is built out of them.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};

use crate::source::archive::Archive;
use crate::source::record::{Record, Recorder};

/// The largest file the probe reads whole. sysfs files are a page; anything bigger is not what
/// the probe expects and is refused rather than read.
pub const READ_CAP: u64 = 1 << 20;

/// How many symlinks one path may pass through before it counts as a loop (Linux's own bound).
const MAX_SYMLINKS: u32 = 40;

/// Why a path could not be read. The path is always the absolute path as the probe asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The absolute path the probe asked for (inside the root).
    pub path: String,
    /// What went wrong.
    pub kind: ReadErrorKind,
}

/// The distinct ways a read can fail; checks treat "not found" and "permission denied"
/// differently, so they are never folded into a generic I/O error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The path does not exist.
    NotFound,
    /// The path exists but this identity may not read it.
    PermissionDenied,
    /// A directory was expected, or a file, and the other was found.
    WrongType,
    /// The path is a FIFO, socket or device: reading it could block forever or never end.
    NotRegular,
    /// The file is larger than [`READ_CAP`].
    TooLarge,
    /// The file holds NUL bytes inside it or is not UTF-8.
    NotText,
    /// A symlink inside a fixture points outside the fixture.
    EscapesRoot {
        /// The link target as written in the link.
        target: String,
    },
    /// Following symlinks did not end.
    SymlinkLoop,
    /// Any other I/O error.
    Io(crate::i18n::OsError),
}

impl ReadErrorKind {
    /// What went wrong, as a sentence made when shown.
    pub fn text(&self) -> crate::i18n::Text {
        match self {
            Self::NotFound => crate::text!("facts.read-not-found"),
            Self::PermissionDenied => crate::text!("facts.read-permission-denied"),
            Self::WrongType => crate::text!("facts.read-wrong-type"),
            Self::NotRegular => crate::text!("facts.read-not-regular"),
            Self::TooLarge => crate::text!("facts.read-too-large", cap = READ_CAP),
            Self::NotText => crate::text!("facts.read-not-text"),
            Self::EscapesRoot { target } => {
                crate::text!("facts.read-escapes-root", target = format!("{target:?}"))
            }
            Self::SymlinkLoop => crate::text!("facts.read-symlink-loop"),
            Self::Io(e) => crate::text!("facts.read-io", error = e.clone()),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind)
    }
}

impl fmt::Display for ReadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    fn new(path: &str, kind: ReadErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            kind,
        }
    }

    fn from_io(path: &str, err: &io::Error) -> Self {
        let kind = match err.kind() {
            io::ErrorKind::NotFound => ReadErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => ReadErrorKind::PermissionDenied,
            io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory => ReadErrorKind::WrongType,
            _ => match err.raw_os_error() {
                Some(libc::ELOOP) => ReadErrorKind::SymlinkLoop,
                // sysfs answers EPERM where a device cgroup hides a GPU.
                Some(libc::EPERM) => ReadErrorKind::PermissionDenied,
                _ => ReadErrorKind::Io(err.into()),
            },
        };
        Self::new(path, kind)
    }

    /// True when the path does not exist; most sysfs files are optional.
    pub fn is_not_found(&self) -> bool {
        self.kind == ReadErrorKind::NotFound
    }
}

/// A root directory that absolute paths are mapped into.
#[derive(Debug)]
pub struct SysRoot {
    base: PathBuf,
    fixture: bool,
    /// Resolved real directories by logical path, so that each directory's symlinks are
    /// followed once per run rather than once per file.
    dirs: Mutex<HashMap<String, PathBuf>>,
    /// When set, every access is logged (for `snapshot`).
    recorder: Option<Arc<Recorder>>,
    /// The fixture directory, open, for `openat2` lookups that cannot leave it.
    base_fd: Option<OwnedFd>,
    /// Cleared when the kernel refuses `openat2` (before Linux 5.6, or a seccomp filter).
    openat2: AtomicBool,
    /// A fixture archive read into memory: every read is answered from it, none from disk.
    archive: Option<Arc<Archive>>,
}

/// A file's permission bits and owner (an archive member's as recorded in the archive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    /// Permission bits.
    pub mode: u32,
    /// Owner's uid.
    pub uid: u32,
    /// Group's gid.
    pub gid: u32,
}

/// A file's bytes as the code-object reader takes them: a path to map, or memory.
#[derive(Debug, Clone)]
pub enum Contents {
    /// A file on disk, mapped by the reader.
    File(PathBuf),
    /// A member of a fixture archive.
    Memory(Arc<[u8]>),
}

impl SysRoot {
    /// The live machine.
    pub fn live() -> Self {
        Self {
            base: PathBuf::from("/"),
            fixture: false,
            dirs: Mutex::default(),
            recorder: None,
            base_fd: None,
            openat2: AtomicBool::new(false),
            archive: None,
        }
    }

    /// A fixture archive already read into memory; `path` names it in the report.
    pub fn archive(path: impl Into<PathBuf>, archive: Archive) -> Self {
        Self {
            base: path.into(),
            fixture: true,
            dirs: Mutex::default(),
            recorder: None,
            base_fd: None,
            openat2: AtomicBool::new(false),
            archive: Some(Arc::new(archive)),
        }
    }

    /// A fixture directory that mirrors absolute paths.
    pub fn fixture(base: impl Into<PathBuf>) -> Self {
        let base = base.into();
        let base_fd = nix::fcntl::open(
            &base,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .ok();
        Self {
            openat2: AtomicBool::new(base_fd.is_some()),
            base,
            fixture: true,
            dirs: Mutex::default(),
            recorder: None,
            base_fd,
            archive: None,
        }
    }

    /// Logs every access into `recorder` from now on.
    pub fn with_recorder(mut self, recorder: Arc<Recorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Whether accesses are being recorded (a snapshot is being taken).
    pub fn recording(&self) -> bool {
        self.recorder.is_some()
    }

    /// Records `bytes` as the content of `abs` for a snapshot, for files the caller read by
    /// other means than [`SysRoot::read`]: a memory-mapped binary of a gigabyte is recorded as
    /// a small stand-in that reads back the same (see `fatbin`). Built only when recording.
    pub fn record_file(&self, abs: &str, bytes: impl FnOnce() -> Vec<u8>) {
        self.log(|| Record::File {
            path: abs.to_owned(),
            bytes: bytes(),
        });
    }

    /// Records a fact that is not a file (the active probes' results) for a snapshot.
    pub fn record(&self, record: impl FnOnce() -> Record) {
        self.log(record);
    }

    fn log(&self, record: impl FnOnce() -> Record) {
        if let Some(r) = &self.recorder {
            let record = record();
            if let Record::File { path, .. }
            | Record::Dir { path, .. }
            | Record::Link { path, .. }
            | Record::Exists { path, .. } = &record
            {
                self.record_ancestor_links(r, path);
            }
            r.push(record);
        }
    }

    /// Live, records the directories on the way to `abs` that are symlinks (`/bin` →
    /// `usr/bin` on a merged-/usr system, `/sys/class/drm/card0` → `../../devices/…`), so that
    /// a snapshot places what lies below them where the machine has it and makes the links:
    /// a relative link inside such a directory (`/bin/rocm-smi` →
    /// `../libexec/rocm_smi/rocm_smi.py`) then resolves in the snapshot as it does live. A
    /// fixture's own links are recorded as they are read; each directory is asked once.
    fn record_ancestor_links(&self, recorder: &Recorder, abs: &str) {
        if self.fixture || self.archive.is_some() || !abs.starts_with('/') {
            return;
        }
        let mut end = 0;
        while let Some(next) = abs[end + 1..].find('/') {
            end += 1 + next;
            let dir = &abs[..end];
            if !recorder.first_ancestor(dir) {
                continue;
            }
            if let Ok(target) = self.read_link_uncounted(dir) {
                recorder.push(Record::Link {
                    path: dir.to_owned(),
                    target,
                });
            }
        }
    }

    fn log_result<T>(
        &self,
        abs: &str,
        result: Result<T, ReadError>,
        ok: impl FnOnce(&T) -> Record,
    ) -> Result<T, ReadError> {
        self.log(|| match &result {
            Ok(v) => ok(v),
            Err(e) => Record::Failed {
                path: abs.to_owned(),
                error: e.kind.clone(),
            },
        });
        result
    }

    /// The directory absolute paths are mapped into (the archive, for a fixture archive).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Whether this root is a fixture rather than the live machine.
    pub fn is_fixture(&self) -> bool {
        self.fixture
    }

    /// Reads a whole file of at most [`READ_CAP`] bytes.
    pub fn read(&self, abs: &str) -> Result<Vec<u8>, ReadError> {
        let result = self.read_uncounted(abs);
        self.log_result(abs, result, |bytes| Record::File {
            path: abs.to_owned(),
            bytes: bytes.clone(),
        })
    }

    fn read_uncounted(&self, abs: &str) -> Result<Vec<u8>, ReadError> {
        if let Some(archive) = &self.archive {
            let data = archive.contents(abs)?;
            if data.len() as u64 > READ_CAP {
                return Err(ReadError::new(abs, ReadErrorKind::TooLarge));
            }
            return Ok(data.to_vec());
        }
        let fast = self.open_beneath(abs);
        let file = if let Some(opened) = fast {
            opened
        } else if self.fixture {
            // The directory is resolved (and cached); the last component is opened without
            // following a symlink, and only a symlink there takes the slow path.
            let (parent, name) = split_parent(abs);
            let candidate = self.resolve_dir(parent)?.join(name);
            match open_nonblocking(&candidate, libc::O_NOFOLLOW) {
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                    open_nonblocking(&self.walk(abs)?, 0)
                }
                other => other,
            }
        } else {
            open_nonblocking(Path::new(abs), 0)
        }
        .map_err(|e| ReadError::from_io(abs, &e))?;
        let meta = file.metadata().map_err(|e| ReadError::from_io(abs, &e))?;
        if meta.is_dir() {
            return Err(ReadError::new(abs, ReadErrorKind::WrongType));
        }
        if !meta.is_file() {
            return Err(ReadError::new(abs, ReadErrorKind::NotRegular));
        }
        // Sized by the cap, not by st_size: sysfs reports 4096 for every file and procfs 0.
        let mut buf = vec![0u8; 4096.min(meta.len() as usize + 1).max(64)];
        let mut file = file.take(READ_CAP + 1);
        let first = file
            .read(&mut buf)
            .map_err(|e| ReadError::from_io(abs, &e))?;
        buf.truncate(first);
        // A regular file (a fixture) that gave its whole st_size is done: no second read for
        // the end of file. sysfs and procfs sizes say nothing, so those read on to EOF.
        if self.fixture && first as u64 == meta.len() && first > 0 {
            return Ok(buf);
        }
        if first > 0 {
            file.read_to_end(&mut buf)
                .map_err(|e| ReadError::from_io(abs, &e))?;
        }
        if buf.len() as u64 > READ_CAP {
            return Err(ReadError::new(abs, ReadErrorKind::TooLarge));
        }
        Ok(buf)
    }

    /// The fast path of fixture reads: one `openat2` that follows no symlink and cannot leave
    /// the fixture. `None` sends the caller down the general path: a symlink on the way (which
    /// must be resolved inside the root by hand), an unusual spelling, or no `openat2`.
    fn open_beneath(&self, abs: &str) -> Option<io::Result<File>> {
        let fd = self.base_fd.as_ref()?;
        if !self.openat2.load(Ordering::Relaxed) {
            return None;
        }
        let rel = abs.trim_start_matches('/');
        if rel.is_empty()
            || rel
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return None;
        }
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        match nix::fcntl::openat2(fd, rel, how) {
            Ok(owned) => Some(Ok(File::from(owned))),
            Err(Errno::ELOOP | Errno::EXDEV | Errno::EAGAIN) => None,
            Err(Errno::ENOSYS | Errno::EPERM) => {
                self.openat2.store(false, Ordering::Relaxed);
                None
            }
            Err(e) => Some(Err(io::Error::from(e))),
        }
    }

    /// Reads a text file: trailing NUL padding (some drm files are NUL-padded pages) is dropped;
    /// NULs elsewhere or invalid UTF-8 make it [`ReadErrorKind::NotText`].
    pub fn read_text(&self, abs: &str) -> Result<String, ReadError> {
        let mut bytes = self.read(abs)?;
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        if bytes.contains(&0) {
            return Err(ReadError::new(abs, ReadErrorKind::NotText));
        }
        String::from_utf8(bytes).map_err(|_| ReadError::new(abs, ReadErrorKind::NotText))
    }

    /// Reads a one-value file and trims it.
    pub fn read_value(&self, abs: &str) -> Result<String, ReadError> {
        self.read_text(abs).map(|s| s.trim().to_owned())
    }

    /// Lists a directory's entry names, sorted bytewise (callers sort numerically where needed).
    pub fn read_dir(&self, abs: &str) -> Result<Vec<String>, ReadError> {
        let result = self.read_dir_uncounted(abs);
        let undecodable = result.as_ref().map(|(_, u)| u.clone()).unwrap_or_default();
        let result = self.log_result(abs, result.map(|(names, _)| names), |entries| Record::Dir {
            path: abs.to_owned(),
            entries: entries.clone(),
        });
        for lossy in undecodable {
            self.log(|| Record::EntryNotUtf8 {
                dir: abs.to_owned(),
                lossy,
            });
        }
        result
    }

    /// The entry names, and apart those that are not UTF-8 (as readers see them, lossily).
    fn read_dir_uncounted(&self, abs: &str) -> Result<(Vec<String>, Vec<String>), ReadError> {
        if let Some(archive) = &self.archive {
            // Member names were checked to be UTF-8 when the archive was read.
            return Ok((archive.read_dir(abs)?, Vec::new()));
        }
        let path = self.resolve_dir(abs)?;
        let entries = std::fs::read_dir(&path).map_err(|e| ReadError::from_io(abs, &e))?;
        let mut names = Vec::new();
        let mut undecodable = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ReadError::from_io(abs, &e))?;
            let name = entry.file_name();
            let lossy = name.to_string_lossy().into_owned();
            if name.to_str().is_none() {
                undecodable.push(lossy.clone());
            }
            names.push(lossy);
        }
        names.sort();
        Ok((names, undecodable))
    }

    /// The target of a symlink as written in it (not followed), e.g. a PCI function's
    /// `driver` link.
    pub fn read_link(&self, abs: &str) -> Result<String, ReadError> {
        let result = self.read_link_uncounted(abs);
        self.log_result(abs, result, |target| Record::Link {
            path: abs.to_owned(),
            target: target.clone(),
        })
    }

    fn read_link_uncounted(&self, abs: &str) -> Result<String, ReadError> {
        if let Some(archive) = &self.archive {
            return archive.read_link(abs);
        }
        let path = if self.fixture {
            let (parent, name) = split_parent(abs);
            self.resolve_dir(parent)?.join(name)
        } else {
            PathBuf::from(abs)
        };
        std::fs::read_link(&path)
            .map(|t| t.to_string_lossy().into_owned())
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => ReadError::new(abs, ReadErrorKind::WrongType),
                _ => ReadError::from_io(abs, &e),
            })
    }

    /// Whether a path exists (following symlinks inside the root).
    pub fn exists(&self, abs: &str) -> bool {
        let dir = match &self.archive {
            Some(archive) => archive.exists(abs),
            None => self
                .resolve(abs)
                .ok()
                .and_then(|p| std::fs::metadata(p).ok())
                .map(|m| m.is_dir()),
        };
        self.log(|| Record::Exists {
            path: abs.to_owned(),
            dir,
        });
        dir.is_some()
    }

    /// Whether `abs` can be looked up at all: `Ok` when it exists or is merely missing, the
    /// error when a symlink on the way escapes the fixture, loops, or is refused.
    pub fn check(&self, abs: &str) -> Result<(), ReadError> {
        match &self.archive {
            Some(archive) => archive.check(abs),
            None => match self.resolve(abs) {
                Err(e) if !e.is_not_found() => Err(e),
                _ => Ok(()),
            },
        }
    }

    /// In a fixture, whether the last component of `abs` is a symlink (its directory resolved
    /// inside the fixture); on the live root, `false`: the kernel follows links there.
    pub fn is_link(&self, abs: &str) -> bool {
        if let Some(archive) = &self.archive {
            return archive.is_link(abs);
        }
        if !self.fixture {
            return false;
        }
        let (parent, name) = split_parent(abs);
        self.resolve_dir(parent)
            .ok()
            .and_then(|dir| std::fs::symlink_metadata(dir.join(name)).ok())
            .is_some_and(|m| m.file_type().is_symlink())
    }

    /// A file's permission bits and owner, links followed (for saying why a read was refused).
    pub fn owner(&self, abs: &str) -> Option<Owner> {
        use std::os::unix::fs::MetadataExt;
        if let Some(archive) = &self.archive {
            return archive.owner(abs);
        }
        let meta = std::fs::metadata(self.resolve(abs).ok()?).ok()?;
        Some(Owner {
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        })
    }

    /// What the code-object reader maps for `abs`: the resolved path on disk, or an archive
    /// member's bytes (which no cap applies to: a library's fat binary is large).
    pub fn contents(&self, abs: &str) -> Result<Contents, ReadError> {
        match &self.archive {
            Some(archive) => archive.contents(abs).map(Contents::Memory),
            None => self.resolve(abs).map(Contents::File),
        }
    }

    /// Maps an absolute path to the real path to open. In a fixture, every symlink on the way,
    /// the last component included, is resolved inside the fixture. A fixture archive has no
    /// real paths: [`ReadErrorKind::WrongType`] (readers use [`SysRoot::contents`]).
    pub fn resolve(&self, abs: &str) -> Result<PathBuf, ReadError> {
        if self.archive.is_some() {
            return Err(ReadError::new(abs, ReadErrorKind::WrongType));
        }
        if !self.fixture {
            return Ok(PathBuf::from(abs));
        }
        let (parent, name) = split_parent(abs);
        let dir = self.resolve_dir(parent)?;
        let candidate = dir.join(name);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => self.walk(abs),
            _ => Ok(candidate),
        }
    }

    /// Resolves a directory, memoized per directory: each directory of a fixture costs one
    /// `lstat` per run, however many files are read from it.
    fn resolve_dir(&self, abs: &str) -> Result<PathBuf, ReadError> {
        if !self.fixture {
            return Ok(PathBuf::from(abs));
        }
        let trimmed = abs.trim_end_matches('/');
        if trimmed.is_empty() {
            return Ok(self.base.clone());
        }
        let plain = !trimmed
            .split('/')
            .skip(1)
            .any(|c| c.is_empty() || c == "." || c == "..");
        if !plain || !trimmed.starts_with('/') {
            // Unusual spelling: resolve it the slow, general way (not cached).
            return self.walk(abs);
        }
        if let Some(hit) = self.dirs.lock().ok().and_then(|d| d.get(trimmed).cloned()) {
            return Ok(hit);
        }
        let (parent, name) = split_parent(trimmed);
        let here = self.resolve_dir(parent)?.join(name);
        let resolved = match std::fs::symlink_metadata(&here) {
            Ok(meta) if meta.file_type().is_symlink() => self.walk(trimmed)?,
            _ => here,
        };
        if let Ok(mut dirs) = self.dirs.lock() {
            dirs.insert(trimmed.to_owned(), resolved.clone());
        }
        Ok(resolved)
    }

    /// Follows a path component by component inside the fixture. Components that do not exist
    /// are kept as they are, so the final open reports "not found" for the path asked for.
    fn walk(&self, abs: &str) -> Result<PathBuf, ReadError> {
        let mut pending: Vec<String> = normalize(abs).into_iter().rev().collect();
        let mut done: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(part) = pending.pop() {
            if part == ".." {
                if done.pop().is_none() {
                    return Err(ReadError::new(
                        abs,
                        ReadErrorKind::EscapesRoot {
                            target: abs.to_owned(),
                        },
                    ));
                }
                continue;
            }
            let here = self.base.join(done.join("/")).join(&part);
            let is_link = std::fs::symlink_metadata(&here)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if !is_link {
                done.push(part);
                continue;
            }
            links += 1;
            if links > MAX_SYMLINKS {
                return Err(ReadError::new(abs, ReadErrorKind::SymlinkLoop));
            }
            let target = std::fs::read_link(&here).map_err(|e| ReadError::from_io(abs, &e))?;
            let target = target.to_string_lossy().into_owned();
            if target.starts_with('/') {
                done.clear();
            }
            // A relative target that climbs above the root escapes it: checked as ".." pops.
            let mut depth = done.len() as isize;
            for p in target.split('/').filter(|p| !p.is_empty() && *p != ".") {
                depth += if p == ".." { -1 } else { 1 };
                if depth < 0 {
                    return Err(ReadError::new(abs, ReadErrorKind::EscapesRoot { target }));
                }
            }
            pending.extend(
                target
                    .split('/')
                    .filter(|p| !p.is_empty() && *p != ".")
                    .map(str::to_owned)
                    .rev(),
            );
        }
        Ok(self.base.join(done.join("/")))
    }
}

/// Whether `path`, named by a file on the machine (a `.pth` line, a launcher's settings), is an
/// absolute path the probe may read through the root and name in the report: not `/` itself, no
/// empty, `.` or `..` component, no control character, at most `PATH_MAX` (4096) bytes.
pub fn is_clean_absolute(path: &str) -> bool {
    path.len() > 1
        && path.len() <= 4096
        && path.starts_with('/')
        && !path.chars().any(char::is_control)
        && path[1..]
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

fn open_nonblocking(path: &Path, flags: i32) -> io::Result<File> {
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | flags)
        .open(path)
}

fn normalize(abs: &str) -> Vec<String> {
    abs.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect()
}

fn split_parent(abs: &str) -> (&str, &str) {
    let trimmed = abs.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(i) => (&trimmed[..i.max(1)], &trimmed[i + 1..]),
        None => ("/", trimmed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn fixture() -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::fixture(dir.path());
        (dir, root)
    }

    #[test]
    fn reads_and_trims_nul_padding() {
        let (dir, root) = fixture();
        std::fs::create_dir_all(dir.path().join("sys/a")).unwrap();
        let mut page = b"0x01\n".to_vec();
        page.resize(4096, 0);
        std::fs::write(dir.path().join("sys/a/revision"), page).unwrap();
        assert_eq!(root.read_value("/sys/a/revision").unwrap(), "0x01");
    }

    #[test]
    fn not_found_and_binary_are_distinct() {
        let (dir, root) = fixture();
        std::fs::write(dir.path().join("bin"), b"ab\0cd").unwrap();
        std::fs::write(dir.path().join("latin1"), b"caf\xe9").unwrap();
        assert_eq!(
            root.read_text("/nope").unwrap_err().kind,
            ReadErrorKind::NotFound
        );
        assert_eq!(
            root.read_text("/bin").unwrap_err().kind,
            ReadErrorKind::NotText
        );
        assert_eq!(
            root.read_text("/latin1").unwrap_err().kind,
            ReadErrorKind::NotText
        );
        assert_eq!(root.read("/").unwrap_err().kind, ReadErrorKind::WrongType);
    }

    #[test]
    fn refuses_files_over_the_cap() {
        let (dir, root) = fixture();
        let f = File::create(dir.path().join("big")).unwrap();
        f.set_len(READ_CAP + 1).unwrap();
        std::fs::write(dir.path().join("exact"), vec![b'1'; READ_CAP as usize]).unwrap();
        assert_eq!(root.read("/big").unwrap_err().kind, ReadErrorKind::TooLarge);
        assert_eq!(root.read("/exact").unwrap().len(), READ_CAP as usize);
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let (dir, root) = fixture();
        let path = dir.path().join("fifo");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRUSR).unwrap();
        assert_eq!(
            root.read("/fifo").unwrap_err().kind,
            ReadErrorKind::NotRegular
        );
    }

    #[test]
    fn absolute_symlinks_resolve_inside_the_root() {
        let (dir, root) = fixture();
        std::fs::create_dir_all(dir.path().join("sys/devices/pci/card1/device")).unwrap();
        std::fs::write(
            dir.path().join("sys/devices/pci/card1/device/revision"),
            "0xc1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("sys/class/drm")).unwrap();
        symlink(
            "/sys/devices/pci/card1",
            dir.path().join("sys/class/drm/renderD128"),
        )
        .unwrap();
        symlink("../devices/pci", dir.path().join("sys/class/pci")).unwrap();
        assert_eq!(
            root.read_value("/sys/class/drm/renderD128/device/revision")
                .unwrap(),
            "0xc1"
        );
        assert_eq!(
            root.read_value("/sys/class/pci/card1/device/revision")
                .unwrap(),
            "0xc1"
        );
        assert_eq!(
            root.read_dir("/sys/class/drm/renderD128").unwrap(),
            ["device"]
        );
    }

    #[test]
    fn symlinks_out_of_the_root_and_loops_are_errors() {
        let (dir, root) = fixture();
        std::fs::create_dir_all(dir.path().join("sys")).unwrap();
        symlink("../../../../etc/passwd", dir.path().join("sys/escape")).unwrap();
        symlink("/etc/../../x", dir.path().join("sys/escape2")).unwrap();
        symlink("loop_b", dir.path().join("sys/loop_a")).unwrap();
        symlink("loop_a", dir.path().join("sys/loop_b")).unwrap();
        symlink("/etc/passwd", dir.path().join("sys/abs")).unwrap();
        let err = root.read("/sys/escape").unwrap_err();
        assert!(
            matches!(err.kind, ReadErrorKind::EscapesRoot { .. }),
            "{err}"
        );
        assert_eq!(err.path, "/sys/escape");
        assert!(matches!(
            root.read("/sys/escape2").unwrap_err().kind,
            ReadErrorKind::EscapesRoot { .. }
        ));
        assert_eq!(
            root.read("/sys/loop_a").unwrap_err().kind,
            ReadErrorKind::SymlinkLoop
        );
        // An absolute target is re-rooted: the host's /etc/passwd is never read.
        assert_eq!(
            root.read("/sys/abs").unwrap_err().kind,
            ReadErrorKind::NotFound
        );
    }

    #[test]
    fn live_root_maps_paths_unchanged() {
        let root = SysRoot::live();
        assert_eq!(
            root.resolve("/proc/cmdline").unwrap(),
            PathBuf::from("/proc/cmdline")
        );
        // procfs reports size 0 for files that have content: the read must not trust st_size.
        assert!(!root.read_text("/proc/self/status").unwrap().is_empty());
    }

    #[test]
    fn split_parent_handles_edges() {
        assert_eq!(split_parent("/a/b/c"), ("/a/b", "c"));
        assert_eq!(split_parent("/a"), ("/", "a"));
    }
}
