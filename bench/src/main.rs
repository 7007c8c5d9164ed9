//! `cargo run --release -p rocm-probe-bench [-- FIXTURE [ITERATIONS]]`
//!
//! Measures, in one run, the whole passive report of a fixture against its read floor: the
//! time to merely open and read the same files once and list the same directories, with
//! nothing else (ARCHITECTURE.md §9: the report must stay within 2x). Both run warm (page
//! cache), each the median of ITERATIONS runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rocm_probe::report::Options;
use rocm_probe::source::record::Record;
use rocm_probe::{Report, Source};

/// ARCHITECTURE.md §9 budget: report time / read-floor time.
const BUDGET: f64 = 2.0;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(iterations: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..iterations)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let fixture = args.next().map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mi300x-cpx-8gpu"),
        PathBuf::from,
    );
    let iterations: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(21)
        .max(1);
    let Ok(source) = Source::fixture(&fixture) else {
        eprintln!(
            "rocm-probe-bench: cannot use {} as a fixture",
            fixture.display()
        );
        std::process::exit(2);
    };

    // What the report reads, resolved to real paths once so the floor does no resolution work.
    let (recording, recorder) = source.record();
    let _ = Report::collect(&recording, Options::default());
    let root = rocm_probe::SysRoot::fixture(&fixture);
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for r in recorder.records() {
        match r {
            Record::File { path, .. } => files.extend(root.resolve(&path).ok()),
            Record::Dir { path, .. } => dirs.extend(root.resolve(&path).ok()),
            _ => {}
        }
    }
    files.sort();
    files.dedup();
    dirs.sort();
    dirs.dedup();

    let floor = time(iterations, || {
        let mut bytes = 0;
        for f in &files {
            bytes += std::fs::read(f).map_or(0, |b| b.len());
        }
        for d in &dirs {
            bytes += std::fs::read_dir(d).map_or(0, Iterator::count);
        }
        bytes
    });
    let report = time(iterations, || {
        let source = Source::fixture(&fixture).expect("fixture checked above");
        Report::collect(&source, Options::default())
    });
    let ratio = report.as_secs_f64() / floor.as_secs_f64().max(1e-9);
    println!("fixture:     {}", fixture.display());
    println!(
        "reads:       {} files, {} directory listings",
        files.len(),
        dirs.len()
    );
    println!(
        "read floor:  {:>10.3} ms (median of {iterations})",
        floor.as_secs_f64() * 1e3
    );
    println!(
        "report:      {:>10.3} ms (median of {iterations})",
        report.as_secs_f64() * 1e3
    );
    if cfg!(debug_assertions) {
        // The CI smoke run: proves the benchmark runs, says nothing about speed.
        println!("ratio:       {ratio:.2}x (debug build: not a measurement; use --release)");
    } else {
        println!(
            "ratio:       {ratio:.2}x the read floor (budget {BUDGET:.1}x: {})",
            if ratio <= BUDGET { "within" } else { "OVER" }
        );
    }
}
