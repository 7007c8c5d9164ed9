//! Code objects: what GPU code a file carries, and whether it loads on a GPU.
//!
//! Reads host ELF files (executables, shared libraries, objects) with a `.hip_fatbin` section
//! or offload bundles embedded in their data; static archives of such objects; offload
//! bundles on their own (`__CLANG_OFFLOAD_BUNDLE__`, or compressed: `CCOB` v1–v3, zlib or
//! zstd); and AMDGPU code objects (`.co`, `.hsaco`). Then [`compat`] decides, per GPU, whether
//! one of them loads.
//!
//! Files are memory-mapped (`map`, the one module here allowed `unsafe`) and only the
//! ranges that matter are touched: the ELF section table, each bundle's header, and the first
//! 64 bytes of each code object. Every size and offset read from a file is checked against the
//! data before use; decompression is bounded by the header's declared size and by
//! [`Limits`]. Malformed input is an [`Error`] naming the file and the offset, never a panic.
//!
//! Walking `.hip_fatbin` follows `roc-obj-ls` (ROCm/clr `hipamd/bin/roc-obj-ls`): bundles
//! start 4096-aligned, the next one at the end of the last entry rounded up to 4096.

pub mod bundle;
pub mod ccob;
pub mod compat;
pub mod elf;
pub mod extract;
pub mod hostile;
mod map;
mod prose;
pub mod target_id;

use std::borrow::Cow;
use std::cell::Cell;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use ccob::Method;
pub use compat::{Gpu, InspectReport, Verdict};
pub use elf::CodeObjectHeader;
pub use target_id::TargetId;

use crate::source::root::{Contents, SysRoot};

/// Entries per bundle. A bundle holds one entry per offload target plus the host's: real ones
/// have a handful to a few dozen, and LLVM knows fewer than a hundred AMDGPU processors.
pub const MAX_ENTRIES: u64 = 1024;
/// Bytes per entry ID. Real IDs are about 50 bytes
/// (`hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`); no target ID with every feature
/// reaches 100.
pub const MAX_ID_LEN: u64 = 256;
/// Bytes of a compressed bundle decompressed to list its entries: the largest header the two
/// caps above allow, so no valid header is refused and nothing past one is decompressed.
pub const MAX_BUNDLE_HEADER: u64 = 32 + MAX_ENTRIES * (24 + MAX_ID_LEN);
/// Uncompressed size a compressed bundle may declare and still be listed: 4 GiB, what the u32
/// field of versions 1 and 2 holds. Listing decompresses only the header (v1's search for
/// the end of its stream decompresses into a fixed buffer), so this bounds time, not memory.
pub const MAX_DECLARED: u64 = 4 << 30;
/// Bytes a whole decompressed bundle may have (`inspect --extract`, `--disasm`), which are
/// held in memory. A bundle is one translation unit's code for every target; the largest in
/// ROCm's libraries are tens of MiB. 256 MiB leaves room for those and keeps the probe inside
/// 512 MiB of address space. Relative to the header, the cap is the declared size plus
/// [`ccob::MAX_OVER_DECLARED`] (nothing): one byte more is [`Malformed::LargerThanDeclared`].
pub const MAX_DECOMPRESSED: u64 = 256 << 20;
/// Bundles plus entries listed per file. A ROCm library has a few hundred bundles of a dozen
/// entries; a framework's (`libtorch_hip.so`) a few thousand bundles of up to twenty: under
/// 100,000. Past this, a small file of tiny bundles would make the listing (about 400 bytes of
/// memory and 80 printed per entry) far larger than the file.
pub const MAX_FILE_ENTRIES: u64 = 1 << 18;
/// Bytes of entry IDs listed per file: `MAX_FILE_ENTRIES` real IDs of 64 bytes.
pub const MAX_FILE_ID_BYTES: u64 = MAX_FILE_ENTRIES * 64;
/// Bundles plus entries listed by one run over several files ([`ListingBudget`]): the run holds
/// every listing until it prints them. A whole ROCm install (`inspect /opt/rocm/lib/*.so`) lists
/// a few hundred thousand; at about 400 bytes each this holds at most some 200 MB.
pub const MAX_RUN_ENTRIES: u64 = 1 << 19;
/// Bytes of entry IDs listed by one run: `MAX_RUN_ENTRIES` real IDs of 64 bytes.
pub const MAX_RUN_ID_BYTES: u64 = MAX_RUN_ENTRIES * 64;
/// Bytes `inspect --extract` writes in one run. A whole ROCm library's device code is at most
/// a couple of GiB (Debian's rocSPARSE: 1.3 GB); bundles whose entries repeat the same bytes,
/// or many small compressed bombs, would otherwise fill the disk.
pub const MAX_EXTRACTED: u64 = 4 << 30;

/// Bounds on what a file may make the reader do (defaults: the constants above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries per bundle ([`MAX_ENTRIES`]).
    pub max_entries: u64,
    /// Bytes per entry ID ([`MAX_ID_LEN`]).
    pub max_id_len: u64,
    /// Bytes of a compressed bundle's header decompressed to list its entries
    /// ([`MAX_BUNDLE_HEADER`]).
    pub max_bundle_header: u64,
    /// Uncompressed size a compressed bundle may declare to be listed ([`MAX_DECLARED`]).
    pub max_declared: u64,
    /// Bytes of a bundle decompressed whole ([`MAX_DECOMPRESSED`]).
    pub max_decompressed: u64,
    /// Bundles plus entries per file ([`MAX_FILE_ENTRIES`]).
    pub max_file_entries: u64,
    /// Bytes of entry IDs per file ([`MAX_FILE_ID_BYTES`]).
    pub max_file_id_bytes: u64,
    /// Bytes written by one extraction ([`MAX_EXTRACTED`]).
    pub max_extracted: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_entries: MAX_ENTRIES,
            max_id_len: MAX_ID_LEN,
            max_bundle_header: MAX_BUNDLE_HEADER,
            max_declared: MAX_DECLARED,
            max_decompressed: MAX_DECOMPRESSED,
            max_file_entries: MAX_FILE_ENTRIES,
            max_file_id_bytes: MAX_FILE_ID_BYTES,
            max_extracted: MAX_EXTRACTED,
        }
    }
}

/// What a run over several files may still list ([`CodeObjectFile::inspect_within`]): the
/// per-file caps of [`Limits`] bound one listing, this bounds their sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingBudget {
    max_entries: u64,
    max_id_bytes: u64,
    entries: u64,
    id_bytes: u64,
}

impl ListingBudget {
    /// A run's budget of `max_entries` bundles plus entries and `max_id_bytes` of entry IDs.
    pub fn new(max_entries: u64, max_id_bytes: u64) -> Self {
        Self {
            max_entries,
            max_id_bytes,
            entries: 0,
            id_bytes: 0,
        }
    }

    /// Takes `entries` and `id_bytes`, or says which cap refuses them.
    fn take(&mut self, entries: u64, id_bytes: u64) -> Result<(), Malformed> {
        self.entries += entries;
        self.id_bytes += id_bytes;
        if self.entries > self.max_entries {
            return Err(Malformed::TooManyInRun {
                limit: self.max_entries,
            });
        }
        if self.id_bytes > self.max_id_bytes {
            return Err(Malformed::IdBytesInRun {
                limit: self.max_id_bytes,
            });
        }
        Ok(())
    }
}

impl Default for ListingBudget {
    fn default() -> Self {
        Self::new(MAX_RUN_ENTRIES, MAX_RUN_ID_BYTES)
    }
}

/// What is wrong with a file's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// Not an ELF file, offload bundle or archive.
    NotRecognized,
    /// Expected an ELF file.
    NotElf,
    /// The ELF structure is broken.
    BadElf(String),
    /// The archive structure is broken.
    BadArchive(String),
    /// The data ends before a structure does.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        need: u64,
        /// Bytes present.
        have: u64,
    },
    /// Expected a bundle's magic.
    NotABundle,
    /// An entry count beyond [`Limits::max_entries`].
    TooManyEntries {
        /// Declared count.
        count: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry ID length beyond [`Limits::max_id_len`].
    IdTooLong {
        /// Declared length.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry ID that is not UTF-8.
    IdNotUtf8,
    /// An entry beyond the bundle's data.
    EntryOutOfBounds {
        /// Entry ID.
        id: String,
        /// Declared offset (from the bundle start).
        offset: u64,
        /// Declared size.
        size: u64,
        /// Bytes the bundle may span.
        available: u64,
    },
    /// A compressed-bundle version other than 1–3.
    UnknownVersion(u16),
    /// A compression method other than zlib or zstd.
    UnknownMethod(u16),
    /// A total size smaller than the header itself.
    TotalSizeTooSmall {
        /// Declared total.
        total: u64,
        /// Header size.
        header: u64,
    },
    /// A declared uncompressed size beyond [`Limits::max_declared`] (to list) or
    /// [`Limits::max_decompressed`] (to decompress whole).
    DeclaredTooLarge {
        /// Declared size.
        declared: u64,
        /// The limit.
        limit: u64,
    },
    /// A bundle header beyond [`Limits::max_bundle_header`].
    HeaderTooLarge {
        /// Header size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// More output than the header declares: a lying size or a decompression bomb.
    LargerThanDeclared {
        /// Declared size.
        declared: u64,
    },
    /// Less output than the header declares.
    SmallerThanDeclared {
        /// Declared size.
        declared: u64,
        /// Bytes produced.
        actual: u64,
    },
    /// The compressed stream ends early.
    CompressedTruncated,
    /// The decompressor refused the data.
    Decompress {
        /// zlib or zstd.
        method: &'static str,
        /// The decompressor's message.
        message: String,
    },
    /// The hash in the header does not match the data.
    HashMismatch {
        /// From the header.
        stored: u64,
        /// Of the decompressed data.
        computed: u64,
    },
    /// More bundles and entries in one file than [`Limits::max_file_entries`].
    TooManyInFile {
        /// The limit.
        limit: u64,
    },
    /// More entry ID bytes in one file than [`Limits::max_file_id_bytes`].
    IdBytesInFile {
        /// The limit.
        limit: u64,
    },
    /// More bundles and entries in one run than its [`ListingBudget`] allows.
    TooManyInRun {
        /// The limit.
        limit: u64,
    },
    /// More entry ID bytes in one run than its [`ListingBudget`] allows.
    IdBytesInRun {
        /// The limit.
        limit: u64,
    },
    /// Device entries of one bundle that add up to more than the bundle holds: they overlap,
    /// and extracting them would write more than was read.
    EntriesOverlap {
        /// 1-based bundle number.
        bundle: usize,
        /// Their sizes added.
        total: u64,
        /// The bundle's (decompressed) size.
        size: u64,
    },
    /// An extraction past [`Limits::max_extracted`].
    ExtractTooLarge {
        /// The limit.
        limit: u64,
    },
    /// An error inside a decompressed bundle.
    InDecompressed {
        /// Offset in the decompressed bundle.
        offset: u64,
        /// What is wrong there.
        kind: Box<Malformed>,
    },
}

/// A parser's error: where (from the start of the data it was given) and what. The path is
/// added once, at the file boundary ([`Error::Malformed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Offset from the start of the parsed data.
    pub offset: u64,
    /// What is wrong.
    pub kind: Malformed,
}

impl ParseError {
    pub(crate) fn at(offset: u64, kind: Malformed) -> Self {
        Self { offset, kind }
    }

    fn shift(self, by: u64) -> Self {
        Self {
            offset: self.offset.saturating_add(by),
            kind: self.kind,
        }
    }
}

/// Why a file could not be inspected.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened, read or mapped.
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The file's contents are malformed.
    Malformed {
        /// The file.
        path: PathBuf,
        /// Offset in the file.
        offset: u64,
        /// What is wrong.
        kind: Malformed,
    },
}

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileFormat {
    /// A host ELF file (executable, shared library, object).
    HostElf,
    /// A static archive of host objects.
    Archive,
    /// An AMDGPU code object.
    CodeObject,
    /// Offload bundles, uncompressed or compressed, as a file of their own.
    Bundle,
}

/// How a bundle is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BundleFormat {
    /// `__CLANG_OFFLOAD_BUNDLE__`.
    Uncompressed,
    /// `CCOB`.
    Compressed,
    /// A code object on its own (a `.co` or `.hsaco` file): one entry, no bundle header.
    CodeObject,
}

/// A compressed bundle's header, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compression {
    /// Format version: 1, 2 or 3.
    pub version: u16,
    /// zlib or zstd.
    pub method: Method,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: u64,
    /// The header's hash (first 8 bytes of the MD5 of the uncompressed bundle), hex.
    pub hash: String,
}

/// One entry of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Entry {
    /// Entry ID as stored (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`); for a code object on
    /// its own, its ISA name (`amdgcn-amd-amdhsa--gfx90a:xnack-`).
    pub id: String,
    /// Offload kind (`host`, `hip`, `hipv4`, `hcc`, `openmp`); `None` for a code object on
    /// its own.
    pub kind: Option<String>,
    /// Target triple (`amdgcn-amd-amdhsa`).
    pub triple: String,
    /// The target ID, when the entry names one ROCr could understand.
    pub target: Option<TargetId>,
    /// Offset: in the file, or — in a compressed bundle — in the decompressed bundle.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Whether the entry is inside a compressed bundle.
    pub compressed: bool,
    /// The code object's ELF header, when read (entries of uncompressed bundles and code
    /// objects on their own).
    pub code_object: Option<CodeObjectHeader>,
}

impl Entry {
    /// Whether this is a code object the HIP runtime would consider: an HSA amdgcn entry of
    /// kind `hip`, `hipv4` or `hcc` (comgr's list), or a code object on its own.
    pub fn is_device(&self) -> bool {
        let kind = self
            .kind
            .as_deref()
            .is_none_or(|k| matches!(k, "hip" | "hipv4" | "hcc"));
        kind && self.triple == "amdgcn-amd-amdhsa" && self.target.is_some()
    }
}

/// One bundle (or code object on its own) in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Bundle {
    /// 1-based, in file order (as `roc-obj-ls` numbers them).
    pub index: usize,
    /// Offset of the bundle in the file.
    pub offset: u64,
    /// Bytes it spans in the file (compressed size for compressed bundles).
    pub size: u64,
    /// How it is stored.
    pub format: BundleFormat,
    /// The archive member it is in.
    pub member: Option<String>,
    /// The compressed header, for compressed bundles.
    pub compression: Option<Compression>,
    /// Entries in header order.
    pub entries: Vec<Entry>,
}

/// What a file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Inspection {
    /// The file as given.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
    /// What it is.
    pub format: FileFormat,
    /// Its bundles in file order.
    pub bundles: Vec<Bundle>,
}

impl Inspection {
    /// The distinct device target IDs, in order of first appearance.
    pub fn targets(&self) -> Vec<String> {
        // A set beside the list: a file may list tens of thousands of entries.
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<String> = Vec::new();
        for e in self.bundles.iter().flat_map(|b| &b.entries) {
            if let (true, Some(t)) = (e.is_device(), &e.target) {
                let t = t.to_string();
                if seen.insert(t.clone()) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// How many device code objects the file holds.
    pub fn code_object_count(&self) -> usize {
        self.bundles
            .iter()
            .flat_map(|b| &b.entries)
            .filter(|e| e.is_device())
            .count()
    }
}

/// A file opened for inspection: its memory map.
#[derive(Debug)]
pub struct CodeObjectFile {
    path: PathBuf,
    map: map::Mapped,
    limits: Limits,
}

/// Inspects a file with the default limits.
///
/// With the machine's GPUs ([`crate::Inventory::code_object_gpus`]) or named ones
/// ([`Gpu::from_target_id`]), [`InspectReport`] gives each GPU a verdict: what
/// `rocm-probe inspect` prints.
///
/// ```
/// use rocm_probe::codeobject::{self, Gpu, InspectReport, Verdict};
/// use rocm_probe::{Inventory, Source};
///
/// let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/library-xnack-plus-only");
/// let lib = format!("{fixture}/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200");
/// let inspection = codeobject::inspect(&lib)?;
/// assert_eq!(inspection.targets(), ["gfx90a:xnack+"]);
///
/// // The fixture's MI210s run with XNACK off: the library does not load as they are set up.
/// let gpus = Inventory::collect(&Source::fixture(fixture)?)?.code_object_gpus();
/// let report = InspectReport::new(vec![inspection.clone()], gpus, None);
/// let verdict = &report.files[0].verdicts[0].verdict;
/// assert!(matches!(verdict, Verdict::NeedsFeatureChange { .. }));
/// assert!(!verdict.loads_as_set_up());
/// assert_eq!(report.exit_code(), 1);
///
/// // A GPU named by its target ID: with XNACK on, it loads.
/// let gpu = Gpu::from_target_id("gfx90a:sramecc+:xnack+")?;
/// let report = InspectReport::new(vec![inspection], vec![gpu], None);
/// assert!(report.files[0].verdicts[0].verdict.loads_as_set_up());
/// assert_eq!(report.exit_code(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection, Error> {
    CodeObjectFile::open(path)?.inspect()
}

/// Inspects bytes in memory (tests, fuzzing); `label` stands in for the path in errors.
pub fn inspect_bytes(label: &str, data: &[u8], limits: Limits) -> Result<Inspection, Error> {
    Reader::new(data, limits, None).inspect(Path::new(label))
}

impl CodeObjectFile {
    /// Opens and maps a file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with(path, Limits::default())
    }

    /// Opens a file given as an absolute path inside `root` (a fixture or the live system).
    pub fn open_in(root: &SysRoot, abs: &str) -> Result<Self, Error> {
        let contents = root.contents(abs).map_err(|e| Error::Io {
            path: PathBuf::from(abs),
            source: io::Error::other(e.kind.to_string()),
        })?;
        match contents {
            Contents::File(path) => Self::open(path),
            Contents::Memory(bytes) => Ok(Self {
                path: PathBuf::from(abs),
                map: map::Mapped::memory(bytes),
                limits: Limits::default(),
            }),
        }
    }

    /// Opens and maps a file with other limits.
    pub fn open_with(path: impl AsRef<Path>, limits: Limits) -> Result<Self, Error> {
        let path = path.as_ref().to_owned();
        let io_err = |source| Error::Io {
            path: path.clone(),
            source,
        };
        // Non-blocking: opening a FIFO for reading blocks until a writer comes, which may be
        // never. The type is checked on the open file, so a swap after a check cannot fool it.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
            .open(&path)
            .map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        if meta.is_dir() {
            return Err(io_err(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        if !meta.is_file() {
            // A FIFO, socket or device has no length to map and might never end.
            return Err(io_err(io::Error::other(crate::msg!(
                "codeobject-error.not-regular"
            ))));
        }
        let map = map::Mapped::new(&file).map_err(io_err)?;
        Ok(Self { path, map, limits })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size.
    pub fn len(&self) -> u64 {
        self.map.bytes().len() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole file (pages are read as they are touched).
    pub fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    fn reader(&self) -> Reader<'_> {
        Reader::new(self.map.bytes(), self.limits, Some(&self.map))
    }

    /// Lists the file's bundles and entries.
    pub fn inspect(&self) -> Result<Inspection, Error> {
        self.reader().inspect(&self.path)
    }

    /// [`inspect`](Self::inspect) drawing on a budget shared by the files of one run, for a
    /// caller that keeps every listing (as `inspect FILE…` does until it prints them).
    pub fn inspect_within(&self, budget: &mut ListingBudget) -> Result<Inspection, Error> {
        let reader = self.reader();
        reader.run.set(Some(*budget));
        let result = reader.inspect(&self.path);
        if let Some(spent) = reader.run.get() {
            *budget = spent;
        }
        result
    }

    fn malformed(&self, e: ParseError) -> Error {
        Error::Malformed {
            path: self.path.clone(),
            offset: e.offset,
            kind: e.kind,
        }
    }

    fn out_of_bounds(&self, bundle: &Bundle, entry: &Entry) -> Error {
        self.malformed(ParseError::at(
            bundle.offset,
            Malformed::EntryOutOfBounds {
                id: entry.id.clone(),
                offset: entry.offset,
                size: entry.size,
                available: bundle.size,
            },
        ))
    }

    /// The bundle as stored uncompressed: a slice of the file, or the decompressed bytes of a
    /// compressed bundle (size and hash checked).
    pub fn bundle_bytes(&self, bundle: &Bundle) -> Result<Cow<'_, [u8]>, Error> {
        let data = self.map.bytes();
        let start = usize::try_from(bundle.offset).unwrap_or(usize::MAX);
        let Some(rest) = data.get(start..) else {
            return Err(self.malformed(ParseError::at(
                bundle.offset,
                Malformed::Truncated {
                    what: "bundle",
                    need: bundle.offset,
                    have: data.len() as u64,
                },
            )));
        };
        match bundle.format {
            BundleFormat::Compressed => ccob::decompress(rest, &self.limits)
                .map(|(_, bytes)| Cow::Owned(bytes))
                .map_err(|e| self.malformed(e.shift(bundle.offset))),
            BundleFormat::Uncompressed | BundleFormat::CodeObject => {
                let len = usize::try_from(bundle.size).unwrap_or(usize::MAX);
                rest.get(..len).map(Cow::Borrowed).ok_or_else(|| {
                    self.malformed(ParseError::at(
                        bundle.offset,
                        Malformed::Truncated {
                            what: "bundle",
                            need: bundle.offset.saturating_add(bundle.size),
                            have: data.len() as u64,
                        },
                    ))
                })
            }
        }
    }

    /// The bytes of one entry (decompressing its bundle when it is compressed).
    pub fn entry_bytes(&self, bundle: &Bundle, entry: &Entry) -> Result<Cow<'_, [u8]>, Error> {
        let range = |len: usize, base: u64| {
            let start = usize::try_from(entry.offset.checked_sub(base)?).ok()?;
            let end = start.checked_add(usize::try_from(entry.size).ok()?)?;
            (end <= len).then_some(start..end)
        };
        let out_of_bounds = || self.out_of_bounds(bundle, entry);
        match self.bundle_bytes(bundle)? {
            Cow::Borrowed(bytes) => {
                let r = range(bytes.len(), bundle.offset).ok_or_else(out_of_bounds)?;
                Ok(Cow::Borrowed(&bytes[r]))
            }
            Cow::Owned(bytes) => {
                let r = range(bytes.len(), 0).ok_or_else(out_of_bounds)?;
                Ok(Cow::Owned(bytes[r].to_vec()))
            }
        }
    }
}

/// The parsing side, over bytes from a map or from memory.
struct Reader<'a> {
    data: &'a [u8],
    limits: Limits,
    /// The map `data` comes from, when it does: scanned ranges are released from it.
    map: Option<&'a map::Mapped>,
    /// Bundles plus entries listed so far, against [`Limits::max_file_entries`].
    listed: Cell<u64>,
    /// Entry ID bytes listed so far, against [`Limits::max_file_id_bytes`].
    id_bytes: Cell<u64>,
    /// The run's budget, when the caller shares one across files.
    run: Cell<Option<ListingBudget>>,
}

/// Bundles in `.hip_fatbin` start at multiples of this, from the section start.
const BUNDLE_ALIGN: u64 = 4096;
/// Ranges scanned for embedded bundles are released from memory in steps of this size.
const SCAN_STEP: usize = 64 << 20;

fn starts_bundle(data: &[u8]) -> bool {
    data.starts_with(bundle::BUNDLE_MAGIC) || data.starts_with(ccob::CCOB_MAGIC)
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], limits: Limits, map: Option<&'a map::Mapped>) -> Self {
        Self {
            data,
            limits,
            map,
            listed: Cell::new(0),
            id_bytes: Cell::new(0),
            run: Cell::new(None),
        }
    }

    /// Counts a bundle and its entries against the per-file caps, before they are kept.
    fn account<'i>(&self, at: u64, ids: impl Iterator<Item = &'i str>) -> Result<(), ParseError> {
        let (mut count, mut id_bytes) = (1, 0);
        for id in ids {
            count += 1;
            id_bytes += id.len() as u64;
        }
        let (listed, bytes) = (self.listed.get() + count, self.id_bytes.get() + id_bytes);
        self.listed.set(listed);
        self.id_bytes.set(bytes);
        if let Some(mut run) = self.run.get() {
            let taken = run.take(count, id_bytes);
            self.run.set(Some(run));
            taken.map_err(|kind| ParseError::at(at, kind))?;
        }
        let limits = &self.limits;
        if listed > limits.max_file_entries {
            let limit = limits.max_file_entries;
            return Err(ParseError::at(at, Malformed::TooManyInFile { limit }));
        }
        if bytes > limits.max_file_id_bytes {
            let limit = limits.max_file_id_bytes;
            return Err(ParseError::at(at, Malformed::IdBytesInFile { limit }));
        }
        Ok(())
    }

    /// Drops a range that has been scanned whole from memory.
    fn release(&self, offset: usize, len: usize) {
        if let Some(map) = self.map {
            map.release(offset, len);
        }
    }

    fn inspect(&self, path: &Path) -> Result<Inspection, Error> {
        let malformed = |e: ParseError| Error::Malformed {
            path: path.to_owned(),
            offset: e.offset,
            kind: e.kind,
        };
        let data = self.data;
        let mut bundles = Vec::new();
        let format = if elf::is_elf(data) {
            match elf::code_object_header(data).map_err(malformed)? {
                Some(header) => {
                    bundles.push(standalone(header, data.len() as u64));
                    FileFormat::CodeObject
                }
                None => {
                    self.host(data, 0, None, &mut bundles).map_err(malformed)?;
                    FileFormat::HostElf
                }
            }
        } else if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
            self.archive(&mut bundles).map_err(malformed)?;
            FileFormat::Archive
        } else if starts_bundle(data) {
            let whole = elf::Range {
                offset: 0,
                size: data.len() as u64,
            };
            self.walk(whole, None, &mut bundles).map_err(malformed)?;
            FileFormat::Bundle
        } else {
            return Err(malformed(ParseError::at(0, Malformed::NotRecognized)));
        };
        Ok(Inspection {
            path: path.to_owned(),
            size: data.len() as u64,
            format,
            bundles,
        })
    }

    /// The bundles of the host ELF file `elf_data`, which starts at `base` in the file.
    fn host(
        &self,
        elf_data: &[u8],
        base: u64,
        member: Option<&str>,
        out: &mut Vec<Bundle>,
    ) -> Result<(), ParseError> {
        // Section offsets come from the file: an absurd one saturates and then fails the
        // bounds check of `walk` or `scan`.
        let shift = |r: elf::Range| elf::Range {
            offset: r.offset.saturating_add(base),
            size: r.size,
        };
        match elf::host_sections(elf_data).map_err(|e| e.shift(base))? {
            elf::HostSections::HipFatbin(r) => self.walk(shift(r), member, out),
            elf::HostSections::Data(ranges) => {
                for r in ranges {
                    self.scan(shift(r), member, out)?;
                }
                Ok(())
            }
        }
    }

    fn archive(&self, out: &mut Vec<Bundle>) -> Result<(), ParseError> {
        use object::read::archive::ArchiveFile;
        let bad = |e: object::read::Error| ParseError::at(0, Malformed::BadArchive(e.to_string()));
        let archive = ArchiveFile::parse(self.data).map_err(bad)?;
        if archive.is_thin() {
            // Members live in other files.
            return Ok(());
        }
        for member in archive.members() {
            let member = member.map_err(bad)?;
            let (offset, size) = member.file_range();
            let bytes = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(size).ok())
                .and_then(|(o, s)| self.data.get(o..o.checked_add(s)?))
                .ok_or_else(|| {
                    ParseError::at(
                        offset,
                        Malformed::Truncated {
                            what: "archive member",
                            need: offset.saturating_add(size),
                            have: self.data.len() as u64,
                        },
                    )
                })?;
            if !elf::is_elf(bytes) {
                continue;
            }
            let name = String::from_utf8_lossy(member.name()).into_owned();
            match elf::code_object_header(bytes).map_err(|e| e.shift(offset))? {
                Some(header) => {
                    self.account(offset, std::iter::empty())?;
                    let mut b = standalone(header, size);
                    b.offset = offset;
                    b.entries[0].offset = offset;
                    b.member = Some(name);
                    b.index = out.len() + 1;
                    out.push(b);
                }
                None => self.host(bytes, offset, Some(&name), out)?,
            }
        }
        Ok(())
    }

    /// Walks the bundles of a `.hip_fatbin` section (or a file of bundles) as `roc-obj-ls`
    /// does: from the start, each bundle followed by the next at the next 4096 boundary. Where
    /// that boundary holds no bundle, zero padding is skipped; anything else ends the walk.
    fn walk(
        &self,
        region: elf::Range,
        member: Option<&str>,
        out: &mut Vec<Bundle>,
    ) -> Result<(), ParseError> {
        let start = region.offset;
        let end = start
            .checked_add(region.size)
            .filter(|e| *e <= self.data.len() as u64);
        let Some(end) = end else {
            return Err(ParseError::at(
                start,
                Malformed::Truncated {
                    what: "section",
                    need: start.saturating_add(region.size),
                    have: self.data.len() as u64,
                },
            ));
        };
        let region_data = &self.data[start as usize..end as usize];
        let mut pos = 0u64;
        while pos < region.size {
            let here = &region_data[pos as usize..];
            if !starts_bundle(here) {
                break;
            }
            let bundle_end = pos + self.bundle_at(region_data, pos, start, member, out)?;
            let aligned = bundle_end.next_multiple_of(BUNDLE_ALIGN);
            pos = if region_data
                .get(aligned as usize..)
                .is_some_and(starts_bundle)
            {
                aligned
            } else {
                let rest = region_data.get(bundle_end as usize..).unwrap_or_default();
                bundle_end + self.zeros(rest, (start + bundle_end) as usize)
            };
        }
        Ok(())
    }

    /// Parses the bundle at `pos` of `region_data` (which starts at `base` in the file),
    /// appends it, and returns how many bytes it spans.
    fn bundle_at(
        &self,
        region_data: &[u8],
        pos: u64,
        base: u64,
        member: Option<&str>,
        out: &mut Vec<Bundle>,
    ) -> Result<u64, ParseError> {
        let here = &region_data[pos as usize..];
        let file_offset = base + pos;
        let located = |e: ParseError| e.shift(file_offset);
        let (entries, size, compression, format) = if here.starts_with(ccob::CCOB_MAGIC) {
            let listed = ccob::list(here, &self.limits).map_err(located)?;
            let ids = listed.bundle.entries.iter().map(|e| e.id.as_str());
            self.account(file_offset, ids)?;
            let entries = listed
                .bundle
                .entries
                .iter()
                .map(|e| entry(&e.id, e.offset, e.size, true, None))
                .collect();
            let h = listed.header;
            let compression = Compression {
                version: h.version,
                method: h.method,
                uncompressed_size: h.uncompressed_size,
                hash: format!("{:016x}", h.hash),
            };
            (
                entries,
                listed.size,
                Some(compression),
                BundleFormat::Compressed,
            )
        } else {
            let raw = bundle::parse(here, here.len() as u64, &self.limits).map_err(located)?;
            self.account(file_offset, raw.entries.iter().map(|e| e.id.as_str()))?;
            let entries = raw
                .entries
                .iter()
                .map(|e| {
                    let at = file_offset + e.offset;
                    let header = (e.size >= elf::ELF64_HEADER_SIZE as u64)
                        .then(|| {
                            let s = at as usize;
                            let bytes = &self.data[s..s + elf::ELF64_HEADER_SIZE];
                            elf::code_object_header(bytes).ok().flatten()
                        })
                        .flatten();
                    entry(&e.id, at, e.size, false, header)
                })
                .collect();
            (entries, raw.end, None, BundleFormat::Uncompressed)
        };
        out.push(Bundle {
            index: out.len() + 1,
            offset: file_offset,
            size,
            format,
            member: member.map(str::to_owned),
            compression,
            entries,
        });
        Ok(size)
    }

    /// How many zeros start `data` (at `offset` in the file). Padding may run to the end of a
    /// huge file: holes of a sparse file are skipped unread, and what has been scanned is
    /// released, so neither the time on holes nor the resident set grows with the padding.
    fn zeros(&self, data: &[u8], offset: usize) -> u64 {
        let mut n = 0;
        while n < data.len() {
            let hole_end = self
                .map
                .and_then(|m| m.next_data(offset + n))
                .map_or(0, |d| d.saturating_sub(offset));
            if hole_end > n {
                n = hole_end.min(data.len());
                continue;
            }
            let end = (n + SCAN_STEP).min(data.len());
            let z = leading_zeros(&data[n..end]);
            self.release(offset + n, z);
            n += z;
            if n < end {
                break;
            }
        }
        n as u64
    }

    /// Searches a data section for embedded bundles; what only looks like one is skipped.
    fn scan(
        &self,
        region: elf::Range,
        member: Option<&str>,
        out: &mut Vec<Bundle>,
    ) -> Result<(), ParseError> {
        let (Ok(start), Ok(size)) = (usize::try_from(region.offset), usize::try_from(region.size))
        else {
            return Ok(());
        };
        let Some(region_data) = start
            .checked_add(size)
            .and_then(|end| self.data.get(start..end))
        else {
            return Err(ParseError::at(
                region.offset,
                Malformed::Truncated {
                    what: "section",
                    need: region.offset.saturating_add(region.size),
                    have: self.data.len() as u64,
                },
            ));
        };
        let mut pos = 0usize;
        let mut released = 0usize;
        while let Some(found) = find_magic(&region_data[pos..]) {
            let at = pos + found;
            let mut tentative = Vec::new();
            match self.bundle_at(
                region_data,
                at as u64,
                region.offset,
                member,
                &mut tentative,
            ) {
                // A magic followed by a count of zero is a constant, not a bundle.
                Ok(len) if tentative.iter().all(|b| !b.entries.is_empty()) => {
                    for mut b in tentative {
                        b.index = out.len() + 1;
                        out.push(b);
                    }
                    pos = at + (len as usize).max(1);
                }
                // Four bytes of "CCOB" in constant data are not a bundle.
                _ => pos = at + 1,
            }
            if pos - released >= SCAN_STEP {
                self.release(start + released, pos - released);
                released = pos;
            }
        }
        self.release(start + released, size - released.min(size));
        Ok(())
    }
}

/// How many zeros start `data`, compared a page at a time.
fn leading_zeros(data: &[u8]) -> usize {
    const PAGE: [u8; 4096] = [0; 4096];
    let mut n = 0;
    for chunk in data.chunks(PAGE.len()) {
        if chunk != &PAGE[..chunk.len()] {
            return n + chunk.iter().take_while(|b| **b == 0).count();
        }
        n += chunk.len();
    }
    n
}

/// The first offset where a bundle magic starts.
fn find_magic(data: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + 4 <= data.len() {
        let w = &data[i..i + 4];
        if (w == ccob::CCOB_MAGIC.as_slice() || w == &bundle::BUNDLE_MAGIC[..4])
            && starts_bundle(&data[i..])
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn entry(
    id: &str,
    offset: u64,
    size: u64,
    compressed: bool,
    header: Option<CodeObjectHeader>,
) -> Entry {
    let parts = bundle::split_id(id);
    Entry {
        id: id.to_owned(),
        kind: Some(parts.kind.to_owned()),
        triple: parts.triple.to_owned(),
        target: parts.target.and_then(|t| TargetId::parse(t).ok()),
        offset,
        size,
        compressed,
        code_object: header,
    }
}

/// A code object on its own as a one-entry bundle.
fn standalone(header: CodeObjectHeader, size: u64) -> Bundle {
    let triple = header.triple().to_owned();
    let id = match &header.target {
        Some(t) => format!("{triple}--{t}"),
        None => format!("{triple}--unknown-mach-{:#x}", header.mach),
    };
    Bundle {
        index: 1,
        offset: 0,
        size,
        format: BundleFormat::CodeObject,
        member: None,
        compression: None,
        entries: vec![Entry {
            id,
            kind: None,
            triple,
            target: header.target.clone(),
            offset: 0,
            size,
            compressed: false,
            code_object: Some(header),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::bundle::write as bundle;

    fn code_object(mach: u32, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 256];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[7] = elf::ELFOSABI_AMDGPU_HSA;
        h[8] = 2;
        h[16..18].copy_from_slice(&3u16.to_le_bytes());
        h[18..20].copy_from_slice(&elf::EM_AMDGPU.to_le_bytes());
        h[48..52].copy_from_slice(&(mach | flags).to_le_bytes());
        h
    }

    fn sample() -> Vec<u8> {
        let gfx90a = code_object(0x3f, 0x200 | 0x400);
        let gfx1100 = code_object(0x41, 0);
        bundle(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", &gfx90a),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", &gfx1100),
        ])
    }

    #[test]
    fn bundle_files_one_after_another() {
        // Two bundles, the second at the next 4096 boundary, then one compressed after zeros.
        let one = sample();
        let mut data = one.clone();
        data.resize(4096, 0);
        data.extend(&one);
        data.resize(8192 + 100, 0);
        data.extend(ccob::encode(&one, 2, Method::Zstd, 3).unwrap());
        let i = inspect_bytes("mem", &data, Limits::default()).unwrap();
        assert_eq!(i.format, FileFormat::Bundle);
        assert_eq!(i.bundles.len(), 3);
        assert_eq!(i.bundles[1].offset, 4096);
        assert_eq!(i.bundles[2].offset, 8192 + 100);
        assert_eq!(i.bundles[2].format, BundleFormat::Compressed);
        assert_eq!(i.targets(), ["gfx90a:xnack-", "gfx1100"]);
        assert_eq!(i.code_object_count(), 6);
        let e = &i.bundles[0].entries[1];
        assert_eq!(e.code_object.as_ref().unwrap().target, e.target);
        assert!(!i.bundles[0].entries[0].is_device());
    }

    #[test]
    fn a_code_object_alone() {
        let i = inspect_bytes("mem", &code_object(0x4c, 0x300 | 0xc00), Limits::default()).unwrap();
        assert_eq!(i.format, FileFormat::CodeObject);
        assert_eq!(
            i.bundles[0].entries[0].id,
            "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack+"
        );
        assert!(i.bundles[0].entries[0].is_device());
    }

    /// Opening a FIFO (which blocks until a writer comes) or a device is an error naming the
    /// path, at once: the open runs on a thread that the test stops waiting for after 20 s.
    #[test]
    fn a_fifo_or_device_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.co");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        for path in [fifo, PathBuf::from("/dev/null")] {
            let (tx, rx) = std::sync::mpsc::channel();
            let p = path.clone();
            std::thread::spawn(move || tx.send(CodeObjectFile::open(&p).map(|_| ())));
            let result = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("opening {} hangs", path.display()));
            let err = result.unwrap_err();
            assert!(
                matches!(&err, Error::Io { path: p, .. } if *p == path),
                "{err:?}"
            );
        }
    }

    /// A cheap fuzzer: thousands of deterministic mutations of valid inputs never panic.
    #[test]
    fn mutations_never_panic() {
        let plain = sample();
        let inputs = [
            plain.clone(),
            ccob::encode(&plain, 1, Method::Zlib, 6).unwrap(),
            ccob::encode(&plain, 2, Method::Zstd, 3).unwrap(),
            ccob::encode(&plain, 3, Method::Zlib, 6).unwrap(),
            code_object(0x3f, 0x300),
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let limits = Limits {
            max_decompressed: 1 << 20,
            ..Limits::default()
        };
        for input in &inputs {
            for _ in 0..2000 {
                let mut m = input.clone();
                for _ in 0..(next() % 4 + 1) {
                    let at = (next() % m.len() as u64) as usize;
                    match next() % 4 {
                        0 => m[at] ^= 1 << (next() % 8),
                        1 => m[at] = next() as u8,
                        2 => m.truncate(at),
                        _ => {
                            // A random little-endian u64 (a size or offset) somewhere.
                            let end = (at + 8).min(m.len());
                            let v = next().to_le_bytes();
                            m[at..end].copy_from_slice(&v[..end - at]);
                        }
                    }
                    if m.is_empty() {
                        break;
                    }
                }
                let _ = inspect_bytes("mem", &m, limits);
                if m.starts_with(ccob::CCOB_MAGIC) {
                    let _ = ccob::decompress(&m, &limits);
                }
            }
        }
    }
}
