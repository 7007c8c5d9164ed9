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
        use anstyle::{AnsiColor, Style};
        let style = match s {
            Status::Fail => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            Status::Warn => Style::new().bold().fg_color(Some(AnsiColor::Yellow.into())),
            Status::Pass => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Status::Info => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            Status::Skip => Style::new().dimmed(),
        };
        format!("{}{word}{}", style.render(), style.render_reset())
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
            gpus = report.facts.gpu_count,
            agents = report.facts.agent_count
        ),
        Some(id) => {
            let layer = &report.layers[usize::from(v.root_layer) - 1];
            let blocks = report.layers.iter().any(|l| l.consequence_of == Some(id));
            let mut above = if blocks && v.root_layer < 9 {
                msg!("cli.verdict-above", from = v.root_layer + 1)
            } else {
                String::new()
            };
            let separate = report.separate_problems();
            if separate > 0 {
                above.push_str(&msg!("cli.verdict-separate", count = separate));
            }
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
    let width = super::width();
    writeln!(out, "{}", wrap_styled(&first, width, "", "  "))?;
    let from = match source.kind() {
        SourceKind::Live => msg!("cli.source-live"),
        SourceKind::Fixture { root } => msg!(
            "cli.source-fixture",
            path = escape::text(&root.display().to_string())
        ),
    };
    let line = msg!(
        "cli.source-line",
        source = from,
        profile = profile_name(report.profile)
    );
    writeln!(out, "{}", super::hang(&line, width, "", "  "))?;
    for layer in &report.layers {
        if style.layer.is_some_and(|n| n != layer.number) {
            continue;
        }
        writeln!(out)?;
        let tail = match (&layer.note, layer.consequence_of) {
            (Some(note), _) => format!("  {note}"),
            // A layer whose own checks pass is not broken, only of no use yet.
            (None, Some(id)) if matches!(layer.status, Status::Pass | Status::Info) => {
                format!("  {}", msg!("cli.layer-blocked-passed", id))
            }
            (None, Some(id)) => format!("  {}", msg!("cli.layer-blocked", id)),
            (None, None) => String::new(),
        };
        let heading = msg!(
            "cli.layer-heading",
            n = layer.number,
            name = super::pad(&layer_name(layer.layer), 10),
            status = style.status(layer.status),
            tail
        );
        writeln!(out, "{}", wrap_styled(&heading, width, "", &" ".repeat(4)))?;
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
    let width = super::width();
    let line = format!(
        "  {} {}: {}{caused}",
        style.status(f.status),
        f.id,
        escape::text(&f.summary)
    );
    writeln!(out, "{}", wrap_styled(&line, width, "", &" ".repeat(7)))?;
    let detailed = style.verbose || !matches!(f.status, Status::Pass | Status::Info);
    if !detailed {
        return Ok(());
    }
    for e in &f.evidence {
        let line = format!(
            "{}: {}",
            escape::text(&e.source),
            e.value
                .as_deref()
                .map_or_else(|| msg!("cli.absent"), escape::text)
        );
        writeln!(
            out,
            "{}",
            super::hang(&line, width, &" ".repeat(9), &" ".repeat(11))
        )?;
    }
    if let (Some(_), Some(cause)) = (&f.remedy, cause) {
        let line = msg!(
            "cli.remedy",
            remedy = msg!("cli.remedy-see-cause", id = cause)
        );
        writeln!(
            out,
            "{}",
            super::hang(&line, width, &" ".repeat(9), &" ".repeat(11))
        )?;
    } else if let Some(r) = &f.remedy {
        // The remedy is indented by 17 columns; the rest of the line is the terminal's.
        let label = msg!("cli.remedy", remedy = "");
        let indent = 9 + super::columns(&label);
        let wrapped = super::hang(
            &escape::text(r),
            width,
            &format!("         {label}"),
            &" ".repeat(indent),
        );
        writeln!(out, "{wrapped}")?;
        // Each command on a line of its own, unwrapped, so that it copies as it is.
        // A family's variants under its label, indented one step more.
        for line in super::command_lines(&f.remedy_steps) {
            match line {
                super::CommandLine::Label(distro) => writeln!(
                    out,
                    "{}",
                    super::hang(
                        &msg!("cli.distro-label", distro = super::distro_name(distro)),
                        width,
                        &" ".repeat(indent + 2),
                        &" ".repeat(indent + 4),
                    )
                )?,
                super::CommandLine::Command { command, variant } => {
                    let at = " ".repeat(indent + 2 + if variant { 2 } else { 0 });
                    writeln!(
                        out,
                        "{}",
                        super::command(&escape::text(command), &at, width)
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// [`super::hang`] for a line that may carry a status word's colour: the escape sequences take
/// no columns, so the line is wrapped as if they were not there and they are put back around
/// the status word (always in the first line's first words).
fn wrap_styled(line: &str, width: usize, first: &str, rest: &str) -> String {
    let Some(start) = line.find('\x1b') else {
        return super::hang(line, width, first, rest);
    };
    let Some(end) = line[start..].find('m').map(|e| start + e + 1) else {
        return super::hang(line, width, first, rest);
    };
    let open = &line[start..end];
    let Some(close_at) = line[end..].find('\x1b').map(|c| end + c) else {
        return super::hang(line, width, first, rest);
    };
    let close_end = line[close_at..]
        .find('m')
        .map_or(line.len(), |e| close_at + e + 1);
    let close = &line[close_at..close_end];
    let word = &line[end..close_at];
    let plain = format!("{}{word}{}", &line[..start], &line[close_end..]);
    let wrapped = super::hang(&plain, width, first, rest);
    // The word is where it was: after the same prefix, in the first line.
    let at = first.len() + start;
    match wrapped.get(at..at + word.len()) {
        Some(w) if w == word => format!(
            "{}{open}{word}{close}{}",
            &wrapped[..at],
            &wrapped[at + word.len()..]
        ),
        _ => wrapped,
    }
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
