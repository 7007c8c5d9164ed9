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
fn line(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("release #{}: {what}", i + 1);
    for key in t.keys() {
        if !["first", "last", "source", "processors"].contains(&key.as_str()) {
            return Err(at(&format!("unknown key `{key}`")));
        }
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(_) => Err(at(&format!("`{key}` is not a non-empty string"))),
        None => Err(at(&format!("no `{key}`"))),
    };
    let version = |key: &str| {
        let s = text(key)?;
        line(&s).ok_or_else(|| at(&format!("{key} {s:?} is not major.minor")))
    };
    let (first, last) = (version("first")?, version("last")?);
    if first > last {
        return Err(at("`first` is after `last`"));
    }
    let source = text("source").map_err(|_| at("no `source`: every row cites its file"))?;
    if !source.starts_with("https://github.com/ROCm/") {
        return Err(at(&format!(
            "source {source:?} is not a ROCm repository URL"
        )));
    }
    let list = t
        .get("processors")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| at("`processors` is missing or not a list"))?;
    let mut processors: Vec<String> = Vec::new();
    for p in list {
        let p = p
            .as_str()
            .filter(|s| data_file::is_processor(s))
            .ok_or_else(|| at(&format!("{p} in `processors` is no gfx processor")))?;
        if processors.iter().any(|x| x == p) {
            return Err(at(&format!("{p} listed twice")));
        }
        processors.push(p.to_owned());
    }
    if processors.is_empty() {
        return Err(at("no processors"));
    }
    Ok(Row {
        first,
        last,
        source,
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
        assert!(e.contains("no `source`"), "{e}");
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
            ("[\"gfx1151\"]", "[\"Strix Halo\"]", "no gfx processor"),
            ("[\"gfx1151\"]", "[]", "no processors"),
            ("last = \"6.1\"", "last = \"6.0\"", "after"),
            ("last = \"6.1\"", "last = \"six\"", "major.minor"),
            (
                "https://github.com/ROCm/",
                "https://example.org/",
                "ROCm repository",
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
