"""Replay of tool calls through the `_active.serve_tool` seam that `@tool` asks before running a body."""

from __future__ import annotations

import pytest

from agentotel.cases import Case, ReplayMiss, ReplayMismatch, new_case, replay
from agentotel.cases._replay import ReplayedToolError
from agentotel.cases._active import serve_tool
from agentotel.cases.case import ToolFixture
from cases_build import NEW_SHAPE, looping_run

ACME = {"customer": "acme"}


@pytest.fixture
def case() -> Case:
    return new_case(looping_run(), at=3, layer="tool", name="orders")


def test_no_replay_means_every_tool_runs():
    assert serve_tool("search_orders", ACME) == (False, None)


def test_a_recorded_call_is_served_and_a_repeat_gets_the_same_answer(case):
    with replay(case, tools="frozen") as replayer:  # the three recorded calls (before and after the cut), then one more
        for _ in range(4):
            assert serve_tool("search_orders", {"customer": "acme"}) == (True, NEW_SHAPE)
    assert [e.outcome for e in replayer.events] == ["served", "served", "served", "repeated"]
    assert serve_tool("search_orders", ACME) == (False, None)  # the replay ended with the block


def test_argument_order_does_not_matter(case):
    case.tools[0].arguments = {"customer": "acme", "limit": 5}
    with replay(case):
        assert serve_tool("search_orders", {"limit": 5, "customer": "acme"})[0] is True


def test_strict_refuses_a_call_off_the_recorded_path(case):
    with replay(case, policy="strict", tools="live") as replayer:
        with pytest.raises(ReplayMismatch, match="not the recorded call"):
            serve_tool("search_orders", {"customer": "globex"})
    assert replayer.violations and replayer.violations[0].name == "search_orders"


def test_live_tools_run_once_the_recorded_ones_before_the_cut_are_served(case):
    with replay(case, tools="live") as replayer:
        assert serve_tool("search_orders", ACME)[0] is True  # step 2: before the cut at step 3
        assert serve_tool("search_orders", ACME) == (False, None)  # step 4 runs live: the recording is not served past the cut
        assert serve_tool("search_orders", {"customer": "globex"}) == (False, None)
    assert [e.outcome for e in replayer.events] == ["served", "live", "live"] and not replayer.violations


def test_frozen_mode_never_runs_a_tool(case):
    with replay(case, mode="frozen") as replayer:
        assert serve_tool("search_orders", ACME)[0] is True
        with pytest.raises(ReplayMiss, match="no recorded result for send_email"):
            serve_tool("send_email", {"to": "x"})
    assert len(replayer.violations) == 1


def test_fifo_serves_in_order_and_reports_argument_drift(case):
    with replay(case, policy="fifo") as replayer:
        assert serve_tool("search_orders", {"customer": "ACME"}) == (True, NEW_SHAPE)
    event = replayer.events[0]
    assert event.outcome == "served" and "arguments drifted" in event.detail and not replayer.violations


def test_a_recorded_failure_is_raised_again(case):
    case.tools.append(ToolFixture(step=5, name="charge", arguments={"amount": 5}, error="ValueError: card declined"))
    case.tools.append(ToolFixture(step=6, name="refund", arguments={}, error="billing.PaymentError: nope"))
    case.tools.append(ToolFixture(step=7, name="parse", arguments={}, error="json.decoder.JSONDecodeError: bad"))
    with replay(case, policy="fifo"):
        with pytest.raises(ValueError, match="card declined"):
            serve_tool("charge", {"amount": 5})
        with pytest.raises(ReplayedToolError, match="billing.PaymentError: nope"):  # not imported: never imported by name
            serve_tool("refund", {})
        with pytest.raises(ReplayedToolError, match="JSONDecodeError: bad"):  # a class needing more arguments
            serve_tool("parse", {})


def test_replay_takes_a_path_and_rejects_unknown_policies(case, tmp_path):
    path = case.save(tmp_path / "orders.yaml")
    with replay(path) as replayer:
        assert replayer.case.name == "orders"
        assert serve_tool("search_orders", ACME)[0] is True
    with pytest.raises(ValueError, match="policy 'lenient'"):
        with replay(case, policy="lenient"):
            pass


def test_a_replay_outside_instrumentation_writes_no_store(case, tmp_path, monkeypatch):
    import agentotel

    @agentotel.tool
    def search_orders(customer: str) -> dict:
        return {}

    agentotel.instrument(tmp_path / "traces")
    agentotel.shutdown()  # recorded once, then stopped: the process records nothing now, nor does a replay
    monkeypatch.chdir(tmp_path)
    with replay(case, tools="frozen"):
        assert search_orders("acme") == NEW_SHAPE
    assert not (tmp_path / "agentotel-traces").exists() and not (tmp_path / "traces" / "replays").exists()
