//! What caps the system memory an APU's GPU may use (issue 16, item 6): TTM's `pages_limit` and
//! `page_pool_size` (`/sys/module/ttm/parameters`, or `amdttm`'s when AMD's amdgpu-dkms brings
//! its own TTM) and amdgpu's deprecated `gttsize`. By default TTM allows half of system RAM, and
//! KFD gives an APU's GPU no more than TTM allows: the memory ROCm reports.

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// TTM's module directories, in the order amdgpu uses them: AMD's out-of-tree TTM when it is
/// loaded (amdgpu-dkms), else the kernel's.
pub const TTM_MODULES: [&str; 2] = ["/sys/module/amdttm", "/sys/module/ttm"];
/// amdgpu's GTT size parameter, MiB (-1 = auto); deprecated (amdgpu logs "Configuring gttsize via
/// module parameter is deprecated, please use ttm.pages_limit", ROCm/ROCm#5595).
pub const GTTSIZE: &str = "/sys/module/amdgpu/parameters/gttsize";
/// TTM's page size.
pub const PAGE: u64 = 4096;

/// TTM's and amdgpu's limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GttFacts {
    /// The module the parameters were read from (`/sys/module/ttm`); `None` when neither was
    /// captured.
    pub module: Option<String>,
    /// `pages_limit`: pages of system memory TTM lets GPUs use (4 KiB each).
    pub pages_limit: Option<u64>,
    /// `page_pool_size`: pages TTM's pool may keep.
    pub page_pool_size: Option<u64>,
    /// amdgpu's `gttsize`, MiB; -1 is automatic.
    pub gttsize_mib: Option<i64>,
}

impl GttFacts {
    /// `pages_limit` in bytes.
    pub fn limit_bytes(&self) -> Option<u64> {
        self.pages_limit.map(|p| p.saturating_mul(PAGE))
    }
}

impl Collect for GttFacts {
    type Needs<'a> = ();
    type Output = Self;

    /// Reads the parameters; absent files are `None`.
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let number = |path: &str, problems: &mut Vec<Problem>| {
            let text = optional(root.read_value(path), problems)?;
            let parsed = text.parse().ok();
            if parsed.is_none() {
                problems.push(Problem::new(
                    path,
                    crate::text!("facts.not-an-integer", text = format!("{text:?}")),
                ));
            }
            parsed
        };
        let mut facts = Self::default();
        for dir in TTM_MODULES {
            if !root.exists(&format!("{dir}/parameters/pages_limit")) {
                continue;
            }
            facts.module = Some(dir.to_owned());
            facts.pages_limit = number(&format!("{dir}/parameters/pages_limit"), problems);
            facts.page_pool_size = number(&format!("{dir}/parameters/page_pool_size"), problems);
            break;
        }
        facts.gttsize_mib = optional(root.read_value(GTTSIZE), problems).and_then(|text| {
            let parsed = text.parse().ok();
            if parsed.is_none() {
                problems.push(Problem::new(
                    GTTSIZE,
                    crate::text!("facts.not-an-integer", text = format!("{text:?}")),
                ));
            }
            parsed
        });
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_amdttm_before_ttm_and_gttsize() {
        let dir = tempfile::tempdir().unwrap();
        let put = |path: &str, text: &str| {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("/sys/module/ttm/parameters/pages_limit", "16305152\n");
        put("/sys/module/ttm/parameters/page_pool_size", "16305152\n");
        put("/sys/module/amdgpu/parameters/gttsize", "-1\n");
        let mut problems = Vec::new();
        let source = Source::fixture(dir.path()).unwrap();
        let facts = GttFacts::collect(&source, (), &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.module.as_deref(), Some("/sys/module/ttm"));
        assert_eq!(facts.limit_bytes(), Some(16305152 * 4096));
        assert_eq!(facts.gttsize_mib, Some(-1));
        put("/sys/module/amdttm/parameters/pages_limit", "25165824\n");
        let facts = GttFacts::collect(&source, (), &mut problems);
        assert_eq!(facts.module.as_deref(), Some("/sys/module/amdttm"));
        assert_eq!(facts.pages_limit, Some(25165824));
        assert_eq!(facts.page_pool_size, None);
    }
}
