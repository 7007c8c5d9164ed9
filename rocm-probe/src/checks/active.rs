//! The findings of the active probes (`--active`, `--dispatch`, or a fixture's `[active]`):
//! layer 2 (KFD ioctls), layer 3 (libhsakmt), layer 4 (ROCr, HIP, dispatch). Pure functions of
//! [`ActiveFacts`] and the topology. Without active results they say nothing.

use crate::active::status::{hip_meaning, hsa_meaning, hsakmt_meaning};
use crate::active::{DispatchResult, RocrResult, ThunkResult};
use crate::facts::{Facts, KFD_DEVICE};
use crate::finding::{
    DISPATCH_FAILED, DISPATCH_OK, Evidence, Finding, HIP_ANSWERS, HIP_FAILED, HIP_NOT_INSTALLED,
    HSAKMT_ANSWERS, HSAKMT_FAILED, HSAKMT_LOAD_FAILED, HSAKMT_NODE_MISMATCH, HSAKMT_NOT_INSTALLED,
    KFD_ANSWERS, KFD_CLOCK_STUCK, KFD_GPUS_HIDDEN, KFD_INTERFACE_OLD, KFD_IOCTL_FAILED,
    KFD_OPEN_FAILED, ROCR_AGENT_MISSING, ROCR_ANSWERS, ROCR_INIT_FAILED, ROCR_LOAD_FAILED,
    ROCR_NOT_INSTALLED, Status,
};
use crate::topology::{Node, NodeKind, TOPOLOGY_DIR};

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
fn open_meaning(errno: &str) -> &'static str {
    match errno {
        "ENOENT" => {
            "no such device node: amdgpu/KFD not loaded, or a container without --device=/dev/kfd"
        }
        "EACCES" | "EPERM" => {
            "permission denied: not in the group that owns /dev/kfd, or a device cgroup denies it"
        }
        "ENODEV" | "ENXIO" => "the node exists but no driver answers it",
        "EBUSY" => "the device is busy",
        _ => "the kernel refused the open",
    }
}

/// Layer 2: the KFD ioctls.
pub fn driver(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(a) = &f.active else { return out };
    let Some(open) = &a.kfd_open else { return out };
    let device = Evidence::new(format!("{SOURCE}:open {KFD_DEVICE}"), open.clone());
    if open != "ok" {
        out.push(
            KFD_OPEN_FAILED
                .finding(format!(
                    "Opening {KFD_DEVICE} read-write failed: {open} ({})",
                    open_meaning(open)
                ))
                .with(device)
                .remedy(
                    "See the layer-2 findings on /dev/kfd's owner and mode; add the user to that \
                     group (usually render) or pass the device into the container.",
                ),
        );
        return out;
    }
    let mut parts = Vec::new();
    let mut evidence = vec![device];
    if let Some([major, minor]) = a.kfd_version {
        parts.push(format!("interface {major}.{minor}"));
        evidence.push(Evidence::new(
            format!("{SOURCE}:GET_VERSION"),
            format!("{major}.{minor}"),
        ));
        let (status, why) = if major != 1 {
            (
                Some(Status::Fail),
                "libhsakmt accepts only major 1 (HSAKMT_STATUS_DRIVER_MISMATCH)",
            )
        } else if minor < 5 {
            (
                Some(Status::Warn),
                "no SVM ioctl (1.5): no HMM, no hipMallocManaged with XNACK",
            )
        } else if minor < 9 {
            (
                Some(Status::Warn),
                "no AVAILABLE_MEMORY ioctl (1.9): ROCr cannot ask KFD for free VRAM, so \
                 hipMemGetInfo reports an estimate or fails, depending on the release",
            )
        } else if minor < 13 {
            (
                Some(Status::Info),
                "no debugger interface (1.13): rocgdb of ROCm ≥ 6.0 cannot attach",
            )
        } else {
            (None, "")
        };
        if let Some(status) = status {
            out.push(
                KFD_INTERFACE_OLD
                    .finding_with(
                        status,
                        format!("KFD ioctl interface {major}.{minor}: {why}"),
                    )
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_VERSION"),
                        format!("{major}.{minor}"),
                    ))
                    .remedy(
                        "Install AMD's amdgpu-dkms for the ROCm release, or run a newer kernel.",
                    ),
            );
        }
    }
    let gpus = gpu_nodes(f);
    if let Some(seen) = &a.kfd_gpus {
        parts.push(format!("{} GPU(s) usable by this process", seen.len()));
        let hidden: Vec<&&Node> = gpus
            .iter()
            .filter(|n| n.gpu_id.is_some_and(|id| !seen.contains(&id)))
            .collect();
        if !hidden.is_empty() {
            let ids: Vec<String> = hidden.iter().map(|n| n.id.to_string()).collect();
            out.push(
                KFD_GPUS_HIDDEN
                    .finding(format!(
                        "KFD gives this process {} of {} GPU(s): node(s) {} hidden",
                        seen.len(),
                        gpus.len(),
                        ids.join(", ")
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
        parts.push(format!(
            "{:.1} GiB allocatable over {} GPU(s)",
            total as f64 / (1u64 << 30) as f64,
            memory.len()
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
            parts.push("GPU clock counters advance".to_owned());
        } else {
            let nodes: Vec<String> = gpus
                .iter()
                .filter(|n| n.gpu_id.is_some_and(|id| stuck.contains(&id)))
                .map(|n| n.id.to_string())
                .collect();
            out.push(
                KFD_CLOCK_STUCK
                    .finding(format!(
                        "The clock counter of {} GPU(s) (node(s) {}) did not advance between two \
                         reads",
                        stuck.len(),
                        nodes.join(", ")
                    ))
                    .with(Evidence::new(
                        format!("{SOURCE}:GET_CLOCK_COUNTERS"),
                        format!("gpu_ids {stuck:?}"),
                    ))
                    .remedy("Check dmesg for amdgpu errors; amd-smi reset may recover the GPU."),
            );
        }
    }
    if let Some(errors) = a.kfd_errors.as_ref().filter(|e| !e.is_empty()) {
        out.push(
            KFD_IOCTL_FAILED
                .finding(format!(
                    "{} KFD ioctl(s) failed: {}",
                    errors.len(),
                    errors.join("; ")
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
            .finding(format!("{KFD_DEVICE} answers: {}", parts.join("; ")))
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
        let rule = if e.starts_with("not installed") {
            HSAKMT_NOT_INSTALLED
        } else {
            HSAKMT_LOAD_FAILED
        };
        out.push(
            rule.finding(format!("libhsakmt: {e}"))
                .with(Evidence::new(format!("{SOURCE}:load libhsakmt"), e.clone())),
        );
        return out;
    }
    let library = t.library.clone().unwrap_or_default();
    let name = library_name("libhsakmt", &library);
    let lib_evidence = Evidence::new(library.clone(), "loaded");
    let failed = |call: &str, status: &str| {
        let meaning = hsakmt_meaning(status).unwrap_or("unknown status");
        let short = status.trim_start_matches("HSAKMT_STATUS_");
        HSAKMT_FAILED
            .finding(format!("{name} found; {call}: {short} ({meaning})"))
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
    let mut parts = vec![format!("{name} found; hsaKmtOpenKFD: SUCCESS")];
    if let Some([major, minor]) = t.version {
        parts.push(format!("KFD interface {major}.{minor}"));
    }
    if let Some(thunk_nodes) = &t.nodes {
        parts.push(format!("{} node(s)", thunk_nodes.len()));
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
        format!(
            "{} CPU cores, {} SIMDs",
            cpu.unwrap_or(0),
            simd.unwrap_or(0)
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
    let mut finding = HSAKMT_NODE_MISMATCH.finding(format!(
        "libhsakmt lists {} node(s), the KFD topology {}; {} position(s) differ",
        thunk.len(),
        sysfs.len(),
        differ.len()
    ));
    for (i, id, ours, theirs) in differ.iter().take(8) {
        finding = finding.with(Evidence::new(
            format!("{TOPOLOGY_DIR}/nodes/{id}"),
            format!(
                "position {i}: sysfs {ours}; libhsakmt {}",
                theirs.as_deref().unwrap_or("no node")
            ),
        ));
    }
    Some(finding.remedy(
        "Check that every GPU's /dev/dri render node exists in this environment and is allowed by \
         the device cgroup (a container or job given some GPUs only), and ROCR_VISIBLE_DEVICES; \
         see the layer-2 findings.",
    ))
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

fn rocr(f: &Facts, r: &RocrResult, out: &mut Vec<Finding>) {
    if let Some(e) = &r.load_error {
        let rule = if e.starts_with("not installed") {
            ROCR_NOT_INSTALLED
        } else {
            ROCR_LOAD_FAILED
        };
        out.push(rule.finding(format!("ROCr: {e}")).with(Evidence::new(
            format!("{SOURCE}:load libhsa-runtime64"),
            e.clone(),
        )));
        return;
    }
    let library = r.library.clone().unwrap_or_default();
    let lib_evidence = Evidence::new(library.clone(), "loaded");
    let shut = r
        .shut_down
        .as_ref()
        .map(|s| Evidence::new(format!("{SOURCE}:hsa_shut_down"), s.clone()));
    match r.init.as_deref() {
        Some("HSA_STATUS_SUCCESS") => {}
        Some(status) => {
            let meaning = hsa_meaning(status).unwrap_or("unknown status");
            out.push(
                ROCR_INIT_FAILED
                    .finding(format!("hsa_init: {status} ({meaning})"))
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
        .map(|[a, b]| format!(", runtime version {a}.{b}"))
        .unwrap_or_default();
    out.push(
        ROCR_ANSWERS
            .finding(format!(
                "hsa_init: HSA_STATUS_SUCCESS ({library}{version}); {} agent(s): {} GPU ({})",
                agents.len(),
                gpus.len(),
                if counted.is_empty() {
                    "none".to_owned()
                } else {
                    counted.join(", ")
                }
            ))
            .with(lib_evidence)
            .with_all(gpus.iter().map(|g| {
                Evidence::new(
                    format!(
                        "{SOURCE}:agent node {}",
                        g.node.map_or("?".into(), |n| n.to_string())
                    ),
                    format!(
                        "{}; ISAs {}; {} pool(s)",
                        g.name,
                        g.isas.join(", "),
                        g.pools.unwrap_or(0)
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
        let cause = if let Some(v) = env.get("ROCR_VISIBLE_DEVICES") {
            format!("ROCR_VISIBLE_DEVICES={v} hides them")
        } else if env.contains_key("HIP_VISIBLE_DEVICES")
            || env.contains_key("CUDA_VISIBLE_DEVICES")
        {
            "a *_VISIBLE_DEVICES mask hides them".to_owned()
        } else {
            "ROCr could not use them: an unopenable render node, or a processor this ROCr does \
             not know"
                .to_owned()
        };
        out.push(
            ROCR_AGENT_MISSING
                .finding(format!(
                    "{} GPU node(s) of the KFD topology are not among ROCr's agents (node(s) {}): \
                     likely {cause}",
                    missing.len(),
                    ids.join(", ")
                ))
                .with_all(missing.iter().map(|n| {
                    Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes/{}", n.id),
                        n.gpu_id
                            .map_or("no gpu_id in the topology".to_owned(), |g| {
                                format!("gpu_id {g}")
                            }),
                    )
                }))
                .with(Evidence::new(
                    format!("{SOURCE}:hsa_iterate_agents"),
                    format!("GPU agents on nodes {rocr_nodes:?}"),
                )),
        );
    }
}

fn hip(h: &crate::active::HipResult, out: &mut Vec<Finding>) {
    if let Some(e) = &h.load_error {
        let rule = if e.starts_with("not installed") {
            HIP_NOT_INSTALLED
        } else {
            HIP_FAILED
        };
        out.push(rule.finding(format!("HIP: {e}")).with(Evidence::new(
            format!("{SOURCE}:load libamdhip64"),
            e.clone(),
        )));
        return;
    }
    let library = h.library.clone().unwrap_or_default();
    let version = |v: Option<i32>| {
        v.map_or("unknown".to_owned(), |v| {
            format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
        })
    };
    let versions = format!(
        "runtime {}, driver {}",
        version(h.runtime_version),
        version(h.driver_version)
    );
    match h.count_status.as_deref() {
        Some("hipSuccess") => {
            let devices = h.devices.clone().unwrap_or_default();
            out.push(
                HIP_ANSWERS
                    .finding(format!(
                        "hipGetDeviceCount: {} device(s) ({}); {versions}",
                        h.device_count.unwrap_or(0),
                        devices.join(", ")
                    ))
                    .with(Evidence::new(library, versions.clone())),
            );
        }
        Some(status) => {
            let meaning = hip_meaning(status).unwrap_or("unknown error");
            out.push(
                HIP_FAILED
                    .finding(format!(
                        "hipGetDeviceCount: {status} ({meaning}); {versions}"
                    ))
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

fn dispatch(results: &[DispatchResult], out: &mut Vec<Finding>) {
    let evidence = |d: &DispatchResult| {
        Evidence::new(
            format!(
                "{SOURCE}:dispatch node {}",
                d.node.map_or("?".into(), |n| n.to_string())
            ),
            match d.microseconds {
                Some(us) => format!("{}: {} in {us} µs", d.agent, d.result),
                None => format!("{}: {}", d.agent, d.result),
            },
        )
    };
    let failed: Vec<&DispatchResult> = results.iter().filter(|d| d.result != "ok").collect();
    if failed.is_empty() {
        let times: Vec<u64> = results.iter().filter_map(|d| d.microseconds).collect();
        let range = match (times.iter().min(), times.iter().max()) {
            (Some(a), Some(b)) => format!(" in {a}–{b} µs"),
            _ => String::new(),
        };
        out.push(
            DISPATCH_OK
                .finding(format!(
                    "An AQL barrier-AND packet completed on {} GPU agent(s){range}",
                    results.len()
                ))
                .with_all(results.iter().map(evidence)),
        );
        return;
    }
    let nodes: Vec<String> = failed
        .iter()
        .map(|d| {
            format!(
                "node {} ({})",
                d.node.map_or("?".into(), |n| n.to_string()),
                d.result
            )
        })
        .collect();
    out.push(
        DISPATCH_FAILED
            .finding(format!(
                "{} of {} GPU agent(s) did not complete an AQL barrier packet: {}",
                failed.len(),
                results.len(),
                nodes.join(", ")
            ))
            .with_all(results.iter().map(evidence))
            .remedy("Check dmesg for amdgpu errors; amd-smi reset, then reboot if it persists."),
    );
}
