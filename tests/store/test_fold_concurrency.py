"""Folds that run side by side: the dates of one segment, and a shutdown's fold next to a background one.

Each case checks what concurrency could break: every span stored exactly once, files in their date's
folder, WAL files removed only once their own Parquet files are durable, and a failure on one side
leaving its spans recoverable from the WAL.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pyarrow.parquet as pq
import pytest

from agentotel.store import ParquetSpanExporter, StoreWriter, parquet_files, read_wal, spans_to_batch, wal
from agentotel.store.writer import fold_batches
from tests.store.conftest import T0, make_spans

DAY = 86_400 * 10**9


def _stored(directory) -> dict[str, list[str]]:
    """Span ids per date folder, from the visible Parquet files."""
    out: dict[str, list[str]] = {}
    for path in parquet_files(directory):
        folder = path.split("/")[-2]
        out.setdefault(folder, []).extend(pq.read_table(path, columns=["span_id"]).column(0).to_pylist())
    return out


def _days(tracer, finished, days: int, per_day: int):
    """Spans starting on `days` consecutive dates, handed over newest date first (as an old import might)."""
    for day in reversed(range(days)):
        make_spans(tracer, per_day, start=T0 + day * DAY, prefix=f"d{day}")
    return finished()


def test_a_segment_over_several_dates_publishes_every_date_once_in_date_order(tmp_path, sdk):
    tracer, finished = sdk
    spans = _days(tracer, finished, days=5, per_day=7)
    files = fold_batches(tmp_path, "seg", [spans_to_batch(spans[:20]), spans_to_batch(spans[20:])])
    folders = [str(f).split("/")[-2] for f in files]
    assert folders == [f"date=2026-01-0{d}" for d in range(1, 6)]  # returned in date order
    stored = _stored(tmp_path)
    assert sorted(len(ids) for ids in stored.values()) == [7] * 5
    assert sorted(i for ids in stored.values() for i in ids) == sorted(f"{s.context.span_id:016x}" for s in spans)
    for path in parquet_files(tmp_path):  # each file in start-time order, within its own date
        starts = pq.read_table(path, columns=["start_time"]).column(0).cast("int64").to_pylist()
        assert starts == sorted(starts)
        assert len({s // DAY for s in starts}) == 1


def test_one_date_that_cannot_be_written_does_not_stop_the_others_and_a_retry_completes(tmp_path, sdk):
    tracer, finished = sdk
    spans = _days(tracer, finished, days=4, per_day=5)
    batch = spans_to_batch(spans)
    (tmp_path / "spans").mkdir()
    blocker = tmp_path / "spans" / "date=2026-01-02"
    blocker.write_text("a file where the partition folder should be")
    with pytest.raises(OSError):
        fold_batches(tmp_path, "seg", [batch])
    # Every other date was attempted and published before the error came back.
    assert sorted(_stored(tmp_path)) == ["date=2026-01-01", "date=2026-01-03", "date=2026-01-04"]
    blocker.unlink()
    files = fold_batches(tmp_path, "seg", [batch], skip_published=True)
    assert [str(f).split("/")[-2] for f in files] == ["date=2026-01-02"]  # nothing written twice
    assert sum(len(ids) for ids in _stored(tmp_path).values()) == 20


def test_close_folds_the_current_segment_while_the_background_fold_still_runs(tmp_path, sdk):
    tracer, finished = sdk
    make_spans(tracer, 40)
    spans = finished()
    writer = StoreWriter(tmp_path, wal_max_bytes=1, wal_max_age_s=3600)  # every append seals its segment
    overlapped = threading.Event()
    in_background = threading.Event()
    seen: list[tuple[str, int]] = []
    waited: list[bool] = []

    def on_fold(seconds, files):
        seen.append((threading.current_thread().name, len(files)))
        if threading.current_thread().name == "agentotel-store-fold":
            # The background fold holds here until the shutdown's fold of the next segment has published:
            # if close() waited for this one first, that never happens and the wait times out.
            in_background.set()
            waited.append(overlapped.wait(timeout=10))
        else:
            overlapped.set()

    writer.on_fold = on_fold
    writer.append(spans_to_batch(spans[:20]))  # sealed: folding in the background
    assert in_background.wait(timeout=10)
    writer.append(spans_to_batch(spans[20:]))  # the background fold still runs: this segment stays current
    writer.close()
    assert waited == [True]
    assert sorted(name for name, _ in seen) == ["MainThread", "agentotel-store-fold"]
    ids = _stored(tmp_path)["date=2026-01-01"]
    assert sorted(ids) == sorted(f"{s.context.span_id:016x}" for s in spans)  # each once
    assert len(parquet_files(tmp_path)) == 2
    assert wal.wal_files(tmp_path) == [] and read_wal(tmp_path).num_rows == 0


def test_explicit_fold_runs_beside_the_background_fold_and_publishes_both(tmp_path, sdk):
    tracer, finished = sdk
    make_spans(tracer, 30)
    spans = finished()
    writer = StoreWriter(tmp_path, wal_max_bytes=1, wal_max_age_s=3600)
    release = threading.Event()
    started = threading.Event()
    waited: list[bool] = []

    def on_fold(seconds, files):
        if threading.current_thread().name == "agentotel-store-fold":
            started.set()
            waited.append(release.wait(timeout=10))
        else:
            release.set()

    writer.on_fold = on_fold
    writer.append(spans_to_batch(spans[:10]))
    assert started.wait(timeout=10)
    writer.append(spans_to_batch(spans[10:]))
    files = writer.fold()  # returns once both segments are published
    assert len(files) == 1 and waited == [True]
    assert len(parquet_files(tmp_path)) == 2 and read_wal(tmp_path).num_rows == 0
    writer.append(spans_to_batch(spans[:5]))  # the writer goes on: a new segment after the fold
    writer.close()
    assert sum(len(ids) for ids in _stored(tmp_path).values()) == 35


def test_a_shutdown_fold_that_fails_beside_a_background_fold_keeps_its_spans_for_recovery(tmp_path, sdk):
    tracer, finished = sdk
    make_spans(tracer, 20)  # date 2026-01-01, folded in the background
    make_spans(tracer, 10, start=T0 + DAY, prefix="late")  # 2026-01-02, left for the shutdown's fold
    spans = finished()
    exporter = ParquetSpanExporter(tmp_path, wal_max_bytes=1, wal_max_age_s=3600)
    release = threading.Event()
    started = threading.Event()

    def on_fold(seconds, files):
        started.set()
        release.wait(timeout=10)

    exporter.writer.on_fold = on_fold
    exporter.export(spans[:20])
    assert started.wait(timeout=10)
    blocker = tmp_path / "spans" / "date=2026-01-02"
    blocker.write_text("a file where the partition folder should be")
    exporter.export(spans[20:])
    threading.Timer(0.2, release.set).start()
    exporter.shutdown()  # never raises: the failure is logged, the WAL kept
    assert [p.split("/")[-2] for p in parquet_files(tmp_path)] == ["date=2026-01-01"]  # the background fold finished
    assert read_wal(tmp_path).num_rows == 10  # the failed segment's spans stay durable
    blocker.unlink()
    writer = StoreWriter(tmp_path)  # the next start recovers them
    writer.close()
    stored = _stored(tmp_path)
    assert sorted(i for ids in stored.values() for i in ids) == sorted(f"{s.context.span_id:016x}" for s in spans)
    assert wal.wal_files(tmp_path) == []


_AT_EXIT = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from agentotel.store import ParquetSpanExporter

provider = TracerProvider()  # shuts down at exit (atexit): the exporter's last fold runs then
provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(sys.argv[1], wal_max_bytes=1 << 40, wal_max_age_s=3600)))
tracer = provider.get_tracer("tests.store")
for day in range(3):
    for i in range(4):
        start = {t0} + day * {day} + i * 1_000_000
        tracer.start_span(f"d{{day}}-{{i}}", start_time=start).end(end_time=start + 500)
"""


def test_a_fold_at_interpreter_exit_publishes_every_date(tmp_path):
    # At exit, a provider's atexit shutdown folds after concurrent.futures stopped taking work: the dates
    # must still be written (side by side where threads can start, else one by one), none left in the WAL.
    script = _AT_EXIT.format(t0=T0, day=DAY)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "cannot fold" not in done.stderr, done.stderr
    stored = _stored(tmp_path)
    assert sorted(stored) == ["date=2026-01-01", "date=2026-01-02", "date=2026-01-03"]
    assert sum(len(ids) for ids in stored.values()) == 12
    assert wal.wal_files(tmp_path) == []


def test_a_writers_first_segments_are_smaller_so_a_short_process_folds_while_it_runs(tmp_path, sdk):
    """Slow start: segments sealed at an eighth, a quarter, a half of wal_max_bytes, then whole; each
    span stored once, in the order of its segments, and the WAL's files gone once folded."""
    tracer, finished = sdk
    make_spans(tracer, 300)
    spans = finished()
    batches = [spans_to_batch(spans[i : i + 10]) for i in range(0, len(spans), 10)]
    per_batch = max(b.nbytes for b in batches)
    writer = StoreWriter(tmp_path, wal_max_bytes=16 * per_batch, wal_max_age_s=3600, slow_start=True)
    sealed_at = []  # the segment's bytes before the append that sealed it
    for batch in batches:
        before, pending = writer._folds_started, writer._pending_bytes
        writer.append(batch)
        if writer._folds_started != before:
            sealed_at.append(pending)
            writer._join_fold()  # a fold that is still running keeps the next segment open: wait, to see each seal
    # Each of the first three segments was sealed by the append that took it past its limit.
    limits = [2 * per_batch, 4 * per_batch, 8 * per_batch]
    assert len(sealed_at) == 3 and all(limit - per_batch <= at < limit for at, limit in zip(sealed_at, limits)), sealed_at
    assert len(parquet_files(tmp_path)) == 3  # folded before close, while the writer was still appending
    writer.close()
    stored = sorted(i for ids in _stored(tmp_path).values() for i in ids)
    assert stored == sorted(f"{s.context.span_id:016x}" for s in spans)
    assert wal.wal_files(tmp_path) == []


def test_a_fold_writes_each_trace_together_traces_in_the_order_they_started(tmp_path, sdk):
    """Interleaved traces (runs that overlap in time) are stored as blocks, as a compaction stores them: a
    trace's spans, which share their agent's text, compress as neighbours."""
    from opentelemetry import trace

    tracer, finished = sdk
    late = tracer.start_span("late-root", start_time=T0 + 10)  # the first trace id, started second
    early = tracer.start_span("early-root", start_time=T0)
    for i in range(3):
        for root, label in ((late, "late"), (early, "early")):
            child = tracer.start_span(f"{label}-{i}", context=trace.set_span_in_context(root), start_time=T0 + 20 + 2 * i)
            child.end(end_time=T0 + 100)
    early.end(end_time=T0 + 200)
    late.end(end_time=T0 + 200)
    (path,) = fold_batches(tmp_path, "seg", [spans_to_batch(finished())])
    names = pq.read_table(path, columns=["name"]).column(0).to_pylist()
    assert names == ["early-root", "early-0", "early-1", "early-2", "late-root", "late-0", "late-1", "late-2"]
    assert pq.read_metadata(path).row_group(0).sorting_columns == ()  # no stored column holds this order
