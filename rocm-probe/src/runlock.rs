//! `--lock PATH`: at most one probe at a time per lock file. Slurm starts a new health check
//! every interval even while the last one still runs, and cron or a DaemonSet loop can do the
//! same; a run that finds the lock taken ends at once (exit 2) instead of piling up.
//!
//! The lock is `flock(2)` on the file: the kernel releases it when the process ends, however it
//! ends, so a killed run never leaves a stale lock behind (the file itself stays; its content is
//! the holder's pid, for people).

use std::fs::{File, OpenOptions};
use std::io::Write;
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
    #[error("{}: another rocm-probe run holds the lock{}", path.display(), holder.as_ref().map(|h| format!(" (pid {h})")).unwrap_or_default())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The pid written by the holder, when readable.
        holder: Option<String>,
    },
    /// The file could not be opened or locked.
    #[error("{}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Takes the lock at `path` without waiting.
pub fn acquire(path: &Path) -> Result<RunLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_owned(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .read(true)
        .open(path)
        .map_err(io)?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, Errno::EWOULDBLOCK)) => {
            let holder = std::fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty());
            return Err(LockError::Held {
                path: path.to_owned(),
                holder,
            });
        }
        Err((_, e)) => return Err(io(std::io::Error::from(e))),
    };
    // The pid, for whoever finds the lock taken; failing to write it does not matter.
    let _ = lock.set_len(0);
    let _ = writeln!(&mut *lock, "{}", std::process::id());
    Ok(RunLock { _lock: lock })
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
                assert_eq!(holder, Some(std::process::id().to_string()));
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
}
