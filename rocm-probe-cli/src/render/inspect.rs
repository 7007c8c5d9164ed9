//! `inspect` as text: per file its bundles and entries in `roc-obj-ls`'s columns (bundle
//! number, entry ID, where the code object is), the distinct targets, then one verdict line per
//! GPU.

use std::io::{self, Write};

use rocm_probe::codeobject::compat::{FileReport, FileVerdict, Gpu, GpuOrigin};
use rocm_probe::codeobject::{BundleFormat, FileFormat, InspectReport, Method, Verdict};
use rocm_probe::source::escape;

/// Renders the report.
pub fn text(report: &InspectReport, out: &mut dyn Write) -> io::Result<()> {
    for (i, file) in report.files.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        render_file(file, report, out)?;
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn render_file(file: &FileReport, report: &InspectReport, out: &mut dyn Write) -> io::Result<()> {
    let inspection = &file.inspection;
    let what = match inspection.format {
        FileFormat::HostElf => "host ELF file",
        FileFormat::Archive => "static archive",
        FileFormat::CodeObject => "AMDGPU code object",
        FileFormat::Bundle => "offload bundle file",
    };
    let targets = inspection.targets();
    writeln!(
        out,
        "{}: {what}, {}, {} for {}",
        escape::text(&inspection.path.display().to_string()),
        plural(inspection.bundles.len(), "bundle", "bundles"),
        plural(
            inspection.code_object_count(),
            "code object",
            "code objects"
        ),
        plural(targets.len(), "target", "targets"),
    )?;
    let entries = inspection.bundles.iter().flat_map(|b| &b.entries);
    let width = entries
        .map(|e| escape::text(&e.id).len() + 2)
        .max()
        .unwrap_or(0)
        .max(40);
    if !inspection.bundles.is_empty() {
        writeln!(
            out,
            "{:<8}{:<width$}{:>16} {:>10}  Compressed",
            "Bundle#", "Entry ID", "Offset", "Size"
        )?;
    }
    let mut any_compressed = false;
    for bundle in &inspection.bundles {
        let compressed = bundle.compression.as_ref().map(|c| {
            let method = match c.method {
                Method::Zlib => "zlib",
                Method::Zstd => "zstd",
            };
            format!("{method} (CCOB v{})", c.version)
        });
        for entry in &bundle.entries {
            let offset = if bundle.format == BundleFormat::Compressed {
                any_compressed = true;
                format!("{}+{}", bundle.offset, entry.offset)
            } else {
                entry.offset.to_string()
            };
            // Entry ids and member names are bytes of the file.
            let mut id = escape::text(&entry.id);
            if let Some(member) = &bundle.member {
                id = format!("{id} [{}]", escape::text(member));
            }
            writeln!(
                out,
                "{:<8}{:<width$}{:>16} {:>10}  {}",
                bundle.index,
                id,
                offset,
                entry.size,
                compressed.as_deref().unwrap_or("no")
            )?;
        }
    }
    if any_compressed {
        writeln!(
            out,
            "(offsets of compressed entries: the bundle's offset in the file + the offset in the \
             decompressed bundle)"
        )?;
    }
    writeln!(
        out,
        "Targets: {}",
        if targets.is_empty() {
            "none".to_owned()
        } else {
            escape::text(&targets.join(" "))
        }
    )?;
    match &report.no_gpus {
        Some(why) if report.gpus.is_empty() => writeln!(out, "No verdicts: {}", escape::text(why))?,
        _ => {}
    }
    for v in &file.verdicts {
        let gpu = &report.gpus[v.gpu];
        let line = format!("{}: {}", gpu_label(gpu), verdict_text(v));
        writeln!(out, "{}", escape::text(&line))?;
        for a in &gpu.assumptions {
            let line = format!("  assumed {}: {}", a.feature.name(), a.reason);
            writeln!(out, "{}", escape::text(&line))?;
        }
    }
    Ok(())
}

fn gpu_label(gpu: &Gpu) -> String {
    match gpu.origin {
        GpuOrigin::Argument => format!("GPU {} (--target)", gpu.target_id),
        GpuOrigin::Machine if !gpu.names.is_empty() => {
            format!("{} on {}", gpu.target_id, gpu.names.join(", "))
        }
        GpuOrigin::Machine => format!("GPU {} ({})", gpu.target_id, nodes(&gpu.nodes)),
    }
}

/// `node 1`, `nodes 2-9`, `nodes 1, 3, 5-7`.
fn nodes(ids: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == id => *end = id,
            _ => runs.push((id, id)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let word = if ids.len() == 1 { "node" } else { "nodes" };
    format!("{word} {}", parts.join(", "))
}

fn verdict_text(v: &FileVerdict) -> String {
    let b = &v.bundles;
    let total = b.loads + b.needs_feature_change + b.no_code_object;
    let of = |n: usize| {
        if total > 1 {
            format!(" ({n} of {total} bundles)")
        } else {
            String::new()
        }
    };
    match &v.verdict {
        Verdict::Loads { target } => format!(
            "loads ({target}{})",
            if total > 1 {
                format!("; all {total} bundles")
            } else {
                String::new()
            }
        ),
        Verdict::NeedsFeatureChange { target, changes } => {
            let what: Vec<String> = changes
                .iter()
                .map(|c| format!("{} ({})", c.spelling(), c.how))
                .collect();
            format!(
                "does not load as set up; loads with a feature change: {} — for {target}{}",
                what.join(" and "),
                of(b.needs_feature_change)
            )
        }
        Verdict::NoCodeObject => format!("no code object{}", of(b.no_code_object)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ranges() {
        assert_eq!(nodes(&[1]), "node 1");
        assert_eq!(nodes(&[2, 3, 4, 5, 6, 7, 8, 9]), "nodes 2-9");
        assert_eq!(nodes(&[1, 3, 5, 6, 7]), "nodes 1, 3, 5-7");
    }
}
