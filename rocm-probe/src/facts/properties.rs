//! The KFD `properties` format: one `key value` pair per line, values decimal unsigned.
//!
//! Parsed in one pass into typed structs where key order never matters (three key generations
//! exist), every key is optional and unknown numeric keys are kept.

/// Parses one value: decimal as the kernel prints it, or `0x` hex (a proposed kernel change
/// prints `unique_id` in hex).
pub fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if text.starts_with('+') => None,
        None => text.parse().ok(),
    }
}

/// Converts a value to a field's type, recording why it could not be.
pub(crate) fn convert<T: TryFrom<u64>>(
    key: &str,
    text: &str,
    problems: &mut Vec<crate::i18n::Text>,
) -> Option<T> {
    let Some(value) = parse_u64(text) else {
        problems.push(crate::text!(
            "facts.key-not-unsigned",
            key,
            text = format!("{text:?}")
        ));
        return None;
    };
    match T::try_from(value) {
        Ok(v) => Some(v),
        Err(_) => {
            problems.push(crate::text!(
                "facts.key-too-wide",
                key,
                value,
                bits = std::mem::size_of::<T>() * 8
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
            const _FITS: () = assert!(Self::KEYS.len() <= 64, "one bit per key");

            /// Parses `key value` lines in one pass: key order never matters, a key without a
            /// value (a truncated file), extra words and repeated keys are problems (the first
            /// value wins), unknown numeric keys go to `extra`. Problems carry no path.
            pub fn parse(text: &str, problems: &mut Vec<$crate::i18n::Text>) -> Self {
                let mut this = Self::default();
                // Known keys seen so far, one bit per position in KEYS (at most 64 keys).
                let mut seen: u64 = 0;
                for (i, line) in text.lines().enumerate() {
                    let mut words = line.split_whitespace();
                    let Some(key) = words.next() else { continue };
                    let Some(value) = words.next() else {
                        problems.push($crate::text!("facts.key-no-value", line = i + 1, key));
                        continue;
                    };
                    if words.next().is_some() {
                        problems.push($crate::text!("facts.key-many-values", line = i + 1, key));
                        continue;
                    }
                    let repeated = match Self::KEYS.iter().position(|k| *k == key) {
                        Some(bit) => {
                            let before = seen;
                            seen |= 1 << bit;
                            before & (1 << bit) != 0
                        }
                        None => this.extra.contains_key(key),
                    };
                    if repeated {
                        problems.push($crate::text!("facts.key-repeated", line = i + 1, key));
                        continue;
                    }
                    match key {
                        $( $key => this.$field = $crate::facts::properties::convert(key, value, problems), )*
                        $($( $tkey => this.$tfield = Some(value.to_owned()), )*)?
                        _ => match $crate::facts::properties::parse_u64(value) {
                            Some(v) => { this.extra.insert(key.to_owned(), v); }
                            None => problems.push($crate::text!(
                                "facts.unknown-key-not-unsigned",
                                key,
                                value = format!("{value:?}")
                            )),
                        },
                    }
                }
                this
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
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("line 4: key `small` repeated")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("line 5: key `bi` has no value")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("does not fit in 32 bits"))
        );
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("\"-1\" is not an unsigned number"))
        );
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("unknown key `weird`"))
        );
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
