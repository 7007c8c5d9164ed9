//! `report` as text: the verdict in one line, then layers 1–9 bottom-up with their findings;
//! evidence and remedy under every finding that is not a pass (all of them with -v).

use std::io::{self, Write};

use rocm_probe::facts::config::Profile;
use rocm_probe::finding::{Finding, Layer, Status};
use rocm_probe::i18n;
use rocm_probe::source::SourceKind;
use rocm_probe::source::escape;
use rocm_probe::{Report, Source, msg};

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
        let word = super::pad(rocm_probe::finding::status_word(s, i18n::current()), 4);
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
        None => msg!(
            "cli.verdict-healthy",
            status = style.status(v.status).trim_end(),
            summary = escape::text(&v.summary),
            gpus = report.facts.gpus,
            agents = report.facts.agents
        ),
        Some(id) => {
            let layer = &report.layers[usize::from(v.root_layer) - 1];
            let blocks = report.layers.iter().any(|l| l.consequence_of == Some(id));
            let above = if blocks && v.root_layer < 9 {
                msg!("cli.verdict-above", from = v.root_layer + 1)
            } else {
                String::new()
            };
            msg!(
                "cli.verdict-root",
                status = style.status(v.status).trim_end(),
                summary = escape::text(&v.summary),
                layer = v.root_layer,
                name = layer_name(layer.layer),
                id,
                above
            )
        }
    };
    writeln!(out, "{first}")?;
    let from = match source.kind() {
        SourceKind::Live => msg!("cli.source-live"),
        SourceKind::Fixture { root } => msg!(
            "cli.source-fixture",
            path = escape::text(&root.display().to_string())
        ),
    };
    writeln!(
        out,
        "{}",
        msg!(
            "cli.source-line",
            source = from,
            profile = profile_name(report.profile)
        )
    )?;
    for layer in &report.layers {
        if style.layer.is_some_and(|n| n != layer.number) {
            continue;
        }
        writeln!(out)?;
        let tail = match (&layer.note, layer.consequence_of) {
            (Some(note), _) => format!("  {note}"),
            (None, Some(id)) => format!("  {}", msg!("cli.layer-blocked", id)),
            (None, None) => String::new(),
        };
        writeln!(
            out,
            "{}",
            msg!(
                "cli.layer-heading",
                n = layer.number,
                name = super::pad(&layer_name(layer.layer), 10),
                status = style.status(layer.status),
                tail
            )
        )?;
        for f in report.findings.iter().filter(|f| f.layer == layer.layer) {
            // A consequence whose cause gives a remedy points there instead of giving its own.
            finding(f, report.remedy_cause(f), style, out)?;
        }
    }
    Ok(())
}

fn finding(f: &Finding, cause: Option<&str>, style: Style, out: &mut dyn Write) -> io::Result<()> {
    let caused = f
        .caused_by
        .map(|id| msg!("cli.caused-by", id))
        .unwrap_or_default();
    writeln!(
        out,
        "  {} {}: {}{caused}",
        style.status(f.status),
        f.id,
        escape::text(&f.summary)
    )?;
    let detailed = style.verbose || !matches!(f.status, Status::Pass | Status::Info);
    if !detailed {
        return Ok(());
    }
    for e in &f.evidence {
        writeln!(
            out,
            "         {}: {}",
            escape::text(&e.source),
            e.value
                .as_deref()
                .map_or_else(|| msg!("cli.absent"), escape::text)
        )?;
    }
    if let (Some(_), Some(cause)) = (&f.remedy, cause) {
        writeln!(
            out,
            "         {}",
            msg!(
                "cli.remedy",
                remedy = msg!("cli.remedy-see-cause", id = cause)
            )
        )?;
    } else if let Some(r) = &f.remedy {
        // The remedy is indented by 17 columns; the rest of the line is the terminal's.
        let label = msg!("cli.remedy", remedy = "");
        let indent = 9 + super::columns(&label);
        let wrapped = super::wrap(
            &escape::text(r),
            super::width().saturating_sub(indent).max(40),
        )
        .replace('\n', &format!("\n{}", " ".repeat(indent)));
        writeln!(out, "         {label}{wrapped}")?;
        // Each command on a line of its own, unwrapped, so that it copies as it is.
        // A family's variants under its label, indented one step more.
        for line in super::command_lines(&f.remedy_steps) {
            match line {
                super::CommandLine::Label(distro) => writeln!(
                    out,
                    "{}  {}",
                    " ".repeat(indent),
                    msg!("cli.distro-label", distro = super::distro_name(distro))
                )?,
                super::CommandLine::Command { command, variant } => writeln!(
                    out,
                    "{}  {}{}",
                    " ".repeat(indent),
                    if variant { "  " } else { "" },
                    escape::text(command)
                )?,
            }
        }
    }
    Ok(())
}

/// A layer as the report names it (see [`i18n::layer_name`]).
pub fn layer_name(layer: Layer) -> String {
    rocm_probe::finding::layer_name(layer).to_owned()
}

/// The profile's name in the current language (JSON keeps the id).
pub fn profile_name(profile: Profile) -> String {
    match profile {
        Profile::Desktop => msg!("cli.profile-desktop"),
        Profile::Workstation => msg!("cli.profile-workstation"),
        Profile::Cluster => msg!("cli.profile-cluster"),
    }
}
