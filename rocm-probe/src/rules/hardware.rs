//! Layer 1 (hardware) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    HARDWARE_RULES;
    GPUS_FOUND = "hardware.gpus-found", Hardware, Pass,
        "AMD GPUs found",
        "The KFD topology lists GPU nodes; their gfx targets, compute units and memory are in the evidence. \
         Partitions of one physical GPU (MI300 CPX, …) are separate nodes grouped by PCI domain and bus.";
    NO_AMD_GPU = "hardware.no-amd-gpu", Hardware, Fail,
        "No AMD GPU on the PCI bus",
        "No PCI function with vendor id 0x1002 and a display (0x03xx) or processing-accelerator (0x12xx) \
         class exists, and the KFD topology has no GPU node. Nothing above the hardware can work: every \
         higher layer is a consequence. On a VM, the GPU must be passed through (VFIO); in a container, \
         the host must have the GPU. Detected from /sys/bus/pci/devices/*/{vendor,class} and \
         /sys/class/kfd/kfd/topology.";
    WSL_PARAVIRTUAL = "hardware.wsl-paravirtual", Hardware, Skip,
        "GPU paravirtualised by WSL: KFD-based checks do not apply",
        "Under WSL the GPU is reached through /dev/dxg (the Windows driver), not through amdgpu and KFD: \
         there is no /sys/class/kfd and no AMD PCI function inside the VM. ROCm on WSL uses librocdxg \
         (ROCm 6.1+ for supported Radeon GPUs). rocminfo reports `WSL environment detected.` and \
         HSA_STATUS_ERROR_OUT_OF_RESOURCES when that path is missing; rocm_agent_enumerator waits 60 s.";
    PCI_NOT_CAPTURED = "hardware.pci-not-captured", Hardware, Skip,
        "PCI bus not captured",
        "The fixture has no sys/bus/pci directory, so PCI-level checks (GPU present but not driven, link \
         speed, BAR size) cannot run. Live runs always read /sys/bus/pci.";
    SYSFS_MALFORMED = "hardware.sysfs-malformed", Hardware, Warn,
        "Malformed GPU sysfs files",
        "Some files of the KFD topology, the drm devices or the PCI bus could not be parsed (truncated, \
         non-numeric, binary, empty, or misnamed entries), or contradict each other (two nodes at one \
         PCI location). The values in them are treated as unknown. On a live machine this points at a \
         kernel bug or a broken container bind mount; in a fixture, at a damaged capture.";
    SYSFS_UNREADABLE = "hardware.sysfs-unreadable", Hardware, Skip,
        "Unreadable GPU sysfs files",
        "Some files of the KFD topology, the drm devices or the PCI bus could not be read (permission \
         denied, not a regular file, too large, a symlink out of the fixture). A device cgroup that \
         hides a GPU makes its files fail with EPERM; libhsakmt then skips that node too. The affected \
         checks are skipped and the values unknown.";
    PARTITION_MISSING = "hardware.partition-missing", Hardware, Warn,
        "A partitioned GPU has fewer partitions than its siblings",
        "Physical GPUs of the same model in the same partition mode expose the same number of KFD nodes. \
         One with fewer nodes lost a partition: a partition without a render node is not added to the \
         topology, or the capture was truncated.";
}

declare_rules! {
    HARDWARE_DEVICE_RULES;
    PCIE_LINK_DEGRADED = "hardware.pcie-link-degraded", Hardware, Warn,
        "PCIe link narrower or slower than the GPU supports",
        "The GPU's PCIe link trained below its capability: fewer lanes (current_link_width < \
         max_link_width: a x16 card in an x8 or x4 slot, a riser, a dirty contact) or a lower \
         generation. Host-device copies and peer transfers slow down accordingly. Link speed alone \
         can drop at idle on Radeon cards (power saving), so a lower speed with full width is reported \
         as information; a narrower link is a warning. Read from the device's \
         {current,max}_link_{speed,width}; on GPUs behind an internal PCIe switch these describe the \
         switch's link.";
    LARGE_BAR_OFF = "hardware.large-bar-off", Hardware, Warn,
        "Large BAR is off: the CPU sees only part of VRAM",
        "mem_info_vis_vram_total is smaller than mem_info_vram_total: the firmware did not map all VRAM \
         into the PCI BAR (Above 4G decoding / Resizable BAR disabled, or no address space left — \
         dmesg: `BAR 0: no space for …`). ROCm then stages host access through a 256 MiB window; some \
         features (IPC, peer access) need Large BAR. AMD's own health check (RDHC) flags the same.";
    APU_SMALL_MEMORY = "hardware.apu-small-memory", Hardware, Warn,
        "APU: ROCm sees only the small VRAM carve-out",
        "On an APU the GPU's memory is system memory. Kernels before ~6.10 give KFD only the BIOS \
         carve-out (UMA frame buffer, often 512 MiB–4 GiB), so PyTorch reports e.g. `HIP out of memory \
         … 512.00 MiB total capacity` while mem_info_gtt_total shows tens of GiB. Raise the UMA frame \
         buffer size in the firmware, or use a kernel where KFD allocates APU memory from GTT.";
    RAS_UNCORRECTABLE = "hardware.ras-uncorrectable", Hardware, Fail,
        "Uncorrectable memory or logic errors (RAS)",
        "The GPU's RAS counters (ras/<block>_err_count, `ue:`) record uncorrectable errors: data was \
         lost in HBM (umc), caches or fabric. Jobs on this GPU can crash or compute wrong results. \
         Drain the node, collect `amd-smi metric --ecc` / bad pages, and have the GPU serviced.";
    RAS_CORRECTABLE = "hardware.ras-correctable", Hardware, Info,
        "Corrected memory errors (RAS)",
        "The GPU's RAS counters (`ce:`) record errors that ECC corrected. A few are normal over a \
         lifetime; a steadily growing count on one GPU predicts uncorrectable errors.";
    RETIRED_PAGES = "hardware.retired-pages", Hardware, Warn,
        "VRAM pages retired or pending retirement",
        "ras/gpu_vram_bad_pages lists VRAM pages the driver retired after uncorrectable errors (R) or \
         will retire at the next reset (P). Capacity shrinks slightly; many retired pages mean failing \
         memory, and past the driver's threshold the GPU is refused at boot.";
    RUNTIME_SUSPENDED = "hardware.runtime-suspended", Hardware, Info,
        "A discrete GPU is runtime-suspended",
        "power/runtime_status is `suspended`: the GPU is powered down until first use (PRIME laptops, \
         idle servers with runtime PM). ROCm wakes it when a process opens it; old rocminfo versions \
         said `ROCk module is NOT loaded` in this state. The probe does not wake it: RAS and link files \
         were not read.";
    PARTITION_MODE_MISMATCH = "hardware.partition-mode-mismatch", Hardware, Warn,
        "GPUs of one model run in different partition modes",
        "current_compute_partition (SPX/DPX/QPX/CPX) or current_memory_partition (NPS1/NPS4) differs \
         between GPUs of the same model. Schedulers and collective libraries assume a uniform node; \
         set one mode with `amd-smi set --compute-partition` / `--memory-partition`.";
}
