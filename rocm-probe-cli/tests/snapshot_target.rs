//! `snapshot` writes only where it was asked to, as root, in directories others may own: a
//! symlink, FIFO or existing file at the target is refused (exit 2, the path named), and
//! nothing appears at a link's target.

mod common;

use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;

use common::{fixture, probe, run};

fn snapshot_to(target: &Path) -> common::Run {
    run(probe()
        .arg("--root")
        .arg(fixture("rx7900xtx"))
        .arg("snapshot")
        .arg(target))
}

fn refused(r: &common::Run, target: &Path) {
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&target.display().to_string()),
        "the error does not name {}: {}",
        target.display(),
        r.stderr
    );
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_dangling_symlink_as_the_archive_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let elsewhere = out.path().join("elsewhere.tar.gz");
    let archive = out.path().join("snap.tar.gz");
    symlink(&elsewhere, &archive).unwrap();
    refused(&snapshot_to(&archive), &archive);
    assert!(
        std::fs::symlink_metadata(&elsewhere).is_err(),
        "written at the link's target"
    );
    assert!(
        std::fs::symlink_metadata(&archive)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(names(out.path()), ["snap.tar.gz"], "staging left behind");
}

#[test]
fn a_symlink_to_a_directory_as_the_target_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let real = out.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = out.path().join("snap");
    symlink(&real, &link).unwrap();
    let r = snapshot_to(&link);
    refused(&r, &link);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(names(&real).is_empty(), "written through the link");
}

#[test]
fn an_existing_file_as_the_archive_is_kept() {
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("snap.tar.gz");
    std::fs::write(&archive, "mine").unwrap();
    refused(&snapshot_to(&archive), &archive);
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), "mine");
    assert_eq!(names(out.path()), ["snap.tar.gz"]);
}

#[test]
fn a_fifo_as_the_archive_is_refused_without_opening_it() {
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("snap.tgz");
    let made = std::process::Command::new("mkfifo")
        .arg(&archive)
        .status()
        .unwrap();
    assert!(made.success());
    // A hang (opening the FIFO waits for a reader) is killed by `probe()`'s bound and fails.
    refused(&snapshot_to(&archive), &archive);
    assert!(
        std::fs::symlink_metadata(&archive)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn an_empty_real_directory_is_used_and_the_archive_is_readable_by_all() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("snap");
    std::fs::create_dir(&dir).unwrap();
    let r = snapshot_to(&dir);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(dir.join("fixture.toml").is_file());
    let archive = out.path().join("snap.tar.gz");
    let r = snapshot_to(&archive);
    assert_eq!(r.code, 0, "{}", r.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&archive).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
}
