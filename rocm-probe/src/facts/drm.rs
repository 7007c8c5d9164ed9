//! The drm device behind each GPU node's render node: `/sys/class/drm/renderD<minor>/device/…`
//! (the PCI function for whole GPUs; partitions past the first are platform devices without
//! most of these files).

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// Where drm devices are listed.
pub const DRM_DIR: &str = "/sys/class/drm";

/// Error counts of one RAS block (`ras/<block>_err_count`: `ue: N` / `ce: N`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RasCount {
    /// Block name (`umc`, `gfx`, `sdma`, …).
    pub block: String,
    /// Uncorrectable errors.
    pub uncorrectable: Option<u64>,
    /// Corrected errors.
    pub correctable: Option<u64>,
}

/// What the drm side adds to a KFD GPU node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RenderNode {
    /// The render minor (`renderD128` → 128).
    pub minor: u32,
    /// PCI revision id (`device/revision`, hex in sysfs).
    pub revision: Option<u32>,
    /// `device/product_name` (from the board's FRU EEPROM on server parts).
    pub product_name: Option<String>,
    /// `device/vbios_version`.
    pub vbios_version: Option<String>,
    /// `power/runtime_status`: `active`, `suspended`, …
    pub runtime_status: Option<String>,
    /// `mem_info_vram_total`, bytes (on APUs: the BIOS carve-out).
    pub vram_total: Option<u64>,
    /// `mem_info_vis_vram_total`: VRAM the CPU can map (all of it with Large BAR).
    pub vis_vram_total: Option<u64>,
    /// `mem_info_gtt_total`: system memory the GPU can map.
    pub gtt_total: Option<u64>,
    /// `current_link_speed` (`16.0 GT/s PCIe`).
    pub current_link_speed: Option<String>,
    /// `max_link_speed`.
    pub max_link_speed: Option<String>,
    /// `current_link_width`.
    pub current_link_width: Option<u32>,
    /// `max_link_width`.
    pub max_link_width: Option<u32>,
    /// `current_compute_partition` (`SPX`, `CPX`, …).
    pub compute_partition: Option<String>,
    /// `current_memory_partition` (`NPS1`, `NPS4`, …).
    pub memory_partition: Option<String>,
    /// `ras/*_err_count`, by block.
    pub ras: Vec<RasCount>,
    /// Retired pages in `ras/gpu_vram_bad_pages` (`R` entries).
    pub retired_pages: Option<u64>,
    /// Pages pending retirement (`P` entries).
    pub pending_pages: Option<u64>,
}

impl Collect for RenderNode {
    /// The render node's minor (the topology's `drm_render_minor`).
    type Needs<'a> = u32;
    type Output = Self;

    /// Reads the render node's device files. Absent files are `None`. On a runtime-suspended
    /// GPU the RAS and link files are not read: querying them can wake it.
    fn collect(source: &Source, minor: u32, problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let dir = format!("{DRM_DIR}/renderD{minor}/device");
        // One listing instead of a failed open per absent file: partitions and captures without
        // a drm tree have none of them.
        let Some(present) = optional(root.read_dir(&dir), problems) else {
            return Self {
                minor,
                ..Self::default()
            };
        };
        let text = |name: &str, problems: &mut Vec<Problem>| {
            let top = name.split('/').next().unwrap_or(name);
            if present.binary_search_by(|e| e.as_str().cmp(top)).is_err() {
                return None;
            }
            optional(root.read_value(&format!("{dir}/{name}")), problems).filter(|v| !v.is_empty())
        };
        let number = |name: &str, problems: &mut Vec<Problem>| {
            let v = text(name, problems)?;
            let parsed = crate::facts::properties::parse_u64(&v);
            if parsed.is_none() {
                problems.push(Problem::new(
                    format!("{dir}/{name}"),
                    crate::text!("facts.not-a-number", text = format!("{v:?}")),
                ));
            }
            parsed
        };
        let runtime_status = text("power/runtime_status", problems);
        let awake = runtime_status.as_deref() != Some("suspended");
        let revision = text("revision", problems).and_then(|t| {
            let parsed = u32::from_str_radix(t.trim_start_matches("0x"), 16).ok();
            if parsed.is_none() {
                problems.push(Problem::new(
                    format!("{dir}/revision"),
                    crate::text!("facts.not-hex-revision", text = format!("{t:?}")),
                ));
            }
            parsed
        });
        let mut node = Self {
            minor,
            revision,
            product_name: text("product_name", problems),
            vbios_version: text("vbios_version", problems),
            vram_total: number("mem_info_vram_total", problems),
            vis_vram_total: number("mem_info_vis_vram_total", problems),
            gtt_total: number("mem_info_gtt_total", problems),
            compute_partition: text("current_compute_partition", problems),
            memory_partition: text("current_memory_partition", problems),
            runtime_status,
            ..Self::default()
        };
        if awake {
            node.current_link_speed = text("current_link_speed", problems);
            node.max_link_speed = text("max_link_speed", problems);
            node.current_link_width =
                number("current_link_width", problems).and_then(|v| u32::try_from(v).ok());
            node.max_link_width =
                number("max_link_width", problems).and_then(|v| u32::try_from(v).ok());
            node.ras = ras_counts(root, &dir, problems);
            if let Some(pages) = optional(
                root.read_text(&format!("{dir}/ras/gpu_vram_bad_pages")),
                problems,
            ) {
                let flag = |f: &str| {
                    pages
                        .lines()
                        .filter(|l| l.rsplit(':').next().map(str::trim) == Some(f))
                        .count() as u64
                };
                node.retired_pages = Some(flag("R"));
                node.pending_pages = Some(flag("P"));
            }
        }
        node
    }
}

fn ras_counts(root: &SysRoot, dir: &str, problems: &mut Vec<Problem>) -> Vec<RasCount> {
    let ras = format!("{dir}/ras");
    let Some(names) = optional(root.read_dir(&ras), problems) else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|n| n.strip_suffix("_err_count"))
        .filter_map(|block| {
            let path = format!("{ras}/{block}_err_count");
            let text = optional(root.read_text(&path), problems)?;
            let mut count = RasCount {
                block: block.to_owned(),
                ..RasCount::default()
            };
            for line in text.lines() {
                match line
                    .split_once(':')
                    .map(|(k, v)| (k.trim(), v.trim().parse().ok()))
                {
                    Some(("ue", v)) => count.uncorrectable = v,
                    Some(("ce", v)) => count.correctable = v,
                    _ => {}
                }
            }
            Some(count)
        })
        .collect()
}

/// The GT/s figure of a link speed string (`"16.0 GT/s PCIe"` → 16.0).
pub fn gts(speed: &str) -> Option<f64> {
    speed.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, v) in files {
            let path = dir.path().join("sys/class/drm/renderD128/device").join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, v).unwrap();
        }
        dir
    }

    #[test]
    fn reads_memory_link_ras_and_bad_pages() {
        let dir = tree(&[
            ("revision", "0xc1\n"),
            ("mem_info_vram_total", "68702699520\n"),
            ("mem_info_vis_vram_total", "268435456\n"),
            ("current_link_width", "8\n"),
            ("max_link_width", "16\n"),
            ("current_link_speed", "16.0 GT/s PCIe\n"),
            ("ras/umc_err_count", "ue: 2\nce: 31\n"),
            ("ras/gfx_err_count", "ue: 0\nce: 0\n"),
            ("ras/features", "feature mask: 0x3fbf\n"),
            (
                "ras/gpu_vram_bad_pages",
                "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n",
            ),
            ("current_compute_partition", "CPX\n"),
        ]);
        let mut p = Vec::new();
        let n = RenderNode::collect(&Source::fixture(dir.path()).unwrap(), 128, &mut p);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(n.revision, Some(0xc1));
        assert_eq!(
            (n.vram_total, n.vis_vram_total),
            (Some(68702699520), Some(268435456))
        );
        assert_eq!(
            (n.current_link_width, n.max_link_width),
            (Some(8), Some(16))
        );
        assert_eq!(n.ras.len(), 2);
        let umc = n.ras.iter().find(|r| r.block == "umc").unwrap();
        assert_eq!((umc.uncorrectable, umc.correctable), (Some(2), Some(31)));
        assert_eq!((n.retired_pages, n.pending_pages), (Some(1), Some(1)));
        assert_eq!(n.compute_partition.as_deref(), Some("CPX"));
        assert_eq!(gts(n.current_link_speed.as_deref().unwrap()), Some(16.0));
    }

    #[test]
    fn a_suspended_gpu_is_not_woken() {
        let dir = tree(&[
            ("power/runtime_status", "suspended\n"),
            ("current_link_width", "16\n"),
            ("ras/umc_err_count", "ue: 9\nce: 0\n"),
            ("mem_info_vram_total", "1024\n"),
        ]);
        let mut p = Vec::new();
        let n = RenderNode::collect(&Source::fixture(dir.path()).unwrap(), 128, &mut p);
        assert_eq!(n.runtime_status.as_deref(), Some("suspended"));
        assert_eq!(n.current_link_width, None);
        assert!(n.ras.is_empty());
        assert_eq!(n.vram_total, Some(1024));
    }
}
