//! Node conformance (`rocm-probe check --expect FILE.toml`): what a good node of a fleet is, and
//! a finding for every expectation this machine does not meet, with what was expected and what
//! was found. `check --write-expect` writes the file from a known-good node.
//!
//! ```toml
//! [gpus]
//! physical = 8                 # physical GPUs
//! agents_per_gpu = 8           # GPU agents (partitions) per physical GPU
//! targets = ["gfx942"]         # the distinct processors, exactly
//! min_vram_gib = 191           # per physical GPU
//! compute_partition = "CPX"    # amdgpu's current_compute_partition, or derived
//! memory_partition = "NPS1"
//! xgmi_hive_complete = true
//! [pcie]
//! min_gen = 5                  # of each GPU's link capability
//! min_width = 16               # of each GPU's current link
//! [versions]
//! rocm = ">=6.2, <6.3"         # comparators joined by commas; "6.2" matches 6.2.x
//! amdgpu = ">=6.8"             # amdgpu module version (amdgpu-dkms); absent for in-tree
//! kernel = ">=6.8"
//! [firmware]                   # every GPU's device/fw_version/<component>_fw_version
//! mes = ">=0x00000080, !=0x00000083"   # hex, compared as numbers
//! smc = "=0x004c6000"
//! [require]
//! libraries = ["rocblas", "hipblaslt"]   # present, with kernels for every GPU
//! frameworks = ["PyTorch"]               # found, and ready on every GPU
//! [policy]
//! ignore = ["hardware.pci-not-captured"] # finding ids left out of the verdict
//! worst = "warn"                         # the worst status that still exits 0
//! ```

use crate::msg;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::facts::Facts;
use crate::facts::agent::Inventory;
use crate::finding::{
    EXPECT_AMDGPU, EXPECT_FIRMWARE, EXPECT_FRAMEWORKS, EXPECT_GPUS, EXPECT_KERNEL,
    EXPECT_LIBRARIES, EXPECT_PCIE, EXPECT_ROCM, Evidence, Finding, Layer, Status, Subject,
};

/// A node-conformance file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// GPUs.
    #[serde(default, skip_serializing_if = "Gpus::is_empty")]
    pub gpus: Gpus,
    /// PCIe links.
    #[serde(default, skip_serializing_if = "Pcie::is_empty")]
    pub pcie: Pcie,
    /// Version ranges.
    #[serde(default, skip_serializing_if = "Versions::is_empty")]
    pub versions: Versions,
    /// Firmware version ranges by component (`mes`, `smc`, …: `device/fw_version/<component>_fw_version`
    /// of every GPU that has the file).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub firmware: BTreeMap<String, String>,
    /// Libraries and frameworks that must work on every GPU.
    #[serde(default, skip_serializing_if = "Require::is_empty")]
    pub require: Require,
    /// What the verdict leaves out and tolerates.
    #[serde(default)]
    pub policy: Policy,
}

/// `[gpus]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpus {
    /// Physical GPUs.
    pub physical: Option<usize>,
    /// GPU agents per physical GPU.
    pub agents_per_gpu: Option<usize>,
    /// The distinct processors (`gfx942`), exactly.
    pub targets: Option<Vec<String>>,
    /// Minimum memory per physical GPU, GiB.
    pub min_vram_gib: Option<u64>,
    /// Compute partition mode (`SPX`, `DPX`, `QPX`, `CPX`).
    pub compute_partition: Option<String>,
    /// Memory partition mode (`NPS1`, `NPS4`).
    pub memory_partition: Option<String>,
    /// Every XGMI hive has a link between every pair of its GPUs.
    pub xgmi_hive_complete: Option<bool>,
}

impl Gpus {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `[pcie]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pcie {
    /// Minimum PCIe generation of each GPU's link capability.
    pub min_gen: Option<u32>,
    /// Minimum width of each GPU's current link.
    pub min_width: Option<u32>,
}

impl Pcie {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `[versions]`: ranges such as `">=6.2, <6.3"`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Versions {
    /// The ROCm release a process uses.
    pub rocm: Option<String>,
    /// The amdgpu module's version (amdgpu-dkms builds carry one).
    pub amdgpu: Option<String>,
    /// The running kernel's release.
    pub kernel: Option<String>,
}

impl Versions {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `[require]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Require {
    /// Library stems (`rocblas`, `MIOpen`) that must be installed with kernels for every GPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<String>,
    /// Frameworks (`PyTorch`, `JAX`, `TensorFlow`, `vLLM`, `ONNX Runtime`) that must be found and
    /// ready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frameworks: Vec<String>,
}

impl Require {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `[policy]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Finding ids left out of the verdict.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// The worst status that still exits 0: `pass`, `info`, `warn` (the default) or `fail`.
    #[serde(default = "default_worst")]
    pub worst: Status,
}

fn default_worst() -> Status {
    Status::Warn
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            ignore: Vec::new(),
            worst: default_worst(),
        }
    }
}

/// A conformance file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ExpectError {
    /// The file.
    pub path: String,
    /// What is wrong (with line and column for syntax errors).
    pub message: String,
}

impl Expectations {
    /// Parses a conformance file; `path` names it in errors. Version ranges are checked here, so
    /// a typo is an error before anything runs.
    pub fn parse(text: &str, path: &str) -> Result<Self, ExpectError> {
        let e: Self = toml::from_str(text).map_err(|e| ExpectError {
            path: path.to_owned(),
            message: e.to_string().trim().to_owned(),
        })?;
        for (key, range) in [
            ("versions.rocm", &e.versions.rocm),
            ("versions.amdgpu", &e.versions.amdgpu),
            ("versions.kernel", &e.versions.kernel),
        ] {
            if let Some(r) = range
                && let Err(m) = VersionRange::parse(r)
            {
                return Err(ExpectError {
                    path: path.to_owned(),
                    message: format!("key `{key}`: {m}"),
                });
            }
        }
        for (component, range) in &e.firmware {
            if let Err(m) = FirmwareRange::parse(range) {
                return Err(ExpectError {
                    path: path.to_owned(),
                    message: format!("key `firmware.{component}`: {m}"),
                });
            }
        }
        let unknown = unknown_ignored(&e.policy.ignore);
        if !unknown.is_empty() {
            return Err(ExpectError {
                path: path.to_owned(),
                message: msg!("expect.ignore-unknown", ids = unknown.join("; ")),
            });
        }
        Ok(e)
    }

    /// The expectations this machine meets now, for `--write-expect`: what it has, as exact
    /// values; the failures it has now go to `policy.ignore` (reviewed by whoever keeps the file).
    pub fn from_facts(facts: &Facts, findings: &[Finding]) -> Self {
        let mut e = Self::default();
        if let Some(inv) = facts
            .inventory
            .as_ref()
            .filter(|i| i.gpu_agents().next().is_some())
        {
            let gpus: Vec<_> = inv.gpus.iter().filter(|g| !g.nodes.is_empty()).collect();
            e.gpus.physical = Some(gpus.len());
            let per: BTreeSet<usize> = gpus.iter().map(|g| g.nodes.len()).collect();
            if per.len() == 1 {
                e.gpus.agents_per_gpu = per.into_iter().next();
            }
            e.gpus.targets = Some(targets(inv).into_iter().collect());
            e.gpus.min_vram_gib = gpus
                .iter()
                .map(|g| g.memory_bytes)
                .collect::<Option<Vec<u64>>>()
                .and_then(|m| m.into_iter().min())
                .map(|b| b >> 30);
            e.gpus.compute_partition = crate::facts::config::partition_mode(facts, true);
            e.gpus.memory_partition = crate::facts::config::partition_mode(facts, false);
            if !inv.hives.is_empty() {
                e.gpus.xgmi_hive_complete = Some(hive_gaps(facts, inv).is_empty());
            }
            let links = pcie_links(facts);
            e.pcie.min_gen = links.iter().filter_map(|l| l.gen_max).min();
            e.pcie.min_width = links.iter().filter_map(|l| l.width).min();
        }
        if let Some(v) = facts.installs.effective().and_then(|i| i.version) {
            e.versions.rocm = Some(exact(&v.to_string()));
        }
        if let Some(m) = &facts.module {
            e.versions.amdgpu = m.version.as_deref().map(exact);
            e.versions.kernel = m.kernel_release.as_deref().map(exact);
        }
        // Each component every GPU that has it runs at one version: that version, exactly.
        let mut seen: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for g in &facts.fw_versions.gpus {
            for (k, v) in g.components.iter().filter(|(_, v)| v.value.is_some()) {
                seen.entry(k).or_default().insert(&v.text);
            }
        }
        e.firmware = seen
            .into_iter()
            .filter(|(_, v)| v.len() == 1)
            .filter_map(|(k, v)| Some((k.to_owned(), exact(v.first()?))))
            .collect();
        e.require.libraries = libraries_with_kernels(facts, findings);
        e.require.frameworks = ready_frameworks(findings);
        e.policy.ignore = findings
            .iter()
            .filter(|f| f.status == Status::Fail)
            .map(|f| f.id.to_owned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        e
    }

    /// The file's text, with a header saying where it came from.
    pub fn to_toml(&self, source: &str) -> String {
        let mut out = format!(
            "# rocm-probe node expectations, written by `rocm-probe check --write-expect` from \
             {source}.\n# Every key is optional; `rocm-probe check --expect FILE` reports each \
             unmet one.\n"
        );
        if !self.policy.ignore.is_empty() {
            out.push_str(
                "# policy.ignore lists the failures the node had when this was written: review \
                 them.\n",
            );
        }
        out.push('\n');
        let _ = write!(out, "{}", toml::to_string(self).unwrap_or_default());
        out
    }

    /// One finding per unmet expectation (`below` are the report's findings).
    pub fn check(&self, facts: &Facts, below: &[Finding]) -> Vec<Finding> {
        let mut out = Vec::new();
        let inv = facts.inventory.as_ref();
        self.check_gpus(facts, inv, &mut out);
        self.check_pcie(facts, &mut out);
        self.check_versions(facts, &mut out);
        self.check_firmware(facts, &mut out);
        self.check_require(facts, below, &mut out);
        out
    }

    /// `[firmware]`: every GPU with the component's file must run a version in its range; a GPU
    /// whose drm device has a `fw_version` directory without the file is unmet (`found none`).
    fn check_firmware(&self, facts: &Facts, out: &mut Vec<Finding>) {
        let mut unmet = Vec::new();
        for (component, want) in &self.firmware {
            let Ok(range) = FirmwareRange::parse(want) else {
                continue;
            };
            for g in facts
                .fw_versions
                .gpus
                .iter()
                .filter(|g| !g.components.is_empty())
            {
                let have = g.components.get(component);
                if have.and_then(|v| v.value).is_some_and(|v| range.matches(v)) {
                    continue;
                }
                let have = have.map_or_else(|| msg!("expect.none"), |v| v.text.clone());
                unmet.push(msg!("expect.firmware", gpu = g.gpu, component, want, have));
            }
        }
        if !unmet.is_empty() {
            out.push(unmet_finding(
                EXPECT_FIRMWARE,
                &msg!("expect.firmware-what"),
                &unmet,
            ));
        }
    }

    fn check_gpus(&self, facts: &Facts, inv: Option<&Inventory>, out: &mut Vec<Finding>) {
        let g = &self.gpus;
        if g.is_empty() {
            return;
        }
        let gpus: Vec<_> = inv
            .map(|i| i.gpus.iter().filter(|g| !g.nodes.is_empty()).collect())
            .unwrap_or_default();
        let mut unmet = Vec::new();
        if let Some(want) = g.physical
            && gpus.len() != want
        {
            unmet.push(msg!("expect.physical", want, have = gpus.len()));
        }
        if let Some(want) = g.agents_per_gpu {
            for p in gpus.iter().filter(|p| p.nodes.len() != want) {
                unmet.push(msg!(
                    "expect.agents",
                    gpu = p.index,
                    address = p.pci_address.as_deref().unwrap_or("?"),
                    want,
                    have = p.nodes.len()
                ));
            }
        }
        if let Some(want) = &g.targets {
            let have = inv.map(targets).unwrap_or_default();
            let want: BTreeSet<String> = want.iter().cloned().collect();
            if have != want {
                unmet.push(msg!(
                    "expect.targets",
                    want = join(&want),
                    have = join(&have)
                ));
            }
        }
        if let Some(want) = g.min_vram_gib {
            for p in &gpus {
                match p.memory_bytes {
                    Some(b) if b >> 30 >= want => {}
                    Some(b) => unmet.push(msg!("expect.vram", gpu = p.index, want, have = b >> 30)),
                    None => unmet.push(msg!("expect.vram-unknown", gpu = p.index, want)),
                }
            }
        }
        for (want, compute, what) in [
            (&g.compute_partition, true, msg!("expect.compute-partition")),
            (&g.memory_partition, false, msg!("expect.memory-partition")),
        ] {
            if let Some(want) = want {
                let have = crate::facts::config::partition_mode(facts, compute);
                if !have
                    .as_deref()
                    .is_some_and(|h| h.eq_ignore_ascii_case(want))
                {
                    unmet.push(msg!(
                        "expect.partition",
                        what,
                        want,
                        have = have.unwrap_or_else(|| msg!("expect.unknown"))
                    ));
                }
            }
        }
        if g.xgmi_hive_complete == Some(true) {
            let hives = inv.map_or(0, |i| i.hives.len());
            if hives == 0 {
                unmet.push(msg!("expect.no-hive"));
            } else if let Some(inv) = inv {
                for gap in hive_gaps(facts, inv) {
                    let pairs: Vec<String> = gap
                        .missing
                        .iter()
                        .map(|(a, b)| format!("{a}–{b}"))
                        .collect();
                    unmet.push(msg!(
                        "expect.hive-incomplete",
                        hive = format!("{:#x}", gap.hive_id),
                        pairs = crate::i18n::list(&pairs)
                    ));
                }
            }
        }
        if !unmet.is_empty() {
            out.push(unmet_finding(EXPECT_GPUS, &msg!("expect.gpus"), &unmet));
        }
    }

    fn check_pcie(&self, facts: &Facts, out: &mut Vec<Finding>) {
        if self.pcie.is_empty() {
            return;
        }
        let mut unmet = Vec::new();
        let links = pcie_links(facts);
        if links.is_empty() {
            unmet.push(msg!("expect.no-pcie"));
        }
        for l in &links {
            if let Some(want) = self.pcie.min_gen
                && l.gen_max.is_none_or(|g| g < want)
            {
                unmet.push(msg!(
                    "expect.pcie-gen",
                    address = l.address,
                    want,
                    have = l
                        .gen_max
                        .map_or_else(|| msg!("expect.unknown"), |g| format!("gen {g}"))
                ));
            }
            if let Some(want) = self.pcie.min_width
                && l.width.is_none_or(|w| w < want)
            {
                unmet.push(msg!(
                    "expect.pcie-width",
                    address = l.address,
                    want,
                    have = l
                        .width
                        .map_or_else(|| msg!("expect.unknown"), |w| format!("x{w}"))
                ));
            }
        }
        if !unmet.is_empty() {
            out.push(unmet_finding(
                EXPECT_PCIE,
                &msg!("expect.pcie-links"),
                &unmet,
            ));
        }
    }

    fn check_versions(&self, facts: &Facts, out: &mut Vec<Finding>) {
        let v = &self.versions;
        let rocm = facts
            .installs
            .effective()
            .and_then(|i| i.version)
            .map(|v| v.to_string());
        let module = facts.module.as_ref();
        for (rule, what, want, have) in [
            (EXPECT_ROCM, "ROCm".to_owned(), &v.rocm, rocm),
            (
                EXPECT_AMDGPU,
                msg!("expect.amdgpu-module"),
                &v.amdgpu,
                module.and_then(|m| m.version.clone()),
            ),
            (
                EXPECT_KERNEL,
                msg!("expect.kernel"),
                &v.kernel,
                module.and_then(|m| m.kernel_release.clone()),
            ),
        ] {
            let Some(want) = want else { continue };
            let Ok(range) = VersionRange::parse(want) else {
                continue;
            };
            let ok = have.as_deref().is_some_and(|h| range.matches(h));
            if !ok {
                let have = have.unwrap_or_else(|| msg!("expect.none"));
                let unmet = msg!("expect.version", what, want, have);
                out.push(unmet_finding(rule, &what, &[unmet]));
            }
        }
    }

    fn check_require(&self, facts: &Facts, below: &[Finding], out: &mut Vec<Finding>) {
        let have = libraries_with_kernels(facts, below);
        let mut unmet = Vec::new();
        for lib in &self.require.libraries {
            if !have.iter().any(|h| h.eq_ignore_ascii_case(lib)) {
                let installed = facts
                    .libraries
                    .installs
                    .iter()
                    .any(|i| i.present.iter().any(|p| p.name.eq_ignore_ascii_case(lib)));
                unmet.push(if installed {
                    msg!("expect.library-gap", library = lib)
                } else {
                    msg!("expect.not-installed", name = lib)
                });
            }
        }
        if !unmet.is_empty() {
            out.push(unmet_finding(
                EXPECT_LIBRARIES,
                &msg!("expect.libraries"),
                &unmet,
            ));
        }
        let ready = ready_frameworks(below);
        let mut unmet = Vec::new();
        for fw in &self.require.frameworks {
            if !ready.iter().any(|r| r.eq_ignore_ascii_case(fw)) {
                let found = below.iter().any(|f| {
                    f.id == "workloads.framework"
                        && f.subject.as_ref().map(Subject::name) == Some(fw.as_str())
                });
                unmet.push(if found {
                    msg!("expect.framework-not-ready", framework = fw)
                } else {
                    msg!("expect.not-installed", name = fw)
                });
            }
        }
        if !unmet.is_empty() {
            out.push(unmet_finding(
                EXPECT_FRAMEWORKS,
                &msg!("expect.frameworks"),
                &unmet,
            ));
        }
    }
}

fn unmet_finding(rule: crate::finding::Rule, what: &str, unmet: &[String]) -> Finding {
    let mut summary = msg!("expect.unmet", what, first = unmet[0]);
    if unmet.len() > 1 {
        summary = msg!("expect.unmet-more", summary, more = unmet.len() - 1);
    }
    let source = msg!("expect.source");
    rule.finding(summary)
        .with_all(unmet.iter().map(|u| Evidence::new(&source, u.clone())))
}

fn join(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        msg!("expect.none")
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

fn exact(v: &str) -> String {
    format!("={v}")
}

/// The distinct processors of the GPU agents.
fn targets(inv: &Inventory) -> BTreeSet<String> {
    inv.gpu_agents()
        .filter_map(|a| a.gfx.map(|g| g.name()).or_else(|| a.name.clone()))
        .collect()
}

/// One GPU's PCIe link.
struct Link {
    address: String,
    gen_max: Option<u32>,
    width: Option<u32>,
}

/// PCIe generation from a link speed (`16.0 GT/s PCIe` → 4).
fn pcie_gen(speed: &str) -> Option<u32> {
    let gts: f64 = speed.split_whitespace().next()?.parse().ok()?;
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
        (128.0, 7),
    ]
    .iter()
    .find(|(s, _)| (gts - s).abs() < 0.01)
    .map(|(_, g)| *g)
}

/// Each physical GPU's link, from its drm device (what layer 1's link check reads), else from
/// the PCI bus.
fn pcie_links(facts: &Facts) -> Vec<Link> {
    let from_drm: Vec<Link> = match (facts.inventory.as_ref(), facts.kfd.as_ref()) {
        (Some(inv), Some(kfd)) => inv
            .gpus
            .iter()
            .filter_map(|g| {
                let agent = g
                    .nodes
                    .iter()
                    .find_map(|n| inv.agents.iter().find(|a| a.node == *n))?;
                // An APU's GPU sits on the SoC: its "link" is not a slot's.
                if agent.integrated == Some(true) {
                    return None;
                }
                let minor = agent.drm_render_minor?;
                let drm = kfd.render_nodes.get(&minor)?;
                if drm.max_link_speed.is_none() && drm.current_link_width.is_none() {
                    return None;
                }
                Some(Link {
                    address: g
                        .pci_address
                        .clone()
                        .unwrap_or_else(|| format!("GPU {}", g.index)),
                    gen_max: drm.max_link_speed.as_deref().and_then(pcie_gen),
                    width: drm.current_link_width,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    if !from_drm.is_empty() {
        return from_drm;
    }
    facts
        .pci
        .as_ref()
        .map(|p| {
            p.gpus
                .iter()
                .map(|g| Link {
                    address: g.address.clone(),
                    gen_max: g.max_link_speed.as_deref().and_then(pcie_gen),
                    width: g.current_link_width,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Libraries installed in a reachable install without a layer-5 finding that they lack kernels
/// for a GPU.
fn libraries_with_kernels(facts: &Facts, findings: &[Finding]) -> Vec<String> {
    let gap = |name: &str| {
        findings.iter().any(|f| {
            f.layer == Layer::Libraries
                && f.status >= Status::Info
                && match f.id {
                    "libraries.rocblas-no-kernels-for-target" => name == "rocblas",
                    "libraries.hipblaslt-no-kernels-for-target" => name == "hipblaslt",
                    "libraries.miopen-no-kdb-for-target" => name == "MIOpen",
                    "libraries.no-code-object-for-target"
                    | "libraries.code-object-needs-feature-change" => {
                        f.subject.as_ref().map(Subject::name) == Some(name)
                    }
                    _ => false,
                }
        })
    };
    let mut out: Vec<String> = Vec::new();
    for i in &facts.libraries.installs {
        for p in &i.present {
            if !gap(&p.name) && !out.contains(&p.name) {
                out.push(p.name.clone());
            }
        }
    }
    out
}

/// Frameworks whose layer-9 verdict is not a failure.
fn ready_frameworks(findings: &[Finding]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in findings
        .iter()
        .filter(|f| f.id == "workloads.framework" && f.status < Status::Fail)
    {
        for name in ["PyTorch", "JAX", "TensorFlow", "vLLM", "ONNX Runtime"] {
            if f.subject.as_ref().map(Subject::name) == Some(name) && !out.iter().any(|o| o == name)
            {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// Comparators joined by commas: `>=6.2`, `<6.3`, `=6.2.0`, `!=6.1`, or a bare `6.2` (the
/// release line: 6.2.x).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange(Vec<(String, Vec<u64>)>);

impl VersionRange {
    /// Parses a range; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        for raw in text.split(',') {
            let raw = raw.trim();
            let op = ["<=", ">=", "!=", "<", ">", "="]
                .into_iter()
                .find(|op| raw.starts_with(op))
                .unwrap_or("");
            let version = numbers(raw[op.len()..].trim())
                .ok_or_else(|| format!("{raw:?} is not a version comparison such as >=6.2"))?;
            parts.push((op.to_owned(), version));
        }
        Ok(Self(parts))
    }

    /// Whether `version` (`6.2.0`, `6.8.5`, `6.1.0-37-amd64`, `6.2.0-66`) is in the range.
    pub fn matches(&self, version: &str) -> bool {
        let Some(have) = numbers(version) else {
            return false;
        };
        self.0.iter().all(|(op, want)| {
            let cmp = compare(&have, want);
            match op.as_str() {
                "" => have.starts_with(want),
                "=" => cmp.is_eq(),
                "!=" => !cmp.is_eq(),
                "<" => cmp.is_lt(),
                "<=" => cmp.is_le(),
                ">" => cmp.is_gt(),
                ">=" => cmp.is_ge(),
                _ => false,
            }
        })
    }
}

/// Firmware comparators joined by commas, hex values: `>=0x00000080`, `=0x004c6000`,
/// `!=0x83`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareRange(Vec<(String, u64)>);

impl FirmwareRange {
    /// Parses a range; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        for raw in text.split(',') {
            let raw = raw.trim();
            let op = ["<=", ">=", "!=", "<", ">", "="]
                .into_iter()
                .find(|op| raw.starts_with(op))
                .unwrap_or("=");
            let value = crate::facts::fw_versions::parse_version(raw.trim_start_matches(op).trim())
                .ok_or_else(|| {
                    format!("{raw:?} is not a firmware version comparison such as >=0x00000080")
                })?;
            parts.push((op.to_owned(), value));
        }
        Ok(Self(parts))
    }

    /// Whether `version` is in the range.
    pub fn matches(&self, version: u64) -> bool {
        self.0.iter().all(|(op, want)| match op.as_str() {
            "=" => version == *want,
            "!=" => version != *want,
            "<" => version < *want,
            "<=" => version <= *want,
            ">" => version > *want,
            ">=" => version >= *want,
            _ => false,
        })
    }
}

/// Compares with missing trailing components as 0 (6.2 = 6.2.0).
fn compare(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    let n = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..n)
        .map(|i| at(a, i).cmp(&at(b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// The leading dotted numbers of a version (`6.1.0-37-amd64` → [6, 1, 0]).
fn numbers(text: &str) -> Option<Vec<u64>> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let parts: Vec<u64> = text[..end]
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then_some(parts)
}

/// Each id of `policy.ignore` that no rule declares, with the closest declared id: a typo
/// would otherwise ignore nothing, silently.
/// Ids earlier releases declared and this one no longer does (no public report showed them and
/// the signal misled: ARCHITECTURE.md §10). A conformance file written then may still ignore
/// them; they can no longer occur, so that is no error.
const RETIRED: [&str; 2] = ["driver.kfd-clock-stuck", "workloads.hive-incomplete"];

fn unknown_ignored(ignore: &[String]) -> Vec<String> {
    ignore
        .iter()
        .filter(|id| crate::finding::rule(id).is_none() && !RETIRED.contains(&id.as_str()))
        .map(|id| {
            let closest = crate::finding::rules()
                .iter()
                .min_by_key(|r| crate::i18n::edit_distance(id, r.id))
                .map_or("", |r| r.id);
            msg!("expect.ignore-unknown-id", id, closest)
        })
        .collect()
}

/// The hives with GPU pairs KFD does not link by XGMI (every GPU of the inventory counts).
fn hive_gaps(facts: &Facts, inv: &Inventory) -> Vec<crate::facts::topo::HiveLinks> {
    let Some(topology) = facts.kfd.as_ref().map(|k| &k.topology) else {
        return Vec::new();
    };
    let matrix = crate::facts::topo::matrix(topology);
    crate::facts::topo::hive_links(&matrix, inv, |_| true)
        .into_iter()
        .filter(|h| !h.missing.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r = VersionRange::parse(">=6.2, <6.3").unwrap();
        assert!(r.matches("6.2.0"));
        assert!(r.matches("6.2.4"));
        assert!(!r.matches("6.3.0"));
        assert!(!r.matches("6.1.3"));
        assert!(VersionRange::parse("6.2").unwrap().matches("6.2.1"));
        assert!(!VersionRange::parse("6.2").unwrap().matches("6.20.0"));
        assert!(
            VersionRange::parse("=6.1.0")
                .unwrap()
                .matches("6.1.0-37-amd64")
        );
        assert!(VersionRange::parse("!=6.1").unwrap().matches("6.2"));
        assert!(VersionRange::parse(">6").unwrap().matches("6.0.1"));
        assert!(!VersionRange::parse(">=6.2").unwrap().matches("unknown"));
        for bad in ["", ">=", "six", ">=6.x", "6..2"] {
            assert!(VersionRange::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pcie_generations() {
        assert_eq!(pcie_gen("16.0 GT/s PCIe"), Some(4));
        assert_eq!(pcie_gen("32.0 GT/s PCIe"), Some(5));
        assert_eq!(pcie_gen("2.5 GT/s PCIe"), Some(1));
        assert_eq!(pcie_gen("Unknown"), None);
    }

    #[test]
    fn parse_errors_name_the_problem() {
        let e = Expectations::parse("[gpus]\nphysical = \"eight\"\n", "n.toml").unwrap_err();
        assert!(e.to_string().starts_with("n.toml: "), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = Expectations::parse("[gpus]\nphysicals = 8\n", "n.toml").unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = Expectations::parse("[versions]\nrocm = \"about six\"\n", "n.toml").unwrap_err();
        assert!(e.to_string().contains("key `versions.rocm`"), "{e}");
        let e = Expectations::parse("[policy]\nworst = \"bad\"\n", "n.toml").unwrap_err();
        assert!(e.to_string().contains("worst"), "{e}");
    }

    #[test]
    fn unknown_ignored_ids_are_errors_naming_the_closest_known_id() {
        let text = "[policy]\nignore = [\"hardware.pci-not-captured\", \"hardware.pci-not-capturd\", \"driver.kfd-misssing\"]\n";
        let e = Expectations::parse(text, "n.toml").unwrap_err().to_string();
        assert!(e.starts_with("n.toml: "), "{e}");
        assert!(
            e.contains("`hardware.pci-not-capturd` (closest: `hardware.pci-not-captured`)"),
            "{e}"
        );
        assert!(
            e.contains("`driver.kfd-misssing` (closest: `driver.kfd-missing`)"),
            "{e}"
        );
        assert!(!e.contains("`hardware.pci-not-captured` ("), "{e}");
        // A retired id is accepted: files written for an earlier release keep working.
        let retired =
            "[policy]\nignore = [\"driver.kfd-clock-stuck\", \"workloads.hive-incomplete\"]\n";
        assert!(Expectations::parse(retired, "r.toml").is_ok());
        for id in RETIRED {
            assert!(crate::finding::rule(id).is_none(), "{id} is declared again");
        }
    }

    #[test]
    fn firmware_ranges_are_hex_comparisons() {
        let r = FirmwareRange::parse(">=0x00000080, !=0x00000083").unwrap();
        assert!(r.matches(0x80) && r.matches(0x86));
        assert!(!r.matches(0x83) && !r.matches(0x7f));
        assert!(FirmwareRange::parse("0x80").unwrap().matches(0x80));
        assert!(FirmwareRange::parse(">=128").is_err());
        let e = Expectations::parse("[firmware]\nmes = \">=0x8z\"\n", "x.toml").unwrap_err();
        assert!(e.message.contains("firmware.mes"), "{}", e.message);
    }

    #[test]
    fn round_trip_through_toml() {
        let mut e = Expectations::default();
        e.gpus.physical = Some(8);
        e.gpus.targets = Some(vec!["gfx942".into()]);
        e.versions.rocm = Some("=6.2.0".into());
        e.firmware
            .insert("mes".into(), ">=0x00000080, !=0x00000083".into());
        e.policy.ignore = vec!["hardware.partition-missing".into()];
        let text = e.to_toml("a test");
        assert_eq!(Expectations::parse(&text, "t").unwrap(), e);
    }
}
