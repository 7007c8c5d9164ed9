//! `Source`: the one place that touches the system, live or fixture.

pub mod acl;
pub mod active_results;
pub mod archive;
pub mod atomic;
pub mod escape;
pub mod fixture;
pub mod host;
pub mod input;
pub mod kernel_log;
pub mod kernel_log_journal;
pub mod problem;
pub mod record;
pub mod root;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::source::fixture::{FixtureConfig, FixtureError};
use std::sync::Arc;

use crate::source::host::{FixtureHost, Host, LiveHost, RecordingHost};
use crate::source::record::Recorder;
use crate::source::root::SysRoot;

/// Where facts come from.
#[derive(Debug)]
pub struct Source {
    root: SysRoot,
    host: Box<dyn Host>,
    config: Option<FixtureConfig>,
}

/// How the report names its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceKind {
    /// This machine.
    Live,
    /// A fixture directory.
    Fixture {
        /// The directory as given.
        root: PathBuf,
    },
}

impl Source {
    /// The live machine and the real process.
    pub fn live() -> Self {
        Self {
            root: SysRoot::live(),
            host: Box::new(LiveHost),
            config: None,
        }
    }

    /// A fixture directory, or a fixture archive (`.tar.gz`, `.tgz`: read into memory, never
    /// extracted); its `fixture.toml` (optional) is parsed now.
    ///
    /// A directory that is not a machine tree (no `fixture.toml` and none of `sys`, `proc`,
    /// `etc`, `opt`, `usr`, `lib`, `dev`) is refused: read as a machine, it would be one with no
    /// driver, and fail.
    ///
    /// ```
    /// use rocm_probe::Source;
    /// use rocm_probe::source::SourceKind;
    ///
    /// let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
    /// let source = Source::fixture(format!("{fixtures}/mi210-xgmi-8gpu"))?;
    /// assert!(matches!(source.kind(), SourceKind::Fixture { .. }));
    /// // Every read goes through the source's root, inside the fixture.
    /// let nodes = source.root().read_dir("/sys/class/kfd/kfd/topology/nodes")?;
    /// assert_eq!(nodes.len(), 10); // 2 CPU nodes and 8 GPUs
    ///
    /// let refused = Source::fixture(format!("{fixtures}/LICENSES")).unwrap_err();
    /// assert!(refused.to_string().contains("LICENSES"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fixture(dir: impl AsRef<Path>) -> Result<Self, FixtureError> {
        let dir = dir.as_ref();
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) if archive::is_archive_name(dir) => return Self::archive(dir),
            Ok(_) => {
                return Err(fixture_dir_error(
                    dir,
                    &crate::msg!("io.kind.not-a-directory"),
                ));
            }
            Err(e) => return Err(fixture_dir_error(dir, &crate::i18n::os_error(&e))),
        }
        if let Err(why) = machine_tree(dir) {
            return Err(fixture_dir_error(dir, &why));
        }
        let root = SysRoot::fixture(dir);
        let config = FixtureConfig::load(&root)?;
        Ok(Self {
            root,
            host: Box::new(FixtureHost::new(config.clone())),
            config: Some(config),
        })
    }

    fn archive(path: &Path) -> Result<Self, FixtureError> {
        let bytes = input::read(path, input::InputKind::Archive)
            .map_err(|e| fixture_dir_error(path, &e.to_string()))?;
        let tree = archive::Archive::parse(&bytes).map_err(|e| fixture_dir_error(path, &e.0))?;
        if !tree.is_machine_tree() {
            let dirs = crate::i18n::list(MACHINE_DIRS);
            return Err(fixture_dir_error(
                path,
                &crate::msg!("io.fixture-no-machine-dirs", dirs),
            ));
        }
        let root = SysRoot::archive(path, tree);
        let config = FixtureConfig::load(&root)?;
        Ok(Self {
            root,
            host: Box::new(FixtureHost::new(config.clone())),
            config: Some(config),
        })
    }

    /// Records every access from now on (for `snapshot`); returns the recorder.
    pub fn record(self) -> (Self, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        let source = Self {
            root: self.root.with_recorder(recorder.clone()),
            host: Box::new(RecordingHost::new(self.host, recorder.clone())),
            config: self.config,
        };
        (source, recorder)
    }

    /// The file root every read goes through.
    pub fn root(&self) -> &SysRoot {
        &self.root
    }

    /// Identity, environment and device nodes.
    pub fn host(&self) -> &dyn Host {
        self.host.as_ref()
    }

    /// The fixture's description, in fixture mode.
    pub fn fixture_config(&self) -> Option<&FixtureConfig> {
        self.config.as_ref()
    }

    /// Live or fixture, for the report header.
    pub fn kind(&self) -> SourceKind {
        if self.root.is_fixture() {
            SourceKind::Fixture {
                root: self.root.base().to_owned(),
            }
        } else {
            SourceKind::Live
        }
    }
}

/// The top-level directories a machine tree has: what `snapshot` writes (sysfs, procfs, the
/// configuration, installs, libraries, device nodes).
pub const MACHINE_DIRS: [&str; 7] = ["sys", "proc", "etc", "opt", "usr", "lib", "dev"];

/// Whether `dir` is a machine tree: it has a `fixture.toml` or one of [`MACHINE_DIRS`]. Anything
/// else (a licence folder, `/tmp`, a snapshot's `sys/` passed one level too deep) would read as
/// a machine with nothing on it — "no KFD", a failure that drains a node — so it is refused,
/// with the parent named when `dir` is itself one of a machine tree's directories.
fn machine_tree(dir: &Path) -> Result<(), String> {
    let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if std::fs::symlink_metadata(dir.join(fixture::FIXTURE_FILE)).is_ok()
        || MACHINE_DIRS.iter().any(|d| is_dir(&dir.join(d)))
    {
        return Ok(());
    }
    let dirs = crate::i18n::list(MACHINE_DIRS);
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match dir.parent().filter(|_| MACHINE_DIRS.contains(&name)) {
        Some(parent) if parent.as_os_str().is_empty() || machine_tree(parent).is_ok() => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            Err(crate::msg!(
                "io.fixture-one-level-too-deep",
                name,
                parent = parent.display()
            ))
        }
        _ => Err(crate::msg!("io.fixture-no-machine-dirs", dirs)),
    }
}

fn fixture_dir_error(dir: &Path, message: &str) -> FixtureError {
    FixtureError {
        file: dir.to_owned(),
        line: None,
        key: None,
        message: crate::msg!("io.not-a-fixture", why = message),
    }
}
