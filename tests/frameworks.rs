//! Layer 7 (frameworks), passively: beyond `[expect]` (checked by the sweep), the facts and
//! evidence of each scenario, a bundled rocBLAS without the GPU's kernels, silence above a
//! failing lower layer, and the collector on odd trees (duplicates, binary files, bounds).

use std::path::Path;

use rocm_probe::facts::frameworks::Build;
use rocm_probe::finding::{Layer, Status};
use rocm_probe::report::Options;
use rocm_probe::{Facts, Report, Source};

use rocm_probe_tests::{evidence, finding, fixtures_dir, report};

const TORCH_SITE: &str = "/usr/local/lib/python3.11/dist-packages";

/// Copies a directory tree, keeping symlinks as symlinks.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dst = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &dst);
        } else {
            std::fs::copy(entry.path(), &dst).unwrap();
        }
    }
}

fn ids(r: &Report) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.id).collect()
}

#[test]
fn cpu_torch_on_mi300x_is_a_warning_with_its_version_file() {
    let r = report("torch-cpu-mi300x");
    let f = finding(&r, "frameworks.torch-cpu-build");
    assert_eq!(f.status, Status::Warn);
    assert!(f.summary.contains("PyTorch 2.5.1+cpu"), "{}", f.summary);
    let v = evidence(
        f,
        "/usr/local/lib/python3.12/dist-packages/torch/version.py",
    )
    .unwrap();
    assert!(v.contains("hip = None") && v.contains("cuda = None"), "{v}");
    assert!(
        evidence(f, "/sys/class/kfd/kfd/topology")
            .unwrap()
            .contains("63 GPU agent(s)")
    );
    assert!(f.remedy.as_deref().unwrap().contains("whl/rocm6.2"));
    assert!(!ids(&r).contains(&"frameworks.torch-cuda-build"));

    let dir = fixtures_dir().join("torch-cpu-mi300x");
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let (site, torch) = facts.frameworks.torches().next().unwrap();
    assert_eq!(site.origin, "system");
    assert_eq!(torch.build, Build::Cpu);
    assert_eq!(torch.version.as_deref(), Some("2.5.1+cpu"));
    assert_eq!(
        torch.dist.as_ref().map(|d| d.version.as_str()),
        Some("2.5.1+cpu")
    );
    assert!(torch.bundled.is_none());
    assert!(torch.libtorch_hip.is_none());
    assert!(facts.problems.frameworks.is_empty());
}

#[test]
fn rocm_torch_facts_name_libtorch_hip_and_the_bundled_libraries() {
    let dir = fixtures_dir().join("rocm-two-installs-torch-bundles-third");
    let facts = Facts::collect(&Source::fixture(dir).unwrap());
    let fw = &facts.frameworks;
    assert!(fw.captured);
    let problems = &facts.problems.frameworks;
    assert!(problems.is_empty(), "{problems:?}");
    let (_, t) = fw.torches().next().unwrap();
    assert_eq!(t.build, Build::Rocm);
    assert_eq!(t.rocm.map(|v| v.to_string()).as_deref(), Some("6.0"));
    assert_eq!(
        t.libtorch_hip.as_deref(),
        Some("/usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_hip.so")
    );
    let b = t.bundled.as_ref().unwrap();
    assert!(b.has_runtime() && b.has("rocblas") && b.has("MIOpen"));
    // Unversioned names, as pytorch/builder writes them: no release from the file names.
    assert_eq!(b.rocm, None);
    for lib in [
        "libtorch_hip.so",
        "libc10_hip.so",
        "librocblas.so",
        "libMIOpen.so",
    ] {
        let path = format!("{TORCH_SITE}/torch/lib/{lib}");
        assert!(b.device_code.contains(&path), "{path}: {:?}", b.device_code);
    }
    assert!(!b.device_code.iter().any(|p| p.ends_with("libamdhip64.so")));
    let rocblas = b.rocblas.as_ref().unwrap();
    assert!(rocblas.targets.contains("gfx90a") && rocblas.targets.contains("gfx1100"));
    assert!(b.hipblaslt.as_ref().unwrap().targets.contains("gfx942"));
    assert_eq!(
        t.triton.as_ref().map(|d| d.name.as_str()),
        Some("pytorch_triton_rocm")
    );

    let r = report("rocm-two-installs-torch-bundles-third");
    let f = finding(&r, "frameworks.bundled-rocm-differs");
    assert_eq!(f.status, Status::Info);
    assert!(
        f.summary.contains("bundles ROCm 6.0")
            && f.summary.contains("ROCm 6.2.0 at /opt/rocm-6.2.0"),
        "{}",
        f.summary
    );
    assert_eq!(
        evidence(f, "/torch/version.py").as_deref(),
        Some("ROCm 6.0 (local version label +rocm6.0)")
    );
    let found = finding(&r, "frameworks.found");
    assert!(evidence(found, "/torch/lib/libtorch_hip.so").is_some());
    assert!(!ids(&r).contains(&"frameworks.bundled-rocblas-no-kernels-for-target"));
    assert_eq!(r.verdict.root_layer, 0);
}

#[test]
fn bundled_rocblas_without_the_gpus_kernels_fails_and_stays_silent_above_a_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("fx");
    copy_tree(
        &fixtures_dir().join("rocm-two-installs-torch-bundles-third"),
        &root,
    );
    let library = root
        .join(&TORCH_SITE[1..])
        .join("torch/lib/rocblas/library");
    for f in std::fs::read_dir(&library).unwrap() {
        let f = f.unwrap().path();
        if f.to_string_lossy().contains("gfx90a") {
            std::fs::remove_file(f).unwrap();
        }
    }
    let source = Source::fixture(&root).unwrap();
    let r = Report::collect(&source, Options::default());
    let f = finding(&r, "frameworks.bundled-rocblas-no-kernels-for-target");
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("no kernels for gfx90a"), "{}", f.summary);
    assert!(f.summary.contains("gfx942, gfx1030"), "{}", f.summary);
    assert_eq!(
        evidence(f, "/sys/class/kfd/kfd/topology/nodes/2").as_deref(),
        Some("gfx90a AMD Instinct MI210")
    );
    assert_eq!(r.verdict.root_layer, 7);
    assert_eq!(r.exit_code(false), 1);

    // The same facts with a failure below: the per-GPU check says nothing.
    let facts = Facts::collect(&source);
    let below = vec![
        rocm_probe::finding::LIBRARIES_NOT_CAPTURED.finding_with(Status::Fail, "a lower failure"),
    ];
    let out = rocm_probe::checks::frameworks::check(&facts, &below);
    assert!(
        !out.iter()
            .any(|f| f.id == "frameworks.bundled-rocblas-no-kernels-for-target")
    );
    assert!(
        out.iter()
            .any(|f| f.id == "frameworks.bundled-rocm-differs")
    );
}

#[test]
fn tensorflow_rocm_of_another_release_is_information() {
    let r = report("tensorflow-present");
    let f = finding(&r, "frameworks.tensorflow-unvalidated");
    assert_eq!(f.status, Status::Info);
    assert!(
        f.summary.contains("2.16.1, 2.15.1, 2.14.1") && f.summary.contains("(VIRTUAL_ENV)"),
        "{}",
        f.summary
    );
    assert!(!ids(&r).contains(&"frameworks.tensorflow-not-rocm"));
    assert!(
        r.findings
            .iter()
            .filter(|f| f.layer == Layer::Frameworks)
            .all(|f| f.status <= Status::Info)
    );
}

/// `tensorflow-present` with the install's `.info/version` changed: tensorflow-rocm 2.16.2 is
/// validated for ROCm 6.4, not for 7.0 or 7.2 (each line's own list is quoted), and a line past
/// the table (10.0) is said to be missing from it.
#[test]
fn tensorflow_is_judged_against_each_lines_validated_releases() {
    for (version, says) in [
        ("6.4.1", None),
        ("7.0.2", Some("(2.19.1, 2.18.1, 2.17.1)")),
        ("7.1.1", Some("(2.20.0, 2.19.1, 2.18.1)")),
        ("7.2.1", Some("(2.20.0, 2.19.1, 2.18.1)")),
        ("10.0.0", Some("not in this probe's table (ROCm 6.0–7.2)")),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("fx");
        copy_tree(&fixtures_dir().join("tensorflow-present"), &root);
        std::fs::write(
            root.join("opt/rocm-6.2.0/.info/version"),
            format!("{version}\n"),
        )
        .unwrap();
        let source = Source::fixture(&root).unwrap();
        let r = Report::collect(&source, Options::default());
        let found = r
            .findings
            .iter()
            .find(|f| f.id == "frameworks.tensorflow-unvalidated");
        match says {
            None => assert!(found.is_none(), "{version}: {found:?}"),
            Some(text) => {
                let f = found.unwrap_or_else(|| panic!("{version}: no finding"));
                assert_eq!(f.status, Status::Info, "{version}");
                assert!(f.summary.contains(text), "{version}: {}", f.summary);
            }
        }
    }
}

#[test]
fn fixtures_without_python_are_not_captured() {
    let r = report("rocm-6.2-mi210");
    let f = finding(&r, "frameworks.not-captured");
    assert_eq!(f.status, Status::Skip);
    assert_eq!(
        r.findings
            .iter()
            .filter(|f| f.layer == Layer::Frameworks)
            .count(),
        1
    );
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A tree with a venv reached twice (VIRTUAL_ENV is a symlink to a pyenv version, conda's
/// `python3.1` → `python3.10`), a binary `version.py`, and frameworks of every kind.
fn odd_tree(root: &Path) {
    write(
        root,
        "fixture.toml",
        b"[env]\nVIRTUAL_ENV = \"/home/u/venv\"\nHOME = \"/home/u\"\n\
          PYTHONPATH = \"/home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages:relative:/nowhere\"\n",
    );
    let pyenv = "home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages";
    write(
        root,
        &format!("{pyenv}/torch/version.py"),
        b"__version__ = '2.9.1+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n",
    );
    write(
        root,
        &format!("{pyenv}/torch-2.9.1+cu128.dist-info/METADATA"),
        b"Name: torch\nVersion: 2.9.1+cu128\n",
    );
    write(
        root,
        &format!("{pyenv}/jax-0.4.35.dist-info/METADATA"),
        b"Name: jax\nVersion: 0.4.35\n",
    );
    write(
        root,
        &format!("{pyenv}/jaxlib-0.4.35.dist-info/METADATA"),
        b"Name: jaxlib\nVersion: 0.4.35\n",
    );
    write(
        root,
        &format!("{pyenv}/onnxruntime-1.19.2.dist-info/METADATA"),
        b"Name: onnxruntime\n",
    );
    write(
        root,
        &format!("{pyenv}/onnxruntime/capi/onnxruntime_pybind11_state.so"),
        b"",
    );
    std::os::unix::fs::symlink(".pyenv/versions/3.12.1", root.join("home/u/venv")).unwrap();
    // Conda: python3.1 is a link to python3.10, both listed in lib.
    let conda = "opt/conda/lib/python3.10/site-packages";
    write(
        root,
        &format!("{conda}/torch/version.py"),
        b"__version__ = '2.4.1\0\0garbage\0'\n",
    );
    write(
        root,
        &format!("{conda}/jax_rocm60_plugin-0.4.35.dist-info/METADATA"),
        b"",
    );
    write(root, &format!("{conda}/jax-0.4.35.dist-info/METADATA"), b"");
    write(
        root,
        &format!("{conda}/tensorflow-2.17.0.dist-info/METADATA"),
        b"",
    );
    write(
        root,
        &format!("{conda}/vllm/_version.py"),
        b"__version__ = version = '0.6.3.post1+rocm624'\n",
    );
    write(
        root,
        &format!("{conda}/vllm-0.6.3.post1+rocm624.dist-info/METADATA"),
        b"",
    );
    std::os::unix::fs::symlink("python3.10", root.join("opt/conda/lib/python3.1")).unwrap();
}

#[test]
fn odd_trees_are_read_once_and_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("fx");
    odd_tree(&root);
    let source = Source::fixture(&root).unwrap();
    let facts = Facts::collect(&source);
    let fw = &facts.frameworks;
    assert!(fw.captured);
    // VIRTUAL_ENV, PYTHONPATH and ~/.pyenv name one directory; conda's two names another.
    assert_eq!(fw.sites.len(), 2, "{:#?}", fw.sites);
    let venv = &fw.sites[0];
    assert_eq!(venv.origin, "VIRTUAL_ENV");
    assert_eq!(venv.path, "/home/u/venv/lib/python3.12/site-packages");
    assert!(
        venv.also
            .contains(&"/home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages".to_owned()),
        "{:?}",
        venv.also
    );
    let t = venv.torch.as_ref().unwrap();
    assert_eq!(t.build, Build::Cuda);
    assert!(venv.jax.as_ref().is_some_and(|j| !j.is_rocm()));
    assert!(
        venv.onnxruntime
            .as_ref()
            .is_some_and(|o| !o.has_amd_provider())
    );
    let conda = &fw.sites[1];
    assert_eq!(conda.also.len(), 1, "{:?}", conda.also);
    let t = conda.torch.as_ref().unwrap();
    assert!(t.version_py.is_none());
    assert_eq!(t.build, Build::Unknown);
    assert_eq!(conda.jax.as_ref().unwrap().rocm_major(), Some(6));
    assert!(conda.tensorflow.as_ref().is_some_and(|t| !t.rocm_build));
    assert_eq!(
        conda
            .vllm
            .as_ref()
            .unwrap()
            .rocm
            .map(|v| v.to_string())
            .as_deref(),
        Some("6.2.4")
    );
    assert!(
        facts.problems.frameworks.iter().any(|p| p
            .path
            .ends_with("python3.10/site-packages/torch/version.py")),
        "{:?}",
        facts.problems.frameworks
    );

    // No GPU here: the report has the sites and the unreadable file, but no build warnings.
    let r = Report::collect(&source, Options::default());
    let ids = ids(&r);
    assert_eq!(
        ids.iter().filter(|i| **i == "frameworks.found").count(),
        2,
        "{ids:?}"
    );
    assert!(ids.contains(&"frameworks.files-unreadable"));
    assert!(!ids.contains(&"frameworks.torch-cuda-build"));
    assert!(r.undeclared_ids().is_empty());

    // The snapshot of the tree reads the same (duplicates included).
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("snap");
    rocm_probe::export::snapshot::snapshot(Source::fixture(&root).unwrap(), &snap, false).unwrap();
    let after = Report::collect(&Source::fixture(&snap).unwrap(), Options::default());
    let layer7 = |r: &Report| -> Vec<rocm_probe::Finding> {
        r.findings
            .iter()
            .filter(|f| f.layer == Layer::Frameworks)
            .cloned()
            .collect()
    };
    assert_eq!(layer7(&r), layer7(&after));
}

#[test]
fn many_environments_stay_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("fx");
    write(&root, "fixture.toml", b"[env]\nHOME = \"/home/u\"\n");
    for i in 0..40 {
        write(
            &root,
            &format!(
                "home/u/miniconda3/envs/e{i:02}/lib/python3.11/site-packages/torch-2.5.1+cpu.dist-info/METADATA"
            ),
            format!("Name: torch\nVersion: 2.5.1+cpu\nX: {i}\n").as_bytes(),
        );
        write(
            &root,
            &format!("home/u/miniconda3/envs/e{i:02}/lib/python3.11/site-packages/e{i:02}.pth"),
            b"",
        );
    }
    let facts = Facts::collect(&Source::fixture(&root).unwrap());
    let fw = &facts.frameworks;
    assert!(fw.truncated);
    assert!(fw.sites.len() <= 16, "{}", fw.sites.len());
    assert!(fw.sites.iter().all(|s| s.torch.is_some()));
}

#[test]
fn non_rocm_builds_on_a_gpu_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("fx");
    copy_tree(&fixtures_dir().join("rocm-6.2-mi210"), &root);
    let toml = std::fs::read_to_string(root.join("fixture.toml")).unwrap();
    std::fs::write(
        root.join("fixture.toml"),
        toml.replacen(
            "[identity]",
            "[env]\nCONDA_PREFIX = \"/opt/conda/envs/work\"\n\n[identity]",
            1,
        ),
    )
    .unwrap();
    let site = "opt/conda/envs/work/lib/python3.12/site-packages";
    write(
        &root,
        &format!("{site}/torch/version.py"),
        b"__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n",
    );
    for d in [
        "jax-0.6.0.dist-info",
        "jaxlib-0.6.0.dist-info",
        "jax_rocm7_plugin-0.6.0.dist-info",
        "jax_rocm7_pjrt-0.6.0.dist-info",
        "tensorflow-2.17.0.dist-info",
        "onnxruntime_gpu-1.19.2.dist-info",
    ] {
        write(&root, &format!("{site}/{d}/INSTALLER"), b"pip\n");
    }
    write(
        &root,
        &format!("{site}/onnxruntime/capi/libonnxruntime_providers_cuda.so"),
        b"",
    );
    write(
        &root,
        &format!("{site}/onnxruntime/capi/libonnxruntime_providers_shared.so"),
        b"",
    );
    let r = Report::collect(&Source::fixture(&root).unwrap(), Options::default());
    let f = finding(&r, "frameworks.torch-cuda-build");
    assert_eq!(f.status, Status::Warn);
    assert!(f.summary.contains("(CONDA_PREFIX)"), "{}", f.summary);
    let f = finding(&r, "frameworks.jax-plugin-mismatch");
    // A ROCm 7 plugin cannot load ROCm 6's libraries: the rocm backend does not come up.
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary.contains("jax_rocm7_plugin is built for ROCm 7")
            && f.summary.contains("ROCm 6.2.0"),
        "{}",
        f.summary
    );
    assert!(f.remedy.as_deref().unwrap().contains("jax_rocm60_plugin"));
    assert_eq!(
        finding(&r, "frameworks.tensorflow-not-rocm").status,
        Status::Warn
    );
    let f = finding(&r, "frameworks.onnxruntime-no-rocm-provider");
    assert!(f.summary.contains("a CUDA build"), "{}", f.summary);
    assert_eq!(r.verdict.root_layer, 7);
    assert_eq!(r.exit_code(false), 0);
    assert_eq!(r.exit_code(true), 1);
}

/// ROCm/rocm-jax#207: MaxText's requirements upgraded jax and jaxlib to 0.8.1 past the image's
/// 0.8.0 plugin pair; the remedy is the PR's own fix, the 0.8.0 set.
#[test]
fn jaxlib_upgraded_past_the_rocm_plugin_is_a_warning_with_the_set_to_pin() {
    let r = report("jax-jaxlib-upgraded-past-plugin-mi210");
    let f = finding(&r, "frameworks.jax-plugin-mismatch");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary
            .contains("jaxlib 0.8.1 will not use jax_rocm7_plugin, jax_rocm7_pjrt 0.8.0+rocm7.1.0"),
        "{}",
        f.summary
    );
    let remedy = f.remedy.as_deref().unwrap();
    assert!(
        remedy.contains(
            "pip install \"jax==0.8.0\" \"jaxlib==0.8.0\" \"jax-rocm7-plugin==0.8.0\" \
             \"jax-rocm7-pjrt==0.8.0\""
        ),
        "{remedy}"
    );
    assert_eq!(
        evidence(
            f,
            "/usr/local/lib/python3.12/dist-packages/jax_rocm7_plugin-0.8.0+rocm7.1.0.dist-info"
        )
        .as_deref(),
        Some("jax_rocm7_plugin 0.8.0+rocm7.1.0")
    );
    assert_eq!(r.verdict.root_cause, Some("frameworks.jax-plugin-mismatch"));
}

const JAX_ENV: &str = "home/probe/.conda/envs/desc-env/lib/python3.12/site-packages";

/// `jax-pjrt-newer-than-jaxlib-mi210` (ROCm 6.3.1) with its JAX set replaced by `dists`
/// (`name-version` of each `*.dist-info`), and its report.
fn jax_set(dists: &[&str]) -> Report {
    jax_set_in("jax-pjrt-newer-than-jaxlib-mi210", JAX_ENV, dists)
}

/// `fixture` with the `*.dist-info` directories of its site directory `site` replaced by `dists`.
fn jax_set_in(fixture: &str, site: &str, dists: &[&str]) -> Report {
    let tmp = rocm_probe_tests::copy_fixture(fixture);
    for entry in std::fs::read_dir(tmp.path().join(site)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "dist-info") {
            std::fs::remove_dir_all(path).unwrap();
        }
    }
    for d in dists {
        write(
            tmp.path(),
            &format!("{site}/{d}.dist-info/INSTALLER"),
            b"pip\n",
        );
    }
    Report::collect(&Source::fixture(tmp.path()).unwrap(), Options::default())
}

/// jaxlib's own rule and the PJRT side: a set of one release passes, a plugin of another
/// release than a jaxlib that checks it is refused, a PJRT wheel newer than jaxlib breaks the
/// backend, a plugin and PJRT wheel of two releases are a broken pair, and AMD's one unequal pair
/// and a mismatch no jaxlib refuses are told apart.
#[test]
fn jax_plugin_releases_against_jaxlib_and_each_other() {
    let mismatch = |r: &Report| {
        r.findings
            .iter()
            .find(|f| f.id == "frameworks.jax-plugin-mismatch")
            .cloned()
    };
    let rocm60 = |v: &str| {
        [
            format!("jax_rocm60_plugin-{v}"),
            format!("jax_rocm60_pjrt-{v}"),
        ]
    };

    // One release throughout: nothing to say.
    let [p, j] = rocm60("0.5.0");
    let r = jax_set(&["jax-0.5.0", "jaxlib-0.5.0", &p, &j]);
    assert!(mismatch(&r).is_none(), "{:#?}", mismatch(&r));
    assert_eq!(r.verdict.root_layer, 0);

    // jaxlib 0.5.3 checks the plugin's release and refuses 0.5.0 (older PJRT: no init failure).
    let r = jax_set(&["jax-0.5.3", "jaxlib-0.5.3", &p, &j]);
    let f = mismatch(&r).expect("plugin older than a checking jaxlib");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary
            .contains("jaxlib 0.5.3 will not use jax_rocm60_plugin, jax_rocm60_pjrt 0.5.0"),
        "{}",
        f.summary
    );
    assert!(!f.summary.contains("older than"), "{}", f.summary);
    assert_eq!(
        f.remedy.as_deref(),
        Some(
            "Install one matching set (jax, jaxlib, the ROCm plugin and its PJRT wheel of one \
             release): `pip install \"jax==0.5.0\" \"jaxlib==0.5.0\" \"jax-rocm60-plugin==0.5.0\" \
             \"jax-rocm60-pjrt==0.5.0\"`"
        )
    );
    let site = format!("/{JAX_ENV}");
    assert_eq!(
        evidence(&f, "jaxlib-0.5.3.dist-info").as_deref(),
        Some("jaxlib 0.5.3")
    );
    assert_eq!(
        evidence(&f, "jax_rocm60_pjrt-0.5.0.dist-info").as_deref(),
        Some("jax_rocm60_pjrt 0.5.0")
    );
    assert!(f.evidence.iter().all(|e| e.source.starts_with(&site)));

    // The plugin and its PJRT wheel of two releases: a broken pair, whatever jaxlib says.
    let r = jax_set(&[
        "jax-0.5.0",
        "jaxlib-0.5.0",
        "jax_rocm60_plugin-0.5.0",
        "jax_rocm60_pjrt-0.4.35",
    ]);
    let f = mismatch(&r).expect("plugin and PJRT of two releases");
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.summary
            .contains("jax_rocm60_plugin 0.5.0 and jax_rocm60_pjrt 0.4.35 are different releases"),
        "{}",
        f.summary
    );
    // jaxlib 0.5.0 does not check; the older PJRT wheel is noted, not blamed for a failure.
    assert!(
        f.summary
            .contains("jaxlib 0.5.0 is not the release of jax_rocm60_pjrt 0.4.35"),
        "{}",
        f.summary
    );

    // jaxlib 0.9.1 no longer refuses a ROCm plugin of another release: information only.
    let [p, j] = rocm60("0.9.0");
    let r = jax_set(&["jax-0.9.1", "jaxlib-0.9.1", &p, &j]);
    let f = mismatch(&r).expect("plugin older than a jaxlib that does not check");
    assert_eq!(f.status, Status::Info);
    assert_eq!(r.verdict.root_layer, 0);

    // AMD's table: plugin-PJRT 0.6.0 goes with jaxlib 0.6.2 for ROCm 7 only; ROCm 6's 0.6.0
    // plugin is refused by jaxlib 0.6.2 (and ROCm 7's on this ROCm 6.3.1 is the major check's).
    let [p, j] = rocm60("0.6.0");
    let r = jax_set(&["jax-0.6.2", "jaxlib-0.6.2", &p, &j]);
    let f = mismatch(&r).expect("ROCm 6 plugin 0.6.0 with jaxlib 0.6.2");
    assert_eq!(f.status, Status::Warn);
    assert!(f.summary.contains("will not use"), "{}", f.summary);
    let r = jax_set(&[
        "jax-0.6.2",
        "jaxlib-0.6.2",
        "jax_rocm7_plugin-0.6.0",
        "jax_rocm7_pjrt-0.6.0",
    ]);
    let f = mismatch(&r).expect("a ROCm 7 plugin on ROCm 6.3.1");
    assert!(
        f.summary.contains("jax_rocm7_plugin is built for ROCm 7")
            && !f.summary.contains("jaxlib 0.6.2"),
        "{}",
        f.summary
    );
    // On ROCm 7 (jax-jaxlib-upgraded-past-plugin-mi210's 7.1.0), AMD's table pairs that
    // 0.6.0 plugin with jaxlib 0.6.2: nothing to say; with jaxlib 0.6.1 it is refused.
    let upgraded = |jaxlib: &str| {
        jax_set_in(
            "jax-jaxlib-upgraded-past-plugin-mi210",
            "usr/local/lib/python3.12/dist-packages",
            &[
                &format!("jax-{jaxlib}"),
                &format!("jaxlib-{jaxlib}"),
                "jax_rocm7_plugin-0.6.0",
                "jax_rocm7_pjrt-0.6.0",
            ],
        )
    };
    let r = upgraded("0.6.2");
    assert!(mismatch(&r).is_none(), "{:#?}", mismatch(&r));
    let f = mismatch(&upgraded("0.6.1")).expect("ROCm 7 plugin 0.6.0 with jaxlib 0.6.1");
    assert!(
        f.summary.contains("jaxlib 0.6.1 will not use"),
        "{}",
        f.summary
    );
}

/// Which framework a layer-7 finding is about is data, not prose: every note, warning or failure
/// of a framework in any fixture names it and its site directory, and the framework's workload
/// verdict counts exactly those (issue: a verdict once matched summaries by substring).
#[test]
fn framework_findings_name_their_framework_and_site_as_data() {
    use rocm_probe::finding::Subject;
    let mut checked = 0;
    for (name, dir) in rocm_probe_tests::fixtures() {
        let Ok(source) = Source::fixture(&dir) else {
            continue;
        };
        let r = Report::collect(&source, Options::default());
        // Python site directories, and the directories of applications' own runtimes (an
        // ollama runner directory, llama.cpp's library directory) and installs (ollama's
        // lib/ollama).
        let facts = Facts::collect(&source);
        let sites: Vec<String> = facts
            .frameworks
            .sites
            .iter()
            .map(|s| s.path.clone())
            .chain(facts.bundled.apps.iter().map(|a| a.dir.clone()))
            .chain(facts.bundled.ollama.iter().map(|d| d.dir.clone()))
            .collect();
        for f in r.findings.iter().filter(|f| {
            f.layer == Layer::Frameworks
                && f.status >= Status::Info
                && !["frameworks.unreadable", "frameworks.none"].contains(&f.id)
        }) {
            match &f.subject {
                Some(Subject::Framework { site, .. }) => {
                    assert!(sites.contains(site), "{name}: {} names {site}", f.id);
                    checked += 1;
                }
                other => panic!("{name}: {} is about {other:?}", f.id),
            }
        }
        for v in r.findings.iter().filter(|f| f.id == "workloads.framework") {
            let Some(Subject::Framework { name: fw, site }) = &v.subject else {
                panic!("{name}: a framework verdict without its framework");
            };
            assert!(sites.contains(site), "{name}: {fw} at {site}");
        }
    }
    assert!(
        checked >= 3,
        "only {checked} framework findings in the fixtures"
    );
}

/// YanWenKun/ComfyUI-Docker#187: the image's earlier torch, a ROCm wheel, on the same machine
/// without a system ROCm passes; the CUDA wheel that replaced it is the root cause, and the
/// missing system ROCm is only information. A system ROCm beside it keeps the CUDA build a warning.
#[test]
fn a_cuda_torch_with_no_rocm_anywhere_is_the_root_cause_and_a_rocm_wheel_passes() {
    let site = "opt/venv/lib/python3.12/site-packages";
    let r = report("container-torch-cu130-gfx1150");
    assert_eq!(
        finding(&r, "frameworks.torch-cuda-build").status,
        Status::Fail
    );
    let no_rocm = finding(&r, "runtime.no-rocm");
    assert_eq!(no_rocm.status, Status::Info);
    assert!(no_rocm.remedy_steps.is_empty(), "{no_rocm:#?}");
    let remedy = finding(&r, "frameworks.torch-cuda-build")
        .remedy
        .clone()
        .unwrap();
    assert!(remedy.contains("needs no system ROCm"), "{remedy}");

    let dir = rocm_probe_tests::copy_fixture("container-torch-cu130-gfx1150");
    let d = dir.path();
    std::fs::remove_dir_all(d.join(site)).unwrap();
    write(
        d,
        &format!("{site}/torch-2.9.1+rocm7.2.3.dist-info/METADATA"),
        b"Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1+rocm7.2.3\n",
    );
    write(
        d,
        &format!("{site}/torch/version.py"),
        b"__version__ = '2.9.1+rocm7.2.3'\ncuda = None\nhip = '7.2.53211'\n",
    );
    for lib in [
        "libtorch.so",
        "libtorch_hip.so",
        "libamdhip64.so",
        "libhsa-runtime64.so",
    ] {
        write(d, &format!("{site}/torch/lib/{lib}"), b"");
    }
    let r = Report::collect(&Source::fixture(d).unwrap(), Options::default());
    assert_eq!(r.verdict.root_layer, 0, "{:#?}", r.findings);
    assert!(
        ids(&r).contains(&"runtime.wheel-runtime-only"),
        "{:?}",
        ids(&r)
    );
    assert!(!ids(&r).contains(&"runtime.no-rocm"));

    // A system ROCm beside the CUDA wheel: the wheel is a warning again, runtime is found.
    let dir = rocm_probe_tests::copy_fixture("container-torch-cu130-gfx1150");
    let d = dir.path();
    write(d, "opt/rocm-7.2.0/.info/version", b"7.2.0\n");
    write(d, "opt/rocm-7.2.0/lib/libhsa-runtime64.so.1.18.70200", b"");
    std::os::unix::fs::symlink(
        "libhsa-runtime64.so.1.18.70200",
        d.join("opt/rocm-7.2.0/lib/libhsa-runtime64.so.1"),
    )
    .unwrap();
    let r = Report::collect(&Source::fixture(d).unwrap(), Options::default());
    assert_eq!(
        finding(&r, "frameworks.torch-cuda-build").status,
        Status::Warn
    );
    assert!(!ids(&r).contains(&"runtime.no-rocm"), "{:?}", ids(&r));
}

/// lmstudio-bug-tracker#1269: LM Studio's own rocBLAS under the user's home, judged against the
/// GPU like a wheel's; with the GPU's catalogue there it passes, and without an absolute HOME
/// nothing is looked for.
#[test]
fn an_applications_own_rocblas_under_home_is_judged_against_the_gpu() {
    const VENDOR: &str =
        "home/xyzzy/.lmstudio/extensions/backends/vendor/linux-llama-rocm-vendor-v3";
    let r = report("lmstudio-rocm-vendor-no-gfx1151");
    let f = finding(&r, "frameworks.bundled-rocblas-no-kernels-for-target");
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.starts_with("LM Studio's own rocBLAS"),
        "{}",
        f.summary
    );
    assert!(
        evidence(f, "/nodes/1").unwrap().starts_with("gfx1151"),
        "{f:#?}"
    );

    let with_env = |home: Option<&str>, edit: &dyn Fn(&Path)| {
        let env: Vec<(&str, &str)> = home.map(|h| ("HOME", h)).into_iter().collect();
        let dir = rocm_probe_tests::copy_fixture_with_env("lmstudio-rocm-vendor-no-gfx1151", &env);
        edit(dir.path());
        Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default())
    };
    let lmstudio = |r: &Report| -> Vec<&'static str> {
        r.findings
            .iter()
            .filter(|f| f.summary.contains("LM Studio"))
            .map(|f| f.id)
            .collect()
    };
    let r = with_env(Some("/home/xyzzy"), &|d| {
        write(
            d,
            &format!("{VENDOR}/rocblas/library/TensileLibrary_lazy_gfx1151.dat"),
            b"",
        );
    });
    assert_eq!(lmstudio(&r), ["frameworks.bundled-runtime-found"]);
    for home in [None, Some("home/xyzzy"), Some("")] {
        let r = with_env(home, &|_| {});
        assert!(lmstudio(&r).is_empty(), "{home:?}: {:?}", ids(&r));
    }
}

/// lemonade-sdk/lemonade#2705: Lemonade extracted the ROCm Core SDK (TheRock) tarball for the
/// integrated GPU's architecture (`~/.cache/lemonade/bin/therock/gfx1036-7.13.0`, its libraries in
/// `lib/`), whose rocBLAS has kernels for no GPU the machine's llama.cpp runs on. On the
/// iGPU-beside-dGPU capture, that tarball is judged against both GPUs; one for their targets
/// passes; a subdirectory without `lib/` is no runtime.
#[test]
fn an_applications_therock_tarball_under_home_is_judged_against_the_gpus() {
    const THEROCK: &str = "home/ld/.cache/lemonade/bin/therock";
    let with = |arch: &str| {
        let dir =
            rocm_probe_tests::copy_fixture_with_env("igpu-beside-dgpu", &[("HOME", "/home/ld")]);
        let lib = format!("{THEROCK}/{arch}-7.13.0/lib");
        write(
            dir.path(),
            &format!("{THEROCK}/{arch}-7.13.0/version.txt"),
            b"7.13.0",
        );
        write(dir.path(), &format!("{lib}/libamdhip64.so.7"), b"");
        write(dir.path(), &format!("{lib}/librocblas.so.5"), b"");
        for t in arch.split('+') {
            write(
                dir.path(),
                &format!("{lib}/rocblas/library/TensileLibrary_lazy_{t}.dat"),
                b"",
            );
        }
        write(dir.path(), &format!("{THEROCK}/stale/README"), b"");
        Report::collect(&Source::fixture(dir.path()).unwrap(), Options::default())
    };
    let r = with("gfx1036");
    let f = finding(&r, "frameworks.bundled-rocblas-no-kernels-for-target");
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.starts_with("Lemonade's own rocBLAS"),
        "{}",
        f.summary
    );
    assert!(
        f.summary
            .contains("no Tensile kernels for gfx1103, gfx1100 (it has: gfx1036)")
            || f.summary
                .contains("no Tensile kernels for gfx1100, gfx1103 (it has: gfx1036)"),
        "{}",
        f.summary
    );
    let found = finding(&r, "frameworks.bundled-runtime-found");
    assert!(
        found.summary.contains("ROCm Core SDK (TheRock) tarball at /home/ld/.cache/lemonade/bin/therock/gfx1036-7.13.0/lib"),
        "{}",
        found.summary
    );
    let r = with("gfx1100+gfx1103");
    assert!(
        !ids(&r).contains(&"frameworks.bundled-rocblas-no-kernels-for-target"),
        "{:?}",
        ids(&r)
    );
}
