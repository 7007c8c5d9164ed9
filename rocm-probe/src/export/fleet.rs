//! `rocm-probe fleet REPORTS…`: many nodes' reports read at once — which nodes fail, which
//! findings the fleet has and where, which configurations it runs, the majority one and every
//! node that differs from it, and the GPUs that failed.
//!
//! Works on the JSON documents, like `diff`, so that a fleet in the middle of a roll-out (some
//! nodes on schema 1, some on 2) is read as one. Only what the view needs is taken from each
//! document and the rest is skipped while parsing: ten thousand reports of a megabyte each must
//! fit in the memory of a login node. Nothing in a document is trusted: a document that is not
//! JSON, not rocm-probe's, or of a schema this version does not know is listed with the reason
//! and the rest of the fleet is read on.
//!
//! Inputs are files (one pretty-printed document, or JSON lines), directories (their `*.json`
//! and `*.jsonl` files, without following symlinks) and streams (`-`: what `pdsh` or `clush`
//! collected, each line maybe prefixed with `host: `, which then names the node).

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::finding::Status;
use crate::source::input::{self, InputKind};

/// The largest document accepted, in bytes: a report's cap (`source::input`).
pub const DOCUMENT_CAP: usize = InputKind::Report.cap() as usize;

/// The `schema_version`s this version reads: every one a fleet may run during a roll-out.
pub const SCHEMA_VERSIONS: [u64; 2] = [1, 2];

/// Values taken from documents are cut to this many bytes: a name or a version is far shorter,
/// and a hostile document must not make every line of the view a megabyte long.
const VALUE_CAP: usize = 256;

/// How deep directories are walked: a fleet's reports are a directory or two deep.
const DEPTH_CAP: usize = 16;

/// Where a document came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The file, or `-` for standard input.
    pub input: String,
    /// The line the document starts on, when the input holds more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// Where a node's name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameFrom {
    /// The report's `source.host`.
    Host,
    /// The `host: ` prefix pdsh or clush put before each line.
    Prefix,
    /// The file's name without its extension.
    File,
    /// The input and line (a stream without names).
    Position,
}

/// A finding of one node, as the fleet view uses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeFinding {
    /// The finding id.
    pub id: String,
    /// Its status.
    pub status: Status,
    /// The GPU it is about (`subject.kind` `gpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuRef>,
}

/// One physical GPU, as a finding's subject names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuRef {
    /// Its index among the node's physical GPUs.
    pub index: Option<u64>,
    /// Its PCI address.
    pub pci_address: Option<String>,
}

/// One GPU of a node's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// Marketing name.
    pub marketing_name: Option<String>,
    /// Processor (`gfx942`).
    pub gfx: Option<String>,
    /// PCI device id, hex (`0x74a1`) whichever way the schema wrote it.
    pub device_id: Option<String>,
    /// Firmware versions by component, the VBIOS, MEC and SDMA ones included.
    pub firmware: BTreeMap<String, String>,
}

/// What of a node's configuration the fleet compares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    /// `facts.config.fingerprint`.
    pub fingerprint: Option<String>,
    /// The physical GPUs.
    pub gpus: Vec<Gpu>,
    /// Compute partition mode.
    pub compute_partition: Option<String>,
    /// Memory partition mode.
    pub memory_partition: Option<String>,
    /// ROCm release.
    pub rocm: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// amdgpu module version.
    pub amdgpu: Option<String>,
}

/// One node's report, reduced to what the view needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Where the name came from.
    pub name_from: NameFrom,
    /// Where the report came from.
    pub origin: Origin,
    /// The report's `schema_version`.
    pub schema_version: u64,
    /// `generated_at` (schema 2).
    pub generated_at: Option<String>,
    /// The verdict's status.
    pub status: Status,
    /// The verdict's root cause.
    pub root_cause: Option<String>,
    /// Its findings that are not `pass`, `skip` or `info`.
    pub findings: Vec<NodeFinding>,
    /// Its configuration (`None`: the report has none).
    pub config: Option<Config>,
}

/// Why a document or an input was not read as a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reason {
    /// The file or directory could not be read (the error, in the reader's language).
    Unreadable {
        /// Why.
        error: String,
    },
    /// A document larger than [`DOCUMENT_CAP`].
    TooLarge {
        /// The cap, MiB.
        cap_mib: u64,
    },
    /// Not UTF-8 text.
    NotUtf8,
    /// Not JSON (or JSON cut short), at this line and column of the document.
    NotJson {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
    },
    /// Text that is no JSON document at all (a shell's or pdsh's error, say): lines of it.
    NotADocument {
        /// How many lines.
        lines: usize,
    },
    /// JSON, but not an object, or with a field of the wrong type (line and column).
    Malformed {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
    },
    /// Another tool's document (`tool.name`, when it has one).
    Foreign {
        /// Its `tool.name`.
        tool: Option<String>,
    },
    /// No `schema_version`.
    NoSchemaVersion,
    /// A `schema_version` this version cannot read.
    UnsupportedSchema {
        /// The version as written.
        version: String,
    },
    /// A rocm-probe document that is not a report (no verdict, no findings: `agents --json`).
    NotAReport,
    /// The input ended inside a document.
    Truncated,
}

/// A document or input that was not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    /// Where it came from.
    pub origin: Origin,
    /// The node the pdsh prefix names, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why.
    pub reason: Reason,
}

/// What the inputs held: the nodes' reports and what was refused, in input order.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// The reports read.
    pub nodes: Vec<Node>,
    /// What was refused.
    pub refused: Vec<Refused>,
}

impl Read {
    fn append(&mut self, mut other: Read) {
        self.nodes.append(&mut other.nodes);
        self.refused.append(&mut other.refused);
    }
}

/// One input named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A file or a directory.
    Path(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

/// Reads every input: files and directories in parallel (on `threads` threads), standard input
/// as a stream. Never fails: what cannot be read is in [`Read::refused`].
pub fn read_inputs(inputs: &[Input], stdin: &mut dyn BufRead, threads: usize) -> Read {
    let mut out = Read::default();
    // Files in the order given, a directory's in name order; standard input where it was named.
    enum Job {
        File(PathBuf),
        Stdin,
        Refused(Refused),
    }
    let mut jobs = Vec::new();
    for input in inputs {
        match input {
            Input::Stdin => jobs.push(Job::Stdin),
            Input::Path(p) => {
                let mut files = Vec::new();
                let mut refused = Vec::new();
                walk(p, 0, true, &mut files, &mut refused);
                jobs.extend(files.into_iter().map(Job::File));
                jobs.extend(refused.into_iter().map(Job::Refused));
            }
        }
    }
    let files: Vec<&Path> = jobs
        .iter()
        .filter_map(|j| match j {
            Job::File(p) => Some(p.as_path()),
            _ => None,
        })
        .collect();
    let mut per_file = read_files(&files, threads).into_iter();
    for job in jobs {
        match job {
            Job::File(_) => out.append(per_file.next().unwrap_or_default()),
            Job::Stdin => out.append(read_stream(stdin, "-", None)),
            Job::Refused(r) => out.refused.push(r),
        }
    }
    out
}

/// The files of `path`: itself when it is named (any regular file), a directory's `*.json` and
/// `*.jsonl` regular files, its subdirectories walked but no symlink followed.
fn walk(
    path: &Path,
    depth: usize,
    named: bool,
    files: &mut Vec<PathBuf>,
    refused: &mut Vec<Refused>,
) {
    let origin = || Origin {
        input: path.display().to_string(),
        line: None,
    };
    let unreadable = |e: &io::Error| Refused {
        origin: origin(),
        node: None,
        reason: Reason::Unreadable {
            error: crate::i18n::os_error(e),
        },
    };
    // Named on the command line, a symlink is followed as any argument is; inside a directory
    // it is not (a link to `/` must not walk the machine).
    let meta = if named {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) => return refused.push(unreadable(&e)),
    };
    if meta.is_dir() {
        if depth >= DEPTH_CAP {
            return;
        }
        let entries = match std::fs::read_dir(path) {
            Ok(d) => d,
            Err(e) => return refused.push(unreadable(&e)),
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        children.sort();
        for child in children {
            let Ok(m) = std::fs::symlink_metadata(&child) else {
                continue;
            };
            let report_file = m.is_file()
                && child
                    .extension()
                    .is_some_and(|x| x == "json" || x == "jsonl");
            if m.is_dir() || report_file {
                walk(&child, depth + 1, false, files, refused);
            }
        }
    } else if meta.is_file() || named {
        // A named FIFO or device is refused by the input reader, with its kind named.
        files.push(path.to_owned());
    }
}

/// Reads the files on up to `threads` threads, each file's result in its place.
fn read_files(files: &[&Path], threads: usize) -> Vec<Read> {
    let threads = threads.clamp(1, 64).min(files.len().max(1));
    if threads == 1 {
        return files.iter().map(|f| read_file(f)).collect();
    }
    let lang = crate::i18n::current();
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    crate::i18n::scoped(lang, || {
                        part.iter().map(|f| read_file(f)).collect::<Vec<Read>>()
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            // Nothing a worker does panics on input; should a bug make one panic, the panic
            // goes on here rather than the results of later files shifting onto earlier ones.
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect::<Vec<Read>>()
    })
}

/// One file: a single document, or a stream of them (JSON lines, pdsh output).
pub fn read_file(path: &Path) -> Read {
    let name = path.display().to_string();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty());
    let refused = |reason| Read {
        nodes: Vec::new(),
        refused: vec![Refused {
            origin: Origin {
                input: name.clone(),
                line: None,
            },
            node: None,
            reason,
        }],
    };
    let lines = path.extension().is_some_and(|x| x == "jsonl");
    if lines {
        // JSON lines may hold a whole fleet: streamed, each document under the cap.
        return match input::open(path) {
            Ok(file) => read_stream(
                &mut io::BufReader::with_capacity(1 << 16, file),
                &name,
                stem.as_deref(),
            ),
            Err(e) => refused(Reason::Unreadable {
                error: without_path(&e, path),
            }),
        };
    }
    let bytes = match input::read(path, InputKind::Report) {
        Ok(b) => b,
        Err(e) => {
            return refused(Reason::Unreadable {
                error: without_path(&e, path),
            });
        }
    };
    // pdsh's output saved to a file is a stream; anything else is one document, and text that
    // is not JSON is refused with the place serde stopped at.
    let first_line = bytes
        .trim_ascii_start()
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default();
    let prefixed = std::str::from_utf8(first_line)
        .ok()
        .and_then(split_prefix)
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('{'));
    if !prefixed {
        let origin = Origin {
            input: name.clone(),
            line: None,
        };
        return match parse(&bytes, &origin, None, stem.as_deref()) {
            Ok(node) => Read {
                nodes: vec![node],
                refused: Vec::new(),
            },
            Err(reason) => refused(reason),
        };
    }
    read_stream(&mut &bytes[..], &name, stem.as_deref())
}

/// The input reader's error without the path it starts with: the refusal names the input.
fn without_path(e: &io::Error, path: &Path) -> String {
    let text = e.to_string();
    let prefix = format!("{}: ", path.display());
    text.strip_prefix(&prefix)
        .map_or_else(|| text.clone(), str::to_owned)
}

/// A document being collected from the lines of one pdsh prefix (or of none).
struct Pending {
    line: usize,
    bytes: Vec<u8>,
    depth: Depth,
    /// Over the cap: the rest of the document is skipped, not kept.
    too_large: bool,
}

/// Where a pretty-printed document ends: the brace depth outside strings.
#[derive(Default)]
struct Depth {
    depth: u64,
    in_string: bool,
    escaped: bool,
}

impl Depth {
    /// Feeds `bytes`; true when the outermost value closed.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }
}

/// `host: rest` as pdsh and clush print each line of a node's output: the host and the rest.
fn split_prefix(line: &str) -> Option<(&str, &str)> {
    let (host, rest) = line.split_once(':')?;
    let host_like = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if !host_like {
        return None;
    }
    Some((host, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// Reads a stream of documents: JSON lines, or pretty-printed documents, each line maybe
/// prefixed with `host: ` (pdsh interleaves the nodes' lines; each prefix collects its own).
/// `stem` names a file's lone unnamed document.
pub fn read_stream(reader: &mut dyn BufRead, input: &str, stem: Option<&str>) -> Read {
    let mut out = Read::default();
    let mut pending: BTreeMap<Option<String>, Pending> = BTreeMap::new();
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    // Unnamed documents of this input: numbered by line once there is more than one.
    let mut unnamed: Vec<usize> = Vec::new();
    let origin = |line| Origin {
        input: input.to_owned(),
        line: Some(line),
    };
    loop {
        buf.clear();
        let line_start = line_no + 1;
        let (more, cut) = match read_line(reader, &mut buf, DOCUMENT_CAP + 256) {
            Ok(r) => r,
            Err(e) => {
                out.refused.push(Refused {
                    origin: origin(line_start),
                    node: None,
                    reason: Reason::Unreadable {
                        error: crate::i18n::os_error(&e),
                    },
                });
                break;
            }
        };
        if !more {
            break;
        }
        line_no += 1;
        let Ok(line) = std::str::from_utf8(&buf) else {
            out.refused.push(Refused {
                origin: origin(line_no),
                node: None,
                reason: Reason::NotUtf8,
            });
            continue;
        };
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        // Inside an unprefixed document every line is its own; else a prefix may name a node.
        let (prefix, rest) = if pending.contains_key(&None) {
            (None, line)
        } else {
            match split_prefix(line) {
                Some((host, rest)) if !line.trim_start().starts_with(['{', '"']) => {
                    (Some(host.to_owned()), rest)
                }
                _ => (None, line),
            }
        };
        if let Some(p) = pending.get_mut(&prefix) {
            if !p.too_large && p.bytes.len() + rest.len() + 1 > DOCUMENT_CAP {
                p.too_large = true;
                p.bytes = Vec::new();
            }
            if !p.too_large {
                p.bytes.extend_from_slice(rest.as_bytes());
                p.bytes.push(b'\n');
            }
            if p.depth.feed(rest.as_bytes()) {
                let p = pending.remove(&prefix).unwrap_or_else(|| unreachable!());
                let o = origin(p.line);
                if p.too_large {
                    out.refused.push(Refused {
                        origin: o,
                        node: prefix,
                        reason: Reason::TooLarge {
                            cap_mib: (DOCUMENT_CAP >> 20) as u64,
                        },
                    });
                } else {
                    let result = parse(&p.bytes, &o, prefix.as_deref(), None);
                    take(&mut out, &mut unnamed, result, o, prefix);
                }
            }
            continue;
        }
        let body = rest.trim_start();
        if body.is_empty() {
            continue;
        }
        if cut {
            out.refused.push(Refused {
                origin: origin(line_no),
                node: prefix,
                reason: Reason::TooLarge {
                    cap_mib: (DOCUMENT_CAP >> 20) as u64,
                },
            });
            continue;
        }
        if !body.starts_with('{') {
            // One refusal per node and input for its lines of other text (`ssh: connect to
            // host node7 port 22: Connection refused`), however many there are.
            let same = out.refused.iter_mut().rev().find(|r| {
                r.node == prefix
                    && r.origin.input == input
                    && matches!(r.reason, Reason::NotADocument { .. })
            });
            match same {
                Some(Refused {
                    reason: Reason::NotADocument { lines },
                    ..
                }) => *lines += 1,
                _ => out.refused.push(Refused {
                    origin: origin(line_no),
                    node: prefix,
                    reason: Reason::NotADocument { lines: 1 },
                }),
            }
            continue;
        }
        let o = origin(line_no);
        match parse(body.as_bytes(), &o, prefix.as_deref(), None) {
            Err(Reason::NotJson { .. }) if incomplete(body.as_bytes()) => {
                let mut depth = Depth::default();
                depth.feed(body.as_bytes());
                let mut bytes = Vec::with_capacity(body.len() * 4);
                bytes.extend_from_slice(body.as_bytes());
                bytes.push(b'\n');
                pending.insert(
                    prefix,
                    Pending {
                        line: line_no,
                        bytes,
                        depth,
                        too_large: false,
                    },
                );
            }
            result => take(&mut out, &mut unnamed, result, o, prefix),
        }
    }
    for (prefix, p) in pending {
        out.refused.push(Refused {
            origin: origin(p.line),
            node: prefix,
            reason: Reason::Truncated,
        });
    }
    // A file holding one unnamed document is named after the file, like a `.json` file; more
    // than one are told apart by their line.
    if let [only] = unnamed[..] {
        if let Some(stem) = stem {
            let node = &mut out.nodes[only];
            node.name = stem.to_owned();
            node.name_from = NameFrom::File;
        }
    }
    out
}

/// Whether a line that failed to parse is the start of a longer document (its braces still
/// open at its end).
fn incomplete(body: &[u8]) -> bool {
    let mut d = Depth::default();
    !d.feed(body) && d.depth > 0
}

fn take(
    out: &mut Read,
    unnamed: &mut Vec<usize>,
    result: Result<Node, Reason>,
    origin: Origin,
    node: Option<String>,
) {
    match result {
        Ok(n) => {
            if n.name_from == NameFrom::Position {
                unnamed.push(out.nodes.len());
            }
            out.nodes.push(n);
        }
        Err(reason) => out.refused.push(Refused {
            origin,
            node,
            reason,
        }),
    }
}

/// Reads one line into `buf` (its newline kept), keeping at most `cap` bytes of it and
/// skipping the rest. `(false, _)` at the end of the input; `(_, true)` when the line was cut.
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>, cap: usize) -> io::Result<(bool, bool)> {
    let mut any = false;
    let mut cut = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((any, cut));
        }
        any = true;
        let (chunk, done) = match memchr(b'\n', available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            cut = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        if done {
            return Ok((true, cut));
        }
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// The parts of a report the view reads; everything else is skipped while parsing, and what is
/// read is typed as it is parsed (no `Value` trees for ten thousand configurations).
#[derive(Deserialize)]
struct Envelope {
    schema_version: Option<Value>,
    tool: Option<Value>,
    source: Option<Value>,
    generated_at: Option<Value>,
    verdict: Option<Value>,
    findings: Option<Vec<LiteFinding>>,
    facts: Option<LiteFacts>,
}

#[derive(Deserialize)]
struct LiteFinding {
    #[serde(default)]
    id: Scalar,
    #[serde(default)]
    status: Scalar,
    subject: Option<LiteSubject>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LiteSubject {
    kind: Scalar,
    index: Scalar,
    pci_address: Scalar,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LiteFacts {
    /// Schema 2: the list of GPUs (schema 1: their count, read as none).
    gpus: GpuList,
    config: Option<LiteConfig>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LiteConfig {
    fingerprint: Scalar,
    rocm: Scalar,
    kernel: Scalar,
    amdgpu: Scalar,
    compute_partition: Scalar,
    memory_partition: Scalar,
    /// Schema 1's GPU list.
    gpus: GpuList,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LiteGpu {
    marketing_name: Scalar,
    gfx: Scalar,
    device_id: DeviceId,
    vbios: Scalar,
    mec_firmware: Scalar,
    sdma_firmware: Scalar,
    firmware: FirmwareMap,
}

/// A string, number or boolean as text (cut to [`VALUE_CAP`]); `null`, an object or an array
/// as nothing — a value of an unexpected type is not worth refusing a node's report for.
#[derive(Debug, Default)]
struct Scalar(Option<String>);

/// A PCI device id as hex: schema 1 writes a number, schema 2 a string (`0x740f`).
#[derive(Debug, Default)]
struct DeviceId(Option<String>);

/// A list of GPUs; anything else (schema 1's count in `facts.gpus`) as none.
#[derive(Default)]
struct GpuList(Option<Vec<LiteGpu>>);

/// Firmware versions by component; anything but an object as none.
#[derive(Default)]
struct FirmwareMap(BTreeMap<String, String>);

struct ScalarVisitor {
    hex: bool,
}

impl<'de> serde::de::Visitor<'de> for ScalarVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(if self.hex {
            capped(&v.to_ascii_lowercase())
        } else {
            capped(v)
        }))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(if self.hex {
            format!("{v:#06x}")
        } else {
            v.to_string()
        }))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok((!self.hex).then(|| v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok((!self.hex).then(|| v.to_string()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok((!self.hex).then(|| v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor { hex: false }).map(Scalar)
    }
}

impl<'de> Deserialize<'de> for DeviceId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor { hex: true }).map(DeviceId)
    }
}

impl<'de> Deserialize<'de> for GpuList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = GpuList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of GPUs")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<Self::Value, A::Error> {
                let mut gpus = Vec::new();
                while let Some(g) = s.next_element::<LiteGpu>()? {
                    // A machine has far fewer; the rest of a hostile list is parsed, not kept.
                    if gpus.len() < 1024 {
                        gpus.push(g);
                    }
                }
                Ok(GpuList(Some(gpus)))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(GpuList(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                while m
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(GpuList(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for FirmwareMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = FirmwareMap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("firmware versions by component")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Scalar>()? {
                    if let (Some(v), true) = (v.0, out.len() < 64) {
                        out.insert(capped(&k), v);
                    }
                }
                Ok(FirmwareMap(out))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<Self::Value, A::Error> {
                while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirmwareMap::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FirmwareMap::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// `s` cut to [`VALUE_CAP`] bytes at a character boundary.
fn capped(s: &str) -> String {
    if s.len() <= VALUE_CAP {
        return s.to_owned();
    }
    let mut end = VALUE_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(capped(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Whether `host` is what redaction put in place of a name (`host`, `host2`, …), or no name.
pub fn is_stand_in(host: &str) -> bool {
    let digits = host.strip_prefix("host").unwrap_or(host);
    (host.starts_with("host") && digits.bytes().all(|b| b.is_ascii_digit()))
        || matches!(host, "" | "localhost" | "(none)" | "REDACTED" | "user")
}

fn status_of(v: Option<&Value>) -> Option<Status> {
    Status::deserialize(v?).ok()
}

/// One document: a node, or why not. `prefix` is the pdsh prefix it came under, `stem` the
/// file's name when the document is the file.
fn parse(
    bytes: &[u8],
    origin: &Origin,
    prefix: Option<&str>,
    stem: Option<&str>,
) -> Result<Node, Reason> {
    use serde_json::error::Category;
    if bytes.len() > DOCUMENT_CAP {
        return Err(Reason::TooLarge {
            cap_mib: (DOCUMENT_CAP >> 20) as u64,
        });
    }
    let refusal = |e: serde_json::Error| {
        let (line, column) = (e.line(), e.column());
        match e.classify() {
            Category::Data => Reason::Malformed { line, column },
            Category::Syntax if std::str::from_utf8(bytes).is_err() => Reason::NotUtf8,
            _ => Reason::NotJson { line, column },
        }
    };
    // A struct would also be read from an array, field by field: only an object is a report.
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(refusal)?;
        return Err(Reason::Malformed { line: 1, column: 1 });
    }
    let doc: Envelope = serde_json::from_slice(bytes).map_err(refusal)?;
    let tool = doc
        .tool
        .as_ref()
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str);
    if tool != Some("rocm-probe") {
        return Err(Reason::Foreign {
            tool: tool.map(capped),
        });
    }
    let schema_version = match &doc.schema_version {
        None => return Err(Reason::NoSchemaVersion),
        Some(v) => match v.as_u64().filter(|n| SCHEMA_VERSIONS.contains(n)) {
            Some(n) => n,
            None => {
                return Err(Reason::UnsupportedSchema {
                    version: capped(&v.to_string()),
                });
            }
        },
    };
    let verdict = doc.verdict.as_ref();
    let (Some(findings), Some(status)) = (
        &doc.findings,
        status_of(verdict.and_then(|v| v.get("status"))),
    ) else {
        return Err(Reason::NotAReport);
    };
    let host = doc
        .source
        .as_ref()
        .and_then(|s| s.get("host"))
        .and_then(Value::as_str)
        .filter(|h| !is_stand_in(h));
    let (name, name_from) = match (host, prefix, stem) {
        (Some(h), _, _) => (capped(h), NameFrom::Host),
        (None, Some(p), _) => (capped(p), NameFrom::Prefix),
        (None, None, Some(s)) => (capped(s), NameFrom::File),
        (None, None, None) => (
            match origin.line {
                Some(l) => format!("{}:{l}", origin.input),
                None => origin.input.clone(),
            },
            NameFrom::Position,
        ),
    };
    let findings = findings
        .iter()
        .filter_map(|f| {
            let status = Status::deserialize(serde::de::value::StrDeserializer::<
                serde::de::value::Error,
            >::new(f.status.0.as_deref()?))
            .ok()?;
            if status < Status::Warn {
                return None;
            }
            let gpu = f
                .subject
                .as_ref()
                .filter(|s| s.kind.0.as_deref() == Some("gpu"))
                .map(|s| GpuRef {
                    index: s.index.0.as_deref().and_then(|i| i.parse().ok()),
                    pci_address: s.pci_address.0.clone(),
                });
            Some(NodeFinding {
                id: f.id.0.clone()?,
                status,
                gpu,
            })
        })
        .collect();
    Ok(Node {
        name,
        name_from,
        origin: origin.clone(),
        schema_version,
        generated_at: string(doc.generated_at.as_ref()),
        status,
        root_cause: string(verdict.and_then(|v| v.get("root_cause"))),
        findings,
        config: doc.facts.and_then(config),
    })
}

/// The configuration of either schema: GPUs in `facts.config.gpus` (1) or `facts.gpus` (2).
fn config(facts: LiteFacts) -> Option<Config> {
    let c = facts.config?;
    let gpus = facts.gpus.0.or(c.gpus.0).unwrap_or_default();
    let gpu = |g: LiteGpu| {
        let mut firmware = g.firmware.0;
        for (key, v) in [
            ("vbios", g.vbios),
            ("mec_firmware", g.mec_firmware),
            ("sdma_firmware", g.sdma_firmware),
        ] {
            if let Some(v) = v.0 {
                firmware.insert(key.to_owned(), v);
            }
        }
        Gpu {
            marketing_name: g.marketing_name.0,
            gfx: g.gfx.0,
            device_id: g.device_id.0,
            firmware,
        }
    };
    Some(Config {
        fingerprint: c.fingerprint.0,
        gpus: gpus.into_iter().map(gpu).collect(),
        compute_partition: c.compute_partition.0,
        memory_partition: c.memory_partition.0,
        rocm: c.rocm.0,
        kernel: c.kernel.0,
        amdgpu: c.amdgpu.0,
    })
}

/// What part of a configuration an aspect is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Area {
    /// The GPU models and their count.
    Gpus,
    /// Compute and memory partition modes.
    Partition,
    /// Firmware versions (VBIOS, MEC, SDMA, each component).
    Firmware,
    /// ROCm, kernel and amdgpu versions.
    Versions,
}

/// One compared aspect of a configuration and its value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Aspect {
    /// The area.
    pub area: Area,
    /// Where it is in a report (`gpus.model`, `config.compute_partition`,
    /// `gpus.mec_firmware`, `gpus.firmware.smc`, `config.rocm`).
    pub key: String,
    /// Its value; firmware that differs between the GPUs as each version with its GPUs
    /// (`177 (GPU 0-2,4-7), 170 (GPU 3)`).
    pub value: String,
}

/// The aspects of a configuration the fleet compares, in area order.
pub fn aspects(c: &Config) -> Vec<Aspect> {
    let mut out = Vec::new();
    let mut push = |area, key: &str, value: Option<String>| {
        if let Some(value) = value {
            out.push(Aspect {
                area,
                key: key.to_owned(),
                value,
            });
        }
    };
    // Keys name where the value is in a report, as `diff`'s paths do.
    push(Area::Gpus, "gpus.model", Some(models(&c.gpus)));
    push(
        Area::Partition,
        "config.compute_partition",
        c.compute_partition.clone(),
    );
    push(
        Area::Partition,
        "config.memory_partition",
        c.memory_partition.clone(),
    );
    let mut components: Vec<&str> = c
        .gpus
        .iter()
        .flat_map(|g| g.firmware.keys().map(String::as_str))
        .collect();
    components.sort_unstable();
    components.dedup();
    for component in components {
        // Each distinct version with the GPUs (by position) that run it, when they differ:
        // the GPU that was replaced is what the operator looks for.
        let mut values: Vec<(&str, Vec<u64>)> = Vec::new();
        for (i, g) in c.gpus.iter().enumerate() {
            if let Some(v) = g.firmware.get(component) {
                match values.iter_mut().find(|(x, _)| x == v) {
                    Some((_, gpus)) => gpus.push(i as u64),
                    None => values.push((v, vec![i as u64])),
                }
            }
        }
        let value = match &values[..] {
            [(only, _)] => (*only).to_owned(),
            _ => values
                .iter()
                .map(|(v, gpus)| format!("{v} (GPU {})", ranges(gpus, "-", ",")))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let key = if ["vbios", "mec_firmware", "sdma_firmware"].contains(&component) {
            format!("gpus.{component}")
        } else {
            format!("gpus.firmware.{component}")
        };
        push(Area::Firmware, &key, Some(value));
    }
    push(Area::Versions, "config.rocm", c.rocm.clone());
    push(Area::Versions, "config.kernel", c.kernel.clone());
    push(Area::Versions, "config.amdgpu", c.amdgpu.clone());
    out
}

/// Sorted numbers with runs joined: `0-4,6` (`dash` and `comma` as the caller writes them).
fn ranges(numbers: &[u64], dash: &str, comma: &str) -> String {
    ranges_padded(numbers, 0, dash, comma)
}

fn ranges_padded(numbers: &[u64], width: usize, dash: &str, comma: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            format!("{:0width$}", numbers[i])
        } else {
            format!("{:0width$}{dash}{:0width$}", numbers[i], numbers[j])
        });
        i = j + 1;
    }
    out.join(comma)
}

/// The GPUs as models and counts: `8 × AMD Instinct MI300X (gfx942, 0x74a1)`; `0` without.
pub fn models(gpus: &[Gpu]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for g in gpus {
        let details: Vec<&str> = [&g.gfx, &g.device_id]
            .into_iter()
            .filter_map(|v| v.as_deref())
            .collect();
        // Without a marketing name the processor names the model.
        let (name, details) = match (&g.marketing_name, details.split_first()) {
            (Some(n), _) => (n.as_str(), details),
            (None, Some((gfx, rest))) => (*gfx, rest.to_vec()),
            (None, None) => ("?", Vec::new()),
        };
        let model = if details.is_empty() {
            name.to_owned()
        } else {
            format!("{name} ({})", details.join(", "))
        };
        match seen.iter_mut().find(|(m, _)| *m == model) {
            Some((_, n)) => *n += 1,
            None => seen.push((model, 1)),
        }
    }
    if seen.is_empty() {
        return "0".to_owned();
    }
    seen.iter()
        .map(|(m, n)| format!("{n} × {m}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A node in the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeLine {
    /// Its name.
    pub name: String,
    /// Where the name came from.
    pub name_from: NameFrom,
    /// Where its report came from.
    pub origin: Origin,
    /// The report's `schema_version`.
    pub schema_version: u64,
    /// `generated_at` (schema 2).
    pub generated_at: Option<String>,
    /// The verdict's status.
    pub status: Status,
    /// The verdict's root cause.
    pub root_cause: Option<String>,
    /// The configuration's fingerprint.
    pub fingerprint: Option<String>,
}

/// Nodes of one verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerdictGroup {
    /// The verdict's status.
    pub status: Status,
    /// The nodes, by name.
    pub nodes: Vec<String>,
}

/// One finding id across the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingGroup {
    /// The id.
    pub id: String,
    /// Its worst status on any node.
    pub status: Status,
    /// The nodes that have it (each once).
    pub nodes: Vec<String>,
}

/// The nodes of one fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigGroup {
    /// The fingerprint (`None`: reports without a configuration).
    pub fingerprint: Option<String>,
    /// Whether it is the majority configuration's.
    pub majority: bool,
    /// Its first node's GPUs (`models`).
    pub gpus: Option<String>,
    /// Its first node's ROCm release.
    pub rocm: Option<String>,
    /// The nodes.
    pub nodes: Vec<String>,
}

/// The configuration most nodes share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Majority {
    /// Its fingerprint.
    pub fingerprint: Option<String>,
    /// How many nodes have exactly it (firmware included).
    pub nodes: usize,
    /// Its aspects.
    pub aspects: Vec<Aspect>,
}

/// One way a node differs from the majority configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The area.
    pub area: Area,
    /// The aspect.
    pub key: String,
    /// The majority's value (`None`: it has none).
    pub majority: Option<String>,
    /// The node's.
    pub node: Option<String>,
}

/// A node whose configuration differs from the majority's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outlier {
    /// The node.
    pub node: String,
    /// Its fingerprint.
    pub fingerprint: Option<String>,
    /// What differs.
    pub differences: Vec<Difference>,
}

/// A GPU that a failing finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuFailure {
    /// The node.
    pub node: String,
    /// The GPU's index.
    pub index: Option<u64>,
    /// Its PCI address.
    pub pci_address: Option<String>,
    /// The failing findings' ids.
    pub findings: Vec<String>,
}

/// The fleet view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fleet {
    /// Every node read, in input order.
    pub nodes: Vec<NodeLine>,
    /// Nodes by verdict, worst first.
    pub verdicts: Vec<VerdictGroup>,
    /// Failing and warning findings by id, worst and most common first.
    pub findings: Vec<FindingGroup>,
    /// Configurations by fingerprint, most common first.
    pub configurations: Vec<ConfigGroup>,
    /// The majority configuration.
    pub majority: Option<Majority>,
    /// The nodes that differ from it, and how.
    pub outliers: Vec<Outlier>,
    /// GPUs with a failing per-GPU finding.
    pub gpu_failures: Vec<GpuFailure>,
    /// Documents and inputs not read, and why.
    pub refused: Vec<Refused>,
}

impl Fleet {
    /// The exit code (ARCHITECTURE.md §5): 1 when a node's verdict is a failure, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.nodes.iter().any(|n| n.status == Status::Fail))
    }
}

/// Puts together the view of what was read.
pub fn view(read: Read) -> Fleet {
    let Read { nodes, refused } = read;

    let mut verdicts: Vec<VerdictGroup> = Vec::new();
    for status in [
        Status::Fail,
        Status::Warn,
        Status::Info,
        Status::Pass,
        Status::Skip,
    ] {
        let names: Vec<String> = nodes
            .iter()
            .filter(|n| n.status == status)
            .map(|n| n.name.clone())
            .collect();
        if !names.is_empty() {
            verdicts.push(VerdictGroup {
                status,
                nodes: names,
            });
        }
    }

    let mut by_id: BTreeMap<&str, (Status, Vec<&str>)> = BTreeMap::new();
    for n in &nodes {
        for f in &n.findings {
            let e = by_id.entry(&f.id).or_insert((f.status, Vec::new()));
            e.0 = e.0.max(f.status);
            if e.1.last() != Some(&n.name.as_str()) {
                e.1.push(&n.name);
            }
        }
    }
    let mut findings: Vec<FindingGroup> = by_id
        .into_iter()
        .map(|(id, (status, names))| FindingGroup {
            id: id.to_owned(),
            status,
            nodes: names.into_iter().map(str::to_owned).collect(),
        })
        .collect();
    findings.sort_by(|a, b| {
        b.status
            .cmp(&a.status)
            .then(b.nodes.len().cmp(&a.nodes.len()))
            .then(a.id.cmp(&b.id))
    });

    // Configurations: by fingerprint; the largest group is the majority's, and within it the
    // aspects most of its nodes share (firmware is not in the fingerprint).
    let mut groups: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(c) = &n.config {
            groups.entry(c.fingerprint.as_deref()).or_default().push(i);
        }
    }
    let largest = groups
        .iter()
        .max_by(|a, b| {
            (a.0.is_some(), a.1.len())
                .cmp(&(b.0.is_some(), b.1.len()))
                .then(b.0.cmp(a.0))
        })
        .map(|(fp, members)| (*fp, members.clone()));
    let profiles: Vec<Option<Vec<Aspect>>> = nodes
        .iter()
        .map(|n| n.config.as_ref().map(aspects))
        .collect();
    let majority = largest.map(|(fp, members)| {
        let mut counts: BTreeMap<&Vec<Aspect>, usize> = BTreeMap::new();
        for &i in &members {
            if let Some(p) = &profiles[i] {
                *counts.entry(p).or_default() += 1;
            }
        }
        let (aspects, n) = counts
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(p, n)| (p.clone(), n))
            .unwrap_or_default();
        Majority {
            fingerprint: fp.map(str::to_owned),
            nodes: n,
            aspects,
        }
    });
    let mut outliers = Vec::new();
    if let Some(m) = &majority {
        for (n, profile) in nodes.iter().zip(&profiles) {
            let Some(profile) = profile else { continue };
            let differences = differences(&m.aspects, profile);
            if !differences.is_empty() {
                outliers.push(Outlier {
                    node: n.name.clone(),
                    fingerprint: n.config.as_ref().and_then(|c| c.fingerprint.clone()),
                    differences,
                });
            }
        }
    }
    let mut configurations: Vec<ConfigGroup> = groups
        .iter()
        .map(|(fp, members)| {
            let first = nodes[members[0]].config.as_ref();
            ConfigGroup {
                fingerprint: fp.map(str::to_owned),
                majority: majority
                    .as_ref()
                    .is_some_and(|m| m.fingerprint.as_deref() == *fp),
                gpus: first.map(|c| models(&c.gpus)),
                rocm: first.and_then(|c| c.rocm.clone()),
                nodes: members.iter().map(|&i| nodes[i].name.clone()).collect(),
            }
        })
        .collect();
    configurations.sort_by(|a, b| {
        b.majority
            .cmp(&a.majority)
            .then(b.nodes.len().cmp(&a.nodes.len()))
            .then(a.fingerprint.cmp(&b.fingerprint))
    });

    let mut gpu_failures: Vec<GpuFailure> = Vec::new();
    for n in &nodes {
        let start = gpu_failures.len();
        for f in n.findings.iter().filter(|f| f.status == Status::Fail) {
            let Some(g) = &f.gpu else { continue };
            let known = gpu_failures[start..]
                .iter_mut()
                .find(|x| x.index == g.index && x.pci_address == g.pci_address);
            match known {
                Some(x) => {
                    if !x.findings.contains(&f.id) {
                        x.findings.push(f.id.clone());
                    }
                }
                None => gpu_failures.push(GpuFailure {
                    node: n.name.clone(),
                    index: g.index,
                    pci_address: g.pci_address.clone(),
                    findings: vec![f.id.clone()],
                }),
            }
        }
        gpu_failures[start..].sort_by_key(|a| a.index);
    }

    let nodes = nodes
        .into_iter()
        .map(|n| NodeLine {
            fingerprint: n.config.and_then(|c| c.fingerprint),
            name: n.name,
            name_from: n.name_from,
            origin: n.origin,
            schema_version: n.schema_version,
            generated_at: n.generated_at,
            status: n.status,
            root_cause: n.root_cause,
        })
        .collect();
    Fleet {
        nodes,
        verdicts,
        findings,
        configurations,
        majority,
        outliers,
        gpu_failures,
        refused,
    }
}

/// How `node` differs from `majority`, aspect by aspect (in the majority's order, then the
/// node's own aspects the majority lacks).
fn differences(majority: &[Aspect], node: &[Aspect]) -> Vec<Difference> {
    let mut out = Vec::new();
    for m in majority {
        let theirs = node.iter().find(|a| a.key == m.key);
        if theirs.map(|a| &a.value) != Some(&m.value) {
            out.push(Difference {
                area: m.area,
                key: m.key.clone(),
                majority: Some(m.value.clone()),
                node: theirs.map(|a| a.value.clone()),
            });
        }
    }
    for a in node {
        if !majority.iter().any(|m| m.key == a.key) {
            out.push(Difference {
                area: a.area,
                key: a.key.clone(),
                majority: None,
                node: Some(a.value.clone()),
            });
        }
    }
    out.sort_by_key(|a| a.area);
    out
}

/// Node names as pdsh's host lists write them, runs of numbered names joined
/// (`node[01-03,07]`), each bracket holding at most a few ranges so that the list can be
/// wrapped; names sorted and each once.
pub fn hostlist(names: &[String]) -> Vec<String> {
    // (prefix, digits' width) → numbers; names without a trailing number as they are.
    let mut numbered: BTreeMap<(&str, usize), Vec<u64>> = BTreeMap::new();
    let mut plain: Vec<&str> = Vec::new();
    for name in names {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, number) = name.split_at(name.len() - digits);
        match number.parse::<u64>() {
            Ok(n) if digits <= 18 => numbered.entry((prefix, digits)).or_default().push(n),
            _ => plain.push(name),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for ((prefix, width), mut numbers) in numbered {
        numbers.sort_unstable();
        numbers.dedup();
        if let [only] = numbers[..] {
            out.push(format!("{prefix}{only:0width$}"));
            continue;
        }
        let runs = ranges_padded(&numbers, width, "-", ",");
        let runs: Vec<&str> = runs.split(',').collect();
        for chunk in runs.chunks(4) {
            out.push(format!("{prefix}[{}]", chunk.join(",")));
        }
    }
    plain.sort_unstable();
    plain.dedup();
    out.extend(plain.into_iter().map(str::to_owned));
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schema 1 report: `status` its verdict, one MI210 per `mec` entry.
    fn v1(status: &str, rocm: &str, mec: &[u64], findings: Value) -> Value {
        let gpus: Vec<Value> = mec
            .iter()
            .enumerate()
            .map(|(i, m)| {
                json!({"index": i, "pci_address": format!("0000:{:02x}:00.0", i + 3),
                       "marketing_name": "AMD Instinct MI210", "gfx": "gfx90a",
                       "device_id": 29711, "mec_firmware": m, "sdma_firmware": 9,
                       "firmware": {"smc": "00.68.59.00"}})
            })
            .collect();
        json!({
            "schema_version": 1,
            "tool": {"name": "rocm-probe", "version": "0.1.0"},
            "source": {"kind": "live"},
            "verdict": {"status": status, "summary": "s", "root_cause": null},
            "findings": findings,
            "layers": [],
            "facts": {"gpus": gpus.len(), "agents": gpus.len(), "targets": [],
                      "config": {"fingerprint": "aaaa", "rocm": rocm, "kernel": "6.8.0",
                                 "amdgpu": null, "compute_partition": null,
                                 "memory_partition": null, "libraries": {}, "gpus": gpus}}
        })
    }

    /// The same report in schema 2, as the issue specifies it: GPUs in `facts.gpus`, counts
    /// renamed, device ids in hex, the host and the time.
    fn v2(mut d: Value, host: Option<&str>) -> Value {
        d["schema_version"] = json!(2);
        d["source"]["host"] = json!(host);
        d["generated_at"] = json!("2026-12-03T23:00:00Z");
        let facts = d["facts"].as_object_mut().unwrap();
        let mut gpus = facts["config"]["gpus"].take();
        facts["config"].as_object_mut().unwrap().remove("gpus");
        for g in gpus.as_array_mut().unwrap() {
            g["device_id"] = json!(format!("{:#06x}", g["device_id"].as_u64().unwrap()));
        }
        facts.insert("gpu_count".into(), facts["gpus"].clone());
        facts.insert("agent_count".into(), facts["agents"].clone());
        facts.remove("agents");
        facts.insert("gpus".into(), gpus);
        d
    }

    fn origin() -> Origin {
        Origin {
            input: "x.json".into(),
            line: None,
        }
    }

    fn node(d: &Value) -> Result<Node, Reason> {
        parse(d.to_string().as_bytes(), &origin(), None, Some("x"))
    }

    #[test]
    fn both_schemas_give_the_same_node() {
        let ras = json!([{"id": "hardware.ras-uncorrectable", "status": "fail",
                          "subject": {"kind": "gpu", "index": 1, "pci_address": "0000:04:00.0"}},
                         {"id": "hardware.bar", "status": "pass"}]);
        let one = v1("fail", "6.4.1", &[92, 92], ras);
        let a = node(&one).unwrap();
        let b = node(&v2(one, Some("gpu-node-7"))).unwrap();
        assert_eq!(a.config, b.config);
        assert_eq!(a.findings, b.findings);
        assert_eq!(a.findings.len(), 1, "passes are left out");
        assert_eq!(
            a.config.as_ref().unwrap().gpus[0].device_id.as_deref(),
            Some("0x740f")
        );
        assert_eq!((a.name.as_str(), a.name_from), ("x", NameFrom::File));
        assert_eq!(
            (b.name.as_str(), b.name_from),
            ("gpu-node-7", NameFrom::Host)
        );
        assert_eq!(b.generated_at.as_deref(), Some("2026-12-03T23:00:00Z"));
        // A redacted host names nothing: the file does.
        let c = node(&v2(v1("pass", "6.4.1", &[92], json!([])), Some("host"))).unwrap();
        assert_eq!(c.name_from, NameFrom::File);
    }

    #[test]
    fn what_is_not_a_report_is_refused_with_the_reason() {
        let good = v1("pass", "6.4.1", &[92], json!([]));
        let with = |f: &dyn Fn(&mut Value)| {
            let mut d = good.clone();
            f(&mut d);
            node(&d).unwrap_err()
        };
        assert!(matches!(
            parse(b"{\"a\": ", &origin(), None, None),
            Err(Reason::NotJson { line: 1, .. })
        ));
        assert!(matches!(
            parse(b"[1, 2]", &origin(), None, None),
            Err(Reason::Malformed { .. })
        ));
        assert!(matches!(
            parse(b"{\"findings\": 3}", &origin(), None, None),
            Err(Reason::Malformed { .. })
        ));
        assert!(matches!(
            parse(b"\xff\xfe", &origin(), None, None),
            Err(Reason::NotUtf8 | Reason::NotJson { .. })
        ));
        assert_eq!(
            with(&|d| d["tool"]["name"] = json!("amd-smi")),
            Reason::Foreign {
                tool: Some("amd-smi".into())
            }
        );
        assert_eq!(
            with(&|d| d["schema_version"] = json!(3)),
            Reason::UnsupportedSchema {
                version: "3".into()
            }
        );
        assert_eq!(
            with(&|d| {
                d.as_object_mut().unwrap().remove("schema_version");
            }),
            Reason::NoSchemaVersion
        );
        assert_eq!(
            with(&|d| d["verdict"]["status"] = json!("great")),
            Reason::NotAReport
        );
    }

    #[test]
    fn pdsh_streams_interleave_pretty_documents_and_name_their_nodes() {
        let a = serde_json::to_string_pretty(&v1("pass", "6.4.1", &[92], json!([]))).unwrap();
        let b = v2(v1("fail", "6.3.0", &[90], json!([])), None).to_string();
        let mut text = String::new();
        let mut a_lines = a.lines();
        // pdsh prints lines as they come: node02's one line lands in the middle of node01's.
        for (k, l) in a_lines.by_ref().take(5).enumerate() {
            text.push_str(&format!("node01: {l}\n"));
            if k == 2 {
                text.push_str(&format!("node02: {b}\n"));
            }
        }
        for l in a_lines {
            text.push_str(&format!("node01: {l}\n"));
        }
        text.push_str("node03: ssh: connect to host node03 port 22: Connection refused\n");
        text.push_str("node03: pdsh@login: node03: ssh exited with exit code 255\n");
        text.push_str("node04: {\"schema_version\": 1,\n");
        let read = read_stream(&mut text.as_bytes(), "-", None);
        let names: Vec<(&str, Status)> = read
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.status))
            .collect();
        assert_eq!(
            names,
            [("node02", Status::Fail), ("node01", Status::Pass)],
            "{:?}",
            read.refused
        );
        assert_eq!(read.nodes[1].origin.line, Some(1));
        let refused: Vec<(Option<&str>, &Reason)> = read
            .refused
            .iter()
            .map(|r| (r.node.as_deref(), &r.reason))
            .collect();
        assert_eq!(
            refused,
            [
                (Some("node03"), &Reason::NotADocument { lines: 2 }),
                (Some("node04"), &Reason::Truncated)
            ]
        );
    }

    #[test]
    fn unnamed_json_lines_are_told_apart_by_line() {
        let d = v1("pass", "6.4.1", &[92], json!([])).to_string();
        let text = format!("{d}\n\n{d}\n");
        let read = read_stream(&mut text.as_bytes(), "fleet.jsonl", Some("fleet"));
        let names: Vec<&str> = read.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["fleet.jsonl:1", "fleet.jsonl:3"]);
        let one = read_stream(&mut format!("{d}\n").as_bytes(), "n7.jsonl", Some("n7"));
        assert_eq!(one.nodes[0].name, "n7");
    }

    #[test]
    fn a_line_over_the_cap_is_refused_and_the_stream_goes_on() {
        let d = v1("pass", "6.4.1", &[92], json!([])).to_string();
        let mut text = format!("{{\"x\": \"{}\"}}\n", "a".repeat(DOCUMENT_CAP + 10));
        text.push_str(&d);
        text.push('\n');
        let read = read_stream(&mut text.as_bytes(), "-", None);
        assert_eq!(read.nodes.len(), 1);
        assert_eq!(
            read.refused[0].reason,
            Reason::TooLarge {
                cap_mib: (DOCUMENT_CAP >> 20) as u64
            }
        );
    }

    #[test]
    fn majority_groups_and_outliers() {
        let named = |name: &str, d: Value| {
            let mut n = node(&d).unwrap();
            n.name = name.into();
            n
        };
        let gpu_fail = json!([{"id": "hardware.ras-uncorrectable", "status": "fail",
                               "subject": {"kind": "gpu", "index": 1, "pci_address": "0000:04:00.0"}},
                              {"id": "workloads.compute", "status": "warn"}]);
        let mut nodes = vec![
            named("n01", v1("pass", "6.4.1", &[92, 92], json!([]))),
            named("n02", v1("pass", "6.4.1", &[92, 92], json!([]))),
            named("n03", v2(v1("fail", "6.4.1", &[92, 92], gpu_fail), None)),
            // Same fingerprint, older MEC firmware on one GPU.
            named("n04", v1("pass", "6.4.1", &[92, 88], json!([]))),
        ];
        let mut other = v1(
            "warn",
            "6.3.0",
            &[92, 92],
            json!([{"id": "workloads.compute", "status": "warn"}]),
        );
        other["facts"]["config"]["fingerprint"] = json!("bbbb");
        nodes.push(named("n05", other));
        let f = view(Read {
            nodes,
            refused: Vec::new(),
        });
        assert_eq!(f.exit_code(), 1);
        assert_eq!(f.verdicts[0].status, Status::Fail);
        assert_eq!(f.verdicts[0].nodes, ["n03"]);
        assert_eq!(f.findings[0].id, "hardware.ras-uncorrectable");
        assert_eq!(f.findings[1].id, "workloads.compute");
        assert_eq!(f.findings[1].nodes, ["n03", "n05"]);
        assert_eq!(f.configurations.len(), 2);
        assert!(f.configurations[0].majority);
        assert_eq!(f.configurations[0].nodes, ["n01", "n02", "n03", "n04"]);
        let m = f.majority.as_ref().unwrap();
        assert_eq!((m.fingerprint.as_deref(), m.nodes), (Some("aaaa"), 3));
        type Diffs<'a> = Vec<(&'a str, Option<&'a str>, Option<&'a str>)>;
        let outliers: Vec<(&str, Diffs)> = f
            .outliers
            .iter()
            .map(|o| {
                (
                    o.node.as_str(),
                    o.differences
                        .iter()
                        .map(|d| (d.key.as_str(), d.majority.as_deref(), d.node.as_deref()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            outliers,
            [
                (
                    "n04",
                    vec![(
                        "gpus.mec_firmware",
                        Some("92"),
                        Some("92 (GPU 0), 88 (GPU 1)")
                    )]
                ),
                ("n05", vec![("config.rocm", Some("6.4.1"), Some("6.3.0"))]),
            ]
        );
        assert_eq!(f.gpu_failures.len(), 1);
        assert_eq!(f.gpu_failures[0].node, "n03");
        assert_eq!(f.gpu_failures[0].index, Some(1));
    }

    #[test]
    fn host_lists_join_numbered_names() {
        let names: Vec<String> = [
            "node03", "node01", "node02", "node07", "gpu9", "login", "node01",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(hostlist(&names), ["gpu9", "login", "node[01-03,07]"]);
        let many: Vec<String> = (0..20).map(|i| format!("n{:02}", i * 2)).collect();
        let list = hostlist(&many);
        assert_eq!(list.len(), 5, "{list:?}");
        assert_eq!(list[0], "n[00,02,04,06]");
    }

    #[test]
    fn hostile_nesting_and_odd_types_neither_overflow_nor_refuse_the_node() {
        // Nesting far deeper than any stack, where a value is skipped and where one is read:
        // skipped without recursion (serde_json), and the document judged on what it lacks.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for doc in [
            format!(r#"{{"layers": {deep}}}"#),
            format!(r#"{{"facts": {{"config": {{"rocm": {deep}}}}}}}"#),
        ] {
            assert_eq!(
                parse(doc.as_bytes(), &origin(), None, None).unwrap_err(),
                Reason::Foreign { tool: None },
                "{}",
                &doc[..40]
            );
        }
        // A report whose layers are that deep is still read.
        let d = v1("pass", "6.4.1", &[92], json!([])).to_string();
        assert!(d.contains(r#""layers":[]"#));
        let d = d.replacen(r#""layers":[]"#, &format!(r#""layers":{deep}"#), 1);
        assert!(parse(d.as_bytes(), &origin(), None, None).is_ok());
        let read = read_stream(&mut deep.as_bytes(), "-", None);
        assert!(read.nodes.is_empty());
        // Values of unexpected types are no values; the node is read.
        let mut d = v1("pass", "6.4.1", &[92], json!([]));
        d["facts"]["config"]["rocm"] = json!({"major": 6});
        d["facts"]["config"]["gpus"][0]["device_id"] = json!(-1);
        d["facts"]["config"]["gpus"][0]["firmware"] = json!(["x"]);
        let n = node(&d).unwrap();
        let c = n.config.unwrap();
        assert_eq!(c.rocm, None);
        assert_eq!(c.gpus[0].device_id, None);
        assert_eq!(
            c.gpus[0].firmware.get("mec_firmware").map(String::as_str),
            Some("92")
        );
        assert!(!c.gpus[0].firmware.contains_key("smc"));
    }

    #[test]
    fn stand_ins_name_nobody() {
        for s in ["host", "host2", "host17", "localhost", ""] {
            assert!(is_stand_in(s), "{s}");
        }
        for s in ["hostile", "node1", "gpu-host"] {
            assert!(!is_stand_in(s), "{s}");
        }
    }
}
