//! Export: other formats and views of a report or a machine — the Prometheus textfile, the
//! Kubernetes NFD feature file, the difference of two reports, snapshots and their redaction.

pub mod diff;
pub mod nfd;
pub mod prometheus;
pub mod redact;
pub mod snapshot;
