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

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("firmware #{}: {what}", i + 1);
    const KEYS: [&str; 5] = ["target", "component", "versions", "symptom", "source"];
    if let Some(key) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(at(&format!("unknown key `{key}`")));
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(at(&format!("`{key}` is missing or empty"))),
    };
    let target = text("target")?;
    if !data_file::is_processor(&target) {
        return Err(at(&format!("`{target}` is not a gfx target")));
    }
    let component = text("component")?;
    if !component
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(at(&format!("component `{component}`")));
    }
    let versions = match t.get("versions") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v {
                toml::Value::Integer(n) => u64::try_from(*n).map_err(|_| at("a negative version")),
                _ => Err(at("a version is not a number")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(at("`versions` is missing or empty")),
    };
    Ok(Row {
        symptom: text("symptom")?,
        source: text("source").map_err(|_| at("no source"))?,
        target,
        component,
        versions,
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
