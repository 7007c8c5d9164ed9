//! Embeds the report: collects it from this machine or a fixture and prints the verdict, the
//! root cause and the exit code `rocm-probe` would give.
//!
//! ```text
//! cargo run -p rocm-probe --example report -- --root fixtures/kfd-permission-denied
//! ```

use std::process::ExitCode;

use rocm_probe::report::Options;
use rocm_probe::{Report, Source};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let source = match args.as_slice() {
        [] => Source::live(),
        [flag, dir] if flag == "--root" => match Source::fixture(dir) {
            Ok(source) => source,
            Err(e) => {
                eprintln!("report: {e}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: report [--root FIXTURE]");
            return ExitCode::from(2);
        }
    };
    let report = Report::collect(&source, Options::default());
    let verdict = &report.verdict;
    // Statuses and ids are stable identifiers; the summary is prose in the language in force.
    println!("verdict: {}", verdict.status.id());
    println!("summary: {}", verdict.summary);
    match verdict.root_cause {
        Some(id) => println!("root cause: {id} (layer {})", verdict.root_layer),
        None => println!("root cause: none"),
    }
    let code = report.exit_code(false);
    println!("exit code: {code}");
    ExitCode::from(code)
}
