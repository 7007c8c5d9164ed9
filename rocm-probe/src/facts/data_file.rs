//! The shape every knowledge file in `rocm-probe/data/` shares: an `as_of` date and one array of
//! row tables (`[[release]]`, `[[gpu]]` …). Each kind's parser (`facts/<kind>/data.rs`, compiled
//! into build.rs as well as into the crate) includes this file, so every file is held to the
//! same rules: no unknown top-level key, a YYYY-MM-DD `as_of`, at least one row, each a table.

/// `as_of` and the rows of `text`, each made by `row` from its 0-based index and table. `what`
/// names the file in errors, `key` the array of rows.
pub fn parse_rows<T>(
    text: &str,
    what: &str,
    key: &str,
    mut row: impl FnMut(usize, &toml::Table) -> Result<T, String>,
) -> Result<(String, Vec<T>), String> {
    let doc: toml::Table = text.parse().map_err(|e| format!("{what}: {e}"))?;
    if let Some(k) = doc.keys().find(|k| *k != "as_of" && *k != key) {
        return Err(format!("{what}: unknown key `{k}`"));
    }
    let as_of = match doc.get("as_of") {
        Some(toml::Value::String(s)) if is_date(s) => s.clone(),
        _ => return Err(format!("{what}: `as_of` is missing or not YYYY-MM-DD")),
    };
    let rows = match doc.get(key) {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_table()
                    .ok_or_else(|| format!("{what}: {key} #{}: not a table", i + 1))
                    .and_then(|t| row(i, t))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(format!("{what}: no [[{key}]] rows")),
    };
    Ok((as_of, rows))
}

/// `YYYY-MM-DD` with digits where digits belong.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// An error naming the first PCI device id listed twice: a device maps to one row.
pub fn devices_once<'a>(devices: impl IntoIterator<Item = &'a u32>) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    match devices.into_iter().find(|d| !seen.insert(**d)) {
        Some(d) => Err(format!("device 0x{d:04x} is listed twice")),
        None => Ok(()),
    }
}

/// A concrete gfx processor name as the tables write it: `gfx` and 3–5 lower-case hex digits.
pub fn is_processor(s: &str) -> bool {
    s.strip_prefix("gfx").is_some_and(|d| {
        (3..=5).contains(&d.len())
            && d.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    })
}

/// A row's `devices`: a non-empty list of 16-bit PCI device ids. `at` prefixes an error with
/// where it is.
pub fn device_ids(t: &toml::Table, at: impl Fn(&str) -> String) -> Result<Vec<u32>, String> {
    match t.get("devices") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v {
                toml::Value::Integer(n) => u32::try_from(*n)
                    .ok()
                    .filter(|n| *n <= 0xffff)
                    .ok_or_else(|| at(&format!("device {n}"))),
                _ => Err(at("a device id is not a number")),
            })
            .collect(),
        _ => Err(at("`devices` is missing or empty")),
    }
}
