//! The prose catalogue: English lives beside the code that uses it (the rule table's titles and
//! explanations, `Layer::title`); Simplified Chinese lives in `zh/*.toml`, keyed by the same ids.
//! `--lang` picks one; the default comes from the locale (`LC_ALL`, then `LC_MESSAGES`, then
//! `LANG`). JSON stays language-neutral: ids, not prose.
//!
//! A test fails when any rule or layer lacks its Chinese text, or when the catalogue holds an id
//! no rule has.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::finding::{Layer, Rule, Status};

/// A language of the prose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
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

#[derive(Debug, Deserialize)]
struct Entry {
    title: String,
    explain: String,
}

#[derive(Debug, Default, Deserialize)]
struct Frame {
    #[serde(default)]
    layers: BTreeMap<String, String>,
    #[serde(default)]
    status: BTreeMap<String, String>,
    #[serde(default)]
    ui: BTreeMap<String, String>,
}

/// The Chinese catalogue, parsed once.
struct Catalogue {
    rules: BTreeMap<String, Entry>,
    frame: Frame,
}

const ZH_RULE_FILES: [&str; 3] = [
    include_str!("zh/a.toml"),
    include_str!("zh/b.toml"),
    include_str!("zh/c.toml"),
];

static ZH: LazyLock<Catalogue> = LazyLock::new(|| {
    let mut rules = BTreeMap::new();
    for text in ZH_RULE_FILES {
        // The files are part of the build and checked by tests; a broken one leaves its
        // entries out (English is shown) rather than stopping the probe.
        if let Ok(part) = toml::from_str::<BTreeMap<String, Entry>>(text) {
            rules.extend(part);
        }
    }
    let frame = toml::from_str(include_str!("zh/layers.toml")).unwrap_or_default();
    Catalogue { rules, frame }
});

/// A rule's title in `lang` (English when the catalogue lacks it).
pub fn rule_title(rule: &Rule, lang: Lang) -> &'static str {
    match lang {
        Lang::En => rule.title,
        Lang::Zh => ZH
            .rules
            .get(rule.id)
            .map_or(rule.title, |e| e.title.as_str()),
    }
}

/// A rule's explanation in `lang`.
pub fn rule_explain(rule: &Rule, lang: Lang) -> &'static str {
    match lang {
        Lang::En => rule.explain,
        Lang::Zh => ZH
            .rules
            .get(rule.id)
            .map_or(rule.explain, |e| e.explain.as_str()),
    }
}

/// A layer's title in `lang`.
pub fn layer_title(layer: Layer, lang: Lang) -> &'static str {
    match lang {
        Lang::En => layer.title(),
        Lang::Zh => ZH
            .frame
            .layers
            .get(layer.id())
            .map_or(layer.title(), String::as_str),
    }
}

/// A status word in `lang` (`PASS`, `通过`).
pub fn status_word(status: Status, lang: Lang) -> &'static str {
    let key = match status {
        Status::Skip => "skip",
        Status::Pass => "pass",
        Status::Info => "info",
        Status::Warn => "warn",
        Status::Fail => "fail",
    };
    match lang {
        Lang::En => status.word(),
        Lang::Zh => ZH
            .frame
            .status
            .get(key)
            .map_or(status.word(), String::as_str),
    }
}

/// A sentence of the output's frame in `lang`, with `{name}` placeholders filled.
pub fn ui(key: &str, lang: Lang, english: &'static str, args: &[(&str, &str)]) -> String {
    let template = match lang {
        Lang::En => english,
        Lang::Zh => ZH.frame.ui.get(key).map_or(english, String::as_str),
    };
    let mut out = template.to_owned();
    for (k, v) in args {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::rules;

    #[test]
    fn every_catalogue_file_parses() {
        for (i, text) in ZH_RULE_FILES.iter().enumerate() {
            toml::from_str::<BTreeMap<String, Entry>>(text)
                .unwrap_or_else(|e| panic!("zh file {i}: {e}"));
        }
        toml::from_str::<Frame>(include_str!("zh/layers.toml")).unwrap();
    }

    /// Every rule, layer and status has its Chinese text, and the catalogue has nothing else.
    #[test]
    fn every_message_exists_in_both_languages() {
        let mut missing = Vec::new();
        for r in rules() {
            match ZH.rules.get(r.id) {
                Some(e) if !e.title.trim().is_empty() && !e.explain.trim().is_empty() => {}
                _ => missing.push(r.id),
            }
            assert!(!r.title.is_empty() && !r.explain.is_empty(), "{}", r.id);
        }
        assert!(missing.is_empty(), "no Chinese text for {missing:?}");
        let ids: Vec<&str> = rules().iter().map(|r| r.id).collect();
        let unknown: Vec<&String> = ZH
            .rules
            .keys()
            .filter(|k| !ids.contains(&k.as_str()))
            .collect();
        assert!(unknown.is_empty(), "catalogue ids no rule has: {unknown:?}");
        for l in Layer::ALL {
            assert!(ZH.frame.layers.contains_key(l.id()), "{l}");
        }
        for s in ["skip", "pass", "info", "warn", "fail"] {
            assert!(ZH.frame.status.contains_key(s), "{s}");
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
            if ZH.rules.contains_key(r.id) {
                assert!(cjk(rule_title(r, Lang::Zh)), "{}: title", r.id);
                assert!(cjk(rule_explain(r, Lang::Zh)), "{}: explain", r.id);
            }
        }
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
