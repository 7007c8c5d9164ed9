//! The PCIe side of AMD GPUs beyond their own identity (issue 16, items 5 and 8): the BARs the
//! kernel assigned (`resource`), and the bridges between GPUs (found by their bus ranges,
//! `secondary_bus_number`/`subordinate_bus_number`) with their ACS control, read from each
//! bridge's configuration space (`config`; beyond the first 64 bytes only root may read it).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::pci::{PCI_DEVICES, PciFacts};
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// The ACS extended capability's id (PCIe base specification, "ACS Extended Capability").
pub const ACS_CAPABILITY: u16 = 0x000d;
/// ACS control: P2P Request Redirect.
pub const ACS_REQUEST_REDIRECT: u16 = 1 << 2;
/// ACS control: P2P Completion Redirect.
pub const ACS_COMPLETION_REDIRECT: u16 = 1 << 3;
/// Where extended capabilities start; a `config` no longer than this holds none.
const EXTENDED_START: usize = 0x100;

/// One `resource` line: start, end, flags.
pub type Resource = [u64; 3];

/// An AMD GPU's PCI function: its BARs and the bridges above it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuPcie {
    /// `DDDD:BB:DD.F`.
    pub address: String,
    /// `resource`, one entry per line (BARs 0–5, the ROM, …); `None` when not captured.
    pub resources: Option<Vec<Resource>>,
    /// The bridges above it, root port first (bridges whose bus range holds its bus); read
    /// only with two or more AMD GPUs, empty otherwise or when not captured.
    pub bridges: Vec<String>,
}

/// What a bridge's `config` says about ACS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Acs {
    /// The file was not captured.
    NotCaptured,
    /// Only the first `bytes` bytes could be read (the kernel gives non-root readers 64): the
    /// extended capabilities are not visible.
    Unreadable {
        /// Bytes read.
        bytes: usize,
    },
    /// No ACS capability.
    Absent,
    /// The ACS control register.
    Control {
        /// Its value.
        control: u16,
    },
}

impl Acs {
    /// Whether P2P requests or completions are redirected upstream.
    pub fn redirects(self) -> bool {
        matches!(self, Acs::Control { control } if control & (ACS_REQUEST_REDIRECT | ACS_COMPLETION_REDIRECT) != 0)
    }
}

/// The PCIe facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PcieFacts {
    /// Per AMD GPU function, in the PCI facts' order.
    pub gpus: Vec<GpuPcie>,
    /// ACS of every bridge above two or more AMD GPUs' paths, by address; read only on machines
    /// with at least two AMD GPUs.
    pub acs: BTreeMap<String, Acs>,
}

/// Parses `resource`: lines of three hexadecimal numbers.
pub fn parse_resources(text: &str) -> Option<Vec<Resource>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut words = line
                .split_whitespace()
                .map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok());
            Some([words.next()??, words.next()??, words.next()??])
        })
        .collect()
}

/// Finds the ACS control register in a configuration space.
pub fn parse_acs(config: &[u8]) -> Acs {
    if config.len() <= EXTENDED_START {
        return Acs::Unreadable {
            bytes: config.len(),
        };
    }
    let dword = |at: usize| {
        config
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut at = EXTENDED_START;
    // A list longer than the space could hold is malformed: stop.
    for _ in 0..(4096 / 4) {
        let Some(header) = dword(at) else {
            return Acs::Absent;
        };
        if header == 0 || header == u32::MAX {
            return Acs::Absent;
        }
        if (header & 0xffff) as u16 == ACS_CAPABILITY {
            return match config.get(at + 6..at + 8) {
                Some(b) => Acs::Control {
                    control: u16::from_le_bytes([b[0], b[1]]),
                },
                None => Acs::Absent,
            };
        }
        let next = ((header >> 20) & 0xffc) as usize;
        if next < EXTENDED_START {
            return Acs::Absent;
        }
        at = next;
    }
    Acs::Absent
}

impl Collect for PcieFacts {
    type Needs<'a> = Option<&'a PciFacts>;
    type Output = Self;

    /// Reads each AMD GPU's `resource`, and with two or more GPUs the bridges' bus ranges and
    /// the `config` of the bridges above them.
    fn collect(source: &Source, pci: Option<&PciFacts>, problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let Some(pci) = pci else {
            return Self::default();
        };
        let mut facts = Self::default();
        for g in &pci.gpus {
            let dir = format!("{PCI_DEVICES}/{}", g.address);
            let resources = optional(root.read_text(&format!("{dir}/resource")), problems)
                .and_then(|t| {
                    let parsed = parse_resources(&t);
                    if parsed.is_none() {
                        problems.push(Problem::new(
                            format!("{dir}/resource"),
                            crate::text!("facts.not-a-number", text = format!("{t:?}")),
                        ));
                    }
                    parsed
                });
            facts.gpus.push(GpuPcie {
                address: g.address.clone(),
                resources,
                bridges: Vec::new(),
            });
        }
        if facts.gpus.len() >= 2 {
            // The bridges above each GPU: those of its domain whose bus range holds its bus,
            // from `secondary_bus_number` / `subordinate_bus_number` (bridges only; an endpoint
            // has neither). Outermost (lowest secondary bus) first.
            let mut ranges: Vec<(String, u32, u32)> = Vec::new();
            for name in pci.addresses.iter().cloned() {
                let dir = format!("{PCI_DEVICES}/{name}");
                let number = |file: &str, problems: &mut Vec<Problem>| {
                    optional(root.read_value(&format!("{dir}/{file}")), problems)
                        .and_then(|v| v.parse::<u32>().ok())
                };
                let Some(secondary) = number("secondary_bus_number", problems) else {
                    continue;
                };
                if let Some(subordinate) = number("subordinate_bus_number", problems) {
                    ranges.push((name, secondary, subordinate));
                }
            }
            ranges.sort_by_key(|(_, secondary, _)| *secondary);
            for g in &mut facts.gpus {
                let (Some(domain), Some(bus)) = (
                    g.address.get(..4),
                    g.address
                        .get(5..7)
                        .and_then(|b| u32::from_str_radix(b, 16).ok()),
                ) else {
                    continue;
                };
                g.bridges = ranges
                    .iter()
                    .filter(|(b, lo, hi)| b.starts_with(domain) && (*lo..=*hi).contains(&bus))
                    .map(|(b, _, _)| b.clone())
                    .collect();
            }
            let bridges: std::collections::BTreeSet<&String> =
                facts.gpus.iter().flat_map(|g| &g.bridges).collect();
            for b in bridges {
                let path = format!("{PCI_DEVICES}/{b}/config");
                let acs = match root.read(&path) {
                    Err(e) if e.is_not_found() => Acs::NotCaptured,
                    result => optional(result, problems)
                        .map_or(Acs::NotCaptured, |bytes| parse_acs(&bytes)),
                };
                facts.acs.insert(b.clone(), acs);
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with_acs(control: u16) -> Vec<u8> {
        let mut c = vec![0u8; 4096];
        // AER at 0x100 pointing to ACS at 0x150.
        c[0x100..0x104].copy_from_slice(&(0x0001u32 | (1 << 16) | (0x150 << 20)).to_le_bytes());
        c[0x150..0x154].copy_from_slice(&(0x000du32 | (1 << 16)).to_le_bytes());
        c[0x156..0x158].copy_from_slice(&control.to_le_bytes());
        c
    }

    #[test]
    fn finds_acs_control_through_the_list() {
        assert_eq!(
            parse_acs(&config_with_acs(0x001d)),
            Acs::Control { control: 0x1d }
        );
        assert!(parse_acs(&config_with_acs(0x001d)).redirects());
        assert!(!parse_acs(&config_with_acs(0x0011)).redirects());
        // A non-root reader gets 64 bytes.
        assert_eq!(parse_acs(&[0u8; 64]), Acs::Unreadable { bytes: 64 });
        // No extended capability at all.
        assert_eq!(parse_acs(&[0u8; 4096]), Acs::Absent);
        // A list that points back to itself ends.
        let mut looped = vec![0u8; 4096];
        looped[0x100..0x104].copy_from_slice(&(0x0001u32 | (0x100 << 20)).to_le_bytes());
        assert_eq!(parse_acs(&looped), Acs::Absent);
    }

    #[test]
    fn parses_resource_lines() {
        let text = "0x0000007800000000 0x0000007fffffffff 0x000000000014220c\n\
                    0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
        let r = parse_resources(text).unwrap();
        assert_eq!(r[0], [0x78_0000_0000, 0x7f_ffff_ffff, 0x14220c]);
        assert_eq!(r[1], [0, 0, 0]);
        assert_eq!(parse_resources("0x1 zz 0x2\n"), None);
    }
}
