//! Layer 7: applications' own ROCm runtimes and HIP code ([`BundledFacts`]): ollama's runner
//! directories, llama.cpp's `libggml-hip.so`, vLLM's and AITER's extensions. Each is judged per
//! GPU like a wheel's bundle: its code objects through layer 5's fat-binary verdict
//! ([`super::bundle_code`]), and for ollama the rule ollama itself applies before it uses a GPU —
//! a GPU whose (effective) target has no rocBLAS lazy catalogue in the runner's
//! `rocblas/library` is dropped, and ollama runs on the CPU (ollama `discover/amd.go`,
//! `filterUnsupportedROCmDevices`).
//!
//! Like layer 5's per-target checks, the per-GPU verdicts need layers 1–6 without a failure.

use crate::facts::Facts;
use crate::facts::bundled::{BundledApp, Kind};
use crate::facts::install::RocmVersion;
use crate::finding::{
    Action, BUNDLED_APP_FOUND, BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET, Evidence, Finding,
    OLLAMA_GPU_DROPPED, RemedyStep, Subject,
};
use crate::{i18n, msg};

use super::super::libraries::{Targets, kernel_evidence, missing_targets, sibling_overrides};

/// The findings about every bundled runtime; `below` are the findings of layers 1–6.
pub(super) fn check(f: &Facts, below: &[Finding], out: &mut Vec<Finding>) {
    if f.bundled.apps.is_empty() {
        return;
    }
    let targets = super::super::libraries::targets(f, below);
    let gpus = super::super::libraries::gpus(f, below);
    let override_evidence = targets.as_ref().and_then(|_| {
        f.platform
            .env
            .get(super::HSA_OVERRIDE_GFX_VERSION)
            .map(|v| {
                Evidence::new(
                    format!("env:{}", super::HSA_OVERRIDE_GFX_VERSION),
                    format!("{v:?}"),
                )
            })
    });
    for app in &f.bundled.apps {
        let start = out.len();
        out.push(found(app));
        let mut dropped: Vec<String> = Vec::new();
        if let (Some(lazy), Some(targets)) = (&app.rocblas_lazy, &targets) {
            dropped = ollama(app, lazy, targets, override_evidence.as_ref(), out);
        } else if let (Some(dir), Some(targets)) = (&app.bundled.rocblas, &targets) {
            rocblas(app, dir, targets, override_evidence.as_ref(), out);
        }
        if let Some(gpus) = &gpus {
            // A GPU ollama drops never loads the runner's code.
            let kept: Vec<crate::codeobject::compat::Gpu> = gpus
                .iter()
                .filter(|g| !dropped.contains(&g.target.processor.name()))
                .cloned()
                .collect();
            if !kept.is_empty() {
                super::bundle_code(
                    &app.bundled,
                    app.name,
                    &kept,
                    override_evidence.as_ref(),
                    out,
                );
            }
        }
        for finding in &mut out[start..] {
            finding.subject = Some(Subject::framework(app.name, &app.dir));
        }
    }
}

/// An application's own rocBLAS without Tensile kernels for a GPU: rocBLAS aborts on the first
/// BLAS call there ("Cannot read …/TensileLibrary.dat … for GPU arch : gfx1151",
/// lmstudio-bug-tracker#1269) — the same failure as a wheel's bundled rocBLAS.
fn rocblas(
    app: &BundledApp,
    dir: &crate::facts::libraries::KernelDir,
    targets: &Targets,
    override_evidence: Option<&Evidence>,
    out: &mut Vec<Finding>,
) {
    let missing = missing_targets(targets, &dir.targets);
    if missing.is_empty() {
        return;
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let finding = BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET.finding(msg!(
        "frameworks.app-rocblas-no-kernels",
        name = app.name,
        dir = dir.dir,
        targets = i18n::list(&names),
        have = super::super::libraries::list(&dir.targets)
    ));
    let finding = kernel_evidence(finding, Ok(dir), &missing, (targets, override_evidence));
    out.push(finding.remedy(msg!("frameworks.app-rocblas-remedy", name = app.name)));
}

/// `ROCm 7.2`, or a phrase saying the release is not known.
fn release(v: Option<RocmVersion>) -> String {
    v.map_or_else(
        || msg!("frameworks.bundled-release-unknown"),
        |v| format!("ROCm {v}"),
    )
}

/// What was found, and what it carries.
fn found(app: &BundledApp) -> Finding {
    let b = &app.bundled;
    let what = match app.kind {
        Kind::OllamaRunners => msg!("frameworks.bundled-kind-ollama"),
        Kind::GgmlHip => msg!("frameworks.bundled-kind-ggml-hip"),
        Kind::SiteExtensions => msg!("frameworks.bundled-kind-extensions"),
        Kind::HomeVendorDirs => msg!("frameworks.bundled-kind-vendor"),
        Kind::HomeTheRockDirs => msg!("frameworks.bundled-kind-therock"),
    };
    let mut finding = BUNDLED_APP_FOUND.finding(msg!(
        "frameworks.bundled-app-found",
        name = app.name,
        what,
        dir = b.lib_dir,
        rocm = release(b.rocm),
    ));
    if !b.libs.is_empty() {
        finding = finding.with(Evidence::new(b.lib_dir.clone(), b.files()));
    }
    if let Some(src) = &b.rocm_source {
        finding = finding.with(Evidence::new(src.clone(), release(b.rocm)));
    }
    if let Some(lazy) = &app.rocblas_lazy
        && let Some(d) = &b.rocblas
    {
        finding = finding.with(Evidence::new(
            d.dir.clone(),
            msg!(
                "frameworks.bundled-rocblas-lazy",
                targets = super::super::libraries::list(lazy)
            ),
        ));
    }
    for c in &b.code {
        finding = finding.with(Evidence::new(
            c.path.clone(),
            msg!(
                "libraries.fat-binary",
                bundles = c.bundles,
                objects = c.code_objects,
                targets = i18n::list(&c.targets)
            ),
        ));
    }
    finding
}

/// ollama's own rule: a GPU whose target has no rocBLAS lazy catalogue is dropped. Returns the
/// targets dropped.
fn ollama(
    app: &BundledApp,
    lazy: &std::collections::BTreeSet<String>,
    targets: &Targets,
    override_evidence: Option<&Evidence>,
    out: &mut Vec<Finding>,
) -> Vec<String> {
    let missing = missing_targets(targets, lazy);
    if missing.is_empty() {
        return Vec::new();
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let b = &app.bundled;
    let finding = OLLAMA_GPU_DROPPED.finding(msg!(
        "frameworks.ollama-gpu-dropped",
        dir = app.dir,
        rocm = release(b.rocm),
        targets = i18n::list(&names),
        have = super::super::libraries::list(lazy)
    ));
    let dir = b.rocblas.as_ref().ok_or_else(|| {
        Evidence::absent(format!(
            "{}/{}",
            app.dir,
            crate::facts::libraries::ROCBLAS_LIBRARY
        ))
    });
    let mut finding = kernel_evidence(finding, dir, &missing, (targets, override_evidence));
    // What the bundled release's support data says about each dropped target.
    if let Some(v) = b.rocm
        && let Some(r) = crate::facts::support::release(&v)
    {
        for t in &missing {
            use crate::facts::support::Support;
            let status = match r.status(t, v.patch) {
                Some(Support::Supported) => msg!("frameworks.bundled-status-supported"),
                Some(Support::Deprecated) => msg!("frameworks.bundled-status-deprecated"),
                Some(Support::Unsupported) => msg!("frameworks.bundled-status-unsupported"),
                None => msg!("frameworks.bundled-not-listed"),
            };
            finding = finding.with(Evidence::new(
                r.source,
                msg!(
                    "frameworks.bundled-release-lists",
                    release = r.name(),
                    target = t.as_str(),
                    status
                ),
            ));
        }
    }
    let overrides = sibling_overrides(&missing, lazy, override_evidence);
    let mut steps = Vec::new();
    for (target, value, sibling) in &overrides {
        steps.push(RemedyStep::say(
            Action::SetEnv,
            "HSA_OVERRIDE_GFX_VERSION",
            msg!(
                "frameworks.ollama-step-override",
                target = target.as_str(),
                value = value.as_str(),
                sibling = sibling.as_str()
            ),
        ));
    }
    let remedy = if overrides.is_empty() {
        msg!("frameworks.ollama-gpu-dropped-remedy")
    } else {
        msg!("frameworks.ollama-gpu-dropped-remedy-override")
    };
    out.push(finding.remedy(remedy).with_steps(steps));
    missing.into_iter().cloned().collect()
}
