"""Agent-scale bursts: the embedded default keeps every span of a tight loop of tool calls, and when a
limit is reached anyway the loss is counted and reported (flush(), a log line, a metric)."""

from __future__ import annotations

import threading

import duckdb
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

import agentotel
from agentotel import _setup, _tracing
from agentotel.semconv import METRIC_AGENTOTEL_SPANS_DROPPED
from agentotel.store import parquet_files, read_wal


def _count(directory) -> int:
    count = read_wal(directory).num_rows
    files = parquet_files(directory)
    if files:
        count += duckdb.connect().execute("select count(*) from read_parquet(?)", [files]).fetchone()[0]
    return count


@agentotel.tool
def step(i: int) -> dict:
    return {"i": i, "note": "looked it up"}


def test_20000_tool_calls_in_a_tight_loop_are_all_kept(tmp_path):
    agentotel.instrument(tmp_path / "traces")
    with agentotel.run("burst"):
        for i in range(20_000):
            step(i)
    assert agentotel.flush() is True
    agentotel.shutdown()
    assert _count(tmp_path / "traces") == 20_001


def test_20000_tool_calls_from_8_threads_are_all_kept(tmp_path):
    # Busy threads starve the export thread: before back-pressure this kept about 4,000 of 20,001.
    agentotel.instrument(tmp_path / "traces")

    def work():
        for i in range(2_500):
            step(i)

    with agentotel.run("parallel burst"):
        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert agentotel.flush() is True
    agentotel.shutdown()
    assert _count(tmp_path / "traces") == 20_001


class _Stuck(SpanExporter):
    """An exporter whose receiver hangs until released (an unreachable collector, say)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.exported = 0

    def export(self, spans):
        self.release.wait(30)
        self.exported += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self):
        self.release.set()


def test_a_stuck_exporter_loses_spans_counted_logged_and_measured(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(_setup, "_QUEUE_SPANS", 64)
    monkeypatch.setattr(_setup, "_EXPORT_BATCH_SPANS", 16)
    monkeypatch.setattr(_setup, "_BACKPRESSURE_WAIT_S", 0.05)
    monkeypatch.setattr(_setup, "_counter", None)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    stuck = _Stuck()
    agentotel.instrument(tmp_path / "traces", exporters=[stuck])
    reader = InMemoryMetricReader()
    _tracing.set_providers(_tracing._tracer_provider, MeterProvider(metric_readers=[reader]))

    with caplog.at_level("WARNING", logger="agentotel"):
        with agentotel.run("burst"):
            for i in range(500):
                step(i)
        stuck.release.set()
        assert agentotel.flush() is False  # reports the loss once
        assert agentotel.flush() is True  # nothing lost since

    processor = _setup._state.processors[0]
    lost = processor.ended - stuck.exported
    assert processor.dropped == lost > 0
    lines = [r.getMessage() for r in caplog.records]
    assert sum("span queue is full" in line for line in lines) == 1  # one line when it starts
    assert any(f"{lost} spans were not kept since the last flush ({lost} dropped" in line for line in lines)
    points = [
        point.value
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == METRIC_AGENTOTEL_SPANS_DROPPED
        for point in metric.data.data_points
    ]
    assert points == [lost]
