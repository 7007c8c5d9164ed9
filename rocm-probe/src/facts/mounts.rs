//! The mount table, `/proc/self/mountinfo` (proc(5)), read once per report: which filesystem
//! holds a path, its type and its options. Device nodes on a `noexec` mount (containers) and
//! MIOpen's database on a network or read-only filesystem (library environment) both ask it.

use crate::source::problem::{Problem, optional};
use crate::source::root::SysRoot;

/// Where the kernel lists this process's mounts.
pub const MOUNTINFO: &str = "/proc/self/mountinfo";

/// More mounts than any machine has: a table past it is cut there.
const MAX_MOUNTS: usize = 10_000;

/// At most this many malformed lines become problems: a file that bad is reported by its first.
const PROBLEMS_PER_FILE: usize = 20;

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted, unescaped.
    pub point: String,
    /// The per-mount options (`rw`, `noexec`, `nodev` …).
    pub options: Vec<String>,
    /// The filesystem type (`nfs4`, `devtmpfs`).
    pub fstype: String,
}

impl Mount {
    /// Mounted read-only.
    pub fn read_only(&self) -> bool {
        self.options.iter().any(|o| o == "ro")
    }
}

/// The mounts in the kernel's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountTable {
    /// The mounts.
    pub mounts: Vec<Mount>,
}

impl MountTable {
    /// Reads the table; a malformed line becomes a problem naming it, and the others are kept.
    /// `None` when the file is absent (not captured) or unreadable (a problem).
    pub fn read(root: &SysRoot, problems: &mut Vec<Problem>) -> Option<Self> {
        let text = optional(root.read_text(MOUNTINFO), problems)?;
        let (mounts, bad) = parse(&text);
        problems.extend(
            bad.into_iter()
                .take(PROBLEMS_PER_FILE)
                .map(|line| Problem::new(MOUNTINFO, crate::text!("facts.mountinfo-line", line))),
        );
        Some(Self { mounts })
    }

    /// The mount `path` is on: the last-mounted of the longest mount points that contain it by
    /// whole components.
    pub fn holding(&self, path: &str) -> Option<&Mount> {
        let holds = |m: &Mount| {
            let mp = m.point.trim_end_matches('/');
            mp.is_empty() || path == mp || path.starts_with(&format!("{mp}/"))
        };
        self.mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| holds(m))
            .max_by_key(|(i, m)| (m.point.trim_end_matches('/').len(), *i))
            .map(|(_, m)| m)
    }
}

/// The mounts in order, and the 1-based numbers of the lines that are not mountinfo lines
/// (blank lines are neither).
fn parse(text: &str) -> (Vec<Mount>, Vec<usize>) {
    let mut bad = Vec::new();
    let mounts = text
        .lines()
        .take(MAX_MOUNTS)
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .filter_map(|(i, line)| {
            let mount = parse_mount(line);
            if mount.is_none() {
                bad.push(i + 1);
            }
            mount
        })
        .collect();
    (mounts, bad)
}

fn parse_mount(line: &str) -> Option<Mount> {
    let fields: Vec<&str> = line.split(' ').collect();
    // id parent major:minor root mount-point options [optional…] - fstype source super
    let dash = fields.iter().position(|f| *f == "-")?;
    if dash < 6 || !fields[4].starts_with('/') {
        return None;
    }
    Some(Mount {
        point: unescape(fields[4]),
        options: fields[5].split(',').map(str::to_owned).collect(),
        fstype: (*fields.get(dash + 1)?).to_owned(),
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                if let Ok(b) = u8::try_from(value) {
                    out.push(b);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO_LXC: &str = "\
1021 1020 0:52 / / rw,relatime master:1 - zfs rpool/data/subvol-101-disk-0 rw,xattr,posixacl
1022 1021 0:56 / /dev rw,relatime - tmpfs none rw,size=492k,mode=755,uid=100000,gid=100000
1030 1022 0:5 /kfd /dev/kfd rw,nosuid,relatime - devtmpfs udev rw,size=32803320k,nr_inodes=8200830,mode=755
1031 1022 0:5 /dri/renderD128 /dev/dri/renderD128 rw,nosuid,relatime - devtmpfs udev rw,size=32803320k
";

    #[test]
    fn the_mount_holding_a_node_is_the_longest_latest_prefix() {
        let table = |text: &str| MountTable {
            mounts: parse(text).0,
        };
        let t = table(MOUNTINFO_LXC);
        assert_eq!(t.mounts.len(), 4);
        assert_eq!(t.holding("/dev/kfd").unwrap().fstype, "devtmpfs");
        assert_eq!(t.holding("/dev/dri/renderD129").unwrap().point, "/dev");
        assert_eq!(t.holding("/devx").unwrap().point, "/");
        // A later mount on the same point covers the earlier one.
        let t = table(&format!(
            "{MOUNTINFO_LXC}1040 1022 0:60 / /dev rw,nosuid,noexec - tmpfs tmpfs rw\n"
        ));
        let m = t.holding("/dev/dri/renderD129").unwrap();
        assert!(m.options.iter().any(|o| o == "noexec"), "{m:?}");
    }

    #[test]
    fn unescapes_octal_only() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/mnt/a\\04"), "/mnt/a\\04");
        assert_eq!(unescape("\\"), "\\");
        assert_eq!(unescape("a\\999"), "a\\999");
    }

    #[test]
    fn escapes_garbage_and_the_longest_mount() {
        let (t, bad) = parse(
            "garbage\n1 2 3 - x\n\n36 35 98:0 / /mnt rw - ext3 /dev/root rw\n\
             22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw\n\
             40 22 0:45 / /home rw,relatime shared:30 - nfs4 fs1:/export/home rw,vers=4.2\n\
             41 22 0:46 / /home/shared\\040dir ro,relatime shared:31 - ext4 /dev/sdb1 ro\n",
        );
        assert_eq!(bad, [1, 2]);
        let t = MountTable { mounts: t };
        assert_eq!(t.holding("/home/u/.config").unwrap().fstype, "nfs4");
        let shared = t.holding("/home/shared dir/x").unwrap();
        assert_eq!(
            (shared.point.as_str(), shared.read_only()),
            ("/home/shared dir", true)
        );
        assert_eq!(t.holding("/homework").unwrap().point, "/");
        assert_eq!(t.holding("/mnt").unwrap().fstype, "ext3");
    }
}
