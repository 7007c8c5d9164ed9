//! `rocm-probe diff A.json B.json`: what differs between two nodes' reports (`report --json`) —
//! hardware, firmware, versions, partition modes, the verdict and the findings.
//!
//! Works on the JSON documents, so reports from other machines, other times and other versions
//! of the probe can be compared: the configuration (`facts.config`) field by field, the GPUs by
//! index, findings by id and status (their wording and evidence name paths and addresses that
//! differ between any two nodes).

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
    /// The value in the first report; `None` when absent there.
    pub a: Option<String>,
    /// The value in the second report.
    pub b: Option<String>,
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

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

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
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
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
            out.insert(prefix.to_owned(), text(other));
        }
    }
}

/// The `schema_version`s this version reads: its own, and the next one, whose documents only
/// add fields.
pub const SCHEMA_VERSIONS: [u64; 2] = [1, 2];

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
    let mut out = Diff {
        fingerprints: [a, b].map(|d| {
            d.pointer("/facts/config/fingerprint")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        differences: Vec::new(),
    };
    let mut push = |area, path: String, x: Option<String>, y: Option<String>| {
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
    for key in ["gpus", "agents", "targets"] {
        let get = |d: &Value| d.pointer(&format!("/facts/{key}")).map(text);
        push("hardware", key.to_owned(), get(a), get(b));
    }
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    if let Some(c) = a.pointer("/facts/config") {
        flatten("", c, &mut fa);
    }
    if let Some(c) = b.pointer("/facts/config") {
        flatten("", c, &mut fb);
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
        let get = |d: &Value| d.pointer(&format!("/verdict/{key}")).map(text);
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
            ga.get(id).cloned(),
            gb.get(id).cloned(),
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
            "schema_version": 1,
            "verdict": {"status": status, "root_cause": null},
            "facts": {"gpus": gpus, "agents": gpus, "targets": ["gfx942"],
                      "config": {"gpus": [{"index": 0, "compute_units": cu, "vbios": "a"}],
                                 "rocm": "6.2.0", "libraries": {"rocblas": "4.2"},
                                 "fingerprint": format!("f{cu}")}},
            "findings": findings,
        })
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
        let got: Vec<(&str, &str, Option<&str>, Option<&str>)> = d
            .differences
            .iter()
            .map(|x| (x.area, x.path.as_str(), x.a.as_deref(), x.b.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("verdict", "status", Some("pass"), Some("warn")),
                ("hardware", "gpus[0].compute_units", Some("304"), Some("80")),
                ("findings", "x.a", Some("pass"), None),
                ("findings", "x.b", None, Some("warn")),
            ]
        );
    }

    #[test]
    fn firmware_components_are_firmware() {
        let mut a = report(1, 1, "pass", json!([]));
        let mut b = a.clone();
        a["facts"]["config"]["gpus"][0]["firmware"] = json!({"mes": "0x00000080", "smc": "0x1"});
        b["facts"]["config"]["gpus"][0]["firmware"] = json!({"mes": "0x00000083", "smc": "0x1"});
        let d = diff(&a, &b).unwrap();
        assert_eq!(d.differences.len(), 1, "{:?}", d.differences);
        let x = &d.differences[0];
        assert_eq!(
            (x.area, x.path.as_str(), x.a.as_deref(), x.b.as_deref()),
            (
                "firmware",
                "gpus[0].firmware.mes",
                Some("0x00000080"),
                Some("0x00000083")
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
        v["schema_version"] = json!(2);
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
