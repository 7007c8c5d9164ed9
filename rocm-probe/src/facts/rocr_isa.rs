//! Which GPU processors ROCr's ISA registry knows, per ROCm release: ROCr builds an agent only
//! for a GPU whose gfx version (after `HSA_OVERRIDE_GFX_VERSION`) its registry lists, and drops
//! any other ("The GPU node has an unrecognized id"). Data only; `checks::runtime` looks GPUs and
//! overrides up here.
//!
//! The rows live in `rocm-probe/data/rocr_isa.toml` (format and sources there, refreshing in
//! docs/updating-knowledge.md); `build.rs` checks them with `data`'s parser and compiles them
//! into [`ROWS`]. Each row covers the release lines read with the same list and cites the file
//! read. A release line outside every row is unknown: callers skip instead of guessing.

use crate::facts::install::RocmVersion;

#[cfg(test)]
mod data;

/// The registry of a run of release lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The first release line (major, minor) read with this list.
    pub first: (u32, u32),
    /// The last release line read with the same list.
    pub last: (u32, u32),
    /// The `isa.cpp` read for the row, at its release tag or branch.
    pub source: &'static str,
    /// The processors the registry lists.
    pub processors: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/rocr_isa.rs"));

impl Row {
    /// Whether the registry lists `processor`.
    pub fn knows(&self, processor: &str) -> bool {
        self.processors.contains(&processor)
    }

    /// The first release line of the row, `major.minor`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.first.0, self.first.1)
    }

    /// The release lines of the row: `5.0–5.2`, or `6.1`.
    pub fn lines(&self) -> String {
        if self.first == self.last {
            self.name()
        } else {
            format!("{}–{}.{}", self.name(), self.last.0, self.last.1)
        }
    }
}

/// The row covering a release, by major and minor version; `None` for a release line no row
/// covers (not read, or newer than the data).
pub fn release(version: &RocmVersion) -> Option<&'static Row> {
    let line = (version.major, version.minor);
    ROWS.iter().find(|r| r.first <= line && line <= r.last)
}

/// The oldest row whose registry lists `processor`: the first release known to the data whose
/// ROCr builds an agent for it.
pub fn first_knowing(processor: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.knows(processor))
}

/// Whether any row's registry lists `processor`.
pub fn known_to_any(processor: &str) -> bool {
    first_knowing(processor).is_some()
}

/// Every processor any row knows, once, in gfx version order.
pub fn all_processors() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = ROWS
        .iter()
        .flat_map(|r| r.processors.iter().copied())
        .collect();
    all.sort_by_key(|p| crate::target::GfxVersion::from_name(p));
    all.dedup();
    all
}

/// The newest row.
pub fn newest() -> &'static Row {
    ROWS.last().expect("build.rs refuses a file without rows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::GfxVersion;
    use std::collections::BTreeSet;

    fn v(s: &str) -> RocmVersion {
        RocmVersion::parse(s).unwrap()
    }

    #[test]
    fn every_row_cites_its_file_and_names_real_processors() {
        for r in ROWS {
            assert!(
                r.source.starts_with("https://github.com/ROCm/"),
                "{}",
                r.source
            );
            assert!(r.source.ends_with("/isa.cpp"), "{}", r.source);
            for p in r.processors {
                let g = GfxVersion::from_name(p).unwrap_or_else(|| panic!("{p}"));
                assert_eq!(&g.name(), p, "{}: not canonical", r.lines());
            }
        }
        for w in ROWS.windows(2) {
            assert!(w[0].last < w[1].first);
        }
    }

    #[test]
    fn first_releases_of_recent_gpus() {
        // The first releases issue #16 names: gfx1150/gfx1151 at 6.1, gfx1200/gfx1201 at 6.2,
        // gfx1152 after 6.2.4 (6.3), gfx950 and gfx1153 by 7.0.
        let first = |p: &str| first_knowing(p).map(Row::name);
        assert_eq!(first("gfx1100").as_deref(), Some("5.3"));
        assert_eq!(first("gfx1101").as_deref(), Some("5.5"));
        assert_eq!(first("gfx942").as_deref(), Some("5.7"));
        assert_eq!(first("gfx1150").as_deref(), Some("6.1"));
        assert_eq!(first("gfx1151").as_deref(), Some("6.1"));
        assert_eq!(first("gfx1200").as_deref(), Some("6.2"));
        assert_eq!(first("gfx1201").as_deref(), Some("6.2"));
        assert_eq!(first("gfx1152").as_deref(), Some("6.3"));
        assert_eq!(first("gfx950").as_deref(), Some("7.0"));
        assert_eq!(first("gfx1153").as_deref(), Some("7.0"));
        assert_eq!(first("gfx1000"), None);
        assert!(!known_to_any("gfx1250"));
    }

    #[test]
    fn lookups_by_release() {
        let r52 = release(&v("5.2.3")).unwrap();
        assert_eq!(r52.lines(), "5.0–5.2");
        assert!(r52.knows("gfx1030") && !r52.knows("gfx1100"));
        assert!(release(&v("6.2")).unwrap().knows("gfx1201"));
        assert!(!release(&v("6.1.2")).unwrap().knows("gfx1201"));
        // 7.0 drops gfx940 and gfx941 (MI300 pre-production parts).
        assert!(release(&v("6.3.0")).unwrap().knows("gfx940"));
        assert!(!release(&v("7.0.2")).unwrap().knows("gfx940"));
        // Not read: 6.4, anything past 7.0, anything before 3.3.
        assert!(release(&v("6.4.1")).is_none());
        assert!(release(&v("7.1.0")).is_none());
        assert!(release(&v("3.0")).is_none());
        assert_eq!(newest().name(), "7.0");
    }

    /// The processors named in a library's read-only strings: `(standalone, anywhere)`, the
    /// first those of strings that start with the name (`gfx906`, `gfx906:xnack-`, as ROCr's
    /// registry writes them), the second every mention ending a string or before a feature (also
    /// `amdgcn-amd-amdhsa--gfx700`, where the linker merged `gfx700` into a longer string's tail).
    fn named_processors(rodata: &[u8]) -> (BTreeSet<String>, BTreeSet<String>) {
        let (mut standalone, mut anywhere) = (BTreeSet::new(), BTreeSet::new());
        for s in rodata.split(|&b| b == 0) {
            let Ok(s) = std::str::from_utf8(s) else {
                continue;
            };
            for (at, _) in s.match_indices("gfx") {
                let rest = &s[at + 3..];
                let digits = rest
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len());
                let ends = rest[digits..].is_empty() || rest[digits..].starts_with(':');
                if (3..=4).contains(&digits) && ends {
                    let name = format!("gfx{}", &rest[..digits]);
                    if at == 0 {
                        standalone.insert(name.clone());
                    }
                    anywhere.insert(name);
                }
            }
        }
        (standalone, anywhere)
    }

    /// The real ROCr of this machine as the oracle: Debian 12's libhsa-runtime64-1 (ROCm 5.2.3;
    /// one of the packages scripts/test installs). Its registry's strings name exactly the
    /// processors of the row covering its release, none of those later releases add, and it
    /// carries the message with which it drops a GPU it does not know.
    #[test]
    fn the_row_matches_the_installed_rocr() {
        let out = std::process::Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", "libhsa-runtime64-1"])
            .output();
        let Some(version) = out
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| RocmVersion::parse(&String::from_utf8_lossy(&o.stdout)))
        else {
            // Not a Debian machine with ROCr installed: nothing to compare with.
            return;
        };
        let path = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";
        let bytes = std::fs::read(path).expect("the package installs its library");
        let file = object::File::parse(&*bytes).expect("an ELF file");
        use object::{Object, ObjectSection};
        let rodata = file
            .section_by_name(".rodata")
            .and_then(|s| s.data().ok())
            .expect(".rodata");
        let (standalone, anywhere) = named_processors(rodata);
        let row = release(&version).unwrap_or_else(|| panic!("no row covers ROCm {version}"));
        let knows: BTreeSet<String> = row.processors.iter().map(|p| p.to_string()).collect();
        assert!(
            standalone.is_subset(&knows),
            "ROCm {version}: the library names {:?}, the row does not",
            standalone.difference(&knows).collect::<Vec<_>>()
        );
        assert!(
            knows.is_subset(&anywhere),
            "ROCm {version}: the row lists {:?}, the library does not name them",
            knows.difference(&anywhere).collect::<Vec<_>>()
        );
        let later: BTreeSet<String> = ROWS
            .iter()
            .filter(|r| r.first > row.last)
            .flat_map(|r| r.processors.iter().map(|p| p.to_string()))
            .filter(|p| !knows.contains(p))
            .collect();
        let both: Vec<_> = later.intersection(&anywhere).collect();
        assert!(
            both.is_empty(),
            "ROCm {version} names {both:?}, the data says later releases add them"
        );
        let unknown = b"The GPU node has an unrecognized id";
        assert!(bytes.windows(unknown.len()).any(|w| w == unknown));
    }
}
