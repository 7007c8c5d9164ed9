//! The `rocm-probe` command: argument parsing and rendering only; every fact and verdict comes
//! from the `rocm_probe` library.

#![forbid(unsafe_code)]

mod args;
mod commands;
mod disasm;
mod render;
mod slurm;
mod stdio;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = args::parse();
    // Before anything is read: a fixture.toml, an --expect file or a code object on a hung
    // filesystem must not outlive the deadline either.
    if let Some(limit) = args.deadline() {
        watchdog(limit);
    }
    // One write for the whole output, not one per line (stdout is line-buffered).
    let mut out = std::io::BufWriter::new(stdio::Stdout::new(std::io::stdout().lock()));
    // The prose of everything the command builds is in the chosen language.
    let ran = rocm_probe::i18n::scoped(args.lang(), || commands::run(&args, &mut out));
    match ran.and_then(|code| out.flush().map(|()| code).map_err(Into::into)) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            stdio::warn(format_args!("{err:#}"));
            ExitCode::from(2)
        }
    }
}

/// Ends the process with exit 2 once `limit` has passed: a probe stuck on a hung device or
/// filesystem must still answer before its scheduler kills it without a word.
fn watchdog(limit: std::time::Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        stdio::warn(format_args!(
            "deadline of {} s exceeded; the run was stopped",
            limit.as_secs_f64()
        ));
        std::process::exit(2);
    });
}
