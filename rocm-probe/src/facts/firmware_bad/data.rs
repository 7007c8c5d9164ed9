//! The known-bad firmware data, `rocm-probe/data/firmware_bad.toml`: parsed and checked here, by
//! the build script (which turns it into the `KNOWN_BAD` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// The fw_version component (`mes`).
    pub component: String,
    /// The versions reported bad.
    pub versions: Vec<u64>,
    /// The kernel log line users report.
    pub symptom: String,
    /// The public report.
    pub source: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, in the file's order.
    pub rows: Vec<Row>,
}

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&["target", "component", "versions", "symptom", "source"])?;
    Ok(Row {
        target: f.processor("target")?,
        component: f.checked("component", "a firmware component", data_file::is_ident)?,
        versions: f.list("versions", "a firmware version", |v| {
            v.as_integer().and_then(|n| u64::try_from(n).ok())
        })?,
        symptom: f.text("symptom")?,
        source: f.source()?,
    })
}

/// Parses and checks the file: every row has a source, no (target, component) twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "known-bad firmware data", "firmware", row)?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(r) = rows
        .iter()
        .find(|r| !seen.insert((r.target.clone(), r.component.clone())))
    {
        return Err(format!("{} {} is listed twice", r.target, r.component));
    }
    Ok(Data { as_of, rows })
}
