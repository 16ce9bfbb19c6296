"""Bad input gets a clear 4xx with a google.rpc.Status body, and the server keeps serving afterwards."""

from __future__ import annotations

import gzip
import time
import zlib
from pathlib import Path

import grpc
import pytest
import requests
import zstandard
from collector_support import Collector, http_url, make_spans, stored_table
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from agentotel_collector import _body

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TOKEN = "s3cret-token"


def gzip_bomb(total: int, member: int = 16 * 1024 * 1024) -> bytes:
    """`total` bytes of zeros as back-to-back gzip members: about 1,000 times smaller than it expands."""
    one = gzip.compress(bytes(member), compresslevel=9)
    return one * (total // member)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field, written by hand (the library refuses to build this message)."""
    length, size = b"", len(payload)
    while True:
        length += bytes([(size & 0x7F) | (0x80 if size > 0x7F else 0)])
        size >>= 7
        if not size:
            break
    return bytes([number << 3 | 2]) + length + payload


def deep_protobuf() -> bytes:
    """An attribute value of arrays nested 500 deep: past protobuf's recursion limit."""
    value = AnyValue(string_value="x").SerializeToString()
    for _ in range(500):
        value = _field(5, _field(1, value))  # AnyValue.array_value → ArrayValue.values
    span = Span(trace_id=bytes(range(16)), span_id=bytes(range(1, 9)), name="deep").SerializeToString()
    span += _field(9, _field(1, b"deep") + _field(2, value))  # Span.attributes: KeyValue(key, value)
    return _field(1, _field(2, _field(2, span)))  # request.resource_spans.scope_spans.spans


@pytest.fixture
def guarded(tmp_path: Path):
    """A collector with a token file and small limits, so each limit is cheap to hit."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# one token a line\nother-token\n{TOKEN}\n")
    running = Collector(
        dir=tmp_path / "store",
        http=("127.0.0.1", 0),
        grpc=("127.0.0.1", 0),
        token_file=tokens,
        max_request_bytes=512 * 1024,
        max_decompressed_bytes=1024 * 1024,
        max_spans_per_request=10,
    ).start()
    yield running
    running.stop()


@pytest.fixture
def session():
    with requests.Session() as s:  # one keep-alive connection: refusals must leave it usable
        s.headers["Authorization"] = f"Bearer {TOKEN}"
        yield s


def good_body(sdk_spans) -> bytes:
    return encode_spans(sdk_spans[:3]).SerializeToString()


def assert_status(response: requests.Response, status: int, code: int, phrase: str) -> None:
    assert response.status_code == status, response.content
    assert b"Traceback" not in response.content
    if response.headers["Content-Type"] == "application/x-protobuf":
        body = Status.FromString(response.content)
        got_code, message = body.code, body.message
    else:
        assert response.headers["Content-Type"] == "application/json"
        got_code, message = response.json()["code"], response.json()["message"]
    assert got_code == code
    assert phrase in message


CASES = [
    # (name, headers, body, status, google.rpc.Code, phrase in the message)
    ("malformed protobuf", PROTOBUF, b"\xff\xff\xff\xff not protobuf", 400, 3, "not a protobuf ExportTraceServiceRequest"),
    ("malformed json", {"Content-Type": "application/json"}, b'{"resourceSpans": [', 400, 3, "not valid JSON"),
    ("json of the wrong shape", {"Content-Type": "application/json"}, b'{"resourceSpans": 5}', 400, 3, "must be an array"),
    ("json with a wrong field type", {"Content-Type": "application/json"},
     b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 7}]}]}]}', 400, 3, "not an OTLP/JSON trace export request"),
    ("json nested too deep", {"Content-Type": "application/json"}, b"[" * 100_000 + b"]" * 100_000, 400, 3, "not valid JSON"),
    ("protobuf nested too deep", PROTOBUF, deep_protobuf(), 400, 3, "not a protobuf ExportTraceServiceRequest"),
    ("unknown content type", {"Content-Type": "text/plain"}, b"hello", 415, 3, "unsupported Content-Type 'text/plain'"),
    ("unknown content encoding", {**PROTOBUF, "Content-Encoding": "br"}, b"x", 415, 3, "unsupported Content-Encoding 'br'"),
    ("corrupt gzip", {**PROTOBUF, "Content-Encoding": "gzip"}, b"this is not gzip at all", 400, 3, "gzip body is corrupt"),
    ("truncated gzip", {**PROTOBUF, "Content-Encoding": "gzip"}, gzip.compress(b"x" * 1000)[:20], 400, 3, "truncated"),
    ("corrupt zstd", {**PROTOBUF, "Content-Encoding": "zstd"}, b"\x28\xb5\x2f\xfd garbage", 400, 3, "zstd body is corrupt"),
    ("gzip bomb", {**PROTOBUF, "Content-Encoding": "gzip"}, gzip_bomb(64 * 1024 * 1024), 413, 8, "exceeds 1048576 bytes after decompression"),
    ("zstd bomb", {**PROTOBUF, "Content-Encoding": "zstd"}, zstandard.ZstdCompressor(level=3).compress(bytes(64 * 1024 * 1024)),
     413, 8, "exceeds 1048576 bytes after decompression"),
    ("plain body over the limit", PROTOBUF, bytes(300_000) * 2, 413, 8, "exceeds 524288"),
]


@pytest.mark.parametrize("name, headers, body, status, code, phrase", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_and_the_server_keeps_serving(guarded, session, sdk_spans, name, headers, body, status, code, phrase):
    assert_status(session.post(http_url(guarded), data=body, headers=headers, timeout=10), status, code, phrase)

    after = session.post(http_url(guarded), data=good_body(sdk_spans), headers=PROTOBUF, timeout=10)
    assert after.status_code == 200
    assert len(stored_table(guarded.settings.dir)) == 3


def test_too_many_spans_in_one_request(guarded, session):
    body = encode_spans(make_spans(2)).SerializeToString()  # 14 spans > 10

    assert_status(session.post(http_url(guarded), data=body, headers=PROTOBUF, timeout=10), 413, 8, "at most 10 are accepted")
    assert len(stored_table(guarded.settings.dir)) == 0


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {TOKEN}", "Bearer ", TOKEN])
def test_missing_or_wrong_token_is_401(guarded, sdk_spans, authorization):
    headers = dict(PROTOBUF)
    if authorization is not None:
        headers["Authorization"] = authorization

    response = requests.post(http_url(guarded), data=good_body(sdk_spans), headers=headers, timeout=10)

    assert_status(response, 401, 16, "missing or wrong bearer token")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert len(stored_table(guarded.settings.dir)) == 0


def test_every_token_in_the_file_is_accepted(guarded, sdk_spans):
    for token in ("other-token", TOKEN):
        response = requests.post(
            http_url(guarded), data=good_body(sdk_spans), headers={**PROTOBUF, "Authorization": f"Bearer {token}"}, timeout=10
        )
        assert response.status_code == 200


def test_wrong_paths_and_methods(guarded, session):
    assert_status(session.post(http_url(guarded, "/v1/metrics"), data=b"", headers=PROTOBUF, timeout=10), 404, 5, "no such endpoint")
    assert_status(session.get(http_url(guarded, "/v1/traces"), timeout=10), 405, 12, "method GET not allowed")
    assert_status(session.put(http_url(guarded), data=b"x", timeout=10), 405, 12, "method PUT not allowed")
    assert session.get(http_url(guarded, "/health"), timeout=10).status_code == 200


def test_default_limit_stops_a_gigabyte_gzip_bomb(collector: Collector):
    assert collector.settings.max_decompressed_bytes == 64 * 1024 * 1024

    response = requests.post(
        http_url(collector), data=gzip_bomb(1024 * 1024 * 1024), headers={**PROTOBUF, "Content-Encoding": "gzip"}, timeout=30
    )

    assert_status(response, 413, 8, "exceeds 67108864 bytes after decompression")


def test_decompression_stops_at_the_limit_whatever_the_bomb_size():
    bomb = gzip_bomb(16 * 1024 * 1024 * 1024)  # 16 GiB of zeros in about 16 MB
    started = time.perf_counter()

    with pytest.raises(_body.BodyError) as refused:
        _body.decompress(bomb, "gzip", 8 * 1024 * 1024)

    assert refused.value.status == 413
    # Inflating 16 GiB would take a minute; stopping after 8 MiB takes milliseconds.
    assert time.perf_counter() - started < 2


def test_decompression_round_trips_multi_member_gzip_and_multi_frame_zstd():
    data = b"span bytes " * 1000
    assert _body.decompress(gzip.compress(data) + gzip.compress(data), "gzip", 10**6) == data * 2
    zstd = zstandard.ZstdCompressor()
    assert _body.decompress(zstd.compress(data) + zstd.compress(data), "zstd", 10**6) == data * 2
    assert _body.decompress(zlib.compress(data)[:0] + data, "identity", 10**6) == data


def test_grpc_refuses_a_missing_token_and_an_oversized_message(guarded, sdk_spans):
    host, port = guarded.grpc_address
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = encode_spans(sdk_spans[:3])

        with pytest.raises(grpc.RpcError) as unauthenticated:
            stub.Export(request, timeout=10)
        assert unauthenticated.value.code() is grpc.StatusCode.UNAUTHENTICATED

        big = encode_spans(sdk_spans[:1])
        big.resource_spans[0].scope_spans[0].spans[0].name = "x" * (2 * 1024 * 1024)
        with pytest.raises(grpc.RpcError) as too_big:
            stub.Export(big, metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10, compression=grpc.Compression.Gzip)
        assert too_big.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED

        stub.Export(request, metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10)
    assert len(stored_table(guarded.settings.dir)) == 3


def test_connections_past_the_limit_are_closed_and_the_server_recovers(tmp_path, sdk_spans):
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", max_connections=1) as running:
        first = requests.Session()
        assert first.post(http_url(running), data=good_body(sdk_spans), headers=PROTOBUF, timeout=10).status_code == 200

        with pytest.raises(requests.ConnectionError):  # the one slot is held by `first`'s keep-alive connection
            requests.post(http_url(running), data=good_body(sdk_spans), headers=PROTOBUF, timeout=10)

        first.close()
        deadline = time.monotonic() + 10
        while True:  # the slot frees once the server notices the closed connection
            try:
                response = requests.post(http_url(running), data=good_body(sdk_spans), headers=PROTOBUF, timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert response.status_code == 200
