"""AWS Bedrock Runtime through the real aiobotocore: the recorded traffic gives the spans the sync client gives, and
each way an async body or event stream is read, dropped or fails ends its span once."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import botocore.exceptions
import pytest
from opentelemetry.trace import StatusCode

from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_STREAM_ABANDONED,
    ERROR_TYPE,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from tests.providers.conftest import Scripted, cassette
from tests.providers.test_bedrock import RECORDED, SAY, _chunks, _event, bedrock, in_run, output, recorded_calls, replay

aiobotocore_session = pytest.importorskip("aiobotocore.session", reason="aiobotocore is in the dev extra")

ANTHROPIC_INVOKE = "test_invoke_model_with_content[anthropic.claude]"


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch):
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def aio_bedrock(**kwargs):
    return aiobotocore_session.get_session().create_client("bedrock-runtime", region_name="us-east-1", **kwargs)


async def areplay(client, operation: str, model: str, body: str | None):
    """`replay` of test_bedrock, through the async client."""
    if operation == "converse":
        return await client.converse(modelId=model, **json.loads(body))
    if operation == "converse-stream":
        return [e async for e in (await client.converse_stream(modelId=model, **json.loads(body)))["stream"]]
    if operation == "invoke":
        return await (await client.invoke_model(modelId=model, body=body or "{}"))["body"].read()
    return [e async for e in (await client.invoke_model_with_response_stream(modelId=model, body=body or "{}"))["body"]]


def comparable(span):
    """What a span records, less what differs between two runs of one call (timings)."""
    attributes = {k: v for k, v in span.attributes.items() if k != GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK}
    events = [(e.name, e.attributes.get("exception.type")) for e in span.events]
    return span.name, span.kind, span.instrumentation_scope.name, span.status.status_code, attributes, events


# --- all the recorded traffic: the async client's spans are the sync client's ---------------------------------


@pytest.mark.parametrize("name", RECORDED)
async def test_every_recorded_call_gives_the_span_the_sync_client_gives(telemetry, name):
    calls = list(recorded_calls(name))
    errors = (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError)
    sync_answers, async_answers = [], []
    with cassette(f"botocore/{name}"):
        for call in calls:
            try:
                sync_answers.append(replay(bedrock(), *call))
            except errors as exc:
                sync_answers.append(type(exc).__name__)
    expected = [comparable(s) for s in telemetry.model_spans()]
    telemetry.exporter.clear()
    async with aio_bedrock() as client:
        with cassette(f"botocore/{name}"):
            for call in calls:
                try:
                    async_answers.append(await areplay(client, *call))
                except errors as exc:
                    async_answers.append(type(exc).__name__)
    got = [comparable(s) for s in telemetry.model_spans()]
    assert len(got) == len(calls) and got == expected
    for sync_answer, async_answer in zip(sync_answers, async_answers):  # the caller's answers are untouched
        if isinstance(sync_answer, dict):
            sync_answer, async_answer = sync_answer["output"], async_answer["output"]
        assert async_answer == sync_answer


# --- InvokeModel's async body: every way of reading it -------------------------------------------------------------


async def _invoke(client):
    _, model, body = next(recorded_calls(ANTHROPIC_INVOKE))
    return await client.invoke_model(modelId=model, body=body)


async def read_whole(body):
    return await body.read()


async def read_in_pieces(body):
    data = b""
    while piece := await body.read(7):
        data += piece
    return data


async def read_chunks(body):
    return b"".join([c async for c in body.iter_chunks(16)])


async def read_iterating(body):
    return b"".join([c async for c in body])


async def read_lines(body):
    return b"\n".join([line async for line in body.iter_lines()])


async def read_in_with(body):
    async with body as stream:
        return await stream.read(1 << 20) + await stream.read(1 << 20)


async def read_into(body):
    data, buffer = b"", bytearray(10)
    while count := await body.readinto(buffer):
        data += bytes(buffer[:count])
    return data


@pytest.mark.parametrize("read", [read_whole, read_in_pieces, read_chunks, read_iterating, read_lines, read_in_with, read_into])
async def test_invoke_model_body_read_any_way_records_the_response(telemetry, read):
    async with aio_bedrock() as client:
        with cassette(f"botocore/{ANTHROPIC_INVOKE}"):
            result = await _invoke(client)
            assert telemetry.model_spans() == []  # the span ends when the body does
            data = await read(result["body"])
    answer = json.loads(data if read is not read_lines else data.replace(b"\n", b""))
    assert answer["id"] == "msg_bdrk_01NCxHHwwdtMc7wioSxo2wBC"
    span = telemetry.one()
    assert output(span)[0]["parts"] == [{"type": "text", "content": answer["content"][0]["text"]}]
    assert (span.attributes[GEN_AI_USAGE_INPUT_TOKENS], span.attributes[GEN_AI_USAGE_OUTPUT_TOKENS]) == (14, 10)
    assert span.status.status_code is not StatusCode.ERROR


async def test_invoke_model_body_closed_unread_or_dropped_ends_once(telemetry):
    async with aio_bedrock() as client:
        with cassette(f"botocore/{ANTHROPIC_INVOKE}"):
            closed = await _invoke(client)
            await closed["body"].aclose()
            await closed["body"].aclose()
            closed["body"].close()
        with cassette(f"botocore/{ANTHROPIC_INVOKE}"):
            half = await _invoke(client)
            await half["body"].read(5)
            del half
        with cassette(f"botocore/{ANTHROPIC_INVOKE}"):
            dropped = await _invoke(client)
            del dropped
        gc.collect()
    closed, half, dropped = telemetry.model_spans()
    assert closed.status.status_code is not StatusCode.ERROR and GEN_AI_USAGE_OUTPUT_TOKENS not in closed.attributes
    for span in (half, dropped):  # nobody read the answer: the call's outcome is unknown
        assert span.status.status_code is StatusCode.ERROR and span.attributes[ERROR_TYPE] == "abandoned_stream"


async def test_invoke_model_body_of_the_httpx_backend(telemetry, model_server):
    """aiobotocore's other HTTP backend has its own body class; a local server answers."""
    from aiobotocore.config import AioConfig
    from aiobotocore.httpxsession import HttpxSession

    answer = {"generation": "Hello", "prompt_token_count": 3, "generation_token_count": 1, "stop_reason": "stop"}
    model_server.script(Scripted(answer), Scripted(answer))
    async with aio_bedrock(endpoint_url=model_server.url, config=AioConfig(http_session_cls=HttpxSession)) as client:
        for _ in range(2):
            result = await client.invoke_model(modelId="meta.llama3-1-8b-instruct-v1:0", body=json.dumps({"prompt": "Hi", "max_gen_len": 5}))
            assert json.loads(b"".join([c async for c in result["body"].iter_chunks(4)])) == answer
    for span in telemetry.model_spans():
        assert output(span)[0]["parts"] == [{"type": "text", "content": "Hello"}]
        assert (span.attributes[GEN_AI_USAGE_INPUT_TOKENS], span.attributes[GEN_AI_USAGE_OUTPUT_TOKENS]) == (3, 1)
    assert len(telemetry.model_spans()) == 2


# --- event streams -------------------------------------------------------------------------------------------------


def _stream_event(kind, body):
    return _event({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, json.dumps(body).encode())


async def test_converse_stream_tool_calls_are_pending_and_link(telemetry):
    import agentotel

    _, model, body = next(recorded_calls("test_converse_stream_with_content_tool_call"))

    @agentotel.tool
    async def get_current_weather(location: str) -> str:
        return "sunny"

    run, token = in_run()
    try:
        async with aio_bedrock() as client:
            with cassette("botocore/test_converse_stream_with_content_tool_call"):
                events = [e async for e in (await client.converse_stream(modelId=model, **json.loads(body)))["stream"]]
        pending = run.pending_tool_calls()
        assert [p.name for p in pending] == ["get_current_weather", "get_current_weather"]
        for call in pending:
            await get_current_weather(**call.arguments)
    finally:
        _context.reset_current_run(token)
    assert events and run.pending_tool_calls() == []
    model_span, *tools = sorted(telemetry.spans(), key=lambda s: s.start_time)
    assert [t.attributes[GEN_AI_TOOL_CALL_ID] for t in tools] == [p.id for p in pending]
    assert [p["type"] for p in output(model_span)[0]["parts"]] == ["text", "tool_call", "tool_call"]


async def test_an_error_inside_the_async_stream_is_recorded_once_and_raised(telemetry, model_server):
    throttled = _event(
        {":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": "slow down"}).encode(),
    )
    model_server.script(Scripted(raw=_stream_event("messageStart", {"role": "assistant"})
                                 + _stream_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}) + throttled))  # fmt: skip
    seen = []
    async with aio_bedrock(endpoint_url=model_server.url) as client:
        response = await client.converse_stream(modelId="amazon.nova-micro-v1:0", messages=SAY)
        with pytest.raises(botocore.exceptions.EventStreamError):
            async for item in response["stream"]:
                seen.append(item)
    span = telemetry.one()
    assert len(seen) == 2 and span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE] == "botocore.exceptions.EventStreamError"
    assert output(span)[0]["parts"] == [{"type": "text", "content": "Hel"}]


async def test_async_streams_left_early_closed_or_never_read(telemetry, model_server):
    chunks = _chunks({"generation": "Hel", "prompt_token_count": 3}, {"generation": "lo", "generation_token_count": 2, "stop_reason": "stop"})
    model_server.script(Scripted(raw=chunks), Scripted(raw=chunks), Scripted(raw=chunks))
    request = {"modelId": "meta.llama3-1-8b-instruct-v1:0", "body": json.dumps({"prompt": "Hi", "max_gen_len": 5})}
    async with aio_bedrock(endpoint_url=model_server.url) as client:
        left = (await client.invoke_model_with_response_stream(**request))["body"]
        async for _event_read in left:
            break
        del left, _event_read
        closed = (await client.invoke_model_with_response_stream(**request))["body"]
        closed.close()
        never = (await client.invoke_model_with_response_stream(**request))["body"]
        del never
        gc.collect()
    left, closed, never = telemetry.model_spans()
    # A `break` after an event, outside any run: left early, not an error; what was read is kept.
    assert ERROR_TYPE not in left.attributes and left.attributes[AGENTOTEL_STREAM_ABANDONED] is True
    assert output(left)[0]["parts"] == [{"type": "text", "content": "Hel"}]
    assert ERROR_TYPE not in closed.attributes and closed.status.status_code is not StatusCode.ERROR
    assert never.status.status_code is StatusCode.ERROR and never.attributes[ERROR_TYPE] == "abandoned_stream"


# --- patching ------------------------------------------------------------------------------------------------------


def test_botocore_and_aiobotocore_are_patched_each_when_imported():
    script = textwrap.dedent(
        """
        import sys
        from agentotel.providers import _core, instrument_providers, uninstrument_providers
        instrument_providers()
        import botocore.client
        assert "aiobotocore" not in sys.modules  # patching botocore does not import aiobotocore
        assert _core.patched_methods() == ["botocore.client.BaseClient._make_api_call"], _core.patched_methods()
        from aiobotocore.client import AioBaseClient
        assert type(AioBaseClient.__dict__["_make_api_call"]).__name__ == "_Patched"
        assert len(_core.patched_methods()) == 2
        uninstrument_providers()
        assert type(AioBaseClient.__dict__["_make_api_call"]).__name__ == "function"
        instrument_providers()
        assert len(_core.patched_methods()) == 2
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(root)})  # fmt: skip
    assert out.stdout.strip() == "ok", out.stderr
