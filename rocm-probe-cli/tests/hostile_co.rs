//! Code objects and library files made to hurt the reader: a FIFO where a file should be, bundle
//! headers that made listing quadratic or its output thousands of times the input, compressed
//! bundles that decompress to gigabytes, entries that overlap, a planted symlink in the
//! extraction directory, and a huge malformed library in a snapshot. Each run is killed after a
//! generous bound (a hang fails, never stalls) and, where memory is the point, runs in a capped
//! address space (`prlimit --as`); nothing is timed.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::Duration;

use assert_cmd::Command;
use rocm_probe::codeobject::{self, CodeObjectFile, Limits, Malformed, hostile};
use rocm_probe::{Facts, Source};

mod common;
use common::{Run, fixture, run};

const PRLIMIT: &str = "/usr/bin/prlimit";
/// Address space for a run: the binary and its libraries take tens of MiB, the caps allow
/// [`codeobject::MAX_DECOMPRESSED`] for one bundle; the mapped files come on top.
const ADDRESS_SPACE: u64 = 512 << 20;

/// `rocm-probe ARGS…` killed after 60 s, in `ADDRESS_SPACE` plus `mapped` bytes of address
/// space.
fn bounded(args: &[&str], files: &[&Path], mapped: u64) -> Run {
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let mut cmd = if Path::new(PRLIMIT).exists() {
        let mut c = Command::new(PRLIMIT);
        c.arg(format!("--as={}", ADDRESS_SPACE + mapped))
            .arg("--")
            .arg(bin);
        c
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI has util-linux");
        Command::new(bin)
    };
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args(args)
        .args(files)
        .timeout(Duration::from_secs(60));
    run(&mut cmd)
}

fn inspect(extra: &[&str], files: &[&Path]) -> Run {
    let mapped = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut args = vec!["inspect", "--target", "gfx90a:sramecc+:xnack-"];
    args.extend(extra);
    bounded(&args, files, mapped)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn mkfifo(path: &Path) {
    let status = StdCommand::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Bytes of the regular files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Asserts an exit 2 whose first line names `path` and says `message`, with nothing on stdout.
fn assert_refused(r: &Run, path: &Path, message: &str) {
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{} bytes on stdout", r.stdout.len());
    let line = r.stderr.lines().next().unwrap_or_default();
    assert!(
        line.contains(&path.display().to_string()) && line.contains(message),
        "wanted {message:?}: {}",
        r.stderr
    );
}

#[test]
fn a_fifo_to_inspect_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.co");
    mkfifo(&fifo);
    let link = dir.path().join("link.co");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for path in [&fifo, &link] {
        let r = inspect(&[], &[path]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("cannot read {}", path.display())),
            "{}",
            r.stderr
        );
    }
}

/// A copy of a fixture whose rocFFT (a library layer 5 reads the code of) is replaced by what
/// `change` makes at the given path; `[expect]` dropped, since it is no longer that scenario.
fn fixture_with_rocfft(change: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture("library-xnack-plus-only"), dir.path());
    let toml = dir.path().join("fixture.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let cut = text.find("[expect]").unwrap_or(text.len());
    std::fs::write(&toml, &text[..cut]).unwrap();
    let lib = dir.path().join(ROCFFT.trim_start_matches('/'));
    std::fs::remove_file(&lib).unwrap();
    change(&lib);
    (dir, lib)
}

const ROCFFT: &str = "/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200";

#[test]
fn a_fifo_for_a_library_does_not_hang_the_report_or_snapshot() {
    let (dir, _) = fixture_with_rocfft(mkfifo);
    let root = dir.path().to_str().unwrap();
    let r = bounded(&["--root", root, "report", "--json"], &[], 0);
    assert!(matches!(r.code, 0 | 1 | 3), "{}", r.stderr);
    assert!(r.stdout.contains("librocfft.so.0.1.60200"), "{}", r.stdout);
    assert!(r.stdout.contains("not a regular file"), "{}", r.stdout);
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    let r = bounded(
        &["snapshot", "--root", root, snap.to_str().unwrap()],
        &[],
        0,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn many_tiny_entries_stop_at_the_entry_cap() {
    // 224 bytes whose header lists 65,536 one-byte IDs: listing took 4 s and printed 6 MB.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "many.ccob",
        &hostile::compressed_many_entries(65_536, 1),
    );
    let r = inspect(&[], &[&file]);
    assert_refused(&r, &file, "declares 65536 entries (at most 1024 accepted)");
    // The same header uncompressed.
    let file = write(dir.path(), "many.bundle", &hostile::many_entries(65_536, 1));
    let r = inspect(&[], &[&file]);
    assert_refused(&r, &file, "(at most 1024 accepted)");
}

#[test]
fn long_ids_stop_at_the_id_cap_in_bounded_memory() {
    // 40 files of 1.8 KB, each 4,000 IDs of 4 KiB: 1.3 GB of memory and 664 MB printed.
    let dir = tempfile::tempdir().unwrap();
    let bytes = hostile::compressed_many_entries(4000, 4096);
    let files: Vec<PathBuf> = (0..40)
        .map(|i| write(dir.path(), &format!("long-{i:02}.ccob"), &bytes))
        .collect();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let r = inspect(&[], &paths);
    assert_refused(
        &r,
        &files[0],
        "declares 4000 entries (at most 1024 accepted)",
    );
    // Within the entry cap, the ID length is what stops it.
    let file = write(
        dir.path(),
        "long.ccob",
        &hostile::compressed_many_entries(1000, 4096),
    );
    let r = inspect(&[], &[&file]);
    assert_refused(&r, &file, "entry ID of 4096 bytes (at most 256 accepted)");
}

#[test]
fn many_full_bundles_stop_at_the_per_file_cap() {
    // Each bundle within the per-bundle caps (1,024 IDs of 256 bytes, 3 KB compressed), 70 of
    // them back to back: 18 MB of IDs listed from 200 KB.
    let one = hostile::compressed_many_entries(1024, 256);
    let data = one.repeat(70);
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "full.ccob", &data);
    let r = inspect(&[], &[&file]);
    assert_refused(
        &r,
        &file,
        "more than 16777216 bytes of entry IDs in one file (the cap on a listing)",
    );
}

#[test]
fn many_small_bundles_stop_at_the_per_file_entry_cap() {
    // 300 bundles of 1,024 one-byte IDs, back to back: 30 KB listed as 307,500 entries.
    let data = hostile::compressed_many_entries(1024, 1).repeat(300);
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "small.ccob", &data);
    let r = inspect(&[], &[&file]);
    assert_refused(
        &r,
        &file,
        "more than 262144 bundles and entries in one file (the cap on a listing)",
    );
}

#[test]
fn a_bundle_declaring_4_gib_is_not_decompressed_for_extract() {
    // 132 KB that truly decompress to 4 GiB: --extract took 4.2 GB and 23 s.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for (name, declared) in [
        ("4gib.ccob", 4u64 << 30),
        ("cap-plus-one.ccob", codeobject::MAX_DECOMPRESSED + 1),
    ] {
        let file = write(dir.path(), name, &hostile::declared_bomb(declared));
        // Listing reads the header only: fine.
        let r = inspect(&[], &[&file]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let r = inspect(&["--extract", out.to_str().unwrap()], &[&file]);
        assert_refused(
            &r,
            &file,
            &format!(
                "declares {declared} bytes uncompressed, above the limit of {}",
                codeobject::MAX_DECOMPRESSED
            ),
        );
        assert_eq!(bytes_under(&out), 0, "{name}");
    }
}

#[test]
fn overlapping_entries_are_not_extracted_over_and_over() {
    // 64 entries naming the same 1 MiB: 64 MiB written from 1 MiB decompressed.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let file = write(
        dir.path(),
        "overlap.ccob",
        &hostile::overlapping_entries(64, 1 << 20),
    );
    let r = inspect(&["--extract", out.to_str().unwrap()], &[&file]);
    assert_refused(&r, &file, "more than the 1048576 bytes of the bundle");
    assert_eq!(bytes_under(&out), 0);
}

/// Extraction within one budget across files: the run stops before the cap is passed, with an
/// error naming the file and the cap, having written no more than the cap.
#[test]
fn extraction_stops_at_the_run_cap() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let limits = Limits {
        max_extracted: 3 << 20,
        ..Limits::default()
    };
    let mut budget = codeobject::extract::Budget::new(limits.max_extracted);
    let mut written = 0;
    let mut failed = None;
    for i in 0..4 {
        let bytes = hostile::overlapping_entries(1, 1 << 20);
        let path = write(dir.path(), &format!("one-{i}.ccob"), &bytes);
        let file = CodeObjectFile::open_with(&path, limits).unwrap();
        let inspection = file.inspect().unwrap();
        match codeobject::extract::extract_within(&file, &inspection, &out, &mut budget) {
            Ok(x) => written += x.iter().map(|x| x.size).sum::<u64>(),
            Err(e) => {
                failed = Some((path, e));
                break;
            }
        }
    }
    let (path, err) = failed.expect("the fourth file passes the cap");
    assert!(path.ends_with("one-3.ccob"), "{}", path.display());
    assert!(
        matches!(
            &err,
            codeobject::Error::Malformed { kind: Malformed::ExtractTooLarge { limit }, .. }
                if *limit == 3 << 20
        ),
        "{err}"
    );
    assert!(err.to_string().contains("one-3.ccob"), "{err}");
    assert!(written <= 3 << 20 && bytes_under(&out) == written);
}

#[test]
fn extract_does_not_write_through_a_planted_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let file = write(
        dir.path(),
        "one.ccob",
        &hostile::overlapping_entries(1, 4096),
    );
    std::os::unix::fs::symlink(&victim, out.join("one.ccob-1-gfx90a.co")).unwrap();
    let _ = inspect(&["--extract", out.to_str().unwrap()], &[&file]);
    let kept = std::fs::read(&victim).unwrap();
    assert!(kept == b"keep me", "written through: {} bytes", kept.len());
}

#[test]
fn a_10_gb_sparse_file_is_not_a_code_object_and_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = dir.path().join("zeros.so");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let r = inspect(&[], &[&zeros]);
    assert_refused(&r, &zeros, "at offset 0x0: not an ELF file, offload bundle");
    // A bundle header, then 10 GB of padding: the padding is walked, in bounded memory.
    let padded = dir.path().join("padded.bundle");
    std::fs::write(&padded, hostile::many_entries(0, 0)).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&padded)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let r = inspect(&[], &[&padded]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    // Mapped pages count in the resident set (the walk once held all 10 GB): measured by
    // GNU time where it is installed.
    if !Path::new(GNU_TIME).exists() {
        eprintln!("skipped the resident-set check: {GNU_TIME} not installed (Debian package time)");
        return;
    }
    let out = StdCommand::new(GNU_TIME)
        .args(["-f", "%M"])
        .arg(assert_cmd::cargo::cargo_bin("rocm-probe"))
        .args(["inspect", "--target", "gfx90a"])
        .arg(&padded)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = stderr.lines().last().unwrap().trim().parse().unwrap();
    assert!(kib < 256 << 10, "{kib} KiB resident");
}

const GNU_TIME: &str = "/usr/bin/time";

/// A malformed library far over the copy limit is recorded as at most `COPY_LIMIT` bytes that
/// read back to the same problem.
#[test]
fn snapshot_records_a_huge_malformed_library_small() {
    // An ELF header whose section table lies past the end, then 700 MiB of (sparse) zeros.
    let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
    elf.resize(80, 0);
    elf[18] = 62;
    elf[40..48].copy_from_slice(&0x00ff_ffff_ffff_u64.to_le_bytes());
    elf[58..60].copy_from_slice(&64u16.to_le_bytes());
    elf[60..62].copy_from_slice(&3u16.to_le_bytes());
    let (dir, _) = fixture_with_rocfft(|lib| {
        std::fs::write(lib, &elf).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(lib).unwrap();
        f.set_len(700 << 20).unwrap();
    });
    let problem = |root: &Path| {
        let facts = Facts::collect(&Source::fixture(root).unwrap());
        let lib = facts
            .libraries
            .installs
            .iter()
            .flat_map(|i| &i.present)
            .find(|p| p.name == "rocfft")
            .expect("rocfft present")
            .clone();
        serde_json::to_value(lib.code_unread.expect("rocfft unread")).unwrap()
    };
    let before = problem(dir.path());
    assert_eq!(before["status"], "problem", "{before}");
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(dir.path()).unwrap(), &snap, false)
        .unwrap();
    let copied = snap.join(ROCFFT.trim_start_matches('/'));
    let size = std::fs::metadata(&copied).unwrap().len();
    assert!(
        size <= rocm_probe::facts::fatbin::COPY_LIMIT,
        "{size} bytes copied"
    );
    assert_eq!(problem(&snap), before);

    // A good bundle, then past the limit one that declares too many entries: the first bytes
    // read fine, so a small stand-in is recorded that is still a malformed library.
    let (dir, _) = fixture_with_rocfft(|lib| {
        let mut data = hostile::many_entries(1, 8);
        data.resize(2 << 20, 0);
        data.extend(hostile::many_entries(2000, 1));
        std::fs::write(lib, &data).unwrap();
    });
    let before = problem(dir.path());
    let message = before["problem"]["message"].as_str().unwrap();
    assert!(message.contains("at most 1024"), "{before}");
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(dir.path()).unwrap(), &snap, false)
        .unwrap();
    let copied = snap.join(ROCFFT.trim_start_matches('/'));
    let size = std::fs::metadata(&copied).unwrap().len();
    assert!(size <= 4096, "{size} bytes copied");
    let after = problem(&snap);
    assert_eq!(after["problem"]["path"], before["problem"]["path"]);
    assert_eq!(after["problem"]["kind"], before["problem"]["kind"]);
}

/// A code object on its own over the copy limit is recorded as its ELF header, which reads
/// back to the same code.
#[test]
fn snapshot_records_a_huge_code_object_as_its_header() {
    // gfx90a (mach 0x3f), code object v4 (ABI version 2), xnack off sramecc any.
    let mut co = vec![0u8; 64];
    co[..4].copy_from_slice(b"\x7fELF");
    co[4] = 2;
    co[5] = 1;
    co[7] = 64;
    co[8] = 2;
    co[16..18].copy_from_slice(&3u16.to_le_bytes());
    co[18..20].copy_from_slice(&224u16.to_le_bytes());
    co[48..52].copy_from_slice(&(0x3fu32 | 0x200).to_le_bytes());
    let (dir, _) = fixture_with_rocfft(|lib| {
        std::fs::write(lib, &co).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(lib).unwrap();
        f.set_len(2 << 20).unwrap();
    });
    let code = |root: &Path| {
        let facts = Facts::collect(&Source::fixture(root).unwrap());
        facts
            .libraries
            .installs
            .iter()
            .flat_map(|i| &i.present)
            .find(|p| p.name == "rocfft")
            .and_then(|p| p.code.clone())
            .expect("rocfft code read")
    };
    let before = code(dir.path());
    assert_eq!(before.targets, ["gfx90a:xnack-"]);
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(dir.path()).unwrap(), &snap, false)
        .unwrap();
    let size = std::fs::metadata(snap.join(ROCFFT.trim_start_matches('/')))
        .unwrap()
        .len();
    assert_eq!(size, 64);
    assert_eq!(code(&snap), before);
}

/// Listing many files within one budget: the run stops at the file that passes the cap, with an
/// error naming it and the cap. (`inspect FILE…` holds every listing until it prints them.)
#[test]
fn a_run_over_many_files_stops_at_the_run_listing_cap() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = hostile::compressed_many_entries(1000, 1);
    let mut budget = codeobject::ListingBudget::new(5000, 1 << 20);
    let mut listed = 0;
    let mut failed = None;
    for i in 0..6 {
        let path = write(dir.path(), &format!("many-{i}.ccob"), &bytes);
        match CodeObjectFile::open(&path)
            .unwrap()
            .inspect_within(&mut budget)
        {
            Ok(i) => listed += i.bundles[0].entries.len(),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    assert_eq!(listed, 4000);
    let err = failed.expect("the fifth file passes the cap");
    assert!(
        matches!(
            &err,
            codeobject::Error::Malformed { path, kind: Malformed::TooManyInRun { limit: 5000 }, .. }
                if path.ends_with("many-4.ccob")
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("more than 5000 bundles and entries in all the files")
    );
}
