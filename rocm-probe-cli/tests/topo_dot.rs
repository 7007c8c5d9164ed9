//! `rocm-probe topo --format dot`: the HTML report's topology picture for Graphviz. Checked by the
//! real Graphviz (`dot`, Debian `graphviz`): every fixture with a topology renders without a
//! warning, and on the two XGMI machines the structure and the layout are those of the HTML
//! picture — one node per physical GPU with a cell per partition and a dashed cell for a missing
//! one, hives as clusters, one unlabelled edge per linked pair styled by its kind, and no edge
//! running through a hive that holds neither of its ends.
//!
//! Graphviz absent: with `CI` set the test fails (CI installs it), else it prints `skipped: …`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{fixture, probe, run};
use serde_json::Value;

const DOT: &str = "/usr/bin/dot";

fn have_dot() -> bool {
    if Path::new(DOT).exists() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "CI installs graphviz");
    eprintln!("skipped: Graphviz not installed");
    false
}

fn picture(name: &str) -> String {
    let r = run(probe()
        .arg("--root")
        .arg(fixture(name))
        .args(["topo", "--format", "dot"]));
    assert_eq!(r.code, 0, "{name}: {}", r.stderr);
    r.stdout
}

/// Graphviz's output in `format`, asserting it ran without a word on stderr.
fn graphviz(name: &str, dot: &str, format: &str) -> String {
    let mut child = Command::new(DOT)
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{name}: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The edge lines that draw something (not the invisible ones that only place nodes).
fn drawn_edges(dot: &str) -> Vec<&str> {
    dot.lines()
        .filter(|l| l.contains(" -- ") && !l.contains("style=invis"))
        .collect()
}

/// Hive cluster name → the GPU node names declared in it.
fn hives(dot: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, BTreeSet<String>)> = None;
    for line in dot.lines() {
        if let Some(rest) = line.strip_prefix("  subgraph cluster_hive_") {
            current = Some((rest.trim_end_matches(" {").to_owned(), BTreeSet::new()));
        } else if line == "  }" {
            if let Some((name, gpus)) = current.take() {
                out.insert(name, gpus);
            }
        } else if let Some((_, gpus)) = current.as_mut() {
            let node = line.trim();
            if node.starts_with("gpu") && node.contains(" [label=<") {
                gpus.insert(node.split(' ').next().unwrap().to_owned());
            }
        }
    }
    out
}

#[test]
fn every_fixture_with_a_topology_renders() {
    if !have_dot() {
        return;
    }
    let mut rendered = 0;
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let r = run(probe()
            .arg("--root")
            .arg(&dir)
            .args(["topo", "--format", "dot"]));
        // No KFD topology (or not a machine tree): nothing to draw. A topology of CPU nodes only
        // is drawn, and exits 1 (no GPU), like `agents`.
        if r.stdout.is_empty() {
            assert_ne!(r.code, 0, "{name}");
            continue;
        }
        assert!(r.code == 0 || r.code == 1, "{name}: {}", r.stderr);
        let svg = graphviz(&name, &r.stdout, "svg");
        assert!(svg.contains("<svg"), "{name}");
        rendered += 1;
    }
    assert!(rendered >= 100, "only {rendered} fixtures have a topology");
}

#[test]
fn mi300x_cpx_gpus_hold_their_partitions_and_the_missing_one_is_marked() {
    let d = picture("mi300x-cpx-8gpu");
    // One node per physical GPU, no node per partition.
    let gpus: Vec<&str> = d
        .lines()
        .filter(|l| l.contains(" [label=<<TABLE"))
        .collect();
    assert_eq!(gpus.len(), 8, "{d}");
    // 63 partitions: eight cells each, but GPU 7 has seven and a dashed warning cell.
    let cells = |l: &str| l.matches("<TD>").count();
    assert_eq!(gpus.iter().map(|l| cells(l)).sum::<usize>(), 63);
    let missing: Vec<&&str> = gpus
        .iter()
        .filter(|l| l.contains("<TD STYLE=\"dashed\""))
        .collect();
    assert_eq!(missing.len(), 1, "{d}");
    assert!(
        missing[0].trim_start().starts_with("gpu7 "),
        "{}",
        missing[0]
    );
    assert_eq!(missing[0].matches("STYLE=\"dashed\"").count(), 1);
    assert!(missing[0].contains("<B>GPU 7 · gfx942</B><BR/>0000:e5:00.0"));
    // One hive of all eight.
    let h = hives(&d);
    assert_eq!(h.len(), 1, "{d}");
    assert_eq!(h.values().next().unwrap().len(), 8);
    // 28 XGMI pairs and a link from each GPU to its CPU node; no edge carries a label.
    let edges = drawn_edges(&d);
    assert!(edges.iter().all(|e| !e.contains("label=")), "{d}");
    let xgmi = edges.iter().filter(|e| e.contains("#e8590c")).count();
    assert_eq!(xgmi, 28);
    assert_eq!(
        edges
            .iter()
            .filter(|e| e.trim_start().starts_with("cpu"))
            .count(),
        8
    );
    assert_eq!(edges.len(), 36);
    // The words are the tooltip, as the HTML lines' titles.
    assert!(
        d.contains("tooltip=\"GPU 0 – GPU 7: XGMI (56 node pair(s) linked)\""),
        "{d}"
    );
    if have_dot() {
        assert_layout("mi300x-cpx-8gpu", &d);
    }
}

#[test]
fn mi210_hives_are_clusters_and_pcie_links_are_dashed() {
    let d = picture("mi210-xgmi-8gpu");
    let h = hives(&d);
    let sets: Vec<Vec<&str>> = h
        .values()
        .map(|g| g.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        sets,
        [
            vec!["gpu0", "gpu1", "gpu2", "gpu3"],
            vec!["gpu4", "gpu5", "gpu6", "gpu7"]
        ]
    );
    assert!(
        d.contains("label=\"XGMI hive 0xaefdf8293fefa6b7 · 4 GPUs\""),
        "{d}"
    );
    // Single-partition GPUs: the cell says which KFD node; nothing is missing.
    assert!(d.contains("<TD>node 2</TD>"), "{d}");
    assert!(!d.contains("STYLE=\"dashed\""));
    let edges = drawn_edges(&d);
    assert!(edges.iter().all(|e| !e.contains("label=")), "{d}");
    let kind = |colour: &str| edges.iter().filter(|e| e.contains(colour)).count();
    assert_eq!(kind("#e8590c"), 12, "two hives of four: 2 × 6 XGMI pairs");
    assert_eq!(kind("#1c7ed6"), 16, "4 × 4 PCIe pairs between the hives");
    assert!(
        edges
            .iter()
            .filter(|e| e.contains("#1c7ed6"))
            .all(|e| e.contains("style=dashed"))
    );
    assert_eq!(edges.len(), 12 + 16 + 8);
    if have_dot() {
        assert_layout("mi210-xgmi-8gpu", &d);
    }
}

/// Graphviz's layout (`-Tjson`): an edge between two GPUs of a hive stays inside that hive's box,
/// and no edge runs through a hive that holds neither of its ends.
fn assert_layout(name: &str, dot: &str) {
    let layout: Value = serde_json::from_str(&graphviz(name, dot, "json")).unwrap();
    let objects = layout["objects"].as_array().unwrap();
    let hives: Vec<(&str, [f64; 4], BTreeSet<u64>)> = objects
        .iter()
        .filter(|o| {
            o["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("cluster_hive_"))
        })
        .map(|o| {
            let bb: Vec<f64> = o["bb"]
                .as_str()
                .unwrap()
                .split(',')
                .map(|v| v.parse().unwrap())
                .collect();
            let nodes = o["nodes"].as_array().unwrap().iter();
            (
                o["name"].as_str().unwrap(),
                [bb[0], bb[1], bb[2], bb[3]],
                nodes.map(|n| n.as_u64().unwrap()).collect(),
            )
        })
        .collect();
    assert!(!hives.is_empty(), "{name}");
    let inside = |p: (f64, f64), bb: &[f64; 4], margin: f64| {
        bb[0] - margin < p.0 && p.0 < bb[2] + margin && bb[1] - margin < p.1 && p.1 < bb[3] + margin
    };
    let mut checked = 0;
    for e in layout["edges"].as_array().unwrap() {
        if e["style"] == "invis" {
            continue;
        }
        let ends = [e["tail"].as_u64().unwrap(), e["head"].as_u64().unwrap()];
        // Spline points, "x,y" separated by spaces; several splines by ';'; ends as "e,x,y".
        let points: Vec<(f64, f64)> = e["pos"]
            .as_str()
            .unwrap()
            .split([' ', ';'])
            .filter(|p| !p.is_empty())
            .map(|p| {
                let xy: Vec<f64> = p.split(',').filter_map(|v| v.parse().ok()).collect();
                (xy[xy.len() - 2], xy[xy.len() - 1])
            })
            .collect();
        for (hive, bb, members) in &hives {
            let own = ends.iter().filter(|n| members.contains(n)).count();
            if own == 2 {
                assert!(
                    points.iter().all(|p| inside(*p, bb, 1.0)),
                    "{name}: an edge of {hive} leaves it: {e}"
                );
            } else if own == 0 {
                assert!(
                    !points.iter().any(|p| inside(*p, bb, -1.0)),
                    "{name}: an edge crosses {hive}, which holds neither end: {e}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked > 0, "{name}");
}

/// A marketing name is the machine's text: DOT and HTML-like label syntax in it stays text, and
/// Graphviz still parses the picture.
#[test]
fn hostile_names_stay_text_in_the_picture() {
    let (_scratch, root) = common::copy_fixture("mi308x-busy");
    let ids = root.join("usr/share/libdrm/amdgpu.ids");
    let evil = "x\"]; evil [label=\"y\\ <B>&amp; } \u{1b}[31m";
    let text = std::fs::read_to_string(&ids)
        .unwrap()
        .replace("AMD Instinct MI308X", evil)
        .replace("AMD Instinct MI300X", evil);
    std::fs::write(&ids, text).unwrap();
    let r = run(probe()
        .arg("--root")
        .arg(&root)
        .args(["topo", "--format", "dot"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains('\u{1b}'));
    // Quoted for DOT in the tooltip: the quote and the backslash escaped.
    assert!(
        r.stdout
            .contains("tooltip=\"GPU 0: x\\\"]; evil [label=\\\"y\\\\ <B>&amp; }"),
        "{}",
        r.stdout
    );
    if have_dot() {
        // No node `evil` was forged: Graphviz names every node in the SVG's titles.
        let svg = graphviz("hostile", &r.stdout, "svg");
        assert!(!svg.contains("<title>evil</title>"), "{svg}");
        assert_eq!(svg.matches("class=\"node\"").count(), 8 + 2);
    }
}
