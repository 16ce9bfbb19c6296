"""`compact()`: merge a partition's small Parquet files into larger ones, one copy of each span.

How readers stay correct while it runs. A merged file `c-<...>.parquet` is published atomically
(temp, fsync, rename) and names every file it supersedes in its key-value metadata
(`agentotel.replaces`, transitively). Only after it is durable are the inputs unlinked. So:

- `agentotel.store.parquet_files()` (what the query side reads) lists the folder and drops every
  file a listed merged file supersedes: it returns either the inputs or the merged file, never both,
  and never neither — the merged file appears before the inputs disappear.
- The inputs are not unlinked at once: a later `compact()` removes them once their merged file is
  `grace_s` old (default 60 s). A reader holding a snapshot of the inputs (an open `Traces`, a
  DuckDB query already planned over them) keeps reading them meanwhile; `Traces` takes a new snapshot
  when one of its files is gone. A reader that still finds a file gone lists again and retries (the
  query side does this), so no span is missed silently.
- A plain glob (`read_parquet('spans/**/*.parquet')`) can, until the inputs are removed, see a span
  twice; the `spans` view collapses duplicate (trace_id, span_id) anyway. `compact(grace_s=0)`
  removes them at once.

A crash between publishing and unlinking leaves superseded inputs behind too, removed the same way.
One compaction at a time per store (an flock on `spans/.compact.lock`).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from agentotel.store import wal
from agentotel.store.schema import SPAN_SCHEMA
from agentotel.store.writer import REPLACES_KEY, SPANS_DIR, parquet_files, publish, recover, replaces

SMALL_BYTES = 32 * 1024 * 1024  # files below this size on disk are merged
# Inputs per merged file, at most, counted uncompressed: a merge holds them in memory, and agent
# payloads compress 10-20x, so on-disk sizes would badly understate it.
TARGET_BYTES = 512 * 1024 * 1024
GRACE_S = 60.0  # how long superseded inputs stay readable for readers that listed them before a merge
_STALE_TEMP_S = 3600  # a writer's temp file older than this belongs to a process that died mid-write


def compact(
    directory: str | os.PathLike[str], *, small_bytes: int = SMALL_BYTES, target_bytes: int = TARGET_BYTES,
    grace_s: float = GRACE_S,
) -> dict[str, Any]:
    """Merge each partition's small Parquet files, sorted by (trace_id, start_time), without duplicate spans.

    `small_bytes`: files smaller than this on disk are merged; `target_bytes`: the most input (counted
    uncompressed, as it is held in memory) one merged file takes; `grace_s`: superseded files are
    removed once their merged file is this old (by this call when it is 0, else by a later one).

    Returns statistics: partitions, files_before, files_after, rows_before, rows_after,
    duplicates_dropped, bytes_before, bytes_after, leftovers_removed, wal_spans_recovered (spans of
    dead writers' WAL files folded into Parquet first; live writers' WALs are left alone).
    """
    spans = Path(directory) / SPANS_DIR
    stats = dict.fromkeys(
        ["partitions", "files_before", "files_after", "rows_before", "rows_after", "duplicates_dropped", "bytes_before", "bytes_after", "leftovers_removed", "wal_spans_recovered"],
        0,
    )
    # Spans a crashed process left in its WAL become Parquet first, so they are compacted too.
    stats["wal_spans_recovered"] = recover(directory)
    if not spans.is_dir():
        return stats
    with open(spans / ".compact.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        for partition in sorted(p for p in spans.glob("date=*") if p.is_dir()):
            _compact_partition(partition, stats, small_bytes, target_bytes, grace_s)
            if grace_s <= 0:
                stats["leftovers_removed"] += _remove_leftovers(partition, 0)
    return stats


def _compact_partition(partition: Path, stats: dict[str, Any], small_bytes: int, target_bytes: int, grace_s: float) -> None:
    stats["leftovers_removed"] += _remove_leftovers(partition, grace_s)
    files = [Path(p) for p in parquet_files(partition.parent.parent) if Path(p).parent == partition]
    stats["partitions"] += 1
    stats["files_before"] += len(files)
    sizes = {p: p.stat().st_size for p in files}
    stats["bytes_before"] += sum(sizes.values())
    small = [p for p in files if sizes[p] < small_bytes]
    groups: list[list[Path]] = []
    group_bytes = 0
    for path in small:
        metadata = pq.read_metadata(path)
        in_memory = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
        if not groups or group_bytes + in_memory > target_bytes:
            groups.append([])
            group_bytes = 0
        groups[-1].append(path)
        group_bytes += in_memory
    kept = [p for p in files if p not in small]
    rows_kept = sum(pq.read_metadata(p).num_rows for p in kept)
    stats["rows_before"] += rows_kept
    stats["rows_after"] += rows_kept
    out = list(kept)
    for group in groups:
        if len(group) < 2 and not _has_duplicates(group):
            rows = pq.read_metadata(group[0]).num_rows
            stats["rows_before"] += rows
            stats["rows_after"] += rows
            out.extend(group)
            continue
        table = pa.concat_tables([pq.read_table(p, schema=SPAN_SCHEMA) for p in group])
        unique = _drop_duplicates(table)
        stats["rows_before"] += table.num_rows
        stats["rows_after"] += unique.num_rows
        stats["duplicates_dropped"] += table.num_rows - unique.num_rows
        superseded = sorted({p.name for p in group} | {name for p in group for name in replaces(p)})
        name = f"c-{time.time_ns() // 1_000_000:013d}-{uuid.uuid4().hex[:12]}.parquet"
        merged = publish(
            unique,
            partition,
            name,
            sort_by=[("trace_id", "ascending"), ("start_time", "ascending")],
            extra={REPLACES_KEY: json.dumps(superseded).encode()},
        )
        # The merged file is durable and visible, and it names its inputs: from now on no listing
        # returns them, and they are removed after the grace period (`_remove_leftovers`).
        out.append(merged)
    stats["files_after"] += len(out)
    stats["bytes_after"] += sum(p.stat().st_size for p in out)


def _has_duplicates(group: list[Path]) -> bool:
    if not group:
        return False
    table = pq.read_table(group[0], columns=["trace_id", "span_id"])
    return table.group_by(["trace_id", "span_id"]).aggregate([]).num_rows != table.num_rows


def _drop_duplicates(table: pa.Table) -> pa.Table:
    """The first row of each (trace_id, span_id)."""
    indexed = table.append_column("__row", pa.array(range(table.num_rows), type=pa.int64()))
    first = indexed.group_by(["trace_id", "span_id"], use_threads=False).aggregate([("__row", "min")])
    return table.take(pa.array(sorted(first.column("__row_min").to_pylist()), type=pa.int64()))


def _remove_leftovers(partition: Path, grace_s: float) -> int:
    """Delete inputs a merged file at least `grace_s` old supersedes, and stale temp files."""
    removed = 0
    now = time.time()
    for merged in partition.glob("c-*.parquet"):
        try:
            if now - merged.stat().st_mtime < grace_s:
                continue
        except FileNotFoundError:
            continue
        for name in replaces(merged):
            path = partition / name
            if path != merged and path.exists():
                path.unlink(missing_ok=True)
                removed += 1
    for temp in partition.glob(".*.tmp"):
        try:
            if now - temp.stat().st_mtime > _STALE_TEMP_S:
                temp.unlink()
                removed += 1
        except FileNotFoundError:
            pass
    if removed:
        wal.fsync_dir(partition)
    return removed
