//! The prose, in English and Simplified Chinese.
//!
//! One catalogue, both languages side by side, compiled into the crate by the build script: each
//! layer's `checks/<layer>/messages.toml` (its title, its rules' titles and explanations, the
//! sentences its checks print) and `i18n/messages/*.toml` (everything else a report, a finding's
//! summary, remedy or evidence is made of). Code names a message with [`msg!`](crate::msg):
//!
//! ```
//! # use rocm_probe::{i18n, msg};
//! let n = 8;
//! let line = i18n::scoped(i18n::Lang::Zh, || msg!("report.summary-gpus", n));
//! assert_eq!(line, "8 个 GPU");
//! ```
//!
//! The language is the calling thread's, set for the length of one call with [`scoped`]
//! (English otherwise), the way a locale is: checks and describers need no language parameter,
//! and a report built in Chinese has its prose fields — and only those — in Chinese. `--lang`
//! picks it; the default comes from the locale (`LC_ALL`, then `LC_MESSAGES`, then `LANG`). Ids,
//! statuses and values stay as they are in every language.
//!
//! A test fails when any rule, layer or message lacks either language, when the two languages of
//! a message disagree on placeholders, when code names a message the catalogue lacks, or when the
//! catalogue holds one nothing names.

use std::cell::Cell;
use std::fmt::{self, Display, Write as _};

/// A language of the prose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lang {
    /// English.
    #[default]
    En = 0,
    /// Simplified Chinese.
    Zh = 1,
}

impl Lang {
    /// The language a locale names: `zh_CN.UTF-8`, `zh-Hans`, `zh` → Chinese; anything else
    /// (`C`, `POSIX`, `en_US.UTF-8`, empty) → English.
    pub fn from_locale(locale: &str) -> Self {
        let l = locale.trim().to_ascii_lowercase();
        if l.starts_with("zh") {
            Self::Zh
        } else {
            Self::En
        }
    }

    /// The language of the environment: the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that is
    /// set and not empty (POSIX's order of precedence for messages).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|k| get(k).filter(|v| !v.is_empty()))
            .map_or(Self::En, |v| Self::from_locale(&v))
    }
}

#[cfg(test)]
mod catalogue;

include!(concat!(env!("OUT_DIR"), "/messages.rs"));

thread_local! {
    static CURRENT: Cell<Lang> = const { Cell::new(Lang::En) };
}

/// The calling thread's language: English unless inside [`scoped`].
pub fn current() -> Lang {
    CURRENT.with(Cell::get)
}

/// Runs `f` with `lang` as the calling thread's language, restoring the previous one after, also
/// when `f` unwinds.
pub fn scoped<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    struct Restore(Lang);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(lang)));
    f()
}

/// A message's template in `lang`, or `None` for a key the catalogue lacks.
pub fn template(key: &str, lang: Lang) -> Option<&'static str> {
    let i = MESSAGES.binary_search_by(|(k, _, _)| (*k).cmp(key)).ok()?;
    let (_, en, zh) = MESSAGES[i];
    Some(match lang {
        Lang::En => en,
        Lang::Zh => zh,
    })
}

/// The message `key` in the current language with its `{placeholders}` filled from `args`.
/// Use [`msg!`](crate::msg) rather than calling this. A key or argument the catalogue does not know is a bug
/// caught by the tests (debug builds assert); a release build shows the key or the placeholder
/// rather than stop a probe over a sentence.
pub fn text(key: &str, args: &[(&str, &dyn Display)]) -> String {
    let Some(template) = template(key, current()) else {
        debug_assert!(false, "message {key} is not in the catalogue");
        return key.to_owned();
    };
    fill(key, template, args)
}

fn fill(key: &str, template: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 16 * args.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let brace = rest.as_bytes()[i];
        rest = &rest[i + 1..];
        if rest.as_bytes().first() == Some(&brace) {
            out.push(char::from(brace));
            rest = &rest[1..];
            continue;
        }
        if brace == b'}' {
            out.push('}');
            continue;
        }
        let Some(end) = rest.find('}') else {
            out.push('{');
            continue;
        };
        let name = &rest[..end];
        rest = &rest[end + 1..];
        match args.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => {
                let _ = write!(out, "{value}");
            }
            None => {
                debug_assert!(false, "message {key}: no value for {{{name}}}");
                let _ = write!(out, "{{{name}}}");
            }
        }
    }
    out.push_str(rest);
    debug_assert!(
        args.iter()
            .all(|(n, _)| template.contains(&format!("{{{n}}}"))),
        "message {key}: an argument its template does not use"
    );
    out
}

/// A sentence kept as data until it is shown: a catalogue key and its values. Facts hold these
/// instead of prose (a problem's message, a read error), so that what a collector found does
/// not depend on the language it ran in; the sentence is made, in the current language, when it
/// is displayed. Make one with [`text!`](crate::text).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Text {
    key: &'static str,
    args: Vec<(&'static str, Arg)>,
}

/// A value in a [`Text`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Arg {
    /// A value shown as it is: a path, a number, a quoted input.
    Value(String),
    /// Another sentence, made in the same language.
    Text(Text),
    /// A system error, shown as [`os_error`] does.
    Os(OsError),
}

/// A system error as data: its number or kind, and the system's own message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OsError {
    code: Option<i32>,
    kind: std::io::ErrorKind,
    message: String,
}

impl From<&std::io::Error> for OsError {
    fn from(e: &std::io::Error) -> Self {
        Self {
            code: e.raw_os_error(),
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if current() == Lang::En {
            return f.write_str(&self.message);
        }
        let translated = match self.code {
            Some(code) => errno_text(code),
            None => kind_text(self.kind),
        };
        f.write_str(translated.as_deref().unwrap_or(&self.message))
    }
}

impl Text {
    /// The sentence `key` with its values; use [`text!`](crate::text).
    pub fn new(key: &'static str, args: Vec<(&'static str, Arg)>) -> Self {
        Self { key, args }
    }

    /// Its catalogue key.
    pub fn key(&self) -> &'static str {
        self.key
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values: Vec<String> = self.args.iter().map(|(_, a)| a.to_string()).collect();
        let args: Vec<(&str, &dyn Display)> = self
            .args
            .iter()
            .zip(&values)
            .map(|((name, _), v)| (*name, v as &dyn Display))
            .collect();
        f.write_str(&text(self.key, &args))
    }
}

impl serde::Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Value(v) => f.write_str(v),
            Arg::Text(t) => t.fmt(f),
            Arg::Os(e) => e.fmt(f),
        }
    }
}

impl From<Text> for Arg {
    fn from(t: Text) -> Self {
        Arg::Text(t)
    }
}

impl From<OsError> for Arg {
    fn from(e: OsError) -> Self {
        Arg::Os(e)
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Value(v)
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Value(v.clone())
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Value(v.to_owned())
    }
}

macro_rules! arg_from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(v: $t) -> Self {
                Arg::Value(v.to_string())
            }
        }
    )*};
}
arg_from_number!(
    u8, u16, u32, u64, usize, i32, i64, &u8, &u16, &u32, &u64, &usize, &i32, &i64
);

/// A system error in the current language: in English the system's own message, as `{e}`
/// prints it; in Chinese the catalogue's, for the errors a probe meets (a missing file, a
/// refused permission …), with the error number kept. Others stay as the system says them.
pub fn os_error(e: &std::io::Error) -> String {
    if current() == Lang::En {
        return e.to_string();
    }
    let translated = match e.raw_os_error() {
        Some(code) => errno_text(code),
        None if e.get_ref().is_none() => kind_text(e.kind()),
        None => None,
    };
    translated.unwrap_or_else(|| e.to_string())
}

fn errno_text(code: i32) -> Option<String> {
    Some(match code {
        libc::ENOENT => crate::msg!("io.os.enoent", code),
        libc::EACCES => crate::msg!("io.os.eacces", code),
        libc::EPERM => crate::msg!("io.os.eperm", code),
        libc::ENOTDIR => crate::msg!("io.os.enotdir", code),
        libc::EISDIR => crate::msg!("io.os.eisdir", code),
        libc::ELOOP => crate::msg!("io.os.eloop", code),
        libc::EEXIST => crate::msg!("io.os.eexist", code),
        libc::ENOSPC => crate::msg!("io.os.enospc", code),
        libc::EROFS => crate::msg!("io.os.erofs", code),
        libc::EIO => crate::msg!("io.os.eio", code),
        libc::ENAMETOOLONG => crate::msg!("io.os.enametoolong", code),
        libc::ENXIO => crate::msg!("io.os.enxio", code),
        libc::ENODEV => crate::msg!("io.os.enodev", code),
        libc::EINVAL => crate::msg!("io.os.einval", code),
        _ => return None,
    })
}

/// An error made from a kind alone (`io::Error::from(ErrorKind::IsADirectory)`).
fn kind_text(kind: std::io::ErrorKind) -> Option<String> {
    use std::io::ErrorKind as K;
    Some(match kind {
        K::IsADirectory => crate::msg!("io.kind.is-a-directory"),
        K::NotADirectory => crate::msg!("io.kind.not-a-directory"),
        K::NotFound => crate::msg!("io.kind.not-found"),
        K::PermissionDenied => crate::msg!("io.kind.permission-denied"),
        _ => return None,
    })
}

/// Levenshtein distance over characters: how far a mistyped name (a finding id, a processor)
/// is from a known one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The known names closest to `word`, for a "did you mean": those at the smallest distance and
/// the next, nearest first (among equals, the longest common prefix first — `gfx902` before
/// `gfx600` for `gfx9000` —, then `known`'s order), at most `max` of them, none further than a
/// third of `word`'s length (rounded up): a name that far off is another kind of name, and a
/// guess would mislead.
pub fn nearest<'a>(
    word: &str,
    known: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let limit = word.chars().count().div_ceil(3);
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .map(|k| (edit_distance(word, k), k))
        .filter(|(d, _)| *d <= limit)
        .collect();
    let prefix = |k: &str| {
        word.chars()
            .zip(k.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    scored.sort_by_key(|(d, k)| (*d, std::cmp::Reverse(prefix(k))));
    let best = scored.first().map_or(0, |(d, _)| *d);
    scored
        .into_iter()
        .take_while(|(d, _)| *d <= best + 1)
        .take(max)
        .map(|(_, k)| k)
        .collect()
}

/// A list in the current language: `a, b, c` in English, `a、b、c` in Chinese.
pub fn list<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let sep = match current() {
        Lang::En => ", ",
        Lang::Zh => "、",
    };
    join(items, sep)
}

/// Items joined with `sep`.
pub fn join<T: Display>(items: impl IntoIterator<Item = T>, sep: &str) -> String {
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let _ = write!(out, "{item}");
    }
    out
}

/// The message `key` in the current language, its placeholders filled by name:
/// `msg!("thunk.shared", name = lib, dir)` (a bare name is shorthand for `dir = dir`).
#[macro_export]
macro_rules! msg {
    (@value $name:ident) => { $name };
    (@value $name:ident = $value:expr) => { $value };
    ($key:literal $(, $name:ident $(= $value:expr)?)* $(,)?) => {
        $crate::i18n::text(
            $key,
            &[$((stringify!($name), &$crate::msg!(@value $name $(= $value)?) as &dyn ::std::fmt::Display)),*],
        )
    };
}

/// A [`Text`]: the sentence `key` kept as data, made in the language current when it is shown.
/// Arguments as for [`msg!`](crate::msg); each value converts into an [`Arg`] (strings, numbers, a nested
/// [`Text`], an [`OsError`]).
#[macro_export]
macro_rules! text {
    ($key:literal $(, $name:ident $(= $value:expr)?)* $(,)?) => {
        $crate::i18n::Text::new(
            $key,
            vec![$((stringify!($name), $crate::i18n::Arg::from($crate::msg!(@value $name $(= $value)?))),)*],
        )
    };
}

/// A rule's title and explanation in `lang`, by finding id (its layer's `[rules."ID"]`).
pub fn rule_text(id: &str, lang: Lang) -> Option<(&'static str, &'static str)> {
    let i = RULE_TEXTS.binary_search_by(|(k, _, _)| (*k).cmp(id)).ok()?;
    let (_, title, explain) = &RULE_TEXTS[i];
    let l = lang as usize;
    Some((title[l], explain[l]))
}

/// A layer's title in `lang`, by layer id (its `[layer]`).
pub fn layer_title(id: &str, lang: Lang) -> Option<&'static str> {
    let i = LAYER_TITLES.binary_search_by(|(k, _)| (*k).cmp(id)).ok()?;
    Some(LAYER_TITLES[i].1[lang as usize])
}

/// A status word in `lang`, by status id (`pass` → `PASS`, `通过`).
pub fn status_word(id: &str, lang: Lang) -> Option<&'static str> {
    match id {
        "skip" => template("status.skip", lang),
        "pass" => template("status.pass", lang),
        "info" => template("status.info", lang),
        "warn" => template("status.warn", lang),
        "fail" => template("status.fail", lang),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Layer, rule_explain, rule_title, rules};

    #[test]
    fn nearest_names_are_close_ones_only() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        let known = ["gfx900", "gfx902", "gfx90a", "gfx1100", "gfx942"];
        assert_eq!(nearest("gfx9000", known, 3), ["gfx900", "gfx902", "gfx90a"]);
        assert_eq!(nearest("gfx1101", known, 3), ["gfx1100"]);
        // Another vendor's name is not a typo of one of ours.
        assert!(nearest("sm_80", known, 3).is_empty());
        assert!(nearest("", known, 3).is_empty());
    }

    /// The build script refuses a broken rule text or layer title: the same parser, fed broken
    /// files.
    #[test]
    fn a_broken_rule_text_is_refused() {
        use super::catalogue::parse_file;
        let good = "[layer]\nen = \"hardware\"\nzh = \"硬件\"\n\
                    [rules.\"a.b\"]\ntitle.en = \"Title\"\ntitle.zh = \"标题\"\n\
                    explain.en = \"Why {braces} stay\"\nexplain.zh = \"说明\"\n";
        let file = parse_file("t", good).unwrap();
        assert_eq!(file.rules.len(), 1);
        assert_eq!(file.rules[0].explain.0, "Why {braces} stay");
        assert_eq!(file.layer, Some(("hardware".into(), "硬件".into())));
        for bad in [
            "[rules.\"a.b\"]\ntitle.en = \"Title\"\ntitle.zh = \"标题\"\n",
            "[rules.\"a.b\"]\ntitle.en = \"Title\"\ntitle.zh = \"title\"\n\
             explain.en = \"Why\"\nexplain.zh = \"说明\"\n",
            "[rules.\"a.b\"]\ntitle.en = \"标题\"\ntitle.zh = \"标题\"\n\
             explain.en = \"Why\"\nexplain.zh = \"说明\"\n",
            "[rules.\"a.b\"]\ntitle.en = \"T\"\ntitle.zh = \"标题\"\nextra.en = \"x\"\n",
            "[layer]\nen = \"hardware\"\n",
            "[rules.\"a.b\"\ntitle = ",
        ] {
            assert!(parse_file("t", bad).is_err(), "{bad}");
        }
        let rules_rs =
            "declare_rules! {\n    T;\n    /// doc\n    A_B = \"a.b\", Hardware, Fail;\n}\n";
        assert_eq!(catalogue::declared_ids(rules_rs), ["a.b"]);
    }

    /// Every rule and layer has its texts in both languages, every status its word, and the
    /// catalogue has no rule text for an undeclared id.
    #[test]
    fn every_rule_and_layer_has_both_languages() {
        for r in rules() {
            for lang in [Lang::En, Lang::Zh] {
                let (title, explain) = rule_text(r.id, lang).unwrap_or_else(|| panic!("{}", r.id));
                assert!(
                    !title.trim().is_empty() && !explain.trim().is_empty(),
                    "{}",
                    r.id
                );
            }
        }
        let ids: Vec<&str> = rules().iter().map(|r| r.id).collect();
        let unknown: Vec<&str> = RULE_TEXTS
            .iter()
            .map(|(id, _, _)| *id)
            .filter(|k| !ids.contains(k))
            .collect();
        assert!(unknown.is_empty(), "catalogue ids no rule has: {unknown:?}");
        for l in Layer::ALL {
            assert!(layer_title(l.id(), Lang::Zh).is_some(), "{l}");
        }
        for s in ["skip", "pass", "info", "warn", "fail"] {
            assert!(status_word(s, Lang::Zh).is_some(), "{s}");
        }
    }

    /// Chinese texts carry Chinese, English texts none.
    #[test]
    fn each_language_is_itself() {
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        for r in rules() {
            assert!(
                !cjk(rule_title(r, Lang::En)) && !cjk(rule_explain(r, Lang::En)),
                "{}",
                r.id
            );
            assert!(cjk(rule_title(r, Lang::Zh)), "{}: title", r.id);
            assert!(cjk(rule_explain(r, Lang::Zh)), "{}: explain", r.id);
        }
    }

    fn message_files() -> Vec<(String, String)> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let layers = std::fs::read_dir(src.join("checks"))
            .unwrap()
            .map(|e| e.unwrap().path().join("messages.toml"))
            .filter(|p| p.is_file());
        let mut files: Vec<_> = std::fs::read_dir(src.join("i18n/messages"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .chain(layers)
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    }

    /// The build script refuses a broken catalogue; this says the same in a test, so that a
    /// message lacking a language fails `cargo test` with the message's key.
    #[test]
    fn every_message_has_both_languages_with_the_same_placeholders() {
        let mut all = Vec::new();
        for (name, text) in message_files() {
            let file = catalogue::parse_file(&name, &text).unwrap_or_else(|e| panic!("{e}"));
            all.extend(file.messages);
        }
        let problems = catalogue::check(&all);
        assert!(problems.is_empty(), "{problems:#?}");
        assert_eq!(all.len(), MESSAGES.len(), "the compiled table is the files");
        assert!(MESSAGES.is_sorted_by(|a, b| a.0 < b.0));
        let broken = [
            ("x.toml", "[a]\nen = \"only English\"\n"),
            ("x.toml", "[a]\nen = \"{n} found\"\nzh = \"找到 {m}\"\n"),
            ("x.toml", "[a]\nen = \"found\"\nzh = \"found\"\n"),
        ];
        for (name, text) in broken {
            let parsed = catalogue::parse_file(name, text).map(|f| f.messages);
            assert!(
                parsed.is_err() || !catalogue::check(&parsed.unwrap()).is_empty(),
                "{text}"
            );
        }
    }

    /// Every key code names is in the catalogue, and every catalogue key is named by code: the
    /// keys are read from the sources of this crate, the CLI and the Python module.
    #[test]
    fn code_and_catalogue_name_the_same_messages() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut used = std::collections::BTreeSet::new();
        let mut stack = vec![
            root.join("rocm-probe/src"),
            root.join("rocm-probe-cli/src"),
            root.join("rocm-probe-py/src"),
        ];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let key = |part: &str| {
                        let rest = part.trim_start().strip_prefix('"')?;
                        let key = &rest[..rest.find('"')?];
                        let plain = key.chars().all(|c| {
                            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-'
                        });
                        (plain && key.contains('.')).then(|| key.to_owned())
                    };
                    for call in ["msg!(", "text!(", "i18n::text(", "template("] {
                        used.extend(text.split(call).skip(1).filter_map(key));
                    }
                }
            }
        }
        // Messages named by data rows: data/environment.toml's `message = "x"` is
        // `libraries.env-x` (build.rs checks the other direction).
        let environment =
            std::fs::read_to_string(root.join("rocm-probe/data/environment.toml")).unwrap();
        used.extend(environment.lines().filter_map(|l| {
            let v = l.trim().strip_prefix("message = \"")?.strip_suffix('"')?;
            Some(format!("libraries.env-{v}"))
        }));
        let known: std::collections::BTreeSet<String> =
            MESSAGES.iter().map(|m| m.0.to_owned()).collect();
        let missing: Vec<_> = used.difference(&known).collect();
        let unused: Vec<_> = known.difference(&used).collect();
        assert!(
            missing.is_empty(),
            "named in code, not in the catalogue: {missing:?}"
        );
        assert!(
            unused.is_empty(),
            "in the catalogue, named by no code: {unused:?}"
        );
    }

    #[test]
    fn messages_fill_by_name_in_the_current_language() {
        let (gpus, agents) = (8, 64);
        let en = msg!("report.summary-pass", gpus, agents);
        assert_eq!(en, "8, 64");
        let zh = scoped(Lang::Zh, || msg!("report.summary-pass", gpus, agents));
        assert_eq!(zh, "8，64");
        assert_eq!(current(), Lang::En, "restored after the scope");
        assert_eq!(scoped(Lang::Zh, || list(["a", "b"])), "a、b");
        assert_eq!(fill("k", "{{literal}} {x}", &[("x", &1)]), "{literal} 1");
    }

    /// English keeps the system's words; Chinese has its own, the error number kept.
    #[test]
    fn system_errors_in_both_languages() {
        let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(os_error(&enoent), enoent.to_string());
        assert_eq!(
            scoped(Lang::Zh, || os_error(&enoent)),
            "文件或目录不存在（系统错误 2）"
        );
        let dir = std::io::Error::from(std::io::ErrorKind::IsADirectory);
        assert_eq!(scoped(Lang::Zh, || os_error(&dir)), "是目录");
        let own = std::io::Error::other("已是中文");
        assert_eq!(scoped(Lang::Zh, || os_error(&own)), "已是中文");
    }

    #[test]
    fn locales() {
        assert_eq!(Lang::from_locale("zh_CN.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("zh_TW"), Lang::Zh);
        assert_eq!(Lang::from_locale("en_US.UTF-8"), Lang::En);
        assert_eq!(Lang::from_locale("C"), Lang::En);
        let env = |k: &str| match k {
            "LC_ALL" => Some(String::new()),
            "LC_MESSAGES" => Some("zh_CN.UTF-8".to_owned()),
            "LANG" => Some("en_US.UTF-8".to_owned()),
            _ => None,
        };
        assert_eq!(Lang::from_env(env), Lang::Zh);
        assert_eq!(Lang::from_env(|_| None), Lang::En);
    }
}
