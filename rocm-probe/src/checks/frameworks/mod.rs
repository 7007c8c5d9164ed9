//! Layer 7: the Python frameworks, what each was built for, and whether what they bundle fits
//! the system and the GPUs.
//!
//! The build checks (a CPU or CUDA PyTorch, a non-ROCm TensorFlow, JAX without its ROCm plugin,
//! ONNX Runtime without an AMD provider) need GPU agents in the inventory: on a machine without
//! an AMD GPU a CPU build is what it should be. The per-target check of a bundled rocBLAS runs
//! only when layers 1–6 have no failure, like layer 5's; its target is the effective one
//! (`HSA_OVERRIDE_GFX_VERSION` replaces every GPU's). "The system's ROCm" is the install a process
//! loads ([`InstallFacts::effective`](crate::facts::install::InstallFacts::effective)).

mod bundled;
mod kpack;
mod ollama_runner;
pub mod rules;

use crate::facts::Facts;
use crate::facts::frameworks::{
    Build, Bundled, DEBIAN_DIST_PACKAGES, FrameworkFacts, Jax, JaxPlugin, OnnxRuntime, RocmSdk,
    SiteDir, TensorFlow, Torch, VersionPy, normalize,
};
use crate::facts::install::{Install, RocmVersion};
use crate::finding::{
    Action, BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET, BUNDLED_ROCM_DIFFERS, Evidence,
    FRAMEWORK_CODE_OBJECT_NEEDS_FEATURE_CHANGE, FRAMEWORK_FILES_MALFORMED,
    FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET, FRAMEWORKS_FOUND, FRAMEWORKS_NONE,
    FRAMEWORKS_NOT_CAPTURED, FRAMEWORKS_UNREADABLE, Finding, JAX_NO_ROCM_PLUGIN,
    JAX_PLUGIN_MISMATCH, ONNXRUNTIME_NO_ROCM_PROVIDER, RemedyStep, Status, Subject,
    TENSORFLOW_NOT_ROCM, TENSORFLOW_UNVALIDATED, TORCH_CPU_BUILD, TORCH_CUDA_BUILD, VLLM_NOT_ROCM,
};
use crate::target::GfxVersion;
use crate::{i18n, msg};

use super::runtime::HSA_OVERRIDE_GFX_VERSION;

/// The GPUs' effective targets: processor → the evidence of the nodes that have it.
use super::libraries::{Targets, list, steps_sentence, targets};

/// AMD's validated TensorFlow releases per ROCm line: ROCm's compatibility matrix, row
/// "TensorFlow".
///
/// - 6.0–6.3: github.com/ROCm/ROCm `docs/compatibility/compatibility-matrix-historical-6.0.csv`
///   (commit e396b48, ROCm 6.0.0–6.3.3).
/// - 7.1, 7.2: github.com/ROCm/legacy-rocm-build (ROCm/ROCm archived)
///   `docs/compatibility/compatibility-matrix.rst` at commit fff7efbd, columns 7.2.4/7.2.3,
///   7.2.2/7.2.1 and 7.1.0: "2.20.0, 2.19.1, 2.18.1" in each.
/// - 6.4, 7.0: the same file in the version whose columns are 7.1.0, 7.0.2 and 6.4.0 (the
///   matrix of <https://rocm.docs.amd.com/en/docs-7.1.0/compatibility/compatibility-matrix.html>;
///   read from a stored copy whose commit could not be resolved): 7.0.2 "2.19.1, 2.18.1, 2.17.1"
///   (footnote: 2.17.1 is not supported on Instinct MI350 Series GPUs, gfx950, which this
///   table cannot express), 6.4.0 "2.18.1, 2.17.1, 2.16.2". AMD's TensorFlow install page
///   (ROCm/rocm-install-on-linux `docs/install/3rd-party/tensorflow-install.rst`, the version
///   validated for ROCm 7.2.4) lists the same releases for 7.2.x, 7.1.x, 7.0.x and 6.4.x.
///
/// Lines after 7.2 (TheRock's previews, the Core SDK) were not read and are not in the table: a
/// TensorFlow on them gets `frameworks.tensorflow-unvalidated` saying the table lacks the line.
pub const TENSORFLOW_VALIDATED: [((u32, u32), [&str; 3]); 8] = [
    ((7, 2), ["2.20.0", "2.19.1", "2.18.1"]),
    ((7, 1), ["2.20.0", "2.19.1", "2.18.1"]),
    ((7, 0), ["2.19.1", "2.18.1", "2.17.1"]),
    ((6, 4), ["2.18.1", "2.17.1", "2.16.2"]),
    ((6, 3), ["2.17.0", "2.16.2", "2.15.1"]),
    ((6, 2), ["2.16.1", "2.15.1", "2.14.1"]),
    ((6, 1), ["2.15.0", "2.14.0", "2.13.1"]),
    ((6, 0), ["2.14.0", "2.13.1", "2.12.1"]),
];

/// At most this many paths are named as evidence of one finding.
const MAX_EVIDENCE: usize = 12;

/// Layer 7 findings; `below` are the findings of layers 1–6.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    // Applications' own runtimes are found outside the Python environments.
    bundled::check(f, below, &mut out);
    ollama_runner::check(f, &mut out);
    let fw = &f.frameworks;
    if !fw.captured {
        out.push(FRAMEWORKS_NOT_CAPTURED.finding(msg!("frameworks.not-captured")));
        return out;
    }
    unreadable(&f.problems.frameworks, &mut out);
    let gpus = gpu_summary(f);
    let system = f.installs.effective();
    let targets = targets(f, below);
    let override_evidence = targets.as_ref().and_then(|_| {
        f.platform
            .env
            .get(HSA_OVERRIDE_GFX_VERSION)
            .map(|v| Evidence::new(format!("env:{HSA_OVERRIDE_GFX_VERSION}"), format!("{v:?}")))
    });
    let code_gpus = super::libraries::gpus(f, below);
    // No system ROCm runtime and no ROCm wheel: nothing on the machine could run GPU code.
    let no_runtime = f.installs.captured
        && f.installs.installs.iter().all(|i| !i.libs.runtime())
        && fw.wheel_runtimes().is_empty();
    for site in &fw.sites {
        out.push(found(site));
        if let Some(gpus) = &code_gpus {
            code_objects(site, gpus, override_evidence.as_ref(), &mut out);
        }
        let ctx = Ctx {
            site,
            gpus: gpus.as_ref(),
            system,
            no_runtime,
        };
        if let Some(t) = &site.torch {
            about(PYTORCH, site, &mut out, |out| {
                torch(&ctx, t, out);
                if let (Some(b), Some(targets)) = (&t.bundled, &targets) {
                    let install = msg!(
                        "frameworks.bundled-rocblas-install",
                        index = ctx.torch_index()
                    );
                    let kernels = (targets, override_evidence.as_ref());
                    bundled_rocblas(&ctx, PYTORCH, b, kernels, install, out);
                }
                if let Some(targets) = &targets {
                    kpack::torch(&ctx, t, (targets, override_evidence.as_ref()), out);
                }
            });
        }
        if let Some(sdk) = &site.rocm_sdk {
            about(ROCM_SDK, site, &mut out, |out| {
                rocm_sdk(&ctx, sdk, out);
                // Each `_rocm_sdk_libraries_<family>` wheel carries the rocBLAS catalogue of
                // one GPU family (ROCm/TheRock#3046: gfx1151's libraries under a gfx1150).
                if let Some(targets) = &targets {
                    for b in &sdk.bundled {
                        let kernels = (targets, override_evidence.as_ref());
                        // Multi-arch wheels: the kernels come with a device wheel per target.
                        if sdk.is_kpack() {
                            kpack::rocblas(&ctx, sdk, b, kernels, out);
                            continue;
                        }
                        let install =
                            msg!("frameworks.rocm-sdk-libraries-install", dir = b.lib_dir);
                        bundled_rocblas(&ctx, ROCM_SDK, b, kernels, install, out);
                    }
                }
            });
        }
        if let Some(tf) = &site.tensorflow {
            about("TensorFlow", site, &mut out, |out| {
                tensorflow(&ctx, tf, out)
            });
        }
        if let Some(jax) = &site.jax {
            about("JAX", site, &mut out, |out| jax_checks(&ctx, jax, out));
        }
        if let Some(v) = &site.vllm {
            about("vLLM", site, &mut out, |out| vllm(&ctx, v, out));
        }
        if let Some(ort) = &site.onnxruntime {
            about("ONNX Runtime", site, &mut out, |out| {
                onnxruntime(&ctx, ort, out)
            });
        }
    }
    if fw.sites.is_empty() {
        none(fw, &mut out);
    }
    // HSA_XNACK=1 once, for layer 5's libraries and every framework that needs it.
    crate::finding::drop_repeated_steps(below, &mut out);
    out
}

/// The subject of findings about TheRock's `rocm-sdk` wheels (the ROCm that TheRock's PyTorch
/// wheels load).
const ROCM_SDK: &str = "TheRock";
/// The subject of PyTorch's findings (the name `workloads` looks for).
const PYTORCH: &str = "PyTorch";

/// Runs `checks`, and marks every finding it adds as about the framework `name` of `site`.
fn about(
    name: &str,
    site: &SiteDir,
    out: &mut Vec<Finding>,
    checks: impl FnOnce(&mut Vec<Finding>),
) {
    let start = out.len();
    checks(out);
    for f in &mut out[start..] {
        f.subject = Some(Subject::framework(name, &site.path));
    }
}

/// The GPU code of every library a site's frameworks bundle, on the GPUs.
fn code_objects(
    site: &SiteDir,
    gpus: &[crate::codeobject::compat::Gpu],
    override_evidence: Option<&Evidence>,
    out: &mut Vec<Finding>,
) {
    let bundles = site
        .torch
        .iter()
        .filter_map(|t| {
            let what = format!("{PYTORCH} {}", version_or_unknown(t.version.as_deref()));
            t.bundled.as_ref().map(|b| (PYTORCH, what, b))
        })
        .chain(site.rocm_sdk.iter().flat_map(|r| {
            r.bundled
                .iter()
                .map(|b| (ROCM_SDK, msg!("frameworks.rocm-sdk-wheels"), b))
        }));
    for (name, what, b) in bundles {
        about(name, site, out, |out| {
            bundle_code(b, &what, gpus, override_evidence, out)
        });
    }
}

/// The code-object findings of one framework's bundled libraries.
fn bundle_code(
    b: &crate::facts::frameworks::Bundled,
    what: &str,
    gpus: &[crate::codeobject::compat::Gpu],
    override_evidence: Option<&Evidence>,
    out: &mut Vec<Finding>,
) {
    for code in &b.code {
        let file = code.path.rsplit('/').next().unwrap_or(&code.path);
        out.extend(super::libraries::fat_binary_findings(
            code,
            &msg!("frameworks.file-of", file, what),
            gpus,
            override_evidence,
            [
                FRAMEWORK_NO_CODE_OBJECT_FOR_TARGET,
                FRAMEWORK_CODE_OBJECT_NEEDS_FEATURE_CHANGE,
            ],
            &msg!("frameworks.no-code-object-remedy"),
        ));
    }
    if !b.code_problems.is_empty() {
        let problems: Vec<&crate::source::problem::Problem> = b.code_problems.iter().collect();
        out.extend(super::hardware::problems(
            &problems,
            &msg!("frameworks.problem-files"),
            [FRAMEWORKS_UNREADABLE, FRAMEWORK_FILES_MALFORMED],
        ));
    }
}

/// What every per-site check needs.
struct Ctx<'a> {
    site: &'a SiteDir,
    /// `Some` with the GPU evidence when the inventory has GPU agents.
    gpus: Option<&'a Evidence>,
    /// The install a process loads.
    system: Option<&'a Install>,
    /// Whether the machine has neither a system ROCm runtime nor a ROCm wheel.
    no_runtime: bool,
}

impl Ctx<'_> {
    fn system_version(&self) -> Option<RocmVersion> {
        self.system.and_then(|i| i.version)
    }

    /// `ROCm 6.2.0 at /opt/rocm-6.2.0`, or a phrase saying none is known.
    fn system_describe(&self) -> String {
        self.system
            .map_or_else(|| msg!("frameworks.no-system-rocm"), Install::describe)
    }

    /// The PyTorch index for the system's release (`rocm6.2`), or a placeholder.
    fn torch_index(&self) -> String {
        self.system_version().map_or_else(
            || "rocm<X.Y>".to_owned(),
            |v| format!("rocm{}.{}", v.major, v.minor),
        )
    }

    fn system_evidence(&self) -> Option<Evidence> {
        let i = self.system?;
        Some(Evidence::new(
            i.version_source.clone().unwrap_or_else(|| i.prefix.clone()),
            i.describe(),
        ))
    }
}

/// PyTorch's package indexes for ROCm (`https://download.pytorch.org/whl/<name>`), by ROCm line:
/// the names uv's `--torch-backend` knows (astral-sh/uv, crates/uv-torch/src/backend.rs:
/// rocm4.0.1 … rocm6.3, from PyTorch's "Get started" and "Previous versions" pages) and rocm6.4
/// (AMD, "PyTorch 2.9 Wheel Variant Support Expands to ROCm", 2025: "hosted at
/// https://download.pytorch.org/whl/rocm6.4"). Lines 4.0 and 5.1 have only a patch release's
/// index. A line not here gets no command: the prose keeps its placeholder.
const TORCH_ROCM_INDEXES: [((u32, u32), &str); 15] = [
    ((4, 0), "rocm4.0.1"),
    ((4, 1), "rocm4.1"),
    ((4, 2), "rocm4.2"),
    ((5, 1), "rocm5.1.1"),
    ((5, 2), "rocm5.2"),
    ((5, 3), "rocm5.3"),
    ((5, 4), "rocm5.4"),
    ((5, 5), "rocm5.5"),
    ((5, 6), "rocm5.6"),
    ((5, 7), "rocm5.7"),
    ((6, 0), "rocm6.0"),
    ((6, 1), "rocm6.1"),
    ((6, 2), "rocm6.2"),
    ((6, 3), "rocm6.3"),
    ((6, 4), "rocm6.4"),
];

/// Replacing a CPU or CUDA build of torch by the ROCm wheel of the system's line, when PyTorch
/// has an index for it. `--force-reinstall`: pip otherwise takes the installed `+cpu`/`+cu124`
/// build as satisfying `torch` and changes nothing.
/// `dir`: the torch package replaced (each environment's is a step of its own).
fn torch_step(v: RocmVersion, dir: &str) -> Option<RemedyStep> {
    let (_, index) = TORCH_ROCM_INDEXES
        .iter()
        .find(|(line, _)| *line == (v.major, v.minor))?;
    Some(RemedyStep::run(
        Action::Install,
        dir,
        format!(
            "python3 -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/{index}"
        ),
        msg!("frameworks.step-torch-rocm", index),
    ))
}

/// One line of evidence naming the GPU agents, when there are any.
fn gpu_summary(f: &Facts) -> Option<Evidence> {
    let inv = f.inventory.as_ref()?;
    let mut names: Vec<String> = inv
        .gpu_agents()
        .filter_map(|a| a.gfx.map(|g| g.name()).or_else(|| a.name.clone()))
        .collect();
    let count = inv.gpu_agents().count();
    if count == 0 {
        return None;
    }
    names.sort_by_key(|t| (GfxVersion::from_name(t), t.clone()));
    names.dedup();
    Some(Evidence::new(
        crate::facts::topology::TOPOLOGY_DIR,
        msg!("frameworks.gpu-agents", count, targets = i18n::list(&names)),
    ))
}

fn unreadable(problems: &[crate::source::problem::Problem], out: &mut Vec<Finding>) {
    if problems.is_empty() {
        return;
    }
    let files = crate::source::problem::group(problems);
    out.push(
        FRAMEWORKS_UNREADABLE
            .finding(msg!("frameworks.unreadable", count = files.len()))
            .with_all(files.iter().take(MAX_EVIDENCE).map(super::problem_evidence)),
    );
}

fn none(fw: &FrameworkFacts, out: &mut Vec<Finding>) {
    let mut finding = FRAMEWORKS_NONE.finding(msg!("frameworks.none"));
    if fw.scanned.is_empty() {
        finding = finding.with(Evidence::absent(DEBIAN_DIST_PACKAGES));
    }
    finding = finding.with_all(
        fw.scanned
            .iter()
            .take(MAX_EVIDENCE)
            .map(|s| Evidence::new(s.clone(), msg!("frameworks.no-framework"))),
    );
    out.push(finding.remedy(msg!("frameworks.none-remedy")));
}

/// `__version__ = '2.4.1+rocm6.0', hip = '6.0.32830-d62f6a171', cuda = None`.
fn version_py_value(v: &VersionPy) -> String {
    let mut parts = Vec::new();
    for key in ["__version__", "hip", "cuda", "xpu", "git_version"] {
        match v.values.get(key) {
            Some(Some(s)) => parts.push(format!("{key} = '{s}'")),
            Some(None) => parts.push(format!("{key} = None")),
            None => {}
        }
    }
    if parts.is_empty() {
        msg!("frameworks.no-version-assignments")
    } else {
        parts.join(", ")
    }
}

/// A version, or `(version unknown)`.
fn version_or_unknown(version: Option<&str>) -> String {
    version.map_or_else(|| msg!("frameworks.version-unknown"), str::to_owned)
}

fn torch_part(t: &Torch) -> String {
    let version = version_or_unknown(t.version.as_deref());
    let mut notes = vec![match (t.build, t.rocm) {
        (Build::Rocm, Some(version)) => msg!("frameworks.build-rocm-version", version),
        (Build::Rocm, None) => msg!("frameworks.build-rocm"),
        (Build::Cuda, _) => msg!("frameworks.build-cuda"),
        (Build::Cpu, _) => msg!("frameworks.build-cpu"),
        (Build::Other, _) => msg!("frameworks.build-other"),
        (Build::Unknown, _) => msg!("frameworks.build-unknown"),
    }];
    if let Some(b) = &t.bundled
        && !b.libs.is_empty()
    {
        notes.push(msg!("frameworks.bundles-libraries", count = b.libs.len()));
    }
    if let Some(tr) = &t.triton {
        notes.push(format!("{} {}", tr.name, tr.version));
    }
    msg!("frameworks.torch-part", version, notes = i18n::list(&notes))
}

fn jax_part(j: &Jax) -> String {
    let version = version_or_unknown(
        j.jax
            .as_ref()
            .or(j.jaxlib.as_ref())
            .map(|d| d.version.as_str()),
    );
    if j.plugins.is_empty() {
        return match j.rocm_major() {
            Some(major) => msg!("frameworks.jax-rocm-jaxlib", version, major),
            None => msg!("frameworks.jax-no-plugin", version),
        };
    }
    let plugins: Vec<String> = j
        .plugins
        .iter()
        .map(|p| format!("{} {}", p.dist.name, p.dist.version))
        .collect();
    msg!(
        "frameworks.jax-plugins",
        version,
        plugins = i18n::list(&plugins)
    )
}

fn tensorflow_part(tf: &TensorFlow) -> String {
    let Some(d) = tf.main() else {
        return "TensorFlow".to_owned();
    };
    let kind = if tf.rocm_build {
        msg!("frameworks.build-rocm")
    } else {
        msg!("frameworks.tensorflow-not-rocm-build")
    };
    match tf.rocm {
        Some(rocm) => msg!(
            "frameworks.tensorflow-part-rocm",
            version = d.version,
            name = d.name,
            kind,
            rocm
        ),
        None => msg!(
            "frameworks.tensorflow-part",
            version = d.version,
            name = d.name,
            kind
        ),
    }
}

fn onnxruntime_part(o: &OnnxRuntime) -> String {
    let version = version_or_unknown(o.dists.first().map(|d| d.version.as_str()));
    let name = o.dists.first().map_or("onnxruntime", |d| d.name.as_str());
    let providers: Vec<&str> = o
        .providers
        .iter()
        .map(|p| {
            p.trim_start_matches("libonnxruntime_providers_")
                .split(".so")
                .next()
                .unwrap_or(p)
        })
        .filter(|p| *p != "shared")
        .collect();
    if providers.is_empty() {
        msg!("frameworks.onnxruntime-part-cpu", version, name)
    } else {
        msg!(
            "frameworks.onnxruntime-part",
            version,
            name,
            providers = i18n::list(&providers)
        )
    }
}

fn found(site: &SiteDir) -> Finding {
    let mut parts = Vec::new();
    let mut evidence = Vec::new();
    if let Some(t) = &site.torch {
        parts.push(torch_part(t));
        if let Some(v) = &t.version_py {
            evidence.push(Evidence::new(v.path.clone(), version_py_value(v)));
        }
        if let Some(d) = &t.dist {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
        if let Some(b) = &t.bundled {
            if !b.libs.is_empty() {
                evidence.push(Evidence::new(b.lib_dir.clone(), b.files()));
            }
            if let Some(k) = &b.rocblas {
                evidence.push(Evidence::new(k.dir.clone(), list(&k.targets)));
            }
        }
        if let Some(p) = &t.libtorch_hip {
            evidence.push(Evidence::new(p.clone(), msg!("frameworks.libtorch-hip")));
        }
    }
    if let Some(j) = &site.jax {
        parts.push(jax_part(j));
        for d in j
            .jax
            .iter()
            .chain(&j.jaxlib)
            .chain(j.plugins.iter().map(|p| &p.dist))
        {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
    }
    if let Some(tf) = &site.tensorflow {
        parts.push(tensorflow_part(tf));
        for d in &tf.dists {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
    }
    if let Some(v) = &site.vllm {
        let version = version_or_unknown(v.version());
        parts.push(match v.rocm {
            Some(rocm) => msg!("frameworks.vllm-rocm", version, rocm),
            None => msg!("frameworks.vllm-no-label", version),
        });
        if let Some(p) = &v.version_py {
            evidence.push(Evidence::new(p.path.clone(), version_py_value(p)));
        }
        if let Some(d) = &v.dist {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
    }
    if let Some(o) = &site.onnxruntime {
        parts.push(onnxruntime_part(o));
        for d in &o.dists {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
        if !o.providers.is_empty() {
            evidence.push(Evidence::new(o.capi_dir.clone(), o.providers.join(", ")));
        }
    }
    if let Some(s) = &site.rocm_sdk {
        parts.push(match s.rocm {
            Some(version) => msg!("frameworks.therock-version", version),
            None => msg!("frameworks.therock"),
        });
        for d in &s.dists {
            evidence.push(Evidence::new(
                d.path.clone(),
                format!("{} {}", d.name, d.version),
            ));
        }
        for b in &s.bundled {
            evidence.push(Evidence::new(b.lib_dir.clone(), b.files()));
        }
    }
    for a in &site.also {
        evidence.push(Evidence::new(
            a.clone(),
            msg!("frameworks.same-directory", path = site.path),
        ));
    }
    FRAMEWORKS_FOUND
        .finding(msg!(
            "frameworks.found",
            frameworks = i18n::join(&parts, &msg!("libraries.separator")),
            site = site.describe()
        ))
        .with_all(evidence)
}

/// The evidence of a torch install: its version file and its distribution.
fn torch_evidence(t: &Torch) -> Vec<Evidence> {
    let mut e = Vec::new();
    match &t.version_py {
        Some(v) => e.push(Evidence::new(v.path.clone(), version_py_value(v))),
        None => e.push(Evidence::absent(format!("{}/version.py", t.dir))),
    }
    if let Some(d) = &t.dist {
        e.push(Evidence::new(
            d.path.clone(),
            format!("{} {}", d.name, d.version),
        ));
    }
    e
}

fn torch(ctx: &Ctx, t: &Torch, out: &mut Vec<Finding>) {
    let version = version_or_unknown(t.version.as_deref());
    let where_ = ctx.site.describe();
    if let Some(gpus) = ctx.gpus {
        let rule = match t.build {
            Build::Cpu => Some(TORCH_CPU_BUILD),
            Build::Cuda => Some(TORCH_CUDA_BUILD),
            _ => None,
        };
        if let Some(rule) = rule {
            let what = if t.build == Build::Cpu {
                msg!("frameworks.torch-cpu-build")
            } else {
                msg!("frameworks.a-cuda-build")
            };
            let summary = msg!(
                "frameworks.torch-not-rocm",
                version,
                site = where_,
                build = what
            );
            // With no ROCm anywhere else, this PyTorch is what stands between the user and the
            // GPU (runtime.no-rocm says so, as information).
            let finding = if ctx.no_runtime {
                rule.finding_with(Status::Fail, summary)
            } else {
                rule.finding(summary)
            };
            out.push(
                finding
                    .with_all(torch_evidence(t))
                    .with(gpus.clone())
                    .with_all(ctx.system_evidence())
                    .remedy(if ctx.no_runtime {
                        msg!("frameworks.torch-not-rocm-remedy-no-system")
                    } else {
                        msg!(
                            "frameworks.torch-not-rocm-remedy",
                            index = ctx.torch_index()
                        )
                    })
                    .with_steps(ctx.system_version().and_then(|v| torch_step(v, &t.dir))),
            );
        }
    }
    if t.build != Build::Rocm {
        return;
    }
    let Some(b) = t.bundled.as_ref().filter(|b| b.has_runtime()) else {
        return;
    };
    let (bundled, source) = match (b.rocm, &b.rocm_source, t.rocm, &t.rocm_source) {
        (Some(v), Some(s), _, _) => (v, Evidence::new(s.clone(), format!("ROCm {v}"))),
        (_, _, Some(v), Some(s)) => {
            let detail = t
                .rocm_detail
                .as_ref()
                .map_or_else(|| msg!("frameworks.its-version"), ToString::to_string);
            (
                v,
                Evidence::new(
                    s.clone(),
                    msg!("frameworks.rocm-detail", version = v, detail),
                ),
            )
        }
        _ => return,
    };
    differs(
        ctx,
        &format!("PyTorch {version}"),
        b,
        bundled,
        source,
        msg!(
            "frameworks.torch-differs-remedy",
            dir = b.lib_dir,
            index = ctx.torch_index()
        ),
        out,
    );
}

/// `frameworks.bundled-rocm-differs` when the bundled release is not the system's.
fn differs(
    ctx: &Ctx,
    what: &str,
    b: &Bundled,
    bundled: RocmVersion,
    source: Evidence,
    remedy: String,
    out: &mut Vec<Finding>,
) {
    let Some(system) = ctx.system_version() else {
        return;
    };
    let same = bundled.line() == system.line()
        && match (bundled.patch, system.patch) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
    if same {
        return;
    }
    let files: Vec<&str> = b
        .libs
        .iter()
        .filter_map(|l| l.files.first().map(String::as_str))
        .collect();
    let named = match files.len() {
        0..=3 => i18n::list(&files),
        n => msg!(
            "frameworks.files-and-more",
            files = i18n::list(&files[..3]),
            count = n - 3
        ),
    };
    out.push(
        BUNDLED_ROCM_DIFFERS
            .finding(msg!(
                "frameworks.bundled-differs",
                what,
                site = ctx.site.describe(),
                bundled,
                files = named,
                system = ctx.system_describe()
            ))
            .with(source)
            .with(Evidence::new(b.lib_dir.clone(), b.files()))
            .with_all(ctx.system_evidence())
            .remedy(remedy),
    );
}

fn rocm_sdk(ctx: &Ctx, sdk: &RocmSdk, out: &mut Vec<Finding>) {
    let Some(v) = sdk.rocm else {
        return;
    };
    let Some(b) = sdk.bundled.iter().find(|b| b.has_runtime()) else {
        return;
    };
    let source = sdk
        .dists
        .iter()
        .find(|d| normalize(&d.name) == "rocm_sdk_core")
        .or(sdk.dists.first())
        .map_or_else(
            || Evidence::new(b.lib_dir.clone(), format!("ROCm {v}")),
            |d| {
                Evidence::new(
                    d.path.clone(),
                    format!("{} {}: ROCm {v}", d.name, d.version),
                )
            },
        );
    differs(
        ctx,
        &msg!("frameworks.rocm-sdk-wheels"),
        b,
        v,
        source,
        msg!("frameworks.rocm-sdk-differs-remedy"),
        out,
    );
}

/// A bundle's rocBLAS catalogue against the GPUs (`kernels`: their targets and the override in
/// effect); `install` is the last step of the remedy, the bundle's own way to a build for them.
fn bundled_rocblas(
    ctx: &Ctx,
    what: &str,
    b: &Bundled,
    (targets, override_evidence): (&Targets, Option<&Evidence>),
    install: String,
    out: &mut Vec<Finding>,
) {
    if !b.has("rocblas") && b.rocblas.is_none() {
        return;
    }
    let have = b
        .rocblas
        .as_ref()
        .map(|d| d.targets.clone())
        .unwrap_or_default();
    let missing = super::libraries::missing_targets(targets, &have);
    if missing.is_empty() {
        return;
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let finding = BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET.finding(msg!(
        "frameworks.bundled-rocblas-no-kernels",
        what,
        site = ctx.site.describe(),
        targets = i18n::list(&names),
        have = list(&have)
    ));
    let dir = b.rocblas.as_ref().ok_or_else(|| {
        Evidence::absent(format!(
            "{}/{}",
            b.lib_dir,
            crate::facts::libraries::ROCBLAS_LIBRARY
        ))
    });
    let finding =
        super::libraries::kernel_evidence(finding, dir, &missing, (targets, override_evidence));
    let mut steps: Vec<String> =
        super::libraries::sibling_overrides(&missing, &have, override_evidence)
            .into_iter()
            .map(|(target, value, sibling)| {
                msg!(
                    "frameworks.bundled-rocblas-override",
                    target,
                    value,
                    sibling
                )
            })
            .collect();
    steps.push(install);
    out.push(finding.remedy(steps_sentence(&steps)));
}

/// `2.14.0.600+x` → `2.14.0`: the TensorFlow release without PyPI's ROCm suffix or a label.
fn tensorflow_release(version: &str) -> String {
    let public = version.split('+').next().unwrap_or(version);
    public.split('.').take(3).collect::<Vec<_>>().join(".")
}

/// `frameworks.vllm-not-rocm`: a vLLM built for CUDA or the CPU beside AMD GPUs. Its GPU
/// extensions need CUDA's libraries (a CUDA build fails to import them, or runs without the GPU);
/// an install that meant ROCm's wheel gets PyPI's CUDA one when the ROCm index has none for the
/// Python version (vllm-project/vllm#44660: ROCm wheels are cp312 only, PyPI's are cp38-abi3).
fn vllm(ctx: &Ctx, v: &crate::facts::frameworks::Vllm, out: &mut Vec<Finding>) {
    use crate::facts::frameworks::VllmBuild;
    let Some(gpus) = ctx.gpus else { return };
    let (platform, why) = match v.build() {
        VllmBuild::Cuda => ("CUDA", msg!("frameworks.vllm-why-cuda")),
        VllmBuild::Cpu => ("CPU", msg!("frameworks.vllm-why-cpu")),
        VllmBuild::Rocm | VllmBuild::Unknown => return,
    };
    let version = version_or_unknown(v.version());
    let mut finding = VLLM_NOT_ROCM
        .finding(msg!(
            "frameworks.vllm-not-rocm",
            version,
            platform,
            site = ctx.site.describe(),
            why
        ))
        .with(gpus.clone());
    if let Some(d) = &v.dist {
        finding = finding.with(Evidence::new(
            d.path.clone(),
            format!("{} {}", d.name, d.version),
        ));
    }
    if !v.modules.is_empty() {
        finding = finding.with(Evidence::new(
            format!("{}/vllm", ctx.site.path),
            v.modules.join(", "),
        ));
    }
    out.push(finding.remedy(msg!("frameworks.vllm-not-rocm-remedy")));
}

fn tensorflow(ctx: &Ctx, tf: &TensorFlow, out: &mut Vec<Finding>) {
    let Some(d) = tf.main() else {
        return;
    };
    let evidence: Vec<Evidence> = tf
        .dists
        .iter()
        .map(|d| Evidence::new(d.path.clone(), format!("{} {}", d.name, d.version)))
        .collect();
    if !tf.rocm_build {
        if let Some(gpus) = ctx.gpus {
            out.push(
                TENSORFLOW_NOT_ROCM
                    .finding(msg!(
                        "frameworks.tensorflow-not-rocm",
                        version = d.version,
                        name = d.name,
                        site = ctx.site.describe()
                    ))
                    .with_all(evidence)
                    .with(gpus.clone())
                    .remedy(msg!("frameworks.tensorflow-not-rocm-remedy")),
            );
        }
        return;
    }
    let release = tensorflow_release(&d.version);
    let line = ctx.system_version().or(tf.rocm);
    let Some(line) = line else {
        out.push(
            TENSORFLOW_UNVALIDATED
                .finding(msg!(
                    "frameworks.tensorflow-no-release",
                    version = d.version,
                    name = d.name,
                    site = ctx.site.describe()
                ))
                .with_all(evidence),
        );
        return;
    };
    let validated = TENSORFLOW_VALIDATED
        .iter()
        .find(|(l, _)| *l == line.line())
        .map(|(_, v)| v);
    let summary = match validated {
        Some(v) if v.contains(&release.as_str()) => return,
        Some(v) => msg!(
            "frameworks.tensorflow-unvalidated",
            version = d.version,
            name = d.name,
            site = ctx.site.describe(),
            major = line.major,
            minor = line.minor,
            validated = i18n::list(v)
        ),
        None => msg!(
            "frameworks.tensorflow-no-table",
            version = d.version,
            name = d.name,
            site = ctx.site.describe(),
            major = line.major,
            minor = line.minor
        ),
    };
    out.push(
        TENSORFLOW_UNVALIDATED
            .finding(summary)
            .with_all(evidence)
            .with_all(ctx.system_evidence())
            .remedy(msg!(
                "frameworks.tensorflow-unvalidated-remedy",
                major = line.major,
                minor = line.minor
            )),
    );
}

fn jax_checks(ctx: &Ctx, jax: &Jax, out: &mut Vec<Finding>) {
    let evidence: Vec<Evidence> = jax
        .jax
        .iter()
        .chain(&jax.jaxlib)
        .chain(jax.plugins.iter().map(|p| &p.dist))
        .map(|d| Evidence::new(d.path.clone(), format!("{} {}", d.name, d.version)))
        .collect();
    let version = version_or_unknown(
        jax.jax
            .as_ref()
            .or(jax.jaxlib.as_ref())
            .map(|d| d.version.as_str()),
    );
    let Some(major) = jax.rocm_major() else {
        if let Some(gpus) = ctx.gpus
            && jax.jaxlib.is_some()
        {
            out.push(
                JAX_NO_ROCM_PLUGIN
                    .finding(msg!(
                        "frameworks.jax-no-rocm-plugin",
                        version,
                        site = ctx.site.describe()
                    ))
                    .with_all(evidence)
                    .with(gpus.clone())
                    .remedy(msg!("frameworks.jax-no-rocm-plugin-remedy")),
            );
        }
        return;
    };
    if let Some(f) = jax_rocm_major(ctx, jax, major, &version, &evidence) {
        out.push(f);
        return;
    }
    jax_releases(ctx, jax, &version, evidence, out);
}

/// The plugin's ROCm major against the ROCm a process loads: a plugin built for another major
/// links that major's sonames (`libamdhip64.so.6` / `.so.7`), so its PJRT library fails to load
/// and the `rocm` backend does not come up.
fn jax_rocm_major(
    ctx: &Ctx,
    jax: &Jax,
    major: u32,
    version: &str,
    evidence: &[Evidence],
) -> Option<Finding> {
    // A process in this environment loads the system's ROCm, or TheRock's wheels beside it.
    let (system, describe) = match (ctx.system_version(), &ctx.site.rocm_sdk) {
        (Some(v), _) => (v, ctx.system_describe()),
        (None, Some(sdk)) => {
            let v = sdk.rocm?;
            (v, msg!("frameworks.therock-wheels", version = v))
        }
        (None, None) => return None,
    };
    if system.major == major {
        return None;
    }
    let plugin = jax
        .plugins
        .iter()
        .find(|p| p.dist.name.ends_with("_plugin"))
        .or(jax.plugins.first())
        .map_or_else(|| "jaxlib".to_owned(), |p| p.dist.name.clone());
    Some(
        JAX_PLUGIN_MISMATCH
            .finding(msg!(
                "frameworks.jax-plugin-mismatch",
                version,
                site = ctx.site.describe(),
                plugin,
                major,
                system = describe
            ))
            .with_all(evidence.iter().cloned())
            .with_all(ctx.system_evidence())
            .remedy(msg!(
                "frameworks.jax-plugin-mismatch-remedy",
                major = system.major,
                // ROCm 6's plugins are named after 6.0 (`rocm60`), ROCm 7's after the major.
                suffix = if system.major == 6 {
                    "60".to_owned()
                } else {
                    system.major.to_string()
                },
            )),
    )
}

/// The (ROCm major of the plugin, plugin and PJRT release, jaxlib release) that AMD supports
/// although the releases differ: ROCm's "JAX Plugin-PJRT with JAX/JAXLIB compatibility" table
/// (`docs/compatibility/ml-compatibility/jax-compatibility.rst`, github.com/ROCm/legacy-rocm-build
/// commit 48042ed, PR #5609: plugin-PJRT 0.6.0 with JAX/jaxlib 0.6.2 and 0.6.0 on ROCm 7.0.x;
/// its later rows, 0.7.1, 0.8.0 and 0.8.2, pair equal releases only).
pub const JAX_ROCM_UNEQUAL_SUPPORTED: [(u32, [u32; 3], [u32; 3]); 1] = [(7, [0, 6, 0], [0, 6, 2])];

/// The jaxlib releases that refuse a ROCm plugin of another release: jaxlib's
/// `plugin_support.check_plugin_version` (github.com/jax-ml/jax `jaxlib/plugin_support.py`,
/// Apache-2.0) compares the dotted release prefixes and, when they differ, warns "JAX plugin …
/// is installed, but it is not compatible with the installed jaxlib version …, so it will not be
/// used". It came with jaxlib 0.5.3 (commit c7ed1bd) and has skipped ROCm plugins since 0.9.1
/// (commit 42d5a8f: "Version compatibility is managed via pip dependency constraints").
pub const JAXLIB_CHECKS_ROCM_PLUGIN: ([u32; 3], [u32; 3]) = ([0, 5, 3], [0, 9, 1]);

/// A version's dotted release prefix, read as jaxlib's `_parse_version` reads it
/// (`0.5.0+rocm6.3` → `[0, 5, 0]`, `0.9.0.1` → `[0, 9, 0, 1]`); `None` without one.
pub fn jax_release(version: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in version.split('.') {
        let digits: &str = &part[..part.bytes().take_while(u8::is_ascii_digit).count()];
        if digits.is_empty() {
            break;
        }
        out.push(digits.parse().ok()?);
        if digits.len() != part.len() {
            break;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A plugin with its release, when its version has one.
fn with_release(p: Option<&JaxPlugin>) -> Option<(&JaxPlugin, Vec<u32>)> {
    p.and_then(|p| jax_release(&p.dist.version).map(|r| (p, r)))
}

/// Whether a plugin or PJRT wheel for ROCm `major` of release `ours` goes with jaxlib release
/// `lib`: the same release, or a pair AMD's table lists.
pub fn jax_supported(major: Option<u32>, ours: &[u32], lib: &[u32]) -> bool {
    ours == lib
        || JAX_ROCM_UNEQUAL_SUPPORTED
            .iter()
            .any(|(m, p, l)| Some(*m) == major && p.as_slice() == ours && l.as_slice() == lib)
}

/// The plugin pair against each other and against jaxlib (jaxlib's own rule, the PJRT C API,
/// AMD's table); one finding naming every mismatch, the worst deciding its status.
fn jax_releases(
    ctx: &Ctx,
    jax: &Jax,
    version: &str,
    evidence: Vec<Evidence>,
    out: &mut Vec<Finding>,
) {
    let kind = |suffix: &str| jax.plugins.iter().find(|p| p.dist.name.ends_with(suffix));
    let (plugin, pjrt) = (kind("_plugin"), kind("_pjrt"));
    let (plugin, pjrt) = (with_release(plugin), with_release(pjrt));
    let jaxlib = jax
        .jaxlib
        .as_ref()
        .and_then(|d| jax_release(&d.version).map(|r| (d, r)));
    let mut reasons: Vec<(Status, String)> = Vec::new();
    if let (Some((p, pr)), Some((j, jr))) = (&plugin, &pjrt)
        && pr != jr
    {
        reasons.push((
            Status::Warn,
            msg!(
                "frameworks.jax-pjrt-plugin-differ",
                plugin = p.dist.name,
                plugin_version = p.dist.version,
                pjrt = j.dist.name,
                pjrt_version = j.dist.version
            ),
        ));
    }
    if let Some((lib, lr)) = &jaxlib {
        let (from, until) = JAXLIB_CHECKS_ROCM_PLUGIN;
        let checks = lr.as_slice() >= from.as_slice() && lr.as_slice() < until.as_slice();
        // The halves against jaxlib: one sentence for the pair when they are of one release.
        let mut parts: Vec<(Vec<&JaxPlugin>, &Vec<u32>)> = Vec::new();
        for (p, r) in plugin.iter().chain(&pjrt) {
            match parts.iter_mut().find(|(_, release)| *release == r) {
                Some((names, _)) => names.push(p),
                None => parts.push((vec![p], r)),
            }
        }
        for (halves, pr) in parts {
            if halves.iter().all(|p| jax_supported(p.rocm_major, pr, lr)) {
                continue;
            }
            let name = i18n::list(halves.iter().map(|p| &p.dist.name));
            let (part_version, jaxlib) = (&halves[0].dist.version, &lib.version);
            let is = |suffix: &str| halves.iter().any(|p| p.dist.name.ends_with(suffix));
            reasons.push(if is("_pjrt") && pr > lr {
                (
                    Status::Warn,
                    msg!("frameworks.jax-pjrt-newer", name, part_version, jaxlib),
                )
            } else if is("_plugin") && checks {
                (
                    Status::Warn,
                    msg!("frameworks.jax-plugin-skipped", name, part_version, jaxlib),
                )
            } else {
                (
                    Status::Info,
                    msg!("frameworks.jax-plugin-untested", name, part_version, jaxlib),
                )
            });
        }
    }
    let Some(status) = reasons.iter().map(|(s, _)| *s).max() else {
        return;
    };
    // The set to install: the plugin's release (published for its ROCm major), under the names
    // pip knows (`jax-rocm60-plugin`).
    let (set_from, set_release) = match (&plugin, &pjrt) {
        (Some((p, r)), _) | (None, Some((p, r))) => (p, r),
        (None, None) => return,
    };
    let release = i18n::join(set_release.iter(), ".");
    let name = |suffix: &str| {
        let stem = set_from
            .dist
            .name
            .rsplit_once('_')
            .map_or(set_from.dist.name.as_str(), |(stem, _)| stem);
        format!("{}-{suffix}", stem.replace('_', "-"))
    };
    let command = format!(
        "pip install \"jax=={release}\" \"jaxlib=={release}\" \"{}=={release}\" \"{}=={release}\"",
        name("plugin"),
        name("pjrt")
    );
    let sentences: Vec<String> = reasons.into_iter().map(|(_, s)| s).collect();
    out.push(
        JAX_PLUGIN_MISMATCH
            .finding_with(
                status,
                msg!(
                    "frameworks.jax-releases-mismatch",
                    version,
                    site = ctx.site.describe(),
                    reasons = i18n::join(&sentences, &msg!("frameworks.separator"))
                ),
            )
            .with_all(evidence)
            .remedy(msg!("frameworks.jax-releases-remedy", command))
            .with_steps(jax_step(&ctx.site.path, &set_from.dist.name, &release)),
    );
}

/// The matching set as a command, when the plugin's distribution name and the release are
/// plain (a name or version from a METADATA file goes into no command otherwise).
/// `site`: the environment's site directory, whose `jax` the step acts on.
fn jax_step(site: &str, plugin: &str, release: &str) -> Option<RemedyStep> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if !plain(plugin) || !plain(release) {
        return None;
    }
    let stem = plugin.rsplit_once('_').map_or(plugin, |(stem, _)| stem);
    let name = |suffix: &str| format!("{}-{suffix}", stem.replace('_', "-"));
    Some(RemedyStep::run(
        Action::Install,
        format!("{site}/jax"),
        format!(
            "python3 -m pip install \"jax=={release}\" \"jaxlib=={release}\" \"{}=={release}\" \"{}=={release}\"",
            name("plugin"),
            name("pjrt")
        ),
        msg!("frameworks.step-jax-set", release),
    ))
}

fn onnxruntime(ctx: &Ctx, o: &OnnxRuntime, out: &mut Vec<Finding>) {
    let Some(gpus) = ctx.gpus else {
        return;
    };
    if o.has_amd_provider() {
        return;
    }
    let version = version_or_unknown(o.dists.first().map(|d| d.version.as_str()));
    let name = o.dists.first().map_or("onnxruntime", |d| d.name.as_str());
    let cuda = o.providers.iter().any(|p| p.contains("_cuda"));
    let build = if cuda {
        msg!("frameworks.a-cuda-build")
    } else {
        msg!("frameworks.onnxruntime-cpu-build")
    };
    let mut finding = ONNXRUNTIME_NO_ROCM_PROVIDER
        .finding(msg!(
            "frameworks.onnxruntime-no-provider",
            version,
            name,
            site = ctx.site.describe(),
            build
        ))
        .with_all(
            o.dists
                .iter()
                .map(|d| Evidence::new(d.path.clone(), format!("{} {}", d.name, d.version))),
        );
    finding = if o.providers.is_empty() {
        finding.with(Evidence::absent(format!(
            "{}/libonnxruntime_providers_migraphx.so",
            o.capi_dir
        )))
    } else {
        finding.with(Evidence::new(o.capi_dir.clone(), o.providers.join(", ")))
    };
    out.push(
        finding
            .with(gpus.clone())
            .remedy(msg!("frameworks.onnxruntime-remedy")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The torch step names an index PyTorch has (lines 4.0 and 5.1 only as a patch release),
    /// none for a line without one; the JAX step takes only plain names and releases.
    #[test]
    fn torch_and_jax_steps() {
        let v = |major, minor| RocmVersion {
            major,
            minor,
            patch: None,
        };
        let command = |v| torch_step(v, "/s/torch").and_then(|s| s.command);
        assert_eq!(
            command(v(6, 2)).as_deref(),
            Some(
                "python3 -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/rocm6.2"
            )
        );
        assert!(command(v(5, 1)).unwrap().ends_with("/whl/rocm5.1.1"));
        assert!(command(v(4, 0)).unwrap().ends_with("/whl/rocm4.0.1"));
        assert_eq!(command(v(3, 9)), None);
        assert_eq!(command(v(7, 9)), None);
        assert_eq!(
            jax_step("/s", "jax_rocm60_plugin", "0.5.0")
                .and_then(|s| s.command)
                .as_deref(),
            Some(
                "python3 -m pip install \"jax==0.5.0\" \"jaxlib==0.5.0\" \"jax-rocm60-plugin==0.5.0\" \"jax-rocm60-pjrt==0.5.0\""
            )
        );
        assert!(jax_step("/s", "jax_rocm60_plugin$(id)", "0.5.0").is_none());
        assert!(jax_step("/s", "jax_rocm60_plugin", "0.5.0 ").is_none());
    }

    #[test]
    fn tensorflow_releases() {
        assert_eq!(tensorflow_release("2.14.0.600"), "2.14.0");
        assert_eq!(tensorflow_release("2.16.2"), "2.16.2");
        assert_eq!(tensorflow_release("2.16.2+rocm6.2"), "2.16.2");
        assert_eq!(tensorflow_release(""), "");
        assert!(TENSORFLOW_VALIDATED.iter().all(|(_, v)| v.len() == 3));
    }

    #[test]
    fn jax_releases_are_read_as_jaxlib_reads_them() {
        assert_eq!(jax_release("0.5.0"), Some(vec![0, 5, 0]));
        assert_eq!(
            jax_release("0.9.1+rocm7.13.0a20260415"),
            Some(vec![0, 9, 1])
        );
        assert_eq!(jax_release("0.9.0.1"), Some(vec![0, 9, 0, 1]));
        assert_eq!(jax_release("0.4.38.dev20250101"), Some(vec![0, 4, 38]));
        assert_eq!(jax_release("0.6.0rc1"), Some(vec![0, 6, 0]));
        assert_eq!(jax_release("1..2"), Some(vec![1]));
        assert_eq!(jax_release("dev"), None);
        assert_eq!(jax_release(""), None);
        // AMD's one unequal pair, for ROCm 7's plugin only, and not the other way round.
        assert!(jax_supported(Some(7), &[0, 6, 0], &[0, 6, 2]));
        assert!(!jax_supported(Some(6), &[0, 6, 0], &[0, 6, 2]));
        assert!(!jax_supported(Some(7), &[0, 6, 2], &[0, 6, 0]));
        assert!(jax_supported(None, &[0, 5, 0], &[0, 5, 0]));
        assert!(!jax_supported(None, &[0, 5, 0], &[0, 5]));
    }

    #[test]
    fn target_lists_are_in_version_order() {
        use std::collections::BTreeSet;
        let set: BTreeSet<String> = ["gfx1100", "gfx90a", "gfx942"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(list(&set), "gfx90a, gfx942, gfx1100");
        assert_eq!(list(&BTreeSet::new()), "none");
    }
}
