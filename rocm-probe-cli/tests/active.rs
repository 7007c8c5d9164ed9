//! `--active` on this machine, against Debian's real libhsakmt, ROCr and HIP (5.2.3), which load
//! and fail in known ways without `/dev/kfd` (the live error paths README shows), and against fixtures that
//! state an active run's results.

mod common;

use std::path::Path;

use common::{probe, run};

const HSAKMT: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1";
const ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";
const HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// Whether this machine is the one the acceptance describes: no KFD, Debian's libraries
/// installed. In CI the libraries must be there (`.ci/run` installs them).
fn debian_without_kfd() -> bool {
    if Path::new("/dev/kfd").exists() || Path::new("/sys/class/kfd").exists() {
        eprintln!("skipped: this machine has KFD");
        return false;
    }
    for (lib, package) in [
        (HSAKMT, "libhsakmt1"),
        (ROCR, "libhsa-runtime64-1"),
        (HIP, "libamdhip64-5"),
    ] {
        if !Path::new(lib).exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{lib} missing: CI installs {package}"
            );
            eprintln!("skipped: {lib} not installed (Debian package {package})");
            return false;
        }
    }
    true
}

fn line<'a>(stdout: &'a str, id: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|w| w.trim_end_matches(':') == id)
        })
        .unwrap_or_else(|| panic!("no {id} in:\n{stdout}"))
}

#[test]
fn live_active_names_each_layers_real_answer_as_a_consequence_of_no_gpu() {
    if !debian_without_kfd() {
        return;
    }
    let r = run(probe().args(["report", "--active", "--dispatch"]));
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .contains("root cause in layer 1 (hardware)")
    );
    let kfd = line(&r.stdout, "driver.kfd-open-failed");
    assert!(
        kfd.contains("Opening /dev/kfd read-write failed: ENOENT"),
        "{kfd}"
    );
    let thunk = line(&r.stdout, "thunk.hsakmt-failed");
    assert!(
        thunk.contains("libhsakmt 1.0.6 found; hsaKmtOpenKFD: KERNEL_IO_CHANNEL_NOT_OPENED"),
        "{thunk}"
    );
    let rocr = line(&r.stdout, "runtime.rocr-init-failed");
    assert!(
        rocr.contains("hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{rocr}"
    );
    let hip = line(&r.stdout, "runtime.hip-failed");
    assert!(hip.contains("hipGetDeviceCount: hipErrorNoDevice"), "{hip}");
    // The HIP versions the library reports are the header's (hip_version.h: 5.2.21153).
    assert!(hip.contains("runtime 5.2.21153"), "{hip}");
    // The chain of causes: no GPU → /dev/kfd cannot be opened → every layer above fails.
    assert!(kfd.contains("[caused by hardware.no-amd-gpu]"), "{kfd}");
    for l in [thunk, rocr, hip] {
        assert!(l.contains("[caused by driver.kfd-open-failed]"), "{l}");
    }
    // No dispatch without an initialised runtime.
    assert!(!r.stdout.contains("runtime.dispatch"), "{}", r.stdout);
}

#[test]
fn live_active_json_carries_the_same_findings() {
    if !debian_without_kfd() {
        return;
    }
    let r = run(probe().args(["report", "--active", "--json"]));
    assert_eq!(r.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["id"] == "runtime.rocr-init-failed")
        .expect("runtime.rocr-init-failed");
    assert_eq!(f["caused_by"], "driver.kfd-open-failed");
    assert_eq!(f["layer"], "runtime");
    assert_eq!(doc["verdict"]["root_cause"], "hardware.no-amd-gpu");
}

#[test]
fn libraries_that_do_not_exist_are_not_installed_and_the_run_ends_cleanly() {
    if !debian_without_kfd() {
        return;
    }
    let r = run(probe().args([
        "report",
        "--active",
        "--hsakmt-lib",
        "/nonexistent/libhsakmt.so.1",
        "--hsa-runtime-lib",
        "/nonexistent/libhsa-runtime64.so.1",
        "--hip-lib",
        "/nonexistent/libamdhip64.so.6",
    ]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        line(&r.stdout, "thunk.hsakmt-not-installed")
            .contains("libhsakmt: not installed: /nonexistent/libhsakmt.so.1")
    );
    assert!(
        line(&r.stdout, "runtime.rocr-not-installed")
            .contains("ROCr: not installed: /nonexistent/libhsa-runtime64.so.1")
    );
    assert!(
        line(&r.stdout, "runtime.hip-not-installed")
            .contains("HIP: not installed: /nonexistent/libamdhip64.so.6")
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn passive_runs_load_nothing() {
    if !debian_without_kfd() {
        return;
    }
    let r = run(&mut probe());
    for id in [
        "driver.kfd-open-failed",
        "thunk.hsakmt-failed",
        "runtime.rocr-init-failed",
    ] {
        assert!(
            !r.stdout.contains(id),
            "{id} without --active:\n{}",
            r.stdout
        );
    }
}

#[test]
fn agents_active_shows_rocrs_answer() {
    if !debian_without_kfd() {
        return;
    }
    let r = run(probe().args(["agents", "--active"]));
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("hsa_shut_down: HSA_STATUS_ERROR_NOT_INITIALIZED"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("no KFD"), "{}", r.stderr);
}

/// `agents --active` on a fixture shows the ROCr enumeration its `[active]` table records next
/// to the sysfs view: node 7 is missing there, and the JSON carries it under `rocr`.
#[test]
fn agents_active_on_a_fixture_shows_its_recorded_rocr_view() {
    let fx = common::fixture("active-rocr-missing-agent");
    let r = run(probe().arg("--root").arg(&fx).args(["agents", "--active"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rocr = r
        .stdout
        .split("ROCr (--active)")
        .nth(1)
        .expect("a ROCr section");
    assert!(rocr.contains("hsa_init: HSA_STATUS_SUCCESS"), "{rocr}");
    assert!(rocr.contains("node   6  gpu"), "{rocr}");
    assert!(!rocr.contains("node   7  gpu"), "{rocr}");
    let j = run(probe()
        .arg("--root")
        .arg(&fx)
        .args(["agents", "--active", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["rocr"]["agents"].as_array().unwrap().len(), 9);
    assert!(v["agents"].is_array());
    // Without --active the recorded view is not shown.
    let plain = run(probe().arg("--root").arg(&fx).arg("agents"));
    assert!(!plain.stdout.contains("ROCr (--active)"));
}

/// A ROCr and a HIP that abort inside their first call, the way an assertion-enabled build does on
/// a machine it cannot handle, built here with the machine's C compiler.
fn aborting_libraries(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let src = dir.join("abort.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         int hsa_init(void) { fputs(\"hsa_init: Assertion `node_id < nodes' failed.\\n\", stderr); abort(); }\n\
         int hsa_shut_down(void) { return 0; }\n\
         int hipGetDeviceCount(int *n) { (void)n; *(volatile int *)0 = 1; return 0; }\n",
    )
    .unwrap();
    let rocr = dir.join("libhsa-runtime64.so.1");
    let hip = dir.join("libamdhip64.so.6");
    for out in [&rocr, &hip] {
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(out)
            .arg(&src)
            .status();
        if !built.is_ok_and(|s| s.success()) {
            assert!(std::env::var_os("CI").is_none(), "cc failed");
            eprintln!("skipped: no C compiler");
            return None;
        }
    }
    Some((rocr, hip))
}

#[test]
fn a_library_that_aborts_ends_its_own_process_not_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((rocr, hip)) = aborting_libraries(tmp.path()) else {
        return;
    };
    let out = run(probe()
        .args(["--active", "--json", "--hsa-runtime-lib"])
        .arg(&rocr)
        .arg("--hip-lib")
        .arg(&hip));
    // The report is whole: the probe exits with a verdict, not with the library's signal.
    assert!(matches!(out.code, 0..=2), "{}\n{}", out.code, out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let find = |id: &str| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} missing: {}", out.stdout))
    };
    let r = find("runtime.rocr-init-failed");
    let summary = r["summary"].as_str().unwrap();
    assert!(summary.contains("killed by SIGABRT"), "{summary}");
    let evidence = r["evidence"].to_string();
    assert!(
        evidence.contains("Assertion `node_id < nodes' failed."),
        "{evidence}"
    );
    let h = find("runtime.hip-failed");
    assert!(
        h["summary"].as_str().unwrap().contains("killed by SIGSEGV"),
        "{}",
        h["summary"]
    );
}
