//! Read-only guarantee (ARCHITECTURE.md §4, "passive mode opens no device and loads no library"): the
//! passive report, traced with `strace -f`, writes nothing but its stdout and stderr, opens
//! nothing for writing, opens no device node and executes nothing — on a fixture and on this
//! machine.

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
                    let device = call.contains("\"/dev/") && !failed;
                    writes || device
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
    ]
    .map(str::to_owned)
    .to_vec();
    let bad = violations(&lines);
    assert_eq!(bad.len(), 4, "{bad:#?}");
}
