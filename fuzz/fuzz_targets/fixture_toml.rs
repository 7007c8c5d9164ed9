//! `fixture.toml`: any text gives a config or an error naming file, line and key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocm_probe::source::fixture::FixtureConfig;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = FixtureConfig::parse(text, std::path::Path::new("fixture.toml")) {
            let _ = e.to_string();
        }
    }
});
