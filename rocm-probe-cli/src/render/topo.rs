//! `topo` as text: the matrices `rocm-smi --showtopo` prints (weight, hops, link type,
//! bandwidth, NUMA node), between physical GPUs by default — a partitioned GPU is one row, its
//! partitions listed above the tables — or between every KFD GPU node with `--nodes`. A matrix
//! wider than the line is printed in blocks of columns that fit.

use std::io::{self, Write};

use rocm_probe::facts::topo::{Link, TopoMatrix};
use rocm_probe::{Inventory, msg};

/// What a matrix shows of a link.
type Cell = dyn Fn(&Link) -> String;

/// The rows and columns: a label and the KFD node whose links stand for it.
struct Axis {
    labels: Vec<String>,
    nodes: Vec<u32>,
}

/// Renders the matrices at `width` columns; `nodes`: one row per KFD GPU node.
pub fn text(
    m: &TopoMatrix,
    inv: &Inventory,
    nodes: bool,
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let gpus: Vec<_> = inv.gpus.iter().filter(|g| !g.nodes.is_empty()).collect();
    let axis = if nodes || gpus.is_empty() {
        // Each row is named as every report names the GPU (or partition) on that node; the
        // whole names and the KFD nodes come first.
        let mut labels = Vec::new();
        for &n in &m.gpus {
            match inv.agent_name(n) {
                Some(name) => {
                    let line = msg!("cli.topo-node-name", name = name.to_string(), node = n);
                    writeln!(out, "{}", super::hang(&line, width, "", "    "))?;
                    labels.push(format!("GPU {}", name.label()));
                }
                None => labels.push(msg!("facts.gpu-at-node", node = n)),
            }
        }
        writeln!(out)?;
        Axis {
            labels,
            nodes: m.gpus.clone(),
        }
    } else {
        for g in &gpus {
            let first = g.nodes.first().copied().unwrap_or(0);
            let last = g.nodes.last().copied().unwrap_or(0);
            let what = [g.gfx.map(|x| x.name()), g.marketing_name.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", ");
            let line = if g.nodes.len() > 1 {
                msg!(
                    "cli.topo-gpu-partitions",
                    gpu = inv.gpu_name(g).to_string(),
                    what,
                    n = g.nodes.len(),
                    first,
                    last
                )
            } else {
                msg!(
                    "cli.topo-gpu-node",
                    gpu = inv.gpu_name(g).to_string(),
                    what,
                    node = first
                )
            };
            writeln!(out, "{}", super::hang(&line, width, "", "    "))?;
        }
        if gpus.iter().any(|g| g.nodes.len() > 1) {
            writeln!(
                out,
                "{}",
                super::wrap(&msg!("cli.topo-partitions-note"), width)
            )?;
        }
        writeln!(out)?;
        Axis {
            labels: gpus.iter().map(|g| format!("GPU {}", g.index)).collect(),
            nodes: gpus
                .iter()
                .filter_map(|g| g.nodes.first().copied())
                .collect(),
        }
    };
    let link = |a: u32, b: u32| m.links.get(&(a, b));
    let tables: [(&str, &Cell); 4] = [
        ("Weight between two GPUs", &|l: &Link| {
            l.weight.map_or("N/A".to_owned(), |w| w.to_string())
        }),
        ("Hops between two GPUs", &|l: &Link| l.hops.to_string()),
        ("Link type between two GPUs", &|l: &Link| {
            if l.p2p {
                l.kind.word().to_owned()
            } else {
                format!("{} no-P2P", l.kind.word())
            }
        }),
        (
            "Bandwidth between two GPUs (min-max MB/s)",
            &|l: &Link| match (l.min_bandwidth, l.max_bandwidth) {
                (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
                _ => "N/A".to_owned(),
            },
        ),
    ];
    for (title, cell) in tables {
        let cells: Vec<Vec<String>> = axis
            .nodes
            .iter()
            .map(|&a| {
                axis.nodes
                    .iter()
                    .map(|&b| {
                        if a == b {
                            "0".to_owned()
                        } else {
                            link(a, b).map_or("N/A".to_owned(), cell)
                        }
                    })
                    .collect()
            })
            .collect();
        table(title, &axis, &cells, width, out)?;
    }
    writeln!(out, "NUMA node of each GPU")?;
    let label_width = axis.labels.iter().map(|l| l.len()).max().unwrap_or(0);
    for (label, node) in axis.labels.iter().zip(&axis.nodes) {
        let numa = m
            .numa
            .get(node)
            .map_or("unknown".to_owned(), |n| n.to_string());
        writeln!(out, "{label:<label_width$}  CPU node {numa}")?;
    }
    Ok(())
}

/// One matrix, in blocks of as many columns as fit in `width`.
fn table(
    title: &str,
    axis: &Axis,
    cells: &[Vec<String>],
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let label = axis.labels.iter().map(String::len).max().unwrap_or(0) + 2;
    let column = cells
        .iter()
        .flatten()
        .map(String::len)
        .chain(axis.labels.iter().map(String::len))
        .max()
        .unwrap_or(1)
        + 2;
    let per_block = (width.saturating_sub(label) / column).max(1);
    let n = axis.nodes.len();
    let mut start = 0;
    writeln!(out, "{title}")?;
    while start < n {
        let end = (start + per_block).min(n);
        write!(out, "{:label$}", "")?;
        for l in &axis.labels[start..end] {
            write!(out, "{l:>column$}")?;
        }
        writeln!(out)?;
        for (row, l) in cells.iter().zip(&axis.labels) {
            write!(out, "{l:<label$}")?;
            for c in &row[start..end] {
                write!(out, "{c:>column$}")?;
            }
            writeln!(out)?;
        }
        start = end;
        if start < n {
            writeln!(out)?;
        }
    }
    writeln!(out)
}
