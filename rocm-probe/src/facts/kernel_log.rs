//! The kernel log as data (issue 19, item 2): amdgpu's and KFD's lines of this boot parsed into
//! typed events — what happened ([`Kind`], from the signatures of `rocm-probe/data/kernel_log.toml`,
//! each citing its source), to which GPU (the PCI address of the line's `amdgpu 0000:03:00.0:`
//! prefix, or the PCI id KFD names), the numbers in it (error code, firmware file, ring, MES
//! message, process and pid) and the line itself as evidence — and who may read the log.

#[allow(dead_code)] // the build script uses all of it, the crate only its parser in tests
mod data;

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::fixture::Identity;
use crate::source::kernel_log::{self, DMESG_RESTRICT, LogSource, Refusal};
use crate::source::problem::Problem;

/// What a line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The driver core gave the device up: `amdgpu: probe of … failed with error N`.
    ProbeFailed,
    /// `Fatal error during GPU init`.
    InitFailed,
    /// An IP block's initialisation failed (`sw_init of IP block <gmc_v8_0> failed -2`).
    IpInitFailed,
    /// The IP discovery table, which the GPU's own firmware leaves in VRAM at power-on and which
    /// tells the driver what blocks the GPU has, was missing or corrupt.
    DiscoveryFailed,
    /// A firmware file could not be loaded.
    FirmwareLoadFailed,
    /// KFD skipped the GPU: the PCIe path rejects atomics.
    KfdAtomicsRejected,
    /// A ring's job timed out (the GPU hung).
    RingTimeout,
    /// The driver reset the GPU.
    GpuReset,
    /// The MES firmware did not answer a queue request.
    MesNoResponse,
    /// A GPU page fault, with the process when the log names it.
    PageFault,
    /// An uncorrectable hardware (RAS) error was signalled.
    RasUncorrectable,
    /// The PSP, the security processor that verifies and loads the GPU's firmware, refused a
    /// command or a firmware, or could not be reached.
    PspFailed,
    /// The SMU, the GPU's power-management controller, did not answer or could not be set up.
    SmuFailed,
    /// The running driver's KFD has no support for the GPU.
    KfdNotSupported,
    /// KFD failed to initialise a GPU it supports.
    KfdAddFailed,
    /// A kernel `WARNING` in amdgpu's sources.
    KernelWarning,
    /// A BUG or oops whose faulting instruction is in amdgpu (the `RIP:` line).
    KernelOops,
}

/// One signature row (`data/kernel_log.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// What a matching line means.
    pub kind: Kind,
    /// Substrings a line must hold, in order.
    pub all: &'static [&'static str],
    /// Where the meaning is documented.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/kernel_log.rs"));

/// The signature a line matches, first in the file's order.
pub fn signature(line: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|s| holds_in_order(line, s.all))
}

fn holds_in_order(line: &str, parts: &[&str]) -> bool {
    let mut rest = line;
    parts.iter().all(|p| match rest.find(p) {
        Some(at) => {
            rest = &rest[at + p.len()..];
            true
        }
        None => false,
    })
}

/// Whether a line is kept from the log: it matches a signature, it is amdgpu's line naming
/// a process (a page fault's second line), or it opens a BUG or oops or says where one stopped
/// (`RIP:`: in amdgpu or not).
pub fn wanted(line: &str) -> bool {
    signature(line).is_some()
        || (line.starts_with("amdgpu ") && process(line).is_some())
        || oops_header(line)
        || line.starts_with("RIP: ")
}

/// The first line of a BUG or oops report (`BUG: kernel NULL pointer dereference, …`,
/// `Oops: 0000 [#1] SMP`, `general protection fault, …`, `kernel BUG at …`), which names no
/// module.
fn oops_header(line: &str) -> bool {
    [
        "BUG: ",
        "Oops: ",
        "general protection fault",
        "kernel BUG at ",
    ]
    .iter()
    .any(|h| line.starts_with(h))
}

/// One event of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// What happened.
    pub kind: Kind,
    /// The GPU's PCI address from the line (`0000:03:00.0`), when it names one.
    pub pci_address: Option<String>,
    /// The PCI vendor and device id, when the line names the GPU that way (KFD).
    pub pci_id: Option<(u16, u16)>,
    /// The error code (`-12`), when the line has one.
    pub error: Option<i64>,
    /// The firmware file (`amdgpu/polaris12_mc.bin`).
    pub firmware: Option<String>,
    /// The IP block (`gmc_v8_0`).
    pub ip_block: Option<String>,
    /// The ring (`gfx_0.0.0`).
    pub ring: Option<String>,
    /// The MES message (`REMOVE_QUEUE`).
    pub mes_message: Option<String>,
    /// The RAS event (`ERREVENT_ATHUB_INTERRUPT`).
    pub ras_event: Option<String>,
    /// The firmware a refused PSP command carried (`SMC`), as the driver names it.
    pub ucode: Option<String>,
    /// The PSP command refused (`LOAD_IP_FW`).
    pub psp_command: Option<String>,
    /// The PSP's response status (`0x80000306`).
    pub psp_status: Option<String>,
    /// The function a warning or oops stopped in (`amdgpu_irq_put`).
    pub function: Option<String>,
    /// The source file and line of a warning (`drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:639`).
    pub location: Option<String>,
    /// The process the GPU worked for, as the kernel names it (at most 15 characters).
    pub process: Option<String>,
    /// Its pid.
    pub pid: Option<u32>,
    /// Microseconds since boot.
    pub usec: Option<u64>,
    /// The line(s), as evidence.
    pub lines: Vec<String>,
}

/// The kernel log and who may read it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelLogFacts {
    /// Whether the log was looked for: live always; a fixture when it holds `dev/kmsg`, a log
    /// file or `kernel.dmesg_restrict` (else it was not captured and nothing is said).
    pub captured: bool,
    /// The source read; `None` when none was readable.
    pub source: Option<LogSource>,
    /// Why each source before it (or each source) gave nothing.
    pub refused: Vec<(LogSource, Refusal)>,
    /// Lines of this boot the source held.
    pub lines_seen: usize,
    /// Whether a bound cut the read.
    pub truncated: bool,
    /// The events, in the log's order.
    pub events: Vec<Event>,
    /// `kernel.dmesg_restrict`, when readable.
    pub dmesg_restrict: Option<bool>,
    /// Whether the probe holds CAP_SYSLOG (`CapEff` of `/proc/self/status`), when readable.
    pub cap_syslog: Option<bool>,
    /// Whether this user may read the kernel's journal entries (a member of `adm` or
    /// `systemd-journal`), when the journal was tried.
    pub journal_group: Option<bool>,
}

/// The effective capabilities of the probe's process.
pub const PROC_STATUS: &str = "/proc/self/status";
/// CAP_SYSLOG's bit (include/uapi/linux/capability.h).
const CAP_SYSLOG: u32 = 34;

/// How this user reads the kernel log, for remedies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogCommand {
    /// `dmesg`: root, CAP_SYSLOG, or `kernel.dmesg_restrict=0`.
    Dmesg,
    /// `journalctl -k -b`: a member of `adm` or `systemd-journal`.
    Journalctl,
    /// `sudo dmesg`: anyone else, or when unknown.
    SudoDmesg,
}

impl LogCommand {
    /// The command, to pipe into `grep`.
    pub fn command(self) -> &'static str {
        match self {
            Self::Dmesg => "dmesg",
            Self::Journalctl => "journalctl -k -b",
            Self::SudoDmesg => "sudo dmesg",
        }
    }
}

impl KernelLogFacts {
    /// The command that reads the log for this user.
    pub fn command(&self, identity: Option<&Identity>) -> LogCommand {
        let root = identity.is_some_and(|i| i.uid == 0);
        if root || self.cap_syslog == Some(true) || self.dmesg_restrict == Some(false) {
            LogCommand::Dmesg
        } else if self.journal_group == Some(true) {
            LogCommand::Journalctl
        } else {
            LogCommand::SudoDmesg
        }
    }
}

impl Collect for KernelLogFacts {
    /// Nothing: who may read the log is found by reading it.
    type Needs<'a> = ();
    type Output = Self;

    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Self {
        let root = source.root();
        let dmesg_restrict = match root.read_value(DMESG_RESTRICT) {
            Ok(v) => v.parse::<u8>().ok().map(|v| v != 0),
            Err(e) if e.is_not_found() => None,
            Err(e) => {
                problems.push(Problem::from(e));
                None
            }
        };
        let log = kernel_log::read(root, &|l: &str| wanted(l));
        let captured = !root.is_fixture() || log.source.is_some() || dmesg_restrict.is_some();
        if !captured {
            return Self::default();
        }
        let cap_syslog = root
            .read_text(PROC_STATUS)
            .ok()
            .and_then(|s| cap_eff(&s))
            .map(|caps| caps & (1 << CAP_SYSLOG) != 0);
        // Who may read the journal shows in reading it (adm and systemd-journal members see the
        // kernel's entries, others none); /etc/group is the device nodes' collector's to read.
        let journal_group = if log.source == Some(LogSource::Journal) {
            Some(true)
        } else if log.refused.iter().any(|(s, _)| *s == LogSource::Journal) {
            Some(false)
        } else {
            None
        };
        let texts: Vec<(String, Option<u64>)> =
            log.lines.into_iter().map(|l| (l.text, l.usec)).collect();
        Self {
            captured,
            source: log.source,
            refused: log.refused,
            lines_seen: log.seen,
            truncated: log.truncated,
            events: parse(&texts),
            dmesg_restrict,
            cap_syslog,
            journal_group,
        }
    }
}

/// `CapEff:` of `/proc/self/status`.
fn cap_eff(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
}

/// The events of the kept lines; a page fault or ring timeout takes the process from its next
/// line when its own does not name it.
pub fn parse(lines: &[(String, Option<u64>)]) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    // A BUG or oops header waiting for its RIP line.
    let mut header: Option<&String> = None;
    for (text, usec) in lines {
        let Some(sig) = signature(text) else {
            // A header opens the next RIP line's crash; any other line closes it.
            header = oops_header(text).then_some(text);
            if header.is_some() {
                continue;
            }
            if let Some(last) = events.last_mut().filter(|e| {
                matches!(e.kind, Kind::PageFault | Kind::RingTimeout)
                    && e.process.is_none()
                    && e.lines.len() == 1
            }) {
                if pci_address(text) == last.pci_address {
                    if let Some((name, pid)) = process(text) {
                        last.process = Some(name);
                        last.pid = Some(pid);
                        last.lines.push(text.clone());
                    }
                }
            }
            continue;
        };
        let header = header.take();
        if sig.kind == Kind::KernelOops && header.is_none() {
            // The RIP line of a warning's trace belongs to that warning.
            if let Some(last) = events
                .last_mut()
                .filter(|e| e.kind == Kind::KernelWarning && e.lines.len() == 1)
            {
                last.lines.push(text.clone());
                continue;
            }
        }
        let mut event = Event {
            kind: sig.kind,
            pci_address: pci_address(text),
            pci_id: None,
            error: None,
            firmware: None,
            ip_block: None,
            ring: None,
            mes_message: None,
            ras_event: None,
            ucode: None,
            psp_command: None,
            psp_status: None,
            function: None,
            location: None,
            process: None,
            pid: None,
            usec: *usec,
            lines: vec![text.clone()],
        };
        match sig.kind {
            Kind::ProbeFailed => event.error = number_after(text, "failed with error "),
            Kind::FirmwareLoadFailed => {
                event.error = number_after(text, "failed with error ");
                event.firmware = firmware(text);
            }
            Kind::IpInitFailed => {
                event.ip_block = between(text, "IP block <", ">");
                event.error = text
                    .rsplit_once("> failed ")
                    .and_then(|(_, n)| leading_int(n));
            }
            Kind::KfdAtomicsRejected => event.pci_id = pci_id(text),
            Kind::RingTimeout => {
                event.ring = word_after(text, "ring ");
            }
            Kind::MesNoResponse => {
                event.mes_message = word_after(text, "msg=");
            }
            Kind::PageFault => {
                if let Some((name, pid)) = process(text) {
                    event.process = Some(name);
                    event.pid = Some(pid);
                }
            }
            Kind::InitFailed | Kind::DiscoveryFailed | Kind::GpuReset => {}
            Kind::RasUncorrectable => {
                event.ras_event = between(text, "uncorrectable hardware error(", ")");
            }
            Kind::PspFailed => {
                event.ucode = between(text, "failed to load ucode ", "(")
                    .filter(|u| !u.is_empty() && !u.contains(' '));
                event.psp_command = between(text, "psp gfx command ", "(")
                    .filter(|c| !c.is_empty() && !c.contains(' '));
                event.psp_status =
                    between(text, "response status is (", ")").filter(|s| !s.is_empty());
            }
            Kind::SmuFailed => {}
            Kind::KfdNotSupported | Kind::KfdAddFailed => {
                event.pci_id = pci_id(text).or_else(|| {
                    let did = word_after(text, "DID ")?;
                    Some((0x1002, u16::from_str_radix(&did, 16).ok()?))
                });
            }
            Kind::KernelWarning => {
                let at = word_after(text, " at ");
                event.function = text
                    .split_whitespace()
                    .skip_while(|w| Some(*w) != at.as_deref())
                    .nth(1)
                    .and_then(function_of);
                event.location = at;
            }
            Kind::KernelOops => {
                // `RIP: 0010:amdgpu_irq_put+0x68/0x90 [amdgpu]`: the code segment, then the symbol.
                event.function = word_after(text, "RIP: ")
                    .and_then(|w| w.split_once(':').map(|(_, f)| f.to_owned()))
                    .as_deref()
                    .and_then(function_of);
                match header {
                    Some(h) => event.lines.insert(0, h.clone()),
                    // A trace whose opening line was not kept (a warning in another file): it
                    // stopped in amdgpu, but nothing says it was a crash.
                    None => event.kind = Kind::KernelWarning,
                }
            }
        }
        events.push(event);
    }
    events
}

/// The first `DDDD:BB:DD.F` in the line (lower-case hex), as the kernel prints a PCI address.
pub fn pci_address(line: &str) -> Option<String> {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(11)).find_map(|i| {
        let w = &b[i..i + 12];
        let hex = |r: std::ops::Range<usize>| w[r].iter().all(u8::is_ascii_hexdigit);
        let shape = hex(0..4)
            && w[4] == b':'
            && hex(5..7)
            && w[7] == b':'
            && hex(8..10)
            && w[10] == b'.'
            && (b'0'..=b'7').contains(&w[11]);
        let alone = (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 12).is_none_or(|c| !c.is_ascii_alphanumeric());
        (shape && alone).then(|| String::from_utf8_lossy(w).to_ascii_lowercase())
    })
}

/// `VVVV:DDDD` after `device ` (KFD's `skipped device 1002:67df`).
fn pci_id(line: &str) -> Option<(u16, u16)> {
    let word = word_after(line, "device ")?;
    let (v, d) = word.trim_end_matches(',').split_once(':')?;
    Some((
        u16::from_str_radix(v, 16).ok()?,
        u16::from_str_radix(d, 16).ok()?,
    ))
}

/// The firmware file of a load failure: `amdgpu/…` up to a space or quote.
fn firmware(line: &str) -> Option<String> {
    let at = line.find("amdgpu/")?;
    let name: String = line[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"')
        .take(128)
        .collect();
    (name.len() > "amdgpu/".len()).then_some(name)
}

/// The process and pid a line names: `for process X pid N`, `Process X pid N`,
/// `in process X pid N` (the name may be empty, or hold spaces).
pub fn process(line: &str) -> Option<(String, u32)> {
    let at = line.find("rocess ")? + "rocess ".len();
    let rest = &line[at..];
    let pid_at = rest.find("pid ")?;
    let name = rest[..pid_at].trim().chars().take(64).collect();
    let pid = leading_int(&rest[pid_at + 4..])?;
    Some((name, u32::try_from(pid).ok()?))
}

/// The function of a kernel symbol with offset (`amdgpu_irq_put+0xaa/0xc0` → `amdgpu_irq_put`).
fn function_of(symbol: &str) -> Option<String> {
    let name = symbol.split('+').next()?;
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    ok.then(|| name.chars().take(64).collect())
}

fn number_after(line: &str, key: &str) -> Option<i64> {
    line.rfind(key)
        .and_then(|at| leading_int(&line[at + key.len()..]))
}

fn leading_int(s: &str) -> Option<i64> {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().ok()
}

fn word_after(line: &str, key: &str) -> Option<String> {
    let at = line.find(key)? + key.len();
    let word: String = line[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ',')
        .take(64)
        .collect();
    (!word.is_empty()).then_some(word)
}

fn between(line: &str, open: &str, close: &str) -> Option<String> {
    let at = line.find(open)? + open.len();
    let end = line[at..].find(close)?;
    Some(line[at..at + end].chars().take(64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(lines: &[&str]) -> Vec<Event> {
        parse(
            &lines
                .iter()
                .map(|l| ((*l).to_owned(), None))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn the_data_file_parses_and_the_table_is_compiled_from_it() {
        let d = data::parse(include_str!("../../data/kernel_log.toml")).unwrap();
        assert_eq!(d.rows.len(), SIGNATURES.len());
        assert_eq!(d.as_of, AS_OF);
        assert!(data::parse("as_of = \"2026-01-01\"\n[[signature]]\nkind = \"x\"\nall = [\"a\"]\nsource = \"s\"\n").is_err());
        assert!(
            data::parse(
                "as_of = \"2026-01-01\"\n[[signature]]\nkind = \"gpu-reset\"\nall = [\"a\"]\n"
            )
            .is_err()
        );
    }

    #[test]
    fn a_firmware_failure_and_the_init_it_stopped() {
        // geerlingguy/raspberry-pi-pcie-devices#331
        let e = events(&[
            "amdgpu 0000:01:00.0: Direct firmware load for amdgpu/polaris12_mc.bin failed with error -2",
            "amdgpu: mc: Failed to load firmware \"amdgpu/polaris12_mc.bin\"",
            "[drm:amdgpu_device_init [amdgpu]] *ERROR* sw_init of IP block <gmc_v8_0> failed -2",
            "amdgpu 0000:01:00.0: amdgpu: Fatal error during GPU init",
        ]);
        let kinds: Vec<Kind> = e.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::FirmwareLoadFailed,
                Kind::FirmwareLoadFailed,
                Kind::IpInitFailed,
                Kind::InitFailed
            ]
        );
        assert_eq!(e[0].pci_address.as_deref(), Some("0000:01:00.0"));
        assert_eq!(e[0].firmware.as_deref(), Some("amdgpu/polaris12_mc.bin"));
        assert_eq!(e[0].error, Some(-2));
        assert_eq!(e[1].firmware.as_deref(), Some("amdgpu/polaris12_mc.bin"));
        assert_eq!(e[1].pci_address, None);
        assert_eq!(e[2].ip_block.as_deref(), Some("gmc_v8_0"));
        assert_eq!(e[2].error, Some(-2));
    }

    #[test]
    fn an_invalid_ip_discovery_table() {
        // ROCm/legacy-rocm-build#3856 (MI300X), #5008 (MI300A), #1896 (the older "from vram")
        let e = events(&[
            "amdgpu 0000:05:00.0: amdgpu: get invalid ip discovery binary signature",
            "[drm:amdgpu_discovery_set_ip_blocks [amdgpu]] *ERROR* amdgpu_discovery_init failed",
            "amdgpu 0000:02:00.0: amdgpu: invalid ip discovery binary checksum",
            "amdgpu 0000:03:00.0: amdgpu: get invalid ip discovery binary signature from vram",
            "amdgpu 0000:05:00.0: amdgpu: Fatal error during GPU init",
        ]);
        let kinds: Vec<Kind> = e.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::DiscoveryFailed,
                Kind::DiscoveryFailed,
                Kind::DiscoveryFailed,
                Kind::DiscoveryFailed,
                Kind::InitFailed
            ]
        );
        assert_eq!(e[0].pci_address.as_deref(), Some("0000:05:00.0"));
        assert_eq!(e[1].pci_address, None);
        assert_eq!(e[2].pci_address.as_deref(), Some("0000:02:00.0"));
    }

    #[test]
    fn probe_error_atomics_ring_mes() {
        let e = events(&[
            "amdgpu: probe of 0000:83:00.0 failed with error -12",
            "kfd kfd: amdgpu: skipped device 1002:67df, PCI rejects atomics",
            "amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=2662395, emitted seq=2662397",
            "amdgpu 0000:c1:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
            "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!",
            "amdgpu 0000:1c:00.0: {1}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!",
        ]);
        assert_eq!(e[5].kind, Kind::RasUncorrectable);
        assert_eq!(e[5].ras_event.as_deref(), Some("ERREVENT_ATHUB_INTERRUPT"));
        assert_eq!(e[5].pci_address.as_deref(), Some("0000:1c:00.0"));
        assert_eq!(e[0].kind, Kind::ProbeFailed);
        assert_eq!(e[0].error, Some(-12));
        assert_eq!(e[0].pci_address.as_deref(), Some("0000:83:00.0"));
        assert_eq!(e[1].pci_id, Some((0x1002, 0x67df)));
        assert_eq!(e[2].ring.as_deref(), Some("gfx_0.0.0"));
        assert_eq!(e[3].mes_message.as_deref(), Some("REMOVE_QUEUE"));
        assert_eq!(e[4].kind, Kind::GpuReset);
    }

    #[test]
    fn a_page_fault_names_its_process_on_its_line_or_the_next() {
        let e = events(&[
            "amdgpu 0000:0b:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32770, for process python pid 1796 thread python pid 1796)",
            "amdgpu 0000:0e:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:173 vmid:8 pasid:32791)",
            "amdgpu 0000:0e:00.0: amdgpu:  Process python3 pid 15615 thread python3 pid 15615",
            "amdgpu 0000:83:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:153 vmid:0 pasid:0, for process  pid 0 thread  pid 0)",
        ]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].process.as_deref(), Some("python"));
        assert_eq!(e[0].pid, Some(1796));
        assert_eq!(e[1].process.as_deref(), Some("python3"));
        assert_eq!(e[1].lines.len(), 2);
        assert_eq!(e[2].process.as_deref(), Some(""));
        assert!(wanted(
            "amdgpu 0000:0e:00.0: amdgpu:  Process python3 pid 15615 thread python3 pid 15615"
        ));
        assert!(!wanted(
            "amdgpu 0000:0e:00.0: amdgpu: SMU is resumed successfully!"
        ));
    }

    #[test]
    fn psp_and_smu_failures_and_the_newer_probe_line() {
        let e = events(&[
            // siderolabs/talos#12544
            "amdgpu 0000:85:00.0: amdgpu: failed to load ucode SMC(0x32)",
            "amdgpu 0000:85:00.0: amdgpu: psp gfx command LOAD_IP_FW(0x6) failed and response status is (0x80000306)",
            // ROCm/legacy-rocm-build#2995, #2747
            "[drm:psp_hw_init [amdgpu]] *ERROR* PSP firmware loading failed",
            "[drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!",
            // omacom/omarchy#11278, #10169
            "amdgpu 0000:03:00.0: SMU: No response msg_reg: 6 resp_reg: 0",
            "amdgpu 0000:03:00.0: Failed to setup smc hw!",
            "amdgpu 0000:03:00.0: hw_init of IP block <smu> failed -62",
            "amdgpu 0000:03:00.0: probe with driver amdgpu failed with error -62",
            // The older, numbered form names no ucode and no command.
            "[drm] failed to load ucode id (12) ",
        ]);
        let kinds: Vec<Kind> = e.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::PspFailed,
                Kind::PspFailed,
                Kind::PspFailed,
                Kind::PspFailed,
                Kind::SmuFailed,
                Kind::SmuFailed,
                Kind::IpInitFailed,
                Kind::ProbeFailed,
            ],
            "the numbered form is no signature"
        );
        assert_eq!(e[0].ucode.as_deref(), Some("SMC"));
        assert_eq!(e[0].pci_address.as_deref(), Some("0000:85:00.0"));
        assert_eq!(e[1].psp_command.as_deref(), Some("LOAD_IP_FW"));
        assert_eq!(e[1].psp_status.as_deref(), Some("0x80000306"));
        assert_eq!(e[1].ucode, None);
        assert_eq!(e[2].pci_address, None);
        assert_eq!(e[6].ip_block.as_deref(), Some("smu"));
        assert_eq!(e[7].error, Some(-62));
        assert_eq!(e[7].pci_address.as_deref(), Some("0000:03:00.0"));
    }

    #[test]
    fn kfd_declining_a_gpu_names_it_by_address_or_id() {
        let e = events(&[
            // ROCm/legacy-rocm-build#558, #1318, and the linux-kernel report of an Athlon 3000G
            "amdgpu 0000:02:00.0: kfd not supported on this ASIC",
            "kfd kfd: DID 7340 is missing in supported_devices",
            "kfd kfd: kgd2kfd_probe failed",
            "kfd kfd: device 1002:15d8 NOT added due to errors",
        ]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].kind, Kind::KfdNotSupported);
        assert_eq!(e[0].pci_address.as_deref(), Some("0000:02:00.0"));
        assert_eq!(e[0].pci_id, None);
        assert_eq!(e[1].kind, Kind::KfdNotSupported);
        assert_eq!(e[1].pci_id, Some((0x1002, 0x7340)));
        assert_eq!(e[2].kind, Kind::KfdAddFailed);
        assert_eq!(e[2].pci_id, Some((0x1002, 0x15d8)));
    }

    #[test]
    fn warnings_and_crashes_inside_amdgpu() {
        let e = events(&[
            // ROCm/legacy-rocm-build#2197: a warning and the RIP line of its trace.
            "WARNING: CPU: 96 PID: 903 at drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:600 amdgpu_irq_put+0x9f/0xb0 [amdgpu]",
            "RIP: 0010:amdgpu_irq_put+0x9f/0xb0 [amdgpu]",
            // A crash: its header, then where it stopped (ROCm/amdgpu#113 shows the shape).
            "BUG: kernel NULL pointer dereference, address: 0000000000000008",
            "RIP: 0010:amdgpu_vm_update_range+0x2c/0x890 [amdgpu]",
            // A crash elsewhere: its header and RIP line are kept but make nothing.
            "BUG: unable to handle page fault for address: ffffffffc01b04df",
            "RIP: 0010:strcmp+0x20/0x40",
            // A RIP whose opening line was not kept: a trace, not known to be a crash.
            "RIP: 0010:dcn_bw_update_from_pplib+0x94/0x2c0 [amdgpu]",
            // Built into the kernel: no [amdgpu], the path says it.
            "WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:656 amdgpu_irq_put+0x45/0x70",
        ]);
        let kinds: Vec<Kind> = e.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::KernelWarning,
                Kind::KernelOops,
                Kind::KernelWarning,
                Kind::KernelWarning
            ]
        );
        assert_eq!(e[0].lines.len(), 2, "the RIP line joins its warning");
        assert_eq!(e[0].function.as_deref(), Some("amdgpu_irq_put"));
        assert_eq!(
            e[0].location.as_deref(),
            Some("drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:600")
        );
        assert_eq!(e[1].lines.len(), 2, "the BUG line opens the crash");
        assert!(e[1].lines[0].starts_with("BUG: kernel NULL"));
        assert_eq!(e[1].function.as_deref(), Some("amdgpu_vm_update_range"));
        assert_eq!(e[2].lines.len(), 1);
        assert!(e[2].lines[0].starts_with("RIP:"));
        assert_eq!(e[2].function.as_deref(), Some("dcn_bw_update_from_pplib"));
        assert_eq!(e[3].function.as_deref(), Some("amdgpu_irq_put"));
        assert!(wanted(
            "BUG: kernel NULL pointer dereference, address: 0000000000000008"
        ));
        assert!(wanted("RIP: 0010:ext4_writepages+0x10/0x20"));
        assert!(signature("RIP: 0010:ext4_writepages+0x10/0x20").is_none());
    }

    #[test]
    fn hostile_lines_give_no_event_and_no_panic() {
        let huge = "ring ".repeat(10_000) + " timeout";
        let e = events(&[
            "",
            "\u{fffd}\u{fffd} amdgpu: probe of zzzz:zz:zz.z failed with error -99999999999999999999",
            "skipped device PCI rejects atomics",
            "ring  timeout",
            &huge,
            "amdgpu 0000:03:00.0x: GPU reset begin!",
            "psp gfx command ( failed and response status is (",
            "WARNING: CPU:  at drivers/gpu/drm/amd/",
            "RIP: [amdgpu]",
            "kfd kfd: DID zzzz is missing in supported_devices",
        ]);
        assert_eq!(e[5].psp_command, None);
        assert_eq!(e[5].psp_status, None);
        assert_eq!(e[6].function, None);
        assert_eq!(e[6].lines.len(), 2, "the RIP line joins the warning");
        assert_eq!(e[7].kind, Kind::KfdNotSupported);
        assert_eq!(e[7].pci_id, None);
        assert_eq!(e[0].kind, Kind::ProbeFailed);
        assert_eq!(e[0].error, None);
        assert_eq!(e[0].pci_address, None);
        assert_eq!(e[1].pci_id, None);
        assert_eq!(e[2].ring, None);
        assert!(e[3].ring.as_deref().is_some_and(|r| r.len() <= 64));
        assert_eq!(
            e[4].pci_address, None,
            "an address glued to more text is not one"
        );
    }

    #[test]
    fn who_may_read_the_log() {
        let user = Identity {
            uid: 1000,
            gid: Some(1000),
            groups: vec![1000, 4],
        };
        let mut f = KernelLogFacts {
            dmesg_restrict: Some(true),
            journal_group: Some(true),
            ..Default::default()
        };
        assert_eq!(f.command(Some(&user)), LogCommand::Journalctl);
        f.journal_group = Some(false);
        assert_eq!(f.command(Some(&user)), LogCommand::SudoDmesg);
        f.dmesg_restrict = Some(false);
        assert_eq!(f.command(Some(&user)), LogCommand::Dmesg);
        f.dmesg_restrict = Some(true);
        let root = Identity {
            uid: 0,
            gid: Some(0),
            groups: vec![0],
        };
        assert_eq!(f.command(Some(&root)), LogCommand::Dmesg);
        assert_eq!(f.command(None), LogCommand::SudoDmesg);
        assert_eq!(
            cap_eff("Name:\tx\nCapEff:\t000001ffffffffff\n"),
            Some(0x1ff_ffff_ffff)
        );
    }
}
