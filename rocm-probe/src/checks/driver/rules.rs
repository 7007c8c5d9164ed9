//! Layer 2 (driver) finding ids: their layer and default status.
//! Their titles and explanations are in this folder's `messages.toml`.

use crate::checks::{runtime, thunk};
use crate::finding::declare_rules;

declare_rules! {
    DRIVER_RULES;
    AMDGPU_NOT_LOADED = "driver.amdgpu-not-loaded", Driver, Fail => [
        GPU_NOT_BOUND,
        KFD_DEVICE_MISSING,
        RENDER_NODE_MISSING,
    ];
    AMDGPU_BLACKLISTED = "driver.amdgpu-blacklisted", Driver, Fail => [
        AMDGPU_NOT_LOADED,
    ];
    NOMODESET = "driver.nomodeset", Driver, Fail => [
        AMDGPU_NOT_LOADED,
    ];
    SECURE_BOOT = "driver.secure-boot", Driver, Warn => [
        AMDGPU_NOT_LOADED,
    ];
    DKMS_NOT_BUILT = "driver.dkms-not-built", Driver, Fail => [
        AMDGPU_NOT_LOADED,
    ];
    OUT_OF_TREE_DRIVER = "driver.out-of-tree-driver", Driver, Info;
    KFD_MISSING = "driver.kfd-missing", Driver, Fail;
    KFD_UNREADABLE = "driver.kfd-unreadable", Driver, Fail;
    GPU_NOT_IN_KFD = "driver.gpu-not-in-kfd", Driver, Fail;
    GPU_NOT_BOUND = "driver.gpu-not-bound", Driver, Fail => [
        GPU_NOT_IN_KFD,
    ];
    KFD_DEVICE_MISSING = "driver.kfd-device-missing", Driver, Fail => [
        RENDER_NODE_MISSING,
        KFD_OPEN_FAILED,
    ];
    KFD_PERMISSION_DENIED = "driver.kfd-permission-denied", Driver, Fail => [
        KFD_OPEN_FAILED,
        thunk::rules::HSAKMT_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    // libhsakmt skips a GPU node whose render node it cannot open (topology_sysfs_check_node_supported):
    // its node list then differs from KFD's, and ROCr has no agent for that GPU.
    RENDER_NODE_MISSING = "driver.render-node-missing", Driver, Fail => [
        thunk::rules::HSAKMT_NODE_MISMATCH,
        runtime::rules::ROCR_AGENT_MISSING,
        runtime::rules::HIP_FAILED,
    ];
    RENDER_PERMISSION_DENIED = "driver.render-permission-denied", Driver, Fail => [
        thunk::rules::HSAKMT_FAILED,
        thunk::rules::HSAKMT_NODE_MISMATCH,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::ROCR_AGENT_MISSING,
        runtime::rules::HIP_FAILED,
    ];
    INPUT_MALFORMED = "driver.input-malformed", Driver, Warn;
    INPUT_UNREADABLE = "driver.input-unreadable", Driver, Skip;
    IDENTITY_NOT_RECORDED = "driver.identity-not-recorded", Driver, Skip;
    KFD_READY = "driver.kfd-ready", Driver, Pass;
    DEVICE_ACCESS_SEAT_ACL = "driver.device-access-seat-acl", Driver, Info;
    CONTAINER = "driver.container", Driver, Info;
    FIRMWARE_KNOWN_BAD = "driver.firmware-known-bad", Driver, Warn => [GPU_HANG, GPU_PAGE_FAULT];
    AMDGPU_KNOWN_BAD = "driver.amdgpu-known-bad", Driver, Warn => [GPU_HANG, GPU_PAGE_FAULT];
    WSL = "driver.wsl", Driver, Info;
    WSL_DXG_UNUSABLE = "driver.wsl-dxg-unusable", Driver, Fail => [
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    WSL_DXCORE_MISSING = "driver.wsl-dxcore-missing", Driver, Fail => [
        runtime::rules::ROCR_LOAD_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    WSL_RUNTIME_MISSING = "driver.wsl-runtime-missing", Driver, Fail => [
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    WSL_DXG_DETECTION_OFF = "driver.wsl-dxg-detection-off", Driver, Fail => [
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    WSL_ROCDXG_NOT_SEARCHED = "driver.wsl-rocdxg-not-searched", Driver, Fail => [
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    WSL_READY = "driver.wsl-ready", Driver, Info;
    KERNEL_TOO_OLD = "driver.kernel-too-old", Driver, Fail => [
        GPU_NOT_BOUND,
    ];
    FIRMWARE_MISSING = "driver.firmware-missing", Driver, Fail => [
        GPU_NOT_BOUND,
        FIRMWARE_LOAD_FAILED,
    ];
    // The kernel log (checks/driver/kernel_log.rs).
    FIRMWARE_LOAD_FAILED = "driver.firmware-load-failed", Driver, Fail => [
        GPU_INIT_FAILED,
        GPU_NOT_BOUND,
        PSP_FAILED,
        SMU_FAILED,
        AMDGPU_OOPS,
    ];
    PSP_FAILED = "driver.psp-failed", Driver, Fail => [
        GPU_INIT_FAILED,
        GPU_NOT_BOUND,
        AMDGPU_OOPS,
    ];
    SMU_FAILED = "driver.smu-failed", Driver, Fail => [
        GPU_INIT_FAILED,
        GPU_NOT_BOUND,
        AMDGPU_OOPS,
    ];
    GPU_INIT_FAILED = "driver.gpu-init-failed", Driver, Fail => [
        GPU_NOT_BOUND,
        AMDGPU_OOPS,
    ];
    KFD_ATOMICS_REJECTED = "driver.kfd-atomics-rejected", Driver, Fail => [
        GPU_NOT_IN_KFD,
    ];
    KFD_DEVICE_NOT_ADDED = "driver.kfd-device-not-added", Driver, Fail => [
        GPU_NOT_IN_KFD,
    ];
    AMDGPU_OOPS = "driver.amdgpu-oops", Driver, Warn;
    GPU_HANG = "driver.gpu-hang", Driver, Warn;
    GPU_PAGE_FAULT = "driver.gpu-page-fault", Driver, Warn;
    KERNEL_LOG_UNREADABLE = "driver.kernel-log-unreadable", Driver, Info;
    KERNEL_LOG_READ = "driver.kernel-log-read", Driver, Pass;
}

declare_rules! {
    DRIVER_PLATFORM_RULES;
    IOMMU_NOT_PASSTHROUGH = "driver.iommu-not-passthrough", Driver, Info;
    NUMA_BALANCING = "driver.numa-balancing", Driver, Info;
    ACS_P2P_REDIRECT = "driver.acs-p2p-redirect", Driver, Warn;
}

declare_rules! {
    DRIVER_ACTIVE_RULES;
    KFD_OPEN_FAILED = "driver.kfd-open-failed", Driver, Fail => [
        thunk::rules::HSAKMT_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    KFD_ANSWERS = "driver.kfd-answers", Driver, Pass;
    WSL_NO_KFD = "driver.wsl-no-kfd", Driver, Info;
    KFD_INTERFACE_OLD = "driver.kfd-interface-old", Driver, Warn;
    KFD_GPUS_HIDDEN = "driver.kfd-gpus-hidden", Driver, Warn;
    KFD_IOCTL_FAILED = "driver.kfd-ioctl-failed", Driver, Warn;
}

declare_rules! {
    DRIVER_EXPECT_RULES;
    EXPECT_AMDGPU = "driver.expect-amdgpu", Driver, Fail;
    EXPECT_KERNEL = "driver.expect-kernel", Driver, Fail;
    EXPECT_FIRMWARE = "driver.expect-firmware", Driver, Fail;
}

declare_rules! {
    DRIVER_CONTAINER_RULES;
    CONTAINER_UNPRIVILEGED = "driver.container-unprivileged", Driver, Warn => [
        KFD_OPEN_FAILED,
    ];
    DEV_NOEXEC = "driver.dev-noexec", Driver, Fail => [
        KFD_OPEN_FAILED,
        thunk::rules::HSAKMT_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    SELINUX_DEVICE_DENIED = "driver.selinux-device-denied", Driver, Fail => [
        thunk::rules::HSAKMT_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
    SELINUX_USER_KFD_DENIED = "driver.selinux-user-kfd-denied", Driver, Warn => [
        KFD_OPEN_FAILED,
        thunk::rules::HSAKMT_FAILED,
        runtime::rules::ROCR_INIT_FAILED,
        runtime::rules::HIP_FAILED,
    ];
}
