//! Compressed offload bundles against the real `clang-offload-bundler-19` (Debian
//! `clang-tools-19`): what it writes reads back with the same targets and bytes as the
//! uncompressed original, and what it cannot write is built by hand from the documented layout
//! (clang's `ClangOffloadBundler.rst`) — and, where LLVM 19 can read it, read back by the real
//! tool too. Then corrupt, truncated, lying and bomb-like variants of the real data.
//!
//! LLVM 19's bundler writes only one kind: `CCOB` version 2 with zstd (it picks zstd whenever
//! LLVM was built with it, as Debian's is, and has no switch for zlib; version 3 and the
//! `COMPRESSED_BUNDLE_FORMAT_VERSION` variable arrived in LLVM 20). It reads versions 1 and 2,
//! zlib and zstd. So: v2 zstd from the tool; v1 and v2 with zlib and v1 with zstd by hand, and
//! checked with the tool; v3 (zlib and zstd) by hand only.
//!
//! The code objects come from a tiny HIP program compiled at test time with Debian's `hipcc`.
//! A tool absent: with `CI` set the test fails (CI installs it), else it prints `skipped: …`.

use std::path::{Path, PathBuf};
use std::process::Command;

use rocm_probe::codeobject::ccob::{self, Method};
use rocm_probe::codeobject::{BundleFormat, CodeObjectFile, Limits, Malformed};

const HIPCC: &str = "/usr/bin/hipcc";
const BUNDLER: &str = "/usr/bin/clang-offload-bundler-19";
const HOST: &str = "host-x86_64-unknown-linux-gnu";
const DEVICES: [&str; 3] = [
    "hipv4-amdgcn-amd-amdhsa--gfx1030",
    "hipv4-amdgcn-amd-amdhsa--gfx908",
    "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
];

/// Compiles the program and writes its three code objects to `dir`; returns their paths in
/// the order of [`DEVICES`].
fn code_objects(dir: &Path) -> Vec<(String, PathBuf, Vec<u8>)> {
    let src = dir.join("tiny.hip");
    std::fs::write(
        &src,
        "#include <hip/hip_runtime.h>\n\
         __global__ void scale(float *a, float s) { a[threadIdx.x] *= s; }\n\
         int main() { hipLaunchKernelGGL(scale, dim3(1), dim3(1), 0, 0, nullptr, 2.0f); }\n",
    )
    .unwrap();
    let bin = dir.join("tiny");
    let out = Command::new(HIPCC)
        .args([
            "--offload-arch=gfx1030",
            "--offload-arch=gfx908",
            "--offload-arch=gfx90a:xnack-",
            "-o",
        ])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = CodeObjectFile::open(&bin).unwrap();
    let inspection = file.inspect().unwrap();
    let bundle = &inspection.bundles[0];
    DEVICES
        .iter()
        .map(|id| {
            let entry = bundle.entries.iter().find(|e| e.id == *id).unwrap();
            let bytes = file.entry_bytes(bundle, entry).unwrap().into_owned();
            assert!(bytes.starts_with(b"\x7fELF"));
            let path = dir.join(format!("{}.co", id.rsplit("--").next().unwrap()));
            std::fs::write(&path, &bytes).unwrap();
            (id.to_string(), path, bytes)
        })
        .collect()
}

fn bundler(args: &[&str], inputs: &[&Path], output: &Path) {
    let mut cmd = Command::new(BUNDLER);
    let targets: Vec<&str> = std::iter::once(HOST).chain(DEVICES).collect();
    cmd.arg("--type=o")
        .arg(format!("--targets={}", targets.join(",")))
        .arg("--input=/dev/null");
    for i in inputs {
        cmd.arg(format!("--input={}", i.display()));
    }
    cmd.arg(format!("--output={}", output.display())).args(args);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The real tool's unbundling of one entry.
fn unbundle(file: &Path, id: &str, dir: &Path) -> Vec<u8> {
    let out_path = dir.join("unbundled.co");
    let out = Command::new(BUNDLER)
        .args(["--unbundle", "--type=o"])
        .arg(format!("--input={}", file.display()))
        .arg(format!("--targets={id}"))
        .arg(format!("--output={}", out_path.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(out_path).unwrap()
}

/// Reads `file` back: the same targets and bytes as the originals.
fn assert_reads_back(file: &Path, originals: &[(String, PathBuf, Vec<u8>)]) -> BundleFormat {
    let f = CodeObjectFile::open(file).unwrap();
    let inspection = f.inspect().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(inspection.bundles.len(), 1, "{}", file.display());
    let bundle = &inspection.bundles[0];
    assert_eq!(
        inspection.targets(),
        ["gfx1030", "gfx908", "gfx90a:xnack-"],
        "{}",
        file.display()
    );
    for (id, _, bytes) in originals {
        let entry = bundle.entries.iter().find(|e| e.id == *id).unwrap();
        assert_eq!(entry.size, bytes.len() as u64);
        let read = f.entry_bytes(bundle, entry).unwrap();
        assert!(
            read.as_ref() == bytes.as_slice(),
            "{id} in {}",
            file.display()
        );
    }
    bundle.format
}

/// Builds a compressed bundle by hand from the documented layout around `payload` (already
/// compressed with `method`).
fn by_hand(
    version: u16,
    method: u16,
    uncompressed: &[u8],
    hash: [u8; 8],
    payload: &[u8],
) -> Vec<u8> {
    let mut out = b"CCOB".to_vec();
    out.extend(version.to_le_bytes());
    out.extend(method.to_le_bytes());
    match version {
        // magic, version, method, uncompressed size (u32), hash (u64): 20 bytes.
        1 => out.extend((uncompressed.len() as u32).to_le_bytes()),
        // ..., total size (u32), uncompressed size (u32), hash: 24 bytes.
        2 => {
            out.extend(((24 + payload.len()) as u32).to_le_bytes());
            out.extend((uncompressed.len() as u32).to_le_bytes());
        }
        // ..., total size (u64), uncompressed size (u64), hash: 32 bytes.
        3 => {
            out.extend(((32 + payload.len()) as u64).to_le_bytes());
            out.extend((uncompressed.len() as u64).to_le_bytes());
        }
        _ => unreachable!(),
    }
    out.extend(hash);
    out.extend(payload);
    out
}

#[test]
fn compressed_bundles_read_back_with_the_same_targets_and_bytes() {
    if !rocm_probe_tests::have(HIPCC, "hipcc") || !rocm_probe_tests::have(BUNDLER, "clang-tools-19")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cos = code_objects(d);
    let inputs: Vec<&Path> = cos.iter().map(|(_, p, _)| p.as_path()).collect();

    // The uncompressed original and the tool's compressed bundle, from the same inputs.
    let plain = d.join("plain.bundle");
    bundler(&[], &inputs, &plain);
    assert_eq!(assert_reads_back(&plain, &cos), BundleFormat::Uncompressed);
    let tool = d.join("tool.ccob");
    bundler(&["--compress"], &inputs, &tool);
    assert_eq!(assert_reads_back(&tool, &cos), BundleFormat::Compressed);
    let inspection = CodeObjectFile::open(&tool).unwrap().inspect().unwrap();
    let c = inspection.bundles[0].compression.as_ref().unwrap();
    assert_eq!(
        (c.version, c.method),
        (2, Method::Zstd),
        "what LLVM 19 writes"
    );
    // At another compression level.
    let tool9 = d.join("tool9.ccob");
    bundler(&["--compress", "--compression-level=19"], &inputs, &tool9);
    assert_reads_back(&tool9, &cos);

    // The tool's header: its uncompressed size and hash are those of the plain bundle.
    let plain_bytes = std::fs::read(&plain).unwrap();
    let tool_bytes = std::fs::read(&tool).unwrap();
    assert_eq!(
        u32::from_le_bytes(tool_bytes[12..16].try_into().unwrap()) as usize,
        plain_bytes.len()
    );
    let hash: [u8; 8] = tool_bytes[16..24].try_into().unwrap();
    let (_, decompressed) = ccob::decompress(&tool_bytes, &Limits::default()).unwrap();
    assert_eq!(decompressed, plain_bytes);

    // By hand: the tool's zstd payload under v1 and v3 headers; zlib payloads (zlib format,
    // RFC 1950, as llvm::compression::zlib writes) under v1, v2 and v3 headers.
    let zstd_payload = &tool_bytes[24..];
    let zlib_payload = {
        let ours = ccob::encode(&plain_bytes, 2, Method::Zlib, 6).unwrap();
        ours[24..].to_vec()
    };
    let cases = [
        ("v1-zstd", 1, 1, zstd_payload),
        ("v3-zstd", 3, 1, zstd_payload),
        ("v1-zlib", 1, 0, zlib_payload.as_slice()),
        ("v2-zlib", 2, 0, zlib_payload.as_slice()),
        ("v3-zlib", 3, 0, zlib_payload.as_slice()),
    ];
    for (name, version, method, payload) in cases {
        let path = d.join(format!("{name}.ccob"));
        std::fs::write(&path, by_hand(version, method, &plain_bytes, hash, payload)).unwrap();
        assert_eq!(
            assert_reads_back(&path, &cos),
            BundleFormat::Compressed,
            "{name}"
        );
        // LLVM 19 reads v1 and v2: the layout built here is the one it expects.
        if version < 3 {
            for (id, _, bytes) in &cos {
                assert!(
                    unbundle(&path, id, d) == *bytes,
                    "{name}: {id} via {BUNDLER}"
                );
            }
        }
    }
}

#[test]
fn corrupt_truncated_lying_and_bomb_bundles_are_errors() {
    if !rocm_probe_tests::have(HIPCC, "hipcc") || !rocm_probe_tests::have(BUNDLER, "clang-tools-19")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cos = code_objects(d);
    let inputs: Vec<&Path> = cos.iter().map(|(_, p, _)| p.as_path()).collect();
    let tool = d.join("tool.ccob");
    bundler(&["--compress"], &inputs, &tool);
    let good = std::fs::read(&tool).unwrap();
    let limits = Limits::default();
    let check = |name: &str, bytes: &[u8], full: bool| -> Malformed {
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        let file = CodeObjectFile::open(&path).unwrap();
        let err = match file.inspect() {
            Err(e) => e,
            Ok(i) if full => file
                .bundle_bytes(&i.bundles[0])
                .map(|_| ())
                .expect_err(name),
            Ok(_) => panic!("{name}: listed without error"),
        };
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("at offset 0x"), "{text}");
        match err {
            rocm_probe::codeobject::Error::Malformed { kind, .. } => kind,
            other => panic!("{name}: {other}"),
        }
    };

    // Every truncation: an error, never a panic.
    for n in (0..good.len()).step_by(13) {
        check(&format!("cut{n}"), &good[..n], true);
    }
    // Flipped bytes in the payload: listing or full decompression (size, stream, hash) fails.
    for at in (24..good.len()).step_by(31) {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        check(&format!("flip{at}"), &bad, true);
    }
    // Lying sizes.
    let mut lying = good.clone();
    let real = u32::from_le_bytes(good[12..16].try_into().unwrap());
    lying[12..16].copy_from_slice(&(real - 1).to_le_bytes());
    // Listing already sees the last entry end past the declared size.
    let kind = check("declared-less", &lying, true);
    assert!(
        matches!(&kind, Malformed::InDecompressed { kind, .. }
            if matches!(**kind, Malformed::EntryOutOfBounds { .. })),
        "{kind:?}"
    );
    lying[12..16].copy_from_slice(&(real + 1).to_le_bytes());
    assert!(matches!(
        check("declared-more", &lying, true),
        Malformed::SmallerThanDeclared { .. }
    ));
    let mut lying = good.clone();
    lying[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        check("total-past-end", &lying, false),
        Malformed::Truncated { .. }
    ));
    lying[8..12].copy_from_slice(&3u32.to_le_bytes());
    assert!(matches!(
        check("total-below-header", &lying, false),
        Malformed::TotalSizeTooSmall { .. }
    ));
    // A limit below the declared size: refused before decompressing anything (to list, the
    // cap on what may be declared; to decompress whole, also the cap on what is held).
    let path = d.join("limited.ccob");
    std::fs::write(&path, &good).unwrap();
    let small = Limits {
        max_declared: u64::from(real) - 1,
        ..Limits::default()
    };
    let err = CodeObjectFile::open_with(&path, small)
        .unwrap()
        .inspect()
        .unwrap_err();
    assert!(err.to_string().contains("above the limit"), "{err}");
    // A bomb: the real bundle followed by 256 MiB of zeros in one v3 zstd stream, declared as
    // the bundle's own size. Listing reads only the header; full decompression stops one byte
    // past the declared size.
    let (_, plain) = ccob::decompress(&good, &limits).unwrap();
    let mut inflated = plain.clone();
    inflated.resize(256 << 20, 0);
    let mut bomb = ccob::encode(&inflated, 3, Method::Zstd, 1).unwrap();
    drop(inflated);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    bomb[16..24].copy_from_slice(&(plain.len() as u64).to_le_bytes());
    assert!(matches!(
        check("bomb", &bomb, true),
        Malformed::LargerThanDeclared { .. }
    ));
}
