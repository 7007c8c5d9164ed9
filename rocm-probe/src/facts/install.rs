//! ROCm installs on disk (`/opt/rocm*`, a distribution's `/usr`), their versions, and what a
//! process would load.
//!
//! Everything is read through the source: directory listings, a few `exists` probes per library
//! directory, the targets of soname symlinks (`libhsa-runtime64.so.1 → …so.1.14.60200`: the
//! probe reads names, never library contents), `.info/version`, `/etc/ld.so.conf` and the files
//! it includes. `/etc/ld.so.cache` is not read and nothing is loaded: "which library a process
//! would load" is the dynamic loader's search order rebuilt from its inputs
//! (`LD_LIBRARY_PATH`, then the `ld.so.conf` directories, then the default directories).
//!
//! Unreadable or malformed install files are kept in
//! [`Problems::installs`](crate::facts::Problems::installs) and reported by the runtime layer,
//! not as driver or platform input.

use crate::msg;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::{Serialize, Serializer};

use std::path::{Path, PathBuf};

use crate::active::thunk::ThunkLibrary;
use crate::facts::Collect;
use crate::source::Source;
use crate::source::active_results::LoadError;
use crate::source::problem::{Problem, optional};
use crate::source::root::{ReadErrorKind, SysRoot};

/// Where AMD's packages install ROCm (`/opt/rocm-X.Y.Z`, with `/opt/rocm` pointing at one).
pub const OPT: &str = "/opt";
/// The conventional ROCm path: a symlink (often through `/etc/alternatives/rocm`) or a directory.
pub const OPT_ROCM: &str = "/opt/rocm";
/// rocm-core's version file, relative to an install prefix.
pub const VERSION_FILE: &str = ".info/version";
/// rocm-core's version header, relative to an install prefix.
pub const VERSION_HEADER: &str = "include/rocm-core/rocm_version.h";
/// The dynamic loader's configuration.
pub const LD_SO_CONF: &str = "/etc/ld.so.conf";
/// ROCr's soname (stable from ROCm 1.x to 7.x).
pub const ROCR_SONAME: &str = "libhsa-runtime64.so.1";
/// The shared thunk's soname (distribution builds; AMD's packages until ROCm 4.2).
pub const HSAKMT_SONAME: &str = "libhsakmt.so.1";
/// HIP's sonames are `libamdhip64.so.<major>` for any major: found by listing a library
/// directory, never from a list of majors (ROCm 4 → `.so.4`, …, ROCm 7 → `.so.7`; ROCm Core SDK
/// 10.0 still ships HIP 7.15 as `libamdhip64.so.7`, sbates130272/qemu-minimal#153).
pub const HIP_SONAME_STEM: &str = "libamdhip64.so.";

/// The HIP majors asked for by name where a directory is not listed (a system library tree
/// without ROCr): 1 to 7 have shipped (HIP 7.x through ROCm 10.1); the rest is margin.
const HIP_MAJORS_ASKED: u32 = 12;
/// The ROCm Core SDK's native packages (TheRock, 7.14 and later) install into a versioned
/// directory inside a real `/opt/rocm` directory, `/opt/rocm/core-<major>.<minor>`
/// (`build_tools/packaging/linux/build_package.py`: `/opt/rocm/core-7.15`; ASAN builds
/// `/opt/rocm/core-asan-7.15`), and make `/opt/rocm/core`, `/opt/rocm/core-<major>`,
/// `/opt/rocm/lib`, `/opt/rocm/bin` … update-alternatives links into it
/// (`template/scripts/amdrocm-core-postinst.j2`).
pub const CORE_SDK_DIR: &str = "core-";
/// The loader's default directories after `ld.so.conf` (Debian multiarch, then Fedora/SUSE
/// `lib64`, then plain `lib`).
pub const DEFAULT_LIB_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];
/// Paths whose presence in a fixture means the installs were captured (ARCHITECTURE.md §4a: no `opt` and no
/// library directory means "not captured"). `/usr/lib` itself is not one of them: a fixture may
/// hold Python packages under `usr/lib/python3` without any library directory.
pub const CAPTURE_MARKERS: [&str; 4] = [OPT, "/usr/lib/x86_64-linux-gnu", "/usr/lib64", LD_SO_CONF];
/// How deep `include` lines of `ld.so.conf` are followed.
const MAX_CONF_DEPTH: usize = 4;
/// How many `/etc/alternatives` links `/opt/rocm` may pass through.
const MAX_LINK_HOPS: usize = 4;

/// A ROCm release number. `patch` is unknown when the version came from HIP's soname, which
/// carries only `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RocmVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch, when known.
    pub patch: Option<u32>,
}

impl RocmVersion {
    /// Parses the start of `6.2.0`, `6.2.0-66`, `6.2.0.60200` or `6.2`: at least major and
    /// minor, digits only, separated by dots. Anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let mut parts = text[..end].split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            None => None,
            Some(p) => Some(p.parse().ok()?),
        };
        // "6.2.0-66" is fine; "6.2x" and "6" are not.
        if end < text.len() && !text[end..].starts_with(['-', '+', '~', ' ']) {
            return None;
        }
        Some(Self {
            major,
            minor,
            patch,
        })
    }

    /// AMD's 5-digit encoding in library file names: 60200 → 6.2.0 (`…so.1.14.60200`).
    pub fn from_encoded(n: u32) -> Option<Self> {
        (10_000..1_000_000).contains(&n).then_some(Self {
            major: n / 10_000,
            minor: (n / 100) % 100,
            patch: Some(n % 100),
        })
    }

    fn key(&self) -> (u32, u32, u32) {
        (self.major, self.minor, self.patch.unwrap_or(0))
    }

    /// `major.minor`, the release line.
    pub fn line(&self) -> (u32, u32) {
        (self.major, self.minor)
    }
}

impl PartialOrd for RocmVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RocmVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key()
            .cmp(&other.key())
            .then(self.patch.is_some().cmp(&other.patch.is_some()))
    }
}

impl fmt::Display for RocmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for RocmVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where an install comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallKind {
    /// AMD's packages or tarballs under `/opt`.
    Opt,
    /// A distribution's packages in the system library directories (`/usr`).
    Distribution,
    /// Anywhere else (`ROCM_PATH`, an `LD_LIBRARY_PATH` entry, `/usr/local`, a home directory).
    Other,
}

/// One library found by soname.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Library {
    /// The directory it is in.
    pub dir: String,
    /// The soname probed (`libhsa-runtime64.so.1`).
    pub name: String,
    /// The soname link's target as written (`libhsa-runtime64.so.1.14.60200`); `None` when the
    /// soname is a regular file.
    pub file: Option<String>,
}

impl Library {
    /// `dir/name`.
    pub fn path(&self) -> String {
        join(&self.dir, &self.name)
    }

    /// `name → file`, or just the name.
    pub fn describe(&self) -> String {
        match &self.file {
            Some(f) => format!("{} → {f}", self.name),
            None => self.name.clone(),
        }
    }

    /// The version part of the real file name after the soname (`1.14.60200`).
    fn file_version(&self) -> Option<&str> {
        let file = self.file.as_deref()?;
        let file = file.rsplit('/').next().unwrap_or(file);
        let stem = self.name.split(".so.").next()?;
        file.strip_prefix(stem)?.strip_prefix(".so.")
    }
}

/// The ROCm libraries of one directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LibSet {
    /// ROCr (`libhsa-runtime64.so.1`).
    pub rocr: Option<Library>,
    /// The shared thunk (`libhsakmt.so.1`).
    pub hsakmt: Option<Library>,
    /// HIP (`libamdhip64.so.N`), one per soname present.
    pub hip: Vec<Library>,
}

impl LibSet {
    /// Whether any ROCm library is here.
    pub fn any(&self) -> bool {
        self.rocr.is_some() || self.hsakmt.is_some() || !self.hip.is_empty()
    }

    /// Whether ROCr or HIP is here (a lone thunk is not an install).
    pub fn runtime(&self) -> bool {
        self.rocr.is_some() || !self.hip.is_empty()
    }

    /// One line: the sonames and their files.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.rocr.iter().map(Library::describe));
        parts.extend(self.hip.iter().map(Library::describe));
        parts.extend(self.hsakmt.iter().map(Library::describe));
        if parts.is_empty() {
            msg!("facts.no-runtime-libraries")
        } else {
            parts.join(", ")
        }
    }
}

/// One ROCm install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Install {
    /// The install prefix with symlinks resolved as far as the probe followed them
    /// (`/opt/rocm-6.2.0`; `/usr` for a distribution's packages).
    pub prefix: String,
    /// Where it comes from.
    pub kind: InstallKind,
    /// The ROCm release, when known.
    pub version: Option<RocmVersion>,
    /// The file (or library name) the version came from.
    pub version_source: Option<String>,
    /// Its library directory (`prefix/lib`; for a distribution, the first directory found).
    pub lib_dir: String,
    /// Its libraries.
    pub libs: LibSet,
    /// How a process reaches it: `/opt/rocm`, `ROCM_PATH`, `HIP_PATH`, `LD_LIBRARY_PATH`, an
    /// `ld.so.conf` file, `default library path`. Empty: installed but not referenced.
    pub via: Vec<String>,
    /// The names in `lib_dir` when this collector listed it (to find HIP's sonames), for the
    /// libraries' collector: a run lists each directory once (ARCHITECTURE.md §9).
    #[serde(skip)]
    pub lib_names: Option<Vec<String>>,
}

impl Install {
    /// `ROCm 6.2.0 at /opt/rocm-6.2.0`.
    pub fn describe(&self) -> String {
        self.text().to_string()
    }

    /// [`Self::describe`] kept as data, for facts that name the install.
    pub fn text(&self) -> crate::i18n::Text {
        let prefix = &self.prefix;
        match self.version {
            Some(version) => crate::text!("facts.install", version = version.to_string(), prefix),
            None => crate::text!("facts.install-unknown", prefix),
        }
    }
}

/// What `/opt/rocm` is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptRocm {
    /// Link targets as written, one per hop (`/etc/alternatives/rocm`, `/opt/rocm-6.2.0`);
    /// empty when `/opt/rocm` is a real directory.
    pub chain: Vec<String>,
    /// The path it resolves to (`/opt/rocm` itself for a directory).
    pub target: String,
    /// Whether the target exists (a link left behind by an uninstall does not).
    pub target_exists: bool,
    /// Index into [`InstallFacts::installs`].
    pub install: Option<usize>,
}

/// One directory of the loader's search order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchDir {
    /// The directory as listed.
    pub dir: String,
    /// Where it is listed: `LD_LIBRARY_PATH`, an `ld.so.conf` file, or `default`.
    pub origin: String,
    /// ROCm libraries in it.
    pub libs: LibSet,
    /// Index into [`InstallFacts::installs`] when it holds ROCr or HIP.
    pub install: Option<usize>,
}

/// An environment variable naming an install (`ROCM_PATH`, `HIP_PATH`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvInstall {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The install it names; `None` when nothing ROCm-like is there.
    pub install: Option<usize>,
}

/// What is installed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InstallFacts {
    /// Whether the install sources were captured (always in live mode; in a fixture, when it
    /// has `opt`, a system library directory or `etc/ld.so.conf`).
    pub captured: bool,
    /// `/opt/rocm`, when it exists.
    pub opt_rocm: Option<OptRocm>,
    /// Every install found, `/opt` ones first.
    pub installs: Vec<Install>,
    /// `ROCM_PATH` and `HIP_PATH`, when set.
    pub env: Vec<EnvInstall>,
    /// The loader's search order, without duplicates.
    pub search_path: Vec<SearchDir>,
}

impl InstallFacts {
    /// The loader's search order as one `:`-separated line, for evidence.
    pub fn search_path_text(&self) -> String {
        self.search_path
            .iter()
            .map(|d| d.dir.as_str())
            .collect::<Vec<_>>()
            .join(":")
    }
}

impl Collect for InstallFacts {
    /// The environment variables already read (`PlatformFacts::env`: each variable is looked up
    /// once per run).
    type Needs<'a> = &'a BTreeMap<String, String>;
    type Output = Self;

    /// Reads the installs (their problems are reported by layer 4).
    fn collect(
        source: &Source,
        env: &BTreeMap<String, String>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        // Probed in live mode too, so that a snapshot records the sources as present.
        let present = CAPTURE_MARKERS.iter().filter(|p| root.exists(p)).count();
        let captured = !root.is_fixture() || present > 0;
        if !captured {
            return Self::default();
        }
        let mut c = Collector {
            root,
            facts: Self {
                captured,
                ..Self::default()
            },
            probed: HashMap::new(),
            core_links: HashMap::new(),
            core_root: None,
            listings: HashMap::new(),
            problems,
        };
        c.opt();
        c.search_path(env.get("LD_LIBRARY_PATH").map(String::as_str));
        for name in ["ROCM_PATH", "HIP_PATH"] {
            if let Some(value) = env.get(name) {
                c.env_install(name, value);
            }
        }
        c.facts
    }
}

impl InstallFacts {
    /// The first directory of the search order that holds ROCr: where a process would load
    /// `libhsa-runtime64.so.1` from (unless its own RUNPATH says otherwise).
    pub fn loaded_rocr(&self) -> Option<&SearchDir> {
        self.search_path.iter().find(|d| d.libs.rocr.is_some())
    }

    /// The install a process would use: the one ROCr is loaded from, else the one `/opt/rocm`
    /// names, else the one `ROCM_PATH` names, else the only install.
    pub fn effective(&self) -> Option<&Install> {
        let index = self
            .loaded_rocr()
            .and_then(|d| d.install)
            .or_else(|| self.opt_rocm.as_ref().and_then(|o| o.install))
            .or_else(|| {
                self.env
                    .iter()
                    .find(|e| e.name == "ROCM_PATH")
                    .and_then(|e| e.install)
            })
            .or((self.installs.len() == 1).then_some(0))?;
        self.installs.get(index)
    }

    /// The libhsakmt a process would load (or `chosen`): the first directory of the loader's
    /// search order that has the soname (the path to load), and the real file it links to (the
    /// name to show: it carries the version); else ROCr with it built in; else missing.
    pub fn hsakmt_library(&self, chosen: Option<&Path>) -> ThunkLibrary {
        if let Some(p) = chosen {
            return ThunkLibrary::Load {
                path: p.to_owned(),
                shown: p.display().to_string(),
            };
        }
        let found = self.search_path.iter().find_map(|dir| {
            let lib = dir.libs.hsakmt.as_ref()?;
            // The link target as written is relative to the directory (or absolute).
            let shown = match &lib.file {
                Some(f) if f.starts_with('/') => f.clone(),
                Some(f) => format!("{}/{f}", dir.dir.trim_end_matches('/')),
                None => lib.path(),
            };
            Some(ThunkLibrary::Load {
                path: PathBuf::from(lib.path()),
                shown,
            })
        });
        found.unwrap_or_else(
            || match self.effective().filter(|i| i.libs.rocr.is_some()) {
                Some(i) => ThunkLibrary::BuiltIntoRocr(i.describe()),
                None => ThunkLibrary::Missing(LoadError::NotInstalledAnywhere {
                    library: HSAKMT_SONAME.to_owned(),
                    or_install: false,
                }),
            },
        )
    }

    /// The ROCr a process would load (or `chosen`): from the search order, else the effective
    /// install's.
    pub fn rocr_library(&self, chosen: Option<&Path>) -> Result<PathBuf, LoadError> {
        chosen
            .map(Path::to_owned)
            .or_else(|| {
                self.loaded_rocr()
                    .map(|dir| Path::new(&dir.dir).join(ROCR_SONAME))
            })
            .or_else(|| {
                self.effective()
                    .filter(|i| i.libs.rocr.is_some())
                    .map(|i| Path::new(&i.lib_dir).join(ROCR_SONAME))
            })
            .ok_or_else(|| LoadError::NotInstalledAnywhere {
                library: ROCR_SONAME.to_owned(),
                or_install: true,
            })
    }

    /// The HIP a process would load (or `chosen`): from the search order, else the effective
    /// install's.
    pub fn hip_library(&self, chosen: Option<&Path>) -> Result<PathBuf, LoadError> {
        chosen
            .map(Path::to_owned)
            .or_else(|| {
                self.search_path
                    .iter()
                    .find_map(|d| d.libs.hip.last().map(|l| Path::new(&d.dir).join(&l.name)))
            })
            .or_else(|| {
                let i = self.effective()?;
                let l = i.libs.hip.last()?;
                Some(Path::new(&i.lib_dir).join(&l.name))
            })
            .ok_or_else(|| LoadError::NotInstalledAnywhere {
                library: "libamdhip64.so".to_owned(),
                or_install: true,
            })
    }

    /// Installs a process can reach (by `/opt/rocm`, an environment variable or the search
    /// path).
    pub fn reachable(&self) -> impl Iterator<Item = &Install> {
        self.installs.iter().filter(|i| !i.via.is_empty())
    }
}

struct Collector<'a> {
    root: &'a SysRoot,
    facts: InstallFacts,
    /// Library directories already probed (each path is read once per run).
    probed: HashMap<String, LibSet>,
    /// The Core SDK's compatibility links in `/opt/rocm` (`lib`, `core`, `core-10` …) and the
    /// paths they lead to.
    core_links: HashMap<String, String>,
    /// The Core SDK install `/opt/rocm` stands for.
    core_root: Option<String>,
    /// Directories listed, and their names (`None`: unreadable, left to the libraries'
    /// collector to report).
    listings: HashMap<String, Option<Vec<String>>>,
    problems: &'a mut Vec<Problem>,
}

impl Collector<'_> {
    fn problem(&mut self, e: crate::source::root::ReadError) {
        self.problems.push(e.into());
    }

    fn opt(&mut self) {
        let Some(names) = optional(self.root.read_dir(OPT), self.problems) else {
            return;
        };
        for name in &names {
            if is_versioned_rocm_dir(name) {
                self.install(&join(OPT, name), InstallKind::Opt);
            }
        }
        if !names.iter().any(|n| n == "rocm") {
            return;
        }
        let (chain, target) = self.follow(OPT_ROCM);
        let target_exists =
            chain.is_empty() || crate::source::problem::exists(self.root, &target, self.problems);
        let install = if chain.is_empty() {
            // A real directory: the Core SDK's root, or an install of its own.
            self.core_sdk()
                .or_else(|| Some(self.install(OPT_ROCM, InstallKind::Opt)))
        } else {
            target_exists.then(|| {
                let kind = if target.starts_with("/opt/") {
                    InstallKind::Opt
                } else {
                    InstallKind::Other
                };
                self.install(&target, kind)
            })
        };
        if let Some(i) = install {
            push_via(&mut self.facts.installs[i], OPT_ROCM.to_owned());
        }
        self.facts.opt_rocm = Some(OptRocm {
            chain,
            target,
            target_exists,
            install,
        });
    }

    /// The links from `at` on, as written, and the path they end at (`at` itself when it is no
    /// link). Only `at` and `/etc/alternatives` entries are followed: links by convention.
    fn follow(&mut self, at: &str) -> (Vec<String>, String) {
        let mut chain = Vec::new();
        let mut target = at.to_owned();
        let mut at = at.to_owned();
        for hop in 0..MAX_LINK_HOPS {
            if hop > 0 && !at.starts_with("/etc/alternatives/") {
                break;
            }
            match self.root.read_link(&at) {
                Ok(t) => {
                    target = resolve_link(&at, &t);
                    chain.push(t);
                    at = target.clone();
                }
                Err(e) if e.kind == ReadErrorKind::WrongType && hop == 0 => break,
                Err(e) if e.is_not_found() => break,
                Err(e) => {
                    self.problem(e);
                    break;
                }
            }
        }
        (chain, target)
    }

    /// The ROCm Core SDK in a real `/opt/rocm` directory: each `core-X.Y` an install, and the
    /// compatibility links beside them (`core`, `core-<major>`, `lib`, `bin` …, each through
    /// `/etc/alternatives`) remembered so that paths through them name the install they lead
    /// to. The install `/opt/rocm` stands for: the one `/opt/rocm/core` names, else the one
    /// `/opt/rocm/lib` leads into, else the only one. `None` without a `core-X.Y` directory.
    fn core_sdk(&mut self) -> Option<usize> {
        let names = optional(self.root.read_dir(OPT_ROCM), self.problems)?;
        let cores: Vec<usize> = names
            .iter()
            .filter(|n| is_core_sdk_dir(n))
            .map(|n| self.install(&join(OPT_ROCM, n), InstallKind::Opt))
            .collect();
        if cores.is_empty() {
            return None;
        }
        for name in names.iter().filter(|n| !is_core_sdk_dir(n)) {
            let at = join(OPT_ROCM, name);
            let (chain, target) = self.follow(&at);
            if !chain.is_empty() {
                self.core_links.insert(name.clone(), target);
            }
        }
        let prefix_of = |path: Option<&String>, installs: &[Install]| {
            let path = path?;
            installs
                .iter()
                .position(|i| i.prefix == *path || i.lib_dir == *path)
        };
        let i = prefix_of(self.core_links.get("core"), &self.facts.installs)
            .or_else(|| prefix_of(self.core_links.get("lib"), &self.facts.installs))
            .or((cores.len() == 1).then(|| cores[0]))?;
        self.core_root = Some(self.facts.installs[i].prefix.clone());
        Some(i)
    }

    /// Maps `/opt/rocm` and paths below it to the install it names: through `/opt/rocm` when it
    /// is a link, through the Core SDK's compatibility links when it is its directory.
    fn canonical(&self, path: &str) -> String {
        let path = normalize(path);
        if let Some(o) = &self.facts.opt_rocm {
            if o.chain.is_empty() {
                let Some(root) = &self.core_root else {
                    return path;
                };
                if path == OPT_ROCM {
                    return root.clone();
                }
                if let Some(rest) = path.strip_prefix("/opt/rocm/") {
                    let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
                    if let Some(target) = self.core_links.get(first) {
                        return join(target, tail);
                    }
                }
                return path;
            }
            if path == OPT_ROCM {
                return o.target.clone();
            }
            if let Some(rest) = path.strip_prefix("/opt/rocm/") {
                return join(&o.target, rest);
            }
        }
        path
    }

    fn find(&self, prefix: &str) -> Option<usize> {
        self.facts.installs.iter().position(|i| i.prefix == prefix)
    }

    /// The install at `prefix`, probed on first use.
    fn install(&mut self, prefix: &str, kind: InstallKind) -> usize {
        if let Some(i) = self.find(prefix) {
            return i;
        }
        let lib_dir = join(prefix, "lib");
        let libs = self.libs(&lib_dir);
        let (version, version_source) = match self.version_files(prefix) {
            Some((v, s)) => (Some(v), Some(s)),
            None => match version_from_libs(&libs) {
                Some((v, s)) => (Some(v), Some(s)),
                None => (None, None),
            },
        };
        self.facts.installs.push(Install {
            prefix: prefix.to_owned(),
            kind,
            version,
            version_source,
            lib_names: self.listings.get(&lib_dir).cloned().flatten(),
            lib_dir,
            libs,
            via: Vec::new(),
        });
        self.facts.installs.len() - 1
    }

    /// `.info/version`, else `rocm_version.h`.
    fn version_files(&mut self, prefix: &str) -> Option<(RocmVersion, String)> {
        let path = join(prefix, VERSION_FILE);
        if let Some(text) = optional(self.root.read_value(&path), self.problems) {
            match RocmVersion::parse(&text) {
                Some(v) => return Some((v, path)),
                None => {
                    self.problems.push(Problem::new(
                        path,
                        crate::text!(
                            "facts.not-a-rocm-version",
                            text = format!("{:?}", truncate(&text))
                        ),
                    ));
                    return None;
                }
            }
        }
        let path = join(prefix, VERSION_HEADER);
        let text = optional(self.root.read_text(&path), self.problems)?;
        match parse_version_header(&text) {
            Some(v) => Some((v, path)),
            None => {
                self.problems
                    .push(Problem::new(path, crate::text!("facts.no-version-defines")));
                None
            }
        }
    }

    /// Probes the sonames in `dir` (once per directory).
    fn libs(&mut self, dir: &str) -> LibSet {
        if let Some(set) = self.probed.get(dir) {
            return set.clone();
        }
        let mut set = LibSet {
            rocr: self.library(dir, ROCR_SONAME),
            hsakmt: self.library(dir, HSAKMT_SONAME),
            hip: Vec::new(),
        };
        // HIP's sonames come from the directory's listing. A system library directory (thousands
        // of names) is listed only when it holds ROCr: a distribution's HIP sits beside it. A
        // HIP there without ROCr (a broken distribution install) is still an install: its
        // sonames are asked for by name, every major HIP has had and a margin past it.
        let names = if set.rocr.is_some() || !is_system_tree(dir) {
            hip_sonames(&self.listing(dir).unwrap_or_default())
        } else {
            (1..=HIP_MAJORS_ASKED)
                .map(|major| format!("{HIP_SONAME_STEM}{major}"))
                .collect()
        };
        for name in names {
            if let Some(lib) = self.library(dir, &name) {
                set.hip.push(lib);
            }
        }
        self.probed.insert(dir.to_owned(), set.clone());
        set
    }

    /// A directory's names, listed once (empty when it is missing; `None` when it cannot be
    /// listed, which the libraries' collector reports for an install's directory).
    fn listing(&mut self, dir: &str) -> Option<Vec<String>> {
        if let Some(names) = self.listings.get(dir) {
            return names.clone();
        }
        let names = match self.root.read_dir(dir) {
            Ok(names) => Some(names),
            Err(e) if e.is_not_found() => Some(Vec::new()),
            Err(_) => None,
        };
        self.listings.insert(dir.to_owned(), names.clone());
        names
    }

    fn library(&mut self, dir: &str, name: &str) -> Option<Library> {
        let path = join(dir, name);
        // `exists` follows links: a dangling soname link is as absent as it is to the loader (one
        // escaping the fixture root is a problem, not an absence).
        if !crate::source::problem::exists(self.root, &path, self.problems) {
            return None;
        }
        let file = match self.root.read_link(&path) {
            Ok(t) => {
                // Recorded so that a snapshot holds the link's target too.
                self.root.exists(&resolve_link(&path, &t));
                Some(t)
            }
            Err(e) if e.kind == ReadErrorKind::WrongType || e.is_not_found() => None,
            Err(e) => {
                self.problem(e);
                None
            }
        };
        Some(Library {
            dir: dir.to_owned(),
            name: name.to_owned(),
            file,
        })
    }

    /// `ROCM_PATH` must name an install's root. `HIP_PATH` may also name a directory inside
    /// one that holds HIP (`<prefix>/hip` of the layout before ROCm 6, with `lib/libamdhip64`);
    /// ROCm 6 removed that directory, and a stale `HIP_PATH=<prefix>/hip` names no install
    /// (ROCm/legacy-rocm-build#6285). A path outside every known install is probed as an install
    /// of its own.
    fn env_install(&mut self, name: &str, value: &str) {
        let path = self.canonical(value);
        let root = self.facts.installs.iter().position(|i| path == i.prefix);
        let inside = self
            .facts
            .installs
            .iter()
            .position(|i| path.starts_with(&format!("{}/", i.prefix)));
        let install = match (root, inside) {
            (Some(i), _) => Some(i),
            (None, Some(i)) => {
                let has_hip = name == "HIP_PATH" && !self.libs(&join(&path, "lib")).hip.is_empty();
                has_hip.then_some(i)
            }
            (None, None) => self.env_elsewhere(&path),
        };
        if let Some(i) = install {
            push_via(&mut self.facts.installs[i], name.to_owned());
        }
        self.facts.env.push(EnvInstall {
            name: name.to_owned(),
            value: value.to_owned(),
            install,
        });
    }

    /// An environment path outside every known install: an install of its own when something
    /// ROCm-like is there.
    fn env_elsewhere(&mut self, path: &str) -> Option<usize> {
        if !path.starts_with('/') || !self.root.exists(path) {
            return None;
        }
        let kind = if path.starts_with("/opt/") {
            InstallKind::Opt
        } else {
            InstallKind::Other
        };
        let i = self.install(path, kind);
        let it = &self.facts.installs[i];
        if it.version.is_none() && !it.libs.any() {
            // Nothing ROCm-like there: forget it again.
            self.facts.installs.pop();
            return None;
        }
        Some(i)
    }

    fn search_path(&mut self, ld_library_path: Option<&str>) {
        let mut dirs: Vec<(String, String)> = Vec::new();
        if let Some(v) = ld_library_path {
            // ld.so splits on ':' and ';'; an empty entry means the current directory, which a
            // probe cannot know.
            for d in v.split([':', ';']).filter(|d| d.starts_with('/')) {
                dirs.push((normalize(d), "LD_LIBRARY_PATH".to_owned()));
            }
        }
        let mut seen = HashSet::new();
        let mut conf = Vec::new();
        self.conf_file(LD_SO_CONF, 0, &mut seen, &mut conf);
        dirs.extend(conf);
        dirs.extend(
            DEFAULT_LIB_DIRS
                .iter()
                .map(|d| ((*d).to_owned(), "default".to_owned())),
        );
        let mut listed: HashMap<String, Option<usize>> = HashMap::new();
        for (dir, origin) in dirs {
            // Probed at the path `/opt/rocm` names, not through the link.
            let probe = self.canonical(&dir);
            if let Some(install) = listed.get(&probe) {
                // The same directory spelled again (`/opt/rocm/lib` and the Core SDK's
                // `/opt/rocm/core-10.0/lib`): searched once, but both references are kept.
                if let Some(i) = install.filter(|_| origin != "default") {
                    push_via(&mut self.facts.installs[i], format!("{origin} ({dir})"));
                }
                continue;
            }
            let libs = self.libs(&probe);
            let install = libs.runtime().then(|| self.install_of_dir(&probe, &libs));
            listed.insert(probe.clone(), install);
            if let Some(i) = install {
                let via = match origin.as_str() {
                    // Kept in English: a fact other code reads (runtime's remedy steps).
                    "default" => format!("default library path ({dir})"),
                    o => format!("{o} ({dir})"),
                };
                push_via(&mut self.facts.installs[i], via);
            }
            self.facts.search_path.push(SearchDir {
                dir,
                origin,
                libs,
                install,
            });
        }
    }

    /// The install a search directory with ROCm libraries belongs to (`dir` canonical).
    fn install_of_dir(&mut self, dir: &str, libs: &LibSet) -> usize {
        if is_system_lib_dir(dir) {
            if let Some(i) = self
                .facts
                .installs
                .iter()
                .position(|i| i.kind == InstallKind::Distribution)
            {
                return i;
            }
            let (version, version_source) = match version_from_libs(libs) {
                Some((v, s)) => (Some(v), Some(s)),
                None => (None, None),
            };
            self.facts.installs.push(Install {
                prefix: "/usr".to_owned(),
                kind: InstallKind::Distribution,
                version,
                version_source,
                lib_dir: dir.to_owned(),
                libs: libs.clone(),
                via: Vec::new(),
                lib_names: self.listings.get(dir).cloned().flatten(),
            });
            return self.facts.installs.len() - 1;
        }
        let dir = dir.to_owned();
        if let Some(i) = self.facts.installs.iter().position(|i| i.lib_dir == dir) {
            return i;
        }
        let prefix = ["/lib64", "/lib"]
            .iter()
            .find_map(|s| dir.strip_suffix(s))
            .filter(|p| !p.is_empty())
            .unwrap_or(&dir)
            .to_owned();
        if let Some(i) = self.find(&prefix) {
            return i;
        }
        let kind = if prefix.starts_with("/opt/") {
            InstallKind::Opt
        } else {
            InstallKind::Other
        };
        // A library directory that is not `prefix/lib`: keep what was found in it.
        let i = self.install(&prefix, kind);
        let names = self.listings.get(&dir).cloned().flatten();
        let install = &mut self.facts.installs[i];
        if install.lib_dir != dir {
            install.lib_names = names;
            install.lib_dir = dir.clone();
            install.libs = libs.clone();
            if install.version.is_none() {
                if let Some((v, s)) = version_from_libs(libs) {
                    install.version = Some(v);
                    install.version_source = Some(s);
                }
            }
        }
        i
    }

    /// Reads one `ld.so.conf` file, following `include` lines.
    fn conf_file(
        &mut self,
        path: &str,
        depth: usize,
        seen: &mut HashSet<String>,
        out: &mut Vec<(String, String)>,
    ) {
        if depth > MAX_CONF_DEPTH || !seen.insert(path.to_owned()) {
            return;
        }
        let Some(text) = optional(self.root.read_text(path), self.problems) else {
            return;
        };
        for entry in conf_entries(&text) {
            match entry {
                ConfEntry::Include(pattern) => {
                    let pattern = if pattern.starts_with('/') {
                        pattern
                    } else {
                        join(parent(path), &pattern)
                    };
                    for file in self.glob(&pattern) {
                        self.conf_file(&file, depth + 1, seen, out);
                    }
                }
                ConfEntry::Dir(dir) => out.push((dir, path.to_owned())),
            }
        }
    }

    /// `*` and `?` in the last path component, matched against a directory listing, sorted
    /// (as glob(3) sorts).
    fn glob(&mut self, pattern: &str) -> Vec<String> {
        let (dir, name) = (
            parent(pattern),
            pattern.rsplit('/').next().unwrap_or(pattern),
        );
        if !name.contains(['*', '?']) {
            return vec![pattern.to_owned()];
        }
        if dir.contains(['*', '?']) {
            return Vec::new();
        }
        let Some(names) = optional(self.root.read_dir(dir), self.problems) else {
            return Vec::new();
        };
        names
            .iter()
            .filter(|n| !n.starts_with('.') && wildcard(name, n))
            .map(|n| join(dir, n))
            .collect()
    }
}

fn push_via(install: &mut Install, via: String) {
    if !install.via.contains(&via) {
        install.via.push(via);
    }
}

/// `rocm-6.2.0`, `rocm-7.0.0rc1`: AMD's versioned install directories.
fn is_versioned_rocm_dir(name: &str) -> bool {
    name.strip_prefix("rocm-")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// HIP's sonames among a directory's names, by major (`libamdhip64.so.7`; not
/// `libamdhip64.so`, `libamdhip64.so.7.15.26333-0000000` or `libamdhip64.so.7.bak`).
pub fn hip_sonames(names: &[String]) -> Vec<String> {
    let mut found: Vec<(u32, String)> = names
        .iter()
        .filter_map(|n| {
            let major = n.strip_prefix(HIP_SONAME_STEM)?;
            let digits = !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit());
            Some((major.parse().ok().filter(|_| digits)?, n.clone()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, n)| n).collect()
}

/// Under `/usr` or `/lib*`: the system's library trees, which are listed for HIP only when ROCr
/// is there too (a listing is recorded whole in a snapshot).
fn is_system_tree(dir: &str) -> bool {
    dir == "/usr" || dir.starts_with("/usr/") || dir.starts_with("/lib")
}

/// `core-10.0`, `core-asan-7.15`: the Core SDK's versioned install directories in `/opt/rocm`
/// (not the links `core`, `core-10`).
fn is_core_sdk_dir(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(CORE_SDK_DIR) else {
        return false;
    };
    let rest = rest.strip_prefix("asan-").unwrap_or(rest);
    rest.split_once('.').is_some_and(|(major, minor)| {
        [major, minor]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Directories whose ROCm libraries come from the distribution's packages.
fn is_system_lib_dir(dir: &str) -> bool {
    DEFAULT_LIB_DIRS.contains(&dir)
}

/// The version a library's file name carries: AMD's `…so.1.14.60200` (ROCr) or
/// `…so.6.2.60200` (HIP) encode the release in the last number; HIP's `major.minor` follow the
/// ROCm release (Debian's `libamdhip64.so.5.2.21153` is ROCm 5.2).
pub fn version_from_libs(libs: &LibSet) -> Option<(RocmVersion, String)> {
    let numbers = |lib: &Library| -> Option<Vec<u32>> {
        lib.file_version()?
            .split('.')
            .map(|p| p.parse().ok())
            .collect()
    };
    // ROCr: `1.14.60200`; the ROCr minor alone says nothing about the release (Debian's 1.5.0).
    if let Some(lib) = &libs.rocr {
        let v = numbers(lib)
            .and_then(|n| n.last().copied())
            .and_then(RocmVersion::from_encoded)
            .filter(|v| v.major >= 3);
        if let Some(v) = v {
            return Some((v, lib.path()));
        }
    }
    // HIP: `6.2.60200` (the encoded release agrees with major.minor) or `5.2.21153`.
    libs.hip.iter().find_map(|lib| {
        let n = numbers(lib)?;
        let (major, minor) = (*n.first()?, *n.get(1)?);
        if major < 4 {
            return None;
        }
        let full = n
            .get(2)
            .and_then(|e| RocmVersion::from_encoded(*e))
            .filter(|v| v.line() == (major, minor));
        Some((
            full.unwrap_or(RocmVersion {
                major,
                minor,
                patch: None,
            }),
            lib.path(),
        ))
    })
}

/// `#define ROCM_VERSION_MAJOR 6` … from rocm-core's header.
pub fn parse_version_header(text: &str) -> Option<RocmVersion> {
    let define = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse::<u32>().ok())
                .flatten()
        })
    };
    Some(RocmVersion {
        major: define("ROCM_VERSION_MAJOR")?,
        minor: define("ROCM_VERSION_MINOR")?,
        patch: define("ROCM_VERSION_PATCH"),
    })
}

/// A line of `ld.so.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfEntry {
    /// `include PATTERN`.
    Include(String),
    /// A library directory.
    Dir(String),
}

/// The entries of an `ld.so.conf` file: comments dropped, `hwcap` lines ignored, `=TYPE`
/// suffixes stripped, several directories on a line split at spaces, commas and colons,
/// relative directories dropped (ldconfig ignores them).
pub fn conf_entries(text: &str) -> Vec<ConfEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        match words.next() {
            Some("include") => out.extend(words.map(|w| ConfEntry::Include(w.to_owned()))),
            Some("hwcap") => {}
            _ => out.extend(
                line.split(|c: char| c.is_whitespace() || c == ',' || c == ':')
                    .map(|d| d.split('=').next().unwrap_or(d))
                    .filter(|d| d.starts_with('/'))
                    .map(|d| ConfEntry::Dir(normalize(d))),
            ),
        }
    }
    out
}

/// Shell-style `*` and `?` matching.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Collapses `//`, `.` and `..` and a trailing `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn join(dir: &str, name: &str) -> String {
    normalize(&format!("{dir}/{name}"))
}

/// The directory part of an absolute path (`/` for a name at the root).
pub fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The absolute path a symlink at `link` with target `target` points to.
pub fn resolve_link(link: &str, target: &str) -> String {
    if target.starts_with('/') {
        normalize(target)
    } else {
        join(parent(link), target)
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The installs of the fixture at `b` and the problems met.
    fn installs(
        b: &std::path::Path,
        env: &BTreeMap<String, String>,
    ) -> (InstallFacts, Vec<Problem>) {
        crate::facts::collect::<InstallFacts>(&Source::fixture(b).unwrap(), env)
    }
    use crate::testfs::{link, write as touch};

    #[test]
    fn versions_parse_from_version_files() {
        let v = |s: &str| RocmVersion::parse(s).map(|v| v.to_string());
        assert_eq!(v("6.2.0\n").as_deref(), Some("6.2.0"));
        assert_eq!(v("6.2.0-66").as_deref(), Some("6.2.0"));
        assert_eq!(v("6.4.1.60401-83~24.04").as_deref(), Some("6.4.1"));
        assert_eq!(v("5.7").as_deref(), Some("5.7"));
        assert_eq!(v("6"), None);
        assert_eq!(v("6.2x"), None);
        assert_eq!(v("latest"), None);
        assert_eq!(v(""), None);
        assert!(RocmVersion::parse("6.10.0").unwrap() > RocmVersion::parse("6.9.9").unwrap());
        assert_eq!(
            RocmVersion::from_encoded(60200).map(|v| v.to_string()),
            Some("6.2.0".into())
        );
        assert_eq!(RocmVersion::from_encoded(21153).unwrap().major, 2);
        assert_eq!(RocmVersion::from_encoded(999), None);
    }

    /// The ROCm Core SDK's spellings (TheRock): rocm-core writes `MAJOR.MINOR.PATCH` into
    /// `.info/version` ("cat /opt/rocm/core/.info/version" → `7.14.0`, ROCm/TheRock#5475), or
    /// `MAJOR.MINOR.PATCH.POINT` when a point release is set (rocm-core `CMakeLists.txt`).
    #[test]
    fn core_sdk_version_files() {
        let v = |s: &str| RocmVersion::parse(s).map(|v| v.to_string());
        assert_eq!(v("7.14.0\n").as_deref(), Some("7.14.0"));
        assert_eq!(v("10.0.0\n").as_deref(), Some("10.0.0"));
        assert_eq!(v("10.1.0.1\n").as_deref(), Some("10.1.0"));
        assert!(RocmVersion::parse("10.0.0").unwrap() > RocmVersion::parse("7.14.1").unwrap());
        assert!(is_core_sdk_dir("core-7.14"));
        assert!(is_core_sdk_dir("core-10.0"));
        assert!(is_core_sdk_dir("core-asan-7.15"));
        assert!(!is_core_sdk_dir("core"));
        assert!(!is_core_sdk_dir("core-10"));
        assert!(!is_core_sdk_dir("core-10.x"));
        assert!(!is_core_sdk_dir("extras-10"));
    }

    /// HIP's sonames are read from the listing, whatever the major: TheRock 10.0's runtime
    /// package ships `libamdhip64.so.7 -> libamdhip64.so.7.15.26333-0000000`
    /// (sbates130272/qemu-minimal#153).
    #[test]
    fn hip_sonames_are_derived_from_the_listing() {
        let names: Vec<String> = [
            "libamdhip64.so",
            "libamdhip64.so.10",
            "libamdhip64.so.7",
            "libamdhip64.so.7.15.26333-0000000",
            "libamdhip64.so.6",
            "libamdhip64.so.7.bak",
            "libamdhip64.so.",
            "libhsa-runtime64.so.1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            hip_sonames(&names),
            ["libamdhip64.so.6", "libamdhip64.so.7", "libamdhip64.so.10"]
        );
    }

    /// TheRock's file names carry no release: ROCr `1.21.0` and HIP `7.15.<build>-<hash>` in
    /// ROCm 10.0 (qemu-minimal#153). HIP's minor counts its API versions there (7.15 in 10.0,
    /// 7.16 in 10.1, 7.17 for 10.2: ROCm/rocm-systems#9648, #11712), so no release is read
    /// from it; the version comes from `.info/version`.
    #[test]
    fn core_sdk_library_names_name_no_release() {
        let lib = |name: &str, file: &str| Library {
            dir: "/opt/rocm/core-10.0/lib".into(),
            name: name.into(),
            file: Some(file.into()),
        };
        let core = LibSet {
            rocr: Some(lib(ROCR_SONAME, "libhsa-runtime64.so.1.21.0")),
            hip: vec![lib("libamdhip64.so.7", "libamdhip64.so.7.15.26333-0000000")],
            ..LibSet::default()
        };
        assert_eq!(version_from_libs(&core), None);
    }

    /// The Core SDK's native packages: `/opt/rocm` a real directory, `/opt/rocm/core-10.0` the
    /// install, `core`, `core-10` and `lib` update-alternatives links into it
    /// (TheRock `amdrocm-core-postinst.j2`; ROCm/TheRock#6716). Every spelling of its library
    /// directory is one install; `ROCM_PATH=/opt/rocm` names it.
    #[test]
    fn core_sdk_layout_is_one_install() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let core = "opt/rocm/core-10.0";
        touch(b, &format!("{core}/.info/version"), "10.0.0\n");
        touch(b, &format!("{core}/lib/libhsa-runtime64.so.1.21.0"), "");
        link(
            b,
            &format!("{core}/lib/libhsa-runtime64.so.1"),
            "libhsa-runtime64.so.1.21.0",
        );
        touch(
            b,
            &format!("{core}/lib/libamdhip64.so.7.15.26333-0000000"),
            "",
        );
        link(
            b,
            &format!("{core}/lib/libamdhip64.so.7"),
            "libamdhip64.so.7.15.26333-0000000",
        );
        link(b, "opt/rocm/core", "/etc/alternatives/core");
        link(b, "etc/alternatives/core", "/opt/rocm/core-10.0");
        link(b, "opt/rocm/core-10", "/etc/alternatives/core-10");
        link(b, "etc/alternatives/core-10", "/opt/rocm/core-10.0");
        link(b, "opt/rocm/lib", "/etc/alternatives/rocm-lib");
        link(b, "etc/alternatives/rocm-lib", "/opt/rocm/core-10.0/lib");
        touch(b, "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        touch(b, "etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n");
        let env: BTreeMap<String, String> = [
            (
                "LD_LIBRARY_PATH".to_owned(),
                "/opt/rocm/core-10/lib:/opt/rocm/core-10.0/lib".to_owned(),
            ),
            ("ROCM_PATH".to_owned(), "/opt/rocm".to_owned()),
        ]
        .into();
        let (f, problems) = installs(b, &env);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(f.installs.len(), 1, "{:?}", f.installs);
        let i = &f.installs[0];
        assert_eq!(i.prefix, "/opt/rocm/core-10.0");
        assert_eq!(i.version.unwrap().to_string(), "10.0.0");
        assert_eq!(i.libs.hip.len(), 1);
        assert_eq!(i.libs.hip[0].name, "libamdhip64.so.7");
        assert_eq!(
            i.via,
            [
                "/opt/rocm",
                "LD_LIBRARY_PATH (/opt/rocm/core-10/lib)",
                "LD_LIBRARY_PATH (/opt/rocm/core-10.0/lib)",
                "/etc/ld.so.conf.d/rocm.conf (/opt/rocm/lib)",
                "ROCM_PATH"
            ]
        );
        let o = f.opt_rocm.as_ref().unwrap();
        assert!(o.chain.is_empty());
        assert_eq!(o.install, Some(0));
        assert_eq!(f.env[0].install, Some(0));
        assert_eq!(f.reachable().count(), 1);
        assert_eq!(f.loaded_rocr().unwrap().install, Some(0));
        assert_eq!(
            f.hip_library(None).unwrap(),
            PathBuf::from("/opt/rocm/core-10/lib/libamdhip64.so.7")
        );
    }

    #[test]
    fn version_header() {
        let h = "#ifndef ROCM_VERSION_H\n#define ROCM_VERSION_MAJOR   6\n#define ROCM_VERSION_MINOR   2\n\
                 #define ROCM_VERSION_PATCH   4\n#define ROCM_BUILD_INFO \"6.2.4.60204-139~22.04\"\n";
        assert_eq!(parse_version_header(h).unwrap().to_string(), "6.2.4");
        assert_eq!(parse_version_header("#define ROCM_VERSION_MAJOR 6\n"), None);
    }

    #[test]
    fn versions_from_library_names() {
        let lib = |name: &str, file: &str| Library {
            dir: "/d".into(),
            name: name.into(),
            file: Some(file.into()),
        };
        let amd = LibSet {
            rocr: Some(lib(ROCR_SONAME, "libhsa-runtime64.so.1.14.60200")),
            ..LibSet::default()
        };
        assert_eq!(version_from_libs(&amd).unwrap().0.to_string(), "6.2.0");
        let debian = LibSet {
            rocr: Some(lib(ROCR_SONAME, "libhsa-runtime64.so.1.5.0")),
            hip: vec![lib("libamdhip64.so.5", "libamdhip64.so.5.2.21153")],
            ..LibSet::default()
        };
        let (v, from) = version_from_libs(&debian).unwrap();
        assert_eq!(v.to_string(), "5.2");
        assert_eq!(from, "/d/libamdhip64.so.5");
        let bare = LibSet {
            rocr: Some(lib(ROCR_SONAME, "libhsa-runtime64.so.1.5.0")),
            ..LibSet::default()
        };
        assert_eq!(version_from_libs(&bare), None);
    }

    #[test]
    fn ld_so_conf_lines() {
        let text = "include /etc/ld.so.conf.d/*.conf\n# comment\n/opt/rocm/lib   # rocm\n\
                    hwcap 0 nosegneg\n/usr/local/lib:/opt/x/lib,/opt/y/lib=ELF\nrelative/lib\n/a//b/\n";
        assert_eq!(
            conf_entries(text),
            [
                ConfEntry::Include("/etc/ld.so.conf.d/*.conf".into()),
                ConfEntry::Dir("/opt/rocm/lib".into()),
                ConfEntry::Dir("/usr/local/lib".into()),
                ConfEntry::Dir("/opt/x/lib".into()),
                ConfEntry::Dir("/opt/y/lib".into()),
                ConfEntry::Dir("/a/b".into()),
            ]
        );
    }

    #[test]
    fn paths() {
        assert!(wildcard("*.conf", "rocm.conf"));
        assert!(wildcard("x86_64-*.conf", "x86_64-linux-gnu.conf"));
        assert!(!wildcard("*.conf", "rocm.conf.bak"));
        assert!(wildcard("?.conf", "a.conf"));
        assert_eq!(normalize("/opt//rocm/./lib/"), "/opt/rocm/lib");
        assert_eq!(normalize("/opt/rocm/../rocm-6.2.0"), "/opt/rocm-6.2.0");
        assert_eq!(resolve_link("/opt/rocm", "rocm-6.2.0"), "/opt/rocm-6.2.0");
        assert_eq!(
            resolve_link("/opt/rocm", "/etc/alternatives/rocm"),
            "/etc/alternatives/rocm"
        );
        assert_eq!(parent("/etc/ld.so.conf"), "/etc");
        assert_eq!(parent("/x"), "/");
        assert!(is_versioned_rocm_dir("rocm-6.2.0"));
        assert!(!is_versioned_rocm_dir("rocm"));
        assert!(!is_versioned_rocm_dir("rocm-smi"));
    }

    #[test]
    fn collects_opt_installs_links_env_and_search_path() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(b, "opt/rocm-6.2.0/.info/version", "6.2.0-66\n");
        touch(b, "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1.14.60200", "");
        link(
            b,
            "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.14.60200",
        );
        touch(b, "opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200", "");
        link(
            b,
            "opt/rocm-6.2.0/lib/libamdhip64.so.6",
            "libamdhip64.so.6.2.60200",
        );
        touch(b, "opt/rocm-6.0.0/.info/version", "6.0.0\n");
        touch(b, "opt/rocm-6.0.0/lib/libhsa-runtime64.so.1.12.60000", "");
        link(
            b,
            "opt/rocm-6.0.0/lib/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.12.60000",
        );
        link(b, "opt/rocm", "/etc/alternatives/rocm");
        link(b, "etc/alternatives/rocm", "/opt/rocm-6.2.0");
        touch(b, "opt/google/chrome/chrome", "");
        touch(b, "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        touch(b, "etc/ld.so.conf.d/10-rocm.conf", "/opt/rocm/lib\n");
        touch(
            b,
            "etc/ld.so.conf.d/x86_64-linux-gnu.conf",
            "/usr/lib/x86_64-linux-gnu\n",
        );
        touch(b, "usr/lib/x86_64-linux-gnu/libc.so.6", "");
        let env: BTreeMap<String, String> = [
            (
                "LD_LIBRARY_PATH".to_owned(),
                "/opt/rocm-6.0.0/lib:".to_owned(),
            ),
            ("ROCM_PATH".to_owned(), "/opt/rocm/".to_owned()),
        ]
        .into();
        let (f, problems) = installs(b, &env);
        assert!(f.captured);
        assert!(problems.is_empty(), "{problems:?}");
        let prefixes: Vec<&str> = f.installs.iter().map(|i| i.prefix.as_str()).collect();
        assert_eq!(prefixes, ["/opt/rocm-6.0.0", "/opt/rocm-6.2.0"]);
        let o = f.opt_rocm.as_ref().unwrap();
        assert_eq!(o.chain, ["/etc/alternatives/rocm", "/opt/rocm-6.2.0"]);
        assert_eq!(o.target, "/opt/rocm-6.2.0");
        assert_eq!(o.install, Some(1));
        let i62 = &f.installs[1];
        assert_eq!(i62.version.unwrap().to_string(), "6.2.0");
        assert_eq!(
            i62.libs.rocr.as_ref().unwrap().file.as_deref(),
            Some("libhsa-runtime64.so.1.14.60200")
        );
        assert_eq!(i62.libs.hip.len(), 1);
        assert_eq!(
            i62.via,
            [
                "/opt/rocm",
                "/etc/ld.so.conf.d/10-rocm.conf (/opt/rocm/lib)",
                "ROCM_PATH"
            ]
        );
        assert_eq!(f.installs[0].via, ["LD_LIBRARY_PATH (/opt/rocm-6.0.0/lib)"]);
        // LD_LIBRARY_PATH wins: 6.0.0 is what a process loads.
        let loaded = f.loaded_rocr().unwrap();
        assert_eq!(loaded.dir, "/opt/rocm-6.0.0/lib");
        assert_eq!(f.effective().unwrap().prefix, "/opt/rocm-6.0.0");
        assert_eq!(f.reachable().count(), 2);
        let origins: Vec<&str> = f.search_path.iter().map(|d| d.origin.as_str()).collect();
        assert_eq!(origins[0], "LD_LIBRARY_PATH");
        assert_eq!(origins[1], "/etc/ld.so.conf.d/10-rocm.conf");
    }

    #[test]
    fn debian_packages_are_one_distribution_install() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let d = "usr/lib/x86_64-linux-gnu";
        touch(b, &format!("{d}/libhsa-runtime64.so.1.5.0"), "");
        link(
            b,
            &format!("{d}/libhsa-runtime64.so.1"),
            "libhsa-runtime64.so.1.5.0",
        );
        touch(b, &format!("{d}/libhsakmt.so.1.0.6"), "");
        link(b, &format!("{d}/libhsakmt.so.1"), "libhsakmt.so.1.0.6");
        touch(b, &format!("{d}/libamdhip64.so.5.2.21153"), "");
        link(
            b,
            &format!("{d}/libamdhip64.so.5"),
            "libamdhip64.so.5.2.21153",
        );
        // Merged /usr: /lib is a link to usr/lib, so the same files show up twice.
        link(b, "lib", "usr/lib");
        let f = installs(b, &BTreeMap::new()).0;
        assert_eq!(f.installs.len(), 1, "{:?}", f.installs);
        let i = &f.installs[0];
        assert_eq!(i.kind, InstallKind::Distribution);
        assert_eq!(i.prefix, "/usr");
        assert_eq!(i.version.unwrap().to_string(), "5.2");
        assert_eq!(i.lib_dir, "/lib/x86_64-linux-gnu");
        assert!(i.libs.hsakmt.is_some());
        assert!(f.opt_rocm.is_none());
        assert_eq!(f.loaded_rocr().unwrap().dir, "/lib/x86_64-linux-gnu");
    }

    #[test]
    fn absent_sources_are_not_captured_and_bad_files_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "usr/share/libdrm/amdgpu.ids", "");
        let f = installs(dir.path(), &BTreeMap::new()).0;
        assert!(!f.captured);
        assert!(f.installs.is_empty());

        touch(dir.path(), "opt/rocm/.info/version", "garbage\n");
        let (f, problems) = installs(dir.path(), &BTreeMap::new());
        assert!(f.captured);
        // /opt/rocm as a real directory is an install of its own.
        assert_eq!(f.installs.len(), 1);
        assert_eq!(f.installs[0].prefix, "/opt/rocm");
        assert!(f.opt_rocm.as_ref().unwrap().chain.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].path.ends_with(".info/version"));
    }

    #[test]
    fn dangling_opt_rocm_and_env_naming_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        link(b, "opt/rocm", "rocm-6.1.0");
        touch(b, "home/u/notes.txt", "");
        let env: BTreeMap<String, String> = [
            ("ROCM_PATH".to_owned(), "/home/u".to_owned()),
            ("HIP_PATH".to_owned(), "/nowhere".to_owned()),
        ]
        .into();
        let f = installs(b, &env).0;
        let o = f.opt_rocm.as_ref().unwrap();
        assert!(!o.target_exists);
        assert_eq!(o.install, None);
        assert!(f.installs.is_empty());
        assert_eq!(f.env.len(), 2);
        assert!(f.env.iter().all(|e| e.install.is_none()));
    }

    #[test]
    fn env_must_name_an_install_root_or_a_hip_directory() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(b, "opt/rocm-6.2.0/.info/version", "6.2.0\n");
        touch(b, "opt/rocm-6.2.0/lib/libamdhip64.so.6", "");
        touch(b, "opt/rocm-5.4.0/.info/version", "5.4.0\n");
        touch(b, "opt/rocm-5.4.0/lib/libamdhip64.so.5", "");
        // ROCm 5's layout kept HIP in `<prefix>/hip` too.
        link(
            b,
            "opt/rocm-5.4.0/hip/lib/libamdhip64.so.5",
            "../../lib/libamdhip64.so.5",
        );
        let run = |name: &str, value: &str| {
            let env: BTreeMap<String, String> = [(name.to_owned(), value.to_owned())].into();
            let f = installs(b, &env).0;
            f.env[0].install.map(|i| f.installs[i].prefix.clone())
        };
        assert_eq!(
            run("ROCM_PATH", "/opt/rocm-6.2.0/").as_deref(),
            Some("/opt/rocm-6.2.0")
        );
        assert_eq!(
            run("HIP_PATH", "/opt/rocm-6.2.0").as_deref(),
            Some("/opt/rocm-6.2.0")
        );
        // ROCm 6 has no `<prefix>/hip`: a stale HIP_PATH names nothing.
        assert_eq!(run("HIP_PATH", "/opt/rocm-6.2.0/hip"), None);
        assert_eq!(
            run("HIP_PATH", "/opt/rocm-5.4.0/hip").as_deref(),
            Some("/opt/rocm-5.4.0")
        );
        // A directory inside an install is not its root.
        assert_eq!(run("ROCM_PATH", "/opt/rocm-6.2.0/lib"), None);
        assert_eq!(run("ROCM_PATH", "/opt/rocm-5.4.0/hip"), None);
    }
}
