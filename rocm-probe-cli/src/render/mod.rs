//! Output formats; one module per command's text rendering (JSON is serde's).

pub mod agents;
