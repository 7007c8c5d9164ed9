//! Host ELFs with `.hip_fatbin`, offload bundles, compressed bundles and AMDGPU code objects:
//! any bytes give an inspection or a typed error, within the limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::codeobject::{Limits, bundle, elf, inspect_bytes};

fuzz_target!(|data: &[u8]| {
    // The probe's own caps, but a whole bundle held in memory at most 64 MiB: the fuzzer runs
    // with -rss_limit_mb=256.
    let limits = Limits {
        max_decompressed: 64 << 20,
        ..Limits::default()
    };
    if let Ok(inspection) = inspect_bytes("fuzz", data, limits) {
        let _ = inspection.targets();
    }
    let _ = bundle::parse(data, data.len() as u64, &limits);
    let _ = elf::code_object_header(data);
    let _ = elf::host_sections(data);
});
