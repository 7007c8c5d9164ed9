//! The registry of finding ids, one table per layer (DESIGN §5: every id is declared once, with
//! its layer, default status and `explain` text).

pub mod driver;
pub mod hardware;
pub mod runtime;
pub mod thunk;

/// The tables, bottom-up.
pub(crate) const TABLES: &[&[crate::finding::Rule]] = &[
    hardware::HARDWARE_RULES,
    driver::DRIVER_RULES,
    thunk::THUNK_RULES,
    runtime::RUNTIME_RULES,
];

/// Every rule constant, for `use crate::finding::*`.
pub mod all {
    pub use super::driver::*;
    pub use super::hardware::*;
    pub use super::runtime::*;
    pub use super::thunk::*;
}
