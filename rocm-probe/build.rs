//! Compiles the message catalogue (`src/i18n/messages/*.toml`) and the rules' and layers'
//! Chinese (`src/i18n/zh/*.toml`) into sorted tables, so a report parses no TOML at run time,
//! and stops the build when a message lacks a language, its languages disagree on placeholders,
//! or a Chinese file is malformed: a broken catalogue is a build error, never text left out.

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/i18n/catalogue.rs"]
mod catalogue;

fn main() {
    let dir = Path::new("src/i18n/messages");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("src/i18n/messages is part of the crate")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut messages = Vec::new();
    for path in &files {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("readable catalogue file");
        match catalogue::parse(&path.display().to_string(), &text) {
            Ok(m) => messages.extend(m),
            Err(e) => panic!("message catalogue: {e}"),
        }
    }
    let problems = catalogue::check(&messages);
    assert!(
        problems.is_empty(),
        "message catalogue:\n  {}",
        problems.join("\n  ")
    );
    messages.sort_by(|a, b| a.key.cmp(&b.key));
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
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("messages.rs"), out).expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("zh.rs"), chinese()).expect("OUT_DIR is writable");
}

/// The rules' titles and explanations and the layer, status and frame words in Chinese.
fn chinese() -> String {
    let dir = Path::new("src/i18n/zh");
    println!("cargo::rerun-if-changed={}", dir.display());
    let read = |name: &str| {
        let path = dir.join(name);
        println!("cargo::rerun-if-changed={}", path.display());
        std::fs::read_to_string(&path).expect("readable Chinese catalogue file")
    };
    let mut rules = Vec::new();
    for name in ["a.toml", "b.toml", "c.toml"] {
        match catalogue::parse_rules(name, &read(name)) {
            Ok(r) => rules.extend(r),
            Err(e) => panic!("Chinese catalogue: {e}"),
        }
    }
    rules.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = rules.windows(2).find(|w| w[0].id == w[1].id) {
        panic!("Chinese catalogue: {} is in two files", w[0].id);
    }
    let mut out =
        String::from("/// Every rule's Chinese (id, title, explanation), sorted by id.\n");
    writeln!(
        out,
        "pub(crate) static ZH_RULES: [(&str, &str, &str); {}] = [",
        rules.len()
    )
    .unwrap();
    for r in &rules {
        writeln!(out, "    ({:?}, {:?}, {:?}),", r.id, r.title, r.explain).unwrap();
    }
    out.push_str("];\n");
    let frame = catalogue::parse_frame("layers.toml", &read("layers.toml"))
        .unwrap_or_else(|e| panic!("Chinese catalogue: {e}"));
    for (section, mut entries) in frame {
        entries.sort();
        writeln!(
            out,
            "/// `[{section}]` of `zh/layers.toml`, sorted by key.\n\
             pub(crate) static ZH_{}: [(&str, &str); {}] = [",
            section.to_uppercase(),
            entries.len()
        )
        .unwrap();
        for (k, v) in &entries {
            writeln!(out, "    ({k:?}, {v:?}),").unwrap();
        }
        out.push_str("];\n");
    }
    out
}
