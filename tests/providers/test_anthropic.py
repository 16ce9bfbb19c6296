"""anthropic through the real SDK (cassettes and a local server): messages, streams, tools, thinking, cache, errors."""

from __future__ import annotations

import asyncio
import json

import anthropic
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_COST_USD,
    ERROR_TYPE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from tests.providers.conftest import Scripted, cassette

KEY = "test_anthropic_api_key"
MODEL = "claude-sonnet-4-20250514"
HELLO = [{"role": "user", "content": "Say hello in one word."}]
WEATHER = [
    {
        "name": "get_weather",
        "description": "Get weather by city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def client(**kwargs) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, **kwargs)


def test_messages_create(telemetry):
    with cassette("anthropic/test_sync_messages_create_basic"):
        message = client().messages.create(model=MODEL, max_tokens=100, messages=HELLO, system="Be brief.")
    span = telemetry.one()
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    a = span.attributes
    assert a[GEN_AI_PROVIDER_NAME] == "anthropic"
    assert a[GEN_AI_REQUEST_MAX_TOKENS] == 100
    assert a[GEN_AI_RESPONSE_ID] == message.id
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (13, 5)
    assert a[AGENTOTEL_COST_USD] == pytest.approx((13 * 3 + 5 * 15) / 1e6)
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": message.content[0].text}]


def test_all_request_parameters(telemetry):
    with cassette("anthropic/test_sync_messages_create_with_all_params"):
        client().messages.create(
            model=MODEL, max_tokens=50, messages=HELLO, stop_sequences=["STOP"],
            extra_body={"temperature": 0.7, "top_k": 40, "top_p": 0.9},
        )  # fmt: skip
    a = telemetry.one().attributes
    assert a[GEN_AI_REQUEST_STOP_SEQUENCES] == ("STOP",)
    assert (a[GEN_AI_REQUEST_TEMPERATURE], a[GEN_AI_REQUEST_TOP_K], a[GEN_AI_REQUEST_TOP_P]) == (0.7, 40, 0.9)


def test_tool_use_is_recorded_and_pending(telemetry):
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    token = _context.set_current_run(run)
    try:
        with cassette("anthropic/test_sync_messages_create_captures_tool_use_content"):
            message = client().messages.create(
                model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "What is the weather in SF?"}], tools=WEATHER
            )
    finally:
        _context.reset_current_run(token)
    block = message.content[0]
    assert run.pending_tool_calls() == [_context.PendingToolCall(block.id, "get_weather", {"city": "San Francisco"})]
    assert run.tool_definitions == {"get_weather": WEATHER[0]["input_schema"]}
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_use",)
    part = json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"][0]
    assert part == {"type": "tool_call", "id": block.id, "name": "get_weather", "arguments": {"city": "San Francisco"}}


def test_tool_results_in_input_use_tool_call_response_parts(telemetry, model_server):
    model_server.script(Scripted(_message("Sunny.")))
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "SF"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]},
    ]
    client(base_url=model_server.url).messages.create(model=MODEL, max_tokens=10, messages=history)
    messages = json.loads(telemetry.one().attributes[GEN_AI_INPUT_MESSAGES])
    assert messages[1]["parts"][0] == {"type": "tool_call", "id": "toolu_1", "name": "get_weather", "arguments": {"city": "SF"}}
    assert messages[2] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_1", "response": "18C"}]}


def test_thinking_becomes_reasoning_part(telemetry):
    with cassette("anthropic/test_sync_messages_create_captures_thinking_content"):
        message = client().messages.create(
            model=MODEL, max_tokens=16000, messages=[{"role": "user", "content": "What is 17*19? Think first."}],
            thinking={"type": "enabled", "budget_tokens": 10000},
        )
    parts = json.loads(telemetry.one().attributes[GEN_AI_OUTPUT_MESSAGES])[0]["parts"]
    assert parts[0] == {"type": "reasoning", "content": message.content[0].thinking}
    assert parts[1]["type"] == "text"


def _message(text: str, usage: dict | None = None, content: list | None = None, stop: str = "end_turn") -> dict:
    return {
        "id": "msg_local", "type": "message", "role": "assistant", "model": MODEL,
        "content": content or [{"type": "text", "text": text}], "stop_reason": stop, "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 2},
    }  # fmt: skip


def test_cache_tokens_count_as_input_and_are_priced(telemetry, model_server):
    usage = {"input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200, "output_tokens": 20}
    model_server.script(Scripted(_message("hi", usage)))
    client(base_url=model_server.url).messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == 1210  # the spec counts cache reads and writes as input
    assert a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1000
    assert a[GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 200
    # sonnet 4: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million tokens
    assert a[AGENTOTEL_COST_USD] == pytest.approx((10 * 3 + 1000 * 0.3 + 200 * 3.75 + 20 * 15) / 1e6)


def test_streamed_cache_tokens(telemetry, model_server):
    model_server.script(Scripted(events=[
        {"type": "message_start", "message": {**_message(""), "content": [], "stop_reason": None,
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ]))  # fmt: skip
    with client(base_url=model_server.url).messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
        assert stream.get_final_text() == "Hi"
    a = telemetry.one().attributes
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (105, 100, 7)


def test_create_stream(telemetry):
    with cassette("anthropic/test_sync_messages_create_streaming"):
        stream = client().messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True)
        events = list(stream)
    a = telemetry.one().attributes
    assert a[GEN_AI_REQUEST_STREAM] is True
    assert a[GEN_AI_RESPONSE_ID] == events[0].message.id
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)
    assert GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in a
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"][0]["type"] == "text"


def test_messages_stream_helper(telemetry):
    with cassette("anthropic/test_sync_messages_stream"):
        with client().messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_ID] == final.id
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": text}]
    assert a[GEN_AI_USAGE_OUTPUT_TOKENS] == final.usage.output_tokens


def test_streamed_tool_use_is_assembled(telemetry, model_server):
    model_server.script(Scripted(events=[
        {"type": "message_start", "message": {**_message(""), "content": [], "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"Paris\"}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]))  # fmt: skip
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    token = _context.set_current_run(run)
    try:
        for _ in client(base_url=model_server.url).messages.create(
            model=MODEL, max_tokens=10, messages=HELLO, tools=WEATHER, stream=True
        ):
            pass
    finally:
        _context.reset_current_run(token)
    assert run.pending_tool_calls() == [_context.PendingToolCall("toolu_9", "get_weather", {"city": "Paris"})]


def test_streamed_thinking_and_text_are_assembled_typed_and_async_alike(telemetry, model_server):
    events = [
        {"type": "message_start", "message": {**_message(""), "content": [], "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris is "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "the capital."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Paris"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "."}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}},
        {"type": "message_stop"},
    ]  # fmt: skip
    expected = [{"type": "reasoning", "content": "Paris is the capital."}, {"type": "text", "content": "Paris."}]
    model_server.script(Scripted(events=events))
    for _ in client(base_url=model_server.url).messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True):
        pass

    async def read_async() -> None:
        stream = await anthropic.AsyncAnthropic(api_key="k", base_url=model_server.url).messages.create(
            model=MODEL, max_tokens=10, messages=HELLO, stream=True
        )
        async for _ in stream:
            pass

    model_server.script(Scripted(events=events))
    asyncio.run(read_async())
    spans = telemetry.model_spans()
    assert len(spans) == 2
    for span in spans:
        assert json.loads(span.attributes[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == expected


def test_api_error(telemetry):
    with cassette("anthropic/test_sync_messages_create_api_error"), pytest.raises(anthropic.NotFoundError):
        client().messages.create(model="invalid-model-name", max_tokens=100, messages=[{"role": "user", "content": "Hello"}])
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "anthropic.NotFoundError"


def test_stream_api_error(telemetry):
    with cassette("anthropic/test_sync_messages_stream_api_error"), pytest.raises(anthropic.NotFoundError):
        with client().messages.stream(model="invalid-model-name", max_tokens=100, messages=[{"role": "user", "content": "Hello"}]):
            pass
    assert telemetry.one().attributes[ERROR_TYPE] == "anthropic.NotFoundError"


def test_parse_and_beta_are_traced_once(telemetry, model_server):
    model_server.script(Scripted(_message("hello")), Scripted(_message("hello")), Scripted(_message("hello")))
    c = client(base_url=model_server.url)
    c.messages.parse(model=MODEL, max_tokens=10, messages=HELLO)
    c.beta.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    with c.beta.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
        stream.until_done()
    assert [s.name for s in telemetry.model_spans()] == [f"chat {MODEL}"] * 3


async def test_async_create_and_stream(telemetry):
    aclient = anthropic.AsyncAnthropic(api_key=KEY)
    with cassette("anthropic/test_sync_messages_create_basic"):
        message = await aclient.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    with cassette("anthropic/test_sync_messages_stream"):
        async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
            final = await stream.get_final_message()
    created, streamed = telemetry.model_spans()
    assert created.attributes[GEN_AI_RESPONSE_ID] == message.id
    assert streamed.attributes[GEN_AI_RESPONSE_ID] == final.id
    assert GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in streamed.attributes


def test_sdk_span_is_a_child_of_ours(telemetry):
    """The SDK's own span (when on) nests under ours; the query layer counts only ours."""
    with cassette("anthropic/test_sync_messages_create_basic"):
        client(open_telemetry={"tracer_provider": telemetry.tracer_provider}).messages.create(
            model=MODEL, max_tokens=100, messages=HELLO
        )
    ours = telemetry.one()
    theirs = [s for s in telemetry.spans() if s.instrumentation_scope.name == "com.anthropic.sdk.python"]
    assert len(theirs) == 1
    assert theirs[0].parent.span_id == ours.context.span_id


def test_raw_and_streaming_responses_keep_working(telemetry):
    with cassette("anthropic/test_sync_messages_create_basic"):
        raw = client().messages.with_raw_response.create(model=MODEL, max_tokens=100, messages=HELLO)
        assert raw.headers.get("request-id") is not None or raw.http_response.status_code == 200
        message = raw.parse()
    with cassette("anthropic/test_sync_messages_create_streaming"):
        with client().messages.with_streaming_response.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True) as response:
            assert response.http_response.status_code == 200
            events = list(response.parse())
    first, second = telemetry.model_spans()
    assert first.attributes[GEN_AI_RESPONSE_ID] == message.id
    assert second.attributes[GEN_AI_RESPONSE_ID] == events[0].message.id
    assert second.attributes[GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)


async def test_async_create_stream(telemetry):
    aclient = anthropic.AsyncAnthropic(api_key=KEY)
    with cassette("anthropic/test_sync_messages_create_streaming"):
        stream = await aclient.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True)
        events = [event async for event in stream]
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_ID] == events[0].message.id
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)
