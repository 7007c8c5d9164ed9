//! The topology picture of `report --format html`: one static SVG with absolute coordinates
//! (no transforms, no script), laid out deterministically.
//!
//! - CPU nodes (sockets) are boxes in a row at the top.
//! - Each physical GPU is a group (`<g class="gpu" data-gpu="i">`) holding one box per KFD node
//!   (`<rect class="partition" data-node="n">`), and a dashed slot per partition its siblings
//!   of the same device have and it lacks.
//! - GPUs of one XGMI hive sit on a ring inside the hive's rectangle
//!   (`<g class="hive" data-hive="0x…">`); hives (and then the GPUs outside any hive) are
//!   regions placed left to right, wrapping into rows, so no two regions overlap. A ring keeps
//!   every chord of a fully connected hive visible: no edge runs through a third GPU's centre.
//! - Edges join physical GPUs, one per linked pair (`<line class="link xgmi|pcie|host"
//!   data-a="i" data-b="j">`, the best link of any of their partitions), and each GPU to the
//!   CPU nodes its partitions link to directly (`<line class="link cpu" data-gpu="i"
//!   data-cpu="n">`) — never partition to partition, which for 8 GPUs in CPX mode would be
//!   thousands of lines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write};

use rocm_probe::facts::agent::{DeviceType, Inventory, PhysicalGpu};
use rocm_probe::facts::topo::TopoMatrix;
use rocm_probe::finding::Status;
use rocm_probe::msg;

use super::{Esc, node_list, status_id};

pub(super) use rocm_probe::facts::topo::{GpuPair as Pair, PairKind};

/// The links the picture and the GPU cards show.
#[derive(Debug, Clone, Default)]
pub(super) struct Links {
    /// Linked pairs of physical GPUs, ordered by `(a, b)`.
    pub pairs: Vec<Pair>,
    /// GPU index → the CPU nodes its nodes link to directly.
    pub cpus: BTreeMap<usize, BTreeSet<u32>>,
}

impl Links {
    /// The library's grouping of the node-to-node matrix by physical GPU.
    pub(super) fn from_matrix(m: &TopoMatrix, inv: &Inventory) -> Self {
        Self {
            pairs: rocm_probe::facts::topo::gpu_pairs(m, inv),
            cpus: rocm_probe::facts::topo::gpu_cpus(m, inv),
        }
    }

    /// The peers of GPU `g` by kind, best first.
    pub(super) fn peers(&self, g: usize) -> Vec<(PairKind, Vec<usize>)> {
        let mut by: BTreeMap<PairKind, Vec<usize>> = BTreeMap::new();
        for p in &self.pairs {
            if p.a == g {
                by.entry(p.kind).or_default().push(p.b);
            } else if p.b == g {
                by.entry(p.kind).or_default().push(p.a);
            }
        }
        by.into_iter().rev().collect()
    }
}

const MARGIN: i32 = 20;
/// Between two GPU boxes: room for the edge between them to show.
const GPU_GAP: i32 = 60;
const REGION_PAD: i32 = 20;
const REGION_TITLE: i32 = 22;
const REGION_GAP: i32 = 44;
/// Regions wrap into a new row past this width.
const MAX_ROW: i32 = 1240;
const CPU_W: i32 = 200;
const CPU_H: i32 = 54;
const CPU_GAP: i32 = 40;
const CPU_TO_GPUS: i32 = 70;
const HEADER: i32 = 40;
const PAD: i32 = 8;
const PART_W: i32 = 40;
const PART_H: i32 = 22;
const PART_GAP: i32 = 4;
const SINGLE_W: i32 = 156;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
}

impl Rect {
    fn cx(&self) -> i32 {
        self.x + self.w / 2
    }
    fn cy(&self) -> i32 {
        self.y + self.h / 2
    }
}

/// The columns of the partition grid for `slots` boxes.
fn columns(slots: usize) -> i32 {
    i32::try_from(slots.clamp(1, 4)).unwrap_or(4)
}

/// A GPU box's size when it holds `slots` partition boxes.
fn gpu_size(slots: usize) -> (i32, i32) {
    if slots <= 1 {
        return (SINGLE_W, HEADER + PART_H + PAD);
    }
    let cols = columns(slots);
    let rows = i32::try_from(slots.div_ceil(4)).unwrap_or(i32::MAX / 64);
    (
        (cols * PART_W + (cols - 1) * PART_GAP + 2 * PAD).max(SINGLE_W),
        HEADER + rows * PART_H + (rows - 1) * PART_GAP + PAD,
    )
}

/// Top-left corners of `n` boxes of `w`×`h` on a ring (one box: alone; two: side by side),
/// starting at the upper left and going clockwise, shifted so the smallest coordinates are 0;
/// and the size of their bounding box.
fn ring(n: usize, w: i32, h: i32) -> (Vec<(i32, i32)>, i32, i32) {
    match n {
        0 => return (Vec::new(), 0, 0),
        1 => return (vec![(0, 0)], w, h),
        2 => return (vec![(0, 0), (w + 2 * GPU_GAP, 0)], 2 * w + 2 * GPU_GAP, h),
        _ => {}
    }
    let count = n as f64;
    let aspect = (f64::from(w) / f64::from(h)).clamp(1.0, 1.6);
    let mut ry = f64::from(h) / 2.0;
    let points = loop {
        let rx = ry * aspect;
        let points: Vec<(i32, i32)> = (0..n)
            .map(|k| {
                let angle = std::f64::consts::PI * (1.0 + 1.0 / count + 2.0 * k as f64 / count);
                (
                    (rx * angle.cos()).round() as i32,
                    (ry * angle.sin()).round() as i32,
                )
            })
            .collect();
        let clear = points.iter().enumerate().all(|(i, a)| {
            points[i + 1..]
                .iter()
                .all(|b| (a.0 - b.0).abs() >= w + GPU_GAP || (a.1 - b.1).abs() >= h + GPU_GAP)
        });
        if clear {
            break points;
        }
        ry += 4.0;
    };
    let min_x = points.iter().map(|p| p.0).min().unwrap_or(0);
    let min_y = points.iter().map(|p| p.1).min().unwrap_or(0);
    let max_x = points.iter().map(|p| p.0).max().unwrap_or(0);
    let max_y = points.iter().map(|p| p.1).max().unwrap_or(0);
    (
        points
            .into_iter()
            .map(|(x, y)| (x - min_x, y - min_y))
            .collect(),
        max_x - min_x + w,
        max_y - min_y + h,
    )
}

/// A hive, or the GPUs outside any hive.
#[derive(Debug)]
struct Region {
    hive: Option<u64>,
    gpus: Vec<usize>,
    /// Box corners relative to the content's corner.
    boxes: Vec<(i32, i32)>,
    /// Outer size with padding and title.
    w: i32,
    h: i32,
    /// Where the region's outer corner lands.
    at: (i32, i32),
}

impl Region {
    fn top(&self) -> i32 {
        REGION_PAD + if self.hive.is_some() { REGION_TITLE } else { 0 }
    }
}

/// A CPU node's box.
#[derive(Debug)]
struct Cpu {
    node: u32,
    model: Option<String>,
    cores: Option<u32>,
    rect: Rect,
}

/// What the picture needs beyond the inventory and the links: each GPU's status (by index).
pub(super) fn svg(
    inv: &Inventory,
    links: &Links,
    status: &BTreeMap<usize, Status>,
    s: &mut String,
) -> fmt::Result {
    // Every partition slot a GPU should have (the Graphviz picture draws the same ones).
    let slots = rocm_probe::facts::topo::partition_slots(inv);
    let slots_of = |g: &PhysicalGpu| slots.get(g.index).copied().unwrap_or(g.nodes.len());
    let max_slots = inv.gpus.iter().map(slots_of).max().unwrap_or(1);
    let (gw, gh) = gpu_size(max_slots);

    // Regions: each hive, then the GPUs in none.
    let mut regions: Vec<Region> = Vec::new();
    let mut placed: BTreeSet<usize> = BTreeSet::new();
    let mut groups: Vec<(Option<u64>, Vec<usize>)> = Vec::new();
    for h in &inv.hives {
        let members: Vec<usize> = h
            .gpus
            .iter()
            .copied()
            .filter(|i| *i < inv.gpus.len() && placed.insert(*i))
            .collect();
        if !members.is_empty() {
            groups.push((Some(h.hive_id), members));
        }
    }
    let rest: Vec<usize> = (0..inv.gpus.len())
        .filter(|i| !placed.contains(i))
        .collect();
    if !rest.is_empty() {
        groups.push((None, rest));
    }
    for (hive, gpus) in groups {
        let (boxes, w, h) = ring(gpus.len(), gw, gh);
        let title = if hive.is_some() { REGION_TITLE } else { 0 };
        regions.push(Region {
            hive,
            gpus,
            boxes,
            w: w + 2 * REGION_PAD,
            h: h + 2 * REGION_PAD + title,
            at: (0, 0),
        });
    }

    // Rows of regions.
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut width = 0;
    for (i, r) in regions.iter().enumerate() {
        match rows.last_mut() {
            Some(row) if width + REGION_GAP + r.w <= MAX_ROW => {
                row.push(i);
                width += REGION_GAP + r.w;
            }
            _ => {
                rows.push(vec![i]);
                width = r.w;
            }
        }
    }
    let row_widths: Vec<i32> = rows
        .iter()
        .map(|row| {
            row.iter().map(|i| regions[*i].w).sum::<i32>()
                + REGION_GAP * (i32::try_from(row.len()).unwrap_or(1) - 1)
        })
        .collect();
    let content_w = row_widths.iter().copied().max().unwrap_or(0);

    let mut cpus: Vec<Cpu> = inv
        .agents
        .iter()
        .filter(|a| a.device_type == DeviceType::Cpu)
        .map(|a| Cpu {
            node: a.node,
            model: a.name.clone(),
            cores: a.compute_units,
            rect: Rect {
                x: 0,
                y: MARGIN,
                w: CPU_W,
                h: CPU_H,
            },
        })
        .collect();
    let cpu_count = i32::try_from(cpus.len()).unwrap_or(1);
    let cpu_w = if cpus.is_empty() {
        0
    } else {
        cpu_count * CPU_W + (cpu_count - 1) * CPU_GAP
    };
    let total_w = content_w.max(cpu_w) + 2 * MARGIN;
    for (k, c) in cpus.iter_mut().enumerate() {
        let k = i32::try_from(k).unwrap_or(0);
        c.rect.x = (total_w - cpu_w) / 2 + k * (CPU_W + CPU_GAP);
    }
    let mut y = if cpus.is_empty() {
        MARGIN
    } else {
        MARGIN + CPU_H + CPU_TO_GPUS
    };
    for (row, row_w) in rows.iter().zip(&row_widths) {
        let mut x = (total_w - row_w) / 2;
        let height = row.iter().map(|i| regions[*i].h).max().unwrap_or(0);
        for i in row {
            let r = &mut regions[*i];
            // Regions of a row are centred on its middle line.
            r.at = (x, y + (height - r.h) / 2);
            x += r.w + REGION_GAP;
        }
        y += height + REGION_GAP;
    }
    let total_h = y - REGION_GAP + MARGIN;

    // Absolute GPU boxes.
    let mut boxes: BTreeMap<usize, Rect> = BTreeMap::new();
    for r in &regions {
        for (g, (bx, by)) in r.gpus.iter().zip(&r.boxes) {
            boxes.insert(
                *g,
                Rect {
                    x: r.at.0 + REGION_PAD + bx,
                    y: r.at.1 + r.top() + by,
                    w: gw,
                    h: gh,
                },
            );
        }
    }

    writeln!(
        s,
        r#"<svg class="topology" role="img" aria-labelledby="topology-title" viewBox="0 0 {total_w} {total_h}" width="{total_w}" height="{total_h}">"#
    )?;
    writeln!(
        s,
        r#"<title id="topology-title">{}</title>"#,
        Esc(&msg!(
            "html.svg-title",
            gpus = inv.gpus.len(),
            hives = inv.hives.len(),
            cpus = cpus.len()
        ))
    )?;
    // Hives behind everything.
    for r in &regions {
        let Some(hive) = r.hive else { continue };
        writeln!(
            s,
            r#"<g class="hive" data-hive="{hive:#x}"><rect x="{}" y="{}" width="{}" height="{}" rx="12"/><text x="{}" y="{}">{}</text></g>"#,
            r.at.0,
            r.at.1,
            r.w,
            r.h,
            r.at.0 + 12,
            r.at.1 + 20,
            Esc(&msg!(
                "html.svg-hive",
                hive = format!("{hive:#x}"),
                count = r.gpus.len()
            ))
        )?;
    }
    // Edges under the boxes: CPU links, then host and PCIe, XGMI on top.
    writeln!(s, r#"<g class="links">"#)?;
    for (g, nodes) in &links.cpus {
        let Some(b) = boxes.get(g) else { continue };
        for n in nodes {
            let Some(c) = cpus.iter().find(|c| c.node == *n) else {
                continue;
            };
            writeln!(
                s,
                r#"<line class="link cpu" data-gpu="{g}" data-cpu="{n}" x1="{}" y1="{}" x2="{}" y2="{}"><title>{}</title></line>"#,
                c.rect.cx(),
                c.rect.y + c.rect.h,
                b.cx(),
                b.cy(),
                Esc(&msg!("html.svg-cpu-link", gpu = g, node = n))
            )?;
        }
    }
    let mut ordered: Vec<&Pair> = links.pairs.iter().collect();
    ordered.sort_by_key(|p| (p.kind, p.a, p.b));
    for p in ordered {
        let (Some(a), Some(b)) = (boxes.get(&p.a), boxes.get(&p.b)) else {
            continue;
        };
        writeln!(
            s,
            r#"<line class="link {}" data-a="{}" data-b="{}" x1="{}" y1="{}" x2="{}" y2="{}"><title>{}</title></line>"#,
            p.kind.id(),
            p.a,
            p.b,
            a.cx(),
            a.cy(),
            b.cx(),
            b.cy(),
            Esc(&msg!(
                "html.svg-pair",
                a = p.a,
                b = p.b,
                kind = kind_words(p.kind),
                pairs = p.node_pairs
            ))
        )?;
    }
    writeln!(s, "</g>")?;
    for c in &cpus {
        let r = c.rect;
        let model = c
            .model
            .clone()
            .unwrap_or_else(|| msg!("html.svg-cpu-model-unknown"));
        let sub = match (c.cores, &c.model) {
            (Some(n), Some(m)) => msg!(
                "html.svg-cpu-cores-model",
                cores = n,
                model = shorten(m, 20)
            ),
            (Some(n), None) => msg!("html.svg-cpu-cores", cores = n),
            (None, Some(m)) => shorten(m, 28),
            (None, None) => String::new(),
        };
        writeln!(
            s,
            r#"<g class="cpu" data-node="{}"><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" rx="6"/><text class="name" x="{}" y="{}">{}</text><text class="sub" x="{}" y="{}">{}</text></g>"#,
            c.node,
            Esc(&msg!("html.svg-cpu-title", node = c.node, model)),
            r.x,
            r.y,
            r.w,
            r.h,
            r.x + 10,
            r.y + 21,
            Esc(&msg!("html.svg-cpu-name", node = c.node)),
            r.x + 10,
            r.y + 40,
            Esc(&sub),
        )?;
    }
    for g in &inv.gpus {
        let Some(b) = boxes.get(&g.index) else {
            continue;
        };
        gpu(s, inv, g, *b, slots_of(g), status)?;
    }
    writeln!(s, "</svg>")
}

/// How a pair of GPUs is linked, in words (the edge's tooltip).
fn kind_words(kind: PairKind) -> String {
    match kind {
        PairKind::Host => msg!("html.kind-host"),
        PairKind::Pcie => msg!("html.kind-pcie"),
        PairKind::Xgmi => "XGMI".to_owned(),
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// One physical GPU with its partitions.
fn gpu(
    s: &mut String,
    inv: &Inventory,
    g: &PhysicalGpu,
    b: Rect,
    slots: usize,
    status: &BTreeMap<usize, Status>,
) -> fmt::Result {
    let st = status.get(&g.index).copied().unwrap_or(Status::Pass);
    let name = g.marketing_name.as_deref().unwrap_or("GPU");
    let gfx = g.gfx.map(|x| x.name()).unwrap_or_else(|| "gfx?".to_owned());
    let integrated = inv
        .agents
        .iter()
        .any(|a| g.nodes.contains(&a.node) && a.integrated == Some(true));
    let title = match &g.pci_address {
        Some(address) => msg!(
            "html.svg-gpu-title-at",
            gpu = g.index,
            name,
            address,
            count = g.nodes.len(),
            nodes = node_list(&g.nodes)
        ),
        None => msg!(
            "html.svg-gpu-title",
            gpu = g.index,
            name,
            count = g.nodes.len(),
            nodes = node_list(&g.nodes)
        ),
    };
    writeln!(
        s,
        r#"<g class="gpu" data-gpu="{}" data-status="{}"><title>{}</title>"#,
        g.index,
        status_id(st),
        Esc(&title)
    )?;
    writeln!(
        s,
        r#"<rect class="gpubox" x="{}" y="{}" width="{}" height="{}" rx="8"/><text class="name" x="{}" y="{}">GPU {} · {}</text><text class="sub" x="{}" y="{}">{}</text>"#,
        b.x,
        b.y,
        b.w,
        b.h,
        b.x + PAD,
        b.y + 17,
        g.index,
        Esc(&gfx),
        b.x + PAD,
        b.y + 32,
        Esc(&match (&g.pci_address, integrated) {
            (Some(a), true) => msg!("html.svg-gpu-integrated-at", address = a),
            (Some(a), false) => a.clone(),
            (None, true) => msg!("html.svg-gpu-integrated"),
            (None, false) => shorten(name, 22),
        })
    )?;
    let cols = columns(slots);
    let pw = if slots <= 1 {
        b.w - 2 * PAD
    } else {
        (b.w - 2 * PAD - (cols - 1) * PART_GAP) / cols
    };
    let cell = |k: usize| {
        let k = i32::try_from(k).unwrap_or(0);
        (
            b.x + PAD + (k % cols) * (pw + PART_GAP),
            b.y + HEADER + (k / cols) * (PART_H + PART_GAP),
        )
    };
    for (k, n) in g.nodes.iter().enumerate() {
        let (x, y) = cell(k);
        let label = if slots <= 1 {
            msg!("html.svg-node", node = n)
        } else {
            n.to_string()
        };
        writeln!(
            s,
            r#"<rect class="partition" data-node="{n}" x="{x}" y="{y}" width="{pw}" height="{PART_H}" rx="3"/><text class="node" x="{}" y="{}">{label}</text>"#,
            x + pw / 2,
            y + 15
        )?;
    }
    for k in g.nodes.len()..slots {
        let (x, y) = cell(k);
        writeln!(
            s,
            r#"<rect class="slot-missing" x="{x}" y="{y}" width="{pw}" height="{PART_H}" rx="3"/>"#
        )?;
    }
    writeln!(s, "</g>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_boxes_never_overlap() {
        for slots in [1, 2, 4, 8] {
            let (w, h) = gpu_size(slots);
            for n in 1..=16 {
                let (points, bw, bh) = ring(n, w, h);
                assert_eq!(points.len(), n);
                for (i, a) in points.iter().enumerate() {
                    assert!(a.0 >= 0 && a.1 >= 0 && a.0 + w <= bw && a.1 + h <= bh);
                    for b in &points[i + 1..] {
                        assert!(
                            (a.0 - b.0).abs() >= w + GPU_GAP || (a.1 - b.1).abs() >= h + GPU_GAP,
                            "{n} boxes of {slots} slots: {a:?} and {b:?}"
                        );
                    }
                }
            }
        }
    }
}
