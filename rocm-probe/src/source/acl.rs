//! POSIX access ACLs of device nodes (acl(5)): the binary `system.posix_acl_access` attribute
//! the kernel hands out, and the `getfacl` text form a fixture states (`user:1000:rw-`).
//!
//! Only the format lives here; what an ACL grants an identity is decided in
//! `facts::access`. systemd-logind adds `user:<uid>:rw-` entries to nodes udev tags `uaccess`
//! (render nodes, and `/dev/kfd` from systemd 260), so a device can be open to a user outside
//! its group: mode bits alone can no longer say who may open it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use crate::i18n::Text;

/// The extended attribute holding a file's access ACL.
pub const ACL_XATTR: &str = "system.posix_acl_access";

/// The only version of the attribute's format (`POSIX_ACL_XATTR_VERSION`).
const XATTR_VERSION: u32 = 2;
const HEADER_LEN: usize = 4;
const ENTRY_LEN: usize = 8;

/// The most entries the probe decodes or a fixture may state. logind adds one per seat user;
/// a device node with hundreds is not a real machine, and a longer value is refused, not cut.
pub const ACL_ENTRIES_MAX: usize = 64;

/// Read, write and execute, as in a mode's permission triple.
const PERM_BITS: u8 = 0o7;

/// Whom an ACL entry applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclTag {
    /// The file's owner (`user::`).
    UserObj,
    /// A user named by uid (`user:1000:`).
    User(u32),
    /// The file's owning group (`group::`).
    GroupObj,
    /// A group named by gid (`group:44:`).
    Group(u32),
    /// The most any entry of the group class grants (`mask::`).
    Mask,
    /// Everyone else (`other::`).
    Other,
}

/// One entry: a tag and its permissions (`0o4` read, `0o2` write, `0o1` execute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclEntry {
    /// Whom it applies to.
    pub tag: AclTag,
    /// Its permission bits.
    pub perm: u8,
}

/// A well-formed access ACL: exactly one owner, owning-group and other entry, at most one mask,
/// which is present whenever a named entry is, and each named uid or gid once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acl {
    entries: Vec<AclEntry>,
}

/// Why an ACL could not be used, as data; [`AclError::text`] says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclError {
    /// The attribute is not a header and whole entries, or holds more than [`ACL_ENTRIES_MAX`].
    Size {
        /// Its length in bytes.
        len: usize,
    },
    /// The header names another format version.
    Version {
        /// The version found.
        version: u32,
    },
    /// An entry (0-based) has an unknown tag or permission bits beyond `rwx`, or, in text, is
    /// not of the form `user:1000:rw-`.
    Entry {
        /// Its position.
        index: usize,
    },
    /// An entry acl(5) requires is missing or repeated, or a named entry has no mask.
    Shape,
}

impl AclError {
    /// The reason, in the current language when shown.
    pub fn text(&self) -> Text {
        match *self {
            AclError::Size { len } => crate::text!(
                "facts.acl-size",
                len,
                max = HEADER_LEN + ENTRY_LEN * ACL_ENTRIES_MAX
            ),
            AclError::Version { version } => crate::text!("facts.acl-version", version),
            AclError::Entry { index } => crate::text!("facts.acl-entry", index = index + 1),
            AclError::Shape => crate::text!("facts.acl-shape"),
        }
    }
}

impl fmt::Display for AclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for AclError {}

impl Acl {
    /// Checks what every ACL the kernel accepts satisfies (`posix_acl_valid`), in any order.
    pub fn new(entries: Vec<AclEntry>) -> Result<Self, AclError> {
        if entries.len() > ACL_ENTRIES_MAX {
            return Err(AclError::Size {
                len: HEADER_LEN + ENTRY_LEN * entries.len(),
            });
        }
        let mut tags: Vec<AclTag> = entries.iter().map(|e| e.tag).collect();
        tags.sort_unstable();
        let before = tags.len();
        tags.dedup();
        let count = |t: AclTag| usize::from(tags.contains(&t));
        let named = tags
            .iter()
            .any(|t| matches!(t, AclTag::User(_) | AclTag::Group(_)));
        let shaped = tags.len() == before
            && count(AclTag::UserObj) == 1
            && count(AclTag::GroupObj) == 1
            && count(AclTag::Other) == 1
            && (!named || count(AclTag::Mask) == 1);
        if !shaped {
            return Err(AclError::Shape);
        }
        if let Some(index) = entries.iter().position(|e| e.perm & !PERM_BITS != 0) {
            return Err(AclError::Entry { index });
        }
        Ok(Self { entries })
    }

    /// Decodes the `system.posix_acl_access` value: a little-endian `u32` version 2, then
    /// 8-byte entries `{u16 tag, u16 perm, u32 id}` (linux/posix_acl_xattr.h).
    pub fn from_xattr(bytes: &[u8]) -> Result<Self, AclError> {
        let len = bytes.len();
        let body = len.checked_sub(HEADER_LEN).ok_or(AclError::Size { len })?;
        if body % ENTRY_LEN != 0 || body / ENTRY_LEN > ACL_ENTRIES_MAX {
            return Err(AclError::Size { len });
        }
        let version = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if version != XATTR_VERSION {
            return Err(AclError::Version { version });
        }
        let entries = bytes[HEADER_LEN..]
            .chunks_exact(ENTRY_LEN)
            .enumerate()
            .map(|(index, e)| {
                let tag = u16::from_le_bytes([e[0], e[1]]);
                let perm = u16::from_le_bytes([e[2], e[3]]);
                let id = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
                let tag = match tag {
                    0x01 => AclTag::UserObj,
                    0x02 => AclTag::User(id),
                    0x04 => AclTag::GroupObj,
                    0x08 => AclTag::Group(id),
                    0x10 => AclTag::Mask,
                    0x20 => AclTag::Other,
                    _ => return Err(AclError::Entry { index }),
                };
                let perm = u8::try_from(perm).map_err(|_| AclError::Entry { index })?;
                Ok(AclEntry { tag, perm })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(entries)
    }

    /// Parses `getfacl -n`'s entry lines (`user::rw-`, `user:1000:rw-`, `group::rw-`,
    /// `group:44:r--`, `mask::rw-`, `other::---`): tags spelled out, ids numeric, no comments.
    pub fn from_text<S: AsRef<str>>(lines: &[S]) -> Result<Self, AclError> {
        if lines.len() > ACL_ENTRIES_MAX {
            return Err(AclError::Size {
                len: HEADER_LEN + ENTRY_LEN * lines.len(),
            });
        }
        let entries = lines
            .iter()
            .enumerate()
            .map(|(index, line)| parse_entry(line.as_ref()).ok_or(AclError::Entry { index }))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(entries)
    }

    /// The entries, in the order the attribute or fixture gave them.
    pub fn entries(&self) -> &[AclEntry] {
        &self.entries
    }

    /// The permissions of the entry with `tag`.
    pub fn perm(&self, tag: AclTag) -> Option<u8> {
        self.entries.iter().find(|e| e.tag == tag).map(|e| e.perm)
    }

    /// The entries in `getfacl -n`'s text form, as a fixture states them.
    pub fn to_text(&self) -> Vec<String> {
        self.entries.iter().map(entry_text).collect()
    }

    /// The permission triple `ls -l` shows for the owner, group and others: the owner's entry,
    /// the mask (the owning group's entry when there is none) and the other entry.
    pub fn mode_bits(&self) -> u32 {
        let get = |t| u32::from(self.perm(t).unwrap_or(0));
        let group = self
            .perm(AclTag::Mask)
            .map_or(get(AclTag::GroupObj), u32::from);
        get(AclTag::UserObj) << 6 | group << 3 | get(AclTag::Other)
    }
}

fn parse_entry(line: &str) -> Option<AclEntry> {
    let mut fields = line.split(':');
    let (kind, qualifier, perms) = (fields.next()?, fields.next()?, fields.next()?);
    if fields.next().is_some() {
        return None;
    }
    let id = || -> Option<u32> {
        // Plain decimal only: `+5`, `05` and names are not what `getfacl -n` prints.
        let plain = !qualifier.is_empty()
            && qualifier.bytes().all(|b| b.is_ascii_digit())
            && (qualifier == "0" || !qualifier.starts_with('0'));
        plain.then(|| qualifier.parse().ok()).flatten()
    };
    let tag = match (kind, qualifier.is_empty()) {
        ("user", true) => AclTag::UserObj,
        ("user", false) => AclTag::User(id()?),
        ("group", true) => AclTag::GroupObj,
        ("group", false) => AclTag::Group(id()?),
        ("mask", true) => AclTag::Mask,
        ("other", true) => AclTag::Other,
        _ => return None,
    };
    let p = perms.as_bytes();
    if p.len() != 3 {
        return None;
    }
    let mut perm = 0;
    for (i, (set, bit)) in [(b'r', 0o4), (b'w', 0o2), (b'x', 0o1)]
        .into_iter()
        .enumerate()
    {
        match p[i] {
            c if c == set => perm |= bit,
            b'-' => {}
            _ => return None,
        }
    }
    Some(AclEntry { tag, perm })
}

fn entry_text(e: &AclEntry) -> String {
    let (kind, id) = match e.tag {
        AclTag::UserObj => ("user", None),
        AclTag::User(id) => ("user", Some(id)),
        AclTag::GroupObj => ("group", None),
        AclTag::Group(id) => ("group", Some(id)),
        AclTag::Mask => ("mask", None),
        AclTag::Other => ("other", None),
    };
    let bit = |b: u8, c: char| if e.perm & b != 0 { c } else { '-' };
    format!(
        "{kind}:{}:{}{}{}",
        id.map(|i| i.to_string()).unwrap_or_default(),
        bit(0o4, 'r'),
        bit(0o2, 'w'),
        bit(0o1, 'x')
    )
}

impl Serialize for Acl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_text().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Acl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let lines = Vec::<String>::deserialize(d)?;
        Acl::from_text(&lines).map_err(|e| {
            let entry = match e {
                AclError::Entry { index } => lines.get(index).map(|l| format!(" ({l:?})")),
                _ => None,
            };
            D::Error::custom(format!("{e}{}", entry.unwrap_or_default()))
        })
    }
}

/// Reads a path's access ACL without following it when it is a symlink (`lgetxattr(2)`; the
/// attribute is read, the file never opened). `Ok(None)` when it has none, or the filesystem
/// keeps none or refuses to say: the mode bits then decide, as the kernel's own check does.
pub fn read_live(path: &std::path::Path) -> Result<Option<Acl>, AclError> {
    match xattr::get(path, ACL_XATTR) {
        Ok(Some(bytes)) => Acl::from_xattr(&bytes).map(Some),
        Ok(None) | Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `setfacl -m u:1000:rw` left on an ext4 file with mode 0644 (read back with
    /// `getxattr`): owner rw-, user 1000 rw-, group r--, mask rw-, other r--.
    const SETFACL_BYTES: &str = "0200000001000600ffffffff02000600e803000004000400ffffffff\
                                 10000600ffffffff20000400ffffffff";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn decodes_real_setfacl_bytes() {
        let acl = Acl::from_xattr(&hex(SETFACL_BYTES)).unwrap();
        assert_eq!(
            acl.to_text(),
            [
                "user::rw-",
                "user:1000:rw-",
                "group::r--",
                "mask::rw-",
                "other::r--"
            ]
        );
        assert_eq!(acl.perm(AclTag::User(1000)), Some(0o6));
        assert_eq!(acl.mode_bits(), 0o664);
    }

    #[test]
    fn text_round_trips() {
        let lines = [
            "user::rw-",
            "user:1000:rw-",
            "group::rw-",
            "group:44:r-x",
            "mask::rwx",
            "other::---",
        ];
        let acl = Acl::from_text(&lines).unwrap();
        assert_eq!(acl.to_text(), lines);
        assert_eq!(acl.perm(AclTag::Group(44)), Some(0o5));
        assert_eq!(acl.mode_bits(), 0o670);
    }

    #[test]
    fn malformed_bytes_are_errors() {
        let good = hex(SETFACL_BYTES);
        assert_eq!(Acl::from_xattr(&[]), Err(AclError::Size { len: 0 }));
        assert_eq!(
            Acl::from_xattr(&good[..good.len() - 1]),
            Err(AclError::Size { len: 43 })
        );
        let mut v3 = good.clone();
        v3[0] = 3;
        assert_eq!(Acl::from_xattr(&v3), Err(AclError::Version { version: 3 }));
        let mut tag = good.clone();
        tag[4 + 8] = 0x40;
        assert_eq!(Acl::from_xattr(&tag), Err(AclError::Entry { index: 1 }));
        let mut perm = good.clone();
        perm[4 + 2] = 0o10;
        assert_eq!(Acl::from_xattr(&perm), Err(AclError::Entry { index: 0 }));
        let mut wide = good.clone();
        wide[4 + 3] = 1;
        assert_eq!(Acl::from_xattr(&wide), Err(AclError::Entry { index: 0 }));
        // Without the mask the named user entry has no bound: refused as the kernel refuses it.
        let no_mask: Vec<u8> = good[..28].iter().chain(&good[36..]).copied().collect();
        assert_eq!(Acl::from_xattr(&no_mask), Err(AclError::Shape));
        // The owner entry twice.
        let twice: Vec<u8> = good.iter().chain(&good[4..12]).copied().collect();
        assert_eq!(Acl::from_xattr(&twice), Err(AclError::Shape));
        let huge: Vec<u8> = good[..4]
            .iter()
            .chain(good[4..12].iter().cycle().take(8 * (ACL_ENTRIES_MAX + 1)))
            .copied()
            .collect();
        assert!(matches!(Acl::from_xattr(&huge), Err(AclError::Size { .. })));
    }

    /// Hostile attribute values: every length up to past the cap, every tag and permission
    /// word, decoded without a panic; whatever is accepted is well-formed.
    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as u8
        };
        let good = hex(SETFACL_BYTES);
        for len in 0..(HEADER_LEN + ENTRY_LEN * (ACL_ENTRIES_MAX + 2)) {
            let random: Vec<u8> = (0..len).map(|_| next()).collect();
            let _ = Acl::from_xattr(&random);
            // A valid header and random entries reach the entry and shape checks.
            let mut framed = good[..HEADER_LEN].to_vec();
            framed.extend(random.iter().take(len / ENTRY_LEN * ENTRY_LEN));
            if let Ok(acl) = Acl::from_xattr(&framed) {
                assert!(acl.perm(AclTag::UserObj).is_some());
                assert_eq!(Acl::from_text(&acl.to_text()), Ok(acl));
            }
        }
    }

    #[test]
    fn malformed_text_is_an_error_naming_the_entry() {
        for (lines, index) in [
            (vec!["user::rw-", "usr:1000:rw-"], 1),
            (vec!["user::rw"], 0),
            (vec!["user::rwz"], 0),
            (vec!["user:alice:rw-"], 0),
            (vec!["user:+1:rw-"], 0),
            (vec!["user:01:rw-"], 0),
            (vec!["user:4294967296:rw-"], 0),
            (vec!["mask:5:rw-"], 0),
            (vec!["other::r--:x"], 0),
            (vec!["user::rw- #effective"], 0),
            (vec![""], 0),
        ] {
            assert_eq!(
                Acl::from_text(&lines),
                Err(AclError::Entry { index }),
                "{lines:?}"
            );
        }
        assert_eq!(
            Acl::from_text(&["user::rw-", "group::rw-"]),
            Err(AclError::Shape)
        );
        assert_eq!(
            Acl::from_text(&[
                "user::rw-",
                "user:1000:rw-",
                "user:1000:r--",
                "group::rw-",
                "mask::rw-",
                "other::---"
            ]),
            Err(AclError::Shape)
        );
    }

    /// The real oracle: `setfacl` (Debian's `acl` package) writes the attribute through the
    /// kernel, and the live reader decodes it back.
    #[test]
    fn live_reader_reads_what_setfacl_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("node");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(read_live(&file), Ok(None));
        let status = std::process::Command::new("setfacl")
            .args(["-m", "u:1000:rw,g:44:r,m::rw,o::-"])
            .arg(&file)
            .status()
            .expect("setfacl (Debian package acl) runs");
        assert!(status.success());
        let acl = read_live(&file).unwrap().expect("an ACL was set");
        let mut text = acl.to_text();
        text.sort();
        let mut want = [
            "group::r--",
            "group:44:r--",
            "mask::rw-",
            "other::---",
            "user::rw-",
            "user:1000:rw-",
        ];
        want.sort_unstable();
        assert_eq!(text, want);
        use std::os::unix::fs::MetadataExt;
        let mode = std::fs::metadata(&file).unwrap().mode() & 0o777;
        assert_eq!(acl.mode_bits(), mode);
        // A symlink is not followed: its own (absent) ACL, not its target's.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_live(&link), Ok(None));
    }
}
