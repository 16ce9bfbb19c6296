"""The issue's "done when": instrument(), an agent of run() + @tool + @retrieval, then the query side."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import agentotel
from agentotel import _config, _context

SECRET = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
PLANTED = "PLANTED-e2e-41c9"


@agentotel.tool
def lookup_order(order_id: str) -> dict:
    """Look an order up."""
    return {"order_id": order_id, "status": "shipped", "note": f"{PLANTED} token={SECRET}"}


@agentotel.retrieval(data_source="faq")
def search_faq(query: str) -> list[dict]:
    return [{"id": "faq-3", "score": 0.91, "content": f"{PLANTED} returns take 30 days"}]


def support_agent(question: str) -> None:
    with agentotel.run("support", user="alice", session="chat-1", trigger="test", task=question) as current:
        search_faq(question)
        _context.record_tool_calls([_context.PendingToolCall("call_7", "lookup_order", {"order_id": "A-1"})])
        lookup_order("A-1")
        with ThreadPoolExecutor(max_workers=2) as pool:  # parallel tool calls
            list(pool.map(lookup_order, ["B-2", "C-3"]))
        current.output = f"{PLANTED} your order shipped"
    return current


@pytest.fixture
def instrumented(tmp_path, monkeypatch):
    # Keep the test quick: no environment snapshot (it runs git). Everything else is instrument()'s.
    monkeypatch.setenv("AGENTOTEL_CAPTURE_ENVIRONMENT", "false")
    _config.reset()

    def install(**options):
        agentotel.instrument(tmp_path / "traces", **options)
        assert _config.current().capture_content is options.get("capture_content", True)
        return tmp_path / "traces"

    yield install
    agentotel.shutdown()
    _config.reset()


def test_one_run_every_row_attributed_payloads_captured_and_redacted(instrumented):
    directory = instrumented()
    current = support_agent(f"{PLANTED} where is my order?")
    assert agentotel.flush()
    traces = agentotel.open(directory)
    rows = traces.sql(
        "select name, run_id, user_id, session_id, tool_name, tool_call_id, input, output from spans order by start_time"
    ).fetchall()
    assert len(rows) == 5
    assert {(r[1], r[2], r[3]) for r in rows} == {(current.id, "alice", "chat-1")}
    tools = [r for r in rows if r[4] == "lookup_order"]
    assert sorted(json.loads(r[6])["order_id"] for r in tools) == ["A-1", "B-2", "C-3"]
    assert [r[5] for r in tools if json.loads(r[6])["order_id"] == "A-1"] == ["call_7"]
    everything = json.dumps(rows)
    assert PLANTED in everything  # content is captured ...
    assert SECRET not in everything and "[REDACTED]" in everything  # ... with secrets redacted

    (run_row,) = traces.runs().fetchall()
    assert current.id in run_row
    steps = traces.trajectory(current.id).steps
    assert [s.type for s in steps] == ["retrieval", "tool", "tool", "tool"]


def test_nothing_captured_when_capture_is_off(instrumented):
    directory = instrumented(capture_content=False)
    current = support_agent(f"{PLANTED} where is my order?")
    assert agentotel.flush()
    traces = agentotel.open(directory)
    rows = traces.sql("select * exclude (start_time, end_time, events) from spans").fetchall()
    assert len(rows) == 5
    assert PLANTED not in json.dumps(rows, default=str)
    linked = traces.sql(
        "select tool_call_id from spans where run_id = ? and tool_call_id is not null", params=[current.id]
    ).fetchall()
    assert linked == [("call_7",)]
