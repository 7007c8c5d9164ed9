//! The data flows one way (ARCHITECTURE.md §3): each module belongs to a stage, and a module
//! may use only modules of its own stage or earlier ones. This test parses the crate's sources
//! with `syn` and counts as an edge every `crate::facts::module` path anywhere in a file (uses, types,
//! expressions, attribute-free paths inside macro invocations) and every `msg!` invocation (it
//! expands to `$crate::i18n`). Unit tests (`#[cfg(test)]`) are not counted: a test may build
//! its inputs with anything.
//!
//! The table below is the rule. Changing it is a design decision, made here where it is seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Stages in data-flow order, each with the top-level modules (folders) that form it.
const STAGES: &[(&str, &[&str])] = &[
    // Prose: the message catalogue and the language; depends on nothing.
    ("i18n", &["i18n"]),
    // Source: the only code that touches the system (reads, writes, identity, environment),
    // and the data a fixture states in place of a live run.
    ("source", &["source"]),
    // Pure formats and the live probes: code objects, gfx targets, the FFI calls.
    ("formats and probes", &["codeobject", "target", "active"]),
    // Facts: collectors and the views derived from them.
    ("facts", &["facts"]),
    // Checks: the finding model, the rule registry, the checks of each layer.
    ("checks", &["finding", "checks"]),
    // Report: verdict, conformance, the JSON envelope.
    ("report", &["report"]),
    // Export: other formats and views of a report or a machine.
    ("export", &["export"]),
];

/// Modules outside the flow: test support compiled only for tests.
const OUTSIDE: &[&str] = &["testfs"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`checks/driver/mod.rs` → `checks`).
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// Every module a file names, outside `#[cfg(test)]` items.
#[derive(Default)]
struct Uses {
    modules: BTreeSet<String>,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl Uses {
    /// `crate :: name` in a token stream (macro bodies are not parsed as Rust).
    fn scan_tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                proc_macro2::TokenTree::Group(g) => self.scan_tokens(g.stream()),
                proc_macro2::TokenTree::Ident(id) if id == "crate" => {
                    if let (
                        Some(proc_macro2::TokenTree::Punct(a)),
                        Some(proc_macro2::TokenTree::Punct(b)),
                        Some(proc_macro2::TokenTree::Ident(name)),
                    ) = (trees.get(i + 1), trees.get(i + 2), trees.get(i + 3))
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        self.modules.insert(name.to_string());
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Const(c) => &c.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter();
        if let (Some(first), Some(second)) = (segments.next(), segments.next())
            && first.ident == "crate"
        {
            self.modules.insert(second.ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_use_tree(&mut self, tree: &'ast syn::UseTree) {
        if let syn::UseTree::Path(p) = tree
            && p.ident == "crate"
        {
            let mut names = Vec::new();
            collect_use_roots(&p.tree, &mut names);
            self.modules.extend(names);
        }
        syn::visit::visit_use_tree(self, tree);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // `msg!` expands to `$crate::i18n::text(…)`, `text!` to `$crate::i18n::Text::new(…)`.
        if mac
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "msg" || s.ident == "text")
        {
            self.modules.insert("i18n".to_owned());
        }
        self.scan_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

fn collect_use_roots(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => out.push(p.ident.to_string()),
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.ident.to_string()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| collect_use_roots(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

#[test]
fn every_module_uses_only_its_stage_and_earlier_ones() {
    let stage: BTreeMap<&str, usize> = STAGES
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut unknown = BTreeSet::new();
    let mut violations = Vec::new();
    let mut edges = 0;
    for file in &files {
        let module = module_of(file);
        if module == "lib" || OUTSIDE.contains(&module.as_str()) {
            continue;
        }
        let Some(&from) = stage.get(module.as_str()) else {
            unknown.insert(module.clone());
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut uses = Uses::default();
        uses.visit_file(&ast);
        for target in uses.modules.iter().filter(|m| **m != module) {
            let Some(&to) = stage.get(target.as_str()) else {
                // A crate-root item (`crate::Facts`, a re-export) or a module outside the flow.
                continue;
            };
            edges += 1;
            if to > from {
                violations.push(format!(
                    "{}: {module} ({}) uses {target} ({})",
                    file.strip_prefix(src()).unwrap().display(),
                    STAGES[from].0,
                    STAGES[to].0
                ));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules in no stage (add them to STAGES): {unknown:?}"
    );
    assert!(edges > 40, "only {edges} edges found: the scan is broken");
    assert!(
        violations.is_empty(),
        "imports that point to a later stage:\n{}",
        violations.join("\n")
    );
}

/// The scan sees what it must: a later-stage use hidden in a path, a use tree and a macro.
#[test]
fn the_scan_finds_paths_use_trees_and_macro_bodies() {
    let text = r#"
        use crate::{report::Report, facts};
        fn f() { let _ = crate::checks::run(); format!("{}", crate::export::X); msg!("k"); }
        #[cfg(test)]
        mod tests { use crate::export::snapshot; }
    "#;
    let mut uses = Uses::default();
    uses.visit_file(&syn::parse_file(text).unwrap());
    let found: Vec<&str> = uses.modules.iter().map(String::as_str).collect();
    assert_eq!(found, ["checks", "export", "facts", "i18n", "report"]);
}
