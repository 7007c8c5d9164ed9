//! Oracle: Debian's real `rocm_agent_enumerator` (package `rocminfo`, 5.2.3), run in a private
//! mount namespace with a fixture's `kfd/` tree mounted at `/sys/class/kfd`, must print the same
//! GPU targets as the library (as a multiset: it sorts node directories as strings, and prints
//! `gfx000` once, which is dropped).

use std::path::Path;
use std::process::Command;

use rocm_probe::{Inventory, Source};
use rocm_probe_tests::fixtures;

const ENUMERATOR: &str = "/usr/bin/rocm_agent_enumerator";

/// Skips with a reason, except under CI, where `.ci/run` installs and enables everything.
fn skip(reason: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "oracle cannot run under CI: {reason}"
    );
    eprintln!("skipped: {reason}");
}

fn enumerate_in_namespace(kfd: &Path) -> Result<Vec<String>, String> {
    let script = r#"set -e
mount -t tmpfs tmpfs /sys/class
mkdir -p /sys/class/kfd
mount --bind "$1" /sys/class/kfd
cd /
exec env -i PATH=/usr/bin:/bin "$2""#;
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(kfd)
        .arg(ENUMERATOR)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "unshare/mount failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| *l != "gfx000")
        .map(str::to_owned)
        .collect())
}

#[test]
fn rocm_agent_enumerator_agrees_on_every_fixture() {
    if !Path::new(ENUMERATOR).exists() {
        return skip("rocm_agent_enumerator not installed (Debian package rocminfo)");
    }
    if !nix_is_root() {
        return skip("needs root for unshare --mount");
    }
    let mut compared = 0;
    for (name, dir) in fixtures() {
        let kfd = dir.join("sys/class/kfd");
        if !kfd.join("kfd/topology/nodes").is_dir() {
            continue;
        }
        let inv = Inventory::collect(&Source::fixture(&dir).unwrap()).unwrap();
        let ours = inv.targets(false);
        let has_version = inv
            .gpu_agents()
            .all(|a| a.gfx_source == Some(rocm_probe::target::TargetSource::GfxTargetVersion));
        if !has_version {
            // The enumerator falls back to the host's lspci there: nothing to compare.
            eprintln!("{name}: no oracle (no gfx_target_version; enumerator uses lspci)");
            continue;
        }
        let theirs = match enumerate_in_namespace(&kfd) {
            Ok(t) => t,
            Err(e) => return skip(&e),
        };
        let (mut a, mut b) = (ours.clone(), theirs.clone());
        a.sort();
        b.sort();
        assert_eq!(
            a, b,
            "{name}: rocm-probe {ours:?} vs rocm_agent_enumerator {theirs:?}"
        );
        eprintln!("{name}: {} targets agree", a.len());
        compared += 1;
    }
    assert!(compared >= 7, "only {compared} fixtures compared");
}

fn nix_is_root() -> bool {
    // The effective uid, from procfs: no libc call needed.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}
