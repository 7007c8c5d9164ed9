//! The findings of the active probes (`--active`, `--dispatch`, or a fixture's `[active]`):
//! layer 2 (KFD ioctls), layer 3 (libhsakmt), layer 4 (ROCr, HIP, dispatch). Pure functions of
//! [`ActiveFacts`] and the topology. Without active results they say nothing.

use crate::active::status::{hip_meaning, hsa_meaning, hsakmt_meaning};
use crate::active::{DispatchOutcome, DispatchResult, KfdOpen, LoadError, RocrResult, ThunkResult};
use crate::facts::topology::{Node, NodeKind, TOPOLOGY_DIR};
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    DISPATCH_FAILED, DISPATCH_OK, Evidence, Finding, HIP_ANSWERS, HIP_FAILED, HIP_NOT_INSTALLED,
    HSAKMT_ANSWERS, HSAKMT_FAILED, HSAKMT_LOAD_FAILED, HSAKMT_NODE_MISMATCH, HSAKMT_NOT_INSTALLED,
    KFD_ANSWERS, KFD_CLOCK_STUCK, KFD_GPUS_HIDDEN, KFD_INTERFACE_OLD, KFD_IOCTL_FAILED,
    KFD_OPEN_FAILED, ROCR_AGENT_MISSING, ROCR_ANSWERS, ROCR_INIT_FAILED, ROCR_LOAD_FAILED,
    ROCR_NOT_INSTALLED, Rule, Status,
};
use crate::i18n;
use crate::msg;

/// Where active results come from, for evidence.
const SOURCE: &str = "active";

fn nodes(f: &Facts) -> Vec<&Node> {
    f.kfd
        .as_ref()
        .map(|k| k.topology.nodes.iter().collect())
        .unwrap_or_default()
}

fn gpu_nodes(f: &Facts) -> Vec<&Node> {
    nodes(f)
        .into_iter()
        .filter(|n| n.kind() == NodeKind::Gpu)
        .collect()
}

/// What an errno means when `/dev/kfd` will not open.
fn open_meaning(errno: &str) -> String {
    match errno {
        "ENOENT" => msg!("active.open-enoent"),
        "EACCES" | "EPERM" => msg!("active.open-eacces"),
        "ENODEV" | "ENXIO" => msg!("active.open-enodev"),
        "EBUSY" => msg!("active.open-ebusy"),
        _ => msg!("active.open-refused"),
    }
}

/// Layer 2: the KFD ioctls.
pub fn driver(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(a) = &f.active else { return out };
    let Some(open) = &a.kfd_open else { return out };
    let device = Evidence::new(
        format!(
            "{SOURCE}:{}",
            msg!("active.source-open", device = KFD_DEVICE)
        ),
        open.to_string(),
    );
    if let KfdOpen::Errno(errno) = open {
        out.push(
            KFD_OPEN_FAILED
                .finding(msg!(
                    "active.kfd-open-failed",
                    device = KFD_DEVICE,
                    errno,
                    meaning = open_meaning(errno)
                ))
                .with(device)
                .remedy(msg!("active.kfd-open-failed-remedy")),
        );
        return out;
    }
    let mut parts = Vec::new();
    let mut evidence = vec![device];
    if let Some([major, minor]) = a.kfd_version {
        parts.push(msg!("active.kfd-part-interface", major, minor));
        evidence.push(Evidence::new(
            format!("{SOURCE}:GET_VERSION"),
            format!("{major}.{minor}"),
        ));
        let (status, why) = if major != 1 {
            (Some(Status::Fail), msg!("active.interface-major"))
        } else if minor < 5 {
            (Some(Status::Warn), msg!("active.interface-no-svm"))
        } else if minor < 9 {
            (
                Some(Status::Warn),
                msg!("active.interface-no-available-memory"),
            )
        } else if minor < 13 {
            (Some(Status::Info), msg!("active.interface-no-debugger"))
        } else {
            (None, String::new())
        };
        if let Some(status) = status {
            out.push(
                KFD_INTERFACE_OLD
                    .finding_with(status, msg!("active.interface-old", major, minor, why))
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_VERSION"),
                        format!("{major}.{minor}"),
                    ))
                    .remedy(msg!("active.interface-old-remedy")),
            );
        }
    }
    let gpus = gpu_nodes(f);
    if let Some(seen) = &a.kfd_gpus {
        parts.push(msg!("active.kfd-part-gpus", gpus = seen.len()));
        let hidden: Vec<&&Node> = gpus
            .iter()
            .filter(|n| n.gpu_id.is_some_and(|id| !seen.contains(&id)))
            .collect();
        if !hidden.is_empty() {
            out.push(
                KFD_GPUS_HIDDEN
                    .finding(msg!(
                        "active.gpus-hidden",
                        seen = seen.len(),
                        total = gpus.len(),
                        gpus = super::gpu_names(f, hidden.iter().map(|n| n.id))
                    ))
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_PROCESS_APERTURES_NEW"),
                        format!("gpu_ids {seen:?}"),
                    ))
                    .with_all(hidden.iter().map(|n| {
                        Evidence::new(
                            format!("{TOPOLOGY_DIR}/nodes/{}/gpu_id", n.id),
                            n.gpu_id.map(|g| g.to_string()).unwrap_or_default(),
                        )
                    })),
            );
        }
    }
    if let Some(memory) = &a.kfd_available_memory
        && !memory.is_empty()
    {
        let total: u64 = memory.values().sum();
        parts.push(msg!(
            "active.kfd-part-memory",
            gib = format!("{:.1}", total as f64 / (1u64 << 30) as f64),
            gpus = memory.len()
        ));
        evidence.push(Evidence::new(
            format!("{SOURCE}:AVAILABLE_MEMORY"),
            memory
                .iter()
                .map(|(id, b)| format!("{id}: {b}"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    if let Some(stuck) = &a.kfd_clock_stuck {
        if stuck.is_empty() {
            parts.push(msg!("active.kfd-part-clocks"));
        } else {
            let nodes = gpus
                .iter()
                .filter(|n| n.gpu_id.is_some_and(|id| stuck.contains(&id)))
                .map(|n| n.id);
            out.push(
                KFD_CLOCK_STUCK
                    .finding(msg!(
                        "active.clock-stuck",
                        count = stuck.len(),
                        gpus = super::gpu_names(f, nodes)
                    ))
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_CLOCK_COUNTERS"),
                        format!("gpu_ids {stuck:?}"),
                    ))
                    .remedy(msg!("active.clock-stuck-remedy")),
            );
        }
    }
    if let Some(errors) = a.kfd_errors.as_ref().filter(|e| !e.is_empty()) {
        out.push(
            KFD_IOCTL_FAILED
                .finding(msg!(
                    "active.ioctl-failed",
                    count = errors.len(),
                    errors = errors.join("; ")
                ))
                .with_all(
                    errors
                        .iter()
                        .map(|e| Evidence::new(format!("{SOURCE}:ioctl"), e.clone())),
                ),
        );
    }
    out.insert(
        0,
        KFD_ANSWERS
            .finding(msg!(
                "active.kfd-answers",
                device = KFD_DEVICE,
                parts = parts.join("; ")
            ))
            .with_all(evidence),
    );
    out
}

/// `libhsakmt 1.0.6` from `/usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6`.
fn library_name(stem: &str, path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.split_once(".so.") {
        Some((_, v)) if !v.is_empty() => format!("{stem} {v}"),
        _ => stem.to_owned(),
    }
}

/// Layer 3: libhsakmt.
pub fn thunk(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(t) = f.active.as_ref().and_then(|a| a.hsakmt.as_ref()) else {
        return out;
    };
    if t.built_into_rocr.is_some() {
        // Nothing to load; layer 4's hsa_init proves the thunk.
        return out;
    }
    if let Some(e) = &t.load_error {
        out.push(load_failure(
            e,
            [&HSAKMT_NOT_INSTALLED, &HSAKMT_LOAD_FAILED],
            "libhsakmt",
            |error| msg!("active.hsakmt-load-error", error),
        ));
        return out;
    }
    let library = t.library.clone().unwrap_or_default();
    let name = library_name("libhsakmt", &library);
    let lib_evidence = Evidence::new(library.clone(), msg!("active.loaded"));
    let failed = |call: &str, status: &str| {
        let meaning = hsakmt_meaning(status).unwrap_or_else(|| msg!("active.unknown-status"));
        let short = status.trim_start_matches("HSAKMT_STATUS_");
        HSAKMT_FAILED
            .finding(msg!(
                "active.hsakmt-failed",
                library = name,
                call,
                status = short,
                meaning
            ))
            .with(lib_evidence.clone())
            .with(Evidence::new(format!("{SOURCE}:{call}"), status.to_owned()))
    };
    match t.open.as_deref() {
        Some("HSAKMT_STATUS_SUCCESS") => {}
        Some(status) => {
            out.push(failed("hsaKmtOpenKFD", status));
            return out;
        }
        None => return out,
    }
    if let Some(status) = t
        .acquire
        .as_deref()
        .filter(|s| *s != "HSAKMT_STATUS_SUCCESS")
    {
        out.push(failed("hsaKmtAcquireSystemProperties", status));
        return out;
    }
    let sysfs = nodes(f);
    let mut parts = vec![msg!("active.hsakmt-part-open", library = name)];
    if let Some([major, minor]) = t.version {
        parts.push(msg!("active.hsakmt-part-interface", major, minor));
    }
    if let Some(thunk_nodes) = &t.nodes {
        parts.push(msg!("active.hsakmt-part-nodes", nodes = thunk_nodes.len()));
        if let Some(m) = node_mismatch(t, &sysfs) {
            out.push(m);
        }
    }
    out.insert(
        0,
        HSAKMT_ANSWERS.finding(parts.join("; ")).with(lib_evidence),
    );
    out
}

fn node_mismatch(t: &ThunkResult, sysfs: &[&Node]) -> Option<Finding> {
    let thunk = t.nodes.as_ref()?;
    let view = |cpu: Option<u32>, simd: Option<u32>| {
        msg!(
            "active.node-view",
            cpu = cpu.unwrap_or(0),
            simd = simd.unwrap_or(0)
        )
    };
    let mut differ = Vec::new();
    for (i, n) in sysfs.iter().enumerate() {
        let p = n.properties.as_ref();
        let ours = view(
            p.and_then(|p| p.cpu_cores_count),
            p.and_then(|p| p.simd_count),
        );
        let theirs = thunk.get(i).map(|t| view(Some(t.cpu_cores), Some(t.simds)));
        if theirs.as_deref() != Some(ours.as_str()) {
            differ.push((i, n.id, ours, theirs));
        }
    }
    if thunk.len() == sysfs.len() && differ.is_empty() {
        return None;
    }
    let mut finding = HSAKMT_NODE_MISMATCH.finding(msg!(
        "active.node-mismatch",
        thunk = thunk.len(),
        sysfs = sysfs.len(),
        differ = differ.len()
    ));
    for (i, id, ours, theirs) in differ.iter().take(8) {
        finding = finding.with(Evidence::new(
            format!("{TOPOLOGY_DIR}/nodes/{id}"),
            msg!(
                "active.node-mismatch-position",
                position = i,
                sysfs = ours,
                thunk = theirs.clone().unwrap_or_else(|| msg!("active.no-node"))
            ),
        ));
    }
    Some(finding.remedy(msg!("active.node-mismatch-remedy")))
}

/// Layer 4: ROCr, HIP and dispatch.
pub fn runtime(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(a) = &f.active else { return out };
    if let Some(r) = &a.rocr {
        rocr(f, r, &mut out);
    }
    if let Some(h) = &a.hip {
        hip(h, &mut out);
    }
    if let Some(d) = &a.dispatch {
        dispatch(d, &mut out);
    }
    out
}

/// A recorded load error in the report's language; the loader's own message is quoted data,
/// shown as it is in backticks.
fn load_error_text(e: &LoadError) -> String {
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
fn load_failure(
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

fn rocr(f: &Facts, r: &RocrResult, out: &mut Vec<Finding>) {
    if let Some(e) = &r.load_error {
        out.push(load_failure(
            e,
            [&ROCR_NOT_INSTALLED, &ROCR_LOAD_FAILED],
            "libhsa-runtime64",
            |error| msg!("active.rocr-load-error", error),
        ));
        return;
    }
    let library = r.library.clone().unwrap_or_default();
    let lib_evidence = Evidence::new(library.clone(), msg!("active.loaded"));
    let shut = r
        .shut_down
        .as_ref()
        .map(|s| Evidence::new(format!("{SOURCE}:hsa_shut_down"), s.clone()));
    match r.init.as_deref() {
        Some("HSA_STATUS_SUCCESS") => {}
        Some(status) => {
            let meaning = hsa_meaning(status).unwrap_or_else(|| msg!("active.unknown-status"));
            out.push(
                ROCR_INIT_FAILED
                    .finding(msg!("active.rocr-init-failed", status, meaning))
                    .with(lib_evidence)
                    .with(Evidence::new(
                        format!("{SOURCE}:hsa_init"),
                        status.to_owned(),
                    ))
                    .with_all(shut),
            );
            return;
        }
        None => return,
    }
    let agents = r.agents.clone().unwrap_or_default();
    let gpus: Vec<_> = agents.iter().filter(|a| a.device == "gpu").collect();
    let mut names: Vec<String> = Vec::new();
    for g in &gpus {
        if !names.contains(&g.name) {
            names.push(g.name.clone());
        }
    }
    let counted: Vec<String> = names
        .iter()
        .map(|n| format!("{} × {n}", gpus.iter().filter(|g| &g.name == n).count()))
        .collect();
    let version = r
        .version
        .map(|[major, minor]| msg!("active.rocr-version", major, minor))
        .unwrap_or_default();
    out.push(
        ROCR_ANSWERS
            .finding(msg!(
                "active.rocr-answers",
                library,
                version,
                agents = agents.len(),
                gpus = gpus.len(),
                names = if counted.is_empty() {
                    msg!("active.rocr-no-gpu")
                } else {
                    i18n::list(&counted)
                }
            ))
            .with(lib_evidence)
            .with_all(gpus.iter().map(|g| {
                Evidence::new(
                    format!(
                        "{SOURCE}:{}",
                        msg!(
                            "active.source-agent",
                            node = g.node.map_or("?".into(), |n| n.to_string())
                        )
                    ),
                    msg!(
                        "active.rocr-agent",
                        name = g.name,
                        isas = i18n::list(&g.isas),
                        pools = g.pools.unwrap_or(0)
                    ),
                )
            })),
    );
    let rocr_nodes: Vec<u32> = gpus.iter().filter_map(|g| g.node).collect();
    let missing: Vec<&Node> = gpu_nodes(f)
        .into_iter()
        .filter(|n| !rocr_nodes.contains(&n.id))
        .collect();
    if !missing.is_empty() {
        let ids: Vec<String> = missing.iter().map(|n| n.id.to_string()).collect();
        let env = &f.platform.env;
        let cause = if let Some(value) = env.get("ROCR_VISIBLE_DEVICES") {
            msg!("active.missing-cause-rocr-visible", value)
        } else if env.contains_key("HIP_VISIBLE_DEVICES")
            || env.contains_key("CUDA_VISIBLE_DEVICES")
        {
            msg!("active.missing-cause-mask")
        } else {
            msg!("active.missing-cause-unusable")
        };
        out.push(
            ROCR_AGENT_MISSING
                .finding(msg!(
                    "active.agent-missing",
                    count = missing.len(),
                    nodes = i18n::list(&ids),
                    cause
                ))
                .with_all(missing.iter().map(|n| {
                    Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes/{}", n.id),
                        n.gpu_id
                            .map_or_else(|| msg!("active.no-gpu-id"), |g| format!("gpu_id {g}")),
                    )
                }))
                .with(Evidence::new(
                    format!("{SOURCE}:hsa_iterate_agents"),
                    msg!("active.gpu-agents-on", nodes = format!("{rocr_nodes:?}")),
                )),
        );
    }
}

fn hip(h: &crate::active::HipResult, out: &mut Vec<Finding>) {
    if let Some(e) = &h.load_error {
        out.push(load_failure(
            e,
            [&HIP_NOT_INSTALLED, &HIP_FAILED],
            "libamdhip64",
            |error| msg!("active.hip-load-error", error),
        ));
        return;
    }
    let library = h.library.clone().unwrap_or_default();
    let version = |v: Option<i32>| {
        v.map_or_else(
            || msg!("active.hip-version-unknown"),
            |v| format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000),
        )
    };
    let versions = msg!(
        "active.hip-versions",
        runtime = version(h.runtime_version),
        driver = version(h.driver_version)
    );
    match h.count_status.as_deref() {
        Some("hipSuccess") => {
            let devices = h.devices.clone().unwrap_or_default();
            out.push(
                HIP_ANSWERS
                    .finding(msg!(
                        "active.hip-answers",
                        count = h.device_count.unwrap_or(0),
                        devices = i18n::list(&devices),
                        versions
                    ))
                    .with(Evidence::new(library, versions.clone())),
            );
        }
        Some(status) => {
            let meaning = hip_meaning(status).unwrap_or_else(|| msg!("active.unknown-error"));
            out.push(
                HIP_FAILED
                    .finding(msg!("active.hip-failed", status, meaning, versions))
                    .with(Evidence::new(library, versions.clone()))
                    .with(Evidence::new(
                        format!("{SOURCE}:hipGetDeviceCount"),
                        status.to_owned(),
                    )),
            );
        }
        None => {}
    }
}

/// A dispatch result in the report's language: the record keeps `ok`, `timeout` or a status name.
fn result_text(result: &DispatchOutcome) -> String {
    match result {
        DispatchOutcome::Timeout => msg!("active.dispatch-timeout-word"),
        other => other.to_string(),
    }
}

fn dispatch(results: &[DispatchResult], out: &mut Vec<Finding>) {
    let evidence = |d: &DispatchResult| {
        Evidence::new(
            format!(
                "{SOURCE}:{}",
                msg!(
                    "active.source-dispatch",
                    node = d.node.map_or("?".into(), |n| n.to_string())
                )
            ),
            match d.microseconds {
                Some(us) => msg!(
                    "active.dispatch-result-time",
                    agent = d.agent,
                    result = result_text(&d.result),
                    us
                ),
                None => msg!(
                    "active.dispatch-result",
                    agent = d.agent,
                    result = result_text(&d.result)
                ),
            },
        )
    };
    let failed: Vec<&DispatchResult> = results
        .iter()
        .filter(|d| d.result != DispatchOutcome::Ok)
        .collect();
    if failed.is_empty() {
        let times: Vec<u64> = results.iter().filter_map(|d| d.microseconds).collect();
        let range = match (times.iter().min(), times.iter().max()) {
            (Some(min), Some(max)) => msg!("active.dispatch-range", min, max),
            _ => String::new(),
        };
        out.push(
            DISPATCH_OK
                .finding(msg!("active.dispatch-ok", agents = results.len(), range))
                .with_all(results.iter().map(evidence)),
        );
        return;
    }
    let nodes: Vec<String> = failed
        .iter()
        .map(|d| {
            msg!(
                "active.dispatch-node",
                node = d.node.map_or("?".into(), |n| n.to_string()),
                result = result_text(&d.result)
            )
        })
        .collect();
    out.push(
        DISPATCH_FAILED
            .finding(msg!(
                "active.dispatch-failed",
                failed = failed.len(),
                agents = results.len(),
                nodes = i18n::list(&nodes)
            ))
            .with_all(results.iter().map(evidence))
            .remedy(msg!("active.dispatch-failed-remedy")),
    );
}
