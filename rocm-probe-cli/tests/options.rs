//! Every option before every command (issue #18, item 1): enumerated from the clap definition
//! itself (`Args::command()`), never from a hand-kept list. An option given before a command is
//! either the command's own (it then gives exactly what it gives after the command's name, and
//! that has the option's observable effect) or refused with exit 2 and a sentence naming it.

mod common;

// The argument definitions of the binary, compiled into the test (they use only the crate's
// own dependencies).
#[allow(dead_code, unreachable_pub)]
#[path = "../src/args.rs"]
mod args;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use common::{fixture, probe, run};

/// The fixture every run reads, and a second one whose reports differ from it.
/// (It has warnings, for --strict, and recorded [active] results, for --active.)
const FIXTURE: &str = "active-container-dgpu-only";
const OTHER: &str = "rx7900xtx";

/// What a run gave, with its run directory's path replaced by `{R}`, and the files it left
/// there.
#[derive(Debug, PartialEq)]
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    files: BTreeMap<String, String>,
}

struct Ctx {
    tmp: tempfile::TempDir,
    runs: std::cell::Cell<u32>,
    report_json: PathBuf,
    other_json: PathBuf,
    expect: PathBuf,
    held_lock: PathBuf,
}

impl Ctx {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let report_json = tmp.path().join("a.json");
        let r = run(probe()
            .arg("--root")
            .arg(fixture(FIXTURE))
            .args(["--json", "-o"])
            .arg(&report_json));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let other_json = tmp.path().join("b.json");
        let r = run(probe()
            .arg("--root")
            .arg(fixture(OTHER))
            .args(["--json", "-o"])
            .arg(&other_json));
        assert!(other_json.is_file(), "{}", r.stderr);
        let expect = tmp.path().join("expect.toml");
        let r = run(probe()
            .arg("check")
            .arg("--root")
            .arg(fixture(FIXTURE))
            .arg("--write-expect")
            .arg(&expect));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let held_lock = tmp.path().join("held.lock");
        std::fs::File::create(&held_lock).unwrap();
        Self {
            tmp,
            runs: std::cell::Cell::new(0),
            report_json,
            other_json,
            expect,
            held_lock,
        }
    }

    /// A fresh, empty run directory.
    fn run_dir(&self) -> PathBuf {
        self.runs.set(self.runs.get() + 1);
        let d = self.tmp.path().join(format!("run{}", self.runs.get()));
        std::fs::create_dir(&d).unwrap();
        d
    }

    /// Runs `argv` (`{R}` is the run directory) and collects the outcome.
    fn run(&self, argv: &[String]) -> Outcome {
        let dir = self.run_dir();
        let d = dir.display().to_string();
        let argv: Vec<String> = argv.iter().map(|a| a.replace("{R}", &d)).collect();
        let r = run(probe().args(&argv).env("COLUMNS", "80"));
        let mut files = BTreeMap::new();
        for entry in walk(&dir) {
            let name = entry.strip_prefix(&dir).unwrap().display().to_string();
            let text = std::fs::read(&entry).unwrap_or_default();
            // The values that differ between two runs: how long it took, and the NFD file's
            // expiry (now plus the lifetime, in whole seconds: two runs may straddle a second).
            let text: String = untimed(&String::from_utf8_lossy(&text))
                .replace(&d, "{R}")
                .lines()
                .filter(|l| !l.starts_with("rocm_probe_duration_seconds "))
                .map(|l| {
                    if l.starts_with("# +expiry-time=") {
                        "# +expiry-time={T}"
                    } else {
                        l
                    }
                })
                .map(|l| format!("{l}\n"))
                .collect();
            files.insert(name, text);
        }
        Outcome {
            code: r.code,
            stdout: untimed(&r.stdout).replace(&d, "{R}"),
            stderr: r.stderr.replace(&d, "{R}"),
            files,
        }
    }
}

/// JSON documents say when they were made: two runs a second apart differ there and nowhere
/// else, so the time is blanked before outcomes are compared.
fn untimed(text: &str) -> String {
    const KEY: &str = "\"generated_at\":";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let (head, tail) = rest.split_at(at + KEY.len());
        out.push_str(head);
        let value = tail.trim_start();
        out.push_str(&tail[..tail.len() - value.len()]);
        match value
            .strip_prefix('"')
            .and_then(|v| v.find('"').map(|end| &v[end + 1..]))
        {
            Some(after) => {
                out.push_str("\"{T}\"");
                rest = after;
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The fixture a command reads: `targets` prints only gfx names, so it reads one without a GPU,
/// where it says why in a sentence (for --lang).
fn fixture_for(command: &str, id: &str) -> &'static str {
    match (command, id) {
        // What these print are gfx names, rocminfo's and rocm-smi's field names and tables, in
        // both languages; their sentences are their diagnostics, for a machine without a GPU.
        // (`inspect`'s listing is English in both languages so far.)
        ("targets", _) | ("agents" | "topo" | "inspect", "lang") => "no-amdgpu",
        _ => FIXTURE,
    }
}

/// The fixture `--root` is compared with: one whose output for `command` differs.
fn other_for(command: &str) -> &'static str {
    match command {
        // Processes using the GPUs.
        "ps" => "mi308x-busy",
        _ => OTHER,
    }
}

/// The arguments a command needs to run at all (its required positionals and options).
fn required(ctx: &Ctx, command: &str) -> Vec<String> {
    let p = |p: &Path| p.display().to_string();
    match command {
        "report" | "topo" | "ps" | "agents" | "targets" | "explain" | "man" => vec![],
        "check" => vec!["--expect".into(), p(&ctx.expect)],
        "diff" | "fleet" => vec![p(&ctx.report_json), p(&ctx.other_json)],
        "slurm-wrapper" => vec![
            "--slurm-conf".into(),
            "/etc/slurm/slurm.conf".into(),
            "--probe".into(),
            "/usr/bin/rocm-probe".into(),
            "--scontrol".into(),
            "/usr/bin/scontrol".into(),
        ],
        "completions" => vec!["bash".into()],
        "snapshot" => vec!["{R}/snap".into()],
        // Verdicts for the fixture's GPUs.
        "inspect" => vec!["/bin/sh".into()],
        other => panic!("a new command {other:?}: say here what it needs to run"),
    }
}

/// How an option is given in the test, by its clap id: the words (`{R}`: the run directory).
fn sample(ctx: &Ctx, command: &str, id: &str) -> Vec<String> {
    let w = |s: &[&str]| s.iter().map(|&s| s.to_owned()).collect::<Vec<_>>();
    match id {
        "root" => vec![
            "--root".into(),
            fixture(fixture_for(command, id)).display().to_string(),
        ],
        "lang" => w(&["--lang", "zh"]),
        "color" => w(&["--color", "always"]),
        "format" => w(&["--format", "json"]),
        "json" => w(&["--json"]),
        "output" => w(&["-o", "{R}/out"]),
        "layer" => w(&["--layer", "hardware"]),
        "verbose" => w(&["-v"]),
        "strict" => w(&["--strict"]),
        "profile" => w(&["--profile", "cluster"]),
        "active" => w(&["--active"]),
        "dispatch" => w(&["--dispatch"]),
        "dispatch_timeout" => w(&["--dispatch-timeout", "7"]),
        "hsakmt_lib" => w(&["--hsakmt-lib", "/nonexistent/libhsakmt.so"]),
        "hsa_runtime_lib" => w(&["--hsa-runtime-lib", "/nonexistent/libhsa-runtime64.so.1"]),
        "hip_lib" => w(&["--hip-lib", "/nonexistent/libamdhip64.so.6"]),
        "summary" => w(&["--summary"]),
        "summary_width" => w(&["--summary-width", "30"]),
        "textfile" => w(&["--textfile", "{R}/probe.prom"]),
        "nfd_features" => w(&["--nfd-features", "{R}/nfd"]),
        "nfd_expiry" => w(&["--nfd-expiry", "60"]),
        "lock" => vec!["--lock".into(), ctx.held_lock.display().to_string()],
        "deadline" => w(&["--deadline", "0.000001"]),
        // A report's applies to JSON only (and is refused with text: tests/json_shape.rs).
        "no_redact" if command != "snapshot" => w(&["--no-redact", "--json"]),
        "no_redact" => w(&["--no-redact"]),
        other => panic!("a new option {other:?}: give it a sample and an effect in this test"),
    }
}

fn has_cjk(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// The option's observable effect on `command`, given `with` the option and `without` it (on
/// the same fixture). `Err` says what is missing.
fn effect(id: &str, command: &str, with: &Outcome, without: &Outcome) -> Result<(), String> {
    let ok = |cond: bool, what: &str| if cond { Ok(()) } else { Err(what.to_owned()) };
    match id {
        // The fixture was read: the run is not the run of the other fixture (below) and not
        // the live machine's.
        "root" => ok(with != without, "the fixture changed nothing"),
        "lang" => ok(
            has_cjk(&with.stdout) || has_cjk(&with.stderr),
            "no Chinese in the output",
        ),
        "color" => ok(with.stdout.contains("\x1b["), "no colour"),
        // The fixture has no host name: `source.host` is null either way; what is checked here
        // is that the option is taken with JSON (tests/json_shape.rs checks the name kept).
        // snapshot says it kept identifying values.
        "no_redact" if command == "snapshot" => ok(with.stdout != without.stdout, "no change"),
        "no_redact" => ok(
            serde_json::from_str::<serde_json::Value>(&with.stdout)
                .is_ok_and(|v| v["source"].get("host").is_some())
                && without.stdout != with.stdout,
            "no JSON document with source.host",
        ),
        "format" | "json" => ok(
            serde_json::from_str::<serde_json::Value>(&with.stdout).is_ok(),
            "stdout is not one JSON document",
        ),
        "output" => ok(
            with.stdout.is_empty() && with.files.get("out").is_some_and(|f| *f == without.stdout),
            "-o did not write what standard output has without it",
        ),
        "layer" => {
            let headings =
                |o: &Outcome| o.stdout.lines().filter(|l| l.starts_with("Layer ")).count();
            ok(
                headings(with) == 1 && headings(without) == 9,
                "other layers are shown",
            )
        }
        "summary" => ok(
            with.stdout.lines().count() == 1 && without.stdout.lines().count() > 1,
            "not one line",
        ),
        "textfile" => ok(
            with.files
                .get("probe.prom")
                .is_some_and(|t| t.contains("rocm_probe_")),
            "no textfile written",
        ),
        "nfd_features" => ok(
            with.files.get("nfd").is_some_and(|t| t.contains("rocm")),
            "no feature file written",
        ),
        "lock" => ok(
            with.code == 2 && with.stderr.contains("lock") && with.stdout.is_empty(),
            "a held lock did not stop the run",
        ),
        "deadline" => ok(
            with.code == 2 && with.stderr.contains("deadline"),
            "the deadline did not stop the run",
        ),
        // A different output than without: verbose shows more evidence, cluster (the fixture is a desktop) changes the
        // platform rules' profile line.
        "verbose" | "profile" => ok(with.stdout != without.stdout, "no change"),
        // --summary-width without --summary is refused (it is the width of --summary).
        "summary_width" => ok(with.code == 2, "accepted without --summary"),
        // The fixture has warnings and no failure.
        "strict" => ok(with.code == 1 && without.code == 0, "warnings do not fail"),
        // A fixture replays its recorded [active] results as they are (with or without
        // --active, which asks a live machine to answer): the dispatch result is
        // recorded with them, the libraries and the timeout choose what a live run loads and
        // waits for, and `agents` shows ROCr's view only when the fixture recorded one. On a
        // fixture these are accepted and change nothing; the equivalence of before and after
        // the command is what is checked.
        "active" | "dispatch" | "dispatch_timeout" | "hsakmt_lib" | "hsa_runtime_lib"
        | "hip_lib" => Ok(()),
        // Only with --nfd-features (tests/nfd.rs checks the expiry it writes).
        "nfd_expiry" => Ok(()),
        other => Err(format!("no effect defined for {other:?} on {command}")),
    }
}

#[test]
fn every_option_before_every_command_is_honoured_or_refused() {
    let ctx = Ctx::new();
    let _held = nix::fcntl::Flock::lock(
        std::fs::File::options()
            .write(true)
            .open(&ctx.held_lock)
            .unwrap(),
        nix::fcntl::FlockArg::LockExclusiveNonblock,
    )
    .unwrap();
    let mut top = args::Args::command().disable_help_subcommand(true);
    top.build();
    let options: Vec<&clap::Arg> = top
        .get_arguments()
        .filter(|a| !a.is_positional() && !["help", "version"].contains(&a.get_id().as_str()))
        .collect();
    assert!(options.len() > 20, "{}", options.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for sub in top.get_subcommands() {
        let name = sub.get_name();
        let takes_root = sub.get_arguments().any(|a| a.get_id() == "root");
        for option in &options {
            let id = option.get_id().as_str();
            let words = sample(&ctx, name, id);
            let takes = sub.get_arguments().any(|a| a.get_id() == id);
            let mut base: Vec<String> = vec![name.to_owned()];
            base.extend(required(&ctx, name));
            if takes_root && id != "root" {
                base.push("--root".into());
                base.push(fixture(fixture_for(name, id)).display().to_string());
            }
            // --summary-width is tested with --summary (what it is the width of).
            if id == "summary_width" && takes {
                base.push("--summary".into());
            }
            let mut before = words.clone();
            before.extend(base.iter().cloned());
            let got = ctx.run(&before);
            checked += 1;
            if !takes {
                if got.code != 2 || !got.stderr.contains(&format!("`{name}`")) {
                    failures.push(format!(
                        "{} before {name}: not refused (exit {}): {}",
                        words.join(" "),
                        got.code,
                        got.stderr
                    ));
                }
                continue;
            }
            let mut after = base.clone();
            after.extend(words.iter().cloned());
            let own = ctx.run(&after);
            // A deadline may pass before or after a diagnostic: its stderr is the effect's.
            let same = if id == "deadline" {
                (got.code, &got.stdout, &got.files) == (own.code, &own.stdout, &own.files)
            } else {
                got == own
            };
            if !same {
                failures.push(format!(
                    "{} before {name} differs from after it: exit {} / {}, stderr {:?} / {:?}",
                    words.join(" "),
                    got.code,
                    own.code,
                    got.stderr,
                    own.stderr
                ));
                continue;
            }
            // Without the option: the same command on the same fixture; for --root, the other
            // fixture.
            let mut plain = base.clone();
            if id == "root" {
                plain.extend([
                    "--root".to_owned(),
                    fixture(other_for(name)).display().to_string(),
                ]);
            }
            if id == "summary_width" {
                let width = ctx.run(&after);
                if width.stdout.lines().any(|l| l.chars().count() > 30) {
                    failures.push(format!("--summary-width 30 on {name}: {}", width.stdout));
                }
                continue;
            }
            let without = ctx.run(&plain);
            if let Err(why) = effect(id, name, &got, &without) {
                failures.push(format!("{} on {name}: {why}", words.join(" ")));
            }
        }
    }
    assert!(checked > 200, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `--json`, `--format json` and `-o FILE` mean the same on every command that has them.
#[test]
fn json_format_and_output_are_the_same_options_everywhere() {
    let mut top = args::Args::command();
    top.build();
    for sub in top.get_subcommands() {
        let get = |id: &str| sub.get_arguments().find(|a| a.get_id() == id);
        if let Some(json) = get("json") {
            assert_eq!(json.get_long(), Some("json"), "{}", sub.get_name());
            let format = get("format")
                .unwrap_or_else(|| panic!("{} has --json but no --format", sub.get_name()));
            let values: Vec<String> = format
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            assert!(values.contains(&"json".to_owned()), "{}", sub.get_name());
        }
        if let Some(output) = get("output") {
            assert_eq!(output.get_short(), Some('o'), "{}", sub.get_name());
            assert_eq!(output.get_long(), Some("output"), "{}", sub.get_name());
        }
    }
}

/// The cases issue #18 lists, one by one.
#[test]
fn the_cases_of_the_issue() {
    let fix = fixture("rocm-6.2-mi210");
    let tmp = tempfile::tempdir().unwrap();
    // --layer 1 --json (and --layer hardware): one layer and only its findings.
    for layer in ["1", "hardware"] {
        let r = run(probe()
            .arg("--root")
            .arg(&fix)
            .args(["--layer", layer, "--json"]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(doc["layers"].as_array().unwrap().len(), 1);
        assert_eq!(doc["layers"][0]["number"], 1);
        let findings = doc["findings"].as_array().unwrap();
        assert!(!findings.is_empty());
        assert!(
            findings.iter().all(|f| f["layer"] == "hardware"),
            "{findings:?}"
        );
    }
    let r = run(probe().arg("--root").arg(&fix).args(["--layer", "html"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("hardware, driver"), "{}", r.stderr);
    let r = run(probe()
        .arg("--root")
        .arg(&fix)
        .args(["--layer", "1", "--format", "html"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--layer"), "{}", r.stderr);
    // --summary -o FILE writes the line there.
    let s = tmp.path().join("s.txt");
    let r = run(probe()
        .arg("--root")
        .arg(&fix)
        .arg("--summary")
        .arg("-o")
        .arg(&s));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&s).unwrap().lines().count(), 1);
    // --summary --format html -o: refused, nothing written.
    let h = tmp.path().join("s.html");
    let r = run(probe()
        .arg("--root")
        .arg(&fix)
        .args(["--summary", "--format", "html", "-o"])
        .arg(&h));
    assert_eq!(r.code, 2);
    assert!(!h.exists());
    // --json before topo, agents, ps; topo --json.
    for cmd in [
        &["--json", "topo"][..],
        &["topo", "--json"],
        &["--json", "agents"],
        &["--json", "ps"],
    ] {
        let r = run(probe().arg("--root").arg(&fix).args(cmd));
        assert_eq!(r.code, 0, "{cmd:?}: {}", r.stderr);
        serde_json::from_str::<serde_json::Value>(&r.stdout)
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    }
    // -o FILE agents writes the file.
    let a = tmp.path().join("agents.txt");
    let r = run(probe()
        .arg("--root")
        .arg(&fix)
        .arg("-o")
        .arg(&a)
        .arg("agents"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(std::fs::read_to_string(&a).unwrap().contains("gfx90a"));
    // --deadline, --lock, --json, --textfile before targets, inspect, snapshot: honoured or
    // refused, never ignored.
    for (option, cmd) in [
        (&["--json"][..], "targets"),
        (&["--textfile", "x"], "targets"),
        (&["--textfile", "x"], "inspect"),
        (&["--json"], "snapshot"),
        (&["--textfile", "x"], "snapshot"),
    ] {
        let r = run(probe().args(option).args([cmd, "y"]));
        let option = option[0];
        assert_eq!(r.code, 2, "{option} {cmd}");
        assert!(
            r.stderr.contains(option) && r.stderr.contains(cmd),
            "{}",
            r.stderr
        );
    }
}

/// `snapshot x.zip` is refused; `snapshot x.tar.gz` says what it wrote and how to read it back.
#[test]
fn snapshot_names() {
    let fix = fixture("rocm-6.2-mi210");
    let tmp = tempfile::tempdir().unwrap();
    for name in ["x.zip", "x.tar.xz", "x.tar"] {
        let target = tmp.path().join(name);
        let r = run(probe().arg("--root").arg(&fix).arg("snapshot").arg(&target));
        assert_eq!(r.code, 2, "{name}");
        assert!(r.stderr.contains(".tar.gz"), "{}", r.stderr);
        assert!(!target.exists(), "{name}");
    }
    let target = tmp.path().join("x.tar.gz");
    let r = run(probe().arg("--root").arg(&fix).arg("snapshot").arg(&target));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("gzip-compressed tar archive"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("snapshot/"), "{}", r.stdout);
    let back = format!("rocm-probe --root {}", target.display());
    assert!(r.stdout.contains(&back), "{}", r.stdout);
    let again = run(probe().arg("--root").arg(&target).arg("targets"));
    assert_eq!(again.code, 0, "{}", again.stderr);
    let r = run(probe()
        .args(["--lang", "zh", "--root"])
        .arg(&fix)
        .arg("snapshot")
        .arg(tmp.path().join("y.tar.gz")));
    assert!(r.stdout.contains("读回"), "{}", r.stdout);
}
