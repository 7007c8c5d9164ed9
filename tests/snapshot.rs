//! Round trip (ARCHITECTURE.md §4a): with `--no-redact`, the report of `snapshot(X)` equals the report of
//! X, for every fixture — and so do the agents and targets, which read a subset.

use rocm_probe::report::Options;
use rocm_probe::{Inventory, Report, Source};
use rocm_probe_tests::fixtures;

#[test]
fn snapshot_round_trips_every_fixture() {
    for (name, dir) in fixtures() {
        let before = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
        let inv_before = Inventory::collect(&Source::fixture(&dir).unwrap()).ok();
        let out = tempfile::tempdir().unwrap();
        let snap = out.path().join("snap");
        let summary =
            rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), &snap, false)
                .unwrap();
        assert!(summary.failed.is_empty(), "{name}: {:?}", summary.failed);
        let source = Source::fixture(&snap).unwrap();
        let after = Report::collect(&source, Options::default());
        assert_eq!(before, after, "{name}: report differs after the round trip");
        let inv_after = Inventory::collect(&source).ok();
        assert_eq!(
            inv_before, inv_after,
            "{name}: agents differ after the round trip"
        );

        // The snapshot holds only what was read: no more files than the fixture has.
        let count = |d: &std::path::Path| walk(d).into_iter().filter(|p| p.is_file()).count();
        assert!(
            count(&snap) <= count(&dir) + 1,
            "{name}: snapshot holds more files than the fixture"
        );
    }
}

#[test]
fn redacted_snapshot_hides_unique_ids_and_user_names() {
    let dir = rocm_probe_tests::fixtures_dir().join("apu-phoenix-780m");
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), &snap, true).unwrap();
    let props = std::fs::read_to_string(snap.join("sys/class/kfd/kfd/topology/nodes/1/properties"))
        .unwrap();
    assert!(props.lines().any(|l| l == "unique_id 0"), "{props}");
    let group = std::fs::read_to_string(snap.join("etc/group")).unwrap();
    assert!(!group.contains("probe"), "{group}");
    let report = Report::collect(&Source::fixture(&snap).unwrap(), Options::default());
    assert_eq!(report.facts.targets, ["gfx1103"]);
}

#[test]
fn snapshot_refuses_a_non_empty_directory() {
    let dir = rocm_probe_tests::fixtures_dir().join("rx7900xtx");
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("keep"), "x").unwrap();
    let err =
        rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), out.path(), true)
            .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn snapshot_into_a_tar_gz_archive() {
    let dir = rocm_probe_tests::fixtures_dir().join("apu-phoenix-780m");
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("phoenix.tar.gz");
    rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), &archive, false)
        .unwrap();
    let unpacked = out.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    let before = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
    let after = Report::collect(
        &Source::fixture(unpacked.join("snapshot")).unwrap(),
        Options::default(),
    );
    assert_eq!(before, after);
    // Only the archive is left behind.
    let left: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// A directory entry whose name is not UTF-8 cannot be written as the report saw it (with
/// U+FFFD): it is listed as not copied, and no altered name is written instead.
#[test]
fn a_non_utf8_entry_is_listed_not_copied() {
    use std::os::unix::ffi::OsStrExt;
    let machine = rocm_probe_tests::copy_fixture("rx7900xtx");
    let modprobe = machine.path().join("etc/modprobe.d");
    std::fs::create_dir_all(&modprobe).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"\xffbad.conf");
    std::fs::write(modprobe.join(name), "blacklist amdgpu\n").unwrap();
    for redact in [false, true] {
        let out = tempfile::tempdir().unwrap();
        let snap = out.path().join("snap");
        let summary = rocm_probe::export::snapshot::snapshot(
            Source::fixture(machine.path()).unwrap(),
            &snap,
            redact,
        )
        .unwrap();
        assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
        let failed = &summary.failed[0];
        assert!(
            failed.starts_with("/etc/modprobe.d/") && failed.contains("bad.conf"),
            "{failed}"
        );
        assert!(failed.contains("UTF-8"), "{failed}");
        let altered: Vec<_> = walk(&snap)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains('\u{FFFD}'))
            .collect();
        assert!(altered.is_empty(), "{altered:?}");
    }
}

/// `--root x.tar.gz` (issue 15): every fixture packed by GNU tar, symlinks and all, reads the
/// same from the archive in memory as from its directory — report and agents — and so does its
/// snapshot written as an archive.
#[test]
fn every_fixture_reads_the_same_from_a_tar_gz() {
    let out = tempfile::tempdir().unwrap();
    for (name, dir) in fixtures() {
        let archive = out.path().join(format!("{name}.tgz"));
        let status = std::process::Command::new("tar")
            .arg("czf")
            .arg(&archive)
            .arg("-C")
            .arg(dir.parent().unwrap())
            .arg(&name)
            .status()
            .unwrap();
        assert!(status.success(), "{name}");
        let before = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
        let source = Source::fixture(&archive).unwrap();
        assert_eq!(
            before,
            Report::collect(&source, Options::default()),
            "{name}: the archive reads differently"
        );
        assert_eq!(
            Inventory::collect(&Source::fixture(&dir).unwrap()).ok(),
            Inventory::collect(&source).ok(),
            "{name}: agents differ"
        );
        let snap = out.path().join(format!("{name}-snap.tar.gz"));
        rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), &snap, false)
            .unwrap();
        assert_eq!(
            before,
            Report::collect(&Source::fixture(&snap).unwrap(), Options::default()),
            "{name}: its snapshot archive reads differently"
        );
        std::fs::remove_file(&archive).unwrap();
    }
}
