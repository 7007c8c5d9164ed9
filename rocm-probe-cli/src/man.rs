//! `rocm-probe man`: the manual, generated from the argument definitions (clap_mangen): the
//! main page rocm-probe(1) with EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES, and one page per
//! command, rocm-probe-COMMAND(1), which the main page's COMMANDS section refers to.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::args::Args;

/// The main page's own sections: (heading, paragraphs); a paragraph of the form `TAG\tTEXT` is
/// a tagged paragraph, one starting with `$ ` an example command.
const SECTIONS: &[(&str, &[&str])] = &[
    (
        "EXIT STATUS",
        &[
            "0\tThe command ran and found nothing wrong: report and check found no failure (and, with --strict, no warning); agents, topo and targets found a GPU; diff found no difference; fleet read no report whose verdict is a failure; inspect found, for every GPU, a code object that loads as the GPU is set up.",
            "1\tThe command ran and its answer is no: a failure in the report (a warning too with --strict) or an unmet expectation of check; no GPU or no KFD for agents, topo, ps and targets; a difference for diff; a node whose verdict is a failure for fleet; a GPU on which inspect's file does not load as the GPU is set up (no code object, or only one that needs another XNACK or SRAM ECC setting).",
            "2\tThe probe could not run: an argument or option it does not take, an unreadable --root, --expect or report file (for fleet: not one report could be read; documents it cannot read are listed, not fatal), a --lock held by another run, a --deadline that passed, or an output it could not write.",
            "3\treport and check: no failure, but no GPU could be checked, so the verdict is undetermined (under WSL, for example).",
        ],
    ),
    (
        "ENVIRONMENT",
        &[
            "LC_ALL, LC_MESSAGES, LANG\tThe language of the prose when --lang is not given, from the first that is set: zh* is Simplified Chinese, anything else English.",
            "COLUMNS\tThe width text output is wrapped at; else the terminal's width; 80 when the output is not a terminal.",
            "NO_COLOR\tWhen set and not empty, --color auto does not colour.",
            "CLICOLOR_FORCE\tWhen set and not 0, --color auto colours even when the output is not a terminal.",
            "TERM\tdumb: --color auto does not colour.",
            "PATH\tWhere inspect --disasm looks for llvm-objdump and slurm-wrapper for scontrol. The variables the ROCm stack reads (HSA_*, HIP_*, ROCR_*, LD_LIBRARY_PATH, ...) are part of what report assesses; explain --data lists them.",
        ],
    ),
    (
        "FILES",
        &[
            "/sys/class/kfd/kfd/topology\tThe KFD topology: agents, links, caches and memory banks of every node.",
            "/sys/bus/pci/devices, /sys/module/amdgpu, /dev/kfd, /dev/dri\tThe devices, the driver and its parameters, and the device nodes a process opens.",
            "/opt/rocm*, /etc/ld.so.conf*\tThe ROCm installations and where the dynamic loader finds their libraries.",
            "DIR/fixture.toml\tA fixture read with --root DIR (or DIR.tar.gz): a machine's files under DIR, written by snapshot; fixtures/README.md describes it.",
            "/run/rocm-probe.lock\tThe lock the wrapper written by slurm-wrapper passes to --lock.",
        ],
    ),
    (
        "EXAMPLES",
        &[
            "What is broken on this machine, and what to do:",
            "$ rocm-probe",
            "The same as a JSON document, and only its layer 2 (driver):",
            "$ rocm-probe --json --layer driver",
            "One line for a scheduler, written to a file:",
            "$ rocm-probe --summary -o /run/rocm-probe.summary",
            "Another machine's state, from a snapshot it wrote:",
            "$ rocm-probe snapshot node17.tar.gz",
            "$ rocm-probe --root node17.tar.gz report",
            "Check a node against a conformance file written from a good node:",
            "$ rocm-probe check --write-expect good.toml",
            "$ rocm-probe check --expect good.toml",
            "Whether a library has code for this machine's GPUs:",
            "$ rocm-probe inspect /opt/rocm/lib/librocblas.so",
            "A fleet at once: every node's report collected with pdsh, or a directory of reports:",
            "$ pdsh -w 'node[01-64]' rocm-probe --json | rocm-probe fleet -",
            "$ rocm-probe fleet reports/ --format html -o fleet.html",
            "What a finding means:",
            "$ rocm-probe explain driver.kfd-permission-denied",
        ],
    ),
];

/// The command definition the pages are made from, built (display names, help options).
fn command() -> clap::Command {
    let mut cmd = <Args as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// `man [COMMAND]` prints one page; `man --dir DIR` writes all of them.
pub fn run(name: Option<&str>, dir: Option<&Path>, out: &mut dyn Write) -> Result<u8> {
    let cmd = command();
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::commands::option_error("--dir", dir, &e))?;
        for (file, page) in pages(&cmd)? {
            let path = dir.join(file);
            rocm_probe::source::atomic::write(&path, &page)
                .map_err(|e| crate::commands::option_error("--dir", &path, &e))?;
            writeln!(
                out,
                "{}",
                rocm_probe::msg!("cli.wrote", path = path.display())
            )?;
        }
        return Ok(0);
    }
    match name {
        None => main_page(&cmd, out)?,
        Some(name) => {
            let Some(sub) = cmd.find_subcommand(name) else {
                let names: Vec<&str> = cmd.get_subcommands().map(clap::Command::get_name).collect();
                anyhow::bail!(rocm_probe::msg!(
                    "cli.man-unknown-command",
                    name,
                    commands = names.join(", ")
                ));
            };
            clap_mangen::Man::new(sub.clone()).render(out)?;
        }
    }
    Ok(0)
}

/// Every page: (file name, roff).
pub fn pages(cmd: &clap::Command) -> Result<Vec<(String, Vec<u8>)>> {
    let mut main = Vec::new();
    main_page(cmd, &mut main)?;
    let mut all = vec![("rocm-probe.1".to_owned(), main)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let man = clap_mangen::Man::new(sub.clone());
        let mut page = Vec::new();
        man.render(&mut page)?;
        all.push((man.get_filename(), page));
    }
    Ok(all)
}

fn main_page(cmd: &clap::Command, out: &mut dyn Write) -> Result<()> {
    clap_mangen::Man::new(cmd.clone()).render(out)?;
    for (heading, paragraphs) in SECTIONS {
        writeln!(out, ".SH \"{heading}\"")?;
        for p in *paragraphs {
            if let Some((tag, text)) = p.split_once('\t') {
                writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(tag), roff(text))?;
            } else if let Some(command) = p.strip_prefix("$ ") {
                writeln!(out, ".RS 4\n.nf\n\\fB{}\\fR\n.fi\n.RE", roff(command))?;
            } else {
                writeln!(out, ".PP\n{}", roff(p))?;
            }
        }
    }
    writeln!(out, ".SH \"SEE ALSO\"")?;
    let pages: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| {
            format!(
                "\\fB{}\\fR(1)",
                roff(s.get_display_name().unwrap_or(s.get_name()))
            )
        })
        .collect();
    writeln!(out, "{}", pages.join(", "))?;
    Ok(())
}

/// Text safe in a roff line: backslashes doubled, hyphens kept as hyphens, and a line never
/// starting with a control character.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_per_command_and_the_main_page_has_its_sections() {
        let cmd = command();
        let pages = pages(&cmd).unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"rocm-probe.1"), "{names:?}");
        assert!(names.contains(&"rocm-probe-topo.1"), "{names:?}");
        assert_eq!(names.len(), cmd.get_subcommands().count() + 1);
        let main = String::from_utf8(pages[0].1.clone()).unwrap();
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
            assert!(main.contains(&format!(".SH \"{section}\"")), "{section}");
        }
        assert!(!main.contains("The rocm-probe command"));
    }
}
