//! Layer 6: the HIP compilers of each install and the gfx targets their device libraries cover.
//!
//! For every install of [`InstallFacts`] (and the distribution's `/usr`, where Debian and Ubuntu
//! put `hipcc` and `rocm-device-libs`), the probe checks the existence of (never runs):
//! - `<prefix>/bin/hipcc`, `<prefix>/bin/amdclang++`, `<prefix>/lib/llvm/bin/clang`, and under
//!   `/usr` also `/usr/lib/llvm-*/bin/clang` (Debian's versioned LLVM) and
//!   `/usr/lib/llvm/<N>/bin/clang` (Gentoo's LLVM slots);
//! - the device libraries, whose `oclc_isa_version_<n>.bc` names give the targets covered
//!   (`oclc_isa_version_90a.bc` → gfx90a): `<prefix>/amdgcn/bitcode` (ROCm ≤ 6.2),
//!   `<llvm>/amdgcn/bitcode` of every clang root (the ROCm Core SDK, TheRock) and, under `/usr`,
//!   `/usr/lib/x86_64-linux-gnu/amdgcn/bitcode` (Debian's `rocm-device-libs`); and in every
//!   clang resource directory `<resource>` found, what clang itself tries there (see
//!   [`RESOURCE_BITCODE`]): `<resource>/lib/amdgcn/bitcode` and `<resource>/lib64/amdgcn/bitcode`
//!   (ROCm ≥ 6.3 under `<prefix>/lib/llvm/lib/clang/<N>`; Gentoo's `rocm-device-libs` link under
//!   `/usr/lib/clang/<N>/lib64`), then `<resource>/amdgcn/bitcode` (Fedora's
//!   `rocm-device-libs` under `/usr/lib/clang/<N>` or `/usr/lib64/rocm/llvm/lib/clang/<N>`).
//!   The resource directories are `<llvm>/lib/clang/*` of ROCm's, Debian's and Fedora's bundled
//!   LLVM, and `/usr/lib/clang/<N>`, which only clang N reads (see [`ResourceOwner`]);
//! - the distribution's default clang, `/usr/bin/clang`, and the major its link names
//!   (`clang -> clang-18`);
//! - the directories the environment makes clang use instead: `HIP_DEVICE_LIB_PATH`, and
//!   `$ROCM_PATH/amdgcn/bitcode` (see [`LibsPlace`] for clang's order).
//!
//! Every read goes through the [`SysRoot`]; unreadable directories are recorded as
//! problems (ARCHITECTURE.md §3, `facts/`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::install::InstallFacts;
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// Debian's `rocm-device-libs` directory (`dpkg -L rocm-device-libs`).
pub const DEBIAN_BITCODE: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
/// Where Fedora's clangs keep their resource directories, one per LLVM major, the main clang's
/// and the compat `llvmN` packages' alike (`-DCLANG_RESOURCE_DIR=../lib/clang/N`, and
/// `../../../lib/clang/N` from `/usr/lib64/llvmN/bin`, in Fedora's clang and llvm specs).
pub const DISTRIBUTION_RESOURCES: &str = "/usr/lib/clang";
/// Fedora's build of ROCm's own LLVM (`rocm-compilersupport` with `bundled_llvm`): its clang
/// is `bin/clang` there, its resource directory `lib/clang/<N>`.
pub const FEDORA_ROCM_LLVM: &str = "/usr/lib64/rocm/llvm";
/// The distribution's default clang.
pub const DEFAULT_CLANG: &str = "/usr/bin/clang";
/// Gentoo's LLVM slots, `/usr/lib/llvm/<N>` (`-DCMAKE_INSTALL_PREFIX=/usr/lib/llvm/${LLVM_MAJOR}`
/// in `llvm-core/clang`'s ebuild), whose clang's resource directory is `/usr/lib/clang/<N>`
/// (`-DCLANG_RESOURCE_DIR=../../../../lib/clang/${LLVM_MAJOR}`, relative to its `bin`).
pub const GENTOO_SLOTS: &str = "/usr/lib/llvm";
/// Compiler drivers looked for, relative to a prefix.
pub const DRIVERS: [&str; 3] = ["bin/hipcc", "bin/amdclang++", "lib/llvm/bin/clang"];
/// Where clang looks for device libraries in its resource directory, and in which step.
/// `detectDeviceLibrary` (LLVM's `clang/lib/Driver/ToolChains/AMDGPU.cpp`, since D140315) first
/// tries `<resource>/<CLANG_INSTALL_LIBDIR_BASENAME>/amdgcn/bitcode`, that name being
/// `lib${LLVM_LIBDIR_SUFFIX}` of the build (`clang/CMakeLists.txt`): `lib`, or `lib64` where the
/// distribution builds LLVM with suffix 64 (Fedora, Gentoo). Which one a clang was built with is
/// not on disk, so both are read. The resource directory is then also a candidate root
/// (`ROCmSearchDirs.emplace_back(D.ResourceDir, …)`), read as `<resource>/amdgcn/bitcode`.
pub const RESOURCE_BITCODE: [(&str, LibsPlace); 3] = [
    ("lib/amdgcn/bitcode", LibsPlace::Resource),
    ("lib64/amdgcn/bitcode", LibsPlace::Resource),
    ("amdgcn/bitcode", LibsPlace::Install),
];
/// At most this many names of one directory are looked at.
const MAX_NAMES: usize = 10_000;

/// One compiler driver found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    /// `hipcc`, `amdclang++`, `clang`.
    pub name: String,
    /// Its path.
    pub path: String,
    /// Its version, read from files (never by running it): HIP's for hipcc, the clang
    /// resource directory's for clang and amdclang++.
    pub version: Option<String>,
    /// The file or directory the version came from.
    pub version_source: Option<String>,
}

/// HIP's version file (`HIP_VERSION_MAJOR=5` lines), relative to a prefix: written by every
/// HIP install (AMD's hip-dev, Debian's libamdhip64-dev), with the older `bin/.hipVersion`
/// before it.
pub const HIP_VERSION_FILES: [&str; 2] = ["share/hip/version", "bin/.hipVersion"];

/// `HIP_VERSION_MAJOR=5`, `…MINOR=2`, `…PATCH=21153` → `5.2.21153`; `None` without major and
/// minor.
pub fn parse_hip_version(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
    };
    let major = value("HIP_VERSION_MAJOR")?;
    let minor = value("HIP_VERSION_MINOR")?;
    Some(match value("HIP_VERSION_PATCH") {
        Some(p) => format!("{major}.{minor}.{p}"),
        None => format!("{major}.{minor}"),
    })
}

/// Which step of clang's search finds a device-library directory. clang
/// (`RocmInstallationDetector::detectDeviceLibrary`, LLVM's `clang/lib/Driver/ToolChains/
/// AMDGPU.cpp`) takes `HIP_DEVICE_LIB_PATH` (or `--rocm-device-lib-path`) alone when set; else
/// its resource directory; else `<candidate>/amdgcn/bitcode` for the ROCm candidates, which are
/// `$ROCM_PATH` alone when that is set and non-empty, else the places derived from clang's own
/// path (its parent's parent, `lib/llvm` itself), `/opt/rocm`, the newest `/opt/rocm-*`,
/// `/usr/local` and `/usr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LibsPlace {
    /// `<resource>/lib/amdgcn/bitcode` or `<resource>/lib64/amdgcn/bitcode`: searched before
    /// any candidate, whatever `ROCM_PATH` says.
    Resource,
    /// `<prefix>/amdgcn/bitcode`, `<llvm>/amdgcn/bitcode`, Debian's directory, a clang's own
    /// `<resource>/amdgcn/bitcode` (after the roots derived from its path): searched only while
    /// `ROCM_PATH` is unset.
    Install,
}

/// The one clang that searches a device-library directory: the directory is
/// `<resource>/amdgcn/bitcode` of that clang's resource directory, which clang puts among its
/// candidates (`ROCmSearchDirs.emplace_back(D.ResourceDir, …)` in `AMDGPU.cpp`, on LLVM's 17
/// release branch as on main) and no other clang knows. Fedora installs `rocm-device-libs`
/// there for the LLVM it was built against, so a clang of another major finds none
/// (instructlab/instructlab#855).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceOwner {
    /// The clang's major version, the resource directory's name (`/usr/lib/clang/17`).
    pub major: u32,
    /// The resource directory.
    pub resource: String,
    /// The driver of that clang when it exists: `/usr/bin/clang-17`,
    /// `/usr/lib/llvm/22/bin/clang` (Gentoo), or `/usr/lib64/rocm/llvm/bin/clang`.
    pub driver: Option<String>,
}

/// The clang a plain `clang` or `clang++` runs, and which resource directory it reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefaultClang {
    /// `/usr/bin/clang`.
    pub path: String,
    /// Its major version, from the name its link gives (`clang-18`, `../lib/llvm-18/bin/clang`).
    pub major: u32,
    /// Where Fedora's layout puts its resource directory, `/usr/lib/clang/<major>`: the
    /// place its own device libraries would be (Debian's clangs keep theirs in
    /// `/usr/lib/llvm-<N>`, whose directories every compiler of `/usr` is credited with).
    pub resource: String,
}

/// One directory of device-library bitcode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceLibs {
    /// The directory.
    pub dir: String,
    /// Where clang's search finds it.
    pub place: LibsPlace,
    /// The only clang that searches it, when that is one clang's resource directory; `None`
    /// for the directories every compiler of the install searches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<ResourceOwner>,
    /// How many `oclc_isa_version_*.bc` files it has.
    pub isa_files: usize,
    /// The processors those files cover (`gfx90a`), sorted.
    pub targets: BTreeSet<String>,
}

/// The compilers of one install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallCompiler {
    /// The install prefix (`/opt/rocm-6.2.0`, `/usr`).
    pub prefix: String,
    /// `ROCm 6.2.0 at /opt/rocm-6.2.0`.
    pub describe: crate::i18n::Text,
    /// The compiler drivers found.
    pub tools: Vec<Tool>,
    /// The device-library directories found.
    pub device_libs: Vec<DeviceLibs>,
    /// Under `/usr`, the default clang when its major is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_clang: Option<DefaultClang>,
}

impl InstallCompiler {
    /// Whether the install's compilers search `d`: a directory owned by one clang counts only
    /// when the default clang is that clang, when that clang is the install's own LLVM (ROCm's
    /// `<prefix>/lib/llvm`, Fedora's bundled `/usr/lib64/rocm/llvm`: the clang its hipcc runs),
    /// or when no default clang is known (then the install's own driver, such as Fedora's hipcc,
    /// picks its clang).
    pub fn counts(&self, d: &DeviceLibs) -> bool {
        let installs_own = |driver: &str| {
            driver.starts_with(&format!("{}/lib/llvm/", self.prefix))
                || driver.contains("/rocm/llvm/bin/")
        };
        match (&d.owner, &self.default_clang) {
            (Some(o), Some(c)) => {
                o.major == c.major || o.driver.as_deref().is_some_and(installs_own)
            }
            _ => true,
        }
    }

    /// The processors covered by any of the install's device libraries.
    pub fn targets(&self) -> BTreeSet<String> {
        self.device_libs
            .iter()
            .flat_map(|d| d.targets.iter().cloned())
            .collect()
    }

    /// Whether anything of layer 6 is here.
    pub fn any(&self) -> bool {
        !self.tools.is_empty() || !self.device_libs.is_empty()
    }
}

/// A variable that makes clang look for device libraries in one place only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LibsOverride {
    /// `HIP_DEVICE_LIB_PATH` or `ROCM_PATH`.
    pub variable: String,
    /// Its value.
    pub value: String,
    /// The directory clang then reads: the value itself, or `$ROCM_PATH/amdgcn/bitcode`.
    pub dir: String,
    /// What that directory holds; `None` when it does not exist.
    pub libs: Option<DeviceLibs>,
}

/// The variable clang reads for a device-library directory, used alone when set.
pub const HIP_DEVICE_LIB_PATH: &str = "HIP_DEVICE_LIB_PATH";

/// Layer 6 facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CompilerFacts {
    /// Whether the installs were captured (see [`InstallFacts::captured`]).
    pub captured: bool,
    /// One entry per install that has a compiler or device libraries, in
    /// [`InstallFacts::installs`] order, then `/usr` when no install had that prefix.
    pub installs: Vec<InstallCompiler>,
    /// The paths looked at, for evidence of absence.
    pub looked_at: Vec<String>,
    /// `HIP_DEVICE_LIB_PATH` when set and non-empty: every clang reads only its directory.
    pub device_lib_path: Option<LibsOverride>,
    /// `ROCM_PATH` when set and non-empty: every clang reads `$ROCM_PATH/amdgcn/bitcode`
    /// instead of the [`LibsPlace::Install`] directories (its resource directory still first).
    pub rocm_path: Option<LibsOverride>,
}

impl CompilerFacts {
    /// The device libraries the compilers of `i` link, as clang's search picks them in this
    /// environment, and the variable that decided it (`None`: the install's own places).
    pub fn searched<'a>(
        &'a self,
        i: &'a InstallCompiler,
    ) -> (Vec<&'a DeviceLibs>, Option<&'a LibsOverride>) {
        if let Some(o) = &self.device_lib_path {
            return (o.libs.iter().collect(), Some(o));
        }
        let resource: Vec<&DeviceLibs> = i
            .device_libs
            .iter()
            .filter(|d| d.place == LibsPlace::Resource && d.isa_files > 0 && i.counts(d))
            .collect();
        if !resource.is_empty() {
            return (resource, None);
        }
        if let Some(o) = &self.rocm_path {
            return (o.libs.iter().collect(), Some(o));
        }
        (i.device_libs.iter().filter(|d| i.counts(d)).collect(), None)
    }
}

impl Collect for CompilerFacts {
    /// The installs already found and the environment (`PlatformFacts::env`).
    type Needs<'a> = (&'a InstallFacts, &'a BTreeMap<String, String>);
    type Output = Self;

    /// Reads the compilers of the installs.
    fn collect(
        source: &Source,
        (installs, env): (&InstallFacts, &BTreeMap<String, String>),
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let mut facts = Self {
            captured: installs.captured,
            ..Self::default()
        };
        if !installs.captured {
            return facts;
        }
        let set = |name: &str| env.get(name).filter(|v| !v.is_empty());
        facts.device_lib_path = set(HIP_DEVICE_LIB_PATH)
            .map(|v| libs_override(root, HIP_DEVICE_LIB_PATH, v, v.clone(), problems));
        facts.rocm_path = set("ROCM_PATH").map(|v| {
            let dir = format!("{}/amdgcn/bitcode", v.trim_end_matches('/'));
            libs_override(root, "ROCM_PATH", v, dir, problems)
        });
        let mut prefixes: Vec<(String, crate::i18n::Text)> = installs
            .installs
            .iter()
            .map(|i| (i.prefix.trim_end_matches('/').to_owned(), i.text()))
            .collect();
        if !prefixes.iter().any(|(p, _)| p == "/usr") {
            prefixes.push(("/usr".to_owned(), crate::text!("facts.distribution-usr")));
        }
        for (prefix, describe) in prefixes {
            let entry = facts.one(root, &prefix, describe, problems);
            if entry.any() {
                facts.installs.push(entry);
            }
        }
        facts
    }
}

impl CompilerFacts {
    fn one(
        &mut self,
        root: &SysRoot,
        prefix: &str,
        describe: crate::i18n::Text,
        problems: &mut Vec<Problem>,
    ) -> InstallCompiler {
        let mut tools = Vec::new();
        let mut drivers: Vec<String> = DRIVERS.iter().map(|d| format!("{prefix}/{d}")).collect();
        // Each clang root (the parent of its `bin`) with its resource directories, listed once:
        // they give both the device-library directories and the compilers' versions.
        let mut llvms: Vec<(String, Vec<String>)> = Vec::new();
        let own = format!("{prefix}/lib/llvm");
        llvms.push((own.clone(), resource_dirs(root, &own, problems)));
        let mut bitcode = vec![(format!("{prefix}/amdgcn/bitcode"), LibsPlace::Install)];
        // Resource directories only one clang reads.
        let mut owned: Vec<ResourceOwner> = Vec::new();
        let mut default_clang = None;
        if prefix == "/usr" {
            bitcode.push((DEBIAN_BITCODE.to_owned(), LibsPlace::Install));
            let names = list(root, "/usr/lib", problems).unwrap_or_default();
            for llvm in names.iter().filter(|n| is_versioned_llvm(n)) {
                drivers.push(format!("/usr/lib/{llvm}/bin/clang"));
                let dir = format!("/usr/lib/{llvm}");
                let resources = resource_dirs(root, &dir, problems);
                llvms.push((dir, resources));
            }
            let slots = list(root, GENTOO_SLOTS, problems).unwrap_or_default();
            for slot in slots.iter().filter(|n| is_gentoo_slot(n)) {
                let dir = format!("{GENTOO_SLOTS}/{slot}");
                drivers.push(format!("{dir}/bin/clang"));
                // Its resource directory is one of DISTRIBUTION_RESOURCES, owned below: listed
                // here only for the clang's version.
                let resource = format!("{DISTRIBUTION_RESOURCES}/{slot}");
                llvms.push((
                    dir,
                    root.exists(&resource)
                        .then_some(resource)
                        .into_iter()
                        .collect(),
                ));
            }
            for resource in resource_dirs(root, "/usr", problems) {
                let Some(major) = major_of(basename(&resource)) else {
                    continue;
                };
                // Fedora's clang N is `/usr/bin/clang-N`, Gentoo's the slot's.
                let driver = [
                    format!("/usr/bin/clang-{major}"),
                    format!("{GENTOO_SLOTS}/{major}/bin/clang"),
                ]
                .into_iter()
                .find(|d| root.exists(d));
                owned.push(ResourceOwner {
                    major,
                    resource,
                    driver,
                });
            }
            if root.exists(FEDORA_ROCM_LLVM) {
                let driver = format!("{FEDORA_ROCM_LLVM}/bin/clang");
                drivers.push(driver.clone());
                let resources = resource_dirs(root, FEDORA_ROCM_LLVM, problems);
                for resource in &resources {
                    let Some(major) = major_of(basename(resource)) else {
                        continue;
                    };
                    owned.push(ResourceOwner {
                        major,
                        resource: resource.clone(),
                        driver: root.exists(&driver).then(|| driver.clone()),
                    });
                }
                llvms.push((FEDORA_ROCM_LLVM.to_owned(), resources));
            }
            if root.exists(DEFAULT_CLANG) {
                drivers.push(DEFAULT_CLANG.to_owned());
                default_clang = optional(root.read_link(DEFAULT_CLANG), problems)
                    .as_deref()
                    .and_then(link_major)
                    .map(|major| DefaultClang {
                        path: DEFAULT_CLANG.to_owned(),
                        major,
                        resource: format!("{DISTRIBUTION_RESOURCES}/{major}"),
                    });
            }
        }
        // In clang's order: the resource directories' own bitcode first, then the candidate
        // roots (each clang's root, e.g. the ROCm Core SDK's `lib/llvm/amdgcn/bitcode`, then its
        // resource directory).
        let shared: Vec<&String> = llvms
            .iter()
            .flat_map(|(_, resources)| resources)
            .filter(|r| !owned.iter().any(|o| &o.resource == *r))
            .collect();
        let in_resources = |place: LibsPlace| {
            shared.iter().flat_map(move |r| {
                RESOURCE_BITCODE
                    .iter()
                    .filter(move |(_, p)| *p == place)
                    .map(move |(rel, p)| (format!("{r}/{rel}"), *p))
            })
        };
        bitcode.extend(in_resources(LibsPlace::Resource));
        bitcode.extend(
            llvms
                .iter()
                .map(|(llvm, _)| (format!("{llvm}/amdgcn/bitcode"), LibsPlace::Install)),
        );
        bitcode.extend(in_resources(LibsPlace::Install));
        for path in drivers {
            if root.exists(&path) {
                let name = path.rsplit('/').next().unwrap_or_default().to_owned();
                let (version, version_source) = if name == "hipcc" {
                    hip_version(root, prefix, problems)
                } else if path == DEFAULT_CLANG {
                    default_clang.as_ref().map_or((None, None), |c| {
                        let source = root.exists(&c.resource).then(|| c.resource.clone());
                        (Some(c.major.to_string()), source)
                    })
                } else {
                    // `<llvm>/bin/clang` and `<prefix>/bin/amdclang++` (which runs
                    // `<prefix>/lib/llvm/bin/clang`): the clang resource directory names the
                    // release (`17`, `15.0.6`).
                    let llvm = path.strip_suffix("/bin/clang").unwrap_or(&own);
                    llvms
                        .iter()
                        .find(|(l, _)| l == llvm)
                        .and_then(|(_, r)| newest(r))
                        .map_or((None, None), |r| {
                            (Some(basename(r).to_owned()), Some(r.clone()))
                        })
                };
                tools.push(Tool {
                    name,
                    path,
                    version,
                    version_source,
                });
            } else {
                self.looked_at.push(path);
            }
        }
        let shared = bitcode.into_iter().map(|(dir, place)| (dir, place, None));
        let owned = owned.into_iter().flat_map(|owner| {
            RESOURCE_BITCODE.iter().map(move |(rel, place)| {
                (
                    format!("{}/{rel}", owner.resource),
                    *place,
                    Some(owner.clone()),
                )
            })
        });
        let device_libs = shared
            .chain(owned)
            .filter_map(|(dir, place, owner)| {
                let mut libs = scan(root, dir, place, problems)?;
                libs.owner = owner;
                Some(libs)
            })
            .collect();
        InstallCompiler {
            prefix: prefix.to_owned(),
            describe,
            tools,
            device_libs,
            default_clang,
        }
    }
}

/// The ISA files of one bitcode directory; `None` when it does not exist or cannot be listed.
fn scan(
    root: &SysRoot,
    dir: String,
    place: LibsPlace,
    problems: &mut Vec<Problem>,
) -> Option<DeviceLibs> {
    if !root.exists(&dir) {
        return None;
    }
    let names = list(root, &dir, problems)?;
    let isa: Vec<String> = names.iter().filter_map(|n| isa_version_target(n)).collect();
    Some(DeviceLibs {
        dir,
        place,
        owner: None,
        isa_files: isa.len(),
        targets: isa.into_iter().collect(),
    })
}

/// What a variable makes clang read. A relative value is kept as written and read as nothing:
/// which directory it means depends on where the compiler is started.
fn libs_override(
    root: &SysRoot,
    variable: &str,
    value: &str,
    dir: String,
    problems: &mut Vec<Problem>,
) -> LibsOverride {
    let libs = if dir.starts_with('/') {
        scan(root, dir.clone(), LibsPlace::Install, problems)
    } else {
        None
    };
    LibsOverride {
        variable: variable.to_owned(),
        value: value.to_owned(),
        dir,
        libs,
    }
}

fn hip_version(
    root: &SysRoot,
    prefix: &str,
    problems: &mut Vec<Problem>,
) -> (Option<String>, Option<String>) {
    for rel in HIP_VERSION_FILES {
        let path = format!("{prefix}/{rel}");
        if let Some(v) = optional(root.read_text(&path), problems)
            .as_deref()
            .and_then(parse_hip_version)
        {
            return (Some(v), Some(path));
        }
    }
    (None, None)
}

/// The directories under `<llvm>/lib/clang` (clang resource directories, named by version),
/// sorted; empty when it does not exist.
fn resource_dirs(root: &SysRoot, llvm: &str, problems: &mut Vec<Problem>) -> Vec<String> {
    let dir = format!("{llvm}/lib/clang");
    if !root.exists(&dir) {
        return Vec::new();
    }
    let mut versions = list(root, &dir, problems).unwrap_or_default();
    versions.sort();
    versions.into_iter().map(|v| format!("{dir}/{v}")).collect()
}

/// The last component of a path.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or_default()
}

/// The resource directory with the newest numeric version name (`15.0.6`, `19`); others
/// (`include`) are ignored.
fn newest(dirs: &[String]) -> Option<&String> {
    dirs.iter()
        .filter(|d| {
            basename(d)
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .max_by_key(|d| {
            basename(d)
                .split('.')
                .map(|p| p.parse::<u64>().unwrap_or(0))
                .collect::<Vec<_>>()
        })
}

/// The major of a numeric resource-directory name (`17`, `15.0.6`); others (`include`) give
/// `None`.
fn major_of(version: &str) -> Option<u32> {
    let numeric = version
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric
        .then(|| version.split('.').next()?.parse().ok())
        .flatten()
}

/// The major a link to a clang names: `clang-18` (Fedora, and Debian's second link),
/// `../lib/llvm-19/bin/clang` (Debian), `/usr/lib64/llvm17/bin/clang` (Fedora's compat
/// packages), `/usr/lib/llvm/22/bin/clang` (Gentoo's slot). A link naming none (`clang-cl`, a
/// plain `clang`, `../lib/llvm/bin/clang`) gives `None`.
pub fn link_major(target: &str) -> Option<u32> {
    let digits = |s: &str| {
        (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let name = target.rsplit('/').next().unwrap_or_default();
    if let Some(m) = name.strip_prefix("clang-").and_then(digits) {
        return Some(m);
    }
    if name != "clang" {
        return None;
    }
    let parts: Vec<&str> = target.split('/').collect();
    parts.iter().enumerate().find_map(|(i, part)| {
        let slot = || {
            (*part == "llvm")
                .then(|| parts.get(i + 1).copied().and_then(digits))
                .flatten()
        };
        part.strip_prefix("llvm-")
            .or_else(|| part.strip_prefix("llvm"))
            .and_then(digits)
            .or_else(slot)
    })
}

/// A bounded listing; a missing directory is `None` without a problem.
fn list(root: &SysRoot, dir: &str, problems: &mut Vec<Problem>) -> Option<Vec<String>> {
    let mut names = optional(root.read_dir(dir), problems)?;
    names.truncate(MAX_NAMES);
    Some(names)
}

/// Debian's versioned LLVM directories: `llvm-17`, `llvm-19` (not `llvm`, `llvm-foo`).
pub fn is_versioned_llvm(name: &str) -> bool {
    name.strip_prefix("llvm-")
        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// Gentoo's LLVM slot directories under [`GENTOO_SLOTS`]: `22`, `17` (not `22.1`, `bin`).
pub fn is_gentoo_slot(name: &str) -> bool {
    !name.is_empty() && name.len() <= 4 && name.bytes().all(|b| b.is_ascii_digit())
}

/// The processor a device-library ISA file covers: `oclc_isa_version_1100.bc` → gfx1100,
/// `oclc_isa_version_90a.bc` → gfx90a. Other names give `None`.
pub fn isa_version_target(name: &str) -> Option<String> {
    let n = name
        .strip_prefix("oclc_isa_version_")?
        .strip_suffix(".bc")?;
    let (target, tail) = crate::facts::libraries::processor(n)?;
    tail.is_empty().then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_version_names() {
        let t = |n: &str| isa_version_target(n);
        assert_eq!(t("oclc_isa_version_1100.bc").as_deref(), Some("gfx1100"));
        assert_eq!(t("oclc_isa_version_90a.bc").as_deref(), Some("gfx90a"));
        assert_eq!(t("oclc_isa_version_942.bc").as_deref(), Some("gfx942"));
        assert_eq!(t("oclc_isa_version_600.bc").as_deref(), Some("gfx600"));
        assert_eq!(t("oclc_isa_version_1036.bc").as_deref(), Some("gfx1036"));
        assert_eq!(t("oclc_isa_version_1201.bc").as_deref(), Some("gfx1201"));
        for none in [
            "oclc_abi_version_500.bc",
            "oclc_isa_version_.bc",
            "oclc_isa_version_11000.bc",
            "oclc_isa_version_90a.ll",
            "oclc_isa_version_9.bc",
            "ockl.bc",
            "hip.bc",
        ] {
            assert_eq!(t(none), None, "{none}");
        }
    }

    #[test]
    fn hip_version_files() {
        let debian = "# Auto-generated by cmake\nHIP_PACKAGING_VERSION_PATCH=0\n\
                      HIP_VERSION_MAJOR=5\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=21153\n\
                      HIP_VERSION_GITHASH=\n";
        assert_eq!(parse_hip_version(debian).as_deref(), Some("5.2.21153"));
        assert_eq!(
            parse_hip_version("HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=2").as_deref(),
            Some("6.2")
        );
        assert_eq!(parse_hip_version("HIP_VERSION_MAJOR=6\n"), None);
        assert_eq!(
            parse_hip_version("HIP_VERSION_MAJOR=x\nHIP_VERSION_MINOR=2"),
            None
        );
        assert_eq!(parse_hip_version("\0\0garbage"), None);
    }

    #[test]
    fn majors_from_links_and_resource_names() {
        assert_eq!(link_major("clang-18"), Some(18));
        assert_eq!(link_major("../lib/llvm-19/bin/clang"), Some(19));
        assert_eq!(link_major("/usr/lib64/llvm17/bin/clang"), Some(17));
        assert_eq!(link_major("clang"), None);
        assert_eq!(link_major("clang-cl"), None);
        assert_eq!(link_major("clang-99999"), None);
        assert_eq!(link_major("../lib/llvm/bin/clang"), None);
        assert_eq!(link_major("/usr/lib/llvm/22/bin/clang"), Some(22));
        assert_eq!(link_major("../lib/llvm/22/bin/clang"), Some(22));
        assert_eq!(link_major("/usr/lib/llvm/99999/bin/clang"), None);
        assert_eq!(link_major("ccache"), None);
        assert_eq!(major_of("17"), Some(17));
        assert_eq!(major_of("15.0.6"), Some(15));
        assert_eq!(major_of("include"), None);
        assert_eq!(major_of("17."), None);
        assert_eq!(major_of("99999999999"), None);
    }

    #[test]
    fn versioned_llvm() {
        assert!(is_versioned_llvm("llvm-17"));
        assert!(is_versioned_llvm("llvm-19"));
        assert!(!is_versioned_llvm("llvm"));
        assert!(!is_versioned_llvm("llvm-"));
        assert!(!is_versioned_llvm("llvm-foo"));
        // Gentoo's slots are bare majors, Debian's names are not slots.
        assert!(is_gentoo_slot("22"));
        assert!(!is_gentoo_slot("llvm-22"));
        assert!(!is_gentoo_slot("22.1"));
        assert!(!is_gentoo_slot(""));
        assert!(!is_gentoo_slot("99999"));
    }
}
