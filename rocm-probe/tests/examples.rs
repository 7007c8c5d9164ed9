//! The programs of `rocm-probe/examples/`, run on fixtures as an embedder would run them: each
//! prints what its documentation promises and exits as it says.
//!
//! The examples are built once per test run through the cargo that runs the tests (a no-op when
//! `cargo test` has just built them), so a filtered run (`--test examples`) never runs stale
//! binaries.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

/// `target/<profile>/examples/`, next to this test's `deps/` directory.
fn examples_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "rocm-probe", "--examples"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "the examples build");
        let exe = std::env::current_exe().unwrap();
        exe.parent().unwrap().parent().unwrap().join("examples")
    })
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn example(name: &str, args: &[&Path]) -> Run {
    let out = Command::new(examples_dir().join(name))
        .args(args)
        // Hermetic: the report's language follows the locale.
        .env_remove("LANG")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn root(name: &str) -> [PathBuf; 2] {
    [PathBuf::from("--root"), fixture(name)]
}

fn paths(args: &[PathBuf]) -> Vec<&Path> {
    args.iter().map(PathBuf::as_path).collect()
}

#[test]
fn report_prints_verdict_root_cause_and_exit_code() {
    let r = example("report", &paths(&root("kfd-permission-denied")));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "verdict: fail\n\
         summary: This user cannot open /dev/kfd read-write (group render)\n\
         root cause: driver.kfd-permission-denied (layer 2)\n\
         exit code: 1\n"
    );
    let r = example("report", &paths(&root("rocm-6.2-mi210")));
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.starts_with("verdict: pass\n"), "{}", r.stdout);
    assert!(r.stdout.contains("root cause: none\n"), "{}", r.stdout);
    // Not a machine tree: the library's error, exit 2.
    let r = example("report", &paths(&root("LICENSES")));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("LICENSES"), "{}", r.stderr);
}

#[test]
fn targets_lists_one_line_per_gpu_agent() {
    let r = example("targets", &paths(&root("mi210-xgmi-8gpu")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "gfx90a\n".repeat(8));
    let mut args = root("mi210-xgmi-8gpu").to_vec();
    args.push("--name".into());
    let r = example("targets", &paths(&args));
    assert_eq!(r.stdout, "gfx90a:sramecc+:xnack-\n".repeat(8));
    // Partitions are agents: 8 MI300X in CPX mode, one missing, are 63 lines.
    let r = example("targets", &paths(&root("mi300x-cpx-8gpu")));
    assert_eq!(r.stdout.lines().filter(|l| *l == "gfx942").count(), 63);
    // No GPU: nothing listed, exit 1, as rocm_agent_enumerator's users expect.
    let r = example("targets", &paths(&root("no-amdgpu")));
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
}

#[test]
fn check_binary_gives_each_gpu_a_verdict() {
    let lib = fixture("library-xnack-plus-only").join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200");
    let mut args = root("library-xnack-plus-only").to_vec();
    args.push(lib.clone());
    let r = example("check_binary", &paths(&args));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].ends_with("librocfft.so.0.1.60200: 1 code object(s) for gfx90a:xnack+"),
        "{}",
        r.stdout
    );
    assert_eq!(
        lines[1],
        "gfx90a:sramecc+:xnack- (nodes 2, 3, 4, 5, 6, 7, 8, 9): does not load as set up; \
         gfx90a:xnack+ would: run with HSA_XNACK=1"
    );
    // Another processor: no code object at all.
    let mut args = root("rx7900xtx").to_vec();
    args.push(lib);
    let r = example("check_binary", &paths(&args));
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("gfx1100 (nodes 1): no code object"),
        "{}",
        r.stdout
    );
    // No file: the usage, exit 2.
    let r = example("check_binary", &paths(&root("rx7900xtx")));
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("usage: check_binary"), "{}", r.stderr);
    // A file that is not a binary: the library's error, exit 2.
    let mut args = root("rx7900xtx").to_vec();
    args.push(fixture("rx7900xtx").join("fixture.toml"));
    let r = example("check_binary", &paths(&args));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("fixture.toml"), "{}", r.stderr);
}
