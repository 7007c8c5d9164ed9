//! FFI declarations for the ROCm layers `rocm-probe` talks to directly, and nothing more:
//!
//! - [`hsakmt`]: libhsakmt (`hsakmt.h`), as a struct of function pointers, [`hsakmt::HsaKmt`],
//!   resolved from a library **loaded at run time** ([`load`], [`load_from`]). Nothing here
//!   links against libhsakmt: it is absent on most machines and built into ROCr from ROCm 6.3
//!   on, so its absence is an ordinary `Err`, never a build or start-up failure.
//! - [`kfd`]: the `/dev/kfd` ioctl ABI (`linux/kfd_ioctl.h`) — argument structs and constants.
//! - [`ioctl`]: the `AMDKFD_IOC_*` request numbers (hand-written: C function-like macros do not
//!   survive bindgen), computed from the generated argument structs.
//! - [`hsa`]: the HSA runtime, ROCr (`hsa.h`, `hsa_ext_amd.h`), the few entry points the probe
//!   calls, as [`hsa::HsaRuntime`], loaded at run time ([`load_hsa`], [`load_hsa_from`]).
//! - [`hip`]: HIP's runtime API (`hip_runtime_api.h`), the few calls the probe makes, as
//!   [`hip::Hip`], loaded at run time ([`load_hip`], [`load_hip_from`]).
//!
//! Safe wrappers (one per ioctl taking a borrowed fd, the calls into libhsakmt, ROCr and HIP)
//! live in the `rocm-probe` crate, not here.
//!
//! # Generated code
//!
//! `src/generated/*.rs` are produced by bindgen from Debian's headers and committed, so
//! building needs neither libclang nor ROCm. Never edit them by hand: run
//! `bash hsakmt-sys/regenerate.sh` (CI runs it with `--check`). Each file's header names the
//! bindgen version, the libclang (pinned to Debian's `/usr/lib/llvm-14/lib`), the header and the
//! Debian package it came from. bindgen's layout assertions are kept: they are compile-time
//! `const` items, so a layout that differs from what clang computed fails the build. Every
//! binding describes x86-64 Linux (LP64), the only target ROCm supports.
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
//! # The ROCr and HIP ABIs used here are stable
//!
//! [`hsa`] is generated from Debian's ROCm **5.2.3** `hsa.h` and `hsa_ext_amd.h`. `hsa.h` is the
//! HSA Foundation's C API (HSA 1.x), and ROCr keeps it binary compatible: the library is
//! `libhsa-runtime64.so.1` in every release from 5.x to 7.x (its CMake sets `SOVERSION` to the
//! major version of `get_version("1.18.0")` in ROCm 7), all symbols carry the one version node
//! `ROCR_1` (`hsacore.so.def`), and every entry point in [`hsa::HsaRuntime`] is still exported
//! in ROCm 7, the deprecated `_acquire`/`_release`/`_acq_rel` spellings included.
//! Checked for this crate by compiling against both Debian's 5.2.3 headers and ROCm 7's
//! (`ROCm/rocm-systems`, `projects/rocr-runtime/runtime/hsa-runtime/inc`, July 2025): every
//! allowlisted prototype is identical, and gcc gives every generated constant (all
//! `hsa_status_t` codes, agent/ISA/pool/system attributes, packet types, header bit positions,
//! fence scopes) and the sizes and offsets of `hsa_queue_t`, `hsa_signal_t`, the
//! kernel-dispatch and barrier-AND packets the same values in both. Caveats:
//!
//! - ROCm 5.2's `hsa_ext_amd.h` stops at `HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT`
//!   (`0xA014`) and `HSA_AMD_INTERFACE_VERSION_MINOR` 0; newer attributes (`MEMORY_AVAIL`
//!   `0xA015`, `TIMESTAMP_FREQUENCY` `0xA016`, `ASIC_FAMILY_ID` `0xA107`, …, `NUM_XCC`
//!   `0xA111`, `DRIVER_UID` `0xA112`) are not declared here: pass their numbers, and expect
//!   `HSA_STATUS_ERROR_INVALID_ARGUMENT` from an older runtime (the `default:` of ROCr's
//!   `GpuAgent::GetInfo`).
//! - The AMD additions to `hsa_status_t` (`HSA_STATUS_ERROR_INVALID_MEMORY_POOL` = 40 …
//!   `HSA_STATUS_CU_MASK_REDUCED` = 44) come from an anonymous C enum, so bindgen types them with
//!   a generated alias (`_bindgen_ty_N`, also `u32`); compare them with a `hsa_status_t` as is,
//!   but do not name that alias. ROCm 7's header adds 45–47 (`OUT_OF_REGISTERS`,
//!   `RESOURCE_BUSY`, `NOT_SUPPORTED`), not declared here.
//! - `hsa_queue_t::base_address` and the packets' pointer fields are 64-bit only because
//!   `HSA_LARGE_MODEL` is defined for LP64; the layouts are those of x86-64.
//!
//! [`hip`] is generated from Debian's HIP **5.2.3** `hip_runtime_api.h`. The entry points
//! called are in clr's version script (`hipamd/src/hip_hcc.map.in`) under `hip_4.2` — so the same
//! symbols exist in `libamdhip64.so.5`, `.so.6` and `.so.7` — except
//! `hipGetDevicePropertiesR0600` (`hip_6.0`; ROCm 7's version script still lists all of them).
//! Their prototypes are unchanged from 5.2 to HIP 6's header (`ROCm/HIP` main, October 2024),
//! and the `hipError_t` codes used (0, 1, 3, 35, 100, 101) are the same in ROCm 7's
//! (`ROCm/rocm-systems`, `projects/hip`). The one layout that changed is the device properties
//! struct; see [`hip`] for how `gcnArchName` is read from both versions.
//!
//! # Missing symbols
//!
//! Every function is a field of [`hsakmt::HsaKmt`], [`hsa::HsaRuntime`] or [`hip::Hip`] of type
//! `Result<unsafe extern "C" fn(..), libloading::Error>`: a symbol that the loaded library lacks
//! is an `Err` in its field, and the load itself still succeeds. **Call through the fields**
//! (`lib.hsaKmtOpenKFD.as_ref()`), not through the generated methods of the same names: those
//! `expect()` the symbol and panic when it is missing.
//!
//! # `unsafe`
//!
//! Calling any foreign function is `unsafe`. The only `unsafe` blocks written by hand in this
//! crate are in [`load_from`], [`load_hsa_from`], [`load_hip_from`] and the private
//! `open_runtime` they share (loading a library and resolving its symbols).

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

pub mod hsa {
    //! The HSA runtime, ROCr (`/usr/include/hsa/hsa.h` and `hsa_ext_amd.h`, ROCm 5.2.3), loaded
    //! at run time as [`HsaRuntime`]: initialisation (`hsa_init`, `hsa_shut_down`,
    //! `hsa_status_string`), enumeration of agents, ISAs and AMD memory pools
    //! with their `*_get_info` attributes, and what one barrier-AND packet needs (a queue, its
    //! write index, signals).
    //!
    //! The callbacks of the iteration functions are anonymous in `hsa.h` (declared in the
    //! parameter lists); [`AgentCallback`], [`IsaCallback`], [`MemoryPoolCallback`] and
    //! [`QueueErrorCallback`] name them.
    //!
    //! See the [crate documentation](crate) for the ABI across ROCm releases, and why callers use
    //! the `Result` fields rather than the generated methods.
    // These allowances cover bindgen's output only (C names, unsafe methods without `# Safety`
    // sections, ...); the workspace's `unsafe_op_in_unsafe_fn` stays denied and holds for it
    // (`wrap_unsafe_ops`).
    #![allow(
        non_camel_case_types,
        non_snake_case,
        non_upper_case_globals,
        missing_debug_implementations,
        clippy::all,
        clippy::undocumented_unsafe_blocks,
        rustdoc::broken_intra_doc_links
    )]
    include!("generated/hsa.rs");

    impl core::fmt::Debug for HsaRuntime {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("HsaRuntime").finish_non_exhaustive()
        }
    }

    /// `hsa_status_t (*callback)(hsa_agent_t agent, void* data)` of `hsa_iterate_agents`.
    /// Returning [`HSA_STATUS_INFO_BREAK`] stops the iteration, which then returns it.
    pub type AgentCallback =
        unsafe extern "C" fn(agent: hsa_agent_t, data: *mut core::ffi::c_void) -> hsa_status_t;

    /// `hsa_status_t (*callback)(hsa_isa_t isa, void* data)` of `hsa_agent_iterate_isas`.
    pub type IsaCallback =
        unsafe extern "C" fn(isa: hsa_isa_t, data: *mut core::ffi::c_void) -> hsa_status_t;

    /// `hsa_status_t (*callback)(hsa_amd_memory_pool_t memory_pool, void* data)` of
    /// `hsa_amd_agent_iterate_memory_pools`.
    pub type MemoryPoolCallback = unsafe extern "C" fn(
        memory_pool: hsa_amd_memory_pool_t,
        data: *mut core::ffi::c_void,
    ) -> hsa_status_t;

    /// `void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data)` of
    /// `hsa_queue_create`: called by a runtime thread when the queue hits an asynchronous error.
    pub type QueueErrorCallback = unsafe extern "C" fn(
        status: hsa_status_t,
        source: *mut hsa_queue_t,
        data: *mut core::ffi::c_void,
    );

    /// `private_segment_size` / `group_segment_size` of `hsa_queue_create` meaning "the
    /// agent's default" (`UINT32_MAX`, per the function's documentation in `hsa.h`).
    pub const QUEUE_SEGMENT_SIZE_DEFAULT: u32 = u32::MAX;

    /// The size of every AQL packet slot in a queue's ring buffer (`hsa.h`: "An AQL packet is
    /// 64 bytes"); `base_address + (index % size) * 64` is the slot of a write index.
    pub const AQL_PACKET_SIZE: usize = 64;
}

pub mod hip {
    //! HIP's runtime API (`/usr/include/hip/hip_runtime_api.h`, HIP 5.2.3, parsed as C for AMD
    //! GPUs), the calls the probe makes, loaded at run time as [`Hip`]: device count, runtime
    //! and driver versions, device names, attributes and properties, error names.
    //!
    //! # `gcnArchName` and the two device-properties layouts
    //!
    //! HIP 6.0 replaced `hipDeviceProp_t` by a larger struct, `hipDeviceProp_tR0600`, and made
    //! the headers map `hipGetDeviceProperties` to a new symbol, `hipGetDevicePropertiesR0600`
    //! (`#define hipGetDeviceProperties hipGetDevicePropertiesR0600`). The old symbol stayed:
    //! `libamdhip64.so.6` and `.so.7` still export `hipGetDeviceProperties` (clr
    //! `hipamd/src/hip_device.cpp`: it forwards to `hipGetDevicePropertiesR0000`), which fills the
    //! pre-6.0 layout, `hipDeviceProp_tR0000` (`hip_deprecated.h`), field for field the
    //! [`hipDeviceProp_t`] generated here. So:
    //!
    //! - `Hip::hipGetDeviceProperties` works with every HIP from 4.2 to 7.x and writes
    //!   [`DEVICE_PROP_SIZE_R0000`] bytes; `gcnArchName` is at [`GCN_ARCH_NAME_OFFSET_R0000`].
    //! - `Hip::hipGetDevicePropertiesR0600` exists from HIP 6.0 (an `Err` field on 5.x) and
    //!   writes [`DEVICE_PROP_SIZE_R0600`] bytes; `gcnArchName` is at
    //!   [`GCN_ARCH_NAME_OFFSET_R0600`]. Its struct is opaque here.
    //!
    //! Either way, pass a zeroed buffer of [`DEVICE_PROP_BUFFER_SIZE`] bytes (a later release
    //! may grow the struct again) and read only the [`GCN_ARCH_NAME_LEN`] bytes of `gcnArchName`
    //! up to its NUL.
    //!
    //! # Other differences between releases
    //!
    //! - `hipDeviceAttribute_t`: values are unchanged from 5.2 to 6.x (gcc on `ROCm/HIP`'s
    //!   headers at rocm-5.2.3, rocm-6.0.0 and main of October 2024), but HIP 6.0 retired
    //!   `hipDeviceAttributeName` (64), `Uuid` (86), `Arch` (10001), `GcnArch` (10003) and
    //!   `GcnArchName` (10004) (renamed `hipDeviceAttributeUnused1`–`5`); do not query them.
    //! - `hipGetErrorString` returns the error's *name* in HIP 5.x (documented in the 5.2
    //!   header: "on HCC, this function returns the name of the error").
    //!
    //! See the [crate documentation](crate) for why callers use the `Result` fields rather than
    //! the generated methods.
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
    include!("generated/hip.rs");

    impl core::fmt::Debug for Hip {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("Hip").finish_non_exhaustive()
        }
    }

    /// The pre-6.0 device properties (`hipDeviceProp_tR0000` in HIP 6+'s `hip_deprecated.h`),
    /// which the plain `hipGetDeviceProperties` symbol fills in every release.
    pub type hipDeviceProp_tR0000 = hipDeviceProp_t;

    /// Length of `gcnArchName` (`char gcnArchName[256]`) in both layouts.
    pub const GCN_ARCH_NAME_LEN: usize = 256;

    /// Byte offset of `gcnArchName` in the struct `hipGetDeviceProperties` fills (HIP ≤5.x
    /// `hipDeviceProp_t`, HIP 6+ `hipDeviceProp_tR0000`): 396, as laid out by clang from
    /// Debian's 5.2.3 header (and by gcc from ROCm/HIP's headers at rocm-4.2.0 … rocm-5.7.1,
    /// and from `hip_deprecated.h` at rocm-6.0.0 and in 2024's main branch).
    pub const GCN_ARCH_NAME_OFFSET_R0000: usize =
        core::mem::offset_of!(hipDeviceProp_t, gcnArchName);

    /// Size of the struct `hipGetDeviceProperties` fills: 792 bytes.
    pub const DEVICE_PROP_SIZE_R0000: usize = core::mem::size_of::<hipDeviceProp_t>();

    /// Byte offset of `gcnArchName` in `hipDeviceProp_tR0600`, the struct
    /// `hipGetDevicePropertiesR0600` fills (HIP 6.0 and later): 1160.
    ///
    /// Computed with gcc (`offsetof`, x86-64) from the public `hip_runtime_api.h` of
    /// `ROCm/HIP` at tags rocm-6.0.0, rocm-6.1.0, rocm-6.2.2 and its last commit (October 2024,
    /// c5e11fcac); the struct's fields up to `gcnArchName` (`name[256]`, `uuid`, `luid[8]`, …,
    /// `reserved[63]`, `hipReserved[32]`) are unchanged in ROCm 7's header
    /// (`ROCm/rocm-systems`, `projects/hip/include/hip/hip_runtime_api.h`). Not checkable
    /// against Debian's 5.2.3 header, which predates the struct.
    pub const GCN_ARCH_NAME_OFFSET_R0600: usize = 1160;

    /// Size of `hipDeviceProp_tR0600` in HIP 6.0–7.x (same sources as
    /// [`GCN_ARCH_NAME_OFFSET_R0600`]): 1472 bytes.
    pub const DEVICE_PROP_SIZE_R0600: usize = 1472;

    /// The buffer to pass to either properties call: larger than both layouts, so a release
    /// that appends fields cannot write past it. Zero it first.
    pub const DEVICE_PROP_BUFFER_SIZE: usize = 8192;

    const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0000 + GCN_ARCH_NAME_LEN <= DEVICE_PROP_SIZE_R0000);
    const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0600 + GCN_ARCH_NAME_LEN <= DEVICE_PROP_SIZE_R0600);
    const _: () = assert!(DEVICE_PROP_SIZE_R0600 <= DEVICE_PROP_BUFFER_SIZE);
    const _: () = assert!(DEVICE_PROP_SIZE_R0000 <= DEVICE_PROP_BUFFER_SIZE);
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

/// The soname of the HSA runtime (ROCr), the same from ROCm 5.x to 7.x (`SOVERSION` 1).
/// Resolved through the dynamic loader's usual search path.
pub const HSA_RUNTIME_SONAME: &str = "libhsa-runtime64.so.1";

/// The sonames of HIP's AMD runtime that [`load_hip`] tries, newest first: ROCm 7.x, 6.x, 5.x.
pub const HIP_SONAMES: [&str; 3] = ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"];

/// `RTLD_NODELETE` (glibc's and musl's `<dlfcn.h>`: `0x01000`): `dlclose` leaves the library
/// mapped. Not exported by `libloading`.
#[cfg(target_os = "linux")]
const RTLD_NODELETE: core::ffi::c_int = 0x01000;

/// Opens a GPU runtime (ROCr, HIP) so that it is never unmapped.
///
/// An initialised runtime runs threads of its own (ROCr's asynchronous-event thread, for one,
/// started by `hsa_init` on a machine with a GPU); unmapping its code under them would crash the
/// process later. With `RTLD_NODELETE`, dropping the returned handle only drops the reference.
#[cfg(target_os = "linux")]
fn open_runtime(path: &OsStr) -> Result<libloading::Library, libloading::Error> {
    use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL};
    // SAFETY: `dlopen` runs the library's ELF initialisers (and those of its dependencies) on
    // this thread. For ROCr and HIP these are C++ static constructors of their own globals:
    // they open no device and start no thread (measured for Debian's 5.2.3 builds: still one
    // thread after loading either; both initialise in `hsa_init` / the first HIP call instead).
    // The flags are the defaults of `libloading::Library::new` plus `RTLD_NODELETE`, so the
    // finalisers never run while the process lives.
    let library = unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE) }?;
    Ok(library.into())
}

/// Opens a GPU runtime with the platform's default flags (no `RTLD_NODELETE` outside Linux).
#[cfg(not(target_os = "linux"))]
fn open_runtime(path: &OsStr) -> Result<libloading::Library, libloading::Error> {
    // SAFETY: as for the Linux version: loading runs the library's initialisers, which for
    // ROCr and HIP only construct their own globals.
    unsafe { libloading::Library::new(path) }
}

/// Loads the HSA runtime by its soname, [`HSA_RUNTIME_SONAME`].
///
/// # Errors
///
/// `Err` when the dynamic loader cannot find or load the library (or one it depends on, such
/// as `libhsakmt.so.1` for distribution builds). Missing symbols are `Err` in their fields of
/// [`hsa::HsaRuntime`] instead.
pub fn load_hsa() -> Result<hsa::HsaRuntime, libloading::Error> {
    load_hsa_from(HSA_RUNTIME_SONAME)
}

/// Loads the HSA runtime from `path` (a file path, or a bare soname searched by the dynamic
/// loader).
///
/// The library stays mapped until the process exits, even after the returned struct is
/// dropped (`RTLD_NODELETE`): the threads of an initialised runtime outlive any handle.
/// Loading runs its C++ static constructors only; nothing is initialised until `hsa_init` is
/// called. Every allowlisted symbol is then resolved once: one the library lacks becomes an
/// `Err` in its field of [`hsa::HsaRuntime`], never a load failure and never a panic.
///
/// # Errors
///
/// `Err` when the file does not exist or the dynamic loader rejects it.
pub fn load_hsa_from(path: impl AsRef<OsStr>) -> Result<hsa::HsaRuntime, libloading::Error> {
    let library = open_runtime(path.as_ref())?;
    // SAFETY: `from_library` resolves each allowlisted `hsa_*` symbol with `Library::get`,
    // which is unsafe because it gives the symbol's address a Rust type the loader cannot
    // check. Resolving only copies that address into a function pointer; nothing is called or
    // read through it here. The declared signatures come from the 5.2.3 `hsa.h` and are
    // identical in ROCm 7's (see the crate documentation); calling them is itself `unsafe` and
    // the caller's responsibility. A missing symbol yields `Err` in its field rather than a
    // panic, and the returned struct owns the `Library`.
    unsafe { hsa::HsaRuntime::from_library(library) }
}

/// Loads HIP's AMD runtime, trying [`HIP_SONAMES`] in order (`libamdhip64.so.7`, `.so.6`,
/// `.so.5`) and returning the first that loads.
///
/// # Errors
///
/// When none loads: the first error that is not merely "this soname is not installed" (for
/// example a dependency of an installed `libamdhip64` that is missing), else the error for
/// the first soname tried.
pub fn load_hip() -> Result<hip::Hip, libloading::Error> {
    let mut first = None;
    let mut informative = None;
    for soname in HIP_SONAMES {
        match load_hip_from(soname) {
            Ok(hip) => return Ok(hip),
            Err(e) => {
                let absent = e
                    .to_string()
                    .starts_with(&format!("{soname}: cannot open shared object file"));
                if !absent && informative.is_none() {
                    informative = Some(e);
                } else if first.is_none() {
                    first = Some(e);
                }
            }
        }
    }
    match (informative, first) {
        (Some(e), _) | (None, Some(e)) => Err(e),
        (None, None) => unreachable!("HIP_SONAMES is not empty"),
    }
}

/// Loads HIP's AMD runtime from `path` (a file path, or a bare soname searched by the dynamic
/// loader).
///
/// As for [`load_hsa_from`]: the library (which loads ROCr as a dependency) stays mapped until
/// the process exits, loading initialises nothing (HIP initialises on its first API call), and
/// a symbol the library lacks — `hipGetDevicePropertiesR0600` before HIP 6.0 — is an `Err` in
/// its field of [`hip::Hip`].
///
/// # Errors
///
/// `Err` when the file does not exist or the dynamic loader rejects it.
pub fn load_hip_from(path: impl AsRef<OsStr>) -> Result<hip::Hip, libloading::Error> {
    let library = open_runtime(path.as_ref())?;
    // SAFETY: `from_library` resolves each allowlisted `hip*` symbol with `Library::get`, which
    // is unsafe because it gives the symbol's address a Rust type the loader cannot check.
    // Resolving only copies that address into a function pointer; nothing is called or read
    // through it here. The signatures come from the 5.2.3 `hip_runtime_api.h` (plus
    // `hipGetDevicePropertiesR0600` from HIP 6's) and are unchanged in HIP 7; calling them is
    // itself `unsafe` and the caller's responsibility. A missing symbol yields `Err` in its
    // field rather than a panic, and the returned struct owns the `Library`.
    unsafe { hip::Hip::from_library(library) }
}
