//! `agents` as text, in rocminfo's layout and under rocminfo's field names, so that the two can
//! be compared line by line. Fields sysfs cannot give are not printed; unknown values say so.

use std::fmt::Display;
use std::io::{self, Write};

use rocm_probe::facts::agent::{Agent, DeviceType, Inventory, PhysicalGpu};
use rocm_probe::msg;
use rocm_probe::source::escape;

const GIB: f64 = (1u64 << 30) as f64;

/// Renders every agent, then the physical GPUs, hives and XNACK mode.
pub fn text(inv: &Inventory, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "==========")?;
    writeln!(out, "HSA Agents")?;
    writeln!(out, "==========")?;
    for (i, agent) in inv.agents.iter().enumerate() {
        let title = format!("Agent {}", i + 1);
        let stars = "*".repeat(title.len());
        writeln!(out, "{stars}\n{title}\n{stars}")?;
        match agent.device_type {
            DeviceType::Cpu => cpu(agent, out)?,
            DeviceType::Gpu => gpu(inv, agent, out)?,
        }
    }
    machine(inv, out)
}

fn line(out: &mut dyn Write, indent: usize, label: &str, value: impl Display) -> io::Result<()> {
    let pad = 2 * indent;
    let value = escape::text(&value.to_string());
    if value.is_empty() {
        return writeln!(out, "{:pad$}{label}", "");
    }
    let first = format!("{:pad$}{label:<width$}", "", width = 27 - pad);
    // A value too long for the line continues under itself.
    writeln!(
        out,
        "{}",
        super::hang(&value, super::width(), &first, &" ".repeat(27))
    )
}

/// Values come from the machine, so they are escaped for the terminal here.
fn opt<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".to_owned(), |v| escape::text(&v.to_string()))
}

/// rocminfo prints counts as `decimal(0xhex)`.
fn hex<T: Display + std::fmt::LowerHex>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".to_owned(), |v| format!("{v}(0x{v:x})"))
}

fn flag(v: Option<bool>) -> String {
    opt(v.map(|b| if b { "TRUE" } else { "FALSE" }))
}

/// rocminfo prints memory sizes in KB, as `decimal(0xhex) KB`.
fn bytes_kb(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "unknown".to_owned(),
        |b| {
            let k = b / 1024;
            format!("{k}(0x{k:x}) KB")
        },
    )
}

/// A physical GPU's memory in the list after the agents, which is the probe's own.
fn gib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "unknown".to_owned(),
        |b| format!("{:.0} GiB", b as f64 / GIB),
    )
}

fn cpu(a: &Agent, out: &mut dyn Write) -> io::Result<()> {
    line(out, 1, "Name:", opt(a.name.as_ref()))?;
    line(out, 1, "Marketing Name:", opt(a.marketing_name.as_ref()))?;
    line(out, 1, "Device Type:", "CPU")?;
    line(out, 1, "Node:", a.node)?;
    line(out, 1, "Max Clock Freq. (MHz):", opt(a.max_clock_mhz))?;
    line(out, 1, "Internal Node ID:", a.node)?;
    line(out, 1, "Compute Unit:", opt(a.compute_units))?;
    line(out, 1, "Memory:", bytes_kb(a.memory_bytes))
}

fn gpu(inv: &Inventory, a: &Agent, out: &mut dyn Write) -> io::Result<()> {
    line(out, 1, "Name:", opt(a.name.as_ref()))?;
    line(out, 1, "Uuid:", opt(a.uuid.as_ref()))?;
    line(out, 1, "Marketing Name:", opt(a.marketing_name.as_ref()))?;
    line(out, 1, "Vendor Name:", opt(a.vendor_name.as_ref()))?;
    line(out, 1, "Device Type:", "GPU")?;
    line(out, 1, "Node:", a.node)?;
    line(out, 1, "Chip ID:", hex(a.chip_id))?;
    line(out, 1, "ASIC Revision:", hex(a.asic_revision))?;
    line(out, 1, "Max Clock Freq. (MHz):", opt(a.max_clock_mhz))?;
    line(out, 1, "BDFID:", opt(a.bdfid))?;
    line(out, 1, "PCI Address:", opt(a.pci_address.as_ref()))?;
    line(out, 1, "Internal Node ID:", a.node)?;
    line(out, 1, "Compute Unit:", opt(a.compute_units))?;
    line(out, 1, "SIMDs per CU:", opt(a.simds_per_cu))?;
    line(out, 1, "Shader Engines:", opt(a.shader_engines))?;
    line(
        out,
        1,
        "Shader Arrs. per Eng.:",
        opt(a.shader_arrays_per_engine),
    )?;
    line(
        out,
        1,
        "Coherent Host Access:",
        flag(a.coherent_host_access),
    )?;
    line(out, 1, "Wavefront Size:", hex(a.wavefront_size))?;
    line(out, 1, "Max Waves Per CU:", hex(a.max_waves_per_cu))?;
    line(
        out,
        1,
        "Max Work-item Per CU:",
        hex(a.max_work_items_per_cu),
    )?;
    line(out, 1, "Packet Processor uCode::", opt(a.mec_firmware))?;
    line(out, 1, "SDMA engine uCode::", opt(a.sdma_firmware))?;
    line(out, 1, "Cache Info:", "")?;
    let kib =
        |v: Option<u64>| v.map_or_else(|| "unknown".to_owned(), |v| format!("{v}(0x{v:x}) KB"));
    line(out, 2, "L1:", kib(a.caches.l1_kib))?;
    line(out, 2, "L2:", kib(a.caches.l2_kib))?;
    if a.caches.l3_kib.is_some() {
        line(out, 2, "L3:", kib(a.caches.l3_kib))?;
    }
    let memory_label = if a.integrated == Some(true) {
        "Memory (GTT-sized, APU):"
    } else {
        "Memory (VRAM):"
    };
    line(out, 1, memory_label, bytes_kb(a.memory_bytes))?;
    line(out, 1, "Integrated:", flag(a.integrated))?;
    // The one name every report gives this agent (README "Which GPU is which").
    line(out, 1, "Reported As:", opt(inv.agent_name(a.node)))?;
    line(out, 1, "XNACK:", xnack(a))?;
    line(out, 1, "ISA Info:", "")?;
    line(out, 2, "ISA 1", "")?;
    line(out, 3, "Name:", opt(a.isa.as_ref()))
}

/// The agent's XNACK mode: the process's (the footer's) where the processor has XNACK, and off
/// where it has none, so that no agent says `unknown` while the footer knows.
fn xnack(a: &Agent) -> String {
    match (a.xnack, a.gfx) {
        (Some(true), _) => "on".to_owned(),
        (Some(false), _) => "off".to_owned(),
        (None, Some(g)) if !g.supports_xnack() => {
            msg!("cli.agents-xnack-unsupported", processor = g.name())
        }
        (None, _) => "unknown".to_owned(),
    }
}

/// `8 physical GPUs, 8 GPU agents`, singular where one.
fn counts(gpus: usize, agents: usize) -> String {
    let gpus = if gpus == 1 {
        msg!("cli.agents-physical-gpus-one", n = gpus)
    } else {
        msg!("cli.agents-physical-gpus", n = gpus)
    };
    let agents = if agents == 1 {
        msg!("cli.agents-gpu-agents-one", n = agents)
    } else {
        msg!("cli.agents-gpu-agents", n = agents)
    };
    msg!("cli.agents-counts", gpus, agents)
}

/// One physical GPU of the list: its name, then what it is, then its KFD nodes.
fn gpu_line(inv: &Inventory, g: &PhysicalGpu) -> String {
    let nodes = match g.nodes.as_slice() {
        [one] => msg!("cli.agents-kfd-node", node = one),
        [first, .., last] => msg!("cli.agents-kfd-partitions", n = g.nodes.len(), first, last),
        [] => String::new(),
    };
    msg!(
        "cli.agents-gpu-line",
        name = escape::text(&inv.gpu_name(g).to_string()),
        gfx = opt(g.gfx),
        marketing = opt(g.marketing_name.as_ref()),
        cus = opt(g.compute_units),
        memory = gib(g.memory_bytes),
        nodes
    )
}

fn machine(inv: &Inventory, out: &mut dyn Write) -> io::Result<()> {
    let agents = inv.gpu_agents().count();
    writeln!(out, "=============")?;
    writeln!(out, "Physical GPUs")?;
    writeln!(out, "=============")?;
    writeln!(out, "{}", counts(inv.gpus.len(), agents))?;
    for g in &inv.gpus {
        let text = gpu_line(inv, g);
        writeln!(
            out,
            "{}",
            super::hang(&text, super::width(), "  ", "        ")
        )?;
    }
    for h in &inv.hives {
        let gpus: Vec<String> = h.gpus.iter().map(ToString::to_string).collect();
        writeln!(
            out,
            "XGMI hive 0x{:016x}: GPUs {}",
            h.hive_id,
            gpus.join(", ")
        )?;
    }
    let x = &inv.xnack;
    writeln!(
        out,
        "XNACK: {} (amdgpu noretry={}, HSA_XNACK={})",
        opt(x.enabled.map(|e| if e { "on" } else { "off" })),
        opt(x.noretry),
        x.hsa_xnack
            .as_deref()
            .map_or_else(|| "unset".to_owned(), escape::text)
    )
}

/// Each physical GPU's firmware and, unless it is runtime-suspended, how it is doing now: one
/// line each, after the machine summary.
pub fn gpu_state(
    inv: &Inventory,
    fw: &rocm_probe::facts::fw_versions::FwVersionFacts,
    telemetry: &rocm_probe::facts::telemetry::TelemetryFacts,
    out: &mut dyn Write,
) -> io::Result<()> {
    for g in &fw.gpus {
        let mut parts = Vec::new();
        if let Some(v) = &g.vbios {
            parts.push(format!("vbios {}", escape::text(v)));
        }
        parts.extend(
            g.components
                .iter()
                .map(|(k, v)| format!("{} {}", escape::text(k), escape::text(&v.text))),
        );
        let line = format!("{} firmware: {}", name_of(inv, g.gpu), parts.join(", "));
        writeln!(out, "{}", super::hang(&line, super::width(), "", "    "))?;
    }
    for t in &telemetry.gpus {
        if t.skipped.is_some() {
            let line = format!(
                "{} now: not read (runtime-suspended; reading would wake it)",
                name_of(inv, t.gpu)
            );
            writeln!(out, "{}", super::hang(&line, super::width(), "", "    "))?;
            continue;
        }
        let mut parts = Vec::new();
        if let Some(h) = &t.hwmon {
            for s in &h.temperatures {
                if let Some(m) = s.millidegrees {
                    parts.push(format!("{} {} °C", escape::text(&s.label), m / 1000));
                }
            }
            if let Some(uw) = h.power_uw {
                parts.push(format!("{:.1} W", uw as f64 / 1e6));
            }
            if let Some(rpm) = h.fan_rpm {
                parts.push(format!("fan {rpm} RPM"));
            }
            if let Some(hz) = h.sclk_hz {
                parts.push(format!("sclk {} MHz", hz / 1_000_000));
            }
        }
        if let Some(b) = t.busy_percent {
            parts.push(format!("busy {b}%"));
        }
        if let Some(v) = t.vram_used {
            parts.push(format!("VRAM used {} MiB", v >> 20));
        }
        if let Some(v) = t.gtt_used {
            parts.push(format!("GTT used {} MiB", v >> 20));
        }
        if let Some(m) = &t.metrics {
            match (m.status, m.format_revision, m.content_revision) {
                (Some(rocm_probe::facts::telemetry::MetricsStatus::Parsed), Some(f), Some(c)) => {
                    parts.push(format!("gpu_metrics v{f}.{c}"));
                }
                (Some(status), f, c) => parts.push(format!(
                    "gpu_metrics v{}.{} not read ({})",
                    opt(f),
                    opt(c),
                    serde_json::to_value(status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                )),
                _ => {}
            }
            if let Some(status) = m.indep_throttle_status.filter(|s| *s != 0) {
                parts.push(format!("indep_throttle_status 0x{status:x}"));
            }
        }
        let line = format!("{} now: {}", name_of(inv, t.gpu), parts.join(", "));
        writeln!(out, "{}", super::hang(&line, super::width(), "", "    "))?;
    }
    Ok(())
}

/// The physical GPU at `index` as every report names it.
fn name_of(inv: &Inventory, index: usize) -> String {
    inv.gpus.get(index).map_or_else(
        || format!("GPU {index}"),
        |g| escape::text(&inv.gpu_name(g).to_string()),
    )
}

/// ROCr's own enumeration (`agents --active`), after the sysfs view.
pub fn rocr_text(r: &rocm_probe::active::RocrResult, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "ROCr (--active)")?;
    if let Some(e) = &r.load_error {
        let text = format!("not loaded: {}", escape::text(&e.to_string()));
        return writeln!(out, "{}", super::hang(&text, super::width(), "  ", "    "));
    }
    if let Some(lib) = &r.library {
        let text = format!("library:  {}", escape::text(lib));
        writeln!(
            out,
            "{}",
            super::hang(&text, super::width(), "  ", "            ")
        )?;
    }
    if let Some(init) = &r.init {
        let text = format!("hsa_init: {}", escape::text(init));
        writeln!(
            out,
            "{}",
            super::hang(&text, super::width(), "  ", "            ")
        )?;
    }
    for a in r.agents.iter().flatten() {
        let node = a.node.map_or("?".to_owned(), |n| n.to_string());
        let text = format!(
            "node {node:>3}  {:<4} {:<24} pools {:<2} {}",
            a.device,
            escape::text(&a.name),
            a.pools.unwrap_or(0),
            escape::text(&a.isas.join(", "))
        );
        writeln!(
            out,
            "{}",
            super::hang(&text, super::width(), "  ", "      ")
        )?;
    }
    if let Some(s) = &r.shut_down {
        writeln!(out, "  hsa_shut_down: {}", escape::text(s))?;
    }
    Ok(())
}
