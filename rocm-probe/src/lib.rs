//! rocm-probe: probe an AMD ROCm system layer by layer, from the live machine or from a
//! fixture directory that mirrors one.
//!
//! Data flows one way: a [`Source`] (live or fixture) is read by collectors (one shape,
//! [`facts::Collect`]) into typed facts ([`Topology`], [`AgentFacts`]); pure functions derive
//! views and findings from the facts.
//! Every file read goes through [`SysRoot`], so the same code runs on both kinds of source.
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
