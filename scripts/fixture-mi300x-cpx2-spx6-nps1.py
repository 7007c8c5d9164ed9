#!/usr/bin/env python3
"""Builds fixtures/mi300x-cpx2-spx6-nps1 from the real capture fixtures/mi300x-cpx-8gpu.

The capture is an 8x MI300X node in CPX mode (every XCD its own KFD node). This script models
ROCm/gpu-operator#382's partition profile cpx-2x-spx-6x-nps1 on it: the first two GPUs keep their
eight CPX partitions (their node files as captured), the other six become one SPX node each,
derived from that GPU's CPX partitions the way amdkfd reports an SPX MI300X. Every derived value
is computed in `spx_node` below and explained in the fixture's README.md.

    python3 scripts/fixture-mi300x-cpx2-spx6-nps1.py [--check]

Without arguments the fixture's machine tree and fixture.toml are (re)written; its README.md is
kept. With --check nothing is written: the script exits 1 if the committed files differ from
what it would write. Python 3 standard library only.
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
SOURCE = os.path.join(FIXTURES, "mi300x-cpx-8gpu")
TARGET = os.path.join(FIXTURES, "mi300x-cpx2-spx6-nps1")
TOPOLOGY = "sys/class/kfd/kfd/topology"

# PCI buses (location_id >> 8) of the GPUs that stay in CPX; the rest become SPX.
CPX_BUSES = (0x05, 0x27)
MEMORY_MODE = "NPS1"
# An MI300X has 8 XCDs (AMD's MI300X partitioning overview); in SPX one KFD node holds all of
# them. The capture's last GPU lost a partition (7 captured), so the count is not taken from it.
XCC_PER_GPU = 8
# SDMA engines of an MI300X: 2 per CPX partition in the capture, 8 x 2 in all.
SDMA_PER_XCC = 2
# KFD adds one L2 and one L3 cache entry per node (fill_in_l2_l3_pcache), and its L1 entries per
# XCC (kfd_fill_cache_non_crat_info loops over the node's XCCs).
CACHES_PER_NODE = 2
# Node properties that may differ between the partitions of one GPU.
PER_PARTITION = {"location_id", "drm_render_minor", "simd_id_base"}
# Files copied unchanged from the capture.
COPIED = [
    "etc/group",
    "sys/module/amdgpu/initstate",
    "sys/module/amdgpu/parameters/noretry",
    "usr/share/libdrm/amdgpu.ids",
    f"{TOPOLOGY}/generation_id",
    f"{TOPOLOGY}/system_properties",
]


def read(path):
    with open(path, encoding="ascii") as f:
        return f.read()


def parse(text):
    """A KFD properties file as an ordered list of [key, value] (values kept as text)."""
    return [line.split(" ", 1) for line in text.splitlines()]


def render(props):
    return "".join(f"{k} {v}\n" for k, v in props)


def get(props, key):
    return next(v for k, v in props if k == key)


def put(props, key, value):
    for p in props:
        if p[0] == key:
            p[1] = str(value)
            return
    raise KeyError(key)


def source_nodes():
    nodes_dir = os.path.join(SOURCE, TOPOLOGY, "nodes")
    nodes = {}
    for name in os.listdir(nodes_dir):
        n = int(name)
        links_dir = os.path.join(nodes_dir, name, "io_links")
        links = [
            parse(read(os.path.join(links_dir, str(i), "properties")))
            for i in range(len(os.listdir(links_dir)))
        ]
        nodes[n] = {
            "props": parse(read(os.path.join(nodes_dir, name, "properties"))),
            "links": links,
        }
    return nodes


def is_gpu(node):
    return get(node["props"], "simd_count") != "0"


def spx_node(partitions):
    """One SPX node from the CPX partitions of one GPU (see README.md, "Derived values")."""
    first = partitions[0]["props"]
    for p in partitions[1:]:
        for (k, v), (k2, v2) in zip(first, p["props"]):
            assert k == k2 and (v == v2 or k in PER_PARTITION), (k, v, v2)
    props = [list(kv) for kv in first]
    num = lambda key: int(get(first, key))  # noqa: E731
    put(props, "simd_count", XCC_PER_GPU * num("simd_count"))
    l1 = num("caches_count") - CACHES_PER_NODE
    put(props, "caches_count", XCC_PER_GPU * l1 + CACHES_PER_NODE)
    put(props, "array_count", XCC_PER_GPU * num("array_count"))
    total_sdma = XCC_PER_GPU * SDMA_PER_XCC
    assert num("num_sdma_engines") + num("num_sdma_xgmi_engines") == SDMA_PER_XCC
    put(props, "num_sdma_engines", min(total_sdma, 2))
    put(props, "num_sdma_xgmi_engines", total_sdma - min(total_sdma, 2))
    put(props, "num_xcc", XCC_PER_GPU * num("num_xcc"))
    # location_id: the PCI function's (partition bits only when a GPU has several nodes);
    # drm_render_minor: the PCI function's render node. Both are the first partition's.
    assert num("location_id") & 0x7 == 0
    return props


def build():
    """Every file of the fixture's machine tree and fixture.toml: path -> text."""
    src = source_nodes()
    cpus = sorted(n for n, node in src.items() if not is_gpu(node))
    gpus = {}  # bus -> source nodes of its partitions, in node order
    for n in sorted(src):
        if is_gpu(src[n]):
            bus = int(get(src[n]["props"], "location_id")) >> 8
            gpus.setdefault(bus, []).append(n)

    # The new nodes: (source node standing for it, properties), CPUs first as captured.
    new = [(n, [list(kv) for kv in src[n]["props"]]) for n in cpus]
    modes = {}  # first new node of each GPU -> compute mode
    for bus in sorted(gpus):
        parts = gpus[bus]
        modes[len(new)] = "CPX" if bus in CPX_BUSES else "SPX"
        if bus in CPX_BUSES:
            assert len(parts) == XCC_PER_GPU, (bus, len(parts))
            new += [(n, [list(kv) for kv in src[n]["props"]]) for n in parts]
        else:
            new.append((parts[0], spx_node([src[n] for n in parts])))
    number = {}  # source node -> new node
    for i, (s, _) in enumerate(new):
        number[s] = i
    gpu_nodes = [i for i, (s, _) in enumerate(new) if is_gpu(src[s])]

    # simd_id_base: KFD hands each GPU node the next block of processor ids, 40 (its CRAT
    # array_count 4 x cu_per_simd_array 10, per XCC in SPX too) wide; the capture's first GPU
    # node starts the count.
    base = int(get(src[gpus[min(gpus)][0]]["props"], "simd_id_base"))
    step = int(get(src[gpus[min(gpus)][1]]["props"], "simd_id_base")) - base
    for k, i in enumerate(gpu_nodes):
        put(new[i][1], "simd_id_base", base + k * step)

    def link(s_from, s_to, n_from, n_to):
        """The capture's link between the source nodes, renumbered."""
        props = next(
            [list(kv) for kv in l]
            for l in src[s_from]["links"]
            if int(get(l, "node_to")) == s_to
        )
        put(props, "node_from", n_from)
        put(props, "node_to", n_to)
        return props

    files = {}
    socket_of = {}  # new GPU node -> its CPU node
    links = {}
    for i, (s, props) in enumerate(new):
        if not is_gpu(src[s]):
            continue
        cpu = int(get(src[s]["links"][0], "node_to"))
        assert get(src[s]["links"][0], "type") == "2" and cpu in cpus
        socket_of[i] = number[cpu]
        links[i] = [link(s, cpu, i, number[cpu])] + [
            link(s, new[j][0], i, j) for j in gpu_nodes if j != i
        ]
    for c in cpus:
        i = number[c]
        others = [number[o] for o in cpus if o != c]
        links[i] = [link(c, new[o][0], i, o) for o in others] + [
            link(c, new[g][0], i, g) for g in gpu_nodes if socket_of[g] == i
        ]
        # p2p links of a CPU: the GPUs of the other socket, as in the capture.
        put(new[i][1], "p2p_links_count", sum(1 for g in gpu_nodes if socket_of[g] != i))
    for i, (_, props) in enumerate(new):
        put(props, "io_links_count", len(links[i]))
        files[f"{TOPOLOGY}/nodes/{i}/properties"] = render(props)
        for k, l in enumerate(links[i]):
            files[f"{TOPOLOGY}/nodes/{i}/io_links/{k}/properties"] = render(l)

    # The partition files: on the PCI function's drm device, i.e. the first partition's.
    for i, mode in modes.items():
        minor = get(new[i][1], "drm_render_minor")
        dev = f"sys/class/drm/renderD{minor}/device"
        files[f"{dev}/current_compute_partition"] = f"{mode}\n"
        files[f"{dev}/current_memory_partition"] = f"{MEMORY_MODE}\n"
    for path in COPIED:
        files[path] = read(os.path.join(SOURCE, path))

    cpx = sum(1 for m in modes.values() if m == "CPX")
    toml = [
        f'description = "8x MI300X (1002:74A1) in partition profile cpx-2x-spx-6x-nps1 '
        f"(ROCm/gpu-operator#382): {cpx} GPUs in CPX (8 KFD nodes each), {len(modes) - cpx} in "
        f"SPX (1 node each), all NPS1; KFD topology of {len(cpus)} CPU + {len(gpu_nodes)} GPU "
        f'nodes derived from the real capture mi300x-cpx-8gpu by scripts/fixture-mi300x-cpx2-spx6-nps1.py"',
        "",
        "[identity]",
        "uid = 1000",
        "groups = [1000, 44, 109]",
        "",
        "# /dev/kfd and one render node per GPU node (minor = its drm_render_minor)",
        "[[device]]",
        'path = "/dev/kfd"',
        'mode = "0660"',
        "uid = 0",
        "gid = 109",
    ]
    for i in gpu_nodes:
        toml += [
            "",
            f"[[device]]  # node {i}",
            f'path = "/dev/dri/renderD{get(new[i][1], "drm_render_minor")}"',
            'mode = "0660"',
            "uid = 0",
            "gid = 109",
        ]
    targets = ", ".join('"gfx942"' for _ in gpu_nodes)
    toml += [
        "",
        "[expect]",
        "exit = 0",
        "root_layer = 0",
        'root_status = "pass"',
        'findings = ["hardware.gpus-found", "hardware.partition-mode-mismatch"]',
        f"agents = {len(gpu_nodes)}",
        f"targets = [{targets}]",
        "",
    ]
    files["fixture.toml"] = "\n".join(toml)
    return files


def existing():
    out = {}
    for root, _, names in os.walk(TARGET):
        for name in names:
            path = os.path.relpath(os.path.join(root, name), TARGET)
            if path != "README.md":
                out[path] = read(os.path.join(root, name))
    return out


def main():
    files = build()
    if sys.argv[1:] == ["--check"]:
        if existing() != files:
            print(f"{TARGET} differs from what {sys.argv[0]} writes", file=sys.stderr)
            sys.exit(1)
        return
    for name in os.listdir(TARGET) if os.path.isdir(TARGET) else []:
        if name != "README.md":
            path = os.path.join(TARGET, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    for path, text in files.items():
        full = os.path.join(TARGET, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="ascii", newline="") as f:
            f.write(text)
        os.chmod(full, 0o644)


if __name__ == "__main__":
    main()
