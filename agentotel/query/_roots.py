"""The roots index: the few attributes the runs and steps views need from each run's root span.

A span's `attributes` map is its biggest column (tool definitions and system instructions live
there), and reading it for every span costs more than all the rest of listing runs. Only root spans'
attributes are needed, so they are extracted once per Parquet file (`sql/root_attributes.sql`),
kept in memory, and saved next to the store in `<dir>/.index/roots/` under the file's name, size and
mtime; a file that changed or vanished simply gets a new entry (and its stale one is removed). A
store directory that cannot be written to still works, indexed in memory only.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

INDEX_DIR = Path(".index") / "roots"  # starts with '.': no glob or dataset discovery of spans picks it up

_TIME = pa.timestamp("ns", tz="UTC")
SCHEMA = pa.schema([("trace_id", pa.string()), ("span_id", pa.string()), ("run_id", pa.string()),
                    ("start_time", _TIME), ("end_time", _TIME)]
                   + [(name, pa.string()) for name in ("run_name", "run_trigger", "env_hash", "parent_run_id")])

_VERSION = 2  # of the entries' layout (SCHEMA); entries of another version are replaced

_memory: dict[str, pa.Table] = {}
_lock = threading.Lock()


def _key(store: Path, path: Path) -> str:
    st = path.stat()
    relative = path.relative_to(store).as_posix().replace("/", "~")
    return f"v{_VERSION}~{relative}-{st.st_size}-{st.st_mtime_ns}"


def _load(index: Path, key: str) -> pa.Table | None:
    try:
        return pq.read_table(index / f"{key}.parquet").cast(SCHEMA)
    except (OSError, ValueError, pa.ArrowException):  # unreadable, or from an older index layout
        return None


def _save(index: Path, key: str, table: pa.Table) -> None:
    try:
        index.mkdir(parents=True, exist_ok=True)
        temp = index / f".{key}.{os.getpid()}.tmp"
        pq.write_table(table, temp)
        os.replace(temp, index / f"{key}.parquet")
    except OSError:  # a read-only store: the in-memory index is enough
        pass


def _prune(index: Path, keep: set[str]) -> None:
    try:
        for entry in index.glob("*.parquet"):
            if entry.stem not in keep:
                entry.unlink(missing_ok=True)
    except OSError:
        pass


def roots(store: Path, files: list[str], extract: Callable[[str], pa.Table]) -> pa.Table:
    """The root-attribute rows of the given Parquet files; `extract(file)` computes one file's rows."""
    index = store / INDEX_DIR
    tables: list[pa.Table] = []
    keys: set[str] = set()
    for file in files:
        try:
            key = _key(store, Path(file))
        except (OSError, ValueError):
            continue
        keys.add(key)
        with _lock:
            table = _memory.get(key)
        if table is None:
            table = _load(index, key)
            if table is None:
                table = extract(file).cast(SCHEMA)
                _save(index, key, table)
            with _lock:
                _memory[key] = table
        tables.append(table)
    if index.is_dir():
        _prune(index, keys)
    return pa.concat_tables(tables) if tables else SCHEMA.empty_table()
