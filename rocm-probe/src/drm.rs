//! The drm render node of each GPU node: `/sys/class/drm/renderD<minor>/device/…`.

use serde::Serialize;

use crate::problem::{Problem, optional};
use crate::root::SysRoot;

/// Where drm devices are listed.
pub const DRM_DIR: &str = "/sys/class/drm";

/// What the drm side adds to a KFD GPU node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RenderNode {
    /// The render minor (`renderD128` → 128).
    pub minor: u32,
    /// PCI revision id (`device/revision`, hex in sysfs).
    pub revision: Option<u32>,
    /// `device/product_name` (from the board's FRU EEPROM on server parts).
    pub product_name: Option<String>,
}

impl RenderNode {
    /// Reads the render node's device files. Partition render nodes are platform devices
    /// without these files: absent files are simply `None`.
    pub fn collect(root: &SysRoot, minor: u32, problems: &mut Vec<Problem>) -> Self {
        let dir = format!("{DRM_DIR}/renderD{minor}/device");
        let mut read = |name: &str| {
            optional(root.read_value(&format!("{dir}/{name}")), problems).filter(|v| !v.is_empty())
        };
        let revision_text = read("revision");
        let product_name = read("product_name");
        let revision = revision_text.as_deref().and_then(|t| {
            let parsed = u32::from_str_radix(t.trim_start_matches("0x"), 16).ok();
            if parsed.is_none() {
                problems.push(Problem::new(
                    format!("{dir}/revision"),
                    format!("{t:?} is not a hex revision"),
                ));
            }
            parsed
        });
        Self {
            minor,
            revision,
            product_name,
        }
    }
}
