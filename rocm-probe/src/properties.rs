//! The KFD `properties` format: one `key value` pair per line, values decimal unsigned.
//!
//! Parsed into a map first so that key order never matters (three key generations exist), then
//! into typed structs where every key is optional and unknown numeric keys are kept.

use std::collections::BTreeMap;

/// One `properties` file as key/value text, with what could not be parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawProperties {
    values: BTreeMap<String, String>,
    /// Problems found while parsing, without the path (the collector adds it).
    pub problems: Vec<String>,
}

impl RawProperties {
    /// Parses `key value` lines. Blank lines are skipped; a key without a value (a truncated
    /// file), extra words, and duplicate keys are problems; the first value of a key wins.
    pub fn parse(text: &str) -> Self {
        let mut raw = Self::default();
        for (i, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            let Some(key) = words.next() else { continue };
            let Some(value) = words.next() else {
                raw.problems
                    .push(format!("line {}: key `{key}` has no value", i + 1));
                continue;
            };
            if words.next().is_some() {
                raw.problems.push(format!(
                    "line {}: key `{key}` has more than one value",
                    i + 1
                ));
                continue;
            }
            if raw.values.contains_key(key) {
                raw.problems.push(format!(
                    "line {}: key `{key}` repeated; first value kept",
                    i + 1
                ));
                continue;
            }
            raw.values.insert(key.to_owned(), value.to_owned());
        }
        raw
    }

    /// The text value of a key.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// All keys with their text values, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether no key was parsed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Parses one value: decimal as the kernel prints it, or `0x` hex (a proposed kernel change
/// prints `unique_id` in hex).
pub fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if text.starts_with('+') => None,
        None => text.parse().ok(),
    }
}

/// Converts a raw value to a field's type, recording why it could not be.
pub(crate) fn typed<T: TryFrom<u64>>(
    raw: &RawProperties,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    let text = raw.text(key)?;
    let Some(value) = parse_u64(text) else {
        problems.push(format!("key `{key}`: {text:?} is not an unsigned number"));
        return None;
    };
    match T::try_from(value) {
        Ok(v) => Some(v),
        Err(_) => {
            problems.push(format!(
                "key `{key}`: {value} does not fit in {} bits",
                std::mem::size_of::<T>() * 8
            ));
            None
        }
    }
}

/// Defines a struct with one optional typed field per known key, an `extra` map for numeric
/// keys this version does not know, and a `from_raw` that fills them.
macro_rules! properties {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $key:literal, )*
        }
        $( text { $( $(#[$tmeta:meta])* $tfield:ident = $tkey:literal, )* } )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
        pub struct $name {
            $( #[doc = concat!("`", $key, "`")] $(#[$fmeta])* pub $field: Option<$ty>, )*
            $($( #[doc = concat!("`", $tkey, "`")] $(#[$tmeta])* pub $tfield: Option<String>, )*)?
            /// Numeric keys this version does not know, kept as they are.
            #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
            pub extra: std::collections::BTreeMap<String, u64>,
        }

        impl $name {
            /// The keys this struct types, in kernel print order.
            pub const KEYS: &'static [&'static str] = &[$($key,)* $($($tkey,)*)?];

            /// Types the known keys; problems are appended without the path.
            pub fn from_raw(
                raw: &$crate::properties::RawProperties,
                problems: &mut Vec<String>,
            ) -> Self {
                let mut this = Self {
                    $( $field: $crate::properties::typed(raw, $key, problems), )*
                    $($( $tfield: raw.text($tkey).map(str::to_owned), )*)?
                    extra: std::collections::BTreeMap::new(),
                };
                for (key, text) in raw.iter() {
                    if Self::KEYS.contains(&key) {
                        continue;
                    }
                    match $crate::properties::parse_u64(text) {
                        Some(v) => { this.extra.insert(key.to_owned(), v); }
                        None => problems.push(format!(
                            "unknown key `{key}`: {text:?} is not an unsigned number"
                        )),
                    }
                }
                this
            }

            /// Parses `properties` text; problems are appended without the path.
            pub fn parse(text: &str, problems: &mut Vec<String>) -> Self {
                let raw = $crate::properties::RawProperties::parse(text);
                problems.extend(raw.problems.iter().cloned());
                Self::from_raw(&raw, problems)
            }
        }
    };
}
pub(crate) use properties;

#[cfg(test)]
mod tests {
    use super::*;

    properties! {
        /// Test struct.
        pub struct Demo {
            small: u32 = "small",
            big: u64 = "big",
        }
        text {
            map = "sibling_map",
        }
    }

    #[test]
    fn order_does_not_matter_and_unknown_keys_are_kept() {
        let mut p = Vec::new();
        let d = Demo::parse("big 18446744073709551615\nnew_key 7\nsmall 3\n", &mut p);
        assert_eq!(d.small, Some(3));
        assert_eq!(d.big, Some(u64::MAX));
        assert_eq!(d.extra["new_key"], 7);
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn text_keys_are_not_numbers() {
        let mut p = Vec::new();
        let d = Demo::parse("sibling_map 1,0,0,1\n", &mut p);
        assert_eq!(d.map.as_deref(), Some("1,0,0,1"));
        assert!(p.is_empty());
    }

    #[test]
    fn truncation_overflow_and_junk_are_problems_not_panics() {
        let mut p = Vec::new();
        let d = Demo::parse("small 4294967296\nbig -1\nweird abc\nsmall 2\nbi", &mut p);
        assert_eq!(d.small, None);
        assert_eq!(d.big, None);
        assert_eq!(p.len(), 5, "{p:?}");
        assert!(p[0].contains("repeated"), "{p:?}");
        assert!(p[1].contains("`bi` has no value"), "{p:?}");
        assert!(p.iter().any(|m| m.contains("does not fit in 32 bits")));
        assert!(
            p.iter()
                .any(|m| m.contains("\"-1\" is not an unsigned number"))
        );
        assert!(p.iter().any(|m| m.contains("unknown key `weird`")));
    }

    #[test]
    fn values_accept_hex_and_reject_signs() {
        assert_eq!(parse_u64("0x1F"), Some(31));
        assert_eq!(parse_u64("+1"), None);
        assert_eq!(parse_u64(""), None);
        assert_eq!(parse_u64("12 "), None);
    }

    #[test]
    fn empty_and_whitespace_text_parse_to_nothing() {
        let mut p = Vec::new();
        assert_eq!(Demo::parse("", &mut p), Demo::default());
        assert_eq!(Demo::parse("\n\n   \n", &mut p), Demo::default());
        assert!(p.is_empty());
    }
}
