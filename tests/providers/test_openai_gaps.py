"""Two openai shapes from real traffic: Azure streams opening with a content-filter notice, and legacy `functions`."""

from __future__ import annotations

import json

import openai

import agentotel
from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_COST_USD,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_USAGE_INPUT_TOKENS,
)
from tests.providers.conftest import Scripted

KEY = "test-key"
FILTER_NOTICE = {  # what Azure sends first when prompt filtering is on: no id, no model, no choices
    "choices": [], "created": 0, "id": "", "model": "", "object": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}}}],
}  # fmt: skip
WEATHER = {
    "name": "get_weather",
    "description": "Get weather by city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def chunk(delta, finish=None, **extra):
    return {"id": "chatcmpl-az1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-05-13",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}  # fmt: skip


def azure(server) -> openai.AzureOpenAI:
    return openai.AzureOpenAI(api_key=KEY, azure_endpoint=server.url, api_version="2024-06-01")


def in_run():
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    return run, _context.set_current_run(run)


def test_azure_stream_opening_with_a_content_filter_notice(telemetry, model_server):
    usage = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    model_server.script(Scripted(events=[
        FILTER_NOTICE,
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi there"}),
        chunk({}, "stop"),
        {**chunk({}), "choices": [], "usage": usage},
    ]))  # fmt: skip
    stream = azure(model_server).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True}
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Hi there"
    a = telemetry.one().attributes
    assert a[GEN_AI_PROVIDER_NAME] == "azure.ai.openai"
    assert a[GEN_AI_RESPONSE_ID] == "chatcmpl-az1" and a[GEN_AI_RESPONSE_MODEL] == "gpt-4o-2024-05-13"
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"] and a[GEN_AI_USAGE_INPUT_TOKENS] == 9
    assert AGENTOTEL_COST_USD in a  # the response model is known once read from the right chunk
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": "Hi there"}]


def test_legacy_function_call(telemetry, model_server):
    completion = {
        "id": "chatcmpl-f1", "object": "chat.completion", "created": 0, "model": "gpt-3.5-turbo-0613",
        "choices": [{"index": 0, "finish_reason": "function_call", "message": {
            "role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57},
    }  # fmt: skip
    model_server.script(Scripted(completion))

    @agentotel.tool
    def get_weather(city: str) -> str:
        return "sunny"

    history = [
        {"role": "user", "content": "Weather in Rome?"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
        {"role": "function", "name": "get_weather", "content": "rainy"},
        {"role": "user", "content": "And in Paris?"},
    ]
    run, token = in_run()
    try:
        response = openai.OpenAI(api_key=KEY, base_url=model_server.url + "/v1").chat.completions.create(
            model="gpt-3.5-turbo", messages=history, functions=[WEATHER], function_call="auto"
        )
        assert run.pending_tool_calls() == [_context.PendingToolCall("chatcmpl-f1-0", "get_weather", {"city": "Paris"})]
        get_weather(**json.loads(response.choices[0].message.function_call.arguments))
    finally:
        _context.reset_current_run(token)
    model, tool = sorted(telemetry.spans(), key=lambda s: s.start_time)
    a = model.attributes
    assert json.loads(a[GEN_AI_TOOL_DEFINITIONS]) == [{"type": "function", **WEATHER}]
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES]) == [{"role": "assistant", "finish_reason": "function_call", "parts": [
        {"type": "tool_call", "id": "chatcmpl-f1-0", "name": "get_weather", "arguments": {"city": "Paris"}}]}]  # fmt: skip
    assert json.loads(a[GEN_AI_INPUT_MESSAGES])[1:3] == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": None, "name": "get_weather", "arguments": {"city": "Rome"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": None, "response": "rainy"}]},
    ]
    assert tool.attributes[GEN_AI_TOOL_CALL_ID] == "chatcmpl-f1-0"
    assert run.pending_tool_calls() == []


def test_legacy_function_call_streamed(telemetry, model_server):
    model_server.script(Scripted(events=[
        chunk({"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": ""}}),
        chunk({"function_call": {"arguments": '{"city": '}}),
        chunk({"function_call": {"arguments": '"Oslo"}'}}),
        chunk({}, "function_call"),
    ]))  # fmt: skip
    run, token = in_run()
    try:
        for _ in openai.OpenAI(api_key=KEY, base_url=model_server.url + "/v1").chat.completions.create(
            model="gpt-3.5-turbo", messages=[{"role": "user", "content": "Oslo?"}], functions=[WEATHER], stream=True
        ):
            pass
        assert run.pending_tool_calls() == [_context.PendingToolCall("chatcmpl-az1-0", "get_weather", {"city": "Oslo"})]
    finally:
        _context.reset_current_run(token)
    a = telemetry.one().attributes
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["function_call"]
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [
        {"type": "tool_call", "id": "chatcmpl-az1-0", "name": "get_weather", "arguments": {"city": "Oslo"}}
    ]
