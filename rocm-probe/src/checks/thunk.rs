//! Layer 3: libhsakmt.

use crate::facts::Facts;
use crate::finding::Finding;

/// Layer 3 findings; `below` are the findings of layers 1–2.
pub fn check(_f: &Facts, _below: &[Finding]) -> Vec<Finding> {
    Vec::new()
}
