//! `ps` as text: one line per process and GPU, like `rocm-smi --showpids`, then its queues; the
//! GPU column shows the index part of each GPU's one name (`GPU 0.3`), and a legend under the
//! table gives the whole name with the KFD node and KFD's `gpu_id` it stands for.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rocm_probe::Inventory;
use rocm_probe::facts::process::Processes;
use rocm_probe::source::escape;

const MIB: u64 = 1 << 20;

/// Renders the process view; `inv` names the GPUs.
pub fn text(ps: &Processes, inv: &Inventory, out: &mut dyn Write) -> io::Result<()> {
    if ps.processes.is_empty() {
        return writeln!(out, "{}", rocm_probe::msg!("cli.ps-none"));
    }
    writeln!(
        out,
        "{:>7} {:<15} {:<11} {:>9} {:>8} {:>4} {:>9}  QUEUES",
        "PID", "PROCESS", "GPU", "VRAM MiB", "SDMA", "CUs", "EVICT ms"
    )?;
    // (label, node, gpu_id) → the whole name, for the legend (in GPU order).
    let mut legend: BTreeMap<(String, u32, u32), String> = BTreeMap::new();
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    for p in &ps.processes {
        let comm = p
            .comm
            .as_deref()
            .map_or_else(|| "?".to_owned(), escape::text);
        if p.gpus.is_empty() {
            writeln!(
                out,
                "{:>7} {comm:<15} {}",
                p.pid,
                rocm_probe::msg!("cli.ps-no-gpu")
            )?;
        }
        for g in &p.gpus {
            let queues: Vec<String> = p
                .queues
                .iter()
                .filter(|q| q.gpu_id == Some(g.gpu_id))
                .map(|q| format!("{}:{}", q.id, q.type_name()))
                .collect();
            // The queues, which may be many, continue under their column.
            let name = g.node.and_then(|n| inv.agent_name(n).map(|name| (n, name)));
            let label = match &name {
                Some((n, name)) => {
                    legend.insert((name.label(), *n, g.gpu_id), name.to_string());
                    format!("GPU {}", name.label())
                }
                None => format!("gpu_id {}", g.gpu_id),
            };
            let line = format!(
                "{:>7} {comm:<15} {label:<11} {:>9} {:>8} {:>4} {:>9}  {}",
                p.pid,
                opt(g.vram_bytes.map(|b| b / MIB)),
                opt(g.sdma_activity),
                opt(g.cu_occupancy),
                opt(g.evicted_ms),
                if queues.is_empty() {
                    "-".to_owned()
                } else {
                    queues.join(" ")
                }
            );
            writeln!(
                out,
                "{}",
                super::hang(&line, super::width(), "", &" ".repeat(71))
            )?;
        }
    }
    for ((_, node, gpu_id), name) in &legend {
        let line = rocm_probe::msg!("cli.ps-gpu-legend", name = escape::text(name), node, gpu_id);
        writeln!(out, "{}", super::hang(&line, super::width(), "", "    "))?;
    }
    Ok(())
}
