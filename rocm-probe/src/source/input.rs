//! Files named on the command line (`check --expect FILE`, `diff A B`, `fleet FILE…`): opened without blocking,
//! accepted only when they are regular files, and read only up to a cap per kind of input. A
//! FIFO nobody writes, `/dev/zero`, or a gigabyte file given by mistake is an error naming the
//! path (exit 2), never a hang or unbounded memory. Files inside a fixture or the machine go
//! through [`crate::source::root::SysRoot`] instead, which applies the same rules inside its root.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::msg;

/// What a file is read as; each kind has its own cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A conformance file for `check --expect`: a few hundred lines at most.
    Expect,
    /// A JSON report for `diff`: the largest real report (8x MI300X CPX, every finding) is
    /// about 1 MiB; 16 MiB leaves room for bigger machines and stays far under the memory budget
    /// once parsed.
    Report,
    /// A fixture archive for `--root x.tar.gz` (`source::archive`).
    Archive,
}

impl InputKind {
    /// The largest file accepted, in bytes (documented in `--help`).
    pub const fn cap(self) -> u64 {
        match self {
            Self::Expect => 1 << 20,
            Self::Report => 16 << 20,
            Self::Archive => crate::source::archive::COMPRESSED_CAP,
        }
    }
}

/// Opens `path` for reading, without blocking, and only when it is a regular file; for a
/// stream of documents (`fleet`'s JSON lines), which its reader caps per document instead.
pub fn open(path: &Path) -> io::Result<File> {
    open_regular(path).map(|(file, _)| file)
}

fn open_regular(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("{}: {}", path.display(), crate::i18n::os_error(&e)),
        )
    };
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(named)?;
    let meta = file.metadata().map_err(named)?;
    if let Some(refused) = crate::source::atomic::refused(path, meta.file_type()) {
        return Err(refused);
    }
    Ok((file, meta))
}

/// Reads `path` whole as `kind`, or says why not, naming the path.
pub fn read(path: &Path, kind: InputKind) -> io::Result<Vec<u8>> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("{}: {}", path.display(), crate::i18n::os_error(&e)),
        )
    };
    let (file, meta) = open_regular(path)?;
    let cap = kind.cap();
    if meta.len() > cap {
        return Err(too_large(path, cap));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes).map_err(named)?;
    // A file that grew while being read.
    if bytes.len() as u64 > cap {
        return Err(too_large(path, cap));
    }
    Ok(bytes)
}

/// Reads `path` as UTF-8 text (see [`read`]).
pub fn read_text(path: &Path, kind: InputKind) -> io::Result<String> {
    String::from_utf8(read(path, kind)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            msg!("io.not-utf8", path = path.display()),
        )
    })
}

fn too_large(path: &Path, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        msg!("io.too-large", path = path.display(), cap = cap >> 20),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("expect.toml");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read(&fifo, InputKind::Expect).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        assert!(err.to_string().contains("expect.toml"), "{err}");
    }

    #[test]
    fn devices_and_directories_are_refused() {
        assert!(read(Path::new("/dev/zero"), InputKind::Report).is_err());
        assert!(read(Path::new("/"), InputKind::Report).is_err());
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(InputKind::Report.cap() + 1).unwrap();
        let err = read(&big, InputKind::Report).unwrap_err();
        assert!(err.to_string().contains("16 MiB"), "{err}");
        f.set_len(InputKind::Expect.cap()).unwrap();
        assert_eq!(
            read(&big, InputKind::Expect).unwrap().len() as u64,
            InputKind::Expect.cap()
        );
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, b"caf\xe9").unwrap();
        assert!(read_text(&f, InputKind::Expect).is_err());
        std::fs::write(&f, "café").unwrap();
        assert_eq!(read_text(&f, InputKind::Expect).unwrap(), "café");
    }
}
