//! `cargo build --release -p rocm-probe-cli && cargo run --release -p rocm-probe-bench --bin inspect [-- FILE [ITERATIONS]]`
//!
//! ARCHITECTURE.md §9: `rocm-probe inspect` of a 1.3 GB fat-binary library at least 10x
//! faster than `roc-obj-ls`, with peak RSS under 64 MiB. Both run as processes on the same file, warm
//! (page cache), in the same run; each time is the median of ITERATIONS runs. The peak RSS is
//! `inspect`'s `ru_maxrss` (`getrusage(RUSAGE_CHILDREN)` in a fresh process that ran only it),
//! the largest of three runs. Also checks that both list the same set of targets.
//!
//! FILE defaults to Debian's `librocsparse.so.0` (package `librocsparse0`, ROCm 5.3).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocm_probe_bench::{answer_rss_of, fail, median, peak_rss_kib, probe_bin, run_quiet};

const DEFAULT_FILE: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0";
const ROC_OBJ_LS: &str = "/usr/bin/roc-obj-ls";
/// ARCHITECTURE.md §9 budgets.
const SPEEDUP: f64 = 10.0;
const RSS_MIB: f64 = 64.0;
/// A target for the verdict, so that `inspect` does all its work without reading this
/// machine's (absent) KFD topology.
const TARGET: &str = "gfx90a:sramecc+:xnack-";

fn inspect_cmd(bin: &Path, file: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args(["inspect", "--target", TARGET]).arg(file);
    c
}

/// Targets as `inspect --json` lists them.
fn inspect_targets(bin: &Path, file: &Path) -> (BTreeSet<String>, usize, usize) {
    let out = inspect_cmd(bin, file)
        .arg("--json")
        .output()
        .unwrap_or_else(|e| fail(&e.to_string()));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| fail(&format!("inspect --json: {e}")));
    let bundles = doc["files"][0]["bundles"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let entries: Vec<&serde_json::Value> = bundles
        .iter()
        .flat_map(|b| b["entries"].as_array().into_iter().flatten())
        .collect();
    let targets = entries
        .iter()
        .filter_map(|e| e["target"].as_str().map(str::to_owned))
        .collect();
    (targets, bundles.len(), entries.len())
}

/// Targets as `roc-obj-ls` lists them (the part of each entry ID after `--`).
fn roc_obj_ls_targets(file: &Path) -> (BTreeSet<String>, usize) {
    let out = Command::new(ROC_OBJ_LS)
        .arg(file)
        .output()
        .unwrap_or_else(|e| fail(&e.to_string()));
    let text = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let targets = ids
        .iter()
        .filter(|id| id.contains("amdgcn-amd-amdhsa"))
        .filter_map(|id| id.split_once("--").map(|(_, t)| t.to_owned()))
        .collect();
    (targets, ids.len())
}

/// Peak RSS of one `inspect` run, KiB.
fn inspect_rss_kib(bin: &Path, file: &Path) -> i64 {
    let args = [
        "inspect".into(),
        "--target".into(),
        TARGET.into(),
        file.into(),
    ];
    peak_rss_kib(bin, &args)
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if answer_rss_of(&argv) {
        return;
    }
    if cfg!(debug_assertions) {
        println!("(debug build: a smoke run, not a measurement; use --release for the figures)");
    }
    let mut args = argv.into_iter();
    let file = PathBuf::from(args.next().unwrap_or_else(|| DEFAULT_FILE.to_owned()));
    let iterations: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(11)
        .max(1);
    let size = std::fs::metadata(&file)
        .unwrap_or_else(|e| {
            fail(&format!(
                "{}: {e} (Debian package librocsparse0 has the default file)",
                file.display()
            ))
        })
        .len();
    let bin = probe_bin();
    let have_oracle = Path::new(ROC_OBJ_LS).exists();

    // Warm: the first runs read what they need into the page cache.
    let (ours, bundles, entries) = inspect_targets(&bin, &file);
    let inspect = median(
        (0..iterations)
            .map(|_| run_quiet(&mut inspect_cmd(&bin, &file)))
            .collect(),
    );
    let rss_mib = (0..3)
        .map(|_| inspect_rss_kib(&bin, &file))
        .max()
        .unwrap_or(0) as f64
        / 1024.0;

    println!("file:        {} ({size} bytes)", file.display());
    println!(
        "inspect:     {:>10.3} ms (median of {iterations}, warm): {bundles} bundles, {entries} entries, {} targets",
        inspect.as_secs_f64() * 1e3,
        ours.len()
    );
    let release = !cfg!(debug_assertions);
    println!(
        "inspect RSS: {rss_mib:>10.1} MiB peak (budget < {RSS_MIB:.0} MiB: {})",
        if rss_mib < RSS_MIB { "within" } else { "OVER" }
    );
    if !have_oracle {
        println!("roc-obj-ls:  not installed (Debian package hipcc): no ratio");
        return;
    }
    let (theirs, their_entries) = roc_obj_ls_targets(&file);
    let roc = median(
        (0..iterations)
            .map(|_| run_quiet(Command::new(ROC_OBJ_LS).arg(&file)))
            .collect(),
    );
    println!(
        "roc-obj-ls:  {:>10.3} ms (median of {iterations}, warm): {their_entries} entries, {} targets",
        roc.as_secs_f64() * 1e3,
        theirs.len()
    );
    let same = ours == theirs && entries == their_entries;
    println!(
        "targets:     {} ({})",
        if same { "identical" } else { "DIFFERENT" },
        ours.iter().cloned().collect::<Vec<_>>().join(" ")
    );
    let ratio = roc.as_secs_f64() / inspect.as_secs_f64().max(1e-9);
    if release {
        println!(
            "ratio:       {ratio:.1}x faster than roc-obj-ls (budget >= {SPEEDUP:.0}x: {})",
            if ratio >= SPEEDUP { "within" } else { "OVER" }
        );
    } else {
        println!("ratio:       {ratio:.1}x (debug build: not a measurement; use --release)");
    }
    if !same {
        std::process::exit(1);
    }
}
