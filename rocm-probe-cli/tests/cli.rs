//! Process-level tests of the `rocm-probe` binary: every command, every exit code.

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

mod common;
use common::{fixture, probe, run};

fn json(name: &str) -> Value {
    let r = run(probe()
        .arg("--root")
        .arg(fixture(name))
        .args(["agents", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

fn gpu_agents(doc: &Value) -> Vec<&Value> {
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["device_type"] == "gpu")
        .collect()
}

#[test]
fn targets_mi300x_prints_63_gfx942_lines() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi300x-cpx-8gpu"))
        .arg("targets"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines, vec!["gfx942"; 63]);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn targets_name_gives_full_target_ids_in_both_spellings() {
    for flag in ["--name", "-name"] {
        let r = run(probe()
            .arg("--root")
            .arg(fixture("mi210-xgmi-8gpu"))
            .args(["targets", flag]));
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert_eq!(
            r.stdout.lines().collect::<Vec<_>>(),
            vec!["gfx90a:sramecc+:xnack-"; 8]
        );
    }
}

#[test]
fn hsa_xnack_in_the_fixture_environment_turns_xnack_on_for_mi210() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture("mi210-xgmi-8gpu"), dir.path());
    let toml = dir.path().join("fixture.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}\n[env]\nHSA_XNACK = \"1\"\n")).unwrap();
    let r = run(probe()
        .arg("--root")
        .arg(dir.path())
        .args(["targets", "-name"]));
    assert_eq!(
        r.stdout.lines().next(),
        Some("gfx90a:sramecc+:xnack+"),
        "{}",
        r.stderr
    );
    // The probe's own environment is never the fixture's.
    let r = run(probe()
        .env("HSA_XNACK", "1")
        .arg("--root")
        .arg(fixture("mi210-xgmi-8gpu"))
        .args(["targets", "--name"]));
    assert_eq!(r.stdout.lines().next(), Some("gfx90a:sramecc+:xnack-"));
}

#[test]
fn agents_json_mi300x_63_agents_38_cus_8_gpus_one_hive_vram_null() {
    let doc = json("mi300x-cpx-8gpu");
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["source"]["kind"], "fixture");
    let gpus = gpu_agents(&doc);
    assert_eq!(gpus.len(), 63);
    assert!(gpus.iter().all(|a| a["compute_units"] == 38));
    assert!(gpus.iter().all(|a| a["memory_bytes"].is_null()));
    let sizes: Vec<usize> = doc["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["nodes"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes.len(), 8);
    assert_eq!(sizes.iter().filter(|&&n| n == 7).count(), 1);
    assert_eq!(doc["hives"].as_array().unwrap().len(), 1);
}

#[test]
fn agents_mi308x_json_exact_bytes_text_in_rocminfo_kb() {
    let doc = json("mi308x-cpx-8gpu");
    let gpus = gpu_agents(&doc);
    assert_eq!(gpus.len(), 32);
    assert!(gpus.iter().all(|a| a["compute_units"] == 20));
    let short = gpus
        .iter()
        .filter(|a| a["memory_bytes"] == 51539607552u64 - 16 * 1024 * 1024)
        .count();
    assert_eq!(short, 8);
    assert_eq!(doc["gpus"].as_array().unwrap().len(), 8);

    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi308x-cpx-8gpu"))
        .arg("agents"));
    assert_eq!(r.code, 0);
    let vram: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("Memory (VRAM):"))
        .collect();
    assert_eq!(vram.len(), 32);
    // rocminfo's unit: KB, `decimal(0xhex)`; 48 GiB, and 16 MiB less on one partition per GPU.
    assert!(
        vram.iter()
            .all(|l| l.ends_with(" 50331648(0x3000000) KB")
                || l.ends_with(" 50315264(0x2ffc000) KB")),
        "{vram:?}"
    );
    assert_eq!(
        vram.iter()
            .filter(|l| l.ends_with(" 50315264(0x2ffc000) KB"))
            .count(),
        8
    );
}

#[test]
fn agents_text_uses_rocminfo_field_names() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("apu-phoenix-780m"))
        .arg("agents"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for expected in [
        "  Name:                    gfx1103",
        "  Marketing Name:          AMD Radeon 780M Graphics",
        "  Device Type:             GPU",
        "  Chip ID:                 5567(0x15bf)",
        "  Compute Unit:            12",
        "  SIMDs per CU:            2",
        "  Shader Engines:          1",
        "  Shader Arrs. per Eng.:   2",
        "  Wavefront Size:          32(0x20)",
        "  Max Waves Per CU:        32(0x20)",
        "  Max Clock Freq. (MHz):   2700",
        "  BDFID:                   25600",
        "    L1:                    32(0x20) KB",
        "      Name:                amdgcn-amd-amdhsa--gfx1103",
        "  Memory (GTT-sized, APU): 30697244(0x1d4671c) KB",
        "  Reported As:             GPU 0 (0000:64:00.0, ROCr 0)",
        "  XNACK:                   off (gfx1103 has no XNACK)",
    ] {
        assert!(
            r.stdout.lines().any(|l| l == expected),
            "missing {expected:?} in\n{}",
            r.stdout
        );
    }
    assert!(
        !r.stdout.lines().any(|l| l.ends_with(' ')),
        "trailing blanks"
    );
}

#[test]
fn agents_show_firmware_and_telemetry_and_leave_a_suspended_gpu_asleep() {
    let text = |name: &str| {
        let r = run(probe().arg("--root").arg(fixture(name)).arg("agents"));
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let phoenix = text("apu-phoenix-780m");
    assert!(
        phoenix.lines().any(|l| l
            .starts_with("GPU 0 (0000:64:00.0, ROCr 0) firmware: vbios 113-PHXGENERIC-001, ")
            && l.contains("mes 0x00000080")),
        "{phoenix}"
    );
    assert!(
        phoenix.lines().any(|l| l
            == "GPU 0 (0000:64:00.0, ROCr 0) now: edge 25 °C, 3.1 W, sclk 800 MHz, busy 0%, VRAM used 1213 MiB, GTT used 201 MiB, gpu_metrics v2.1"),
        "{phoenix}"
    );
    let asleep = text("dgpu-runtime-suspended");
    assert!(
        asleep.lines().any(|l| l
            == "GPU 0 (0000:86:00.0, ROCr 0) now: not read (runtime-suspended; reading would \
                    wake it)"),
        "{asleep}"
    );
    let doc = json("r9700-power-cap-throttling");
    let m = &doc["telemetry"][0]["metrics"];
    assert_eq!(m["status"], "parsed");
    // PPT0 (bit 0) and TEMP_HOTSPOT (bit 36).
    assert_eq!(m["indep_throttle_status"], 0x10_0000_0001_u64);
    assert_eq!(m["socket_power_mw"], 225000);
    assert_eq!(doc["firmware"][0]["vbios"], "113-2E490TX-US2");
    let doc = json("dgpu-runtime-suspended");
    assert_eq!(doc["telemetry"][0]["skipped"], "runtime-suspended");
    assert!(doc["telemetry"][0]["hwmon"].is_null());
}

#[test]
fn no_gpu_fixture_exits_1_with_one_line() {
    for cmd in [
        &["targets"][..],
        &["agents"],
        &["agents", "--json"],
        &["targets", "-name"],
    ] {
        let r = run(probe().arg("--root").arg(fixture("no-amdgpu")).args(cmd));
        assert_eq!(r.code, 1, "{cmd:?}");
        // JSON still gets a document, saying why (tests/json_shape.rs); text gets nothing.
        if cmd.contains(&"--json") {
            let doc: Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(doc["error"]["kind"], "kfd-not-loaded");
        } else {
            assert!(r.stdout.is_empty(), "{cmd:?}: {}", r.stdout);
        }
        assert_eq!(r.stderr.lines().count(), 1, "{cmd:?}: {}", r.stderr);
        assert!(r.stderr.contains("no KFD"), "{}", r.stderr);
    }
}

#[test]
fn live_machine_without_kfd_exits_1_with_one_line() {
    if Path::new("/sys/class/kfd").exists() {
        eprintln!("skipped: this machine has /sys/class/kfd");
        return;
    }
    for cmd in ["targets", "agents"] {
        let r = run(probe().arg(cmd));
        assert_eq!(r.code, 1, "{cmd}: {}", r.stderr);
        assert!(r.stdout.is_empty());
        assert_eq!(
            r.stderr.trim_end(),
            "rocm-probe: no KFD: /sys/class/kfd/kfd/topology/nodes: not found (the amdgpu \
             driver is not loaded, or this container does not expose /sys/class/kfd)"
        );
    }
}

#[test]
fn unusable_fixture_or_arguments_exit_2() {
    let r = run(probe().args(["--root", "/nonexistent/fixture", "targets"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/nonexistent/fixture"), "{}", r.stderr);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fixture.toml"),
        "[identity]\nuid = \"root\"\n",
    )
    .unwrap();
    let r = run(probe().arg("--root").arg(dir.path()).arg("targets"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("fixture.toml:2: key `identity.uid`: "),
        "{}",
        r.stderr
    );

    assert_eq!(run(probe().arg("--no-such-flag")).code, 2);
    assert_eq!(run(probe().arg("frobnicate")).code, 2);
    let help = run(probe().arg("--help"));
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("targets"));
}

#[test]
fn closed_stdout_is_not_an_error() {
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let root = fixture("mi300x-cpx-8gpu");
    let script = format!(
        "'{}' --root '{}' agents | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}",
        bin.display(),
        root.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- malformed input: a clear message naming the path, never a panic (exit 101) or a hang.

/// A copy of the phoenix fixture with one change applied.
fn broken(change: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture("apu-phoenix-780m"), dir.path());
    change(&dir.path().join("sys/class/kfd/kfd/topology/nodes"));
    dir
}

fn assert_names_path(dir: &Path, path_suffix: &str, needle: &str) {
    for cmd in [
        &["agents"][..],
        &["agents", "--json"],
        &["targets"],
        &["targets", "--name"],
    ] {
        let r = run(probe().arg("--root").arg(dir).args(cmd));
        assert!(
            matches!(r.code, 0 | 1 | 3),
            "{cmd:?} exit {}: {}",
            r.code,
            r.stderr
        );
        let named = r
            .stderr
            .lines()
            .any(|l| l.contains(path_suffix) && l.contains(needle));
        assert!(
            named,
            "{cmd:?}: no line naming {path_suffix} / {needle}:\n{}",
            r.stderr
        );
    }
    // The report carries the same as evidence of a sysfs finding.
    let r = run(probe().arg("--root").arg(dir));
    assert!(
        matches!(r.code, 0 | 1 | 3),
        "report exit {}: {}",
        r.code,
        r.stderr
    );
    let named = r
        .stdout
        .lines()
        .any(|l| l.contains(path_suffix) && l.contains(needle));
    assert!(
        named,
        "report: no evidence naming {path_suffix} / {needle}:\n{}",
        r.stdout
    );
}

#[test]
fn truncated_properties_are_named() {
    let dir = broken(|nodes| {
        let p = nodes.join("1/properties");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, &text[..text.find("location_id").unwrap() + 5]).unwrap();
    });
    assert_names_path(dir.path(), "nodes/1/properties", "`locat` has no value");
    // What was read before the cut still counts.
    let r = run(probe().arg("--root").arg(dir.path()).arg("targets"));
    assert_eq!((r.code, r.stdout.as_str()), (0, "gfx1103\n"));
}

#[test]
fn non_numeric_values_are_named() {
    let dir = broken(|nodes| {
        let p = nodes.join("1/properties");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replace("simd_per_cu 2", "simd_per_cu two")).unwrap();
    });
    assert_names_path(
        dir.path(),
        "nodes/1/properties",
        "\"two\" is not an unsigned number",
    );
}

#[test]
fn empty_and_binary_files_are_named() {
    let dir = broken(|nodes| {
        std::fs::write(nodes.join("1/properties"), b"").unwrap();
        std::fs::write(nodes.join("0/properties"), b"\x7fELF\x00\x01\x02\xff").unwrap();
    });
    assert_names_path(dir.path(), "nodes/1/properties", "empty file");
    assert_names_path(dir.path(), "nodes/0/properties", "binary content");
    let r = run(probe().arg("--root").arg(dir.path()).arg("targets"));
    assert_eq!(r.code, 1, "no GPU can be told apart: {}", r.stderr);
}

#[test]
fn a_directory_named_foo_under_nodes_is_named() {
    let dir = broken(|nodes| {
        std::fs::create_dir(nodes.join("foo")).unwrap();
        std::fs::write(nodes.join("foo/properties"), "simd_count 4\n").unwrap();
    });
    assert_names_path(dir.path(), "nodes/foo", "not a node directory");
    let r = run(probe().arg("--root").arg(dir.path()).arg("targets"));
    assert_eq!(r.stdout, "gfx1103\n");
}

#[test]
fn a_symlink_out_of_the_root_is_named() {
    let dir = broken(|nodes| {
        let p = nodes.join("1/properties");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("../../../../../../../../../../etc/passwd", &p).unwrap();
    });
    assert_names_path(dir.path(), "nodes/1/properties", "escapes the fixture root");
}

#[test]
fn a_fifo_and_a_huge_file_do_not_hang_or_exhaust_memory() {
    let dir = broken(|nodes| {
        let fifo = nodes.join("1/properties");
        std::fs::remove_file(&fifo).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let big = std::fs::File::create(nodes.join("0/properties")).unwrap();
        big.set_len(100 << 20).unwrap();
    });
    assert_names_path(dir.path(), "nodes/1/properties", "not a regular file");
    assert_names_path(dir.path(), "nodes/0/properties", "larger than");
}

/// Tests run as root, and root reads anything: the unreadable-file case runs the probe as
/// `nobody` through setpriv.
#[test]
fn an_unreadable_file_is_named_when_run_unprivileged() {
    let is_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if !is_root || !Path::new("/usr/bin/setpriv").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test as root with setpriv"
        );
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let dir = broken(|nodes| {
        use std::os::unix::fs::PermissionsExt;
        let p = nodes.join("1/properties");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    });
    // nobody must be able to reach the fixture and the binary.
    let bin = dir.path().join("rocm-probe");
    std::fs::copy(assert_cmd::cargo::cargo_bin("rocm-probe"), &bin).unwrap();
    let status = std::process::Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    {
        use std::os::unix::fs::PermissionsExt;
        let p = dir
            .path()
            .join("sys/class/kfd/kfd/topology/nodes/1/properties");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let mut cmd = Command::new("/usr/bin/setpriv");
    cmd.env_clear()
        .timeout(Duration::from_secs(60))
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .arg("--root")
        .arg(dir.path())
        .arg("agents");
    let r = run(&mut cmd);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .any(|l| l.contains("nodes/1/properties: permission denied")),
        "{}",
        r.stderr
    );
}

#[test]
fn default_command_is_report() {
    let a = run(probe().arg("--root").arg(fixture("rx7900xtx")));
    let b = run(probe()
        .arg("--root")
        .arg(fixture("rx7900xtx"))
        .arg("report"));
    assert_eq!((a.code, &a.stdout), (b.code, &b.stdout));
    assert!(a.stdout.starts_with("PASS: "), "{}", a.stdout);
    assert_eq!(a.code, 0);
}

fn live_kfd_absent() -> bool {
    if Path::new("/sys/class/kfd").exists() {
        eprintln!("skipped: this machine has /sys/class/kfd");
        return false;
    }
    true
}

#[test]
fn live_report_names_layer_1_as_the_root_cause() {
    if !live_kfd_absent() {
        return;
    }
    let r = run(&mut probe());
    assert_eq!(r.code, 1, "{}", r.stdout);
    let first = r.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("FAIL: No AMD GPU on the PCI bus"),
        "{first}"
    );
    assert!(
        first.contains("root cause in layer 1 (hardware)"),
        "{first}"
    );
    assert!(
        first.contains("layers 2–9 cannot work until it is fixed"),
        "{first}"
    );
    // Every layer above follows from the missing GPU: a layer that still reports what is
    // installed (Debian's librocsparse, hipcc and rocminfo here: layers 5, 6 and 8) says its own
    // checks pass but it is unusable until the GPU is there; a layer with nothing to report says
    // it was not checked. Layer 9 gives no verdict without a GPU.
    for n in 3..=9 {
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("Layer {n} ")))
            .unwrap_or_else(|| panic!("no layer {n}:\n{}", r.stdout));
        assert!(
            ((line.contains("PASS") || line.contains("INFO"))
                && line
                    .contains("its own checks pass; unusable until hardware.no-amd-gpu is fixed"))
                || line.contains("cannot work until hardware.no-amd-gpu is fixed")
                || (line.contains("SKIP")
                    && line.contains("not checked: follows from hardware.no-amd-gpu")),
            "{line}"
        );
        if n == 9 {
            assert!(line.contains("not checked"), "{line}");
        }
    }
}

#[test]
fn live_report_json_validates_against_the_committed_schema() {
    if !live_kfd_absent() {
        return;
    }
    let r = run(probe().arg("--json"));
    assert_eq!(r.code, 1);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/report.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(doc["verdict"]["root_layer"], 1);
    assert_eq!(doc["verdict"]["root_cause"], "hardware.no-amd-gpu");
    assert_eq!(doc["source"]["kind"], "live");
    let layers = doc["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 9);
    assert!(
        layers[1..]
            .iter()
            .all(|l| l["consequence_of"] == "hardware.no-amd-gpu")
    );
}

#[test]
fn junit_is_well_formed_xml() {
    if !Path::new("/usr/bin/xmllint").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs xmllint (libxml2-utils)"
        );
        eprintln!("skipped: xmllint not installed");
        return;
    }
    for root in [
        None,
        Some(fixture("mi300x-cpx-8gpu")),
        Some(fixture("no-amdgpu")),
    ] {
        let mut cmd = probe();
        if let Some(root) = &root {
            cmd.arg("--root").arg(root);
        }
        let r = run(cmd.args(["--format", "junit"]));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.xml");
        std::fs::write(&file, &r.stdout).unwrap();
        let lint = std::process::Command::new("xmllint")
            .arg("--noout")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            lint.status.success(),
            "{root:?}: {}",
            String::from_utf8_lossy(&lint.stderr)
        );
        let failures = r.stdout.matches("<failure ").count();
        assert_eq!(
            failures > 0,
            r.code == 1,
            "{root:?}: exit {} with {failures} failures",
            r.code
        );
    }
}

#[test]
fn explain_documents_every_id() {
    let list = run(probe().arg("explain"));
    assert_eq!(list.code, 0);
    let ids: Vec<String> = list
        .stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), rocm_probe::finding::rules().len());
    for id in &ids {
        let r = run(probe().args(["explain", id]));
        assert_eq!(r.code, 0, "{id}");
        assert!(r.stdout.starts_with(&format!("{id} — ")), "{}", r.stdout);
        assert!(r.stdout.lines().count() >= 3, "{id}: {}", r.stdout);
    }
    let r = run(probe().args(["explain", "driver.no-such-thing"]));
    assert_eq!(r.code, 2);
}

#[test]
fn strict_turns_warnings_into_exit_1() {
    let r = run(probe().arg("--root").arg(fixture("mi300x-cpx-8gpu")));
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("WARN: "), "{}", r.stdout);
    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi300x-cpx-8gpu"))
        .arg("--strict"));
    assert_eq!(r.code, 1);
}

#[test]
fn layer_filter_and_color() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("no-amdgpu"))
        .args(["--layer", "2", "--color", "always"]));
    assert!(r.stdout.contains("Layer 2 "));
    assert!(!r.stdout.contains("Layer 1 "));
    // anstyle's SGR sequences: bold, then red.
    assert!(r.stdout.contains("\x1b[1m\x1b[31mFAIL"), "{}", r.stdout);
    let r = run(probe()
        .env("NO_COLOR", "1")
        .arg("--root")
        .arg(fixture("no-amdgpu")));
    assert!(!r.stdout.contains('\x1b'));
    assert_eq!(run(probe().args(["--layer", "10"])).code, 2);
}

#[test]
fn ps_lists_kfd_processes_with_queues() {
    let r = run(probe().arg("--root").arg(fixture("mi308x-busy")).arg("ps"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    // Three rows (one wrapped queue list), then the legend of the GPUs named.
    assert_eq!(lines.len(), 7, "{}", r.stdout);
    assert!(lines[1].split_whitespace().eq([
        "4242",
        "python3",
        "GPU",
        "0.0",
        "32768",
        "0",
        "20",
        "0",
        "0:compute",
        "1:sdma"
    ]));
    assert!(
        lines[3].starts_with("   5151 all_reduce_perf"),
        "{}",
        lines[3]
    );
    assert_eq!(
        lines[4],
        "GPU 0.0 (0000:0a:00.0, ROCr 0): KFD node 2, gpu_id 24248"
    );
    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi308x-busy"))
        .args(["ps", "--json"]));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["processes"][1]["gpus"][0]["evicted_ms"], 152);
    assert_eq!(doc["processes"][0]["queues"][0]["size"], 1048576);
    let r = run(probe()
        .arg("--root")
        .arg(fixture("mi308x-cpx-8gpu"))
        .arg("ps"));
    assert_eq!(r.stdout, "No process is using a GPU through KFD.\n");
    let r = run(probe().arg("--root").arg(fixture("no-amdgpu")).arg("ps"));
    assert_eq!(r.code, 1);
}

#[test]
fn snapshot_of_a_fixture_reports_the_same() {
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    let r = run(probe()
        .arg("--root")
        .arg(fixture("kfd-permission-denied"))
        .arg("snapshot")
        .arg(&snap)
        .arg("--no-redact"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("wrote "), "{}", r.stdout);
    let before = run(probe().arg("--root").arg(fixture("kfd-permission-denied")));
    let after = run(probe().arg("--root").arg(&snap));
    assert_eq!(before.code, after.code);
    let body = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("source: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&before.stdout), body(&after.stdout));
    // A second snapshot into the same, now non-empty, directory is refused.
    let again = run(probe()
        .arg("--root")
        .arg(fixture("kfd-permission-denied"))
        .arg("snapshot")
        .arg(&snap));
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("not empty"), "{}", again.stderr);
}

#[test]
fn live_snapshot_round_trips_on_this_machine() {
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("live");
    let r = run(probe().arg("snapshot").arg(&snap).arg("--no-redact"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let live = run(probe().arg("--json"));
    let replay = run(probe().arg("--root").arg(&snap).arg("--json"));
    let mut a: Value = serde_json::from_str(&live.stdout).unwrap();
    let mut b: Value = serde_json::from_str(&replay.stdout).unwrap();
    // Where and when each document was made differ; the machine does not.
    for d in [&mut a, &mut b] {
        d["source"] = Value::Null;
        d["generated_at"] = Value::Null;
    }
    assert_eq!(a, b, "live report and report of its snapshot differ");
}

/// Completions for every shell are generated from the clap definition; the bash one parses
/// (`bash -n`), and the man page renders with the real `man -l`.
#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let r = run(probe().args(["completions", shell]));
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains("rocm-probe"), "{shell}");
        assert!(
            r.stdout.contains("slurm-wrapper"),
            "{shell}: subcommands are listed"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let bash = dir.path().join("rocm-probe.bash");
    std::fs::write(&bash, run(probe().args(["completions", "bash"])).stdout).unwrap();
    let ok = std::process::Command::new("bash")
        .arg("-n")
        .arg(&bash)
        .status()
        .unwrap();
    assert!(ok.success());
    let man = run(probe().arg("man"));
    assert_eq!(man.code, 0);
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH"),
        "{}",
        &man.stdout[..200]
    );
    let page = dir.path().join("rocm-probe.1");
    std::fs::write(&page, &man.stdout).unwrap();
    if std::path::Path::new("/usr/bin/man").exists() {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("rocm-probe"), "{text}");
        assert!(text.contains("--root"), "{text}");
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI installs man-db");
        eprintln!("skipped: man -l (man-db not installed)");
    }
}

/// `--format markdown`: verdict, a table of the nine layers, the remedies, the full report in
/// a collapsed block; home directories redacted (the fixture's venv is /home/probe/venvs/tf).
#[test]
fn markdown_block_for_an_issue() {
    let r = run(probe()
        .arg("--root")
        .arg(fixture("tensorflow-present"))
        .args(["--format", "markdown"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = &r.stdout;
    assert!(
        md.starts_with("### rocm-probe report\n\n**PASS** — "),
        "{md}"
    );
    assert_eq!(
        md.matches("\n| ").count(),
        10,
        "header and nine layers:\n{md}"
    );
    assert!(md.contains("<details><summary>Full report"), "{md}");
    assert!(md.contains("\n```text\n"), "{md}");
    assert!(md.contains("/home/user/venvs/tf"), "{md}");
    assert!(!md.contains("/home/probe"), "{md}");
    let failing = run(probe()
        .arg("--root")
        .arg(fixture("kfd-permission-denied"))
        .args(["--format", "markdown"]));
    assert_eq!(failing.code, 1);
    assert!(
        failing
            .stdout
            .contains("(root cause `driver.kfd-permission-denied`, layer 2)"),
        "{}",
        failing.stdout
    );
    assert!(
        failing.stdout.contains("**What to do**"),
        "{}",
        failing.stdout
    );
}

/// `-o FILE` writes the report there and nothing to standard output.
#[test]
fn output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let r = run(probe()
        .arg("--root")
        .arg(fixture("rocm-6.2-mi210"))
        .args(["--json", "-o"])
        .arg(&path));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["verdict"]["status"], "pass");
}

/// Prose is wrapped at COLUMNS (a terminal's width when stdout is one).
#[test]
fn remedies_wrap_at_the_terminal_width() {
    for columns in [60usize, 120] {
        let r = run(probe()
            .env("COLUMNS", columns.to_string())
            .arg("--root")
            .arg(fixture("kfd-permission-denied")));
        let remedy: Vec<&str> = r
            .stdout
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("remedy:"))
            .take_while(|l| l.starts_with("         "))
            .collect();
        assert!(!remedy.is_empty(), "{}", r.stdout);
        for l in &remedy {
            assert!(l.chars().count() <= columns, "{columns}: {l}");
        }
    }
}

/// `explain` in both languages: `--lang`, else the locale (LC_ALL, LC_MESSAGES, LANG).
#[test]
fn explain_in_english_and_chinese() {
    let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let zh = run(probe().args(["--lang", "zh", "explain", "driver.kfd-permission-denied"]));
    assert_eq!(zh.code, 0);
    assert!(
        zh.stdout.starts_with("driver.kfd-permission-denied — "),
        "{}",
        zh.stdout
    );
    assert!(zh.stdout.contains("第 2 层"), "{}", zh.stdout);
    assert!(cjk(&zh.stdout));
    // Commands, paths and quoted errors stay as they are.
    assert!(zh.stdout.contains("/dev/kfd"), "{}", zh.stdout);
    let en = run(probe().args(["--lang", "en", "explain"]));
    assert!(!cjk(&en.stdout));
    assert_eq!(
        en.stdout.lines().count(),
        run(probe().args(["--lang", "zh", "explain"]))
            .stdout
            .lines()
            .count()
    );
    let by_locale = run(probe()
        .env("LANG", "zh_CN.UTF-8")
        .args(["explain", "hardware.no-amd-gpu"]));
    assert!(cjk(&by_locale.stdout), "{}", by_locale.stdout);
    let c_locale = run(probe()
        .env("LANG", "zh_CN.UTF-8")
        .env("LC_ALL", "C")
        .args(["explain", "hardware.no-amd-gpu"]));
    assert!(!cjk(&c_locale.stdout), "{}", c_locale.stdout);
}

/// `--root` must name a machine tree (issue 15): a directory with neither `fixture.toml` nor a
/// machine directory would read as a machine with no driver — "no KFD", exit 1, a drained node.
/// Each kind of wrong directory is refused with exit 2 and says what is missing; a tree's own
/// `sys/` passed one level too deep names the directory to pass instead.
#[test]
fn root_must_be_a_machine_tree() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let licences = dir.path().join("licences");
    std::fs::create_dir(&licences).unwrap();
    std::fs::write(licences.join("LICENSE"), "MIT").unwrap();
    for wrong in [&empty, &licences, &fixture("rx7900xtx").join("sys/class")] {
        for args in [&[][..], &["snapshot", "-"][..], &["agents"][..]] {
            let r = run(probe().arg("--root").arg(wrong).args(args));
            assert_eq!(r.code, 2, "{} {args:?}: {}", wrong.display(), r.stderr);
            assert!(r.stderr.contains("fixture.toml"), "{}", r.stderr);
            assert!(r.stdout.is_empty(), "{}", r.stdout);
        }
    }
    let deep = fixture("rx7900xtx").join("sys");
    let r = run(probe().arg("--root").arg(&deep));
    assert_eq!(r.code, 2, "{}", r.stderr);
    let parent = fixture("rx7900xtx");
    assert!(
        r.stderr.contains(&format!("pass {}", parent.display())),
        "{}",
        r.stderr
    );
    // A tree with only a machine directory is one (a capture of sysfs alone).
    let sys_only = dir.path().join("sys-only");
    std::fs::create_dir_all(sys_only.join("sys")).unwrap();
    let r = run(probe().arg("--root").arg(&sys_only));
    assert_ne!(r.code, 2, "{}", r.stderr);
}

/// `--root x.tar.gz` reads the archive in memory (issue 15): the report equals the directory's,
/// whether GNU tar packed the fixture or `snapshot` wrote it.
#[test]
fn root_reads_a_tar_gz_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("mi210.tgz");
    let status = std::process::Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(fixture("mi210-xgmi-8gpu").parent().unwrap())
        .arg("mi210-xgmi-8gpu")
        .status()
        .unwrap();
    assert!(status.success());
    let report = |root: &Path| {
        let r = run(probe().arg("--root").arg(root).arg("--json"));
        let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
        // Where and when the document was made differ; the machine does not.
        v.as_object_mut().unwrap().remove("source");
        v.as_object_mut().unwrap().remove("generated_at");
        (r.code, v)
    };
    let (code, from_dir) = report(&fixture("mi210-xgmi-8gpu"));
    assert_eq!(report(&archive), (code, from_dir));
    for args in [&["agents"][..], &["targets"][..], &["topo"][..]] {
        let a = run(probe()
            .arg("--root")
            .arg(fixture("mi210-xgmi-8gpu"))
            .args(args));
        let b = run(probe().arg("--root").arg(&archive).args(args));
        assert_eq!((a.code, a.stdout), (b.code, b.stdout), "{args:?}");
    }
    // A snapshot archive of an archive: written, and read back the same.
    let snap = dir.path().join("snap.tar.gz");
    let r = run(probe()
        .arg("--root")
        .arg(&archive)
        .args(["snapshot", "--no-redact"])
        .arg(&snap));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, from_dir) = report(&fixture("mi210-xgmi-8gpu"));
    assert_eq!(report(&snap), (code, from_dir));
    // Nothing was extracted next to the archives.
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["mi210.tgz", "snap.tar.gz"]);
}

/// A hostile or wrong archive is refused whole with exit 2 and the member named — never read
/// in part, never extracted, never a hang.
#[test]
fn root_refuses_hostile_archives() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let tree = p.join("m");
    std::fs::create_dir_all(tree.join("sys")).unwrap();
    std::fs::write(tree.join("sys/a"), "1\n").unwrap();
    std::fs::hard_link(tree.join("sys/a"), tree.join("sys/b")).unwrap();
    nix::unistd::mkfifo(&tree.join("sys/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let gnu_tar = |name: &str, args: &[&str]| {
        let out = p.join(name);
        let ok = std::process::Command::new("tar")
            .arg("czf")
            .arg(&out)
            .args(args)
            .current_dir(&tree)
            .status()
            .unwrap()
            .success();
        assert!(ok, "{name}");
        out
    };
    let raw = |name: &str, member: &str, kind: tar::EntryType| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(0o644);
        h.as_old_mut().name[..member.len()].copy_from_slice(member.as_bytes());
        h.set_size(1);
        h.set_cksum();
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        b.append(&h, &b"x"[..]).unwrap();
        let out = p.join(name);
        std::fs::write(&out, b.into_inner().unwrap().finish().unwrap()).unwrap();
        out
    };
    let hard = gnu_tar("hard.tgz", &["sys/a", "sys/b"]);
    let fifo = gnu_tar("fifo.tgz", &["sys/a", "sys/fifo"]);
    let absolute = gnu_tar("abs.tgz", &["-P", tree.join("sys/a").to_str().unwrap()]);
    let dotdot = raw(
        "dotdot.tgz",
        "sys/../../etc/passwd",
        tar::EntryType::Regular,
    );
    let device = raw("dev.tgz", "dev/kfd", tar::EntryType::Char);
    std::fs::create_dir(p.join("lic")).unwrap();
    std::fs::write(p.join("lic/LICENSE"), "MIT").unwrap();
    let no_machine = gnu_tar("lic.tar.gz", &["-C", p.to_str().unwrap(), "lic"]);
    let whole = std::fs::read(gnu_tar("whole.tgz", &["sys"])).unwrap();
    let truncated = p.join("truncated.tgz");
    std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
    let garbage = p.join("garbage.tar.gz");
    std::fs::write(&garbage, "not an archive").unwrap();
    let fifo_file = p.join("pipe.tar.gz");
    nix::unistd::mkfifo(&fifo_file, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let cases: [(&Path, &str); 9] = [
        (&hard, "hard link"),
        (&fifo, "FIFO"),
        (&absolute, "absolute path"),
        (&dotdot, ".."),
        (&device, "device"),
        (&no_machine, "fixture.toml"),
        (&truncated, "gzip-compressed tar"),
        (&garbage, "gzip-compressed tar"),
        (&fifo_file, "FIFO"),
    ];
    for (archive, says) in cases {
        for args in [&[][..], &["agents"][..], &["snapshot", "-"][..]] {
            let r = run(probe()
                .arg("--root")
                .arg(archive)
                .args(args)
                .timeout(Duration::from_secs(30)));
            assert_eq!(r.code, 2, "{} {args:?}: {}", archive.display(), r.stderr);
            assert!(
                r.stderr.contains(says),
                "{} should say {says:?}: {}",
                archive.display(),
                r.stderr
            );
            assert!(r.stdout.is_empty(), "{}", r.stdout);
        }
    }
    // Nothing was written beside the archives (no extraction, no snapshot).
    assert!(!p.join("etc").exists() && !p.join("dev").exists());
}

/// `explain --data` (issue 16): every release row with its stream and source, the newest row
/// and the as-of date, in both languages; with an id it is refused.
#[test]
fn explain_data_lists_the_release_rows() {
    use rocm_probe::facts::support;
    let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let en = run(probe().args(["--lang", "en", "explain", "--data"]));
    assert_eq!(en.code, 0, "{}", en.stderr);
    assert!(!cjk(&en.stdout));
    assert!(
        en.stdout.contains(&format!("as of {}", support::AS_OF)),
        "{}",
        en.stdout
    );
    for r in support::RELEASES {
        assert!(
            en.stdout.contains(&format!("\nROCm {:<5} ", r.name())),
            "{}",
            r.name()
        );
        assert!(en.stdout.contains(r.source), "{}", r.source);
    }
    assert!(en.stdout.contains(
        "ROCm 7.11  preview (TheRock)  2026-02-11\n  lists gfx950, gfx942, gfx90a, gfx1201"
    ));
    assert!(en.stdout.contains("gfx1201 (≥ 6.4.1)"), "{}", en.stdout);
    // The first kernel per GPU family, with each row's source.
    for g in rocm_probe::facts::min_kernel::GPUS {
        assert!(en.stdout.contains(g.source), "{}", g.source);
    }
    assert!(
        en.stdout
            .contains("gfx1201 (GC 12.0.1, PCI 1002:7550, 1002:7551): Linux 6.11"),
        "{}",
        en.stdout
    );
    // The firmware files per GPU family, with each row's source.
    for g in rocm_probe::facts::firmware::GPUS {
        assert!(en.stdout.contains(g.source), "{}", g.source);
    }
    assert!(
        en.stdout
            .contains("gfx1201: gc_12_0_1_pfp.bin, gc_12_0_1_me.bin"),
        "{}",
        en.stdout
    );
    let n = support::newest();
    assert!(
        en.stdout
            .contains(&format!("Newest release known: ROCm {}", n.name())),
        "{}",
        en.stdout
    );
    // The known-bad firmware rows, each with its report.
    for r in rocm_probe::facts::firmware_bad::KNOWN_BAD {
        assert!(en.stdout.contains(r.source), "{}", r.source);
    }
    assert!(
        en.stdout
            .contains("gfx1151 MES 0x00000083: MES failed to respond to msg=REMOVE_QUEUE"),
        "{}",
        en.stdout
    );
    // The ROCr ISA rows: each with its source, what it adds, and 7.0's removals.
    for r in rocm_probe::facts::rocr_isa::ROWS {
        assert!(
            en.stdout.contains(&format!("\nROCm {}\n", r.lines())),
            "{}",
            r.lines()
        );
        assert!(en.stdout.contains(r.source), "{}", r.source);
    }
    assert!(
        en.stdout
            .contains("ROCm 7.0\n  adds gfx950, gfx1153; drops gfx940, gfx941"),
        "{}",
        en.stdout
    );
    let zh = run(probe().args(["--lang", "zh", "explain", "--data"]));
    assert_eq!(zh.code, 0);
    assert!(
        zh.stdout
            .contains(&format!("已知的最新版本：ROCm {}", n.name())),
        "{}",
        zh.stdout
    );
    // The override hazards: each target, value and source.
    for h in rocm_probe::facts::override_hazard::HAZARDS {
        assert!(
            en.stdout.contains(&format!(
                "  {}: HSA_OVERRIDE_GFX_VERSION={}\n    {}\n",
                h.target, h.value, h.source
            )),
            "{}",
            h.target
        );
    }
    // Bundled-runtime and environment data: their names, paths and variables, then sources.
    use rocm_probe::facts::{bundled, libenv};
    for r in bundled::RUNTIMES {
        assert!(en.stdout.contains(&format!("\n{}: ", r.name)), "{}", r.name);
        for p in r.paths {
            assert!(en.stdout.contains(p), "{p}");
        }
        assert!(en.stdout.contains(r.source), "{}", r.source);
    }
    for v in libenv::SETTINGS {
        assert!(
            en.stdout
                .contains(&format!("\n{}={} ({})", v.variable, v.value, v.reader))
        );
    }
    assert!(
        en.stdout
            .contains("workaround for a problem fixed in ROCm 6.1"),
        "{}",
        en.stdout
    );
    // The data's own names, paths and variables.
    let kinds: Vec<String> = rocm_probe::facts::kernel_log::SIGNATURES
        .iter()
        .filter_map(|s| {
            serde_json::to_value(s.kind)
                .ok()?
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    let data_words: Vec<&str> = bundled::RUNTIMES
        .iter()
        .flat_map(|r| std::iter::once(r.name).chain(r.paths.iter().copied()))
        .chain(libenv::SETTINGS.iter().flat_map(|s| [s.variable, s.reader]))
        // The launchers' names, paths and settings files.
        .chain(
            rocm_probe::facts::launcher_venv::LAUNCHERS
                .iter()
                .flat_map(|l| {
                    let lib = l
                        .library
                        .iter()
                        .flat_map(|b| [b.file, b.key].into_iter().chain(b.paths.iter().copied()));
                    std::iter::once(l.name)
                        .chain(l.paths.iter().copied())
                        .chain(lib)
                }),
        )
        .chain(["site-packages", "HSA_OVERRIDE_GFX_VERSION"])
        // The kernel log's signatures and their sources are the data's own text: the lines
        // amdgpu prints and where their meaning is quoted from.
        .chain(
            rocm_probe::facts::kernel_log::SIGNATURES
                .iter()
                .flat_map(|s| s.all.iter().copied().chain([s.source])),
        )
        .chain(kinds.iter().map(String::as_str))
        // The kernel log lines the known-bad firmware rows quote, verbatim.
        .chain(
            rocm_probe::facts::firmware_bad::KNOWN_BAD
                .iter()
                .map(|r| r.symptom),
        )
        .chain(["site-packages"])
        .collect();
    // Apart from names (ROCm, TheRock, Core SDK, HIP), targets, URLs and the data's own names, paths
    // and variables, nothing is English.
    let english: Vec<&str> = zh
        .stdout
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() > 2)
        .filter(|w| !data_words.iter().any(|d| d.contains(*w)))
        .filter(|w| {
            ![
                "ROCm", "ROCr", "ISA", "TheRock", "Core", "SDK", "GPU", "HIP", "https", "gfx",
                "PCI", "Linux", "Python",
            ]
            .contains(w)
        })
        .filter(|w| {
            // URLs and firmware file names (`gc_12_0_1_pfp.bin`) are identifiers.
            !zh.stdout
                .lines()
                .any(|l| (l.trim().starts_with("https://") || l.contains(".bin")) && l.contains(*w))
        })
        .collect();
    assert!(english.is_empty(), "{english:?}");
    assert_eq!(
        run(probe().args(["explain", "--data", "runtime.release-unknown"])).code,
        2
    );
}
