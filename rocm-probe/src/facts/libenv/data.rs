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

fn row(f: data_file::Fields) -> Result<Row, String> {
    f.only(&[
        "variable", "value", "reader", "message", "fixed_in", "source", "report",
    ])?;
    Ok(Row {
        variable: f.checked("variable", "an environment variable name", |v| {
            v.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })?,
        value: f.text("value")?,
        reader: f.one_of("reader", &READERS)?,
        message: f.checked("message", "a message key suffix", |m| {
            m.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        })?,
        fixed_in: f.opt_major_minor("fixed_in")?,
        source: f.source_url("https://")?,
        report: f.opt_url("report")?,
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
        assert!(e.contains("no source"), "{e}");
    }
}
