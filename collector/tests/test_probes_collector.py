"""Bodies an ordinary OTLP sender may choose: deflate (OTEL_EXPORTER_OTLP_COMPRESSION=deflate) is stored like gzip."""

from __future__ import annotations

import base64
import gc
import gzip
import json
import logging
import time
import tracemalloc
import zlib

import grpc
import pytest
import requests
from collector_support import Collector, http_url, rows_by_span, stored_table
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def test_the_python_exporter_with_deflate_compression_is_stored(collector, sdk_spans):
    # Before, this was a 415: the exporter takes that as final and drops the batch.
    exporter = OTLPSpanExporter(endpoint=http_url(collector), compression=Compression.Deflate, timeout=10)
    try:
        assert exporter.export(sdk_spans) is SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()
    assert sorted(stored_table(collector.settings.dir)["span_id"].to_pylist()) == sorted(
        format(s.context.span_id, "016x") for s in sdk_spans)


def test_a_bare_deflate_stream_is_read_and_a_deflate_bomb_is_stopped(collector, sdk_spans):
    body = encode_spans(sdk_spans[:2]).SerializeToString()
    bare = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)  # no zlib header: some clients send this
    answer = requests.post(http_url(collector), data=bare.compress(body) + bare.flush(),
                           headers={**PROTOBUF, "Content-Encoding": "deflate"}, timeout=10)
    assert answer.status_code == 200, answer.content
    assert len(stored_table(collector.settings.dir)) == 2

    bomb = zlib.compress(bytes(200 * 1024 * 1024), 9)  # 200 MiB of zeros in about 200 KB
    answer = requests.post(http_url(collector), data=bomb, headers={**PROTOBUF, "Content-Encoding": "deflate"}, timeout=30)
    assert answer.status_code == 413 and b"after decompression" in answer.content

    answer = requests.post(http_url(collector), data=b"not deflate at all",
                           headers={**PROTOBUF, "Content-Encoding": "deflate"}, timeout=10)
    assert answer.status_code == 400 and b"deflate body is corrupt" in answer.content


def test_a_link_with_ids_of_the_wrong_length_is_left_out_and_its_span_kept(collector, sdk_spans):
    request = encode_spans(sdk_spans[:1])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    del span.links[:]
    span.links.add(trace_id=b"\x01\x02", span_id=b"\x03")  # names no trace and no span
    span.links.add(trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)))
    answer = requests.post(http_url(collector), data=request.SerializeToString(), headers=PROTOBUF, timeout=10)
    assert answer.status_code == 200 and answer.content == b""  # nothing rejected: the span is whole
    (links,) = stored_table(collector.settings.dir)["links"].to_pylist()
    assert [(link["trace_id"], link["span_id"]) for link in links] == [(bytes(range(1, 17)).hex(), bytes(range(1, 9)).hex())]


@pytest.mark.parametrize("host, tokens, warned", [("0.0.0.0", False, True), ("0.0.0.0", True, False), ("127.0.0.1", False, False)])
def test_listening_beyond_this_machine_with_no_token_is_a_warning(tmp_path, caplog, host, tokens, warned):
    token_file = tmp_path / "tokens"
    token_file.write_text("a-token\n")
    with caplog.at_level(logging.WARNING, logger="agentotel_collector"):
        running = Collector(dir=tmp_path / "store", http=(host, 0), grpc=None, token_file=token_file if tokens else None).start()
        running.stop()
    said = [r.getMessage() for r in caplog.records if "with no token" in r.getMessage()]
    assert said == ([f"agentotel-collector: listening on 0.0.0.0:{running.http_address[1]} with no token: anyone who can "
                     "reach it can write spans (give --token-file)"] if warned else [])


@pytest.fixture
def no_cycle_collection():
    """The garbage collector off, and tracemalloc on: memory a refused request keeps is then measurable."""
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()
        gc.enable()


@pytest.mark.parametrize("body, status", [
    (gzip.compress(bytes(64 * 1024 * 1024), 9), 413),  # inflates past the limit
    (gzip.compress(b"\xff" * (12 * 1024 * 1024), 9), 400),  # inflates within it, and is no protobuf
], ids=["bomb", "malformed"])
def test_a_refused_body_is_freed_when_it_is_answered(tmp_path, no_cycle_collection, body, status):
    # Before, the refusal's traceback held the decoding's frames, they held the request's job, and the job
    # held the refusal: a cycle keeping the inflated body (up to the limit) until the garbage collector
    # happened to run. Eight bombs in a row took the default collector from 100 MB to 1.3 GB.
    limit = 16 * 1024 * 1024
    running = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=None, max_decompressed_bytes=limit).start()
    try:
        with requests.Session() as session:
            session.post(http_url(running), data=b"", headers=PROTOBUF, timeout=10)  # the connection, warmed
            before = tracemalloc.get_traced_memory()[0]
            answer = session.post(http_url(running), data=body, headers={**PROTOBUF, "Content-Encoding": "gzip"}, timeout=30)
            assert answer.status_code == status, answer.content
            deadline = time.monotonic() + 5  # the answer may reach us before the handler has returned
            while (kept := tracemalloc.get_traced_memory()[0] - before) > limit // 4 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert kept < limit // 4, f"{kept / 2**20:.1f} MiB still held after the refusal"
    finally:
        running.stop()


def test_half_a_character_in_otlp_json_is_stored_as_a_replacement(collector):
    # JavaScript's SDK cuts long attribute values by UTF-16 units and JSON.stringify escapes the half pair
    # it may leave. Before, protobuf refused that string and the whole request was a 400 (every span lost).
    body = (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",'
            b'"spanId":"b7ad6b7169203331","name":"cut \\ud83d","startTimeUnixNano":"1764000000000000000",'
            b'"endTimeUnixNano":"1764000001000000000","attributes":[{"key":"page\\udc00","value":'
            b'{"stringValue":"an emoji \\ud83d\\ude00 and half of one \\ud83d"}}]}]}]}]}')
    answer = requests.post(http_url(collector), data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert answer.status_code == 200, answer.content
    (row,) = stored_table(collector.settings.dir).to_pylist()
    assert row["name"] == "cut \ufffd"
    assert dict(row["attributes"]) == {"page\ufffd": "an emoji \U0001F600 and half of one \ufffd"}


def _length_delimited(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field, written by hand (bodies the library would not build)."""
    size, length = len(payload), b""
    while True:
        length += bytes([(size & 0x7F) | (0x80 if size > 0x7F else 0)])
        size >>= 7
        if not size:
            return bytes([number << 3 | 2]) + length + payload


def _request_of(spans: bytes) -> bytes:
    return _length_delimited(1, _length_delimited(2, spans))  # resource_spans { scope_spans { spans... } }


@pytest.fixture
def ten_spans(tmp_path):
    """A collector accepting at most 10 spans a request (so 100 events and links)."""
    running = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=None, max_spans_per_request=10).start()
    yield running
    running.stop()


def _post(collector, body: bytes, content_type: str = "application/x-protobuf") -> requests.Response:
    return requests.post(http_url(collector), data=body, headers={"Content-Type": content_type}, timeout=10)


def test_spans_past_the_limit_are_counted_on_the_wire_before_any_is_built(ten_spans):
    # Before, the whole body was parsed first: 60 MB of empty spans (60 KB gzipped) took 5 GB and 19 s
    # before the count refused it. Counting stops one past the limit, so what follows is never read: here
    # bytes that are no protobuf at all (a full parse answered 400 for them).
    empty_span = _length_delimited(2, b"")
    answer = _post(ten_spans, _request_of(empty_span * 11 + b"\xff\xff\xff\xff"))
    assert answer.status_code == 413, answer.content
    assert b"request holds more than 10 spans; at most 10 are accepted per request" in answer.content
    assert _post(ten_spans, _request_of(empty_span * 2 + b"\xff\xff\xff\xff")).status_code == 400  # within it: parsed


def test_json_spans_past_the_limit_are_refused_before_they_are_read(ten_spans):
    spans = [{"name": "s"}] * 10 + [{"name": 7}]  # the 11th would fail protobuf's reading (a 400 before)
    answer = _post(ten_spans, json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "application/json")
    assert answer.status_code == 413 and "holds 11 spans; at most 10" in answer.json()["message"], answer.content


def _encoded(request, content_type: str) -> bytes:
    if content_type == "application/x-protobuf":
        return request.SerializeToString()
    document = json_format.MessageToDict(request)  # protobuf's JSON mapping: ids in base64, OTLP/JSON's are hex
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for holder in (span, *span.get("links", ())):
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in holder:
                    holder[key] = base64.b64decode(holder[key]).hex()
    return json.dumps(document).encode()


@pytest.mark.parametrize("content_type", ["application/x-protobuf", "application/json"])
def test_events_and_links_past_ten_a_span_of_the_limit_are_refused(ten_spans, sdk_spans, content_type):
    # Before, they were taken: one span of 30 million empty events (60 KB gzipped) took 14 GB and 97 s.
    request = encode_spans(sdk_spans[:1])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    del span.events[:], span.links[:]
    for i in range(60):
        span.events.add(time_unix_nano=span.start_time_unix_nano, name=f"e{i}")
        span.links.add(trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)))
    answer = _post(ten_spans, _encoded(request, content_type), content_type)
    assert answer.status_code == 413, answer.content
    assert b"more than 100 span events and links; at most 100 are accepted per request" in answer.content
    del span.links[:]  # 60 events: within the limit, and stored
    assert _post(ten_spans, _encoded(request, content_type), content_type).status_code == 200
    assert len(stored_table(ten_spans.settings.dir)["events"][0]) == 60


def _not_utf8(sdk_spans) -> tuple[bytes, bytes]:
    """A protobuf request of two spans whose first holds bytes that are not UTF-8 in its name and an attribute;
    and that span's id."""
    request = encode_spans(sdk_spans[:2])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    span.name = "tool XXX"
    span.attributes.add(key="kY").value.string_value = "cut ZZ(ZZ"
    body = request.SerializeToString().replace(b"tool XXX", b"tool \xe2\x82\xff").replace(b"kY", b"k\xff")
    body = body.replace(b"cut ZZ(ZZ", b"cut \xc3(\xed\xa0\x80")  # a broken pair, then an encoded surrogate
    return body, span.span_id


def test_strings_that_are_not_utf8_are_stored_with_replacements_and_the_rest_kept(collector, sdk_spans):
    # Before, protobuf refused the whole request ("String field had bad UTF-8"): a 400 that the sender takes
    # as final, every good span in the batch lost with the bad one.
    body, span_id = _not_utf8(sdk_spans)
    answer = _post(collector, body)
    assert answer.status_code == 200, answer.content
    rows = rows_by_span(stored_table(collector.settings.dir))
    assert len(rows) == 2
    bad = rows[span_id.hex()]
    assert bad["name"] == "tool \ufffd\ufffd"
    assert dict(bad["attributes"])["k\ufffd"] == "cut \ufffd(\ufffd\ufffd\ufffd"
    answer = _post(collector, body + b"\x0a\x05ab")  # cut short as well: still refused, for that
    assert answer.status_code == 400 and b"UTF-8" not in answer.content, answer.content


def test_strings_that_are_not_utf8_over_grpc_are_stored_with_replacements(collector, sdk_spans):
    body, span_id = _not_utf8(sdk_spans)  # before: INVALID_ARGUMENT, the batch lost
    host, port = collector.grpc_address
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     request_serializer=None, response_deserializer=bytes)
        assert export(body, timeout=10) == b""  # OK, nothing rejected
    assert rows_by_span(stored_table(collector.settings.dir))[span_id.hex()]["name"] == "tool \ufffd\ufffd"


def test_otlp_json_bytes_that_are_not_utf8_are_stored_with_replacements(collector):
    body = (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",'
            b'"spanId":"b7ad6b7169203331","name":"cut \xe2\x82","startTimeUnixNano":"1764000000000000000",'
            b'"endTimeUnixNano":"1764000001000000000"}]}]}]}')
    answer = _post(collector, body, "application/json")
    assert answer.status_code == 200, answer.content
    (row,) = stored_table(collector.settings.dir).to_pylist()
    assert row["name"] == "cut \ufffd"


def test_events_and_links_past_the_limit_are_counted_on_the_wire_before_any_is_built(ten_spans):
    # Before, the whole body was parsed first and convert() counted: 64 MiB of empty events in one span
    # (a few hundred KB gzipped) took the collector 2 GB and 7 s before the refusal. Counting stops one
    # past the limit, so what follows is never read: here bytes that are no protobuf (a full parse: 400).
    ids = _length_delimited(1, bytes(range(1, 17))) + _length_delimited(2, bytes(range(1, 9)))
    event, link = _length_delimited(11, b""), _length_delimited(13, b"")
    answer = _post(ten_spans, _request_of(_length_delimited(2, ids + (event + link) * 50 + event + b"\xff\xff\xff\xff")))
    assert answer.status_code == 413, answer.content
    assert b"more than 100 span events and links; at most 100 are accepted per request" in answer.content
    answer = _post(ten_spans, _request_of(_length_delimited(2, ids + (event + link) * 50 + b"\xff\xff\xff\xff")))
    assert answer.status_code == 400, answer.content  # within it: parsed, and refused for what it is


_IDS = _length_delimited(1, bytes(range(1, 17))) + _length_delimited(2, bytes(range(1, 9)))
_EMPTY_ATTRIBUTE = _length_delimited(9, b"")  # Span.attributes: a KeyValue with neither key nor value
_NOT_PROTOBUF = b"\xff\xff\xff\xff"  # what follows the counted part: a full parse answers 400 for it


def _array_of(values: bytes) -> bytes:
    """A KeyValue named "k" whose value is an array of the given AnyValues (each `_length_delimited(1, ...)`)."""
    return _length_delimited(1, b"k") + _length_delimited(2, _length_delimited(5, values))


def _kvlist_of(key_values: bytes) -> bytes:
    return _length_delimited(1, b"k") + _length_delimited(2, _length_delimited(6, key_values))


# Spans past which the count stops: each holds more than 320 attribute values (32 for each of 10 spans).
PAST_THE_VALUES_LIMIT = {
    "empty attributes": _EMPTY_ATTRIBUTE * 321,
    "an array of empty values": _length_delimited(9, _array_of(_length_delimited(1, b"") * 320)),
    "key-value lists in arrays in key-value lists": _length_delimited(9, _kvlist_of(
        _length_delimited(1, _array_of(_length_delimited(1, _length_delimited(6, _length_delimited(1, b"") * 2)) * 107)))),
    "event attributes": _length_delimited(11, _length_delimited(3, b"") * 321),
}


@pytest.mark.parametrize("attributes", PAST_THE_VALUES_LIMIT)
def test_attribute_values_past_32_a_span_of_the_limit_are_counted_on_the_wire_and_refused(ten_spans, attributes):
    # Before, the body was parsed whole: 64 MiB of empty attributes, of empty values in one attribute's array or
    # of nested key-value lists took 1.7-1.9 GB and 1-7 s to parse, and 8-15 s more to convert, for one span.
    answer = _post(ten_spans, _request_of(_length_delimited(2, _IDS + PAST_THE_VALUES_LIMIT[attributes] + _NOT_PROTOBUF)))
    assert answer.status_code == 413, answer.content
    assert b"more than 320 attribute values; at most 320 are accepted per request (32 for each span" in answer.content


def test_attribute_values_within_the_limit_are_parsed_and_stored_whole(ten_spans, sdk_spans):
    within = _length_delimited(2, _IDS + _EMPTY_ATTRIBUTE * 320 + _NOT_PROTOBUF)
    assert _post(ten_spans, _request_of(within)).status_code == 400  # counted, then parsed (and refused for what it is)
    request = encode_spans(sdk_spans[:1])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    span.attributes.add(key="tags").value.array_value.values.extend(
        [type(span.attributes[0].value)(string_value=str(i)) for i in range(250)])
    body = request.SerializeToString()
    assert len(body) > 2 * 320 and _post(ten_spans, body).status_code == 200  # long enough to be counted
    assert json.loads(dict(stored_table(ten_spans.settings.dir)["attributes"][0].as_py())["tags"]) == [str(i) for i in range(250)]


def test_an_unknown_group_field_does_not_hide_what_follows_it_from_the_count(ten_spans):
    # Protobuf steps over a field of the (deprecated) group wire type; the count stopped at it and let the
    # whole body through to be parsed before any limit applied.
    group = bytes([15 << 3 | 3, 1 << 3 | 0, 7, 15 << 3 | 4])  # field 15: a group holding one varint
    answer = _post(ten_spans, group + _request_of(_length_delimited(2, group + _IDS) * 11) + _NOT_PROTOBUF)
    assert answer.status_code == 413 and b"request holds more than 10 spans" in answer.content, answer.content
    answer = _post(ten_spans, _request_of(_length_delimited(2, group + _IDS + _EMPTY_ATTRIBUTE * 321 + _NOT_PROTOBUF)))
    assert answer.status_code == 413 and b"more than 320 attribute values" in answer.content, answer.content


def test_json_objects_past_32_a_span_of_the_limit_are_refused_before_the_body_is_read_whole(ten_spans):
    # Before, json.loads and protobuf's reading of the document came first: 64 MiB of empty attributes
    # (`{},` each) took 3 GB and 53 s. Reading stops one object past the limit: the rest is never looked at.
    span = ('{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"s",'
            '"startTimeUnixNano":"1764000000000000000","attributes":[%s]}')
    body = '{"resourceSpans":[{"scopeSpans":[{"spans":[%s]}]}]}' % span
    answer = _post(ten_spans, (body % ",".join(["{}"] * 400)).encode()[:-2] + b"\xff", "application/json")
    assert answer.status_code == 413, answer.content
    assert "more than 320 JSON objects; at most 320 are accepted per request" in answer.json()["message"]
    within = ",".join(['{"key":"k%d","value":{"intValue":"%d"}}' % (i, i) for i in range(100)])
    assert _post(ten_spans, (body % within).encode(), "application/json").status_code == 200
    assert len(stored_table(ten_spans.settings.dir)["attributes"][0]) == 100
