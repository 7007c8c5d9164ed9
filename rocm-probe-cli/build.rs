//! The source revision that `--version` prints beside the version: `ROCM_PROBE_REVISION` when
//! the builder sets it (a distribution building from a tarball knows its tag), else the commit
//! of the git checkout this crate is tracked in, else "unknown". Never an error: a tarball, a
//! machine without git or a checkout git refuses to read (another owner) all build.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=ROCM_PROBE_REVISION");
    let revision = match std::env::var("ROCM_PROBE_REVISION") {
        Ok(given) if !given.trim().is_empty() => given.trim().to_owned(),
        _ => from_git().unwrap_or_else(|| "unknown".to_owned()),
    };
    println!("cargo:rustc-env=ROCM_PROBE_REVISION={revision}");
}

/// The short commit hash, when this crate's own build script is tracked by the enclosing git
/// repository (an unpacked tarball inside some other repository is not that repository's
/// commit). Reruns when HEAD moves, and only then (also while the answer is "unknown" inside a
/// checkout: the commit that adds a file makes it tracked).
fn from_git() -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let dir = Path::new(&dir);
    // HEAD (per worktree), the branch it names, and packed-refs: a commit or checkout changes one.
    let mut watched = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(dir, &["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched {
        let path = dir.join(path);
        // A path that does not exist would make cargo rerun this script on every build.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    git(dir, &["ls-files", "--error-unmatch", "build.rs"])?;
    git(dir, &["rev-parse", "--short=12", "HEAD"])
}

/// One git command's trimmed output, `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}
