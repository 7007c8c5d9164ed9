//! `ps` as text: one line per process and GPU, like `rocm-smi --showpids`, then its queues.

use std::io::{self, Write};

use rocm_probe::facts::process::Processes;
use rocm_probe::source::escape;

const MIB: u64 = 1 << 20;

/// Renders the process view.
pub fn text(ps: &Processes, out: &mut dyn Write) -> io::Result<()> {
    if ps.processes.is_empty() {
        return writeln!(out, "{}", rocm_probe::msg!("cli.ps-none"));
    }
    writeln!(
        out,
        "{:>7} {:<15} {:>4} {:>6} {:>9} {:>8} {:>4} {:>9}  QUEUES",
        "PID", "PROCESS", "NODE", "GPU_ID", "VRAM MiB", "SDMA", "CUs", "EVICT ms"
    )?;
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
            let line = format!(
                "{:>7} {comm:<15} {:>4} {:>6} {:>9} {:>8} {:>4} {:>9}  {}",
                p.pid,
                opt(g.node.map(u64::from)),
                g.gpu_id,
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
    Ok(())
}
