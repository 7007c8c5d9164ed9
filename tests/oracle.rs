//! Oracle: Debian's real `rocm_agent_enumerator` (package `rocminfo`, 5.2.3), run in a private
//! mount namespace with a fixture's `kfd/` tree mounted at `/sys/class/kfd`, must print the same
//! GPU targets as the library (as a multiset: it sorts node directories as strings, and prints
//! `gfx000` once, which is dropped). And AMD's `rocm-bootstrap` (PyPI, pinned in the test venv),
//! which also reads only the KFD tree: its unique targets and generic targets must be the
//! library's.

use std::path::Path;
use std::process::Command;

use rocm_probe::{Inventory, Source};
use rocm_probe_tests::malformed::is_root;
use rocm_probe_tests::{fixtures, skip_oracle};

const ENUMERATOR: &str = "/usr/bin/rocm_agent_enumerator";

/// Runs `command` with the fixture's `kfd/` tree mounted at `/sys/class/kfd`, in a private mount
/// namespace and an empty environment; its standard output.
fn in_kfd_namespace(kfd: &Path, command: &[&std::ffi::OsStr]) -> Result<String, String> {
    let script = r#"set -e
mount -t tmpfs tmpfs /sys/class
mkdir -p /sys/class/kfd
mount --bind "$1" /sys/class/kfd
shift
cd /
exec env -i PATH=/usr/bin:/bin "$@""#;
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
        .args(command)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "unshare/mount/{:?} failed ({}): {}",
            command.first(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn enumerate_in_namespace(kfd: &Path) -> Result<Vec<String>, String> {
    Ok(in_kfd_namespace(kfd, &[ENUMERATOR.as_ref()])?
        .lines()
        .filter(|l| *l != "gfx000")
        .map(str::to_owned)
        .collect())
}

#[test]
fn rocm_agent_enumerator_agrees_on_every_fixture() {
    if !Path::new(ENUMERATOR).exists() {
        return skip_oracle("rocm_agent_enumerator not installed (Debian package rocminfo)");
    }
    if !is_root() {
        return skip_oracle("needs root for unshare --mount");
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
            Err(e) => return skip_oracle(&e),
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

/// `rocm-bootstrap` (AMD's GPU detection for the ROCm Python packages, pinned in the test venv):
/// each unique target it detects from the fixture's KFD tree, with the LLVM generic target of
/// the first level of its packaging chain that names one (`gfx1100 gfx11-generic`, `gfx950 -`).
fn bootstrap_in_namespace(kfd: &Path, python: &Path) -> Result<Vec<(String, String)>, String> {
    let program = "
from rocm_bootstrap.detect import detect_gpus, _unique_targets
from rocm_bootstrap.targets import packaging_chain
for t in _unique_targets(detect_gpus()):
    g = next((b.llvm_generic for b in packaging_chain(t) if b.llvm_generic), None)
    print(t.name, g or '-')
";
    Ok(
        in_kfd_namespace(kfd, &[python.as_os_str(), "-c".as_ref(), program.as_ref()])?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(t, g)| (t.to_owned(), g.to_owned()))
            .collect(),
    )
}

#[test]
fn rocm_bootstrap_agrees_on_every_fixture_where_it_sees_a_gpu() {
    let Some(venv) = std::env::var_os("ROCM_PROBE_VENV") else {
        return skip_oracle(
            "ROCM_PROBE_VENV not set (scripts/test sets it and installs rocm-bootstrap)",
        );
    };
    let python = Path::new(&venv).join("bin/python3");
    let has = Command::new(&python)
        .args(["-c", "import rocm_bootstrap"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        return skip_oracle(
            "rocm-bootstrap not installed in ROCM_PROBE_VENV (scripts/test pins it)",
        );
    }
    if !is_root() {
        return skip_oracle("needs root for unshare --mount");
    }
    let (mut compared, mut unseen) = (0, Vec::new());
    for (name, dir) in fixtures() {
        let kfd = dir.join("sys/class/kfd");
        if !kfd.join("kfd/topology/nodes").is_dir() {
            continue;
        }
        let theirs = match bootstrap_in_namespace(&kfd, &python) {
            Ok(t) => t,
            Err(e) => return skip_oracle(&e),
        };
        let inv = Inventory::collect(&Source::fixture(&dir).unwrap()).unwrap();
        if theirs.is_empty() {
            // It reads only gfx_target_version, which the 2018 key set lacks; where the probe
            // has a GPU agent, it found it by the device id.
            let by_version = inv
                .gpu_agents()
                .all(|a| a.gfx_source == Some(rocm_probe::target::TargetSource::GfxTargetVersion));
            assert!(
                inv.gpu_agents().next().is_none() || !by_version,
                "{name}: rocm-bootstrap sees no GPU, rocm-probe sees {:?}",
                inv.targets(false)
            );
            unseen.push(name);
            continue;
        }
        let mut ours = inv.targets(false);
        ours.sort();
        ours.dedup();
        let mut their_names: Vec<String> = theirs.iter().map(|(t, _)| t.clone()).collect();
        their_names.sort();
        assert_eq!(
            ours, their_names,
            "{name}: rocm-probe targets vs rocm-bootstrap-detect --unique"
        );
        for (target, generic) in &theirs {
            let ours = rocm_probe::target::GfxVersion::from_name(target)
                .and_then(rocm_probe::codeobject::target_id::family_of)
                .map(|(g, _)| g.name);
            match (ours, generic.as_str()) {
                (Some(g), theirs) => assert_eq!(g, theirs, "{name}: {target}'s generic target"),
                // rocm-bootstrap names a generic per packaging bundle, and its gfx9_0 bundle
                // holds gfx908 and gfx90a, which gfx9-generic does not cover (its own comment
                // says so, as does LLVM's AMDGPUUsage): no generic for them, in both views.
                (None, "gfx9-generic") if ["gfx908", "gfx90a"].contains(&target.as_str()) => {}
                (None, theirs) => assert_eq!(theirs, "-", "{name}: {target} has no generic here"),
            }
        }
        compared += 1;
    }
    eprintln!("rocm-bootstrap: {compared} fixtures agree; sees no GPU in {unseen:?}");
    assert!(compared >= 40, "only {compared} fixtures compared");
}
