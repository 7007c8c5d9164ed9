//! Lists the GPU targets like `rocm_agent_enumerator`: one gfx name per GPU agent in KFD node
//! order, or full target IDs with `--name` (`gfx90a:sramecc+:xnack-`).
//!
//! ```text
//! cargo run -p rocm-probe --example targets -- --root fixtures/mi210-xgmi-8gpu --name
//! ```

use std::process::ExitCode;

use rocm_probe::{AgentFacts, Inventory, Source};

fn main() -> ExitCode {
    let mut root = None;
    let mut full = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = args.next(),
            "--name" => full = true,
            _ => {
                eprintln!("usage: targets [--root FIXTURE] [--name]");
                return ExitCode::from(2);
            }
        }
    }
    let source = match root.map(Source::fixture) {
        None => Source::live(),
        Some(Ok(source)) => source,
        Some(Err(e)) => {
            eprintln!("targets: {e}");
            return ExitCode::from(2);
        }
    };
    // Reads only what target names need: the topology, and for full IDs the XNACK mode.
    let facts = match AgentFacts::gather_targets(&source, full) {
        Ok(facts) => facts,
        Err(e) => {
            eprintln!("targets: no KFD topology: {e}");
            return ExitCode::from(1);
        }
    };
    let inventory = Inventory::from_facts(&facts);
    for target in inventory.targets(full) {
        println!("{target}");
    }
    ExitCode::from(inventory.exit_code())
}
