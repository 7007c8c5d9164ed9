//! PCI ids and 64-bit identifiers in JSON: hex strings (`"0x740f"`, `"0xaefdf8293fefa6b7"`), as
//! sysfs, lspci, rocminfo and the text outputs print them. A JSON number is a double to jq 1.6
//! and to JavaScript, which turn a 64-bit hive id into another number (schema version 2).

use serde::Serializer;

/// `0x` and at least four lowercase hex digits: a PCI id reads as lspci prints it.
pub fn format<T: std::fmt::LowerHex>(v: T) -> String {
    format!("{v:#06x}")
}

/// Serializes a number as [`format()`](format()).
pub fn one<S: Serializer, T: std::fmt::LowerHex + Copy>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(*v))
}

/// Serializes an optional number as [`format()`](format()), `null` when absent.
pub fn opt<S: Serializer, T: std::fmt::LowerHex + Copy>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(&format(*v)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_keep_every_bit_and_pad_to_four_digits() {
        assert_eq!(super::format(0x740fu32), "0x740f");
        assert_eq!(super::format(0x1u32), "0x0001");
        assert_eq!(super::format(12609507387757274807u64), "0xaefdf8293fefa6b7");
        #[derive(serde::Serialize)]
        struct T {
            #[serde(serialize_with = "super::opt")]
            a: Option<u64>,
            #[serde(serialize_with = "super::opt")]
            b: Option<u32>,
            #[serde(serialize_with = "super::one")]
            c: u64,
        }
        let v = serde_json::to_value(T {
            a: Some(u64::MAX),
            b: None,
            c: 0x66a1,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": "0xffffffffffffffff", "b": null, "c": "0x66a1"})
        );
    }
}
