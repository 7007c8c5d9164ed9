//! Layer 5: the ROCm libraries of each install and the gfx targets their kernel files carry.
//!
//! For every install of [`InstallFacts`], the probe lists (names only, never contents):
//! - the install's library directory, for the sonames of rocBLAS, hipBLAS, hipBLASLt, MIOpen,
//!   rocFFT, rocSPARSE, RCCL and the other `roc*`/`hip*` pairs;
//! - `<lib>/rocblas/library/` and `<lib>/hipblaslt/library/`, whose Tensile file names carry the
//!   target (`TensileLibrary_lazy_gfx90a.dat`, `Kernels.so-000-gfx1030.hsaco`,
//!   `extop_gfx942.co`, `library/gfx942/` subdirectories);
//! - `<prefix>/share/miopen/db/`, whose precompiled kernel databases are named by target and CU
//!   count (`gfx90a68.kdb`: gfx90a with 0x68 CUs; `gfx1030_40.kdb`).
//!
//! Every read goes through the [`SysRoot`]; unreadable directories are recorded as
//! problems (ARCHITECTURE.md §3, `facts/`).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::fatbin::{self, FatBinary, Unread};
use crate::facts::install::{InstallFacts, RocmVersion};
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// rocBLAS's Tensile directory, relative to an install's library directory.
pub const ROCBLAS_LIBRARY: &str = "rocblas/library";
/// hipBLASLt's Tensile directory, relative to an install's library directory.
pub const HIPBLASLT_LIBRARY: &str = "hipblaslt/library";
/// MIOpen's databases, relative to an install prefix.
pub const MIOPEN_DB: &str = "share/miopen/db";
/// At most this many names of one directory are looked at (a full rocBLAS has ~4000 per release).
const MAX_NAMES: usize = 50_000;

/// The libraries whose presence is recorded, by stem (`librocblas.so*` → `rocblas`).
pub const LIBRARIES: [&str; 13] = [
    "rocblas",
    "hipblas",
    "hipblaslt",
    "MIOpen",
    "rocfft",
    "hipfft",
    "rocsparse",
    "hipsparse",
    "rocsolver",
    "hipsolver",
    "rocrand",
    "hiprand",
    "rccl",
];

/// `hip*` wrappers and the `roc*` backend each needs on AMD GPUs.
pub const WRAPPERS: [(&str, &str); 5] = [
    ("hipblas", "rocblas"),
    ("hipfft", "rocfft"),
    ("hipsparse", "rocsparse"),
    ("hipsolver", "rocsolver"),
    ("hiprand", "rocrand"),
];

/// One library found by its file names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PresentLib {
    /// The stem (`rocblas`).
    pub name: String,
    /// Its files in the library directory (`librocblas.so.4`, `librocblas.so.4.2.60200`).
    pub files: Vec<String>,
    /// The library's own version from its most specific file name (`4.2` from
    /// `librocblas.so.4.2.60200`, `0.1` from Debian's `librocsparse.so.0.1`).
    pub version: Option<String>,
    /// The ROCm release the file name encodes (`60200` → 6.2.0; AMD's packages only).
    pub rocm: Option<RocmVersion>,
    /// The GPU code of that file, when read.
    pub code: Option<FatBinary>,
    /// Why the GPU code was not read, when it was looked for.
    pub code_unread: Option<Unread>,
}

impl PresentLib {
    /// The most specific file name: the real file the soname links lead to.
    pub fn real_file(&self) -> Option<&str> {
        self.files
            .iter()
            .max_by_key(|f| (f.matches('.').count(), f.len()))
            .map(String::as_str)
    }
}

/// The version part of a library file name after `.so.`: `4.2.60200` → (`4.2`, ROCm 6.2.0);
/// `0.1` → (`0.1`, none). A last component of five or six digits is AMD's ROCm encoding.
pub fn file_version(name: &str) -> (Option<String>, Option<RocmVersion>) {
    let Some((_, version)) = name.split_once(".so.") else {
        return (None, None);
    };
    let parts: Vec<&str> = version.split('.').collect();
    if parts.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return (None, None);
    }
    let last = parts[parts.len() - 1];
    let rocm = (parts.len() >= 2 && (5..=6).contains(&last.len()))
        .then(|| last.parse().ok().and_then(RocmVersion::from_encoded))
        .flatten();
    let own = if rocm.is_some() {
        &parts[..parts.len() - 1]
    } else {
        &parts[..]
    };
    (Some(own.join(".")), rocm)
}

/// A directory of per-target kernel files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelDir {
    /// The directory.
    pub dir: String,
    /// How many entries it has.
    pub entries: usize,
    /// The processors its names carry (`gfx90a`), sorted.
    pub targets: BTreeSet<String>,
}

/// One MIOpen kernel database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kdb {
    /// The file name (`gfx90a68.kdb`).
    pub file: String,
    /// The processor (`gfx90a`).
    pub target: String,
    /// The compute units it was tuned for, when the name says.
    pub cus: Option<u32>,
}

/// MIOpen's database directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KdbDir {
    /// The directory.
    pub dir: String,
    /// Its `.kdb` files.
    pub kdbs: Vec<Kdb>,
}

impl KdbDir {
    /// The processors with a kernel database.
    pub fn targets(&self) -> BTreeSet<String> {
        self.kdbs.iter().map(|k| k.target.clone()).collect()
    }
}

/// The libraries of one install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallLibraries {
    /// The install prefix (`/opt/rocm-6.2.0`).
    pub prefix: String,
    /// `ROCm 6.2.0 at /opt/rocm-6.2.0`.
    pub describe: crate::i18n::Text,
    /// The directory the libraries were looked for in.
    pub lib_dir: String,
    /// The libraries present, in [`LIBRARIES`] order.
    pub present: Vec<PresentLib>,
    /// rocBLAS's Tensile directory, when it exists.
    pub rocblas: Option<KernelDir>,
    /// hipBLASLt's Tensile directory, when it exists.
    pub hipblaslt: Option<KernelDir>,
    /// MIOpen's database directory, when it exists.
    pub miopen: Option<KdbDir>,
    /// Its library directories that are there but could not be looked into (a symlink escaping
    /// the fixture root, a loop, a refusal): never reported as absent.
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub unread: Vec<Problem>,
}

impl InstallLibraries {
    /// Whether the library with this stem is present.
    pub fn has(&self, name: &str) -> bool {
        self.present.iter().any(|p| p.name == name)
    }

    /// The files of a present library.
    pub fn files(&self, name: &str) -> Option<&[String]> {
        self.present
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.files.as_slice())
    }

    /// Whether anything of layer 5 is here.
    pub fn any(&self) -> bool {
        !self.present.is_empty()
            || self.rocblas.is_some()
            || self.hipblaslt.is_some()
            || self.miopen.is_some()
    }
}

/// Layer 5 facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LibraryFacts {
    /// Whether the installs were captured (see [`InstallFacts::captured`]).
    pub captured: bool,
    /// One entry per install, in [`InstallFacts::installs`] order.
    pub installs: Vec<InstallLibraries>,
}

impl Collect for LibraryFacts {
    /// The installs already found.
    type Needs<'a> = &'a InstallFacts;
    type Output = Self;

    /// Reads the libraries of the installs (their unreadable directories are reported by
    /// layer 5).
    fn collect(source: &Source, installs: &InstallFacts, problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let mut facts = Self {
            captured: installs.captured,
            ..Self::default()
        };
        if !installs.captured {
            return facts;
        }
        for install in &installs.installs {
            let lib_dir = install.lib_dir.clone();
            // Listed once per run: by the installs' collector when it looked for HIP there.
            let names = match &install.lib_names {
                Some(names) => names.iter().take(MAX_NAMES).cloned().collect(),
                None => list(root, &lib_dir, problems).unwrap_or_default(),
            };
            let present = LIBRARIES
                .iter()
                .filter_map(|&stem| {
                    let files: Vec<String> = names
                        .iter()
                        .filter(|n| is_soname_of(n, stem))
                        .cloned()
                        .collect();
                    (!files.is_empty()).then(|| present(root, &lib_dir, stem, files))
                })
                .collect();
            let mut unread = Vec::new();
            let kernel_dir = |rel: &str, problems: &mut Vec<Problem>| {
                let dir = format!("{}/{rel}", lib_dir.trim_end_matches('/'));
                if !crate::source::problem::exists(root, &dir, problems) {
                    return None;
                }
                let names = list(root, &dir, problems)?;
                Some(KernelDir {
                    entries: names.len(),
                    targets: names.iter().filter_map(|n| file_target(n)).collect(),
                    dir,
                })
            };
            let rocblas = kernel_dir(ROCBLAS_LIBRARY, &mut unread).or_else(|| {
                debian_rocblas(root, &lib_dir, &mut unread)
                    .and_then(|rel| kernel_dir(&rel, &mut unread))
            });
            let hipblaslt = kernel_dir(HIPBLASLT_LIBRARY, &mut unread);
            let db = format!("{}/{MIOPEN_DB}", install.prefix.trim_end_matches('/'));
            let miopen = if crate::source::problem::exists(root, &db, &mut unread) {
                list(root, &db, &mut unread).map(|names| KdbDir {
                    kdbs: names.iter().filter_map(|n| kdb(n)).collect(),
                    dir: db,
                })
            } else {
                None
            };
            facts.installs.push(InstallLibraries {
                prefix: install.prefix.clone(),
                describe: install.text(),
                lib_dir,
                present,
                rocblas,
                hipblaslt,
                miopen,
                unread,
            });
        }
        facts
    }
}

/// A present library with its version and the GPU code of its real file.
fn present(root: &SysRoot, lib_dir: &str, stem: &str, files: Vec<String>) -> PresentLib {
    let mut lib = PresentLib {
        name: stem.to_owned(),
        files,
        version: None,
        rocm: None,
        code: None,
        code_unread: None,
    };
    if let Some(real) = lib.real_file().map(str::to_owned) {
        (lib.version, lib.rocm) = file_version(&real);
        let path = format!("{}/{real}", lib_dir.trim_end_matches('/'));
        match fatbin::read(root, &path) {
            Ok(code) => lib.code = Some(code),
            Err(unread) => lib.code_unread = Some(unread),
        }
    }
    lib
}

/// Debian and Ubuntu install rocBLAS's Tensile files under a versioned directory
/// (`/usr/lib/x86_64-linux-gnu/rocblas/5.1.0/library`, package `librocblas5`): the newest one
/// with a `library` subdirectory, relative to the library directory.
fn debian_rocblas(root: &SysRoot, lib_dir: &str, problems: &mut Vec<Problem>) -> Option<String> {
    let base = format!("{}/rocblas", lib_dir.trim_end_matches('/'));
    if !crate::source::problem::exists(root, &base, problems) {
        return None;
    }
    let mut versions: Vec<(RocmVersion, String)> = list(root, &base, problems)?
        .into_iter()
        .filter_map(|v| RocmVersion::parse(&v).map(|p| (p, v)))
        .filter(|(_, v)| root.exists(&format!("{base}/{v}/library")))
        .collect();
    versions.sort_by_key(|v| v.0);
    versions.pop().map(|(_, v)| format!("rocblas/{v}/library"))
}

/// A bounded listing; a missing directory is `None` without a problem.
fn list(root: &SysRoot, dir: &str, problems: &mut Vec<Problem>) -> Option<Vec<String>> {
    let mut names = optional(root.read_dir(dir), problems)?;
    names.truncate(MAX_NAMES);
    Some(names)
}

/// `librocblas.so`, `librocblas.so.4`, `librocblas.so.4.2.60200` for `rocblas` (but not
/// `libhipblaslt.so` for `hipblas`).
pub fn is_soname_of(name: &str, stem: &str) -> bool {
    let Some(rest) = name
        .strip_prefix("lib")
        .and_then(|n| n.strip_prefix(stem))
        .and_then(|n| n.strip_prefix(".so"))
    else {
        return false;
    };
    rest.is_empty() || rest.starts_with('.')
}

/// The processor at the start of `s` (which starts right after `gfx`) and the rest: majors of
/// two digits start with 1 (gfx10, gfx11, gfx12), so the processor has 4 characters then, else
/// 3 (gfx900, gfx90a). `None` unless they are a decimal major and hex minor and stepping.
pub(crate) fn processor(s: &str) -> Option<(String, &str)> {
    let len = if s.starts_with('1') { 4 } else { 3 };
    let head = s.get(..len)?;
    let (major, minor_stepping) = head.split_at(len - 2);
    if !major.bytes().all(|b| b.is_ascii_digit())
        || !minor_stepping.bytes().all(|b| b.is_ascii_hexdigit())
        || minor_stepping.bytes().any(|b| b.is_ascii_uppercase())
    {
        return None;
    }
    Some((format!("gfx{head}"), &s[len..]))
}

/// The processor a rocBLAS or hipBLASLt file name carries: the first `gfx<processor>` that ends
/// the name or is followed by `.`, `_`, `-` or `:` (`TensileLibrary_lazy_gfx90a.dat`,
/// `Kernels.so-000-gfx90a-xnack-.hsaco`, `gfx942`). Generic targets (`gfx11-generic`) and
/// names without a target (`TensileLibrary_fallback.dat`) give `None`.
pub fn file_target(name: &str) -> Option<String> {
    let mut rest = name;
    while let Some(i) = rest.find("gfx") {
        let after = &rest[i + 3..];
        if let Some((target, tail)) = processor(after)
            && (tail.is_empty() || tail.starts_with(['.', '_', '-', ':']))
        {
            return Some(target);
        }
        rest = after;
    }
    None
}

/// An MIOpen kernel database name: `gfx90a68.kdb` (CUs in hex), `gfx1030_40.kdb` (decimal).
pub fn kdb(name: &str) -> Option<Kdb> {
    let stem = name.strip_suffix(".kdb")?;
    let (target, tail) = processor(stem.strip_prefix("gfx")?)?;
    let cus = if tail.is_empty() {
        None
    } else if let Some(dec) = tail.strip_prefix('_') {
        Some(dec.parse().ok()?)
    } else {
        Some(u32::from_str_radix(tail, 16).ok()?)
    };
    Some(Kdb {
        file: name.to_owned(),
        target,
        cus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensile_file_names() {
        let t = |n: &str| file_target(n);
        assert_eq!(
            t("TensileLibrary_lazy_gfx90a.dat").as_deref(),
            Some("gfx90a")
        );
        assert_eq!(
            t("TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx942.co").as_deref(),
            Some("gfx942")
        );
        assert_eq!(
            t("Kernels.so-000-gfx1030.hsaco").as_deref(),
            Some("gfx1030")
        );
        assert_eq!(
            t("TensileLibrary_Type_SS_Contraction_l_Alik_Bljk_Cijk_Dijk_fallback_gfx1100.hsaco")
                .as_deref(),
            Some("gfx1100")
        );
        assert_eq!(t("extop_gfx942.co").as_deref(), Some("gfx942"));
        assert_eq!(t("gfx942").as_deref(), Some("gfx942"));
        assert_eq!(
            t("Kernels.so-000-gfx90a-xnack-.hsaco").as_deref(),
            Some("gfx90a")
        );
        assert_eq!(
            t("TensileLibrary_gfx90a:xnack+.co").as_deref(),
            Some("gfx90a")
        );
        assert_eq!(
            t("TensileLibrary_lazy_gfx1103.dat").as_deref(),
            Some("gfx1103")
        );
        assert_eq!(
            t("TensileLibrary_lazy_gfx1201.dat").as_deref(),
            Some("gfx1201")
        );
        for none in [
            "TensileLibrary_fallback.dat",
            "TensileLibrary.dat",
            "hipblasltExtOpLibrary.dat",
            "hipblasltTransform.hsaco",
            "gfx11-generic",
            "gfx1030x.co",
            "gfx",
            "gfx9",
            "gfxABC.co",
        ] {
            assert_eq!(t(none), None, "{none}");
        }
    }

    #[test]
    fn kdb_names() {
        let k = kdb("gfx90a68.kdb").unwrap();
        assert_eq!((k.target.as_str(), k.cus), ("gfx90a", Some(0x68)));
        let k = kdb("gfx1030_40.kdb").unwrap();
        assert_eq!((k.target.as_str(), k.cus), ("gfx1030", Some(40)));
        let k = kdb("gfx942130.kdb").unwrap();
        assert_eq!((k.target.as_str(), k.cus), ("gfx942", Some(0x130)));
        let k = kdb("gfx1100.kdb").unwrap();
        assert_eq!((k.target.as_str(), k.cus), ("gfx1100", None));
        for bad in [
            "gfx90a68.HIP.fdb.txt",
            "gfx90a68.db",
            "gfx90a_x.kdb",
            "foo.kdb",
        ] {
            assert_eq!(kdb(bad), None, "{bad}");
        }
    }

    #[test]
    fn file_versions() {
        let v = |n: &str| file_version(n);
        let (own, rocm) = v("librocblas.so.4.2.60200");
        assert_eq!(own.as_deref(), Some("4.2"));
        assert_eq!(rocm.map(|r| r.to_string()).as_deref(), Some("6.2.0"));
        assert_eq!(v("librocsparse.so.0.1"), (Some("0.1".to_owned()), None));
        assert_eq!(v("librocblas.so.4"), (Some("4".to_owned()), None));
        assert_eq!(v("librccl.so.1.0.60300").1.map(|r| r.line()), Some((6, 3)));
        assert_eq!(v("librocblas.so"), (None, None));
        assert_eq!(v("librocblas.so.4.x"), (None, None));
        assert_eq!(v("librocblas.so.4..2"), (None, None));
    }

    #[test]
    fn sonames() {
        assert!(is_soname_of("librocblas.so", "rocblas"));
        assert!(is_soname_of("librocblas.so.4.2.60200", "rocblas"));
        assert!(is_soname_of("libMIOpen.so.1", "MIOpen"));
        assert!(!is_soname_of("libhipblaslt.so.0", "hipblas"));
        assert!(!is_soname_of("librocblas.a", "rocblas"));
        assert!(!is_soname_of("librocblas.sox", "rocblas"));
    }
}
