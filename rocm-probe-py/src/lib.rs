//! `rocm_probe._native`: the rocm-probe library for Python (the `rocm_probe` package re-exports
//! it; `python/rocm_probe/__init__.pyi` types it).
//!
//! Every function builds its answer with the GIL released (`Python::detach`): the probe reads
//! files only, and another Python thread runs meanwhile. The documents are the CLI's JSON
//! documents, serialized here and parsed by Python's `json`, so `report()` is `--json` as a dict.
//! Errors are raised as `rocm_probe.ProbeError` with the text the CLI prints after
//! `rocm-probe: `, in the language asked for.
//!
//! No `unsafe` here: pyo3 owns the boundary with the interpreter.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyRuntimeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rocm_probe::codeobject::{CodeObjectFile, Gpu, InspectReport, ListingBudget};
use rocm_probe::facts::topology::TOPOLOGY_DIR;
use rocm_probe::i18n::{Lang, os_error};
use rocm_probe::report::Options;
use rocm_probe::report::output::Document;
use rocm_probe::{AgentFacts, Inventory, Report, Source, msg};

pyo3::create_exception!(
    rocm_probe,
    ProbeError,
    PyRuntimeError,
    "The probe could not run: the message is the one the rocm-probe command prints."
);

/// What a call gives back from outside the GIL: JSON text, or the error's sentence; warnings
/// (the CLI's stderr lines) either way.
struct Outcome<T> {
    value: Result<T, String>,
    warnings: Vec<String>,
}

impl<T> Outcome<T> {
    fn ok(value: T) -> Self {
        Self {
            value: Ok(value),
            warnings: Vec::new(),
        }
    }

    fn err(message: impl Into<String>) -> Self {
        Self {
            value: Err(message.into()),
            warnings: Vec::new(),
        }
    }

    /// Emits the warnings as Python `UserWarning`s, then gives the value or raises.
    fn into_py(self, py: Python<'_>) -> PyResult<T> {
        let category = py.get_type::<PyUserWarning>();
        for w in &self.warnings {
            PyErr::warn(
                py,
                &category,
                &std::ffi::CString::new(w.replace('\0', " "))?,
                1,
            )?;
        }
        self.value.map_err(ProbeError::new_err)
    }
}

fn lang(lang: &str) -> PyResult<Lang> {
    match lang {
        "en" => Ok(Lang::En),
        "zh" => Ok(Lang::Zh),
        other => Err(PyValueError::new_err(msg!(
            "python.unknown-lang",
            lang = format!("{other:?}")
        ))),
    }
}

/// The source: a fixture directory or archive, or this machine. The error as the CLI words it.
fn source(root: Option<&Path>) -> Result<Source, String> {
    match root {
        Some(dir) => Source::fixture(dir).map_err(|e| e.to_string()),
        None => Ok(Source::live()),
    }
}

/// A document as JSON text: `{schema_version, tool, source, ...body}`.
fn document<T: serde::Serialize>(source: &Source, body: T) -> Result<String, String> {
    serde_json::to_string(&Document::new(source, body)).map_err(|e| e.to_string())
}

fn parse_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// An HSA runtime mapped into this process, from `/proc/self/maps`: a framework (PyTorch, JAX)
/// loaded one. The active probes initialise their own ROCr, and two in one process share KFD
/// state neither expects.
fn hsa_runtime_mapped() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libhsa-runtime64.so"))
        })
        .map(str::to_owned)
}

/// The problems an inventory could not use, as the CLI warns them.
fn problem_warnings(inventory: &Inventory) -> Vec<String> {
    rocm_probe::source::problem::warnings(&inventory.problems)
        .into_iter()
        .map(|text| msg!("cli.warning", text))
        .collect()
}

/// The report, as `rocm-probe --json` prints it.
///
/// `active=True` runs the active probes on this machine (a fixture states their results): it is
/// refused while an HSA runtime is loaded into this process.
#[pyfunction]
#[pyo3(signature = (root=None, active=false, lang="en"))]
fn report<'py>(
    py: Python<'py>,
    root: Option<PathBuf>,
    active: bool,
    lang: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let lang = self::lang(lang)?;
    if active && root.is_none() {
        if let Some(path) = hsa_runtime_mapped() {
            let text = rocm_probe::i18n::scoped(lang, || msg!("python.hsa-already-loaded", path));
            return Err(ProbeError::new_err(text));
        }
    }
    let out = py.detach(|| {
        rocm_probe::i18n::scoped(lang, || {
            let source = match source(root.as_deref()) {
                Ok(s) => s,
                Err(e) => return Outcome::err(e),
            };
            // The CLI's --active defaults: no dispatch, the libraries a process would load.
            let active = active.then(|| rocm_probe::active::ActiveOptions {
                dispatch_timeout_ms: Some(5000),
                ..Default::default()
            });
            let options = Options {
                active,
                ..Default::default()
            };
            let report = Report::collect(&source, options);
            Outcome {
                value: document(&source, &report),
                warnings: Vec::new(),
            }
        })
    });
    let text = out.into_py(py)?;
    parse_json(py, &text)
}

/// One gfx target per GPU (`rocm-probe targets`), or with `full=True` full target IDs
/// (`targets --name`). No KFD: an empty list and a warning.
#[pyfunction]
#[pyo3(signature = (root=None, full=false))]
fn targets(py: Python<'_>, root: Option<PathBuf>, full: bool) -> PyResult<Vec<String>> {
    py.detach(|| {
        let source = match source(root.as_deref()) {
            Ok(s) => s,
            Err(e) => return Outcome::err(e),
        };
        match AgentFacts::gather_targets(&source, full) {
            Ok(facts) => {
                let inventory = Inventory::from_facts(&facts);
                let mut out = Outcome::ok(inventory.targets(full));
                out.warnings = problem_warnings(&inventory);
                out
            }
            Err(e) => Outcome {
                value: Ok(Vec::new()),
                warnings: vec![no_kfd(&e)],
            },
        }
    })
    .into_py(py)
}

/// The agents in node order (`rocm-probe agents --json`'s `agents`). No KFD: an empty list and
/// a warning.
#[pyfunction]
#[pyo3(signature = (root=None))]
fn agents(py: Python<'_>, root: Option<PathBuf>) -> PyResult<Bound<'_, PyAny>> {
    let text = py
        .detach(|| {
            let source = match source(root.as_deref()) {
                Ok(s) => s,
                Err(e) => return Outcome::err(e),
            };
            match AgentFacts::gather(&source) {
                Ok(facts) => {
                    let inventory = Inventory::from_facts(&facts);
                    let value = serde_json::to_string(&inventory.agents).map_err(|e| e.to_string());
                    Outcome {
                        value,
                        warnings: problem_warnings(&inventory),
                    }
                }
                Err(e) => Outcome {
                    value: Ok("[]".to_owned()),
                    warnings: vec![no_kfd(&e)],
                },
            }
        })
        .into_py(py)?;
    parse_json(py, &text)
}

/// The GPU code objects in a file and whether one loads on each GPU of the machine (or `root`),
/// or on each of `targets` (`rocm-probe inspect --json`).
#[pyfunction]
#[pyo3(signature = (path, root=None, targets=None))]
fn inspect(
    py: Python<'_>,
    path: PathBuf,
    root: Option<PathBuf>,
    targets: Option<Vec<String>>,
) -> PyResult<Bound<'_, PyAny>> {
    let out = py.detach(|| {
        let source = match source(root.as_deref()) {
            Ok(s) => s,
            Err(e) => return Outcome::err(e),
        };
        let mut warnings = Vec::new();
        let (gpus, no_gpus) = match targets.as_deref() {
            None | Some([]) => match AgentFacts::gather_targets(&source, true) {
                Ok(facts) => {
                    let inventory = Inventory::from_facts(&facts);
                    warnings = problem_warnings(&inventory);
                    let gpus = inventory.code_object_gpus();
                    let why = gpus
                        .is_empty()
                        .then(|| msg!("cli.no-gpu-node", dir = TOPOLOGY_DIR));
                    (gpus, why)
                }
                Err(error) => (Vec::new(), Some(msg!("cli.no-kfd", error))),
            },
            Some(ids) => match ids
                .iter()
                .map(|t| Gpu::from_target_id(t))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(gpus) => (gpus, None),
                Err(e) => return Outcome::err(e.to_string()),
            },
        };
        let inspection = CodeObjectFile::open(&path)
            .and_then(|file| file.inspect_within(&mut ListingBudget::default()));
        let inspection = match inspection {
            Ok(i) => i,
            Err(e) => return Outcome::err(error_chain(&e)),
        };
        let report = InspectReport::new(vec![inspection], gpus, no_gpus);
        Outcome {
            value: document(&source, &report),
            warnings,
        }
    });
    let text = out.into_py(py)?;
    parse_json(py, &text)
}

/// Writes a fixture of this machine (or of `root`) into `dest` (absent or empty; a `.tar.gz`
/// name writes an archive), redacted unless `redact=False`. Returns what was written.
#[pyfunction]
#[pyo3(signature = (dest, root=None, redact=true))]
fn snapshot(
    py: Python<'_>,
    dest: PathBuf,
    root: Option<PathBuf>,
    redact: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let summary = py
        .detach(|| {
            let source = match source(root.as_deref()) {
                Ok(s) => s,
                Err(e) => return Outcome::err(e),
            };
            match rocm_probe::export::snapshot::snapshot(source, &dest, redact) {
                Ok(summary) => Outcome::ok(summary),
                Err(e) => Outcome::err(msg!(
                    "cli.snapshot-into",
                    dir = dest.display(),
                    error = os_error(&e)
                )),
            }
        })
        .into_py(py)?;
    let dict = PyDict::new(py);
    dict.set_item("files", summary.files)?;
    dict.set_item("links", summary.links)?;
    dict.set_item("failed", summary.failed)?;
    Ok(dict)
}

/// No readable topology, as the CLI says it.
fn no_kfd(err: &rocm_probe::ReadError) -> String {
    let why = if err.is_not_found() {
        msg!("cli.kfd-not-loaded")
    } else {
        msg!("cli.topology-unreadable")
    };
    msg!("cli.no-kfd-why", error = err, why)
}

/// An error and its causes joined with `: `, as the CLI prints them.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ProbeError", m.py().get_type::<ProbeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(targets, m)?)?;
    m.add_function(wrap_pyfunction!(agents, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    Ok(())
}
