//! Layer 3 with active results: what libhsakmt answered (open, version, topology, nodes).

use crate::active::ThunkResult;
use crate::active::status::hsakmt_meaning;
use crate::checks::active::{SOURCE, crash_failure, library_name, load_failure, nodes};
use crate::facts::Facts;
use crate::facts::topology::{Node, TOPOLOGY_DIR};
use crate::finding::{
    Evidence, Finding, HSAKMT_ANSWERS, HSAKMT_FAILED, HSAKMT_LOAD_FAILED, HSAKMT_NODE_MISMATCH,
    HSAKMT_NOT_INSTALLED,
};
use crate::msg;

/// Layer 3: libhsakmt.
pub fn check(f: &Facts) -> Vec<Finding> {
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
    if let Some(crash) = &t.crashed {
        out.push(crash_failure(&HSAKMT_FAILED, "libhsakmt", &library, crash));
        return out;
    }
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
