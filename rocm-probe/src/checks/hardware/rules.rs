//! Layer 1 (hardware) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::checks::driver;
use crate::finding::declare_rules;

declare_rules! {
    HARDWARE_RULES;
    GPUS_FOUND = "hardware.gpus-found", Hardware, Pass;
    NO_AMD_GPU = "hardware.no-amd-gpu", Hardware, Fail => [
        driver::rules::KFD_MISSING,
    ];
    WSL_PARAVIRTUAL = "hardware.wsl-paravirtual", Hardware, Skip;
    PCI_NOT_CAPTURED = "hardware.pci-not-captured", Hardware, Skip;
    SYSFS_MALFORMED = "hardware.sysfs-malformed", Hardware, Warn;
    SYSFS_UNREADABLE = "hardware.sysfs-unreadable", Hardware, Skip;
    PARTITION_MISSING = "hardware.partition-missing", Hardware, Warn;
    BAR_UNASSIGNED = "hardware.bar-unassigned", Hardware, Fail => [
        driver::rules::GPU_NOT_BOUND,
        driver::rules::GPU_INIT_FAILED,
    ];
}

declare_rules! {
    HARDWARE_DEVICE_RULES;
    PCIE_LINK_DEGRADED = "hardware.pcie-link-degraded", Hardware, Warn;
    LARGE_BAR_OFF = "hardware.large-bar-off", Hardware, Warn;
    APU_SMALL_MEMORY = "hardware.apu-small-memory", Hardware, Warn;
    APU_CARVEOUT_UNSEEN = "hardware.apu-carveout-unseen", Hardware, Warn;
    RAS_UNCORRECTABLE = "hardware.ras-uncorrectable", Hardware, Fail;
    RAS_CORRECTABLE = "hardware.ras-correctable", Hardware, Info;
    RETIRED_PAGES = "hardware.retired-pages", Hardware, Warn;
    RUNTIME_SUSPENDED = "hardware.runtime-suspended", Hardware, Info;
    PARTITION_MODE_MISMATCH = "hardware.partition-mode-mismatch", Hardware, Warn;
    APU_MEMORY_CAPPED = "hardware.apu-memory-capped", Hardware, Info;
    // From the kernel log (checks/driver/kernel_log.rs).
    RAS_EVENT_LOGGED = "hardware.ras-event-logged", Hardware, Warn => [
        driver::rules::GPU_HANG,
    ];
    GPU_THROTTLING = "hardware.gpu-throttling", Hardware, Warn;
    GPU_FAN_STOPPED = "hardware.gpu-fan-stopped", Hardware, Warn => [GPU_THROTTLING];
    GPU_CLOCK_STUCK_LOW = "hardware.gpu-clock-stuck-low", Hardware, Warn;
    VRAM_NEARLY_FULL = "hardware.vram-nearly-full", Hardware, Warn;
}

declare_rules! {
    HARDWARE_EXPECT_RULES;
    EXPECT_GPUS = "hardware.expect-gpus", Hardware, Fail;
    EXPECT_PCIE = "hardware.expect-pcie", Hardware, Fail;
}
