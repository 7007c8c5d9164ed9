//! Finding ids of node conformance (`check --expect`), each in the layer its expectation is
//! about.

use crate::finding::declare_rules;

declare_rules! {
    EXPECT_RULES;
    EXPECT_GPUS = "hardware.expect-gpus", Hardware, Fail,
        "The GPUs do not meet the node's expectations (check --expect)",
        "The conformance file's [gpus] table says what a good node has: physical GPUs, agents \
         (partitions) per GPU, the distinct processors, minimum memory per GPU, compute and \
         memory partition modes, complete XGMI hives. Each unmet item is listed with what was \
         expected and what was found: a GPU missing from the bus or from KFD, a GPU that came up \
         in another partition mode (amdgpu's current_compute_partition / \
         current_memory_partition), a hive with a link down. Compare with a good node \
         (`rocm-probe diff`) and fix the node or the file.";
    EXPECT_PCIE = "hardware.expect-pcie", Hardware, Fail,
        "A GPU's PCIe link does not meet the node's expectations (check --expect)",
        "[pcie] min_gen is compared with each GPU's link capability (max_link_speed: 16 GT/s is \
         gen 4, 32 GT/s gen 5) and min_width with its current width (current_link_width, which \
         idle power saving does not lower). A narrower link means a GPU in the wrong slot, a \
         riser or retimer problem, or a link that trained down; a lower generation a slot or \
         BIOS setting.";
    EXPECT_AMDGPU = "driver.expect-amdgpu", Driver, Fail,
        "The amdgpu module's version is outside the expected range (check --expect)",
        "[versions] amdgpu is compared with /sys/module/amdgpu/version, which AMD's \
         amdgpu-dkms builds set (an in-tree amdgpu has none: then the expectation is unmet \
         with `found none`). Ranges are comparators joined by commas (`>=6.8, <6.9`); a bare \
         `6.8` means the 6.8 line.";
    EXPECT_KERNEL = "driver.expect-kernel", Driver, Fail,
        "The kernel's release is outside the expected range (check --expect)",
        "[versions] kernel is compared with the running kernel's release \
         (/proc/sys/kernel/osrelease as the module facts read it; `6.1.0-37-amd64` compares as \
         6.1.0).";
    EXPECT_ROCM = "runtime.expect-rocm", Runtime, Fail,
        "The ROCm release a process uses is outside the expected range (check --expect)",
        "[versions] rocm is compared with the release of the install a process would use (the \
         one ROCr is loaded from; its .info/version or the library names). A node where \
         /opt/rocm points at another release, or where LD_LIBRARY_PATH picks another install, \
         fails this.";
    EXPECT_LIBRARIES = "libraries.expect-libraries", Libraries, Fail,
        "A required library is missing or lacks kernels for a GPU (check --expect)",
        "[require] libraries lists library stems (rocblas, hipblaslt, MIOpen, rocfft, rccl, …) \
         that must be installed and have kernels for every GPU of the node: no layer-5 finding \
         that it lacks Tensile files, kernel databases or code objects for a GPU's target.";
    EXPECT_FRAMEWORKS = "frameworks.expect-frameworks", Frameworks, Fail,
        "A required framework is missing or not ready (check --expect)",
        "[require] frameworks lists frameworks (PyTorch, JAX, TensorFlow, vLLM, ONNX Runtime) \
         that must be found in a Python environment and be ready on every GPU (their \
         workloads.framework verdict not a failure).";
}
