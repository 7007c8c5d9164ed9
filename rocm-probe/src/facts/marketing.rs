//! Marketing names from libdrm's `amdgpu.ids` (`DEVICE_ID,\tREVISION,\tNAME`), read inside the
//! root so that a fixture can ship the lines it needs.

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// Where libdrm installs the table.
pub const AMDGPU_IDS: &str = "/usr/share/libdrm/amdgpu.ids";

/// One line of `amdgpu.ids`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdsEntry {
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision id.
    pub revision: u32,
    /// Product name.
    pub name: String,
}

/// The entries of `amdgpu.ids` for the device ids present on the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MarketingNames {
    /// Matching entries, in file order.
    pub entries: Vec<IdsEntry>,
}

impl MarketingNames {
    /// Parses `amdgpu.ids` text, keeping only the entries for `device_ids`. Malformed lines are
    /// skipped (libdrm does the same).
    pub fn parse(text: &str, device_ids: &[u32]) -> Self {
        let entries = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|line| {
                let mut parts = line.splitn(3, ',');
                let device_id = u32::from_str_radix(parts.next()?.trim(), 16).ok()?;
                let revision = u32::from_str_radix(parts.next()?.trim(), 16).ok()?;
                let name = parts.next()?.trim();
                (device_ids.contains(&device_id) && !name.is_empty()).then(|| IdsEntry {
                    device_id,
                    revision,
                    name: name.to_owned(),
                })
            })
            .collect();
        Self { entries }
    }

    /// The name for a device id and PCI revision, as libdrm's `amdgpu_get_marketing_name`
    /// matches it. Without a revision, or when no line has it, the device id alone decides
    /// when all its lines agree (MI300X, MI210: one name whatever the revision) — the
    /// `capability` ASIC revision is the chip's internal one, not the PCI revision, and
    /// matches no line.
    pub fn lookup(&self, device_id: u32, revision: Option<u32>) -> Option<&str> {
        let mut same_device = self.entries.iter().filter(|e| e.device_id == device_id);
        if let Some(hit) = same_device.clone().find(|e| Some(e.revision) == revision) {
            return Some(&hit.name);
        }
        let first = same_device.next()?;
        same_device
            .all(|e| e.name == first.name)
            .then_some(first.name.as_str())
    }
}

impl Collect for MarketingNames {
    /// The device ids present (the GPU nodes' `device_id`s).
    type Needs<'a> = &'a [u32];
    type Output = Self;

    /// Reads the table inside the root. A missing file is an empty table (libdrm not installed).
    fn collect(source: &Source, device_ids: &[u32], problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        if device_ids.is_empty() {
            return Self::default();
        }
        optional(root.read_text(AMDGPU_IDS), problems)
            .map(|text| Self::parse(&text, device_ids))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &str = "# List of AMDGPU IDs\n#\n1.0.0\n\
        6860,\t00,\tAMD Radeon Instinct MI25\n\
        6860,\t03,\tAMD Radeon Pro V340\n\
        740F,\t02,\tAMD Instinct MI210\n\
        73BF,\tC0,\tAMD Radeon RX 6900 XT, 6950 XT\n\
        garbage line\n\
        ZZZZ,\t00,\tNope\n";

    #[test]
    fn exact_device_and_revision_match() {
        let names = MarketingNames::parse(IDS, &[0x6860, 0x740f, 0x73bf]);
        assert_eq!(names.entries.len(), 4);
        assert_eq!(names.lookup(0x6860, Some(3)), Some("AMD Radeon Pro V340"));
        assert_eq!(names.lookup(0x740f, Some(2)), Some("AMD Instinct MI210"));
        assert_eq!(
            names.lookup(0x73bf, Some(0xc0)),
            Some("AMD Radeon RX 6900 XT, 6950 XT")
        );
        // Ambiguous without the right revision: several names for 0x6860.
        assert_eq!(names.lookup(0x6860, None), None);
        assert_eq!(names.lookup(0x6860, Some(0x42)), None);
        // Unambiguous: one name for the device id, whatever the revision.
        assert_eq!(names.lookup(0x740f, None), Some("AMD Instinct MI210"));
        assert_eq!(names.lookup(0x740f, Some(1)), Some("AMD Instinct MI210"));
        assert_eq!(names.lookup(0x1234, None), None);
    }

    #[test]
    fn only_present_devices_are_kept() {
        let names = MarketingNames::parse(IDS, &[0x740f]);
        assert_eq!(names.entries.len(), 1);
    }
}
