//! Layers 3 and 4 (thunk, runtime), passively: beyond `[expect]` (checked by the sweep), the key
//! evidence and remedy of each scenario, what the healthy captures say, and the install
//! collector on the live machine.

use rocm_probe::facts::install::InstallFacts;
use rocm_probe::finding::{Finding, Layer, Status};
use rocm_probe::report::Options;
use rocm_probe::{Report, Source};

use rocm_probe_tests::{evidence, finding, report};

fn remedy(f: &Finding) -> &str {
    f.remedy
        .as_deref()
        .unwrap_or_else(|| panic!("{} has no remedy", f.id))
}

#[test]
fn healthy_rocm_install_passes_layers_3_and_4() {
    let r = report("rocm-6.2-mi210");
    assert_eq!(r.verdict.root_layer, 0);
    let installs = finding(&r, "runtime.installs-found");
    assert_eq!(installs.status, Status::Pass);
    assert!(
        installs.summary.contains("ROCm 6.2.0 at /opt/rocm-6.2.0"),
        "{}",
        installs.summary
    );
    assert_eq!(
        evidence(installs, "/opt/rocm").as_deref(),
        Some("→ ../etc/alternatives/rocm → ../../opt/rocm-6.2.0")
    );
    assert!(
        evidence(installs, "/opt/rocm/lib/libhsa-runtime64.so.1").is_none(),
        "ROCr is probed at the install, not through the /opt/rocm link"
    );
    assert_eq!(
        evidence(installs, "/opt/rocm-6.2.0/lib/libhsa-runtime64.so.1").as_deref(),
        Some("libhsa-runtime64.so.1 → libhsa-runtime64.so.1.13.60200")
    );
    let thunk = finding(&r, "thunk.built-into-rocr");
    assert_eq!(thunk.status, Status::Pass);
    let supported = finding(&r, "runtime.target-supported");
    assert!(
        supported.summary.contains("gfx90a"),
        "{}",
        supported.summary
    );
    assert!(
        evidence(supported, "support table")
            .unwrap()
            .contains("docs-6.2.0/reference/system-requirements.html")
    );
    // No GPU-level complaint on a homogeneous Instinct node.
    assert!(
        r.findings
            .iter()
            .all(|f| f.status <= Status::Pass || !matches!(f.layer, Layer::Thunk | Layer::Runtime))
    );
}

#[test]
fn chained_masks_that_hide_every_gpu_fail_with_the_entry_named() {
    let r = report("visible-devices-out-of-range");
    assert_eq!(
        r.verdict.root_cause,
        Some("runtime.visible-devices-out-of-range")
    );
    let f = finding(&r, "runtime.visible-devices-out-of-range");
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("no GPU"), "{}", f.summary);
    let hip = evidence(f, "env:HIP_VISIBLE_DEVICES").unwrap();
    assert!(
        hip.contains("entry \"1\" is out of range: 1 GPU is visible to HIP"),
        "{hip}"
    );
    assert_eq!(evidence(f, "HIP devices").as_deref(), Some("no GPU"));
    assert_eq!(
        evidence(f, "ROCr devices").as_deref(),
        Some("0: GPU 1 (0000:43:00.0, ROCr 1) gfx90a GPU-51276ac12ce05db3")
    );
    assert!(remedy(f).contains("use one mask only"), "{}", remedy(f));
}

#[test]
fn mixed_installs_name_both_and_the_reference_to_drop() {
    let r = report("rocm-mixed-installs");
    let f = finding(&r, "runtime.mixed-installs");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(
        evidence(f, "/opt/rocm-6.0.0").as_deref(),
        Some("via LD_LIBRARY_PATH (/opt/rocm-6.0.0/lib)")
    );
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0").as_deref(),
        Some("via /opt/rocm, /etc/ld.so.conf.d/rocm.conf (/opt/rocm/lib), ROCM_PATH")
    );
    assert!(
        remedy(f).contains("Keep ROCm 6.2.0 at /opt/rocm-6.2.0")
            && remedy(f).contains("remove /opt/rocm-6.0.0/lib from LD_LIBRARY_PATH"),
        "{}",
        remedy(f)
    );
    // LD_LIBRARY_PATH comes first: the process loads 6.0.0, and that is the release checked.
    let installs = finding(&r, "runtime.installs-found");
    assert!(
        installs
            .summary
            .contains("loads libhsa-runtime64.so.1 from /opt/rocm-6.0.0/lib (LD_LIBRARY_PATH)"),
        "{}",
        installs.summary
    );
    assert!(
        finding(&r, "runtime.target-supported")
            .summary
            .contains("ROCm 6.0.0")
    );
}

#[test]
fn no_rocm_is_a_layer_4_failure_and_the_thunk_is_not_judged() {
    let r = report("no-rocm-userspace");
    assert_eq!(r.verdict.root_cause, Some("runtime.no-rocm"));
    let f = finding(&r, "runtime.no-rocm");
    assert_eq!(evidence(f, "/opt/rocm*").as_deref(), Some("(absent)"));
    assert!(
        evidence(f, "library search path")
            .unwrap()
            .starts_with("/usr/local/lib:/usr/local/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu")
    );
    assert!(remedy(f).contains("amdgpu-install --usecase=rocm"));
    assert_eq!(finding(&r, "thunk.no-runtime").status, Status::Skip);
}

#[test]
fn debian_packages_use_the_shared_thunk_and_skip_the_support_table() {
    let r = report("debian-rocm-5.2");
    // ROCr 5.2 knows no gfx1100: the GPU is dropped, whatever the support table says.
    assert_eq!(r.exit_code(false), 1);
    assert_eq!(r.verdict.root_cause, Some("runtime.rocr-unknown-target"));
    let k = finding(&r, "runtime.rocr-unknown-target");
    assert!(
        k.summary.contains("ROCm 5.2's ROCr does not know gfx1100"),
        "{}",
        k.summary
    );
    assert!(
        evidence(k, "ROCr ISA registry")
            .unwrap()
            .contains("ROCR-Runtime/blob/rocm-5.0.0/src/core/runtime/isa.cpp")
    );
    assert!(
        remedy(k).starts_with("Install ROCm 5.3 or later"),
        "{}",
        remedy(k)
    );
    assert_eq!(finding(&r, "workloads.compute").caused_by, Some(k.id));
    let t = finding(&r, "thunk.libhsakmt-shared");
    assert_eq!(
        evidence(t, "/lib/x86_64-linux-gnu/libhsakmt.so.1").as_deref(),
        Some("libhsakmt.so.1 → libhsakmt.so.1.0.6")
    );
    let i = finding(&r, "runtime.installs-found");
    assert!(i.summary.starts_with("ROCm 5.2 at /usr"), "{}", i.summary);
    assert!(
        evidence(i, "/usr")
            .unwrap()
            .contains("ROCm 5.2 (from /lib/x86_64-linux-gnu/libamdhip64.so.5)")
    );
    let u = finding(&r, "runtime.release-unknown");
    assert_eq!(u.status, Status::Skip);
    assert!(u.summary.contains("5.2 is not in the support table"));
}

#[test]
fn a_missing_shared_thunk_is_the_root_cause_in_layer_3() {
    let r = report("thunk-missing");
    assert_eq!(r.verdict.root_cause, Some("thunk.missing"));
    let f = finding(&r, "thunk.missing");
    assert!(f.summary.contains("ROCm 3.9.1"), "{}", f.summary);
    assert_eq!(
        evidence(f, "/opt/rocm-3.9.1/lib/libhsakmt.so.1").as_deref(),
        Some("(absent)")
    );
    assert!(remedy(f).contains("same release"), "{}", remedy(f));
    // The runtime layer says nothing about GPUs: the thunk failed first.
    let skipped = finding(&r, "runtime.gpu-checks-skipped");
    assert_eq!(skipped.caused_by, Some("thunk.missing"));
}

#[test]
fn unsupported_target_names_the_release_and_its_source() {
    let r = report("rocm-target-unsupported");
    let f = finding(&r, "runtime.target-unsupported");
    assert_eq!(f.status, Status::Warn);
    assert!(f.summary.contains("gfx1103"), "{}", f.summary);
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/.info/version").as_deref(),
        Some("6.2.0")
    );
    assert!(
        remedy(f).contains("gfx942, gfx90a, gfx908, gfx1100, gfx1030"),
        "{}",
        remedy(f)
    );
}

#[test]
fn override_within_the_family_warns_and_across_families_fails() {
    let r = report("hsa-override-same-family");
    assert_eq!(r.exit_code(false), 0);
    let f = finding(&r, "runtime.hsa-override-same-family");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary
            .contains("the gfx1103 GPU 0 (0000:64:00.0, ROCr 0) as gfx1100")
    );
    // The unsupported target is information while the override maps it onto gfx1100.
    assert_eq!(
        finding(&r, "runtime.target-unsupported").status,
        Status::Info
    );

    let r = report("hsa-override-wrong-family");
    assert_eq!(
        r.verdict.root_cause,
        Some("runtime.hsa-override-wrong-family")
    );
    let f = finding(&r, "runtime.hsa-override-wrong-family");
    assert_eq!(
        evidence(f, "env:HSA_OVERRIDE_GFX_VERSION").as_deref(),
        Some("11.0.0")
    );
    assert_eq!(
        evidence(f, "/nodes/1").as_deref(),
        Some("gfx1150 AMD Radeon 880M Graphics")
    );
    assert!(remedy(f).contains("11.5.1 = gfx1151"), "{}", remedy(f));
    // ROCm 6.4.1 has the thunk inside ROCr.
    assert!(
        finding(&r, "thunk.built-into-rocr")
            .summary
            .contains("part of ROCr since 6.3")
    );
}

/// ROCm/legacy-rocm-build#5069: one global override set for an RX 6600 breaks the RX 9060 XT
/// beside it. The remedy moves the value to the 6600's node instead of only unsetting it (which
/// would leave the 6600 without code); without a GPU the value suits, it stays "unset".
#[test]
fn a_global_override_meant_for_one_gpu_moves_to_its_node() {
    let r = report("hsa-override-global-9060xt-rx6600");
    assert_eq!(
        r.verdict.root_cause,
        Some("runtime.hsa-override-wrong-family")
    );
    let f = finding(&r, "runtime.hsa-override-wrong-family");
    assert!(f.summary.contains("gfx1200"), "{}", f.summary);
    assert!(
        remedy(f).contains("meant for GPU 1 (0000:86:00.0, ROCr 1)")
            && remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_2=10.3.0"),
        "{}",
        remedy(f)
    );
    let commands: Vec<&str> = f
        .remedy_steps
        .iter()
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert_eq!(
        commands,
        [
            "unset HSA_OVERRIDE_GFX_VERSION",
            "export HSA_OVERRIDE_GFX_VERSION_2=10.3.0"
        ]
    );

    // One GPU, of another family than the value: nothing to move it to.
    let r = report("hsa-override-wrong-family");
    let f = finding(&r, "runtime.hsa-override-wrong-family");
    let commands: Vec<&str> = f
        .remedy_steps
        .iter()
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert_eq!(commands, ["unset HSA_OVERRIDE_GFX_VERSION"]);
}

/// ROCm/TheRock#2991: gfx1151's VGPR bug needs ROCm 7.2 and a kernel whose KFD exports
/// `cwsr_size`. The finding says which half is missing, and goes once both are there.
#[test]
fn a_release_amd_names_as_bad_for_the_gpu_is_judged_with_its_kernel_half() {
    use rocm_probe_tests::copy_fixture;
    let summary = |dir: &std::path::Path| {
        let r = Report::collect(&Source::fixture(dir).unwrap(), Options::default());
        r.findings
            .iter()
            .find(|f| f.id == "runtime.release-known-bad")
            .map(|f| (f.summary.clone(), remedy(f).to_owned()))
    };
    // ROCm 7.0.2, kernel without the property: both halves.
    let (s, remedy_text) = summary(&rocm_probe_tests::fixtures_dir().join("strix-halo-rocm-7.0.2"))
        .expect("7.0.2 on gfx1151 is flagged");
    assert!(
        s.contains("ROCm 7.0.2") && s.contains("fixed in ROCm 7.2"),
        "{s}"
    );
    assert!(remedy_text.contains("cwsr_size"), "{remedy_text}");

    // ROCm 7.2.1 on the same kernel: the runtime half is there, the kernel's is not.
    let t = copy_fixture("strix-halo-rocm-7.0.2");
    let opt = t.path().join("opt");
    std::fs::rename(opt.join("rocm-7.0.2"), opt.join("rocm-7.2.1")).unwrap();
    std::fs::write(opt.join("rocm-7.2.1/.info/version"), "7.2.1\n").unwrap();
    let alt = t.path().join("etc/alternatives/rocm");
    std::fs::remove_file(&alt).unwrap();
    std::os::unix::fs::symlink("../../opt/rocm-7.2.1", &alt).unwrap();
    let (s, remedy_text) = summary(t.path()).expect("the kernel half is missing");
    assert!(
        s.contains("carries the fix") && s.contains("cwsr_size"),
        "{s}"
    );
    assert!(!remedy_text.contains("Upgrade to ROCm"), "{remedy_text}");

    // And with a KFD that reports cwsr_size: nothing to say.
    let props = t
        .path()
        .join("sys/class/kfd/kfd/topology/nodes/1/properties");
    let mut text = std::fs::read_to_string(&props).unwrap();
    text.push_str("cwsr_size 2633728\nctl_stack_size 12288\n");
    std::fs::write(&props, text).unwrap();
    assert_eq!(summary(t.path()), None);
}

#[test]
fn an_empty_override_fails_whatever_the_gpus() {
    let r = report("hsa-override-malformed");
    assert_eq!(r.verdict.root_cause, Some("runtime.hsa-override-malformed"));
    let f = finding(&r, "runtime.hsa-override-malformed");
    assert_eq!(
        evidence(f, "env:HSA_OVERRIDE_GFX_VERSION").as_deref(),
        Some("\"\"")
    );
    assert!(remedy(f).contains("do not pass it empty"), "{}", remedy(f));
    assert_eq!(finding(&r, "driver.container").status, Status::Info);
}

#[test]
fn igpu_beside_dgpu_names_the_mask_by_index_and_uuid() {
    let r = report("igpu-beside-dgpu");
    assert_eq!(r.verdict.root_cause, Some("runtime.igpu-beside-dgpu"));
    let f = finding(&r, "runtime.igpu-beside-dgpu");
    assert_eq!(
        evidence(f, "/nodes/1").as_deref(),
        Some("gfx1103 AMD Radeon 780M Graphics, integrated")
    );
    assert_eq!(
        evidence(f, "/nodes/2").as_deref(),
        Some("gfx1100, discrete, GPU-a1ffc9d1799c317f")
    );
    let m = remedy(f);
    assert!(m.starts_with("export HIP_VISIBLE_DEVICES=1 "), "{m}");
    assert!(
        m.contains("ROCR_VISIBLE_DEVICES=GPU-a1ffc9d1799c317f"),
        "{m}"
    );
    assert!(
        finding(&r, "runtime.target-supported")
            .summary
            .contains("gfx1100 on GPU 1 (0000:86:00.0, ROCr 1)")
    );

    let r = report("hsa-override-igpu");
    let f = finding(&r, "runtime.hsa-override-igpu");
    // The per-node alternative is for the iGPU's node: the dGPU (node 2) needs no override.
    assert!(
        remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_1=11.0.0"),
        "{}",
        remedy(f)
    );
    assert_eq!(
        finding(&r, "runtime.hsa-override-redundant").status,
        Status::Info
    );
    assert!(
        finding(&r, "runtime.hsa-override-same-family")
            .summary
            .contains("gfx1103")
    );
}

#[test]
fn healthy_captures_without_installs_skip_layers_3_and_4() {
    for name in [
        "mi300x-cpx-8gpu",
        "mi308x-cpx-8gpu",
        "mi210-xgmi-8gpu",
        "mi25-2018",
        "apu-phoenix-780m",
        "apu-strixpoint",
        "apu-vangogh",
        "rx7900xtx",
        "dkms-out-of-tree-driver",
        "render-node-missing",
        "mi308x-busy",
    ] {
        let r = report(name);
        assert_eq!(r.exit_code(false), 0, "{name}");
        assert_eq!(
            finding(&r, "thunk.not-captured").status,
            Status::Skip,
            "{name}"
        );
        assert_eq!(
            finding(&r, "runtime.not-captured").status,
            Status::Skip,
            "{name}"
        );
        let layer4: Vec<&str> = r
            .findings
            .iter()
            .filter(|f| f.layer == Layer::Runtime)
            .map(|f| f.id)
            .collect();
        assert_eq!(layer4, ["runtime.not-captured"], "{name}");
    }
}

#[test]
fn the_live_machine_always_has_its_install_sources() {
    let (facts, _) = rocm_probe::facts::collect::<InstallFacts>(
        &Source::live(),
        &std::collections::BTreeMap::new(),
    );
    assert!(facts.captured);
    // The loader's default directories are always part of the search order.
    assert!(
        facts
            .search_path
            .iter()
            .any(|d| d.dir == "/usr/lib" && d.origin == "default")
    );
}

/// A copy of a fixture (symlinks kept) whose `[env]` is replaced, for variants that need no
/// fixture of their own.
fn variant(name: &str, env: &[(&str, &str)]) -> (tempfile::TempDir, Report) {
    variant_with(name, env, |_| {})
}

/// [`variant`], with the copy changed by `edit` before the report is made.
fn variant_with(
    name: &str,
    env: &[(&str, &str)],
    edit: impl FnOnce(&std::path::Path),
) -> (tempfile::TempDir, Report) {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
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
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    copy(&rocm_probe_tests::fixtures_dir().join(name), &dir);
    let toml = std::fs::read_to_string(dir.join("fixture.toml")).unwrap();
    let (head, _) = toml.split_once("[expect]").unwrap();
    let head = head.split("[env]").next().unwrap();
    let env: String = env.iter().map(|(k, v)| format!("{k} = {v:?}\n")).collect();
    std::fs::write(dir.join("fixture.toml"), format!("{head}\n[env]\n{env}")).unwrap();
    edit(&dir);
    let r = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
    (tmp, r)
}

#[test]
fn env_variants_on_a_healthy_node() {
    // An override naming no processor: ROCr cannot create the agents.
    let (_t, r) = variant("rocm-6.2-mi210", &[("HSA_OVERRIDE_GFX_VERSION", "11.0.5")]);
    let f = finding(&r, "runtime.hsa-override-unknown-target");
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("gfx1105"), "{}", f.summary);
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.target-supported")
    );

    // A range is not understood by ROCr: nothing is selected.
    let (_t, r) = variant("rocm-6.2-mi210", &[("ROCR_VISIBLE_DEVICES", "0-3")]);
    let f = finding(&r, "runtime.visible-devices-out-of-range");
    assert_eq!(f.status, Status::Fail);
    assert!(
        evidence(f, "env:ROCR_VISIBLE_DEVICES")
            .unwrap()
            .contains("ranges are not supported"),
        "{f:#?}"
    );

    // A unique UUID prefix selects one GPU; HIP then sees it as device 0.
    let (_t, r) = variant("rocm-6.2-mi210", &[("ROCR_VISIBLE_DEVICES", "GPU-93bb")]);
    let f = finding(&r, "runtime.visible-devices-mask");
    assert_eq!(f.status, Status::Info);
    assert_eq!(
        evidence(f, "HIP devices").as_deref(),
        Some("0: GPU 2 (0000:03:00.0, ROCr 2) gfx90a GPU-93bb3629c01aea1c")
    );

    // One bad entry drops it and every entry after it, but GPUs remain: a warning.
    let (_t, r) = variant("rocm-6.2-mi210", &[("HIP_VISIBLE_DEVICES", "0,9,1")]);
    let f = finding(&r, "runtime.visible-devices-out-of-range");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary.contains("HIP programs see 1 of 8 GPUs"),
        "{}",
        f.summary
    );

    // ROCM_PATH naming nothing, and a second install reached through it.
    let (_t, r) = variant("rocm-6.2-mi210", &[("ROCM_PATH", "/opt/rocm-5.7.1")]);
    let f = finding(&r, "runtime.rocm-path-invalid");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(remedy(f), "Set ROCM_PATH=/opt/rocm-6.2.0 or unset it.");
}

#[test]
fn igpu_variants() {
    // The iGPU hidden by ROCR_VISIBLE_DEVICES: no iGPU warning, the mask is reported.
    let (_t, r) = variant("igpu-beside-dgpu", &[("ROCR_VISIBLE_DEVICES", "1")]);
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.igpu-beside-dgpu")
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.target-unsupported")
    );
    let f = finding(&r, "runtime.visible-devices-mask");
    assert_eq!(
        evidence(f, "HIP devices").as_deref(),
        Some("0: GPU 1 (0000:86:00.0, ROCr 1) gfx1100 GPU-a1ffc9d1799c317f")
    );

    // A mask that keeps both: the remedy switches to ROCR_VISIBLE_DEVICES by UUID.
    let (_t, r) = variant("igpu-beside-dgpu", &[("HIP_VISIBLE_DEVICES", "1,0")]);
    let f = finding(&r, "runtime.igpu-beside-dgpu");
    assert!(
        remedy(f).starts_with(
            "export ROCR_VISIBLE_DEVICES=GPU-a1ffc9d1799c317f and unset HIP_VISIBLE_DEVICES"
        ),
        "{}",
        remedy(f)
    );
}

/// Each GPU's override follows libhsakmt's topology_sysfs_get_node_props: its own
/// HSA_OVERRIDE_GFX_VERSION_<node> first, else the global variable; a value is judged only where
/// some GPU reads it.
#[test]
fn per_node_overrides_follow_libhsakmt() {
    const BLOG: &str = "hsa-override-per-node-rx7700xt-rx6600";
    let r = report(BLOG);
    let f = finding(&r, "runtime.hsa-override-redundant");
    assert_eq!(
        evidence(f, "env:HSA_OVERRIDE_GFX_VERSION_1").as_deref(),
        Some("11.0.1")
    );
    let f = finding(&r, "runtime.hsa-override-same-family");
    assert!(
        f.summary.starts_with(
            "HSA_OVERRIDE_GFX_VERSION_2=10.3.0 runs the gfx1032 GPU 1 (0000:86:00.0, ROCr 1) as \
             gfx1030"
        ),
        "{}",
        f.summary
    );
    // Two discrete GPUs: the usual advice on a sibling override stands.
    assert!(remedy(f).starts_with("Keep it if programs run correctly"));

    // Node 1 has no variable of its own: the global one applies to it.
    let (_t, r) = variant(
        BLOG,
        &[
            ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
            ("HSA_OVERRIDE_GFX_VERSION_2", "10.3.0"),
        ],
    );
    let same: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.id == "runtime.hsa-override-same-family")
        .map(|f| f.summary.as_str())
        .collect();
    assert_eq!(same.len(), 2, "{same:?}");
    assert!(
        same.iter().any(|s| {
            s.starts_with(
                "HSA_OVERRIDE_GFX_VERSION=11.0.0 runs the gfx1101 GPU 0 (0000:64:00.0, ROCr 0) as \
                 gfx1100",
            )
        }),
        "{same:?}"
    );
    assert!(same.iter().any(|s| s.starts_with(
        "HSA_OVERRIDE_GFX_VERSION_2=10.3.0 runs the gfx1032 GPU 1 (0000:86:00.0, ROCr 1) as \
             gfx1030"
    )));

    // An empty global variable that every GPU's own variable shadows is never read ...
    let (_t, r) = variant(
        BLOG,
        &[
            ("HSA_OVERRIDE_GFX_VERSION", ""),
            ("HSA_OVERRIDE_GFX_VERSION_1", "11.0.1"),
            ("HSA_OVERRIDE_GFX_VERSION_2", "10.3.0"),
        ],
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.hsa-override-malformed")
    );
    // ... while an empty per-node variable wins over a good global one, and libhsakmt fails.
    let (_t, r) = variant(
        BLOG,
        &[
            ("HSA_OVERRIDE_GFX_VERSION", "10.3.0"),
            ("HSA_OVERRIDE_GFX_VERSION_1", ""),
        ],
    );
    let f = finding(&r, "runtime.hsa-override-malformed");
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary
            .starts_with("HSA_OVERRIDE_GFX_VERSION_1=\"\" is empty"),
        "{}",
        f.summary
    );

    // A node libhsakmt does not have: nothing reads the variable.
    let (_t, r) = variant(BLOG, &[("HSA_OVERRIDE_GFX_VERSION_5", "10.3.0")]);
    let f = finding(&r, "runtime.hsa-override-node-not-gpu");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary
            .contains("node 5, which does not exist (libhsakmt numbers 3 nodes, 0 to 2)"),
        "{}",
        f.summary
    );
    assert!(
        remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_1 for GPU 0")
            && remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_2 for GPU 1"),
        "{}",
        remedy(f)
    );
}

/// libhsakmt numbers CPU nodes and the GPUs whose render node opens: in a container given only
/// the dGPU's render node, HSA_OVERRIDE_GFX_VERSION_1 is the dGPU's (KFD node 2) — on a
/// release that reads per-node variables at all.
#[test]
fn per_node_numbers_skip_gpus_the_process_cannot_open() {
    const CONTAINER: &str = "active-container-dgpu-only";
    let env = [("HSA_OVERRIDE_GFX_VERSION_1", "11.0.0")];
    let (_t, r) = variant_with(CONTAINER, &env, |dir| {
        std::fs::write(dir.join("opt/rocm-6.2.0/.info/version"), "6.4.1\n").unwrap();
    });
    let f = finding(&r, "runtime.hsa-override-redundant");
    assert!(
        f.summary.starts_with(
            "HSA_OVERRIDE_GFX_VERSION_1=11.0.0 is gfx1100's own version: no effect on GPU 1 \
             (0000:86:00.0, ROCr 0)"
        ),
        "{}",
        f.summary
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.hsa-override-node-not-gpu")
    );
    // ROCm 6.2.0, as captured: libhsakmt reads no per-node variable.
    let (_t, r) = variant(CONTAINER, &env);
    let f = finding(&r, "runtime.hsa-override-per-node-ignored");
    assert_eq!(f.status, Status::Info);
    assert!(
        f.summary
            .starts_with("ROCm 6.2.0 does not read HSA_OVERRIDE_GFX_VERSION_1")
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.hsa-override-redundant")
    );
}

/// A global override only the iGPU needs, beside a dGPU that the report advises keeping alone:
/// no finding says "keep it", and the per-node alternative names the iGPU's node.
#[test]
fn an_override_only_the_igpu_needs_gets_one_piece_of_advice() {
    let r = report("hsa-override-igpu");
    for f in &r.findings {
        assert!(
            !f.remedy.as_deref().unwrap_or("").contains("Keep it"),
            "{}: {:?}",
            f.id,
            f.remedy
        );
    }
    // The root is the override reaching the iGPU: its remedy is the whole advice (unset the
    // override, hide the iGPU, or a per-node override), and hiding agrees with
    // runtime.igpu-beside-dgpu's.
    assert_eq!(r.verdict.root_cause, Some("runtime.hsa-override-igpu"));
    let f = finding(&r, "runtime.hsa-override-igpu");
    assert_eq!(f.caused_by, None);
    assert_eq!(finding(&r, "runtime.igpu-beside-dgpu").caused_by, None);
    assert!(
        remedy(f).starts_with("Unset HSA_OVERRIDE_GFX_VERSION (the discrete GPU 1"),
        "{}",
        remedy(f)
    );
    assert!(remedy(f).contains(
        "HSA_OVERRIDE_GFX_VERSION_1=11.0.0 (read from ROCm 6.3 on; this install is ROCm 6.2.0"
    ));
    assert!(!remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_2"));
    for id in [
        "runtime.hsa-override-same-family",
        "runtime.hsa-override-redundant",
    ] {
        assert_eq!(
            finding(&r, id).caused_by,
            Some("runtime.hsa-override-igpu"),
            "{id}"
        );
    }

    // An override the dGPU needs too (gfx1100 run as gfx1102): per node, for the dGPU.
    let (_t, r) = variant(
        "igpu-beside-dgpu",
        &[("HSA_OVERRIDE_GFX_VERSION", "11.0.2")],
    );
    let f = finding(&r, "runtime.hsa-override-igpu");
    assert!(
        remedy(f).ends_with(
            "HSA_OVERRIDE_GFX_VERSION_2=11.0.2 (read from ROCm 6.3 on; this install is ROCm 6.2.0, which ignores it)."
        ),
        "{}",
        remedy(f)
    );
}

/// A global override that suits the dGPU but is another family's for the iGPU beside it
/// (robertrosenbusch/gfx803_rocm#50: 8.0.3 for an RX 560X, reaching a Vega 8 iGPU): the iGPU's
/// wrong-family failure follows from the override reaching the iGPU, whose remedy hides the
/// iGPU and does not suggest the override for the iGPU's node (it cannot run that code).
#[test]
fn an_override_of_another_family_reaching_the_igpu_is_caused_by_reaching_it() {
    // igpu-beside-dgpu with the iGPU made a gfx1036 (Raphael's, another family than the
    // RX 7900 XTX's gfx1100), and the dGPU's own version set globally.
    let (_t, r) = variant_with(
        "igpu-beside-dgpu",
        &[("HSA_OVERRIDE_GFX_VERSION", "11.0.0")],
        |dir| {
            let props = dir.join("sys/class/kfd/kfd/topology/nodes/1/properties");
            let text = std::fs::read_to_string(&props).unwrap();
            std::fs::write(
                &props,
                text.replace("gfx_target_version 110003", "gfx_target_version 100306"),
            )
            .unwrap();
        },
    );
    let wrong = finding(&r, "runtime.hsa-override-wrong-family");
    assert_eq!(wrong.status, Status::Fail);
    assert_eq!(wrong.caused_by, Some("runtime.hsa-override-igpu"));
    assert_eq!(r.verdict.root_cause, Some("runtime.hsa-override-igpu"));
    let f = finding(&r, "runtime.hsa-override-igpu");
    assert!(
        remedy(f).starts_with("Unset HSA_OVERRIDE_GFX_VERSION (the discrete GPU 1"),
        "{}",
        remedy(f)
    );
    assert!(
        remedy(f).ends_with(
            "The iGPU cannot run gfx1100 code, another family's, with or without the override."
        ),
        "{}",
        remedy(f)
    );
    assert!(
        !remedy(f).contains("HSA_OVERRIDE_GFX_VERSION_1"),
        "{}",
        remedy(f)
    );
}

/// Layer 5 picks code objects for each GPU's own override, as libhsakmt applies it: a per-node
/// variable where the release reads it (6.3 on), else the global one.
#[test]
fn libraries_see_the_per_node_override_where_the_release_reads_it() {
    let rocblas = |r: &Report| {
        r.findings
            .iter()
            .any(|f| f.id == "libraries.rocblas-no-kernels-for-target")
    };
    // The global override makes the gfx1103 APU load rocBLAS's gfx1100 kernels.
    let (_t, r) = variant(
        "rocblas-no-gfx1103",
        &[("HSA_OVERRIDE_GFX_VERSION", "11.0.0")],
    );
    assert!(!rocblas(&r));
    // ROCm 6.2.0 ignores the per-node form: still no kernels.
    let (_t, r) = variant(
        "rocblas-no-gfx1103",
        &[("HSA_OVERRIDE_GFX_VERSION_1", "11.0.0")],
    );
    assert!(rocblas(&r));
    // The same install claiming 6.3.0 reads it for node 1, the APU.
    let (_t, r) = variant_with(
        "rocblas-no-gfx1103",
        &[("HSA_OVERRIDE_GFX_VERSION_1", "11.0.0")],
        |dir| std::fs::write(dir.join("opt/rocm-6.2.0/.info/version"), "6.3.0-39\n").unwrap(),
    );
    assert!(!rocblas(&r), "{:#?}", r.findings);
}

/// One GPU failing alone (uncorrectable RAS errors on the discrete GPU of `igpu-beside-dgpu`)
/// takes only that GPU out of the runtime's GPU checks: the iGPU is still checked against the
/// release, and the skip names the GPU out and what took it out (issue 15, per-GPU severity).
#[test]
fn one_failing_gpu_leaves_the_others_checked() {
    let machine = rocm_probe_tests::copy_fixture("igpu-beside-dgpu");
    let ras = machine.path().join("sys/class/drm/card0/device/ras");
    std::fs::create_dir_all(&ras).unwrap();
    std::fs::write(ras.join("umc_err_count"), "ue: 2\nce: 0\n").unwrap();
    let r = Report::collect(
        &Source::fixture(machine.path()).unwrap(),
        Options::default(),
    );
    let bad = finding(&r, "hardware.ras-uncorrectable");
    assert_eq!(bad.status, Status::Fail);
    let skipped = finding(&r, "runtime.gpu-checks-skipped");
    assert_eq!(skipped.caused_by, Some("hardware.ras-uncorrectable"));
    assert_eq!(skipped.subject, bad.subject);
    assert!(
        skipped.summary.contains("0000:86:00.0"),
        "{}",
        skipped.summary
    );
    // The iGPU's release check still runs; the GPU out has none.
    let unsupported = finding(&r, "runtime.target-unsupported");
    assert!(
        unsupported.summary.contains("gfx1103"),
        "{}",
        unsupported.summary
    );
    assert!(
        !r.findings
            .iter()
            .any(|f| f.id == "runtime.target-supported"),
        "the GPU out was checked"
    );
    assert_eq!(r.exit_code(false), 1);
    // Untouched, both GPUs are checked and nothing is skipped.
    let r = report("igpu-beside-dgpu");
    assert!(
        !r.findings
            .iter()
            .any(|f| f.id == "runtime.gpu-checks-skipped")
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "runtime.target-supported")
    );
}

/// The support data's streams and its end (issue 16 item 1): a TheRock preview is said to be a
/// preview in both directions, and a release past the newest row is one skipped check that names
/// the newest row and its date, not a guess.
#[test]
fn previews_are_named_and_releases_past_the_data_are_skipped() {
    let version = |v: &'static str| {
        move |dir: &std::path::Path| {
            std::fs::write(dir.join("opt/rocm-6.2.0/.info/version"), v).unwrap();
        }
    };
    // MI210 (gfx90a) on the 7.11 preview: its release notes list it.
    let (_t, r) = variant_with("rocm-6.2-mi210", &[], version("7.11.0\n"));
    let f = finding(&r, "runtime.target-supported");
    assert!(
        f.summary.starts_with(
            "ROCm 7.11 is a preview release (TheRock); its hardware list includes gfx90a"
        ),
        "{}",
        f.summary
    );
    assert!(
        f.summary.contains("not a production release"),
        "{}",
        f.summary
    );
    // 10.2 is newer than the newest row (10.1, 2026-10-05).
    let (_t, r) = variant_with("rocm-6.2-mi210", &[], version("10.2.0\n"));
    let f = finding(&r, "runtime.release-unknown");
    assert_eq!(f.status, Status::Skip);
    assert_eq!(
        f.summary,
        "ROCm 10.2.0 is newer than this probe's data (newest: 10.1, 2026-10-05): GPU support \
         not checked"
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.target-supported")
    );
    // 7.5 lies between rows (7.0 to 7.8 are production numbers AMD never used past 7.2): not in
    // the table, not "newer".
    let (_t, r) = variant_with("rocm-6.2-mi210", &[], version("7.5.0\n"));
    let f = finding(&r, "runtime.release-unknown");
    assert!(
        f.summary
            .starts_with("ROCm 7.5.0 is not in the support table"),
        "{}",
        f.summary
    );
    // Vega 10 (gfx900) on 7.11: not in that preview's hardware list.
    let (_t, r) = variant_with("rocm-smi-only-vega10", &[], |dir| {
        std::fs::write(dir.join("opt/rocm/.info/version"), "7.11.0\n").unwrap();
    });
    let f = finding(&r, "runtime.target-unsupported");
    assert!(
        f.summary.starts_with(
            "ROCm 7.11 is a preview release (TheRock) whose hardware list does not include gfx900"
        ),
        "{}",
        f.summary
    );
    assert!(
        remedy(f).contains("a preview is not a production release"),
        "{}",
        remedy(f)
    );
}

#[test]
fn a_runtime_too_old_for_the_gpu_is_told_apart_from_libraries_without_its_code() {
    // ROCr 5.7 has no gfx1150: the GPU is dropped, whatever the release's libraries carry.
    let r = report("active-rocr-5.7-too-old-gfx1150");
    assert_eq!(r.verdict.root_cause, Some("runtime.rocr-unknown-target"));
    let k = finding(&r, "runtime.rocr-unknown-target");
    assert_eq!(k.status, Status::Fail);
    assert!(
        k.summary.contains("ROCm 5.7's ROCr does not know gfx1150"),
        "{}",
        k.summary
    );
    assert!(
        remedy(k).starts_with("Install ROCm 6.1 or later"),
        "{}",
        remedy(k)
    );
    // ROCr 5.7 knows no gfx115x sibling: no override is offered.
    assert!(
        !remedy(k).contains("HSA_OVERRIDE_GFX_VERSION"),
        "{}",
        remedy(k)
    );
    assert_eq!(
        finding(&r, "runtime.rocr-agent-missing").caused_by,
        Some("runtime.rocr-unknown-target")
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.target-unsupported")
    );
    // ROCr 6.3 knows gfx1103: the runtime is fine, rocBLAS lacks the code.
    let r = report("rocblas-no-gfx1103-rocm-6.3");
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.rocr-unknown-target")
    );
    assert_eq!(r.verdict.root_cause, Some("runtime.target-unsupported"));
    assert_eq!(
        finding(&r, "libraries.rocblas-no-kernels-for-target").caused_by,
        Some("runtime.target-unsupported")
    );
}

#[test]
fn a_wheel_with_its_own_runtime_is_not_a_missing_rocm() {
    // PyTorch's ROCm wheel carries libamdhip64 and libhsa-runtime64: no system ROCm is needed.
    let r = report("torch-wheel-only-rx7900xtx");
    assert_eq!(r.verdict.root_cause, None);
    let w = finding(&r, "runtime.wheel-runtime-only");
    assert_eq!(w.status, Status::Info);
    assert!(w.summary.contains("PyTorch 2.4.1+rocm6.1"), "{}", w.summary);
    assert!(
        evidence(w, "/usr/local/lib/python3.10/dist-packages/torch/lib")
            .is_some_and(|e| e.contains("libamdhip64.so") && e.contains("libhsa-runtime64.so"))
    );
    assert!(r.findings.iter().all(|f| f.id != "runtime.no-rocm"));
    let t = finding(&r, "thunk.no-runtime");
    assert!(
        t.summary.contains("runtime.wheel-runtime-only"),
        "{}",
        t.summary
    );
    // The same wheel without its runtime libraries cannot run: no ROCm at all.
    let (_t, r) = variant_with("torch-wheel-only-rx7900xtx", &[], |dir| {
        let lib = dir.join("usr/local/lib/python3.10/dist-packages/torch/lib");
        std::fs::remove_file(lib.join("libamdhip64.so")).unwrap();
        std::fs::remove_file(lib.join("libhsa-runtime64.so")).unwrap();
    });
    assert_eq!(r.verdict.root_cause, Some("runtime.no-rocm"));
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.wheel-runtime-only")
    );
}

#[test]
fn a_distribution_build_is_not_judged_by_amds_list() {
    // Fedora's ROCm 6.0 on gfx1103: AMD's 6.0 list lacks it, Fedora's rocBLAS has its kernels.
    let r = report("fedora-rocm-6.0-gfx1103");
    assert_eq!(r.verdict.root_cause, None);
    let f = finding(&r, "runtime.target-distribution-build");
    assert_eq!(f.status, Status::Info);
    assert!(
        f.summary.contains("distribution's own build"),
        "{}",
        f.summary
    );
    assert!(f.remedy.is_none());
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "runtime.target-unsupported")
    );
    // Without gfx1103's kernels the libraries, not AMD's list, are what fails.
    let (_t, r) = variant_with("fedora-rocm-6.0-gfx1103", &[], |dir| {
        std::fs::remove_file(dir.join("usr/lib64/rocblas/library/TensileLibrary_lazy_gfx1103.dat"))
            .unwrap();
    });
    assert_eq!(
        r.verdict.root_cause,
        Some("libraries.rocblas-no-kernels-for-target")
    );
    // The same GPU with AMD's own 6.0 under /opt is judged by AMD's list: a warning.
    let (_t, r) = variant_with("rocm-target-unsupported", &[], |_| {});
    assert_eq!(r.verdict.root_cause, Some("runtime.target-unsupported"));
}

/// The same bug in a distribution's own ROCm 7.1 (Ubuntu 26.04's archive packages in /usr): the
/// remedy also says the distribution may carry the fix and updates its own packages; AMD's
/// packages under /opt get no such sentence.
#[test]
fn a_known_bad_distribution_build_gets_the_distribution_remedy() {
    use rocm_probe_tests::copy_fixture;
    let t = copy_fixture("strix-halo-rocm-7.0.2");
    std::fs::remove_dir_all(t.path().join("opt")).unwrap();
    std::fs::remove_file(t.path().join("etc/alternatives/rocm")).unwrap();
    std::fs::remove_file(t.path().join("etc/ld.so.conf.d/rocm.conf")).unwrap();
    let lib = t.path().join("usr/lib/x86_64-linux-gnu");
    std::fs::create_dir_all(&lib).unwrap();
    for (link, file) in [
        ("libamdhip64.so.7", "libamdhip64.so.7.1.25424"),
        ("libhsa-runtime64.so.1", "libhsa-runtime64.so.1.18.0"),
    ] {
        std::fs::write(lib.join(file), b"").unwrap();
        std::os::unix::fs::symlink(file, lib.join(link)).unwrap();
    }
    let r = Report::collect(&Source::fixture(t.path()).unwrap(), Options::default());
    let f = finding(&r, "runtime.release-known-bad");
    assert!(f.summary.contains("ROCm 7.1"), "{}", f.summary);
    assert!(
        remedy(f).contains("distribution's own build"),
        "{}",
        remedy(f)
    );
    let r = report("strix-halo-rocm-7.0.2");
    let f = finding(&r, "runtime.release-known-bad");
    assert!(!remedy(f).contains("distribution"), "{}", remedy(f));
}

/// Held-out round 11 (runpod/containers#165: MI350X on a ROCm 6.4 image): for a GPU that a later
/// release lists, the remedy leads with that release and a build for the target; the
/// unsupported override is the stopgap, last.
#[test]
fn a_later_supported_release_comes_before_the_override_stopgap() {
    use rocm_probe_tests::copy_fixture;
    let t = copy_fixture("rocm-6.2-mi210");
    let opt = t.path().join("opt");
    std::fs::rename(opt.join("rocm-6.2.0"), opt.join("rocm-6.4.4")).unwrap();
    std::fs::write(opt.join("rocm-6.4.4/.info/version"), "6.4.4\n").unwrap();
    let alt = t.path().join("etc/alternatives/rocm");
    std::fs::remove_file(&alt).unwrap();
    std::os::unix::fs::symlink("../../opt/rocm-6.4.4", &alt).unwrap();
    let nodes = t.path().join("sys/class/kfd/kfd/topology/nodes");
    for n in std::fs::read_dir(&nodes).unwrap() {
        let p = n.unwrap().path().join("properties");
        let text = std::fs::read_to_string(&p).unwrap();
        // gfx90a → gfx950 (MI350X), which ROCm 7.0.0 first lists.
        std::fs::write(
            &p,
            text.replace("gfx_target_version 90010", "gfx_target_version 90500"),
        )
        .unwrap();
    }
    let r = Report::collect(&Source::fixture(t.path()).unwrap(), Options::default());
    let f = finding(&r, "runtime.target-unsupported");
    let text = remedy(f);
    let later = text
        .find("ROCm 7.0")
        .expect("names the first release that lists gfx950");
    let stopgap = text
        .find("HSA_OVERRIDE_GFX_VERSION")
        .expect("still offers the override");
    assert!(later < stopgap, "{text}");
}
