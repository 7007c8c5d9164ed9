//! Test kit shared by the workspace-level tests: where the fixtures are and which exist.

use std::path::PathBuf;

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
