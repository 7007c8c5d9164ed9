//! Which gfx targets each ROCm release supports on Linux, from AMD's published system
//! requirements and compatibility matrices, and which targets TheRock's preview releases list
//! (their release notes' hardware tables, or their build target lists). Data only;
//! `checks::runtime` looks GPUs up here.
//!
//! The rows live in `rocm-probe/data/support.toml` (format and sources there, refreshing in
//! docs/updating-knowledge.md); `build.rs` checks them with `data`'s parser and compiles them
//! into [`RELEASES`], so a run parses nothing. Each row cites the page or file it was taken
//! from. AMD lists products; a target's status is the best status of any product listed with it
//! (for ROCm 6.0 the MI50 is deprecated but the Radeon VII, also gfx906, is supported, so gfx906
//! counts as supported). A target missing from a row is "not listed", which AMD's pages define
//! as not officially supported. Releases without a row are unknown: the check that uses this
//! table then skips instead of guessing.

use std::fmt;

use serde::Serialize;

use crate::facts::install::RocmVersion;
use crate::target::GfxVersion;

#[cfg(test)]
mod data;

/// What a release's page says about a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// ✅: "AMD enables these GPUs in our software distributions"; in a preview row: the preview
    /// lists it.
    Supported,
    /// ⚠️: still works, support will be removed in a future release.
    Deprecated,
    /// ❌: listed as not enabled / not supported.
    Unsupported,
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Support::Supported => "supported",
            Support::Deprecated => "deprecated",
            Support::Unsupported => "unsupported",
        })
    }
}

/// Which release stream a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stream {
    /// Classic ROCm releases (7.0 through 7.8 are reserved for them).
    Production,
    /// TheRock's technology-preview releases (7.9 to 7.13): not for production use; the row lists
    /// the hardware of the preview's release notes (or TheRock's build targets at its tag).
    Preview,
    /// Production ROCm Core SDK releases built by TheRock (7.14, 10.x).
    CoreSdk,
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stream::Production => "production",
            Stream::Preview => "preview",
            Stream::CoreSdk => "core-sdk",
        })
    }
}

/// One target in a release row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// gfx processor name.
    pub target: &'static str,
    /// Its status.
    pub support: Support,
    /// The first patch release of the row that lists it (0: the whole row).
    pub since_patch: u32,
}

/// The targets of one ROCm release line (`major.minor`, every patch release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// The stream the release belongs to.
    pub stream: Stream,
    /// The page the row was taken from.
    pub source: &'static str,
    /// First release of the line (`YYYY-MM-DD`), where the data records it.
    pub released: Option<&'static str>,
    /// AMD's separate page for the release's Ryzen APUs, which the row's source leaves out and
    /// which was not read: an APU processor the row does not list is not judged.
    pub apus_page: Option<&'static str>,
    /// Targets with their status.
    pub entries: &'static [Entry],
}

include!(concat!(env!("OUT_DIR"), "/support.rs"));

use Support::Supported;

/// The row of a release, by major and minor version; `None` for releases not in the table.
pub fn release(version: &RocmVersion) -> Option<&'static Release> {
    RELEASES
        .iter()
        .find(|r| r.major == version.major && r.minor == version.minor)
}

/// The newest row.
pub fn newest() -> &'static Release {
    RELEASES
        .last()
        .expect("build.rs refuses a file without rows")
}

/// Whether `version` is newer than every row: the data cannot know it yet.
pub fn newer_than_data(version: &RocmVersion) -> bool {
    let n = newest();
    (version.major, version.minor) > (n.major, n.minor)
}

/// Where a target is supported in releases after an installed one: the first production or
/// Core SDK release that supports it, and the last line of the run of consecutive such lines
/// (previews are not offered to someone leaving a production release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Later {
    /// `first` (`major.minor.patch`) supports it, and every line after it through `until`
    /// (`None`: through the newest row).
    Supports {
        /// The first release that supports the target.
        first: (u32, u32, u32),
        /// The last line of the run that starts there; `None` when it reaches the newest row.
        until: Option<&'static Release>,
    },
    /// No row after the installed release supports it.
    Never,
    /// A row on the way does not judge it (an APU on a row whose Ryzen page was not read).
    Unknown,
}

/// The releases after `version` that support `target` (see [`Later`]).
pub fn later_support(target: &str, version: &RocmVersion) -> Later {
    let installed = (version.major, version.minor);
    let rows: Vec<&'static Release> = RELEASES
        .iter()
        .filter(|r| r.stream != Stream::Preview && (r.major, r.minor) >= installed)
        .collect();
    let supported_at = |r: &Release| {
        r.entries
            .iter()
            .find(|e| e.target == target && e.support == Supported)
            .map(|e| e.since_patch)
    };
    let found = rows.iter().position(|r| {
        supported_at(r).is_some_and(|since| {
            (r.major, r.minor) > installed || since > version.patch.unwrap_or(0)
        })
    });
    let before = found.map_or(&rows[..], |n| &rows[..n]);
    if before.iter().any(|r| !r.judges(target)) {
        return Later::Unknown;
    }
    let Some(start) = found else {
        return Later::Never;
    };
    let first = rows[start];
    let run_end = rows[start..]
        .iter()
        .position(|r| supported_at(r).is_none())
        .map(|n| rows[start + n - 1]);
    Later::Supports {
        first: (first.major, first.minor, supported_at(first).unwrap_or(0)),
        until: run_end.filter(|r| !std::ptr::eq(*r, newest())),
    }
}

/// The newest production or Core SDK line before `version` that lists `target` as supported or
/// deprecated (at any patch), with that status: where a user whose release dropped the target
/// can go back to.
pub fn last_listed_before(
    target: &str,
    version: &RocmVersion,
) -> Option<(&'static Release, Support)> {
    let installed = (version.major, version.minor);
    RELEASES
        .iter()
        .rev()
        .filter(|r| r.stream != Stream::Preview && (r.major, r.minor) < installed)
        .find_map(|r| {
            r.entries
                .iter()
                .find(|e| e.target == target && e.support != Support::Unsupported)
                .map(|e| (r, e.support))
        })
}

impl Release {
    /// `major.minor`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }

    /// A target's status in this release at `patch` (unknown patch: 0); `None` when the page
    /// does not list it.
    pub fn status(&self, target: &str, patch: Option<u32>) -> Option<Support> {
        let patch = patch.unwrap_or(0);
        self.entries
            .iter()
            .find(|e| e.target == target && e.since_patch <= patch)
            .map(|e| e.support)
    }

    /// Whether the row judges `target`: not when it is an APU processor the row does not list and
    /// the release's Ryzen APUs are on a separate page the data did not read.
    pub fn judges(&self, target: &str) -> bool {
        self.apus_page.is_none()
            || self.entries.iter().any(|e| e.target == target)
            || !GfxVersion::from_name(target).is_some_and(|g| g.is_apu_processor())
    }

    /// The targets this release supports at `patch`, in table order.
    pub fn supported(&self, patch: Option<u32>) -> Vec<&'static str> {
        let patch = patch.unwrap_or(0);
        self.entries
            .iter()
            .filter(|e| e.support == Supported && e.since_patch <= patch)
            .map(|e| e.target)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Support::Deprecated;
    use super::*;

    #[test]
    fn every_row_cites_a_source_and_names_real_targets() {
        assert!(RELEASES.len() >= 6);
        for r in RELEASES {
            assert!(
                r.source.starts_with("https://rocm.docs.amd.com/")
                    || r.source.starts_with("https://github.com/ROCm/"),
                "{}: {}",
                r.name(),
                r.source
            );
            assert!(!r.entries.is_empty());
            for e in r.entries {
                let g = GfxVersion::from_name(e.target)
                    .unwrap_or_else(|| panic!("{}: {} is no gfx name", r.name(), e.target));
                assert_eq!(g.name(), e.target, "{}: not canonical", r.name());
                let dups = r.entries.iter().filter(|x| x.target == e.target).count();
                assert_eq!(dups, 1, "{}: {} twice", r.name(), e.target);
            }
        }
        // Rows are unique and sorted by release.
        for w in RELEASES.windows(2) {
            assert!((w[0].major, w[0].minor) < (w[1].major, w[1].minor));
        }
    }

    #[test]
    fn lookups() {
        let v = |s: &str| RocmVersion::parse(s).unwrap();
        let r62 = release(&v("6.2.4")).unwrap();
        assert_eq!(r62.status("gfx942", Some(4)), Some(Supported));
        assert_eq!(r62.status("gfx906", Some(4)), Some(Deprecated));
        assert_eq!(r62.status("gfx1103", Some(4)), None);
        let r64 = release(&v("6.4.0")).unwrap();
        assert_eq!(r64.status("gfx1201", Some(0)), None);
        assert_eq!(r64.status("gfx1201", Some(1)), Some(Supported));
        assert_eq!(r64.status("gfx1201", None), None);
        assert!(r64.supported(Some(2)).contains(&"gfx1101"));
        assert_eq!(release(&v("5.7.1")).unwrap().status("gfx942", None), None);
        assert_eq!(
            release(&v("7.0.2")).unwrap().status("gfx950", Some(2)),
            Some(Supported)
        );
        assert!(release(&v("5.2.3")).is_none());
        assert!(!newer_than_data(&v("5.2.3")));
        // 7.1 and 7.2 list the compute GPUs of the compatibility matrix: no Ryzen APU, no gfx906.
        let r72 = release(&v("7.2.4")).unwrap();
        assert_eq!(r72.stream, Stream::Production);
        assert_eq!(r72.status("gfx1201", Some(4)), Some(Supported));
        assert_eq!(r72.status("gfx906", Some(4)), None);
        assert_eq!(r72.status("gfx1151", Some(4)), None);
        assert_eq!(release(&v("7.1.1")).unwrap().supported(Some(1)).len(), 9);
    }

    #[test]
    fn streams_and_the_newest_row() {
        let v = |s: &str| RocmVersion::parse(s).unwrap();
        // 7.0 through 7.8 are production, 7.9 to 7.13 TheRock's previews, 10.x the Core SDK.
        assert_eq!(release(&v("7.0.2")).unwrap().stream, Stream::Production);
        for p in ["7.9.0", "7.10.0", "7.11.0", "7.12.0", "7.13.0"] {
            let r = release(&v(p)).unwrap();
            assert_eq!(r.stream, Stream::Preview, "{p}");
            assert!(
                r.source.contains("-preview/about/release-notes")
                    || r.source.contains("hardware-support-table"),
                "{p}: {}",
                r.source
            );
            assert!(r.released.is_some(), "{p}");
        }
        // 7.12's release notes add the MI100 and the Ryzen 200 Series to 7.11's list.
        let r712 = release(&v("7.12.0")).unwrap();
        assert_eq!(r712.status("gfx1103", None), Some(Supported));
        assert_eq!(r712.status("gfx908", None), Some(Supported));
        let r711 = release(&v("7.11.0")).unwrap();
        assert_eq!(r711.status("gfx1103", None), None);
        assert_eq!(r711.status("gfx908", None), None);
        assert_eq!(r711.status("gfx1201", None), Some(Supported));
        // 7.13's hardware table has the gfx1152 APUs but not yet gfx1153, which 7.14 adds.
        let r713 = release(&v("7.13.0")).unwrap();
        assert_eq!(r713.status("gfx1152", None), Some(Supported));
        assert_eq!(r713.status("gfx1153", None), None);
        assert_eq!(r713.status("gfx900", None), None);
        let r714 = release(&v("7.14.1")).unwrap();
        assert_eq!(r714.stream, Stream::CoreSdk);
        assert_eq!(r714.status("gfx1153", Some(1)), Some(Supported));
        assert_eq!(r714.status("gfx1250", Some(1)), None);
        let r10 = release(&v("10.0.0")).unwrap();
        assert_eq!(r10.stream, Stream::CoreSdk);
        assert_eq!(r10.status("gfx1151", Some(0)), Some(Supported));
        assert_eq!(r10.status("gfx906", Some(0)), None);
        // A release past the newest row is newer than the data; one between rows is not.
        assert_eq!(newest().name(), "10.1");
        assert!(newer_than_data(&v("10.2.0")));
        assert!(newer_than_data(&v("11.0")));
        assert!(!newer_than_data(&v("7.14.0")));
        assert!(AS_OF.len() == 10 && AS_OF.starts_with("20"));
    }

    #[test]
    fn where_a_target_is_supported_later() {
        let v = |s: &str| RocmVersion::parse(s).unwrap();
        let supports = |t: &str, at: &str| match later_support(t, &v(at)) {
            Later::Supports { first, until } => Some((first, until.map(|r| r.name()))),
            _ => None,
        };
        // gfx1201 arrived in 6.4.1, both from an older line and from 6.4.0 itself.
        assert_eq!(supports("gfx1201", "6.3.3"), Some(((6, 4, 1), None)));
        assert_eq!(supports("gfx1201", "6.4.0"), Some(((6, 4, 1), None)));
        // gfx906: supported through 6.0 only (deprecated from 6.1), so the run ends there.
        assert_eq!(
            supports("gfx906", "5.6.0"),
            Some(((5, 7, 0), Some("6.0".to_owned())))
        );
        // Previews are skipped: gfx1102 is first in a production or Core SDK row at 7.14.
        assert_eq!(supports("gfx1102", "7.2.1"), Some(((7, 14, 0), None)));
        // No row after 6.2 lists gfx1032 (RX 6600): nothing to upgrade to.
        assert_eq!(later_support("gfx1032", &v("6.2.0")), Later::Never);
        // gfx906: no later row lists it after 7.2; the last that did is 6.2 (deprecated).
        assert_eq!(later_support("gfx906", &v("7.2.1")), Later::Never);
        let (r, status) = last_listed_before("gfx906", &v("7.2.1")).unwrap();
        assert_eq!((r.name(), status), ("6.2".to_owned(), Support::Deprecated));
        assert_eq!(last_listed_before("gfx1032", &v("6.2.0")), None);
        // An APU crosses 6.4–7.2, whose Ryzen page the data lacks: unknown, not 7.14.
        assert_eq!(later_support("gfx1103", &v("6.2.0")), Later::Unknown);
        assert_eq!(later_support("gfx1151", &v("6.3.0")), Later::Unknown);
        // Even from 7.2.0: a later 7.2 patch may be on the unread page.
        assert_eq!(later_support("gfx1151", &v("7.2.0")), Later::Unknown);
        // Past the unread rows the data decides again: gfx1153 is first listed at 7.14.
        assert_eq!(supports("gfx1153", "7.13.0"), Some(((7, 14, 0), None)));
    }

    #[test]
    fn rows_without_their_ryzen_page_judge_no_unlisted_apu() {
        let v = |s: &str| RocmVersion::parse(s).unwrap();
        for line in ["6.4.4", "7.0.2", "7.1.1", "7.2.1"] {
            let r = release(&v(line)).unwrap();
            assert!(r.apus_page.is_some(), "{line}");
            assert!(!r.judges("gfx1151"), "{line}");
            assert!(!r.judges("gfx1103"), "{line}");
            // Discrete GPUs and listed targets are judged as before.
            assert!(r.judges("gfx1032"), "{line}");
            assert!(r.judges("gfx1201"), "{line}");
        }
        for line in ["6.3.3", "7.14.0", "10.1.0"] {
            let r = release(&v(line)).unwrap();
            assert!(r.judges("gfx1151") && r.judges("gfx1103"), "{line}");
        }
    }
}
