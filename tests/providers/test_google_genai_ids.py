"""Gemini's function calls and responses carry no ids: the history an app sends back gets the ids the run's
responses gave them (the real google-genai SDK against a local Gemini API server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from google import genai
from google.genai import types

import agentotel
from agentotel import _context
from agentotel.semconv import GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES, GEN_AI_TOOL_CALL_ID
from tests.providers.conftest import Scripted

ROOT = Path(__file__).parent.parent.parent
WEATHER = {"function_declarations": [{"name": "get_weather", "description": "Get weather by city",
                                      "parameters_json_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}
ASK = "Weather in Paris and Oslo?"


def reply(parts, response_id):
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "modelVersion": "gemini-2.0-flash-001", "responseId": response_id}


def weather(*cities):
    return [{"functionCall": {"name": "get_weather", "args": {"city": c}}} for c in cities]  # no ids, as Gemini sends them


def client(server):
    return genai.Client(api_key="test-key", http_options={"base_url": server.url})


def answered(content, *results):
    """The user's turn answering a model turn: one function_response per result, without ids, in the calls' order."""
    return [content, types.Content(role="user", parts=[
        types.Part(function_response=types.FunctionResponse(name="get_weather", response={"output": r})) for r in results])]


def tool_parts(span):
    """(type, id, name or response) of each tool part of a model span's input messages."""
    return [(p["type"], p["id"], p.get("name") or p.get("response")) for m in json.loads(span.attributes[GEN_AI_INPUT_MESSAGES])
            for p in m["parts"] if p["type"] in ("tool_call", "tool_call_response")]


def in_run():
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    return run, _context.set_current_run(run)


@agentotel.tool
def get_weather(city: str) -> str:
    return {"Paris": "sunny", "Oslo": "snow"}[city]


def test_a_two_turn_tool_loop_sends_back_the_ids_the_tool_spans_carry(telemetry, model_server):
    """Parallel calls of one tool: each call and its result in the second request carry the id its execute_tool
    span got from the first response, the result paired with its own call."""
    model_server.script(Scripted(reply(weather("Paris", "Oslo"), "r1")), Scripted(reply([{"text": "Sunny, and snow."}], "r2")))
    gemini = client(model_server)
    run, token = in_run()
    try:
        history = [types.Content(role="user", parts=[types.Part(text=ASK)])]
        first = gemini.models.generate_content(model="gemini-2.0-flash", contents=history, config={"tools": [WEATHER]})
        results = [get_weather(**call.args) for call in first.function_calls]
        history += answered(first.candidates[0].content, *results)
        gemini.models.generate_content(model="gemini-2.0-flash", contents=history, config={"tools": [WEATHER]})
    finally:
        _context.reset_current_run(token)
    model_1, paris, oslo, model_2 = sorted(telemetry.spans(), key=lambda s: s.start_time)
    assert [p["id"] for p in json.loads(model_1.attributes[GEN_AI_OUTPUT_MESSAGES])[0]["parts"]] == ["r1-0", "r1-1"]
    assert (paris.attributes[GEN_AI_TOOL_CALL_ID], oslo.attributes[GEN_AI_TOOL_CALL_ID]) == ("r1-0", "r1-1")
    assert tool_parts(model_2) == [("tool_call", "r1-0", "get_weather"), ("tool_call", "r1-1", "get_weather"),
                                   ("tool_call_response", "r1-0", {"output": "sunny"}), ("tool_call_response", "r1-1", {"output": "snow"})]
    # The SDK's own objects, and what went over the wire, are left as they were: no id was added to them.
    assert history[1].parts[0].function_call.id is None and history[2].parts[0].function_response.id is None
    assert "id" not in model_server.requests[1]["body"]["contents"][1]["parts"][0]["functionCall"]


def test_the_same_call_asked_in_two_turns_keeps_each_turns_id_even_when_the_oldest_turn_is_dropped(telemetry, model_server):
    model_server.script(Scripted(reply(weather("Paris"), "r1")), Scripted(reply(weather("Paris"), "r2")),
                        Scripted(reply([{"text": "Sunny."}], "r3")), Scripted(reply([{"text": "Sunny."}], "r4")))
    gemini = client(model_server)
    run, token = in_run()
    try:
        history = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])]
        for _ in range(2):
            response = gemini.models.generate_content(model="gemini-2.0-flash", contents=history, config={"tools": [WEATHER]})
            history += answered(response.candidates[0].content, get_weather(city="Paris"))
        gemini.models.generate_content(model="gemini-2.0-flash", contents=history, config={"tools": [WEATHER]})
        gemini.models.generate_content(model="gemini-2.0-flash", contents=[history[0], *history[3:]], config={"tools": [WEATHER]})
    finally:
        _context.reset_current_run(token)
    spans = sorted(telemetry.spans(), key=lambda s: s.start_time)
    assert [s.attributes[GEN_AI_TOOL_CALL_ID] for s in spans if GEN_AI_TOOL_CALL_ID in s.attributes] == ["r1-0", "r2-0"]
    whole, windowed = spans[-2:]
    assert [(kind, i) for kind, i, _ in tool_parts(whole)] == [
        ("tool_call", "r1-0"), ("tool_call_response", "r1-0"), ("tool_call", "r2-0"), ("tool_call_response", "r2-0")]
    assert [(kind, i) for kind, i, _ in tool_parts(windowed)] == [("tool_call", "r2-0"), ("tool_call_response", "r2-0")]


def test_ids_the_sdk_or_the_app_gave_are_kept_and_a_result_without_one_answers_its_call(telemetry, model_server):
    model_server.script(Scripted(reply([{"text": "ok"}], "r9")))
    history = [
        types.Content(role="user", parts=[types.Part(text=ASK)]),
        types.Content(role="model", parts=[
            types.Part(function_call=types.FunctionCall(id="mine-1", name="get_weather", args={"city": "Paris"})),
            types.Part(function_call=types.FunctionCall(id="mine-2", name="get_weather", args={"city": "Oslo"}))]),
        types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(id="mine-2", name="get_weather", response={"output": "snow"})),
            types.Part(function_response=types.FunctionResponse(name="get_weather", response={"output": "sunny"}))]),
    ]  # fmt: skip
    gemini = client(model_server)  # (held: a client collected at once closes its connection)
    gemini.models.generate_content(model="gemini-2.0-flash", contents=history)
    assert [(kind, i) for kind, i, _ in tool_parts(telemetry.one())] == [
        ("tool_call", "mine-1"), ("tool_call", "mine-2"), ("tool_call_response", "mine-2"), ("tool_call_response", "mine-1")]


_REPLAY = """
import json, sys
from google import genai
from google.genai import types
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agentotel import _tracing
from agentotel.providers import instrument_providers
from agentotel.semconv import GEN_AI_INPUT_MESSAGES

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
_tracing.set_providers(provider, None)
instrument_providers()
contents = [types.Content.model_validate(c) for c in json.loads(sys.argv[2])]
gemini = genai.Client(api_key="k", http_options={"base_url": sys.argv[1]})
gemini.models.generate_content(model="gemini-2.0-flash", contents=contents)
print(exporter.get_finished_spans()[0].attributes[GEN_AI_INPUT_MESSAGES])
"""


def test_a_history_replayed_in_a_fresh_process_pairs_each_result_with_its_call_and_gets_the_same_ids(telemetry, model_server):
    """No run saw these calls asked for: ids made from the calls themselves, the same in any process, each result
    with its call's; the same call asked twice gets two ids."""
    history = [types.Content(role="user", parts=[types.Part(text=ASK)])]
    history += answered(types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": c}))
                                                           for c in ("Paris", "Oslo")]), "sunny", "snow")
    history += answered(types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))]),
                        "sunny")
    model_server.script(Scripted(reply([{"text": "ok"}], "r1")), Scripted(reply([{"text": "ok"}], "r2")))
    gemini = client(model_server)  # (held: a client collected at once closes its connection)
    gemini.models.generate_content(model="gemini-2.0-flash", contents=history)
    here = tool_parts(telemetry.one())
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'collector'}"}
    dumped = json.dumps([c.model_dump(mode="json", exclude_none=True) for c in history])
    out = subprocess.run([sys.executable, "-c", _REPLAY, model_server.url, dumped], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    there = [(p["type"], p["id"], p.get("name") or p.get("response")) for m in json.loads(out.stdout.strip().splitlines()[-1])
             for p in m["parts"] if p["type"] in ("tool_call", "tool_call_response")]
    assert there == here
    calls = [i for kind, i, _ in here if kind == "tool_call"]
    assert all(calls) and len(set(calls)) == 3  # Paris asked twice: two calls, two ids
    assert [i for kind, i, _ in here if kind == "tool_call_response"] == calls
