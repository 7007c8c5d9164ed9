//! The `rocm-probe` command: argument parsing and rendering only; every fact and verdict comes
//! from the `rocm_probe` library.

#![forbid(unsafe_code)]

mod args;
mod commands;
mod disasm;
mod man;
mod render;
mod runlock;
mod slurm;
mod stdio;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A child of `--active`: run one library's probe and answer (rocm_probe::active::isolate).
    let mut argv = std::env::args_os().skip(1);
    if argv.next().as_deref() == Some(std::ffi::OsStr::new(rocm_probe::active::isolate::CHILD_ARG))
    {
        let stage = argv
            .next()
            .and_then(|s| s.into_string().ok())
            .unwrap_or_default();
        let code = rocm_probe::active::isolate::child_main(&stage, &mut std::io::stdout().lock());
        return ExitCode::from(code);
    }
    let args = args::parse();
    // Before anything is read: a fixture.toml, an --expect file or a code object on a hung
    // filesystem must not outlive the deadline either.
    let lang = args.lang();
    if let Some(limit) = args.deadline() {
        watchdog(limit, lang);
    }
    // One write for the whole output, not one per line (stdout is line-buffered).
    let mut out = std::io::BufWriter::new(stdio::Stdout::new(std::io::stdout().lock()));
    // The prose of everything the command builds is in the chosen language, and so is the
    // error's: an error is made into a sentence only when it is shown.
    rocm_probe::i18n::scoped(lang, || {
        let ran = commands::run(&args, &mut out);
        if ENDED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            // The watchdog is ending the run: it says so, once.
            loop {
                std::thread::park();
            }
        }
        match ran.and_then(|code| out.flush().map(|()| code).map_err(Into::into)) {
            Ok(code) => ExitCode::from(code),
            Err(err) => {
                stdio::warn(chain(&err));
                ExitCode::from(2)
            }
        }
    })
}

/// An error and its causes, joined as `{err:#}` joins them (`: `, a full-width colon in
/// Chinese), with the system's errors in the current language.
fn chain(err: &anyhow::Error) -> String {
    let texts: Vec<String> = err
        .chain()
        .map(|cause| match cause.downcast_ref::<std::io::Error>() {
            Some(io) => rocm_probe::i18n::os_error(io),
            None => cause.to_string(),
        })
        .collect();
    let colon = match rocm_probe::i18n::current() {
        rocm_probe::i18n::Lang::En => ": ",
        rocm_probe::i18n::Lang::Zh => "：",
    };
    texts.join(colon)
}

/// Set by whichever ends the run first: the command, or the watchdog of `--deadline`.
static ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends the process with exit 2 once `limit` has passed: a probe stuck on a hung device or
/// filesystem must still answer before its scheduler kills it without a word. The language is
/// the thread's, so the watchdog is given the run's.
fn watchdog(limit: std::time::Duration, lang: rocm_probe::i18n::Lang) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        if ENDED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let seconds = limit.as_secs_f64();
        let text = rocm_probe::i18n::scoped(lang, || rocm_probe::msg!("cli.deadline", seconds));
        stdio::warn(text);
        std::process::exit(2);
    });
}
