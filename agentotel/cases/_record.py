"""One run as detectors, case cutting and checking see it: its summary, steps, and a few span attributes.

`RunRecord` is plain data so every part of `agentotel.cases` can be exercised from step dicts alone;
`load_run` / `load_history` fill it from `agentotel.open(...)` (the query layer) when there is a store.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Mapping

from agentotel import semconv
from agentotel.analysis._record import History, load_history  # noqa: F401 - re-exported for cases
from agentotel.analysis._record import RunRecord as _AnalysisRecord
from agentotel.cases._steps import AGENT, is_error

# The span attributes (beyond the step fields) that detectors and cases read.
_ATTRIBUTES = (
    semconv.AGENTOTEL_TOOL_SCHEMA_HASH,
    semconv.GEN_AI_TOOL_DEFINITIONS,
    semconv.GEN_AI_SYSTEM_INSTRUCTIONS,
    semconv.AGENTOTEL_REPLAY_CASE,
    semconv.AGENTOTEL_REPLAY_FROZEN,
    semconv.AGENTOTEL_REPLAY_RECORDED_COST_USD,
    semconv.AGENTOTEL_ENV_HASH,
    semconv.AGENTOTEL_ENV_COMMIT,
    semconv.AGENTOTEL_ENV_TOOL_SCHEMAS_HASH,
    semconv.ERROR_TYPE,
    semconv.AGENTOTEL_PAYLOAD_TRUNCATED,
    semconv.GEN_AI_RESPONSE_ID,
    semconv.GEN_AI_DATA_SOURCE_ID,
    semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    semconv.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
)
STATUS_MESSAGE = "status_message"  # the span's status message, kept next to its attributes (a column, not an attribute)


@dataclass
class RunRecord(_AnalysisRecord):
    """A run as `agentotel.analysis` reads it (summary, steps, span attributes), plus the sub-agent runs it
    started, by the agent step that ran them: a case freezes their calls too."""

    nested: dict[int, "RunRecord"] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """`ok` or `error`: the run's own status, else error when its last step failed."""
        raw = str(self.run.get("status") or "").lower()
        if raw in {"error", "failed", "failure"}:
            return "error"
        if raw:
            return "ok"
        return "error" if self.steps and is_error(self.steps[-1]) else "ok"


# ---- from the store ----------------------------------------------------------------------------------


@functools.cache
def sql(name: str) -> str:
    """A query of agentotel/cases/sql/ by file name (without .sql)."""
    return resources.files("agentotel.cases").joinpath("sql", f"{name}.sql").read_text("utf-8")


def _rows(relation: Any) -> list[dict[str, Any]]:
    columns = list(relation.columns)
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if dataclasses.is_dataclass(value):
        # Every field, the raw payload text included: a case must serve back exactly what was recorded.
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    for method in ("to_dict", "_asdict"):
        if hasattr(value, method):
            return dict(getattr(value, method)())
    return dict(vars(value))


def load_run(traces: Any, run: str, *, nested: bool = True, _depth: int = 0) -> RunRecord:
    """The run (named by run id, trace id or a unique prefix) from a `Traces`, with the attributes cases
    need, and (`nested`) the sub-agent runs it started, loaded the same way: a case freezes their calls
    too; detectors look at each run on its own and skip them."""
    trajectory = traces.trajectory(run)
    summary = _as_dict(trajectory.run)
    steps = [_as_dict(step) for step in trajectory.steps]
    run_id = summary.get("run_id")
    span_attributes: dict[str, dict[str, str]] = {}
    root_attributes: dict[str, str] = {}
    for row in _rows(traces.sql(sql("run_spans"), {"run_id": run_id})):
        attributes = dict(row["attributes"] or {})
        chosen = {name: attributes[name] for name in _ATTRIBUTES if name in attributes}
        if row["status_message"]:
            chosen[STATUS_MESSAGE] = row["status_message"]
        span_attributes[row["span_id"]] = chosen
        if row["operation"] == "invoke_agent" and not root_attributes:
            root_attributes = chosen
            summary.setdefault("task", row["input"])
            summary.setdefault("output", row["output"])
            summary.setdefault("start_time", row["start_time"])
    record = RunRecord(summary, steps, span_attributes, root_attributes)
    agents = {s["span_id"]: s["index"] for s in steps if s.get("type") == AGENT}
    if nested and agents and _depth < _MAX_NESTING:
        params = {"trace": summary.get("trace_id"), "spans": sorted(agents)}
        for row in _rows(traces.sql(sql("nested_runs"), params)):
            if row["run_id"] and row["run_id"] != run_id:
                record.nested[agents[row["span_id"]]] = load_run(traces, row["run_id"], _depth=_depth + 1)
    return record


_MAX_NESTING = 16  # sub-agents of sub-agents ...: far deeper than any real agent, and never a cycle
