//! `inspect --extract DIR`: every device code object of a file written out on its own (what
//! `roc-obj-extract` does), and the choice of the code object a GPU would load, for
//! `inspect --disasm`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::compat::{self, GpuTarget};
use super::{
    BundleFormat, CodeObjectFile, Entry, Error, Inspection, Malformed, ParseError, Verdict,
};

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

/// What one run may still write: [`Limits::max_extracted`](super::Limits::max_extracted)
/// shared by every file of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    /// A run's budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Self { left: limit, limit }
    }

    /// Takes `n` bytes, or says which cap refuses them.
    fn take(&mut self, n: u64) -> Result<(), Malformed> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or(Malformed::ExtractTooLarge { limit: self.limit })?;
        Ok(())
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(super::MAX_EXTRACTED)
    }
}

/// Writes every device code object of `file` into `dir` as
/// `<file name>-<bundle>-<target>.co`, decompressing compressed bundles, within the file's
/// [`Limits::max_extracted`](super::Limits::max_extracted). For several files in one run,
/// [`extract_within`] with one [`Budget`] caps the run.
pub fn extract(
    file: &CodeObjectFile,
    inspection: &Inspection,
    dir: &Path,
) -> Result<Vec<Extracted>, Error> {
    let mut budget = Budget::new(file.limits.max_extracted);
    extract_within(file, inspection, dir, &mut budget)
}

/// [`extract`] drawing on a budget shared across files. Each bundle is decompressed once
/// (never past [`Limits::max_decompressed`](super::Limits::max_decompressed)); its code objects
/// must fit in it without overlapping (so no more is written than was read) and in the budget,
/// checked before anything of the bundle is written. Files are written with
/// [`crate::source::atomic::write`], which never writes through a symlink planted in `dir`.
pub fn extract_within(
    file: &CodeObjectFile,
    inspection: &Inspection,
    dir: &Path,
    budget: &mut Budget,
) -> Result<Vec<Extracted>, Error> {
    let name = file
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "code".to_owned());
    let mut out = Vec::new();
    for bundle in &inspection.bundles {
        let devices: Vec<(&Entry, String)> = bundle
            .entries
            .iter()
            .filter(|e| e.is_device())
            .filter_map(|e| Some((e, e.target.as_ref()?.to_string())))
            .collect();
        if devices.is_empty() {
            continue;
        }
        let bytes = file.bundle_bytes(bundle)?;
        let base = if bundle.format == BundleFormat::Compressed {
            0
        } else {
            bundle.offset
        };
        let total = devices
            .iter()
            .map(|(e, _)| e.size)
            .fold(0u64, u64::saturating_add);
        let at = |kind| file.malformed(ParseError::at(bundle.offset, kind));
        if total > bytes.len() as u64 {
            return Err(at(Malformed::EntriesOverlap {
                bundle: bundle.index,
                total,
                size: bytes.len() as u64,
            }));
        }
        budget.take(total).map_err(at)?;
        for (entry, target) in devices {
            let code =
                slice(&bytes, base, entry).ok_or_else(|| file.out_of_bounds(bundle, entry))?;
            let path = dir.join(format!("{name}-{}-{}.co", bundle.index, file_part(&target)));
            crate::source::atomic::write(&path, code).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            out.push(Extracted {
                path,
                bundle: bundle.index,
                target,
                size: code.len() as u64,
            });
        }
    }
    Ok(out)
}

/// The bytes of `entry` in its bundle's bytes, which start at `base` in entry offsets.
fn slice<'b>(bytes: &'b [u8], base: u64, entry: &Entry) -> Option<&'b [u8]> {
    let start = usize::try_from(entry.offset.checked_sub(base)?).ok()?;
    let end = start.checked_add(usize::try_from(entry.size).ok()?)?;
    bytes.get(start..end)
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
