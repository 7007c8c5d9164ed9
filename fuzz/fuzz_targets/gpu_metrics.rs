//! The binary `gpu_metrics` table: any bytes, as a kernel of another version (or a damaged
//! capture) might give. Every layout is read only when its computed size equals the header's;
//! anything else must come back as a status, never a panic or an out-of-bounds read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::facts::telemetry::gpu_metrics;

fuzz_target!(|data: &[u8]| {
    let m = gpu_metrics::parse(data);
    if let (Some(format), Some(content)) = (m.format_revision, m.content_revision) {
        let _ = gpu_metrics::struct_size(format, content);
    }
    let _ = gpu_metrics::throttler_names(u64::from_le_bytes(
        data.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]),
    ));
});
