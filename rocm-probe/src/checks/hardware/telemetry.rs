//! Layer 1, what the GPU's firmware says it is doing right now (issue 19, item 4): throttling in
//! effect, from `gpu_metrics`' ASIC-independent `indep_throttle_status`; a fan standing still on
//! a hot, busy GPU (hwmon); and a busy GPU whose shader clock sits at or below its lowest level
//! (`pp_dpm_sclk`); a discrete GPU whose VRAM is nearly all in use before the job starts
//! (`mem_info_vram_used`), with the KFD processes that hold it.
//!
//! One firmware quirk is known and filtered: RDNA 3 and RDNA 4 discrete GPUs set
//! `TEMP_HOTSPOT` almost always, idle included (Umio-Yasuno/libdrm-amdgpu-sys-rs#7 on Navi 31,
//! ROCm/rocm-systems#11781 on Navi 48 at 37 °C, LACT's RX 7600S capture at 54 °C; MangoHud
//! #1690 ignores it below 90 °C). The probe counts `TEMP_HOTSPOT` only when the hotspot
//! temperature is at least [`HOTSPOT_REAL_C`].

use crate::facts::Facts;
use crate::facts::agent::Inventory;
use crate::facts::telemetry::gpu_metrics::{Throttler, throttler_names};
use crate::facts::telemetry::{GpuTelemetry, gpu_devices};
use crate::finding::{
    Evidence, Finding, GPU_CLOCK_STUCK_LOW, GPU_FAN_STOPPED, GPU_THROTTLING, Status, Subject,
    VRAM_NEARLY_FULL,
};
use crate::msg;

/// Below this hotspot temperature (°C) a set `TEMP_HOTSPOT` bit is the firmware quirk, not
/// throttling (MangoHud's threshold, flightlessmango/MangoHud#1690).
pub const HOTSPOT_REAL_C: u32 = 90;

/// The throttlers in effect: `(group, bit name)`, the hotspot quirk removed.
pub fn throttling(t: &GpuTelemetry) -> Vec<(Throttler, String)> {
    let Some(m) = &t.metrics else {
        return Vec::new();
    };
    let Some(status) = m.indep_throttle_status else {
        return Vec::new();
    };
    let hotspot_c = m.temperature_hotspot_mc.map(|v| v / 1000).or_else(|| {
        t.hwmon
            .as_ref()
            .and_then(|h| h.temperature("junction"))
            .and_then(|v| u32::try_from(v / 1000).ok())
    });
    throttler_names(status)
        .into_iter()
        .filter(|(_, name)| name != "TEMP_HOTSPOT" || hotspot_c.is_none_or(|c| c >= HOTSPOT_REAL_C))
        .collect()
}

/// A fan at 0 RPM counts as stopped only at or above this temperature (°C, the hottest hwmon
/// sensor): RDNA 3/4 cards keep their fans off below a cutoff of about 70–75 °C by design
/// (LACT#384, LACT#263).
pub const FAN_STOPPED_HOT_C: i64 = 80;
/// … and only while the GPU is at least this busy (`gpu_busy_percent`).
pub const FAN_STOPPED_BUSY: u64 = 50;

/// The hottest sensor (°C) when the GPU has a fan (`fan1_max` > 0) reading 0 RPM while busy and
/// hot.
pub fn fan_stopped(t: &GpuTelemetry) -> Option<i64> {
    let h = t.hwmon.as_ref()?;
    let hottest = h.temperatures.iter().filter_map(|s| s.millidegrees).max()? / 1000;
    let stopped = h.fan_rpm == Some(0)
        && h.fan_max_rpm.is_some_and(|m| m > 0)
        && t.busy_percent.is_some_and(|b| b >= FAN_STOPPED_BUSY)
        && hottest >= FAN_STOPPED_HOT_C;
    stopped.then_some(hottest)
}

/// A GPU counts as busy for [`clock_stuck_low`] from this `gpu_busy_percent` on.
pub const CLOCK_STUCK_BUSY: u64 = 90;

/// The current shader clock (MHz) when the GPU is busy and that clock is no higher than every
/// other line of `pp_dpm_sclk`: the lowest DPM level, or the deep-sleep line below it (`S: 41Mhz
/// *` on RDNA 4, `1: 31Mhz *` between the levels on RDNA 3). ROCm/legacy-rocm-build#5849 shows
/// it: an RX 9070 XT at 41 MHz and 100 % busy through a whole inference run. An idle GPU (busy
/// low) sits there by design; a GPU pinned at its top clock while idle (busy 100 % with resident
/// compute contexts, ROCm/legacy-rocm-build#6639) is not this.
pub fn clock_stuck_low(t: &GpuTelemetry) -> Option<u64> {
    let current = *t.sclk_levels_mhz.get(t.sclk_current_level?)?;
    let others = t.sclk_levels_mhz.len() > 1;
    let lowest = t.sclk_levels_mhz.iter().all(|&l| current <= l);
    let busy = t.busy_percent.is_some_and(|b| b >= CLOCK_STUCK_BUSY);
    (others && lowest && busy).then_some(current)
}

/// VRAM counts as nearly full from this share in use (percent of `mem_info_vram_total`): what is
/// left then is less than a tenth, too little for a model or a training job's working set.
pub const VRAM_NEARLY_FULL_PERCENT: u64 = 90;

/// The percentage of VRAM in use on a discrete GPU when it is at least
/// [`VRAM_NEARLY_FULL_PERCENT`]. An APU's VRAM is a small BIOS carve-out that the display fills
/// by design (its compute memory is GTT: `hardware.apu-memory-capped`), so APUs are not judged.
pub fn vram_nearly_full(used: u64, total: u64, integrated: bool) -> Option<u64> {
    if integrated || total == 0 {
        return None;
    }
    let (used, total) = (u128::from(used), u128::from(total));
    // Judged on the exact share, shown rounded (rocm-smi's VRAM% rounds too).
    let full = used * 100 >= total * u128::from(VRAM_NEARLY_FULL_PERCENT);
    let percent = u64::try_from((used * 100 + total / 2) / total).unwrap_or(u64::MAX);
    full.then_some(percent)
}

/// The finding for a GPU whose VRAM is nearly full: how much is in use, which KFD processes hold
/// how much of it (`/sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>`), and what no KFD process
/// accounts for — graphics, the display, other drivers — which HIP's `hipMemGetInfo` does not
/// subtract (ggml-org/llama.cpp#24906), so a program that sizes itself by HIP overcommits.
fn vram_finding(f: &Facts, inv: &Inventory, t: &GpuTelemetry, dir: &str) -> Option<Finding> {
    let g = inv.gpus.get(t.gpu)?;
    let agent = inv
        .agents
        .iter()
        .find(|a| Some(&a.node) == g.nodes.first())?;
    let total = f
        .kfd
        .as_ref()?
        .render_nodes
        .get(&t.render_minor)?
        .vram_total?;
    let used = t.vram_used?;
    let percent = vram_nearly_full(used, total, agent.integrated != Some(false))?;
    let gpu_ids: Vec<u32> = inv
        .agents
        .iter()
        .filter(|a| g.nodes.contains(&a.node))
        .filter_map(|a| a.gpu_id)
        .collect();
    let mut holders: Vec<(u32, Option<&str>, u32, u64)> = f
        .processes
        .iter()
        .flat_map(|p| &p.processes)
        .flat_map(|p| {
            p.gpus
                .iter()
                .filter(|u| gpu_ids.contains(&u.gpu_id))
                .filter_map(move |u| {
                    let bytes = u.vram_bytes.filter(|&b| b > 0)?;
                    Some((p.pid, p.comm.as_deref(), u.gpu_id, bytes))
                })
        })
        .collect();
    holders.sort_by(|a, b| b.3.cmp(&a.3).then(a.0.cmp(&b.0)));
    let held: u64 = holders.iter().map(|h| h.3).sum();
    let name = inv.gpu_name(g).to_string();
    let summary = if f.processes.is_none() {
        msg!(
            "hardware.vram-nearly-full-unattributed",
            gpu = name,
            used = crate::checks::gib(used),
            total = crate::checks::gib(total),
            percent
        )
    } else if holders.is_empty() {
        msg!(
            "hardware.vram-nearly-full-no-process",
            gpu = name,
            used = crate::checks::gib(used),
            total = crate::checks::gib(total),
            percent
        )
    } else {
        msg!(
            "hardware.vram-nearly-full",
            gpu = name,
            used = crate::checks::gib(used),
            total = crate::checks::gib(total),
            percent,
            count = holders.len(),
            held = crate::checks::gib(held.min(used))
        )
    };
    let mut finding = VRAM_NEARLY_FULL
        .finding(summary)
        .with(Evidence::new(
            format!("{dir}/mem_info_vram_used"),
            msg!(
                "hardware.vram-used",
                used = crate::checks::gib(used),
                total = crate::checks::gib(total),
                free = crate::checks::gib(total.saturating_sub(used))
            ),
        ))
        .with_all(holders.iter().map(|&(pid, comm, gpu_id, bytes)| {
            Evidence::new(
                format!("/sys/class/kfd/kfd/proc/{pid}/vram_{gpu_id}"),
                msg!(
                    "hardware.vram-holder",
                    comm = comm.unwrap_or("?"),
                    pid,
                    size = crate::checks::gib(bytes)
                ),
            )
        }));
    if f.processes.is_some() && used > held {
        finding = finding.with(Evidence::new(
            msg!("hardware.vram-outside-kfd-source"),
            msg!(
                "hardware.vram-outside-kfd",
                size = crate::checks::gib(used - held)
            ),
        ));
    }
    Some(
        finding
            .remedy(msg!("hardware.vram-nearly-full-remedy"))
            .about(Subject::gpu(g.index, g.pci_address.clone())),
    )
}

/// One finding per GPU whose firmware throttles it now: a warning for thermal or current
/// limits, information for power limits alone (a GPU at its power cap under full load); one per
/// GPU whose clock is stuck at its lowest while busy.
pub fn check(f: &Facts, inv: &Inventory) -> Vec<Finding> {
    let mut out = Vec::new();
    let dirs: Vec<_> = gpu_devices(Some(inv));
    for t in &f.telemetry.gpus {
        let device = dirs
            .iter()
            .find(|d| d.0 == t.gpu)
            .map_or_else(String::new, |d| d.3.clone());
        out.extend(vram_finding(f, inv, t, &device));
        if let (Some(mhz), Some(g)) = (clock_stuck_low(t), inv.gpus.get(t.gpu)) {
            let dir = dirs
                .iter()
                .find(|d| d.0 == t.gpu)
                .map_or_else(String::new, |d| d.3.clone());
            let levels: Vec<String> = t.sclk_levels_mhz.iter().map(u64::to_string).collect();
            out.push(
                GPU_CLOCK_STUCK_LOW
                    .finding(msg!(
                        "hardware.gpu-clock-stuck-low",
                        gpu = inv.gpu_name(g).to_string(),
                        mhz,
                        busy = t.busy_percent.unwrap_or(0)
                    ))
                    .with(Evidence::new(
                        format!("{dir}/pp_dpm_sclk"),
                        msg!("hardware.gpu-clock-levels", mhz, levels = levels.join(", ")),
                    ))
                    .with(Evidence::new(
                        format!("{dir}/gpu_busy_percent"),
                        t.busy_percent.unwrap_or(0).to_string(),
                    ))
                    .remedy(msg!("hardware.gpu-clock-stuck-low-remedy"))
                    .about(Subject::gpu(g.index, g.pci_address.clone())),
            );
        }
        if let (Some(hottest), Some(g), Some(h)) =
            (fan_stopped(t), inv.gpus.get(t.gpu), t.hwmon.as_ref())
        {
            let dir = dirs
                .iter()
                .find(|d| d.0 == t.gpu)
                .map_or_else(String::new, |d| d.3.clone());
            let hw = format!("{dir}/hwmon/{}", h.dir);
            out.push(
                GPU_FAN_STOPPED
                    .finding(msg!(
                        "hardware.gpu-fan-stopped",
                        gpu = inv.gpu_name(g).to_string(),
                        celsius = hottest,
                        busy = t.busy_percent.unwrap_or(0)
                    ))
                    .with(Evidence::new(format!("{hw}/fan1_input"), "0"))
                    .with(Evidence::new(
                        format!("{hw}/fan1_max"),
                        h.fan_max_rpm.unwrap_or(0).to_string(),
                    ))
                    .with(Evidence::new(
                        format!("{hw}/temp*_input"),
                        msg!("hardware.gpu-hotspot-sensor", celsius = hottest),
                    ))
                    .with(Evidence::new(
                        format!("{dir}/gpu_busy_percent"),
                        t.busy_percent.unwrap_or(0).to_string(),
                    ))
                    .remedy(msg!("hardware.gpu-fan-stopped-remedy"))
                    .about(Subject::gpu(g.index, g.pci_address.clone())),
            );
        }
        let set = throttling(t);
        if set.is_empty() {
            continue;
        }
        let Some(g) = inv.gpus.get(t.gpu) else {
            continue;
        };
        let dir = dirs
            .iter()
            .find(|d| d.0 == t.gpu)
            .map_or_else(String::new, |d| d.3.clone());
        let name = inv.gpu_name(g).to_string();
        let bits: Vec<&str> = set.iter().map(|(_, n)| n.as_str()).collect();
        let power_only = set.iter().all(|(k, _)| *k == Throttler::Power);
        let status = if power_only {
            Status::Info
        } else {
            Status::Warn
        };
        let metrics = t.metrics.as_ref();
        let mut finding = GPU_THROTTLING
            .finding_with(
                status,
                if power_only {
                    msg!(
                        "hardware.gpu-throttling-power",
                        gpu = name,
                        bits = bits.join(", ")
                    )
                } else {
                    msg!(
                        "hardware.gpu-throttling",
                        gpu = name,
                        bits = bits.join(", ")
                    )
                },
            )
            .with(Evidence::new(
                format!("{dir}/gpu_metrics"),
                msg!(
                    "hardware.gpu-throttling-status",
                    status = format!(
                        "0x{:x}",
                        metrics.and_then(|m| m.indep_throttle_status).unwrap_or(0)
                    ),
                    bits = bits.join(", ")
                ),
            ));
        if let Some(m) = metrics {
            if let Some(c) = m.temperature_hotspot_mc.or(m.temperature_gfx_mc) {
                finding = finding.with(Evidence::new(
                    format!("{dir}/gpu_metrics"),
                    msg!("hardware.gpu-hotspot", celsius = c / 1000),
                ));
            }
            if let Some(mw) = m.socket_power_mw {
                finding = finding.with(Evidence::new(
                    format!("{dir}/gpu_metrics"),
                    msg!("hardware.gpu-socket-power", watts = mw / 1000),
                ));
            }
        }
        if let Some(h) = &t.hwmon {
            if let Some(cap) = h.power_cap_uw {
                finding = finding.with(Evidence::new(
                    format!("{dir}/hwmon/{}/power1_cap", h.dir),
                    msg!("hardware.gpu-power-cap", watts = cap / 1_000_000),
                ));
            }
        }
        let remedy = if power_only {
            msg!("hardware.gpu-throttling-power-remedy")
        } else {
            msg!("hardware.gpu-throttling-remedy")
        };
        out.push(
            finding
                .remedy(remedy)
                .about(Subject::gpu(g.index, g.pci_address.clone())),
        );
    }
    out
}

#[cfg(test)]
mod vram_tests {
    use super::*;

    #[test]
    fn nearly_full_from_ninety_percent_of_a_discrete_gpus_vram() {
        let total = 17_163_091_968;
        // ollama/ollama#17251: 99% on one MI50.
        assert_eq!(vram_nearly_full(total * 99 / 100, total, false), Some(99));
        // The smallest use that is 90% exactly, and one byte less.
        let ninety = (total * 9).div_ceil(10);
        assert_eq!(vram_nearly_full(ninety, total, false), Some(90));
        assert_eq!(vram_nearly_full(ninety - 1, total, false), None);
        // An APU's carve-out full is its normal state; a total of 0 is no reading.
        assert_eq!(vram_nearly_full(total, total, true), None);
        assert_eq!(vram_nearly_full(5, 0, false), None);
        // Used above total (a counter read mid-update) is still full, never a panic.
        assert!(vram_nearly_full(u64::MAX, total, false).is_some());
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;
    use crate::facts::telemetry::parse_dpm;

    fn gpu(dpm: &str, busy: u64) -> GpuTelemetry {
        let (sclk_levels_mhz, sclk_current_level) = parse_dpm(dpm);
        GpuTelemetry {
            busy_percent: Some(busy),
            sclk_levels_mhz,
            sclk_current_level,
            ..GpuTelemetry::default()
        }
    }

    #[test]
    fn a_busy_gpu_at_its_lowest_clock_and_the_cases_that_are_not() {
        // ROCm/legacy-rocm-build#5849's 41 MHz at 100 % on LACT's RX 9070 XT levels.
        let stuck = "S: 41Mhz *\n0: 615Mhz\n1: 800Mhz\n2: 888Mhz\n3: 1000Mhz\n";
        assert_eq!(clock_stuck_low(&gpu(stuck, 100)), Some(41));
        // The same at rest (LACT's capture: 19 MHz, 3 % busy): by design.
        let idle = "S: 19Mhz *\n0: 615Mhz\n1: 800Mhz\n2: 888Mhz\n3: 1000Mhz\n";
        assert_eq!(clock_stuck_low(&gpu(idle, 3)), None);
        // RDNA 3's form (LACT's RX 7900 XTX) and a lowest level proper (LACT's RX 580 style).
        assert_eq!(
            clock_stuck_low(&gpu("0: 500Mhz\n1: 31Mhz *\n2: 2219Mhz\n", 95)),
            Some(31)
        );
        assert_eq!(
            clock_stuck_low(&gpu("0: 300Mhz *\n1: 600Mhz\n2: 1366Mhz\n", 99)),
            Some(300)
        );
        // Busy at a higher level, pinned at the top, or one level only: not stuck.
        assert_eq!(
            clock_stuck_low(&gpu("S: 500Mhz\n1: 789Mhz *\n2: 2070Mhz\n", 100)),
            None
        );
        assert_eq!(
            clock_stuck_low(&gpu("0: 600Mhz\n1: 2900Mhz *\n", 100)),
            None
        );
        assert_eq!(clock_stuck_low(&gpu("0: 800Mhz *\n", 100)), None);
        assert_eq!(clock_stuck_low(&gpu("", 100)), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::telemetry::gpu_metrics::parse;
    use crate::facts::telemetry::{Hwmon, Temperature};

    fn with(bytes: &[u8]) -> GpuTelemetry {
        GpuTelemetry {
            metrics: Some(parse(bytes)),
            ..GpuTelemetry::default()
        }
    }

    fn capture(path: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(path),
        )
        .unwrap()
    }

    /// Sets `indep_throttle_status` (offset 112) and the hotspot temperature (offset 6) of a
    /// v1.3 table.
    fn v13(status: u64, hotspot_c: u16) -> Vec<u8> {
        let mut b = capture("tests/data/gpu_metrics/rx7800xt-v1.3");
        b[112..120].copy_from_slice(&status.to_le_bytes());
        b[6..8].copy_from_slice(&hotspot_c.to_le_bytes());
        b
    }

    #[test]
    fn the_rdna3_hotspot_bit_below_90_c_is_not_throttling() {
        // LACT's real RX 7600S table: TEMP_HOTSPOT (bit 36) set at 54 °C, idle.
        let b = capture("tests/data/gpu_metrics/rx7600s-v1.3");
        let t = with(&b);
        assert_eq!(
            t.metrics.as_ref().unwrap().indep_throttle_status,
            Some(1 << 36)
        );
        assert_eq!(
            t.metrics.as_ref().unwrap().temperature_hotspot_mc,
            Some(54000)
        );
        assert!(throttling(&t).is_empty());
        // At 95 °C it counts.
        assert_eq!(
            throttling(&with(&v13(1 << 36, 95))),
            vec![(Throttler::Thermal, "TEMP_HOTSPOT".to_owned())]
        );
        // Power and the hotspot quirk at 75 °C (ROCm/rocm-systems#11781, under load): power only.
        assert_eq!(
            throttling(&with(&v13(1 | 1 << 36, 75))),
            vec![(Throttler::Power, "PPT0".to_owned())]
        );
        assert_eq!(
            throttling(&with(&v13(1 << 35 | 1 << 16, 60))),
            vec![
                (Throttler::Current, "TDC_GFX".to_owned()),
                (Throttler::Thermal, "TEMP_EDGE".to_owned())
            ]
        );
    }

    #[test]
    fn a_fan_is_stopped_only_when_hot_and_busy() {
        let t = |fan: u64, max: u64, busy: u64, c: i64| GpuTelemetry {
            hwmon: Some(Hwmon {
                temperatures: vec![Temperature {
                    label: "junction".into(),
                    millidegrees: Some(c * 1000),
                    crit_millidegrees: None,
                }],
                fan_rpm: Some(fan),
                fan_max_rpm: Some(max),
                ..Hwmon::default()
            }),
            busy_percent: Some(busy),
            ..GpuTelemetry::default()
        };
        assert_eq!(fan_stopped(&t(0, 6000, 100, 109)), Some(109));
        assert_eq!(fan_stopped(&t(0, 6000, 100, 70)), None); // zero-RPM below the cutoff
        assert_eq!(fan_stopped(&t(0, 6000, 3, 95)), None); // idle
        assert_eq!(fan_stopped(&t(1200, 6000, 100, 95)), None);
        assert_eq!(fan_stopped(&t(0, 0, 100, 95)), None); // no fan (passive, APU)
    }

    #[test]
    fn no_table_no_status_no_throttling() {
        assert!(throttling(&GpuTelemetry::default()).is_empty());
        // v2.1 (Phoenix) has no ASIC-independent status.
        let apu = capture("fixtures/apu-phoenix-780m/sys/class/drm/card1/device/gpu_metrics");
        assert!(throttling(&with(&apu)).is_empty());
        // Without a hotspot in the table, hwmon's junction decides.
        let mut t = with(&v13(1 << 36, u16::MAX));
        t.hwmon = Some(Hwmon {
            temperatures: vec![Temperature {
                label: "junction".into(),
                millidegrees: Some(41000),
                crit_millidegrees: None,
            }],
            ..Hwmon::default()
        });
        assert!(throttling(&t).is_empty());
    }
}
