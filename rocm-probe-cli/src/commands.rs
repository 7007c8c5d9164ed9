//! One function per command: collect through the library, render, choose the exit code.

use std::io::Write;

use anyhow::Result;
use rocm_probe::facts::collect;
use rocm_probe::facts::config::Profile;
use rocm_probe::facts::topology::{Scope, TOPOLOGY_DIR};
use rocm_probe::finding::{rule, rules};
use rocm_probe::i18n::os_error;
use rocm_probe::report::Options;
use rocm_probe::report::output::Document;
use rocm_probe::{AgentFacts, Inventory, ReadError, Report, Source, msg};

use crate::args::{ActiveArgs, Args, ColorChoice, Command, Format, ProfileArg, ReportArgs};
use crate::render;
use crate::stdio;

/// Exit code: the command ran and found what it looks for.
const OK: u8 = 0;
/// Exit code: the command ran and found no GPU (or a failure, for reports).
const NOT_FOUND: u8 = 1;

/// Runs the command; `Err` means the probe could not run (exit 2). With `-o FILE` the output
/// goes to FILE (atomically, and only when the command ran), not to `out`.
pub fn run(args: &Args, out: &mut dyn Write) -> Result<u8> {
    let started = std::time::Instant::now();
    let shared = args.shared();
    let source = match shared.root {
        Some(dir) => Source::fixture(dir)?,
        None => Source::live(),
    };
    let _lock = match shared.lock {
        Some(path) => Some(crate::runlock::acquire(path)?),
        None => None,
    };
    // Held until the command is done: with -o it goes to the file, and with --deadline nothing
    // is printed by a run that ends past it.
    let held = shared.output.is_some() || shared.deadline.is_some();
    let mut buffer: Vec<u8> = Vec::new();
    let code = if held {
        dispatch(args, source, &mut buffer)?
    } else {
        dispatch(args, source, out)?
    };
    // A run that finished, but later than its deadline, fails as the watchdog would have failed
    // it a moment earlier: the deadline is the answer's, not only the watchdog's.
    if let Some(limit) = shared.deadline.filter(|&limit| started.elapsed() > limit) {
        anyhow::bail!(msg!("cli.deadline", seconds = limit.as_secs_f64()));
    }
    match shared.output {
        Some(path) => rocm_probe::source::atomic::write_output(path, &buffer)
            .map_err(|e| option_error("--output", path, &e))?,
        None if held => out.write_all(&buffer)?,
        None => {}
    }
    Ok(code)
}

fn dispatch(args: &Args, source: Source, out: &mut dyn Write) -> Result<u8> {
    let Some(command) = &args.command else {
        return report(&source, &args.report, None, args.color.color, out);
    };
    match command {
        Command::Snapshot { dir, no_redact, .. } => snapshot(source, dir, !*no_redact, out),
        Command::Report(c) => report(&source, &c.report, None, c.color.color, out),
        Command::Check(c) => check(
            &source,
            c.expect.as_deref(),
            c.write_expect.as_deref(),
            &c.report,
            c.color.color,
            out,
        ),
        Command::Explain { id, data, .. } => {
            // Rendered whole, then every line wider than the terminal wrapped under itself.
            let mut text = Vec::new();
            let code = if *data {
                explain_data(&mut text)?
            } else {
                explain(id.as_deref(), args.lang(), &mut text)?
            };
            let width = render::width();
            for line in String::from_utf8_lossy(&text).lines() {
                writeln!(out, "{}", render::fit(line, width))?;
            }
            Ok(code)
        }
        Command::Topo {
            format,
            json,
            nodes,
            ..
        } => {
            let format = if *json {
                crate::args::TopoFormat::Json
            } else {
                *format
            };
            topo(&source, format, *nodes, out)
        }
        Command::Completions { shell, .. } => {
            let mut cmd = <Args as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "rocm-probe", out);
            Ok(OK)
        }
        Command::Man { command, dir, .. } => {
            crate::man::run(command.as_deref(), dir.as_deref(), out)
        }
        Command::Diff { a, b, format, .. } => diff(a, b, format.is_json(), out),
        Command::Fleet {
            reports,
            format,
            json,
            ..
        } => {
            let format = if *json {
                crate::args::FleetFormat::Json
            } else {
                *format
            };
            fleet(reports, format, out)
        }
        Command::SlurmWrapper {
            slurm_conf,
            probe,
            scontrol,
            lock,
            deadline,
            source: root,
            ..
        } => crate::slurm::wrapper(
            root.root.as_deref(),
            slurm_conf,
            probe.as_deref(),
            scontrol.as_deref(),
            lock,
            *deadline,
            out,
        ),
        Command::Agents { format, active, .. } => agents(&source, format.is_json(), active, out),
        Command::Ps { format, .. } => ps(&source, format.is_json(), out),
        Command::Targets { name, .. } => targets(&source, *name, out),
        Command::Inspect {
            files,
            targets,
            format,
            extract,
            disasm,
            ..
        } => inspect(
            &source,
            files,
            targets,
            format.is_json(),
            extract.as_deref(),
            *disasm,
            out,
        ),
    }
}

fn check(
    source: &Source,
    expect: Option<&std::path::Path>,
    write_expect: Option<&std::path::Path>,
    args: &ReportArgs,
    color: ColorChoice,
    out: &mut dyn Write,
) -> Result<u8> {
    if let Some(path) = write_expect {
        let facts = rocm_probe::Facts::collect(source);
        let report = Report::from_facts(&facts, Options::default());
        let e = rocm_probe::report::expect::Expectations::from_facts(&facts, &report.findings);
        let origin = match source.kind() {
            rocm_probe::source::SourceKind::Live => "this machine".to_owned(),
            rocm_probe::source::SourceKind::Fixture { root } => {
                format!("the fixture {}", root.display())
            }
        };
        rocm_probe::source::atomic::write(path, e.to_toml(&origin).as_bytes())
            .map_err(|err| option_error("--write-expect", path, &err))?;
        writeln!(out, "{}", msg!("cli.wrote", path = path.display()))?;
        return Ok(OK);
    }
    let Some(path) = expect else {
        anyhow::bail!(msg!("cli.check-needs-expect"));
    };
    let text =
        rocm_probe::source::input::read_text(path, rocm_probe::source::input::InputKind::Expect)
            .map_err(|err| {
                anyhow::anyhow!(msg!(
                    "cli.option-error",
                    option = "--expect",
                    error = os_error(&err)
                ))
            })?;
    let e = rocm_probe::report::expect::Expectations::parse(&text, &path.display().to_string())?;
    report(source, args, Some(e), color, out)
}

fn report(
    source: &Source,
    args: &ReportArgs,
    expect: Option<rocm_probe::report::expect::Expectations>,
    color: ColorChoice,
    out: &mut dyn Write,
) -> Result<u8> {
    // A conformance file sets the worst status that passes; --strict lowers it to info.
    let worst = expect.as_ref().map(|e| {
        if args.strict {
            e.policy.worst.min(rocm_probe::Status::Info)
        } else {
            e.policy.worst
        }
    });
    let exit = |report: &Report| match worst {
        Some(w) => report.exit_code_allowing(w),
        None => report.exit_code(args.strict),
    };
    let options = Options {
        expect,
        profile: args.profile.map(|p| match p {
            ProfileArg::Desktop => Profile::Desktop,
            ProfileArg::Workstation => Profile::Workstation,
            ProfileArg::Cluster => Profile::Cluster,
        }),
        active: args.active.options(),
    };
    let format = if args.json { Format::Json } else { args.format };
    let format_name = || {
        clap::ValueEnum::to_possible_value(&format)
            .map_or_else(String::new, |v| v.get_name().to_owned())
    };
    let json = matches!(format, Format::Json | Format::JsonLines);
    if args.layer.is_some() && !(json || format == Format::Text) {
        anyhow::bail!(msg!("cli.layer-not-for-format", format = format_name()));
    }
    if args.no_redact && !json {
        anyhow::bail!(msg!("cli.no-redact-not-for-format", format = format_name()));
    }
    let started = std::time::Instant::now();
    let collect = rocm_probe::facts::CollectOptions {
        active: options.active.clone(),
    };
    let facts = rocm_probe::Facts::collect_with(source, &collect);
    let report = Report::from_facts(&facts, options);
    let duration = started.elapsed();
    if let Some(path) = &args.textfile {
        let text = rocm_probe::export::prometheus::render(&report, &facts, duration);
        rocm_probe::source::atomic::write(path, text.as_bytes())
            .map_err(|e| option_error("--textfile", path, &e))?;
    }
    if let Some(path) = &args.nfd_features {
        // A huge --nfd-expiry means "never": capped instead of overflowing the clock.
        let now = std::time::SystemTime::now();
        let expires = now
            .checked_add(std::time::Duration::from_secs(args.nfd_expiry))
            .unwrap_or(now + std::time::Duration::from_secs(100 * 365 * 86_400));
        let text = rocm_probe::export::nfd::features(&report, &facts, expires);
        rocm_probe::source::atomic::write(path, text.as_bytes())
            .map_err(|e| option_error("--nfd-features", path, &e))?;
    }
    if args.summary {
        writeln!(out, "{}", report.summary(usize::from(args.summary_width)))?;
        return Ok(exit(&report));
    }
    match format {
        Format::Json | Format::JsonLines => {
            let doc = Document::with_redaction(source, &report, !args.no_redact);
            let mut doc = serde_json::to_value(doc)?;
            if let Some(n) = args.layer {
                only_layer(&mut doc, n);
            }
            if format == Format::JsonLines {
                serde_json::to_writer(&mut *out, &doc)?;
            } else {
                serde_json::to_writer_pretty(&mut *out, &doc)?;
            }
            writeln!(out)?;
        }
        Format::Junit => render::junit::junit(&report, out)?,
        Format::Html => render::html::html(&report, &facts, source, out)?,
        Format::Markdown => render::markdown::markdown(&report, &facts, source, out)?,
        Format::Text => {
            let style = render::report::Style {
                color: render::use_color(color, args.output.output.is_none()),
                verbose: args.verbose,
                layer: args.layer,
            };
            render::report::text(&report, source, style, out)?;
        }
    }
    Ok(exit(&report))
}

/// `--layer N` on a JSON report: only that layer in `layers`, only its findings in `findings`
/// (the verdict and facts stay whole: they are the machine's).
fn only_layer(doc: &mut serde_json::Value, n: u8) {
    let Some(name) = rocm_probe::finding::Layer::ALL
        .iter()
        .find(|l| l.number() == n)
        .map(|l| l.id())
    else {
        return;
    };
    if let Some(layers) = doc.get_mut("layers").and_then(|v| v.as_array_mut()) {
        layers
            .retain(|l| l.get("number").and_then(serde_json::Value::as_u64) == Some(u64::from(n)));
    }
    if let Some(findings) = doc.get_mut("findings").and_then(|v| v.as_array_mut()) {
        findings.retain(|f| f.get("layer").and_then(serde_json::Value::as_str) == Some(name));
    }
}

/// Names that say "an archive" in a format `snapshot` does not write (it writes a directory, or
/// a .tar.gz / .tgz archive): refused rather than made into a directory of that name.
const ARCHIVE_SUFFIXES: &[&str] = &[
    ".zip", ".tar", ".tar.xz", ".txz", ".tar.bz2", ".tbz", ".tbz2", ".tar.zst", ".tzst", ".gz",
    ".xz", ".bz2", ".zst", ".7z", ".rar", ".tar.lz", ".lz", ".lzma", ".cpio", ".rpm", ".deb",
];

fn snapshot(
    source: Source,
    dir: &std::path::Path,
    redact: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    // As the library decides it (case-sensitive); every other spelling of an archive is refused.
    let path = dir.to_string_lossy();
    let archive = path.ends_with(".tar.gz") || path.ends_with(".tgz");
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !archive {
        if let Some(ext) = ARCHIVE_SUFFIXES.iter().find(|e| name.ends_with(*e)) {
            anyhow::bail!(msg!(
                "cli.snapshot-unknown-extension",
                dir = dir.display(),
                ext = *ext
            ));
        }
    }
    let summary = rocm_probe::export::snapshot::snapshot(source, dir, redact).map_err(|e| {
        anyhow::anyhow!(msg!(
            "cli.snapshot-into",
            dir = dir.display(),
            error = os_error(&e)
        ))
    })?;
    let (files, links, dir) = (summary.files, summary.links, dir.display());
    let wrote = match (archive, redact) {
        (false, true) => msg!("cli.snapshot-wrote-redacted", files, links, dir),
        (false, false) => msg!("cli.snapshot-wrote", files, links, dir),
        (true, true) => msg!("cli.snapshot-wrote-archive-redacted", files, links, dir),
        (true, false) => msg!("cli.snapshot-wrote-archive", files, links, dir),
    };
    writeln!(out, "{wrote}")?;
    writeln!(out, "{}", msg!("cli.snapshot-read-back", dir))?;
    for entry in &summary.failed {
        stdio::warn(msg!("cli.not-copied", entry));
    }
    Ok(OK)
}

fn diff(a: &std::path::Path, b: &std::path::Path, json: bool, out: &mut dyn Write) -> Result<u8> {
    let read = |p: &std::path::Path| -> Result<serde_json::Value> {
        let text =
            rocm_probe::source::input::read_text(p, rocm_probe::source::input::InputKind::Report)?;
        serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(msg!(
                "cli.not-json",
                path = p.display(),
                error = json_error(&e)
            ))
        })
    };
    let (va, vb) = (read(a)?, read(b)?);
    let d = rocm_probe::export::diff::diff(&va, &vb)?;
    if json {
        // The envelope of every document but `source`: a diff is of two other machines.
        let doc = rocm_probe::report::output::Derived::new(&d);
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        // Both reports are input from elsewhere: every value they carry is escaped.
        use rocm_probe::source::escape::text as esc;
        let fp = |f: &Option<String>| f.as_deref().map_or_else(|| "-".to_owned(), esc);
        if !d.differences.is_empty() {
            for (side, path, fingerprint) in
                [("a", a, &d.fingerprints[0]), ("b", b, &d.fingerprints[1])]
            {
                let path = esc(&path.display().to_string());
                let fingerprint = fp(fingerprint);
                writeln!(out, "{}", msg!("cli.diff-side", side, path, fingerprint))?;
            }
        }
        let paths: Vec<String> = d.differences.iter().map(|x| esc(&x.path)).collect();
        let width = paths.iter().map(String::len).max().unwrap_or(0);
        for (x, path) in d.differences.iter().zip(&paths) {
            let v = |s: &Option<serde_json::Value>| {
                s.as_ref().map_or_else(
                    || msg!("cli.diff-absent"),
                    |v| esc(&rocm_probe::export::diff::display(v)),
                )
            };
            writeln!(
                out,
                "{:<9} {:<width$}  {}  |  {}",
                x.area,
                path,
                v(&x.a),
                v(&x.b)
            )?;
        }
    }
    Ok(if d.differences.is_empty() {
        OK
    } else {
        NOT_FOUND
    })
}

fn fleet(
    reports: &[std::path::PathBuf],
    format: crate::args::FleetFormat,
    out: &mut dyn Write,
) -> Result<u8> {
    use rocm_probe::export::fleet::{self, Input};
    let inputs: Vec<Input> = reports
        .iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                Input::Stdin
            } else {
                Input::Path(p.clone())
            }
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let read = fleet::read_inputs(&inputs, &mut std::io::stdin().lock(), threads);
    if read.nodes.is_empty() {
        for r in &read.refused {
            stdio::warn(rocm_probe::source::escape::text(&render::fleet::refusal(r)));
        }
        anyhow::bail!(msg!("fleet.no-reports", refused = read.refused.len()));
    }
    let view = fleet::view(read);
    match format {
        crate::args::FleetFormat::Text => render::fleet::text(&view, render::width(), out)?,
        crate::args::FleetFormat::Json => {
            let doc = rocm_probe::report::output::Derived::new(&view);
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        crate::args::FleetFormat::Html => render::fleet::html(&view, out)?,
    }
    Ok(view.exit_code())
}

fn explain(id: Option<&str>, lang: rocm_probe::i18n::Lang, out: &mut dyn Write) -> Result<u8> {
    let Some(id) = id else {
        let width = render::width();
        for r in rules() {
            let line = format!(
                "{:<36} {} {}",
                r.id,
                render::pad(rocm_probe::finding::status_word(r.status, lang), 5),
                rocm_probe::finding::rule_title(r, lang)
            );
            writeln!(out, "{}", render::hang(&line, width, "", &" ".repeat(43)))?;
        }
        return Ok(OK);
    };
    let Some(r) = rule(id) else {
        let near = closest_ids(id);
        if near.is_empty() {
            anyhow::bail!(msg!("cli.unknown-finding", id = format!("{id:?}")));
        }
        anyhow::bail!(msg!(
            "cli.unknown-finding-near",
            id = format!("{id:?}"),
            near = rocm_probe::i18n::list(&near)
        ));
    };
    writeln!(
        out,
        "{} — {}",
        r.id,
        rocm_probe::finding::rule_title(r, lang)
    )?;
    writeln!(
        out,
        "{}",
        msg!(
            "cli.explain-layer",
            n = r.layer.number(),
            title = rocm_probe::finding::layer_title(r.layer, lang),
            status = rocm_probe::finding::status_word(r.status, lang)
        )
    )?;
    writeln!(out)?;
    let text = rocm_probe::finding::rule_explain(r, lang);
    writeln!(out, "{}", render::wrap(text, render::width()))?;
    // The cause graph around it: what the report names as this finding's cause, and what it
    // names as following from it.
    let causes: Vec<&str> = rocm_probe::finding::causes_of(r.id).map(|c| c.id).collect();
    for (heading, ids) in [
        (msg!("cli.explain-caused-by"), causes),
        (msg!("cli.explain-causes"), r.causes.to_vec()),
    ] {
        if !ids.is_empty() {
            writeln!(out)?;
            writeln!(out, "{heading}")?;
            for id in ids {
                let title = rule(id).map_or(id, |c| rocm_probe::finding::rule_title(c, lang));
                writeln!(out, "  {id:<36} {title}")?;
            }
        }
    }
    Ok(OK)
}

/// The declared ids closest to an unknown `id`: those that contain it, else those within a few
/// edits of it (a third of its length, at least 3), nearest first; at most five.
fn closest_ids(id: &str) -> Vec<&'static str> {
    let id = id.trim().to_ascii_lowercase();
    if id.is_empty() {
        return Vec::new();
    }
    let containing: Vec<&'static str> = rules()
        .iter()
        .map(|r| r.id)
        .filter(|r| r.contains(id.as_str()))
        .take(5)
        .collect();
    if !containing.is_empty() {
        return containing;
    }
    let limit = (id.chars().count() / 3).max(3);
    let mut near: Vec<(usize, &'static str)> = rules()
        .iter()
        .map(|r| (strsim::levenshtein(&id, r.id), r.id))
        .filter(|(d, _)| *d <= limit)
        .collect();
    near.sort();
    near.into_iter().take(5).map(|(_, r)| r).collect()
}

/// `explain --data`: the release rows the GPU-support check knows, and the newest of them.
/// One knowledge file in `explain --data`: a blank line, its header, then each row with its
/// source below it.
fn data_rows<'a>(
    out: &mut dyn Write,
    header: &str,
    rows: impl Iterator<Item = (String, &'a str)>,
) -> Result<()> {
    writeln!(out)?;
    writeln!(out, "{header}")?;
    for (row, source) in rows {
        writeln!(out, "  {row}")?;
        writeln!(out, "    {source}")?;
    }
    Ok(())
}

fn explain_data(out: &mut dyn Write) -> Result<u8> {
    use rocm_probe::facts::support::{self, Stream, Support};
    let stream = |s: Stream| match s {
        Stream::Production => msg!("cli.stream-production"),
        Stream::Preview => msg!("cli.stream-preview"),
        Stream::CoreSdk => msg!("cli.stream-core-sdk"),
    };
    writeln!(out, "{}", msg!("cli.data-header", date = support::AS_OF))?;
    for r in support::RELEASES {
        let targets = rocm_probe::i18n::list(
            r.entries
                .iter()
                .filter(|e| e.support == Support::Supported)
                .map(|e| match e.since_patch {
                    0 => e.target.to_owned(),
                    p => format!("{} (≥ {}.{p})", e.target, r.name()),
                }),
        );
        let targets = if r.stream == Stream::Preview {
            msg!("cli.data-targets-preview", targets)
        } else {
            msg!("cli.data-targets-supported", targets)
        };
        writeln!(out)?;
        let line = format!(
            "ROCm {:<5} {}  {}",
            r.name(),
            stream(r.stream),
            r.released.unwrap_or("")
        );
        writeln!(out, "{}", line.trim_end())?;
        writeln!(
            out,
            "  {}",
            render::wrap(&targets, 92).replace('\n', "\n  ")
        )?;
        writeln!(out, "  {}", r.source)?;
        if let Some(page) = r.apus_page {
            let note = msg!("cli.data-apus-unread");
            writeln!(out, "  {}", render::wrap(&note, 92).replace('\n', "\n  "))?;
            writeln!(out, "  {page}")?;
        }
    }
    let n = support::newest();
    writeln!(out)?;
    let newest = msg!(
        "cli.data-newest",
        release = n.name(),
        stream = stream(n.stream),
        date = n.released.unwrap_or(support::AS_OF)
    );
    writeln!(out, "{}", render::wrap(&newest, 96))?;
    explain_rocr_isa(out)?;
    // The first kernel per GPU family (driver.kernel-too-old).
    use rocm_probe::facts::min_kernel;
    let rows = min_kernel::GPUS.iter().map(|g| {
        let devices = rocm_probe::i18n::list(g.devices.iter().map(|d| format!("1002:{d:04x}")));
        let row = msg!(
            "cli.data-min-kernel-row",
            target = g.target,
            gc = g.gc,
            devices,
            kernel = format!("{}.{}", g.kernel.0, g.kernel.1)
        );
        (row, g.source)
    });
    let header = msg!("cli.data-min-kernel-header", date = min_kernel::AS_OF);
    data_rows(out, &header, rows)?;
    // Firmware versions public reports name as bad (driver.firmware-known-bad).
    use rocm_probe::facts::firmware_bad;
    let rows = firmware_bad::KNOWN_BAD.iter().map(|r| {
        let versions = rocm_probe::i18n::list(r.versions.iter().map(|v| format!("0x{v:08x}")));
        let row = msg!(
            "cli.data-firmware-bad-row",
            target = r.target,
            component = r.component.to_uppercase(),
            versions,
            symptom = r.symptom
        );
        (row, r.source)
    });
    let header = msg!("cli.data-firmware-bad-header", date = firmware_bad::AS_OF);
    data_rows(out, &header, rows)?;
    // amdgpu releases that hang a target unless a parameter works around it
    // (driver.amdgpu-known-bad).
    use rocm_probe::facts::kernel_bad;
    let rows = kernel_bad::HAZARDS.iter().map(|h| {
        let row = msg!(
            "cli.data-kernel-bad-row",
            target = h.target,
            fixed = format!("{}.{}", h.fixed.0, h.fixed.1),
            parameter = h.parameter,
            workaround = h.workaround,
            symptom = h.symptom
        );
        (row, h.source)
    });
    let header = msg!("cli.data-kernel-bad-header", date = kernel_bad::AS_OF);
    data_rows(out, &header, rows)?;
    // The overrides public reports show hanging a GPU (never suggested).
    use rocm_probe::facts::override_hazard;
    let rows = override_hazard::HAZARDS.iter().map(|h| {
        let row = msg!(
            "cli.data-override-hazard-row",
            target = h.target,
            value = h.value
        );
        (row, h.source)
    });
    let header = msg!(
        "cli.data-override-hazard-header",
        date = override_hazard::AS_OF
    );
    data_rows(out, &header, rows)?;
    // The firmware files per GPU family (driver.firmware-missing).
    use rocm_probe::facts::firmware;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-firmware-header", date = firmware::AS_OF)
    )?;
    for g in firmware::GPUS {
        let files = rocm_probe::i18n::list(g.files.iter().map(|f| format!("{f}.bin")));
        writeln!(
            out,
            "  {}",
            render::wrap(&msg!("cli.data-firmware-row", target = g.target, files), 92)
                .replace('\n', "\n    ")
        )?;
        writeln!(out, "    {}", g.source)?;
    }
    // The kernel-log signatures (driver.firmware-load-failed, gpu-init-failed, gpu-hang, …).
    use rocm_probe::facts::kernel_log;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-kernel-log-header", date = kernel_log::AS_OF)
    )?;
    for s in kernel_log::SIGNATURES {
        let kind = serde_json::to_value(s.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let all = s.all.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>();
        writeln!(out, "  {kind}: {}", all.join(" … "))?;
        writeln!(
            out,
            "    {}",
            render::wrap(s.source, 92).replace('\n', "\n    ")
        )?;
    }
    // Where applications' own runtimes are looked for, and the variables assessed.
    use rocm_probe::facts::{bundled, libenv};
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-bundled-header", date = bundled::AS_OF)
    )?;
    for r in bundled::RUNTIMES {
        writeln!(out)?;
        writeln!(out, "{}: {}", r.name, r.paths.join(", "))?;
        writeln!(out, "  {}", r.source)?;
    }
    use rocm_probe::facts::launcher_venv;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-launcher-header", date = launcher_venv::AS_OF)
    )?;
    for l in launcher_venv::LAUNCHERS {
        writeln!(out)?;
        writeln!(out, "{}: ~/{}", l.name, l.paths.join(", ~/"))?;
        if let Some(lib) = l.library {
            let line = msg!(
                "cli.data-launcher-library",
                file = format!("~/{}", lib.file),
                key = lib.key,
                paths = lib.paths.join(", ")
            );
            writeln!(out, "  {line}")?;
        }
        writeln!(out, "  {}", l.source)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-environment-header", date = libenv::AS_OF)
    )?;
    for s in libenv::SETTINGS {
        writeln!(out)?;
        let fixed = s.fixed_in.map_or_else(String::new, |(major, minor)| {
            format!(
                "  {}",
                msg!("cli.data-fixed-in", release = format!("{major}.{minor}"))
            )
        });
        writeln!(out, "{}={} ({}){fixed}", s.variable, s.value, s.reader)?;
        writeln!(out, "  {}", s.source)?;
        if let Some(r) = s.report {
            writeln!(out, "  {r}")?;
        }
    }
    Ok(OK)
}

/// `explain --data`, second part: the processors ROCr's ISA registry knows per release, each row
/// as what it adds to (and drops from) the one before.
fn explain_rocr_isa(out: &mut dyn Write) -> Result<()> {
    use rocm_probe::facts::rocr_isa;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        msg!("cli.data-rocr-header", date = rocr_isa::AS_OF)
    )?;
    let mut before: &[&str] = &[];
    for r in rocr_isa::ROWS {
        let added: Vec<&str> = r
            .processors
            .iter()
            .copied()
            .filter(|p| !before.contains(p))
            .collect();
        let dropped: Vec<&str> = before.iter().copied().filter(|p| !r.knows(p)).collect();
        let mut what = if before.is_empty() {
            msg!(
                "cli.data-rocr-knows",
                processors = rocm_probe::i18n::list(&added)
            )
        } else {
            msg!(
                "cli.data-rocr-adds",
                processors = rocm_probe::i18n::list(&added)
            )
        };
        if !dropped.is_empty() {
            what.push_str(&msg!(
                "cli.data-rocr-drops",
                processors = rocm_probe::i18n::list(&dropped)
            ));
        }
        writeln!(out)?;
        writeln!(out, "ROCm {}", r.lines())?;
        writeln!(out, "  {}", render::wrap(&what, 92).replace('\n', "\n  "))?;
        writeln!(out, "  {}", r.source)?;
        before = r.processors;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        render::wrap(
            &msg!("cli.data-rocr-outside", newest = rocr_isa::newest().lines()),
            96
        )
    )?;
    Ok(())
}

fn agents(source: &Source, json: bool, active: &ActiveArgs, out: &mut dyn Write) -> Result<u8> {
    // ROCr's view, when asked: from the live runtime, or a fixture's recorded [active] results.
    let rocr = active
        .options()
        .and_then(|options| match source.fixture_config() {
            Some(c) => c.active.as_ref().and_then(|a| a.rocr.clone()),
            None => {
                let (platform, _) =
                    collect::<rocm_probe::facts::platform::PlatformFacts>(source, ());
                let (installs, _) =
                    collect::<rocm_probe::facts::install::InstallFacts>(source, &platform.env);
                Some(
                    rocm_probe::active::rocr::probe(
                        installs.rocr_library(options.hsa_runtime_lib.as_deref()),
                        &options,
                    )
                    .0,
                )
            }
        });
    let facts = match AgentFacts::gather(source) {
        Ok(facts) => facts,
        Err(e) => {
            if json {
                let mut body = serde_json::json!({
                    "agents": [], "gpus": [], "hives": [], "firmware": [], "telemetry": [],
                });
                if let Some(r) = &rocr {
                    body["rocr"] = serde_json::to_value(r)?;
                }
                return no_kfd_json(source, &e, body, out);
            }
            if let Some(r) = &rocr {
                render::agents::rocr_text(r, out)?;
            }
            return no_kfd(&e);
        }
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    // Firmware versions and telemetry (never read on a runtime-suspended GPU).
    let (fw_versions, _) = collect::<rocm_probe::facts::fw_versions::FwVersionFacts>(
        source,
        (Some(&inventory), Some(&facts)),
    );
    let (telemetry, _) = collect::<rocm_probe::facts::telemetry::TelemetryFacts>(
        source,
        (Some(&inventory), Some(&facts)),
    );
    if json {
        #[derive(serde::Serialize)]
        struct WithRocr<'a> {
            #[serde(flatten)]
            inventory: &'a Inventory,
            firmware: &'a [rocm_probe::facts::fw_versions::GpuFirmwareVersions],
            telemetry: &'a [rocm_probe::facts::telemetry::GpuTelemetry],
            #[serde(skip_serializing_if = "Option::is_none")]
            rocr: Option<&'a rocm_probe::active::RocrResult>,
        }
        let body = WithRocr {
            inventory: &inventory,
            firmware: &fw_versions.gpus,
            telemetry: &telemetry.gpus,
            rocr: rocr.as_ref(),
        };
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &body))?;
        writeln!(out)?;
    } else {
        render::agents::text(&inventory, out)?;
        render::agents::gpu_state(&inventory, &fw_versions, &telemetry, out)?;
        if let Some(r) = &rocr {
            render::agents::rocr_text(r, out)?;
        }
    }
    let code = inventory.exit_code();
    if code != OK {
        stdio::warn(msg!("cli.no-gpu-node", dir = TOPOLOGY_DIR));
    }
    Ok(code)
}

fn topo(
    source: &Source,
    format: crate::args::TopoFormat,
    nodes: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    let facts = match AgentFacts::gather(source) {
        Ok(facts) => facts,
        Err(e) if format == crate::args::TopoFormat::Json => {
            let empty = rocm_probe::facts::topo::matrix(&rocm_probe::Topology::default());
            return no_kfd_json(source, &e, serde_json::to_value(empty)?, out);
        }
        Err(e) => return no_kfd(&e),
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    let m = rocm_probe::facts::topo::matrix(&facts.topology);
    match format {
        crate::args::TopoFormat::Text => {
            render::topo::text(&m, &inventory, nodes, render::width(), out)?;
        }
        crate::args::TopoFormat::Dot => {
            write!(out, "{}", rocm_probe::facts::topo::dot(&m, &inventory))?
        }
        crate::args::TopoFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &Document::new(source, &m))?;
            writeln!(out)?;
        }
    }
    Ok(inventory.exit_code())
}

fn ps(source: &Source, json: bool, out: &mut dyn Write) -> Result<u8> {
    // The topology is read for its `gpu_id`s; its problems are the business of `agents`.
    let topology = match collect::<rocm_probe::Topology>(source, Scope::Full).0 {
        Ok(t) => t,
        Err(e) if json => {
            let empty = rocm_probe::facts::process::Processes::default();
            return no_kfd_json(source, &e, serde_json::to_value(empty)?, out);
        }
        Err(e) => return no_kfd(&e),
    };
    let (ps, problems) = collect::<rocm_probe::facts::process::Processes>(source, &topology);
    let ps = ps
        .map(|ps| rocm_probe::facts::process::Processes { problems, ..ps })
        .unwrap_or_default();
    for line in rocm_probe::source::problem::warnings(&ps.problems) {
        stdio::warn(msg!("cli.warning", text = line));
    }
    if json {
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &ps))?;
        writeln!(out)?;
    } else {
        // The names need only the topology already read (README "Which GPU is which").
        let inventory = Inventory::from_facts(&AgentFacts {
            topology,
            ..AgentFacts::default()
        });
        render::ps::text(&ps, &inventory, out)?;
    }
    Ok(OK)
}

fn targets(source: &Source, full: bool, out: &mut dyn Write) -> Result<u8> {
    let facts = match AgentFacts::gather_targets(source, full) {
        Ok(facts) => facts,
        Err(e) => return no_kfd(&e),
    };
    let inventory = Inventory::from_facts(&facts);
    warn_problems(&inventory);
    let lines = inventory.targets(full);
    if lines.is_empty() {
        stdio::warn(msg!("cli.no-gpu-node", dir = TOPOLOGY_DIR));
        return Ok(NOT_FOUND);
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(OK)
}

fn inspect(
    source: &Source,
    files: &[std::path::PathBuf],
    targets: &[String],
    json: bool,
    extract: Option<&std::path::Path>,
    disasm: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    use rocm_probe::codeobject::{self, Gpu, InspectReport};
    let (gpus, no_gpus) = if targets.is_empty() {
        match AgentFacts::gather_targets(source, true) {
            Ok(facts) => {
                let inventory = Inventory::from_facts(&facts);
                warn_problems(&inventory);
                let gpus = inventory.code_object_gpus();
                let why = gpus
                    .is_empty()
                    .then(|| msg!("cli.no-gpu-node", dir = TOPOLOGY_DIR));
                (gpus, why)
            }
            Err(error) => (Vec::new(), Some(msg!("cli.no-kfd", error))),
        }
    } else {
        let gpus = targets
            .iter()
            .map(|t| Gpu::from_target_id(t))
            .collect::<Result<Vec<_>, _>>()?;
        (gpus, None)
    };
    let opened = files
        .iter()
        .map(codeobject::CodeObjectFile::open)
        .collect::<Result<Vec<_>, _>>()?;
    // Progress on stderr, only for a person watching: a terminal, several files, and enough
    // bytes that reading them takes a moment (headers only, but gigabyte libraries on a cold
    // disk still take seconds).
    let total: u64 = opened.iter().map(codeobject::CodeObjectFile::len).sum();
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && opened.len() > 1
        && total > 256 << 20;
    let mut inspections = Vec::with_capacity(opened.len());
    // Every listing is held until it is printed: one budget for the whole run, not per file.
    let mut listing = codeobject::ListingBudget::default();
    for (i, file) in opened.iter().enumerate() {
        if progress {
            let line = msg!(
                "cli.inspecting",
                n = i + 1,
                total = opened.len(),
                path = file.path().display()
            );
            stdio::progress(format_args!("\r\x1b[K{line}"));
        }
        inspections.push(file.inspect_within(&mut listing)?);
    }
    if progress {
        stdio::progress("\r\x1b[K");
    }
    if let Some(dir) = extract {
        rocm_probe::source::atomic::output_dir(dir, false)
            .map_err(|e| option_error("--extract", dir, &e))?;
        let mut budget = codeobject::extract::Budget::default();
        for (file, inspection) in opened.iter().zip(&inspections) {
            for x in codeobject::extract::extract_within(file, inspection, dir, &mut budget)? {
                stdio::warn(msg!(
                    "cli.extracted",
                    path = x.path.display(),
                    size = x.size,
                    bundle = x.bundle,
                    target = &x.target
                ));
            }
        }
    }
    if disasm {
        let Some(gpu) = gpus.first() else {
            anyhow::bail!(msg!("cli.disasm-needs-gpu"));
        };
        return crate::disasm::disassemble(&opened, &inspections, gpu, source, out);
    }
    let report = InspectReport::new(inspections, gpus, no_gpus);
    if json {
        serde_json::to_writer_pretty(&mut *out, &Document::new(source, &report))?;
        writeln!(out)?;
    } else {
        render::inspect::text(&report, out)?;
    }
    if let Some(why) = &report.no_gpus {
        stdio::warn(msg!("cli.no-verdicts", why));
    }
    Ok(report.exit_code())
}

/// No readable topology: one line, exit 1 — a machine without a GPU driver is an answer, not
/// an error of the probe.
fn no_kfd(err: &ReadError) -> Result<u8> {
    let why = if err.is_not_found() {
        msg!("cli.kfd-not-loaded")
    } else {
        msg!("cli.topology-unreadable")
    };
    stdio::warn(msg!("cli.no-kfd-why", error = err, why));
    Ok(NOT_FOUND)
}

/// No KFD, asked for JSON: the command's document with nothing in its lists and `error` saying
/// why (`kind` `kfd-not-loaded` or `topology-unreadable`, the path, the sentence), so that a
/// script reading stdout gets a document, not nothing. The warning goes to stderr as without
/// `--json`; the exit code is the same.
fn no_kfd_json(
    source: &Source,
    err: &ReadError,
    mut body: serde_json::Value,
    out: &mut dyn Write,
) -> Result<u8> {
    let (kind, why) = if err.is_not_found() {
        ("kfd-not-loaded", msg!("cli.kfd-not-loaded"))
    } else {
        ("topology-unreadable", msg!("cli.topology-unreadable"))
    };
    let message = msg!("cli.no-kfd-why", error = err, why);
    if let Some(map) = body.as_object_mut() {
        map.insert(
            "error".to_owned(),
            serde_json::json!({"kind": kind, "path": TOPOLOGY_DIR, "message": message}),
        );
    }
    serde_json::to_writer_pretty(&mut *out, &Document::new(source, &body))?;
    writeln!(out)?;
    no_kfd(err)
}

fn warn_problems(inventory: &Inventory) {
    for line in rocm_probe::source::problem::warnings(&inventory.problems) {
        stdio::warn(msg!("cli.warning", text = line));
    }
}

/// An option's file could not be used: `--output PATH: why`.
pub fn option_error(option: &str, path: &std::path::Path, e: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(msg!(
        "cli.option-path-error",
        option,
        path = path.display(),
        error = os_error(e)
    ))
}

/// Why a file is not JSON: serde_json's own words in English; in Chinese its kind of error and
/// where.
fn json_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    if rocm_probe::i18n::current() == rocm_probe::i18n::Lang::En {
        return e.to_string();
    }
    let (line, column) = (e.line(), e.column());
    match e.classify() {
        Category::Syntax => msg!("cli.json-syntax", line, column),
        Category::Eof => msg!("cli.json-eof", line, column),
        Category::Data => msg!("cli.json-data", line, column),
        Category::Io => e.to_string(),
    }
}
