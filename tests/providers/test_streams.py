"""Every way a stream can end ends its span exactly once."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import time

import anthropic
import openai
import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import agentotel
from agentotel import _config
from agentotel.semconv import (
    AGENTOTEL_PAYLOAD_TRUNCATED,
    AGENTOTEL_RUN_ID,
    AGENTOTEL_STREAM_ABANDONED,
    ERROR_TYPE,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
)
from tests.providers.conftest import cassette

USER = [{"role": "user", "content": "Say this is a test"}]
HELLO = [{"role": "user", "content": "Say hello in one word."}]
MODEL = "claude-sonnet-4-20250514"


def openai_stream(**kwargs):
    return openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4", messages=USER, stream=True, **kwargs)


def test_close_after_first_chunk_ends_once_without_error(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        stream = openai_stream()
        next(iter(stream))
        stream.close()
        stream.close()
    span = telemetry.one()
    assert span.status.status_code is StatusCode.UNSET
    assert GEN_AI_RESPONSE_FINISH_REASONS not in span.attributes
    assert GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in span.attributes


def test_break_inside_with_ends_once(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        with openai_stream() as stream:
            for _chunk in stream:
                break
        del stream
        gc.collect()
    span = telemetry.one()
    assert ERROR_TYPE not in span.attributes
    assert span.attributes[GEN_AI_RESPONSE_ID].startswith("chatcmpl-")


def test_exception_in_users_loop_is_recorded_and_propagates(telemetry):
    class Stop(Exception):
        pass

    with cassette("openai/test_chat_completion_streaming"), pytest.raises(Stop):
        with openai_stream() as stream:
            for _chunk in stream:
                raise Stop
    span = telemetry.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[ERROR_TYPE].endswith("Stop")


def test_stream_left_after_reading_is_ended_by_garbage_collection_without_error(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        stream = openai_stream()
        next(iter(stream))
        left = time.time_ns()
        time.sleep(0.05)
        del stream
        gc.collect()
    span = telemetry.one()
    assert ERROR_TYPE not in span.attributes and span.status.status_code is StatusCode.UNSET
    assert span.attributes[AGENTOTEL_STREAM_ABANDONED] is True
    assert span.end_time <= left  # ended when its reader left the loop, not when it was collected


def test_stream_never_read_is_an_abandoned_stream_error(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        stream = openai_stream()
        del stream
        gc.collect()
    span = telemetry.one()
    assert span.attributes[ERROR_TYPE] == "abandoned_stream"
    assert span.status.status_code is StatusCode.ERROR
    assert AGENTOTEL_STREAM_ABANDONED not in span.attributes


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_break_out_of_a_plain_loop_in_a_healthy_run_is_not_an_error(telemetry, provider):
    """The stream is still referenced when the run ends: the run ends it, at the time of the `break`."""
    with agentotel.run("reader") as run:
        if provider == "openai":
            with cassette("openai/test_chat_completion_streaming"):
                stream = openai_stream()
                for _chunk in stream:
                    break
        else:
            with cassette("anthropic/test_sync_messages_stream_closed_early_by_caller"):
                stream = anthropic.Anthropic(api_key="k").messages.create(
                    model=MODEL, max_tokens=100, messages=HELLO, stream=True)
                for _event in stream:
                    break
        left = time.time_ns()
        time.sleep(0.05)
        assert telemetry.model_spans() == []  # the caller may still read on
    span = telemetry.one()
    root = next(s for s in telemetry.spans() if s.attributes.get(AGENTOTEL_RUN_ID) == run.id and s.parent is None)
    assert ERROR_TYPE not in span.attributes and span.status.status_code is StatusCode.UNSET
    assert span.attributes[AGENTOTEL_STREAM_ABANDONED] is True
    assert span.end_time <= left < root.end_time
    assert root.status.status_code is not StatusCode.ERROR
    del stream


def test_a_stream_left_by_an_exception_that_fails_the_run_is_an_error(telemetry):
    with cassette("openai/test_chat_completion_streaming"), pytest.raises(ZeroDivisionError):
        with agentotel.run("reader"):
            stream = openai_stream()
            for _chunk in stream:
                1 / 0
    span = telemetry.one()
    assert span.attributes[ERROR_TYPE] == "abandoned_stream"
    assert span.status.status_code is StatusCode.ERROR
    del stream


def test_reading_on_after_a_break_ends_the_stream_normally(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        with agentotel.run("reader"):
            stream = openai_stream()
            for _chunk in stream:
                break
            rest = list(stream)
    span = telemetry.one()
    assert rest and ERROR_TYPE not in span.attributes and AGENTOTEL_STREAM_ABANDONED not in span.attributes
    assert GEN_AI_RESPONSE_FINISH_REASONS in span.attributes


def test_stream_without_finish_still_ends_on_exhaustion(telemetry):
    with cassette("openai/test_chat_completion_streaming_not_complete"):
        chunks = list(openai_stream())
    span = telemetry.one()
    assert span.attributes[GEN_AI_RESPONSE_ID] == chunks[0].id
    assert "usage" not in json.dumps(dict(span.attributes))  # no usage was sent, none invented


def test_chat_stream_helper_break_ends_when_manager_exits(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        with openai.OpenAI(api_key="k").chat.completions.stream(model="gpt-4", messages=USER) as stream:
            for event in stream:
                if event.type == "content.delta":
                    break
        assert len(telemetry.model_spans()) == 1  # ended by the manager's exit, not by GC
    assert ERROR_TYPE not in telemetry.one().attributes


def test_chat_stream_helper_to_the_end(telemetry):
    with cassette("openai/test_chat_completion_streaming"):
        with openai.OpenAI(api_key="k").chat.completions.stream(model="gpt-4", messages=USER) as stream:
            final = stream.get_final_completion()
    out = json.loads(telemetry.one().attributes[GEN_AI_OUTPUT_MESSAGES])
    assert out[0]["parts"][0]["content"] == final.choices[0].message.content


def test_responses_stream_helper(telemetry):
    with cassette("openai/test_responses_create_streaming[content_mode0]"):
        with openai.OpenAI(api_key="k").responses.stream(model="gpt-4o-mini", input="Say this is a test") as stream:
            final = stream.get_final_response()
    assert telemetry.one().attributes[GEN_AI_RESPONSE_ID] == final.id


def test_anthropic_closed_early_and_interrupted(telemetry):
    c = anthropic.Anthropic(api_key="k")
    with cassette("anthropic/test_sync_messages_stream_closed_early_by_caller"):
        with c.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
            for _event in stream:
                break
    with cassette("anthropic/test_sync_messages_stream_interrupted_mid_iteration"), pytest.raises(KeyError):
        with c.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
            for _event in stream:
                raise KeyError("stop")
    with cassette("anthropic/test_sync_messages_stream_user_exception"), pytest.raises(RuntimeError):
        for _event in c.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True):
            raise RuntimeError("user")
    gc.collect()
    closed, interrupted, abandoned = telemetry.model_spans()
    assert ERROR_TYPE not in closed.attributes
    assert interrupted.attributes[ERROR_TYPE] == "KeyError"
    # A plain `for` over an un-managed stream, left by an exception outside any run: nothing can tell it
    # from a `break`, so after chunks were read it ends as left early, not as an error (in a run, the run
    # tells: see test_a_stream_left_by_an_exception_that_fails_the_run_is_an_error).
    assert ERROR_TYPE not in abandoned.attributes and abandoned.attributes[AGENTOTEL_STREAM_ABANDONED] is True


def test_streamed_text_is_bounded_by_the_content_policy(telemetry):
    _config.configure(_config.Settings.resolve(max_value_bytes=64))
    with cassette("openai/test_chat_completion_multiple_choices_streaming"):
        list(openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER, n=2, stream=True))
    a = telemetry.one().attributes
    assert len(a[GEN_AI_OUTPUT_MESSAGES]) <= 64
    assert a[AGENTOTEL_PAYLOAD_TRUNCATED] is True


async def test_async_break_and_abandon(telemetry):
    aclient = openai.AsyncOpenAI(api_key="k")
    with cassette("openai/test_async_chat_completion_streaming"):
        async with await aclient.chat.completions.create(model="gpt-4", messages=USER, stream=True) as stream:
            async for _chunk in stream:
                break
    with cassette("openai/test_async_chat_completion_streaming"):
        stream = await aclient.chat.completions.create(model="gpt-4", messages=USER, stream=True)
        await stream.__anext__()
        del stream
        gc.collect()
    broke, abandoned = telemetry.model_spans()
    assert ERROR_TYPE not in broke.attributes
    assert ERROR_TYPE not in abandoned.attributes and abandoned.attributes[AGENTOTEL_STREAM_ABANDONED] is True


async def test_stream_consumed_in_another_task_and_thread_leaves_context_alone(telemetry, caplog):
    aclient = openai.AsyncOpenAI(api_key="k")
    caplog.set_level(logging.ERROR)
    with cassette("openai/test_async_chat_completion_streaming"):
        stream = await asyncio.create_task(aclient.chat.completions.create(model="gpt-4", messages=USER, stream=True))

        async def consume():
            return [c async for c in stream]

        chunks = await asyncio.create_task(consume())
    with cassette("openai/test_chat_completion_streaming"):
        sync_stream = openai_stream()
        result: list = []
        worker = threading.Thread(target=lambda: result.extend(sync_stream))
        worker.start()
        worker.join()
    assert chunks and result
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert len(telemetry.model_spans()) == 2
    assert not [r for r in caplog.records if "detach" in r.getMessage().lower()]


_TOOLS = [{"type": "function", "function": {"name": "get_current_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}]  # fmt: skip


@pytest.mark.parametrize("recording, extra", [
    ("openai/test_chat_completion_multiple_choices_streaming", {"n": 2}),
    ("openai/test_chat_completion_multiple_tools_streaming_with_content", {"tools": _TOOLS}),
])  # fmt: skip
def test_a_stream_read_by_for_by_next_and_by_async_for_records_the_same(telemetry, recording, extra):
    """The sync loop reads chunks inline; `next()` and async streams feed the same code chunk by chunk."""
    kwargs = dict(model="gpt-4o-mini", messages=USER, stream=True, **extra)

    def recorded() -> dict:
        [span] = telemetry.model_spans()
        telemetry.exporter.clear()
        attributes = dict(span.attributes)
        assert attributes.pop(GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK) >= 0
        return attributes

    with cassette(recording):
        for _ in openai.OpenAI(api_key="k").chat.completions.create(**kwargs):
            pass
    by_for = recorded()
    with cassette(recording):
        stream = openai.OpenAI(api_key="k").chat.completions.create(**kwargs)
        next(stream)
        for _ in stream:  # a loop after next(): both paths feed one accumulator
            pass
    by_next_then_for = recorded()

    async def read_async() -> None:
        async for _ in await openai.AsyncOpenAI(api_key="k").chat.completions.create(**kwargs):
            pass

    with cassette(recording):
        asyncio.run(read_async())
    by_async_for = recorded()
    assert json.loads(by_for[GEN_AI_OUTPUT_MESSAGES])  # something was assembled
    assert by_for == by_next_then_for == by_async_for
