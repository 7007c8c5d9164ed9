//! Kubernetes integration (`--nfd-features`, `deploy/kubernetes/`), checked offline:
//!
//! - the feature file of every fixture, read by a parser written from NFD's documented format
//!   (`docs/usage/customization-guide.md`, "Feature files") and checked against Kubernetes' label
//!   syntax;
//! - the manifests with `yamllint` (Debian), `kubernetes-validate --strict` (PyPI) and, for the
//!   NodeFeatureRule that `kubernetes-validate` cannot know, Python `jsonschema` against NFD's own
//!   CRD schema (`tests/data/nfd/`);
//! - the Node Problem Detector custom-plugin config against NPD's config fields.
//!
//! The external tools come from `scripts/test` (Debian's `yamllint`; a venv at
//! `$ROCM_PROBE_VENV`, default `/var/tmp/rocm-probe-venv`, with `kubernetes-validate` and
//! `jsonschema`). Without them a test says SKIP on stderr and passes, except under `CI`, where a
//! missing tool fails it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rocm_probe::export::nfd::{self, LABEL_NS};
use rocm_probe::report::Options;
use rocm_probe::{Facts, Report, Source};
use rocm_probe_tests::fixtures;

// ---------------------------------------------------------------------------------------------
// Kubernetes label syntax (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName,
// IsValidLabelValue, IsDNS1123Subdomain), written from the documentation, not from nfd.rs.

/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?` and at most 63 characters.
fn valid_label_value(v: &str) -> bool {
    v.len() <= 63
        && (v.is_empty() || {
            let b = v.as_bytes();
            b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        })
}

/// A DNS-1123 subdomain: at most 253 characters, dot-separated labels of `[a-z0-9-]`, each
/// starting and ending alphanumeric.
fn valid_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// `[prefix/]name`: the name a non-empty label value of at most 63 characters, the prefix a DNS
/// subdomain.
fn valid_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    !name.is_empty() && valid_label_value(name) && prefix.is_none_or(valid_dns_subdomain)
}

// ---------------------------------------------------------------------------------------------
// NFD's feature-file format: `# +expiry-time=<RFC 3339>`, `# +no-label`, `# +no-feature`
// directives; other `#` lines are comments; `<key>[=<value>]`, value `true` when absent. An
// expiry directive covers the lines after it.

#[derive(Debug)]
struct Label {
    key: String,
    value: String,
    /// The expiry in force for this line (seconds since the epoch).
    expires: Option<i64>,
    line: usize,
}

#[derive(Debug, Default)]
struct FeatureFile {
    labels: Vec<Label>,
    errors: Vec<String>,
}

fn parse_feature_file(text: &str) -> FeatureFile {
    let mut out = FeatureFile::default();
    let mut expires = None;
    let mut skip_label = false;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(directive) = line.strip_prefix("# +") {
            let (key, value) = match directive.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (directive, None),
            };
            match (key, value) {
                ("expiry-time", Some(v)) => match parse_rfc3339(v.trim()) {
                    Some(t) => expires = Some(t),
                    None => out.errors.push(format!("line {}: bad expiry {v:?}", i + 1)),
                },
                ("no-label", _) => skip_label = true,
                ("no-feature", _) => {}
                _ => out
                    .errors
                    .push(format!("line {}: unknown directive {line:?}", i + 1)),
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => (line.to_owned(), "true".to_owned()),
        };
        if !std::mem::take(&mut skip_label) {
            out.labels.push(Label {
                key,
                value,
                expires,
                line: i + 1,
            });
        }
    }
    out
}

/// RFC 3339 (`2023-07-29T11:22:33Z`, fraction and numeric offset allowed) to seconds since the
/// epoch.
fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && rest.as_bytes()[3] == b':' => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om): (i64, i64) = (rest[1..3].parse().ok()?, rest[4..6].parse().ok()?);
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    // Howard Hinnant's days_from_civil.
    let (y, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + se - offset)
}

#[test]
fn the_parser_reads_nfds_documented_examples() {
    // docs/usage/customization-guide.md: only feature2 and feature3 survive.
    let doc = "# +expiry-time=2012-07-28T11:22:33Z\nvendor.io/feature1=featureValue\n\n\
               # +expiry-time=2080-07-28T11:22:33Z\nvendor.io/feature2=featureValue2\n\n\
               # +expiry-time=2070-07-28T11:22:33Z\nvendor.io/feature3=featureValue3\n\n\
               # +expiry-time=2002-07-28T11:22:33Z\nvendor.io/feature4=featureValue4\n";
    let f = parse_feature_file(doc);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    let now = parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
    let live: Vec<&str> = f
        .labels
        .iter()
        .filter(|l| l.expires.is_none_or(|e| e > now))
        .map(|l| l.key.as_str())
        .collect();
    assert_eq!(live, ["vendor.io/feature2", "vendor.io/feature3"]);
    let f = parse_feature_file(
        "# This is a comment\nfeature.node.kubernetes.io/my-feature.1\n# +no-label\nfoo=baz\n",
    );
    assert_eq!(f.labels.len(), 1);
    assert_eq!(f.labels[0].value, "true");
    assert_eq!(
        parse_rfc3339("2023-07-29T11:22:33Z"),
        Some(1_690_629_753),
        "the documented example"
    );
    assert_eq!(
        parse_rfc3339("2023-07-29T13:22:33.5+02:00"),
        Some(1_690_629_753)
    );
    assert_eq!(parse_rfc3339("2023-07-29 11:22:33"), None);
    assert!(parse_feature_file("# +expiry-time=tomorrow\n").errors.len() == 1);
    assert!(!valid_qualified_name("a b/c"));
    assert!(!valid_qualified_name(&format!("x/{}", "n".repeat(64))));
    assert!(!valid_label_value("a,b"));
    assert!(valid_label_value(""));
}

// ---------------------------------------------------------------------------------------------
// (a) The feature file of every fixture.

fn now_secs() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

#[test]
fn every_fixture_gives_a_valid_feature_file() {
    let now = now_secs();
    let mut seen_health = BTreeMap::new();
    for (name, dir) in fixtures() {
        let source = Source::fixture(&dir).unwrap();
        let facts = Facts::collect(&source);
        let report = Report::from_facts(&facts, Options::default());
        let text = nfd::features(
            &report,
            &facts,
            SystemTime::now() + Duration::from_secs(3600),
        );
        assert!(
            text.len() <= nfd::MAX_FILE_BYTES,
            "{name}: {} bytes",
            text.len()
        );
        assert!(
            text.starts_with("# +expiry-time="),
            "{name}: the first line is the expiry directive:\n{text}"
        );
        let file = parse_feature_file(&text);
        assert!(file.errors.is_empty(), "{name}: {:?}\n{text}", file.errors);
        assert!(!file.labels.is_empty(), "{name}: no labels\n{text}");
        let mut keys = std::collections::BTreeSet::new();
        for l in &file.labels {
            let at = format!("{name}, line {}: {}={}", l.line, l.key, l.value);
            let expires = l.expires.unwrap_or_else(|| panic!("{at}: no expiry"));
            assert!(
                expires > now && expires <= now + 3600 + 5,
                "{at}: expiry {expires}, now {now}"
            );
            assert!(valid_qualified_name(&l.key), "{at}: invalid label name");
            assert!(valid_label_value(&l.value), "{at}: invalid label value");
            assert!(!l.value.is_empty(), "{at}: empty value");
            let (prefix, _) = l.key.split_once('/').expect("prefixed");
            assert_eq!(prefix, LABEL_NS, "{at}: not in our namespace");
            assert!(keys.insert(l.key.clone()), "{at}: duplicate");
        }
        let health = file
            .labels
            .iter()
            .find(|l| l.key == format!("{LABEL_NS}/health"))
            .unwrap_or_else(|| panic!("{name}: no health label"));
        let want = match report.verdict.status {
            rocm_probe::Status::Fail => "fail",
            rocm_probe::Status::Warn => "warn",
            rocm_probe::Status::Skip => "undetermined",
            _ => "pass",
        };
        assert_eq!(health.value, want, "{name}");
        // The GPU of a one-GPU root cause is named, by number and PCI address, and only then.
        let label = |key: &str| {
            file.labels
                .iter()
                .find(|l| l.key == format!("{LABEL_NS}/{key}"))
                .map(|l| l.value.clone())
        };
        match &report.verdict.root_subject {
            Some(rocm_probe::finding::Subject::Gpu { index, pci_address }) => {
                assert_eq!(label("root-cause-gpu"), Some(index.to_string()), "{name}");
                assert_eq!(
                    label("root-cause-pci-address"),
                    pci_address.as_ref().map(|a| a.replace(':', "_")),
                    "{name}"
                );
                *seen_health.entry("gpu named".to_owned()).or_insert(0) += 1;
            }
            _ => assert_eq!(label("root-cause-gpu"), None, "{name}"),
        }
        *seen_health.entry(health.value.clone()).or_insert(0) += 1;
    }
    // The fixtures cover every verdict.
    assert_eq!(
        seen_health.keys().collect::<Vec<_>>(),
        ["fail", "gpu named", "pass", "undetermined", "warn"]
    );
}

#[test]
fn our_namespace_is_one_nfd_always_accepts() {
    // nfd-master denies kubernetes.io and its sub-namespaces except feature.node.kubernetes.io
    // and its sub-namespaces, which -deny-label-ns cannot deny; amd.com belongs to AMD's
    // labeller.
    assert!(valid_dns_subdomain(LABEL_NS));
    assert!(LABEL_NS.ends_with(".feature.node.kubernetes.io"));
    assert!(!LABEL_NS.contains("amd.com"));
}

#[test]
fn the_file_is_replaced_atomically_with_nothing_visible_left_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocm-probe");
    let report = rocm_probe_tests::report("rocm-6.2-mi210");
    let facts = Facts::collect(
        &Source::fixture(rocm_probe_tests::fixtures_dir().join("rocm-6.2-mi210")).unwrap(),
    );
    for _ in 0..2 {
        let text = nfd::features(&report, &facts, SystemTime::now() + Duration::from_secs(60));
        rocm_probe::source::atomic::write(&path, text.as_bytes()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // NFD reads every file not starting with a dot.
    assert_eq!(
        names
            .iter()
            .filter(|n| !n.starts_with('.'))
            .collect::<Vec<_>>(),
        ["rocm-probe"]
    );
}

// ---------------------------------------------------------------------------------------------
// The external tools.

fn deploy_dir() -> PathBuf {
    rocm_probe_tests::fixtures_dir()
        .parent()
        .unwrap()
        .join("deploy/kubernetes")
}

fn venv() -> PathBuf {
    std::env::var_os("ROCM_PROBE_VENV")
        .map_or_else(|| PathBuf::from("/var/tmp/rocm-probe-venv"), PathBuf::from)
}

/// `path` when it is there; else SKIP (or, under CI, a failure).
fn tool(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} missing at {} under CI: scripts/test installs it",
        path.display()
    );
    eprintln!(
        "SKIP: {what} not found at {} (scripts/test installs it)",
        path.display()
    );
    None
}

fn on_path(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| f.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("/usr/bin").join(name))
}

fn yaml_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// (b) yamllint's default rules, warnings as errors; a committed `.yamllint` would relax them.
#[test]
fn yamllint_passes() {
    let Some(yamllint) = tool(on_path("yamllint"), "yamllint (Debian package yamllint)") else {
        return;
    };
    let config = deploy_dir().join(".yamllint");
    let mut cmd = Command::new(yamllint);
    cmd.arg("--strict");
    if config.is_file() {
        cmd.arg("-c").arg(config);
    } else {
        cmd.args(["-d", "default"]);
    }
    let (ok, text) = run(cmd.args(yaml_files()));
    assert!(ok, "yamllint:\n{text}");
}

const K8S_VERSIONS: [&str; 2] = ["1.29.0", "1.37.0"];

/// (c) Every built-in resource against Kubernetes' own schemas, unknown fields rejected. The
/// NodeFeatureRule is left out: `kubernetes-validate` has no schema for a CRD kind and only
/// warns (exit 0), so it would pass unchecked; (d) checks it.
#[test]
fn kubernetes_validate_strict_passes() {
    let Some(kv) = tool(
        venv().join("bin/kubernetes-validate"),
        "kubernetes-validate (PyPI, in the venv)",
    ) else {
        return;
    };
    let files: Vec<PathBuf> = yaml_files()
        .into_iter()
        .filter(|f| !f.ends_with("nodefeaturerule.yaml"))
        .collect();
    let mut cmd = Command::new(&kv);
    cmd.arg("--strict");
    for v in K8S_VERSIONS {
        cmd.args(["-k", v]);
    }
    let (ok, text) = run(cmd.args(&files));
    assert!(ok, "kubernetes-validate:\n{text}");
    // Every resource was checked: a WARN means a kind without a schema.
    assert!(
        !text.contains("WARN") && !text.contains("ERROR"),
        "kubernetes-validate:\n{text}"
    );
    for resource in ["namespace/rocm-probe", "daemonset/rocm-probe"] {
        for v in K8S_VERSIONS {
            let major_minor = v.rsplit_once('.').unwrap().0;
            assert!(
                text.contains(&format!(
                    "passed for resource {resource} against version {major_minor}"
                )),
                "{resource} {v}:\n{text}"
            );
        }
    }
    // Strictness works: a misspelt field fails.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(deploy_dir().join("daemonset.yaml")).unwrap();
    assert!(text.contains("nodeSelector:"));
    std::fs::write(&bad, text.replace("nodeSelector:", "nodeSelecter:")).unwrap();
    let (ok, out) = run(Command::new(&kv).arg("--strict").arg(&bad));
    assert!(!ok, "a misspelt field passed:\n{out}");
}

/// The Python half of (d): validates every NodeFeatureRule in argv[1] against the schema in
/// argv[2], as committed and with unknown fields forbidden, and prints what the tests compare
/// with the labels: the taints and the label expressions matched, plus the DaemonSet's
/// tolerations and feature-file path from argv[3].
const JSONSCHEMA_CHECK: &str = r#"
import json, sys, copy, yaml, jsonschema

def forbid_unknown(s):
    if isinstance(s, dict):
        if s.get("type") == "object" and "properties" in s and "additionalProperties" not in s:
            s["additionalProperties"] = False
        for v in s.values():
            forbid_unknown(v)
    elif isinstance(s, list):
        for v in s:
            forbid_unknown(v)
    return s

schema = json.load(open(sys.argv[2]))
strict = forbid_unknown(copy.deepcopy(schema))
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
rules = [d for d in docs if d.get("kind") == "NodeFeatureRule"]
assert rules and len(rules) == len(docs), "only NodeFeatureRules expected"
out = {"taints": [], "matches": [], "errors": []}
for doc in rules:
    assert doc["apiVersion"] == "nfd.k8s-sigs.io/v1alpha1", doc["apiVersion"]
    for s in (schema, strict):
        for e in jsonschema.Draft4Validator(s).iter_errors(doc):
            out["errors"].append("%s: %s" % (list(e.path), e.message))
    for rule in doc["spec"]["rules"]:
        out["taints"] += rule.get("taints", [])
        for m in rule.get("matchFeatures", []):
            for k, v in (m.get("matchExpressions") or {}).items():
                out["matches"].append([m["feature"], k, v["op"], v.get("value", [])])
bad = copy.deepcopy(rules[0])
bad["spec"]["rules"][0]["taint"] = bad["spec"]["rules"][0].pop("taints")
out["misspelt_rejected"] = not jsonschema.Draft4Validator(strict).is_valid(bad)
ds = [d for d in yaml.safe_load_all(open(sys.argv[3])) if d and d["kind"] == "DaemonSet"][0]
pod = ds["spec"]["template"]["spec"]
out["tolerations"] = pod.get("tolerations", [])
out["env"] = {e["name"]: e.get("value") for c in pod["containers"] for e in c.get("env", [])}
print(json.dumps(out))
"#;

/// (d) The NodeFeatureRule against NFD's CRD schema, and against our labels and DaemonSet.
#[test]
fn nodefeaturerule_validates_against_nfds_crd_schema() {
    let Some(python) = tool(venv().join("bin/python3"), "the venv's python3") else {
        return;
    };
    let schema = rocm_probe_tests::fixtures_dir()
        .parent()
        .unwrap()
        .join("tests/data/nfd/nodefeaturerule.schema.json");
    let (ok, text) = run(Command::new(python)
        .arg("-c")
        .arg(JSONSCHEMA_CHECK)
        .arg(deploy_dir().join("nodefeaturerule.yaml"))
        .arg(&schema)
        .arg(deploy_dir().join("daemonset.yaml")));
    if !ok && text.contains("No module named") {
        assert!(std::env::var_os("CI").is_none(), "{text}");
        eprintln!("SKIP: jsonschema or PyYAML missing from the venv: {text}");
        return;
    }
    assert!(ok, "{text}");
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["errors"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["misspelt_rejected"], true, "{v:#}");
    // The rule matches the label the feature file writes, on the value `fail`.
    let health = format!("{LABEL_NS}/health");
    assert_eq!(
        v["matches"],
        serde_json::json!([["local.label", health, "In", ["fail"]]]),
        "{v:#}"
    );
    // Its taint is in our namespace (NFD refuses unprefixed and kubernetes.io keys other than
    // feature.node.kubernetes.io's) and has an effect NFD accepts.
    let taints = v["taints"].as_array().unwrap();
    assert_eq!(taints.len(), 1, "{v:#}");
    let key = taints[0]["key"].as_str().unwrap();
    assert_eq!(key, format!("{LABEL_NS}/unhealthy"));
    assert!(valid_qualified_name(key));
    assert!(valid_label_value(taints[0]["value"].as_str().unwrap()));
    assert!(
        ["NoSchedule", "PreferNoSchedule", "NoExecute"]
            .contains(&taints[0]["effect"].as_str().unwrap())
    );
    // The DaemonSet tolerates that taint (else the probe could not clear it) and writes the
    // file where nfd-worker reads it.
    let tolerated = v["tolerations"].as_array().unwrap().iter().any(|t| {
        t["key"] == key
            && (t["operator"] == "Exists" || t["value"] == taints[0]["value"])
            && (t.get("effect").is_none_or(|e| e == &taints[0]["effect"]))
    });
    assert!(tolerated, "{v:#}");
    let path = v["env"]["NFD_FEATURES"].as_str().unwrap();
    assert_eq!(Path::new(path).parent(), Some(Path::new(nfd::FEATURES_DIR)));
    assert!(
        !Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with('.')
    );
}

// ---------------------------------------------------------------------------------------------
// (e) Node Problem Detector's custom-plugin config (NPD pkg/custompluginmonitor/types): exit 0
// OK, 1 NonOK, anything else Unknown; the global timeout defaults to 5 s and a rule's may not
// exceed it.

/// A Go duration of one unit (`5s`, `500ms`, `1m`, `2h`) in milliseconds.
fn go_duration_ms(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = s[..split].parse().ok()?;
    let unit = match &s[split..] {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    Some(n * unit)
}

#[test]
fn npd_custom_plugin_config_has_the_documented_fields() {
    let path = deploy_dir().join("node-problem-detector/rocm-probe-monitor.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let keys =
        |o: &serde_json::Value| -> Vec<String> { o.as_object().unwrap().keys().cloned().collect() };
    let allowed = [
        "plugin",
        "pluginConfig",
        "source",
        "conditions",
        "rules",
        "metricsReporting",
    ];
    for k in keys(&v) {
        assert!(allowed.contains(&k.as_str()), "unknown field {k}");
    }
    assert_eq!(v["plugin"], "custom");
    assert!(!v["source"].as_str().unwrap().is_empty());

    let pc = &v["pluginConfig"];
    let allowed = [
        "invoke_interval",
        "timeout",
        "max_output_length",
        "concurrency",
        "enable_message_change_based_condition_update",
        "skip_initial_status",
    ];
    for k in keys(pc) {
        assert!(
            allowed.contains(&k.as_str()),
            "unknown pluginConfig field {k}"
        );
    }
    let interval = go_duration_ms(pc["invoke_interval"].as_str().unwrap()).unwrap();
    let timeout = go_duration_ms(pc["timeout"].as_str().unwrap_or("5s")).unwrap();
    assert!(interval > 0 && timeout <= interval, "{pc}");
    assert!(pc["concurrency"].as_u64().unwrap() >= 1);
    let max_output = pc["max_output_length"].as_u64().unwrap();

    let conditions: Vec<&str> = v["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            for f in ["type", "reason", "message"] {
                assert!(!c[f].as_str().unwrap().is_empty(), "{c}: {f}");
            }
            c["type"].as_str().unwrap()
        })
        .collect();
    let rules = v["rules"].as_array().unwrap();
    assert!(!rules.is_empty());
    let allowed = [
        "type",
        "condition",
        "reason",
        "path",
        "args",
        "timeout",
        "invoke_interval",
    ];
    for r in rules {
        for k in keys(r) {
            assert!(allowed.contains(&k.as_str()), "unknown rule field {k}");
        }
        let kind = r["type"].as_str().unwrap();
        assert!(kind == "temporary" || kind == "permanent", "{r}");
        if kind == "permanent" {
            assert!(
                conditions.contains(&r["condition"].as_str().unwrap()),
                "a permanent rule needs a default condition: {r}"
            );
        }
        assert!(!r["reason"].as_str().unwrap().is_empty());
        assert!(r["path"].as_str().unwrap().starts_with('/'), "{r}");
        if let Some(t) = r["timeout"].as_str() {
            assert!(
                go_duration_ms(t).unwrap() <= timeout,
                "rule timeout above the global one"
            );
        }
        // `report --summary`: one line, exit 0 healthy / 1 failing / 2 the probe could not
        // run, which is NPD's OK / NonOK / Unknown.
        let args: Vec<&str> = r["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args.first(), Some(&"report"), "{r}");
        assert!(args.contains(&"--summary"), "{r}");
        assert!(!args.contains(&"--active"), "the plugin stays passive: {r}");
        // NPD cuts the message at max_output_length bytes; a line of `width` characters of up
        // to 4 UTF-8 bytes each must fit, or NPD could cut inside a character.
        let width: u64 = args
            .iter()
            .position(|a| *a == "--summary-width")
            .map_or(80, |i| args[i + 1].parse().unwrap());
        assert!(
            4 * width <= max_output,
            "{width} characters vs {max_output} bytes"
        );
    }
}
