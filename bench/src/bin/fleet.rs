//! `cargo build --release -p rocm-probe-cli && cargo run --release -p rocm-probe-bench --bin fleet [-- NODES [ITERATIONS]]`
//!
//! Issue #20 item 3: `rocm-probe fleet` on 10,000 nodes' reports in under 2 s and 512 MiB. The
//! reports are made from the fixtures' own (`report --json` of each, by the binary built next
//! to this one) and varied as a fleet is: most nodes alike (MI300X; a few MI308X and MI210), half still
//! on schema 1 and half on schema 2 (with their host names), a few with an older ROCm, an older
//! MEC firmware on one GPU or another partition mode, a few failing (the failing fixtures'
//! reports), a few files cut short; a hundred per rack directory. They are written to a
//! temporary directory, and `fleet` on that directory (a process, output discarded) is timed
//! against merely reading the same files once in this process, warm, each the median of
//! ITERATIONS runs. The peak RSS is `fleet`'s `ru_maxrss`, measured as `inspect`'s benchmark
//! does (a fresh copy of this binary that runs only it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rocm_probe_bench::{answer_rss_of, fail, median, peak_rss_kib, probe_bin, run_quiet};
use serde_json::{Value, json};

/// Issue #20 item 3 targets.
const TIME_S: f64 = 2.0;
const RSS_MIB: f64 = 512.0;

/// The healthy fleet: (fixture, share in percent). One cluster of MI300X nodes, a few nodes
/// of other models racked with them (outliers by GPU model).
const BASES: [(&str, u64); 3] = [
    ("mi300x-cpx-8gpu", 98),
    ("mi308x-cpx-8gpu", 1),
    ("mi210-xgmi-8gpu", 1),
];
/// Nodes that fail or warn, each a fixture of a real failure.
const FAILING: [&str; 5] = [
    "ras-uncorrectable",
    "kfd-missing",
    "pcie-link-x8",
    "kmsg-ras-uncorrectable-mi50",
    "render-node-missing",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// A fixture's report, as the binary prints it.
fn report(bin: &Path, name: &str) -> Value {
    let out = Command::new(bin)
        .arg("--root")
        .arg(fixtures().join(name))
        .arg("--json")
        .output()
        .unwrap_or_else(|e| fail(&e.to_string()));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| fail(&format!("report of {name}: {e}")))
}

/// The node's report with its host name (schema 2, as the binary prints it).
fn v2(mut d: Value, host: &str) -> Value {
    d["source"]["host"] = json!(host);
    d
}

/// The report as a node still on schema 1 wrote it (docs/json-changelog.md read backwards): no
/// host or time, the counts as `facts.gpus`/`facts.agents`, the GPU list in
/// `facts.config.gpus`, device ids as numbers.
fn v1(mut d: Value) -> Value {
    if d["schema_version"] != 2 {
        return d;
    }
    d["schema_version"] = json!(1);
    if let Some(o) = d.as_object_mut() {
        o.remove("generated_at");
    }
    if let Some(source) = d["source"].as_object_mut() {
        source.remove("host");
    }
    let Some(facts) = d["facts"].as_object_mut() else {
        return d;
    };
    let mut gpus = facts.remove("gpus").unwrap_or_else(|| json!([]));
    for g in gpus.as_array_mut().into_iter().flatten() {
        let id = g["device_id"].as_str().map(|h| h.trim_start_matches("0x"));
        if let Some(id) = id.and_then(|h| u64::from_str_radix(h, 16).ok()) {
            g["device_id"] = json!(id);
        }
    }
    if let Some(n) = facts.remove("gpu_count") {
        facts.insert("gpus".into(), n);
    }
    if let Some(n) = facts.remove("agent_count") {
        facts.insert("agents".into(), n);
    }
    if let Some(config) = facts.get_mut("config").and_then(Value::as_object_mut) {
        config.insert("gpus".into(), gpus);
    }
    d
}

/// xorshift64*: the same fleet on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn percent(&mut self) -> u64 {
        self.next() % 100
    }
}

/// The GPU list of either schema.
fn gpus_of(d: &mut Value) -> Option<&mut Vec<Value>> {
    if d["facts"]["gpus"].is_array() {
        d["facts"]["gpus"].as_array_mut()
    } else {
        d["facts"]["config"]["gpus"].as_array_mut()
    }
}

/// What was written.
struct Fleet {
    files: Vec<PathBuf>,
    bytes: u64,
    failing: usize,
    outliers: usize,
    cut: usize,
}

fn generate(bin: &Path, nodes: usize, dir: &Path) -> Fleet {
    let bases: Vec<(Value, u64)> = BASES.iter().map(|(f, w)| (report(bin, f), *w)).collect();
    let failing: Vec<Value> = FAILING.iter().map(|f| report(bin, f)).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut fleet = Fleet {
        files: Vec::with_capacity(nodes),
        bytes: 0,
        failing: 0,
        outliers: 0,
        cut: 0,
    };
    for i in 0..nodes {
        let rack = dir.join(format!("rack{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&rack).unwrap_or_else(|e| fail(&e.to_string()));
        }
        let mut doc = if rng.percent() < 2 {
            fleet.failing += 1;
            failing[(rng.next() % failing.len() as u64) as usize].clone()
        } else {
            let mut pick = rng.percent();
            let mut chosen = &bases[0].0;
            for (d, w) in &bases {
                if pick < *w {
                    chosen = d;
                    break;
                }
                pick -= w;
            }
            let mut d = chosen.clone();
            // A roll-out half done, a replaced GPU's firmware, a node left in another mode.
            match rng.next() % 100 {
                0 => {
                    d["facts"]["config"]["rocm"] = json!("6.3.3");
                    fleet.outliers += 1;
                }
                1 => {
                    if let Some(g) = gpus_of(&mut d).and_then(|g| g.get_mut(3)) {
                        g["mec_firmware"] = json!(170);
                        fleet.outliers += 1;
                    }
                }
                2 if d["facts"]["config"]["compute_partition"].is_string() => {
                    d["facts"]["config"]["compute_partition"] = json!("SPX");
                    fleet.outliers += 1;
                }
                _ => {}
            }
            d
        };
        let host = format!("gpu-node{i:05}");
        let path = if i % 2 == 0 {
            doc = v2(doc, &host);
            rack.join(format!("{:016x}.json", rng.next()))
        } else {
            doc = v1(doc);
            rack.join(format!("{host}.json"))
        };
        let mut text = if i % 4 == 0 {
            doc.to_string()
        } else {
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        };
        // A node that died while writing its report.
        if i % 1000 == 999 {
            text.truncate(text.len() / 2);
            fleet.cut += 1;
        }
        fleet.bytes += text.len() as u64;
        std::fs::write(&path, text).unwrap_or_else(|e| fail(&e.to_string()));
        fleet.files.push(path);
    }
    fleet
}

fn fleet_cmd(bin: &Path, dir: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("fleet").arg(dir);
    c
}

/// Peak RSS of one `fleet` run, KiB.
fn fleet_rss_kib(bin: &Path, dir: &Path) -> i64 {
    peak_rss_kib(bin, &["fleet".into(), dir.into()])
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
    let nodes: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
        .max(1);
    let iterations: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(5).max(1);
    let bin = probe_bin();
    let tmp = tempfile::tempdir().unwrap_or_else(|e| fail(&e.to_string()));
    let started = Instant::now();
    let fleet = generate(&bin, nodes, tmp.path());
    println!(
        "reports:     {nodes} in {} rack directories, {:.1} MiB, schema 1 and 2 half each; \
         {} failing, {} made to differ, {} cut short (made in {:.1} s)",
        nodes.div_ceil(100),
        fleet.bytes as f64 / f64::from(1 << 20),
        fleet.failing,
        fleet.outliers,
        fleet.cut,
        started.elapsed().as_secs_f64()
    );

    // What the view says must be what was made: every node read but the cut ones, which it
    // lists, and the outliers found.
    let out = fleet_cmd(&bin, tmp.path())
        .arg("--json")
        .output()
        .unwrap_or_else(|e| fail(&e.to_string()));
    let view: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| fail(&format!("fleet --json: {e}")));
    let read = view["nodes"].as_array().map_or(0, Vec::len);
    let refused = view["refused"].as_array().map_or(0, Vec::len);
    let outliers = view["outliers"].as_array().map_or(0, Vec::len);
    if read + fleet.cut != nodes || refused != fleet.cut {
        fail(&format!(
            "fleet read {read} and refused {refused} of {nodes} reports ({} cut)",
            fleet.cut
        ));
    }
    println!(
        "view:        {read} nodes read, {refused} refused, {} configurations, {outliers} nodes differ from the majority",
        view["configurations"].as_array().map_or(0, Vec::len)
    );

    let floor = median(
        (0..iterations)
            .map(|_| {
                let start = Instant::now();
                let mut bytes = 0;
                for f in &fleet.files {
                    bytes += std::fs::read(f).map_or(0, |b| b.len());
                }
                std::hint::black_box(bytes);
                start.elapsed()
            })
            .collect(),
    );
    let time = median(
        (0..iterations)
            .map(|_| run_quiet(&mut fleet_cmd(&bin, tmp.path())))
            .collect(),
    );
    let rss_mib = fleet_rss_kib(&bin, tmp.path()) as f64 / 1024.0;
    let ratio = time.as_secs_f64() / floor.as_secs_f64().max(1e-9);
    println!(
        "read floor:  {:>10.1} ms (median of {iterations}, warm)",
        floor.as_secs_f64() * 1e3
    );
    let release = !cfg!(debug_assertions);
    let verdict = |ok: bool| match (release, ok) {
        (false, _) => "debug build: not a measurement",
        (true, true) => "within",
        (true, false) => "OVER",
    };
    println!(
        "fleet:       {:>10.1} ms (median of {iterations}, warm): {ratio:.2}x the read floor (target < {TIME_S:.0} s: {})",
        time.as_secs_f64() * 1e3,
        verdict(time.as_secs_f64() < TIME_S)
    );
    println!(
        "fleet RSS:   {rss_mib:>10.1} MiB peak (target < {RSS_MIB:.0} MiB: {})",
        verdict(rss_mib < RSS_MIB)
    );
}
