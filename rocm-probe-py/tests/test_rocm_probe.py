"""The rocm_probe module against the rocm-probe command on the fixtures: the same documents, the
same errors, the GIL released while probing. Run by scripts/test with the installed wheel and
ROCM_PROBE_BIN (the release binary built from the same tree)."""

import ast
import ctypes.util
import json
import re
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rocm_probe

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
BIN = os.environ.get("ROCM_PROBE_BIN", "rocm-probe")
# A real fat-binary library (Debian's librocsparse0, installed by scripts/test).
LIBRARY = Path("/usr/lib/x86_64-linux-gnu/librocsparse.so.0")

ALL = sorted(p.name for p in FIXTURES.iterdir() if (p / "fixture.toml").is_file())
ACTIVE = [f for f in ALL if f.startswith("active-")]


def cli(*args):
    """Runs the command; exit 2 (the probe could not run) is returned, not raised."""
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, check=False)


def untimed(doc):
    """The document without `generated_at` (when it was made: two runs differ), which must be
    RFC 3339 in UTC to the second."""
    stamp = doc.pop("generated_at")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp), stamp
    return doc


def cli_json(*args):
    """A document: any exit but 2 (1 a failure, 3 an undetermined verdict) comes with one."""
    r = cli(*args)
    assert r.returncode != 2, r.stderr
    return untimed(json.loads(r.stdout))


def cli_error(*args):
    """The message of a failed run: its stderr line without the `rocm-probe: ` prefix."""
    r = cli(*args)
    assert r.returncode == 2, (r.returncode, r.stdout)
    line = r.stderr.strip()
    assert line.startswith("rocm-probe: "), line
    return line[len("rocm-probe: ") :]


def test_fixtures_found():
    assert len(ALL) > 100 and ACTIVE and "rx7900xtx" in ALL


@pytest.mark.parametrize("fixture", ALL)
def test_report_is_the_cli_json(fixture):
    root = FIXTURES / fixture
    assert untimed(rocm_probe.report(root)) == cli_json("--root", root, "--json")


@pytest.mark.parametrize("fixture", ["rx7900xtx", "mi300x-cpx-8gpu", "kfd-missing"])
def test_report_in_chinese_is_the_cli_json(fixture):
    root = FIXTURES / fixture
    doc = untimed(rocm_probe.report(root=str(root), lang="zh"))
    assert doc == cli_json("--root", root, "--lang", "zh", "--json")
    assert doc != untimed(rocm_probe.report(root=str(root), lang="en"))


@pytest.mark.parametrize("fixture", ACTIVE)
def test_active_report_of_a_fixture_is_the_cli_json(fixture):
    root = FIXTURES / fixture
    doc = untimed(rocm_probe.report(root, active=True))
    assert doc == cli_json("--root", root, "--active", "--json")


@pytest.mark.parametrize("fixture", ["rx7900xtx", "mi300x-cpx-8gpu", "mi210-xgmi-8gpu", "apu-strixpoint"])
def test_targets_and_agents_are_the_cli_s(fixture):
    root = FIXTURES / fixture
    names = cli("--root", root, "targets").stdout.split()
    ids = cli("--root", root, "targets", "--name").stdout.split()
    assert names and ids
    assert rocm_probe.targets(root) == names
    assert rocm_probe.targets(root, full=True) == ids
    assert rocm_probe.agents(root) == cli_json("--root", root, "agents", "--json")["agents"]


def test_no_kfd_is_an_empty_list_and_the_cli_s_warning():
    root = FIXTURES / "kfd-missing"
    r = cli("--root", root, "targets")
    assert r.returncode == 1 and r.stdout == ""
    with pytest.warns(UserWarning) as caught:
        assert rocm_probe.targets(root) == []
    assert [str(w.message) for w in caught] == [r.stderr.strip()[len("rocm-probe: ") :]]
    with pytest.warns(UserWarning):
        assert rocm_probe.agents(root) == []


def test_inspect_is_the_cli_json():
    root = FIXTURES / "mi210-xgmi-8gpu"
    doc = untimed(rocm_probe.inspect(LIBRARY, root=root))
    assert doc == cli_json("--root", root, "inspect", "--json", LIBRARY)
    assert doc["files"][0]["verdicts"]
    targets = ["gfx90a:xnack-", "gfx1100"]
    doc = untimed(rocm_probe.inspect(str(LIBRARY), targets=targets))
    assert doc == cli_json("inspect", "--json", "--target", targets[0], "--target", targets[1], LIBRARY)
    assert len(doc["gpus"]) == 2


def test_snapshot_writes_what_the_cli_writes(tmp_path):
    root = FIXTURES / "rx7900xtx"
    summary = rocm_probe.snapshot(tmp_path / "py", root=root)
    r = cli("--root", root, "snapshot", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    assert summary["files"] > 0 and summary["failed"] == []
    assert str(summary["files"]) in r.stdout

    def tree(d):
        return sorted(str(p.relative_to(d)) for p in d.rglob("*"))

    assert tree(tmp_path / "py") == tree(tmp_path / "cli")
    # The snapshot reads as the machine it was taken from.
    a = untimed(rocm_probe.report(tmp_path / "py"))
    b = cli_json("--root", tmp_path / "cli", "--json")
    del a["source"], b["source"]
    assert a == b


def test_errors_are_the_cli_s_messages(tmp_path):
    missing = tmp_path / "no-such-fixture"
    with pytest.raises(rocm_probe.ProbeError) as e:
        rocm_probe.report(missing)
    assert str(e.value) == cli_error("--root", missing, "--json")
    with pytest.raises(rocm_probe.ProbeError) as e:
        rocm_probe.report(missing, lang="zh")
    assert str(e.value) == cli_error("--root", missing, "--lang", "zh", "--json")
    for call in (rocm_probe.targets, rocm_probe.agents):
        with pytest.raises(rocm_probe.ProbeError, match="no-such-fixture"):
            call(missing)

    with pytest.raises(rocm_probe.ProbeError) as e:
        rocm_probe.inspect(missing, targets=["gfx90a"])
    assert str(e.value) == cli_error("inspect", "--target", "gfx90a", missing)
    with pytest.raises(rocm_probe.ProbeError) as e:
        rocm_probe.inspect(LIBRARY, targets=["gfx90a:bogus+"])
    assert str(e.value) == cli_error("inspect", "--target", "gfx90a:bogus+", LIBRARY)

    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    root = FIXTURES / "rx7900xtx"
    with pytest.raises(rocm_probe.ProbeError) as e:
        rocm_probe.snapshot(full, root=root)
    assert str(e.value) == cli_error("--root", root, "snapshot", full)

    with pytest.raises(ValueError, match="unknown language"):
        rocm_probe.report(root, lang="fr")
    with pytest.raises(TypeError):
        rocm_probe.inspect(LIBRARY, targets="gfx90a")


def test_the_gil_is_released_while_probing():
    """With a switch interval of 100 s the interpreter never takes the GIL from a thread that
    holds it: the worker runs during a call only if the call released it."""
    root = FIXTURES / "mi300x-cpx-8gpu"
    stamps, stop = [], threading.Event()

    def worker():
        while not stop.is_set():
            stamps.append(time.monotonic())
            time.sleep(0.0002)

    old = sys.getswitchinterval()
    sys.setswitchinterval(100)
    thread = threading.Thread(target=worker)
    thread.start()
    inside = 0
    try:
        for _ in range(20):
            t0 = time.monotonic()
            rocm_probe.report(root)
            t1 = time.monotonic()
            inside += sum(1 for s in stamps if t0 < s < t1)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
    assert inside > 0


ACTIVE_WITH_HSA = r"""
import ctypes, sys, rocm_probe
ctypes.CDLL(sys.argv[1])
try:
    rocm_probe.report(active=True, lang=sys.argv[2])
except rocm_probe.ProbeError as e:
    print(e)
    sys.exit(0)
sys.exit("no exception")
"""


@pytest.mark.parametrize("lang, words", [("en", "HSA runtime is already loaded"), ("zh", "已加载一个 HSA 运行时")])
def test_active_is_refused_when_an_hsa_runtime_is_loaded(lang, words):
    hsa = ctypes.util.find_library("hsa-runtime64")
    assert hsa, "libhsa-runtime64 (Debian's libhsa-runtime64-1) is needed"
    r = subprocess.run(
        [sys.executable, "-c", ACTIVE_WITH_HSA, hsa, lang], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    assert words in r.stdout and "libhsa-runtime64.so" in r.stdout


def test_stubs_match_the_module():
    """The .pyi names every public function with the module's parameters, and py.typed ships."""
    pkg = Path(rocm_probe.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = ast.parse((pkg / "__init__.pyi").read_text())
    functions = {f.name: [a.arg for a in f.args.args] for f in stub.body if isinstance(f, ast.FunctionDef)}
    assert set(functions) == {n for n in rocm_probe.__all__ if callable(getattr(rocm_probe, n)) and n != "ProbeError"}
    import inspect

    for name, params in functions.items():
        assert list(inspect.signature(getattr(rocm_probe, name)).parameters) == params, name
    assert rocm_probe.__version__ == cli("--version").stdout.split()[1]


def test_the_collect_env_example_prints_what_docs_python_md_shows():
    doc = (REPO / "docs" / "python.md").read_text()
    script = REPO / "docs" / "collect_env.py"
    blocks = doc.split("```")
    code = next(b for b in blocks if b.startswith("python\n"))[len("python\n") :]
    assert code == script.read_text(), "docs/python.md shows docs/collect_env.py as it is"
    shown = [b[len("text\n") :] for b in blocks if b.startswith("text\n")]
    for fixture, expected in zip(["rocm-6.2-mi210", "kfd-permission-denied"], shown):
        r = subprocess.run(
            [sys.executable, script, FIXTURES / fixture], capture_output=True, text=True, check=True
        )
        assert r.stdout == expected, fixture


def test_the_exception_is_rocm_probe_s():
    assert rocm_probe.ProbeError.__module__ == "rocm_probe" and issubclass(rocm_probe.ProbeError, RuntimeError)
