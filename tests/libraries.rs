//! Layer 5 (libraries), passively: beyond `[expect]` (checked by the sweep), the evidence and
//! remedy of each scenario, the healthy install, and silence above a broken lower layer.

use std::collections::BTreeSet;

use rocm_probe::Facts;
use rocm_probe::Source;
use rocm_probe::finding::{Layer, Status};

use rocm_probe_tests::{evidence, finding, report};

#[test]
fn healthy_install_covers_gfx90a() {
    let r = report("rocm-6.2-mi210");
    assert_eq!(r.verdict.root_layer, 0);
    assert!(
        r.findings
            .iter()
            .all(|f| f.layer != Layer::Libraries || f.status == Status::Pass)
    );
    let c = finding(&r, "libraries.coverage");
    assert_eq!(c.status, Status::Pass);
    assert!(
        c.summary.contains("ROCm 6.2.0 at /opt/rocm-6.2.0"),
        "{}",
        c.summary
    );
    assert!(
        c.summary
            .contains("rocBLAS for gfx90a (covers this machine's gfx90a)"),
        "{}",
        c.summary
    );
    assert_eq!(
        evidence(c, "/opt/rocm-6.2.0/lib/rocblas/library").as_deref(),
        Some("gfx90a")
    );
    assert_eq!(
        evidence(c, "/opt/rocm-6.2.0/share/miopen/db").as_deref(),
        Some("gfx90a")
    );
    let libs = evidence(c, "/opt/rocm-6.2.0/lib").unwrap();
    for so in [
        "librocblas.so.4",
        "libhipblas.so.2",
        "libhipblaslt.so.0",
        "libMIOpen.so.1",
    ] {
        assert!(libs.contains(so), "{libs}");
    }
}

#[test]
fn healthy_install_facts() {
    let dir = rocm_probe_tests::fixtures_dir().join("rocm-6.2-mi210");
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let libs = &facts.libraries;
    assert!(libs.captured);
    let problems = &facts.problems.libraries;
    assert!(problems.is_empty(), "{problems:?}");
    let i = &libs.installs[0];
    assert_eq!(i.prefix, "/opt/rocm-6.2.0");
    let names: Vec<&str> = i.present.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["rocblas", "hipblas", "hipblaslt", "MIOpen"]);
    let rocblas = i.rocblas.as_ref().unwrap();
    assert_eq!(rocblas.entries, 6);
    assert_eq!(rocblas.targets, BTreeSet::from(["gfx90a".to_owned()]));
    let kdb = &i.miopen.as_ref().unwrap().kdbs[0];
    assert_eq!((kdb.target.as_str(), kdb.cus), ("gfx90a", Some(104)));
}

#[test]
fn rocblas_without_the_gpus_target_fails_at_layer_5_because_the_release_lacks_it() {
    let r = report("rocblas-no-gfx1103");
    // The failure is in layer 5; its cause, the release not listing gfx1103, is the root.
    assert_eq!(r.verdict.status, Status::Fail);
    assert_eq!(r.verdict.root_layer, 4);
    assert_eq!(r.verdict.root_cause, Some("runtime.target-unsupported"));
    let f = finding(&r, "libraries.rocblas-no-kernels-for-target");
    assert_eq!(f.status, Status::Fail);
    assert_eq!(f.caused_by, Some("runtime.target-unsupported"));
    // Neither remedy offers HSA_OVERRIDE_GFX_VERSION=11.0.0, which public reports show hanging
    // gfx1103 GPUs (data/override_hazards.toml); both point at a build for gfx1103.
    let root = finding(&r, "runtime.target-unsupported")
        .remedy
        .as_deref()
        .unwrap();
    assert!(!root.contains("HSA_OVERRIDE_GFX_VERSION"), "{root}");
    assert!(root.contains("a build that targets gfx1103"), "{root}");
    assert!(
        !f.remedy
            .as_deref()
            .unwrap()
            .contains("HSA_OVERRIDE_GFX_VERSION")
    );
    assert!(
        f.summary.contains("no kernels for gfx1103"),
        "{}",
        f.summary
    );
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/lib/rocblas/library").as_deref(),
        Some("13 entries; targets: gfx90a, gfx942, gfx1030, gfx1100")
    );
    assert_eq!(
        evidence(f, "/nodes/1").as_deref(),
        Some("gfx1103 AMD Radeon 780M Graphics")
    );
    let remedy = f.remedy.as_deref().unwrap();
    assert!(
        remedy.contains("ROCm release whose rocBLAS lists"),
        "{remedy}"
    );
    // The coverage line still lists what the library has, without claiming the GPU.
    let c = finding(&r, "libraries.coverage");
    assert!(!c.summary.contains("covers"), "{}", c.summary);
}

#[test]
fn hipblas_without_rocblas_fails_at_layer_5() {
    let r = report("hipblas-without-rocblas");
    assert_eq!(r.verdict.root_layer, 5);
    let f = finding(&r, "libraries.hip-wrapper-without-backend");
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("libhipblas"), "{}", f.summary);
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/lib/libhipblas.so.2").as_deref(),
        Some("libhipblas.so.2, libhipblas.so.2.2.60200")
    );
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/lib/librocblas.so*").as_deref(),
        Some("(absent)")
    );
    assert!(f.remedy.as_deref().unwrap().contains("rocblas"));
    // No rocBLAS at all: no Tensile finding either.
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != "libraries.rocblas-no-kernels-for-target")
    );
}

#[test]
fn not_captured_installs_skip_layer_5() {
    let r = report("apu-phoenix-780m");
    let f = finding(&r, "libraries.not-captured");
    assert_eq!(f.status, Status::Skip);
    assert_eq!(
        r.findings
            .iter()
            .filter(|f| f.layer == Layer::Libraries)
            .count(),
        1
    );
}

fn facts(name: &str) -> Facts {
    Facts::collect(&Source::fixture(rocm_probe_tests::fixtures_dir().join(name)).unwrap())
}

fn ids(findings: &[rocm_probe::Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.id).collect()
}

#[test]
fn gpu_checks_stay_silent_above_a_failed_layer() {
    let f = facts("rocblas-no-gfx1103");
    let healthy = rocm_probe::checks::libraries::check(&f, &[]);
    assert!(ids(&healthy).contains(&"libraries.rocblas-no-kernels-for-target"));
    // A failed lower layer: the install-level findings stay, the per-target ones go.
    let below = [rocm_probe::finding::NO_ROCM.finding("no ROCm")];
    let blocked = rocm_probe::checks::libraries::check(&f, &below);
    assert_eq!(ids(&blocked), ["libraries.coverage"]);
}

#[test]
fn the_override_is_the_effective_target() {
    let mut f = facts("rocblas-no-gfx1103");
    f.platform
        .env
        .insert("HSA_OVERRIDE_GFX_VERSION".into(), "11.0.0".into());
    f.rederive();
    let out = rocm_probe::checks::libraries::check(&f, &[]);
    assert_eq!(ids(&out), ["libraries.coverage"]);
    assert!(
        out[0].summary.contains("(covers this machine's gfx1100)"),
        "{}",
        out[0].summary
    );
    // An override to a target rocBLAS lacks keeps the failure, with the override as evidence.
    f.platform
        .env
        .insert("HSA_OVERRIDE_GFX_VERSION".into(), "11.0.2".into());
    f.rederive();
    let out = rocm_probe::checks::libraries::check(&f, &[]);
    let fail = &out[0];
    assert_eq!(fail.id, "libraries.rocblas-no-kernels-for-target");
    assert!(
        fail.summary.contains("no kernels for gfx1102"),
        "{}",
        fail.summary
    );
    assert_eq!(
        evidence(fail, "/nodes/1").as_deref(),
        Some("gfx1103 AMD Radeon 780M Graphics, runs as gfx1102 (HSA_OVERRIDE_GFX_VERSION)")
    );
    assert_eq!(
        evidence(fail, "env:HSA_OVERRIDE_GFX_VERSION").as_deref(),
        Some("\"11.0.2\"")
    );
    assert!(
        !fail
            .remedy
            .as_deref()
            .unwrap()
            .contains("HSA_OVERRIDE_GFX_VERSION=")
    );
}

#[test]
fn hipblaslt_and_miopen_gaps_are_a_warning_and_a_hint() {
    // The healthy MI210 install (gfx90a files only) seen by GPUs overridden to gfx942.
    let mut f = facts("rocm-6.2-mi210");
    f.platform
        .env
        .insert("HSA_OVERRIDE_GFX_VERSION".into(), "9.4.2".into());
    f.rederive();
    let out = rocm_probe::checks::libraries::check(&f, &[]);
    assert_eq!(
        ids(&out),
        [
            "libraries.rocblas-no-kernels-for-target",
            "libraries.hipblaslt-no-kernels-for-target",
            "libraries.miopen-no-kdb-for-target",
            "libraries.coverage",
        ]
    );
    let statuses: Vec<Status> = out.iter().map(|f| f.status).collect();
    assert_eq!(
        statuses,
        [Status::Fail, Status::Warn, Status::Info, Status::Pass]
    );
    assert_eq!(
        evidence(&out[1], "/opt/rocm-6.2.0/lib/hipblaslt/library").as_deref(),
        Some("5 entries; targets: gfx90a")
    );
    assert_eq!(
        evidence(&out[2], "/opt/rocm-6.2.0/share/miopen/db").as_deref(),
        Some("gfx90a68.kdb")
    );
    assert!(
        out[2].summary.contains("compiled at first use"),
        "{}",
        out[2].summary
    );
    // Eight GPUs with one effective target: one finding, eight nodes as evidence.
    assert_eq!(
        out[0]
            .evidence
            .iter()
            .filter(|e| e.source.contains("/nodes/"))
            .count(),
        8
    );
}

#[test]
fn xnack_plus_only_library_needs_hsa_xnack() {
    let r = report("library-xnack-plus-only");
    assert_eq!(r.verdict.root_layer, 5);
    let f = finding(&r, "libraries.code-object-needs-feature-change");
    assert_eq!(f.status, Status::Fail);
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200").as_deref(),
        Some("1 bundle(s), 1 code object(s); targets: gfx90a:xnack+")
    );
    assert_eq!(
        evidence(f, "/topology/nodes/2").as_deref(),
        Some("gfx90a:sramecc+:xnack-")
    );
    assert!(
        f.remedy
            .as_deref()
            .unwrap()
            .starts_with("Either run with HSA_XNACK=1"),
        "{:?}",
        f.remedy
    );
    let c = finding(&r, "libraries.coverage");
    assert!(
        c.summary.contains("rocfft 0.1 (ROCm 6.2.0)"),
        "{}",
        c.summary
    );
    assert!(
        c.summary.contains("rocfft code for gfx90a:xnack+"),
        "{}",
        c.summary
    );
}

/// The same fixture with HSA_XNACK=1 in the environment: the library loads, layer 5 passes.
#[test]
fn xnack_plus_only_library_loads_with_hsa_xnack() {
    let dir = rocm_probe_tests::copy_fixture("library-xnack-plus-only");
    let toml = dir.path().join("fixture.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text.replacen("[identity]", "[env]\nHSA_XNACK = \"1\"\n\n[identity]", 1);
    std::fs::write(&toml, text).unwrap();
    let facts = Facts::collect(&Source::fixture(dir.path()).unwrap());
    let r = rocm_probe::Report::from_facts(&facts, Default::default());
    assert!(
        r.findings
            .iter()
            .all(|f| f.layer != Layer::Libraries || f.status == Status::Pass),
        "{:#?}",
        r.findings
    );
}

/// Layer 5 reads the GPU code of Debian's real rocSPARSE (1.3 GB) and finds the target set that
/// `roc-obj-ls` (Debian `hipcc`) lists; a live snapshot records it as a stand-in of under 1 MiB
/// that reads back to the same facts.
#[test]
fn live_rocsparse_code_matches_roc_obj_ls_and_snapshots_small() {
    const ROCSPARSE: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0";
    const ROC_OBJ_LS: &str = "/usr/bin/roc-obj-ls";
    for (path, package) in [(ROCSPARSE, "librocsparse0"), (ROC_OBJ_LS, "hipcc")] {
        if !std::path::Path::new(path).exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{path} missing: CI installs {package}"
            );
            eprintln!("skipped: {path} not installed (Debian package {package})");
            return;
        }
    }
    let code_of = |facts: &Facts| {
        facts
            .libraries
            .installs
            .iter()
            .flat_map(|i| &i.present)
            .find(|p| p.name == "rocsparse")
            .and_then(|p| p.code.clone())
            .expect("rocsparse code read")
    };
    let (source, _) = Source::live().record();
    let live = Facts::collect(&source);
    let code = code_of(&live);
    let out = std::process::Command::new(ROC_OBJ_LS)
        .arg(ROCSPARSE)
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed: BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|id| id.strip_prefix("hipv4-amdgcn-amd-amdhsa--"))
        .map(str::to_owned)
        .collect();
    let ours: BTreeSet<String> = code.targets.iter().cloned().collect();
    assert_eq!(ours, listed);
    assert_eq!(code.bundles, 111);

    let snap = tempfile::tempdir().unwrap();
    let dir = snap.path().join("s");
    rocm_probe::export::snapshot::snapshot(Source::live(), &dir, false).unwrap();
    let copied = dir.join(code.path.trim_start_matches('/'));
    let size = std::fs::metadata(&copied).unwrap().len();
    assert!(size < 1 << 20, "{} is {size} bytes", copied.display());
    let again = Facts::collect(&Source::fixture(&dir).unwrap());
    assert_eq!(code_of(&again), code);
}

/// Debian and Ubuntu put rocBLAS's Tensile files under a versioned directory
/// (`/usr/lib/x86_64-linux-gnu/rocblas/5.1.0/library`, package `librocblas5`); the newest
/// version with a `library` directory is the one read.
#[test]
fn debian_versioned_rocblas_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lib = root.join("usr/lib/x86_64-linux-gnu");
    for (path, body) in [
        ("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n"),
        ("usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921", ""),
        ("usr/lib/x86_64-linux-gnu/librocblas.so.0.1", ""),
        (
            "usr/lib/x86_64-linux-gnu/rocblas/4.0.0/library/TensileLibrary_lazy_gfx900.dat",
            "",
        ),
        (
            "usr/lib/x86_64-linux-gnu/rocblas/5.1.0/library/TensileLibrary_lazy_gfx1030.dat",
            "",
        ),
        (
            "usr/lib/x86_64-linux-gnu/rocblas/5.1.0/library/Kernels.so-000-gfx1100.hsaco",
            "",
        ),
        ("usr/lib/x86_64-linux-gnu/rocblas/5.2.0/README", ""),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    std::os::unix::fs::symlink("libamdhip64.so.5.7.31921", lib.join("libamdhip64.so.5")).unwrap();
    std::os::unix::fs::symlink("librocblas.so.0.1", lib.join("librocblas.so.0")).unwrap();
    let facts = Facts::collect(&Source::fixture(root).unwrap());
    let usr = facts
        .libraries
        .installs
        .iter()
        .find(|i| i.prefix == "/usr")
        .unwrap_or_else(|| panic!("{:#?}", facts.libraries));
    let rocblas = usr
        .rocblas
        .as_ref()
        .expect("versioned rocBLAS directory found");
    assert_eq!(
        rocblas.dir,
        "/usr/lib/x86_64-linux-gnu/rocblas/5.1.0/library"
    );
    assert_eq!(
        rocblas.targets,
        BTreeSet::from(["gfx1030".to_owned(), "gfx1100".to_owned()])
    );
    let lib = usr.present.iter().find(|p| p.name == "rocblas").unwrap();
    assert_eq!(lib.version.as_deref(), Some("0.1"));
    // The fixture's empty library file models a name only: no code read, no problem.
    assert_eq!(lib.code, None);
    assert_eq!(
        lib.code_unread,
        Some(rocm_probe::facts::fatbin::Unread::NotCaptured)
    );
}
