//! The amdgpu kernel module as `/sys/module/amdgpu` shows it.

use serde::Serialize;

use crate::problem::{Problem, optional};
use crate::root::SysRoot;

/// Where the module's sysfs directory lives.
pub const AMDGPU_MODULE: &str = "/sys/module/amdgpu";

/// The amdgpu parameters the probe interprets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AmdgpuParameters {
    /// `noretry`: -1 the kernel's per-GPU default, 0 retry faults on (XNACK possible), 1 off.
    pub noretry: Option<i32>,
}

impl AmdgpuParameters {
    /// Reads the parameters; absent files are `None`.
    pub fn collect(root: &SysRoot, problems: &mut Vec<Problem>) -> Self {
        let path = format!("{AMDGPU_MODULE}/parameters/noretry");
        let noretry = optional(root.read_value(&path), problems).and_then(|text| {
            let parsed = text.parse().ok();
            if parsed.is_none() {
                problems.push(Problem::new(path, format!("{text:?} is not an integer")));
            }
            parsed
        });
        Self { noretry }
    }
}
