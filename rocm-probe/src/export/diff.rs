//! `rocm-probe diff A.json B.json`: what differs between two nodes' reports (`report --json`) —
//! hardware, firmware, versions, partition modes, the verdict and the findings.
//!
//! Works on the JSON documents, so reports from other machines, other times and other versions
//! of the probe can be compared (schema versions 1 and 2, read as 2 through
//! [`crate::report::compat`]): the configuration (`facts.config`) field by field, the GPUs
//! (`facts.gpus`) by index, findings by id and status (their wording and evidence name paths and
//! addresses that differ between any two nodes). Values keep their JSON types.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::msg;

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// `hardware`, `firmware`, `versions`, `partition`, `verdict` or `findings`.
    pub area: &'static str,
    /// Where (`gpus[3].memory_bytes`, `finding hardware.partition-missing`).
    pub path: String,
    /// The value in the first report, as typed there; `None` (JSON `null`) when absent or
    /// `null` there.
    pub a: Option<Value>,
    /// The value in the second report.
    pub b: Option<Value>,
}

/// A value as one line of text: strings without quotes, everything else as JSON.
pub fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// All differences, in area order then path order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// The fingerprints of the two reports.
    pub fingerprints: [Option<String>; 2],
    /// The differences.
    pub differences: Vec<Difference>,
}

/// Why two documents could not be compared.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DiffError(String);

fn area_of(path: &str) -> &'static str {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    match leaf {
        "vbios" | "mec_firmware" | "sdma_firmware" => "firmware",
        _ if path.contains(".firmware.") => "firmware",
        "compute_partition" | "memory_partition" => "partition",
        "kernel" | "amdgpu" | "rocm" => "versions",
        _ if path.starts_with("libraries") => "versions",
        _ => "hardware",
    }
}

/// Flattens the configuration into `path → value` (the fingerprint left out: it is shown on
/// its own).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if prefix.is_empty() && k == "fingerprint" {
                    continue;
                }
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_owned(), other.clone());
        }
    }
}

/// The `schema_version`s this version reads.
pub const SCHEMA_VERSIONS: [u64; 2] = crate::report::output::READABLE_VERSIONS;

const STATUSES: [&str; 5] = ["skip", "pass", "info", "warn", "fail"];

/// Refuses a document that is not a report this version can read, naming what is wrong, so
/// that garbage is never compared as if it were a healthy node.
fn check_report(v: &Value, which: &str) -> Result<(), DiffError> {
    let fail = |why: String| Err(DiffError(msg!("diff.not-a-report", which, why)));
    if !v.is_object() || v.get("verdict").is_none() || v.get("findings").is_none() {
        return fail(msg!("diff.no-verdict-findings"));
    }
    match v.get("schema_version") {
        None => return fail(msg!("diff.no-schema-version")),
        Some(n) if n.as_u64().is_some_and(|n| SCHEMA_VERSIONS.contains(&n)) => {}
        Some(n) => {
            return fail(msg!(
                "diff.schema-version-unsupported",
                version = crate::source::escape::text(&n.to_string()),
                supported = "1, 2"
            ));
        }
    }
    if v["verdict"]["status"]
        .as_str()
        .is_none_or(|s| !STATUSES.contains(&s))
    {
        return fail(msg!("diff.verdict-status"));
    }
    let Some(findings) = v["findings"].as_array() else {
        return fail(msg!("diff.findings-not-array"));
    };
    for (index, f) in findings.iter().enumerate() {
        if !f.is_object() {
            return fail(msg!("diff.finding-not-object", index));
        }
        if f["id"].as_str().is_none() {
            return fail(msg!("diff.finding-id", index));
        }
        if f["status"].as_str().is_none_or(|s| !STATUSES.contains(&s)) {
            return fail(msg!("diff.finding-status", index));
        }
    }
    Ok(())
}

/// Compares two `report --json` documents.
pub fn diff(a: &Value, b: &Value) -> Result<Diff, DiffError> {
    check_report(a, &msg!("diff.first-file"))?;
    check_report(b, &msg!("diff.second-file"))?;
    let (mut a, mut b) = (a.clone(), b.clone());
    crate::report::compat::upgrade(&mut a);
    crate::report::compat::upgrade(&mut b);
    let (a, b) = (&a, &b);
    let mut out = Diff {
        fingerprints: [a, b].map(|d| {
            d.pointer("/facts/config/fingerprint")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        differences: Vec::new(),
    };
    let mut push = |area, path: String, x: Option<Value>, y: Option<Value>| {
        let (x, y) = (x.filter(|v| !v.is_null()), y.filter(|v| !v.is_null()));
        if x != y {
            out.differences.push(Difference {
                area,
                path,
                a: x,
                b: y,
            });
        }
    };
    // Counts and targets, then the configuration.
    for key in ["gpu_count", "agent_count", "targets"] {
        let get = |d: &Value| d.pointer(&format!("/facts/{key}")).cloned();
        push("hardware", key.to_owned(), get(a), get(b));
    }
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    for (d, f) in [(a, &mut fa), (b, &mut fb)] {
        if let Some(c) = d.pointer("/facts/config") {
            flatten("", c, f);
        }
        if let Some(g) = d.pointer("/facts/gpus") {
            flatten("gpus", g, f);
        }
    }
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    for k in keys {
        // The index repeats the position; the address differs on any two nodes of a fleet.
        if k.ends_with(".index") {
            continue;
        }
        push(
            area_of(k),
            k.clone(),
            fa.get(k).cloned(),
            fb.get(k).cloned(),
        );
    }
    for key in ["status", "root_cause"] {
        let get = |d: &Value| d.pointer(&format!("/verdict/{key}")).cloned();
        push("verdict", key.to_owned(), get(a), get(b));
    }
    let findings = |d: &Value| -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for f in d["findings"].as_array().into_iter().flatten() {
            if let (Some(id), Some(status)) = (f["id"].as_str(), f["status"].as_str()) {
                // The same id several times (one per install or library): the worst counts.
                let e = m.entry(id.to_owned()).or_insert_with(|| status.to_owned());
                if rank(status) > rank(e) {
                    *e = status.to_owned();
                }
            }
        }
        m
    };
    let (ga, gb) = (findings(a), findings(b));
    let ids: std::collections::BTreeSet<&String> = ga.keys().chain(gb.keys()).collect();
    for id in ids {
        push(
            "findings",
            id.clone(),
            ga.get(id).cloned().map(Value::String),
            gb.get(id).cloned().map(Value::String),
        );
    }
    let order = |area: &str| {
        [
            "verdict",
            "hardware",
            "firmware",
            "partition",
            "versions",
            "findings",
        ]
        .iter()
        .position(|a| *a == area)
        .unwrap_or(9)
    };
    out.differences
        .sort_by_key(|x| (order(x.area), natural(&x.path)));
    Ok(out)
}

fn rank(status: &str) -> u8 {
    match status {
        "fail" => 4,
        "warn" => 3,
        "info" => 2,
        "pass" => 1,
        _ => 0,
    }
}

/// Paths with their numbers compared as numbers (`gpus[10]` after `gpus[9]`).
fn natural(path: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in path.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(
                num.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(gpus: u64, cu: u64, status: &str, findings: Value) -> Value {
        json!({
            "schema_version": 2,
            "verdict": {"status": status, "root_cause": null},
            "facts": {"gpu_count": gpus, "agent_count": gpus, "targets": ["gfx942"],
                      "gpus": [{"index": 0, "compute_units": cu, "vbios": "a",
                                "device_id": "0x74a1"}],
                      "config": {"rocm": "6.2.0", "libraries": {"rocblas": "4.2"},
                                 "fingerprint": format!("f{cu}")}},
            "findings": findings,
        })
    }

    /// The same report as schema version 1 wrote it.
    fn version_1(v2: &Value) -> Value {
        let mut v = v2.clone();
        v["schema_version"] = json!(1);
        let facts = v["facts"].as_object_mut().unwrap();
        let mut gpus = facts.remove("gpus").unwrap();
        gpus[0]["device_id"] = json!(0x74a1);
        facts.insert("gpus".into(), facts["gpu_count"].clone());
        facts.insert("agents".into(), facts["agent_count"].clone());
        facts.remove("gpu_count");
        facts.remove("agent_count");
        facts["config"]["gpus"] = gpus;
        v
    }

    #[test]
    fn a_report_against_itself_is_empty() {
        let a = report(
            8,
            304,
            "pass",
            json!([{"id": "hardware.gpus-found", "status": "pass"}]),
        );
        let d = diff(&a, &a).unwrap();
        assert!(d.differences.is_empty());
        assert_eq!(d.fingerprints, [Some("f304".into()), Some("f304".into())]);
    }

    #[test]
    fn differences_are_named_by_area_and_path() {
        let a = report(8, 304, "pass", json!([{"id": "x.a", "status": "pass"}]));
        let b = report(8, 80, "warn", json!([{"id": "x.b", "status": "warn"}]));
        let d = diff(&a, &b).unwrap();
        let got: Vec<(&str, &str, Option<Value>, Option<Value>)> = d
            .differences
            .iter()
            .map(|x| (x.area, x.path.as_str(), x.a.clone(), x.b.clone()))
            .collect();
        let expected = [
            (
                "verdict",
                "status",
                Some(json!("pass")),
                Some(json!("warn")),
            ),
            (
                "hardware",
                "gpus[0].compute_units",
                Some(json!(304)),
                Some(json!(80)),
            ),
            ("findings", "x.a", Some(json!("pass")), None),
            ("findings", "x.b", None, Some(json!("warn"))),
        ];
        assert_eq!(got, expected);
        // A node on schema version 1 against one on 2: the same differences, typed alike.
        let d = diff(&version_1(&a), &b).unwrap();
        let got: Vec<_> = d
            .differences
            .iter()
            .map(|x| (x.area, x.path.as_str(), x.a.clone(), x.b.clone()))
            .collect();
        assert_eq!(got, expected);
        assert!(diff(&version_1(&a), &a).unwrap().differences.is_empty());
    }

    #[test]
    fn a_missing_root_cause_is_null_not_a_string() {
        let a = report(1, 1, "pass", json!([]));
        let mut b = a.clone();
        b["verdict"]["root_cause"] = json!("driver.amdgpu-not-loaded");
        let d = diff(&a, &b).unwrap();
        let x = &d.differences[0];
        assert_eq!(
            (x.a.clone(), x.b.clone()),
            (None, Some(json!("driver.amdgpu-not-loaded")))
        );
        let text = serde_json::to_value(x).unwrap();
        assert_eq!(text["a"], Value::Null);
    }

    #[test]
    fn firmware_components_are_firmware() {
        let mut a = report(1, 1, "pass", json!([]));
        let mut b = a.clone();
        a["facts"]["gpus"][0]["firmware"] = json!({"mes": "0x00000080", "smc": "0x1"});
        b["facts"]["gpus"][0]["firmware"] = json!({"mes": "0x00000083", "smc": "0x1"});
        let d = diff(&a, &b).unwrap();
        assert_eq!(d.differences.len(), 1, "{:?}", d.differences);
        let x = &d.differences[0];
        assert_eq!(
            (x.area, x.path.as_str(), x.a.clone(), x.b.clone()),
            (
                "firmware",
                "gpus[0].firmware.mes",
                Some(json!("0x00000080")),
                Some(json!("0x00000083"))
            )
        );
    }

    #[test]
    fn something_else_is_an_error() {
        assert!(diff(&json!({"agents": []}), &json!({})).is_err());
    }

    fn error(b: &Value) -> String {
        let a = report(1, 1, "pass", json!([]));
        diff(&a, b).unwrap_err().to_string()
    }

    #[test]
    fn unsupported_versions_and_garbage_findings_are_errors_that_say_why() {
        let mut v = report(1, 1, "pass", json!([]));
        v["schema_version"] = json!(99);
        assert!(error(&v).contains("schema_version 99"), "{}", error(&v));
        v["schema_version"] = json!(1);
        assert!(diff(&v, &v).is_ok());
        v.as_object_mut().unwrap().remove("schema_version");
        assert!(error(&v).contains("no schema_version"), "{}", error(&v));
        for (findings, says) in [
            (json!("garbage"), "not an array"),
            (json!([1]), "findings[0] is not an object"),
            (
                json!([{"status": "pass"}]),
                "findings[0] has no string `id`",
            ),
            (
                json!([{"id": "x.y", "status": 3}]),
                "findings[0] has no valid `status`",
            ),
        ] {
            let v = report(1, 1, "pass", findings);
            assert!(error(&v).contains(says), "{}", error(&v));
            assert!(error(&v).starts_with("the second file"), "{}", error(&v));
        }
        let v = report(1, 1, "great", json!([]));
        assert!(error(&v).contains("verdict"), "{}", error(&v));
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["gpus[10].x", "gpus[9].x", "gpus[1].x"];
        v.sort_by_key(|p| natural(p));
        assert_eq!(v, ["gpus[1].x", "gpus[9].x", "gpus[10].x"]);
    }
}
