"""agentotel: record every agent run as OpenTelemetry GenAI spans, keep them as Parquet, query them with DuckDB.

    import agentotel
    agentotel.instrument()          # LLM clients patched, spans written to ./agentotel-traces

    with agentotel.run("triage", user="alice", task="...") as run:
        ...
        run.output = answer

    traces = agentotel.open()       # DuckDB over the store: runs(), trajectory(), diff(), sql()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Names are loaded on first use so that `import agentotel` stays cheap: the query side (DuckDB) and the
# provider patches cost nothing until they are asked for.
_EXPORTS = {
    "instrument": "agentotel._setup",
    "uninstrument": "agentotel._setup",
    "flush": "agentotel._setup",
    "shutdown": "agentotel._setup",
    "run": "agentotel.runs",
    "Run": "agentotel.runs",
    "tool": "agentotel.tools",
    "retrieval": "agentotel.tools",
    "open": "agentotel.query",
    "Traces": "agentotel.query",
    "replay": "agentotel.cases",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from agentotel._setup import flush, instrument, shutdown, uninstrument
    from agentotel.cases import replay
    from agentotel.query import Traces, open
    from agentotel.runs import Run, run
    from agentotel.tools import retrieval, tool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentotel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
