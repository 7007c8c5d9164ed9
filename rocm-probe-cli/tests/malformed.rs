//! The malformed-input corpus (`fixtures/malformed/`, listed in its `cases.toml`): every case
//! gives a finding or an error naming the path — never a panic, a hang or unbounded memory.
//! Each run is killed after 10 s and limited to 256 MiB of address space (`prlimit`); what git
//! cannot hold (a FIFO, a device node, a 100 MB file, mode 000) is made at test time, and the
//! permission cases run as `nobody`, since tests run as root.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    /// A suffix of the path the output must name.
    path: String,
    /// A phrase of the message.
    message: String,
    /// Made at test time from `base`: fifo, chardev, huge, mode000.
    generate: Option<String>,
    /// The path (inside the topology) the generated defect goes to.
    target: Option<String>,
}

const TOPOLOGY: &str = "sys/class/kfd/kfd/topology";
const LIMIT_AS: &str = "--as=268435456";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/malformed")
}

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

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

/// Builds a generated case in `dir` (a copy of `base`). Returns whether it must run as nobody.
fn generate(kind: &str, target: &Path) -> bool {
    match kind {
        "fifo" => {
            std::fs::remove_file(target).unwrap();
            assert!(
                Command::new("mkfifo")
                    .arg(target)
                    .status()
                    .unwrap()
                    .success()
            );
            false
        }
        "chardev" => {
            // A /dev/zero twin inside the fixture: a file that never ends.
            std::fs::remove_file(target).unwrap();
            assert!(
                Command::new("mknod")
                    .arg(target)
                    .args(["c", "1", "5"])
                    .status()
                    .unwrap()
                    .success()
            );
            false
        }
        "huge" => {
            std::fs::File::create(target)
                .unwrap()
                .set_len(100 << 20)
                .unwrap();
            false
        }
        "mode000" => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o000)).unwrap();
            true
        }
        other => panic!("unknown generator {other}"),
    }
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
    let text = std::fs::read_to_string(corpus().join("cases.toml")).unwrap();
    let cases: Cases = toml::from_str(&text).unwrap();
    assert!(cases.case.len() >= 30, "{} cases", cases.case.len());

    let scratch = tempfile::tempdir().unwrap();
    // nobody must reach the binary and the cases.
    let bin = scratch.path().join("rocm-probe");
    std::fs::copy(assert_cmd::cargo::cargo_bin("rocm-probe"), &bin).unwrap();
    let mut failures = Vec::new();
    for case in &cases.case {
        let dir = scratch.path().join(&case.name);
        let as_nobody = match &case.generate {
            None => {
                common::copy_tree(&corpus().join(&case.name), &dir);
                false
            }
            Some(kind) => {
                common::copy_tree(&corpus().join("base"), &dir);
                let target = dir.join(TOPOLOGY).join(case.target.as_deref().unwrap());
                assert!(
                    Command::new("chmod")
                        .args(["-R", "a+rX"])
                        .arg(scratch.path())
                        .status()
                        .unwrap()
                        .success()
                );
                generate(kind, &target)
            }
        };
        let mut cmd = if as_nobody {
            let mut c = Command::new("/usr/bin/setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "/usr/bin/prlimit",
                LIMIT_AS,
                "--",
            ]);
            c
        } else {
            let mut c = Command::new("/usr/bin/prlimit");
            c.args([LIMIT_AS, "--"]);
            c
        };
        cmd.env_clear().arg(&bin).arg("--root").arg(&dir);
        let (code, out) = run(&mut cmd);
        let expected_exit = if case.path == "fixture.toml" {
            [2, 2]
        } else {
            [0, 1]
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
