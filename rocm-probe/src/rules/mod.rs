//! The registry of finding ids, one table per layer (ARCHITECTURE.md §5: every id is declared once, with
//! its layer, default status and `explain` text).

pub mod compiler;
pub mod driver;
pub mod expect;
pub mod frameworks;
pub mod hardware;
pub mod libraries;
pub mod runtime;
pub mod thunk;
pub mod tools;
pub mod workloads;

/// The tables, bottom-up.
pub(crate) const TABLES: &[&[crate::finding::Rule]] = &[
    hardware::HARDWARE_RULES,
    hardware::HARDWARE_DEVICE_RULES,
    driver::DRIVER_RULES,
    driver::DRIVER_PLATFORM_RULES,
    driver::DRIVER_ACTIVE_RULES,
    thunk::THUNK_RULES,
    thunk::THUNK_ACTIVE_RULES,
    runtime::RUNTIME_RULES,
    runtime::RUNTIME_ACTIVE_RULES,
    libraries::LIBRARIES_RULES,
    compiler::COMPILER_RULES,
    frameworks::FRAMEWORKS_RULES,
    tools::TOOLS_RULES,
    workloads::WORKLOADS_RULES,
    expect::EXPECT_RULES,
];

/// Every rule constant, for `use crate::finding::*`.
pub mod all {
    pub use super::compiler::*;
    pub use super::driver::*;
    pub use super::expect::*;
    pub use super::frameworks::*;
    pub use super::hardware::*;
    pub use super::libraries::*;
    pub use super::runtime::*;
    pub use super::thunk::*;
    pub use super::tools::*;
    pub use super::workloads::*;
}

/// Failures that stop everything above them: no GPU, no driver, no KFD, no access to it. A
/// failure not listed here (uncorrectable RAS errors on one GPU of eight) leaves the layers
/// above checkable; any failure also blocks when no GPU is left in KFD.
pub const BLOCKING: &[&str] = &[
    hardware::NO_AMD_GPU.id,
    driver::AMDGPU_NOT_LOADED.id,
    driver::AMDGPU_BLACKLISTED.id,
    driver::NOMODESET.id,
    driver::KFD_MISSING.id,
    driver::KFD_UNREADABLE.id,
    driver::KFD_DEVICE_MISSING.id,
    driver::KFD_PERMISSION_DENIED.id,
    driver::KFD_OPEN_FAILED.id,
];
