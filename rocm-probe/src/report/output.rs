//! The envelope every JSON document carries.

use serde::Serialize;

use crate::source::{Source, SourceKind};

/// Version of the JSON field layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Which tool wrote the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tool {
    /// Always `rocm-probe`.
    pub name: &'static str,
    /// The crate version.
    pub version: &'static str,
}

/// A JSON document: the common header plus the command's body, flattened into one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Document<T> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// This tool.
    pub tool: Tool,
    /// Live or fixture.
    pub source: SourceKind,
    /// The command's own fields.
    #[serde(flatten)]
    pub body: T,
}

impl<T> Document<T> {
    /// Wraps a body for `source`.
    pub fn new(source: &Source, body: T) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "rocm-probe",
                version: env!("CARGO_PKG_VERSION"),
            },
            source: source.kind(),
            body,
        }
    }
}

/// The JSON Schema of `report --json`, generated from the types; `schema/report.schema.json`
/// is this, committed, and a test keeps the two equal.
pub fn report_schema() -> schemars::Schema {
    schemars::schema_for!(Document<crate::report::Report>)
}
