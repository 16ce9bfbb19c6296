"""Spans sent by the real OTLP exporters land in the store exactly as the in-process exporter writes them."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import grpc
import pytest
import requests
import zstandard
from collector_support import Collector, http_url, make_spans, plain_rows, rows_by_span, stored_table
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentotel import semconv
from agentotel.store import ParquetSpanExporter
from agentotel.store.wal import read_file as read_wal_file

# The shape of opentelemetry-proto's examples/trace.json: upper-case hex ids, integer enum, camelCase names.
SPEC_EXAMPLE = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "my.service"}}]},
            "scopeSpans": [
                {
                    "scope": {
                        "name": "my.library",
                        "version": "1.0.0",
                        "attributes": [{"key": "my.scope.attribute", "value": {"stringValue": "some scope attribute"}}],
                    },
                    "spans": [
                        {
                            "traceId": "5B8EFFF798038103D269B633813FC60C",
                            "spanId": "EEE19B7EC3C1B174",
                            "parentSpanId": "EEE19B7EC3C1B173",
                            "name": "I'm a server span",
                            "startTimeUnixNano": "1544712660000000000",
                            "endTimeUnixNano": "1544712661000000000",
                            "kind": 2,
                            "attributes": [{"key": "my.span.attr", "value": {"stringValue": "some value"}}],
                        }
                    ],
                }
            ],
        }
    ]
}


def in_process_rows(spans, directory: Path) -> dict[str, dict]:
    exporter = ParquetSpanExporter(directory)
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    return rows_by_span(stored_table(directory))


def assert_same_rows(actual: dict[str, dict], expected: dict[str, dict]) -> None:
    assert actual.keys() == expected.keys()
    for span_id, row in expected.items():
        for column, value in row.items():
            assert actual[span_id][column] == value, f"span {span_id}, column {column}"


def otlp_json(spans) -> bytes:
    """The OTLP/JSON encoding of SDK spans: proto3 JSON with hex ids and integer enums."""
    document = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        link[key] = base64.b64decode(link[key]).hex()
    return json.dumps(document).encode()


def test_http_protobuf_gzip_rows_match_the_in_process_exporter(collector: Collector, sdk_spans, tmp_path):
    exporter = HttpExporter(endpoint=http_url(collector), compression=Compression.Gzip, timeout=10)
    assert exporter.export(sdk_spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    collector.stop()  # folds the WAL: compare Parquet with Parquet

    assert_same_rows(rows_by_span(stored_table(collector.settings.dir)), in_process_rows(sdk_spans, tmp_path / "direct"))


def test_grpc_gzip_rows_match_the_in_process_exporter(collector: Collector, sdk_spans, tmp_path):
    host, port = collector.grpc_address
    exporter = GrpcExporter(endpoint=f"{host}:{port}", insecure=True, compression=grpc.Compression.Gzip, timeout=10)
    assert exporter.export(sdk_spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    collector.stop()

    assert_same_rows(rows_by_span(stored_table(collector.settings.dir)), in_process_rows(sdk_spans, tmp_path / "direct"))


def test_a_request_bigger_than_one_conversion_chunk_keeps_every_row(collector: Collector, tmp_path):
    """Whole conversations in every span: the request is converted in pieces, logged without a copy into one batch."""
    spans = make_spans(64, seed=7)  # 448 spans
    provider = TracerProvider(resource=spans[0].resource)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agentotel", "0.1.0")
    for i, parent in enumerate(spans):
        # A big conversation on a child of every span: about 64,000 characters each (29 M in all), some not ASCII.
        prompt = json.dumps([{"role": "user", "content": f"turn {i} \u00e9t\u00e9 " + "x" * 64_000}])
        with tracer.start_as_current_span("chat big", context=trace.set_span_in_context(trace.NonRecordingSpan(parent.context))) as span:
            span.set_attribute(semconv.GEN_AI_INPUT_MESSAGES, prompt)
            span.set_attribute(semconv.AGENTOTEL_RUN_ID, f"big-{i}")
    big = list(spans) + list(memory.get_finished_spans())
    exporter = HttpExporter(endpoint=http_url(collector), compression=Compression.Gzip, timeout=60)
    assert exporter.export(big) is SpanExportResult.SUCCESS  # one request
    exporter.shutdown()
    (wal_file,) = (collector.settings.dir / "wal").glob("*.arrows")
    assert len(read_wal_file(wal_file).batches) >= 2  # converted in chunks, each logged as it is
    collector.stop()

    assert_same_rows(rows_by_span(stored_table(collector.settings.dir)), in_process_rows(big, tmp_path / "direct"))


def test_acknowledged_spans_are_durable_before_any_fold(collector: Collector, sdk_spans):
    exporter = HttpExporter(endpoint=http_url(collector), timeout=10)
    assert exporter.export(sdk_spans) is SpanExportResult.SUCCESS

    # Still running, nothing folded yet: the spans are in the WAL already.
    assert len(stored_table(collector.settings.dir)) == len(sdk_spans)


@pytest.mark.parametrize("encoding", ["identity", "gzip", "zstd"])
def test_otlp_json_rows_match_the_in_process_exporter(collector: Collector, sdk_spans, tmp_path, encoding):
    body = otlp_json(sdk_spans)
    headers = {"Content-Type": "application/json"}
    if encoding == "gzip":
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    elif encoding == "zstd":
        body, headers["Content-Encoding"] = zstandard.ZstdCompressor().compress(body), "zstd"

    response = requests.post(http_url(collector), data=body, headers=headers, timeout=10)

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {}  # no partial_success: every span accepted
    collector.stop()
    assert_same_rows(rows_by_span(stored_table(collector.settings.dir)), in_process_rows(sdk_spans, tmp_path / "direct"))


def test_the_spec_example_json_is_read_with_hex_ids(collector: Collector):
    response = requests.post(http_url(collector), json=SPEC_EXAMPLE, timeout=10)

    assert response.status_code == 200
    [row] = plain_rows(stored_table(collector.settings.dir))
    assert row["trace_id"] == "5b8efff798038103d269b633813fc60c"
    assert row["span_id"] == "eee19b7ec3c1b174"
    assert row["parent_span_id"] == "eee19b7ec3c1b173"
    assert row["kind"] == "SERVER"
    assert row["name"] == "I'm a server span"
    assert row["service_name"] == "my.service"
    assert (row["scope_name"], row["scope_version"]) == ("my.library", "1.0.0")
    assert row["duration_ns"] == 1_000_000_000
    assert row["attributes"] == [("my.span.attr", "some value")]


def test_json_any_values_become_the_values_the_sdk_would_hold(collector: Collector):
    values = [
        {"key": "s", "value": {"stringValue": "text"}},
        {"key": "i", "value": {"intValue": "9007199254740993"}},  # 64-bit: a string in JSON, exact here
        {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "x"}]}}},
        {"key": "m", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": False}}]}}},
        {"key": "raw", "value": {"bytesValue": base64.b64encode(b"\x00\x01").decode()}},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
    ]
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "2", "name": "s", "kind": 3, "status": {"code": 2, "message": "bad"},
            "startTimeUnixNano": "1000", "endTimeUnixNano": "3000", "attributes": values}
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}

    assert requests.post(http_url(collector), json=document, timeout=10).status_code == 200

    [row] = plain_rows(stored_table(collector.settings.dir))
    assert dict(row["attributes"]) == {
        "s": "text", "i": "9007199254740993", "d": "0.5", "b": "true", "a": '[1,"x"]', "m": '{"k":false}',
        "raw": '"AAE="', "gen_ai.usage.input_tokens": "12",
    }
    assert row["input_tokens"] == 12
    assert (row["kind"], row["status_code"], row["status_message"]) == ("CLIENT", "ERROR", "bad")
    assert row["parent_span_id"] is None


def test_partial_success_reports_unusable_spans_and_stores_the_rest(collector: Collector):
    good = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "good"}
    bad_id = {"traceId": "not-hex", "spanId": "cd" * 8, "name": "bad id"}
    zero = {"traceId": "00" * 16, "spanId": "ef" * 8, "name": "zero trace"}
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [good, bad_id, zero]}]}]}

    response = requests.post(http_url(collector), json=document, timeout=10)

    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"  # int64: a string in OTLP/JSON
    assert "trace_id must be 16 bytes" in partial["errorMessage"] and "'bad id'" in partial["errorMessage"]
    assert [r["name"] for r in plain_rows(stored_table(collector.settings.dir))] == ["good"]


def test_partial_success_in_protobuf(collector: Collector, sdk_spans):
    request = encode_spans(sdk_spans[:2])
    request.resource_spans[0].scope_spans[0].spans[0].span_id = b"\x01\x02"  # too short

    response = requests.post(
        http_url(collector), data=request.SerializeToString(), headers={"Content-Type": "application/x-protobuf"}, timeout=10
    )

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "span_id must be 8 bytes" in answer.partial_success.error_message
    assert len(stored_table(collector.settings.dir)) == 1


def test_health(collector: Collector):
    response = requests.get(http_url(collector, "/health"), timeout=10)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_grpc_partial_success(collector: Collector, sdk_spans):
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    request = encode_spans(sdk_spans[:3])
    request.resource_spans[0].scope_spans[0].spans[1].trace_id = bytes(16)  # all zero: unusable
    host, port = collector.grpc_address
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        response = trace_service_pb2_grpc.TraceServiceStub(channel).Export(request, timeout=10)

    assert response.partial_success.rejected_spans == 1
    assert "not all zero" in response.partial_success.error_message
    assert len(stored_table(collector.settings.dir)) == 2
