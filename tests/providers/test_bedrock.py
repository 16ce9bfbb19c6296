"""AWS Bedrock Runtime through the real botocore: every recorded call replayed, then each shape and each way a stream ends."""

from __future__ import annotations

import binascii
import gc
import json
import struct
import urllib.parse
from pathlib import Path

import boto3
import botocore.exceptions
import pytest
import yaml
from opentelemetry.trace import SpanKind, StatusCode

import agentotel
from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_STREAM_ABANDONED,
    AGENTOTEL_COST_USD,
    ERROR_TYPE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    SERVER_ADDRESS,
)
from tests.providers.conftest import CASSETTES, Scripted, cassette

RECORDED = sorted(p.stem for p in (CASSETTES / "botocore").glob("*.yaml"))
SAY = [{"role": "user", "content": [{"text": "Say this is a test"}]}]
UNPRICED = ("cohere.command-r-v1:0", "cohere.command-light-text-v14", "does-not-exist")


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch):
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def bedrock(**kwargs):
    return boto3.client("bedrock-runtime", region_name="us-east-1", **kwargs)


def recorded_calls(name: str):
    """(operation, model id, request body) of each interaction in a cassette."""
    for interaction in yaml.safe_load((CASSETTES / "botocore" / f"{name}.yaml").read_text())["interactions"]:
        path = urllib.parse.urlsplit(interaction["request"]["uri"]).path.split("/")
        yield path[3], urllib.parse.unquote(path[2]), interaction["request"]["body"]


def replay(client, operation: str, model: str, body: str | None):
    """Make the recorded call through the SDK and read its answer to the end, as a caller would."""
    if operation == "converse":
        return client.converse(modelId=model, **json.loads(body))
    if operation == "converse-stream":
        return list(client.converse_stream(modelId=model, **json.loads(body))["stream"])
    if operation == "invoke":
        return client.invoke_model(modelId=model, body=body or "{}")["body"].read()
    return list(client.invoke_model_with_response_stream(modelId=model, body=body or "{}")["body"])


def output(span):
    return json.loads(span.attributes[GEN_AI_OUTPUT_MESSAGES])


def in_run():
    run = _context.RunContext(run_id="r", name="t", trigger="test")
    return run, _context.set_current_run(run)


# --- all the recorded traffic ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", RECORDED)
def test_every_recorded_call_gives_one_complete_span(telemetry, name):
    client = bedrock()
    calls = list(recorded_calls(name))
    errors = []
    with cassette(f"botocore/{name}"):
        for operation, model, body in calls:
            try:
                replay(client, operation, model, body)
            except botocore.exceptions.BotoCoreError as exc:
                errors.append(exc)
            except botocore.exceptions.ClientError as exc:
                errors.append(exc)
    spans = telemetry.model_spans()
    assert len(spans) == len(calls)  # one span each, every one ended exactly once
    for span, (operation, model, _) in zip(spans, calls):
        a = span.attributes
        assert span.name == f"chat {model}" and span.kind is SpanKind.CLIENT
        assert span.instrumentation_scope.name == "agentotel.bedrock"
        assert a[GEN_AI_PROVIDER_NAME] == "aws.bedrock" and a[GEN_AI_REQUEST_MODEL] == model
        assert a[SERVER_ADDRESS] == "bedrock-runtime.us-east-1.amazonaws.com"
        assert (GEN_AI_REQUEST_STREAM in a) == operation.endswith("stream")
        if model == "does-not-exist":
            assert span.status.status_code is StatusCode.ERROR and a[ERROR_TYPE]
            continue
        assert ERROR_TYPE not in a and span.status.status_code is not StatusCode.ERROR
        assert a[GEN_AI_RESPONSE_FINISH_REASONS] and a[GEN_AI_USAGE_INPUT_TOKENS] > 0 and a[GEN_AI_USAGE_OUTPUT_TOKENS] > 0
        assert json.loads(a[GEN_AI_INPUT_MESSAGES])[0]["role"] == "user"
        parts = output(span)[0]["parts"]
        assert parts and all(p["type"] in ("text", "tool_call") for p in parts)
        assert (AGENTOTEL_COST_USD in a) == (model not in UNPRICED)  # an unknown price: no cost, never $0
        if operation.endswith("stream"):
            assert a[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0
    assert len(errors) == sum(model == "does-not-exist" for _, model, _ in calls)


# --- Converse ---------------------------------------------------------------------------------------------------


def test_converse(telemetry):
    with cassette("botocore/test_converse_with_content"):
        response = bedrock().converse(
            modelId="amazon.titan-text-lite-v1", messages=SAY,
            inferenceConfig={"maxTokens": 10, "temperature": 0.8, "topP": 1, "stopSequences": ["|"]},
        )  # fmt: skip
    a = telemetry.one().attributes
    assert (a[GEN_AI_REQUEST_MAX_TOKENS], a[GEN_AI_REQUEST_TEMPERATURE], a[GEN_AI_REQUEST_TOP_P]) == (10, 0.8, 1)
    assert list(a[GEN_AI_REQUEST_STOP_SEQUENCES]) == ["|"]
    assert json.loads(a[GEN_AI_INPUT_MESSAGES]) == [{"role": "user", "parts": [{"type": "text", "content": "Say this is a test"}]}]
    text = response["output"]["message"]["content"][0]["text"]
    assert json.loads(a[GEN_AI_OUTPUT_MESSAGES]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "max_tokens"}
    ]
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == ["max_tokens"]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (8, 10)
    assert a[AGENTOTEL_COST_USD] == pytest.approx((8 * 0.15 + 10 * 0.20) / 1e6)  # Titan Text Lite


def test_converse_tool_calls_are_pending_and_link_to_tools(telemetry):
    calls = list(recorded_calls("test_converse_tool_call_with_content"))
    first = json.loads(calls[0][2])

    @agentotel.tool
    def get_current_weather(location: str) -> str:
        return "sunny"

    run, token = in_run()
    try:
        with cassette("botocore/test_converse_tool_call_with_content"):
            response = bedrock().converse(modelId="amazon.nova-micro-v1:0", **first)
            uses = [b["toolUse"] for b in response["output"]["message"]["content"] if "toolUse" in b]
            assert run.pending_tool_calls() == [_context.PendingToolCall(u["toolUseId"], u["name"], u["input"]) for u in uses]
            for use in uses:
                get_current_weather(**use["input"])
    finally:
        _context.reset_current_run(token)
    model, *tools = sorted(telemetry.spans(), key=lambda s: s.start_time)
    assert [t.attributes[GEN_AI_TOOL_CALL_ID] for t in tools] == [u["toolUseId"] for u in uses]
    assert run.pending_tool_calls() == []
    definitions = json.loads(model.attributes[GEN_AI_TOOL_DEFINITIONS])
    assert definitions == [{"type": "function", "name": "get_current_weather", "description": "Get the current weather in a given location.",
                            "parameters": first["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]}]  # fmt: skip
    parts = output(model)[0]["parts"]
    assert [p["type"] for p in parts] == ["text", "tool_call", "tool_call"]
    assert parts[1] == {"type": "tool_call", "id": uses[0]["toolUseId"], "name": "get_current_weather", "arguments": {"location": "Seattle"}}


def test_converse_tool_results_in_the_next_request(telemetry):
    calls = list(recorded_calls("test_converse_tool_call_with_content"))
    with cassette("botocore/test_converse_tool_call_with_content"):
        client = bedrock()
        for _, model, body in calls:
            client.converse(modelId=model, **json.loads(body))
    second = telemetry.model_spans()[1]
    messages = json.loads(second.attributes[GEN_AI_INPUT_MESSAGES])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[2]["parts"][0]["type"] == "tool_call_response" and messages[2]["parts"][0]["id"].startswith("tooluse_")


def test_converse_stream_assembles_tool_calls_from_deltas(telemetry):
    _, model, body = next(recorded_calls("test_converse_stream_with_content_tool_call"))
    run, token = in_run()
    try:
        with cassette("botocore/test_converse_stream_with_content_tool_call"):
            list(bedrock().converse_stream(modelId=model, **json.loads(body))["stream"])
    finally:
        _context.reset_current_run(token)
    expected = [
        _context.PendingToolCall("tooluse_JZ11QcxSQ3m3xacMQKVIKw", "get_current_weather", {"location": "Seattle"}),
        _context.PendingToolCall("tooluse_-hxBEEwGRc-VQqC2i7SFqg", "get_current_weather", {"location": "San Francisco"}),
    ]
    assert run.pending_tool_calls() == expected
    span = telemetry.one()
    assert list(span.attributes[GEN_AI_RESPONSE_FINISH_REASONS]) == ["tool_use"]
    assert (span.attributes[GEN_AI_USAGE_INPUT_TOKENS], span.attributes[GEN_AI_USAGE_OUTPUT_TOKENS]) == (415, 202)
    assert [p["type"] for p in output(span)[0]["parts"]] == ["text", "tool_call", "tool_call"]


def test_converse_stream_closed_before_reading_or_dropped_ends_once(telemetry):
    client = bedrock()
    with cassette("botocore/test_converse_stream_close_before_consumption"):
        client.converse_stream(modelId="amazon.titan-text-lite-v1", messages=SAY)["stream"].close()
    with cassette("botocore/test_converse_stream_no_content"):
        stream = client.converse_stream(modelId="amazon.titan-text-lite-v1", messages=SAY)["stream"]
        for _event in stream:
            break
        del stream, _event
        gc.collect()
    closed, dropped = telemetry.model_spans()
    assert ERROR_TYPE not in closed.attributes and closed.status.status_code is not StatusCode.ERROR
    # Left by a `break` after an event was read, outside any run: left early, not an error.
    assert ERROR_TYPE not in dropped.attributes and dropped.attributes[AGENTOTEL_STREAM_ABANDONED] is True


def _event(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message (string headers), as Bedrock sends them."""
    encoded = b"".join(
        struct.pack("!B", len(k)) + k.encode() + struct.pack("!BH", 7, len(v)) + v.encode() for k, v in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + encoded + payload
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


def test_an_error_inside_the_stream_is_recorded_once_and_raised(telemetry, model_server):
    def event(kind, body):
        return _event({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, json.dumps(body).encode())

    throttled = _event(
        {":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": "slow down"}).encode(),
    )
    model_server.script(Scripted(raw=event("messageStart", {"role": "assistant"})
                                 + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}) + throttled))  # fmt: skip
    client = bedrock(endpoint_url=model_server.url)
    seen = []
    with pytest.raises(botocore.exceptions.EventStreamError):
        for item in client.converse_stream(modelId="amazon.nova-micro-v1:0", messages=SAY)["stream"]:
            seen.append(item)
    span = telemetry.one()
    assert len(seen) == 2
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "botocore.exceptions.EventStreamError"
    assert output(span)[0]["parts"] == [{"type": "text", "content": "Hel"}]  # what arrived before the error
    assert model_server.requests[0]["path"].endswith("/converse-stream")


def test_converse_stream_reasoning_then_text_blocks_and_parameters(telemetry, model_server):
    """Reasoning deltas, then text split over two blocks (as Nova sends it), read with the request's parameters."""

    def event(kind, body):
        return _event({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, json.dumps(body).encode())

    deltas = [(0, {"reasoningContent": {"text": "User wants "}}), (0, {"reasoningContent": {"text": "a greeting."}}),
              (1, {"text": "Hello"}), (1, {"text": ", "}), (2, {"text": "world"})]  # fmt: skip
    raw = event("messageStart", {"role": "assistant"})
    raw += b"".join(event("contentBlockDelta", {"contentBlockIndex": i, "delta": d}) for i, d in deltas)
    raw += event("messageStop", {"stopReason": "end_turn"})
    raw += event("metadata", {"usage": {"inputTokens": 9, "outputTokens": 6, "totalTokens": 15}, "metrics": {"latencyMs": 3}})
    model_server.script(Scripted(raw=raw))
    client = bedrock(endpoint_url=model_server.url)
    response = client.converse_stream(
        modelId="us.anthropic.claude-3-7-sonnet-20250219-v1:0", messages=SAY,
        inferenceConfig={"maxTokens": 256, "temperature": 1, "topP": 0.5, "stopSequences": ["\n\nHuman:"]},
        additionalModelRequestFields={"top_k": 40},
    )  # fmt: skip
    events = list(response["stream"])
    assert len(events) == 8
    a = telemetry.one().attributes
    assert (a[GEN_AI_REQUEST_MAX_TOKENS], a[GEN_AI_REQUEST_TEMPERATURE], a[GEN_AI_REQUEST_TOP_P], a[GEN_AI_REQUEST_TOP_K]) == (256, 1, 0.5, 40)
    assert list(a[GEN_AI_REQUEST_STOP_SEQUENCES]) == ["\n\nHuman:"]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (9, 6)
    assert output(telemetry.one()) == [{"role": "assistant", "finish_reason": "end_turn", "parts": [
        {"type": "reasoning", "content": "User wants a greeting."}, {"type": "text", "content": "Hello, world"}]}]  # fmt: skip


def test_converse_cache_tokens_count_as_input(telemetry, model_server):
    model_server.script(Scripted({
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}, "stopReason": "end_turn",
        "usage": {"inputTokens": 4, "outputTokens": 2, "totalTokens": 2106, "cacheReadInputTokens": 2000, "cacheWriteInputTokens": 100},
        "metrics": {"latencyMs": 1},
    }))  # fmt: skip
    bedrock(endpoint_url=model_server.url).converse(modelId="amazon.nova-micro-v1:0", messages=SAY, system=[{"text": "Be brief."}])
    a = telemetry.one().attributes
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS], a[GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]) == (2104, 2000, 100)
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]


# --- InvokeModel bodies ----------------------------------------------------------------------------------------------

FAMILIES = [
    # cassette id, output text, finish reason, input tokens, output tokens, response id
    ("anthropic.claude", 'Okay, I said "This is a test"', "max_tokens", 14, 10, "msg_bdrk_01NCxHHwwdtMc7wioSxo2wBC"),
    ("amazon.nova", None, "max_tokens", 5, 10, None),
    ("amazon.titan", " comment\nHello! I am writing this as a", "LENGTH", 5, 10, None),
    ("meta.llama", None, "length", 5, 10, None),
    ("mistral.mistral", "\n\nA man stands before a crowd of people", "length", 6, 10, None),  # tokens from the headers
    ("cohere.command", " Let it be a test of knowledge, skills,", "MAX_TOKENS", 5, 10, "a09c1c60-6608-482a-b98d-764e4d87fcd1"),
    ("cohere.command-r", "This is a test. How are you doing today", "MAX_TOKENS", 5, 10, "379ed018/aa2df2bf-edc8-483f-8cd0-d22d04ba34ba"),
]


@pytest.mark.parametrize(("family", "text", "finish", "input_tokens", "output_tokens", "response_id"), FAMILIES)
def test_invoke_model_bodies(telemetry, family, text, finish, input_tokens, output_tokens, response_id):
    name = f"test_invoke_model_with_content[{family}]"
    _, model, body = next(recorded_calls(name))
    with cassette(f"botocore/{name}"):
        result = bedrock().invoke_model(modelId=model, body=body)
        answer = json.loads(result["body"].read())  # the caller still reads the whole body
    assert answer
    a = telemetry.one().attributes
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == [finish]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (input_tokens, output_tokens)
    assert a.get(GEN_AI_RESPONSE_ID) == response_id
    assert json.loads(a[GEN_AI_INPUT_MESSAGES])[-1]["parts"][0]["content"] == "Say this is a test"
    parts = output(span := telemetry.one())[0]["parts"]
    if text is not None:
        assert parts == [{"type": "text", "content": text}]
    assert span.attributes[GEN_AI_REQUEST_MAX_TOKENS] == 10


def test_invoke_model_anthropic_tool_use_is_pending(telemetry):
    name = "test_invoke_model_with_content_tool_call[anthropic.claude]"
    _, model, body = next(recorded_calls(name))
    run, token = in_run()
    try:
        with cassette(f"botocore/{name}"):
            answer = json.loads(bedrock().invoke_model(modelId=model, body=body)["body"].read())
    finally:
        _context.reset_current_run(token)
    uses = [b for b in answer["content"] if b["type"] == "tool_use"]
    assert run.pending_tool_calls() == [_context.PendingToolCall(u["id"], u["name"], u["input"]) for u in uses]
    a = telemetry.one().attributes
    assert a[GEN_AI_RESPONSE_MODEL] == "claude-3-5-sonnet-20240620" and a[GEN_AI_RESPONSE_ID] == answer["id"]
    assert json.loads(a[GEN_AI_TOOL_DEFINITIONS])[0]["name"] == "get_current_weather"


@pytest.mark.parametrize("family", ["amazon.nova", "amazon.titan", "anthropic.claude"])
def test_invoke_stream_read_to_the_end_or_closed_first(telemetry, family):
    _, model, body = next(recorded_calls(f"test_invoke_model_with_response_stream_with_content[{family}]"))
    client = bedrock()
    with cassette(f"botocore/test_invoke_model_with_response_stream_with_content[{family}]"):
        events = list(client.invoke_model_with_response_stream(modelId=model, body=body)["body"])
    with cassette(f"botocore/test_invoke_model_with_response_stream_close_before_consumption[{family}]"):
        client.invoke_model_with_response_stream(modelId=model, body=body)["body"].close()
    read, closed = telemetry.model_spans()
    text = ""
    for event in events:
        chunk = json.loads(event["chunk"]["bytes"])
        text += chunk.get("outputText") or chunk.get("delta", {}).get("text") or chunk.get("contentBlockDelta", {}).get("delta", {}).get("text") or ""
    assert output(read)[0]["parts"] == [{"type": "text", "content": text}]
    assert read.attributes[GEN_AI_USAGE_OUTPUT_TOKENS] == 10 and read.attributes[AGENTOTEL_COST_USD] > 0
    assert ERROR_TYPE not in closed.attributes and GEN_AI_USAGE_OUTPUT_TOKENS not in closed.attributes


def test_invalid_model_error(telemetry):
    with cassette("botocore/test_converse_with_invalid_model"), pytest.raises(botocore.exceptions.ClientError):
        bedrock().converse(modelId="does-not-exist", messages=SAY)
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "botocore.errorfactory.ValidationException"


def test_other_services_and_operations_are_not_traced(telemetry):
    from moto import mock_aws

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="agentotel-test")
        assert s3.list_buckets()["Buckets"][0]["Name"] == "agentotel-test"
    assert telemetry.model_spans() == []


def test_capture_off_keeps_tokens_not_content(telemetry, capture_off):
    with cassette("botocore/test_converse_with_content"):
        bedrock().converse(modelId="amazon.titan-text-lite-v1", messages=SAY)
    a = telemetry.one().attributes
    assert a[GEN_AI_USAGE_OUTPUT_TOKENS] == 10
    assert GEN_AI_INPUT_MESSAGES not in a and GEN_AI_OUTPUT_MESSAGES not in a


def test_cassettes_travel_with_the_tests():
    assert len(RECORDED) >= 60 and Path(CASSETTES / "LICENSE").exists()


def test_patched_when_imported_later_and_removed_by_uninstrument():
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import sys
        from agentotel.providers import instrument_providers, uninstrument_providers
        instrument_providers()
        assert "botocore" not in sys.modules
        from botocore.client import BaseClient
        assert type(BaseClient.__dict__["_make_api_call"]).__name__ == "_Patched"
        uninstrument_providers()
        assert type(BaseClient.__dict__["_make_api_call"]).__name__ == "function"
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(root)})  # fmt: skip
    assert out.stdout.strip() == "ok", out.stderr


def _chunks(*bodies: dict) -> bytes:
    """An InvokeModelWithResponseStream answer: each body a `chunk` event (its bytes base64 in the JSON payload)."""
    import base64

    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return b"".join(_event(headers, json.dumps({"bytes": base64.b64encode(json.dumps(b).encode()).decode()}).encode()) for b in bodies)


STREAMED = {
    # family: model id, request body, the chunks, expected text, finish, (input, output) tokens
    "llama": ("meta.llama3-1-8b-instruct-v1:0", {"prompt": "Hi", "max_gen_len": 5},
              [{"generation": "Hel", "prompt_token_count": 3}, {"generation": "lo", "generation_token_count": 2, "stop_reason": "stop"}],
              "Hello", "stop", (3, 2)),
    "mistral": ("mistral.mistral-7b-instruct-v0:2", {"prompt": "Hi", "max_tokens": 5},
                [{"outputs": [{"text": "Hel", "stop_reason": None}]},
                 {"outputs": [{"text": "lo", "stop_reason": "stop"}], "amazon-bedrock-invocationMetrics": {"inputTokenCount": 4, "outputTokenCount": 2}}],
                "Hello", "stop", (4, 2)),
    "cohere": ("cohere.command-text-v14", {"prompt": "Hi", "max_tokens": 5, "stream": True},
               [{"text": "Hel", "is_finished": False}, {"text": "lo", "is_finished": False},
                {"is_finished": True, "finish_reason": "COMPLETE", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 1, "outputTokenCount": 2}}],
               "Hello", "COMPLETE", (1, 2)),
}  # fmt: skip


@pytest.mark.parametrize("family", list(STREAMED))
def test_invoke_stream_of_the_text_families(telemetry, model_server, family):
    model, body, chunks, text, finish, tokens = STREAMED[family]
    model_server.script(Scripted(raw=_chunks(*chunks)))
    client = bedrock(endpoint_url=model_server.url)
    events = list(client.invoke_model_with_response_stream(modelId=model, body=json.dumps(body))["body"])
    assert len(events) == len(chunks)
    a = telemetry.one().attributes
    assert output(telemetry.one())[0]["parts"] == [{"type": "text", "content": text}]
    assert list(a[GEN_AI_RESPONSE_FINISH_REASONS]) == [finish]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == tokens
    assert a[GEN_AI_REQUEST_MAX_TOKENS] == 5


def test_invoke_model_with_a_file_body_and_a_command_r_tool_call(telemetry, model_server):
    import io

    answer = {"response_id": "r-9", "text": "", "finish_reason": "COMPLETE", "tool_calls": [{"name": "get_weather", "parameters": {"city": "Oslo"}}],
              "meta": {"billed_units": {"input_tokens": 30, "output_tokens": 12}}}  # fmt: skip
    model_server.script(Scripted(answer))
    body = io.BytesIO(json.dumps({"message": "Weather in Oslo?", "chat_history": [], "preamble": "Be brief.",
                                  "tools": [{"name": "get_weather", "description": "Weather", "parameter_definitions": {}}]}).encode())  # fmt: skip
    run, token = in_run()
    try:
        result = bedrock(endpoint_url=model_server.url).invoke_model(modelId="cohere.command-r-v1:0", body=body)
        assert json.loads(result["body"].read()) == answer
        assert run.pending_tool_calls() == [_context.PendingToolCall("r-9-0", "get_weather", {"city": "Oslo"})]
    finally:
        _context.reset_current_run(token)
    a = telemetry.one().attributes
    assert json.loads(a[GEN_AI_INPUT_MESSAGES]) == [{"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}]
    assert json.loads(a[GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(a[GEN_AI_TOOL_DEFINITIONS])[0]["name"] == "get_weather"
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (30, 12)


def test_converse_stream_text_after_a_tool_block_stays_its_own_block(telemetry, model_server):
    """Text, a tool call streamed in pieces, then text again, with no block-stop events: each delta goes to its block."""

    def event(kind, body):
        return _event({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, json.dumps(body).encode())

    tool = {"toolUse": {"toolUseId": "tu-1", "name": "lookup"}}
    raw = event("messageStart", {"role": "assistant"})
    raw += event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Let me look."}})
    raw += event("contentBlockStart", {"contentBlockIndex": 1, "start": tool})
    raw += event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"q": '}}})
    raw += event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '"oslo"}'}}})
    raw += event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Done"}})
    raw += event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " Again."}})
    raw += event("messageStop", {"stopReason": "tool_use"})
    model_server.script(Scripted(raw=raw))
    run, token = in_run()
    try:
        list(bedrock(endpoint_url=model_server.url).converse_stream(modelId="amazon.nova-micro-v1:0", messages=SAY)["stream"])
    finally:
        _context.reset_current_run(token)
    assert output(telemetry.one())[0]["parts"] == [
        {"type": "text", "content": "Let me look. Again."},
        {"type": "tool_call", "id": "tu-1", "name": "lookup", "arguments": {"q": "oslo"}},
        {"type": "text", "content": "Done"},
    ]
    assert run.pending_tool_calls() == [_context.PendingToolCall("tu-1", "lookup", {"q": "oslo"})]
