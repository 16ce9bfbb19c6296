"""Watching the collector: one log line per refused request, and the counters behind GET /metrics.

Log lines are logfmt (`key=value`, values with spaces or quotes JSON-quoted), at WARNING on the
`agentotel_collector` logger, so they show with the command's default `--log-level INFO` and with
Python's default logging when the collector is embedded. Identical floods cannot fill a disk: at most
`LINES_PER_SECOND` lines per reason each second; the rest are counted and reported in one
`event=rejections_suppressed` line with the next line of that reason (and always in /metrics).
A line never holds a token or a body: only the status, a stable reason token, the peer, the path
(without its query string) or gRPC method, the size, and the refusal's own message.

Metrics are written by hand in the Prometheus text format 0.0.4: a few counters, gauges and
histograms, each updated under one lock (microseconds per request, next to milliseconds of decoding).
With `--workers N` a scrape reaches one worker; `WorkerShare` lets it answer for all of them (each
worker's counts in a file of a folder they share, summed at scrape time).
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

log = logging.getLogger("agentotel_collector")

LINES_PER_SECOND = 10
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_PLAIN = re.compile(r"[A-Za-z0-9_./:@\[\]-]+")
_MAX_VALUE = 200
# Seconds. A WAL group commit is one write and one fsync (sub-millisecond on an SSD, tens of ms on a
# network disk); a fold writes Parquet files (tenths of a second to tens of seconds).
FSYNC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FOLD_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


def _value(value: object) -> str:
    text = str(value)
    if len(text) > _MAX_VALUE:
        text = text[:_MAX_VALUE] + "..."
    # A peer-controlled value (a path, a message) is quoted, so it cannot forge a field or a line.
    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=True)


def logfmt(fields: dict[str, object]) -> str:
    return " ".join(f"{key}={_value(value)}" for key, value in fields.items() if value is not None)


class _Histogram:
    __slots__ = ("bounds", "counts", "total", "count")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one is +Inf
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def snapshot(self) -> dict[str, Any]:
        return {"counts": list(self.counts), "total": self.total, "count": self.count}

    def add(self, snapshot: dict[str, Any]) -> None:
        counts = snapshot.get("counts", ())
        if len(counts) == len(self.counts):  # another version's buckets cannot be added bucket by bucket
            self.counts = [a + int(b) for a, b in zip(self.counts, counts)]
            self.total += float(snapshot.get("total", 0.0))
            self.count += int(snapshot.get("count", 0))


class Metrics:
    """The collector's counters and gauges, and the rate-limited log of refusals; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Present at zero from the start, so a dashboard's rate() has a first point.
        self._accepted_spans: dict[str, int] = {"grpc": 0, "http": 0}
        self._accepted_requests: dict[str, int] = {"grpc": 0, "http": 0}
        self._rejected_requests: dict[tuple[str, str], int] = {}
        self._rejected_spans: dict[tuple[str, str], int] = {}
        self._suppressed: dict[str, int] = {}
        self._files_written = 0
        self._fsync = _Histogram(FSYNC_BUCKETS)
        self._fold = _Histogram(FOLD_BUCKETS)
        self._gauges: list[tuple[str, str, Callable[[], float], bool]] = []
        # With --workers: the other workers' latest snapshots, added in at scrape time.
        self.peers: Callable[[], Iterable[dict[str, Any]]] | None = None
        # reason -> (second the window started, lines logged in it, lines suppressed in it)
        self._windows: dict[str, tuple[int, int, int]] = {}

    # -- what the receiver reports ------------------------------------------------------------

    def accepted(self, protocol: str, spans: int) -> None:
        with self._lock:
            self._accepted_requests[protocol] = self._accepted_requests.get(protocol, 0) + 1
            self._accepted_spans[protocol] = self._accepted_spans.get(protocol, 0) + spans

    def rejected_spans(self, protocol: str, reason: str, spans: int) -> None:
        """Spans refused inside a request (partial success), or the spans of a request refused for its contents."""
        if spans <= 0:
            return
        with self._lock:
            key = (protocol, reason)
            self._rejected_spans[key] = self._rejected_spans.get(key, 0) + spans

    def rejected(self, protocol: str, status: int | str, reason: str, **fields: object) -> None:
        """Count a refused request and log one line for it (rate-limited per reason).

        `fields`: peer, method, path, bytes, detail; never a token or a body.
        """
        now = int(time.monotonic())
        with self._lock:
            key = (protocol, reason)
            self._rejected_requests[key] = self._rejected_requests.get(key, 0) + 1
            start, logged, suppressed = self._windows.get(reason, (now, 0, 0))
            report = 0
            if start != now:
                report, start, logged, suppressed = suppressed, now, 0, 0
            emit = logged < LINES_PER_SECOND
            if emit:
                logged += 1
            else:
                suppressed += 1
                self._suppressed[reason] = self._suppressed.get(reason, 0) + 1
            self._windows[reason] = (start, logged, suppressed)
        if report:
            log.warning("agentotel-collector: %s", logfmt({"event": "rejections_suppressed", "reason": reason, "count": report}))
        if emit:
            line = {"event": "rejected", "status": status, "reason": reason, "protocol": protocol, **fields}
            log.warning("agentotel-collector: %s", logfmt(line))

    def wal_written(self, seconds: float) -> None:
        """One group commit to the WAL (write + fsync) took `seconds`."""
        with self._lock:
            self._fsync.observe(seconds)

    def folded(self, seconds: float, files: Iterable[Path]) -> None:
        """A WAL segment was folded into Parquet in `seconds`, publishing `files`."""
        count = len(list(files))
        with self._lock:
            self._fold.observe(seconds)
            self._files_written += count

    def gauge(self, name: str, help: str, read: Callable[[], float], *, per_process: bool = False) -> None:
        """A gauge read at scrape time (queue bytes, WAL size); `per_process` ones are summed over `--workers`."""
        self._gauges.append((name, help, read, per_process))

    # -- several processes (--workers) ----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """This process's counters, histograms and per-process gauges, as JSON-able data."""
        with self._lock:
            snapshot: dict[str, Any] = {
                "accepted_spans": dict(self._accepted_spans),
                "accepted_requests": dict(self._accepted_requests),
                "rejected_requests": [[p, r, v] for (p, r), v in self._rejected_requests.items()],
                "rejected_spans": [[p, r, v] for (p, r), v in self._rejected_spans.items()],
                "suppressed": dict(self._suppressed),
                "files_written": self._files_written,
                "fsync": self._fsync.snapshot(),
                "fold": self._fold.snapshot(),
            }
        snapshot["gauges"] = {name: value for name, value in self._read_gauges(per_process=True)}
        return snapshot

    def add(self, snapshot: dict[str, Any]) -> None:
        """Add a snapshot's counts to these (a restarted worker goes on from where the one it replaces stopped)."""
        with self._lock:
            _add_counts(self._accepted_spans, snapshot.get("accepted_spans", {}).items())
            _add_counts(self._accepted_requests, snapshot.get("accepted_requests", {}).items())
            _add_counts(self._rejected_requests, (((p, r), v) for p, r, v in snapshot.get("rejected_requests", ())))
            _add_counts(self._rejected_spans, (((p, r), v) for p, r, v in snapshot.get("rejected_spans", ())))
            _add_counts(self._suppressed, snapshot.get("suppressed", {}).items())
            self._files_written += int(snapshot.get("files_written", 0))
            self._fsync.add(snapshot.get("fsync", {}))
            self._fold.add(snapshot.get("fold", {}))

    def _read_gauges(self, *, per_process: bool | None = None) -> Iterable[tuple[str, float]]:
        for name, _help, read, summed in self._gauges:
            if per_process is not None and summed != per_process:
                continue
            try:
                yield name, read()
            except Exception:  # noqa: BLE001 - one unreadable gauge must not cost the whole scrape
                log.debug("agentotel-collector: gauge %s failed", name, exc_info=True)

    # -- the exposition -----------------------------------------------------------------------

    def render(self) -> bytes:
        """Every metric in the Prometheus text format 0.0.4 (with `--workers`: summed over the workers)."""
        peers = list(self.peers()) if self.peers is not None else []
        if not peers:
            return self._render([])
        total = Metrics()
        total._gauges = self._gauges
        total.add(self.snapshot())
        for snapshot in peers:
            try:
                total.add(snapshot)
            except (TypeError, ValueError, AttributeError):  # a file of another version: that worker is left out
                log.debug("agentotel-collector: unreadable worker metrics skipped", exc_info=True)
        return total._render(peers)

    def _render(self, peers: list[dict[str, Any]]) -> bytes:
        out: list[str] = []
        with self._lock:
            _family(out, "agentotel_collector_spans_accepted_total", "counter",
                    "Spans written durably (in the fsync'd WAL) and acknowledged.",
                    (({"protocol": p}, v) for p, v in sorted(self._accepted_spans.items())))
            _family(out, "agentotel_collector_requests_accepted_total", "counter",
                    "Export requests answered with success.",
                    (({"protocol": p}, v) for p, v in sorted(self._accepted_requests.items())))
            _family(out, "agentotel_collector_requests_rejected_total", "counter",
                    "Requests refused, by protocol and reason (see the README for the reasons).",
                    (({"protocol": p, "reason": r}, v) for (p, r), v in sorted(self._rejected_requests.items())))
            _family(out, "agentotel_collector_spans_rejected_total", "counter",
                    "Spans refused: partial success (invalid_id), or every span of a request refused for its spans.",
                    (({"protocol": p, "reason": r}, v) for (p, r), v in sorted(self._rejected_spans.items())))
            _family(out, "agentotel_collector_rejection_logs_suppressed_total", "counter",
                    "Refusal log lines left out by the rate limit, by reason.",
                    (({"reason": r}, v) for r, v in sorted(self._suppressed.items())))
            _family(out, "agentotel_collector_parquet_files_written_total", "counter",
                    "Parquet files published by folding the WAL.", [({}, self._files_written)])
            _histogram(out, "agentotel_collector_wal_fsync_seconds",
                       "Time of one WAL group commit (one write and one fsync, for one or more requests).", self._fsync)
            _histogram(out, "agentotel_collector_fold_seconds",
                       "Time to fold one WAL segment into Parquet files.", self._fold)
        helps = {name: (help, summed) for name, help, _read, summed in self._gauges}
        for name, value in self._read_gauges():
            help, summed = helps[name]
            if summed:
                value += sum(float(peer.get("gauges", {}).get(name, 0.0)) for peer in peers)
            _family(out, name, "gauge", help, [({}, value)])
        return ("\n".join(out) + "\n").encode()


def _add_counts(into: dict, items: Iterable[tuple[Any, Any]]) -> None:
    for key, value in items:
        into[key] = into.get(key, 0) + int(value)


class WorkerShare:
    """One worker's part in a `--workers` scrape: its snapshot in a shared folder, the others' read back.

    Each worker writes `worker-<index>.json` (atomically) every `interval_s` and when it stops, and adds
    the other workers' files when it renders /metrics: a scrape answers for every worker, the others'
    counts at most `interval_s` old. A worker started in place of a dead one begins from the dead one's
    last file, which holds at least what any scrape showed of it, so the summed counters never go back
    (a scrape would read that as a counter reset).
    """

    def __init__(self, metrics: Metrics, folder: Path, index: int, interval_s: float = 1.0) -> None:
        self.metrics, self.folder, self.index, self.interval_s = metrics, Path(folder), index, interval_s
        self._path = self.folder / f"worker-{index}.json"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "WorkerShare":
        predecessor = _read_snapshot(self._path)
        if predecessor is not None:
            self.metrics.add(predecessor)
        self.metrics.peers = self._scraped
        self.publish()
        self._thread = threading.Thread(target=self._run, name="agentotel-collector-metrics", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.publish()

    def publish(self) -> None:
        """Write this worker's snapshot; never raises (a scrape then sees its previous one)."""
        try:
            snapshot = self.metrics.snapshot()
            temporary = self._path.with_name(f".{self._path.name}.{os.getpid()}")
            temporary.write_text(json.dumps(snapshot), encoding="utf-8")
            os.replace(temporary, self._path)
        except Exception:  # noqa: BLE001 - metrics never stop ingestion
            log.debug("agentotel-collector: could not publish worker metrics", exc_info=True)

    def others(self) -> list[dict[str, Any]]:
        """The other workers' latest snapshots."""
        found = []
        try:
            paths = sorted(self.folder.glob("worker-*.json"))
        except OSError:
            return found
        for path in paths:
            if path != self._path:
                snapshot = _read_snapshot(path)
                if snapshot is not None:
                    found.append(snapshot)
        return found

    def _scraped(self) -> list[dict[str, Any]]:
        # What a scrape shows of this worker is in its file first: a worker started in its place begins
        # there, so no scrape ever sees a counter lower than an earlier scrape did.
        self.publish()
        return self.others()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.publish()


def _read_snapshot(path: Path) -> dict[str, Any] | None:
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return snapshot if isinstance(snapshot, dict) else None


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + "n").replace(chr(34), chr(92) + chr(34))}"'
        for k, v in labels.items()
    )
    return "{" + inner + "}"


def _number(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(value) if isinstance(value, float) else str(value)


def _family(out: list[str], name: str, kind: str, help: str, samples: Iterable[tuple[dict[str, str], float]]) -> None:
    out.append(f"# HELP {name} {help}")
    out.append(f"# TYPE {name} {kind}")
    for labels, value in samples:
        out.append(f"{name}{_labels(labels)} {_number(value)}")


def _histogram(out: list[str], name: str, help: str, histogram: _Histogram) -> None:
    out.append(f"# HELP {name} {help}")
    out.append(f"# TYPE {name} histogram")
    cumulative = 0
    for bound, count in zip((*histogram.bounds, float("inf")), histogram.counts):
        cumulative += count
        out.append(f'{name}_bucket{{le="{_number(float(bound))}"}} {cumulative}')
    out.append(f"{name}_sum {_number(float(histogram.total))}")
    out.append(f"{name}_count {histogram.count}")


def wal_bytes(directory: Path) -> Callable[[], int]:
    """A reader of the WAL folder's size in bytes (live and orphaned segments)."""
    from agentotel.store.wal import SUFFIX

    def read() -> int:
        total = 0
        try:
            entries = list(directory.iterdir())
        except FileNotFoundError:
            return 0
        for entry in entries:
            if entry.name.endswith(SUFFIX) and not entry.name.startswith("."):
                try:
                    total += entry.stat().st_size
                except FileNotFoundError:  # folded away meanwhile
                    pass
        return total

    return read
