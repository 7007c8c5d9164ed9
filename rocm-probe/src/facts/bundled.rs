//! Layer 7: applications that carry their own ROCm runtime or HIP code outside the ROCm installs
//! and the Python packages [`frameworks`](crate::facts::frameworks) reads as frameworks —
//! ollama's runner directories, llama.cpp's `libggml-hip.so`, vLLM's extensions, AITER's JIT
//! modules — and what GPU code each carries.
//!
//! Where to look is data: `rocm-probe/data/bundled.toml`, one row per application and layout,
//! each citing the install script or build file its paths come from; `build.rs` compiles it into
//! [`RUNTIMES`]. Nothing is searched for: each absolute path is looked at by name (ollama's
//! directories are listed to find their runner directories), and each relative path under every
//! site directory layer 7 found a framework in. The GPU code is read by
//! [`fatbin`], the ROCm libraries are named with the stems layer 7 uses for
//! a wheel's bundle ([`BUNDLED_STEMS`]), and the result is a [`Bundled`] like a wheel's, so the
//! checks compare it with the GPUs exactly as they do a framework's.

pub mod data;
pub mod ollama;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::fatbin::{self, Unread};
use crate::facts::frameworks::{
    BUNDLED_STEMS, Bundled, BundledLib, FrameworkFacts, encoded_release,
};
use crate::facts::install::RocmVersion;
use crate::facts::libraries::{KernelDir, ROCBLAS_LIBRARY, file_target, is_soname_of};
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// How a row's paths are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Directories holding ollama's runner directories (`rocm`, `rocm_v7_2`).
    OllamaRunners,
    /// Paths of a llama.cpp `libggml-hip.so`.
    GgmlHip,
    /// Package directories, relative to each framework site directory, whose `*.so` files are
    /// HIP extensions.
    SiteExtensions,
    /// Directories relative to the home directory whose `*rocm*` subdirectories each hold a
    /// ROCm runtime an application downloaded (its libraries and rocBLAS's `rocblas/library`).
    HomeVendorDirs,
    /// Directories relative to the home directory whose every subdirectory is a ROCm Core SDK
    /// (TheRock) tarball an application extracted, its libraries in `lib/`.
    #[serde(rename = "home-therock-dirs")]
    HomeTheRockDirs,
}

/// One row of `data/bundled.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    /// The application.
    pub name: &'static str,
    /// How its paths are read.
    pub kind: Kind,
    /// Where to look.
    pub paths: &'static [&'static str],
    /// Where the paths come from.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// The stem of llama.cpp's HIP backend (`libggml-hip.so`), which ollama ships too.
pub const GGML_HIP: &str = "ggml-hip";
/// The prefix of rocBLAS's lazy-loading Tensile catalogue per target
/// (`TensileLibrary_lazy_gfx1100.dat`): ollama drops a GPU whose target has none
/// (`discover/amd.go`, `rocblasGFXTargets`).
pub const LAZY_PREFIX: &str = "TensileLibrary_lazy_";

/// At most this many entries of a directory are looked at.
const MAX_ENTRIES: usize = 50_000;
/// At most this many runner directories per ollama directory, and extension files per package.
const MAX_FILES: usize = 32;

/// One application's bundled runtime or HIP code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundledApp {
    /// The application (`ollama`, `llama.cpp`, `vLLM`, `AITER`).
    pub name: &'static str,
    /// How it was found.
    pub kind: Kind,
    /// The directory the report names it by: the runner directory, the library's directory, or
    /// the site directory of an extension package.
    pub dir: String,
    /// What it carries: its ROCm libraries, its ROCm release, its GPU code, rocBLAS's Tensile
    /// directory.
    pub bundled: Bundled,
    /// ollama: the processors whose rocBLAS lazy catalogue (`TensileLibrary_lazy_<gfx>.dat`) is
    /// in the runner's `rocblas/library`; ollama drops every other GPU.
    pub rocblas_lazy: Option<BTreeSet<String>>,
}

/// Layer 7's bundled runtimes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BundledFacts {
    /// What was found.
    pub apps: Vec<BundledApp>,
    /// ollama's `lib/ollama` directories of the current layout, with or without a ROCm runner.
    pub ollama: Vec<ollama::OllamaDir>,
    /// Whether a bound was reached.
    pub truncated: bool,
}

impl Collect for BundledFacts {
    /// The frameworks found (their site directories are where extensions are looked for) and
    /// the environment (`HOME`, for the per-user places).
    type Needs<'a> = (&'a FrameworkFacts, &'a BTreeMap<String, String>);
    type Output = Self;

    fn collect(
        source: &Source,
        (frameworks, env): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let mut c = Collector {
            root: source.root(),
            problems,
            facts: Self::default(),
        };
        for rt in RUNTIMES {
            match rt.kind {
                Kind::OllamaRunners => {
                    for dir in rt.paths {
                        c.ollama(rt, dir);
                    }
                }
                Kind::GgmlHip => {
                    for path in rt.paths {
                        c.ggml_hip(rt, path);
                    }
                }
                Kind::HomeVendorDirs => {
                    let Some(home) = home(env) else { continue };
                    for rel in rt.paths {
                        c.vendor_dirs(rt, &format!("{home}/{rel}"));
                    }
                }
                Kind::HomeTheRockDirs => {
                    let Some(home) = home(env) else { continue };
                    for rel in rt.paths {
                        c.therock_dirs(rt, &format!("{home}/{rel}"));
                    }
                }
                Kind::SiteExtensions => {
                    for site in &frameworks.sites {
                        // A CUDA or CPU build of vLLM carries no HIP code to judge (layer 7's
                        // `frameworks.vllm-not-rocm` says so instead).
                        let foreign = rt.paths == ["vllm"]
                            && site.vllm.as_ref().is_some_and(|v| {
                                matches!(
                                    v.build(),
                                    crate::facts::frameworks::VllmBuild::Cuda
                                        | crate::facts::frameworks::VllmBuild::Cpu
                                )
                            });
                        if foreign {
                            continue;
                        }
                        // An editable install's package is in its source tree (ROCm/ATOM#69).
                        let trees = std::iter::once(&site.path).chain(
                            site.editable
                                .iter()
                                .filter(|t| !frameworks.scanned.contains(t)),
                        );
                        for tree in trees {
                            for rel in rt.paths {
                                c.extensions(rt, tree, rel);
                            }
                        }
                    }
                }
            }
        }
        c.facts
    }
}

/// The home directory to look under: only an absolute `HOME` names a place (this user's).
fn home(env: &BTreeMap<String, String>) -> Option<&str> {
    env.get("HOME")
        .map(|h| h.trim_end_matches('/'))
        .filter(|h| h.starts_with('/') && !h.is_empty())
}

struct Collector<'a> {
    root: &'a SysRoot,
    problems: &'a mut Vec<Problem>,
    facts: BundledFacts,
}

impl Collector<'_> {
    fn list(&mut self, dir: &str) -> Option<Vec<String>> {
        let mut names = optional(self.root.read_dir(dir), self.problems)?;
        if names.len() > MAX_ENTRIES {
            names.truncate(MAX_ENTRIES);
            self.facts.truncated = true;
        }
        names.sort();
        Some(names)
    }

    /// ollama's runner directories under `dir`.
    fn ollama(&mut self, rt: &Runtime, dir: &str) {
        let Some(names) = self.list(dir) else { return };
        self.facts
            .ollama
            .extend(ollama::OllamaDir::read(dir, &names));
        let runners: Vec<&String> = names.iter().filter(|n| ollama::is_rocm_runner(n)).collect();
        self.facts.truncated |= runners.len() > MAX_FILES;
        for runner in runners.into_iter().take(MAX_FILES) {
            let runner_dir = format!("{dir}/{runner}");
            let Some(files) = self.list(&runner_dir) else {
                continue;
            };
            let mut bundled = self.bundled(&runner_dir, &files, GGML_HIP);
            if bundled.rocm.is_none() {
                bundled.rocm = runner_release(runner);
                if bundled.rocm.is_some() {
                    bundled.rocm_source = Some(runner_dir.clone());
                }
            }
            let lazy = self.rocblas(&runner_dir, &files, &mut bundled);
            self.facts.apps.push(BundledApp {
                name: rt.name,
                kind: rt.kind,
                dir: runner_dir,
                bundled,
                rocblas_lazy: lazy,
            });
        }
    }

    /// rocBLAS's Tensile directory of `dir`, when `files` has `rocblas`: recorded in `bundled`,
    /// and the processors of its lazy catalogues returned.
    fn rocblas(
        &mut self,
        dir: &str,
        files: &[String],
        bundled: &mut Bundled,
    ) -> Option<BTreeSet<String>> {
        if !files.iter().any(|n| n == "rocblas") {
            return None;
        }
        let library = format!("{dir}/{ROCBLAS_LIBRARY}");
        let names = self.list(&library)?;
        let lazy = names
            .iter()
            .filter_map(|n| n.strip_prefix(LAZY_PREFIX)?.strip_suffix(".dat"))
            .map(str::to_owned)
            .collect();
        bundled.rocblas = Some(KernelDir {
            entries: names.len(),
            targets: names.iter().filter_map(|n| file_target(n)).collect(),
            dir: library,
        });
        Some(lazy)
    }

    /// Each `*rocm*` subdirectory of `dir`: a ROCm runtime an application keeps for itself (LM
    /// Studio's `linux-llama-rocm-vendor-v3`), judged by its rocBLAS like a wheel's.
    fn vendor_dirs(&mut self, rt: &Runtime, dir: &str) {
        self.runtime_dirs(rt, dir, |n| n.contains("rocm"), "");
    }

    /// Every TheRock tarball extracted under `dir` (`<arch>-<version>`), its libraries in `lib/`.
    fn therock_dirs(&mut self, rt: &Runtime, dir: &str) {
        self.runtime_dirs(rt, dir, |_| true, "/lib");
    }

    /// The subdirectories of `dir` that `pick` accepts, each a ROCm runtime whose libraries are
    /// in `<subdirectory><lib>`.
    fn runtime_dirs(&mut self, rt: &Runtime, dir: &str, pick: fn(&str) -> bool, lib: &str) {
        let Some(names) = self.list(dir) else { return };
        let vendors: Vec<&String> = names.iter().filter(|n| pick(n)).collect();
        self.facts.truncated |= vendors.len() > MAX_FILES;
        for vendor in vendors.into_iter().take(MAX_FILES) {
            let vendor_dir = format!("{dir}/{vendor}{lib}");
            let Some(files) = self.list(&vendor_dir) else {
                continue;
            };
            // No GPU code is read here: the libraries are ROCm's own, judged by rocBLAS's
            // catalogue.
            let mut bundled = self.bundled(&vendor_dir, &files, GGML_HIP);
            self.rocblas(&vendor_dir, &files, &mut bundled);
            if bundled.libs.is_empty() && bundled.rocblas.is_none() {
                continue;
            }
            self.facts.apps.push(BundledApp {
                name: rt.name,
                kind: rt.kind,
                dir: vendor_dir,
                bundled,
                rocblas_lazy: None,
            });
        }
    }

    /// A llama.cpp HIP backend at `path`, looked at by name.
    fn ggml_hip(&mut self, rt: &Runtime, path: &str) {
        if !self.root.exists(path) {
            return;
        }
        let dir = path.rsplit_once('/').map_or("/", |(d, _)| d);
        let mut bundled = empty(dir);
        bundled.device_code.push(path.to_owned());
        read_code(self.root, path, &mut bundled);
        self.facts.apps.push(BundledApp {
            name: rt.name,
            kind: rt.kind,
            dir: dir.to_owned(),
            bundled,
            rocblas_lazy: None,
        });
    }

    /// The HIP extensions (`*.so`) of the package directory `rel` in the site directory `site`.
    fn extensions(&mut self, rt: &Runtime, site: &str, rel: &str) {
        let dir = format!("{site}/{rel}");
        if !self.root.exists(&dir) {
            return;
        }
        let Some(names) = self.list(&dir) else { return };
        let so: Vec<&String> = names
            .iter()
            .filter(|n| n.ends_with(".so") || n.contains(".so."))
            .collect();
        if so.is_empty() {
            return;
        }
        self.facts.truncated |= so.len() > MAX_FILES;
        let mut bundled = empty(&dir);
        for n in so.into_iter().take(MAX_FILES) {
            let path = format!("{dir}/{n}");
            bundled.device_code.push(path.clone());
            read_code(self.root, &path, &mut bundled);
        }
        self.facts.apps.push(BundledApp {
            name: rt.name,
            kind: rt.kind,
            dir: site.to_owned(),
            bundled,
            rocblas_lazy: None,
        });
    }

    /// The ROCm libraries among `files` of `dir`, and the GPU code of the most specific file
    /// named after `code_stem`.
    fn bundled(&mut self, dir: &str, files: &[String], code_stem: &str) -> Bundled {
        let mut b = empty(dir);
        b.libs = BUNDLED_STEMS
            .iter()
            .filter_map(|&stem| {
                let files: Vec<String> = files
                    .iter()
                    .filter(|n| is_soname_of(n, stem))
                    .cloned()
                    .collect();
                (!files.is_empty()).then(|| BundledLib {
                    name: stem.to_owned(),
                    files,
                })
            })
            .collect();
        if let Some((v, f)) = b
            .libs
            .iter()
            .flat_map(|l| l.files.iter())
            .find_map(|f| encoded_release(f).map(|v| (v, f)))
        {
            b.rocm = Some(v);
            b.rocm_source = Some(format!("{dir}/{f}"));
        }
        // One file: the most specific name, where the soname links lead.
        if let Some(real) = files
            .iter()
            .filter(|n| is_soname_of(n, code_stem))
            .max_by_key(|n| (n.matches('.').count(), n.len()))
        {
            let path = format!("{dir}/{real}");
            b.device_code.push(path.clone());
            read_code(self.root, &path, &mut b);
        }
        b
    }
}

/// A bundle with nothing in it yet.
fn empty(dir: &str) -> Bundled {
    Bundled {
        lib_dir: dir.to_owned(),
        libs: Vec::new(),
        rocm: None,
        rocm_source: None,
        device_code: Vec::new(),
        code: Vec::new(),
        code_problems: Vec::new(),
        rocblas: None,
        hipblaslt: None,
        // Applications' runtimes are not split into kernel packs.
        kpack: None,
    }
}

fn read_code(root: &SysRoot, path: &str, b: &mut Bundled) {
    match fatbin::read(root, path) {
        Ok(c) => b.code.push(c),
        Err(Unread::Problem { problem }) => b.code_problems.push(problem),
        Err(Unread::NotCaptured) => {}
    }
}

/// The ROCm release an ollama runner directory names (`rocm_v7_2` → 7.2); `rocm` names none.
pub fn runner_release(name: &str) -> Option<RocmVersion> {
    let (major, minor) = name.strip_prefix("rocm_v")?.split_once('_')?;
    Some(RocmVersion {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        patch: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfs::write as touch;

    /// An uncompressed offload bundle: a host entry and device entries with empty bodies.
    fn bundle(targets: &[&str]) -> Vec<u8> {
        let ids: Vec<String> = targets
            .iter()
            .map(|t| format!("hipv4-amdgcn-amd-amdhsa--{t}"))
            .collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("host-x86_64-unknown-linux-gnu-", &[])];
        entries.extend(ids.iter().map(|id| (id.as_str(), &[][..])));
        crate::codeobject::bundle::write(&entries)
    }

    fn write_bytes(base: &std::path::Path, rel: &str, bytes: &[u8]) {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    #[test]
    fn ollama_runners_and_site_extensions_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let runner = "usr/lib/ollama/rocm_v7_2";
        write_bytes(
            b,
            &format!("{runner}/libggml-hip.so"),
            &bundle(&["gfx1100", "gfx1201"]),
        );
        touch(b, &format!("{runner}/libamdhip64.so.7"), "");
        touch(b, &format!("{runner}/librocblas.so.5"), "");
        for t in ["gfx1100", "gfx1201"] {
            touch(
                b,
                &format!("{runner}/rocblas/library/TensileLibrary_lazy_{t}.dat"),
                "",
            );
        }
        touch(
            b,
            &format!("{runner}/rocblas/library/Kernels.so-000-gfx1100.hsaco"),
            "",
        );
        touch(b, "usr/lib/ollama/cuda_v12/libggml-cuda.so", "");
        let site = "usr/local/lib/python3.12/dist-packages";
        touch(
            b,
            &format!("{site}/vllm-0.9.2+rocm700.dist-info/METADATA"),
            "",
        );
        touch(b, &format!("{site}/vllm/__init__.py"), "");
        write_bytes(
            b,
            &format!("{site}/vllm/_rocm_C.abi3.so"),
            &bundle(&["gfx942"]),
        );
        let source = Source::fixture(b).unwrap();
        let env = std::collections::BTreeMap::new();
        let (fw, _) = crate::facts::collect::<FrameworkFacts>(&source, &env);
        let (facts, problems) = crate::facts::collect::<BundledFacts>(&source, (&fw, &env));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.apps.len(), 2, "{facts:#?}");
        let ollama = &facts.apps[0];
        assert_eq!((ollama.name, ollama.kind), ("ollama", Kind::OllamaRunners));
        assert_eq!(ollama.dir, "/usr/lib/ollama/rocm_v7_2");
        assert_eq!(
            ollama.bundled.rocm.map(|v| (v.major, v.minor)),
            Some((7, 2))
        );
        assert_eq!(
            ollama
                .rocblas_lazy
                .as_ref()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            ["gfx1100", "gfx1201"]
        );
        assert!(ollama.bundled.has("rocblas") && ollama.bundled.has("amdhip64"));
        assert_eq!(ollama.bundled.code[0].targets, ["gfx1100", "gfx1201"]);
        let vllm = &facts.apps[1];
        assert_eq!((vllm.name, vllm.kind), ("vLLM", Kind::SiteExtensions));
        assert_eq!(vllm.dir, format!("/{site}"));
        assert_eq!(
            vllm.bundled.code[0].path,
            format!("/{site}/vllm/_rocm_C.abi3.so")
        );
        assert_eq!(vllm.bundled.code[0].targets, ["gfx942"]);
    }

    #[test]
    fn runner_directories_name_their_release() {
        assert_eq!(
            runner_release("rocm_v7_2"),
            Some(RocmVersion {
                major: 7,
                minor: 2,
                patch: None
            })
        );
        assert_eq!(runner_release("rocm"), None);
        assert_eq!(runner_release("rocm_v7"), None);
        assert_eq!(runner_release("cuda_v12"), None);
    }

    #[test]
    fn the_table_has_every_kind() {
        for kind in [
            Kind::OllamaRunners,
            Kind::GgmlHip,
            Kind::SiteExtensions,
            Kind::HomeVendorDirs,
            Kind::HomeTheRockDirs,
        ] {
            assert!(RUNTIMES.iter().any(|r| r.kind == kind), "{kind:?}");
        }
        assert!(RUNTIMES.iter().all(|r| r.source.starts_with("https://")));
    }
}
