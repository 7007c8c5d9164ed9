//! The known-bad ROCm releases per target, `rocm-probe/data/rocm_bad.toml`: parsed and checked
//! here, by the build script (which turns it into the `BUGS` table compiled into the crate) and by
//! the crate's own tests. Depends on `toml` and std only, because the build script includes this
//! file as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// The first production (or Core SDK) release line with the fix.
    pub fixed: (u32, u32),
    /// The first preview release line with the fix.
    pub fixed_preview: (u32, u32),
    /// The KFD node property the fixed runtime needs, if any.
    pub kfd_property: Option<String>,
    /// What users report.
    pub symptom: String,
    /// The report stating the affected and fixed releases.
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
        "fixed",
        "fixed_preview",
        "kfd_property",
        "symptom",
        "source",
    ])?;
    let kfd_property = if f.has("kfd_property") {
        Some(f.checked("kfd_property", "a KFD property name", data_file::is_ident)?)
    } else {
        None
    };
    Ok(Row {
        target: f.processor("target")?,
        fixed: f.major_minor("fixed")?,
        fixed_preview: f.major_minor("fixed_preview")?,
        kfd_property,
        symptom: f.text("symptom")?,
        source: f.source_url("https://")?,
    })
}

/// Parses and checks the file: every row has a source; a target appears once.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "known-bad ROCm data", "bug", row)?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(r) = rows.iter().find(|r| !seen.insert(r.target.clone())) {
        return Err(format!("{} is listed twice", r.target));
    }
    Ok(Data { as_of, rows })
}
