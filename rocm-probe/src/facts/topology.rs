//! The KFD topology: `/sys/class/kfd/kfd/topology` as typed facts.
//!
//! Nodes are numbered 0..N-1 with no upper bound; every value is optional; anything malformed
//! becomes a [`Problem`] naming the path, and the rest of the tree is still read.

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::properties::properties;
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::{ReadError, SysRoot};

/// Where the kernel publishes the topology (the libhsakmt spelling is
/// `/sys/devices/virtual/kfd/kfd/topology`; `rocm_agent_enumerator` uses this one).
pub const TOPOLOGY_DIR: &str = "/sys/class/kfd/kfd/topology";

/// The KFD topology is there but this process was refused reading it: who was refused, what,
/// and the refused path's mode and owner when `stat` (which needs no read permission) gives
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KfdUnreadable {
    /// The path the read was refused on (the topology or a directory inside it).
    pub path: String,
    /// The effective uid of the probe, which was refused.
    pub uid: u32,
    /// The refused path's permission bits (`0o7777` mask).
    pub mode: Option<u32>,
    /// Its owning uid.
    pub owner_uid: Option<u32>,
    /// Its owning gid.
    pub owner_gid: Option<u32>,
}

impl KfdUnreadable {
    /// From the topology's read error: `Some` only for a refusal (not for an absent topology,
    /// which is a different diagnosis).
    pub fn from_error(root: &SysRoot, err: &ReadError) -> Option<Self> {
        if err.kind != crate::source::root::ReadErrorKind::PermissionDenied {
            return None;
        }
        let owner = root.owner(&err.path);
        Some(Self {
            path: err.path.clone(),
            uid: nix::unistd::geteuid().as_raw(),
            mode: owner.map(|o| o.mode),
            owner_uid: owner.map(|o| o.uid),
            owner_gid: owner.map(|o| o.gid),
        })
    }
}

/// How often the scan is repeated when `generation_id` changes under it (a GPU hot-added or
/// removed), as libhsakmt does.
const GENERATION_RETRIES: usize = 3;

properties! {
    /// `nodes/N/properties`. Keys in kernel print order (kfd_topology.c `node_show`).
    pub struct NodeProperties {
        cpu_cores_count: u32 = "cpu_cores_count",
        simd_count: u32 = "simd_count",
        mem_banks_count: u32 = "mem_banks_count",
        caches_count: u32 = "caches_count",
        io_links_count: u32 = "io_links_count",
        p2p_links_count: u32 = "p2p_links_count",
        cpu_core_id_base: u32 = "cpu_core_id_base",
        simd_id_base: u32 = "simd_id_base",
        max_waves_per_simd: u32 = "max_waves_per_simd",
        lds_size_in_kb: u32 = "lds_size_in_kb",
        gds_size_in_kb: u32 = "gds_size_in_kb",
        num_gws: u32 = "num_gws",
        wave_front_size: u32 = "wave_front_size",
        array_count: u32 = "array_count",
        simd_arrays_per_engine: u32 = "simd_arrays_per_engine",
        cu_per_simd_array: u32 = "cu_per_simd_array",
        simd_per_cu: u32 = "simd_per_cu",
        max_slots_scratch_cu: u32 = "max_slots_scratch_cu",
        /// `major*10000 + minor*100 + stepping`; absent before Linux ~5.15.
        gfx_target_version: u32 = "gfx_target_version",
        vendor_id: u32 = "vendor_id",
        device_id: u32 = "device_id",
        /// PCI `(bus << 8) | devfn`, OR-ed with the partition index on partitioned GPUs.
        location_id: u32 = "location_id",
        domain: u32 = "domain",
        drm_render_minor: u32 = "drm_render_minor",
        hive_id: u64 = "hive_id",
        num_sdma_engines: u32 = "num_sdma_engines",
        num_sdma_xgmi_engines: u32 = "num_sdma_xgmi_engines",
        num_sdma_queues_per_engine: u32 = "num_sdma_queues_per_engine",
        num_cp_queues: u32 = "num_cp_queues",
        max_engine_clk_fcompute: u32 = "max_engine_clk_fcompute",
        /// Always 0 on current kernels: VRAM is in the mem banks.
        local_mem_size: u64 = "local_mem_size",
        fw_version: u32 = "fw_version",
        capability: u32 = "capability",
        capability2: u32 = "capability2",
        debug_prop: u64 = "debug_prop",
        sdma_fw_version: u32 = "sdma_fw_version",
        unique_id: u64 = "unique_id",
        num_xcc: u32 = "num_xcc",
        max_engine_clk_ccompute: u32 = "max_engine_clk_ccompute",
    }
}

properties! {
    /// `nodes/N/mem_banks/I/properties`.
    pub struct MemBank {
        /// 0 system, 1 FB public, 2 FB private, 3 GDS, 4 LDS, 5 scratch.
        heap_type: u32 = "heap_type",
        size_in_bytes: u64 = "size_in_bytes",
        flags: u32 = "flags",
        width: u32 = "width",
        mem_clk_max: u32 = "mem_clk_max",
    }
}

properties! {
    /// `nodes/N/caches/I/properties`.
    pub struct Cache {
        processor_id_low: u32 = "processor_id_low",
        level: u32 = "level",
        /// KiB.
        size: u64 = "size",
        cache_line_size: u32 = "cache_line_size",
        cache_lines_per_tag: u32 = "cache_lines_per_tag",
        association: u32 = "association",
        latency: u32 = "latency",
        /// Bits: 0x1 data, 0x2 instruction, 0x4 CPU, 0x8 HSA CU.
        cache_type: u32 = "type",
    }
    text {
        /// Comma-separated 0/1 bits: which CUs share this cache.
        sibling_map = "sibling_map",
    }
}

properties! {
    /// `nodes/N/io_links/I/properties` and `p2p_links/I/properties` (same key set).
    pub struct IoLink {
        /// 2 PCIe, 11 XGMI, … (CRAT link types).
        link_type: u32 = "type",
        version_major: u32 = "version_major",
        version_minor: u32 = "version_minor",
        node_from: u32 = "node_from",
        node_to: u32 = "node_to",
        weight: u32 = "weight",
        min_latency: u32 = "min_latency",
        max_latency: u32 = "max_latency",
        min_bandwidth: u32 = "min_bandwidth",
        max_bandwidth: u32 = "max_bandwidth",
        recommended_transfer_size: u32 = "recommended_transfer_size",
        recommended_sdma_engine_id_mask: u32 = "recommended_sdma_engine_id_mask",
        /// Bits: 0x1 enabled, 0x2 non-coherent, 0x4/0x8 no 32/64-bit atomics, 0x10 no P2P DMA.
        flags: u32 = "flags",
    }
}

properties! {
    /// `topology/system_properties`.
    pub struct SystemProperties {
        platform_oem: u64 = "platform_oem",
        platform_id: u64 = "platform_id",
        platform_rev: u64 = "platform_rev",
    }
}

/// CRAT link type of XGMI links.
pub const LINK_TYPE_XGMI: u32 = 11;
/// CRAT link type of PCIe links.
pub const LINK_TYPE_PCIE: u32 = 2;

/// One topology node: a CPU NUMA node or a GPU (or one partition of a GPU).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Node {
    /// The directory number.
    pub id: u32,
    /// `gpu_id`: 0 for CPU nodes; a hash, not a PCI address.
    pub gpu_id: Option<u32>,
    /// `name`: empty for CPUs, a codename or "ip discovery" for GPUs. Never identifies a GPU.
    pub name: Option<String>,
    /// `None` when the `properties` file could not be read at all.
    pub properties: Option<NodeProperties>,
    /// Memory banks in index order.
    pub mem_banks: Vec<MemBank>,
    /// Caches in index order.
    pub caches: Vec<Cache>,
    /// Direct links in index order.
    pub io_links: Vec<IoLink>,
    /// Indirect links in index order.
    pub p2p_links: Vec<IoLink>,
}

/// What kind of agent a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// CPU NUMA node (no SIMDs).
    Cpu,
    /// GPU or GPU partition.
    Gpu,
    /// `properties` unreadable or without `simd_count`.
    Unknown,
}

impl Node {
    /// GPU nodes have SIMDs; libhsakmt uses the same test ("bail out early if a CPU node").
    pub fn kind(&self) -> NodeKind {
        match self.properties.as_ref().and_then(|p| p.simd_count) {
            Some(0) => NodeKind::Cpu,
            Some(_) => NodeKind::Gpu,
            None => NodeKind::Unknown,
        }
    }

    /// Shorthand for the typed properties, default (all unknown) when unreadable.
    pub fn props(&self) -> &NodeProperties {
        static EMPTY: std::sync::OnceLock<NodeProperties> = std::sync::OnceLock::new();
        self.properties
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(NodeProperties::default))
    }
}

/// The whole topology.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Topology {
    /// `generation_id` read after the scan (`None` when absent).
    pub generation_id: Option<u64>,
    /// `system_properties`.
    pub system_properties: Option<SystemProperties>,
    /// Nodes in numeric order.
    pub nodes: Vec<Node>,
    /// Everything malformed or unreadable, with its path: the problems its collector recorded,
    /// kept here by [`AgentFacts`](crate::facts::agent::AgentFacts)' collector for the
    /// inventory; empty straight out of [`Topology::collect`](Collect::collect).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub problems: Vec<Problem>,
}

impl Topology {
    /// GPU nodes in numeric order.
    pub fn gpu_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind() == NodeKind::Gpu)
    }
}

impl Collect for Topology {
    /// How much of each node to read.
    type Needs<'a> = Scope;
    /// Fails only when the `nodes` directory cannot be listed (no KFD, or not readable): the
    /// error is then the fact. Everything below that is a problem.
    type Output = Result<Self, ReadError>;

    /// Reads the topology, again when `generation_id` changed meanwhile (the problems of the
    /// attempt kept are the ones recorded).
    fn collect(source: &Source, scope: Scope, problems: &mut Vec<Problem>) -> Self::Output {
        let root = source.root();
        let mut attempt = 0;
        loop {
            let mut found = Vec::new();
            let before = read_generation(root);
            let mut topology = scan(root, scope, &mut found)?;
            let after = read_generation(root);
            topology.generation_id = after.as_ref().ok().copied();
            if let Err(p) = after {
                found.extend(p);
            }
            attempt += 1;
            let stable = before.as_ref().ok() == topology.generation_id.as_ref();
            if stable || attempt >= GENERATION_RETRIES {
                if !stable {
                    found.push(Problem::new(
                        format!("{TOPOLOGY_DIR}/generation_id"),
                        crate::text!("facts.generation-changed", retries = GENERATION_RETRIES),
                    ));
                }
                problems.append(&mut found);
                return Ok(topology);
            }
        }
    }
}

fn read_generation(root: &SysRoot) -> Result<u64, Option<Problem>> {
    let path = format!("{TOPOLOGY_DIR}/generation_id");
    match root.read_value(&path) {
        Ok(text) => crate::facts::properties::parse_u64(&text).ok_or_else(|| {
            Some(Problem::new(
                path,
                crate::text!("facts.not-a-number", text = format!("{text:?}")),
            ))
        }),
        Err(e) if e.is_not_found() => Err(None),
        Err(e) => Err(Some(Problem::from(e))),
    }
}

/// How much of each node to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scope {
    /// `properties` only — all `targets` needs (what rocm_agent_enumerator reads), a sixtieth
    /// of the files on an MI300X node.
    Properties,
    /// Everything.
    #[default]
    Full,
}

fn scan(root: &SysRoot, scope: Scope, problems: &mut Vec<Problem>) -> Result<Topology, ReadError> {
    let nodes_dir = format!("{TOPOLOGY_DIR}/nodes");
    let mut topology = Topology::default();
    let mut ids = Vec::new();
    for name in root.read_dir(&nodes_dir)? {
        match name.parse::<u32>() {
            Ok(id) if id.to_string() == name => ids.push(id),
            _ => problems.push(Problem::new(
                format!("{nodes_dir}/{name}"),
                crate::text!("facts.not-node-dir"),
            )),
        }
    }
    ids.sort_unstable();
    topology.nodes = ids
        .into_iter()
        .map(|id| read_node(root, &format!("{nodes_dir}/{id}"), id, scope, problems))
        .collect();
    if scope == Scope::Properties {
        return Ok(topology);
    }
    topology.system_properties = read_properties(
        root,
        &format!("{TOPOLOGY_DIR}/system_properties"),
        problems,
        SystemProperties::parse,
    );
    Ok(topology)
}

fn read_node(
    root: &SysRoot,
    dir: &str,
    id: u32,
    scope: Scope,
    problems: &mut Vec<Problem>,
) -> Node {
    let path = format!("{dir}/properties");
    let mut properties = read_properties(root, &path, problems, NodeProperties::parse);
    if let Some(p) = properties.as_mut() {
        drop_implausible_target(p, &path, problems);
    }
    if scope == Scope::Properties {
        return Node {
            id,
            properties,
            ..Node::default()
        };
    }
    Node {
        id,
        gpu_id: read_number(root, &format!("{dir}/gpu_id"), problems),
        name: read_optional(root, &format!("{dir}/name"), problems),
        properties,
        mem_banks: read_indexed(root, &format!("{dir}/mem_banks"), problems, MemBank::parse),
        caches: read_indexed(root, &format!("{dir}/caches"), problems, Cache::parse),
        io_links: read_indexed(root, &format!("{dir}/io_links"), problems, IoLink::parse),
        p2p_links: read_indexed(root, &format!("{dir}/p2p_links"), problems, IoLink::parse),
    }
}

/// A `gfx_target_version` that no kernel writes (a field out of range) is a malformed value,
/// never a target: it is dropped with a problem naming the file, and the node falls back to
/// its device id like on kernels without the key.
fn drop_implausible_target(p: &mut NodeProperties, path: &str, problems: &mut Vec<Problem>) {
    let Some(v) = p.gfx_target_version else {
        return;
    };
    if crate::target::GfxVersion::is_plausible_target_version(v) {
        return;
    }
    p.gfx_target_version = None;
    problems.push(Problem::new(
        path,
        crate::text!("facts.target-version-implausible", value = v),
    ));
}

/// Reads `dir/<i>/properties` for every numeric `i`, in numeric order. A missing directory is
/// an empty list (older kernels, partial captures).
fn read_indexed<T>(
    root: &SysRoot,
    dir: &str,
    problems: &mut Vec<Problem>,
    parse: fn(&str, &mut Vec<crate::i18n::Text>) -> T,
) -> Vec<T> {
    let Some(names) = optional(root.read_dir(dir), problems) else {
        return Vec::new();
    };
    let mut ids: Vec<u32> = Vec::with_capacity(names.len());
    for name in names {
        match name.parse::<u32>() {
            Ok(i) if i.to_string() == name => ids.push(i),
            _ => problems.push(Problem::new(
                format!("{dir}/{name}"),
                crate::text!("facts.not-index-dir"),
            )),
        }
    }
    ids.sort_unstable();
    ids.into_iter()
        .filter_map(|i| read_properties(root, &format!("{dir}/{i}/properties"), problems, parse))
        .collect()
}

fn read_properties<T>(
    root: &SysRoot,
    path: &str,
    problems: &mut Vec<Problem>,
    parse: fn(&str, &mut Vec<crate::i18n::Text>) -> T,
) -> Option<T> {
    match root.read_text(path) {
        Ok(text) => {
            let mut messages = Vec::new();
            let parsed = parse(&text, &mut messages);
            if text.trim().is_empty() {
                messages.push(crate::text!("facts.empty-file"));
            }
            problems.extend(crate::source::problem::fold(path, messages));
            Some(parsed)
        }
        Err(e) => {
            if !(e.is_not_found() && path.ends_with("system_properties")) {
                problems.push(e.into());
            }
            None
        }
    }
}

fn read_optional(root: &SysRoot, path: &str, problems: &mut Vec<Problem>) -> Option<String> {
    optional(root.read_value(path), problems)
}

fn read_number(root: &SysRoot, path: &str, problems: &mut Vec<Problem>) -> Option<u32> {
    let text = read_optional(root, path, problems)?;
    match crate::facts::properties::parse_u64(&text).map(u32::try_from) {
        Some(Ok(v)) => Some(v),
        _ => {
            problems.push(Problem::new(
                path.to_owned(),
                crate::text!("facts.not-u32", text = format!("{text:?}")),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI300_NODE: &str = "cpu_cores_count 0\nsimd_count 152\nmem_banks_count 1\n\
        caches_count 80\nio_links_count 63\np2p_links_count 1\ncpu_core_id_base 0\n\
        simd_id_base 2147488064\nmax_waves_per_simd 8\nlds_size_in_kb 64\ngds_size_in_kb 0\n\
        num_gws 64\nwave_front_size 64\narray_count 4\nsimd_arrays_per_engine 1\n\
        cu_per_simd_array 10\nsimd_per_cu 4\nmax_slots_scratch_cu 32\ngfx_target_version 90402\n\
        vendor_id 4098\ndevice_id 29857\nlocation_id 1280\ndomain 0\ndrm_render_minor 128\n\
        hive_id 15188982192727901047\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\n\
        num_sdma_queues_per_engine 8\nnum_cp_queues 24\nmax_engine_clk_fcompute 2100\n\
        local_mem_size 0\nfw_version 177\ncapability 2893521536\ndebug_prop 1511\n\
        sdma_fw_version 24\nunique_id 16404946649897475633\nnum_xcc 1\n\
        max_engine_clk_ccompute 2750\n";

    #[test]
    fn parses_a_real_mi300x_node_without_problems() {
        let mut p = Vec::new();
        let n = NodeProperties::parse(MI300_NODE, &mut p);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(n.hive_id, Some(15188982192727901047));
        assert_eq!(n.unique_id, Some(16404946649897475633));
        assert_eq!(n.gfx_target_version, Some(90402));
        assert_eq!(n.capability2, None);
        assert!(n.extra.is_empty());
    }

    #[test]
    fn newest_key_set_with_capability2_in_the_middle() {
        let text = MI300_NODE.replace("debug_prop", "capability2 1\ndebug_prop");
        let mut p = Vec::new();
        let n = NodeProperties::parse(&text, &mut p);
        assert_eq!((n.capability2, n.debug_prop), (Some(1), Some(1511)));
    }

    #[test]
    fn cache_with_sibling_map() {
        let mut p = Vec::new();
        let c = Cache::parse(
            "processor_id_low 2147487744\nlevel 1\nsize 32\ncache_line_size 0\n\
             cache_lines_per_tag 0\nassociation 0\nlatency 0\ntype 9\nsibling_map 1,0,0,0\n",
            &mut p,
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            (c.level, c.size, c.cache_type),
            (Some(1), Some(32), Some(9))
        );
        assert_eq!(c.sibling_map.as_deref(), Some("1,0,0,0"));
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const T: &str = "sys/class/kfd/kfd/topology";

    fn full(dir: &tempfile::TempDir) -> (Topology, Vec<Problem>) {
        let (topo, problems) =
            crate::facts::collect::<Topology>(&Source::fixture(dir.path()).unwrap(), Scope::Full);
        (topo.unwrap(), problems)
    }

    #[test]
    fn nodes_sort_numerically_past_ten_and_junk_names_are_problems() {
        let mut files = vec![];
        let paths: Vec<String> = (0..12)
            .map(|i| format!("{T}/nodes/{i}/properties"))
            .collect();
        for p in &paths {
            files.push((p.as_str(), "simd_count 0\n"));
        }
        let foo = format!("{T}/nodes/foo/properties");
        let zero = format!("{T}/nodes/07/properties");
        files.push((foo.as_str(), "simd_count 4\n"));
        files.push((zero.as_str(), "simd_count 4\n"));
        let dir = tree(&files);
        let (topo, problems) = full(&dir);
        let ids: Vec<u32> = topo.nodes.iter().map(|n| n.id).collect();
        assert_eq!(ids, (0..12).collect::<Vec<_>>());
        let bad: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert!(
            bad.contains(&"/sys/class/kfd/kfd/topology/nodes/foo"),
            "{bad:?}"
        );
        assert!(
            bad.contains(&"/sys/class/kfd/kfd/topology/nodes/07"),
            "{bad:?}"
        );
    }

    #[test]
    fn no_kfd_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        // A machine tree (an empty fixture.toml) with nothing else in it.
        std::fs::write(dir.path().join("fixture.toml"), "").unwrap();
        let err = Topology::collect(
            &Source::fixture(dir.path()).unwrap(),
            Scope::Full,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.path, "/sys/class/kfd/kfd/topology/nodes");
    }

    #[test]
    fn malformed_files_become_problems_with_paths() {
        let bin = "simd_count \u{0}\u{1}\u{2}";
        let dir = tree(&[
            (&format!("{T}/generation_id"), "1\n"),
            (
                &format!("{T}/nodes/0/properties"),
                "simd_count 0\ncpu_cores_count 8\n",
            ),
            (
                &format!("{T}/nodes/1/properties"),
                "simd_count 12\nlocation_id zz\nsimd_per",
            ),
            (&format!("{T}/nodes/2/properties"), ""),
            (&format!("{T}/nodes/3/properties"), bin),
            (&format!("{T}/nodes/1/gpu_id"), "banana\n"),
            (
                &format!("{T}/nodes/1/mem_banks/0/properties"),
                "heap_type 1\nsize_in_bytes 99\n",
            ),
            (
                &format!("{T}/nodes/1/mem_banks/x/properties"),
                "heap_type 1\n",
            ),
        ]);
        let (topo, problems) = full(&dir);
        assert_eq!(topo.generation_id, Some(1));
        assert_eq!(topo.nodes.len(), 4);
        let n1 = &topo.nodes[1];
        assert_eq!(n1.kind(), NodeKind::Gpu);
        assert_eq!(n1.props().location_id, None);
        assert_eq!(n1.gpu_id, None);
        assert_eq!(n1.mem_banks[0].size_in_bytes, Some(99));
        assert_eq!(topo.nodes[2].kind(), NodeKind::Unknown);
        assert_eq!(topo.nodes[3].properties, None);
        let has = |path: &str, needle: &str| {
            problems
                .iter()
                .any(|p| p.path.ends_with(path) && p.message.to_string().contains(needle))
        };
        assert!(has("nodes/1/properties", "`location_id`"), "{problems:#?}");
        assert!(has("nodes/1/properties", "`simd_per` has no value"));
        assert!(has("nodes/2/properties", "empty file"));
        assert!(has("nodes/3/properties", "binary content"));
        assert!(has("nodes/1/gpu_id", "not a 32-bit"));
        assert!(has("nodes/1/mem_banks/x", "not an index directory"));
    }
}
