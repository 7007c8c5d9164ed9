//! Which gfx targets each ROCm release supports on Linux, from AMD's published system
//! requirements and compatibility matrices. Data only; `checks::runtime` looks GPUs up here.
//!
//! Each release row cites the page it was taken from. AMD lists products; a target's status is
//! the best status of any product listed with it (for ROCm 6.0 the MI50 is deprecated but the
//! Radeon VII, also gfx906, is supported, so gfx906 counts as supported). A target missing from
//! a row is "not listed", which AMD's pages define as not officially supported. Releases without
//! a row are unknown: the check that uses this table then skips instead of guessing.

use std::fmt;

use serde::Serialize;

use crate::facts::install::RocmVersion;

/// What a release's page says about a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// ✅: "AMD enables these GPUs in our software distributions".
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
    /// The page the row was taken from.
    pub source: &'static str,
    /// Targets with their status.
    pub entries: &'static [Entry],
}

const fn e(target: &'static str, support: Support) -> Entry {
    Entry {
        target,
        support,
        since_patch: 0,
    }
}

const fn since(target: &'static str, support: Support, patch: u32) -> Entry {
    Entry {
        target,
        support,
        since_patch: patch,
    }
}

use Support::{Deprecated, Supported, Unsupported};

/// The release rows, oldest first.
pub const RELEASES: &[Release] = &[
    // ROCm 5.7: "GPU and OS Support (Linux)", ROCm/ROCm branch docs/5.7.1,
    // docs/release/gpu_os_support.md: MI250X/MI250/MI210 gfx90a, MI100 gfx908, MI50 / Radeon VII /
    // Radeon Pro VII gfx906 ✅, W7900 and RX 7900 XTX/XT gfx1100 ✅ (Ubuntu 22.04 only), W6800 /
    // V620 gfx1030 ✅, MI25 gfx900 ❌. No MI300 yet.
    Release {
        major: 5,
        minor: 7,
        source: "https://rocm.docs.amd.com/en/docs-5.7.1/release/gpu_os_support.html",
        entries: &[
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx906", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx900", Unsupported),
        ],
    },
    // ROCm 6.0: "System requirements (Linux)", ROCm/rocm-install-on-linux branch docs/6.0.0,
    // docs/reference/system-requirements.rst: MI300X/MI300A gfx942, MI250X/MI250/MI210 gfx90a,
    // MI100 gfx908 ✅; MI50 gfx906 ⚠️ but Radeon VII and Radeon Pro VII gfx906 ✅; W7900,
    // RX 7900 XTX/XT gfx1100 ✅; W6800, V620 gfx1030 ✅; MI25 gfx900 ❌.
    Release {
        major: 6,
        minor: 0,
        source: "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.0.0/reference/system-requirements.html",
        entries: &[
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx906", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx900", Unsupported),
        ],
    },
    // ROCm 6.1: same page, branch docs/6.1.0: gfx942, gfx90a, gfx908, gfx1100 (W7900, W7800,
    // RX 7900 XTX/XT/GRE), gfx1030 (W6800, V620) ✅; every gfx906 product ⚠️; MI25 gfx900 ❌.
    Release {
        major: 6,
        minor: 1,
        source: "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.1.0/reference/system-requirements.html",
        entries: &[
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx906", Deprecated),
            e("gfx900", Unsupported),
        ],
    },
    // ROCm 6.2: same page, branches docs/6.2.0 and docs/6.2.4 (identical GPU tables): as 6.1,
    // plus the W7900 Dual Slot (gfx1100).
    Release {
        major: 6,
        minor: 2,
        source: "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/reference/system-requirements.html",
        entries: &[
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx906", Deprecated),
            e("gfx900", Unsupported),
        ],
    },
    // ROCm 6.3: "Compatibility matrix", ROCm/ROCm branch docs/6.3.3,
    // docs/compatibility/compatibility-matrix.rst, row "GPU / LLVM target" for 6.3.0–6.3.3:
    // gfx1100, gfx1030, gfx942, gfx90a, gfx908. (The matrix lists no deprecated targets.)
    Release {
        major: 6,
        minor: 3,
        source: "https://rocm.docs.amd.com/en/docs-6.3.3/compatibility/compatibility-matrix.html",
        entries: &[
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
        ],
    },
    // ROCm 6.4: "System requirements (Linux)" of the 6.4.x docs (ROCm/rocm-install-on-linux
    // docs/reference/system-requirements.rst, the version listing MI325X and RX 9070/9060 XT):
    // MI325X/MI300X/MI300A gfx942, MI250X/MI250/MI210 gfx90a, MI100 gfx908, R9700 and
    // RX 9070 XT/GRE/9070 gfx1201, RX 9060 XT gfx1200, V710 / W7700 / RX 7800 XT gfx1101,
    // W7900/W7800, RX 7900 XTX/XT/GRE gfx1100, W6800/V620 gfx1030 ✅; MI50, Radeon VII, Radeon
    // PRO VII gfx906 and MI25 gfx900 ❌. gfx1201, gfx1200 and gfx1101 arrived in 6.4.1: the
    // compatibility matrix lists them only in its 6.4.1 column (ROCm/ROCm pull request #4875,
    // https://github.com/ROCm/ROCm/pull/4875; RX 9070 support "with the latest 6.4.1 release",
    // https://github.com/ROCm/rocm-install-on-linux/issues/447).
    Release {
        major: 6,
        minor: 4,
        source: "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.4.1/reference/system-requirements.html",
        entries: &[
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            since("gfx1201", Supported, 1),
            since("gfx1200", Supported, 1),
            since("gfx1101", Supported, 1),
            e("gfx906", Unsupported),
            e("gfx900", Unsupported),
        ],
    },
    // ROCm 7.0: "System requirements (Linux)" of the 7.0 docs (ROCm/rocm-install-on-linux
    // docs/reference/system-requirements.rst, the version with MI355X/MI350X and footnotes
    // `*-700`): MI355X/MI350X gfx950, MI325X/MI300X/MI300A gfx942, MI250X/MI250/MI210 gfx90a,
    // MI100 gfx908, R9700 / RX 9070 XT/GRE/9070 gfx1201, RX 9060 XT gfx1200, V710 / W7700 /
    // RX 7800 XT / RX 7700 XT gfx1101, W7900/W7800 / RX 7900 XTX/XT/GRE gfx1100, W6800/V620
    // gfx1030 ✅; MI50, Radeon VII, Radeon PRO VII gfx906 and MI25 gfx900 ❌.
    Release {
        major: 7,
        minor: 0,
        source: "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-7.0.0/reference/system-requirements.html",
        entries: &[
            e("gfx950", Supported),
            e("gfx942", Supported),
            e("gfx90a", Supported),
            e("gfx908", Supported),
            e("gfx1201", Supported),
            e("gfx1200", Supported),
            e("gfx1101", Supported),
            e("gfx1100", Supported),
            e("gfx1030", Supported),
            e("gfx906", Unsupported),
            e("gfx900", Unsupported),
        ],
    },
];

/// The row of a release, by major and minor version; `None` for releases not in the table.
pub fn release(version: &RocmVersion) -> Option<&'static Release> {
    RELEASES
        .iter()
        .find(|r| r.major == version.major && r.minor == version.minor)
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
    use super::*;
    use crate::target::GfxVersion;

    #[test]
    fn every_row_cites_a_source_and_names_real_targets() {
        assert!(RELEASES.len() >= 6);
        for r in RELEASES {
            assert!(
                r.source.starts_with("https://rocm.docs.amd.com/"),
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
        assert!(release(&v("7.1.0")).is_none());
    }
}
