//! Redaction: one pass shared by `snapshot` (file contents, paths, link targets, directory
//! entries, `fixture.toml`) and the reports made to be pasted where others read them
//! (`--format markdown`, `--format html`).
//!
//! What names a person or a machine is learned from the source itself — user names from the
//! environment, home directories, `/etc/group` and `/etc/passwd`; host names from
//! `/proc/sys/kernel/hostname`, `/etc/hostname` and the kernel's builder — and then replaced
//! wherever it appears, in values and in paths alike, so that a redacted snapshot stays one
//! coherent machine (the venv moves to `/home/user/…` and `VIRTUAL_ENV` says so). GPU UUIDs,
//! unique ids and serial numbers are recognised by their form.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use crate::facts::platform::ROCM_ENV;
use crate::source::Source;
use crate::source::record::Record;

/// The environment variables that name the user outright.
const USER_ENV: [&str; 2] = ["USER", "LOGNAME"];

/// Files that name the machine's users and the machine; read (when present) to learn them.
const IDENTITY_FILES: [&str; 5] = [
    "/etc/group",
    "/etc/passwd",
    "/etc/hostname",
    "/proc/sys/kernel/hostname",
    "/proc/version",
];

/// Keys whose value identifies one device, in sysfs files and free text alike.
const KEYS: [&str; 3] = ["unique_id", "serial_number", "product_number"];

/// Names that identify nobody, or that are the stand-ins themselves.
const NOT_IDENTIFYING: [&str; 8] = [
    "root",
    "nobody",
    "nogroup",
    "user",
    "host",
    "localhost",
    "localdomain",
    "(none)",
];

/// The first uid/gid of human users, and the overflow id that stands for nobody.
const FIRST_HUMAN_ID: u32 = 1000;
const OVERFLOW_ID: u32 = 65534;

const REDACTED: &str = "REDACTED";

/// Whether stand-ins must keep the machine coherent (a snapshot) or only hide (a report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Identifiers become placeholders (`GPU-REDACTED`, `unique_id REDACTED`).
    #[default]
    Text,
    /// GPU ids become consistent pseudonyms, so that `ROCR_VISIBLE_DEVICES=GPU-…` still picks
    /// the GPU whose `unique_id` it named.
    Fixture,
}

/// The identifying strings of one source and how to replace them.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    mode: Mode,
    /// An identifying word (user or host name) → its stand-in (`user`, `user2`, `host`, …).
    words: HashMap<String, String>,
    /// Identifiers that are not one word (`john.doe`), replaced whole, longest first.
    phrases: Vec<(String, String)>,
    users: usize,
    hosts: usize,
    /// GPU ids seen so far, for pseudonyms that keep prefixes (ROCr matches UUID prefixes).
    ids: RefCell<HexTrie>,
}

/// Redacts free text with nothing learned beforehand: home directories, `user@host`, GPU
/// UUIDs and unique ids (see [`Redactor::text`]).
pub fn redact_text(text: &str) -> String {
    Redactor::default().text(text)
}

impl Redactor {
    /// Learns the user and host names that `source` holds: the user's environment
    /// (`USER`, `LOGNAME`, `HOME`, and the paths of the variables the probe reads), and
    /// `IDENTITY_FILES`. Reads through the source; call it before recording starts, so that
    /// a snapshot holds only what the report read.
    pub fn for_source(source: &Source) -> Self {
        let mut r = Self::default();
        let host = source.host();
        for name in USER_ENV {
            if let Some(v) = host.env(name) {
                r.learn_user(&v);
            }
        }
        for name in ROCM_ENV {
            if let Some(v) = host.env(name) {
                r.learn_env(name, &v);
            }
        }
        for path in IDENTITY_FILES {
            if let Ok(bytes) = source.root().read(path) {
                r.learn_file(path, &bytes);
            }
        }
        r
    }

    /// For writing a fixture: GPU ids get consistent pseudonyms instead of placeholders.
    pub fn for_fixture(mut self) -> Self {
        self.mode = Mode::Fixture;
        self
    }

    /// Learns from everything a run read.
    pub fn learn_records(&mut self, records: &[Record]) {
        for r in records {
            self.learn_record(r);
        }
    }

    fn learn_record(&mut self, record: &Record) {
        match record {
            Record::File { path, bytes } => {
                self.learn_homes(path);
                self.learn_file(path, bytes);
            }
            Record::Dir { path, entries } => {
                self.learn_homes(path);
                for e in entries {
                    self.learn_homes(&format!("{path}/{e}"));
                }
            }
            Record::Link { path, target } => {
                self.learn_homes(path);
                self.learn_homes(target);
            }
            Record::Exists { path, .. } | Record::Failed { path, .. } => self.learn_homes(path),
            Record::Env {
                name,
                value: Some(v),
            } => self.learn_env(name, v),
            Record::Active(a) => {
                if let Ok(text) = serde_json::to_string(a) {
                    self.learn_homes(&text);
                }
            }
            _ => {}
        }
    }

    fn learn_env(&mut self, name: &str, value: &str) {
        if USER_ENV.contains(&name) {
            self.learn_user(value);
        }
        if name == "HOME"
            && let Some(last) = value.trim_end_matches('/').rsplit('/').next()
        {
            self.learn_user(last);
        }
        self.learn_homes(value);
    }

    fn learn_file(&mut self, path: &str, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        match path {
            "/etc/group" => self.learn_group(&text),
            "/etc/passwd" => self.learn_passwd(&text),
            "/etc/hostname" | "/proc/sys/kernel/hostname" => self.learn_host(text.trim()),
            "/proc/version" => {
                if let Some((user, host)) = builder(&text) {
                    self.learn_user(user);
                    self.learn_host(host);
                }
            }
            _ => {}
        }
        self.learn_homes(&text);
    }

    /// Users' private groups (gid ≥ 1000) are named after them; members are users, except
    /// the system accounts that share a name with a system group (`syslog`).
    fn learn_group(&mut self, text: &str) {
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(':').collect()).collect();
        let system: BTreeSet<&str> = rows
            .iter()
            .filter(|f| f.len() > 2 && f[2].parse::<u32>().is_ok_and(|g| g < FIRST_HUMAN_ID))
            .map(|f| f[0])
            .collect();
        for f in rows.iter().filter(|f| f.len() > 2) {
            if f[2].parse::<u32>().is_ok_and(human) {
                self.learn_user(f[0]);
            }
            let members = f.get(3).map(|m| m.split(',')).into_iter().flatten();
            for m in members.filter(|m| !system.contains(m.trim())) {
                self.learn_user(m.trim());
            }
        }
    }

    fn learn_passwd(&mut self, text: &str) {
        for line in text.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 5 && f[2].parse::<u32>().is_ok_and(human) {
                self.learn_user(f[0]);
                if let Some(last) = f[5].trim_end_matches('/').rsplit('/').next() {
                    self.learn_user(last);
                }
            }
        }
    }

    /// `/home/<name>` anywhere in `text`: `<name>` is a user.
    fn learn_homes(&mut self, text: &str) {
        for name in homes(text) {
            self.learn_user(name);
        }
    }

    fn learn_user(&mut self, name: &str) {
        if acceptable(name) && !self.knows(name) {
            self.users += 1;
            let stand_in = numbered("user", self.users);
            self.add(name, stand_in);
        }
    }

    /// A host name, and its first label when it is qualified (`box` of `box.example.org`).
    fn learn_host(&mut self, name: &str) {
        if !acceptable(name) || self.knows(name) {
            return;
        }
        self.hosts += 1;
        let stand_in = numbered("host", self.hosts);
        if let Some((short, _)) = name.split_once('.')
            && acceptable(short)
            && !self.knows(short)
        {
            self.add(short, stand_in.clone());
        }
        self.add(name, stand_in);
    }

    fn knows(&self, name: &str) -> bool {
        self.words.contains_key(name) || self.phrases.iter().any(|(p, _)| p == name)
    }

    fn add(&mut self, name: &str, stand_in: String) {
        if name.chars().all(is_word) {
            self.words.insert(name.to_owned(), stand_in);
        } else {
            self.phrases.push((name.to_owned(), stand_in));
            self.phrases
                .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        }
    }

    /// Redacts a value or free text: GPU UUIDs, the values of `KEYS`, the names learned (and
    /// any `/home/<name>` in the text itself), and in a report `user@host` pairs.
    pub fn text(&self, text: &str) -> String {
        let fresh: Vec<&str> = homes(text).filter(|n| !self.knows(n)).collect();
        if !fresh.is_empty() {
            let mut more = self.clone();
            for name in fresh {
                more.learn_user(name);
            }
            return more.text(text);
        }
        let out = self.replace_uuids(text);
        let out = self.replace_names(&out);
        let out = self.replace_keyed(&out);
        match self.mode {
            Mode::Text => replace_user_at_host(&out),
            Mode::Fixture => out,
        }
    }

    /// Redacts a path (or one path component): names and GPU UUIDs.
    pub fn path(&self, path: &str) -> String {
        let fresh = homes(path).any(|n| !self.knows(n));
        if fresh {
            return self.text(path);
        }
        self.replace_names(&self.replace_uuids(path))
    }

    /// Redacts a file's bytes. Files that hold one identifier (`serial_number`) become
    /// `REDACTED`; `/etc/group` loses its member lists and users' group names; the kernel's
    /// builder becomes `user@host`; other text goes through [`Redactor::text`]. Binary files
    /// keep their layout: each learned name is overwritten with as many `x`.
    pub fn file(&self, path: &str, bytes: &[u8]) -> Vec<u8> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if matches!(name, "serial_number" | "product_number") {
            return b"REDACTED\n".to_vec();
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            return self.mask_binary(bytes);
        };
        if name == "unique_id" {
            return self.unique_id_file(text).into_bytes();
        }
        let text = match path {
            "/etc/group" => redact_group(text),
            "/proc/version" => redact_builder(text),
            _ => text.to_owned(),
        };
        self.text(&text).into_bytes()
    }

    /// A sysfs `unique_id` file (hex, as `amdgpu` prints it).
    fn unique_id_file(&self, text: &str) -> String {
        let value = text.trim_end();
        if self.mode == Mode::Fixture && !value.is_empty() && value.bytes().all(is_hex) {
            format!(
                "{}{}",
                self.ids.borrow_mut().map(value),
                &text[value.len()..]
            )
        } else {
            format!("{REDACTED}\n")
        }
    }

    /// One pass over the words of the bytes (a large binary costs one lookup per word, however
    /// many names were learned), then the rare names that are not one word.
    fn mask_binary(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        let mut i = 0;
        while i < out.len() {
            let n = out[i..].iter().take_while(|b| word(**b)).count();
            if n == 0 {
                i += 1;
                continue;
            }
            let known =
                std::str::from_utf8(&out[i..i + n]).is_ok_and(|w| self.words.contains_key(w));
            if known {
                out[i..i + n].fill(b'x');
            }
            i += n;
        }
        for (phrase, _) in &self.phrases {
            let p = phrase.as_bytes();
            let mut i = 0;
            while i + p.len() <= out.len() {
                let bounded =
                    (i == 0 || !word(out[i - 1])) && out.get(i + p.len()).is_none_or(|b| !word(*b));
                if bounded && &out[i..i + p.len()] == p {
                    out[i..i + p.len()].fill(b'x');
                    i += p.len();
                } else {
                    i += 1;
                }
            }
        }
        out
    }

    /// Redacts the text of an HTML page this crate's renderer made: text between tags (with
    /// the page's five escapes undone and redone), never the markup or the stylesheet.
    pub fn html(&self, page: &str) -> String {
        let mut out = String::with_capacity(page.len());
        let mut rest = page;
        while !rest.is_empty() {
            if rest.starts_with("<style") {
                let end = rest
                    .find("</style>")
                    .map_or(rest.len(), |i| i + "</style>".len());
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            } else if rest.starts_with('<') {
                let end = rest.find('>').map_or(rest.len(), |i| i + 1);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            } else {
                let end = rest.find('<').unwrap_or(rest.len());
                out.push_str(&escape_html(&self.text(&unescape_html(&rest[..end]))));
                rest = &rest[end..];
            }
        }
        out
    }

    fn replace_names(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (phrase, stand_in) in &self.phrases {
            text = replace_bounded(&text, phrase, stand_in);
        }
        if self.words.is_empty() {
            return text;
        }
        let mut out = String::with_capacity(text.len());
        let mut push = |word: &str| out.push_str(self.words.get(word).map_or(word, |s| s));
        let mut start = None;
        for (i, c) in text.char_indices() {
            if is_word(c) {
                start.get_or_insert(i);
                continue;
            }
            if let Some(s) = start.take() {
                push(&text[s..i]);
            }
            push(c.encode_utf8(&mut [0; 4]));
        }
        if let Some(s) = start {
            push(&text[s..]);
        }
        out
    }

    /// `GPU-<hex>` (any case, as ROCr reads it) wherever it ends at a word boundary.
    fn replace_uuids(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = find_ascii_ci(rest, "gpu-") {
            let (head, tail) = rest.split_at(i + 4);
            out.push_str(head);
            let n = tail.bytes().take_while(|b| is_hex(*b)).count();
            let ends = tail[n..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            if n > 0 && ends {
                out.push_str(&self.stand_in_for_hex(&tail[..n]));
                rest = &tail[n..];
            } else {
                rest = tail;
            }
        }
        out.push_str(rest);
        out
    }

    fn stand_in_for_hex(&self, hex: &str) -> String {
        match self.mode {
            Mode::Text => REDACTED.to_owned(),
            Mode::Fixture => self.ids.borrow_mut().map(hex),
        }
    }

    /// `unique_id 1234`, `unique_id\t1234`, `serial_number=…`, `product_number: …`.
    fn replace_keyed(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for key in KEYS {
            text = self.replace_key(&text, key);
        }
        text
    }

    fn replace_key(&self, text: &str, key: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = find_ascii_ci(rest, key) {
            let (head, tail) = rest.split_at(i + key.len());
            out.push_str(head);
            let starts = head[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let sep = tail.len() - tail.trim_start_matches(|c| " \t:=\"'".contains(c)).len();
            let separated = tail[..sep].contains([' ', '\t', ':', '=']);
            let value = tail[sep..]
                .find(|c: char| !(c.is_alphanumeric() || "_-.".contains(c)))
                .unwrap_or(tail.len() - sep);
            if starts && separated && value > 0 {
                out.push_str(&tail[..sep]);
                out.push_str(&self.stand_in_for_value(key, &tail[sep..sep + value]));
                rest = &tail[sep + value..];
            } else {
                rest = tail;
            }
        }
        out.push_str(rest);
        out
    }

    /// In a fixture a `unique_id` keeps its form and its tie to the GPU's UUID (`GPU-<hex of
    /// unique_id>`); 0 stays 0, the kernel's "no id".
    fn stand_in_for_value(&self, key: &str, value: &str) -> String {
        if self.mode == Mode::Fixture
            && key == "unique_id"
            && let Some(id) = crate::facts::properties::parse_u64(value)
        {
            if id == 0 {
                return value.to_owned();
            }
            let hex = self.ids.borrow_mut().map(&format!("{id:016x}"));
            if let Ok(new) = u64::from_str_radix(&hex, 16) {
                return if value.starts_with("0x") || value.starts_with("0X") {
                    format!("0x{new:x}")
                } else {
                    new.to_string()
                };
            }
        }
        REDACTED.to_owned()
    }
}

/// Pseudonyms for hex strings that keep every prefix relation among the strings seen: each
/// trie node numbers its children in order of appearance, digits as `1…90` and letters as
/// `a…f`, and the case of each character is kept (HIP matches UUIDs case-sensitively).
#[derive(Debug, Clone, Default)]
struct HexTrie {
    edges: HashMap<(usize, u8), (usize, u8)>,
    /// Per node: digits and letters handed out.
    used: Vec<(usize, usize)>,
}

impl HexTrie {
    fn map(&mut self, hex: &str) -> String {
        if self.used.is_empty() {
            self.used.push((0, 0));
        }
        let mut node = 0;
        let mut out = String::with_capacity(hex.len());
        for b in hex.bytes() {
            let folded = b.to_ascii_lowercase();
            let (child, pseudo) = match self.edges.get(&(node, folded)) {
                Some(edge) => *edge,
                None => self.grow(node, folded),
            };
            out.push(char::from(if b.is_ascii_uppercase() {
                pseudo.to_ascii_uppercase()
            } else {
                pseudo
            }));
            node = child;
        }
        out
    }

    /// At most ten digit and six letter children exist per node: the alphabets never run out.
    fn grow(&mut self, node: usize, folded: u8) -> (usize, u8) {
        let (digits, letters) = &mut self.used[node];
        let pseudo = if folded.is_ascii_digit() {
            *digits += 1;
            b"1234567890"[*digits - 1]
        } else {
            *letters += 1;
            b"abcdef"[*letters - 1]
        };
        let child = self.used.len();
        self.used.push((0, 0));
        self.edges.insert((node, folded), (child, pseudo));
        (child, pseudo)
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn human(id: u32) -> bool {
    id >= FIRST_HUMAN_ID && id != OVERFLOW_ID
}

fn numbered(base: &str, n: usize) -> String {
    if n == 1 {
        base.to_owned()
    } else {
        format!("{base}{n}")
    }
}

/// A user or host name worth hiding: a portable name of two characters or more, not only
/// digits (that would hide numbers), not one of [`NOT_IDENTIFYING`].
fn acceptable(name: &str) -> bool {
    (2..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._-".contains(c))
        && !name.starts_with(['.', '-'])
        && !name.chars().all(|c| c.is_ascii_digit())
        && !NOT_IDENTIFYING.contains(&name)
}

/// The `<name>` of each `/home/<name>` in `text`.
fn homes(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("/home/").filter_map(|(i, m)| {
        let tail = &text[i + m.len()..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || "._-".contains(c)))
            .unwrap_or(tail.len());
        Some(&tail[..end]).filter(|n| acceptable(n))
    })
}

/// The `user@host` in the first parenthesis of `/proc/version`.
fn builder(text: &str) -> Option<(&str, &str)> {
    let (a, b) = (text.find('(')?, text.find(')')?);
    (a < b).then_some(())?;
    text[a + 1..b].split_once('@')
}

/// Member lists go (they are user names); so do the names of users' private groups.
fn redact_group(text: &str) -> String {
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            match f.as_slice() {
                [name, pw, gid, ..] => match gid.parse::<u32>() {
                    Ok(g) if g >= FIRST_HUMAN_ID => format!("group{g}:{pw}:{gid}:"),
                    _ => format!("{name}:{pw}:{gid}:"),
                },
                _ => l.to_owned(),
            }
        })
        .collect();
    let mut out = out.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn redact_builder(text: &str) -> String {
    match (text.find('('), text.find(')')) {
        (Some(a), Some(b)) if a < b && text[a..b].contains('@') => {
            format!("{}(user@host{}", &text[..a], &text[b..])
        }
        _ => text.to_owned(),
    }
}

/// `(alice@box)` as `/proc/version` prints it, or a bare `alice@box`, in a report.
fn replace_user_at_host(text: &str) -> String {
    let words: Vec<String> = text
        .split(' ')
        .map(|w| {
            let core = w.trim_matches(|c: char| "()[],;:'\"".contains(c));
            match core.split_once('@') {
                Some((user, host))
                    if !user.is_empty()
                        && !host.is_empty()
                        && user
                            .chars()
                            .chain(host.chars())
                            .all(|c| c.is_alphanumeric() || "-_.".contains(c)) =>
                {
                    w.replace(core, "user@host")
                }
                _ => w.to_owned(),
            }
        })
        .collect();
    words.join(" ")
}

/// Replaces `needle` where it stands alone (no word character on either side).
fn replace_bounded(text: &str, needle: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.match_indices(needle) {
        if i < last {
            continue;
        }
        let before = text[..i].chars().next_back().is_none_or(|c| !is_word(c));
        let after = text[i + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_word(c));
        if before && after {
            out.push_str(&text[last..i]);
            out.push_str(with);
            last = i + needle.len();
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The first place `needle` (ASCII) occurs in `text`, ignoring ASCII case.
fn find_ascii_ci(text: &str, needle: &str) -> Option<usize> {
    let n = needle.len();
    text.as_bytes()
        .windows(n)
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn unescape_html(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(records: &[Record]) -> Redactor {
        let mut r = Redactor::default();
        r.learn_records(records);
        r
    }

    fn env(name: &str, value: &str) -> Record {
        Record::Env {
            name: name.into(),
            value: Some(value.into()),
        }
    }

    fn file(path: &str, text: &str) -> Record {
        Record::File {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn free_text() {
        assert_eq!(
            redact_text("loads /home/alice/venv/lib (alice@box) GPU-1f2e3d4c5b6a7980 ok"),
            "loads /home/user/venv/lib (user@host) GPU-REDACTED ok"
        );
        assert_eq!(
            redact_text("unique_id 1234567890 next"),
            "unique_id REDACTED next"
        );
        assert_eq!(
            redact_text("gfx90a:sramecc+:xnack- at 0000:03:00.0"),
            "gfx90a:sramecc+:xnack- at 0000:03:00.0"
        );
        assert_eq!(
            redact_text("packages@pytorch.org/x"),
            "packages@pytorch.org/x"
        );
    }

    #[test]
    fn uuids_at_the_end_of_a_line_in_lists_and_quotes() {
        for (text, want) in [
            ("uuid GPU-a1ffc9d1799c317f", "uuid GPU-REDACTED"),
            ("- GPU-a1ffc9d1799c317f\n- x", "- GPU-REDACTED\n- x"),
            ("\"GPU-a1ffc9d1799c317f\"", "\"GPU-REDACTED\""),
            (
                "=GPU-a1ff,gpu-B2C3,GPU-XX",
                "=GPU-REDACTED,gpu-REDACTED,GPU-XX",
            ),
            ("GPU-dependent checks", "GPU-dependent checks"),
        ] {
            assert_eq!(redact_text(text), want);
        }
    }

    #[test]
    fn keyed_values_after_any_separator() {
        for text in [
            "unique_id 42",
            "unique_id\t42",
            "unique_id: 42",
            "unique_id=42",
            "serial_number=42",
            "product_number 42",
        ] {
            let out = redact_text(text);
            assert!(
                !out.contains("42") && out.ends_with(REDACTED),
                "{text} → {out}"
            );
        }
        assert_eq!(redact_text("gpu_unique_id 42"), "gpu_unique_id 42");
    }

    #[test]
    fn user_names_from_every_source_everywhere() {
        let r = learned(&[
            env("HOME", "/srv/users/alice"),
            file(
                "/etc/group",
                "render:x:109:bob,syslog\nsyslog:x:110:\ncarol:x:1002:\n",
            ),
            file("/etc/passwd", "dave:x:1003:1003::/export/dave:/bin/sh\n"),
        ]);
        assert_eq!(r.path("/srv/users/alice/.local"), "/srv/users/user/.local");
        for name in ["alice", "bob", "carol", "dave"] {
            let out = r.text(&format!("{name} /x/{name}/y {name}.tar"));
            assert!(!out.contains(name), "{out}");
        }
        // A system account, and a name inside a longer word, stay.
        assert_eq!(r.text("syslog malice alice-x"), "syslog malice alice-x");
    }

    #[test]
    fn host_names_and_the_kernel_builder() {
        let r = learned(&[
            file("/etc/hostname", "box.example.org\n"),
            file(
                "/proc/version",
                "Linux version 6.8 (eve@buildhost) (gcc) #1\n",
            ),
        ]);
        let out = r.text("on box and box.example.org, eve built on buildhost");
        assert_eq!(out, "on host and host, user built on host2");
    }

    #[test]
    fn a_fixture_keeps_uuids_tied_to_unique_ids() {
        let r = Redactor::default().for_fixture();
        let props = r.file(
            "/sys/class/kfd/kfd/topology/nodes/2/properties",
            b"simd_count 4\nunique_id 11673270660693242239\nnum_xcc 1\n",
        );
        let props = String::from_utf8(props).unwrap();
        let id: u64 = props.lines().nth(1).unwrap()[10..].parse().unwrap();
        assert_ne!(id, 11673270660693242239);
        // The same GPU by full UUID, by prefix (ROCr), and a UUID of no GPU.
        let env = r.text("GPU-a1ffc9d1799c317f,GPU-A1FF,GPU-0bad");
        let parts: Vec<&str> = env.split(',').collect();
        assert_eq!(parts[0], format!("GPU-{id:016x}"));
        assert_eq!(parts[1], format!("GPU-{}", &format!("{id:016X}")[..4]));
        assert!(!format!("{id:016x}").starts_with(&parts[2][4..]));
        assert!(!env.contains("a1ff") && !env.contains("0bad"));
        // No id stays no id.
        assert_eq!(r.text("unique_id 0"), "unique_id 0");
    }

    #[test]
    fn binary_files_keep_their_layout() {
        let r = learned(&[env("HOME", "/home/alice")]);
        let bytes = b"\x7fELF\xff/home/alice/lib\0malice\0".to_vec();
        assert_eq!(
            r.file("/opt/x.so", &bytes),
            b"\x7fELF\xff/home/xxxxx/lib\0malice\0"
        );
    }

    #[test]
    fn html_text_only() {
        let r = learned(&[env("HOME", "/home/main")]);
        let page = "<main class=\"main\"><style>main{}</style>main &amp; /home/main</main>";
        assert_eq!(
            r.html(page),
            "<main class=\"main\"><style>main{}</style>user &amp; /home/user</main>"
        );
    }

    #[test]
    fn files_that_are_one_identifier() {
        let r = Redactor::default();
        assert_eq!(r.file("/sys/x/serial_number", b"0xABC\n"), b"REDACTED\n");
        assert_eq!(r.file("/proc/cmdline", b"quiet\n"), b"quiet\n");
        assert_eq!(
            r.file(
                "/etc/group",
                b"render:x:109:alice,bob\nvideo:x:44:\nalice:x:1000:\n"
            ),
            b"render:x:109:\nvideo:x:44:\ngroup1000:x:1000:\n"
        );
        assert_eq!(
            r.file("/proc/version", b"Linux version 6.1 (alice@box) (gcc) #1\n"),
            b"Linux version 6.1 (user@host) (gcc) #1\n"
        );
    }
}
