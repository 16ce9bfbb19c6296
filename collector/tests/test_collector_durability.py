"""Acknowledged means durable: SIGKILL loses nothing acknowledged, SIGTERM folds the WAL, overload answers 503."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from google.rpc.status_pb2 import Status
from collector_support import (
    COLLECTOR_ROOT,
    CollectorProcess,
    free_port,
    make_spans,
    spans_of,
    stored_table,
    subprocess_env,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from agentotel.store import compact


@pytest.fixture(autouse=True)
def _quiet_exporter_retries(caplog):
    # The exporter logs every refused connection while the collector is down; that is the point here.
    caplog.set_level(logging.CRITICAL, logger="opentelemetry.exporter.otlp.proto.http")
    caplog.set_level(logging.CRITICAL, logger="opentelemetry.exporter.otlp.common.http")


def export_until_acknowledged(exporter: OTLPSpanExporter, batch) -> None:
    """What a sender with a persistent queue does: try again until the collector says OK."""
    deadline = time.monotonic() + 120
    while exporter.export(batch) is not SpanExportResult.SUCCESS:
        assert time.monotonic() < deadline, "the collector never acknowledged the batch"
        time.sleep(0.05)


def kill_and_restart_run(tmp_path: Path, *, runs: int, batch_size: int, kills: int) -> None:
    store = tmp_path / "store"
    collector = CollectorProcess(store, free_port()).start()
    spans = make_spans(runs, steps=3)
    batches = [spans[i : i + batch_size] for i in range(0, len(spans), batch_size)]
    kill_after = {len(batches) * (k + 1) // (kills + 1) for k in range(kills)}  # batch counts, spread evenly
    exporter = OTLPSpanExporter(
        endpoint=f"http://127.0.0.1:{collector.port}/v1/traces", compression=Compression.Gzip, timeout=5
    )
    acknowledged: set[str] = set()
    acked_batches = 0
    progressed = threading.Condition()
    killed = []

    def killer() -> None:
        for point in sorted(kill_after):
            with progressed:
                progressed.wait_for(lambda: acked_batches >= point)
            time.sleep(0.01)  # land inside the next request, while it is being decoded or written
            collector.kill()
            killed.append(point)
            collector.start()

    thread = threading.Thread(target=killer)
    thread.start()
    for batch in batches:
        export_until_acknowledged(exporter, batch)
        acknowledged |= spans_of(batch)
        with progressed:
            acked_batches += 1
            progressed.notify_all()
    thread.join()
    exporter.shutdown()
    assert collector.terminate() == 0
    assert len(killed) == kills

    stored = stored_table(store).column("span_id").to_pylist()
    assert acknowledged <= set(stored)  # every acknowledged span survived every SIGKILL
    assert acknowledged == spans_of(spans)

    compact(store)
    compacted = stored_table(store).column("span_id").to_pylist()
    assert len(compacted) == len(set(compacted)) == len(spans)  # retries' duplicates collapsed, nothing lost


def test_sigkill_loses_no_acknowledged_span(tmp_path):
    kill_and_restart_run(tmp_path, runs=1000, batch_size=500, kills=3)  # 7,000 spans


@pytest.mark.slow
def test_sigkill_loses_no_acknowledged_span_100k(tmp_path):
    kill_and_restart_run(tmp_path, runs=14_286, batch_size=512, kills=6)  # 100,002 spans


def test_sigterm_finishes_and_folds_the_wal_into_parquet(tmp_path):
    store = tmp_path / "store"
    collector = CollectorProcess(store, free_port()).start()
    spans = make_spans(50)
    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{collector.port}/v1/traces", timeout=10)
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    wal_files = list((store / "wal").glob("*.arrows"))
    assert wal_files and all(f.stat().st_size > 0 for f in wal_files)  # acknowledged, so in the WAL

    assert collector.terminate() == 0

    assert not any(f.stat().st_size for f in (store / "wal").glob("*.arrows"))  # folded, nothing left behind
    assert set(stored_table(store).column("span_id").to_pylist()) == spans_of(spans)
    assert list((store / "spans").glob("date=*/*.parquet"))


SLOW_COLLECTOR = """
import sys, time, signal, threading
sys.path.insert(0, {root!r})
from agentotel.store import StoreWriter
from agentotel_collector import Collector

class SlowDisk(StoreWriter):
    '''A real store on a disk that takes {delay}s per write.'''
    def append(self, batch, **kwargs):
        time.sleep({delay})
        super().append(batch, **kwargs)

collector = Collector(store=SlowDisk({store!r}), dir={store!r}, http=("127.0.0.1", {port}), grpc="off",
                      queue_bytes=256 * 1024, write_timeout_s=2, max_concurrent_requests=2, admission_timeout_s=0.1).start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
print("ready", flush=True)
stop.wait()
collector.stop()
"""


def peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_overload_answers_503_with_retry_after_and_loses_nothing(tmp_path):
    store, port = tmp_path / "store", free_port()
    script = SLOW_COLLECTOR.format(root=str(COLLECTOR_ROOT), store=str(store), port=port, delay=0.25)
    process = subprocess.Popen([sys.executable, "-c", script], env=subprocess_env(), stdout=subprocess.PIPE)
    try:
        assert process.stdout.readline().strip() == b"ready"
        baseline = rss_bytes(process.pid)
        url = f"http://127.0.0.1:{port}/v1/traces"
        spans = make_spans(300)  # 2,100 spans
        chunks = [spans[i::6] for i in range(6)]
        refusals: list[requests.Response] = []

        def sender(chunk) -> None:
            exporter = OTLPSpanExporter(endpoint=url, compression=Compression.Gzip, timeout=30)
            for i in range(0, len(chunk), 100):
                export_until_acknowledged(exporter, chunk[i : i + 100])
            exporter.shutdown()

        # Raw posts see the refusal itself (the exporter hides it behind its retries). Three probers keep
        # pressing until one is refused rather than only while the senders run: on a loaded CI machine
        # a lone prober could be scheduled only in the gaps where the queue had room.
        deadline = time.monotonic() + 60

        def prober() -> None:
            body = encode_spans(spans[:100]).SerializeToString()
            with requests.Session() as session:
                while not refusals and time.monotonic() < deadline:
                    response = session.post(url, data=body, headers={"Content-Type": "application/x-protobuf"}, timeout=30)
                    if response.status_code != 200:
                        refusals.append(response)

        senders = [threading.Thread(target=sender, args=(chunk,)) for chunk in chunks]
        probers = [threading.Thread(target=prober) for _ in range(3)]
        for thread in senders + probers:
            thread.start()
        for thread in senders + probers:
            thread.join()

        assert refusals, "the slow store never pushed back"
        assert refusals[0].status_code == 503
        assert refusals[0].headers["Retry-After"] == "1"
        assert "retry later" in Status.FromString(refusals[0].content).message
        # Bounded memory: queue (256 KiB) + two decoding slots, far below this whatever the offered load.
        assert peak_rss_bytes(process.pid) - baseline < 150 * 1024 * 1024
    finally:
        process.terminate()
        assert process.wait(60) == 0
    assert spans_of(spans) <= set(stored_table(store).column("span_id").to_pylist())
