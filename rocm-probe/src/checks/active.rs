//! What the active checks of layers 2–4 share (each lives in its layer: `driver/active.rs` for
//! the KFD ioctls, `thunk/active.rs` for libhsakmt, `runtime/active.rs` for ROCr, HIP and the
//! dispatch): the evidence source, the topology's nodes, and how a library that did not load
//! is reported. Without active results (`--active`, `--dispatch`, a fixture's `[active]`) the
//! active checks say nothing.

use crate::active::{Crash, LoadError};
use crate::facts::Facts;
use crate::facts::topology::{Node, NodeKind};
use crate::finding::{Evidence, Finding, Rule};
use crate::msg;

/// Where active results come from, for evidence.
pub(crate) const SOURCE: &str = "active";

pub(crate) fn nodes(f: &Facts) -> Vec<&Node> {
    f.kfd
        .as_ref()
        .map(|k| k.topology.nodes.iter().collect())
        .unwrap_or_default()
}

/// Whether active results show KFD withholding the GPU with `gpu_id` from this process (not in
/// its apertures: a container given some GPUs, a device cgroup). Unknown either way: no.
pub(crate) fn kfd_hides(f: &Facts, gpu_id: Option<u32>) -> bool {
    let given = f.active.as_ref().and_then(|a| a.kfd_gpus.as_ref());
    matches!((given, gpu_id), (Some(given), Some(id)) if !given.contains(&id))
}

pub(crate) fn gpu_nodes(f: &Facts) -> Vec<&Node> {
    nodes(f)
        .into_iter()
        .filter(|n| n.kind() == NodeKind::Gpu)
        .collect()
}

/// `libhsakmt 1.0.6` from `/usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6`.
pub(crate) fn library_name(stem: &str, path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.split_once(".so.") {
        Some((_, v)) if !v.is_empty() => format!("{stem} {v}"),
        _ => stem.to_owned(),
    }
}

/// A recorded load error in the report's language; the loader's own message is quoted data,
/// shown as it is in backticks.
pub(crate) fn load_error_text(e: &LoadError) -> String {
    match e {
        LoadError::NotInstalledAt(path) => msg!("active.not-installed-path", path),
        LoadError::NotInstalledAnywhere {
            library,
            or_install: false,
        } => msg!("active.not-installed-nowhere", library),
        LoadError::NotInstalledAnywhere {
            library,
            or_install: true,
        } => msg!("active.not-installed-nowhere-or-install", library),
        LoadError::EntryPointsMissing(functions) => {
            msg!("active.entry-points-missing", functions)
        }
        LoadError::Other(message) => msg!("active.loader-message", message),
    }
}

/// A library of layers 3–4 that did not load: the finding with the load attempt as evidence.
/// The finding of a library the probe could not load: `absent` when it is not installed,
/// `failed` otherwise; `summary` makes the sentence from the loader's text.
pub(crate) fn load_failure(
    e: &LoadError,
    [absent, failed]: [&Rule; 2],
    library: &str,
    summary: impl FnOnce(&str) -> String,
) -> Finding {
    let rule = if e.is_not_installed() { absent } else { failed };
    let text = load_error_text(e);
    rule.finding(summary(&text)).with(Evidence::new(
        format!("{SOURCE}:{}", msg!("active.source-load", library)),
        text,
    ))
}

/// A library that ended the process it was loaded into (the active probe runs each in a child
/// of its own): the finding `rule` with how it ended and what it said last.
pub(crate) fn crash_failure(rule: &Rule, library: &str, path: &str, crash: &Crash) -> Finding {
    let how = if let Some(signal) = &crash.signal {
        msg!("active.crash-signal", signal)
    } else if crash.timed_out {
        msg!(
            "active.crash-timeout",
            seconds = crate::active::isolate::STAGE_LIMIT.as_secs()
        )
    } else if let Some(code) = crash.exit {
        msg!("active.crash-exit", code)
    } else {
        msg!("active.crash-unknown")
    };
    let name = library_name(library, path);
    rule.finding(msg!("active.crashed", library = name, how))
        .with(Evidence::new(path.to_owned(), msg!("active.crash-process")))
        .with_all(
            crash
                .stderr
                .as_ref()
                .map(|e| Evidence::new(msg!("active.crash-stderr"), e.clone())),
        )
}
