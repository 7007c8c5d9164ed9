//! Command-line arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// `--version`: the version and the source revision (build.rs: the git commit, or "unknown").
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("ROCM_PROBE_REVISION"),
    ")"
);

/// Probe an AMD ROCm system layer by layer and say which layer is broken, why, and what to do.
///
/// Options given before the command are the command's own: `rocm-probe --root DIR topo` is
/// `rocm-probe topo --root DIR`; an option the command does not take is refused (exit 2).
#[derive(Debug, Parser)]
#[command(name = "rocm-probe", version = VERSION, about)]
pub struct Args {
    #[command(flatten)]
    pub source: RootArg,
    #[command(flatten)]
    pub lang: LangOpt,
    #[command(flatten)]
    pub color: ColorOpt,

    /// What to do (default: report).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the default command, `report`.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `--root`: of every command that reads a machine.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RootArg {
    /// Read a fixture directory that mirrors a machine instead of this machine (its
    /// fixture.toml: at most 1 MiB, resolved inside DIR), or a fixture archive (.tar.gz, .tgz:
    /// read in memory, never extracted).
    #[arg(long, value_name = "DIR", visible_alias = "fixture")]
    pub root: Option<PathBuf>,
}

/// `--lang`: of every command that prints prose.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LangOpt {
    /// Language of the prose (reports, explanations, messages): en or zh (Simplified Chinese).
    /// Default: from LC_ALL, LC_MESSAGES or LANG.
    #[arg(long, value_enum)]
    pub lang: Option<LangArg>,
}

/// `--color`: of the commands that colour their text.
#[derive(Debug, Clone, clap::Args)]
pub struct ColorOpt {
    /// When to colour text output: auto (a terminal, unless NO_COLOR is set or TERM=dumb;
    /// CLICOLOR_FORCE forces it), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `-o`: of every command whose output is a document.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputOpt {
    /// Write the output to FILE instead of standard output: an absent or regular FILE is
    /// replaced atomically, a terminal, pipe or /dev/stdout is written into, a symlink to a
    /// regular file (or a dangling one) is refused. Nothing is written when the command fails
    /// (exit 2).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--lock` and `--deadline`: of every command that reads a machine.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunOpt {
    /// Take an exclusive lock on PATH for the run; if another run holds it, exit 2 at once (for
    /// health checks started on a timer, which may overlap). A file the probe did not create is
    /// locked but never written; a symlink or anything but a regular file is refused.
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,
    /// End the run with exit 2 if it has not finished after SECONDS (a health check must finish
    /// before its scheduler kills it: Slurm's limit is 60 s).
    #[arg(long, value_name = "SECONDS", value_parser = parse_deadline)]
    pub deadline: Option<std::time::Duration>,
}

/// `--format text|json` and `--json`: of the commands with a JSON form.
#[derive(Debug, Clone, clap::Args)]
pub struct TextJsonOpt {
    /// Output format: text or json.
    #[arg(long, value_enum, default_value_t = TextJson::Text)]
    pub format: TextJson,
    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl TextJsonOpt {
    /// Whether JSON was asked for.
    pub fn is_json(&self) -> bool {
        self.json || self.format == TextJson::Json
    }
}

/// `--format` of the commands with a text and a JSON form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextJson {
    /// Human-readable text.
    Text,
    /// One JSON document.
    Json,
}

/// `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// English.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Args {
    /// The root, language, output, lock and deadline options of the command that runs, wherever
    /// they were given (see [`parse`]).
    pub fn shared(&self) -> Shared<'_> {
        let mut s = Shared::default();
        let Some(command) = &self.command else {
            return Shared::report(&self.source, &self.lang, &self.report);
        };
        match command {
            Command::Report(c) => return Shared::report(&c.source, &c.lang, &c.report),
            Command::Check(c) => return Shared::report(&c.source, &c.lang, &c.report),
            Command::Diff { lang, output, .. }
            | Command::Fleet { lang, output, .. }
            | Command::Explain { lang, output, .. } => {
                s.lang = lang.lang;
                s.output = output.output.as_deref();
            }
            Command::SlurmWrapper { source, output, .. } => {
                s.root = source.root.as_deref();
                s.output = output.output.as_deref();
            }
            Command::Completions { output, .. } | Command::Man { output, .. } => {
                s.output = output.output.as_deref();
            }
            Command::Snapshot {
                source, lang, run, ..
            } => {
                s.set(source, lang, run);
            }
            Command::Topo {
                source,
                lang,
                run,
                output,
                ..
            }
            | Command::Ps {
                source,
                lang,
                run,
                output,
                ..
            }
            | Command::Agents {
                source,
                lang,
                run,
                output,
                ..
            }
            | Command::Targets {
                source,
                lang,
                run,
                output,
                ..
            }
            | Command::Inspect {
                source,
                lang,
                run,
                output,
                ..
            } => {
                s.set(source, lang, run);
                s.output = output.output.as_deref();
            }
        }
        s
    }

    /// `--deadline` of the command that runs.
    pub fn deadline(&self) -> Option<std::time::Duration> {
        self.shared().deadline
    }

    /// The language: `--lang`, else the locale's.
    pub fn lang(&self) -> rocm_probe::i18n::Lang {
        match self.shared().lang {
            Some(LangArg::En) => rocm_probe::i18n::Lang::En,
            Some(LangArg::Zh) => rocm_probe::i18n::Lang::Zh,
            None => rocm_probe::i18n::Lang::from_env(|k| std::env::var(k).ok()),
        }
    }
}

/// The options many commands share, as the running command has them.
#[derive(Debug, Default)]
pub struct Shared<'a> {
    /// `--root`.
    pub root: Option<&'a std::path::Path>,
    /// `--lang`.
    pub lang: Option<LangArg>,
    /// `-o`.
    pub output: Option<&'a std::path::Path>,
    /// `--lock`.
    pub lock: Option<&'a std::path::Path>,
    /// `--deadline`.
    pub deadline: Option<std::time::Duration>,
}

impl<'a> Shared<'a> {
    fn set(&mut self, source: &'a RootArg, lang: &'a LangOpt, run: &'a RunOpt) {
        self.root = source.root.as_deref();
        self.lang = lang.lang;
        self.lock = run.lock.as_deref();
        self.deadline = run.deadline;
    }

    fn report(source: &'a RootArg, lang: &'a LangOpt, r: &'a ReportArgs) -> Self {
        let mut s = Self::default();
        s.set(source, lang, &r.run);
        s.output = r.output.output.as_deref();
        s
    }
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set or TERM=dumb (CLICOLOR_FORCE forces it).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// One JSON document (schema in schema/report.schema.json).
    Json,
    /// The same document compact on one line, for collecting a fleet's reports into one stream
    /// (`rocm-probe fleet -` reads it).
    JsonLines,
    /// JUnit XML: a test suite per layer, a test case per check.
    Junit,
    /// One self-contained HTML page (no scripts, no network): verdict, layers, GPU cards and an
    /// SVG picture of the topology.
    Html,
    /// A paste-ready block for a GitHub issue (redacted like `snapshot`).
    Markdown,
}

/// Output formats of `fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FleetFormat {
    /// Human-readable text.
    Text,
    /// One JSON document.
    Json,
    /// One self-contained HTML page in the style of the report's.
    Html,
}

/// Output formats of `topo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopoFormat {
    /// Matrices like rocm-smi --showtopo.
    Text,
    /// Graphviz.
    Dot,
    /// JSON.
    Json,
}

/// Profiles (`--profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// An APU or one Radeon.
    Desktop,
    /// Between desktop and cluster.
    Workstation,
    /// Instinct GPUs, XGMI hives, 4+ GPUs.
    Cluster,
}

/// Options of `report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    #[command(flatten)]
    pub output: OutputOpt,
    /// Show only this layer: its number (1-9) or name (hardware, driver, thunk, runtime,
    /// libraries, compiler, frameworks, tools, workloads); text and json.
    #[arg(long, value_name = "LAYER", value_parser = parse_layer)]
    pub layer: Option<u8>,
    /// Show evidence for passing and informational findings too (text).
    #[arg(short, long)]
    pub verbose: bool,
    /// JSON and JSON lines: keep the node's host name in `source.host` (redacted to `host`
    /// otherwise, like the rest of what identifies a machine).
    #[arg(long)]
    pub no_redact: bool,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Severity profile for platform-tuning rules (default: detected).
    #[arg(long, value_enum)]
    pub profile: Option<ProfileArg>,
    #[command(flatten)]
    pub active: ActiveArgs,
    /// Print one line naming the root cause (at most --summary-width characters) instead of the
    /// report: what Node Problem Detector shows as the condition message and Slurm as Reason=.
    #[arg(long, conflicts_with_all = ["format", "json", "layer", "verbose"])]
    pub summary: bool,
    /// Width of --summary.
    #[arg(long, value_name = "N", default_value_t = 80, requires = "summary", value_parser = clap::value_parser!(u16).range(20..))]
    pub summary_width: u16,
    /// Also write the Prometheus node_exporter textfile (atomically) to PATH (a `*.prom` file in
    /// the collector's --collector.textfile.directory). PATH must be absent or a regular file: a
    /// symlink, device, FIFO or directory is refused.
    #[arg(long, value_name = "PATH")]
    pub textfile: Option<PathBuf>,
    /// Also write the Kubernetes Node Feature Discovery local feature file (atomically) to PATH
    /// (a file in NFD's features.d); absent or a regular file, like --textfile.
    #[arg(long, value_name = "PATH")]
    pub nfd_features: Option<PathBuf>,
    /// How long NFD keeps the labels of --nfd-features after it was written, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub nfd_expiry: u64,
    #[command(flatten)]
    pub run: RunOpt,
}

/// Active probes: opt-in, never change device state.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ActiveArgs {
    /// Also ask each layer to answer: open /dev/kfd and run its read-only ioctls, load
    /// libhsakmt (hsaKmtOpenKFD, hsaKmtAcquireSystemProperties), ROCr (hsa_init, agents) and
    /// HIP. hsaKmtAcquireSystemProperties and hsa_init acquire a VM on every GPU, which wakes a
    /// runtime-suspended GPU; nothing changes device state.
    #[arg(long)]
    pub active: bool,
    /// With --active (implied): run one AQL barrier-AND packet on each GPU through ROCr and
    /// report the round trip; a GPU that does not complete it within the timeout is a finding.
    #[arg(long)]
    pub dispatch: bool,
    /// Timeout of each --dispatch, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub dispatch_timeout: u64,
    /// The libhsakmt to load (default: the one a process would load).
    #[arg(long, value_name = "PATH")]
    pub hsakmt_lib: Option<PathBuf>,
    /// The ROCr (libhsa-runtime64.so.1) to load (default: the one a process would load).
    #[arg(long, value_name = "PATH")]
    pub hsa_runtime_lib: Option<PathBuf>,
    /// The HIP (libamdhip64.so.N) to load (default: the one a process would load).
    #[arg(long, value_name = "PATH")]
    pub hip_lib: Option<PathBuf>,
}

impl ActiveArgs {
    /// The library's options, when an active probe was asked for.
    pub fn options(&self) -> Option<rocm_probe::active::ActiveOptions> {
        (self.active || self.dispatch).then(|| rocm_probe::active::ActiveOptions {
            dispatch: self.dispatch,
            hsakmt_lib: self.hsakmt_lib.clone(),
            hsa_runtime_lib: self.hsa_runtime_lib.clone(),
            hip_lib: self.hip_lib.clone(),
            dispatch_timeout_ms: Some(self.dispatch_timeout),
            // Each library in a child process of this binary: an abort in ROCr must not take
            // the report with it.
            isolate_with: std::env::current_exe().ok(),
        })
    }
}

/// `report` as a command.
#[derive(Debug, clap::Args)]
pub struct ReportCmd {
    #[command(flatten)]
    pub source: RootArg,
    #[command(flatten)]
    pub lang: LangOpt,
    #[command(flatten)]
    pub color: ColorOpt,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `check`.
#[derive(Debug, clap::Args)]
pub struct CheckCmd {
    /// The conformance file (a regular file of at most 1 MiB; its format is in
    /// docs/conformance.md); every unmet expectation is a finding.
    #[arg(long, value_name = "FILE", required_unless_present = "write_expect")]
    pub expect: Option<PathBuf>,
    /// Write a conformance file from this node (or --root) instead (replaced atomically; a
    /// symlink, device, FIFO or directory in its place is refused).
    #[arg(long, value_name = "FILE", conflicts_with = "expect")]
    pub write_expect: Option<PathBuf>,
    #[command(flatten)]
    pub source: RootArg,
    #[command(flatten)]
    pub lang: LangOpt,
    #[command(flatten)]
    pub color: ColorOpt,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Walk the stack bottom-up and say which layer is broken, why, and what to do (default).
    Report(ReportCmd),
    /// Check this node against a conformance file (what a good node of the fleet has: GPUs,
    /// partitions, PCIe, versions, libraries, frameworks), or write one from this node.
    Check(CheckCmd),
    /// What differs between two nodes' reports (`report --json` files): hardware, firmware,
    /// versions, partition modes, verdict and findings. Exit 0 when nothing differs, 1 when
    /// something does.
    Diff {
        /// The first report (a regular file of at most 16 MiB).
        a: PathBuf,
        /// The second report (likewise).
        b: PathBuf,
        #[command(flatten)]
        format: TextJsonOpt,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// Many nodes' reports at once (`report --json` files, directories of them, or `-` for
    /// JSON lines on standard input, pdsh/clush `host: ` prefixes allowed): nodes by verdict,
    /// findings by id, configurations by fingerprint with the majority one and every node that
    /// differs from it, GPUs with a failure, and what could not be read. Exit 1 when a node's
    /// verdict is a failure.
    Fleet {
        /// Report files (one document, or JSON lines in *.jsonl; at most 16 MiB a document),
        /// directories (their *.json and *.jsonl files, no symlink followed), or `-`.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = FleetFormat::Text)]
        format: FleetFormat,
        /// Shorthand for --format json.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// Print a Slurm HealthCheckProgram wrapper (POSIX sh) with everything it needs baked in:
    /// slurmd runs it with no PATH and only SLURMD_NODENAME. It drains the node with
    /// Reason="rocm-probe: <summary>" when the probe finds a failure, resumes only a drain that
    /// carries that tag when it finds none, and only logs when the probe cannot run.
    SlurmWrapper {
        /// slurm.conf, exported as SLURM_CONF for scontrol.
        #[arg(long, value_name = "PATH")]
        slurm_conf: PathBuf,
        /// The rocm-probe binary the wrapper runs (default: this one).
        #[arg(long, value_name = "PATH")]
        probe: Option<PathBuf>,
        /// scontrol (default: found on PATH now, else /usr/bin/scontrol).
        #[arg(long, value_name = "PATH")]
        scontrol: Option<PathBuf>,
        /// Lock file passed to the probe's --lock (the wrapper's option: `--lock` before
        /// `slurm-wrapper` is refused).
        #[arg(
            id = "wrapper_lock",
            long = "lock",
            value_name = "PATH",
            default_value = "/run/rocm-probe.lock"
        )]
        lock: PathBuf,
        /// The probe's --deadline, in seconds (Slurm kills health checks at 60 s).
        #[arg(id = "wrapper_deadline", long = "deadline", value_name = "SECONDS", default_value_t = 45, value_parser = clap::value_parser!(u64).range(1..60))]
        deadline: u64,
        /// The fixture the wrapper's probe reads (--root passed on).
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// The links between GPU agents (weight, hops, type, bandwidth, NUMA node), like
    /// `rocm-smi --showtopo`; `--format dot` draws physical GPUs, partitions, hives and CPU
    /// nodes for Graphviz.
    Topo {
        /// text, dot (Graphviz) or json.
        #[arg(long, value_enum, default_value_t = TopoFormat::Text)]
        format: TopoFormat,
        /// Shorthand for --format json.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Text: one row per KFD GPU node (every partition) instead of one per physical GPU.
        #[arg(long)]
        nodes: bool,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        run: RunOpt,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// Print the manual page (roff; view with `man -l -`), or a command's.
    Man {
        /// The command whose page to print (rocm-probe-COMMAND(1)).
        command: Option<String>,
        /// Write every page (rocm-probe.1 and one rocm-probe-COMMAND.1 per command) into DIR.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["command", "output"])]
        dir: Option<PathBuf>,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// Print the documentation of a finding id (all ids without one).
    Explain {
        /// A finding id such as driver.kfd-permission-denied.
        id: Option<String>,
        /// Print the knowledge the probe carries instead (ROCm releases and their targets, ROCr's
        /// processors, minimum kernels, firmware, bundled runtimes, environment variables), each
        /// row with its source.
        #[arg(long, conflicts_with = "id")]
        data: bool,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
    },
    /// Write a fixture of this machine (or of --root) holding exactly what the report reads:
    /// a directory, or a gzip-compressed tar archive when the name ends in .tar.gz or .tgz.
    /// Read it back with `--root`.
    Snapshot {
        /// Target directory (must not exist or be empty), or DIR.tar.gz / DIR.tgz for an archive.
        dir: PathBuf,
        /// Keep serial numbers, unique ids, user and host names.
        #[arg(long)]
        no_redact: bool,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        run: RunOpt,
    },
    /// List processes using the GPUs through KFD, with VRAM, SDMA, CU occupancy and queues.
    Ps {
        #[command(flatten)]
        format: TextJsonOpt,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        run: RunOpt,
    },
    /// List agents (CPU and GPU nodes) under rocminfo's field names, from KFD sysfs; with
    /// --active also as ROCr enumerates them (hsa_init, agents, ISAs, pools).
    Agents {
        #[command(flatten)]
        format: TextJsonOpt,
        #[command(flatten)]
        active: ActiveArgs,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        run: RunOpt,
    },
    /// Print one gfx target per GPU node, like rocm_agent_enumerator (without its gfx000 line).
    Targets {
        /// Print full target IDs (gfx90a:sramecc+:xnack-); `-name` is accepted too.
        #[arg(long)]
        name: bool,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        run: RunOpt,
    },
    /// List the GPU code objects in executables, libraries, archives, offload bundles and
    /// code-object files, and say whether one loads on each GPU of this machine (or --root),
    /// or on each --target, as the GPU is set up (exit 1 when not).
    Inspect {
        /// The files to inspect.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Give verdicts for this target ID (gfx90a:sramecc+:xnack-) instead of the machine's
        /// GPUs; may be repeated.
        #[arg(long = "target", value_name = "TARGET_ID")]
        targets: Vec<String>,
        #[command(flatten)]
        format: TextJsonOpt,
        /// Also write every code object to DIR (`<file>-<bundle>-<target>.co`), like
        /// roc-obj-extract.
        #[arg(long, value_name = "DIR")]
        extract: Option<PathBuf>,
        /// Disassemble the code object the GPU (the one --target names, else this machine's
        /// first) would load, with llvm-objdump from PATH, a ROCm install or /usr/lib/llvm-*.
        #[arg(long, conflicts_with_all = ["json", "format"])]
        disasm: bool,
        #[command(flatten)]
        source: RootArg,
        #[command(flatten)]
        lang: LangOpt,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        run: RunOpt,
    },
}

/// Parses the process arguments. `rocm_agent_enumerator` spells its one flag `-name`; scripts
/// that call us in its place keep working. Options given before the command are moved after its
/// name (see [`hoist`]).
pub fn parse() -> Args {
    let argv: Vec<OsString> = std::env::args_os()
        .map(|a| {
            if a == "-name" {
                OsString::from("--name")
            } else {
                a
            }
        })
        .collect();
    match hoist(argv) {
        Ok(argv) => Args::parse_from(argv),
        Err(e) => e.exit(),
    }
}

/// The options before the command's name, moved after it: `rocm-probe --json agents` is
/// `rocm-probe agents --json`, and means what it means there. An option the command does not
/// take is refused (exit 2) instead of being ignored. Without a command (the default `report`),
/// or with arguments clap will refuse anyway, `argv` is returned as it is.
pub fn hoist(argv: Vec<OsString>) -> Result<Vec<OsString>, clap::Error> {
    let mut cmd = <Args as clap::CommandFactory>::command();
    cmd.build();
    // Each option before the command: its id and how it was spelled.
    let mut given: Vec<(clap::Id, String)> = Vec::new();
    let mut i = 1;
    while let Some(token) = argv.get(i).and_then(|t| t.to_str()) {
        if token == "--" || token == "-" || !token.starts_with('-') {
            break;
        }
        i += 1;
        if let Some(long) = token.strip_prefix("--") {
            let (name, attached) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            let Some(arg) = cmd.get_arguments().find(|a| {
                a.get_long() == Some(name)
                    || a.get_all_aliases().is_some_and(|all| all.contains(&name))
            }) else {
                return Ok(argv);
            };
            if !attached && arg.get_action().takes_values() {
                i += 1;
            }
            given.push((arg.get_id().clone(), format!("--{name}")));
        } else {
            let shorts: Vec<char> = token[1..].chars().collect();
            for (k, c) in shorts.iter().enumerate() {
                let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(*c)) else {
                    return Ok(argv);
                };
                given.push((arg.get_id().clone(), format!("-{c}")));
                if arg.get_action().takes_values() {
                    if k + 1 == shorts.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
    }
    let Some(name) = argv.get(i).and_then(|t| t.to_str()) else {
        return Ok(argv);
    };
    // `help` is clap's own: `rocm-probe --root DIR help` prints the help as before.
    let Some(sub) = cmd.find_subcommand(name).filter(|s| s.get_name() != "help") else {
        return Ok(argv);
    };
    if given.is_empty() {
        return Ok(argv);
    }
    if let Some((_, option)) = given
        .iter()
        .find(|(id, _)| sub.get_arguments().all(|a| a.get_id() != id))
    {
        let lang = lang_in(&argv[1..i]);
        let command = sub.get_name();
        let text = rocm_probe::i18n::scoped(lang, || {
            rocm_probe::msg!("cli.option-not-for-command", option, command)
        });
        let sub = sub.clone();
        return Err(
            clap::Error::raw(clap::error::ErrorKind::UnknownArgument, format!("{text}\n"))
                .with_cmd(&sub.bin_name("rocm-probe").clone()),
        );
    }
    let mut out = Vec::with_capacity(argv.len());
    out.push(argv[0].clone());
    out.push(argv[i].clone());
    out.extend(argv[1..i].iter().cloned());
    out.extend(argv[i + 1..].iter().cloned());
    Ok(out)
}

/// The language of an error about options: `--lang` among them, else the locale's.
fn lang_in(options: &[OsString]) -> rocm_probe::i18n::Lang {
    let mut words = options.iter().filter_map(|o| o.to_str());
    while let Some(w) = words.next() {
        let value = match w.strip_prefix("--lang") {
            Some("") => words.next(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        match value {
            Some("zh") => return rocm_probe::i18n::Lang::Zh,
            Some("en") => return rocm_probe::i18n::Lang::En,
            _ => {}
        }
    }
    rocm_probe::i18n::Lang::from_env(|k| std::env::var(k).ok())
}

/// `--layer`: a number (1-9) or a layer's name.
fn parse_layer(text: &str) -> Result<u8, String> {
    use rocm_probe::finding::Layer;
    let text = text.trim();
    if let Ok(n) = text.parse::<u8>() {
        return if (1..=9).contains(&n) {
            Ok(n)
        } else {
            Err(format!("{n} is not a layer: 1 to 9"))
        };
    }
    Layer::ALL
        .iter()
        .find(|l| l.id().eq_ignore_ascii_case(text))
        .map(|l| l.number())
        .ok_or_else(|| {
            let names: Vec<&str> = Layer::ALL.iter().map(|l| l.id()).collect();
            format!(
                "{text:?} is not a layer: a number 1 to 9 or one of {}",
                names.join(", ")
            )
        })
}

/// `--deadline`: seconds, fractions allowed, more than zero and at most a day.
fn parse_deadline(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err("the deadline must be more than 0 and at most 86400 seconds".to_owned());
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
