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

/// A rule's title and explanation in both languages: the `[rules."ID"]` tables of a layer's
/// catalogue file (`checks/<layer>/messages.toml`). They are prose, not templates: braces are
/// literal (`/sys/…/{vendor,class}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleText {
    /// The finding id.
    pub id: String,
    /// Its title: English, Chinese.
    pub title: (String, String),
    /// Its explanation: English, Chinese.
    pub explain: (String, String),
}

/// Everything one catalogue file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct File {
    /// Its messages (templates).
    pub messages: Vec<Message>,
    /// Its rules' texts (`[rules."ID"]`), in file order.
    pub rules: Vec<RuleText>,
    /// A layer's title (`[layer]`, English and Chinese), in a layer's file.
    pub layer: Option<(String, String)>,
}

/// Parses one catalogue file: messages, and in a layer's file its `[layer]` title and the
/// `[rules."ID"]` texts, each with exactly `title.en`, `title.zh`, `explain.en`, `explain.zh`.
pub fn parse_file(name: &str, text: &str) -> Result<File, String> {
    let mut table: toml::Table = text.parse().map_err(|e| format!("{name}: {e}"))?;
    let mut file = File::default();
    if let Some(layer) = table.remove("layer") {
        let Some(layer) = layer.as_table() else {
            return Err(format!("{name}: [layer] is not a table"));
        };
        file.layer = Some(pair(name, "layer", layer)?);
    }
    if let Some(rules) = table.remove("rules") {
        let Some(rules) = rules.as_table() else {
            return Err(format!("{name}: [rules] is not a table"));
        };
        for (id, entry) in rules {
            let Some(entry) = entry.as_table() else {
                return Err(format!("{name}: rules.{id} is not a table"));
            };
            if let Some(other) = entry.keys().find(|k| *k != "title" && *k != "explain") {
                return Err(format!("{name}: rules.{id} has an unknown key {other}"));
            }
            let part = |key: &str| match entry.get(key).and_then(toml::Value::as_table) {
                Some(t) => pair(name, &format!("rules.{id}.{key}"), t),
                None => Err(format!("{name}: rules.{id} has no {key}.en / {key}.zh")),
            };
            file.rules.push(RuleText {
                id: id.clone(),
                title: part("title")?,
                explain: part("explain")?,
            });
        }
    }
    walk(name, "", &table, &mut file.messages)?;
    Ok(file)
}

/// An `en` / `zh` pair of prose (not templates): both present, non-empty, each in its language.
fn pair(name: &str, what: &str, t: &toml::Table) -> Result<(String, String), String> {
    if let Some(other) = t.keys().find(|k| *k != "en" && *k != "zh") {
        return Err(format!("{name}: {what} has an unknown key `{other}`"));
    }
    let text = |lang: &str| match t.get(lang).and_then(toml::Value::as_str) {
        Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
        _ => Err(format!("{name}: {what} has no non-empty `{lang}` string")),
    };
    let (en, zh) = (text("en")?, text("zh")?);
    if is_cjk_text(&en) {
        return Err(format!("{name}: {what}.en has Chinese in it"));
    }
    if !is_cjk_text(&zh) {
        return Err(format!("{name}: {what}.zh is not Chinese"));
    }
    Ok((en, zh))
}

/// The finding ids a layer's `rules.rs` declares: each `NAME = "id", Layer, Status;` line of its
/// `declare_rules!` blocks. The build script compares them with the catalogue, so a rule without
/// its texts, or texts without a rule, stop the build.
pub fn declared_ids(rules_rs: &str) -> Vec<String> {
    rules_rs
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" = \"")?;
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return None;
            }
            let (id, rest) = rest.split_once('"')?;
            rest.starts_with(", ").then(|| id.to_owned())
        })
        .collect()
}
