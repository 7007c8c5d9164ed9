//! `report --format markdown`: a block to paste into a GitHub issue — the verdict and the layers
//! that warn or fail first, the whole text report in a collapsed `<details>`, everything
//! redacted like `snapshot` (user and host names, GPU UUIDs, unique ids and serial numbers).

use std::io::{self, Write};

use rocm_probe::export::redact::Redactor;
use rocm_probe::finding::Status;
use rocm_probe::i18n;
use rocm_probe::source::escape;
use rocm_probe::{Facts, Report, Source, msg};

use super::report::{Style, layer_name, text};

/// A table cell: its parts are escaped already ([`escape::markdown`]); the renderer's own line
/// breaks become spaces.
fn cell(s: &str) -> String {
    s.replace('\n', " ")
}

/// Writes the block.
pub fn markdown(
    report: &Report,
    _facts: &Facts,
    source: &Source,
    out: &mut dyn Write,
) -> io::Result<()> {
    let redact = Redactor::for_source(source);
    let redact_text = |t: &str| redact.text(t);
    let v = &report.verdict;
    let word = |s: Status| rocm_probe::finding::status_word(s, i18n::current());
    writeln!(out, "{}", msg!("cli.md-title"))?;
    writeln!(out)?;
    let verdict = match v.root_cause {
        Some(id) => msg!(
            "cli.md-verdict-root",
            status = word(v.status),
            summary = escape::markdown(&redact_text(&v.summary)),
            id,
            layer = v.root_layer
        ),
        None => msg!(
            "cli.md-verdict-healthy",
            status = word(Status::Pass),
            summary = escape::markdown(&redact_text(&v.summary))
        ),
    };
    writeln!(out, "{verdict}")?;
    writeln!(out)?;
    writeln!(out, "{}", msg!("cli.md-table-head"))?;
    writeln!(out, "|---|---|---|")?;
    for l in &report.layers {
        let bad: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.layer == l.layer && f.status >= Status::Warn)
            .map(|f| format!("`{}` {}", f.id, escape::markdown(&redact_text(&f.summary))))
            .collect();
        writeln!(
            out,
            "| {} {} | {} | {} |",
            l.number,
            layer_name(l.layer),
            word(l.status),
            cell(&bad.join("<br>"))
        )?;
    }
    let remedies: Vec<String> = report
        .advice()
        .filter_map(|f| {
            let r = f.remedy.as_ref()?;
            let mut item = format!("- `{}`: {}", f.id, escape::markdown(&redact_text(r)));
            // The commands in a code block of the list item, copyable as they are.
            // A family's variants under a shell comment naming it.
            let commands: Vec<String> = super::command_lines(&f.remedy_steps)
                .into_iter()
                .map(|line| match line {
                    super::CommandLine::Label(distro) => {
                        format!("# {}", super::distro_name(distro))
                    }
                    super::CommandLine::Command { command, .. } => command.to_owned(),
                })
                .collect();
            if !commands.is_empty() {
                let block = commands.join("\n");
                let fence = "`".repeat(3.max(longest_backtick_run(&block) + 1));
                item.push_str(&format!("\n\n  {fence}sh\n"));
                for c in &commands {
                    item.push_str(&format!("  {}\n", redact_text(c)));
                }
                item.push_str(&format!("  {fence}"));
            }
            Some(item)
        })
        .collect();
    if !remedies.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", msg!("cli.md-what-to-do"))?;
        writeln!(out)?;
        for r in remedies {
            writeln!(out, "{r}")?;
        }
    }
    let mut full = Vec::new();
    text(
        report,
        source,
        Style {
            color: false,
            verbose: true,
            layer: None,
        },
        &mut full,
    )?;
    let full = redact_text(&String::from_utf8_lossy(&full));
    writeln!(out)?;
    writeln!(out, "{}", msg!("cli.md-details"))?;
    writeln!(out)?;
    // A fence longer than any run of backticks inside.
    let fence = "`".repeat(3.max(longest_backtick_run(&full) + 1));
    writeln!(out, "{fence}text")?;
    write!(out, "{full}")?;
    if !full.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{fence}")?;
    writeln!(out)?;
    writeln!(out, "</details>")?;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!(
            "cli.md-footer",
            version = env!("CARGO_PKG_VERSION"),
            fingerprint = report.facts.config.fingerprint
        )
    )
}

fn longest_backtick_run(s: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}
