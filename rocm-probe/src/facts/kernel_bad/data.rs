//! The known-bad amdgpu releases, `rocm-probe/data/kernel_bad.toml`: parsed and checked here, by
//! the build script (which turns it into the `HAZARDS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// The amdgpu module parameter of the workaround.
    pub parameter: String,
    /// The value that avoids the bug.
    pub workaround: i64,
    /// The first release with the fix, (major, minor).
    pub fixed: (u32, u32),
    /// What users report.
    pub symptom: String,
    /// The public reports.
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
    f.only(&[
        "target",
        "parameter",
        "workaround",
        "fixed",
        "symptom",
        "source",
    ])?;
    let Some(toml::Value::Integer(workaround)) = f.value("workaround") else {
        return Err(f.err("`workaround` is missing or not an integer"));
    };
    Ok(Row {
        target: f.processor("target")?,
        parameter: f.checked("parameter", "a module parameter", data_file::is_ident)?,
        workaround: *workaround,
        fixed: f.major_minor("fixed")?,
        symptom: f.text("symptom")?,
        source: f.source()?,
    })
}

/// Parses and checks the file: every row has a source, no (target, parameter) twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "known-bad amdgpu data", "hazard", row)?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(r) = rows
        .iter()
        .find(|r| !seen.insert((r.target.clone(), r.parameter.clone())))
    {
        return Err(format!("{} {} is listed twice", r.target, r.parameter));
    }
    Ok(Data { as_of, rows })
}
