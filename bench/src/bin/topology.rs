//! `cargo run --release -p rocm-probe-bench --bin topology [-- ITERATIONS [MAX_NODES]]`
//!
//! Three measurements, each printed with its ratio (ARCHITECTURE.md §9):
//! 1. `rocm-probe targets` vs Debian's `rocm_agent_enumerator` on the same KFD tree, both run as
//!    processes inside the same private mount namespace with the fixture's `kfd/` mounted at
//!    `/sys/class/kfd` (as the oracle test does);
//! 2. scaling: synthetic topologies of 1, 8, 64 and 256 GPU nodes cloned from a real MI300X node
//!    (all-to-all links, so files grow with the square of the nodes), time per file read;
//! 3. files opened per report run (`strace`) vs distinct files the run needs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rocm_probe::report::Options;
use rocm_probe::source::record::Record;
use rocm_probe::{Report, Source};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn probe_bin() -> Option<PathBuf> {
    // The release binary next to this one (cargo builds both for `--release`).
    let me = std::env::current_exe().ok()?;
    let bin = me.parent()?.join("rocm-probe");
    bin.exists().then_some(bin)
}

/// Runs `cmd` (a shell word list) inside a private mount namespace where `kfd` is mounted at
/// `/sys/class/kfd`, `n` times, and returns the median wall time of one run.
fn in_namespace(kfd: &Path, cmd: &str, n: usize) -> Option<Duration> {
    // bash's EPOCHREALTIME reads the clock without forking, so only the command is timed.
    let script = format!(
        "set -e; mount -t tmpfs tmpfs /sys/class; mkdir -p /sys/class/kfd; \
         mount --bind \"$1\" /sys/class/kfd; cd /; \
         for i in $(seq {n}); do s=$EPOCHREALTIME; {cmd} >/dev/null 2>&1 || true; \
         e=$EPOCHREALTIME; echo \"$s $e\"; done"
    );
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "bash",
            "-c",
            &script,
            "bash",
        ])
        .arg(kfd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "namespace run failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    let times: Vec<Duration> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (s, e) = l.split_once(' ')?;
            let (s, e): (f64, f64) = (s.parse().ok()?, e.parse().ok()?);
            Some(Duration::from_secs_f64((e - s).max(0.0)))
        })
        .collect();
    (!times.is_empty()).then(|| median(times))
}

fn targets_vs_enumerator(iterations: usize) {
    println!("== targets vs rocm_agent_enumerator (mi300x-cpx-8gpu, 65 nodes)");
    let kfd = fixtures().join("mi300x-cpx-8gpu/sys/class/kfd");
    let Some(bin) = probe_bin() else {
        println!("   skipped: build the CLI too (cargo build --release -p rocm-probe-cli)");
        return;
    };
    if !Path::new("/usr/bin/rocm_agent_enumerator").exists() {
        println!("   skipped: rocm_agent_enumerator not installed (Debian package rocminfo)");
        return;
    }
    let ours = in_namespace(&kfd, &format!("{} targets", bin.display()), iterations);
    let theirs = in_namespace(&kfd, "/usr/bin/rocm_agent_enumerator", iterations);
    match (ours, theirs) {
        (Some(o), Some(t)) => {
            let ratio = t.as_secs_f64() / o.as_secs_f64();
            println!(
                "   rocm-probe targets:      {:>9.2} ms (median of {iterations})",
                ms(o)
            );
            println!(
                "   rocm_agent_enumerator:   {:>9.2} ms (median of {iterations})",
                ms(t)
            );
            println!(
                "   ratio: {ratio:.1}x faster (target 30x: {})",
                if ratio >= 30.0 { "met" } else { "NOT met" }
            );
        }
        _ => println!("   skipped: needs root for unshare --mount"),
    }
}

/// `rocm-probe agents` against Debian's real `rocminfo` on the same fixture, both as processes:
/// rocminfo runs the whole ROCm 5.2 stack under the KFD emulator (scripts/emulate builds it;
/// rocminfo is then started directly, so no shell is timed), so its figure includes what the
/// emulator costs, which a real KFD would not.
fn agents_vs_rocminfo(iterations: usize) {
    let name = "mi210-xgmi-8gpu";
    println!("== agents vs rocminfo under the KFD emulator ({name}, 10 nodes)");
    let fixture = fixtures().join(name);
    let Some(bin) = probe_bin() else {
        println!("   skipped: build the CLI too (cargo build --release -p rocm-probe-cli)");
        return;
    };
    if !Path::new("/usr/bin/rocminfo").exists() {
        println!("   skipped: rocminfo not installed (Debian package rocminfo)");
        return;
    }
    let emulate = fixtures().join("../scripts/emulate");
    let build = Command::new(&emulate)
        .arg(&fixture)
        .args(["--", "/bin/true"])
        .status();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| fixtures().join("../target"), PathBuf::from);
    let lib = target.join("kfd_emu/kfd_emu.so");
    if !build.is_ok_and(|s| s.success()) || !lib.exists() {
        println!("   skipped: the emulator did not build (needs cc and libdrm-dev)");
        return;
    }
    let run = |cmd: &mut Command| {
        let runs: Vec<Duration> = (0..iterations)
            .map(|_| {
                let start = Instant::now();
                let _ = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status();
                start.elapsed()
            })
            .collect();
        median(runs)
    };
    let ours = run(Command::new(&bin).arg("agents").arg("--root").arg(&fixture));
    let theirs = run(Command::new("/usr/bin/rocminfo")
        .env("KFD_EMU_ROOT", &fixture)
        .env("KFD_EMU_OVERLAY", fixture.join("emulate"))
        .env("LD_PRELOAD", &lib));
    println!(
        "   rocm-probe agents:       {:>9.2} ms (median of {iterations})",
        ms(ours)
    );
    println!(
        "   rocminfo (emulated KFD): {:>9.2} ms (median of {iterations})",
        ms(theirs)
    );
    println!(
        "   ratio: {:.1}x",
        theirs.as_secs_f64() / ours.as_secs_f64().max(1e-9)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Writes a topology of `gpus` GPU nodes (plus one CPU node) cloned from a real MI300X node:
/// every GPU links to the CPU and to every other GPU (XGMI), as MI300 partitions do.
fn synthesize(dir: &Path, gpus: usize) -> usize {
    let real = fixtures().join("mi300x-cpx-8gpu/sys/class/kfd/kfd/topology/nodes");
    let cpu = std::fs::read_to_string(real.join("0/properties")).unwrap();
    let gpu = std::fs::read_to_string(real.join("2/properties")).unwrap();
    let link = std::fs::read_to_string(real.join("2/io_links/1/properties")).unwrap();
    let topo = dir.join("sys/class/kfd/kfd/topology");
    let mut files = 0;
    let mut put = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        files += 1;
    };
    put(topo.join("generation_id"), "1\n");
    put(topo.join("nodes/0/properties"), &cpu);
    for n in 1..=gpus {
        let node = topo.join(format!("nodes/{n}"));
        let props = gpu
            .lines()
            .map(|l| match l.split_once(' ') {
                Some(("location_id", _)) => format!("location_id {}", (n << 8) as u64),
                Some(("drm_render_minor", _)) => format!("drm_render_minor {}", 127 + n),
                _ => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        put(node.join("properties"), &props);
        for (i, to) in (0..=gpus).filter(|t| *t != n).enumerate() {
            let text = link
                .lines()
                .map(|l| match l.split_once(' ') {
                    Some(("node_from", _)) => format!("node_from {n}"),
                    Some(("node_to", _)) => format!("node_to {to}"),
                    _ => l.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n";
            put(node.join(format!("io_links/{i}/properties")), &text);
        }
    }
    files
}

fn scaling(iterations: usize, max_nodes: usize) {
    println!("== scaling: synthetic MI300X topologies (all-to-all links)");
    println!(
        "   {:>6} {:>8} {:>11} {:>13} {:>13}",
        "GPUs", "files", "report ms", "µs per node", "µs per file"
    );
    let mut per_file = Vec::new();
    for gpus in [1, 8, 64, 256].into_iter().filter(|g| *g <= max_nodes) {
        let dir = tempfile::tempdir().unwrap();
        let files = synthesize(dir.path(), gpus);
        let runs = if gpus >= 64 {
            iterations.div_ceil(4).max(1)
        } else {
            iterations
        };
        let t = median(
            (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    let r =
                        Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default());
                    assert_eq!(r.facts.agent_count, gpus);
                    start.elapsed()
                })
                .collect(),
        );
        let us_file = t.as_secs_f64() * 1e6 / files as f64;
        per_file.push((gpus, us_file));
        println!(
            "   {gpus:>6} {files:>8} {:>11.2} {:>13.1} {us_file:>13.2}",
            ms(t),
            t.as_secs_f64() * 1e6 / gpus as f64
        );
    }
    let from8: Vec<f64> = per_file
        .iter()
        .filter(|(g, _)| *g >= 8)
        .map(|(_, u)| *u)
        .collect();
    if from8.len() > 1 {
        let spread = from8.iter().cloned().fold(f64::MIN, f64::max)
            / from8.iter().cloned().fold(f64::MAX, f64::min);
        println!(
            "   time per file from 8 to {} GPUs varies {spread:.2}x (target within 1.5x: {})",
            per_file.last().unwrap().0,
            if spread <= 1.5 { "met" } else { "NOT met" }
        );
    }
}

fn opens(fixture: &Path) {
    let fixture = fixture.canonicalize().unwrap();
    println!(
        "== files opened per report run vs files needed ({})",
        fixture.display()
    );
    let (source, recorder) = Source::fixture(&fixture).unwrap().record();
    let _ = Report::collect(&source, Options::default());
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for r in recorder.records() {
        match r {
            Record::File { path, .. } => files.push(path),
            Record::Dir { path, .. } => dirs.push(path),
            _ => {}
        }
    }
    for v in [&mut files, &mut dirs] {
        v.sort();
        v.dedup();
    }
    let Some(bin) = probe_bin() else {
        println!("   skipped: build the CLI too (cargo build --release -p rocm-probe-cli)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace");
    let traced = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log)
        .arg(&bin)
        .arg("--root")
        .arg(&fixture)
        .arg("--json")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.code().is_some());
    if !traced {
        println!("   skipped: strace not installed");
        return;
    }
    let trace = std::fs::read_to_string(&log).unwrap_or_default();
    let ok: Vec<&str> = trace.lines().filter(|l| !l.contains("= -1")).collect();
    // Files are opened through openat2 relative to the fixture; directories by absolute path.
    let file_opens = ok.iter().filter(|l| l.contains("openat2(")).count();
    let root = fixture.to_string_lossy();
    let dir_opens = ok
        .iter()
        .filter(|l| l.contains(&*root) && l.contains("O_DIRECTORY") && !l.contains("O_PATH"))
        .count();
    println!(
        "   files:       {file_opens} opened, {} distinct needed (generation_id is read before and after the scan)",
        files.len()
    );
    println!(
        "   directories: {dir_opens} listed, {} distinct needed",
        dirs.len()
    );
}

fn main() {
    if cfg!(debug_assertions) {
        println!("(debug build: a smoke run, not a measurement; use --release for the figures)");
    }
    let mut args = std::env::args().skip(1);
    let iterations: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(11)
        .max(1);
    let max_nodes: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(256);
    targets_vs_enumerator(iterations);
    agents_vs_rocminfo(iterations);
    scaling(iterations, max_nodes);
    opens(&fixtures().join("mi300x-cpx-8gpu"));
}
