//! The systemd journal as the kernel log's source (issue 19 item 1), through the real
//! libsystemd: when `/dev/kmsg` cannot be used, the live report reads the journal's kernel
//! lines of this boot and nothing else. The journal is a real one, written by systemd's own
//! `systemd-journal-remote` from an export-format stream (Debian package
//! systemd-journal-remote, installed by scripts/test), and mounted over `/var/log/journal` in a
//! private mount namespace; a FIFO is mounted over `/dev/kmsg` there, which the probe refuses
//! as not a character device, so the host's own kernel log is never read.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use rocm_probe_tests::skip_oracle;

const JOURNAL_REMOTE: &str = "/lib/systemd/systemd-journal-remote";

/// One journal entry in the export format (systemd's JOURNAL_EXPORT_FORMATS).
fn entry(out: &mut Vec<u8>, n: u64, boot: &str, transport: &str, message: &str) {
    writeln!(
        out,
        "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={boot}\n\
         _TRANSPORT={transport}\nPRIORITY=3\nMESSAGE={message}\n",
        1_764_800_000_000_000 + n,
        1_000_000 + n
    )
    .unwrap();
}

#[test]
fn the_journal_gives_this_boots_kernel_lines_when_kmsg_is_unusable() {
    if !Path::new(JOURNAL_REMOTE).exists() {
        return skip_oracle("systemd-journal-remote is not installed (scripts/test installs it)");
    }
    if !nix::unistd::geteuid().is_root() {
        return skip_oracle("needs root for unshare --mount");
    }
    let Ok(machine) = std::fs::read_to_string("/etc/machine-id") else {
        return skip_oracle("no /etc/machine-id: the journal's local directory has no name");
    };
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .replace('-', "");
    let other_boot = if boot.starts_with('0') {
        "1".repeat(32)
    } else {
        "0".repeat(32)
    };

    let dir = tempfile::tempdir().unwrap();
    let mut export = Vec::new();
    // Kept: a kernel line of this boot, amdgpu's words as quoted in ROCm/legacy-rocm-build#2747
    // and geerlingguy/raspberry-pi-pcie-devices#331 (rocm-probe/data/kernel_log.toml).
    entry(
        &mut export,
        0,
        &boot,
        "kernel",
        "amdgpu 0000:03:00.0: amdgpu: Fatal error during GPU init",
    );
    // Not kept: the same words from another boot, and from a program rather than the kernel.
    entry(
        &mut export,
        1,
        &other_boot,
        "kernel",
        "amdgpu 0000:43:00.0: amdgpu: Fatal error during GPU init",
    );
    entry(
        &mut export,
        2,
        &boot,
        "syslog",
        "amdgpu 0000:86:00.0: amdgpu: Fatal error during GPU init",
    );
    let stream = dir.path().join("export");
    std::fs::write(&stream, export).unwrap();
    let journal = dir.path().join("journal");
    let local = journal.join(machine.trim());
    std::fs::create_dir_all(&local).unwrap();
    let made = Command::new(JOURNAL_REMOTE)
        .arg(format!(
            "--output={}",
            local.join("system.journal").display()
        ))
        .arg(&stream)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let fifo = dir.path().join("kmsg");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRUSR).unwrap();
    // A runtime journal of the host would be read too: an empty directory hides it.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();

    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            r#"mount --bind "$1" /dev/kmsg && mount --bind "$2" /var/log/journal &&
               { [ ! -d /run/log/journal ] || mount --bind "$3" /run/log/journal; } &&
               exec env -i PATH=/usr/bin:/bin "$4" --json"#,
        )
        .arg("sh")
        .arg(&fifo)
        .arg(&journal)
        .arg(&empty)
        .arg(assert_cmd::cargo::cargo_bin("rocm-probe"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let findings = doc["findings"].as_array().unwrap();
    let find = |id: &str| findings.iter().find(|f| f["id"] == id);

    let read = find("driver.kernel-log-read").unwrap_or_else(|| panic!("{findings:#?}"));
    let evidence = read["evidence"].as_array().unwrap();
    assert_eq!(evidence[0]["source"], "journal", "{read:#}");
    assert_eq!(
        evidence[0]["value"], "1 line(s) of this boot name them",
        "{read:#}"
    );
    let failed = find("driver.gpu-init-failed").unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(
        failed["summary"],
        "amdgpu failed to initialise GPU 0000:03:00.0: Fatal error during GPU init"
    );
    assert_eq!(
        failed["evidence"][0]["value"],
        "`amdgpu 0000:03:00.0: amdgpu: Fatal error during GPU init`"
    );
    let text = serde_json::to_string(&doc).unwrap();
    assert!(
        !text.contains("0000:43:00.0") && !text.contains("0000:86:00.0"),
        "another boot's line or a program's line was read"
    );
}
