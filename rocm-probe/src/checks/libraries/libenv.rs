//! Layer 5: the environment the libraries run in ([`LibEnvFacts`]).
//!
//! - MIOpen's user database or kernel cache on a file system MIOpen counts as networked, or on a
//!   read-only mount: concurrent jobs corrupt or fail to lock its SQLite databases
//!   (ROCm/MIOpen#1878 `database disk image is malformed`, #2214 `locking protocol`), and a
//!   read-only one cannot be written (ROCm/tensorflow-upstream#1419 `disk I/O error`). Only when
//!   an MIOpen is installed or bundled.
//! - A pip `amdsmi` package in a framework's site directory whose release is not the one of the
//!   ROCm the frameworks load: `import torch` (which imports `amdsmi`) or `amd-smi` fail on a
//!   symbol the other build lacks (ROCm/amdsmi#186, RLinf/RLinf#1507; AMD's known issue
//!   ROCm/legacy-rocm-build#5875).
//! - The copy-engine variables of `data/environment.toml`, each assessed: what it does, what it
//!   costs, and whether the problem it is the workaround for was fixed in the release in use.

use crate::facts::Facts;
use crate::facts::frameworks::{leading_release, normalize};
use crate::facts::install::RocmVersion;
use crate::facts::libenv::{MIOPEN_CUSTOM_CACHE_DIR, MIOPEN_USER_DB_PATH, MOUNTINFO, MiopenRole};
use crate::finding::{
    AMDSMI_PYTHON_MISMATCH, Action, ENV_SETTING, Evidence, Finding, MIOPEN_DB_LOCATION, RemedyStep,
    Subject,
};
use crate::msg;

/// The layer-5 environment findings.
pub(super) fn check(f: &Facts, out: &mut Vec<Finding>) {
    miopen(f, out);
    amdsmi(f, out);
    settings(f, out);
}

fn has_miopen(f: &Facts) -> bool {
    f.libraries
        .installs
        .iter()
        .any(|i| i.present.iter().any(|l| l.name == "MIOpen"))
        || f.frameworks
            .torches()
            .any(|(_, t)| t.bundled.as_ref().is_some_and(|b| b.has("MIOpen")))
}

fn miopen(f: &Facts, out: &mut Vec<Finding>) {
    let env = &f.libenv;
    if !env.mounts_captured || !has_miopen(f) {
        return;
    }
    let bad: Vec<_> = env
        .miopen
        .iter()
        .filter_map(|d| d.mount.as_ref().map(|m| (d, m)))
        .filter(|(_, m)| m.networked() || m.read_only)
        .collect();
    let Some((first, mount)) = bad.first() else {
        return;
    };
    let role = |r: MiopenRole| match r {
        MiopenRole::UserDb => msg!("libraries.miopen-user-db"),
        MiopenRole::Cache => msg!("libraries.miopen-cache"),
    };
    let summary = if mount.networked() {
        msg!(
            "libraries.miopen-db-network",
            role = role(first.role),
            path = first.path,
            fstype = mount.fstype,
            point = mount.point
        )
    } else {
        msg!(
            "libraries.miopen-db-read-only",
            role = role(first.role),
            path = first.path,
            point = mount.point
        )
    };
    let mut finding = MIOPEN_DB_LOCATION.finding(summary);
    for (d, m) in &bad {
        let how = match d.from_env {
            Some(var) => msg!("libraries.miopen-from-env", var),
            None => msg!("libraries.miopen-default"),
        };
        finding = finding
            .with(Evidence::new(
                d.from_env
                    .map_or_else(|| "env:HOME".to_owned(), |v| format!("env:{v}")),
                format!("{} ({how})", d.path),
            ))
            .with(Evidence::new(
                MOUNTINFO,
                msg!(
                    "libraries.mount",
                    point = m.point,
                    fstype = m.fstype,
                    mode = if m.read_only { "ro" } else { "rw" }
                ),
            ));
    }
    // The default location on a networked mount: MIOpen builds with ROCm/MIOpen#2092 move it to
    // the temporary directory themselves; an explicit one is used as it is.
    let explain = if mount.networked() && first.from_env.is_none() {
        msg!("libraries.miopen-db-network-default")
    } else if mount.networked() {
        msg!("libraries.miopen-db-network-explicit")
    } else {
        msg!("libraries.miopen-db-read-only-why")
    };
    let finding = Finding {
        summary: format!("{} {explain}", finding.summary),
        ..finding
    };
    let steps = [
        (MIOPEN_USER_DB_PATH, "user-db"),
        (MIOPEN_CUSTOM_CACHE_DIR, "cache"),
    ]
    .map(|(var, sub)| {
        RemedyStep::run(
            Action::SetEnv,
            var,
            format!("export {var}=\"/tmp/$USER/miopen/{sub}\""),
            msg!("libraries.miopen-step", var),
        )
    });
    out.push(
        finding
            .remedy(msg!("libraries.miopen-db-remedy"))
            .with_steps(steps)
            .about(Subject::library("MIOpen")),
    );
}

/// A ROCm-numbered `amdsmi` release (PyPI's wheels follow ROCm: 6.4.0, 7.0.2); `None` for the
/// amd-smi library's own numbering (24.x, 25.x, 26.x) or anything else.
fn amdsmi_release(version: &str) -> Option<RocmVersion> {
    leading_release(version).filter(|v| (1..20).contains(&v.major))
}

fn amdsmi(f: &Facts, out: &mut Vec<Finding>) {
    for site in &f.frameworks.sites {
        let Some(dist) = &site.amdsmi else { continue };
        let Some(have) = amdsmi_release(&dist.version) else {
            continue;
        };
        // The ROCm the site's frameworks load: TheRock's wheels beside them, else the system's
        // (whose share/amd_smi holds the matching package).
        let sdk = site.rocm_sdk.as_ref().and_then(|s| {
            let path = s
                .dists
                .iter()
                .find(|d| normalize(&d.name).starts_with("rocm"))
                .map(|d| d.path.clone());
            s.rocm.map(|v| (v, path, None))
        });
        let system = || {
            f.installs.effective().and_then(|i| {
                i.version.map(|v| {
                    (
                        v,
                        Some(i.version_source.clone().unwrap_or_else(|| i.prefix.clone())),
                        Some(i.prefix.clone()),
                    )
                })
            })
        };
        let Some((rocm, from, prefix)) = sdk.or_else(system) else {
            continue;
        };
        if (have.major, have.minor) == (rocm.major, rocm.minor) {
            continue;
        }
        let direction = if (have.major, have.minor) > (rocm.major, rocm.minor) {
            msg!("libraries.amdsmi-newer")
        } else {
            msg!("libraries.amdsmi-older")
        };
        let mut finding = AMDSMI_PYTHON_MISMATCH
            .finding(msg!(
                "libraries.amdsmi-mismatch",
                version = dist.version,
                site = site.path,
                rocm = rocm.to_string(),
                direction
            ))
            .with(Evidence::new(dist.path.clone(), dist.version.clone()));
        if let Some(src) = from {
            finding = finding.with(Evidence::new(src, format!("ROCm {rocm}")));
        }
        // AMD's workaround (ROCm/legacy-rocm-build#5875): uninstall, and reinstall from the
        // ROCm in use when something needs the package.
        let command = match &prefix {
            Some(p) => format!(
                "python3 -m pip uninstall -y amdsmi && python3 -m pip install {p}/share/amd_smi"
            ),
            None => "python3 -m pip uninstall -y amdsmi".to_owned(),
        };
        let uninstall = RemedyStep::run(
            Action::Install,
            "amdsmi",
            command,
            msg!("libraries.amdsmi-step", rocm = rocm.to_string()),
        );
        out.push(
            finding
                .remedy(msg!("libraries.amdsmi-remedy", rocm = rocm.to_string()))
                .step(uninstall)
                .about(Subject::library("amdsmi")),
        );
    }
}

fn settings(f: &Facts, out: &mut Vec<Finding>) {
    let system = f.installs.effective().and_then(|i| i.version);
    for s in &f.libenv.settings {
        let var = format!("env:{}", s.variable);
        let Some(row) = &s.setting else {
            out.push(
                ENV_SETTING
                    .finding(msg!(
                        "libraries.env-ignored",
                        variable = s.variable,
                        value = s.value
                    ))
                    .with(Evidence::new(var, format!("{:?}", s.value))),
            );
            continue;
        };
        let what = crate::i18n::text(row.message, &[]);
        let mut summary = msg!(
            "libraries.env-set",
            variable = row.variable,
            value = row.value,
            reader = row.reader,
            what
        );
        if let (Some((major, minor)), Some(v)) = (row.fixed_in, system)
            && (v.major, v.minor) >= (major, minor)
        {
            summary.push(' ');
            summary.push_str(&msg!(
                "libraries.env-fixed",
                fixed = format!("{major}.{minor}"),
                release = v.to_string()
            ));
        }
        let mut finding = ENV_SETTING
            .finding(summary)
            .with(Evidence::new(var, format!("{:?}", s.value)))
            .with(Evidence::new(row.source, row.reader));
        if let Some(r) = row.report {
            finding = finding.with(Evidence::new(r, msg!("libraries.env-report")));
        }
        out.push(finding);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;
    use crate::testfs::write as touch;

    fn findings(b: &std::path::Path) -> Vec<Finding> {
        let facts = Facts::collect(&Source::fixture(b).unwrap());
        let mut out = Vec::new();
        check(&facts, &mut out);
        out
    }

    #[test]
    fn a_value_rocr_does_not_take_is_reported_as_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(
            b,
            "fixture.toml",
            "[env]\nHSA_ENABLE_SDMA = \"false\"\nHSA_ENABLE_SDMA_GANG = \"0\"\n",
        );
        let out = crate::i18n::scoped(crate::i18n::Lang::En, || findings(b));
        assert_eq!(out.len(), 2, "{out:#?}");
        assert!(out.iter().all(|f| f.id == ENV_SETTING.id));
        assert!(
            out[0]
                .summary
                .contains("HSA_ENABLE_SDMA=false is set, but ROCr acts only on 0 or 1")
        );
        assert!(
            out[1]
                .summary
                .starts_with("HSA_ENABLE_SDMA_GANG=0 (ROCr): a large copy uses one SDMA engine")
        );
    }

    #[test]
    fn a_read_only_miopen_location_is_reported_and_a_local_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(b, "opt/rocm-6.2.0/.info/version", "6.2.0-66\n");
        touch(b, "opt/rocm-6.2.0/lib/libMIOpen.so.1.0.60200", "");
        let mounts = "22 1 8:2 / / rw,relatime - ext4 /dev/sda2 rw\n\
                      40 22 0:45 / /work ro,relatime - ext4 /dev/sdb1 ro\n";
        touch(b, "proc/self/mountinfo", mounts);
        touch(b, "fixture.toml", "[env]\nHOME = \"/home/u\"\n");
        assert!(findings(b).iter().all(|f| f.id != MIOPEN_DB_LOCATION.id));
        touch(
            b,
            "fixture.toml",
            "[env]\nHOME = \"/home/u\"\nMIOPEN_USER_DB_PATH = \"/work/db\"\n",
        );
        let out = crate::i18n::scoped(crate::i18n::Lang::En, || findings(b));
        let f = out
            .iter()
            .find(|f| f.id == MIOPEN_DB_LOCATION.id)
            .expect("finding");
        assert!(
            f.summary
                .starts_with("MIOpen's user database /work/db is on a read-only mount (/work)."),
            "{}",
            f.summary
        );
        assert_eq!(f.remedy_steps.len(), 2);
    }

    #[test]
    fn only_rocm_numbered_amdsmi_releases_are_compared() {
        assert_eq!(amdsmi_release("7.0.2").map(|v| v.minor), Some(0));
        assert_eq!(amdsmi_release("6.4.0").map(|v| v.major), Some(6));
        assert_eq!(amdsmi_release("26.0.0+abc"), None);
        assert_eq!(amdsmi_release("x"), None);
    }
}
