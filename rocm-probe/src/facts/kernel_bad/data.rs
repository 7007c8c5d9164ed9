//! The known-bad amdgpu releases, `rocm-probe/data/kernel_bad.toml`: parsed and checked here, by
//! the build script (which turns it into the `HAZARDS` table compiled into the crate) and by the
//! crate's own tests. Depends on `toml` and std only, because the build script includes this file
//! as a module. The file's header documents the format.

use crate::data_file;

/// One row as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The gfx target.
    pub target: String,
    /// The amdgpu module parameter of the workaround.
    pub parameter: String,
    /// The value that avoids the bug.
    pub workaround: i64,
    /// The first release with the fix, (major, minor).
    pub fixed: (u32, u32),
    /// What users report.
    pub symptom: String,
    /// The public reports.
    pub source: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// When the rows were last checked against their sources, `YYYY-MM-DD`.
    pub as_of: String,
    /// Rows, in the file's order.
    pub rows: Vec<Row>,
}

fn row(i: usize, t: &toml::Table) -> Result<Row, String> {
    let at = |what: &str| format!("hazard #{}: {what}", i + 1);
    const KEYS: [&str; 6] = [
        "target",
        "parameter",
        "workaround",
        "fixed",
        "symptom",
        "source",
    ];
    if let Some(key) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(at(&format!("unknown key `{key}`")));
    }
    let text = |key: &str| match t.get(key) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(at(&format!("`{key}` is missing or empty"))),
    };
    let target = text("target")?;
    if !data_file::is_processor(&target) {
        return Err(at(&format!("`{target}` is not a gfx target")));
    }
    let parameter = text("parameter")?;
    if !parameter
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(at(&format!("parameter `{parameter}`")));
    }
    let Some(toml::Value::Integer(workaround)) = t.get("workaround") else {
        return Err(at("`workaround` is missing or not an integer"));
    };
    let fixed_text = text("fixed")?;
    let fixed = fixed_text
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| at(&format!("`fixed` = `{fixed_text}` is not major.minor")))?;
    Ok(Row {
        symptom: text("symptom")?,
        source: text("source").map_err(|_| at("no source"))?,
        target,
        parameter,
        workaround: *workaround,
        fixed,
    })
}

/// Parses and checks the file: every row has a source, no (target, parameter) twice.
pub fn parse(text: &str) -> Result<Data, String> {
    let (as_of, rows) = data_file::parse_rows(text, "known-bad amdgpu data", "hazard", row)?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(r) = rows
        .iter()
        .find(|r| !seen.insert((r.target.clone(), r.parameter.clone())))
    {
        return Err(format!("{} {} is listed twice", r.target, r.parameter));
    }
    Ok(Data { as_of, rows })
}
