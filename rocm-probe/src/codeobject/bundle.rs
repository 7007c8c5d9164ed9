//! Uncompressed offload bundles (`__CLANG_OFFLOAD_BUNDLE__`) and their entry IDs.
//!
//! Layout (clang `ClangOffloadBundler.rst`, "Bundled Binary File Layout"; little-endian):
//! the 24-byte magic, a u64 entry count, then per entry a u64 offset (from the bundle start),
//! a u64 size, a u64 ID length and the ID bytes; the code objects follow.

use super::{Limits, Malformed, ParseError};

/// The magic an uncompressed bundle starts with.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";

/// One entry as the bundle header lists it; offsets are from the bundle start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// The entry ID, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub id: String,
    /// Offset from the bundle start.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A parsed bundle header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBundle {
    /// The entries in header order.
    pub entries: Vec<RawEntry>,
    /// The size of the header (magic, count and entry table).
    pub header_size: u64,
    /// Where the furthest entry ends, from the bundle start (at least the header size).
    pub end: u64,
}

/// Reads a little-endian u64 at `at`, or says what was being read and how short `data` is.
fn u64_at(data: &[u8], at: u64, what: &'static str) -> Result<u64, ParseError> {
    let start = usize::try_from(at).ok();
    let bytes = start
        .and_then(|s| data.get(s..s.checked_add(8)?))
        .ok_or_else(|| {
            ParseError::at(
                at,
                Malformed::Truncated {
                    what,
                    need: at.saturating_add(8),
                    have: data.len() as u64,
                },
            )
        })?;
    let mut b = [0u8; 8];
    b.copy_from_slice(bytes);
    Ok(u64::from_le_bytes(b))
}

/// How many bytes of a bundle's start the header needs, as far as `data` (a prefix of the
/// bundle) tells: used to decompress no more of a compressed bundle than its header.
/// `None` once `data` holds the whole header.
pub fn header_bytes_needed(data: &[u8], limits: &Limits) -> Result<Option<u64>, ParseError> {
    HeaderNeed::default().next(data, limits)
}

/// [`header_bytes_needed`] as the prefix grows: each call goes on from the entry where the
/// last one stopped, so learning a header of n entries reads each entry once, not n times.
#[derive(Debug, Default)]
pub struct HeaderNeed {
    /// The entry count, once read.
    count: Option<u64>,
    /// Entries whose ID length has been read.
    seen: u64,
    /// Where the last entry seen ends (0 before the count is read).
    need: u64,
}

impl HeaderNeed {
    /// Bytes the header needs given `data`, a longer prefix of the same bundle than at the
    /// last call; `None` once `data` holds the whole header.
    pub fn next(&mut self, data: &[u8], limits: &Limits) -> Result<Option<u64>, ParseError> {
        let have = data.len() as u64;
        let count = match self.count {
            Some(count) => count,
            None => {
                let fixed = BUNDLE_MAGIC.len() as u64 + 8;
                if have < fixed {
                    return Ok(Some(fixed));
                }
                let count = u64_at(data, 24, "entry count")?;
                check_count(count, limits)?;
                self.count = Some(count);
                self.need = fixed;
                count
            }
        };
        while self.seen < count {
            let fixed = self.need + 24;
            if have < fixed {
                return Ok(Some(fixed));
            }
            let id_len = u64_at(data, self.need + 16, "entry ID length")?;
            check_id_len(self.need + 16, id_len, limits)?;
            self.need = fixed + id_len;
            self.seen += 1;
        }
        Ok((have < self.need).then_some(self.need))
    }
}

fn check_count(count: u64, limits: &Limits) -> Result<(), ParseError> {
    if count > limits.max_entries {
        return Err(ParseError::at(
            24,
            Malformed::TooManyEntries {
                count,
                limit: limits.max_entries,
            },
        ));
    }
    Ok(())
}

fn check_id_len(at: u64, len: u64, limits: &Limits) -> Result<(), ParseError> {
    if len > limits.max_id_len {
        return Err(ParseError::at(
            at,
            Malformed::IdTooLong {
                len,
                limit: limits.max_id_len,
            },
        ));
    }
    Ok(())
}

/// Parses the header of the bundle that starts `data`. `available` is how many bytes the
/// bundle may span (to the end of its section, file or decompressed buffer); every entry must
/// lie inside it. Offsets in errors are from the bundle start.
pub fn parse(data: &[u8], available: u64, limits: &Limits) -> Result<RawBundle, ParseError> {
    if !data.starts_with(BUNDLE_MAGIC) {
        return Err(ParseError::at(0, Malformed::NotABundle));
    }
    let count = u64_at(data, 24, "entry count")?;
    check_count(count, limits)?;
    let mut at = 32u64;
    // The count is bounded, but each entry still needs 24 bytes: never reserve for entries
    // the data cannot hold.
    let room = (data.len() as u64).saturating_sub(at) / 24;
    let mut entries = Vec::with_capacity(count.min(room) as usize);
    let mut end = 0u64;
    for _ in 0..count {
        let offset = u64_at(data, at, "entry offset")?;
        let size = u64_at(data, at + 8, "entry size")?;
        let id_len = u64_at(data, at + 16, "entry ID length")?;
        check_id_len(at + 16, id_len, limits)?;
        let id_start = at + 24;
        let id_bytes = usize::try_from(id_start)
            .ok()
            .zip(usize::try_from(id_len).ok())
            .and_then(|(s, l)| data.get(s..s.checked_add(l)?))
            .ok_or_else(|| {
                ParseError::at(
                    id_start,
                    Malformed::Truncated {
                        what: "entry ID",
                        need: id_start.saturating_add(id_len),
                        have: data.len() as u64,
                    },
                )
            })?;
        let id = std::str::from_utf8(id_bytes)
            .map_err(|_| ParseError::at(id_start, Malformed::IdNotUtf8))?
            .to_owned();
        let entry_end = offset.checked_add(size).filter(|e| *e <= available);
        let Some(entry_end) = entry_end else {
            return Err(ParseError::at(
                at,
                Malformed::EntryOutOfBounds {
                    id,
                    offset,
                    size,
                    available,
                },
            ));
        };
        end = end.max(entry_end);
        entries.push(RawEntry { id, offset, size });
        at = id_start + id_len;
    }
    Ok(RawBundle {
        entries,
        header_size: at,
        end: end.max(at),
    })
}

/// An entry ID split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryId<'a> {
    /// Offload kind: `host`, `hip`, `hipv4`, `hcc`, `openmp` …
    pub kind: &'a str,
    /// The target triple, e.g. `amdgcn-amd-amdhsa` (environment dropped when empty).
    pub triple: &'a str,
    /// The target ID after the triple, if any.
    pub target: Option<&'a str>,
}

/// Splits `<kind>-<triple>[-<target id>]`. The triple of a device entry has four components
/// (`amdgcn-amd-amdhsa-` with an empty environment, hence the `--` before the target), older
/// compilers wrote three (`hip-amdgcn-amd-amdhsa-gfx906`); a generic target ID has dashes of
/// its own (`gfx9-4-generic`), so the ID is split by position, not at the last dash.
pub fn split_id(id: &str) -> EntryId<'_> {
    let (kind, rest) = id.split_once('-').unwrap_or((id, ""));
    // arch-vendor-os, then either the target (three-component triple) or env-target.
    let mut dashes = rest.match_indices('-').map(|(i, _)| i);
    let (Some(_), Some(_), Some(os_end)) = (dashes.next(), dashes.next(), dashes.next()) else {
        return EntryId {
            kind,
            triple: rest,
            target: None,
        };
    };
    let after = &rest[os_end + 1..];
    if after.starts_with("gfx") {
        return EntryId {
            kind,
            triple: &rest[..os_end],
            target: Some(after),
        };
    }
    match after.split_once('-') {
        Some((env, target)) => EntryId {
            kind,
            triple: if env.is_empty() {
                &rest[..os_end]
            } else {
                &rest[..os_end + 1 + env.len()]
            },
            target: (!target.is_empty()).then_some(target),
        },
        None => EntryId {
            kind,
            triple: rest,
            target: None,
        },
    }
}

/// Writes an uncompressed offload bundle by the documented layout (clang's
/// `OffloadBundler.cpp`): the magic, the entry count, then per entry its offset, size, ID length
/// and ID, then the bodies in entry order. The one writer of bundles: snapshot stand-ins, test
/// inputs and fuzz seeds are all made here.
pub fn write(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
    let bodies: usize = entries.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(BUNDLE_MAGIC.len() + 8 + table + bodies);
    out.extend_from_slice(BUNDLE_MAGIC);
    out.extend((entries.len() as u64).to_le_bytes());
    let mut offset = (BUNDLE_MAGIC.len() + 8 + table) as u64;
    for (id, body) in entries {
        out.extend(offset.to_le_bytes());
        out.extend((body.len() as u64).to_le_bytes());
        out.extend((id.len() as u64).to_le_bytes());
        out.extend(id.as_bytes());
        offset += body.len() as u64;
    }
    for (_, body) in entries {
        out.extend_from_slice(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn build(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut header = BUNDLE_MAGIC.to_vec();
        header.extend((entries.len() as u64).to_le_bytes());
        let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
        let mut offset = (32 + table) as u64;
        for (id, bytes) in entries {
            header.extend(offset.to_le_bytes());
            header.extend((bytes.len() as u64).to_le_bytes());
            header.extend((id.len() as u64).to_le_bytes());
            header.extend(id.as_bytes());
            offset += bytes.len() as u64;
        }
        for (_, bytes) in entries {
            header.extend(*bytes);
        }
        header
    }

    #[test]
    fn parses_entries_and_bounds() {
        let data = build(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"abcd"),
        ]);
        let b = parse(&data, data.len() as u64, &Limits::default()).unwrap();
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.entries[1].size, 4);
        assert_eq!(b.end, data.len() as u64);
        let start = b.entries[1].offset as usize;
        assert_eq!(&data[start..start + 4], b"abcd");
        assert_eq!(
            header_bytes_needed(&data, &Limits::default()).unwrap(),
            None
        );
        assert_eq!(
            header_bytes_needed(&data[..40], &Limits::default()).unwrap(),
            Some(56)
        );
        // The last entry runs past what is available.
        let err = parse(&data, data.len() as u64 - 1, &Limits::default()).unwrap_err();
        assert!(
            matches!(err.kind, Malformed::EntryOutOfBounds { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn hostile_headers_are_errors_not_allocations() {
        let mut data = build(&[("hipv4-amdgcn-amd-amdhsa--gfx908", b"xy")]);
        // Entry count 2^60.
        data[24..32].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let err = parse(&data, 1 << 40, &Limits::default()).unwrap_err();
        assert!(matches!(err.kind, Malformed::TooManyEntries { .. }));
        // Count within the limit but more entries than bytes: truncated.
        data[24..32].copy_from_slice(&1000u64.to_le_bytes());
        let err = parse(&data, 1 << 40, &Limits::default()).unwrap_err();
        assert!(matches!(err.kind, Malformed::Truncated { .. }), "{err:?}");
        // Offset + size overflowing u64.
        let mut data = build(&[("hipv4-amdgcn-amd-amdhsa--gfx908", b"xy")]);
        data[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            parse(&data, u64::MAX, &Limits::default()).unwrap_err().kind,
            Malformed::EntryOutOfBounds { .. }
        ));
        // An ID length of 2^63.
        let mut data = build(&[("hipv4-amdgcn-amd-amdhsa--gfx908", b"xy")]);
        data[48..56].copy_from_slice(&(1u64 << 63).to_le_bytes());
        assert!(matches!(
            parse(&data, 1 << 40, &Limits::default()).unwrap_err().kind,
            Malformed::IdTooLong { .. }
        ));
        // Every prefix of a good bundle is an error, never a panic.
        let data = build(&[("hipv4-amdgcn-amd-amdhsa--gfx908", b"xy")]);
        for n in 0..data.len() {
            assert!(parse(&data[..n], n as u64, &Limits::default()).is_err());
        }
    }

    #[test]
    fn splits_entry_ids() {
        let s = split_id("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        assert_eq!(
            (s.kind, s.triple, s.target),
            ("hipv4", "amdgcn-amd-amdhsa", Some("gfx90a:sramecc+:xnack-"))
        );
        let s = split_id("hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+");
        assert_eq!(s.target, Some("gfx9-4-generic:xnack+"));
        let s = split_id("hip-amdgcn-amd-amdhsa-gfx906");
        assert_eq!((s.triple, s.target), ("amdgcn-amd-amdhsa", Some("gfx906")));
        let s = split_id("host-x86_64-unknown-linux");
        assert_eq!(
            (s.kind, s.triple, s.target),
            ("host", "x86_64-unknown-linux", None)
        );
        let s = split_id("host-x86_64-unknown-linux-gnu-");
        assert_eq!((s.triple, s.target), ("x86_64-unknown-linux-gnu", None));
        let s = split_id("openmp-amdgcn-amd-amdhsa-gnu-gfx90a");
        assert_eq!(
            (s.triple, s.target),
            ("amdgcn-amd-amdhsa-gnu", Some("gfx90a"))
        );
        let s = split_id("garbage");
        assert_eq!((s.kind, s.triple, s.target), ("garbage", "", None));
    }
}
