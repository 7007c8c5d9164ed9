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
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
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
