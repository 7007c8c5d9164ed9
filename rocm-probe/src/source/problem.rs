//! `Problem`: input the probe could not use, always with the path it came from.

use std::fmt;

use serde::Serialize;

use crate::i18n::Text;
use crate::source::root::{ReadError, ReadErrorKind};

/// A file that was unreadable or malformed. Problems are facts about the input; the report
/// turns them into findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The absolute path (inside the root) at fault.
    pub path: String,
    /// What is wrong with it, as data (a sentence made when shown).
    pub message: Text,
    /// Whether it could not be read at all, or was read and is malformed.
    pub kind: ProblemKind,
    /// How many problems of the file this one stands for: 1, or more when the ones past the
    /// first few of a file were folded into it (see [`fold`]), so that a file with a problem on
    /// each of its lines costs a few entries, not one per line.
    #[serde(skip_serializing_if = "is_one")]
    pub count: usize,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Unreadable input makes checks `skip`; malformed input is a warning about the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// Permission denied, not a regular file, too large, a symlink out of the root or a loop.
    Unreadable,
    /// Read, but truncated, non-numeric, binary, empty or misnamed.
    Malformed,
}

impl Problem {
    /// A malformed-input problem with `path`.
    pub fn new(path: impl Into<String>, message: Text) -> Self {
        Self {
            path: path.into(),
            message,
            kind: ProblemKind::Malformed,
            count: 1,
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
                crate::text!("facts.permission-hint", error = e.kind.text())
            }
            _ => e.kind.text(),
        };
        let kind = match e.kind {
            ReadErrorKind::NotText => ProblemKind::Malformed,
            _ => ProblemKind::Unreadable,
        };
        Problem {
            message,
            path: e.path,
            kind,
            count: 1,
        }
    }
}

/// Distinct messages shown per file: a hostile file can hold a problem on each of its lines,
/// and the first few say what is wrong with it.
pub const MESSAGES_PER_FILE: usize = 3;

/// Files listed per finding or warning block; the rest are counted.
pub const FILES_LISTED: usize = 20;

/// The problems of one file of one kind: how many, and the first few distinct messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProblemGroup {
    /// The file at fault.
    pub path: String,
    /// Unreadable or malformed.
    pub kind: ProblemKind,
    /// How many problems the file had.
    pub count: usize,
    /// Its first [`MESSAGES_PER_FILE`] distinct messages, in the order found.
    pub messages: Vec<Text>,
}

impl ProblemGroup {
    /// The messages in one line, with the ones not shown counted.
    pub fn line(&self) -> String {
        let shown = crate::i18n::join(&self.messages, "; ");
        let hidden = self.count.saturating_sub(self.messages.len());
        if hidden == 0 {
            shown
        } else {
            crate::msg!("facts.problems-more", shown, count = hidden)
        }
    }
}

/// Groups problems per file and kind, in the order the files first appear. Memory is bounded by
/// the number of files, not of problems.
pub fn group<'a>(problems: impl IntoIterator<Item = &'a Problem>) -> Vec<ProblemGroup> {
    let mut groups: Vec<ProblemGroup> = Vec::new();
    let mut index: std::collections::HashMap<(&str, ProblemKind), usize> = Default::default();
    for p in problems {
        let i = *index.entry((p.path.as_str(), p.kind)).or_insert_with(|| {
            groups.push(ProblemGroup {
                path: p.path.clone(),
                kind: p.kind,
                count: 0,
                messages: Vec::new(),
            });
            groups.len() - 1
        });
        let g = &mut groups[i];
        g.count += p.count;
        if g.messages.len() < MESSAGES_PER_FILE && !g.messages.contains(&p.message) {
            g.messages.push(p.message.clone());
        }
    }
    groups
}

/// The malformed-input problems of one file: the first [`MESSAGES_PER_FILE`] as they are, the
/// rest folded into one that counts them.
pub fn fold(path: &str, messages: Vec<Text>) -> Vec<Problem> {
    let total = messages.len();
    let mut out: Vec<Problem> = Vec::with_capacity(total.min(MESSAGES_PER_FILE + 1));
    for message in messages {
        if out.len() == MESSAGES_PER_FILE {
            let mut folded = Problem::new(path, message);
            folded.count = total - MESSAGES_PER_FILE;
            out.push(folded);
            break;
        }
        out.push(Problem::new(path, message));
    }
    out
}

/// Warning lines for a command's standard error (`path: message; …`): grouped per file, at
/// most [`FILES_LISTED`] files, and escaped for a terminal, since paths and messages carry
/// what the machine's files hold. The caller adds its own prefix.
pub fn warnings(problems: &[Problem]) -> Vec<String> {
    let groups = group(problems);
    let mut out: Vec<String> = groups
        .iter()
        .take(FILES_LISTED)
        .map(|g| crate::source::escape::text(&format!("{}: {}", g.path, g.line())))
        .collect();
    if let Some(rest) = groups.len().checked_sub(FILES_LISTED).filter(|&n| n > 0) {
        out.push(crate::msg!("facts.problems-more-files", count = rest));
    }
    out
}

/// Serializes a problem list grouped per file (see [`group`]), so that a file of a million bad
/// lines stays one small object: a problem's `path`, `message` (the first) and `kind` as before,
/// plus `count` (all of the file's problems) and `more_messages` (the next distinct ones shown,
/// when there are any).
pub fn serialize_grouped<S: serde::Serializer>(
    problems: &[Problem],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Grouped<'a> {
        path: &'a str,
        message: String,
        kind: ProblemKind,
        count: usize,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        more_messages: Vec<String>,
    }
    let groups = group(problems);
    serializer.collect_seq(groups.iter().map(|g| Grouped {
        path: &g.path,
        message: g.messages.first().map(Text::to_string).unwrap_or_default(),
        kind: g.kind,
        count: g.count,
        more_messages: g.messages.iter().skip(1).map(Text::to_string).collect(),
    }))
}

/// Whether `abs` exists, as [`SysRoot::exists`]; when it could not even be looked at for
/// another reason than its absence (a symlink escaping the fixture root, a loop, a refusal),
/// that is recorded as a problem instead of passing for absent.
pub(crate) fn exists(
    root: &crate::source::root::SysRoot,
    abs: &str,
    problems: &mut Vec<Problem>,
) -> bool {
    match root.check(abs) {
        Err(e) => {
            problems.push(e.into());
            false
        }
        _ => root.exists(abs),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(i: usize) -> Text {
        crate::text!("facts.not-a-number", text = format!("line {i}"))
    }

    fn many(path: &str, n: usize) -> Vec<Problem> {
        (0..n).map(|i| Problem::new(path, bad(i))).collect()
    }

    #[test]
    fn problems_group_per_file_with_a_count_and_the_first_messages() {
        let mut all = many("/a", 1000);
        all.extend(many("/b", 1));
        all.push(Problem::new("/a", bad(0)));
        let groups = group(&all);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].count, 1001);
        assert_eq!(groups[0].messages.len(), MESSAGES_PER_FILE);
        assert!(
            groups[0].line().contains("998 more"),
            "{}",
            groups[0].line()
        );
        assert_eq!(groups[1].line(), bad(0).to_string());
    }

    #[test]
    fn a_file_of_bad_lines_folds_into_a_few_problems_that_keep_the_count() {
        let messages: Vec<Text> = (0..10_000).map(bad).collect();
        let folded = fold("/p", messages);
        assert_eq!(folded.len(), MESSAGES_PER_FILE + 1);
        let groups = group(&folded);
        assert_eq!(groups[0].count, 10_000);
        assert_eq!(groups[0].messages.len(), MESSAGES_PER_FILE);
        assert_eq!(fold("/p", vec![bad(1)]).len(), 1);
    }

    #[test]
    fn warnings_are_grouped_capped_and_escaped() {
        let mut all: Vec<Problem> = (0..FILES_LISTED + 5)
            .flat_map(|i| many(&format!("/n/{i}"), 100))
            .collect();
        let red = crate::text!("facts.not-a-number", text = "\x1b[31mred");
        all.insert(0, Problem::new("/n/2\nFAIL injected", red.clone()));
        let lines = warnings(&all);
        assert_eq!(lines.len(), FILES_LISTED + 1, "{lines:#?}");
        let shown = crate::source::escape::text(&red.to_string());
        assert_eq!(lines[0], format!("/n/2\\nFAIL injected: {shown}"));
        assert!(shown.contains("\\x1b[31mred"), "{shown}");
        assert!(lines.last().unwrap().contains("6 more file(s)"));
        assert!(lines.iter().all(|l| !l.chars().any(char::is_control)));
    }
}
