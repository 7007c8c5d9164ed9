//! Layer 9 (workloads): verdicts derived from the layers below and the real topologies.

use std::path::Path;

use rocm_probe::finding::{Layer, Status};
use rocm_probe::report::expect::Expectations;
use rocm_probe::{Facts, Source};

use rocm_probe_tests::{copy_fixture, evidence, finding, fixtures_dir, report};

fn report_of(dir: &Path) -> rocm_probe::Report {
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    rocm_probe::Report::from_facts(&facts, Default::default())
}

/// Rewrites one `key value` line of a KFD properties file.
fn set_property(file: &Path, key: &str, value: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.split_whitespace().next() == Some(key) {
                format!("{key} {value}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(file, out.join("\n") + "\n").unwrap();
}

#[test]
fn two_complete_hives_joined_by_pcie() {
    let r = report("mi210-xgmi-8gpu");
    let m = finding(&r, "workloads.multi-gpu");
    assert_eq!(m.status, Status::Pass);
    // 2 hives of 4: 2 × 6 XGMI pairs; 4 × 4 pairs across the hives over PCIe P2P.
    assert!(
        m.summary
            .starts_with("8 physical GPUs: 12 pair(s) XGMI; 16 pair(s) PCIe P2P;"),
        "{}",
        m.summary
    );
    assert_eq!(
        m.summary.matches("4 GPUs, all pairs XGMI").count(),
        2,
        "{}",
        m.summary
    );
    // The installs were not captured: RCCL's absence is not claimed.
    assert!(m.summary.ends_with("RCCL unknown (installs not captured)"));
    assert!(r.findings.iter().all(|f| f.id != "workloads.no-rccl"));
    assert_eq!(finding(&r, "workloads.compute").status, Status::Pass);
}

#[test]
fn a_hive_missing_a_link_is_described_and_the_pair_without_p2p_warns() {
    let dir = copy_fixture("mi210-xgmi-8gpu");
    let nodes = dir.path().join("sys/class/kfd/kfd/topology/nodes");
    // Node 2's XGMI link to node 3 (io_links/1) and node 3's back (io_links/1) become PCIe
    // links flagged "no P2P DMA": the hive misses the 2–3 pair, and that pair has no P2P path.
    // (KFD itself links every pair of a hive; only an SR-IOV host's policy leaves a gap, so the
    // gap is described, and warned about through the missing P2P path, not as a fault of its own.)
    for n in [2, 3] {
        let link = nodes.join(format!("{n}/io_links/1/properties"));
        set_property(&link, "type", "2");
        set_property(&link, "flags", "17");
    }
    let r = report_of(dir.path());
    let p2p = finding(&r, "workloads.no-p2p");
    assert!(
        p2p.summary.starts_with("1 of 28 GPU pair(s)"),
        "{}",
        p2p.summary
    );
    let m = finding(&r, "workloads.multi-gpu");
    assert_eq!(m.status, Status::Warn);
    assert_eq!(m.caused_by, Some("workloads.no-p2p"));
    assert!(
        m.summary.contains("4 GPUs, 1 pair(s) without XGMI"),
        "{}",
        m.summary
    );
    assert!(
        m.summary.contains("1 pair(s) host memory only"),
        "{}",
        m.summary
    );
    // Conformance that wants whole hives names the gap, read from the topology itself.
    let facts = Facts::collect(&Source::fixture(dir.path()).unwrap());
    let want = Expectations::parse("[gpus]\nxgmi_hive_complete = true\n", "t.toml").unwrap();
    let unmet = want.check(&facts, &r.findings);
    assert_eq!(unmet.len(), 1, "{unmet:?}");
    assert_eq!(unmet[0].id, "hardware.expect-gpus");
    assert!(
        unmet[0]
            .summary
            .contains("has no XGMI link between GPU pair(s)"),
        "{}",
        unmet[0].summary
    );
    let whole = Facts::collect(&Source::fixture(fixtures_dir().join("mi210-xgmi-8gpu")).unwrap());
    assert!(want.check(&whole, &[]).is_empty());
}

#[test]
fn llm_fit_from_the_real_7900_xtx() {
    let r = report("rx7900xtx");
    let f = finding(&r, "workloads.llm-fit");
    assert_eq!(f.status, Status::Info);
    // 24 GiB: 0.8 × 25.77e9 / 2 ≈ 10.3B parameters.
    assert_eq!(
        f.summary,
        "fp16/bf16 weights: one GPU (24.0 GiB) ≈ 10.3B parameters (8B models fit, 14B do not)"
    );
    assert!(evidence(f, "rule").unwrap().contains("≤ 80% of memory"));
}

#[test]
fn llm_fit_skips_without_memory_sizes() {
    let r = report("mi300x-cpx-8gpu");
    let f = finding(&r, "workloads.llm-fit");
    assert_eq!(f.status, Status::Skip);
    assert_eq!(f.evidence.len(), 8);
}

#[test]
fn compute_follows_the_worst_of_layers_1_to_5() {
    let r = report("mi300x-cpx-8gpu");
    let c = finding(&r, "workloads.compute");
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.caused_by, Some("hardware.partition-missing"));
    // A failure below: compute fails and no other verdict repeats it.
    let r = report("rocblas-no-gfx1103");
    let c = finding(&r, "workloads.compute");
    assert_eq!(c.status, Status::Fail);
    assert_eq!(c.caused_by, Some("libraries.rocblas-no-kernels-for-target"));
    let own: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.layer == Layer::Workloads)
        .map(|f| f.id)
        .collect();
    assert_eq!(own, ["workloads.compute"]);
    // No GPU: no verdict at all.
    let r = report("no-amdgpu");
    assert!(r.findings.iter().all(|f| f.layer != Layer::Workloads));
}

#[test]
fn a_wheel_without_the_gpus_target_is_not_ready() {
    let r = report("torch-no-gfx1103");
    let w = finding(&r, "workloads.framework");
    assert_eq!(w.status, Status::Fail);
    assert_eq!(w.caused_by, Some("frameworks.no-code-object-for-target"));
    assert!(
        w.summary.starts_with(
            "PyTorch 2.4.1+rocm6.1 in /usr/local/lib/python3.12/dist-packages: not ready"
        ),
        "{}",
        w.summary
    );
    let f = finding(&r, "frameworks.no-code-object-for-target");
    assert_eq!(
        evidence(f, "/torch/lib/libtorch_hip.so").as_deref(),
        Some("1 bundle(s), 5 code object(s); targets: gfx900, gfx906, gfx908, gfx90a, gfx1030")
    );
    assert!(f.remedy.as_deref().unwrap().contains("PYTORCH_ROCM_ARCH"));
}

#[test]
fn a_cpu_wheel_is_ready_with_caveats() {
    let r = report("torch-cpu-mi300x");
    let w = finding(&r, "workloads.framework");
    assert_eq!(w.status, Status::Warn);
    assert!(
        w.evidence
            .iter()
            .any(|e| e.source == "finding:frameworks.torch-cpu-build"),
        "{:#?}",
        w.evidence
    );
}

/// Issue 15: an estimate excludes what the report advises hiding. Beside a discrete GPU the
/// integrated one is to be hidden (`runtime.igpu-beside-dgpu`), so the LLM fit counts the
/// discrete GPU alone — not the 780M's 29.3 GiB of GTT as "one GPU", nor both together; a GPU
/// a device mask hides is not counted either.
#[test]
fn llm_fit_counts_only_the_gpus_a_program_would_use() {
    for name in ["igpu-beside-dgpu", "igpu-hidden-by-mask"] {
        let r = report(name);
        let fit = finding(&r, "workloads.llm-fit");
        assert!(
            fit.summary.contains("one GPU (24.0 GiB)") && !fit.summary.contains("all 2 GPUs"),
            "{name}: {}",
            fit.summary
        );
        assert!(
            fit.summary.contains("1 GPU agent(s) not counted"),
            "{}",
            fit.summary
        );
        assert_eq!(
            evidence(fit, "/sys/class/kfd/kfd/topology/nodes/2/mem_banks").as_deref(),
            Some("25769803776 bytes"),
            "{name}"
        );
    }
}

/// `hardware.vram-nearly-full` names the ROCm processes holding the VRAM, largest first, and
/// what no ROCm process accounts for. The fixture's MI50 capture has no KFD process list (its
/// finding says only how much is in use); here two processes are added to a copy: KFD's
/// `proc/<pid>/vram_<gpu_id>` and `/proc/<pid>/comm`, as the kernel lays them out.
#[test]
fn a_full_vram_names_the_processes_that_hold_it() {
    let dir = copy_fixture("vram-nearly-full-mi50");
    let root = dir.path();
    let node = root.join("sys/class/kfd/kfd/topology/nodes/1");
    std::fs::write(node.join("gpu_id"), "35616\n").unwrap();
    for (pid, comm, bytes) in [(4242u32, "ollama", 12u64 << 30), (5151, "python3", 3 << 30)] {
        let kfd = root.join(format!("sys/class/kfd/kfd/proc/{pid}"));
        std::fs::create_dir_all(&kfd).unwrap();
        std::fs::write(kfd.join("vram_35616"), format!("{bytes}\n")).unwrap();
        let proc_dir = root.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::write(proc_dir.join("comm"), format!("{comm}\n")).unwrap();
    }
    let r = report_of(root);
    let f = finding(&r, "hardware.vram-nearly-full");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(
        f.summary,
        "GPU 0 (0000:63:00.0, ROCr 0): 15.8 GiB of 16.0 GiB VRAM already in use (99%), 15.0 GiB \
         of it by 2 ROCm process(es): a job started now has less than a tenth left"
    );
    let sources: Vec<&str> = f.evidence.iter().map(|e| e.source.as_str()).collect();
    assert_eq!(
        sources[1..3],
        [
            "/sys/class/kfd/kfd/proc/4242/vram_35616",
            "/sys/class/kfd/kfd/proc/5151/vram_35616"
        ]
    );
    assert_eq!(
        evidence(f, "/proc/4242/vram_35616").as_deref(),
        Some("ollama (pid 4242): 12.0 GiB")
    );
    assert_eq!(
        evidence(f, "minus ROCm processes'").as_deref(),
        Some(
            "0.8 GiB held outside ROCm (graphics, the display, other drivers): hipMemGetInfo \
             does not count it"
        )
    );

    // The same GPU with an empty KFD process list: nobody in ROCm holds it.
    for pid in [4242, 5151] {
        std::fs::remove_dir_all(root.join(format!("sys/class/kfd/kfd/proc/{pid}"))).unwrap();
    }
    let r = report_of(root);
    let f = finding(&r, "hardware.vram-nearly-full");
    assert!(
        f.summary.contains("and no ROCm process holds it"),
        "{}",
        f.summary
    );

    // Below 90% in use: no finding.
    let used = root.join("sys/class/drm/card0/device/mem_info_vram_used");
    std::fs::write(&used, format!("{}\n", 17_163_091_968u64 * 89 / 100)).unwrap();
    let r = report_of(root);
    assert!(
        !r.findings
            .iter()
            .any(|f| f.id == "hardware.vram-nearly-full"),
        "{:?}",
        r.findings.iter().map(|f| f.id).collect::<Vec<_>>()
    );
}
