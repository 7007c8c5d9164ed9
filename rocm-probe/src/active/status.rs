//! Names and meanings of the status codes libhsakmt, ROCr and HIP return, so that every result
//! the active probe shows is named and explained (issue 5: "every `HSAKMT_STATUS_*` … every
//! `hsa_status_t` mapped to its name and meaning").

use hsakmt_sys::hip as h;
use hsakmt_sys::hsa as r;
use hsakmt_sys::hsakmt as k;

/// `(code, name, meaning)` of every `HSAKMT_STATUS` in `hsakmt.h`.
pub const HSAKMT: &[(u32, &str, &str)] = &[
    (k::HSAKMT_STATUS_SUCCESS, "HSAKMT_STATUS_SUCCESS", "success"),
    (
        k::HSAKMT_STATUS_ERROR,
        "HSAKMT_STATUS_ERROR",
        "unspecified error",
    ),
    (
        k::HSAKMT_STATUS_DRIVER_MISMATCH,
        "HSAKMT_STATUS_DRIVER_MISMATCH",
        "the KFD ioctl interface's major version is not the one this libhsakmt was built for",
    ),
    (
        k::HSAKMT_STATUS_INVALID_PARAMETER,
        "HSAKMT_STATUS_INVALID_PARAMETER",
        "an argument is invalid",
    ),
    (
        k::HSAKMT_STATUS_INVALID_HANDLE,
        "HSAKMT_STATUS_INVALID_HANDLE",
        "a handle is invalid",
    ),
    (
        k::HSAKMT_STATUS_INVALID_NODE_UNIT,
        "HSAKMT_STATUS_INVALID_NODE_UNIT",
        "no such node (an id beyond what hsaKmtAcquireSystemProperties reported)",
    ),
    (
        k::HSAKMT_STATUS_NO_MEMORY,
        "HSAKMT_STATUS_NO_MEMORY",
        "out of host memory",
    ),
    (
        k::HSAKMT_STATUS_BUFFER_TOO_SMALL,
        "HSAKMT_STATUS_BUFFER_TOO_SMALL",
        "a buffer is too small",
    ),
    (
        k::HSAKMT_STATUS_NOT_IMPLEMENTED,
        "HSAKMT_STATUS_NOT_IMPLEMENTED",
        "not implemented",
    ),
    (
        k::HSAKMT_STATUS_NOT_SUPPORTED,
        "HSAKMT_STATUS_NOT_SUPPORTED",
        "not supported by this kernel or GPU",
    ),
    (
        k::HSAKMT_STATUS_UNAVAILABLE,
        "HSAKMT_STATUS_UNAVAILABLE",
        "a resource is unavailable",
    ),
    (
        k::HSAKMT_STATUS_OUT_OF_RESOURCES,
        "HSAKMT_STATUS_OUT_OF_RESOURCES",
        "out of resources",
    ),
    (
        k::HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED,
        "HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED",
        "/dev/kfd could not be opened: no KFD, or no permission",
    ),
    (
        k::HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR,
        "HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR",
        "an ioctl on /dev/kfd failed",
    ),
    (
        k::HSAKMT_STATUS_KERNEL_ALREADY_OPENED,
        "HSAKMT_STATUS_KERNEL_ALREADY_OPENED",
        "KFD is already open in this process (hsaKmtOpenKFD is reference-counted)",
    ),
    (
        k::HSAKMT_STATUS_HSAMMU_UNAVAILABLE,
        "HSAKMT_STATUS_HSAMMU_UNAVAILABLE",
        "the IOMMU/ATS the GPU needs is unavailable",
    ),
    (
        k::HSAKMT_STATUS_WAIT_FAILURE,
        "HSAKMT_STATUS_WAIT_FAILURE",
        "a wait failed",
    ),
    (
        k::HSAKMT_STATUS_WAIT_TIMEOUT,
        "HSAKMT_STATUS_WAIT_TIMEOUT",
        "a wait timed out",
    ),
    (
        k::HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED,
        "HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED",
        "memory already registered",
    ),
    (
        k::HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
        "HSAKMT_STATUS_MEMORY_NOT_REGISTERED",
        "memory not registered",
    ),
    (
        k::HSAKMT_STATUS_MEMORY_ALIGNMENT,
        "HSAKMT_STATUS_MEMORY_ALIGNMENT",
        "memory not aligned as required",
    ),
];

/// `(code, name, meaning)` of every `hsa_status_t` in `hsa.h` and `hsa_ext_amd.h` (5.2.3).
pub const HSA: &[(u32, &str, &str)] = &[
    (r::HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS", "success"),
    (
        r::HSA_STATUS_INFO_BREAK,
        "HSA_STATUS_INFO_BREAK",
        "a callback stopped an iteration",
    ),
    (r::HSA_STATUS_ERROR, "HSA_STATUS_ERROR", "generic error"),
    (
        r::HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        "an argument is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
        "the queue could not be created with these arguments",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ALLOCATION,
        "HSA_STATUS_ERROR_INVALID_ALLOCATION",
        "an allocation is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_AGENT,
        "HSA_STATUS_ERROR_INVALID_AGENT",
        "the agent is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_REGION,
        "HSA_STATUS_ERROR_INVALID_REGION",
        "the memory region is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SIGNAL,
        "HSA_STATUS_ERROR_INVALID_SIGNAL",
        "the signal is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_QUEUE,
        "HSA_STATUS_ERROR_INVALID_QUEUE",
        "the queue is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        "the runtime could not allocate what it needs; from hsa_init, usually that /dev/kfd \
         could not be opened or no GPU agent came up",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
        "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
        "an AQL packet is malformed",
    ),
    (
        r::HSA_STATUS_ERROR_RESOURCE_FREE,
        "HSA_STATUS_ERROR_RESOURCE_FREE",
        "a resource could not be freed",
    ),
    (
        r::HSA_STATUS_ERROR_NOT_INITIALIZED,
        "HSA_STATUS_ERROR_NOT_INITIALIZED",
        "the runtime is not initialised (hsa_init did not succeed)",
    ),
    (
        r::HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
        "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
        "the runtime's reference count overflowed",
    ),
    (
        r::HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
        "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS",
        "arguments are incompatible",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_INDEX,
        "HSA_STATUS_ERROR_INVALID_INDEX",
        "an index is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ISA,
        "HSA_STATUS_ERROR_INVALID_ISA",
        "the ISA is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ISA_NAME,
        "HSA_STATUS_ERROR_INVALID_ISA_NAME",
        "the ISA name is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
        "the code object is invalid or not for this agent",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE",
        "the executable is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
        "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
        "the executable is frozen",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME",
        "no such symbol",
    ),
    (
        r::HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
        "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED",
        "the variable is already defined",
    ),
    (
        r::HSA_STATUS_ERROR_VARIABLE_UNDEFINED,
        "HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
        "the variable is undefined",
    ),
    (
        r::HSA_STATUS_ERROR_EXCEPTION,
        "HSA_STATUS_ERROR_EXCEPTION",
        "an HSAIL exception occurred",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        "the code symbol is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
        "the executable symbol is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_FILE,
        "HSA_STATUS_ERROR_INVALID_FILE",
        "the file is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        "the code object reader is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CACHE,
        "HSA_STATUS_ERROR_INVALID_CACHE",
        "the cache is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_WAVEFRONT,
        "HSA_STATUS_ERROR_INVALID_WAVEFRONT",
        "the wavefront is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP,
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP",
        "the signal group is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_RUNTIME_STATE,
        "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE",
        "the runtime is in a state that does not allow this",
    ),
    (
        r::HSA_STATUS_ERROR_FATAL,
        "HSA_STATUS_ERROR_FATAL",
        "the runtime hit a fatal error",
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
        "HSA_STATUS_ERROR_INVALID_MEMORY_POOL",
        "the memory pool is invalid",
    ),
    (
        r::HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION",
        "an access violated a memory aperture",
    ),
    (
        r::HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
        "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION",
        "the GPU hit an illegal instruction",
    ),
    (
        r::HSA_STATUS_ERROR_MEMORY_FAULT,
        "HSA_STATUS_ERROR_MEMORY_FAULT",
        "the GPU hit a memory fault",
    ),
    (
        r::HSA_STATUS_CU_MASK_REDUCED,
        "HSA_STATUS_CU_MASK_REDUCED",
        "the CU mask was reduced",
    ),
];

/// `(code, name, meaning)` of the `hipError_t` values the probe's HIP calls return.
pub const HIP: &[(i32, &str, &str)] = &[
    (h::hipSuccess as i32, "hipSuccess", "success"),
    (
        h::hipErrorNotInitialized as i32,
        "hipErrorNotInitialized",
        "HIP could not initialise the runtime",
    ),
    (
        h::hipErrorInsufficientDriver as i32,
        "hipErrorInsufficientDriver",
        "the driver is too old for this HIP",
    ),
    (
        h::hipErrorNoDevice as i32,
        "hipErrorNoDevice",
        "no GPU device is visible to HIP (none found, none accessible, or all hidden by \
         HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES)",
    ),
    (
        h::hipErrorInvalidDevice as i32,
        "hipErrorInvalidDevice",
        "no such device ordinal",
    ),
];

fn lookup<T: PartialEq + Copy>(
    table: &[(T, &'static str, &'static str)],
    code: T,
) -> Option<(&'static str, &'static str)> {
    table
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, n, m)| (*n, *m))
}

/// The name of an `HSAKMT_STATUS` (`HSAKMT_STATUS_UNKNOWN(99)` for a code not in the header).
pub fn hsakmt_name(code: u32) -> String {
    lookup(HSAKMT, code).map_or_else(
        || format!("HSAKMT_STATUS_UNKNOWN({code})"),
        |(n, _)| n.to_owned(),
    )
}

/// The meaning of an `HSAKMT_STATUS` name.
pub fn hsakmt_meaning(name: &str) -> Option<&'static str> {
    HSAKMT
        .iter()
        .find(|(_, n, _)| *n == name)
        .map(|(_, _, m)| *m)
}

/// The name of an `hsa_status_t` (`HSA_STATUS_UNKNOWN(0x…)` for a code not in the headers).
pub fn hsa_name(code: u32) -> String {
    lookup(HSA, code).map_or_else(
        || format!("HSA_STATUS_UNKNOWN({code:#x})"),
        |(n, _)| n.to_owned(),
    )
}

/// The meaning of an `hsa_status_t` name.
pub fn hsa_meaning(name: &str) -> Option<&'static str> {
    HSA.iter().find(|(_, n, _)| *n == name).map(|(_, _, m)| *m)
}

/// The name of a `hipError_t` (`hipError(…)` for one not in the table).
pub fn hip_name(code: i32) -> String {
    lookup(HIP, code).map_or_else(|| format!("hipError({code})"), |(n, _)| n.to_owned())
}

/// The meaning of a `hipError_t` name.
pub fn hip_meaning(name: &str) -> Option<&'static str> {
    HIP.iter().find(|(_, n, _)| *n == name).map(|(_, _, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_known_codes_round_trip() {
        for table in [HSAKMT, HSA] {
            let mut seen = std::collections::HashSet::new();
            for (code, name, meaning) in table {
                assert!(seen.insert(*code), "{name}");
                assert!(!meaning.is_empty());
            }
        }
        assert_eq!(
            hsakmt_name(20),
            "HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED"
        );
        assert_eq!(hsa_name(0x1008), "HSA_STATUS_ERROR_OUT_OF_RESOURCES");
        assert_eq!(hsa_name(0x100B), "HSA_STATUS_ERROR_NOT_INITIALIZED");
        assert_eq!(hip_name(100), "hipErrorNoDevice");
        assert_eq!(hsakmt_name(99), "HSAKMT_STATUS_UNKNOWN(99)");
        assert_eq!(hsa_name(0x7777), "HSA_STATUS_UNKNOWN(0x7777)");
        assert!(
            hsa_meaning("HSA_STATUS_ERROR_OUT_OF_RESOURCES")
                .unwrap()
                .contains("/dev/kfd")
        );
    }
}
