//! `fleet`: the view of many nodes' reports as text (80 columns unless the terminal is wider)
//! and as one self-contained HTML page in the report page's style (`render/html.rs`: its
//! stylesheet, escaping and badges). Every value comes from documents of other machines and is
//! escaped for its medium.

use std::fmt::{self, Write as _};
use std::io::{self, Write};

use rocm_probe::export::fleet::{Fleet, Reason, Refused, SCHEMA_VERSIONS, hostlist};
use rocm_probe::finding::Status;
use rocm_probe::i18n::{self, Lang};
use rocm_probe::msg;
use rocm_probe::source::escape;

use super::html::{Esc, STYLE, badge, status_id, word};
use super::{columns, fit, hang, pad};

/// Text lists stop after this many entries (node ranges, outliers, GPUs, refusals); JSON and
/// HTML have them all.
const TEXT_LIMIT: usize = 24;

/// Why a document was not read, in the current language.
pub fn reason(r: &Reason) -> String {
    match r {
        Reason::Unreadable { error } => msg!("fleet.reason-unreadable", error),
        Reason::TooLarge { cap_mib } => msg!("fleet.reason-too-large", cap = cap_mib),
        Reason::NotUtf8 => msg!("fleet.reason-not-utf8"),
        Reason::NotJson { line, column } => msg!("fleet.reason-not-json", line, column),
        Reason::NotADocument { lines } => msg!("fleet.reason-not-a-document", lines),
        Reason::Malformed { line, column } => msg!("fleet.reason-malformed", line, column),
        Reason::Foreign { tool } => msg!(
            "fleet.reason-foreign",
            tool = tool
                .as_deref()
                .map_or_else(|| "-".to_owned(), str::to_owned)
        ),
        Reason::NoSchemaVersion => msg!("fleet.reason-no-schema-version"),
        Reason::UnsupportedSchema { version } => msg!(
            "fleet.reason-unsupported-schema",
            version,
            supported = i18n::list(SCHEMA_VERSIONS)
        ),
        Reason::NotAReport => msg!("fleet.reason-not-a-report"),
        Reason::Truncated => msg!("fleet.reason-truncated"),
    }
}

/// A refusal on one line (unescaped: the caller escapes for its medium).
pub fn refusal(r: &Refused) -> String {
    let place = match r.origin.line {
        Some(line) => format!("{}:{line}", r.origin.input),
        None => r.origin.input.clone(),
    };
    let why = reason(&r.reason);
    match &r.node {
        Some(node) => msg!("fleet.refused-node", where = place, node, why),
        None => msg!("fleet.refused-line", where = place, why),
    }
}

/// Node names as host lists, escaped, joined, at most [`TEXT_LIMIT`] entries.
fn names(list: &[String]) -> String {
    let all = hostlist(list);
    let mut shown: Vec<String> = all
        .iter()
        .take(TEXT_LIMIT)
        .map(|n| escape::text(n))
        .collect();
    if all.len() > TEXT_LIMIT {
        shown.push(msg!("fleet.more", count = all.len() - TEXT_LIMIT));
    }
    shown.join(", ")
}

fn value(v: Option<&str>) -> String {
    v.map_or_else(|| msg!("fleet.absent"), escape::text)
}

/// Writes the text view.
pub fn text(f: &Fleet, width: usize, out: &mut dyn Write) -> io::Result<()> {
    let mut lines: Vec<String> = Vec::new();
    let section = |lines: &mut Vec<String>, title: String| {
        lines.push(String::new());
        lines.push(fit(&title, width));
    };
    lines.push(fit(
        &msg!(
            "fleet.heading",
            nodes = f.nodes.len(),
            refused = f.refused.len()
        ),
        width,
    ));

    section(&mut lines, msg!("fleet.verdicts"));
    for g in &f.verdicts {
        let first = format!("  {} {:>6}  ", pad(word(g.status), 5), g.nodes.len());
        let rest = " ".repeat(columns(&first));
        lines.push(hang(&names(&g.nodes), width, &first, &rest));
    }

    section(&mut lines, msg!("fleet.findings"));
    if f.findings.is_empty() {
        lines.push(fit(&format!("  {}", msg!("fleet.no-findings")), width));
    }
    for g in &f.findings {
        let first = format!(
            "  {} {:>6}  {}",
            pad(word(g.status), 5),
            g.nodes.len(),
            escape::text(&g.id)
        );
        lines.push(fit(&first, width));
        let indent = " ".repeat(16);
        lines.push(hang(&names(&g.nodes), width, &indent, &indent));
    }

    section(&mut lines, msg!("fleet.configurations"));
    for g in &f.configurations {
        let mark = if g.majority {
            format!("  ({})", msg!("fleet.majority-mark"))
        } else {
            String::new()
        };
        lines.push(fit(
            &format!(
                "  {} {:>6}{mark}",
                value(g.fingerprint.as_deref()),
                g.nodes.len()
            ),
            width,
        ));
        let mut what = value(g.gpus.as_deref());
        if let Some(rocm) = &g.rocm {
            what.push_str(&format!(" · ROCm {}", escape::text(rocm)));
        }
        lines.push(hang(&what, width, "      ", "      "));
        lines.push(hang(&names(&g.nodes), width, "      ", "      "));
    }

    if let Some(m) = &f.majority {
        let total = f
            .configurations
            .iter()
            .map(|g| g.nodes.len())
            .sum::<usize>();
        section(
            &mut lines,
            msg!(
                "fleet.majority",
                fingerprint = value(m.fingerprint.as_deref()),
                nodes = m.nodes,
                total
            ),
        );
        let key_width = m
            .aspects
            .iter()
            .map(|a| columns(&a.key))
            .max()
            .unwrap_or(0)
            .min(28);
        for a in &m.aspects {
            let first = format!("  {}  ", pad(&escape::text(&a.key), key_width));
            let rest = " ".repeat(key_width + 4);
            lines.push(hang(&escape::text(&a.value), width, &first, &rest));
        }

        section(&mut lines, msg!("fleet.outliers"));
        if f.outliers.is_empty() {
            lines.push(fit(&format!("  {}", msg!("fleet.no-outliers")), width));
        }
        for o in f.outliers.iter().take(TEXT_LIMIT) {
            lines.push(fit(&format!("  {}", escape::text(&o.node)), width));
            let key_width = o
                .differences
                .iter()
                .map(|d| columns(&d.key))
                .max()
                .unwrap_or(0)
                .min(26);
            for d in &o.differences {
                let first = format!("    {}  ", pad(&escape::text(&d.key), key_width));
                let rest = " ".repeat(key_width + 6);
                let text = msg!(
                    "fleet.differs",
                    value = value(d.node.as_deref()),
                    majority = value(d.majority.as_deref())
                );
                lines.push(hang(&text, width, &first, &rest));
            }
        }
        if f.outliers.len() > TEXT_LIMIT {
            let more = msg!("fleet.more", count = f.outliers.len() - TEXT_LIMIT);
            lines.push(fit(&format!("  {more}"), width));
        }
    }

    section(&mut lines, msg!("fleet.gpu-failures"));
    if f.gpu_failures.is_empty() {
        lines.push(fit(&format!("  {}", msg!("fleet.no-gpu-failures")), width));
    }
    for g in f.gpu_failures.iter().take(TEXT_LIMIT) {
        let gpu = msg!(
            "fleet.gpu",
            index = g.index.map_or_else(|| "?".to_owned(), |i| i.to_string()),
            pci = value(g.pci_address.as_deref())
        );
        let first = format!("  {}  {gpu}  ", escape::text(&g.node));
        let ids: Vec<String> = g.findings.iter().map(|i| escape::text(i)).collect();
        lines.push(hang(&ids.join(", "), width, &first, "      "));
    }
    if f.gpu_failures.len() > TEXT_LIMIT {
        let more = msg!("fleet.more", count = f.gpu_failures.len() - TEXT_LIMIT);
        lines.push(fit(&format!("  {more}"), width));
    }

    if !f.refused.is_empty() {
        section(&mut lines, msg!("fleet.refused"));
        for r in f.refused.iter().take(TEXT_LIMIT) {
            lines.push(hang(&escape::text(&refusal(r)), width, "  ", "      "));
        }
        if f.refused.len() > TEXT_LIMIT {
            let more = msg!("fleet.more", count = f.refused.len() - TEXT_LIMIT);
            lines.push(fit(&format!("  {more}"), width));
        }
    }
    for line in lines {
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Writes the HTML page.
pub fn html(f: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let mut page = String::with_capacity(64 * 1024);
    write_page(f, &mut page).map_err(io::Error::other)?;
    out.write_all(page.as_bytes())
}

fn node_cell(list: &[String]) -> String {
    hostlist(list)
        .iter()
        .map(|n| Esc(n).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_page(f: &Fleet, s: &mut String) -> fmt::Result {
    let failed = f.nodes.iter().filter(|n| n.status == Status::Fail).count();
    let worst = f.verdicts.first().map_or(Status::Skip, |g| g.status);
    let lang = match i18n::current() {
        Lang::En => "en",
        Lang::Zh => "zh-Hans",
    };
    writeln!(s, "<!DOCTYPE html>")?;
    writeln!(s, r#"<html lang="{lang}">"#)?;
    writeln!(s, "<head>")?;
    writeln!(s, r#"<meta charset="utf-8">"#)?;
    writeln!(
        s,
        r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#
    )?;
    writeln!(
        s,
        r#"<meta name="generator" content="rocm-probe {}">"#,
        env!("CARGO_PKG_VERSION")
    )?;
    let title = msg!("fleet.html-title", nodes = f.nodes.len(), failed);
    writeln!(s, "<title>{}</title>", Esc(&title))?;
    writeln!(s, "<style>{STYLE}</style>")?;
    writeln!(s, "</head>")?;
    writeln!(s, "<body>")?;
    writeln!(s, "<main>")?;

    writeln!(
        s,
        r#"<header class="verdict" id="verdict" data-status="{}">"#,
        status_id(worst)
    )?;
    write!(s, "<h1>")?;
    badge(s, worst)?;
    writeln!(s, " {}</h1>", Esc(&title))?;
    writeln!(
        s,
        "<p>{}</p>",
        Esc(&msg!(
            "fleet.heading",
            nodes = f.nodes.len(),
            refused = f.refused.len()
        ))
    )?;
    writeln!(s, "</header>")?;

    // Nodes by verdict.
    writeln!(s, r#"<section id="verdicts">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.verdicts")))?;
    table_head(
        s,
        &[
            msg!("fleet.html-verdict"),
            msg!("fleet.html-count"),
            msg!("fleet.html-nodes"),
        ],
    )?;
    for g in &f.verdicts {
        write!(s, r#"<tr data-status="{}"><td>"#, status_id(g.status))?;
        badge(s, g.status)?;
        writeln!(
            s,
            "</td><td>{}</td><td>{}</td></tr>",
            g.nodes.len(),
            node_cell(&g.nodes)
        )?;
    }
    writeln!(s, "</table>")?;
    writeln!(s, "</section>")?;

    // Findings.
    writeln!(s, r#"<section id="findings">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.findings")))?;
    if f.findings.is_empty() {
        writeln!(
            s,
            r#"<p class="note">{}</p>"#,
            Esc(&msg!("fleet.no-findings"))
        )?;
    } else {
        table_head(
            s,
            &[
                msg!("fleet.html-verdict"),
                msg!("fleet.html-finding"),
                msg!("fleet.html-count"),
                msg!("fleet.html-nodes"),
            ],
        )?;
        for g in &f.findings {
            write!(s, r#"<tr data-status="{}"><td>"#, status_id(g.status))?;
            badge(s, g.status)?;
            writeln!(
                s,
                "</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                Esc(&g.id),
                g.nodes.len(),
                node_cell(&g.nodes)
            )?;
        }
        writeln!(s, "</table>")?;
    }
    writeln!(s, "</section>")?;

    // Configurations, the majority's, and the nodes that differ.
    writeln!(s, r#"<section id="configurations">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.configurations")))?;
    table_head(
        s,
        &[
            msg!("fleet.html-fingerprint"),
            msg!("fleet.html-count"),
            msg!("fleet.html-gpus"),
            "ROCm".to_owned(),
            msg!("fleet.html-nodes"),
        ],
    )?;
    for g in &f.configurations {
        let mark = if g.majority {
            format!(" ({})", Esc(&msg!("fleet.majority-mark")))
        } else {
            String::new()
        };
        writeln!(
            s,
            r#"<tr data-majority="{}"><td class="mono">{}{mark}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            g.majority,
            Esc(&value_html(g.fingerprint.as_deref())),
            g.nodes.len(),
            Esc(&value_html(g.gpus.as_deref())),
            Esc(&value_html(g.rocm.as_deref())),
            node_cell(&g.nodes)
        )?;
    }
    writeln!(s, "</table>")?;
    if let Some(m) = &f.majority {
        let total: usize = f.configurations.iter().map(|g| g.nodes.len()).sum();
        writeln!(
            s,
            "<h2>{}</h2>",
            Esc(&msg!(
                "fleet.majority",
                fingerprint = value_html(m.fingerprint.as_deref()),
                nodes = m.nodes,
                total
            ))
        )?;
        table_head(s, &[msg!("fleet.html-aspect"), msg!("fleet.html-value")])?;
        for a in &m.aspects {
            writeln!(
                s,
                "<tr><td><code>{}</code></td><td>{}</td></tr>",
                Esc(&a.key),
                Esc(&a.value)
            )?;
        }
        writeln!(s, "</table>")?;
        writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.outliers")))?;
        if f.outliers.is_empty() {
            writeln!(
                s,
                r#"<p class="note">{}</p>"#,
                Esc(&msg!("fleet.no-outliers"))
            )?;
        } else {
            table_head(
                s,
                &[
                    msg!("fleet.html-node"),
                    msg!("fleet.html-aspect"),
                    msg!("fleet.html-value"),
                    msg!("fleet.html-majority-value"),
                ],
            )?;
            for o in &f.outliers {
                for (k, d) in o.differences.iter().enumerate() {
                    let node = if k == 0 {
                        Esc(&o.node).to_string()
                    } else {
                        String::new()
                    };
                    writeln!(
                        s,
                        r#"<tr class="outlier"><td>{node}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>"#,
                        Esc(&d.key),
                        Esc(&value_html(d.node.as_deref())),
                        Esc(&value_html(d.majority.as_deref()))
                    )?;
                }
            }
            writeln!(s, "</table>")?;
        }
    }
    writeln!(s, "</section>")?;

    // GPUs with a failure.
    writeln!(s, r#"<section id="gpu-failures">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.gpu-failures")))?;
    if f.gpu_failures.is_empty() {
        writeln!(
            s,
            r#"<p class="note">{}</p>"#,
            Esc(&msg!("fleet.no-gpu-failures"))
        )?;
    } else {
        table_head(
            s,
            &[
                msg!("fleet.html-node"),
                msg!("fleet.html-gpu"),
                msg!("fleet.html-finding"),
            ],
        )?;
        for g in &f.gpu_failures {
            let gpu = msg!(
                "fleet.gpu",
                index = g.index.map_or_else(|| "?".to_owned(), |i| i.to_string()),
                pci = value_html(g.pci_address.as_deref())
            );
            let ids: Vec<String> = g
                .findings
                .iter()
                .map(|i| format!("<code>{}</code>", Esc(i)))
                .collect();
            writeln!(
                s,
                r#"<tr data-status="fail"><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                Esc(&g.node),
                Esc(&gpu),
                ids.join(", ")
            )?;
        }
        writeln!(s, "</table>")?;
    }
    writeln!(s, "</section>")?;

    if !f.refused.is_empty() {
        writeln!(s, r#"<section id="refused">"#)?;
        writeln!(s, "<h2>{}</h2>", Esc(&msg!("fleet.refused")))?;
        table_head(
            s,
            &[
                msg!("fleet.html-input"),
                msg!("fleet.html-node"),
                msg!("fleet.html-why"),
            ],
        )?;
        for r in &f.refused {
            let place = match r.origin.line {
                Some(line) => format!("{}:{line}", r.origin.input),
                None => r.origin.input.clone(),
            };
            writeln!(
                s,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                Esc(&place),
                Esc(r.node.as_deref().unwrap_or("")),
                Esc(&reason(&r.reason))
            )?;
        }
        writeln!(s, "</table>")?;
        writeln!(s, "</section>")?;
    }

    writeln!(
        s,
        "<footer>{}</footer>",
        Esc(&msg!(
            "fleet.html-footer",
            version = env!("CARGO_PKG_VERSION"),
            nodes = f.nodes.len()
        ))
    )?;
    writeln!(s, "</main>")?;
    writeln!(s, "</body>")?;
    writeln!(s, "</html>")
}

fn value_html(v: Option<&str>) -> String {
    v.map_or_else(|| msg!("fleet.absent"), str::to_owned)
}

fn table_head(s: &mut String, columns: &[String]) -> fmt::Result {
    write!(s, "<table><tr>")?;
    for c in columns {
        write!(s, "<th>{}</th>", Esc(c))?;
    }
    writeln!(s, "</tr>")
}
