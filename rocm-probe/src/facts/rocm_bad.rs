//! ROCm releases publicly reported to break a GPU target until a later release (and, for some,
//! a kernel that gives the fixed runtime what it needs): rows in `rocm-probe/data/rocm_bad.toml`,
//! each citing the statement of the affected and fixed releases, compiled into [`BUGS`] by
//! `build.rs`. `checks::runtime` matches them against the install in use and the KFD topology.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

/// One target's bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bug {
    /// The gfx target.
    pub target: &'static str,
    /// The first production (or Core SDK) release line with the fix.
    pub fixed: (u32, u32),
    /// The first preview release line (TheRock's 7.9–7.13) with the fix.
    pub fixed_preview: (u32, u32),
    /// The KFD node property the fixed runtime needs from the kernel, if any.
    pub kfd_property: Option<&'static str>,
    /// What users report.
    pub symptom: &'static str,
    /// The statement of the affected and fixed releases.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/rocm_bad.rs"));

impl Bug {
    /// Whether a release line carries the runtime side of the fix: a preview line from
    /// `fixed_preview` on, any other from `fixed` on (Core SDK lines, 7.14 and 10.x, come after
    /// both).
    pub fn runtime_fixed(&self, line: (u32, u32), preview: bool) -> bool {
        if preview {
            line >= self.fixed_preview
        } else {
            line >= self.fixed
        }
    }
}

/// The rows of `target`.
pub fn for_target(target: &str) -> impl Iterator<Item = &'static Bug> + '_ {
    BUGS.iter().filter(move |b| b.target == target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_parses_and_every_row_cites_its_source() {
        let text = include_str!("../../data/rocm_bad.toml");
        let d = data::parse(text).unwrap();
        assert_eq!(d.rows.len(), BUGS.len());
        assert!(BUGS.iter().all(|b| b.source.starts_with("https://")));
        assert_eq!(AS_OF, d.as_of);
    }

    #[test]
    fn the_gfx1151_vgpr_bug_is_fixed_in_7_2_and_the_7_11_preview() {
        let b = for_target("gfx1151").next().unwrap();
        assert!(!b.runtime_fixed((7, 1), false));
        assert!(!b.runtime_fixed((6, 4), false));
        assert!(b.runtime_fixed((7, 2), false));
        assert!(b.runtime_fixed((7, 14), false));
        assert!(b.runtime_fixed((10, 1), false));
        assert!(!b.runtime_fixed((7, 10), true));
        assert!(b.runtime_fixed((7, 11), true));
        assert_eq!(b.kfd_property, Some("cwsr_size"));
    }

    #[test]
    fn malformed_rows_are_refused() {
        let bad = [
            "as_of = \"2026-01-01\"\n[[bug]]\ntarget = \"gfx1151\"\nfixed = \"7\"\nfixed_preview = \"7.11\"\nsymptom = \"x\"\nsource = \"https://a\"",
            "as_of = \"2026-01-01\"\n[[bug]]\ntarget = \"gfx1151\"\nfixed = \"7.2\"\nfixed_preview = \"7.11\"\nsymptom = \"x\"\nsource = \"ftp://a\"",
            "as_of = \"2026-01-01\"\n[[bug]]\ntarget = \"nope\"\nfixed = \"7.2\"\nfixed_preview = \"7.11\"\nsymptom = \"x\"\nsource = \"https://a\"",
            "as_of = \"2026-01-01\"\n[[bug]]\ntarget = \"gfx1151\"\nfixed = \"7.2\"\nfixed_preview = \"7.11\"\nkfd_property = \"A B\"\nsymptom = \"x\"\nsource = \"https://a\"",
        ];
        for b in bad {
            assert!(data::parse(b).is_err(), "{b}");
        }
    }
}
