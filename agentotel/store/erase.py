"""Retention and erasure: drop whole date partitions past a window, or one user's, session's or run's rows.

Both work under the compaction lock (no compaction runs meanwhile) and leave every file either as it was
or replaced whole: a file that loses rows is rewritten beside itself (dot-prefixed temp, fsync) and
renamed over the old one, so a reader sees the old file or the new one, never a part of either; a file
that loses every row is unlinked. Copies a compaction retired to `.replaced/` are erased alike, and the
readers' index of run roots (`.index/`, a cache) is dropped so no erased run is listed from it.

The write-ahead log: a dead writer's segments are folded into Parquet first (as `compact` does) and so
erased with the rest. A live writer's segment cannot be rewritten under it; rows there are counted
(`wal_rows_pending`) and left for that writer to fold: run `forget` again once it has (within
`AGENTOTEL_WAL_MAX_AGE_S`, 60 s by default, or at its exit).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
from pathlib import Path
from typing import Any, Mapping

import pyarrow.compute as pc
import pyarrow.parquet as pq

from agentotel.store import fs, wal
from agentotel.store.writer import KEPT_ORDER, SPANS_DIR, publish, recover

REPLACED_DIR = ".replaced"
INDEX_DIR = ".index"
_ERASABLE = {"user": "user_id", "session": "session_id", "run": "run_id"}


class EraseError(ValueError):
    """A forget or retention request that cannot be carried out as asked."""


def _locked(directory: Path) -> Any:
    spans = directory / SPANS_DIR
    spans.mkdir(parents=True, exist_ok=True)
    lock = open(spans / ".compact.lock", "a+")  # noqa: SIM115 - held until the caller closes it
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    return lock


def _partition_day(path: Path) -> dt.date | None:
    try:
        return dt.date.fromisoformat(path.name.removeprefix("date="))
    except ValueError:
        return None


def drop_older_than(directory: str | os.PathLike[str], days: int, *, today: dt.date | None = None) -> dict[str, Any]:
    """Delete every date partition more than `days` days old (UTC dates: with days=30 on 2026-12-31, the
    partitions before 2026-12-01 go); returns the partitions dropped, and their files and bytes."""
    if days < 1:
        raise EraseError(f"a retention of {days} days would drop today's spans: give 1 day or more")
    if fs.is_remote(directory):  # on this machine's mirror, under the store's lease; then the bucket follows
        with fs.maintenance(directory) as local:
            return drop_older_than(local, days, today=today)
    directory = Path(directory)
    cutoff = (today or dt.datetime.now(dt.timezone.utc).date()) - dt.timedelta(days=days - 1)
    stats: dict[str, Any] = {"cutoff": cutoff.isoformat(), "partitions": [], "files": 0, "bytes": 0}
    with _locked(directory):
        trash = directory / f".dropping-{os.getpid()}"
        for area in (directory / SPANS_DIR, directory / REPLACED_DIR):
            for partition in sorted(area.glob("date=*")):
                day = _partition_day(partition)
                if day is None or day >= cutoff or not partition.is_dir():
                    continue
                files = [p for p in partition.rglob("*") if p.is_file()]
                stats["files"] += len(files)
                stats["bytes"] += sum(p.stat().st_size for p in files)
                if area.name == SPANS_DIR:
                    stats["partitions"].append(partition.name)
                # One rename takes the whole partition out of every reader's glob at once.
                trash.mkdir(exist_ok=True)
                os.rename(partition, trash / f"{area.name}-{partition.name}")
                wal.fsync_dir(area)
        shutil.rmtree(trash, ignore_errors=True)
        if stats["partitions"]:
            shutil.rmtree(directory / INDEX_DIR, ignore_errors=True)
    return stats


def forget(directory: str | os.PathLike[str], *, user: str | None = None, session: str | None = None,
           run: str | None = None) -> dict[str, Any]:
    """Erase every span of a user, a session or a run (exactly one) from the store; returns what went:
    rows, files rewritten and removed, and the rows still pending in a live writer's WAL."""
    chosen = {k: v for k, v in {"user": user, "session": session, "run": run}.items() if v is not None}
    if len(chosen) != 1 or not next(iter(chosen.values())):
        raise EraseError("name exactly one of --user, --session or --run, with a value")
    (key, value), = chosen.items()
    if fs.is_remote(directory):  # on this machine's mirror, under the store's lease; then the bucket follows
        with fs.maintenance(directory) as local:
            return forget(local, **chosen)
    column = _ERASABLE[key]
    directory = Path(directory)
    stats: dict[str, Any] = {column: value, "rows": 0, "files_rewritten": 0, "files_removed": 0,
                             "wal_spans_folded": 0, "wal_rows_pending": 0}
    stores = [directory] + ([directory / "replays"] if (directory / "replays" / SPANS_DIR).is_dir() else [])
    for store in stores:
        stats["wal_spans_folded"] += recover(store)  # dead writers' logs become Parquet, erased below
        with _locked(store):
            for area in (store / SPANS_DIR, store / REPLACED_DIR):
                for path in sorted(area.rglob("*.parquet")):
                    if not path.name.startswith("."):
                        _erase_in(path, column, value, stats)
            shutil.rmtree(store / INDEX_DIR, ignore_errors=True)
        for path in wal.wal_files(store):  # live writers' segments: counted, not touched
            for batch in wal.read_file(path).batches:
                if column in batch.schema.names:
                    stats["wal_rows_pending"] += pc.sum(pc.equal(batch.column(column), value)).as_py() or 0
    return stats


def _erase_in(path: Path, column: str, value: str, stats: dict[str, Any]) -> None:
    parquet = pq.ParquetFile(path)
    if column not in parquet.schema_arrow.names:
        return
    matches = pc.sum(pc.equal(parquet.read(columns=[column]).column(column), value)).as_py() or 0
    if not matches:
        return
    table = parquet.read()
    metadata: Mapping[bytes, bytes] = parquet.schema_arrow.metadata or {}
    kept = table.filter(pc.invert(pc.fill_null(pc.equal(table.column(column), value), False)))
    stats["rows"] += table.num_rows - kept.num_rows
    if kept.num_rows == 0:
        path.unlink()
        wal.fsync_dir(path.parent)
        stats["files_removed"] += 1
        return
    # The rows keep their order: by trace (writer.by_trace_start), or by start time in a file folded before folds
    # wrote that order.
    publish(kept, path.parent, path.name, sort_by=KEPT_ORDER, extra=dict(metadata))  # renamed over the old file
    stats["files_rewritten"] += 1

