//! APU memory ceilings (issue 16, item 6): an integrated GPU may use only as much system memory
//! as TTM allows (`ttm.pages_limit`, half of RAM by default), which is what ROCm reports and what
//! a model must fit in — "ROCm only seeing 62.2GB" on a 128 GB Strix Halo (ROCm/ROCm#5595).

use crate::facts::Facts;
use crate::facts::agent::{Agent, Inventory};
use crate::facts::gtt::{GTTSIZE, PAGE};
use crate::facts::platform::CMDLINE;
use crate::facts::topology::TOPOLOGY_DIR;
use crate::finding::{APU_MEMORY_CAPPED, Evidence, Finding, Status, Subject};
use crate::msg;

/// Memory below this share of system RAM (3/4) is "capped well below" it.
const CAPPED_SHARE: (u64, u64) = (3, 4);
/// What the remedy leaves to the system when it raises the limit.
const LEFT_FOR_SYSTEM: u64 = 8 << 30;
/// 4 KiB pages per GiB.
const PAGES_PER_GIB: u64 = (1 << 30) / PAGE;

/// An integrated GPU whose usable memory TTM's limit caps well below system RAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cap {
    /// What KFD gives the GPU (its memory banks), bytes: what ROCm reports.
    pub seen: u64,
    /// System RAM (the CPU nodes' memory banks), bytes.
    pub ram: u64,
    /// TTM's limit, bytes.
    pub limit: u64,
    /// The parameter that sets it (`ttm.pages_limit`, `amdttm.pages_limit`).
    pub parameter: String,
}

/// The cap on `agent`, when it is an integrated GPU whose memory TTM's limit holds below
/// three quarters of system RAM. `None` when TTM's parameters were not captured.
pub fn cap(f: &Facts, inv: &Inventory, agent: &Agent) -> Option<Cap> {
    if agent.integrated != Some(true) {
        return None;
    }
    let seen = agent.memory_bytes.filter(|m| *m > 0)?;
    let limit = f.gtt.limit_bytes()?;
    let ram: u64 = inv
        .agents
        .iter()
        .filter(|a| a.gfx.is_none())
        .filter_map(|a| a.memory_bytes)
        .sum();
    let capped = ram > 0
        && limit.saturating_mul(CAPPED_SHARE.1) < ram.saturating_mul(CAPPED_SHARE.0)
        // What KFD gives is what TTM allows (a larger bank is not TTM's doing).
        && seen <= limit.saturating_add(limit / 64);
    let module = f.gtt.module.as_deref()?.rsplit('/').next()?;
    capped.then(|| Cap {
        seen,
        ram,
        limit,
        parameter: format!("{module}.pages_limit"),
    })
}

fn gib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 30) as f64)
}

/// Kernel command-line words that try to size GTT: `amdgpu.gttsize=`, misspellings such as
/// `amdgpu.gtt_size=` (which amdgpu ignores: "unknown parameter"), `ttm.`/`amdttm.` limits.
fn sizing_words(f: &Facts) -> Vec<&str> {
    f.platform
        .cmdline_words()
        .filter(|w| {
            let (key, _) = w.split_once('=').unwrap_or((w, ""));
            key.starts_with("amdgpu.gtt")
                || key.ends_with("ttm.pages_limit")
                || key.ends_with("ttm.page_pool_size")
        })
        .collect()
}

/// One finding per capped integrated GPU.
pub fn memory_capped(f: &Facts, inv: &Inventory) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in &inv.gpus {
        let Some(agent) = inv.agents.iter().find(|a| a.node == g.nodes[0]) else {
            continue;
        };
        let Some(c) = cap(f, inv, agent) else {
            continue;
        };
        let name = inv.gpu_name(g).to_string();
        let module = f.gtt.module.clone().unwrap_or_default();
        let pages = f.gtt.pages_limit.unwrap_or_default();
        // The kernel's default: half of RAM (ttm_global_init), within a page per GiB.
        let default = c.limit.abs_diff(c.ram / 2) <= c.ram / 512;
        let words = sizing_words(f);
        let gttsize_above = f
            .gtt
            .gttsize_mib
            .is_some_and(|m| m > 0 && (m as u64) << 20 > c.limit);
        // Someone tried to raise it and it did not take: a warning, not information.
        let tried = !words.is_empty() || gttsize_above;
        let mut summary = msg!(
            "hardware.apu-memory-capped",
            gpu = name,
            seen = gib(c.seen),
            ram = gib(c.ram),
            parameter = c.parameter,
            limit = gib(c.limit)
        );
        if default {
            summary.push_str(&msg!("hardware.apu-memory-capped-default"));
        }
        if tried {
            summary.push_str(&msg!(
                "hardware.apu-memory-capped-tried",
                parameter = c.parameter
            ));
        }
        let target_gib = c.ram.saturating_sub(LEFT_FOR_SYSTEM) >> 30;
        let new_pages = target_gib * PAGES_PER_GIB;
        let prefix = c.parameter.trim_end_matches(".pages_limit");
        let limit_word = format!("{prefix}.pages_limit={new_pages}");
        let pool_word = format!("{prefix}.page_pool_size={new_pages}");
        let mut finding = APU_MEMORY_CAPPED
            .finding_with(if tried { Status::Warn } else { Status::Info }, summary)
            .with(Evidence::new(
                format!("{TOPOLOGY_DIR}/nodes/{}/mem_banks", agent.node),
                c.seen.to_string(),
            ))
            .with(Evidence::new(
                format!("{module}/parameters/pages_limit"),
                msg!("hardware.apu-memory-pages", pages, bytes = c.limit),
            ))
            .with_all(f.gtt.page_pool_size.map(|p| {
                Evidence::new(format!("{module}/parameters/page_pool_size"), p.to_string())
            }))
            .with_all(
                f.gtt
                    .gttsize_mib
                    .map(|m| Evidence::new(GTTSIZE, m.to_string())),
            )
            .with_all(
                inv.agents
                    .iter()
                    .filter(|a| a.gfx.is_none())
                    .filter_map(|a| a.memory_bytes.map(|m| (a.node, m)))
                    .map(|(node, m)| {
                        Evidence::new(
                            format!("{TOPOLOGY_DIR}/nodes/{node}/mem_banks"),
                            msg!("hardware.apu-memory-ram", bytes = m),
                        )
                    }),
            );
        for w in &words {
            let unknown = w.starts_with("amdgpu.gtt") && !w.starts_with("amdgpu.gttsize=");
            finding = finding.with(Evidence::new(
                CMDLINE,
                if unknown {
                    msg!("hardware.apu-memory-unknown-parameter", word = *w)
                } else {
                    (*w).to_owned()
                },
            ));
        }
        let mut steps =
            crate::checks::driver::kernel_parameter_steps(f, true, &[&limit_word, &pool_word]);
        steps.push(crate::checks::driver::reboot(&limit_word));
        out.push(
            finding
                .remedy(msg!(
                    "hardware.apu-memory-capped-remedy",
                    parameter = c.parameter,
                    gib = target_gib,
                    pages = new_pages
                ))
                .with_steps(steps)
                .about(Subject::gpu(g.index, g.pci_address.clone())),
        );
    }
    out
}

/// BARs whose lines in `resource` are all zero: the kernel could not place them (`BAR 0: no
/// space for [mem size … 64bit pref]`, `failed to assign`) and reset them. BAR 0 is the VRAM
/// aperture and BAR 2 the doorbells of every amdgpu GPU since GCN; BAR 1 and 3 are the upper
/// halves of those 64-bit BARs and are always zero.
const VRAM_BAR: usize = 0;
/// The doorbell BAR.
const DOORBELL_BAR: usize = 2;

/// A GPU that no driver bound whose VRAM or doorbell BAR is unassigned: amdgpu's probe fails
/// (`probe of … failed with error -12`) when it cannot map them.
pub fn bars_unassigned(f: &Facts) -> Vec<Finding> {
    use crate::facts::pci::PCI_DEVICES;
    use crate::finding::{Action, BAR_UNASSIGNED, RemedyStep};
    let Some(pci) = &f.pci else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in pci.gpus.iter().filter(|g| g.driver.is_none()) {
        let Some(resources) = f
            .pcie
            .gpus
            .iter()
            .find(|p| p.address == g.address)
            .and_then(|p| p.resources.as_ref())
        else {
            continue;
        };
        let zero = |i: usize| resources.get(i).is_some_and(|r| *r == [0, 0, 0]);
        let unassigned: Vec<usize> = [VRAM_BAR, DOORBELL_BAR]
            .into_iter()
            .filter(|i| zero(*i))
            .collect();
        if unassigned.is_empty() {
            continue;
        }
        let path = format!("{PCI_DEVICES}/{}/resource", g.address);
        let bars: Vec<String> = unassigned.iter().map(|i| format!("BAR {i}")).collect();
        out.push(
            BAR_UNASSIGNED
                .finding(msg!(
                    "hardware.bar-unassigned",
                    address = g.address,
                    bars = crate::i18n::list(&bars)
                ))
                .with_all(resources.iter().take(6).enumerate().map(|(i, r)| {
                    Evidence::new(
                        format!("{path} (BAR {i})"),
                        format!("0x{:016x} 0x{:016x} 0x{:016x}", r[0], r[1], r[2]),
                    )
                }))
                .remedy(msg!("hardware.bar-unassigned-remedy"))
                .step(RemedyStep::say(
                    Action::FirmwareSetting,
                    g.address.clone(),
                    msg!("hardware.step-above-4g"),
                ))
                .step(RemedyStep::run(
                    Action::ReadLog,
                    "BAR",
                    "sudo dmesg | grep -i 'BAR'",
                    msg!("hardware.step-read-bar-log"),
                )),
        );
    }
    out
}
