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

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("hazard #{}: {what}", i + 1);
    const KEYS: [&str; 3] = ["target", "value", "source"];
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
    let value = text("value")?;
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
        return Err(at(&format!("value `{value}` is not major.minor.stepping")));
    }
    Ok(Row {
        source: text("source").map_err(|_| at("no source"))?,
        target,
        value,
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
