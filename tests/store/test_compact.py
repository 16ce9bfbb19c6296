"""compact(): fewer, larger files, one copy of each span, and readers that never see a span twice or miss one."""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from agentotel.store import StoreWriter, compact, parquet_files, spans_to_batch
from agentotel.store.writer import replaces
from tests.store.conftest import T0, make_spans

DAY_NS = 86_400 * 10**9


def _fill(directory, batches):
    """One folded Parquet file per batch, as many short-lived processes would leave."""
    for batch in batches:
        writer = StoreWriter(directory)
        writer.append(batch)
        writer.close()


def _spans(sdk, count, **kwargs):
    tracer, finished = sdk
    make_spans(tracer, count, **kwargs)
    return finished()


def test_compact_merges_sorts_and_drops_duplicates(tmp_path, sdk):
    spans = _spans(sdk, 40)
    batches = [spans_to_batch(spans[i : i + 10]) for i in range(0, 40, 10)]
    _fill(tmp_path, batches + [batches[0]])  # the first batch arrives twice (a retried export)
    assert len(parquet_files(tmp_path)) == 5

    stats = compact(tmp_path)

    assert stats["files_before"] == 5 and stats["files_after"] == 1
    assert stats["rows_before"] == 50 and stats["rows_after"] == 40 and stats["duplicates_dropped"] == 10
    (merged,) = parquet_files(tmp_path)
    table = pq.read_table(merged)
    keys = list(zip(table.column("start_time").cast(pa.int64()).to_pylist(), table.column("trace_id").to_pylist()))
    assert keys == sorted(keys)  # one span per trace here: traces in the order they started
    assert sorted(table.column("span_id").to_pylist()) == sorted(s for b in batches for s in b.column("span_id").to_pylist())
    assert len(replaces(merged)) == 5
    assert compact(tmp_path)["files_after"] == 1  # nothing left to do


def test_compact_keeps_each_trace_together_traces_in_the_order_they_started(tmp_path, sdk):
    """Concurrent runs whose steps interleave in time, trace ids in the opposite order of their starts: the
    merged file holds each trace as one block (its spans by start time), the blocks in start order. A run's
    neighbours in time are its neighbours in the file (what `check` reads as a run's history)."""
    from opentelemetry import trace

    tracer, finished = sdk
    runs = 6
    # Created last-first: the counting id generator gives the latest run the smallest trace id.
    roots = {r: tracer.start_span(f"run-{r}", start_time=T0 + r * 1_000_000) for r in reversed(range(runs))}
    for step in range(5):
        for r in range(runs):
            child = tracer.start_span(f"step-{r}-{step}", context=trace.set_span_in_context(roots[r]),
                                      start_time=T0 + 10_000_000 + step * 1_000_000 + r * 1_000)
            child.end(end_time=T0 + 10_000_000 + step * 1_000_000 + r * 1_000 + 500)
    for root in roots.values():
        root.end(end_time=T0 + 100_000_000)
    spans = finished()
    _fill(tmp_path, [spans_to_batch(spans[i : i + 7]) for i in range(0, len(spans), 7)])

    compact(tmp_path)

    (merged,) = parquet_files(tmp_path)
    table = pq.read_table(merged)
    traces = table.column("trace_id").to_pylist()
    starts = table.column("start_time").cast(pa.int64()).to_pylist()
    blocks = [t for i, t in enumerate(traces) if i == 0 or traces[i - 1] != t]
    assert len(blocks) == len(set(traces)) == runs  # each trace one block
    assert blocks == sorted(blocks, reverse=True)  # not trace-id order: the latest run has the smallest id
    first = {t: min(s for u, s in zip(traces, starts) if u == t) for t in blocks}
    assert [first[t] for t in blocks] == sorted(first.values())
    for t in blocks:
        own = [s for u, s in zip(traces, starts) if u == t]
        assert own == sorted(own) and len(own) == 6
    assert pq.read_metadata(merged).row_group(0).sorting_columns == ()  # no stored column holds this order


def test_compact_keeps_partitions_apart(tmp_path, sdk):
    tracer, finished = sdk
    make_spans(tracer, 6, start=T0)
    make_spans(tracer, 6, start=T0 + DAY_NS, prefix="next-day")
    spans = finished()
    _fill(tmp_path, [spans_to_batch(spans[i : i + 3]) for i in range(0, 12, 3)])
    stats = compact(tmp_path)
    assert stats["partitions"] == 2 and stats["files_after"] == 2
    days = sorted(p.split("/spans/")[1].split("/")[0] for p in parquet_files(tmp_path))
    assert days == ["date=2026-01-01", "date=2026-01-02"]


def test_leftover_inputs_after_a_crash_are_hidden_then_removed(tmp_path, sdk):
    spans = _spans(sdk, 20)
    _fill(tmp_path, [spans_to_batch(spans[:10]), spans_to_batch(spans[10:])])
    inputs = parquet_files(tmp_path)
    saved = {p: open(p, "rb").read() for p in inputs}
    compact(tmp_path)
    for path, data in saved.items():  # as if the process died between publishing and unlinking
        open(path, "wb").write(data)
    assert len(parquet_files(tmp_path)) == 1  # the merged file supersedes them for readers
    assert compact(tmp_path)["leftovers_removed"] == 0  # their merged file is younger than the grace period
    assert compact(tmp_path, grace_s=0)["leftovers_removed"] == 2
    assert len(list((tmp_path / "spans").glob("date=*/*.parquet"))) == 1


def test_a_concurrent_reader_never_sees_a_span_twice_or_misses_one(tmp_path, sdk):
    spans = _spans(sdk, 300)
    expected = 300
    _fill(tmp_path, [spans_to_batch(spans[i : i + 10]) for i in range(0, 300, 10)])
    results: list[tuple[int, int]] = []
    retries = 0
    stop = threading.Event()

    def reader():
        nonlocal retries
        con = duckdb.connect()
        while not stop.is_set():
            try:
                files = parquet_files(tmp_path)
                rows = con.execute("select count(*), count(distinct span_id) from read_parquet(?)", [files]).fetchone()
            except (duckdb.IOException, duckdb.InvalidInputException):
                retries += 1  # a listed input was unlinked before it was opened: list again
                continue
            results.append(rows)

    listings: list[int] = []

    def lister():
        # Cheap and fast: many snapshots, so the instant between publish and unlink is likely hit.
        while not stop.is_set():
            try:
                listings.append(sum(pq.read_metadata(f).num_rows for f in parquet_files(tmp_path)))
            except FileNotFoundError:
                continue

    threads = [threading.Thread(target=reader), threading.Thread(target=lister)]
    for thread in threads:
        thread.start()
    try:
        # Two rounds: small merged files first, then those merged again (supersession is transitive).
        compact(tmp_path, target_bytes=40_000)
        assert len(parquet_files(tmp_path)) > 1
        compact(tmp_path)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert results, "the reader never completed a read"
    assert all(r == (expected, expected) for r in results), {r for r in results if r != (expected, expected)}
    assert listings and set(listings) == {expected}
    assert len(parquet_files(tmp_path)) == 1


def test_compact_folds_wal_files_of_dead_writers_but_not_live_ones(tmp_path, sdk):
    spans = _spans(sdk, 20)
    live = StoreWriter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    live.append(spans_to_batch(spans[:10]))
    dead = StoreWriter(tmp_path / "elsewhere", wal_max_bytes=1 << 30, wal_max_age_s=3600)
    dead.append(spans_to_batch(spans[10:]))
    (tmp_path / "wal" / "dead.arrows").write_bytes(dead.wal_path.read_bytes())
    dead.close()
    stats = compact(tmp_path)
    assert stats["wal_spans_recovered"] == 10
    assert sum(pq.read_metadata(f).num_rows for f in parquet_files(tmp_path)) == 10
    assert live.wal_path.exists()
    live.close()
    assert sum(pq.read_metadata(f).num_rows for f in parquet_files(tmp_path)) == 20
