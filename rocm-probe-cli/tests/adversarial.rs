//! The adversarial corpus (README "Safety"): every way the probe's input, output and environment can
//! be hostile, made by generators at test time (FIFOs, device nodes, sparse gigabyte files,
//! planted links, decompression bombs — nothing large is committed), and run against the
//! binary — the release build when `ROCM_PROBE_BIN` names it, as `scripts/test` does.
//!
//! For every case, whatever it is:
//! - the exit status is exactly 0, 1, 2 or 3 (3: a report whose verdict is undetermined, no GPU
//!   checked; never a signal, never 101), and the one the case names when it names one;
//! - the run ends within [`WALL_CAP`] (killed after it: a hang is a failure, not a timing);
//! - peak RSS stays under [`RSS_CAP`] (from `getrusage(RUSAGE_CHILDREN)`, which only grows: a
//!   case that raises it past the cap is the culprit; the corpus is this binary's only test,
//!   so no other test's children count);
//! - standard output stays under [`STDOUT_CAP`] and standard error under [`STDERR_CAP`];
//! - nothing in the case's sandbox changes except the paths the case asked to be written (the
//!   probe runs with its working directory, `HOME` and `TMPDIR` inside the sandbox; a
//!   victim file and every planted link are inside it too).
//!
//! Cases run as root (as CI does); the ones that need an ordinary user go through `setpriv`.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// No run may take longer (the slowest honest case, a 1.3 GB library, takes well under 1 s).
const WALL_CAP: Duration = Duration::from_secs(20);
/// Peak resident memory of any run.
const RSS_CAP: u64 = 256 << 20;
/// Standard output of any run: the largest honest output (agents --json of 8x MI300X CPX) is
/// 80 KiB; a report of a hostile tree must stay within a small multiple of a normal one.
const STDOUT_CAP: usize = 2 << 20;
/// Standard error of any run.
const STDERR_CAP: usize = 256 << 10;

fn bin() -> PathBuf {
    match std::env::var_os("ROCM_PROBE_BIN") {
        Some(p) => PathBuf::from(p),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI runs the corpus against the release binary (ROCM_PROBE_BIN)"
            );
            assert_cmd::cargo::cargo_bin("rocm-probe")
        }
    }
}

fn repo_fixture(name: &str) -> PathBuf {
    common::fixture(name)
}

/// One case: a sandbox is built by `setup`, then the probe runs with `args` (`{S}` in an
/// argument is replaced by the sandbox path).
struct Case {
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    /// Allowed exit statuses (all of 0, 1, 2 when empty).
    exit: &'static [i32],
    /// Paths (relative to the sandbox) the case asks the probe to write; their changes are
    /// allowed, and so are new files directly beside them (the atomic write's temporary is
    /// renamed away before the run ends, so none may remain).
    writes: &'static [&'static str],
    /// Run as nobody (uid/gid 65534, no groups).
    nobody: bool,
    /// Text the standard error must contain (a refusal must name what it refused).
    stderr_has: &'static str,
    /// Extra environment variables.
    env: &'static [(&'static str, &'static str)],
}

const DEFAULT: Case = Case {
    name: "",
    setup: |_| {},
    args: &[],
    exit: &[],
    writes: &[],
    nobody: false,
    stderr_has: "",
    env: &[],
};

/// `S/f`: a copy of the malformed corpus's clean base (one CPU node, one GPU node).
fn base(s: &Path) -> PathBuf {
    let f = s.join("f");
    common::copy_tree(&repo_fixture("malformed/base"), &f);
    f
}

/// `S/f`: a copy of a named repository fixture.
fn named(s: &Path, name: &str) -> PathBuf {
    let f = s.join("f");
    common::copy_tree(&repo_fixture(name), &f);
    f
}

const NODES: &str = "sys/class/kfd/kfd/topology/nodes";

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
}

fn mknod_zero(p: &Path) {
    let _ = std::fs::remove_file(p);
    let ok = Command::new("mknod")
        .arg(p)
        .args(["c", "1", "5"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

fn sparse(p: &Path, len: u64, head: &[u8]) {
    let _ = std::fs::remove_file(p);
    std::fs::write(p, head).unwrap();
    File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// A victim file and a link to it, for the planted-link cases.
fn victim_and_link(s: &Path, link: &str) {
    std::fs::write(s.join("victim"), "precious\n").unwrap();
    symlink(s.join("victim"), s.join(link)).unwrap();
}

/// 1 MiB of `properties` whose every line repeats a key (once 27 MB of report text).
fn repeated_keys() -> Vec<u8> {
    let mut v = Vec::with_capacity(1 << 20);
    let mut i = 0u64;
    while v.len() < (1 << 20) - 64 {
        v.extend_from_slice(format!("simd_count {i}\n").as_bytes());
        i += 1;
    }
    v
}

use rocm_probe::codeobject::hostile;

fn cases() -> Vec<Case> {
    vec![
        // ---- fixture.toml and --root ----
        Case {
            name: "fixture-toml-fifo",
            setup: |s| mkfifo(&base(s).join("fixture.toml")),
            args: &["--deadline", "15", "--root", "{S}/f"],
            exit: &[2],
            stderr_has: "fixture.toml",
            ..DEFAULT
        },
        Case {
            name: "fixture-toml-chardev",
            setup: |s| mknod_zero(&base(s).join("fixture.toml")),
            args: &["--root", "{S}/f"],
            exit: &[2],
            stderr_has: "fixture.toml",
            ..DEFAULT
        },
        Case {
            name: "fixture-toml-link-to-dev-zero",
            setup: |s| {
                let f = base(s);
                std::fs::remove_file(f.join("fixture.toml")).unwrap();
                symlink("../../../../../../../../dev/zero", f.join("fixture.toml")).unwrap();
            },
            args: &["--root", "{S}/f"],
            exit: &[2],
            stderr_has: "fixture.toml",
            ..DEFAULT
        },
        Case {
            name: "fixture-toml-huge",
            setup: |s| {
                let f = base(s);
                let mut t = std::fs::read_to_string(f.join("fixture.toml")).unwrap();
                t.push_str("[env]\n");
                let mut i = 0;
                while t.len() < 19 << 20 {
                    t.push_str(&format!("V{i} = \"{}\"\n", "x".repeat(100)));
                    i += 1;
                }
                std::fs::write(f.join("fixture.toml"), t).unwrap();
            },
            args: &["--root", "{S}/f"],
            exit: &[2],
            stderr_has: "fixture.toml",
            ..DEFAULT
        },
        Case {
            name: "root-is-a-fifo",
            setup: |s| mkfifo(&s.join("fifo")),
            args: &["--root", "{S}/fifo"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "root-is-dev-zero",
            args: &["--root", "/dev/zero"],
            exit: &[2],
            ..DEFAULT
        },
        // ---- the fixture tree ----
        Case {
            name: "properties-fifo",
            setup: |s| mkfifo(&base(s).join(NODES).join("1/properties")),
            args: &["--root", "{S}/f"],
            ..DEFAULT
        },
        Case {
            name: "properties-chardev",
            setup: |s| mknod_zero(&base(s).join(NODES).join("1/properties")),
            args: &["--root", "{S}/f", "agents"],
            ..DEFAULT
        },
        Case {
            name: "properties-10-gb-sparse",
            setup: |s| sparse(&base(s).join(NODES).join("1/properties"), 10 << 30, b""),
            args: &["--root", "{S}/f", "--json"],
            ..DEFAULT
        },
        Case {
            name: "properties-repeated-keys",
            setup: |s| {
                std::fs::write(base(s).join(NODES).join("1/properties"), repeated_keys()).unwrap()
            },
            args: &["--root", "{S}/f", "-v"],
            ..DEFAULT
        },
        Case {
            name: "eleven-nodes-of-repeated-keys-json",
            setup: |s| {
                let nodes = base(s).join(NODES);
                let keys = repeated_keys();
                for n in 2..13 {
                    common::copy_tree(&nodes.join("1"), &nodes.join(n.to_string()));
                    std::fs::write(nodes.join(n.to_string()).join("properties"), &keys).unwrap();
                }
            },
            args: &["--root", "{S}/f", "--json"],
            ..DEFAULT
        },
        Case {
            name: "node-dir-with-newline",
            setup: |s| {
                let nodes = base(s).join(NODES);
                common::copy_tree(&nodes.join("1"), &nodes.join("2\nFAIL injected"));
            },
            args: &["--root", "{S}/f", "-v", "--color", "never"],
            ..DEFAULT
        },
        Case {
            name: "amdgpu-ids-escape-sequences",
            setup: |s| {
                let f = base(s);
                let ids = f.join("usr/share/libdrm/amdgpu.ids");
                let mut t = std::fs::read_to_string(&ids).unwrap();
                t = t.replace("\t", "\t\x1b]0;pwned\x07\x1b[2J");
                std::fs::write(ids, t).unwrap();
            },
            args: &["--root", "{S}/f", "agents"],
            ..DEFAULT
        },
        Case {
            name: "symlink-loop-and-escape",
            setup: |s| {
                let node = base(s).join(NODES).join("1");
                std::fs::remove_file(node.join("properties")).unwrap();
                symlink("properties", node.join("properties")).unwrap();
                std::fs::remove_file(node.join("gpu_id")).unwrap();
                symlink("../../../../../../../../../etc/shadow", node.join("gpu_id")).unwrap();
            },
            args: &["--root", "{S}/f", "targets"],
            ..DEFAULT
        },
        Case {
            name: "topology-unreadable-as-user",
            setup: |s| {
                let f = base(s);
                allow_nobody(s);
                std::fs::set_permissions(f.join(NODES), std::fs::Permissions::from_mode(0o000))
                    .unwrap();
            },
            args: &["--root", "{S}/f"],
            nobody: true,
            ..DEFAULT
        },
        Case {
            name: "gfx-target-version-max",
            setup: |s| {
                let p = base(s).join(NODES).join("1/properties");
                let t = std::fs::read_to_string(&p).unwrap();
                let t: String = t
                    .lines()
                    .map(|l| {
                        if l.starts_with("gfx_target_version ") {
                            "gfx_target_version 4294967295".to_owned()
                        } else {
                            l.to_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                std::fs::write(p, t + "\n").unwrap();
            },
            args: &["--root", "{S}/f", "targets"],
            ..DEFAULT
        },
        // ---- libraries read by layer 5 ----
        Case {
            name: "library-fifo",
            setup: |s| {
                let f = named(s, "library-xnack-plus-only");
                mkfifo(&f.join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200"));
            },
            args: &["--root", "{S}/f"],
            ..DEFAULT
        },
        Case {
            name: "library-fifo-snapshot",
            setup: |s| {
                let f = named(s, "library-xnack-plus-only");
                mkfifo(&f.join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200"));
            },
            args: &["--root", "{S}/f", "snapshot", "{S}/snap"],
            writes: &["snap"],
            ..DEFAULT
        },
        Case {
            name: "library-700-mib-malformed-snapshot",
            setup: |s| {
                let f = named(s, "library-xnack-plus-only");
                sparse(
                    &f.join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200"),
                    700 << 20,
                    b"\x7fELF\x02\x01\x01\0garbage",
                );
            },
            args: &["--root", "{S}/f", "snapshot", "{S}/snap"],
            writes: &["snap"],
            ..DEFAULT
        },
        // ---- inspect ----
        Case {
            name: "inspect-fifo",
            setup: |s| mkfifo(&s.join("x.so")),
            args: &[
                "--deadline",
                "15",
                "inspect",
                "{S}/x.so",
                "--target",
                "gfx90a",
            ],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "inspect-link-to-fifo",
            setup: |s| {
                mkfifo(&s.join("fifo"));
                symlink(s.join("fifo"), s.join("x.so")).unwrap();
            },
            args: &["inspect", "{S}/x.so", "--target", "gfx90a"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "inspect-dev-zero",
            args: &["inspect", "/dev/zero", "--target", "gfx90a"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "inspect-10-gb-sparse",
            setup: |s| sparse(&s.join("x.so"), 10 << 30, b""),
            args: &["inspect", "{S}/x.so", "--target", "gfx90a"],
            ..DEFAULT
        },
        Case {
            name: "inspect-ccob-65536-one-byte-ids",
            setup: |s| {
                std::fs::write(s.join("x.co"), hostile::compressed_many_entries(65_536, 1))
                    .unwrap();
            },
            args: &["inspect", "{S}/x.co", "--target", "gfx90a"],
            ..DEFAULT
        },
        Case {
            name: "inspect-forty-ccobs-of-4-kib-ids",
            setup: |s| {
                let file = hostile::compressed_many_entries(4_000, 4096);
                for n in 0..40 {
                    std::fs::write(s.join(format!("x{n:02}.co")), &file).unwrap();
                }
            },
            args: &[
                "inspect",
                "{S}/x00.co",
                "{S}/x01.co",
                "{S}/x02.co",
                "{S}/x03.co",
                "{S}/x04.co",
                "{S}/x05.co",
                "{S}/x06.co",
                "{S}/x07.co",
                "{S}/x08.co",
                "{S}/x09.co",
                "{S}/x10.co",
                "{S}/x11.co",
                "{S}/x12.co",
                "{S}/x13.co",
                "{S}/x14.co",
                "{S}/x15.co",
                "{S}/x16.co",
                "{S}/x17.co",
                "{S}/x18.co",
                "{S}/x19.co",
                "{S}/x20.co",
                "{S}/x21.co",
                "{S}/x22.co",
                "{S}/x23.co",
                "{S}/x24.co",
                "{S}/x25.co",
                "{S}/x26.co",
                "{S}/x27.co",
                "{S}/x28.co",
                "{S}/x29.co",
                "{S}/x30.co",
                "{S}/x31.co",
                "{S}/x32.co",
                "{S}/x33.co",
                "{S}/x34.co",
                "{S}/x35.co",
                "{S}/x36.co",
                "{S}/x37.co",
                "{S}/x38.co",
                "{S}/x39.co",
                "--target",
                "gfx90a",
            ],
            ..DEFAULT
        },
        Case {
            name: "inspect-extract-4-gib-bomb",
            setup: |s| {
                std::fs::write(s.join("bomb.co"), hostile::declared_bomb(4 << 30)).unwrap();
                std::fs::create_dir(s.join("out")).unwrap();
            },
            args: &[
                "inspect",
                "{S}/bomb.co",
                "--target",
                "gfx90a",
                "--extract",
                "{S}/out",
            ],
            writes: &["out"],
            ..DEFAULT
        },
        Case {
            name: "inspect-extract-planted-link",
            setup: |s| {
                std::fs::create_dir(s.join("out")).unwrap();
                std::fs::write(s.join("victim"), "precious\n").unwrap();
                let lib = repo_fixture("library-xnack-plus-only")
                    .join("opt/rocm-6.2.0/lib/librocfft.so.0.1.60200");
                std::fs::copy(lib, s.join("lib.so")).unwrap();
                // Every name extract could choose, planted: it writes none of them through.
                for bundle in 0..4 {
                    for t in ["gfx90a:xnack+", "gfx90a_xnack+", "gfx90a"] {
                        let _ = symlink(
                            s.join("victim"),
                            s.join("out").join(format!("lib.so-{bundle}-{t}.co")),
                        );
                    }
                }
            },
            args: &[
                "inspect",
                "{S}/lib.so",
                "--target",
                "gfx90a:xnack+",
                "--extract",
                "{S}/out",
            ],
            writes: &["out"],
            ..DEFAULT
        },
        // ---- check --expect and diff ----
        Case {
            name: "expect-fifo",
            setup: |s| mkfifo(&s.join("e.toml")),
            args: &["--root", "{S}/../f", "check", "--expect", "{S}/e.toml"],
            exit: &[2],
            stderr_has: "e.toml",
            ..DEFAULT
        },
        Case {
            name: "expect-dev-zero",
            args: &["check", "--expect", "/dev/zero"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "expect-huge",
            setup: |s| sparse(&s.join("e.toml"), 1 << 30, b"# big\n"),
            args: &["check", "--expect", "{S}/e.toml"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "diff-fifo",
            setup: |s| {
                std::fs::write(s.join("a.json"), "{}").unwrap();
                mkfifo(&s.join("b.json"));
            },
            args: &["diff", "{S}/a.json", "{S}/b.json"],
            exit: &[2],
            stderr_has: "b.json",
            ..DEFAULT
        },
        Case {
            name: "diff-huge-and-dev-zero",
            setup: |s| sparse(&s.join("a.json"), 1 << 30, b"{"),
            args: &["diff", "{S}/a.json", "/dev/zero"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "diff-deep-nesting",
            setup: |s| {
                let deep = "[".repeat(1 << 20);
                std::fs::write(s.join("a.json"), &deep).unwrap();
                std::fs::write(s.join("b.json"), &deep).unwrap();
            },
            args: &["diff", "{S}/a.json", "{S}/b.json"],
            exit: &[2],
            ..DEFAULT
        },
        // ---- files the probe writes ----
        Case {
            name: "textfile-planted-link",
            setup: |s| victim_and_link(s, "rocm.prom"),
            args: &["--root", "{S}/../f", "--textfile", "{S}/rocm.prom"],
            exit: &[2],
            stderr_has: "rocm.prom",
            ..DEFAULT
        },
        Case {
            name: "textfile-planted-temporaries",
            setup: |s| {
                std::fs::write(s.join("victim"), "precious\n").unwrap();
                // The old temporary's name was `.NAME.<pid>.tmp`: plant the next pids'.
                let next = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
                    .ok()
                    .and_then(|t| t.trim().parse::<u32>().ok())
                    .unwrap_or(1000);
                for pid in next..next + 512 {
                    symlink(s.join("victim"), s.join(format!(".rocm.prom.{pid}.tmp"))).unwrap();
                }
            },
            args: &["--root", "{S}/../f", "--textfile", "{S}/rocm.prom"],
            writes: &["rocm.prom"],
            ..DEFAULT
        },
        Case {
            name: "textfile-directory",
            setup: |s| std::fs::create_dir(s.join("rocm.prom")).unwrap(),
            args: &["--root", "{S}/../f", "--textfile", "{S}/rocm.prom"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "nfd-features-fifo",
            setup: |s| mkfifo(&s.join("rocm-probe")),
            args: &["--root", "{S}/../f", "--nfd-features", "{S}/rocm-probe"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "output-planted-link",
            setup: |s| victim_and_link(s, "report.txt"),
            args: &["--root", "{S}/../f", "-o", "{S}/report.txt"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "output-dangling-link",
            setup: |s| symlink(s.join("created-through-link"), s.join("report.txt")).unwrap(),
            args: &["--root", "{S}/../f", "-o", "{S}/report.txt"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "output-fifo-without-reader",
            setup: |s| mkfifo(&s.join("report.txt")),
            args: &["--root", "{S}/../f", "-o", "{S}/report.txt"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "write-expect-planted-link",
            setup: |s| victim_and_link(s, "e.toml"),
            args: &[
                "--root",
                "{S}/../f",
                "check",
                "--write-expect",
                "{S}/e.toml",
            ],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "lock-existing-file",
            setup: |s| std::fs::write(s.join("victim"), "precious\n").unwrap(),
            args: &["--root", "{S}/../f", "--lock", "{S}/victim"],
            ..DEFAULT
        },
        Case {
            name: "lock-planted-link",
            setup: |s| victim_and_link(s, "probe.lock"),
            args: &["--root", "{S}/../f", "--lock", "{S}/probe.lock"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "lock-fifo",
            setup: |s| mkfifo(&s.join("probe.lock")),
            args: &["--root", "{S}/../f", "--lock", "{S}/probe.lock"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "snapshot-archive-dangling-link",
            setup: |s| symlink(s.join("created-through-link"), s.join("snap.tar.gz")).unwrap(),
            args: &["--root", "{S}/../f", "snapshot", "{S}/snap.tar.gz"],
            exit: &[2],
            ..DEFAULT
        },
        Case {
            name: "snapshot-into-linked-directory",
            setup: |s| {
                std::fs::create_dir(s.join("elsewhere")).unwrap();
                symlink(s.join("elsewhere"), s.join("snap")).unwrap();
            },
            args: &["--root", "{S}/../f", "snapshot", "{S}/snap"],
            exit: &[2],
            ..DEFAULT
        },
        // ---- environment ----
        Case {
            name: "environment-controls-and-megabytes",
            args: &["-v", "--color", "never"],
            env: &[
                ("HSA_OVERRIDE_GFX_VERSION", "11.0.0\x1b[2J\nFAIL injected"),
                ("ROCR_VISIBLE_DEVICES", "GPU-\x1b]0;x\x07,0,1"),
                ("HIP_VISIBLE_DEVICES", "\u{202e}0"),
            ],
            ..DEFAULT
        },
        Case {
            name: "columns-absurd",
            args: &["--root", "{S}/../f"],
            env: &[("COLUMNS", "18446744073709551615")],
            ..DEFAULT
        },
    ]
}

/// Lets nobody reach into the sandbox (tempdirs are 0700).
fn allow_nobody(s: &Path) {
    let ok = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(s)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// What the sandbox holds: each path with its type, size, mode, inode and content digest.
fn inventory(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let t = m.file_type();
            let what = if t.is_symlink() {
                format!("link {:?}", std::fs::read_link(&p).ok())
            } else if t.is_dir() {
                stack.push(p.clone());
                format!("dir {:o}", m.mode())
            } else if t.is_file() {
                // Sparse giants are compared by size and mtime, not read.
                let digest = if m.len() <= 4 << 20 {
                    format!("{:x}", digest(&p))
                } else {
                    format!("mtime {}", m.mtime_nsec() + m.mtime() * 1_000_000_000)
                };
                format!("file {:o} {} {} {digest}", m.mode(), m.len(), m.ino())
            } else {
                format!("special {:o} {}", m.mode(), m.ino())
            };
            out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), what);
        }
    }
    out
}

fn digest(p: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(p).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// Reads at most `cap + 1` bytes of a stream and discards the rest (so the child never blocks).
fn bounded_reader(
    mut r: impl Read + Send + 'static,
    cap: usize,
) -> std::thread::JoinHandle<(Vec<u8>, usize)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0usize;
        let mut buf = [0u8; 65536];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n;
                    if kept.len() <= cap {
                        kept.extend_from_slice(&buf[..n]);
                    }
                }
            }
        }
        (kept, total)
    })
}

fn children_max_rss() -> u64 {
    let u = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    // ru_maxrss is in KiB on Linux.
    u.max_rss() as u64 * 1024
}

struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    stdout_len: usize,
    stderr_len: usize,
    stderr: String,
}

fn run_case(case: &Case, sandbox: &Path) -> Outcome {
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("{S}", sandbox.to_str().unwrap()))
        .collect();
    let mut cmd = if case.nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin());
        c
    } else {
        Command::new(bin())
    };
    let cwd = sandbox.join("cwd");
    cmd.args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &cwd)
        .env("TMPDIR", &cwd)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let out = bounded_reader(child.stdout.take().unwrap(), STDOUT_CAP);
    let err = bounded_reader(child.stderr.take().unwrap(), STDERR_CAP);
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > WALL_CAP {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (_, stdout_len) = out.join().unwrap();
    let (err_bytes, stderr_len) = err.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    Outcome {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout_len,
        stderr_len,
        stderr: String::from_utf8_lossy(&err_bytes[..err_bytes.len().min(4096)]).into_owned(),
    }
}

#[test]
fn every_adversarial_case_is_bounded_and_answers_0_1_or_2() {
    if !nix::unistd::Uid::effective().is_root() {
        assert!(std::env::var_os("CI").is_none(), "CI runs as root");
        return;
    }
    let top = tempfile::tempdir().unwrap();
    // Nobody's cases must reach their sandbox.
    std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // A shared clean fixture one level above each sandbox, for the cases that only write.
    common::copy_tree(
        &repo_fixture("kfd-permission-denied"),
        &top.path().join("f"),
    );
    let mut failures = Vec::new();
    let mut max_rss = children_max_rss();
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    for case in &cases {
        let sandbox = top.path().join(case.name);
        std::fs::create_dir(&sandbox).unwrap();
        (case.setup)(&sandbox);
        std::fs::create_dir(sandbox.join("cwd")).unwrap();
        if case.nobody {
            allow_nobody(&sandbox.join("cwd"));
        }
        let before = inventory(&sandbox);
        let o = run_case(case, &sandbox);
        let after = inventory(&sandbox);
        let mut why = Vec::new();
        if o.timed_out {
            why.push(format!("still running after {WALL_CAP:?}"));
        }
        match (o.code, o.signal) {
            (Some(c), _) if !(0..=3).contains(&c) => why.push(format!("exit {c}")),
            (Some(c), _) if !case.exit.is_empty() && !case.exit.contains(&c) => {
                why.push(format!("exit {c}, expected one of {:?}", case.exit))
            }
            (None, s) if !o.timed_out => why.push(format!("killed by signal {s:?}")),
            _ => {}
        }
        let rss = children_max_rss();
        if rss > max_rss {
            max_rss = rss;
            if rss > RSS_CAP {
                why.push(format!("peak RSS {} MiB", rss >> 20));
            }
        }
        if o.stdout_len > STDOUT_CAP {
            why.push(format!("{} bytes of standard output", o.stdout_len));
        }
        if o.stderr_len > STDERR_CAP {
            why.push(format!("{} bytes of standard error", o.stderr_len));
        }
        if !o.stderr.contains(case.stderr_has) {
            why.push(format!(
                "standard error does not name {:?}",
                case.stderr_has
            ));
        }
        let allowed = |p: &Path| case.writes.iter().any(|w| p.starts_with(w));
        let mut touched = Vec::new();
        for (path, was) in &before {
            match after.get(path) {
                Some(now) if now == was => {}
                _ if allowed(path) => {}
                Some(now) => touched.push(format!("{} changed: {was} -> {now}", path.display())),
                None => touched.push(format!("{} removed", path.display())),
            }
        }
        for path in after.keys().filter(|p| !before.contains_key(*p)) {
            if !allowed(path) {
                touched.push(format!("{} created", path.display()));
            }
        }
        if touched.len() > 5 {
            let more = touched.len() - 5;
            touched.truncate(5);
            touched.push(format!("and {more} more"));
        }
        why.extend(touched);
        if !why.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}",
                case.name,
                why.join("; "),
                o.stderr.trim()
            ));
        }
        // Sandboxes of gigabyte sparse files are removed as they go.
        let _ = Command::new("chmod")
            .args(["-R", "u+rwX"])
            .arg(&sandbox)
            .status();
        let _ = std::fs::remove_dir_all(&sandbox);
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
