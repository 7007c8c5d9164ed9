//! Findings, their statuses and layers, and the one registry that declares every finding id.

use std::fmt;

use serde::Serialize;

use crate::i18n;

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

    /// What the layer is, in a few words, in `lang` (its `[layer]` in
    /// `checks/<layer>/messages.toml`).
    pub fn title(self, lang: i18n::Lang) -> &'static str {
        i18n::layer_title(self.id(), lang).unwrap_or(self.id())
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A finding's status. Ordered by weight: a layer's verdict is its heaviest finding.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
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
    /// Its id (`pass`), as JSON spells it.
    pub fn id(self) -> &'static str {
        match self {
            Status::Skip => "skip",
            Status::Pass => "pass",
            Status::Info => "info",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }

    /// Upper-case English word for text output, readable without colour (`PASS`).
    pub fn word(self) -> &'static str {
        status_word(self, i18n::Lang::En)
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
    /// How many input problems the source had, when it stands for a file the probe could not
    /// use: problems are grouped per file, the value shows the first few messages and this
    /// counts them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

impl Evidence {
    /// Evidence with a value.
    pub fn new(source: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            value: Some(value.into()),
            count: None,
        }
    }

    /// Evidence that something is absent.
    pub fn absent(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            value: None,
            count: None,
        }
    }
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Finding {
    /// Stable dotted id, declared in the registry ([`rules`]).
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
    /// The remedy as steps: what to do, on what, and the exact command when there is one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy_steps: Vec<RemedyStep>,
    /// The id of the lower finding this one follows from.
    pub caused_by: Option<&'static str>,
    /// The one named thing the finding is about (a library, a framework in a site directory),
    /// for code that picks findings out: the summary is prose in the report's language and is
    /// never parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
}

/// One step of a remedy, as data: renderers print `command` on a line of its own, and tests
/// check every command with shellcheck and that no report gives opposite steps on one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RemedyStep {
    /// What kind of thing to do.
    pub action: Action,
    /// What it acts on: a group, a variable, a module, a GPU's PCI address, a package.
    pub object: String,
    /// The exact command, copyable as it is (`sudo` where root is needed, placeholders spelled
    /// `<like-this>`), when the step is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The step in a sentence, in the report's language.
    pub text: String,
    /// The distribution family this variant is for, when the command differs between them
    /// (`None`: the same everywhere). A machine whose `/etc/os-release` names its family gets
    /// that family's variant; one that does not, every family's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distro: Option<crate::facts::os_release::Distro>,
}

/// The kinds of remedy step.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Action {
    /// Add the user to a group.
    JoinGroup,
    /// Set an environment variable.
    SetEnv,
    /// Unset an environment variable.
    UnsetEnv,
    /// Keep a GPU from programs (a device mask).
    HideGpu,
    /// Let programs use a GPU.
    UseGpu,
    /// Install a package or a file.
    Install,
    /// Remove a package.
    Remove,
    /// Upgrade a package.
    Upgrade,
    /// Load a kernel module.
    LoadModule,
    /// Change the kernel command line.
    KernelParameter,
    /// Read a log for the reason.
    ReadLog,
    /// Reboot.
    Reboot,
    /// Remove a module's blacklist entry.
    Unblacklist,
    /// Rebuild the initramfs, which carries modprobe configuration into early boot.
    RebuildInitramfs,
    /// Set a kernel tunable (sysctl).
    Sysctl,
    /// Build an out-of-tree (DKMS) module.
    BuildModule,
    /// Enroll a Machine Owner Key, so that Secure Boot accepts modules it signed.
    EnrollKey,
    /// Change a setting of the firmware (BIOS/UEFI) setup: no command reaches it.
    FirmwareSetting,
    /// Move, reseat or service the hardware: no command does it.
    ServiceHardware,
}

impl Action {
    /// The action that undoes this one: a report never gives both on one object.
    pub fn opposite(self) -> Option<Self> {
        match self {
            Self::SetEnv => Some(Self::UnsetEnv),
            Self::UnsetEnv => Some(Self::SetEnv),
            Self::HideGpu => Some(Self::UseGpu),
            Self::UseGpu => Some(Self::HideGpu),
            Self::Install => Some(Self::Remove),
            Self::Remove => Some(Self::Install),
            _ => None,
        }
    }
}

impl RemedyStep {
    /// A step with its command.
    pub fn run(
        action: Action,
        object: impl Into<String>,
        command: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            action,
            object: object.into(),
            command: Some(command.into()),
            text: text.into(),
            distro: None,
        }
    }

    /// A step without a command: the text says what to do.
    pub fn say(action: Action, object: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            action,
            object: object.into(),
            command: None,
            text: text.into(),
            distro: None,
        }
    }

    /// The same step as the variant for one distribution family.
    pub fn on(mut self, distro: crate::facts::os_release::Distro) -> Self {
        self.distro = Some(distro);
        self
    }
}

/// Drops from `findings` every step that an earlier one of them, or one of `given`, already
/// gives (the same action, object, command and family): a report lists a step once, however
/// many libraries or environments need it.
pub fn drop_repeated_steps(given: &[Finding], findings: &mut [Finding]) {
    type Key = (
        Action,
        String,
        Option<String>,
        Option<crate::facts::os_release::Distro>,
    );
    let key = |s: &RemedyStep| -> Key { (s.action, s.object.clone(), s.command.clone(), s.distro) };
    let mut seen: std::collections::BTreeSet<Key> = given
        .iter()
        .flat_map(|f| f.remedy_steps.iter())
        .map(key)
        .collect();
    for f in findings {
        f.remedy_steps.retain(|s| seen.insert(key(s)));
    }
}

/// What a finding is about, as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A ROCm library, by its name (`rocBLAS`).
    Library {
        /// The library's name.
        name: String,
    },
    /// One physical GPU: its position in the inventory and its PCI address, the stable identity
    /// (`None` when the fixture does not know the PCI domain).
    Gpu {
        /// Position among the inventory's physical GPUs (`GPU n` in the report).
        index: usize,
        /// `DDDD:BB:DD.F`.
        pci_address: Option<String>,
    },
    /// A framework (`PyTorch`), in the Python site directory it was found in.
    Framework {
        /// The framework's name.
        name: String,
        /// The site directory (`/usr/lib/python3/dist-packages`).
        site: String,
    },
}

impl Subject {
    /// A library.
    pub fn library(name: impl Into<String>) -> Self {
        Self::Library { name: name.into() }
    }

    /// A framework in a site directory.
    pub fn framework(name: impl Into<String>, site: impl Into<String>) -> Self {
        Self::Framework {
            name: name.into(),
            site: site.into(),
        }
    }

    /// One physical GPU.
    pub fn gpu(index: usize, pci_address: Option<String>) -> Self {
        Self::Gpu { index, pci_address }
    }

    /// The library's or framework's name; a GPU's PCI address (empty when unknown).
    pub fn name(&self) -> &str {
        match self {
            Self::Library { name } | Self::Framework { name, .. } => name,
            Self::Gpu { pci_address, .. } => pci_address.as_deref().unwrap_or_default(),
        }
    }

    /// The physical GPU's index, when the finding is about one.
    pub fn gpu_index(&self) -> Option<usize> {
        match self {
            Self::Gpu { index, .. } => Some(*index),
            _ => None,
        }
    }
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

    /// Adds a remedy step.
    pub fn step(mut self, step: RemedyStep) -> Self {
        self.remedy_steps.push(step);
        self
    }

    /// Adds remedy steps.
    pub fn with_steps(mut self, steps: impl IntoIterator<Item = RemedyStep>) -> Self {
        self.remedy_steps.extend(steps);
        self
    }

    /// Names what the finding is about (see [`Finding::subject`]).
    pub fn about(mut self, subject: Subject) -> Self {
        self.subject = Some(subject);
        self
    }

    /// Marks this finding as a consequence of `rule`.
    pub fn caused_by(mut self, rule: &Rule) -> Self {
        self.caused_by = Some(rule.id);
        self
    }
}

/// A declared finding id with its layer and default status; its title and `explain` text are in
/// its layer's catalogue ([`rule_title`], [`rule_explain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable dotted id (`driver.kfd-permission-denied`).
    pub id: &'static str,
    /// Its layer.
    pub layer: Layer,
    /// The status it is emitted with unless a check (or a profile) says otherwise.
    pub status: Status,
    /// The ids of the findings this one can cause (the cause graph, ARCHITECTURE.md §5): when
    /// both are in a report, the report names this one as the other's cause, and the verdict the
    /// deepest cause present.
    pub causes: &'static [&'static str],
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
            remedy_steps: Vec::new(),
            caused_by: None,
            subject: None,
        }
    }
}

/// Declares rules once: a constant per rule and the module's table of them, in a layer's
/// `checks/<layer>/rules.rs` (`NAME = "layer.id", Layer, Status;`, or `… Status => [OTHER, …];`
/// naming the rules whose findings this one can cause); [`rules`] joins the tables. The build
/// script reads these lines and stops when a rule has no texts in its layer's `messages.toml`. A
/// cycle in the cause graph does not compile (each constant needs the ones it names).
macro_rules! declare_rules {
    ($table:ident; $( $(#[$m:meta])* $name:ident = $id:literal, $layer:ident, $status:ident
        $(=> [$($causes:expr),* $(,)?])?; )*) => {
        $( $(#[$m])* #[doc = concat!("`", $id, "`")]
        pub const $name: $crate::finding::Rule = $crate::finding::Rule {
            id: $id,
            layer: $crate::finding::Layer::$layer,
            status: $crate::finding::Status::$status,
            causes: &[$($($causes.id,)*)?],
        }; )*
        /// This layer's rules.
        pub const $table: &[$crate::finding::Rule] = &[$($name,)*];
    };
}
pub(crate) use declare_rules;

pub use crate::checks::rules::*;

/// Every declared rule, bottom-up: the one registry of finding ids.
pub fn rules() -> &'static [Rule] {
    static ALL: std::sync::LazyLock<Vec<Rule>> = std::sync::LazyLock::new(|| {
        crate::checks::rules::TABLES
            .iter()
            .flat_map(|t| t.iter().copied())
            .collect()
    });
    &ALL
}

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    rules().iter().find(|r| r.id == id)
}

/// The rules that can cause `id`'s findings (the cause graph read backwards).
pub fn causes_of(id: &str) -> impl Iterator<Item = &'static Rule> + '_ {
    rules().iter().filter(move |r| r.causes.contains(&id))
}

/// Whether a finding among `present` at least as bad as `min` explains `f`: the one it names, or
/// one whose rule can cause it.
pub fn explained(f: &Finding, present: &[Finding], min: Status) -> bool {
    present.iter().any(|p| {
        p.status >= min
            && (f.caused_by == Some(p.id) || rule(p.id).is_some_and(|r| r.causes.contains(&f.id)))
    })
}

/// A rule's title in `lang`.
pub fn rule_title(rule: &Rule, lang: i18n::Lang) -> &'static str {
    i18n::rule_text(rule.id, lang).map_or(rule.id, |(title, _)| title)
}

/// A rule's explanation in `lang`: what `rocm-probe explain ID` prints — what it means, why it
/// matters, how it is detected.
pub fn rule_explain(rule: &Rule, lang: i18n::Lang) -> &'static str {
    i18n::rule_text(rule.id, lang).map_or(rule.id, |(_, explain)| explain)
}

/// A layer's title in `lang`.
pub fn layer_title(layer: Layer, lang: i18n::Lang) -> &'static str {
    layer.title(lang)
}

/// A layer as prose names it in the current language: its id in English (`hardware`), its title
/// in Chinese, where an English id would be the only English in the sentence.
pub fn layer_name(layer: Layer) -> &'static str {
    match i18n::current() {
        i18n::Lang::En => layer.id(),
        i18n::Lang::Zh => layer_title(layer, i18n::Lang::Zh),
    }
}

/// A status word in `lang` (`PASS`, `通过`).
pub fn status_word(status: Status, lang: i18n::Lang) -> &'static str {
    i18n::status_word(status.id(), lang).unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_dotted_lower_case_and_prefixed_by_their_layer() {
        let mut seen = HashSet::new();
        for r in rules() {
            assert!(seen.insert(r.id), "duplicate {}", r.id);
            let (layer, name) = r.id.split_once('.').expect("dotted");
            assert_eq!(layer, r.layer.id(), "{}", r.id);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                r.id
            );
            assert!(
                rule_explain(r, i18n::Lang::En).len() > 60,
                "{} needs a real explanation",
                r.id
            );
        }
    }

    #[test]
    fn status_weights() {
        assert!(Status::Fail > Status::Warn);
        assert!(Status::Warn > Status::Info);
        assert!(Status::Pass > Status::Skip);
    }
}
