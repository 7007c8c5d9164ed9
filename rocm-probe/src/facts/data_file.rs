//! The shape every knowledge file in `rocm-probe/data/` shares: an `as_of` date and one array of
//! row tables (`[[release]]`, `[[gpu]]` …). Each kind's parser (`facts/<kind>/data.rs`, compiled
//! into build.rs as well as into the crate) includes this file, so every file is held to the
//! same rules: no unknown top-level key, a YYYY-MM-DD `as_of`, at least one row, each a table.

/// `as_of` and the rows of `text`, each made by `row` from its [`Fields`] (labelled `key #n` in
/// errors). `what` names the file in errors, `key` the array of rows.
pub fn parse_rows<T>(
    text: &str,
    what: &str,
    key: &str,
    mut row: impl FnMut(Fields) -> Result<T, String>,
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
                let label = format!("{key} #{}", i + 1);
                v.as_table()
                    .ok_or_else(|| format!("{what}: {label}: not a table"))
                    .and_then(|t| row(Fields { table: t, label }))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(format!("{what}: no [[{key}]] rows")),
    };
    Ok((as_of, rows))
}

/// One row's table and the label its errors start with: the typed reads every kind's rows share,
/// each with the same error wording in every file.
#[derive(Debug)]
pub struct Fields<'a> {
    table: &'a toml::Table,
    label: String,
}

impl Fields<'_> {
    /// Refuses a key outside `known` (a misspelt key would otherwise be silently ignored).
    pub fn only(&self, known: &[&str]) -> Result<(), String> {
        match self.table.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(self.err(&format!("unknown key `{k}`"))),
            None => Ok(()),
        }
    }

    /// Labels later errors with what the row is (`gfx1100`, `ROCm 7.1`) instead of its number.
    pub fn relabel(&mut self, label: String) {
        self.label = label;
    }

    /// An error about this row.
    pub fn err(&self, what: &str) -> String {
        format!("{}: {what}", self.label)
    }

    /// Whether the row has `key` at all.
    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    /// The raw value of `key`, for a shape only one kind has.
    pub fn value(&self, key: &str) -> Option<&toml::Value> {
        self.table.get(key)
    }

    /// An optional non-empty string.
    pub fn opt_text(&self, key: &str) -> Result<Option<String>, String> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(self.err(&format!("`{key}` is not a non-empty string"))),
        }
    }

    /// A required non-empty string.
    pub fn text(&self, key: &str) -> Result<String, String> {
        self.opt_text(key)?
            .ok_or_else(|| self.err(&format!("`{key}` is missing")))
    }

    /// The row's `source`: every row cites where it comes from.
    pub fn source(&self) -> Result<String, String> {
        match self.opt_text("source") {
            Ok(Some(s)) => Ok(s),
            _ => Err(self.err("no source: every row cites where it comes from")),
        }
    }

    /// The row's `source` when it must be a page: an `https://` URL starting with `prefix`.
    pub fn source_url(&self, prefix: &str) -> Result<String, String> {
        let source = self.source()?;
        self.check_url(&source, prefix)?;
        Ok(source)
    }

    /// An optional `https://` URL.
    pub fn opt_url(&self, key: &str) -> Result<Option<String>, String> {
        let url = self.opt_text(key)?;
        if let Some(u) = &url {
            self.check_url(u, "https://")?;
        }
        Ok(url)
    }

    fn check_url(&self, url: &str, prefix: &str) -> Result<(), String> {
        if url.starts_with(prefix) {
            Ok(())
        } else {
            Err(self.err(&format!("{url:?} does not start with {prefix}")))
        }
    }

    /// A required string out of `choices`.
    pub fn one_of(&self, key: &str, choices: &[&str]) -> Result<String, String> {
        let v = self.text(key)?;
        if choices.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(self.err(&format!("{key} {v:?} is none of {choices:?}")))
        }
    }

    /// A required string `ok` accepts; `what` names what it should be in the error.
    pub fn checked(&self, key: &str, what: &str, ok: fn(&str) -> bool) -> Result<String, String> {
        let v = self.text(key)?;
        if ok(&v) {
            Ok(v)
        } else {
            Err(self.err(&format!("{key} {v:?} is not {what}")))
        }
    }

    /// A required concrete gfx processor name.
    pub fn processor(&self, key: &str) -> Result<String, String> {
        self.checked(key, "a gfx processor", is_processor)
    }

    /// An optional release line written `"major.minor"`.
    pub fn opt_major_minor(&self, key: &str) -> Result<Option<(u32, u32)>, String> {
        let Some(v) = self.opt_text(key)? else {
            return Ok(None);
        };
        v.split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .map(Some)
            .ok_or_else(|| self.err(&format!("{key} {v:?} is not major.minor")))
    }

    /// A required release line written `"major.minor"`.
    pub fn major_minor(&self, key: &str) -> Result<(u32, u32), String> {
        self.opt_major_minor(key)?
            .ok_or_else(|| self.err(&format!("`{key}` is missing")))
    }

    /// A required non-negative integer that fits `u32`.
    pub fn number(&self, key: &str) -> Result<u32, String> {
        match self.table.get(key) {
            Some(toml::Value::Integer(n)) => {
                u32::try_from(*n).map_err(|_| self.err(&format!("{key} {n} is out of range")))
            }
            _ => Err(self.err(&format!("`{key}` is missing or not a number"))),
        }
    }

    /// A required non-empty list, each item made by `item` (`None`: the item is not `what`).
    pub fn list<T>(
        &self,
        key: &str,
        what: &str,
        item: impl Fn(&toml::Value) -> Option<T>,
    ) -> Result<Vec<T>, String> {
        match self.table.get(key) {
            Some(toml::Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|v| item(v).ok_or_else(|| self.err(&format!("{v} in `{key}` is not {what}"))))
                .collect(),
            _ => Err(self.err(&format!("`{key}` is missing or not a non-empty list"))),
        }
    }

    /// A required non-empty list of strings `ok` accepts.
    pub fn strings(
        &self,
        key: &str,
        what: &str,
        ok: fn(&str) -> bool,
    ) -> Result<Vec<String>, String> {
        self.list(key, what, |v| {
            v.as_str().filter(|s| ok(s)).map(str::to_owned)
        })
    }

    /// The row's `devices`: a non-empty list of 16-bit PCI device ids.
    pub fn devices(&self) -> Result<Vec<u32>, String> {
        self.list("devices", "a 16-bit PCI device id", |v| {
            v.as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n <= 0xffff)
        })
    }
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

/// A lower-case identifier (`[a-z0-9_]+`): a module parameter, a firmware component, a KFD
/// property.
pub fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
