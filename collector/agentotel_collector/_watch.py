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
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

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
        self._gauges: list[tuple[str, str, Callable[[], float]]] = []
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

    def gauge(self, name: str, help: str, read: Callable[[], float]) -> None:
        """A gauge read at scrape time (queue bytes, WAL size)."""
        self._gauges.append((name, help, read))

    # -- the exposition -----------------------------------------------------------------------

    def render(self) -> bytes:
        """Every metric in the Prometheus text format 0.0.4."""
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
        for name, help, read in self._gauges:
            try:
                value = read()
            except Exception:  # noqa: BLE001 - one unreadable gauge must not cost the whole scrape
                log.debug("agentotel-collector: gauge %s failed", name, exc_info=True)
                continue
            _family(out, name, "gauge", help, [({}, value)])
        return ("\n".join(out) + "\n").encode()


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
