//! The container findings of layer 2 (`checks/driver/container.rs`) beyond what the committed
//! fixtures show: each state the fixtures cannot hold at once, derived from them — the failing
//! SELinux cases (selinuxfs visible), the silent ones (permissive, boolean on, no confinement),
//! `noexec` without an IOMMUv2 GPU, and an unprivileged container whose active open failed.

use std::fs;
use std::path::Path;

use rocm_probe::report::Options;
use rocm_probe::{Report, Source, Status};
use rocm_probe_tests::{copy_fixture, evidence, finding};

fn report(dir: &Path) -> Report {
    Report::collect(
        &Source::fixture(dir).expect("fixture.toml parses"),
        Options::default(),
    )
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn has(r: &Report, id: &str) -> bool {
    r.findings.iter().any(|f| f.id == id)
}

const SELINUX: &str = "driver.selinux-device-denied";

#[test]
fn selinux_boolean_off_is_a_failure_with_the_setsebool_step() {
    let fx = copy_fixture("selinux-container-dri-denied");
    write(fx.path(), "sys/fs/selinux/enforce", b"1");
    write(
        fx.path(),
        "sys/fs/selinux/booleans/container_use_dri_devices",
        b"0 0",
    );
    let r = report(fx.path());
    let f = finding(&r, SELINUX);
    assert_eq!(f.status, Status::Fail, "{f:#?}");
    assert_eq!(r.exit_code(false), 1);
    assert_eq!(r.verdict.root_cause, Some(SELINUX));
    assert_eq!(
        evidence(f, "container_use_dri_devices").as_deref(),
        Some("off")
    );
    let commands: Vec<_> = f
        .remedy_steps
        .iter()
        .filter_map(|s| s.command.clone())
        .collect();
    assert_eq!(commands, ["sudo setsebool -P container_use_dri_devices 1"]);
}

#[test]
fn selinux_policy_without_the_boolean_is_a_failure_asking_for_a_newer_policy() {
    let fx = copy_fixture("selinux-container-dri-denied");
    write(fx.path(), "sys/fs/selinux/enforce", b"1");
    // The policy lists its booleans, and this one is not among them (container-selinux#269's era).
    write(
        fx.path(),
        "sys/fs/selinux/booleans/container_use_devices",
        b"0 0",
    );
    let r = report(fx.path());
    let f = finding(&r, SELINUX);
    assert_eq!(f.status, Status::Fail, "{f:#?}");
    assert_eq!(
        evidence(f, "container_use_dri_devices").as_deref(),
        Some("(absent)")
    );
    assert!(
        f.remedy_steps
            .iter()
            .any(|s| s.object == "container-selinux"),
        "{f:#?}"
    );
}

#[test]
fn selinux_says_nothing_when_permissive_allowed_or_unconfined() {
    let permissive = copy_fixture("selinux-container-dri-denied");
    write(permissive.path(), "sys/fs/selinux/enforce", b"0");
    assert!(!has(&report(permissive.path()), SELINUX));

    let allowed = copy_fixture("selinux-container-dri-denied");
    write(allowed.path(), "sys/fs/selinux/enforce", b"1");
    write(
        allowed.path(),
        "sys/fs/selinux/booleans/container_use_dri_devices",
        b"1 1",
    );
    assert!(!has(&report(allowed.path()), SELINUX));

    // The same node seen by an unconfined process (on the host, or a privileged container).
    let host = copy_fixture("selinux-container-dri-denied");
    write(
        host.path(),
        "proc/self/attr/current",
        b"unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023\0",
    );
    let r = report(host.path());
    assert!(!has(&r, SELINUX));
    assert_eq!(r.exit_code(false), 0);

    // SELinux not among the active modules: the label is stale, nothing is enforced.
    let off = copy_fixture("selinux-container-dri-denied");
    write(
        off.path(),
        "sys/kernel/security/lsm",
        b"lockdown,capability,landlock,yama,apparmor",
    );
    assert!(!has(&report(off.path()), SELINUX));
}

#[test]
fn noexec_matters_only_beside_an_iommu_v2_gpu() {
    let fx = copy_fixture("dev-noexec-raven");
    let r = report(fx.path());
    assert_eq!(finding(&r, "driver.dev-noexec").status, Status::Fail);

    // Remounted with exec: nothing.
    let exec = copy_fixture("dev-noexec-raven");
    let mounts = fs::read_to_string(exec.path().join("proc/self/mountinfo")).unwrap();
    write(
        exec.path(),
        "proc/self/mountinfo",
        mounts
            .replace("rw,nosuid,noexec,relatime", "rw,nosuid,relatime")
            .as_bytes(),
    );
    let r = report(exec.path());
    assert!(!has(&r, "driver.dev-noexec"));
    assert_eq!(r.exit_code(false), 0);

    // The capture it came from (no HSA_CAP_ATS_PRESENT: the trap handler lives in GPU memory)
    // on the same noexec /dev: nothing.
    let phoenix = copy_fixture("apu-phoenix-780m");
    write(phoenix.path(), "proc/self/mountinfo", mounts.as_bytes());
    assert!(!has(&report(phoenix.path()), "driver.dev-noexec"));

    // A mount on /dev/kfd itself covers /dev's.
    let bind = copy_fixture("dev-noexec-raven");
    let over = format!("{mounts}40 24 0:5 /kfd /dev/kfd rw,nosuid - devtmpfs udev rw\n");
    write(bind.path(), "proc/self/mountinfo", over.as_bytes());
    assert!(!has(&report(bind.path()), "driver.dev-noexec"));
}

#[test]
fn unprivileged_container_explains_a_failed_open_and_privileged_says_nothing() {
    let fx = copy_fixture("lxc-unprivileged-kfd-einval");
    let toml = fs::read_to_string(fx.path().join("fixture.toml")).unwrap();
    fs::write(
        fx.path().join("fixture.toml"),
        format!("{toml}\n[active]\nkfd_open = \"EINVAL\"\n"),
    )
    .unwrap();
    let r = report(fx.path());
    let open = finding(&r, "driver.kfd-open-failed");
    assert_eq!(
        open.caused_by,
        Some("driver.container-unprivileged"),
        "{open:#?}"
    );
    assert_eq!(r.verdict.root_cause, Some("driver.container-unprivileged"));
    assert_eq!(r.exit_code(false), 1);

    // The same container with the identity map (privileged): nothing.
    let privileged = copy_fixture("lxc-unprivileged-kfd-einval");
    write(
        privileged.path(),
        "proc/self/uid_map",
        b"         0          0 4294967295\n",
    );
    assert!(!has(
        &report(privileged.path()),
        "driver.container-unprivileged"
    ));

    // Unprivileged but without /dev/kfd: the missing node is the finding, not the namespace.
    let no_kfd = copy_fixture("lxc-unprivileged-kfd-einval");
    let toml = fs::read_to_string(no_kfd.path().join("fixture.toml")).unwrap();
    let cut = toml.replace("path = \"/dev/kfd\"", "path = \"/dev/kfd-not-here\"");
    fs::write(no_kfd.path().join("fixture.toml"), cut).unwrap();
    assert!(!has(
        &report(no_kfd.path()),
        "driver.container-unprivileged"
    ));
}

#[test]
fn snapshot_records_the_container_files_and_device_labels() {
    let dir = rocm_probe_tests::fixtures_dir().join("selinux-container-dri-denied");
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(&dir).unwrap(), &snap, false).unwrap();
    let toml = fs::read_to_string(snap.join("fixture.toml")).unwrap();
    let config: toml::Value = toml::from_str(&toml).unwrap();
    assert_eq!(
        config["xattr"]["/dev/dri/renderD128"]["security.selinux"].as_str(),
        Some("system_u:object_r:dri_device_t:s0"),
        "{toml}"
    );
    assert_eq!(
        fs::read(snap.join("proc/self/attr/current")).unwrap(),
        b"system_u:system_r:container_t:s0:c17,c28\0"
    );
}

/// kyuz0/amd-strix-halo-toolboxes#75: `nomodeset` on a Fedora host, the probe run in an Ubuntu
/// toolbox. The kernel command line is the host's, so its remedy follows the host's kernel
/// (`.fc43`: grubby), not the container's os-release (which would give `update-grub`); a kernel
/// that names no family gets every family's variant.
#[test]
fn in_a_container_kernel_remedies_follow_the_host_kernel() {
    let commands = |r: &Report| -> Vec<String> {
        finding(r, "driver.nomodeset")
            .remedy_steps
            .iter()
            .filter_map(|s| s.command.clone())
            .collect()
    };
    let t = copy_fixture("nomodeset");
    let dir = t.path();
    write(
        dir,
        "etc/os-release",
        b"NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian\n",
    );
    // Outside a container the machine's own os-release decides.
    let r = report(dir);
    assert!(!has(&r, "driver.container"));
    assert!(
        commands(&r).contains(&"sudo update-grub".to_owned()),
        "{:?}",
        commands(&r)
    );
    // In a podman toolbox on a Fedora kernel: grubby, and no update-grub.
    write(dir, "run/.containerenv", b"engine=\"podman-5.6.2\"\n");
    write(
        dir,
        "proc/sys/kernel/osrelease",
        b"6.18.4-200.fc43.x86_64\n",
    );
    let r = report(dir);
    assert!(has(&r, "driver.container"));
    let c = commands(&r);
    assert!(
        c.iter().any(|c| c.starts_with("sudo grubby"))
            && !c.contains(&"sudo update-grub".to_owned()),
        "{c:?}"
    );
    // A self-built kernel says nothing of the host: every family's variant.
    write(dir, "proc/sys/kernel/osrelease", b"6.19.0-custom\n");
    let c = commands(&report(dir));
    assert!(
        c.iter().any(|c| c.starts_with("sudo grubby"))
            && c.contains(&"sudo update-grub".to_owned()),
        "{c:?}"
    );
}

/// A rootless Podman container that did not keep the host user's groups: the nodes show the
/// overflow gid, and joining that group inside (what a plain permission remedy would say) opens
/// nothing. The same nodes outside a user namespace keep the plain `usermod` remedy.
#[test]
fn an_unmapped_device_group_gets_the_host_side_remedy_not_usermod() {
    let r = report(&rocm_probe_tests::fixtures_dir().join("podman-rootless-kfd-unmapped-group"));
    let f = finding(&r, "driver.kfd-permission-denied");
    let remedy = f.remedy.clone().unwrap_or_default();
    assert!(
        remedy.contains(
            "not mapped into this container's user namespace (it shows as nogroup, 65534)"
        ),
        "{}",
        remedy
    );
    assert!(remedy.contains("--group-add keep-groups"), "{}", remedy);
    assert!(f.remedy_steps.is_empty(), "{:?}", f.remedy_steps);
    let u = finding(&r, "driver.container-unprivileged");
    assert!(
        u.summary.starts_with("Rootless container (Podman"),
        "{}",
        u.summary
    );

    let fx = copy_fixture("podman-rootless-kfd-unmapped-group");
    fs::remove_file(fx.path().join("proc/self/uid_map")).unwrap();
    let r = report(fx.path());
    let f = finding(&r, "driver.kfd-permission-denied");
    let remedy = f.remedy.clone().unwrap_or_default();
    assert!(
        remedy.starts_with("Run `sudo usermod -aG nogroup"),
        "{}",
        remedy
    );
    assert!(!has(&r, "driver.container-unprivileged"));
}

const SELINUX_USER: &str = "driver.selinux-user-kfd-denied";

/// The confined-login warning needs all three: SELinux not off, a confined user domain, and
/// /dev/kfd labelled `hsa_device_t`. An unconfined login, a permissive mode, SELinux absent
/// from the active modules, or another label on /dev/kfd leave it out.
#[test]
fn a_confined_login_is_warned_about_kfd_and_an_unconfined_one_is_not() {
    let fx = copy_fixture("selinux-confined-user-kfd");
    let r = report(fx.path());
    let f = finding(&r, SELINUX_USER);
    assert_eq!(f.status, Status::Warn, "{f:#?}");
    assert_eq!(r.verdict.root_cause, Some(SELINUX_USER));
    assert_eq!(
        evidence(f, "security.selinux").as_deref(),
        Some("system_u:object_r:hsa_device_t:s0")
    );
    // user_t (a `user_u` login) is as confined as staff_t.
    write(
        fx.path(),
        "proc/self/attr/current",
        b"user_u:user_r:user_t:s0\0",
    );
    assert!(has(&report(fx.path()), SELINUX_USER));

    for (rel, bytes) in [
        (
            "proc/self/attr/current",
            &b"unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023\0"[..],
        ),
        ("sys/fs/selinux/enforce", b"0"),
        (
            "sys/kernel/security/lsm",
            b"lockdown,capability,yama,bpf,landlock",
        ),
    ] {
        let fx = copy_fixture("selinux-confined-user-kfd");
        write(fx.path(), rel, bytes);
        let r = report(fx.path());
        assert!(!has(&r, SELINUX_USER), "{rel}: {:?}", r.verdict);
        assert_eq!(r.verdict.root_cause, None, "{rel}");
    }

    let fx = copy_fixture("selinux-confined-user-kfd");
    let toml = fx.path().join("fixture.toml");
    let text = fs::read_to_string(&toml).unwrap();
    fs::write(&toml, text.replace("hsa_device_t", "device_t")).unwrap();
    assert!(!has(&report(fx.path()), SELINUX_USER));
}

/// A pod of containerd or CRI-O has no marker file: the kubepods cgroup, or Kubernetes' service
/// variable, says it is a container, and a device plugin's subset of render nodes is then the
/// intended allocation (ROCm/k8s-device-plugin `Allocate`: /dev/kfd plus the allocated GPUs'
/// nodes), not a failure. Without any sign of a container it is one.
#[test]
fn a_pod_without_marker_files_is_a_container_for_the_render_node_subset() {
    const MISSING: &str = "driver.render-node-missing";
    let pod_cgroup = b"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod3f2a9c1e.slice/cri-containerd-9c1f0e2d.scope\n";
    let fx = copy_fixture("render-node-missing");
    fs::remove_file(fx.path().join(".dockerenv")).unwrap();
    let r = report(fx.path());
    assert_eq!(finding(&r, MISSING).status, Status::Fail);
    assert!(!has(&r, "driver.container"));

    write(fx.path(), "proc/self/cgroup", pod_cgroup);
    let r = report(fx.path());
    assert_eq!(finding(&r, MISSING).status, Status::Info);
    assert!(
        evidence(finding(&r, "driver.container"), "/proc/self/cgroup").is_some(),
        "{:#?}",
        finding(&r, "driver.container")
    );
    assert_eq!(r.exit_code(false), 0);

    // cgroup v2 with a cgroup namespace shows only `0::/`; the service variable remains.
    write(fx.path(), "proc/self/cgroup", b"0::/\n");
    let toml = fx.path().join("fixture.toml");
    let text = fs::read_to_string(&toml).unwrap();
    fs::write(
        &toml,
        text.replacen(
            "[identity]",
            "[env]\nKUBERNETES_SERVICE_HOST = \"10.96.0.1\"\n\n[identity]",
            1,
        ),
    )
    .unwrap();
    assert_eq!(finding(&report(fx.path()), MISSING).status, Status::Info);
}

/// Rootless Podman that keeps the host user's groups (`--group-add keep-groups`) opens the
/// nodes, whose group shows as the overflow gid: once every node is open to the user, the
/// rootless warning is not given (its remedy is what was done).
#[test]
fn rootless_podman_that_kept_the_groups_is_not_warned() {
    const UNPRIVILEGED: &str = "driver.container-unprivileged";
    let fx = copy_fixture("podman-rootless-kfd-unmapped-group");
    assert!(has(&report(fx.path()), UNPRIVILEGED));
    let toml = fx.path().join("fixture.toml");
    let text = fs::read_to_string(&toml).unwrap();
    assert!(
        text.contains("groups = [1000, 44]"),
        "the fixture's identity changed"
    );
    fs::write(
        &toml,
        text.replace("groups = [1000, 44]", "groups = [1000, 44, 65534]"),
    )
    .unwrap();
    let r = report(fx.path());
    assert!(!has(&r, UNPRIVILEGED), "{:?}", r.verdict);
    assert_eq!(r.verdict.root_cause, None);
}

/// `apptainer --rocm` binding the host's rocBLAS without its data: the finding says the data
/// is missing (not that the build lacks the GPU) and gives Apptainer's remedy; the marker
/// directory makes it a container of kind Apptainer.
#[test]
fn apptainer_bound_rocblas_without_its_data_is_told_as_such() {
    let fx = copy_fixture("apptainer-rocm-host-rocblas-no-data");
    let r = report(fx.path());
    let f = finding(&r, "libraries.rocblas-no-kernels-for-target");
    assert!(
        f.summary.contains("/.singularity.d/libs/rocblas/library"),
        "{}",
        f.summary
    );
    assert!(
        f.remedy.as_deref().unwrap().contains("--rocm"),
        "{:?}",
        f.remedy
    );
    assert!(has(&r, "driver.container"));
    // Given its data directory, that rocBLAS is judged by what the directory holds.
    fs::create_dir_all(fx.path().join(".singularity.d/libs/rocblas/library")).unwrap();
    fs::write(
        fx.path()
            .join(".singularity.d/libs/rocblas/library/TensileLibrary_lazy_gfx90a.dat"),
        b"",
    )
    .unwrap();
    let r = report(fx.path());
    assert!(
        !has(&r, "libraries.rocblas-no-kernels-for-target"),
        "{:?}",
        r.verdict
    );
}

/// Keeps in `fixture.toml` only the `[[device]]` blocks whose path `keep` accepts.
fn keep_devices(dir: &Path, keep: impl Fn(&str) -> bool) {
    let toml = dir.join("fixture.toml");
    let text = fs::read_to_string(&toml).unwrap();
    let mut blocks = text.split("\n[[device]]");
    let mut out = blocks.next().unwrap().to_owned();
    for block in blocks {
        let path = block
            .lines()
            .find_map(|l| l.strip_prefix("path = "))
            .unwrap()
            .trim_matches('"');
        let (device, rest) = match block.find("\n[expect]") {
            Some(i) => block.split_at(i),
            None => (block, ""),
        };
        if keep(path) {
            out.push_str("\n[[device]]");
            out.push_str(device);
        }
        out.push_str(rest);
    }
    fs::write(&toml, out).unwrap();
}

/// A container handed the render nodes of partitions (MI300X in CPX mode: eight per GPU) is
/// told which physical GPUs they belong to, not "8 of 63 GPUs".
#[test]
fn a_container_given_partitions_is_told_whose_they_are() {
    const MISSING: &str = "driver.render-node-missing";
    let fx = copy_fixture("mi300x-cpx-8gpu");
    write(fx.path(), ".dockerenv", b"");
    // renderD128..135: the eight partitions of the first MI300X.
    keep_devices(fx.path(), |p| {
        p == "/dev/kfd"
            || p.strip_prefix("/dev/dri/renderD")
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| (128..136).contains(&m))
    });
    let r = report(fx.path());
    let f = finding(&r, MISSING);
    assert_eq!(f.status, Status::Info);
    assert!(
        f.summary.contains("8 of 63") && f.summary.contains("1 of 8 physical GPUs"),
        "{}",
        f.summary
    );
    assert!(f.summary.contains("1 of them whole"), "{}", f.summary);
    // Without partitions the count is of GPUs, as before.
    let r = rocm_probe_tests::report("render-node-missing");
    assert!(finding(&r, MISSING).summary.contains("4 of 8 GPUs"));
}
