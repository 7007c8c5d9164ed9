//! The node_exporter textfile (`--textfile PATH`): the report as Prometheus metrics.
//!
//! The text exposition format (0.0.4) that node_exporter's textfile collector reads: one
//! `# HELP` and one `# TYPE` line per family, then its samples; no sample timestamps
//! (node_exporter drops a whole file that has one); no series twice. Names follow the Prometheus
//! conventions: the `rocm_probe_` prefix, base units (bytes, seconds, transfers per second),
//! `_info` families of value 1 carrying strings as labels, `_total` on the one counter.
//!
//! Families (labels in braces; a label whose value is unknown is left out, and so is a sample
//! whose value is unknown — never 0 for unknown):
//!
//! | family | type | labels |
//! |---|---|---|
//! | `rocm_probe_info` | gauge | `version`, `profile`, `source` |
//! | `rocm_probe_verdict` | gauge | — (status code) |
//! | `rocm_probe_root_cause_info` | gauge | `id`, `layer`, `number`, `status`, `gpu`, `pci_address` (when the cause is one GPU's) |
//! | `rocm_probe_layer_status` | gauge | `layer`, `number` (status code) |
//! | `rocm_probe_findings` | gauge | `status` (all five, zeros included) |
//! | `rocm_probe_finding_info` | gauge | `id`, `layer`, `status` (warn and fail only), `gpu`, `pci_address` (a finding about one GPU: one sample per GPU) |
//! | `rocm_probe_gpus`, `rocm_probe_gpu_agents` | gauge | — |
//! | `rocm_probe_gpu_info` | gauge | `kfd_node`, `gpu`, `pci_address`, `device_id`, `gfx`, `target_id`, `marketing_name`, `partition`, `compute_partition`, `memory_partition` |
//! | `rocm_probe_gpu_memory_bytes` | gauge | `kfd_node` |
//! | `rocm_probe_gpu_vram_bytes`, `rocm_probe_gpu_vram_cpu_visible_bytes`, `rocm_probe_gpu_gtt_bytes` | gauge | `kfd_node` |
//! | `rocm_probe_pcie_link_speed_transfers_per_second` | gauge | `pci_address`, `kind` (`current`, `max`) |
//! | `rocm_probe_pcie_link_width_lanes` | gauge | `pci_address`, `kind` (`current`, `max`) |
//! | `rocm_probe_ras_errors_total` | counter | `kfd_node`, `block`, `kind` (`correctable`, `uncorrectable`) |
//! | `rocm_probe_ras_bad_pages` | gauge | `kfd_node`, `state` (`retired`, `pending`) |
//! | `rocm_probe_firmware_info` | gauge | `gpu`, `pci_address`, `component` (`vbios`, `mes`, `smc`, …), `version` |
//! | `rocm_probe_gpu_temperature_celsius` | gauge | `gpu`, `pci_address`, `sensor` (hwmon label: `edge`, `junction`, `mem`) |
//! | `rocm_probe_gpu_power_watts` | gauge | `gpu`, `pci_address` (hwmon `power1_average`/`power1_input`) |
//! | `rocm_probe_gpu_fan_rpm` | gauge | `gpu`, `pci_address` |
//! | `rocm_probe_gpu_clock_hertz` | gauge | `gpu`, `pci_address`, `clock` (`sclk`, `mclk`) |
//! | `rocm_probe_gpu_busy_ratio` | gauge | `gpu`, `pci_address` (`gpu_busy_percent` / 100) |
//! | `rocm_probe_gpu_vram_used_bytes`, `rocm_probe_gpu_gtt_used_bytes` | gauge | `gpu`, `pci_address` |
//! | `rocm_probe_gpu_throttling` | gauge | `gpu`, `pci_address`, `kind` (`power`, `current`, `thermal`, `other`): 1 while in effect, from `gpu_metrics` |
//! | `rocm_probe_gpu_telemetry_skipped` | gauge | `gpu`, `pci_address`, `reason` (`runtime-suspended`) |
//! | `rocm_probe_duration_seconds` | gauge | — |
//!
//! Status codes: skip=0 pass=1 info=2 warn=3 fail=4 ([`status_code`]). `kfd_node` is the KFD node
//! id (rocminfo's "Node"; not `node`, which scrape configs commonly attach to every target and
//! would rename ours to `exported_node`): partitions of one GPU differ by it; `gpu` is the
//! physical GPU's index.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Duration;

use crate::facts::Facts;
use crate::facts::agent::{Agent, Inventory};
use crate::facts::drm::{RenderNode, gts};
use crate::finding::{Status, Subject};
use crate::report::Report;
use crate::source::SourceKind;

/// The numeric code of a status in `rocm_probe_verdict` and `rocm_probe_layer_status`, ordered
/// by weight: skip=0, pass=1, info=2, warn=3, fail=4.
pub fn status_code(status: Status) -> u8 {
    match status {
        Status::Skip => 0,
        Status::Pass => 1,
        Status::Info => 2,
        Status::Warn => 3,
        Status::Fail => 4,
    }
}

/// The statuses in code order.
const STATUSES: [Status; 5] = [
    Status::Skip,
    Status::Pass,
    Status::Info,
    Status::Warn,
    Status::Fail,
];

/// A status's id as in the JSON report (`skip`, `pass`, …).
fn status_id(status: Status) -> &'static str {
    match status {
        Status::Skip => "skip",
        Status::Pass => "pass",
        Status::Info => "info",
        Status::Warn => "warn",
        Status::Fail => "fail",
    }
}

/// A label value escaped for the text format: backslash, double quote and line feed, and other
/// control characters made visible (see [`crate::source::escape::prometheus_label`]).
pub fn escape_label_value(value: &str) -> String {
    crate::source::escape::prometheus_label(value)
}

/// Gauge or counter.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Gauge,
    Counter,
}

/// One metric family: its constant HELP and TYPE, and its samples in the order added.
#[derive(Debug)]
struct Family {
    name: &'static str,
    kind: Kind,
    help: &'static str,
    /// Rendered `{…}` label sets (empty without labels) and values.
    samples: Vec<(String, String)>,
    /// The label sets already present, sorted by name: a second sample of one series is dropped.
    seen: BTreeSet<Vec<(&'static str, String)>>,
}

impl Family {
    fn new(name: &'static str, kind: Kind, help: &'static str) -> Self {
        Self {
            name,
            kind,
            help,
            samples: Vec::new(),
            seen: BTreeSet::new(),
        }
    }

    /// Adds a sample; labels without a value (or with an empty one) are left out, which is
    /// what Prometheus makes of an empty label anyway. A series already present is not added
    /// again.
    fn push(&mut self, labels: &[(&'static str, Option<String>)], value: impl Into<Value>) {
        let Some(value) = value.into().render() else {
            return;
        };
        let present: Vec<(&'static str, String)> = labels
            .iter()
            .filter_map(|(k, v)| {
                v.as_ref()
                    .filter(|v| !v.is_empty())
                    .map(|v| (*k, v.clone()))
            })
            .collect();
        let mut key = present.clone();
        key.sort();
        if !self.seen.insert(key) {
            return;
        }
        let rendered = if present.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = present
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label_value(v)))
                .collect();
            format!("{{{}}}", pairs.join(","))
        };
        self.samples.push((rendered, value));
    }

    fn write(&self, out: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let kind = match self.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} {kind}", self.name);
        for (labels, value) in &self.samples {
            let _ = writeln!(out, "{}{labels} {value}", self.name);
        }
    }
}

/// A sample value.
#[derive(Debug, Clone, Copy)]
enum Value {
    Int(u64),
    Float(f64),
}

impl Value {
    /// The value as text; `None` for a float that is not finite (never written).
    fn render(self) -> Option<String> {
        match self {
            Value::Int(v) => Some(v.to_string()),
            Value::Float(v) if v.is_finite() => Some(v.to_string()),
            Value::Float(_) => None,
        }
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v.into())
    }
}

impl From<u8> for Value {
    fn from(v: u8) -> Self {
        Value::Int(v.into())
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(v as u64)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

fn some(v: impl ToString) -> Option<String> {
    Some(v.to_string())
}

/// The metrics of one run in the text exposition format.
pub fn render(report: &Report, facts: &Facts, duration: Duration) -> String {
    let mut families = Vec::new();
    run_families(report, facts, &mut families);
    if let Some(inv) = &facts.inventory {
        gpu_families(inv, facts, &mut families);
    }
    pcie_family(facts, &mut families);
    if let Some(inv) = &facts.inventory {
        ras_families(inv, facts, &mut families);
    }
    firmware_family(facts, &mut families);
    telemetry_families(facts, &mut families);
    let mut duration_f = Family::new(
        "rocm_probe_duration_seconds",
        Kind::Gauge,
        "Wall-clock time the probe took to collect the facts and build the report, in seconds.",
    );
    duration_f.push(&[], duration.as_secs_f64());
    families.push(duration_f);

    let mut out = String::new();
    for f in &families {
        f.write(&mut out);
    }
    out
}

/// The verdict, layers and findings.
fn run_families(report: &Report, facts: &Facts, families: &mut Vec<Family>) {
    let mut info = Family::new(
        "rocm_probe_info",
        Kind::Gauge,
        "Always 1: the rocm-probe version, the profile in force (desktop, workstation, cluster) and the source (live or fixture).",
    );
    info.push(
        &[
            ("version", some(env!("CARGO_PKG_VERSION"))),
            ("profile", some(report.profile.id())),
            (
                "source",
                some(match facts.source {
                    SourceKind::Live => "live",
                    SourceKind::Fixture { .. } => "fixture",
                }),
            ),
        ],
        1u8,
    );
    families.push(info);

    let mut verdict = Family::new(
        "rocm_probe_verdict",
        Kind::Gauge,
        "Overall verdict as a status code: 1 pass, 3 warn, 4 fail, 0 undetermined (no GPU could be checked) (codes: skip=0 pass=1 info=2 warn=3 fail=4).",
    );
    verdict.push(&[], status_code(report.verdict.status));
    families.push(verdict);

    let mut root = Family::new(
        "rocm_probe_root_cause_info",
        Kind::Gauge,
        "Always 1 when there is a root cause: the finding id, its layer (id and number 1-9) and status (warn or fail).",
    );
    if let Some(id) = report.verdict.root_cause {
        let layer = report
            .findings
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.layer.id());
        root.push(
            &[
                ("id", some(id)),
                ("layer", layer.map(str::to_owned)),
                ("number", some(report.verdict.root_layer)),
                ("status", some(status_id(report.verdict.status))),
                gpu_label(report.verdict.root_subject.as_ref()),
                pci_label(report.verdict.root_subject.as_ref()),
            ],
            1u8,
        );
    }
    families.push(root);

    let mut layers = Family::new(
        "rocm_probe_layer_status",
        Kind::Gauge,
        "Status of each layer (its heaviest finding) as a code: skip=0 pass=1 info=2 warn=3 fail=4.",
    );
    for l in &report.layers {
        layers.push(
            &[("layer", some(l.layer.id())), ("number", some(l.number))],
            status_code(l.status),
        );
    }
    families.push(layers);

    let mut counts = Family::new(
        "rocm_probe_findings",
        Kind::Gauge,
        "Number of findings with each status (skip, pass, info, warn, fail).",
    );
    for s in STATUSES {
        let n = report.findings.iter().filter(|f| f.status == s).count();
        counts.push(&[("status", some(status_id(s)))], n);
    }
    families.push(counts);

    let mut problems = Family::new(
        "rocm_probe_finding_info",
        Kind::Gauge,
        "Always 1 for each finding id present with status warn or fail: the id, its layer and status, and the GPU when it is about one.",
    );
    for f in report.findings.iter().filter(|f| f.status >= Status::Warn) {
        problems.push(
            &[
                ("id", some(f.id)),
                ("layer", some(f.layer.id())),
                ("status", some(status_id(f.status))),
                gpu_label(f.subject.as_ref()),
                pci_label(f.subject.as_ref()),
            ],
            1u8,
        );
    }
    families.push(problems);
}

/// The `gpu` label of a finding about one GPU: its number, as `rocm_probe_gpu_info` has it.
fn gpu_label(subject: Option<&Subject>) -> (&'static str, Option<String>) {
    match subject {
        Some(Subject::Gpu { index, .. }) => ("gpu", some(index)),
        _ => ("gpu", None),
    }
}

/// The `pci_address` label of a finding about one GPU.
fn pci_label(subject: Option<&Subject>) -> (&'static str, Option<String>) {
    match subject {
        Some(Subject::Gpu { pci_address, .. }) => ("pci_address", pci_address.clone()),
        _ => ("pci_address", None),
    }
}

/// The render node of an agent.
fn render_node<'f>(facts: &'f Facts, agent: &Agent) -> Option<&'f RenderNode> {
    let minor = agent.drm_render_minor?;
    facts.kfd.as_ref()?.render_nodes.get(&minor)
}

/// GPU counts, identities and memory.
fn gpu_families(inv: &Inventory, facts: &Facts, families: &mut Vec<Family>) {
    let mut gpus = Family::new(
        "rocm_probe_gpus",
        Kind::Gauge,
        "Number of physical GPUs in the KFD topology (partitions of one GPU count once).",
    );
    gpus.push(&[], inv.gpus.len());
    families.push(gpus);
    let mut agents = Family::new(
        "rocm_probe_gpu_agents",
        Kind::Gauge,
        "Number of GPU agents (KFD GPU nodes; one per partition).",
    );
    agents.push(&[], inv.gpu_agents().count());
    families.push(agents);

    // Partition modes are files of the physical GPU's first node; later partitions lack them.
    let by_node: BTreeMap<u32, &Agent> = inv.gpu_agents().map(|a| (a.node, a)).collect();
    let mode = |gpu: Option<usize>, pick: fn(&RenderNode) -> Option<&String>| {
        let gpu = inv.gpus.get(gpu?)?;
        gpu.nodes
            .iter()
            .filter_map(|n| by_node.get(n))
            .filter_map(|a| render_node(facts, a))
            .find_map(|r| pick(r).cloned())
    };

    let mut info = Family::new(
        "rocm_probe_gpu_info",
        Kind::Gauge,
        "Always 1 per GPU agent: KFD node, physical GPU index, PCI address, PCI device id, gfx processor, full target ID, marketing name, partition index and partition modes.",
    );
    let mut memory = Family::new(
        "rocm_probe_gpu_memory_bytes",
        Kind::Gauge,
        "Local memory of the GPU agent from its KFD memory banks, in bytes (VRAM on discrete GPUs).",
    );
    let mut vram = Family::new(
        "rocm_probe_gpu_vram_bytes",
        Kind::Gauge,
        "VRAM of the GPU agent's render node (mem_info_vram_total), in bytes; on APUs the BIOS carve-out.",
    );
    let mut visible = Family::new(
        "rocm_probe_gpu_vram_cpu_visible_bytes",
        Kind::Gauge,
        "VRAM the CPU can map (mem_info_vis_vram_total), in bytes; all of it with Large BAR.",
    );
    let mut gtt = Family::new(
        "rocm_probe_gpu_gtt_bytes",
        Kind::Gauge,
        "System memory the GPU can map (mem_info_gtt_total), in bytes.",
    );
    for a in inv.gpu_agents() {
        let node = some(a.node);
        let physical = a.physical_gpu.and_then(|i| inv.gpus.get(i));
        info.push(
            &[
                ("kfd_node", node.clone()),
                ("gpu", a.physical_gpu.map(|g| g.to_string())),
                (
                    "pci_address",
                    physical
                        .and_then(|g| g.pci_address.clone())
                        .or_else(|| a.pci_address.clone()),
                ),
                ("device_id", a.chip_id.map(|d| format!("0x{d:04x}"))),
                ("gfx", a.gfx.map(|g| g.name())),
                ("target_id", a.target_id.clone()),
                ("marketing_name", a.marketing_name.clone()),
                ("partition", a.partition.map(|p| p.to_string())),
                (
                    "compute_partition",
                    mode(a.physical_gpu, |r| r.compute_partition.as_ref()),
                ),
                (
                    "memory_partition",
                    mode(a.physical_gpu, |r| r.memory_partition.as_ref()),
                ),
            ],
            1u8,
        );
        if let Some(m) = a.memory_bytes {
            memory.push(&[("kfd_node", node.clone())], m);
        }
        if let Some(r) = render_node(facts, a) {
            if let Some(v) = r.vram_total {
                vram.push(&[("kfd_node", node.clone())], v);
            }
            if let Some(v) = r.vis_vram_total {
                visible.push(&[("kfd_node", node.clone())], v);
            }
            if let Some(v) = r.gtt_total {
                gtt.push(&[("kfd_node", node.clone())], v);
            }
        }
    }
    families.extend([info, memory, vram, visible, gtt]);
}

/// A PCIe link: speeds in GT/s and widths in lanes.
#[derive(Debug, Default)]
struct Link {
    current_speed: Option<f64>,
    max_speed: Option<f64>,
    current_width: Option<u32>,
    max_width: Option<u32>,
}

/// PCIe links by PCI address: from `/sys/bus/pci/devices` when captured, else (or for a GPU
/// missing there) from the render node of the GPU's first node that has them.
fn pcie_family(facts: &Facts, families: &mut Vec<Family>) {
    let mut links: BTreeMap<String, Link> = BTreeMap::new();
    if let Some(pci) = &facts.pci {
        for g in &pci.gpus {
            links.entry(g.address.clone()).or_insert(Link {
                current_speed: g.current_link_speed.as_deref().and_then(gts),
                max_speed: g.max_link_speed.as_deref().and_then(gts),
                current_width: g.current_link_width,
                max_width: g.max_link_width,
            });
        }
    }
    if let Some(inv) = &facts.inventory {
        for gpu in &inv.gpus {
            let Some(address) = &gpu.pci_address else {
                continue;
            };
            if links.contains_key(address) {
                continue;
            }
            let found = gpu
                .nodes
                .iter()
                .filter_map(|n| inv.agents.iter().find(|a| a.node == *n))
                .filter_map(|a| render_node(facts, a))
                .find(|r| {
                    r.current_link_speed.is_some()
                        || r.max_link_speed.is_some()
                        || r.current_link_width.is_some()
                        || r.max_link_width.is_some()
                });
            if let Some(r) = found {
                links.insert(
                    address.clone(),
                    Link {
                        current_speed: r.current_link_speed.as_deref().and_then(gts),
                        max_speed: r.max_link_speed.as_deref().and_then(gts),
                        current_width: r.current_link_width,
                        max_width: r.max_link_width,
                    },
                );
            }
        }
    }
    let mut speed = Family::new(
        "rocm_probe_pcie_link_speed_transfers_per_second",
        Kind::Gauge,
        "PCIe link speed of the GPU's PCI function per lane, in transfers per second (16e9 for 16.0 GT/s); kind is current or max.",
    );
    let mut width = Family::new(
        "rocm_probe_pcie_link_width_lanes",
        Kind::Gauge,
        "PCIe link width of the GPU's PCI function, in lanes; kind is current or max.",
    );
    let transfers = |gts: Option<f64>| gts.filter(|g| g.is_finite() && *g >= 0.0).map(|g| g * 1e9);
    for (address, link) in &links {
        let labels = |kind: &str| [("pci_address", some(address)), ("kind", some(kind))];
        for (kind, v) in [
            ("current", transfers(link.current_speed)),
            ("max", transfers(link.max_speed)),
        ] {
            if let Some(v) = v {
                speed.push(&labels(kind), v);
            }
        }
        for (kind, v) in [("current", link.current_width), ("max", link.max_width)] {
            if let Some(v) = v {
                width.push(&labels(kind), v);
            }
        }
    }
    families.extend([speed, width]);
}

/// RAS error counters and bad pages of each GPU agent's render node.
fn ras_families(inv: &Inventory, facts: &Facts, families: &mut Vec<Family>) {
    let mut errors = Family::new(
        "rocm_probe_ras_errors_total",
        Kind::Counter,
        "RAS error count of a block of the GPU agent's render node since the driver loaded (ras/<block>_err_count); kind is correctable or uncorrectable.",
    );
    let mut pages = Family::new(
        "rocm_probe_ras_bad_pages",
        Kind::Gauge,
        "VRAM pages in ras/gpu_vram_bad_pages; state is retired or pending (retirement).",
    );
    for a in inv.gpu_agents() {
        let Some(r) = render_node(facts, a) else {
            continue;
        };
        let node = some(a.node);
        for c in &r.ras {
            for (kind, v) in [
                ("correctable", c.correctable),
                ("uncorrectable", c.uncorrectable),
            ] {
                if let Some(v) = v {
                    errors.push(
                        &[
                            ("kfd_node", node.clone()),
                            ("block", some(&c.block)),
                            ("kind", some(kind)),
                        ],
                        v,
                    );
                }
            }
        }
        for (state, v) in [("retired", r.retired_pages), ("pending", r.pending_pages)] {
            if let Some(v) = v {
                pages.push(&[("kfd_node", node.clone()), ("state", some(state))], v);
            }
        }
    }
    families.extend([errors, pages]);
}

/// The firmware versions of each GPU.
fn firmware_family(facts: &Facts, families: &mut Vec<Family>) {
    let mut fw = Family::new(
        "rocm_probe_firmware_info",
        Kind::Gauge,
        "Always 1 per firmware component of each physical GPU: the component (vbios, or the name of device/fw_version/<component>_fw_version) and its version as sysfs prints it.",
    );
    for g in &facts.fw_versions.gpus {
        let gpu = some(g.gpu);
        if let Some(v) = &g.vbios {
            fw.push(
                &[
                    ("gpu", gpu.clone()),
                    ("pci_address", g.pci_address.clone()),
                    ("component", some("vbios")),
                    ("version", some(v)),
                ],
                1u8,
            );
        }
        for (name, v) in &g.components {
            fw.push(
                &[
                    ("gpu", gpu.clone()),
                    ("pci_address", g.pci_address.clone()),
                    ("component", some(name)),
                    ("version", some(&v.text)),
                ],
                1u8,
            );
        }
    }
    families.push(fw);
}

/// Each GPU's temperatures, power, fan, clocks, busy and memory use, and throttling.
fn telemetry_families(facts: &Facts, families: &mut Vec<Family>) {
    use crate::facts::telemetry::gpu_metrics::{Throttler, throttler_names};
    let mut temp = Family::new(
        "rocm_probe_gpu_temperature_celsius",
        Kind::Gauge,
        "Temperature of each hwmon sensor of the GPU (edge, junction, mem), in degrees Celsius.",
    );
    let mut power = Family::new(
        "rocm_probe_gpu_power_watts",
        Kind::Gauge,
        "Power the GPU draws (hwmon power1_average, else power1_input), in watts.",
    );
    let mut fan = Family::new(
        "rocm_probe_gpu_fan_rpm",
        Kind::Gauge,
        "Fan speed of the GPU (hwmon fan1_input), in revolutions per minute.",
    );
    let mut clock = Family::new(
        "rocm_probe_gpu_clock_hertz",
        Kind::Gauge,
        "Current graphics (sclk) and memory (mclk) clock of the GPU (hwmon freq1_input, freq2_input), in hertz.",
    );
    let mut busy = Family::new(
        "rocm_probe_gpu_busy_ratio",
        Kind::Gauge,
        "How busy the GPU is (gpu_busy_percent / 100), from 0 to 1.",
    );
    let mut vram = Family::new(
        "rocm_probe_gpu_vram_used_bytes",
        Kind::Gauge,
        "VRAM in use on the GPU (mem_info_vram_used), in bytes.",
    );
    let mut gtt = Family::new(
        "rocm_probe_gpu_gtt_used_bytes",
        Kind::Gauge,
        "System memory mapped by the GPU in use (mem_info_gtt_used), in bytes.",
    );
    let mut throttling = Family::new(
        "rocm_probe_gpu_throttling",
        Kind::Gauge,
        "1 when the GPU's firmware reports throttling of that kind (power, current, thermal, other) in effect, else 0 (gpu_metrics indep_throttle_status; absent when the table has none).",
    );
    let mut skipped = Family::new(
        "rocm_probe_gpu_telemetry_skipped",
        Kind::Gauge,
        "Always 1 for a GPU whose telemetry was not read, with the reason (runtime-suspended: reading would wake it).",
    );
    for t in &facts.telemetry.gpus {
        let gpu = ("gpu", some(t.gpu));
        let pci = ("pci_address", t.pci_address.clone());
        if t.skipped.is_some() {
            skipped.push(
                &[
                    gpu.clone(),
                    pci.clone(),
                    ("reason", some("runtime-suspended")),
                ],
                1u8,
            );
            continue;
        }
        if let Some(h) = &t.hwmon {
            for s in &h.temperatures {
                if let Some(m) = s.millidegrees {
                    temp.push(
                        &[gpu.clone(), pci.clone(), ("sensor", some(&s.label))],
                        m as f64 / 1000.0,
                    );
                }
            }
            if let Some(uw) = h.power_uw {
                power.push(&[gpu.clone(), pci.clone()], uw as f64 / 1e6);
            }
            if let Some(rpm) = h.fan_rpm {
                fan.push(&[gpu.clone(), pci.clone()], rpm);
            }
            for (name, hz) in [("sclk", h.sclk_hz), ("mclk", h.mclk_hz)] {
                if let Some(hz) = hz {
                    clock.push(&[gpu.clone(), pci.clone(), ("clock", some(name))], hz);
                }
            }
        }
        if let Some(b) = t.busy_percent {
            busy.push(&[gpu.clone(), pci.clone()], b as f64 / 100.0);
        }
        if let Some(v) = t.vram_used {
            vram.push(&[gpu.clone(), pci.clone()], v);
        }
        if let Some(v) = t.gtt_used {
            gtt.push(&[gpu.clone(), pci.clone()], v);
        }
        if let Some(status) = t.metrics.as_ref().and_then(|m| m.indep_throttle_status) {
            let set = throttler_names(status);
            for (kind, id) in [
                (Throttler::Power, "power"),
                (Throttler::Current, "current"),
                (Throttler::Thermal, "thermal"),
                (Throttler::Other, "other"),
            ] {
                let on = set.iter().any(|(k, _)| *k == kind);
                throttling.push(
                    &[gpu.clone(), pci.clone(), ("kind", some(id))],
                    u8::from(on),
                );
            }
        }
    }
    families.extend([
        temp, power, fan, clock, busy, vram, gtt, throttling, skipped,
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_follow_weight() {
        let codes: Vec<u8> = STATUSES.iter().map(|s| status_code(*s)).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
        // Ordered like Status itself, so max() of statuses is max() of codes.
        for w in STATUSES.windows(2) {
            assert!(w[0] < w[1]);
        }
        let ids: Vec<&str> = STATUSES.iter().map(|s| status_id(*s)).collect();
        assert_eq!(ids, ["skip", "pass", "info", "warn", "fail"]);
        // The ids are the JSON report's.
        for s in STATUSES {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(status_id(s))
            );
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value("plain"), "plain");
        assert_eq!(
            escape_label_value(r#"AMD "Radeon" C:\GPU"#),
            r#"AMD \"Radeon\" C:\\GPU"#
        );
        assert_eq!(escape_label_value("a\nb"), "a\\nb");
        assert_eq!(escape_label_value("\\n"), "\\\\n");
        // UTF-8 stays as it is; other controls become visible text that still parses.
        assert_eq!(escape_label_value("Radeon™ 780M"), "Radeon™ 780M");
        assert_eq!(escape_label_value("\x1b[31mEVIL\t"), "\\\\x1b[31mEVIL\\\\t");
    }

    #[test]
    fn a_family_writes_help_type_and_unique_series() {
        let mut f = Family::new("rocm_probe_x", Kind::Gauge, "X.");
        f.push(&[("a", some("1")), ("b", None)], 1u8);
        // Same series again (an empty value is an absent label): dropped.
        f.push(&[("a", some("1")), ("b", some(""))], 2u8);
        f.push(&[("a", some("q\"")), ("b", some("2"))], 0.5);
        f.push(&[("a", some("nan"))], f64::NAN);
        let mut out = String::new();
        f.write(&mut out);
        assert_eq!(
            out,
            "# HELP rocm_probe_x X.\n# TYPE rocm_probe_x gauge\nrocm_probe_x{a=\"1\"} 1\nrocm_probe_x{a=\"q\\\"\",b=\"2\"} 0.5\n"
        );
        // A family without samples writes nothing.
        let mut out = String::new();
        Family::new("rocm_probe_y", Kind::Counter, "Y.").write(&mut out);
        assert_eq!(out, "");
    }

    #[test]
    fn large_and_small_values_are_plain_numbers() {
        assert_eq!(
            Value::from(u64::MAX).render().unwrap(),
            u64::MAX.to_string()
        );
        assert_eq!(Value::from(16.0 * 1e9).render().unwrap(), "16000000000");
        assert_eq!(Value::from(2.5e9).render().unwrap(), "2500000000");
        assert_eq!(Value::from(0.000_25).render().unwrap(), "0.00025");
        assert_eq!(Value::from(f64::INFINITY).render(), None);
    }
}
