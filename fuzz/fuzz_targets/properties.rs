//! The KFD `properties` parsers: any bytes, as the kernel (or a damaged capture) might give.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::facts::topology::{Cache, IoLink, MemBank, NodeProperties, SystemProperties};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut problems = Vec::new();
    let node = NodeProperties::parse(&text, &mut problems);
    let _ = (MemBank::parse(&text, &mut problems), Cache::parse(&text, &mut problems));
    let _ = (IoLink::parse(&text, &mut problems), SystemProperties::parse(&text, &mut problems));
    // Derivations on whatever was parsed must not panic either.
    if let Some(v) = node.gfx_target_version {
        if let Some(g) = rocm_probe::target::GfxVersion::from_target_version(v) {
            let _ = rocm_probe::target::target_id(g, Some(true), None);
        }
    }
});
