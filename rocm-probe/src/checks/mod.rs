//! Checks: pure functions from facts to findings, one module per layer. No I/O here.

pub mod driver;
pub mod hardware;
pub mod runtime;
pub mod thunk;

use crate::facts::Facts;
use crate::finding::Finding;

/// Runs every check, bottom-up.
pub fn run(facts: &Facts) -> Vec<Finding> {
    let mut findings = hardware::check(facts);
    let driver = driver::check(facts, &findings);
    findings.extend(driver);
    let thunk = thunk::check(facts, &findings);
    findings.extend(thunk);
    let runtime = runtime::check(facts, &findings);
    findings.extend(runtime);
    findings
}
