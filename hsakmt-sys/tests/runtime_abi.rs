//! Pins the ABI facts of the ROCr and HIP bindings the probe relies on (the AQL packets and
//! queue, the header bit positions, status and error codes, where `gcnArchName` lives), and
//! cross-checks them with gcc compiling Debian's headers at test time, so the expectations are
//! not only hand-copied: bindgen (clang) and gcc must agree on every generated constant and on
//! the layouts used.
//!
//! The literal values asserted below were read from Debian's `/usr/include/hsa/hsa.h` and
//! `hsa_ext_amd.h` (libhsa-runtime-dev 5.2.3) and `/usr/include/hip/hip_runtime_api.h`
//! (libamdhip64-dev 5.2.3).

mod support;

use std::mem::{offset_of, size_of};

use hsakmt_sys::hip::{
    self, DEVICE_PROP_BUFFER_SIZE, DEVICE_PROP_SIZE_R0000, DEVICE_PROP_SIZE_R0600,
    GCN_ARCH_NAME_LEN, GCN_ARCH_NAME_OFFSET_R0000, GCN_ARCH_NAME_OFFSET_R0600, hipDeviceProp_t,
    hipDeviceProp_tR0000, hipErrorInsufficientDriver, hipErrorInvalidDevice, hipErrorInvalidValue,
    hipErrorNoDevice, hipErrorNotInitialized, hipSuccess,
};
use hsakmt_sys::hsa::{self, *};

use support::{
    HIP_HEADER, HSA_HEADER, generated_integer_consts, parse_values, present, print_consts_program,
    run_c,
};

const HSA_GENERATED: &str = include_str!("../src/generated/hsa.rs");
const HIP_GENERATED: &str = include_str!("../src/generated/hip.rs");

#[test]
fn aql_packets_are_64_bytes() {
    assert_eq!(size_of::<hsa_barrier_and_packet_t>(), 64);
    assert_eq!(size_of::<hsa_kernel_dispatch_packet_t>(), 64);
    assert_eq!(hsa::AQL_PACKET_SIZE, 64);
}

#[test]
fn barrier_and_packet_offsets() {
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, header), 0);
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, reserved0), 2);
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, reserved1), 4);
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, dep_signal), 8);
    let packet = hsa_barrier_and_packet_t::default();
    assert_eq!(packet.dep_signal.len(), 5);
    let base = std::ptr::from_ref(&packet).addr();
    for (i, signal) in packet.dep_signal.iter().enumerate() {
        assert_eq!(
            std::ptr::from_ref(signal).addr() - base,
            8 + 8 * i,
            "dep_signal[{i}]"
        );
    }
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, reserved2), 48);
    assert_eq!(offset_of!(hsa_barrier_and_packet_t, completion_signal), 56);
    assert_eq!(size_of::<hsa_signal_t>(), 8);
}

#[test]
fn kernel_dispatch_packet_and_queue_offsets() {
    assert_eq!(offset_of!(hsa_kernel_dispatch_packet_t, header), 0);
    assert_eq!(offset_of!(hsa_kernel_dispatch_packet_t, setup), 2);
    assert_eq!(offset_of!(hsa_kernel_dispatch_packet_t, grid_size_x), 12);
    assert_eq!(offset_of!(hsa_kernel_dispatch_packet_t, kernel_object), 32);
    assert_eq!(
        offset_of!(hsa_kernel_dispatch_packet_t, kernarg_address),
        40
    );
    assert_eq!(
        offset_of!(hsa_kernel_dispatch_packet_t, completion_signal),
        56
    );

    assert_eq!(size_of::<hsa_queue_t>(), 40);
    assert_eq!(offset_of!(hsa_queue_t, type_), 0);
    assert_eq!(offset_of!(hsa_queue_t, features), 4);
    assert_eq!(offset_of!(hsa_queue_t, base_address), 8);
    assert_eq!(offset_of!(hsa_queue_t, doorbell_signal), 16);
    assert_eq!(offset_of!(hsa_queue_t, size), 24);
    assert_eq!(offset_of!(hsa_queue_t, id), 32);
}

#[test]
fn packet_header_constants() {
    assert_eq!(HSA_PACKET_TYPE_VENDOR_SPECIFIC, 0);
    assert_eq!(HSA_PACKET_TYPE_INVALID, 1);
    assert_eq!(HSA_PACKET_TYPE_KERNEL_DISPATCH, 2);
    assert_eq!(HSA_PACKET_TYPE_BARRIER_AND, 3);
    assert_eq!(HSA_PACKET_TYPE_AGENT_DISPATCH, 4);
    assert_eq!(HSA_PACKET_TYPE_BARRIER_OR, 5);

    assert_eq!(HSA_PACKET_HEADER_TYPE, 0);
    assert_eq!(HSA_PACKET_HEADER_BARRIER, 8);
    assert_eq!(HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE, 9);
    assert_eq!(HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE, 11);
    assert_eq!(HSA_PACKET_HEADER_WIDTH_TYPE, 8);
    assert_eq!(HSA_PACKET_HEADER_WIDTH_BARRIER, 1);
    assert_eq!(HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE, 2);
    assert_eq!(HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE, 2);

    assert_eq!(HSA_FENCE_SCOPE_NONE, 0);
    assert_eq!(HSA_FENCE_SCOPE_AGENT, 1);
    assert_eq!(HSA_FENCE_SCOPE_SYSTEM, 2);

    // The header of a barrier-AND packet with the barrier bit and system-scope fences, as
    // ROCr's samples build it: 0x1503.
    let header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE)
        | (1 << HSA_PACKET_HEADER_BARRIER)
        | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    assert_eq!(header, 0x1503);
}

#[test]
fn status_codes_and_enums() {
    assert_eq!(HSA_STATUS_SUCCESS, 0);
    assert_eq!(HSA_STATUS_INFO_BREAK, 1);
    assert_eq!(HSA_STATUS_ERROR, 0x1000);
    assert_eq!(HSA_STATUS_ERROR_INVALID_ARGUMENT, 0x1001);
    assert_eq!(HSA_STATUS_ERROR_INVALID_AGENT, 0x1004);
    assert_eq!(HSA_STATUS_ERROR_OUT_OF_RESOURCES, 0x1008);
    assert_eq!(HSA_STATUS_ERROR_NOT_INITIALIZED, 0x100B);
    assert_eq!(HSA_STATUS_ERROR_FATAL, 0x1026);
    // AMD additions (hsa_ext_amd.h), decimal in the header.
    assert_eq!(HSA_STATUS_ERROR_INVALID_MEMORY_POOL, 40);
    assert_eq!(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, 41);
    assert_eq!(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION, 42);
    assert_eq!(HSA_STATUS_ERROR_MEMORY_FAULT, 43);
    assert_eq!(HSA_STATUS_CU_MASK_REDUCED, 44);
    let status: hsa_status_t = 43;
    assert_eq!(status, HSA_STATUS_ERROR_MEMORY_FAULT);

    assert_eq!(HSA_DEVICE_TYPE_CPU, 0);
    assert_eq!(HSA_DEVICE_TYPE_GPU, 1);
    assert_eq!(HSA_DEVICE_TYPE_DSP, 2);
    assert_eq!(HSA_AGENT_INFO_NAME, 0);
    assert_eq!(HSA_AGENT_INFO_NODE, 16);
    assert_eq!(HSA_AGENT_INFO_DEVICE, 17);
    assert_eq!(HSA_AMD_AGENT_INFO_CHIP_ID, 0xA000);
    assert_eq!(HSA_AMD_AGENT_INFO_PRODUCT_NAME, 0xA009);
    assert_eq!(HSA_AMD_AGENT_INFO_UUID, 0xA011);
    assert_eq!(HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT, 0xA014);
    assert_eq!(HSA_ISA_INFO_NAME_LENGTH, 0);
    assert_eq!(HSA_ISA_INFO_NAME, 1);
    assert_eq!(HSA_AMD_SEGMENT_GLOBAL, 0);
    assert_eq!(HSA_AMD_MEMORY_POOL_INFO_SEGMENT, 0);
    assert_eq!(HSA_AMD_MEMORY_POOL_INFO_SIZE, 2);

    assert_eq!(HSA_SIGNAL_CONDITION_EQ, 0);
    assert_eq!(HSA_SIGNAL_CONDITION_LT, 2);
    assert_eq!(HSA_WAIT_STATE_BLOCKED, 0);
    assert_eq!(HSA_WAIT_STATE_ACTIVE, 1);
    assert_eq!(HSA_QUEUE_TYPE_MULTI, 0);
    assert_eq!(HSA_QUEUE_TYPE_SINGLE, 1);
    assert_eq!(QUEUE_SEGMENT_SIZE_DEFAULT, u32::MAX);
    assert_eq!(size_of::<hsa_signal_value_t>(), 8);
}

/// The named callback types are exactly the parameter types bindgen generated.
#[test]
fn callback_aliases_match_the_generated_signatures() {
    use std::ffi::c_void;
    type IterateAgents = unsafe extern "C" fn(Option<AgentCallback>, *mut c_void) -> hsa_status_t;
    type IterateIsas =
        unsafe extern "C" fn(hsa_agent_t, Option<IsaCallback>, *mut c_void) -> hsa_status_t;
    type IteratePools =
        unsafe extern "C" fn(hsa_agent_t, Option<MemoryPoolCallback>, *mut c_void) -> hsa_status_t;
    type QueueCreate = unsafe extern "C" fn(
        hsa_agent_t,
        u32,
        hsa_queue_type32_t,
        Option<QueueErrorCallback>,
        *mut c_void,
        u32,
        u32,
        *mut *mut hsa_queue_t,
    ) -> hsa_status_t;
    // Only type-checked: a library without these symbols gives `Err` fields.
    let Ok(lib) = hsakmt_sys::load_hsa_from("libc.so.6") else {
        panic!("libc.so.6 must load");
    };
    let _: Option<&IterateAgents> = lib.hsa_iterate_agents.as_ref().ok();
    let _: Option<&IterateIsas> = lib.hsa_agent_iterate_isas.as_ref().ok();
    let _: Option<&IteratePools> = lib.hsa_amd_agent_iterate_memory_pools.as_ref().ok();
    let _: Option<&QueueCreate> = lib.hsa_queue_create.as_ref().ok();
}

/// gcc, compiling Debian's `hsa.h`, agrees with every layout fact used by the probe.
#[test]
fn hsa_layouts_match_gcc() {
    let test = "hsa_layouts_match_gcc";
    if !present(test, HSA_HEADER, "libhsa-runtime-dev") {
        return;
    }
    let facts: &[(&str, usize)] = &[
        (
            "sizeof(hsa_barrier_and_packet_t)",
            size_of::<hsa_barrier_and_packet_t>(),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, header)",
            offset_of!(hsa_barrier_and_packet_t, header),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, dep_signal[0])",
            offset_of!(hsa_barrier_and_packet_t, dep_signal),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, dep_signal[4])",
            offset_of!(hsa_barrier_and_packet_t, dep_signal) + 4 * size_of::<hsa_signal_t>(),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved2)",
            offset_of!(hsa_barrier_and_packet_t, reserved2),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, completion_signal)",
            offset_of!(hsa_barrier_and_packet_t, completion_signal),
        ),
        (
            "sizeof(hsa_kernel_dispatch_packet_t)",
            size_of::<hsa_kernel_dispatch_packet_t>(),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, setup)",
            offset_of!(hsa_kernel_dispatch_packet_t, setup),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, grid_size_x)",
            offset_of!(hsa_kernel_dispatch_packet_t, grid_size_x),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernel_object)",
            offset_of!(hsa_kernel_dispatch_packet_t, kernel_object),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernarg_address)",
            offset_of!(hsa_kernel_dispatch_packet_t, kernarg_address),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, completion_signal)",
            offset_of!(hsa_kernel_dispatch_packet_t, completion_signal),
        ),
        ("sizeof(hsa_queue_t)", size_of::<hsa_queue_t>()),
        (
            "offsetof(hsa_queue_t, features)",
            offset_of!(hsa_queue_t, features),
        ),
        (
            "offsetof(hsa_queue_t, base_address)",
            offset_of!(hsa_queue_t, base_address),
        ),
        (
            "offsetof(hsa_queue_t, doorbell_signal)",
            offset_of!(hsa_queue_t, doorbell_signal),
        ),
        ("offsetof(hsa_queue_t, size)", offset_of!(hsa_queue_t, size)),
        ("offsetof(hsa_queue_t, id)", offset_of!(hsa_queue_t, id)),
        ("sizeof(hsa_signal_t)", size_of::<hsa_signal_t>()),
        ("sizeof(hsa_agent_t)", size_of::<hsa_agent_t>()),
        ("sizeof(hsa_isa_t)", size_of::<hsa_isa_t>()),
        (
            "sizeof(hsa_amd_memory_pool_t)",
            size_of::<hsa_amd_memory_pool_t>(),
        ),
        (
            "sizeof(hsa_signal_value_t)",
            size_of::<hsa_signal_value_t>(),
        ),
    ];
    let mut src = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <hsa/hsa_ext_amd.h>\nint main(void) {\n",
    );
    for (expr, _) in facts {
        src.push_str(&format!(
            "    printf(\"{expr}=%zu\\n\", (size_t)({expr}));\n"
        ));
    }
    src.push_str("    return 0;\n}\n");
    let gcc = parse_values(&run_c(test, &src, &[]));
    for (expr, rust) in facts {
        assert_eq!(gcc[*expr], *rust as i128, "{expr}: gcc vs bindgen");
    }
}

/// gcc gives every constant in `src/generated/hsa.rs` the value bindgen wrote.
#[test]
fn every_generated_hsa_constant_matches_gcc() {
    let test = "every_generated_hsa_constant_matches_gcc";
    if !present(test, HSA_HEADER, "libhsa-runtime-dev") {
        return;
    }
    let generated = generated_integer_consts(HSA_GENERATED);
    assert!(
        generated.len() > 150,
        "parsed {} constants",
        generated.len()
    );
    assert_eq!(generated["HSA_PACKET_TYPE_BARRIER_AND"], 3);
    let names: Vec<&String> = generated.keys().collect();
    let gcc = parse_values(&run_c(
        test,
        &print_consts_program("hsa/hsa_ext_amd.h", &names),
        &[],
    ));
    assert_eq!(gcc, generated);
}

#[test]
fn hip_error_codes() {
    assert_eq!(hipSuccess, 0);
    assert_eq!(hipErrorInvalidValue, 1);
    assert_eq!(hipErrorNotInitialized, 3);
    assert_eq!(hipErrorInsufficientDriver, 35);
    assert_eq!(hipErrorNoDevice, 100);
    assert_eq!(hipErrorInvalidDevice, 101);
    assert_eq!(hip::hipDeviceAttributeMultiprocessorCount, 63);
}

#[test]
fn hip_gcn_arch_name_offsets() {
    assert_eq!(GCN_ARCH_NAME_LEN, 256);
    assert_eq!(GCN_ARCH_NAME_OFFSET_R0000, 396);
    assert_eq!(offset_of!(hipDeviceProp_tR0000, gcnArchName), 396);
    assert_eq!(DEVICE_PROP_SIZE_R0000, 792);
    assert_eq!(size_of::<hipDeviceProp_t>(), 792);
    assert_eq!(GCN_ARCH_NAME_OFFSET_R0600, 1160);
    assert_eq!(DEVICE_PROP_SIZE_R0600, 1472);
    const { assert!(DEVICE_PROP_BUFFER_SIZE >= 2 * DEVICE_PROP_SIZE_R0600) };
    let prop = hipDeviceProp_t::default();
    assert_eq!(prop.gcnArchName.len(), GCN_ARCH_NAME_LEN);
}

/// gcc, compiling Debian's `hip_runtime_api.h`, puts `gcnArchName` where bindgen does.
#[test]
fn hip_device_prop_layout_matches_gcc() {
    let test = "hip_device_prop_layout_matches_gcc";
    if !present(test, HIP_HEADER, "libamdhip64-dev") {
        return;
    }
    let src = "#include <stdio.h>\n#include <stddef.h>\n#include <hip/hip_runtime_api.h>\n\
               int main(void) {\n\
               printf(\"offset=%zu\\n\", offsetof(hipDeviceProp_t, gcnArchName));\n\
               printf(\"size=%zu\\n\", sizeof(hipDeviceProp_t));\n\
               printf(\"len=%zu\\n\", sizeof(((hipDeviceProp_t*)0)->gcnArchName));\n\
               return 0;\n}\n";
    let gcc = parse_values(&run_c(test, src, &["-D__HIP_PLATFORM_AMD__"]));
    assert_eq!(gcc["offset"], GCN_ARCH_NAME_OFFSET_R0000 as i128);
    assert_eq!(gcc["size"], DEVICE_PROP_SIZE_R0000 as i128);
    assert_eq!(gcc["len"], GCN_ARCH_NAME_LEN as i128);
}

/// gcc gives every constant in `src/generated/hip.rs` (error codes, device attributes) the
/// value bindgen wrote.
#[test]
fn every_generated_hip_constant_matches_gcc() {
    let test = "every_generated_hip_constant_matches_gcc";
    if !present(test, HIP_HEADER, "libamdhip64-dev") {
        return;
    }
    let generated = generated_integer_consts(HIP_GENERATED);
    assert!(
        generated.len() > 150,
        "parsed {} constants",
        generated.len()
    );
    assert_eq!(generated["hipErrorNoDevice"], 100);
    let names: Vec<&String> = generated.keys().collect();
    let src = print_consts_program("hip/hip_runtime_api.h", &names);
    let gcc = parse_values(&run_c(test, &src, &["-D__HIP_PLATFORM_AMD__"]));
    assert_eq!(gcc, generated);
}
