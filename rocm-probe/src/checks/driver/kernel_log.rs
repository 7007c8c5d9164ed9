//! Layer 2 findings from the kernel log (issue 19): why a GPU did not come up (firmware,
//! initialisation, KFD refusing it), and what happened to it since (hangs, resets, page faults),
//! each with the kernel's lines as evidence and tied to its GPU by PCI address; and, when no
//! source of the log was readable, which group or capability would make it readable.

use std::collections::BTreeMap;

use crate::facts::Facts;
use crate::facts::kernel_log::{Event, Kind};
use crate::finding::{
    Action, Evidence, FIRMWARE_LOAD_FAILED, Finding, GPU_HANG, GPU_INIT_FAILED, GPU_PAGE_FAULT,
    KERNEL_LOG_READ, KERNEL_LOG_UNREADABLE, KFD_ATOMICS_REJECTED, RAS_EVENT_LOGGED, RemedyStep,
    Status, Subject,
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
    let addresses: Vec<&str> = {
        let mut a: Vec<&str> = log
            .events
            .iter()
            .filter_map(|e| e.pci_address.as_deref())
            .collect();
        a.sort_unstable();
        a.dedup();
        a
    };
    let only = (addresses.len() == 1).then(|| addresses[0].to_owned());
    let mut per_gpu: BTreeMap<Option<String>, Vec<&Event>> = BTreeMap::new();
    for e in &log.events {
        if e.kind == Kind::KfdAtomicsRejected {
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
    link_unbound(&causes, out);
}

/// An unbound GPU's finding is caused by what the log says stopped that GPU (its own PCI
/// address): the firmware that failed to load, else the failed initialisation — not by the
/// first such finding of another GPU, which the cause graph alone would pick.
fn link_unbound(causes: &[(String, &'static crate::finding::Rule)], out: &mut [Finding]) {
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
) -> Option<&'static crate::finding::Rule> {
    let mut cause = None;
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
    let init = of(&[Kind::ProbeFailed, Kind::InitFailed, Kind::IpInitFailed]);
    let firmware = of(&[Kind::FirmwareLoadFailed]);
    if !firmware.is_empty() {
        let mut files: Vec<&str> = firmware
            .iter()
            .filter_map(|e| e.firmware.as_deref())
            .collect();
        files.sort_unstable();
        files.dedup();
        let files = i18n::list(&files);
        let fatal = !init.is_empty() || unbound;
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
        if what.is_empty() {
            what.push(msg!("driver.klog-fatal"));
        }
        let remedy = match error {
            Some(-12) => msg!("driver.klog-init-enomem-remedy", cmd),
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
        if cause.is_some() {
            finding = finding.caused_by(&FIRMWARE_LOAD_FAILED);
        } else {
            cause = Some(&GPU_INIT_FAILED);
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
        let gpus: Vec<String> = f
            .pci
            .as_ref()
            .map(|p| {
                p.gpus
                    .iter()
                    .filter(|g| g.device == Some(u32::from(device)))
                    .map(|g| g.address.clone())
                    .collect()
            })
            .unwrap_or_default();
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
