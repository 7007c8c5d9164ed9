//! Test kit shared by the workspace-level tests: where the fixtures are and which exist, and the
//! malformed-input corpus.

use std::path::{Path, PathBuf};

pub mod malformed;

/// The workspace's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("fixtures")
}

/// Every fixture: a directory under `fixtures/` with a `fixture.toml`, sorted by name.
pub fn fixtures() -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/ is readable")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("fixture.toml").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    found.sort();
    found
}

/// The report of a fixture, with default options.
pub fn report(name: &str) -> rocm_probe::Report {
    let dir = fixtures_dir().join(name);
    rocm_probe::Report::collect(
        &rocm_probe::Source::fixture(dir).expect("fixture.toml parses"),
        rocm_probe::report::Options::default(),
    )
}

/// Every fixture's report, with default options, in the calling thread's language.
pub fn reports() -> Vec<(String, rocm_probe::Report)> {
    fixtures()
        .into_iter()
        .map(|(name, dir)| {
            let source = rocm_probe::Source::fixture(&dir).expect("fixture.toml parses");
            let report =
                rocm_probe::Report::collect(&source, rocm_probe::report::Options::default());
            (name, report)
        })
        .collect()
}

/// The first finding with `id`; panics with the whole list when there is none.
pub fn finding<'r>(r: &'r rocm_probe::Report, id: &str) -> &'r rocm_probe::Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id} missing: {:#?}", r.findings))
}

/// The value of the first piece of evidence whose source ends with `source_suffix`
/// (`"(absent)"` for evidence of absence).
pub fn evidence(f: &rocm_probe::Finding, source_suffix: &str) -> Option<String> {
    f.evidence
        .iter()
        .find(|e| e.source.ends_with(source_suffix))
        .map(|e| e.value.clone().unwrap_or_else(|| "(absent)".into()))
}

/// A copy of a fixture in a temporary directory, to derive a new scenario from it in a test;
/// its `[expect]` is dropped (the copy is no longer that scenario).
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let status = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", fixtures_dir().join(name).display())])
        .arg(dir.path())
        .status()
        .expect("cp runs");
    assert!(status.success(), "copying fixture {name}");
    let toml = dir.path().join("fixture.toml");
    if let Ok(text) = std::fs::read_to_string(&toml) {
        let cut = text.find("[expect]").unwrap_or(text.len());
        std::fs::write(&toml, &text[..cut]).expect("fixture.toml rewritten");
    }
    dir
}

/// [`copy_fixture`] with the fixture's `[env]` table replaced by `env` (none when empty): the
/// same machine in another environment.
pub fn copy_fixture_with_env(name: &str, env: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = copy_fixture(name);
    let toml = dir.path().join("fixture.toml");
    let text = std::fs::read_to_string(&toml).expect("fixture.toml");
    let mut kept = String::new();
    let mut in_env = false;
    for line in text.lines() {
        if line.trim_start().starts_with('[') {
            in_env = line.trim() == "[env]";
        }
        if !in_env {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    if !env.is_empty() {
        kept.push_str("\n[env]\n");
        for (k, v) in env {
            kept.push_str(&format!("{k} = {v:?}\n"));
        }
    }
    std::fs::write(&toml, kept).expect("fixture.toml rewritten");
    dir
}

/// Whether the oracle at `path` is installed. Where it is not, a test skips — except under CI,
/// which installs Debian's `package` (scripts/test), so a missing oracle fails there.
pub fn have(path: &str, package: &str) -> bool {
    if std::path::Path::new(path).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{path} missing: CI installs Debian's {package}"
    );
    eprintln!("skipped: {path} not installed (Debian package {package})");
    false
}

/// The `rocm-probe` binary: `ROCM_PROBE_BIN`, else the one cargo built beside this test.
pub fn probe_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("ROCM_PROBE_BIN") {
        return PathBuf::from(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs the tests that start the binary against the release build (ROCM_PROBE_BIN)"
    );
    // target/<profile>/deps/<test>-<hash> → target/<profile>/rocm-probe
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps")
        .join("rocm-probe");
    assert!(
        bin.is_file(),
        "{} is missing: build it (cargo build -p rocm-probe-cli) or name one in ROCM_PROBE_BIN",
        bin.display()
    );
    bin
}

/// An oracle that cannot run here skips with the reason, except under CI, where `scripts/test`
/// installs and enables everything: there it fails.
pub fn skip_oracle(reason: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "oracle cannot run under CI: {reason}"
    );
    eprintln!("skipped: {reason}");
}
