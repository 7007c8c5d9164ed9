//! GPU firmware versions publicly reported to hang or fault the GPU: rows in
//! `rocm-probe/data/firmware_bad.toml`, each citing its report, compiled into [`KNOWN_BAD`] by
//! `build.rs`. Matched against the versions `facts/fw_versions.rs` reads.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

/// One target's bad versions of one firmware component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownBad {
    /// The gfx target.
    pub target: &'static str,
    /// The fw_version component (`mes`).
    pub component: &'static str,
    /// The versions reported bad.
    pub versions: &'static [u64],
    /// The kernel log line users report.
    pub symptom: &'static str,
    /// The public report.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/firmware_bad.rs"));

/// The row saying `version` of `component` is bad on `target`.
pub fn lookup(target: &str, component: &str, version: u64) -> Option<&'static KnownBad> {
    KNOWN_BAD
        .iter()
        .find(|r| r.target == target && r.component == component && r.versions.contains(&version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_file_parses_and_matches_the_table() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/firmware_bad.toml"),
        )
        .unwrap();
        let d = data::parse(&text).unwrap();
        assert_eq!(d.as_of, AS_OF);
        assert_eq!(d.rows.len(), KNOWN_BAD.len());
        assert!(lookup("gfx1151", "mes", 0x83).is_some());
        assert!(lookup("gfx1151", "mes", 0x80).is_none());
        assert!(lookup("gfx1150", "mes", 0x83).is_none());
        assert!(
            lookup("gfx1152", "mes", 0x82)
                .unwrap()
                .source
                .contains("5844")
        );
    }

    #[test]
    fn rows_without_a_source_or_twice_are_refused() {
        let row = "target = \"gfx1151\"\ncomponent = \"mes\"\nversions = [0x83]\nsymptom = \"x\"\n";
        let one = format!("as_of = \"2026-01-01\"\n[[firmware]]\n{row}");
        assert!(data::parse(&one).unwrap_err().contains("no source"));
        let sourced = format!("{row}source = \"s\"\n");
        let twice =
            format!("as_of = \"2026-01-01\"\n[[firmware]]\n{sourced}[[firmware]]\n{sourced}");
        assert!(data::parse(&twice).unwrap_err().contains("twice"));
        let bad = "as_of = \"2026-01-01\"\n[[firmware]]\ntarget = \"gfx1151\"\ncomponent = \"mes\"\nversions = []\nsymptom = \"x\"\nsource = \"s\"\n";
        assert!(data::parse(bad).unwrap_err().contains("versions"));
    }
}
