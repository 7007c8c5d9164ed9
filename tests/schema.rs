//! The JSON Schema of `report --json` is committed (`schema/report.schema.json`); it must equal
//! the one generated from the types, and every fixture's report must validate against it.
//! `UPDATE_SCHEMA=1 cargo test -p rocm-probe-tests --test schema` rewrites the file.

use rocm_probe::report::Options;
use rocm_probe::report::output::{Document, report_schema};
use rocm_probe::{Report, Source};
use rocm_probe_tests::fixtures;

fn committed_path() -> std::path::PathBuf {
    rocm_probe_tests::fixtures_dir()
        .parent()
        .unwrap()
        .join("schema/report.schema.json")
}

#[test]
fn committed_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&report_schema()).unwrap() + "\n";
    let path = committed_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schema/report.schema.json is out of date with the report types; rerun with UPDATE_SCHEMA=1 and review the diff"
    );
}

#[test]
fn every_fixture_report_validates() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(committed_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (name, dir) in fixtures() {
        let source = Source::fixture(&dir).unwrap();
        let report = Report::collect(&source, Options::default());
        let doc = serde_json::to_value(Document::new(&source, &report)).unwrap();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
    // A document that breaks the contract is rejected (the validator is not vacuous).
    let bad = serde_json::json!({"schema_version": "one"});
    assert!(!validator.is_valid(&bad));
}
