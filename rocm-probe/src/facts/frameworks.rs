//! Layer 7: the Python frameworks installed (PyTorch, JAX, TensorFlow, vLLM, ONNX Runtime,
//! TheRock's ROCm wheels), what each was built for, and the ROCm libraries they bundle.
//!
//! Python is never run and nothing is imported: the probe finds site directories by their
//! conventional paths and reads what pip leaves on disk.
//! - Environments: `VIRTUAL_ENV`, `CONDA_PREFIX`, the `PYTHONPATH` entries, `~/.local`,
//!   `~/.pyenv/versions/*`, `~/{miniconda3,anaconda3,miniforge3}` (and their `envs/*`), the
//!   launchers' environments of [`launcher_venv`](crate::facts::launcher_venv),
//!   `/opt/conda` (and `envs/*`), and the system's `/usr/lib/python3/dist-packages`,
//!   `/usr{,/local}/lib{,64}/python3.*/{site,dist}-packages`. An environment's `lib` directory is
//!   listed once to find its `python3.*` directories; under the system prefixes, whose `lib`
//!   directories other layers list, `python3.6` … `python3.30` are probed by name.
//! - Per site directory, one listing: the `*.dist-info` / `*.egg-info` names give every
//!   distribution's name and version (`torch-2.4.1+rocm6.0.dist-info`); then, for the frameworks
//!   present only, `torch/version.py` (`__version__`, `hip`, `cuda`, `git_version`), the
//!   `METADATA` of the torch distribution, the `torch/lib` listing (bundled ROCm libraries, their
//!   versions from AMD's file names, `libtorch_hip.so`), the Tensile directories under it,
//!   `onnxruntime/capi` (execution providers), `vllm/_version.py`, and `_rocm_sdk_*/lib`; beside
//!   each library directory, the `.kpack` directory of multi-arch wheels ([`KpackDir`]).
//! - Per site directory, its editable installs' source trees ([`editable`]: `.pth` path lines,
//!   `*.egg-link`, `direct_url.json`), where the HIP extensions of an editable vLLM or AITER are.
//!
//! Every read goes through the [`SysRoot`] and is bounded (environments, site directories,
//! entries per listing). A site directory reached twice (a symlinked prefix, conda's
//! `python3.1` → `python3.10`, `PYTHONPATH` naming a site directory already found) is read once:
//! two directories with the same non-empty listing are taken to be the same one, and the second
//! path is kept in [`SiteDir::also`]. Unreadable or binary files are problems, kept in
//! [`Problems::frameworks`](crate::facts::Problems::frameworks).

use crate::msg;
use std::collections::{BTreeMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::fatbin::{self, FatBinary, Unread};
use crate::facts::install::RocmVersion;
use crate::facts::libraries::{HIPBLASLT_LIBRARY, KernelDir, ROCBLAS_LIBRARY, file_target};
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

pub mod editable;

/// The environment variables that name Python environments.
pub const ENV_VARS: [&str; 4] = ["VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "HOME"];
/// Debian's and Ubuntu's site directory for the distribution's own Python packages.
pub const DEBIAN_DIST_PACKAGES: &str = "/usr/lib/python3/dist-packages";
/// Debian's directory of the distribution's Python 3 (its presence means Python was captured).
pub const DEBIAN_PYTHON: &str = "/usr/lib/python3";
/// The system prefixes whose `lib`/`lib64` hold `python3.*` directories.
pub const SYSTEM_PREFIXES: [&str; 2] = ["/usr", "/usr/local"];
/// Where conda-based containers (rocm/pytorch images among them) put the base environment.
pub const CONDA_BASE: &str = "/opt/conda";
/// Conda installers' default directories under `$HOME`.
pub const HOME_CONDAS: [&str; 3] = ["miniconda3", "anaconda3", "miniforge3"];

/// The normalized name prefix of a multi-arch torch's device wheels (`amd-torch-device-gfx1151`;
/// ROCm/TheRock `.github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml`,
/// `--device-package-prefix amd-torch-device`).
pub const TORCH_DEVICE_PREFIX: &str = "amd_torch_device_";
/// The normalized name prefix of TheRock's ROCm device wheels (`rocm-sdk-device-gfx1151`;
/// ROCm/TheRock `build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py`).
pub const SDK_DEVICE_PREFIX: &str = "rocm_sdk_device_";
/// At most this many device extras of one `METADATA` are kept (TheRock lists about 30 targets).
const MAX_DEVICE_EXTRAS: usize = 256;
/// At most this many prefixes (environments) are looked at.
const MAX_PREFIXES: usize = 32;
/// At most this many site directories are listed.
const MAX_SITE_DIRS: usize = 64;
/// At most this many names of one site directory are looked at (a data-science environment has
/// a few thousand).
const MAX_SITE_ENTRIES: usize = 20_000;
/// The Python 3 minor versions probed under the system prefixes (3.6 is the oldest a supported
/// distribution ships; the upper end leaves room for releases to come).
const SYSTEM_PYTHON_MINORS: std::ops::RangeInclusive<u32> = 6..=30;
/// At most this many `python3.*` directories per prefix.
const MAX_PYTHONS: usize = 8;
/// At most this many `PYTHONPATH` entries and `envs/*` or pyenv versions per directory.
const MAX_LISTED_ENVS: usize = 16;
/// At most this many names of a library directory (`torch/lib` has ~100) or a Tensile
/// directory (~4000 per rocBLAS release) are looked at.
const MAX_LIB_ENTRIES: usize = 50_000;
/// At most this many lines of a `version.py` or `METADATA` header are parsed.
const MAX_LINES: usize = 4_000;

/// Libraries of a ROCm install recorded when a wheel bundles them, by stem
/// (`libamdhip64.so*` → `amdhip64`).
pub const BUNDLED_STEMS: [&str; 24] = [
    "amdhip64",
    "hsa-runtime64",
    "hsakmt",
    "amd_comgr",
    "hiprtc",
    "rocblas",
    "hipblas",
    "hipblaslt",
    "MIOpen",
    "rccl",
    "rocfft",
    "hipfft",
    "rocsparse",
    "hipsparse",
    "hipsparselt",
    "rocsolver",
    "hipsolver",
    "rocrand",
    "hiprand",
    "roctx64",
    "roctracer64",
    "rocm_smi64",
    "rocprofiler-register",
    "magma",
];

/// Bundled libraries that carry GPU code objects of their own (a fat binary per target), whose
/// paths are kept for code-object checks: `libtorch_hip.so`, rocBLAS, hipBLASLt, MIOpen, RCCL …
pub const DEVICE_CODE_STEMS: [&str; 12] = [
    "torch_hip",
    "c10_hip",
    "rocblas",
    "hipblaslt",
    "MIOpen",
    "rccl",
    "rocfft",
    "rocsparse",
    "hipsparselt",
    "rocsolver",
    "rocrand",
    "magma",
];

/// Distribution names (normalized: lower case, `-` and `.` → `_`) of TensorFlow's ROCm builds:
/// `tensorflow-rocm` (PyPI until ROCm 6.0, repo.radeon.com since 6.1) and `rocm-tensorflow`
/// (TheRock's wheels).
pub const TENSORFLOW_ROCM: [&str; 2] = ["tensorflow_rocm", "rocm_tensorflow"];
/// Distribution names of TensorFlow builds that are not ROCm builds.
pub const TENSORFLOW_OTHER: [&str; 4] = [
    "tensorflow",
    "tensorflow_cpu",
    "tensorflow_gpu",
    "tf_nightly",
];
/// Distribution names of ONNX Runtime.
pub const ONNXRUNTIME: [&str; 5] = [
    "onnxruntime",
    "onnxruntime_rocm",
    "onnxruntime_migraphx",
    "onnxruntime_gpu",
    "onnxruntime_training",
];
/// Distribution names of Triton builds that PyTorch's ROCm wheels depend on.
pub const TRITON: [&str; 3] = ["pytorch_triton_rocm", "triton_rocm", "triton"];

/// One installed distribution, from its `*.dist-info` (or `*.egg-info`) directory name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dist {
    /// The name as written in the directory name (`torch`, `tensorflow_rocm`).
    pub name: String,
    /// The version as written in the directory name (`2.4.1+rocm6.0`); `METADATA`'s `Version`
    /// when that was read.
    pub version: String,
    /// The `*.dist-info` directory.
    pub path: String,
}

impl Dist {
    /// The local version label after `+` (`rocm6.0`, `cpu`, `cu121`).
    pub fn local(&self) -> Option<&str> {
        local_tag(&self.version)
    }
}

/// What a framework build targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Build {
    /// A ROCm (HIP) build.
    Rocm,
    /// A CUDA build.
    Cuda,
    /// A CPU-only build.
    Cpu,
    /// Another accelerator (XPU, …).
    Other,
    /// Nothing says (no `version.py`, no local version label).
    Unknown,
}

impl Build {
    /// `ROCm`, `CUDA`, `CPU-only`, …
    pub fn word(self) -> &'static str {
        match self {
            Build::Rocm => "ROCm",
            Build::Cuda => "CUDA",
            Build::Cpu => "CPU-only",
            Build::Other => "non-ROCm accelerator",
            Build::Unknown => "unknown",
        }
    }
}

/// The assignments of a generated `version.py` (`torch/version.py`, `vllm/_version.py`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VersionPy {
    /// The file.
    pub path: String,
    /// Top-level assignments of string literals (`Some`) and of `None` (`None`), by name; other
    /// values (`debug = False`, tuples) are left out.
    pub values: BTreeMap<String, Option<String>>,
}

impl VersionPy {
    /// The string assigned to `name`, when it is one (not `None`, not absent, not empty).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.as_deref())
            .filter(|s| !s.is_empty())
    }

    /// Whether `name` is assigned at all (a string or `None`).
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }
}

/// One bundled library, by its file names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundledLib {
    /// The stem (`rocblas`, `amdhip64`).
    pub name: String,
    /// Its files in the library directory (`librocblas.so.4`, `libamdhip64.so`).
    pub files: Vec<String>,
}

/// ROCm libraries a wheel carries in its own library directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bundled {
    /// The directory (`…/site-packages/torch/lib`).
    pub lib_dir: String,
    /// The ROCm libraries present, in [`BUNDLED_STEMS`] order.
    pub libs: Vec<BundledLib>,
    /// The ROCm release the file names encode (`librocblas.so.4.2.60200` → 6.2.0), when one does.
    pub rocm: Option<RocmVersion>,
    /// The file the release came from.
    pub rocm_source: Option<String>,
    /// Absolute paths of the bundled libraries that carry GPU code objects of their own
    /// (`libtorch_hip.so`, `librocblas.so*`, `libMIOpen.so*`, … see [`DEVICE_CODE_STEMS`]).
    pub device_code: Vec<String>,
    /// The GPU code of each library in `device_code` (its most specific file per stem), when
    /// read.
    pub code: Vec<FatBinary>,
    /// Why a library's GPU code was not read (empty stand-ins of a fixture are not listed).
    pub code_problems: Vec<Problem>,
    /// rocBLAS's Tensile directory (`<lib_dir>/rocblas/library`), when it exists.
    pub rocblas: Option<KernelDir>,
    /// hipBLASLt's Tensile directory (`<lib_dir>/hipblaslt/library`), when it exists.
    pub hipblaslt: Option<KernelDir>,
    /// The kernel packs beside the library directory (`<lib_dir>/../.kpack`), when the directory
    /// exists: where a multi-arch ("kpack") wheel's device wheels put the GPU code its host
    /// libraries no longer carry.
    pub kpack: Option<KpackDir>,
}

/// A `.kpack` directory of TheRock's multi-arch wheels.
///
/// The host wheel carries no GPU code; each device wheel (`amd-torch-device-<target>`,
/// `rocm-sdk-device-<target>`) overlays archives named `<group>_<target>.kpack` into the host
/// package's `.kpack/`: `torch/.kpack/torch_gfx1151.kpack` (ROCm/rocm-systems
/// `shared/kpack/python/rocm_kpack/wheel_splitter.py`, `_create_device_wheel`),
/// `_rocm_sdk_libraries/.kpack/blas_lib_gfx942.kpack` (ROCm/TheRock
/// `build_tools/_therock_utils/artifact_builder.py`, `.kpack/{artifact}_{component}_*.kpack`).
/// The target keeps its feature suffix (`torch_gfx90a:xnack+.kpack`, ROCm/TheRock#7081).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KpackDir {
    /// The directory.
    pub dir: String,
    /// Its archives, in listing order.
    pub archives: Vec<KpackArchive>,
    /// Whether it exists but could not be listed (its problem is kept): nothing is known of
    /// its archives.
    pub unread: bool,
}

/// One `<group>_<target>.kpack` archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KpackArchive {
    /// The file name.
    pub file: String,
    /// What it packs (`torch`, `blas_lib`).
    pub group: String,
    /// The target it packs for, as named (`gfx1151`, `gfx90a:xnack+`, `gfx11-generic`).
    pub target: String,
}

impl KpackDir {
    /// The targets of the archives of one group, as named.
    pub fn targets(&self, group: &str) -> Vec<&str> {
        self.archives
            .iter()
            .filter(|a| a.group == group)
            .map(|a| a.target.as_str())
            .collect()
    }
}

/// `.kpack` beside a library directory.
fn kpack_path(lib_dir: &str) -> String {
    let package = lib_dir.rsplit_once('/').map_or(lib_dir, |(p, _)| p);
    format!("{package}/.kpack")
}

/// `torch_gfx90a:xnack+.kpack` → (`torch`, `gfx90a:xnack+`); `blas_lib_gfx1151.kpack` →
/// (`blas_lib`, `gfx1151`). `None` for other names (the `.kpm` manifests).
pub fn kpack_archive(file: &str) -> Option<(String, String)> {
    let stem = file.strip_suffix(".kpack")?;
    let at = stem.rfind("_gfx")?;
    let (group, target) = (&stem[..at], &stem[at + 1..]);
    if group.is_empty() || target.len() <= 3 {
        return None;
    }
    Some((group.to_owned(), target.to_owned()))
}

impl Bundled {
    /// Where the kernel packs of a multi-arch wheel are, whether or not they exist: `.kpack`
    /// beside the library directory (`torch/lib` → `torch/.kpack`).
    pub fn kpack_path(&self) -> String {
        kpack_path(&self.lib_dir)
    }

    /// Whether a library with this stem is bundled.
    pub fn has(&self, stem: &str) -> bool {
        self.libs.iter().any(|l| l.name == stem)
    }

    /// Whether the wheel carries its own HIP runtime (and so does not load the system's).
    pub fn has_runtime(&self) -> bool {
        self.has("amdhip64") || self.has("hsa-runtime64")
    }

    /// The bundled file names, comma-separated, for evidence.
    pub fn files(&self) -> String {
        self.libs
            .iter()
            .flat_map(|l| l.files.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// PyTorch in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Torch {
    /// The package directory (`…/site-packages/torch`).
    pub dir: String,
    /// The version: `version.py`'s `__version__`, else `METADATA`'s, else the dist-info name's.
    pub version: Option<String>,
    /// `torch/version.py`, when readable.
    pub version_py: Option<VersionPy>,
    /// The `torch-*.dist-info` directory (with `METADATA`'s version when read).
    pub dist: Option<Dist>,
    /// What it was built for.
    pub build: Build,
    /// The ROCm release a ROCm build was made for: from the local version label
    /// (`+rocm6.2.4`), else from `hip` in `version.py` (`6.0.32830-d62f6a171` → 6.0).
    pub rocm: Option<RocmVersion>,
    /// The file [`Torch::rocm`] came from (`torch/version.py`, else the dist-info directory).
    pub rocm_source: Option<String>,
    /// What in it says so (`local version label +rocm6.0`, `hip = '6.0.32830-d62f6a171'`).
    pub rocm_detail: Option<crate::i18n::Text>,
    /// The ROCm libraries in `torch/lib`, when any.
    pub bundled: Option<Bundled>,
    /// Absolute path of `torch/lib/libtorch_hip.so`, when present: the library holding
    /// PyTorch's own GPU kernels.
    pub libtorch_hip: Option<String>,
    /// The Triton distribution next to it (`pytorch_triton_rocm`, `triton`), when any.
    pub triton: Option<Dist>,
    /// The targets its `METADATA` offers device extras for (`Provides-Extra: device-gfx1151` →
    /// `gfx1151`; `device-all` left out): only a multi-arch host wheel has them (ROCm/rocm-systems
    /// `shared/kpack/python/rocm_kpack/wheel_splitter.py`, `_rewrite_host_metadata`).
    pub device_extras: Vec<String>,
    /// The device wheels of a multi-arch torch installed beside it (`amd_torch_device_*`).
    pub device_dists: Vec<Dist>,
}

impl Torch {
    /// Whether this is a multi-arch host wheel, whose GPU code comes from device wheels: it
    /// offers device extras, or device wheels or kernel packs are installed for it.
    pub fn is_kpack(&self) -> bool {
        !self.device_extras.is_empty()
            || !self.device_dists.is_empty()
            || self.bundled.as_ref().is_some_and(|b| b.kpack.is_some())
    }
}

/// One JAX plugin distribution (`jax_rocm60_plugin`, `jax_rocm7_pjrt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JaxPlugin {
    /// The distribution.
    pub dist: Dist,
    /// The ROCm major version its name carries (`rocm60` → 6, `rocm7` → 7).
    pub rocm_major: Option<u32>,
}

/// JAX in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Jax {
    /// `jax`, when installed.
    pub jax: Option<Dist>,
    /// `jaxlib`, when installed (ROCm/jax's own releases carry `+rocm611`-style labels).
    pub jaxlib: Option<Dist>,
    /// The ROCm plugins (`jax_rocm*_plugin`, `jax_rocm*_pjrt`).
    pub plugins: Vec<JaxPlugin>,
}

impl Jax {
    /// The ROCm major version of the plugins (or of jaxlib's label), when one is known.
    pub fn rocm_major(&self) -> Option<u32> {
        self.plugins.iter().find_map(|p| p.rocm_major).or_else(|| {
            self.jaxlib
                .as_ref()
                .and_then(|d| d.local())
                .and_then(rocm_from_tag)
                .map(|v| v.major)
        })
    }

    /// Whether anything ROCm-specific is installed.
    pub fn is_rocm(&self) -> bool {
        self.rocm_major().is_some()
    }
}

/// TensorFlow in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorFlow {
    /// The TensorFlow distributions (`tensorflow_rocm`, `tensorflow`, …).
    pub dists: Vec<Dist>,
    /// Whether one of them is a ROCm build ([`TENSORFLOW_ROCM`]).
    pub rocm_build: bool,
    /// The ROCm release a PyPI `tensorflow-rocm` encodes in its fourth number
    /// (`2.14.0.600` → 6.0.0), when it does.
    pub rocm: Option<RocmVersion>,
}

impl TensorFlow {
    /// The ROCm build's distribution, else the first.
    pub fn main(&self) -> Option<&Dist> {
        self.dists
            .iter()
            .find(|d| TENSORFLOW_ROCM.contains(&normalize(&d.name).as_str()))
            .or_else(|| self.dists.first())
    }
}

/// vLLM in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vllm {
    /// The distribution.
    pub dist: Option<Dist>,
    /// `vllm/_version.py`, when readable.
    pub version_py: Option<VersionPy>,
    /// The ROCm release its version label names (`+rocm624` → 6.2.4), when it does.
    pub rocm: Option<RocmVersion>,
    /// The extension modules in the package directory (`_C.abi3.so`, `_rocm_C.abi3.so`).
    pub modules: Vec<String>,
}

/// Which GPU platform a vLLM was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VllmBuild {
    /// A `+rocm…` label, or the `_rocm_C` module.
    Rocm,
    /// A `+cu…` label, or a release from 0.7 on with `_C` and without `_rocm_C`: the wheels on
    /// PyPI (`cp38-abi3`) are CUDA builds, unlabelled.
    Cuda,
    /// A `+cpu` label.
    Cpu,
    /// Nothing tells (no modules listed, or a release before `_rocm_C` had its name).
    Unknown,
}

impl Vllm {
    /// The platform it was built for. vLLM's `setup.py` labels non-default builds
    /// (`+rocm722`, `+cpu`, `+cu126`, after a `g<hash>.` of a dev build) and builds the
    /// extension `vllm._rocm_C` for ROCm only (beside `_C` and `_moe_C` of every GPU build).
    pub fn build(&self) -> VllmBuild {
        let label = self.version().and_then(local_tag).unwrap_or_default();
        let parts: Vec<&str> = label.split(['.', '_', '-']).collect();
        if self.rocm.is_some() || parts.iter().any(|p| p.starts_with("rocm")) {
            return VllmBuild::Rocm;
        }
        if self.modules.iter().any(|m| m.starts_with("_rocm_C.")) {
            return VllmBuild::Rocm;
        }
        if parts.contains(&"cpu") {
            return VllmBuild::Cpu;
        }
        let cuda_label = |p: &&str| {
            p.strip_prefix("cu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        if parts.iter().any(cuda_label) {
            return VllmBuild::Cuda;
        }
        // `_rocm_C` is named so since vLLM 0.6.2; from 0.7 on its absence is decisive.
        let release: Vec<u32> = self
            .version()
            .unwrap_or_default()
            .split(['.', '+'])
            .take(2)
            .map_while(|p| p.parse().ok())
            .collect();
        let since_rocm_c = release.len() == 2 && (release[0], release[1]) >= (0, 7);
        if since_rocm_c && self.modules.iter().any(|m| m.starts_with("_C.")) {
            return VllmBuild::Cuda;
        }
        VllmBuild::Unknown
    }

    /// `_version.py`'s `__version__`, else the distribution's.
    pub fn version(&self) -> Option<&str> {
        self.version_py
            .as_ref()
            .and_then(|v| v.get("__version__").or_else(|| v.get("version")))
            .or(self.dist.as_ref().map(|d| d.version.as_str()))
    }
}

/// ONNX Runtime in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OnnxRuntime {
    /// The distributions ([`ONNXRUNTIME`]).
    pub dists: Vec<Dist>,
    /// `onnxruntime/capi`.
    pub capi_dir: String,
    /// The execution-provider libraries there (`libonnxruntime_providers_rocm.so`, `…_migraphx.so`).
    pub providers: Vec<String>,
}

impl OnnxRuntime {
    /// Whether a ROCm or MIGraphX execution provider is present.
    pub fn has_amd_provider(&self) -> bool {
        self.providers
            .iter()
            .any(|p| p.contains("_rocm") || p.contains("_migraphx"))
    }
}

/// TheRock's ROCm wheels (`rocm`, `rocm-sdk-core`, `rocm-sdk-libraries-*`) in one site directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RocmSdk {
    /// The distributions.
    pub dists: Vec<Dist>,
    /// The ROCm release: `rocm-sdk-core`'s version (`7.9.0rc1` → 7.9.0), else `rocm`'s.
    pub rocm: Option<RocmVersion>,
    /// The libraries of each `_rocm_sdk_*/lib` directory.
    pub bundled: Vec<Bundled>,
}

impl RocmSdk {
    /// Whether these are multi-arch wheels, whose GPU code comes from `rocm-sdk-device-<target>`
    /// wheels: the architecture-neutral `rocm-sdk-libraries` (a per-family release names it
    /// `rocm-sdk-libraries-<family>`), a device wheel, or a `.kpack` directory (ROCm/TheRock
    /// `docs/packaging/python_packaging.md`, "Kpack-split packaging").
    pub fn is_kpack(&self) -> bool {
        self.kpack_dists().next().is_some() || self.bundled.iter().any(|b| b.kpack.is_some())
    }

    /// The distributions that make these wheels multi-arch: `rocm-sdk-libraries` and the
    /// `rocm-sdk-device-<target>` wheels.
    pub fn kpack_dists(&self) -> impl Iterator<Item = &Dist> {
        self.dists.iter().filter(|d| {
            let n = normalize(&d.name);
            n == "rocm_sdk_libraries" || n.starts_with(SDK_DEVICE_PREFIX)
        })
    }

    /// The targets of the `rocm-sdk-device-<target>` wheels installed.
    pub fn device_targets(&self) -> Vec<String> {
        self.dists
            .iter()
            .filter_map(|d| {
                normalize(&d.name)
                    .strip_prefix(SDK_DEVICE_PREFIX)
                    .filter(|t| t.starts_with("gfx"))
                    .map(str::to_owned)
            })
            .collect()
    }
}

/// One site directory and the frameworks in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteDir {
    /// The directory.
    pub path: String,
    /// How it was found: `VIRTUAL_ENV`, `CONDA_PREFIX`, `PYTHONPATH`, `~/.local`, `pyenv`,
    /// `conda`, `system`.
    pub origin: String,
    /// Other paths with the same listing (the same directory reached twice).
    pub also: Vec<String>,
    /// How many entries it has (counted up to the bound).
    pub entries: usize,
    /// PyTorch.
    pub torch: Option<Torch>,
    /// JAX.
    pub jax: Option<Jax>,
    /// TensorFlow.
    pub tensorflow: Option<TensorFlow>,
    /// vLLM.
    pub vllm: Option<Vllm>,
    /// ONNX Runtime.
    pub onnxruntime: Option<OnnxRuntime>,
    /// TheRock's ROCm wheels.
    pub rocm_sdk: Option<RocmSdk>,
    /// The `amdsmi` Python package pip installed here (its `*.dist-info`), when there is one:
    /// layer 5 compares its release with the ROCm the frameworks load.
    pub amdsmi: Option<Dist>,
    /// The source trees its editable installs import from ([`editable::roots`]): their packages
    /// (and HIP extensions) are there, not here.
    pub editable: Vec<String>,
}

impl SiteDir {
    /// Whether any framework of layer 7 is here.
    pub fn any(&self) -> bool {
        self.torch.is_some()
            || self.jax.is_some()
            || self.tensorflow.is_some()
            || self.vllm.is_some()
            || self.onnxruntime.is_some()
            || self.rocm_sdk.is_some()
    }

    /// `path (origin)`, for summaries.
    pub fn describe(&self) -> String {
        // The other origins are names: variables, directories, tools.
        let origin = match self.origin.as_str() {
            "system" => msg!("facts.origin-system"),
            other => other.to_owned(),
        };
        msg!("facts.site-origin", path = self.path, origin)
    }
}

/// Layer 7 facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FrameworkFacts {
    /// Whether Python environments were captured: always in live mode; in a fixture, when it has
    /// `usr/lib/python3`, a `python3.*` directory in a prefix looked at (`usr/lib`,
    /// `usr/local/lib`, an environment), an `opt/conda`, or an environment variable naming an
    /// environment (`VIRTUAL_ENV`, `CONDA_PREFIX`, `PYTHONPATH`).
    pub captured: bool,
    /// Every site directory listed, in the order looked at (duplicates left out).
    pub scanned: Vec<String>,
    /// The site directories that hold a framework of layer 7, in the same order.
    pub sites: Vec<SiteDir>,
    /// Whether a bound was reached (prefixes, site directories or entries left out).
    pub truncated: bool,
}

impl Collect for FrameworkFacts {
    /// The environment variables already read (`PlatformFacts::env`).
    type Needs<'a> = &'a BTreeMap<String, String>;
    type Output = Self;

    /// Reads the Python environments (their unreadable or malformed files are reported by
    /// layer 7).
    fn collect(
        source: &Source,
        env: &BTreeMap<String, String>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let mut c = Collector {
            root,
            problems,
            facts: Self::default(),
            prefixes: 0,
            pythons: 0,
            listed: HashSet::new(),
            seen: Vec::new(),
        };
        let sites = c.site_dirs(env);
        // Probed in live mode too, so that a snapshot records the directory.
        let debian = root.exists(DEBIAN_PYTHON);
        let captured = !root.is_fixture()
            || c.pythons > 0
            || debian
            || root.exists(CONDA_BASE)
            || ["VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH"]
                .iter()
                .any(|v| env.get(*v).is_some_and(|s| !s.is_empty()));
        if !captured {
            return Self::default();
        }
        c.facts.captured = true;
        // Most candidates do not exist (dist-packages vs site-packages); the attempts are
        // bounded as well as the listings.
        for (path, origin) in sites.into_iter().take(MAX_SITE_DIRS * 4) {
            if c.facts.scanned.len() >= MAX_SITE_DIRS {
                c.facts.truncated = true;
                break;
            }
            c.site(&path, &origin);
        }
        c.facts
    }
}

impl FrameworkFacts {
    /// The site directories with a PyTorch.
    pub fn torches(&self) -> impl Iterator<Item = (&SiteDir, &Torch)> {
        self.sites
            .iter()
            .filter_map(|s| s.torch.as_ref().map(|t| (s, t)))
    }

    /// The wheels that carry a ROCm runtime of their own (HIP or ROCr in their library
    /// directory): PyTorch's `torch/lib` and TheRock's `_rocm_sdk_*/lib`. A Python program of
    /// that environment runs on the GPU with no system install; nothing outside it can use them.
    pub fn wheel_runtimes(&self) -> Vec<WheelRuntime<'_>> {
        let mut out = Vec::new();
        for site in &self.sites {
            if let Some(t) = &site.torch
                && let Some(b) = t.bundled.as_ref().filter(|b| b.has_runtime())
            {
                out.push(WheelRuntime {
                    site,
                    wheel: Wheel::Torch,
                    version: t.version.as_deref(),
                    bundled: b,
                });
            }
            if let Some(sdk) = &site.rocm_sdk {
                for b in sdk.bundled.iter().filter(|b| b.has_runtime()) {
                    out.push(WheelRuntime {
                        site,
                        wheel: Wheel::RocmSdk,
                        version: None,
                        bundled: b,
                    });
                }
            }
        }
        out
    }
}

/// Which wheel carries a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wheel {
    /// PyTorch for ROCm (`torch/lib`).
    Torch,
    /// TheRock's `rocm-sdk-*` wheels (`_rocm_sdk_*/lib`).
    RocmSdk,
}

/// A ROCm runtime a wheel carries ([`FrameworkFacts::wheel_runtimes`]).
#[derive(Debug, Clone, Copy)]
pub struct WheelRuntime<'a> {
    /// The site directory holding the wheel.
    pub site: &'a SiteDir,
    /// The wheel.
    pub wheel: Wheel,
    /// Its version, when read (PyTorch's).
    pub version: Option<&'a str>,
    /// Its library directory and the ROCm libraries in it.
    pub bundled: &'a Bundled,
}

struct Collector<'a> {
    root: &'a SysRoot,
    problems: &'a mut Vec<Problem>,
    facts: FrameworkFacts,
    /// Prefixes looked at so far.
    prefixes: usize,
    /// `python3.*` directories found so far.
    pythons: usize,
    /// Site directory paths already queued.
    listed: HashSet<String>,
    /// Listing hashes of the site directories read, with the index into `facts.sites` (or
    /// `None` for one without frameworks).
    seen: Vec<(u64, Option<usize>)>,
}

impl Collector<'_> {
    /// A bounded listing; a missing directory is `None` without a problem.
    fn list(&mut self, dir: &str, max: usize) -> Option<Vec<String>> {
        let mut names = optional(self.root.read_dir(dir), self.problems)?;
        if names.len() > max {
            names.truncate(max);
            self.facts.truncated = true;
        }
        Some(names)
    }

    /// The candidate site directories, in order, without duplicate paths.
    fn site_dirs(&mut self, env: &BTreeMap<String, String>) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let value = |name: &str| {
            env.get(name)
                .map(|v| v.trim_end_matches('/').to_owned())
                .filter(|v| v.starts_with('/'))
        };
        if let Some(venv) = value("VIRTUAL_ENV") {
            self.prefix(&venv, "VIRTUAL_ENV", &mut out);
        }
        if let Some(conda) = value("CONDA_PREFIX") {
            self.prefix(&conda, "CONDA_PREFIX", &mut out);
        }
        if let Some(path) = env.get("PYTHONPATH") {
            let entries: Vec<&str> = path
                .split(':')
                .map(|e| e.trim_end_matches('/'))
                .filter(|e| e.starts_with('/'))
                .collect();
            self.facts.truncated |= entries.len() > MAX_LISTED_ENVS;
            for entry in entries.into_iter().take(MAX_LISTED_ENVS) {
                push(&mut out, entry.to_owned(), "PYTHONPATH");
            }
        }
        if let Some(home) = value("HOME").filter(|h| h != "/") {
            self.prefix(&format!("{home}/.local"), "~/.local", &mut out);
            let pyenv = format!("{home}/.pyenv/versions");
            if let Some(versions) = self.list(&pyenv, MAX_SITE_ENTRIES) {
                self.facts.truncated |= versions.len() > MAX_LISTED_ENVS;
                for v in versions.iter().take(MAX_LISTED_ENVS) {
                    self.prefix(&format!("{pyenv}/{v}"), "pyenv", &mut out);
                }
            }
            for conda in HOME_CONDAS {
                let base = format!("{home}/{conda}");
                if self.root.exists(&base) {
                    self.conda(&base, &mut out);
                }
            }
            // Launchers' own environments (data/launcher_venvs.toml), active or not.
            let (venvs, truncated) =
                crate::facts::launcher_venv::venvs(self.root, &home, self.problems);
            self.facts.truncated |= truncated;
            for (venv, launcher) in venvs {
                self.prefix(&venv, launcher, &mut out);
            }
        }
        if self.root.exists(CONDA_BASE) {
            self.conda(CONDA_BASE, &mut out);
        }
        push(&mut out, DEBIAN_DIST_PACKAGES.to_owned(), "system");
        for prefix in SYSTEM_PREFIXES {
            self.prefix(prefix, "system", &mut out);
        }
        out.retain(|(p, _)| self.listed.insert(p.clone()));
        out
    }

    /// A conda installation: its base environment and its `envs/*`.
    fn conda(&mut self, base: &str, out: &mut Vec<(String, String)>) {
        self.prefix(base, "conda", out);
        let envs = format!("{base}/envs");
        if let Some(names) = self.list(&envs, MAX_SITE_ENTRIES) {
            self.facts.truncated |= names.len() > MAX_LISTED_ENVS;
            for name in names.iter().take(MAX_LISTED_ENVS) {
                self.prefix(&format!("{envs}/{name}"), "conda", out);
            }
        }
    }

    /// The site directories of one prefix: `lib/python3.N/site-packages` (and, for the system
    /// prefixes, `dist-packages` and `lib64`).
    fn prefix(&mut self, prefix: &str, origin: &str, out: &mut Vec<(String, String)>) {
        if self.prefixes >= MAX_PREFIXES {
            self.facts.truncated = true;
            return;
        }
        self.prefixes += 1;
        let system = SYSTEM_PREFIXES.contains(&prefix);
        let libs: &[&str] = if system { &["lib", "lib64"] } else { &["lib"] };
        for lib in libs {
            let lib_dir = format!("{prefix}/{lib}");
            let names = if system {
                // Other layers list the system library directories (LLVM under /usr/lib, a
                // distribution's ROCm in /usr/lib64); a run lists each directory once
                // (ARCHITECTURE.md §9), so the Python versions are probed by name instead.
                SYSTEM_PYTHON_MINORS
                    .map(|m| format!("python3.{m}"))
                    .filter(|n| self.root.exists(&format!("{lib_dir}/{n}")))
                    .collect()
            } else {
                let Some(names) = self.list(&lib_dir, MAX_SITE_ENTRIES) else {
                    continue;
                };
                names
            };
            let mut pythons: Vec<&String> = names.iter().filter(|n| is_python_dir(n)).collect();
            self.pythons += pythons.len();
            // Newest first, so that conda's `python3.1` (a link to `python3.10`) comes after
            // the directory it names and is the one reported as the duplicate.
            pythons.sort_by_key(|n| {
                std::cmp::Reverse(n.trim_start_matches("python3.").parse::<u32>().unwrap_or(0))
            });
            if pythons.len() > MAX_PYTHONS {
                pythons.truncate(MAX_PYTHONS);
                self.facts.truncated = true;
            }
            for py in pythons {
                let kinds: &[&str] = if system {
                    // Debian puts pip's installs in dist-packages, Fedora in site-packages.
                    &["dist-packages", "site-packages"]
                } else {
                    &["site-packages"]
                };
                for kind in kinds {
                    push(out, format!("{lib_dir}/{py}/{kind}"), origin);
                }
            }
        }
    }

    /// Lists one site directory and reads the frameworks in it.
    fn site(&mut self, path: &str, origin: &str) {
        let Some(names) = self.list(path, MAX_SITE_ENTRIES) else {
            return;
        };
        if names.is_empty() {
            return;
        }
        let mut hasher = DefaultHasher::new();
        names.hash(&mut hasher);
        let hash = hasher.finish();
        if let Some((_, index)) = self.seen.iter().find(|(h, _)| *h == hash) {
            if let Some(site) = index.and_then(|i| self.facts.sites.get_mut(i)) {
                site.also.push(path.to_owned());
            }
            return;
        }
        self.facts.scanned.push(path.to_owned());
        let dists: Vec<Dist> = names
            .iter()
            .filter_map(|n| dist_from_dir_name(n).map(|(name, version)| (n, name, version)))
            .map(|(n, name, version)| Dist {
                name,
                version,
                path: format!("{path}/{n}"),
            })
            .collect();
        let has = |name: &str| names.iter().any(|n| n == name);
        let find = |wanted: &[&str]| -> Vec<Dist> {
            dists
                .iter()
                .filter(|d| wanted.contains(&normalize(&d.name).as_str()))
                .cloned()
                .collect()
        };
        let torch = if has("torch") || !find(&["torch"]).is_empty() {
            let device_dists = dists
                .iter()
                .filter(|d| normalize(&d.name).starts_with(TORCH_DEVICE_PREFIX))
                .cloned()
                .collect();
            Some(self.torch(
                path,
                has("torch"),
                find(&["torch"]).into_iter().next(),
                (find(&TRITON), device_dists),
            ))
        } else {
            None
        };
        let jax = self.jax(&dists);
        let tensorflow = {
            let mut tf = find(&TENSORFLOW_ROCM);
            tf.extend(find(&TENSORFLOW_OTHER));
            (!tf.is_empty()).then(|| {
                let rocm_build = tf
                    .iter()
                    .any(|d| TENSORFLOW_ROCM.contains(&normalize(&d.name).as_str()));
                let rocm = tf
                    .iter()
                    .filter(|d| TENSORFLOW_ROCM.contains(&normalize(&d.name).as_str()))
                    .find_map(|d| tensorflow_rocm_release(&d.version));
                TensorFlow {
                    dists: tf,
                    rocm_build,
                    rocm,
                }
            })
        };
        let vllm = {
            let dist = find(&["vllm"]).into_iter().next();
            if dist.is_some() || has("vllm") {
                let version_py = has("vllm")
                    .then(|| self.version_py(&format!("{path}/vllm/_version.py")))
                    .flatten();
                let modules = if has("vllm") {
                    self.list(&format!("{path}/vllm"), MAX_LIB_ENTRIES)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|n| n.ends_with(".so"))
                        .collect()
                } else {
                    Vec::new()
                };
                let mut v = Vllm {
                    dist,
                    version_py,
                    rocm: None,
                    modules,
                };
                v.rocm = v.version().and_then(local_tag).and_then(rocm_from_tag);
                Some(v)
            } else {
                None
            }
        };
        let onnxruntime = {
            let dists = find(&ONNXRUNTIME);
            if dists.is_empty() && !has("onnxruntime") {
                None
            } else {
                let capi_dir = format!("{path}/onnxruntime/capi");
                let providers = self
                    .list(&capi_dir, MAX_LIB_ENTRIES)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|n| n.starts_with("libonnxruntime_providers_") && n.contains(".so"))
                    .collect();
                Some(OnnxRuntime {
                    dists,
                    capi_dir,
                    providers,
                })
            }
        };
        let rocm_sdk = self.rocm_sdk(path, &names, &dists);
        let (editable, truncated) = editable::roots(self.root, path, &names, self.problems);
        self.facts.truncated |= truncated;
        let site = SiteDir {
            path: path.to_owned(),
            origin: origin.to_owned(),
            also: Vec::new(),
            entries: names.len(),
            torch,
            jax,
            tensorflow,
            vllm,
            onnxruntime,
            rocm_sdk,
            amdsmi: find(&["amdsmi"]).into_iter().next(),
            editable,
        };
        let index = site.any().then_some(self.facts.sites.len());
        if site.any() {
            self.facts.sites.push(site);
        }
        self.seen.push((hash, index));
    }

    /// `triton`: the Triton distributions beside it; `device_dists`: a multi-arch torch's device
    /// wheels installed beside it.
    fn torch(
        &mut self,
        site: &str,
        has_dir: bool,
        dist: Option<Dist>,
        (triton, device_dists): (Vec<Dist>, Vec<Dist>),
    ) -> Torch {
        let dir = format!("{site}/torch");
        let version_py = has_dir
            .then(|| self.version_py(&format!("{dir}/version.py")))
            .flatten();
        let mut device_extras = Vec::new();
        let dist = dist.map(|mut d| {
            let metadata = format!("{}/METADATA", d.path);
            if let Some(text) = optional(self.root.read_text(&metadata), self.problems) {
                match parse_metadata(&text) {
                    Some(m) => {
                        d.version = m.version;
                        device_extras = m.device_extras;
                    }
                    None => self.problems.push(Problem::new(
                        metadata,
                        crate::text!("facts.no-name-version"),
                    )),
                }
            }
            d
        });
        let version = version_py
            .as_ref()
            .and_then(|v| v.get("__version__"))
            .map(str::to_owned)
            .or_else(|| dist.as_ref().map(|d| d.version.clone()));
        let lib_dir = format!("{dir}/lib");
        let bundled = if has_dir {
            self.bundled(&lib_dir)
        } else {
            None
        };
        let libtorch_hip = bundled
            .as_ref()
            .and_then(|b| {
                b.device_code
                    .iter()
                    .find(|p| p.ends_with("/libtorch_hip.so"))
            })
            .cloned();
        let tag = version.as_deref().and_then(local_tag);
        let hip = version_py.as_ref().and_then(|v| v.get("hip"));
        let build = classify(tag, version_py.as_ref(), bundled.as_ref());
        // The file the version (and so its label) was read from.
        let version_file = if version_py
            .as_ref()
            .and_then(|v| v.get("__version__"))
            .is_some()
        {
            Some(format!("{dir}/version.py"))
        } else {
            dist.as_ref().map(|d| d.path.clone())
        };
        let (rocm, rocm_source, rocm_detail) = if build == Build::Rocm {
            match (tag.and_then(rocm_from_tag), hip.and_then(hip_release)) {
                (Some(v), _) => (
                    Some(v),
                    version_file,
                    Some(crate::text!(
                        "facts.local-version-label",
                        tag = tag.unwrap_or("")
                    )),
                ),
                (None, Some(v)) => (
                    Some(v),
                    Some(format!("{dir}/version.py")),
                    Some(crate::text!(
                        "facts.hip-version-line",
                        hip = hip.unwrap_or("")
                    )),
                ),
                (None, None) => (None, None, None),
            }
        } else {
            (None, None, None)
        };
        Torch {
            dir,
            version,
            version_py,
            dist,
            build,
            rocm,
            rocm_source,
            rocm_detail,
            bundled,
            libtorch_hip,
            triton: triton.into_iter().next(),
            device_extras,
            device_dists,
        }
    }

    fn version_py(&mut self, path: &str) -> Option<VersionPy> {
        let text = optional(self.root.read_text(path), self.problems)?;
        Some(VersionPy {
            path: path.to_owned(),
            values: parse_version_py(&text),
        })
    }

    /// The ROCm libraries of a wheel's library directory; `None` when it has none.
    fn bundled(&mut self, lib_dir: &str) -> Option<Bundled> {
        let names = self.list(lib_dir, MAX_LIB_ENTRIES)?;
        let libs: Vec<BundledLib> = BUNDLED_STEMS
            .iter()
            .filter_map(|&stem| {
                let files: Vec<String> = names
                    .iter()
                    .filter(|n| crate::facts::libraries::is_soname_of(n, stem))
                    .cloned()
                    .collect();
                (!files.is_empty()).then(|| BundledLib {
                    name: stem.to_owned(),
                    files,
                })
            })
            .collect();
        let device_code: Vec<String> = names
            .iter()
            .filter(|n| {
                DEVICE_CODE_STEMS
                    .iter()
                    .any(|s| crate::facts::libraries::is_soname_of(n, s))
            })
            .map(|n| format!("{lib_dir}/{n}"))
            .collect();
        let (rocm, rocm_source) = libs
            .iter()
            .flat_map(|l| l.files.iter())
            .find_map(|f| encoded_release(f).map(|v| (v, format!("{lib_dir}/{f}"))))
            .map_or((None, None), |(v, s)| (Some(v), Some(s)));
        let rocblas = if names.iter().any(|n| n == "rocblas") {
            self.kernel_dir(&format!("{lib_dir}/{ROCBLAS_LIBRARY}"))
        } else {
            None
        };
        let hipblaslt = if names.iter().any(|n| n == "hipblaslt") {
            self.kernel_dir(&format!("{lib_dir}/{HIPBLASLT_LIBRARY}"))
        } else {
            None
        };
        if libs.is_empty() && device_code.is_empty() && rocblas.is_none() && hipblaslt.is_none() {
            return None;
        }
        let kpack = self.kpack_dir(kpack_path(lib_dir));
        // One file per library: the most specific name, where the soname links lead.
        let mut code = Vec::new();
        let mut code_problems = Vec::new();
        for stem in DEVICE_CODE_STEMS {
            let real = names
                .iter()
                .filter(|n| crate::facts::libraries::is_soname_of(n, stem))
                .max_by_key(|n| (n.matches('.').count(), n.len()));
            let Some(real) = real else { continue };
            match fatbin::read(self.root, &format!("{lib_dir}/{real}")) {
                Ok(c) => code.push(c),
                Err(Unread::Problem { problem }) => code_problems.push(problem),
                Err(Unread::NotCaptured) => {}
            }
        }
        Some(Bundled {
            lib_dir: lib_dir.to_owned(),
            libs,
            rocm,
            rocm_source,
            device_code,
            code,
            code_problems,
            rocblas,
            hipblaslt,
            kpack,
        })
    }

    /// A `.kpack` directory; `None` when it does not exist. One that exists but cannot be
    /// listed is kept, marked unread, so that no check takes its archives for missing.
    fn kpack_dir(&mut self, dir: String) -> Option<KpackDir> {
        let (names, unread) = match self.root.read_dir(&dir) {
            Ok(names) => (names, false),
            Err(e) if e.is_not_found() => return None,
            Err(e) => {
                self.problems.push(e.into());
                (Vec::new(), true)
            }
        };
        self.facts.truncated |= names.len() > MAX_LIB_ENTRIES;
        let archives = names
            .into_iter()
            .take(MAX_LIB_ENTRIES)
            .filter_map(|file| {
                let (group, target) = kpack_archive(&file)?;
                Some(KpackArchive {
                    file,
                    group,
                    target,
                })
            })
            .collect();
        Some(KpackDir {
            dir,
            archives,
            unread,
        })
    }

    fn kernel_dir(&mut self, dir: &str) -> Option<KernelDir> {
        let names = self.list(dir, MAX_LIB_ENTRIES)?;
        Some(KernelDir {
            entries: names.len(),
            targets: names.iter().filter_map(|n| file_target(n)).collect(),
            dir: dir.to_owned(),
        })
    }

    fn jax(&mut self, dists: &[Dist]) -> Option<Jax> {
        let by = |name: &str| dists.iter().find(|d| normalize(&d.name) == name).cloned();
        let plugins: Vec<JaxPlugin> = dists
            .iter()
            .filter_map(|d| {
                jax_plugin_major(&normalize(&d.name)).map(|major| JaxPlugin {
                    dist: d.clone(),
                    rocm_major: major,
                })
            })
            .collect();
        let jax = Jax {
            jax: by("jax"),
            jaxlib: by("jaxlib"),
            plugins,
        };
        (jax.jax.is_some() || jax.jaxlib.is_some() || !jax.plugins.is_empty()).then_some(jax)
    }

    fn rocm_sdk(&mut self, site: &str, names: &[String], dists: &[Dist]) -> Option<RocmSdk> {
        let sdk: Vec<Dist> = dists
            .iter()
            .filter(|d| {
                let n = normalize(&d.name);
                n == "rocm" || n.starts_with("rocm_sdk")
            })
            .cloned()
            .collect();
        let dirs: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with("_rocm_sdk_"))
            .take(MAX_LISTED_ENVS)
            .collect();
        if sdk.is_empty() && dirs.is_empty() {
            return None;
        }
        let rocm = sdk
            .iter()
            .find(|d| normalize(&d.name) == "rocm_sdk_core")
            .or_else(|| sdk.iter().find(|d| normalize(&d.name) == "rocm"))
            .and_then(|d| leading_release(&d.version));
        let mut bundled = Vec::new();
        for d in dirs {
            if let Some(b) = self.bundled(&format!("{site}/{d}/lib")) {
                bundled.push(b);
            }
        }
        Some(RocmSdk {
            dists: sdk,
            rocm,
            bundled,
        })
    }
}

/// Appends a site directory unless the path is already there.
fn push(out: &mut Vec<(String, String)>, path: String, origin: &str) {
    if !out.iter().any(|(p, _)| *p == path) {
        out.push((path, origin.to_owned()));
    }
}

/// `python3.12`, `python3.1` (conda's link to `python3.10`), not `python3`, `python3.12d`.
pub fn is_python_dir(name: &str) -> bool {
    name.strip_prefix("python3.")
        .is_some_and(|v| !v.is_empty() && v.len() <= 3 && v.bytes().all(|b| b.is_ascii_digit()))
}

/// PEP 503-style normalization for comparing distribution names: lower case, runs of `-`, `_`
/// and `.` as one `_`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The name and version of a `name-version.dist-info` or `name-version.egg-info` directory
/// (`torch-2.4.1+rocm6.0.dist-info` → `torch`, `2.4.1+rocm6.0`). Wheel installers escape `-` in
/// both parts, so the first `-` separates them. `None` for other names and for
/// `name.egg-info` without a version.
pub fn dist_from_dir_name(dir: &str) -> Option<(String, String)> {
    let stem = dir
        .strip_suffix(".dist-info")
        .or_else(|| dir.strip_suffix(".egg-info"))?;
    let (name, version) = stem.split_once('-')?;
    if name.is_empty() || version.is_empty() || !version.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((name.to_owned(), version.to_owned()))
}

/// The local version label after `+` (`2.5.1+cpu` → `cpu`).
pub fn local_tag(version: &str) -> Option<&str> {
    version
        .split_once('+')
        .map(|(_, l)| l.trim())
        .filter(|l| !l.is_empty())
}

/// The ROCm release a version label names: `rocm6.2` → 6.2, `rocm6.2.4` → 6.2.4,
/// `rocm10.0.0` → 10.0.0, `rocm611` (ROCm/jax's jaxlib) → 6.1.1, `g3b0f4f0c.rocm624` (vLLM) →
/// 6.2.4. TheRock's `rocmsdk20250901` and a bare `rocm7` name no release.
///
/// A label is dotted when a `.` and a digit follow the digits after `rocm`; only then are those
/// digits the major version, so `rocm10.0.0` is ROCm 10 and not the packed `10` (1.0). Packed
/// labels (one digit per part) exist only for ROCm 3 to 9; a packed one naming 1.x or 2.x is
/// taken for what it cannot be and names nothing.
pub fn rocm_from_tag(tag: &str) -> Option<RocmVersion> {
    let mut start = 0;
    for part in tag.split(['.', '_', '-']) {
        let at = start;
        start += part.len() + 1;
        let Some(rest) = part.strip_prefix("rocm") else {
            continue;
        };
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // The text from the digits on, separators included: `10.0.0a2026…`, `624`.
        let from_digits = tag.get(at + 4..)?;
        let after = from_digits.get(rest.len()..).unwrap_or("");
        let dotted = after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit());
        let version = if dotted || rest.len() == 1 {
            leading_release(from_digits)
        } else {
            packed_release(rest).filter(|v| v.major >= 3)
        };
        return version.filter(|v| v.major >= 1);
    }
    None
}

/// `611` → 6.1.1, `60` → 6.0: one digit per part, as ROCm/jax's and vLLM's labels write it.
fn packed_release(digits: &str) -> Option<RocmVersion> {
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d: Vec<u32> = digits.bytes().map(|b| u32::from(b - b'0')).collect();
    match d.as_slice() {
        [major, minor] => Some(RocmVersion {
            major: *major,
            minor: *minor,
            patch: None,
        }),
        [major, minor, patch] => Some(RocmVersion {
            major: *major,
            minor: *minor,
            patch: Some(*patch),
        }),
        _ => None,
    }
    .filter(|v| v.major >= 1)
}

/// The release at the start of a version string, however it goes on (`7.9.0rc1` → 7.9.0,
/// `6.2` → 6.2); at least major and minor.
pub fn leading_release(text: &str) -> Option<RocmVersion> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let head = text[..end].trim_end_matches('.');
    let mut parts = head.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().and_then(|p| p.parse().ok());
    Some(RocmVersion {
        major,
        minor,
        patch,
    })
}

/// The ROCm line of HIP's version string (`6.0.32830-d62f6a171` → 6.0): HIP's major and minor
/// follow the ROCm release; its third number is HIP's build number, not ROCm's patch level.
pub fn hip_release(hip: &str) -> Option<RocmVersion> {
    leading_release(hip).map(|v| RocmVersion { patch: None, ..v })
}

/// The release AMD encodes in the last number of a library file name
/// (`librocblas.so.4.2.60200` → 6.2.0; `libamdhip64.so.6.0.60000` → 6.0.0).
pub fn encoded_release(file: &str) -> Option<RocmVersion> {
    let (_, tail) = file.split_once(".so.")?;
    let last = tail.rsplit('.').next()?;
    RocmVersion::from_encoded(last.parse().ok()?).filter(|v| v.major >= 3)
}

/// The ROCm release PyPI's `tensorflow-rocm` encodes as a fourth number (`2.14.0.600` → 6.0.0,
/// `2.13.0.570` → 5.7.0).
pub fn tensorflow_rocm_release(version: &str) -> Option<RocmVersion> {
    let public = version.split('+').next()?;
    let fourth = public.split('.').nth(3)?;
    if fourth.len() != 3 {
        return None;
    }
    packed_release(fourth)
}

/// The ROCm major of a JAX plugin's name: `jax_rocm60_plugin` → `Some(Some(6))`,
/// `jax_rocm7_pjrt` → `Some(Some(7))`; `None` for names that are not a ROCm plugin.
pub fn jax_plugin_major(normalized: &str) -> Option<Option<u32>> {
    let rest = normalized.strip_prefix("jax_rocm")?;
    let (digits, kind) = rest.split_once('_')?;
    if !matches!(kind, "plugin" | "pjrt")
        || digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let major = match digits.len() {
        1 | 2 => digits.get(..1).and_then(|d| d.parse().ok()),
        _ => None,
    };
    Some(major)
}

/// What a torch build targets, from its local version label (`rocm…`, `cu…`, `cpu`), then
/// `version.py` (`hip`, `cuda`), then bundled HIP libraries.
fn classify(tag: Option<&str>, version_py: Option<&VersionPy>, bundled: Option<&Bundled>) -> Build {
    let hip = version_py.and_then(|v| v.get("hip")).is_some();
    let cuda = version_py.and_then(|v| v.get("cuda")).is_some();
    let xpu = version_py.and_then(|v| v.get("xpu")).is_some();
    if hip || tag.is_some_and(|t| t.starts_with("rocm")) {
        return Build::Rocm;
    }
    if cuda
        || tag.is_some_and(|t| {
            t.starts_with("cu") && t[2..].starts_with(|c: char| c.is_ascii_digit())
        })
    {
        return Build::Cuda;
    }
    if xpu || tag.is_some_and(|t| t == "xpu") {
        return Build::Other;
    }
    if bundled.is_some_and(Bundled::has_runtime) {
        return Build::Rocm;
    }
    if tag == Some("cpu") || version_py.is_some_and(|v| v.has("hip") || v.has("cuda")) {
        return Build::Cpu;
    }
    Build::Unknown
}

/// `Name:` and `Version:` of a core-metadata file (`METADATA`, `PKG-INFO`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `Name:`.
    pub name: String,
    /// `Version:`.
    pub version: String,
    /// The targets of its `Provides-Extra: device-<target>` headers (`device-all` left out).
    pub device_extras: Vec<String>,
}

/// Reads the `Name:` and `Version:` headers of a core-metadata file: RFC 822 headers up to the
/// first empty line, names case-insensitive, the first occurrence wins. `None` without both.
pub fn parse_metadata(text: &str) -> Option<Metadata> {
    let mut name = None;
    let mut version = None;
    let mut device_extras = Vec::new();
    for line in text.lines().take(MAX_LINES) {
        if line.trim().is_empty() {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        if key.eq_ignore_ascii_case("name") && name.is_none() {
            name = Some(value.to_owned());
        } else if key.eq_ignore_ascii_case("version") && version.is_none() {
            version = Some(value.to_owned());
        } else if key.eq_ignore_ascii_case("provides-extra")
            && let Some(target) = value.strip_prefix("device-")
            && target.starts_with("gfx")
            && device_extras.len() < MAX_DEVICE_EXTRAS
            && !device_extras.iter().any(|t| t == target)
        {
            device_extras.push(target.to_owned());
        }
    }
    Some(Metadata {
        name: name?,
        version: version?,
        device_extras,
    })
}

/// The top-level assignments of string literals and `None` in a generated Python version file:
/// `__version__ = '2.4.1+rocm6.0'`, `hip: Optional[str] = '6.0.32830-d62f6a171'`,
/// `cuda: str | None = None`, `__version__ = version = '0.6.3'` (setuptools-scm), either quote,
/// a trailing comment. Indented lines, other values and anything malformed are skipped; the last
/// assignment of a name wins, as in Python.
pub fn parse_version_py(text: &str) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    for line in text.lines().take(MAX_LINES) {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        if let Some((names, value)) = assignment(line) {
            for n in names {
                out.insert(n, value.clone());
            }
        }
    }
    out
}

/// One assignment line: its targets and its value (`Some` string or `None` for `None`).
fn assignment(line: &str) -> Option<(Vec<String>, Option<String>)> {
    let mut rest = line.trim_end();
    let mut names = Vec::new();
    loop {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let ident = &rest[..end];
        if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
        let mut after = rest[end..].trim_start();
        if let Some(annotated) = after.strip_prefix(':') {
            // `hip: Optional[str] = …`: the annotation runs to the `=`.
            let eq = annotated.find('=')?;
            after = &annotated[eq..];
        }
        match after.strip_prefix('=') {
            Some(value) if !value.starts_with('=') => {
                names.push(ident.to_owned());
                rest = value.trim_start();
            }
            _ => break,
        }
    }
    if names.is_empty() {
        return None;
    }
    let value = literal(rest)?;
    Some((names, value))
}

/// A string literal (`'…'` or `"…"`, no escapes needed in version files) or `None`, followed by
/// nothing but a comment. `None` (outer) when it is anything else.
fn literal(text: &str) -> Option<Option<String>> {
    let tail_ok = |t: &str| {
        let t = t.trim();
        t.is_empty() || t.starts_with('#')
    };
    if let Some(rest) = text.strip_prefix("None") {
        return tail_ok(rest).then_some(None);
    }
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = &text[1..];
    let close = body.find(quote)?;
    let value = &body[..close];
    if value.contains('\\') || !tail_ok(&body[close + 1..]) {
        return None;
    }
    Some(Some(value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TORCH_ROCM: &str = "from typing import Optional\n\n__all__ = ['__version__', 'debug', \
        'cuda', 'git_version', 'hip']\n__version__ = '2.4.1+rocm6.0'\ndebug = False\ncuda: \
        Optional[str] = None\ngit_version = 'ee1b6804381c57161c477caa380a840a84167676'\nhip: \
        Optional[str] = '6.0.32830-d62f6a171'\n";

    #[test]
    fn version_py_annotated() {
        let v = parse_version_py(TORCH_ROCM);
        assert_eq!(v["__version__"].as_deref(), Some("2.4.1+rocm6.0"));
        assert_eq!(v["hip"].as_deref(), Some("6.0.32830-d62f6a171"));
        assert_eq!(v["cuda"], None);
        assert!(v.contains_key("cuda"));
        assert_eq!(
            v["git_version"].as_deref(),
            Some("ee1b6804381c57161c477caa380a840a84167676")
        );
        // `debug = False` and `__all__ = [...]` are not strings.
        assert!(!v.contains_key("debug"));
        assert!(!v.contains_key("__all__"));
    }

    #[test]
    fn version_py_plain_and_quotes() {
        let v = parse_version_py(
            "__version__ = \"2.9.1+cu128\"\ncuda = '12.8'  # trailing\nhip = None\n\
             cuda_version = '12.1'\nxpu: str | None = None\n",
        );
        assert_eq!(v["__version__"].as_deref(), Some("2.9.1+cu128"));
        assert_eq!(v["cuda"].as_deref(), Some("12.8"));
        assert_eq!(v["hip"], None);
        assert_eq!(v["cuda_version"].as_deref(), Some("12.1"));
        assert!(v.contains_key("xpu"));
    }

    #[test]
    fn version_py_setuptools_scm_chain() {
        let v = parse_version_py(
            "# file generated by setuptools-scm\nversion: str\n__version__: str\n\
             if TYPE_CHECKING:\n    version = 'indented'\n\
             __version__ = version = '0.6.3.post1+rocm624'\n\
             __version_tuple__ = version_tuple = (0, 6, 3)\n",
        );
        assert_eq!(v["__version__"].as_deref(), Some("0.6.3.post1+rocm624"));
        assert_eq!(v["version"].as_deref(), Some("0.6.3.post1+rocm624"));
        assert!(!v.contains_key("__version_tuple__"));
    }

    #[test]
    fn version_py_garbage_never_panics() {
        for text in [
            "",
            "=",
            "= '1'",
            "hip:",
            "hip: Optional[str]",
            "hip: Optional[str] = '6.0.3",
            "hip = '6.0' junk",
            "a == 'b'",
            "1x = '2'",
            "hip = 'a\\'b'",
            "hip: = = =",
            "é = 'ü'",
            "__version__ = '2.4.1\u{0}\u{0}",
            "x = 'y'\u{0}",
            "\u{feff}__version__ = '1'",
            "hip = \"unterminated",
            "hip = None None",
        ] {
            let _ = parse_version_py(text);
        }
        let v = parse_version_py("hip: Optional[str] = '6.0.3");
        assert!(v.is_empty());
        let v = parse_version_py("hip = None None");
        assert!(v.is_empty());
        // Truncated after the first line: what is complete is kept.
        let v = parse_version_py("__version__ = '2.5.1+cpu'\ncuda: Optional[str] = No");
        assert_eq!(v["__version__"].as_deref(), Some("2.5.1+cpu"));
        assert!(!v.contains_key("cuda"));
    }

    #[test]
    fn metadata_headers() {
        let m = parse_metadata(
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cpu\nSummary: Tensors\n\n\
             Version: 9.9 (in the body)\n",
        )
        .unwrap();
        assert_eq!(
            (m.name.as_str(), m.version.as_str()),
            ("torch", "2.5.1+cpu")
        );
        let m = parse_metadata("name: x\nVERSION: 1.0\n").unwrap();
        assert_eq!(m.version, "1.0");
        assert_eq!(parse_metadata("Name: torch\n\nVersion: 1\n"), None);
        assert_eq!(parse_metadata(""), None);
        assert_eq!(parse_metadata("garbage\u{0}"), None);
        assert_eq!(parse_metadata("Name:\nVersion:\n"), None);
    }

    #[test]
    fn which_platform_a_vllm_was_built_for() {
        let v = |version: &str, modules: &[&str]| {
            Vllm {
                dist: None,
                version_py: Some(VersionPy {
                    path: "vllm/_version.py".to_owned(),
                    values: parse_version_py(&format!("__version__ = '{version}'\n")),
                }),
                rocm: local_tag(version).and_then(rocm_from_tag),
                modules: modules.iter().map(|m| (*m).to_owned()).collect(),
            }
            .build()
        };
        let cuda = ["_C.abi3.so", "_moe_C.abi3.so", "cumem_allocator.abi3.so"];
        let rocm = ["_C.abi3.so", "_moe_C.abi3.so", "_rocm_C.abi3.so"];
        // vllm-project/vllm#44660: PyPI's wheel is unlabelled and has no _rocm_C.
        assert_eq!(v("0.22.1", &cuda), VllmBuild::Cuda);
        assert_eq!(v("0.22.1+rocm722", &rocm), VllmBuild::Rocm);
        assert_eq!(v("0.22.1", &rocm), VllmBuild::Rocm);
        assert_eq!(v("0.6.4.dev1+g3b0f4f0c.rocm624", &[]), VllmBuild::Rocm);
        assert_eq!(v("0.9.0+cu126", &[]), VllmBuild::Cuda);
        assert_eq!(v("0.8.5+cpu", &["_C.abi3.so"]), VllmBuild::Cpu);
        // Before 0.7 the ROCm module had another name; nothing listed says nothing.
        assert_eq!(v("0.6.1", &["_C.abi3.so"]), VllmBuild::Unknown);
        assert_eq!(v("0.22.1", &[]), VllmBuild::Unknown);
        assert_eq!(v("garbage", &cuda), VllmBuild::Unknown);
    }

    #[test]
    fn local_tags_and_releases() {
        assert_eq!(local_tag("2.5.1+cpu"), Some("cpu"));
        assert_eq!(local_tag("2.5.1"), None);
        assert_eq!(local_tag("2.5.1+"), None);
        let r = |t: &str| rocm_from_tag(t).map(|v| v.to_string());
        assert_eq!(r("rocm6.2").as_deref(), Some("6.2"));
        assert_eq!(r("rocm6.2.4").as_deref(), Some("6.2.4"));
        assert_eq!(r("rocm611").as_deref(), Some("6.1.1"));
        assert_eq!(r("rocm60").as_deref(), Some("6.0"));
        assert_eq!(r("g3b0f4f0c.rocm624").as_deref(), Some("6.2.4"));
        assert_eq!(r("rocmsdk20250901"), None);
        assert_eq!(r("rocm7"), None);
        assert_eq!(r("cu121"), None);
        assert_eq!(r("cpu"), None);
        assert_eq!(r("rocm"), None);
        assert_eq!(r("rocm0.1"), None);
        // ROCm 10 and later: two digits before the dot are the major version (TheRock#7839's
        // torch 2.13.0+rocm10.0.0), not a packed 1.0.
        assert_eq!(r("rocm10.0.0").as_deref(), Some("10.0.0"));
        assert_eq!(r("rocm10.1").as_deref(), Some("10.1"));
        assert_eq!(r("rocm7.14.0").as_deref(), Some("7.14.0"));
        assert_eq!(r("rocm7.13.0a20260430").as_deref(), Some("7.13.0"));
        assert_eq!(r("rocm62").as_deref(), Some("6.2"));
        // A packed label naming 1.x cannot be one; `rocm10` alone is no release.
        assert_eq!(r("rocm10"), None);
        assert_eq!(r("rocm100"), None);
        assert_eq!(r("rocm10.x"), None);
        assert_eq!(r("rocm624.gabcdef"), Some("6.2.4".to_owned()));
        assert_eq!(r("rocm6."), None);
        assert_eq!(
            hip_release("6.0.32830-d62f6a171")
                .map(|v| v.to_string())
                .as_deref(),
            Some("6.0")
        );
        assert_eq!(hip_release("garbage"), None);
        assert_eq!(
            leading_release("7.9.0rc20251008")
                .map(|v| v.to_string())
                .as_deref(),
            Some("7.9.0")
        );
        assert_eq!(
            encoded_release("librocblas.so.4.2.60200")
                .map(|v| v.to_string())
                .as_deref(),
            Some("6.2.0")
        );
        assert_eq!(encoded_release("libamdhip64.so"), None);
        assert_eq!(encoded_release("libhsa-runtime64.so.1"), None);
        assert_eq!(
            tensorflow_rocm_release("2.14.0.600")
                .map(|v| v.to_string())
                .as_deref(),
            Some("6.0.0")
        );
        assert_eq!(tensorflow_rocm_release("2.16.2"), None);
    }

    #[test]
    fn kpack_names() {
        let k = |f: &str| kpack_archive(f);
        assert_eq!(
            k("torch_gfx1151.kpack"),
            Some(("torch".to_owned(), "gfx1151".to_owned()))
        );
        assert_eq!(
            k("torch_gfx90a:xnack+.kpack"),
            Some(("torch".to_owned(), "gfx90a:xnack+".to_owned()))
        );
        assert_eq!(
            k("blas_lib_gfx942.kpack"),
            Some(("blas_lib".to_owned(), "gfx942".to_owned()))
        );
        assert_eq!(
            k("torch_gfx11-generic.kpack"),
            Some(("torch".to_owned(), "gfx11-generic".to_owned()))
        );
        assert_eq!(k("blas_lib.kpm"), None);
        assert_eq!(k("_gfx1151.kpack"), None);
        assert_eq!(k("torch_gfx.kpack"), None);
        assert_eq!(k("torch.kpack"), None);
    }

    #[test]
    fn metadata_device_extras() {
        let m = parse_metadata(
            "Name: torch\nVersion: 2.13.0+rocm10.0.0\nRequires-Dist: rocm-bootstrap\n\
             Provides-Extra: device-gfx1151\nRequires-Dist: amd-torch-device-gfx1151 == 2.13.0; \
             extra == \"device-gfx1151\"\nProvides-Extra: device-gfx942\n\
             Provides-Extra: device-gfx942\nProvides-Extra: device-all\nProvides-Extra: dev\n\n\
             Provides-Extra: device-gfx1100\n",
        )
        .unwrap();
        // Duplicates once, `device-all` and other extras out, the body after the blank line
        // ignored.
        assert_eq!(m.device_extras, ["gfx1151", "gfx942"]);
        let plain = parse_metadata("Name: torch\nVersion: 2.5.1+rocm6.2\n").unwrap();
        assert!(plain.device_extras.is_empty());
    }

    #[test]
    fn dist_info_names() {
        assert_eq!(
            dist_from_dir_name("torch-2.4.1+rocm6.0.dist-info"),
            Some(("torch".to_owned(), "2.4.1+rocm6.0".to_owned()))
        );
        assert_eq!(
            dist_from_dir_name("jax_rocm60_plugin-0.4.35.dist-info"),
            Some(("jax_rocm60_plugin".to_owned(), "0.4.35".to_owned()))
        );
        assert_eq!(
            dist_from_dir_name("lazr.restfulclient-0.14.5.egg-info"),
            Some(("lazr.restfulclient".to_owned(), "0.14.5".to_owned()))
        );
        assert_eq!(dist_from_dir_name("cryptography.egg-info"), None);
        assert_eq!(dist_from_dir_name("torch"), None);
        assert_eq!(dist_from_dir_name("-1.0.dist-info"), None);
        assert_eq!(normalize("Tensorflow-ROCm"), "tensorflow_rocm");
        assert_eq!(normalize("pytorch-triton-rocm"), "pytorch_triton_rocm");
        assert_eq!(jax_plugin_major("jax_rocm60_plugin"), Some(Some(6)));
        assert_eq!(jax_plugin_major("jax_rocm7_pjrt"), Some(Some(7)));
        assert_eq!(jax_plugin_major("jax_rocm_plugin"), None);
        assert_eq!(jax_plugin_major("jax_cuda12_plugin"), None);
        assert!(is_python_dir("python3.12"));
        assert!(is_python_dir("python3.1"));
        assert!(!is_python_dir("python3"));
        assert!(!is_python_dir("python3.12d"));
        assert!(!is_python_dir("python2.7"));
    }

    #[test]
    fn builds() {
        let vp = |t: &str| VersionPy {
            path: String::new(),
            values: parse_version_py(t),
        };
        let cpu = vp(
            "__version__ = '2.5.1+cpu'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n",
        );
        assert_eq!(classify(Some("cpu"), Some(&cpu), None), Build::Cpu);
        // Debian's python3-torch: no label, hip and cuda None.
        let plain = vp("__version__ = '2.6.0'\ncuda = None\nhip = None\n");
        assert_eq!(classify(None, Some(&plain), None), Build::Cpu);
        let rocm = vp(TORCH_ROCM);
        assert_eq!(classify(Some("rocm6.0"), Some(&rocm), None), Build::Rocm);
        // AMD's Windows-style label without "rocm": hip decides.
        assert_eq!(classify(Some("gitfc14c65"), Some(&rocm), None), Build::Rocm);
        let cuda = vp("__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip = None\n");
        assert_eq!(classify(Some("cu124"), Some(&cuda), None), Build::Cuda);
        assert_eq!(classify(Some("cu124"), None, None), Build::Cuda);
        assert_eq!(classify(None, None, None), Build::Unknown);
        assert_eq!(classify(Some("custom"), None, None), Build::Unknown);
    }
}
