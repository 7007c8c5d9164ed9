//! The operating system as `/etc/os-release` names it (os-release(5)), and the distribution
//! family whose commands a remedy gives (`update-grub`, `grubby`, `dracut`, `mkinitcpio`, …).

use serde::Serialize;

use crate::facts::Collect;
use crate::source::Source;
use crate::source::problem::{Problem, optional};

/// Where the operating system identifies itself.
pub const OS_RELEASE: &str = "/etc/os-release";
/// os-release(5): read only when `/etc/os-release` does not exist.
pub const OS_RELEASE_FALLBACK: &str = "/usr/lib/os-release";

/// Longest value kept: os-release values are short names and versions; a longer one is not
/// an os-release value and is dropped.
const MAX_VALUE: usize = 256;
/// At most this many `ID_LIKE` words are kept.
const MAX_LIKE: usize = 16;

/// A family of distributions that share the commands a remedy gives.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Distro {
    /// Debian, Ubuntu and their derivatives: apt, `update-grub`, `update-initramfs`.
    Debian,
    /// Fedora, RHEL and its rebuilds: dnf, `grubby`, `dracut`.
    Fedora,
    /// openSUSE and SUSE Linux Enterprise: zypper, `grub2-mkconfig`, `dracut`.
    Suse,
    /// Arch Linux and its derivatives: pacman, `grub-mkconfig`, `mkinitcpio`.
    Arch,
}

impl Distro {
    /// All families, in the order a remedy lists their variants.
    pub const ALL: [Distro; 4] = [Distro::Debian, Distro::Fedora, Distro::Suse, Distro::Arch];

    /// Its id, as JSON spells it (`debian`).
    pub fn id(self) -> &'static str {
        match self {
            Distro::Debian => "debian",
            Distro::Fedora => "fedora",
            Distro::Suse => "suse",
            Distro::Arch => "arch",
        }
    }

    /// Its package manager's command installing `packages` (names the probe spells itself):
    /// apt, dnf, zypper or pacman.
    pub fn install(self, packages: &str) -> String {
        let manager = match self {
            Distro::Debian => "apt install",
            Distro::Fedora => "dnf install",
            Distro::Suse => "zypper install",
            Distro::Arch => "pacman -S",
        };
        format!("sudo {manager} {packages}")
    }

    /// The family of one os-release id (`ID` or an `ID_LIKE` word).
    pub fn from_id(id: &str) -> Option<Self> {
        Some(match id {
            "debian" | "ubuntu" | "linuxmint" | "pop" => Distro::Debian,
            "fedora" | "rhel" | "centos" | "rocky" | "almalinux" | "ol" => Distro::Fedora,
            // openSUSE's ID_LIKE is "suse opensuse".
            "opensuse-leap" | "opensuse-tumbleweed" | "sles" | "sled" | "suse" | "opensuse" => {
                Distro::Suse
            }
            "arch" | "manjaro" | "endeavouros" | "cachyos" => Distro::Arch,
            _ => return None,
        })
    }
}

/// The families whose variants a remedy gives: the machine's, when its os-release names one;
/// else every family (each variant then says which it is for).
pub fn families(os: Option<&OsRelease>) -> Vec<Distro> {
    match os.and_then(|o| o.distro) {
        Some(d) => vec![d],
        None => Distro::ALL.to_vec(),
    }
}

/// The family whose kernel package built `release` (`uname -r`), from the suffix each family's
/// kernel packages give it: Fedora's and RHEL's `.fc43`/`.el9`, Ubuntu's flavours (`-generic`,
/// `-oem`, `-lowlatency`, the clouds'), Debian's architecture (`-amd64`, `-arm64`, `-cloud-amd64`,
/// `-rt-amd64`), Arch's `-arch1`, `-zen1`, `-lts`, `-hardened1`, SUSE's `-default`. `None` for a
/// kernel built elsewhere (a mainline or self-built one says nothing about its distribution).
pub fn kernel_family(release: &str) -> Option<Distro> {
    let r = release.trim();
    let has_dot_tag = |tag: &str| {
        r.split('.').any(|p| {
            p.strip_prefix(tag)
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        })
    };
    let flavour = r.rsplit('-').next().unwrap_or_default();
    if has_dot_tag("fc") || has_dot_tag("el") {
        Some(Distro::Fedora)
    } else if [
        "generic",
        "oem",
        "lowlatency",
        "azure",
        "aws",
        "gcp",
        "kvm",
        "raspi",
        "intel",
        "nvidia",
    ]
    .contains(&flavour)
        || ["amd64", "arm64"].contains(&flavour)
    {
        Some(Distro::Debian)
    } else if r.split('-').any(|p| {
        ["arch", "zen", "hardened"].iter().any(|t| {
            p.strip_prefix(t)
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
    }) || flavour == "lts"
    {
        Some(Distro::Arch)
    } else if flavour == "default" {
        Some(Distro::Suse)
    } else {
        None
    }
}

/// What os-release says, as far as the probe uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OsRelease {
    /// The file it was read from (`/etc/os-release`, or `/usr/lib/os-release`).
    pub path: String,
    /// `ID` (`ubuntu`).
    pub id: Option<String>,
    /// `ID_LIKE`, its words (`["debian"]`).
    pub id_like: Vec<String>,
    /// `VERSION_ID` (`24.04`).
    pub version_id: Option<String>,
    /// `PRETTY_NAME` (`Ubuntu 24.04.1 LTS`).
    pub pretty_name: Option<String>,
    /// The family, from `ID`, else the first `ID_LIKE` word that names one.
    pub distro: Option<Distro>,
}

impl OsRelease {
    /// NixOS (`ID=nixos`, or `nixos` in `ID_LIKE`): software lives in the Nix store, and each
    /// program finds its libraries through its own run path, not the system's search path.
    pub fn is_nixos(&self) -> bool {
        self.id.as_deref() == Some("nixos") || self.id_like.iter().any(|w| w == "nixos")
    }

    /// Ubuntu or a distribution built on it (`ID=ubuntu`, or `ubuntu` in `ID_LIKE`): packaged
    /// like Debian but not always with Debian's package names (firmware is `linux-firmware`).
    pub fn is_ubuntu_like(&self) -> bool {
        self.id.as_deref() == Some("ubuntu") || self.id_like.iter().any(|w| w == "ubuntu")
    }
}

impl Collect for OsRelease {
    type Needs<'a> = ();
    type Output = Option<Self>;

    /// Reads `/etc/os-release`, or `/usr/lib/os-release` when the first does not exist;
    /// `None` when neither does (not captured) or the one present could not be read.
    fn collect(source: &Source, (): (), problems: &mut Vec<Problem>) -> Option<Self> {
        let root = source.root();
        for path in [OS_RELEASE, OS_RELEASE_FALLBACK] {
            match root.read(path) {
                Err(e) if e.is_not_found() => continue,
                result => {
                    let bytes = optional(result, problems)?;
                    return Some(parse(path, &String::from_utf8_lossy(&bytes)));
                }
            }
        }
        None
    }
}

/// Parses os-release text; what is not a well-formed assignment of a key the probe uses is
/// ignored, as os-release(5) asks of readers.
pub fn parse(path: &str, text: &str) -> OsRelease {
    let mut out = OsRelease {
        path: path.to_owned(),
        ..OsRelease::default()
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, raw)) = line.split_once('=') else {
            continue;
        };
        let slot = match key {
            "ID" | "ID_LIKE" | "VERSION_ID" | "PRETTY_NAME" => key,
            _ => continue,
        };
        let Some(value) = unquote(raw) else { continue };
        if value.is_empty() {
            continue;
        }
        match slot {
            "ID" => out.id = Some(value).filter(|v| is_id(v)),
            "ID_LIKE" => {
                out.id_like = value
                    .split(' ')
                    .filter(|w| is_id(w))
                    .take(MAX_LIKE)
                    .map(str::to_owned)
                    .collect();
            }
            "VERSION_ID" => out.version_id = Some(value),
            _ => out.pretty_name = Some(value),
        }
    }
    out.distro = out
        .id
        .iter()
        .chain(&out.id_like)
        .find_map(|w| Distro::from_id(w));
    out
}

/// os-release(5)'s ids: lower-case letters, digits, `.`, `_` and `-`.
fn is_id(word: &str) -> bool {
    !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// A value with shell-style quoting undone (os-release(5): single or double quotes, and
/// backslash escapes of `$`, quotes, backslash and backtick). `None` for a value that is not
/// well formed (an unclosed quote), holds a control character or is too long.
fn unquote(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => out.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => match chars.next()? {
                        c @ ('$' | '"' | '\\' | '`') => out.push(c),
                        c => {
                            out.push('\\');
                            out.push(c);
                        }
                    },
                    c => out.push(c),
                }
            },
            '\\' => out.push(chars.next()?),
            c if c.is_whitespace() => return None,
            c => out.push(c),
        }
        if out.len() > MAX_VALUE {
            return None;
        }
    }
    (!out.chars().any(char::is_control)).then_some(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_kernel_release_names_the_family_that_built_it() {
        use super::Distro::*;
        for (release, family) in [
            ("6.18.4-200.fc43.x86_64", Some(Fedora)),
            ("5.14.0-503.11.1.el9_5.x86_64", Some(Fedora)),
            ("6.8.0-53-generic", Some(Debian)),
            ("6.17.0-1018-oem", Some(Debian)),
            ("6.1.0-18-amd64", Some(Debian)),
            ("6.12.10-arch1-1", Some(Arch)),
            ("6.12.10-zen1-1-zen", Some(Arch)),
            ("6.6.70-1-lts", Some(Arch)),
            ("6.4.0-150600.23.25-default", Some(Suse)),
            ("6.19.0-custom", None),
            ("6.18.4", None),
            ("", None),
        ] {
            assert_eq!(kernel_family(release), family, "{release}");
        }
    }
    use super::*;

    fn source(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Source) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        for (path, bytes) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let s = Source::fixture(dir.path()).unwrap();
        (dir, s)
    }

    #[test]
    fn reads_a_real_file_and_its_family() {
        // Ubuntu 24.04's /usr/lib/os-release (abridged: the lines the probe reads and a URL).
        let text = "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\n\
                    ID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\n";
        let o = parse(OS_RELEASE, text);
        assert_eq!(o.id.as_deref(), Some("ubuntu"));
        assert_eq!(o.id_like, ["debian"]);
        assert_eq!(o.version_id.as_deref(), Some("24.04"));
        assert_eq!(o.pretty_name.as_deref(), Some("Ubuntu 24.04.1 LTS"));
        assert_eq!(o.distro, Some(Distro::Debian));
    }

    #[test]
    fn family_from_id_then_id_like() {
        let family = |text: &str| parse(OS_RELEASE, text).distro;
        assert_eq!(family("ID=fedora"), Some(Distro::Fedora));
        assert_eq!(
            family("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\""),
            Some(Distro::Fedora)
        );
        assert_eq!(
            family("ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\""),
            Some(Distro::Suse)
        );
        assert_eq!(family("ID=sles"), Some(Distro::Suse));
        assert_eq!(family("ID=cachyos\nID_LIKE=arch"), Some(Distro::Arch));
        // An id the table does not know falls back to ID_LIKE, in its order.
        assert_eq!(
            family("ID=zorin\nID_LIKE='ubuntu debian'"),
            Some(Distro::Debian)
        );
        assert_eq!(family("ID=nixos"), None);
        assert_eq!(family(""), None);
        let ubuntu = |text: &str| parse("/etc/os-release", text).is_ubuntu_like();
        assert!(ubuntu("ID=ubuntu\nID_LIKE=debian"));
        assert!(ubuntu("ID=zorin\nID_LIKE='ubuntu debian'"));
        assert!(!ubuntu("ID=debian"));
        assert!(!ubuntu("ID=ubuntu-core-like\nID_LIKE=debianubuntu"));
    }

    #[test]
    fn shell_quoting_is_undone() {
        assert_eq!(unquote("plain").as_deref(), Some("plain"));
        assert_eq!(unquote("'a b'").as_deref(), Some("a b"));
        assert_eq!(
            unquote(r#""say \"hi\" \$5 \\ \`x\`""#).as_deref(),
            Some(r#"say "hi" $5 \ `x`"#)
        );
        assert_eq!(unquote(r"a\ b").as_deref(), Some("a b"));
        assert_eq!(unquote("\"a\"'b'c").as_deref(), Some("abc"));
    }

    #[test]
    fn hostile_values_are_dropped_never_a_panic() {
        // Unclosed quotes, a trailing backslash, unquoted spaces.
        for raw in ["\"open", "'open", "\"a\\", "a\\", "a b"] {
            assert_eq!(unquote(raw), None, "{raw:?}");
        }
        // Control characters, quoted or escaped.
        let o = parse(
            OS_RELEASE,
            "ID=\"ubu\u{1b}[31mntu\"\nPRETTY_NAME=\"x\u{7}\"\nVERSION_ID=1\u{0}",
        );
        assert_eq!((o.id, o.pretty_name, o.version_id), (None, None, None));
        // A huge value, an id with upper case or a slash, lines without '='.
        let huge = format!(
            "PRETTY_NAME=\"{}\"\nID=Ubuntu\nID_LIKE=\"../x debian\"\nnonsense\n=\n",
            "x".repeat(1 << 20)
        );
        let o = parse(OS_RELEASE, &huge);
        assert_eq!(o.pretty_name, None);
        assert_eq!(o.id, None);
        assert_eq!(o.id_like, ["debian"]);
        assert_eq!(o.distro, Some(Distro::Debian));
        // Many ID_LIKE words are capped.
        let many = format!("ID_LIKE=\"{}\"", vec!["a"; 100].join(" "));
        assert_eq!(parse(OS_RELEASE, &many).id_like.len(), MAX_LIKE);
        // Binary garbage.
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let _ = parse(OS_RELEASE, &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn etc_first_then_usr_lib_then_none() {
        let (_d, s) = source(&[
            ("etc/os-release", b"ID=arch\n"),
            ("usr/lib/os-release", b"ID=fedora\n"),
        ]);
        let (o, p) = crate::facts::collect::<OsRelease>(&s, ());
        let o = o.unwrap();
        assert_eq!(
            (o.path.as_str(), o.distro),
            (OS_RELEASE, Some(Distro::Arch))
        );
        assert!(p.is_empty());

        let (_d, s) = source(&[("usr/lib/os-release", b"ID=fedora\n")]);
        let (o, _) = crate::facts::collect::<OsRelease>(&s, ());
        let o = o.unwrap();
        assert_eq!(
            (o.path.as_str(), o.distro),
            (OS_RELEASE_FALLBACK, Some(Distro::Fedora))
        );

        let (_d, s) = source(&[]);
        assert_eq!(crate::facts::collect::<OsRelease>(&s, ()), (None, vec![]));
    }

    #[test]
    fn an_unusable_file_is_a_problem_and_no_fallback() {
        // A directory where the file should be: os-release(5) falls back only when it is absent.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc/os-release")).unwrap();
        std::fs::create_dir_all(dir.path().join("usr/lib")).unwrap();
        std::fs::write(dir.path().join("usr/lib/os-release"), "ID=fedora\n").unwrap();
        let s = Source::fixture(dir.path()).unwrap();
        let (o, p) = crate::facts::collect::<OsRelease>(&s, ());
        assert_eq!(o, None);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, OS_RELEASE);
    }

    #[test]
    fn a_file_over_the_read_cap_is_a_problem_not_a_panic() {
        let huge = format!("ID=debian\nPRETTY_NAME=\"{}\"\n", "x".repeat(2 << 20));
        let (_d, s) = source(&[("etc/os-release", huge.as_bytes())]);
        let (o, p) = crate::facts::collect::<OsRelease>(&s, ());
        assert_eq!(o, None);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn a_snapshot_records_the_file() {
        let (_d, s) = source(&[("etc/os-release", b"ID=debian\n")]);
        let (s, recorder) = s.record();
        let _ = crate::facts::collect::<OsRelease>(&s, ());
        let recorded = recorder.records();
        assert!(
            recorded.iter().any(|r| matches!(
                r,
                crate::source::record::Record::File { path, bytes }
                    if path == OS_RELEASE && bytes == b"ID=debian\n"
            )),
            "{recorded:?}"
        );
    }
}
