//! Builders of hostile offload bundles: the inputs that once made listing quadratic, memory
//! grow with a header's claims, or extraction write without end. Tests, fuzz seeds and
//! measurements build them here, so each is a few lines of bytes rather than a committed blob.

use super::bundle::BUNDLE_MAGIC;
use super::ccob::{self, CCOB_MAGIC, Method};

/// An uncompressed bundle of `count` entries whose IDs are `id_len` bytes of `a` (the same
/// ID repeated compresses best), every entry empty at the end of the header.
pub fn many_entries(count: u64, id_len: usize) -> Vec<u8> {
    let id = "a".repeat(id_len);
    let entries: Vec<(&str, &[u8])> = (0..count).map(|_| (id.as_str(), &[][..])).collect();
    super::bundle::write(&entries)
}

/// [`many_entries`] compressed (`CCOB` v3, zstd at its strongest level): a few hundred bytes
/// for 65,536 entries.
pub fn compressed_many_entries(count: u64, id_len: usize) -> Vec<u8> {
    ccob::encode(&many_entries(count, id_len), 3, Method::Zstd, 19).expect("in-memory compression")
}

/// A `CCOB` v3 zstd bundle that truly decompresses to `declared` bytes: a valid bundle header
/// whose one gfx90a entry spans the rest, which is zeros. The zstd frame is written by hand
/// as RLE blocks (4 bytes per 128 KiB), so 4 GiB take 132 KB and no time to build. The hash is
/// left 0: computing it means reading all of it, and the reader must give up long before.
pub fn declared_bomb(declared: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    let id = b"hipv4-amdgcn-amd-amdhsa--gfx90a";
    let head = 32 + 24 + id.len() as u64;
    let mut inner = BUNDLE_MAGIC.to_vec();
    inner.extend(1u64.to_le_bytes());
    inner.extend(head.to_le_bytes());
    inner.extend(declared.saturating_sub(head).to_le_bytes());
    inner.extend((id.len() as u64).to_le_bytes());
    inner.extend(id);
    inner.truncate(usize::try_from(declared).unwrap_or(usize::MAX));

    // Frame: magic, descriptor (no content size, no checksum), window 128 KiB.
    let mut frame = 0xFD2F_B528u32.to_le_bytes().to_vec();
    frame.extend([0x00, 7 << 3]);
    let mut left = declared - inner.len() as u64;
    let block = |frame: &mut Vec<u8>, kind: u32, size: u64, last: bool| {
        let h = u32::from(last) | kind << 1 | (size as u32) << 3;
        frame.extend(&h.to_le_bytes()[..3]);
    };
    block(&mut frame, 0, inner.len() as u64, left == 0);
    frame.extend(&inner);
    while left > 0 {
        let n = left.min(BLOCK);
        left -= n;
        block(&mut frame, 1, n, left == 0);
        frame.push(0);
    }

    let mut out = CCOB_MAGIC.to_vec();
    out.extend(3u16.to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend((32 + frame.len() as u64).to_le_bytes());
    out.extend(declared.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(frame);
    out
}

/// A valid `CCOB` bundle of `size` bytes whose `count` device entries all name the same
/// `size`-ish bytes: extracting it naively writes `count` times what it decompresses.
pub fn overlapping_entries(count: usize, size: usize) -> Vec<u8> {
    let targets = ["gfx90a", "gfx908", "gfx1030", "gfx1100", "gfx942"];
    let ids: Vec<String> = (0..count)
        .map(|i| format!("hipv4-amdgcn-amd-amdhsa--{}", targets[i % targets.len()]))
        .collect();
    let head = 32 + ids.iter().map(|id| 24 + id.len()).sum::<usize>();
    let body = size.saturating_sub(head) as u64;
    let mut inner = BUNDLE_MAGIC.to_vec();
    inner.extend((count as u64).to_le_bytes());
    for id in &ids {
        inner.extend((head as u64).to_le_bytes());
        inner.extend(body.to_le_bytes());
        inner.extend((id.len() as u64).to_le_bytes());
        inner.extend(id.as_bytes());
    }
    inner.resize(head + body as usize, 0);
    ccob::encode(&inner, 3, Method::Zstd, 3).expect("in-memory compression")
}

/// The fuzz seeds built here (`fuzz/corpus/{ccob,codeobject}/`), by file name.
pub fn fuzz_seeds() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "hostile-quadratic-65536-one-byte-ids.ccob",
            compressed_many_entries(65_536, 1),
        ),
        (
            "hostile-amplify-4000-ids-of-4k.ccob",
            compressed_many_entries(4000, 4096),
        ),
        (
            "hostile-declares-4gib-rle-bomb.ccob",
            declared_bomb(4 << 30),
        ),
        (
            "hostile-declares-cap-plus-one.ccob",
            declared_bomb(super::MAX_DECOMPRESSED + 1),
        ),
        (
            "hostile-64-overlapping-entries.ccob",
            overlapping_entries(64, 4096),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codeobject::{Limits, Malformed, inspect_bytes};

    #[test]
    fn the_builders_build_what_they_say() {
        let plain = many_entries(3, 8);
        let limits = Limits::default();
        let i = inspect_bytes("mem", &plain, limits).unwrap();
        assert_eq!(i.bundles[0].entries.len(), 3);
        assert_eq!(i.bundles[0].entries[2].id, "aaaaaaaa");

        // The bomb's frame is real zstd: decompressing it whole reaches the hash check.
        let bomb = declared_bomb(1 << 20);
        let err = ccob::decompress(&bomb, &limits).unwrap_err();
        assert!(
            matches!(err.kind, Malformed::HashMismatch { .. }),
            "{err:?}"
        );
        let i = inspect_bytes("mem", &bomb, limits).unwrap();
        assert_eq!(i.bundles[0].entries[0].size, (1 << 20) - 87);

        let overlapping = overlapping_entries(4, 4096);
        // About 220 bytes for 65,536 entries, as first reported.
        assert!(compressed_many_entries(65_536, 1).len() < 256);
        let (_, inner) = ccob::decompress(&overlapping, &limits).unwrap();
        assert_eq!(inner.len(), 4096);
    }
}

/// The committed seeds are these builders' bytes; `ROCM_PROBE_WRITE_SEEDS=1` rewrites them.
#[cfg(test)]
#[test]
fn committed_fuzz_seeds_are_the_builders_bytes() {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let write = std::env::var_os("ROCM_PROBE_WRITE_SEEDS").is_some();
    for (name, bytes) in fuzz_seeds() {
        for target in ["ccob", "codeobject"] {
            let path = fuzz.join(target).join(name);
            if write {
                std::fs::write(&path, &bytes).unwrap();
            }
            let committed = std::fs::read(&path).unwrap_or_default();
            assert!(
                committed == bytes,
                "{} differs: ROCM_PROBE_WRITE_SEEDS=1 rewrites it",
                path.display()
            );
        }
    }
}
