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
