//! ROCr's ISA registry per release, `rocm-probe/data/rocr_isa.toml`: parsed and checked here, by
//! the build script (which turns it into the `ROWS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The first release line (major, minor) read with this list.
    pub first: (u32, u32),
    /// The last release line read with the same list.
    pub last: (u32, u32),
    /// The file at the release tag the row was read from.
    pub source: String,
    /// The processors the registry lists, in the file's order.
    pub processors: Vec<String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, oldest first.
    pub rows: Vec<Row>,
}

/// `"major.minor"`.
fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&["first", "last", "source", "processors"])?;
    let (first, last) = (f.major_minor("first")?, f.major_minor("last")?);
    if first > last {
        return Err(f.err("`first` is after `last`"));
    }
    let processors = f.strings("processors", "a gfx processor", data_file::is_processor)?;
    let twice = (1..processors.len()).find(|&i| processors[..i].contains(&processors[i]));
    if let Some(i) = twice {
        return Err(f.err(&format!("{} listed twice", processors[i])));
    }
    Ok(Row {
        first,
        last,
        source: f.source_url("https://github.com/ROCm/")?,
        processors,
    })
}

/// Parses and checks the file: every row has a source and processors; rows are oldest first and
/// do not overlap.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "ROCr ISA data", "release", row)?;
    for w in rows.windows(2) {
        if w[0].last >= w[1].first {
            return Err(format!(
                "ROCr ISA data: {}.{} follows {}.{}: rows are oldest first and do not overlap",
                w[1].first.0, w[1].first.1, w[0].last.0, w[0].last.1
            ));
        }
    }
    Ok(Data { as_of, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = "as_of = \"2026-12-03\"\n[[release]]\nfirst = \"6.1\"\nlast = \"6.1\"\n\
                       processors = [\"gfx1151\"]\n";

    #[test]
    fn the_committed_file_parses() {
        let data = parse(include_str!("../../../data/rocr_isa.toml")).unwrap();
        assert!(data.rows.len() >= 10);
        assert!(data.rows.iter().all(|r| r.source.contains("isa.cpp")));
    }

    #[test]
    fn a_row_without_a_source_is_refused() {
        let e = parse(ROW).unwrap_err();
        assert!(e.contains("no source"), "{e}");
        let with = ROW.replace(
            "processors",
            "source = \"https://github.com/ROCm/x/isa.cpp\"\nprocessors",
        );
        assert_eq!(parse(&with).unwrap().rows[0].processors, ["gfx1151"]);
    }

    #[test]
    fn malformed_rows_are_refused() {
        let ok = ROW.replace(
            "processors",
            "source = \"https://github.com/ROCm/x/isa.cpp\"\nprocessors",
        );
        for (from, to, says) in [
            ("[\"gfx1151\"]", "[\"gfx1151\", \"gfx1151\"]", "twice"),
            ("[\"gfx1151\"]", "[\"Strix Halo\"]", "not a gfx processor"),
            ("[\"gfx1151\"]", "[]", "not a non-empty list"),
            ("last = \"6.1\"", "last = \"6.0\"", "after"),
            ("last = \"6.1\"", "last = \"six\"", "major.minor"),
            (
                "https://github.com/ROCm/",
                "https://example.org/",
                "does not start with https://github.com/ROCm/",
            ),
            ("first", "notes = \"x\"\nfirst", "unknown key"),
        ] {
            let e = parse(&ok.replace(from, to)).unwrap_err();
            assert!(e.contains(says), "{from} → {to}: {e}");
        }
        let twice = format!("{ok}{}", ok.replace("as_of = \"2026-12-03\"\n", ""));
        assert!(parse(&twice).unwrap_err().contains("do not overlap"));
    }
}
