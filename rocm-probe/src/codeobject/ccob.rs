//! Compressed offload bundles (`CCOB`), versions 1–3, zlib and zstd.
//!
//! Layout (clang `ClangOffloadBundler.rst`, "Compression and Decompression";
//! `llvm/include/llvm/Object/OffloadBundle.h`), little-endian:
//!
//! | field | v1 | v2 | v3 |
//! |---|---|---|---|
//! | magic `CCOB` | 4 | 4 | 4 |
//! | version | u16 | u16 | u16 |
//! | method (0 zlib, 1 zstd) | u16 | u16 | u16 |
//! | total size, header included | – | u32 | u64 |
//! | uncompressed size | u32 | u32 | u64 |
//! | hash: first 8 bytes of the MD5 of the uncompressed bundle | u64 | u64 | u64 |
//!
//! The payload is the compressed `__CLANG_OFFLOAD_BUNDLE__`. A v1 header does not say how
//! long the payload is; its end is where the compressed stream ends (which is safer than
//! scanning for the next `CCOB`: compressed bytes may contain one).
//!
//! Decompression never trusts the header: output is bounded by the declared size (one byte
//! more is a "zip bomb" error, not an allocation), the declared size by [`Limits`] (to list:
//! [`MAX_DECLARED`](super::MAX_DECLARED); to hold whole:
//! [`MAX_DECOMPRESSED`](super::MAX_DECOMPRESSED)), and memory grows with the data actually
//! produced, never up front by what a header claims. Listing decompresses only the inner
//! bundle's header, learning its length entry by entry ([`bundle::HeaderNeed`]), so a header
//! of n entries costs O(n).

use serde::Serialize;

use super::bundle::{self, RawBundle};
use super::{Limits, Malformed, ParseError};

/// The magic a compressed bundle starts with.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";

/// Decompression works in steps of this many bytes.
const CHUNK: usize = 64 * 1024;

/// Bytes a stream may produce beyond the uncompressed size its header declares: none. clang
/// writes the exact size, so one byte more is a lying header or a bomb, and stopping there
/// bounds the work by the declared size (itself capped by [`MAX_DECLARED`](super::MAX_DECLARED)
/// and [`MAX_DECOMPRESSED`](super::MAX_DECOMPRESSED)), whatever the stream holds.
pub const MAX_OVER_DECLARED: u64 = 0;

/// The compression method (`llvm::compression::Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// 0: zlib (RFC 1950).
    Zlib,
    /// 1: Zstandard.
    Zstd,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Self::Zlib => "zlib",
            Self::Zstd => "zstd",
        }
    }
}

/// A compressed bundle's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// Compression method.
    pub method: Method,
    /// Total size including the header (v2 and v3).
    pub total_size: Option<u64>,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: u64,
    /// First 8 bytes of the MD5 of the uncompressed bundle, as a little-endian u64.
    pub hash: u64,
    /// 20, 24 or 32 bytes.
    pub header_size: u64,
}

fn take<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N], ParseError> {
    data.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            ParseError::at(
                at as u64,
                Malformed::Truncated {
                    what: "compressed bundle header",
                    need: (at + N) as u64,
                    have: data.len() as u64,
                },
            )
        })
}

/// Parses the header at the start of `data`.
pub fn parse_header(data: &[u8]) -> Result<Header, ParseError> {
    if !data.starts_with(CCOB_MAGIC) {
        return Err(ParseError::at(0, Malformed::NotABundle));
    }
    let version = u16::from_le_bytes(take(data, 4)?);
    let method = match u16::from_le_bytes(take(data, 6)?) {
        0 => Method::Zlib,
        1 => Method::Zstd,
        other => return Err(ParseError::at(6, Malformed::UnknownMethod(other))),
    };
    let u32_at = |at| take::<4>(data, at).map(|b| u64::from(u32::from_le_bytes(b)));
    let u64_at = |at| take::<8>(data, at).map(u64::from_le_bytes);
    let (total_size, uncompressed_size, hash, header_size) = match version {
        1 => (None, u32_at(8)?, u64_at(12)?, 20),
        2 => (Some(u32_at(8)?), u32_at(12)?, u64_at(16)?, 24),
        3 => (Some(u64_at(8)?), u64_at(16)?, u64_at(24)?, 32),
        other => return Err(ParseError::at(4, Malformed::UnknownVersion(other))),
    };
    if let Some(total) = total_size {
        if total < header_size {
            return Err(ParseError::at(
                8,
                Malformed::TotalSizeTooSmall {
                    total,
                    header: header_size,
                },
            ));
        }
    }
    Ok(Header {
        version,
        method,
        total_size,
        uncompressed_size,
        hash,
        header_size,
    })
}

enum Codec {
    Zlib(Box<flate2::Decompress>),
    Zstd(zstd::stream::raw::Decoder<'static>),
}

/// A bounded streaming decompressor over one payload.
struct Inflater<'a> {
    codec: Codec,
    method: Method,
    /// The compressed bytes: exactly the payload (v2, v3), or everything to the end of the
    /// region (v1, whose payload ends where the stream does).
    input: &'a [u8],
    /// Whether `input` is exactly the payload (several zstd frames may then follow each other).
    exact: bool,
    /// Compressed bytes consumed.
    read: usize,
    /// Bytes produced.
    produced: u64,
    /// The header's uncompressed size: never produce more.
    declared: u64,
    finished: bool,
}

impl<'a> Inflater<'a> {
    fn new(header: &Header, input: &'a [u8], exact: bool) -> Result<Self, Malformed> {
        let codec = match header.method {
            Method::Zlib => Codec::Zlib(Box::new(flate2::Decompress::new(true))),
            Method::Zstd => {
                let mut d =
                    zstd::stream::raw::Decoder::new().map_err(|e| Malformed::Decompress {
                        method: "zstd",
                        message: e.to_string(),
                    })?;
                // zstd's own default bound on the window a frame may ask for (128 MiB), set
                // explicitly: a hostile frame cannot make the decoder allocate more.
                let _ = d.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(27));
                Codec::Zstd(d)
            }
        };
        Ok(Self {
            codec,
            method: header.method,
            input,
            exact,
            read: 0,
            produced: 0,
            declared: header.uncompressed_size,
            finished: false,
        })
    }

    fn corrupt(&self, message: impl ToString) -> Malformed {
        Malformed::Decompress {
            method: self.method.name(),
            message: message.to_string(),
        }
    }

    /// One decompression step into `buf` (not empty); returns the bytes written.
    fn raw_step(&mut self, buf: &mut [u8]) -> Result<usize, Malformed> {
        if self.finished {
            return Ok(0);
        }
        let input = &self.input[self.read..];
        let (read, written) = match &mut self.codec {
            Codec::Zlib(d) => {
                let (in0, out0) = (d.total_in(), d.total_out());
                let status = d
                    .decompress(input, buf, flate2::FlushDecompress::None)
                    .map_err(|e| Malformed::Decompress {
                        method: "zlib",
                        message: e.to_string(),
                    })?;
                if status == flate2::Status::StreamEnd {
                    self.finished = true;
                }
                (
                    (d.total_in() - in0) as usize,
                    (d.total_out() - out0) as usize,
                )
            }
            Codec::Zstd(d) => {
                use zstd::stream::raw::Operation;
                let status = d
                    .run_on_buffers(input, buf)
                    .map_err(|e| Malformed::Decompress {
                        method: "zstd",
                        message: e.to_string(),
                    })?;
                if status.remaining == 0 {
                    // A frame ended. Payloads of known length may hold more frames.
                    let rest = input.len() - status.bytes_read;
                    if self.exact && rest > 0 {
                        d.reinit().map_err(|e| Malformed::Decompress {
                            method: "zstd",
                            message: e.to_string(),
                        })?;
                    } else {
                        self.finished = true;
                    }
                }
                (status.bytes_read, status.bytes_written)
            }
        };
        self.read += read;
        self.produced += written as u64;
        if read == 0 && written == 0 && !self.finished {
            return Err(if self.read >= self.input.len() {
                Malformed::CompressedTruncated
            } else {
                self.corrupt(crate::msg!("codeobject-error.no-progress"))
            });
        }
        Ok(written)
    }

    /// A step that never produces more than the declared size: once it is reached, one more
    /// byte of output is the error.
    fn step(&mut self, buf: &mut [u8]) -> Result<usize, Malformed> {
        let left = self.declared.saturating_add(MAX_OVER_DECLARED) - self.produced;
        if left == 0 {
            let mut probe = [0u8; 1];
            if self.raw_step(&mut probe)? > 0 {
                return Err(Malformed::LargerThanDeclared {
                    declared: self.declared,
                });
            }
            return Ok(0);
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        self.raw_step(&mut buf[..n])
    }

    /// Appends to `out` until it holds `want` bytes (at most the declared size) or the
    /// stream ends.
    fn fill(&mut self, out: &mut Vec<u8>, want: u64) -> Result<(), Malformed> {
        let want = want.min(self.declared);
        while (out.len() as u64) < want && !self.finished {
            let len = out.len();
            let chunk = (want - len as u64).min(CHUNK as u64) as usize;
            if out.capacity() < len + chunk {
                // Doubling, but never past `want`: the buffer stays within the declared size
                // (and so within the cap), where plain `resize` could double past it.
                let room = (out.capacity() * 2).max(len + chunk) as u64;
                out.reserve_exact(room.min(want) as usize - len);
            }
            out.resize(len + chunk, 0);
            let n = self.step(&mut out[len..])?;
            out.truncate(len + n);
        }
        Ok(())
    }

    /// Decompresses the rest into a scratch buffer and checks the total.
    fn drain(&mut self) -> Result<(), Malformed> {
        let mut scratch = vec![0u8; CHUNK];
        while !self.finished {
            self.step(&mut scratch)?;
        }
        self.check_total()
    }

    fn check_total(&self) -> Result<(), Malformed> {
        if self.produced > self.declared {
            return Err(Malformed::LargerThanDeclared {
                declared: self.declared,
            });
        }
        if self.produced < self.declared {
            return Err(Malformed::SmallerThanDeclared {
                declared: self.declared,
                actual: self.produced,
            });
        }
        Ok(())
    }
}

/// The payload of the compressed bundle starting `data`, which may extend to `data`'s end.
fn payload<'a>(header: &Header, data: &'a [u8]) -> Result<(&'a [u8], bool), ParseError> {
    let start = header.header_size as usize;
    match header.total_size {
        Some(total) => {
            let end = usize::try_from(total)
                .ok()
                .filter(|e| *e <= data.len())
                .ok_or_else(|| {
                    ParseError::at(
                        8,
                        Malformed::Truncated {
                            what: "compressed bundle (its header's total size)",
                            need: total,
                            have: data.len() as u64,
                        },
                    )
                })?;
            Ok((&data[start..end], true))
        }
        None => Ok((data.get(start..).unwrap_or_default(), false)),
    }
}

/// Refuses a header that declares more than `limit` bytes, before any work.
fn check_declared(header: &Header, limit: u64) -> Result<(), ParseError> {
    if header.uncompressed_size > limit {
        return Err(ParseError::at(
            if header.version == 3 { 16 } else { 8 },
            Malformed::DeclaredTooLarge {
                declared: header.uncompressed_size,
                limit,
            },
        ));
    }
    Ok(())
}

/// A compressed bundle as listed: its header, the entry table of the bundle inside it (entry
/// offsets are into the decompressed bundle), and how many bytes of `data` it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The header.
    pub header: Header,
    /// The inner bundle's entries.
    pub bundle: RawBundle,
    /// Header plus compressed payload, bytes.
    pub size: u64,
}

fn inner_error(header: &Header, e: ParseError) -> ParseError {
    ParseError::at(
        header.header_size,
        Malformed::InDecompressed {
            offset: e.offset,
            kind: Box::new(e.kind),
        },
    )
}

/// Lists the compressed bundle that starts `data` (which may run on past its end), without
/// decompressing more than the inner bundle's header — except for v1, whose end is found by
/// decompressing to the end of the stream into a fixed scratch buffer.
pub fn list(data: &[u8], limits: &Limits) -> Result<Listed, ParseError> {
    let header = parse_header(data)?;
    check_declared(&header, limits.max_declared)?;
    let (input, exact) = payload(&header, data)?;
    let at = |kind| ParseError::at(header.header_size, kind);
    let mut inflater = Inflater::new(&header, input, exact).map_err(at)?;
    let mut out = Vec::new();
    let mut need = bundle::HeaderNeed::default();
    loop {
        let want = need
            .next(&out, limits)
            .map_err(|e| inner_error(&header, e))?;
        let Some(want) = want else { break };
        if want > limits.max_bundle_header {
            return Err(inner_error(
                &header,
                ParseError::at(
                    0,
                    Malformed::HeaderTooLarge {
                        size: want,
                        limit: limits.max_bundle_header,
                    },
                ),
            ));
        }
        if out.len() >= bundle::BUNDLE_MAGIC.len() && !out.starts_with(bundle::BUNDLE_MAGIC) {
            return Err(inner_error(
                &header,
                ParseError::at(0, Malformed::NotABundle),
            ));
        }
        let before = out.len();
        inflater.fill(&mut out, want).map_err(at)?;
        if out.len() == before {
            // The header does not fit in what decompresses. Blame the declared size if the
            // stream goes on past it (or stops short of it), else the bundle inside.
            inflater.drain().map_err(at)?;
            return Err(inner_error(
                &header,
                ParseError::at(
                    out.len() as u64,
                    Malformed::Truncated {
                        what: "bundle header",
                        need: want,
                        have: out.len() as u64,
                    },
                ),
            ));
        }
    }
    let raw = bundle::parse(&out, header.uncompressed_size, limits)
        .map_err(|e| inner_error(&header, e))?;
    let size = match header.total_size {
        Some(total) => total,
        None => {
            inflater.drain().map_err(at)?;
            header.header_size + inflater.read as u64
        }
    };
    Ok(Listed {
        header,
        bundle: raw,
        size,
    })
}

/// Decompresses the whole compressed bundle that starts `data` and checks its size and hash.
pub fn decompress(data: &[u8], limits: &Limits) -> Result<(Header, Vec<u8>), ParseError> {
    let header = parse_header(data)?;
    // The whole bundle is held in memory: the tighter cap.
    check_declared(&header, limits.max_declared.min(limits.max_decompressed))?;
    let (input, exact) = payload(&header, data)?;
    let at = |kind| ParseError::at(header.header_size, kind);
    let mut inflater = Inflater::new(&header, input, exact).map_err(at)?;
    let mut out = Vec::new();
    inflater
        .fill(&mut out, header.uncompressed_size)
        .map_err(at)?;
    // Past the declared size: the stream must end here, without one more byte.
    inflater.drain().map_err(at)?;
    let digest = md5::compute(&out);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.0[..8]);
    let computed = u64::from_le_bytes(first);
    if computed != header.hash {
        return Err(ParseError::at(
            header.header_size - 8,
            Malformed::HashMismatch {
                stored: header.hash,
                computed,
            },
        ));
    }
    Ok((header, out))
}

/// Writes a compressed bundle around `bundle` by the documented layout: for tests and for
/// the header versions and methods that the installed `clang-offload-bundler` cannot write.
pub fn encode(bundle: &[u8], version: u16, method: Method, level: i32) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let payload = match method {
        Method::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(
                Vec::new(),
                flate2::Compression::new(level.clamp(0, 9) as u32),
            );
            e.write_all(bundle)?;
            e.finish()?
        }
        Method::Zstd => zstd::bulk::compress(bundle, level)?,
    };
    let digest = md5::compute(bundle);
    let method_id: u16 = match method {
        Method::Zlib => 0,
        Method::Zstd => 1,
    };
    let mut out = CCOB_MAGIC.to_vec();
    out.extend(version.to_le_bytes());
    out.extend(method_id.to_le_bytes());
    let too_big = || std::io::Error::other("too large for a 32-bit size field");
    match version {
        1 => {
            out.extend(
                u32::try_from(bundle.len())
                    .map_err(|_| too_big())?
                    .to_le_bytes(),
            );
        }
        2 => {
            let total = u32::try_from(24 + payload.len()).map_err(|_| too_big())?;
            out.extend(total.to_le_bytes());
            out.extend(
                u32::try_from(bundle.len())
                    .map_err(|_| too_big())?
                    .to_le_bytes(),
            );
        }
        _ => {
            out.extend((32 + payload.len() as u64).to_le_bytes());
            out.extend((bundle.len() as u64).to_le_bytes());
        }
    }
    out.extend(&digest.0[..8]);
    out.extend(payload);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner() -> Vec<u8> {
        let body: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        bundle::write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", &body)])
    }

    #[test]
    fn every_version_and_method_round_trips() {
        let inner = inner();
        for version in [1, 2, 3] {
            for method in [Method::Zlib, Method::Zstd] {
                let mut data = encode(&inner, version, method, 6).unwrap();
                let size = data.len() as u64;
                // Trailing bytes (the next bundle, padding) are not part of it.
                data.extend([0u8; 100]);
                let listed = list(&data, &Limits::default()).unwrap();
                assert_eq!(listed.size, size, "v{version} {method:?}");
                assert_eq!(listed.header.version, version);
                assert_eq!(listed.bundle.entries.len(), 1);
                let (_, out) = decompress(&data, &Limits::default()).unwrap();
                assert_eq!(out, inner);
            }
        }
    }

    #[test]
    fn lying_sizes_and_bombs_are_errors() {
        let inner = inner();
        for method in [Method::Zlib, Method::Zstd] {
            // Declares one byte less than it holds: a bomb of one byte.
            let mut data = encode(&inner, 3, method, 6).unwrap();
            data[16..24].copy_from_slice(&(inner.len() as u64 - 1).to_le_bytes());
            let err = decompress(&data, &Limits::default()).unwrap_err();
            assert!(
                matches!(err.kind, Malformed::LargerThanDeclared { .. }),
                "{err:?}"
            );
            // Declares more than it holds.
            data[16..24].copy_from_slice(&(inner.len() as u64 + 1).to_le_bytes());
            let err = decompress(&data, &Limits::default()).unwrap_err();
            assert!(
                matches!(err.kind, Malformed::SmallerThanDeclared { .. }),
                "{err:?}"
            );
            // Declares more than the limit: refused before any work.
            data[16..24].copy_from_slice(&(1u64 << 50).to_le_bytes());
            let err = list(&data, &Limits::default()).unwrap_err();
            assert!(
                matches!(err.kind, Malformed::DeclaredTooLarge { .. }),
                "{err:?}"
            );
            // A total size past the end of the data.
            let mut data = encode(&inner, 2, method, 6).unwrap();
            let len = data.len();
            data.truncate(len - 10);
            let err = list(&data, &Limits::default()).unwrap_err();
            assert!(matches!(err.kind, Malformed::Truncated { .. }), "{err:?}");
        }
    }

    #[test]
    fn zip_bomb_stops_at_the_declared_size() {
        // 64 MiB of zeros compress to a few kilobytes; the header says 4 KiB.
        let zeros = vec![0u8; 64 << 20];
        for method in [Method::Zlib, Method::Zstd] {
            let mut data = encode(&zeros, 3, method, 3).unwrap();
            assert!(data.len() < 1 << 20);
            data[16..24].copy_from_slice(&4096u64.to_le_bytes());
            let err = decompress(&data, &Limits::default()).unwrap_err();
            assert!(matches!(
                err.kind,
                Malformed::LargerThanDeclared { declared: 4096 }
            ));
            // Listing it finds no bundle magic in the zeros.
            let err = list(&data, &Limits::default()).unwrap_err();
            assert!(
                matches!(err.kind, Malformed::InDecompressed { .. }),
                "{err:?}"
            );
        }
    }

    #[test]
    fn corrupt_and_truncated_payloads() {
        let inner = inner();
        for version in [1, 2, 3] {
            for method in [Method::Zlib, Method::Zstd] {
                let good = encode(&inner, version, method, 6).unwrap();
                // Every truncation is an error.
                for n in 0..good.len() {
                    assert!(
                        decompress(&good[..n], &Limits::default()).is_err(),
                        "v{version} {method:?} cut at {n}"
                    );
                }
                // A flipped payload byte is an error (corrupt stream, size or hash).
                let hs = match version {
                    1 => 20,
                    2 => 24,
                    _ => 32,
                };
                for at in (hs..good.len()).step_by(7) {
                    let mut bad = good.clone();
                    bad[at] ^= 0x55;
                    assert!(
                        decompress(&bad, &Limits::default()).is_err(),
                        "v{version} {method:?} flip at {at}"
                    );
                }
            }
        }
        let mut bad = encode(&inner, 2, Method::Zstd, 6).unwrap();
        bad[4] = 9;
        assert!(matches!(
            parse_header(&bad).unwrap_err().kind,
            Malformed::UnknownVersion(9)
        ));
        bad[4] = 2;
        bad[6] = 7;
        assert!(matches!(
            parse_header(&bad).unwrap_err().kind,
            Malformed::UnknownMethod(7)
        ));
    }
}
