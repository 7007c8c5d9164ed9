//! `report` as text: the verdict in one line, then layers 1–9 bottom-up with their findings;
//! evidence and remedy under every finding that is not a pass (all of them with -v).

use std::io::{self, Write};

use rocm_probe::finding::{Finding, Status};
use rocm_probe::source::SourceKind;
use rocm_probe::{Report, Source};

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// ANSI colour on status words.
    pub color: bool,
    /// Evidence for passing findings too.
    pub verbose: bool,
    /// Only this layer.
    pub layer: Option<u8>,
}

impl Style {
    fn status(&self, s: Status) -> String {
        let word = format!("{:<4}", s.word());
        if !self.color {
            return word;
        }
        let code = match s {
            Status::Fail => "1;31",
            Status::Warn => "1;33",
            Status::Pass => "32",
            Status::Info => "36",
            Status::Skip => "2",
        };
        format!("\x1b[{code}m{word}\x1b[0m")
    }
}

/// Renders the whole report.
pub fn text(report: &Report, source: &Source, style: Style, out: &mut dyn Write) -> io::Result<()> {
    let v = &report.verdict;
    let first = match v.root_cause {
        None => format!(
            "{}: {} ({} physical GPU(s), {} GPU agent(s))",
            style.status(v.status).trim_end(),
            v.summary,
            report.facts.gpus,
            report.facts.agents
        ),
        Some(id) => {
            let layer = &report.layers[usize::from(v.root_layer) - 1];
            let blocks = report.layers.iter().any(|l| l.consequence_of == Some(id));
            let above = if blocks && v.root_layer < 9 {
                format!("; layers {}–9 follow from it", v.root_layer + 1)
            } else {
                String::new()
            };
            format!(
                "{}: {} — root cause in layer {} ({}): {id}{above}",
                style.status(v.status).trim_end(),
                v.summary,
                v.root_layer,
                layer.layer
            )
        }
    };
    writeln!(out, "{first}")?;
    let from = match source.kind() {
        SourceKind::Live => "this machine".to_owned(),
        SourceKind::Fixture { root } => format!("fixture {}", root.display()),
    };
    writeln!(out, "source: {from}; profile: {}", report.profile.id())?;
    for layer in &report.layers {
        if style.layer.is_some_and(|n| n != layer.number) {
            continue;
        }
        writeln!(out)?;
        let tail = match (&layer.note, layer.consequence_of) {
            (Some(note), _) => format!("  {note}"),
            (None, Some(id)) => format!("  (cannot work until {id} is fixed)"),
            (None, None) => String::new(),
        };
        writeln!(
            out,
            "Layer {} {:<10} {}{tail}",
            layer.number,
            layer.layer.to_string(),
            style.status(layer.status)
        )?;
        for f in report.findings.iter().filter(|f| f.layer == layer.layer) {
            finding(f, style, out)?;
        }
    }
    Ok(())
}

fn finding(f: &Finding, style: Style, out: &mut dyn Write) -> io::Result<()> {
    let caused = f
        .caused_by
        .map(|c| format!(" [caused by {c}]"))
        .unwrap_or_default();
    writeln!(
        out,
        "  {} {}: {}{caused}",
        style.status(f.status),
        f.id,
        f.summary
    )?;
    let detailed = style.verbose || !matches!(f.status, Status::Pass | Status::Info);
    if !detailed {
        return Ok(());
    }
    for e in &f.evidence {
        writeln!(
            out,
            "         {}: {}",
            e.source,
            e.value.as_deref().unwrap_or("(absent)")
        )?;
    }
    if let Some(r) = &f.remedy {
        // The remedy is indented by 17 columns; the rest of the line is the terminal's.
        let wrapped = super::wrap(r, super::width().saturating_sub(17).max(40))
            .replace('\n', "\n                 ");
        writeln!(out, "         remedy: {wrapped}")?;
    }
    Ok(())
}
