//! `inspect` as text: per file its bundles and entries in `roc-obj-ls`'s columns (bundle
//! number, entry ID, where the code object is), the distinct targets, then one verdict line per
//! GPU.

use std::io::{self, Write};

use rocm_probe::codeobject::compat::{FileReport, FileVerdict, Gpu, GpuOrigin};
use rocm_probe::codeobject::{BundleFormat, FileFormat, InspectReport, Method, Verdict};
use rocm_probe::msg;
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

fn bundles(n: usize) -> String {
    match n {
        1 => msg!("cli.inspect-bundles-one", n),
        _ => msg!("cli.inspect-bundles", n),
    }
}

fn code_objects(n: usize) -> String {
    match n {
        1 => msg!("cli.inspect-code-objects-one", n),
        _ => msg!("cli.inspect-code-objects", n),
    }
}

fn targets(n: usize) -> String {
    match n {
        1 => msg!("cli.inspect-targets-one", n),
        _ => msg!("cli.inspect-targets", n),
    }
}

fn render_file(file: &FileReport, report: &InspectReport, out: &mut dyn Write) -> io::Result<()> {
    let inspection = &file.inspection;
    let what = match inspection.format {
        FileFormat::HostElf => msg!("cli.inspect-host-elf"),
        FileFormat::Archive => msg!("cli.inspect-archive"),
        FileFormat::CodeObject => msg!("cli.inspect-code-object-file"),
        FileFormat::Bundle => msg!("cli.inspect-bundle-file"),
    };
    let target_list = inspection.targets();
    writeln!(
        out,
        "{}",
        msg!(
            "cli.inspect-file",
            path = escape::text(&inspection.path.display().to_string()),
            what,
            bundles = bundles(inspection.bundles.len()),
            objects = code_objects(inspection.code_object_count()),
            targets = targets(target_list.len())
        )
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
        writeln!(out, "{}", msg!("cli.inspect-compressed-offsets"))?;
    }
    writeln!(
        out,
        "{}",
        msg!(
            "cli.inspect-target-list",
            targets = if target_list.is_empty() {
                msg!("cli.inspect-none")
            } else {
                escape::text(&target_list.join(" "))
            }
        )
    )?;
    match &report.no_gpus {
        Some(why) if report.gpus.is_empty() => writeln!(
            out,
            "{}",
            msg!("cli.inspect-no-verdicts", why = escape::text(why))
        )?,
        _ => {}
    }
    for v in &file.verdicts {
        let gpu = &report.gpus[v.gpu];
        let line = msg!(
            "cli.inspect-verdict",
            gpu = gpu_label(gpu),
            verdict = verdict_text(v)
        );
        writeln!(out, "{}", escape::text(&line))?;
        for a in &gpu.assumptions {
            let line = msg!(
                "cli.inspect-assumed",
                feature = a.feature.name(),
                why = &a.reason
            );
            writeln!(out, "  {}", escape::text(&line))?;
        }
    }
    Ok(())
}

fn gpu_label(gpu: &Gpu) -> String {
    match gpu.origin {
        GpuOrigin::Argument => msg!("cli.inspect-gpu-argument", target = &gpu.target_id),
        GpuOrigin::Machine if !gpu.names.is_empty() => msg!(
            "cli.inspect-gpu-machine",
            target = &gpu.target_id,
            gpus = rocm_probe::i18n::list(&gpu.names)
        ),
        GpuOrigin::Machine => msg!(
            "cli.inspect-gpu-nodes",
            target = &gpu.target_id,
            nodes = nodes(&gpu.nodes)
        ),
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
    let list = rocm_probe::i18n::list(&parts);
    if ids.len() == 1 {
        msg!("cli.inspect-node", list)
    } else {
        msg!("cli.inspect-nodes", list)
    }
}

fn verdict_text(v: &FileVerdict) -> String {
    let b = &v.bundles;
    let total = b.loads + b.needs_feature_change + b.no_code_object;
    let of = |n: usize| {
        if total > 1 {
            msg!("cli.inspect-of-bundles", n, total)
        } else {
            String::new()
        }
    };
    match &v.verdict {
        Verdict::Loads { target } if total > 1 => {
            msg!("cli.inspect-loads-all", target = target.to_string(), total)
        }
        Verdict::Loads { target } => msg!("cli.inspect-loads", target = target.to_string()),
        Verdict::NeedsFeatureChange { target, changes } => {
            let what: Vec<String> = changes
                .iter()
                .map(|c| msg!("cli.inspect-change", change = c.spelling(), how = &c.how))
                .collect();
            msg!(
                "cli.inspect-needs-change",
                changes = what.join(&msg!("cli.inspect-and")),
                target = target.to_string(),
                of = of(b.needs_feature_change)
            )
        }
        Verdict::NoCodeObject => msg!("cli.inspect-no-code-object", of = of(b.no_code_object)),
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
