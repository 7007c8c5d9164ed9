//! Active probes through fixtures that state an active run's results in `[active]`:
//! beyond `[expect]` (checked by the sweep), each scenario's finding with its status, summary
//! and key evidence; that passive fixtures make no active finding; that a typo in `[active]` is
//! an error naming the key; and what the layer-2 result of a successful run says.

use rocm_probe::checks::driver::rules::DRIVER_ACTIVE_RULES;
use rocm_probe::checks::runtime::rules::RUNTIME_ACTIVE_RULES;
use rocm_probe::checks::thunk::rules::THUNK_ACTIVE_RULES;
use rocm_probe::finding::{Finding, Layer, Status};
use rocm_probe::report::Options;
use rocm_probe::{Report, Source};

use rocm_probe_tests::{evidence, finding, fixtures, report};

fn remedy(f: &Finding) -> &str {
    f.remedy
        .as_deref()
        .unwrap_or_else(|| panic!("{} has no remedy", f.id))
}

fn ids(r: &Report) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.id).collect()
}

/// Every id an active check can emit.
fn active_ids() -> Vec<&'static str> {
    [
        DRIVER_ACTIVE_RULES,
        THUNK_ACTIVE_RULES,
        RUNTIME_ACTIVE_RULES,
    ]
    .iter()
    .flat_map(|t| t.iter().map(|r| r.id))
    .collect()
}

#[test]
fn kfd_interface_1_8_warns_that_available_memory_is_missing() {
    let r = report("active-kfd-interface-old");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-interface-old"));
    assert_eq!((r.verdict.root_layer, r.verdict.status), (2, Status::Warn));
    assert_eq!(r.exit_code(false), 0);

    let old = finding(&r, "driver.kfd-interface-old");
    assert_eq!((old.layer, old.status), (Layer::Driver, Status::Warn));
    assert_eq!(
        old.summary,
        "KFD ioctl interface 1.8: no AVAILABLE_MEMORY ioctl (1.9): ROCr cannot ask KFD for free \
         VRAM, so hipMemGetInfo reports an estimate or fails, depending on the release"
    );
    assert_eq!(evidence(old, "GET_VERSION").as_deref(), Some("1.8"));
    assert!(remedy(old).contains("amdgpu-dkms"), "{}", remedy(old));

    // The device still answers; without AVAILABLE_MEMORY there is no memory figure.
    let answers = finding(&r, "driver.kfd-answers");
    assert_eq!(answers.status, Status::Pass);
    assert_eq!(
        answers.summary,
        "/dev/kfd answers: interface 1.8; 8 GPU(s) usable by this process"
    );
    assert_eq!(evidence(answers, "AVAILABLE_MEMORY"), None);

    let rocr = finding(&r, "runtime.rocr-answers");
    assert_eq!(rocr.status, Status::Pass);
    assert!(
        rocr.summary.contains("10 agent(s): 8 GPU (8 × gfx90a)"),
        "{}",
        rocr.summary
    );
    let hip = finding(&r, "runtime.hip-answers");
    assert!(
        hip.summary.starts_with("hipGetDeviceCount: 8 device(s)"),
        "{}",
        hip.summary
    );
    assert!(
        hip.summary.ends_with("runtime 6.2.41133, driver 6.2.41133"),
        "{}",
        hip.summary
    );
}

#[test]
fn kfd_open_eacces_is_the_root_cause_when_the_identity_is_unknown() {
    let r = report("active-kfd-open-eacces");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-open-failed"));
    assert_eq!((r.verdict.root_layer, r.verdict.status), (2, Status::Fail));
    assert_eq!(r.exit_code(false), 1);

    // Passively undecidable: no [identity].
    assert_eq!(
        finding(&r, "driver.identity-not-recorded").status,
        Status::Skip
    );

    let open = finding(&r, "driver.kfd-open-failed");
    assert_eq!((open.layer, open.status), (Layer::Driver, Status::Fail));
    assert_eq!(
        open.summary,
        "Opening /dev/kfd read-write failed: EACCES (permission denied: not in the group that \
         owns /dev/kfd, or a device cgroup denies it)"
    );
    assert_eq!(evidence(open, "open /dev/kfd").as_deref(), Some("EACCES"));
    assert!(remedy(open).contains("render"), "{}", remedy(open));
    // Nothing else of layer 2 ran.
    assert!(!ids(&r).contains(&"driver.kfd-answers"), "{:?}", ids(&r));

    let init = finding(&r, "runtime.rocr-init-failed");
    assert_eq!(init.status, Status::Fail);
    assert!(
        init.summary
            .starts_with("hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES ("),
        "{}",
        init.summary
    );
    assert_eq!(
        evidence(init, "hsa_shut_down").as_deref(),
        Some("HSA_STATUS_ERROR_NOT_INITIALIZED")
    );
    let hip = finding(&r, "runtime.hip-failed");
    assert_eq!(hip.status, Status::Fail);
    assert!(
        hip.summary
            .starts_with("hipGetDeviceCount: hipErrorNoDevice ("),
        "{}",
        hip.summary
    );
    assert_eq!(
        evidence(hip, "hipGetDeviceCount").as_deref(),
        Some("hipErrorNoDevice")
    );
    // libhsakmt is inside ROCr: layer 3 makes no active finding.
    assert!(
        !ids(&r).iter().any(|id| id.starts_with("thunk.hsakmt-")),
        "{:?}",
        ids(&r)
    );
}

#[test]
fn shared_libhsakmt_listing_a_gpu_node_fewer_than_sysfs_warns() {
    let r = report("active-hsakmt-node-mismatch");
    // The passive finding names the cause; the active ones prove its consequences.
    assert_eq!(r.verdict.root_cause, Some("driver.render-node-missing"));
    assert_eq!(r.exit_code(false), 1);

    let mismatch = finding(&r, "thunk.hsakmt-node-mismatch");
    assert_eq!(
        (mismatch.layer, mismatch.status),
        (Layer::Thunk, Status::Warn)
    );
    assert_eq!(
        mismatch.summary,
        "libhsakmt lists 1 node(s), the KFD topology 2; 1 position(s) differ"
    );
    assert_eq!(
        evidence(mismatch, "/sys/class/kfd/kfd/topology/nodes/1").as_deref(),
        Some("position 1: sysfs 0 CPU cores, 192 SIMDs; libhsakmt no node")
    );
    // The CPU node, at the same position in both views, is not evidence.
    assert_eq!(
        evidence(mismatch, "/sys/class/kfd/kfd/topology/nodes/0"),
        None
    );
    assert!(
        remedy(mismatch).contains("/dev/dri render node exists"),
        "{}",
        remedy(mismatch)
    );

    let answers = finding(&r, "thunk.hsakmt-answers");
    assert_eq!(answers.status, Status::Pass);
    assert_eq!(
        answers.summary,
        "libhsakmt 1.0.6 found; hsaKmtOpenKFD: SUCCESS; KFD interface 1.11; 1 node(s)"
    );
    assert_eq!(
        evidence(answers, "/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6").as_deref(),
        Some("loaded")
    );

    // ROCr, built on the same libhsakmt, has no GPU agent.
    let missing = finding(&r, "runtime.rocr-agent-missing");
    assert_eq!(missing.status, Status::Fail);
    assert_eq!(
        evidence(missing, "/sys/class/kfd/kfd/topology/nodes/1").as_deref(),
        Some("gpu_id 53219")
    );
    assert_eq!(finding(&r, "runtime.hip-failed").status, Status::Fail);
    // Debian 12's Linux 6.1: interface 1.11 is only information.
    assert_eq!(finding(&r, "driver.kfd-interface-old").status, Status::Info);
}

#[test]
fn rocr_missing_a_gpu_without_a_device_mask_fails_naming_the_gpu() {
    let r = report("active-rocr-missing-agent");
    assert_eq!(r.verdict.root_cause, Some("runtime.rocr-agent-missing"));
    assert_eq!((r.verdict.root_layer, r.verdict.status), (4, Status::Fail));

    let missing = finding(&r, "runtime.rocr-agent-missing");
    assert_eq!(
        (missing.layer, missing.status),
        (Layer::Runtime, Status::Fail)
    );
    assert_eq!(
        missing.summary,
        // KFD node 7, named as every output names it.
        "1 GPU(s) of the KFD topology are not among ROCr's agents: GPU 5 (0000:c3:00.0, ROCr 5); \
         likely ROCr could not use them: an unopenable render node, or a processor this ROCr \
         does not know"
    );
    assert_eq!(
        evidence(missing, "hsa_iterate_agents").as_deref(),
        Some(
            "GPU agents: GPU 0 (0000:63:00.0, ROCr 0), GPU 1 (0000:43:00.0, ROCr 1), GPU 2 \
             (0000:03:00.0, ROCr 2), GPU 3 (0000:26:00.0, ROCr 3), GPU 4 (0000:e3:00.0, ROCr 4), \
             GPU 6 (0000:83:00.0, ROCr 6), GPU 7 (0000:a3:00.0, ROCr 7)"
        )
    );
    assert!(
        missing
            .evidence
            .iter()
            .any(|e| e.source == "/sys/class/kfd/kfd/topology/nodes/7"),
        "{:?}",
        missing.evidence
    );

    let rocr = finding(&r, "runtime.rocr-answers");
    assert!(
        rocr.summary.contains("9 agent(s): 7 GPU (7 × gfx90a)"),
        "{}",
        rocr.summary
    );
    assert_eq!(evidence(rocr, "agent GPU 5 (0000:c3:00.0, ROCr 5)"), None);
    assert!(evidence(rocr, "agent GPU 4 (0000:e3:00.0, ROCr 4)").is_some());
    assert!(
        finding(&r, "runtime.hip-answers")
            .summary
            .starts_with("hipGetDeviceCount: 7 device(s)")
    );
}

#[test]
fn a_dispatch_timeout_on_one_gpu_fails_with_every_gpus_result() {
    let r = report("active-dispatch-timeout");
    assert_eq!(r.verdict.root_cause, Some("runtime.dispatch-failed"));
    assert_eq!((r.verdict.root_layer, r.verdict.status), (4, Status::Fail));
    assert!(!ids(&r).contains(&"runtime.dispatch-ok"), "{:?}", ids(&r));

    let failed = finding(&r, "runtime.dispatch-failed");
    assert_eq!(
        (failed.layer, failed.status),
        (Layer::Runtime, Status::Fail)
    );
    assert_eq!(
        failed.summary,
        // KFD node 6 named as every report names it.
        "1 of 8 GPU agent(s) did not complete an AQL barrier packet: GPU 4 (0000:e3:00.0, ROCr \
         4): timeout"
    );
    assert_eq!(failed.evidence.len(), 8);
    assert_eq!(
        evidence(failed, "dispatch on GPU 4 (0000:e3:00.0, ROCr 4)").as_deref(),
        Some("gfx90a: timeout")
    );
    assert_eq!(
        evidence(failed, "dispatch on GPU 0 (0000:63:00.0, ROCr 0)").as_deref(),
        Some("gfx90a: ok in 18 µs")
    );
    assert!(
        remedy(failed).contains("amd-smi reset"),
        "{}",
        remedy(failed)
    );

    // Enumeration itself was healthy.
    assert!(
        finding(&r, "runtime.rocr-answers")
            .summary
            .contains("10 agent(s): 8 GPU (8 × gfx90a)")
    );
    assert!(!ids(&r).contains(&"runtime.rocr-agent-missing"));
}

#[test]
fn a_successful_layer_2_run_shows_interface_gpus_and_allocatable_memory() {
    let r = report("active-dispatch-timeout");
    let answers = finding(&r, "driver.kfd-answers");
    assert_eq!(
        (answers.layer, answers.status),
        (Layer::Driver, Status::Pass)
    );
    assert_eq!(
        answers.summary,
        "/dev/kfd answers: interface 1.14; 8 GPU(s) usable by this process; 511.1 GiB \
         allocatable over 8 GPU(s)"
    );
    assert_eq!(evidence(answers, "open /dev/kfd").as_deref(), Some("ok"));
    assert_eq!(evidence(answers, "GET_VERSION").as_deref(), Some("1.14"));
    let memory = evidence(answers, "AVAILABLE_MEMORY").unwrap();
    assert!(memory.contains("41190: 68604133376"), "{memory}");
    assert_eq!(memory.matches(": 68604133376").count(), 8, "{memory}");
    // Nothing wrong in layer 2: no interface, hidden-GPU, clock or ioctl finding.
    let layer2 = &r.layers[1];
    assert_eq!(layer2.number, 2);
    assert_eq!(layer2.status, Status::Pass);
    assert!(
        layer2.findings.contains(&"driver.kfd-answers"),
        "{:?}",
        layer2.findings
    );
}

#[test]
fn fixtures_without_active_results_make_no_active_finding() {
    let active = active_ids();
    assert!(active.contains(&"driver.kfd-answers"), "{active:?}");
    let mut passive = 0;
    for (name, dir) in fixtures() {
        let source = Source::fixture(&dir).unwrap();
        if source.fixture_config().is_some_and(|c| c.active.is_some()) {
            assert!(name.starts_with("active-"), "{name} has [active]");
            continue;
        }
        passive += 1;
        let r = Report::collect(&source, Options::default());
        let found: Vec<&str> = ids(&r)
            .into_iter()
            .filter(|id| active.contains(id))
            .collect();
        assert!(found.is_empty(), "{name}: {found:?}");
    }
    assert!(passive >= 9, "passive fixtures checked: {passive}");
}

/// A fixture directory holding only `fixture.toml`.
fn temp_fixture(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fixture.toml"), toml).unwrap();
    dir
}

#[test]
fn an_unknown_active_key_is_an_error_naming_it() {
    let cases = [
        ("[active]\nkfd_opened = \"ok\"\n", "active.kfd_opened", 2),
        (
            "[active]\nkfd_open = \"ok\"\n\n[active.rocr]\ninit_status = \"HSA_STATUS_SUCCESS\"\n",
            "active.rocr.init_status",
            5,
        ),
        (
            "[active]\n[[active.rocr.agents]]\nname = \"gfx90a\"\ndevice = \"gpu\"\nnode_id = 2\n",
            "active.rocr.agents.node_id",
            5,
        ),
        (
            "[[active.dispatch]]\nagent = \"gfx90a\"\nresult = \"ok\"\nusec = 19\n",
            "active.dispatch.usec",
            4,
        ),
    ];
    for (toml, key, line) in cases {
        let dir = temp_fixture(toml);
        let Err(err) = Source::fixture(dir.path()) else {
            panic!("{key}: accepted:\n{toml}");
        };
        assert_eq!(err.key.as_deref(), Some(key), "{err}");
        assert_eq!(err.line, Some(line), "{err}");
        assert!(err.message.contains("unknown field"), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("fixture.toml:{line}: key `{key}`: unknown field")),
            "{text}"
        );
    }
    // The same tables with the right keys parse.
    let dir = temp_fixture(
        "[active]\nkfd_open = \"ok\"\n[[active.rocr.agents]]\nname = \"gfx90a\"\ndevice = \"gpu\"\n\
         node = 2\n",
    );
    let source = Source::fixture(dir.path()).unwrap();
    let active = source.fixture_config().unwrap().active.clone().unwrap();
    assert_eq!(active.kfd_open, Some(rocm_probe::active::KfdOpen::Ok));
    assert_eq!(active.rocr.unwrap().agents.unwrap()[0].node, Some(2));
}

/// Issue 15: a GPU KFD does not give the process (a container handed the dGPU only) is
/// driver.kfd-gpus-hidden's, not a runtime failure — ROCr cannot see what KFD hides — and it is
/// named without a ROCr index, since this process's ROCr has none for it.
#[test]
fn a_gpu_kfd_hides_is_not_missing_from_rocr() {
    let r = report("active-container-dgpu-only");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-gpus-hidden"));
    assert_eq!(r.exit_code(false), 0);
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.rocr-agent-missing")
    );
    let hidden = finding(&r, "driver.kfd-gpus-hidden");
    assert!(
        hidden.summary.ends_with("GPU 0 (0000:64:00.0) hidden"),
        "{}",
        hidden.summary
    );
    // A GPU ROCr really lacks is still reported.
    let r = report("active-rocr-missing-agent");
    assert_eq!(r.verdict.root_cause, Some("runtime.rocr-agent-missing"));
}
