//! Layer 5: the ROCm libraries of each install, and whether their kernel files cover the GPUs.
//!
//! The install checks (a `hip*` wrapper without its backend, what is present) need no GPU. The
//! per-target checks run only when layers 1–4 have no failure: without a driver, a GPU or a usable
//! runtime, "no kernels for the target" would only repeat the lower failure. The target checked is
//! the effective one: `HSA_OVERRIDE_GFX_VERSION`, when ROCr accepts it, replaces every GPU's.

mod libenv;
pub mod rules;

use std::collections::{BTreeMap, BTreeSet};

use crate::codeobject::Verdict;
use crate::codeobject::compat::{Gpu, GpuTarget};
use crate::facts::Facts;
use crate::facts::fatbin::{FatBinary, Unread};
use crate::facts::libraries::{InstallLibraries, KernelDir, LibraryFacts, WRAPPERS};
use crate::finding::{
    Action, CODE_OBJECT_NEEDS_FEATURE_CHANGE, COVERAGE, Evidence, Finding,
    HIP_WRAPPER_WITHOUT_BACKEND, HIPBLASLT_NO_KERNELS_FOR_TARGET, LIBRARIES_NOT_CAPTURED,
    LIBRARY_FILES_MALFORMED, LIBRARY_FILES_UNREADABLE, MIOPEN_NO_KDB_FOR_TARGET,
    NO_CODE_OBJECT_FOR_TARGET, ROCBLAS_NO_KERNELS_FOR_TARGET, RemedyStep, Rule, Subject,
};
use crate::source::problem::Problem;
use crate::target::GfxVersion;
use crate::{i18n, msg};

use super::runtime::HSA_OVERRIDE_GFX_VERSION;

/// The GPUs' effective targets: processor → the evidence of the nodes that have it.
pub(crate) type Targets = BTreeMap<String, Vec<Evidence>>;

/// Layer 5 findings; `below` are the findings of layers 1–4.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    // The environment matters whether or not an install was captured (a wheel's MIOpen, a pip
    // amdsmi beside TheRock's wheels, ROCr's variables).
    libenv::check(f, &mut out);
    let libs = &f.libraries;
    if !libs.captured {
        out.push(LIBRARIES_NOT_CAPTURED.finding(msg!("libraries.not-captured")));
        return out;
    }
    for i in &libs.installs {
        wrappers(f, i, &mut out);
    }
    let targets = targets(f, below);
    let override_evidence = targets.as_ref().and_then(|_| {
        f.platform
            .env
            .get(HSA_OVERRIDE_GFX_VERSION)
            .map(|v| Evidence::new(format!("env:{HSA_OVERRIDE_GFX_VERSION}"), format!("{v:?}")))
    });
    if let Some(targets) = &targets {
        for i in &libs.installs {
            per_target(i, targets, override_evidence.as_ref(), &mut out);
        }
    }
    if let Some(gpus) = gpus(f, below) {
        for i in &libs.installs {
            for lib in &i.present {
                if let Some(code) = &lib.code {
                    out.extend(
                        fat_binary_findings(
                            code,
                            &msg!(
                                "libraries.library-of",
                                library = lib.name,
                                install = i.describe
                            ),
                            &gpus,
                            override_evidence.as_ref(),
                            [NO_CODE_OBJECT_FOR_TARGET, CODE_OBJECT_NEEDS_FEATURE_CHANGE],
                            &msg!("libraries.no-code-object-remedy"),
                        )
                        .into_iter()
                        .map(|finding| finding.about(Subject::library(&lib.name))),
                    );
                }
            }
        }
    }
    let problems: Vec<&Problem> = f
        .problems
        .libraries
        .iter()
        .chain(libs.installs.iter().flat_map(|i| &i.unread))
        .chain(libs.installs.iter().flat_map(|i| {
            i.present.iter().filter_map(|p| match &p.code_unread {
                Some(Unread::Problem { problem }) => Some(problem),
                _ => None,
            })
        }))
        .collect();
    out.extend(super::hardware::problems(
        &problems,
        &msg!("libraries.problem-files"),
        [LIBRARY_FILES_UNREADABLE, LIBRARY_FILES_MALFORMED],
    ));
    coverage(libs, targets.as_ref(), &mut out);
    // One rocblas install or HSA_XNACK=1 for every install and library that needs it.
    crate::finding::drop_repeated_steps(below, &mut out);
    out
}

/// Layer 5's note when it gave no finding: which installs were looked into, and that none holds
/// a library the probe knows.
pub(crate) fn empty_note(f: &Facts) -> String {
    let libs = &f.libraries;
    if libs.installs.is_empty() {
        return msg!("libraries.note-no-install");
    }
    let empty: Vec<&InstallLibraries> = libs
        .installs
        .iter()
        .filter(|i| i.present.is_empty())
        .collect();
    if empty.len() == libs.installs.len() {
        return msg!(
            "libraries.note-no-libraries",
            installs = i18n::list(empty.iter().map(|i| &i.describe))
        );
    }
    let found: Vec<&str> = libs
        .installs
        .iter()
        .flat_map(|i| i.present.iter().map(|p| p.name.as_str()))
        .collect();
    msg!(
        "libraries.note-nothing-to-report",
        libraries = i18n::list(found)
    )
}

/// The GPUs as code-object loading sees them (identical ones grouped), with
/// `HSA_OVERRIDE_GFX_VERSION` applied, or `None` when GPU-specific checks must stay silent.
pub(crate) fn gpus(f: &Facts, below: &[Finding]) -> Option<Vec<Gpu>> {
    if crate::checks::gpu_checks_blocked(below) {
        return None;
    }
    let overrides = f.overrides.effective(f.inventory.as_ref());
    let mut gpus = Vec::new();
    for g in f.inventory.as_ref()?.code_object_gpus() {
        // Identical GPUs may get different overrides (per-node variables): split the group.
        let mut by: BTreeMap<Option<GfxVersion>, Vec<u32>> = BTreeMap::new();
        for n in &g.nodes {
            by.entry(overrides.get(n).copied()).or_default().push(*n);
        }
        for (o, nodes) in by {
            let mut g = Gpu { nodes, ..g.clone() };
            if let Some(o) = o {
                // ROCr reports the override as the agent's ISA, and HIP picks code objects for
                // it; the GPU's feature settings stay where the override's processor has the
                // feature.
                g.target = GpuTarget {
                    processor: o,
                    sramecc: o
                        .supports_sramecc()
                        .then(|| g.target.sramecc.unwrap_or(true)),
                    xnack: o.supports_xnack().then(|| g.target.xnack.unwrap_or(false)),
                };
                g.target_id = g.target.target_id();
            }
            gpus.push(g);
        }
    }
    (!gpus.is_empty()).then_some(gpus)
}

/// Findings for one file's GPU code on the GPUs: one `rules[0]` finding listing the GPUs with
/// no code object, one `rules[1]` finding per GPU that needs a feature change.
pub(crate) fn fat_binary_findings(
    code: &FatBinary,
    what: &str,
    gpus: &[Gpu],
    override_evidence: Option<&Evidence>,
    rules: [Rule; 2],
    remedy: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if !code.has_code() {
        return out;
    }
    let carried = Evidence::new(
        code.path.clone(),
        msg!(
            "libraries.fat-binary",
            bundles = code.bundles,
            objects = code.code_objects,
            targets = i18n::list(&code.targets)
        ),
    );
    let nodes = |g: &Gpu| {
        g.nodes
            .iter()
            .map(|n| {
                Evidence::new(
                    format!("{}/nodes/{n}", crate::facts::topology::TOPOLOGY_DIR),
                    g.target_id.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let assumed = |g: &Gpu| {
        g.assumptions
            .iter()
            .map(|a| Evidence::new(format!("assumed:{}", a.feature.name()), a.reason.clone()))
            .collect::<Vec<_>>()
    };
    let mut missing: Vec<&Gpu> = Vec::new();
    for g in gpus {
        // The rule `inspect`'s exit code follows too: a finding for every GPU on which the file
        // does not load as the GPU is set up.
        let Some(verdict) = code.verdict(&g.target).filter(|v| !v.loads_as_set_up()) else {
            continue;
        };
        match verdict {
            Verdict::NoCodeObject => missing.push(g),
            Verdict::NeedsFeatureChange { target, changes } => {
                let how: Vec<String> = changes.iter().map(|c| c.how.clone()).collect();
                let spelled: Vec<String> = changes.iter().map(|c| c.spelling()).collect();
                let mut finding = rules[1]
                    .finding(msg!(
                        "libraries.needs-feature-change",
                        what,
                        target,
                        gpu = g.target_id,
                        settings = i18n::join(&spelled, &msg!("libraries.and"))
                    ))
                    .with(carried.clone())
                    .with_all(nodes(g))
                    .with_all(assumed(g));
                if let Some(e) = override_evidence {
                    finding = finding.with(e.clone());
                }
                // The one change a process makes itself: XNACK through HSA_XNACK (off always;
                // on where the kernel gives the GPU a per-process mode, as compat's own
                // xnack_change decides). SRAM ECC is the driver's: no step.
                let step = match changes.as_slice() {
                    [c] if matches!(c.feature, crate::codeobject::compat::Feature::Xnack)
                        && (!c.to
                            || crate::target::process_xnack(
                                &[g.target.processor],
                                Some(1),
                                Some("1"),
                            ) == Some(true)) =>
                    {
                        let value = if c.to { "1" } else { "0" };
                        Some(RemedyStep::run(
                            Action::SetEnv,
                            "HSA_XNACK",
                            format!("export HSA_XNACK={value}"),
                            msg!("libraries.step-hsa-xnack", value),
                        ))
                    }
                    _ => None,
                };
                out.push(
                    finding
                        .remedy(msg!(
                            "libraries.needs-feature-change-remedy",
                            how = i18n::join(&how, &msg!("libraries.and")),
                            gpu = g.target_id
                        ))
                        .with_steps(step),
                );
            }
            Verdict::Loads { .. } => {}
        }
    }
    if !missing.is_empty() {
        let ids: Vec<&str> = missing.iter().map(|g| g.target_id.as_str()).collect();
        let mut finding = rules[0]
            .finding(msg!(
                "libraries.no-code-object",
                what,
                gpus = i18n::list(&ids),
                targets = i18n::list(&code.targets)
            ))
            .with(carried);
        for g in &missing {
            finding = finding.with_all(nodes(g)).with_all(assumed(g));
        }
        if let Some(e) = override_evidence {
            finding = finding.with(e.clone());
        }
        out.push(finding.remedy(msg!(
            "libraries.no-code-object-inspect",
            remedy,
            path = code.path
        )));
    }
    out
}

/// The effective targets of the GPUs, or `None` when GPU-specific checks must stay silent (a
/// failure below, no GPU).
pub(crate) fn targets(f: &Facts, below: &[Finding]) -> Option<Targets> {
    if crate::checks::gpu_checks_blocked(below) {
        return None;
    }
    let overrides = f.overrides.effective(f.inventory.as_ref());
    let mut targets = Targets::new();
    for a in f.inventory.as_ref()?.gpu_agents() {
        let real = a.gfx.map(|g| g.name()).or_else(|| a.name.clone());
        let Some(real) = real else { continue };
        let effective = overrides
            .get(&a.node)
            .map_or_else(|| real.clone(), |o| o.name());
        let mut value = real.clone();
        if let Some(m) = &a.marketing_name {
            value.push_str(&format!(" {m}"));
        }
        if effective != real {
            value.push_str(&msg!("libraries.runs-as", target = effective));
        }
        targets.entry(effective).or_default().push(Evidence::new(
            format!("{}/nodes/{}", crate::facts::topology::TOPOLOGY_DIR, a.node),
            value,
        ));
    }
    (!targets.is_empty()).then_some(targets)
}

/// Processor names in version order (gfx90a before gfx942 before gfx1030), or `none`.
pub(crate) fn list(targets: &BTreeSet<String>) -> String {
    if targets.is_empty() {
        return msg!("libraries.none");
    }
    let mut names: Vec<&String> = targets.iter().collect();
    names.sort_by_key(|t| (GfxVersion::from_name(t), t.as_str()));
    i18n::list(names)
}

/// The evidence value of a kernel directory: `13 entries; targets: gfx90a, gfx942`.
pub(crate) fn kernel_dir_value(d: &KernelDir) -> String {
    msg!(
        "libraries.kernel-dir",
        entries = d.entries,
        targets = list(&d.targets)
    )
}

/// Remedy steps as one sentence: joined with `; `, the first letter capitalised, a full stop
/// at the end.
pub(crate) fn steps_sentence(steps: &[String]) -> String {
    let s = i18n::join(steps, &msg!("libraries.separator"));
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => msg!(
            "libraries.steps",
            steps = format!("{}{}", c.to_uppercase(), chars.as_str())
        ),
        None => s,
    }
}

fn wrappers(f: &Facts, i: &InstallLibraries, out: &mut Vec<Finding>) {
    // AMD's repositories name each library's package after it, lowercase, for apt, dnf and
    // zypper (ROCm install-on-linux, "Package manager integration": rocblas, rocfft,
    // rocsparse, rocsolver, rocrand under rocm-hip-libraries); Arch's extra repository packages
    // them under the same names. A distribution's install (Debian's librocblas0 …) gets none.
    let amd = f
        .installs
        .installs
        .iter()
        .any(|x| x.prefix == i.prefix && x.kind == crate::facts::install::InstallKind::Opt);
    for (wrapper, backend) in WRAPPERS {
        let Some(files) = i.files(wrapper) else {
            continue;
        };
        if i.has(backend) {
            continue;
        }
        out.push(
            HIP_WRAPPER_WITHOUT_BACKEND
                .finding(msg!(
                    "libraries.wrapper-without-backend",
                    wrapper,
                    backend,
                    install = i.describe
                ))
                .with(Evidence::new(
                    format!("{}/{}", i.lib_dir, files[0]),
                    files.join(", "),
                ))
                .with(Evidence::absent(format!("{}/lib{backend}.so*", i.lib_dir)))
                .remedy(msg!(
                    "libraries.wrapper-without-backend-remedy",
                    wrapper,
                    backend
                ))
                .with_steps(
                    crate::facts::os_release::families(f.os_release.as_ref())
                        .into_iter()
                        .filter(|_| amd)
                        .map(|d| {
                            RemedyStep::run(
                                Action::Install,
                                backend,
                                d.install(backend),
                                msg!("libraries.step-install-backend", backend, wrapper),
                            )
                            .on(d)
                        }),
                ),
        );
    }
}

/// The version string `HSA_OVERRIDE_GFX_VERSION` takes for a processor (`gfx1100` → `11.0.0`).
/// The GPUs' targets a set of kernels lacks.
pub(super) fn missing_targets<'t>(
    targets: &'t Targets,
    have: &BTreeSet<String>,
) -> Vec<&'t String> {
    targets.keys().filter(|t| !have.contains(*t)).collect()
}

/// For each missing target with a same-family target among `have`: the target, the
/// `HSA_OVERRIDE_GFX_VERSION` value that runs the sibling's kernels on it, and the sibling. None
/// while an override is already set (its evidence says so).
pub(super) fn sibling_overrides(
    missing: &[&String],
    have: &BTreeSet<String>,
    override_evidence: Option<&Evidence>,
) -> Vec<(String, String, String)> {
    if override_evidence.is_some() {
        return Vec::new();
    }
    missing
        .iter()
        .filter_map(|t| {
            let (value, sibling) = super::runtime::sibling_override(t, have)?;
            Some(((*t).clone(), value, sibling))
        })
        .collect()
}

/// What a "no kernels for the target" finding shows: the kernel directory (or where it should
/// be), each missing target's GPUs, and the override in force.
pub(super) fn kernel_evidence(
    finding: Finding,
    dir: Result<&KernelDir, Evidence>,
    missing: &[&String],
    (targets, override_evidence): (&Targets, Option<&Evidence>),
) -> Finding {
    let mut finding = match dir {
        Ok(d) => finding.with(Evidence::new(d.dir.clone(), kernel_dir_value(d))),
        Err(instead) => finding.with(instead),
    };
    for t in missing {
        finding = finding.with_all(targets[*t].iter().cloned());
    }
    match override_evidence {
        Some(e) => finding.with(e.clone()),
        None => finding,
    }
}

fn missing_finding(
    rule: Rule,
    library: &str,
    i: &InstallLibraries,
    dir: Option<&KernelDir>,
    expected_dir: String,
    missing: &[&String],
    (targets, override_evidence): (&Targets, Option<&Evidence>),
) -> Finding {
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let have = dir.map(|d| d.targets.clone()).unwrap_or_default();
    let unread = i.unread.iter().find(|p| p.path == expected_dir);
    // No data directory at all beside the library: not a build without these GPUs, but a
    // library copied or bind-mounted without its data (apptainer/apptainer#1621).
    let summary = if dir.is_none() && unread.is_none() {
        msg!(
            "libraries.kernel-data-missing",
            library,
            install = i.describe,
            dir = expected_dir
        )
    } else {
        msg!(
            "libraries.no-kernels",
            library,
            install = i.describe,
            targets = i18n::list(&names),
            have = list(&have)
        )
    };
    let finding = rule.finding(summary);
    let dir = match (dir, unread) {
        (Some(d), _) => Ok(d),
        (None, Some(p)) => Err(Evidence::new(expected_dir, p.message.to_string())),
        (None, None) => Err(Evidence::absent(expected_dir)),
    };
    kernel_evidence(finding, dir, missing, (targets, override_evidence))
}

/// Where rocBLAS's data directory is missing: load a rocBLAS that has it, or point rocBLAS at
/// the data of its own release; under Apptainer's library bind directory, what `--rocm` did.
fn data_missing_remedy(i: &InstallLibraries) -> String {
    if i.lib_dir.starts_with(APPTAINER_LIBS) {
        msg!("libraries.kernel-data-missing-apptainer", dir = i.lib_dir)
    } else {
        msg!("libraries.kernel-data-missing-remedy", dir = i.lib_dir)
    }
}

/// Where Apptainer (and Singularity) bind the host libraries that `--rocm` and `--nv` name.
const APPTAINER_LIBS: &str = "/.singularity.d/libs";

fn per_target(
    i: &InstallLibraries,
    targets: &Targets,
    override_evidence: Option<&Evidence>,
    out: &mut Vec<Finding>,
) {
    if i.has("rocblas") || i.rocblas.is_some() {
        let have = i
            .rocblas
            .as_ref()
            .map(|d| d.targets.clone())
            .unwrap_or_default();
        let missing = missing_targets(targets, &have);
        if !missing.is_empty() {
            let mut steps: Vec<String> = sibling_overrides(&missing, &have, override_evidence)
                .into_iter()
                .map(|(target, value, sibling)| {
                    msg!("libraries.rocblas-override", target, value, sibling)
                })
                .collect();
            steps.push(msg!("libraries.rocblas-install"));
            let s = if i.rocblas.is_none() && i.unread.is_empty() {
                data_missing_remedy(i)
            } else {
                steps_sentence(&steps)
            };
            out.push(
                missing_finding(
                    ROCBLAS_NO_KERNELS_FOR_TARGET,
                    "rocBLAS",
                    i,
                    i.rocblas.as_ref(),
                    format!("{}/{}", i.lib_dir, crate::facts::libraries::ROCBLAS_LIBRARY),
                    &missing,
                    (targets, override_evidence),
                )
                .remedy(s),
            );
        }
    }
    if i.has("hipblaslt") || i.hipblaslt.is_some() {
        let have = i
            .hipblaslt
            .as_ref()
            .map(|d| d.targets.clone())
            .unwrap_or_default();
        let missing = missing_targets(targets, &have);
        if !missing.is_empty() {
            // PyTorch's switch to rocBLAS (TORCH_BLAS_PREFER_HIPBLASLT=0, read by ATen's
            // Context::blasPreferredBackend, set so in ROCm/legacy-rocm-build#5643); once per
            // report, whatever the number of installs.
            let first = !out
                .iter()
                .any(|x| x.id == HIPBLASLT_NO_KERNELS_FOR_TARGET.id);
            let step = first.then(|| {
                RemedyStep::run(
                    Action::SetEnv,
                    "TORCH_BLAS_PREFER_HIPBLASLT",
                    "export TORCH_BLAS_PREFER_HIPBLASLT=0",
                    msg!("libraries.step-prefer-rocblas"),
                )
            });
            out.push(
                missing_finding(
                    HIPBLASLT_NO_KERNELS_FOR_TARGET,
                    "hipBLASLt",
                    i,
                    i.hipblaslt.as_ref(),
                    format!(
                        "{}/{}",
                        i.lib_dir,
                        crate::facts::libraries::HIPBLASLT_LIBRARY
                    ),
                    &missing,
                    (targets, override_evidence),
                )
                .remedy(msg!("libraries.hipblaslt-remedy"))
                .with_steps(step),
            );
        }
    }
    if i.has("MIOpen") || i.miopen.is_some() {
        let have = i.miopen.as_ref().map(|d| d.targets()).unwrap_or_default();
        let missing = missing_targets(targets, &have);
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            let mut finding = MIOPEN_NO_KDB_FOR_TARGET.finding(msg!(
                "libraries.miopen-no-kdb",
                install = i.describe,
                targets = i18n::list(&names),
                have = list(&have)
            ));
            finding = match &i.miopen {
                Some(d) => finding.with(Evidence::new(
                    d.dir.clone(),
                    if d.kdbs.is_empty() {
                        msg!("libraries.no-kdb-files")
                    } else {
                        d.kdbs
                            .iter()
                            .map(|k| k.file.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                )),
                None => finding.with(Evidence::absent(format!(
                    "{}/{}",
                    i.prefix,
                    crate::facts::libraries::MIOPEN_DB
                ))),
            };
            for t in &missing {
                finding = finding.with_all(targets[*t].iter().cloned());
            }
            out.push(finding.remedy(msg!("libraries.miopen-remedy", target = names[0])));
        }
    }
}

fn coverage(libs: &LibraryFacts, targets: Option<&Targets>, out: &mut Vec<Finding>) {
    for i in libs.installs.iter().filter(|i| i.any()) {
        let mut parts = Vec::new();
        let mut evidence = Vec::new();
        if !i.present.is_empty() {
            evidence.push(Evidence::new(
                i.lib_dir.clone(),
                i.present
                    .iter()
                    .map(|p| p.files.join(", "))
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        let mut sets: Vec<(String, BTreeSet<String>)> = Vec::new();
        let mut code_parts: Vec<String> = Vec::new();
        if let Some(d) = &i.rocblas {
            sets.push(("rocBLAS".to_owned(), d.targets.clone()));
            evidence.push(Evidence::new(d.dir.clone(), list(&d.targets)));
        }
        if let Some(d) = &i.hipblaslt {
            sets.push(("hipBLASLt".to_owned(), d.targets.clone()));
            evidence.push(Evidence::new(d.dir.clone(), list(&d.targets)));
        }
        if let Some(d) = &i.miopen {
            sets.push(("MIOpen kdb".to_owned(), d.targets()));
            evidence.push(Evidence::new(d.dir.clone(), list(&d.targets())));
        }
        for lib in &i.present {
            let Some(code) = lib.code.as_ref().filter(|c| c.has_code()) else {
                continue;
            };
            // Full target IDs, and no "covers" claim: whether code loads depends on the
            // feature settings, which no-code-object-for-target and
            // code-object-needs-feature-change judge.
            code_parts.push(msg!(
                "libraries.coverage-code",
                library = lib.name,
                targets = i18n::list(&code.targets)
            ));
            evidence.push(Evidence::new(
                code.path.clone(),
                msg!(
                    "libraries.coverage-bundles",
                    bundles = code.bundles,
                    targets = i18n::list(&code.targets)
                ),
            ));
        }
        for (name, set) in &sets {
            let covered = match targets {
                Some(t) => {
                    let gpus: Vec<&str> = t
                        .keys()
                        .filter(|k| set.contains(*k))
                        .map(String::as_str)
                        .collect();
                    if gpus.is_empty() {
                        String::new()
                    } else {
                        msg!("libraries.coverage-covers", gpus = i18n::list(&gpus))
                    }
                }
                None => String::new(),
            };
            parts.push(msg!(
                "libraries.coverage-set",
                name,
                targets = list(set),
                covered
            ));
        }
        parts.extend(code_parts);
        let names: Vec<String> = i
            .present
            .iter()
            .map(|p| match (&p.version, &p.rocm) {
                (Some(version), Some(rocm)) => msg!(
                    "libraries.library-version-rocm",
                    library = p.name,
                    version,
                    rocm
                ),
                (Some(v), None) => format!("{} {v}", p.name),
                _ => p.name.clone(),
            })
            .collect();
        let coverage = i18n::join(&parts, &msg!("libraries.separator"));
        let summary = if parts.is_empty() {
            msg!(
                "libraries.coverage-summary",
                install = i.describe,
                items = i18n::list(&names)
            )
        } else if names.is_empty() {
            msg!(
                "libraries.coverage-summary",
                install = i.describe,
                items = coverage
            )
        } else {
            msg!(
                "libraries.coverage-summary-both",
                install = i.describe,
                libraries = i18n::list(&names),
                coverage
            )
        };
        out.push(COVERAGE.finding(summary).with_all(evidence));
    }
}
