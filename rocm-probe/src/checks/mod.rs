//! Checks: pure functions from facts to findings, one module per layer. No I/O here.

pub mod driver;
pub mod hardware;

use crate::facts::Facts;
use crate::finding::Finding;

/// Runs every check, bottom-up.
pub fn run(facts: &Facts) -> Vec<Finding> {
    let mut findings = hardware::check(facts);
    findings.extend(driver::check(facts, &findings));
    findings
}
