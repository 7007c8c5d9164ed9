//! Export: other formats and views of a report or a machine — the Prometheus textfile, the
//! Kubernetes NFD feature file, the difference of two reports, the view of a fleet's reports,
//! snapshots and their redaction.

pub mod diff;
pub mod fleet;
pub mod nfd;
pub mod prometheus;
pub mod redact;
pub mod snapshot;
