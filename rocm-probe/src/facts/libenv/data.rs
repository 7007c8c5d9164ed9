//! The environment settings, `rocm-probe/data/environment.toml`: parsed and checked here, by the
//! build script (which turns them into the `SETTINGS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// The components a row may name as the variable's reader.
pub const READERS: [&str; 2] = ["ROCr", "HIP"];

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The variable.
    pub variable: String,
    /// The value.
    pub value: String,
    /// One of [`READERS`].
    pub reader: String,
    /// The message suffix: `libraries.env-<message>`.
    pub message: String,
    /// The release that fixed what the setting works around, `(major, minor)`.
    pub fixed_in: Option<(u32, u32)>,
    /// What the reader does with the value: a file at a commit or a page.
    pub source: String,
    /// The public report of the problem the setting works around.
    pub report: Option<String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// The rows, in the file's order.
    pub rows: Vec<Row>,
}

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("setting #{}: {what}", i + 1);
    for key in t.keys() {
        let known = [
            "variable", "value", "reader", "message", "fixed_in", "source", "report",
        ];
        if !known.contains(&key.as_str()) {
            return Err(at(&format!("unknown key `{key}`")));
        }
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        None => Ok(None),
        Some(_) => Err(at(&format!("`{key}` is not a non-empty string"))),
    };
    let need = |key: &str| text(key)?.ok_or_else(|| at(&format!("no `{key}`")));
    let source =
        text("source")?.ok_or_else(|| at("no `source`: every row cites what reads the value"))?;
    for url in std::iter::once(&source).chain(text("report")?.as_ref()) {
        if !url.starts_with("https://") {
            return Err(at(&format!("{url:?} is not an https URL")));
        }
    }
    let variable = need("variable")?;
    if !variable
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(at(&format!(
            "variable {variable:?} is not an environment variable name"
        )));
    }
    let reader = need("reader")?;
    if !READERS.contains(&reader.as_str()) {
        return Err(at(&format!("reader {reader:?} is none of {READERS:?}")));
    }
    let message = need("message")?;
    if !message.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return Err(at(&format!(
            "message {message:?} is not a message key suffix"
        )));
    }
    let fixed_in = match text("fixed_in")? {
        None => None,
        Some(v) => {
            let (a, b) = v
                .split_once('.')
                .ok_or_else(|| at("fixed_in is not major.minor"))?;
            Some((
                a.parse().map_err(|_| at("fixed_in is not major.minor"))?,
                b.parse().map_err(|_| at("fixed_in is not major.minor"))?,
            ))
        }
    };
    Ok(Row {
        variable,
        value: need("value")?,
        reader,
        message,
        fixed_in,
        source,
        report: text("report")?,
    })
}

/// Parses and checks the file: every row names a variable, a value, a reader, a message and a
/// source; no variable and value twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows): (String, Vec<Row>) =
        data_file::parse_rows(text, "environment data", "setting", row)?;
    for (i, r) in rows.iter().enumerate() {
        if rows[..i]
            .iter()
            .any(|o| o.variable == r.variable && o.value == r.value)
        {
            return Err(format!(
                "environment data: {}={} twice",
                r.variable, r.value
            ));
        }
    }
    Ok(Data { as_of, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_file_parses() {
        let data = parse(include_str!("../../../data/environment.toml")).unwrap();
        assert!(
            data.rows
                .iter()
                .any(|r| r.variable == "HSA_ENABLE_SDMA" && r.value == "0")
        );
    }

    #[test]
    fn a_row_without_a_source_is_refused() {
        let e = parse(
            "as_of = \"2026-12-03\"\n[[setting]]\nvariable = \"HSA_X\"\nvalue = \"0\"\n\
             reader = \"ROCr\"\nmessage = \"x\"\n",
        )
        .unwrap_err();
        assert!(e.contains("no `source`"), "{e}");
    }
}
