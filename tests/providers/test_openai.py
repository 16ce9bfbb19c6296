"""openai through the real SDK (cassettes): chat, tools, streams, raw responses, Responses API, embeddings, errors."""

from __future__ import annotations

import json

import openai
import pytest
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_COST_USD,
    ERROR_TYPE,
    GEN_AI_EMBEDDINGS_DIMENSION_COUNT,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_OUTPUT_TYPE,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_CHOICE_COUNT,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_REQUEST_SEED,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOKEN_TYPE,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    METRIC_AGENTOTEL_CLIENT_COST,
    METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
    METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
    SERVER_ADDRESS,
    SERVER_PORT,
)
from tests.providers.conftest import cassette

KEY = "test_openai_api_key"
USER = [{"role": "user", "content": "Say this is a test"}]
WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
        },
    }
]


def client() -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY)


def in_run() -> tuple[_context.RunContext, object]:
    run = _context.RunContext(run_id="run-1", name="test", trigger="test")
    return run, _context.set_current_run(run)


class StartAttributes(SpanProcessor):
    """What a span carried when it started (what a sampler sees)."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def on_start(self, span, parent_context=None) -> None:
        self.seen.append(dict(span.attributes))


def test_chat_completion_span_has_request_response_usage_and_cost(telemetry):
    starts = StartAttributes()
    telemetry.tracer_provider.add_span_processor(starts)
    with cassette("openai/test_chat_completion_with_content"):
        result = client().chat.completions.create(model="gpt-4o-mini", messages=USER)

    span = telemetry.one()
    assert span.name == "chat gpt-4o-mini" and span.kind is SpanKind.CLIENT
    assert starts.seen[0][GEN_AI_OPERATION_NAME] == "chat"
    assert starts.seen[0][GEN_AI_PROVIDER_NAME] == "openai"
    assert starts.seen[0][GEN_AI_REQUEST_MODEL] == "gpt-4o-mini"
    assert starts.seen[0][SERVER_ADDRESS] == "api.openai.com" and starts.seen[0][SERVER_PORT] == 443
    a = span.attributes
    assert a[GEN_AI_RESPONSE_ID] == result.id
    assert a[GEN_AI_RESPONSE_MODEL] == result.model
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == result.usage.prompt_tokens
    assert a[GEN_AI_USAGE_OUTPUT_TOKENS] == result.usage.completion_tokens
    assert a[AGENTOTEL_COST_USD] > 0
    assert json.loads(a[GEN_AI_INPUT_MESSAGES]) == [{"role": "user", "parts": [{"type": "text", "content": "Say this is a test"}]}]
    out = json.loads(a[GEN_AI_OUTPUT_MESSAGES])
    assert out[0]["parts"][0]["content"] == result.choices[0].message.content
    assert out[0]["finish_reason"] == "stop"
    assert span.status.status_code is StatusCode.UNSET


def test_request_parameters_are_recorded(telemetry):
    with cassette("openai/test_chat_completion_extra_params"):
        client().chat.completions.create(
            model="gpt-4o-mini", messages=USER, seed=42, temperature=0.5, max_tokens=50, stream=False, n=1
        )
    a = telemetry.one().attributes
    assert a[GEN_AI_REQUEST_SEED] == 42
    assert a[GEN_AI_REQUEST_TEMPERATURE] == 0.5
    assert a[GEN_AI_REQUEST_MAX_TOKENS] == 50
    assert GEN_AI_REQUEST_CHOICE_COUNT not in a  # only when not 1
    assert GEN_AI_REQUEST_STREAM not in a


def test_capture_off_records_no_content(telemetry, capture_off):
    with cassette("openai/test_chat_completion_with_content"):
        client().chat.completions.create(model="gpt-4o-mini", messages=USER, tools=WEATHER_TOOLS)
    a = telemetry.one().attributes
    assert GEN_AI_INPUT_MESSAGES not in a and GEN_AI_OUTPUT_MESSAGES not in a and GEN_AI_TOOL_DEFINITIONS not in a
    assert a[GEN_AI_USAGE_INPUT_TOKENS] > 0


def test_n_choices_report_every_finish_reason(telemetry):
    with cassette("openai/test_chat_completion_multiple_choices"):
        result = client().chat.completions.create(model="gpt-4o-mini", messages=USER, n=2)
    a = telemetry.one().attributes
    assert a[GEN_AI_REQUEST_CHOICE_COUNT] == 2
    assert len(a[GEN_AI_RESPONSE_FINISH_REASONS]) == len(result.choices) == 2
    assert [m["parts"][0]["content"] for m in json.loads(a[GEN_AI_OUTPUT_MESSAGES])] == [
        c.message.content for c in result.choices
    ]


def test_stream_accumulates_text_usage_and_time_to_first_chunk(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        stream = client().chat.completions.create(
            model="gpt-4", messages=USER, stream=True, stream_options={"include_usage": True}
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    span = telemetry.one()
    a = span.attributes
    assert a[GEN_AI_REQUEST_STREAM] is True
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (12, 5)
    assert a[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": text}]
    assert a[AGENTOTEL_COST_USD] > 0


def test_stream_with_n_choices_keeps_each_choice(telemetry):
    with cassette("openai/test_chat_completion_multiple_choices_streaming"):
        stream = client().chat.completions.create(model="gpt-4o-mini", messages=USER, n=2, stream=True)
        texts: dict[int, str] = {}
        for chunk in stream:
            for choice in chunk.choices:
                texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
    out = json.loads(telemetry.one().attributes[GEN_AI_OUTPUT_MESSAGES])
    assert [m["parts"][0]["content"] for m in out] == [texts[0], texts[1]]
    assert len(telemetry.one().attributes[GEN_AI_RESPONSE_FINISH_REASONS]) == 2


def test_tool_calls_are_recorded_as_parts_and_pending_calls(telemetry):
    run, token = in_run()
    try:
        with cassette("openai/test_chat_completion_tool_calls_with_content"):
            result = client().chat.completions.create(model="gpt-4o-mini", messages=USER, tools=WEATHER_TOOLS)
    finally:
        _context.reset_current_run(token)
    calls = result.choices[0].message.tool_calls
    a = telemetry.model_spans()[0].attributes
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    parts = json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"]
    assert [(p["id"], p["name"]) for p in parts if p["type"] == "tool_call"] == [(c.id, c.function.name) for c in calls]
    assert [p.id for p in run.pending_tool_calls()] == [c.id for c in calls]
    assert run.pending_tool_calls()[0].arguments == json.loads(calls[0].function.arguments)
    assert run.tool_definitions["get_current_weather"]["required"] == ["location"]
    assert json.loads(a[GEN_AI_TOOL_DEFINITIONS])[0]["name"] == "get_current_weather"


def test_streamed_tool_calls_are_assembled_from_deltas(telemetry):
    run, token = in_run()
    try:
        with cassette("openai/test_chat_completion_multiple_tools_streaming_with_content"):
            stream = client().chat.completions.create(model="gpt-4o-mini", messages=USER, tools=WEATHER_TOOLS, stream=True)
            arguments: dict[int, str] = {}
            ids: dict[int, str] = {}
            for chunk in stream:
                for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                    arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
                    ids[call.index] = ids.get(call.index) or call.id
    finally:
        _context.reset_current_run(token)
    assert len(ids) == 2
    pending = run.pending_tool_calls()
    assert [p.id for p in pending] == [ids[0], ids[1]]
    assert [p.arguments for p in pending] == [json.loads(arguments[0]), json.loads(arguments[1])]
    parts = json.loads(telemetry.one().attributes[GEN_AI_OUTPUT_MESSAGES])[0]["parts"]
    assert [p["arguments"] for p in parts] == [json.loads(arguments[0]), json.loads(arguments[1])]


def test_with_raw_response_keeps_parse_and_headers(telemetry):
    with cassette("openai/test_chat_completion_with_raw_response"):
        raw = client().chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=USER)
        assert raw.headers.get("x-request-id")
        completion = raw.parse()
    assert completion.choices[0].message.content
    assert raw.parse() is completion
    assert telemetry.one().attributes[GEN_AI_RESPONSE_ID] == completion.id


def test_with_raw_response_streaming(telemetry):
    with cassette("openai/test_chat_completion_with_raw_response_streaming"):
        raw = client().chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=USER, stream=True, stream_options={"include_usage": True}
        )
        assert raw.headers.get("content-type", "").startswith("text/event-stream")
        chunks = list(raw.parse())
    assert chunks
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_ID] == chunks[0].id
    assert GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in a


def test_with_streaming_response_keeps_parse_and_headers(telemetry):
    with cassette("openai/test_chat_completion_with_content"):
        with client().chat.completions.with_streaming_response.create(model="gpt-4o-mini", messages=USER) as response:
            assert response.headers.get("content-type", "").startswith("application/json")
            completion = response.parse()
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert telemetry.one().attributes[GEN_AI_RESPONSE_ID] == completion.id


def test_api_error_marks_span_and_reraises_unchanged(telemetry):
    with cassette("openai/test_chat_completion_404"), pytest.raises(openai.NotFoundError) as caught:
        client().chat.completions.create(model="this-model-does-not-exist", messages=USER)
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "openai.NotFoundError"
    assert caught.value.status_code == 404
    assert AGENTOTEL_COST_USD not in span.attributes


def test_api_error_message_is_content_and_stays_out_when_capture_is_off(telemetry, capture_off):
    with cassette("openai/test_chat_completion_404"), pytest.raises(openai.NotFoundError) as caught:
        client().chat.completions.create(model="this-model-does-not-exist", messages=USER)
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "openai.NotFoundError"
    recorded = repr((span.status.description, [dict(e.attributes) for e in span.events]))
    assert "this-model-does-not-exist" in str(caught.value)
    assert "this-model-does-not-exist" not in recorded


def test_responses_api_with_instructions_and_stream(telemetry):
    with cassette("openai/test_responses_create_streaming[content_mode0]"):
        stream = client().responses.create(
            model="gpt-4o-mini", input="Say this is a test", instructions="You are a helpful assistant.", stream=True
        )
        events = list(stream)
    final = events[-1].response
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_ID] == final.id
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == final.usage.input_tokens
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "You are a helpful assistant."}]
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES])[0]["parts"][0]["content"] == final.output_text


def test_responses_api_tool_call_and_basic(telemetry):
    run, token = in_run()
    try:
        with cassette("openai/test_responses_create_captures_tool_call_content[content_mode0]"):
            result = client().responses.create(
                model="gpt-4o-mini",
                input="What's the weather in Seattle right now?",
                tools=[{"type": "function", **WEATHER_TOOLS[0]["function"]}],
            )
    finally:
        _context.reset_current_run(token)
    call = result.output[0]
    assert [(p.id, p.name) for p in run.pending_tool_calls()] == [(call.call_id, call.name)]
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)


def test_responses_api_reasoning_tokens(telemetry):
    with cassette("openai/test_responses_create_reports_reasoning_tokens[content_mode0]"):
        result = client().responses.create(model="gpt-5.4", input=[{"role": "user", "content": "transpose"}], max_output_tokens=300)
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == result.usage.output_tokens_details.reasoning_tokens > 0
    assert a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == result.usage.input_tokens_details.cached_tokens


def test_responses_api_error(telemetry):
    with cassette("openai/test_responses_create_api_error[content_mode0]"), pytest.raises(openai.APIStatusError):
        client().responses.create(model="invalid-model", input="hi")
    assert telemetry.one().attributes[ERROR_TYPE].startswith("openai.")


def test_embeddings(telemetry):
    with cassette("openai/test_embeddings_with_content"):
        result = client().embeddings.create(model="text-embedding-3-small", input="This is a test for embeddings")
    span = telemetry.one()
    assert span.name == "embeddings text-embedding-3-small"
    a = span.attributes
    assert a[GEN_AI_OPERATION_NAME] == "embeddings"
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == result.usage.prompt_tokens
    assert a[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] == len(result.data[0].embedding)
    assert a[AGENTOTEL_COST_USD] > 0


def test_embeddings_error(telemetry):
    with cassette("openai/test_embeddings_model_not_found"), pytest.raises(openai.NotFoundError):
        client().embeddings.create(model="not-a-model", input="x")
    assert telemetry.one().attributes[ERROR_TYPE] == "openai.NotFoundError"


async def test_async_chat_stream_and_tools(telemetry):
    aclient = openai.AsyncOpenAI(api_key=KEY)
    with cassette("openai/test_async_chat_completion_streaming"):
        stream = await aclient.chat.completions.create(
            model="gpt-4", messages=USER, stream=True, stream_options={"include_usage": True}
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    with cassette("openai/test_async_chat_completion_tool_calls_with_content"):
        result = await aclient.chat.completions.create(model="gpt-4o-mini", messages=USER, tools=WEATHER_TOOLS)
    streamed, tools = telemetry.model_spans()
    assert json.loads(streamed.attributes[GEN_AI_OUTPUT_MESSAGES])[0]["parts"][0]["content"] == text
    assert GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in streamed.attributes
    assert tools.attributes[GEN_AI_RESPONSE_ID] == result.id


async def test_async_raw_response_error_and_embeddings(telemetry):
    aclient = openai.AsyncOpenAI(api_key=KEY)
    with cassette("openai/test_async_chat_completion_with_raw_response"):
        raw = await aclient.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=USER)
        completion = raw.parse()
    with cassette("openai/test_async_chat_completion_404"), pytest.raises(openai.NotFoundError):
        await aclient.chat.completions.create(model="this-model-does-not-exist", messages=USER)
    with cassette("openai/test_async_embeddings_with_dimensions"):
        await aclient.embeddings.create(model="text-embedding-3-small", input="x", dimensions=512)
    ok, failed, embeddings = telemetry.model_spans()
    assert ok.attributes[GEN_AI_RESPONSE_ID] == completion.id
    assert failed.attributes[ERROR_TYPE] == "openai.NotFoundError"
    assert embeddings.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] == 512


def test_metrics_use_spec_buckets(telemetry):
    with cassette("openai/test_chat_completion_with_content"):
        client().chat.completions.create(model="gpt-4o-mini", messages=USER)
    tokens = telemetry.metric_points(METRIC_GEN_AI_CLIENT_TOKEN_USAGE)
    assert sorted(p.attributes[GEN_AI_TOKEN_TYPE] for p in tokens) == ["input", "output"]
    assert list(tokens[0].explicit_bounds)[:3] == [1, 4, 16]
    duration = telemetry.metric_points(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)
    assert list(duration[0].explicit_bounds)[:2] == [0.01, 0.02] and duration[0].count == 1
    cost = telemetry.metric_points(METRIC_AGENTOTEL_CLIENT_COST)
    assert cost[0].value == pytest.approx(telemetry.one().attributes[AGENTOTEL_COST_USD])


def test_any_base_url_and_azure_set_server_and_provider(telemetry, model_server):
    from tests.providers.conftest import Scripted

    body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    model_server.script(Scripted(body), Scripted(body))
    openai.OpenAI(api_key=KEY, base_url=model_server.url + "/v1").chat.completions.create(model="gpt-4o-mini", messages=USER)
    azure = openai.AzureOpenAI(api_key=KEY, azure_endpoint=model_server.url, api_version="2024-06-01")
    azure.chat.completions.create(model="gpt-4o-mini", messages=USER)
    plain, az = telemetry.model_spans()
    port = int(model_server.url.rsplit(":", 1)[1])
    assert (plain.attributes[SERVER_ADDRESS], plain.attributes[SERVER_PORT]) == ("127.0.0.1", port)
    assert plain.attributes[GEN_AI_PROVIDER_NAME] == "openai"
    assert az.attributes[GEN_AI_PROVIDER_NAME] == "azure.ai.openai"
    assert (az.attributes[SERVER_ADDRESS], az.attributes[SERVER_PORT]) == ("127.0.0.1", port)


def test_parse_helpers_are_traced_once(telemetry, model_server):
    from pydantic import BaseModel

    from tests.providers.conftest import Scripted

    class Answer(BaseModel):
        city: str

    completion = {"id": "c-parse", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"city": "Paris"}'}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}  # fmt: skip
    response = {"id": "resp-parse", "object": "response", "created_at": 0, "status": "completed", "model": "gpt-4o-mini",
                "output": [{"id": "m1", "type": "message", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": '{"city": "Oslo"}', "annotations": []}]}],
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "usage": {"input_tokens": 5, "output_tokens": 4, "total_tokens": 9,
                          "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}  # fmt: skip
    model_server.script(Scripted(completion), Scripted(response))
    c = openai.OpenAI(api_key=KEY, base_url=model_server.url + "/v1")
    parsed = c.chat.completions.parse(model="gpt-4o-mini", messages=USER, response_format=Answer)
    assert parsed.choices[0].message.parsed == Answer(city="Paris")
    result = c.responses.parse(model="gpt-4o-mini", input="where?", text_format=Answer)
    assert result.output_parsed == Answer(city="Oslo")
    chat, resp = telemetry.model_spans()
    assert chat.attributes[GEN_AI_RESPONSE_ID] == "c-parse" and chat.attributes[GEN_AI_OUTPUT_TYPE] == "json"
    assert resp.attributes[GEN_AI_RESPONSE_ID] == "resp-parse"


def test_unknown_model_gets_tokens_but_no_cost(telemetry, model_server):
    from tests.providers.conftest import Scripted

    body = {"id": "c9", "object": "chat.completion", "created": 0, "model": "my-finetune-7",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}}  # fmt: skip
    model_server.script(Scripted(body))
    openai.OpenAI(api_key=KEY, base_url=model_server.url + "/v1").chat.completions.create(model="my-finetune-7", messages=USER)
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == 7
    assert AGENTOTEL_COST_USD not in a


async def test_async_with_streaming_response_parse_is_awaited(telemetry):
    aclient = openai.AsyncOpenAI(api_key=KEY)
    with cassette("openai/test_async_chat_completion_with_content"):
        async with aclient.chat.completions.with_streaming_response.create(model="gpt-4o-mini", messages=USER) as response:
            assert response.headers.get("content-type", "").startswith("application/json")
            completion = await response.parse()
    assert telemetry.one().attributes[GEN_AI_RESPONSE_ID] == completion.id
