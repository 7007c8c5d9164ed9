//! The kernel log of the current boot, read without running anything (issue 19, item 1): the
//! one reader of `/dev/kmsg`, the systemd journal (`kernel_log_journal.rs`) and the syslog files.
//!
//! Live, the sources are tried in order — `/dev/kmsg` (opened read-only, `O_NONBLOCK`, read
//! record by record until `EAGAIN`), the journal through libsystemd loaded at run time, then the
//! tails of `/var/log/kern.log` and `/var/log/messages` — and the first readable one is used. In
//! a fixture `dev/kmsg` is a regular file in kmsg record format (`pri,seq,usec,flags;message`,
//! continuation lines starting with a space), read through [`SysRoot`] like the syslog files.
//!
//! Bounded (ARCHITECTURE.md §4): at most [`SCAN_CAP`] bytes of a source are looked at (a file's
//! last [`TAIL_CAP`] bytes), at most [`KEEP_LINES`] lines and [`KEEP_BYTES`] bytes are kept, each
//! line cut at [`LINE_CAP`] bytes. Only lines the caller's filter keeps are kept — the lines the
//! facts use, which `snapshot` writes into the fixture's `dev/kmsg`.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use serde::Serialize;

use crate::source::record::Record;
use crate::source::root::{Contents, ReadErrorKind, SysRoot};

/// The kernel's log device.
pub const KMSG: &str = "/dev/kmsg";
/// The syslog files holding kernel lines, in the order they are tried.
pub const LOG_FILES: [&str; 2] = ["/var/log/kern.log", "/var/log/messages"];
/// `kernel.dmesg_restrict`: 1 keeps the log from users without CAP_SYSLOG.
pub const DMESG_RESTRICT: &str = "/proc/sys/kernel/dmesg_restrict";
/// The most bytes of one source looked at (records of `/dev/kmsg`, or a file's tail).
pub const SCAN_CAP: u64 = 16 << 20;
/// The most bytes read from the end of a log file.
pub const TAIL_CAP: u64 = 4 << 20;
/// The most lines kept.
pub const KEEP_LINES: usize = 2000;
/// The most bytes kept (all lines together).
pub const KEEP_BYTES: usize = 1 << 20;
/// A kept line is cut here (the kernel's own records are at most 8 KiB with their header).
pub const LINE_CAP: usize = 2048;

/// Where the lines came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogSource {
    /// `/dev/kmsg` (the fixture's `dev/kmsg` in a fixture).
    Kmsg,
    /// The systemd journal, `_TRANSPORT=kernel` of this boot.
    Journal,
    /// `/var/log/kern.log`.
    KernLog,
    /// `/var/log/messages`.
    Messages,
}

impl LogSource {
    /// The path or name the source is known by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kmsg => KMSG,
            Self::Journal => "journal",
            Self::KernLog => LOG_FILES[0],
            Self::Messages => LOG_FILES[1],
        }
    }
}

/// Why a source gave nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// Not there (no such file, no libsystemd).
    Absent,
    /// The kernel refused (`EPERM`/`EACCES`).
    Denied,
    /// Read, but it held no kernel line of this boot (a journal this user may not read shows
    /// nothing rather than refusing).
    Empty,
    /// A FIFO, socket or device where a file was expected, or another error.
    Unusable(String),
}

/// One kernel line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// Syslog priority (facility × 8 + level), when the source gave one.
    pub priority: Option<u32>,
    /// Microseconds since boot, when the source gave them.
    pub usec: Option<u64>,
    /// The message, control characters replaced, cut at [`LINE_CAP`].
    pub text: String,
}

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelLog {
    /// The source used; `None` when none was readable.
    pub source: Option<LogSource>,
    /// The sources tried before it (or all of them), and why each gave nothing.
    pub refused: Vec<(LogSource, Refusal)>,
    /// The kept lines, oldest first.
    pub lines: Vec<LogLine>,
    /// Lines seen in the source (kept or not).
    pub seen: usize,
    /// Whether a bound stopped the read or dropped kept lines.
    pub truncated: bool,
}

/// Reads the kernel log of the current boot, keeping the lines `keep` accepts. In a fixture
/// only the files are read (`dev/kmsg` first); live, `/dev/kmsg` and the journal come first.
/// When a snapshot is being taken, the kept lines are recorded as `/dev/kmsg`.
pub fn read(root: &SysRoot, keep: &dyn Fn(&str) -> bool) -> KernelLog {
    let mut log = KernelLog::default();
    let mut sink = Sink::new(keep);
    let kmsg = if root.is_fixture() {
        read_file(root, KMSG, Format::Kmsg, &mut sink)
    } else {
        read_live_kmsg(&mut sink)
    };
    match kmsg {
        Ok(()) => log.source = Some(LogSource::Kmsg),
        Err(why) => {
            log.refused.push((LogSource::Kmsg, why));
            sink = Sink::new(keep);
            if !root.is_fixture() {
                match crate::source::kernel_log_journal::read(&mut sink) {
                    Ok(()) if sink.seen > 0 => log.source = Some(LogSource::Journal),
                    Ok(()) => log.refused.push((LogSource::Journal, Refusal::Empty)),
                    Err(why) => log.refused.push((LogSource::Journal, why)),
                }
            }
            for (path, which) in LOG_FILES
                .iter()
                .zip([LogSource::KernLog, LogSource::Messages])
            {
                if log.source.is_some() {
                    break;
                }
                sink = Sink::new(keep);
                match read_file(root, path, Format::Syslog, &mut sink) {
                    Ok(()) if sink.seen > 0 => log.source = Some(which),
                    Ok(()) => log.refused.push((which, Refusal::Empty)),
                    Err(why) => log.refused.push((which, why)),
                }
            }
        }
    }
    if log.source.is_some() {
        log.seen = sink.seen;
        log.truncated = sink.truncated;
        log.lines = sink.lines;
        root.record_file(KMSG, || kmsg_bytes(&log.lines));
    } else {
        // A refusal shows in the snapshot's summary; absence is reproduced by writing nothing.
        let denied = log.refused.iter().any(|(_, r)| *r == Refusal::Denied);
        root.record(|| Record::Failed {
            path: KMSG.to_owned(),
            error: if denied {
                ReadErrorKind::PermissionDenied
            } else {
                ReadErrorKind::NotFound
            },
        });
    }
    log
}

/// The lines in kmsg record format, as a fixture's `dev/kmsg` holds them.
pub fn kmsg_bytes(lines: &[LogLine]) -> Vec<u8> {
    let mut out = Vec::new();
    for (seq, l) in lines.iter().enumerate() {
        out.extend_from_slice(
            format!(
                "{},{seq},{},-;{}\n",
                l.priority.unwrap_or(3),
                l.usec.unwrap_or(0),
                l.text
            )
            .as_bytes(),
        );
    }
    out
}

/// Collects kept lines within the bounds.
pub(crate) struct Sink<'a> {
    keep: &'a dyn Fn(&str) -> bool,
    lines: Vec<LogLine>,
    bytes: usize,
    scanned: u64,
    seen: usize,
    truncated: bool,
}

impl<'a> Sink<'a> {
    fn new(keep: &'a dyn Fn(&str) -> bool) -> Self {
        Self {
            keep,
            lines: Vec::new(),
            bytes: 0,
            scanned: 0,
            seen: 0,
            truncated: false,
        }
    }

    /// Whether the scan bound is reached (the reader stops).
    pub(crate) fn full(&self) -> bool {
        self.scanned >= SCAN_CAP
    }

    /// Offers one message; `raw` is its length in the source.
    pub(crate) fn push(&mut self, priority: Option<u32>, usec: Option<u64>, message: &[u8]) {
        self.scanned += message.len() as u64 + 1;
        if self.full() {
            self.truncated = true;
        }
        self.seen += 1;
        let text = clean(message);
        if !(self.keep)(&text) {
            return;
        }
        if self.lines.len() >= KEEP_LINES || self.bytes + text.len() > KEEP_BYTES {
            self.truncated = true;
            return;
        }
        self.bytes += text.len();
        self.lines.push(LogLine {
            priority,
            usec,
            text,
        });
    }

    /// A boot marker in a file: what came before is another boot.
    fn new_boot(&mut self) {
        self.lines.clear();
        self.bytes = 0;
        self.seen = 0;
    }
}

/// A message as text: invalid UTF-8 replaced, control characters (tabs included) as spaces,
/// cut at [`LINE_CAP`] bytes on a character boundary.
fn clean(message: &[u8]) -> String {
    let cut = &message[..message.len().min(LINE_CAP)];
    let mut text: String = String::from_utf8_lossy(cut)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if message.len() > LINE_CAP {
        let mut end = LINE_CAP.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text.trim_end().to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `pri,seq,usec,flags;message`, continuation lines starting with a space.
    Kmsg,
    /// syslog: `… kernel: [ 12.345678] message`.
    Syslog,
}

/// Reads `/dev/kmsg` of this machine record by record until `EAGAIN`.
fn read_live_kmsg(sink: &mut Sink<'_>) -> Result<(), Refusal> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(KMSG)
        .map_err(|e| refusal(&e))?;
    let meta = file.metadata().map_err(|e| refusal(&e))?;
    if meta.is_file() {
        return read_tail(file, meta.len(), Format::Kmsg, sink);
    }
    if !meta.file_type().is_char_device() {
        return Err(Refusal::Unusable(
            ReadErrorKind::NotRegular.text().to_string(),
        ));
    }
    read_records(file, sink)
}

/// One `read()` per record from a kmsg device, until `EAGAIN` or a bound.
fn read_records(mut file: impl Read, sink: &mut Sink<'_>) -> Result<(), Refusal> {
    // A record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a smaller buffer gets EINVAL.
    let mut buf = vec![0u8; 16 << 10];
    let mut errors = 0;
    while !sink.full() {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let record = &buf[..n];
                let first = record.split(|b| *b == b'\n').next().unwrap_or(record);
                parse_kmsg_line(first, sink);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // EPIPE: the record at the read position was overwritten; the next read goes on
            // from the oldest one left.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) && errors < 16 => errors += 1,
            Err(e) if sink.seen == 0 => return Err(refusal(&e)),
            Err(_) => {
                sink.truncated = true;
                break;
            }
        }
    }
    if sink.full() {
        sink.truncated = true;
    }
    Ok(())
}

/// Reads a log file through the root: its last [`TAIL_CAP`] bytes, non-blocking, a regular
/// file only.
fn read_file(
    root: &SysRoot,
    abs: &str,
    format: Format,
    sink: &mut Sink<'_>,
) -> Result<(), Refusal> {
    match root.contents(abs) {
        Ok(Contents::File(path)) => {
            let (file, len) = open_regular(&path)?;
            read_tail(file, len, format, sink)
        }
        Ok(Contents::Memory(bytes)) => {
            let len = bytes.len() as u64;
            read_tail(io::Cursor::new(bytes), len, format, sink)
        }
        Err(e) => Err(match e.kind {
            ReadErrorKind::NotFound => Refusal::Absent,
            ReadErrorKind::PermissionDenied => Refusal::Denied,
            other => Refusal::Unusable(other.text().to_string()),
        }),
    }
}

fn open_regular(path: &Path) -> Result<(File, u64), Refusal> {
    // O_NONBLOCK: a FIFO put where the log should be must not wait for a writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| refusal(&e))?;
    let meta = file.metadata().map_err(|e| refusal(&e))?;
    if !meta.is_file() {
        return Err(Refusal::Unusable(
            ReadErrorKind::NotRegular.text().to_string(),
        ));
    }
    Ok((file, meta.len()))
}

/// Reads the last [`TAIL_CAP`] bytes of `len` and offers their lines (the first, cut by the
/// seek, dropped).
fn read_tail(
    mut file: impl Read + Seek,
    len: u64,
    format: Format,
    sink: &mut Sink<'_>,
) -> Result<(), Refusal> {
    let start = len.saturating_sub(TAIL_CAP);
    if start > 0 {
        file.seek(SeekFrom::Start(start)).map_err(|e| refusal(&e))?;
        sink.truncated = true;
    }
    let mut bytes = Vec::new();
    file.take(TAIL_CAP)
        .read_to_end(&mut bytes)
        .map_err(|e| refusal(&e))?;
    let mut lines = bytes.split(|b| *b == b'\n');
    if start > 0 {
        lines.next();
    }
    for line in lines {
        if sink.full() {
            break;
        }
        match format {
            // Continuation lines (" SUBSYSTEM=pci") carry the record's dictionary.
            Format::Kmsg if line.first() == Some(&b' ') => {}
            Format::Kmsg => parse_kmsg_line(line, sink),
            Format::Syslog => parse_syslog_line(line, sink),
        }
    }
    Ok(())
}

/// `pri,seq,usec,flags[,…];message`; a line without the header is taken whole.
fn parse_kmsg_line(line: &[u8], sink: &mut Sink<'_>) {
    if line.is_empty() {
        return;
    }
    let Some(semi) = line.iter().position(|b| *b == b';') else {
        sink.push(None, None, line);
        return;
    };
    let header = String::from_utf8_lossy(&line[..semi]);
    let mut fields = header.split(',');
    let priority = fields.next().and_then(|p| p.trim().parse().ok());
    let usec = fields.nth(1).and_then(|u| u.trim().parse().ok());
    if priority.is_none() {
        sink.push(None, None, line);
        return;
    }
    sink.push(priority, usec, &line[semi + 1..]);
}

/// `Mon dd hh:mm:ss host kernel: [ 12.345678] message` (or an ISO timestamp first); lines of
/// other programs are skipped, a `Linux version` line starts the boot afresh.
fn parse_syslog_line(line: &[u8], sink: &mut Sink<'_>) {
    const TAG: &[u8] = b" kernel: ";
    let Some(at) = line.windows(TAG.len()).position(|w| w == TAG) else {
        return;
    };
    let mut message = &line[at + TAG.len()..];
    let mut usec = None;
    if message.first() == Some(&b'[') {
        if let Some(end) = message.iter().position(|b| *b == b']') {
            let stamp = String::from_utf8_lossy(&message[1..end]);
            usec = stamp
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| (s * 1e6) as u64);
            message = &message[end + 1..];
            if message.first() == Some(&b' ') {
                message = &message[1..];
            }
        }
    }
    if message.starts_with(b"Linux version ") {
        sink.new_boot();
    }
    sink.push(None, usec, message);
}

fn refusal(e: &io::Error) -> Refusal {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENODEV | libc::ENXIO) => Refusal::Absent,
        Some(libc::EPERM | libc::EACCES) => Refusal::Denied,
        _ => Refusal::Unusable(crate::i18n::os_error(e).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &str) -> bool {
        true
    }

    fn fixture(files: &[(&str, &[u8])]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let root = SysRoot::fixture(dir.path());
        (dir, root)
    }

    #[test]
    fn kmsg_records_continuations_and_bad_bytes() {
        let (_d, root) = fixture(&[(
            "dev/kmsg",
            b"6,1,1000,-;amdgpu 0000:03:00.0: ok\n SUBSYSTEM=pci\n 3,2,2000,-;x\n\
              3,3,3000,-;bad \xff\x01byte\tand tab\nno header at all\n",
        )]);
        let log = read(&root, &all);
        assert_eq!(log.source, Some(LogSource::Kmsg));
        let texts: Vec<&str> = log.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "amdgpu 0000:03:00.0: ok",
                "bad \u{fffd} byte and tab",
                "no header at all"
            ]
        );
        assert_eq!(log.lines[0].priority, Some(6));
        assert_eq!(log.lines[0].usec, Some(1000));
    }

    #[test]
    fn a_huge_line_is_cut_and_the_filter_keeps_only_what_it_wants() {
        let mut big = b"4,1,0,-;".to_vec();
        big.extend(std::iter::repeat_n(b'\xc3', 1).chain(std::iter::repeat_n(b'a', 100_000)));
        big.extend(b"\n4,2,0,-;amdgpu keep me\n4,3,0,-;other\n");
        let (_d, root) = fixture(&[("dev/kmsg", &big)]);
        let log = read(&root, &|t: &str| t.contains('a'));
        assert_eq!(log.seen, 3);
        assert_eq!(log.lines.len(), 2);
        assert!(log.lines[0].text.len() <= LINE_CAP);
        assert_eq!(log.lines[1].text, "amdgpu keep me");
    }

    #[test]
    fn syslog_files_keep_the_last_boot_only() {
        let text = b"Dec  1 10:00:00 h kernel: [    0.000000] Linux version 6.1\n\
            Dec  1 10:00:01 h kernel: [    5.000000] amdgpu: old boot\n\
            Dec  2 10:00:00 h systemd[1]: not the kernel\n\
            Dec  2 10:00:00 h kernel: [    0.000000] Linux version 6.8\n\
            Dec  2 10:00:02 h kernel: [    7.500000] amdgpu 0000:03:00.0: new boot\n";
        let (_d, root) = fixture(&[("var/log/kern.log", text)]);
        let log = read(&root, &all);
        assert_eq!(log.source, Some(LogSource::KernLog));
        assert_eq!(log.refused, [(LogSource::Kmsg, Refusal::Absent)]);
        let texts: Vec<&str> = log.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            ["Linux version 6.8", "amdgpu 0000:03:00.0: new boot"]
        );
        assert_eq!(log.lines[1].usec, Some(7_500_000));
    }

    #[test]
    fn nothing_readable_is_said_per_source() {
        let (_d, root) = fixture(&[("etc/hostname", b"x\n")]);
        let log = read(&root, &all);
        assert_eq!(log.source, None);
        assert_eq!(
            log.refused,
            [
                (LogSource::Kmsg, Refusal::Absent),
                (LogSource::KernLog, Refusal::Absent),
                (LogSource::Messages, Refusal::Absent)
            ]
        );
    }

    #[test]
    fn a_fifo_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dev")).unwrap();
        nix::unistd::mkfifo(
            &dir.path().join("dev/kmsg"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let root = SysRoot::fixture(dir.path());
        // No writer ever opens it: a blocking open or read would hang the test.
        let log = read(&root, &all);
        assert_eq!(log.source, None);
        assert!(matches!(
            log.refused[0],
            (LogSource::Kmsg, Refusal::Unusable(_))
        ));
    }

    #[test]
    fn a_huge_sparse_file_is_read_by_its_tail_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dev")).unwrap();
        let path = dir.path().join("dev/kmsg");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(200 << 20).unwrap();
        drop(f);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        io::Write::write_all(&mut f, b"\n3,9,9,-;amdgpu last line\n").unwrap();
        let root = SysRoot::fixture(dir.path());
        let log = read(&root, &|t: &str| t.contains("amdgpu"));
        assert_eq!(log.source, Some(LogSource::Kmsg));
        assert!(log.truncated);
        assert_eq!(log.lines.len(), 1);
        assert!(log.seen <= 3, "only the tail's lines: {}", log.seen);
    }

    #[test]
    fn records_are_read_until_would_block() {
        struct Device(Vec<&'static [u8]>);
        impl Read for Device {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.pop() {
                    Some(r) => {
                        buf[..r.len()].copy_from_slice(r);
                        Ok(r.len())
                    }
                    None => Err(io::ErrorKind::WouldBlock.into()),
                }
            }
        }
        let keep = all;
        let mut sink = Sink::new(&keep);
        let device = Device(vec![b"6,2,5,-;second\n SUBSYSTEM=x\n", b"6,1,4,-;first\n"]);
        read_records(device, &mut sink).unwrap();
        let texts: Vec<&str> = sink.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["first", "second"]);
    }

    #[test]
    fn the_recorded_bytes_read_back_the_same() {
        let lines = vec![LogLine {
            priority: Some(3),
            usec: Some(12),
            text: "amdgpu 0000:03:00.0: x".into(),
        }];
        let (_d, root) = fixture(&[("dev/kmsg", &kmsg_bytes(&lines))]);
        assert_eq!(read(&root, &all).lines, lines);
    }
}
