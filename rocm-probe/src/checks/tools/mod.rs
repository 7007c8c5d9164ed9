//! Layer 8: which tools are there, under which names, from which install.
//!
//! Nothing here needs a GPU or a working lower layer: the findings are about files on disk and
//! PATH, so they stay even when layer 1 fails (a profiler is worth knowing about either way).
//! None of them is a warning — a tool does not make GPU code run or fail.

pub mod rules;

use crate::facts::Facts;
use crate::facts::install::InstallFacts;
use crate::facts::tools::{FAMILIES, Family, FoundTool, Standing, ToolFacts};
use crate::finding::{
    Action, Evidence, Finding, RemedyStep, TOOLS_AMDSMI_BUILTIN_DRIVER, TOOLS_DEPRECATED_PROFILER,
    TOOLS_FILES_MALFORMED, TOOLS_FILES_UNREADABLE, TOOLS_FOUND, TOOLS_NONE, TOOLS_NOT_CAPTURED,
    TOOLS_RENAMED_PROFILER, TOOLS_ROCM_SMI_WITHOUT_AMD_SMI, TOOLS_VERSION_MISMATCH,
};
use crate::i18n;
use crate::msg;
use crate::source::problem::Problem;

/// Layer 8 findings; `below` are the findings of layers 1–7 (unused: see the module docs).
pub fn check(f: &Facts, _below: &[Finding]) -> Vec<Finding> {
    let t = &f.tools;
    if !t.captured {
        return vec![TOOLS_NOT_CAPTURED.finding(msg!("tools.not-captured"))];
    }
    let mut out = Vec::new();
    if t.found.is_empty() {
        out.push(none(t));
    } else {
        out.push(found(t, &f.installs));
        for family in FAMILIES.iter().filter(|x| x.standing == Standing::OldName) {
            renamed(t, &f.installs, family, &mut out);
        }
        deprecated(f, &mut out);
        smi(t, &f.installs, &mut out);
        amdsmi_builtin_driver(f, &mut out);
        mismatch(t, &f.installs, &mut out);
    }
    let problems: Vec<&Problem> = f.problems.tools.iter().collect();
    out.extend(super::hardware::problems(
        &problems,
        &msg!("tools.problem-files"),
        [TOOLS_FILES_UNREADABLE, TOOLS_FILES_MALFORMED],
    ));
    out
}

fn none(t: &ToolFacts) -> Finding {
    let names: Vec<&str> = FAMILIES
        .iter()
        .filter(|x| x.standing == Standing::Current)
        .map(|x| x.name)
        .collect();
    let places = if t.path_env.is_some() {
        msg!("tools.none-places-path")
    } else {
        msg!("tools.none-places-no-path")
    };
    let mut finding = TOOLS_NONE
        .finding(msg!("tools.none", names = i18n::list(&names), places))
        .with_all(
            t.looked_in
                .iter()
                .map(|d| Evidence::new(d.clone(), msg!("tools.none-in-dir"))),
        )
        .with_all(t.absent.iter().map(Evidence::absent));
    finding = match &t.path_env {
        Some(p) => finding.with(Evidence::new("env:PATH", p.clone())),
        None => finding.with(Evidence::absent("env:PATH")),
    };
    finding.remedy(msg!("tools.none-remedy"))
}

/// Where a tool comes from: its install, else its directory.
fn origin(tool: &FoundTool, installs: &InstallFacts) -> String {
    match tool.install.and_then(|i| installs.installs.get(i)) {
        Some(i) => i.describe(),
        None => tool.dir.clone(),
    }
}

/// `omniperf 2.0.1`, or the bare family name.
fn with_version(family: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{family} {v}"),
        None => family.to_owned(),
    }
}

/// One line about a command: family, versions, install, link and PATH standing.
fn describe(tool: &FoundTool, t: &ToolFacts, installs: &InstallFacts) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.push(match (&tool.version, &tool.version_source) {
        (Some(version), Some(source)) => msg!(
            "tools.describe-version",
            family = tool.family,
            version,
            source
        ),
        _ => tool.family.to_owned(),
    });
    parts.push(match tool.install.and_then(|i| installs.installs.get(i)) {
        Some(i) => i.describe(),
        None => msg!("tools.describe-no-install"),
    });
    if let Some(link) = &tool.link {
        parts.push(format!("→ {link}"));
    }
    if t.path_env.is_some() {
        parts.push(match tool.path_index {
            Some(n) => {
                let entry = tool
                    .path_entry
                    .as_ref()
                    .map(|dir| msg!("tools.describe-path-dir", dir))
                    .unwrap_or_default();
                match t.runs(tool.name) {
                    Some(r) if r.path != tool.path => msg!(
                        "tools.describe-path-shadowed",
                        n = n + 1,
                        entry,
                        by = r.path
                    ),
                    _ => msg!("tools.describe-path", n = n + 1, entry),
                }
            }
            None => msg!("tools.describe-not-on-path"),
        });
    }
    parts.join("; ")
}

fn found(t: &ToolFacts, installs: &InstallFacts) -> Finding {
    // Origins in order of first appearance; in each, families in report order.
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for tool in &t.found {
        let o = origin(tool, installs);
        if !groups.iter().any(|(g, _)| *g == o) {
            groups.push((o, Vec::new()));
        }
    }
    for (o, names) in &mut groups {
        for family in &FAMILIES {
            let mine: Vec<&FoundTool> = t
                .of_family(family.name)
                .filter(|x| origin(x, installs) == *o)
                .collect();
            if !mine.is_empty() {
                let version = mine.iter().find_map(|x| x.version.as_deref());
                names.push(with_version(family.name, version));
            }
        }
    }
    let summary = groups
        .iter()
        .map(|(origin, names)| msg!("tools.found-group", names = i18n::list(names), origin))
        .collect::<Vec<_>>()
        .join("; ");
    TOOLS_FOUND.finding(msg!("tools.found", summary)).with_all(
        t.found
            .iter()
            .map(|x| Evidence::new(x.path.clone(), describe(x, t, installs))),
    )
}

/// The package an old or new profiler name is installed by (legacy-rocm-build issues 4082 and
/// 4083 name them).
fn package(family: &str) -> &str {
    match family {
        "rocprof-compute" => "rocprofiler-compute",
        "rocprof-sys" => "rocprofiler-systems",
        other => other,
    }
}

fn renamed(t: &ToolFacts, installs: &InstallFacts, family: &Family, out: &mut Vec<Finding>) {
    let old: Vec<&FoundTool> = t.of_family(family.name).collect();
    let (Some(first), Some(new)) = (old.first(), family.renamed_to) else {
        return;
    };
    // One command by its names, several by a glob: `omniperf` → `rocprof-compute`,
    // `omnitrace*` → `rocprof-sys*`.
    let (was, becomes) = if old.len() == 1 {
        let becomes = family
            .new_binary(first.name)
            .unwrap_or_else(|| new.to_owned());
        (first.name.to_owned(), becomes)
    } else {
        (format!("{}*", family.name), format!("{new}*"))
    };
    let mut dirs: Vec<String> = Vec::new();
    for x in &old {
        let d = match x.install.and_then(|i| installs.installs.get(i)) {
            Some(i) => match i.version {
                Some(version) => msg!("tools.renamed-dir", dir = x.dir, version),
                None => msg!("tools.renamed-dir-unknown", dir = x.dir),
            },
            None => x.dir.clone(),
        };
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    let version = old
        .iter()
        .find_map(|x| x.version.as_deref())
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let new_found: Vec<&FoundTool> = t.of_family(new).collect();
    let also = if new_found.is_empty() {
        msg!("tools.renamed-new-absent", new)
    } else {
        let mut at: Vec<&str> = new_found.iter().map(|x| x.dir.as_str()).collect();
        at.dedup();
        msg!("tools.renamed-new-present", new, dirs = i18n::list(&at))
    };
    let summary = if old.len() == 1 {
        msg!(
            "tools.renamed-one",
            was,
            version,
            dirs = i18n::list(&dirs),
            title = family.title,
            becomes,
            also
        )
    } else {
        msg!(
            "tools.renamed-many",
            was,
            version,
            dirs = i18n::list(&dirs),
            title = family.title,
            becomes,
            also
        )
    };
    let mut finding = TOOLS_RENAMED_PROFILER.finding(summary);
    for x in &old {
        let new_name = family.new_binary(x.name).unwrap_or_else(|| new.to_owned());
        finding = finding.with(Evidence::new(
            x.path.clone(),
            msg!(
                "tools.renamed-old-name",
                new = new_name,
                tool = describe(x, t, installs)
            ),
        ));
    }
    for x in &new_found {
        finding = finding.with(Evidence::new(x.path.clone(), describe(x, t, installs)));
    }
    let old_package = family.name;
    let new_package = package(new);
    let remedy = if new_found.is_empty() {
        msg!(
            "tools.renamed-remedy-install",
            was,
            becomes,
            new_package,
            old_package
        )
    } else {
        msg!("tools.renamed-remedy-use", was, becomes, old_package)
    };
    out.push(finding.remedy(remedy));
}

fn deprecated(f: &Facts, out: &mut Vec<Finding>) {
    let (t, installs) = (&f.tools, &f.installs);
    if t.has("rocprofv3") {
        return;
    }
    let legacy: Vec<&FoundTool> = t
        .found
        .iter()
        .filter(|x| {
            crate::facts::tools::family(x.family).is_some_and(|f| f.standing == Standing::Legacy)
        })
        .collect();
    if legacy.is_empty() {
        return;
    }
    let mut names: Vec<&str> = legacy.iter().map(|x| x.name).collect();
    names.dedup();
    let newest = legacy
        .iter()
        .filter_map(|x| x.rocm_version)
        .max()
        .map(|version| msg!("tools.deprecated-newest", version))
        .unwrap_or_default();
    let summary = if names.len() == 1 {
        msg!("tools.deprecated-one", name = names[0], newest)
    } else {
        msg!(
            "tools.deprecated-many",
            names = i18n::join(&names, &msg!("tools.and")),
            newest
        )
    };
    out.push(
        TOOLS_DEPRECATED_PROFILER
            .finding(summary)
            .with_all(
                legacy
                    .iter()
                    .map(|x| Evidence::new(x.path.clone(), describe(x, t, installs))),
            )
            .remedy(msg!("tools.deprecated-remedy"))
            .with_steps(
                crate::facts::os_release::families(f.os_release.as_ref())
                    .into_iter()
                    .map(|d| {
                        // AMD's repositories name the package rocprofiler-sdk for apt, dnf
                        // and zypper (ROCprofiler-SDK's install guide); Arch's extra
                        // repository packages it under the same name.
                        RemedyStep::run(
                            Action::Install,
                            "rocprofiler-sdk",
                            d.install("rocprofiler-sdk"),
                            msg!("tools.step-install-rocprofiler-sdk"),
                        )
                        .on(d)
                    }),
            ),
    );
}

fn smi(t: &ToolFacts, installs: &InstallFacts, out: &mut Vec<Finding>) {
    if !t.has("rocm-smi") || t.has("amd-smi") {
        return;
    }
    let paths: Vec<&FoundTool> = t.of_family("rocm-smi").collect();
    out.push(
        TOOLS_ROCM_SMI_WITHOUT_AMD_SMI
            .finding(msg!(
                "tools.rocm-smi-without-amd-smi",
                paths = i18n::list(paths.iter().map(|x| x.path.as_str()))
            ))
            .with_all(
                paths
                    .iter()
                    .map(|x| Evidence::new(x.path.clone(), describe(x, t, installs))),
            )
            .remedy(msg!("tools.rocm-smi-without-amd-smi-remedy")),
    );
}

/// The newest amd-smi release (major, minor) that takes a built-in amdgpu for an absent one.
const AMDSMI_INITSTATE_ONLY: (u32, u32) = (26, 1);

/// `tools.amdsmi-builtin-driver`: amd-smi decides whether amdgpu is loaded from
/// `/sys/module/amdgpu/initstate`, which a kernel with amdgpu built in (`CONFIG_DRM_AMDGPU=y`)
/// does not have, so it stops with "amdgpu not found in modules" while the driver works
/// (ROCm/amdsmi#170, #172, with amd-smi 26.1.0; the check gained a `/sys/class/drm` fallback in
/// ROCm/rocm-systems#2689, merged 2026-01-20, after 26.1). Judged only where KFD shows the
/// driver up and the version is known to be 26.1 or older.
fn amdsmi_builtin_driver(f: &Facts, out: &mut Vec<Finding>) {
    if !f.module.as_ref().is_some_and(|m| m.builtin()) || f.kfd.is_none() {
        return;
    }
    let t = &f.tools;
    let Some(tool) = t
        .runs("amd-smi")
        .or_else(|| t.found.iter().find(|x| x.name == "amd-smi"))
    else {
        return;
    };
    let Some(version) = tool.version.as_deref() else {
        return;
    };
    let release = version.split(['+', '-']).next().unwrap_or_default();
    let mut parts = release.split('.').map(|p| p.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return;
    };
    if (major, minor) > AMDSMI_INITSTATE_ONLY {
        return;
    }
    out.push(
        TOOLS_AMDSMI_BUILTIN_DRIVER
            .finding(msg!(
                "tools.amdsmi-builtin-driver",
                path = tool.path,
                version
            ))
            .with(Evidence::new(
                crate::facts::module::AMDGPU_MODULE,
                msg!("tools.amdsmi-builtin-driver-module"),
            ))
            .with(Evidence::new(
                tool.version_source
                    .clone()
                    .unwrap_or_else(|| tool.path.clone()),
                version.to_owned(),
            ))
            .remedy(msg!("tools.amdsmi-builtin-driver-remedy")),
    );
}

fn mismatch(t: &ToolFacts, installs: &InstallFacts, out: &mut Vec<Finding>) {
    let Some(effective) = installs.effective() else {
        return;
    };
    // The commands PATH runs, grouped by the other install they come from.
    let mut groups: Vec<(usize, Vec<&FoundTool>)> = Vec::new();
    for x in t.found.iter().filter(|x| t.is_first_on_path(x)) {
        let Some(i) = x.install else { continue };
        if installs
            .installs
            .get(i)
            .is_none_or(|other| other.prefix == effective.prefix)
        {
            continue;
        }
        match groups.iter_mut().find(|(g, _)| *g == i) {
            Some((_, v)) => v.push(x),
            None => groups.push((i, vec![x])),
        }
    }
    for (i, tools) in groups {
        let other = &installs.installs[i];
        let names: Vec<&str> = tools.iter().map(|x| x.name).collect();
        let mut finding = TOOLS_VERSION_MISMATCH
            .finding(if names.len() == 1 {
                msg!(
                    "tools.version-mismatch-one",
                    names = i18n::list(&names),
                    other = other.describe(),
                    effective = effective.describe()
                )
            } else {
                msg!(
                    "tools.version-mismatch-many",
                    names = i18n::list(&names),
                    other = other.describe(),
                    effective = effective.describe()
                )
            })
            .with_all(
                tools
                    .iter()
                    .map(|x| Evidence::new(x.path.clone(), describe(x, t, installs))),
            );
        if let Some(p) = &t.path_env {
            finding = finding.with(Evidence::new("env:PATH", p.clone()));
        }
        if let Some(d) = installs.loaded_rocr() {
            if let Some(rocr) = &d.libs.rocr {
                finding = finding.with(Evidence::new(rocr.path(), rocr.describe()));
            }
        }
        out.push(finding.remedy(msg!(
            "tools.version-mismatch-remedy",
            prefix = effective.prefix,
            other = other.describe()
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Status;
    use crate::source::Source;
    use crate::testfs::{link, write};

    fn touch(base: &std::path::Path, rel: &str) {
        write(base, rel, "");
    }

    /// An install of `version` with ROCr, under /opt.
    fn install(b: &std::path::Path, version: &str) {
        let enc: u32 = version
            .split('.')
            .map(|n| n.parse::<u32>().unwrap())
            .fold(0, |a, n| a * 100 + n);
        write(
            b,
            &format!("opt/rocm-{version}/.info/version"),
            &format!("{version}\n"),
        );
        touch(
            b,
            &format!("opt/rocm-{version}/lib/libhsa-runtime64.so.1.14.{enc}"),
        );
        link(
            b,
            &format!("opt/rocm-{version}/lib/libhsa-runtime64.so.1"),
            &format!("libhsa-runtime64.so.1.14.{enc}"),
        );
    }

    fn run(b: &std::path::Path, env: &str) -> Vec<Finding> {
        write(b, "fixture.toml", env);
        let facts = Facts::collect(&Source::fixture(b).unwrap());
        check(&facts, &[])
    }

    fn ids(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.id).collect()
    }

    #[test]
    fn not_captured_without_installs_or_path() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(dir.path(), "");
        assert_eq!(ids(&out), ["tools.not-captured"]);
        assert_eq!(out[0].status, Status::Skip);
    }

    #[test]
    fn none_found_is_information() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "6.2.0");
        let out = run(dir.path(), "");
        assert_eq!(ids(&out), ["tools.none"]);
        assert_eq!(out[0].status, Status::Info);
        assert_eq!(
            out[0].summary,
            "No ROCm tool (rocprofv3, rocprof-compute, rocprof-sys, rocgdb, amd-smi, rocminfo, \
             rocm-smi) found in the installs' bin directories or in /usr/bin (PATH not set): running \
             GPU code needs none"
        );
        assert!(
            out[0]
                .evidence
                .iter()
                .any(|e| e.source == "/opt/rocm-6.2.0/bin" && e.value.is_none())
        );
        assert!(
            out[0]
                .evidence
                .iter()
                .any(|e| e.source == "env:PATH" && e.value.is_none())
        );
    }

    #[test]
    fn renamed_profilers_with_and_without_their_new_names() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        install(b, "6.2.0");
        link(b, "opt/rocm", "rocm-6.2.0");
        touch(b, "opt/rocm-6.2.0/libexec/omniperf/omniperf");
        write(b, "opt/rocm-6.2.0/libexec/omniperf/VERSION", "2.0.1\n");
        link(
            b,
            "opt/rocm-6.2.0/bin/omniperf",
            "../libexec/omniperf/omniperf",
        );
        touch(b, "opt/rocm-6.2.0/bin/omnitrace-run");
        touch(b, "opt/rocm-6.2.0/bin/omnitrace-instrument");
        touch(b, "opt/rocm-6.2.0/bin/rocprofv3");
        touch(b, "usr/local/libexec/rocprofiler-compute/rocprof-compute");
        write(
            b,
            "usr/local/libexec/rocprofiler-compute/VERSION",
            "3.0.0\n",
        );
        link(
            b,
            "usr/local/bin/rocprof-compute",
            "../libexec/rocprofiler-compute/rocprof-compute",
        );
        let out = run(
            b,
            "[env]\nPATH = \"/usr/local/bin:/usr/bin:/opt/rocm/bin\"\n",
        );
        assert_eq!(
            ids(&out),
            [
                "tools.found",
                "tools.renamed-profiler",
                "tools.renamed-profiler"
            ]
        );
        assert_eq!(
            out[0].summary,
            "ROCm tools: rocprof-compute 3.0.0 (/usr/local/bin); rocprofv3, omniperf 2.0.1, \
             omnitrace (ROCm 6.2.0 at /opt/rocm-6.2.0)"
        );
        let perf = &out[1];
        assert_eq!(perf.status, Status::Info);
        assert_eq!(
            perf.summary,
            "omniperf 2.0.1 in /opt/rocm-6.2.0/bin (ROCm 6.2.0) is ROCm Compute Profiler's name \
             before ROCm 6.3, which calls it rocprof-compute; rocprof-compute is installed too, \
             in /usr/local/bin"
        );
        let e = &perf.evidence[0];
        assert_eq!(e.source, "/opt/rocm-6.2.0/bin/omniperf");
        let v = e.value.as_deref().unwrap();
        assert!(v.starts_with("old name of rocprof-compute; omniperf 2.0.1 (from /opt/rocm-6.2.0/libexec/omniperf/VERSION)"), "{v}");
        assert!(v.contains("→ ../libexec/omniperf/omniperf"), "{v}");
        assert!(v.ends_with("PATH entry 3 (/opt/rocm/bin)"), "{v}");
        assert!(
            perf.remedy
                .as_deref()
                .unwrap()
                .contains("omniperf → rocprof-compute")
        );
        let trace = &out[2];
        assert!(
            trace.summary.starts_with(
                "omnitrace* in /opt/rocm-6.2.0/bin (ROCm 6.2.0) are ROCm Systems Profiler's \
                 commands before ROCm 6.3, which calls them rocprof-sys*;"
            ),
            "{}",
            trace.summary
        );
        assert!(
            trace.summary.ends_with("rocprof-sys is not installed"),
            "{}",
            trace.summary
        );
        assert!(
            trace.evidence[0]
                .value
                .as_deref()
                .unwrap()
                .starts_with("old name of rocprof-sys-run;")
        );
        assert!(
            trace
                .remedy
                .as_deref()
                .unwrap()
                .contains("sudo apt install rocprofiler-systems")
        );
    }

    #[test]
    fn legacy_profilers_and_rocm_smi_alone() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        install(b, "6.1.0");
        touch(b, "opt/rocm-6.1.0/bin/rocprof");
        touch(b, "opt/rocm-6.1.0/bin/rocprofv2");
        touch(b, "usr/bin/rocm-smi");
        let out = run(b, "");
        assert_eq!(
            ids(&out),
            [
                "tools.found",
                "tools.deprecated-profiler",
                "tools.rocm-smi-without-amd-smi"
            ]
        );
        assert_eq!(
            out[1].summary,
            "Only the legacy profilers rocprof and rocprofv2 found (newest install with them: \
             ROCm 6.1.0), not rocprofv3: rocprof and rocprofv2 are being phased out in favour \
             of rocprofv3"
        );
        assert!(
            out[2]
                .summary
                .starts_with("rocm-smi (/usr/bin/rocm-smi) is installed")
        );
        // With rocprofv3 and amd-smi both are quiet.
        touch(b, "opt/rocm-6.1.0/bin/rocprofv3");
        touch(b, "usr/bin/amd-smi");
        assert_eq!(ids(&run(b, "")), ["tools.found"]);
    }

    #[test]
    fn tool_on_path_from_another_install() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        install(b, "6.0.0");
        install(b, "6.2.0");
        link(b, "opt/rocm", "rocm-6.2.0");
        write(b, "etc/ld.so.conf", "/opt/rocm/lib\n");
        touch(b, "opt/rocm-6.0.0/bin/rocprofv3");
        touch(b, "opt/rocm-6.0.0/bin/rocminfo");
        touch(b, "opt/rocm-6.2.0/bin/rocprofv3");
        touch(b, "opt/rocm-6.2.0/bin/rocminfo");
        touch(b, "opt/rocm-6.2.0/bin/rocgdb");
        let out = run(
            b,
            "[env]\nPATH = \"/opt/rocm-6.0.0/bin:/usr/bin:/opt/rocm/bin\"\n",
        );
        assert_eq!(ids(&out), ["tools.found", "tools.version-mismatch"]);
        let m = &out[1];
        assert_eq!(m.status, Status::Info);
        assert_eq!(
            m.summary,
            "rocprofv3, rocminfo on PATH come from ROCm 6.0.0 at /opt/rocm-6.0.0, but a process \
             loads ROCm 6.2.0 at /opt/rocm-6.2.0"
        );
        assert!(
            m.remedy
                .as_deref()
                .unwrap()
                .starts_with("Put /opt/rocm-6.2.0/bin first in PATH")
        );
        let shadowed = out[0]
            .evidence
            .iter()
            .find(|e| e.source == "/opt/rocm-6.2.0/bin/rocminfo")
            .and_then(|e| e.value.as_deref())
            .unwrap();
        assert!(
            shadowed.ends_with(
                "PATH entry 3 (/opt/rocm/bin), shadowed by /opt/rocm-6.0.0/bin/rocminfo"
            ),
            "{shadowed}"
        );
        // PATH in the other order: nothing to say.
        let out = run(b, "[env]\nPATH = \"/opt/rocm/bin:/opt/rocm-6.0.0/bin\"\n");
        assert_eq!(ids(&out), ["tools.found"]);
    }

    #[test]
    fn malformed_version_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        install(b, "6.2.0");
        touch(b, "opt/rocm-6.2.0/libexec/amdsmi_cli/amdsmi_cli.py");
        write(
            b,
            "opt/rocm-6.2.0/libexec/amdsmi_cli/_version.py",
            "print(1)\n",
        );
        link(
            b,
            "opt/rocm-6.2.0/bin/amd-smi",
            "../libexec/amdsmi_cli/amdsmi_cli.py",
        );
        let out = run(b, "");
        assert_eq!(ids(&out), ["tools.found", "tools.files-malformed"]);
        assert_eq!(out[1].status, Status::Warn);
        assert_eq!(
            out[1].evidence[0].source,
            "/opt/rocm-6.2.0/libexec/amdsmi_cli/_version.py"
        );
    }
}
