//! Layer 9 (workloads) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    WORKLOADS_RULES;
    COMPUTE = "workloads.compute", Workloads, Pass,
        "Single-GPU compute: ready, or what stands in the way",
        "The verdict for running GPU code on one GPU — a HIP program, a rocBLAS or MIOpen call, \
         a framework's kernels — derived from layers 1–5: pass when none of them has a warning \
         or failure, else the worst of them (fail: something there stops every GPU program or \
         every library call; warn: it runs with a caveat), naming each finding that decides it. \
         Information-only findings do not count. Layer 6 (compiling) is not needed to run \
         prebuilt code and does not count either.";
    MULTI_GPU = "workloads.multi-gpu", Workloads, Pass,
        "Multi-GPU collectives: how the GPUs reach each other, and RCCL",
        "For machines with two or more physical GPUs: how every pair of GPUs is connected, from \
         KFD's io_links and p2p_links (link type 11 XGMI direct; type 2 PCIe peer-to-peer \
         unless the link's flags carry 0x10, no P2P DMA; otherwise through host memory), \
         whether each XGMI hive (GPUs sharing a hive_id) has an XGMI link between every pair of \
         its members, and whether RCCL (librccl.so, the collectives library behind PyTorch's \
         nccl backend) is installed or bundled by a framework. Pass: every pair has XGMI or PCIe \
         P2P and RCCL is there. Partitions of one GPU (CPX/DPX/QPX) talk over the package's own \
         fabric and are not counted as pairs; an APU's integrated GPU beside discrete ones is \
         left out (it shares system memory with the CPU and takes no part in collectives).";
    HIVE_INCOMPLETE = "workloads.hive-incomplete", Workloads, Warn,
        "An XGMI hive is missing links between some of its GPUs",
        "GPUs that report the same hive_id were wired into one XGMI hive, but KFD lists no XGMI \
         io_link between some pairs of them: a bridge not seated, a link that failed training, \
         or a GPU that came up without XGMI. Collectives still run, over PCIe or host memory for \
         those pairs, at a fraction of the bandwidth (an MI210 XGMI bridge link carries up to \
         100 GB/s; a PCIe 4.0 x16 link 32 GB/s), and RCCL's ring and tree choices assume the \
         hive is whole. Check the bridges and the links' state (`rocm-smi --showtopo`, \
         `amd-smi topology`), then reboot.";
    NO_P2P = "workloads.no-p2p", Workloads, Warn,
        "Some GPU pairs have no peer-to-peer path",
        "For some pairs of GPUs KFD lists neither an XGMI link nor a PCIe peer-to-peer link (or \
         flags the link 0x10, no P2P DMA): copies and collectives between them are staged \
         through host memory, which is slow and, with an IOMMU in translated mode, can hang \
         RCCL (`NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to \
         system instablity or hang!`). Causes: GPUs behind different root complexes on a \
         platform that does not route P2P between them, ACS on a PCIe switch, or a BIOS with \
         P2P disabled. Set iommu=pt, check ACS and the BIOS, and see driver.iommu-not-passthrough.";
    NO_RCCL = "workloads.no-rccl", Workloads, Info,
        "No RCCL found for multi-GPU collectives",
        "Neither an install's library directory nor a framework's bundled libraries have \
         librccl.so, the ROCm collectives library (all-reduce, all-gather, …) that PyTorch's \
         distributed `nccl` backend, DeepSpeed and vLLM's tensor parallelism use on AMD GPUs. \
         Single-GPU work is unaffected. Install AMD's rccl package (or use a framework wheel \
         that bundles it, as PyTorch's ROCm wheels do).";
    LLM_FIT = "workloads.llm-fit", Workloads, Info,
        "Largest LLM whose fp16/bf16 weights fit in one GPU and in all of them",
        "The rule: a model of P parameters in fp16 or bf16 takes 2·P bytes of weights, and \
         inference needs room beyond the weights for the KV cache, activations and the \
         runtime's workspace; this probe reserves 20% of each GPU's memory for that, so P fits \
         when 2·P ≤ 0.8 × memory. One GPU is the largest single agent (a partition in \
         CPX/DPX/QPX mode is its own device with its share of the memory); all GPUs is their \
         sum, as with tensor parallelism across them. Memory is what KFD reports for each GPU \
         node's local memory banks (for an APU, the carve-out KFD reports; ROCm may also use \
         GTT beyond it). Long contexts and large batches need more than 20%; 8-bit and 4-bit \
         quantisation halve and quarter the weights.";
    FRAMEWORK_READY = "workloads.framework", Workloads, Pass,
        "A framework found: ready on this machine's GPUs, or why not",
        "One verdict per framework found in layer 7 (PyTorch, JAX, TensorFlow, vLLM, ONNX \
         Runtime): the worst of single-GPU compute (workloads.compute) and the layer-7 findings \
         about that framework (a CPU or CUDA build, no code object for the GPU's target, \
         bundled libraries without kernels for it), naming each finding that decides it.";
}
