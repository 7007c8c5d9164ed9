//! `Problem`: input the probe could not use, always with the path it came from.

use std::fmt;

use serde::Serialize;

/// A file that was unreadable or malformed. Problems are facts about the input; the report
/// turns them into findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The absolute path (inside the root) at fault.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl Problem {
    /// A problem with `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Most inputs are optional: a missing file is `None` and says nothing; any other failure to
/// read it is recorded as a problem with its path.
pub(crate) fn optional<T>(
    result: Result<T, crate::root::ReadError>,
    problems: &mut Vec<Problem>,
) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            problems.push(e.into());
            None
        }
    }
}
