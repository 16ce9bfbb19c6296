"""What the web view and the HTML report show, as JSON-ready dicts built from the `Traces` API.

The browser never sees the files: it gets a page of runs, one run (its steps, environment and
findings) or a diff (both runs' steps and the aligned pairs). Model calls resend the conversation so
far on every call, so a run's messages are sent once each: a step's input messages are keys into the
payload's `messages` table, and the page puts them back together (a 200-step run stays well under a
few MB instead of growing with the square of its length).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import math
import re
from dataclasses import asdict, fields, is_dataclass
from typing import Any, Mapping

_log = logging.getLogger(__name__)

RUN_COLUMNS = (
    "run_id", "name", "trace_id", "user_id", "session_id", "trigger", "start_time", "duration_ms", "status",
    "steps", "model_calls", "tool_calls", "retrievals", "errors", "input_tokens", "output_tokens", "cost_usd",
    "total_cost_usd", "models", "agent_name", "service_name", "parent_run_id",
)
SORTABLE = {"start_time", "name", "user_id", "status", "steps", "duration_ms", "cost_usd", "total_cost_usd",
            "errors", "input_tokens", "output_tokens"}
PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
_MESSAGE_REF = "$m"  # {"$m": key} stands for a message of the payload's `messages` table


class BadRequest(ValueError):
    """A filter or parameter the view cannot use; its text is shown to the user."""


def _jsonable(value: Any) -> Any:
    """A value json.dumps accepts: timestamps as ISO text, dataclasses and mappings as dicts."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(value.to_dict() if hasattr(value, "to_dict") else asdict(value))
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _date(text: str | None, name: str) -> dt.datetime | None:
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{name}: {text!r} is not a date (YYYY-MM-DD or an ISO timestamp)") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _number(text: str | None, name: str) -> float | None:
    if text in (None, ""):
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(f"{name}: {text!r} is not a number") from None
    if not math.isfinite(value):  # "nan" and "inf" parse, but no cost is either
        raise BadRequest(f"{name}: {text!r} is not a number")
    return value


def _whole(text: str | None, name: str, default: int, low: int, high: int) -> int:
    """A count from the URL, from `low` to `high` (DuckDB's LIMIT and OFFSET take no more than int64)."""
    if text in (None, ""):
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= 19) or not low <= int(text) <= high:
        raise BadRequest(f"{name}: {text!r} is not a whole number from {low} to {high}")
    return int(text)


def runs_page(traces: Any, query: Mapping[str, str]) -> dict[str, Any]:
    """One page of the runs list: filters (user, agent, status, since, until, min_cost, max_cost, q),
    a sort column and direction, and the page (offset, limit). Sub-agents are listed under their run
    only, unless `nested=1`."""
    where, params = ["true"], {}
    for key, column in (("user", "user_id"), ("agent", "coalesce(agent_name, name)"), ("status", "status")):
        if query.get(key):
            where.append(f"{column} = ${key}")
            params[key] = query[key]
    since, until = _date(query.get("since"), "since"), _date(query.get("until"), "until")
    if until is not None and len(query.get("until", "")) <= 10:  # a day: the whole of it (the last day: no end)
        until = until + dt.timedelta(days=1) if until.date() < dt.date.max else None
    if since is not None:
        where.append("start_time >= $since")
        params["since"] = since
    if until is not None:
        where.append("start_time < $until")
        params["until"] = until
    for key, op in (("min_cost", ">="), ("max_cost", "<=")):
        value = _number(query.get(key), key)
        if value is not None:
            where.append(f"coalesce(total_cost_usd, 0) {op} ${key}")
            params[key] = value
    if query.get("q"):
        where.append("(starts_with(run_id, $q) OR starts_with(trace_id, $q) OR contains(lower(name), lower($q)))")
        params["q"] = query["q"].strip()
    if query.get("nested") not in ("1", "true"):
        where.append("parent_run_id IS NULL")
    sort = query.get("sort") or "start_time"
    if sort not in SORTABLE:
        raise BadRequest(f"sort: {sort!r} is not one of {', '.join(sorted(SORTABLE))}")
    direction = "ASC" if query.get("dir") == "asc" else "DESC"
    offset = _whole(query.get("offset"), "offset", 0, 0, 2**63 - 1)
    limit = _whole(query.get("limit"), "limit", PAGE_SIZE, 1, MAX_PAGE_SIZE)
    condition = " AND ".join(where)
    columns = ", ".join(RUN_COLUMNS)
    rows = traces.sql(
        f"SELECT {columns}, count(*) OVER () AS _total FROM runs WHERE {condition} "
        f"ORDER BY {sort} {direction} NULLS LAST, run_id LIMIT {limit} OFFSET {offset}",
        params,
    ).fetchall()
    total = rows[0][-1] if rows else traces.sql(f"SELECT count(*) FROM runs WHERE {condition}", params).fetchall()[0][0]
    return {
        "rows": [_jsonable(dict(zip(RUN_COLUMNS, row[:-1]))) for row in rows],
        "total": total, "offset": offset, "limit": limit, "sort": sort, "dir": direction.lower(),
    }


def run_choices(traces: Any) -> dict[str, list[str]]:
    """The values the runs filters offer: users, agents, statuses."""
    out: dict[str, list[str]] = {}
    for key, column in (("users", "user_id"), ("agents", "coalesce(agent_name, name)"), ("statuses", "status")):
        out[key] = [r[0] for r in traces.sql(
            f"SELECT DISTINCT {column} AS v FROM runs WHERE v IS NOT NULL ORDER BY v LIMIT 200").fetchall()]
    return out


class _Messages:
    """The payload's message table: each distinct message stored once, under a short content key.

    Consecutive model calls resend the same history: a message equal to the one at the same place in the
    previous call's input takes its key without being serialised again, so a run costs what its new
    messages cost, not the square of its length."""

    def __init__(self) -> None:
        self.table: dict[str, Any] = {}
        self._previous: list[tuple[Any, Any]] = []

    def ref(self, message: Any) -> Any:
        text = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
        if len(text) < 64:  # small messages cost less inline than as a reference
            return message
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        self.table.setdefault(key, message)
        return {_MESSAGE_REF: key}

    def messages(self, value: Any) -> Any:
        if not (isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value)):
            return value
        previous, refs = self._previous, []
        for i, message in enumerate(value):
            same = i < len(previous) and previous[i][0] == message
            refs.append(previous[i][1] if same else self.ref(message))
        self._previous = list(zip(value, refs))
        return refs


_PAYLOADS = ("input", "output")
_STEP_FIELDS: tuple[str, ...] = ()


def _step(step: Any, messages: _Messages) -> dict[str, Any]:
    # Not Step.to_dict(): that deep-copies every payload (a run's whole history, once per model call).
    global _STEP_FIELDS
    if not _STEP_FIELDS:
        _STEP_FIELDS = tuple(f.name for f in fields(step) if not f.name.startswith("raw_"))
    data = {name: getattr(step, name) for name in _STEP_FIELDS if name not in _PAYLOADS}
    data = _jsonable(data)
    # Payloads are parsed JSON already (trajectory.parse_payload): JSON-safe as they are.
    data["input"] = messages.messages(step.input)
    data["output"] = messages.messages(step.output)
    return data


def _findings(traces: Any, run_id: str) -> tuple[list[dict[str, Any]], str | None]:
    try:
        found = traces.findings(run_id)
    except Exception as exc:  # noqa: BLE001 - the page still shows the run; it says why findings are missing
        _log.warning("findings for %s failed: %s", run_id, exc, exc_info=True)
        return [], f"{type(exc).__name__}: {exc}"
    out = []
    for finding in found:
        data = _jsonable(finding)
        steps = data.get("steps") or []
        data.setdefault("index", steps[0] if steps else None)
        data.setdefault("severity", "warning")
        out.append(data)
    return out, None


def trajectory_payload(traces: Any, trajectory: Any, messages: _Messages) -> dict[str, Any]:
    return {
        "run": _jsonable(trajectory.run),
        "steps": [_step(s, messages) for s in trajectory.steps],
        "environment": _jsonable(dict(sorted(trajectory.environment.items()))),
    }


def run_payload(traces: Any, run: str, *, findings: bool = True) -> dict[str, Any]:
    """One run: its summary, steps, environment and findings (`messages` holds the step messages).

    Without `findings` the page gets the run at once and asks for them next (`findings_payload`): checking
    a run reads its agent's earlier runs, which costs more than the run itself."""
    trajectory = traces.trajectory(run)
    messages = _Messages()
    payload = {"kind": "run", **trajectory_payload(traces, trajectory, messages)}
    if findings:
        payload["findings"], payload["findings_error"] = _findings(traces, trajectory.run["run_id"])
    payload["messages"] = messages.table
    return payload


def findings_payload(traces: Any, run: str) -> dict[str, Any]:
    """What `check` finds in a run, for the page that shows it."""
    found, error = _findings(traces, traces.resolve(run).run_id)
    return {"findings": found, "findings_error": error}


def diff_payload(traces: Any, run_a: str, run_b: str) -> dict[str, Any]:
    """Two runs side by side: both trajectories, the aligned pairs and the first divergence."""
    result = traces.diff(run_a, run_b)
    messages = _Messages()
    return {
        "kind": "diff",
        "a": trajectory_payload(traces, result.a, messages),
        "b": trajectory_payload(traces, result.b, messages),
        "diff": _jsonable(result.to_dict()),
        "environment_lines": list(getattr(result, "environment_lines", []) or []),
        "messages": messages.table,
    }


def to_json(payload: Any) -> str:
    """The payload as JSON text (non-finite floats as null: the browser's JSON.parse rejects NaN)."""
    try:
        # Most payloads have no NaN or infinity: encoded as they are, without a walk in Python, which would
        # also recurse twice as deep as a payload's nesting (a 600-deep tool result passed Python's limit).
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(payload), ensure_ascii=False, separators=(",", ":"), default=str)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


_SCRIPT_CLOSE = re.compile(r"</(script)", re.IGNORECASE)


def embed(payload: Any) -> str:
    """The payload as text safe inside a <script type="application/json"> element."""
    return _SCRIPT_CLOSE.sub(r"<\\/\1", to_json(payload)).replace("<!--", "<\\!--")


