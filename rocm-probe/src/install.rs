//! ROCm installs on disk (`/opt/rocm*`, a distribution's `/usr`), their versions, and what a
//! process would load.

use serde::Serialize;

use crate::problem::Problem;
use crate::source::Source;

/// What is installed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InstallFacts {}

impl InstallFacts {
    /// Reads the installs through the source.
    pub fn collect(_source: &Source, _problems: &mut Vec<Problem>) -> Self {
        Self {}
    }
}
