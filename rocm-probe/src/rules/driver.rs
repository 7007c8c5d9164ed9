//! Layer 2 (driver) finding ids.

use crate::finding::declare_rules;

declare_rules! {
    DRIVER_RULES;
    AMDGPU_NOT_LOADED = "driver.amdgpu-not-loaded", Driver, Fail,
        "The amdgpu kernel module is not loaded",
        "/sys/module/amdgpu does not exist, so no AMD GPU is driven and KFD (/dev/kfd) is absent. rocminfo \
         says `ROCk module is NOT loaded, possibly no GPU devices`. Causes: a blacklist in modprobe.d, \
         `nomodeset` or `modprobe.blacklist=amdgpu` on the kernel command line, Secure Boot rejecting an \
         unsigned DKMS module, a DKMS build that failed for the running kernel. Built-in amdgpu has \
         /sys/module/amdgpu too (without initstate); `lsmod` misses it, this check does not.";
    AMDGPU_BLACKLISTED = "driver.amdgpu-blacklisted", Driver, Fail,
        "amdgpu is blacklisted",
        "A modprobe.d file (`blacklist amdgpu` or `install amdgpu /bin/false`) or the kernel command line \
         (`modprobe.blacklist=amdgpu`, `module_blacklist=amdgpu`) keeps amdgpu from loading. Leftovers of \
         NVIDIA or old fglrx installers do this.";
    NOMODESET = "driver.nomodeset", Driver, Fail,
        "`nomodeset` on the kernel command line",
        "`nomodeset` (or `amdgpu.modeset=0`) makes amdgpu refuse to load: no KFD, no ROCm. It is often \
         left over from an installer's safe-graphics boot entry. Remove it from GRUB_CMDLINE_LINUX.";
    SECURE_BOOT = "driver.secure-boot", Driver, Warn,
        "Secure Boot is on and amdgpu is not loaded",
        "With Secure Boot on, the kernel refuses modules not signed by an enrolled key. A DKMS-built \
         amdgpu (amdgpu-dkms) must be signed with a Machine Owner Key enrolled through mokutil. Detected \
         from the SecureBoot EFI variable.";
    DKMS_NOT_BUILT = "driver.dkms-not-built", Driver, Fail,
        "amdgpu-dkms is not built for the running kernel",
        "amdgpu-dkms is installed (/var/lib/dkms/amdgpu/<version>) but has no build for the running \
         kernel (/proc/sys/kernel/osrelease): the DKMS build failed, or the kernel is newer than the \
         driver supports. `dkms status` shows `amdgpu, <ver>: added` instead of `installed`, and \
         rocminfo says `ROCk module is NOT loaded`. Read /var/lib/dkms/amdgpu/<ver>/build/make.log, \
         boot a kernel the ROCm release supports, or remove amdgpu-dkms and use the in-tree driver.";
    OUT_OF_TREE_DRIVER = "driver.out-of-tree-driver", Driver, Info,
        "amdgpu is an out-of-tree (DKMS) build",
        "/sys/module/amdgpu/version exists only for amdgpu-dkms builds; in-tree amdgpu has no version \
         file. A DKMS driver must match the ROCm release it came with and be rebuilt for every kernel.";
    KFD_MISSING = "driver.kfd-missing", Driver, Fail,
        "amdgpu is loaded but KFD is absent",
        "amdgpu drives the GPU but /sys/class/kfd does not exist: the kernel was built without \
         CONFIG_HSA_AMD, or KFD failed to initialise. ROCm cannot use any GPU.";
    KFD_UNREADABLE = "driver.kfd-unreadable", Driver, Fail,
        "The KFD topology exists but this user cannot read it",
        "/sys/class/kfd is there, so the kernel has KFD, but reading its topology was refused \
         (permission denied). ROCr and rocminfo enumerate GPUs from that tree, so for this user ROCm \
         sees no GPU at all, exactly as if KFD were missing. sysfs files are world-readable on a stock \
         kernel; a refusal comes from around it: a container runtime that masks or remounts /sys, a \
         hardened /sys (changed modes, a restrictive mount), or a security module (SELinux, AppArmor) \
         denying the read. The finding names the user, the refused path and its mode and owner.";
    GPU_NOT_IN_KFD = "driver.gpu-not-in-kfd", Driver, Fail,
        "An AMD GPU on the PCI bus is not in the KFD topology",
        "amdgpu drives the GPU but KFD did not add it. Likely causes: the platform does not support PCIe \
         atomics (dmesg: `kfd kfd: amdgpu: skipped device 1002:xxxx, PCI rejects atomics` — consumer \
         boards, chipset slots, risers), or the GPU family is not supported by KFD (GCN 1/2 need \
         amdgpu.si_support=1 / cik_support=1). rocminfo then shows only CPU agents.";
    GPU_NOT_BOUND = "driver.gpu-not-bound", Driver, Fail,
        "An AMD GPU is not bound to amdgpu",
        "The PCI function has no driver, or another one (radeon for old GCN parts, vfio-pci when it is \
         reserved for a VM). ROCm needs amdgpu.";
    KFD_DEVICE_MISSING = "driver.kfd-device-missing", Driver, Fail,
        "/dev/kfd does not exist",
        "KFD is in sysfs but the device node /dev/kfd is missing. In a container: pass it with \
         `--device=/dev/kfd --device=/dev/dri` (docker/podman) or `--bind /dev/kfd,/dev/dri` (apptainer \
         with --containall). rocminfo says `Unable to open /dev/kfd read-write: No such file or directory`.";
    KFD_PERMISSION_DENIED = "driver.kfd-permission-denied", Driver, Fail,
        "/dev/kfd is not readable and writable for this user",
        "ROCm opens /dev/kfd read-write. Its owning group (render on current distributions, video on \
         older ones) is read from the device node itself. rocminfo says `Unable to open /dev/kfd \
         read-write: Permission denied`; old versions said HSA_STATUS_ERROR_OUT_OF_RESOURCES. Joining the \
         group takes effect at the next login.";
    RENDER_NODE_MISSING = "driver.render-node-missing", Driver, Fail,
        "A GPU's render node does not exist",
        "Every KFD GPU node names its DRM render node (drm_render_minor). libhsakmt skips a GPU whose \
         /dev/dri/renderD<minor> it cannot open, so the GPU disappears from ROCr. In containers, pass \
         /dev/dri.";
    RENDER_PERMISSION_DENIED = "driver.render-permission-denied", Driver, Fail,
        "A GPU's render node is not accessible",
        "The user cannot open /dev/dri/renderD<minor> read-write, so libhsakmt skips that GPU. Join the \
         node's owning group and log in again.";
    INPUT_MALFORMED = "driver.input-malformed", Driver, Warn,
        "Malformed driver or platform files",
        "Files about the amdgpu module, the kernel command line, modprobe configuration, /etc/group or \
         the EFI variables could not be parsed; the values in them are treated as unknown.";
    INPUT_UNREADABLE = "driver.input-unreadable", Driver, Skip,
        "Unreadable driver or platform files",
        "Files about the amdgpu module, the kernel command line, modprobe configuration, /etc/group or \
         the EFI variables could not be read (permission denied, not a regular file, too large); the \
         checks that need them are skipped.";
    IDENTITY_NOT_RECORDED = "driver.identity-not-recorded", Driver, Skip,
        "Device access not checked: identity not recorded",
        "The fixture has no [identity] table, so whether the probing user may open /dev/kfd and the render \
         nodes cannot be decided.";
    KFD_READY = "driver.kfd-ready", Driver, Pass,
        "amdgpu, KFD and device nodes are in place",
        "amdgpu is loaded, KFD lists the GPUs, and this user can open /dev/kfd and every GPU's render node.";
    CONTAINER = "driver.container", Driver, Info,
        "Running in a container",
        "Container markers (/.dockerenv, /run/.containerenv, the `container` environment variable) were \
         found. Device nodes, groups and /sys visibility then depend on how the container was started.";
    WSL = "driver.wsl", Driver, Info,
        "Running under WSL",
        "WSL has no KFD: ROCm on WSL goes through /dev/dxg and librocdxg. rocminfo reports \
         HSA_STATUS_ERROR_OUT_OF_RESOURCES there, and rocm_agent_enumerator waits 60 s.";
}

declare_rules! {
    DRIVER_PLATFORM_RULES;
    IOMMU_NOT_PASSTHROUGH = "driver.iommu-not-passthrough", Driver, Info,
        "The IOMMU translates GPU DMA (no iommu=pt)",
        "An IOMMU is active and the kernel command line lacks `iommu=pt`. Every GPU DMA is then \
         translated, which costs bandwidth and, on multi-GPU nodes, leads to hangs in collectives: \
         RCCL warns `Missing \"iommu=pt\" from kernel command line which can lead to system instablity \
         or hang!`. A warning on cluster nodes (Instinct GPUs, XGMI, 4+ GPUs), information elsewhere.";
    NUMA_BALANCING = "driver.numa-balancing", Driver, Info,
        "Automatic NUMA balancing is on",
        "/proc/sys/kernel/numa_balancing is 1: the kernel migrates pages between NUMA nodes behind \
         the application's back, which AMD's tuning guides for Instinct nodes disable \
         (`sysctl kernel.numa_balancing=0`) because it perturbs GPU-host transfers. A warning on \
         cluster nodes, information elsewhere.";
}

declare_rules! {
    DRIVER_ACTIVE_RULES;
    KFD_OPEN_FAILED = "driver.kfd-open-failed", Driver, Fail,
        "Opening /dev/kfd read-write failed (--active)",
        "The active probe opened /dev/kfd as every ROCm process does (O_RDWR) and the kernel \
         refused, with the errno shown: ENOENT (no device node: amdgpu/KFD not loaded, or a \
         container started without --device=/dev/kfd), EACCES or EPERM (not in the group that \
         owns it — usually render — or a device cgroup denies it: the container's \
         devices.allow / the device plugin), ENODEV/ENXIO (the node exists but no driver \
         answers), EBUSY. ROCr then fails hsa_init with HSA_STATUS_ERROR_OUT_OF_RESOURCES and HIP \
         reports no devices. The passive checks of this layer usually name the same cause from \
         the node's mode and owner; this one proves it.";
    KFD_ANSWERS = "driver.kfd-answers", Driver, Pass,
        "/dev/kfd answers its read-only ioctls (--active)",
        "The active probe opened /dev/kfd and ran GET_VERSION (the KFD ioctl interface version), \
         GET_PROCESS_APERTURES_NEW (the GPUs this process may use), AVAILABLE_MEMORY (VRAM \
         still allocatable per GPU, interface ≥ 1.9) and GET_CLOCK_COUNTERS twice per GPU (the \
         GPU's counter must advance). None of them needs a VM or changes device state; the \
         probe's own KFD process (/sys/class/kfd/kfd/proc/<pid>) ends when it exits and is not \
         listed by `rocm-probe ps`.";
    KFD_INTERFACE_OLD = "driver.kfd-interface-old", Driver, Warn,
        "The KFD ioctl interface is older than current ROCm expects (--active)",
        "GET_VERSION reports the KFD ioctl interface major.minor (Linux 6.1: 1.11; 6.4: 1.13; \
         the version history is in kfd_ioctl.h). libhsakmt refuses a major other than 1 \
         (HSAKMT_STATUS_DRIVER_MISMATCH: fail). Below 1.9 there is no AVAILABLE_MEMORY ioctl \
         (ROCr cannot ask for free VRAM: hipMemGetInfo reports an estimate or fails, depending on \
         the release) and below 1.5 no SVM (no \
         hipMallocManaged with XNACK, no HMM): a warning. Below 1.13 the debugger interface \
         that rocgdb of ROCm ≥ 6.0 needs is missing: information. A distribution kernel older \
         than the ROCm release, without AMD's amdgpu-dkms, is the usual cause: install \
         amdgpu-dkms for the release or a newer kernel.";
    KFD_GPUS_HIDDEN = "driver.kfd-gpus-hidden", Driver, Warn,
        "KFD gives this process fewer GPUs than the topology lists (--active)",
        "GET_PROCESS_APERTURES_NEW lists the GPUs the calling process may use; the topology \
         lists every GPU KFD knows. GPUs missing from the first are hidden from this process: a \
         device cgroup (a container given some render nodes only, a Slurm job's GPU binding) or \
         a GPU that failed to initialise for compute. ROCr and HIP then see only the listed \
         ones. Expected inside a container or job given a subset; otherwise check the cgroup's \
         device list and dmesg for amdgpu errors.";
    KFD_CLOCK_STUCK = "driver.kfd-clock-stuck", Driver, Warn,
        "A GPU's clock counter did not advance (--active)",
        "GET_CLOCK_COUNTERS read twice, 2 ms apart, returns the same GPU counter (or 0, which \
         KFD returns for a gpu_id it does not know). On a GPU that is up the counter advances by \
         tens of thousands of ticks in that time: the GPU is hung, powered off behind the \
         driver's back, or in a reset. Check dmesg for amdgpu errors and the GPU's reset state; \
         amd-smi reset may recover it.";
    KFD_IOCTL_FAILED = "driver.kfd-ioctl-failed", Driver, Warn,
        "A read-only KFD ioctl failed (--active)",
        "One of GET_VERSION, GET_PROCESS_APERTURES_NEW, AVAILABLE_MEMORY or GET_CLOCK_COUNTERS \
         failed with the errno shown (ENOTTY or EINVAL: the kernel does not have that ioctl; \
         EINVAL for a gpu_id: KFD does not know the GPU the topology lists; EBADF: the fd was \
         inherited across fork). The values it would have given are unknown.";
}
