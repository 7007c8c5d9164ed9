//! amdgpu releases publicly reported to hang or fault a GPU of a target unless a module parameter
//! works around it: rows in `rocm-probe/data/kernel_bad.toml`, each citing its reports, compiled
//! into [`HAZARDS`] by `build.rs`; and the values of the parameters they name, read from
//! `/sys/module/amdgpu/parameters`.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::module::AMDGPU_MODULE;
use crate::source::Source;
use crate::source::problem::Problem;

/// One target's bug and its workaround.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hazard {
    /// The gfx target.
    pub target: &'static str,
    /// The amdgpu module parameter of the workaround (`cwsr_enable`).
    pub parameter: &'static str,
    /// The value that avoids the bug.
    pub workaround: i64,
    /// The first amdgpu release with the fix, (major, minor).
    pub fixed: (u32, u32),
    /// What users report.
    pub symptom: &'static str,
    /// The public reports.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/kernel_bad.rs"));

/// Where a machine stands against a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// An amdgpu older than the fix, the workaround not in force.
    Exposed,
    /// The fix is in, the workaround still set: a mode the vendor does not test.
    WorkaroundLeft,
}

impl Hazard {
    /// Where an amdgpu of `release` (major, minor) with the parameter at `value` stands; `None`
    /// when neither applies, or the value is unknown (a loaded amdgpu always shows its
    /// parameters, so only a fixture that did not capture the file lacks it).
    pub fn standing(&self, release: (u32, u32), value: Option<i64>) -> Option<Standing> {
        let worked_around = value? == self.workaround;
        match (release < self.fixed, worked_around) {
            (true, false) => Some(Standing::Exposed),
            (false, true) => Some(Standing::WorkaroundLeft),
            _ => None,
        }
    }
}

/// The rows of `target`.
pub fn for_target(target: &str) -> impl Iterator<Item = &'static Hazard> + '_ {
    HAZARDS.iter().filter(move |h| h.target == target)
}

/// The values of the amdgpu parameters the rows name, as the module reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelBadFacts {
    /// (parameter, value); `None` when its file is absent or not an integer.
    pub parameters: Vec<(String, Option<i64>)>,
}

impl KernelBadFacts {
    /// The value of `parameter`, when read.
    pub fn value(&self, parameter: &str) -> Option<i64> {
        self.parameters
            .iter()
            .find(|(p, _)| p == parameter)
            .and_then(|(_, v)| *v)
    }
}

impl Collect for KernelBadFacts {
    type Needs<'a> = ();
    type Output = Self;

    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let mut names: Vec<&str> = HAZARDS.iter().map(|h| h.parameter).collect();
        names.sort_unstable();
        names.dedup();
        let parameters = names
            .into_iter()
            .map(|name| {
                let path = format!("{AMDGPU_MODULE}/parameters/{name}");
                let value = match root.read_value(&path) {
                    Ok(text) => {
                        let parsed = text.parse().ok();
                        if parsed.is_none() {
                            problems.push(Problem::new(
                                path,
                                crate::text!("facts.not-an-integer", text = format!("{text:?}")),
                            ));
                        }
                        parsed
                    }
                    Err(e) if e.is_not_found() => None,
                    Err(e) => {
                        problems.push(Problem::from(e));
                        None
                    }
                };
                (name.to_owned(), value)
            })
            .collect();
        Self { parameters }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_file_parses_and_matches_the_table() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kernel_bad.toml"),
        )
        .unwrap();
        let d = data::parse(&text).unwrap();
        assert_eq!(d.as_of, AS_OF);
        assert_eq!(d.rows.len(), HAZARDS.len());
        let cwsr = for_target("gfx1151").next().unwrap();
        assert_eq!(cwsr.parameter, "cwsr_enable");
        assert!(cwsr.source.contains("5590"));
        assert_eq!(for_target("gfx1150").count(), 0);
    }

    #[test]
    fn where_a_release_and_a_value_stand() {
        let h = for_target("gfx1151").next().unwrap();
        // amdgpu-dkms 6.16 with CWSR on (the default): exposed; the value not captured: unknown.
        assert_eq!(h.standing((6, 16), Some(1)), Some(Standing::Exposed));
        assert_eq!(h.standing((6, 16), None), None);
        assert_eq!(h.standing((6, 16), Some(0)), None);
        assert_eq!(h.standing((6, 18), Some(1)), None);
        assert_eq!(h.standing((7, 0), Some(0)), Some(Standing::WorkaroundLeft));
    }

    #[test]
    fn rows_without_a_source_twice_or_malformed_are_refused() {
        let row = "target = \"gfx1151\"\nparameter = \"cwsr_enable\"\nworkaround = 0\nfixed = \"6.18\"\nsymptom = \"x\"\n";
        let one = format!("as_of = \"2026-01-01\"\n[[hazard]]\n{row}");
        assert!(data::parse(&one).unwrap_err().contains("no source"));
        let sourced = format!("{row}source = \"s\"\n");
        let twice = format!("as_of = \"2026-01-01\"\n[[hazard]]\n{sourced}[[hazard]]\n{sourced}");
        assert!(data::parse(&twice).unwrap_err().contains("twice"));
        let bad = sourced.replace("\"6.18\"", "\"6\"");
        let bad = format!("as_of = \"2026-01-01\"\n[[hazard]]\n{bad}");
        assert!(data::parse(&bad).unwrap_err().contains("major.minor"));
    }
}
