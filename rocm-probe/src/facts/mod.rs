//! `Facts`: everything the report's checks look at, collected in one pass through the Source.

pub mod access;
pub mod agent;
pub mod bundled;
pub mod compiler;
pub mod config;
pub mod container;
pub mod data_file;
pub mod drm;
pub mod fatbin;
pub mod firmware;
pub mod firmware_bad;
pub mod frameworks;
pub mod fw_versions;
pub mod gtt;
pub mod hex;
pub mod install;
pub mod kernel_bad;
pub mod kernel_log;
pub mod launcher_venv;
pub mod libenv;
pub mod libraries;
pub mod marketing;
pub mod min_kernel;
pub mod module;
pub mod mounts;
pub mod os_release;
pub mod override_hazard;
pub mod overrides;
pub mod pci;
pub mod pcie;
pub mod platform;
pub mod process;
pub mod properties;
pub mod rocm_bad;
pub mod rocr_isa;
pub mod support;
pub mod telemetry;
pub mod tools;
pub mod topo;
pub mod topology;
pub mod wsl;

use serde::Serialize;

use crate::active::{ActiveFacts, ActiveOptions};
use crate::facts::agent::{AgentFacts, AgentNeeds, Inventory};
use crate::facts::compiler::CompilerFacts;
use crate::facts::frameworks::FrameworkFacts;
use crate::facts::install::InstallFacts;
use crate::facts::libraries::LibraryFacts;
use crate::facts::module::ModuleFacts;
use crate::facts::os_release::OsRelease;
use crate::facts::pci::PciFacts;
use crate::facts::platform::PlatformFacts;
use crate::facts::process::Processes;
use crate::facts::tools::ToolFacts;
use crate::facts::wsl::{RocrBuild, WslFacts};
use crate::source::fixture::Identity;
use crate::source::problem::Problem;
use crate::source::{Source, SourceKind};
use access::DeviceFacts;

/// The device node ROCm opens first.
pub const KFD_DEVICE: &str = "/dev/kfd";

/// All facts of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Live or fixture.
    pub source: SourceKind,
    /// The KFD topology and what the agent view needs; `None` without a readable topology.
    pub kfd: Option<AgentFacts>,
    /// Why `kfd` is `None`.
    pub kfd_error: Option<Problem>,
    /// Set when `kfd` is `None` because reading the topology was refused (not absent).
    pub kfd_unreadable: Option<crate::facts::topology::KfdUnreadable>,
    /// Agents, physical GPUs and hives derived from `kfd`.
    pub inventory: Option<Inventory>,
    /// The PCI bus; `None` when not captured.
    pub pci: Option<PciFacts>,
    /// AMD GPUs' BARs and the ACS of the bridges between them.
    pub pcie: crate::facts::pcie::PcieFacts,
    /// The amdgpu module; `None` when `/sys/module` was not captured.
    pub module: Option<ModuleFacts>,
    /// The amdgpu firmware files on disk, read when a GPU the firmware table lists is present.
    pub firmware: crate::facts::firmware::FirmwareFacts,
    /// TTM's and amdgpu's limits on the system memory GPUs may use (APU memory ceilings).
    pub gtt: crate::facts::gtt::GttFacts,
    /// The firmware versions each GPU runs (`device/fw_version/*`, VBIOS).
    pub fw_versions: crate::facts::fw_versions::FwVersionFacts,
    /// Each GPU's temperatures, power, fan, clocks, busy and memory use, and `gpu_metrics`
    /// (not read on a runtime-suspended GPU).
    pub telemetry: crate::facts::telemetry::TelemetryFacts,
    /// Command line, blacklists, Secure Boot, containers, environment.
    pub platform: PlatformFacts,
    /// The operating system (`/etc/os-release`); `None` when not captured.
    pub os_release: Option<OsRelease>,
    /// Who runs the probe; `None` when not recorded.
    pub identity: Option<Identity>,
    /// The kernel log of this boot as events, and who may read it.
    pub kernel_log: crate::facts::kernel_log::KernelLogFacts,
    /// The amdgpu parameters `rocm-probe/data/kernel_bad.toml`'s workarounds set.
    pub kernel_bad: crate::facts::kernel_bad::KernelBadFacts,
    /// `/dev/kfd`, then the render node of each GPU node.
    pub devices: Vec<DeviceFacts>,
    /// The container around the probe: runtime, user namespace, the mounts holding the device
    /// nodes, the security modules and the nodes' labels.
    pub container: crate::facts::container::ContainerFacts,
    /// ROCm installs on disk and what a process would load.
    pub installs: InstallFacts,
    /// The ROCm libraries of each install and the targets their kernel files carry.
    pub libraries: LibraryFacts,
    /// The HIP compilers of each install and the targets their device libraries cover.
    pub compiler: CompilerFacts,
    /// The Python frameworks installed and the ROCm libraries they bundle.
    pub frameworks: FrameworkFacts,
    /// Applications' own ROCm runtimes and HIP code outside the installs (ollama, llama.cpp,
    /// vLLM's and AITER's extensions).
    pub bundled: crate::facts::bundled::BundledFacts,
    /// Where MIOpen keeps its user databases, a pip `amdsmi`, ROCr's copy-engine variables.
    pub libenv: crate::facts::libenv::LibEnvFacts,
    /// The profilers, debugger and SMI tools on PATH and in the installs.
    pub tools: ToolFacts,
    /// The processor each GPU runs as under `HSA_OVERRIDE_GFX_VERSION[_<node>]`, as libhsakmt
    /// decides it (derived from the inventory, installs, environment and device nodes).
    pub overrides: crate::facts::overrides::OverrideFacts,
    /// The ROCr a process would load and the libraries it links (is it AMD's WSL build?);
    /// `None` without one.
    pub rocr_build: Option<RocrBuild>,
    /// What ROCm on WSL needs (`/dev/dxg`, libdxcore, the WSL runtime or librocdxg); `None`
    /// without WSL markers.
    pub wsl: Option<WslFacts>,
    /// Processes that have `/dev/kfd` open; `None` without KFD.
    pub processes: Option<Processes>,
    /// Results of the active probes: live with `--active`, or a fixture's `[active]` table.
    pub active: Option<ActiveFacts>,
    /// Problems outside the topology, the agent view and the processes, by layer.
    pub problems: Problems,
}

/// The one shape of a collector (ARCHITECTURE.md §3, `facts/`): every area of [`Facts`] is
/// read through a [`Source`] — its `SysRoot` for files, its host for identity, environment and
/// device nodes — given the earlier facts it needs, and every input it could not use goes to
/// `problems`. A collector keeps no problems of its own: its caller decides where they are kept
/// ([`Facts::problems`], by the layer that reports them; the topology's in the topology, by the
/// agent view's collector, which reads it).
pub trait Collect {
    /// The earlier facts the area is read with, usually borrowed (`()` when none; for the
    /// topology, how much of it to read).
    type Needs<'a>;
    /// What collecting gives: the area's facts (one per device node for [`DeviceFacts`]);
    /// `Option` of them when the area may be absent from a fixture (not captured); `Result`
    /// when it fails as a whole, the error then being the fact (only the KFD topology, and the
    /// agent view read with it: no KFD, or refused).
    type Output;
    /// Reads the area, recording every input it could not use in `problems`.
    fn collect(
        source: &Source,
        needs: Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self::Output;
}

/// Collects one area into a fresh problem list: `(facts, problems)`.
pub fn collect<T: Collect>(source: &Source, needs: T::Needs<'_>) -> (T::Output, Vec<Problem>) {
    let mut problems = Vec::new();
    let out = T::collect(source, needs, &mut problems);
    (out, problems)
}

/// Every input the collectors of [`Facts`] could not use, kept by the layer that reports it.
/// The topology's and the agent view's problems stay in [`AgentFacts`] (the inventory, a
/// document of its own, carries them), the processes' in [`Processes`] (`ps`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Problems {
    /// The system's files outside the topology: the amdgpu module, the PCI bus (reported by
    /// layer 1), the platform and `/etc/group` (layer 2).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub system: Vec<Problem>,
    /// The installs' files (layer 4).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub installs: Vec<Problem>,
    /// The libraries' directories (layer 5).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub libraries: Vec<Problem>,
    /// The compilers' directories (layer 6).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub compiler: Vec<Problem>,
    /// The Python environments' files (layer 7).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub frameworks: Vec<Problem>,
    /// The tools' links and version files (layer 8).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub tools: Vec<Problem>,
}

/// What a collection does beyond reading: the active probes, when asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectOptions {
    /// Run the active probes (live only; a fixture states their results in `[active]`).
    pub active: Option<ActiveOptions>,
}

impl Facts {
    /// Whether the probe runs in a container: an engine's marker file or `container=` (the
    /// platform's markers), or a kind read from the cgroup path or from Kubernetes' service
    /// variable — a pod of containerd or CRI-O has no marker file at all.
    pub fn in_container(&self) -> bool {
        !self.platform.container_markers.is_empty() || self.container.kind.is_some()
    }

    /// Derives the views computed from other facts again (today the overrides) — for a
    /// caller that changed facts by hand, as tests do with the environment.
    pub fn rederive(&mut self) {
        self.overrides = crate::facts::overrides::OverrideFacts::derive(
            self.inventory.as_ref(),
            &self.installs,
            &self.platform.env,
            &self.devices,
        );
    }

    /// Collects every area the report needs, passively. Never fails: what cannot be read is
    /// recorded.
    pub fn collect(source: &Source) -> Self {
        Self::collect_with(source, &CollectOptions::default())
    }

    /// Collects every area, and runs the active probes when `options` asks for them on the live
    /// machine. A fixture's `[active]` results are used whenever the fixture has them: the
    /// fixture records an active run.
    pub fn collect_with(source: &Source, options: &CollectOptions) -> Self {
        let root = source.root();
        let mut problems = Problems::default();
        let module = ModuleFacts::collect(source, (), &mut problems.system);
        let params = module
            .as_ref()
            .map(|m| m.parameters.clone())
            .unwrap_or_default();
        let (kfd, kfd_error, kfd_unreadable) =
            match collect::<AgentFacts>(source, AgentNeeds::All(params)) {
                (Ok(mut f), p) => {
                    f.problems = p;
                    (Some(f), None, None)
                }
                (Err(e), _) => {
                    let refused = crate::facts::topology::KfdUnreadable::from_error(root, &e);
                    (None, Some(Problem::from(e)), refused)
                }
            };
        let inventory = kfd.as_ref().map(Inventory::from_facts);
        let fw_versions = crate::facts::fw_versions::FwVersionFacts::collect(
            source,
            (inventory.as_ref(), kfd.as_ref()),
            &mut problems.system,
        );
        let telemetry = crate::facts::telemetry::TelemetryFacts::collect(
            source,
            (inventory.as_ref(), kfd.as_ref()),
            &mut problems.system,
        );
        let processes = kfd.as_ref().and_then(|k| {
            let (ps, p) = collect::<Processes>(source, &k.topology);
            ps.map(|ps| Processes { problems: p, ..ps })
        });
        let pci = PciFacts::collect(source, (), &mut problems.system);
        let gtt = crate::facts::gtt::GttFacts::collect(source, (), &mut problems.system);
        let listed = pci.as_ref().is_some_and(|p| {
            p.gpus
                .iter()
                .any(|g| g.device.and_then(crate::facts::firmware::lookup).is_some())
        });
        let firmware =
            crate::facts::firmware::FirmwareFacts::collect(source, listed, &mut problems.system);
        let pcie =
            crate::facts::pcie::PcieFacts::collect(source, pci.as_ref(), &mut problems.system);
        let platform = PlatformFacts::collect(source, (), &mut problems.system);
        let os_release = OsRelease::collect(source, (), &mut problems.system);
        let identity = source.host().identity();
        let kernel_log =
            crate::facts::kernel_log::KernelLogFacts::collect(source, (), &mut problems.system);
        let kernel_bad =
            crate::facts::kernel_bad::KernelBadFacts::collect(source, (), &mut problems.system);
        let installs = InstallFacts::collect(source, &platform.env, &mut problems.installs);
        let libraries = LibraryFacts::collect(source, &installs, &mut problems.libraries);
        let compiler =
            CompilerFacts::collect(source, (&installs, &platform.env), &mut problems.compiler);
        let frameworks = FrameworkFacts::collect(source, &platform.env, &mut problems.frameworks);
        let bundled = crate::facts::bundled::BundledFacts::collect(
            source,
            (&frameworks, &platform.env),
            &mut problems.frameworks,
        );
        // One read of the mount table for the checks that ask which filesystem holds a path.
        let mounts = crate::facts::mounts::MountTable::read(source.root(), &mut problems.system);
        let libenv = crate::facts::libenv::LibEnvFacts::collect(
            source,
            mounts.as_ref(),
            &mut problems.libraries,
        );
        let tools = ToolFacts::collect(source, (&installs, &platform.env), &mut problems.tools);
        let rocr_build = RocrBuild::collect(source, &installs, &mut problems.installs);
        let wsl = WslFacts::collect(
            source,
            (&platform, &installs, &frameworks),
            &mut problems.system,
        );

        // After the processes were read: the probe's own KFD process is not among them.
        let active = match source.kind() {
            SourceKind::Live => options
                .active
                .as_ref()
                .map(|o| probe_live(kfd.as_ref().map(|k| &k.topology), &installs, o)),
            SourceKind::Fixture { .. } => source.fixture_config().and_then(|c| c.active.clone()),
        };
        if let Some(a) = &active {
            root.record(|| crate::source::record::Record::Active(Box::new(a.clone())));
        }
        let devices = DeviceFacts::collect(source, inventory.as_ref(), &mut problems.system);
        let container = crate::facts::container::ContainerFacts::collect(
            source,
            (&platform, &devices, mounts.as_ref()),
            &mut problems.system,
        );
        let mut facts = Self {
            source: source.kind(),
            kfd,
            kfd_error,
            kfd_unreadable,
            inventory,
            pci,
            pcie,
            module,
            firmware,
            gtt,
            fw_versions,
            telemetry,
            platform,
            os_release,
            identity,
            kernel_log,
            kernel_bad,
            devices,
            container,
            installs,
            libraries,
            compiler,
            frameworks,
            bundled,
            libenv,
            tools,
            overrides: Default::default(),
            rocr_build,
            wsl,
            processes,
            active,
            problems,
        };
        facts.rederive();
        facts
    }
}

/// Runs the active probes on the live machine: the GPUs' `gpu_id`s from the topology, the
/// libraries a process would load (or the ones `options` names) from the installs.
fn probe_live(
    topology: Option<&crate::facts::topology::Topology>,
    installs: &InstallFacts,
    options: &crate::active::ActiveOptions,
) -> ActiveFacts {
    use crate::active::{hip, kfd, rocr, thunk};
    let gpu_ids: Vec<u32> = topology
        .map(|t| t.gpu_nodes().filter_map(|n| n.gpu_id).collect())
        .unwrap_or_default();
    use crate::active::isolate::{Answer, Stage, run_in_child};
    let mut facts = kfd::probe(KFD_DEVICE, &gpu_ids);
    let thunk_lib = installs.hsakmt_library(options.hsakmt_lib.as_deref());
    let rocr_lib = installs.rocr_library(options.hsa_runtime_lib.as_deref());
    let hip_lib = installs.hip_library(options.hip_lib.as_deref());
    let Some(exe) = options.isolate_with.as_deref() else {
        facts.hsakmt = Some(thunk::probe(thunk_lib));
        let (rocr, dispatch) = rocr::probe(rocr_lib, options);
        facts.rocr = Some(rocr);
        facts.dispatch = dispatch;
        facts.hip = Some(hip::probe(hip_lib));
        return facts;
    };
    // Each library in a process of its own: a crash in it ends that process, not the report.
    // What needs no loading (a missing library) is answered here.
    facts.hsakmt = Some(match thunk_lib {
        thunk::ThunkLibrary::Load { path, shown } => {
            match run_in_child(
                exe,
                &Stage::Thunk {
                    path: path.clone(),
                    shown,
                },
            ) {
                Ok(Answer::Thunk(t)) => t,
                Ok(_) => crate::active::ThunkResult::default(),
                Err(crash) => crate::active::ThunkResult {
                    library: Some(path.display().to_string()),
                    crashed: Some(crash),
                    ..Default::default()
                },
            }
        }
        other => thunk::probe(other),
    });
    match rocr_lib {
        Ok(path) => {
            let stage = Stage::Rocr {
                path: path.clone(),
                dispatch: options.dispatch,
                dispatch_timeout_ms: options.dispatch_timeout_ms,
            };
            match run_in_child(exe, &stage) {
                Ok(Answer::Rocr(r, d)) => {
                    facts.rocr = Some(r);
                    facts.dispatch = d;
                }
                Ok(_) => {}
                Err(crash) => {
                    facts.rocr = Some(crate::active::RocrResult {
                        library: Some(path.display().to_string()),
                        crashed: Some(crash),
                        ..Default::default()
                    });
                }
            }
        }
        Err(e) => {
            let (rocr, dispatch) = rocr::probe(Err(e), options);
            facts.rocr = Some(rocr);
            facts.dispatch = dispatch;
        }
    }
    facts.hip = Some(match hip_lib {
        Ok(path) => match run_in_child(exe, &Stage::Hip { path: path.clone() }) {
            Ok(Answer::Hip(h)) => h,
            Ok(_) => crate::active::HipResult::default(),
            Err(crash) => crate::active::HipResult {
                library: Some(path.display().to_string()),
                crashed: Some(crash),
                ..Default::default()
            },
        },
        Err(e) => hip::probe(Err(e)),
    });
    facts
}
