//! rocm-probe: probe an AMD ROCm system layer by layer, from the live machine or from a
//! fixture directory that mirrors one.
//!
//! Data flows one way: a [`Source`] (live or fixture) is read by collectors (one shape,
//! [`facts::Collect`]) into typed facts ([`Topology`], [`AgentFacts`]); pure functions derive
//! views and findings from the facts.
//! Every file read goes through [`SysRoot`], so the same code runs on both kinds of source.
//!
//! # Embedding
//!
//! The entry points an embedder needs, each shown below on a committed fixture (the examples
//! run as doctests, `cargo test --doc -p rocm-probe`):
//!
//! - [`Source::live`] or [`Source::fixture`]: where the facts come from;
//! - [`Report::collect`] with [`report::Options`]: the layered report, its verdict, root cause
//!   and exit code (what `rocm-probe` prints; serialize it with `serde` for the `--json` body);
//! - [`Inventory::collect`] and [`AgentFacts::gather_targets`]: the agents, physical GPUs and
//!   hives (`rocm-probe agents`), the gfx targets (`rocm-probe targets`);
//! - [`codeobject::inspect`] with [`codeobject::Gpu`] and [`codeobject::InspectReport`]: the GPU
//!   code a binary carries and whether it loads on each GPU (`rocm-probe inspect`).
//!
//! Three complete programs are in `rocm-probe/examples/` (`report`, `targets`,
//! `check_binary`: `cargo run -p rocm-probe --example targets -- --root fixtures/mi210-xgmi-8gpu`).
//!
//! The report of a machine whose user may not open `/dev/kfd`:
//!
//! ```
//! use rocm_probe::report::Options;
//! use rocm_probe::{Layer, Report, Source, Status};
//!
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/kfd-permission-denied");
//! let source = Source::fixture(dir)?;
//! let report = Report::collect(&source, Options::default());
//!
//! assert_eq!(report.verdict.status, Status::Fail);
//! assert_eq!(report.verdict.root_cause, Some("driver.kfd-permission-denied"));
//! assert_eq!(report.verdict.root_layer, Layer::Driver as u8);
//! assert_eq!(report.exit_code(false), 1);
//! // The finding carries its evidence and remedy, in the language in force (English here).
//! let cause = report.findings.iter().find(|f| f.id == "driver.kfd-permission-denied").unwrap();
//! assert!(cause.remedy.as_deref().unwrap().contains("usermod -aG render"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Sentences are made in the language in force for the thread: [`i18n::scoped`] runs a closure
//! in another one (`Lang::Zh`); ids, statuses and values do not change.
//!
//! `unsafe` is denied in this crate. The modules that must touch foreign memory (ioctl wrappers,
//! calls into libhsakmt/ROCr/HIP, memory maps of large binaries) opt back in one by one and are
//! named here as they are added:
//! - `codeobject::map` memory-maps the files that `inspect` reads (fat-binary libraries of a
//!   gigabyte and more), so that only their bundle headers are touched.
//! - `active::ioctl` issues the read-only `/dev/kfd` ioctls (one safe function per ioctl).
//! - `active::thunk`, `active::rocr` and `active::hip` call into libhsakmt, ROCr and HIP loaded
//!   at run time; `active::dispatch` writes the AQL packet into a queue slot.
//! - `source::kernel_log_journal` reads the systemd journal through libsystemd loaded at run
//!   time.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod active;
pub mod checks;
pub mod codeobject;
pub mod export;
pub mod facts;
pub mod finding;
pub mod i18n;
pub mod report;
pub mod source;
pub mod target;
#[cfg(test)]
mod testfs;

pub use facts::Facts;
// The knowledge files' parsers (`facts/<kind>/data.rs`) name their shared part `crate::data_file`
// because build.rs includes them too, with `data_file` at its root.
pub use facts::agent::{AgentFacts, Inventory};
pub(crate) use facts::data_file;
pub use facts::topology::Topology;
pub use finding::{Finding, Layer, Status};
pub use report::Report;
pub use source::Source;
pub use source::problem::Problem;
pub use source::root::{ReadError, ReadErrorKind, SysRoot};
