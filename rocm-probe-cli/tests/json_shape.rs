//! Schema version 2, read the way users read it: with `jq` itself (Debian's jq 1.6, which turns
//! every JSON number into a double). 64-bit identifiers and PCI ids are hex strings that jq
//! prints exactly as the text outputs do; lists are where a user looks for them and counts are
//! named as counts; `diff --json` keeps types; a command without KFD still prints a document;
//! `diff` reads version 1 and version 2 documents alike (a fleet runs both during a roll-out).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{fixture, probe, run};
use serde_json::Value;

/// `jq -r FILTER` over `input`: its output lines.
fn jq(filter: &str, input: &str) -> Vec<String> {
    let mut child = Command::new("jq")
        .args(["-r", filter])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jq is installed (scripts/test installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "jq {filter}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn stdout(args: &[&str]) -> String {
    let r = run(probe().args(args));
    assert!(r.code <= 1, "{args:?}: {}", r.stderr);
    r.stdout
}

#[test]
fn hive_and_device_ids_read_by_jq_are_the_text_outputs_ids() {
    let root = fixture("mi210-xgmi-8gpu");
    let root = root.to_str().unwrap();
    let agents = stdout(&["--root", root, "agents", "--json"]);
    // 0xaefdf8293fefa6b7 is 12609507387757274807, which jq 1.6 would print as
    // 12609507387757275000 were it a number.
    let hives = jq(".hives[].hive_id", &agents);
    assert_eq!(hives, ["0xaefdf8293fefa6b7", "0xfb11632c00f4d272"]);
    // The report's text names the first hive as jq reads it.
    let text = stdout(&["--root", root, "-v"]);
    assert!(text.contains(hives[0].as_str()), "{text}");
    assert_eq!(jq(".gpus[0].device_id", &agents), ["0x740f"]);
    assert_eq!(
        jq("[.agents[].chip_id | values] | unique[]", &agents),
        ["0x740f"]
    );

    let report = stdout(&["--root", root, "--json"]);
    assert_eq!(jq(".schema_version", &report), ["2"]);
    assert_eq!(jq(".facts.gpu_count", &report), ["8"]);
    assert_eq!(jq(".facts.agent_count", &report), ["8"]);
    assert_eq!(jq(".facts.gpus | length", &report), ["8"]);
    assert_eq!(jq(".facts.gpus[0].device_id", &report), ["0x740f"]);
    assert_eq!(jq(".facts.config | has(\"gpus\")", &report), ["false"]);
    assert_eq!(jq(".source.kind", &report), ["fixture"]);
    let stamp = jq(".generated_at", &report).remove(0);
    assert!(
        stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T',
        "{stamp}"
    );
}

#[test]
fn the_host_name_is_redacted_unless_asked_and_json_lines_is_one_line() {
    let (_dir, root) = common::copy_fixture("rx7900xtx");
    std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    std::fs::write(root.join("proc/sys/kernel/hostname"), "gpu-node-17\n").unwrap();
    let root = root.to_str().unwrap();
    let json = stdout(&["--root", root, "--json"]);
    assert_eq!(jq(".source.host", &json), ["host"]);
    let lines = stdout(&["--root", root, "--format", "json-lines", "--no-redact"]);
    assert_eq!(lines.lines().count(), 1, "{lines}");
    assert_eq!(jq(".source.host", &lines), ["gpu-node-17"]);
    let mut a: Value = serde_json::from_str(&json).unwrap();
    let mut b: Value = serde_json::from_str(&lines).unwrap();
    for d in [&mut a, &mut b] {
        d.as_object_mut().unwrap().remove("generated_at");
        d["source"]["host"] = Value::Null;
    }
    assert_eq!(a, b, "json-lines is the same document");
    // Markdown and HTML are redacted for pasting, always: --no-redact there is refused.
    let r = run(probe().args(["--root", root, "--format", "html", "--no-redact"]));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("--no-redact"), "{}", r.stderr);
}

#[test]
fn without_kfd_every_json_command_prints_a_document_with_the_reason() {
    let root = fixture("no-amdgpu");
    let root = root.to_str().unwrap();
    for (command, list) in [
        ("agents", ".agents"),
        ("topo", ".gpus"),
        ("ps", ".processes"),
    ] {
        let r = run(probe().args(["--root", root, command, "--json"]));
        assert_eq!(r.code, 1, "{command}: {}", r.stderr);
        assert!(r.stderr.contains("no KFD"), "{command}: {}", r.stderr);
        assert_eq!(
            jq(".error.kind", &r.stdout),
            ["kfd-not-loaded"],
            "{command}"
        );
        assert_eq!(jq(&format!("{list} | length"), &r.stdout), ["0"]);
        assert_eq!(jq(".schema_version", &r.stdout), ["2"]);
    }
}

#[test]
fn ps_names_queue_types() {
    let root = fixture("mi308x-busy");
    let ps = stdout(&["--root", root.to_str().unwrap(), "ps", "--json"]);
    let types = jq("[.processes[].queues[].queue_type] | unique[]", &ps);
    assert!(types.iter().any(|t| t == "compute"), "{types:?}");
    assert!(
        types
            .iter()
            .all(|t| ["compute", "sdma", "other", "unknown"].contains(&t.as_str())),
        "{types:?}"
    );
    assert_eq!(
        jq(
            "[.processes[].queues[] | select(.queue_type == \"compute\") | .queue_type_number] | unique[]",
            &ps
        ),
        ["0"]
    );
}

/// `doc` as schema version 1 wrote it (docs/json-changelog.md, read backwards).
fn as_version_1(doc: &str) -> String {
    let mut v: Value = serde_json::from_str(doc).unwrap();
    v["schema_version"] = Value::from(1);
    let o = v.as_object_mut().unwrap();
    o.remove("generated_at");
    o["source"].as_object_mut().unwrap().remove("host");
    let facts = v["facts"].as_object_mut().unwrap();
    let mut gpus = facts.remove("gpus").unwrap();
    for g in gpus.as_array_mut().unwrap() {
        let hex = g["device_id"].as_str().unwrap().trim_start_matches("0x");
        g["device_id"] = Value::from(u64::from_str_radix(hex, 16).unwrap());
    }
    let count = facts.remove("gpu_count").unwrap();
    facts.insert("gpus".into(), count);
    let count = facts.remove("agent_count").unwrap();
    facts.insert("agents".into(), count);
    facts["config"]["gpus"] = gpus;
    v.to_string()
}

#[test]
fn diff_json_is_typed_and_reads_version_1_beside_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let a = stdout(&[
        "--root",
        fixture("mi300x-cpx-8gpu").to_str().unwrap(),
        "--json",
    ]);
    let b = stdout(&[
        "--root",
        fixture("mi308x-cpx-8gpu").to_str().unwrap(),
        "--json",
    ]);
    let (a2, b2, a1) = (
        write("a2.json", &a),
        write("b2.json", &b),
        write("a1.json", &as_version_1(&a)),
    );
    let diff = |x: &std::path::Path, y: &std::path::Path| {
        let r = run(probe().arg("diff").arg("--json").arg(x).arg(y));
        assert_eq!(r.code, 1, "{}", r.stderr);
        r.stdout
    };
    let d = diff(&a2, &b2);
    let cu = ".differences[] | select(.path == \"gpus[0].compute_units\")";
    assert_eq!(
        jq(&format!("{cu} | [.a, .b] | map(type) | join(\" \")"), &d),
        ["number number"]
    );
    assert_eq!(jq(&format!("{cu} | .a"), &d), ["304"]);
    assert_eq!(
        jq(
            ".differences[] | select(.path == \"gpus[0].device_id\") | .a",
            &d
        ),
        ["0x74a1"]
    );
    assert_eq!(jq(".schema_version", &d), ["2"]);
    let mut with_v1: Value = serde_json::from_str(&diff(&a1, &b2)).unwrap();
    let mut with_v2: Value = serde_json::from_str(&d).unwrap();
    assert_eq!(with_v1["differences"], with_v2["differences"]);
    // The fingerprint is computed alike by both versions.
    assert_eq!(
        with_v1["fingerprints"].take(),
        with_v2["fingerprints"].take()
    );
    let same = run(probe().arg("diff").arg(&a1).arg(&a2));
    assert_eq!(
        (same.code, same.stdout.as_str()),
        (0, ""),
        "{}",
        same.stderr
    );
}
