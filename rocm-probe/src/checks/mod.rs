//! Checks: pure functions from facts to findings, one module per layer. No I/O here.

pub mod active;
pub mod compiler;
pub mod driver;
pub mod frameworks;
pub mod hardware;
pub mod libraries;
pub mod runtime;
pub mod thunk;
pub mod tools;
pub mod workloads;

use crate::facts::Facts;
use crate::facts::config::Profile;
use crate::finding::Finding;

/// Runs every check, bottom-up. The profile sets the severity of platform-tuning rules.
pub fn run(facts: &Facts, profile: Profile) -> Vec<Finding> {
    let mut findings = hardware::check(facts);
    let driver = driver::check(facts, &findings, profile);
    findings.extend(driver);
    findings.extend(active::driver(facts));
    let thunk = thunk::check(facts, &findings);
    findings.extend(thunk);
    findings.extend(active::thunk(facts));
    let runtime = runtime::check(facts, &findings);
    findings.extend(runtime);
    findings.extend(active::runtime(facts));
    let libraries = libraries::check(facts, &findings);
    findings.extend(libraries);
    let compiler = compiler::check(facts, &findings);
    findings.extend(compiler);
    let frameworks = frameworks::check(facts, &findings);
    findings.extend(frameworks);
    let tools = tools::check(facts, &findings);
    findings.extend(tools);
    let workloads = workloads::check(facts, &findings);
    findings.extend(workloads);
    findings
}

/// Evidence of a container or WSL marker, its value in the report's language.
pub(crate) fn marker_evidence((source, value): (&String, &String)) -> crate::finding::Evidence {
    let value = if value == crate::facts::platform::PRESENT {
        crate::msg!("facts.present")
    } else {
        value.clone()
    };
    crate::finding::Evidence::new(source.clone(), value)
}

/// A group of input problems as evidence: the path, its messages and its count.
pub(crate) fn problem_evidence(
    g: &crate::source::problem::ProblemGroup,
) -> crate::finding::Evidence {
    let mut e = crate::finding::Evidence::new(g.path.clone(), g.line());
    e.count = Some(g.count);
    e
}

/// Evidence for grouped problems: one item per file for the first
/// [`crate::source::problem::FILES_LISTED`] files, then one that counts the rest.
pub(crate) fn problems_evidence(
    groups: &[crate::source::problem::ProblemGroup],
) -> Vec<crate::finding::Evidence> {
    use crate::source::problem::FILES_LISTED;
    let mut out: Vec<crate::finding::Evidence> = groups
        .iter()
        .take(FILES_LISTED)
        .map(problem_evidence)
        .collect();
    if let Some(rest) = groups.len().checked_sub(FILES_LISTED).filter(|&n| n > 0) {
        out.push(crate::finding::Evidence::new(
            crate::msg!("facts.problems-more-files-source"),
            crate::msg!("facts.problems-more-files", count = rest),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped_problem_evidence_keeps_the_count() {
        let all: Vec<crate::source::problem::Problem> = (0..1001)
            .map(|i| crate::source::problem::Problem::new("/p", format!("line {i}: bad")))
            .collect();
        let groups = crate::source::problem::group(&all);
        assert_eq!(super::problems_evidence(&groups)[0].count, Some(1001));
    }
}
