//! The sentences of [`Malformed`] and [`Error`], in the current language (see [`crate::i18n`]):
//! the errors carry the data, and the sentence is made when one is shown.

use std::fmt;

use super::{Error, Malformed};
use crate::i18n::Text;
use crate::msg;

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for Malformed {}

impl Malformed {
    /// The sentence, kept as data until it is shown.
    pub fn text(&self) -> Text {
        match self {
            Self::NotRecognized => crate::text!("codeobject-error.not-recognized"),
            Self::NotElf => crate::text!("codeobject-error.not-elf"),
            Self::BadElf(detail) => crate::text!("codeobject-error.bad-elf", detail),
            Self::BadArchive(detail) => crate::text!("codeobject-error.bad-archive", detail),
            Self::Truncated { what, need, have } => {
                crate::text!("codeobject-error.truncated", what = part(what), need, have)
            }
            Self::NotABundle => crate::text!("codeobject-error.not-a-bundle"),
            Self::TooManyEntries { count, limit } => {
                crate::text!("codeobject-error.too-many-entries", count, limit)
            }
            Self::IdTooLong { len, limit } => {
                crate::text!("codeobject-error.id-too-long", len, limit)
            }
            Self::IdNotUtf8 => crate::text!("codeobject-error.id-not-utf8"),
            Self::EntryOutOfBounds {
                id,
                offset,
                size,
                available,
            } => crate::text!(
                "codeobject-error.entry-out-of-bounds",
                id = format!("{id:?}"),
                offset,
                size,
                available
            ),
            Self::UnknownVersion(version) => {
                crate::text!("codeobject-error.unknown-version", version)
            }
            Self::UnknownMethod(method) => crate::text!("codeobject-error.unknown-method", method),
            Self::TotalSizeTooSmall { total, header } => {
                crate::text!("codeobject-error.total-too-small", total, header)
            }
            Self::DeclaredTooLarge { declared, limit } => {
                crate::text!("codeobject-error.declared-too-large", declared, limit)
            }
            Self::HeaderTooLarge { size, limit } => {
                crate::text!("codeobject-error.header-too-large", size, limit)
            }
            Self::LargerThanDeclared { declared } => {
                crate::text!("codeobject-error.larger-than-declared", declared)
            }
            Self::SmallerThanDeclared { declared, actual } => {
                crate::text!("codeobject-error.smaller-than-declared", declared, actual)
            }
            Self::CompressedTruncated => crate::text!("codeobject-error.compressed-truncated"),
            Self::Decompress { method, message } => {
                crate::text!("codeobject-error.decompress", method = *method, message)
            }
            Self::HashMismatch { stored, computed } => crate::text!(
                "codeobject-error.hash-mismatch",
                stored = format!("{stored:#018x}"),
                computed = format!("{computed:#018x}")
            ),
            Self::TooManyInFile { limit } => {
                crate::text!("codeobject-error.too-many-in-file", limit)
            }
            Self::IdBytesInFile { limit } => {
                crate::text!("codeobject-error.id-bytes-in-file", limit)
            }
            Self::TooManyInRun { limit } => crate::text!("codeobject-error.too-many-in-run", limit),
            Self::IdBytesInRun { limit } => crate::text!("codeobject-error.id-bytes-in-run", limit),
            Self::EntriesOverlap {
                bundle,
                total,
                size,
            } => crate::text!("codeobject-error.entries-overlap", bundle, total, size),
            Self::ExtractTooLarge { limit } => {
                crate::text!("codeobject-error.extract-too-large", limit)
            }
            Self::InDecompressed { offset, kind } => crate::text!(
                "codeobject-error.in-decompressed",
                offset = format!("{offset:#x}"),
                kind = kind.text()
            ),
        }
    }
}

/// What a truncated structure was: the parsers name it in English, as data; a name no
/// message covers is shown as it is.
fn part(what: &str) -> crate::i18n::Arg {
    crate::i18n::Arg::from(match what {
        "bundle" => crate::text!("codeobject-error.part.bundle"),
        "bundle header" => crate::text!("codeobject-error.part.bundle-header"),
        "compressed bundle header" => {
            crate::text!("codeobject-error.part.compressed-bundle-header")
        }
        "compressed bundle (its header's total size)" => {
            crate::text!("codeobject-error.part.compressed-bundle-total")
        }
        "archive member" => crate::text!("codeobject-error.part.archive-member"),
        "section" => crate::text!("codeobject-error.part.section"),
        "ELF header" => crate::text!("codeobject-error.part.elf-header"),
        "entry count" => crate::text!("codeobject-error.part.entry-count"),
        "entry ID length" => crate::text!("codeobject-error.part.entry-id-length"),
        "entry offset" => crate::text!("codeobject-error.part.entry-offset"),
        "entry size" => crate::text!("codeobject-error.part.entry-size"),
        "entry ID" => crate::text!("codeobject-error.part.entry-id"),
        other => return other.into(),
    })
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Self::Io { path, .. } => msg!("codeobject-error.cannot-read", path = path.display()),
            Self::Malformed { path, offset, kind } => msg!(
                "codeobject-error.at-offset",
                path = path.display(),
                offset = format!("{offset:#x}"),
                kind
            ),
        };
        f.write_str(&text)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Malformed { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{Lang, scoped};

    /// Every name a parser gives a truncated structure (`what: "…"`, `u64_at(…, "…")`) has its
    /// Chinese: a new one without a message would show English in a Chinese report.
    #[test]
    fn every_truncated_part_has_a_message() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/codeobject");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // This file names the patterns it looks for.
            if path.ends_with("prose.rs") {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            for line in text.lines().map(str::trim) {
                let literal = if let Some(rest) = line.strip_prefix("what: \"") {
                    rest.split('"').next()
                } else if line.contains("u64_at(data") {
                    line.split('"').nth(1)
                } else {
                    None
                };
                names.extend(literal.map(str::to_owned));
            }
        }
        assert!(names.len() >= 10, "{names:?}");
        for name in names {
            let zh = scoped(Lang::Zh, || part(&name).to_string());
            let cjk = zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
            assert!(cjk, "{name}: {zh}");
        }
    }

    /// Every variant has its sentence in both languages, the English one as it always was.
    #[test]
    fn errors_read_in_the_current_language() {
        let kind = Malformed::Truncated {
            what: "entry count",
            need: 32,
            have: 24,
        };
        assert_eq!(
            kind.to_string(),
            "truncated entry count: needs 32 bytes, 24 present"
        );
        assert_eq!(
            scoped(Lang::Zh, || kind.to_string()),
            "条目数被截断：需要 32 字节，只有 24 字节"
        );
        let e = Error::Malformed {
            path: "a.co".into(),
            offset: 0x18,
            kind: Malformed::InDecompressed {
                offset: 16,
                kind: Box::new(Malformed::HashMismatch {
                    stored: 1,
                    computed: 2,
                }),
            },
        };
        assert_eq!(
            e.to_string(),
            "a.co: at offset 0x18: in the decompressed bundle at offset 0x10: hash mismatch: \
             header has 0x0000000000000001, data hashes to 0x0000000000000002"
        );
        let zh = scoped(Lang::Zh, || e.to_string());
        assert!(
            zh.starts_with("a.co：偏移 0x18 处：解压后的卸载包偏移 0x10 处：哈希不符"),
            "{zh}"
        );
    }
}
