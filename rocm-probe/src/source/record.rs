//! A log of everything a run read, for `snapshot`: the files with their bytes (so nothing is
//! read twice), directory listings, symlink targets, existence probes, and the non-file facts
//! (environment variables, identity, device nodes and their extended attributes).

use std::sync::Mutex;

use crate::source::fixture::{DeviceNode, Identity};
use crate::source::root::ReadErrorKind;

/// One access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A file read whole.
    File {
        /// Absolute path.
        path: String,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// A directory listed.
    Dir {
        /// Absolute path.
        path: String,
        /// Entry names.
        entries: Vec<String>,
    },
    /// A directory entry whose name is not UTF-8: readers saw it decoded lossily, as `lossy`
    /// (with U+FFFD), a name that opens nothing. A snapshot cannot write it as it is.
    EntryNotUtf8 {
        /// The directory's absolute path.
        dir: String,
        /// The name as readers saw it.
        lossy: String,
    },
    /// An environment variable whose value is not UTF-8 (readers saw it decoded lossily).
    EnvNotUtf8 {
        /// Its name.
        name: String,
    },
    /// A symlink read (not followed).
    Link {
        /// Absolute path.
        path: String,
        /// The target text.
        target: String,
    },
    /// An existence probe: `Some(true)` a directory, `Some(false)` anything else, `None` absent.
    Exists {
        /// Absolute path.
        path: String,
        /// What was there.
        dir: Option<bool>,
    },
    /// A read that failed.
    Failed {
        /// Absolute path.
        path: String,
        /// Why.
        error: ReadErrorKind,
    },
    /// An environment variable looked up.
    Env {
        /// Its name.
        name: String,
        /// Its value, when set.
        value: Option<String>,
    },
    /// The identity looked up.
    Identity(Option<Identity>),
    /// The results of the active probes (a fixture's `[active]`, or a live `--active` run).
    Active(Box<crate::source::active_results::ActiveFacts>),
    /// An extended attribute looked up (a device node's SELinux label).
    Xattr {
        /// The path.
        path: String,
        /// The attribute name (`security.selinux`).
        name: String,
        /// Its value, when there is one.
        value: Option<String>,
    },
    /// A device node looked up.
    Device {
        /// Its path.
        path: String,
        /// Its metadata, when it exists.
        node: Option<DeviceNode>,
    },
}

/// Collects records from every reader of one run.
#[derive(Debug, Default)]
pub struct Recorder {
    records: Mutex<Vec<Record>>,
    /// Directories whose being a symlink was already asked (live only; see
    /// `SysRoot::record_ancestor_links`).
    ancestors: Mutex<std::collections::HashSet<String>>,
}

impl Recorder {
    /// Whether `dir` is asked about for the first time (and marks it asked).
    pub fn first_ancestor(&self, dir: &str) -> bool {
        self.ancestors
            .lock()
            .is_ok_and(|mut seen| seen.insert(dir.to_owned()))
    }

    /// Appends a record.
    pub fn push(&self, record: Record) {
        if let Ok(mut r) = self.records.lock() {
            r.push(record);
        }
    }

    /// Everything recorded so far, in order.
    pub fn records(&self) -> Vec<Record> {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }
}
