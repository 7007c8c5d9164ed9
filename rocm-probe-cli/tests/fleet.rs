//! Fleet commands end to end: `check --write-expect` / `--expect`, `--summary`, `diff`.

mod common;

use common::{fixture, probe, run};

fn json_report(name: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let r = run(probe().arg("--root").arg(fixture(name)).arg("--json"));
    assert!(r.code <= 1, "{}", r.stderr);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, r.stdout).unwrap();
    path
}

#[test]
fn diff_names_device_cu_vram_and_node_count_differences() {
    let dir = tempfile::tempdir().unwrap();
    let a = json_report("mi300x-cpx-8gpu", dir.path());
    let b = json_report("mi308x-cpx-8gpu", dir.path());
    let r = run(probe().arg("diff").arg(&a).arg(&b));
    assert_eq!(r.code, 1, "{}", r.stderr);
    for line in [
        "hardware  agent_count",
        "hardware  gpus[0].device_id",
        "hardware  gpus[0].compute_units",
        "hardware  gpus[0].memory_bytes",
        "hardware  gpus[0].agents",
    ] {
        assert!(
            r.stdout.lines().any(|l| l.starts_with(line)),
            "{line}:\n{}",
            r.stdout
        );
    }
    let cu = r
        .stdout
        .lines()
        .find(|l| l.starts_with("hardware  gpus[0].compute_units"))
        .unwrap();
    assert!(cu.ends_with("304  |  80"), "{cu}");
    let j = run(probe().arg("diff").arg("--json").arg(&a).arg(&b));
    assert_eq!(j.code, 1);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_ne!(v["fingerprints"][0], v["fingerprints"][1]);
}

#[test]
fn diff_of_a_report_with_itself_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let a = json_report("rocm-6.2-mi210", dir.path());
    let r = run(probe().arg("diff").arg(&a).arg(&a));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
}

#[test]
fn diff_of_something_else_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = json_report("rocm-6.2-mi210", dir.path());
    let other = dir.path().join("agents.json");
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["agents", "--json"]));
    std::fs::write(&other, r.stdout).unwrap();
    let r = run(probe().arg("diff").arg(&a).arg(&other));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not a report"), "{}", r.stderr);
}

#[test]
fn write_expect_then_expect_passes_on_the_same_node_and_names_a_gap_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["check", "--write-expect"])
        .arg(&file));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("rocm = \"=6.2.0\""), "{text}");
    let same = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["check", "--expect"])
        .arg(&file));
    assert_eq!(same.code, 0, "{}", same.stdout);
    let gap = run(probe()
        .arg("--root")
        .arg(fixture("hipblas-without-rocblas"))
        .args(["check", "--summary", "--expect"])
        .arg(&file));
    assert_eq!(gap.code, 1);
    let full = run(probe()
        .arg("--root")
        .arg(fixture("hipblas-without-rocblas"))
        .args(["check", "--expect"])
        .arg(&file));
    assert!(
        full.stdout
            .contains("libraries.expect-libraries: libraries do not meet the expectations: rocblas: expected installed, found none"),
        "{}",
        full.stdout
    );
}

#[test]
fn a_bad_conformance_file_exits_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[versions]\nrocm = \"six-ish\"\n").unwrap();
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["check", "--expect"])
        .arg(&file));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("key `versions.rocm`"), "{}", r.stderr);
}

#[test]
fn summary_is_one_line_within_the_width() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("kfd-permission-denied"))
        .args(["--summary", "--summary-width", "60"]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    let line = r.stdout.trim_end();
    assert!(line.chars().count() <= 60, "{line}");
    assert!(
        line.starts_with("FAIL driver.kfd-permission-denied:"),
        "{line}"
    );
}

#[test]
fn a_held_lock_ends_the_run_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("probe.lock");
    // Another run's lock: flock(2) on the same file, as --lock takes it.
    let held = nix::fcntl::Flock::lock(
        std::fs::File::create(&lock).unwrap(),
        nix::fcntl::FlockArg::LockExclusiveNonblock,
    )
    .unwrap();
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["--summary", "--lock"])
        .arg(&lock));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("another rocm-probe run holds the lock"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    drop(held);
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["--summary", "--lock"])
        .arg(&lock));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A run that outlives its deadline ends with exit 2 and says so. The deadline is a millisecond
/// and the run reads the 4,100 files of the 8x MI300X capture: it cannot finish first.
#[test]
fn a_run_past_its_deadline_exits_2() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi300x-cpx-8gpu"))
        .args(["--deadline", "0.001"]));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("deadline of 0.001 s exceeded"),
        "{}",
        r.stderr
    );
    let r = run(probe().arg("--root").arg(fixture("rocm-6.2-mi210")).args([
        "--summary",
        "--deadline",
        "30",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bad = run(probe().args(["--deadline", "0"]));
    assert_eq!(bad.code, 2);
}

#[test]
fn the_slurm_wrapper_is_valid_sh_with_everything_baked_in() {
    let r = run(probe().arg("--root").arg(fixture("rocm-6.2-mi210")).args([
        "slurm-wrapper",
        "--slurm-conf",
        "/etc/slurm/slurm.conf",
        "--scontrol",
        "/usr/bin/scontrol",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let w = r.stdout;
    assert!(w.starts_with("#!/bin/sh\n"));
    assert!(w.contains("SLURM_CONF='/etc/slurm/slurm.conf'"), "{w}");
    assert!(w.contains("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), "{w}");
    assert!(w.contains(" --root '"), "{w}");
    assert!(
        w.contains("--lock '/run/rocm-probe.lock' --deadline 45"),
        "{w}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wrapper");
    std::fs::write(&path, &w).unwrap();
    let sh = std::process::Command::new("sh")
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(sh.success());
}
