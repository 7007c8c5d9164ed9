//! Fixture archives (`--root x.tar.gz`): any bytes, as a gzip stream and as a tar stream
//! compressed here, give a tree or a refusal — within the unpacked-size cap, every lookup of the
//! tree (links followed inside it, loops and escapes refused) ending.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use rocm_probe::source::archive::Archive;

/// The probe allows 1 GiB unpacked; the fuzzer runs with -rss_limit_mb=256.
const CAP: u64 = 32 << 20;

fn walk(a: &Archive, dir: &str, budget: &mut usize) {
    let Ok(names) = a.read_dir(dir) else { return };
    for name in names {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = format!("{}/{name}", dir.trim_end_matches('/'));
        let _ = a.contents(&path);
        let _ = a.read_link(&path);
        let _ = a.is_link(&path);
        let _ = a.check(&path);
        let _ = a.owner(&path);
        if a.exists(&path) == Some(true) && !a.is_link(&path) {
            walk(a, &path, budget);
        }
    }
}

fn run(bytes: &[u8]) {
    if let Ok(a) = Archive::parse_with(bytes, CAP) {
        let _ = a.is_machine_tree();
        walk(&a, "/", &mut 10_000);
    }
}

fuzz_target!(|data: &[u8]| {
    run(data);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    if gz.write_all(data).is_ok() {
        if let Ok(packed) = gz.finish() {
            run(&packed);
        }
    }
});
