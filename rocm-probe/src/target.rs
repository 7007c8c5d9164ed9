//! gfx targets: names from `gfx_target_version` (or, on 2018 kernels, the PCI device id), the
//! target features each processor has, and full target IDs (`gfx90a:sramecc+:xnack-`).
//!
//! Sources: LLVM AMDGPUUsage "Processors" and "Target Features"; ROCr `isa.cpp`; the kernel's
//! `kgd2kfd_probe` for `gfx_target_version`, `amdgpu_gmc_noretry_set` and
//! `kfd_process_xnack_mode` for XNACK.

use std::fmt;

use serde::{Serialize, Serializer};

/// The variable that makes every GPU run as another processor (libhsakmt reads it; ROCr then
/// reports the override as each GPU agent's ISA).
pub const HSA_OVERRIDE_GFX_VERSION: &str = "HSA_OVERRIDE_GFX_VERSION";

/// How many per-node variables (`HSA_OVERRIDE_GFX_VERSION_0` …) are read: libhsakmt builds the
/// name with `snprintf("HSA_OVERRIDE_GFX_VERSION_%d", node_id)`, so only the plain decimal names
/// of node ids can matter, and KFD topologies hold far fewer nodes than this (65 on an 8-GPU
/// MI300X in CPX mode).
pub const PER_NODE_OVERRIDE_MAX: u32 = 256;

/// The first ROCm release whose libhsakmt reads `HSA_OVERRIDE_GFX_VERSION_<node>`: 6.3.0.
/// ROCT-Thunk-Interface commit cf49353 ("Allow overriding gfx version per-node", ROCT PR #104)
/// is in no release tag of that repository (rocm-6.2.4's `src/topology.c` has no per-node
/// variable); the change shipped with libhsakmt's move into ROCR-Runtime (commit 84567b64, on
/// branch rocm-rel-6.3.0.1), and ROCm 6.3.3's `libhsa-runtime64.so.1.14.60303` reads it
/// (ollama/ollama#8473).
pub const PER_NODE_OVERRIDE_SINCE: (u32, u32) = (6, 3);

/// The per-node variable libhsakmt reads for its node `node`: `HSA_OVERRIDE_GFX_VERSION_<node>`.
pub fn per_node_override_name(node: u32) -> String {
    format!("{HSA_OVERRIDE_GFX_VERSION}_{node}")
}

/// The node a per-node variable names, when `name` is exactly what libhsakmt's `%d` would
/// write (`HSA_OVERRIDE_GFX_VERSION_1`, not `_01` or `_+1`, which it never reads).
pub fn per_node_override_node(name: &str) -> Option<u32> {
    let digits = name
        .strip_prefix(HSA_OVERRIDE_GFX_VERSION)?
        .strip_prefix('_')?;
    let n: u32 = digits.parse().ok()?;
    (n.to_string() == digits).then_some(n)
}

/// The variable libhsakmt takes a GPU's override from, and its value, following
/// `topology_sysfs_get_node_props`: `getenv("HSA_OVERRIDE_GFX_VERSION_<node>")` first (on
/// releases that read it, `per_node`), else `getenv("HSA_OVERRIDE_GFX_VERSION")`. `node` is
/// libhsakmt's node id ([`hsakmt_node_ids`]). A variable that is set wins even when its value is
/// malformed: libhsakmt then fails, it never falls back.
pub fn effective_override(
    env: &std::collections::BTreeMap<String, String>,
    node: u32,
    per_node: bool,
) -> Option<(String, &str)> {
    let own = per_node_override_name(node);
    match env.get(&own) {
        Some(v) if per_node => Some((own, v.as_str())),
        _ => env
            .get(HSA_OVERRIDE_GFX_VERSION)
            .map(|v| (HSA_OVERRIDE_GFX_VERSION.to_owned(), v.as_str())),
    }
}

/// libhsakmt's node ids for KFD's: `topology_sysfs_get_system_props` numbers the sysfs nodes
/// it supports in order — every CPU node (`gpu_id` 0), and every GPU node whose render node
/// opens (one that is absent, `ENOENT`, or refused by the device cgroup, `EPERM`, is skipped).
/// `nodes` are (KFD node id, counted) in KFD order; the result maps each counted KFD node to
/// libhsakmt's id. ROCR_VISIBLE_DEVICES does not change this numbering: ROCr applies it later.
pub fn hsakmt_node_ids(
    nodes: impl IntoIterator<Item = (u32, bool)>,
) -> std::collections::BTreeMap<u32, u32> {
    nodes
        .into_iter()
        .filter(|(_, counted)| *counted)
        .zip(0u32..)
        .map(|((kfd, _), id)| (kfd, id))
        .collect()
}

/// Why a value of `HSA_OVERRIDE_GFX_VERSION` is not one libhsakmt accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideError {
    /// Set but empty.
    Empty,
    /// Not three numbers separated by dots.
    NotTriple,
    /// A number too large for an unsigned int.
    TooLarge,
    /// Something after the third number (this text).
    FollowedBy(String),
    /// Major above 63, or minor or stepping above 255.
    OutOfRange,
}

/// `HSA_OVERRIDE_GFX_VERSION` as libhsakmt reads it: `sscanf(v, "%u.%u.%u%c")` must give
/// exactly three numbers (so nothing may follow, not even a space), then major ≤ 63, minor and
/// stepping ≤ 255 (rocm_agent_enumerator applies the same limits). `%u` skips leading whitespace
/// and takes a sign; a minus is refused here, since it wraps to a huge number.
pub fn parse_override(value: &str) -> Result<GfxVersion, OverrideError> {
    if value.is_empty() {
        return Err(OverrideError::Empty);
    }
    let mut parts = Vec::new();
    let mut rest = value;
    for i in 0..3 {
        let s = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
        let s = s.strip_prefix('+').unwrap_or(s);
        let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(OverrideError::NotTriple);
        }
        let n: u32 = s[..digits].parse().map_err(|_| OverrideError::TooLarge)?;
        parts.push(n);
        rest = &s[digits..];
        if i < 2 {
            rest = rest.strip_prefix('.').ok_or(OverrideError::NotTriple)?;
        }
    }
    if !rest.is_empty() {
        return Err(OverrideError::FollowedBy(rest.to_owned()));
    }
    let (major, minor, stepping) = (parts[0], parts[1], parts[2]);
    if major > 63 || minor > 255 || stepping > 255 {
        return Err(OverrideError::OutOfRange);
    }
    Ok(GfxVersion {
        major,
        minor,
        stepping,
    })
}

/// A gfx IP version as KFD encodes it: `major*10000 + minor*100 + stepping`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GfxVersion {
    /// Major (9 for GFX9).
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Stepping.
    pub stepping: u32,
}

impl GfxVersion {
    /// The largest major a `gfx_target_version` may carry: GFX12 is current, and a value past
    /// this is garbage rather than a future GPU.
    pub const MAX_MAJOR: u32 = 99;

    /// Whether `v` is a `gfx_target_version` a kernel could write: 0 (CPU nodes), or a major of
    /// 1..=[`Self::MAX_MAJOR`] with a minor and stepping that each fit the one hex digit the
    /// processor name gives them (`gfx90a`: minor 0, stepping 10).
    pub fn is_plausible_target_version(v: u32) -> bool {
        let (major, minor, stepping) = (v / 10000, (v / 100) % 100, v % 100);
        v == 0 || ((1..=Self::MAX_MAJOR).contains(&major) && minor < 16 && stepping < 16)
    }

    /// Decodes `gfx_target_version`; 0 (CPU nodes) and implausible values are `None`.
    pub fn from_target_version(v: u32) -> Option<Self> {
        (v != 0 && Self::is_plausible_target_version(v)).then_some(Self {
            major: (v / 10000) % 100,
            minor: (v / 100) % 100,
            stepping: v % 100,
        })
    }

    /// Parses a processor name such as `gfx90a` or `gfx1100` (the last two characters are the
    /// hex minor and stepping).
    pub fn from_name(name: &str) -> Option<Self> {
        let digits = name.strip_prefix("gfx")?;
        if digits.len() < 3 || !digits.is_ascii() {
            return None;
        }
        let (major, rest) = digits.split_at(digits.len() - 2);
        let major = major.parse().ok()?;
        let minor = u32::from_str_radix(&rest[..1], 16).ok()?;
        let stepping = u32::from_str_radix(&rest[1..], 16).ok()?;
        Some(Self {
            major,
            minor,
            stepping,
        })
    }

    /// The processor name, `gfx` + decimal major + hex minor + hex stepping, exactly as
    /// `rocm_agent_enumerator` and ROCr print it (90010 → `gfx90a`).
    pub fn name(&self) -> String {
        format!("gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }

    /// Whether this processor has the `sramecc` target feature.
    pub fn supports_sramecc(&self) -> bool {
        matches!(
            self.name().as_str(),
            "gfx906" | "gfx908" | "gfx90a" | "gfx940" | "gfx941" | "gfx942" | "gfx950"
        )
    }

    /// Whether this processor has the `xnack` target feature.
    pub fn supports_xnack(&self) -> bool {
        matches!(
            self.name().as_str(),
            "gfx801"
                | "gfx810"
                | "gfx900"
                | "gfx902"
                | "gfx904"
                | "gfx906"
                | "gfx908"
                | "gfx909"
                | "gfx90a"
                | "gfx90c"
                | "gfx940"
                | "gfx941"
                | "gfx942"
                | "gfx950"
                | "gfx1010"
                | "gfx1011"
                | "gfx1012"
                | "gfx1013"
        )
    }

    /// GPUs whose XNACK mode can be chosen per process (`KFD_SUPPORT_XNACK_PER_PROCESS`:
    /// GC 9.4.2, 9.4.3, 9.4.4, 9.5.0).
    fn xnack_per_process(&self) -> bool {
        matches!(
            self.name().as_str(),
            "gfx90a" | "gfx940" | "gfx941" | "gfx942" | "gfx950"
        )
    }

    /// The amdgpu default of `noretry` when the parameter is -1 (`amdgpu_gmc_noretry_set`):
    /// retry faults are off on GC 9.0.1, 9.4.x, 9.5.0 and GC ≥ 10.3, on elsewhere.
    fn default_noretry(&self) -> bool {
        matches!(
            self.name().as_str(),
            "gfx900" | "gfx906" | "gfx908" | "gfx90a" | "gfx940" | "gfx941" | "gfx942" | "gfx950"
        ) || (self.major, self.minor) >= (10, 3)
    }

    /// Integrated GPUs (APUs), by processor; MI300A shares gfx942 with discrete parts and is
    /// told apart by device id in [`is_integrated`].
    pub(crate) fn is_apu_processor(&self) -> bool {
        matches!(
            self.name().as_str(),
            "gfx801"
                | "gfx810"
                | "gfx902"
                | "gfx909"
                | "gfx90c"
                | "gfx1013"
                | "gfx1033"
                | "gfx1035"
                | "gfx1036"
                | "gfx1103"
                | "gfx1150"
                | "gfx1151"
                | "gfx1152"
                | "gfx1153"
        )
    }
}

impl fmt::Display for GfxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for GfxVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// MI300A (gfx942 APU) device id.
const MI300A_DEVICE_ID: u32 = 0x74a0;

/// Whether a GPU is integrated with the CPU (shares system memory).
pub fn is_integrated(gfx: GfxVersion, device_id: Option<u32>) -> bool {
    gfx.is_apu_processor() || device_id == Some(MI300A_DEVICE_ID)
}

/// The gfx target of a PCI device id, for kernels that predate `gfx_target_version` (Linux
/// < 5.15). Only parts that such kernels drove are listed; PCI ids per family from the amdgpu
/// driver's `amdgpu_pciidlist` and libdrm's `amdgpu.ids`.
pub fn from_device_id(device_id: u32) -> Option<GfxVersion> {
    #[rustfmt::skip]
    const TABLE: &[(&str, &[u32])] = &[
        ("gfx700", &[0x1304, 0x1305, 0x1306, 0x1307, 0x1309, 0x130a, 0x130b, 0x130c, 0x130d, 0x130e, 0x130f, 0x1310, 0x1311, 0x1312, 0x1313, 0x1315, 0x1316, 0x1317, 0x1318, 0x131b, 0x131c, 0x131d]),
        ("gfx701", &[0x67a0, 0x67a1, 0x67a2, 0x67a8, 0x67a9, 0x67aa, 0x67b0, 0x67b1, 0x67b8, 0x67b9, 0x67ba, 0x67be]),
        ("gfx801", &[0x9870, 0x9874, 0x9875, 0x9876, 0x9877, 0x98e4]),
        ("gfx802", &[0x6920, 0x6921, 0x6928, 0x6929, 0x692b, 0x692f, 0x6930, 0x6938, 0x6939]),
        ("gfx803", &[0x7300, 0x730f, 0x67c0, 0x67c1, 0x67c2, 0x67c4, 0x67c7, 0x67c8, 0x67c9, 0x67ca, 0x67cc, 0x67cf, 0x6fdf, 0x67d0, 0x67df, 0x67e0, 0x67e1, 0x67e3, 0x67e7, 0x67e8, 0x67e9, 0x67eb, 0x67ef, 0x67ff, 0x6980, 0x6981, 0x6985, 0x6986, 0x6987, 0x6995, 0x6997, 0x699f, 0x694c, 0x694e, 0x694f]),
        ("gfx900", &[0x6860, 0x6861, 0x6862, 0x6863, 0x6864, 0x6867, 0x6868, 0x6869, 0x686a, 0x686b, 0x686c, 0x686d, 0x686e, 0x686f, 0x687f]),
        ("gfx902", &[0x15dd, 0x15d8]),
        ("gfx904", &[0x69a0, 0x69a1, 0x69a2, 0x69a3, 0x69af]),
        ("gfx906", &[0x66a0, 0x66a1, 0x66a2, 0x66a3, 0x66a4, 0x66a7, 0x66af]),
        ("gfx908", &[0x738c, 0x7388, 0x738e, 0x7390]),
        ("gfx90a", &[0x7408, 0x740c, 0x740f, 0x7410]),
        ("gfx90c", &[0x15e7, 0x1636, 0x1638, 0x164c]),
        ("gfx1010", &[0x7310, 0x7312, 0x7318, 0x7319, 0x731a, 0x731b, 0x731e, 0x731f]),
        ("gfx1011", &[0x7360, 0x7362]),
        ("gfx1012", &[0x7340, 0x7341, 0x7347, 0x734f]),
        ("gfx1030", &[0x73a0, 0x73a1, 0x73a2, 0x73a3, 0x73a5, 0x73a8, 0x73a9, 0x73ab, 0x73ac, 0x73ad, 0x73ae, 0x73af, 0x73bf]),
        ("gfx1031", &[0x73c0, 0x73c1, 0x73c3, 0x73da, 0x73db, 0x73dc, 0x73dd, 0x73de, 0x73df]),
        ("gfx1032", &[0x73e0, 0x73e1, 0x73e2, 0x73e3, 0x73e8, 0x73e9, 0x73ea, 0x73eb, 0x73ec, 0x73ed, 0x73ef, 0x73ff]),
    ];
    TABLE
        .iter()
        .find(|(_, ids)| ids.contains(&device_id))
        .and_then(|(name, _)| GfxVersion::from_name(name))
}

/// GCN generation 1 (Southern Islands, gfx6) or 2 (Sea Islands, gfx7) of a PCI device id:
/// the parts KFD does not (or, for gfx7, barely) support, and that radeon claims by default.
/// Ranges from the amdgpu driver's PCI id list; `None` for everything else.
pub fn gcn_generation(device_id: u32) -> Option<u8> {
    match device_id {
        // Bonaire (gfx704) sits inside the Oland/Hainan range.
        0x6640..=0x665f => Some(2),
        0x6600..=0x666f | 0x6780..=0x679f | 0x6800..=0x683f => Some(1),
        0x1304..=0x131d | 0x67a0..=0x67bf | 0x9830..=0x983f => Some(2),
        _ => None,
    }
}

/// Where a GPU's gfx target came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetSource {
    /// The node's `gfx_target_version` (Linux ≥ 5.15).
    GfxTargetVersion,
    /// The PCI device id, looked up in a table (older kernels).
    DeviceIdTable,
}

/// The process XNACK mode as KFD would set it for a new process on this machine
/// (`kfd_process_xnack_mode`), adjusted by `HSA_XNACK`, or `None` when it cannot be known.
///
/// `noretry` is amdgpu's parameter (-1 = the kernel's per-GPU default). `gpus` are the
/// processors of every GPU node; the mode is one value for the whole process.
pub fn process_xnack(
    gpus: &[GfxVersion],
    noretry: Option<i32>,
    hsa_xnack: Option<&str>,
) -> Option<bool> {
    let noretry = noretry?;
    // Only SOC15 (GFX9+) GPUs take part in the choice; older ones have no SVM.
    let soc15: Vec<&GfxVersion> = gpus.iter().filter(|g| g.major >= 9).collect();
    if soc15.is_empty() {
        return None;
    }
    let retry_on = |g: &GfxVersion| {
        let noretry = if noretry == -1 {
            g.default_noretry()
        } else {
            noretry != 0
        };
        // GFX10+ cannot preempt shaders during page faults: never XNACK on, whatever noretry.
        g.major == 9 && !noretry
    };
    let default = soc15.iter().all(|g| retry_on(g));
    match hsa_xnack.map(str::trim) {
        // ROCr asks KFD to switch; GPUs with per-process XNACK always accept.
        Some("1") => Some(soc15.iter().all(|g| g.xnack_per_process() || retry_on(g)) || default),
        Some("0") => Some(false),
        _ => Some(default),
    }
}

/// A full target ID: processor plus the features that processor has, in canonical order
/// (`sramecc` before `xnack`). A feature whose setting is unknown is left out (which in LLVM's
/// grammar means "any").
pub fn target_id(gfx: GfxVersion, sramecc: Option<bool>, xnack: Option<bool>) -> String {
    let mut id = gfx.name();
    let mut feature = |name: &str, supported: bool, on: Option<bool>| {
        if let (true, Some(on)) = (supported, on) {
            id.push_str(&format!(":{name}{}", if on { '+' } else { '-' }));
        }
    };
    feature("sramecc", gfx.supports_sramecc(), sramecc);
    feature("xnack", gfx.supports_xnack(), xnack);
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn override_follows_libhsakmt_sscanf() {
        let ok = |s: &str| super::parse_override(s).map(|g| g.name());
        assert_eq!(ok("11.0.0"), Ok("gfx1100".into()));
        assert_eq!(ok("10.3.0"), Ok("gfx1030".into()));
        assert_eq!(ok("9.0.10"), Ok("gfx90a".into()));
        assert_eq!(ok(" 10. 3.+0"), Ok("gfx1030".into()));
        for bad in [
            "",
            "gfx1030",
            "10.3",
            "11.0.0 ",
            "11.0.0\n",
            "11.0.0.0",
            "\"10.3.0\"",
            "-1.0.0",
            "64.0.0",
            "10.256.0",
            "10.3.x",
            "99999999999.0.0",
        ] {
            assert!(super::parse_override(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            super::parse_override("11.0.0 "),
            Err(super::OverrideError::FollowedBy(" ".into()))
        );
    }

    use super::*;

    #[test]
    fn per_node_variable_wins_where_the_release_reads_it() {
        let env: std::collections::BTreeMap<String, String> = [
            ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
            ("HSA_OVERRIDE_GFX_VERSION_2", "10.3.0"),
            ("HSA_OVERRIDE_GFX_VERSION_3", ""),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
        let eff = |node, per_node| {
            effective_override(&env, node, per_node).map(|(n, v)| (n, v.to_owned()))
        };
        let g = |v: &str| Some(("HSA_OVERRIDE_GFX_VERSION".to_owned(), v.to_owned()));
        assert_eq!(eff(1, true), g("11.0.0"));
        assert_eq!(
            eff(2, true),
            Some(("HSA_OVERRIDE_GFX_VERSION_2".to_owned(), "10.3.0".to_owned()))
        );
        // Set but empty still wins: libhsakmt's getenv() returns "", and sscanf then fails.
        assert_eq!(
            eff(3, true),
            Some(("HSA_OVERRIDE_GFX_VERSION_3".to_owned(), String::new()))
        );
        // Before ROCm 6.3 only the global variable is read.
        assert_eq!(eff(2, false), g("11.0.0"));
        let only_node: std::collections::BTreeMap<String, String> =
            [("HSA_OVERRIDE_GFX_VERSION_1".to_owned(), "10.3.0".to_owned())].into();
        assert_eq!(effective_override(&only_node, 2, true), None);
        assert_eq!(effective_override(&only_node, 1, false), None);
        assert_eq!(
            per_node_override_node("HSA_OVERRIDE_GFX_VERSION_12"),
            Some(12)
        );
        for never_read in [
            "HSA_OVERRIDE_GFX_VERSION",
            "HSA_OVERRIDE_GFX_VERSION_",
            "HSA_OVERRIDE_GFX_VERSION_01",
            "HSA_OVERRIDE_GFX_VERSION_+1",
            "HSA_OVERRIDE_GFX_VERSION_1a",
        ] {
            assert_eq!(per_node_override_node(never_read), None, "{never_read}");
        }
        assert_eq!(per_node_override_name(7), "HSA_OVERRIDE_GFX_VERSION_7");
    }

    #[test]
    fn hsakmt_numbers_cpu_nodes_and_the_gpus_it_can_open() {
        // One CPU and two GPUs, all open: the KFD ids.
        let all = hsakmt_node_ids([(0, true), (1, true), (2, true)]);
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            [(0, 0), (1, 1), (2, 2)]
        );
        // A container without the first GPU's render node: the second GPU becomes node 1.
        let hidden = hsakmt_node_ids([(0, true), (1, false), (2, true)]);
        assert_eq!(hidden.get(&1), None);
        assert_eq!(hidden.get(&2), Some(&1));
        // Two hidden GPUs before a visible one: it is node 1 after the CPU.
        let two = hsakmt_node_ids([(0, true), (1, false), (2, false), (3, true)]);
        assert_eq!(two.into_iter().collect::<Vec<_>>(), [(0, 0), (3, 1)]);
    }

    fn v(n: u32) -> GfxVersion {
        GfxVersion::from_target_version(n).unwrap()
    }

    #[test]
    fn names_use_hex_minor_and_stepping() {
        let cases = [
            (90000, "gfx900"),
            (90010, "gfx90a"),
            (90012, "gfx90c"),
            (90402, "gfx942"),
            (90500, "gfx950"),
            (100300, "gfx1030"),
            (100303, "gfx1033"),
            (110000, "gfx1100"),
            (110003, "gfx1103"),
            (110501, "gfx1151"),
            (120001, "gfx1201"),
        ];
        for (n, name) in cases {
            assert_eq!(v(n).name(), name);
            assert_eq!(GfxVersion::from_name(name), Some(v(n)));
        }
        assert_eq!(GfxVersion::from_target_version(0), None);
        for garbage in [u32::MAX, 1_000_000, 90_016, 91_600, 99] {
            assert_eq!(GfxVersion::from_target_version(garbage), None, "{garbage}");
        }
        assert_eq!(GfxVersion::from_name("gfx"), None);
        assert_eq!(GfxVersion::from_name("gfx9-generic"), None);
    }

    #[test]
    fn device_id_fallback() {
        assert_eq!(
            from_device_id(0x6860).map(|g| g.name()),
            Some("gfx900".into())
        );
        assert_eq!(
            from_device_id(0x740f).map(|g| g.name()),
            Some("gfx90a".into())
        );
        assert_eq!(from_device_id(0xffff), None);
    }

    #[test]
    fn gcn_generations() {
        assert_eq!(gcn_generation(0x6818), Some(1)); // Pitcairn (HD 7870)
        assert_eq!(gcn_generation(0x6798), Some(1)); // Tahiti
        assert_eq!(gcn_generation(0x6649), Some(2)); // Bonaire
        assert_eq!(gcn_generation(0x67b0), Some(2)); // Hawaii
        assert_eq!(gcn_generation(0x67df), None); // Polaris
    }

    #[test]
    fn target_ids_list_supported_features_in_order() {
        assert_eq!(
            target_id(v(90010), Some(true), Some(false)),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(target_id(v(90010), Some(true), None), "gfx90a:sramecc+");
        assert_eq!(target_id(v(110000), Some(false), Some(false)), "gfx1100");
        assert_eq!(target_id(v(90000), Some(true), Some(true)), "gfx900:xnack+");
    }

    #[test]
    fn xnack_follows_the_kernel_rules() {
        let mi210 = [v(90010)];
        assert_eq!(process_xnack(&mi210, None, None), None);
        assert_eq!(process_xnack(&mi210, Some(-1), None), Some(false));
        assert_eq!(process_xnack(&mi210, Some(0), None), Some(true));
        assert_eq!(process_xnack(&mi210, Some(1), Some("1")), Some(true));
        assert_eq!(process_xnack(&mi210, Some(0), Some("0")), Some(false));
        // A Navi card in the same process forces XNACK off.
        assert_eq!(
            process_xnack(&[v(90010), v(100300)], Some(0), None),
            Some(false)
        );
        // Raven's default is retry on.
        assert_eq!(process_xnack(&[v(90002)], Some(-1), None), Some(true));
        // gfx900 has no per-process mode: HSA_XNACK=1 cannot turn it on under noretry=1.
        assert_eq!(process_xnack(&[v(90000)], Some(1), Some("1")), Some(false));
        // Pre-SOC15 GPUs do not take part.
        assert_eq!(process_xnack(&[v(80003)], Some(0), None), None);
    }

    #[test]
    fn integrated_gpus() {
        assert!(is_integrated(v(110003), Some(0x15bf)));
        assert!(is_integrated(v(90402), Some(0x74a0)));
        assert!(!is_integrated(v(90402), Some(0x74a1)));
        assert!(!is_integrated(v(110000), None));
    }
}
