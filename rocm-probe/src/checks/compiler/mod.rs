//! Layer 6: the HIP compilers, whether their device libraries cover the GPUs, and the
//! `--offload-arch=` flags for this machine.
//!
//! `compiler.no-compiler` needs no GPU. The per-GPU checks run only when layers 1–5 have no
//! failure, like layer 5's. The target is the GPU's own processor: `HSA_OVERRIDE_GFX_VERSION`
//! changes what ROCr loads, not what the compiler can build for.

pub mod rules;

use std::collections::BTreeMap;

use crate::codeobject::target_id::TargetId;
use crate::facts::Facts;
use std::collections::BTreeSet;

use crate::facts::compiler::{
    CompilerFacts, DeviceLibs, HIP_DEVICE_LIB_PATH, InstallCompiler, LibsOverride, Tool,
};
use crate::finding::{
    Action, BUILD_TARGETS_EXCLUDE_GPU, COMPILER_NOT_CAPTURED, COMPILERS_FOUND, DEVICE_LIBS_HIDDEN,
    DEVICE_LIBS_OTHER_CLANG, Evidence, Finding, NO_COMPILER, NO_DEVICE_LIBS_FOR_TARGET,
    OFFLOAD_ARCH, RemedyStep,
};
use crate::target::GfxVersion;
use crate::{i18n, msg};

/// One distinct target ID of the GPUs, with the processor and the evidence of its nodes.
struct Target {
    id: String,
    processor: String,
    nodes: Vec<Evidence>,
}

/// Layer 6 findings; `below` are the findings of layers 1–5.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    build_targets_env(f, below, &mut out);
    let c = &f.compiler;
    if !c.captured {
        out.push(COMPILER_NOT_CAPTURED.finding(msg!("compiler.not-captured")));
        return out;
    }
    if c.installs.iter().all(|i| i.tools.is_empty()) {
        out.push(
            NO_COMPILER
                .finding(msg!("compiler.no-compiler"))
                .with_all(c.looked_at.iter().map(Evidence::absent))
                .remedy(msg!("compiler.no-compiler-remedy")),
        );
    }
    found(c, &mut out);
    let Some(targets) = targets(f, below) else {
        return out;
    };
    for i in c.installs.iter().filter(|i| i.any()) {
        device_libs(c, i, &targets, &mut out);
    }
    offload_arch(c, &targets, &mut out);
    out
}

/// The variable PyTorch's extension builder reads for its `--offload-arch` list
/// (`torch.utils.cpp_extension._get_rocm_arch_flags`), also PyTorch's own and vLLM's build
/// setting; ROCm images bake it in with `ENV`.
pub const PYTORCH_ROCM_ARCH: &str = "PYTORCH_ROCM_ARCH";

/// `compiler.build-targets-exclude-gpu`: `PYTORCH_ROCM_ARCH` set, and a GPU's effective target
/// (the one its code objects must match) named by none of its entries. PyTorch splits the value
/// on spaces and semicolons and passes each entry as `--offload-arch=`; an empty value means
/// unset. Only the processor is compared (a generic target covers its family): a feature
/// mismatch is left to the loader checks of layers 5 and 7.
fn build_targets_env(f: &Facts, below: &[Finding], out: &mut Vec<Finding>) {
    let Some(value) = f
        .platform
        .env
        .get(PYTORCH_ROCM_ARCH)
        .filter(|v| !v.is_empty())
    else {
        return;
    };
    let Some(targets) = crate::checks::libraries::targets(f, below) else {
        return;
    };
    let entries: Vec<TargetId> = value
        .split([' ', ';'])
        .filter_map(|e| TargetId::parse(e).ok())
        .collect();
    let covers = |processor: &str| {
        let Some(gfx) = GfxVersion::from_name(processor) else {
            return true;
        };
        entries
            .iter()
            .any(|e| crate::codeobject::compat::covers(&e.processor, None, gfx))
    };
    let missing: Vec<(&String, &Vec<Evidence>)> =
        targets.iter().filter(|(t, _)| !covers(t)).collect();
    if missing.is_empty() {
        return;
    }
    let names: Vec<&String> = missing.iter().map(|(t, _)| *t).collect();
    let mut added = value.trim_end_matches([' ', ';']).to_owned();
    for t in &names {
        added.push(';');
        added.push_str(t);
    }
    out.push(
        BUILD_TARGETS_EXCLUDE_GPU
            .finding(msg!(
                "compiler.build-targets-exclude-gpu",
                variable = PYTORCH_ROCM_ARCH,
                targets = i18n::list(&names)
            ))
            .with(Evidence::new(
                format!("env:{PYTORCH_ROCM_ARCH}"),
                value.clone(),
            ))
            .with_all(missing.iter().flat_map(|(_, e)| e.iter().cloned()))
            .remedy(msg!(
                "compiler.build-targets-exclude-gpu-remedy",
                variable = PYTORCH_ROCM_ARCH,
                value = added
            ))
            .with_steps(arch_step(&added)),
    );
}

/// `export PYTORCH_ROCM_ARCH="<list>"` (quoted: `;` separates the targets), when every target
/// in the list is plain (a value from the environment goes into no command otherwise).
fn arch_step(list: &str) -> Option<RemedyStep> {
    let plain = list.split(';').all(|t| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '+' | '-' | '_' | '.'))
    });
    plain.then(|| {
        RemedyStep::run(
            Action::SetEnv,
            PYTORCH_ROCM_ARCH,
            format!("export {PYTORCH_ROCM_ARCH}=\"{list}\""),
            msg!("compiler.step-build-targets", variable = PYTORCH_ROCM_ARCH),
        )
    })
}

/// The distinct target IDs a program built here must carry, in node order: those of the GPUs
/// a HIP program sees under the device masks, with `HSA_OVERRIDE_GFX_VERSION` applied (ROCr
/// then reports the override's processor and HIP loads code for it). `None` when GPU-specific
/// checks must stay silent (a failure below, no GPU left).
fn targets(f: &Facts, below: &[Finding]) -> Option<Vec<Target>> {
    if crate::checks::gpu_checks_blocked(below) {
        return None;
    }
    let inventory = f.inventory.as_ref()?;
    let gpus: Vec<&crate::facts::agent::Agent> = inventory.gpu_agents().collect();
    // Layer 4 reports on the masks; here only which GPUs they leave matters.
    let visible = crate::checks::runtime::masked(&gpus, &f.platform.env).hip;
    let overrides = f.overrides.effective(Some(inventory));
    let mut targets: Vec<Target> = Vec::new();
    for a in gpus
        .iter()
        .enumerate()
        .filter(|(i, _)| visible.contains(i))
        .map(|(_, a)| a)
    {
        let (processor, id) = match overrides.get(&a.node) {
            Some(o) => (o.name(), o.name()),
            None => {
                let Some(processor) = a.gfx.map(|g| g.name()).or_else(|| a.name.clone()) else {
                    continue;
                };
                let id = a.target_id.clone().unwrap_or_else(|| processor.clone());
                (processor, id)
            }
        };
        let mut value = a.target_id.clone().unwrap_or_else(|| processor.clone());
        if let Some(m) = &a.marketing_name {
            value.push_str(&format!(" {m}"));
        }
        let e = Evidence::new(
            format!("{}/nodes/{}", crate::facts::topology::TOPOLOGY_DIR, a.node),
            value,
        );
        match targets.iter_mut().find(|t| t.id == id) {
            Some(t) => t.nodes.push(e),
            None => targets.push(Target {
                id,
                processor,
                nodes: vec![e],
            }),
        }
    }
    (!targets.is_empty()).then_some(targets)
}

/// Processor names in version order, or `none`.
fn list<'a>(targets: impl IntoIterator<Item = &'a String>) -> String {
    let mut names: Vec<&String> = targets.into_iter().collect();
    if names.is_empty() {
        return msg!("compiler.none");
    }
    names.sort_by_key(|t| (GfxVersion::from_name(t), t.as_str()));
    names.dedup();
    i18n::list(names)
}

/// The processors of `targets` that `libs` do not cover, with their nodes' evidence.
fn uncovered<'a>(libs: &[&DeviceLibs], targets: &'a [Target]) -> BTreeMap<&'a str, Vec<Evidence>> {
    let mut missing: BTreeMap<&str, Vec<Evidence>> = BTreeMap::new();
    for t in targets
        .iter()
        .filter(|t| !libs.iter().any(|d| d.targets.contains(&t.processor)))
    {
        missing
            .entry(t.processor.as_str())
            .or_default()
            .extend(t.nodes.iter().cloned());
    }
    missing
}

fn device_libs(c: &CompilerFacts, i: &InstallCompiler, targets: &[Target], out: &mut Vec<Finding>) {
    let (used, by) = c.searched(i);
    let missing = uncovered(&used, targets);
    if missing.is_empty() {
        return;
    }
    let names: Vec<String> = missing.keys().map(|s| (*s).to_owned()).collect();
    // The install's own directories that clang skips because a variable chose another one.
    let own: Vec<&DeviceLibs> = match by {
        Some(_) => i
            .device_libs
            .iter()
            .filter(|d| !used.iter().any(|u| u.dir == d.dir))
            .filter(|d| names.iter().any(|n| d.targets.contains(n)))
            .collect(),
        None => Vec::new(),
    };
    if let Some(by) = by.filter(|_| !own.is_empty() && uncovered(&own, targets).is_empty()) {
        out.push(hidden(i, by, &own, &names, missing));
        return;
    }
    if by.is_none() {
        if let Some(found) = other_clang(i, &used, &names, &missing) {
            out.push(found);
            return;
        }
    }
    let have: BTreeSet<String> = used
        .iter()
        .flat_map(|d| d.targets.iter().cloned())
        .collect();
    let mut finding = NO_DEVICE_LIBS_FOR_TARGET.finding(msg!(
        "compiler.no-device-libs-for-target",
        install = i.describe,
        missing = list(&names),
        covered = list(&have)
    ));
    if let Some(by) = by {
        finding = finding.with(Evidence::new(
            format!("env:{}", by.variable),
            by.value.clone(),
        ));
    }
    if used.is_empty() {
        let dir = by.map_or_else(|| format!("{}/amdgcn/bitcode", i.prefix), |b| b.dir.clone());
        finding = finding.with(Evidence::absent(dir));
    }
    for d in &used {
        finding = finding.with(libs_evidence(d));
    }
    for nodes in missing.into_values() {
        finding = finding.with_all(nodes);
    }
    out.push(finding.remedy(msg!(
        "compiler.no-device-libs-for-target-remedy",
        isa = names[0].trim_start_matches("gfx")
    )));
}

fn libs_evidence(d: &DeviceLibs) -> Evidence {
    Evidence::new(
        d.dir.clone(),
        msg!(
            "compiler.device-libs",
            count = d.isa_files,
            targets = list(&d.targets)
        ),
    )
}

/// `compiler.device-libs-hidden`: the install has device libraries for the GPUs, but
/// `HIP_DEVICE_LIB_PATH` or `ROCM_PATH` sends clang to a directory without them (clang reads
/// `$ROCM_PATH/amdgcn/bitcode`, while the ROCm Core SDK keeps them in `lib/llvm/amdgcn/bitcode`:
/// ROCm/legacy-rocm-build#5773, ROCm/TheRock#3213). The fix AMD gives is
/// `HIP_DEVICE_LIB_PATH` naming the install's own directory.
fn hidden(
    i: &InstallCompiler,
    by: &LibsOverride,
    own: &[&DeviceLibs],
    names: &[String],
    missing: BTreeMap<&str, Vec<Evidence>>,
) -> Finding {
    let state = match &by.libs {
        None => msg!("compiler.dir-absent"),
        Some(d) => msg!(
            "compiler.dir-lacks",
            missing = list(names),
            covered = list(&d.targets)
        ),
    };
    let mut finding = DEVICE_LIBS_HIDDEN
        .finding(msg!(
            "compiler.device-libs-hidden",
            install = i.describe,
            variable = by.variable,
            dir = by.dir,
            state = state,
            own = own[0].dir,
            missing = list(names)
        ))
        .with(Evidence::new(
            format!("env:{}", by.variable),
            by.value.clone(),
        ));
    finding = match &by.libs {
        Some(d) => finding.with(libs_evidence(d)),
        None => finding.with(Evidence::absent(by.dir.clone())),
    };
    for d in own {
        finding = finding.with(libs_evidence(d));
    }
    for nodes in missing.into_values() {
        finding = finding.with_all(nodes);
    }
    finding
        .remedy(msg!(
            "compiler.device-libs-hidden-remedy",
            variable = by.variable,
            own = own[0].dir
        ))
        .with_steps(crate::checks::runtime::set_env_step(
            HIP_DEVICE_LIB_PATH,
            &own[0].dir,
        ))
}

/// `compiler.device-libs-other-clang`: the default clang finds no device libraries for the
/// GPUs, while the resource directory of a clang of another major holds them — Fedora's
/// `rocm-device-libs` in `/usr/lib/clang/17/amdgcn/bitcode` under a `/usr/bin/clang` that became
/// clang 18 (instructlab/instructlab#855). Only that clang searches its resource directory, so
/// the remedy is that clang, or the directory named explicitly.
fn other_clang(
    i: &InstallCompiler,
    used: &[&DeviceLibs],
    names: &[String],
    missing: &BTreeMap<&str, Vec<Evidence>>,
) -> Option<Finding> {
    let clang = i.default_clang.as_ref()?;
    let (libs, owner) = i.device_libs.iter().find_map(|d| {
        let owner = d.owner.as_ref().filter(|_| !i.counts(d))?;
        names
            .iter()
            .all(|n| d.targets.contains(n))
            .then_some((d, owner))
    })?;
    let driver = owner
        .driver
        .clone()
        .unwrap_or_else(|| format!("clang-{}", owner.major));
    let mut finding = DEVICE_LIBS_OTHER_CLANG
        .finding(msg!(
            "compiler.device-libs-other-clang",
            install = i.describe,
            clang = clang.path,
            major = clang.major,
            missing = list(names),
            dir = libs.dir,
            owner = owner.major
        ))
        .with(Evidence::new(
            clang.path.clone(),
            format!("clang {}", clang.major),
        ));
    if used.is_empty() {
        finding = finding.with(Evidence::absent(format!(
            "{}/amdgcn/bitcode",
            clang.resource
        )));
    }
    for d in used {
        finding = finding.with(libs_evidence(d));
    }
    finding = finding.with(libs_evidence(libs));
    for nodes in missing.values() {
        finding = finding.with_all(nodes.iter().cloned());
    }
    Some(
        finding
            .remedy(msg!(
                "compiler.device-libs-other-clang-remedy",
                owner = owner.major,
                driver = driver,
                major = clang.major,
                dir = libs.dir
            ))
            .with_steps(crate::checks::runtime::set_env_step(
                HIP_DEVICE_LIB_PATH,
                &libs.dir,
            )),
    )
}

/// `hipcc 5.2.21153`, or the name alone when the version is unknown.
fn named(t: &Tool) -> String {
    match &t.version {
        Some(v) => format!("{} {v}", t.name),
        None => msg!("compiler.version-unknown", tool = t.name),
    }
}

fn found(c: &CompilerFacts, out: &mut Vec<Finding>) {
    let mut parts = Vec::new();
    let mut evidence = Vec::new();
    for i in c.installs.iter().filter(|i| !i.tools.is_empty()) {
        let tools: Vec<String> = i.tools.iter().map(named).collect();
        parts.push(msg!(
            "compiler.found-install",
            install = i.describe,
            tools = i18n::list(&tools)
        ));
        for t in &i.tools {
            evidence.push(Evidence::new(t.path.clone(), named(t)));
            if let Some(s) = &t.version_source {
                evidence.push(Evidence::new(
                    s.clone(),
                    t.version.clone().unwrap_or_default(),
                ));
            }
        }
        for d in &i.device_libs {
            evidence.push(Evidence::new(d.dir.clone(), list(&d.targets)));
        }
    }
    if !parts.is_empty() {
        out.push(COMPILERS_FOUND.finding(parts.join("; ")).with_all(evidence));
    }
}

fn offload_arch(c: &CompilerFacts, targets: &[Target], out: &mut Vec<Finding>) {
    let line = targets
        .iter()
        .map(|t| format!("--offload-arch={}", t.id))
        .collect::<Vec<_>>()
        .join(" ");
    let tools: Vec<String> = c
        .installs
        .iter()
        .flat_map(|i| i.tools.iter().map(|t| t.path.clone()))
        .collect();
    let summary = if tools.is_empty() {
        msg!("compiler.offload-arch", flags = line)
    } else {
        msg!(
            "compiler.offload-arch-compilers",
            flags = line,
            compilers = i18n::list(&tools)
        )
    };
    let mut finding = OFFLOAD_ARCH.finding(summary);
    for t in targets {
        finding = finding.with_all(t.nodes.iter().cloned());
    }
    for i in &c.installs {
        for d in &i.device_libs {
            finding = finding.with(Evidence::new(d.dir.clone(), list(&d.targets)));
        }
    }
    out.push(finding);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Source;

    /// The list reaches the command quoted, and only when every target is plain.
    #[test]
    fn arch_step_takes_only_plain_targets() {
        assert_eq!(
            arch_step("gfx90a;gfx1103")
                .and_then(|s| s.command)
                .as_deref(),
            Some("export PYTORCH_ROCM_ARCH=\"gfx90a;gfx1103\"")
        );
        assert!(arch_step("gfx90a:xnack+;gfx942").is_some());
        assert!(arch_step("gfx90a;$(reboot);gfx1103").is_none());
        assert!(arch_step("gfx90a;;gfx1103").is_none());
        assert!(arch_step("gfx90a\";gfx1103").is_none());
    }

    /// `build_targets_env` on the Radeon 780M (gfx1103) fixture with `env` as its `[env]`.
    fn build_targets(env: &str) -> Vec<&'static str> {
        let dir = tempfile::tempdir().unwrap();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/apu-phoenix-780m/."
        );
        let copied = std::process::Command::new("cp")
            .args(["-a", fixture])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(copied.success());
        let toml = dir.path().join("fixture.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        std::fs::write(
            &toml,
            text.replacen("[identity]", &format!("[env]\n{env}\n\n[identity]"), 1),
        )
        .unwrap();
        let facts = Facts::collect(&Source::fixture(dir.path()).unwrap());
        let mut out = Vec::new();
        build_targets_env(&facts, &[], &mut out);
        out.iter().map(|f| f.id).collect()
    }

    #[test]
    fn a_list_without_the_gpu_is_reported_and_one_with_it_is_not() {
        let id = [BUILD_TARGETS_EXCLUDE_GPU.id];
        assert_eq!(build_targets(r#"PYTORCH_ROCM_ARCH = "gfx90a;gfx942""#), id);
        // PyTorch splits on spaces as well as semicolons.
        assert!(build_targets(r#"PYTORCH_ROCM_ARCH = "gfx1100 gfx1103""#).is_empty());
        // A generic target covers its family; an empty value is unset for PyTorch.
        assert!(build_targets(r#"PYTORCH_ROCM_ARCH = "gfx11-generic""#).is_empty());
        assert!(build_targets(r#"PYTORCH_ROCM_ARCH = """#).is_empty());
        assert!(build_targets("").is_empty());
    }

    #[test]
    fn the_target_compared_is_the_effective_one() {
        let env = "PYTORCH_ROCM_ARCH = \"gfx1100\"\nHSA_OVERRIDE_GFX_VERSION = \"11.0.0\"";
        assert!(build_targets(env).is_empty());
        let env = "PYTORCH_ROCM_ARCH = \"gfx1103\"\nHSA_OVERRIDE_GFX_VERSION = \"11.0.0\"";
        assert_eq!(build_targets(env), [BUILD_TARGETS_EXCLUDE_GPU.id]);
    }
}
