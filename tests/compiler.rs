//! Layer 6 (compiler), passively: beyond `[expect]` (checked by the sweep), the evidence of the
//! healthy compiler and of the missing device library, silence above a broken lower layer, and
//! the collector on this machine (Debian's hipcc and rocm-device-libs).

use std::collections::BTreeSet;

use rocm_probe::facts::collect;
use rocm_probe::facts::compiler::{CompilerFacts, DEBIAN_BITCODE};
use rocm_probe::facts::install::InstallFacts;
use rocm_probe::finding::{Layer, Status};
use rocm_probe::source::root::SysRoot;
use rocm_probe::{Facts, Source};

use rocm_probe_tests::{evidence, finding, report};

/// The ids of layer 6's warnings in a report.
fn compiler_warnings(r: &rocm_probe::Report) -> Vec<&'static str> {
    r.findings
        .iter()
        .filter(|f| f.layer == Layer::Compiler && f.status == Status::Warn)
        .map(|f| f.id)
        .collect()
}

#[test]
fn healthy_compiler_gives_the_offload_arch_line() {
    let r = report("rocm-6.2-mi210-compiler");
    assert_eq!(r.verdict.root_layer, 0);
    let own: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.layer == Layer::Compiler)
        .map(|f| f.id)
        .collect();
    assert_eq!(own, ["compiler.found", "compiler.offload-arch"]);
    let found = finding(&r, "compiler.found");
    assert_eq!(
        found.summary,
        "ROCm 6.2.0 at /opt/rocm-6.2.0: hipcc 6.2.41133, amdclang++ 18, clang 18"
    );
    let f = finding(&r, "compiler.offload-arch");
    assert_eq!(f.status, Status::Pass);
    // Eight gfx90a nodes, one flag.
    assert!(
        f.summary.contains(
            "with --offload-arch=gfx90a:sramecc+:xnack- (compilers: /opt/rocm-6.2.0/bin/hipcc,"
        ),
        "{}",
        f.summary
    );
    assert_eq!(f.summary.matches("--offload-arch=").count(), 1);
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/amdgcn/bitcode").as_deref(),
        Some(
            "gfx900, gfx906, gfx908, gfx90a, gfx940, gfx941, gfx942, gfx1030, gfx1100, gfx1101, gfx1102"
        )
    );
    let node = evidence(f, "/nodes/2").unwrap();
    assert!(node.starts_with("gfx90a:sramecc+:xnack-"), "{node}");
}

#[test]
fn healthy_compiler_facts() {
    let dir = rocm_probe_tests::fixtures_dir().join("rocm-6.2-mi210-compiler");
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let c = &facts.compiler;
    assert!(c.captured);
    let problems = &facts.problems.compiler;
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.installs.len(), 1);
    let i = &c.installs[0];
    assert_eq!(i.prefix, "/opt/rocm-6.2.0");
    let tools: Vec<&str> = i.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["hipcc", "amdclang++", "clang"]);
    assert_eq!(i.device_libs.len(), 1);
    assert_eq!(i.device_libs[0].isa_files, 11);
    assert!(i.targets().contains("gfx90a"));
}

#[test]
fn no_compiler_is_information_only() {
    let r = report("rocm-6.2-mi210");
    assert_eq!(r.verdict.root_layer, 0);
    let f = finding(&r, "compiler.no-compiler");
    assert_eq!(f.status, Status::Info);
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/bin/hipcc").as_deref(),
        Some("(absent)")
    );
    assert_eq!(evidence(f, "/usr/bin/hipcc").as_deref(), Some("(absent)"));
    // The flags are known without a compiler.
    let f = finding(&r, "compiler.offload-arch");
    assert!(!f.summary.contains("compilers:"), "{}", f.summary);
}

#[test]
fn device_libs_without_the_gpus_target_warn_at_layer_6() {
    let r = report("device-libs-missing-gfx1103");
    let f = finding(&r, "compiler.no-device-libs-for-target");
    assert_eq!(f.status, Status::Warn);
    assert_eq!(f.layer, Layer::Compiler);
    assert!(
        f.summary
            .contains("no bitcode for gfx1103 (they cover: gfx90a, gfx942, gfx1030, gfx1100)"),
        "{}",
        f.summary
    );
    assert_eq!(
        evidence(f, "/opt/rocm-6.2.0/amdgcn/bitcode").as_deref(),
        Some("4 oclc_isa_version files; targets: gfx90a, gfx942, gfx1030, gfx1100")
    );
    assert_eq!(
        evidence(f, "/nodes/1").as_deref(),
        Some("gfx1103 AMD Radeon 780M Graphics")
    );
    let remedy = f.remedy.as_deref().unwrap();
    assert!(remedy.contains("oclc_isa_version_1103.bc"), "{remedy}");
    assert!(
        finding(&r, "compiler.offload-arch")
            .summary
            .contains("--offload-arch=gfx1103 ")
    );
    // Layer 4's warning stays the root cause: the compiler gap is a consequence of the same age.
    assert_eq!(r.verdict.root_layer, 4);
}

#[test]
fn silent_about_gpus_when_a_lower_layer_fails() {
    let r = report("rocblas-no-gfx1103");
    assert_eq!(r.verdict.status, Status::Fail);
    assert!(
        r.findings
            .iter()
            .all(|f| f.layer != Layer::Compiler || f.id == "compiler.no-compiler"),
        "{:#?}",
        r.findings
    );
}

#[test]
fn uncaptured_installs_skip_layer_6() {
    let r = report("mi210-xgmi-8gpu");
    let f = finding(&r, "compiler.not-captured");
    assert_eq!(f.status, Status::Skip);
}

#[test]
fn live_collector_finds_debians_hipcc_and_device_libs() {
    let root = SysRoot::live();
    if !root.exists("/usr/bin/hipcc") || !root.exists(DEBIAN_BITCODE) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have Debian's hipcc and rocm-device-libs"
        );
        println!("skipped: no /usr/bin/hipcc or {DEBIAN_BITCODE} on this machine");
        return;
    }
    let live = Source::live();
    let env = Default::default();
    let (installs, _) = collect::<InstallFacts>(&live, &env);
    let (c, _) = collect::<CompilerFacts>(&live, (&installs, &env));
    assert!(c.captured);
    let usr = c
        .installs
        .iter()
        .find(|i| i.prefix == "/usr")
        .unwrap_or_else(|| panic!("no /usr entry: {c:#?}"));
    assert!(
        usr.tools.iter().any(|t| t.path == "/usr/bin/hipcc"),
        "{:?}",
        usr.tools
    );
    let debian = usr
        .device_libs
        .iter()
        .find(|d| d.dir == DEBIAN_BITCODE)
        .unwrap_or_else(|| panic!("{:?}", usr.device_libs));
    let want: BTreeSet<String> = ["gfx1030", "gfx90a"].map(String::from).into();
    assert!(debian.targets.is_superset(&want), "{:?}", debian.targets);
}

/// The versions read from files agree with what the real compilers print when run (the probe
/// itself never runs them): `hipcc --version` (`HIP version: 5.2.21153-0`) and, for each
/// Debian clang found, `clang --version` (`Debian clang version 15.0.6`).
#[test]
fn live_compiler_versions_match_the_compilers_own() {
    let root = SysRoot::live();
    if !root.exists("/usr/bin/hipcc") {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have Debian's hipcc"
        );
        println!("skipped: no /usr/bin/hipcc on this machine");
        return;
    }
    let live = Source::live();
    let env = Default::default();
    let (installs, _) = collect::<InstallFacts>(&live, &env);
    let (c, _) = collect::<CompilerFacts>(&live, (&installs, &env));
    let run = |tool: &str| {
        let out = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let tools: Vec<_> = c.installs.iter().flat_map(|i| &i.tools).collect();
    let hipcc = tools.iter().find(|t| t.path == "/usr/bin/hipcc").unwrap();
    let ours = hipcc.version.as_deref().expect("hipcc version read");
    let printed = run("/usr/bin/hipcc");
    assert!(
        printed.contains(&format!("HIP version: {ours}")),
        "{ours} vs {printed}"
    );
    let mut clangs = 0;
    for t in tools.iter().filter(|t| t.name == "clang") {
        let ours = t.version.as_deref().expect("clang version read");
        let printed = run(&t.path);
        let theirs = printed
            .split("clang version ")
            .nth(1)
            .and_then(|v| v.split_whitespace().next())
            .unwrap_or_else(|| panic!("{printed}"));
        // LLVM ≥ 16 names the resource directory by its major only.
        assert!(
            theirs == ours || theirs.starts_with(&format!("{ours}.")),
            "{}: {ours} vs {theirs}",
            t.path
        );
        clangs += 1;
    }
    assert!(clangs >= 1, "{tools:?}");
}

/// The tarball fixture in another environment (its install is found through the loader's path
/// in every variant), and its report.
fn tarball_with(env: &[(&str, &str)], edit: impl FnOnce(&std::path::Path)) -> rocm_probe::Report {
    let mut all = vec![("LD_LIBRARY_PATH", "/home/user/therock-tarball/install/lib")];
    all.extend_from_slice(env);
    let dir = rocm_probe_tests::copy_fixture_with_env("therock-7.10-tarball-device-libs", &all);
    edit(dir.path());
    rocm_probe::Report::collect(
        &Source::fixture(dir.path()).unwrap(),
        rocm_probe::report::Options::default(),
    )
}

#[test]
fn clangs_search_order_decides_which_device_libraries_count() {
    const INSTALL: &str = "/home/user/therock-tarball/install";
    const OWN: &str = "/home/user/therock-tarball/install/lib/llvm/amdgcn/bitcode";
    // ROCM_PATH set right (AMD's corrected setting in ROCm/legacy-rocm-build#5773): clang reads
    // $ROCM_PATH/amdgcn/bitcode only, which the Core SDK layout does not have.
    let r = report("therock-7.10-tarball-device-libs");
    let f = finding(&r, "compiler.device-libs-hidden");
    assert_eq!(r.verdict.root_layer, 6);
    assert_eq!(
        evidence(f, "env:ROCM_PATH").as_deref(),
        Some(INSTALL),
        "{f:#?}"
    );
    assert_eq!(
        evidence(f, &format!("{INSTALL}/amdgcn/bitcode")).as_deref(),
        Some("(absent)")
    );
    assert!(evidence(f, OWN).unwrap().contains("gfx1100"), "{f:#?}");
    assert_eq!(
        f.remedy_steps[0].command.as_deref(),
        Some(format!("export HIP_DEVICE_LIB_PATH={OWN}").as_str())
    );

    // Unset ROCM_PATH: clang finds lib/llvm/amdgcn/bitcode from its own path.
    let r = tarball_with(&[], |_| {});
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // AMD's fix: HIP_DEVICE_LIB_PATH names the directory, whatever ROCM_PATH says.
    let r = tarball_with(
        &[("ROCM_PATH", INSTALL), ("HIP_DEVICE_LIB_PATH", OWN)],
        |_| {},
    );
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // A HIP_DEVICE_LIB_PATH that names nothing hides them as well.
    let r = tarball_with(&[("HIP_DEVICE_LIB_PATH", "/nowhere/bitcode")], |_| {});
    let f = finding(&r, "compiler.device-libs-hidden");
    assert_eq!(
        evidence(f, "env:HIP_DEVICE_LIB_PATH").as_deref(),
        Some("/nowhere/bitcode")
    );
    // A relative one is not resolved (it depends on where the compiler starts): read as nothing.
    let r = tarball_with(
        &[("HIP_DEVICE_LIB_PATH", "lib/llvm/amdgcn/bitcode")],
        |_| {},
    );
    assert_eq!(compiler_warnings(&r), ["compiler.device-libs-hidden"]);
    // Bitcode in clang's resource directory comes first, whatever ROCM_PATH says.
    let r = tarball_with(&[("ROCM_PATH", INSTALL)], |d| {
        let res =
            d.join("home/user/therock-tarball/install/lib/llvm/lib/clang/20/lib/amdgcn/bitcode");
        std::fs::create_dir_all(&res).unwrap();
        std::fs::write(res.join("oclc_isa_version_1100.bc"), b"").unwrap();
    });
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // Where the install's own libraries lack the target too, the finding is the old one, with
    // the variable as evidence.
    let r = tarball_with(&[("ROCM_PATH", INSTALL)], |d| {
        std::fs::remove_file(d.join(&OWN[1..]).join("oclc_isa_version_1100.bc")).unwrap();
    });
    let f = finding(&r, "compiler.no-device-libs-for-target");
    assert_eq!(evidence(f, "env:ROCM_PATH").as_deref(), Some(INSTALL));
    assert_eq!(
        compiler_warnings(&r),
        ["compiler.no-device-libs-for-target"]
    );
}

/// A distribution clang's resource directory is searched by that clang alone: Fedora's
/// rocm-device-libs in `/usr/lib/clang/17/amdgcn/bitcode` serve clang 17, not the clang 18 that
/// `/usr/bin/clang` became (instructlab/instructlab#855).
#[test]
fn a_distribution_clangs_resource_directory_is_its_own() {
    const OWN: &str = "/usr/lib/clang/17/amdgcn/bitcode";
    const FIXTURE: &str = "fedora-40-clang18-device-libs-for-17";
    let with = |env: &[(&str, &str)], edit: &dyn Fn(&std::path::Path)| {
        let dir = rocm_probe_tests::copy_fixture_with_env(FIXTURE, env);
        edit(dir.path());
        rocm_probe::Report::collect(
            &Source::fixture(dir.path()).unwrap(),
            rocm_probe::report::Options::default(),
        )
    };
    let r = report(FIXTURE);
    assert_eq!(compiler_warnings(&r), ["compiler.device-libs-other-clang"]);
    assert_eq!(r.verdict.root_layer, 6);
    let f = finding(&r, "compiler.device-libs-other-clang");
    assert_eq!(evidence(f, "/usr/bin/clang").as_deref(), Some("clang 18"));
    assert_eq!(
        evidence(f, "/usr/lib/clang/18/amdgcn/bitcode").as_deref(),
        Some("(absent)")
    );
    assert!(evidence(f, OWN).unwrap().contains("gfx1103"), "{f:#?}");
    let remedy = f.remedy.as_deref().unwrap();
    assert!(remedy.contains("/usr/bin/clang-17"), "{remedy}");
    assert_eq!(
        f.remedy_steps[0].command.as_deref(),
        Some(format!("export HIP_DEVICE_LIB_PATH={OWN}").as_str())
    );

    // The default clang made clang 17 again: it finds its own resource directory.
    let relink = |d: &std::path::Path, to: &str| {
        let link = d.join("usr/bin/clang");
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(to, link).unwrap();
    };
    let r = with(&[], &|d| relink(d, "clang-17"));
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // Debian's link form names the major too.
    let r = with(&[], &|d| relink(d, "../lib/llvm-17/bin/clang"));
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // ROCM_PATH makes every clang skip the resource-directory candidate, clang 17's as well.
    let r = with(&[("ROCM_PATH", "/usr")], &|_| {});
    assert_eq!(compiler_warnings(&r), ["compiler.device-libs-hidden"]);
    // HIP_DEVICE_LIB_PATH naming the directory serves any clang.
    let r = with(&[("HIP_DEVICE_LIB_PATH", OWN)], &|_| {});
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // Without a default clang, the install's own driver (Fedora's hipcc runs its clang-N) picks.
    let r = with(&[], &|d| {
        std::fs::remove_file(d.join("usr/bin/clang")).unwrap()
    });
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // A default clang whose major the link does not name is not judged against the directory.
    let r = with(&[], &|d| relink(d, "clang-cl"));
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // Bitcode without the GPU's processor anywhere: the old finding, not this one.
    let r = with(&[], &|d| {
        std::fs::remove_file(d.join(&OWN[1..]).join("oclc_isa_version_1103.bc")).unwrap()
    });
    assert_eq!(
        compiler_warnings(&r),
        ["compiler.no-device-libs-for-target"]
    );

    // Fedora's build with ROCm's own LLVM: the bitcode in that clang's resource directory, and
    // hipcc runs that clang, so a default clang 18 beside it is no reason to warn.
    let bundled = |d: &std::path::Path| {
        let llvm = d.join("usr/lib64/rocm/llvm");
        std::fs::create_dir_all(llvm.join("bin")).unwrap();
        std::fs::write(llvm.join("bin/clang"), b"").unwrap();
        std::fs::create_dir_all(llvm.join("lib/clang/19")).unwrap();
        std::fs::rename(
            d.join("usr/lib/clang/17/amdgcn"),
            llvm.join("lib/clang/19/amdgcn"),
        )
        .unwrap();
    };
    let r = with(&[], &bundled);
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    let r = with(&[], &|d| {
        bundled(d);
        std::fs::remove_file(d.join("usr/bin/clang")).unwrap();
    });
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    assert!(
        finding(&r, "compiler.found").summary.contains("clang 19"),
        "{:#?}",
        r.findings
    );

    // The healthy counter-case: the facts name the owner and the default clang.
    let dir = rocm_probe_tests::fixtures_dir().join("fedora-40-device-libs-clang17");
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let usr = facts
        .compiler
        .installs
        .iter()
        .find(|i| i.prefix == "/usr")
        .unwrap();
    assert_eq!(usr.default_clang.as_ref().map(|c| c.major), Some(17));
    let libs = usr.device_libs.iter().find(|d| d.dir == OWN).unwrap();
    let owner = libs.owner.as_ref().unwrap();
    assert_eq!(owner.major, 17);
    assert_eq!(owner.driver.as_deref(), Some("/usr/bin/clang-17"));
    assert!(usr.counts(libs));
}

/// Gentoo's `rocm-device-libs` link its bitcode into clang's resource directory as
/// `<resource>/lib64/amdgcn/bitcode` (`$(get_libdir)`), the first place clang looks
/// (`<resource>/${CLANG_INSTALL_LIBDIR_BASENAME}/amdgcn/bitcode`); its clang is the slot's
/// `/usr/lib/llvm/<N>/bin/clang`, whose resource directory is `/usr/lib/clang/<N>`.
#[test]
fn gentoos_device_libraries_are_found_through_the_resource_directory_link() {
    const FIXTURE: &str = "gentoo-rocm-7.2-rx7900xtx";
    const LINK: &str = "/usr/lib/clang/22/lib64/amdgcn/bitcode";
    let with = |edit: &dyn Fn(&std::path::Path)| {
        let dir = rocm_probe_tests::copy_fixture(FIXTURE);
        edit(dir.path());
        rocm_probe::Report::collect(
            &Source::fixture(dir.path()).unwrap(),
            rocm_probe::report::Options::default(),
        )
    };
    let r = report(FIXTURE);
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    let found = finding(&r, "compiler.found");
    assert_eq!(
        found.summary,
        "ROCm 7.2 at /usr: hipcc (version unknown), clang 22"
    );
    assert_eq!(
        evidence(found, "/usr/lib/llvm/22/bin/clang").as_deref(),
        Some("clang 22")
    );
    assert!(
        evidence(found, LINK).unwrap().contains("gfx1100"),
        "{found:#?}"
    );

    // The facts: the link read as clang 22's first place, owned by the slot's clang.
    let dir = rocm_probe_tests::fixtures_dir().join(FIXTURE);
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let usr = facts
        .compiler
        .installs
        .iter()
        .find(|i| i.prefix == "/usr")
        .unwrap();
    let libs = usr.device_libs.iter().find(|d| d.dir == LINK).unwrap();
    assert_eq!(libs.place, rocm_probe::facts::compiler::LibsPlace::Resource);
    let owner = libs.owner.as_ref().unwrap();
    assert_eq!(owner.major, 22);
    assert_eq!(owner.driver.as_deref(), Some("/usr/lib/llvm/22/bin/clang"));

    // Without the ebuild's link clang does not look in /usr/lib/amdgcn/bitcode: the warning is
    // back, and right.
    let r = with(&|d| std::fs::remove_file(d.join(&LINK[1..])).unwrap());
    assert_eq!(
        compiler_warnings(&r),
        ["compiler.no-device-libs-for-target"]
    );
    // Bitcode without the GPU's processor: the warning names what the directory covers.
    let r = with(&|d| {
        std::fs::remove_file(d.join("usr/lib/amdgcn/bitcode/oclc_isa_version_1100.bc")).unwrap()
    });
    assert_eq!(
        compiler_warnings(&r),
        ["compiler.no-device-libs-for-target"]
    );
    let f = finding(&r, "compiler.no-device-libs-for-target");
    assert!(
        f.summary.contains("no bitcode for gfx1100"),
        "{}",
        f.summary
    );
    assert!(evidence(f, LINK).is_some(), "{f:#?}");
    // A build whose libdir suffix is empty reads `<resource>/lib/amdgcn/bitcode`: the same link
    // there serves as well.
    let r = with(&|d| {
        let res = d.join("usr/lib/clang/22");
        std::fs::rename(res.join("lib64"), res.join("lib")).unwrap();
    });
    assert!(compiler_warnings(&r).is_empty(), "{:#?}", r.findings);
    // A clang of another slot has its own resource directory: clang 21 beside 22 is found, and
    // its version read from /usr/lib/clang/21.
    let r = with(&|d| {
        std::fs::create_dir_all(d.join("usr/lib/llvm/21/bin")).unwrap();
        std::fs::write(d.join("usr/lib/llvm/21/bin/clang"), b"").unwrap();
        std::fs::create_dir_all(d.join("usr/lib/clang/21/include")).unwrap();
    });
    assert!(
        finding(&r, "compiler.found")
            .summary
            .contains("clang 21, clang 22"),
        "{:#?}",
        r.findings
    );
}
