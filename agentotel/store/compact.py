"""`compact()`: merge a partition's small Parquet files into larger ones, one copy of each span.

How readers stay correct while it runs. A merged file `c-<...>.parquet` is published atomically
(temp, fsync, rename) and names every file it supersedes in its key-value metadata
(`agentotel.replaces`, transitively). Right after it is durable, its inputs are *retired*: renamed
(atomically, same file system) out of `spans/` to `<dir>/.replaced/date=.../<name>.parquet`, where no
glob over `spans/` sees them, and deleted by a later `compact()` once retired for `grace_s` (60 s).

- A plain glob (`read_parquet('spans/**/*.parquet')`) sees each span once: the inputs leave `spans/`
  microseconds after the merged file arrives (the order is explained in `_compact_partition`).
- `agentotel.store.parquet_files()` (what the query side lists) also drops every file a listed
  merged file supersedes, so even in those microseconds, or after a crash between the two steps, it
  returns the inputs or the merged file, never both and never neither.
- A reader that listed the inputs before the merge (an open `Traces`, a query in flight) can still
  read them during the grace period: `Traces` binds each file as the pattern `<dir>/*/date=.../<name>`,
  which matches the file in `spans/` or, once retired, in `.replaced/` (one rename moves it: it is in
  one of them at any instant), and it takes a new snapshot when one of its files has left `spans/`.

A crash between publishing and retiring leaves superseded inputs in `spans/`: the next `compact()`
(and `agentotel.open()`, when it may write there) retires them first (`retire_superseded`).
One compaction at a time per store (an flock on `spans/.compact.lock`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from agentotel.store import fs, integrity, wal
from agentotel.store.messages import borrow_outputs, chain_table
from agentotel.store.schema import SCHEMA_VERSION, SPAN_SCHEMA, STORAGE_COLUMNS, file_version, not_spans, upgrade
from agentotel.store.writer import (COMPACT_PAYLOAD_LEVEL, KEPT_ORDER, REPLACES_KEY, SPANS_DIR, by_trace_start, parquet_files,
                                    publish, recover, replaces)

SMALL_BYTES = 32 * 1024 * 1024  # files below this size on disk are merged
# Inputs per merged file, at most, counted uncompressed: a merge holds them in memory, and agent
# payloads compress 10-20x, so on-disk sizes would badly understate it.
TARGET_BYTES = 512 * 1024 * 1024
GRACE_S = 60.0  # how long retired inputs stay readable for readers that listed them before a merge
REPLACED_DIR = ".replaced"  # <dir>/.replaced/date=.../<name>: retired inputs, outside any glob over spans/
_STALE_TEMP_S = 3600  # a writer's temp file older than this belongs to a process that died mid-write


def compact(
    directory: str | os.PathLike[str], *, small_bytes: int = SMALL_BYTES, target_bytes: int = TARGET_BYTES,
    grace_s: float = GRACE_S,
) -> dict[str, Any]:
    """Merge each partition's small Parquet files, each trace's spans together (traces in the order they
    started, see `writer.by_trace_start`), without duplicate spans.

    `small_bytes`: files smaller than this on disk are merged; `target_bytes`: the most input (counted
    uncompressed, as it is held in memory) one merged file takes; `grace_s`: superseded files leave
    `spans/` at once and are deleted once retired this long (by this call when it is 0, else by a later one).

    Returns statistics: partitions, files_before, files_after, rows_before, rows_after,
    duplicates_dropped, bytes_before, bytes_after, leftovers_removed (retired files and stale temp
    files deleted), wal_spans_recovered (spans of dead writers' WAL files folded into Parquet first;
    live writers' WALs are left alone).

    `directory` may be an object-storage URI: the merge runs on this machine's mirror of it, under the
    store's lease, and its files are uploaded before the ones they replace are deleted (store/fs.py).
    """
    if fs.is_remote(directory):
        with fs.maintenance(directory, grace_s=grace_s) as local:
            return compact(local, small_bytes=small_bytes, target_bytes=target_bytes, grace_s=grace_s)
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
        stats["leftovers_removed"] += _remove_retired(Path(directory), grace_s)
        for partition in sorted(p for p in spans.glob("date=*") if p.is_dir()):
            stats["leftovers_removed"] += _remove_stale_temps(partition)
            _retire_leftovers(partition)  # a crash between publishing and retiring, at any earlier compaction
            _compact_partition(partition, stats, small_bytes, target_bytes)
        if grace_s <= 0:
            stats["leftovers_removed"] += _remove_retired(Path(directory), 0)
    return stats


def retire_superseded(directory: str | os.PathLike[str]) -> int:
    """Retire the files a merged file supersedes that are still in `spans/` (a compaction crashed between
    publishing and retiring); returns how many. Safe while a compaction runs, and without its lock: a
    merged file is durable before it is visible, so its inputs may leave `spans/` at any time.
    """
    spans = Path(directory) / SPANS_DIR
    return sum(_retire_leftovers(partition) for partition in sorted(spans.glob("date=*")) if partition.is_dir())


def _compact_partition(partition: Path, stats: dict[str, Any], small_bytes: int, target_bytes: int) -> None:
    listed = [Path(p) for p in parquet_files(partition.parent.parent) if Path(p).parent == partition]
    stats["partitions"] += 1
    stats["files_before"] += len(listed)
    stats["bytes_before"] += sum(p.stat().st_size for p in listed)
    versions = {p: _version(p) for p in listed}
    # What compaction cannot read as spans (an unreadable footer, another tool's table, a newer schema's
    # file) stays as it is, untouched: readers skip it with a warning naming it, and merging it would drop
    # it, or the columns this agentotel does not know.
    left = [p for p in listed if versions[p] is None]
    stats["files_after"] += len(left)
    stats["bytes_after"] += sum(p.stat().st_size for p in left)
    files = [p for p in listed if versions[p] is not None]
    sizes = {p: p.stat().st_size for p in files}
    # A file of an older schema version is rewritten whatever its size: that brings its rows up to date.
    old = {p: versions[p] for p in files if versions[p] < SCHEMA_VERSION}  # file -> its version
    small = [p for p in files if sizes[p] < small_bytes or p in old]
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
        if len(group) < 2 and not _has_duplicates(group) and group[0] not in old:
            rows = pq.read_metadata(group[0]).num_rows
            stats["rows_before"] += rows
            stats["rows_after"] += rows
            out.extend(group)
            continue
        tables = _read_whole(partition, group, old)
        if not tables:
            continue
        table = pa.concat_tables(tables)
        unique = _drop_duplicates(table)
        if any(p in old for p in group):
            unique = _store_conversations_once(unique, _from_old_files(tables, group, old))
            unique = borrow_outputs(unique, _from_old_files(tables, group, old, below=SCHEMA_VERSION, since=3))
        stats["rows_before"] += table.num_rows
        stats["rows_after"] += unique.num_rows
        stats["duplicates_dropped"] += table.num_rows - unique.num_rows
        superseded = sorted({p.name for p in group} | {name for p in group for name in replaces(p)})
        name = f"c-{time.time_ns() // 1_000_000:013d}-{uuid.uuid4().hex[:12]}.parquet"
        merged = publish(
            by_trace_start(unique),
            partition,
            name,
            sort_by=KEPT_ORDER,
            extra={REPLACES_KEY: json.dumps(superseded).encode()},
            payload_level=COMPACT_PAYLOAD_LEVEL,  # rewritten once, off the export path: fewer bytes for more CPU
        )
        # Publish first, retire second. The merged file is durable and visible, and it names its
        # inputs, so from here on `parquet_files()` no longer lists them; now they leave `spans/` too.
        # In between (microseconds, or until the next compact()/open() after a crash here) a plain glob
        # sees a span twice. The other order would make it see the spans zero times in between, and a
        # crash there would hide accepted spans from every reader until a recovery: a transient double
        # (which agentotel's views collapse) is the lesser fault, and nothing is ever lost either way.
        _retire(partition, superseded, merged)
        out.append(merged)
    stats["files_after"] += len(out)
    stats["bytes_after"] += sum(p.stat().st_size for p in out)


def _version(path: Path) -> int | None:
    """The file's schema version; None for a file compaction leaves alone (see `_compact_partition`)."""
    try:
        file_schema = pq.read_schema(path)
        version = file_version(file_schema.metadata)
    except (ValueError, OSError, pa.ArrowException):
        return None
    return None if version > SCHEMA_VERSION or not_spans(file_schema.names) else version


def _read_whole(partition: Path, group: list[Path], old: dict[Path, int]) -> list[pa.Table]:
    """The group's tables, every page checked, files of an older schema upgraded: a damaged input is set
    aside (see integrity.py) and the group merged without it. Merging it would give its damage fresh,
    valid checksums."""
    tables = []
    for path in list(group):
        try:
            if path in old:
                tables.append(upgrade(pq.read_table(path, page_checksum_verification=True), old[path]))
            else:
                tables.append(pq.read_table(path, schema=SPAN_SCHEMA, page_checksum_verification=True))
        except (OSError, pa.ArrowException) as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            integrity.quarantine(partition.parent.parent, path, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            group.remove(path)
    return tables


def _has_duplicates(group: list[Path]) -> bool:
    if not group:
        return False
    table = pq.read_table(group[0], columns=["trace_id", "span_id"])
    return table.group_by(["trace_id", "span_id"]).aggregate([]).num_rows != table.num_rows


def _drop_duplicates(table: pa.Table) -> pa.Table:
    """The first row of each (trace_id, span_id), stored alike: two copies of a model call stored
    differently (whole by one writer, as a continuation by another) may each be the base of later rows,
    so both stay (store/messages.py); the views count the span once."""
    keys = ["trace_id", "span_id", *STORAGE_COLUMNS[:2]]
    indexed = table.append_column("__row", pa.array(range(table.num_rows), type=pa.int64()))
    first = indexed.group_by(keys, use_threads=False).aggregate([("__row", "min")])
    return table.take(pa.array(sorted(first.column("__row_min").to_pylist()), type=pa.int64()))


def _from_old_files(tables: list[pa.Table], group: list[Path], old: dict[Path, int], *, below: int = 3, since: int = 0) -> set[tuple[str, str]]:
    """(trace_id, span_id) of the rows read from files of schema versions [since, below): by default those
    written before conversations were stored once (version 2 and older: every input whole). Version 3 and 4
    rows are the current form already but for what they could borrow (borrow_outputs); later rows may
    refer to them."""
    found: set[tuple[str, str]] = set()
    for path, table in zip(group, tables):  # _read_whole keeps `group` and its tables in step
        if path in old and since <= old[path] < below:
            found.update(zip(table.column("trace_id").to_pylist(), table.column("span_id").to_pylist()))
    return found


def _store_conversations_once(table: pa.Table, older: set[tuple[str, str]]) -> pa.Table:
    """`table` with the rows of files written before conversations were stored once (`older`: every input
    whole) stored once (store/messages.py). Rows the current writer stored stay as they are: later rows,
    in other files or a live WAL, may refer to them."""
    traces, spans = table.column("trace_id").to_pylist(), table.column("span_id").to_pylist()
    chains = table.column(STORAGE_COLUMNS[0]).to_pylist()
    # A row that is or starts a conversation stays as it is whatever file it came from (a store another
    # tool rewrote without agentotel's version, say): re-encoding a base would break its continuations.
    referred = {(t, c) for t, c in zip(traces, chains) if c is not None}
    mask = pa.array([(t, s) in older and c is None and (t, s) not in referred for t, s, c in zip(traces, spans, chains)])
    if not pc.any(mask).as_py():
        return table
    return pa.concat_tables([chain_table(table.filter(mask)), table.filter(pc.invert(mask))])


def _retired_folder(partition: Path) -> Path:
    return partition.parent.parent / REPLACED_DIR / partition.name


def _retire(partition: Path, names: list[str], merged: Path) -> int:
    """Move the files `names` that are still in `partition` to `.replaced/` (one atomic rename each)."""
    present = [name for name in names if name != merged.name and (partition / name).exists()]
    if not present:
        return 0
    target = _retired_folder(partition)
    if not target.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        wal.fsync_dir(target.parent.parent)
        wal.fsync_dir(target.parent)
    moved = 0
    for name in present:
        try:
            os.rename(partition / name, target / name)
        except FileNotFoundError:  # retired meanwhile by a reader's recovery (`retire_superseded`)
            continue
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # `.replaced` on another file system (a mount inside the store): no grace, but one copy.
            (partition / name).unlink(missing_ok=True)
        moved += 1
    if moved:
        wal.fsync_dir(target)
        wal.fsync_dir(partition)
    return moved


def _retire_leftovers(partition: Path) -> int:
    """Retire the inputs of merged files in `partition` that are still there (a crash between the two steps)."""
    published = {p.name for p in partition.glob("*.parquet") if not p.name.startswith(".")}
    retired = 0
    for merged in sorted(partition / name for name in published if name.startswith("c-")):
        names = [name for name in replaces(merged) if name in published]
        if names:
            retired += _retire(partition, names, merged)
    return retired


def _remove_retired(directory: Path, grace_s: float) -> int:
    """Delete retired files retired at least `grace_s` ago (a rename sets a file's ctime: when it was retired)."""
    removed = 0
    now = time.time()
    for folder in sorted((directory / REPLACED_DIR).glob("date=*")):
        gone = 0
        for path in folder.iterdir():
            try:
                if now - path.stat().st_ctime < grace_s:
                    continue
                path.unlink()
                gone += 1
            except FileNotFoundError:
                pass
        if gone:
            wal.fsync_dir(folder)
        removed += gone
    return removed


def _remove_stale_temps(partition: Path) -> int:
    """Delete temp files of writers that died mid-write."""
    removed = 0
    now = time.time()
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
