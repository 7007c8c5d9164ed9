//! Every remedy step of every fixture's report, in English and Chinese, is usable as given: its
//! command passes shellcheck (Debian's `shellcheck`, installed by `scripts/test`), ends in no
//! punctuation, spells placeholders `<like-this>`, and is the same in both languages; the steps a
//! reader is shown first hold no step twice (the variants of one step for several distribution
//! families are one step); no report gives opposite steps (set and unset one variable, hide and
//! use one GPU) on one object; and a machine whose os-release names its family gets only that
//! family's variants, one that does not every family's.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::{Command, Stdio};

use rocm_probe::Report;
use rocm_probe::facts::os_release::Distro;
use rocm_probe::finding::Action;
use rocm_probe::i18n::{Lang, scoped};

fn reports(lang: Lang) -> Vec<(String, Report)> {
    scoped(lang, rocm_probe_tests::reports)
}

/// The English report of a machine tree made by a test.
fn english_report(root: impl AsRef<std::path::Path>) -> Report {
    let source = rocm_probe::Source::fixture(root).unwrap();
    scoped(Lang::En, || {
        Report::collect(&source, rocm_probe::report::Options::default())
    })
}

/// `<like-this>` placeholders replaced by a word, so that shellcheck reads them as one.
fn filled(command: &str) -> String {
    let mut out = String::new();
    let mut rest = command;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('>').map(|c| open + c);
        let Some(close) = close else {
            out.push_str(&rest[open..]);
            return out;
        };
        let name = &rest[open + 1..close];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "placeholder <{name}> is not spelled <like-this>: {command}"
        );
        out.push_str("PLACEHOLDER");
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn shellcheck(command: &str) -> Result<(), String> {
    let mut child = Command::new("shellcheck")
        .args(["--shell=bash", "--severity=style", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("shellcheck: {e} (scripts/test installs Debian's shellcheck)"))?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("#!/bin/bash\n{command}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[test]
fn every_command_is_copyable_and_passes_shellcheck() {
    let mut commands: BTreeMap<String, String> = BTreeMap::new();
    let en = reports(Lang::En);
    let zh = reports(Lang::Zh);
    for ((name, e), (_, z)) in en.iter().zip(&zh) {
        let steps = |r: &Report| -> Vec<(String, Option<String>)> {
            r.findings
                .iter()
                .flat_map(|f| {
                    f.remedy_steps.iter().map(|s| {
                        (
                            format!("{} {:?} {} {:?}", f.id, s.action, s.object, s.distro),
                            s.command.clone(),
                        )
                    })
                })
                .collect()
        };
        assert_eq!(steps(e), steps(z), "{name}: the languages give other steps");
        for (_, command) in steps(e) {
            let Some(c) = command else { continue };
            assert_eq!(c.trim(), c, "{name}: {c:?}");
            assert!(
                !c.ends_with(['.', ',', ';', ':', '。', '，', '；']),
                "{name}: {c:?} ends in punctuation"
            );
            assert!(!c.contains(['{', '}', '`']), "{name}: {c:?}");
            commands.entry(c).or_insert_with(|| name.clone());
        }
    }
    assert!(
        commands.len() >= 4,
        "only {} distinct commands: {commands:?}",
        commands.len()
    );
    for (c, name) in &commands {
        if let Err(e) = shellcheck(&filled(c)) {
            panic!("{name}: `{c}` fails shellcheck:\n{e}");
        }
    }
}

#[test]
fn no_step_twice_in_what_is_shown_first_and_no_opposite_steps() {
    for (name, r) in reports(Lang::En) {
        let mut shown = BTreeSet::new();
        for f in r.advice() {
            for s in &f.remedy_steps {
                // Fedora's and SUSE's `dracut --force` are two variants of one step, not a
                // step given twice: the family is part of what a step is.
                assert!(
                    shown.insert((s.action, s.object.clone(), s.command.clone(), s.distro)),
                    "{name}: {} repeats the step {:?} {}",
                    f.id,
                    s.action,
                    s.object
                );
            }
        }
        let all: BTreeSet<(Action, &str)> = r
            .findings
            .iter()
            .flat_map(|f| f.remedy_steps.iter().map(|s| (s.action, s.object.as_str())))
            .collect();
        for (action, object) in &all {
            if let Some(opposite) = action.opposite() {
                assert!(
                    !all.contains(&(opposite, object)),
                    "{name}: {action:?} and {opposite:?} on {object}"
                );
            }
        }
    }
}

#[test]
fn variants_follow_the_machines_os_release() {
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for (name, dir) in rocm_probe_tests::fixtures() {
        let source = rocm_probe::Source::fixture(&dir).expect("fixture.toml parses");
        let facts = rocm_probe::Facts::collect(&source);
        let r = Report::from_facts(&facts, rocm_probe::report::Options::default());
        let family = facts.os_release.as_ref().and_then(|o| o.distro);
        for f in &r.findings {
            let given: BTreeSet<Distro> = f.remedy_steps.iter().filter_map(|s| s.distro).collect();
            if given.is_empty() {
                continue;
            }
            match family {
                Some(d) => {
                    assert_eq!(given, BTreeSet::from([d]), "{name}: {}", f.id);
                    known.push(format!("{name} {}", f.id));
                }
                None => {
                    assert_eq!(given, BTreeSet::from(Distro::ALL), "{name}: {}", f.id);
                    unknown.push(format!("{name} {}", f.id));
                }
            }
        }
    }
    // Both cases are exercised by committed fixtures.
    assert!(known.len() >= 2, "machines with a known family: {known:?}");
    assert!(!unknown.is_empty(), "machines without os-release: none");
}

#[test]
fn the_mok_to_enroll_is_the_one_the_distributions_dkms_signs_with() {
    let key = |fixture: &str| -> Vec<String> {
        let r = scoped(Lang::En, || rocm_probe_tests::report(fixture));
        let f = rocm_probe_tests::finding(&r, "driver.secure-boot");
        f.remedy_steps
            .iter()
            .filter(|s| s.action == Action::EnrollKey)
            .filter_map(|s| s.command.clone())
            .collect()
    };
    // No os-release: upstream dkms's default (Debian, Fedora, openSUSE, Arch).
    assert_eq!(
        key("secure-boot-unsigned-dkms"),
        ["sudo mokutil --import /var/lib/dkms/mok.pub"]
    );
    // Ubuntu 24.10: the key update-secureboot-policy made.
    assert_eq!(
        key("ubuntu-secure-boot-dkms"),
        ["sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"]
    );
}

/// A machine's file names and command-line words reach a command only when they are plain:
/// a blacklist file whose name the shell would read, or a parameter that blacklists another
/// module too, gets a step in words only.
#[test]
fn only_plain_paths_and_whole_parameters_become_commands() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("sys/module/snd_hda_intel/initstate", "live\n");
    write("etc/modprobe.d/blacklist-amdgpu.conf", "blacklist amdgpu\n");
    write("etc/modprobe.d/x $(reboot).conf", "blacklist amdgpu\n");
    write(
        "proc/cmdline",
        "ro quiet modprobe.blacklist=nouveau,amdgpu module_blacklist=amdgpu\n",
    );
    write("etc/os-release", "ID=fedora\n");
    let r = english_report(dir.path());
    let f = rocm_probe_tests::finding(&r, "driver.amdgpu-blacklisted");
    let step = |action: Action, object: &str| {
        f.remedy_steps
            .iter()
            .filter(|s| s.action == action && s.object == object)
            .map(|s| s.command.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        step(Action::Unblacklist, "/etc/modprobe.d/blacklist-amdgpu.conf"),
        [Some(
            "sudoedit /etc/modprobe.d/blacklist-amdgpu.conf".to_owned()
        )]
    );
    assert_eq!(
        step(Action::Unblacklist, "/etc/modprobe.d/x $(reboot).conf"),
        [None]
    );
    assert_eq!(
        step(Action::KernelParameter, "modprobe.blacklist=nouveau,amdgpu"),
        [None]
    );
    // Fedora: one grubby command removes the parameter; then dracut, then one reboot.
    assert_eq!(
        step(Action::KernelParameter, "module_blacklist=amdgpu"),
        [Some(
            "sudo grubby --update-kernel=ALL --remove-args=module_blacklist=amdgpu".to_owned()
        )]
    );
    assert_eq!(
        step(Action::RebuildInitramfs, "initramfs"),
        [Some("sudo dracut --force".to_owned())]
    );
    assert_eq!(
        f.remedy_steps
            .iter()
            .filter(|s| s.action == Action::Reboot)
            .count(),
        1
    );
}

#[test]
fn shellcheck_catches_what_it_should() {
    // The oracle itself: an unquoted variable is a finding, the quoted form is not.
    assert!(shellcheck("sudo usermod -aG render $USER").is_err());
    assert!(shellcheck("sudo usermod -aG render \"$USER\"").is_ok());
    assert_eq!(
        filled("sudo modprobe <module>"),
        "sudo modprobe PLACEHOLDER"
    );
}

/// A committed fixture copied with an `/etc/os-release` of `os`: the steps `id` gives there,
/// as (family, command).
fn steps_on(fixture: &str, os: &str, id: &str) -> Vec<(Option<Distro>, Option<String>)> {
    let dir = rocm_probe_tests::copy_fixture(fixture);
    let root = dir.path().to_path_buf();
    std::fs::write(root.join("etc/os-release"), os).unwrap();
    let r = english_report(&root);
    rocm_probe_tests::finding(&r, id)
        .remedy_steps
        .iter()
        .map(|s| (s.distro, s.command.clone()))
        .collect()
}

/// Package steps give the machine's package manager and the package of the install's origin:
/// AMD's thunk for an /opt install on Fedora, and in words on Arch (AMD publishes no Arch
/// packages); Arch's own ROCm runtime when none is installed.
#[test]
fn package_steps_follow_the_family_and_the_install() {
    assert_eq!(
        steps_on("thunk-missing", "ID=fedora\n", "thunk.missing"),
        [(
            Some(Distro::Fedora),
            Some("sudo dnf install hsakmt-roct".to_owned())
        )]
    );
    assert_eq!(
        steps_on("thunk-missing", "ID=arch\n", "thunk.missing"),
        [(Some(Distro::Arch), None)]
    );
    assert_eq!(
        steps_on(
            "no-rocm-userspace",
            "ID=endeavouros\nID_LIKE=arch\n",
            "runtime.no-rocm"
        ),
        [(
            Some(Distro::Arch),
            Some("sudo pacman -S rocm-hip-runtime".to_owned())
        )]
    );
    assert_eq!(
        steps_on(
            "hipblas-without-rocblas",
            "ID=opensuse-leap\nID_LIKE=\"suse opensuse\"\n",
            "libraries.hip-wrapper-without-backend"
        ),
        [(
            Some(Distro::Suse),
            Some("sudo zypper install rocblas".to_owned())
        )]
    );
}

/// A variable's value from the machine reaches an `export` only when plain: an install prefix
/// the shell would read leaves `unset` as the step.
#[test]
fn environment_steps_take_only_plain_values() {
    let dir = rocm_probe_tests::copy_fixture("hip-path-stale");
    let root = dir.path().to_path_buf();
    let step = |root: &std::path::Path| {
        let r = english_report(root);
        let f = rocm_probe_tests::finding(&r, "runtime.rocm-path-invalid");
        // Both times the prose names the install a process uses.
        assert!(
            f.remedy
                .as_deref()
                .unwrap()
                .starts_with("Set HIP_PATH=/opt/rocm"),
            "{:?}",
            f.remedy
        );
        f.remedy_steps
            .iter()
            .map(|s| (s.action, s.command.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        step(&root),
        [(
            Action::SetEnv,
            Some("export HIP_PATH=/opt/rocm-6.2.0".to_owned())
        )]
    );
    // The same install under a name with a space in it.
    std::fs::rename(root.join("opt/rocm-6.2.0"), root.join("opt/rocm 6.2.0")).unwrap();
    std::fs::remove_file(root.join("opt/rocm")).unwrap();
    std::os::unix::fs::symlink("rocm 6.2.0", root.join("opt/rocm")).unwrap();
    assert_eq!(
        step(&root),
        [(Action::UnsetEnv, Some("unset HIP_PATH".to_owned()))]
    );
}

/// One global override of another family on both GPUs of hsa-override-igpu (the 780M iGPU and
/// a gfx1100 dGPU run as gfx1030): two wrong-family findings and the iGPU's, and the variable
/// is unset by one step only.
#[test]
fn a_wrong_override_is_unset_once() {
    let dir = rocm_probe_tests::copy_fixture("hsa-override-igpu");
    let root = dir.path().to_path_buf();
    let toml = std::fs::read_to_string(root.join("fixture.toml")).unwrap();
    let changed = toml.replace(
        "HSA_OVERRIDE_GFX_VERSION = \"11.0.0\"",
        "HSA_OVERRIDE_GFX_VERSION = \"10.3.0\"",
    );
    assert_ne!(toml, changed);
    std::fs::write(root.join("fixture.toml"), changed).unwrap();
    let r = english_report(&root);
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id).collect();
    assert_eq!(
        ids.iter()
            .filter(|id| **id == "runtime.hsa-override-wrong-family")
            .count(),
        2,
        "{ids:?}"
    );
    assert!(ids.contains(&"runtime.hsa-override-igpu"), "{ids:?}");
    let unsets: Vec<&str> = r
        .findings
        .iter()
        .flat_map(|f| f.remedy_steps.iter().map(move |s| (f.id, s)))
        .filter(|(_, s)| s.action == Action::UnsetEnv && s.object == "HSA_OVERRIDE_GFX_VERSION")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(unsets, ["runtime.hsa-override-igpu"]);
}

/// A per-node override on a CPU node moves to the one GPU's node only when it is the one such
/// variable and that GPU's own is unset: otherwise which value goes where is the user's call.
#[test]
fn a_per_node_override_moves_only_when_unambiguous() {
    let sets = |extra: &str| -> Vec<String> {
        let dir = rocm_probe_tests::copy_fixture("hsa-override-node-0-rx6600");
        let root = dir.path().to_path_buf();
        let toml = std::fs::read_to_string(root.join("fixture.toml")).unwrap();
        let line = "HSA_OVERRIDE_GFX_VERSION_0 = \"10.3.0\"\n";
        assert!(toml.contains(line));
        std::fs::write(
            root.join("fixture.toml"),
            toml.replace(line, &format!("{line}{extra}")),
        )
        .unwrap();
        let r = english_report(&root);
        let found: Vec<&rocm_probe::Finding> = r
            .findings
            .iter()
            .filter(|f| f.id == "runtime.hsa-override-node-not-gpu")
            .collect();
        // Node 0's variable is reported every time; only its steps differ.
        assert!(!found.is_empty(), "{extra}");
        found
            .iter()
            .flat_map(|f| &f.remedy_steps)
            .filter(|s| s.action == Action::SetEnv)
            .filter_map(|s| s.command.clone())
            .collect()
    };
    assert_eq!(sets(""), ["export HSA_OVERRIDE_GFX_VERSION_1=10.3.0"]);
    // Two variables read by no GPU (node 5 does not exist).
    assert!(sets("HSA_OVERRIDE_GFX_VERSION_5 = \"11.0.0\"\n").is_empty());
    // The GPU's own variable is set already.
    assert!(sets("HSA_OVERRIDE_GFX_VERSION_1 = \"10.3.0\"\n").is_empty());
}

/// Two libraries that load only with XNACK on (library-xnack-plus-only's rocFFT, and the same
/// file as rocSPARSE): two findings, one `export HSA_XNACK=1`.
#[test]
fn a_step_several_libraries_need_is_given_once() {
    let dir = rocm_probe_tests::copy_fixture("library-xnack-plus-only");
    let root = dir.path().to_path_buf();
    let lib = root.join("opt/rocm-6.2.0/lib");
    std::fs::copy(
        lib.join("librocfft.so.0.1.60200"),
        lib.join("librocsparse.so.1.0.60200"),
    )
    .unwrap();
    let r = english_report(&root);
    let found: Vec<&rocm_probe::Finding> = r
        .findings
        .iter()
        .filter(|f| f.id == "libraries.code-object-needs-feature-change")
        .collect();
    assert_eq!(found.len(), 2, "{:#?}", r.findings);
    let steps: Vec<&str> = found
        .iter()
        .flat_map(|f| &f.remedy_steps)
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert_eq!(steps, ["export HSA_XNACK=1"]);
}
