//! The launcher environment locations, `rocm-probe/data/launcher_venvs.toml`: parsed and checked
//! here, by the build script (which turns them into the `LAUNCHERS` table compiled into the
//! crate) and by the crate's own tests. Depends on `toml` and std only, because the build script
//! includes this file as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The launcher.
    pub name: String,
    /// Environment prefixes relative to the home directory, one component possibly `*`.
    pub paths: Vec<String>,
    /// Where the launcher records a data directory chosen elsewhere, when it does.
    pub library: Option<Library>,
    /// The file or page the paths come from.
    pub source: String,
}

/// A JSON file under the home directory naming the launcher's data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Library {
    /// The file, relative to the home directory.
    pub file: String,
    /// The top-level key whose string value is the directory (an absolute path).
    pub key: String,
    /// Environment prefixes relative to that directory, one component possibly `*`.
    pub paths: Vec<String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// The rows, in the file's order.
    pub rows: Vec<Row>,
}

/// A clean relative path: no empty, `.` or `..` component, at most one component `*` and no `*`
/// inside another.
pub fn clean(p: &str) -> bool {
    let parts: Vec<&str> = p.split('/').collect();
    !p.starts_with('/')
        && parts
            .iter()
            .all(|c| !c.is_empty() && *c != "." && *c != ".." && (*c == "*" || !c.contains('*')))
        && parts.iter().filter(|c| **c == "*").count() <= 1
}

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&[
        "name",
        "paths",
        "library_file",
        "library_key",
        "library_paths",
        "source",
    ])?;
    const PATH: &str = "a clean relative path with at most one `*`";
    let library = if f.has("library_file") || f.has("library_key") || f.has("library_paths") {
        Some(Library {
            file: f.checked("library_file", "a clean relative path", |p| {
                clean(p) && !p.contains('*')
            })?,
            key: f.text("library_key")?,
            paths: f.strings("library_paths", PATH, clean)?,
        })
    } else {
        None
    };
    Ok(Row {
        name: f.text("name")?,
        paths: f.strings("paths", PATH, clean)?,
        library,
        source: f.source_url("https://")?,
    })
}

/// Parses and checks the file: every row has a name, clean paths and a source.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "launcher data", "launcher", row)?;
    Ok(Data { as_of, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_file_parses() {
        let data = parse(include_str!("../../../data/launcher_venvs.toml")).unwrap();
        assert!(
            data.rows
                .iter()
                .any(|r| r.name == "Stability Matrix" && r.library.is_some())
        );
    }

    #[test]
    fn a_row_without_a_source_or_with_a_dirty_path_is_refused() {
        let base = "as_of = \"2026-12-04\"\n[[launcher]]\nname = \"x\"\n";
        let e = parse(&format!("{base}paths = [\"a/*/venv\"]\n")).unwrap_err();
        assert!(e.contains("no source"), "{e}");
        for bad in [
            "/abs/venv",
            "a/../venv",
            "a/*/*/venv",
            "a/v*/venv",
            "a//venv",
        ] {
            let e = parse(&format!(
                "{base}paths = [\"{bad}\"]\nsource = \"https://example.org\"\n"
            ))
            .unwrap_err();
            assert!(e.contains("not a clean"), "{bad}: {e}");
        }
        // A library file needs its key and paths.
        let e = parse(&format!(
            "{base}paths = [\"a/*/venv\"]\nlibrary_file = \".config/x.json\"\nsource = \"https://example.org\"\n"
        ))
        .unwrap_err();
        assert!(e.contains("library_key"), "{e}");
    }
}
