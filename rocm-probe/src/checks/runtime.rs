//! Layer 4: ROCr and HIP as installed, and the environment that steers them.

use crate::facts::Facts;
use crate::finding::Finding;

/// Layer 4 findings; `below` are the findings of layers 1–3.
pub fn check(_f: &Facts, _below: &[Finding]) -> Vec<Finding> {
    Vec::new()
}
