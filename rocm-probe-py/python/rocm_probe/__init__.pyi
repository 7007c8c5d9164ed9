import os
from typing import Any, Dict, List, Optional, Sequence, Union

_Path = Union[str, "os.PathLike[str]"]

__version__: str

class ProbeError(RuntimeError):
    """The probe could not run: the message is the one the rocm-probe command prints."""

def report(
    root: Optional[_Path] = None, active: bool = False, lang: str = "en"
) -> Dict[str, Any]:
    """The report, the document ``rocm-probe --json`` prints. ``root``: a fixture directory or
    archive instead of this machine. ``active=True`` runs the active probes (refused with
    ProbeError while an HSA runtime is loaded into this process). ``lang``: "en" or "zh"."""

def targets(root: Optional[_Path] = None, full: bool = False) -> List[str]:
    """One gfx target per GPU (``rocm-probe targets``); full target IDs with ``full=True``."""

def agents(root: Optional[_Path] = None) -> List[Dict[str, Any]]:
    """The agents in node order (``rocm-probe agents --json``'s ``agents``)."""

def inspect(
    path: _Path, root: Optional[_Path] = None, targets: Optional[Sequence[str]] = None
) -> Dict[str, Any]:
    """The code objects in ``path`` and a verdict for each GPU of the machine (or ``root``), or
    for each target ID in ``targets`` (``rocm-probe inspect --json``)."""

def snapshot(dest: _Path, root: Optional[_Path] = None, redact: bool = True) -> Dict[str, Any]:
    """Writes a fixture of this machine (or ``root``) to ``dest``; returns ``files``, ``links``
    and ``failed`` (reads that could not be copied)."""
