//! Compressed offload bundles (`CCOB` v1–v3, zlib and zstd): lying sizes and zip bombs must be
//! refused by the limits, never allocated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::codeobject::{Limits, ccob};

fuzz_target!(|data: &[u8]| {
    // The probe's own caps, but a whole bundle held in memory at most 64 MiB: the fuzzer runs
    // with -rss_limit_mb=256.
    let limits = Limits {
        max_decompressed: 64 << 20,
        ..Limits::default()
    };
    let _ = ccob::parse_header(data);
    let _ = ccob::list(data, &limits);
    let _ = ccob::decompress(data, &limits);
});
