"""A real recorded agent run (SWE-agent): the detectors stay quiet on it, and a case cut from it replays
its recorded prefix exactly — realistic prompts, long observations — offline."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import openai
import pytest

import agentotel
from agentotel.cases import findings, load_run, new_case, run_case

TRAJECTORY = Path(__file__).parent / "data" / "6e44b9__sweagenttestrepo-1c2844.traj"
HISTORY = json.loads(TRAJECTORY.read_text())["history"]
TURNS = [m for m in HISTORY if m["role"] == "assistant"]
OBSERVATIONS = {m["tool_call_ids"][0]: m["content"] for m in HISTORY if m["role"] == "tool"}


class Recorded:
    model_calls = 0
    tool_bodies = 0


def model(request: httpx2.Request) -> httpx2.Response:
    """The recorded model: the k-th assistant turn answers the k-th request."""
    Recorded.model_calls += 1
    k = sum(1 for m in json.loads(request.content)["messages"] if m["role"] == "assistant")
    turn = TURNS[k] if k < len(TURNS) else {"content": "done"}
    calls = [{"id": c["id"], "type": "function", "function": c["function"]} for c in turn.get("tool_calls") or []]
    message = {"role": "assistant", "content": turn["content"], **({"tool_calls": calls} if calls else {})}
    return httpx2.Response(200, json={
        "id": f"r{k}", "object": "chat.completion", "created": 0, "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1000 + k, "completion_tokens": 50, "total_tokens": 1050 + k}})


def make_tool(name: str):
    @agentotel.tool(name=name)
    def recorded_tool(**arguments):
        Recorded.tool_bodies += 1
        call_id = next(c["id"] for t in TURNS for c in t.get("tool_calls") or []
                       if c["function"]["name"] == name and json.loads(c["function"]["arguments"]) == arguments)
        return OBSERVATIONS[call_id]

    return recorded_tool


TOOLS = {c["function"]["name"]: make_tool(c["function"]["name"]) for t in TURNS for c in t.get("tool_calls") or []}


def swe_agent(task) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(model)))
    messages = [{"role": m["role"], "content": m["content"]} for m in HISTORY if m["role"] in ("system", "user")][:2]
    for _ in range(len(TURNS) + 1):
        reply = client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message
        if not reply.tool_calls:
            return reply.content or ""
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            result = TOOLS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "gave up"


@pytest.fixture
def recorded_run(tmp_path):
    store = tmp_path / "traces"
    agentotel.instrument(store)
    with agentotel.run("swe-agent", task=TRAJECTORY.name) as run:
        run.output = swe_agent(TRAJECTORY.name)
    agentotel.flush()
    yield store, run.id
    agentotel.shutdown()


def test_the_detectors_stay_quiet_on_a_healthy_real_run(recorded_run):
    store, run = recorded_run
    assert findings(agentotel.open(store), run) == []


def test_a_case_cut_from_a_real_run_replays_it_exactly_offline(recorded_run):
    store, run = recorded_run
    record = load_run(agentotel.open(store), run)
    tool_steps = [s["index"] for s in record.steps if s["type"] == "tool"]
    at = tool_steps[-1] + 1  # every model answer and tool result but the last answer is frozen
    case = new_case(record, at=at, layer="workflow", name="swe-prefix")
    case.mode = "frozen"
    case.assertions.required_evidence = [OBSERVATIONS[TURNS[-2]["tool_calls"][0]["id"]][:40]]
    assert len(case.models) == len(tool_steps) + 1 and len(case.tools) == len(tool_steps)  # the last answer too

    Recorded.model_calls = Recorded.tool_bodies = 0
    report = run_case(case, agent=swe_agent, directory=store)
    assert report.passed, report.lines()
    assert Recorded.model_calls == 0 and Recorded.tool_bodies == 0  # strict: every request hash matched
    assert report.stop is None  # the unchanged agent sent every recorded request: answered to the end
    replayed = load_run(agentotel.open(store / "replays"), report.run_id)
    assert [s["type"] for s in replayed.steps] == [s["type"] for s in record.steps]
