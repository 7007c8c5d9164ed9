//! The bundled-runtime locations, `rocm-probe/data/bundled.toml`: parsed and checked here, by the
//! build script (which turns them into the `RUNTIMES` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// How a row's paths are read.
pub const KINDS: [&str; 5] = [
    "ollama-runners",
    "ggml-hip",
    "site-extensions",
    "home-vendor-dirs",
    "home-therock-dirs",
];

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The application.
    pub name: String,
    /// One of [`KINDS`].
    pub kind: String,
    /// Where to look.
    pub paths: Vec<String>,
    /// The file or page the paths come from.
    pub source: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// The rows, in the file's order.
    pub rows: Vec<Row>,
}

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&["name", "kind", "paths", "source"])?;
    let kind = f.one_of("kind", &KINDS)?;
    let relative = kind != "ollama-runners" && kind != "ggml-hip";
    let paths = if relative {
        f.strings("paths", "a clean relative path", |p| {
            !p.starts_with('/') && !p.split('/').any(|c| c.is_empty() || c == "..")
        })?
    } else {
        f.strings("paths", "a clean absolute path", |p| {
            p.starts_with('/') && !p.split('/').skip(1).any(|c| c.is_empty() || c == "..")
        })?
    };
    Ok(Row {
        name: f.text("name")?,
        kind,
        paths,
        source: f.source_url("https://")?,
    })
}

/// Parses and checks the file: every row has a name, a known kind, clean paths and a source.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "bundled data", "runtime", row)?;
    Ok(Data { as_of, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_file_parses() {
        let data = parse(include_str!("../../../data/bundled.toml")).unwrap();
        assert!(data.rows.iter().any(|r| r.kind == "ollama-runners"));
    }

    #[test]
    fn a_row_without_a_source_or_with_a_dirty_path_is_refused() {
        let base = "as_of = \"2026-12-03\"\n[[runtime]]\nname = \"x\"\nkind = \"ggml-hip\"\n";
        let e = parse(&format!("{base}paths = [\"/usr/lib/x.so\"]\n")).unwrap_err();
        assert!(e.contains("no source"), "{e}");
        let e = parse(&format!(
            "{base}paths = [\"/usr/../x.so\"]\nsource = \"https://example.org\"\n"
        ))
        .unwrap_err();
        assert!(e.contains("not a clean"), "{e}");
    }
}
