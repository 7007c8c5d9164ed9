//! `report --format html`: one self-contained, static page — no script, no stylesheet, font or
//! image from anywhere else — with the verdict, the nine layers with their findings (evidence
//! in `<details>`, remedies), a card per physical GPU, and an SVG picture of the topology
//! (`html/topology.rs`). Every text from the machine is escaped. The page's own words come from
//! the message catalogue (`messages/html.toml`) in the thread's language, which `<html lang>`
//! names; classes, ids and `data-*` hooks are the same in every language.

mod topology;

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io::{self, Write};

use rocm_probe::facts::agent::{DeviceType, Inventory, PhysicalGpu};
use rocm_probe::finding::{Finding, Status};
use rocm_probe::i18n::{self, Lang};
use rocm_probe::source::SourceKind;
use rocm_probe::{Facts, Report, Source, msg};

use super::report::{layer_name, profile_name};

use topology::Links;

/// Writes the page.
pub fn html(
    report: &Report,
    facts: &Facts,
    source: &Source,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut page = String::with_capacity(64 * 1024);
    write_page(report, facts, source, &mut page).map_err(io::Error::other)?;
    // Made to be shared: redacted like `--format markdown` and `snapshot`.
    let page = rocm_probe::export::redact::Redactor::for_source(source).html(&page);
    out.write_all(page.as_bytes())
}

/// HTML-escapes text (element content and quoted attribute values alike).
#[derive(Debug, Clone, Copy)]
pub(super) struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&rocm_probe::source::escape::html(self.0))
    }
}

/// Escaped text with each `quoted` span set as code (only when the backticks pair up).
#[derive(Debug, Clone, Copy)]
struct Prose<'a>(&'a str);

impl fmt::Display for Prose<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.matches('`').count() % 2 != 0 {
            return Esc(self.0).fmt(f);
        }
        for (i, part) in self.0.split('`').enumerate() {
            if i % 2 == 1 {
                write!(f, "<code>{}</code>", Esc(part))?;
            } else {
                Esc(part).fmt(f)?;
            }
        }
        Ok(())
    }
}

/// The lower-case id of a status, used as a CSS hook (`data-status`, `s-…` classes).
pub(super) fn status_id(s: Status) -> &'static str {
    match s {
        Status::Skip => "skip",
        Status::Pass => "pass",
        Status::Info => "info",
        Status::Warn => "warn",
        Status::Fail => "fail",
    }
}

/// `2–9`, `2, 4, 6–7`: node ids with consecutive runs joined.
pub(super) fn node_list(nodes: &[u32]) -> String {
    let mut sorted = nodes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => sorted[i].to_string(),
            1 => format!("{}, {}", sorted[i], sorted[j]),
            _ => format!("{}–{}", sorted[i], sorted[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// How a GPU is doing now, in a few words: its hottest sensor, power, busy and VRAM use; or why
/// it was not read.
fn now(t: &rocm_probe::facts::telemetry::GpuTelemetry) -> String {
    if t.skipped.is_some() {
        return msg!("html.card-now-suspended");
    }
    let mut parts = Vec::new();
    if let Some(h) = &t.hwmon {
        if let Some(m) = h.temperatures.iter().filter_map(|s| s.millidegrees).max() {
            parts.push(msg!("html.card-now-temperature", celsius = m / 1000));
        }
        if let Some(uw) = h.power_uw {
            parts.push(format!("{:.1} W", uw as f64 / 1e6));
        }
    }
    if let Some(b) = t.busy_percent {
        parts.push(msg!("html.card-now-busy", percent = b));
    }
    if let Some(v) = t.vram_used {
        parts.push(msg!("html.card-now-vram", used = bytes(v)));
    }
    if parts.is_empty() {
        return msg!("html.unknown");
    }
    i18n::list(parts)
}

fn bytes(b: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    let gib = b as f64 / GIB;
    if gib >= 1.0 {
        let text = format!("{gib:.1}");
        format!("{} GiB", text.trim_end_matches(".0"))
    } else {
        format!("{} MiB", b >> 20)
    }
}

/// A status word in the page's language (`FAIL`, `故障`).
pub(super) fn word(status: Status) -> &'static str {
    rocm_probe::finding::status_word(status, i18n::current())
}

pub(super) fn badge(s: &mut String, status: Status) -> fmt::Result {
    write!(
        s,
        r#"<span class="badge s-{}">{}</span>"#,
        status_id(status),
        word(status)
    )
}

/// A link to the first finding with `id`, its id set as code.
fn finding_link(anchor: &BTreeMap<&str, usize>, id: &str) -> String {
    format!(
        r##"<a href="#finding-{}"><code>{}</code></a>"##,
        anchor.get(id).copied().unwrap_or(0),
        Esc(id)
    )
}

/// The page's stylesheet, shared with `fleet --format html` (`render/fleet.rs`).
pub(super) const STYLE: &str = r#"
:root { --fail: #c92a2a; --fail-bg: #fff0f0; --warn: #b35c00; --warn-bg: #fff6e5;
  --pass: #2b8a3e; --pass-bg: #ebfbee; --info: #1864ab; --info-bg: #e7f5ff;
  --skip: #6c757d; --skip-bg: #f1f3f5; --line: #dee2e6; --text: #212529; --muted: #5c636a; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; color: var(--text); background: #fff;
  font: 15px/1.45 system-ui, "Segoe UI", "DejaVu Sans", "Liberation Sans", "Noto Sans CJK SC", sans-serif; }
main { max-width: 1320px; margin: 0 auto; }
code, .mono, td.src { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", "Noto Sans Mono CJK SC", monospace; font-size: 13px; }
h1 { font-size: 22px; margin: 6px 0 10px; }
h2 { font-size: 19px; margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 8px; }
a { color: var(--info); }
.badge { display: inline-block; min-width: 3.4em; padding: 1px 6px; border-radius: 4px; font-size: 12px;
  font-weight: 700; text-align: center; color: #fff; vertical-align: 1px; letter-spacing: .03em; }
.s-fail { background: var(--fail); } .s-warn { background: var(--warn); } .s-pass { background: var(--pass); }
.s-info { background: var(--info); } .s-skip { background: var(--skip); }
header.verdict { border-left: 8px solid var(--skip); background: var(--skip-bg); padding: 14px 20px; border-radius: 6px; }
header.verdict[data-status=fail] { border-color: var(--fail); background: var(--fail-bg); }
header.verdict[data-status=warn] { border-color: var(--warn); background: var(--warn-bg); }
header.verdict[data-status=pass] { border-color: var(--pass); background: var(--pass-bg); }
header.verdict[data-status=info] { border-color: var(--info); background: var(--info-bg); }
header.verdict .badge { font-size: 15px; padding: 3px 10px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0 0; font-size: 14px; }
dl.meta dt, .card dt { color: var(--muted); }
dl.meta dd, .card dd { margin: 0; overflow-wrap: break-word; min-width: 0; }
nav.layers ol { list-style: none; display: grid; grid-template-columns: repeat(9, 1fr); gap: 6px; padding: 0; margin: 18px 0 0; }
nav.layers li a { display: block; padding: 6px 8px; border-radius: 6px; border: 1px solid var(--line);
  text-decoration: none; color: var(--text); background: var(--skip-bg); font-size: 13px; }
nav.layers li[data-status=fail] a { background: var(--fail-bg); border-color: var(--fail); }
nav.layers li[data-status=warn] a { background: var(--warn-bg); border-color: var(--warn); }
nav.layers li[data-status=pass] a { background: var(--pass-bg); border-color: var(--pass); }
nav.layers li[data-status=info] a { background: var(--info-bg); border-color: var(--info); }
nav.layers b { display: block; }
figure { margin: 0; overflow-x: auto; }
svg.topology { display: block; max-width: 100%; height: auto; margin: 0 auto; }
svg.topology text { font-size: 12px; fill: var(--text); }
svg.topology text.name { font-size: 13px; font-weight: 700; }
svg.topology text.sub { font-size: 11px; fill: var(--muted); }
svg.topology text.node { font-size: 11px; text-anchor: middle; }
.hive rect { fill: #f3f0ff; stroke: #7048e8; stroke-width: 1.5; stroke-dasharray: 8 4; }
.hive text { fill: #5f3dc4 !important; font-weight: 700; }
.cpu rect { fill: #f8f9fa; stroke: #495057; stroke-width: 1.5; }
.gpu .gpubox { fill: var(--pass-bg); stroke: var(--pass); stroke-width: 2; }
.gpu[data-status=warn] .gpubox { fill: var(--warn-bg); stroke: var(--warn); }
.gpu[data-status=fail] .gpubox { fill: var(--fail-bg); stroke: var(--fail); }
.gpu .partition { fill: #fff; stroke: #868e96; }
.gpu .slot-missing { fill: none; stroke: var(--warn); stroke-dasharray: 3 3; }
.link { fill: none; }
.link.xgmi { stroke: #e8590c; stroke-width: 2.5; }
.link.pcie { stroke: #1c7ed6; stroke-width: 1.5; stroke-dasharray: 7 4; stroke-opacity: .8; }
.link.host { stroke: #adb5bd; stroke-width: 1.5; stroke-dasharray: 2 4; }
.link.cpu { stroke: #495057; stroke-width: 1.2; stroke-dasharray: 1 3; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 6px 22px; padding: 0; margin: 10px 0 0; font-size: 13px; color: var(--muted); justify-content: center; }
p.legend-note { text-align: center; color: var(--muted); font-size: 13px; margin: 4px 0 0; }
ul.legend i { display: inline-block; width: 34px; height: 0; margin-right: 6px; vertical-align: middle; }
ul.legend .xgmi { border-top: 3px solid #e8590c; } ul.legend .pcie { border-top: 2px dashed #1c7ed6; }
ul.legend .host { border-top: 2px dotted #adb5bd; } ul.legend .cpu { border-top: 2px dotted #495057; }
ul.legend .hivebox { height: 14px; width: 22px; border: 1.5px dashed #7048e8; background: #f3f0ff; }
ul.legend .missing { height: 14px; width: 22px; border: 1.5px dashed var(--warn); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 14px; }
.card { border: 1px solid var(--line); border-top: 5px solid var(--pass); border-radius: 6px; padding: 12px 14px; }
.card[data-status=warn] { border-top-color: var(--warn); } .card[data-status=fail] { border-top-color: var(--fail); }
.card .model { margin: -4px 0 8px; color: var(--muted); }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; font-size: 14px; }
.card p { margin: 8px 0 0; font-size: 14px; }
table { border-collapse: collapse; font-size: 13px; margin-top: 6px; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; border-bottom: 1px solid var(--line); }
td { overflow-wrap: anywhere; }
.finding code { background: rgba(0,0,0,.05); padding: 0 3px; border-radius: 3px; }
.finding code.id { background: none; padding: 0; }
section.layer { margin: 0 0 22px; }
section.layer h3 { font-size: 17px; }
section.layer h3 small { font-weight: 400; color: var(--muted); font-size: 14px; }
p.note { color: var(--muted); margin: 4px 0 8px; }
.finding { border-left: 4px solid var(--skip); padding: 6px 12px; margin: 8px 0; background: #fcfcfd; }
.finding[data-status=fail] { border-color: var(--fail); background: var(--fail-bg); }
.finding[data-status=warn] { border-color: var(--warn); background: var(--warn-bg); }
.finding[data-status=pass] { border-color: var(--pass); }
.finding[data-status=info] { border-color: var(--info); }
.finding p { margin: 2px 0; }
.finding .id { font-weight: 700; margin-right: 6px; }
.finding .remedy { margin-top: 6px; }
.finding pre.commands { margin: 4px 0 0; padding: 6px 8px; overflow-x: auto; }
.finding .cause { color: var(--muted); font-size: 14px; }
details summary { cursor: pointer; color: var(--muted); font-size: 13px; margin-top: 4px; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
"#;

fn write_page(report: &Report, facts: &Facts, source: &Source, s: &mut String) -> fmt::Result {
    let v = &report.verdict;
    // The anchor of each finding id's first finding.
    let mut anchor: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, f) in report.findings.iter().enumerate() {
        anchor.entry(f.id).or_insert(k);
    }
    writeln!(s, "<!DOCTYPE html>")?;
    let lang = match i18n::current() {
        Lang::En => "en",
        Lang::Zh => "zh-Hans",
    };
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
    writeln!(
        s,
        "<title>{}</title>",
        msg!(
            "html.title",
            status = word(v.status),
            summary = Esc(&v.summary)
        )
    )?;
    writeln!(s, "<style>{STYLE}</style>")?;
    writeln!(s, "</head>")?;
    writeln!(s, "<body>")?;
    writeln!(s, "<main>")?;

    // The verdict.
    writeln!(
        s,
        r#"<header class="verdict" id="verdict" data-status="{}">"#,
        status_id(v.status)
    )?;
    write!(s, "<h1>")?;
    badge(s, v.status)?;
    writeln!(s, " {}</h1>", Esc(&v.summary))?;
    match v.root_cause {
        Some(id) => {
            let layer = &report.layers[usize::from(v.root_layer).saturating_sub(1)];
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
            writeln!(
                s,
                "<p>{}</p>",
                msg!(
                    "html.root-cause",
                    layer = v.root_layer,
                    name = Esc(&layer_name(layer.layer)),
                    link = finding_link(&anchor, id),
                    above
                )
            )?;
        }
        None => writeln!(
            s,
            "<p>{}</p>",
            msg!(
                "html.verdict-counts",
                gpus = report.facts.gpu_count,
                agents = report.facts.agent_count
            )
        )?,
    }
    meta(report, source, s)?;
    writeln!(s, "</header>")?;

    // The nine layers at a glance.
    writeln!(
        s,
        r#"<nav class="layers" aria-label="{}"><ol>"#,
        Esc(&msg!("html.layers"))
    )?;
    for l in &report.layers {
        writeln!(
            s,
            r##"<li data-status="{}"><a href="#layer-{}"><b>{} {}</b>{}</a></li>"##,
            status_id(l.status),
            l.number,
            l.number,
            Esc(&layer_name(l.layer)),
            word(l.status)
        )?;
    }
    writeln!(s, "</ol></nav>")?;

    // Topology and GPUs.
    let inv = facts.inventory.as_ref();
    let links = match (facts.kfd.as_ref(), inv) {
        (Some(k), Some(inv)) => {
            Links::from_matrix(&rocm_probe::facts::topo::matrix(&k.topology), inv)
        }
        _ => Links::default(),
    };
    let gpu_findings = inv.map(|i| gpu_findings(report, i)).unwrap_or_default();
    let gpu_status: BTreeMap<usize, Status> = gpu_findings
        .iter()
        .map(|(g, fs)| {
            let worst = fs
                .iter()
                .map(|k| report.findings[*k].status)
                .max()
                .unwrap_or(Status::Pass);
            (*g, worst)
        })
        .collect();
    writeln!(s, r#"<section id="topology">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("html.topology")))?;
    match inv {
        Some(inv) if !inv.gpus.is_empty() => {
            writeln!(s, "<figure>")?;
            topology::svg(inv, &links, &gpu_status, s)?;
            legend(inv, &links, s)?;
            writeln!(s, "</figure>")?;
        }
        Some(_) => writeln!(
            s,
            r#"<p class="note">{}</p>"#,
            Esc(&msg!("html.no-gpu-agents"))
        )?,
        None => writeln!(
            s,
            r#"<p class="note">{}</p>"#,
            match &facts.kfd_error {
                Some(e) => msg!("html.no-kfd-error", error = Esc(&e.to_string())),
                None => Esc(&msg!("html.no-kfd")).to_string(),
            }
        )?,
    }
    writeln!(s, "</section>")?;
    if let Some(inv) = inv.filter(|i| !i.gpus.is_empty()) {
        writeln!(s, r#"<section id="gpus">"#)?;
        writeln!(s, "<h2>{}</h2>", Esc(&msg!("html.gpus")))?;
        writeln!(s, r#"<div class="cards">"#)?;
        for g in &inv.gpus {
            let empty = Vec::new();
            let named = gpu_findings.get(&g.index).unwrap_or(&empty);
            card(report, facts, inv, g, &links, named, s)?;
        }
        writeln!(s, "</div>")?;
        writeln!(s, "</section>")?;
    }

    // The layers.
    writeln!(s, r#"<section id="layers">"#)?;
    writeln!(s, "<h2>{}</h2>", Esc(&msg!("html.layers")))?;
    for l in &report.layers {
        writeln!(
            s,
            r#"<section class="layer" id="layer-{}" data-status="{}">"#,
            l.number,
            status_id(l.status)
        )?;
        write!(s, "<h3>")?;
        badge(s, l.status)?;
        // English names a layer by its id and adds its title; Chinese names it by its title.
        let name = layer_name(l.layer);
        write!(
            s,
            " {}",
            Esc(&msg!("html.layer-heading", n = l.number, name))
        )?;
        if i18n::current() == Lang::En {
            write!(s, " <small>{}</small>", Esc(l.layer.title(Lang::En)))?;
        }
        writeln!(s, "</h3>")?;
        match (&l.note, l.consequence_of) {
            (Some(note), _) => writeln!(s, r#"<p class="note">{}</p>"#, Esc(note))?,
            (None, Some(id)) => {
                let link = finding_link(&anchor, id);
                let note = if matches!(l.status, Status::Pass | Status::Info) {
                    msg!("html.layer-blocked-passed", link)
                } else {
                    msg!("html.layer-blocked", link)
                };
                writeln!(s, r#"<p class="note">{note}</p>"#)?
            }
            (None, None) => {}
        }
        for (k, f) in report
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.layer == l.layer)
        {
            finding(k, f, &anchor, s)?;
        }
        writeln!(s, "</section>")?;
    }
    writeln!(s, "</section>")?;
    writeln!(
        s,
        "<footer>{}</footer>",
        Esc(&msg!("html.footer", version = env!("CARGO_PKG_VERSION")))
    )?;
    writeln!(s, "</main>")?;
    writeln!(s, "</body>")?;
    writeln!(s, "</html>")
}

/// What the picture's marks mean; only the marks it has.
fn legend(inv: &Inventory, links: &Links, s: &mut String) -> fmt::Result {
    use topology::PairKind;
    let has = |k: PairKind| links.pairs.iter().any(|p| p.kind == k);
    let max = inv.gpus.iter().map(|g| g.nodes.len()).max().unwrap_or(0);
    let mut items: Vec<(&str, String)> = Vec::new();
    for (kind, class) in [
        (PairKind::Xgmi, "xgmi"),
        (PairKind::Pcie, "pcie"),
        (PairKind::Host, "host"),
    ] {
        if has(kind) {
            let text = match kind {
                PairKind::Xgmi => "XGMI".to_owned(),
                PairKind::Pcie => msg!("html.kind-pcie"),
                PairKind::Host => msg!("html.legend-host"),
            };
            items.push((class, text));
        }
    }
    if !links.cpus.is_empty() {
        items.push(("cpu", msg!("html.legend-cpu")));
    }
    if !inv.hives.is_empty() {
        items.push(("hivebox", msg!("html.legend-hive")));
    }
    if inv.gpus.iter().any(|g| g.nodes.len() < max) {
        items.push(("missing", msg!("html.legend-missing")));
    }
    write!(s, r#"<figcaption><ul class="legend">"#)?;
    for (class, text) in items {
        write!(s, r#"<li><i class="{class}"></i>{}</li>"#, Esc(&text))?;
    }
    writeln!(
        s,
        r#"</ul><p class="legend-note">{}</p></figcaption>"#,
        Esc(&msg!("html.legend-note"))
    )
}

/// The facts summary under the verdict.
fn meta(report: &Report, source: &Source, s: &mut String) -> fmt::Result {
    let c = &report.facts.config;
    let from = match source.kind() {
        SourceKind::Live => msg!("cli.source-live"),
        SourceKind::Fixture { root } => msg!("cli.source-fixture", path = root.display()),
    };
    let mut rows: Vec<(String, String)> = vec![
        (msg!("html.meta-source"), from),
        (msg!("html.meta-profile"), profile_name(report.profile)),
        (
            msg!("html.meta-gpus"),
            msg!(
                "html.meta-gpus-value",
                gpus = report.facts.gpu_count,
                agents = report.facts.agent_count
            ),
        ),
    ];
    // `63 × gfx942`, in first-seen order.
    let mut targets: Vec<(String, usize)> = Vec::new();
    for t in &report.facts.targets {
        match targets.iter_mut().find(|(x, _)| x == t) {
            Some((_, n)) => *n += 1,
            None => targets.push((t.clone(), 1)),
        }
    }
    if !targets.is_empty() {
        let text = i18n::list(targets.iter().map(|(t, n)| format!("{n} × {t}")));
        rows.push((msg!("html.meta-targets"), text));
    }
    for (label, value) in [
        (msg!("html.meta-compute-partition"), &c.compute_partition),
        (msg!("html.meta-memory-partition"), &c.memory_partition),
        (msg!("html.meta-kernel"), &c.kernel),
        ("amdgpu".to_owned(), &c.amdgpu),
        ("ROCm".to_owned(), &c.rocm),
    ] {
        if let Some(v) = value {
            rows.push((label, v.clone()));
        }
    }
    if !c.libraries.is_empty() {
        let libs = i18n::list(c.libraries.iter().map(|(k, v)| format!("{k} {v}")));
        rows.push((msg!("html.meta-libraries"), libs));
    }
    rows.push((msg!("html.meta-fingerprint"), c.fingerprint.clone()));
    writeln!(s, r#"<dl class="meta">"#)?;
    for (label, value) in rows {
        writeln!(s, "<dt>{}</dt><dd>{}</dd>", Esc(&label), Esc(&value))?;
    }
    writeln!(s, "</dl>")
}

/// Warnings and failures that name a GPU — its PCI address, a path under one of its KFD
/// nodes, or one of its render nodes — by GPU index, as indices into the report's findings.
fn gpu_findings(report: &Report, inv: &Inventory) -> BTreeMap<usize, Vec<usize>> {
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for g in &inv.gpus {
        let mut needles: Vec<String> = Vec::new();
        if let Some(a) = &g.pci_address {
            needles.push(a.clone());
        }
        for n in &g.nodes {
            needles.push(format!(
                "{}/nodes/{n}",
                rocm_probe::facts::topology::TOPOLOGY_DIR
            ));
        }
        for a in inv
            .agents
            .iter()
            .filter(|a| a.device_type == DeviceType::Gpu && g.nodes.contains(&a.node))
        {
            if let Some(m) = a.drm_render_minor {
                needles.push(format!("/dev/dri/renderD{m}"));
            }
        }
        for (k, f) in report.findings.iter().enumerate() {
            if f.status < Status::Warn {
                continue;
            }
            let texts = std::iter::once(f.summary.as_str()).chain(
                f.evidence
                    .iter()
                    .flat_map(|e| std::iter::once(e.source.as_str()).chain(e.value.as_deref())),
            );
            let hit = texts
                .into_iter()
                .any(|t| needles.iter().any(|n| names(t, n)));
            if hit {
                out.entry(g.index).or_default().push(k);
            }
        }
    }
    out
}

/// Whether `text` holds `needle` not followed by a digit (`nodes/5` is not `nodes/50`).
fn names(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(i, _)| {
        !text[i + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

fn card(
    report: &Report,
    facts: &Facts,
    inv: &Inventory,
    g: &PhysicalGpu,
    links: &Links,
    named: &[usize],
    s: &mut String,
) -> fmt::Result {
    let worst = named
        .iter()
        .map(|k| report.findings[*k].status)
        .max()
        .unwrap_or(Status::Pass);
    let agents: Vec<_> = inv
        .agents
        .iter()
        .filter(|a| a.device_type == DeviceType::Gpu && g.nodes.contains(&a.node))
        .collect();
    let config = report.facts.gpus.iter().find(|c| c.index == g.index);
    writeln!(
        s,
        r#"<article class="card" id="gpu-{}" data-gpu="{}" data-status="{}">"#,
        g.index,
        g.index,
        status_id(worst)
    )?;
    write!(s, "<h3>GPU {}", g.index)?;
    if worst >= Status::Warn {
        write!(s, " ")?;
        badge(s, worst)?;
    }
    writeln!(s, "</h3>")?;
    writeln!(
        s,
        r#"<p class="model">{}</p>"#,
        Esc(&g
            .marketing_name
            .clone()
            .unwrap_or_else(|| msg!("html.no-marketing-name")))
    )?;
    let unknown = || msg!("html.unknown");
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut targets: Vec<&str> = agents
        .iter()
        .filter_map(|a| a.target_id.as_deref())
        .collect();
    targets.dedup();
    let target = match (targets.is_empty(), g.gfx) {
        (false, _) => i18n::list(targets),
        (true, Some(x)) => x.name(),
        (true, None) => unknown(),
    };
    rows.push((msg!("html.card-target"), target));
    rows.push((
        "PCI".to_owned(),
        match (&g.pci_address, g.device_id) {
            (Some(a), Some(d)) => msg!("html.card-pci", address = a, device = format!("{d:04x}")),
            (Some(a), None) => a.clone(),
            (None, Some(d)) => msg!("html.card-pci-no-address", device = format!("{d:04x}")),
            (None, None) => unknown(),
        },
    ));
    rows.push(if g.nodes.len() == 1 {
        (msg!("html.card-kfd-node"), g.nodes[0].to_string())
    } else {
        (
            msg!("html.card-partitions"),
            msg!(
                "html.card-partitions-value",
                count = g.nodes.len(),
                nodes = node_list(&g.nodes)
            ),
        )
    });
    if agents.iter().any(|a| a.integrated == Some(true)) {
        rows.push((msg!("html.card-kind"), msg!("html.card-integrated-apu")));
    }
    rows.push((
        msg!("html.card-compute-units"),
        g.compute_units.map_or_else(unknown, |c| c.to_string()),
    ));
    rows.push((
        msg!("html.card-memory"),
        g.memory_bytes.map_or_else(unknown, bytes),
    ));
    if let Some(h) = g.hive_id {
        rows.push((msg!("html.card-hive"), format!("{h:#x}")));
    }
    if let Some(cpus) = links.cpus.get(&g.index) {
        rows.push((msg!("html.card-cpu-node"), i18n::list(cpus)));
    }
    for (kind, peers) in links.peers(g.index) {
        let list = i18n::list(peers.iter().map(|p| format!("GPU {p}")));
        rows.push((
            match kind {
                topology::PairKind::Xgmi => msg!("html.card-xgmi-to"),
                topology::PairKind::Pcie => msg!("html.card-pcie-to"),
                topology::PairKind::Host => msg!("html.card-no-p2p-to"),
            },
            list,
        ));
    }
    if let Some(c) = config {
        let mut fw: Vec<String> = Vec::new();
        if let Some(v) = &c.vbios {
            fw.push(format!("VBIOS {v}"));
        }
        if let Some(v) = c.mec_firmware {
            fw.push(format!("MEC {v}"));
        }
        if let Some(v) = c.sdma_firmware {
            fw.push(format!("SDMA {v}"));
        }
        // device/fw_version: MES, SMC, … as sysfs prints them.
        // (MEC and SDMA are shown once, from KFD, above.)
        fw.extend(
            c.firmware
                .iter()
                .filter(|(k, _)| {
                    !(k.as_str() == "mec" && c.mec_firmware.is_some()
                        || k.as_str() == "sdma" && c.sdma_firmware.is_some())
                })
                .map(|(k, v)| format!("{} {v}", k.to_uppercase())),
        );
        if !fw.is_empty() {
            rows.push((msg!("html.card-firmware"), i18n::list(fw)));
        }
    }
    if let Some(t) = facts.telemetry.gpus.iter().find(|t| t.gpu == g.index) {
        rows.push((msg!("html.card-now"), now(t)));
    }
    writeln!(s, "<dl>")?;
    for (label, value) in rows {
        // A target ID breaks at its colons, not inside a feature.
        let value = Esc(&value).to_string().replace(':', ":<wbr>");
        writeln!(s, "<dt>{}</dt><dd>{value}</dd>", Esc(&label))?;
    }
    writeln!(s, "</dl>")?;
    if !named.is_empty() {
        let items = named.iter().map(|k| {
            let f = &report.findings[*k];
            // English names the status by its id (`fail`), Chinese by its word.
            let status = match i18n::current() {
                Lang::En => status_id(f.status),
                Lang::Zh => word(f.status),
            };
            let link = format!(r##"<a href="#finding-{k}"><code>{}</code></a>"##, Esc(f.id));
            msg!("html.card-named-item", link, status)
        });
        writeln!(
            s,
            "<p>{}</p>",
            msg!("html.card-named-by", findings = i18n::list(items))
        )?;
    }
    if agents.len() > 1 {
        writeln!(
            s,
            "<details><summary>{}</summary><table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
            Esc(&msg!("html.agents", count = agents.len())),
            Esc(&msg!("html.agents-node")),
            Esc(&msg!("html.agents-partition")),
            Esc(&msg!("html.agents-cus")),
            Esc(&msg!("html.agents-memory")),
            Esc(&msg!("html.agents-render-node")),
        )?;
        for a in &agents {
            let opt = |v: Option<String>| v.unwrap_or_else(|| "–".to_owned());
            writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                a.node,
                opt(a.partition.map(|p| p.to_string())),
                opt(a.compute_units.map(|c| c.to_string())),
                Esc(&opt(a.memory_bytes.map(bytes))),
                opt(a.drm_render_minor.map(|m| format!("renderD{m}")))
            )?;
        }
        writeln!(s, "</table></details>")?;
    }
    writeln!(s, "</article>")
}

fn finding(k: usize, f: &Finding, anchor: &BTreeMap<&str, usize>, s: &mut String) -> fmt::Result {
    writeln!(
        s,
        r#"<div class="finding" id="finding-{k}" data-id="{}" data-status="{}">"#,
        Esc(f.id),
        status_id(f.status)
    )?;
    write!(s, "<p>")?;
    badge(s, f.status)?;
    writeln!(
        s,
        r#" <code class="id">{}</code>{}</p>"#,
        Esc(f.id),
        Prose(&f.summary)
    )?;
    if let Some(cause) = f.caused_by {
        writeln!(
            s,
            r#"<p class="cause">{}</p>"#,
            msg!("html.caused-by", link = finding_link(anchor, cause))
        )?;
    }
    if let Some(r) = &f.remedy {
        let label = format!("<strong>{}</strong>", Esc(&msg!("html.remedy")));
        writeln!(
            s,
            r#"<p class="remedy">{}</p>"#,
            msg!("html.remedy-line", label, remedy = Prose(r))
        )?;
        // The commands of its steps, each on a line of its own, to be copied as they are.
        // A family's variants under a shell comment naming it.
        let commands: Vec<String> = super::command_lines(&f.remedy_steps)
            .into_iter()
            .map(|line| match line {
                super::CommandLine::Label(distro) => {
                    Esc(&format!("# {}", super::distro_name(distro))).to_string()
                }
                super::CommandLine::Command { command, .. } => Esc(command).to_string(),
            })
            .collect();
        if !commands.is_empty() {
            writeln!(
                s,
                r#"<pre class="commands"><code>{}</code></pre>"#,
                commands.join("\n")
            )?;
        }
    }
    if !f.evidence.is_empty() {
        writeln!(
            s,
            "<details{}><summary>{}</summary><table>",
            if f.status >= Status::Warn {
                " open"
            } else {
                ""
            },
            Esc(&msg!("html.evidence", count = f.evidence.len()))
        )?;
        for e in &f.evidence {
            match &e.value {
                Some(v) => writeln!(
                    s,
                    r#"<tr><td class="src">{}</td><td>{}</td></tr>"#,
                    Esc(&e.source),
                    Esc(v)
                )?,
                None => writeln!(
                    s,
                    r#"<tr><td class="src">{}</td><td><em>{}</em></td></tr>"#,
                    Esc(&e.source),
                    Esc(&msg!("html.absent"))
                )?,
            }
        }
        writeln!(s, "</table></details>")?;
    }
    writeln!(s, "</div>")
}
