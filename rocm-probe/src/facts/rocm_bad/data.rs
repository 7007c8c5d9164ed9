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

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("bug #{}: {what}", i + 1);
    const KEYS: [&str; 6] = [
        "target",
        "fixed",
        "fixed_preview",
        "kfd_property",
        "symptom",
        "source",
    ];
    if let Some(key) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(at(&format!("unknown key `{key}`")));
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(at(&format!("`{key}` is missing or empty"))),
    };
    let line = |key: &str| -> Result<(u32, u32), String> {
        let v = text(key)?;
        v.split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| at(&format!("`{key}` = `{v}` is not major.minor")))
    };
    let target = text("target")?;
    if !data_file::is_processor(&target) {
        return Err(at(&format!("`{target}` is not a gfx target")));
    }
    let kfd_property = match t.get("kfd_property") {
        None => None,
        Some(toml::Value::String(p))
            if !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
        {
            Some(p.clone())
        }
        Some(v) => return Err(at(&format!("kfd_property {v} is not a property name"))),
    };
    let source = text("source").map_err(|_| at("no source"))?;
    if !source.starts_with("https://") {
        return Err(at(&format!("source {source:?} is not an https URL")));
    }
    Ok(Row {
        fixed: line("fixed")?,
        fixed_preview: line("fixed_preview")?,
        symptom: text("symptom")?,
        target,
        kfd_property,
        source,
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
