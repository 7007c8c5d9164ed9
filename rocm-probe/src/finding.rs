//! Findings, their statuses and layers, and the one registry that declares every finding id.

use std::fmt;

use serde::Serialize;

/// The nine layers of a ROCm install, bottom-up. Numbers and ids are part of the output contract.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// 1: compute units, memory, interconnect; the gfx target everything keys off.
    Hardware = 1,
    /// 2: amdgpu + KFD, device nodes.
    Driver = 2,
    /// 3: libhsakmt.
    Thunk = 3,
    /// 4: ROCr and HIP.
    Runtime = 4,
    /// 5: rocBLAS, MIOpen, RCCL, …
    Libraries = 5,
    /// 6: HIP-Clang, device libraries.
    Compiler = 6,
    /// 7: PyTorch, JAX, …
    Frameworks = 7,
    /// 8: profilers, debuggers, amd-smi.
    Tools = 8,
    /// 9: readiness for what the stack carries.
    Workloads = 9,
}

impl Layer {
    /// All layers, bottom-up.
    pub const ALL: [Layer; 9] = [
        Layer::Hardware,
        Layer::Driver,
        Layer::Thunk,
        Layer::Runtime,
        Layer::Libraries,
        Layer::Compiler,
        Layer::Frameworks,
        Layer::Tools,
        Layer::Workloads,
    ];

    /// 1–9.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The id used in finding ids and JSON (`hardware`, `driver`, …).
    pub fn id(self) -> &'static str {
        match self {
            Layer::Hardware => "hardware",
            Layer::Driver => "driver",
            Layer::Thunk => "thunk",
            Layer::Runtime => "runtime",
            Layer::Libraries => "libraries",
            Layer::Compiler => "compiler",
            Layer::Frameworks => "frameworks",
            Layer::Tools => "tools",
            Layer::Workloads => "workloads",
        }
    }

    /// What the layer is, in a few words.
    pub fn title(self) -> &'static str {
        match self {
            Layer::Hardware => "hardware (GPUs, memory, interconnect)",
            Layer::Driver => "kernel driver (amdgpu, KFD, device nodes)",
            Layer::Thunk => "thunk (libhsakmt)",
            Layer::Runtime => "runtime (ROCr, HIP)",
            Layer::Libraries => "math and communication libraries",
            Layer::Compiler => "compiler (HIP-Clang, device libraries)",
            Layer::Frameworks => "frameworks (PyTorch, JAX, …)",
            Layer::Tools => "tools (profilers, debuggers, SMI)",
            Layer::Workloads => "workloads",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A finding's status. Ordered by weight: a layer's verdict is its heaviest finding.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not applicable or could not be checked — always with the reason.
    Skip,
    /// Checked and fine.
    Pass,
    /// Worth knowing; nothing to fix.
    Info,
    /// Works, but something is off.
    Warn,
    /// Broken.
    Fail,
}

impl Status {
    /// Upper-case word for text output, readable without colour.
    pub fn word(self) -> &'static str {
        match self {
            Status::Skip => "SKIP",
            Status::Pass => "PASS",
            Status::Info => "INFO",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One piece of evidence: where a value came from and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Evidence {
    /// A path inside the root, or a non-file source such as `env:HSA_OVERRIDE_GFX_VERSION`,
    /// `identity` or `device:/dev/kfd`.
    pub source: String,
    /// The value seen; `None` when the source was absent.
    pub value: Option<String>,
}

impl Evidence {
    /// Evidence with a value.
    pub fn new(source: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            value: Some(value.into()),
        }
    }

    /// Evidence that something is absent.
    pub fn absent(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            value: None,
        }
    }
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// Stable dotted id, declared in [`RULES`].
    pub id: &'static str,
    /// The layer the id is declared in.
    pub layer: Layer,
    /// This finding's status.
    pub status: Status,
    /// One sentence saying what was found.
    pub summary: String,
    /// Paths and values behind it.
    pub evidence: Vec<Evidence>,
    /// What to do, when there is something to do.
    pub remedy: Option<String>,
    /// The id of the lower finding this one follows from.
    pub caused_by: Option<&'static str>,
}

impl Finding {
    /// Adds evidence.
    pub fn with(mut self, evidence: Evidence) -> Self {
        self.evidence.push(evidence);
        self
    }

    /// Adds several pieces of evidence.
    pub fn with_all(mut self, evidence: impl IntoIterator<Item = Evidence>) -> Self {
        self.evidence.extend(evidence);
        self
    }

    /// Sets the remedy.
    pub fn remedy(mut self, remedy: impl Into<String>) -> Self {
        self.remedy = Some(remedy.into());
        self
    }

    /// Marks this finding as a consequence of `rule`.
    pub fn caused_by(mut self, rule: &Rule) -> Self {
        self.caused_by = Some(rule.id);
        self
    }
}

/// A declared finding id with its layer, default status and `explain` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable dotted id (`driver.kfd-permission-denied`).
    pub id: &'static str,
    /// Its layer.
    pub layer: Layer,
    /// The status it is emitted with unless a check (or a profile) says otherwise.
    pub status: Status,
    /// One-line title.
    pub title: &'static str,
    /// What `rocm-probe explain ID` prints: what it means, why it matters, how it is detected.
    pub explain: &'static str,
}

impl Rule {
    /// A finding of this rule with its default status.
    pub fn finding(&self, summary: impl Into<String>) -> Finding {
        self.finding_with(self.status, summary)
    }

    /// A finding of this rule with an explicit status.
    pub fn finding_with(&self, status: Status, summary: impl Into<String>) -> Finding {
        Finding {
            id: self.id,
            layer: self.layer,
            status,
            summary: summary.into(),
            evidence: Vec::new(),
            remedy: None,
            caused_by: None,
        }
    }
}

/// Declares every rule once: a constant per rule and the [`RULES`] table.
macro_rules! rules {
    ($( $(#[$m:meta])* $name:ident = $id:literal, $layer:ident, $status:ident, $title:literal, $explain:literal; )*) => {
        $( $(#[$m])* #[doc = concat!("`", $id, "`: ", $title)]
        pub const $name: Rule = Rule {
            id: $id, layer: Layer::$layer, status: Status::$status, title: $title, explain: $explain,
        }; )*
        /// Every declared rule, in layer order.
        pub const RULES: &[Rule] = &[$($name,)*];
    };
}

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

rules! {
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
    OUT_OF_TREE_DRIVER = "driver.out-of-tree-driver", Driver, Info,
        "amdgpu is an out-of-tree (DKMS) build",
        "/sys/module/amdgpu/version exists only for amdgpu-dkms builds; in-tree amdgpu has no version \
         file. A DKMS driver must match the ROCm release it came with and be rebuilt for every kernel.";
    KFD_MISSING = "driver.kfd-missing", Driver, Fail,
        "amdgpu is loaded but KFD is absent",
        "amdgpu drives the GPU but /sys/class/kfd does not exist: the kernel was built without \
         CONFIG_HSA_AMD, or KFD failed to initialise. ROCm cannot use any GPU.";
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_dotted_lower_case_and_prefixed_by_their_layer() {
        let mut seen = HashSet::new();
        for r in RULES {
            assert!(seen.insert(r.id), "duplicate {}", r.id);
            let (layer, name) = r.id.split_once('.').expect("dotted");
            assert_eq!(layer, r.layer.id(), "{}", r.id);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                r.id
            );
            assert!(r.explain.len() > 60, "{} needs a real explanation", r.id);
        }
    }

    #[test]
    fn status_weights() {
        assert!(Status::Fail > Status::Warn);
        assert!(Status::Warn > Status::Info);
        assert!(Status::Pass > Status::Skip);
    }
}
