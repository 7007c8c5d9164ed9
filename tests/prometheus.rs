//! The node_exporter textfile (`--textfile`): every fixture's metrics parse under the text
//! exposition format's rules (one HELP and TYPE per family, no timestamps, no series twice,
//! escaped label values); Prometheus's own linter (`promtool check metrics`) accepts them; and
//! the real node_exporter serves them from its textfile directory without a scrape error.
//!
//! Tools absent: with `CI` set the test fails (CI installs Debian's `prometheus` and
//! `prometheus-node-exporter`), else it prints `skipped: …`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rocm_probe::report::Options;
use rocm_probe::{Facts, Report, Source};

use rocm_probe_tests::{fixtures, fixtures_dir};

const PROMTOOL: &str = "/usr/bin/promtool";
const NODE_EXPORTER: &str = "/usr/bin/prometheus-node-exporter";

/// The fixtures the external tools check: partitions, a desktop GPU, RAS errors, a degraded link,
/// and no GPU at all.
const CHECKED: [&str; 7] = [
    "mi300x-cpx-8gpu",
    "apu-phoenix-780m",
    "rx7900xtx",
    "ras-uncorrectable",
    "pcie-link-x8",
    "no-amdgpu",
    "kfd-missing",
];

/// The textfile of the fixture at `dir`, with a fixed duration.
fn textfile_of(dir: &Path) -> String {
    let facts = Facts::collect(&Source::fixture(dir).expect("fixture.toml parses"));
    let report = Report::from_facts(&facts, Options::default());
    rocm_probe::export::prometheus::render(&report, &facts, Duration::from_millis(1250))
}

fn textfile(name: &str) -> String {
    textfile_of(&fixtures_dir().join(name))
}

/// One sample: metric name, labels (empty values dropped: Prometheus treats them as absent)
/// and value.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

impl Sample {
    /// The series identity: name and sorted label set.
    fn key(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        format!("{}{{{}}}", self.name, labels.join(","))
    }
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

/// Parses one sample line strictly: `name{label="value",…} value` and nothing after the value
/// (no timestamp). Only the three escapes of the format are accepted in label values. An empty
/// label value is an error with `strict` (the probe leaves unknown labels out), else dropped
/// (node_exporter fills labels missing from some samples of a family with empty values).
fn parse_sample(line: &str, strict: bool) -> Result<Sample, String> {
    let end = line.find(['{', ' ']).ok_or("no value")?;
    let name = &line[..end];
    if !is_name(name, true) {
        return Err(format!("bad metric name {name:?}"));
    }
    let mut rest = &line[end..];
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = after;
        loop {
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = rest.find('=').ok_or("label without =")?;
            let label = &rest[..eq];
            if !is_name(label, false) || label.starts_with("__") {
                return Err(format!("bad label name {label:?}"));
            }
            rest = rest[eq + 1..]
                .strip_prefix('"')
                .ok_or("label value not quoted")?;
            let mut value = String::new();
            let mut chars = rest.char_indices();
            let close = loop {
                match chars.next() {
                    None => return Err("unterminated label value".into()),
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, '\\')) => value.push('\\'),
                        Some((_, '"')) => value.push('"'),
                        Some((_, 'n')) => value.push('\n'),
                        other => return Err(format!("bad escape {other:?}")),
                    },
                    Some((_, c)) => value.push(c),
                }
            };
            rest = &rest[close + 1..];
            if value.is_empty() {
                if strict {
                    return Err(format!("empty value for label {label}"));
                }
            } else if labels.insert(label.to_owned(), value).is_some() {
                return Err(format!("label {label} twice"));
            }
            if let Some(after) = rest.strip_prefix(',') {
                rest = after;
            } else if !rest.starts_with('}') {
                return Err("labels not separated by ,".into());
            }
        }
    }
    let value = rest.strip_prefix(' ').ok_or("no space before the value")?;
    if value.contains(' ') || value.is_empty() {
        return Err(format!("not exactly one value (a timestamp?): {value:?}"));
    }
    let value: f64 = value.parse().map_err(|_| format!("bad value {value:?}"))?;
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// A family: HELP text, TYPE and samples.
#[derive(Debug, Default)]
struct Family {
    help: String,
    kind: String,
    samples: Vec<Sample>,
}

/// Parses a whole textfile under the rules node_exporter's textfile collector and Prometheus
/// apply, failing with the line at fault: each family has exactly one HELP then one TYPE before
/// its samples, its samples follow without another family between, no series twice, no
/// timestamps, a final newline.
fn parse(text: &str) -> BTreeMap<String, Family> {
    check(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Fails with `$why` (a `format!` list) unless `$cond`.
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err(format!($($why)+));
        }
    };
}

/// [`parse`], saying what is wrong instead of panicking.
fn check(text: &str) -> Result<BTreeMap<String, Family>, String> {
    ensure!(text.ends_with('\n'), "no final newline");
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut series = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let at = |why: &str| format!("line {}: {why}: {line:?}", n + 1);
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest
                .split_once(' ')
                .ok_or_else(|| at("HELP without text"))?;
            ensure!(is_name(name, true), "{}", at("bad family name"));
            ensure!(
                !families.contains_key(name),
                "{}",
                at("second HELP (family not contiguous?)")
            );
            ensure!(!help.trim().is_empty(), "{}", at("empty HELP"));
            families.insert(
                name.to_owned(),
                Family {
                    help: help.to_owned(),
                    ..Family::default()
                },
            );
            current = Some(name.to_owned());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| at("TYPE without type"))?;
            ensure!(
                current.as_deref() == Some(name),
                "{}",
                at("TYPE not right after its HELP")
            );
            let f = families
                .get_mut(name)
                .ok_or_else(|| at("TYPE without HELP"))?;
            ensure!(f.kind.is_empty(), "{}", at("second TYPE"));
            ensure!(f.samples.is_empty(), "{}", at("TYPE after samples"));
            ensure!(
                ["gauge", "counter"].contains(&kind),
                "{}",
                at("unexpected type")
            );
            f.kind = kind.to_owned();
        } else if line.starts_with('#') || line.trim().is_empty() {
            return Err(at("stray comment or blank line"));
        } else {
            let s = parse_sample(line, true).map_err(|e| at(&e))?;
            ensure!(
                current.as_deref() == Some(s.name.as_str()),
                "{}",
                at("sample outside its family")
            );
            ensure!(series.insert(s.key()), "{}", at("duplicate series"));
            let f = families
                .get_mut(&s.name)
                .ok_or_else(|| at("sample without HELP"))?;
            ensure!(!f.kind.is_empty(), "{}", at("sample before TYPE"));
            f.samples.push(s);
        }
    }
    for (name, f) in &families {
        ensure!(!f.kind.is_empty(), "{name}: no TYPE");
        ensure!(
            !f.samples.is_empty(),
            "{name}: HELP and TYPE without samples"
        );
        ensure!(name.starts_with("rocm_probe_"), "{name}: not our prefix");
        ensure!(
            (f.kind == "counter") == name.ends_with("_total"),
            "{name}: _total is for counters only"
        );
    }
    Ok(families)
}

/// The value of the one sample of `family` whose labels include `labels`.
fn value(families: &BTreeMap<String, Family>, family: &str, labels: &[(&str, &str)]) -> f64 {
    let f = families
        .get(family)
        .unwrap_or_else(|| panic!("{family} missing"));
    let hits: Vec<&Sample> = f
        .samples
        .iter()
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert_eq!(hits.len(), 1, "{family}{labels:?}: {:?}", f.samples);
    hits[0].value
}

#[test]
fn the_checker_rejects_what_node_exporter_would() {
    let head = "# HELP rocm_probe_x X.\n# TYPE rocm_probe_x gauge\n";
    let good = check(&format!("{head}rocm_probe_x{{a=\"q\\\"\\\\\\n\"}} 1\n")).unwrap();
    assert_eq!(good["rocm_probe_x"].samples[0].labels["a"], "q\"\\\n");
    for bad in [
        format!("{head}rocm_probe_x 1 1700000000000\n"),
        format!("{head}rocm_probe_x{{a=\"1\"}} 1\nrocm_probe_x{{a=\"1\"}} 2\n"),
        format!("{head}rocm_probe_x{{a=\"1\",b=\"2\"}} 1\nrocm_probe_x{{b=\"2\",a=\"1\"}} 1\n"),
        format!("{head}rocm_probe_x{{a=\"\\t\"}} 1\n"),
        format!("{head}rocm_probe_x{{a=\"\"}} 1\n"),
        format!("{head}{head}rocm_probe_x 1\n"),
        format!("{head}rocm_probe_x 1\n# HELP rocm_probe_y Y.\nrocm_probe_y 1\n"),
        format!("{head}rocm_probe_x 1"),
        "# HELP rocm_probe_x_total X.\n# TYPE rocm_probe_x_total gauge\nrocm_probe_x_total 1\n"
            .to_owned(),
    ] {
        assert!(check(&bad).is_err(), "accepted: {bad:?}");
    }
}

#[test]
fn every_fixture_gives_a_well_formed_textfile() {
    let mut help: BTreeMap<String, String> = BTreeMap::new();
    for (name, dir) in fixtures() {
        let text = textfile_of(&dir);
        let families =
            check(&text).unwrap_or_else(|e| panic!("{name}: malformed textfile: {e}\n{text}"));
        // HELP is constant: the same text for a family in every fixture.
        for (family, f) in &families {
            let first = help.entry(family.clone()).or_insert_with(|| f.help.clone());
            assert_eq!(*first, f.help, "{name}: {family} HELP varies");
        }
        // Always there: the run's own families, each status counted, each layer.
        for family in [
            "rocm_probe_info",
            "rocm_probe_verdict",
            "rocm_probe_layer_status",
            "rocm_probe_findings",
            "rocm_probe_duration_seconds",
        ] {
            assert!(families.contains_key(family), "{name}: {family} missing");
        }
        let statuses: Vec<&str> = families["rocm_probe_findings"]
            .samples
            .iter()
            .map(|s| s.labels["status"].as_str())
            .collect();
        assert_eq!(statuses, ["skip", "pass", "info", "warn", "fail"], "{name}");
        assert_eq!(families["rocm_probe_layer_status"].samples.len(), 9);
        assert_eq!(
            value(&families, "rocm_probe_duration_seconds", &[]),
            1.25,
            "{name}"
        );
        // Partitions of one GPU differ by node.
        if let Some(info) = families.get("rocm_probe_gpu_info") {
            let nodes: BTreeSet<&str> = info
                .samples
                .iter()
                .map(|s| s.labels["kfd_node"].as_str())
                .collect();
            assert_eq!(nodes.len(), info.samples.len(), "{name}");
        }
    }
}

#[test]
fn firmware_and_telemetry_follow_the_sysfs_files() {
    // The real Phoenix capture (LACT): device/fw_version/*, vbios_version, hwmon6, gpu_busy_percent.
    let t = parse(&textfile("apu-phoenix-780m"));
    let gpu = [("gpu", "0"), ("pci_address", "0000:64:00.0")];
    let fw = |component: &str, version: &str| {
        let mut l = gpu.to_vec();
        l.extend([("component", component), ("version", version)]);
        value(&t, "rocm_probe_firmware_info", &l)
    };
    assert_eq!(fw("mes", "0x00000080"), 1.0);
    assert_eq!(fw("smc", "0x004c6000"), 1.0);
    assert_eq!(fw("vbios", "113-PHXGENERIC-001"), 1.0);
    assert_eq!(t["rocm_probe_firmware_info"].samples.len(), 13);
    let mut edge = gpu.to_vec();
    edge.push(("sensor", "edge"));
    assert_eq!(value(&t, "rocm_probe_gpu_temperature_celsius", &edge), 25.0);
    assert_eq!(value(&t, "rocm_probe_gpu_power_watts", &gpu), 3.103);
    let mut sclk = gpu.to_vec();
    sclk.push(("clock", "sclk"));
    assert_eq!(value(&t, "rocm_probe_gpu_clock_hertz", &sclk), 800e6);
    assert_eq!(value(&t, "rocm_probe_gpu_busy_ratio", &gpu), 0.0);
    assert_eq!(
        value(&t, "rocm_probe_gpu_vram_used_bytes", &gpu),
        1272893440.0
    );
    assert_eq!(
        value(&t, "rocm_probe_gpu_gtt_used_bytes", &gpu),
        211398656.0
    );
    // gpu_metrics v2.1 has no ASIC-independent throttle status: no throttling samples.
    assert!(!t.contains_key("rocm_probe_gpu_throttling"));
    assert!(!t.contains_key("rocm_probe_gpu_telemetry_skipped"));
}

#[test]
fn values_follow_the_report() {
    let t = parse(&textfile("rx7900xtx"));
    assert_eq!(value(&t, "rocm_probe_verdict", &[]), 1.0);
    assert!(!t.contains_key("rocm_probe_root_cause_info"));
    assert_eq!(
        value(
            &t,
            "rocm_probe_layer_status",
            &[("layer", "driver"), ("number", "2")]
        ),
        1.0
    );
    let info = &t["rocm_probe_gpu_info"].samples;
    assert_eq!(info.len(), 1);
    let labels: Vec<(&str, &str)> = info[0]
        .labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // No marketing name: amdgpu.ids has four for 744C and the fixture no PCI revision to pick
    // one; unknown labels are left out. No partition modes on a Radeon.
    assert_eq!(
        labels,
        [
            ("device_id", "0x744c"),
            ("gfx", "gfx1100"),
            ("gpu", "0"),
            ("kfd_node", "1"),
            ("partition", "0"),
            ("pci_address", "0000:86:00.0"),
            ("target_id", "gfx1100"),
        ]
    );
    assert_eq!(
        value(&t, "rocm_probe_gpu_memory_bytes", &[("kfd_node", "1")]),
        25769803776.0
    );
    assert_eq!(
        value(
            &t,
            "rocm_probe_pcie_link_speed_transfers_per_second",
            &[("pci_address", "0000:86:00.0"), ("kind", "current")]
        ),
        16e9
    );
    // The maximum is not in this capture: left out, not 0.
    assert_eq!(
        t["rocm_probe_pcie_link_width_lanes"].samples.len(),
        1,
        "{:?}",
        t["rocm_probe_pcie_link_width_lanes"].samples
    );

    let t = parse(&textfile("pcie-link-x8"));
    let width = |kind| {
        value(
            &t,
            "rocm_probe_pcie_link_width_lanes",
            &[("pci_address", "0000:86:00.0"), ("kind", kind)],
        )
    };
    assert_eq!((width("current"), width("max")), (8.0, 16.0));
    assert_eq!(value(&t, "rocm_probe_verdict", &[]), 3.0);
    assert_eq!(
        value(
            &t,
            "rocm_probe_root_cause_info",
            &[("id", "hardware.pcie-link-degraded")]
        ),
        1.0
    );

    let t = parse(&textfile("ras-uncorrectable"));
    assert_eq!(value(&t, "rocm_probe_verdict", &[]), 4.0);
    let root = &t["rocm_probe_root_cause_info"].samples[0].labels;
    assert_eq!(root["id"], "hardware.ras-uncorrectable");
    assert_eq!(
        (root["layer"].as_str(), root["number"].as_str()),
        ("hardware", "1")
    );
    assert_eq!(t["rocm_probe_ras_errors_total"].kind, "counter");
    let ras = |block, kind| {
        value(
            &t,
            "rocm_probe_ras_errors_total",
            &[("block", block), ("kind", kind)],
        )
    };
    assert_eq!(
        (ras("umc", "uncorrectable"), ras("umc", "correctable")),
        (2.0, 31.0)
    );
    assert_eq!(ras("sdma", "correctable"), 4.0);
    assert_eq!(
        value(&t, "rocm_probe_findings", &[("status", "fail")]),
        t["rocm_probe_finding_info"]
            .samples
            .iter()
            .filter(|s| s.labels["status"] == "fail")
            .count() as f64
    );

    // Eight MI300X in CPX: one series per partition, each its own node; a sensible size.
    let text = textfile("mi300x-cpx-8gpu");
    let t = parse(&text);
    assert_eq!(value(&t, "rocm_probe_gpus", &[]), 8.0);
    let agents = value(&t, "rocm_probe_gpu_agents", &[]);
    assert_eq!(t["rocm_probe_gpu_info"].samples.len() as f64, agents);
    assert_eq!(
        value(
            &t,
            "rocm_probe_gpu_info",
            &[("kfd_node", "10"), ("gpu", "1"), ("partition", "0")]
        ),
        1.0
    );
    assert!(
        text.len() < 32 * 1024 && text.lines().count() < 300,
        "{} bytes, {} lines",
        text.len(),
        text.lines().count()
    );

    // One bad GPU of eight: the root cause and its findings name it, as gpu_info does.
    let t = parse(&textfile("ras-uncorrectable"));
    let gpu = [("gpu", "0"), ("pci_address", "0000:63:00.0")];
    let root = &t["rocm_probe_root_cause_info"].samples;
    assert_eq!(root.len(), 1);
    assert!(
        gpu.iter()
            .all(|(k, v)| root[0].labels.get(*k).map(String::as_str) == Some(*v)),
        "{:?}",
        root[0].labels
    );
    assert_eq!(
        value(
            &t,
            "rocm_probe_finding_info",
            &[
                ("id", "hardware.ras-uncorrectable"),
                ("layer", "hardware"),
                ("status", "fail"),
                gpu[0],
                gpu[1]
            ]
        ),
        1.0
    );
    let named_gpu = t["rocm_probe_gpu_info"]
        .samples
        .iter()
        .find(|s| s.labels.get("gpu").map(String::as_str) == Some("0"))
        .unwrap();
    assert_eq!(named_gpu.labels["pci_address"], "0000:63:00.0");

    // No GPU: the verdict and root cause, no GPU families.
    let t = parse(&textfile("no-amdgpu"));
    assert_eq!(value(&t, "rocm_probe_verdict", &[]), 4.0);
    assert!(!t.contains_key("rocm_probe_gpu_info"));
}

/// Copies a fixture (symlinks as symlinks).
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ft = e.file_type().unwrap();
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ft.is_dir() {
            copy(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The marketing name with a double quote and a backslash: `amdgpu.ids` of a fixture copy.
const ODD_NAME: &str = r#"AMD Radeon "RX" 7900 XTX \ lab"#;

/// rx7900xtx whose `amdgpu.ids` names its GPU [`ODD_NAME`].
fn odd_fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy(&fixtures_dir().join("rx7900xtx"), tmp.path());
    std::fs::write(
        tmp.path().join("usr/share/libdrm/amdgpu.ids"),
        format!("1.0.0\n744C,\tC8,\t{ODD_NAME}\n"),
    )
    .unwrap();
    tmp
}

#[test]
fn label_values_are_escaped() {
    let tmp = odd_fixture();
    let text = textfile_of(tmp.path());
    assert!(
        text.contains(r#"marketing_name="AMD Radeon \"RX\" 7900 XTX \\ lab""#),
        "{text}"
    );
    let t = parse(&text);
    assert_eq!(
        t["rocm_probe_gpu_info"].samples[0].labels["marketing_name"],
        ODD_NAME
    );
}

/// Runs `promtool check metrics` on `text`: its exit status and everything it printed.
fn promtool(text: &str) -> (bool, String) {
    let mut child = Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), printed)
}

#[test]
fn promtool_accepts_the_textfiles() {
    if !rocm_probe_tests::have(PROMTOOL, "prometheus") {
        return;
    }
    // The linter is live: it rejects a counter without `_total`.
    let (ok, printed) = promtool("# HELP x_errors X.\n# TYPE x_errors counter\nx_errors 1\n");
    assert!(!ok && printed.contains("_total"), "{printed}");

    let tmp = odd_fixture();
    let mut texts: Vec<(String, String)> = CHECKED
        .iter()
        .map(|n| (n.to_string(), textfile(n)))
        .collect();
    texts.push(("rx7900xtx with an odd name".into(), textfile_of(tmp.path())));
    for (name, text) in texts {
        // No accepted exceptions: any lint line fails.
        let (ok, printed) = promtool(&text);
        assert!(
            ok && printed.trim().is_empty(),
            "{name}: promtool check metrics: {printed}\n{text}"
        );
    }
}

/// The running node_exporter; killed and reaped when dropped, also when a test panics.
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /metrics` over plain HTTP/1.0 (no chunking, no compression); the body of a 200.
fn get_metrics(port: u16) -> Option<String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut response = String::new();
    s.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.lines()
        .next()?
        .contains(" 200 ")
        .then(|| body.to_owned())
}

/// Polls until the exporter answers (10 s at most); fails with its log if it exits or never
/// answers.
fn scrape(exporter: &mut Exporter, port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(body) = get_metrics(port) {
            return body;
        }
        if let Ok(Some(status)) = exporter.0.try_wait() {
            let mut log = String::new();
            if let Some(e) = exporter.0.stderr.as_mut() {
                let _ = e.read_to_string(&mut log);
            }
            panic!("node_exporter exited ({status}):\n{log}");
        }
        assert!(
            Instant::now() < deadline,
            "node_exporter on port {port} did not answer within 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The samples of families with `prefix` in a scrape, by series; HELP and TYPE lines by family.
fn scraped(body: &str, prefix: &str) -> (BTreeMap<String, f64>, BTreeSet<String>) {
    let mut samples = BTreeMap::new();
    let mut meta = BTreeSet::new();
    for line in body.lines() {
        if let Some(rest) = line
            .strip_prefix("# HELP ")
            .or_else(|| line.strip_prefix("# TYPE "))
        {
            if rest.starts_with(prefix) {
                meta.insert(line.to_owned());
            }
        } else if line.starts_with(prefix) {
            let s = parse_sample(line, false).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert!(samples.insert(s.key(), s.value).is_none(), "twice: {line}");
        }
    }
    (samples, meta)
}

/// Asserts the scrape serves exactly the textfile's series, values, HELP and TYPE.
fn assert_served(body: &str, text: &str, name: &str) {
    let (got, meta) = scraped(body, "rocm_probe_");
    let want: BTreeMap<String, f64> = parse(text)
        .into_values()
        .flat_map(|f| f.samples)
        .map(|s| (s.key(), s.value))
        .collect();
    assert_eq!(got, want, "{name}: served series differ");
    let want_meta: BTreeSet<String> = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert_eq!(meta, want_meta, "{name}: served HELP/TYPE differ");
    let (errors, _) = scraped(body, "node_textfile_scrape_error");
    assert_eq!(
        errors.get("node_textfile_scrape_error{}"),
        Some(&0.0),
        "{name}: {body}"
    );
}

#[test]
fn node_exporter_serves_the_textfile() {
    if !rocm_probe_tests::have(NODE_EXPORTER, "prometheus-node-exporter") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocm-probe.prom");
    let first = textfile("ras-uncorrectable");
    rocm_probe::source::atomic::write(&path, first.as_bytes()).unwrap();

    let port = free_port();
    let mut exporter = Exporter(
        Command::new(NODE_EXPORTER)
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!(
                "--collector.textfile.directory={}",
                dir.path().display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node_exporter starts"),
    );
    let body = scrape(&mut exporter, port);
    assert_served(&body, &first, "ras-uncorrectable");
    assert!(
        body.contains("# TYPE rocm_probe_ras_errors_total counter"),
        "{body}"
    );

    // Replaced while the exporter runs: the next scrape serves the new file whole, and the
    // temporary file is gone.
    for name in ["mi300x-cpx-8gpu", "rx7900xtx"] {
        let text = textfile(name);
        rocm_probe::source::atomic::write(&path, text.as_bytes()).unwrap();
        let body = scrape(&mut exporter, port);
        assert_served(&body, &text, name);
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, ["rocm-probe.prom"]);
    }
    // The odd marketing name survives node_exporter's parser and its own escaping.
    let tmp = odd_fixture();
    let text = textfile_of(tmp.path());
    rocm_probe::source::atomic::write(&path, text.as_bytes()).unwrap();
    let body = scrape(&mut exporter, port);
    assert_served(&body, &text, "rx7900xtx with an odd name");

    // The control: a file with a sample timestamp is dropped whole and flagged, so the
    // `node_textfile_scrape_error 0` above means something.
    std::fs::write(
        dir.path().join("timestamped.prom"),
        "# HELP rocm_probe_x X.\n# TYPE rocm_probe_x gauge\nrocm_probe_x 1 1700000000000\n",
    )
    .unwrap();
    let body = scrape(&mut exporter, port);
    let (errors, _) = scraped(&body, "node_textfile_scrape_error");
    assert_eq!(errors.get("node_textfile_scrape_error{}"), Some(&1.0));
    assert!(!body.contains("rocm_probe_x"), "{body}");
}
