//! Command-line arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Probe an AMD ROCm system layer by layer and say which layer is broken, why, and what to do.
#[derive(Debug, Parser)]
#[command(name = "rocm-probe", version, about)]
pub struct Args {
    /// Read a fixture directory that mirrors a machine instead of this machine.
    #[arg(long, global = true, value_name = "DIR", visible_alias = "fixture")]
    pub root: Option<PathBuf>,

    /// What to do (default: agents).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List agents (CPU and GPU nodes) under rocminfo's field names, from KFD sysfs only.
    Agents {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print one gfx target per GPU node, like rocm_agent_enumerator (without its gfx000 line).
    Targets {
        /// Print full target IDs (gfx90a:sramecc+:xnack-); `-name` is accepted too.
        #[arg(long)]
        name: bool,
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
