//! What the platform around the driver says: the kernel command line, modprobe blacklists,
//! Secure Boot, container and WSL markers, and the environment variables that steer ROCm.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// The kernel command line.
pub const CMDLINE: &str = "/proc/cmdline";
/// The kernel version string (WSL kernels say "microsoft").
pub const PROC_VERSION: &str = "/proc/version";
/// Directories modprobe reads configuration from, in its order.
pub const MODPROBE_DIRS: [&str; 4] = [
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/lib/modprobe.d",
    "/lib/modprobe.d",
];
/// The EFI variable holding Secure Boot's state (4 attribute bytes, then 0 or 1).
pub const SECURE_BOOT_VAR: &str =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
/// Present on EFI systems.
pub const EFI_DIR: &str = "/sys/firmware/efi";
/// Files container engines create.
pub const CONTAINER_MARKERS: [&str; 4] = [
    "/.dockerenv",
    "/run/.containerenv",
    FLATPAK_INFO,
    APPTAINER_DIR,
];
/// The directory Apptainer (and Singularity) put in every image (`/.singularity.d`, with the
/// runscript, environment scripts and `libs/`, where `--rocm` and `--nv` bind host libraries).
pub const APPTAINER_DIR: &str = "/.singularity.d";
/// The file Flatpak writes into every sandbox it runs (flatpak-metadata(5)).
pub const FLATPAK_INFO: &str = "/.flatpak-info";
/// IOMMUs the kernel drives (one entry per IOMMU unit).
pub const IOMMU_CLASS: &str = "/sys/class/iommu";
/// Automatic NUMA balancing switch.
pub const NUMA_BALANCING: &str = "/proc/sys/kernel/numa_balancing";
/// WSL's GPU paravirtualisation device.
pub const DXG: &str = "/dev/dxg";

/// Environment variables that change what ROCm sees or loads; read by name so that a snapshot
/// can record exactly these.
pub const ROCM_ENV: [&str; 20] = [
    "HSA_OVERRIDE_GFX_VERSION",
    "HSA_XNACK",
    "HSA_ENABLE_SDMA",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCM_PATH",
    "HIP_PATH",
    "LD_LIBRARY_PATH",
    "AMD_LOG_LEVEL",
    "container",
    // Layer 6: the --offload-arch list of PyTorch's extension builder and of vLLM's builds.
    "PYTORCH_ROCM_ARCH",
    // Layer 6: the one device-library directory clang reads when it is set.
    "HIP_DEVICE_LIB_PATH",
    // Layers 7 and 8: where Python environments and tools are looked for.
    "PATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
    "HOME",
    // WSL: whether ROCr looks for /dev/dxg and loads librocdxg (facts/wsl.rs).
    "HSA_ENABLE_DXG_DETECTION",
];

/// One modprobe directive that keeps amdgpu from loading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blacklist {
    /// The file.
    pub path: String,
    /// The line, trimmed.
    pub line: String,
}

/// The platform facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlatformFacts {
    /// `/proc/cmdline`; `None` when not captured.
    pub cmdline: Option<String>,
    /// modprobe.d lines that blacklist amdgpu.
    pub blacklists: Vec<Blacklist>,
    /// Secure Boot on/off; `None` when unknown (no EFI variable readable).
    pub secure_boot: Option<bool>,
    /// Whether the machine booted through EFI; `None` when `/sys/firmware` was not captured.
    pub efi: Option<bool>,
    /// Container markers found.
    pub container_markers: BTreeMap<String, String>,
    /// WSL markers found.
    pub wsl_markers: BTreeMap<String, String>,
    /// The ROCm-steering environment variables that are set.
    pub env: BTreeMap<String, String>,
    /// Whether an IOMMU is active; `None` when `/sys/class/iommu` was not captured.
    pub iommu: Option<bool>,
    /// `kernel.numa_balancing`; `None` when not captured.
    pub numa_balancing: Option<u32>,
}

impl Collect for PlatformFacts {
    type Needs<'a> = ();
    type Output = Self;

    /// Reads everything above through the source.
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let host = source.host();
        let cmdline = optional(root.read_value(CMDLINE), problems);
        let mut blacklists = Vec::new();
        for dir in MODPROBE_DIRS {
            let Some(names) = optional(root.read_dir(dir), problems) else {
                continue;
            };
            for name in names.iter().filter(|n| n.ends_with(".conf")) {
                let path = format!("{dir}/{name}");
                let Some(text) = optional(root.read_text(&path), problems) else {
                    continue;
                };
                blacklists.extend(blacklist_lines(&text).map(|line| Blacklist {
                    path: path.clone(),
                    line,
                }));
            }
        }
        let efi = root.exists("/sys/firmware").then(|| root.exists(EFI_DIR));
        let secure_boot = optional(root.read(SECURE_BOOT_VAR), problems)
            .and_then(|bytes| bytes.get(4).map(|b| *b == 1));
        let mut container_markers: BTreeMap<String, String> = CONTAINER_MARKERS
            .iter()
            .filter(|p| root.exists(p))
            .map(|p| ((*p).to_owned(), PRESENT.to_owned()))
            .collect();
        let mut env: BTreeMap<String, String> = ROCM_ENV
            .iter()
            .filter_map(|name| host.env(name).map(|v| ((*name).to_owned(), v)))
            .collect();
        // The per-node overrides are a pattern: read by name, each node id up to a bound, so
        // that a snapshot records exactly these (names libhsakmt never builds are not read).
        env.extend(
            (0..crate::target::PER_NODE_OVERRIDE_MAX).filter_map(|node| {
                let name = crate::target::per_node_override_name(node);
                host.env(&name).map(|v| (name, v))
            }),
        );
        if let Some(engine) = env.get("container") {
            container_markers.insert("env:container".to_owned(), engine.clone());
        }
        let mut wsl_markers = BTreeMap::new();
        if host.device(DXG).is_some() {
            wsl_markers.insert(format!("device:{DXG}"), PRESENT.to_owned());
        }
        if let Some(v) = optional(root.read_value(PROC_VERSION), problems) {
            // The kernel release names WSL (`5.15.167.4-microsoft-standard-WSL2`); the rest of
            // the line is the builder's compiler and date.
            let release = v
                .split_whitespace()
                .find(|w| w.to_ascii_lowercase().contains("microsoft"));
            if let Some(release) = release {
                wsl_markers.insert(PROC_VERSION.to_owned(), release.to_owned());
            }
        }
        let iommu = optional(root.read_dir(IOMMU_CLASS), problems).map(|e| !e.is_empty());
        let numa_balancing =
            optional(root.read_value(NUMA_BALANCING), problems).and_then(|v| v.parse().ok());
        Self {
            iommu,
            numa_balancing,
            cmdline,
            blacklists,
            secure_boot,
            efi,
            container_markers,
            wsl_markers,
            env,
        }
    }
}

impl PlatformFacts {
    /// Kernel command-line words (`nomodeset`, `amdgpu.modeset=0`, `modprobe.blacklist=…`).
    pub fn cmdline_words(&self) -> impl Iterator<Item = &str> {
        self.cmdline.iter().flat_map(|c| c.split_whitespace())
    }
}

/// modprobe directives that stop amdgpu loading: `blacklist amdgpu` (for alias-based loading)
/// and `install amdgpu /bin/false` (or `/bin/true`) for any loading.
fn blacklist_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().map(str::trim).filter_map(|line| {
        let words: Vec<&str> = line.split('#').next()?.split_whitespace().collect();
        let hit = match words.as_slice() {
            ["blacklist", "amdgpu"] => true,
            ["install", "amdgpu", cmd, ..] => cmd.ends_with("/false") || cmd.ends_with("/true"),
            _ => false,
        };
        hit.then(|| line.to_owned())
    })
}

/// A marker's value when the marker is a file or device that exists.
pub const PRESENT: &str = "present";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_blacklist_directives_only_for_amdgpu() {
        let text = "# blacklist amdgpu\nblacklist nouveau\nblacklist amdgpu\n\
                    install amdgpu /bin/false\ninstall amdgpu /sbin/modprobe --ignore-install amdgpu\n\
                    options amdgpu noretry=0\n  blacklist   amdgpu   # fglrx leftover\n";
        let hits: Vec<String> = blacklist_lines(text).collect();
        assert_eq!(
            hits,
            [
                "blacklist amdgpu",
                "install amdgpu /bin/false",
                "blacklist   amdgpu   # fglrx leftover"
            ]
        );
    }
}
