//! The report: findings grouped by layer, each layer's verdict, the root cause and the exit code
//! (ARCHITECTURE.md §5).

mod cause;
pub mod compat;
pub mod expect;
pub mod output;

use serde::Serialize;

use crate::checks;
use crate::facts::Facts;
use crate::facts::config::Profile;
use crate::finding::{Finding, Layer, Status, rule};
use crate::source::Source;
use crate::{i18n, msg};

/// One layer's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct LayerReport {
    /// 1–9.
    pub number: u8,
    /// `hardware`, `driver`, …
    pub layer: Layer,
    /// The heaviest status among its findings; `skip` when it has none.
    pub status: Status,
    /// Ids of its findings, in order.
    pub findings: Vec<&'static str>,
    /// Set when the layer could not be checked because a lower layer failed.
    pub consequence_of: Option<&'static str>,
    /// Why a layer without findings says nothing.
    pub note: Option<String>,
}

/// The bottom line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Verdict {
    /// `pass`, `warn` or `fail`; `skip` when the verdict is undetermined: no failure, and no GPU
    /// could be checked (WSL, a tree whose GPU nodes are unreadable) — exit 3, never a PASS.
    pub status: Status,
    /// 0 when healthy, else the lowest layer carrying the root cause.
    pub root_layer: u8,
    /// The root-cause finding's id.
    pub root_cause: Option<&'static str>,
    /// What the root-cause finding is about, when it is one thing (a GPU, a library): fleet
    /// outputs name the GPU from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_subject: Option<crate::finding::Subject>,
    /// One plain sentence.
    pub summary: String,
}

/// A few facts for the reader (and for fleet tooling) without the whole fact tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FactsSummary {
    /// Physical GPUs: those in KFD, or on the PCI bus when more are there (`gpus`, a number,
    /// in schema version 1).
    pub gpu_count: usize,
    /// GPU agents (KFD GPU nodes; `agents` in schema version 1).
    pub agent_count: usize,
    /// gfx names in node order.
    pub targets: Vec<String>,
    /// The physical GPUs KFD shows, in index order (`config.gpus` in schema version 1). A GPU on
    /// the bus that amdgpu did not bring up is counted in `gpu_count` but not listed here.
    pub gpus: Vec<crate::facts::config::GpuConfig>,
    /// The node's configuration and its fingerprint, for grouping a fleet and `diff`.
    pub config: crate::facts::config::NodeConfig,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Report {
    /// The profile in force.
    pub profile: Profile,
    /// The bottom line.
    pub verdict: Verdict,
    /// Layers 1–9, bottom-up.
    pub layers: Vec<LayerReport>,
    /// Every finding, bottom-up.
    pub findings: Vec<Finding>,
    /// Key facts.
    pub facts: FactsSummary,
}

/// Options that change what is collected and the verdict.
///
/// Build it from [`Default`] with struct update syntax, so that a field added later keeps its
/// default:
///
/// ```
/// use rocm_probe::facts::config::Profile;
/// use rocm_probe::report::Options;
/// use rocm_probe::{Report, Source};
///
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/mi210-xgmi-8gpu");
/// let source = Source::fixture(dir)?;
/// // Eight Instinct GPUs are detected as a cluster node.
/// assert_eq!(Report::collect(&source, Options::default()).profile, Profile::Cluster);
/// // Judged as a workstation instead: platform tuning weighs less.
/// let options = Options {
///     profile: Some(Profile::Workstation),
///     ..Options::default()
/// };
/// assert_eq!(Report::collect(&source, options).profile, Profile::Workstation);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Force a profile instead of detecting one.
    pub profile: Option<Profile>,
    /// Run the active probes (live machine only).
    pub active: Option<crate::active::ActiveOptions>,
    /// Node expectations (`check --expect`): unmet ones become findings, `policy.ignore`d ids
    /// leave the report.
    pub expect: Option<crate::report::expect::Expectations>,
}

impl Report {
    /// Collects, checks and assembles: the whole `rocm-probe` report of `source`.
    ///
    /// ```
    /// use rocm_probe::report::Options;
    /// use rocm_probe::{Layer, Report, Source, Status};
    ///
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/library-xnack-plus-only");
    /// let report = Report::collect(&Source::fixture(dir)?, Options::default());
    /// // The verdict names the deepest cause; every layer has its own status.
    /// assert_eq!(report.verdict.root_cause, Some("libraries.code-object-needs-feature-change"));
    /// let libraries = &report.layers[Layer::Libraries as usize - 1];
    /// assert_eq!(libraries.status, Status::Fail);
    /// assert_eq!(report.layers[0].status, Status::Pass);
    /// // The finding says what to do, as copyable steps.
    /// let finding = report
    ///     .findings
    ///     .iter()
    ///     .find(|f| f.id == "libraries.code-object-needs-feature-change")
    ///     .unwrap();
    /// assert_eq!(finding.remedy_steps[0].command.as_deref(), Some("export HSA_XNACK=1"));
    /// assert_eq!(report.exit_code(false), 1);
    /// // The same report, serialized, is the body of `rocm-probe --json`.
    /// let json = serde_json::to_value(&report)?;
    /// assert_eq!(json["verdict"]["status"], "fail");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn collect(source: &Source, options: Options) -> Self {
        let collect = crate::facts::CollectOptions {
            active: options.active.clone(),
        };
        Self::from_facts(&Facts::collect_with(source, &collect), options)
    }

    /// Checks and assembles; pure.
    pub fn from_facts(facts: &Facts, options: Options) -> Self {
        let profile = options
            .profile
            .unwrap_or_else(|| Profile::detect(facts.inventory.as_ref()));
        let mut findings = checks::run(facts, profile);
        if let Some(e) = &options.expect {
            let unmet = e.check(facts, &findings);
            findings.extend(unmet);
            findings.retain(|f| !e.policy.ignore.iter().any(|i| i == f.id));
        }
        findings.sort_by_key(|f| f.layer);
        cause::link(&mut findings);
        cause::log_command(
            &mut findings,
            facts.kernel_log.command(facts.identity.as_ref()).command(),
        );

        let no_gpu = facts
            .inventory
            .as_ref()
            .is_none_or(|i| i.gpu_agents().next().is_none());
        let root = cause::root(&findings);
        // The failure at the root stops the layers above it only when nothing can run.
        let blocking = root.map(|r| &findings[r.symptom]).filter(|s| {
            s.status == Status::Fail && (no_gpu || crate::checks::rules::BLOCKING.contains(&s.id))
        });
        let blocking = blocking.map(|s| (s.id, s.layer));
        if let Some((id, layer)) = blocking {
            // What the device did above a failure that blocks it follows from that failure;
            // what the files say there (a CUDA PyTorch, a wrong override, two mixed releases)
            // is a fault of its own, kept with its own remedy.
            for f in &mut findings {
                if f.layer > layer
                    && f.status >= Status::Warn
                    && f.caused_by.is_none()
                    && crate::checks::rules::observed(f.id)
                {
                    f.caused_by = Some(id);
                }
            }
        }
        let layers = Layer::ALL
            .iter()
            .map(|&layer| {
                let own: Vec<&Finding> = findings.iter().filter(|f| f.layer == layer).collect();
                let blocked = blocking.filter(|(_, l)| *l < layer).map(|(id, _)| id);
                LayerReport {
                    number: layer.number(),
                    layer,
                    status: own.iter().map(|f| f.status).max().unwrap_or(Status::Skip),
                    findings: own.iter().map(|f| f.id).collect(),
                    consequence_of: blocked,
                    note: match (own.is_empty(), blocked) {
                        (true, Some(id)) => Some(msg!("report.layer-follows", id)),
                        (true, None) => Some(crate::checks::empty_layer_note(layer, facts)),
                        _ => None,
                    },
                }
            })
            .collect();
        let verdict = match root {
            Some(r) if r.status(&findings) == Status::Fail || !no_gpu => {
                let (cause, symptom) = (&findings[r.cause], &findings[r.symptom]);
                Verdict {
                    status: r.status(&findings),
                    root_layer: cause.layer.number(),
                    root_cause: Some(cause.id),
                    root_subject: cause.subject.clone(),
                    summary: if r.cause == r.symptom {
                        cause.summary.clone()
                    } else {
                        msg!(
                            "report.cause-hence",
                            cause = cause.summary,
                            symptom = symptom.summary
                        )
                    },
                }
            }
            _ if no_gpu => undetermined(root.map(|r| r.cause), &findings),
            _ => Verdict {
                status: Status::Pass,
                root_layer: 0,
                root_cause: None,
                root_subject: None,
                summary: msg!("report.healthy"),
            },
        };
        let inv = facts.inventory.as_ref();
        let gpus = crate::facts::config::gpus(facts);
        let facts = FactsSummary {
            // The bus shows the GPUs amdgpu did not bring up too (layer 1 counts them).
            gpu_count: inv
                .map_or(0, |i| i.gpus.len())
                .max(facts.pci.as_ref().map_or(0, |p| p.gpus.len())),
            agent_count: inv.map_or(0, |i| i.gpu_agents().count()),
            targets: inv.map_or_else(Vec::new, |i| i.targets(false)),
            config: crate::facts::config::NodeConfig::from_facts(facts, &gpus),
            gpus,
        };
        Self {
            profile,
            verdict,
            layers,
            findings,
            facts,
        }
    }
}

/// No failure, and no GPU agent to check: the probe cannot tell whether the machine works. The
/// verdict names why — the warning that hid the GPUs, else the lowest skipped check (WSL's
/// paravirtual GPU) — and is `skip`, exit 3: never a PASS with zero GPUs.
fn undetermined(root: Option<usize>, findings: &[Finding]) -> Verdict {
    let why = root.or_else(|| {
        findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.status == Status::Skip && f.layer <= Layer::Driver)
            .min_by_key(|(i, f)| (f.layer, *i))
            .map(|(i, _)| i)
    });
    match why {
        Some(i) => Verdict {
            status: Status::Skip,
            root_layer: findings[i].layer.number(),
            root_cause: Some(findings[i].id),
            root_subject: findings[i].subject.clone(),
            summary: msg!("report.undetermined", why = findings[i].summary),
        },
        None => Verdict {
            status: Status::Skip,
            root_layer: 0,
            root_cause: None,
            root_subject: None,
            summary: msg!("report.undetermined-nothing"),
        },
    }
}

impl Report {
    /// One line of at most `width` characters naming the root cause, for places that show one
    /// line: Node Problem Detector's condition message, Slurm's `Reason=`, a dashboard cell.
    ///
    /// Every line has one form, `STATUS ID: TEXT`, so that its first two words are the facts a
    /// script wants: `FAIL driver.kfd-permission-denied: This user cannot open /dev/kfd …`, and
    /// a healthy machine `PASS hardware.gpus-found: 8 GPUs, 8 agents: gfx90a` (the finding
    /// that counted them; `SKIP: …` alone when an undetermined verdict names no finding).
    /// Within the width the prose gives way, not the facts: the verdict's "cause — hence:
    /// symptom", else the root cause's own summary (which starts with its GPU's name), else
    /// that summary cut between words, with `…`.
    pub fn summary(&self, width: usize) -> String {
        let status = self.verdict.status.word();
        let (head, bodies) = match self.verdict.root_cause {
            Some(id) => {
                let cause = self
                    .findings
                    .iter()
                    .find(|f| f.id == id && f.subject == self.verdict.root_subject);
                let mut bodies = vec![self.verdict.summary.clone()];
                if let Some(cause) = cause {
                    bodies.push(cause.summary.clone());
                }
                (format!("{status} {id}"), bodies)
            }
            None if self.verdict.status == Status::Skip => {
                (status.to_owned(), vec![self.verdict.summary.clone()])
            }
            None => {
                let mut targets = self.facts.targets.clone();
                targets.dedup();
                let (gpus, agents) = (self.facts.gpu_count, self.facts.agent_count);
                let gpus = if gpus == 1 {
                    msg!("report.summary-gpus-one", n = gpus)
                } else {
                    msg!("report.summary-gpus", n = gpus)
                };
                let agents = if agents == 1 {
                    msg!("report.summary-agents-one", n = agents)
                } else {
                    msg!("report.summary-agents", n = agents)
                };
                let counts = msg!("report.summary-pass", gpus, agents);
                let body = if targets.is_empty() {
                    counts
                } else {
                    msg!(
                        "report.summary-targets",
                        line = counts,
                        targets = i18n::list(&targets)
                    )
                };
                let found = crate::checks::rules::GPUS_FOUND.id;
                let head = if self.findings.iter().any(|f| f.id == found) {
                    format!("{status} {found}")
                } else {
                    status.to_owned()
                };
                (head, vec![body])
            }
        };
        // One line, whatever the texts held.
        let flat = |t: &str| -> String {
            t.chars()
                .map(|c| {
                    if crate::source::escape::is_hostile(c) {
                        ' '
                    } else {
                        c
                    }
                })
                .collect()
        };
        let head = flat(&head);
        let lines: Vec<String> = bodies
            .iter()
            .map(|b| msg!("report.summary-line", head, text = flat(b)))
            .collect();
        if let Some(line) = lines.iter().find(|l| l.chars().count() <= width) {
            return line.clone();
        }
        // Nothing fits: the root cause's own summary, cut between words — never inside a
        // value (a number, path or id cut in half is a wrong value): at a space, or next to a
        // non-ASCII character (Chinese has no spaces between words; values are ASCII runs).
        let head_len = head.chars().count();
        let line = lines.get(1).or(lines.first()).cloned().unwrap_or(head);
        let chars: Vec<char> = line.chars().take(width).collect();
        let max = width.saturating_sub(1).min(chars.len());
        let boundary = |i: usize| {
            chars.get(i).is_some_and(|c| *c == ' ' || !c.is_ascii()) || !chars[i - 1].is_ascii()
        };
        let end = (head_len + 1..=max)
            .rev()
            .find(|&i| boundary(i))
            .unwrap_or(max);
        let cut: String = chars[..end.min(chars.len())].iter().collect();
        let mut cut = cut
            .trim_end_matches([' ', ',', ';', ':', '(', '—', '，', '；', '：'])
            .to_owned();
        cut.push('…');
        cut
    }

    /// The problems (warnings and failures) the root cause does not explain: faults of their
    /// own, each with its own remedy, that remain after the root cause is fixed.
    pub fn separate_problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| {
                f.status >= Status::Warn
                    && f.caused_by.is_none()
                    && Some(f.id) != self.verdict.root_cause
            })
            .count()
    }

    /// The exit code when `worst` is the worst status that still passes (a conformance file's
    /// `policy.worst`): 1 when a finding is worse, else 0.
    pub fn exit_code_allowing(&self, worst: Status) -> u8 {
        u8::from(self.findings.iter().any(|f| f.status > worst))
    }

    /// ARCHITECTURE.md §5: 0 without a failure, 1 with one (or with a warning under `--strict`),
    /// 3 when the verdict is undetermined (no failure, and no GPU could be checked).
    pub fn exit_code(&self, strict: bool) -> u8 {
        if self.verdict.status == Status::Skip {
            return 3;
        }
        let worst = self.findings.iter().map(|f| f.status).max();
        match worst {
            Some(Status::Fail) => 1,
            Some(Status::Warn) if strict => 1,
            _ => 0,
        }
    }

    /// The advice to follow first: warnings and failures nothing in the report explains, whose
    /// remedies are the ones to give (markdown's "What to do"; a consequence's remedy is its
    /// cause's).
    pub fn advice(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.status >= Status::Warn && f.caused_by.is_none())
    }

    /// The cause `f` defers its remedy to: the finding it follows from, when that one gives a
    /// remedy (`sudo modprobe amdgpu` is no advice when Secure Boot refuses the module).
    pub fn remedy_cause(&self, f: &Finding) -> Option<&'static str> {
        f.caused_by
            .and_then(|c| self.findings.iter().find(|x| x.id == c))
            .filter(|c| c.remedy.is_some())
            .map(|c| c.id)
    }

    /// Every emitted id is declared (a test runs this over every fixture).
    pub fn undeclared_ids(&self) -> Vec<&'static str> {
        self.findings
            .iter()
            .filter(|f| rule(f.id).is_none_or(|r| r.layer != f.layer))
            .map(|f| f.id)
            .collect()
    }
}
