//! The release × GPU support data, `rocm-probe/data/support.toml`: parsed and checked here, by
//! the build script (which turns it into the `RELEASES` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One status list of a row, as the file names it.
pub const STATUSES: [&str; 3] = ["supported", "deprecated", "unsupported"];

/// The release streams a row may belong to.
pub const STREAMS: [&str; 3] = ["production", "preview", "core-sdk"];

/// One release row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// One of [`STREAMS`].
    pub stream: String,
    /// The page or file the row was taken from.
    pub source: String,
    /// First release of the line, `YYYY-MM-DD`.
    pub released: Option<String>,
    /// (target, index into [`STATUSES`], since patch), in the file's order: supported first.
    pub entries: Vec<(String, usize, u32)>,
    /// AMD's separate page listing the release's Ryzen APUs, when the row's source leaves them
    /// out and that page was not read.
    pub apus_page: Option<String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, oldest first.
    pub rows: Vec<Row>,
}

fn row(mut f: data_file::Fields) -> Result<Row, String> {
    let mut known = vec![
        "major",
        "minor",
        "stream",
        "source",
        "released",
        "since_patch",
        "apus_page",
    ];
    known.extend(STATUSES);
    f.only(&known)?;
    let (major, minor) = (f.number("major")?, f.number("minor")?);
    f.relabel(format!("ROCm {major}.{minor}"));
    let mut entries: Vec<(String, usize, u32)> = Vec::new();
    for (status, name) in STATUSES.iter().enumerate() {
        let Some(v) = f.value(name) else { continue };
        let list = v
            .as_array()
            .ok_or_else(|| f.err(&format!("`{name}` is not a list")))?;
        for target in list {
            let target = target
                .as_str()
                .filter(|s| data_file::is_processor(s))
                .ok_or_else(|| f.err(&format!("{target} in `{name}` is no gfx target")))?;
            if entries.iter().any(|(t, _, _)| t == target) {
                return Err(f.err(&format!("{target} listed twice")));
            }
            entries.push((target.to_owned(), status, 0));
        }
    }
    if entries.is_empty() {
        return Err(f.err("no targets"));
    }
    if let Some(v) = f.value("since_patch") {
        let table = v
            .as_table()
            .ok_or_else(|| f.err("`since_patch` is not a table"))?;
        for (target, patch) in table {
            let patch = patch
                .as_integer()
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| f.err(&format!("since_patch {target} is not a patch number")))?;
            let entry = entries
                .iter_mut()
                .find(|(t, _, _)| t == target)
                .ok_or_else(|| {
                    f.err(&format!("since_patch names {target}, which the row lacks"))
                })?;
            entry.2 = patch;
        }
    }
    Ok(Row {
        major,
        minor,
        stream: f.one_of("stream", &STREAMS)?,
        source: f.source_url("https://")?,
        released: f
            .opt_text("released")?
            .map(|d| {
                if data_file::is_date(&d) {
                    Ok(d)
                } else {
                    Err(f.err(&format!("released {d:?} is not YYYY-MM-DD")))
                }
            })
            .transpose()?,
        entries,
        apus_page: f.opt_url("apus_page")?,
    })
}

/// Parses and checks the file: every row has a source, a known stream and targets; rows are
/// sorted by release and unique.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "support data", "release", row)?;
    for w in rows.windows(2) {
        if (w[0].major, w[0].minor) >= (w[1].major, w[1].minor) {
            return Err(format!(
                "support data: ROCm {}.{} follows {}.{}: rows are unique and oldest first",
                w[1].major, w[1].minor, w[0].major, w[0].minor
            ));
        }
    }
    Ok(Data { as_of, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = "as_of = \"2026-12-03\"\n[[release]]\nmajor = 7\nminor = 0\n\
                       stream = \"production\"\nsupported = [\"gfx942\"]\n";

    #[test]
    fn the_committed_file_parses() {
        let data = parse(include_str!("../../../data/support.toml")).unwrap();
        assert!(data.rows.len() >= 7);
        assert!(data.rows.iter().all(|r| r.source.starts_with("https://")));
    }

    #[test]
    fn a_row_without_a_source_is_refused() {
        let e = parse(ROW).unwrap_err();
        assert!(e.contains("no source"), "{e}");
        let with = ROW.replace("stream", "source = \"https://example.org/\"\nstream");
        assert_eq!(parse(&with).unwrap().rows[0].entries[0].0, "gfx942");
    }

    #[test]
    fn malformed_rows_are_refused() {
        let ok = ROW.replace("stream", "source = \"https://example.org/\"\nstream");
        for (from, to, says) in [
            ("\"production\"", "\"beta\"", "stream"),
            ("[\"gfx942\"]", "[\"gfx942\", \"gfx942\"]", "twice"),
            ("[\"gfx942\"]", "[\"MI300X\"]", "no gfx target"),
            ("minor = 0", "minor = 0\nreleased = \"July\"", "YYYY-MM-DD"),
            (
                "minor = 0",
                "minor = 0\nsince_patch = { gfx90a = 1 }",
                "lacks",
            ),
            ("minor = 0", "minor = 0\nnotes = \"x\"", "unknown key"),
        ] {
            let e = parse(&ok.replace(from, to)).unwrap_err();
            assert!(e.contains(says), "{from} → {to}: {e}");
        }
        let twice = format!("{ok}{}", ok.replace("as_of = \"2026-12-03\"\n", ""));
        assert!(parse(&twice).unwrap_err().contains("oldest first"));
    }
}
