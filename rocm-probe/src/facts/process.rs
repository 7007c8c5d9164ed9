//! KFD processes: `/sys/class/kfd/kfd/proc/<pid>` (one per process that opened `/dev/kfd`) with
//! per-GPU VRAM, SDMA activity, CU occupancy, eviction time and queues, joined with
//! `/proc/<pid>/comm`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::properties::parse_u64;
use crate::facts::topology::Topology;
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// Where KFD lists its processes.
pub const KFD_PROC: &str = "/sys/class/kfd/kfd/proc";

/// One process's use of one GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuUse {
    /// KFD `gpu_id` (see the topology's `nodes/N/gpu_id`).
    pub gpu_id: u32,
    /// The KFD node with that `gpu_id`, when known.
    pub node: Option<u32>,
    /// `vram_<gpu_id>`: bytes of VRAM the process holds.
    pub vram_bytes: Option<u64>,
    /// `sdma_<gpu_id>`: SDMA activity counter.
    pub sdma_activity: Option<u64>,
    /// `stats_<gpu_id>/cu_occupancy`: compute units in use.
    pub cu_occupancy: Option<u64>,
    /// `stats_<gpu_id>/evicted_ms`: total time its queues were evicted.
    pub evicted_ms: Option<u64>,
}

/// One user-mode queue. In JSON `queue_type` is the name ([`Queue::type_name`]) and
/// `queue_type_number` the kernel's number (schema version 2; version 1 had only the number, as
/// `queue_type`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Queue {
    /// Queue id (directory name).
    pub id: u32,
    /// The GPU it runs on.
    pub gpu_id: Option<u32>,
    /// Kernel queue type number (0 compute, 1 SDMA; higher numbers differ across kernels).
    pub queue_type: Option<u32>,
    /// Ring size, bytes.
    pub size: Option<u64>,
}

impl Queue {
    /// The queue type's name where it is the same on every kernel.
    pub fn type_name(&self) -> &'static str {
        match self.queue_type {
            Some(0) => "compute",
            Some(1) => "sdma",
            Some(_) => "other",
            None => "unknown",
        }
    }
}

impl Serialize for Queue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut q = s.serialize_struct("Queue", 5)?;
        q.serialize_field("id", &self.id)?;
        q.serialize_field("gpu_id", &self.gpu_id)?;
        q.serialize_field("queue_type", self.type_name())?;
        q.serialize_field("queue_type_number", &self.queue_type)?;
        q.serialize_field("size", &self.size)?;
        q.end()
    }
}

/// A process that has `/dev/kfd` open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KfdProcess {
    /// Process id.
    pub pid: u32,
    /// `/proc/<pid>/comm`.
    pub comm: Option<String>,
    /// Its address-space id.
    pub pasid: Option<u32>,
    /// Per GPU, in `gpu_id` order.
    pub gpus: Vec<GpuUse>,
    /// Queues, in id order.
    pub queues: Vec<Queue>,
}

/// The process view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Processes {
    /// Processes in pid order.
    pub processes: Vec<KfdProcess>,
    /// Unreadable or malformed files: the problems its collector recorded, kept here by the
    /// caller (`ps` shows them); empty straight out of [`Processes::collect`](Collect::collect).
    #[serde(serialize_with = "crate::source::problem::serialize_grouped")]
    pub problems: Vec<Problem>,
}

impl Collect for Processes {
    /// The topology, for the map from `gpu_id` to KFD node.
    type Needs<'a> = &'a Topology;
    /// `None` without KFD's process list.
    type Output = Option<Self>;

    /// Reads every KFD process, leaving out this process when the source is live (the probe's
    /// own entry when an active probe opened `/dev/kfd`).
    fn collect(source: &Source, topology: &Topology, problems: &mut Vec<Problem>) -> Option<Self> {
        let nodes = topology
            .nodes
            .iter()
            .filter_map(|n| n.gpu_id.filter(|g| *g != 0).map(|g| (g, n.id)))
            .collect();
        let own = (source.kind() == crate::source::SourceKind::Live).then(std::process::id);
        read(source.root(), &nodes, own, problems)
    }
}

/// Reads every KFD process. `nodes` maps `gpu_id` to KFD node; `own_pid` is left out.
fn read(
    root: &SysRoot,
    nodes: &BTreeMap<u32, u32>,
    own_pid: Option<u32>,
    problems: &mut Vec<Problem>,
) -> Option<Processes> {
    let names = optional(root.read_dir(KFD_PROC), problems)?;
    let mut pids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    pids.sort_unstable();
    let processes = pids
        .into_iter()
        .filter(|p| Some(*p) != own_pid)
        .map(|pid| read_process(root, pid, nodes, problems))
        .collect();
    Some(Processes {
        processes,
        problems: Vec::new(),
    })
}

fn number(root: &SysRoot, path: &str, problems: &mut Vec<Problem>) -> Option<u64> {
    let text = optional(root.read_value(path), problems)?;
    let v = parse_u64(&text);
    if v.is_none() {
        problems.push(Problem::new(
            path.to_owned(),
            crate::text!("facts.not-a-number", text = format!("{text:?}")),
        ));
    }
    v
}

fn read_process(
    root: &SysRoot,
    pid: u32,
    nodes: &BTreeMap<u32, u32>,
    problems: &mut Vec<Problem>,
) -> KfdProcess {
    let dir = format!("{KFD_PROC}/{pid}");
    let entries = optional(root.read_dir(&dir), problems).unwrap_or_default();
    let mut gpus: BTreeMap<u32, GpuUse> = BTreeMap::new();
    for e in &entries {
        let Some((kind, id)) = e.split_once('_') else {
            continue;
        };
        let Ok(gpu_id) = id.parse::<u32>() else {
            continue;
        };
        let use_ = gpus.entry(gpu_id).or_insert_with(|| GpuUse {
            gpu_id,
            node: nodes.get(&gpu_id).copied(),
            ..GpuUse::default()
        });
        let path = format!("{dir}/{e}");
        match kind {
            "vram" => use_.vram_bytes = number(root, &path, problems),
            "sdma" => use_.sdma_activity = number(root, &path, problems),
            "stats" => {
                use_.cu_occupancy = number(root, &format!("{path}/cu_occupancy"), problems);
                use_.evicted_ms = number(root, &format!("{path}/evicted_ms"), problems);
            }
            _ => {}
        }
    }
    let mut queues = Vec::new();
    if entries.iter().any(|e| e == "queues") {
        let qdir = format!("{dir}/queues");
        let mut ids: Vec<u32> = optional(root.read_dir(&qdir), problems)
            .unwrap_or_default()
            .iter()
            .filter_map(|q| q.parse().ok())
            .collect();
        ids.sort_unstable();
        for id in ids {
            let q = format!("{qdir}/{id}");
            let small = |name: &str, problems: &mut Vec<Problem>| {
                number(root, &format!("{q}/{name}"), problems).and_then(|v| u32::try_from(v).ok())
            };
            queues.push(Queue {
                id,
                gpu_id: small("gpuid", problems),
                queue_type: small("type", problems),
                size: number(root, &format!("{q}/size"), problems),
            });
        }
    }
    KfdProcess {
        pid,
        comm: optional(root.read_value(&format!("/proc/{pid}/comm")), problems),
        pasid: number(root, &format!("{dir}/pasid"), problems).and_then(|v| u32::try_from(v).ok()),
        gpus: gpus.into_values().collect(),
        queues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_processes_queues_and_skips_its_own_pid() {
        let dir = tempfile::tempdir().unwrap();
        let put = |p: &str, v: &str| {
            let path = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, v).unwrap();
        };
        put("/sys/class/kfd/kfd/proc/4242/pasid", "32770\n");
        put("/sys/class/kfd/kfd/proc/4242/vram_24248", "1073741824\n");
        put("/sys/class/kfd/kfd/proc/4242/sdma_24248", "0\n");
        put(
            "/sys/class/kfd/kfd/proc/4242/stats_24248/cu_occupancy",
            "38\n",
        );
        put("/sys/class/kfd/kfd/proc/4242/stats_24248/evicted_ms", "0\n");
        // Queue files are printed without a trailing newline.
        put("/sys/class/kfd/kfd/proc/4242/queues/10/gpuid", "24248");
        put("/sys/class/kfd/kfd/proc/4242/queues/10/type", "0");
        put("/sys/class/kfd/kfd/proc/4242/queues/10/size", "1048576");
        put("/sys/class/kfd/kfd/proc/4242/queues/2/type", "1");
        put("/proc/4242/comm", "python3\n");
        put("/sys/class/kfd/kfd/proc/77/pasid", "32771\n");
        let root = SysRoot::fixture(dir.path());
        let nodes = BTreeMap::from([(24248, 2)]);
        let mut problems = Vec::new();
        let ps = read(&root, &nodes, Some(77), &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(ps.processes.len(), 1);
        let p = &ps.processes[0];
        assert_eq!(
            (p.pid, p.comm.as_deref(), p.pasid),
            (4242, Some("python3"), Some(32770))
        );
        assert_eq!(p.gpus[0].node, Some(2));
        assert_eq!(p.gpus[0].vram_bytes, Some(1 << 30));
        assert_eq!(p.gpus[0].cu_occupancy, Some(38));
        let ids: Vec<u32> = p.queues.iter().map(|q| q.id).collect();
        assert_eq!(ids, [2, 10]);
        assert_eq!(p.queues[1].type_name(), "compute");
        assert_eq!(p.queues[1].size, Some(1 << 20));
    }
}
