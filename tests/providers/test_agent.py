"""A multi-turn tool-calling agent against a local model server: model -> tool calls -> @tool -> model -> answer."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel.cost import cost_usd
from agentotel.runs import AttributionProcessor
from agentotel.semconv import GEN_AI_TOOL_CALL_ID
from agentotel.store import ParquetSpanExporter
from tests.providers.conftest import Scripted

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@agentotel.tool
def get_weather(city: str) -> str:
    return {"Paris": "18C, cloudy", "Oslo": "4C, rain"}[city]


def _completion(id_: str, message: dict, finish: str, prompt: int, completion: int) -> dict:
    return {
        "id": id_, "object": "chat.completion", "created": 0, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }  # fmt: skip


def _tool_call(call_id: str, city: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}


@pytest.fixture
def store(tmp_path, telemetry):
    exporter = ParquetSpanExporter(tmp_path / "traces")
    telemetry.tracer_provider.add_span_processor(AttributionProcessor())
    telemetry.tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tmp_path / "traces"
    exporter.shutdown()


def test_openai_agent_links_tool_spans_to_the_models_calls(telemetry, model_server, store):
    model_server.script(
        Scripted(_completion("chatcmpl-1", {"role": "assistant", "content": None,
                                            "tool_calls": [_tool_call("call_paris", "Paris"), _tool_call("call_oslo", "Oslo")]},
                             "tool_calls", 80, 40)),  # fmt: skip
        Scripted(_completion("chatcmpl-2", {"role": "assistant", "content": "Paris is milder."}, "stop", 150, 12)),
    )
    client = openai.OpenAI(api_key="k", base_url=model_server.url + "/v1")
    with agentotel.run("weather-agent", user="alice", task="Where is it warmer?") as run:
        messages: list = [{"role": "user", "content": "Where is it warmer, Paris or Oslo?"}]
        while True:
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
            message = reply.choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        run.output = message.content

    # The second request carried the tool results back, as the model's tool-call ids.
    sent = model_server.requests[1]["body"]["messages"]
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["call_paris", "call_oslo"]
    telemetry.tracer_provider.force_flush()

    rows = agentotel.open(store).sql(
        "select name, operation, run_id, tool_call_id, cost_usd, input_tokens, output_tokens, input from spans order by start_time"
    ).fetchall()
    names = [r[0] for r in rows]
    assert names == ["invoke_agent weather-agent", "chat gpt-4o-mini", "execute_tool get_weather",
                     "execute_tool get_weather", "chat gpt-4o-mini"]  # fmt: skip
    assert len({r[2] for r in rows}) == 1 and rows[0][2] == run.id
    assert [r[3] for r in rows if r[1] == "execute_tool"] == ["call_paris", "call_oslo"]
    expected = [
        cost_usd("openai", "gpt-4o-mini-2024-07-18", input_tokens=80, output_tokens=40),
        cost_usd("openai", "gpt-4o-mini-2024-07-18", input_tokens=150, output_tokens=12),
    ]
    costs = [r[4] for r in rows if r[1] == "chat"]
    assert costs == pytest.approx(expected) and all(c > 0 for c in costs)
    assert sum(costs) == pytest.approx((230 * 0.15 + 52 * 0.6) / 1e6)
    # The second model call saw the tool results as tool_call_response parts.
    second_input = json.loads(rows[4][7])
    assert {"type": "tool_call_response", "id": "call_oslo", "response": "4C, rain"} in [
        p for m in second_input for p in m["parts"]
    ]


def test_anthropic_agent_links_tool_spans(telemetry, model_server):
    def message(id_: str, content: list, stop: str, usage: dict) -> dict:
        return {"id": id_, "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}  # fmt: skip

    model_server.script(
        Scripted(message("msg_1", [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
                         "tool_use", {"input_tokens": 50, "output_tokens": 20})),  # fmt: skip
        Scripted(message("msg_2", [{"type": "text", "text": "Cold."}], "end_turn", {"input_tokens": 90, "output_tokens": 5})),
    )
    client = anthropic.Anthropic(api_key="k", base_url=model_server.url)
    tools = [{"name": "get_weather", "description": "weather", "input_schema": WEATHER_TOOL["function"]["parameters"]}]
    with agentotel.run("claude-agent"):
        messages: list = [{"role": "user", "content": "Weather in Oslo?"}]
        reply = client.messages.create(model="claude-sonnet-4-20250514", max_tokens=100, messages=messages, tools=tools)
        block = reply.content[0]
        messages += [{"role": "assistant", "content": reply.content},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id,
                                                   "content": get_weather(**block.input)}]}]  # fmt: skip
        client.messages.create(model="claude-sonnet-4-20250514", max_tokens=100, messages=messages, tools=tools)
    tool_span = next(s for s in telemetry.spans() if s.name == "execute_tool get_weather")
    assert tool_span.attributes[GEN_AI_TOOL_CALL_ID] == "toolu_1"
    chats = [s for s in telemetry.model_spans()]
    assert len(chats) == 2 and all(s.parent is not None for s in chats)


def test_a_model_call_counts_once_next_to_the_anthropic_sdk_span(telemetry, model_server, store):
    """The SDK's own span (on here) is in the store, but the query views count the call once: ours."""
    model_server.script(Scripted({"id": "msg_once", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                                  "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                                  "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2}}))  # fmt: skip
    client = anthropic.Anthropic(api_key="k", base_url=model_server.url,
                                 open_telemetry={"tracer_provider": telemetry.tracer_provider})  # fmt: skip
    with agentotel.run("once"):
        client.messages.create(model="claude-sonnet-4-20250514", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    telemetry.tracer_provider.force_flush()
    traces = agentotel.open(store)
    scopes = sorted(r[0] for r in traces.sql("select scope_name from spans where operation = 'chat'").fetchall())
    assert scopes == ["agentotel.anthropic", "com.anthropic.sdk.python"]
    calls = traces.sql("select scope_name, cost_usd from llm_calls").fetchall()
    assert [c[0] for c in calls] == ["agentotel.anthropic"] and calls[0][1] > 0
