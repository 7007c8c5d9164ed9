//! A report agrees with itself, over every fixture: the verdict names a finding that is there,
//! every "caused by" and every layer note names a finding present and lower, a GPU has one name
//! throughout, the header counts the GPUs layer 1 found, and the advice a reader is given first
//! has no line twice.

use std::collections::BTreeMap;

use rocm_probe::finding::{Status, Subject};
use rocm_probe_tests::reports;

/// Every `GPU <n> (<address>` in `text`: the display name's index and PCI address.
fn gpu_names(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("GPU ") {
        rest = &rest[at + 4..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(index) = digits.parse::<usize>() else {
            continue;
        };
        let Some(after) = rest[digits.len()..].strip_prefix(" (") else {
            continue;
        };
        let address: String = after
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() || *c == ':' || *c == '.')
            .collect();
        if address.matches(':').count() == 2 {
            found.push((index, address));
        }
    }
    found
}

#[test]
fn the_verdict_names_a_finding_of_the_report_with_its_layer_and_the_worst_status() {
    for (name, r) in reports() {
        let worst = r.findings.iter().map(|f| f.status).max();
        match r.verdict.root_cause {
            Some(id) => {
                let f = r
                    .findings
                    .iter()
                    .find(|f| f.id == id)
                    .unwrap_or_else(|| panic!("{name}: root {id} is not in the report"));
                assert_eq!(r.verdict.root_layer, f.layer.number(), "{name}");
                if r.verdict.status != Status::Skip {
                    assert_eq!(Some(r.verdict.status), worst, "{name}");
                }
            }
            None => assert!(
                r.verdict.status == Status::Skip || worst < Some(Status::Warn),
                "{name}: no root cause beside a {worst:?}"
            ),
        }
    }
}

#[test]
fn every_cause_named_is_present_and_every_layer_note_names_a_lower_failure() {
    for (name, r) in reports() {
        for f in &r.findings {
            if let Some(c) = f.caused_by {
                assert!(
                    r.findings.iter().any(|x| x.id == c),
                    "{name}: {} is caused by {c}, which is not in the report",
                    f.id
                );
                assert_ne!(c, f.id, "{name}");
            }
        }
        for l in &r.layers {
            if let Some(c) = l.consequence_of {
                let cause = r.findings.iter().find(|x| x.id == c).unwrap_or_else(|| {
                    panic!("{name}: layer {} follows from absent {c}", l.number)
                });
                assert_eq!(cause.status, Status::Fail, "{name}: {c}");
                assert!(cause.layer.number() < l.number, "{name}: {c}");
            }
        }
    }
}

#[test]
fn a_gpu_has_one_name_throughout_a_report() {
    let mut named = 0;
    for (name, r) in reports() {
        let mut by_index: BTreeMap<usize, String> = BTreeMap::new();
        let mut by_address: BTreeMap<String, usize> = BTreeMap::new();
        let texts = r.findings.iter().flat_map(|f| {
            std::iter::once(f.summary.as_str())
                .chain(f.remedy.as_deref())
                .chain(f.evidence.iter().filter_map(|e| e.value.as_deref()))
        });
        for text in texts {
            for (index, address) in gpu_names(text) {
                named += 1;
                let a = by_index.entry(index).or_insert_with(|| address.clone());
                assert_eq!(*a, address, "{name}: GPU {index} has two addresses: {text}");
                let i = by_address.entry(address.clone()).or_insert(index);
                assert_eq!(*i, index, "{name}: {address} has two indices: {text}");
            }
        }
        // A finding about one GPU names it as the report does.
        for f in &r.findings {
            if let Some(Subject::Gpu {
                index,
                pci_address: Some(address),
            }) = &f.subject
            {
                assert!(
                    f.summary.contains(&format!("GPU {index} ({address}")),
                    "{name}: {}: {}",
                    f.id,
                    f.summary
                );
            }
        }
    }
    assert!(
        named > 20,
        "only {named} GPU names seen: the scanner is broken"
    );
}

#[test]
fn the_advice_given_first_has_no_line_twice() {
    for (name, r) in reports() {
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for f in r.advice() {
            if let Some(remedy) = f.remedy.as_deref()
                && let Some(first) = seen.insert(remedy, f.id)
            {
                panic!(
                    "{name}: {} and {first} give the same remedy: {remedy}",
                    f.id
                );
            }
        }
    }
}

/// The header's GPU count (HTML "GPUs: n physical", JSON `facts.gpu_count`) is layer 1's: one piece
/// of evidence per physical GPU in `hardware.gpus-found`.
#[test]
fn the_header_counts_the_gpus_layer_1_found() {
    let mut checked = 0;
    for (name, r) in reports() {
        if let Some(f) = r.findings.iter().find(|f| f.id == "hardware.gpus-found") {
            assert_eq!(r.facts.gpu_count, f.evidence.len(), "{name}: {}", f.summary);
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn the_scanner_reads_display_names() {
    assert_eq!(
        gpu_names("GPU 0 (0000:63:00.0, ROCr 0) and GPU 12 (0000:c1:00.0) but not GPU 3 or node 2"),
        [
            (0, "0000:63:00.0".to_owned()),
            (12, "0000:c1:00.0".to_owned())
        ]
    );
}
