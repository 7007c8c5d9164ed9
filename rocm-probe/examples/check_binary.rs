//! Checks a binary's GPU code against the machine's GPUs: which code objects it carries, and for
//! each GPU (identical ones grouped) whether one loads as the GPU is set up.
//!
//! ```text
//! cargo run -p rocm-probe --example check_binary -- --root fixtures/library-xnack-plus-only \
//!     fixtures/library-xnack-plus-only/opt/rocm-6.2.0/lib/librocfft.so.0.1.60200
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use rocm_probe::codeobject::{self, InspectReport, Verdict};
use rocm_probe::{Inventory, Source};

fn main() -> ExitCode {
    let mut root = None;
    let mut file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    let usage = || {
        eprintln!("usage: check_binary [--root FIXTURE] FILE");
        ExitCode::from(2)
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = args.next(),
            _ if file.is_none() && !arg.starts_with('-') => file = Some(arg.into()),
            _ => return usage(),
        }
    }
    let Some(file) = file else {
        return usage();
    };
    let source = match root.map(Source::fixture) {
        None => Source::live(),
        Some(Ok(source)) => source,
        Some(Err(e)) => {
            eprintln!("check_binary: {e}");
            return ExitCode::from(2);
        }
    };
    let gpus = match Inventory::collect(&source) {
        Ok(inventory) => inventory.code_object_gpus(),
        Err(e) => {
            eprintln!("check_binary: no KFD topology: {e}");
            return ExitCode::from(1);
        }
    };
    let inspection = match codeobject::inspect(&file) {
        Ok(inspection) => inspection,
        Err(e) => {
            eprintln!("check_binary: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{}: {} code object(s) for {}",
        file.display(),
        inspection.code_object_count(),
        inspection.targets().join(" ")
    );
    let report = InspectReport::new(vec![inspection], gpus, None);
    for v in &report.files[0].verdicts {
        let gpu = &report.gpus[v.gpu];
        let nodes: Vec<String> = gpu.nodes.iter().map(u32::to_string).collect();
        let what = match &v.verdict {
            Verdict::Loads { target } => format!("loads ({target})"),
            Verdict::NeedsFeatureChange { target, changes } => {
                let how: Vec<&str> = changes.iter().map(|c| c.how.as_str()).collect();
                format!(
                    "does not load as set up; {target} would: {}",
                    how.join(", ")
                )
            }
            Verdict::NoCodeObject => "no code object".to_owned(),
        };
        println!("{} (nodes {}): {what}", v.target_id, nodes.join(", "));
    }
    ExitCode::from(report.exit_code())
}
