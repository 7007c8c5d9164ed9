//! `rocm-probe fleet` end to end (issue #20 item 3): the fixtures' reports as a fleet's nodes,
//! schema 1 and 2 mixed, in files, directories and pdsh streams on standard input, with
//! malformed and foreign documents among them; text in both languages, JSON and HTML.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture, probe, run};
use serde_json::{Value, json};

/// A fixture's report as a node still on schema version 1 wrote it: `report --json` (version 2)
/// turned back per docs/json-changelog.md, so that fleets mix both versions; [`v2`] is the
/// current version.
fn report(name: &str) -> Value {
    let r = run(probe().arg("--root").arg(fixture(name)).arg("--json"));
    assert!(r.code <= 1, "{name}: {}", r.stderr);
    let mut d: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(d["schema_version"], 2);
    d["schema_version"] = json!(1);
    let o = d.as_object_mut().unwrap();
    o.remove("generated_at");
    o["source"].as_object_mut().unwrap().remove("host");
    let facts = d["facts"].as_object_mut().unwrap();
    let mut gpus = facts.remove("gpus").unwrap();
    for g in gpus.as_array_mut().unwrap() {
        if let Some(hex) = g["device_id"].as_str() {
            let id = u64::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap();
            g["device_id"] = json!(id);
        }
    }
    let count = facts.remove("gpu_count").unwrap();
    let agents = facts.remove("agent_count").unwrap();
    facts.insert("gpus".into(), count);
    facts.insert("agents".into(), agents);
    facts["config"]["gpus"] = gpus;
    d
}

/// The same report in schema 2 as issue #20 specifies it: `source.host`, `generated_at`, the
/// GPU list in `facts.gpus` (moved out of `facts.config.gpus`), the counts renamed, device ids
/// in hex.
fn v2(mut d: Value, host: Option<&str>) -> Value {
    if d["schema_version"] == 2 {
        d["source"]["host"] = json!(host);
        return d;
    }
    d["schema_version"] = json!(2);
    d["source"]["host"] = json!(host);
    d["generated_at"] = json!("2026-12-03T23:00:00Z");
    let facts = d["facts"].as_object_mut().unwrap();
    let mut gpus = facts["config"]
        .as_object_mut()
        .unwrap()
        .remove("gpus")
        .unwrap();
    for g in gpus.as_array_mut().unwrap() {
        if let Some(id) = g["device_id"].as_u64() {
            g["device_id"] = json!(format!("{id:#06x}"));
        }
    }
    let count = facts.remove("gpus").unwrap();
    let agents = facts.remove("agents").unwrap();
    facts.insert("gpu_count".into(), count);
    facts.insert("agent_count".into(), agents);
    facts.insert("gpus".into(), gpus);
    d
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path
}

/// Five MI210 nodes: three alike, one on ROCm 6.2 (another fingerprint), one failing a GPU.
fn mi210_fleet(dir: &Path) {
    let good = report("mi210-xgmi-8gpu");
    write(dir, "node01.json", &good);
    write(dir, "node02.json", &v2(good.clone(), Some("node02")));
    write(dir, "node03.json", &good);
    write(dir, "node04.json", &report("rocm-6.2-mi210"));
    write(
        dir,
        "node05.json",
        &v2(report("ras-uncorrectable"), Some("host")),
    );
}

#[test]
fn groups_majority_and_outliers_from_both_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    mi210_fleet(tmp.path());
    let r = run(probe().arg("fleet").arg(tmp.path()).arg("--json"));
    assert_eq!(r.code, 1, "a node fails: {}", r.stderr);
    let f: Value = serde_json::from_str(&r.stdout).unwrap();
    let names: Vec<&str> = f["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    // node05's host is redaction's stand-in: its file names it.
    assert_eq!(names, ["node01", "node02", "node03", "node04", "node05"]);
    assert_eq!(f["nodes"][1]["name_from"], "host");
    assert_eq!(f["nodes"][1]["schema_version"], 2);
    assert_eq!(f["nodes"][4]["name_from"], "file");
    assert_eq!(f["verdicts"][0]["status"], "fail");
    assert_eq!(f["verdicts"][0]["nodes"], json!(["node05"]));
    assert_eq!(f["verdicts"][1]["status"], "pass");
    let ras = f["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "hardware.ras-uncorrectable")
        .unwrap();
    assert_eq!(ras["nodes"], json!(["node05"]));
    // One fingerprint for the four ROCm-less MI210 nodes, whatever their schema; another for
    // node04's ROCm 6.2.
    let groups = f["configurations"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert_eq!(groups[0]["majority"], true);
    assert_eq!(
        groups[0]["nodes"],
        json!(["node01", "node02", "node03", "node05"])
    );
    assert_eq!(groups[1]["nodes"], json!(["node04"]));
    assert_eq!(f["majority"]["nodes"], 4);
    let outliers = f["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 1, "{outliers:?}");
    assert_eq!(outliers[0]["node"], "node04");
    assert_eq!(
        outliers[0]["differences"],
        json!([{"area": "versions", "key": "config.rocm", "majority": null, "node": "6.2.0"}])
    );
    let gpu = &f["gpu_failures"][0];
    assert_eq!(
        (&gpu["node"], &gpu["index"], &gpu["findings"][0]),
        (
            &json!("node05"),
            &json!(0),
            &json!("hardware.ras-uncorrectable")
        )
    );

    let text = run(probe().arg("fleet").arg(tmp.path()).env("COLUMNS", "80"));
    assert_eq!(text.code, 1);
    for line in [
        "  FAIL       1  node05",
        "  PASS       4  node[01-04]",
        "  FAIL       1  hardware.ras-uncorrectable",
        "  node04",
        "    config.rocm  6.2.0 (majority: (absent))",
        "  node05  GPU 0 (0000:63:00.0)  hardware.ras-uncorrectable",
    ] {
        assert!(
            text.stdout.lines().any(|l| l == line),
            "no line {line:?}:\n{}",
            text.stdout
        );
    }
    assert!(text.stdout.lines().all(|l| l.chars().count() <= 80));
}

#[test]
fn firmware_and_partition_outliers_inside_one_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let good = report("mi300x-cpx-8gpu");
    for i in 1..=4 {
        write(tmp.path(), &format!("gpu{i}.json"), &good);
    }
    // Firmware is not in the fingerprint: a node with an older MEC on GPU 3 has the same one.
    let mut old_mec = good.clone();
    old_mec["facts"]["config"]["gpus"][3]["mec_firmware"] = json!(170);
    write(tmp.path(), "gpu5.json", &v2(old_mec, Some("gpu5")));
    let mut spx = good.clone();
    spx["facts"]["config"]["compute_partition"] = json!("SPX");
    spx["facts"]["config"]["fingerprint"] = json!("0123456789abcdef");
    write(tmp.path(), "gpu6.json", &spx);
    let r = run(probe().arg("fleet").arg(tmp.path()).arg("--json"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let f: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(f["majority"]["nodes"], 4);
    let outliers: Vec<(&str, &Value)> = f["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["node"].as_str().unwrap(), &o["differences"]))
        .collect();
    assert_eq!(
        outliers,
        [
            (
                "gpu5",
                &json!([{"area": "firmware", "key": "gpus.mec_firmware",
                         "majority": "177", "node": "177 (GPU 0-2,4-7), 170 (GPU 3)"}])
            ),
            (
                "gpu6",
                &json!([{"area": "partition", "key": "config.compute_partition",
                         "majority": "CPX", "node": "SPX"}])
            ),
        ]
    );
}

#[test]
fn malformed_and_foreign_documents_are_listed_never_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("reports");
    let sub = dir.join("rack2");
    std::fs::create_dir_all(&sub).unwrap();
    let good = report("mi210-xgmi-8gpu");
    write(&dir, "a-good.json", &good);
    write(&sub, "b-good.json", &good);
    std::fs::write(dir.join("c-garbage.json"), "Segmentation fault\n").unwrap();
    std::fs::write(dir.join("d-cut.json"), r#"{"schema_version": 1, "tool""#).unwrap();
    write(&dir, "e-array.json", &json!([1, 2, 3]));
    write(
        &dir,
        "f-smi.json",
        &json!({"tool": {"name": "amd-smi"}, "gpus": []}),
    );
    let mut future = good.clone();
    future["schema_version"] = json!(99);
    write(&dir, "g-future.json", &future);
    let agents = run(probe()
        .arg("agents")
        .arg("--root")
        .arg(fixture("mi210-xgmi-8gpu"))
        .arg("--json"));
    std::fs::write(dir.join("h-agents.json"), agents.stdout).unwrap();
    std::fs::write(
        dir.join("i-binary.json"),
        b"{\"tool\": {\"name\": \"rocm-probe\xff\xfe\"}}",
    )
    .unwrap();
    // Not read: other extensions, and symlinks inside a directory (to a report or to `/`).
    std::fs::write(dir.join("notes.txt"), "not a report").unwrap();
    std::os::unix::fs::symlink(dir.join("a-good.json"), dir.join("j-link.json")).unwrap();
    std::os::unix::fs::symlink("/", dir.join("k-root")).unwrap();
    // A FIFO named on the command line: refused at once, no writer awaited.
    let fifo = tmp.path().join("pipe.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let missing = tmp.path().join("missing.json");

    let r = run(probe()
        .arg("fleet")
        .arg(&dir)
        .arg(&fifo)
        .arg(&missing)
        .arg("--json"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let f: Value = serde_json::from_str(&r.stdout).unwrap();
    let names: Vec<&str> = f["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a-good", "b-good"]);
    let refused: Vec<(String, &str)> = f["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let input = x["origin"]["input"].as_str().unwrap();
            let file = Path::new(input).file_name().unwrap().to_string_lossy();
            (file.into_owned(), x["reason"]["kind"].as_str().unwrap())
        })
        .collect();
    let expected = [
        ("c-garbage.json", "not-json"),
        ("d-cut.json", "not-json"),
        ("e-array.json", "malformed"),
        ("f-smi.json", "foreign"),
        ("g-future.json", "unsupported-schema"),
        ("h-agents.json", "not-a-report"),
        ("i-binary.json", "not-utf8"),
        ("pipe.json", "unreadable"),
        ("missing.json", "unreadable"),
    ];
    let expected: Vec<(String, &str)> = expected
        .iter()
        .map(|(a, b)| ((*a).to_owned(), *b))
        .collect();
    assert_eq!(refused, expected);

    let text = run(probe().arg("fleet").arg(&dir).arg(&fifo));
    assert_eq!(text.code, 0);
    for part in [
        "c-garbage.json: not JSON (line 1, column 1)",
        "f-smi.json: another tool's document (tool.name amd-smi)",
        "g-future.json: schema_version 99 is not supported (supported: 1, 2)",
        "pipe.json: unreadable:",
    ] {
        assert!(text.stdout.contains(part), "{part}:\n{}", text.stdout);
    }

    // Nothing readable at all: the command could not run (exit 2), each refusal on stderr.
    let none = run(probe()
        .arg("fleet")
        .arg(dir.join("c-garbage.json"))
        .arg(&missing)
        .arg("-o")
        .arg(tmp.path().join("out.txt")));
    assert_eq!(none.code, 2);
    assert!(
        none.stderr.contains("no report could be read"),
        "{}",
        none.stderr
    );
    assert!(none.stderr.contains("c-garbage.json"), "{}", none.stderr);
    assert!(!tmp.path().join("out.txt").exists());
}

/// What `pdsh -w node[1-4] rocm-probe --json` prints: every line of each node's pretty
/// document behind `nodeN: `, the nodes' lines interleaved; an unreachable node's ssh error;
/// a node cut off mid-document.
#[test]
fn pdsh_output_on_standard_input() {
    let good = serde_json::to_string_pretty(&report("mi210-xgmi-8gpu")).unwrap();
    let failing = v2(report("ras-uncorrectable"), None).to_string();
    let mut stream = String::new();
    let lines: Vec<&str> = good.lines().collect();
    for (k, l) in lines.iter().enumerate() {
        stream.push_str(&format!("node1: {l}\n"));
        stream.push_str(&format!("node2: {}\n", lines[k]));
        if k == 10 {
            stream.push_str(&format!("node3: {failing}\n"));
            stream.push_str("node4: ssh: connect to host node4 port 22: No route to host\n");
        }
    }
    stream.push_str("node5: {\n");
    stream.push_str("node5:   \"schema_version\": 1,\n");
    let r = run(probe().args(["fleet", "-", "--json"]).write_stdin(stream));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f: Value = serde_json::from_str(&r.stdout).unwrap();
    let nodes: Vec<(&str, &str)> = f["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap(),
                n["name_from"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            ("node3", "prefix"),
            ("node1", "prefix"),
            ("node2", "prefix")
        ]
    );
    let refused: Vec<(&str, &str)> = f["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["node"].as_str().unwrap(),
                x["reason"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [("node4", "not-a-document"), ("node5", "truncated")]
    );
    assert_eq!(f["gpu_failures"][0]["node"], "node3");

    // JSON lines without prefixes, the host in each schema 2 document; a file of them too.
    let tmp = tempfile::tempdir().unwrap();
    let lines: String = ["n7", "n8", "n9"]
        .iter()
        .map(|h| format!("{}\n", v2(report("mi210-xgmi-8gpu"), Some(h))))
        .collect();
    let file = tmp.path().join("fleet.jsonl");
    std::fs::write(&file, &lines).unwrap();
    let r = run(probe()
        .args(["fleet", "-"])
        .arg(&file)
        .arg("--json")
        .write_stdin(lines.clone()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let f: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        f["verdicts"][0]["nodes"],
        json!(["n7", "n8", "n9", "n7", "n8", "n9"])
    );
    assert_eq!(f["nodes"][3]["origin"]["line"], 1);
}

#[test]
fn both_languages_and_a_self_contained_page() {
    let tmp = tempfile::tempdir().unwrap();
    mi210_fleet(tmp.path());
    // A host name is input from elsewhere: escaped on a terminal and in the page.
    let hostile = v2(
        report("mi210-xgmi-8gpu"),
        Some("<script>x</script>\u{1b}[31m"),
    );
    write(tmp.path(), "node06.json", &hostile);
    std::fs::write(tmp.path().join("node07.json"), "oops").unwrap();
    let en = run(probe().args(["fleet", "--lang", "en"]).arg(tmp.path()));
    let zh = run(probe().args(["fleet", "--lang", "zh"]).arg(tmp.path()));
    assert_eq!((en.code, zh.code), (1, 1));
    assert!(!en.stdout.contains('\u{1b}'), "{}", en.stdout);
    assert!(en.stdout.contains("\\x1b[31m"), "{}", en.stdout);
    for (words, text) in [
        (
            &[
                "Nodes by verdict",
                "Configurations by fingerprint",
                "Majority configuration",
                "GPUs with a failure",
                "not JSON (line 1, column 1)",
            ][..],
            &en.stdout,
        ),
        (
            &[
                "按结论分组的节点",
                "按指纹分组的配置",
                "多数配置",
                "有故障的 GPU",
                "不是 JSON（第 1 行第 1 列）",
                "故障",
            ],
            &zh.stdout,
        ),
    ] {
        for w in words {
            assert!(text.contains(w), "{w}:\n{text}");
        }
    }
    assert!(!zh.stdout.contains("Nodes by verdict"));
    // Ids, names and values are data: the same in both.
    for data in ["hardware.ras-uncorrectable", "node[01-04]", "6.2.0"] {
        assert!(
            en.stdout.contains(data) && zh.stdout.contains(data),
            "{data}"
        );
    }

    for (lang, html_lang, heading) in [
        ("en", "en", "Nodes by verdict"),
        ("zh", "zh-Hans", "按结论分组的节点"),
    ] {
        let page = tmp.path().join(format!("fleet-{lang}.html"));
        let r = run(probe()
            .args(["fleet", "--format", "html", "--lang", lang, "-o"])
            .arg(&page)
            .arg(tmp.path()));
        assert_eq!(r.code, 1, "{}", r.stderr);
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains(&format!(r#"<html lang="{html_lang}">"#)));
        assert!(html.contains(heading), "{html}");
        // Self-contained: the report page's stylesheet inline, nothing loaded, no script.
        assert!(html.contains("header.verdict[data-status=fail]"));
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        for external in ["src=", "href=\"http", "@import", "url("] {
            assert!(!html.contains(external), "{external}");
        }
        assert!(html.contains(r#"<tr data-status="fail">"#));
        assert!(html.contains("<code>hardware.ras-uncorrectable</code>"));
    }
}

#[test]
fn fits_80_columns_in_both_languages() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "mi300x-cpx-8gpu",
        "mi308x-cpx-8gpu",
        "ras-uncorrectable",
        "kfd-missing",
        "rocm-6.2-mi210",
        "pcie-link-x8",
        "kmsg-ras-uncorrectable-mi50",
        "apu-strixpoint",
    ] {
        write(tmp.path(), &format!("{name}.json"), &report(name));
    }
    std::fs::write(tmp.path().join("zz-bad.json"), "[").unwrap();
    for lang in ["en", "zh"] {
        let r = run(probe()
            .env("COLUMNS", "80")
            .args(["fleet", "--lang", lang])
            .arg(tmp.path()));
        assert_eq!(r.code, 1, "{}", r.stderr);
        let wide: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| unicode_width::UnicodeWidthStr::width(*l) > 80)
            .filter(|l| l.trim().contains(' '))
            .collect();
        assert!(wide.is_empty(), "{lang}: {wide:#?}");
    }
}
