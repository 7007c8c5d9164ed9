//! Oracle through the KFD emulator (emulator/kfd_emu.c, run by scripts/emulate): Debian's real,
//! unmodified `rocminfo` and ROCr 5.2 run on a fixture, and what they report must equal what
//! `rocm-probe` reads from the same fixture, field by field. The eligible fixtures are listed in
//! tests/data/emulator-fixtures.txt.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocm_probe::facts::agent::{Agent, DeviceType};
use rocm_probe::facts::install::RocmVersion;
use rocm_probe::facts::rocr_isa;
use rocm_probe::report::Options;
use rocm_probe::{Inventory, Report, Source};
use rocm_probe_tests::{fixtures_dir, have};

const ROCMINFO: &str = "/usr/bin/rocminfo";
const DRM_HEADER: &str = "/usr/include/libdrm/amdgpu_drm.h";

/// rocminfo's standard output, or why it failed.
fn rocminfo(
    fixture: &Path,
    overlay: Option<&Path>,
    override_gfx: Option<&str>,
) -> Result<String, String> {
    let mut cmd = emulated(fixture, override_gfx);
    if let Some(o) = overlay {
        cmd.env("KFD_EMU_OVERLAY", o);
    }
    cmd.arg(ROCMINFO);
    let out = cmd.output().expect("scripts/emulate runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    Err(format!(
        "{}: {stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn emulate(fixture: &Path, override_gfx: Option<&str>) -> String {
    rocminfo(fixture, None, override_gfx).unwrap_or_else(|e| panic!("{}: {e}", fixture.display()))
}

/// `scripts/emulate FIXTURE --` with nothing of the caller's ROCm environment, ready for the
/// command's arguments.
fn emulated(fixture: &Path, override_gfx: Option<&str>) -> Command {
    let mut cmd = Command::new(fixtures_dir().join("../scripts/emulate"));
    cmd.arg(fixture).arg("--");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("HSA_") || k.starts_with("ROCR_") || k.starts_with("KFD_EMU_") {
            cmd.env_remove(&k);
        }
    }
    if let Some(v) = override_gfx {
        cmd.env("HSA_OVERRIDE_GFX_VERSION", v);
    }
    cmd
}

/// The overlay for `dir`: its own `emulate/` (None here: scripts/emulate finds it), else one
/// `emulator/make-overlay --invent-topology` writes into a temporary directory.
fn invented_overlay(dir: &Path) -> Option<tempfile::TempDir> {
    if dir.join("emulate").is_dir() {
        return None;
    }
    let overlay = tempfile::tempdir().expect("temporary directory");
    let status = Command::new(fixtures_dir().join("../emulator/make-overlay"))
        .arg("--invent-topology")
        .arg(dir)
        .arg(overlay.path())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("emulator/make-overlay runs");
    assert!(status.success(), "make-overlay on {}", dir.display());
    Some(overlay)
}

/// rocminfo's agents: each `Agent N` block's top-level `Key: value` lines (two-space indent), its
/// cache lines (`L1:`, `L2:` under `Cache Info:`), its first pool's size (as `pool 1 size`) and
/// its first ISA's name (as `ISA`).
fn agents(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut out: Vec<BTreeMap<String, String>> = Vec::new();
    let mut in_caches = false;
    for line in text.lines() {
        if line.starts_with("Agent ") {
            out.push(BTreeMap::new());
            in_caches = false;
            continue;
        }
        let Some(agent) = out.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("  ").filter(|r| !r.starts_with(' ')) {
            in_caches = rest.starts_with("Cache Info:");
            if let Some((k, v)) = rest.split_once(':') {
                agent
                    .entry(k.trim().to_owned())
                    .or_insert_with(|| v.trim().to_owned());
            }
        } else if in_caches && let Some((k, v)) = line.trim().split_once(':') {
            agent.insert(format!("cache {}", k.trim()), v.trim().to_owned());
        } else if let Some(size) = line.strip_prefix("      Size:") {
            agent
                .entry("pool 1 size".to_owned())
                .or_insert_with(|| size.trim().to_owned());
        } else if let Some(name) = line.strip_prefix("      Name:") {
            // The first ISA's name, under `ISA Info:`.
            agent
                .entry("ISA".to_owned())
                .or_insert_with(|| name.trim().to_owned());
        }
    }
    out
}

/// `5567(0x15bf)` → 5567; `32(0x20) KB` → 32; `2700` → 2700.
fn number(v: &str) -> Option<u64> {
    v.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The fields rocminfo prints that come from the fixture, as (rocminfo key, probe value).
fn expected(a: &Agent) -> Vec<(&'static str, Option<u64>)> {
    let n = |v: Option<u32>| v.map(u64::from);
    vec![
        ("Node", Some(u64::from(a.node))),
        ("Chip ID", n(a.chip_id)),
        ("BDFID", n(a.bdfid)),
        ("Compute Unit", n(a.compute_units)),
        ("SIMDs per CU", n(a.simds_per_cu)),
        // A runtime quirk, not a disagreement: ROCr 5.2 answers NUM_SHADER_ENGINES with the
        // thunk's NumShaderBanks, KFD's array_count, which kfd_topology.c sets to shader engines
        // × shader arrays per engine. The probe reports the engines themselves.
        (
            "Shader Engines",
            a.shader_engines
                .zip(a.shader_arrays_per_engine)
                .map(|(e, s)| u64::from(e * s)),
        ),
        ("Shader Arrs. per Eng.", n(a.shader_arrays_per_engine)),
        ("Wavefront Size", n(a.wavefront_size)),
        ("Max Waves Per CU", n(a.max_waves_per_cu)),
        ("Max Work-item Per CU", n(a.max_work_items_per_cu)),
        ("Max Clock Freq. (MHz)", n(a.max_clock_mhz)),
        ("cache L1", a.caches.l1_kib),
        ("cache L2", a.caches.l2_kib),
    ]
}

/// The `/proc/cpuinfo` libhsakmt reads under the emulator: the overlay's, else the fixture's.
fn served_cpuinfo(dir: &Path, overlay: Option<&Path>) -> Option<String> {
    [
        overlay.map(Path::to_path_buf),
        Some(dir.join("emulate")),
        Some(dir.to_path_buf()),
    ]
    .into_iter()
    .flatten()
    .find_map(|d| std::fs::read_to_string(d.join("proc/cpuinfo")).ok())
}

/// Each CPU agent of rocminfo against the probe's, the probe's names derived from the cpuinfo
/// the emulator served (the probe itself reads only the fixture's, which captures seldom hold):
/// Name and Marketing Name (the model of the processor whose APIC id is the node's
/// `cpu_core_id_base`) and the first pool's size in KB (the node's system memory). Returns the
/// number of fields compared.
fn compare_cpus(
    name: &str,
    dir: &Path,
    overlay: Option<&Path>,
    theirs: &[BTreeMap<String, String>],
) -> usize {
    let source = Source::fixture(dir).unwrap();
    let mut facts = rocm_probe::facts::agent::AgentFacts::gather(&source).unwrap();
    facts.cpu_models = served_cpuinfo(dir, overlay)
        .map(|t| rocm_probe::facts::agent::cpu_models(&t))
        .unwrap_or_default();
    let inv = Inventory::from_facts(&facts);
    // libhsakmt 5.2 allocates get_nprocs() records and stops reading cpuinfo at a processor
    // beyond them: on a host with fewer CPUs than the capture a node whose first core lies past
    // them gets no name. The probe, reading the machine it runs on, has no such limit.
    let host_cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut compared = 0;
    if theirs.is_empty() {
        // ROCr 5.2 made no agent at all, not even the CPU's (hsa-override-igpu; the same as the
        // unexplained case tests/data/emulator-fixtures.txt leaves out): nothing to compare.
        return 0;
    }
    for ours in inv
        .agents
        .iter()
        .filter(|a| a.device_type == DeviceType::Cpu)
    {
        let node = ours.node.to_string();
        let Some(agent) = theirs.iter().find(|a| {
            a.get("Device Type").map(String::as_str) == Some("CPU") && a.get("Node") == Some(&node)
        }) else {
            panic!("{name}: rocminfo has no CPU agent for node {node}");
        };
        let base = facts
            .topology
            .nodes
            .iter()
            .find(|n| n.id == ours.node)
            .and_then(|n| n.props().cpu_core_id_base)
            .unwrap_or_default();
        for key in ["Name", "Marketing Name"] {
            let got = agent.get(key).map(String::as_str).unwrap_or_default();
            if got.is_empty() && base >= host_cpus {
                continue;
            }
            assert_eq!(
                Some(got),
                ours.name.as_deref(),
                "{name} CPU node {node}: {key}"
            );
            compared += 1;
        }
        if let Some(bytes) = ours.memory_bytes {
            assert_eq!(
                agent.get("pool 1 size").and_then(|v| number(v)),
                Some(bytes / 1024),
                "{name} CPU node {node}: pool 1 size"
            );
            compared += 1;
        }
    }
    compared
}

/// The fixture's `fixture.toml`, parsed.
fn fixture_config(dir: &Path) -> rocm_probe::source::fixture::FixtureConfig {
    let file = dir.join("fixture.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    rocm_probe::source::fixture::FixtureConfig::parse(&text, &file).unwrap()
}

/// One line of tests/data/emulator-fixtures.txt: `FIXTURE [override=X.Y.Z] [kfd-unopenable]`.
struct Eligible {
    name: String,
    dir: PathBuf,
    override_gfx: Option<String>,
    /// The fixture's identity cannot open /dev/kfd (denied, or absent): rocminfo must fail to.
    kfd_unopenable: bool,
}

fn eligible() -> Vec<Eligible> {
    let list = std::fs::read_to_string(fixtures_dir().join("../tests/data/emulator-fixtures.txt"))
        .expect("tests/data/emulator-fixtures.txt");
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap().to_owned();
            let mut e = Eligible {
                dir: fixtures_dir().join(&name),
                name,
                override_gfx: None,
                kfd_unopenable: false,
            };
            for word in w {
                match word.split_once('=') {
                    Some(("override", v)) => e.override_gfx = Some(v.to_owned()),
                    None if word == "kfd-unopenable" => e.kfd_unopenable = true,
                    _ => panic!("emulator-fixtures.txt: {l}: unknown word {word}"),
                }
            }
            e
        })
        .collect()
}

/// The render nodes the fixture's `[[device]]` table declares.
fn render_nodes(dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(dir.join("fixture.toml")).unwrap_or_default();
    let doc: toml::Value = toml::from_str(&text).expect("fixture.toml parses");
    doc.get("device")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            d.get("path")?
                .as_str()?
                .strip_prefix("/dev/dri/renderD")?
                .parse()
                .ok()
        })
        .collect()
}

fn ready() -> bool {
    have(ROCMINFO, "rocminfo") && have(DRM_HEADER, "libdrm-dev")
}

/// The processor ROCr builds an agent for: the override's, else the GPU's own.
fn processor(agent: &Agent, override_gfx: Option<&str>) -> String {
    match override_gfx {
        Some(v) => {
            let p: Vec<u32> = v.split('.').map(|x| x.parse().unwrap()).collect();
            format!("gfx{}{}{:x}", p[0], p[1], p[2])
        }
        None => agent
            .name
            .clone()
            .expect("a GPU agent with gfx_target_version has a name"),
    }
}

#[test]
fn rocminfo_under_the_emulator_agrees_with_agents_field_by_field() {
    if !ready() {
        return;
    }
    // What the probe knows of Debian's ROCr 5.2 decides which GPUs the real runtime keeps.
    let rocr = rocr_isa::release(&RocmVersion {
        major: 5,
        minor: 2,
        patch: Some(3),
    })
    .expect("the ISA table has a row for ROCm 5.2");
    let (mut compared, mut dropped, mut denied, mut cpu_fields) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for Eligible {
        name,
        dir,
        override_gfx,
        kfd_unopenable,
    } in eligible()
    {
        let inv = Inventory::collect(&Source::fixture(&dir).unwrap()).unwrap();
        let overlay = invented_overlay(&dir);
        // A fixture whose [emulate] hides libraries rocminfo needs (libnuma, ROCr): like the
        // scenario's machine, rocminfo cannot even start, and the probe's passive verdict puts
        // the root cause in the userspace (layer 3 or 4).
        let hidden = fixture_config(&dir)
            .emulate
            .is_some_and(|e| !e.hide_libraries.is_empty());
        let theirs = match rocminfo(
            &dir,
            overlay.as_ref().map(|o| o.path()),
            override_gfx.as_deref(),
        ) {
            Ok(_) if hidden => {
                problems.push(format!(
                    "{name}: rocminfo ran without the libraries [emulate] hides"
                ));
                continue;
            }
            Ok(text) if !kfd_unopenable => agents(&text),
            Ok(_) => {
                problems.push(format!(
                    "{name}: rocminfo opened /dev/kfd the identity may not"
                ));
                continue;
            }
            Err(e) if kfd_unopenable => {
                // The real stack cannot open /dev/kfd as the fixture's user (denied, or no node),
                // and the probe's passive verdict already put the root cause in the driver layer.
                let report = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
                if !e.contains("Unable to open /dev/kfd") || report.verdict.root_layer != 2 {
                    problems.push(format!(
                        "{name}: rocminfo {e}; the probe's root cause: {:?} (layer {})",
                        report.verdict.root_cause, report.verdict.root_layer
                    ));
                }
                denied += 1;
                continue;
            }
            Err(e) if hidden => {
                let report = Report::collect(&Source::fixture(&dir).unwrap(), Options::default());
                if !e.contains("error while loading shared libraries")
                    || ![3, 4].contains(&report.verdict.root_layer)
                {
                    problems.push(format!(
                        "{name}: rocminfo {e}; the probe's root cause: {:?} (layer {})",
                        report.verdict.root_cause, report.verdict.root_layer
                    ));
                }
                continue;
            }
            Err(e) => {
                problems.push(format!("{name}: rocminfo {}", e.trim_end()));
                continue;
            }
        };
        let cpus = compare_cpus(&name, &dir, overlay.as_ref().map(|o| o.path()), &theirs);
        compared += cpus;
        cpu_fields += cpus;
        let gpus: Vec<_> = theirs
            .iter()
            .filter(|a| a.get("Device Type").map(String::as_str) == Some("GPU"))
            .collect();
        // ROCr keeps a GPU it knows whose render node it can open (one the fixture has and its
        // [emulate] table does not refuse).
        let renders = render_nodes(&dir);
        let refused = fixture_config(&dir)
            .emulate
            .map(|e| e.render_eperm)
            .unwrap_or_default();
        let openable = |a: &Agent| {
            a.drm_render_minor
                .is_some_and(|m| renders.contains(&m) && !refused.contains(&m))
        };
        let kept: Vec<&Agent> = inv
            .gpu_agents()
            .filter(|a| rocr.knows(&processor(a, override_gfx.as_deref())))
            .filter(|a| openable(a))
            .collect();
        // libhsakmt numbers the nodes it keeps without gaps: a node it skipped (its render node
        // would not open) moves every later one down by one in rocminfo's "Node".
        let skipped: Vec<u32> = inv
            .gpu_agents()
            .filter(|a| !openable(a))
            .map(|a| a.node)
            .collect();
        dropped += inv.gpu_agents().count() - kept.len();
        if gpus.len() != kept.len() {
            problems.push(format!(
                "{name}: ROCr 5.2 made {} GPU agent(s); the probe's ISA table predicts {}",
                gpus.len(),
                kept.len()
            ));
            continue;
        }
        for ours in kept {
            let below = skipped.iter().filter(|&&n| n < ours.node).count() as u32;
            let node = (ours.node - below).to_string();
            let agent = gpus
                .iter()
                .find(|a| a.get("Node") == Some(&node))
                .unwrap_or_else(|| panic!("{name}: rocminfo has no GPU agent for node {node}"));
            for (key, want) in expected(ours) {
                // Not captured: rocminfo prints the overlay's invented value (the README says so).
                let Some(want) = want else { continue };
                let want = if key == "Node" {
                    want - u64::from(below)
                } else {
                    want
                };
                let got = agent.get(key).and_then(|v| number(v));
                assert_eq!(got, Some(want), "{name} node {node}: {key}");
                compared += 1;
            }
            // libdrm names the GPU by device id and PCI revision; where the capture has no
            // revision the emulator answers 0, which no real GPU reports, so the names differ by
            // construction (apu-vangogh: ROCr's fallback "AMD Radeon Graphics").
            let minor = ours.drm_render_minor.unwrap_or_default();
            if dir
                .join(format!("sys/class/drm/renderD{minor}/device/revision"))
                .exists()
            {
                assert_eq!(
                    agent.get("Marketing Name"),
                    ours.marketing_name.as_ref(),
                    "{name} node {node}: Marketing Name"
                );
                compared += 1;
            }
            // Strings the fixture decides: the UUID (from unique_id) and, without an override,
            // the full ISA name with its features.
            let mut strings = vec![("Uuid", ours.uuid.clone())];
            if override_gfx.is_none() {
                strings.push(("ISA", ours.isa.clone()));
            }
            for (key, want) in strings {
                let Some(want) = want else { continue };
                assert_eq!(agent.get(key), Some(&want), "{name} node {node}: {key}");
                compared += 1;
            }
            let want_name = processor(ours, override_gfx.as_deref());
            assert_eq!(
                agent.get("Name"),
                Some(&want_name),
                "{name} node {node}: Name"
            );
            compared += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        compared > 100 && dropped > 0 && denied > 0 && cpu_fields > 20,
        "{compared} fields ({cpu_fields} of CPU agents), {dropped} GPUs dropped, {denied} fixtures \
         denied /dev/kfd"
    );
}

/// ROCr 5.2's ISA table does not know gfx1103: the real runtime drops the GPU ("The GPU node has
/// an unrecognized id") and rocminfo lists the CPU alone — what an oracle must reproduce.
#[test]
fn rocr_5_2_drops_a_gpu_it_does_not_know() {
    if !ready() {
        return;
    }
    let dir = fixtures_dir().join("apu-phoenix-780m");
    let theirs = agents(&emulate(&dir, None));
    let types: Vec<_> = theirs
        .iter()
        .filter_map(|a| a.get("Device Type").cloned())
        .collect();
    assert_eq!(types, ["CPU"], "ROCr 5.2 keeps only the CPU agent");
}

/// `rocm-probe --active --dispatch --json`, live, under the emulator: the probe's own thunk, ROCr,
/// HIP and AQL probes against the real Debian stack. Returns finding id → (status, evidence count).
fn probe_active(fixture: &Path, override_gfx: Option<&str>) -> BTreeMap<String, (String, usize)> {
    let mut cmd = emulated(fixture, override_gfx);
    cmd.arg(rocm_probe_tests::probe_binary())
        .args(["--active", "--dispatch", "--json"]);
    let out = cmd.output().expect("scripts/emulate runs");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_owned(),
                (
                    f["status"].as_str().unwrap().to_owned(),
                    f["evidence"].as_array().map_or(0, Vec::len),
                ),
            )
        })
        .collect()
}

/// The success paths of `--active` and `--dispatch`, never run on a GPU here, run on the real
/// stack: KFD answers, libhsakmt opens it, ROCr creates the GPU agent HIP counts, and a barrier
/// packet completes — and without the override ROCr 5.2 drops the GPU, which the probe reports
/// instead of a dispatch "completed on 0 agents".
#[test]
fn active_probes_pass_on_the_real_stack_under_the_emulator() {
    if !ready()
        || !have(
            "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5",
            "libamdhip64-5",
        )
    {
        return;
    }
    let dir = fixtures_dir().join("apu-phoenix-780m");
    let with = probe_active(&dir, Some("10.3.0"));
    for id in [
        "driver.kfd-answers",
        "thunk.hsakmt-answers",
        "runtime.rocr-answers",
        "runtime.hip-answers",
        "runtime.dispatch-ok",
    ] {
        assert_eq!(
            with.get(id).map(|f| f.0.as_str()),
            Some("pass"),
            "{id}: {with:?}"
        );
    }
    assert!(!with.contains_key("driver.kfd-ioctl-failed"), "{with:?}");
    let without = probe_active(&dir, None);
    assert_eq!(
        without
            .get("runtime.rocr-agent-missing")
            .map(|f| f.0.as_str()),
        Some("fail"),
        "{without:?}"
    );
    assert!(!without.contains_key("runtime.dispatch-ok"), "{without:?}");

    // Eight MI210s in two hives: one barrier packet completed on each of the eight GPU agents.
    let mi210 = probe_active(&fixtures_dir().join("mi210-xgmi-8gpu"), None);
    assert_eq!(
        mi210.get("runtime.dispatch-ok"),
        Some(&("pass".to_owned(), 8)),
        "{mi210:?}"
    );
}

/// The properties of every KFD topology node of `dir`, in node order: two fixtures with equal
/// lists are the same machine's topology.
fn topology_of(dir: &Path) -> Vec<(String, String)> {
    let nodes = dir.join("sys/class/kfd/kfd/topology/nodes");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&nodes)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| {
            let text = std::fs::read_to_string(e.path().join("properties")).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

/// Each `active-*` scenario with an `[emulate]` table, reproduced by the real stack: the
/// emulator injects the table's faults (or none: the fixture's `[identity]` and device modes
/// alone refuse an open) into the scenario's topology — with `mi210-xgmi-8gpu`'s overlay for the
/// scenarios that share its 8x MI210 topology, the fixture's own `emulate/`, else one
/// `make-overlay --invent-topology` writes — `rocm-probe --active --dispatch` runs live, and every
/// active finding the scenario's `[expect]` names (KFD's, ROCr's, HIP's, the dispatch's) comes
/// out of the real libraries with the same id.
#[test]
fn active_scenarios_are_reproduced_by_the_real_stack() {
    if !ready()
        || !have(
            "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5",
            "libamdhip64-5",
        )
    {
        return;
    }
    let mi210 = fixtures_dir().join("mi210-xgmi-8gpu");
    let mi210_topology = topology_of(&mi210);
    let mut reproduced = 0;
    for (name, dir) in rocm_probe_tests::fixtures() {
        let config = fixture_config(&dir);
        let (Some(_), Some(expect)) = (config.emulate.as_ref(), config.expect.as_ref()) else {
            continue;
        };
        let invented = if topology_of(&dir) == mi210_topology {
            None
        } else {
            invented_overlay(&dir)
        };
        let overlay = match &invented {
            Some(t) => t.path().to_path_buf(),
            None if topology_of(&dir) == mi210_topology => mi210.join("emulate"),
            None => dir.join("emulate"),
        };
        let mut cmd = emulated(&dir, None);
        cmd.env("KFD_EMU_OVERLAY", &overlay)
            .arg(rocm_probe_tests::probe_binary())
            .args(["--active", "--dispatch", "--json"]);
        let out = cmd.output().expect("scripts/emulate runs");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let live: BTreeMap<&str, &str> = doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| (f["id"].as_str().unwrap(), f["status"].as_str().unwrap()))
            .collect();
        // The active findings: what the probes answer, as opposed to what the fixture's files
        // say (the live machine's installs are Debian's, not the scenario's).
        // (`driver.kfd-permission-denied` and `-ready` judge the fixture's device files, which
        // the live run under the emulator does not read.)
        // With `hide_libraries` the live machine lacks what the scenario's lacked, so what the
        // installed userspace fails with is the scenario's too.
        let hides = config
            .emulate
            .as_ref()
            .is_some_and(|e| !e.hide_libraries.is_empty());
        let active = |id: &str| {
            (id.starts_with("driver.kfd-")
                && !["driver.kfd-permission-denied", "driver.kfd-ready"].contains(&id))
                || id.starts_with("runtime.dispatch-")
                || [
                    "runtime.rocr-answers",
                    "runtime.hip-answers",
                    "thunk.hsakmt-answers",
                    "thunk.hsakmt-node-mismatch",
                    "runtime.rocr-agent-missing",
                    "runtime.hip-failed",
                ]
                .contains(&id)
                || (hides
                    && [
                        "thunk.missing",
                        "thunk.no-runtime",
                        "thunk.hsakmt-load-failed",
                        "thunk.hsakmt-not-installed",
                        "runtime.no-rocm",
                        "runtime.rocr-load-failed",
                        "runtime.rocr-not-installed",
                        "runtime.hip-failed",
                        "runtime.hip-not-installed",
                    ]
                    .contains(&id))
        };
        let expected: Vec<&String> = expect
            .findings
            .iter()
            .flatten()
            .filter(|id| active(id))
            .collect();
        assert!(!expected.is_empty(), "{name}: nothing to reproduce");
        for id in expected {
            assert!(
                live.contains_key(id.as_str()),
                "{name}: {id} not reproduced: {live:?}"
            );
        }
        if let Some(root) = expect.root.as_deref().filter(|r| active(r)) {
            assert!(
                live.contains_key(root),
                "{name}: root {root} not reproduced"
            );
        }
        reproduced += 1;
    }
    assert!(reproduced >= 10, "only {reproduced} scenarios reproduced");
}

/// A finding of a `--json` report: its status, summary and evidence (source, value).
type Reported = (String, String, Vec<(String, String)>);

/// Finding id → what the `--json` report says of it.
fn findings_of(doc: &serde_json::Value) -> BTreeMap<String, Reported> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let evidence = f["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    (
                        e["source"].as_str().unwrap_or_default().to_owned(),
                        e["value"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            (
                f["id"].as_str().unwrap().to_owned(),
                (
                    f["status"].as_str().unwrap().to_owned(),
                    f["summary"].as_str().unwrap_or_default().to_owned(),
                    evidence,
                ),
            )
        })
        .collect()
}

/// ROCm 1.6's own kernel (`active-rocm-1.6-kernel-polaris`, `[emulate] kfd_numbering`): the live
/// probe's KFD questions get exactly the fixture's `[active]` answers (interface 1.2, no GPU list,
/// GET_PROCESS_APERTURES_NEW refused by what is UNMAP_MEMORY_FROM_GPU there, nothing else asked),
/// and Debian's rocminfo (ROCm 5.2, upstream numbering) cannot initialise ROCr there either.
#[test]
fn rocm_1_6_kernel_refuses_the_probe_and_rocminfo_alike() {
    if !ready() {
        return;
    }
    let dir = fixtures_dir().join("active-rocm-1.6-kernel-polaris");
    let invented = invented_overlay(&dir);
    let overlay = invented
        .as_ref()
        .map_or_else(|| dir.join("emulate"), |t| t.path().to_path_buf());

    let mut cmd = emulated(&dir, None);
    cmd.env("KFD_EMU_OVERLAY", &overlay)
        .arg(rocm_probe_tests::probe_binary())
        .args(["--active", "--json"]);
    let out = cmd.output().expect("scripts/emulate runs");
    let live: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let recorded = Command::new(rocm_probe_tests::probe_binary())
        .arg("--root")
        .arg(&dir)
        .arg("--json")
        .output()
        .expect("rocm-probe runs");
    let recorded: serde_json::Value = serde_json::from_slice(&recorded.stdout).unwrap();
    let (live_f, recorded_f) = (findings_of(&live), findings_of(&recorded));
    for id in [
        "driver.kfd-answers",
        "driver.kfd-interface-old",
        "driver.kfd-ioctl-failed",
    ] {
        assert_eq!(live_f.get(id), recorded_f.get(id), "{id}");
    }
    let failed = &live_f["driver.kfd-ioctl-failed"];
    assert_eq!(failed.0, "fail");
    assert_eq!(
        failed.2,
        [(
            "active:ioctl".to_owned(),
            "GET_PROCESS_APERTURES_NEW: EINVAL".to_owned()
        )]
    );
    let answers: Vec<&str> = live_f["driver.kfd-answers"]
        .2
        .iter()
        .map(|(s, v)| {
            if s == "active:GET_VERSION" {
                v.as_str()
            } else {
                s.as_str()
            }
        })
        .collect();
    assert_eq!(
        answers,
        ["active:open /dev/kfd", "1.2"],
        "no GPUs, no memory"
    );
    assert_eq!(live["verdict"]["root_cause"], "driver.kfd-ioctl-failed");

    let err = rocminfo(&dir, Some(&overlay), None).expect_err("rocminfo fails on this kernel");
    for line in [
        "ROCk module is loaded",
        "hsa api call failure at: ./rocminfo.cc:1140",
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES",
    ] {
        assert!(err.contains(line), "{line}: {err}");
    }
}
