"""Fixtures: a dedicated tracer and meter provider per test, cassette replay, and a scripted local model server."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest
import vcr
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentotel import _config, _tracing
from agentotel.providers import instrument_providers, uninstrument_providers

CASSETTES = Path(__file__).parent / "cassettes"

# Replays the recorded HTTP of the real SDKs; request bodies are not matched (only method and URL).
_vcr = vcr.VCR(record_mode="none", match_on=["method", "uri"], cassette_library_dir=str(CASSETTES))

def _same_method(recorded: Any, made: Any) -> None:
    # google-genai sends `post` to aiohttp (which upper-cases it on the wire; vcrpy's stub does not).
    assert recorded.method.upper() == made.method.upper()


_vcr.register_matcher("method", _same_method)


@dataclass
class Telemetry:
    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def spans(self) -> list[Any]:
        return list(self.exporter.get_finished_spans())

    def model_spans(self) -> list[Any]:
        return [s for s in self.spans() if s.instrumentation_scope.name.startswith("agentotel.")]

    def one(self) -> Any:
        spans = self.model_spans()
        assert len(spans) == 1, [s.name for s in spans]
        return spans[0]

    def metric_points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        points = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        points.extend(metric.data.data_points)
        return points


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    """Providers of this test only, and the provider patches applied for its duration."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    _config.reset()
    _tracing.set_providers(tracer_provider, meter_provider)
    instrument_providers()
    try:
        yield Telemetry(tracer_provider, exporter, reader)
    finally:
        uninstrument_providers()
        _tracing.set_providers(None, None)
        _config.reset()
        meter_provider.shutdown()


@pytest.fixture
def capture_off() -> Iterator[None]:
    _config.configure(_config.Settings.resolve(capture_content=False))
    yield
    _config.reset()


def cassette(path: str, **options: Any) -> Any:
    """Replay `tests/providers/cassettes/<path>.yaml` (e.g. "openai/test_chat_completion_streaming"); `options` go
    to vcrpy (`allow_playback_repeats=True`: each recorded answer as often as it is asked for)."""
    return _vcr.use_cassette(f"{path}.yaml", **options)


# --- a scripted model server on 127.0.0.1 -----------------------------------------------------------------


@dataclass
class Scripted:
    """One canned reply: a JSON body, or a list of server-sent events (each a dict, sent as `data:`)."""

    body: Any = None
    events: list[dict[str, Any]] | None = None
    status: int = 200
    raw: bytes | None = None  # sent as it is (an AWS event stream, say), with `content_type`
    content_type: str = "application/vnd.amazon.eventstream"


@dataclass
class ModelServer:
    url: str
    replies: list[Scripted] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *replies: Scripted) -> None:
        with self.lock:
            self.replies.extend(replies)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server_state: dict[str, ModelServer] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            state = server_state["state"]
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append({"path": self.path, "body": body})
                reply = state.replies.pop(0) if state.replies else Scripted({"error": {"message": "no reply scripted"}}, status=500)
            if reply.raw is not None:
                data, content_type = reply.raw, reply.content_type
            elif reply.events is not None:
                payload = "".join(
                    (f"event: {e['type']}\n" if "type" in e and "anthropic" in self.path_kind() else "") + f"data: {json.dumps(e)}\n\n"
                    for e in reply.events
                )
                if self.path_kind() == "openai":  # Gemini's and Anthropic's streams just end
                    payload += "data: [DONE]\n\n"
                data, content_type = payload.encode(), "text/event-stream"
            else:
                data, content_type = json.dumps(reply.body).encode(), "application/json"
            self.send_response(reply.status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def path_kind(self) -> str:
            if self.path.endswith("/messages"):
                return "anthropic"
            return "gemini" if "GenerateContent" in self.path else "openai"

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state = ModelServer(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    server_state["state"] = state
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
