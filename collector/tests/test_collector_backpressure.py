"""A full write queue or a stuck disk answers 503 / UNAVAILABLE with a retry delay, never an error that drops data."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
import requests
from collector_support import Collector, http_url, make_spans, stored_table
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from agentotel.store import StoreWriter

PROTOBUF = {"Content-Type": "application/x-protobuf"}


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


@pytest.fixture
def stuck(tmp_path):
    disk = StuckDisk(tmp_path / "store")
    running = Collector(
        store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=("127.0.0.1", 0),
        queue_bytes=1, write_timeout_s=30, max_concurrent_requests=8, retry_after_s=2,
    ).start()
    yield running, disk
    disk.released.set()
    running.stop()


def bodies(count: int) -> list[bytes]:
    spans = make_spans(count, seed=7)
    return [encode_spans(spans[i * 7 : i * 7 + 7]).SerializeToString() for i in range(count)]


def post_in_background(url: str, body: bytes, answers: list) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(requests.post(url, data=body, headers=PROTOBUF, timeout=60)))
    thread.start()
    return thread


def wait_until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_full_queue_answers_503_with_retry_after_then_accepts_the_retry(stuck):
    collector, disk = stuck
    first, second, third = bodies(3)
    answers: list[requests.Response] = []
    writing = post_in_background(http_url(collector), first, answers)  # taken by the writer, stuck on the disk
    disk.writing.wait(10)
    queued = post_in_background(http_url(collector), second, answers)  # waits in the queue
    wait_until(lambda: collector._ingest._queue)

    refused = requests.post(http_url(collector), data=third, headers=PROTOBUF, timeout=10)

    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "2"
    assert Status.FromString(refused.content).code == 14  # UNAVAILABLE
    assert "write queue is full" in Status.FromString(refused.content).message
    disk.released.set()
    writing.join()
    queued.join()
    assert [a.status_code for a in answers] == [200, 200]
    assert requests.post(http_url(collector), data=third, headers=PROTOBUF, timeout=10).status_code == 200  # the retry
    assert len(stored_table(collector.settings.dir)) == 21


def test_a_store_slower_than_the_write_timeout_answers_503(tmp_path):
    disk = StuckDisk(tmp_path / "store")
    with Collector(store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", write_timeout_s=0.3) as collector:
        [body] = bodies(1)

        response = requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=10)

        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        assert "did not confirm the write within 0.3 s" in Status.FromString(response.content).message
        disk.released.set()
    # The write finished after the answer: the sender's retry will make a duplicate, never a loss.
    assert len(stored_table(tmp_path / "store")) == 7


def test_grpc_full_queue_answers_unavailable_with_retry_info(stuck):
    collector, disk = stuck
    first, second, third = (encode_spans(make_spans(1, seed=s)) for s in (11, 12, 13))
    host, port = collector.grpc_address
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        in_flight = [stub.Export.future(first, timeout=60)]
        disk.writing.wait(10)
        in_flight.append(stub.Export.future(second, timeout=60))
        wait_until(lambda: collector._ingest._queue)

        with pytest.raises(grpc.RpcError) as refused:
            stub.Export(third, timeout=10, compression=grpc.Compression.Gzip)

        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        trailers = dict(refused.value.trailing_metadata())
        assert RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]).retry_delay.seconds == 2
        status = Status.FromString(trailers["grpc-status-details-bin"])
        detail = RetryInfo()
        assert status.code == 14 and status.details[0].Unpack(detail) and detail.retry_delay.seconds == 2
        disk.released.set()
        for future in in_flight:
            future.result()
        stub.Export(third, timeout=10)  # the retry
    assert len(stored_table(collector.settings.dir)) == 21


def test_health_reports_shutdown(stuck):
    collector, disk = stuck
    disk.released.set()
    collector.service.stopping = True

    response = requests.get(http_url(collector, "/health"), timeout=10)

    assert response.status_code == 503 and response.json() == {"status": "unavailable"}



def test_stop_finishes_requests_in_progress_and_refuses_new_ones(tmp_path):
    disk = StuckDisk(tmp_path / "store")
    collector = Collector(store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off").start()
    first, second = bodies(2)
    answers: list[requests.Response] = []
    in_progress = post_in_background(http_url(collector), first, answers)
    disk.writing.wait(10)

    stopping = threading.Thread(target=collector.stop)
    stopping.start()
    wait_until(lambda: collector.service.stopping)
    try:
        late = requests.post(http_url(collector), data=second, headers=PROTOBUF, timeout=5)
    except requests.ConnectionError:
        pass  # no longer listening
    else:  # accepted just before the listener closed: refused, retryably
        assert late.status_code == 503 and late.headers["Retry-After"] == "1"
    assert stopping.is_alive()  # still waiting for the request in progress

    disk.released.set()
    in_progress.join()
    stopping.join(30)
    assert [a.status_code for a in answers] == [200]
    assert not stopping.is_alive()
    assert not any(f.stat().st_size for f in (tmp_path / "store" / "wal").glob("*.arrows"))  # folded
    assert len(stored_table(tmp_path / "store")) == 7
