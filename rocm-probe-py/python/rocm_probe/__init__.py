"""rocm-probe's library from Python: the report, the GPU targets and agents, code-object
inspection and fixture snapshots of an AMD ROCm machine, or of a fixture directory (``root``).

Every function releases the GIL while it probes. Errors are raised as :class:`ProbeError` with the
message the ``rocm-probe`` command prints.
"""

from ._native import ProbeError, __version__, agents, inspect, report, snapshot, targets

__all__ = ["ProbeError", "__version__", "agents", "inspect", "report", "snapshot", "targets"]
