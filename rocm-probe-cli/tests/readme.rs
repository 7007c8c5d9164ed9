//! README's examples are what the binary prints (issue #18): every `$ rocm-probe --root
//! fixtures/…` command in a `console` block is run (from the repository root, standard output
//! a pipe: 80 columns), and every line shown under it that is not an elision (`…`) must be a
//! line of its output, in the same order.

mod common;

use std::path::Path;

use common::{probe, run};

struct Example {
    command: String,
    shown: Vec<String>,
}

fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    let mut current: Option<Example> = None;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = line == "```console";
            out.extend(current.take());
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.extend(current.take());
            current = Some(Example {
                command: command.to_owned(),
                shown: Vec::new(),
            });
        } else if let Some(e) = current.as_mut() {
            e.shown.push(line.to_owned());
        }
    }
    out
}

#[test]
fn readme_examples_are_what_the_binary_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut checked = 0;
    for e in examples(&readme) {
        // Fixture examples only: the live machine's output is the machine's.
        if !e.command.starts_with("rocm-probe --root fixtures/") || e.command.contains('#') {
            continue;
        }
        let (command, filter) = match e.command.split_once(" | ") {
            Some((c, f)) => (c, Some(f)),
            None => (e.command.as_str(), None),
        };
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        // An example reading a file this machine lacks (a distribution's library) is skipped.
        if words
            .iter()
            .any(|w| w.starts_with('/') && !Path::new(w).exists())
        {
            continue;
        }
        let r = run(probe().env_remove("COLUMNS").current_dir(root).args(&words));
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        match filter
            .map(|f| f.split_whitespace().collect::<Vec<_>>())
            .as_deref()
        {
            None => {}
            Some(["tail", n]) => {
                let n: usize = n.trim_start_matches('-').parse().unwrap();
                lines = lines.split_off(lines.len().saturating_sub(n));
            }
            Some(["head", n]) => {
                let n: usize = n.trim_start_matches('-').parse().unwrap();
                lines.truncate(n);
            }
            Some(other) => panic!("{}: a filter this test does not know: {other:?}", e.command),
        }
        let mut at = 0;
        for shown in e.shown.iter().filter(|l| !l.contains('…')) {
            match lines[at..].iter().position(|l| l == shown) {
                Some(i) => at += i + 1,
                None => panic!(
                    "README shows a line `{}` does not print (in this order):\n{shown}\n\nit prints:\n{}",
                    e.command,
                    lines.join("\n")
                ),
            }
        }
        checked += 1;
    }
    assert!(checked >= 5, "{checked} examples checked");
}
