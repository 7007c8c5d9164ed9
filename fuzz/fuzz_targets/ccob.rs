//! Compressed offload bundles (`CCOB` v1–v3, zlib and zstd): lying sizes and zip bombs must be
//! refused by the limits, never allocated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::codeobject::{Limits, ccob};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_entries: 4096,
        max_id_len: 1024,
        max_bundle_header: 1 << 20,
        max_decompressed: 64 << 20,
    };
    let _ = ccob::parse_header(data);
    let _ = ccob::list(data, &limits);
    let _ = ccob::decompress(data, &limits);
});
