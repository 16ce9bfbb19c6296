"""A collector you can watch: every refusal is one logfmt line and a counter; /metrics is Prometheus text."""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from pathlib import Path

import grpc
import pytest
import requests
from collector_support import Collector, CollectorProcess, free_port, http_url, make_spans, stored_table
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from agentotel.store import StoreWriter
from agentotel_collector import _watch

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TOKEN = "watch-s3cret-token"
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

# -- a small Prometheus text-format (0.0.4) parser: strict enough to fail on what a scraper rejects --

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')


def parse_metrics(text: str) -> dict[tuple[str, frozenset], float]:
    """Samples by (name, labels); asserts TYPE before samples, known types, cumulative histogram buckets."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    samples: dict[tuple[str, frozenset], float] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            assert re.fullmatch(rf"# HELP {_NAME} .+", line), line
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in {"counter", "gauge", "histogram", "summary", "untyped"} and name not in types, line
            types[name] = kind
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, raw_labels, value = match.groups()
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family in types, f"{name} has no TYPE line"
        labels: dict[str, str] = {}
        if raw_labels:
            consumed = 0
            for label in _LABEL.finditer(raw_labels):
                assert label.start() == consumed, raw_labels
                labels[label.group(1)] = label.group(2)
                consumed = label.end()
            assert consumed == len(raw_labels), raw_labels
        key = (name, frozenset(labels.items()))
        assert key not in samples, f"duplicate sample {line!r}"
        samples[key] = float(value)
    for family, kind in types.items():
        if kind != "histogram":
            continue
        buckets = [(float(dict(k[1])["le"]), v) for k, v in samples.items() if k[0] == f"{family}_bucket"]
        buckets.sort()
        assert buckets[-1][0] == float("inf")
        assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), f"{family} buckets are not cumulative"
        assert buckets[-1][1] == samples[(f"{family}_count", frozenset())]
    return samples


def metric(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def scrape(collector: Collector) -> dict:
    answer = requests.get(http_url(collector, "/metrics"), headers=AUTH, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse_metrics(answer.text)


def refusal_lines(caplog) -> list[dict[str, str]]:
    """The event=rejected lines logged so far, as dicts (logfmt values unquoted)."""
    lines = []
    for record in caplog.records:
        message = record.getMessage()
        if record.name == "agentotel_collector" and "event=rejected " in message:
            assert record.levelno == logging.WARNING
            fields = {}
            for key, bare, quoted in re.findall(r'(\w+)=(?:([^\s"]+)|"((?:[^"\\]|\\.)*)")', message):
                fields[key] = bare or quoted
            lines.append(fields)
    return lines


@pytest.fixture
def watched(tmp_path: Path):
    running = Collector(
        dir=tmp_path / "store",
        http=("127.0.0.1", 0),
        grpc=("127.0.0.1", 0),
        token=TOKEN,
        max_request_bytes=512 * 1024,
        max_decompressed_bytes=1024 * 1024,
        max_spans_per_request=10,
    ).start()
    yield running
    running.stop()


def _good(sdk_spans) -> bytes:
    return encode_spans(sdk_spans[:3]).SerializeToString()


def _late(sdk_spans) -> bytes:
    request = encode_spans(sdk_spans[:3])
    request.resource_spans[0].scope_spans[0].spans[1].start_time_unix_nano = 1 << 63
    return request.SerializeToString()


HTTP_REFUSALS = [
    # name, headers, body, status, reason
    ("no token", PROTOBUF, _good, 401, "unauthorized"),
    ("wrong token", {**PROTOBUF, "Authorization": "Bearer not-the-token"}, _good, 401, "unauthorized"),
    ("content type", {**AUTH, "Content-Type": "text/plain"}, _good, 415, "bad_content_type"),
    ("content encoding", {**AUTH, **PROTOBUF, "Content-Encoding": "br"}, _good, 415, "bad_content_encoding"),
    ("malformed", {**AUTH, **PROTOBUF}, lambda _: b"\xff\xff\xff\xff", 400, "malformed"),
    ("too large", {**AUTH, **PROTOBUF}, lambda _: bytes(600 * 1024), 413, "too_large"),
    ("too many spans", {**AUTH, **PROTOBUF}, lambda spans: encode_spans(spans[:11]).SerializeToString(), 413, "too_many_spans"),
    ("timestamp", {**AUTH, **PROTOBUF}, _late, 400, "invalid_timestamp"),
]


@pytest.mark.parametrize("name, headers, body, status, reason", HTTP_REFUSALS, ids=[c[0] for c in HTTP_REFUSALS])
def test_each_http_refusal_is_one_log_line_and_one_count(watched, sdk_spans, caplog, name, headers, body, status, reason):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    before = scrape(watched)
    data = body(sdk_spans)

    answer = requests.post(http_url(watched), data=data, headers=headers, timeout=10)

    assert answer.status_code == status
    after = scrape(watched)
    name_ = "agentotel_collector_requests_rejected_total"
    assert metric(after, name_, protocol="http", reason=reason) == metric(before, name_, protocol="http", reason=reason) + 1
    assert sum(v for k, v in after.items() if k[0] == name_) == sum(v for k, v in before.items() if k[0] == name_) + 1
    (line,) = refusal_lines(caplog)
    assert line["status"] == str(status) and line["reason"] == reason and line["protocol"] == "http"
    assert line["method"] == "POST" and line["path"] == "/v1/traces" and line["bytes"] == str(len(data))
    assert re.fullmatch(r"127\.0\.0\.1:\d+", line["peer"])
    assert line["detail"]
    assert TOKEN not in caplog.text and "not-the-token" not in caplog.text
    if reason in ("too_many_spans", "invalid_timestamp"):  # the request was decoded: its spans are counted too
        spans = 11 if reason == "too_many_spans" else 3
        assert metric(after, "agentotel_collector_spans_rejected_total", protocol="http", reason=reason) == spans
    assert metric(after, "agentotel_collector_spans_accepted_total", protocol="http") == 0


def test_grpc_refusals_are_logged_and_counted(watched, sdk_spans, caplog):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    host, port = watched.grpc_address
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as unauthenticated:
            stub.Export(encode_spans(sdk_spans[:3]), metadata=[("authorization", "Bearer nope")], timeout=10)
        assert unauthenticated.value.code() is grpc.StatusCode.UNAUTHENTICATED
        raw = channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as invalid:
            raw(b"\xff\xff\xff\xff", metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10)
        assert invalid.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as too_big:  # refused by gRPC itself, before the handler has it
            raw(bytes(2 * 1024 * 1024), metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10)
        assert too_big.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        stub.Export(encode_spans(sdk_spans[:5]), metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10)

    samples = scrape(watched)
    assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="grpc", reason="unauthorized") == 1
    assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="grpc", reason="malformed") == 1
    assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="grpc", reason="too_large") == 1
    assert metric(samples, "agentotel_collector_spans_accepted_total", protocol="grpc") == 5
    assert metric(samples, "agentotel_collector_requests_accepted_total", protocol="grpc") == 1
    unauthorized, malformed, too_large = refusal_lines(caplog)
    assert unauthorized["status"] == "UNAUTHENTICATED" and unauthorized["reason"] == "unauthorized"
    assert unauthorized["method"] == EXPORT and re.fullmatch(r"ipv4:127\.0\.0\.1:\d+", unauthorized["peer"])
    assert "bytes" not in unauthorized  # refused from the metadata, before the message is read
    assert malformed["status"] == "INVALID_ARGUMENT" and malformed["reason"] == "malformed" and malformed["bytes"] == "4"
    assert too_large["status"] == "RESOURCE_EXHAUSTED" and too_large["reason"] == "too_large"
    assert re.fullmatch(r"ipv4:127\.0\.0\.1:\d+", too_large["peer"])  # taken before gRPC ended the call
    assert "internal" not in caplog.text  # not a traceback: gRPC's own refusal is an ordinary one
    assert TOKEN not in caplog.text


class StuckDisk(StoreWriter):
    """A real store whose disk does not answer until `release()`: every write waits for it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.released = threading.Event()
        self.writing = threading.Event()

    def append(self, batch, **kwargs) -> None:
        self.writing.set()
        self.released.wait(30)
        super().append(batch, **kwargs)


def test_a_full_queue_is_a_logged_counted_503_and_queue_bytes_show_the_wait(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    disk = StuckDisk(tmp_path / "store")
    collector = Collector(store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off",
                          queue_bytes=1, write_timeout_s=30).start()
    spans = make_spans(3, seed=5)
    first, second, third = (encode_spans(spans[i * 7 : i * 7 + 7]).SerializeToString() for i in range(3))
    answers: list = []
    threads = [threading.Thread(target=lambda b=b: answers.append(
        requests.post(http_url(collector), data=b, headers=PROTOBUF, timeout=60))) for b in (first, second)]
    try:
        threads[0].start()
        assert disk.writing.wait(10)
        threads[1].start()
        deadline = time.monotonic() + 10
        while not collector._ingest._queue:  # the second request waits behind the first
            assert time.monotonic() < deadline
            time.sleep(0.01)
        waiting = metric(scrape(collector), "agentotel_collector_queue_bytes")

        refused = requests.post(http_url(collector), data=third, headers=PROTOBUF, timeout=10)

        assert refused.status_code == 503
        assert waiting > 0
        samples = scrape(collector)
        assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="http", reason="queue_full") == 1
        (line,) = refusal_lines(caplog)
        assert line["status"] == "503" and line["reason"] == "queue_full" and line["bytes"] == str(len(third))
    finally:
        disk.released.set()
        for thread in threads:
            thread.join(30)
        collector.stop()
    assert [a.status_code for a in answers] == [200, 200]
    assert len(stored_table(tmp_path / "store")) == 14


def test_accepted_spans_wal_size_and_files_written_follow_the_store(tmp_path, sdk_spans):
    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off").start()
    try:
        start = scrape(collector)
        assert metric(start, "agentotel_collector_parquet_files_written_total") == 0
        assert metric(start, "agentotel_collector_fold_seconds_count") == 0
        wal_empty = metric(start, "agentotel_collector_wal_bytes")
        sent = 0
        for first in range(0, len(sdk_spans), 5):
            batch = sdk_spans[first : first + 5]
            answer = requests.post(http_url(collector), data=encode_spans(batch).SerializeToString(), headers=PROTOBUF, timeout=10)
            assert answer.status_code == 200
            sent += len(batch)
        filled = scrape(collector)
        assert metric(filled, "agentotel_collector_spans_accepted_total", protocol="http") == sent == len(sdk_spans)
        assert metric(filled, "agentotel_collector_wal_fsync_seconds_count") >= 1
        assert metric(filled, "agentotel_collector_wal_bytes") > wal_empty

        files = collector._store.fold()

        folded = scrape(collector)
        assert files and metric(folded, "agentotel_collector_parquet_files_written_total") == len(files)
        assert metric(folded, "agentotel_collector_fold_seconds_count") == 1
        assert metric(folded, "agentotel_collector_fold_seconds_sum") > 0
        assert metric(folded, "agentotel_collector_wal_bytes") < metric(filled, "agentotel_collector_wal_bytes")
    finally:
        collector.stop()
    assert len(stored_table(tmp_path / "store")) == sent


def test_metrics_need_the_token_and_take_no_decoding_slot(tmp_path, sdk_spans):
    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", token=TOKEN,
                          max_concurrent_requests=1, admission_timeout_s=0.2).start()
    try:
        refused = requests.get(http_url(collector, "/metrics"), timeout=10)
        assert refused.status_code == 401
        assert "agentotel_collector" not in refused.text
        # Every decoding slot held: exports wait for one, a scrape does not.
        with collector.service.decoding():
            samples = scrape(collector)  # a slot would have meant a 503 after admission_timeout_s
            busy = requests.post(http_url(collector), data=encode_spans(sdk_spans[:2]).SerializeToString(),
                                 headers={**PROTOBUF, **AUTH}, timeout=10)
            assert busy.status_code == 503
        assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="http", reason="unauthorized") == 1
        after = scrape(collector)
        assert metric(after, "agentotel_collector_requests_rejected_total", protocol="http", reason="overloaded") == 1
    finally:
        collector.stop()


def test_a_flood_of_identical_refusals_is_rate_limited_per_reason(caplog, monkeypatch):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    clock = [100.0]
    monkeypatch.setattr(_watch.time, "monotonic", lambda: clock[0])
    metrics = _watch.Metrics()
    for _ in range(1000):
        metrics.rejected("http", 401, "unauthorized", peer="10.0.0.1:5")
    metrics.rejected("http", 415, "bad_content_type", peer="10.0.0.1:5")  # another reason has its own allowance
    clock[0] += 1
    metrics.rejected("http", 401, "unauthorized", peer="10.0.0.1:5")

    messages = [r.getMessage() for r in caplog.records]
    assert sum("reason=unauthorized" in m and "event=rejected" in m for m in messages) == _watch.LINES_PER_SECOND + 1
    assert sum("reason=bad_content_type" in m for m in messages) == 1
    (suppressed,) = [m for m in messages if "event=rejections_suppressed" in m]
    assert f"reason=unauthorized count={1000 - _watch.LINES_PER_SECOND}" in suppressed
    samples = parse_metrics(metrics.render().decode())
    assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="http", reason="unauthorized") == 1001
    assert metric(samples, "agentotel_collector_rejection_logs_suppressed_total", reason="unauthorized") == 990


def test_a_peer_chosen_path_cannot_forge_a_log_line(watched, caplog):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    host, port = watched.http_address
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f'GET /x"reason=ok"status=200?token={TOKEN} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 404 ")
    (line,) = refusal_lines(caplog)
    assert line["reason"] == "not_found" and line["status"] == "404"
    assert line["path"] == '/x\\"reason=ok\\"status=200'  # quoted as one value, the query string dropped
    assert TOKEN not in caplog.text


def test_the_command_logs_refusals_at_its_default_level(tmp_path, sdk_spans):
    port = free_port()
    # The command's default --log-level (INFO), not the WARNING the helper passes for quiet tests.
    process = CollectorProcess(tmp_path / "store", port, "--token", TOKEN, "--log-level", "INFO").start()
    try:
        answer = requests.post(f"http://127.0.0.1:{port}/v1/traces", data=b"abc", headers=PROTOBUF, timeout=10)
        assert answer.status_code == 401
    finally:
        process.terminate()  # (a SIGTERM right after start may come before the handler is set: exit code not checked)
    stderr = process.process.stderr.read().decode()
    lines = [line for line in stderr.splitlines() if "event=rejected" in line]
    assert len(lines) == 1, stderr
    assert " WARNING " in lines[0]
    assert "status=401 reason=unauthorized protocol=http peer=127.0.0.1:" in lines[0]
    assert "method=POST path=/v1/traces bytes=3" in lines[0]
    assert TOKEN not in stderr


def test_slow_senders_are_logged_and_counted_when_cut_off(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="agentotel_collector")
    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off",
                          header_timeout_s=0.3, body_timeout_s=0.3, min_body_rate=1024 * 1024).start()
    try:
        host, port = collector.http_address
        for stalled in (b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n",  # headers that stop coming
                        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                        b"Content-Length: 100000\r\n\r\n0123456789"):  # a body that stops coming
            with socket.create_connection((host, port), timeout=10) as sock:
                sock.sendall(stalled)
                assert sock.recv(1024) == b""  # closed by the collector, without an answer
        samples = scrape_open(collector)
        assert metric(samples, "agentotel_collector_requests_rejected_total", protocol="http", reason="slow_sender") == 2
        headers, body = refusal_lines(caplog)
        assert headers["status"] == body["status"] == "closed" and headers["reason"] == body["reason"] == "slow_sender"
        assert body["bytes"] == "100000" and body["path"] == "/v1/traces"
    finally:
        collector.stop()


def scrape_open(collector: Collector) -> dict:
    answer = requests.get(http_url(collector, "/metrics"), timeout=10)
    assert answer.status_code == 200
    return parse_metrics(answer.text)


def test_background_folds_are_timed_and_counted(tmp_path, sdk_spans):
    # Every append fills the WAL segment: it is sealed and folded on the store's background thread.
    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", wal_max_bytes=1).start()
    try:
        body = encode_spans(sdk_spans[:5]).SerializeToString()
        assert requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=10).status_code == 200
        deadline = time.monotonic() + 20
        while not metric(samples := scrape_open(collector), "agentotel_collector_fold_seconds_count"):
            assert time.monotonic() < deadline, "no background fold was reported"
            time.sleep(0.05)
        assert metric(samples, "agentotel_collector_parquet_files_written_total") >= 1
        assert metric(samples, "agentotel_collector_fold_seconds_sum") > 0
    finally:
        collector.stop()
    assert len(stored_table(tmp_path / "store")) == 5


def test_worker_shares_sum_counters_and_histograms_and_per_process_gauges_only(tmp_path):
    """`--workers`: what one worker renders adds the others' shared counts; a gauge of shared state is not added."""
    workers = []
    for index, queued in ((1, 100), (2, 50), (3, 7)):
        metrics = _watch.Metrics()
        metrics.gauge("agentotel_collector_queue_bytes", "queued", lambda q=queued: q, per_process=True)
        metrics.gauge("agentotel_collector_wal_bytes", "the shared WAL folder", lambda: 4096)
        metrics.accepted("http", 10 * index)
        metrics.rejected_spans("grpc", "invalid_id", index)
        metrics.wal_written(0.002 * index)
        workers.append(_watch.WorkerShare(metrics, tmp_path, index, interval_s=60).start())
    for share in workers:
        share.publish()  # what the periodic thread does every interval_s
    for share in workers:
        samples = parse_metrics(share.metrics.render().decode())
        assert metric(samples, "agentotel_collector_spans_accepted_total", protocol="http") == 60
        assert metric(samples, "agentotel_collector_requests_accepted_total", protocol="http") == 3
        assert metric(samples, "agentotel_collector_spans_rejected_total", protocol="grpc", reason="invalid_id") == 6
        assert metric(samples, "agentotel_collector_wal_fsync_seconds_count") == 3
        assert metric(samples, "agentotel_collector_wal_fsync_seconds_bucket", le="0.005") == 2  # 2 ms and 4 ms
        assert metric(samples, "agentotel_collector_queue_bytes") == 157
        assert metric(samples, "agentotel_collector_wal_bytes") == 4096
    # A worker started in place of worker 2 goes on from its last counts; its own count adds to them.
    workers[1].stop()
    again = _watch.Metrics()
    again.accepted("http", 1)
    replacement = _watch.WorkerShare(again, tmp_path, 2, interval_s=60).start()
    assert metric(parse_metrics(again.render().decode()), "agentotel_collector_spans_accepted_total", protocol="http") == 61
    for share in (workers[0], workers[2], replacement):
        share.stop()
