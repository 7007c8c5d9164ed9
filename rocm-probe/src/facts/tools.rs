//! Layer 8: the tools users look through — the profilers (rocprofv3, rocprof-compute,
//! rocprof-sys, the legacy rocprof/rocprofv2), the debugger (rocgdb), the SMI and info tools
//! (amd-smi, rocm-smi, rocminfo) — and the profilers' names before ROCm 6.3 (omniperf,
//! omnitrace).
//!
//! The probe never runs a tool. For every name of [`FAMILIES`] it checks existence (never lists
//! a directory) in: each absolute directory of `PATH`, in order (at most [`MAX_PATH_DIRS`]
//! entries); each install's `<prefix>/bin`; and `/usr/bin`, where distributions put their
//! packages. A name found has its symlink chain read (`bin/rocprof-compute →
//! ../libexec/rocprofiler-compute/rocprof-compute`), belongs to the install whose prefix holds
//! it or its target, and gets its own version where its package installs one as a file:
//! - rocprof-compute: `<prefix>/libexec/rocprofiler-compute/VERSION` (ROCm ≥ 6.3); omniperf:
//!   `<prefix>/libexec/omniperf/VERSION` (ROCm 6.2). rocprofiler-compute's `CMakeLists.txt`
//!   installs its `VERSION` file there and links `bin/<tool>` to `libexec/<project>/<tool>`
//!   (github.com/ROCm/rocprofiler-compute, tags rocm-6.2.0 and rocm-6.3.0);
//! - amd-smi: `<prefix>/libexec/amdsmi_cli/_version.py` (`__version__ = "24.6.2+…"`;
//!   github.com/ROCm/amdsmi `amdsmi_cli/CMakeLists.txt`, which links `bin/amd-smi` to
//!   `libexec/amdsmi_cli/amdsmi_cli.py`);
//! - rocprof-sys and omnitrace: the one modulefile under
//!   `<prefix>/share/modulefiles/rocprofiler-systems/` (or `…/omnitrace/`), named after the
//!   version (the `CMakeLists.txt` of github.com/ROCm/rocprofiler-systems and ROCm/omnitrace).
//!
//! Any other tool has only the ROCm release of its install. A version that cannot be read is
//! `None`, never guessed. In a fixture without `[env]` `PATH` there is no `PATH`; when neither
//! `PATH` nor the installs were captured, nothing is looked at ([`ToolFacts::captured`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::facts::Collect;
use crate::facts::install::{InstallFacts, RocmVersion, normalize, resolve_link};
use crate::source::Source;
use crate::source::problem::{Problem, optional};
use crate::source::root::{ReadErrorKind, SysRoot};

/// Where distributions install their packages' commands.
pub const USR_BIN: &str = "/usr/bin";
/// At most this many `PATH` entries are looked at (each costs one probe per tool name).
pub const MAX_PATH_DIRS: usize = 64;
/// How many symlinks a tool's chain may pass through.
const MAX_LINK_HOPS: usize = 4;
/// At most this many names of a modulefile directory are looked at.
const MAX_MODULEFILES: usize = 64;

/// Where a tool stands in ROCm's line-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// The supported tool.
    Current,
    /// Still shipped, being phased out (rocprof, rocprofv2).
    Legacy,
    /// A name ROCm 6.3 replaced (omniperf, omnitrace).
    OldName,
}

/// Where a package writes its own version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionFile {
    /// A file, relative to the prefix, whose first line is the version.
    Plain(&'static str),
    /// A Python file, relative to the prefix, with `__version__ = "…"`.
    Python(&'static str),
    /// A directory, relative to the prefix, holding one modulefile named after the version.
    Modulefiles(&'static str),
}

/// One tool and the commands it installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The tool's name in reports (`rocprof-sys`).
    pub name: &'static str,
    /// What it is (`ROCm Systems Profiler`).
    pub title: &'static str,
    /// Its commands (`rocprof-sys-run`, `rocprof-sys-instrument`, …).
    pub binaries: &'static [&'static str],
    /// Current, legacy or an old name.
    pub standing: Standing,
    /// For an old name, the tool it became.
    pub renamed_to: Option<&'static str>,
    /// Where its package writes its own version, if anywhere.
    pub version_file: Option<VersionFile>,
}

impl Family {
    /// The command an old-name command became (`omnitrace-run` → `rocprof-sys-run`); `None` for
    /// a family that was not renamed.
    pub fn new_binary(&self, binary: &str) -> Option<String> {
        let new = self.renamed_to?;
        let tail = binary.strip_prefix(self.name)?;
        Some(format!("{new}{tail}"))
    }
}

/// The tools looked for, in report order. Command lists: the `source/bin` directories of
/// github.com/ROCm/rocprofiler-systems (rocm-6.3 era) and ROCm/omnitrace (release/rocm-rel-6.2).
pub const FAMILIES: [Family; 11] = [
    Family {
        name: "rocprofv3",
        title: "ROCprofiler-SDK's profiler",
        binaries: &["rocprofv3"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "rocprof-compute",
        title: "ROCm Compute Profiler",
        binaries: &["rocprof-compute"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: Some(VersionFile::Plain("libexec/rocprofiler-compute/VERSION")),
    },
    Family {
        name: "rocprof-sys",
        title: "ROCm Systems Profiler",
        binaries: &[
            "rocprof-sys-run",
            "rocprof-sys-instrument",
            "rocprof-sys-sample",
            "rocprof-sys-avail",
            "rocprof-sys-causal",
            "rocprof-sys",
        ],
        standing: Standing::Current,
        renamed_to: None,
        version_file: Some(VersionFile::Modulefiles(
            "share/modulefiles/rocprofiler-systems",
        )),
    },
    Family {
        name: "rocgdb",
        title: "ROCm debugger",
        binaries: &["rocgdb"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "amd-smi",
        title: "AMD SMI",
        binaries: &["amd-smi"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: Some(VersionFile::Python("libexec/amdsmi_cli/_version.py")),
    },
    Family {
        name: "rocminfo",
        title: "rocminfo",
        binaries: &["rocminfo"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "rocm-smi",
        title: "ROCm SMI",
        binaries: &["rocm-smi"],
        standing: Standing::Current,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "rocprof",
        title: "ROCProfiler v1's profiler",
        binaries: &["rocprof"],
        standing: Standing::Legacy,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "rocprofv2",
        title: "ROCProfiler v2's profiler",
        binaries: &["rocprofv2"],
        standing: Standing::Legacy,
        renamed_to: None,
        version_file: None,
    },
    Family {
        name: "omniperf",
        title: "ROCm Compute Profiler",
        binaries: &["omniperf"],
        standing: Standing::OldName,
        renamed_to: Some("rocprof-compute"),
        version_file: Some(VersionFile::Plain("libexec/omniperf/VERSION")),
    },
    Family {
        name: "omnitrace",
        title: "ROCm Systems Profiler",
        binaries: &[
            "omnitrace",
            "omnitrace-run",
            "omnitrace-instrument",
            "omnitrace-sample",
            "omnitrace-avail",
            "omnitrace-causal",
        ],
        standing: Standing::OldName,
        renamed_to: Some("rocprof-sys"),
        version_file: Some(VersionFile::Modulefiles("share/modulefiles/omnitrace")),
    },
];

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// One command found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoundTool {
    /// The command (`omnitrace-run`).
    pub name: &'static str,
    /// Its family (`omnitrace`).
    pub family: &'static str,
    /// Where it is, with `/opt/rocm` resolved to the install it names.
    pub path: String,
    /// The directory it is in (as `path`).
    pub dir: String,
    /// Its directory's position in `PATH` (0-based), when `PATH` lists it.
    pub path_index: Option<usize>,
    /// The `PATH` entry as listed, when it differs from `dir` (`/opt/rocm/bin`).
    pub path_entry: Option<String>,
    /// The symlink's target as written; `None` for a regular file.
    pub link: Option<String>,
    /// Where the symlink chain ends, as an absolute path.
    pub target: Option<String>,
    /// Index into [`InstallFacts::installs`] of the install holding it or its target.
    pub install: Option<usize>,
    /// That install's ROCm release.
    pub rocm_version: Option<RocmVersion>,
    /// The tool's own version, from its package's version file.
    pub version: Option<String>,
    /// The file (or directory) the version came from.
    pub version_source: Option<String>,
}

/// Layer 8 facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolFacts {
    /// Whether anything could be looked at: live runs always; a fixture with `[env]` `PATH` or
    /// with its installs captured ([`InstallFacts::captured`]).
    pub captured: bool,
    /// `PATH`, when set.
    pub path_env: Option<String>,
    /// `PATH` entries not looked at: relative or empty ones (the working directory is not a
    /// fact of the machine) and those past [`MAX_PATH_DIRS`].
    pub path_ignored: usize,
    /// The directories that exist and were probed, in probing order.
    pub looked_in: Vec<String>,
    /// The directories that would have been probed but do not exist.
    pub absent: Vec<String>,
    /// Every command found, by directory in probing order, then in [`FAMILIES`] order.
    pub found: Vec<FoundTool>,
}

impl Collect for ToolFacts {
    /// The installs already found and the environment already read (`PlatformFacts::env`).
    type Needs<'a> = (&'a InstallFacts, &'a BTreeMap<String, String>);
    type Output = Self;

    /// Looks for the tools (their unreadable or malformed links and version files are
    /// reported by layer 8).
    fn collect(
        source: &Source,
        (installs, env): Self::Needs<'_>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let root = source.root();
        let path = env.get("PATH");
        let facts = Self {
            captured: installs.captured || path.is_some(),
            path_env: path.cloned(),
            ..Self::default()
        };
        if !facts.captured {
            return facts;
        }
        let mut c = Collector {
            root,
            installs,
            facts,
            versions: HashMap::new(),
            links: HashMap::new(),
            problems,
        };
        for dir in c.dirs() {
            c.probe(&dir);
        }
        c.facts
    }
}

impl ToolFacts {
    /// The command a shell runs for `name`: the one in the first `PATH` directory holding it.
    pub fn runs(&self, name: &str) -> Option<&FoundTool> {
        self.found
            .iter()
            .filter(|t| t.name == name && t.path_index.is_some())
            .min_by_key(|t| t.path_index)
    }

    /// Whether this is the command a shell runs for its name.
    pub fn is_first_on_path(&self, tool: &FoundTool) -> bool {
        self.runs(tool.name).is_some_and(|t| t.path == tool.path)
    }

    /// Every command of `family` found.
    pub fn of_family<'a>(&'a self, family: &'a str) -> impl Iterator<Item = &'a FoundTool> {
        self.found.iter().filter(move |t| t.family == family)
    }

    /// Whether any command of `family` was found.
    pub fn has(&self, family: &str) -> bool {
        self.of_family(family).next().is_some()
    }
}

/// A directory to probe.
struct Dir {
    /// Canonical (`/opt/rocm` resolved).
    dir: String,
    path_index: Option<usize>,
    /// As listed in `PATH`, when different.
    path_entry: Option<String>,
}

struct Collector<'a> {
    root: &'a SysRoot,
    installs: &'a InstallFacts,
    facts: ToolFacts,
    /// Version files already read (each file is read once per run), by path.
    versions: HashMap<String, Option<(String, String)>>,
    /// Symlinks already read, by path: the target as written, `None` for anything else. A
    /// link's target can be a command probed on its own (`/usr/local/bin/x → /opt/rocm/bin/x`).
    links: HashMap<String, Option<String>>,
    problems: &'a mut Vec<Problem>,
}

impl Collector<'_> {
    /// `PATH`'s directories, then each install's `bin`, then `/usr/bin`; each once.
    fn dirs(&mut self) -> Vec<Dir> {
        let mut dirs: Vec<Dir> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        if let Some(path) = self.facts.path_env.clone() {
            for (index, entry) in path.split(':').enumerate() {
                if index >= MAX_PATH_DIRS || !entry.starts_with('/') {
                    self.facts.path_ignored += 1;
                    continue;
                }
                let listed = normalize(entry);
                let dir = canonical(self.installs, &listed);
                if seen.insert(dir.clone()) {
                    dirs.push(Dir {
                        path_entry: (listed != dir).then_some(listed),
                        dir,
                        path_index: Some(index),
                    });
                }
            }
        }
        if self.installs.captured {
            let bins = self
                .installs
                .installs
                .iter()
                .map(|i| join(&i.prefix, "bin"))
                .chain([USR_BIN.to_owned()]);
            for bin in bins {
                let dir = canonical(self.installs, &bin);
                if seen.insert(dir.clone()) {
                    dirs.push(Dir {
                        dir,
                        path_index: None,
                        path_entry: None,
                    });
                }
            }
        }
        dirs
    }

    fn probe(&mut self, d: &Dir) {
        if !self.root.exists(&d.dir) {
            self.facts.absent.push(d.dir.clone());
            return;
        }
        self.facts.looked_in.push(d.dir.clone());
        for family in &FAMILIES {
            for &name in family.binaries {
                let path = join(&d.dir, name);
                if self.root.exists(&path) {
                    let tool = self.tool(family, name, path, d);
                    self.facts.found.push(tool);
                }
            }
        }
    }

    fn tool(&mut self, family: &Family, name: &'static str, path: String, d: &Dir) -> FoundTool {
        let (link, target) = self.links(&path);
        let install = install_of(self.installs, &path)
            .or_else(|| target.as_deref().and_then(|t| install_of(self.installs, t)));
        let rocm_version = install.and_then(|i| self.installs.installs.get(i)?.version);
        let mut prefixes: Vec<String> = Vec::new();
        let candidates = install
            .and_then(|i| self.installs.installs.get(i))
            .map(|i| i.prefix.clone())
            .into_iter()
            .chain(target.as_deref().and_then(prefix_of))
            .chain(prefix_of(&path));
        for p in candidates {
            if !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
        let (version, version_source) = family
            .version_file
            .and_then(|file| prefixes.iter().find_map(|p| self.version(file, p)))
            .unzip();
        FoundTool {
            name,
            family: family.name,
            dir: d.dir.clone(),
            path,
            path_index: d.path_index,
            path_entry: d.path_entry.clone(),
            link,
            target,
            install,
            rocm_version,
            version,
            version_source,
        }
    }

    /// The first link target as written and where the chain ends (canonical), or `(None,
    /// None)` for a regular file.
    fn links(&mut self, path: &str) -> (Option<String>, Option<String>) {
        let mut first: Option<String> = None;
        let mut at = path.to_owned();
        for _ in 0..MAX_LINK_HOPS {
            let Some(t) = self.read_link(&at) else {
                break;
            };
            at = canonical(self.installs, &resolve_link(&at, &t));
            first.get_or_insert(t);
        }
        if first.is_none() {
            return (None, None);
        }
        // Recorded so that a snapshot holds the target too (a dangling link is no command).
        self.root.exists(&at);
        (first, Some(at))
    }

    /// The target of the symlink at `path` as written, read once per path; `None` for anything
    /// but a symlink (an unreadable one is a problem).
    fn read_link(&mut self, path: &str) -> Option<String> {
        if let Some(hit) = self.links.get(path) {
            return hit.clone();
        }
        let target = if self.may_be_link(path) {
            match self.root.read_link(path) {
                Ok(t) => Some(t),
                Err(e) if e.kind == ReadErrorKind::WrongType || e.is_not_found() => None,
                Err(e) => {
                    self.problems.push(e.into());
                    None
                }
            }
        } else {
            None
        };
        self.links.insert(path.to_owned(), target.clone());
        target
    }

    /// In a fixture, whether the last component of `path` is a symlink, found without a read
    /// that a snapshot would record as failed (`read_link` of a regular file). The live root
    /// cannot tell without asking, so there every candidate is asked.
    fn may_be_link(&self, path: &str) -> bool {
        if !self.root.is_fixture() {
            return true;
        }
        self.root.is_link(path)
    }

    /// The version `file` gives under `prefix`, read once per path.
    fn version(&mut self, file: VersionFile, prefix: &str) -> Option<(String, String)> {
        let rel = match file {
            VersionFile::Plain(r) | VersionFile::Python(r) | VersionFile::Modulefiles(r) => r,
        };
        let path = join(prefix, rel);
        if let Some(hit) = self.versions.get(&path) {
            return hit.clone();
        }
        let problems = &mut *self.problems;
        let found = match file {
            VersionFile::Plain(_) => {
                optional(self.root.read_value(&path), problems).and_then(|text| {
                    match text.lines().next().map(str::trim).filter(|v| is_version(v)) {
                        Some(v) => Some(v.to_owned()),
                        None => {
                            problems.push(Problem::new(
                                &path,
                                crate::text!("facts.no-version-first-line"),
                            ));
                            None
                        }
                    }
                })
            }
            VersionFile::Python(_) => optional(self.root.read_text(&path), problems).and_then(
                |text| match python_version(&text) {
                    Some(v) => Some(v),
                    None => {
                        problems.push(Problem::new(&path, crate::text!("facts.no-python-version")));
                        None
                    }
                },
            ),
            VersionFile::Modulefiles(_) => {
                let mut names = optional(self.root.read_dir(&path), problems).unwrap_or_default();
                names.truncate(MAX_MODULEFILES);
                names.retain(|n| is_version(n));
                // Several versions side by side: which one this command is cannot be told.
                (names.len() == 1).then(|| names.remove(0))
            }
        };
        let hit = found.map(|v| {
            let source = match file {
                VersionFile::Modulefiles(_) => join(&path, &v),
                _ => path.clone(),
            };
            (v, source)
        });
        self.versions.insert(path, hit.clone());
        hit
    }
}

/// `/opt/rocm` and paths below it mapped to the install `/opt/rocm` names (when it is a link).
fn canonical(installs: &InstallFacts, path: &str) -> String {
    let path = normalize(path);
    let Some(o) = installs.opt_rocm.as_ref().filter(|o| !o.chain.is_empty()) else {
        return path;
    };
    if path == crate::facts::install::OPT_ROCM {
        return o.target.clone();
    }
    match path.strip_prefix("/opt/rocm/") {
        Some(rest) => join(&o.target, rest),
        None => path,
    }
}

/// The install whose prefix holds `path` (the longest prefix wins). The distribution's `/usr`
/// holds only its own directories, not `/usr/local`.
fn install_of(installs: &InstallFacts, path: &str) -> Option<usize> {
    installs
        .installs
        .iter()
        .enumerate()
        .filter(|(_, i)| holds(&i.prefix, path))
        .max_by_key(|(_, i)| i.prefix.len())
        .map(|(index, _)| index)
}

fn holds(prefix: &str, path: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() || prefix == "/usr" {
        // Merged /usr: /bin is /usr/bin.
        return [
            "/usr/bin/",
            "/usr/lib/",
            "/usr/libexec/",
            "/usr/share/",
            "/bin/",
        ]
        .iter()
        .any(|d| path.starts_with(d));
    }
    path.starts_with(&format!("{prefix}/"))
}

/// The prefix a command's package was installed into: `<prefix>/bin/<name>` or
/// `<prefix>/libexec/<package>/<name>`.
fn prefix_of(path: &str) -> Option<String> {
    if let Some((prefix, _)) = path.split_once("/libexec/") {
        return Some(if prefix.is_empty() { "/" } else { prefix }.to_owned());
    }
    let (dir, _) = split(path);
    let prefix = dir.strip_suffix("/bin")?;
    Some(if prefix.is_empty() { "/" } else { prefix }.to_owned())
}

/// A version as packages write it: a digit first, then digits, letters and `.-+_~`, at most 64
/// characters (`2.0.1`, `24.6.2+2b02a07`, `1.11.2`).
pub fn is_version(text: &str) -> bool {
    text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+_~".contains(c))
}

/// The value of a `__version__ = "…"` (or `'…'`) line, when it is a version.
pub fn python_version(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("__version__")?.trim_start();
        let value = rest.strip_prefix('=')?.trim();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let inner = value[1..].split(quote).next()?;
        is_version(inner).then(|| inner.to_owned())
    })
}

fn join(dir: &str, name: &str) -> String {
    normalize(&format!("{dir}/{name}"))
}

fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) => ("/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("/", path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfs::{link, write as touch};

    fn env(path: Option<&str>) -> BTreeMap<String, String> {
        path.map(|p| ("PATH".to_owned(), p.to_owned()))
            .into_iter()
            .collect()
    }

    /// ROCm 6.2.0 with omniperf, amd-smi, rocminfo and omnitrace; /opt/rocm → it.
    fn rocm_62(b: &std::path::Path) {
        touch(b, "opt/rocm-6.2.0/.info/version", "6.2.0-66\n");
        touch(b, "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1.13.60200", "");
        link(
            b,
            "opt/rocm-6.2.0/lib/libhsa-runtime64.so.1",
            "libhsa-runtime64.so.1.13.60200",
        );
        link(b, "opt/rocm", "rocm-6.2.0");
        touch(b, "opt/rocm-6.2.0/libexec/omniperf/omniperf", "");
        touch(b, "opt/rocm-6.2.0/libexec/omniperf/VERSION", "2.0.1\n");
        link(
            b,
            "opt/rocm-6.2.0/bin/omniperf",
            "../libexec/omniperf/omniperf",
        );
        touch(b, "opt/rocm-6.2.0/libexec/amdsmi_cli/amdsmi_cli.py", "");
        touch(
            b,
            "opt/rocm-6.2.0/libexec/amdsmi_cli/_version.py",
            "__version__ = \"24.6.2+2b02a07\"\n",
        );
        link(
            b,
            "opt/rocm-6.2.0/bin/amd-smi",
            "../libexec/amdsmi_cli/amdsmi_cli.py",
        );
        touch(b, "opt/rocm-6.2.0/bin/rocminfo", "");
        touch(b, "opt/rocm-6.2.0/bin/omnitrace-run", "");
        touch(b, "opt/rocm-6.2.0/share/modulefiles/omnitrace/1.11.2", "");
    }

    fn collect(b: &std::path::Path, path: Option<&str>) -> (ToolFacts, Vec<Problem>) {
        tools(&Source::fixture(b).unwrap(), &env(path))
    }

    /// The tools of `source`, with its installs, and the problems met looking for the tools.
    fn tools(source: &Source, env: &BTreeMap<String, String>) -> (ToolFacts, Vec<Problem>) {
        let (installs, _) = crate::facts::collect::<InstallFacts>(source, env);
        crate::facts::collect::<ToolFacts>(source, (&installs, env))
    }

    #[test]
    fn finds_tools_their_installs_links_and_versions() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        rocm_62(b);
        touch(b, "usr/bin/rocminfo", "");
        let (f, problems) = collect(b, Some("/usr/local/bin:/usr/bin:/opt/rocm/bin"));
        assert!(f.captured);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(f.looked_in, ["/usr/bin", "/opt/rocm-6.2.0/bin"]);
        assert_eq!(f.absent, ["/usr/local/bin"]);
        let names: Vec<(&str, &str)> = f.found.iter().map(|t| (t.name, t.path.as_str())).collect();
        assert_eq!(
            names,
            [
                ("rocminfo", "/usr/bin/rocminfo"),
                ("amd-smi", "/opt/rocm-6.2.0/bin/amd-smi"),
                ("rocminfo", "/opt/rocm-6.2.0/bin/rocminfo"),
                ("omniperf", "/opt/rocm-6.2.0/bin/omniperf"),
                ("omnitrace-run", "/opt/rocm-6.2.0/bin/omnitrace-run"),
            ]
        );
        let omniperf = &f.found[3];
        assert_eq!(omniperf.path_index, Some(2));
        assert_eq!(omniperf.path_entry.as_deref(), Some("/opt/rocm/bin"));
        assert_eq!(
            omniperf.link.as_deref(),
            Some("../libexec/omniperf/omniperf")
        );
        assert_eq!(
            omniperf.target.as_deref(),
            Some("/opt/rocm-6.2.0/libexec/omniperf/omniperf")
        );
        assert_eq!(omniperf.install, Some(0));
        assert_eq!(omniperf.rocm_version.unwrap().to_string(), "6.2.0");
        assert_eq!(omniperf.version.as_deref(), Some("2.0.1"));
        assert_eq!(
            omniperf.version_source.as_deref(),
            Some("/opt/rocm-6.2.0/libexec/omniperf/VERSION")
        );
        assert_eq!(f.found[1].version.as_deref(), Some("24.6.2+2b02a07"));
        assert_eq!(f.found[4].version.as_deref(), Some("1.11.2"));
        assert_eq!(
            f.found[4].version_source.as_deref(),
            Some("/opt/rocm-6.2.0/share/modulefiles/omnitrace/1.11.2")
        );
        assert_eq!(f.found[4].link, None);
        // Debian's /usr/bin/rocminfo: no /usr install here (no system library directory).
        assert_eq!(f.found[0].install, None);
        assert_eq!(f.found[0].version, None);
        // /usr/bin comes first in PATH: that rocminfo runs.
        assert_eq!(f.runs("rocminfo").unwrap().path, "/usr/bin/rocminfo");
        assert!(!f.is_first_on_path(&f.found[2]));
        assert!(f.has("omnitrace") && !f.has("rocprof-sys"));
    }

    #[test]
    fn without_path_only_installs_and_usr_bin_are_looked_at() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        rocm_62(b);
        touch(b, "usr/local/bin/omnitrace", "");
        touch(b, "usr/bin/rocm-smi", "");
        let (f, _) = collect(b, None);
        assert!(f.captured);
        assert_eq!(f.path_env, None);
        assert_eq!(f.looked_in, ["/opt/rocm-6.2.0/bin", "/usr/bin"]);
        assert!(f.found.iter().all(|t| t.path_index.is_none()));
        assert!(!f.found.iter().any(|t| t.path.starts_with("/usr/local")));
        assert!(f.runs("rocminfo").is_none());
        assert!(f.has("rocm-smi"));
    }

    #[test]
    fn nothing_captured_means_nothing_looked_at() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "usr/bin/rocminfo", "");
        let (f, _) = collect(dir.path(), None);
        assert!(!f.captured);
        assert!(f.looked_in.is_empty() && f.found.is_empty());
        // PATH alone is enough.
        let (f, _) = collect(dir.path(), Some("/usr/bin"));
        assert!(f.captured);
        assert_eq!(f.found.len(), 1);
    }

    #[test]
    fn path_entries_relative_empty_and_past_the_bound_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        touch(b, "far/bin/rocminfo", "");
        touch(b, "usr/bin/rocm-smi", "");
        let mut entries: Vec<String> = vec!["".into(), "bin".into(), "/usr//bin/".into()];
        entries.extend((0..MAX_PATH_DIRS).map(|i| format!("/nope{i}")));
        entries.push("/far/bin".into());
        let (f, _) = collect(b, Some(&entries.join(":")));
        // Two not absolute, four past the bound (the last is /far/bin).
        assert_eq!(f.path_ignored, 6);
        let names: Vec<&str> = f.found.iter().map(|t| t.name).collect();
        assert_eq!(names, ["rocm-smi"]);
        assert_eq!(f.found[0].dir, "/usr/bin");
        assert_eq!(f.found[0].path_index, Some(2));
    }

    #[test]
    fn links_out_of_installs_and_unknowable_versions() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        rocm_62(b);
        // A source build in /usr/local, and a link from /usr/local/bin into the install.
        touch(
            b,
            "usr/local/libexec/rocprofiler-compute/rocprof-compute",
            "",
        );
        touch(
            b,
            "usr/local/libexec/rocprofiler-compute/VERSION",
            "3.0.0\n",
        );
        link(
            b,
            "usr/local/bin/rocprof-compute",
            "../libexec/rocprofiler-compute/rocprof-compute",
        );
        link(b, "usr/local/bin/rocprofv3", "/opt/rocm/bin/rocprofv3");
        touch(b, "opt/rocm-6.2.0/bin/rocprofv3", "");
        // Two omnitrace modulefiles: which one runs is unknown.
        touch(b, "opt/rocm-6.2.0/share/modulefiles/omnitrace/1.12.0", "");
        // A malformed version file.
        touch(b, "opt/rocm-6.2.0/libexec/omniperf/VERSION", "\n");
        let (f, problems) = collect(b, Some("/usr/local/bin"));
        let by = |p: &str| f.found.iter().find(|t| t.path == p).unwrap();
        let compute = by("/usr/local/bin/rocprof-compute");
        assert_eq!(compute.install, None);
        assert_eq!(compute.version.as_deref(), Some("3.0.0"));
        assert_eq!(
            compute.version_source.as_deref(),
            Some("/usr/local/libexec/rocprofiler-compute/VERSION")
        );
        let v3 = by("/usr/local/bin/rocprofv3");
        assert_eq!(v3.target.as_deref(), Some("/opt/rocm-6.2.0/bin/rocprofv3"));
        assert_eq!(v3.install, Some(0));
        assert_eq!(by("/opt/rocm-6.2.0/bin/omnitrace-run").version, None);
        assert_eq!(by("/opt/rocm-6.2.0/bin/omniperf").version, None);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "/opt/rocm-6.2.0/libexec/omniperf/VERSION");
    }

    #[test]
    fn each_link_and_version_file_is_read_once() {
        use crate::source::record::Record;
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        rocm_62(b);
        touch(b, "opt/rocm-6.2.0/bin/omnitrace-sample", "");
        // A link to a link that is itself probed, and a regular file PATH lists twice.
        link(b, "usr/local/bin/omniperf", "/opt/rocm/bin/omniperf");
        touch(b, "usr/bin/rocminfo", "");
        let (source, recorder) = Source::fixture(b).unwrap().record();
        let env = env(Some("/usr/local/bin:/usr/bin:/opt/rocm/bin:/usr/bin"));
        let (f, problems) = tools(&source, &env);
        assert!(problems.is_empty(), "{problems:?}");
        let mut reads: BTreeMap<String, usize> = BTreeMap::new();
        for r in recorder.records() {
            let key = match r {
                Record::File { path, .. } | Record::Failed { path, .. } => format!("file {path}"),
                Record::Dir { path, .. } => format!("dir {path}"),
                Record::Link { path, .. } => format!("link {path}"),
                _ => continue,
            };
            *reads.entry(key).or_default() += 1;
        }
        for (key, n) in &reads {
            assert_eq!(*n, 1, "{key} read {n} times");
        }
        assert!(reads.contains_key("link /opt/rocm-6.2.0/bin/omniperf"));
        assert!(reads.contains_key("dir /opt/rocm-6.2.0/share/modulefiles/omnitrace"));
        let local = f
            .found
            .iter()
            .find(|t| t.path == "/usr/local/bin/omniperf")
            .unwrap();
        assert_eq!(
            local.target.as_deref(),
            Some("/opt/rocm-6.2.0/libexec/omniperf/omniperf")
        );
        assert_eq!(local.install, Some(0));
        assert_eq!(local.version.as_deref(), Some("2.0.1"));
    }

    #[test]
    fn version_text() {
        assert!(is_version("2.0.1"));
        assert!(is_version("24.6.2+2b02a07"));
        assert!(!is_version(""));
        assert!(!is_version("v2.0.1"));
        assert!(!is_version("2.0.1 (release)"));
        let py = |s: &str| python_version(s);
        assert_eq!(py("__version__ = \"24.6.2\"\n").as_deref(), Some("24.6.2"));
        assert_eq!(py("x = 1\n__version__='25.3.0'").as_deref(), Some("25.3.0"));
        assert_eq!(py("__version__ = \"@amd_smi_VERSION@\""), None);
        assert_eq!(py("__version__ = 24"), None);
        assert_eq!(py("__version__ = \"24.6"), Some("24.6".to_owned()));
        assert_eq!(py("__version__ = \""), None);
        assert_eq!(py("__version__"), None);
    }

    #[test]
    fn old_names_map_to_new_commands() {
        let omnitrace = family("omnitrace").unwrap();
        assert_eq!(
            omnitrace.new_binary("omnitrace-run").as_deref(),
            Some("rocprof-sys-run")
        );
        assert_eq!(
            omnitrace.new_binary("omnitrace").as_deref(),
            Some("rocprof-sys")
        );
        let omniperf = family("omniperf").unwrap();
        assert_eq!(
            omniperf.new_binary("omniperf").as_deref(),
            Some("rocprof-compute")
        );
        assert_eq!(family("rocminfo").unwrap().new_binary("rocminfo"), None);
        // Every new command exists in the new family.
        for f in FAMILIES.iter().filter(|f| f.standing == Standing::OldName) {
            let new = family(f.renamed_to.unwrap()).unwrap();
            for b in f.binaries {
                let n = f.new_binary(b).unwrap();
                assert!(new.binaries.contains(&n.as_str()), "{b} → {n}");
            }
        }
    }

    #[test]
    fn prefixes_and_holders() {
        assert_eq!(
            prefix_of("/usr/local/libexec/rocprofiler-compute/rocprof-compute").as_deref(),
            Some("/usr/local")
        );
        assert_eq!(prefix_of("/opt/x/bin/tool").as_deref(), Some("/opt/x"));
        assert_eq!(prefix_of("/bin/tool").as_deref(), Some("/"));
        assert_eq!(prefix_of("/opt/x/tool"), None);
        assert!(holds("/usr", "/usr/bin/rocminfo"));
        assert!(holds("/usr", "/bin/rocminfo"));
        assert!(!holds("/usr", "/usr/local/bin/rocminfo"));
        assert!(holds("/opt/rocm-6.2.0", "/opt/rocm-6.2.0/bin/x"));
        assert!(!holds("/opt/rocm-6.2.0", "/opt/rocm-6.2.0.old/bin/x"));
        assert_eq!(split("/x"), ("/", "x"));
        assert_eq!(split("/a/b"), ("/a", "b"));
    }
}
