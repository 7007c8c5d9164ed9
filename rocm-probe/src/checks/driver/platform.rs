//! Platform causes of a GPU that did not come up, knowable without the kernel log: a GPU newer
//! than the running kernel's amdgpu (issue 16, item 5).

use crate::facts::Facts;
use crate::facts::min_kernel::{self, MinKernel};
use crate::facts::module::OSRELEASE;
use crate::facts::os_release::Distro;
use crate::facts::pci::{PCI_DEVICES, PciGpu};
use crate::finding::{Action, Evidence, Finding, KERNEL_TOO_OLD, RemedyStep};
use crate::msg;

/// The row saying this unbound GPU needs a newer kernel than the running one: only with the
/// in-tree amdgpu loaded (an amdgpu-dkms build brings its own driver, whatever the kernel's
/// number), a mainline-numbered release, and a distribution that does not backport amdgpu.
pub fn kernel_too_old(f: &Facts, g: &PciGpu) -> Option<&'static MinKernel> {
    let m = f
        .module
        .as_ref()
        .filter(|m| m.present && m.version.is_none())?;
    let release = m.kernel_release.as_deref()?;
    let os_id = f.os_release.as_ref().and_then(|o| o.id.as_deref());
    min_kernel::too_old(g.device?, release, os_id)
}

/// The finding for a GPU [`kernel_too_old`] matched.
pub fn kernel_too_old_finding(f: &Facts, g: &PciGpu, row: &MinKernel) -> Finding {
    let release = f
        .module
        .as_ref()
        .and_then(|m| m.kernel_release.clone())
        .unwrap_or_default();
    let minimum = format!("{}.{}", row.kernel.0, row.kernel.1);
    let path = format!("{PCI_DEVICES}/{}", g.address);
    let device = g.device.unwrap_or_default();
    KERNEL_TOO_OLD
        .finding(msg!(
            "driver.kernel-too-old",
            address = g.address,
            target = row.target,
            release = release.clone(),
            minimum = minimum.clone()
        ))
        .with(Evidence::new(
            format!("{path}/device"),
            format!("0x{device:04x}"),
        ))
        .with(Evidence::absent(format!("{path}/driver")))
        .with(Evidence::new(OSRELEASE, release))
        .with(Evidence::new(
            "rocm-probe/data/min_kernel.toml",
            msg!(
                "driver.kernel-too-old-row",
                target = row.target,
                gc = row.gc,
                minimum = minimum.clone(),
                source = row.source
            ),
        ))
        .remedy(
            if crate::facts::firmware::lookup(device)
                .and_then(|r| f.firmware.missing(r))
                .is_some_and(|m| !m.is_empty())
            {
                msg!(
                    "driver.kernel-too-old-firmware-remedy",
                    minimum = minimum.clone()
                )
            } else {
                msg!("driver.kernel-too-old-remedy", minimum = minimum.clone())
            },
        )
        .with_steps(upgrade_steps(f, &minimum))
        .step(RemedyStep::run(
            Action::Reboot,
            "kernel",
            "sudo reboot",
            msg!("driver.step-reboot-new-kernel"),
        ))
}

/// Installing a kernel at least `minimum`, per family: Ubuntu's hardware-enablement kernel of its
/// release (wiki.ubuntu.com/Kernel/LTSEnablementStack: `linux-generic-hwe-<release>`), Debian's
/// from backports, Fedora's and openSUSE's updates, Arch's `linux`.
fn upgrade_steps(f: &Facts, minimum: &str) -> Vec<RemedyStep> {
    let os = f.os_release.as_ref();
    let ubuntu = os
        .filter(|o| o.id.as_deref() == Some("ubuntu"))
        .and_then(|o| o.version_id.as_deref())
        .filter(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    crate::facts::os_release::families(os)
        .into_iter()
        .map(|d| {
            let step = match d {
                Distro::Debian => match ubuntu {
                    Some(version) => RemedyStep::run(
                        Action::Upgrade,
                        "kernel",
                        format!(
                            "sudo apt install --install-recommends linux-generic-hwe-{version}"
                        ),
                        msg!("driver.step-kernel-hwe", release = version, minimum),
                    ),
                    None => RemedyStep::say(
                        Action::Upgrade,
                        "kernel",
                        msg!("driver.step-kernel-debian", minimum),
                    ),
                },
                Distro::Fedora => RemedyStep::run(
                    Action::Upgrade,
                    "kernel",
                    "sudo dnf upgrade --refresh kernel",
                    msg!("driver.step-kernel-update", minimum),
                ),
                Distro::Suse => RemedyStep::run(
                    Action::Upgrade,
                    "kernel",
                    "sudo zypper update kernel-default",
                    msg!("driver.step-kernel-update", minimum),
                ),
                Distro::Arch => RemedyStep::run(
                    Action::Upgrade,
                    "kernel",
                    "sudo pacman -Syu linux",
                    msg!("driver.step-kernel-update", minimum),
                ),
            };
            step.on(d)
        })
        .collect()
}

/// Physical GPUs in KFD that are not integrated with the CPU: the ones that reach each other
/// peer to peer over PCIe (RCCL's P2P transport), which the IOMMU translates unless `iommu=pt`
/// (issue 16, item 8; ROCm/vllm#390).
pub fn discrete_gpus(f: &Facts) -> usize {
    f.inventory.as_ref().map_or(0, |inv| {
        inv.gpus
            .iter()
            .filter(|g| {
                g.gfx
                    .is_some_and(|gfx| !crate::target::is_integrated(gfx, g.device_id))
            })
            .count()
    })
}

/// The bridges between two GPUs: those on either path below the last bridge both share (a
/// request from one GPU to the other enters the fabric through them, and ACS redirect on any of
/// them sends it up to the root complex instead of across).
fn between<'a>(a: &'a [String], b: &'a [String]) -> Vec<&'a String> {
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a[common..].iter().chain(&b[common..]).collect()
}

/// ACS on the bridges between discrete AMD GPUs (issue 16, item 8): P2P redirected upstream
/// (`driver.acs-p2p-redirect`, warn), or ACS unreadable without root (the same id, skip).
pub fn acs(f: &Facts, out: &mut Vec<Finding>) {
    use crate::facts::pcie::Acs;
    use crate::finding::{ACS_P2P_REDIRECT, Status};
    if discrete_gpus(f) < 2 {
        return;
    }
    let paths: Vec<&crate::facts::pcie::GpuPcie> = f
        .pcie
        .gpus
        .iter()
        .filter(|g| !g.bridges.is_empty())
        .collect();
    let mut redirecting: Vec<(&String, u16)> = Vec::new();
    let mut unreadable: Vec<(&String, usize)> = Vec::new();
    let mut pairs = 0;
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[i + 1..] {
            let mut redirected = false;
            for bridge in between(&a.bridges, &b.bridges) {
                let acs = f.pcie.acs.get(bridge).copied();
                if let Some(Acs::Control { control }) = acs.filter(|a| a.redirects()) {
                    redirected = true;
                    if !redirecting.iter().any(|(x, _)| *x == bridge) {
                        redirecting.push((bridge, control));
                    }
                } else if let Some(Acs::Unreadable { bytes }) = acs {
                    if !unreadable.iter().any(|(x, _)| *x == bridge) {
                        unreadable.push((bridge, bytes));
                    }
                }
            }
            pairs += usize::from(redirected);
        }
    }
    let config = |b: &str| format!("{PCI_DEVICES}/{b}/config");
    if !redirecting.is_empty() {
        let bridges: Vec<&str> = redirecting.iter().map(|(b, _)| b.as_str()).collect();
        out.push(
            ACS_P2P_REDIRECT
                .finding(msg!(
                    "driver.acs-p2p-redirect",
                    pairs,
                    bridges = crate::i18n::list(&bridges)
                ))
                .with_all(redirecting.iter().map(|(b, control)| {
                    Evidence::new(
                        config(b),
                        msg!("driver.acs-control", control = format!("0x{control:04x}")),
                    )
                }))
                .remedy(msg!("driver.acs-p2p-redirect-remedy"))
                .step(RemedyStep::say(
                    Action::FirmwareSetting,
                    "ACS",
                    msg!("driver.step-acs-firmware"),
                )),
        );
    } else if !unreadable.is_empty() {
        let bridges: Vec<&str> = unreadable.iter().map(|(b, _)| b.as_str()).collect();
        out.push(
            ACS_P2P_REDIRECT
                .finding_with(
                    Status::Skip,
                    msg!(
                        "driver.acs-unreadable",
                        bridges = crate::i18n::list(&bridges)
                    ),
                )
                .with_all(unreadable.iter().map(|(b, bytes)| {
                    Evidence::new(config(b), msg!("driver.acs-bytes", bytes = *bytes))
                })),
        );
    }
}

/// An unbound GPU (with amdgpu loaded) whose required firmware files are in none of amdgpu's
/// firmware directories under any suffix the kernel loads. `kernel_first`: the running kernel's
/// amdgpu does not know the GPU ([`kernel_too_old`]), so it never asked for the files — they are
/// the next thing missing, said so, and the kernel is the cause.
pub fn firmware_missing(f: &Facts, g: &PciGpu, kernel_first: bool) -> Option<Finding> {
    use crate::facts::firmware::{self, FIRMWARE_DIRS};
    use crate::finding::FIRMWARE_MISSING;
    if g.driver.is_some() || !f.module.as_ref().is_some_and(|m| m.present) {
        return None;
    }
    let row = firmware::lookup(g.device?)?;
    let missing = f.firmware.missing(row)?;
    if missing.is_empty() {
        return None;
    }
    let families = crate::facts::os_release::families(f.os_release.as_ref());
    // Ubuntu ships amdgpu's firmware in linux-firmware; firmware-amd-graphics is Debian's.
    let ubuntu = f
        .os_release
        .as_ref()
        .is_some_and(crate::facts::os_release::OsRelease::is_ubuntu_like);
    let steps = families.into_iter().map(|d| {
        let package = match d {
            Distro::Debian if ubuntu => "linux-firmware",
            Distro::Debian => "firmware-amd-graphics",
            Distro::Fedora => "amd-gpu-firmware",
            Distro::Suse => "kernel-firmware-amdgpu",
            Distro::Arch => "linux-firmware-amdgpu",
        };
        RemedyStep::run(
            Action::Install,
            package,
            d.install(package),
            msg!("driver.step-install-firmware", package),
        )
        .on(d)
    });
    let files = crate::i18n::list(&missing);
    let summary = if kernel_first {
        msg!(
            "driver.firmware-missing-next",
            address = g.address,
            target = row.target,
            count = missing.len(),
            files = files.clone()
        )
    } else {
        msg!(
            "driver.firmware-missing",
            address = g.address,
            target = row.target,
            count = missing.len(),
            files = files.clone()
        )
    };
    Some(
        FIRMWARE_MISSING
            .finding(summary)
            .with_all(FIRMWARE_DIRS.iter().map(|d| {
                Evidence::new(
                    *d,
                    msg!(
                        "driver.firmware-absent",
                        files = crate::i18n::list(&missing)
                    ),
                )
            }))
            .with(Evidence::new(
                "rocm-probe/data/firmware.toml",
                format!("{}: {}", row.target, row.source),
            ))
            .remedy(msg!("driver.firmware-missing-remedy"))
            .with_steps(steps)
            .step(RemedyStep::run(
                Action::Reboot,
                "firmware",
                "sudo reboot",
                msg!("driver.step-reboot"),
            )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::config::Profile;
    use crate::facts::pcie::Acs;
    use crate::finding::{ACS_P2P_REDIRECT, IOMMU_NOT_PASSTHROUGH, Status};
    use crate::source::Source;

    fn two_radeons() -> Facts {
        let dir = format!(
            "{}/../fixtures/two-radeon-acs-redirect",
            env!("CARGO_MANIFEST_DIR")
        );
        Facts::collect(&Source::fixture(dir).unwrap())
    }

    fn of(out: &[Finding], id: &str) -> Vec<Finding> {
        out.iter().filter(|f| f.id == id).cloned().collect()
    }

    #[test]
    fn iommu_without_passthrough_warns_with_two_discrete_gpus() {
        let mut f = two_radeons();
        assert_eq!(discrete_gpus(&f), 2);
        f.platform.iommu = Some(true);
        f.platform.cmdline = Some("BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet".to_owned());
        let out = crate::checks::driver::check(&f, &[], Profile::Workstation);
        let iommu = of(&out, IOMMU_NOT_PASSTHROUGH.id);
        assert_eq!(iommu.len(), 1);
        assert_eq!(iommu[0].status, Status::Warn);
        // With iommu=pt nothing is said.
        f.platform.cmdline = Some("root=/dev/sda1 iommu=pt".to_owned());
        let out = crate::checks::driver::check(&f, &[], Profile::Workstation);
        assert!(of(&out, IOMMU_NOT_PASSTHROUGH.id).is_empty());
    }

    #[test]
    fn acs_that_cannot_be_read_is_said_not_guessed() {
        let mut f = two_radeons();
        let out = crate::checks::driver::check(&f, &[], Profile::Workstation);
        assert_eq!(of(&out, ACS_P2P_REDIRECT.id)[0].status, Status::Warn);
        // As a user other than root the kernel gives 64 bytes of each bridge's config.
        for acs in f.pcie.acs.values_mut() {
            *acs = Acs::Unreadable { bytes: 64 };
        }
        let out = crate::checks::driver::check(&f, &[], Profile::Workstation);
        let acs = of(&out, ACS_P2P_REDIRECT.id);
        assert_eq!(acs.len(), 1);
        assert_eq!(acs[0].status, Status::Skip);
        // ACS present without redirect: nothing to say.
        for acs in f.pcie.acs.values_mut() {
            *acs = Acs::Control { control: 0x0001 };
        }
        let out = crate::checks::driver::check(&f, &[], Profile::Workstation);
        assert!(of(&out, ACS_P2P_REDIRECT.id).is_empty());
    }

    #[test]
    fn bridges_between_two_gpus_exclude_the_shared_ones() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        let a = s(&["0000:00:01.1", "0000:01:00.0", "0000:02:00.0"]);
        let b = s(&["0000:00:01.1", "0000:01:00.0", "0000:02:01.0"]);
        assert_eq!(between(&a, &b), ["0000:02:00.0", "0000:02:01.0"]);
        let c = s(&["0000:60:01.1"]);
        assert_eq!(between(&a[..1], &c), ["0000:00:01.1", "0000:60:01.1"]);
    }
}
