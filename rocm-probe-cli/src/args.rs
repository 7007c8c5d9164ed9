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
#[derive(Debug, Parser)]
#[command(name = "rocm-probe", version = VERSION, about)]
pub struct Args {
    /// Read a fixture directory that mirrors a machine instead of this machine (its
    /// fixture.toml: at most 1 MiB, resolved inside DIR), or a fixture archive (.tar.gz, .tgz:
    /// read in memory, never extracted).
    #[arg(long, global = true, value_name = "DIR", visible_alias = "fixture")]
    pub root: Option<PathBuf>,

    /// Language of the prose: en or zh (Simplified Chinese). Default: from LC_ALL,
    /// LC_MESSAGES or LANG. So far `explain` is translated; reports follow.
    #[arg(long, global = true, value_enum)]
    pub lang: Option<LangArg>,

    /// When to colour text output: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// What to do (default: report).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the default command, `report`.
    #[command(flatten)]
    pub report: ReportArgs,
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
    /// `--deadline`, wherever it was given: before the command (it then covers every command)
    /// or after `report`/`check`.
    pub fn deadline(&self) -> Option<std::time::Duration> {
        let own = match &self.command {
            Some(Command::Report(r) | Command::Check { report: r, .. }) => r.deadline,
            _ => None,
        };
        own.or(self.report.deadline)
    }

    /// The language: `--lang`, else the locale's.
    pub fn lang(&self) -> rocm_probe::i18n::Lang {
        match self.lang {
            Some(LangArg::En) => rocm_probe::i18n::Lang::En,
            Some(LangArg::Zh) => rocm_probe::i18n::Lang::Zh,
            None => rocm_probe::i18n::Lang::from_env(|k| std::env::var(k).ok()),
        }
    }
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal unless NO_COLOR is set.
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
    /// JUnit XML: a test suite per layer, a test case per check.
    Junit,
    /// One self-contained HTML page (no scripts, no network): verdict, layers, GPU cards and an
    /// SVG picture of the topology.
    Html,
    /// A paste-ready block for a GitHub issue (redacted like `snapshot`).
    Markdown,
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
    #[arg(long)]
    pub json: bool,
    /// Write the report to FILE instead of standard output: an absent or regular FILE is
    /// replaced atomically, a terminal, pipe or /dev/stdout is written into, a symlink to a
    /// regular file (or a dangling one) is refused.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Show only this layer (1-9).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=9))]
    pub layer: Option<u8>,
    /// Show evidence for passing and informational findings too.
    #[arg(short, long)]
    pub verbose: bool,
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
    #[arg(long)]
    pub summary: bool,
    /// Width of --summary.
    #[arg(long, value_name = "N", default_value_t = 80, value_parser = clap::value_parser!(u16).range(20..))]
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
    /// Take an exclusive lock on PATH for the run; if another run holds it, exit 2 at once (for
    /// health checks started on a timer, which may overlap). A file the probe did not create is
    /// locked but never written; a symlink or anything but a regular file is refused.
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,
    /// End the run with exit 2 if it has not finished after SECONDS (a health check must finish
    /// before its scheduler kills it: Slurm's limit is 60 s). Given before the command, it covers
    /// every command.
    #[arg(long, value_name = "SECONDS", value_parser = parse_deadline)]
    pub deadline: Option<std::time::Duration>,
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
        })
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Walk the stack bottom-up and say which layer is broken, why, and what to do (default).
    Report(ReportArgs),
    /// Check this node against a conformance file (what a good node of the fleet has: GPUs,
    /// partitions, PCIe, versions, libraries, frameworks), or write one from this node.
    Check {
        /// The conformance file (a regular file of at most 1 MiB); every unmet expectation is a
        /// finding.
        #[arg(long, value_name = "FILE", required_unless_present = "write_expect")]
        expect: Option<PathBuf>,
        /// Write a conformance file from this node (or --root) instead (replaced atomically; a
        /// symlink, device, FIFO or directory in its place is refused).
        #[arg(long, value_name = "FILE", conflicts_with = "expect")]
        write_expect: Option<PathBuf>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// What differs between two nodes' reports (`report --json` files): hardware, firmware,
    /// versions, partition modes, verdict and findings. Exit 0 when nothing differs, 1 when
    /// something does.
    Diff {
        /// The first report (a regular file of at most 16 MiB).
        a: PathBuf,
        /// The second report (likewise).
        b: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
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
        /// Lock file passed to the probe's --lock.
        #[arg(long, value_name = "PATH", default_value = "/run/rocm-probe.lock")]
        lock: PathBuf,
        /// The probe's --deadline, in seconds (Slurm kills health checks at 60 s).
        #[arg(long, value_name = "SECONDS", default_value_t = 45, value_parser = clap::value_parser!(u64).range(1..60))]
        deadline: u64,
    },
    /// The links between GPU agents (weight, hops, type, bandwidth, NUMA node), like
    /// `rocm-smi --showtopo`; `--format dot` draws physical GPUs, partitions, hives and CPU
    /// nodes for Graphviz.
    Topo {
        /// text, dot (Graphviz) or json.
        #[arg(long, value_enum, default_value_t = TopoFormat::Text)]
        format: TopoFormat,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; view with `man -l -`).
    Man,
    /// Print the documentation of a finding id (all ids without one).
    Explain {
        /// A finding id such as driver.kfd-permission-denied.
        id: Option<String>,
        /// Print the ROCm releases the probe knows instead: stream, targets, source, as-of date.
        #[arg(long, conflicts_with = "id")]
        data: bool,
    },
    /// Write a fixture of this machine (or of --root) holding exactly what the report reads.
    Snapshot {
        /// Target directory (must not exist or be empty).
        dir: PathBuf,
        /// Keep serial numbers, unique ids, user and host names.
        #[arg(long)]
        no_redact: bool,
    },
    /// List processes using the GPUs through KFD, with VRAM, SDMA, CU occupancy and queues.
    Ps {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List agents (CPU and GPU nodes) under rocminfo's field names, from KFD sysfs; with
    /// --active also as ROCr enumerates them (hsa_init, agents, ISAs, pools).
    Agents {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        active: ActiveArgs,
    },
    /// Print one gfx target per GPU node, like rocm_agent_enumerator (without its gfx000 line).
    Targets {
        /// Print full target IDs (gfx90a:sramecc+:xnack-); `-name` is accepted too.
        #[arg(long)]
        name: bool,
    },
    /// List the GPU code objects in executables, libraries, archives, offload bundles and
    /// code-object files, and say whether one loads on each GPU of this machine (or --root),
    /// or on each --target.
    Inspect {
        /// The files to inspect.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Give verdicts for this target ID (gfx90a:sramecc+:xnack-) instead of the machine's
        /// GPUs; may be repeated.
        #[arg(long = "target", value_name = "TARGET_ID")]
        targets: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write every code object to DIR (`<file>-<bundle>-<target>.co`), like
        /// roc-obj-extract.
        #[arg(long, value_name = "DIR")]
        extract: Option<PathBuf>,
        /// Disassemble the code object the GPU (the one --target names, else this machine's
        /// first) would load, with llvm-objdump from PATH, a ROCm install or /usr/lib/llvm-*.
        #[arg(long, conflicts_with = "json")]
        disasm: bool,
    },
}

/// Parses the process arguments. `rocm_agent_enumerator` spells its one flag `-name`; scripts
/// that call us in its place keep working.
pub fn parse() -> Args {
    Args::parse_from(std::env::args_os().map(|a| {
        if a == "-name" {
            OsString::from("--name")
        } else {
            a
        }
    }))
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
