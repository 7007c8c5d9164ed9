//! Layer 2, the amdgpu each GPU runs under against the releases public reports name as hanging
//! its target unless a module parameter works around it (`rocm-probe/data/kernel_bad.toml`,
//! `facts::kernel_bad`): the CWSR save-area bug of gfx1151 and `amdgpu.cwsr_enable`.

use crate::facts::Facts;
use crate::facts::kernel_bad::{Standing, for_target};
use crate::facts::min_kernel::{backports, release_version};
use crate::facts::module::{AMDGPU_MODULE, OSRELEASE};
use crate::finding::{AMDGPU_KNOWN_BAD, Evidence, Finding, Status, Subject};
use crate::msg;

/// One finding per GPU and row its amdgpu release and parameter value stand against.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    let (Some(inv), Some(module)) = (&f.inventory, &f.module) else {
        return;
    };
    if !module.present {
        return;
    }
    // amdgpu-dkms names the kernel its code comes from; the in-tree driver is the kernel's own,
    // unless the distribution backports amdgpu into an older number.
    let (release, from) = match (&module.version, &module.kernel_release) {
        (Some(v), _) => (v.as_str(), format!("{AMDGPU_MODULE}/version")),
        (None, Some(k)) => {
            let os_id = f.os_release.as_ref().and_then(|o| o.id.as_deref());
            if backports(k, os_id) {
                return;
            }
            (k.as_str(), OSRELEASE.to_owned())
        }
        (None, None) => return,
    };
    let Some(version) = release_version(release) else {
        return;
    };
    for gpu in &inv.gpus {
        let Some(target) = gpu.gfx.map(|x| x.name()) else {
            continue;
        };
        for row in for_target(&target) {
            let value = f.kernel_bad.value(row.parameter);
            let Some(standing) = row.standing(version, value) else {
                continue;
            };
            let parameter = row.parameter;
            let fixed = format!("{}.{}", row.fixed.0, row.fixed.1);
            let report = row.source.split_whitespace().next().unwrap_or(row.source);
            let name = inv.gpu_name(gpu).to_string();
            let shown = value.map_or_else(String::new, |v| v.to_string());
            let finding = match standing {
                Standing::Exposed => AMDGPU_KNOWN_BAD
                    .finding(msg!(
                        "driver.amdgpu-known-bad",
                        gpu = name,
                        target = target.clone(),
                        release,
                        fixed = fixed.clone(),
                        parameter,
                        workaround = row.workaround
                    ))
                    .remedy(msg!(
                        "driver.amdgpu-known-bad-remedy",
                        parameter,
                        workaround = row.workaround,
                        fixed = fixed.clone(),
                        source = report
                    ))
                    .with_steps(super::kernel_parameter_steps(
                        f,
                        true,
                        &[&format!("amdgpu.{parameter}={}", row.workaround)],
                    ))
                    .step(super::reboot(&format!("amdgpu.{parameter}"))),
                Standing::WorkaroundLeft => AMDGPU_KNOWN_BAD
                    .finding_with(
                        Status::Info,
                        msg!(
                            "driver.amdgpu-known-bad-left",
                            gpu = name,
                            target = target.clone(),
                            release,
                            fixed = fixed.clone(),
                            parameter,
                            workaround = row.workaround
                        ),
                    )
                    .remedy(msg!(
                        "driver.amdgpu-known-bad-left-remedy",
                        parameter,
                        workaround = row.workaround
                    )),
            };
            out.push(
                finding
                    .with(Evidence::new(from.clone(), release.to_owned()))
                    .with(Evidence::new(
                        format!("{AMDGPU_MODULE}/parameters/{parameter}"),
                        shown,
                    ))
                    .with(Evidence::new(
                        report,
                        msg!("driver.amdgpu-known-bad-symptom", symptom = row.symptom),
                    ))
                    .about(Subject::gpu(gpu.index, gpu.pci_address.clone())),
            );
        }
    }
}
