//! One function per command: collect through the library, render, choose the exit code.

use std::io::Write;

use anyhow::Result;
use rocm_probe::finding::{rule, rules};
use rocm_probe::output::Document;
use rocm_probe::report::{Options, Profile};
use rocm_probe::topology::TOPOLOGY_DIR;
use rocm_probe::{AgentFacts, Inventory, ReadError, Report, Source};

use crate::args::{ActiveArgs, Args, ColorChoice, Command, Format, ProfileArg, ReportArgs};
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
    match &args.command {
        Some(Command::Snapshot { dir, no_redact }) => snapshot(source, dir, !*no_redact, out),
        None => report(&source, &args.report, args.color, out),
        Some(Command::Report(r)) => report(&source, r, args.color, out),
        Some(Command::Explain { id }) => explain(id.as_deref(), out),
        Some(Command::Agents { json, active }) => agents(&source, *json, active, out),
        Some(Command::Ps { json }) => ps(&source, *json, out),
        Some(Command::Targets { name }) => targets(&source, *name, out),
        Some(Command::Inspect {
            files,
            targets,
            json,
        }) => inspect(&source, files, targets, *json, out),
    }
}

fn report(
    source: &Source,
    args: &ReportArgs,
    color: ColorChoice,
    out: &mut dyn Write,
) -> Result<u8> {
    let options = Options {
        profile: args.profile.map(|p| match p {
            ProfileArg::Desktop => Profile::Desktop,
            ProfileArg::Workstation => Profile::Workstation,
            ProfileArg::Cluster => Profile::Cluster,
        }),
        active: args.active.options(),
    };
    let report = Report::collect(source, options);
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &Document::new(source, &report))?;
            writeln!(out)?;
        }
        Format::Junit => render::junit::junit(&report, out)?,
        Format::Text => {
            let style = render::report::Style {
                color: render::use_color(color),
                verbose: args.verbose,
                layer: args.layer,
            };
            render::report::text(&report, source, style, out)?;
        }
    }
    Ok(report.exit_code(args.strict))
}

fn snapshot(
    source: Source,
    dir: &std::path::Path,
    redact: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    let summary = rocm_probe::snapshot::snapshot(source, dir, redact)
        .map_err(|e| anyhow::anyhow!("snapshot into {}: {e}", dir.display()))?;
    writeln!(
        out,
        "wrote {} files and {} symlinks to {}{}",
        summary.files,
        summary.links,
        dir.display(),
        if redact {
            " (redacted; --no-redact keeps everything)"
        } else {
            ""
        }
    )?;
    for failed in &summary.failed {
        eprintln!("rocm-probe: not copied (unreadable): {failed}");
    }
    Ok(OK)
}

fn explain(id: Option<&str>, out: &mut dyn Write) -> Result<u8> {
    let Some(id) = id else {
        for r in rules() {
            writeln!(out, "{:<36} {:<5} {}", r.id, r.status.word(), r.title)?;
        }
        return Ok(OK);
    };
    let Some(r) = rule(id) else {
        anyhow::bail!("unknown finding id {id:?}; `rocm-probe explain` lists them");
    };
    writeln!(out, "{} — {}", r.id, r.title)?;
    writeln!(
        out,
        "layer {} ({}), default status {}",
        r.layer.number(),
        r.layer.title(),
        r.status.word()
    )?;
    writeln!(out)?;
    writeln!(out, "{}", render::wrap(r.explain, 96))?;
    Ok(OK)
}

fn agents(source: &Source, json: bool, active: &ActiveArgs, out: &mut dyn Write) -> Result<u8> {
    // ROCr's view, when asked: from the live runtime, or a fixture's recorded [active] results.
    let rocr = active
        .options()
        .and_then(|options| match source.fixture_config() {
            Some(c) => c.active.as_ref().and_then(|a| a.rocr.clone()),
            None => {
                let env = rocm_probe::platform::PlatformFacts::collect(source, &mut Vec::new()).env;
                let installs = rocm_probe::install::InstallFacts::collect(source, &env);
                Some(rocm_probe::active::rocr::probe(&installs, &options).0)
            }
        });
    let facts = match AgentFacts::collect(source) {
        Ok(facts) => facts,
        Err(e) => {
            if let Some(r) = &rocr {
                render::agents::rocr_text(r, out)?;
            }
            return no_kfd(&e);
        }
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    if json {
        #[derive(serde::Serialize)]
        struct WithRocr<'a> {
            #[serde(flatten)]
            inventory: &'a Inventory,
            #[serde(skip_serializing_if = "Option::is_none")]
            rocr: Option<&'a rocm_probe::active::RocrResult>,
        }
        let body = WithRocr {
            inventory: &inventory,
            rocr: rocr.as_ref(),
        };
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &body))?;
        writeln!(out)?;
    } else {
        render::agents::text(&inventory, out)?;
        if let Some(r) = &rocr {
            render::agents::rocr_text(r, out)?;
        }
    }
    let code = inventory.exit_code();
    if code != OK {
        eprintln!("rocm-probe: no GPU node in the KFD topology ({TOPOLOGY_DIR})");
    }
    Ok(code)
}

fn ps(source: &Source, json: bool, out: &mut dyn Write) -> Result<u8> {
    let topology = match rocm_probe::Topology::collect(source.root()) {
        Ok(t) => t,
        Err(e) => return no_kfd(&e),
    };
    let ps = rocm_probe::process::Processes::collect_for(source, &topology).unwrap_or_default();
    for p in &ps.problems {
        eprintln!("rocm-probe: warning: {p}");
    }
    if json {
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &ps))?;
        writeln!(out)?;
    } else {
        render::ps::text(&ps, out)?;
    }
    Ok(OK)
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

fn inspect(
    source: &Source,
    files: &[std::path::PathBuf],
    targets: &[String],
    json: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    use rocm_probe::codeobject::{self, Gpu, InspectReport};
    let (gpus, no_gpus) = if targets.is_empty() {
        match AgentFacts::collect_targets(source, true) {
            Ok(facts) => {
                let inventory = Inventory::from_facts(&facts);
                warn_problems(&inventory);
                let gpus = Gpu::from_inventory(&inventory);
                let why = gpus
                    .is_empty()
                    .then(|| format!("no GPU node in the KFD topology ({TOPOLOGY_DIR})"));
                (gpus, why)
            }
            Err(e) => (Vec::new(), Some(format!("no KFD: {e}"))),
        }
    } else {
        let gpus = targets
            .iter()
            .map(|t| Gpu::from_target_id(t))
            .collect::<Result<Vec<_>, _>>()?;
        (gpus, None)
    };
    let inspections = files
        .iter()
        .map(codeobject::inspect)
        .collect::<Result<Vec<_>, _>>()?;
    let report = InspectReport::new(inspections, gpus, no_gpus);
    if json {
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &report))?;
        writeln!(out)?;
    } else {
        render::inspect::text(&report, out)?;
    }
    if let Some(why) = &report.no_gpus {
        eprintln!("rocm-probe: {why}: no verdicts (--target gives them for a target ID)");
    }
    Ok(report.exit_code())
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
