//! A fixture packed as a gzip-compressed tar archive (what `snapshot x.tar.gz` writes), read
//! into memory and never extracted: `--root x.tar.gz` reads it through the same
//! [`SysRoot`](crate::source::root::SysRoot) calls as a directory.
//!
//! The archive is hostile input like everything else. It is read under caps (compressed size,
//! unpacked size, member count, name length), and refused whole when a member could do on disk
//! what a fixture must not: an absolute name or `..` (a write outside the tree when extracted),
//! a hard link (a second name for a file elsewhere), a device, a FIFO, a sparse file, or a
//! member below a file or symbolic link. Symbolic links are kept as links and followed by hand
//! inside the archive, like a directory fixture's: an absolute target is re-rooted, one that
//! climbs above the top is an error.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use crate::msg;
use crate::source::root::{Owner, ReadError, ReadErrorKind};

/// The largest archive accepted, compressed. A snapshot of the largest machine is a few MiB.
pub const COMPRESSED_CAP: u64 = 256 << 20;

/// The most an archive may unpack to, headers included: a gzip bomb stops here.
pub const UNPACKED_CAP: u64 = 1 << 30;

/// The most members an archive may have; a snapshot of a 64-node MI300X has a few thousand.
pub const MEMBER_CAP: usize = 200_000;

/// The longest member name or link target accepted (Linux's `PATH_MAX`).
pub const NAME_CAP: usize = 4096;

/// How many symlinks one lookup may pass through (as for a directory fixture).
const MAX_SYMLINKS: u32 = 40;

/// How many single-directory levels are stepped into to find the machine tree (`snapshot/`,
/// or `fixtures/name/` when an archive was made of a path).
const MAX_WRAPPERS: usize = 8;

#[derive(Debug)]
enum Node {
    Dir(BTreeSet<String>),
    File { data: Arc<[u8]>, owner: Owner },
    Link(String),
}

/// Why an archive cannot be used as a fixture; the message names the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveError(pub String);

impl std::fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fixture archive in memory: every node by its path below the machine tree's top
/// (`""` is the top, `sys/class/kfd` a directory below it).
#[derive(Debug)]
pub struct Archive {
    nodes: HashMap<String, Node>,
}

/// Whether a file name says gzip-compressed tar.
pub fn is_archive_name(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

/// Stops reading once `left` bytes have been given, with an error the caller recognises.
struct Capped<R> {
    inner: R,
    left: u64,
    over: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more than the cap is the proof there is more.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.over = true;
            return Err(io::Error::other("unpacked size cap"));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

impl Archive {
    /// Unpacks `bytes` (a `.tar.gz`) into memory, or says why it cannot be a fixture.
    pub fn parse(bytes: &[u8]) -> Result<Self, ArchiveError> {
        Self::parse_with(bytes, UNPACKED_CAP)
    }

    /// [`Archive::parse`] with another cap on the unpacked size (fuzzing, tests).
    pub fn parse_with(bytes: &[u8], unpacked_cap: u64) -> Result<Self, ArchiveError> {
        let mut capped = Capped {
            inner: flate2::read::GzDecoder::new(bytes),
            left: unpacked_cap,
            over: false,
        };
        let mut members = BTreeMap::new();
        let result = read_members(&mut capped, &mut members);
        if capped.over {
            return Err(ArchiveError(msg!(
                "io.archive-too-large",
                cap = unpacked_cap >> 20
            )));
        }
        result?;
        let mut nodes = HashMap::new();
        nodes.insert(String::new(), Node::Dir(BTreeSet::new()));
        for (path, node) in members {
            insert(&mut nodes, &path, node)?;
        }
        let mut archive = Self { nodes };
        archive.step_into_wrappers();
        Ok(archive)
    }

    /// Whether the top holds `name` as a directory (following no link).
    pub fn has_dir(&self, name: &str) -> bool {
        matches!(self.nodes.get(name), Some(Node::Dir(_)))
    }

    /// Whether the top holds `name` at all.
    pub fn has(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// `snapshot x.tar.gz` puts the tree in `snapshot/`; `tar czf x.tgz dir` in `dir/`. While
    /// the top holds nothing but one directory and is no machine tree itself, that directory
    /// becomes the top.
    fn step_into_wrappers(&mut self) {
        for _ in 0..MAX_WRAPPERS {
            if self.is_machine_tree() {
                return;
            }
            let only = match self.nodes.get("") {
                Some(Node::Dir(children)) if children.len() == 1 => {
                    children.iter().next().cloned().unwrap_or_default()
                }
                _ => return,
            };
            if !self.has_dir(&only) {
                return;
            }
            let prefix = format!("{only}/");
            self.nodes = std::mem::take(&mut self.nodes)
                .into_iter()
                .filter_map(|(path, node)| {
                    if path == only {
                        Some((String::new(), node))
                    } else {
                        path.strip_prefix(&prefix)
                            .map(|rest| (rest.to_owned(), node))
                    }
                })
                .collect();
        }
    }

    /// The rule a directory fixture is held to (`source::machine_tree`): a `fixture.toml` or
    /// one of the machine directories at the top.
    pub fn is_machine_tree(&self) -> bool {
        self.has(crate::source::fixture::FIXTURE_FILE)
            || crate::source::MACHINE_DIRS.iter().any(|d| self.has_dir(d))
    }

    /// Resolves `abs` to the key of its node, following every symlink on the way (the last
    /// component's too when `follow_last`). A missing component is [`ReadErrorKind::NotFound`].
    fn lookup(&self, abs: &str, follow_last: bool) -> Result<&str, ReadError> {
        let err = |kind| ReadError {
            path: abs.to_owned(),
            kind,
        };
        let mut pending: Vec<String> = components(abs).rev().map(str::to_owned).collect();
        let mut done: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(part) = pending.pop() {
            if part == ".." {
                if done.pop().is_none() {
                    return Err(err(ReadErrorKind::EscapesRoot {
                        target: abs.to_owned(),
                    }));
                }
                continue;
            }
            done.push(part);
            let key = done.join("/");
            match self.nodes.get(&key) {
                None => return Err(err(ReadErrorKind::NotFound)),
                Some(Node::Link(target)) if follow_last || !pending.is_empty() => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(err(ReadErrorKind::SymlinkLoop));
                    }
                    done.pop();
                    if target.starts_with('/') {
                        done.clear();
                    }
                    let mut depth = done.len() as isize;
                    for p in components(target) {
                        depth += if p == ".." { -1 } else { 1 };
                        if depth < 0 {
                            return Err(err(ReadErrorKind::EscapesRoot {
                                target: target.clone(),
                            }));
                        }
                    }
                    pending.extend(components(target).rev().map(str::to_owned));
                }
                Some(Node::File { .. }) if !pending.is_empty() => {
                    return Err(err(ReadErrorKind::WrongType));
                }
                Some(_) => {}
            }
        }
        let key = done.join("/");
        self.nodes
            .get_key_value(&key)
            .map(|(k, _)| k.as_str())
            .ok_or_else(|| err(ReadErrorKind::NotFound))
    }

    fn node(&self, abs: &str, follow_last: bool) -> Result<&Node, ReadError> {
        let key = self.lookup(abs, follow_last)?;
        Ok(&self.nodes[key])
    }

    /// A file's bytes, whatever its size (code objects are mapped, not read, on disk).
    pub fn contents(&self, abs: &str) -> Result<Arc<[u8]>, ReadError> {
        match self.node(abs, true)? {
            Node::File { data, .. } => Ok(data.clone()),
            _ => Err(ReadError {
                path: abs.to_owned(),
                kind: ReadErrorKind::WrongType,
            }),
        }
    }

    /// A directory's entry names, sorted bytewise.
    pub fn read_dir(&self, abs: &str) -> Result<Vec<String>, ReadError> {
        match self.node(abs, true)? {
            Node::Dir(children) => Ok(children.iter().cloned().collect()),
            _ => Err(ReadError {
                path: abs.to_owned(),
                kind: ReadErrorKind::WrongType,
            }),
        }
    }

    /// A symlink's target as written.
    pub fn read_link(&self, abs: &str) -> Result<String, ReadError> {
        match self.node(abs, false)? {
            Node::Link(target) => Ok(target.clone()),
            _ => Err(ReadError {
                path: abs.to_owned(),
                kind: ReadErrorKind::WrongType,
            }),
        }
    }

    /// Whether `abs` exists (links followed), and whether it is a directory.
    pub fn exists(&self, abs: &str) -> Option<bool> {
        match self.node(abs, true) {
            Ok(Node::Dir(_)) => Some(true),
            Ok(_) => Some(false),
            Err(_) => None,
        }
    }

    /// Whether the last component of `abs` is a symlink (its directory resolved first).
    pub fn is_link(&self, abs: &str) -> bool {
        matches!(self.node(abs, false), Ok(Node::Link(_)))
    }

    /// Whether `abs` can be looked up: `Ok` when it exists or is merely missing.
    pub fn check(&self, abs: &str) -> Result<(), ReadError> {
        match self.lookup(abs, true) {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }

    /// A file's mode and owner, as recorded.
    pub fn owner(&self, abs: &str) -> Option<Owner> {
        match self.node(abs, true).ok()? {
            Node::File { owner, .. } => Some(*owner),
            _ => None,
        }
    }
}

fn components(path: &str) -> impl DoubleEndedIterator<Item = &str> {
    path.split('/').filter(|p| !p.is_empty() && *p != ".")
}

/// Reads every member into `members` by its checked path.
fn read_members(
    reader: &mut impl Read,
    members: &mut BTreeMap<String, Node>,
) -> Result<(), ArchiveError> {
    let not_tar = |e: &io::Error| {
        ArchiveError(msg!(
            "io.archive-not-tar-gz",
            error = crate::i18n::os_error(e)
        ))
    };
    let mut tar = tar::Archive::new(reader);
    let entries = tar.entries().map_err(|e| not_tar(&e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| not_tar(&e))?;
        if members.len() >= MEMBER_CAP {
            return Err(ArchiveError(msg!("io.archive-too-many", cap = MEMBER_CAP)));
        }
        let raw = entry.path_bytes().into_owned();
        let shown = format!("{:?}", String::from_utf8_lossy(&raw));
        let member = checked_path(&raw, &shown)?;
        let header = entry.header();
        let kind = header.entry_type();
        let owner = Owner {
            mode: header.mode().unwrap_or(0o644) & 0o7777,
            uid: header
                .uid()
                .ok()
                .and_then(|u| u32::try_from(u).ok())
                .unwrap_or(0),
            gid: header
                .gid()
                .ok()
                .and_then(|g| u32::try_from(g).ok())
                .unwrap_or(0),
        };
        let node = if kind.is_dir() {
            Node::Dir(BTreeSet::new())
        } else if kind.is_file() || kind.is_contiguous() {
            let mut data = Vec::with_capacity(entry.size().min(1 << 20) as usize);
            entry.read_to_end(&mut data).map_err(|e| not_tar(&e))?;
            Node::File {
                data: data.into(),
                owner,
            }
        } else if kind.is_symlink() {
            let target = entry
                .link_name_bytes()
                .map(|t| t.into_owned())
                .unwrap_or_default();
            match String::from_utf8(target) {
                Ok(t) if !t.is_empty() && t.len() <= NAME_CAP && !t.contains('\0') => Node::Link(t),
                _ => {
                    return Err(ArchiveError(msg!(
                        "io.archive-bad-link",
                        member = shown.clone()
                    )));
                }
            }
        } else if kind.is_hard_link() {
            return Err(ArchiveError(msg!(
                "io.archive-hard-link",
                member = shown.clone()
            )));
        } else if kind.is_character_special() || kind.is_block_special() {
            return Err(ArchiveError(msg!(
                "io.archive-device",
                member = shown.clone()
            )));
        } else if kind.is_fifo() {
            return Err(ArchiveError(msg!(
                "io.archive-fifo",
                member = shown.clone()
            )));
        } else if kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink()
        {
            // Headers that describe the next member; the reader applies them itself.
            continue;
        } else {
            return Err(ArchiveError(msg!(
                "io.archive-other-type",
                member = shown.clone()
            )));
        };
        if member.is_empty() {
            // `./` itself: the top, a directory already.
            if matches!(node, Node::Dir(_)) {
                continue;
            }
            return Err(ArchiveError(msg!(
                "io.archive-below-non-dir",
                member = shown.clone()
            )));
        }
        if members.insert(member, node).is_some() {
            return Err(ArchiveError(msg!(
                "io.archive-duplicate",
                member = shown.clone()
            )));
        }
    }
    Ok(())
}

/// The member's path as the tree's key (`a/b/c`), or why it is refused: not UTF-8, too long,
/// absolute, or climbing with `..`.
fn checked_path(raw: &[u8], shown: &str) -> Result<String, ArchiveError> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(ArchiveError(msg!("io.archive-bad-name", member = shown)));
    };
    if text.len() > NAME_CAP || text.contains('\0') {
        return Err(ArchiveError(msg!("io.archive-bad-name", member = shown)));
    }
    if text.starts_with('/') {
        return Err(ArchiveError(msg!("io.archive-absolute", member = shown)));
    }
    let parts: Vec<&str> = components(text).collect();
    if parts.contains(&"..") {
        return Err(ArchiveError(msg!("io.archive-dotdot", member = shown)));
    }
    Ok(parts.join("/"))
}

/// Puts `node` at `path`, making the directories above it; a member below a file or link is
/// refused (extracted, it would write through the link), as is a directory named twice as
/// something else.
fn insert(nodes: &mut HashMap<String, Node>, path: &str, node: Node) -> Result<(), ArchiveError> {
    let shown = format!("{path:?}");
    let parts: Vec<&str> = path.split('/').collect();
    for depth in 0..parts.len() {
        let parent = parts[..depth].join("/");
        let name = parts[depth];
        match nodes.get_mut(&parent) {
            Some(Node::Dir(children)) => {
                children.insert(name.to_owned());
            }
            _ => {
                return Err(ArchiveError(msg!(
                    "io.archive-below-non-dir",
                    member = shown
                )));
            }
        }
        let here = parts[..=depth].join("/");
        if depth + 1 < parts.len() {
            nodes
                .entry(here)
                .or_insert_with(|| Node::Dir(BTreeSet::new()));
        }
    }
    match (nodes.get(path), node) {
        // A directory listed after a file below it (tar orders members freely).
        (Some(Node::Dir(_)), Node::Dir(_)) => {}
        (Some(_), _) => {
            return Err(ArchiveError(msg!("io.archive-duplicate", member = shown)));
        }
        (None, node) => {
            nodes.insert(path.to_owned(), node);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.tar.gz` of `members`: (path, type, content or link target).
    fn pack(members: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (path, kind, data) in members {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_mode(0o644);
            // Written raw, so that hostile names reach the reader as they are.
            let name = &mut h.as_old_mut().name;
            name[..path.len()].copy_from_slice(path.as_bytes());
            if kind.is_symlink() || kind.is_hard_link() {
                h.as_old_mut().linkname[..data.len()].copy_from_slice(data);
                h.set_size(0);
                h.set_cksum();
                tar.append(&h, &[][..]).unwrap();
            } else {
                h.set_size(data.len() as u64);
                h.set_cksum();
                tar.append(&h, *data).unwrap();
            }
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    use tar::EntryType as T;

    #[test]
    fn reads_files_dirs_and_links_inside_the_wrapper() {
        let bytes = pack(&[
            ("snapshot/", T::Directory, b""),
            (
                "snapshot/fixture.toml",
                T::Regular,
                b"description = \"x\"\n",
            ),
            (
                "snapshot/sys/devices/pci/card1/revision",
                T::Regular,
                b"0xc1\n",
            ),
            (
                "snapshot/sys/class/drm/card1",
                T::Symlink,
                b"/sys/devices/pci/card1",
            ),
            ("snapshot/sys/class/rel", T::Symlink, b"../devices/pci"),
        ]);
        let a = Archive::parse(&bytes).unwrap();
        assert!(a.is_machine_tree());
        assert_eq!(
            &*a.contents("/sys/class/drm/card1/revision").unwrap(),
            b"0xc1\n"
        );
        assert_eq!(
            &*a.contents("/sys/class/rel/card1/revision").unwrap(),
            b"0xc1\n"
        );
        assert_eq!(a.read_dir("/sys/class").unwrap(), ["drm", "rel"]);
        assert_eq!(
            a.read_link("/sys/class/drm/card1").unwrap(),
            "/sys/devices/pci/card1"
        );
        assert!(a.is_link("/sys/class/drm/card1"));
        assert!(!a.is_link("/sys/devices/pci/card1"));
        assert_eq!(a.exists("/sys/class/drm/card1"), Some(true));
        assert_eq!(a.exists("/sys/nope"), None);
        assert_eq!(
            a.contents("/sys/nope").unwrap_err().kind,
            ReadErrorKind::NotFound
        );
        assert_eq!(
            a.contents("/sys").unwrap_err().kind,
            ReadErrorKind::WrongType
        );
    }

    #[test]
    fn links_cannot_leave_the_tree_or_loop() {
        let bytes = pack(&[
            ("sys/escape", T::Symlink, b"../../etc/passwd"),
            ("sys/abs", T::Symlink, b"/etc/passwd"),
            ("sys/a", T::Symlink, b"b"),
            ("sys/b", T::Symlink, b"a"),
        ]);
        let a = Archive::parse(&bytes).unwrap();
        assert!(matches!(
            a.contents("/sys/escape").unwrap_err().kind,
            ReadErrorKind::EscapesRoot { .. }
        ));
        // Re-rooted: the host's /etc/passwd is never read.
        assert_eq!(
            a.contents("/sys/abs").unwrap_err().kind,
            ReadErrorKind::NotFound
        );
        assert_eq!(
            a.contents("/sys/a").unwrap_err().kind,
            ReadErrorKind::SymlinkLoop
        );
        assert!(a.check("/sys/escape").is_err());
        assert!(a.check("/sys/missing").is_ok());
    }

    #[test]
    fn members_that_would_act_outside_the_tree_are_refused() {
        let cases: [(&str, T, &[u8], &str); 8] = [
            ("/etc/passwd", T::Regular, b"x", "absolute"),
            ("sys/../../x", T::Regular, b"x", ".."),
            ("sys/hard", T::Link, b"sys/x", "hard link"),
            ("dev/kfd", T::Char, b"", "device"),
            ("dev/sda", T::Block, b"", "device"),
            ("sys/fifo", T::Fifo, b"", "FIFO"),
            ("sys/odd", T::new(b'Z'), b"", "type"),
            ("sys/empty", T::Symlink, b"", "link"),
        ];
        for (path, kind, data, word) in cases {
            let err = Archive::parse(&pack(&[("sys/x", T::Regular, b"1"), (path, kind, data)]))
                .unwrap_err();
            assert!(err.0.contains(word), "{path}: {err}");
            assert!(
                err.0.contains(path.trim_start_matches('/')),
                "{path}: {err}"
            );
        }
    }

    #[test]
    fn a_member_below_a_link_or_file_and_duplicates_are_refused() {
        let below_link = pack(&[
            ("sys/l", T::Symlink, b"/etc"),
            ("sys/l/passwd", T::Regular, b"x"),
        ]);
        assert!(
            Archive::parse(&below_link)
                .unwrap_err()
                .0
                .contains("sys/l/passwd")
        );
        let below_file = pack(&[("sys/f", T::Regular, b"x"), ("sys/f/g", T::Regular, b"y")]);
        assert!(Archive::parse(&below_file).is_err());
        let twice = pack(&[("sys/f", T::Regular, b"x"), ("sys/f", T::Regular, b"y")]);
        assert!(Archive::parse(&twice).unwrap_err().0.contains("twice"));
        // A directory named after its contents is not a duplicate.
        let late_dir = pack(&[("sys/d/f", T::Regular, b"x"), ("sys/d", T::Directory, b"")]);
        assert!(Archive::parse(&late_dir).is_ok());
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_cap_and_garbage_is_not_an_archive() {
        let big = vec![0u8; 3 << 20];
        let bytes = pack(&[("sys/zeros", T::Regular, &big)]);
        assert!(bytes.len() < 64 << 10, "compresses well: {}", bytes.len());
        let err = Archive::parse_with(&bytes, 1 << 20).unwrap_err();
        assert!(err.0.contains("1 MiB"), "{err}");
        assert!(Archive::parse_with(&bytes, 4 << 20).is_ok());
        assert!(Archive::parse(b"not gzip at all").is_err());
        // A truncated archive is an error, never a partial tree taken for a machine.
        assert!(Archive::parse(&bytes[..bytes.len() / 2]).is_err());
    }

    #[test]
    fn a_tree_without_machine_dirs_is_not_a_machine() {
        let a = Archive::parse(&pack(&[("LICENSES/MIT.txt", T::Regular, b"x")])).unwrap();
        assert!(!a.is_machine_tree());
        let nested =
            Archive::parse(&pack(&[("a/b/etc/os-release", T::Regular, b"ID=x\n")])).unwrap();
        assert!(nested.is_machine_tree());
        assert_eq!(&*nested.contents("/etc/os-release").unwrap(), b"ID=x\n");
    }
}
