//! The message catalogue's files: parsed and checked here, by the build script (which turns them
//! into a sorted table compiled into the crate) and by the crate's own tests. Depends on `toml`
//! and std only, because the build script includes this file as a module.
//!
//! A file under `i18n/messages/` holds tables; a table with an `en` key is one message, its key
//! the dotted path of table names (`[thunk.shared]` → `thunk.shared`):
//!
//! ```toml
//! [thunk.shared]
//! en = "ROCr loads the shared thunk {name} from {dir}"
//! zh = "ROCr 从 {dir} 加载共享的 thunk {name}"
//! ```
//!
//! Both languages are required, with the same `{placeholders}`; `{{` and `}}` are literal braces.

use std::collections::BTreeSet;

/// One message: its key and both texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Dotted key, as `msg!` names it.
    pub key: String,
    /// English template.
    pub en: String,
    /// Simplified Chinese template.
    pub zh: String,
}

/// Parses one file's text; `name` is used in errors only.
pub fn parse(name: &str, text: &str) -> Result<Vec<Message>, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{name}: {e}"))?;
    let mut out = Vec::new();
    walk(name, "", &table, &mut out)?;
    Ok(out)
}

fn walk(
    name: &str,
    prefix: &str,
    table: &toml::Table,
    out: &mut Vec<Message>,
) -> Result<(), String> {
    if table.contains_key("en") {
        let text = |lang: &str| match table.get(lang) {
            Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(_) => Err(format!("{name}: {prefix}.{lang} is not a non-empty string")),
            None => Err(format!("{name}: {prefix} lacks its `{lang}` text")),
        };
        let (en, zh) = (text("en")?, text("zh")?);
        if let Some(extra) = table.keys().find(|k| *k != "en" && *k != "zh") {
            return Err(format!("{name}: {prefix} has an unknown key `{extra}`"));
        }
        out.push(Message {
            key: prefix.to_owned(),
            en,
            zh,
        });
        return Ok(());
    }
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => walk(name, &key, t, out)?,
            _ => return Err(format!("{name}: {key} is neither a message nor a group")),
        }
    }
    Ok(())
}

/// The `{name}` placeholders of a template, or why it is malformed.
pub fn placeholders(template: &str) -> Result<BTreeSet<String>, String> {
    let mut names = BTreeSet::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("bad placeholder {{{name}}}"));
                }
                names.insert(name);
            }
            '}' => return Err("unpaired }".to_owned()),
            _ => {}
        }
    }
    Ok(names)
}

/// Checks a whole catalogue: unique keys, both texts present, the same placeholders in both,
/// and Chinese text not simply left in English. Returns every problem, not just the first.
pub fn check(messages: &[Message]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for m in messages {
        if !seen.insert(m.key.as_str()) {
            problems.push(format!("{}: declared twice", m.key));
        }
        match (placeholders(&m.en), placeholders(&m.zh)) {
            (Ok(en), Ok(zh)) if en != zh => problems.push(format!(
                "{}: placeholders differ: en {en:?}, zh {zh:?}",
                m.key
            )),
            (Err(e), _) => problems.push(format!("{}: en: {e}", m.key)),
            (_, Err(e)) => problems.push(format!("{}: zh: {e}", m.key)),
            _ => {}
        }
        if is_cjk_text(&m.en) {
            problems.push(format!("{}: the English text has Chinese in it", m.key));
        }
        // A Chinese text may be all placeholders and punctuation ("{a}，{b}"); one with English
        // words of its own but no Chinese was left untranslated.
        if !is_cjk_text(&m.zh) && has_prose_word(&m.zh) {
            problems.push(format!("{}: the Chinese text has no Chinese in it", m.key));
        }
    }
    problems
}

/// Whether `s` has a CJK ideograph or CJK punctuation.
pub fn is_cjk_text(s: &str) -> bool {
    s.chars().any(|c| {
        ('\u{4e00}'..='\u{9fff}').contains(&c)
            || ('\u{3000}'..='\u{303f}').contains(&c)
            || ('\u{ff00}'..='\u{ffef}').contains(&c)
    })
}

/// Whether a template has a lower-case English word of four or more letters outside its
/// placeholders and backticks (commands are code, not prose).
fn has_prose_word(template: &str) -> bool {
    let mut plain = String::new();
    let (mut brace, mut tick) = (false, false);
    for c in template.chars() {
        match c {
            '{' => brace = true,
            '}' => brace = false,
            '`' => tick = !tick,
            _ if !brace && !tick => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| w.len() >= 4 && w.chars().all(|c| c.is_ascii_lowercase()))
}

/// A rule's Chinese title and explanation (`zh/{a,b,c}.toml`, keyed by rule id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleText {
    /// The finding id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its explanation.
    pub explain: String,
}

/// Parses one `zh/*.toml` rule file: tables named by rule id, each with exactly a non-empty
/// `title` and `explain` in Chinese.
pub fn parse_rules(name: &str, text: &str) -> Result<Vec<RuleText>, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{name}: {e}"))?;
    let mut out = Vec::with_capacity(table.len());
    for (id, entry) in table {
        let Some(entry) = entry.as_table() else {
            return Err(format!("{name}: {id} is not a table"));
        };
        let text = |key: &str| -> Result<String, String> {
            let v = entry
                .get(key)
                .and_then(toml::Value::as_str)
                .ok_or_else(|| format!("{name}: {id} has no {key} string"))?;
            if !is_cjk_text(v) {
                return Err(format!("{name}: {id}.{key} is not Chinese"));
            }
            Ok(v.to_owned())
        };
        if let Some(other) = entry.keys().find(|k| *k != "title" && *k != "explain") {
            return Err(format!("{name}: {id} has an unknown key {other}"));
        }
        out.push(RuleText {
            title: text("title")?,
            explain: text("explain")?,
            id,
        });
    }
    Ok(out)
}

/// One table of `zh/layers.toml`: its name and its (key, Chinese) pairs.
pub type FrameSection = (String, Vec<(String, String)>);

/// The words around the findings (`zh/layers.toml`): `[layers]` and `[status]`, each a table of
/// strings, nothing else (every sentence is a message in `messages/`).
pub fn parse_frame(name: &str, text: &str) -> Result<Vec<FrameSection>, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{name}: {e}"))?;
    let mut out = Vec::new();
    for section in ["layers", "status"] {
        let Some(t) = table.get(section).and_then(toml::Value::as_table) else {
            return Err(format!("{name}: no [{section}] table"));
        };
        let mut entries = Vec::with_capacity(t.len());
        for (k, v) in t {
            let Some(v) = v.as_str().filter(|v| is_cjk_text(v)) else {
                return Err(format!("{name}: {section}.{k} is not a Chinese string"));
            };
            entries.push((k.clone(), v.to_owned()));
        }
        out.push((section.to_owned(), entries));
    }
    if let Some(other) = table
        .keys()
        .find(|k| !["layers", "status"].contains(&k.as_str()))
    {
        return Err(format!("{name}: unknown table [{other}]"));
    }
    Ok(out)
}
