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

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&["target", "devices", "files", "source"])?;
    Ok(Row {
        target: f.text("target")?,
        devices: f.devices()?,
        files: f.strings("files", "a firmware file name ([A-Za-z0-9_]+)", |s| {
            !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })?,
        source: f.source()?,
    })
}

/// Parses and checks the file: every row has a source, no device id is listed twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "firmware data", "gpu", row)?;
    data_file::devices_once(rows.iter().flat_map(|r| &r.devices))?;
    Ok(Data { as_of, rows })
}
