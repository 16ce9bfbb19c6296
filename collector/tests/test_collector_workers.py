"""`--workers N`: N processes on the same port, one store; every acknowledged span is kept exactly once."""

from __future__ import annotations

import collections
import http.client
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from collector_support import CollectorProcess, free_port, make_spans, stored_table
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from agentotel.store import parquet_files
from agentotel_collector.__main__ import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--workers needs Linux (SO_REUSEPORT)")


def _listeners(port: int) -> int:
    """How many sockets listen on 127.0.0.1:`port` (from /proc/net/tcp: state 0A is LISTEN)."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        if local.endswith(f":{port:04X}") and state == "0A":
            count += 1
    return count


def test_two_workers_share_the_port_and_keep_every_acknowledged_span_once(tmp_path):
    port = free_port()
    process = CollectorProcess(tmp_path / "store", port, "--workers", "2", "--writer-id", "edge").start()
    deadline = time.monotonic() + 60
    while _listeners(port) < 2:  # the second worker listens a moment after the first
        assert time.monotonic() < deadline and process.process.poll() is None
        time.sleep(0.1)
    spans = make_spans(60, seed=21)  # 420 spans: 60 requests of 7, 4 senders, a new connection each
    bodies = [encode_spans(spans[i : i + 7]).SerializeToString() for i in range(0, len(spans), 7)]
    acknowledged: list[str] = []
    lock = threading.Lock()

    def sender(mine: list[bytes], batch_spans: list[list]) -> None:
        for body, batch in zip(mine, batch_spans):
            while True:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                try:
                    connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"})
                    status = connection.getresponse().status
                finally:
                    connection.close()
                if status == 200:
                    with lock:
                        acknowledged.extend(f"{s.context.span_id:016x}" for s in batch)
                    break
                assert status == 503
                time.sleep(0.2)

    batches = [spans[i : i + 7] for i in range(0, len(spans), 7)]
    threads = [threading.Thread(target=sender, args=(bodies[k::4], batches[k::4])) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert process.terminate(timeout=120) == 0  # SIGTERM drains both workers: each folds its WAL
    assert not any(f.stat().st_size for f in (tmp_path / "store" / "wal").glob("*.arrows"))

    stored = collections.Counter(stored_table(tmp_path / "store").column("span_id").to_pylist())
    assert len(acknowledged) == len(spans)
    assert all(stored[span_id] == 1 for span_id in acknowledged), "an acknowledged span is missing or stored twice"
    assert sum(stored.values()) == len(spans)
    # Both workers took connections and wrote files of their own (writer ids edge-1 and edge-2).
    writers = {name for f in parquet_files(tmp_path / "store") for name in ("edge-1", "edge-2") if name in Path(f).name}
    assert writers == {"edge-1", "edge-2"}, [Path(f).name for f in parquet_files(tmp_path / "store")]
    assert all(pq.read_metadata(f).num_rows for f in parquet_files(tmp_path / "store"))


def test_a_worker_that_dies_is_started_again_and_nothing_acknowledged_is_lost(tmp_path):
    port = free_port()
    process = CollectorProcess(tmp_path / "store", port, "--workers", "2").start()
    deadline = time.monotonic() + 60
    while _listeners(port) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    children = [int(p) for p in Path(f"/proc/{process.process.pid}/task/{process.process.pid}/children").read_text().split()]
    assert len(children) == 2
    spans = make_spans(4, seed=22)
    body = encode_spans(spans).SerializeToString()
    for _ in range(6):  # some land on the worker about to be killed
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"})
        assert connection.getresponse().status == 200
        connection.close()
    os.kill(children[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while True:  # the supervisor starts a new worker in its place
        now = [int(p) for p in Path(f"/proc/{process.process.pid}/task/{process.process.pid}/children").read_text().split()]
        if len(now) == 2 and children[0] not in now and _listeners(port) == 2:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert process.terminate(timeout=120) == 0
    # The killed worker's WAL was folded by the worker started in its place (a dead writer's lock is free).
    assert not any(f.stat().st_size for f in (tmp_path / "store" / "wal").glob("*.arrows"))
    stored = collections.Counter(stored_table(tmp_path / "store").column("span_id").to_pylist())
    assert set(stored) == {f"{s.context.span_id:016x}" for s in spans}
    assert set(stored.values()) == {6}  # six acknowledged copies of each (readers collapse retried duplicates)


def test_workers_refuse_port_0_and_a_taken_port(tmp_path):
    assert main(["--dir", str(tmp_path / "s"), "--http", "127.0.0.1:0", "--grpc", "off", "--workers", "2"]) == 2
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--dir", str(tmp_path / "s"), "--http", f"127.0.0.1:{port}", "--grpc", "off", "--workers", "2"]) == 2


def _scrape_accepted(port: int) -> tuple[float, float]:
    """(spans, requests) accepted over HTTP, from one /metrics scrape on a new connection (so any worker may answer)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/metrics")
        answer = connection.getresponse()
        assert answer.status == 200
        text = answer.read().decode()
    finally:
        connection.close()
    values = {}
    for name in ("agentotel_collector_spans_accepted_total", "agentotel_collector_requests_accepted_total"):
        lines = [line for line in text.splitlines() if line.startswith(name + '{protocol="http"} ')]
        assert len(lines) == 1, text
        values[name] = float(lines[0].rsplit(" ", 1)[1])
    histogram = [line for line in text.splitlines() if line.startswith("agentotel_collector_wal_fsync_seconds_count ")]
    assert histogram and float(histogram[0].rsplit(" ", 1)[1]) >= 1  # histograms are summed too
    return values["agentotel_collector_spans_accepted_total"], values["agentotel_collector_requests_accepted_total"]


def test_a_metrics_scrape_of_any_worker_counts_every_worker_and_survives_a_restart(tmp_path):
    port = free_port()
    process = CollectorProcess(tmp_path / "store", port, "--workers", "2", "--writer-id", "m").start()
    deadline = time.monotonic() + 60
    while _listeners(port) < 2:
        assert time.monotonic() < deadline and process.process.poll() is None
        time.sleep(0.1)
    spans = make_spans(12, seed=23)
    batches = [spans[i : i + 5] for i in range(0, len(spans), 5)]
    for batch in batches:  # a new connection each: the kernel spreads them over both workers
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/v1/traces", body=encode_spans(batch).SerializeToString(),
                           headers={"Content-Type": "application/x-protobuf"})
        assert connection.getresponse().status == 200
        connection.close()
    expected = (float(len(spans)), float(len(batches)))
    time.sleep(1.5)  # each worker shares its counts every second
    # Every scrape answers for both workers, whichever one its connection lands on.
    assert [_scrape_accepted(port) for _ in range(8)] == [expected] * 8

    children = [int(p) for p in Path(f"/proc/{process.process.pid}/task/{process.process.pid}/children").read_text().split()]
    os.kill(children[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while True:  # the worker started in its place goes on from the dead one's counts: no counter goes back
        now = [int(p) for p in Path(f"/proc/{process.process.pid}/task/{process.process.pid}/children").read_text().split()]
        if len(now) == 2 and children[0] not in now and _listeners(port) == 2:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert [_scrape_accepted(port) for _ in range(8)] == [expected] * 8
    assert process.terminate(timeout=120) == 0
    # Both workers took requests (each wrote files under its own writer id), so the sums above added two workers.
    writers = {name for f in parquet_files(tmp_path / "store") for name in ("m-1", "m-2") if name in Path(f).name}
    assert writers == {"m-1", "m-2"}, [Path(f).name for f in parquet_files(tmp_path / "store")]


def _metrics_folders(temp: Path) -> set[Path]:
    return {p for p in temp.iterdir() if p.name.startswith("agentotel-collector-metrics-")}


def _gone(pid: int) -> bool:
    try:  # a zombie (exited, not reaped yet by whoever adopted it) is gone too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_killed_supervisors_metrics_folder_is_removed_by_the_next_start_and_a_live_ones_kept(tmp_path, monkeypatch):
    from agentotel_collector import _workers

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the collectors' (and this process's) temporary folder
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read from TMPDIR
    killed_port = free_port()
    killed = CollectorProcess(tmp_path / "a", killed_port, "--workers", "2").start()
    deadline = time.monotonic() + 60
    while _listeners(killed_port) < 2:
        assert time.monotonic() < deadline and killed.process.poll() is None
        time.sleep(0.1)
    (left,) = _metrics_folders(temp)
    assert any(left.glob("worker-*.json"))
    workers = [int(p) for p in Path(f"/proc/{killed.process.pid}/task/{killed.process.pid}/children").read_text().split()]
    killed.kill()  # SIGKILL: no cleanup; its workers get SIGTERM (PDEATHSIG), drain and exit
    deadline = time.monotonic() + 120
    while not all(_gone(pid) for pid in workers):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert left.is_dir()

    port = free_port()
    following = CollectorProcess(tmp_path / "b", port, "--workers", "2").start()
    try:
        (live,) = _metrics_folders(temp)  # the dead supervisor's folder is gone, only the new one's is left
        assert live != left and not left.exists()
        _workers._remove_orphaned_metrics()  # another start now: a live supervisor's folder stays
        assert _metrics_folders(temp) == {live}
    finally:
        assert following.terminate(timeout=120) == 0
    assert not _metrics_folders(temp) and not list(temp.iterdir())  # an orderly stop leaves nothing behind


def test_a_supervisor_stopped_while_its_workers_start_exits_cleanly(tmp_path, monkeypatch):
    """SIGTERM right after the workers are spawned: a worker still importing dies of the signal before its own
    handler is set (it sets it before it listens, so it took nothing in). That is an orderly stop: exit 0."""
    import subprocess

    from collector_support import subprocess_env

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    args = [sys.executable, "-m", "agentotel_collector", "--dir", str(tmp_path / "store"), "--http",
            f"127.0.0.1:{free_port()}", "--grpc", "off", "--log-level", "WARNING", "--workers", "2"]
    supervisor = subprocess.Popen(args, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    children = Path(f"/proc/{supervisor.pid}/task/{supervisor.pid}/children")
    deadline = time.monotonic() + 60
    while len(children.read_text().split()) < 2:  # both workers spawned, neither done importing yet
        assert time.monotonic() < deadline and supervisor.poll() is None, supervisor.stderr.read().decode()
        time.sleep(0.005)
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(120) == 0, supervisor.stderr.read().decode()
    assert not list(temp.iterdir())  # its metrics folder is gone too
