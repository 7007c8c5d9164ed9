//! Layer 2, the firmware each GPU runs against the versions public reports name as bad for its
//! target (`rocm-probe/data/firmware_bad.toml`, `facts::firmware_bad`).

use crate::facts::Facts;
use crate::facts::firmware_bad::lookup;
use crate::facts::telemetry::gpu_devices;
use crate::finding::{Action, Evidence, FIRMWARE_KNOWN_BAD, Finding, RemedyStep, Subject};
use crate::msg;

/// One finding per GPU component running a version its target's row lists.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    let Some(inv) = &f.inventory else {
        return;
    };
    let dirs = gpu_devices(Some(inv));
    for g in &f.fw_versions.gpus {
        let Some(gpu) = inv.gpus.get(g.gpu) else {
            continue;
        };
        let Some(target) = gpu.gfx.map(|x| x.name()) else {
            continue;
        };
        let dir = dirs
            .iter()
            .find(|d| d.0 == g.gpu)
            .map_or_else(String::new, |d| d.3.clone());
        for (component, v) in &g.components {
            let Some(row) = v.value.and_then(|value| lookup(&target, component, value)) else {
                continue;
            };
            // The report's address (the row's source starts with it; its title follows).
            let report = row.source.split_whitespace().next().unwrap_or(row.source);
            let object = gpu
                .pci_address
                .clone()
                .unwrap_or_else(|| format!("GPU {}", gpu.index));
            out.push(
                FIRMWARE_KNOWN_BAD
                    .finding(msg!(
                        "driver.firmware-known-bad",
                        gpu = inv.gpu_name(gpu).to_string(),
                        component = component.to_uppercase(),
                        version = v.text,
                        target
                    ))
                    .with(Evidence::new(
                        format!("{dir}/fw_version/{component}_fw_version"),
                        v.text.clone(),
                    ))
                    .with(Evidence::new(
                        report,
                        msg!("driver.firmware-known-bad-symptom", symptom = row.symptom),
                    ))
                    .remedy(msg!(
                        "driver.firmware-known-bad-remedy",
                        component = component.to_uppercase(),
                        source = report
                    ))
                    .step(RemedyStep::say(
                        Action::Upgrade,
                        &object,
                        msg!("driver.step-update-firmware"),
                    ))
                    .step(RemedyStep::say(
                        Action::Reboot,
                        &object,
                        msg!("driver.step-reboot-firmware"),
                    ))
                    .about(Subject::gpu(gpu.index, gpu.pci_address.clone())),
            );
        }
    }
}
