//! The envelope every JSON document carries.

use serde::Serialize;

use crate::source::{Source, SourceKind};

/// Version of the JSON field layout; bumped on any incompatible change. `docs/json-changelog.md`
/// lists every change since version 1; readers of reports (`diff`, `fleet`) read both.
pub const SCHEMA_VERSION: u32 = 2;

/// The versions of report documents this version reads: its own and version 1, which
/// [`crate::report::compat::upgrade`] turns into its own shape (a fleet runs both during a
/// roll-out).
pub const READABLE_VERSIONS: [u64; 2] = [1, 2];

/// The stand-in for the host name when the document is redacted: the one `snapshot` and the
/// markdown/HTML reports give the first host name they meet.
pub const REDACTED_HOST: &str = "host";

/// Where the host name is read, in order: the kernel's, then the file.
const HOST_NAME_FILES: [&str; 2] = ["/proc/sys/kernel/hostname", "/etc/hostname"];

/// Host names are at most 253 characters (RFC 1035); anything longer is not one.
const HOST_NAME_MAX: usize = 253;

/// Which tool wrote the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tool {
    /// Always `rocm-probe`.
    pub name: &'static str,
    /// The crate version.
    pub version: &'static str,
}

impl Tool {
    /// This tool.
    pub fn this() -> Self {
        Self {
            name: "rocm-probe",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// The machine the document describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SourceInfo {
    /// Live or fixture.
    #[serde(flatten)]
    pub kind: SourceKind,
    /// The node's host name (the kernel's, else `/etc/hostname`): [`REDACTED_HOST`] unless the
    /// document was asked for unredacted (`--no-redact`), `null` when none could be read.
    pub host: Option<String>,
}

/// A JSON document: the common header plus the command's body, flattened into one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Document<T> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// This tool.
    pub tool: Tool,
    /// The machine.
    pub source: SourceInfo,
    /// When the document was made: RFC 3339, UTC, whole seconds (`2026-12-03T10:00:00Z`).
    pub generated_at: String,
    /// The command's own fields.
    #[serde(flatten)]
    pub body: T,
}

impl<T> Document<T> {
    /// Wraps a body for `source`, its host name redacted.
    pub fn new(source: &Source, body: T) -> Self {
        Self::with_redaction(source, body, true)
    }

    /// Wraps a body for `source`; `redact: false` keeps the real host name (`--no-redact`).
    pub fn with_redaction(source: &Source, body: T, redact: bool) -> Self {
        let host = host_name(source).map(|h| if redact { REDACTED_HOST.to_owned() } else { h });
        Self {
            schema_version: SCHEMA_VERSION,
            tool: Tool::this(),
            source: SourceInfo {
                kind: source.kind(),
                host,
            },
            generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
            body,
        }
    }
}

/// The node's host name, read through the source: a fixture's own files, never this machine's.
/// Empty, oversized or non-printable contents are no host name.
fn host_name(source: &Source) -> Option<String> {
    HOST_NAME_FILES.iter().find_map(|path| {
        let bytes = source.root().read(path).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let name = text.trim();
        (!name.is_empty()
            && name.len() <= HOST_NAME_MAX
            && name.chars().all(|c| c.is_ascii_graphic()))
        .then(|| name.to_owned())
    })
}

/// The JSON Schema of `report --json`, generated from the types; `schema/report.schema.json`
/// is this, committed, and a test keeps the two equal.
pub fn report_schema() -> schemars::Schema {
    schemars::schema_for!(Document<crate::report::Report>)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source_with(path: &str, bytes: &[u8]) -> (tempfile::TempDir, Source) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
        let source = Source::fixture(dir.path()).unwrap();
        (dir, source)
    }

    #[test]
    fn host_name_is_redacted_unless_asked_and_bad_names_are_none() {
        let (_d, source) = source_with("proc/sys/kernel/hostname", b"gpu-node-17\n");
        assert_eq!(
            Document::new(&source, ()).source.host.as_deref(),
            Some("host")
        );
        let doc = Document::with_redaction(&source, (), false);
        assert_eq!(doc.source.host.as_deref(), Some("gpu-node-17"));
        assert!(doc.generated_at.ends_with('Z') && doc.generated_at.len() == 20);
        for bad in [&b"\n"[..], b"a\x1b[31mb", &[b'a'; 300]] {
            let (_d, source) = source_with("etc/hostname", bad);
            assert_eq!(
                Document::with_redaction(&source, (), false).source.host,
                None
            );
        }
        let (_d, source) = source_with("etc/hostname", b"from-etc");
        let doc = Document::with_redaction(&source, (), false);
        assert_eq!(doc.source.host.as_deref(), Some("from-etc"));
    }
}
