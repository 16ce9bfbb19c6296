"""OpenAI Responses API calls recorded by the instrumentation, cut into a case, answered on replay through
the real SDK (whole, `stream=True` and the `responses.stream()` helper) — the request hashes the recorder
and the replayer compute must agree."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

import agentotel
from agentotel.cases import ReplayFrontier, load_run, new_case, replay

INSTRUCTIONS = "You answer questions about orders."
TASK = "How many orders does acme have?"


class Model:
    """A scripted Responses endpoint: a function call first, then the answer from the tool output."""

    calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        Model.calls += 1
        body = json.loads(request.content)
        outputs = [i for i in body["input"] if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if outputs:
            output = [{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": f"acme has {outputs[-1]['output']} orders", "annotations": []}]}]
        else:
            output = [{"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_live_1",
                       "name": "count_orders", "arguments": json.dumps({"customer": "acme"})}]
        return httpx2.Response(200, json={
            "id": f"resp_{Model.calls}", "object": "response", "created_at": 0, "status": "completed", "model": "gpt-4o-mini",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "instructions": INSTRUCTIONS, "metadata": {},
            "usage": {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 49}})


@agentotel.tool
def count_orders(customer: str) -> int:
    """How many orders a customer has."""
    return 2


def agent(task: str, how: str = "create") -> str:
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(Model())))
    items: list = [{"role": "user", "content": task}]
    for _ in range(4):
        if how == "create":
            response = client.responses.create(model="gpt-4o-mini", instructions=INSTRUCTIONS, input=items)
        elif how == "stream=True":
            events = list(client.responses.create(model="gpt-4o-mini", instructions=INSTRUCTIONS, input=items, stream=True))
            response = events[-1].response
        else:
            with client.responses.stream(model="gpt-4o-mini", instructions=INSTRUCTIONS, input=items) as stream:
                response = stream.get_final_response()
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return response.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments})
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": str(count_orders(**json.loads(call.arguments)))})
    return "gave up"


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traces")
    agentotel.instrument(directory)
    try:
        with agentotel.run("orders", task=TASK) as run:
            run.output = agent(TASK)
            count_orders("globex")  # the step the case is cut at: both model answers are before it
        assert agentotel.flush()
        record = load_run(agentotel.open(directory), run.id)
    finally:
        agentotel.shutdown()
    assert run.output == "acme has 2 orders"
    assert [s["type"] for s in record.steps] == ["llm", "tool", "llm", "tool"]
    return new_case(record, at=4, layer="model", name="orders-responses")


@pytest.mark.parametrize("how", ["create", "stream=True", "responses.stream()"])
def test_recorded_responses_are_served_through_the_sdk(case, how):
    Model.calls = 0
    with replay(case, mode="frozen") as replayer:
        answer = agent(TASK, how)
    assert answer == "acme has 2 orders" and Model.calls == 0
    # strict: each request matched its recording by hash (instructions, function call and its output included)
    assert [(e.kind, e.outcome, e.detail) for e in replayer.events] == [
        ("model", "served", ""), ("tool", "served", ""), ("model", "served", "")]


def test_a_changed_request_is_refused_and_a_frozen_run_stops_at_a_new_one(case):
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(Model())))
    Model.calls = 0
    with replay(case, mode="frozen"):
        with pytest.raises(openai.BadRequestError, match="recorded calls are still unserved"):
            client.responses.create(model="gpt-4o-mini", instructions="Be terse.", input=TASK)
    with replay(case, mode="frozen", policy="fifo") as replayer:
        agent(TASK)
        with pytest.raises(ReplayFrontier):
            client.responses.create(model="gpt-4o-mini", input="one more question")
    assert Model.calls == 0 and replayer.frontier is not None
