//! One name per GPU (issue 18 item 4, README "Which GPU is which"): every output that names a
//! GPU — the report as text, markdown and HTML, `agents`, `topo` (both forms) and `ps` — names
//! it `GPU n[.p] (PCI address[, ROCr i])`, and one label never stands for two GPUs. The fixtures
//! are multi-GPU machines whose KFD order is not their PCI order (on the MI210s GPU 2 is
//! 0000:03:00.0, the lowest address), partitioned ones, and one with processes.

mod common;

use std::collections::BTreeMap;

use common::{fixture, probe, run};

/// Every `GPU label (address[, ROCr i])` in `text`, as (label, address, ROCr index).
fn names(text: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("GPU ") {
        let rest = &text[i + 4..];
        let label: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let Some(inner) = rest[label.len()..].strip_prefix(" (") else {
            continue;
        };
        let Some(inner) = inner.split(')').next() else {
            continue;
        };
        let mut parts = inner.split(", ");
        let address = parts.next().unwrap_or_default().to_owned();
        // Only PCI addresses: `GPU 0 (gfx90a)` would be another kind of text.
        if label.is_empty() || address.len() != 12 || address.as_bytes()[4] != b':' {
            continue;
        }
        let rocr = parts
            .next()
            .and_then(|p| p.strip_prefix("ROCr "))
            .map(str::to_owned);
        out.push((label.trim_end_matches('.').to_owned(), address, rocr));
    }
    out
}

fn output(name: &str, args: &[&str]) -> String {
    let r = run(probe()
        .env("COLUMNS", "1000")
        .arg("--root")
        .arg(fixture(name))
        .args(args));
    assert!(r.code != 2, "{name} {args:?}: {}", r.stderr);
    r.stdout
}

#[test]
fn every_output_names_each_gpu_the_same_way() {
    let commands: &[&[&str]] = &[
        &["-v"],
        &["--format", "markdown"],
        &["--format", "html"],
        &["agents"],
        &["topo"],
        &["topo", "--nodes"],
        &["ps"],
    ];
    for fixture in [
        "ras-uncorrectable",
        "mi210-xgmi-8gpu",
        "mi300x-cpx-8gpu",
        "mi308x-busy",
    ] {
        // label → (address, ROCr index) and the command that first named it so.
        let mut seen: BTreeMap<String, (String, Option<String>, String)> = BTreeMap::new();
        for args in commands {
            let text = output(fixture, args);
            for (label, address, rocr) in names(&text) {
                let by = args.join(" ");
                let (a, r, first) = seen
                    .entry(label.clone())
                    .or_insert_with(|| (address.clone(), rocr.clone(), by.clone()));
                assert_eq!(
                    (&address, rocr.as_ref().or(r.as_ref())),
                    (&*a, r.as_ref().or(rocr.as_ref())),
                    "{fixture}: GPU {label} is ({address}, ROCr {rocr:?}) in `{by}` but \
                     ({a}, ROCr {r:?}) in `{first}`"
                );
                if r.is_none() {
                    *r = rocr;
                }
            }
        }
        assert!(!seen.is_empty(), "{fixture}: no GPU named");
    }

    // KFD order, not PCI order, and the same words in the report, `agents` and `topo`.
    let gpu0 = "GPU 0 (0000:63:00.0, ROCr 0)";
    let gpu2 = "GPU 2 (0000:03:00.0, ROCr 2)";
    assert!(output("ras-uncorrectable", &[]).contains(gpu0));
    for args in [&["agents"][..], &["topo"], &["topo", "--nodes"]] {
        let text = output("mi210-xgmi-8gpu", args);
        assert!(
            text.contains(gpu0) && text.contains(gpu2),
            "{args:?}: {text}"
        );
    }
    // A partition and the process on it, in `ps` and `topo --nodes` alike.
    let ps = output("mi308x-busy", &["ps"]);
    assert!(
        ps.contains("GPU 1.0 (0000:80:00.0, ROCr 4): KFD node 6, gpu_id 22879"),
        "{ps}"
    );
    assert!(
        output("mi308x-busy", &["topo", "--nodes"])
            .contains("GPU 1.0 (0000:80:00.0, ROCr 4): KFD node 6")
    );
}

/// Whether `text` names something by its KFD node number ("node 7", "nodes 2, 3", "节点 7").
fn speaks_of_a_node(text: &str) -> bool {
    ["node ", "nodes ", "node(s) ", "节点 "].iter().any(|word| {
        text.match_indices(word)
            .any(|(i, _)| text[i + word.len()..].starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// No finding of any fixture names a GPU by its KFD node: in both languages, summaries,
/// evidence and remedies use the GPU's name. Only sentences about the topology's own numbering
/// may speak of nodes: a variable that names a libhsakmt node, two nodes of one location, the
/// nodes a partitioned GPU is made of.
#[test]
fn no_finding_names_a_gpu_by_its_node() {
    let dir = fixture("");
    let mut fixtures: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("fixture.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 50, "{fixtures:?}");
    let mut seen_node_words = 0;
    for name in &fixtures {
        for lang in ["en", "zh"] {
            let text = output(name, &["--json", "--lang", lang]);
            let doc: serde_json::Value = serde_json::from_str(&text).expect(name);
            for f in doc["findings"].as_array().into_iter().flatten() {
                let mut texts: Vec<&str> = vec![f["summary"].as_str().unwrap_or_default()];
                texts.extend(f["remedy"].as_str());
                for e in f["evidence"].as_array().into_iter().flatten() {
                    // What the topology directory itself says is in its own numbering.
                    if e["source"].as_str() != Some("/sys/class/kfd/kfd/topology/nodes") {
                        texts.extend(e["value"].as_str());
                    }
                    // Sources are locators: a sysfs path has its node, a probe's result the GPU.
                    if e["source"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("active:"))
                    {
                        texts.extend(e["source"].as_str());
                    }
                }
                for t in texts.into_iter().filter(|t| speaks_of_a_node(t)) {
                    seen_node_words += 1;
                    assert!(
                        t.contains("libhsakmt") || t.contains("location_id"),
                        "{name} ({lang}) {}: {t}",
                        f["id"]
                    );
                }
            }
        }
    }
    // The allowed sentences exist, so the scan reads what it means to.
    assert!(seen_node_words > 0);
}
