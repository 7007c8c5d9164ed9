//! What the report shows from hostile input: bounded however many problems a file holds,
//! escaped for each medium whatever bytes the machine's files hold, and the right diagnosis
//! when the KFD tree cannot be read.

mod common;

use common::copy_fixture;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TOPOLOGY: &str = "sys/class/kfd/kfd/topology";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Runs the CLI on `root` with `args`; stdout and stderr, killed after a generous bound.
fn probe(root: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = assert_cmd::Command::cargo_bin("rocm-probe")
        .unwrap()
        .env_clear()
        .env("COLUMNS", "100000") // one line per finding: the tests read lines
        .arg("--root")
        .arg(root)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), out.stdout, out.stderr)
}

// ---------------------------------------------------------------------------------------------
// 1. However many problems one file holds, the report names it once, counted, within a bound.

/// Appends lines to `path` until it is just under the 1 MiB read limit, each line one problem
/// (a repeated key, or a key with two values). Returns how many lines were added.
fn fill_with_bad_lines(path: &Path) -> usize {
    let mut text = std::fs::read_to_string(path).unwrap();
    let mut added = 0;
    loop {
        let line = if added % 2 == 0 {
            "simd_count 24\n".to_owned()
        } else {
            format!("garbage{added} x y\n")
        };
        if text.len() + line.len() > (1 << 20) - 64 {
            break;
        }
        text.push_str(&line);
        added += 1;
    }
    std::fs::write(path, text).unwrap();
    added
}

const OUTPUT_BOUND: usize = 256 << 10;

#[test]
fn a_megabyte_of_bad_properties_is_one_file_named_once_with_its_count() {
    let (_scratch, root) = copy_fixture("malformed/base");
    let file = root.join(TOPOLOGY).join("nodes/1/properties");
    let bad = fill_with_bad_lines(&file);
    assert!(bad > 50_000, "{bad}");
    let suffix = "nodes/1/properties";

    let (code, text, _) = probe(&root, &["--color", "never", "-v"]);
    assert!(matches!(code, Some(0 | 1)), "exit {code:?}");
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.len() < OUTPUT_BOUND,
        "text report is {} bytes",
        text.len()
    );
    let naming: Vec<&str> = text.lines().filter(|l| l.contains(suffix)).collect();
    assert_eq!(naming.len(), 1, "{naming:#?}");
    assert!(
        naming[0].contains(&format!("{} more", bad - 3)),
        "{}",
        naming[0]
    );
    assert!(text.contains("1 malformed sysfs file(s)"), "{text}");

    let (_, json, _) = probe(&root, &["--json"]);
    assert!(
        json.len() < OUTPUT_BOUND,
        "JSON report is {} bytes",
        json.len()
    );
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let evidence: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap())
        .filter(|e| e["source"].as_str().unwrap().ends_with(suffix))
        .collect();
    assert_eq!(evidence.len(), 1, "{evidence:#?}");
    assert_eq!(evidence[0]["count"], bad, "{:#?}", evidence[0]);
}

#[test]
fn eleven_megabytes_of_bad_properties_fit_in_256_mib() {
    if !Path::new("/usr/bin/prlimit").exists() {
        assert!(std::env::var_os("CI").is_none(), "CI has util-linux");
        eprintln!("skipped: needs prlimit");
        return;
    }
    let (_scratch, root) = copy_fixture("malformed/base");
    let nodes = root.join(TOPOLOGY).join("nodes");
    let first = nodes.join("1/properties");
    let bad = fill_with_bad_lines(&first);
    for n in 2..=11 {
        std::fs::create_dir(nodes.join(n.to_string())).unwrap();
        std::fs::copy(&first, nodes.join(format!("{n}/properties"))).unwrap();
    }
    let out = assert_cmd::Command::new("/usr/bin/prlimit")
        .args(["--as=268435456", "--"])
        .arg(assert_cmd::cargo::cargo_bin("rocm-probe"))
        .env_clear()
        .env("COLUMNS", "100000")
        .arg("--root")
        .arg(&root)
        .arg("--json")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.len() < OUTPUT_BOUND,
        "{} bytes",
        out.stdout.len()
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counted: u64 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap())
        .filter(|e| e["source"].as_str().unwrap().ends_with("/properties"))
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    // Every bad line counted (the copies of node 1 add a duplicated-node problem each).
    assert!(counted >= 11 * bad as u64, "{counted}");
}

#[test]
fn many_bad_files_are_listed_up_to_a_cap_and_counted() {
    let (_scratch, root) = copy_fixture("malformed/base");
    let nodes = root.join(TOPOLOGY).join("nodes");
    // Forty more GPU nodes, each with a bad line.
    let props = std::fs::read_to_string(nodes.join("1/properties")).unwrap();
    for n in 2..42 {
        let dir = nodes.join(n.to_string());
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("properties"), format!("{props}simd_count 1\n")).unwrap();
    }
    let (_, text, _) = probe(&root, &["--color", "never"]);
    let text = String::from_utf8(text).unwrap();
    let listed = text.lines().filter(|l| l.contains("/properties:")).count();
    assert_eq!(listed, 20, "{text}");
    assert!(text.contains("and 20 more file(s) with problems"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// 2. Bytes from the machine never reach an output as control characters.

const INJECTED: &str = "FAIL injected";

/// A copy of `mi308x-busy` with an ESC sequence, a BEL and a right-to-left override in the
/// marketing name, a node directory whose name holds a newline, and a process name with a
/// terminal-title sequence and a carriage return.
fn hostile_fixture() -> (tempfile::TempDir, PathBuf) {
    let (scratch, root) = copy_fixture("mi308x-busy");
    let ids = root.join("usr/share/libdrm/amdgpu.ids");
    let text = std::fs::read_to_string(&ids).unwrap();
    let evil = "\x1b[31mEVIL\x1b[0m \u{202e}Name\u{85}\x07<i>";
    let text = text
        .replace("AMD Instinct MI308X", evil)
        .replace("AMD Instinct MI300X", evil);
    std::fs::write(&ids, text).unwrap();
    let nodes = root.join(TOPOLOGY).join("nodes");
    common::copy_tree(&nodes.join("1"), &nodes.join(format!("2\n{INJECTED}")));
    std::fs::write(
        root.join("proc/5151/comm"),
        format!("bad\x1b]0;title\x07\r{INJECTED}\n"),
    )
    .unwrap();
    (scratch, root)
}

/// Control bytes other than the line feed and tab a renderer writes itself, and the Unicode
/// controls that reorder text.
fn hostile_chars(out: &str) -> Vec<(usize, char)> {
    out.char_indices()
        .filter(|&(_, c)| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let out = String::from_utf8_lossy(bytes);
    let bad = hostile_chars(&out);
    assert!(bad.is_empty(), "{what}: {bad:?} in\n{out}");
    let forged: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(INJECTED))
        .collect();
    assert!(forged.is_empty(), "{what}: forged lines {forged:?}");
}

#[test]
fn no_medium_passes_control_characters_from_the_machine() {
    let (scratch, root) = hostile_fixture();
    for args in [
        &["--color", "never", "-v"][..],
        &["--format", "markdown"],
        &["--format", "html"],
        &["--format", "junit"],
        &["--color", "never", "ps"],
        &["--color", "never", "agents"],
        &["--color", "never", "targets"],
        &["topo", "--format", "dot"],
    ] {
        let (_, stdout, _) = probe(&root, args);
        assert_clean(&format!("{args:?}"), &stdout);
        if args[1] == "html" || args[1] == "junit" {
            let out = String::from_utf8_lossy(&stdout);
            assert!(!out.contains("<i>"), "{args:?}: markup from the machine");
        }
    }
    // The marketing name reaches the text output, escaped, rather than being dropped.
    let (_, agents, _) = probe(&root, &["agents"]);
    let agents = String::from_utf8(agents).unwrap();
    assert!(
        agents.contains("\\x1b[31mEVIL\\x1b[0m \\u{202e}Name\\x85\\x07<i>"),
        "{agents}"
    );
    let (_, ps, _) = probe(&root, &["ps"]);
    assert!(
        String::from_utf8(ps)
            .unwrap()
            .contains("bad\\x1b]0;title\\x07\\rFAIL injected"),
    );

    let prom = scratch.path().join("metrics.prom");
    probe(&root, &["--textfile", prom.to_str().unwrap()]);
    let prom = std::fs::read(&prom).unwrap();
    assert_clean("textfile", &prom);
    assert!(
        String::from_utf8(prom)
            .unwrap()
            .contains(r#"marketing_name="\\x1b[31mEVIL\\x1b[0m \\u{202e}Name\\x85\\x07<i>""#)
    );
    let nfd = scratch.path().join("features");
    probe(&root, &["--nfd-features", nfd.to_str().unwrap()]);
    assert_clean("nfd", &std::fs::read(&nfd).unwrap());
}

#[test]
fn colour_is_the_renderers_own_and_only_with_colour() {
    let (_scratch, root) = hostile_fixture();
    let (_, never, _) = probe(&root, &["--color", "never", "-v"]);
    assert!(!never.contains(&0x1b), "ESC with --color never");
    let (_, always, _) = probe(&root, &["--color", "always", "-v"]);
    let always = String::from_utf8(always).unwrap();
    // Every ESC is the start of the renderer's SGR colour code, none the fixture's.
    for (i, _) in always.match_indices('\x1b') {
        let rest = &always[i..];
        assert!(
            [
                "\x1b[0m", "\x1b[32m", "\x1b[36m", "\x1b[2m", "\x1b[1m", "\x1b[31m", "\x1b[33m"
            ]
            .iter()
            .any(|c| rest.starts_with(c)),
            "{:?}",
            &rest[..rest.len().min(20)]
        );
    }
    assert!(!always.contains("\x1b[31mEVIL"));
}

// ---------------------------------------------------------------------------------------------
// 3. A KFD tree this user may not read is its own diagnosis, not "no KFD".

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

#[test]
fn an_unreadable_kfd_topology_is_not_a_missing_kfd() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() || !Path::new("/usr/bin/setpriv").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs this as root with util-linux"
        );
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let (scratch, root) = copy_fixture("malformed/base");
    // nobody must reach the binary and the fixture, but not the topology's nodes.
    let bin = scratch.path().join("rocm-probe");
    std::fs::copy(assert_cmd::cargo::cargo_bin("rocm-probe"), &bin).unwrap();
    let ok = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(scratch.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let nodes = root.join(TOPOLOGY).join("nodes");
    std::fs::set_permissions(&nodes, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = assert_cmd::Command::new("/usr/bin/setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .env_clear()
            .env("COLUMNS", "100000")
            .arg("--root")
            .arg(&root)
            .args(args)
            .timeout(Duration::from_secs(60));
        cmd.output().unwrap()
    };

    let out = run(&["--color", "never"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with("FAIL"), "{text}");
    assert!(text.contains("driver.kfd-unreadable"), "{text}");
    assert!(!text.contains("driver.kfd-missing"), "{text}");
    assert!(!text.contains("CONFIG_HSA_AMD"), "{text}");
    assert!(
        text.contains("topology/nodes: permission denied to uid 65534; mode 0000, owner uid 0"),
        "{text}"
    );

    let out = run(&["--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"]["root_cause"], "driver.kfd-unreadable");
    assert_eq!(doc["verdict"]["root_layer"], 2);
    // The layers above follow from it, as they do from a missing KFD.
    let layers = doc["layers"].as_array().unwrap();
    for l in &layers[2..] {
        assert_eq!(l["consequence_of"], "driver.kfd-unreadable", "{l}");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Smaller ones.

#[test]
fn an_implausible_gfx_target_version_is_a_malformed_value_not_a_target() {
    let root = fixtures().join("malformed/gfx-target-version-garbage");
    let (code, text, _) = probe(&root, &["--color", "never"]);
    let text = String::from_utf8(text).unwrap();
    assert!(matches!(code, Some(0 | 1)), "{text}");
    // u32::MAX decoded field by field would be gfx96485f.
    assert!(!text.contains("gfx9648"), "{text}");
    assert!(
        text.lines().any(|l| l.contains("nodes/1/properties")
            && l.contains("gfx_target_version 4294967295 is not a gfx version")),
        "{text}"
    );
    let (_, targets, _) = probe(&root, &["targets"]);
    assert!(!String::from_utf8(targets).unwrap().contains("gfx9648"));
}

/// `diff`'s exit code and standard error for the base report against `edit`ed copy of it.
fn diff_against(edit: impl Fn(&mut serde_json::Value)) -> (Option<i32>, String) {
    let scratch = tempfile::tempdir().unwrap();
    let (_, json, _) = probe(&fixtures().join("malformed/base"), &["--json"]);
    let a = scratch.path().join("a.json");
    std::fs::write(&a, &json).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    edit(&mut doc);
    let b = scratch.path().join("b.json");
    std::fs::write(&b, doc.to_string()).unwrap();
    let out = assert_cmd::Command::cargo_bin("rocm-probe")
        .unwrap()
        .env_clear()
        .env("COLUMNS", "100000")
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn diff_refuses_an_unsupported_schema_version() {
    let (code, err) = diff_against(|d| d["schema_version"] = 99.into());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("schema_version 99 is not supported"), "{err}");
    // The next version's documents are read.
    let (code, err) = diff_against(|d| d["schema_version"] = 2.into());
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn diff_refuses_findings_that_are_not_findings() {
    let (code, err) = diff_against(|d| d["findings"] = serde_json::json!([1, 2]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("findings[0] is not an object"), "{err}");
    let (code, err) = diff_against(|d| d["findings"][0]["id"] = serde_json::json!(["x"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("findings[0] has no string `id`"), "{err}");
}

#[test]
fn check_expect_refuses_unknown_ignored_ids_naming_the_closest() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("node.toml");
    std::fs::write(
        &file,
        "[policy]\nignore = [\"hardware.pci-not-captured\", \"hardware.pci-not-capturd\"]\n",
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("rocm-probe")
        .unwrap()
        .env_clear()
        .env("COLUMNS", "100000")
        .arg("--root")
        .arg(fixtures().join("malformed/base"))
        .arg("check")
        .arg("--expect")
        .arg(&file)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`hardware.pci-not-capturd` (closest: `hardware.pci-not-captured`)"),
        "{err}"
    );
}

#[test]
fn a_library_directory_escaping_the_fixture_root_is_not_absent() {
    let (_scratch, root) = copy_fixture("rocm-6.2-mi210");
    let dir = root.join("opt/rocm-6.2.0/lib/rocblas/library");
    std::fs::remove_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/../../../../../../../etc", &dir).unwrap();
    let (_, text, _) = probe(&root, &["--color", "never", "-v"]);
    let text = String::from_utf8(text).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("/opt/rocm-6.2.0/lib/rocblas/library:"))
        .collect();
    assert!(!lines.is_empty(), "{text}");
    for l in lines {
        assert!(l.contains("escapes the fixture root"), "{l}");
        assert!(!l.contains("(absent)"), "{l}");
    }
}
