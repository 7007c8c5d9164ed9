//! `/dev/kfd` ioctl request numbers (`AMDKFD_IOC_*`).
//!
//! `linux/kfd_ioctl.h` defines them with the function-like macros `AMDKFD_IOR(nr, type)` /
//! `AMDKFD_IOW` / `AMDKFD_IOWR`, which bindgen cannot translate, so they are computed here by
//! [`ioc`], a `const fn` implementing Linux's asm-generic `_IOC` encoding, from `size_of` of
//! the generated argument structs in [`crate::kfd`]. `tests/abi.rs` pins every value.
//!
//! | bits  | field | width |
//! |-------|-------|-------|
//! | 0–7   | nr (command number) | 8 |
//! | 8–15  | type (`b'K'` for KFD) | 8 |
//! | 16–29 | size of the argument struct | 14 |
//! | 30–31 | direction: none 0, write 1, read 2 (read and write = 3) | 2 |
//!
//! This is the encoding of x86_64, aarch64, riscv and every other architecture that uses
//! `asm-generic/ioctl.h`; powerpc, mips, sparc and alpha differ and are refused at build time.
//! Request numbers are `u32`; widen them to the libc's request type (`c_ulong` on glibc) at the
//! call site.
//!
//! "Read" and "write" are from user space's point of view: `AMDKFD_IOR` means the kernel
//! writes the struct back to the caller.

use core::mem::size_of;

use crate::kfd::{
    AMDKFD_COMMAND_END, AMDKFD_COMMAND_START, AMDKFD_IOCTL_BASE, kfd_ioctl_acquire_vm_args,
    kfd_ioctl_alloc_memory_of_gpu_args, kfd_ioctl_alloc_queue_gws_args,
    kfd_ioctl_create_event_args, kfd_ioctl_create_queue_args, kfd_ioctl_criu_args,
    kfd_ioctl_dbg_address_watch_args, kfd_ioctl_dbg_register_args, kfd_ioctl_dbg_unregister_args,
    kfd_ioctl_dbg_wave_control_args, kfd_ioctl_destroy_event_args, kfd_ioctl_destroy_queue_args,
    kfd_ioctl_free_memory_of_gpu_args, kfd_ioctl_get_available_memory_args,
    kfd_ioctl_get_clock_counters_args, kfd_ioctl_get_dmabuf_info_args,
    kfd_ioctl_get_process_apertures_args, kfd_ioctl_get_process_apertures_new_args,
    kfd_ioctl_get_queue_wave_state_args, kfd_ioctl_get_tile_config_args,
    kfd_ioctl_get_version_args, kfd_ioctl_import_dmabuf_args, kfd_ioctl_map_memory_to_gpu_args,
    kfd_ioctl_reset_event_args, kfd_ioctl_set_cu_mask_args, kfd_ioctl_set_event_args,
    kfd_ioctl_set_memory_policy_args, kfd_ioctl_set_scratch_backing_va_args,
    kfd_ioctl_set_trap_handler_args, kfd_ioctl_set_xnack_mode_args, kfd_ioctl_smi_events_args,
    kfd_ioctl_svm_args, kfd_ioctl_unmap_memory_from_gpu_args, kfd_ioctl_update_queue_args,
    kfd_ioctl_wait_events_args,
};

#[cfg(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc",
    target_arch = "sparc64"
))]
compile_error!("hsakmt-sys::ioctl implements the asm-generic _IOC encoding only");

/// Width of the command-number field.
pub const IOC_NRBITS: u32 = 8;
/// Width of the type field.
pub const IOC_TYPEBITS: u32 = 8;
/// Width of the size field.
pub const IOC_SIZEBITS: u32 = 14;
/// Width of the direction field.
pub const IOC_DIRBITS: u32 = 2;

/// Position of the command-number field.
pub const IOC_NRSHIFT: u32 = 0;
/// Position of the type field.
pub const IOC_TYPESHIFT: u32 = IOC_NRSHIFT + IOC_NRBITS;
/// Position of the size field.
pub const IOC_SIZESHIFT: u32 = IOC_TYPESHIFT + IOC_TYPEBITS;
/// Position of the direction field.
pub const IOC_DIRSHIFT: u32 = IOC_SIZESHIFT + IOC_SIZEBITS;

/// Direction: no data transferred (`_IOC_NONE`).
pub const IOC_NONE: u32 = 0;
/// Direction: user space writes the argument (`_IOC_WRITE`).
pub const IOC_WRITE: u32 = 1;
/// Direction: user space reads the argument (`_IOC_READ`).
pub const IOC_READ: u32 = 2;

/// Largest argument size the size field can hold.
pub const IOC_SIZE_MAX: usize = (1 << IOC_SIZEBITS) - 1;

/// `_IOC(dir, type, nr, size)`: packs the four fields of an ioctl request number.
///
/// Like the C macro, out-of-range `dir` or `size` are truncated to their field widths; the
/// request constants in this module check their sizes at compile time.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    let dir = dir & ((1 << IOC_DIRBITS) - 1);
    let size = (size & IOC_SIZE_MAX) as u32;
    (dir << IOC_DIRSHIFT)
        | (size << IOC_SIZESHIFT)
        | ((ty as u32) << IOC_TYPESHIFT)
        | ((nr as u32) << IOC_NRSHIFT)
}

/// `_IO(type, nr)`: no argument.
pub const fn io(ty: u8, nr: u8) -> u32 {
    ioc(IOC_NONE, ty, nr, 0)
}

/// `_IOR(type, nr, T)`: the kernel fills a `T` for the caller.
pub const fn ior<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_READ, ty, nr, size_of::<T>())
}

/// `_IOW(type, nr, T)`: the caller passes a `T` to the kernel.
pub const fn iow<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_WRITE, ty, nr, size_of::<T>())
}

/// `_IOWR(type, nr, T)`: a `T` goes in and comes back updated.
pub const fn iowr<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_READ | IOC_WRITE, ty, nr, size_of::<T>())
}

/// `_IOC_DIR(request)`.
pub const fn ioc_dir(request: u32) -> u32 {
    (request >> IOC_DIRSHIFT) & ((1 << IOC_DIRBITS) - 1)
}

/// `_IOC_TYPE(request)`.
pub const fn ioc_type(request: u32) -> u8 {
    ((request >> IOC_TYPESHIFT) & ((1 << IOC_TYPEBITS) - 1)) as u8
}

/// `_IOC_NR(request)`.
pub const fn ioc_nr(request: u32) -> u8 {
    ((request >> IOC_NRSHIFT) & ((1 << IOC_NRBITS) - 1)) as u8
}

/// `_IOC_SIZE(request)`.
pub const fn ioc_size(request: u32) -> usize {
    ((request >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1)) as usize
}

/// Defines one constant per `AMDKFD_IOC_*` macro, checks at compile time that each argument
/// struct fits the size field and each number lies in `[AMDKFD_COMMAND_START,
/// AMDKFD_COMMAND_END)`, and lists them all in [`KFD_IOCTLS`].
macro_rules! kfd_ioctls {
    ($( $(#[$doc:meta])* $name:ident = $dir:ident($nr:literal, $args:ty); )*) => {
        $(
            $(#[$doc])*
            #[doc = concat!(
                "\n\n`", stringify!($dir), "(", stringify!($nr), ", struct ",
                stringify!($args), ")` in `linux/kfd_ioctl.h`."
            )]
            pub const $name: u32 = $dir::<$args>(AMDKFD_IOCTL_BASE, $nr);

            const _: () = {
                assert!(size_of::<$args>() <= IOC_SIZE_MAX);
                assert!($nr >= AMDKFD_COMMAND_START && $nr < AMDKFD_COMMAND_END);
            };
        )*

        /// Every `AMDKFD_IOC_*` request of the header, by C name, in command-number order.
        pub const KFD_IOCTLS: &[(&str, u32)] = &[$((stringify!($name), $name)),*];
    };
}

kfd_ioctls! {
    /// Reads the KFD ioctl interface version. Safe on any open `/dev/kfd`.
    AMDKFD_IOC_GET_VERSION = ior(0x01, kfd_ioctl_get_version_args);
    /// Creates a user-mode queue (needs `ACQUIRE_VM` first).
    AMDKFD_IOC_CREATE_QUEUE = iowr(0x02, kfd_ioctl_create_queue_args);
    /// Destroys a queue.
    AMDKFD_IOC_DESTROY_QUEUE = iowr(0x03, kfd_ioctl_destroy_queue_args);
    /// Sets the default/alternate cache policy of an aperture.
    AMDKFD_IOC_SET_MEMORY_POLICY = iow(0x04, kfd_ioctl_set_memory_policy_args);
    /// Reads GPU, CPU (raw monotonic) and boot-time clock counters. Needs no VM.
    AMDKFD_IOC_GET_CLOCK_COUNTERS = iowr(0x05, kfd_ioctl_get_clock_counters_args);
    /// Deprecated fixed-size (7 GPUs) aperture query; use `GET_PROCESS_APERTURES_NEW`.
    AMDKFD_IOC_GET_PROCESS_APERTURES = ior(0x06, kfd_ioctl_get_process_apertures_args);
    /// Updates a queue's properties.
    AMDKFD_IOC_UPDATE_QUEUE = iow(0x07, kfd_ioctl_update_queue_args);
    /// Creates an event.
    AMDKFD_IOC_CREATE_EVENT = iowr(0x08, kfd_ioctl_create_event_args);
    /// Destroys an event.
    AMDKFD_IOC_DESTROY_EVENT = iow(0x09, kfd_ioctl_destroy_event_args);
    /// Signals an event.
    AMDKFD_IOC_SET_EVENT = iow(0x0A, kfd_ioctl_set_event_args);
    /// Resets an event.
    AMDKFD_IOC_RESET_EVENT = iow(0x0B, kfd_ioctl_reset_event_args);
    /// Waits for events.
    AMDKFD_IOC_WAIT_EVENTS = iowr(0x0C, kfd_ioctl_wait_events_args);
    /// Removed debugger API; current kernels return `EPERM`.
    AMDKFD_IOC_DBG_REGISTER_DEPRECATED = iow(0x0D, kfd_ioctl_dbg_register_args);
    /// Removed debugger API; current kernels return `EPERM`.
    AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED = iow(0x0E, kfd_ioctl_dbg_unregister_args);
    /// Removed debugger API; current kernels return `EPERM`.
    AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED = iow(0x0F, kfd_ioctl_dbg_address_watch_args);
    /// Removed debugger API; current kernels return `EPERM`.
    AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED = iow(0x10, kfd_ioctl_dbg_wave_control_args);
    /// Sets the scratch backing virtual address (needs `ACQUIRE_VM`).
    AMDKFD_IOC_SET_SCRATCH_BACKING_VA = iowr(0x11, kfd_ioctl_set_scratch_backing_va_args);
    /// Reads a GPU's tiling configuration. Read-only information.
    AMDKFD_IOC_GET_TILE_CONFIG = iowr(0x12, kfd_ioctl_get_tile_config_args);
    /// Installs a trap handler (needs `ACQUIRE_VM`).
    AMDKFD_IOC_SET_TRAP_HANDLER = iow(0x13, kfd_ioctl_set_trap_handler_args);
    /// Reads the per-GPU apertures of this process; `num_of_nodes = 0` returns the count.
    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW =
        iowr(0x14, kfd_ioctl_get_process_apertures_new_args);
    /// Binds a DRM render node's VM to this KFD process.
    AMDKFD_IOC_ACQUIRE_VM = iow(0x15, kfd_ioctl_acquire_vm_args);
    /// Allocates GPU memory (needs `ACQUIRE_VM`).
    AMDKFD_IOC_ALLOC_MEMORY_OF_GPU = iowr(0x16, kfd_ioctl_alloc_memory_of_gpu_args);
    /// Frees GPU memory.
    AMDKFD_IOC_FREE_MEMORY_OF_GPU = iow(0x17, kfd_ioctl_free_memory_of_gpu_args);
    /// Maps memory to GPUs.
    AMDKFD_IOC_MAP_MEMORY_TO_GPU = iowr(0x18, kfd_ioctl_map_memory_to_gpu_args);
    /// Unmaps memory from GPUs.
    AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU = iowr(0x19, kfd_ioctl_unmap_memory_from_gpu_args);
    /// Sets a queue's compute-unit mask.
    AMDKFD_IOC_SET_CU_MASK = iow(0x1A, kfd_ioctl_set_cu_mask_args);
    /// Reads a queue's wave state.
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE = iowr(0x1B, kfd_ioctl_get_queue_wave_state_args);
    /// Reads information about a DMA-buf.
    AMDKFD_IOC_GET_DMABUF_INFO = iowr(0x1C, kfd_ioctl_get_dmabuf_info_args);
    /// Imports a DMA-buf (needs `ACQUIRE_VM`).
    AMDKFD_IOC_IMPORT_DMABUF = iowr(0x1D, kfd_ioctl_import_dmabuf_args);
    /// Allocates global wave sync resources for a queue.
    AMDKFD_IOC_ALLOC_QUEUE_GWS = iowr(0x1E, kfd_ioctl_alloc_queue_gws_args);
    /// Opens an SMI event file descriptor for a GPU (read-only telemetry).
    AMDKFD_IOC_SMI_EVENTS = iowr(0x1F, kfd_ioctl_smi_events_args);
    /// Shared virtual memory operations (needs `ACQUIRE_VM`); the struct has a flexible
    /// attribute array, not counted in the encoded size.
    AMDKFD_IOC_SVM = iowr(0x20, kfd_ioctl_svm_args);
    /// Sets or (with a negative value) queries the process's XNACK mode.
    AMDKFD_IOC_SET_XNACK_MODE = iowr(0x21, kfd_ioctl_set_xnack_mode_args);
    /// Checkpoint/restore operations (needs `CAP_CHECKPOINT_RESTORE` or `CAP_SYS_ADMIN`).
    AMDKFD_IOC_CRIU_OP = iowr(0x22, kfd_ioctl_criu_args);
    /// Reads the VRAM still available for KFD allocations on a GPU (interface 1.9+).
    AMDKFD_IOC_AVAILABLE_MEMORY = iowr(0x23, kfd_ioctl_get_available_memory_args);
}
