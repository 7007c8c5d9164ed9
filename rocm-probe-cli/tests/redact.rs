//! Redaction end to end: every class of identifier planted in a fixture is gone from the
//! redacted snapshot (bytes, paths, link targets, `fixture.toml`), from `--format markdown -v`
//! and from `--format html`, while the redacted snapshot still gives the same verdict.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture, probe, run};

const USER: &str = "zorbalina";
const HOST: &str = "quuxhost7";
/// The dGPU's own `unique_id` in `igpu-beside-dgpu` (node 2), and its UUID.
const DGPU_ID: &str = "11673270660693242239";
const DGPU_UUID: &str = "a1ffc9d1799c317f";
/// Planted as the iGPU's `unique_id` (node 1), tab-separated: 0x5eed5eed12345678.
const IGPU_ID: &str = "6840227781351331448";
const IGPU_UUID: &str = "5eed5eed12345678";
/// A UUID prefix that matches no GPU.
const STRAY_UUID: &str = "0badc0de";
const COLON_ID: &str = "77aa88bb99";
const SERIAL: &str = "SN12345XYZ";
const PRODUCT: &str = "PN9988776";

fn planted() -> Vec<&'static str> {
    vec![
        USER, HOST, DGPU_ID, DGPU_UUID, IGPU_ID, IGPU_UUID, STRAY_UUID, COLON_ID, SERIAL, PRODUCT,
    ]
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `igpu-beside-dgpu` with every identifier class planted where the probe reads it.
fn plant() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("m");
    common::copy_tree(&fixture("igpu-beside-dgpu"), &root);
    // A virtualenv under the user's home, in a directory named after the host (one per host
    // on a shared home), that VIRTUAL_ENV names.
    let venv = format!("home/{USER}/{HOST}/tf");
    std::fs::create_dir_all(root.join(&venv).parent().unwrap()).unwrap();
    common::copy_tree(
        &fixture("tensorflow-present").join("home/probe/venvs/tf"),
        &root.join(&venv),
    );
    let toml = std::fs::read_to_string(root.join("fixture.toml")).unwrap();
    let cut = toml.find("[expect]").unwrap_or(toml.len());
    let toml = format!(
        "{}[env]\n\
         ROCR_VISIBLE_DEVICES = \"GPU-{DGPU_UUID},GPU-{IGPU_UUID}\"\n\
         HIP_VISIBLE_DEVICES = \"GPU-{STRAY_UUID}\"\n\
         VIRTUAL_ENV = \"/{venv}\"\n\
         HOME = \"/srv/users/{USER}\"\n\
         USER = \"{USER}\"\n\
         PYTHONPATH = \"/srv/users/{USER}/lib:/{venv}/lib\"\n",
        &toml[..cut]
    );
    std::fs::write(root.join("fixture.toml"), toml).unwrap();
    let props = root.join("sys/class/kfd/kfd/topology/nodes/1/properties");
    let text = std::fs::read_to_string(&props)
        .unwrap()
        .replace("unique_id 0", &format!("unique_id\t{IGPU_ID}"));
    std::fs::write(&props, text).unwrap();
    let group = std::fs::read_to_string(root.join("etc/group")).unwrap();
    let group = group.replace("render:x:109:", &format!("render:x:109:{USER}"));
    write(&root, "etc/group", &format!("{group}{USER}:x:1001:\n"));
    write(
        &root,
        "proc/version",
        &format!("Linux version 6.8.0-45-generic ({USER}@{HOST}) (gcc 13.2.0) #45 SMP\n"),
    );
    write(
        &root,
        "proc/cmdline",
        &format!(
            "BOOT_IMAGE=/vmlinuz quiet unique_id:{COLON_ID} serial_number={SERIAL} \
             product_number {PRODUCT}\n"
        ),
    );
    write(&root, "proc/sys/kernel/hostname", &format!("{HOST}\n"));
    write(&root, "etc/hostname", &format!("{HOST}\n"));
    write(
        &root,
        "sys/class/drm/card1/device/serial_number",
        &format!("{SERIAL}\n"),
    );
    dir
}

/// Every path below `dir` (relative), with each file's bytes or each link's target.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let ft = e.file_type().unwrap();
        let data = if ft.is_symlink() {
            std::fs::read_link(&p)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if ft.is_file() {
            std::fs::read(&p).unwrap()
        } else {
            Vec::new()
        };
        out.push((p.clone(), data));
        if ft.is_dir() {
            out.extend(contents(&p));
        }
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    let lower = text.to_ascii_lowercase();
    for s in planted() {
        assert!(
            !lower.contains(&s.to_ascii_lowercase()),
            "{what} still holds {s:?}:\n{text}"
        );
    }
}

fn verdict_line(markdown: &str) -> String {
    markdown
        .lines()
        .find(|l| l.starts_with("**"))
        .unwrap_or_else(|| panic!("no verdict line:\n{markdown}"))
        .to_owned()
}

#[test]
fn planted_identifiers_survive_nowhere() {
    let dir = plant();
    let root = dir.path().join("m");
    // The plants are seen by the probe: otherwise the test proves nothing.
    let md = run(probe()
        .arg("--root")
        .arg(&root)
        .args(["report", "--format", "markdown", "-v"]));
    let plain = run(probe().arg("--root").arg(&root).args(["report", "-v"]));
    for s in [USER, HOST, DGPU_UUID, IGPU_UUID, STRAY_UUID] {
        assert!(
            plain.stdout.contains(s),
            "the unredacted report does not show {s}"
        );
    }
    assert!(
        md.stdout.contains("<details>"),
        "{}{}",
        md.stdout,
        md.stderr
    );
    assert_clean("markdown", &md.stdout);
    let html = run(probe()
        .arg("--root")
        .arg(&root)
        .args(["report", "--format", "html"]));
    assert!(html.stdout.contains("</html>"), "{}", html.stderr);
    assert_clean("html", &html.stdout);

    let snap = dir.path().join("snap");
    let r = run(probe().arg("--root").arg(&root).arg("snapshot").arg(&snap));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (path, data) in contents(&snap) {
        let rel = path.strip_prefix(&snap).unwrap().to_string_lossy();
        assert_clean("a snapshot path", &rel);
        assert_clean(
            &format!("snapshot file {rel}"),
            &String::from_utf8_lossy(&data),
        );
    }
    // The snapshot is still the same machine: the venv moved with VIRTUAL_ENV, the UUID in
    // ROCR_VISIBLE_DEVICES still picks the same GPUs.
    let md_snap = run(probe()
        .arg("--root")
        .arg(&snap)
        .args(["report", "--format", "markdown", "-v"]));
    assert_eq!(md.code, md_snap.code);
    assert_eq!(verdict_line(&md.stdout), verdict_line(&md_snap.stdout));
    let json = |d: &Path| {
        let r = run(probe().arg("--root").arg(d).arg("--json"));
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let ids: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {}", f["id"], f["status"]))
            .collect();
        (r.code, v["verdict"]["root_cause"].clone(), ids)
    };
    assert_eq!(json(&root), json(&snap));
}
