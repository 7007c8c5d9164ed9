//! Pins the ABI facts the rest of the workspace relies on: ioctl request numbers and the sizes
//! (and a few offsets) of the structs passed to the kernel or to libhsakmt.
//!
//! The expected request numbers were computed by gcc from Debian's
//! `/usr/include/linux/kfd_ioctl.h` (linux-libc-dev 6.1, KFD interface 1.11) and agree with the
//! kernel's current `include/uapi/linux/kfd_ioctl.h` except `CREATE_QUEUE`: there it is
//! `0xc0604b02` (96 bytes: `kfd_ioctl_create_queue_args` gained fields); the 1.11 struct is 88
//! bytes, `0xc0584b02`. The kernel accepts the shorter size.

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};

use hsakmt_sys::hsakmt::{
    HSA_PUBLIC_NAME_SIZE, HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, HSAKMT_STATUS_SUCCESS,
    HsaCacheProperties, HsaClockCounters, HsaIoLinkProperties, HsaMemoryProperties,
    HsaNodeProperties, HsaSystemProperties, HsaVersionInfo, INVALID_QUEUEID,
};
use hsakmt_sys::ioctl::{self, *};
use hsakmt_sys::kfd::{self, *};

/// Every `AMDKFD_IOC_*` of the 1.11 header with its value as computed by gcc.
const EXPECTED: &[(&str, u32)] = &[
    ("AMDKFD_IOC_GET_VERSION", 0x80084b01),
    ("AMDKFD_IOC_CREATE_QUEUE", 0xc0584b02),
    ("AMDKFD_IOC_DESTROY_QUEUE", 0xc0084b03),
    ("AMDKFD_IOC_SET_MEMORY_POLICY", 0x40204b04),
    ("AMDKFD_IOC_GET_CLOCK_COUNTERS", 0xc0284b05),
    ("AMDKFD_IOC_GET_PROCESS_APERTURES", 0x81904b06),
    ("AMDKFD_IOC_UPDATE_QUEUE", 0x40184b07),
    ("AMDKFD_IOC_CREATE_EVENT", 0xc0204b08),
    ("AMDKFD_IOC_DESTROY_EVENT", 0x40084b09),
    ("AMDKFD_IOC_SET_EVENT", 0x40084b0a),
    ("AMDKFD_IOC_RESET_EVENT", 0x40084b0b),
    ("AMDKFD_IOC_WAIT_EVENTS", 0xc0184b0c),
    ("AMDKFD_IOC_DBG_REGISTER_DEPRECATED", 0x40084b0d),
    ("AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED", 0x40084b0e),
    ("AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED", 0x40104b0f),
    ("AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED", 0x40104b10),
    ("AMDKFD_IOC_SET_SCRATCH_BACKING_VA", 0xc0104b11),
    ("AMDKFD_IOC_GET_TILE_CONFIG", 0xc0284b12),
    ("AMDKFD_IOC_SET_TRAP_HANDLER", 0x40184b13),
    ("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", 0xc0104b14),
    ("AMDKFD_IOC_ACQUIRE_VM", 0x40084b15),
    ("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", 0xc0284b16),
    ("AMDKFD_IOC_FREE_MEMORY_OF_GPU", 0x40084b17),
    ("AMDKFD_IOC_MAP_MEMORY_TO_GPU", 0xc0184b18),
    ("AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", 0xc0184b19),
    ("AMDKFD_IOC_SET_CU_MASK", 0x40104b1a),
    ("AMDKFD_IOC_GET_QUEUE_WAVE_STATE", 0xc0184b1b),
    ("AMDKFD_IOC_GET_DMABUF_INFO", 0xc0204b1c),
    ("AMDKFD_IOC_IMPORT_DMABUF", 0xc0184b1d),
    ("AMDKFD_IOC_ALLOC_QUEUE_GWS", 0xc0104b1e),
    ("AMDKFD_IOC_SMI_EVENTS", 0xc0084b1f),
    ("AMDKFD_IOC_SVM", 0xc0184b20),
    ("AMDKFD_IOC_SET_XNACK_MODE", 0xc0044b21),
    ("AMDKFD_IOC_CRIU_OP", 0xc0384b22),
    ("AMDKFD_IOC_AVAILABLE_MEMORY", 0xc0104b23),
];

#[test]
fn request_numbers_used_by_the_probe() {
    assert_eq!(AMDKFD_IOC_GET_VERSION, 0x8008_4b01);
    assert_eq!(AMDKFD_IOC_GET_CLOCK_COUNTERS, 0xc028_4b05);
    assert_eq!(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, 0xc010_4b14);
    assert_eq!(AMDKFD_IOC_AVAILABLE_MEMORY, 0xc010_4b23);
    assert_eq!(AMDKFD_IOC_SET_XNACK_MODE, 0xc004_4b21);
    assert_eq!(AMDKFD_IOC_GET_TILE_CONFIG, 0xc028_4b12);
    assert_eq!(AMDKFD_IOC_SMI_EVENTS, 0xc008_4b1f);
    assert_eq!(AMDKFD_IOC_GET_PROCESS_APERTURES, 0x8190_4b06);
    assert_eq!(AMDKFD_IOC_ACQUIRE_VM, 0x4008_4b15);
}

#[test]
fn every_request_number_matches_gcc() {
    assert_eq!(ioctl::KFD_IOCTLS, EXPECTED);
}

#[test]
fn request_numbers_decode_to_their_parts() {
    for (i, &(name, request)) in KFD_IOCTLS.iter().enumerate() {
        assert_eq!(ioc_type(request), b'K', "{name}");
        assert_eq!(ioc_type(request), kfd::AMDKFD_IOCTL_BASE, "{name}");
        assert_eq!(
            usize::from(ioc_nr(request)),
            i + 1,
            "{name}: numbers are 0x01.."
        );
        assert_ne!(
            ioc_dir(request),
            IOC_NONE,
            "{name}: every KFD ioctl carries data"
        );
        let rebuilt = ioc(
            ioc_dir(request),
            ioc_type(request),
            ioc_nr(request),
            ioc_size(request),
        );
        assert_eq!(rebuilt, request, "{name}");
    }
    assert_eq!(
        KFD_IOCTLS.len(),
        (kfd::AMDKFD_COMMAND_END - kfd::AMDKFD_COMMAND_START) as usize
    );
}

#[test]
fn ioc_encoding_matches_asm_generic() {
    // Field positions (x86_64 and every asm-generic architecture).
    assert_eq!(ioc(0, 0, 0xff, 0), 0x0000_00ff);
    assert_eq!(ioc(0, 0xff, 0, 0), 0x0000_ff00);
    assert_eq!(ioc(0, 0, 0, IOC_SIZE_MAX), 0x3fff_0000);
    assert_eq!(ioc(IOC_READ | IOC_WRITE, 0, 0, 0), 0xc000_0000);
    assert_eq!(io(b'K', 1), 0x0000_4b01);
    assert_eq!(ior::<[u8; 8]>(b'K', 1), 0x8008_4b01);
    assert_eq!(iow::<[u8; 8]>(b'K', 1), 0x4008_4b01);
    assert_eq!(iowr::<[u8; 8]>(b'K', 1), 0xc008_4b01);
    // Out-of-range inputs are truncated like the C macro, never a panic.
    assert_eq!(ioc(7, 0, 0, 0), 0xc000_0000);
    assert_eq!(ioc_size(ioc(0, 0, 0, IOC_SIZE_MAX + 2)), 1);
}

#[test]
fn request_sizes_are_the_generated_struct_sizes() {
    let pairs = [
        (
            AMDKFD_IOC_GET_VERSION,
            size_of::<kfd_ioctl_get_version_args>(),
        ),
        (
            AMDKFD_IOC_GET_CLOCK_COUNTERS,
            size_of::<kfd_ioctl_get_clock_counters_args>(),
        ),
        (
            AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
            size_of::<kfd_ioctl_get_process_apertures_new_args>(),
        ),
        (
            AMDKFD_IOC_AVAILABLE_MEMORY,
            size_of::<kfd_ioctl_get_available_memory_args>(),
        ),
        (
            AMDKFD_IOC_SET_XNACK_MODE,
            size_of::<kfd_ioctl_set_xnack_mode_args>(),
        ),
        (
            AMDKFD_IOC_GET_TILE_CONFIG,
            size_of::<kfd_ioctl_get_tile_config_args>(),
        ),
        (
            AMDKFD_IOC_SMI_EVENTS,
            size_of::<kfd_ioctl_smi_events_args>(),
        ),
    ];
    for (request, size) in pairs {
        assert_eq!(ioc_size(request), size, "{request:#x}");
    }
}

#[test]
fn kfd_struct_sizes() {
    assert_eq!(size_of::<kfd_ioctl_get_version_args>(), 8);
    assert_eq!(size_of::<kfd_ioctl_get_clock_counters_args>(), 40);
    assert_eq!(size_of::<kfd_ioctl_get_process_apertures_new_args>(), 16);
    assert_eq!(size_of::<kfd_ioctl_get_process_apertures_args>(), 400);
    assert_eq!(size_of::<kfd_ioctl_get_available_memory_args>(), 16);
    assert_eq!(size_of::<kfd_process_device_apertures>(), 56);
    assert_eq!(size_of::<kfd_ioctl_set_xnack_mode_args>(), 4);
    assert_eq!(size_of::<kfd_ioctl_get_tile_config_args>(), 40);
    assert_eq!(size_of::<kfd_ioctl_smi_events_args>(), 8);
    assert_eq!(size_of::<kfd_ioctl_acquire_vm_args>(), 8);
    assert_eq!(size_of::<kfd_ioctl_create_queue_args>(), 88);
}

#[test]
fn kfd_field_offsets() {
    assert_eq!(offset_of!(kfd_ioctl_get_version_args, minor_version), 4);
    assert_eq!(
        offset_of!(kfd_ioctl_get_clock_counters_args, system_clock_freq),
        24
    );
    assert_eq!(offset_of!(kfd_ioctl_get_clock_counters_args, gpu_id), 32);
    assert_eq!(
        offset_of!(kfd_ioctl_get_process_apertures_new_args, num_of_nodes),
        8
    );
    assert_eq!(offset_of!(kfd_ioctl_get_available_memory_args, gpu_id), 8);
    assert_eq!(offset_of!(kfd_process_device_apertures, gpu_id), 48);
    assert_eq!(offset_of!(kfd_ioctl_smi_events_args, anon_fd), 4);
}

#[test]
fn kfd_header_version() {
    assert_eq!(KFD_IOCTL_MAJOR_VERSION, 1);
    assert_eq!(KFD_IOCTL_MINOR_VERSION, 11);
    assert_eq!(AMDKFD_COMMAND_START, 0x01);
    assert_eq!(AMDKFD_COMMAND_END, 0x24);
}

/// The sizes of libhsakmt's structs for the ROCm 5.2.3 ABI (`#pragma pack(4)`), as bindgen
/// (and gcc) lay them out. `HsaNodeProperties` grew in ROCm 6.3 (`OverrideEngineId`).
#[test]
fn hsakmt_struct_sizes() {
    assert_eq!(size_of::<HsaVersionInfo>(), 8);
    assert_eq!(size_of::<HsaSystemProperties>(), 16);
    assert_eq!(size_of::<HsaNodeProperties>(), 356);
    assert_eq!(size_of::<HsaMemoryProperties>(), 32);
    assert_eq!(size_of::<HsaCacheProperties>(), 1056);
    assert_eq!(size_of::<HsaIoLinkProperties>(), 48);
    assert_eq!(size_of::<HsaClockCounters>(), 32);
}

/// Offsets in `HsaNodeProperties` (gcc agrees). Everything from `VendorId` on moved in ROCm
/// 6.3; these pin what the 5.2.3 declarations say, not what a newer library writes.
#[test]
fn hsakmt_node_properties_offsets() {
    assert_eq!(offset_of!(HsaNodeProperties, NumCPUCores), 0);
    assert_eq!(offset_of!(HsaNodeProperties, EngineId), 68);
    assert_eq!(offset_of!(HsaNodeProperties, VendorId), 72);
    assert_eq!(offset_of!(HsaNodeProperties, LocalMemSize), 80);
    assert_eq!(offset_of!(HsaNodeProperties, MarketingName), 100);
    assert_eq!(offset_of!(HsaNodeProperties, UniqueID), 328);
    assert_eq!(offset_of!(HsaSystemProperties, NumNodes), 0);
    assert_eq!(offset_of!(HsaVersionInfo, KernelInterfaceMinorVersion), 4);
}

#[test]
fn hsakmt_constants() {
    assert_eq!(HSAKMT_STATUS_SUCCESS, 0);
    assert_eq!(HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, 20);
    assert_eq!(HSA_PUBLIC_NAME_SIZE, 64);
    assert_eq!(INVALID_QUEUEID, u64::MAX);
}

/// Cross-check against the header itself where it is installed: every `AMDKFD_IOC_*` macro has
/// a constant, and no constant lacks a macro.
#[test]
fn every_header_ioctl_has_a_constant() {
    const HEADER: &str = "/usr/include/linux/kfd_ioctl.h";
    let Ok(text) = std::fs::read_to_string(HEADER) else {
        println!("skipped: {HEADER} not installed (Debian package linux-libc-dev)");
        return;
    };
    let in_header: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("#define "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("AMDKFD_IOC_"))
        .collect();
    let defined: BTreeSet<&str> = KFD_IOCTLS.iter().map(|&(name, _)| name).collect();
    assert_eq!(defined, in_header);
}
