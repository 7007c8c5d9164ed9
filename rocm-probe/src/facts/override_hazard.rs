//! `HSA_OVERRIDE_GFX_VERSION` values that public reports show hanging or faulting a GPU of a
//! given target: rows in `rocm-probe/data/override_hazards.toml`, each citing its source,
//! compiled into [`HAZARDS`] by `build.rs`. The checks never suggest such an override, and say
//! what the reports saw when one is set.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

/// One target and override value the reports show failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverrideHazard {
    /// The GPU's own gfx target.
    pub target: &'static str,
    /// The override value, `major.minor.stepping`.
    pub value: &'static str,
    /// The reports that show it.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/override_hazard.rs"));

/// The row for a GPU of `target` run with the override `value` (`11.0.0`), if any.
pub fn lookup(target: &str, value: &str) -> Option<&'static OverrideHazard> {
    HAZARDS
        .iter()
        .find(|h| h.target == target && h.value == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_rows_parse_and_are_compiled() {
        let text = include_str!("../../data/override_hazards.toml");
        let parsed = data::parse(text).unwrap();
        assert_eq!(parsed.rows.len(), HAZARDS.len());
        assert_eq!(parsed.as_of, AS_OF);
        let h = lookup("gfx1103", "11.0.0").unwrap();
        assert!(h.source.contains("TheRock/issues/1184"));
        assert!(lookup("gfx1103", "11.0.2").is_none());
        assert!(lookup("gfx1031", "10.3.0").is_none());
    }

    #[test]
    fn broken_rows_are_refused() {
        let head = "as_of = \"2026-12-03\"\n";
        for (row, why) in [
            ("target = \"gfx1103\"\nvalue = \"11.0.0\"\n", "no source"),
            (
                "target = \"1103\"\nvalue = \"11.0.0\"\nsource = \"x\"\n",
                "not a gfx processor",
            ),
            (
                "target = \"gfx1103\"\nvalue = \"11.0\"\nsource = \"x\"\n",
                "not major.minor.stepping",
            ),
            (
                "target = \"gfx1103\"\nvalue = \"11.0.0\"\nsource = \"x\"\nnote = \"y\"\n",
                "unknown key",
            ),
        ] {
            let err = data::parse(&format!("{head}[[hazard]]\n{row}")).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let twice = format!(
            "{head}[[hazard]]\ntarget = \"gfx1103\"\nvalue = \"11.0.0\"\nsource = \"a\"\n\
             [[hazard]]\ntarget = \"gfx1103\"\nvalue = \"11.0.0\"\nsource = \"b\"\n"
        );
        assert!(data::parse(&twice).unwrap_err().contains("twice"));
    }
}
