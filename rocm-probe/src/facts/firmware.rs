//! amdgpu's firmware files (issue 16, item 5): which ones a GPU needs — rows in
//! `rocm-probe/data/firmware.toml`, each citing the kernel's MODULE_FIRMWARE lines, compiled into
//! [`GPUS`] by `build.rs` — and which ones `/lib/firmware` holds.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// One GPU family's required firmware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Firmware {
    /// The gfx target.
    pub target: &'static str,
    /// PCI device ids.
    pub devices: &'static [u32],
    /// File names under `/lib/firmware/amdgpu`, without `.bin`.
    pub files: &'static [&'static str],
    /// Where they were read.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/firmware.rs"));

/// Where firmware is looked for, in the kernel's order (`fw_path`: updates first).
pub const FIRMWARE_DIRS: [&str; 2] = ["/lib/firmware/updates/amdgpu", "/lib/firmware/amdgpu"];
/// The firmware root: absent means not captured.
pub const FIRMWARE_ROOT: &str = "/lib/firmware";
/// The suffixes the kernel loads (plain, and compressed when built with
/// CONFIG_FW_LOADER_COMPRESS_ZSTD / _XZ).
pub const SUFFIXES: [&str; 3] = [".bin", ".bin.zst", ".bin.xz"];

/// The row naming a PCI device id.
pub fn lookup(device_id: u32) -> Option<&'static Firmware> {
    GPUS.iter().find(|g| g.devices.contains(&device_id))
}

/// The firmware files on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FirmwareFacts {
    /// Names in the amdgpu firmware directories (both, merged, sorted); `None` when
    /// `/lib/firmware` was not captured.
    pub files: Option<Vec<String>>,
}

impl FirmwareFacts {
    /// The files of `row` present under none of the suffixes, as `name.bin`.
    pub fn missing(&self, row: &Firmware) -> Option<Vec<String>> {
        let files = self.files.as_ref()?;
        Some(
            row.files
                .iter()
                .filter(|f| {
                    !SUFFIXES
                        .iter()
                        .any(|s| files.binary_search(&format!("{f}{s}")).is_ok())
                })
                .map(|f| format!("{f}.bin"))
                .collect(),
        )
    }
}

impl Collect for FirmwareFacts {
    /// Whether any GPU on the bus is in the table (else nothing is read).
    type Needs<'a> = bool;
    type Output = Self;

    /// Lists the amdgpu firmware directories when a listed GPU is present.
    fn collect(source: &Source, wanted: bool, problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        if !wanted || !root.exists(FIRMWARE_ROOT) {
            return Self::default();
        }
        let mut files: Vec<String> = FIRMWARE_DIRS
            .iter()
            .filter_map(|d| optional(root.read_dir(d), problems))
            .flatten()
            .collect();
        files.sort();
        files.dedup();
        Self { files: Some(files) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses_and_the_table_follows_it() {
        let text = include_str!("../../data/firmware.toml");
        let parsed = data::parse(text).unwrap();
        assert_eq!(parsed.rows.len(), GPUS.len());
        for (row, gpu) in parsed.rows.iter().zip(GPUS) {
            assert_eq!(row.target, gpu.target);
            assert_eq!(row.files, gpu.files);
        }
        assert_eq!(AS_OF, parsed.as_of);
        let no_source = "as_of = \"2026-12-03\"\n[[gpu]]\ntarget = \"gfx1201\"\n\
                         devices = [0x7550]\nfiles = [\"gc_12_0_1_pfp\"]\n";
        assert!(data::parse(no_source).unwrap_err().contains("no source"));
    }

    #[test]
    fn a_file_counts_under_any_suffix() {
        let row = lookup(0x7550).unwrap();
        let facts = FirmwareFacts {
            files: Some(vec![
                "gc_12_0_1_me.bin.zst".to_owned(),
                "gc_12_0_1_pfp.bin".to_owned(),
                "psp_14_0_3_sos.bin.xz".to_owned(),
            ]),
        };
        let missing = facts.missing(row).unwrap();
        assert!(!missing.contains(&"gc_12_0_1_pfp.bin".to_owned()));
        assert!(!missing.contains(&"gc_12_0_1_me.bin".to_owned()));
        assert!(!missing.contains(&"psp_14_0_3_sos.bin".to_owned()));
        assert!(missing.contains(&"psp_14_0_3_ta.bin".to_owned()));
        assert_eq!(FirmwareFacts::default().missing(row), None);
    }
}
