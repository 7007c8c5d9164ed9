//! Layer 4: ROCr and HIP as installed, and the environment that steers them.
//!
//! The install checks need no GPU. The GPU checks (device masks, overrides against the real
//! target, iGPU beside dGPU, release support) run only when layers 1–3 have no failure: with a
//! broken lower layer they would only repeat its consequences.

pub mod active;
pub mod rules;
mod wsl_build;

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::Facts;
use crate::facts::agent::{Agent, Inventory};
use crate::facts::frameworks::{Wheel, WheelRuntime};
use crate::facts::install::{Install, InstallFacts, InstallKind, OPT_ROCM};
use crate::facts::override_hazard;
use crate::facts::rocr_isa;
use crate::facts::support::{self, Support};
use crate::finding::{
    APU_SUPPORT_UNJUDGED, Action, Evidence, Finding, GPU_CHECKS_SKIPPED, HSA_OVERRIDE_IGPU,
    HSA_OVERRIDE_MALFORMED, HSA_OVERRIDE_NODE_NOT_GPU, HSA_OVERRIDE_PER_NODE_IGNORED,
    HSA_OVERRIDE_REDUNDANT, HSA_OVERRIDE_SAME_FAMILY, HSA_OVERRIDE_UNKNOWN_TARGET,
    HSA_OVERRIDE_WRONG_FAMILY, IGPU_BESIDE_DGPU, INSTALL_FILES_MALFORMED, INSTALL_FILES_UNREADABLE,
    INSTALLS_FOUND, MIXED_INSTALLS, NIX_STORE_NOT_SEARCHED, NO_ROCM, NOT_CAPTURED,
    OPT_ROCM_DANGLING, RELEASE_KNOWN_BAD, RELEASE_UNKNOWN, ROCM_PATH_INVALID,
    ROCR_NOT_ON_SEARCH_PATH, ROCR_UNKNOWN_TARGET, RemedyStep, Status, TARGET_DEPRECATED,
    TARGET_DISTRIBUTION_BUILD, TARGET_SUPPORTED, TARGET_UNSUPPORTED, VISIBLE_DEVICES_MASK,
    VISIBLE_DEVICES_OUT_OF_RANGE, WHEEL_RUNTIME_ONLY,
};
use crate::target::GfxVersion;
use crate::{i18n, msg};

use self::env::{Selection, hip_visible, rocr_visible};
use crate::target::{OverrideError, parse_override};

/// The variable that overrides every GPU's gfx version.
pub use crate::target::HSA_OVERRIDE_GFX_VERSION;
/// ROCr's device mask.
pub const ROCR_VISIBLE_DEVICES: &str = "ROCR_VISIBLE_DEVICES";
/// HIP's device mask.
pub const HIP_VISIBLE_DEVICES: &str = "HIP_VISIBLE_DEVICES";
/// HIP's fallback device mask, used when `HIP_VISIBLE_DEVICES` is unset or empty.
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";
/// OpenCL's device mask (ROCclr; HIP ignores it).
pub const GPU_DEVICE_ORDINAL: &str = "GPU_DEVICE_ORDINAL";

/// Layer 4 findings; `below` are the findings of layers 1–3.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    installs(
        &f.installs,
        &f.problems.installs,
        (f.os_release.as_ref(), &f.platform.env),
        (&f.frameworks.wheel_runtimes(), &foreign_torch(f)),
        &mut out,
    );
    wsl_build::check(f, &mut out);
    let env = &f.platform.env;
    let gpus: Vec<&Agent> = f
        .inventory
        .as_ref()
        .map(|i| i.gpu_agents().collect())
        .unwrap_or_default();
    let overrides = &f.overrides;
    if override_format(overrides, env, &gpus, &mut out).is_err() {
        // libhsakmt refuses the topology (or ROCr every GPU agent): no GPU to check.
        return out;
    }
    // The first failure up the chain (no other failure explains it), as the layer notes name it.
    let blocking = crate::checks::blocking_failures(below);
    let gpus_out = match gpus_out(f, &blocking) {
        Some(out_of_use) => out_of_use,
        None => {
            if let Some(cause) = blocking
                .iter()
                .copied()
                .min_by_key(|x| crate::finding::explained(x, below, Status::Fail))
            {
                let mut skipped = GPU_CHECKS_SKIPPED.finding(msg!(
                    "runtime.gpu-checks-skipped",
                    layer = cause.layer.number(),
                    name = crate::finding::layer_name(cause.layer)
                ));
                skipped.caused_by = Some(cause.id);
                out.push(skipped);
                return out;
            }
            BTreeMap::new()
        }
    };
    if let (Some(inv), Some(first)) = (f.inventory.as_ref(), gpus_out.values().next()) {
        let names: Vec<String> = gpus_out
            .keys()
            .filter_map(|&i| Some(inv.gpu_name(inv.gpus.get(i)?).to_string()))
            .collect();
        let mut skipped = GPU_CHECKS_SKIPPED.finding(msg!(
            "runtime.gpu-checks-skipped-some",
            gpus = crate::i18n::list(&names),
            left = inv.gpus.len() - gpus_out.len()
        ));
        skipped.caused_by = Some(first.id);
        if gpus_out.len() == 1 {
            skipped.subject = first.subject.clone();
        }
        out.push(skipped);
    }
    if gpus.is_empty() {
        return out;
    }
    let view = visibility(f, &gpus, env, &mut out);
    // ROCr still enumerates a GPU that failed alone (device masks count it), but what runs on
    // it says nothing about the others: the checks below are of the GPUs still in use.
    let visible: Vec<&Agent> = view
        .hip
        .iter()
        .map(|&i| gpus[i])
        .filter(|a| a.physical_gpu.is_none_or(|g| !gpus_out.contains_key(&g)))
        .collect();
    if visible.is_empty() {
        return out;
    }
    per_node_notes(overrides, f.inventory.as_ref(), &gpus, &mut out);
    override_checks(f, overrides, &visible, &mut out);
    if let Some(inv) = &f.inventory {
        igpu(inv, &gpus, &view, overrides, &mut out);
    }
    release_support(f, &visible, overrides, &mut out);
    out
}

/// When every failure of layers 1–3 is one GPU's and GPUs remain, those GPUs with the failure
/// that took each out (noted in a skip finding caused by the first); `None` when a failure
/// concerns the whole machine or every GPU, and the GPU checks are skipped as a whole.
fn gpus_out<'a>(f: &Facts, failures: &[&'a Finding]) -> Option<BTreeMap<usize, &'a Finding>> {
    let total = f.inventory.as_ref().map_or(0, |i| i.gpus.len());
    let mut out = BTreeMap::new();
    for &x in failures {
        let gpu = x
            .subject
            .as_ref()
            .and_then(crate::finding::Subject::gpu_index)?;
        out.entry(gpu).or_insert(x);
    }
    (!out.is_empty() && out.len() < total).then_some(out)
}

// ----------------------------------------------------------------------------------------------
// Installs

/// The PyTorch builds for CUDA or the CPU, as `PyTorch <version> in <site>`: a machine whose only
/// GPU consumer is such a PyTorch needs a ROCm wheel of it, not a system ROCm.
fn foreign_torch(f: &Facts) -> Vec<String> {
    use crate::facts::frameworks::Build;
    f.frameworks
        .sites
        .iter()
        .filter_map(|s| {
            let t = s
                .torch
                .as_ref()
                .filter(|t| matches!(t.build, Build::Cuda | Build::Cpu))?;
            Some(msg!(
                "runtime.torch-in-site",
                version = t.version.as_deref().unwrap_or("?"),
                site = s.describe()
            ))
        })
        .collect()
}

fn installs(
    facts: &InstallFacts,
    problems: &[crate::source::problem::Problem],
    (os, env): (
        Option<&crate::facts::os_release::OsRelease>,
        &BTreeMap<String, String>,
    ),
    (wheels, foreign): (&[WheelRuntime], &[String]),
    out: &mut Vec<Finding>,
) {
    if !facts.captured {
        out.push(NOT_CAPTURED.finding(msg!("runtime.not-captured")));
        return;
    }
    let problems: Vec<&crate::source::problem::Problem> = problems.iter().collect();
    out.extend(super::hardware::problems(
        &problems,
        &msg!("runtime.problem-files"),
        [INSTALL_FILES_UNREADABLE, INSTALL_FILES_MALFORMED],
    ));
    if let Some(o) = facts.opt_rocm.as_ref().filter(|o| !o.target_exists) {
        out.push(
            OPT_ROCM_DANGLING
                .finding(msg!("runtime.opt-rocm-dangling", target = o.target))
                .with(Evidence::new(OPT_ROCM, chain(&o.chain)))
                .with(Evidence::absent(o.target.clone()))
                .remedy(msg!("runtime.opt-rocm-dangling-remedy")),
        );
    }
    for e in facts.env.iter().filter(|e| e.install.is_none()) {
        out.push(
            ROCM_PATH_INVALID
                .finding(msg!(
                    "runtime.rocm-path-invalid",
                    name = e.name,
                    value = e.value
                ))
                .with(Evidence::new(format!("env:{}", e.name), e.value.clone()))
                .remedy(match facts.effective() {
                    Some(i) => msg!("runtime.set-or-unset", name = e.name, prefix = i.prefix),
                    None => msg!("runtime.unset", name = e.name),
                })
                // The install a process uses, when its prefix is plain; else unset the variable.
                .with_steps(
                    facts
                        .effective()
                        .and_then(|i| set_env_step(&e.name, &i.prefix))
                        .or_else(|| unset_env_step(&e.name)),
                ),
        );
    }
    let with_runtime: Vec<&Install> = facts.installs.iter().filter(|i| i.libs.runtime()).collect();
    if with_runtime.is_empty() && !wheels.is_empty() {
        // PyTorch's ROCm wheels and TheRock's rocm-sdk wheels load their own HIP and ROCr: the
        // Python programs of that environment need only the kernel driver.
        let names = i18n::list(wheels.iter().map(|w| {
            let wheel = match w.wheel {
                Wheel::Torch => format!("PyTorch {}", w.version.unwrap_or("")),
                Wheel::RocmSdk => "rocm-sdk".to_owned(),
            };
            msg!(
                "runtime.wheel-in-site",
                wheel = wheel.trim_end(),
                site = w.site.describe()
            )
        }));
        out.push(
            WHEEL_RUNTIME_ONLY
                .finding(msg!("runtime.wheel-runtime-only", wheels = names))
                .with_all(
                    wheels
                        .iter()
                        .map(|w| Evidence::new(w.bundled.lib_dir.clone(), w.bundled.files())),
                )
                .with(Evidence::new(
                    msg!("runtime.search-path"),
                    facts.search_path_text(),
                ))
                .remedy(msg!("runtime.wheel-runtime-only-remedy")),
        );
        return;
    }
    if with_runtime.is_empty() && !foreign.is_empty() {
        // The Python environment is what would use the GPU, and a ROCm build of its PyTorch
        // brings its own runtime: the missing system ROCm is not what stands in the way (layer 7
        // says what is; YanWenKun/ComfyUI-Docker#187).
        out.push(
            NO_ROCM
                .finding_with(
                    Status::Info,
                    msg!(
                        "runtime.no-rocm-torch-not-rocm",
                        torch = i18n::list(foreign)
                    ),
                )
                .with(Evidence::new(
                    msg!("runtime.search-path"),
                    facts.search_path_text(),
                ))
                .with_all(
                    facts
                        .installs
                        .is_empty()
                        .then(|| Evidence::absent("/opt/rocm*")),
                )
                .remedy(msg!("runtime.no-rocm-torch-not-rocm-remedy")),
        );
        return;
    }
    if let Some(os) = os.filter(|o| with_runtime.is_empty() && o.is_nixos()) {
        // Nix-built programs carry run paths into the store: a search path without ROCm says
        // nothing about what they load, and a package-manager remedy would be wrong here.
        out.push(
            NIX_STORE_NOT_SEARCHED
                .finding(msg!("runtime.nix-store-not-searched"))
                .with(Evidence::new(
                    os.path.clone(),
                    format!("ID={}", os.id.as_deref().unwrap_or_default()),
                ))
                .with(Evidence::new(
                    msg!("runtime.search-path"),
                    facts.search_path_text(),
                ))
                .remedy(msg!("runtime.nix-store-not-searched-remedy")),
        );
        return;
    }
    if with_runtime.is_empty() {
        let mut finding = NO_ROCM
            .finding(msg!("runtime.no-rocm"))
            .with(Evidence::new(
                msg!("runtime.search-path"),
                facts.search_path_text(),
            ))
            .remedy(msg!("runtime.no-rocm-remedy"))
            .with_steps(install_rocm_steps(os));
        finding = finding.with_all(facts.installs.iter().map(|i| {
            Evidence::new(
                i.prefix.clone(),
                msg!(
                    "runtime.no-runtime-libraries",
                    install = i.describe(),
                    dir = i.lib_dir
                ),
            )
        }));
        if facts.installs.is_empty() {
            finding = finding.with(Evidence::absent("/opt/rocm*"));
        }
        out.push(finding);
        return;
    }
    out.push(installs_found(facts, &with_runtime));
    if facts.loaded_rocr().is_none() {
        let rocr = facts
            .effective()
            .filter(|i| i.libs.rocr.is_some())
            .or_else(|| with_runtime.iter().copied().find(|i| i.libs.rocr.is_some()));
        if let Some(i) = rocr {
            out.push(
                ROCR_NOT_ON_SEARCH_PATH
                    .finding(msg!(
                        "runtime.rocr-not-on-search-path",
                        install = i.describe()
                    ))
                    .with(Evidence::new(
                        msg!("runtime.search-path"),
                        facts.search_path_text(),
                    ))
                    .remedy(msg!(
                        "runtime.rocr-not-on-search-path-remedy",
                        dir = i.lib_dir
                    )),
            );
        }
    }
    mixed(facts, env, out);
}

fn chain(links: &[String]) -> String {
    if links.is_empty() {
        msg!("runtime.chain-directory")
    } else {
        format!("→ {}", links.join(" → "))
    }
}

fn installs_found(facts: &InstallFacts, with_runtime: &[&Install]) -> Finding {
    let names: Vec<String> = with_runtime.iter().map(|i| i.describe()).collect();
    let loaded = match facts.loaded_rocr() {
        Some(d) => msg!(
            "runtime.loaded-from",
            dir = d.dir,
            origin = origin(&d.origin)
        ),
        None => msg!("runtime.not-loaded"),
    };
    let mut finding = INSTALLS_FOUND
        .finding(msg!(
            "runtime.installs-found",
            installs = i18n::list(&names),
            loaded
        ))
        .with_all(facts.installs.iter().map(|i| {
            let version = match (&i.version, &i.version_source) {
                (Some(version), Some(source)) => msg!("runtime.install-version", version, source),
                _ => msg!("runtime.version-unknown"),
            };
            let via = if i.via.is_empty() {
                msg!("runtime.not-referenced")
            } else {
                msg!("runtime.reached-via", via = via_list(&i.via))
            };
            Evidence::new(
                i.prefix.clone(),
                msg!(
                    "runtime.install-evidence",
                    version,
                    libraries = i.libs.describe(),
                    via
                ),
            )
        }));
    if let Some(o) = &facts.opt_rocm {
        finding = finding.with(Evidence::new(OPT_ROCM, chain(&o.chain)));
    }
    if let Some(d) = facts.loaded_rocr() {
        let lib = d.libs.rocr.as_ref().expect("loaded_rocr has ROCr");
        finding = finding.with(Evidence::new(lib.path(), lib.describe()));
    }
    finding
}

fn origin(origin: &str) -> String {
    match origin {
        "default" => msg!("runtime.origin-default"),
        "LD_LIBRARY_PATH" => "LD_LIBRARY_PATH".to_owned(),
        file => msg!("runtime.origin-listed", file),
    }
}

/// How an install is reached, in the report's language: the facts keep `default library path
/// (DIR)` in English, like the other origins (which are names: variables, files).
fn via_list(via: &[String]) -> String {
    i18n::list(via.iter().map(|v| {
        match v
            .strip_prefix("default library path (")
            .and_then(|d| d.strip_suffix(')'))
        {
            Some(dir) => msg!("runtime.via-default-path", dir),
            None => v.clone(),
        }
    }))
}

fn mixed(facts: &InstallFacts, env: &BTreeMap<String, String>, out: &mut Vec<Finding>) {
    let reachable: Vec<&Install> = facts
        .reachable()
        .filter(|i| i.libs.runtime() || i.version.is_some())
        .collect();
    if reachable.len() < 2 {
        return;
    }
    // Keep the install /opt/rocm names, else the newest.
    let keep = facts
        .opt_rocm
        .as_ref()
        .and_then(|o| o.install)
        .and_then(|i| facts.installs.get(i))
        .filter(|i| !i.via.is_empty())
        .or_else(|| reachable.iter().copied().max_by_key(|i| i.version))
        .expect("two reachable installs");
    let mut steps: Vec<String> = Vec::new();
    // As remedy steps: the variables that lead to another install, set to the one kept or
    // with its directories removed.
    let mut env_steps: Vec<RemedyStep> = Vec::new();
    let mut dropped: Vec<&str> = Vec::new();
    for i in reachable.iter().filter(|i| i.prefix != keep.prefix) {
        for via in &i.via {
            let step = if via == OPT_ROCM {
                msg!("runtime.step-opt-rocm", prefix = keep.prefix)
            } else if via == "ROCM_PATH" || via == "HIP_PATH" {
                env_steps.extend(set_env_step(via, &keep.prefix));
                msg!(
                    "runtime.step-set-or-unset",
                    name = via,
                    prefix = keep.prefix
                )
            } else if let Some(dir) = via
                .strip_prefix("LD_LIBRARY_PATH (")
                .and_then(|d| d.strip_suffix(')'))
            {
                dropped.push(dir);
                msg!("runtime.step-ld-library-path", dir)
            } else if via.starts_with("default library path")
                || (i.kind == InstallKind::Distribution && via.contains(" ("))
            {
                // A distribution's ROCm lives in the system library directory, which its
                // ld.so.conf file (x86_64-linux-gnu.conf) lists for every library: removing
                // that entry would break the system, so the step is removing the packages.
                msg!("runtime.step-default-path")
            } else if let Some((file, dir)) = via.split_once(" (") {
                // A file that also lists a directory of the install kept (AMD's multi-version
                // rocm.conf, legacy-rocm-build#5977): name the line to remove, not the file.
                let shared = keep
                    .via
                    .iter()
                    .any(|k| k.split_once(" (").is_some_and(|(f, _)| f == file));
                if shared {
                    let dir = dir.strip_suffix(')').unwrap_or(dir);
                    msg!("runtime.step-ld-so-conf-line", dir, file)
                } else {
                    msg!("runtime.step-ld-so-conf", file)
                }
            } else {
                msg!("runtime.step-drop", via)
            };
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
    }
    env_steps.extend(library_path_step(env, &dropped));
    let versions: Vec<String> = reachable
        .iter()
        .map(|i| {
            i.version.map_or_else(
                || msg!("runtime.unknown-version-at", prefix = i.prefix),
                |version| msg!("runtime.version-at", version, prefix = i.prefix),
            )
        })
        .collect();
    out.push(
        MIXED_INSTALLS
            .finding(msg!(
                "runtime.mixed",
                count = reachable.len(),
                versions = i18n::list(&versions)
            ))
            .with_all(reachable.iter().map(|i| {
                Evidence::new(
                    i.prefix.clone(),
                    msg!("runtime.via", via = via_list(&i.via)),
                )
            }))
            .remedy(msg!(
                "runtime.mixed-remedy",
                install = keep.describe(),
                steps = i18n::join(&steps, &msg!("runtime.steps-separator"))
            ))
            .with_steps(env_steps),
    );
}

/// `LD_LIBRARY_PATH` without the directories `drop` (and their trailing-slash spellings):
/// `unset` when nothing is left, else `export` of the rest when it is plain.
fn library_path_step(env: &BTreeMap<String, String>, drop: &[&str]) -> Option<RemedyStep> {
    const VAR: &str = "LD_LIBRARY_PATH";
    let value = env.get(VAR).filter(|_| !drop.is_empty())?;
    let kept: Vec<&str> = value
        .split(':')
        .filter(|e| !e.is_empty() && !drop.contains(&e.trim_end_matches('/')))
        .collect();
    if kept.is_empty() {
        unset_env_step(VAR)
    } else {
        set_env_step(VAR, &kept.join(":"))
    }
}

// ----------------------------------------------------------------------------------------------
// HSA_OVERRIDE_GFX_VERSION

/// Whether the ROCr of `release` knows `processor`, so that an override naming it leaves the GPU
/// an agent. Where ROCr's ISA data (`facts::rocr_isa`) covers the release, its row decides. Where
/// it does not (release unknown, not read, or newer than the data), a processor any row knows is
/// accepted, and so is one LLVM names (`EF_AMDGPU_MACH`) that is newer than every processor of the
/// newest row: a release past the data may know it (gfx1250, which TheRock 7.14 builds for).
fn rocr_knows(release: Option<&crate::facts::install::RocmVersion>, processor: &str) -> bool {
    if let Some(row) = release.and_then(rocr_isa::release) {
        return row.knows(processor);
    }
    if rocr_isa::known_to_any(processor) {
        return true;
    }
    let newest = rocr_isa::newest()
        .processors
        .iter()
        .filter_map(|p| GfxVersion::from_name(p))
        .max();
    let past_data = release.is_none_or(|v| (v.major, v.minor) > rocr_isa::newest().last);
    past_data
        && (0..=0xff).any(|m| crate::codeobject::elf::mach_name(m) == Some(processor))
        && GfxVersion::from_name(processor).is_some_and(|g| newest.is_none_or(|n| g > n))
}

/// The family whose members can share code objects through an override: from GFX10 on, one
/// major.minor (gfx103x, gfx110x, gfx115x, gfx120x); on GFX9 the LLVM generic groups, with gfx908
/// and gfx90a on their own (they have no generic target); before GFX9, major.minor.
pub fn family(g: GfxVersion) -> String {
    if g.major == 9 {
        return crate::codeobject::target_id::family_of(g).map_or_else(
            || g.name(),
            |(generic, _)| generic.name.trim_end_matches("-generic").to_owned(),
        );
    }
    format!("gfx{}{:x}", g.major, g.minor)
}

/// A target among `have` of `target`'s family, with the `HSA_OVERRIDE_GFX_VERSION` value that
/// makes ROCr report it for `target`: the unsupported way users run a GPU on its sibling's code.
pub(crate) fn sibling_override<H: AsRef<str>>(
    target: &str,
    have: impl IntoIterator<Item = H>,
) -> Option<(String, String)> {
    let g = GfxVersion::from_name(target)?;
    have.into_iter().find_map(|h| {
        let h = h.as_ref();
        GfxVersion::from_name(h)
            .filter(|hg| h != target && family(*hg) == family(g))
            .map(|s| {
                (
                    format!("{}.{}.{}", s.major, s.minor, s.stepping),
                    h.to_owned(),
                )
            })
            // Never an override for a GPU that public reports show an override hanging: the
            // family's other siblings are no better tried on it.
            .filter(|_| !override_hazard::HAZARDS.iter().any(|h| h.target == target))
    })
}

/// Whether `HSA_OVERRIDE_GFX_VERSION=value`, which applies to every GPU, suits every visible one:
/// all of them in its family, and not an iGPU beside a dGPU (the report advises hiding the iGPU
/// then, not running it as something else).
fn one_override_fits(visible: &[&Agent], value: &str) -> bool {
    let Ok(o) = parse_override(value) else {
        return false;
    };
    let kinds: BTreeSet<Option<bool>> = visible.iter().map(|a| a.integrated).collect();
    !(kinds.contains(&Some(true)) && kinds.contains(&Some(false)))
        && visible.iter().all(|a| {
            a.name
                .as_deref()
                .and_then(GfxVersion::from_name)
                .is_some_and(|g| family(g) == family(o))
        })
}

/// The overrides as libhsakmt applies them, derived once in `facts::overrides`.
type Overrides = crate::facts::overrides::OverrideFacts;

/// " (read from ROCm 6.3 on…)" after a per-node suggestion, when the release may not read it.
fn since(ov: &Overrides) -> String {
    match ov.release {
        Some(_) if ov.per_node_read => String::new(),
        Some(v) => msg!("runtime.per-node-since-older", version = v.to_string()),
        None => msg!("runtime.per-node-since-unknown"),
    }
}

fn override_value(o: GfxVersion) -> String {
    format!("{}.{}.{}", o.major, o.minor, o.stepping)
}

/// Reports a malformed or unknown override, for each variable libhsakmt reads for some GPU (the
/// global one alone when no GPU is known). `Err` when it leaves ROCr without GPUs: a malformed
/// value makes libhsakmt refuse the whole topology.
fn override_format(
    ov: &Overrides,
    env: &BTreeMap<String, String>,
    gpus: &[&Agent],
    out: &mut Vec<Finding>,
) -> Result<(), ()> {
    let mut read: BTreeSet<(&str, &str)> = ov
        .by_node
        .values()
        .map(|(var, value)| (var.as_str(), value.as_str()))
        .collect();
    if gpus.is_empty()
        && let Some(value) = env.get(HSA_OVERRIDE_GFX_VERSION)
    {
        read.insert((HSA_OVERRIDE_GFX_VERSION, value));
    }
    let mut result = Ok(());
    for (var, value) in read {
        let evidence = Evidence::new(format!("env:{var}"), format!("{value:?}"));
        match parse_override(value) {
            Err(e) => {
                let why = match e {
                    OverrideError::Empty => msg!("runtime.env-empty"),
                    OverrideError::NotTriple => msg!("runtime.env-not-triple"),
                    OverrideError::TooLarge => msg!("runtime.env-too-large"),
                    OverrideError::FollowedBy(rest) => {
                        msg!("runtime.env-followed-by", rest = format!("{rest:?}"))
                    }
                    OverrideError::OutOfRange => msg!("runtime.env-out-of-range"),
                };
                out.push(
                    HSA_OVERRIDE_MALFORMED
                        .finding(msg!(
                            "runtime.override-malformed",
                            var,
                            value = format!("{value:?}"),
                            why
                        ))
                        .with(evidence)
                        .remedy(msg!("runtime.override-malformed-remedy"))
                        .with_steps(unset_env_step(var)),
                );
                result = Err(());
            }
            Ok(g) if !rocr_knows(ov.release.as_ref(), &g.name()) => {
                out.push(
                    HSA_OVERRIDE_UNKNOWN_TARGET
                        .finding(msg!(
                            "runtime.override-unknown-target",
                            var,
                            value,
                            target = g.name()
                        ))
                        .with(evidence)
                        .remedy(msg!("runtime.override-unknown-target-remedy"))
                        .with_steps(unset_env_step(var)),
                );
                result = Err(());
            }
            Ok(_) => {}
        }
    }
    result
}

/// Per-node variables the release ignores (info), or that name no GPU libhsakmt numbers (warn).
fn per_node_notes(
    ov: &Overrides,
    inv: Option<&Inventory>,
    gpus: &[&Agent],
    out: &mut Vec<Finding>,
) {
    if ov.per_node.is_empty() {
        return;
    }
    let evidence = |(var, value): &(String, String)| Evidence::new(format!("env:{var}"), value);
    let gpu_name = |a: &Agent| {
        inv.and_then(|i| i.agent_name(a.node)).map_or_else(
            || msg!("facts.gpu-at-node", node = a.node),
            |n| n.to_string(),
        )
    };
    let suggest = || {
        i18n::list(
            gpus.iter()
                .filter(|a| ov.hsakmt.contains_key(&a.node))
                .map(|a| msg!("runtime.node-gpu-var", node = ov.node(a), gpu = gpu_name(a))),
        )
    };
    if !ov.per_node_read {
        let Some(version) = ov.release else { return };
        let effect = match gpus.iter().find_map(|a| ov.by_node.get(&a.node)) {
            Some((_, value)) => msg!("runtime.per-node-ignored-global", value),
            None => msg!("runtime.per-node-ignored-none"),
        };
        out.push(
            HSA_OVERRIDE_PER_NODE_IGNORED
                .finding(msg!(
                    "runtime.per-node-ignored",
                    vars = i18n::list(ov.per_node.values().map(|(var, _)| var.clone())),
                    version = version.to_string(),
                    effect
                ))
                .with_all(ov.per_node.values().map(evidence))
                .remedy(msg!("runtime.per-node-ignored-remedy", suggest = suggest())),
        );
        return;
    }
    let counted = ov.hsakmt.len() as u32;
    // The KFD node of each per-node variable, and whether a GPU reads it.
    let kfd_of = |node: &u32| {
        ov.hsakmt
            .iter()
            .find(|(_, id)| *id == node)
            .map(|(k, _)| *k)
    };
    let read_by_gpu = |node: &u32| kfd_of(node).is_some_and(|k| gpus.iter().any(|a| a.node == k));
    let unread = ov.per_node.keys().filter(|n| !read_by_gpu(n)).count();
    for (node, var) in &ov.per_node {
        let kfd = kfd_of(node);
        if read_by_gpu(node) {
            continue;
        }
        let what = if kfd.is_some() {
            msg!("runtime.node-is-cpu")
        } else {
            msg!(
                "runtime.node-absent",
                count = counted,
                last = counted.saturating_sub(1)
            )
        };
        // The variable read by no GPU goes; its value moves to the GPU's node when there is
        // one such variable and one GPU to give it to, whose own variable is unset (else
        // which value for which GPU is the user's to say).
        let candidates: Vec<&&Agent> = gpus
            .iter()
            .filter(|a| ov.hsakmt.contains_key(&a.node))
            .collect();
        let moved = match candidates.as_slice() {
            [a] if unread == 1 && !ov.per_node.contains_key(&ov.node(a)) => {
                set_env_step(&crate::target::per_node_override_name(ov.node(a)), &var.1)
            }
            _ => None,
        };
        out.push(
            HSA_OVERRIDE_NODE_NOT_GPU
                .finding(msg!(
                    "runtime.node-not-gpu",
                    var = var.0,
                    value = var.1,
                    node,
                    what
                ))
                .with(evidence(var))
                .remedy(msg!("runtime.node-not-gpu-remedy", suggest = suggest()))
                .with_steps(unset_env_step(&var.0))
                .with_steps(moved),
        );
    }
}

/// Whether the visible GPUs include an integrated one beside a discrete one (the report then
/// advises hiding the iGPU: runtime.igpu-beside-dgpu).
fn igpu_and_dgpu(visible: &[&Agent]) -> bool {
    visible.iter().any(|a| a.integrated == Some(true))
        && visible.iter().any(|a| a.integrated == Some(false))
}

/// Whether the global override changes a visible iGPU beside a dGPU (runtime.hsa-override-igpu).
fn global_reaches_igpu(ov: &Overrides, visible: &[&Agent]) -> bool {
    igpu_and_dgpu(visible)
        && visible.iter().any(|a| {
            a.integrated == Some(true)
                && ov
                    .of(a)
                    .is_some_and(|(var, o)| var == HSA_OVERRIDE_GFX_VERSION && a.gfx != Some(o))
        })
}

fn override_checks(f: &Facts, ov: &Overrides, visible: &[&Agent], out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<(u8, String, &str, GfxVersion), Vec<&Agent>> = BTreeMap::new();
    for a in visible {
        let (Some(g), Some((var, o))) = (a.gfx, ov.of(a)) else {
            continue;
        };
        let kind = if g == o {
            0
        } else if family(g) == family(o) {
            1
        } else {
            2
        };
        groups.entry((kind, g.name(), var, o)).or_default().push(a);
    }
    let mixed = igpu_and_dgpu(visible);
    let global_igpu = global_reaches_igpu(ov, visible);
    // A variable whose unset step was given (several GPUs of other families read one).
    let mut unset_given: BTreeSet<&str> = BTreeSet::new();
    for ((kind, real, var, o), agents) in groups {
        let value = override_value(o);
        let gpus = node_list(f, &agents);
        let evidence = agents.iter().map(|a| {
            Evidence::new(
                format!("{}/nodes/{}", crate::facts::topology::TOPOLOGY_DIR, a.node),
                format!(
                    "{real}{}",
                    a.marketing_name
                        .as_deref()
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default()
                ),
            )
        });
        let env = Evidence::new(format!("env:{var}"), value.clone());
        let igpus_only = agents.iter().all(|a| a.integrated == Some(true));
        let dgpus_only = agents.iter().all(|a| a.integrated == Some(false));
        let global = var == HSA_OVERRIDE_GFX_VERSION;
        let finding = match kind {
            0 => {
                let f = HSA_OVERRIDE_REDUNDANT
                    .finding(msg!("runtime.override-redundant", var, value, real, gpus))
                    .with(env)
                    .with_all(evidence);
                // The global override that only the iGPU needs, seen from the dGPU.
                if global && dgpus_only && global_igpu {
                    f.caused_by(&HSA_OVERRIDE_IGPU)
                } else {
                    f
                }
            }
            1 => {
                let hazard = override_hazard::lookup(&real, &value);
                let summary = if hazard.is_some() {
                    msg!(
                        "runtime.override-hazard",
                        var,
                        value,
                        real,
                        gpus,
                        target = o.name()
                    )
                } else {
                    msg!(
                        "runtime.override-same-family",
                        var,
                        value,
                        real,
                        gpus,
                        target = o.name()
                    )
                };
                let f =
                    HSA_OVERRIDE_SAME_FAMILY
                        .finding(summary)
                        .with(env)
                        .with_all(evidence)
                        .with_all(hazard.map(|h| {
                            Evidence::new(msg!("runtime.override-hazard-reports"), h.source)
                        }));
                if mixed && igpus_only {
                    // Beside a dGPU the report advises hiding the iGPU: never "keep it".
                    f.caused_by(if global && global_igpu {
                        &HSA_OVERRIDE_IGPU
                    } else {
                        &IGPU_BESIDE_DGPU
                    })
                    .remedy(msg!(
                        "runtime.override-same-family-igpu-remedy",
                        real,
                        target = o.name()
                    ))
                } else if hazard.is_some() {
                    f.remedy(msg!("runtime.override-hazard-remedy", var, real))
                } else {
                    f.remedy(msg!("runtime.override-same-family-remedy", real))
                }
            }
            _ => {
                // The GPUs the global value suits (another GPU of the value's family): it was
                // set for them, so it moves to their nodes instead of going away for all.
                let meant_for: Vec<&&Agent> = if global {
                    visible
                        .iter()
                        .filter(|a| {
                            a.gfx.is_some_and(|g| g != o && family(g) == family(o))
                                && ov.of(a).is_some_and(|(v, _)| v == HSA_OVERRIDE_GFX_VERSION)
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let per_node: Vec<String> = meant_for
                    .iter()
                    .map(|a| crate::target::per_node_override_name(ov.node(a)))
                    .collect();
                let remedy = if per_node.is_empty() {
                    msg!(
                        "runtime.override-wrong-family-remedy",
                        var,
                        real,
                        siblings = family_hint(real.as_str())
                    )
                } else {
                    msg!(
                        "runtime.override-wrong-family-per-node-remedy",
                        var,
                        value,
                        real,
                        others = node_list(f, &meant_for.iter().map(|a| **a).collect::<Vec<_>>()),
                        per_node = per_node
                            .iter()
                            .map(|v| format!("{v}={value}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        since = since(ov)
                    )
                };
                let moved = !(global && global_igpu) && unset_given.insert(var);
                let finding = HSA_OVERRIDE_WRONG_FAMILY
                    .finding(msg!(
                        "runtime.override-wrong-family",
                        var,
                        value,
                        real,
                        gpus,
                        target = o.name()
                    ))
                    .with(env)
                    .with_all(evidence)
                    .remedy(remedy)
                    // Another family's code never runs: the variable goes (a sibling's value is
                    // a choice the prose leaves to the user), and the GPUs it suits get it per
                    // node. Once per variable, and not when the global override reaches an iGPU
                    // beside a dGPU: runtime.hsa-override-igpu unsets it.
                    .with_steps(unset_env_step(var).filter(|_| moved))
                    .with_steps(
                        per_node
                            .iter()
                            .filter(|_| moved && ov.per_node_read)
                            .filter_map(|v| set_env_step(v, &value))
                            .collect::<Vec<_>>(),
                    );
                // An iGPU beside a dGPU that the global override reaches: the cause is the
                // override reaching it, whose remedy hides the iGPU (runtime.hsa-override-igpu).
                if global && global_igpu && mixed && igpus_only {
                    finding.caused_by(&HSA_OVERRIDE_IGPU)
                } else {
                    finding
                }
            }
        };
        out.push(finding);
    }
}

fn family_hint(real: &str) -> String {
    let Some(g) = GfxVersion::from_name(real) else {
        return msg!("runtime.family-none-known");
    };
    let siblings: Vec<&str> = rocr_isa::all_processors()
        .into_iter()
        .filter(|p| *p != real)
        .filter(|p| GfxVersion::from_name(p).is_some_and(|x| family(x) == family(g)))
        .collect();
    if siblings.is_empty() {
        msg!("runtime.family-no-siblings")
    } else {
        siblings
            .iter()
            .filter_map(|p| GfxVersion::from_name(p))
            .map(|x| format!("{}.{}.{} = {}", x.major, x.minor, x.stepping, x.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The GPUs a finding is about, each in the one display form ([`crate::checks::gpu_names`]).
fn node_list(f: &Facts, agents: &[&Agent]) -> String {
    crate::checks::gpu_names(f, agents.iter().map(|a| a.node))
}

// ----------------------------------------------------------------------------------------------
// Device masks

/// Which GPUs ROCr and HIP expose, as indices into the GPU agents in node order.
pub(crate) struct View {
    /// After HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES), in HIP's order.
    pub(crate) hip: Vec<usize>,
    /// Names of the mask variables in effect.
    masks: Vec<&'static str>,
}

/// The device masks of `env` applied to `gpus`: ROCr's and HIP's selections, when set, and the
/// GPU agents (indices into `gpus`) each exposes. Pure: layer 4 reports on the masks
/// ([`visibility`]), layer 6 compiles for what HIP exposes.
pub(crate) struct Masked {
    /// `ROCR_VISIBLE_DEVICES`'s selection among all GPUs.
    rocr_mask: Option<Selection>,
    /// HIP's mask (`HIP_VISIBLE_DEVICES`, else `CUDA_VISIBLE_DEVICES`) and its selection among
    /// ROCr's GPUs.
    hip_mask: Option<(&'static str, Selection)>,
    /// What ROCr exposes.
    rocr: Vec<usize>,
    /// What HIP exposes, in HIP's order.
    pub(crate) hip: Vec<usize>,
}

/// [`Masked`] for `gpus` under `env`.
pub(crate) fn masked(gpus: &[&Agent], env: &BTreeMap<String, String>) -> Masked {
    let uuids = |list: &[usize]| -> Vec<Option<String>> {
        list.iter().map(|&i| gpus[i].uuid.clone()).collect()
    };
    let all: Vec<usize> = (0..gpus.len()).collect();
    let rocr_mask = env
        .get(ROCR_VISIBLE_DEVICES)
        .map(|v| rocr_visible(v, &uuids(&all)));
    let rocr = rocr_mask.as_ref().map_or(all, |s| s.visible.clone());
    let hip_mask = [HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES]
        .into_iter()
        .find_map(|n| {
            let v = env.get(n).filter(|v| !v.is_empty())?;
            Some((n, hip_visible(v, &uuids(&rocr))))
        });
    let hip = hip_mask.as_ref().map_or_else(
        || rocr.clone(),
        |(_, s)| s.visible.iter().map(|&i| rocr[i]).collect(),
    );
    Masked {
        rocr_mask,
        hip_mask,
        rocr,
        hip,
    }
}

/// Which GPU agents (indices into `gpus`) a HIP program sees under the device masks of `env`,
/// with layer 4's findings about the masks pushed to `out`.
pub(crate) fn visibility(
    f: &Facts,
    gpus: &[&Agent],
    env: &BTreeMap<String, String>,
    out: &mut Vec<Finding>,
) -> View {
    let all: Vec<usize> = (0..gpus.len()).collect();
    let uuids = |list: &[usize]| -> Vec<Option<String>> {
        list.iter().map(|&i| gpus[i].uuid.clone()).collect()
    };
    let mut problems: Vec<Evidence> = Vec::new();
    let mut masks = Vec::new();
    let mut note = |name: &str, value: &str, s: &Selection, over: &[usize]| {
        let mut bad = Vec::new();
        if let Some((token, why)) = &s.stopped_at {
            bad.push(msg!(
                "runtime.mask-stopped",
                token = format!("{token:?}"),
                why
            ));
        }
        for token in &s.ignored {
            bad.push(msg!(
                "runtime.mask-ignored",
                token = format!("{token:?}"),
                why = s.ignored_reason
            ));
        }
        if !bad.is_empty() {
            problems.push(Evidence::new(
                format!("env:{name}"),
                msg!(
                    "runtime.mask-problem",
                    value = format!("{value:?}"),
                    problems = i18n::join(&bad, &msg!("runtime.steps-separator")),
                    selected = s.visible.len(),
                    total = over.len()
                ),
            ));
        }
    };

    let Masked {
        rocr_mask,
        hip_mask,
        rocr,
        hip,
    } = masked(gpus, env);
    if let Some(s) = &rocr_mask {
        masks.push(ROCR_VISIBLE_DEVICES);
        note(ROCR_VISIBLE_DEVICES, &env[ROCR_VISIBLE_DEVICES], s, &all);
    }
    let hip_var = hip_mask.as_ref().map(|(name, _)| *name);
    if let Some((name, s)) = &hip_mask {
        masks.push(*name);
        note(name, &env[*name], s, &rocr);
    }
    let mut ocl_none = false;
    if let Some(v) = env.get(GPU_DEVICE_ORDINAL).filter(|v| !v.is_empty()) {
        masks.push(GPU_DEVICE_ORDINAL);
        let s = hip_visible(v, &uuids(&rocr));
        ocl_none = s.visible.is_empty();
        note(GPU_DEVICE_ORDINAL, v, &s, &rocr);
    }

    let describe = |list: &[usize]| -> String {
        if list.is_empty() {
            return msg!("runtime.no-gpu");
        }
        list.iter()
            .enumerate()
            .map(|(k, &i)| {
                let a = gpus[i];
                msg!(
                    "runtime.device-entry",
                    index = k,
                    gpu = crate::checks::gpu_names(f, [a.node]),
                    name = a.name.as_deref().unwrap_or("gfx?"),
                    uuid = a
                        .uuid
                        .as_deref()
                        .map(|u| format!(" {u}"))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let devices = || {
        [
            (msg!("runtime.gpus-node-order"), describe(&all)),
            (msg!("runtime.rocr-devices"), describe(&rocr)),
            (msg!("runtime.hip-devices"), describe(&hip)),
        ]
        .map(|(source, value)| Evidence::new(source, value))
    };
    let values: Vec<String> = masks
        .iter()
        .map(|n| format!("{n}={}", env.get(*n).map(String::as_str).unwrap_or("")))
        .collect();
    if !problems.is_empty() {
        let status = if hip.is_empty() {
            Status::Fail
        } else {
            VISIBLE_DEVICES_OUT_OF_RANGE.status
        };
        let summary = if hip.is_empty() {
            msg!("runtime.mask-sees-none", values = values.join(" "))
        } else {
            msg!(
                "runtime.mask-sees-some",
                values = values.join(" "),
                hip = hip.len(),
                total = gpus.len()
            )
        };
        let two = masks.contains(&ROCR_VISIBLE_DEVICES) && hip_var.is_some();
        let remedy = if two {
            msg!("runtime.mask-two-remedy")
        } else {
            msg!("runtime.mask-one-remedy")
        };
        // Two masks: HIP's goes, ROCr's stays. One mask: its right value is the user's choice.
        let step = hip_var.filter(|_| two).and_then(unset_env_step);
        out.push(
            VISIBLE_DEVICES_OUT_OF_RANGE
                .finding_with(status, summary)
                .with_all(problems)
                .with_all(devices())
                .remedy(remedy)
                .with_steps(step),
        );
    } else if !masks.is_empty() {
        let mut finding = VISIBLE_DEVICES_MASK
            .finding(msg!(
                "runtime.mask-summary",
                values = values.join(" "),
                rocr = rocr.len(),
                hip = hip.len(),
                total = gpus.len(),
                opencl = if ocl_none {
                    msg!("runtime.opencl-none")
                } else {
                    String::new()
                }
            ))
            .with_all(devices());
        if let (Some(h), Some(c)) = (env.get(HIP_VISIBLE_DEVICES), env.get(CUDA_VISIBLE_DEVICES)) {
            if !h.is_empty() {
                finding = finding.with(Evidence::new(
                    format!("env:{CUDA_VISIBLE_DEVICES}"),
                    msg!("runtime.cuda-ignored", value = format!("{c:?}")),
                ));
            }
        }
        out.push(finding);
    }
    View { hip, masks }
}

// ----------------------------------------------------------------------------------------------
// iGPU beside dGPU

fn igpu(inv: &Inventory, gpus: &[&Agent], view: &View, ov: &Overrides, out: &mut Vec<Finding>) {
    let integrated = |i: &usize| gpus[*i].integrated == Some(true);
    let discrete = |i: &usize| gpus[*i].integrated == Some(false);
    let visible_igpus: Vec<usize> = view.hip.iter().copied().filter(integrated).collect();
    if visible_igpus.is_empty() || !view.hip.iter().any(discrete) {
        return;
    }
    // The mask that keeps the discrete GPUs: by index in node order (= ROCr's order without a
    // mask) and by UUID, which does not depend on the order.
    let dgpus: Vec<usize> = (0..gpus.len()).filter(discrete).collect();
    let by_index = dgpus
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let by_uuid: Option<String> = dgpus
        .iter()
        .map(|&i| gpus[i].uuid.clone())
        .collect::<Option<Vec<_>>>()
        .map(|u| u.join(","));
    let names = |list: &[usize]| -> String {
        list.iter()
            .map(|&i| {
                let a = gpus[i];
                let gpu = inv.agent_name(a.node).map_or_else(
                    || msg!("facts.gpu-at-node", node = a.node),
                    |n| n.to_string(),
                );
                let target = a.name.as_deref().unwrap_or("gfx?");
                match a.marketing_name.as_deref() {
                    Some(name) => msg!("runtime.gpu-name", gpu, name, target),
                    None => msg!("runtime.gpu-name-unnamed", gpu, target),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mask = if view.masks.is_empty() {
        msg!(
            "runtime.igpu-mask",
            index = by_index,
            uuid = by_uuid
                .as_deref()
                .map(|uuids| msg!("runtime.igpu-mask-uuid", uuids))
                .unwrap_or_default()
        )
    } else {
        msg!(
            "runtime.igpu-mask-rocr",
            devices = by_uuid.clone().unwrap_or_else(|| by_index.clone()),
            masks = i18n::join(
                view.masks.iter().filter(|m| **m != ROCR_VISIBLE_DEVICES),
                &msg!("runtime.and")
            )
        )
    };
    // One mask as the command: ROCr's, by UUID (or index), which every ROCm program honours.
    // Not HIP's beside it: HIP counts the devices ROCr leaves, so both at once can hide the
    // dGPU too.
    // What the step acts on: the GPUs' PCI addresses, their stable identity (as every step
    // that acts on a GPU names it).
    let hidden = visible_igpus
        .iter()
        .map(|&i| {
            let node = gpus[i].node;
            inv.gpus
                .iter()
                .find(|g| g.nodes.contains(&node))
                .and_then(|g| g.pci_address.clone())
                .unwrap_or_else(|| format!("node {node}"))
        })
        .collect::<Vec<_>>()
        .join(",");
    let hide = mask_step(
        ROCR_VISIBLE_DEVICES,
        by_uuid.as_deref().unwrap_or(&by_index),
        &hidden,
    );
    let evidence = |a: &Agent| {
        Evidence::new(
            format!("{}/nodes/{}", crate::facts::topology::TOPOLOGY_DIR, a.node),
            msg!(
                "runtime.gpu-evidence",
                target = a.name.as_deref().unwrap_or("gfx?"),
                marketing = a
                    .marketing_name
                    .as_deref()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default(),
                kind = if a.integrated == Some(true) {
                    msg!("runtime.integrated")
                } else {
                    msg!("runtime.discrete")
                },
                uuid = a
                    .uuid
                    .as_deref()
                    .map(|u| format!(", {u}"))
                    .unwrap_or_default()
            ),
        )
    };
    out.push(
        IGPU_BESIDE_DGPU
            .finding(msg!(
                "runtime.igpu-beside-dgpu",
                igpus = names(&visible_igpus),
                dgpus = names(
                    &view
                        .hip
                        .iter()
                        .copied()
                        .filter(discrete)
                        .collect::<Vec<_>>()
                )
            ))
            .with_all(view.hip.iter().map(|&i| evidence(gpus[i])))
            .remedy(mask.clone())
            .with_steps(hide),
    );
    // The global override, where it changes a visible iGPU (a per-node one is the user's choice
    // for that GPU; runtime.hsa-override-same-family reports it).
    let visible: Vec<&Agent> = view.hip.iter().map(|&i| gpus[i]).collect();
    if !global_reaches_igpu(ov, &visible) {
        return;
    }
    let global = |i: &usize| {
        ov.of(gpus[*i])
            .filter(|(var, o)| *var == HSA_OVERRIDE_GFX_VERSION && gpus[*i].gfx != Some(*o))
            .map(|(_, o)| o)
    };
    let overridden: Vec<usize> = visible_igpus
        .iter()
        .copied()
        .filter(|i| global(i).is_some())
        .collect();
    let Some(o) = overridden.first().and_then(global) else {
        return;
    };
    let value = override_value(o);
    let per_node = |list: &[usize]| {
        list.iter()
            .map(|&i| {
                format!(
                    "{}={value}",
                    crate::target::per_node_override_name(ov.node(gpus[i]))
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The discrete GPUs the global override changes: they need it, per node.
    let dgpus_needing: Vec<usize> = view
        .hip
        .iter()
        .copied()
        .filter(discrete)
        .filter(|i| global(i).is_some())
        .collect();
    // Moving the override to the iGPU's own node only helps when the iGPU can run that code:
    // the override is of its family.
    let fits_igpus = overridden
        .iter()
        .all(|&i| gpus[i].gfx.is_some_and(|g| family(g) == family(o)));
    let dgpu_names = names(
        &view
            .hip
            .iter()
            .copied()
            .filter(discrete)
            .collect::<Vec<_>>(),
    );
    let remedy = if dgpus_needing.is_empty() && !fits_igpus {
        msg!(
            "runtime.override-igpu-foreign-remedy",
            mask,
            dgpus = dgpu_names.clone(),
            target = o.name()
        )
    } else if dgpus_needing.is_empty() {
        msg!(
            "runtime.override-igpu-only-remedy",
            mask,
            dgpus = dgpu_names,
            per_node = per_node(&overridden),
            since = since(ov)
        )
    } else {
        msg!(
            "runtime.override-igpu-remedy",
            mask,
            per_node = per_node(&dgpus_needing),
            since = since(ov)
        )
    };
    out.push(
        HSA_OVERRIDE_IGPU
            .finding(msg!(
                "runtime.override-igpu",
                igpus = names(&overridden),
                target = o.name()
            ))
            .with(Evidence::new(
                format!("env:{HSA_OVERRIDE_GFX_VERSION}"),
                value.clone(),
            ))
            .with_all(overridden.iter().map(|&i| evidence(gpus[i])))
            .remedy(remedy)
            // Hiding the iGPU is runtime.igpu-beside-dgpu's step; these are the override's.
            .step(RemedyStep::run(
                Action::UnsetEnv,
                HSA_OVERRIDE_GFX_VERSION,
                format!("unset {HSA_OVERRIDE_GFX_VERSION}"),
                msg!("runtime.step-unset-override"),
            ))
            .with_steps(dgpus_needing.iter().map(|&i| {
                let var = crate::target::per_node_override_name(ov.node(gpus[i]));
                RemedyStep::run(
                    Action::SetEnv,
                    var.clone(),
                    format!("export {var}={value}"),
                    msg!("runtime.step-per-node-override", var, value),
                )
            })),
    );
}

/// `export VAR=value` hiding GPUs, when the value is a plain list (indices, `GPU-` UUIDs): a
/// UUID read from sysfs goes into no command otherwise.
fn mask_step(var: &str, value: &str, hidden: &str) -> Option<RemedyStep> {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ',' | '-'));
    plain.then(|| {
        RemedyStep::run(
            Action::HideGpu,
            hidden,
            format!("export {var}={value}"),
            msg!("runtime.step-mask", var),
        )
    })
}

// ----------------------------------------------------------------------------------------------
// Remedy steps

/// A variable name that may go into a command: a shell identifier.
fn plain_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value from the machine that may go into a command as it is: only `[A-Za-z0-9._,:/-]`, the
/// characters the shell takes literally (the driver layer's caution with group names).
pub(crate) fn plain_value(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ',' | ':' | '/' | '-'))
}

/// `unset NAME`, when the name is plain.
fn unset_env_step(name: &str) -> Option<RemedyStep> {
    plain_name(name).then(|| {
        RemedyStep::run(
            Action::UnsetEnv,
            name,
            format!("unset {name}"),
            msg!("runtime.step-unset-env", name),
        )
    })
}

/// `export NAME=value`, when both are plain.
pub(crate) fn set_env_step(name: &str, value: &str) -> Option<RemedyStep> {
    (plain_name(name) && plain_value(value)).then(|| {
        RemedyStep::run(
            Action::SetEnv,
            name,
            format!("export {name}={value}"),
            msg!("runtime.step-set-env", name, value),
        )
    })
}

/// Installing ROCm's runtime, per family. AMD's package repositories (registered by the
/// `amdgpu-install` package) name the meta package `rocm` for apt, dnf and zypper (ROCm
/// install-on-linux, "Quick start installation guide" and "Package manager integration": `rocm`,
/// `rocm-hip-runtime`, …); Arch packages ROCm itself, its runtime meta package being
/// `rocm-hip-runtime` (extra repository).
fn install_rocm_steps(os: Option<&crate::facts::os_release::OsRelease>) -> Vec<RemedyStep> {
    use crate::facts::os_release::Distro;
    crate::facts::os_release::families(os)
        .into_iter()
        .map(|d| {
            let (package, text) = if d == Distro::Arch {
                ("rocm-hip-runtime", msg!("runtime.step-install-rocm-arch"))
            } else {
                ("rocm", msg!("runtime.step-install-rocm"))
            };
            RemedyStep::run(Action::Install, package, d.install(package), text).on(d)
        })
        .collect()
}

// ----------------------------------------------------------------------------------------------
// Release support

fn release_support(f: &Facts, visible: &[&Agent], ov: &Overrides, out: &mut Vec<Finding>) {
    let facts = &f.installs;
    if !facts.captured || !facts.installs.iter().any(|i| i.libs.runtime()) {
        return;
    }
    let Some(install) = facts.effective() else {
        out.push(RELEASE_UNKNOWN.finding(msg!("runtime.release-unknown-install")));
        return;
    };
    let Some(version) = install.version else {
        out.push(
            RELEASE_UNKNOWN
                .finding(msg!(
                    "runtime.release-unknown-version",
                    prefix = install.prefix
                ))
                .with(Evidence::new(
                    install.lib_dir.clone(),
                    install.libs.describe(),
                )),
        );
        return;
    };
    let dropped = runtime_isa(f, install, &version, visible, ov, out);
    known_bad(f, install, &version, visible, &dropped, out);
    let Some(release) = support::release(&version) else {
        let newest = support::newest();
        let summary = if support::newer_than_data(&version) {
            msg!(
                "runtime.release-newer-than-data",
                version,
                newest = newest.name(),
                date = newest.released.unwrap_or(support::AS_OF)
            )
        } else {
            msg!(
                "runtime.release-not-in-table",
                version,
                rows = i18n::list(support::RELEASES.iter().map(|r| r.name()))
            )
        };
        out.push(
            RELEASE_UNKNOWN.finding(summary).with(Evidence::new(
                install
                    .version_source
                    .clone()
                    .unwrap_or_else(|| install.prefix.clone()),
                version.to_string(),
            )),
        );
        return;
    };
    let targets: BTreeSet<String> = visible.iter().filter_map(|a| a.name.clone()).collect();
    let nodes_of = |t: &str| -> String {
        let list: Vec<&Agent> = visible
            .iter()
            .copied()
            .filter(|a| a.name.as_deref() == Some(t))
            .collect();
        // A processor every GPU shares is said once ("all 8 GPUs"): eight names in a line
        // about the release say nothing the GPU list does not.
        let every = f
            .inventory
            .as_ref()
            .map_or(0, |inv| inv.gpu_agents().count());
        if list.len() > 1 && list.len() == every {
            msg!("facts.all-gpus", count = every)
        } else {
            node_list(f, &list)
        }
    };
    let source = Evidence::new(
        msg!("runtime.support-table"),
        format!("ROCm {}: {}", release.name(), release.source),
    );
    let listed = msg!(
        "runtime.supports",
        version,
        targets = i18n::list(release.supported(version.patch))
    );
    let mut supported = Vec::new();
    // A GPU ROCr drops has its finding above; what the release lists for it changes nothing.
    for t in targets.iter().filter(|t| !dropped.contains(*t)) {
        match release.status(t, version.patch) {
            Some(Support::Supported) => supported.push(t.clone()),
            Some(Support::Deprecated) => out.push(
                TARGET_DEPRECATED
                    .finding(msg!(
                        "runtime.target-deprecated",
                        target = t,
                        gpus = nodes_of(t),
                        release = release.name()
                    ))
                    .with(source.clone()),
            ),
            status => {
                let how = if status == Some(Support::Unsupported) {
                    msg!("runtime.listed-unsupported")
                } else {
                    msg!("runtime.not-listed")
                };
                let via = visible
                    .iter()
                    .filter(|a| a.name.as_deref() == Some(t.as_str()))
                    .find_map(|a| ov.of(a))
                    .filter(|(_, o)| {
                        release.status(&o.name(), version.patch) == Some(Support::Supported)
                    });
                let preview = release.stream == support::Stream::Preview;
                // An override onto a supported sibling is judged by the sibling; without one, an
                // APU whose release page was not read is not judged at all.
                if via.is_none() && !release.judges(t) {
                    let mut finding = APU_SUPPORT_UNJUDGED
                        .finding(msg!(
                            "runtime.apu-support-unjudged",
                            target = t,
                            gpus = nodes_of(t),
                            release = release.name()
                        ))
                        .with(source.clone());
                    if let Some(page) = release.apus_page {
                        finding = finding.with(Evidence::new(msg!("runtime.apu-page"), page));
                    }
                    out.push(finding);
                    continue;
                }
                let finding = match via {
                    Some((var, o)) => TARGET_UNSUPPORTED.finding_with(
                        Status::Info,
                        msg!(
                            "runtime.target-via-override",
                            var,
                            target = t,
                            gpus = nodes_of(t),
                            how,
                            release = release.name(),
                            supported = o.name()
                        ),
                    ),
                    // AMD's list describes AMD's builds; a distribution builds its own packages
                    // for the targets it chooses (Debian and Fedora build for many AMD does not
                    // list), so only the libraries' own code (layer 5) can say.
                    None if install.kind == InstallKind::Distribution => TARGET_DISTRIBUTION_BUILD
                        .finding(msg!(
                            "runtime.target-not-listed-distribution",
                            target = t,
                            gpus = nodes_of(t),
                            how,
                            release = release.name(),
                            prefix = install.prefix
                        )),
                    None if preview => TARGET_UNSUPPORTED
                        .finding(msg!(
                            "runtime.target-not-in-preview",
                            target = t,
                            gpus = nodes_of(t),
                            release = release.name()
                        ))
                        .remedy(msg!("runtime.target-not-in-preview-remedy", target = t)),
                    None => TARGET_UNSUPPORTED
                        .finding(msg!(
                            "runtime.target-unsupported",
                            target = t,
                            gpus = nodes_of(t),
                            how,
                            release = release.name()
                        ))
                        .remedy(
                            match sibling_override(
                                t,
                                release
                                    .supported(version.patch)
                                    .into_iter()
                                    .filter(|_| ov.by_node.is_empty()),
                            )
                            .filter(|(value, _)| one_override_fits(visible, value))
                            {
                                Some((value, sibling)) => match later_release(t, &version) {
                                    Some(later) => msg!(
                                        "runtime.target-unsupported-override-remedy",
                                        listed,
                                        target = t,
                                        value,
                                        sibling,
                                        later
                                    ),
                                    None => {
                                        msg!(
                                            "runtime.target-unsupported-override-remedy-none",
                                            listed,
                                            target = t,
                                            value,
                                            sibling,
                                            newest = support::newest().name()
                                        ) + &last_listed(t, &version)
                                    }
                                },
                                None => match later_release(t, &version) {
                                    Some(later) => msg!(
                                        "runtime.target-unsupported-remedy",
                                        listed,
                                        target = t,
                                        later
                                    ),
                                    None => {
                                        msg!(
                                            "runtime.target-unsupported-remedy-none",
                                            listed,
                                            target = t,
                                            newest = support::newest().name()
                                        ) + &last_listed(t, &version)
                                    }
                                },
                            },
                        ),
                };
                out.push(
                    finding.with(source.clone()).with(Evidence::new(
                        install
                            .version_source
                            .clone()
                            .unwrap_or_else(|| install.prefix.clone()),
                        version.to_string(),
                    )),
                );
            }
        }
    }
    if !supported.is_empty() {
        let targets = i18n::list(
            supported
                .iter()
                .map(|t| msg!("runtime.target-with-gpus", target = t, gpus = nodes_of(t))),
        );
        let summary = if release.stream == support::Stream::Preview {
            msg!(
                "runtime.targets-in-preview",
                targets,
                release = release.name()
            )
        } else {
            msg!("runtime.targets-supported", targets, version)
        };
        out.push(TARGET_SUPPORTED.finding(summary).with(source));
    }
}

/// Where no later release lists `target`: the last earlier one that did (" ROCm 6.3 was the last
/// release that lists it, as deprecated."), so a remedy offers the way back; empty when none did.
fn last_listed(target: &str, version: &crate::facts::install::RocmVersion) -> String {
    match support::last_listed_before(target, version) {
        Some((r, Support::Supported)) => msg!("runtime.last-listed-supported", release = r.name()),
        Some((r, _)) => msg!("runtime.last-listed-deprecated", release = r.name()),
        None => String::new(),
    }
}

/// GPUs whose target the install's release is known to break (`facts::rocm_bad`): the runtime
/// lacks the fix, or carries it while the kernel's KFD does not report what the fix reads. One
/// finding per bug, naming the GPUs; GPUs ROCr drops anyway are left out.
fn known_bad(
    f: &Facts,
    install: &Install,
    version: &crate::facts::install::RocmVersion,
    visible: &[&Agent],
    dropped: &BTreeSet<String>,
    out: &mut Vec<Finding>,
) {
    let line = (version.major, version.minor);
    let preview = support::release(version).map_or(
        version.major == 7 && (9..=13).contains(&version.minor),
        |r| r.stream == support::Stream::Preview,
    );
    let mut targets: Vec<&str> = visible.iter().filter_map(|a| a.name.as_deref()).collect();
    targets.sort_unstable();
    targets.dedup();
    for target in targets.into_iter().filter(|t| !dropped.contains(*t)) {
        let agents: Vec<&Agent> = visible
            .iter()
            .copied()
            .filter(|a| a.name.as_deref() == Some(target))
            .collect();
        for bug in crate::facts::rocm_bad::for_target(target) {
            let runtime_fixed = bug.runtime_fixed(line, preview);
            // The GPU nodes whose properties lack what the fix reads.
            let lacking: Vec<u32> = bug
                .kfd_property
                .map(|p| {
                    agents
                        .iter()
                        .filter(|a| {
                            f.kfd.as_ref().is_some_and(|k| {
                                k.topology.nodes.iter().any(|n| {
                                    n.id == a.node
                                        && n.properties.is_some()
                                        && !n.props().extra.contains_key(p)
                                })
                            })
                        })
                        .map(|a| a.node)
                        .collect()
                })
                .unwrap_or_default();
            if runtime_fixed && lacking.is_empty() {
                continue;
            }
            let gpus = node_list(f, &agents);
            let fixed = format!("{}.{}", bug.fixed.0, bug.fixed.1);
            let fixed_preview = format!("{}.{}", bug.fixed_preview.0, bug.fixed_preview.1);
            let property = bug.kfd_property.unwrap_or_default();
            // The release half is named while the runtime is affected; the kernel half while a
            // GPU's KFD lacks the property the fixed runtime needs.
            let summary = if runtime_fixed {
                msg!(
                    "runtime.release-known-bad-kernel",
                    target,
                    gpus,
                    version,
                    property
                )
            } else {
                msg!(
                    "runtime.release-known-bad",
                    target,
                    gpus,
                    version,
                    fixed,
                    preview = fixed_preview
                )
            };
            let remedy = match (runtime_fixed, lacking.is_empty()) {
                (false, true) => msg!(
                    "runtime.release-known-bad-remedy",
                    fixed,
                    preview = fixed_preview,
                    source = bug.source
                ),
                (false, false) => msg!(
                    "runtime.release-known-bad-kernel-remedy",
                    fixed,
                    preview = fixed_preview,
                    property,
                    source = bug.source
                ),
                (true, _) => msg!(
                    "runtime.release-known-bad-kernel-only-remedy",
                    property,
                    source = bug.source
                ),
            };
            // A distribution's build may carry the fix as a patch, and its own packages are
            // what it updates: AMD's release is the way out, not the only one.
            let remedy = if install.kind == InstallKind::Distribution && !runtime_fixed {
                format!(
                    "{remedy} {}",
                    msg!("runtime.release-known-bad-distribution", fixed)
                )
            } else {
                remedy
            };
            out.push(
                RELEASE_KNOWN_BAD
                    .finding(summary)
                    .with(Evidence::new(
                        install
                            .version_source
                            .clone()
                            .unwrap_or_else(|| install.prefix.clone()),
                        version.to_string(),
                    ))
                    .with(Evidence::new(
                        bug.source,
                        msg!("runtime.release-known-bad-reported", symptom = bug.symptom),
                    ))
                    .with_all(lacking.iter().map(|n| {
                        Evidence::new(
                            format!(
                                "{}/nodes/{n}/properties",
                                crate::facts::topology::TOPOLOGY_DIR
                            ),
                            msg!("runtime.property-absent", property),
                        )
                    }))
                    .remedy(remedy),
            );
        }
    }
}

/// The releases after the installed one that support `target`, said as a remedy's last
/// option ("ROCm 6.4.1 or later, the first release that lists it"); `None` when no release the
/// data knows does, which the remedy then says instead of sending the user to upgrade in vain.
fn later_release(target: &str, version: &crate::facts::install::RocmVersion) -> Option<String> {
    Some(match support::later_support(target, version) {
        support::Later::Never => return None,
        support::Later::Unknown => msg!("runtime.later-unknown"),
        support::Later::Supports { first, until } => {
            let first = format!("{}.{}.{}", first.0, first.1, first.2);
            match until {
                None => msg!("runtime.later-from", first),
                Some(last) => msg!("runtime.later-between", first, last = last.name()),
            }
        }
    })
}

/// GPUs whose processor (after the overrides) the install's ROCr does not know, from
/// `facts::rocr_isa`: ROCr builds no agent for them, so no ROCm program sees them. One finding per
/// processor; returns the GPUs' own processor names, whose release-support findings it replaces.
/// Nothing when the data does not cover the release.
fn runtime_isa(
    f: &Facts,
    install: &Install,
    version: &crate::facts::install::RocmVersion,
    visible: &[&Agent],
    ov: &Overrides,
    out: &mut Vec<Finding>,
) -> BTreeSet<String> {
    let mut dropped = BTreeSet::new();
    let Some(row) = rocr_isa::release(version) else {
        return dropped;
    };
    // Each GPU's processor as ROCr sees it, with the GPUs of each.
    let mut by_processor: BTreeMap<String, Vec<&Agent>> = BTreeMap::new();
    for a in visible {
        let Some(real) = a.name.as_deref() else {
            continue;
        };
        let seen = ov.of(a).map_or_else(|| real.to_owned(), |(_, o)| o.name());
        if !row.knows(&seen) {
            by_processor.entry(seen).or_default().push(a);
            dropped.insert(real.to_owned());
        }
    }
    for (processor, agents) in by_processor {
        let target = processor.as_str();
        let mut remedy = match rocr_isa::first_knowing(target) {
            Some(first) => {
                let supported = first_supported(target).map_or_else(String::new, |r| {
                    msg!("runtime.rocr-unknown-target-supported", release = r)
                });
                msg!(
                    "runtime.rocr-unknown-target-remedy",
                    first = first.name(),
                    target,
                    supported
                )
            }
            None => msg!(
                "runtime.rocr-unknown-target-none-remedy",
                target,
                newest = rocr_isa::newest().lines()
            ),
        };
        let mut steps: Vec<RemedyStep> = rocr_isa::first_knowing(target)
            .map(|first| {
                RemedyStep::say(
                    Action::Upgrade,
                    "rocm",
                    msg!("runtime.step-upgrade-rocr", first = first.name(), target),
                )
            })
            .into_iter()
            .collect();
        // Not supported by AMD, but what users do: run the GPU as a sibling this ROCr knows.
        let sibling = sibling_override(
            target,
            row.processors.iter().filter(|_| ov.by_node.is_empty()),
        )
        .filter(|(value, _)| one_override_fits(visible, value));
        if let Some((value, sibling)) = sibling {
            remedy.push(' ');
            remedy.push_str(&msg!(
                "runtime.rocr-unknown-target-override",
                value,
                sibling,
                version
            ));
            steps.extend(set_env_step(HSA_OVERRIDE_GFX_VERSION, &value));
        }
        out.push(
            ROCR_UNKNOWN_TARGET
                .finding(msg!(
                    "runtime.rocr-unknown-target",
                    version,
                    target,
                    gpus = node_list(f, &agents),
                    lines = row.lines()
                ))
                .with(Evidence::new(
                    msg!("runtime.rocr-isa-table"),
                    format!("ROCm {}: {}", row.lines(), row.source),
                ))
                .with(Evidence::new(
                    install
                        .version_source
                        .clone()
                        .unwrap_or_else(|| install.prefix.clone()),
                    version.to_string(),
                ))
                .remedy(remedy)
                .with_steps(steps),
        );
    }
    dropped
}

/// The first production release whose support row lists `target` as supported: `6.4.1` when
/// the row lists it from a patch release on.
fn first_supported(target: &str) -> Option<String> {
    support::RELEASES
        .iter()
        .filter(|r| r.stream != support::Stream::Preview)
        .find_map(|r| {
            let e = r
                .entries
                .iter()
                .find(|e| e.target == target && e.support == Support::Supported)?;
            Some(if e.since_patch > 0 {
                format!("{}.{}", r.name(), e.since_patch)
            } else {
                r.name()
            })
        })
}

/// Parsers for the variables ROCr, HIP and libhsakmt read, each following its reader's code.
pub mod env {
    use crate::msg;

    /// Which GPUs a mask selects.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Selection {
        /// Indices into the list the mask applies to, in the mask's order.
        pub visible: Vec<usize>,
        /// The entry where reading stopped and why; every entry after it is dropped too.
        pub stopped_at: Option<(String, String)>,
        /// Entries never read (ROCr reads at most as many entries as there are GPUs) or
        /// skipped (HIP skips repeats).
        pub ignored: Vec<String>,
        /// Why `ignored` entries were not used.
        pub ignored_reason: String,
    }

    /// `ROCR_VISIBLE_DEVICES` as ROCr's `RvdFilter` reads it. `uuids` are the GPUs' UUIDs in
    /// node order (`GPU-<16 hex>`, `None` when the GPU has none). Entries are split at commas,
    /// upper-cased and trimmed; an entry starting with `G` is a UUID (5–20 characters, a prefix
    /// matching exactly one GPU), anything else a number in C's `strtol(…, 0)` syntax. Reading
    /// stops at the first entry that is malformed, out of range, ambiguous or a repeat; only as
    /// many entries as there are GPUs are read; an empty value selects no GPU.
    pub fn rocr_visible(value: &str, uuids: &[Option<String>]) -> Selection {
        let mut s = Selection {
            visible: Vec::new(),
            stopped_at: None,
            ignored: Vec::new(),
            ignored_reason: msg!("runtime.env-beyond-count"),
        };
        if value.is_empty() {
            s.stopped_at = Some((String::new(), msg!("runtime.env-empty-hides")));
            return s;
        }
        let mut tokens: Vec<String> = value
            .split(',')
            .map(|t| t.to_ascii_uppercase().trim().to_owned())
            .collect();
        // getline() yields no empty token after a trailing comma.
        if value.ends_with(',') {
            tokens.pop();
        }
        let n = uuids.len();
        let upper: Vec<Option<String>> = uuids
            .iter()
            .map(|u| u.as_ref().map(|u| u.to_ascii_uppercase()))
            .collect();
        for (k, token) in tokens.iter().enumerate() {
            if k >= n {
                s.ignored.push(token.clone());
                continue;
            }
            if s.stopped_at.is_some() {
                continue;
            }
            let index = if token.is_empty() {
                Err(msg!("runtime.env-entry-empty"))
            } else if token.starts_with('G') {
                uuid_index(token, &upper)
            } else {
                match strtol(token) {
                    Some(i) if i < 0 || i >= n as i64 => Err(if n == 1 {
                        msg!("runtime.env-rocr-out-of-range-one", count = n)
                    } else {
                        msg!("runtime.env-rocr-out-of-range-many", count = n)
                    }),
                    Some(i) => Ok(i as usize),
                    None => Err(if token.contains('-') && !token.starts_with('-') {
                        msg!("runtime.env-not-index-or-uuid-range")
                    } else {
                        msg!("runtime.env-not-index-or-uuid")
                    }),
                }
            };
            match index {
                Ok(i) if s.visible.contains(&i) => {
                    s.stopped_at = Some((token.clone(), msg!("runtime.env-repeats")));
                }
                Ok(i) => s.visible.push(i),
                Err(why) => s.stopped_at = Some((token.clone(), why)),
            }
        }
        s
    }

    fn uuid_index(token: &str, uuids: &[Option<String>]) -> Result<usize, String> {
        if !(5..=20).contains(&token.len()) {
            return Err(msg!("runtime.env-not-uuid"));
        }
        let hits: Vec<usize> = uuids
            .iter()
            .enumerate()
            .filter(|(_, u)| u.as_deref().is_some_and(|u| u.starts_with(token)))
            .map(|(i, _)| i)
            .collect();
        match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(msg!("runtime.env-no-uuid-match")),
            _ => Err(msg!("runtime.env-many-uuid-match")),
        }
    }

    /// C's `strtol(s, &end, 0)` with `*end == '\0'` required: optional sign, `0x` hex, leading
    /// `0` octal, else decimal.
    fn strtol(s: &str) -> Option<i64> {
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (radix, digits) =
            if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                (16, h)
            } else if body.len() > 1 && body.starts_with('0') {
                (8, &body[1..])
            } else {
                (10, body)
            };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let v = i64::from_str_radix(digits, radix).ok()?;
        Some(if neg { -v } else { v })
    }

    /// `HIP_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` (and OpenCL's `GPU_DEVICE_ORDINAL`) as
    /// HIP's ROCm device layer reads them. `uuids` are the GPUs ROCr exposes, in ROCr's order.
    /// Entries are split at commas without trimming; an entry containing `GPU-` selects the
    /// first GPU whose UUID contains it (case-sensitive); anything else must be a plain decimal
    /// index (`01`, `+1`, ` 1` are refused). Reading stops at the first bad entry; repeats are
    /// skipped. An empty value is treated as unset by HIP and is not passed here.
    pub fn hip_visible(value: &str, uuids: &[Option<String>]) -> Selection {
        let mut s = Selection {
            visible: Vec::new(),
            stopped_at: None,
            ignored: Vec::new(),
            ignored_reason: msg!("runtime.env-repeat-skipped"),
        };
        let mut tokens: Vec<&str> = value.split(',').collect();
        if value.ends_with(',') {
            tokens.pop();
        }
        let n = uuids.len();
        for token in tokens {
            let index = if token.contains("GPU-") {
                uuids
                    .iter()
                    .position(|u| u.as_deref().unwrap_or("GPU-XX").contains(token))
                    .ok_or_else(|| msg!("runtime.env-no-uuid-match"))
            } else {
                match token.parse::<usize>() {
                    Ok(i) if i.to_string() == token && i < n => Ok(i),
                    Ok(i) if i.to_string() == token => Err(if n == 1 {
                        msg!("runtime.env-hip-out-of-range-one", count = n)
                    } else {
                        msg!("runtime.env-hip-out-of-range-many", count = n)
                    }),
                    _ => Err(if token.contains('-') && !token.starts_with('-') {
                        msg!("runtime.env-not-plain-range")
                    } else {
                        msg!("runtime.env-not-plain")
                    }),
                }
            };
            match index {
                Ok(i) if s.visible.contains(&i) => s.ignored.push(token.to_owned()),
                Ok(i) => s.visible.push(i),
                Err(why) => {
                    s.stopped_at = Some((token.to_owned(), why));
                    break;
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::env::*;
    use super::*;

    /// LD_LIBRARY_PATH loses exactly the dropped directories; nothing left is `unset`, a rest
    /// the shell would read is no command.
    #[test]
    fn library_path_step_drops_only_those_directories() {
        let env = |v: &str| BTreeMap::from([("LD_LIBRARY_PATH".to_owned(), v.to_owned())]);
        let command =
            |v: &str, drop: &[&str]| library_path_step(&env(v), drop).and_then(|s| s.command);
        assert_eq!(
            command("/a/lib:/opt/rocm-6.0.0/lib/:/b", &["/opt/rocm-6.0.0/lib"]).as_deref(),
            Some("export LD_LIBRARY_PATH=/a/lib:/b")
        );
        assert_eq!(
            command("/opt/rocm-6.0.0/lib", &["/opt/rocm-6.0.0/lib"]).as_deref(),
            Some("unset LD_LIBRARY_PATH")
        );
        assert_eq!(
            command("/a b:/opt/rocm-6.0.0/lib", &["/opt/rocm-6.0.0/lib"]),
            None
        );
        assert_eq!(command("/a/lib", &[]), None);
        assert_eq!(library_path_step(&BTreeMap::new(), &["/x"]), None);
    }

    fn v(s: &str) -> GfxVersion {
        GfxVersion::from_name(s).unwrap()
    }

    /// Overrides are judged against the release's ROCr ISA row; past the data, a processor LLVM
    /// names that is newer than the newest row's is accepted (gfx1250), an older one or a name
    /// no ROCr ever had is not.
    #[test]
    fn override_targets_follow_the_release_row() {
        let r = |s: &str| crate::facts::install::RocmVersion::parse(s).unwrap();
        assert!(rocr_knows(Some(&r("5.7.1")), "gfx1100"));
        assert!(!rocr_knows(Some(&r("5.2.3")), "gfx1100"));
        assert!(!rocr_knows(Some(&r("7.0.2")), "gfx940"));
        assert!(!rocr_knows(Some(&r("7.0.2")), "gfx1250"));
        assert!(rocr_knows(Some(&r("7.2.0")), "gfx1250"));
        assert!(rocr_knows(None, "gfx1250"));
        assert!(rocr_knows(None, "gfx1151"));
        for release in [None, Some(r("7.2.0")), Some(r("6.4.1"))] {
            assert!(!rocr_knows(release.as_ref(), "gfx1000"), "{release:?}");
            assert!(!rocr_knows(release.as_ref(), "gfx600"), "{release:?}");
        }
        // Between rows (6.4 was not read): what some row knows.
        assert!(rocr_knows(Some(&r("6.4.1")), "gfx1201"));
        assert!(!rocr_knows(Some(&r("6.4.1")), "gfx1250"));
    }

    /// #16 item 11 through the check itself: `HSA_OVERRIDE_GFX_VERSION=12.5.0` (gfx1250) is no
    /// unknown target on a release the ISA rows do not reach (7.1, 7.2, TheRock's 7.9–7.14 and
    /// 10.x: none of their `isa.cpp` could be read, see data/rocr_isa.toml), nor on an unknown
    /// release; 12.5.1 (gfx1251) likewise. A value naming no processor LLVM knows (12.9.9) still
    /// fails there, and on 7.0, whose registry was read without gfx1250, 12.5.0 fails too.
    #[test]
    fn override_to_gfx1250_is_judged_by_the_rows_then_by_llvm() {
        let r = |s: &str| crate::facts::install::RocmVersion::parse(s).unwrap();
        let run = |release: Option<crate::facts::install::RocmVersion>, value: &str| {
            let ov = Overrides {
                per_node_read: true,
                release,
                ..Overrides::default()
            };
            let env = BTreeMap::from([(HSA_OVERRIDE_GFX_VERSION.to_owned(), value.to_owned())]);
            let mut out = Vec::new();
            let result = override_format(&ov, &env, &[], &mut out);
            let ids: Vec<&str> = out.iter().map(|f| f.id).collect();
            (result, ids)
        };
        let unknown = (Err(()), vec!["runtime.hsa-override-unknown-target"]);
        for release in [
            None,
            Some(r("7.1.1")),
            Some(r("7.2.0")),
            Some(r("7.9.0")),
            Some(r("7.13.0")),
            Some(r("7.14.0")),
            Some(r("10.0.0")),
            Some(r("10.1.0")),
        ] {
            assert_eq!(run(release, "12.5.0"), (Ok(()), vec![]), "{release:?}");
            assert_eq!(run(release, "12.5.1"), (Ok(()), vec![]), "{release:?}");
            assert_eq!(run(release, "12.9.9"), unknown, "{release:?}");
            assert_eq!(run(release, "11.0.5"), unknown, "{release:?}");
        }
        assert_eq!(run(Some(r("7.0.2")), "12.5.0"), unknown);
        assert_eq!(run(Some(r("7.0.2")), "9.5.0"), (Ok(()), vec![]));
        assert_eq!(run(Some(r("6.2.4")), "9.5.0"), unknown);
    }

    /// A distribution's ROCr in /usr/lib/x86_64-linux-gnu (listed by Debian's and Ubuntu's
    /// x86_64-linux-gnu.conf) beside AMD's /opt install: the remedy removes the distribution's
    /// packages, never the entry of the system library directory
    /// (ROCm/legacy-rocm-build#3656, fixture ubuntu-rocminfo-beside-rocm-6.2).
    #[test]
    fn mixed_with_a_distribution_install_never_removes_the_system_library_directory() {
        use crate::source::Source;
        use crate::testfs::{link, write};
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        write(b, "fixture.toml", "");
        write(b, "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        write(b, "etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n");
        write(
            b,
            "etc/ld.so.conf.d/x86_64-linux-gnu.conf",
            "/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n",
        );
        write(b, "opt/rocm-6.2.0/.info/version", "6.2.0-66\n");
        write(b, "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1.13.60200", "");
        link(
            b,
            "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.13.60200",
        );
        link(b, "opt/rocm", "rocm-6.2.0");
        write(b, "usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.11.0", "");
        link(
            b,
            "usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.11.0",
        );
        let facts = Facts::collect(&Source::fixture(b).unwrap());
        let mut out = Vec::new();
        mixed(&facts.installs, &facts.platform.env, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let remedy = out[0].remedy.as_deref().unwrap();
        assert!(remedy.contains("distribution's ROCm packages"), "{remedy}");
        assert!(!remedy.contains("x86_64-linux-gnu.conf"), "{remedy}");
    }

    /// The Core SDK's `/opt/rocm/core-10.0` reached as `/opt/rocm/lib` (its compatibility link,
    /// ROCm/TheRock#6716) and as itself is one install: no warning. Beside it a classic
    /// `/opt/rocm-6.4.0` listed in the same `rocm.conf` (AMD's multi-version advice,
    /// legacy-rocm-build#5977) is a real mix, whose remedy removes that line only.
    #[test]
    fn core_sdk_links_are_one_install_and_a_classic_beside_it_is_a_mix() {
        use crate::source::Source;
        use crate::testfs::{link, write};
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        write(b, "fixture.toml", "");
        write(b, "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        write(b, "etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n");
        write(
            b,
            "etc/ld.so.conf.d/zz-core.conf",
            "/opt/rocm/core-10.0/lib\n",
        );
        let core = "opt/rocm/core-10.0";
        write(b, &format!("{core}/.info/version"), "10.0.0\n");
        write(b, &format!("{core}/lib/libhsa-runtime64.so.1.21.0"), "");
        link(
            b,
            &format!("{core}/lib/libhsa-runtime64.so.1"),
            "libhsa-runtime64.so.1.21.0",
        );
        link(b, "opt/rocm/lib", "/etc/alternatives/rocm-lib");
        link(b, "etc/alternatives/rocm-lib", "/opt/rocm/core-10.0/lib");
        let facts = Facts::collect(&Source::fixture(b).unwrap());
        let mut out = Vec::new();
        mixed(&facts.installs, &facts.platform.env, &mut out);
        assert!(out.is_empty(), "{out:?}");

        write(
            b,
            "etc/ld.so.conf.d/rocm.conf",
            "/opt/rocm-6.4.0/lib\n/opt/rocm/lib\n",
        );
        write(b, "opt/rocm-6.4.0/.info/version", "6.4.0\n");
        write(b, "opt/rocm-6.4.0/lib/libhsa-runtime64.so.1.15.60400", "");
        link(
            b,
            "opt/rocm-6.4.0/lib/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.15.60400",
        );
        let facts = Facts::collect(&Source::fixture(b).unwrap());
        let mut out = Vec::new();
        mixed(&facts.installs, &facts.platform.env, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let remedy = out[0].remedy.as_deref().unwrap();
        assert!(
            remedy.starts_with("Keep ROCm 10.0.0 at /opt/rocm/core-10.0"),
            "{remedy}"
        );
        assert!(
            remedy.contains("remove the line /opt/rocm-6.4.0/lib from /etc/ld.so.conf.d/rocm.conf"),
            "{remedy}"
        );
        assert!(!remedy.contains("/opt/rocm/lib"), "{remedy}");
        assert!(!remedy.contains("zz-core.conf"), "{remedy}");
    }

    #[test]
    fn families() {
        assert_eq!(family(v("gfx1031")), family(v("gfx1030")));
        assert_eq!(family(v("gfx1036")), family(v("gfx1030")));
        assert_eq!(family(v("gfx1103")), family(v("gfx1100")));
        assert_ne!(family(v("gfx1150")), family(v("gfx1100")));
        assert_ne!(family(v("gfx1201")), family(v("gfx1100")));
        assert_eq!(family(v("gfx90c")), family(v("gfx900")));
        assert_ne!(family(v("gfx90a")), family(v("gfx908")));
        assert_ne!(family(v("gfx90a")), family(v("gfx900")));
        assert_eq!(family(v("gfx950")), family(v("gfx942")));
        assert!(family_hint("gfx1150").contains("11.5.1 = gfx1151"));
    }

    fn uuids(n: usize) -> Vec<Option<String>> {
        (0..n)
            .map(|i| Some(format!("GPU-{:016x}", 0xabcd_0000_0000_0000u64 + i as u64)))
            .collect()
    }

    #[test]
    fn rocr_mask_follows_rvd_filter() {
        let u = uuids(4);
        let sel = |v: &str| rocr_visible(v, &u);
        assert_eq!(sel("3,0").visible, [3, 0]);
        assert_eq!(sel(" 1 , 2 ").visible, [1, 2]);
        assert_eq!(sel("0x1,010").visible, [1], "010 is octal 8: out of range");
        assert_eq!(sel("1,4,2").visible, [1]);
        assert!(sel("1,4,2").stopped_at.unwrap().1.contains("out of range"));
        assert_eq!(sel("1,1").visible, [1]);
        assert!(sel("1,1").stopped_at.unwrap().1.contains("repeats"));
        assert!(sel("").visible.is_empty());
        assert!(sel("").stopped_at.is_some());
        assert!(sel("-1").visible.is_empty());
        // A range is no number: nothing at all is selected.
        let r = sel("0-3");
        assert!(r.visible.is_empty());
        assert!(r.stopped_at.unwrap().1.contains("ranges"));
        // UUIDs: case-insensitive unique prefixes.
        assert_eq!(sel("gpu-abcd000000000002").visible, [2]);
        assert_eq!(sel("GPU-ABCD000000000003,0").visible, [3, 0]);
        assert!(
            sel("GPU-ABCD")
                .stopped_at
                .unwrap()
                .1
                .contains("more than one")
        );
        assert!(sel("GPU-ffff").stopped_at.unwrap().1.contains("no GPU"));
        assert!(sel("GPU-XX").stopped_at.is_some());
        // Only as many entries as GPUs are read.
        let two = rocr_visible("0,1,5", &u[..2]);
        assert_eq!(two.visible, [0, 1]);
        assert_eq!(two.ignored, ["5"]);
        assert_eq!(sel("0,").visible, [0]);
        assert!(sel("0,,1").stopped_at.is_some());
    }

    #[test]
    fn hip_mask_follows_rocdevice() {
        let u = uuids(2);
        let sel = |v: &str| hip_visible(v, &u);
        assert_eq!(sel("1,0").visible, [1, 0]);
        assert_eq!(sel("1,1,0").visible, [1, 0]);
        assert_eq!(sel("1,1,0").ignored, ["1"]);
        assert_eq!(sel("0,2,1").visible, [0]);
        assert!(sel("0,2,1").stopped_at.unwrap().1.contains("out of range"));
        for bad in ["01", "+1", " 1", "-1", "0-1", "x"] {
            assert!(sel(bad).visible.is_empty(), "{bad:?}");
        }
        // UUIDs: substring of ROCr's lower-case UUID, case-sensitive.
        assert_eq!(sel("GPU-abcd000000000001").visible, [1]);
        assert!(sel("GPU-ABCD000000000001").visible.is_empty());
        assert_eq!(sel("0,").visible, [0]);
        // HIP indices count the GPUs ROCr leaves.
        let rocr = rocr_visible("1", &uuids(8));
        assert_eq!(rocr.visible, [1]);
        let left: Vec<Option<String>> = rocr.visible.iter().map(|&i| uuids(8)[i].clone()).collect();
        assert!(hip_visible("1", &left).visible.is_empty());
    }
}
