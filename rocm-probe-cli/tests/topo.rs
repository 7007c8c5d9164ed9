//! `rocm-probe topo`: the link matrix from real topologies (the Graphviz picture: `topo_dot.rs`).

mod common;

use common::{fixture, probe, run};

fn topo(name: &str, format: &str) -> String {
    topo_with(name, &["--format", format])
}

fn topo_with(name: &str, args: &[&str]) -> String {
    let r = run(probe()
        .arg("--root")
        .arg(fixture(name))
        .arg("topo")
        .args(args));
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

/// The row of `label` (`node 2`, `GPU 0`) in the table titled `title`.
fn row(text: &str, title: &str, label: &str) -> Vec<String> {
    let table = text.split(title).nth(1).unwrap();
    table
        .lines()
        .find(|l| l.starts_with(&format!("{label} ")))
        .unwrap()
        .split_whitespace()
        .skip(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn mi210_matrix_shows_two_xgmi_hives_joined_over_pcie() {
    // Every KFD node (--nodes), and one row per physical GPU (the default): on mi210 each GPU
    // is one node, so the rows are the same, labelled by GPU (KFD order: GPU 0 is node 2) as
    // every report names it.
    let nodes = topo_with("mi210-xgmi-8gpu", &["--nodes"]);
    let gpus = topo("mi210-xgmi-8gpu", "text");
    for (t, label) in [
        (
            &nodes,
            (|n: u32| format!("GPU {}", n - 2)) as fn(u32) -> String,
        ),
        (&gpus, |n: u32| format!("GPU {}", n - 2)),
    ] {
        // KFD's own weights: 15 inside a hive (XGMI, one hop), 72 across (PCIe, through a CPU).
        assert_eq!(
            row(t, "Weight between two GPUs", &label(2)),
            ["0", "15", "15", "15", "72", "72", "72", "72"]
        );
        assert_eq!(
            row(t, "Hops between two GPUs", &label(6)),
            ["2", "2", "2", "2", "0", "1", "1", "1"]
        );
        assert_eq!(
            row(t, "Link type between two GPUs", &label(3)),
            ["XGMI", "0", "XGMI", "XGMI", "PCIE", "PCIE", "PCIE", "PCIE"]
        );
        assert!(t.contains(&format!("{}  CPU node 0", label(2))), "{t}");
        assert!(t.contains(&format!("{}  CPU node 1", label(6))), "{t}");
    }
    assert!(
        gpus.starts_with("GPU 0 (0000:63:00.0, ROCr 0): gfx90a"),
        "{gpus}"
    );
    // KFD order is not PCI order: GPU 2 is the lowest address.
    assert!(
        nodes.contains("GPU 2 (0000:03:00.0, ROCr 2): KFD node 4"),
        "{nodes}"
    );
}

#[test]
fn json_lists_every_pair() {
    let j: serde_json::Value = serde_json::from_str(&topo("mi210-xgmi-8gpu", "json")).unwrap();
    assert_eq!(j["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(j["links"].as_array().unwrap().len(), 56);
    assert_eq!(j["links"][0]["kind"], "xgmi");
}

#[test]
fn no_kfd_is_exit_1() {
    let r = run(probe().arg("--root").arg(fixture("no-amdgpu")).arg("topo"));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no KFD"), "{}", r.stderr);
}

/// The 64-node MI300X in CPX mode: eight GPUs of eight (one of seven) partitions, one row each,
/// within 80 columns; every node with --nodes, in blocks of columns that fit.
#[test]
fn mi300x_cpx_groups_partitions_under_their_gpu() {
    let t = topo("mi300x-cpx-8gpu", "text");
    assert!(t.contains("8 partitions, KFD nodes 2–9"), "{t}");
    assert!(t.contains("7 partitions, KFD nodes 58–64"), "{t}");
    assert_eq!(row(&t, "Hops between two GPUs", "GPU 7").len(), 8);
    let narrow = run(probe()
        .env("COLUMNS", "80")
        .arg("--root")
        .arg(fixture("mi300x-cpx-8gpu"))
        .arg("topo"));
    assert!(
        narrow.stdout.lines().all(|l| l.chars().count() <= 80),
        "{}",
        narrow.stdout
    );
    let all = run(probe()
        .env("COLUMNS", "80")
        .arg("--root")
        .arg(fixture("mi300x-cpx-8gpu"))
        .args(["topo", "--nodes"]));
    assert!(all.stdout.lines().all(|l| l.chars().count() <= 80));
    // KFD node 64 is the last partition of GPU 7, named so in the legend and the tables.
    assert!(
        all.stdout
            .contains("GPU 7.6 (0000:e5:00.0, ROCr 62): KFD node 64"),
        "{}",
        all.stdout
    );
    // 63 rows per block, blocks of columns: every node is a column once per table.
    let weights = all
        .stdout
        .split("Weight between")
        .nth(1)
        .unwrap()
        .split("Hops between")
        .next()
        .unwrap();
    assert_eq!(
        weights.matches("GPU 7.6").count(),
        1 + 63_usize.div_ceil(weights.lines().nth(1).unwrap().matches("GPU").count())
    );
}
