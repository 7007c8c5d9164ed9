//! 80 columns (issue #18, item 3): every fixture's text output, in English and Chinese, at
//! COLUMNS=80 has no line wider than 80 display columns, except a line that is one token that
//! cannot be broken (a path, a URL, a command word longer than the line) after its indent.
//! Diagnostics on standard error stay one line each (logs and grep), and are not checked.

mod common;

use common::{probe, run};
use unicode_width::UnicodeWidthStr;

const WIDTH: usize = 80;

/// The lines of `text` wider than [`WIDTH`] that could have been broken.
fn too_wide(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.width() > WIDTH)
        // One token, or one token ending a shell continuation.
        .filter(|l| l.trim().trim_end_matches(" \\").contains(' '))
        .map(str::to_owned)
        .collect()
}

fn check(args: &[&str], failures: &mut Vec<String>) {
    for lang in ["en", "zh"] {
        let r = run(probe()
            .env("COLUMNS", WIDTH.to_string())
            .args(["--lang", lang])
            .args(args));
        assert!(
            r.code != 2 || args.contains(&"inspect"),
            "{args:?}: {}",
            r.stderr
        );
        for line in too_wide(&r.stdout) {
            failures.push(format!("{lang} {args:?}: {line}"));
        }
    }
}

#[test]
fn every_fixture_fits_80_columns_in_both_languages() {
    let all = rocm_probe_tests::fixtures();
    assert!(all.len() > 50, "{}", all.len());
    let failures = std::sync::Mutex::new(Vec::new());
    // Two workers: the machine the tests run on has two cores.
    let (left, right) = all.split_at(all.len() / 2);
    std::thread::scope(|s| {
        for half in [left, right] {
            let failures = &failures;
            s.spawn(move || {
                let mut mine = Vec::new();
                for (_, dir) in half {
                    let root = dir.display().to_string();
                    for command in [
                        &["report"][..],
                        &["report", "-v"],
                        &["agents"],
                        &["agents", "--active"],
                        &["topo"],
                        &["topo", "--nodes"],
                        &["ps"],
                    ] {
                        let mut args = vec![command[0], "--root", &root];
                        args.extend(&command[1..]);
                        check(&args, &mut mine);
                    }
                }
                failures.lock().unwrap().extend(mine);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn explain_fits_80_columns() {
    let mut failures = Vec::new();
    check(&["explain"], &mut failures);
    check(&["explain", "--data"], &mut failures);
    check(&["explain", "driver.kfd-permission-denied"], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_sweep_sees_a_wide_line() {
    let wide = format!("{} {}", "a".repeat(50), "b".repeat(50));
    assert_eq!(too_wide(&wide).len(), 1);
    assert!(too_wide(&format!("     {}", "/x".repeat(60))).is_empty());
    assert_eq!(too_wide(&"通过 ".repeat(20)).len(), 1);
}

/// Without COLUMNS and not on a terminal (a pipe, a file): 80 columns.
#[test]
fn a_pipe_gets_80_columns() {
    let r = run(probe()
        .env_remove("COLUMNS")
        .arg("--root")
        .arg(common::fixture("kfd-permission-denied")));
    assert!(r.stdout.lines().all(|l| l.width() <= WIDTH), "{}", r.stdout);
    assert!(
        r.stdout.lines().next().unwrap().width() > 60,
        "{}",
        r.stdout
    );
}
