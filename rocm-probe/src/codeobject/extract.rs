//! `inspect --extract DIR`: every device code object of a file written out on its own (what
//! `roc-obj-extract` does), and the choice of the code object a GPU would load, for
//! `inspect --disasm`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::compat::{self, GpuTarget};
use super::{CodeObjectFile, Error, Inspection, Verdict};

/// One code object written out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Extracted {
    /// Where it was written.
    pub path: PathBuf,
    /// 1-based bundle number (as `roc-obj-ls` numbers them).
    pub bundle: usize,
    /// Its target ID.
    pub target: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A file name part for a target ID (`gfx90a:xnack-` → `gfx90a_xnack-`).
fn file_part(target: &str) -> String {
    target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-+.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes every device code object of `file` into `dir` as
/// `<file name>-<bundle>-<target>.co`, decompressing compressed bundles.
pub fn extract(
    file: &CodeObjectFile,
    inspection: &Inspection,
    dir: &Path,
) -> Result<Vec<Extracted>, Error> {
    let name = file
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "code".to_owned());
    let mut out = Vec::new();
    for bundle in &inspection.bundles {
        for entry in bundle.entries.iter().filter(|e| e.is_device()) {
            let Some(target) = entry.target.as_ref().map(ToString::to_string) else {
                continue;
            };
            let bytes = file.entry_bytes(bundle, entry)?;
            let path = dir.join(format!("{name}-{}-{}.co", bundle.index, file_part(&target)));
            std::fs::write(&path, &bytes).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            out.push(Extracted {
                path,
                bundle: bundle.index,
                target,
                size: bytes.len() as u64,
            });
        }
    }
    Ok(out)
}

/// The bytes of the code object `gpu` would load from the first bundle that has one, with its
/// target ID; `None` when no bundle has one that loads as the GPU is set up.
pub fn loaded_code_object(
    file: &CodeObjectFile,
    inspection: &Inspection,
    gpu: &GpuTarget,
) -> Result<Option<(String, Vec<u8>)>, Error> {
    for bundle in &inspection.bundles {
        let candidates = compat::candidates(bundle);
        if let Verdict::Loads { target } = compat::verdict(&candidates, gpu)
            && let Some(entry) = bundle.entries.iter().find(|e| {
                e.is_device() && e.target.as_ref().is_some_and(|t| t.to_string() == target)
            })
        {
            return Ok(Some((
                target,
                file.entry_bytes(bundle, entry)?.into_owned(),
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts() {
        assert_eq!(
            file_part("gfx90a:sramecc+:xnack-"),
            "gfx90a_sramecc+_xnack-"
        );
        assert_eq!(file_part("gfx11-generic"), "gfx11-generic");
        assert_eq!(file_part("../x"), ".._x");
    }
}
