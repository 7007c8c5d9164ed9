//! The malformed-input corpus (`fixtures/malformed/`, listed in its `cases.toml`): every case
//! gives a finding or an error naming the path — never a panic, a hang or unbounded memory.
//! Each run is killed after 10 s and limited to 256 MiB of address space (`prlimit`); what git
//! cannot hold (a FIFO, a device node, a 100 MB file, mode 000) is made at test time
//! (`rocm_probe_tests::malformed`, shared with `tests/id_coverage.rs`), and the permission cases
//! run as `nobody`, since tests run as root.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rocm_probe_tests::malformed::{cases, corpus, is_root, unprivileged};

const LIMIT_AS: &str = "--as=268435456";

fn run(cmd: &mut Command) -> (i32, String) {
    let mut cmd = assert_cmd::Command::from_std(std::mem::replace(cmd, Command::new("true")));
    let out = cmd.timeout(Duration::from_secs(10)).output().unwrap();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("killed (hang guard or memory limit): {:?}", out.status));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (code, text)
}

#[test]
fn every_malformed_case_is_named_without_panic_hang_or_blowup() {
    if !is_root()
        || !Path::new("/usr/bin/prlimit").exists()
        || !Path::new("/usr/bin/setpriv").exists()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs this as root with util-linux"
        );
        eprintln!("skipped: needs root, prlimit and setpriv");
        return;
    }
    let cases = cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());

    let scratch = tempfile::tempdir().unwrap();
    // nobody must reach the binary and the cases.
    let bin = scratch.path().join("rocm-probe");
    std::fs::copy(assert_cmd::cargo::cargo_bin("rocm-probe"), &bin).unwrap();
    assert!(
        Command::new("chmod")
            .args(["a+rx"])
            .arg(scratch.path())
            .arg(&bin)
            .status()
            .unwrap()
            .success()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let dir = scratch.path().join(&case.name);
        let as_nobody = case.build(&dir);
        let mut cmd = if as_nobody {
            let mut c = unprivileged(Path::new("/usr/bin/prlimit"));
            c.args([LIMIT_AS, "--"]);
            c
        } else {
            let mut c = Command::new("/usr/bin/prlimit");
            c.args([LIMIT_AS, "--"]);
            c
        };
        cmd.env_clear()
            .env("COLUMNS", "100000")
            .arg(&bin)
            .arg("--root")
            .arg(&dir);
        let (code, out) = run(&mut cmd);
        // A malformed GPU node can leave no GPU to check: the verdict is then undetermined (3).
        let expected_exit = if case.path == "fixture.toml" {
            &[2][..]
        } else {
            &[0, 1, 3][..]
        };
        let named = out
            .lines()
            .any(|l| l.contains(&case.path) && l.contains(&case.message));
        if !expected_exit.contains(&code) || !named {
            failures.push(format!(
                "{}: exit {code}, expected a line with {:?} and {:?}:\n{out}",
                case.name, case.path, case.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_clean_base_has_no_input_problems() {
    let out = assert_cmd::Command::cargo_bin("rocm-probe")
        .unwrap()
        .env_clear()
        .env("COLUMNS", "100000")
        .arg("--root")
        .arg(corpus().join("base"))
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("-malformed") && !text.contains("-unreadable"),
        "{text}"
    );
}
