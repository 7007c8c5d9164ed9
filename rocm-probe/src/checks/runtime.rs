//! Layer 4: ROCr and HIP as installed, and the environment that steers them.
//!
//! The install checks need no GPU. The GPU checks (device masks, overrides against the real
//! target, iGPU beside dGPU, release support) run only when layers 1–3 have no failure: with a
//! broken lower layer they would only repeat its consequences.

use std::collections::{BTreeMap, BTreeSet};

use crate::agent::Agent;
use crate::facts::Facts;
use crate::finding::{
    Evidence, Finding, GPU_CHECKS_SKIPPED, HSA_OVERRIDE_IGPU, HSA_OVERRIDE_MALFORMED,
    HSA_OVERRIDE_REDUNDANT, HSA_OVERRIDE_SAME_FAMILY, HSA_OVERRIDE_UNKNOWN_TARGET,
    HSA_OVERRIDE_WRONG_FAMILY, IGPU_BESIDE_DGPU, INSTALL_FILES_MALFORMED, INSTALL_FILES_UNREADABLE,
    INSTALLS_FOUND, MIXED_INSTALLS, NO_ROCM, NOT_CAPTURED, OPT_ROCM_DANGLING, RELEASE_UNKNOWN,
    ROCM_PATH_INVALID, ROCR_NOT_ON_SEARCH_PATH, Status, TARGET_DEPRECATED, TARGET_SUPPORTED,
    TARGET_UNSUPPORTED, VISIBLE_DEVICES_MASK, VISIBLE_DEVICES_OUT_OF_RANGE,
};
use crate::install::{Install, InstallFacts, OPT_ROCM};
use crate::support::{self, Support};
use crate::target::GfxVersion;

use self::env::{Selection, hip_visible, parse_override, rocr_visible};

/// The variable that overrides every GPU's gfx version.
pub const HSA_OVERRIDE_GFX_VERSION: &str = "HSA_OVERRIDE_GFX_VERSION";
/// ROCr's device mask.
pub const ROCR_VISIBLE_DEVICES: &str = "ROCR_VISIBLE_DEVICES";
/// HIP's device mask.
pub const HIP_VISIBLE_DEVICES: &str = "HIP_VISIBLE_DEVICES";
/// HIP's fallback device mask, used when `HIP_VISIBLE_DEVICES` is unset or empty.
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";
/// OpenCL's device mask (ROCclr; HIP ignores it).
pub const GPU_DEVICE_ORDINAL: &str = "GPU_DEVICE_ORDINAL";

/// Layer 4 findings; `below` are the findings of layers 1–3.
pub fn check(f: &Facts, below: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    installs(&f.installs, &mut out);
    let env = &f.platform.env;
    let Ok(overridden) = override_format(env, &mut out) else {
        // libhsakmt refuses the topology (or ROCr every GPU agent): no GPU to check.
        return out;
    };

    let gpus: Vec<&Agent> = f
        .inventory
        .as_ref()
        .map(|i| i.gpu_agents().collect())
        .unwrap_or_default();
    if let Some(cause) = below.iter().find(|x| x.status == Status::Fail) {
        let mut skipped = GPU_CHECKS_SKIPPED.finding(format!(
            "GPU-dependent runtime checks skipped: layer {} ({}) failed first",
            cause.layer.number(),
            cause.layer
        ));
        skipped.caused_by = Some(cause.id);
        out.push(skipped);
        return out;
    }
    if gpus.is_empty() {
        return out;
    }
    let view = visibility(&gpus, env, &mut out);
    let visible: Vec<&Agent> = view.hip.iter().map(|&i| gpus[i]).collect();
    if visible.is_empty() {
        return out;
    }
    if let Some(o) = overridden {
        override_checks(o, &visible, &mut out);
    }
    igpu(&gpus, &view, overridden, &mut out);
    release_support(&f.installs, &visible, overridden, &mut out);
    out
}

// ----------------------------------------------------------------------------------------------
// Installs

fn installs(facts: &InstallFacts, out: &mut Vec<Finding>) {
    if !facts.captured {
        out.push(
            NOT_CAPTURED
                .finding("ROCm installs not captured in this fixture: install checks skipped"),
        );
        return;
    }
    let problems: Vec<&crate::problem::Problem> = facts.problems.iter().collect();
    out.extend(super::hardware::problems(
        &problems,
        "ROCm install",
        [INSTALL_FILES_UNREADABLE, INSTALL_FILES_MALFORMED],
    ));
    if let Some(o) = facts.opt_rocm.as_ref().filter(|o| !o.target_exists) {
        out.push(
            OPT_ROCM_DANGLING
                .finding(format!(
                    "/opt/rocm points at {}, which does not exist",
                    o.target
                ))
                .with(Evidence::new(OPT_ROCM, chain(&o.chain)))
                .with(Evidence::absent(o.target.clone()))
                .remedy(
                    "Point /opt/rocm at an installed release (sudo update-alternatives --config \
                     rocm, or re-create the link), or reinstall ROCm.",
                ),
        );
    }
    for e in facts.env.iter().filter(|e| e.install.is_none()) {
        out.push(
            ROCM_PATH_INVALID
                .finding(format!("{}={} names no ROCm install", e.name, e.value))
                .with(Evidence::new(format!("env:{}", e.name), e.value.clone()))
                .remedy(match facts.effective() {
                    Some(i) => format!("Set {}={} or unset it.", e.name, i.prefix),
                    None => format!("Unset {}.", e.name),
                }),
        );
    }
    let with_runtime: Vec<&Install> = facts.installs.iter().filter(|i| i.libs.runtime()).collect();
    if with_runtime.is_empty() {
        let mut finding = NO_ROCM
            .finding("No ROCm userspace (ROCr or HIP) is installed: nothing can run GPU code")
            .with(Evidence::new(
                "library search path",
                facts.search_path_text(),
            ))
            .remedy(
                "Install ROCm: AMD's packages (amdgpu-install --usecase=rocm, or the rocm meta \
                 package from repo.radeon.com) or the distribution's (Debian/Ubuntu: apt install \
                 rocminfo libamdhip64-5; Fedora: dnf install rocm-hip rocminfo). A Python wheel \
                 that bundles ROCm (PyTorch for ROCm) needs only the kernel driver.",
            );
        finding = finding.with_all(facts.installs.iter().map(|i| {
            Evidence::new(
                i.prefix.clone(),
                format!(
                    "{}; no ROCr or HIP libraries in {}",
                    i.describe(),
                    i.lib_dir
                ),
            )
        }));
        if facts.installs.is_empty() {
            finding = finding.with(Evidence::absent("/opt/rocm*"));
        }
        out.push(finding);
        return;
    }
    out.push(installs_found(facts, &with_runtime));
    if facts.loaded_rocr().is_none() {
        let rocr = facts
            .effective()
            .filter(|i| i.libs.rocr.is_some())
            .or_else(|| with_runtime.iter().copied().find(|i| i.libs.rocr.is_some()));
        if let Some(i) = rocr {
            out.push(
                ROCR_NOT_ON_SEARCH_PATH
                    .finding(format!(
                        "libhsa-runtime64.so.1 of {} is not on the library search path; programs \
                         without a RUNPATH to it cannot load ROCr",
                        i.describe()
                    ))
                    .with(Evidence::new(
                        "library search path",
                        facts.search_path_text(),
                    ))
                    .remedy(format!(
                        "echo {} | sudo tee /etc/ld.so.conf.d/rocm.conf && sudo ldconfig (AMD's \
                         post-install step), or add it to LD_LIBRARY_PATH.",
                        i.lib_dir
                    )),
            );
        }
    }
    mixed(facts, out);
}

fn chain(links: &[String]) -> String {
    if links.is_empty() {
        "a directory".to_owned()
    } else {
        format!("→ {}", links.join(" → "))
    }
}

fn installs_found(facts: &InstallFacts, with_runtime: &[&Install]) -> Finding {
    let names: Vec<String> = with_runtime.iter().map(|i| i.describe()).collect();
    let loaded = match facts.loaded_rocr() {
        Some(d) => format!(
            "a process loads libhsa-runtime64.so.1 from {} ({})",
            d.dir,
            origin(&d.origin)
        ),
        None => "libhsa-runtime64.so.1 is not on the library search path".to_owned(),
    };
    let mut finding = INSTALLS_FOUND
        .finding(format!("{}; {loaded}", names.join(", ")))
        .with_all(facts.installs.iter().map(|i| {
            let version = match (&i.version, &i.version_source) {
                (Some(v), Some(s)) => format!("ROCm {v} (from {s})"),
                _ => "version unknown".to_owned(),
            };
            let via = if i.via.is_empty() {
                "not referenced".to_owned()
            } else {
                format!("reached via {}", i.via.join(", "))
            };
            Evidence::new(
                i.prefix.clone(),
                format!("{version}; {}; {via}", i.libs.describe()),
            )
        }));
    if let Some(o) = &facts.opt_rocm {
        finding = finding.with(Evidence::new(OPT_ROCM, chain(&o.chain)));
    }
    if let Some(d) = facts.loaded_rocr() {
        let lib = d.libs.rocr.as_ref().expect("loaded_rocr has ROCr");
        finding = finding.with(Evidence::new(lib.path(), lib.describe()));
    }
    finding
}

fn origin(origin: &str) -> String {
    match origin {
        "default" => "default library directory".to_owned(),
        "LD_LIBRARY_PATH" => "LD_LIBRARY_PATH".to_owned(),
        file => format!("listed in {file}"),
    }
}

fn mixed(facts: &InstallFacts, out: &mut Vec<Finding>) {
    let reachable: Vec<&Install> = facts
        .reachable()
        .filter(|i| i.libs.runtime() || i.version.is_some())
        .collect();
    if reachable.len() < 2 {
        return;
    }
    // Keep the install /opt/rocm names, else the newest.
    let keep = facts
        .opt_rocm
        .as_ref()
        .and_then(|o| o.install)
        .and_then(|i| facts.installs.get(i))
        .filter(|i| !i.via.is_empty())
        .or_else(|| reachable.iter().copied().max_by_key(|i| i.version))
        .expect("two reachable installs");
    let mut steps: Vec<String> = Vec::new();
    for i in reachable.iter().filter(|i| i.prefix != keep.prefix) {
        for via in &i.via {
            let step = if via == OPT_ROCM {
                format!(
                    "point /opt/rocm at {} (sudo update-alternatives --config rocm)",
                    keep.prefix
                )
            } else if via == "ROCM_PATH" || via == "HIP_PATH" {
                format!("set {via}={} or unset it", keep.prefix)
            } else if let Some(dir) = via
                .strip_prefix("LD_LIBRARY_PATH (")
                .and_then(|d| d.strip_suffix(')'))
            {
                format!("remove {dir} from LD_LIBRARY_PATH")
            } else if via.starts_with("default library path") {
                "remove the distribution's ROCm packages, or the /opt install, so that one \
                 release is left"
                    .to_owned()
            } else if let Some((file, _)) = via.split_once(" (") {
                format!("remove the entry from {file} and run sudo ldconfig")
            } else {
                format!("drop {via}")
            };
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
    }
    let versions: Vec<String> = reachable
        .iter()
        .map(|i| {
            i.version.map_or_else(
                || format!("unknown version at {}", i.prefix),
                |v| format!("{v} at {}", i.prefix),
            )
        })
        .collect();
    out.push(
        MIXED_INSTALLS
            .finding(format!(
                "{} ROCm installs are reachable by one process ({}): libraries and their data \
                 files can come from different releases",
                reachable.len(),
                versions.join(", ")
            ))
            .with_all(
                reachable
                    .iter()
                    .map(|i| Evidence::new(i.prefix.clone(), format!("via {}", i.via.join(", ")))),
            )
            .remedy(format!(
                "Keep {} and drop the other references: {}.",
                keep.describe(),
                steps.join("; ")
            )),
    );
}

// ----------------------------------------------------------------------------------------------
// HSA_OVERRIDE_GFX_VERSION

/// Processors in ROCr's ISA table (`isa.cpp`: ROCR-Runtime at ROCm 6.3, plus gfx950 and gfx1153
/// from rocm-systems).
const ROCR_PROCESSORS: &[&str] = &[
    "gfx700", "gfx701", "gfx702", "gfx801", "gfx802", "gfx803", "gfx805", "gfx810", "gfx900",
    "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx940", "gfx941",
    "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031",
    "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102",
    "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201",
];

/// The family whose members can share code objects through an override: from GFX10 on, one
/// major.minor (gfx103x, gfx110x, gfx115x, gfx120x); on GFX9 the LLVM generic groups, with gfx908
/// and gfx90a on their own (they have no generic target); before GFX9, major.minor.
pub fn family(g: GfxVersion) -> String {
    if g.major == 9 {
        let name = g.name();
        return match name.as_str() {
            "gfx900" | "gfx902" | "gfx904" | "gfx906" | "gfx909" | "gfx90c" => "gfx9".to_owned(),
            "gfx940" | "gfx941" | "gfx942" | "gfx950" => "gfx9-4".to_owned(),
            _ => name,
        };
    }
    format!("gfx{}{:x}", g.major, g.minor)
}

/// Reports a malformed or unknown override. `Ok` with the override when ROCr can use it (or
/// `None` when unset); `Err` when it leaves ROCr without GPUs.
fn override_format(
    env: &BTreeMap<String, String>,
    out: &mut Vec<Finding>,
) -> Result<Option<GfxVersion>, ()> {
    let Some(value) = env.get(HSA_OVERRIDE_GFX_VERSION) else {
        return Ok(None);
    };
    let evidence = Evidence::new(
        format!("env:{HSA_OVERRIDE_GFX_VERSION}"),
        format!("{value:?}"),
    );
    match parse_override(value) {
        Err(why) => {
            out.push(
                HSA_OVERRIDE_MALFORMED
                    .finding(format!(
                        "HSA_OVERRIDE_GFX_VERSION={value:?} is {why}: libhsakmt rejects it and \
                         ROCr then sees no GPU"
                    ))
                    .with(evidence)
                    .remedy(
                        "Write MAJOR.MINOR.STEPPING with nothing around it (10.3.0 for gfx1030, \
                         11.0.0 for gfx1100), or unset the variable (`unset \
                         HSA_OVERRIDE_GFX_VERSION`; in a container, do not pass it empty).",
                    ),
            );
            Err(())
        }
        Ok(g) if !ROCR_PROCESSORS.contains(&g.name().as_str()) => {
            out.push(
                HSA_OVERRIDE_UNKNOWN_TARGET
                    .finding(format!(
                        "HSA_OVERRIDE_GFX_VERSION={value} names {}, a processor ROCr does not \
                         know: GPU agent creation fails with HSA_STATUS_ERROR_INVALID_ISA",
                        g.name()
                    ))
                    .with(evidence)
                    .remedy(
                        "Name an existing sibling of the GPU (10.3.0 for RDNA 2, 11.0.0 for RDNA \
                         3) or unset the variable.",
                    ),
            );
            Err(())
        }
        Ok(g) => Ok(Some(g)),
    }
}

fn override_checks(o: GfxVersion, visible: &[&Agent], out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<(u8, String), Vec<&Agent>> = BTreeMap::new();
    for a in visible {
        let Some(g) = a.gfx else { continue };
        let kind = if g == o {
            0
        } else if family(g) == family(o) {
            1
        } else {
            2
        };
        groups.entry((kind, g.name())).or_default().push(a);
    }
    let value = format!("{}.{}.{}", o.major, o.minor, o.stepping);
    for ((kind, real), agents) in groups {
        let nodes = node_list(&agents);
        let evidence = agents.iter().map(|a| {
            Evidence::new(
                format!("{}/nodes/{}", crate::topology::TOPOLOGY_DIR, a.node),
                format!(
                    "{real}{}",
                    a.marketing_name
                        .as_deref()
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default()
                ),
            )
        });
        let env = Evidence::new(format!("env:{HSA_OVERRIDE_GFX_VERSION}"), value.clone());
        let finding = match kind {
            0 => HSA_OVERRIDE_REDUNDANT
                .finding(format!(
                    "HSA_OVERRIDE_GFX_VERSION={value} is the {real} GPU's own version ({nodes}): no \
                     effect on it"
                ))
                .with(env)
                .with_all(evidence),
            1 => HSA_OVERRIDE_SAME_FAMILY
                .finding(format!(
                    "HSA_OVERRIDE_GFX_VERSION={value} runs the {real} GPU ({nodes}) as {}: the \
                     usual workaround for a target prebuilt libraries lack, unsupported by AMD",
                    o.name()
                ))
                .with(env)
                .with_all(evidence)
                .remedy(format!(
                    "Keep it if programs run correctly; better, use a build with code for {real} \
                     (PyTorch/TheRock nightlies, a library rebuilt with --offload-arch={real}) and \
                     unset the override."
                )),
            _ => HSA_OVERRIDE_WRONG_FAMILY
                .finding(format!(
                    "HSA_OVERRIDE_GFX_VERSION={value} makes the {real} GPU ({nodes}) run {} code, \
                     another family: kernels fail with HSA_STATUS_ERROR_INVALID_ISA or memory \
                     faults",
                    o.name()
                ))
                .with(env)
                .with_all(evidence)
                .remedy(format!(
                    "Unset HSA_OVERRIDE_GFX_VERSION and use a build with code for {real}, or \
                     override only within {real}'s family ({}).",
                    family_hint(real.as_str())
                )),
        };
        out.push(finding);
    }
}

fn family_hint(real: &str) -> String {
    let Some(g) = GfxVersion::from_name(real) else {
        return "none known".to_owned();
    };
    let siblings: Vec<&str> = ROCR_PROCESSORS
        .iter()
        .copied()
        .filter(|p| *p != real)
        .filter(|p| GfxVersion::from_name(p).is_some_and(|x| family(x) == family(g)))
        .collect();
    if siblings.is_empty() {
        "it has no siblings".to_owned()
    } else {
        siblings
            .iter()
            .filter_map(|p| GfxVersion::from_name(p))
            .map(|x| format!("{}.{}.{} = {}", x.major, x.minor, x.stepping, x.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn node_list(agents: &[&Agent]) -> String {
    let nodes: Vec<String> = agents.iter().map(|a| a.node.to_string()).collect();
    if nodes.len() == 1 {
        format!("node {}", nodes[0])
    } else {
        format!("nodes {}", nodes.join(", "))
    }
}

// ----------------------------------------------------------------------------------------------
// Device masks

/// Which GPUs ROCr and HIP expose, as indices into the GPU agents in node order.
struct View {
    /// After HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES), in HIP's order.
    hip: Vec<usize>,
    /// Names of the mask variables in effect.
    masks: Vec<&'static str>,
}

fn visibility(gpus: &[&Agent], env: &BTreeMap<String, String>, out: &mut Vec<Finding>) -> View {
    let all: Vec<usize> = (0..gpus.len()).collect();
    let uuids = |list: &[usize]| -> Vec<Option<String>> {
        list.iter().map(|&i| gpus[i].uuid.clone()).collect()
    };
    let mut problems: Vec<Evidence> = Vec::new();
    let mut masks = Vec::new();
    let mut note = |name: &str, value: &str, s: &Selection, over: &[usize]| {
        let mut bad = Vec::new();
        if let Some((token, why)) = &s.stopped_at {
            bad.push(format!(
                "entry {token:?} {why}; it and every entry after it are dropped"
            ));
        }
        for token in &s.ignored {
            bad.push(format!("entry {token:?} is {}", s.ignored_reason));
        }
        if !bad.is_empty() {
            problems.push(Evidence::new(
                format!("env:{name}"),
                format!(
                    "{value:?}: {} (it selects {} of {} GPUs)",
                    bad.join("; "),
                    s.visible.len(),
                    over.len()
                ),
            ));
        }
    };

    let rocr = match env.get(ROCR_VISIBLE_DEVICES) {
        Some(v) => {
            masks.push(ROCR_VISIBLE_DEVICES);
            let s = rocr_visible(v, &uuids(&all));
            note(ROCR_VISIBLE_DEVICES, v, &s, &all);
            s.visible.clone()
        }
        None => all.clone(),
    };
    let hip_var = [HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES]
        .into_iter()
        .find(|n| env.get(*n).is_some_and(|v| !v.is_empty()));
    let hip = match hip_var {
        Some(name) => {
            masks.push(name);
            let v = &env[name];
            let s = hip_visible(v, &uuids(&rocr));
            note(name, v, &s, &rocr);
            s.visible.iter().map(|&i| rocr[i]).collect()
        }
        None => rocr.clone(),
    };
    let mut ocl_none = false;
    if let Some(v) = env.get(GPU_DEVICE_ORDINAL).filter(|v| !v.is_empty()) {
        masks.push(GPU_DEVICE_ORDINAL);
        let s = hip_visible(v, &uuids(&rocr));
        ocl_none = s.visible.is_empty();
        note(GPU_DEVICE_ORDINAL, v, &s, &rocr);
    }

    let describe = |list: &[usize]| -> String {
        if list.is_empty() {
            return "no GPU".to_owned();
        }
        list.iter()
            .enumerate()
            .map(|(k, &i)| {
                let a = gpus[i];
                format!(
                    "{k}: node {} {}{}",
                    a.node,
                    a.name.as_deref().unwrap_or("gfx?"),
                    a.uuid
                        .as_deref()
                        .map(|u| format!(" {u}"))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let values: Vec<String> = masks
        .iter()
        .map(|n| format!("{n}={}", env.get(*n).map(String::as_str).unwrap_or("")))
        .collect();
    if !problems.is_empty() {
        let status = if hip.is_empty() {
            Status::Fail
        } else {
            VISIBLE_DEVICES_OUT_OF_RANGE.status
        };
        let summary = if hip.is_empty() {
            format!(
                "{}: HIP programs see no GPU (hipErrorNoDevice, \"no ROCm-capable device is \
                 detected\")",
                values.join(" ")
            )
        } else {
            format!(
                "{}: an entry names no GPU; HIP programs see {} of {} GPUs",
                values.join(" "),
                hip.len(),
                gpus.len()
            )
        };
        let remedy = if masks.contains(&ROCR_VISIBLE_DEVICES) && hip_var.is_some() {
            "HIP's indices count the GPUs ROCR_VISIBLE_DEVICES leaves: use one mask only \
             (ROCR_VISIBLE_DEVICES, which works for every ROCm program) and name GPUs by index in \
             KFD node order or by UUID (GPU-…)."
        } else {
            "Name only existing GPUs, comma-separated, by index (0-based, KFD node order) or by \
             UUID (GPU-…); ranges such as 0-3 are not understood. Unset the variable to see every \
             GPU."
        };
        out.push(
            VISIBLE_DEVICES_OUT_OF_RANGE
                .finding_with(status, summary)
                .with_all(problems)
                .with(Evidence::new("GPUs (node order)", describe(&all)))
                .with(Evidence::new("ROCr devices", describe(&rocr)))
                .with(Evidence::new("HIP devices", describe(&hip)))
                .remedy(remedy),
        );
    } else if !masks.is_empty() {
        let mut finding = VISIBLE_DEVICES_MASK
            .finding(format!(
                "{}: ROCr exposes {} and HIP {} of {} GPUs{}",
                values.join(" "),
                rocr.len(),
                hip.len(),
                gpus.len(),
                if ocl_none { "; OpenCL none" } else { "" }
            ))
            .with(Evidence::new("GPUs (node order)", describe(&all)))
            .with(Evidence::new("ROCr devices", describe(&rocr)))
            .with(Evidence::new("HIP devices", describe(&hip)));
        if let (Some(h), Some(c)) = (env.get(HIP_VISIBLE_DEVICES), env.get(CUDA_VISIBLE_DEVICES)) {
            if !h.is_empty() {
                finding = finding.with(Evidence::new(
                    format!("env:{CUDA_VISIBLE_DEVICES}"),
                    format!("{c:?} (ignored: HIP_VISIBLE_DEVICES is set)"),
                ));
            }
        }
        out.push(finding);
    }
    View { hip, masks }
}

// ----------------------------------------------------------------------------------------------
// iGPU beside dGPU

fn igpu(gpus: &[&Agent], view: &View, overridden: Option<GfxVersion>, out: &mut Vec<Finding>) {
    let integrated = |i: &usize| gpus[*i].integrated == Some(true);
    let discrete = |i: &usize| gpus[*i].integrated == Some(false);
    let visible_igpus: Vec<usize> = view.hip.iter().copied().filter(integrated).collect();
    if visible_igpus.is_empty() || !view.hip.iter().any(discrete) {
        return;
    }
    // The mask that keeps the discrete GPUs: by index in node order (= ROCr's order without a
    // mask) and by UUID, which does not depend on the order.
    let dgpus: Vec<usize> = (0..gpus.len()).filter(discrete).collect();
    let by_index = dgpus
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let by_uuid: Option<String> = dgpus
        .iter()
        .map(|&i| gpus[i].uuid.clone())
        .collect::<Option<Vec<_>>>()
        .map(|u| u.join(","));
    let names = |list: &[usize]| -> String {
        list.iter()
            .map(|&i| {
                let a = gpus[i];
                format!(
                    "{} ({}, node {})",
                    a.marketing_name.as_deref().unwrap_or("GPU"),
                    a.name.as_deref().unwrap_or("gfx?"),
                    a.node
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mask = if view.masks.is_empty() {
        format!(
            "export HIP_VISIBLE_DEVICES={by_index} (HIP programs: PyTorch, llama.cpp); or \
             ROCR_VISIBLE_DEVICES={by_index} to hide the iGPU from every ROCm program{}",
            by_uuid
                .as_deref()
                .map(|u| format!(" (by UUID, independent of order: ROCR_VISIBLE_DEVICES={u})"))
                .unwrap_or_default()
        )
    } else {
        format!(
            "export ROCR_VISIBLE_DEVICES={} and unset {} (HIP's indices count the GPUs ROCr \
             leaves)",
            by_uuid.clone().unwrap_or_else(|| by_index.clone()),
            view.masks
                .iter()
                .filter(|m| **m != ROCR_VISIBLE_DEVICES)
                .copied()
                .collect::<Vec<_>>()
                .join(" and ")
        )
    };
    let evidence = |a: &Agent| {
        Evidence::new(
            format!("{}/nodes/{}", crate::topology::TOPOLOGY_DIR, a.node),
            format!(
                "{}{}, {}{}",
                a.name.as_deref().unwrap_or("gfx?"),
                a.marketing_name
                    .as_deref()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default(),
                if a.integrated == Some(true) {
                    "integrated"
                } else {
                    "discrete"
                },
                a.uuid
                    .as_deref()
                    .map(|u| format!(", {u}"))
                    .unwrap_or_default()
            ),
        )
    };
    out.push(
        IGPU_BESIDE_DGPU
            .finding(format!(
                "The integrated GPU {} is visible beside the discrete {}: programs may place \
                 work on it",
                names(&visible_igpus),
                names(
                    &view
                        .hip
                        .iter()
                        .copied()
                        .filter(discrete)
                        .collect::<Vec<_>>()
                )
            ))
            .with_all(view.hip.iter().map(|&i| evidence(gpus[i])))
            .remedy(mask.clone()),
    );
    if let Some(o) = overridden {
        out.push(
            HSA_OVERRIDE_IGPU
                .finding(format!(
                    "HSA_OVERRIDE_GFX_VERSION makes the integrated GPU {} run {} code too",
                    names(&visible_igpus),
                    o.name()
                ))
                .with(Evidence::new(
                    format!("env:{HSA_OVERRIDE_GFX_VERSION}"),
                    format!("{}.{}.{}", o.major, o.minor, o.stepping),
                ))
                .with_all(visible_igpus.iter().map(|&i| evidence(gpus[i])))
                .remedy(format!(
                    "Hide the iGPU: {mask}. From ROCm 6.3 the override can also be given per KFD \
                     node instead: {}.",
                    dgpus
                        .iter()
                        .map(|&i| format!(
                            "HSA_OVERRIDE_GFX_VERSION_{}={}.{}.{}",
                            gpus[i].node, o.major, o.minor, o.stepping
                        ))
                        .collect::<Vec<_>>()
                        .join(" ")
                )),
        );
    }
}

// ----------------------------------------------------------------------------------------------
// Release support

fn release_support(
    facts: &InstallFacts,
    visible: &[&Agent],
    overridden: Option<GfxVersion>,
    out: &mut Vec<Finding>,
) {
    if !facts.captured || !facts.installs.iter().any(|i| i.libs.runtime()) {
        return;
    }
    let Some(install) = facts.effective() else {
        out.push(
            RELEASE_UNKNOWN.finding(
                "Which ROCm install a process uses cannot be told: GPU support not checked",
            ),
        );
        return;
    };
    let Some(version) = install.version else {
        out.push(
            RELEASE_UNKNOWN
                .finding(format!(
                    "The release of {} is unknown (no .info/version, no version in the library \
                     names): GPU support not checked",
                    install.prefix
                ))
                .with(Evidence::new(
                    install.lib_dir.clone(),
                    install.libs.describe(),
                )),
        );
        return;
    };
    let Some(release) = support::release(&version) else {
        out.push(
            RELEASE_UNKNOWN
                .finding(format!(
                    "ROCm {version} is not in the support table (rows: {}): GPU support not \
                     checked",
                    support::RELEASES
                        .iter()
                        .map(|r| r.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .with(Evidence::new(
                    install
                        .version_source
                        .clone()
                        .unwrap_or_else(|| install.prefix.clone()),
                    version.to_string(),
                )),
        );
        return;
    };
    let targets: BTreeSet<String> = visible.iter().filter_map(|a| a.name.clone()).collect();
    let nodes_of = |t: &str| -> String {
        let list: Vec<&Agent> = visible
            .iter()
            .copied()
            .filter(|a| a.name.as_deref() == Some(t))
            .collect();
        node_list(&list)
    };
    let source = Evidence::new(
        "support table",
        format!("ROCm {}: {}", release.name(), release.source),
    );
    let listed = format!(
        "ROCm {version} supports {}",
        release.supported(version.patch).join(", ")
    );
    let mut supported = Vec::new();
    for t in &targets {
        match release.status(t, version.patch) {
            Some(Support::Supported) => supported.push(t.clone()),
            Some(Support::Deprecated) => out.push(
                TARGET_DEPRECATED
                    .finding(format!(
                        "{t} ({}) is deprecated in ROCm {}: it works, a later release drops it",
                        nodes_of(t),
                        release.name()
                    ))
                    .with(source.clone()),
            ),
            status => {
                let how = if status == Some(Support::Unsupported) {
                    "listed as unsupported"
                } else {
                    "not listed"
                };
                let via = overridden.filter(|o| {
                    release.status(&o.name(), version.patch) == Some(Support::Supported)
                });
                let finding = match via {
                    Some(o) => TARGET_UNSUPPORTED.finding_with(
                        Status::Info,
                        format!(
                            "{t} ({}) is {how} for ROCm {}; HSA_OVERRIDE_GFX_VERSION runs it as \
                             the supported {}",
                            nodes_of(t),
                            release.name(),
                            o.name()
                        ),
                    ),
                    None => TARGET_UNSUPPORTED
                        .finding(format!(
                            "{t} ({}) is {how} for ROCm {}: prebuilt ROCm libraries may have no \
                             code for it",
                            nodes_of(t),
                            release.name()
                        ))
                        .remedy(format!(
                            "Use a GPU the release supports ({listed}), a build that targets \
                             {t} (PyTorch/TheRock nightlies, libraries rebuilt with \
                             --offload-arch={t}), or a ROCm release that lists it."
                        )),
                };
                out.push(
                    finding.with(source.clone()).with(Evidence::new(
                        install
                            .version_source
                            .clone()
                            .unwrap_or_else(|| install.prefix.clone()),
                        version.to_string(),
                    )),
                );
            }
        }
    }
    if !supported.is_empty() {
        out.push(
            TARGET_SUPPORTED
                .finding(format!(
                    "{} supported by ROCm {version}",
                    supported
                        .iter()
                        .map(|t| format!("{t} ({})", nodes_of(t)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .with(source),
        );
    }
}

/// Parsers for the variables ROCr, HIP and libhsakmt read, each following its reader's code.
pub mod env {
    use crate::target::GfxVersion;

    /// `HSA_OVERRIDE_GFX_VERSION` as libhsakmt reads it: `sscanf(v, "%u.%u.%u%c")` must give
    /// exactly three numbers (so nothing may follow, not even a space), then major ≤ 63, minor
    /// and stepping ≤ 255 (rocm_agent_enumerator applies the same limits). `%u` skips leading
    /// whitespace and takes a sign; a minus is refused here, since it wraps to a huge number.
    pub fn parse_override(value: &str) -> Result<GfxVersion, String> {
        if value.is_empty() {
            return Err("empty".to_owned());
        }
        let mut parts = Vec::new();
        let mut rest = value;
        for i in 0..3 {
            let s = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
            let s = s.strip_prefix('+').unwrap_or(s);
            let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                return Err("not of the form MAJOR.MINOR.STEPPING".to_owned());
            }
            let n: u32 = s[..digits]
                .parse()
                .map_err(|_| "a number too large".to_owned())?;
            parts.push(n);
            rest = &s[digits..];
            if i < 2 {
                rest = rest
                    .strip_prefix('.')
                    .ok_or_else(|| "not of the form MAJOR.MINOR.STEPPING".to_owned())?;
            }
        }
        if !rest.is_empty() {
            return Err(format!("followed by {rest:?}"));
        }
        let (major, minor, stepping) = (parts[0], parts[1], parts[2]);
        if major > 63 || minor > 255 || stepping > 255 {
            return Err("out of range (major ≤ 63, minor and stepping ≤ 255)".to_owned());
        }
        Ok(GfxVersion {
            major,
            minor,
            stepping,
        })
    }

    /// Which GPUs a mask selects.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Selection {
        /// Indices into the list the mask applies to, in the mask's order.
        pub visible: Vec<usize>,
        /// The entry where reading stopped and why; every entry after it is dropped too.
        pub stopped_at: Option<(String, String)>,
        /// Entries never read (ROCr reads at most as many entries as there are GPUs) or
        /// skipped (HIP skips repeats).
        pub ignored: Vec<String>,
        /// Why `ignored` entries were not used.
        pub ignored_reason: &'static str,
    }

    /// `ROCR_VISIBLE_DEVICES` as ROCr's `RvdFilter` reads it. `uuids` are the GPUs' UUIDs in
    /// node order (`GPU-<16 hex>`, `None` when the GPU has none). Entries are split at commas,
    /// upper-cased and trimmed; an entry starting with `G` is a UUID (5–20 characters, a prefix
    /// matching exactly one GPU), anything else a number in C's `strtol(…, 0)` syntax. Reading
    /// stops at the first entry that is malformed, out of range, ambiguous or a repeat; only as
    /// many entries as there are GPUs are read; an empty value selects no GPU.
    pub fn rocr_visible(value: &str, uuids: &[Option<String>]) -> Selection {
        let mut s = Selection {
            visible: Vec::new(),
            stopped_at: None,
            ignored: Vec::new(),
            ignored_reason: "beyond the number of GPUs, so ROCr never reads it",
        };
        if value.is_empty() {
            s.stopped_at = Some((String::new(), "(an empty value) hides every GPU".to_owned()));
            return s;
        }
        let mut tokens: Vec<String> = value
            .split(',')
            .map(|t| t.to_ascii_uppercase().trim().to_owned())
            .collect();
        // getline() yields no empty token after a trailing comma.
        if value.ends_with(',') {
            tokens.pop();
        }
        let n = uuids.len();
        let upper: Vec<Option<String>> = uuids
            .iter()
            .map(|u| u.as_ref().map(|u| u.to_ascii_uppercase()))
            .collect();
        for (k, token) in tokens.iter().enumerate() {
            if k >= n {
                s.ignored.push(token.clone());
                continue;
            }
            if s.stopped_at.is_some() {
                continue;
            }
            let index = if token.is_empty() {
                Err("is empty".to_owned())
            } else if token.starts_with('G') {
                uuid_index(token, &upper)
            } else {
                match strtol(token) {
                    Some(i) if i < 0 || i >= n as i64 => Err(format!(
                        "is out of range: there {} {n} GPU{}",
                        if n == 1 { "is" } else { "are" },
                        if n == 1 { "" } else { "s" }
                    )),
                    Some(i) => Ok(i as usize),
                    None => Err(format!(
                        "is neither an index nor a UUID{}",
                        if token.contains('-') && !token.starts_with('-') {
                            " (ranges are not supported)"
                        } else {
                            ""
                        }
                    )),
                }
            };
            match index {
                Ok(i) if s.visible.contains(&i) => {
                    s.stopped_at = Some((token.clone(), "repeats a GPU already selected".into()));
                }
                Ok(i) => s.visible.push(i),
                Err(why) => s.stopped_at = Some((token.clone(), why)),
            }
        }
        s
    }

    fn uuid_index(token: &str, uuids: &[Option<String>]) -> Result<usize, String> {
        if !(5..=20).contains(&token.len()) {
            return Err("is not a GPU UUID (GPU- and up to 16 hex digits)".to_owned());
        }
        let hits: Vec<usize> = uuids
            .iter()
            .enumerate()
            .filter(|(_, u)| u.as_deref().is_some_and(|u| u.starts_with(token)))
            .map(|(i, _)| i)
            .collect();
        match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err("matches no GPU's UUID".to_owned()),
            _ => Err("matches more than one GPU's UUID".to_owned()),
        }
    }

    /// C's `strtol(s, &end, 0)` with `*end == '\0'` required: optional sign, `0x` hex, leading
    /// `0` octal, else decimal.
    fn strtol(s: &str) -> Option<i64> {
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (radix, digits) =
            if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                (16, h)
            } else if body.len() > 1 && body.starts_with('0') {
                (8, &body[1..])
            } else {
                (10, body)
            };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let v = i64::from_str_radix(digits, radix).ok()?;
        Some(if neg { -v } else { v })
    }

    /// `HIP_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` (and OpenCL's `GPU_DEVICE_ORDINAL`) as
    /// HIP's ROCm device layer reads them. `uuids` are the GPUs ROCr exposes, in ROCr's order.
    /// Entries are split at commas without trimming; an entry containing `GPU-` selects the
    /// first GPU whose UUID contains it (case-sensitive); anything else must be a plain decimal
    /// index (`01`, `+1`, ` 1` are refused). Reading stops at the first bad entry; repeats are
    /// skipped. An empty value is treated as unset by HIP and is not passed here.
    pub fn hip_visible(value: &str, uuids: &[Option<String>]) -> Selection {
        let mut s = Selection {
            visible: Vec::new(),
            stopped_at: None,
            ignored: Vec::new(),
            ignored_reason: "a repeat, which HIP skips",
        };
        let mut tokens: Vec<&str> = value.split(',').collect();
        if value.ends_with(',') {
            tokens.pop();
        }
        let n = uuids.len();
        for token in tokens {
            let index = if token.contains("GPU-") {
                uuids
                    .iter()
                    .position(|u| u.as_deref().unwrap_or("GPU-XX").contains(token))
                    .ok_or_else(|| "matches no GPU's UUID".to_owned())
            } else {
                match token.parse::<usize>() {
                    Ok(i) if i.to_string() == token && i < n => Ok(i),
                    Ok(i) if i.to_string() == token => Err(format!(
                        "is out of range: {n} GPU{} {} visible to HIP",
                        if n == 1 { "" } else { "s" },
                        if n == 1 { "is" } else { "are" }
                    )),
                    _ => Err(format!(
                        "is not a plain index or UUID{}",
                        if token.contains('-') && !token.starts_with('-') {
                            " (ranges are not supported)"
                        } else {
                            ""
                        }
                    )),
                }
            };
            match index {
                Ok(i) if s.visible.contains(&i) => s.ignored.push(token.to_owned()),
                Ok(i) => s.visible.push(i),
                Err(why) => {
                    s.stopped_at = Some((token.to_owned(), why));
                    break;
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::env::*;
    use super::*;

    fn v(s: &str) -> GfxVersion {
        GfxVersion::from_name(s).unwrap()
    }

    #[test]
    fn override_follows_libhsakmt_sscanf() {
        let ok = |s: &str| parse_override(s).map(|g| g.name());
        assert_eq!(ok("11.0.0"), Ok("gfx1100".into()));
        assert_eq!(ok("10.3.0"), Ok("gfx1030".into()));
        assert_eq!(ok("9.0.10"), Ok("gfx90a".into()));
        assert_eq!(ok(" 10. 3.+0"), Ok("gfx1030".into()));
        for bad in [
            "",
            "gfx1030",
            "10.3",
            "11.0.0 ",
            "11.0.0\n",
            "11.0.0.0",
            "\"10.3.0\"",
            "-1.0.0",
            "64.0.0",
            "10.256.0",
            "10.3.x",
            "99999999999.0.0",
        ] {
            assert!(parse_override(bad).is_err(), "{bad:?}");
        }
        assert!(
            parse_override("11.0.0 ")
                .unwrap_err()
                .contains("followed by")
        );
    }

    #[test]
    fn families() {
        assert_eq!(family(v("gfx1031")), family(v("gfx1030")));
        assert_eq!(family(v("gfx1036")), family(v("gfx1030")));
        assert_eq!(family(v("gfx1103")), family(v("gfx1100")));
        assert_ne!(family(v("gfx1150")), family(v("gfx1100")));
        assert_ne!(family(v("gfx1201")), family(v("gfx1100")));
        assert_eq!(family(v("gfx90c")), family(v("gfx900")));
        assert_ne!(family(v("gfx90a")), family(v("gfx908")));
        assert_ne!(family(v("gfx90a")), family(v("gfx900")));
        assert_eq!(family(v("gfx950")), family(v("gfx942")));
        assert!(family_hint("gfx1150").contains("11.5.1 = gfx1151"));
    }

    fn uuids(n: usize) -> Vec<Option<String>> {
        (0..n)
            .map(|i| Some(format!("GPU-{:016x}", 0xabcd_0000_0000_0000u64 + i as u64)))
            .collect()
    }

    #[test]
    fn rocr_mask_follows_rvd_filter() {
        let u = uuids(4);
        let sel = |v: &str| rocr_visible(v, &u);
        assert_eq!(sel("3,0").visible, [3, 0]);
        assert_eq!(sel(" 1 , 2 ").visible, [1, 2]);
        assert_eq!(sel("0x1,010").visible, [1], "010 is octal 8: out of range");
        assert_eq!(sel("1,4,2").visible, [1]);
        assert!(sel("1,4,2").stopped_at.unwrap().1.contains("out of range"));
        assert_eq!(sel("1,1").visible, [1]);
        assert!(sel("1,1").stopped_at.unwrap().1.contains("repeats"));
        assert!(sel("").visible.is_empty());
        assert!(sel("").stopped_at.is_some());
        assert!(sel("-1").visible.is_empty());
        // A range is no number: nothing at all is selected.
        let r = sel("0-3");
        assert!(r.visible.is_empty());
        assert!(r.stopped_at.unwrap().1.contains("ranges"));
        // UUIDs: case-insensitive unique prefixes.
        assert_eq!(sel("gpu-abcd000000000002").visible, [2]);
        assert_eq!(sel("GPU-ABCD000000000003,0").visible, [3, 0]);
        assert!(
            sel("GPU-ABCD")
                .stopped_at
                .unwrap()
                .1
                .contains("more than one")
        );
        assert!(sel("GPU-ffff").stopped_at.unwrap().1.contains("no GPU"));
        assert!(sel("GPU-XX").stopped_at.is_some());
        // Only as many entries as GPUs are read.
        let two = rocr_visible("0,1,5", &u[..2]);
        assert_eq!(two.visible, [0, 1]);
        assert_eq!(two.ignored, ["5"]);
        assert_eq!(sel("0,").visible, [0]);
        assert!(sel("0,,1").stopped_at.is_some());
    }

    #[test]
    fn hip_mask_follows_rocdevice() {
        let u = uuids(2);
        let sel = |v: &str| hip_visible(v, &u);
        assert_eq!(sel("1,0").visible, [1, 0]);
        assert_eq!(sel("1,1,0").visible, [1, 0]);
        assert_eq!(sel("1,1,0").ignored, ["1"]);
        assert_eq!(sel("0,2,1").visible, [0]);
        assert!(sel("0,2,1").stopped_at.unwrap().1.contains("out of range"));
        for bad in ["01", "+1", " 1", "-1", "0-1", "x"] {
            assert!(sel(bad).visible.is_empty(), "{bad:?}");
        }
        // UUIDs: substring of ROCr's lower-case UUID, case-sensitive.
        assert_eq!(sel("GPU-abcd000000000001").visible, [1]);
        assert!(sel("GPU-ABCD000000000001").visible.is_empty());
        assert_eq!(sel("0,").visible, [0]);
        // HIP indices count the GPUs ROCr leaves.
        let rocr = rocr_visible("1", &uuids(8));
        assert_eq!(rocr.visible, [1]);
        let left: Vec<Option<String>> = rocr.visible.iter().map(|&i| uuids(8)[i].clone()).collect();
        assert!(hip_visible("1", &left).visible.is_empty());
    }
}
