"""The environment of a run: captured once at `run()` start, stored on the root span, compared between runs.

    attributes = capture_for_run(run_context, repo=None)   # at run() start: cheap, never raises
    attributes |= finish_for_run(run_context)              # at run() end: the full snapshot and its hash
    snapshot = snapshot_from_attributes(row_attributes)     # back from a stored root span
    print("\n".join(diff(snapshot_a, snapshot_b).lines()))
"""

from __future__ import annotations

import hashlib
import json
import platform
from typing import Any, Mapping

from agentotel import semconv

__all__ = ["capture_for_run", "finish_for_run", "snapshot_from_attributes", "diff"]

_pending: dict[int, dict[str, Any]] = {}


def capture_for_run(run_context: Any, repo: Any = None) -> dict[str, Any]:
    """The `agentotel.env.*` attributes known at run start (provisional minimal version)."""
    snapshot = {"os": {"system": platform.system(), "machine": platform.machine()},
                "python": {"implementation": platform.python_implementation(), "version": platform.python_version()}}
    _pending[id(run_context)] = snapshot
    return {semconv.AGENTOTEL_ENV_PYTHON_VERSION: f"{platform.python_implementation()} {platform.python_version()}"}


def finish_for_run(run_context: Any) -> dict[str, Any]:
    """The full snapshot (JSON) and its hash, for the run's root span at run end."""
    snapshot = _pending.pop(id(run_context), None)
    if snapshot is None:
        return {}
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"))
    return {semconv.AGENTOTEL_ENV_SNAPSHOT: text,
            semconv.AGENTOTEL_ENV_HASH: hashlib.sha256(text.encode()).hexdigest()[:16]}


def snapshot_from_attributes(attributes: Mapping[str, str]) -> dict | None:
    raw = attributes.get(semconv.AGENTOTEL_ENV_SNAPSHOT)
    return json.loads(raw) if raw else None


def diff(snapshot_a: Any, snapshot_b: Any) -> Any:
    raise NotImplementedError
