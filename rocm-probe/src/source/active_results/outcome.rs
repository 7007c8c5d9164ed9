//! The outcomes of active probe steps as data. Fixtures record them as strings in
//! `fixture.toml`'s `[active]` table (`kfd_open = "EACCES"`, `result = "timeout"`,
//! `load_error = "not installed: /opt/rocm/lib/libhsa-runtime64.so.1"`), and checks decide on
//! the variants, never on the spelling. Every variant keeps the recorded text, so a fixture
//! round-trips byte for byte; a spelling the probe does not know stays `Other`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Opening `/dev/kfd` read-write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum KfdOpen {
    /// Opened.
    Ok,
    /// Refused, with the errno name (`EACCES`, `ENOENT`, …).
    Errno(String),
}

impl From<String> for KfdOpen {
    fn from(s: String) -> Self {
        if s == "ok" { Self::Ok } else { Self::Errno(s) }
    }
}

impl From<KfdOpen> for String {
    fn from(o: KfdOpen) -> Self {
        o.to_string()
    }
}

impl fmt::Display for KfdOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ok => f.write_str("ok"),
            Self::Errno(e) => f.write_str(e),
        }
    }
}

/// Why a library (libhsakmt, ROCr, HIP) was not loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum LoadError {
    /// The file named does not exist.
    NotInstalledAt(String),
    /// No file of that soname in the loader's search path (`or_install`: nor in a ROCm
    /// install).
    NotInstalledAnywhere {
        /// The soname looked for.
        library: String,
        /// Whether the installs were searched too.
        or_install: bool,
    },
    /// The library loaded but lacks entry points the probe calls (`hsa_init or hsa_shut_down`).
    EntryPointsMissing(String),
    /// The dynamic loader's own message (a file that exists but does not load).
    Other(String),
}

const NOT_INSTALLED: &str = "not installed: ";
const NOWHERE: &str = " in the loader's search path";
const OR_INSTALL: &str = " or an install";
const ENTRY_POINTS_MISSING: &str = " missing from the library";

impl LoadError {
    /// Whether the library is simply absent (a different finding from one that fails to load).
    pub fn is_not_installed(&self) -> bool {
        matches!(
            self,
            Self::NotInstalledAt(_) | Self::NotInstalledAnywhere { .. }
        )
    }
}

impl From<String> for LoadError {
    fn from(s: String) -> Self {
        if let Some(functions) = s.strip_suffix(ENTRY_POINTS_MISSING) {
            return Self::EntryPointsMissing(functions.to_owned());
        }
        let Some(rest) = s.strip_prefix(NOT_INSTALLED) else {
            return Self::Other(s);
        };
        let nowhere = rest.strip_prefix("no ").and_then(|r| r.split_once(NOWHERE));
        match nowhere {
            Some((library, "")) => Self::NotInstalledAnywhere {
                library: library.to_owned(),
                or_install: false,
            },
            Some((library, OR_INSTALL)) => Self::NotInstalledAnywhere {
                library: library.to_owned(),
                or_install: true,
            },
            _ => Self::NotInstalledAt(rest.to_owned()),
        }
    }
}

impl From<LoadError> for String {
    fn from(e: LoadError) -> Self {
        e.to_string()
    }
}

/// The recorded (English) form; the report shows it in its own language.
impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInstalledAt(path) => write!(f, "{NOT_INSTALLED}{path}"),
            Self::NotInstalledAnywhere {
                library,
                or_install,
            } => write!(
                f,
                "{NOT_INSTALLED}no {library}{NOWHERE}{}",
                if *or_install { OR_INSTALL } else { "" }
            ),
            Self::EntryPointsMissing(functions) => write!(f, "{functions}{ENTRY_POINTS_MISSING}"),
            Self::Other(message) => f.write_str(message),
        }
    }
}

/// One AQL dispatch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum DispatchOutcome {
    /// The completion signal reached zero.
    #[default]
    Ok,
    /// It did not within the timeout.
    Timeout,
    /// A step failed: its status (`hsa_queue_create: HSA_STATUS_ERROR_OUT_OF_RESOURCES`).
    Failed(String),
}

impl From<String> for DispatchOutcome {
    fn from(s: String) -> Self {
        match s.as_str() {
            "ok" => Self::Ok,
            "timeout" => Self::Timeout,
            _ => Self::Failed(s),
        }
    }
}

impl From<DispatchOutcome> for String {
    fn from(o: DispatchOutcome) -> Self {
        o.to_string()
    }
}

impl fmt::Display for DispatchOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ok => f.write_str("ok"),
            Self::Timeout => f.write_str("timeout"),
            Self::Failed(status) => f.write_str(status),
        }
    }
}

macro_rules! string_schema {
    ($($t:ty),*) => {$(
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                String::json_schema(generator)
            }
            fn inline_schema() -> bool {
                true
            }
        }
    )*};
}
string_schema!(KfdOpen, LoadError, DispatchOutcome);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_spellings_round_trip() {
        for s in [
            "not installed: /opt/rocm/lib/libhsa-runtime64.so.1",
            "not installed: no libhsakmt.so.1 in the loader's search path",
            "not installed: no libamdhip64.so in the loader's search path or an install",
            "libfoo.so: cannot open shared object file: Permission denied",
            "hsa_init or hsa_shut_down missing from the library",
        ] {
            assert_eq!(LoadError::from(s.to_owned()).to_string(), s);
        }
        assert!(LoadError::from("not installed: /x".to_owned()).is_not_installed());
        assert!(!LoadError::from("bad ELF".to_owned()).is_not_installed());
        assert_eq!(
            LoadError::from("hsa_init or hsa_shut_down missing from the library".to_owned()),
            LoadError::EntryPointsMissing("hsa_init or hsa_shut_down".into())
        );
        assert!(!LoadError::EntryPointsMissing("hsa_init".into()).is_not_installed());
        for s in [
            "ok",
            "timeout",
            "hsa_queue_create: HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        ] {
            assert_eq!(DispatchOutcome::from(s.to_owned()).to_string(), s);
        }
        assert_eq!(KfdOpen::from("ok".to_owned()), KfdOpen::Ok);
        assert_eq!(
            KfdOpen::from("EACCES".to_owned()),
            KfdOpen::Errno("EACCES".into())
        );
    }

    #[test]
    fn fixture_toml_spellings_parse_to_variants() {
        #[derive(Deserialize)]
        struct T {
            open: KfdOpen,
            result: DispatchOutcome,
            load_error: LoadError,
        }
        let t: T = toml::from_str(
            "open = \"ENOENT\"\nresult = \"timeout\"\n\
             load_error = \"not installed: no libhsakmt.so.1 in the loader's search path\"\n",
        )
        .unwrap();
        assert_eq!(t.open, KfdOpen::Errno("ENOENT".into()));
        assert_eq!(t.result, DispatchOutcome::Timeout);
        assert_eq!(
            t.load_error,
            LoadError::NotInstalledAnywhere {
                library: "libhsakmt.so.1".into(),
                or_install: false
            }
        );
    }
}
