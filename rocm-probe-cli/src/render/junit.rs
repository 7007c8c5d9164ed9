//! `report --format junit`: one test suite per layer, one test case per declared check (rule).
//! A rule with a failing finding fails; a skipped one, or a layer not checked because a lower
//! one failed, is skipped; everything else passes. Warnings pass with their text in
//! `system-out`, as JUnit has no warning state.

use std::io::{self, Write};

use rocm_probe::Report;
use rocm_probe::finding::{Finding, Status, rule_title, rules};
use rocm_probe::i18n::Lang;
use rocm_probe::source::escape::xml as esc;

/// Writes the JUnit XML document.
pub fn junit(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    let failures = rules()
        .iter()
        .filter(|r| worst(report, r.id) == Some(Status::Fail))
        .count();
    writeln!(
        out,
        r#"<testsuites name="rocm-probe" tests="{}" failures="{failures}">"#,
        rules().len()
    )?;
    for layer in &report.layers {
        let rules: Vec<_> = rules().iter().filter(|r| r.layer == layer.layer).collect();
        let fails = rules
            .iter()
            .filter(|r| worst(report, r.id) == Some(Status::Fail))
            .count();
        let skips = rules
            .iter()
            .filter(|r| skipped(report, layer.consequence_of, r.id).is_some())
            .count();
        writeln!(
            out,
            r#"  <testsuite name="{}. {}" tests="{}" failures="{fails}" skipped="{skips}">"#,
            layer.number,
            esc(layer.layer.id()),
            rules.len()
        )?;
        for rule in rules {
            let findings: Vec<&Finding> =
                report.findings.iter().filter(|f| f.id == rule.id).collect();
            write!(
                out,
                r#"    <testcase classname="{}" name="{}""#,
                esc(layer.layer.id()),
                esc(rule.id)
            )?;
            let text = details(&findings);
            if worst(report, rule.id) == Some(Status::Fail) {
                let summary = findings
                    .iter()
                    .find(|f| f.status == Status::Fail)
                    .map(|f| f.summary.as_str());
                writeln!(out, ">")?;
                writeln!(
                    out,
                    r#"      <failure message="{}">{}</failure>"#,
                    esc(summary.unwrap_or(rule_title(rule, Lang::En))),
                    text
                )?;
                writeln!(out, "    </testcase>")?;
            } else if let Some(why) = skipped(report, layer.consequence_of, rule.id) {
                writeln!(out, ">")?;
                writeln!(out, r#"      <skipped message="{}"/>"#, esc(&why))?;
                writeln!(out, "    </testcase>")?;
            } else if !findings.is_empty() {
                writeln!(out, ">")?;
                writeln!(out, "      <system-out>{text}</system-out>")?;
                writeln!(out, "    </testcase>")?;
            } else {
                writeln!(out, "/>")?;
            }
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

fn worst(report: &Report, id: &str) -> Option<Status> {
    report
        .findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.status)
        .max()
}

/// Why a rule counts as skipped, if it does.
fn skipped(report: &Report, blocked: Option<&str>, id: &str) -> Option<String> {
    match worst(report, id) {
        Some(Status::Skip) => Some(
            report
                .findings
                .iter()
                .find(|f| f.id == id)
                .map_or_else(String::new, |f| f.summary.clone()),
        ),
        None => blocked
            .map(|b| format!("not checked: follows from {b}"))
            .or_else(|| {
                // A check that reports only success did not apply (no GPU to report on).
                rocm_probe::finding::rule(id)
                    .filter(|r| r.status <= Status::Info)
                    .map(|_| "did not apply".to_owned())
            }),
        _ => None,
    }
}

/// The findings as lines of XML text: each value escaped on its own, so that the line breaks
/// between them stay line breaks.
fn details(findings: &[&Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        s.push_str(&format!("{}: {}\n", f.status.word(), esc(&f.summary)));
        for e in &f.evidence {
            s.push_str(&format!(
                "  {}: {}\n",
                esc(&e.source),
                esc(e.value.as_deref().unwrap_or("(absent)"))
            ));
        }
        if let Some(r) = &f.remedy {
            s.push_str(&format!("  remedy: {}\n", esc(r)));
        }
    }
    s
}
