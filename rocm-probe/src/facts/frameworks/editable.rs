//! Editable installs: packages a site directory imports from a source tree elsewhere.
//!
//! `pip install -e DIR` leaves no package directory in the site directory, only pointers to the
//! tree (ROCm/ATOM#69: AITER installed with `pip install -e /aiter-test` in the rocm/atom image,
//! its prebuilt `aiter/jit/module_*.so` under `/aiter-test`). What pip and setuptools write, and
//! what is read here — never run:
//! - `*.pth` files (PEP 660's `__editable__.<name>-<version>.pth`, setuptools' `easy-install.pth`
//!   of `setup.py develop`): each line naming an absolute directory is put on `sys.path` by
//!   `site.py`. Lines starting with `import` are code `site.py` executes (setuptools' import-hook
//!   finders); they are skipped.
//! - `<name>.egg-link` (`setup.py develop`): its first line is the source directory.
//! - `direct_url.json` of a distribution (PEP 610): `"dir_info": {"editable": true}` with a
//!   `file://` URL names the project directory. It is read only for a distribution whose
//!   `__editable__` file held no path (an import hook), so that a site directory with thousands
//!   of distributions is not read file by file.
//!
//! Only absolute paths of existing directories are kept, at most [`MAX_ROOTS`] per site
//! directory, read from at most [`MAX_FILES`] files of at most [`MAX_LINES`] lines each.

use crate::source::problem::{Problem, optional};
use crate::source::root::{SysRoot, is_clean_absolute};

/// At most this many source trees per site directory.
pub const MAX_ROOTS: usize = 16;
/// At most this many `.pth`/`.egg-link` files and `direct_url.json` files per site directory.
pub const MAX_FILES: usize = 32;
/// At most this many lines of one file.
pub const MAX_LINES: usize = 1_000;

/// The source trees of the editable installs of the site directory `site`, whose listing is
/// `names`, in the order found, without duplicates. The second value says whether a bound was
/// reached.
pub fn roots(
    root: &SysRoot,
    site: &str,
    names: &[String],
    problems: &mut Vec<Problem>,
) -> (Vec<String>, bool) {
    let mut files: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".pth") || n.ends_with(".egg-link"))
        .collect();
    files.sort();
    let mut truncated = files.len() > MAX_FILES;
    let mut found: Vec<String> = Vec::new();
    let mut hooks: Vec<&str> = Vec::new();
    for name in files.into_iter().take(MAX_FILES) {
        let Some(text) = optional(root.read_text(&format!("{site}/{name}")), problems) else {
            continue;
        };
        let before = found.len();
        let lines = text.lines().take(MAX_LINES);
        if name.ends_with(".egg-link") {
            found.extend(lines.take(1).filter_map(path_line));
        } else {
            found.extend(lines.filter_map(path_line));
        }
        if found.len() == before
            && let Some(dist) = name
                .strip_prefix("__editable__.")
                .and_then(|n| n.strip_suffix(".pth"))
        {
            hooks.push(dist);
        }
    }
    // An import hook names no path: the distribution's direct_url.json does.
    for dist in hooks.into_iter().take(MAX_FILES) {
        let file = format!("{site}/{dist}.dist-info/direct_url.json");
        if let Some(text) = optional(root.read_text(&file), problems) {
            found.extend(direct_url(&text));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for path in found {
        if out.len() >= MAX_ROOTS {
            truncated = true;
            break;
        }
        if path != site && !out.contains(&path) && root.exists(&path) {
            out.push(path);
        }
    }
    (out, truncated)
}

/// A `.pth` or `.egg-link` line naming an absolute directory (without trailing `/`); `None` for
/// comments, code, relative paths and `/` itself.
fn path_line(line: &str) -> Option<String> {
    let line = line.trim_end_matches(['\r', '\n']).trim_end();
    if line.starts_with("import ") || line.starts_with("import\t") || !line.starts_with('/') {
        return None;
    }
    let path = line.trim_end_matches('/');
    is_clean_absolute(path).then(|| path.to_owned())
}

/// The project directory of an editable install from its `direct_url.json`.
fn direct_url(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if v.pointer("/dir_info/editable")?.as_bool()? {
        let url = v.get("url")?.as_str()?;
        let raw = url.strip_prefix("file://")?;
        // A `%` without two hex digits after it is a malformed URL: refused, where the decoder
        // would keep it as it is.
        let escapes = raw.split('%').skip(1).all(|p| {
            p.get(..2)
                .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
        });
        if !escapes {
            return None;
        }
        let path = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .ok()?;
        let path = path.trim_end_matches('/');
        return is_clean_absolute(path).then(|| path.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfs::write as touch;

    #[test]
    fn pth_lines_egg_links_and_direct_urls_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let site = "usr/local/lib/python3.12/dist-packages";
        touch(b, "aiter-test/aiter/__init__.py", "");
        touch(b, "src/vllm/vllm/__init__.py", "");
        touch(b, "hooked/pkg/__init__.py", "");
        touch(
            b,
            &format!("{site}/__editable__.amd_aiter-0.1.7.pth"),
            "/aiter-test\n",
        );
        touch(b, &format!("{site}/vllm.egg-link"), "/src/vllm\n.\n");
        // An import hook (setuptools' finder): its path is in direct_url.json.
        touch(
            b,
            &format!("{site}/__editable__.pkg-1.0.pth"),
            "import __editable___pkg_1_0_finder; __editable___pkg_1_0_finder.install()\n",
        );
        touch(
            b,
            &format!("{site}/pkg-1.0.dist-info/direct_url.json"),
            r#"{"url": "file:///hooked", "dir_info": {"editable": true}}"#,
        );
        // Not followed: comments, code, relative lines, missing directories, the site itself.
        touch(
            b,
            &format!("{site}/other.pth"),
            "# comment\nimport os; os.system('x')\nrelative/dir\n/missing\n/usr/local/lib/python3.12/dist-packages\n/aiter-test/\n",
        );
        let root = SysRoot::fixture(b);
        let names = root.read_dir(&format!("/{site}")).unwrap();
        let mut problems = Vec::new();
        let (roots, truncated) = roots(&root, &format!("/{site}"), &names, &mut problems);
        assert!(problems.is_empty() && !truncated, "{problems:?}");
        assert_eq!(roots, ["/aiter-test", "/src/vllm", "/hooked"]);
    }

    #[test]
    fn hostile_lines_are_refused() {
        assert_eq!(path_line("/a/../etc"), None);
        assert_eq!(path_line("/"), None);
        assert_eq!(path_line("//"), None);
        assert_eq!(path_line("/a//b"), None);
        assert_eq!(path_line("/a\u{1b}[31m"), None);
        assert_eq!(path_line("import sys"), None);
        assert_eq!(path_line("/ok/dir/ \r"), Some("/ok/dir".into()));
        assert_eq!(
            direct_url(r#"{"url": "file:///x%20y", "dir_info": {"editable": true}}"#),
            Some("/x y".into())
        );
        assert_eq!(
            direct_url(r#"{"url": "file:///x", "dir_info": {"editable": false}}"#),
            None
        );
        assert_eq!(
            direct_url(r#"{"url": "file:///x%zz", "dir_info": {"editable": true}}"#),
            None
        );
        assert_eq!(
            direct_url(r#"{"url": "https://h/x", "dir_info": {"editable": true}}"#),
            None
        );
        assert_eq!(direct_url("not json"), None);
    }
}
