"""A request's way from the event loop to decoding (on the loop, or a pool thread) to the store writer and back keeps every limit.

The decoding thread queues the rows for the store itself and the writer wakes the event loop once per
group commit; these tests hold the rules that hand-off must keep: the write timeout counts the store's
time only, a failed write is a retryable 503, requests wait for a free decoding thread up to the admission
timeout, and every pool thread and body byte taken is given back.
"""

from __future__ import annotations

import asyncio
import errno
import gzip
import threading
import time

import pytest
import requests
from collector_support import Collector, http_url, make_spans, stored_table
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from agentotel.store import StoreWriter
from agentotel_collector import _http
from agentotel_collector._http import _Quota
from agentotel_collector._ingest import Busy

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def bodies(count: int, seed: int = 21) -> list[bytes]:
    """`count` request bodies of 7 spans each (one agent run with two steps of each kind)."""
    spans = make_spans(count, seed=seed)
    return [encode_spans(spans[i * 7 : i * 7 + 7]).SerializeToString() for i in range(count)]


def slowed_conversion(collector: Collector, monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Each request's conversion takes `seconds` longer, as a large body on a busy machine does."""
    convert = collector.service.convert

    def slow(request, protocol):
        time.sleep(seconds)
        return convert(request, protocol)

    monkeypatch.setattr(collector.service, "convert", slow)


class StuckDisk(StoreWriter):
    """A real store whose disk does not answer until `released` is set."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.released = threading.Event()

    def append(self, batch, **kwargs) -> None:
        self.released.wait(30)
        super().append(batch, **kwargs)


class FullOnce(StoreWriter):
    """A real store whose disk is full for the first write, then has room again."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.failures = 1

    def append(self, batch, **kwargs) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append(batch, **kwargs)


def test_decoding_time_does_not_count_against_the_write_timeout(tmp_path, monkeypatch):
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", write_timeout_s=2) as collector:
        slowed_conversion(collector, monkeypatch, 3.0)
        [body] = bodies(1)

        response = requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=60)

        assert response.status_code == 200
    assert len(stored_table(tmp_path / "store")) == 7


def test_the_write_timeout_starts_when_the_rows_are_queued(tmp_path, monkeypatch):
    disk = StuckDisk(tmp_path / "store")
    with Collector(store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", write_timeout_s=0.5) as collector:
        slowed_conversion(collector, monkeypatch, 1.0)
        [body] = bodies(1)
        started = time.monotonic()

        response = requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=60)

        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        assert "did not confirm the write within 0.5 s" in Status.FromString(response.content).message
        assert time.monotonic() - started >= 1.5  # the conversion's second, then the store's half second
        disk.released.set()
    assert len(stored_table(tmp_path / "store")) == 7  # written after the answer: a retry duplicates, never loses


def test_a_failed_write_is_a_retryable_503_and_the_retry_is_stored(tmp_path):
    disk = FullOnce(tmp_path / "store")
    with Collector(store=disk, dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off") as collector:
        [body] = bodies(1)

        refused = requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=30)
        retried = requests.post(http_url(collector), data=body, headers=PROTOBUF, timeout=30)

        assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
        status = Status.FromString(refused.content)
        assert status.code == 14 and "the store could not write" in status.message and "No space left" in status.message
        assert retried.status_code == 200
    assert len(stored_table(tmp_path / "store")) == 7


def _post_all(url: str, payloads: list[bytes]) -> list[requests.Response]:
    answers: list[requests.Response] = []
    threads = [threading.Thread(target=lambda b=b: answers.append(requests.post(url, data=b, headers=PROTOBUF, timeout=60)))
               for b in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_requests_beyond_the_decoding_threads_wait_for_one_and_all_are_stored(tmp_path, monkeypatch):
    # One decoding slot: three pool threads. Eight requests at once: five wait for a thread to be given back.
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", max_concurrent_requests=1,
                   admission_timeout_s=30) as collector:
        slowed_conversion(collector, monkeypatch, 0.2)
        payloads = bodies(8)

        answers = _post_all(http_url(collector), payloads)

        assert sorted(a.status_code for a in answers) == [200] * 8
        receiver = collector._http.receiver
        assert receiver._free_threads.used == 0 and receiver.budget.used == 0
    assert len(stored_table(tmp_path / "store")) == 56


def test_a_request_that_finds_no_decoding_thread_in_time_is_a_503_and_gives_back_what_it_took(tmp_path, monkeypatch):
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", max_concurrent_requests=1,
                   admission_timeout_s=0.3) as collector:
        slowed_conversion(collector, monkeypatch, 1.0)
        payloads = bodies(8)

        answers = _post_all(http_url(collector), payloads)

        codes = sorted(a.status_code for a in answers)
        assert 200 in codes and 503 in codes and set(codes) == {200, 503}
        messages = {Status.FromString(a.content).message for a in answers if a.status_code == 503}
        assert all("too many requests in progress" in m for m in messages)
        receiver = collector._http.receiver
        assert receiver._free_threads.used == 0 and receiver.budget.used == 0  # nothing held after the answers
        assert requests.post(http_url(collector), data=payloads[0], headers=PROTOBUF, timeout=30).status_code == 200
    assert len(stored_table(tmp_path / "store")) == 7 * (codes.count(200) + 1)


def test_quota_lets_a_waiter_in_when_another_thread_gives_back_and_a_late_grant_is_returned():
    async def main() -> None:
        quota = _Quota(2)
        await quota.take(2, 1, "full")
        waiter = asyncio.ensure_future(quota.take(1, 10, "full"))
        await asyncio.sleep(0.05)
        assert not waiter.done()

        giver = threading.Thread(target=quota.give, args=(1,))  # a decoding thread finishing its request
        giver.start()
        await asyncio.wait_for(waiter, 10)
        giver.join()
        assert quota.used == 2

        with pytest.raises(Busy, match="full"):
            await quota.take(1, 0.05, "full")
        assert quota.used == 2 and not quota._waiting

        # A give-back that lets a waiter in just as it stops waiting: the grant finds it gone and returns the unit.
        gone = asyncio.get_running_loop().create_future()
        gone.cancel()
        quota._grant(1, gone)
        assert quota.used == 1

    asyncio.run(main())


def test_a_small_body_is_decoded_on_the_event_loop_and_a_large_one_on_a_pool_thread(tmp_path, monkeypatch):
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off") as collector:
        threads: list[str] = []
        convert = collector.service.convert

        def noting_the_thread(request, protocol):
            threads.append(threading.current_thread().name)
            return convert(request, protocol)

        monkeypatch.setattr(collector.service, "convert", noting_the_thread)
        small, large = bodies(2)
        padded = ExportTraceServiceRequest.FromString(large)  # 3 MiB once inflated: past the loop's 2 MiB
        padded.resource_spans[0].resource.attributes.append(KeyValue(key="test.padding", value=AnyValue(string_value="x" * 3 * 2**20)))
        large = padded.SerializeToString()
        url = http_url(collector)

        answers = [
            requests.post(url, data=small, headers=PROTOBUF, timeout=30),
            requests.post(url, data=large, headers=PROTOBUF, timeout=30),
            # Small as sent (a few KB of gzip) but 3 MiB once inflated: found out on the loop, decoded on the pool.
            requests.post(url, data=gzip.compress(large), headers={**PROTOBUF, "Content-Encoding": "gzip"}, timeout=30),
        ]

        assert [a.status_code for a in answers] == [200, 200, 200]
        loop = collector._http._thread.name
        assert threads[0] == loop
        assert threads[1] != loop and threads[1].startswith(f"{loop}_")
        assert threads[2] != loop and threads[2].startswith(f"{loop}_")
        receiver = collector._http.receiver
        assert receiver._free_threads.used == 0 and receiver.budget.used == 0
        assert collector.service.take_slot(wait=False) and collector.service.take_slot(wait=False)  # both slots given back
        collector.service.give_slot()
        collector.service.give_slot()
    assert len(stored_table(tmp_path / "store")) == 21


def test_while_the_loop_gets_little_cpu_for_its_decoding_the_pool_decodes_and_then_the_loop_again(tmp_path, monkeypatch):
    monkeypatch.setattr(_http, "_POOL_FOR_S", 0.5)
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off") as collector:
        threads: list[str] = []
        convert = collector.service.convert

        def first_one_waits(request, protocol):
            threads.append(threading.current_thread().name)
            if len(threads) == 1:
                time.sleep(0.1)  # the loop's thread gets no CPU for 0.1 s, as on a machine whose cores are busy
            return convert(request, protocol)

        monkeypatch.setattr(collector.service, "convert", first_one_waits)
        first, second, third = bodies(3)
        url = http_url(collector)

        codes = [requests.post(url, data=first, headers=PROTOBUF, timeout=30).status_code,
                 requests.post(url, data=second, headers=PROTOBUF, timeout=30).status_code]
        time.sleep(0.6)
        codes.append(requests.post(url, data=third, headers=PROTOBUF, timeout=30).status_code)

        assert codes == [200, 200, 200]
        loop = collector._http._thread.name
        assert threads[0] == loop
        assert threads[1].startswith(f"{loop}_")  # within _POOL_FOR_S of the crowded decoding
        assert threads[2] == loop  # after it
    assert len(stored_table(tmp_path / "store")) == 21


def test_bodies_found_ready_after_a_burst_of_decoding_on_the_loop_go_to_the_pool(tmp_path, monkeypatch):
    monkeypatch.setattr(_http, "_CROWDED_SHARE", 0.0)  # here the loop never finds the machine crowded
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off") as collector:
        threads: list[str] = []
        first_started = threading.Event()
        convert = collector.service.convert

        def slow(request, protocol):
            threads.append(threading.current_thread().name)
            first_started.set()
            # Longer than _INLINE_BURST_S; the first long enough for the other five bodies to arrive meanwhile.
            time.sleep(1.0 if len(threads) == 1 else 0.3)
            return convert(request, protocol)

        monkeypatch.setattr(collector.service, "convert", slow)
        first, *others = bodies(6)
        url = http_url(collector)
        first_answer: list[requests.Response] = []
        sender = threading.Thread(target=lambda: first_answer.append(requests.post(url, data=first, headers=PROTOBUF, timeout=30)))
        sender.start()
        assert first_started.wait(30)

        answers = _post_all(url, others)  # all five ready together once the loop is done with the first

        sender.join()
        assert [a.status_code for a in first_answer + answers] == [200] * 6
        loop = collector._http._thread.name
        # The first on the loop; of the five, one starts a new burst on the loop, the other four go to the pool.
        assert threads[:2] == [loop, loop]
        assert len(threads) == 6 and all(name.startswith(f"{loop}_") for name in threads[2:])
        receiver = collector._http.receiver
        assert receiver._free_threads.used == 0 and receiver.budget.used == 0
    assert len(stored_table(tmp_path / "store")) == 42
