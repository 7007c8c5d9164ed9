//! Helpers shared by the process-level tests of the `rocm-probe` binary.

#![allow(dead_code)] // each test file uses a subset

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

/// A fixture directory by name.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("fixtures")
        .join(name)
}

/// The binary with a hermetic environment (ARCHITECTURE.md §8) and a kill after a generous bound, so a
/// hang fails the test instead of stalling the run.
pub fn probe() -> Command {
    let mut cmd = Command::cargo_bin("rocm-probe").unwrap();
    // Lines as long as their content: tests that read a finding's line read one line. The
    // width is tested where it is the subject (tests/width.rs sets COLUMNS=80 or none).
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("COLUMNS", "100000")
        .timeout(Duration::from_secs(60));
    cmd
}

/// What a run gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs to completion; a kill (hang guard) fails the test.
pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `cp -a --no-target-directory FROM TO`: a tree copied with its symlinks, modes and special
/// files, into `to` (created, or merged into when it exists).
pub fn copy_tree(from: &Path, to: &Path) {
    let ok = std::process::Command::new("cp")
        .args(["-a", "--no-target-directory"])
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

/// A copy of `fixtures/<name>` in a fresh temporary directory, alive as long as the `TempDir`.
pub fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(name.replace('/', "-"));
    copy_tree(&fixture(name), &dir);
    (scratch, dir)
}
