//! Checks: pure functions from facts to findings, one folder per layer. No I/O here.
//!
//! A layer's folder holds everything about its findings: `mod.rs` (the checks), `rules.rs` (the
//! finding ids it declares, with their layer and default status) and `messages.toml` (its title,
//! its rules' titles and explanations, and every sentence its checks print, in English and
//! Chinese). [`rules`] joins the layers' tables into the one registry of finding ids.

pub mod active;
pub mod compiler;
pub mod driver;
pub mod frameworks;
pub mod hardware;
pub mod libraries;
pub mod runtime;
pub mod thunk;
pub mod tools;
pub mod workloads;

pub mod rules {
    //! The registry of finding ids: every layer's tables, bottom-up.

    use super::{
        compiler, driver, frameworks, hardware, libraries, runtime, thunk, tools, workloads,
    };

    /// The tables, bottom-up, then the conformance rules (`check --expect`) of each layer.
    pub(crate) const TABLES: &[&[crate::finding::Rule]] = &[
        hardware::rules::HARDWARE_RULES,
        hardware::rules::HARDWARE_DEVICE_RULES,
        driver::rules::DRIVER_RULES,
        driver::rules::DRIVER_PLATFORM_RULES,
        driver::rules::DRIVER_ACTIVE_RULES,
        driver::rules::DRIVER_CONTAINER_RULES,
        thunk::rules::THUNK_RULES,
        thunk::rules::THUNK_ACTIVE_RULES,
        runtime::rules::RUNTIME_RULES,
        runtime::rules::RUNTIME_ACTIVE_RULES,
        libraries::rules::LIBRARIES_RULES,
        compiler::rules::COMPILER_RULES,
        frameworks::rules::FRAMEWORKS_RULES,
        tools::rules::TOOLS_RULES,
        workloads::rules::WORKLOADS_RULES,
        hardware::rules::HARDWARE_EXPECT_RULES,
        driver::rules::DRIVER_EXPECT_RULES,
        runtime::rules::RUNTIME_EXPECT_RULES,
        libraries::rules::LIBRARIES_EXPECT_RULES,
        frameworks::rules::FRAMEWORKS_EXPECT_RULES,
    ];

    pub use super::compiler::rules::*;
    pub use super::driver::rules::*;
    pub use super::frameworks::rules::*;
    pub use super::hardware::rules::*;
    pub use super::libraries::rules::*;
    pub use super::runtime::rules::*;
    pub use super::thunk::rules::*;
    pub use super::tools::rules::*;
    pub use super::workloads::rules::*;

    /// Failures of access to the device nodes: they keep programs from opening the GPU, not the
    /// probe from reading the topology and the files the checks above judge. Under them the
    /// GPU-specific checks still run (`checks::blocking_failures`), and what they find is a
    /// fault of its own (a CUDA PyTorch, a wrong override), not a consequence.
    pub const ACCESS: &[&str] = &[
        KFD_DEVICE_MISSING.id,
        KFD_PERMISSION_DENIED.id,
        KFD_OPEN_FAILED.id,
        RENDER_NODE_MISSING.id,
        RENDER_PERMISSION_DENIED.id,
        SELINUX_DEVICE_DENIED.id,
        DEV_NOEXEC.id,
    ];

    /// Warnings of something that has happened to the GPU (a hang, a page fault, an oops, an
    /// uncorrectable error the kernel logged), not of a state that may cause trouble: where
    /// both are present, the verdict follows the event (to its cause, a firmware that hangs the
    /// GPU) before a warning of a lower layer, and counts the other among the separate problems.
    pub const EVENTS: &[&str] = &[
        GPU_HANG.id,
        GPU_PAGE_FAULT.id,
        AMDGPU_OOPS.id,
        RAS_EVENT_LOGGED.id,
    ];

    /// Findings that report what the device did (active probes, the workload verdicts): under a
    /// failure that blocks the device they follow from it.
    pub(crate) fn observed(id: &str) -> bool {
        [
            driver::rules::DRIVER_ACTIVE_RULES,
            thunk::rules::THUNK_ACTIVE_RULES,
            runtime::rules::RUNTIME_ACTIVE_RULES,
            workloads::rules::WORKLOADS_RULES,
        ]
        .iter()
        .any(|t| t.iter().any(|r| r.id == id))
    }

    /// Failures that stop everything above them: no GPU, no driver, no KFD, no access to it. A
    /// failure not listed here (uncorrectable RAS errors on one GPU of eight) leaves the layers
    /// above checkable; any failure also blocks when no GPU is left in KFD.
    pub const BLOCKING: &[&str] = &[
        NO_AMD_GPU.id,
        AMDGPU_NOT_LOADED.id,
        AMDGPU_BLACKLISTED.id,
        NOMODESET.id,
        KFD_MISSING.id,
        KFD_UNREADABLE.id,
        KFD_DEVICE_MISSING.id,
        KFD_PERMISSION_DENIED.id,
        KFD_OPEN_FAILED.id,
    ];
}

use crate::facts::Facts;
use crate::facts::config::Profile;
use crate::finding::Finding;

/// Runs every check, bottom-up. The profile sets the severity of platform-tuning rules.
pub fn run(facts: &Facts, profile: Profile) -> Vec<Finding> {
    let mut findings = hardware::check(facts);
    let driver = driver::check(facts, &findings, profile);
    findings.extend(driver);
    findings.extend(driver::active::check(facts));
    let thunk = thunk::check(facts, &findings);
    findings.extend(thunk);
    findings.extend(thunk::active::check(facts));
    let runtime = runtime::check(facts, &findings);
    findings.extend(runtime);
    findings.extend(runtime::active::check(facts));
    let libraries = libraries::check(facts, &findings);
    findings.extend(libraries);
    let compiler = compiler::check(facts, &findings);
    findings.extend(compiler);
    let frameworks = frameworks::check(facts, &findings);
    findings.extend(frameworks);
    let tools = tools::check(facts, &findings);
    findings.extend(tools);
    let workloads = workloads::check(facts, &findings);
    findings.extend(workloads);
    findings
}

/// The failures below that silence the GPU-specific checks of layers 4–7: every failure but
/// those of device access ([`rules::ACCESS`]) and those that follow from one (the active open,
/// ROCr's and HIP's initialisation failing under it). Access failures leave the topology and
/// the files readable, and what the checks find there is a fault of its own.
pub(crate) fn blocking_failures(below: &[Finding]) -> Vec<&Finding> {
    use crate::finding::{Status, rule};
    let fails: Vec<&Finding> = below.iter().filter(|x| x.status == Status::Fail).collect();
    let mut access: Vec<&str> = fails
        .iter()
        .map(|x| x.id)
        .filter(|id| rules::ACCESS.contains(id))
        .collect();
    // What follows from an access failure, transitively (kfd-open-failed → rocr-init-failed).
    loop {
        let before = access.len();
        for x in &fails {
            let follows = access.iter().any(|a| {
                x.caused_by == Some(*a) || rule(a).is_some_and(|r| r.causes.contains(&x.id))
            });
            if follows && !access.contains(&x.id) {
                access.push(x.id);
            }
        }
        if access.len() == before {
            break;
        }
    }
    fails
        .into_iter()
        .filter(|x| !access.contains(&x.id))
        .collect()
}

/// Whether the GPU-specific checks of layers 4–7 must stay silent ([`blocking_failures`]).
pub(crate) fn gpu_checks_blocked(below: &[Finding]) -> bool {
    !blocking_failures(below).is_empty()
}

/// The note of a layer that gave no finding: what it looked at and found, so that an empty
/// layer never reads as a gap in the probe ("no ROCm libraries found in ROCm 6.2.0 at …").
pub fn empty_layer_note(layer: crate::finding::Layer, facts: &Facts) -> String {
    use crate::finding::Layer;
    match layer {
        Layer::Libraries => libraries::empty_note(facts),
        Layer::Workloads => workloads::empty_note(facts),
        _ => crate::msg!("report.layer-nothing-found"),
    }
}

/// GPU agents as every sentence names them ([`crate::facts::agent::GpuName`]), in the order
/// given; a node the inventory does not know is named by its number.
/// With active results, the ROCr index counts only the GPUs KFD gives this process (ROCr
/// enumerates no other), and a GPU KFD hides has none.
pub(crate) fn gpu_names(f: &Facts, nodes: impl IntoIterator<Item = u32>) -> String {
    crate::i18n::list(nodes.into_iter().map(|node| {
        f.inventory
            .as_ref()
            .and_then(|inv| inv.agent_name_among(node, |a| !active::kfd_hides(f, a.gpu_id)))
            .map_or_else(|| crate::msg!("facts.gpu-at-node", node), |n| n.to_string())
    }))
}

/// A size in GiB with one decimal, as sentences about memory give it (`23.9 GiB`).
pub(crate) fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Evidence of a container or WSL marker, its value in the report's language.
pub(crate) fn marker_evidence((source, value): (&String, &String)) -> crate::finding::Evidence {
    let value = if value == crate::facts::platform::PRESENT {
        crate::msg!("facts.present")
    } else {
        value.clone()
    };
    crate::finding::Evidence::new(source.clone(), value)
}

/// A group of input problems as evidence: the path, its messages and its count.
pub(crate) fn problem_evidence(
    g: &crate::source::problem::ProblemGroup,
) -> crate::finding::Evidence {
    let mut e = crate::finding::Evidence::new(g.path.clone(), g.line());
    e.count = Some(g.count);
    e
}

/// Evidence for grouped problems: one item per file for the first
/// [`crate::source::problem::FILES_LISTED`] files, then one that counts the rest.
pub(crate) fn problems_evidence(
    groups: &[crate::source::problem::ProblemGroup],
) -> Vec<crate::finding::Evidence> {
    use crate::source::problem::FILES_LISTED;
    let mut out: Vec<crate::finding::Evidence> = groups
        .iter()
        .take(FILES_LISTED)
        .map(problem_evidence)
        .collect();
    if let Some(rest) = groups.len().checked_sub(FILES_LISTED).filter(|&n| n > 0) {
        out.push(crate::finding::Evidence::new(
            crate::msg!("facts.problems-more-files-source"),
            crate::msg!("facts.problems-more-files", count = rest),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped_problem_evidence_keeps_the_count() {
        let all: Vec<crate::source::problem::Problem> = (0..1001)
            .map(|i| {
                crate::source::problem::Problem::new(
                    "/p",
                    crate::text!("facts.not-a-number", text = i),
                )
            })
            .collect();
        let groups = crate::source::problem::group(&all);
        assert_eq!(super::problems_evidence(&groups)[0].count, Some(1001));
    }
}
