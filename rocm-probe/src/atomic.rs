//! Atomic file replacement for files other programs read while the probe writes them
//! (node_exporter's textfile directory, NFD's `features.d`): write a temporary file in the same
//! directory, flush it to disk, then rename it over the target, so a reader sees the old file or
//! the new one, never half of one.

use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    // A leading dot: node_exporter reads only `*.prom` and NFD skips hidden files.
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rocm.prom");
        write(&path, b"a 1\n").unwrap();
        write(&path, b"a 2\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a 2\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let err = write(Path::new("/nonexistent/dir/x.prom"), b"").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
