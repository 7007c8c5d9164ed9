//! The malformed-input corpus (`fixtures/malformed/`, listed in its `cases.toml`), shared by the
//! tests that run it: `rocm-probe-cli/tests/malformed.rs` (every case names its path, within
//! bounds) and `tests/id_coverage.rs` (which finding ids the cases produce). What git cannot hold
//! (a FIFO, a device node, a 100 MB file, mode 000) is made here at test time; the permission
//! cases must run as an ordinary user ([`unprivileged`]), since tests run as root and root reads
//! anything.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// The uid and gid of `nobody`, the ordinary user the permission cases run as.
pub const NOBODY: u32 = 65534;

/// `fixtures/malformed`.
pub fn corpus() -> PathBuf {
    crate::fixtures_dir().join("malformed")
}

#[derive(Debug, Deserialize)]
struct Cases {
    case: Vec<Case>,
}

/// One case of `cases.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The directory of a committed case; the name of a generated one.
    pub name: String,
    /// A suffix of the path the output must name.
    pub path: String,
    /// A phrase of the message.
    pub message: String,
    /// Made at test time: `fifo`, `chardev`, `huge`, `mode000`.
    pub generate: Option<String>,
    /// The fixture a generated case starts from, relative to `fixtures/` (default `malformed/base`).
    pub from: Option<String>,
    /// The path inside the fixture the generated defect goes to.
    pub target: Option<String>,
}

/// Every case of `cases.toml`, in its order.
pub fn cases() -> Vec<Case> {
    let file = corpus().join("cases.toml");
    let text = std::fs::read_to_string(&file).expect("fixtures/malformed/cases.toml is readable");
    let cases: Cases = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    cases.case
}

fn ok(cmd: &mut Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?}: {status}");
}

impl Case {
    /// Builds the case in `dir` (which must not exist): a copy of the committed case, or of the
    /// fixture it starts from with its defect made. The tree is readable by everyone except for
    /// the defect (the caller makes `dir`'s ancestors reachable). Returns whether the case must
    /// run as an ordinary user ([`unprivileged`]).
    pub fn build(&self, dir: &Path) -> bool {
        let Some(kind) = &self.generate else {
            copy_tree(&corpus().join(&self.name), dir);
            return false;
        };
        let from = self.from.as_deref().unwrap_or("malformed/base");
        copy_tree(&crate::fixtures_dir().join(from), dir);
        ok(Command::new("chmod").args(["-R", "a+rX"]).arg(dir));
        let target = dir.join(
            self.target
                .as_deref()
                .unwrap_or_else(|| panic!("{}: a generated case needs a target", self.name)),
        );
        assert!(
            std::fs::symlink_metadata(&target).is_ok(),
            "{}: target {} is not in {from}",
            self.name,
            target.display()
        );
        match kind.as_str() {
            "fifo" => {
                std::fs::remove_file(&target).unwrap();
                ok(Command::new("mkfifo").arg(&target));
                false
            }
            "chardev" => {
                // A /dev/zero twin inside the fixture: a file that never ends.
                std::fs::remove_file(&target).unwrap();
                ok(Command::new("mknod").arg(&target).args(["c", "1", "5"]));
                false
            }
            "huge" => {
                std::fs::File::create(&target)
                    .unwrap()
                    .set_len(100 << 20)
                    .unwrap();
                false
            }
            "mode000" => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o000)).unwrap();
                true
            }
            other => panic!("{}: unknown generator {other}", self.name),
        }
    }
}

/// `cp -a --no-target-directory FROM TO`: a tree copied with its symlinks, modes and special
/// files.
pub fn copy_tree(from: &Path, to: &Path) {
    ok(Command::new("cp")
        .args(["-a", "--no-target-directory"])
        .arg(from)
        .arg(to));
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status")
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

/// `program` run as `nobody` (uid and gid [`NOBODY`], no supplementary groups) through
/// util-linux's `setpriv`; the caller adds the arguments. `program` and what it reads must be
/// reachable by that user.
pub fn unprivileged(program: &Path) -> Command {
    let mut cmd = Command::new("/usr/bin/setpriv");
    cmd.arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups")
        .arg(program);
    cmd
}
