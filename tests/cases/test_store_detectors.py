"""Detectors and checks over a real store: spans recorded by the real instrumentation, read back with DuckDB."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

import agentotel
from agentotel import semconv
from agentotel.cases import check, findings, load_run, new_case, run_case
from orders_agent import MODEL, TASK, TOOLS, World, buggy_agent, fixed_agent


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    World.shape, World.live_calls = 1, 0
    yield directory
    agentotel.shutdown()


def answering(message: dict):
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})
    return openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_a_call_of_an_unknown_tool_with_bad_arguments_is_named_from_the_recorded_definitions(store):
    bad_call = {"id": "c1", "type": "function", "function": {"name": "search_ordrs", "arguments": '{"customer": 5}'}}
    wrong_type = {"id": "c2", "type": "function", "function": {"name": "search_orders", "arguments": '{"customer": 5}'}}
    with agentotel.run("orders", task=TASK) as run:
        answering({"role": "assistant", "content": None, "tool_calls": [bad_call]}).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": TASK}], tools=TOOLS)
        answering({"role": "assistant", "content": None, "tool_calls": [wrong_type]}).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": TASK}], tools=TOOLS)
    agentotel.flush()
    found = {(f.kind, f.steps) for f in findings(agentotel.open(store), run.id)}
    assert ("unknown_tool", (1,)) in found
    assert ("wrong_arguments", (2,)) in found
    assert ("unanswered_tool_calls", (2,)) in found  # and nobody ran the call it asked for


def test_a_changed_tool_signature_is_interface_drift(store):
    @agentotel.tool(name="lookup")
    def lookup_v1(customer: str) -> dict:
        return {"ok": True}

    with agentotel.run("orders") as first:
        lookup_v1("acme")

    @agentotel.tool(name="lookup")
    def lookup_v2(customer: str, region: str = "eu") -> dict:
        return {"ok": True}

    with agentotel.run("orders") as second:
        lookup_v2("acme")
    agentotel.flush()
    traces = agentotel.open(store)
    drift = [f for f in findings(traces, second.id) if f.kind == "tool_interface_drift"]
    assert len(drift) == 1 and drift[0].evidence["earlier_run"] == first.id
    assert drift[0].evidence["before"] != drift[0].evidence["after"]
    assert not [f for f in findings(traces, first.id) if f.kind == "tool_interface_drift"]


def test_a_frozen_replay_runs_offline_and_judges_what_the_model_is_shown_at_the_failure_step(store):
    with agentotel.run("orders", task=TASK):
        buggy_agent(TASK)
    World.shape = 2
    with agentotel.run("orders", task=TASK) as bad:
        buggy_agent(TASK)
    agentotel.flush()
    case = new_case(load_run(agentotel.open(store), bad.id), at=3, layer="tool", name="frozen-orders")
    case.mode = "frozen"  # recorded tools and models only: CI without network or keys
    case.assertions.required_evidence = ["2 orders"]
    World.model_calls = World.live_calls = 0

    buggy = run_case(case, agent=buggy_agent, directory=store)
    fixed = run_case(case, agent=fixed_agent, directory=store)
    assert World.model_calls == 0 and World.live_calls == 0

    # The unchanged agent sends the recorded requests, so it is answered to the end and loops again.
    gates = {g.name: g for g in buggy.gates}
    assert buggy.stop is None and [g.name for g in buggy.failures] == ["must_not_repeat", "required_evidence"]
    assert "step 3 was not shown '2 orders'; its last message: 'no orders found'" in gates["required_evidence"].evidence
    # The fixed agent departs from the recording at step 3, showing the model what it must see.
    assert fixed.stop["kind"] == "departed" and fixed.stop["step"] == 3
    assert fixed.passed, fixed.lines()
    assert "up to step 3, where the replay departed" in {g.name: g for g in fixed.gates}["must_not_repeat"].evidence

    traces = agentotel.open(store / "replays")
    linked = traces.sql("SELECT count(*) FROM spans WHERE run_id = $run AND attributes[$attr] = 'frozen-orders'",
                        {"run": fixed.run_id, "attr": semconv.AGENTOTEL_REPLAY_CASE}).fetchall()[0][0]
    assert linked >= 4  # the run's root, both model calls and the tool call
    from_trace = check(case, traces)  # no replayer at hand: the latest replay, judged from its spans alone
    assert from_trace.run_id == fixed.run_id and from_trace.to_dict() == dict(fixed.to_dict(), store=None)


def test_a_call_off_the_recorded_path_fails_the_replay_gate_from_the_trace_alone(store):
    with agentotel.run("orders", task=TASK) as first:
        buggy_agent(TASK)
    agentotel.flush()
    case = new_case(load_run(agentotel.open(store), first.id), at=3, layer="tool", name="strict-orders")
    case.tools[0].arguments = {"customer": "globex"}  # the recording asked for another customer
    report = run_case(case, agent=buggy_agent, directory=store, tools="live")
    gates = {g.name: g for g in check(case, agentotel.open(store / "replays"), report.run_id).gates}
    assert not gates["replay"].passed and "step 2 (execute_tool search_orders)" in gates["replay"].evidence


def test_a_tool_answering_json_text_gets_json_text_back_on_replay(store):
    from agentotel.cases import replay
    from agentotel.cases._active import serve_tool

    @agentotel.tool
    def report(customer: str) -> str:
        return json.dumps({"orders": 2})

    with agentotel.run("report") as first:
        report("acme")
        report("globex")
    agentotel.flush()
    case = new_case(load_run(agentotel.open(store), first.id), at=2, layer="tool")
    assert case.tools[0].output == '{"orders": 2}'
    with replay(case):
        assert serve_tool("report", {"customer": "acme"}) == (True, '{"orders": 2}')


class PaymentError(Exception):
    pass


def test_a_recorded_tool_failure_is_raised_again_as_its_own_exception(store):
    from agentotel.cases import replay
    from agentotel.cases._active import serve_tool

    @agentotel.tool
    def charge(amount: int) -> dict:
        raise PaymentError(f"card declined for {amount}")

    with agentotel.run("pay") as paid:
        with pytest.raises(PaymentError):
            charge(5)
    agentotel.flush()
    record = load_run(agentotel.open(store), paid.id)
    record.steps.append(dict(record.steps[0], index=2))  # something after it, to cut at
    case = new_case(record, at=2, layer="tool")
    assert case.tools[0].error == f"{PaymentError.__module__}.PaymentError: card declined for 5"
    with replay(case):
        with pytest.raises(PaymentError, match="card declined for 5"):
            serve_tool("charge", {"amount": 5})


async def test_async_tools_and_tools_called_from_worker_threads_are_served_too(store):
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from agentotel.cases import replay

    ran = []

    @agentotel.tool
    async def fetch(url: str) -> dict:
        ran.append(url)
        return {"status": 200}

    @agentotel.tool
    def parse(text: str) -> dict:
        ran.append(text)
        return {"words": len(text.split())}

    with agentotel.run("fetcher") as first:
        await fetch("https://a.example")
        with ThreadPoolExecutor(1) as pool:
            pool.submit(parse, "a b c").result()
        await asyncio.sleep(0)
    agentotel.flush()
    record = load_run(agentotel.open(store), first.id)
    record.steps.append(dict(record.steps[-1], index=len(record.steps) + 1))
    case = new_case(record, at=len(record.steps), layer="tool")
    ran.clear()
    with replay(case, mode="frozen"):
        with agentotel.run("fetcher again"):
            assert await fetch("https://a.example") == {"status": 200}
            with ThreadPoolExecutor(1) as pool:
                assert pool.submit(parse, "a b c").result() == {"words": 3}
    assert ran == []  # neither body ran
