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
