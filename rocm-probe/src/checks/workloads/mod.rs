//! Layer 9: readiness for what the stack carries, derived from layers 1–8 and the topology.
//!
//! Nothing here reads anything: the verdicts weigh the findings below (`below`) and the
//! inventory's GPUs, memory and links. Without GPU agents there is no verdict to give (layer 1
//! already says why).

pub mod rules;

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::Facts;
use crate::facts::agent::Inventory;
use crate::facts::topology::{TOPOLOGY_DIR, Topology};
use crate::finding::{
    COMPUTE, Evidence, FRAMEWORK_READY, Finding, LLM_FIT, Layer, MULTI_GPU, NO_P2P, NO_RCCL,
    Status, Subject,
};
use crate::i18n;
use crate::msg;

/// Share of a GPU's memory the LLM rule leaves for the KV cache, activations and workspace.
pub const LLM_OVERHEAD: f64 = 0.2;
/// Bytes per parameter in fp16 and bf16.
pub const BYTES_PER_PARAMETER: u64 = 2;

/// Layer 9 findings; `below` are the findings of layers 1–8.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(inv) = f
        .inventory
        .as_ref()
        .filter(|i| i.gpu_agents().next().is_some())
    else {
        return out;
    };
    let gpus_out = gpus_out(inv, below);
    let compute = compute(inv, below, &gpus_out);
    let fail = compute.status == Status::Fail;
    out.push(compute.clone());
    // With compute failing, the other verdicts would repeat it; the frameworks still get theirs
    // (the question users ask is "will my PyTorch run").
    if !fail {
        if let Some(topology) = f.kfd.as_ref().map(|k| &k.topology) {
            out.extend(multi_gpu(f, inv, topology, &gpus_out));
        }
        out.push(llm_fit(f, inv, &gpus_out));
    }
    frameworks(f, below, &compute, &mut out);
    out
}

/// Layer 9's note when it gave no finding: there was no GPU agent to judge a workload on.
pub(crate) fn empty_note(f: &Facts) -> String {
    match f.inventory.as_ref() {
        Some(_) => msg!("workloads.note-no-gpu-agent"),
        None => msg!("workloads.note-no-kfd"),
    }
}

/// One verdict per framework found: single-GPU compute, then the layer-7 findings about it (their
/// subject names the framework and its site directory). vLLM runs on the PyTorch beside it, so
/// PyTorch's count too.
fn frameworks(f: &Facts, below: &[Finding], compute: &Finding, out: &mut Vec<Finding>) {
    let compute_deciding: Vec<&Finding> = if compute.status >= Status::Warn {
        vec![compute]
    } else {
        Vec::new()
    };
    for site in &f.frameworks.sites {
        let mut found: Vec<(String, Vec<&str>)> = Vec::new();
        let torch_version = site
            .torch
            .as_ref()
            .map(|t| t.version.clone().unwrap_or_default());
        if let Some(v) = &torch_version {
            found.push((format!("PyTorch {v}"), vec!["PyTorch"]));
        }
        if let Some(j) = &site.jax {
            let v = j
                .jax
                .as_ref()
                .or(j.jaxlib.as_ref())
                .map(|d| d.version.clone());
            found.push((format!("JAX {}", v.unwrap_or_default()), vec!["JAX"]));
        }
        if let Some(tf) = &site.tensorflow {
            let v = tf
                .dists
                .first()
                .map(|d| d.version.clone())
                .unwrap_or_default();
            found.push((format!("TensorFlow {v}"), vec!["TensorFlow"]));
        }
        if let Some(vl) = &site.vllm {
            let v = vl
                .dist
                .as_ref()
                .map(|d| d.version.clone())
                .unwrap_or_default();
            found.push((format!("vLLM {v}"), vec!["vLLM", "PyTorch"]));
        }
        if let Some(o) = &site.onnxruntime {
            let v = o
                .dists
                .first()
                .map(|d| d.version.clone())
                .unwrap_or_default();
            found.push((format!("ONNX Runtime {v}"), vec!["ONNX Runtime"]));
        }
        for (label, names) in found {
            let about: Vec<&Finding> = below
                .iter()
                .filter(|x| x.layer == Layer::Frameworks && x.status >= Status::Warn)
                .filter(|x| match &x.subject {
                    Some(Subject::Framework { name, site: s }) => {
                        s == &site.path && names.contains(&name.as_str())
                    }
                    _ => false,
                })
                .collect();
            let mut deciding = compute_deciding.clone();
            deciding.extend(about);
            let label = msg!(
                "workloads.framework-in",
                framework = label.trim_end(),
                path = site.path
            );
            out.push(
                verdict(FRAMEWORK_READY, &label, &deciding)
                    .about(Subject::framework(names[0], &site.path)),
            );
        }
    }
}

/// The findings that decide a verdict: warnings and failures of `layers`, lowest first.
pub(crate) fn deciding<'a>(below: &'a [Finding], layers: &[Layer]) -> Vec<&'a Finding> {
    below
        .iter()
        .filter(|x| layers.contains(&x.layer) && x.status >= Status::Warn)
        .collect()
}

/// A verdict from the findings that decide it; the first failure (else warning) is its cause.
pub(crate) fn verdict(rule: crate::finding::Rule, ready: &str, deciding: &[&Finding]) -> Finding {
    let worst = deciding.iter().map(|x| x.status).max();
    let Some(worst) = worst else {
        return rule.finding(msg!("workloads.verdict-ready", subject = ready));
    };
    // A verdict that follows from another names that one's cause.
    let cause = deciding
        .iter()
        .find(|x| x.status == worst)
        .map(|x| x.caused_by.unwrap_or(x.id));
    let ids: Vec<&str> = deciding.iter().map(|x| x.id).collect();
    let summary = if worst == Status::Fail {
        msg!(
            "workloads.verdict-not-ready",
            subject = ready,
            ids = i18n::list(&ids)
        )
    } else {
        msg!(
            "workloads.verdict-caveats",
            subject = ready,
            ids = i18n::list(&ids)
        )
    };
    let mut finding = rule.finding_with(worst, summary).with_all(
        deciding
            .iter()
            .map(|x| Evidence::new(format!("finding:{}", x.id), x.summary.clone())),
    );
    finding.caused_by = cause;
    finding
}

/// The layers whose findings decide single-GPU compute.
const COMPUTE_LAYERS: [Layer; 5] = [
    Layer::Hardware,
    Layer::Driver,
    Layer::Thunk,
    Layer::Runtime,
    Layer::Libraries,
];

/// GPUs taken out of use by failures about them alone (uncorrectable RAS errors on one GPU of
/// eight), with those failures: compute, multi-GPU and the LLM estimate are judged on the
/// others. Empty when a failure concerns the whole machine, or every GPU is out.
type GpusOut<'a> = BTreeMap<usize, Vec<&'a Finding>>;

fn gpus_out<'a>(inv: &Inventory, below: &'a [Finding]) -> GpusOut<'a> {
    let failures: Vec<&Finding> = deciding(below, &COMPUTE_LAYERS)
        .into_iter()
        .filter(|x| x.status == Status::Fail)
        .collect();
    let mut out = GpusOut::new();
    for x in &failures {
        match x.subject.as_ref().and_then(Subject::gpu_index) {
            Some(i) => out.entry(i).or_default().push(*x),
            None => return GpusOut::new(),
        }
    }
    if out.len() >= inv.gpus.len() {
        return GpusOut::new();
    }
    out
}

/// The display names of the GPUs out, each with the ids that took it out.
fn out_names(inv: &Inventory, gpus_out: &GpusOut) -> String {
    let names: Vec<String> = gpus_out
        .iter()
        .filter_map(|(i, fs)| {
            let ids: Vec<&str> = fs.iter().map(|x| x.id).collect();
            Some(msg!(
                "workloads.gpu-out",
                gpu = inv.gpu_name(inv.gpus.get(*i)?).to_string(),
                ids = i18n::list(&ids)
            ))
        })
        .collect();
    i18n::list(&names)
}

fn compute(inv: &Inventory, below: &[Finding], gpus_out: &GpusOut) -> Finding {
    let deciding = deciding(below, &COMPUTE_LAYERS);
    if gpus_out.is_empty() {
        return verdict(COMPUTE, &msg!("workloads.single-gpu-compute"), &deciding);
    }
    // Judged on the GPUs still in use; those out make it a warning at least, caused by their
    // failure, and the run still exits 1 on that failure.
    let rest: Vec<&Finding> = deciding
        .into_iter()
        .filter(|x| {
            x.subject
                .as_ref()
                .and_then(Subject::gpu_index)
                .is_none_or(|i| !gpus_out.contains_key(&i))
        })
        .collect();
    let subject = msg!(
        "workloads.single-gpu-compute-on",
        gpus = inv.gpus.len() - gpus_out.len(),
        total = inv.gpus.len()
    );
    let mut finding = verdict(COMPUTE, &subject, &rest);
    finding.summary = msg!(
        "workloads.without-gpus",
        verdict = finding.summary,
        gpus = out_names(inv, gpus_out)
    );
    if finding.status < Status::Warn {
        finding.status = Status::Warn;
        finding.caused_by = gpus_out.values().flatten().next().map(|x| x.id);
    }
    finding.with_all(
        gpus_out
            .values()
            .flatten()
            .map(|x| Evidence::new(format!("finding:{}", x.id), x.summary.clone())),
    )
}

/// How two physical GPUs reach each other.
type Path = crate::facts::topo::PairKind;

fn multi_gpu(f: &Facts, inv: &Inventory, topology: &Topology, gpus_out: &GpusOut) -> Vec<Finding> {
    let mut out = Vec::new();
    // Physical GPUs with at least one GPU agent, by index; node → GPU index.
    // An APU's integrated GPU shares system memory with the CPU and takes no part in
    // collectives beside discrete GPUs: only GPUs with a node not known to be integrated count.
    let integrated: BTreeSet<u32> = inv
        .gpu_agents()
        .filter(|a| a.integrated == Some(true))
        .map(|a| a.node)
        .collect();
    let gpus: Vec<&crate::facts::agent::PhysicalGpu> = inv
        .gpus
        .iter()
        .filter(|g| g.nodes.iter().any(|n| !integrated.contains(n)))
        .filter(|g| !gpus_out.contains_key(&g.index))
        .collect();
    if gpus.len() < 2 {
        return out;
    }
    // The topology's links grouped by physical GPU (the same grouping `topo` and the HTML
    // picture draw); a pair without an entry has no link: host memory.
    let paths: BTreeMap<(usize, usize), Path> =
        crate::facts::topo::gpu_pairs(&crate::facts::topo::matrix(topology), inv)
            .into_iter()
            .map(|p| ((p.a, p.b), p.kind))
            .collect();
    let path_of = |a: usize, b: usize| {
        paths
            .get(&(a.min(b), a.max(b)))
            .copied()
            .unwrap_or(Path::Host)
    };
    let mut count: BTreeMap<Path, usize> = BTreeMap::new();
    let mut host_pairs = Vec::new();
    for (i, a) in gpus.iter().enumerate() {
        for b in &gpus[i + 1..] {
            let p = path_of(a.index, b.index);
            *count.entry(p).or_default() += 1;
            if p == Path::Host {
                host_pairs.push((a, b));
            }
        }
    }
    let gpu_name = |g: &crate::facts::agent::PhysicalGpu| inv.gpu_name(g).to_string();

    // Hives: KFD links the GPUs sharing a hive_id pairwise; the summary says how each is linked.
    let mut hive_text = Vec::new();
    let matrix = crate::facts::topo::matrix(topology);
    let present = |i: usize| gpus.iter().any(|g| g.index == i);
    for (hive, links) in inv
        .hives
        .iter()
        .zip(crate::facts::topo::hive_links(&matrix, inv, present))
    {
        let hive_id = format!("{:#x}", links.hive_id);
        let lost: GpusOut = gpus_out
            .iter()
            .filter(|(i, _)| hive.gpus.contains(i))
            .map(|(i, fs)| (*i, fs.clone()))
            .collect();
        let text = if links.missing.is_empty() {
            msg!(
                "workloads.hive-complete",
                hive = hive_id,
                gpus = links.members.len()
            )
        } else {
            msg!(
                "workloads.hive-partial",
                hive = hive_id,
                gpus = links.members.len(),
                pairs = links.missing.len()
            )
        };
        // A hive a failed GPU belongs to runs collectives on the rest of it.
        hive_text.push(if lost.is_empty() {
            text
        } else {
            msg!(
                "workloads.hive-without",
                hive = text,
                gpus = out_names(inv, &lost)
            )
        });
    }
    if !host_pairs.is_empty() {
        out.push(
            NO_P2P
                .finding(msg!(
                    "workloads.no-p2p",
                    pairs = host_pairs.len(),
                    total = gpus.len() * (gpus.len() - 1) / 2
                ))
                .with_all(host_pairs.iter().take(8).map(|(a, b)| {
                    Evidence::new(
                        format!("{TOPOLOGY_DIR}/nodes/{}/p2p_links", a.nodes[0]),
                        msg!("workloads.no-p2p-link", a = gpu_name(a), b = gpu_name(b)),
                    )
                }))
                .remedy(msg!("workloads.no-p2p-remedy")),
        );
    }
    let rccl = rccl(f);
    // Without the installs captured (a topology-only fixture) RCCL's absence is unknown.
    let rccl_known = f.libraries.captured;
    if rccl.is_empty() && rccl_known {
        out.push(
            NO_RCCL
                .finding(msg!("workloads.no-rccl"))
                .with_all(
                    f.libraries
                        .installs
                        .iter()
                        .map(|i| Evidence::absent(format!("{}/librccl.so*", i.lib_dir))),
                )
                .remedy(msg!("workloads.no-rccl-remedy")),
        );
    }
    let mut parts: Vec<String> = count
        .iter()
        .rev()
        .map(|(p, n)| match p {
            Path::Xgmi => msg!("workloads.pairs-xgmi", pairs = n),
            Path::Pcie => msg!("workloads.pairs-pcie", pairs = n),
            Path::Host => msg!("workloads.pairs-host", pairs = n),
        })
        .collect();
    parts.extend(hive_text);
    // Failed GPUs outside any hive are named once here.
    let unhived: GpusOut = gpus_out
        .iter()
        .filter(|(i, _)| !inv.hives.iter().any(|h| h.gpus.contains(i)))
        .map(|(i, fs)| (*i, fs.clone()))
        .collect();
    if !unhived.is_empty() {
        parts.push(msg!(
            "workloads.multi-gpu-without",
            gpus = out_names(inv, &unhived)
        ));
    }
    let worst = out.iter().map(|x| x.status).max();
    let status = match worst {
        Some(s) if s >= Status::Warn => Status::Warn,
        _ if !gpus_out.is_empty() => Status::Warn,
        _ => Status::Pass,
    };
    let rccl_text = match rccl.first() {
        Some(path) => msg!("workloads.rccl-at", path),
        None if rccl_known => msg!("workloads.rccl-none"),
        None => msg!("workloads.rccl-unknown"),
    };
    let summary = msg!(
        "workloads.multi-gpu",
        gpus = gpus.len(),
        parts = parts.join("; "),
        rccl = rccl_text
    );
    let mut finding = MULTI_GPU
        .finding_with(status, summary)
        .with_all(rccl.iter().map(|r| Evidence::new(r.clone(), "RCCL")));
    if status == Status::Warn {
        finding.caused_by = out
            .iter()
            .find(|x| x.status == Status::Warn)
            .map(|x| x.id)
            .or_else(|| gpus_out.values().flatten().next().map(|x| x.id));
    }
    out.insert(0, finding);
    out
}

/// Where RCCL is: each install's library (a process may load any of them) and each
/// framework's bundled copy.
fn rccl(f: &Facts) -> Vec<String> {
    let mut found: BTreeSet<String> = BTreeSet::new();
    for i in &f.libraries.installs {
        if let Some(files) = i.files("rccl") {
            found.insert(format!("{}/{}", i.lib_dir, files[0]));
        }
    }
    for b in bundles(f) {
        if let Some(files) = b.libs.iter().find(|l| l.name == "rccl").map(|l| &l.files) {
            found.insert(format!("{}/{}", b.lib_dir, files[0]));
        }
    }
    found.into_iter().collect()
}

/// Every framework's bundled ROCm libraries (PyTorch's `torch/lib`, TheRock's wheels).
fn bundles(f: &Facts) -> impl Iterator<Item = &crate::facts::frameworks::Bundled> {
    f.frameworks.sites.iter().flat_map(|s| {
        s.torch
            .iter()
            .filter_map(|t| t.bundled.as_ref())
            .chain(s.rocm_sdk.iter().flat_map(|r| &r.bundled))
    })
}

/// Whole billions of parameters whose fp16 weights fit in `bytes` under the rule.
fn parameters_fitting(bytes: u64) -> f64 {
    bytes as f64 * (1.0 - LLM_OVERHEAD) / BYTES_PER_PARAMETER as f64 / 1e9
}

use crate::checks::gib;

/// Common open model sizes, in billions of parameters, for the summary's examples.
const MODEL_SIZES: [(f64, &str); 7] = [
    (1.0, "1B"),
    (8.0, "8B"),
    (14.0, "14B"),
    (32.0, "32B"),
    (70.0, "70B"),
    (123.0, "123B"),
    (405.0, "405B"),
];

fn examples(billions: f64) -> String {
    let fits: Vec<&str> = MODEL_SIZES
        .iter()
        .filter(|(p, _)| *p <= billions)
        .map(|(_, n)| *n)
        .collect();
    let next = MODEL_SIZES
        .iter()
        .find(|(p, _)| *p > billions)
        .map(|(_, n)| *n);
    match (fits.last(), next) {
        (Some(fit), Some(next)) => msg!("workloads.models-fit-not-next", fit, next),
        (Some(fit), None) => msg!("workloads.models-fit", fit),
        (None, Some(next)) => msg!("workloads.models-none-fit", next),
        (None, None) => String::new(),
    }
}

fn llm_fit(f: &Facts, inv: &Inventory, gpus_out: &GpusOut) -> Finding {
    // Each GPU agent's memory: KFD's local memory banks, else the drm node's VRAM total.
    // Only the GPUs a program would use: those the device masks leave visible, and not an
    // integrated GPU beside a discrete one, which layer 4 advises hiding
    // (`runtime.igpu-beside-dgpu`) — an estimate must not count what the report says to hide.
    let gpus: Vec<&crate::facts::agent::Agent> = inv.gpu_agents().collect();
    let view = crate::checks::runtime::visibility(f, &gpus, &f.platform.env, &mut Vec::new());
    let visible: Vec<&crate::facts::agent::Agent> = view.hip.iter().map(|&i| gpus[i]).collect();
    let beside_dgpu = visible.iter().any(|a| a.integrated == Some(false));
    let used: Vec<&crate::facts::agent::Agent> = visible
        .into_iter()
        .filter(|a| !(beside_dgpu && a.integrated == Some(true)))
        .collect();
    let left_out = gpus.len() - used.len();
    // Nor a GPU a failure of its own takes out of use.
    let (failed, used): (Vec<_>, Vec<_>) = used.into_iter().partition(|a| {
        gpus_out
            .keys()
            .any(|&i| inv.gpus.get(i).is_some_and(|g| g.nodes.contains(&a.node)))
    });
    let mut agents: Vec<(u32, u64, Evidence)> = Vec::new();
    let mut unknown: Vec<u32> = Vec::new();
    // Integrated GPUs whose memory TTM's limit caps (hardware.apu-memory-capped): the estimate
    // names the value as capped.
    let mut capped: Vec<crate::checks::hardware::platform::Cap> = Vec::new();
    // An integrated GPU whose carve-out KFD does not report (hardware.apu-carveout-unseen): the
    // memory is there, and raising TTM's limit is not what recovers it.
    let mut unseen: Option<u64> = None;
    for a in used {
        let carveout = a
            .drm_render_minor
            .and_then(|m| f.kfd.as_ref()?.render_nodes.get(&m)?.vram_total);
        if let (Some(true), Some(kfd), Some(c)) = (a.integrated, a.memory_bytes, carveout) {
            if crate::checks::hardware::carveout_unseen(kfd, c) {
                unseen = unseen.max(Some(c));
            }
        }
        let cap = crate::checks::hardware::platform::cap(f, inv, a);
        let from_kfd = a.memory_bytes.filter(|m| *m > 0).map(|m| {
            let text = match &cap {
                Some(c) => msg!("workloads.bytes-capped", bytes = m, parameter = c.parameter),
                None => msg!("workloads.bytes", bytes = m),
            };
            let e = Evidence::new(format!("{TOPOLOGY_DIR}/nodes/{}/mem_banks", a.node), text);
            (m, e)
        });
        if from_kfd.is_some() {
            capped.extend(cap);
        }
        let from_drm = || {
            let minor = a.drm_render_minor?;
            let m = f
                .kfd
                .as_ref()?
                .render_nodes
                .get(&minor)?
                .vram_total
                .filter(|m| *m > 0)?;
            let e = Evidence::new(
                format!("/dev/dri/renderD{minor}: mem_info_vram_total"),
                msg!("workloads.bytes", bytes = m),
            );
            Some((m, e))
        };
        match from_kfd.or_else(from_drm) {
            Some((m, e)) => agents.push((a.node, m, e)),
            None => unknown.push(a.node),
        }
    }
    let Some((_, one, one_evidence)) = agents.iter().max_by_key(|(_, m, _)| *m).cloned() else {
        return LLM_FIT
            .finding_with(Status::Skip, msg!("workloads.llm-fit-unknown"))
            .with_all(
                unknown
                    .iter()
                    .take(8)
                    .map(|n| Evidence::absent(format!("{TOPOLOGY_DIR}/nodes/{n}/mem_banks"))),
            );
    };
    let all: u64 = agents.iter().map(|(_, m, _)| *m).sum();
    let one_b = parameters_fitting(one);
    let all_b = parameters_fitting(all);
    let mut summary = msg!(
        "workloads.llm-fit-one",
        memory = gib(one),
        billions = format!("{one_b:.1}"),
        examples = examples(one_b)
    );
    if agents.len() > 1 {
        summary.push_str(&msg!(
            "workloads.llm-fit-all",
            gpus = agents.len(),
            memory = gib(all),
            billions = format!("{all_b:.1}"),
            examples = examples(all_b)
        ));
    }
    if !unknown.is_empty() {
        summary.push_str(&msg!("workloads.llm-fit-left-out", agents = unknown.len()));
    }
    if left_out > 0 {
        summary.push_str(&msg!("workloads.llm-fit-not-used", agents = left_out));
    }
    if !failed.is_empty() {
        summary.push_str(&msg!("workloads.llm-fit-out-of-use", agents = failed.len()));
    }
    if let Some(c) = unseen {
        summary.push_str(&msg!("workloads.llm-fit-carveout-unseen", memory = gib(c)));
    } else if let Some(c) = capped.first() {
        summary.push_str(&msg!(
            "workloads.llm-fit-capped",
            parameter = c.parameter,
            memory = gib(c.limit),
            ram = gib(c.ram)
        ));
    }
    LLM_FIT
        .finding(summary)
        .with(one_evidence)
        .with(Evidence::new(
            msg!("workloads.rule-source"),
            msg!(
                "workloads.rule",
                bytes = BYTES_PER_PARAMETER,
                share = format!("{:.0}", (1.0 - LLM_OVERHEAD) * 100.0),
                left = format!("{:.0}", LLM_OVERHEAD * 100.0)
            ),
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_llm_rule() {
        // 64 GiB MI210: 0.8 × 68.7e9 / 2 ≈ 27.5B parameters.
        let b = parameters_fitting(64 << 30);
        assert!((b - 27.487).abs() < 0.01, "{b}");
        assert_eq!(examples(b), "14B models fit, 32B do not");
        // 8 × 192 GiB MI300X: ≈ 659.7B.
        let b = parameters_fitting(8 * (192 << 30));
        assert_eq!(examples(b), "405B models fit");
        assert_eq!(examples(0.5), "not even 1B models fit");
    }
}
