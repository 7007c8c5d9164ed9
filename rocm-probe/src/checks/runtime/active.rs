//! Layer 4 with active results: what ROCr and HIP answered, and the dispatch.

use crate::active::status::{hip_meaning, hsa_meaning};
use crate::active::{DispatchOutcome, DispatchResult, RocrResult};
use crate::checks::active::{SOURCE, crash_failure, gpu_nodes, kfd_hides, load_failure};
use crate::facts::Facts;
use crate::facts::topology::{Node, TOPOLOGY_DIR};
use crate::finding::{
    Action, DISPATCH_FAILED, DISPATCH_OK, Evidence, Finding, HIP_ANSWERS, HIP_FAILED,
    HIP_NOT_INSTALLED, ROCR_AGENT_MISSING, ROCR_ANSWERS, ROCR_INIT_FAILED, ROCR_LOAD_FAILED,
    ROCR_NOT_INSTALLED, RemedyStep,
};
use crate::i18n;
use crate::msg;

/// Layer 4: ROCr, HIP and dispatch.
pub fn check(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(a) = &f.active else { return out };
    if let Some(r) = &a.rocr {
        rocr(f, r, &mut out);
    }
    if let Some(h) = &a.hip {
        hip(h, &mut out);
    }
    if let Some(d) = &a.dispatch {
        dispatch(f, d, &mut out);
    }
    out
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
    if let Some(crash) = &r.crashed {
        out.push(crash_failure(
            &ROCR_INIT_FAILED,
            "libhsa-runtime64",
            &library,
            crash,
        ));
        return;
    }
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
            .with_all(gpus.iter().enumerate().map(|(i, g)| {
                Evidence::new(
                    format!(
                        "{SOURCE}:{}",
                        msg!("active.source-agent", gpu = agent_label(f, g.node, i))
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
    // A GPU KFD itself does not give this process (not in its apertures: a container given some
    // GPUs, a device cgroup) is driver.kfd-gpus-hidden's, not a runtime failure: ROCr cannot
    // see what KFD hides.
    let missing: Vec<&Node> = gpu_nodes(f)
        .into_iter()
        .filter(|n| !rocr_nodes.contains(&n.id) && !kfd_hides(f, n.gpu_id))
        .collect();
    if !missing.is_empty() {
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
                    gpus = crate::checks::gpu_names(f, missing.iter().map(|n| n.id)),
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
                    if rocr_nodes.is_empty() {
                        msg!("active.rocr-no-gpu")
                    } else {
                        msg!(
                            "active.gpu-agents-on",
                            gpus = crate::checks::gpu_names(f, rocr_nodes.iter().copied())
                        )
                    },
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
    if let Some(crash) = &h.crashed {
        out.push(crash_failure(&HIP_FAILED, "libamdhip64", &library, crash));
        return;
    }
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

/// The GPU agent ROCr enumerated `index`-th, on KFD node `node`: by its name when the topology
/// knows the node, else by its ROCr index alone (WSL's paravirtual GPU has no KFD topology).
fn agent_label(f: &Facts, node: Option<u32>, index: usize) -> String {
    node.and_then(|n| {
        f.inventory
            .as_ref()?
            .agent_name_among(n, |a| !kfd_hides(f, a.gpu_id))
    })
    .map_or_else(|| msg!("active.rocr-index", index), |n| n.to_string())
}

/// A dispatch result in the report's language: the record keeps `ok`, `timeout` or a status name.
fn result_text(result: &DispatchOutcome) -> String {
    match result {
        DispatchOutcome::Timeout => msg!("active.dispatch-timeout-word"),
        other => other.to_string(),
    }
}

fn dispatch(f: &Facts, results: &[DispatchResult], out: &mut Vec<Finding>) {
    // No GPU agent, nothing dispatched: a PASS "completed on 0 GPU agent(s)" would hide it; the
    // agents ROCr did not create are reported where ROCr's agents are compared with KFD's.
    if results.is_empty() {
        return;
    }
    let evidence = |(i, d): (usize, &DispatchResult)| {
        Evidence::new(
            format!(
                "{SOURCE}:{}",
                msg!("active.source-dispatch", gpu = agent_label(f, d.node, i))
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
                .with_all(results.iter().enumerate().map(evidence)),
        );
        return;
    }
    let nodes: Vec<String> = failed
        .iter()
        .map(|d| {
            msg!(
                "active.dispatch-node",
                gpu = d
                    .node
                    .map_or("?".into(), |n| crate::checks::gpu_names(f, [n])),
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
            .with_all(results.iter().enumerate().map(evidence))
            .remedy(msg!("active.dispatch-failed-remedy"))
            // The reason is in the kernel log (`sudo`: kernel.dmesg_restrict=1 is common).
            .step(RemedyStep::run(
                Action::ReadLog,
                "kernel log",
                "sudo dmesg | grep -i amdgpu",
                msg!("runtime.step-read-log-amdgpu"),
            )),
    );
}
