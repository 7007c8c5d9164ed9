//! Fixture sweep: every `fixtures/*` yields an inventory, matches its `[expect]`, and is
//! snapshot-tested (reviewed snapshots under `tests/snapshots/`).

use rocm_probe::report::Options;
use rocm_probe::{Inventory, Report, Source};
use rocm_probe_tests::fixtures;

/// The inventory of a fixture, or `None` when it has no KFD topology.
fn inventory(dir: &std::path::Path) -> Option<Inventory> {
    let source = Source::fixture(dir).expect("fixture.toml parses");
    Inventory::collect(&source).ok()
}

#[test]
fn every_fixture_meets_its_expectations() {
    let all = fixtures();
    assert!(all.len() >= 9, "fixtures found: {all:?}");
    for (name, dir) in all {
        let source = Source::fixture(&dir).unwrap();
        let expect = source
            .fixture_config()
            .and_then(|c| c.expect.clone())
            .unwrap_or_else(|| panic!("{name}: fixture.toml has no [expect]"));
        let report = Report::collect(&source, Options::default());
        assert!(
            report.undeclared_ids().is_empty(),
            "{name}: {:?}",
            report.undeclared_ids()
        );
        let ids: Vec<&str> = report.findings.iter().map(|f| f.id).collect();
        if let Some(want) = expect.exit {
            assert_eq!(
                i32::from(report.exit_code(false)),
                want,
                "{name}: exit; findings {ids:?}"
            );
        }
        if let Some(want) = expect.root_layer {
            assert_eq!(
                report.verdict.root_layer, want,
                "{name}: root layer; findings {ids:?}"
            );
        }
        let root = expect
            .root
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: [expect] names no root (an id, or \"none\")"));
        assert_eq!(
            report.verdict.root_cause.unwrap_or("none"),
            root,
            "{name}: root cause; findings {ids:?}"
        );
        if let Some(want) = &expect.root_status {
            let got = serde_json::to_value(report.verdict.status).unwrap();
            assert_eq!(got, want.as_str(), "{name}: root status; findings {ids:?}");
        }
        for id in expect.findings.iter().flatten() {
            assert!(
                ids.contains(&id.as_str()),
                "{name}: {id} missing from {ids:?}"
            );
        }
        if let Some(want) = expect.agents {
            assert_eq!(report.facts.agent_count, want, "{name}: GPU agents");
        }
        if let Some(want) = &expect.targets {
            assert_eq!(&report.facts.targets, want, "{name}: targets");
        }
    }
}

#[test]
fn reports_match_reviewed_snapshots() {
    for (name, dir) in fixtures() {
        let report = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
        insta::assert_json_snapshot!(format!("report__{name}"), report);
    }
}

#[test]
fn inventories_match_reviewed_snapshots() {
    for (name, dir) in fixtures() {
        match inventory(&dir) {
            Some(inv) => insta::assert_json_snapshot!(name.as_str(), inv),
            None => insta::assert_snapshot!(name.as_str(), "no KFD topology"),
        }
    }
}

fn inv(name: &str) -> Inventory {
    inventory(&rocm_probe_tests::fixtures_dir().join(name)).unwrap()
}

#[test]
fn mi300x_cpx_is_63_partitions_of_38_cus_in_8_gpus_and_one_hive() {
    let inv = inv("mi300x-cpx-8gpu");
    let gpus: Vec<_> = inv.gpu_agents().collect();
    assert_eq!(gpus.len(), 63);
    assert!(gpus.iter().all(|a| a.compute_units == Some(38)));
    assert!(
        gpus.iter()
            .all(|a| a.target_id.as_deref() == Some("gfx942:sramecc+:xnack-"))
    );
    assert!(
        gpus.iter()
            .all(|a| a.marketing_name.as_deref() == Some("AMD Instinct MI300X"))
    );
    // The capture has no mem banks: unknown, never 0.
    assert!(gpus.iter().all(|a| a.memory_bytes.is_none()));
    let sizes: Vec<usize> = inv.gpus.iter().map(|g| g.nodes.len()).collect();
    assert_eq!(sizes, [8, 8, 8, 8, 8, 8, 8, 7]);
    assert_eq!(inv.gpus[7].pci_address.as_deref(), Some("0000:e5:00.0"));
    assert_eq!(inv.hives.len(), 1);
    assert_eq!(inv.hives[0].gpus.len(), 8);
    assert!(inv.problems.is_empty(), "{:?}", inv.problems);
}

#[test]
fn mi308x_cpx_is_32_partitions_of_20_cus_and_48_gib() {
    let inv = inv("mi308x-cpx-8gpu");
    let gpus: Vec<_> = inv.gpu_agents().collect();
    assert_eq!(gpus.len(), 32);
    assert!(gpus.iter().all(|a| a.compute_units == Some(20)));
    let exact = gpus
        .iter()
        .filter(|a| a.memory_bytes == Some(48 << 30))
        .count();
    let short = gpus
        .iter()
        .filter(|a| a.memory_bytes == Some((48 << 30) - (16 << 20)))
        .count();
    assert_eq!((exact, short), (24, 8));
    assert_eq!(inv.gpus.len(), 8);
    assert!(inv.gpus.iter().all(|g| g.nodes.len() == 4));
    // Two PCI domains, one hive.
    assert_eq!(inv.gpus[4].pci_address.as_deref(), Some("0001:0b:00.0"));
    assert_eq!(inv.hives.len(), 1);
}

#[test]
fn mi210_is_eight_gfx90a_in_two_hives_of_four() {
    let inv = inv("mi210-xgmi-8gpu");
    assert_eq!(inv.targets(true), vec!["gfx90a:sramecc+:xnack-"; 8]);
    assert!(inv.gpu_agents().all(|a| a.compute_units == Some(104)));
    assert_eq!(inv.gpus.len(), 8);
    let hives: Vec<Vec<usize>> = inv.hives.iter().map(|h| h.gpus.clone()).collect();
    assert_eq!(hives, [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
}

#[test]
fn phoenix_apu_memory_is_the_gtt_sized_bank() {
    let inv = inv("apu-phoenix-780m");
    let gpus: Vec<_> = inv.gpu_agents().collect();
    assert_eq!(gpus.len(), 1);
    let a = gpus[0];
    assert_eq!(a.name.as_deref(), Some("gfx1103"));
    assert_eq!(a.integrated, Some(true));
    assert_eq!(a.memory_bytes, Some(31433977856));
    assert_eq!(a.compute_units, Some(12));
    // drm revision 0xdd picks the exact amdgpu.ids line.
    assert_eq!(a.pci_revision, Some(0xdd));
    assert_eq!(
        a.marketing_name.as_deref(),
        Some("AMD Radeon 780M Graphics")
    );
}

#[test]
fn mi25_2018_names_targets_from_the_device_id() {
    let inv = inv("mi25-2018");
    assert_eq!(inv.targets(false), ["gfx900", "gfx900"]);
    assert!(
        inv.gpu_agents()
            .all(|a| a.gfx_source == Some(rocm_probe::target::TargetSource::DeviceIdTable))
    );
    // Node 2 is a hand-made copy of node 1 and says so.
    assert!(
        inv.problems
            .iter()
            .any(|p| p.message.to_string().contains("same PCI location_id"))
    );
}

#[test]
fn every_fixture_says_where_it_came_from() {
    let mut scenarios = 0;
    for (name, dir) in fixtures() {
        let readme = std::fs::read_to_string(dir.join("README.md"))
            .unwrap_or_else(|e| panic!("{name}: no README.md: {e}"));
        // Scenarios are derived from a real capture and model a public report.
        if readme.contains("## Derived from") {
            scenarios += 1;
            assert!(
                readme.contains("https://"),
                "{name}: README cites no public report"
            );
            assert!(
                readme.contains("[expect]"),
                "{name}: README does not explain [expect]"
            );
        }
    }
    assert!(scenarios >= 16, "{scenarios} scenario fixtures");
}
