//! The firmware data, `rocm-probe/data/firmware.toml`: parsed and checked here, by the build
//! script (which turns it into the `GPUS` table compiled into the crate) and by the crate's own
//! tests. Depends on `toml` and std only, because the build script includes this file as a
//! module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// PCI device ids.
    pub devices: Vec<u32>,
    /// File names under `/lib/firmware/amdgpu`, without `.bin`.
    pub files: Vec<String>,
    /// Where the files were read.
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
    let at = |what: &str| format!("gpu #{}: {what}", i + 1);
    const KEYS: [&str; 4] = ["target", "devices", "files", "source"];
    if let Some(key) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(at(&format!("unknown key `{key}`")));
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(at(&format!("no {key}"))),
    };
    let target = text("target")?;
    let devices = data_file::device_ids(t, at)?;
    let files = match t.get("files") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v {
                toml::Value::String(s)
                    if !s.is_empty()
                        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    Ok(s.clone())
                }
                _ => Err(at("a file name is not [A-Za-z0-9_]+")),
            })
            .collect::<Result<Vec<String>, String>>()?,
        _ => return Err(at("`files` is missing or empty")),
    };
    Ok(Row {
        source: text("source")?,
        target,
        devices,
        files,
    })
}

/// Parses and checks the file: every row has a source, no device id is listed twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "firmware data", "gpu", row)?;
    data_file::devices_once(rows.iter().flat_map(|r| &r.devices))?;
    Ok(Data { as_of, rows })
}
