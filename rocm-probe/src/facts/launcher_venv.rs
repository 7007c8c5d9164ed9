//! Layer 7: the Python environments application launchers keep under the home directory
//! (Stability Matrix's `~/StabilityMatrix/Packages/<name>/venv`). A program such a launcher starts
//! runs in its own environment, which no `VIRTUAL_ENV` names when the probe runs from a shell
//! (Comfy-Org/ComfyUI#6649: a CUDA PyTorch in Stability Matrix's ComfyUI environment on an RX
//! 9070 XT). Where to look is data: `rocm-probe/data/launcher_venvs.toml`, each row citing the
//! launcher's source; `build.rs` compiles it into [`LAUNCHERS`]. Nothing is searched: a `*`
//! component is one listing of a directory, bounded.

pub mod data;

use crate::source::problem::{Problem, optional};
use crate::source::root::{SysRoot, is_clean_absolute};

/// One row of `data/launcher_venvs.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launcher {
    /// The launcher, the environments' origin in the report.
    pub name: &'static str,
    /// Environment prefixes relative to the home directory; one component may be `*`.
    pub paths: &'static [&'static str],
    /// Where the launcher records a data directory the user chose, when it does.
    pub library: Option<LibraryFile>,
    /// Where the paths come from.
    pub source: &'static str,
}

/// A JSON file under the home directory naming a launcher's data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryFile {
    /// The file, relative to the home directory.
    pub file: &'static str,
    /// The top-level key whose string value is the directory.
    pub key: &'static str,
    /// Environment prefixes relative to that directory; one component may be `*`.
    pub paths: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/launcher_venv.rs"));

/// At most this many subdirectories of a `*` component are looked at (in name order).
pub const MAX_EXPANDED: usize = 32;

/// The environment prefixes of every launcher under `home` that exist, each with its launcher's
/// name, in the table's order; and whether a bound was reached.
pub fn venvs(
    root: &SysRoot,
    home: &str,
    problems: &mut Vec<Problem>,
) -> (Vec<(String, &'static str)>, bool) {
    let mut out = Vec::new();
    let mut truncated = false;
    for l in LAUNCHERS {
        let mut patterns: Vec<String> = l.paths.iter().map(|p| format!("{home}/{p}")).collect();
        if let Some(lib) = l.library
            && let Some(dir) = library_dir(root, &format!("{home}/{}", lib.file), lib.key, problems)
        {
            patterns.extend(lib.paths.iter().map(|p| format!("{dir}/{p}")));
        }
        for pattern in patterns {
            for p in expand(root, &pattern, problems, &mut truncated) {
                if !out.iter().any(|(o, _)| *o == p) && root.exists(&p) {
                    out.push((p, l.name));
                }
            }
        }
    }
    (out, truncated)
}

/// The data directory a launcher's JSON settings file names under `key`, when it is a clean
/// absolute path ([`is_clean_absolute`]).
fn library_dir(
    root: &SysRoot,
    file: &str,
    key: &str,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let text = optional(root.read_text(file), problems)?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let dir = v.get(key)?.as_str()?.trim_end_matches('/');
    // No `*` component: the paths below it are expanded at their own `*`.
    (is_clean_absolute(dir) && !dir.split('/').any(|c| c == "*")).then(|| dir.to_owned())
}

/// `path` with its `*` component replaced by each subdirectory name there.
fn expand(
    root: &SysRoot,
    path: &str,
    problems: &mut Vec<Problem>,
    truncated: &mut bool,
) -> Vec<String> {
    let Some((dir, rest)) = path.split_once("/*") else {
        return vec![path.to_owned()];
    };
    let Some(mut names) = optional(root.read_dir(dir), problems) else {
        return Vec::new();
    };
    names.sort();
    *truncated |= names.len() > MAX_EXPANDED;
    names
        .into_iter()
        .take(MAX_EXPANDED)
        .map(|n| format!("{dir}/{n}{rest}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfs::write as touch;

    #[test]
    fn stability_matrix_package_environments_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(
            b,
            "home/u/StabilityMatrix/Packages/ComfyUI/venv/pyvenv.cfg",
            "",
        );
        touch(
            b,
            "home/u/StabilityMatrix/Packages/Fooocus/venv/pyvenv.cfg",
            "",
        );
        // A package without an environment (not installed yet) is left out.
        touch(b, "home/u/StabilityMatrix/Packages/Empty/README", "");
        let root = SysRoot::fixture(b);
        let mut problems = Vec::new();
        let (v, truncated) = venvs(&root, "/home/u", &mut problems);
        assert!(problems.is_empty() && !truncated);
        assert_eq!(
            v,
            [
                (
                    "/home/u/StabilityMatrix/Packages/ComfyUI/venv".to_owned(),
                    "Stability Matrix"
                ),
                (
                    "/home/u/StabilityMatrix/Packages/Fooocus/venv".to_owned(),
                    "Stability Matrix"
                ),
            ]
        );
        assert!(venvs(&root, "/home/nobody", &mut problems).0.is_empty());
    }

    #[test]
    fn a_data_directory_chosen_elsewhere_is_read_from_library_json() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        // Comfy-Org/ComfyUI#6649's first report: /home/greg/Applications/StabilityMatrix.
        touch(
            b,
            "home/g/.config/StabilityMatrix/library.json",
            r#"{ "LibraryPath": "/home/g/Applications/StabilityMatrix" }"#,
        );
        touch(
            b,
            "home/g/Applications/StabilityMatrix/Packages/ComfyUI/venv/pyvenv.cfg",
            "",
        );
        let root = SysRoot::fixture(b);
        let mut problems = Vec::new();
        let (v, _) = venvs(&root, "/home/g", &mut problems);
        assert_eq!(
            v,
            [(
                "/home/g/Applications/StabilityMatrix/Packages/ComfyUI/venv".to_owned(),
                "Stability Matrix"
            )]
        );
        // Hostile values name nothing.
        for bad in [
            r#"{"LibraryPath": "/a/../b"}"#,
            r#"{"LibraryPath": "rel"}"#,
            "[1",
            r#"{"LibraryPath": 3}"#,
        ] {
            touch(b, "home/g/.config/StabilityMatrix/library.json", bad);
            assert!(venvs(&root, "/home/g", &mut problems).0.is_empty(), "{bad}");
        }
    }

    #[test]
    fn a_huge_packages_directory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        for i in 0..MAX_EXPANDED + 5 {
            touch(
                b,
                &format!("h/StabilityMatrix/Packages/p{i:03}/venv/pyvenv.cfg"),
                "",
            );
        }
        let root = SysRoot::fixture(b);
        let (v, truncated) = venvs(&root, "/h", &mut Vec::new());
        assert_eq!(v.len(), MAX_EXPANDED);
        assert!(truncated);
    }

    #[test]
    fn every_row_cites_its_source() {
        assert!(!LAUNCHERS.is_empty());
        assert!(LAUNCHERS.iter().all(|l| l.source.starts_with("https://")));
    }
}
