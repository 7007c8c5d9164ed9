//! `--lang`: the whole report in one language. In Chinese, no English prose is left — every ASCII
//! word of four or more letters must be an identifier or term of art listed in
//! `tests/data/zh-allowlist.txt` (paths, ids, numbers and text in backticks excepted); in English,
//! no Chinese character. Run on the live machine (passive and `--active`) and on every scenario
//! fixture, in text (`-v`, so every finding's evidence and remedy is shown) and markdown.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{Run, fixture, probe, run};

/// The committed allowlist: one word per line, `#` comments.
fn allowlist() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/zh-allowlist.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The English words of four or more letters in `text` that are not identifiers: text in
/// backticks is code; a token with a digit or one of `/._=-:@+#~$%\<>` in it is a path, id,
/// version or option; what is left are runs of ASCII letters.
fn prose_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    // A fence line (```text) is markup.
    for line in text.lines().filter(|l| !l.starts_with("```")) {
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            // Odd parts are inside backticks (a lone backtick leaves the rest of the line in).
            if i % 2 == 0 || line.matches('`').count() % 2 == 1 {
                plain.push_str(part);
                plain.push(' ');
            }
        }
        let tokens = plain.split(|c: char| c.is_whitespace() || !c.is_ascii());
        for token in tokens {
            let token = token.trim_matches(|c: char| "()[]{},;:!?'\"*|".contains(c));
            let token = token.trim_end_matches('.');
            if token.is_empty()
                || token
                    .chars()
                    .any(|c| c.is_ascii_digit() || "/._=-:@+#~$%\\<>&".contains(c))
            {
                continue;
            }
            for word in token.split(|c: char| !c.is_ascii_alphabetic()) {
                if word.len() >= 4 {
                    words.push(word.to_owned());
                }
            }
        }
    }
    words
}

fn has_cjk(s: &str) -> bool {
    s.chars().any(|c| {
        ('\u{4e00}'..='\u{9fff}').contains(&c)
            || ('\u{3000}'..='\u{303f}').contains(&c)
            || ('\u{ff00}'..='\u{ffef}').contains(&c)
    })
}

/// Every fixture that is a scenario (has a `fixture.toml`).
fn scenarios() -> Vec<PathBuf> {
    let dir = fixture("");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("fixture.toml").is_file())
        .collect();
    out.sort();
    assert!(out.len() >= 50, "{} scenarios", out.len());
    out
}

/// The outputs to look at for one root (`None`: live), in `lang`.
fn outputs(root: Option<&Path>, lang: &str) -> Vec<(String, String)> {
    let mut runs: Vec<(String, Vec<&str>)> = vec![
        ("text".to_owned(), vec!["report", "-v"]),
        (
            "markdown".to_owned(),
            vec!["report", "--format", "markdown"],
        ),
    ];
    if root.is_none() {
        runs.push(("active".to_owned(), vec!["report", "-v", "--active"]));
    }
    let mut out = Vec::new();
    for (what, args) in runs {
        let mut cmd = probe();
        cmd.args(["--lang", lang, "--color", "never"]);
        if let Some(r) = root {
            cmd.arg("--root").arg(r);
        }
        let r = run(cmd.args(&args));
        assert!(
            matches!(r.code, 0 | 1 | 3),
            "{what} {root:?}: exit {}: {}",
            r.code,
            r.stderr
        );
        let name = root.map_or("live".to_owned(), |r| {
            r.file_name().unwrap().to_string_lossy().into_owned()
        });
        out.push((format!("{name} ({what})"), r.stdout + &r.stderr));
    }
    out
}

/// The commands of every remedy step of the report of `root` (`None`: live), from its JSON.
fn step_commands(root: Option<&Path>) -> BTreeSet<String> {
    let mut cmd = probe();
    cmd.args(["--lang", "zh"]);
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    let r = run(cmd.args(["report", "--format", "json"]));
    assert!(matches!(r.code, 0 | 1 | 3), "{root:?}: {}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["remedy_steps"].as_array().into_iter().flatten())
        .filter_map(|s| s["command"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn chinese_reports_have_no_english_prose() {
    let allowed = allowlist();
    let mut leaks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut roots: Vec<Option<PathBuf>> = vec![None];
    roots.extend(scenarios().into_iter().map(Some));
    for root in &roots {
        let commands = step_commands(root.as_deref());
        for (name, text) in outputs(root.as_deref(), "zh") {
            assert!(has_cjk(&text), "{name}: no Chinese at all");
            // A remedy step's command, on its line of its own, is code to copy, not prose
            // (`sudo apt install …` is the same in every language).
            let text: String = text
                .lines()
                .filter(|l| !commands.contains(l.trim()))
                .collect::<Vec<_>>()
                .join("\n");
            for w in prose_words(&text) {
                if !allowed.contains(&w) {
                    leaks.entry(w).or_default().insert(name.clone());
                }
            }
        }
    }
    let report: Vec<String> = leaks
        .iter()
        .map(|(w, wh)| {
            format!(
                "{w}: {}",
                wh.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "{} English words in Chinese output:\n{}",
        leaks.len(),
        report.join("\n")
    );
}

#[test]
fn english_reports_have_no_chinese() {
    let mut roots: Vec<Option<PathBuf>> = vec![None];
    roots.extend(scenarios().into_iter().map(Some));
    for root in &roots {
        for (name, text) in outputs(root.as_deref(), "en") {
            let line = text.lines().find(|l| has_cjk(l));
            assert!(line.is_none(), "{name}: {line:?}");
        }
    }
}

/// The language changes prose, never a verdict: for every scenario the JSON reports in both
/// languages agree on everything but the prose fields (summaries, remedies, notes, evidence
/// text), so no check decides anything by reading a sentence.
#[test]
fn the_language_changes_prose_not_verdicts() {
    fn skeleton(json: &str) -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["verdict"]["summary"] = serde_json::Value::Null;
        // When the document was made: two runs differ.
        v["generated_at"] = serde_json::Value::Null;
        for l in v["layers"].as_array_mut().unwrap() {
            l["note"] = l["note"].is_string().into();
        }
        for f in v["findings"].as_array_mut().unwrap() {
            f["summary"] = serde_json::Value::Null;
            f["remedy"] = f["remedy"].is_string().into();
            for step in f["remedy_steps"].as_array_mut().into_iter().flatten() {
                step["text"] = serde_json::Value::Null;
            }
            let n = f["evidence"].as_array().map_or(0, Vec::len);
            f["evidence"] = n.into();
        }
        // Facts carry the collectors' problem messages, which are prose.
        v["facts"] = serde_json::Value::Null;
        v
    }
    for root in scenarios() {
        let json = |lang: &str| {
            let r = run(probe()
                .args(["--lang", lang, "--root"])
                .arg(&root)
                .args(["report", "--format", "json"]));
            assert!(matches!(r.code, 0 | 1 | 3), "{root:?} {lang}: {}", r.stderr);
            (r.code, r.stdout)
        };
        let (en_code, en) = json("en");
        let (zh_code, zh) = json("zh");
        assert_eq!(en_code, zh_code, "{root:?}");
        assert_eq!(skeleton(&en), skeleton(&zh), "{root:?}");
        assert_ne!(en, zh, "{root:?}: the Chinese report has no Chinese prose");
    }
}

/// The detector itself: it must see English prose, and leave identifiers, paths and code alone.
#[test]
fn the_word_detector_sees_prose_and_spares_identifiers() {
    assert_eq!(prose_words("未找到 device files"), ["device", "files"]);
    assert!(prose_words("运行 `sudo usermod -aG render $USER` 后重新登录").is_empty());
    assert!(
        prose_words("/dev/kfd、gfx90a:xnack-、driver.kfd-missing、1.3.0、HSA_XNACK=1").is_empty()
    );
    assert_eq!(prose_words("（PyTorch）"), ["PyTorch"]);
    assert_eq!(prose_words("ab abc 中文"), Vec::<String>::new());
}

/// The allowlist holds identifiers and terms of art, not the prose it would hide.
#[test]
fn the_allowlist_is_no_dictionary() {
    for common in [
        "found",
        "missing",
        "unknown",
        "version",
        "install",
        "installed",
        "library",
        "none",
        "with",
        "from",
        "this",
        "that",
        "error",
        "failed",
        "cannot",
        "checks",
        "skipped",
    ] {
        assert!(
            !allowlist().contains(common),
            "{common} is prose, not an identifier"
        );
    }
}

/// Where the error-path runs write: malformed code objects, a file that is not JSON, a
/// directory given for a file, the snapshot's target.
struct ErrorInputs {
    dir: tempfile::TempDir,
}

impl ErrorInputs {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let write =
            |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
        // The magic and nothing else: the entry count is cut off.
        write("truncated.bin", b"__CLANG_OFFLOAD_BUNDLE__");
        write("garbage.bin", b"0123456789abcdef");
        write(
            "overlap.ccob",
            &rocm_probe::codeobject::hostile::overlapping_entries(64, 1 << 20),
        );
        write("report.txt", b"not a report");
        std::fs::create_dir(dir.path().join("a-directory")).unwrap();
        // A machine tree with no KFD: sysfs present, nothing in it.
        std::fs::create_dir_all(dir.path().join("no-kfd/sys")).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// Each run: a name, the arguments after `--lang L`, and the exit code it must give.
    fn runs(&self, lang: &str) -> Vec<(&'static str, Vec<String>, i32)> {
        let big = fixture("mi300x-cpx-8gpu").display().to_string();
        let fixture = fixture("apu-phoenix-780m").display().to_string();
        let snapshot = self.path(&format!("snapshot-{lang}"));
        let s = |v: &[&str]| v.iter().map(|&a| a.to_owned()).collect::<Vec<_>>();
        vec![
            (
                "--root /nonexistent",
                s(&["--root", "/nonexistent", "report"]),
                2,
            ),
            (
                "inspect truncated",
                s(&["inspect", &self.path("truncated.bin")]),
                2,
            ),
            (
                "inspect garbage",
                s(&["inspect", &self.path("garbage.bin")]),
                2,
            ),
            (
                "inspect --extract overlapping",
                s(&[
                    "inspect",
                    "--target",
                    "gfx90a",
                    "--extract",
                    &self.path("out"),
                    &self.path("overlap.ccob"),
                ]),
                2,
            ),
            (
                "inspect missing",
                s(&["inspect", &self.path("missing.co")]),
                2,
            ),
            (
                "inspect --target bogus",
                s(&[
                    "inspect",
                    "--target",
                    "gfx90a:feat1+",
                    &self.path("garbage.bin"),
                ]),
                2,
            ),
            (
                "check --expect missing",
                s(&["check", "--expect", &self.path("missing.toml")]),
                2,
            ),
            (
                "check --expect directory",
                s(&["check", "--expect", &self.path("a-directory")]),
                2,
            ),
            (
                "diff not JSON",
                s(&["diff", &self.path("report.txt"), &self.path("report.txt")]),
                2,
            ),
            (
                "--textfile directory",
                s(&[
                    "--root",
                    &fixture,
                    "report",
                    "--textfile",
                    &self.path("a-directory"),
                ]),
                2,
            ),
            (
                "snapshot",
                s(&["--root", &fixture, "snapshot", &snapshot]),
                0,
            ),
            ("explain unknown", s(&["explain", "no.such-id"]), 2),
            // The 4,100 files of this capture take longer than a millisecond (tests/fleet.rs).
            (
                "deadline",
                s(&["--root", &big, "--deadline", "0.001", "report"]),
                2,
            ),
            (
                "agents without KFD",
                s(&["--root", &self.path("no-kfd"), "agents"]),
                1,
            ),
            (
                "--root not a machine",
                s(&["--root", &self.path("a-directory")]),
                2,
            ),
        ]
    }
}

/// The command's own errors and diagnostics — and the library's errors it shows — are Chinese
/// prose with `--lang zh`: each run says something in Chinese and no English word outside the
/// allowlist.
#[test]
fn chinese_errors_and_diagnostics_have_no_english_prose() {
    let allowed = allowlist();
    let inputs = ErrorInputs::new();
    let mut leaks = Vec::new();
    for (name, args, code) in inputs.runs("zh") {
        let r = run(probe().args(["--lang", "zh"]).args(&args));
        assert_eq!(r.code, code, "{name}: {}", r.stderr);
        let said = r.stdout.clone() + &r.stderr;
        // The paths of the temporary directory are identifiers, not prose.
        let said = said.replace(&inputs.path(""), "/t/");
        assert!(has_cjk(&said), "{name}: no Chinese: {said}");
        for w in prose_words(&said) {
            if !allowed.contains(&w) {
                leaks.push(format!("{name}: {w}: {said}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "English in Chinese errors:\n{}",
        leaks.join("\n")
    );
}

/// The same runs in English say exactly what they said before the messages moved into the
/// catalogue.
#[test]
fn english_errors_and_diagnostics_are_unchanged() {
    let inputs = ErrorInputs::new();
    let said: BTreeMap<&str, Run> = inputs
        .runs("en")
        .into_iter()
        .map(|(name, args, code)| {
            let r = run(probe().args(["--lang", "en"]).args(&args));
            assert_eq!(r.code, code, "{name}: {}", r.stderr);
            assert!(
                !has_cjk(&r.stderr) && !has_cjk(&r.stdout),
                "{name}: {}",
                r.stderr
            );
            (name, r)
        })
        .collect();
    let p = |name: &str| inputs.path(name);
    let expected = [
        (
            "--root /nonexistent",
            "rocm-probe: /nonexistent: cannot use as a fixture: No such file or directory (os error 2)\n".to_owned(),
        ),
        (
            "inspect truncated",
            format!(
                "rocm-probe: {}: at offset 0x18: truncated entry count: needs 32 bytes, 24 present\n",
                p("truncated.bin")
            ),
        ),
        (
            "inspect garbage",
            format!(
                "rocm-probe: {}: at offset 0x0: not an ELF file, offload bundle, compressed offload bundle or static archive\n",
                p("garbage.bin")
            ),
        ),
        (
            "inspect missing",
            format!(
                "rocm-probe: cannot read {}: No such file or directory (os error 2)\n",
                p("missing.co")
            ),
        ),
        (
            "inspect --target bogus",
            "rocm-probe: \"gfx90a:feat1+\" is not a target ID: unknown feature \"feat1\"\n".to_owned(),
        ),
        (
            "check --expect missing",
            format!(
                "rocm-probe: --expect: {}: No such file or directory (os error 2)\n",
                p("missing.toml")
            ),
        ),
        (
            "check --expect directory",
            format!(
                "rocm-probe: --expect: {}: refused: it is a directory\n",
                p("a-directory")
            ),
        ),
        (
            "diff not JSON",
            format!(
                "rocm-probe: {}: not JSON: expected ident at line 1 column 2\n",
                p("report.txt")
            ),
        ),
        (
            "--textfile directory",
            format!(
                "rocm-probe: --textfile {0}: {0}: refused: it is a directory\n",
                p("a-directory")
            ),
        ),
        (
            "deadline",
            "rocm-probe: deadline of 0.001 s exceeded; the run was stopped\n".to_owned(),
        ),
        (
            "explain unknown",
            "rocm-probe: unknown finding id \"no.such-id\"; `rocm-probe explain` lists them\n"
                .to_owned(),
        ),
        (
            "agents without KFD",
            "rocm-probe: no KFD: /sys/class/kfd/kfd/topology/nodes: not found (the amdgpu driver \
             is not loaded, or this container does not expose /sys/class/kfd)\n"
                .to_owned(),
        ),
        (
            "--root not a machine",
            format!(
                "rocm-probe: {}: cannot use as a fixture: it has neither a fixture.toml nor any \
                 directory of a machine tree (sys, proc, etc, opt, usr, lib, dev): a directory \
                 that holds no machine would read as one with no GPU, driver or ROCm\n",
                p("a-directory")
            ),
        ),
    ];
    for (name, stderr) in expected {
        assert_eq!(said[name].stderr, stderr, "{name}");
    }
    assert_eq!(
        said["inspect --extract overlapping"].stderr,
        format!(
            "rocm-probe: {}: at offset 0x0: the code objects of bundle 1 add up to 66879872 \
             bytes, more than the 1048576 bytes of the bundle\n",
            p("overlap.ccob")
        )
    );
    let snapshot = &said["snapshot"].stdout;
    let wrote = format!(
        " symlinks to {dir} (redacted; --no-redact keeps everything)\n\
         read it back with: rocm-probe --root {dir}\n",
        dir = p("snapshot-en")
    );
    assert!(
        snapshot.starts_with("wrote ") && snapshot.ends_with(&wrote),
        "{snapshot}"
    );
}

/// `diff`'s own words around the values: the header naming the two reports and the mark of a
/// value one report lacks. English as before; Chinese without them. The values and paths of
/// the differences are data and stay as they are.
#[test]
fn diff_headers_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str| {
        let r = run(probe()
            .args(["--lang", "en", "--root"])
            .arg(fixture(name))
            .args(["report", "--json"]));
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, r.stdout).unwrap();
        path
    };
    let (a, b) = (report("apu-phoenix-780m"), report("mi300x-cpx-8gpu"));
    let diff = |lang: &str| {
        let r = run(probe().args(["--lang", lang, "diff"]).arg(&a).arg(&b));
        assert_eq!(r.code, 1, "{}", r.stderr);
        r.stdout
    };
    let en = diff("en");
    let lines: Vec<&str> = en.lines().collect();
    assert!(
        lines[0].starts_with(&format!("a: {} (fingerprint ", a.display())),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(&format!("b: {} (fingerprint ", b.display())),
        "{}",
        lines[1]
    );
    assert!(en.contains("  (absent)"), "{en}");
    let zh = diff("zh");
    let lines: Vec<&str> = zh.lines().collect();
    assert!(
        lines[0].starts_with(&format!("a：{}（指纹 ", a.display())),
        "{}",
        lines[0]
    );
    assert!(
        !zh.contains("fingerprint") && !zh.contains("(absent)"),
        "{zh}"
    );
    assert!(zh.contains("（无）"), "{zh}");
}

/// `fleet`: its headings, marks and every reason a document is refused in the language asked
/// for; in Chinese no English prose (names, ids, versions and marketing names are data).
#[test]
fn fleet_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "mi210-xgmi-8gpu",
        "rocm-6.2-mi210",
        "ras-uncorrectable",
        "pcie-link-x8",
    ] {
        let r = run(probe()
            .args(["--lang", "en", "--root"])
            .arg(fixture(name))
            .args(["report", "--json"]));
        std::fs::write(dir.path().join(format!("{name}.json")), r.stdout).unwrap();
    }
    // One of every refusal the text can show.
    for (name, text) in [
        ("a.json", "oops"),
        ("b.json", "[1]"),
        ("c.json", r#"{"tool": {"name": "amd-smi"}}"#),
        ("d.json", r#"{"tool": {"name": "rocm-probe"}}"#),
        (
            "e.json",
            r#"{"tool": {"name": "rocm-probe"}, "schema_version": 9}"#,
        ),
        (
            "f.json",
            r#"{"tool": {"name": "rocm-probe"}, "schema_version": 1, "verdict": {}}"#,
        ),
        (
            "g.jsonl",
            "node9: ssh: connect to host node9 port 22: No route to host\nnode8: {\n",
        ),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let fleet = |lang: &str| {
        let r = run(probe().args(["--lang", lang, "fleet"]).arg(dir.path()));
        assert_eq!(r.code, 1, "{}", r.stderr);
        r.stdout.replace(&dir.path().display().to_string(), "/DIR")
    };
    let en = fleet("en");
    assert!(!has_cjk(&en), "{en}");
    for reason in [
        "not JSON",
        "not a report's shape",
        "another tool's",
        "no schema_version",
        "is not supported",
        "not a report",
        "not a JSON document",
        "ended inside",
    ] {
        assert!(en.contains(reason), "{reason}: {en}");
    }
    let zh = fleet("zh");
    let allowed = allowlist();
    let words: Vec<String> = prose_words(&zh)
        .into_iter()
        .filter(|w| !allowed.contains(w))
        .collect();
    assert!(
        words.is_empty(),
        "English prose in Chinese: {words:?}\n{zh}"
    );
    assert_eq!(
        en.lines().count(),
        zh.lines().count(),
        "the same view:\n{en}\n{zh}"
    );
}

/// A malformed library is evidence in a report (layer 5): its error is in the report's
/// language. The fixture is a copy whose rocFFT is an offload bundle cut off after its magic.
#[test]
fn a_malformed_library_is_reported_in_the_reports_language() {
    let (_keep, dir) = common::copy_fixture("library-xnack-plus-only");
    let lib = dir.join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200");
    std::fs::remove_file(&lib).unwrap();
    std::fs::write(&lib, b"__CLANG_OFFLOAD_BUNDLE__").unwrap();
    let report = |lang: &str| {
        let r = run(probe()
            .args(["--lang", lang, "--color", "never", "--root"])
            .arg(&dir)
            .args(["report", "-v"]));
        assert!(r.code <= 1, "{}", r.stderr);
        r.stdout
    };
    let en = report("en");
    assert!(
        en.contains(
            "/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200: at offset 0x18: truncated entry count: \
             needs 32 bytes, 24 present\n"
        ),
        "{en}"
    );
    let zh = report("zh");
    assert!(
        zh.contains("/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200: 偏移 0x18 处：条目数被截断"),
        "{zh}"
    );
    let allowed = allowlist();
    let leaks: Vec<String> = prose_words(&zh)
        .into_iter()
        .filter(|w| !allowed.contains(w))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}\n{zh}");
}
