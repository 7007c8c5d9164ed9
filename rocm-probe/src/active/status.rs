//! Names and meanings of the status codes libhsakmt, ROCr and HIP return, so that every result
//! the active probe shows is named and explained: every `HSAKMT_STATUS_*`, every `hsa_status_t`
//! and the HIP errors the probe can meet, each with its name and meaning.

use hsakmt_sys::hip as h;
use hsakmt_sys::hsa as r;
use hsakmt_sys::hsakmt as k;

use crate::msg;

/// A status's meaning in the current language.
pub type Meaning = fn() -> String;

/// `(code, name, meaning)` of every `HSAKMT_STATUS` in `hsakmt.h`.
pub const HSAKMT: &[(u32, &str, Meaning)] = &[
    (k::HSAKMT_STATUS_SUCCESS, "HSAKMT_STATUS_SUCCESS", || {
        msg!("active.status-hsakmt-success")
    }),
    (k::HSAKMT_STATUS_ERROR, "HSAKMT_STATUS_ERROR", || {
        msg!("active.status-hsakmt-error")
    }),
    (
        k::HSAKMT_STATUS_DRIVER_MISMATCH,
        "HSAKMT_STATUS_DRIVER_MISMATCH",
        || msg!("active.status-hsakmt-driver-mismatch"),
    ),
    (
        k::HSAKMT_STATUS_INVALID_PARAMETER,
        "HSAKMT_STATUS_INVALID_PARAMETER",
        || msg!("active.status-hsakmt-invalid-parameter"),
    ),
    (
        k::HSAKMT_STATUS_INVALID_HANDLE,
        "HSAKMT_STATUS_INVALID_HANDLE",
        || msg!("active.status-hsakmt-invalid-handle"),
    ),
    (
        k::HSAKMT_STATUS_INVALID_NODE_UNIT,
        "HSAKMT_STATUS_INVALID_NODE_UNIT",
        || msg!("active.status-hsakmt-invalid-node-unit"),
    ),
    (
        k::HSAKMT_STATUS_NO_MEMORY,
        "HSAKMT_STATUS_NO_MEMORY",
        || msg!("active.status-hsakmt-no-memory"),
    ),
    (
        k::HSAKMT_STATUS_BUFFER_TOO_SMALL,
        "HSAKMT_STATUS_BUFFER_TOO_SMALL",
        || msg!("active.status-hsakmt-buffer-too-small"),
    ),
    (
        k::HSAKMT_STATUS_NOT_IMPLEMENTED,
        "HSAKMT_STATUS_NOT_IMPLEMENTED",
        || msg!("active.status-hsakmt-not-implemented"),
    ),
    (
        k::HSAKMT_STATUS_NOT_SUPPORTED,
        "HSAKMT_STATUS_NOT_SUPPORTED",
        || msg!("active.status-hsakmt-not-supported"),
    ),
    (
        k::HSAKMT_STATUS_UNAVAILABLE,
        "HSAKMT_STATUS_UNAVAILABLE",
        || msg!("active.status-hsakmt-unavailable"),
    ),
    (
        k::HSAKMT_STATUS_OUT_OF_RESOURCES,
        "HSAKMT_STATUS_OUT_OF_RESOURCES",
        || msg!("active.status-hsakmt-out-of-resources"),
    ),
    (
        k::HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED,
        "HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED",
        || msg!("active.status-hsakmt-kernel-io-channel-not-opened"),
    ),
    (
        k::HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR,
        "HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR",
        || msg!("active.status-hsakmt-kernel-communication-error"),
    ),
    (
        k::HSAKMT_STATUS_KERNEL_ALREADY_OPENED,
        "HSAKMT_STATUS_KERNEL_ALREADY_OPENED",
        || msg!("active.status-hsakmt-kernel-already-opened"),
    ),
    (
        k::HSAKMT_STATUS_HSAMMU_UNAVAILABLE,
        "HSAKMT_STATUS_HSAMMU_UNAVAILABLE",
        || msg!("active.status-hsakmt-hsammu-unavailable"),
    ),
    (
        k::HSAKMT_STATUS_WAIT_FAILURE,
        "HSAKMT_STATUS_WAIT_FAILURE",
        || msg!("active.status-hsakmt-wait-failure"),
    ),
    (
        k::HSAKMT_STATUS_WAIT_TIMEOUT,
        "HSAKMT_STATUS_WAIT_TIMEOUT",
        || msg!("active.status-hsakmt-wait-timeout"),
    ),
    (
        k::HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED,
        "HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED",
        || msg!("active.status-hsakmt-memory-already-registered"),
    ),
    (
        k::HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
        "HSAKMT_STATUS_MEMORY_NOT_REGISTERED",
        || msg!("active.status-hsakmt-memory-not-registered"),
    ),
    (
        k::HSAKMT_STATUS_MEMORY_ALIGNMENT,
        "HSAKMT_STATUS_MEMORY_ALIGNMENT",
        || msg!("active.status-hsakmt-memory-alignment"),
    ),
];

/// `(code, name, meaning)` of every `hsa_status_t` in `hsa.h` and `hsa_ext_amd.h` (5.2.3).
pub const HSA: &[(u32, &str, Meaning)] = &[
    (r::HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS", || {
        msg!("active.status-hsa-success")
    }),
    (r::HSA_STATUS_INFO_BREAK, "HSA_STATUS_INFO_BREAK", || {
        msg!("active.status-hsa-info-break")
    }),
    (r::HSA_STATUS_ERROR, "HSA_STATUS_ERROR", || {
        msg!("active.status-hsa-error")
    }),
    (
        r::HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        || msg!("active.status-hsa-error-invalid-argument"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
        || msg!("active.status-hsa-error-invalid-queue-creation"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ALLOCATION,
        "HSA_STATUS_ERROR_INVALID_ALLOCATION",
        || msg!("active.status-hsa-error-invalid-allocation"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_AGENT,
        "HSA_STATUS_ERROR_INVALID_AGENT",
        || msg!("active.status-hsa-error-invalid-agent"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_REGION,
        "HSA_STATUS_ERROR_INVALID_REGION",
        || msg!("active.status-hsa-error-invalid-region"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SIGNAL,
        "HSA_STATUS_ERROR_INVALID_SIGNAL",
        || msg!("active.status-hsa-error-invalid-signal"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_QUEUE,
        "HSA_STATUS_ERROR_INVALID_QUEUE",
        || msg!("active.status-hsa-error-invalid-queue"),
    ),
    (
        r::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        || msg!("active.status-hsa-error-out-of-resources"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
        "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
        || msg!("active.status-hsa-error-invalid-packet-format"),
    ),
    (
        r::HSA_STATUS_ERROR_RESOURCE_FREE,
        "HSA_STATUS_ERROR_RESOURCE_FREE",
        || msg!("active.status-hsa-error-resource-free"),
    ),
    (
        r::HSA_STATUS_ERROR_NOT_INITIALIZED,
        "HSA_STATUS_ERROR_NOT_INITIALIZED",
        || msg!("active.status-hsa-error-not-initialized"),
    ),
    (
        r::HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
        "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
        || msg!("active.status-hsa-error-refcount-overflow"),
    ),
    (
        r::HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
        "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS",
        || msg!("active.status-hsa-error-incompatible-arguments"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_INDEX,
        "HSA_STATUS_ERROR_INVALID_INDEX",
        || msg!("active.status-hsa-error-invalid-index"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ISA,
        "HSA_STATUS_ERROR_INVALID_ISA",
        || msg!("active.status-hsa-error-invalid-isa"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_ISA_NAME,
        "HSA_STATUS_ERROR_INVALID_ISA_NAME",
        || msg!("active.status-hsa-error-invalid-isa-name"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
        || msg!("active.status-hsa-error-invalid-code-object"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE",
        || msg!("active.status-hsa-error-invalid-executable"),
    ),
    (
        r::HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
        "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
        || msg!("active.status-hsa-error-frozen-executable"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME",
        || msg!("active.status-hsa-error-invalid-symbol-name"),
    ),
    (
        r::HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
        "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED",
        || msg!("active.status-hsa-error-variable-already-defined"),
    ),
    (
        r::HSA_STATUS_ERROR_VARIABLE_UNDEFINED,
        "HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
        || msg!("active.status-hsa-error-variable-undefined"),
    ),
    (
        r::HSA_STATUS_ERROR_EXCEPTION,
        "HSA_STATUS_ERROR_EXCEPTION",
        || msg!("active.status-hsa-error-exception"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        || msg!("active.status-hsa-error-invalid-code-symbol"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
        || msg!("active.status-hsa-error-invalid-executable-symbol"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_FILE,
        "HSA_STATUS_ERROR_INVALID_FILE",
        || msg!("active.status-hsa-error-invalid-file"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        || msg!("active.status-hsa-error-invalid-code-object-reader"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_CACHE,
        "HSA_STATUS_ERROR_INVALID_CACHE",
        || msg!("active.status-hsa-error-invalid-cache"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_WAVEFRONT,
        "HSA_STATUS_ERROR_INVALID_WAVEFRONT",
        || msg!("active.status-hsa-error-invalid-wavefront"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP,
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP",
        || msg!("active.status-hsa-error-invalid-signal-group"),
    ),
    (
        r::HSA_STATUS_ERROR_INVALID_RUNTIME_STATE,
        "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE",
        || msg!("active.status-hsa-error-invalid-runtime-state"),
    ),
    (r::HSA_STATUS_ERROR_FATAL, "HSA_STATUS_ERROR_FATAL", || {
        msg!("active.status-hsa-error-fatal")
    }),
    (
        r::HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
        "HSA_STATUS_ERROR_INVALID_MEMORY_POOL",
        || msg!("active.status-hsa-error-invalid-memory-pool"),
    ),
    (
        r::HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION",
        || msg!("active.status-hsa-error-memory-aperture-violation"),
    ),
    (
        r::HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
        "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION",
        || msg!("active.status-hsa-error-illegal-instruction"),
    ),
    (
        r::HSA_STATUS_ERROR_MEMORY_FAULT,
        "HSA_STATUS_ERROR_MEMORY_FAULT",
        || msg!("active.status-hsa-error-memory-fault"),
    ),
    (
        r::HSA_STATUS_CU_MASK_REDUCED,
        "HSA_STATUS_CU_MASK_REDUCED",
        || msg!("active.status-hsa-cu-mask-reduced"),
    ),
];

/// `(code, name, meaning)` of the `hipError_t` values the probe's HIP calls return.
pub const HIP: &[(i32, &str, Meaning)] = &[
    (h::hipSuccess as i32, "hipSuccess", || {
        msg!("active.status-hip-success")
    }),
    (
        h::hipErrorNotInitialized as i32,
        "hipErrorNotInitialized",
        || msg!("active.status-hip-error-not-initialized"),
    ),
    (
        h::hipErrorInsufficientDriver as i32,
        "hipErrorInsufficientDriver",
        || msg!("active.status-hip-error-insufficient-driver"),
    ),
    (h::hipErrorNoDevice as i32, "hipErrorNoDevice", || {
        msg!("active.status-hip-error-no-device")
    }),
    (
        h::hipErrorInvalidDevice as i32,
        "hipErrorInvalidDevice",
        || msg!("active.status-hip-error-invalid-device"),
    ),
];

fn lookup<T: PartialEq + Copy>(
    table: &[(T, &'static str, Meaning)],
    code: T,
) -> Option<(&'static str, Meaning)> {
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

/// The meaning of an `HSAKMT_STATUS` name, in the current language.
pub fn hsakmt_meaning(name: &str) -> Option<String> {
    HSAKMT
        .iter()
        .find(|(_, n, _)| *n == name)
        .map(|(_, _, m)| m())
}

/// The name of an `hsa_status_t` (`HSA_STATUS_UNKNOWN(0x…)` for a code not in the headers).
pub fn hsa_name(code: u32) -> String {
    lookup(HSA, code).map_or_else(
        || format!("HSA_STATUS_UNKNOWN({code:#x})"),
        |(n, _)| n.to_owned(),
    )
}

/// The meaning of an `hsa_status_t` name, in the current language.
pub fn hsa_meaning(name: &str) -> Option<String> {
    HSA.iter().find(|(_, n, _)| *n == name).map(|(_, _, m)| m())
}

/// The name of a `hipError_t` (`hipError(…)` for one not in the table).
pub fn hip_name(code: i32) -> String {
    lookup(HIP, code).map_or_else(|| format!("hipError({code})"), |(n, _)| n.to_owned())
}

/// The meaning of a `hipError_t` name, in the current language.
pub fn hip_meaning(name: &str) -> Option<String> {
    HIP.iter().find(|(_, n, _)| *n == name).map(|(_, _, m)| m())
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
                assert!(!meaning().is_empty());
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
