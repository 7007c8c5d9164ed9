//! `rocm-probe topo`: the link matrix between GPU agents as KFD describes it (what
//! `rocm-smi --showtopo` prints: weight, hops, link type, bandwidth, NUMA node), and a Graphviz
//! picture of physical GPUs, partitions, hives and CPU sockets.
//!
//! Direct links are `nodes/N/io_links`; links through a CPU (or another device) are
//! `nodes/N/p2p_links`, counted as two hops. Link types are CRAT's (2 PCIe, 11 XGMI).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::facts::agent::Inventory;

mod dot;
use crate::facts::topology::{LINK_TYPE_PCIE, LINK_TYPE_XGMI, NodeKind, Topology};
pub use dot::{dot, partition_slots};

/// The kind of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// CRAT type 11.
    Xgmi,
    /// CRAT type 2.
    Pcie,
    /// Any other CRAT type.
    Other,
}

impl LinkKind {
    fn from_crat(t: Option<u32>) -> Self {
        match t {
            Some(LINK_TYPE_XGMI) => Self::Xgmi,
            Some(LINK_TYPE_PCIE) => Self::Pcie,
            _ => Self::Other,
        }
    }

    /// `XGMI`, `PCIE`, `OTHER` (rocm-smi's words).
    pub fn word(self) -> &'static str {
        match self {
            Self::Xgmi => "XGMI",
            Self::Pcie => "PCIE",
            Self::Other => "OTHER",
        }
    }
}

/// One link from one node to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// Type.
    pub kind: LinkKind,
    /// KFD weight (lower is closer).
    pub weight: Option<u32>,
    /// 1 for a direct link, 2 through another node.
    pub hops: u8,
    /// Minimum bandwidth, MB/s, as KFD reports it.
    pub min_bandwidth: Option<u32>,
    /// Maximum bandwidth, MB/s.
    pub max_bandwidth: Option<u32>,
    /// Whether peer-to-peer DMA works over it (the link's flags lack 0x10).
    pub p2p: bool,
}

/// The matrix of links between GPU agents, and each GPU agent's nearest CPU node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TopoMatrix {
    /// GPU agents' KFD nodes, in order.
    pub gpus: Vec<u32>,
    /// `(from, to)` → the link, for GPU pairs.
    #[serde(serialize_with = "pairs")]
    pub links: BTreeMap<(u32, u32), Link>,
    /// GPU node → the CPU node it links to directly (its NUMA node).
    pub numa: BTreeMap<u32, u32>,
}

fn pairs<S: serde::Serializer>(
    links: &BTreeMap<(u32, u32), Link>,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Pair<'a> {
        from: u32,
        to: u32,
        #[serde(flatten)]
        link: &'a Link,
    }
    s.collect_seq(links.iter().map(|((from, to), link)| Pair {
        from: *from,
        to: *to,
        link,
    }))
}

/// Builds the matrix from the topology. A direct link wins over an indirect one for the same
/// pair.
pub fn matrix(topology: &Topology) -> TopoMatrix {
    let gpus: Vec<u32> = topology.gpu_nodes().map(|n| n.id).collect();
    let cpus: Vec<u32> = topology
        .nodes
        .iter()
        .filter(|n| n.kind() == NodeKind::Cpu)
        .map(|n| n.id)
        .collect();
    let mut m = TopoMatrix {
        gpus: gpus.clone(),
        ..TopoMatrix::default()
    };
    for node in topology.gpu_nodes() {
        for (links, hops) in [(&node.io_links, 1u8), (&node.p2p_links, 2u8)] {
            for l in links {
                let Some(to) = l.node_to else { continue };
                if cpus.contains(&to) && hops == 1 {
                    m.numa.entry(node.id).or_insert(to);
                    continue;
                }
                if !gpus.contains(&to) || to == node.id {
                    continue;
                }
                let link = Link {
                    kind: LinkKind::from_crat(l.link_type),
                    weight: l.weight,
                    hops,
                    min_bandwidth: l.min_bandwidth,
                    max_bandwidth: l.max_bandwidth,
                    p2p: l.flags.unwrap_or(0) & 0x10 == 0,
                };
                m.links
                    .entry((node.id, to))
                    .and_modify(|old| {
                        if link.hops < old.hops {
                            *old = link.clone();
                        }
                    })
                    .or_insert(link);
            }
        }
    }
    m
}

/// How two physical GPUs reach each other, worst to best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    /// A link without peer-to-peer DMA (or of another type): copies go through host memory.
    Host,
    /// PCIe peer-to-peer.
    Pcie,
    /// XGMI.
    Xgmi,
}

impl PairKind {
    /// `host`, `pcie`, `xgmi`.
    pub fn id(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Pcie => "pcie",
            Self::Xgmi => "xgmi",
        }
    }

    /// For people.
    pub fn words(self) -> &'static str {
        match self {
            Self::Host => "through host memory (no peer-to-peer)",
            Self::Pcie => "PCIe peer-to-peer",
            Self::Xgmi => "XGMI",
        }
    }

    fn of(link: &Link) -> Self {
        match link.kind {
            LinkKind::Xgmi => Self::Xgmi,
            LinkKind::Pcie if link.p2p => Self::Pcie,
            _ => Self::Host,
        }
    }
}

/// One linked pair of physical GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuPair {
    /// The lower GPU index.
    pub a: usize,
    /// The higher GPU index.
    pub b: usize,
    /// The best link between any of their nodes: partitions of one GPU share its links.
    pub kind: PairKind,
    /// Node pairs (one node of each GPU) with a link.
    pub node_pairs: usize,
}

/// The node → physical GPU index map of an inventory.
fn owners(inv: &Inventory) -> BTreeMap<u32, usize> {
    inv.gpus
        .iter()
        .flat_map(|g| g.nodes.iter().map(move |n| (*n, g.index)))
        .collect()
}

/// The matrix grouped by physical GPU: one entry per pair of GPUs with any link between their
/// nodes, ordered by `(a, b)`. Pairs without an entry have no link at all.
pub fn gpu_pairs(m: &TopoMatrix, inv: &Inventory) -> Vec<GpuPair> {
    let owner = owners(inv);
    // (GPU a, GPU b) → the best kind, and the node pairs linked.
    type NodePairs = std::collections::BTreeSet<(u32, u32)>;
    let mut best: BTreeMap<(usize, usize), (PairKind, NodePairs)> = BTreeMap::new();
    for ((from, to), link) in &m.links {
        let (Some(&ga), Some(&gb)) = (owner.get(from), owner.get(to)) else {
            continue;
        };
        if ga == gb {
            continue;
        }
        let entry = best
            .entry((ga.min(gb), ga.max(gb)))
            .or_insert((PairKind::Host, Default::default()));
        entry.0 = entry.0.max(PairKind::of(link));
        entry.1.insert(((*from).min(*to), (*from).max(*to)));
    }
    best.into_iter()
        .map(|((a, b), (kind, nodes))| GpuPair {
            a,
            b,
            kind,
            node_pairs: nodes.len(),
        })
        .collect()
}

/// One XGMI hive as KFD links it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiveLinks {
    /// The hive id.
    pub hive_id: u64,
    /// Its GPUs (indices into [`Inventory::gpus`]) that `present` kept.
    pub members: Vec<usize>,
    /// Pairs of those members with no XGMI link between them, lower index first.
    pub missing: Vec<(usize, usize)>,
}

/// Each hive of `inv` with the pairs of its members (those `present` keeps) that the topology
/// does not link by XGMI. KFD links every pair of GPUs sharing a hive_id (`kfd_crat.c`) unless an
/// SR-IOV host disallows sharing between two virtual functions, so a gap is a topology to report
/// (and what `xgmi_hive_complete` conformance refuses), not a failure the kernel produces on bare
/// metal.
pub fn hive_links(
    m: &TopoMatrix,
    inv: &Inventory,
    present: impl Fn(usize) -> bool,
) -> Vec<HiveLinks> {
    let xgmi: std::collections::BTreeSet<(usize, usize)> = gpu_pairs(m, inv)
        .into_iter()
        .filter(|p| p.kind == PairKind::Xgmi)
        .map(|p| (p.a, p.b))
        .collect();
    inv.hives
        .iter()
        .map(|hive| {
            let members: Vec<usize> = hive.gpus.iter().copied().filter(|i| present(*i)).collect();
            let mut missing = Vec::new();
            for (k, a) in members.iter().enumerate() {
                for b in &members[k + 1..] {
                    let pair = ((*a).min(*b), (*a).max(*b));
                    if !xgmi.contains(&pair) {
                        missing.push(pair);
                    }
                }
            }
            HiveLinks {
                hive_id: hive.hive_id,
                members,
                missing,
            }
        })
        .collect()
}

/// Physical GPU index → the CPU nodes its nodes link to directly.
pub fn gpu_cpus(
    m: &TopoMatrix,
    inv: &Inventory,
) -> BTreeMap<usize, std::collections::BTreeSet<u32>> {
    let owner = owners(inv);
    let mut cpus: BTreeMap<usize, std::collections::BTreeSet<u32>> = BTreeMap::new();
    for (node, cpu) in &m.numa {
        if let Some(&g) = owner.get(node) {
            cpus.entry(g).or_default().insert(*cpu);
        }
    }
    cpus
}

/// The matrices as rocm-smi lays them out: weight, hops, link type, bandwidth, then NUMA nodes.
pub fn text(m: &TopoMatrix) -> String {
    let mut out = String::new();
    let head = |out: &mut String, title: &str| {
        let _ = writeln!(out, "{title}");
        let _ = write!(out, "{:<8}", "");
        for g in &m.gpus {
            let _ = write!(out, "{:>12}", format!("node {g}"));
        }
        out.push('\n');
    };
    let table = |out: &mut String, title: &str, cell: &dyn Fn(u32, u32) -> String| {
        head(out, title);
        for a in &m.gpus {
            let _ = write!(out, "{:<8}", format!("node {a}"));
            for b in &m.gpus {
                let v = if a == b { "0".to_owned() } else { cell(*a, *b) };
                let _ = write!(out, "{v:>12}");
            }
            out.push('\n');
        }
        out.push('\n');
    };
    let link = |a: u32, b: u32| m.links.get(&(a, b));
    table(&mut out, "Weight between two GPUs", &|a, b| {
        link(a, b)
            .and_then(|l| l.weight)
            .map_or("N/A".to_owned(), |w| w.to_string())
    });
    table(&mut out, "Hops between two GPUs", &|a, b| {
        link(a, b).map_or("N/A".to_owned(), |l| l.hops.to_string())
    });
    table(&mut out, "Link type between two GPUs", &|a, b| {
        link(a, b).map_or("N/A".to_owned(), |l| {
            if l.p2p {
                l.kind.word().to_owned()
            } else {
                format!("{} no-P2P", l.kind.word())
            }
        })
    });
    table(
        &mut out,
        "Bandwidth between two GPUs (min-max MB/s)",
        &|a, b| {
            link(a, b).map_or("N/A".to_owned(), |l| {
                match (l.min_bandwidth, l.max_bandwidth) {
                    (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
                    _ => "N/A".to_owned(),
                }
            })
        },
    );
    let _ = writeln!(out, "NUMA node of each GPU");
    for g in &m.gpus {
        let _ = writeln!(
            out,
            "node {g:<4} CPU node {}",
            m.numa
                .get(g)
                .map_or("unknown".to_owned(), |n| n.to_string())
        );
    }
    out
}
