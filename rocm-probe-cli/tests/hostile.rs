//! The probe as an attacker (or an odd machine) meets it, outside the fixture reader: the files
//! it writes (`-o`, `--textfile`, `--nfd-features`, `--write-expect`, `--lock`), the files named
//! on its command line (`fixture.toml`, `--expect`, `diff`), and standard output and error that
//! cannot be written. Each test reproduced a defect of the code before it. Runs as
//! root, as CI does; the cases that replace device nodes run in a private mount namespace with
//! its own tmpfs `/dev`, never against the real one.

mod common;

use std::fs::File;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{copy_fixture, fixture, probe, run};

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rocm-probe")
}

/// Runs the probe with `args` in a private mount namespace whose `/dev` is a fresh tmpfs holding
/// only null, zero, full and the stdout link; returns the run and each node's file type after it.
fn in_private_dev(args: &[&str]) -> (common::Run, Vec<String>) {
    const SCRIPT: &str = r#"
mount -t tmpfs -o mode=755 tmpfs /dev || exit 97
mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 && mknod -m 666 /dev/full c 1 7 \
  && ln -s /proc/self/fd/1 /dev/stdout || exit 98
"$@"; code=$?
stat -c '%n %F' /dev/null /dev/zero /dev/full /dev/stdout > "$STATE"
exit $code
"#;
    let state = tempfile::NamedTempFile::new().unwrap();
    let out = assert_cmd::Command::from_std({
        let mut c = Command::new("unshare");
        c.args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            SCRIPT,
            "sh",
        ])
        .arg(bin())
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .env("STATE", state.path());
        c
    })
    .timeout(Duration::from_secs(60))
    .output()
    .unwrap();
    let code = out.status.code().expect("exited, not killed");
    assert!(code < 97, "namespace set-up failed ({code})");
    let types = std::fs::read_to_string(state.path())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let run = common::Run {
        code,
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    (run, types)
}

const NODES: [&str; 4] = [
    "/dev/null character special file",
    "/dev/zero character special file",
    "/dev/full character special file",
    "/dev/stdout symbolic link",
];

#[test]
fn device_nodes_are_written_into_or_refused_never_replaced() {
    if !is_root() {
        assert!(std::env::var_os("CI").is_none(), "CI runs as root");
        return;
    }
    let f = fixture("kfd-permission-denied");
    let f = f.to_str().unwrap();
    // Files that must be regular: a device in their place is refused, exit 2, named.
    for (args, node) in [
        (vec!["--root", f, "--textfile", "/dev/null"], "/dev/null"),
        (
            vec!["--root", f, "--nfd-features", "/dev/zero"],
            "/dev/zero",
        ),
        (
            vec!["--root", f, "check", "--write-expect", "/dev/full"],
            "/dev/full",
        ),
    ] {
        let (r, types) = in_private_dev(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(node) && r.stderr.contains("device"),
            "{}",
            r.stderr
        );
        assert_eq!(types, NODES, "{args:?}");
    }
    // -o into what is not a regular file: written into, as a shell's `>` would, exit as the report.
    let (r, types) = in_private_dev(&["--root", f, "-o", "/dev/stdout"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.starts_with("FAIL: "), "{}", r.stdout);
    assert_eq!(types, NODES);
    let (r, types) = in_private_dev(&["--root", f, "-o", "/dev/null"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{}", r.stderr);
    assert_eq!(types, NODES);
}

#[test]
fn a_planted_symlink_is_never_written_through() {
    let f = fixture("kfd-permission-denied");
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("shadow");
    std::fs::write(&victim, "root:x:0:\n").unwrap();
    for opt in ["--textfile", "--nfd-features", "-o"] {
        let link = dir.path().join(format!("out{opt}"));
        symlink(&victim, &link).unwrap();
        let r = run(probe().arg("--root").arg(&f).arg(opt).arg(&link));
        assert_eq!(r.code, 2, "{opt}: {}", r.stderr);
        assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
    let link = dir.path().join("expect.toml");
    symlink(&victim, &link).unwrap();
    let r = run(probe()
        .arg("--root")
        .arg(&f)
        .args(["check", "--write-expect"])
        .arg(&link));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:\n");
}

#[test]
fn the_lock_file_is_never_clobbered() {
    let f = fixture("kfd-permission-denied");
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("existing.conf");
    std::fs::write(&conf, "keep = true\n").unwrap();
    let r = run(probe().arg("--root").arg(&f).arg("--lock").arg(&conf));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "keep = true\n");
    let link = dir.path().join("probe.lock");
    symlink(&conf, &link).unwrap();
    let r = run(probe().arg("--root").arg(&f).arg("--lock").arg(&link));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "keep = true\n");
    // A lock file the probe creates is its own: it holds the pid, for people.
    let fresh = dir.path().join("fresh.lock");
    let r = run(probe().arg("--root").arg(&f).arg("--lock").arg(&fresh));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        std::fs::read_to_string(&fresh)
            .unwrap()
            .trim()
            .parse::<u32>()
            .is_ok()
    );
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

#[test]
fn named_inputs_that_are_fifos_are_refused_at_once() {
    let (_keep, f) = copy_fixture("kfd-permission-denied");
    std::fs::remove_file(f.join("fixture.toml")).unwrap();
    mkfifo(&f.join("fixture.toml"));
    // The deadline is a backstop only: the refusal must come first, naming the file.
    let r = run(probe().arg("--deadline").arg("20").arg("--root").arg(&f));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("fixture.toml") && !r.stderr.contains("deadline"),
        "{}",
        r.stderr
    );

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let good = fixture("kfd-permission-denied");
    let r = run(probe()
        .arg("--root")
        .arg(&good)
        .args(["check", "--expect"])
        .arg(&fifo));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("FIFO"), "{}", r.stderr);
    let report = dir.path().join("a.json");
    let out = run(probe().arg("--root").arg(&good).arg("--json"));
    std::fs::write(&report, out.stdout).unwrap();
    let r = run(probe().arg("diff").arg(&report).arg(&fifo));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("in.fifo"), "{}", r.stderr);
}

/// Runs the probe under a 256 MiB address-space limit.
fn limited() -> assert_cmd::Command {
    let mut c = Command::new("prlimit");
    c.arg("--as=268435456")
        .arg("--")
        .arg(bin())
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    let mut c = assert_cmd::Command::from_std(c);
    c.timeout(Duration::from_secs(60));
    c
}

#[test]
fn named_inputs_are_capped() {
    let (_keep, f) = copy_fixture("kfd-permission-denied");
    // 18.8 MB of valid TOML took 494 MB to parse; now it is refused unread.
    let mut toml = String::from("description = \"big\"\n[env]\n");
    let mut i = 0;
    while toml.len() < 19 << 20 {
        toml.push_str(&format!("V{i} = \"{}\"\n", "x".repeat(200)));
        i += 1;
    }
    std::fs::write(f.join("fixture.toml"), &toml).unwrap();
    let r = run(limited().arg("--root").arg(&f));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("fixture.toml"), "{}", r.stderr);

    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    std::fs::write(&big, &toml).unwrap();
    let good = fixture("kfd-permission-denied");
    let r = run(limited()
        .arg("--root")
        .arg(&good)
        .args(["check", "--expect"])
        .arg(&big));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("MiB"), "{}", r.stderr);
    File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for other in [big.as_path(), Path::new("/dev/zero")] {
        let r = run(limited().arg("diff").arg(&big).arg(other));
        assert_eq!(r.code, 2, "{}", r.stderr);
    }
}

#[test]
fn fixture_toml_resolves_inside_the_fixture() {
    let (keep, f) = copy_fixture("kfd-permission-denied");
    // Outside the fixture: an identity nobody recorded for it.
    let outside = keep.path().join("outside.toml");
    std::fs::write(&outside, "[identity]\nuid = 4242\ngroups = [4242]\n").unwrap();
    std::fs::remove_file(f.join("fixture.toml")).unwrap();
    symlink("../outside.toml", f.join("fixture.toml")).unwrap();
    let r = run(probe().arg("--root").arg(&f).arg("-v"));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("fixture.toml"), "{}", r.stderr);
    assert!(!r.stdout.contains("4242"), "{}", r.stdout);
    // An absolute link is re-rooted in the fixture, where nothing is: no fixture.toml.
    std::fs::remove_file(f.join("fixture.toml")).unwrap();
    symlink(&outside, f.join("fixture.toml")).unwrap();
    let r = run(probe().arg("--root").arg(&f).arg("-v"));
    assert!(!r.stdout.contains("4242"), "{}", r.stdout);
    assert!(matches!(r.code, 0 | 1 | 3), "{}", r.stderr);
}

/// The probe with standard output and error sent to `stdout` and `stderr`.
fn with_streams(args: &[&str], stdout: Stdio, stderr: Stdio) -> i32 {
    let mut child = Command::new(bin())
        .args(args)
        .env_clear()
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    status
        .code()
        .unwrap_or_else(|| panic!("{args:?}: killed: {status:?}"))
}

fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The write end of a pipe whose read end is already closed: every write gets EPIPE.
fn closed_pipe() -> Stdio {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    Stdio::from(write)
}

fn dev_full() -> Stdio {
    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
}

#[test]
fn unwritable_streams_never_panic_and_keep_the_exit_status() {
    let failing = fixture("kfd-permission-denied");
    let failing = failing.to_str().unwrap();
    let no_kfd = fixture("kfd-missing");
    let no_kfd = no_kfd.to_str().unwrap();
    // A diagnostic that cannot be written changes nothing.
    assert_eq!(
        with_streams(&["--root", "/nonexistent"], Stdio::null(), dev_full()),
        2
    );
    assert_eq!(
        with_streams(
            &["--root", "/nonexistent", "targets"],
            closed_pipe(),
            closed_pipe()
        ),
        2
    );
    assert_eq!(
        with_streams(&["--root", no_kfd, "targets"], closed_pipe(), closed_pipe()),
        1
    );
    assert_eq!(
        with_streams(&["--root", no_kfd, "agents"], Stdio::null(), dev_full()),
        1
    );
    // `| head` keeps the report's own status; a full disk for the output is an error.
    assert_eq!(
        with_streams(&["--root", failing], closed_pipe(), Stdio::null()),
        1
    );
    assert_eq!(
        with_streams(&["--root", failing], dev_full(), Stdio::null()),
        2
    );
    assert_eq!(
        with_streams(&["--root", failing, "explain"], dev_full(), Stdio::null()),
        2
    );
}

#[test]
fn the_deadline_covers_every_command() {
    // `agents --json` of the 8x MI300X capture is larger than a pipe holds; nobody reads the
    // pipe, so the run blocks in its write until the deadline ends it.
    let (read, write) = nix::unistd::pipe().unwrap();
    let mut child = Command::new(bin())
        .args(["--deadline", "1", "--root"])
        .arg(fixture("mi300x-cpx-8gpu"))
        .args(["agents", "--json"])
        .env_clear()
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    drop(read);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("deadline"), "{err}");
}

#[test]
fn extract_refuses_a_symlinked_directory() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = dir.path().join("out");
    symlink(&elsewhere, &link).unwrap();
    // A real HIP library built for gfx90a:xnack+ (fixtures/tools/build-fatbins.sh).
    let file = fixture("library-xnack-plus-only").join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200");
    let r = run(probe()
        .arg("inspect")
        .arg(&file)
        .args(["--target", "gfx90a", "--extract"])
        .arg(&link));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn warnings_on_stderr_are_escaped_and_grouped() {
    let (_keep, f) = copy_fixture("malformed");
    let f = f.join("base");
    let nodes = f.join("sys/class/kfd/kfd/topology/nodes");
    common::copy_tree(&nodes.join("1"), &nodes.join("2\nFAIL injected \u{1b}[2J"));
    // A megabyte of repeated keys: one file with a count, not sixty thousand lines.
    let mut props = String::new();
    let mut i = 0;
    while props.len() < (1 << 20) - 64 {
        props.push_str(&format!("simd_count {i}\n"));
        i += 1;
    }
    std::fs::write(nodes.join("1/properties"), props).unwrap();
    for cmd in ["targets", "agents"] {
        let r = run(probe().arg("--root").arg(&f).arg(cmd));
        assert!(r.stderr.len() < 16 << 10, "{cmd}: {} bytes", r.stderr.len());
        assert!(!r.stderr.contains('\u{1b}'), "{cmd}: {}", r.stderr);
        assert!(
            r.stderr.lines().all(|l| l.starts_with("rocm-probe: ")),
            "{cmd}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("2\\nFAIL injected"),
            "{cmd}: {}",
            r.stderr
        );
        assert_eq!(
            r.stderr.matches("nodes/1/properties").count(),
            1,
            "{cmd}: {}",
            r.stderr
        );
    }
}
