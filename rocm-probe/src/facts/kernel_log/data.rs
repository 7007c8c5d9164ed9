//! The kernel-log signatures, `rocm-probe/data/kernel_log.toml`: parsed and checked here, by the
//! build script (which turns them into the `SIGNATURES` table compiled into the crate) and by
//! the crate's own tests. Depends on `toml` and std only, because the build script includes this
//! file as a module. The file's header documents the format.

use crate::data_file;

/// The kinds a row may name (`facts::kernel_log::Kind`, spelled as in the file).
pub const KINDS: [&str; 17] = [
    "probe-failed",
    "init-failed",
    "ip-init-failed",
    "discovery-failed",
    "firmware-load-failed",
    "kfd-atomics-rejected",
    "ring-timeout",
    "gpu-reset",
    "mes-no-response",
    "page-fault",
    "ras-uncorrectable",
    "psp-failed",
    "smu-failed",
    "kfd-not-supported",
    "kfd-add-failed",
    "kernel-warning",
    "kernel-oops",
];

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// One of [`KINDS`].
    pub kind: String,
    /// Substrings that must all appear in a line, in this order.
    pub all: Vec<String>,
    /// Where the line's meaning is documented (kernel source, a public report quoting it).
    pub source: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, in the file's order (the first that matches a line wins).
    pub rows: Vec<Row>,
}

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&["kind", "all", "source"])?;
    Ok(Row {
        kind: f.one_of("kind", &KINDS)?,
        all: f.strings("all", "a non-empty pattern", |s| !s.is_empty())?,
        source: f.source()?,
    })
}

/// Parses and checks the file: every row has a known kind, patterns and a source.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "kernel-log data", "signature", row)?;
    Ok(Data { as_of, rows })
}
