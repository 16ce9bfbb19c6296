"""google-genai through the real SDK (Vertex cassettes and a local Gemini API server): calls, streams, function calls, errors."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import google.oauth2.credentials
import pytest
from google import genai
from google.genai import errors as genai_errors
from opentelemetry.trace import SpanKind, StatusCode

import agentotel
from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_STREAM_ABANDONED,
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
    GEN_AI_REQUEST_PRESENCE_PENALTY,
    GEN_AI_REQUEST_SEED,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    SERVER_ADDRESS,
)
from tests.providers.conftest import Scripted, cassette

MODEL = "gemini-2.5-flash"
POEM = "Create a poem about Open Telemetry."
WEATHER = {
    "function_declarations": [
        {
            "name": "get_weather",
            "description": "Get weather by city",
            "parameters_json_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }
    ]
}


def vertex() -> genai.Client:
    credentials = google.oauth2.credentials.Credentials(token="fake-token")
    return genai.Client(vertexai=True, project="test-project", location="test-location", credentials=credentials)


def gemini(server) -> genai.Client:
    return genai.Client(api_key="test-key", http_options={"base_url": server.url})


def reply(parts, *, finish="STOP", usage=None, response_id="resp-1", model="gemini-2.0-flash-001"):
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
            "modelVersion": model, "responseId": response_id}  # fmt: skip
    if finish is None:  # a chunk before the last
        del body["candidates"][0]["finishReason"]
    if usage is not None:
        body["usageMetadata"] = usage
    return body


def output(span):
    return json.loads(span.attributes[GEN_AI_OUTPUT_MESSAGES])


def in_run():
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    return run, _context.set_current_run(run)


# --- Vertex AI, recorded ----------------------------------------------------------------------------------


def test_vertex_generate_content(telemetry):
    with cassette("google-genai/vertex_generate_content"):
        client = vertex()  # kept: a collected Client closes its HTTP client
        response = client.models.generate_content(
            model=MODEL, contents=POEM, config={"temperature": 0.5, "top_k": 20, "max_output_tokens": 4000, "system_instruction": "Rhyme."}
        )
    span = telemetry.one()
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert span.instrumentation_scope.name == "agentotel.google_genai"
    a = span.attributes
    assert a[GEN_AI_PROVIDER_NAME] == "gcp.vertex_ai"
    assert a[GEN_AI_REQUEST_MODEL] == MODEL and a[GEN_AI_RESPONSE_MODEL] == "gemini-2.5-flash"
    assert a[SERVER_ADDRESS] == "test-location-aiplatform.googleapis.com"
    assert a[GEN_AI_REQUEST_TEMPERATURE] == 0.5 and a[GEN_AI_REQUEST_TOP_K] == 20 and a[GEN_AI_REQUEST_MAX_TOKENS] == 4000
    assert a[GEN_AI_RESPONSE_ID] == response.response_id == "hizpaKmcH9qs698P85HHgAU"
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]
    # 8 prompt, 433 candidate and 1477 thinking tokens: thinking is billed as output.
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS], a[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]) == (8, 1910, 1477)
    assert a[AGENTOTEL_COST_USD] == pytest.approx((8 * 0.30 + 1910 * 2.50) / 1e6)
    assert json.loads(a[GEN_AI_INPUT_MESSAGES]) == [{"role": "user", "parts": [{"type": "text", "content": POEM}]}]
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Rhyme."}]
    assert output(span) == [{"role": "assistant", "parts": [{"type": "text", "content": response.text}], "finish_reason": "stop"}]
    assert GEN_AI_REQUEST_STREAM not in a and GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in a


def test_vertex_stream(telemetry):
    with cassette("google-genai/vertex_generate_content_stream"):
        client = vertex()
        chunks = list(client.models.generate_content_stream(model=MODEL, contents=POEM))
    span = telemetry.one()
    a = span.attributes
    assert a[GEN_AI_REQUEST_STREAM] is True and a[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0
    assert a[GEN_AI_RESPONSE_ID] == "vizpaJGEDvXZnvgPisGa2A0" and list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS], a[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]) == (8, 388 + 2193, 2193)
    text = "".join(c.text for c in chunks)
    assert len(chunks) == 6 and output(span)[0]["parts"] == [{"type": "text", "content": text}]
    assert a[AGENTOTEL_COST_USD] > 0


def test_vertex_async_call_and_stream(telemetry):
    async def main():
        client = vertex()
        with cassette("google-genai/vertex_generate_content_async"):
            await client.aio.models.generate_content(model=MODEL, contents=POEM)
        with cassette("google-genai/vertex_generate_content_stream_async"):
            texts = [c.text async for c in await client.aio.models.generate_content_stream(model=MODEL, contents=POEM)]
        return "".join(texts)

    text = asyncio.run(main())
    plain, streamed = telemetry.model_spans()
    assert plain.attributes[GEN_AI_RESPONSE_ID] == "lCzpaN3mBYqCnvgP5dCT6AU" and GEN_AI_REQUEST_STREAM not in plain.attributes
    assert plain.attributes[GEN_AI_USAGE_OUTPUT_TOKENS] == 2032
    assert streamed.attributes[GEN_AI_REQUEST_STREAM] is True
    assert streamed.attributes[GEN_AI_RESPONSE_ID] == "zSzpaJb-MPXZnvgPisGa2A0"
    assert output(streamed)[0]["parts"] == [{"type": "text", "content": text}]
    assert streamed.attributes[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == 1257


# --- Gemini API, on a local server -----------------------------------------------------------------------


def test_gemini_api_function_call_is_pending_and_a_tool_links_to_it(telemetry, model_server):
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}  # Gemini sends no call id
    model_server.script(Scripted(reply([call], usage={"promptTokenCount": 40, "candidatesTokenCount": 5, "cachedContentTokenCount": 32})))

    @agentotel.tool
    def get_weather(city: str) -> str:
        return "sunny"

    run, token = in_run()
    try:
        client = gemini(model_server)
        response = client.models.generate_content(
            model="models/gemini-2.0-flash", contents=["What is the weather in Paris?"], config={"tools": [WEATHER]}
        )
        assert run.pending_tool_calls() == [_context.PendingToolCall("resp-1-0", "get_weather", {"city": "Paris"})]
        get_weather(**response.function_calls[0].args)
    finally:
        _context.reset_current_run(token)
    model, tool = sorted(telemetry.spans(), key=lambda s: s.start_time)
    a = model.attributes
    assert a[GEN_AI_PROVIDER_NAME] == "gcp.gemini" and a[GEN_AI_REQUEST_MODEL] == "gemini-2.0-flash"
    assert a[SERVER_ADDRESS] == "127.0.0.1"
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (40, 32, 5)
    # The cached tokens at the cache rate: 8 x 0.10 + 32 x 0.025 + 5 x 0.40 per million.
    assert a[AGENTOTEL_COST_USD] == pytest.approx((8 * 0.10 + 32 * 0.025 + 5 * 0.40) / 1e6)
    assert json.loads(a[GEN_AI_TOOL_DEFINITIONS]) == [
        {"type": "function", "name": "get_weather", "description": "Get weather by city",
         "parameters": WEATHER["function_declarations"][0]["parameters_json_schema"]}
    ]  # fmt: skip
    assert output(model)[0]["parts"] == [{"type": "tool_call", "id": "resp-1-0", "name": "get_weather", "arguments": {"city": "Paris"}}]
    assert tool.attributes[GEN_AI_TOOL_CALL_ID] == "resp-1-0"
    assert run.pending_tool_calls() == []
    assert model_server.requests[0]["path"].endswith("/models/gemini-2.0-flash:generateContent")


def test_automatic_function_calling_gives_one_span_per_model_call(telemetry, model_server):
    call = {"functionCall": {"id": "fc-1", "name": "get_weather", "args": {"city": "Paris"}}}
    model_server.script(
        Scripted(reply([call], usage={"promptTokenCount": 20, "candidatesTokenCount": 5}, response_id="r1")),
        Scripted(reply([{"text": "Sunny in Paris."}], usage={"promptTokenCount": 30, "candidatesTokenCount": 4}, response_id="r2")),
    )

    @agentotel.tool
    def get_weather(city: str) -> str:
        """Get weather by city."""
        return "sunny"

    run, token = in_run()
    try:
        client = gemini(model_server)
        response = client.models.generate_content(model="gemini-2.0-flash", contents="Weather in Paris?", config={"tools": [get_weather]})
    finally:
        _context.reset_current_run(token)
    assert response.text == "Sunny in Paris."
    first, tool, second = sorted(telemetry.spans(), key=lambda s: s.start_time)
    assert first.attributes[GEN_AI_RESPONSE_ID] == "r1" and list(first.attributes[GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]
    assert tool.attributes[GEN_AI_TOOL_CALL_ID] == "fc-1"
    assert second.attributes[GEN_AI_RESPONSE_ID] == "r2" and second.attributes[GEN_AI_USAGE_INPUT_TOKENS] == 30
    definitions = json.loads(first.attributes[GEN_AI_TOOL_DEFINITIONS])
    assert definitions[0]["name"] == "get_weather" and definitions[0]["description"] == "Get weather by city."
    assert definitions[0]["parameters"]["properties"]["city"]["type"] == "STRING"
    # The second request carries the call and its result: the function's result as the tool's message. The
    # SDK sends the result without the call's id: it is the answer to the call before it (paired by the tool).
    messages = json.loads(second.attributes[GEN_AI_INPUT_MESSAGES])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["parts"] == [{"type": "tool_call", "id": "fc-1", "name": "get_weather", "arguments": {"city": "Paris"}}]
    assert messages[2]["parts"] == [{"type": "tool_call_response", "id": "fc-1", "response": {"result": "sunny"}}]


def test_streamed_function_call_and_thoughts(telemetry, model_server):
    events = [
        reply([{"text": "Let me check.", "thought": True}], finish=None) | {"usageMetadata": {}},
        reply([{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}], finish=None),
        reply([{"text": "Checking"}], usage={"promptTokenCount": 12, "candidatesTokenCount": 7, "thoughtsTokenCount": 3}),
    ]
    model_server.script(Scripted(events=events))
    run, token = in_run()
    try:
        client = gemini(model_server)
        for _ in client.models.generate_content_stream(
            model="gemini-2.5-flash", contents="Weather in Oslo?", config={"tools": [WEATHER], "response_mime_type": "application/json"}
        ):
            pass
        assert run.pending_tool_calls() == [_context.PendingToolCall("resp-1-0", "get_weather", {"city": "Oslo"})]
    finally:
        _context.reset_current_run(token)
    span = telemetry.one()
    a = span.attributes
    assert a[GEN_AI_OUTPUT_TYPE] == "json"
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS], a[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]) == (12, 10, 3)
    assert output(span) == [{"role": "assistant", "finish_reason": "stop", "parts": [
        {"type": "reasoning", "content": "Let me check."},
        {"type": "text", "content": "Checking"},
        {"type": "tool_call", "id": "resp-1-0", "name": "get_weather", "arguments": {"city": "Oslo"}},
    ]}]  # fmt: skip


def test_typed_config_and_two_candidate_stream(telemetry, model_server):
    """A GenerateContentConfig object (not a dict) and a stream whose chunks interleave two candidates."""
    from google.genai import types

    def chunk(index, text, finish=None, usage=None):
        candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "index": index}
        if finish:
            candidate["finishReason"] = finish
        body = {"candidates": [candidate], "modelVersion": "gemini-2.0-flash-001", "responseId": "resp-2"}
        return body | ({"usageMetadata": usage} if usage else {})

    events = [chunk(0, "Roses "), chunk(1, "Violets "), chunk(1, "are blue", "STOP"),
              chunk(0, "are red", "MAX_TOKENS", {"promptTokenCount": 5, "candidatesTokenCount": 8, "cachedContentTokenCount": 2})]  # fmt: skip
    model_server.script(Scripted(events=events))
    config = types.GenerateContentConfig(
        candidate_count=2, temperature=0.0, top_p=0.9, seed=7, stop_sequences=["END"], max_output_tokens=64,
        presence_penalty=0.5,
    )  # fmt: skip
    client = gemini(model_server)
    for _ in client.models.generate_content_stream(model="gemini-2.0-flash", contents="A poem", config=config):
        pass
    a = telemetry.one().attributes
    assert a[GEN_AI_REQUEST_TEMPERATURE] == 0.0 and a[GEN_AI_REQUEST_MAX_TOKENS] == 64
    assert a[GEN_AI_REQUEST_CHOICE_COUNT] == 2 and a[GEN_AI_REQUEST_SEED] == 7
    assert list(a[GEN_AI_REQUEST_STOP_SEQUENCES]) == ["END"] and a[GEN_AI_REQUEST_PRESENCE_PENALTY] == 0.5
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["max_tokens", "stop"]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS], a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]) == (5, 8, 2)
    assert [m["parts"] for m in output(telemetry.one())] == [
        [{"type": "text", "content": "Roses are red"}], [{"type": "text", "content": "Violets are blue"}]]  # fmt: skip


def test_typed_config_fields_set_after_construction_are_read(telemetry, model_server):
    """Only the fields a caller set are read from a GenerateContentConfig: assignments after construction count."""
    from google.genai import types

    model_server.script(Scripted(reply([{"text": "Hi."}], finish="MAX_TOKENS")), Scripted(reply([{"text": "Hi."}])))
    config = types.GenerateContentConfig(temperature=0.2)
    config.max_output_tokens = 9
    config.system_instruction = "Be brief."
    config.response_mime_type = "application/json"
    client = gemini(model_server)
    client.models.generate_content(model="gemini-2.0-flash", contents="Hello", config=config)
    client.models.generate_content(model="gemini-2.0-flash", contents="Hello", config=types.GenerateContentConfig())
    typed, empty = telemetry.model_spans()
    a = typed.attributes
    assert (a[GEN_AI_REQUEST_TEMPERATURE], a[GEN_AI_REQUEST_MAX_TOKENS], a[GEN_AI_OUTPUT_TYPE]) == (0.2, 9, "json")
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["max_tokens"]
    assert not {GEN_AI_REQUEST_TEMPERATURE, GEN_AI_REQUEST_MAX_TOKENS, GEN_AI_SYSTEM_INSTRUCTIONS} & set(empty.attributes)
    assert list(empty.attributes[GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]


def test_a_content_without_parts_is_a_message_without_parts(telemetry, model_server):
    """A candidate blocked before it said anything (content with a role, no parts) and an empty history
    turn: messages with no parts, never the Content object itself as a part; calls and streams alike."""
    from google.genai import types

    blocked = {"candidates": [{"content": {"role": "model"}, "finishReason": "SAFETY", "index": 0}],
               "modelVersion": "gemini-2.0-flash-001", "responseId": "resp-b"}  # fmt: skip
    model_server.script(Scripted(blocked), Scripted(events=[blocked]))
    client = gemini(model_server)
    history = [types.Content(role="user", parts=[types.Part(text="Hi")]), types.Content(role="model"), "Go on"]
    client.models.generate_content(model="gemini-2.0-flash", contents=history)
    for _ in client.models.generate_content_stream(model="gemini-2.0-flash", contents="Hi"):
        pass
    call, stream = telemetry.model_spans()
    for span in (call, stream):
        assert output(span) == [{"role": "assistant", "parts": [], "finish_reason": "safety"}]
        assert list(span.attributes[GEN_AI_RESPONSE_FINISH_REASONS]) == ["safety"]
    assert json.loads(call.attributes[GEN_AI_INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
        {"role": "assistant", "parts": []},
        {"role": "user", "parts": [{"type": "text", "content": "Go on"}]},
    ]


def test_embed_content_is_an_embeddings_span_on_the_gemini_api_and_vertex(telemetry, model_server):
    model_server.script(
        Scripted({"embeddings": [{"values": [0.1, 0.2, 0.3]}, {"values": [0.3, 0.2, 0.1]}]}),
        Scripted({"predictions": [{"embeddings": {"values": [0.5, 0.5], "statistics": {"token_count": 4, "truncated": False}}},
                                  {"embeddings": {"values": [0.1, 0.9], "statistics": {"token_count": 6, "truncated": False}}}],
                  "metadata": {"billableCharacterCount": 20}}),
    )  # fmt: skip
    client = gemini(model_server)  # kept: a collected Client closes its HTTP client
    client.models.embed_content(model="gemini-embedding-001", contents=["a", "b"])
    credentials = google.oauth2.credentials.Credentials(token="fake-token")
    on_vertex = genai.Client(vertexai=True, project="p", location="us-central1", credentials=credentials,
                             http_options={"base_url": model_server.url})  # fmt: skip
    on_vertex.models.embed_content(model="text-embedding-005", contents=["a", "b"], config={"output_dimensionality": 2})
    api, vertex_span = telemetry.model_spans()
    assert (api.name, vertex_span.name) == ("embeddings gemini-embedding-001", "embeddings text-embedding-005")
    assert api.attributes[GEN_AI_OPERATION_NAME] == "embeddings" and api.attributes[GEN_AI_PROVIDER_NAME] == "gcp.gemini"
    assert api.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] == 3 and GEN_AI_USAGE_INPUT_TOKENS not in api.attributes
    assert vertex_span.attributes[GEN_AI_PROVIDER_NAME] == "gcp.vertex_ai"
    assert vertex_span.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] == 2
    assert vertex_span.attributes[GEN_AI_USAGE_INPUT_TOKENS] == 10  # each embedding's own count, summed
    assert GEN_AI_INPUT_MESSAGES not in api.attributes and GEN_AI_OUTPUT_MESSAGES not in api.attributes


def test_count_tokens_is_a_span_that_spends_nothing(telemetry, model_server):
    model_server.script(Scripted({"totalTokens": 7}))
    client = gemini(model_server)
    assert asyncio.run(client.aio.models.count_tokens(model="gemini-2.0-flash", contents="hello")).total_tokens == 7
    span = telemetry.one()
    assert span.name == "count_tokens gemini-2.0-flash" and span.attributes[GEN_AI_OPERATION_NAME] == "count_tokens"
    assert not {GEN_AI_USAGE_INPUT_TOKENS, AGENTOTEL_COST_USD} & set(span.attributes)


def test_stream_left_early_ends_once_on_close_or_collection(telemetry, model_server):
    events = [reply([{"text": f"part {i}"}], finish=None if i < 2 else "STOP") for i in range(3)]
    model_server.script(Scripted(events=events), Scripted(events=events))
    client = gemini(model_server)
    stream = client.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    next(iter(stream))
    stream.close()
    abandoned = client.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    for _ in abandoned:
        break
    del abandoned
    gc.collect()
    closed, collected = telemetry.model_spans()
    assert ERROR_TYPE not in closed.attributes and output(closed)[0]["parts"] == [{"type": "text", "content": "part 0"}]
    assert ERROR_TYPE not in collected.attributes and collected.attributes[AGENTOTEL_STREAM_ABANDONED] is True


def test_unknown_model_has_no_cost(telemetry, model_server):
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 1}
    model_server.script(Scripted(reply([{"text": "hi"}], usage=usage, model="my-tuned-gemini")))
    client = gemini(model_server)
    client.models.generate_content(model="my-tuned-gemini", contents="hi")
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_INPUT_TOKENS] == 3 and AGENTOTEL_COST_USD not in a


def test_api_error_is_recorded_and_raised(telemetry, model_server):
    model_server.script(Scripted({"error": {"code": 404, "message": "model not found", "status": "NOT_FOUND"}}, status=404))
    with pytest.raises(genai_errors.ClientError):
        client = gemini(model_server)
        client.models.generate_content(model="gemini-nope", contents="hi")
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "google.genai.errors.ClientError"


def test_capture_off_records_no_content(telemetry, capture_off, model_server):
    model_server.script(Scripted(reply([{"text": "secret"}], usage={"promptTokenCount": 3, "candidatesTokenCount": 1})))
    client = gemini(model_server)
    client.models.generate_content(model="gemini-2.0-flash", contents="secret", config={"system_instruction": "x"})
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_OUTPUT_TOKENS] == 1
    assert not {GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES, GEN_AI_SYSTEM_INSTRUCTIONS} & set(a)


def test_patched_when_imported_later_and_removed_by_uninstrument():
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = textwrap.dedent(
        """
        import sys
        from agentotel.providers import instrument_providers, uninstrument_providers
        instrument_providers()
        assert "google.genai" not in sys.modules
        from google.genai import models
        patched = lambda: [type(cls.__dict__[m]).__name__ for cls in (models.Models, models.AsyncModels)
                           for m in ("_generate_content", "generate_content_stream")]
        assert set(patched()) == {"_Patched"}, patched()
        uninstrument_providers()
        assert set(patched()) == {"function"}, patched()
        instrument_providers()
        assert set(patched()) == {"_Patched"}
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(root)})  # fmt: skip
    assert out.stdout.strip() == "ok", out.stderr


# Every attribute of the four recorded calls' spans (but the time to the first chunk, a clock's), as recorded
# by the code before the per-call caches (a client's attributes, a prompt's and an instruction's text, an
# output's pieces): those caches change what a call costs, never what it records.
PINNED = Path(__file__).parent / "cassettes" / "google-genai" / "span_attributes.json"


@pytest.mark.parametrize("kind", ["call", "stream", "async call", "async stream"])
def test_vertex_spans_carry_the_pinned_attributes(telemetry, kind):
    """Each recorded call made twice, with a plain-string prompt and a dict config's system instruction: the
    first span and the second (a prompt, an instruction and a client seen before) both carry exactly the
    pinned attributes, in the same order."""
    config = {"system_instruction": "Rhyme.", "temperature": 0.5}
    name = {"call": "vertex_generate_content", "stream": "vertex_generate_content_stream",
            "async call": "vertex_generate_content_async", "async stream": "vertex_generate_content_stream_async"}[kind]  # fmt: skip
    client = vertex()

    async def twice_async():
        for _ in range(2):
            if kind == "async call":
                await client.aio.models.generate_content(model=MODEL, contents=POEM, config=config)
            else:
                [c async for c in await client.aio.models.generate_content_stream(model=MODEL, contents=POEM, config=config)]

    with cassette(f"google-genai/{name}", allow_playback_repeats=True):
        if kind.startswith("async"):
            asyncio.run(twice_async())
        else:
            for _ in range(2):
                if kind == "call":
                    client.models.generate_content(model=MODEL, contents=POEM, config=config)
                else:
                    list(client.models.generate_content_stream(model=MODEL, contents=POEM, config=config))
    pinned = json.loads(PINNED.read_text())[kind]
    spans = telemetry.model_spans()
    assert len(spans) == 2
    for span in spans:
        recorded = {k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items() if k != GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK}
        assert list(recorded) == list(pinned)
        assert recorded == {**pinned, AGENTOTEL_COST_USD: pytest.approx(pinned[AGENTOTEL_COST_USD])}
