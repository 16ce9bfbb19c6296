"""What a query reads: the store's Parquet files (validated), the WAL's complete batches, migrated files.

Validating a file means reading its footer with pyarrow; the answer is cached by (path, size, mtime),
so opening a large store a second time costs one `stat` per file. A file that cannot be read is left
out with a warning naming it, so one damaged file never hides every other run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from agentotel import store
from agentotel.store import integrity, schema

_CURRENT = "current"
_MIGRATE = "migrate"
_SKIP = "skip"
_AS_IS = "as_is"  # an older version DuckDB reads as it is: it lacks only columns whose NULL means what it did


@dataclass(frozen=True)
class _Verdict:
    kind: str  # current | as_is | migrate | skip
    version: int | None = None
    reason: str | None = None
    columns_but_dialect: bool = False  # a file DuckDB can read as it is, but for the column version 2 added
    starts: tuple[int, int] | None = None  # its spans' earliest and latest start_time (ns), when its footer says


@dataclass
class Sources:
    """The readable parts of one store directory."""

    parquet: list[str] = field(default_factory=list)  # files in the current schema, read by DuckDB directly
    older: list[str] = field(default_factory=list)  # files of older schemas read as they are (below), by column name
    migrated: pa.Table | None = None  # older files, upgraded in memory
    wal: pa.Table | None = None
    warnings: list[str] = field(default_factory=list)
    starts: dict[str, tuple[int, int]] = field(default_factory=dict)  # Parquet file -> (first, last) span start, ns

    def files_starting_within(self, first_ns: int, last_ns: int) -> list[str]:
        """The Parquet files (current and older) that may hold a span starting in [first_ns, last_ns]:
        those whose footer statistics overlap it, and any whose footer has none."""
        def overlaps(path: str) -> bool:
            span = self.starts.get(path)
            return span is None or (span[0] <= last_ns and span[1] >= first_ns)

        return [f for f in self.parquet + self.older if overlaps(f)]

    @property
    def empty(self) -> bool:
        return not self.parquet and not self.older and not (self.migrated and self.migrated.num_rows) and not (
            self.wal and self.wal.num_rows
        )


_cache: dict[tuple[str, int, int], _Verdict] = {}
_cache_lock = threading.Lock()


def _conform(table: pa.Table) -> pa.Table:
    return schema.conform(table)


def _from_unversioned(table: pa.Table) -> pa.Table:
    # Version 0: a span table without agentotel's version metadata, e.g. rewritten by another tool
    # (Spark, pandas) that dropped key-value metadata. Its columns are matched by name.
    return _conform(table)


MIGRATIONS: dict[int, Callable[[pa.Table], pa.Table]] = {
    0: _from_unversioned,
    1: lambda table: schema.upgrade(table, 1),  # the dialect column, and other instrumentations' spans normalised
    2: _conform,  # the conversation columns (store/messages.py), NULL: every input whole
    3: _conform,  # input_ranges, NULL: each continuation holds all of its conversation
    4: _conform,  # input_borrowed, NULL: each continuation's new messages are all in input_added
}
"""Schema version v -> a function upgrading a table of version v to v + 1. Add one when a column changes."""


def _migrate(table: pa.Table, version: int) -> pa.Table:
    while version < schema.SCHEMA_VERSION:
        table = MIGRATIONS[version](table)
        version += 1
    return _conform(table)


def _file_version(metadata: dict[bytes, bytes] | None) -> int:
    return schema.file_version(metadata)


_TIME_UNITS = {"milliseconds": 1_000_000, "microseconds": 1_000, "nanoseconds": 1}


def _start_range(metadata: pq.FileMetaData) -> tuple[int, int] | None:
    """The earliest and latest start_time (ns since the epoch) over the file's row groups, from the
    footer's statistics; None when any row group lacks them (the file is then read for every window)."""
    column = next((i for i in range(metadata.num_columns) if metadata.schema.column(i).path == "start_time"), None)
    if column is None or metadata.num_row_groups == 0:
        return None
    logical = metadata.schema.column(column).logical_type.to_json()
    unit = next((factor for name, factor in _TIME_UNITS.items() if name in logical), None)
    if metadata.schema.column(column).physical_type != "INT64" or '"Timestamp"' not in logical or unit is None:
        return None
    low = high = None
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(column).statistics
        if stats is None or not stats.has_min_max:
            return None
        low = stats.min_raw if low is None else min(low, stats.min_raw)
        high = stats.max_raw if high is None else max(high, stats.max_raw)
    return low * unit, high * unit


def _check(path: Path) -> _Verdict:
    try:
        with pq.ParquetFile(path) as parquet:
            file_schema = parquet.schema_arrow
            starts = _start_range(parquet.metadata)
    except Exception as exc:  # noqa: BLE001 - any unreadable footer means the same thing: skip the file
        return _Verdict(_SKIP, reason=f"unreadable Parquet ({_one_line(exc)})")
    try:
        version = _file_version(file_schema.metadata)
    except ValueError:
        return _Verdict(_SKIP, reason="its schema version is not a number")
    if version > schema.SCHEMA_VERSION:
        return _Verdict(_SKIP, version, f"schema version {version} is newer than this agentotel reads "
                        f"({schema.SCHEMA_VERSION}); upgrade agentotel")
    if version < schema.SCHEMA_VERSION and version not in MIGRATIONS:
        return _Verdict(_SKIP, version, f"no migration from schema version {version}")
    missing = set(schema.COLUMNS) - set(file_schema.names)
    not_spans = schema.not_spans(file_schema.names)
    if not_spans is not None:
        return _Verdict(_SKIP, version, not_spans)
    if schema.foreign_columns(file_schema):
        # A column of another type (or one the schema lacks) makes DuckDB's read of all the files fail, or
        # cast every file's column to this one's type: such a file is read through pyarrow, column by column,
        # and left out with a warning naming the column if a value cannot be read as the schema's type.
        return _Verdict(_MIGRATE, version)
    if version == schema.SCHEMA_VERSION and not missing:
        return _Verdict(_CURRENT, version, starts=starts)
    if version in (2, 3, 4) and missing <= set(schema.STORAGE_COLUMNS):
        # Written before conversations were stored once (every input whole), before a continuation could
        # keep part of its conversation (input_ranges NULL: all of it), or before it could borrow an earlier
        # output (input_borrowed NULL): read as they are.
        return _Verdict(_AS_IS, version, starts=starts)
    return _Verdict(_MIGRATE, version, columns_but_dialect=missing - {"dialect"} <= set(schema.STORAGE_COLUMNS),
                    starts=starts)


def _rows(path: Path) -> int:
    try:
        return pq.read_metadata(path).num_rows
    except Exception:  # noqa: BLE001 - unreadable: it is migrated (or skipped) the usual way, and counts as many
        return _MIGRATE_IN_MEMORY_ROWS + 1


def _verdict(path: Path) -> _Verdict:
    damaged = integrity.known_damaged(path)  # found damaged, and could not be moved aside: stays out
    if damaged is not None:
        return _Verdict(_SKIP, reason=f"damaged ({damaged})")
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _cache_lock:
        found = _cache.get(key)
    if found is None:
        found = _check(path)
        with _cache_lock:
            _cache[key] = found
    return found


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _read_wal(directory: Path, warnings: list[str]) -> pa.Table | None:
    if not (directory / "wal").is_dir():
        return None
    try:
        table = store.read_wal(directory)
    except Exception as exc:  # noqa: BLE001 - a damaged WAL must not hide the Parquet files
        warnings.append(f"skipped the write-ahead log in {directory / 'wal'}: {_one_line(exc)}")
        return None
    if table is None or table.num_rows == 0:
        return None
    return _conform(table)


def load(directory: Path) -> Sources:
    """Find, validate and (where needed) migrate everything readable in the store directory."""
    # The WAL is read before the Parquet files are listed: a fold that happens in between then shows its
    # spans twice (collapsed by the spans view) rather than not at all.
    wal_warnings: list[str] = []
    wal = _read_wal(directory, wal_warnings)
    for _attempt in range(_LISTING_ATTEMPTS):
        sources = _load_parquet(directory)
        if sources is not None:
            break
    else:  # compactions kept replacing files under us: take what the last listing could read
        sources = _load_parquet(directory, tolerate_missing=True)
    sources.wal = wal
    sources.warnings[:0] = wal_warnings
    return sources


def _finish_interrupted_compaction(directory: Path, listed: list[str]) -> None:
    """Move out of spans/ the inputs a crashed compaction published a merged file for but did not retire.

    Our own listing hides them anyway; this is for plain globs over spans/ (`duckdb ... 'spans/**/*.parquet'`),
    which would otherwise count their spans twice until the next `agentotel compact`. A directory listing
    tells whether there is any (the merged files' metadata is read only then). Best effort: a store this
    process may not write to is left as it is.
    """
    from agentotel.store.compact import retire_superseded

    published = {str(p) for p in (directory / "spans").glob("date=*/*.parquet") if not p.name.startswith(".")}
    if not published - set(listed):
        return
    try:
        retire_superseded(directory)
    except OSError:
        pass


# A file removed while we validate it was merged by a concurrent compaction into a file our listing may
# predate, so the listing is taken again rather than the file skipped.
_LISTING_ATTEMPTS = 5


def _load_parquet(directory: Path, *, tolerate_missing: bool = False) -> Sources | None:
    sources = Sources()
    migrated: list[pa.Table] = []
    # The store's own listing: published files only, and a consistent snapshot during a compaction.
    listed = store.parquet_files(directory)
    if not tolerate_missing:
        _finish_interrupted_compaction(directory, listed)
    verdicts = []
    for path in map(Path, listed):
        try:
            verdicts.append((path, _verdict(path)))
        except FileNotFoundError:
            if tolerate_missing:
                continue
            return None
    older = [(path, _rows(path)) for path, verdict in verdicts if verdict.kind == _MIGRATE and verdict.version == 1
             and verdict.columns_but_dialect]
    direct = {path for path, _rows_ in _read_older_directly(sources, older)}
    for path, verdict in verdicts:
        if verdict.starts is not None and (path in direct or verdict.kind in (_CURRENT, _AS_IS)):
            sources.starts[str(path)] = verdict.starts
        if path in direct or verdict.kind == _AS_IS:
            sources.older.append(str(path))
        elif verdict.kind == _CURRENT:
            sources.parquet.append(str(path))
        elif verdict.kind == _MIGRATE:
            try:
                migrated.append(_migrate(pq.read_table(path), verdict.version or 0))
            except FileNotFoundError:
                if tolerate_missing:
                    continue
                return None
            except Exception as exc:  # noqa: BLE001 - as for a damaged footer: skip, say which file
                sources.warnings.append(f"skipped {path}: cannot read it as spans ({_one_line(exc)})")
        else:
            sources.warnings.append(f"skipped {path}: {verdict.reason}")
    if migrated:
        sources.migrated = pa.concat_tables(migrated)
    return sources


# Upgrading a file in memory costs a Python pass over its rows, at every open: past this many rows of
# version-1 files, they are read as they are (DuckDB fills their missing `dialect` with NULL; agentotel's
# own spans in them are complete) and `agentotel compact` is advised, which upgrades them once, on disk.
_MIGRATE_IN_MEMORY_ROWS = 200_000


def _read_older_directly(sources: Sources, candidates: list[tuple[Path, int]]) -> list[tuple[Path, int]]:
    """The version-1 files to read as they are when there are too many rows to upgrade at every open."""
    if sum(rows for _path, rows in candidates) <= _MIGRATE_IN_MEMORY_ROWS:
        return []
    sources.warnings.append(
        f"{len(candidates)} file(s) were written by an older agentotel: run `agentotel compact` to bring them up "
        "to date once (until then other instrumentations' spans in them are not steps, and opening reads them as they are)"
    )
    return candidates
