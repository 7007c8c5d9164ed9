//! Layer 2 under WSL: the pieces that stand in for amdgpu and KFD there (`facts/wsl.rs` says
//! which, with their sources): `/dev/dxg` usable by this identity, Microsoft's `libdxcore.so`
//! where the loader finds it, and a ROCr that can use them — AMD's WSL build (ROCm 6.x) or the
//! standard one with librocdxg and DXG detection on (ROCm 7.2 and later). When all are there
//! the GPU behind `/dev/dxg` is still unknown, so the verdict stays undetermined.

use crate::facts::Facts;
use crate::facts::access::{Access, DeviceFacts, access};
use crate::facts::install::{ROCR_SONAME, RocmVersion, normalize, parent};
use crate::facts::platform::{DXG, PROC_VERSION};
use crate::facts::wsl::{
    DXCORE, DXCORE_SONAME, DXG_DETECTION, ROCDXG_NAMES, RocrBuild, WSL_LIB_DIR, WslFacts,
};
use crate::finding::{
    Action, Evidence, Finding, RemedyStep, Status, WSL_DXCORE_MISSING, WSL_DXG_DETECTION_OFF,
    WSL_DXG_UNUSABLE, WSL_READY, WSL_ROCDXG_NOT_SEARCHED, WSL_RUNTIME_MISSING,
};
use crate::{i18n, msg};

/// From this release on ROCr's DXG detection is on unless the variable is `0`
/// (ROCm/rocm-systems#3863; librocdxg#34: `=1` "is to pair with rocm prev 7.13").
const DETECTION_DEFAULT_ON: (u32, u32) = (7, 13);
/// The first release whose standard ROCr loads librocdxg (`facts/wsl.rs`).
const ROCDXG_FIRST: (u32, u32) = (7, 2);
/// The file librocdxg's `make install` writes under `/etc/ld.so.conf.d` since ROCm/librocdxg#47
/// ("Write x86_64-libhsakmt.conf during binary component install so ldconfig picks up
/// librocdxg").
const ROCDXG_CONF: &str = "x86_64-libhsakmt.conf";

/// The WSL findings; nothing without WSL markers.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    let Some(w) = &f.wsl else { return };
    let mut verified = Vec::new();
    let mut failed = false;
    let dxg = DeviceFacts {
        path: DXG.to_owned(),
        node: w.dxg.clone(),
        group_name: None,
    };
    match access(w.dxg.as_ref(), f.identity.as_ref()) {
        Access::Missing => {
            failed = true;
            out.push(
                WSL_DXG_UNUSABLE
                    .finding(msg!("driver.wsl-dxg-missing"))
                    .with(Evidence::absent(format!("device:{DXG}")))
                    .with_all(
                        f.platform
                            .wsl_markers
                            .get(PROC_VERSION)
                            .map(|v| Evidence::new(PROC_VERSION, v.clone())),
                    )
                    .remedy(msg!("driver.wsl-dxg-missing-remedy")),
            );
        }
        Access::Denied => {
            failed = true;
            out.push(
                WSL_DXG_UNUSABLE
                    .finding(msg!("driver.wsl-dxg-denied"))
                    .with(super::node_evidence(&dxg))
                    .with(super::identity_evidence(f))
                    .remedy(msg!("driver.wsl-dxg-denied-remedy")),
            );
        }
        Access::Granted => verified.push(msg!("driver.wsl-verified-dxg")),
        Access::Unknown => {}
    }
    // The rest is about the ROCm a process would load; without one, layer 4 says so.
    let Some(rocr) = &f.rocr_build else { return };
    let build = rocr.wsl();
    let version = f.installs.effective().and_then(|i| i.version);
    let rocr_evidence = || {
        Evidence::new(
            rocr.path.clone(),
            match &rocr.needed {
                Some(n) => msg!("driver.wsl-needed", needed = i18n::list(n)),
                None => msg!("driver.wsl-needed-unknown"),
            },
        )
    };
    let uses_dxcore = build == Some(true) || !w.rocdxg.is_empty();
    match (&w.dxcore, w.dxcore_on_path) {
        (Some(found), _) if found.is_empty() => {
            failed = true;
            out.push(
                WSL_DXCORE_MISSING
                    .finding(msg!("driver.wsl-dxcore-missing", path = DXCORE))
                    .with(Evidence::absent(DXCORE))
                    .with(rocr_evidence())
                    .remedy(msg!("driver.wsl-dxcore-missing-remedy", dir = WSL_LIB_DIR)),
            );
        }
        (Some(found), Some(false)) if uses_dxcore => {
            failed = true;
            out.push(
                WSL_DXCORE_MISSING
                    .finding(msg!(
                        "driver.wsl-dxcore-off-path",
                        name = DXCORE_SONAME,
                        dir = WSL_LIB_DIR
                    ))
                    .with_all(
                        found
                            .iter()
                            .map(|p| Evidence::new(p.clone(), msg!("driver.wsl-present"))),
                    )
                    .with(Evidence::new(
                        msg!("driver.wsl-search-path"),
                        f.installs.search_path_text(),
                    ))
                    .with(rocr_evidence())
                    .remedy(msg!("driver.wsl-dxcore-off-path-remedy", dir = WSL_LIB_DIR)),
            );
        }
        (Some(found), _) => {
            verified.push(msg!(
                "driver.wsl-verified-dxcore",
                paths = i18n::list(found)
            ));
        }
        (None, _) => {}
    }
    let release = version.map_or_else(|| msg!("driver.wsl-release-unknown"), |v| v.to_string());
    let by_runpath = in_runpath(f, w, rocr);
    let not_searched = rocdxg_not_searched(f, w, rocr, version, by_runpath);
    if build == Some(true) {
        verified.push(msg!("driver.wsl-verified-wsl-rocr", path = rocr.path));
    } else if !w.rocdxg.is_empty() || by_runpath {
        let found = if by_runpath && w.rocdxg.is_empty() {
            &w.rocdxg_unsearched
        } else {
            &w.rocdxg
        };
        if detection(f, version, found, out) {
            verified.push(msg!(
                "driver.wsl-verified-rocdxg",
                paths = i18n::list(found)
            ));
        } else {
            failed = true;
        }
    } else if not_searched.as_ref().is_some_and(|(install, _)| *install) {
        // The install's ROCr is named by the finding below.
    } else if build == Some(false) {
        failed = true;
        out.push(runtime_missing(f, version, &release, rocr_evidence()));
    } else {
        verified.push(msg!("driver.wsl-rocr-unread", path = rocr.path));
    }
    if let Some((_, finding)) = not_searched {
        failed = true;
        out.push(finding);
    }
    if failed {
        return;
    }
    let finding = WSL_READY
        .finding(msg!(
            "driver.wsl-ready",
            verified = verified.join(&msg!("driver.wsl-separator")),
            release
        ))
        .with(rocr_evidence())
        .with_all(
            w.rocdxg
                .iter()
                .map(|p| Evidence::new(p.clone(), msg!("driver.wsl-present"))),
        )
        .with(if w.driver_store.is_empty() {
            Evidence::absent("/usr/lib/wsl/drivers")
        } else {
            Evidence::new("/usr/lib/wsl/drivers", w.driver_store.join(", "))
        });
    out.push(finding);
}

/// librocdxg is installed, but only where the loader does not look for it on behalf of a ROCr
/// that needs it: the install's (unless it is AMD's WSL build) and each wheel's from ROCm 7.2
/// on. ROCr opens librocdxg by name, so only `LD_LIBRARY_PATH`, the ldconfig cache and the
/// default directories count, plus the install's ROCr's own run path when its dynamic section
/// has one (ROCr 7.2.3 beside librocdxg in `/opt/rocm/lib` did not find it, ROCm/librocdxg#35)
/// and a wheel's own directory (its `$ORIGIN` RUNPATH, ROCm/TheRock#1011). Returns whether the
/// install's ROCr is among those named, and the finding.
fn rocdxg_not_searched(
    f: &Facts,
    w: &WslFacts,
    rocr: &RocrBuild,
    version: Option<RocmVersion>,
    by_runpath: bool,
) -> Option<(bool, Finding)> {
    if !w.rocdxg.is_empty() {
        return None;
    }
    let dir = w.rocdxg_unsearched.first().map(|p| parent(p))?;
    let mut rocrs: Vec<String> = Vec::new();
    // An unreadable ROCr of 7.x is not AMD's WSL build: that package ended with 6.4.
    let needs_rocdxg = match rocr.wsl() {
        Some(wsl) => !wsl,
        None => version.is_none_or(|v| v.line() >= ROCDXG_FIRST),
    } && !by_runpath;
    if needs_rocdxg {
        rocrs.push(rocr.path.clone());
    }
    for wheel in f.frameworks.wheel_runtimes() {
        let Some(lib) = wheel
            .bundled
            .libs
            .iter()
            .find(|l| l.name == "hsa-runtime64")
        else {
            continue;
        };
        let release = wheel
            .bundled
            .rocm
            .or_else(|| wheel.site.rocm_sdk.as_ref().and_then(|s| s.rocm));
        let beside = |p: &String| parent(p) == wheel.bundled.lib_dir.trim_end_matches('/');
        if release.is_some_and(|v| v.line() < ROCDXG_FIRST) || w.rocdxg_in_wheels.iter().any(beside)
        {
            continue;
        }
        let Some(name) = lib
            .files
            .iter()
            .find(|n| n.as_str() == ROCR_SONAME)
            .or(lib.files.first())
        else {
            continue;
        };
        rocrs.push(format!(
            "{}/{name}",
            wheel.bundled.lib_dir.trim_end_matches('/')
        ));
    }
    if rocrs.is_empty() {
        return None;
    }
    let conf = format!("/etc/ld.so.conf.d/{ROCDXG_CONF}");
    Some((
        needs_rocdxg,
        WSL_ROCDXG_NOT_SEARCHED
            .finding(msg!(
                "driver.wsl-rocdxg-not-searched",
                dir,
                rocrs = i18n::list(&rocrs)
            ))
            .with_all(
                rocrs
                    .iter()
                    .map(|p| Evidence::new(p.clone(), msg!("driver.wsl-rocdxg-not-found-by"))),
            )
            .with_all(
                w.rocdxg_unsearched
                    .iter()
                    .map(|p| Evidence::new(p.clone(), msg!("driver.wsl-present"))),
            )
            .with(Evidence::new(
                msg!("driver.wsl-search-path"),
                f.installs.search_path_text(),
            ))
            .remedy(msg!("driver.wsl-rocdxg-not-searched-remedy", dir, conf))
            .step(RemedyStep::run(
                Action::Install,
                conf.clone(),
                format!("echo {dir} | sudo tee {conf} && sudo ldconfig"),
                msg!("driver.wsl-step-register-rocdxg", dir),
            )),
    ))
}

/// Whether a librocdxg outside the search order is in a directory of ROCr's own run path
/// (`$ORIGIN` being the directory ROCr is loaded from), compared through `/opt/rocm`'s target.
fn in_runpath(f: &Facts, w: &WslFacts, rocr: &RocrBuild) -> bool {
    let Some(runpath) = &rocr.runpath else {
        return false;
    };
    let origin = parent(&rocr.path);
    let real = |p: &str| {
        let p = normalize(p);
        match (&f.installs.opt_rocm, p.strip_prefix("/opt/rocm/")) {
            (Some(o), Some(rest)) => normalize(&format!("{}/{rest}", o.target)),
            _ => p,
        }
    };
    let dirs: Vec<String> = runpath
        .iter()
        .map(|d| real(&d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)))
        .collect();
    w.rocdxg_unsearched
        .iter()
        .any(|p| dirs.contains(&real(parent(p))))
}

/// librocdxg is there: whether ROCr will look for `/dev/dxg`. Returns whether it will; pushes
/// the finding when it will not or may not.
fn detection(
    f: &Facts,
    version: Option<RocmVersion>,
    rocdxg: &[String],
    out: &mut Vec<Finding>,
) -> bool {
    let value = f.platform.env.get(DXG_DETECTION).map(String::as_str);
    let Some(status) = detection_off(value, version) else {
        return true;
    };
    let set = value.map_or_else(
        || msg!("driver.wsl-detection-unset", var = DXG_DETECTION),
        |v| msg!("driver.wsl-detection-value", var = DXG_DETECTION, value = v),
    );
    let summary = if status == Status::Fail {
        msg!("driver.wsl-detection-off", set)
    } else {
        msg!("driver.wsl-detection-unknown", set)
    };
    out.push(
        WSL_DXG_DETECTION_OFF
            .finding_with(status, summary)
            .with(Evidence::new(
                format!("env:{DXG_DETECTION}"),
                value.map_or_else(|| msg!("driver.wsl-unset"), str::to_owned),
            ))
            .with_all(
                rocdxg
                    .iter()
                    .map(|p| Evidence::new(p.clone(), msg!("driver.wsl-present"))),
            )
            .remedy(msg!("driver.wsl-detection-remedy", var = DXG_DETECTION))
            .step(RemedyStep::run(
                Action::SetEnv,
                DXG_DETECTION,
                format!("export {DXG_DETECTION}=1"),
                msg!("driver.wsl-step-detection", var = DXG_DETECTION),
            )),
    );
    false
}

/// Whether ROCr's DXG detection is off with `HSA_ENABLE_DXG_DETECTION` = `value` in `version`:
/// `None` when it is on, `Fail` when off, `Warn` when it depends on a release not known. Before
/// 7.13 only `1` turns it on; from 7.13 anything but `0` does, unset included.
fn detection_off(value: Option<&str>, version: Option<RocmVersion>) -> Option<Status> {
    let default_on = version.map(|v| v.line() >= DETECTION_DEFAULT_ON);
    match (value, default_on) {
        (Some("1"), _) | (None, Some(true)) => None,
        (Some("0"), _) | (_, Some(false)) => Some(Status::Fail),
        (Some(_), Some(true)) => None,
        (_, None) => Some(Status::Warn),
    }
}

/// A standard ROCr (it does not link libdxcore) and no librocdxg: nothing can reach `/dev/dxg`.
fn runtime_missing(
    f: &Facts,
    version: Option<RocmVersion>,
    release: &str,
    rocr: Evidence,
) -> Finding {
    let dirs: Vec<String> = f
        .installs
        .search_path
        .iter()
        .map(|d| d.dir.clone())
        .collect();
    let finding = WSL_RUNTIME_MISSING
        .finding(msg!("driver.wsl-runtime-missing", release))
        .with(rocr)
        .with(Evidence::new(
            msg!(
                "driver.wsl-rocdxg-looked-for",
                names = i18n::list(ROCDXG_NAMES)
            ),
            msg!("driver.wsl-not-found-in", dirs = dirs.join(":")),
        ));
    // AMD's WSL runtime package exists for the 6.x releases; its installer use case is the
    // documented command (ROCm/legacy-rocm-build#3051: `amdgpu-install -y --usecase=wsl,rocm
    // --no-dkms`).
    match version {
        Some(v) if v.major == 6 => finding
            .remedy(msg!("driver.wsl-runtime-missing-remedy-6"))
            .step(RemedyStep::run(
                Action::Install,
                "hsa-runtime-rocr4wsl-amdgpu",
                "sudo amdgpu-install -y --usecase=wsl,rocm --no-dkms",
                msg!("driver.wsl-step-install-wsl-runtime"),
            )),
        _ => finding.remedy(msg!("driver.wsl-runtime-missing-remedy")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    const VENV_ROCR: &str = "/home/krishkat/project/.venv/lib/python3.14/site-packages/_rocm_sdk_core/lib/libhsa-runtime64.so.1";
    const OPT_ROCR: &str = "/opt/rocm-7.13.0/lib/libhsa-runtime64.so.1";

    fn venv_machine() -> Facts {
        let dir = format!(
            "{}/../fixtures/wsl-therock-venv-rocdxg-unfound",
            env!("CARGO_MANIFEST_DIR")
        );
        Facts::collect(&Source::fixture(dir).unwrap())
    }

    /// The ROCr paths the not-searched finding names (its evidence sources), if it is made.
    fn named(f: &Facts) -> Option<Vec<String>> {
        let mut out = Vec::new();
        check(f, &mut out);
        let finding = out.iter().find(|x| x.id == WSL_ROCDXG_NOT_SEARCHED.id)?;
        assert!(out.iter().all(|x| x.id != WSL_READY.id));
        Some(
            finding
                .evidence
                .iter()
                .map(|e| e.source.clone())
                .filter(|s| s.ends_with("libhsa-runtime64.so.1"))
                .collect(),
        )
    }

    #[test]
    fn rocdxg_outside_the_search_order_fails_for_the_install_and_the_wheel() {
        let mut f = venv_machine();
        let w = f.wsl.as_ref().unwrap();
        assert!(w.rocdxg.is_empty());
        assert_eq!(w.rocdxg_unsearched[0], "/opt/rocm/lib/librocdxg.so.1");
        assert!(!f.rocr_build.as_ref().unwrap().on_search_path);
        assert_eq!(named(&f).unwrap(), [OPT_ROCR, VENV_ROCR]);
        // librocdxg beside the wheel's ROCr is found through its $ORIGIN RUNPATH.
        let beside = VENV_ROCR.replace("libhsa-runtime64.so.1", "librocdxg.so");
        f.wsl.as_mut().unwrap().rocdxg_in_wheels.push(beside);
        assert_eq!(named(&f).unwrap(), [OPT_ROCR]);
        // A run path that reaches /opt/rocm/lib (through its link, or by $ORIGIN from the
        // install's directory) lets the install's ROCr find it; one elsewhere does not.
        let rocr = f.rocr_build.as_mut().unwrap();
        rocr.runpath = Some(vec!["$ORIGIN/../lib64".to_owned()]);
        assert_eq!(named(&f).unwrap(), [OPT_ROCR]);
        for runpath in ["$ORIGIN", "${ORIGIN}/../lib", "/opt/rocm/lib/"] {
            f.rocr_build.as_mut().unwrap().runpath = Some(vec![runpath.to_owned()]);
            assert_eq!(named(&f), None, "{runpath}");
            let mut out = Vec::new();
            check(&f, &mut out);
            assert!(out.iter().any(|x| x.id == WSL_READY.id), "{runpath}");
        }
        f.rocr_build.as_mut().unwrap().runpath = Some(vec![]);
        // AMD's WSL build of ROCr needs no librocdxg, so nothing is left to name.
        f.rocr_build.as_mut().unwrap().needed = Some(vec![DXCORE_SONAME.to_owned()]);
        assert_eq!(named(&f), None);
    }

    #[test]
    fn a_wheel_older_than_rocdxg_is_not_named() {
        let mut f = venv_machine();
        for site in &mut f.frameworks.sites {
            if let Some(sdk) = site.rocm_sdk.as_mut() {
                sdk.rocm = RocmVersion::parse("6.4.0");
            }
        }
        assert_eq!(named(&f).unwrap(), [OPT_ROCR]);
    }

    #[test]
    fn rocdxg_in_the_search_order_is_ready() {
        let mut f = venv_machine();
        let w = f.wsl.as_mut().unwrap();
        w.rocdxg = std::mem::take(&mut w.rocdxg_unsearched);
        assert_eq!(named(&f), None);
        let mut out = Vec::new();
        check(&f, &mut out);
        assert!(out.iter().any(|x| x.id == WSL_READY.id));
    }

    #[test]
    fn detection_needs_1_before_7_13_and_only_not_0_after() {
        let v = |t: &str| RocmVersion::parse(t);
        assert_eq!(detection_off(Some("1"), v("7.2.1")), None);
        assert_eq!(detection_off(None, v("7.2.1")), Some(Status::Fail));
        assert_eq!(detection_off(Some("yes"), v("7.2.1")), Some(Status::Fail));
        assert_eq!(detection_off(None, v("7.13.0")), None);
        assert_eq!(detection_off(Some("yes"), v("7.13.0")), None);
        assert_eq!(detection_off(Some("0"), v("7.13.0")), Some(Status::Fail));
        assert_eq!(detection_off(Some("0"), None), Some(Status::Fail));
        assert_eq!(detection_off(Some("1"), None), None);
        assert_eq!(detection_off(None, None), Some(Status::Warn));
    }
}
