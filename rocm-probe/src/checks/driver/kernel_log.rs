//! Layer 2 findings from the kernel log (issue 19): why a GPU did not come up (firmware, the PSP
//! or SMU, initialisation, KFD refusing it), and what happened to it since (hangs, resets, page
//! faults, warnings and crashes inside amdgpu),
//! each with the kernel's lines as evidence and tied to its GPU by PCI address; and, when no
//! source of the log was readable, which group or capability would make it readable.

use std::collections::BTreeMap;

use crate::facts::Facts;
use crate::facts::kernel_log::{Event, Kind};
use crate::finding::{
    AMDGPU_OOPS, Action, Evidence, FIRMWARE_LOAD_FAILED, Finding, GPU_HANG, GPU_INIT_FAILED,
    GPU_PAGE_FAULT, KERNEL_LOG_READ, KERNEL_LOG_UNREADABLE, KFD_ATOMICS_REJECTED,
    KFD_DEVICE_NOT_ADDED, PSP_FAILED, RAS_EVENT_LOGGED, RemedyStep, Rule, SMU_FAILED, Status,
    Subject,
};
use crate::source::kernel_log::{LogSource, Refusal};
use crate::{i18n, msg};

/// Lines of evidence shown per finding (the rest are counted).
const MAX_LINES: usize = 6;

/// The kernel-log findings.
pub fn check(f: &Facts, out: &mut Vec<Finding>) {
    let log = &f.kernel_log;
    if !log.captured {
        return;
    }
    let Some(source) = log.source else {
        out.push(unreadable(f));
        return;
    };
    let cmd = log.command(f.identity.as_ref()).command();
    let from = source.name();
    out.push(
        KERNEL_LOG_READ
            .finding(msg!(
                "driver.klog-read",
                source = from,
                events = log.events.len()
            ))
            // The lines kept (a snapshot holds exactly these), not the lines looked at.
            .with(Evidence::new(
                from,
                msg!(
                    "driver.klog-lines",
                    lines = log.events.iter().map(|e| e.lines.len()).sum::<usize>()
                ),
            )),
    );
    // Lines that name no GPU belong to the one GPU the others name, when there is one.
    let only = sole_address(&log.events);
    let mut per_gpu: BTreeMap<Option<String>, Vec<&Event>> = BTreeMap::new();
    for e in &log.events {
        if KFD_KINDS.contains(&e.kind) {
            continue;
        }
        let at = e.pci_address.clone().or_else(|| only.clone());
        per_gpu.entry(at).or_default().push(e);
    }
    let mut causes = Vec::new();
    for (address, events) in &per_gpu {
        if let Some(cause) = gpu(f, from, cmd, address.as_deref(), events, out) {
            causes.extend(address.clone().map(|a| (a, cause)));
        }
    }
    atomics(f, from, &log.events, out);
    kfd(f, from, cmd, &log.events, only.as_deref(), out);
    link_unbound(&causes, out);
}

/// The lines in which KFD declines a GPU amdgpu drives; they name it by PCI id, not address.
const KFD_KINDS: [Kind; 3] = [
    Kind::KfdAtomicsRejected,
    Kind::KfdNotSupported,
    Kind::KfdAddFailed,
];

/// The rule of the kernel-log line that says why KFD declined the GPU at `address` (PCI device
/// id `device`), for `driver.gpu-not-in-kfd` to name as its cause.
pub fn kfd_refusal(f: &Facts, address: &str, device: Option<u32>) -> Option<&'static Rule> {
    let only = sole_address(&f.kernel_log.events);
    f.kernel_log
        .events
        .iter()
        .filter(|e| KFD_KINDS.contains(&e.kind))
        .find(|e| match (&e.pci_address, e.pci_id) {
            (Some(a), _) => a == address,
            (None, Some((_, d))) => device == Some(u32::from(d)),
            (None, None) => only.as_deref() == Some(address),
        })
        .map(|e| match e.kind {
            Kind::KfdAtomicsRejected => &KFD_ATOMICS_REJECTED,
            _ => &KFD_DEVICE_NOT_ADDED,
        })
}

/// The one PCI address the log's events name, when they name exactly one.
fn sole_address(events: &[Event]) -> Option<String> {
    let mut a: Vec<&str> = events
        .iter()
        .filter_map(|e| e.pci_address.as_deref())
        .collect();
    a.sort_unstable();
    a.dedup();
    (a.len() == 1).then(|| a[0].to_owned())
}

/// An unbound GPU's finding is caused by what the log says stopped that GPU (its own PCI
/// address): the firmware that failed to load, else the PSP or SMU, else the failed
/// initialisation — not by the first such finding of another GPU, which the cause graph alone
/// would pick.
fn link_unbound(causes: &[(String, &'static Rule)], out: &mut [Finding]) {
    for finding in out
        .iter_mut()
        .filter(|x| x.id == crate::finding::GPU_NOT_BOUND.id)
    {
        let cause = causes.iter().find(|(address, _)| {
            finding
                .evidence
                .iter()
                .any(|e| e.source.contains(&format!("/{address}/")))
        });
        if let Some((_, rule)) = cause {
            finding.caused_by = Some(rule.id);
        }
    }
}

/// The findings about one GPU (or about lines naming none).
fn gpu(
    f: &Facts,
    from: &str,
    cmd: &str,
    address: Option<&str>,
    events: &[&Event],
    out: &mut Vec<Finding>,
) -> Option<&'static Rule> {
    let mut cause: Option<&'static Rule> = None;
    let of = |kinds: &[Kind]| -> Vec<&Event> {
        events
            .iter()
            .copied()
            .filter(|e| kinds.contains(&e.kind))
            .collect()
    };
    let (name, subject) = match address {
        Some(a) => label(f, a),
        None => (msg!("driver.klog-unknown-gpu"), None),
    };
    let unbound = address.is_some_and(|a| {
        f.pci
            .as_ref()
            .is_some_and(|p| p.gpus.iter().any(|g| g.address == a && g.driver.is_none()))
    });
    let init = of(&[
        Kind::ProbeFailed,
        Kind::InitFailed,
        Kind::IpInitFailed,
        Kind::DiscoveryFailed,
    ]);
    let fatal = !init.is_empty() || unbound;
    let firmware = of(&[Kind::FirmwareLoadFailed]);
    if !firmware.is_empty() {
        let mut files: Vec<&str> = firmware
            .iter()
            .filter_map(|e| e.firmware.as_deref())
            .collect();
        files.sort_unstable();
        files.dedup();
        let files = i18n::list(&files);
        if fatal {
            cause = Some(&FIRMWARE_LOAD_FAILED);
        }
        let finding = if fatal {
            FIRMWARE_LOAD_FAILED.finding(msg!("driver.klog-firmware", gpu = name, files))
        } else {
            FIRMWARE_LOAD_FAILED.finding_with(
                Status::Warn,
                msg!("driver.klog-firmware-optional", gpu = name, files),
            )
        };
        out.push(
            about(finding, subject.clone())
                .with_all(evidence(from, &firmware))
                .remedy(msg!("driver.klog-firmware-remedy", files)),
        );
    }
    // The PSP loads the other blocks' firmware and the SMU runs power management; amdgpu brings
    // both up before the rest, so either failing stops the GPU.
    let psp = of(&[Kind::PspFailed]);
    if !psp.is_empty() {
        let finding = psp_finding(&name, fatal, &psp);
        out.push(controller(
            finding,
            &PSP_FAILED,
            fatal,
            &mut cause,
            subject.clone(),
            evidence(from, &psp),
            msg!("driver.klog-psp-remedy", cmd),
        ));
    }
    let smu = of(&[Kind::SmuFailed]);
    if !smu.is_empty() {
        let finding = if fatal {
            SMU_FAILED.finding(msg!("driver.klog-smu", gpu = name))
        } else {
            SMU_FAILED.finding_with(Status::Warn, msg!("driver.klog-smu-came-up", gpu = name))
        };
        out.push(controller(
            finding,
            &SMU_FAILED,
            fatal,
            &mut cause,
            subject.clone(),
            evidence(from, &smu),
            msg!("driver.klog-smu-remedy", cmd),
        ));
    }
    if !init.is_empty() {
        let mut what: Vec<String> = Vec::new();
        let error = init
            .iter()
            .find(|e| e.kind == Kind::ProbeFailed)
            .and_then(|e| e.error);
        if let Some(error) = error {
            what.push(msg!("driver.klog-probe-error", error, name = errno(error)));
        }
        for e in init.iter().filter(|e| e.kind == Kind::IpInitFailed) {
            if let Some(block) = &e.ip_block {
                what.push(msg!(
                    "driver.klog-ip-failed",
                    block,
                    error = e.error.map_or_else(String::new, |n| n.to_string())
                ));
            }
        }
        let discovery = init.iter().any(|e| e.kind == Kind::DiscoveryFailed);
        if discovery {
            what.push(msg!("driver.klog-discovery"));
        }
        if what.is_empty() {
            what.push(msg!("driver.klog-fatal"));
        }
        let remedy = match error {
            Some(-12) => msg!("driver.klog-init-enomem-remedy", cmd),
            // The table comes from the GPU's firmware, before any driver or ROCm code runs.
            _ if discovery => msg!("driver.klog-discovery-remedy"),
            _ => msg!("driver.klog-init-remedy", cmd),
        };
        let mut finding = about(
            GPU_INIT_FAILED.finding(msg!(
                "driver.klog-init-failed",
                gpu = name,
                what = what.join(&msg!("driver.klog-and"))
            )),
            subject.clone(),
        )
        .with_all(evidence(from, &init))
        .remedy(remedy);
        if error == Some(-12) {
            finding = finding.step(RemedyStep::say(
                Action::FirmwareSetting,
                "Above 4G Decoding",
                msg!("driver.klog-step-above-4g"),
            ));
        }
        match cause {
            Some(rule) => finding = finding.caused_by(rule),
            None => cause = Some(&GPU_INIT_FAILED),
        }
        out.push(finding);
    }
    let hangs = of(&[Kind::RingTimeout, Kind::MesNoResponse, Kind::GpuReset]);
    if !hangs.is_empty() {
        let mut what: Vec<String> = Vec::new();
        let mut rings: Vec<&str> = hangs.iter().filter_map(|e| e.ring.as_deref()).collect();
        rings.sort_unstable();
        rings.dedup();
        if !rings.is_empty() {
            what.push(msg!("driver.klog-ring-timeout", rings = i18n::list(&rings)));
        }
        let mut mes: Vec<&str> = hangs
            .iter()
            .filter_map(|e| e.mes_message.as_deref())
            .collect();
        mes.sort_unstable();
        mes.dedup();
        if !mes.is_empty() {
            what.push(msg!("driver.klog-mes", messages = i18n::list(&mes)));
        }
        let resets = hangs.iter().filter(|e| e.kind == Kind::GpuReset).count();
        if resets > 0 {
            what.push(msg!("driver.klog-resets", count = resets));
        }
        out.push(
            about(
                GPU_HANG.finding(msg!(
                    "driver.klog-hang",
                    gpu = name,
                    what = what.join(&msg!("driver.klog-and"))
                )),
                subject.clone(),
            )
            .with_all(evidence(from, &hangs))
            .remedy(msg!("driver.klog-hang-remedy", cmd)),
        );
    }
    let ras = of(&[Kind::RasUncorrectable]);
    if !ras.is_empty() {
        let mut kinds: Vec<&str> = ras.iter().filter_map(|e| e.ras_event.as_deref()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        out.push(
            about(
                RAS_EVENT_LOGGED.finding(msg!(
                    "hardware.klog-ras",
                    gpu = name.clone(),
                    count = ras.len(),
                    events = i18n::list(&kinds)
                )),
                subject.clone(),
            )
            .with_all(evidence(from, &ras))
            .remedy(msg!("hardware.klog-ras-remedy", cmd)),
        );
    }
    let traces = of(&[Kind::KernelWarning, Kind::KernelOops]);
    if !traces.is_empty() {
        let mut functions: Vec<&str> = traces
            .iter()
            .filter_map(|e| e.function.as_deref())
            .collect();
        functions.sort_unstable();
        functions.dedup();
        let functions = if functions.is_empty() {
            msg!("driver.klog-trace-unnamed")
        } else {
            i18n::list(&functions)
        };
        let count = traces.len();
        let finding = if traces.iter().any(|e| e.kind == Kind::KernelOops) {
            AMDGPU_OOPS.finding(msg!("driver.klog-oops", gpu = name, count, functions))
        } else {
            AMDGPU_OOPS.finding_with(
                Status::Info,
                msg!("driver.klog-warning", gpu = name, count, functions),
            )
        };
        // The first line of each trace: what fired, and where.
        let firsts: Vec<Evidence> = traces
            .iter()
            .take(MAX_LINES)
            .map(|e| {
                Evidence::new(
                    from,
                    msg!("driver.klog-line", line = e.lines[0].replace('`', "'")),
                )
            })
            .collect();
        let mut finding = about(finding, subject.clone())
            .with_all(firsts)
            .remedy(msg!("driver.klog-oops-remedy", cmd));
        // A warning on the error path of a failed start is that failure's consequence.
        if let Some(rule) = cause {
            finding = finding.caused_by(rule);
        }
        out.push(finding);
    }
    let faults = of(&[Kind::PageFault]);
    if let Some(last) = faults.last() {
        let summary = match (&last.process, last.pid) {
            (Some(process), Some(pid)) if !process.is_empty() => msg!(
                "driver.klog-page-fault",
                gpu = name,
                count = faults.len(),
                process,
                pid
            ),
            _ => msg!(
                "driver.klog-page-fault-no-process",
                gpu = name,
                count = faults.len()
            ),
        };
        out.push(
            about(GPU_PAGE_FAULT.finding(summary), subject)
                .with_all(evidence(from, &faults))
                .remedy(msg!("driver.klog-page-fault-remedy", cmd)),
        );
    }
    cause
}

/// A PSP or SMU finding: a failure that names itself the GPU's cause (after a firmware file that
/// failed to load, which it follows from) when the GPU did not come up, else as `finding` says.
fn controller(
    finding: Finding,
    rule: &'static Rule,
    fatal: bool,
    cause: &mut Option<&'static Rule>,
    subject: Option<Subject>,
    lines: Vec<Evidence>,
    remedy: String,
) -> Finding {
    let mut finding = about(finding, subject).with_all(lines).remedy(remedy);
    if fatal {
        match cause {
            Some(earlier) => finding = finding.caused_by(earlier),
            None => *cause = Some(rule),
        }
    }
    finding
}

/// What the PSP refused: the firmware (`SMC`) and the command with its status, when the lines
/// say.
fn psp_finding(name: &str, fatal: bool, events: &[&Event]) -> Finding {
    let mut ucodes: Vec<&str> = events.iter().filter_map(|e| e.ucode.as_deref()).collect();
    ucodes.sort_unstable();
    ucodes.dedup();
    let mut commands: Vec<String> = events
        .iter()
        .filter_map(|e| {
            let command = e.psp_command.as_deref()?;
            Some(match &e.psp_status {
                Some(status) => format!("{command} ({status})"),
                None => command.to_owned(),
            })
        })
        .collect();
    commands.sort_unstable();
    commands.dedup();
    let mut what = Vec::new();
    if !ucodes.is_empty() {
        what.push(msg!("driver.klog-psp-ucode", ucodes = i18n::list(&ucodes)));
    }
    if !commands.is_empty() {
        what.push(msg!(
            "driver.klog-psp-command",
            commands = i18n::list(&commands)
        ));
    }
    if what.is_empty() {
        what.push(msg!("driver.klog-psp-load"));
    }
    let what = what.join(&msg!("driver.klog-and"));
    if fatal {
        PSP_FAILED.finding(msg!("driver.klog-psp", gpu = name, what))
    } else {
        PSP_FAILED.finding_with(
            Status::Info,
            msg!("driver.klog-psp-came-up", gpu = name, what),
        )
    }
}

/// KFD declining a GPU amdgpu drives: no support for it in the running driver, or its
/// initialisation failed. Tied to the GPU by the line's PCI address, else by its PCI id.
fn kfd(
    f: &Facts,
    from: &str,
    cmd: &str,
    events: &[Event],
    only: Option<&str>,
    out: &mut Vec<Finding>,
) {
    let mut per_gpu: BTreeMap<Option<String>, Vec<&Event>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| matches!(e.kind, Kind::KfdNotSupported | Kind::KfdAddFailed))
    {
        let by_id = e
            .pci_id
            .and_then(|(_, device)| match gpus_with_device(f, device)[..] {
                [one] => Some(one.to_owned()),
                _ => None,
            });
        let at = e
            .pci_address
            .clone()
            .or(by_id)
            .or_else(|| only.map(str::to_owned));
        per_gpu.entry(at).or_default().push(e);
    }
    for (address, lines) in &per_gpu {
        let (name, subject) = match address {
            Some(a) => label(f, a),
            None => (msg!("driver.klog-unknown-gpu"), None),
        };
        let unsupported = lines.iter().any(|e| e.kind == Kind::KfdNotSupported);
        let (summary, remedy) = if unsupported {
            (
                msg!("driver.klog-kfd-unsupported", gpu = name),
                msg!("driver.klog-kfd-unsupported-remedy"),
            )
        } else {
            (
                msg!("driver.klog-kfd-not-added", gpu = name),
                msg!("driver.klog-kfd-not-added-remedy", cmd),
            )
        };
        out.push(
            about(KFD_DEVICE_NOT_ADDED.finding(summary), subject)
                .with_all(evidence(from, lines))
                .remedy(remedy),
        );
    }
}

/// KFD's "skipped device V:D, PCI rejects atomics", tied to the GPUs with that PCI id.
fn atomics(f: &Facts, from: &str, events: &[Event], out: &mut Vec<Finding>) {
    let mut ids: Vec<(u16, u16)> = events
        .iter()
        .filter(|e| e.kind == Kind::KfdAtomicsRejected)
        .filter_map(|e| e.pci_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for (vendor, device) in ids {
        let lines: Vec<&Event> = events
            .iter()
            .filter(|e| e.pci_id == Some((vendor, device)))
            .collect();
        let gpus = gpus_with_device(f, device);
        let id = format!("{vendor:04x}:{device:04x}");
        let (name, subject) = match gpus.as_slice() {
            [] => (msg!("driver.klog-unknown-gpu"), None),
            [one] => label(f, one),
            many => (i18n::list(many.iter().map(|a| label(f, a).0)), None),
        };
        out.push(
            about(
                KFD_ATOMICS_REJECTED.finding(msg!("driver.klog-atomics", gpu = name, id)),
                subject,
            )
            .with_all(evidence(from, &lines))
            .remedy(msg!("driver.klog-atomics-remedy")),
        );
    }
}

/// No source of the log was readable: why, and what would make it readable.
fn unreadable(f: &Facts) -> Finding {
    let log = &f.kernel_log;
    // A fixture cannot hold a refused /dev/kmsg: absent there while dmesg_restrict keeps it
    // from this user is what a live run was refused.
    let root = f.identity.as_ref().is_some_and(|i| i.uid == 0);
    let restricted = log.dmesg_restrict == Some(true) && !root && log.cap_syslog != Some(true);
    let why: Vec<String> = log
        .refused
        .iter()
        .map(|(source, refusal)| match refusal {
            Refusal::Absent if *source == LogSource::Kmsg && restricted => {
                msg!("driver.klog-restricted")
            }
            Refusal::Absent => msg!("driver.klog-absent"),
            Refusal::Denied => msg!("driver.klog-denied"),
            Refusal::Empty => msg!("driver.klog-empty"),
            Refusal::Unusable(e) => msg!("driver.klog-unusable", error = e),
        })
        .collect();
    let restrict = match log.dmesg_restrict {
        Some(true) => "1",
        Some(false) => "0",
        None => "?",
    };
    let mut finding = KERNEL_LOG_UNREADABLE
        .finding(msg!("driver.klog-unreadable"))
        .with(Evidence::new(
            crate::source::kernel_log::DMESG_RESTRICT,
            restrict,
        ))
        .with_all(
            log.refused
                .iter()
                .zip(&why)
                .map(|((s, _), w)| Evidence::new(s.name(), w.clone())),
        )
        .remedy(msg!("driver.klog-unreadable-remedy", restrict));
    if log.refused.iter().any(|(s, _)| *s == LogSource::Journal) || f.identity.is_some() {
        finding = finding.step(RemedyStep::run(
            Action::JoinGroup,
            "adm",
            "sudo usermod -aG adm \"$USER\"",
            msg!("driver.klog-step-join-adm"),
        ));
    }
    finding
}

fn about(finding: Finding, subject: Option<Subject>) -> Finding {
    match subject {
        Some(s) => finding.about(s),
        None => finding,
    }
}

/// How the report names the GPU at `address` (`GPU n (address, ROCr i)` when it is in the
/// inventory, with the finding's subject; else by its address alone).
fn label(f: &Facts, address: &str) -> (String, Option<Subject>) {
    let found = f.inventory.as_ref().and_then(|inv| {
        let g = inv
            .gpus
            .iter()
            .find(|g| g.pci_address.as_deref() == Some(address))?;
        Some((
            inv.gpu_name(g).to_string(),
            Subject::gpu(g.index, Some(address.to_owned())),
        ))
    });
    match found {
        Some((name, subject)) => (name, Some(subject)),
        None => (msg!("driver.klog-gpu-at", address), None),
    }
}

/// The events' lines, at most [`MAX_LINES`], then how many more.
fn evidence(from: &str, events: &[&Event]) -> Vec<Evidence> {
    let lines: Vec<&String> = events.iter().flat_map(|e| &e.lines).collect();
    let mut out: Vec<Evidence> = lines
        .iter()
        .take(MAX_LINES)
        .map(|l| Evidence::new(from, msg!("driver.klog-line", line = l.replace('`', "'"))))
        .collect();
    if lines.len() > MAX_LINES {
        out.push(Evidence::new(
            from,
            msg!("driver.klog-more-lines", count = lines.len() - MAX_LINES),
        ));
    }
    out
}

/// The errno name of a negative kernel error code, for the ones amdgpu's probe returns.
fn errno(error: i64) -> &'static str {
    match -error {
        2 => "ENOENT",
        12 => "ENOMEM",
        16 => "EBUSY",
        19 => "ENODEV",
        22 => "EINVAL",
        62 => "ETIME",
        110 => "ETIMEDOUT",
        _ => "?",
    }
}

/// The PCI addresses of the AMD GPUs on the bus with this device id (a kernel line that names the
/// device by id, not by address, is tied to a GPU when exactly one has it).
fn gpus_with_device(f: &Facts, device: u16) -> Vec<&str> {
    f.pci.as_ref().map_or_else(Vec::new, |p| {
        p.gpus
            .iter()
            .filter(|g| g.device == Some(u32::from(device)))
            .map(|g| g.address.as_str())
            .collect()
    })
}
