"""Several writers, one store: two collector processes at once (a local folder, and a bucket as two
replicas on two hosts would share it), compacted while they write; every span arrives exactly once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from collector_support import CollectorProcess, free_port, make_spans, spans_of, stored_table
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from agentotel.store import compact, fs, parquet_files


def _send(port: int, batches: list, stop_compacting: threading.Event, errors: list) -> None:
    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=10)
    try:
        for batch in batches:
            deadline = time.monotonic() + 60
            while exporter.export(batch) is not SpanExportResult.SUCCESS:
                if time.monotonic() > deadline:
                    errors.append(f"port {port}: a batch was never acknowledged")
                    return
                time.sleep(0.05)
            time.sleep(0.15)  # spread the batches over several folds and compactions (each waits out a 0.5 s grace)
    finally:
        exporter.shutdown()


def _two_collectors_with_compaction(store: str | Path, extra: tuple[tuple[str, ...], tuple[str, ...]], reread) -> None:
    spans_a, spans_b = make_spans(60, seed=1), make_spans(60, seed=2)  # 420 spans each, distinct ids
    batches = lambda spans: [spans[i : i + 35] for i in range(0, len(spans), 35)]  # noqa: E731
    # Folds every 0.2 s, so each collector publishes many files while the other does, and while compaction runs.
    collectors = [CollectorProcess(store, free_port(), "--wal-max-age-s", "0.2", *more).start() for more in extra]
    errors: list[str] = []
    done = threading.Event()
    senders = [threading.Thread(target=_send, args=(c.port, batches(s), done, errors))
               for c, s in zip(collectors, (spans_a, spans_b))]
    for sender in senders:
        sender.start()
    compactions = 0
    while any(s.is_alive() for s in senders):
        compact(store, grace_s=0.5)
        compactions += 1
        time.sleep(0.1)
    for sender in senders:
        sender.join()
    assert not errors
    assert [c.terminate() for c in collectors] == [0, 0]
    assert compactions >= 2

    compact(store, grace_s=0)
    stored = reread().column("span_id").to_pylist()
    assert len(stored) == len(set(stored))  # no span twice
    assert set(stored) == spans_of(spans_a) | spans_of(spans_b)  # and none lost


def test_two_collectors_share_a_local_store_while_it_is_compacted(tmp_path):
    store = tmp_path / "store"
    _two_collectors_with_compaction(store, ((), ()), lambda: stored_table(store))
    assert all(Path(p).name.startswith("c-") for p in parquet_files(store))  # the last compaction took every fold


def test_two_collectors_on_two_hosts_share_a_bucket_while_it_is_compacted(s3, tmp_path):
    # Two hosts: each has its own local disk for its WAL; the bucket is all they share.
    hosts = (("--wal-dir", str(tmp_path / "host-a" / "wal")), ("--wal-dir", str(tmp_path / "host-b" / "wal")))
    _two_collectors_with_compaction(s3, hosts, lambda: stored_table(fs.sync(s3)))
    assert not fs.open_remote(s3).exists(fs.LEASE_KEY)  # every compaction gave the lease back
    assert not list((tmp_path / "host-a" / "wal").glob("*.arrows"))  # folded and uploaded at exit


def test_a_compaction_refuses_while_another_holds_the_lease(s3):
    from agentotel.store import StoreWriter, spans_to_batch

    writer = StoreWriter(s3)
    writer.append(spans_to_batch(make_spans(2)))
    writer.close()
    with fs.lease(fs.open_remote(s3)):
        with pytest.raises(fs.LeaseHeld):
            compact(s3)
    assert compact(s3)["rows_after"] == 14
