//! One function per command: collect through the library, render, choose the exit code.

use std::io::Write;

use anyhow::Result;
use rocm_probe::output::Document;
use rocm_probe::topology::TOPOLOGY_DIR;
use rocm_probe::{AgentFacts, Inventory, ReadError, Source};

use crate::args::{Args, Command};
use crate::render;

/// Exit code: the command ran and found what it looks for.
const OK: u8 = 0;
/// Exit code: the command ran and found no GPU (or a failure, for reports).
const NOT_FOUND: u8 = 1;

/// Runs the command; `Err` means the probe could not run (exit 2).
pub fn run(args: &Args, out: &mut dyn Write) -> Result<u8> {
    let source = match &args.root {
        Some(dir) => Source::fixture(dir)?,
        None => Source::live(),
    };
    match args.command {
        None => agents(&source, false, out),
        Some(Command::Agents { json }) => agents(&source, json, out),
        Some(Command::Targets { name }) => targets(&source, name, out),
    }
}

fn agents(source: &Source, json: bool, out: &mut dyn Write) -> Result<u8> {
    let facts = match AgentFacts::collect(source) {
        Ok(facts) => facts,
        Err(e) => return no_kfd(&e),
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    if json {
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &inventory))?;
        writeln!(out)?;
    } else {
        render::agents::text(&inventory, out)?;
    }
    let code = inventory.exit_code();
    if code != OK {
        eprintln!("rocm-probe: no GPU node in the KFD topology ({TOPOLOGY_DIR})");
    }
    Ok(code)
}

fn targets(source: &Source, full: bool, out: &mut dyn Write) -> Result<u8> {
    let facts = match AgentFacts::collect_targets(source, full) {
        Ok(facts) => facts,
        Err(e) => return no_kfd(&e),
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    let lines = inventory.targets(full);
    if lines.is_empty() {
        eprintln!("rocm-probe: no GPU node in the KFD topology ({TOPOLOGY_DIR})");
        return Ok(NOT_FOUND);
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(OK)
}

/// No readable topology: one line, exit 1 — a machine without a GPU driver is an answer, not
/// an error of the probe.
fn no_kfd(err: &ReadError) -> Result<u8> {
    let why = if err.is_not_found() {
        "the amdgpu driver is not loaded, or this container does not expose /sys/class/kfd"
    } else {
        "the topology is not readable"
    };
    eprintln!("rocm-probe: no KFD: {err} ({why})");
    Ok(NOT_FOUND)
}

fn warn_problems(inventory: &Inventory) {
    for p in &inventory.problems {
        eprintln!("rocm-probe: warning: {p}");
    }
}
