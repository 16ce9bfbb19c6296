"""Real OTel SDK spans with fixed ids and clocks, for the store tests."""

from __future__ import annotations

import itertools

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

T0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in ns


class CountingIds(IdGenerator):
    """Ids 1, 2, 3, ... so every run of a test makes the same spans."""

    def __init__(self) -> None:
        self._spans = itertools.count(1)
        self._traces = itertools.count(1)

    def generate_span_id(self) -> int:
        return next(self._spans)

    def generate_trace_id(self) -> int:
        return (0xABC << 100) + next(self._traces)


@pytest.fixture
def sdk():
    """(tracer, finished_spans()) of a fresh SDK provider with deterministic ids."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource({"service.name": "store-tests", "deployment.environment": "test"}),
        id_generator=CountingIds(),
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests.store", "1.2.3")
    yield tracer, memory.get_finished_spans
    provider.shutdown()


def make_spans(tracer, count: int, *, start: int = T0, prefix: str = "span"):
    """`count` finished spans, one per millisecond from `start`, each with an attribute `i`."""
    for i in range(count):
        span = tracer.start_span(f"{prefix}-{i}", start_time=start + i * 1_000_000)
        span.set_attribute("i", i)
        span.end(end_time=start + i * 1_000_000 + 500)
