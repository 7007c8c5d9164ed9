//! FFI declarations for the two interfaces of the ROCm thunk layer, and nothing more:
//!
//! - [`hsakmt`]: libhsakmt (`hsakmt.h`), as a struct of function pointers, [`hsakmt::HsaKmt`],
//!   resolved from a library **loaded at run time** ([`load`], [`load_from`]). Nothing here
//!   links against libhsakmt: it is absent on most machines and built into ROCr from ROCm 6.3
//!   on, so its absence is an ordinary `Err`, never a build or start-up failure.
//! - [`kfd`]: the `/dev/kfd` ioctl ABI (`linux/kfd_ioctl.h`) — argument structs and constants.
//! - [`ioctl`]: the `AMDKFD_IOC_*` request numbers (hand-written: C function-like macros do not
//!   survive bindgen), computed from the generated argument structs.
//!
//! Safe wrappers (one per ioctl taking a borrowed fd, the calls into libhsakmt) live in the
//! `rocm-probe` crate, not here.
//!
//! # Generated code
//!
//! `src/generated/*.rs` are produced by bindgen from Debian's headers and committed, so
//! building needs neither libclang nor ROCm. Never edit them by hand: run
//! `bash hsakmt-sys/regenerate.sh` (CI runs it with `--check`). Each file's header names the
//! bindgen version, the libclang (pinned to Debian's `/usr/lib/llvm-14/lib`), the header and the
//! Debian package it came from. bindgen's layout assertions are kept: they are compile-time
//! `const` items, so a layout that differs from what clang computed fails the build.
//!
//! # The libhsakmt ABI is not stable
//!
//! [`hsakmt`] describes the **ROCm 5.2.3** headers (Debian's `libhsakmt-dev`). Struct layouts
//! changed in later releases: ROCm 6.3 inserted `OverrideEngineId` into `HsaNodeProperties`
//! (shifting every later field) and `RecSdmaEngIdMask` into `HsaIoLinkProperties`; ROCm 7
//! appended more fields. Only call functions whose argument layouts are stable across releases
//! (`hsaKmtOpenKFD`, `hsaKmtCloseKFD`, `hsaKmtGetVersion`, `hsaKmtAcquireSystemProperties`, …),
//! or pass an oversized buffer and read only the stable prefix; never trust a field whose
//! offset depends on the library version.
//!
//! # Missing symbols
//!
//! Every function is a field of [`hsakmt::HsaKmt`] of type `Result<unsafe extern "C" fn(..),
//! libloading::Error>`: a symbol that the loaded library lacks is an `Err` in its field, and the
//! load itself still succeeds. **Call through the fields** (`lib.hsaKmtOpenKFD.as_ref()`), not
//! through the generated methods of the same names: those `expect()` the symbol and panic when
//! it is missing.
//!
//! # `unsafe`
//!
//! Calling any foreign function is `unsafe`. The only `unsafe` blocks written by hand in this
//! crate are in [`load_from`] (loading the library and resolving its symbols).

pub mod hsakmt {
    //! libhsakmt (`/usr/include/hsakmt.h`, ROCm 5.2.3 ABI), loaded at run time as [`HsaKmt`].
    //!
    //! See the [crate documentation](crate) for why layouts beyond the stable prefix must not be
    //! trusted, and why callers use the `Result` fields rather than the generated methods.
    // These allowances cover bindgen's output only (C names, bitfield accessors that transmute
    // to the same type, unsafe methods without `# Safety` sections, ...); the workspace's
    // `unsafe_op_in_unsafe_fn` stays denied and holds for it (`wrap_unsafe_ops`).
    #![allow(
        non_camel_case_types,
        non_snake_case,
        non_upper_case_globals,
        missing_debug_implementations,
        clippy::all,
        clippy::undocumented_unsafe_blocks,
        rustdoc::broken_intra_doc_links
    )]
    include!("generated/hsakmt.rs");

    impl core::fmt::Debug for HsaKmt {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("HsaKmt").finish_non_exhaustive()
        }
    }
}

pub mod kfd {
    //! The `/dev/kfd` ioctl ABI from Debian's `/usr/include/linux/kfd_ioctl.h` (KFD ioctl
    //! interface 1.11, Linux 6.1). The kernel copies `_IOC_SIZE(request)` bytes and zero-fills
    //! the rest, so these (older, smaller) argument structs are accepted by newer kernels.
    // These allowances cover bindgen's output only (C names, bitfield accessors that transmute
    // to the same type, unsafe methods without `# Safety` sections, ...); the workspace's
    // `unsafe_op_in_unsafe_fn` stays denied and holds for it (`wrap_unsafe_ops`).
    #![allow(
        non_camel_case_types,
        non_snake_case,
        non_upper_case_globals,
        missing_debug_implementations,
        clippy::all,
        clippy::undocumented_unsafe_blocks,
        rustdoc::broken_intra_doc_links
    )]
    include!("generated/kfd_ioctl.rs");
}

pub mod ioctl;

use std::ffi::OsStr;

/// The versioned soname of libhsakmt (shared builds of every release so far, e.g. Debian's
/// `libhsakmt1`). Resolved through the dynamic loader's usual search path.
pub const DEFAULT_SONAME: &str = "libhsakmt.so.1";

/// Loads libhsakmt by its soname, [`DEFAULT_SONAME`].
///
/// # Errors
///
/// `Err` when the dynamic loader cannot find or load the library. Individual missing symbols
/// are not errors here: they are `Err` in the corresponding field of [`hsakmt::HsaKmt`].
pub fn load() -> Result<hsakmt::HsaKmt, libloading::Error> {
    load_from(DEFAULT_SONAME)
}

/// Loads libhsakmt from `path` (a file path, or a bare soname searched by the dynamic loader).
///
/// Loading runs the library's ELF initialisers; the path must name a libhsakmt build (or a
/// library whose initialisers are equally harmless). Every `hsaKmt*` symbol is then resolved
/// once: one the library lacks becomes an `Err` in its field of [`hsakmt::HsaKmt`], never a
/// load failure and never a panic. Call through those fields, not through the generated methods
/// of the same names (they `expect()` the symbol).
///
/// The function pointers are typed after the ROCm 5.2.3 header; see the crate documentation
/// for which structs changed layout in later releases.
///
/// # Errors
///
/// `Err` when the file does not exist or the dynamic loader rejects it.
pub fn load_from(path: impl AsRef<OsStr>) -> Result<hsakmt::HsaKmt, libloading::Error> {
    // SAFETY: `Library::new` is unsafe because `dlopen` runs the library's initialisers (and,
    // on unload, its finalisers) on this thread. libhsakmt's shared builds register no
    // constructors of their own (Debian 5.2.3's only `.init_array` entry is the toolchain's
    // `frame_dummy`); its dependencies (libdrm, libdrm_amdgpu, libnuma) only initialise their
    // own static state. Nothing else is done with the handle here.
    let library = unsafe { libloading::Library::new(path.as_ref()) }?;
    // SAFETY: `from_library` resolves each `hsaKmt*` symbol with `Library::get`, which is
    // unsafe because it gives the symbol's address a Rust type the loader cannot check.
    // Resolving only copies that address into a function pointer; nothing is called or read
    // through it here. Whether the declared signature (from the ROCm 5.2.3 header) matches the
    // loaded build matters only when the pointer is called, which is itself `unsafe` and is the
    // caller's responsibility (see the crate documentation on layouts). A missing symbol
    // yields `Err` in its field rather than a panic, and the returned struct owns the `Library`,
    // so no resolved pointer outlives the mapping.
    unsafe { hsakmt::HsaKmt::from_library(library) }
}
