//! The amdgpu kernel module as `/sys/module/amdgpu` shows it — never `lsmod`, which misses a
//! built-in amdgpu.

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// Where loaded (and built-in) modules are listed.
pub const MODULES: &str = "/sys/module";
/// Where the module's sysfs directory lives.
pub const AMDGPU_MODULE: &str = "/sys/module/amdgpu";

/// The running kernel's release (`uname -r`).
pub const OSRELEASE: &str = "/proc/sys/kernel/osrelease";
/// Where DKMS keeps amdgpu-dkms builds: `<version>/<kernel release>/…`.
pub const DKMS_AMDGPU: &str = "/var/lib/dkms/amdgpu";

/// One amdgpu-dkms source version and the kernels it was built for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DkmsBuild {
    /// The amdgpu-dkms version (directory name).
    pub version: String,
    /// Kernel releases with a build.
    pub kernels: Vec<String>,
}

/// The amdgpu parameters the probe interprets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AmdgpuParameters {
    /// `noretry`: -1 the kernel's per-GPU default, 0 retry faults on (XNACK possible), 1 off.
    pub noretry: Option<i32>,
}

impl Collect for AmdgpuParameters {
    type Needs<'a> = ();
    type Output = Self;

    /// Reads the parameters; absent files are `None`.
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let path = format!("{AMDGPU_MODULE}/parameters/noretry");
        let noretry = optional(root.read_value(&path), problems).and_then(|text| {
            let parsed = text.parse().ok();
            if parsed.is_none() {
                problems.push(Problem::new(
                    path,
                    crate::text!("facts.not-an-integer", text = format!("{text:?}")),
                ));
            }
            parsed
        });
        Self { noretry }
    }
}

/// The amdgpu module's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModuleFacts {
    /// `/sys/module/amdgpu` exists (loaded, or built into the kernel).
    pub present: bool,
    /// `initstate` (`live`, `coming`, `going`); absent for built-in modules.
    pub initstate: Option<String>,
    /// `version`: present only for out-of-tree (DKMS) builds.
    pub version: Option<String>,
    /// `taint` letters (`O` out-of-tree, `E` unsigned, …).
    pub taint: Option<String>,
    /// Interpreted parameters.
    pub parameters: AmdgpuParameters,
    /// The running kernel's release.
    pub kernel_release: Option<String>,
    /// amdgpu-dkms builds on disk; empty without amdgpu-dkms.
    pub dkms: Vec<DkmsBuild>,
}

impl Collect for ModuleFacts {
    type Needs<'a> = ();
    type Output = Option<Self>;

    /// Reads the module's state; `None` when `/sys/module` itself is absent (not captured).
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Option<Self> {
        let root = source.root();
        if !root.exists(MODULES) {
            return None;
        }
        let kernel_release = optional(root.read_value(OSRELEASE), problems);
        let dkms = optional(root.read_dir(DKMS_AMDGPU), problems)
            .unwrap_or_default()
            .into_iter()
            .filter(|v| !v.starts_with('.') && v != "original_module" && v != "kernel-source")
            .map(|version| {
                let kernels =
                    optional(root.read_dir(&format!("{DKMS_AMDGPU}/{version}")), problems)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|k| k.chars().next().is_some_and(|c| c.is_ascii_digit()))
                        .collect();
                DkmsBuild { version, kernels }
            })
            .collect();
        if !root.exists(AMDGPU_MODULE) {
            return Some(Self {
                kernel_release,
                dkms,
                ..Self::default()
            });
        }
        let value = |name: &str, problems: &mut Vec<Problem>| {
            optional(
                root.read_value(&format!("{AMDGPU_MODULE}/{name}")),
                problems,
            )
            .filter(|v| !v.is_empty())
        };
        Some(Self {
            present: true,
            initstate: value("initstate", problems),
            version: value("version", problems),
            taint: value("taint", problems),
            parameters: AmdgpuParameters::collect(source, (), problems),
            kernel_release,
            dkms,
        })
    }
}

impl ModuleFacts {
    /// Built into the kernel: the directory exists without `initstate`.
    pub fn builtin(&self) -> bool {
        self.present && self.initstate.is_none()
    }
}
