//! Every file the probe writes goes through here. The probe often runs as root on every node of
//! a cluster, writing into directories other users may own (node_exporter's textfile directory,
//! NFD's `features.d`, a shared scratch directory), so a write must never follow a link planted
//! there, never replace a device, FIFO or directory, and never be seen half-written:
//!
//! - [`write()`] (`--textfile`, `--nfd-features`, `--write-expect`, `--extract`): the target is an
//!   absent path or a regular file. The bytes go to a temporary file in the same directory,
//!   created with `O_CREAT|O_EXCL|O_NOFOLLOW` under an unpredictable name, flushed, then renamed
//!   over the target — a reader sees the old file or the new one, and a symlink planted where the
//!   temporary or the target would be is never written through (`rename` replaces a link, it does
//!   not follow it).
//! - [`write_output`] (`-o PATH`): the same, except that a target which is already something other
//!   than a regular file — a terminal, a pipe, `/dev/stdout`, `/dev/fd/N` — is written into as it
//!   is (opened without `O_CREAT` or `O_TRUNC`), never replaced, as a shell's `>` would.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::msg;

/// What a path names, looked at without following a final symlink.
enum Target {
    Absent,
    Regular(Metadata),
    Refused(Refusal),
}

/// Why a path is not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Symlink,
    Directory,
    Fifo,
    Socket,
    Device,
}

impl Refusal {
    fn error(self, path: &Path) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            msg!("io.refused", path = path.display(), what = self.reason()),
        )
    }

    fn reason(self) -> String {
        match self {
            Self::Symlink => msg!("io.refused-symlink"),
            Self::Directory => msg!("io.refused-directory"),
            Self::Fifo => msg!("io.refused-fifo"),
            Self::Socket => msg!("io.refused-socket"),
            Self::Device => msg!("io.refused-device"),
        }
    }
}

impl Refusal {
    /// Why a file of type `t` is not what a regular file is expected to be; `None` for a
    /// regular file.
    fn of(t: std::fs::FileType) -> Option<Self> {
        if t.is_file() {
            None
        } else if t.is_symlink() {
            Some(Self::Symlink)
        } else if t.is_dir() {
            Some(Self::Directory)
        } else if t.is_fifo() {
            Some(Self::Fifo)
        } else if t.is_socket() {
            Some(Self::Socket)
        } else {
            Some(Self::Device)
        }
    }
}

/// The error that refuses `path`, a file of type `t` where a regular file belongs (the
/// probe's reader of named inputs uses it too). `None` for a regular file.
pub(crate) fn refused(path: &Path, t: std::fs::FileType) -> Option<io::Error> {
    Refusal::of(t).map(|r| r.error(path))
}

/// Why a file of type `t` is refused, for an error that names the path itself (the lock's).
pub fn refusal_reason(t: std::fs::FileType) -> Option<String> {
    Refusal::of(t).map(Refusal::reason)
}

fn classify(path: &Path) -> io::Result<Target> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Absent),
        Err(e) => return Err(e),
    };
    Ok(match Refusal::of(meta.file_type()) {
        None => Target::Regular(meta),
        Some(r) => Target::Refused(r),
    })
}

/// Replaces `path` with `bytes` atomically. `path` must be absent or a regular file; a symlink
/// (even one pointing at a regular file), directory, FIFO, socket or device is refused with an
/// error naming it, and left as it was.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match classify(path)? {
        Target::Refused(r) => Err(r.error(path)),
        Target::Absent => replace(path, bytes, None),
        Target::Regular(meta) => replace(path, bytes, Some(meta.permissions().mode() & 0o7777)),
    }
}

/// Writes the command's output to `-o PATH`: an absent path or a regular file is replaced
/// atomically; a path that already leads to something other than a regular file (a terminal, a
/// pipe, `/dev/stdout`) is written into without being created, truncated or replaced; a symlink
/// to a regular file, or a dangling one, is refused (a planted link must not choose what root
/// overwrites); a directory is refused.
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match classify(path)? {
        Target::Absent => replace(path, bytes, None),
        Target::Regular(meta) => replace(path, bytes, Some(meta.permissions().mode() & 0o7777)),
        Target::Refused(Refusal::Directory) => Err(Refusal::Directory.error(path)),
        Target::Refused(refusal) => match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Err(Refusal::Directory.error(path)),
            Ok(m) if !m.is_file() => write_into_stream(path, bytes),
            _ => Err(refusal.error(path)),
        },
    }
}

/// Writes into an existing non-regular file. `O_NONBLOCK` for the open only: a FIFO nobody
/// reads fails with ENXIO instead of waiting forever; the writes then block as a shell's would.
fn write_into_stream(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        // Swapped for a regular file between the look and the open: never truncate or append
        // to a file that was not asked for by its own name.
        return Err(Refusal::Symlink.error(path));
    }
    if meta.is_dir() {
        return Err(Refusal::Directory.error(path));
    }
    nix::fcntl::fcntl(
        &file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    )?;
    file.write_all(bytes)?;
    file.flush()
}

/// The rename dance. `mode` is the replaced file's, kept; a new file gets 0666 less the umask,
/// as any program's `creat` would.
fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, msg!("io.no-file-name")))?;
    let (tmp, mut file) = create_temporary(dir, name)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(
            mode.unwrap_or_else(|| 0o666 & !umask()),
        ))?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates a new file at `path` for writing with `mode` (less the umask): never an existing
/// file and never through a symlink — `O_CREAT|O_EXCL` fails on any existing name, a dangling
/// link included, and `O_NOFOLLOW` says so for a link. Every file the probe creates is made here.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// The directory a command writes a tree of files into (`snapshot DIR`, `inspect --extract
/// DIR`): an existing real directory is used (only when empty, if `empty`); an absent one is
/// created, its parents as needed; a symlink or anything else in its place is refused, so a link
/// planted where the directory should be cannot send the writes elsewhere.
pub fn output_dir(dir: &Path, empty: bool) -> io::Result<()> {
    let refused = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            msg!("io.refused", path = dir.display(), what),
        )
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(refused(Refusal::Symlink.reason())),
        Ok(m) if !m.is_dir() => Err(refused(msg!("io.not-a-directory"))),
        Ok(_) if empty && std::fs::read_dir(dir)?.next().is_some() => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            msg!("io.dir-not-empty", path = dir.display()),
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            // Not `create_dir_all`: whatever appeared at `dir` since the look is refused.
            std::fs::create_dir(dir)
        }
        Err(e) => Err(e),
    }
}

/// A new file `.NAME.<random>.tmp` in `dir`, private until renamed. A leading dot and the
/// `.tmp` end: node_exporter reads only `*.prom` and NFD skips hidden files. `O_EXCL` with
/// `O_CREAT` fails on any existing name, a symlink included, so nothing planted is opened.
fn create_temporary(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..16 {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{:016x}.tmp", random()));
        let tmp = dir.join(tmp_name);
        match create_new(&tmp, 0o600) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other(msg!("io.no-temporary-name"))))
}

/// Unpredictable enough that names cannot be planted ahead: std's hasher keys come from the
/// operating system's random source, secret to other processes.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// The process's umask, read from procfs (since Linux 4.7); `umask(2)` cannot read it without
/// changing it, which would race with other threads. 022 when unknown.
fn umask() -> u32 {
    crate::source::root::SysRoot::live()
        .read_text("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rocm.prom");
        write(&path, b"a 1\n").unwrap();
        write(&path, b"a 2\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a 2\n");
        assert_eq!(names(dir.path()), ["rocm.prom"]);
    }

    #[test]
    fn keeps_the_mode_of_the_file_it_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let err = write(Path::new("/nonexistent/dir/x.prom"), b"").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_final_symlink_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = dir.path().join("rocm.prom");
        symlink(&victim, &link).unwrap();
        let dangling = dir.path().join("dangling.prom");
        symlink(dir.path().join("created-by-link"), &dangling).unwrap();
        for f in [write, write_output] {
            let err = f(&link, b"x").unwrap_err();
            assert!(err.to_string().contains("rocm.prom"), "{err}");
            assert!(f(&dangling, b"x").is_err());
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert!(!dir.path().join("created-by-link").exists());
    }

    #[test]
    fn a_directory_or_fifo_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(write(&sub, b"x").is_err());
        assert!(write_output(&sub, b"x").is_err());
        assert!(write(&fifo, b"x").is_err());
        // -o into a FIFO that nobody reads: ENXIO at once, not a hang, and still a FIFO.
        assert!(write_output(&fifo, b"x").is_err());
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(sub.is_dir());
    }

    #[test]
    fn output_into_a_pipe_with_a_reader_is_written_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // The reader holds the FIFO open read-write so that opening it cannot block.
        let mut reader = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        write_output(&fifo, b"report\n").unwrap();
        let mut buf = [0u8; 7];
        std::io::Read::read_exact(&mut reader, &mut buf).unwrap();
        assert_eq!(&buf, b"report\n");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn planted_temporary_names_are_not_followed() {
        // The old name was `.NAME.<pid>.tmp`: plant it and the next pids; none may be written.
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let pid = std::process::id();
        for p in pid..pid + 8 {
            symlink(&victim, dir.path().join(format!(".rocm.prom.{p}.tmp"))).unwrap();
        }
        write(&dir.path().join("rocm.prom"), b"a 1\n").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(
            std::fs::read(dir.path().join("rocm.prom")).unwrap(),
            b"a 1\n"
        );
    }
}
