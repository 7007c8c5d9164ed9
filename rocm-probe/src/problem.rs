//! `Problem`: input the probe could not use, always with the path it came from.

use std::fmt;

use serde::Serialize;

use crate::root::{ReadError, ReadErrorKind};

/// A file that was unreadable or malformed. Problems are facts about the input; the report
/// turns them into findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The absolute path (inside the root) at fault.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
    /// Whether it could not be read at all, or was read and is malformed.
    pub kind: ProblemKind,
}

/// Unreadable input makes checks `skip`; malformed input is a warning about the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// Permission denied, not a regular file, too large, a symlink out of the root or a loop.
    Unreadable,
    /// Read, but truncated, non-numeric, binary, empty or misnamed.
    Malformed,
}

impl Problem {
    /// A malformed-input problem with `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            kind: ProblemKind::Malformed,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl From<ReadError> for Problem {
    fn from(e: ReadError) -> Self {
        let message = match e.kind {
            ReadErrorKind::PermissionDenied => {
                crate::msg!("facts.permission-hint", error = e.kind)
            }
            _ => e.kind.to_string(),
        };
        let kind = match e.kind {
            ReadErrorKind::NotText => ProblemKind::Malformed,
            _ => ProblemKind::Unreadable,
        };
        Problem {
            message,
            path: e.path,
            kind,
        }
    }
}

/// Most inputs are optional: a missing file is `None` and says nothing; any other failure to
/// read it is recorded as a problem with its path.
pub(crate) fn optional<T>(result: Result<T, ReadError>, problems: &mut Vec<Problem>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            problems.push(e.into());
            None
        }
    }
}
