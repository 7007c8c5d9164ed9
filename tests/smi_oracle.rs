//! Oracle for the telemetry (issue 19): Debian's real `rocm-smi` (5.2.3, through librocm_smi64)
//! reads the same sysfs files as `agents`' telemetry — hwmon temperatures, power, fan, and
//! `gpu_busy_percent`. Run in a private mount namespace whose `/sys` is a tree built from a
//! fixture, it must print the values `rocm-probe agents --json` reads, GPU by GPU (matched by
//! PCI address through `rocm-smi --showbus`).
//!
//! librocm_smi finds a GPU from `/sys/class/drm/cardN`, a symlink whose target names the PCI
//! address (it asserts otherwise), and keeps it only when a KFD node has that address: the tree
//! gives each GPU the machine's shape — `devices/pci0000:00/<address>/` holding the fixture's
//! `device/` files, `drm/cardN` under it, the class link to it — with the fixture's KFD tree and
//! `module/` beside. Nothing of the fixture's values is altered. One documented difference: a
//! fan standing still, which rocm-smi 5.2 reports as "Unable to detect fan speed".

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rocm_probe_tests::malformed::is_root;
use rocm_probe_tests::{fixtures, probe_binary, skip_oracle};
use serde_json::Value;

const ROCM_SMI: &str = "/usr/bin/rocm-smi";

/// Fixtures whose topology Debian's rocm-smi (rocm_smi_lib 5.2) refuses at `rsmi_init`, with why:
/// nothing can be compared there. The list is checked both ways (a fixture rocm-smi reads is not
/// excused), so it cannot grow silently.
const RSMI_REFUSES: &[(&str, &str)] = &[(
    "active-rocm-1.6-kernel-polaris",
    "ROCm 1.6's own kernel (4.9): its KFD node properties predate keys rocm_smi_lib 5.2 reads \
     (no domain, no unique_id); rocm-smi exits with 'Exception caught: rsmi_init'",
)];

fn copy(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

/// The machine-shaped `/sys` for the GPUs of `telemetry` (the probe's entries), in `sys`.
fn build_sys(fixture: &Path, telemetry: &[&Value], sys: &Path) {
    let class = sys.join("class/drm");
    std::fs::create_dir_all(&class).unwrap();
    for (i, t) in telemetry.iter().enumerate() {
        let address = t["pci_address"].as_str().unwrap();
        let minor = t["render_minor"].as_u64().unwrap();
        let device = fixture.join(format!("sys/class/drm/renderD{minor}/device"));
        let device = std::fs::canonicalize(&device).unwrap();
        let at = sys.join(format!("devices/pci0000:00/{address}"));
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        copy(&device, &at);
        let card = at.join(format!("drm/card{i}"));
        std::fs::create_dir_all(&card).unwrap();
        let _ = std::fs::remove_file(card.join("device"));
        std::os::unix::fs::symlink("../..", card.join("device")).unwrap();
        std::os::unix::fs::symlink(
            format!("../../devices/pci0000:00/{address}/drm/card{i}"),
            class.join(format!("card{i}")),
        )
        .unwrap();
    }
    copy(&fixture.join("sys/class/kfd"), &sys.join("class/kfd"));
    let module = sys.join("module/amdgpu");
    std::fs::create_dir_all(&module).unwrap();
    if !module.join("initstate").exists() {
        std::fs::write(module.join("initstate"), "live\n").unwrap();
    }
}

/// `rocm-smi FLAG` with `sys` mounted at `/sys`: GPU index → (key → value) of its
/// `GPU[i]\t\t: key: value` lines. A crash of rocm-smi (it asserts on clock strings it does not
/// know) keeps what it printed before.
fn smi(sys: &Path, flag: &str) -> BTreeMap<usize, BTreeMap<String, String>> {
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$1" /sys && exec env -i PATH=/usr/bin:/bin "$2" "$3""#)
        .arg("sh")
        .arg(sys)
        .arg(ROCM_SMI)
        .arg(flag)
        .output()
        .expect("unshare runs");
    let mut gpus: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(rest) = line.strip_prefix("GPU[") else {
            continue;
        };
        let Some((index, rest)) = rest.split_once(']') else {
            continue;
        };
        let Ok(index) = index.parse() else { continue };
        let rest = rest.trim_start_matches(['\t', ' ']).trim_start_matches(':');
        if let Some((key, value)) = rest.rsplit_once(": ") {
            gpus.entry(index)
                .or_default()
                .insert(key.trim().to_owned(), value.trim().to_owned());
        }
    }
    gpus
}

fn number(v: &str) -> Option<f64> {
    v.parse().ok()
}

#[test]
fn rocm_smi_reads_the_telemetry_the_probe_reads() {
    if !Path::new(ROCM_SMI).exists() {
        return skip_oracle("rocm-smi is not installed (scripts/test installs it)");
    }
    if !is_root() {
        return skip_oracle("needs root for unshare --mount");
    }
    let bin = probe_binary();
    let mut compared = 0;
    let mut gpus_compared = 0;
    let mut stopped_fans = 0;
    let mut mismatches = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for (name, dir) in fixtures() {
        let out = Command::new(&bin)
            .arg("--root")
            .arg(&dir)
            .args(["agents", "--json"])
            .output()
            .unwrap();
        let Ok(doc) = serde_json::from_slice::<Value>(&out.stdout) else {
            continue;
        };
        let telemetry: Vec<&Value> = doc["telemetry"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["skipped"].is_null() && t["hwmon"].is_object())
            .filter(|t| t["pci_address"].is_string() && t["render_minor"].is_u64())
            .collect();
        if telemetry.is_empty() {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let sys = tmp.path().join("sys");
        build_sys(&dir, &telemetry, &sys);
        // rocm-smi's index → PCI address.
        let bus: BTreeMap<String, usize> = smi(&sys, "--showbus")
            .into_iter()
            .filter_map(|(i, kv)| Some((kv.get("PCI Bus")?.to_lowercase(), i)))
            .collect();
        let excused = RSMI_REFUSES.iter().any(|(n, _)| *n == name);
        if bus.is_empty() && excused {
            refused.push(name.clone());
            continue;
        }
        let temps = smi(&sys, "--showtemp");
        let power = smi(&sys, "--showpower");
        let usage = smi(&sys, "--showuse");
        let fan = smi(&sys, "--showfan");
        for t in &telemetry {
            let address = t["pci_address"].as_str().unwrap();
            let Some(&i) = bus.get(address) else {
                mismatches.push(format!("{name}: rocm-smi does not list {address}"));
                continue;
            };
            gpus_compared += 1;
            let mut check = |what: &str, ours: Option<f64>, theirs: Option<&String>| {
                let theirs = theirs.and_then(|v| number(v));
                if let (Some(a), Some(b)) = (ours, theirs) {
                    compared += 1;
                    if (a - b).abs() > 0.05 {
                        mismatches
                            .push(format!("{name} {address} {what}: probe {a}, rocm-smi {b}"));
                    }
                } else if ours.is_some() != theirs.is_some() {
                    mismatches.push(format!(
                        "{name} {address} {what}: probe {ours:?}, rocm-smi {theirs:?}"
                    ));
                }
            };
            let hwmon = &t["hwmon"];
            for (label, key) in [
                ("edge", "Temperature (Sensor edge) (C)"),
                ("junction", "Temperature (Sensor junction) (C)"),
                ("mem", "Temperature (Sensor memory) (C)"),
            ] {
                let ours = hwmon["temperatures"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|x| x["label"] == label)
                    .and_then(|x| x["millidegrees"].as_f64())
                    .map(|m| m / 1000.0);
                check(label, ours, temps.get(&i).and_then(|kv| kv.get(key)));
            }
            let watts = hwmon["power_uw"].as_f64().map(|u| u / 1e6);
            let theirs = power.get(&i).and_then(|kv| {
                kv.get("Average Graphics Package Power (W)")
                    .or_else(|| kv.get("Current Socket Graphics Package Power (W)"))
            });
            check("power", watts, theirs);
            check(
                "busy",
                t["busy_percent"].as_f64(),
                usage.get(&i).and_then(|kv| kv.get("GPU use (%)")),
            );
            // rocm-smi 5.2's one quirk here: a fan standing still (pwm1 0, the zero-RPM idle
            // of Radeon cards) is "Unable to detect fan speed", where the probe reads 0 RPM.
            let rpm = hwmon["fan_rpm"].as_f64();
            let theirs = fan.get(&i).and_then(|kv| kv.get("Fan RPM"));
            if rpm == Some(0.0) && theirs.is_none() {
                stopped_fans += 1;
            } else {
                check("fan", rpm, theirs);
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    let excused: Vec<&str> = RSMI_REFUSES.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        refused, excused,
        "RSMI_REFUSES lists exactly the fixtures rocm-smi refuses"
    );
    // The captures with hwmon: enough GPUs and values that agreement means something.
    assert!(
        gpus_compared >= 5 && compared >= 20,
        "only {gpus_compared} GPUs and {compared} values compared"
    );
    eprintln!(
        "{gpus_compared} GPUs, {compared} values agree with rocm-smi ({stopped_fans} stopped fans \
         it cannot read)"
    );
}
