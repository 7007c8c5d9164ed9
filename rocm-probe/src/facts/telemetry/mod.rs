//! How each GPU is doing right now, from sysfs alone (issue 19, item 4): amdgpu's hwmon
//! (`device/hwmon/hwmon*/`: temperatures, power, fan, clocks), `gpu_busy_percent`, VRAM and GTT
//! use, the graphics clock levels (`pp_dpm_sclk`), and the binary `gpu_metrics` table
//! ([`gpu_metrics`]). None of it is read for a GPU whose `power/runtime_status` is `suspended`:
//! these reads wake a runtime-suspended GPU, which the probe never does; the GPU is listed
//! with the reason instead.

pub mod gpu_metrics;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::agent::{AgentFacts, Inventory};
use crate::facts::drm::DRM_DIR;
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

pub use gpu_metrics::{GpuMetrics, MetricsStatus, Throttler};

/// One temperature sensor of hwmon (`temp<N>_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Temperature {
    /// `temp<N>_label` (`edge`, `junction`, `mem`), else `temp<N>`.
    pub label: String,
    /// `temp<N>_input`, millidegrees Celsius.
    pub millidegrees: Option<i64>,
    /// `temp<N>_crit`, millidegrees Celsius.
    pub crit_millidegrees: Option<i64>,
}

/// amdgpu's hwmon device of one GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Hwmon {
    /// The directory (`hwmon4`).
    pub dir: String,
    /// Temperatures, in sensor order.
    pub temperatures: Vec<Temperature>,
    /// `power1_average`, else `power1_input`, microwatts.
    pub power_uw: Option<u64>,
    /// `power1_cap`, microwatts.
    pub power_cap_uw: Option<u64>,
    /// `fan1_input`, RPM.
    pub fan_rpm: Option<u64>,
    /// `fan1_max`, RPM.
    pub fan_max_rpm: Option<u64>,
    /// `freq1_input` (sclk), Hz.
    pub sclk_hz: Option<u64>,
    /// `freq2_input` (mclk), Hz.
    pub mclk_hz: Option<u64>,
}

impl Hwmon {
    /// The temperature labelled `label`, millidegrees.
    pub fn temperature(&self, label: &str) -> Option<i64> {
        self.temperatures
            .iter()
            .find(|t| t.label == label)
            .and_then(|t| t.millidegrees)
    }
}

/// Why a GPU's telemetry was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Skipped {
    /// `power/runtime_status` is `suspended`: reading would wake it.
    RuntimeSuspended,
}

/// One physical GPU's telemetry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuTelemetry {
    /// The physical GPU's index in the inventory.
    pub gpu: usize,
    /// Its PCI address.
    pub pci_address: Option<String>,
    /// The render node it was read through.
    pub render_minor: u32,
    /// Set when nothing was read, and why.
    pub skipped: Option<Skipped>,
    /// The hwmon device.
    pub hwmon: Option<Hwmon>,
    /// `gpu_busy_percent`.
    pub busy_percent: Option<u64>,
    /// `mem_info_vram_used`, bytes.
    pub vram_used: Option<u64>,
    /// `mem_info_gtt_used`, bytes.
    pub gtt_used: Option<u64>,
    /// `pp_dpm_sclk`: the graphics clock levels, MHz.
    pub sclk_levels_mhz: Vec<u64>,
    /// The level marked current (`*`) in `pp_dpm_sclk`.
    pub sclk_current_level: Option<usize>,
    /// The `gpu_metrics` table.
    pub metrics: Option<GpuMetrics>,
}

impl GpuTelemetry {
    /// Whether anything was read.
    pub fn is_empty(&self) -> bool {
        self.hwmon.is_none()
            && self.busy_percent.is_none()
            && self.vram_used.is_none()
            && self.gtt_used.is_none()
            && self.sclk_levels_mhz.is_empty()
            && self.metrics.is_none()
    }
}

/// Every GPU's telemetry, by physical GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TelemetryFacts {
    /// Physical GPUs with a drm device that has any of the files, or that were skipped.
    pub gpus: Vec<GpuTelemetry>,
}

/// The render minor and device directory of each physical GPU (its first node's).
pub fn gpu_devices(inventory: Option<&Inventory>) -> Vec<(usize, Option<String>, u32, String)> {
    let Some(inv) = inventory else {
        return Vec::new();
    };
    // A minor two GPUs claim (old kernels print 0 for every node) is read for the first one
    // only: the files behind it are one device's.
    let mut seen = std::collections::BTreeSet::new();
    inv.gpus
        .iter()
        .filter_map(|g| {
            let node = *g.nodes.first()?;
            let minor = inv
                .agents
                .iter()
                .find(|a| a.node == node)?
                .drm_render_minor?;
            if !seen.insert(minor) {
                return None;
            }
            Some((
                g.index,
                g.pci_address.clone(),
                minor,
                format!("{DRM_DIR}/renderD{minor}/device"),
            ))
        })
        .collect()
}

fn number(root: &SysRoot, path: &str, problems: &mut Vec<Problem>) -> Option<u64> {
    let text = optional(root.read_value(path), problems)?;
    let parsed = crate::facts::properties::parse_u64(&text);
    if parsed.is_none() && !text.is_empty() {
        problems.push(Problem::new(
            path,
            crate::text!("facts.not-a-number", text = format!("{text:?}")),
        ));
    }
    parsed
}

fn signed(root: &SysRoot, path: &str, problems: &mut Vec<Problem>) -> Option<i64> {
    let text = optional(root.read_value(path), problems)?;
    let parsed = text.parse().ok();
    if parsed.is_none() && !text.is_empty() {
        problems.push(Problem::new(
            path,
            crate::text!("facts.not-an-integer", text = format!("{text:?}")),
        ));
    }
    parsed
}

fn hwmon(root: &SysRoot, device: &str, problems: &mut Vec<Problem>) -> Option<Hwmon> {
    let base = format!("{device}/hwmon");
    let dirs = optional(root.read_dir(&base), problems)?;
    let dir = dirs.into_iter().find(|d| d.starts_with("hwmon"))?;
    let path = format!("{base}/{dir}");
    let names = optional(root.read_dir(&path), problems).unwrap_or_default();
    let has = |n: &str| names.binary_search_by(|e| e.as_str().cmp(n)).is_ok();
    let mut sensors: Vec<u32> = names
        .iter()
        .filter_map(|n| n.strip_prefix("temp")?.strip_suffix("_input")?.parse().ok())
        .collect();
    sensors.sort_unstable();
    let mut h = Hwmon {
        dir,
        ..Hwmon::default()
    };
    for n in sensors {
        let label = if has(&format!("temp{n}_label")) {
            optional(root.read_value(&format!("{path}/temp{n}_label")), problems)
        } else {
            None
        };
        h.temperatures.push(Temperature {
            label: label.unwrap_or_else(|| format!("temp{n}")),
            millidegrees: signed(root, &format!("{path}/temp{n}_input"), problems),
            crit_millidegrees: if has(&format!("temp{n}_crit")) {
                signed(root, &format!("{path}/temp{n}_crit"), problems)
            } else {
                None
            },
        });
    }
    let read = |n: &str, problems: &mut Vec<Problem>| {
        if has(n) {
            number(root, &format!("{path}/{n}"), problems)
        } else {
            None
        }
    };
    h.power_uw = read("power1_average", problems).or_else(|| read("power1_input", problems));
    h.power_cap_uw = read("power1_cap", problems);
    h.fan_rpm = read("fan1_input", problems);
    h.fan_max_rpm = read("fan1_max", problems);
    h.sclk_hz = read("freq1_input", problems);
    h.mclk_hz = read("freq2_input", problems);
    Some(h)
}

/// `pp_dpm_sclk` (`0: 500Mhz\n1: 2400Mhz *`): the levels in MHz and the current one.
pub fn parse_dpm(text: &str) -> (Vec<u64>, Option<usize>) {
    let mut levels = Vec::new();
    let mut current = None;
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(':') else {
            continue;
        };
        let rest = rest.trim();
        let mhz = rest
            .trim_end_matches('*')
            .trim()
            .to_ascii_lowercase()
            .strip_suffix("mhz")
            .and_then(|v| v.trim().parse().ok());
        let Some(mhz) = mhz else { continue };
        if rest.ends_with('*') {
            current = Some(levels.len());
        }
        levels.push(mhz);
    }
    (levels, current)
}

impl Collect for TelemetryFacts {
    type Needs<'a> = (Option<&'a Inventory>, Option<&'a AgentFacts>);
    type Output = Self;

    /// Reads each physical GPU's telemetry through its first node's render node, unless the
    /// render node's `power/runtime_status` (already read by the agent view) is `suspended`.
    fn collect(
        source: &Source,
        (inventory, agents): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let mut facts = Self::default();
        for (gpu, pci_address, minor, dir) in gpu_devices(inventory) {
            let mut t = GpuTelemetry {
                gpu,
                pci_address,
                render_minor: minor,
                ..GpuTelemetry::default()
            };
            let suspended = agents
                .and_then(|a| a.render_nodes.get(&minor))
                .is_some_and(|n| n.runtime_status.as_deref() == Some("suspended"));
            if suspended {
                t.skipped = Some(Skipped::RuntimeSuspended);
                facts.gpus.push(t);
                continue;
            }
            t.hwmon = hwmon(root, &dir, problems);
            t.busy_percent = number(root, &format!("{dir}/gpu_busy_percent"), problems);
            t.vram_used = number(root, &format!("{dir}/mem_info_vram_used"), problems);
            t.gtt_used = number(root, &format!("{dir}/mem_info_gtt_used"), problems);
            if let Some(text) = optional(root.read_text(&format!("{dir}/pp_dpm_sclk")), problems) {
                (t.sclk_levels_mhz, t.sclk_current_level) = parse_dpm(&text);
            }
            t.metrics = optional(root.read(&format!("{dir}/gpu_metrics")), problems)
                .map(|b| gpu_metrics::parse(&b));
            if !t.is_empty() {
                facts.gpus.push(t);
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::record::Record;

    fn phoenix() -> (
        Source,
        std::sync::Arc<crate::source::record::Recorder>,
        AgentFacts,
    ) {
        let base =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/apu-phoenix-780m");
        let (source, recorder) = Source::fixture(&base).unwrap().record();
        let (agents, _) = crate::facts::collect::<AgentFacts>(
            &source,
            crate::facts::agent::AgentNeeds::All(Default::default()),
        );
        (source, recorder, agents.unwrap())
    }

    #[test]
    fn reads_a_phoenix_capture() {
        let (source, _, agents) = phoenix();
        let inv = Inventory::from_facts(&agents);
        let mut p = Vec::new();
        let f = TelemetryFacts::collect(&source, (Some(&inv), Some(&agents)), &mut p);
        assert!(p.is_empty(), "{p:?}");
        let g = &f.gpus[0];
        assert_eq!(g.skipped, None);
        let h = g.hwmon.as_ref().unwrap();
        assert!(h.temperature("edge").is_some(), "{h:?}");
        assert!(g.busy_percent.is_some() && g.vram_used.is_some() && g.gtt_used.is_some());
        assert_eq!(
            (g.sclk_levels_mhz.clone(), g.sclk_current_level),
            (vec![800, 1100, 2700], Some(0))
        );
        assert_eq!(
            g.metrics.as_ref().unwrap().status,
            Some(MetricsStatus::Parsed)
        );
    }

    #[test]
    fn a_suspended_gpu_is_not_woken() {
        let (source, recorder, mut agents) = phoenix();
        agents.render_nodes.get_mut(&128).unwrap().runtime_status = Some("suspended".into());
        let inv = Inventory::from_facts(&agents);
        let before = recorder.records().len();
        let mut p = Vec::new();
        let f = TelemetryFacts::collect(&source, (Some(&inv), Some(&agents)), &mut p);
        assert_eq!(f.gpus.len(), 1);
        assert_eq!(f.gpus[0].skipped, Some(Skipped::RuntimeSuspended));
        assert!(f.gpus[0].is_empty());
        let read: Vec<_> = recorder.records()[before..]
            .iter()
            .filter_map(|r| match r {
                Record::File { path, .. } | Record::Dir { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        assert!(read.is_empty(), "{read:?}");
    }

    #[test]
    fn dpm_levels_and_the_current_one() {
        assert_eq!(
            parse_dpm("0: 500Mhz \n1: 1800Mhz *\n2: 2400Mhz \n"),
            (vec![500, 1800, 2400], Some(1))
        );
        assert_eq!(
            parse_dpm("S: 19Mhz *\n0: 500Mhz\n"),
            (vec![19, 500], Some(0))
        );
        assert_eq!(parse_dpm("garbage\n"), (vec![], None));
    }
}
