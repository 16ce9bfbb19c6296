"""Telemetry never breaks the program: a span processor or exporter that raises stays inside agentotel.

The SDK calls every processor's `on_start`/`on_end` without catching, so a broken processor (the
user's own or an exporter's) would otherwise raise out of `with run(...)`, out of a tool, or replace
the user's own exception.
"""

from __future__ import annotations

import openai
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter

import agentotel
from tests.providers.conftest import cassette


class _Raising(SpanProcessor):
    def __init__(self, on_start: bool = False) -> None:
        self.raise_on_start = on_start
        self.ended = 0

    def on_start(self, span, parent_context=None):
        if self.raise_on_start:
            raise RuntimeError("processor on_start broke")

    def on_end(self, span):
        self.ended += 1
        raise RuntimeError("processor on_end broke")



class _RaisingExporter(SpanExporter):
    def export(self, spans):
        raise RuntimeError("exporter broke")

    def force_flush(self, timeout_millis=30000):
        raise RuntimeError("exporter force_flush broke")

    def shutdown(self):
        raise RuntimeError("exporter shutdown broke")


class UserError(Exception):
    pass


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """An instrumented process whose provider has a processor that raises on every span end."""
    monkeypatch.setenv("AGENTOTEL_RAISE_INTERNAL_ERRORS", "0")  # production behaviour: log and go on
    agentotel.instrument(tmp_path / "traces", exporters=[_RaisingExporter()])
    processor = _Raising()
    trace.get_tracer_provider().add_span_processor(processor)
    return processor


def test_a_raising_on_end_never_escapes_a_run(broken):
    with agentotel.run("agent") as current:
        current.output = "fine"
    assert broken.ended == 1  # the processor did run, and raised


def test_the_users_exception_passes_through_unchanged(broken):
    error = UserError("the user's own")
    with pytest.raises(UserError) as raised:
        with agentotel.run("agent"):
            raise error
    assert raised.value is error
    assert broken.ended == 1


ASYNC_ERROR = UserError("async")


async def _async_run():
    async with agentotel.run("async agent"):
        raise ASYNC_ERROR


def test_async_runs_and_decorated_runs_too(broken):
    import asyncio

    with pytest.raises(UserError) as raised:
        asyncio.run(_async_run())
    assert raised.value is ASYNC_ERROR

    @agentotel.run("decorated")
    def agent(x):
        return x * 2

    assert agent(21) == 42


def test_tools_and_retrievals_return_and_raise_as_written(broken):
    @agentotel.tool
    def add(a: int, b: int) -> int:
        return a + b

    own = UserError("tool's own")

    @agentotel.tool
    def fails() -> None:
        raise own

    @agentotel.retrieval
    def search(query: str) -> list[str]:
        return [query]

    with agentotel.run("agent"):
        assert add(1, 2) == 3
        assert search("q") == ["q"]
        with pytest.raises(UserError) as raised:
            fails()
        assert raised.value is own
    assert broken.ended == 4


def test_a_model_call_returns_its_response(broken):
    with cassette("openai/test_chat_completion_with_content"):
        result = openai.OpenAI(api_key="k").chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Say this is a test"}]
        )
    assert result.choices[0].message.content
    assert broken.ended == 1


def test_flush_and_shutdown_never_raise(broken):
    with agentotel.run("agent"):
        pass
    assert agentotel.flush() is False  # one exporter failed: not everything is durable
    agentotel.shutdown()  # raising force_flush/shutdown are logged, not raised


def test_a_raising_on_start_leaves_the_run_untraced_not_broken(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_RAISE_INTERNAL_ERRORS", "0")
    agentotel.instrument(tmp_path / "traces")
    trace.get_tracer_provider().add_span_processor(_Raising(on_start=True))
    with pytest.raises(UserError):
        with agentotel.run("agent") as current:
            assert current.id
            raise UserError("kept")
