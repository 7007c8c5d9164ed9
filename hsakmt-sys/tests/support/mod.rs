//! Shared by the ROCr/HIP tests: a C compiler as an oracle independent of bindgen, the headers
//! it needs, and the skip-or-fail rule for things a machine may lack.
//!
//! Everything that is absent makes a test print `skipped: ...` and pass, except under CI (`CI`
//! set), where `scripts/test` installs it and its absence is a failure.

// Each test binary uses only part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's `libhsa-runtime-dev` (ROCm 5.2.3).
pub const HSA_HEADER: &str = "/usr/include/hsa/hsa.h";
/// Debian's `libamdhip64-dev` (HIP 5.2.3).
pub const HIP_HEADER: &str = "/usr/include/hip/hip_runtime_api.h";
/// Debian's `libhsa-runtime64-1`, the file `load_hsa()` finds by soname.
pub const HSA_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";
/// Debian's `libamdhip64-5`, the file `load_hip()` finds by soname when no newer HIP is
/// installed.
pub const HIP_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// Returns whether `path` exists; when it does not, prints why `test` is skipped (and fails
/// under CI, which installs `package`).
pub fn present(test: &str, path: &str, package: &str) -> bool {
    if Path::new(path).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {path} is missing, but CI installs Debian's {package}"
    );
    println!("skipped: {test}: {path} is not installed (Debian package {package})");
    false
}

/// Compiles `source` (C, with `flags`) with the system C compiler (`$CC`, else `cc`), runs it
/// and returns its standard output. Panics when compiling or running fails: callers check that
/// the headers exist first.
pub fn run_c(test: &str, source: &str, flags: &[&str]) -> String {
    let dir = TempDir::new(test);
    let src = dir.0.join("oracle.c");
    let exe = dir.0.join("oracle");
    std::fs::write(&src, source).expect("write the C source");
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let out = Command::new(&cc)
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("{test}: cannot run the C compiler {cc:?}: {e}"));
    assert!(
        out.status.success(),
        "{test}: {cc:?} failed:\n{}\n--- source ---\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{test}: cannot run the compiled oracle: {e}"));
    assert!(run.status.success(), "{test}: the oracle failed: {run:?}");
    String::from_utf8(run.stdout).expect("the oracle prints ASCII")
}

/// Parses `name=value` lines (values as printed by `%lld` / `%zu`).
pub fn parse_values(output: &str) -> BTreeMap<String, i128> {
    output
        .lines()
        .map(|line| {
            let (name, value) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("oracle line without '=': {line:?}"));
            let value = value
                .parse()
                .unwrap_or_else(|_| panic!("oracle value is not an integer: {line:?}"));
            (name.to_owned(), value)
        })
        .collect()
}

/// Every `pub const NAME: TYPE = VALUE;` with an integer value in a generated file, as bindgen
/// wrote it (prettyplease may wrap a long item over several lines).
pub fn generated_integer_consts(code: &str) -> BTreeMap<String, i128> {
    let mut consts = BTreeMap::new();
    for item in code.split("pub const ").skip(1) {
        let Some((decl, _)) = item.split_once(';') else {
            continue;
        };
        let Some((name_ty, value)) = decl.split_once('=') else {
            continue;
        };
        let Some((name, _ty)) = name_ty.split_once(':') else {
            continue;
        };
        let value: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        if let Ok(v) = value.parse::<i128>() {
            consts.insert(name.trim().to_owned(), v);
        }
    }
    consts
}

/// A C program that prints `NAME=<value>` for each of `names` after including `header`.
pub fn print_consts_program(header: &str, names: &[&String]) -> String {
    let mut src = format!("#include <stdio.h>\n#include <{header}>\nint main(void) {{\n");
    for name in names {
        src.push_str(&format!(
            "    printf(\"{name}=%lld\\n\", (long long)({name}));\n"
        ));
    }
    src.push_str("    return 0;\n}\n");
    src
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "hsakmt-sys-{test}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
