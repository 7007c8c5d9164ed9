//! Help and manual (issue #18, item 9): one generated page per command, the main page's EXIT
//! STATUS, ENVIRONMENT, FILES and EXAMPLES rendered by `man` itself, a NAME line that says what
//! the tool does, "did you mean" for explain, layer names, and help that says what is true.

mod common;

use common::{fixture, probe, run};

/// `man -l PAGE` as text, or `None` where man-db is not installed (never on CI).
fn render(page: &std::path::Path) -> Option<String> {
    if !std::path::Path::new("/usr/bin/man").exists() {
        assert!(std::env::var_os("CI").is_none(), "CI installs man-db");
        eprintln!("skipped: man -l (man-db not installed)");
        return None;
    }
    let out = std::process::Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "80")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn one_page_per_command_rendered_by_man() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let r = run(probe().args(["man", "--dir"]).arg(&pages));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let help = run(probe().arg("--help")).stdout;
    // Every command the help lists has its page.
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 14, "{commands:?}");
    assert!(commands.contains(&"fleet"), "{commands:?}");
    for c in &commands {
        let page = pages.join(format!("rocm-probe-{c}.1"));
        assert!(page.is_file(), "{}", page.display());
        if let Some(text) = render(&page) {
            assert!(text.contains(&format!("rocm-probe-{c}")), "{c}: {text}");
            assert!(text.contains("SYNOPSIS"), "{c}");
        }
    }
    let main = pages.join("rocm-probe.1");
    let Some(text) = render(&main) else { return };
    for section in [
        "NAME",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        assert!(
            text.lines().any(|l| l.trim_end() == section),
            "no {section} section:\n{text}"
        );
    }
    // NAME says what the tool does; the page names the per-command pages it now has.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("rocm-probe - Probe an AMD ROCm system layer by layer"),
        "{text}"
    );
    assert!(!text.contains("The rocm-probe command"));
    assert!(flat.contains("rocm-probe-topo(1)"), "{text}");
    assert!(text.contains("CLICOLOR_FORCE"));
    // `man COMMAND` prints that command's page.
    let topo = run(probe().args(["man", "topo"]));
    assert_eq!(topo.code, 0);
    assert!(
        topo.stdout.contains("rocm\\-probe\\-topo"),
        "{}",
        &topo.stdout[..300]
    );
    let none = run(probe().args(["man", "frobnicate"]));
    assert_eq!(none.code, 2);
    assert!(none.stderr.contains("topo"), "{}", none.stderr);
}

#[test]
fn help_says_what_is_true() {
    let help = run(probe().arg("--help")).stdout;
    assert!(!help.contains("So far `explain` is translated"), "{help}");
    assert!(help.contains("reports, explanations"), "{help}");
    let snapshot = run(probe().args(["snapshot", "--help"])).stdout;
    assert!(snapshot.contains(".tar.gz"), "{snapshot}");
    // man, completions and diff list no option they ignore.
    for (command, absent) in [
        ("man", &["--root", "--lang", "--color"][..]),
        ("completions", &["--root", "--lang", "--color"]),
        ("diff", &["--root", "--color"]),
        ("fleet", &["--root", "--color", "--lock"]),
    ] {
        let text = run(probe().args([command, "--help"])).stdout;
        for option in absent {
            assert!(!text.contains(option), "{command} lists {option}:\n{text}");
        }
    }
    let fleet = run(probe().args(["fleet", "--help"])).stdout;
    for word in ["pdsh", "16 MiB", "symlink", "html"] {
        assert!(fleet.contains(word), "fleet --help lacks {word}:\n{fleet}");
    }
    let check = run(probe().args(["check", "--help"])).stdout;
    assert!(check.contains("docs/conformance.md"), "{check}");
    assert!(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/conformance.md")
            .is_file()
    );
}

#[test]
fn layer_names_and_numbers() {
    let fix = fixture("rocm-6.2-mi210");
    let by_number = run(probe().arg("--root").arg(&fix).args(["--layer", "5"]));
    let by_name = run(probe()
        .arg("--root")
        .arg(&fix)
        .args(["--layer", "libraries"]));
    assert_eq!(by_number.code, 0, "{}", by_number.stderr);
    assert_eq!(by_number.stdout, by_name.stdout);
    assert!(
        by_name.stdout.contains("Layer 5 libraries"),
        "{}",
        by_name.stdout
    );
    let bad = run(probe().args(["--layer", "hardwar"]));
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("hardware, driver, thunk"),
        "{}",
        bad.stderr
    );
    assert!(!bad.stderr.contains("invalid digit"), "{}", bad.stderr);
}

#[test]
fn explain_offers_the_closest_ids() {
    let r = run(probe().args(["explain", "driver.kfd-permision-denied"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("did you mean driver.kfd-permission-denied"),
        "{}",
        r.stderr
    );
    let r = run(probe().args(["explain", "permission"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("driver.kfd-permission-denied"),
        "{}",
        r.stderr
    );
    let r = run(probe().args(["--lang", "zh", "explain", "driver.kfd-permision-denied"]));
    assert!(
        r.stderr.contains("是否想找 driver.kfd-permission-denied"),
        "{}",
        r.stderr
    );
    // Nothing near: the plain sentence.
    let r = run(probe().args(["explain", "zzzzzzzzzzzzzzzzzzzzzzzzzzzz"]));
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
}

/// Colour: --color, NO_COLOR, CLICOLOR_FORCE and TERM=dumb (issue #18, item 11).
#[test]
fn colour_follows_the_conventions() {
    let fix = fixture("rocm-6.2-mi210");
    let coloured = |envs: &[(&str, &str)], color: &str| {
        let mut cmd = probe();
        cmd.arg("--root").arg(&fix).args(["--color", color]);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        run(&mut cmd).stdout.contains("\x1b[")
    };
    // Standard output is a pipe here: auto does not colour, unless forced.
    assert!(!coloured(&[], "auto"));
    assert!(coloured(&[("CLICOLOR_FORCE", "1")], "auto"));
    assert!(!coloured(
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        "auto"
    ));
    assert!(coloured(&[], "always"));
    assert!(coloured(&[("NO_COLOR", "1"), ("TERM", "dumb")], "always"));
    assert!(!coloured(&[("CLICOLOR_FORCE", "1")], "never"));
    // A terminal (script(1) gives one): colour, but not with TERM=dumb or NO_COLOR.
    if std::path::Path::new("/usr/bin/script").exists() {
        let exe = assert_cmd::cargo::cargo_bin("rocm-probe");
        let on_tty = |term: &str, no_color: bool| {
            let cmd = format!("{} --root {} --layer 1", exe.display(), fix.display());
            let mut c = std::process::Command::new("script");
            c.args(["-qec", &cmd, "/dev/null"])
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("TERM", term);
            if no_color {
                c.env("NO_COLOR", "1");
            }
            let out = c.output().unwrap();
            String::from_utf8_lossy(&out.stdout).contains("\x1b[3")
        };
        assert!(on_tty("xterm", false));
        assert!(!on_tty("dumb", false));
        assert!(!on_tty("xterm", true));
    }
}
