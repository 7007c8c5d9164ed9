//! PCI functions from `/sys/bus/pci/devices`: every function's vendor, and for AMD GPUs the
//! class, driver binding, link and power state.

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// Where PCI functions are listed.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";

/// AMD's PCI vendor id.
pub const VENDOR_AMD: u32 = 0x1002;

/// An AMD GPU (or accelerator) on the PCI bus.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PciGpu {
    /// `DDDD:BB:DD.F`.
    pub address: String,
    /// PCI device id.
    pub device: Option<u32>,
    /// PCI class (`0x030000` display VGA, `0x038000` display other, `0x120000` accelerator).
    pub class: Option<u32>,
    /// PCI revision id.
    pub revision: Option<u32>,
    /// The bound driver (`amdgpu`, `radeon`, `vfio-pci`); `None` when unbound.
    pub driver: Option<String>,
    /// `current_link_speed`, as sysfs prints it (`16.0 GT/s PCIe`).
    pub current_link_speed: Option<String>,
    /// `max_link_speed`.
    pub max_link_speed: Option<String>,
    /// `current_link_width` (lanes).
    pub current_link_width: Option<u32>,
    /// `max_link_width`.
    pub max_link_width: Option<u32>,
    /// `power/runtime_status` (`active`, `suspended`, …).
    pub runtime_status: Option<String>,
    /// `boot_vga`: the firmware's console GPU (usually the iGPU on desktops).
    pub boot_vga: Option<bool>,
}

/// What the PCI bus shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PciFacts {
    /// Number of PCI functions of any vendor.
    pub functions: usize,
    /// Their addresses, as listed (for the PCIe collector, which must not list the bus again).
    #[serde(skip)]
    pub addresses: Vec<String>,
    /// AMD display/accelerator functions, by address.
    pub gpus: Vec<PciGpu>,
}

/// Whether a PCI class is a display controller (0x03) or processing accelerator (0x12).
pub fn is_gpu_class(class: u32) -> bool {
    matches!(class >> 16, 0x03 | 0x12)
}

fn hex(text: &str) -> Option<u32> {
    u32::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
}

impl Collect for PciFacts {
    type Needs<'a> = ();
    type Output = Option<Self>;

    /// Reads the bus; `None` when `/sys/bus/pci/devices` does not exist (a fixture that did not
    /// capture it).
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Option<Self> {
        let root = source.root();
        let names = optional(root.read_dir(PCI_DEVICES), problems)?;
        let mut facts = Self {
            functions: names.len(),
            addresses: names.clone(),
            gpus: Vec::new(),
        };
        for address in names {
            let dir = format!("{PCI_DEVICES}/{address}");
            let value = |name: &str, problems: &mut Vec<Problem>| {
                optional(root.read_value(&format!("{dir}/{name}")), problems)
            };
            if value("vendor", problems).as_deref().and_then(hex) != Some(VENDOR_AMD) {
                continue;
            }
            let class = value("class", problems).as_deref().and_then(hex);
            if !class.is_some_and(is_gpu_class) {
                continue;
            }
            let driver = optional(root.read_link(&format!("{dir}/driver")), problems)
                .and_then(|t| t.rsplit('/').next().map(str::to_owned));
            let number = |name: &str, problems: &mut Vec<Problem>| {
                value(name, problems).and_then(|v| v.parse().ok())
            };
            facts.gpus.push(PciGpu {
                device: value("device", problems).as_deref().and_then(hex),
                revision: value("revision", problems).as_deref().and_then(hex),
                driver,
                current_link_speed: value("current_link_speed", problems),
                max_link_speed: value("max_link_speed", problems),
                current_link_width: number("current_link_width", problems),
                max_link_width: number("max_link_width", problems),
                runtime_status: value("power/runtime_status", problems),
                boot_vga: value("boot_vga", problems).map(|v| v == "1"),
                class,
                address,
            });
        }
        Some(facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_classes() {
        assert!(is_gpu_class(0x030000));
        assert!(is_gpu_class(0x038000));
        assert!(is_gpu_class(0x120000));
        assert!(!is_gpu_class(0x040300)); // HDMI audio of the same card
    }

    #[test]
    fn reads_amd_gpus_and_counts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let dev = |addr: &str, files: &[(&str, &str)]| {
            let d = dir.path().join("sys/bus/pci/devices").join(addr);
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in files {
                std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
                std::fs::write(d.join(f), v).unwrap();
            }
        };
        dev(
            "0000:00:00.0",
            &[("vendor", "0x8086\n"), ("class", "0x060000\n")],
        );
        dev(
            "0000:03:00.1",
            &[("vendor", "0x1002\n"), ("class", "0x040300\n")],
        );
        dev(
            "0000:03:00.0",
            &[
                ("vendor", "0x1002\n"),
                ("class", "0x030000\n"),
                ("device", "0x744c\n"),
                ("current_link_width", "8\n"),
                ("max_link_width", "16\n"),
                ("power/runtime_status", "suspended\n"),
            ],
        );
        std::fs::create_dir_all(dir.path().join("sys/bus/pci/drivers/amdgpu")).unwrap();
        std::os::unix::fs::symlink(
            "../../../bus/pci/drivers/amdgpu",
            dir.path().join("sys/bus/pci/devices/0000:03:00.0/driver"),
        )
        .unwrap();
        let mut problems = Vec::new();
        let facts =
            PciFacts::collect(&Source::fixture(dir.path()).unwrap(), (), &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.functions, 3);
        assert_eq!(facts.gpus.len(), 1);
        let g = &facts.gpus[0];
        assert_eq!(g.device, Some(0x744c));
        assert_eq!(g.driver.as_deref(), Some("amdgpu"));
        assert_eq!(
            (g.current_link_width, g.max_link_width),
            (Some(8), Some(16))
        );
        assert_eq!(g.runtime_status.as_deref(), Some("suspended"));
    }

    #[test]
    fn absent_bus_is_not_captured() {
        let dir = tempfile::tempdir().unwrap();
        // A machine tree (an empty fixture.toml) with nothing else in it.
        std::fs::write(dir.path().join("fixture.toml"), "").unwrap();
        let mut problems = Vec::new();
        assert_eq!(
            PciFacts::collect(&Source::fixture(dir.path()).unwrap(), (), &mut problems),
            None
        );
    }
}
