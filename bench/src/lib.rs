//! What the benchmark binaries share: running a command quietly and timing it, and the peak RSS
//! of one run of the `rocm-probe` binary measured in a fresh process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

/// Ends the benchmark with a message (exit 2, like the probe when it cannot run).
pub fn fail(msg: &str) -> ! {
    eprintln!("rocm-probe-bench: {msg}");
    std::process::exit(2);
}

/// The median of some timings (the upper one of an even count).
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The `rocm-probe` binary built next to the running benchmark.
pub fn probe_bin() -> PathBuf {
    let bin = std::env::current_exe()
        .ok()
        .and_then(|me| Some(me.parent()?.join("rocm-probe")))
        .filter(|p| p.exists());
    bin.unwrap_or_else(|| {
        fail("no rocm-probe next to this binary: run `cargo build --release -p rocm-probe-cli` first")
    })
}

/// Runs `cmd` with its output discarded; the wall time. Exit 0 and 1 (the probe's "ran, found
/// a failure") are runs; anything else ends the benchmark.
pub fn run_quiet(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| fail(&format!("{cmd:?}: {e}")));
    let elapsed = start.elapsed();
    if status.code().is_none_or(|c| c > 1) {
        fail(&format!("{cmd:?} failed: {status}"));
    }
    elapsed
}

/// Peak RSS of one run of `bin args…`, KiB. `RUSAGE_CHILDREN` of a process survives `exec` (it
/// belongs to the signal struct), so under `cargo run` this process's value already holds
/// whatever cargo's pre-exec child waited for. A fresh copy of this binary, started with
/// `--rss-of` (answered by [`answer_rss_of`]), has waited for nothing before it runs `bin`: its
/// value is `bin`'s own.
pub fn peak_rss_kib(bin: &Path, args: &[OsString]) -> i64 {
    let me = std::env::current_exe().unwrap_or_else(|e| fail(&e.to_string()));
    let out = Command::new(me)
        .arg("--rss-of")
        .arg(bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| fail(&e.to_string()));
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| fail("--rss-of printed no number"))
}

/// When `argv` is `--rss-of BIN ARGS…`: runs it, prints its peak RSS and returns `true` (the
/// caller then exits); otherwise `false`.
pub fn answer_rss_of(argv: &[String]) -> bool {
    if argv.first().map(String::as_str) != Some("--rss-of") || argv.len() < 2 {
        return false;
    }
    let before = getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss());
    if before != 0 {
        fail("--rss-of: this process already has waited-for children");
    }
    run_quiet(Command::new(&argv[1]).args(&argv[2..]));
    let rss = getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss());
    println!("{rss}");
    true
}
