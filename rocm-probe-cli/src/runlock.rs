//! `--lock PATH`: at most one probe at a time per lock file. Slurm starts a new health check
//! every interval even while the last one still runs, and cron or a DaemonSet loop can do the
//! same; a run that finds the lock taken ends at once (exit 2) instead of piling up.
//!
//! The lock is `flock(2)` on the file: the kernel releases it when the process ends, however it
//! ends, so a killed run never leaves a stale lock behind. The file is never truncated or
//! written unless this run created it (`O_CREAT|O_EXCL|O_NOFOLLOW`, then its pid goes in, for
//! people); a symlink, directory, FIFO or device is refused, so `--lock` pointed at a file that
//! matters (or at a link planted to one) cannot damage it. Who holds a lock is read from
//! `/proc/locks`, not from the file, whose content may be a past holder's.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// A held lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct RunLock {
    _lock: Flock<File>,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("{}: {}", path.display(), match holder {
        Some(pid) => rocm_probe::msg!("io.lock-held-by", pid = pid),
        None => rocm_probe::msg!("io.lock-held"),
    })]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid, from `/proc/locks`, when found.
        holder: Option<u32>,
    },
    /// The file could not be opened or locked, or is not a regular file.
    // `error`, not `source`: the message already carries it, and an error chain would repeat it.
    #[error("{}: {error}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

/// Takes the lock at `path` without waiting.
pub fn acquire(path: &Path) -> Result<RunLock, LockError> {
    let io = |error| LockError::Io {
        path: path.to_owned(),
        error,
    };
    let (file, created) = open(path).map_err(io)?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((file, Errno::EWOULDBLOCK)) => {
            let holder = file.metadata().ok().and_then(|m| holder(m.dev(), m.ino()));
            return Err(LockError::Held {
                path: path.to_owned(),
                holder,
            });
        }
        Err((_, e)) => return Err(io(std::io::Error::from(e))),
    };
    if created {
        // For whoever looks at the file; failing to write it does not matter.
        let _ = writeln!(&mut *lock, "{}", std::process::id());
    }
    Ok(RunLock { _lock: lock })
}

/// Creates the lock file, or opens the existing one without following a final symlink and
/// without blocking on a FIFO; anything but a regular file is refused.
fn open(path: &Path) -> std::io::Result<(File, bool)> {
    match rocm_probe::source::atomic::create_new(path, 0o644) {
        Ok(file) => return Ok((file, true)),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {}
    }
    // Existing: lstat first, so a FIFO or device is never opened at all.
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(refused(&meta));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(refused(&meta));
    }
    Ok((file, false))
}

fn refused(meta: &std::fs::Metadata) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        rocm_probe::source::atomic::refusal_reason(meta.file_type()).unwrap_or_default(),
    )
}

/// The pid holding a `flock` on the file `(dev, ino)`, from `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`: major and minor in hex, inode decimal).
fn holder(dev: u64, ino: u64) -> Option<u32> {
    // Through the bounded reader: a busy machine's lock table is long, never unbounded here.
    let text = rocm_probe::source::root::SysRoot::live()
        .read_text("/proc/locks")
        .ok()?;
    parse_holder(&text, libc::major(dev), libc::minor(dev), ino)
}

fn parse_holder(text: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // Waiting locks are marked `->` and shift the fields by one.
        let f = if f.get(1) == Some(&"->") {
            &f[1..]
        } else {
            &f[..]
        };
        if f.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid = f.get(4)?.parse().ok()?;
        let mut id = f.get(5)?.split(':');
        let (ma, mi, i) = (id.next()?, id.next()?, id.next()?);
        (u32::from_str_radix(ma, 16).ok()? == major
            && u32::from_str_radix(mi, 16).ok()? == minor
            && i.parse::<u64>().ok()? == ino)
            .then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.lock");
        let first = acquire(&path).unwrap();
        match acquire(&path) {
            Err(LockError::Held { holder, .. }) => {
                assert_eq!(holder, Some(std::process::id()));
            }
            other => panic!("{other:?}"),
        }
        drop(first);
        assert!(acquire(&path).is_ok());
    }

    #[test]
    fn an_unwritable_place_is_an_io_error() {
        assert!(matches!(
            acquire(Path::new("/nonexistent/dir/probe.lock")),
            Err(LockError::Io { .. })
        ));
    }

    #[test]
    fn an_existing_file_is_locked_but_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("existing.conf");
        std::fs::write(&path, b"important = 1\n").unwrap();
        let lock = acquire(&path).unwrap();
        drop(lock);
        assert_eq!(std::fs::read(&path).unwrap(), b"important = 1\n");
    }

    #[test]
    fn links_and_special_files_are_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = dir.path().join("probe.lock");
        symlink(&victim, &link).unwrap();
        assert!(matches!(acquire(&link), Err(LockError::Io { .. })));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let dangling = dir.path().join("dangling.lock");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(acquire(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        let fifo = dir.path().join("fifo.lock");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(acquire(&fifo).is_err());
        assert!(acquire(dir.path()).is_err());
    }

    #[test]
    fn proc_locks_lines() {
        let text = "1: POSIX  ADVISORY  WRITE 99 00:19:12 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 4242 fd:01:5678 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 4343 fd:01:5678 0 EOF\n";
        assert_eq!(parse_holder(text, 0xfd, 1, 5678), Some(4242));
        assert_eq!(parse_holder(text, 0xfd, 1, 5679), None);
        assert_eq!(parse_holder(text, 0, 0x19, 12), None);
    }
}
