//! The GPU code an installed file carries (a ROCm library, a framework's HIP extension), read
//! through the source for the report's layers 5 and 7.
//!
//! [`codeobject`] does the reading (a memory map, only the bundle headers
//! touched); this module keeps what the checks need — the distinct sets of code objects the
//! file's bundles offer — and answers, per GPU, whether every bundle has one that loads. Each
//! bundle is one translation unit's code, and the HIP runtime needs a code object for the GPU in
//! every one of them (`hipErrorNoBinaryForGpu` otherwise), so a file's verdict is its worst
//! bundle's.
//!
//! A snapshot cannot copy a gigabyte library. When the run is recorded, a file larger than
//! [`COPY_LIMIT`] is recorded as a stand-in instead: uncompressed offload bundles, one per
//! bundle of the original, with the same device entry IDs and empty bodies. The stand-in reads
//! back to the same bundles, code objects and verdicts; only sizes, offsets, compression and
//! the generic version of generic code objects (read from the bodies) are lost, and the last
//! changes no verdict while every generic family's minimum version is 1. A code object on its
//! own over the limit is recorded as its ELF header, which is all that is read of it; a
//! malformed file over the limit as what fails the same way (see `malformed_copy`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::codeobject::compat::{self, GpuTarget};
use crate::codeobject::elf::ELF64_HEADER_SIZE;
use crate::codeobject::{self, CodeObjectFile, FileFormat, Limits, TargetId, Verdict};
use crate::source::problem::{Problem, ProblemKind};
use crate::source::root::SysRoot;

/// Files up to this size are recorded whole by a snapshot; larger ones as a stand-in.
pub const COPY_LIMIT: u64 = 1 << 20;
/// Bundles of a stand-in start at multiples of this, as in `.hip_fatbin`.
const BUNDLE_ALIGN: usize = 4096;

/// One code object a bundle offers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CodeObjectRef {
    /// Its target ID (`gfx90a:xnack-`, `gfx11-generic`).
    pub target: String,
    /// The generic version from its ELF header, when read.
    pub generic_version: Option<u8>,
}

/// A distinct set of code objects, and how many bundles offer exactly it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// Bundles with this set.
    pub bundles: usize,
    /// The set, sorted.
    pub code_objects: Vec<CodeObjectRef>,
}

/// What GPU code a file carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FatBinary {
    /// The file (absolute, inside the root).
    pub path: String,
    /// Bundles that carry device code.
    pub bundles: usize,
    /// Device code objects in all bundles.
    pub code_objects: usize,
    /// The distinct target IDs, in order of first appearance.
    pub targets: Vec<String>,
    /// The distinct sets of code objects, most common first.
    pub variants: Vec<Variant>,
}

/// Why a file's code was not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Unread {
    /// A fixture's empty stand-in file: the fixture models names only.
    NotCaptured,
    /// Unreadable or malformed.
    Problem {
        /// What went wrong.
        problem: Problem,
    },
}

/// Reads the GPU code of `abs`. An empty file in a fixture is [`Unread::NotCaptured`] (fixtures
/// model most libraries by name only); anywhere else an empty or malformed file is a problem.
pub fn read(root: &SysRoot, abs: &str) -> Result<FatBinary, Unread> {
    let file = CodeObjectFile::open_in(root, abs).map_err(|e| problem(abs, &e))?;
    let inspection = match file.inspect() {
        Ok(i) => i,
        Err(_) if root.is_fixture() && file.is_empty() => {
            root.record_file(abs, Vec::new);
            return Err(Unread::NotCaptured);
        }
        Err(e) => {
            root.record_file(abs, || malformed_copy(&file, &e));
            return Err(problem(abs, &e));
        }
    };
    let fat = summarize(abs, &inspection);
    if root.recording() {
        root.record_file(abs, || {
            if file.len() <= COPY_LIMIT {
                file.bytes().to_vec()
            } else if inspection.format == FileFormat::CodeObject {
                // A code object on its own is read from its ELF header alone.
                file.bytes()[..ELF64_HEADER_SIZE].to_vec()
            } else {
                stand_in(&inspection)
            }
        });
    }
    Ok(fat)
}

/// What a snapshot records of a malformed file that is over [`COPY_LIMIT`]: its first
/// `COPY_LIMIT` bytes when they fail with the same kind of error (a cut or broken header near
/// the start, the usual case, stays that); otherwise [`NOT_RECOGNIZED`]. Either reads back
/// as a malformed library, the same problem for the report; only the detail (offsets, sizes)
/// may change. Copying the file whole is what the limit forbids, and building a small file with
/// the same defect for every kind of defect would be a second parser to keep in step.
fn malformed_copy(file: &CodeObjectFile, e: &codeobject::Error) -> Vec<u8> {
    let bytes = file.bytes();
    let Some(prefix) = bytes
        .get(..COPY_LIMIT as usize)
        .filter(|p| p.len() < bytes.len())
    else {
        return bytes.to_vec();
    };
    let kind = |e: &codeobject::Error| match e {
        codeobject::Error::Malformed { kind, .. } => Some(std::mem::discriminant(kind)),
        _ => None,
    };
    match codeobject::inspect_bytes("", prefix, Limits::default()) {
        Err(again) if kind(&again).is_some() && kind(&again) == kind(e) => prefix.to_vec(),
        _ => NOT_RECOGNIZED.to_vec(),
    }
}

/// A stand-in that no reader takes for a code object, bundle, archive or ELF file.
const NOT_RECOGNIZED: &[u8] = b"malformed library over the snapshot's copy limit\n";

fn problem(abs: &str, e: &codeobject::Error) -> Unread {
    let kind = match e {
        codeobject::Error::Io { .. } => ProblemKind::Unreadable,
        _ => ProblemKind::Malformed,
    };
    // The error names the real path (inside a fixture directory); the problem names the
    // path the machine has.
    let message = match e {
        codeobject::Error::Io { source, .. } => {
            crate::text!("facts.read-io", error = crate::i18n::OsError::from(source))
        }
        codeobject::Error::Malformed { offset, kind, .. } => crate::text!(
            "codeobject-error.problem-at-offset",
            offset = format!("{offset:#x}"),
            kind = kind.text()
        ),
    };
    Unread::Problem {
        problem: Problem {
            path: abs.to_owned(),
            message,
            kind,
            count: 1,
        },
    }
}

fn summarize(abs: &str, inspection: &codeobject::Inspection) -> FatBinary {
    let mut sets: BTreeMap<Vec<CodeObjectRef>, usize> = BTreeMap::new();
    let mut first_seen: Vec<Vec<CodeObjectRef>> = Vec::new();
    let mut bundles = 0;
    for bundle in &inspection.bundles {
        let mut set: Vec<CodeObjectRef> = compat::candidates(bundle)
            .into_iter()
            .map(|(t, v)| CodeObjectRef {
                target: t.to_string(),
                generic_version: v,
            })
            .collect();
        if set.is_empty() {
            continue;
        }
        bundles += 1;
        set.sort();
        set.dedup();
        let count = sets.entry(set.clone()).or_insert(0);
        if *count == 0 {
            first_seen.push(set);
        }
        *count += 1;
    }
    let mut variants: Vec<Variant> = first_seen
        .into_iter()
        .map(|set| Variant {
            bundles: sets[&set],
            code_objects: set,
        })
        .collect();
    // Stable: among equally common sets, file order stays.
    variants.sort_by_key(|v| std::cmp::Reverse(v.bundles));
    FatBinary {
        path: abs.to_owned(),
        bundles,
        code_objects: inspection.code_object_count(),
        targets: sorted(inspection.targets()),
        variants,
    }
}

/// Target IDs in processor order (gfx900 before gfx90a before gfx1030), then by spelling.
fn sorted(mut targets: Vec<String>) -> Vec<String> {
    targets.sort_by_key(|t| {
        let processor = t.split(':').next().unwrap_or(t);
        (crate::target::GfxVersion::from_name(processor), t.clone())
    });
    targets
}

impl FatBinary {
    /// Whether the file carries any device code.
    pub fn has_code(&self) -> bool {
        self.bundles > 0
    }

    /// The verdict for `gpu`: the worst over the bundles (each must offer a code object that
    /// loads), `None` when the file carries no device code.
    pub fn verdict(&self, gpu: &GpuTarget) -> Option<Verdict> {
        let mut worst: Option<Verdict> = None;
        for variant in &self.variants {
            let parsed: Vec<(TargetId, Option<u8>)> = variant
                .code_objects
                .iter()
                .filter_map(|c| {
                    TargetId::parse(&c.target)
                        .ok()
                        .map(|t| (t, c.generic_version))
                })
                .collect();
            let candidates: Vec<compat::Candidate<'_>> =
                parsed.iter().map(|(t, v)| (t, *v)).collect();
            let v = compat::verdict(&candidates, gpu);
            if worst.as_ref().is_none_or(|w| v.rank() > w.rank()) {
                worst = Some(v);
            }
        }
        worst
    }
}

/// A file of uncompressed bundles, one per device bundle of `inspection`, each with its device
/// entries (empty bodies), 4096-aligned as in `.hip_fatbin`.
pub fn stand_in(inspection: &codeobject::Inspection) -> Vec<u8> {
    let mut out = Vec::new();
    for bundle in &inspection.bundles {
        let ids: Vec<String> = bundle
            .entries
            .iter()
            .filter(|e| e.is_device())
            .filter_map(|e| e.target.as_ref())
            .map(|t| format!("hipv4-amdgcn-amd-amdhsa--{t}"))
            .collect();
        if ids.is_empty() {
            continue;
        }
        if out.len() % BUNDLE_ALIGN != 0 {
            out.resize(out.len().next_multiple_of(BUNDLE_ALIGN), 0);
        }
        // Every body is empty: the entry IDs are what the facts are made of.
        let entries: Vec<(&str, &[u8])> = ids.iter().map(|id| (id.as_str(), &[][..])).collect();
        out.extend(crate::codeobject::bundle::write(&entries));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codeobject::inspect_bytes;
    use crate::target::GfxVersion;

    /// An uncompressed bundle with a host entry and device entries with empty bodies.
    fn bundle(ids: &[&str]) -> Vec<u8> {
        let mut all: Vec<(&str, &[u8])> = vec![("host-x86_64-unknown-linux-gnu-", &[])];
        all.extend(ids.iter().map(|id| (*id, &[][..])));
        crate::codeobject::bundle::write(&all)
    }

    fn file(bundles: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for b in bundles {
            out.resize(out.len().next_multiple_of(BUNDLE_ALIGN), 0);
            out.extend_from_slice(b);
        }
        out
    }

    fn gpu(name: &str, sramecc: Option<bool>, xnack: Option<bool>) -> GpuTarget {
        GpuTarget {
            processor: GfxVersion::from_name(name).unwrap(),
            sramecc,
            xnack,
        }
    }

    fn fat(data: &[u8]) -> FatBinary {
        let i = inspect_bytes("/x.so", data, Limits::default()).unwrap();
        summarize("/x.so", &i)
    }

    #[test]
    fn variants_count_bundles_and_the_worst_bundle_decides() {
        let full = bundle(&[
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
            "hipv4-amdgcn-amd-amdhsa--gfx1100",
        ]);
        let partial = bundle(&["hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"]);
        let f = fat(&file(&[full.clone(), full, partial]));
        assert_eq!(f.bundles, 3);
        assert_eq!(f.code_objects, 5);
        assert_eq!(f.targets, ["gfx90a:xnack-", "gfx1100"]);
        assert_eq!(
            sorted(vec!["gfx1030".into(), "gfx90a".into(), "gfx900".into()]),
            ["gfx900", "gfx90a", "gfx1030"]
        );
        assert_eq!(f.variants.len(), 2);
        assert_eq!(f.variants[0].bundles, 2);
        // gfx1100 has code in two bundles of three: the file does not load.
        assert_eq!(
            f.verdict(&gpu("gfx1100", None, None)),
            Some(Verdict::NoCodeObject)
        );
        assert!(matches!(
            f.verdict(&gpu("gfx90a", Some(true), Some(false))),
            Some(Verdict::Loads { .. })
        ));
        // XNACK on: every bundle needs the feature change.
        assert!(matches!(
            f.verdict(&gpu("gfx90a", Some(true), Some(true))),
            Some(Verdict::NeedsFeatureChange { .. })
        ));
    }

    #[test]
    fn stand_in_reads_back_to_the_same_facts() {
        let a = bundle(&[
            "hipv4-amdgcn-amd-amdhsa--gfx908:xnack-",
            "hipv4-amdgcn-amd-amdhsa--gfx11-generic",
            "openmp-amdgcn-amd-amdhsa--gfx1030",
        ]);
        let b = bundle(&["hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"]);
        let data = file(&[a, b.clone(), b]);
        let original = inspect_bytes("/x.so", &data, Limits::default()).unwrap();
        let copy = stand_in(&original);
        let again = inspect_bytes("/x.so", &copy, Limits::default()).unwrap();
        assert_eq!(summarize("/x.so", &original), summarize("/x.so", &again));
    }

    #[test]
    fn a_file_without_device_code_has_no_verdict() {
        let f = fat(&bundle(&["openmp-amdgcn-amd-amdhsa--gfx90a"]));
        assert!(!f.has_code());
        assert_eq!(f.verdict(&gpu("gfx90a", Some(true), Some(false))), None);
    }
}
