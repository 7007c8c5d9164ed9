//! rocm-probe: probe an AMD ROCm system layer by layer, from the live machine or from a
//! fixture directory that mirrors one.
//!
//! Data flows one way: a [`Source`] (live or fixture) is read by collectors into typed facts
//! ([`Topology`], [`AgentFacts`]); pure functions derive views and findings from the facts.
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

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod access;
pub mod active;
pub mod active_results;
pub mod agent;
pub mod atomic;
pub mod checks;
pub mod codeobject;
pub mod compiler;
pub mod config;
pub mod diff;
pub mod drm;
pub mod escape;
pub mod expect;
pub mod facts;
pub mod fatbin;
pub mod finding;
pub mod fixture;
pub mod frameworks;
pub mod host;
pub mod i18n;
pub mod input;
pub mod install;
pub mod libraries;
pub mod marketing;
pub mod module;
pub mod nfd;
pub mod output;
pub mod pci;
pub mod platform;
pub mod problem;
pub mod process;
pub mod prometheus;
pub mod properties;
pub mod record;
pub mod redact;
pub mod report;
pub mod root;
pub mod rules;
pub mod snapshot;
pub mod source;
pub mod support;
pub mod target;
#[cfg(test)]
mod testfs;
pub mod tools;
pub mod topo;
pub mod topology;

pub use agent::{AgentFacts, Inventory};
pub use facts::Facts;
pub use finding::{Finding, Layer, Status};
pub use problem::Problem;
pub use report::Report;
pub use root::{ReadError, ReadErrorKind, SysRoot};
pub use source::Source;
pub use topology::Topology;
