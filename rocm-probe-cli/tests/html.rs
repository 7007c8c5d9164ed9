//! `report --format html -o FILE`: a self-contained static page. The SVG topology is checked
//! from its own markup (one group per physical GPU, one edge per linked pair, hives that do not
//! overlap), and the page is rendered by real headless Chromium into a screenshot under
//! `target/` that must not be blank.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{fixture, probe, run};
use serde_json::Value;

/// The page and the JSON report of the same root.
struct Page {
    html: String,
    json: Value,
    file: PathBuf,
}

fn page(root: &Path, dir: &Path) -> Page {
    let file = dir.join("x.html");
    let r = run(probe()
        .arg("--root")
        .arg(root)
        .args(["report", "--format", "html", "-o"])
        .arg(&file));
    assert!(matches!(r.code, 0 | 1 | 3), "exit {}: {}", r.code, r.stderr);
    assert_eq!(r.stdout, "", "-o writes nothing to standard output");
    let html = std::fs::read_to_string(&file).unwrap();
    let j = run(probe().arg("--root").arg(root).arg("--json"));
    assert!(j.code <= 1, "{}", j.stderr);
    assert_eq!(j.code, r.code, "the same verdict in both formats");
    Page {
        html,
        json: serde_json::from_str(&j.stdout).unwrap(),
        file,
    }
}

/// One tag of the page's own, well-formed markup.
#[derive(Debug, Clone)]
struct Tag {
    name: String,
    attrs: BTreeMap<String, String>,
    /// Indices (into the tag list) of the elements open around this one, outermost first.
    parents: Vec<usize>,
}

impl Tag {
    fn attr(&self, key: &str) -> &str {
        self.attrs.get(key).map_or_else(
            || panic!("<{} …> without {key}: {self:?}", self.name),
            String::as_str,
        )
    }
    fn num(&self, key: &str) -> i64 {
        self.attr(key)
            .parse()
            .unwrap_or_else(|_| panic!("{key} is not an integer: {self:?}"))
    }
    fn class(&self) -> &str {
        self.attrs.get("class").map_or("", String::as_str)
    }
    fn rect(&self) -> Rect {
        Rect {
            x: self.num("x"),
            y: self.num("y"),
            w: self.num("width"),
            h: self.num("height"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Rect {
    x: i64,
    y: i64,
    w: i64,
    h: i64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
    fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x
            && o.y >= self.y
            && o.x + o.w <= self.x + self.w
            && o.y + o.h <= self.y + self.h
    }
}

/// Parses the SVG element of the page: start tags with their attributes and the elements open
/// around each; end tags must match (the markup is well formed); text is skipped.
fn svg_tags(html: &str) -> Vec<Tag> {
    let start = html.find("<svg").expect("an <svg> element");
    let end = html.find("</svg>").expect("</svg>") + "</svg>".len();
    assert_eq!(html.matches("<svg").count(), 1, "one picture");
    let svg = &html[start..end];
    let mut tags: Vec<Tag> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let close = rest.find('>').expect("unterminated tag");
        let body = &rest[..close];
        rest = &rest[close + 1..];
        if let Some(name) = body.strip_prefix('/') {
            let top = open
                .pop()
                .unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(tags[top].name, name.trim(), "mismatched end tag");
            continue;
        }
        let self_closing = body.ends_with('/');
        let body = body.trim_end_matches('/');
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = body[..name_end].to_owned();
        let mut attrs = BTreeMap::new();
        let mut a = body[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a
                .find("=\"")
                .unwrap_or_else(|| panic!("attribute without value: {a}"));
            let key = a[..eq].trim().to_owned();
            let after = &a[eq + 2..];
            let q = after.find('"').expect("unterminated attribute");
            assert!(!after[..q].contains('<'), "unescaped < in an attribute");
            assert!(
                attrs.insert(key.clone(), after[..q].to_owned()).is_none(),
                "duplicate attribute {key}"
            );
            a = after[q + 1..].trim_start();
        }
        tags.push(Tag {
            name,
            attrs,
            parents: open.clone(),
        });
        if !self_closing {
            open.push(tags.len() - 1);
        }
    }
    assert!(open.is_empty(), "unclosed elements in the SVG");
    tags
}

/// What the picture says, checked for consistency on the way.
#[derive(Debug, Default)]
struct Picture {
    /// GPU index → its box and its partitions' KFD nodes.
    gpus: BTreeMap<usize, (Rect, Vec<u32>)>,
    /// `(a, b)` → class (`xgmi`, `pcie`, `host`).
    pairs: BTreeMap<(usize, usize), String>,
    /// `(gpu, cpu node)`.
    cpu_links: BTreeSet<(usize, u32)>,
    /// Hive id → its rectangle and the GPUs drawn inside it.
    hives: BTreeMap<String, (Rect, Vec<usize>)>,
    missing_slots: usize,
}

fn picture(html: &str) -> Picture {
    let tags = svg_tags(html);
    let root = &tags[0];
    assert_eq!(root.name, "svg");
    let view: Vec<i64> = root
        .attr("viewBox")
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    let canvas = Rect {
        x: view[0],
        y: view[1],
        w: view[2],
        h: view[3],
    };
    let mut p = Picture::default();
    let cpus: BTreeSet<u32> = tags
        .iter()
        .filter(|t| t.name == "g" && t.class() == "cpu")
        .map(|t| t.attr("data-node").parse().unwrap())
        .collect();
    let gpu_of = |t: &Tag| -> Option<usize> {
        t.parents
            .iter()
            .map(|i| &tags[*i])
            .find(|g| g.name == "g" && g.class() == "gpu")
            .map(|g| g.attr("data-gpu").parse().unwrap())
    };
    for t in &tags {
        match (t.name.as_str(), t.class()) {
            ("g", "gpu") => {
                let i: usize = t.attr("data-gpu").parse().unwrap();
                assert!(gpu_of(t).is_none(), "a GPU group inside another");
                assert!(
                    p.gpus.insert(i, (canvas, Vec::new())).is_none(),
                    "two groups for GPU {i}"
                );
            }
            ("rect", "gpubox") => {
                let g = gpu_of(t).expect("a GPU box outside its group");
                assert!(canvas.contains(&t.rect()), "GPU {g} off the canvas");
                p.gpus.get_mut(&g).unwrap().0 = t.rect();
            }
            ("rect", "partition") => {
                let g = gpu_of(t).expect("a partition outside any GPU group");
                let (b, nodes) = p.gpus.get_mut(&g).unwrap();
                assert!(b.contains(&t.rect()), "a partition outside its GPU's box");
                nodes.push(t.attr("data-node").parse().unwrap());
            }
            ("rect", "slot-missing") => p.missing_slots += 1,
            ("rect", _) if t.parents.last().is_some_and(|i| tags[*i].class() == "hive") => {
                let hive = tags[*t.parents.last().unwrap()].attr("data-hive");
                assert!(hive.starts_with("0x"), "{hive}");
                assert!(canvas.contains(&t.rect()), "hive {hive} off the canvas");
                assert!(
                    p.hives
                        .insert(hive.to_owned(), (t.rect(), Vec::new()))
                        .is_none(),
                    "two rectangles for hive {hive}"
                );
            }
            ("line", c) if c.starts_with("link ") => {
                let kind = &c["link ".len()..];
                if kind == "cpu" {
                    let cpu: u32 = t.attr("data-cpu").parse().unwrap();
                    assert!(cpus.contains(&cpu), "a link to CPU node {cpu}, not drawn");
                    assert!(
                        p.cpu_links
                            .insert((t.attr("data-gpu").parse().unwrap(), cpu)),
                        "two edges for one GPU–CPU pair"
                    );
                } else {
                    assert!(["xgmi", "pcie", "host"].contains(&kind), "{c}");
                    let a: usize = t.attr("data-a").parse().unwrap();
                    let b: usize = t.attr("data-b").parse().unwrap();
                    assert!(a < b, "pairs are written lower index first");
                    assert!(
                        p.pairs.insert((a, b), kind.to_owned()).is_none(),
                        "two edges for GPUs {a}–{b}"
                    );
                }
            }
            _ => {}
        }
    }
    // Hive membership from geometry; boxes never overlap.
    let boxes: Vec<(usize, Rect)> = p.gpus.iter().map(|(i, (r, _))| (*i, *r)).collect();
    for (k, (i, a)) in boxes.iter().enumerate() {
        for (j, b) in &boxes[k + 1..] {
            assert!(!a.overlaps(b), "GPU boxes {i} and {j} overlap");
        }
        for (rect, members) in p.hives.values_mut() {
            if rect.contains(a) {
                members.push(*i);
            } else {
                assert!(!rect.overlaps(a), "GPU {i} straddles a hive's border");
            }
        }
    }
    for (a, b) in p.pairs.keys() {
        assert!(p.gpus.contains_key(a) && p.gpus.contains_key(b));
    }
    for (g, _) in &p.cpu_links {
        assert!(p.gpus.contains_key(g));
    }
    p
}

/// What every page must be: one document, nothing loaded from anywhere, no script, internal
/// links that land.
fn check_static(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n"), "{}", &html[..40]);
    assert!(html.trim_end().ends_with("</html>"));
    let lower = html.to_ascii_lowercase();
    for banned in [
        "<script",
        "javascript:",
        " src=",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "<img",
        "@import",
        "url(",
        " onload=",
        " onclick=",
        " onerror=",
    ] {
        assert!(!lower.contains(banned), "the page holds {banned:?}");
    }
    let ids: BTreeSet<&str> = html
        .match_indices(" id=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    for (i, m) in html.match_indices("href=\"") {
        let rest = &html[i + m.len()..];
        let target = &rest[..rest.find('"').unwrap()];
        let anchor = target
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a link out of the page: {target}"));
        assert!(ids.contains(anchor), "a link to a missing anchor #{anchor}");
    }
    for scheme in ["http://", "https://"] {
        for (i, _) in html.match_indices(scheme) {
            let before = &html[i.saturating_sub(6)..i];
            assert!(
                !before.ends_with("href=\"") && !before.ends_with("src=\""),
                "a {scheme} URL in an attribute"
            );
        }
    }
}

/// Every finding of the JSON report is on the page, in order, with its escaped summary.
fn check_findings(p: &Page) {
    let findings = p.json["findings"].as_array().unwrap();
    let ids: Vec<&str> = p
        .html
        .match_indices(r#"<div class="finding" id="finding-"#)
        .map(|(i, _)| {
            let rest = &p.html[i..];
            let at = rest.find("data-id=\"").unwrap() + "data-id=\"".len();
            &rest[at..at + rest[at..].find('"').unwrap()]
        })
        .collect();
    let want: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, want);
    for f in findings {
        let summary = escape(f["summary"].as_str().unwrap());
        assert!(
            p.html.contains(&summary) || f["summary"].as_str().unwrap().contains('`'),
            "summary missing: {summary}"
        );
    }
    // Every command of a remedy step is on the page, escaped, in its own block.
    for f in findings {
        for step in f["remedy_steps"].as_array().into_iter().flatten() {
            if let Some(c) = step["command"].as_str() {
                assert!(
                    p.html.contains(&escape(c)),
                    "{}: command missing: {c}",
                    f["id"]
                );
            }
        }
    }
    let verdict = &p.json["verdict"];
    assert!(p.html.contains(&format!(
        r#"<header class="verdict" id="verdict" data-status="{}">"#,
        verdict["status"].as_str().unwrap()
    )));
    assert!(
        p.html
            .contains(&escape(verdict["summary"].as_str().unwrap()))
    );
    for l in p.json["layers"].as_array().unwrap() {
        assert!(p.html.contains(&format!(
            r#"<section class="layer" id="layer-{}" data-status="{}">"#,
            l["number"],
            l["status"].as_str().unwrap()
        )));
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The picture holds one group per physical GPU with that GPU's KFD nodes.
fn check_gpus(p: &Page, pic: &Picture) {
    let config = p.json["facts"]["gpus"].as_array().unwrap();
    assert_eq!(
        pic.gpus.len() as u64,
        p.json["facts"]["gpu_count"].as_u64().unwrap()
    );
    assert_eq!(pic.gpus.len(), config.len());
    let mut all = BTreeSet::new();
    for c in config {
        let i = c["index"].as_u64().unwrap() as usize;
        let nodes = &pic.gpus[&i].1;
        assert_eq!(nodes.len() as u64, c["agents"].as_u64().unwrap(), "GPU {i}");
        for n in nodes {
            assert!(all.insert(*n), "node {n} in two GPUs");
        }
        assert!(
            p.html
                .contains(&format!(r#"<article class="card" id="gpu-{i}""#))
        );
    }
    assert_eq!(
        all.len() as u64,
        p.json["facts"]["agent_count"].as_u64().unwrap()
    );
}

fn count(pic: &Picture, kind: &str) -> usize {
    pic.pairs.values().filter(|k| *k == kind).count()
}

#[test]
fn mi300x_cpx_8_physical_gpus_not_thousands_of_partition_edges() {
    let dir = tempfile::tempdir().unwrap();
    let p = page(&fixture("mi300x-cpx-8gpu"), dir.path());
    check_static(&p.html);
    check_findings(&p);
    let pic = picture(&p.html);
    check_gpus(&p, &pic);
    assert_eq!(pic.gpus.len(), 8);
    assert_eq!(pic.gpus.values().map(|g| g.1.len()).sum::<usize>(), 63);
    // 8 GPUs all XGMI to each other: 28 edges, not 63 × 62 partition links.
    assert_eq!(pic.pairs.len(), 28);
    assert_eq!(count(&pic, "xgmi"), 28);
    assert_eq!(p.html.matches(r#"<line class="link"#).count(), 28 + 8);
    // Each GPU links to one CPU socket: GPUs 0–3 to node 0, 4–7 to node 1.
    let cpu: Vec<(usize, u32)> = pic.cpu_links.iter().copied().collect();
    assert_eq!(
        cpu,
        (0..8).map(|g| (g, u32::from(g >= 4))).collect::<Vec<_>>()
    );
    assert_eq!(pic.hives.len(), 1);
    assert_eq!(
        pic.hives.values().next().unwrap().1,
        (0..8).collect::<Vec<_>>()
    );
    // GPU 7 lacks its eighth partition: one dashed slot, and the warning colours it.
    assert_eq!(pic.missing_slots, 1);
    assert!(
        p.html
            .contains(r#"<g class="gpu" data-gpu="7" data-status="warn">"#)
    );
    assert!(
        p.html
            .contains(r#"<g class="gpu" data-gpu="0" data-status="pass">"#)
    );
    screenshot(&p.file, "mi300x-cpx-8gpu", &[HIVE_FILL, XGMI, WARN_BG]);
}

#[test]
fn mi210_two_hives_apart_with_xgmi_inside_and_pcie_between() {
    let dir = tempfile::tempdir().unwrap();
    let p = page(&fixture("mi210-xgmi-8gpu"), dir.path());
    check_static(&p.html);
    check_findings(&p);
    let pic = picture(&p.html);
    check_gpus(&p, &pic);
    assert_eq!(pic.hives.len(), 2);
    let hives: Vec<&(Rect, Vec<usize>)> = pic.hives.values().collect();
    assert!(
        !hives[0].0.overlaps(&hives[1].0),
        "the two hives' rectangles overlap: {:?} {:?}",
        hives[0].0,
        hives[1].0
    );
    assert_eq!(hives[0].1.len(), 4);
    assert_eq!(hives[1].1.len(), 4);
    // 2 hives × 6 XGMI pairs + 4 × 4 PCIe pairs between them: every pair once.
    assert_eq!(pic.pairs.len(), 28);
    assert_eq!(count(&pic, "xgmi"), 12);
    assert_eq!(count(&pic, "pcie"), 16);
    let hive_of = |g: usize| hives.iter().position(|h| h.1.contains(&g)).unwrap();
    for ((a, b), kind) in &pic.pairs {
        let same = hive_of(*a) == hive_of(*b);
        assert_eq!(kind == "xgmi", same, "GPUs {a}–{b}: {kind}");
    }
    // One CPU socket per GPU (its io_link), not the other socket reached through p2p_links.
    assert_eq!(pic.cpu_links.len(), 8);
    for (g, cpu) in &pic.cpu_links {
        assert_eq!(hive_of(*g), *cpu as usize, "GPU {g} → CPU {cpu}");
    }
    screenshot(&p.file, "mi210-xgmi-8gpu", &[HIVE_FILL, XGMI, PASS_BG]);
}

#[test]
fn apu_one_integrated_gpu_and_its_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let p = page(&fixture("apu-phoenix-780m"), dir.path());
    check_static(&p.html);
    check_findings(&p);
    let pic = picture(&p.html);
    check_gpus(&p, &pic);
    assert_eq!(pic.gpus.len(), 1);
    assert!(pic.pairs.is_empty());
    assert!(pic.hives.is_empty());
    assert_eq!(pic.cpu_links.iter().copied().collect::<Vec<_>>(), [(0, 0)]);
    assert!(p.html.contains("integrated"));
    // The card's firmware (device/fw_version) and how the GPU is doing (hwmon, busy, VRAM).
    assert!(
        p.html.contains("MES 0x00000080, MES_KIQ 0x00000106"),
        "firmware row"
    );
    assert!(
        p.html.contains(
            "<dt>Now</dt><dd>hottest sensor 25 °C, 3.1 W, 0% busy, 1.2 GiB VRAM in use</dd>"
        ),
        "telemetry row"
    );
    screenshot(&p.file, "apu-phoenix-780m", &[PASS_BG]);
}

#[test]
fn a_suspended_gpu_card_says_its_telemetry_was_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = page(&fixture("dgpu-runtime-suspended"), dir.path());
    check_static(&p.html);
    assert!(
        p.html.contains(
            "<dt>Now</dt><dd>not read:<wbr> the GPU is runtime-suspended and reading would wake it</dd>"
        ),
        "{}",
        p.html
    );
}

#[test]
fn failing_reports_show_the_root_cause_its_remedy_and_the_gpu_it_names() {
    for (name, root) in [
        ("kfd-permission-denied", "driver.kfd-permission-denied"),
        ("rocblas-no-gfx1103", ""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = page(&fixture(name), dir.path());
        check_static(&p.html);
        check_findings(&p);
        let pic = picture(&p.html);
        check_gpus(&p, &pic);
        assert_eq!(p.json["verdict"]["status"], "fail", "{name}");
        let cause = p.json["verdict"]["root_cause"].as_str().unwrap();
        if !root.is_empty() {
            assert_eq!(cause, root);
        }
        let at = p.json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .position(|f| f["id"] == cause)
            .unwrap();
        assert!(p.html.contains(&format!(
            r##"<a href="#finding-{at}"><code>{cause}</code></a>"##
        )));
        for f in p.json["findings"].as_array().unwrap() {
            if let Some(r) = f["remedy"].as_str() {
                // Backquoted spans become <code>; the words around them are all there.
                for part in r.split('`') {
                    assert!(p.html.contains(&escape(part)), "{name}: remedy {part:?}");
                }
            }
            // Failures and warnings show their evidence unfolded.
            if f["status"] == "fail" && !f["evidence"].as_array().unwrap().is_empty() {
                let i = p
                    .html
                    .find(&format!("data-id=\"{}\"", f["id"].as_str().unwrap()));
                let rest = &p.html[i.unwrap()..];
                assert!(rest[..rest.find("</div>").unwrap()].contains("<details open>"));
            }
        }
        screenshot(&p.file, name, &[FAIL_BG]);
    }
    // The unreadable render node names GPU 0: its box and card turn red.
    let dir = tempfile::tempdir().unwrap();
    let p = page(&fixture("kfd-permission-denied"), dir.path());
    assert!(
        p.html
            .contains(r#"<g class="gpu" data-gpu="0" data-status="fail">"#)
    );
    assert!(
        p.html
            .contains(r#"<article class="card" id="gpu-0" data-gpu="0" data-status="fail">"#)
    );
}

/// Text from the machine is escaped everywhere it lands (card, SVG title and labels), and
/// Chinese renders (fonts-noto-cjk).
#[test]
fn marketing_names_are_escaped_and_chinese_renders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    common::copy_tree(&fixture("apu-phoenix-780m"), &root);
    let ids = root.join("usr/share/libdrm/amdgpu.ids");
    let name = r#"AMD Radeon 780M <b>图形处理器</b> & "Graphics" 'x'"#;
    let text: String = std::fs::read_to_string(&ids)
        .unwrap()
        .lines()
        .map(|l| match l.strip_prefix("15BF,\t") {
            Some(rest) => format!("15BF,\t{},\t{name}\n", &rest[..2]),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&ids, text).unwrap();
    let p = page(&root, dir.path());
    check_static(&p.html);
    assert!(
        !p.html.contains("<b>图形"),
        "markup from the machine reached the page"
    );
    let escaped = escape(name);
    assert!(
        p.html
            .contains(&format!(r#"<p class="model">{escaped}</p>"#))
    );
    assert!(
        p.html.contains(&format!("GPU 0: {escaped} at ")),
        "the SVG title"
    );
    picture(&p.html);
    screenshot(&p.file, "escaped-cjk", &[PASS_BG]);
}

/// The page's words as a reader sees them: no tags, no style sheet, no attribute values.
fn visible_text(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    if let (Some(a), Some(b)) = (rest.find("<style>"), rest.find("</style>")) {
        text.push_str(&rest[..a]);
        rest = &html[b + "</style>".len()..];
    }
    let mut out = String::new();
    text.push_str(rest);
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn cjk(s: &str) -> usize {
    s.chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count()
}

/// `--lang zh`: the page says `lang="zh-Hans"`, its own words are Chinese (ids, paths and the
/// findings of modules not yet translated may stay English), its markup — classes, ids,
/// `data-*` — is the English page's, and Chromium draws it.
#[test]
fn chinese_page_in_chinese_with_the_same_markup() {
    for (name, colours) in [
        ("mi300x-cpx-8gpu", &[HIVE_FILL, XGMI, WARN_BG][..]),
        ("kfd-permission-denied", &[FAIL_BG][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let en = page(&fixture(name), dir.path());
        let file = dir.path().join("zh.html");
        let r = run(probe()
            .args(["--lang", "zh", "--root"])
            .arg(fixture(name))
            .args(["report", "--format", "html", "-o"])
            .arg(&file));
        assert!(matches!(r.code, 0 | 1 | 3), "exit {}: {}", r.code, r.stderr);
        assert_eq!(r.stdout, "", "-o writes nothing to standard output");
        let html = std::fs::read_to_string(&file).unwrap();
        check_static(&html);
        assert!(html.contains("<html lang=\"zh-Hans\">"), "{name}");
        assert!(en.html.contains("<html lang=\"en\">"), "{name}");
        let text = visible_text(&html);
        assert!(cjk(&text) > 200, "{name}: {} CJK characters", cjk(&text));
        for english in [
            "Topology",
            "Layers",
            "Layer 1",
            "Root cause",
            "Source",
            "Profile",
            "Fingerprint",
            "Targets",
            "Compute units",
            "Firmware",
            "Named by",
            "Remedy:",
            "Evidence (",
            "Follows from",
            "Cannot work until",
            "static page",
            "Small boxes",
            "CPU node",
            "XGMI to",
            "No KFD topology",
        ] {
            assert!(
                !text.contains(english),
                "{name}: {english:?} on the Chinese page"
            );
        }
        // Every heading of the page's own is Chinese.
        let h2: Vec<&str> = html
            .match_indices("<h2>")
            .map(|(i, m)| {
                let rest = &html[i + m.len()..];
                &rest[..rest.find("</h2>").unwrap()]
            })
            .collect();
        assert_eq!(h2.len(), 3, "{name}: {h2:?}");
        assert!(h2.iter().all(|h| cjk(h) > 0), "{name}: {h2:?}");
        // The same picture and the same hooks as the English page.
        let (pz, pe) = (picture(&html), picture(&en.html));
        assert_eq!(pz.gpus.len(), pe.gpus.len());
        assert_eq!(pz.pairs, pe.pairs);
        assert_eq!(pz.cpu_links, pe.cpu_links);
        assert_eq!(pz.missing_slots, pe.missing_slots);
        let hooks = |h: &str| -> Vec<String> {
            h.match_indices(" data-")
                .chain(h.match_indices(" class=\""))
                .chain(h.match_indices(" id=\""))
                .map(|(i, _)| {
                    let rest = &h[i..];
                    let q = rest.find('"').unwrap() + 1;
                    rest[..q + rest[q..].find('"').unwrap()].to_owned()
                })
                .collect()
        };
        assert_eq!(hooks(&html), hooks(&en.html), "{name}: markup differs");
        screenshot(&file, &format!("{name}-zh"), colours);
    }
}

// Colours of the page's style sheet that a rendered screenshot must show.
const HIVE_FILL: [u8; 3] = [0xf3, 0xf0, 0xff];
const XGMI: [u8; 3] = [0xe8, 0x59, 0x0c];
const PASS_BG: [u8; 3] = [0xeb, 0xfb, 0xee];
const WARN_BG: [u8; 3] = [0xff, 0xf6, 0xe5];
const FAIL_BG: [u8; 3] = [0xff, 0xf0, 0xf0];

/// One Chromium at a time: the machines running this have few cores.
static CHROMIUM: Mutex<()> = Mutex::new(());

fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .chain([PathBuf::from("/usr/bin")])
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but chromium is not installed (scripts/test installs it)"
        );
        eprintln!(
            "SKIP: chromium not installed: no screenshot (apt-get install chromium fonts-noto-cjk)"
        );
    }
    found
}

/// Renders `html` in headless Chromium into `target/tmp/html-<name>.png` and checks the image
/// is a page: not blank, many colours, and the given style colours present.
fn screenshot(html: &Path, name: &str, colours: &[[u8; 3]]) {
    let Some(bin) = chromium() else { return };
    let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("html-{name}.png"));
    let _ = std::fs::remove_file(&png);
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let _one = CHROMIUM.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(&bin)
        .args([
            "--headless=new",
            "--no-sandbox", // as root (containers, CI)
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-dev-shm-usage",
            // The page must need nothing from the network: none is reachable.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1400,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    assert!(status.success(), "chromium: {status}\n{stderr}");
    let (w, h, pixels) = decode_png(
        &std::fs::read(&png)
            .unwrap_or_else(|e| panic!("no screenshot {}: {e}\n{stderr}", png.display())),
    );
    assert_eq!((w, h), (1400, 2000));
    let mut histogram: BTreeMap<[u8; 3], usize> = BTreeMap::new();
    for p in &pixels {
        *histogram.entry(*p).or_default() += 1;
    }
    let (background, most) = histogram.iter().max_by_key(|(_, n)| **n).unwrap();
    let share = 1.0 - *most as f64 / pixels.len() as f64;
    assert!(
        share > 0.05,
        "{}: only {:.1}% of the pixels differ from the background {background:02x?}",
        png.display(),
        share * 100.0
    );
    assert!(
        histogram.len() > 100,
        "{}: {} colours",
        png.display(),
        histogram.len()
    );
    for c in colours {
        let n = histogram.get(c).copied().unwrap_or(0);
        assert!(n > 50, "{}: colour {c:02x?} on {n} pixels", png.display());
    }
    eprintln!("screenshot: {}", png.display());
}

/// A PNG of 8-bit RGB or RGBA, not interlaced (what Chromium writes) → width, height, RGB.
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let (mut w, mut h, mut channels) = (0, 0, 0);
    let mut data = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = be(&bytes[at..]);
        let kind = &bytes[at + 4..at + 8];
        let body = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                w = be(body);
                h = be(&body[4..]);
                assert_eq!(body[8], 8, "bit depth");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("PNG colour type {t}"),
                };
                assert_eq!(body[12], 0, "interlaced");
            }
            b"IDAT" => data.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = w * channels;
    assert_eq!(raw.len(), h * (stride + 1), "image data size");
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(w * h);
    for row in raw.chunks(stride + 1) {
        let filter = row[0];
        let mut cur = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let add = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(add);
        }
        pixels.extend(cur.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = cur;
    }
    (w, h, pixels)
}
