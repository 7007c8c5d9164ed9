//! The `rocm-probe` command: argument parsing and rendering only; every fact and verdict comes
//! from the `rocm_probe` library.

#![forbid(unsafe_code)]

mod args;
mod commands;
mod disasm;
mod render;
mod slurm;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = args::parse();
    // One write for the whole output, not one per line (stdout is line-buffered).
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // The prose of everything the command builds is in the chosen language.
    let ran = rocm_probe::i18n::scoped(args.lang(), || commands::run(&args, &mut out));
    match ran.and_then(|code| out.flush().map(|()| code).map_err(Into::into)) {
        Ok(code) => ExitCode::from(code),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rocm-probe: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// `rocm-probe targets | head -1` must not turn into an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
