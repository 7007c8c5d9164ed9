//! Layer 7: TheRock's multi-arch ("kpack") wheels, whose host libraries carry no GPU code.
//!
//! The split is verified in the sources, not guessed from a report (ROCm/TheRock at 89553ce,
//! 2026-08-22; ROCm/rocm-systems `shared/kpack`):
//! - torch: `rocm_kpack.tools.split_python_wheels --device-package-prefix amd-torch-device
//!   --overlay-root torch/` (TheRock `.github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml`)
//!   strips `libtorch_hip.so`'s device code and writes one archive per target,
//!   `torch/.kpack/torch_<target>.kpack`, into the wheel `amd-torch-device-<target>`
//!   (`wheel_splitter.py`, `_create_device_wheel`), which requires `rocm-sdk-device-<target>`.
//!   The host wheel's `METADATA` offers `Provides-Extra: device-<target>` per target
//!   (`_rewrite_host_metadata`); users install `torch[device-<target>]` (TheRock `RELEASES.md`,
//!   "Installing multi-arch PyTorch Python packages").
//! - ROCm: the libraries wheel is the architecture-neutral `rocm-sdk-libraries`; each
//!   `rocm-sdk-device-<target>` wheel overlays `.kpack` archives and the kernel databases
//!   (Tensile `.co`/`.dat` in `lib/rocblas/library` among them) into `_rocm_sdk_libraries`
//!   (TheRock `docs/packaging/python_packaging.md`; `build_tools/tests/py_packaging_test.py`:
//!   `.kpack/blas_lib_gfx942.kpack` and `lib/rocblas/library/Foo_gfx942.co` in one device
//!   artifact).
//!
//! What the sources leave open stays unjudged rather than failed: archives for generic targets
//! (`gfx11-generic`: whether the kpack loader falls back to them is not written anywhere read),
//! and which features an archive suffixed `:xnack±` needs (any archive of the processor counts).
//! rocBLAS counts as present when its kernel packs, its Tensile files or the device wheel that
//! brings both name the target.

use std::collections::BTreeSet;

use crate::facts::frameworks::{
    Build, Bundled, Dist, KpackDir, RocmSdk, Torch, local_tag, normalize,
};
use crate::finding::{
    Action, BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET, Evidence, Finding, RemedyStep,
    TORCH_DEVICE_WHEEL_MISSING,
};
use crate::{i18n, msg};

use super::super::libraries::{Targets, kernel_dir_value, list, missing_targets};
use super::{Ctx, version_or_unknown};

/// AMD's index of released multi-arch wheels (TheRock `docs/development/s3_buckets.md`,
/// bucket `therock-release-python`; the index of ROCm/TheRock#7081's ROCm 7.14 install).
const RELEASE_INDEX: &str = "https://repo.amd.com/rocm/whl-multi-arch/";
/// The index AMD's maintainer gives for the ROCm 10.0.0 wheels (ROCm/TheRock#7839, 2026-09-17:
/// `python -m pip install --index-url https://stable.repo.amd.com/rocm/whl-next/
/// "torch[device-gfx1151]==2.13.0+rocm10.0.0" …`).
const RELEASE_INDEX_10: &str = "https://stable.repo.amd.com/rocm/whl-next/";
/// AMD's index of nightly multi-arch wheels (TheRock `RELEASES.md`).
const NIGHTLY_INDEX: &str = "https://rocm.nightlies.amd.com/whl-multi-arch/";

/// The processors a kernel-pack directory's archives of `group` cover, or `None` when that
/// cannot be told: the directory could not be listed, or an archive is for a generic target.
fn covered(kpack: Option<&KpackDir>, group: &str) -> Option<BTreeSet<String>> {
    let Some(k) = kpack else {
        return Some(BTreeSet::new());
    };
    if k.unread {
        return None;
    }
    let targets = k.targets(group);
    if targets.iter().any(|t| t.contains("generic")) {
        return None;
    }
    Some(
        targets
            .iter()
            .map(|t| t.split(':').next().unwrap_or(t).to_owned())
            .collect(),
    )
}

/// The index a ROCm release's multi-arch wheels come from: a prerelease (`7.13.0a20260430`)
/// from the nightlies, a release from AMD's repository (ROCm 10's from its `whl-next`).
fn index_for(rocm: &str) -> &'static str {
    if rocm.contains(|c: char| c.is_ascii_alphabetic()) {
        NIGHTLY_INDEX
    } else if crate::facts::frameworks::leading_release(rocm).is_some_and(|v| v.major >= 10) {
        RELEASE_INDEX_10
    } else {
        RELEASE_INDEX
    }
}

/// `pkg[device-a,device-b]==version` for a pip command line. The version is read from the
/// machine: one with a character PEP 440 does not allow is left out, never pasted into a
/// command.
fn requirement(
    package: &str,
    extras: &[&str],
    targets: &[&String],
    version: Option<&str>,
) -> String {
    let mut all: Vec<String> = extras.iter().map(|e| (*e).to_owned()).collect();
    all.extend(targets.iter().map(|t| format!("device-{t}")));
    let pin = version
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+._-!".contains(&b))
        })
        .map(|v| format!("=={v}"))
        .unwrap_or_default();
    format!("\"{package}[{}]{pin}\"", all.join(","))
}

/// The evidence value of a kernel-pack directory: the targets of one group's archives.
fn archives(k: &KpackDir, group: &str) -> String {
    let targets = k.targets(group);
    let targets = if targets.is_empty() {
        msg!("libraries.none")
    } else {
        i18n::list(&targets)
    };
    msg!("frameworks.kpack-archives", group, targets)
}

fn dist_evidence(d: &Dist) -> Evidence {
    Evidence::new(d.path.clone(), format!("{} {}", d.name, d.version))
}

/// `frameworks.torch-device-wheel-missing`: a multi-arch torch without the kernel pack of a
/// GPU's target.
pub(super) fn torch(
    ctx: &Ctx,
    t: &Torch,
    (targets, override_evidence): (&Targets, Option<&Evidence>),
    out: &mut Vec<Finding>,
) {
    if t.build != Build::Rocm || !t.is_kpack() {
        return;
    }
    let (Some(b), Some(libtorch_hip)) = (&t.bundled, &t.libtorch_hip) else {
        return;
    };
    let Some(have) = covered(b.kpack.as_ref(), "torch") else {
        return;
    };
    let missing = missing_targets(targets, &have);
    if missing.is_empty() {
        return;
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let kpack_dir = b.kpack_path();
    let version = version_or_unknown(t.version.as_deref());
    let mut finding = TORCH_DEVICE_WHEEL_MISSING
        .finding(msg!(
            "frameworks.torch-kpack-missing",
            version,
            site = ctx.site.describe(),
            targets = i18n::list(&names),
            dir = kpack_dir,
            have = list(&have)
        ))
        .with(Evidence::new(
            libtorch_hip.clone(),
            msg!("frameworks.libtorch-hip-host", dir = kpack_dir),
        ));
    finding = match &b.kpack {
        Some(k) => finding.with(Evidence::new(k.dir.clone(), archives(k, "torch"))),
        None => finding.with(Evidence::absent(kpack_dir.clone())),
    };
    if let Some(d) = &t.dist {
        let value = if t.device_extras.is_empty() {
            format!("{} {}", d.name, d.version)
        } else {
            msg!(
                "frameworks.device-extras",
                dist = format!("{} {}", d.name, d.version),
                targets = i18n::list(&t.device_extras)
            )
        };
        finding = finding.with(Evidence::new(d.path.clone(), value));
    }
    finding = finding.with_all(t.device_dists.iter().map(dist_evidence));
    for m in &missing {
        finding = finding.with_all(targets[*m].iter().cloned());
    }
    if let Some(e) = override_evidence {
        finding = finding.with(e.clone());
    }
    // A host wheel names the targets it has device wheels for; one it does not name has none.
    let unpublished: Vec<&str> = names
        .iter()
        .copied()
        .filter(|m| !t.device_extras.is_empty() && !t.device_extras.iter().any(|e| e == m))
        .collect();
    if !unpublished.is_empty() {
        out.push(finding.remedy(msg!(
            "frameworks.torch-kpack-unpublished-remedy",
            targets = i18n::list(&unpublished),
            extras = i18n::list(&t.device_extras)
        )));
        return;
    }
    let rocm = t
        .version
        .as_deref()
        .and_then(local_tag)
        .and_then(|tag| tag.strip_prefix("rocm"))
        .unwrap_or("");
    let index = index_for(rocm);
    let command = format!(
        "python3 -m pip install --index-url {index} {}",
        requirement("torch", &[], &missing, t.version.as_deref())
    );
    let device: Vec<String> = missing
        .iter()
        .map(|m| format!("amd-torch-device-{m}"))
        .collect();
    out.push(
        finding
            .remedy(msg!(
                "frameworks.torch-kpack-remedy",
                command,
                wheels = i18n::list(&device)
            ))
            .with_steps([RemedyStep::run(
                Action::Install,
                t.dir.clone(),
                command.clone(),
                msg!("frameworks.step-torch-device", wheels = i18n::list(&device)),
            )]),
    );
}

/// rocBLAS of TheRock's multi-arch ROCm wheels: its kernels for a target come with
/// `rocm-sdk-device-<target>`, as kernel packs and Tensile files.
pub(super) fn rocblas(
    ctx: &Ctx,
    sdk: &RocmSdk,
    b: &Bundled,
    (targets, override_evidence): (&Targets, Option<&Evidence>),
    out: &mut Vec<Finding>,
) {
    if !b.has("rocblas") && b.rocblas.is_none() {
        return;
    }
    let Some(mut have) = covered(b.kpack.as_ref(), "blas_lib") else {
        return;
    };
    if let Some(d) = &b.rocblas {
        have.extend(d.targets.iter().cloned());
    }
    let devices = sdk.device_targets();
    have.extend(devices.iter().cloned());
    let missing = missing_targets(targets, &have);
    if missing.is_empty() {
        return;
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let kpack_dir = b.kpack_path();
    let mut finding = BUNDLED_ROCBLAS_NO_KERNELS_FOR_TARGET.finding(msg!(
        "frameworks.kpack-rocblas-no-kernels",
        site = ctx.site.describe(),
        targets = i18n::list(&names),
        have = list(&have)
    ));
    finding = match &b.kpack {
        Some(k) => finding.with(Evidence::new(k.dir.clone(), archives(k, "blas_lib"))),
        None => finding.with(Evidence::absent(kpack_dir)),
    };
    if let Some(d) = &b.rocblas {
        finding = finding.with(Evidence::new(d.dir.clone(), kernel_dir_value(d)));
    }
    finding = finding.with_all(sdk.kpack_dists().map(dist_evidence));
    for m in &missing {
        finding = finding.with_all(targets[*m].iter().cloned());
    }
    if let Some(e) = override_evidence {
        finding = finding.with(e.clone());
    }
    let version = sdk
        .dists
        .iter()
        .find(|d| normalize(&d.name) == "rocm")
        .or_else(|| {
            sdk.dists
                .iter()
                .find(|d| normalize(&d.name) == "rocm_sdk_libraries")
        })
        .map(|d| d.version.as_str());
    let command = format!(
        "python3 -m pip install --index-url {} {}",
        index_for(version.unwrap_or("")),
        requirement("rocm", &["libraries"], &missing, version)
    );
    let device: Vec<String> = missing
        .iter()
        .map(|m| format!("rocm-sdk-device-{m}"))
        .collect();
    out.push(
        finding
            .remedy(msg!(
                "frameworks.kpack-rocblas-remedy",
                command,
                wheels = i18n::list(&device)
            ))
            .with_steps([RemedyStep::run(
                Action::Install,
                b.lib_dir.clone(),
                command.clone(),
                msg!("frameworks.step-rocm-device", wheels = i18n::list(&device)),
            )]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::frameworks::KpackArchive;

    fn dir(names: &[&str], unread: bool) -> KpackDir {
        KpackDir {
            dir: "/x/torch/.kpack".to_owned(),
            archives: names
                .iter()
                .filter_map(|n| {
                    let (group, target) = crate::facts::frameworks::kpack_archive(n)?;
                    Some(KpackArchive {
                        file: (*n).to_owned(),
                        group,
                        target,
                    })
                })
                .collect(),
            unread,
        }
    }

    #[test]
    fn what_kernel_packs_cover() {
        let set = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
        assert_eq!(covered(None, "torch"), Some(BTreeSet::new()));
        let k = dir(
            &[
                "torch_gfx1151.kpack",
                "torch_gfx90a:xnack+.kpack",
                "blas_lib_gfx942.kpack",
            ],
            false,
        );
        assert_eq!(
            covered(Some(&k), "torch"),
            Some(set(&["gfx1151", "gfx90a"]))
        );
        assert_eq!(covered(Some(&k), "blas_lib"), Some(set(&["gfx942"])));
        // Unknowable: unlisted, or a generic archive the loader may or may not use.
        assert_eq!(covered(Some(&dir(&[], true)), "torch"), None);
        let generic = dir(&["torch_gfx11-generic.kpack"], false);
        assert_eq!(covered(Some(&generic), "torch"), None);
        assert_eq!(covered(Some(&generic), "blas_lib"), Some(BTreeSet::new()));
    }

    #[test]
    fn indexes_and_requirements() {
        assert_eq!(index_for("10.0.0"), RELEASE_INDEX_10);
        assert_eq!(index_for("7.14.0"), RELEASE_INDEX);
        assert_eq!(index_for("7.13.0a20260430"), NIGHTLY_INDEX);
        let t = "gfx1151".to_owned();
        assert_eq!(
            requirement("torch", &[], &[&t], Some("2.13.0+rocm10.0.0")),
            "\"torch[device-gfx1151]==2.13.0+rocm10.0.0\""
        );
        assert_eq!(
            requirement("rocm", &["libraries"], &[&t], None),
            "\"rocm[libraries,device-gfx1151]\""
        );
        // Hostile versions are not pasted into a command.
        assert_eq!(
            requirement("torch", &[], &[&t], Some("1\"; rm -rf ~; \"")),
            "\"torch[device-gfx1151]\""
        );
    }
}
