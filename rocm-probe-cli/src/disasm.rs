//! `inspect --disasm`: the ISA of the code object a GPU would load, through `llvm-objdump` — the
//! one place the probe runs another program, because the user asked for it (ARCHITECTURE.md §4).

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, bail};
use rocm_probe::codeobject::{CodeObjectFile, Gpu, Inspection, extract};
use rocm_probe::{Source, msg};

/// `llvm-objdump` on PATH, in a ROCm install (`/opt/rocm*/lib/llvm/bin`), or the newest
/// `/usr/lib/llvm-N/bin` (Debian) or `/usr/lib/llvm/N/bin` (Gentoo's slots).
fn find_objdump() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("llvm-objdump"))
        .find(|p| p.is_file());
    if on_path.is_some() {
        return on_path;
    }
    let mut candidates: Vec<(u32, PathBuf)> = Vec::new();
    for (dir, rel) in [
        ("/opt", "lib/llvm/bin/llvm-objdump"),
        ("/usr/lib", "bin/llvm-objdump"),
        (
            rocm_probe::facts::compiler::GENTOO_SLOTS,
            "bin/llvm-objdump",
        ),
    ] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rank = if let Some(v) = name.strip_prefix("llvm-") {
                v.parse().ok()
            } else if rocm_probe::facts::compiler::is_gentoo_slot(&name) {
                name.parse().ok()
            } else if name.starts_with("rocm") {
                Some(u32::MAX)
            } else {
                None
            };
            let path = e.path().join(rel);
            if let Some(rank) = rank
                && path.is_file()
            {
                candidates.push((rank, path));
            }
        }
    }
    candidates.sort();
    candidates.pop().map(|(_, p)| p)
}

/// Disassembles, for `gpu`, the code object each file would give it.
pub fn disassemble(
    files: &[CodeObjectFile],
    inspections: &[Inspection],
    gpu: &Gpu,
    _source: &Source,
    out: &mut dyn Write,
) -> Result<u8> {
    let Some(objdump) = find_objdump() else {
        bail!(msg!("cli.disasm-needs-objdump"));
    };
    // A private directory (mkdtemp, mode 0700, unpredictable name) removed when dropped: a
    // predictable name in /tmp could be created first by another user, and root would then
    // write and disassemble files that user can swap.
    let scratch = tempfile::Builder::new()
        .prefix("rocm-probe-disasm-")
        .tempdir()?;
    let dir = scratch.path();
    let mut code = 0;
    for (file, inspection) in files.iter().zip(inspections) {
        let Some((target, bytes)) = extract::loaded_code_object(file, inspection, &gpu.target)?
        else {
            writeln!(
                out,
                "{}",
                msg!(
                    "cli.disasm-none-loads",
                    path = file.path().display(),
                    target = &gpu.target_id
                )
            )?;
            code = 1;
            continue;
        };
        let co = dir.join("code.co");
        std::fs::write(&co, &bytes)?;
        let processor = gpu.target.processor.name();
        let run = Command::new(&objdump)
            .args(["--disassemble", "--triple=amdgcn-amd-amdhsa"])
            .arg(format!("--mcpu={processor}"))
            .arg(&co)
            .output()
            .map_err(|e| {
                anyhow::anyhow!(msg!(
                    "cli.program-error",
                    program = objdump.display(),
                    error = rocm_probe::i18n::os_error(&e)
                ))
            })?;
        writeln!(
            out,
            "{}",
            msg!(
                "cli.disasm-header",
                path = file.path().display(),
                target,
                gpu = &gpu.target_id,
                objdump = objdump.display()
            )
        )?;
        if !run.status.success() {
            bail!(msg!(
                "cli.program-failed",
                program = objdump.display(),
                error = String::from_utf8_lossy(&run.stderr).trim()
            ));
        }
        out.write_all(&run.stdout)?;
    }
    Ok(code)
}
