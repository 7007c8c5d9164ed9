//! Failure scenarios: beyond `[expect]` (checked by the sweep), the key evidence and remedy of
//! each, and which finding the report names as the root cause.

use rocm_probe::finding::{Status, Subject};
use rocm_probe::report::Options;
use rocm_probe::{Report, Source};

use rocm_probe_tests::{evidence, finding, report};

#[test]
fn kfd_permission_denied_names_the_group_and_relogin() {
    let r = report("kfd-permission-denied");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-permission-denied"));
    let f = finding(&r, "driver.kfd-permission-denied");
    assert_eq!(
        evidence(f, "/dev/kfd").as_deref(),
        Some("mode 0660, owner uid 0, group 109 (render)")
    );
    let remedy = f.remedy.as_deref().unwrap();
    assert!(
        remedy.contains("usermod -aG render") && remedy.contains("log out"),
        "{remedy}"
    );
}

#[test]
fn a_seat_acl_opens_the_nodes_and_says_who_still_needs_the_group() {
    let r = report("kfd-seat-acl");
    assert!(r.findings.iter().all(|f| f.status != Status::Fail));
    let f = finding(&r, "driver.device-access-seat-acl");
    assert_eq!(f.status, Status::Info);
    assert!(f.summary.contains("/dev/dri/renderD128"), "{}", f.summary);
    assert_eq!(
        evidence(f, "/dev/kfd").as_deref(),
        Some(
            "mode 0660, owner uid 0, group 109 (render), POSIX ACL \
             user::rw-,user:1000:rw-,group::rw-,mask::rw-,other::---"
        )
    );
    let remedy = f.remedy.as_deref().unwrap();
    assert!(
        remedy.contains("SSH") && remedy.contains("group render"),
        "{remedy}"
    );
    let step = f.remedy_steps.first().and_then(|s| s.command.as_deref());
    assert_eq!(step, Some("sudo usermod -aG render \"$USER\""));
}

/// The same machine with an ACL that refuses: a mask without `w` (which binds the render group
/// too) or a named entry without rw for the user (looked at before any group). Both fail as
/// without the ACL, and no `usermod` is offered, since joining a group would not help.
#[test]
fn an_acl_that_refuses_is_a_permission_failure_without_a_group_remedy() {
    for (from, to, mode) in [
        ("\"mask::rw-\"", "\"mask::r--\"", "0640"),
        ("\"user:1000:rw-\"", "\"user:1000:---\"", "0660"),
    ] {
        let dir = rocm_probe_tests::copy_fixture("kfd-seat-acl");
        let toml = dir.path().join("fixture.toml");
        let text = std::fs::read_to_string(&toml)
            .unwrap()
            .replace(from, to)
            .replace("mode = \"0660\"", &format!("mode = \"{mode}\""))
            // In the group as well: the ACL refuses all the same.
            .replace("groups = [1000, 44]", "groups = [1000, 44, 109]");
        std::fs::write(&toml, text).unwrap();
        let r = Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default());
        assert_eq!(
            r.verdict.root_cause,
            Some("driver.kfd-permission-denied"),
            "{to}"
        );
        let f = finding(&r, "driver.kfd-permission-denied");
        let remedy = f.remedy.as_deref().unwrap();
        assert!(
            remedy.contains("getfacl /dev/kfd") && !remedy.contains("usermod"),
            "{remedy}"
        );
        assert!(f.remedy_steps.is_empty(), "{:?}", f.remedy_steps);
        let render = finding(&r, "driver.render-permission-denied");
        assert!(render.remedy_steps.is_empty(), "{:?}", render.remedy_steps);
        assert!(
            !r.findings
                .iter()
                .any(|f| f.id == "driver.device-access-seat-acl")
        );
    }
}

#[test]
fn host_render_gid_in_a_container_asks_for_group_add() {
    let r = report("container-host-render-gid");
    let f = finding(&r, "driver.kfd-permission-denied");
    assert!(f.remedy.as_deref().unwrap().contains("--group-add 110"));
    assert_eq!(finding(&r, "driver.container").status, Status::Info);
}

#[test]
fn container_without_devices_is_rooted_at_the_missing_kfd_node() {
    let r = report("container-no-kfd-device");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-device-missing"));
    let f = finding(&r, "driver.kfd-device-missing");
    assert!(f.remedy.as_deref().unwrap().contains("--device=/dev/kfd"));
    let render = finding(&r, "driver.render-node-missing");
    assert_eq!(render.caused_by, Some("driver.kfd-device-missing"));
}

#[test]
fn blacklist_and_nomodeset_are_root_causes_of_the_unloaded_module() {
    let r = report("amdgpu-blacklisted");
    assert_eq!(r.verdict.root_cause, Some("driver.amdgpu-blacklisted"));
    let f = finding(&r, "driver.amdgpu-blacklisted");
    assert_eq!(
        evidence(f, "blacklist-amdgpu.conf").as_deref(),
        Some("blacklist amdgpu")
    );
    assert_eq!(
        finding(&r, "driver.amdgpu-not-loaded").caused_by,
        Some("driver.amdgpu-blacklisted")
    );

    let r = report("nomodeset");
    assert_eq!(r.verdict.root_cause, Some("driver.nomodeset"));
    assert_eq!(
        evidence(finding(&r, "driver.nomodeset"), "/proc/cmdline").as_deref(),
        Some("nomodeset")
    );
}

#[test]
fn secure_boot_is_the_cause_of_the_unloaded_module() {
    let r = report("secure-boot-unsigned-dkms");
    // The warning explains the failure: it is the root, the failure its consequence, and the
    // verdict stays a failure.
    assert_eq!(r.verdict.root_cause, Some("driver.secure-boot"));
    assert_eq!(r.verdict.status, Status::Fail);
    assert_eq!(
        finding(&r, "driver.amdgpu-not-loaded").caused_by,
        Some("driver.secure-boot")
    );
    assert!(r.layers[2].consequence_of == Some("driver.amdgpu-not-loaded"));
    let f = finding(&r, "driver.secure-boot");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(
        evidence(f, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c").as_deref(),
        Some("1")
    );
}

#[test]
fn atomics_and_unsupported_families_are_told_apart() {
    let r = report("pcie-atomics-rejected");
    let f = finding(&r, "driver.gpu-not-in-kfd");
    assert!(f.summary.contains("PCIe atomics"), "{}", f.summary);
    assert_eq!(evidence(f, "/device").as_deref(), Some("0x67df"));

    let r = report("gpu-bound-to-radeon");
    let f = finding(&r, "driver.gpu-not-bound");
    assert_eq!(evidence(f, "/driver").as_deref(), Some("radeon"));
    assert!(
        f.remedy.as_deref().unwrap().contains("GCN 1"),
        "{:?}",
        f.remedy
    );
}

#[test]
fn kfd_missing_with_amdgpu_loaded() {
    let r = report("kfd-missing");
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-missing"));
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "driver.amdgpu-not-loaded")
    );
}

#[test]
fn a_render_node_subset_in_a_container_is_information() {
    let r = report("render-node-missing");
    let f = finding(&r, "driver.render-node-missing");
    assert_eq!(f.status, Status::Info);
    assert!(f.summary.contains("4 of 8"), "{}", f.summary);
    assert_eq!(f.evidence.len(), 4);
    assert_eq!(r.exit_code(false), 0);
}

#[test]
fn dkms_driver_is_noted_with_its_version() {
    let r = report("dkms-out-of-tree-driver");
    let f = finding(&r, "driver.out-of-tree-driver");
    assert_eq!(evidence(f, "amdgpu/version").as_deref(), Some("6.10.5"));
    assert_eq!(r.exit_code(false), 0);
}

#[test]
fn hardware_device_scenarios_carry_their_sysfs_values() {
    let r = report("pcie-link-x8");
    let f = finding(&r, "hardware.pcie-link-degraded");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(evidence(f, "current_link_width").as_deref(), Some("8"));
    assert_eq!(evidence(f, "max_link_width").as_deref(), Some("16"));

    let r = report("large-bar-off");
    let f = finding(&r, "hardware.large-bar-off");
    assert_eq!(
        evidence(f, "mem_info_vis_vram_total").as_deref(),
        Some("268435456")
    );

    let r = report("apu-small-vram");
    let f = finding(&r, "hardware.apu-small-memory");
    assert_eq!(
        evidence(f, "mem_info_gtt_total").as_deref(),
        Some("31433977856")
    );
    // The real capture, whose kernel gives KFD the GTT size, is healthy.
    assert!(
        report("apu-phoenix-780m")
            .findings
            .iter()
            .all(|f| f.id != "hardware.apu-small-memory")
    );
    assert!(
        report("apu-strixpoint")
            .findings
            .iter()
            .all(|f| f.id != "hardware.apu-small-memory")
    );

    let r = report("ras-uncorrectable");
    assert_eq!(r.verdict.root_cause, Some("hardware.ras-uncorrectable"));
    let f = finding(&r, "hardware.ras-uncorrectable");
    assert_eq!(evidence(f, "umc_err_count").as_deref(), Some("2"));
    assert!(
        f.summary.starts_with("GPU 0 (0000:63:00.0, ROCr 0)"),
        "{}",
        f.summary
    );
    assert_eq!(finding(&r, "hardware.ras-correctable").evidence.len(), 2);
    assert!(
        finding(&r, "hardware.retired-pages")
            .summary
            .contains("2 VRAM page(s) retired, 1 pending")
    );
    // One sick GPU of eight does not stop the layers above: they are still checked.
    assert!(r.layers.iter().all(|l| l.consequence_of.is_none()));
    assert_eq!(finding(&r, "driver.kfd-ready").status, Status::Pass);
    // It is a failure of that GPU: the run exits 1, compute is ready on the other seven, and
    // the multi-GPU verdict is given without it, naming the hive it belonged to.
    assert_eq!(r.exit_code(false), 1);
    assert_eq!(
        f.subject,
        Some(Subject::gpu(0, Some("0000:63:00.0".to_owned())))
    );
    let compute = finding(&r, "workloads.compute");
    assert_eq!(compute.status, Status::Warn);
    assert_eq!(compute.caused_by, Some("hardware.ras-uncorrectable"));
    assert!(
        compute.summary.starts_with(
            "Single-GPU compute on 7 of 8 GPUs: ready; out of use: GPU 0 (0000:63:00.0, ROCr 0)"
        ),
        "{}",
        compute.summary
    );
    let multi = finding(&r, "workloads.multi-gpu");
    assert_eq!(multi.status, Status::Warn);
    assert!(
        multi.summary.starts_with("7 physical GPUs"),
        "{}",
        multi.summary
    );
    assert!(
        multi.summary.contains(
            "hive 0xaefdf8293fefa6b7: 3 GPUs, all pairs XGMI, without GPU 0 (0000:63:00.0, ROCr 0)"
        ),
        "{}",
        multi.summary
    );

    let r = report("dgpu-runtime-suspended");
    assert_eq!(
        finding(&r, "hardware.runtime-suspended").status,
        Status::Info
    );
    assert_eq!(r.exit_code(false), 0);
}

#[test]
fn platform_tuning_is_a_warning_on_cluster_nodes_and_iommu_on_multi_gpu_machines() {
    let r = report("cluster-tuning");
    assert_eq!(r.profile.id(), "cluster");
    assert_eq!(
        finding(&r, "driver.iommu-not-passthrough").status,
        Status::Warn
    );
    assert_eq!(finding(&r, "driver.numa-balancing").status, Status::Warn);
    let dir = rocm_probe_tests::fixtures_dir().join("cluster-tuning");
    let desktop = Report::collect(
        &Source::fixture(dir).unwrap(),
        Options {
            profile: Some(rocm_probe::facts::config::Profile::Desktop),
            ..Default::default()
        },
    );
    assert_eq!(
        finding(&desktop, "driver.numa-balancing").status,
        Status::Info
    );
    // Except iommu=pt on a machine with two or more discrete GPUs, on any profile: P2P through
    // a translating IOMMU hangs collectives there (ROCm/vllm#390).
    assert_eq!(
        finding(&desktop, "driver.iommu-not-passthrough").status,
        Status::Warn
    );
    assert_eq!(desktop.exit_code(true), 1);
}

#[test]
fn wsl_is_not_blamed_on_missing_hardware_or_driver() {
    let r = report("wsl2");
    assert_eq!(finding(&r, "hardware.wsl-paravirtual").status, Status::Skip);
    assert_eq!(finding(&r, "driver.wsl").status, Status::Info);
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id).collect();
    assert!(
        !ids.contains(&"hardware.no-amd-gpu") && !ids.contains(&"driver.amdgpu-not-loaded"),
        "{ids:?}"
    );
    // Nothing was verified: undetermined (exit 3), never a PASS with zero GPUs.
    assert_eq!(r.verdict.status, Status::Skip);
    assert_eq!(r.verdict.root_cause, Some("hardware.wsl-paravirtual"));
    assert_eq!(r.exit_code(false), 3);
}

#[test]
fn dkms_without_a_build_for_the_running_kernel_is_the_root_cause() {
    let r = report("dkms-not-built");
    assert_eq!(r.verdict.root_cause, Some("driver.dkms-not-built"));
    let f = finding(&r, "driver.dkms-not-built");
    assert_eq!(
        evidence(f, "osrelease").as_deref(),
        Some("6.11.0-26-generic")
    );
    assert_eq!(
        evidence(f, "6.10.5-2084815.24.04").as_deref(),
        Some("built for 6.8.0-51-generic")
    );
    assert!(
        f.remedy
            .as_deref()
            .unwrap()
            .contains("dkms autoinstall -k 6.11.0-26-generic")
    );
}

/// `--summary`: one line within the width, the root cause's id first.
#[test]
fn summary_lines_name_the_root_cause_within_the_width() {
    for name in [
        "kfd-permission-denied",
        "rocblas-no-gfx1103",
        "mi300x-cpx-8gpu",
        "rocm-6.2-mi210",
        "torch-no-gfx1103",
    ] {
        let r = report(name);
        for width in [20, 40, 80, 200] {
            let line = r.summary(width);
            assert!(line.chars().count() <= width, "{name} {width}: {line}");
            assert!(!line.contains('\n'));
            match r.verdict.root_cause {
                Some(id) if width >= 80 => assert!(line.contains(id), "{name}: {line}"),
                None => assert!(line.starts_with("PASS "), "{name}: {line}"),
                _ => {}
            }
        }
    }
    assert_eq!(
        report("rocm-6.2-mi210").summary(80),
        "PASS hardware.gpus-found: 8 GPUs, 8 agents: gfx90a"
    );
    let line = report("kfd-permission-denied").summary(80);
    assert!(
        line.starts_with("FAIL driver.kfd-permission-denied: This user cannot open /dev/kfd"),
        "{line}"
    );
    assert!(line.ends_with('…') || line.chars().count() < 80, "{line}");
}

#[test]
fn a_power_capped_r9700_is_information_and_its_hotspot_bit_is_ignored() {
    // ROCm/rocm-systems#11781: PPT0 and the always-set TEMP_HOTSPOT bit at 75 °C.
    let r = report("r9700-power-cap-throttling");
    assert_eq!(r.verdict.root_cause, None);
    let f = finding(&r, "hardware.gpu-throttling");
    assert_eq!(f.status, Status::Info);
    assert_eq!(
        evidence(f, "/gpu_metrics").as_deref(),
        Some("indep_throttle_status 0x1000000001: PPT0")
    );
    assert_eq!(
        evidence(f, "/power1_cap").as_deref(),
        Some("power cap 225 W")
    );
    assert!(matches!(f.subject, Some(Subject::Gpu { index: 0, .. })));
    assert!(
        !r.findings
            .iter()
            .any(|f| f.id == "hardware.gpu-fan-stopped")
    );
}

#[test]
fn a_stopped_fan_at_109_c_is_the_cause_of_the_thermal_throttling() {
    // ROCm/legacy-rocm-build#6078: the R9700's blower never spins; 109 °C, thermally throttled.
    let r = report("r9700-fan-stopped-109c");
    assert_eq!(r.verdict.root_cause, Some("hardware.gpu-fan-stopped"));
    assert_eq!(r.verdict.status, Status::Warn);
    let fan = finding(&r, "hardware.gpu-fan-stopped");
    assert_eq!(evidence(fan, "/fan1_input").as_deref(), Some("0"));
    assert_eq!(evidence(fan, "/temp*_input").as_deref(), Some("109 °C"));
    let t = finding(&r, "hardware.gpu-throttling");
    assert_eq!(t.status, Status::Warn);
    assert_eq!(t.caused_by, Some("hardware.gpu-fan-stopped"));
    assert!(t.summary.contains("TEMP_HOTSPOT"), "{}", t.summary);
}

/// Issue 18 item 6: a layer with no finding says what it looked at and found, in both
/// languages, and never that the probe has no checks for it.
#[test]
fn empty_layers_say_what_was_found() {
    use rocm_probe::i18n::{self, Lang};
    use rocm_probe_tests::fixtures;
    let note = |name: &str, lang: Lang, layer: u8| {
        let dir = rocm_probe_tests::fixtures_dir().join(name);
        i18n::scoped(lang, || {
            Report::collect(&Source::fixture(&dir).unwrap(), Options::default())
        })
        .layers
        .iter()
        .find(|l| l.number == layer)
        .and_then(|l| l.note.clone())
    };
    assert_eq!(
        note("torch-no-gfx1103", Lang::En, 5).as_deref(),
        Some("no ROCm libraries found in ROCm 6.2.0 at /opt/rocm-6.2.0")
    );
    assert_eq!(
        note("torch-no-gfx1103", Lang::Zh, 5).as_deref(),
        Some("在 /opt/rocm-6.2.0 处的 ROCm 6.2.0 中未找到 ROCm 库")
    );
    assert_eq!(
        note("wsl2", Lang::En, 9).as_deref(),
        Some("no KFD topology: no GPU agent to judge a workload on")
    );
    // Every empty layer of every fixture gets a specific note, not the catch-all one.
    let generic = rocm_probe::msg!("report.layer-nothing-found");
    for (name, dir) in fixtures() {
        let r = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
        for l in &r.layers {
            assert_ne!(
                l.note.as_deref(),
                Some(generic.as_str()),
                "{name} layer {}",
                l.number
            );
        }
    }
}

/// Issue 18 item 5: at 80 columns every fixture's `--summary` leads with the status, the root
/// cause's id and — for one GPU's failure — that GPU's PCI address, in one form for every
/// status, and a line that must be cut is cut between words, in both languages.
#[test]
fn summaries_lead_with_status_id_and_gpu_at_80_columns() {
    use rocm_probe::i18n::{self, Lang};
    for (name, dir) in rocm_probe_tests::fixtures() {
        for lang in [Lang::En, Lang::Zh] {
            let (r, line, full) = i18n::scoped(lang, || {
                let r = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
                let (line, full) = (r.summary(80), r.summary(100_000));
                (r, line, full)
            });
            assert!(line.chars().count() <= 80, "{name}: {line}");
            let status = r.verdict.status.word();
            match r.verdict.root_cause {
                Some(id) => assert!(
                    line.starts_with(&format!("{status} {id}")),
                    "{name}: {line}"
                ),
                None if r.verdict.status == Status::Pass => assert!(
                    line.starts_with("PASS hardware.gpus-found"),
                    "{name}: {line}"
                ),
                None => assert!(line.starts_with(status), "{name}: {line}"),
            }
            if let Some(Subject::Gpu {
                pci_address: Some(pci),
                ..
            }) = &r.verdict.root_subject
            {
                assert!(line.contains(pci.as_str()), "{name}: {line}");
            }
            let cause = r.findings.iter().find(|f| {
                Some(f.id) == r.verdict.root_cause && f.subject == r.verdict.root_subject
            });
            if let Some(kept) = line.strip_suffix('…') {
                // Cut between words: what is kept is the start of an uncut line, which goes on
                // with a space or punctuation there, or meets a non-ASCII character (Chinese has
                // no spaces between words).
                let uncut = std::iter::once(full.clone())
                    .chain(cause.into_iter().flat_map(|c| {
                        let head = format!("{status} {}", c.id);
                        [
                            format!("{head}: {}", c.summary),
                            format!("{head}：{}", c.summary),
                        ]
                    }))
                    .find(|u| u.starts_with(kept))
                    .unwrap_or_else(|| panic!("{name}: {line} is no start of {full}"));
                let next = uncut[kept.len()..].chars().next();
                let last = uncut[..kept.len()].chars().next_back();
                assert!(
                    next.is_some_and(|c| c == ' ' || !c.is_ascii() || c.is_ascii_punctuation())
                        || last.is_some_and(|c| !c.is_ascii()),
                    "{name}: cut inside a word: {line} / {full}"
                );
            } else {
                // Whole: the verdict's summary, or the root cause's own when that is too long.
                assert!(
                    line == full || cause.is_some_and(|c| line.ends_with(&c.summary)),
                    "{name}: {line} / {full}"
                );
            }
        }
    }
}

/// ROCm/amdsmi#172: amd-smi 26.1 and older take a built-in amdgpu (no `initstate`) for an absent
/// one. A newer amd-smi, or a loadable module with `initstate`, is not reported.
#[test]
fn amd_smi_up_to_26_1_is_told_about_a_built_in_amdgpu() {
    const ID: &str = "tools.amdsmi-builtin-driver";
    let r = report("amdsmi-builtin-amdgpu-debian13");
    let f = finding(&r, ID);
    assert_eq!(f.status, Status::Warn);
    assert_eq!(
        evidence(f, "/sys/module/amdgpu").as_deref(),
        Some("present, no initstate: amdgpu is built into the kernel")
    );
    let variant = |edit: &dyn Fn(&std::path::Path)| {
        let dir = rocm_probe_tests::copy_fixture("amdsmi-builtin-amdgpu-debian13");
        edit(dir.path());
        Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default())
    };
    let has = |r: &Report| r.findings.iter().any(|f| f.id == ID);
    let newer = variant(&|d| {
        std::fs::write(
            d.join("opt/rocm-7.1.0/libexec/amdsmi_cli/_version.py"),
            "__version__ = \"26.2.0+0123abcd\"\n",
        )
        .unwrap()
    });
    assert!(!has(&newer));
    let older = variant(&|d| {
        std::fs::write(
            d.join("opt/rocm-7.1.0/libexec/amdsmi_cli/_version.py"),
            "__version__ = \"25.5.1\"\n",
        )
        .unwrap()
    });
    assert!(has(&older));
    let module =
        variant(&|d| std::fs::write(d.join("sys/module/amdgpu/initstate"), "live\n").unwrap());
    assert!(!has(&module));
}

/// Held-out round 10: a user not in the render group whose environment also carries a wrong
/// HSA_OVERRIDE_GFX_VERSION has two faults. The access failure stays the root cause; the
/// override is still judged (the topology is readable), reported as a fault of its own with its
/// own remedy, and the first line counts it. What needs the device (the workload verdict)
/// follows from the access failure.
#[test]
fn a_fault_above_an_access_failure_is_still_reported_as_its_own() {
    let dir = rocm_probe_tests::copy_fixture_with_env(
        "kfd-permission-denied",
        &[("HSA_OVERRIDE_GFX_VERSION", "10.3.0")],
    );
    let r = Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default());
    assert_eq!(r.verdict.root_cause, Some("driver.kfd-permission-denied"));
    assert_eq!(r.exit_code(false), 1);
    let o = finding(&r, "runtime.hsa-override-wrong-family");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.caused_by, None, "{o:#?}");
    assert!(o.remedy.is_some());
    assert!(r.separate_problems() >= 1);
    assert_eq!(
        finding(&r, "workloads.compute").caused_by,
        Some("driver.kfd-permission-denied")
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.gpu-checks-skipped"),
        "an access failure does not silence the GPU checks"
    );

    // Without the override the same machine has nothing separate to count.
    let r = report("kfd-permission-denied");
    assert_eq!(r.separate_problems(), 0, "{:#?}", r.findings);
    // A failure that is not one of access still silences the GPU checks (libhsakmt missing,
    // with a GPU in KFD): layer 4 says which layer stopped it.
    let r = report("active-thunk-missing");
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "runtime.gpu-checks-skipped")
    );
}

/// Held-out round 10: an RX 9070 XT on a kernel too old for it, whose firmware is missing too.
/// The kernel is fixed first (its amdgpu never asks for the files): it is the root cause, its
/// remedy names the firmware as well, and the firmware is the next problem, not the cause.
#[test]
fn a_kernel_too_old_comes_before_the_firmware_it_never_asked_for() {
    let dir = rocm_probe_tests::copy_fixture("rx9070-firmware-missing");
    std::fs::write(
        dir.path().join("proc/sys/kernel/osrelease"),
        "6.8.0-53-generic\n",
    )
    .unwrap();
    let r = Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default());
    assert_eq!(r.verdict.root_cause, Some("driver.kernel-too-old"));
    let k = finding(&r, "driver.kernel-too-old");
    assert!(
        k.remedy.as_deref().unwrap().contains("firmware"),
        "{:?}",
        k.remedy
    );
    let fw = finding(&r, "driver.firmware-missing");
    assert!(fw.summary.contains("also lacks"), "{}", fw.summary);
    assert!(r.separate_problems() >= 1);
    // On a kernel that drives it, the missing firmware is the cause, as before.
    let r = report("rx9070-firmware-missing");
    assert_eq!(r.verdict.root_cause, Some("driver.firmware-missing"));
    assert!(
        !finding(&r, "driver.firmware-missing")
            .summary
            .contains("also lacks")
    );
}

/// Held-out round 11: an MxGPU host (the physical function bound to `gim`, a virtual function
/// to `vfio-pci`, amdgpu blacklisted as AMD's host setup asks) is a virtualization host, not a
/// broken ROCm machine: no failure, and no `modprobe amdgpu` remedy that would break it. A GPU
/// bound to a driver that does not hold it for VMs is still a failure.
#[test]
fn an_mxgpu_host_is_not_a_broken_rocm_machine() {
    let r = report("mxgpu-host-gim-mi300x");
    assert!(
        r.findings.iter().all(|f| f.status < Status::Warn),
        "{:#?}",
        r.findings
    );
    assert_eq!(finding(&r, "driver.amdgpu-not-loaded").status, Status::Info);
    assert_eq!(r.exit_code(false), 3);

    let dir = rocm_probe_tests::copy_fixture("mxgpu-host-gim-mi300x");
    let pci = dir.path().join("sys/bus/pci");
    std::fs::create_dir_all(pci.join("drivers/radeon")).unwrap();
    let link = pci.join("devices/0000:05:00.0/driver");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("../../drivers/radeon", &link).unwrap();
    let r = Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default());
    assert_eq!(r.exit_code(false), 1, "{:?}", r.verdict);
}
