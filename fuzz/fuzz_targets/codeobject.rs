//! Host ELFs with `.hip_fatbin`, offload bundles, compressed bundles and AMDGPU code objects:
//! any bytes give an inspection or a typed error, within the limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::codeobject::{Limits, bundle, elf, inspect_bytes};

fuzz_target!(|data: &[u8]| {
    // Small limits keep each input's work (and the fuzzer's memory) bounded.
    let limits = Limits {
        max_entries: 4096,
        max_id_len: 1024,
        max_bundle_header: 1 << 20,
        max_decompressed: 64 << 20,
    };
    if let Ok(inspection) = inspect_bytes("fuzz", data, limits) {
        let _ = inspection.targets();
    }
    let _ = bundle::parse(data, data.len() as u64, &limits);
    let _ = elf::code_object_header(data);
    let _ = elf::host_sections(data);
});
