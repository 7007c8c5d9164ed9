//! Layer 3: libhsakmt, passively: is the thunk the ROCr in use needs there, shared or built in?

pub mod active;
pub mod rules;

use crate::facts::Facts;
use crate::facts::install::{Install, InstallFacts, InstallKind, Library, RocmVersion};
use crate::facts::os_release::Distro;
use crate::finding::{
    Action, Evidence, Finding, RemedyStep, Status, THUNK_BUILT_IN, THUNK_MISSING, THUNK_NO_RUNTIME,
    THUNK_NOT_CAPTURED, THUNK_SHARED,
};
use crate::msg;

/// The first ROCm release whose thunk is part of ROCr's sources ("As of ROCm 6.3.0, the ROCT
/// Thunk Interface is now included as part of the ROCr runtime package").
const THUNK_IN_ROCR: (u32, u32) = (6, 3);
/// The first ROCm release whose packages build libhsakmt static by default (ROCT-Thunk-Interface
/// commit 88a5e02, 2021-03-22, "Build thunk as static by default", first tag rocm-4.3.0).
const THUNK_STATIC: (u32, u32) = (4, 3);

/// Layer 3 findings; `below` are the findings of layers 1–2.
pub fn check(f: &Facts, _below: &[Finding]) -> Vec<Finding> {
    let facts = &f.installs;
    if !facts.captured {
        return vec![THUNK_NOT_CAPTURED.finding(msg!("thunk.not-captured"))];
    }
    let Some((install, rocr)) = rocr_in_use(facts) else {
        let wheels = facts.installs.iter().all(|i| !i.libs.runtime())
            && !f.frameworks.wheel_runtimes().is_empty();
        return vec![THUNK_NO_RUNTIME.finding(if wheels {
            msg!("thunk.wheel-runtime-only")
        } else {
            msg!("thunk.no-runtime")
        })];
    };
    let rocr_evidence = Evidence::new(rocr.path(), rocr.describe());
    let version_evidence = Evidence::new(
        install
            .version_source
            .clone()
            .unwrap_or_else(|| install.prefix.clone()),
        install.describe(),
    );
    let own = install
        .libs
        .hsakmt
        .as_ref()
        .filter(|t| t.dir == rocr.dir)
        .or_else(|| {
            facts
                .search_path
                .iter()
                .filter(|d| d.dir == rocr.dir || d.libs.rocr.as_ref() == Some(rocr))
                .find_map(|d| d.libs.hsakmt.as_ref())
        });
    let on_path = facts
        .search_path
        .iter()
        .find_map(|d| d.libs.hsakmt.as_ref());
    let shared = shared_thunk(install, rocr);
    if let Some(thunk) = own.or(on_path.filter(|_| shared != Some(false))) {
        let name = thunk.file.as_deref().unwrap_or(&thunk.name);
        return vec![
            THUNK_SHARED
                .finding(msg!("thunk.shared", name, dir = thunk.dir))
                .with(rocr_evidence)
                .with(version_evidence)
                .with(Evidence::new(thunk.path(), thunk.describe())),
        ];
    }
    if shared == Some(true) {
        let package = match install.kind {
            InstallKind::Distribution => msg!("thunk.package-distribution"),
            _ => msg!("thunk.package-amd"),
        };
        return vec![
            THUNK_MISSING
                .finding(msg!("thunk.missing", install = install.describe()))
                .with(rocr_evidence)
                .with(version_evidence)
                .with(Evidence::absent(format!(
                    "{}/libhsakmt.so.1",
                    rocr.dir.trim_end_matches('/')
                )))
                .with(Evidence::new(
                    msg!("thunk.search-path"),
                    facts.search_path_text(),
                ))
                .remedy(msg!("thunk.missing-remedy", package))
                .with_steps(thunk_steps(f, install.kind)),
        ];
    }
    let why = match install.version {
        Some(version) if version.line() >= THUNK_IN_ROCR => msg!("thunk.why-in-rocr", version),
        Some(version) => msg!("thunk.why-static", version),
        None if shared.is_none() => msg!("thunk.why-unknown"),
        None if install.kind == InstallKind::Distribution => msg!("thunk.why-distribution-new"),
        None => msg!("thunk.why-amd-static"),
    };
    let status = if shared.is_none() {
        Status::Info
    } else {
        THUNK_BUILT_IN.status
    };
    let mut finding = THUNK_BUILT_IN
        .finding_with(
            status,
            msg!(
                "thunk.built-in",
                rocr = rocr.file.as_deref().unwrap_or(&rocr.name),
                why
            ),
        )
        .with(rocr_evidence)
        .with(version_evidence);
    if let Some(stray) = on_path {
        finding = finding.with(Evidence::new(
            stray.path(),
            msg!("thunk.stray", library = stray.describe()),
        ));
    }
    vec![finding]
}

/// Installing the thunk the ROCr in use needs, per family.
///
/// AMD's repositories (the `/opt` installs) name it `hsakmt-roct` for apt, dnf and zypper up to
/// ROCm 6.2 (ROCm install-on-linux, "Package manager integration"; ROCm/ROCmValidationSuite#809
/// drops the deprecated `hsakmt-roct-dev` when 6.3 folds the thunk into ROCr); AMD publishes no
/// Arch packages, so Arch gets the step in words. A distribution's ROCr takes the
/// distribution's thunk: Debian's and Ubuntu's `libhsakmt1`, Fedora's `hsakmt` (until its
/// rocm-runtime 6.3 obsoleted it, openucx/ucx#10542), Arch's `hsakmt-roct` (in the official
/// repositories since 2023, archlinuxcn/repo#3166); SUSE's name is not one the probe can
/// vouch for, so that variant is in words.
fn thunk_steps(f: &Facts, kind: InstallKind) -> Vec<RemedyStep> {
    crate::facts::os_release::families(f.os_release.as_ref())
        .into_iter()
        .map(|d| {
            let distribution = kind == InstallKind::Distribution;
            let package = match (distribution, d) {
                (true, Distro::Debian) => Some("libhsakmt1"),
                (true, Distro::Fedora) => Some("hsakmt"),
                (true, Distro::Arch) => Some("hsakmt-roct"),
                (true, Distro::Suse) | (false, Distro::Arch) => None,
                (false, _) => Some("hsakmt-roct"),
            };
            let object = package.unwrap_or("libhsakmt");
            let text = match (package.is_some(), distribution) {
                (true, true) => msg!("thunk.step-install-distribution"),
                (true, false) => msg!("thunk.step-install-amd"),
                (false, true) => msg!("thunk.step-install-distribution-words"),
                (false, false) => msg!("thunk.step-install-amd-words"),
            };
            match package {
                Some(p) => RemedyStep::run(Action::Install, object, d.install(p), text),
                None => RemedyStep::say(Action::Install, object, text),
            }
            .on(d)
        })
        .collect()
}

/// The ROCr a process uses and its install: the one on the search path, else the effective
/// install's own.
fn rocr_in_use(facts: &InstallFacts) -> Option<(&Install, &Library)> {
    if let Some(dir) = facts.loaded_rocr() {
        let install = dir.install.and_then(|i| facts.installs.get(i))?;
        return Some((install, dir.libs.rocr.as_ref()?));
    }
    let install = facts.effective()?;
    Some((install, install.libs.rocr.as_ref()?))
}

/// Whether this ROCr loads libhsakmt as a shared library: AMD's packages (and trees laid out
/// like them) before 4.3; a distribution's builds before 6.3. `None` when that cannot be told: a
/// distribution build of unknown release whose ROCr is 1.14 (ROCm 6.2.1–6.3.x).
fn shared_thunk(install: &Install, rocr: &Library) -> Option<bool> {
    let line = install.version.map(|v: RocmVersion| v.line());
    match (install.kind, line) {
        (_, Some(l)) if l >= THUNK_IN_ROCR => Some(false),
        (InstallKind::Distribution, Some(_)) => Some(true),
        (InstallKind::Distribution, None) => match rocr_minor(rocr) {
            Some(m) if m < 14 => Some(true),
            Some(m) if m > 14 => Some(false),
            _ => None,
        },
        (_, Some(l)) => Some(l < THUNK_STATIC),
        (_, None) => Some(false),
    }
}

/// ROCr's own minor version from its file name (`libhsa-runtime64.so.1.14.0` → 14). The
/// compatibility matrix pairs ROCr 1.12 with ROCm 6.0, 1.13 with 6.1–6.2.0, 1.14 with 6.2.1–6.3.
fn rocr_minor(rocr: &Library) -> Option<u32> {
    let file = rocr.file.as_deref()?;
    file.rsplit('/')
        .next()?
        .strip_prefix("libhsa-runtime64.so.1.")?
        .split('.')
        .next()?
        .parse()
        .ok()
}
