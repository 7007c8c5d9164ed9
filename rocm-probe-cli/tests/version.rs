//! `--version`: the version and the source revision build.rs recorded (the commit of this
//! checkout, "unknown" outside one).

use std::process::Command as StdCommand;

mod common;
use common::{probe, run};

/// What build.rs finds: this checkout's HEAD when build.rs is tracked in it, else "unknown".
fn expected_revision() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        StdCommand::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["ls-files", "--error-unmatch", "build.rs"]) {
        Some(_) => git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into()),
        None => "unknown".into(),
    }
}

#[test]
fn version_names_the_source_revision() {
    let r = run(probe().arg("--version"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let expected = format!(
        "rocm-probe {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        expected_revision()
    );
    assert_eq!(r.stdout, expected);
    // A checkout's revision is a 12-digit hash, never empty.
    let rev = r
        .stdout
        .trim_end()
        .rsplit('(')
        .next()
        .unwrap()
        .trim_end_matches(')');
    assert!(
        rev == "unknown" || (rev.len() == 12 && rev.chars().all(|c| c.is_ascii_hexdigit())),
        "{rev}"
    );
}
