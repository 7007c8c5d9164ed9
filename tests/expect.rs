//! Node conformance (`check --expect`): expectations written from a node are met by that node,
//! and a scenario derived from a good node fails them naming the unmet item.

use std::path::Path;

use rocm_probe::finding::Status;
use rocm_probe::report::Options;
use rocm_probe::report::expect::Expectations;
use rocm_probe::{Facts, Report, Source};

use rocm_probe_tests::{copy_fixture, fixtures, fixtures_dir};

fn facts(dir: &Path) -> Facts {
    Facts::collect(&Source::fixture(dir).unwrap())
}

/// The expectations a fixture meets now, through their TOML text (as `--write-expect` does).
fn written(dir: &Path) -> Expectations {
    let f = facts(dir);
    let r = Report::from_facts(&f, Options::default());
    let e = Expectations::from_facts(&f, &r.findings);
    let text = e.to_toml("a test");
    let parsed = Expectations::parse(&text, "written.toml").unwrap();
    assert_eq!(parsed, e, "{text}");
    parsed
}

fn checked(dir: &Path, e: &Expectations) -> Report {
    Report::from_facts(
        &facts(dir),
        Options {
            expect: Some(e.clone()),
            ..Default::default()
        },
    )
}

/// The one expectation finding of a report, with its evidence lines.
fn unmet(r: &Report) -> Vec<(String, Vec<String>)> {
    r.findings
        .iter()
        .filter(|f| f.id.contains(".expect-"))
        .map(|f| {
            (
                f.id.to_owned(),
                f.evidence.iter().filter_map(|e| e.value.clone()).collect(),
            )
        })
        .collect()
}

#[test]
fn every_fixture_meets_the_expectations_written_from_it() {
    for (name, dir) in fixtures() {
        let e = written(&dir);
        let r = checked(&dir, &e);
        assert_eq!(unmet(&r), Vec::<(String, Vec<String>)>::new(), "{name}");
        assert_eq!(
            r.exit_code_allowing(e.policy.worst),
            0,
            "{name}: {:#?}",
            r.verdict
        );
    }
}

#[test]
fn a_missing_wrapper_backend_names_the_library() {
    let e = written(&fixtures_dir().join("rocm-6.2-mi210"));
    assert_eq!(
        e.require.libraries,
        ["rocblas", "hipblas", "hipblaslt", "MIOpen"]
    );
    let r = checked(&fixtures_dir().join("hipblas-without-rocblas"), &e);
    assert_eq!(
        unmet(&r),
        [(
            "libraries.expect-libraries".to_owned(),
            vec!["rocblas: expected installed, found none".to_owned()]
        )]
    );
    assert_eq!(r.exit_code_allowing(e.policy.worst), 1);
}

#[test]
fn a_smaller_carve_out_names_the_gpu_and_both_sizes() {
    let e = written(&fixtures_dir().join("apu-phoenix-780m"));
    let r = checked(&fixtures_dir().join("apu-small-vram"), &e);
    let u = unmet(&r);
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].0, "hardware.expect-gpus");
    assert_eq!(u[0].1, ["GPU 0: expected at least 29 GiB, found 0 GiB"]);
}

#[test]
fn another_rocm_release_names_both_versions() {
    let e = written(&fixtures_dir().join("rocm-6.2-mi210"));
    assert_eq!(e.versions.rocm.as_deref(), Some("=6.2.0"));
    let dir = copy_fixture("rocm-6.2-mi210");
    std::fs::write(
        dir.path().join("opt/rocm-6.2.0/.info/version"),
        "6.1.3-122\n",
    )
    .unwrap();
    let r = checked(dir.path(), &e);
    assert!(
        unmet(&r).contains(&(
            "runtime.expect-rocm".to_owned(),
            vec!["ROCm version: expected =6.2.0, found 6.1.3".to_owned()]
        )),
        "{:?}",
        unmet(&r)
    );
}

#[test]
fn firmware_is_written_exactly_and_a_different_mes_names_the_gpu_and_both_versions() {
    let e = written(&fixtures_dir().join("apu-phoenix-780m"));
    assert_eq!(
        e.firmware.get("mes").map(String::as_str),
        Some("=0x00000080")
    );
    assert_eq!(e.firmware.len(), 12);
    let dir = copy_fixture("apu-phoenix-780m");
    std::fs::write(
        dir.path()
            .join("sys/class/drm/card1/device/fw_version/mes_fw_version"),
        "0x00000083\n",
    )
    .unwrap();
    let r = checked(dir.path(), &e);
    assert_eq!(
        unmet(&r),
        vec![(
            "driver.expect-firmware".to_owned(),
            vec!["GPU 0 firmware mes: expected =0x00000080, found 0x00000083".to_owned()]
        )]
    );
    assert_eq!(r.exit_code_allowing(e.policy.worst), 1);
}

#[test]
fn a_missing_partition_names_the_gpu() {
    let e = written(&fixtures_dir().join("mi308x-cpx-8gpu"));
    assert_eq!(e.gpus.agents_per_gpu, Some(4));
    // Four partitions of one XCD each: CPX (MI308X has 4 XCDs).
    assert_eq!(e.gpus.compute_partition.as_deref(), Some("CPX"));
    // The last GPU node disappears: one GPU comes up with 3 partitions.
    let dir = copy_fixture("mi308x-cpx-8gpu");
    let nodes = dir.path().join("sys/class/kfd/kfd/topology/nodes");
    let last = std::fs::read_dir(&nodes)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .unwrap();
    std::fs::remove_dir_all(nodes.join(last.to_string())).unwrap();
    let r = checked(dir.path(), &e);
    let u = unmet(&r);
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].0, "hardware.expect-gpus");
    assert!(
        u[0].1
            .iter()
            .any(|l| l.ends_with("expected 4 agents (partitions), found 3")),
        "{u:?}"
    );
    // The GPU lost a quarter of its memory with the partition; the mode is still CPX.
    assert!(
        u[0].1
            .contains(&"GPU 7: expected at least 191 GiB, found 144 GiB".to_owned()),
        "{u:?}"
    );
    assert!(
        !u[0].1.iter().any(|l| l.starts_with("compute partition")),
        "{u:?}"
    );
    assert_eq!(r.verdict.root_cause, Some("hardware.expect-gpus"));
}

#[test]
fn a_narrower_link_names_the_device() {
    // Expectations written from the x8 scenario with its link widened to x16 …
    let wide = copy_fixture("pcie-link-x8");
    let w = wide
        .path()
        .join("sys/class/drm/card0/device/current_link_width");
    assert_eq!(std::fs::read_to_string(&w).unwrap().trim(), "8");
    std::fs::write(&w, "16\n").unwrap();
    let e = written(wide.path());
    assert_eq!(e.pcie.min_width, Some(16));
    // … are not met by the x8 scenario itself.
    let r = checked(&fixtures_dir().join("pcie-link-x8"), &e);
    let u = unmet(&r);
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].0, "hardware.expect-pcie");
    assert!(
        u[0].1[0].ends_with("expected width ≥ x16, found x8"),
        "{u:?}"
    );
}

#[test]
fn ignore_and_worst_shape_the_verdict() {
    let dir = fixtures_dir().join("kfd-permission-denied");
    let mut e = Expectations::default();
    let r = checked(&dir, &e);
    assert_eq!(r.exit_code_allowing(e.policy.worst), 1);
    e.policy.ignore = r
        .findings
        .iter()
        .filter(|f| f.status == Status::Fail)
        .map(|f| f.id.to_owned())
        .collect();
    let r = checked(&dir, &e);
    assert!(
        r.findings.iter().all(|f| f.status < Status::Fail),
        "{:#?}",
        r.findings
    );
    assert_eq!(r.exit_code_allowing(e.policy.worst), 0);
    // A node with a warning passes by default and fails when warnings are not allowed.
    let dir = fixtures_dir().join("mi300x-cpx-8gpu");
    let e = Expectations::default();
    assert_eq!(checked(&dir, &e).verdict.status, Status::Warn);
    assert_eq!(checked(&dir, &e).exit_code_allowing(e.policy.worst), 0);
    assert_eq!(checked(&dir, &e).exit_code_allowing(Status::Info), 1);
}
