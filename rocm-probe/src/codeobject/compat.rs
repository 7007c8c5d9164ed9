//! Whether a code object loads on a GPU, per ROCr's `Isa::IsCompatible` (newest, with
//! generic targets) and LLVM's target-ID rules; and the verdict per GPU for a whole file.
//!
//! The rules (ROCr `isa.cpp` `Isa::IsCompatible`; LLVM AMDGPUUsage "Target ID"):
//! - processor: a non-generic code object needs the GPU's processor exactly; a generic one
//!   needs the GPU's processor to be in its family and the code object's generic version to be
//!   at least the one in which that processor joined the family;
//! - `sramecc`, `xnack`: a code object built with the feature on (`+`) or off (`-`) needs the
//!   GPU's setting to be the same; built for any (feature not named), it runs either way.
//!
//! A GPU's setting is always on or off, never any: `sramecc` from the KFD capability bit,
//! `xnack` from the process XNACK mode. Where the probe cannot know one, the verdict assumes
//! a value and says so ([`Assumption`]): XNACK as the kernel sets it by default for that GPU
//! (ARCHITECTURE.md §6; [`crate::target::process_xnack`] with `noretry=-1`, after the kernel's
//! `amdgpu_gmc_noretry_set` and `kfd_process_xnack_mode`).

use crate::msg;
use serde::Serialize;

use super::target_id::{self, FeatureSetting, Processor, TargetId, TargetIdError};
use super::{Bundle, Inspection};
use crate::target::{self, GfxVersion};

/// A GPU as code-object loading sees it: a processor and the setting of each feature it has.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct GpuTarget {
    /// The processor.
    pub processor: GfxVersion,
    /// SRAM ECC on or off; `None` when the processor has no such feature.
    pub sramecc: Option<bool>,
    /// XNACK on or off for the process; `None` when the processor has no such feature.
    pub xnack: Option<bool>,
}

impl GpuTarget {
    /// The full target ID, e.g. `gfx90a:sramecc+:xnack-`.
    pub fn target_id(&self) -> String {
        target::target_id(self.processor, self.sramecc, self.xnack)
    }
}

/// Whether code built for `code` (with `generic_version` from its ELF header, when read)
/// loads on `gpu`. An unread generic version is taken to satisfy the family's minimum: every
/// generic code object has a version of at least 1, and 1 is every processor's minimum today.
pub fn loads(code: &TargetId, generic_version: Option<u8>, gpu: &GpuTarget) -> bool {
    covers(&code.processor, generic_version, gpu.processor)
        && code.sramecc.accepts(gpu.sramecc)
        && code.xnack.accepts(gpu.xnack)
}

/// Whether code for `processor` can run on a GPU whose processor is `gpu`, features aside: the
/// same processor, or a generic one whose family holds it (`generic_version` as for [`loads`]).
pub fn covers(processor: &Processor, generic_version: Option<u8>, gpu: GfxVersion) -> bool {
    match processor {
        Processor::Gfx(g) => *g == gpu,
        Processor::Generic(name) => target_id::family_of(gpu).is_some_and(|(family, min)| {
            family.name == name && generic_version.is_none_or(|v| v >= min)
        }),
    }
}

/// A target feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// `sramecc`.
    Sramecc,
    /// `xnack`.
    Xnack,
}

impl Feature {
    /// Its name in target IDs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sramecc => "sramecc",
            Self::Xnack => "xnack",
        }
    }
}

/// A change of a GPU's feature setting that would let a code object load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FeatureChange {
    /// The feature.
    pub feature: Feature,
    /// The setting needed.
    pub to: bool,
    /// How to get it.
    pub how: String,
}

impl FeatureChange {
    /// `xnack+`, `sramecc-`.
    pub fn spelling(&self) -> String {
        format!("{}{}", self.feature.name(), if self.to { '+' } else { '-' })
    }
}

/// How to switch XNACK, or `None` when this GPU cannot run with that setting: GFX10 and later
/// never run with XNACK on (the kernel forces retry faults off).
fn xnack_change(gpu: GfxVersion, to: bool) -> Option<String> {
    if !to {
        return Some(msg!("codeobject.run-xnack-off"));
    }
    // `process_xnack` encodes the kernel's rules: with noretry=1 only GPUs with a per-process
    // XNACK mode take HSA_XNACK=1; with noretry=0 every GFX9 GPU runs with XNACK on.
    if target::process_xnack(&[gpu], Some(1), Some("1")) == Some(true) {
        Some(msg!("codeobject.run-xnack-on"))
    } else if target::process_xnack(&[gpu], Some(0), None) == Some(true) {
        Some(msg!("codeobject.noretry-zero"))
    } else {
        None
    }
}

fn sramecc_change(to: bool) -> String {
    if to {
        msg!("codeobject.sramecc-on")
    } else {
        msg!("codeobject.sramecc-off")
    }
}

/// The verdict for one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// A code object loads as the GPU is set up.
    Loads {
        /// Its target ID.
        target: String,
    },
    /// A code object would load after a change of the GPU's feature settings.
    NeedsFeatureChange {
        /// Its target ID.
        target: String,
        /// What must change.
        changes: Vec<FeatureChange>,
    },
    /// No code object loads on this GPU.
    NoCodeObject,
}

impl Verdict {
    /// The one rule of whether a GPU can use the code (ARCHITECTURE.md §5): only when a code
    /// object loads as the GPU is set up. One that loads only after a feature change does not
    /// load until the change is made — HIP says `hipErrorNoBinaryForGpu` meanwhile —, so
    /// `inspect` exits 1 for it and the report fails
    /// (`libraries.`/`frameworks.code-object-needs-feature-change`), as for no code object.
    pub fn loads_as_set_up(&self) -> bool {
        matches!(self, Self::Loads { .. })
    }

    /// Worst last: loads, needs a feature change, no code object.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Self::Loads { .. } => 0,
            Self::NeedsFeatureChange { .. } => 1,
            Self::NoCodeObject => 2,
        }
    }
}

/// A code object a bundle offers: its target and, when read, its generic version.
pub type Candidate<'a> = (&'a TargetId, Option<u8>);

/// The verdict for code objects `candidates` (the device entries of one bundle) on `gpu`.
pub fn verdict<'a>(candidates: &[Candidate<'a>], gpu: &GpuTarget) -> Verdict {
    let find = |gpu: &GpuTarget| {
        // Exact processors first: the HIP runtime prefers them over a generic match.
        let mut fits: Vec<&Candidate<'a>> = candidates
            .iter()
            .filter(|(t, v)| loads(t, *v, gpu))
            .collect();
        fits.sort_by_key(|(t, _)| t.is_generic());
        fits.first().map(|(t, _)| t.to_string())
    };
    if let Some(target) = find(gpu) {
        return Verdict::Loads { target };
    }
    let flip_xnack = gpu.xnack.and_then(|x| {
        xnack_change(gpu.processor, !x).map(|how| FeatureChange {
            feature: Feature::Xnack,
            to: !x,
            how,
        })
    });
    let flip_sramecc = gpu.sramecc.map(|s| FeatureChange {
        feature: Feature::Sramecc,
        to: !s,
        how: sramecc_change(!s),
    });
    let mut options: Vec<Vec<FeatureChange>> = Vec::new();
    options.extend(flip_xnack.clone().map(|c| vec![c]));
    options.extend(flip_sramecc.clone().map(|c| vec![c]));
    if let (Some(x), Some(s)) = (flip_xnack, flip_sramecc) {
        options.push(vec![s, x]);
    }
    for changes in options {
        let mut changed = gpu.clone();
        for c in &changes {
            match c.feature {
                Feature::Xnack => changed.xnack = Some(c.to),
                Feature::Sramecc => changed.sramecc = Some(c.to),
            }
        }
        if let Some(target) = find(&changed) {
            return Verdict::NeedsFeatureChange { target, changes };
        }
    }
    Verdict::NoCodeObject
}

/// Something the probe could not know about a GPU and assumed for the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Assumption {
    /// The feature.
    pub feature: Feature,
    /// The value assumed.
    pub value: bool,
    /// Why, and where the value comes from.
    pub reason: String,
}

/// Where the GPUs of an inspection come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuOrigin {
    /// The GPU agents of the machine (or fixture).
    Machine,
    /// `--target` arguments.
    Argument,
}

/// A GPU (or several identical ones) to give verdicts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Gpu {
    /// Its full target ID as the verdict uses it (assumptions applied).
    pub target_id: String,
    /// Processor and feature settings.
    pub target: GpuTarget,
    /// KFD nodes with this target (empty for `--target`).
    pub nodes: Vec<u32>,
    /// The GPUs with this target in the one display form (`GPU 1 (0000:86:00.0, ROCr 1)`), as
    /// the machine's inventory names them, or "all 8 GPUs" when every GPU has it; empty for
    /// `--target` or without an inventory.
    pub names: Vec<String>,
    /// Machine or argument.
    pub origin: GpuOrigin,
    /// What was assumed.
    pub assumptions: Vec<Assumption>,
}

fn xnack_default(
    processors: &[GfxVersion],
    hsa_xnack: Option<&str>,
    gpu: GfxVersion,
) -> Assumption {
    let value = target::process_xnack(processors, Some(-1), hsa_xnack).unwrap_or(false);
    Assumption {
        feature: Feature::Xnack,
        value,
        reason: {
            let hsa = if hsa_xnack.is_some() {
                msg!("codeobject.and-hsa-xnack")
            } else {
                String::new()
            };
            if value {
                msg!("codeobject.xnack-assumed-on", gpu, hsa)
            } else {
                msg!("codeobject.xnack-assumed-off", gpu, hsa)
            }
        },
    }
}

fn sramecc_default(why: &str) -> Assumption {
    Assumption {
        feature: Feature::Sramecc,
        value: true,
        reason: msg!("codeobject.sramecc-assumed", why),
    }
}

/// What a verdict needs to know of one GPU agent of a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineGpu {
    /// Its KFD node.
    pub node: u32,
    /// Its processor.
    pub gfx: GfxVersion,
    /// SRAM ECC, when known.
    pub sramecc: Option<bool>,
    /// The process XNACK mode, when known.
    pub xnack: Option<bool>,
}

impl Gpu {
    /// The GPUs of a machine (its GPU agents in node order, and `HSA_XNACK` as the process has
    /// it), identical agents grouped.
    pub fn from_machine(agents: &[MachineGpu], hsa_xnack: Option<&str>) -> Vec<Gpu> {
        let processors: Vec<GfxVersion> = agents.iter().map(|a| a.gfx).collect();
        let mut gpus: Vec<Gpu> = Vec::new();
        for agent in agents {
            let gfx = agent.gfx;
            let mut assumptions = Vec::new();
            let sramecc = gfx.supports_sramecc().then(|| {
                agent.sramecc.unwrap_or_else(|| {
                    let a = sramecc_default(&msg!("codeobject.sramecc-unknown"));
                    assumptions.push(a.clone());
                    a.value
                })
            });
            let xnack = gfx.supports_xnack().then(|| {
                agent.xnack.unwrap_or_else(|| {
                    let a = xnack_default(&processors, hsa_xnack, gfx);
                    assumptions.push(a.clone());
                    a.value
                })
            });
            let target = GpuTarget {
                processor: gfx,
                sramecc,
                xnack,
            };
            match gpus
                .iter_mut()
                .find(|g| g.target == target && g.assumptions == assumptions)
            {
                Some(g) => g.nodes.push(agent.node),
                None => gpus.push(Gpu {
                    target_id: target.target_id(),
                    target,
                    nodes: vec![agent.node],
                    names: Vec::new(),
                    origin: GpuOrigin::Machine,
                    assumptions,
                }),
            }
        }
        gpus
    }

    /// A GPU named by a target ID (`--target gfx90a:sramecc+:xnack-`). Features left out are
    /// assumed as for a GPU whose setting is unknown.
    pub fn from_target_id(spec: &str) -> Result<Gpu, TargetIdError> {
        let id = TargetId::parse(spec)?;
        let Processor::Gfx(gfx) = id.processor else {
            return Err(TargetIdError {
                input: spec.to_owned(),
                reason: msg!("codeobject.not-generic"),
            });
        };
        // A well-formed name no GPU has (`gfx9000`) would give "no code object" for a GPU that
        // does not exist: refused, with the known processors it is closest to.
        let name = gfx.name();
        if !super::elf::processors().any(|p| p == name) {
            let near = crate::i18n::nearest(&name, super::elf::processors(), 3);
            return Err(TargetIdError {
                input: spec.to_owned(),
                reason: if near.is_empty() {
                    msg!("codeobject.unknown-processor", name)
                } else {
                    msg!(
                        "codeobject.unknown-processor-near",
                        name,
                        near = crate::i18n::list(&near)
                    )
                },
            });
        }
        let mut assumptions = Vec::new();
        let mut pick =
            |setting: FeatureSetting, supported: bool, default: &dyn Fn() -> Assumption| {
                supported.then(|| match setting {
                    FeatureSetting::On => true,
                    FeatureSetting::Off => false,
                    FeatureSetting::Any | FeatureSetting::Unsupported => {
                        let a = default();
                        let v = a.value;
                        assumptions.push(a);
                        v
                    }
                })
            };
        let sramecc = pick(id.sramecc, gfx.supports_sramecc(), &|| {
            sramecc_default(&msg!("codeobject.sramecc-not-given"))
        });
        let xnack = pick(id.xnack, gfx.supports_xnack(), &|| {
            xnack_default(&[gfx], None, gfx)
        });
        let target = GpuTarget {
            processor: gfx,
            sramecc,
            xnack,
        };
        Ok(Gpu {
            target_id: target.target_id(),
            target,
            nodes: Vec::new(),
            names: Vec::new(),
            origin: GpuOrigin::Argument,
            assumptions,
        })
    }
}

/// How many bundles of a file give each verdict for one GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BundleCounts {
    /// Bundles with a code object that loads.
    pub loads: usize,
    /// Bundles whose code objects load only after a feature change.
    pub needs_feature_change: usize,
    /// Bundles without a code object for the GPU.
    pub no_code_object: usize,
}

/// The verdict of one file for one GPU: the worst over its bundles (the HIP runtime needs a
/// code object from every bundle whose kernels are launched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FileVerdict {
    /// Index into the report's GPUs.
    pub gpu: usize,
    /// The GPU's target ID.
    pub target_id: String,
    /// The worst verdict over the file's bundles with device code.
    pub verdict: Verdict,
    /// Bundle counts per verdict.
    pub bundles: BundleCounts,
}

/// The device code objects of a bundle as candidates.
pub fn candidates(bundle: &Bundle) -> Vec<Candidate<'_>> {
    bundle
        .entries
        .iter()
        .filter(|e| e.is_device())
        .filter_map(|e| {
            e.target.as_ref().map(|t| {
                let version = e.code_object.as_ref().and_then(|h| h.generic_version);
                (t, version)
            })
        })
        .collect()
}

/// The verdict of a file for a GPU.
pub fn file_verdict(inspection: &Inspection, index: usize, gpu: &Gpu) -> FileVerdict {
    let mut counts = BundleCounts::default();
    let mut worst: Option<Verdict> = None;
    for bundle in &inspection.bundles {
        let c = candidates(bundle);
        if c.is_empty() {
            continue;
        }
        let v = verdict(&c, &gpu.target);
        match v {
            Verdict::Loads { .. } => counts.loads += 1,
            Verdict::NeedsFeatureChange { .. } => counts.needs_feature_change += 1,
            Verdict::NoCodeObject => counts.no_code_object += 1,
        }
        if worst.as_ref().is_none_or(|w| v.rank() > w.rank()) {
            worst = Some(v);
        }
    }
    FileVerdict {
        gpu: index,
        target_id: gpu.target_id.clone(),
        verdict: worst.unwrap_or(Verdict::NoCodeObject),
        bundles: counts,
    }
}

/// One inspected file with its verdicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FileReport {
    /// What the file holds.
    #[serde(flatten)]
    pub inspection: Inspection,
    /// One verdict per GPU, in the order of [`InspectReport::gpus`].
    pub verdicts: Vec<FileVerdict>,
}

/// The result of `inspect`: files, the GPUs, and a verdict per file and GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InspectReport {
    /// The GPUs verdicts are given for.
    pub gpus: Vec<Gpu>,
    /// Why there are no GPUs, when there are none.
    pub no_gpus: Option<String>,
    /// The files, in the order given.
    pub files: Vec<FileReport>,
}

impl InspectReport {
    /// Gives every file a verdict for every GPU.
    pub fn new(files: Vec<Inspection>, gpus: Vec<Gpu>, no_gpus: Option<String>) -> Self {
        let files = files
            .into_iter()
            .map(|inspection| {
                let verdicts = gpus
                    .iter()
                    .enumerate()
                    .map(|(i, g)| file_verdict(&inspection, i, g))
                    .collect();
                FileReport {
                    inspection,
                    verdicts,
                }
            })
            .collect();
        Self {
            gpus,
            no_gpus,
            files,
        }
    }

    /// 1 when some file does not load on some GPU as it is set up
    /// ([`Verdict::loads_as_set_up`], the rule the report's findings follow), or there is no GPU
    /// to check; else 0.
    pub fn exit_code(&self) -> u8 {
        let refused = self
            .files
            .iter()
            .any(|f| f.verdicts.iter().any(|v| !v.verdict.loads_as_set_up()));
        u8::from(refused || self.gpus.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(spec: &str) -> GpuTarget {
        let g = Gpu::from_target_id(spec).unwrap();
        assert!(g.assumptions.is_empty(), "{spec}: {:?}", g.assumptions);
        g.target
    }

    fn co(spec: &str) -> TargetId {
        TargetId::parse(spec).unwrap()
    }

    fn loads_on(code: &str, on: &str) -> bool {
        loads(&co(code), None, &gpu(on))
    }

    /// The rule table: (code object, GPU, loads).
    #[test]
    fn rule_table() {
        let table = [
            // The anchor case: a sramecc+ xnack- MI210 takes a bare gfx90a object...
            ("gfx90a", "gfx90a:sramecc+:xnack-", true),
            // ...and not one built for XNACK on.
            ("gfx90a:xnack+", "gfx90a:sramecc+:xnack-", false),
            ("gfx90a:xnack-", "gfx90a:sramecc+:xnack-", true),
            ("gfx90a:sramecc+", "gfx90a:sramecc+:xnack-", true),
            ("gfx90a:sramecc-", "gfx90a:sramecc+:xnack-", false),
            ("gfx90a:sramecc+:xnack+", "gfx90a:sramecc+:xnack+", true),
            ("gfx90a:sramecc-:xnack-", "gfx90a:sramecc+:xnack-", false),
            // Processors must be equal: no "newer runs older".
            ("gfx908", "gfx90a:sramecc+:xnack-", false),
            ("gfx1030", "gfx1031", false),
            ("gfx1100", "gfx1100", true),
            ("gfx1100", "gfx1101", false),
            ("gfx942", "gfx942:sramecc+:xnack-", true),
            ("gfx906:xnack-", "gfx906:sramecc-:xnack-", true),
            // Generic targets cover their family and nothing else.
            ("gfx9-generic", "gfx906:sramecc+:xnack-", true),
            ("gfx9-generic", "gfx900:xnack-", true),
            ("gfx9-generic:xnack+", "gfx900:xnack-", false),
            ("gfx9-generic", "gfx908:sramecc+:xnack-", false),
            ("gfx9-generic", "gfx90a:sramecc+:xnack-", false),
            ("gfx9-4-generic", "gfx942:sramecc+:xnack-", true),
            ("gfx9-4-generic:sramecc-", "gfx942:sramecc+:xnack-", false),
            ("gfx9-4-generic", "gfx950:sramecc+:xnack-", true),
            ("gfx9-4-generic", "gfx90a:sramecc+:xnack-", false),
            ("gfx10-1-generic", "gfx1012:xnack-", true),
            ("gfx10-3-generic", "gfx1030", true),
            ("gfx10-3-generic", "gfx1036", true),
            ("gfx10-3-generic", "gfx1100", false),
            ("gfx11-generic", "gfx1100", true),
            ("gfx11-generic", "gfx1103", true),
            ("gfx11-generic", "gfx1151", true),
            ("gfx11-generic", "gfx1201", false),
            ("gfx12-generic", "gfx1201", true),
            ("gfx12-generic", "gfx1100", false),
            // A generic ROCr does not know covers nothing.
            ("gfx13-generic", "gfx1201", false),
        ];
        for (code, on, expect) in table {
            assert_eq!(loads_on(code, on), expect, "{code} on {on}");
        }
    }

    #[test]
    fn generic_version_rule() {
        let g = gpu("gfx1100");
        let code = co("gfx11-generic");
        assert!(loads(&code, Some(1), &g));
        assert!(loads(&code, Some(7), &g));
        // Version 0 is below every member's minimum.
        assert!(!loads(&code, Some(0), &g));
        // Unread: assumed to satisfy the minimum.
        assert!(loads(&code, None, &g));
    }

    #[test]
    fn verdicts_say_which_feature_change() {
        let mi210 = gpu("gfx90a:sramecc+:xnack-");
        let xnack_on = co("gfx90a:xnack+");
        let v = verdict(&[(&xnack_on, None)], &mi210);
        let Verdict::NeedsFeatureChange { target, changes } = &v else {
            panic!("{v:?}")
        };
        assert_eq!(target, "gfx90a:xnack+");
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].spelling(), "xnack+");
        assert_eq!(changes[0].how, "run with HSA_XNACK=1");
        // MI100 has no per-process XNACK.
        let v = verdict(
            &[(&co("gfx908:xnack+"), None)],
            &gpu("gfx908:sramecc+:xnack-"),
        );
        let Verdict::NeedsFeatureChange { changes, .. } = &v else {
            panic!("{v:?}")
        };
        assert!(changes[0].how.contains("noretry=0"), "{}", changes[0].how);
        // Both features.
        let v = verdict(&[(&co("gfx90a:sramecc-:xnack+"), None)], &mi210);
        let Verdict::NeedsFeatureChange { changes, .. } = &v else {
            panic!("{v:?}")
        };
        let spelled: Vec<String> = changes.iter().map(FeatureChange::spelling).collect();
        assert_eq!(spelled, ["sramecc-", "xnack+"]);
        // GFX10.1 cannot turn XNACK on: nothing loads.
        assert_eq!(
            verdict(&[(&co("gfx1010:xnack+"), None)], &gpu("gfx1010:xnack-")),
            Verdict::NoCodeObject
        );
        // Loads, preferring the exact processor over the generic one.
        let both = [(&co("gfx9-generic"), Some(1)), (&co("gfx906"), None)];
        assert_eq!(
            verdict(&both, &gpu("gfx906:sramecc+:xnack-")),
            Verdict::Loads {
                target: "gfx906".into()
            }
        );
        assert_eq!(verdict(&[], &mi210), Verdict::NoCodeObject);
    }

    #[test]
    fn target_arguments_assume_the_kernel_default() {
        let g = Gpu::from_target_id("gfx90a").unwrap();
        assert_eq!(g.target_id, "gfx90a:sramecc+:xnack-");
        assert_eq!(g.assumptions.len(), 2);
        assert!(g.assumptions[1].reason.contains("amdgpu_gmc_noretry_set"));
        // Raven defaults to XNACK on.
        let g = Gpu::from_target_id("gfx902").unwrap();
        assert_eq!(g.target_id, "gfx902:xnack+");
        let g = Gpu::from_target_id("gfx1100").unwrap();
        assert!(g.assumptions.is_empty());
        assert!(Gpu::from_target_id("gfx11-generic").is_err());
        assert!(Gpu::from_target_id("gfx1100:xnack+").is_err());
    }
}
