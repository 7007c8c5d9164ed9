//! Compiles the message catalogue (`src/i18n/messages/*.toml`) into a sorted table, so a report
//! parses no TOML at run time, and stops the build when a message lacks a language or its
//! languages disagree on placeholders.

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
    let target =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("messages.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
