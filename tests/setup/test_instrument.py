"""agentotel.instrument(): the embedded Parquet default, exporter selection, and leaving a configured SDK alone."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agentotel
from agentotel import _setup
from agentotel.store import ParquetSpanExporter, parquet_files, read_wal


def _record(*names: str) -> None:
    tracer = trace.get_tracer("tests.setup")
    for name in names:
        with tracer.start_as_current_span(name):
            pass


def _stored(directory) -> list[str]:
    """Span names in the store: the WAL, then the Parquet files."""
    import duckdb

    names = read_wal(directory).column("name").to_pylist()
    files = parquet_files(directory)
    if files:
        names += [n for (n,) in duckdb.connect().execute("select name from read_parquet(?)", [files]).fetchall()]
    return sorted(names)


def _our_processors(provider) -> list:
    return [p for p in provider._active_span_processor._span_processors if isinstance(p, _setup._CountingBatchProcessor)]


def test_instrument_writes_parquet_and_is_idempotent(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory, service_name="checkout-agent")
    agentotel.instrument(directory, service_name="checkout-agent")
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    assert len(_our_processors(provider)) == 1

    _record("a", "b")
    assert agentotel.flush() is True
    assert _stored(directory) == ["a", "b"]  # durable in the WAL already
    agentotel.shutdown()
    assert read_wal(directory).num_rows == 0  # folded into Parquet at shutdown
    import duckdb

    rows = duckdb.sql(f"select name, service_name from '{directory}/spans/**/*.parquet' order by name").fetchall()
    assert rows == [("a", "checkout-agent"), ("b", "checkout-agent")]


def test_directory_comes_from_the_environment_then_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("OTEL_SERVICE_NAME", "env-service")
    agentotel.instrument()
    _record("env")
    agentotel.shutdown()
    assert _stored(tmp_path / "from-env") == ["env"]
    monkeypatch.delenv("AGENTOTEL_DIR")
    agentotel.instrument()  # the process's provider is reused with fresh exporters
    _record("default")
    assert agentotel.flush()
    assert _stored(tmp_path / "agentotel-traces") == ["default"]
    assert trace.get_tracer_provider().resource.attributes["service.name"] == "env-service"


def test_an_existing_provider_is_left_alone_unless_a_directory_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_DIR", str(tmp_path / "not-used"))
    memory = InMemorySpanExporter()
    theirs = TracerProvider(resource=Resource({"service.name": "theirs"}))
    theirs.add_span_processor(SimpleSpanProcessor(memory))
    trace.set_tracer_provider(theirs)

    agentotel.instrument()
    assert trace.get_tracer_provider() is theirs
    assert _our_processors(theirs) == []
    _record("kept")
    assert agentotel.flush() is True
    assert [s.name for s in memory.get_finished_spans()] == ["kept"]
    assert not (tmp_path / "not-used").exists()
    agentotel.shutdown()

    agentotel.instrument(tmp_path / "given")
    _record("both")
    assert agentotel.flush() is True
    assert _stored(tmp_path / "given") == ["both"]
    assert [s.name for s in memory.get_finished_spans()] == ["kept", "both"]


def test_an_unwritable_directory_is_one_warning_and_the_program_runs_on(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with caplog.at_level("WARNING", logger="agentotel"):
        agentotel.instrument(blocker / "traces")  # no exception: telemetry never stops the program
    warnings = [r.getMessage() for r in caplog.records if "cannot write traces to" in r.getMessage()]
    assert len(warnings) == 1 and "a-file/traces" in warnings[0]
    with agentotel.run("still works") as current:
        _record("not kept")
        current.output = "done"
    assert agentotel.flush() is False  # nothing recorded was kept: flush says so
    agentotel.shutdown()
    agentotel.instrument(tmp_path / "ok")  # a good directory afterwards works
    _record("after")
    assert agentotel.flush()
    assert _stored(tmp_path / "ok") == ["after"]


def test_a_full_disk_at_instrument_is_one_warning(tmp_path, monkeypatch, caplog):
    import errno

    real_open = os.open

    def full(path, flags, *args, **kwargs):  # the OS answering ENOSPC for any new file in the store
        if str(path).startswith(str(tmp_path / "full")) and flags & os.O_CREAT:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", full)
    with caplog.at_level("WARNING", logger="agentotel"):
        agentotel.instrument(tmp_path / "full")
    assert any("No space left on device" in r.getMessage() for r in caplog.records)
    _record("dropped")
    assert agentotel.flush() is False


def test_traces_exporter_none_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    agentotel.instrument(tmp_path / "nothing")
    _record("dropped")
    assert agentotel.flush() is True
    assert not (tmp_path / "nothing").exists()
    assert _our_processors(trace.get_tracer_provider()) == []


class _Receiver(BaseHTTPRequestHandler):
    requests: list[tuple[str, bytes]] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Receiver.requests.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def otlp_receiver():
    _Receiver.requests = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", _Receiver.requests
    server.shutdown()
    server.server_close()


def test_parquet_and_otlp_export_the_same_spans(tmp_path, monkeypatch, otlp_receiver):
    endpoint, requests = otlp_receiver
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "parquet,otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    agentotel.instrument(tmp_path / "both")
    _record("shipped")
    assert agentotel.flush() is True
    assert _stored(tmp_path / "both") == ["shipped"]
    ((path, body),) = requests
    assert path == "/v1/traces"
    request = ExportTraceServiceRequest.FromString(body)
    assert [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans] == ["shipped"]


def test_otlp_protocol_picks_the_exporter(tmp_path, monkeypatch):
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    agentotel.instrument()
    assert [type(getattr(p.exporter, "inner", p.exporter)) for p in _our_processors(trace.get_tracer_provider())] == [Grpc]
    assert not (tmp_path / "agentotel-traces").exists()
    agentotel.shutdown()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")  # the traces-specific one wins
    agentotel.instrument()
    assert [type(getattr(p.exporter, "inner", p.exporter)) for p in _our_processors(trace.get_tracer_provider())] == [Http]


def test_extra_exporters_receive_every_span(tmp_path):
    memory = InMemorySpanExporter()
    agentotel.instrument(tmp_path / "t", exporters=[memory])
    _record("copied")
    assert agentotel.flush()
    assert [s.name for s in memory.get_finished_spans()] == ["copied"]
    assert _stored(tmp_path / "t") == ["copied"]


def test_flush_is_false_when_spans_could_not_be_made_durable(tmp_path):
    agentotel.instrument(tmp_path / "t")
    (processor,) = _our_processors(trace.get_tracer_provider())
    assert isinstance(processor.exporter, ParquetSpanExporter)
    full = os.open("/dev/full", os.O_WRONLY)  # every write now fails with ENOSPC, as on a full disk
    os.dup2(full, processor.exporter.writer._wal._fd)
    os.close(full)
    _record("lost")
    assert agentotel.flush() is False


def test_tracer_provider_argument_is_used_for_agentotel_spans(tmp_path):
    memory = InMemorySpanExporter()
    mine = TracerProvider()
    mine.add_span_processor(SimpleSpanProcessor(memory))
    agentotel.instrument(tracer_provider=mine)
    from agentotel import _tracing

    with _tracing.get_tracer().start_as_current_span("ours"):
        pass
    assert [s.name for s in memory.get_finished_spans()] == ["ours"]
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # the global one is untouched


def test_run_attribution_is_added_once_to_the_provider(tmp_path):
    from agentotel import runs

    agentotel.instrument(tmp_path / "t")
    agentotel.shutdown()
    agentotel.instrument(tmp_path / "t")
    processors = trace.get_tracer_provider()._active_span_processor._span_processors
    assert sum(isinstance(p, runs.AttributionProcessor) for p in processors) == 1


def test_uninstrument_removes_the_library_patches_and_instrument_restores_them(tmp_path):
    import openai  # a dev dependency: the tests replay its real traffic

    create = lambda: openai.resources.chat.completions.Completions.__dict__["create"]  # noqa: E731
    original = create()
    agentotel.instrument(tmp_path / "t")
    assert hasattr(create(), "__wrapped__")
    agentotel.uninstrument()
    assert create() is original
    agentotel.instrument(tmp_path / "t")
    assert hasattr(create(), "__wrapped__")
    agentotel.shutdown()
    assert create() is original


def test_flush_recovers_after_a_transient_full_disk(tmp_path, monkeypatch, caplog):
    import errno

    agentotel.instrument(tmp_path / "t")
    (processor,) = _our_processors(trace.get_tracer_provider())
    wal_fd = processor.exporter.writer._wal._fd
    real_write, full = os.write, [True]

    def write(fd, data):  # the disk is full for one write of the WAL, then has room again
        if fd == wal_fd and full[0]:
            full[0] = False
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    _record("lost")
    with caplog.at_level("WARNING", logger="agentotel"):
        assert agentotel.flush() is False
    assert any("1 spans were not kept" in r.getMessage() for r in caplog.records)
    _record("kept")
    assert agentotel.flush() is True  # the disk has room again: flush says so
    assert _stored(tmp_path / "t") == ["kept"]
