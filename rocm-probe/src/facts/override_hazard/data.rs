//! The override-hazard data, `rocm-probe/data/override_hazards.toml`: parsed and checked here, by
//! the build script (which turns it into the `HAZARDS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The GPU's own gfx target.
    pub target: String,
    /// The override value, `major.minor.stepping`.
    pub value: String,
    /// The reports that show it.
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
    f.only(&["target", "value", "source"])?;
    Ok(Row {
        target: f.processor("target")?,
        value: f.checked("value", "major.minor.stepping", |v| {
            let parts: Vec<&str> = v.split('.').collect();
            parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok())
        })?,
        source: f.source()?,
    })
}

/// Parses and checks the file: every row has a source, no target and value twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "override hazard data", "hazard", row)?;
    for (i, r) in rows.iter().enumerate() {
        if rows[..i]
            .iter()
            .any(|p| p.target == r.target && p.value == r.value)
        {
            return Err(format!("{} = {} is listed twice", r.target, r.value));
        }
    }
    Ok(Data { as_of, rows })
}
