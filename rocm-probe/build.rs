//! Compiles the catalogue — the messages of `src/i18n/messages/*.toml` and, per layer,
//! `src/checks/<layer>/messages.toml` (its messages, its rules' titles and explanations, its
//! title) — into sorted tables, so a report parses no TOML at run time. The build stops when a
//! message lacks a language or its languages disagree on placeholders, when a rule declared in
//! `checks/<layer>/rules.rs` has no texts in its layer's file or a text names no declared rule,
//! or when a file is malformed: a broken catalogue is a build error, never text left out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/i18n/catalogue.rs"]
mod catalogue;

#[path = "src/facts/data_file.rs"]
mod data_file;

#[path = "src/facts/support/data.rs"]
#[allow(dead_code)]
mod support_data;

#[path = "src/facts/firmware/data.rs"]
#[allow(dead_code)]
mod firmware_data;
#[path = "src/facts/rocr_isa/data.rs"]
#[allow(dead_code)]
mod rocr_isa_data;

#[path = "src/facts/min_kernel/data.rs"]
#[allow(dead_code)]
mod min_kernel_data;

#[path = "src/facts/bundled/data.rs"]
#[allow(dead_code)]
mod bundled_data;

#[path = "src/facts/launcher_venv/data.rs"]
#[allow(dead_code)]
mod launcher_venv_data;

#[path = "src/facts/override_hazard/data.rs"]
#[allow(dead_code)]
mod override_hazard_data;

#[path = "src/facts/kernel_log/data.rs"]
#[allow(dead_code)]
mod kernel_log_data;

#[path = "src/facts/firmware_bad/data.rs"]
#[allow(dead_code)]
mod firmware_bad_data;

#[path = "src/facts/kernel_bad/data.rs"]
#[allow(dead_code)]
mod kernel_bad_data;

#[path = "src/facts/rocm_bad/data.rs"]
#[allow(dead_code)]
mod rocm_bad_data;

#[path = "src/facts/libenv/data.rs"]
#[allow(dead_code)]
mod environment_data;

fn read(path: &Path) -> String {
    println!("cargo::rerun-if-changed={}", path.display());
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// The layer folders under `src/checks`, sorted.
fn layer_dirs() -> Vec<PathBuf> {
    let dir = Path::new("src/checks");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut dirs: Vec<_> = std::fs::read_dir(dir)
        .expect("src/checks is part of the crate")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("messages.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn main() {
    let mut messages = Vec::new();
    for path in toml_files(Path::new("src/i18n/messages")) {
        let file = catalogue::parse_file(&path.display().to_string(), &read(&path))
            .unwrap_or_else(|e| panic!("message catalogue: {e}"));
        assert!(
            file.rules.is_empty() && file.layer.is_none(),
            "message catalogue: {}: rules and layer titles live in their layer's \
             checks/<layer>/messages.toml",
            path.display()
        );
        messages.extend(file.messages);
    }
    let mut rules = Vec::new();
    let mut layers = Vec::new();
    let mut problems = Vec::new();
    for dir in layer_dirs() {
        let layer = dir.file_name().unwrap().to_string_lossy().into_owned();
        let path = dir.join("messages.toml");
        let file = catalogue::parse_file(&path.display().to_string(), &read(&path))
            .unwrap_or_else(|e| panic!("message catalogue: {e}"));
        messages.extend(file.messages);
        match file.layer {
            Some((en, zh)) => layers.push((layer.clone(), en, zh)),
            None => problems.push(format!("{}: no [layer] title", path.display())),
        }
        let declared = catalogue::declared_ids(&read(&dir.join("rules.rs")));
        let texts: Vec<&str> = file.rules.iter().map(|r| r.id.as_str()).collect();
        for id in &declared {
            if !texts.contains(&id.as_str()) {
                problems.push(format!("{}: no [rules.\"{id}\"] texts", path.display()));
            }
        }
        for id in &texts {
            if !declared.iter().any(|d| d == id) {
                problems.push(format!(
                    "{}: [rules.\"{id}\"] is declared by no rule in rules.rs",
                    path.display()
                ));
            }
            if id.split_once('.').map(|(l, _)| l) != Some(layer.as_str()) {
                problems.push(format!("{}: {id} is not a {layer} id", path.display()));
            }
        }
        rules.extend(file.rules);
    }
    problems.extend(catalogue::check(&messages));
    let environment = environment_table();
    for key in &environment.1 {
        if !messages.iter().any(|m| &m.key == key) {
            problems.push(format!(
                "data/environment.toml names the message {key}, which is not in the catalogue"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "message catalogue:\n  {}",
        problems.join("\n  ")
    );
    messages.sort_by(|a, b| a.key.cmp(&b.key));
    rules.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = rules.windows(2).find(|w| w[0].id == w[1].id) {
        panic!("message catalogue: {} has texts twice", w[0].id);
    }

    let mut out = String::from("/// Every message, sorted by key: (key, English, Chinese).\n");
    writeln!(
        out,
        "pub(crate) static MESSAGES: [(&str, &str, &str); {}] = [",
        messages.len()
    )
    .unwrap();
    for m in &messages {
        writeln!(out, "    ({:?}, {:?}, {:?}),", m.key, m.en, m.zh).unwrap();
    }
    out.push_str("];\n");
    writeln!(
        out,
        "/// Every rule's texts, sorted by id: (id, [title en, title zh], [explain en, explain zh]).\n\
         pub(crate) static RULE_TEXTS: [(&str, [&str; 2], [&str; 2]); {}] = [",
        rules.len()
    )
    .unwrap();
    for r in &rules {
        writeln!(
            out,
            "    ({:?}, [{:?}, {:?}], [{:?}, {:?}]),",
            r.id, r.title.0, r.title.1, r.explain.0, r.explain.1
        )
        .unwrap();
    }
    out.push_str("];\n");
    writeln!(
        out,
        "/// Every layer's title, sorted by layer id: (id, [English, Chinese]).\n\
         pub(crate) static LAYER_TITLES: [(&str, [&str; 2]); {}] = [",
        layers.len()
    )
    .unwrap();
    for (id, en, zh) in &layers {
        writeln!(out, "    ({id:?}, [{en:?}, {zh:?}]),").unwrap();
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("messages.rs"), out).expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("support.rs"), support_table())
        .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("min_kernel.rs"),
        min_kernel_table(),
    )
    .expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("firmware.rs"), firmware_table())
        .expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("rocr_isa.rs"), rocr_isa_table())
        .expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("bundled.rs"), bundled_table())
        .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("launcher_venv.rs"),
        launcher_venv_table(),
    )
    .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("firmware_bad.rs"),
        firmware_bad_table(),
    )
    .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("kernel_bad.rs"),
        kernel_bad_table(),
    )
    .expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("rocm_bad.rs"), rocm_bad_table())
        .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("override_hazard.rs"),
        override_hazard_table(),
    )
    .expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("environment.rs"), environment.0)
        .expect("OUT_DIR is writable");
    std::fs::write(
        Path::new(&out_dir).join("kernel_log.rs"),
        kernel_log_table(),
    )
    .expect("OUT_DIR is writable");
}

/// Parses the knowledge file `path` with its kind's parser; a malformed file stops the build,
/// naming it.
fn load<T>(path: &str, parse: fn(&str) -> Result<T, String>) -> T {
    let path = Path::new(path);
    parse(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A knowledge table as Rust: `AS_OF`, then `pub static {decl} = &[ … ];` with one item per row
/// (`doc` says in which order).
fn generated(as_of: &str, doc: &str, decl: &str, rows: impl IntoIterator<Item = String>) -> String {
    let mut out = format!(
        "/// When the rows were last checked against their sources.\n\
         pub const AS_OF: &str = {as_of:?};\n/// {doc}\npub static {decl} = &[\n"
    );
    for row in rows {
        writeln!(out, "    {row},").unwrap();
    }
    out.push_str("];\n");
    out
}

/// `data/bundled.toml` in terms of `facts::bundled`'s types.
fn bundled_table() -> String {
    let data = load("data/bundled.toml", bundled_data::parse);
    let rows = data.rows.iter().map(|r| {
        let kind = match r.kind.as_str() {
            "ollama-runners" => "OllamaRunners",
            "ggml-hip" => "GgmlHip",
            "home-vendor-dirs" => "HomeVendorDirs",
            "home-therock-dirs" => "HomeTheRockDirs",
            _ => "SiteExtensions",
        };
        format!(
            "Runtime {{ name: {:?}, kind: Kind::{kind}, paths: &{:?}, source: {:?} }}",
            r.name, r.paths, r.source
        )
    });
    generated(
        &data.as_of,
        "Where applications keep their own ROCm or HIP code, in the file's order.",
        "RUNTIMES: &[Runtime]",
        rows,
    )
}

/// `data/launcher_venvs.toml` in terms of `facts::launcher_venv`'s types.
fn launcher_venv_table() -> String {
    let data = load("data/launcher_venvs.toml", launcher_venv_data::parse);
    let rows = data.rows.iter().map(|r| {
        let library = r.library.as_ref().map_or_else(
            || "None".to_owned(),
            |l| {
                format!(
                    "Some(LibraryFile {{ file: {:?}, key: {:?}, paths: &{:?} }})",
                    l.file, l.key, l.paths
                )
            },
        );
        format!(
            "Launcher {{ name: {:?}, paths: &{:?}, library: {library}, source: {:?} }}",
            r.name, r.paths, r.source
        )
    });
    generated(
        &data.as_of,
        "Where launchers keep their programs' Python environments, in the file's order.",
        "LAUNCHERS: &[Launcher]",
        rows,
    )
}

/// `data/environment.toml` in terms of `facts::libenv`'s types, and the message keys the rows
/// name (checked against the catalogue by the caller).
fn environment_table() -> (String, Vec<String>) {
    let data = load("data/environment.toml", environment_data::parse);
    let keys: Vec<String> = data
        .rows
        .iter()
        .map(|r| format!("libraries.env-{}", r.message))
        .collect();
    let rows = data.rows.iter().zip(&keys).map(|(r, key)| {
        format!(
            "Setting {{ variable: {:?}, value: {:?}, reader: {:?}, message: {key:?}, \
             fixed_in: {:?}, source: {:?}, report: {:?} }}",
            r.variable, r.value, r.reader, r.fixed_in, r.source, r.report
        )
    });
    let out = generated(
        &data.as_of,
        "The settings, in the file's order.",
        "SETTINGS: &[Setting]",
        rows,
    );
    (out, keys)
}

/// `data/rocr_isa.toml` in terms of `facts::rocr_isa`'s types.
fn rocr_isa_table() -> String {
    let data = load("data/rocr_isa.toml", rocr_isa_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "Row {{ first: ({}, {}), last: ({}, {}), source: {:?}, processors: &{:?} }}",
            r.first.0, r.first.1, r.last.0, r.last.1, r.source, r.processors
        )
    });
    generated(&data.as_of, "The rows, oldest first.", "ROWS: &[Row]", rows)
}

/// `data/support.toml` in terms of `facts::support`'s types.
fn support_table() -> String {
    let data = load("data/support.toml", support_data::parse);
    let rows = data.rows.iter().map(|r| {
        let stream = match r.stream.as_str() {
            "production" => "Production",
            "preview" => "Preview",
            _ => "CoreSdk",
        };
        let mut row = format!(
            "Release {{ major: {}, minor: {}, stream: Stream::{stream}, source: {:?}, \
             released: {:?}, apus_page: {:?}, entries: &[\n",
            r.major, r.minor, r.source, r.released, r.apus_page
        );
        for (target, status, since) in &r.entries {
            let support = ["Supported", "Deprecated", "Unsupported"][*status];
            writeln!(
                row,
                "        Entry {{ target: {target:?}, support: Support::{support}, since_patch: {since} }},"
            )
            .unwrap();
        }
        row.push_str("    ] }");
        row
    });
    generated(
        &data.as_of,
        "The release rows, oldest first.",
        "RELEASES: &[Release]",
        rows,
    )
}

/// PCI device ids as Rust literals.
fn device_ids(devices: &[u32]) -> String {
    let ids: Vec<String> = devices.iter().map(|d| format!("0x{d:04x}")).collect();
    ids.join(", ")
}

/// `data/min_kernel.toml` in terms of `facts::min_kernel`'s types.
fn min_kernel_table() -> String {
    let data = load("data/min_kernel.toml", min_kernel_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "MinKernel {{ target: {:?}, gc: {:?}, kernel: ({}, {}), devices: &[{}], source: {:?} }}",
            r.target,
            r.gc,
            r.kernel.0,
            r.kernel.1,
            device_ids(&r.devices),
            r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "GPUS: &[MinKernel]",
        rows,
    )
}

/// `data/firmware_bad.toml` in terms of `facts::firmware_bad`'s types.
fn firmware_bad_table() -> String {
    let data = load("data/firmware_bad.toml", firmware_bad_data::parse);
    let rows = data.rows.iter().map(|r| {
        let versions: Vec<String> = r.versions.iter().map(|v| format!("0x{v:x}")).collect();
        format!(
            "KnownBad {{ target: {:?}, component: {:?}, versions: &[{}], symptom: {:?}, source: {:?} }}",
            r.target,
            r.component,
            versions.join(", "),
            r.symptom,
            r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "KNOWN_BAD: &[KnownBad]",
        rows,
    )
}

/// `data/kernel_bad.toml` in terms of `facts::kernel_bad`'s types.
fn kernel_bad_table() -> String {
    let data = load("data/kernel_bad.toml", kernel_bad_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "Hazard {{ target: {:?}, parameter: {:?}, workaround: {}, fixed: ({}, {}), symptom: {:?}, source: {:?} }}",
            r.target, r.parameter, r.workaround, r.fixed.0, r.fixed.1, r.symptom, r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "HAZARDS: &[Hazard]",
        rows,
    )
}

/// `data/rocm_bad.toml` in terms of `facts::rocm_bad`'s types.
fn rocm_bad_table() -> String {
    let data = load("data/rocm_bad.toml", rocm_bad_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "Bug {{ target: {:?}, fixed: ({}, {}), fixed_preview: ({}, {}), kfd_property: {:?}, symptom: {:?}, source: {:?} }}",
            r.target,
            r.fixed.0,
            r.fixed.1,
            r.fixed_preview.0,
            r.fixed_preview.1,
            r.kfd_property,
            r.symptom,
            r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "BUGS: &[Bug]",
        rows,
    )
}

/// `data/override_hazards.toml` in terms of `facts::override_hazard`'s types.
fn override_hazard_table() -> String {
    let data = load("data/override_hazards.toml", override_hazard_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "OverrideHazard {{ target: {:?}, value: {:?}, source: {:?} }}",
            r.target, r.value, r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "HAZARDS: &[OverrideHazard]",
        rows,
    )
}

/// `data/firmware.toml` in terms of `facts::firmware`'s types.
fn firmware_table() -> String {
    let data = load("data/firmware.toml", firmware_data::parse);
    let rows = data.rows.iter().map(|r| {
        format!(
            "Firmware {{ target: {:?}, devices: &[{}], files: &{:?}, source: {:?} }}",
            r.target,
            device_ids(&r.devices),
            r.files,
            r.source
        )
    });
    generated(
        &data.as_of,
        "The rows, in the file's order.",
        "GPUS: &[Firmware]",
        rows,
    )
}

/// `data/kernel_log.toml` in terms of `facts::kernel_log`'s types.
fn kernel_log_table() -> String {
    let data = load("data/kernel_log.toml", kernel_log_data::parse);
    let rows = data.rows.iter().map(|r| {
        let kind: String = r
            .kind
            .split('-')
            .map(|w| w[..1].to_uppercase() + &w[1..])
            .collect();
        format!(
            "Signature {{ kind: Kind::{kind}, all: &{:?}, source: {:?} }}",
            r.all, r.source
        )
    });
    generated(
        &data.as_of,
        "The signatures, in the file's order (the first that matches a line wins).",
        "SIGNATURES: &[Signature]",
        rows,
    )
}
