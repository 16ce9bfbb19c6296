"""Each test gets its own tracer provider (attribution + in-memory export) and its own settings."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentotel import _config, _tracing
from agentotel.runs import AttributionProcessor


class Recorded:
    """The spans a test produced, with small helpers to find them."""

    def __init__(self, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
        self.provider = provider
        self.exporter = exporter

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"expected one span {name!r}, got {[s.name for s in self.spans]}"
        return found[0]

    def tracer(self, scope: str = "other.instrumentation"):
        return self.provider.get_tracer(scope)


@pytest.fixture
def configure() -> Iterator[Callable[..., _config.Settings]]:
    """Install settings for this test (environment capture off unless asked for: it runs git)."""

    def install(**overrides: Any) -> _config.Settings:
        overrides.setdefault("capture_environment", False)
        settings = _config.Settings.resolve(environ={}, **overrides)
        _config.configure(settings)
        return settings

    install()
    yield install
    _config.reset()


@pytest.fixture
def recorded(configure) -> Iterator[Recorded]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(AttributionProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _tracing.set_providers(provider)
    yield Recorded(provider, exporter)
    _tracing.set_providers(None)
    provider.shutdown()


def all_text(spans: list[ReadableSpan]) -> str:
    """Every attribute key and value, event and status message of `spans`, as one string to search."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(span.status.description or "")
        for key, value in (span.attributes or {}).items():
            parts.append(f"{key}={value}")
        for event in span.events:
            parts.append(event.name)
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
    return "\n".join(parts)
