//! Agents as rocminfo shows them, derived from the topology and its neighbours; physical GPUs
//! (partitions grouped back together) and XGMI hives.
//!
//! Only fields sysfs can give are here. Queue sizes, pools, grid and workgroup limits are ROCr's
//! and come only from active probes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::drm::RenderNode;
use crate::facts::marketing::MarketingNames;
use crate::facts::module::AmdgpuParameters;
use crate::facts::topology::{Node, NodeKind, Scope, Topology};
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::ReadError;
use crate::target::{self, GfxVersion, TargetSource};

/// `capability` bit: SRAM ECC enabled (ROCr picks `sramecc+` from it).
const CAP_SRAM_EDC: u32 = 0x0400_0000;
/// `capability` bit: coherent host access (MI300A, CPU-connected XGMI).
const CAP_COHERENT_HOST_ACCESS: u32 = 0x1000_0000;
/// `capability` bits 22–25: ASIC revision.
const CAP_ASIC_REVISION_SHIFT: u32 = 22;

/// AMD's PCI vendor id.
pub const PCI_VENDOR_AMD: u32 = 0x1002;

/// The environment variable ROCr reads to ask for an XNACK mode.
pub const HSA_XNACK: &str = "HSA_XNACK";
/// Where the CPU model name comes from.
const CPUINFO: &str = "/proc/cpuinfo";

/// Everything the agent view is derived from; collecting it is the only I/O.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AgentFacts {
    /// The KFD topology.
    pub topology: Topology,
    /// amdgpu module parameters.
    pub amdgpu: AmdgpuParameters,
    /// Render nodes of the GPU nodes, by minor.
    pub render_nodes: BTreeMap<u32, RenderNode>,
    /// `amdgpu.ids` entries for the device ids present.
    pub names: MarketingNames,
    /// `HSA_XNACK` of the probing process.
    pub hsa_xnack: Option<String>,
    /// CPU model names from `/proc/cpuinfo`, by APIC id: libhsakmt names a CPU node after the
    /// processor whose `apicid` equals the node's `cpu_core_id_base`.
    pub cpu_models: BTreeMap<u32, String>,
    /// Problems met while collecting everything but the topology: the ones its collector
    /// recorded, kept here by the caller.
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub problems: Vec<Problem>,
}

/// What the agent view is read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentNeeds {
    /// Everything the agent view shows, with amdgpu's parameters already read (each file is
    /// read once per run).
    All(AmdgpuParameters),
    /// Only what gfx names need: each node's `properties`, plus — for full target IDs — what
    /// decides XNACK (amdgpu's `noretry` and `HSA_XNACK`). No links, caches, memory banks, drm,
    /// `amdgpu.ids` or `/proc` reads.
    Targets {
        /// Full target IDs too.
        target_ids: bool,
    },
}

impl Collect for AgentFacts {
    type Needs<'a> = AgentNeeds;
    /// Fails only when there is no readable KFD topology.
    type Output = Result<Self, ReadError>;

    /// Reads the topology and what the agent view needs beside it. The topology's problems are
    /// kept in it (the inventory lists them first); the rest go to `problems`.
    fn collect(source: &Source, needs: AgentNeeds, problems: &mut Vec<Problem>) -> Self::Output {
        let root = source.root();
        let scope = match needs {
            AgentNeeds::All(_) => Scope::Full,
            AgentNeeds::Targets { .. } => Scope::Properties,
        };
        let (topology, topology_problems) = crate::facts::collect::<Topology>(source, scope);
        let topology = Topology {
            problems: topology_problems,
            ..topology?
        };
        let amdgpu = match needs {
            AgentNeeds::All(amdgpu) => amdgpu,
            AgentNeeds::Targets { target_ids } => {
                let mut facts = Self {
                    topology,
                    ..Self::default()
                };
                if target_ids {
                    facts.amdgpu = AmdgpuParameters::collect(source, (), problems);
                    facts.hsa_xnack = source.host().env(HSA_XNACK);
                }
                return Ok(facts);
            }
        };
        let gpus: Vec<&Node> = topology.gpu_nodes().collect();
        // A minor shared by several nodes (a capture that says 0 for every GPU) is read once.
        let minors: std::collections::BTreeSet<u32> = gpus
            .iter()
            .filter_map(|n| n.props().drm_render_minor)
            .collect();
        let render_nodes = minors
            .into_iter()
            .map(|minor| (minor, RenderNode::collect(source, minor, problems)))
            .collect();
        let mut device_ids: Vec<u32> = gpus.iter().filter_map(|n| n.props().device_id).collect();
        device_ids.sort_unstable();
        device_ids.dedup();
        let names = MarketingNames::collect(source, &device_ids, problems);
        let cpu_models = optional(root.read_text(CPUINFO), problems)
            .map(|t| cpu_models(&t))
            .unwrap_or_default();
        Ok(Self {
            amdgpu,
            topology,
            render_nodes,
            names,
            hsa_xnack: source.host().env(HSA_XNACK),
            cpu_models,
            problems: Vec::new(),
        })
    }
}

/// Each processor's model name by APIC id, read the way libhsakmt's `topology_parse_cpuinfo`
/// reads it: `processor` starts a record, `model name` and `apicid` fill it. A record without
/// an APIC id (cpuinfo of a non-x86 machine) names no node, as in libhsakmt.
pub fn cpu_models(cpuinfo: &str) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    let mut model: Option<String> = None;
    let mut apicid: Option<u32> = None;
    let mut flush = |model: &mut Option<String>, apicid: &mut Option<u32>| {
        if let (Some(m), Some(a)) = (model.take(), apicid.take()) {
            out.entry(a).or_insert(m);
        }
    };
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => flush(&mut model, &mut apicid),
            "model name" => model = Some(value.trim().to_owned()).filter(|v| !v.is_empty()),
            "apicid" => apicid = value.trim().parse().ok(),
            _ => {}
        }
    }
    flush(&mut model, &mut apicid);
    out
}

/// CPU or GPU, as rocminfo's "Device Type".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceType {
    /// A CPU NUMA node.
    Cpu,
    /// A GPU or one partition of a GPU.
    Gpu,
}

/// Cache sizes per level, KiB (the first cache of each level, as ROCr reports them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheSizes {
    /// L1, KiB.
    pub l1_kib: Option<u64>,
    /// L2, KiB.
    pub l2_kib: Option<u64>,
    /// L3 (Infinity Cache / MALL on GPUs), KiB.
    pub l3_kib: Option<u64>,
}

/// One agent: a topology node in rocminfo's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Agent {
    /// KFD node id (rocminfo "Node" and "Internal Node ID").
    pub node: u32,
    /// CPU or GPU.
    pub device_type: DeviceType,
    /// rocminfo "Name": the gfx processor for GPUs, the CPU model for CPUs.
    pub name: Option<String>,
    /// Processor (GPUs).
    pub gfx: Option<GfxVersion>,
    /// Where `gfx` came from.
    pub gfx_source: Option<TargetSource>,
    /// Full target ID, features whose setting is unknown left out.
    pub target_id: Option<String>,
    /// ISA name as ROCr prints it (`amdgcn-amd-amdhsa--<target id>`).
    pub isa: Option<String>,
    /// rocminfo "Marketing Name".
    pub marketing_name: Option<String>,
    /// rocminfo "Vendor Name" (GPUs: from the PCI vendor id).
    pub vendor_name: Option<String>,
    /// rocminfo "Uuid" (`GPU-<unique_id in hex>`).
    pub uuid: Option<String>,
    /// rocminfo "Chip ID": the PCI device id.
    #[serde(serialize_with = "crate::facts::hex::opt")]
    pub chip_id: Option<u32>,
    /// rocminfo "ASIC Revision" (`capability` bits 22–25).
    pub asic_revision: Option<u32>,
    /// PCI revision id (drm `device/revision`), used for the marketing name.
    pub pci_revision: Option<u32>,
    /// KFD `gpu_id`.
    pub gpu_id: Option<u32>,
    /// rocminfo "BDFID": `location_id`.
    pub bdfid: Option<u32>,
    /// PCI domain (absent on kernels before ~5.4).
    pub domain: Option<u32>,
    /// PCI address `DDDD:BB:DD.F`; `None` when the domain is not known.
    pub pci_address: Option<String>,
    /// rocminfo "Compute Unit" (CPU: cores).
    pub compute_units: Option<u32>,
    /// rocminfo "SIMDs per CU".
    pub simds_per_cu: Option<u32>,
    /// rocminfo "Shader Engines".
    pub shader_engines: Option<u32>,
    /// rocminfo "Shader Arrs. per Eng.".
    pub shader_arrays_per_engine: Option<u32>,
    /// rocminfo "Wavefront Size".
    pub wavefront_size: Option<u32>,
    /// rocminfo "Max Waves Per CU".
    pub max_waves_per_cu: Option<u32>,
    /// rocminfo "Max Work-item Per CU": wavefront size × max waves per CU.
    pub max_work_items_per_cu: Option<u32>,
    /// rocminfo "Max Clock Freq. (MHz)".
    pub max_clock_mhz: Option<u32>,
    /// rocminfo "Cache Info".
    pub caches: CacheSizes,
    /// Local memory from the node's memory banks, bytes: VRAM on discrete GPUs, the GTT-sized
    /// bank on APUs, system memory on CPU nodes. `None` when there are no banks.
    pub memory_bytes: Option<u64>,
    /// Integrated (APU) GPU.
    pub integrated: Option<bool>,
    /// SRAM ECC on.
    pub sramecc: Option<bool>,
    /// XNACK on for this process; `None` when unknown or not a feature of this processor.
    pub xnack: Option<bool>,
    /// rocminfo "Coherent Host Access".
    pub coherent_host_access: Option<bool>,
    /// Compute dies (XCCs) in this node.
    pub num_xcc: Option<u32>,
    /// rocminfo "Packet Processor uCode".
    pub mec_firmware: Option<u32>,
    /// rocminfo "SDMA engine uCode".
    pub sdma_firmware: Option<u32>,
    /// Render node minor.
    pub drm_render_minor: Option<u32>,
    /// Index into [`Inventory::gpus`].
    pub physical_gpu: Option<usize>,
    /// Partition index within the physical GPU (0 when not partitioned).
    pub partition: Option<usize>,
    /// XGMI hive id (0 is `None`).
    #[serde(serialize_with = "crate::facts::hex::opt")]
    pub hive_id: Option<u64>,
}

/// A physical GPU: one PCI function, possibly split into several KFD nodes (partitions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PhysicalGpu {
    /// Position in [`Inventory::gpus`].
    pub index: usize,
    /// PCI address of the device (partition bits cleared); `None` when the domain is unknown.
    pub pci_address: Option<String>,
    /// PCI device id.
    #[serde(serialize_with = "crate::facts::hex::opt")]
    pub device_id: Option<u32>,
    /// Marketing name of its first node.
    pub marketing_name: Option<String>,
    /// Processor.
    pub gfx: Option<GfxVersion>,
    /// KFD nodes, one per partition, in node order.
    pub nodes: Vec<u32>,
    /// Compute units over all partitions; `None` if any is unknown.
    pub compute_units: Option<u32>,
    /// Memory over all partitions, bytes; `None` if any is unknown.
    pub memory_bytes: Option<u64>,
    /// XGMI hive id.
    #[serde(serialize_with = "crate::facts::hex::opt")]
    pub hive_id: Option<u64>,
}

/// GPUs joined by XGMI, sharing one `hive_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Hive {
    /// The hive id.
    #[serde(serialize_with = "crate::facts::hex::one")]
    pub hive_id: u64,
    /// Indices into [`Inventory::gpus`].
    pub gpus: Vec<usize>,
}

/// The machine's agents, physical GPUs and hives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Inventory {
    /// All agents in node order.
    pub agents: Vec<Agent>,
    /// Physical GPUs in order of their first node.
    pub gpus: Vec<PhysicalGpu>,
    /// XGMI hives.
    pub hives: Vec<Hive>,
    /// The process XNACK mode and what it was derived from.
    pub xnack: XnackFacts,
    /// Everything malformed or unreadable, with its path.
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub problems: Vec<Problem>,
}

/// XNACK for this process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct XnackFacts {
    /// On, off, or unknown (`null`).
    pub enabled: Option<bool>,
    /// amdgpu's `noretry` parameter.
    pub noretry: Option<i32>,
    /// `HSA_XNACK`.
    pub hsa_xnack: Option<String>,
}

impl AgentFacts {
    /// The agents on their own (what `agents`, `topo` and [`Inventory::collect`] need), with
    /// amdgpu's parameters read first and their problems listed last, every problem kept here.
    pub fn gather(source: &Source) -> Result<Self, ReadError> {
        let (amdgpu, mut later) = crate::facts::collect::<AmdgpuParameters>(source, ());
        let (facts, mut problems) =
            crate::facts::collect::<AgentFacts>(source, AgentNeeds::All(amdgpu));
        problems.append(&mut later);
        facts.map(|f| AgentFacts { problems, ..f })
    }

    /// What gfx names (and with `target_ids`, full target IDs) need, every problem kept here:
    /// `rocm-probe targets`, which reads no more than `rocm_agent_enumerator` does.
    ///
    /// ```
    /// use rocm_probe::{AgentFacts, Inventory, Source};
    ///
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/mi210-xgmi-8gpu");
    /// let facts = AgentFacts::gather_targets(&Source::fixture(dir)?, true)?;
    /// let inventory = Inventory::from_facts(&facts);
    /// assert_eq!(inventory.targets(false), vec!["gfx90a"; 8]);
    /// assert_eq!(inventory.targets(true)[0], "gfx90a:sramecc+:xnack-");
    /// assert_eq!(inventory.exit_code(), 0);
    ///
    /// // No KFD topology is an error the caller words (the CLI: "no KFD", exit 1).
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/no-amdgpu");
    /// assert!(AgentFacts::gather_targets(&Source::fixture(dir)?, false).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather_targets(source: &Source, target_ids: bool) -> Result<Self, ReadError> {
        let (facts, problems) =
            crate::facts::collect::<AgentFacts>(source, AgentNeeds::Targets { target_ids });
        facts.map(|f| AgentFacts { problems, ..f })
    }
}

/// How a GPU is named in every sentence the probe prints (README "Which GPU is which"): its
/// physical GPU's index in KFD node order (`GPU 2`), the partition's index within it
/// (`GPU 2.3`), the PCI address — the name that stays when indices move — and the ROCr index:
/// the agent's place among GPU agents in KFD node order, which `ROCR_VISIBLE_DEVICES` counts
/// and which is HIP's device index when no mask is set. A partitioned GPU named as a whole has
/// no ROCr index (each partition has its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuName {
    /// Index of the physical GPU in [`Inventory::gpus`].
    pub physical: usize,
    /// Index of the partition within it, when the GPU is partitioned and one is named.
    pub partition: Option<usize>,
    /// PCI address of the device.
    pub pci_address: Option<String>,
    /// Place among GPU agents in node order, when one agent is named.
    pub rocr_index: Option<usize>,
    /// The KFD node, shown when the PCI address is unknown.
    pub node: u32,
}

impl GpuName {
    /// The index part alone, `2` or `2.3`: what a table column shows beside a legend that
    /// gives the whole name.
    pub fn label(&self) -> String {
        match self.partition {
            Some(p) => format!("{}.{p}", self.physical),
            None => self.physical.to_string(),
        }
    }
}

impl std::fmt::Display for GpuName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = self.label();
        let address = self
            .pci_address
            .clone()
            .unwrap_or_else(|| crate::msg!("facts.gpu-at-node", node = self.node));
        f.write_str(&match self.rocr_index {
            Some(rocr) => crate::msg!("facts.gpu-name-rocr", label, address, rocr),
            None => crate::msg!("facts.gpu-name", label, address),
        })
    }
}

impl Inventory {
    /// The name of the GPU agent on KFD node `node` (`None` for a CPU node or an unknown one).
    pub fn agent_name(&self, node: u32) -> Option<GpuName> {
        self.agent_name_among(node, |_| true)
    }

    /// As [`Self::agent_name`] for a process that is given only the GPU agents `given` keeps
    /// (KFD's apertures): ROCr enumerates those alone, so the ROCr index counts among them, and
    /// an agent not given has none.
    pub fn agent_name_among(&self, node: u32, given: impl Fn(&Agent) -> bool) -> Option<GpuName> {
        self.gpu_agents().find(|a| a.node == node)?;
        let rocr_index = self
            .gpu_agents()
            .filter(|a| given(a))
            .position(|a| a.node == node);
        let g = self.gpus.iter().find(|g| g.nodes.contains(&node))?;
        let partition = if g.nodes.len() > 1 {
            g.nodes.iter().position(|&n| n == node)
        } else {
            None
        };
        Some(GpuName {
            physical: g.index,
            partition,
            pci_address: g.pci_address.clone(),
            rocr_index,
            node,
        })
    }

    /// The name of a physical GPU: as its one agent, or as a whole when it is partitioned.
    pub fn gpu_name(&self, g: &PhysicalGpu) -> GpuName {
        match g.nodes.as_slice() {
            [node] => self.agent_name(*node),
            _ => None,
        }
        .unwrap_or_else(|| GpuName {
            physical: g.index,
            partition: None,
            pci_address: g.pci_address.clone(),
            rocr_index: None,
            node: g.nodes.first().copied().unwrap_or_default(),
        })
    }

    /// Collects and derives in one step ([`AgentFacts::gather`]): what `rocm-probe agents`
    /// shows.
    ///
    /// ```
    /// use rocm_probe::{Inventory, Source};
    ///
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/mi300x-cpx-8gpu");
    /// let inventory = Inventory::collect(&Source::fixture(dir)?)?;
    /// // 8 MI300X in CPX mode: each physical GPU is several agents (partitions), one is missing.
    /// assert_eq!(inventory.gpus.len(), 8);
    /// assert_eq!(inventory.gpu_agents().count(), 63);
    /// assert_eq!(inventory.gpus[7].nodes.len(), 7);
    /// assert_eq!(inventory.gpus[0].marketing_name.as_deref(), Some("AMD Instinct MI300X"));
    /// // All eight in one XGMI hive; every sentence names a GPU the same way.
    /// assert_eq!(inventory.hives.len(), 1);
    /// let name = inventory.gpu_name(&inventory.gpus[0]).to_string();
    /// assert!(name.starts_with("GPU 0 (0000:05:00.0"), "{name}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn collect(source: &Source) -> Result<Self, ReadError> {
        AgentFacts::gather(source).map(|f| Self::from_facts(&f))
    }

    /// One line per GPU node in node order, as `rocm_agent_enumerator` prints them: the gfx
    /// name, or with `target_ids` the full target ID. Nodes whose target is unknown are left
    /// out (each has a problem).
    pub fn targets(&self, target_ids: bool) -> Vec<String> {
        self.gpu_agents()
            .filter_map(|a| {
                if target_ids {
                    a.target_id.clone()
                } else {
                    a.name.clone()
                }
            })
            .collect()
    }

    /// The exit code of commands that list GPUs: 0 with at least one GPU agent, 1 without
    /// (ARCHITECTURE.md §5: no GPU is a failure of layer 1).
    pub fn exit_code(&self) -> u8 {
        if self.gpu_agents().next().is_some() {
            0
        } else {
            1
        }
    }

    /// GPU agents in node order.
    pub fn gpu_agents(&self) -> impl Iterator<Item = &Agent> {
        self.agents
            .iter()
            .filter(|a| a.device_type == DeviceType::Gpu)
    }

    /// Derives the view; pure.
    pub fn from_facts(facts: &AgentFacts) -> Self {
        let topo = &facts.topology;
        let mut problems = topo.problems.clone();
        problems.extend(facts.problems.iter().cloned());

        let gfx_of: BTreeMap<u32, (GfxVersion, TargetSource)> = topo
            .gpu_nodes()
            .filter_map(|n| gfx_of(n).map(|g| (n.id, g)))
            .collect();
        let processors: Vec<GfxVersion> = gfx_of.values().map(|(g, _)| *g).collect();
        let xnack = target::process_xnack(
            &processors,
            facts.amdgpu.noretry,
            facts.hsa_xnack.as_deref(),
        );

        let mut agents = Vec::new();
        for node in &topo.nodes {
            match node.kind() {
                NodeKind::Cpu => agents.push(cpu_agent(node, &facts.cpu_models)),
                NodeKind::Gpu => {
                    let gfx = gfx_of.get(&node.id).copied();
                    if gfx.is_none() {
                        problems.push(Problem::new(
                            format!(
                                "{}/nodes/{}/properties",
                                crate::facts::topology::TOPOLOGY_DIR,
                                node.id
                            ),
                            crate::text!("facts.gpu-without-target"),
                        ));
                    }
                    agents.push(gpu_agent(node, gfx, xnack, facts));
                }
                NodeKind::Unknown => problems.push(Problem::new(
                    format!("{}/nodes/{}", crate::facts::topology::TOPOLOGY_DIR, node.id),
                    crate::text!("facts.node-kind-unknown"),
                )),
            }
        }
        let gpus = group_physical(&mut agents, &mut problems);
        let hives = group_hives(&gpus);
        Self {
            agents,
            gpus,
            hives,
            xnack: XnackFacts {
                enabled: xnack,
                noretry: facts.amdgpu.noretry,
                hsa_xnack: facts.hsa_xnack.clone(),
            },
            problems,
        }
    }
}

fn gfx_of(node: &Node) -> Option<(GfxVersion, TargetSource)> {
    let p = node.props();
    if let Some(g) = p
        .gfx_target_version
        .and_then(GfxVersion::from_target_version)
    {
        return Some((g, TargetSource::GfxTargetVersion));
    }
    p.device_id
        .and_then(target::from_device_id)
        .map(|g| (g, TargetSource::DeviceIdTable))
}

/// The node's PCI address. Kernels before the `domain` key (about 5.4) give `location_id` only;
/// their KFD, and ROCr's BDF id of the time, knew PCI domain 0 alone, so that is the domain.
fn pci_address(domain: Option<u32>, location_id: u32) -> Option<String> {
    let d = domain.unwrap_or(0);
    Some(format!(
        "{d:04x}:{:02x}:{:02x}.{:x}",
        location_id >> 8,
        (location_id >> 3) & 0x1f,
        location_id & 0x7
    ))
}

fn memory_of(node: &Node, heaps: &[u32]) -> Option<u64> {
    let banks: Vec<_> = node
        .mem_banks
        .iter()
        .filter(|b| b.heap_type.is_some_and(|h| heaps.contains(&h)))
        .collect();
    if banks.is_empty() {
        return None;
    }
    banks.iter().try_fold(0u64, |sum, b| {
        b.size_in_bytes.and_then(|s| sum.checked_add(s))
    })
}

fn caches_of(node: &Node) -> CacheSizes {
    let first = |level| {
        node.caches
            .iter()
            .find(|c| c.level == Some(level))
            .and_then(|c| c.size)
    };
    CacheSizes {
        l1_kib: first(1),
        l2_kib: first(2),
        l3_kib: first(3),
    }
}

fn blank_agent(node: &Node, device_type: DeviceType) -> Agent {
    let p = node.props();
    Agent {
        node: node.id,
        device_type,
        name: None,
        gfx: None,
        gfx_source: None,
        target_id: None,
        isa: None,
        marketing_name: None,
        vendor_name: None,
        uuid: None,
        chip_id: None,
        asic_revision: None,
        pci_revision: None,
        gpu_id: node.gpu_id,
        bdfid: None,
        domain: None,
        pci_address: None,
        compute_units: None,
        simds_per_cu: None,
        shader_engines: None,
        shader_arrays_per_engine: None,
        wavefront_size: None,
        max_waves_per_cu: None,
        max_work_items_per_cu: None,
        max_clock_mhz: None,
        caches: caches_of(node),
        memory_bytes: None,
        integrated: None,
        sramecc: None,
        xnack: None,
        coherent_host_access: None,
        num_xcc: p.num_xcc,
        mec_firmware: None,
        sdma_firmware: None,
        drm_render_minor: None,
        physical_gpu: None,
        partition: None,
        hive_id: None,
    }
}

fn cpu_agent(node: &Node, models: &BTreeMap<u32, String>) -> Agent {
    let p = node.props();
    let model = p
        .cpu_core_id_base
        .and_then(|base| models.get(&base).cloned());
    Agent {
        name: model.clone(),
        marketing_name: model,
        compute_units: p.cpu_cores_count,
        max_clock_mhz: p.max_engine_clk_ccompute,
        memory_bytes: memory_of(node, &[0]),
        ..blank_agent(node, DeviceType::Cpu)
    }
}

fn gpu_agent(
    node: &Node,
    gfx: Option<(GfxVersion, TargetSource)>,
    xnack: Option<bool>,
    facts: &AgentFacts,
) -> Agent {
    let p = node.props();
    let drm = p.drm_render_minor.and_then(|m| facts.render_nodes.get(&m));
    let asic_revision = p.capability.map(|c| (c >> CAP_ASIC_REVISION_SHIFT) & 0xf);
    let pci_revision = drm.and_then(|d| d.revision);
    let marketing_name = p
        .device_id
        .and_then(|d| facts.names.lookup(d, pci_revision).map(str::to_owned))
        .or_else(|| drm.and_then(|d| d.product_name.clone()));
    let sramecc = p.capability.map(|c| c & CAP_SRAM_EDC != 0);
    let processor = gfx.map(|(g, _)| g);
    let xnack = processor.filter(|g| g.supports_xnack()).and(xnack);
    let target_id = processor.map(|g| target::target_id(g, sramecc, xnack));
    let div = |a: Option<u32>, b: Option<u32>| a.zip(b.filter(|b| *b != 0)).map(|(a, b)| a / b);
    let max_waves_per_cu = p
        .max_waves_per_simd
        .zip(p.simd_per_cu)
        .map(|(w, s)| w.saturating_mul(s));
    Agent {
        name: processor.map(|g| g.name()),
        gfx: processor,
        gfx_source: gfx.map(|(_, s)| s),
        isa: target_id
            .as_ref()
            .map(|t| format!("amdgcn-amd-amdhsa--{t}")),
        target_id,
        marketing_name,
        uuid: p
            .unique_id
            .filter(|u| *u != 0)
            .map(|u| format!("GPU-{u:016x}")),
        chip_id: p.device_id,
        asic_revision,
        pci_revision,
        bdfid: p.location_id,
        domain: p.domain,
        pci_address: p.location_id.and_then(|l| pci_address(p.domain, l)),
        compute_units: div(p.simd_count, p.simd_per_cu),
        simds_per_cu: p.simd_per_cu,
        shader_engines: div(p.array_count, p.simd_arrays_per_engine),
        shader_arrays_per_engine: p.simd_arrays_per_engine,
        wavefront_size: p.wave_front_size,
        max_waves_per_cu,
        max_work_items_per_cu: max_waves_per_cu
            .zip(p.wave_front_size)
            .map(|(w, s)| w.saturating_mul(s)),
        vendor_name: p.vendor_id.map(|v| match v {
            PCI_VENDOR_AMD => "AMD".to_owned(),
            other => format!("0x{other:04x}"),
        }),
        max_clock_mhz: p.max_engine_clk_fcompute,
        memory_bytes: memory_of(node, &[1, 2]),
        integrated: processor.map(|g| target::is_integrated(g, p.device_id)),
        sramecc: processor.filter(|g| g.supports_sramecc()).and(sramecc),
        xnack,
        coherent_host_access: p.capability.map(|c| c & CAP_COHERENT_HOST_ACCESS != 0),
        mec_firmware: p.fw_version,
        sdma_firmware: p.sdma_fw_version,
        drm_render_minor: p.drm_render_minor,
        hive_id: p.hive_id.filter(|h| *h != 0),
        ..blank_agent(node, DeviceType::Gpu)
    }
}

/// Groups GPU agents into physical GPUs by (PCI domain, bus): partitions of one device share
/// them and differ only in the low `location_id` bits (the partition index). `unique_id` is not
/// used: its meaning changed across kernels.
fn group_physical(agents: &mut [Agent], problems: &mut Vec<Problem>) -> Vec<PhysicalGpu> {
    /// (PCI domain, bus); nodes without a location get a key of their own.
    type Key = (Option<u32>, u32);
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    for (i, a) in agents.iter().enumerate() {
        if a.device_type != DeviceType::Gpu {
            continue;
        }
        let key = match a.bdfid {
            Some(l) => (a.domain, l >> 8),
            // Without a location every node stands alone.
            None => (None, u32::MAX - a.node),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let mut gpus = Vec::with_capacity(groups.len());
    for (index, (_, members)) in groups.into_iter().enumerate() {
        let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
        for (partition, &i) in members.iter().enumerate() {
            let a = &mut agents[i];
            a.physical_gpu = Some(index);
            a.partition = Some(partition);
            if let Some(l) = a.bdfid {
                if let Some(first) = seen.insert(l, a.node) {
                    problems.push(Problem::new(
                        format!(
                            "{}/nodes/{}/properties",
                            crate::facts::topology::TOPOLOGY_DIR,
                            a.node
                        ),
                        crate::text!("facts.duplicated-node", location = l, first),
                    ));
                }
            }
        }
        let group: Vec<&Agent> = members.iter().map(|&i| &agents[i]).collect();
        let first = group[0];
        let base = group.iter().filter_map(|a| a.bdfid).min();
        let partitioned = group.len() > 1;
        gpus.push(PhysicalGpu {
            index,
            pci_address: base.and_then(|l| {
                let l = if partitioned { l & !0x7 } else { l };
                pci_address(first.domain, l)
            }),
            device_id: first.chip_id,
            marketing_name: first.marketing_name.clone(),
            gfx: first.gfx,
            nodes: group.iter().map(|a| a.node).collect(),
            compute_units: group
                .iter()
                .try_fold(0u32, |s, a| a.compute_units.map(|c| s.saturating_add(c))),
            memory_bytes: group
                .iter()
                .try_fold(0u64, |s, a| a.memory_bytes.map(|m| s.saturating_add(m))),
            hive_id: first.hive_id,
        });
    }
    gpus
}

fn group_hives(gpus: &[PhysicalGpu]) -> Vec<Hive> {
    let mut hives: Vec<Hive> = Vec::new();
    for gpu in gpus {
        let Some(id) = gpu.hive_id else { continue };
        match hives.iter_mut().find(|h| h.hive_id == id) {
            Some(h) => h.gpus.push(gpu.index),
            None => hives.push(Hive {
                hive_id: id,
                gpus: vec![gpu.index],
            }),
        }
    }
    hives
}

/// The machine's GPUs as code-object verdicts see them.
impl Inventory {
    /// Its GPUs for code-object verdicts (`inspect`, layers 5 and 7), identical agents grouped.
    pub fn code_object_gpus(&self) -> Vec<crate::codeobject::Gpu> {
        let agents: Vec<crate::codeobject::compat::MachineGpu> = self
            .gpu_agents()
            .filter_map(|a| {
                Some(crate::codeobject::compat::MachineGpu {
                    node: a.node,
                    gfx: a.gfx?,
                    sramecc: a.sramecc,
                    xnack: a.xnack,
                })
            })
            .collect();
        let mut gpus =
            crate::codeobject::Gpu::from_machine(&agents, self.xnack.hsa_xnack.as_deref());
        let every = self.gpu_agents().count();
        for g in &mut gpus {
            // A target every GPU shares is said once, as the findings say it.
            g.names = if g.nodes.len() > 1 && g.nodes.len() == every {
                vec![crate::msg!("facts.all-gpus", count = every)]
            } else {
                g.nodes
                    .iter()
                    .filter_map(|&n| self.agent_name(n))
                    .map(|n| n.to_string())
                    .collect()
            };
        }
        gpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inventory(fixture: &str) -> Inventory {
        let dir = format!("{}/../fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
        Inventory::collect(&Source::fixture(dir).unwrap()).unwrap()
    }

    /// GPU n.p for a partition, the PCI address, the ROCr index in KFD node order; a
    /// partitioned GPU as a whole has no ROCr index.
    #[test]
    fn gpus_are_named_by_physical_index_partition_address_and_rocr_index() {
        let inv = inventory("mi300x-cpx-8gpu");
        let g = &inv.gpus[2];
        let third = inv.agent_name(g.nodes[3]).unwrap();
        assert_eq!((third.physical, third.partition), (2, Some(3)));
        assert_eq!(third.rocr_index, Some(2 * inv.gpus[0].nodes.len() + 3));
        assert_eq!(third.pci_address, g.pci_address);
        let whole = inv.gpu_name(g);
        assert_eq!((whole.partition, whole.rocr_index), (None, None));
        assert!(inv.agent_name(0).is_none(), "node 0 is a CPU");

        let inv = inventory("igpu-beside-dgpu");
        let dgpu = inv.gpu_name(&inv.gpus[1]);
        assert_eq!(
            (dgpu.physical, dgpu.partition, dgpu.rocr_index),
            (1, None, Some(1))
        );
        let shown = crate::i18n::scoped(crate::i18n::Lang::En, || dgpu.to_string());
        assert_eq!(shown, "GPU 1 (0000:86:00.0, ROCr 1)");
    }

    #[test]
    fn cpu_models_by_apic_id() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\napicid\t\t: 0\n\n\
                    processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\napicid\t\t: 2\n\n\
                    processor\t: 2\nmodel name\t: Other\napicid\t\t: 128\n";
        let models = cpu_models(text);
        assert_eq!(
            models.get(&0).map(String::as_str),
            Some("AMD EPYC 9654 96-Core Processor")
        );
        assert_eq!(models.get(&128).map(String::as_str), Some("Other"));
        assert_eq!(models.get(&1), None);
        // No APIC id (an Arm machine's cpuinfo): no node is named.
        assert!(cpu_models("processor : 0\nmodel name : X\n").is_empty());
    }

    #[test]
    fn pci_addresses_from_location_id() {
        assert_eq!(pci_address(Some(0), 1280).as_deref(), Some("0000:05:00.0"));
        assert_eq!(
            pci_address(Some(1), 25600 | 0x9).as_deref(),
            Some("0001:64:01.1")
        );
        // A kernel before the domain key: domain 0, as its KFD and ROCr assumed.
        assert_eq!(pci_address(None, 1280).as_deref(), Some("0000:05:00.0"));
    }
}
