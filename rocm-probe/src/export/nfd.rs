//! Kubernetes Node Feature Discovery: the local-source feature file (`--nfd-features PATH`).
//!
//! nfd-worker's `local` source reads every file in
//! `/etc/kubernetes/node-feature-discovery/features.d/` that does not start with a dot, one
//! `<name>[=<value>]` per line; `#` starts a comment and `# +expiry-time=<RFC 3339>` is a
//! directive: the lines after it are dropped once that time has passed (NFD
//! `docs/usage/customization-guide.md`, "Feature files"; `source/local/local.go`). The file is
//! replaced atomically through a dot-file in the same directory, which NFD skips.
//!
//! Every label is in [`LABEL_NS`], a sub-namespace of `feature.node.kubernetes.io`: nfd-master
//! accepts it under any `-deny-label-ns` (its docs: that namespace and its sub-namespaces "are
//! always allowed and cannot be denied"), and it is not `amd.com/` or `beta.amd.com/`, whose
//! `gpu.*` labels AMD's node labeller deletes and rewrites. Values are Kubernetes label values
//! (at most 63 characters of `[A-Za-z0-9._-]`, alphanumeric at both ends): numbers are plain
//! integers so node affinity's `Gt`/`Lt` can compare them.
//!
//! | label | value |
//! |---|---|
//! | `health` | `pass`, `warn` or `fail`: the verdict; `undetermined` when no GPU could be checked |
//! | `root-cause` | the root-cause finding id (`driver.kfd-permission-denied`); absent when healthy |
//! | `root-cause-gpu` | when the root cause is one GPU's: its number (`GPU n` in the report) |
//! | `root-cause-pci-address` | and its PCI address, `:` made `_` (`0000_63_00.0`) |
//! | `gpu-count` | physical GPUs |
//! | `agent-count` | GPU agents (KFD GPU nodes: partitions on a partitioned GPU) |
//! | `gfx` | the distinct gfx targets in node order, joined by `_` (`gfx942`, `gfx1100_gfx1036`) |
//! | `gfx.<target>` | `true` for each distinct target, for selectors on mixed nodes |
//! | `vram-gib` | the smallest local memory of any GPU agent, GiB rounded down |
//! | `rocm-version` | the ROCm release a process would load (`6.2.0`, or `6.2` from a soname) |
//! | `compute-partition` | `SPX`, `DPX`, `TPX`, `QPX`, `CPX` (or `mixed`) |
//! | `memory-partition` | `NPS1`, `NPS4`, … (or `mixed`) |
//! | `probe-version` | the version of rocm-probe that wrote the file |
//!
//! The compute partition mode is amdgpu's `current_compute_partition` when the drm device has
//! one; otherwise it is derived from the KFD nodes of each physical GPU: one node with several
//! compute dies (XCCs) is `SPX`, several nodes of one XCC each are `CPX`, and 2/3/4 nodes of
//! several XCCs are `DPX`/`TPX`/`QPX`. A GPU with one node of one XCC (every GPU before MI300)
//! has no mode and adds none. The memory partition mode is only ever read, never derived.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::facts::Facts;
use crate::finding::Status;
use crate::report::Report;

/// The namespace (prefix) of every label the feature file sets.
pub const LABEL_NS: &str = "rocm-probe.feature.node.kubernetes.io";

/// Where nfd-worker reads feature files.
pub const FEATURES_DIR: &str = "/etc/kubernetes/node-feature-discovery/features.d";

/// Longest label value, and longest label name after the prefix (Kubernetes).
pub const MAX_LABEL: usize = 63;

/// NFD ignores a feature file larger than this (`MaxFeatureFileSize`).
pub const MAX_FILE_BYTES: usize = 65536;

/// The feature file's text; `expires` is when NFD should drop the labels.
pub fn features(report: &Report, facts: &Facts, expires: SystemTime) -> String {
    let mut out = format!("# +expiry-time={}\n", rfc3339(expires));
    out.push_str(&format!(
        "# rocm-probe {}: {}\n",
        env!("CARGO_PKG_VERSION"),
        report.summary(200)
    ));
    for (name, value) in labels(report, facts) {
        out.push_str(&format!("{LABEL_NS}/{name}={value}\n"));
    }
    out
}

/// The labels, names without the namespace, in a fixed order. Every name is a valid label name
/// and every value a valid, non-empty label value; one that would be empty is left out.
pub fn labels(report: &Report, facts: &Facts) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let health = match report.verdict.status {
        Status::Fail => "fail",
        Status::Warn => "warn",
        Status::Skip => "undetermined",
        _ => "pass",
    };
    out.push(("health".to_owned(), health.to_owned()));
    if let Some(id) = report.verdict.root_cause {
        out.push(("root-cause".to_owned(), id.to_owned()));
    }
    if let Some(crate::finding::Subject::Gpu { index, pci_address }) = &report.verdict.root_subject
    {
        out.push(("root-cause-gpu".to_owned(), index.to_string()));
        if let Some(address) = pci_address {
            out.push(("root-cause-pci-address".to_owned(), address.clone()));
        }
    }
    let inv = facts.inventory.as_ref();
    out.push((
        "gpu-count".to_owned(),
        inv.map_or(0, |i| i.gpus.len()).to_string(),
    ));
    out.push((
        "agent-count".to_owned(),
        inv.map_or(0, |i| i.gpu_agents().count()).to_string(),
    ));
    if let Some(inv) = inv {
        let mut targets: Vec<String> = Vec::new();
        for a in inv.gpu_agents() {
            if let Some(g) = a.gfx.map(|g| g.name()) {
                if !targets.contains(&g) {
                    targets.push(g);
                }
            }
        }
        if !targets.is_empty() {
            out.push(("gfx".to_owned(), targets.join("_")));
        }
        for t in &targets {
            out.push((format!("gfx.{t}"), "true".to_owned()));
        }
        if let Some(min) = inv.gpu_agents().filter_map(|a| a.memory_bytes).min() {
            out.push(("vram-gib".to_owned(), (min >> 30).to_string()));
        }
    }
    if let Some(v) = facts.installs.effective().and_then(|i| i.version) {
        out.push(("rocm-version".to_owned(), v.to_string()));
    }
    if let Some(mode) = crate::facts::config::partition_mode(facts, true) {
        out.push(("compute-partition".to_owned(), mode));
    }
    if let Some(mode) = crate::facts::config::partition_mode(facts, false) {
        out.push(("memory-partition".to_owned(), mode));
    }
    out.push((
        "probe-version".to_owned(),
        env!("CARGO_PKG_VERSION").to_owned(),
    ));
    out.into_iter()
        .filter_map(|(name, value)| {
            let value = label_value(&value);
            (is_label_name(&name) && !value.is_empty()).then_some((name, value))
        })
        .collect()
}

/// Turns any text into a valid Kubernetes label value: characters outside `[A-Za-z0-9._-]`
/// become `_` (a run of them one `_`), then the ends are trimmed to alphanumerics and the
/// result cut to 63 characters. The empty string is valid, but the feature file leaves such a
/// label out (`name` alone would mean `true`).
pub fn label_value(raw: &str) -> String {
    let mut mapped = String::with_capacity(raw.len().min(4 * MAX_LABEL));
    let mut replaced = false;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            mapped.push(c);
            replaced = false;
        } else if !replaced {
            mapped.push('_');
            replaced = true;
        }
    }
    let start = mapped.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let cut = &start[..start.len().min(MAX_LABEL)];
    cut.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

/// Whether `value` is a valid label value: at most 63 characters of `[A-Za-z0-9._-]`, starting
/// and ending alphanumeric, or empty.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_label_name(value)
}

/// Whether `name` is a valid label name (the part after the prefix): 1–63 characters of
/// `[A-Za-z0-9._-]`, starting and ending alphanumeric.
pub fn is_label_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_LABEL
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// `time` in UTC as RFC 3339 to the second (`2026-07-29T11:22:33Z`), the form NFD's
/// `expiry-time` directive parses. Times before 1970 give the epoch; after 9999 the last second
/// of 9999.
pub fn rfc3339(time: SystemTime) -> String {
    const MAX: u64 = 253_402_300_799; // 9999-12-31T23:59:59Z
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .min(MAX);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar (Howard
/// Hinnant's `civil_from_days`, for non-negative day counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Options;
    use crate::source::Source;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(at(0)), "1970-01-01T00:00:00Z");
        // NFD's documented example.
        assert_eq!(rfc3339(at(1_690_629_753)), "2023-07-29T11:22:33Z");
        // A leap day and the turn of a century that is a leap year.
        assert_eq!(rfc3339(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(at(4_107_542_399)), "2100-02-28T23:59:59Z");
        assert_eq!(rfc3339(at(4_107_542_400)), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(at(u64::MAX / 2)), "9999-12-31T23:59:59Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00Z"
        );
    }

    #[test]
    fn sanitizer_gives_valid_values_for_hostile_input() {
        let long = "a".repeat(100);
        let cases = [
            ("pass", "pass"),
            ("6.2.0", "6.2.0"),
            (
                "driver.kfd-permission-denied",
                "driver.kfd-permission-denied",
            ),
            ("two words, and a comma", "two_words_and_a_comma"),
            ("gfx90a:sramecc+:xnack-", "gfx90a_sramecc_xnack"),
            ("", ""),
            ("   ", ""),
            ("---", ""),
            ("Ünïcödé ✓ GPU", "n_c_d_GPU"),
            ("\u{1F600}", ""),
            ("-_.x._-", "x"),
            ("a\nb=c#d", "a_b_c_d"),
        ];
        for (raw, want) in cases {
            let got = label_value(raw);
            assert_eq!(got, want, "{raw:?}");
            assert!(is_label_value(&got), "{raw:?} -> {got:?}");
        }
        let got = label_value(&long);
        assert_eq!(got.len(), 63);
        // Cut at 63 where the 63rd character is not alphanumeric: trimmed further.
        let got = label_value(&format!("{}-x", "b".repeat(62)));
        assert_eq!(got, "b".repeat(62));
        let got = label_value(&format!("{}é{}", "c".repeat(10), "d".repeat(80)));
        assert!(is_label_value(&got) && got.len() == 63, "{got}");
    }

    #[test]
    fn label_validators() {
        for ok in ["a", "gfx.gfx942", "A-b_c.9", &"x".repeat(63)] {
            assert!(is_label_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "a,b", "a/b", "é", &"x".repeat(64)] {
            assert!(!is_label_name(bad), "{bad}");
        }
        assert!(is_label_value(""));
    }

    fn file_of(fixture: &str) -> (String, Vec<(String, String)>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(fixture);
        let source = Source::fixture(&dir).unwrap();
        let facts = Facts::collect(&source);
        let report = Report::from_facts(&facts, Options::default());
        (
            features(&report, &facts, at(1_690_629_753)),
            labels(&report, &facts),
        )
    }

    fn get<'a>(labels: &'a [(String, String)], name: &str) -> Option<&'a str> {
        labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn file_starts_with_the_expiry_directive_and_prefixes_every_label() {
        let (text, labels) = file_of("kfd-permission-denied");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("# +expiry-time=2023-07-29T11:22:33Z"));
        assert!(lines.next().unwrap().starts_with("# rocm-probe "));
        let body: Vec<&str> = lines.collect();
        assert_eq!(body.len(), labels.len());
        for line in body {
            assert!(line.starts_with(&format!("{LABEL_NS}/")), "{line}");
        }
        assert_eq!(get(&labels, "health"), Some("fail"));
        assert_eq!(
            get(&labels, "root-cause"),
            Some("driver.kfd-permission-denied")
        );
    }

    #[test]
    fn healthy_mi210_node() {
        let (_, labels) = file_of("rocm-6.2-mi210");
        assert_eq!(get(&labels, "health"), Some("pass"));
        assert_eq!(get(&labels, "root-cause"), None);
        assert_eq!(get(&labels, "gpu-count"), Some("8"));
        assert_eq!(get(&labels, "agent-count"), Some("8"));
        assert_eq!(get(&labels, "gfx"), Some("gfx90a"));
        assert_eq!(get(&labels, "gfx.gfx90a"), Some("true"));
        assert_eq!(get(&labels, "rocm-version"), Some("6.2.0"));
        // gfx90a has one XCC and no partition modes.
        assert_eq!(get(&labels, "compute-partition"), None);
    }

    #[test]
    fn cpx_modes_are_derived_from_the_nodes() {
        // 8 GPUs, the last with 7 of its 8 partitions: still one XCC each.
        let (_, labels) = file_of("mi300x-cpx-8gpu");
        assert_eq!(get(&labels, "compute-partition"), Some("CPX"));
        assert_eq!(get(&labels, "gpu-count"), Some("8"));
        assert_eq!(get(&labels, "agent-count"), Some("63"));
        assert_eq!(get(&labels, "health"), Some("warn"));
        let (_, labels) = file_of("mi308x-cpx-8gpu");
        assert_eq!(get(&labels, "compute-partition"), Some("CPX"));
        assert_eq!(get(&labels, "vram-gib"), Some("47"));
    }

    #[test]
    fn no_gpu_is_fail_with_zero_counts() {
        let (_, labels) = file_of("no-amdgpu");
        assert_eq!(get(&labels, "health"), Some("fail"));
        assert_eq!(get(&labels, "gpu-count"), Some("0"));
        assert_eq!(get(&labels, "gfx"), None);
    }

    #[test]
    fn mixed_targets_are_joined_and_listed_one_by_one() {
        let (_, labels) = file_of("igpu-beside-dgpu");
        let gfx = get(&labels, "gfx").unwrap();
        assert!(gfx.contains('_'), "{gfx}");
        for t in gfx.split('_') {
            assert_eq!(get(&labels, &format!("gfx.{t}")), Some("true"), "{t}");
        }
    }
}
