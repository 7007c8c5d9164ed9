//! Every declared finding id is produced by something committed: a fixture's report (with its
//! `[active]` replay, which `Report::collect` uses whenever the fixture has one), a conformance
//! file of `fixtures/expect/` run against the fixture it names, or a committed case of the
//! malformed-input corpus. An id nothing produces has nothing proving it can fire; the ones not
//! covered yet are listed, each with why, and the list may only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rocm_probe::finding::rules;
use rocm_probe::report::Options;
use rocm_probe::report::expect::Expectations;
use rocm_probe::{Report, Source};

use rocm_probe_tests::{fixtures, fixtures_dir};

/// Declared ids no committed case produces yet, with why.
const NOT_YET_COVERED: &[(&str, &str)] = &[
    (
        "driver.input-unreadable",
        "needs a mode-000 file read by a non-root user: git keeps no mode 000 and this test runs as root",
    ),
    (
        "driver.kfd-clock-stuck",
        "no `[active]` fixture with this result yet (no public report found in the time)",
    ),
    (
        "driver.kfd-ioctl-failed",
        "no `[active]` fixture with this result yet (no public report found in the time)",
    ),
    (
        "driver.kfd-unreadable",
        "needs a mode-000 file read by a non-root user: git keeps no mode 000 and this test runs as root",
    ),
    (
        "frameworks.jax-plugin-mismatch",
        "no fixture: the JAX plugin failures found (ROCm/jax#268, ROCm/rocm_smi_lib#215: jax_rocm60_plugin on ROCm 6.2.x missing librocm_smi64.so.6) are within one ROCm major, which this check by design does not flag; no report of a plugin of another major was found",
    ),
    (
        "frameworks.tensorflow-not-rocm",
        "no fixture: the one report found (ROCm/legacy-rocm-build#442, tensorflow-gpu in ~/.local on ROCm 1.8) needs ROCm 1.x's /opt/rocm/hsa/lib layout, which the install scan does not read; no newer report of a non-ROCm TensorFlow on a ROCm machine was found",
    ),
    (
        "hardware.partition-mode-mismatch",
        "no fixture yet: needs a real capture of a partition-mode change left pending",
    ),
    (
        "libraries.files-unreadable",
        "needs a mode-000 file read by a non-root user: git keeps no mode 000 and this test runs as root",
    ),
    (
        "runtime.hsa-override-unknown-target",
        "no fixture yet: no public report turned into a scenario in the time",
    ),
    (
        "runtime.install-files-malformed",
        "no malformed-corpus case for a ROCm install file yet",
    ),
    (
        "runtime.install-files-unreadable",
        "needs a mode-000 file read by a non-root user: git keeps no mode 000 and this test runs as root",
    ),
    (
        "runtime.rocm-path-invalid",
        "the scenario hip-path-stale (a stale HIP_PATH, legacy-rocm-build#6285) should give it, but the probe takes any path under an install prefix as valid",
    ),
    (
        "runtime.rocr-load-failed",
        "a real loader message (`libhsakmt.so.1: cannot open shared object file`, ROCm 3.9.1 without its thunk) is printed unquoted in the Chinese report, and `cannot` may not join the zh allowlist",
    ),
    (
        "runtime.target-deprecated",
        "no fixture yet: no public report turned into a scenario in the time",
    ),
    (
        "thunk.hsakmt-load-failed",
        "no `[active]` fixture with this result yet (no public report found in the time)",
    ),
    (
        "tools.files-unreadable",
        "needs a mode-000 file read by a non-root user: git keeps no mode 000 and this test runs as root",
    ),
    (
        "workloads.hive-incomplete",
        "no fixture yet: needs a real capture of an XGMI hive with a missing link",
    ),
    (
        "workloads.no-p2p",
        "no fixture yet: no public report turned into a scenario in the time",
    ),
];

/// Finding id → the cases producing it.
type Coverage = BTreeMap<&'static str, BTreeSet<String>>;

fn record(cov: &mut Coverage, report: &Report, case: &str) {
    for f in &report.findings {
        cov.entry(f.id).or_default().insert(case.to_owned());
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

/// The committed cases of the malformed corpus (the generated ones need a FIFO, a device node
/// or a mode-000 file read by a non-root user: `rocm-probe-cli/tests/malformed.rs` makes them).
/// A case whose `fixture.toml` is the defect gives an error, not a report.
fn malformed_corpus(cov: &mut Coverage) {
    let corpus = fixtures_dir().join("malformed");
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

fn coverage() -> Coverage {
    let mut cov = Coverage::new();
    fixture_reports(&mut cov);
    conformance_runs(&mut cov);
    malformed_corpus(&mut cov);
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
        .filter_map(|id| cov.get(id).map(|cases| format!("{id} (by {cases:?})")))
        .collect();
    let uncovered: Vec<&&str> = declared
        .iter()
        .filter(|id| !cov.contains_key(*id) && !listed.contains_key(*id))
        .collect();
    let undeclared: Vec<&&str> = cov.keys().filter(|id| !declared.contains(*id)).collect();

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
