//! The minimum-kernel data, `rocm-probe/data/min_kernel.toml`: parsed and checked here, by the
//! build script (which turns it into the `GPUS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// The GC IP version, `major.minor.patch`.
    pub gc: String,
    /// The first mainline release (major, minor).
    pub kernel: (u32, u32),
    /// PCI device ids.
    pub devices: Vec<u32>,
    /// Where `kernel` was read.
    pub source: String,
    /// Where `devices` were read.
    pub devices_source: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, in the file's order.
    pub rows: Vec<Row>,
}

/// `major.minor` of a kernel release as the file writes it.
pub fn kernel_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn row(mut f: data_file::Fields) -> Result<Row, String> {
    f.only(&[
        "target",
        "gc",
        "kernel",
        "devices",
        "source",
        "devices_source",
    ])?;
    let target = f.processor("target")?;
    f.relabel(target.clone());
    let kernel = f.text("kernel")?;
    Ok(Row {
        gc: f.checked("gc", "major.minor.patch", |gc| {
            gc.split('.').count() == 3 && gc.split('.').all(|p| p.parse::<u32>().is_ok())
        })?,
        kernel: kernel_version(&kernel)
            .ok_or_else(|| f.err(&format!("kernel {kernel:?} is not a kernel version")))?,
        devices: f.devices()?,
        source: f.source()?,
        devices_source: f
            .text("devices_source")
            .map_err(|_| f.err("no devices_source"))?,
        target,
    })
}

/// Parses and checks the file: every row has a source, no device id is listed twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "min kernel data", "gpu", row)?;
    data_file::devices_once(rows.iter().flat_map(|r| &r.devices))?;
    Ok(Data { as_of, rows })
}
