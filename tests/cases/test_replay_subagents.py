"""A run that starts a sub-agent (a nested run): a case cut after it freezes the sub-agent's tool and model
calls too, so the whole prefix replays offline."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

import agentotel
from agentotel.cases import load_run, new_case, replay


class Live:
    model_calls = 0
    lookups = 0


def model(request: httpx2.Request) -> httpx2.Response:
    Live.model_calls += 1
    messages = json.loads(request.content)["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        message = {"role": "assistant", "content": f"found: {last['content']}"}
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{len(messages)}", "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"key": last["content"]})}}]}
    return httpx2.Response(200, json={
        "id": f"r{Live.model_calls}", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message["content"] is None else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


@agentotel.tool
def lookup(key: str) -> str:
    Live.lookups += 1
    return key.upper()


@agentotel.tool
def publish(text: str) -> bool:
    return True


def worker(client: openai.OpenAI, question: str) -> str:
    with agentotel.run("worker", task=question) as run:
        messages = [{"role": "user", "content": question}]
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message
        call = reply.tool_calls[0]
        messages += [{"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                     {"role": "tool", "tool_call_id": call.id, "content": lookup(**json.loads(call.function.arguments))}]
        run.output = client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message.content
    return run.output


def planner(question: str) -> bool:
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(model)))
    answer = worker(client, question)
    return publish(answer)


@pytest.fixture
def case(tmp_path):
    agentotel.instrument(tmp_path / "traces")
    try:
        with agentotel.run("planner", task="alpha") as run:
            planner("alpha")
        assert agentotel.flush()
        record = load_run(agentotel.open(tmp_path / "traces"), run.id)
    finally:
        agentotel.shutdown()
    assert [s["type"] for s in record.steps] == ["agent", "tool"]
    assert [s["type"] for s in record.nested[1].steps] == ["llm", "tool", "llm"]
    Live.model_calls = Live.lookups = 0
    return new_case(record, at=2, layer="workflow", name="planner")


def test_a_case_cut_after_a_sub_agent_freezes_its_calls_under_the_agent_step(case):
    assert [(t.step, t.name, t.output) for t in case.tools] == [(1, "lookup", "ALPHA"), (2, "publish", True)]
    assert [m.step for m in case.models] == [1, 1]


def test_the_sub_agent_replays_offline(case):
    with replay(case, mode="frozen") as replayer:
        assert planner("alpha") is True  # the cut step (publish) is frozen too: it is served its recorded result
    assert Live.model_calls == 0 and Live.lookups == 0
    assert [(e.kind, e.outcome) for e in replayer.events] == [
        ("model", "served"), ("tool", "served"), ("model", "served"), ("tool", "served")]
    with replay(case, tools="live", models="frozen") as replayer:
        planner("alpha")  # tools before the cut (the sub-agent's lookup) are served; publish, at the cut, runs
    assert Live.lookups == 0 and [e.outcome for e in replayer.events][-1] == "live"
