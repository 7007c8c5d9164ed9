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
use crate::finding::Finding;
use crate::report::Profile;

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
