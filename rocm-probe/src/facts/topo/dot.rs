//! `rocm-probe topo --format dot`: the HTML report's topology picture for Graphviz, drawn from
//! the same model (`report --format html`, rocm-probe-cli/src/render/html/topology.rs).
//!
//! - Each physical GPU is one node whose table holds a cell per KFD node (partition), and a
//!   dashed cell in the warning colour for each partition its siblings of the same device have
//!   and it lacks (a missing MI300X partition).
//! - An XGMI hive is a cluster around its GPUs, laid out two GPUs per rank so that the hive's
//!   own links run inside its box; CPU nodes sit in the top rank, above the GPUs they serve.
//! - Edges join physical GPUs, one per linked pair (the best link of any of their partitions),
//!   and each GPU to the CPU nodes its partitions link to directly. Like the HTML lines they carry
//!   no label: the kind is the style (XGMI solid orange, PCIe dashed blue, through host memory
//!   dotted grey) and the words are the tooltip. Only invisible edges place the nodes; the links
//!   themselves do not pull ranks (`constraint=false`), so a hive keeps its shape.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{PairKind, TopoMatrix, gpu_cpus, gpu_pairs};
use crate::facts::agent::{DeviceType, Inventory, PhysicalGpu};
use crate::msg;
use crate::source::escape;

/// The HTML picture's colours (its stylesheet's `.link.*` and `--warn`).
const XGMI: &str = "color=\"#e8590c\", penwidth=2.5";
const PCIE: &str = "color=\"#1c7ed6\", style=dashed, penwidth=1.5";
const HOST: &str = "color=\"#adb5bd\", style=dotted, penwidth=1.5";
const CPU: &str = "color=\"#495057\", style=dotted, penwidth=1.2";
const MISSING: &str = "#b35c00";

/// GPUs of a hive per rank: two keep every chord of a fully connected hive of four or eight
/// inside its box, between neighbouring ranks or along a column.
const PER_RANK: usize = 2;

/// Every partition slot each physical GPU should have, by index: the most KFD nodes any GPU of
/// the same device (PCI device id and gfx) has. A GPU with fewer lacks partitions — one MI300X
/// of eight in CPX mode showing seven nodes. The HTML picture draws the same slots.
pub fn partition_slots(inv: &Inventory) -> Vec<usize> {
    let key = |g: &PhysicalGpu| (g.device_id, g.gfx);
    let mut most: BTreeMap<_, usize> = BTreeMap::new();
    for g in &inv.gpus {
        let e = most.entry(key(g)).or_insert(0);
        *e = (*e).max(g.nodes.len());
    }
    inv.gpus
        .iter()
        .map(|g| most.get(&key(g)).copied().unwrap_or(0).max(g.nodes.len()))
        .collect()
}

/// The Graphviz picture.
pub fn dot(m: &TopoMatrix, inv: &Inventory) -> String {
    let slots = partition_slots(inv);
    let pairs = gpu_pairs(m, inv);
    let gpu_cpus = gpu_cpus(m, inv);
    let cpu_agents: BTreeMap<u32, Option<&str>> = inv
        .agents
        .iter()
        .filter(|a| a.device_type == DeviceType::Cpu)
        .map(|a| (a.node, a.name.as_deref()))
        .collect();
    // CPU nodes the links name are drawn even when the topology gave no agent for them.
    let cpus: BTreeSet<u32> = cpu_agents
        .keys()
        .copied()
        .chain(gpu_cpus.values().flatten().copied())
        .collect();

    let mut out = String::new();
    let _ = writeln!(out, "graph rocm_topology {{");
    let _ = writeln!(
        out,
        "  graph [rankdir=TB, newrank=true, nodesep=0.4, ranksep=0.6, fontname=\"sans-serif\", \
         fontsize=11, tooltip=\"{}\"];",
        escape::dot(&msg!(
            "html.svg-title",
            gpus = inv.gpus.len(),
            hives = inv.hives.len(),
            cpus = cpus.len()
        ))
    );
    let _ = writeln!(
        out,
        "  node [shape=plain, fontname=\"sans-serif\", fontsize=10];"
    );

    // Hives, each GPU in the first hive that lists it; then the GPUs in none.
    let mut placed: BTreeSet<usize> = BTreeSet::new();
    let mut layout: Vec<String> = Vec::new();
    for h in &inv.hives {
        let members: Vec<usize> = h
            .gpus
            .iter()
            .copied()
            .filter(|i| *i < inv.gpus.len() && placed.insert(*i))
            .collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  subgraph cluster_hive_{:x} {{", h.hive_id);
        let _ = writeln!(
            out,
            "    label=\"{}\"; style=\"dashed,rounded\";",
            escape::dot(&msg!(
                "html.svg-hive",
                hive = format!("{:#x}", h.hive_id),
                count = members.len()
            ))
        );
        for &i in &members {
            gpu_node(&mut out, inv, &inv.gpus[i], slots[i], "    ");
        }
        let ranks: Vec<&[usize]> = members.chunks(PER_RANK).collect();
        for rank in &ranks {
            let _ = writeln!(out, "    {{ rank=same; {} }}", ids(rank));
        }
        let _ = writeln!(out, "  }}");
        // Hive order left to right and top to bottom, as the HTML ring starts at the upper left.
        for rank in &ranks {
            for pair in rank.windows(2) {
                layout.push(format!("gpu{} -- gpu{}", pair[0], pair[1]));
            }
        }
        for pair in ranks.windows(2) {
            for (a, b) in pair[0].iter().zip(pair[1]) {
                layout.push(format!("gpu{a} -- gpu{b}"));
            }
        }
        // The hive's first rank under its CPU nodes.
        for g in ranks[0] {
            for c in gpu_cpus.get(g).into_iter().flatten() {
                layout.push(format!("cpu{c} -- gpu{g}"));
            }
        }
    }
    for g in inv.gpus.iter().filter(|g| !placed.contains(&g.index)) {
        gpu_node(&mut out, inv, g, slots[g.index], "  ");
        for c in gpu_cpus.get(&g.index).into_iter().flatten() {
            layout.push(format!("cpu{c} -- gpu{}", g.index));
        }
    }

    for c in &cpus {
        let model = cpu_agents
            .get(c)
            .copied()
            .flatten()
            .map_or_else(|| msg!("html.svg-cpu-model-unknown"), str::to_owned);
        let _ = writeln!(
            out,
            "  cpu{c} [shape=box, style=rounded, margin=\"0.2,0.1\", label=\"{}\", tooltip=\"{}\"];",
            escape::dot(&msg!("html.svg-cpu-name", node = c)),
            escape::dot(&msg!("html.svg-cpu-title", node = c, model))
        );
    }
    if !cpus.is_empty() {
        let names: Vec<String> = cpus.iter().map(|c| format!("cpu{c};")).collect();
        let _ = writeln!(out, "  {{ rank=min; {} }}", names.join(" "));
    }
    for edge in &layout {
        let _ = writeln!(out, "  {edge} [style=invis];");
    }

    // The links, drawn in the HTML's order: CPU links, then host and PCIe, XGMI on top.
    for (g, nodes) in &gpu_cpus {
        for c in nodes {
            let _ = writeln!(
                out,
                "  cpu{c} -- gpu{g} [{CPU}, constraint=false, tooltip=\"{}\"];",
                escape::dot(&msg!("html.svg-cpu-link", gpu = g, node = c))
            );
        }
    }
    let mut ordered: Vec<_> = pairs.iter().collect();
    ordered.sort_by_key(|p| (p.kind, p.a, p.b));
    for p in ordered {
        let (style, kind) = match p.kind {
            PairKind::Xgmi => (XGMI, "XGMI".to_owned()),
            PairKind::Pcie => (PCIE, msg!("html.kind-pcie")),
            PairKind::Host => (HOST, msg!("html.kind-host")),
        };
        let _ = writeln!(
            out,
            "  gpu{} -- gpu{} [{style}, constraint=false, tooltip=\"{}\"];",
            p.a,
            p.b,
            escape::dot(&msg!(
                "html.svg-pair",
                a = p.a,
                b = p.b,
                kind,
                pairs = p.node_pairs
            ))
        );
    }
    out.push_str("}\n");
    out
}

/// `gpu0; gpu1;`
fn ids(gpus: &[usize]) -> String {
    gpus.iter()
        .map(|g| format!("gpu{g};"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One physical GPU as a node: a Graphviz HTML-like table with its name, its PCI address and a
/// grid of its partitions (four per row, as in the HTML picture).
fn gpu_node(out: &mut String, inv: &Inventory, g: &PhysicalGpu, slots: usize, indent: &str) {
    let name = g.marketing_name.as_deref().unwrap_or("GPU");
    let gfx = g.gfx.map_or_else(|| "gfx?".to_owned(), |x| x.name());
    let integrated = inv
        .agents
        .iter()
        .any(|a| g.nodes.contains(&a.node) && a.integrated == Some(true));
    let sub = match (&g.pci_address, integrated) {
        (Some(a), true) => msg!("html.svg-gpu-integrated-at", address = a),
        (Some(a), false) => a.clone(),
        (None, true) => msg!("html.svg-gpu-integrated"),
        (None, false) => name.to_owned(),
    };
    let nodes = crate::i18n::list(&g.nodes);
    let title = match &g.pci_address {
        Some(address) => msg!(
            "html.svg-gpu-title-at",
            gpu = g.index,
            name,
            address,
            count = g.nodes.len(),
            nodes
        ),
        None => msg!(
            "html.svg-gpu-title",
            gpu = g.index,
            name,
            count = g.nodes.len(),
            nodes
        ),
    };
    let columns = slots.clamp(1, 4);
    let mut cells: Vec<String> = g
        .nodes
        .iter()
        .map(|n| {
            let text = if slots <= 1 {
                msg!("html.svg-node", node = n)
            } else {
                n.to_string()
            };
            format!("<TD>{}</TD>", escape::html(&text))
        })
        .collect();
    cells.extend(
        (g.nodes.len()..slots).map(|_| format!("<TD STYLE=\"dashed\" COLOR=\"{MISSING}\"> </TD>")),
    );
    let rows: String = cells
        .chunks(columns)
        .map(|row| format!("<TR>{}</TR>", row.concat()))
        .collect();
    let _ = writeln!(
        out,
        "{indent}gpu{} [label=<<TABLE BORDER=\"1\" CELLBORDER=\"1\" CELLSPACING=\"3\" \
         STYLE=\"rounded\"><TR><TD COLSPAN=\"{columns}\" BORDER=\"0\"><B>GPU {} · {}</B><BR/>{}\
         </TD></TR>{rows}</TABLE>>, tooltip=\"{}\"];",
        g.index,
        g.index,
        escape::html(&gfx),
        escape::html(&sub),
        escape::dot(&title)
    );
}
