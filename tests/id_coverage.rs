//! Every declared finding id is produced by something committed: a fixture's report (with its
//! `[active]` replay, which `Report::collect` uses whenever the fixture has one), a conformance
//! file of `fixtures/expect/` run against the fixture it names, or a case of the malformed-input
//! corpus — committed, or generated at test time (what git cannot hold: FIFOs, device nodes,
//! mode-000 files read as `nobody` through `setpriv`) and run through the `rocm-probe` binary.
//! An id nothing produces has nothing proving it can fire; the ones not covered yet are listed,
//! each with why, and the list may only shrink.
//!
//! The generated corpus needs root (to run the binary as another user), as CI has: without it
//! the test fails rather than count less. The binary is `ROCM_PROBE_BIN` (the release build, as
//! `scripts/test` sets it), else the debug build beside this test's own executable, which must be
//! built from the same tree (`cargo build -p rocm-probe-cli`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rocm_probe::finding::rules;
use rocm_probe::report::Options;
use rocm_probe::report::expect::Expectations;
use rocm_probe::{Report, Source};

use rocm_probe_tests::malformed::{self, is_root, unprivileged};
use rocm_probe_tests::{fixtures, fixtures_dir, probe_binary};

/// Declared ids no committed case produces yet, with why.
const NOT_YET_COVERED: &[(&str, &str)] = &[];

/// Finding id → the cases producing it.
type Coverage = BTreeMap<String, BTreeSet<String>>;

fn record(cov: &mut Coverage, report: &Report, case: &str) {
    for f in &report.findings {
        cov.entry(f.id.to_owned())
            .or_default()
            .insert(case.to_owned());
    }
}

fn fixture_reports(cov: &mut Coverage) {
    for (name, dir) in fixtures() {
        let source = Source::fixture(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        record(cov, &Report::collect(&source, Options::default()), &name);
    }
}

/// The fixture a conformance file runs against: its first line, `# fixture: NAME`.
fn target_fixture(text: &str, file: &Path) -> String {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("# fixture: "))
        .unwrap_or_else(|| panic!("{}: first line is not `# fixture: NAME`", file.display()))
        .trim()
        .to_owned()
}

fn conformance_runs(cov: &mut Coverage) {
    let dir = fixtures_dir().join("expect");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/expect/ is readable")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no conformance file in {}",
        dir.display()
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = target_fixture(&text, &file);
        let expect = Expectations::parse(&text, &file.display().to_string())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let source = Source::fixture(fixtures_dir().join(&name))
            .unwrap_or_else(|e| panic!("{}: fixture {name}: {e}", file.display()));
        let options = Options {
            expect: Some(expect),
            ..Default::default()
        };
        let stem = file.file_stem().unwrap().to_string_lossy();
        record(
            cov,
            &Report::collect(&source, options),
            &format!("expect/{stem} on {name}"),
        );
    }
}

/// The committed cases of the malformed corpus (and its clean `base`), in process. A case whose
/// `fixture.toml` is the defect gives an error, not a report.
fn malformed_corpus(cov: &mut Coverage) {
    let corpus = malformed::corpus();
    let mut dirs: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("fixture.toml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 30, "malformed cases found: {}", dirs.len());
    for dir in dirs {
        let case = dir.file_name().unwrap().to_string_lossy();
        if let Ok(source) = Source::fixture(&dir) {
            let report = Report::collect(&source, Options::default());
            record(cov, &report, &format!("malformed/{case}"));
        }
    }
}

/// Runs `cmd` to its end, killed after a generous bound (a hang fails the test); returns the
/// exit code and standard output.
fn run_bounded(cmd: &mut Command) -> (i32, Vec<u8>) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).map(|_| out)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{cmd:?}: still running after 60 s, killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = reader.join().unwrap().unwrap();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("{cmd:?}: killed by a signal: {status}"));
    (code, out)
}

/// The generated cases of the malformed corpus (`rocm_probe_tests::malformed` makes them, as
/// `rocm-probe-cli/tests/malformed.rs` does), each run through the binary with `--json`; the
/// permission cases as `nobody`.
fn generated_corpus(cov: &mut Coverage) {
    assert!(
        is_root(),
        "the generated corpus needs root: its mode-000 files are read by uid {} through setpriv, \
         and root reads anything (run this test as root, as CI does)",
        malformed::NOBODY
    );
    assert!(
        Path::new("/usr/bin/setpriv").is_file(),
        "/usr/bin/setpriv is missing: CI installs Debian's util-linux"
    );
    let cases: Vec<_> = malformed::cases()
        .into_iter()
        .filter(|c| c.generate.is_some())
        .collect();
    assert!(!cases.is_empty(), "no generated case in cases.toml");
    let scratch = tempfile::tempdir().unwrap();
    // nobody must reach the binary and the cases.
    let bin = scratch.path().join("rocm-probe");
    std::fs::copy(probe_binary(), &bin).unwrap();
    let chmod = Command::new("chmod")
        .arg("a+rx")
        .arg(scratch.path())
        .arg(&bin)
        .status()
        .unwrap();
    assert!(chmod.success());
    for case in cases {
        let dir = scratch.path().join(&case.name);
        let mut cmd = if case.build(&dir) {
            unprivileged(&bin)
        } else {
            Command::new(&bin)
        };
        cmd.env_clear().arg("--root").arg(&dir).arg("--json");
        let (code, out) = run_bounded(&mut cmd);
        assert!(
            matches!(code, 0 | 1 | 3),
            "malformed/{} (generated): exit {code}",
            case.name
        );
        let doc: serde_json::Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("malformed/{} (generated): --json: {e}", case.name));
        let findings = doc["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("malformed/{}: no findings array", case.name));
        for f in findings {
            let id = f["id"].as_str().expect("a finding id is a string");
            cov.entry(id.to_owned())
                .or_default()
                .insert(format!("malformed/{} (generated)", case.name));
        }
    }
}

fn coverage() -> Coverage {
    let mut cov = Coverage::new();
    fixture_reports(&mut cov);
    conformance_runs(&mut cov);
    malformed_corpus(&mut cov);
    generated_corpus(&mut cov);
    cov
}

#[test]
fn every_declared_finding_id_is_produced_by_a_committed_case() {
    let cov = coverage();
    let declared: BTreeSet<&str> = rules().iter().map(|r| r.id).collect();
    let listed: BTreeMap<&str, &str> = NOT_YET_COVERED.iter().copied().collect();
    assert_eq!(listed.len(), NOT_YET_COVERED.len(), "an id listed twice");

    let stale: Vec<&&str> = listed.keys().filter(|id| !declared.contains(*id)).collect();
    let now_covered: Vec<String> = listed
        .keys()
        .filter_map(|id| cov.get(*id).map(|cases| format!("{id} (by {cases:?})")))
        .collect();
    let uncovered: Vec<&&str> = declared
        .iter()
        .filter(|id| !cov.contains_key(**id) && !listed.contains_key(*id))
        .collect();
    let undeclared: Vec<&String> = cov
        .keys()
        .filter(|id| !declared.contains(id.as_str()))
        .collect();

    assert!(
        stale.is_empty(),
        "NOT_YET_COVERED names ids that are not declared: {stale:?}"
    );
    assert!(
        now_covered.is_empty(),
        "covered now, remove from NOT_YET_COVERED: {now_covered:#?}"
    );
    assert!(
        uncovered.is_empty(),
        "declared ids no fixture, conformance file or malformed case produces \
         (add a scenario, or list the id in NOT_YET_COVERED with why): {uncovered:#?}"
    );
    assert!(
        undeclared.is_empty(),
        "undeclared ids emitted: {undeclared:?}"
    );
}

#[test]
fn every_not_yet_covered_entry_says_why() {
    for (id, why) in NOT_YET_COVERED {
        assert!(why.split_whitespace().count() >= 4, "{id}: reason {why:?}");
    }
}
