//! The cause graph applied to one report: which present finding explains which, and the deepest
//! cause behind the worst symptom (ARCHITECTURE.md §5). The graph itself is declared with the
//! rules (`Rule::causes`); a check that knows a more specific cause sets `caused_by` itself,
//! and that link is kept.

use crate::finding::{Finding, Status, rule};

/// Links every finding that is not a pass and has no cause yet to a present finding whose rule
/// can cause it: the lowest such finding (by layer, then report order). Only findings that say
/// something is wrong or notable (info and worse) are causes.
pub(super) fn link(findings: &mut [Finding]) {
    for i in 0..findings.len() {
        if findings[i].caused_by.is_some() || findings[i].status == Status::Pass {
            continue;
        }
        let id = findings[i].id;
        let cause = findings
            .iter()
            .enumerate()
            .filter(|&(j, c)| {
                j != i
                    && c.status >= Status::Info
                    && rule(c.id).is_some_and(|r| r.causes.contains(&id))
                    // A check may have linked the other way (amdgpu is absent because every
                    // GPU is bound elsewhere): no link closes a loop.
                    && !leads_to(findings, c.id, id)
            })
            .min_by_key(|&(j, c)| (c.layer, j))
            .map(|(_, c)| c.id);
        findings[i].caused_by = cause;
    }
}

/// Every remedy that reads the kernel log reads it the way that works for this user
/// (`facts::kernel_log::LogCommand`: `sudo dmesg`, plain `dmesg` for root or without
/// `dmesg_restrict`, `journalctl -k -b` for `adm`/`systemd-journal`): the commands of
/// `read-log` steps, and the `dmesg` code spans of remedy sentences, as the checks wrote them.
pub(super) fn log_command(findings: &mut [Finding], command: &str) {
    use crate::finding::Action;
    let rewrite = |text: &str| -> String {
        text.replace("`sudo dmesg", "`dmesg")
            .replace("`dmesg", &format!("`{command}"))
    };
    for f in findings.iter_mut() {
        for step in f
            .remedy_steps
            .iter_mut()
            .filter(|s| s.action == Action::ReadLog)
        {
            if let Some(c) = step.command.as_mut() {
                let rest = c
                    .strip_prefix("sudo dmesg")
                    .or_else(|| c.strip_prefix("dmesg"));
                if let Some(rest) = rest {
                    *c = format!("{command}{rest}");
                }
            }
        }
        if let Some(r) = f.remedy.as_mut() {
            if r.contains("`dmesg") || r.contains("`sudo dmesg") {
                *r = rewrite(r);
            }
        }
    }
}

/// Whether following `caused_by` links from `from` reaches `to`.
fn leads_to(findings: &[Finding], from: &str, to: &str) -> bool {
    let mut at = from;
    // At most one step per finding: a longer walk is going round.
    for _ in 0..findings.len() {
        let Some(next) = findings
            .iter()
            .find(|f| f.id == at)
            .and_then(|f| f.caused_by)
        else {
            return false;
        };
        if next == to {
            return true;
        }
        at = next;
    }
    true
}

/// Where the verdict comes from: the worst symptom and the deepest present cause behind it
/// (the same finding when nothing explains the symptom).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Root {
    /// Index of the deepest cause present.
    pub cause: usize,
    /// Index of the symptom: the lowest failure (else the lowest warning), or the first finding
    /// as bad up its chain of causes.
    pub symptom: usize,
}

impl Root {
    /// The verdict's status: the symptom's (a warning that explains a failure leaves it a failure).
    pub fn status(&self, findings: &[Finding]) -> Status {
        findings[self.symptom].status
    }
}

/// The root of a report: the symptom, then its chain of causes followed to the end.
pub(super) fn root(findings: &[Finding]) -> Option<Root> {
    // Among warnings, one of something that happened (`checks::rules::EVENTS`) comes before one
    // of a state, whatever their layers.
    let state = |f: &Finding| !crate::checks::rules::EVENTS.contains(&f.id);
    let symptom = [Status::Fail, Status::Warn]
        .into_iter()
        .find_map(|status| {
            findings
                .iter()
                .enumerate()
                .filter(|(_, f)| f.status == status)
                .min_by_key(|(i, f)| (status == Status::Warn && state(f), f.layer, *i))
                .map(|(i, _)| i)
        })?;
    let worst = findings[symptom].status;
    let (mut symptom, mut cause) = (symptom, symptom);
    // At most one step per finding: a chain through the report cannot be longer.
    for _ in 0..findings.len() {
        let Some(next) = findings[cause].caused_by.and_then(|id| {
            findings
                .iter()
                .position(|f| f.id == id && f.status >= Status::Info)
        }) else {
            break;
        };
        if next == cause {
            break;
        }
        cause = next;
        // The symptom named is the first of the chain as bad as the worst: "amdgpu is not
        // loaded", not the unbound GPU that follows from it.
        if findings[cause].status == worst {
            symptom = cause;
        }
    }
    Some(Root { cause, symptom })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{
        AMDGPU_NOT_LOADED, GPU_NOT_BOUND, KFD_READY, RAS_UNCORRECTABLE, SECURE_BOOT,
    };

    #[test]
    fn log_remedies_take_the_users_form() {
        use crate::finding::{Action, RemedyStep};
        let make = || {
            vec![
                GPU_NOT_BOUND
                    .finding("x")
                    .remedy("Check `dmesg | grep kfd`, or `sudo dmesg | grep -i amdgpu`.")
                    .step(RemedyStep::run(
                        Action::ReadLog,
                        "kernel log",
                        "sudo dmesg | grep -i amdgpu",
                        "read",
                    ))
                    .step(RemedyStep::run(
                        Action::ReadLog,
                        "bad pages",
                        "amd-smi bad-pages",
                        "pages",
                    )),
            ]
        };
        let mut f = make();
        log_command(&mut f, "journalctl -k -b");
        assert_eq!(
            f[0].remedy.as_deref(),
            Some("Check `journalctl -k -b | grep kfd`, or `journalctl -k -b | grep -i amdgpu`.")
        );
        assert_eq!(
            f[0].remedy_steps[0].command.as_deref(),
            Some("journalctl -k -b | grep -i amdgpu")
        );
        assert_eq!(
            f[0].remedy_steps[1].command.as_deref(),
            Some("amd-smi bad-pages")
        );
        let mut f = make();
        log_command(&mut f, "dmesg");
        assert_eq!(
            f[0].remedy_steps[0].command.as_deref(),
            Some("dmesg | grep -i amdgpu")
        );
        let mut f = make();
        log_command(&mut f, "sudo dmesg");
        assert_eq!(
            f[0].remedy.as_deref(),
            Some("Check `sudo dmesg | grep kfd`, or `sudo dmesg | grep -i amdgpu`.")
        );
    }

    /// Held-out round 10: an observed GPU hang outranks a lower layer's warning of a state (the
    /// GTT cap); without the event, the layer order decides again.
    #[test]
    fn a_warning_of_an_event_comes_before_a_lower_warning_of_a_state() {
        use crate::finding::{APU_MEMORY_CAPPED, GPU_HANG};
        let findings = vec![
            APU_MEMORY_CAPPED.finding_with(Status::Warn, "capped"),
            GPU_HANG.finding("hang"),
        ];
        let r = root(&findings).unwrap();
        assert_eq!(findings[r.symptom].id, GPU_HANG.id);
        let findings = vec![
            APU_MEMORY_CAPPED.finding_with(Status::Warn, "capped"),
            SECURE_BOOT.finding("state"),
        ];
        let r = root(&findings).unwrap();
        assert_eq!(findings[r.symptom].id, APU_MEMORY_CAPPED.id);
    }

    #[test]
    fn a_warning_that_causes_a_failure_is_the_root_and_the_failure_its_symptom() {
        let mut findings = vec![
            GPU_NOT_BOUND
                .finding("GPU not bound")
                .caused_by(&AMDGPU_NOT_LOADED),
            SECURE_BOOT.finding("Secure Boot"),
            AMDGPU_NOT_LOADED.finding("amdgpu not loaded"),
        ];
        link(&mut findings);
        assert_eq!(findings[2].caused_by, Some(SECURE_BOOT.id));
        assert_eq!(findings[1].caused_by, None);
        let root = root(&findings).unwrap();
        assert_eq!(findings[root.cause].id, SECURE_BOOT.id);
        assert_eq!(root.status(&findings), Status::Fail);
        assert_eq!(findings[root.symptom].id, AMDGPU_NOT_LOADED.id);
    }

    #[test]
    fn findings_the_graph_does_not_join_stay_apart() {
        let mut findings = vec![
            RAS_UNCORRECTABLE.finding("RAS"),
            SECURE_BOOT.finding("Secure Boot"),
            KFD_READY.finding("ready"),
        ];
        link(&mut findings);
        assert!(findings.iter().all(|f| f.caused_by.is_none()));
        let root = root(&findings).unwrap();
        assert_eq!((root.cause, root.symptom), (0, 0));
    }

    #[test]
    fn a_link_a_check_made_the_other_way_is_not_closed_into_a_loop() {
        // Every GPU bound to another driver: amdgpu's absence follows from that, so the graph's
        // "amdgpu not loaded → GPU not bound" must not be added back.
        let mut findings = vec![
            GPU_NOT_BOUND.finding("bound to radeon"),
            AMDGPU_NOT_LOADED
                .finding("amdgpu not loaded")
                .caused_by(&GPU_NOT_BOUND),
        ];
        link(&mut findings);
        assert_eq!(findings[0].caused_by, None);
        let root = root(&findings).unwrap();
        assert_eq!(findings[root.cause].id, GPU_NOT_BOUND.id);
    }

    #[test]
    fn a_pass_is_never_a_cause_nor_linked() {
        let mut findings = vec![
            AMDGPU_NOT_LOADED.finding_with(Status::Pass, "odd"),
            GPU_NOT_BOUND.finding("GPU not bound"),
        ];
        link(&mut findings);
        assert_eq!(findings[1].caused_by, None);
    }

    /// Every edge names a declared rule other than itself, no rule is reached from itself (the
    /// verdict's walk up the chain ends), and a pass causes nothing.
    #[test]
    fn the_cause_graph_names_declared_rules_and_has_no_cycle() {
        use crate::finding::rules;
        fn reaches(from: &str, to: &str, depth: usize) -> bool {
            depth < rules().len()
                && rule(from).is_some_and(|r| {
                    r.causes
                        .iter()
                        .any(|&c| c == to || reaches(c, to, depth + 1))
                })
        }
        let mut edges = 0;
        for r in rules() {
            for c in r.causes {
                assert!(rule(c).is_some(), "{} causes undeclared {c}", r.id);
                assert_ne!(*c, r.id);
                edges += 1;
            }
            assert!(r.causes.is_empty() || r.status != Status::Pass, "{}", r.id);
            assert!(!reaches(r.id, r.id, 0), "{} is its own cause", r.id);
        }
        assert!(edges >= 20, "{edges} edges");
    }
}
