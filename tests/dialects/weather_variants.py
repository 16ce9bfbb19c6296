"""What the dialect tests of a good and a faulty weather run share: the two runs, and `agentotel check`'s word on them.

The faulty run's tool fails (the weather service is down), its error goes to the model, and the model answers
"Sunny in Paris." all the same: the model step after the failed tool call is where check should point.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from agentotel.cli import main
from agentotel.query import Traces, pylist


def good_and_faulty(traces: Traces) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two runs of the store, in the order they ran: the tool working, then failing."""
    runs = pylist(traces.sql("SELECT * FROM runs ORDER BY start_time").to_arrow_table())
    assert len(runs) == 2, runs
    return runs[0], runs[1]


def check(store: Path, run: dict[str, Any]) -> list[dict[str, Any]]:
    """`agentotel check RUN --json`'s findings."""
    out = io.StringIO()
    main(["check", run["run_id"], "--dir", str(store), "--json"], stdout=out, stderr=io.StringIO())
    return [f for r in json.loads(out.getvalue())["runs"] for f in r["findings"]]


def assert_tool_error_named(traces: Traces, store: Path, good: dict[str, Any], faulty: dict[str, Any]) -> None:
    """check names the model step that answered past the failed tool call, and finds nothing of it in the good run."""
    steps = traces.trajectory(faulty["run_id"]).steps
    failed = [s for s in steps if s.type == "tool"]  # its span failed, or it answered with an error
    assert [s.tool_name for s in failed] == ["get_weather"]
    answered = next(s for s in steps if s.type == "llm" and s.index > failed[0].index)
    found = [f for f in check(store, faulty) if f["kind"] == "tool_error_ignored"]
    assert [(f["index"], f["evidence"]["failed_step"]) for f in found] == [(answered.index, failed[0].index)]
    assert not [f for f in check(store, good) if f["kind"] == "tool_error_ignored"]
