"""ParquetSpanExporter: odd attribute values are stored, failures become FAILURE and one log line."""

from __future__ import annotations

import json
import logging
import math
import os

import pyarrow.parquet as pq
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags

from agentotel import semconv as sc
from agentotel.store import ParquetSpanExporter, parquet_files, read_wal, spans_to_batch
from agentotel.store.schema import SpanColumns
from tests.store.conftest import T0, make_spans


def _span(attributes, span_id=1) -> ReadableSpan:
    # ReadableSpan built directly keeps values the SDK's setters would have dropped, as a buggy
    # instrumentation or a custom span class could hand them to the exporter.
    return ReadableSpan(
        name="odd",
        context=SpanContext(trace_id=7, span_id=span_id, is_remote=False, trace_flags=TraceFlags(1)),
        resource=Resource({"service.name": "odd"}),
        attributes=attributes,
        start_time=T0,
        end_time=T0 + 1_000,
    )


class Unprintable:
    def __str__(self):
        raise RuntimeError("no")


def test_every_attribute_value_is_stored_never_raised():
    huge = "x" * (8 * 1024 * 1024)
    cyclic: list = []
    cyclic.append(cyclic)
    attributes = {
        "str": "plain",
        "huge": huge,
        "surrogate": "bad \udcff bytes",
        "nan": math.nan,
        "inf": -math.inf,
        "floats": (1.5, math.nan, math.inf),
        "bools": (True, False),
        "ints": (1, 2**70),
        "nested": [[1, [2, "three"]], {"k": b"\x00\xff"}],
        "bytes": b"\xff\xfe",
        "object": Unprintable(),
        "cyclic": cyclic,
        "none": None,
        sc.GEN_AI_USAGE_INPUT_TOKENS: 2**80,  # does not fit the int64 column
        sc.AGENTOTEL_COST_USD: "not a number",
        sc.GEN_AI_RESPONSE_FINISH_REASONS: ["stop", 3],
        sc.GEN_AI_INPUT_MESSAGES: [{"role": "user", "content": "\udcff"}],
    }
    batch = spans_to_batch([_span(attributes)])
    row = batch.to_pylist()[0]
    stored = dict(row["attributes"])
    assert stored["str"] == "plain" and len(stored["huge"]) == len(huge)
    assert stored["surrogate"] == "bad \\udcff bytes"
    assert stored["nan"] == '"nan"' and stored["inf"] == '"-inf"'
    assert json.loads(stored["floats"]) == [1.5, "nan", "inf"]
    assert stored["bools"] == "[true,false]"
    assert json.loads(stored["ints"]) == [1, 2**70]
    assert json.loads(stored["nested"]) == [[1, [2, "three"]], {"k": "AP8="}]
    assert stored["bytes"] == '"//4="'
    assert stored["object"] == '"<unprintable Unprintable>"'
    assert stored["cyclic"].startswith("<unencodable")
    assert stored["none"] == "null"
    assert row["input_tokens"] is None and row["cost_usd"] is None
    assert row["finish_reasons"] == ["stop", "3"]
    assert "udcff" in row["input"]


def test_odd_values_reach_parquet_through_the_exporter(tmp_path):
    exporter = ParquetSpanExporter(tmp_path)
    assert exporter.export([_span({"s": "\udc80", "n": math.nan, "deep": [[[[]]]]})]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    (path,) = parquet_files(tmp_path)
    attributes = dict(pq.read_table(path).column("attributes")[0].as_py())
    assert attributes == {"s": "\\udc80", "n": '"nan"', "deep": "[[[[]]]]"}


def test_span_columns_accepts_what_the_collector_sends():
    columns = SpanColumns()
    columns.append(
        trace_id="0" * 32, span_id="1" * 16, parent_span_id="", name="n", kind="SERVER", status_code="UNSET",
        status_message="", start_time_ns=0, end_time_ns=0, attributes={"list": [{"a": [1, None]}]},
        resource_attributes=None, scope_name=None, scope_version=None,
        events=[(5_000, "e", {"x": float("inf")})], links=[("2" * 32, "3" * 16, None)],
    )
    row = columns.to_batch().to_pylist()[0]
    assert row["parent_span_id"] is None and row["duration_ns"] is None
    assert dict(row["attributes"]) == {"list": '[{"a":[1,null]}]'}
    assert dict(row["events"][0]["attributes"]) == {"x": '"inf"'}
    assert row["links"][0]["attributes"] == []


def test_export_after_shutdown_fails_and_logs_once(tmp_path, sdk, caplog):
    tracer, finished = sdk
    make_spans(tracer, 3)
    exporter = ParquetSpanExporter(tmp_path)
    exporter.shutdown()
    exporter.shutdown()  # idempotent
    with caplog.at_level(logging.ERROR, logger="agentotel.store"):
        assert exporter.export(finished()) is SpanExportResult.FAILURE
        assert exporter.export(finished()) is SpanExportResult.FAILURE
    assert len(caplog.records) == 1 and str(tmp_path) in caplog.records[0].getMessage()
    assert exporter.force_flush() is False


def test_a_full_disk_is_a_failure_with_path_and_reason_logged_once(tmp_path, sdk, caplog):
    tracer, finished = sdk
    make_spans(tracer, 3)
    exporter = ParquetSpanExporter(tmp_path)
    # Swap the WAL's file descriptor for /dev/full: every write now fails with ENOSPC, as on a full disk.
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, exporter.writer._wal._fd)
    os.close(full)
    with caplog.at_level(logging.ERROR, logger="agentotel.store"):
        assert exporter.export(finished()) is SpanExportResult.FAILURE
        assert exporter.export(finished()) is SpanExportResult.FAILURE
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert str(exporter.writer.wal_path) in message and "No space left" in message
    assert exporter.force_flush() is False
    assert exporter.failed == 6 and exporter.exported == 0
    exporter.shutdown()  # never raises


def test_an_unwritable_directory_is_an_error_at_construction(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        ParquetSpanExporter(blocker / "traces")


def test_exported_spans_are_in_the_wal_when_export_returns(tmp_path, sdk):
    tracer, finished = sdk
    make_spans(tracer, 5)
    exporter = ParquetSpanExporter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    assert exporter.export(finished()) is SpanExportResult.SUCCESS
    assert read_wal(tmp_path).column("name").to_pylist() == [f"span-{i}" for i in range(5)]
    assert exporter.force_flush() is True
    exporter.shutdown()
