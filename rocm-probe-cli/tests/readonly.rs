//! Read-only guarantee (ARCHITECTURE.md §4, "passive mode opens no device and loads no library"): the
//! passive report, traced with `strace -f`, writes nothing but its stdout and stderr, opens
//! nothing for writing, opens no device node, loads no library and executes nothing — on a
//! fixture and on this machine. The allowlist holds exactly two exceptions (issue 19): the kernel
//! log's `/dev/kmsg`, opened read-only and non-blocking, and libsystemd (with the libraries it
//! links), loaded to read the journal when `/dev/kmsg` is refused.

use std::path::Path;
use std::process::Command;

fn trace(args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace");
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-s", "256", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=execve,execveat,open,openat,openat2,creat,write,writev,pwrite64,pwritev,\
             pwritev2,sendfile,truncate,ftruncate,unlink,unlinkat,rename,renameat,renameat2,\
             mkdir,mkdirat,rmdir,symlink,symlinkat,link,linkat,chmod,fchmod,fchmodat,chown,\
             fchown,fchownat,ioctl,mmap",
        ])
        .arg(&bin)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some(), "killed");
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The offending lines of a trace, if any.
fn violations(lines: &[String]) -> Vec<String> {
    let mut execs = 0;
    // The dynamic loader's own opens come first; after the first other file, a shared library
    // opened without O_NONBLOCK (SysRoot's reads of library files all have it) is a dlopen.
    let mut started = false;
    // Set by libsystemd's dlopen, until the next other file: its dependencies load then.
    let mut in_libsystemd = false;
    lines
        .iter()
        .filter(|line| {
            // "PID syscall(args) = result"
            let call = line
                .split_once(' ')
                .map_or(line.as_str(), |(_, c)| c)
                .trim_start();
            let name = call.split('(').next().unwrap_or("");
            let failed = call.contains(") = -1");
            match name {
                // The first exec is strace starting the probe.
                "execve" | "execveat" => {
                    execs += 1;
                    execs > 1
                }
                "open" | "openat" | "openat2" => {
                    let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                        .iter()
                        .any(|f| call.contains(f));
                    let path = call.split('"').nth(1).unwrap_or("");
                    // The one device passive mode opens: the kernel log, read-only, non-blocking.
                    let kmsg = path == "/dev/kmsg"
                        && call.contains("O_RDONLY")
                        && call.contains("O_NONBLOCK");
                    let device = path.starts_with("/dev/") && !failed && !kmsg;
                    let name = path.rsplit('/').next().unwrap_or("");
                    let library = name.contains(".so") && !name.starts_with("ld.so");
                    let loaded = library && !failed && !call.contains("O_NONBLOCK");
                    let load = if !library {
                        if !name.starts_with("ld.so") {
                            started = true;
                            in_libsystemd = false;
                        }
                        false
                    } else if !loaded || !started {
                        false
                    } else if name.starts_with("libsystemd.so") {
                        in_libsystemd = true;
                        false
                    } else {
                        !in_libsystemd
                    };
                    writes || device || load
                }
                "write" | "writev" | "pwrite64" | "pwritev" | "pwritev2" | "sendfile" => {
                    let fd = call
                        .split('(')
                        .nth(1)
                        .and_then(|a| a.split(',').next())
                        .unwrap_or("");
                    fd != "1" && fd != "2"
                }
                // ioctl on stdout (a terminal check) is harmless; any other fd is a device.
                "ioctl" => {
                    let fd = call
                        .split('(')
                        .nth(1)
                        .and_then(|a| a.split(',').next())
                        .unwrap_or("");
                    fd != "0" && fd != "1" && fd != "2"
                }
                "mmap" => call.contains("PROT_WRITE") && call.contains("MAP_SHARED"),
                _ => !failed,
            }
        })
        .cloned()
        .collect()
}

fn strace_available() -> bool {
    if Path::new("/usr/bin/strace").exists() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "CI installs strace");
    eprintln!("skipped: strace not installed");
    false
}

#[test]
fn passive_report_of_a_fixture_only_reads() {
    if !strace_available() {
        return;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mi210-xgmi-8gpu");
    let lines = trace(&["--root", fixture.to_str().unwrap(), "--json"]);
    assert!(lines.len() > 100, "trace too short: {lines:?}");
    let bad = violations(&lines);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn passive_report_of_this_machine_only_reads() {
    if !strace_available() {
        return;
    }
    for args in [&[][..], &["agents"], &["targets"], &["ps"]] {
        let lines = trace(args);
        let bad = violations(&lines);
        assert!(bad.is_empty(), "{args:?}: {bad:#?}");
    }
}

/// Run as an ordinary user (`setpriv`, when this test runs as root), `/dev/kmsg` is refused
/// (`kernel.dmesg_restrict=1`) and the probe loads libsystemd for the journal: still nothing
/// else loaded, written, opened as a device or executed.
#[test]
fn passive_report_of_this_machine_as_nobody_only_reads() {
    if !strace_available()
        || !nix::unistd::geteuid().is_root()
        || !Path::new("/usr/bin/setpriv").exists()
    {
        eprintln!("skipped: needs root, strace and setpriv");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace");
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-s", "256", "-o"])
        .arg(&log)
        .args(["-e", "trace=execve,open,openat,openat2,write,ioctl,mmap"])
        .args([
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ])
        .arg(&bin)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some(), "killed");
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // From the probe's own execve on (setpriv's start-up is not the probe's).
    let start = lines
        .iter()
        .position(|l| l.contains(&format!("execve({:?}", bin.display().to_string())))
        .expect("the probe ran");
    let bad = violations(&lines[start..]);
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(
        lines[start..].iter().any(|l| l.contains("\"/dev/kmsg\"")),
        "the kernel log was looked for"
    );
}

#[test]
fn the_checker_catches_writes_devices_and_execs() {
    let lines: Vec<String> = [
        "1 execve(\"/x/rocm-probe\", [...]) = 0",
        "1 openat(AT_FDCWD, \"/sys/class/kfd/kfd/topology/nodes\", O_RDONLY|O_CLOEXEC) = 3",
        "1 openat(AT_FDCWD, \"/dev/kfd\", O_RDWR|O_CLOEXEC) = 4",
        "1 openat(AT_FDCWD, \"/tmp/x\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5",
        "1 write(5, \"x\", 1) = 1",
        "1 write(1, \"report\", 6) = 6",
        "1 execve(\"/usr/bin/lspci\", [...]) = 0",
        "1 openat(AT_FDCWD, \"/dev/dri/renderD128\", O_RDONLY) = -1 ENOENT (No such file or directory)",
        // The kernel log, read-only and non-blocking: allowed; blocking or for writing: not.
        "1 openat(AT_FDCWD, \"/dev/kmsg\", O_RDONLY|O_NONBLOCK|O_CLOEXEC) = 6",
        "1 openat(AT_FDCWD, \"/dev/kmsg\", O_RDONLY|O_CLOEXEC) = 6",
        "1 openat(AT_FDCWD, \"/dev/kmsg\", O_WRONLY|O_NONBLOCK) = 6",
        // A library file read (O_NONBLOCK) is not a load; libsystemd and what it links may
        // load; any other library may not.
        "1 openat(AT_FDCWD, \"/opt/rocm/lib/libamdhip64.so.6\", O_RDONLY|O_NONBLOCK|O_CLOEXEC) = 7",
        "1 openat(AT_FDCWD, \"/lib/x86_64-linux-gnu/libsystemd.so.0\", O_RDONLY|O_CLOEXEC) = 7",
        "1 openat(AT_FDCWD, \"/lib/x86_64-linux-gnu/libcap.so.2\", O_RDONLY|O_CLOEXEC) = 7",
        "1 openat(AT_FDCWD, \"/proc/self/status\", O_RDONLY|O_NONBLOCK|O_CLOEXEC) = 7",
        "1 openat(AT_FDCWD, \"/opt/rocm/lib/libhsa-runtime64.so.1\", O_RDONLY|O_CLOEXEC) = 7",
    ]
    .map(str::to_owned)
    .to_vec();
    let bad = violations(&lines);
    assert_eq!(bad.len(), 7, "{bad:#?}");
}

#[test]
fn the_live_report_names_its_kernel_log_source_or_why_none_was_readable() {
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let out = Command::new(&bin)
        .arg("--json")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let log: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| {
            let id = f["id"].as_str().unwrap_or("");
            id == "driver.kernel-log-read" || id == "driver.kernel-log-unreadable"
        })
        .collect();
    assert_eq!(
        log.len(),
        1,
        "exactly one says how the log was read: {log:#?}"
    );
    // Shown with --nocapture: which source this machine gave, or why none.
    eprintln!("{}: {}", log[0]["id"], log[0]["summary"]);
    for e in log[0]["evidence"].as_array().unwrap() {
        eprintln!("  {}: {}", e["source"], e["value"]);
    }
}
