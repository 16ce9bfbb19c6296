"""The roots index: the few attributes the runs and steps views need from each run's root span.

A span's `attributes` map is its biggest column (tool definitions and system instructions live
there), and reading it for every span costs more than all the rest of listing runs. Only root spans'
attributes are needed, so they are extracted once per Parquet file (`sql/root_attributes.sql`),
kept in memory, and saved next to the store in `<dir>/.index/roots/` under the file's name, size and
mtime; a file that changed or vanished simply gets a new entry (and its stale one is removed). A
store directory that cannot be written to still works, indexed in memory only.

Each entry also says whether the file's attribute maps hold each key once (`repeats_a_key`): the views
read such a file as it is, and any other through macro_unique_keys.sql, which costs every query that
reads a map (listing a million spans' runs: ~13 -> ~20 ms). No writer's mark can say it, since another
tool's file may carry our schema metadata: the file itself is looked at, once, when it is indexed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

INDEX_DIR = Path(".index") / "roots"  # starts with '.': no glob or dataset discovery of spans picks it up

_TIME = pa.timestamp("ns", tz="UTC")
SCHEMA = pa.schema([("trace_id", pa.string()), ("span_id", pa.string()), ("run_id", pa.string()),
                    ("start_time", _TIME), ("end_time", _TIME)]
                   + [(name, pa.string()) for name in ("run_name", "run_trigger", "env_hash", "parent_run_id")])

_VERSION = 3  # of the entries' layout (SCHEMA, _UNIQUE_KEYS); entries of another version are replaced
# An entry's metadata key saying whether its file's maps hold each key once ("1") or not ("0").
_UNIQUE_KEYS = b"agentotel.index.unique_keys"
# The span columns that are maps, or lists of structs holding one (`attributes`): what `repeats_a_key` reads.
_MAP_COLUMNS = ("attributes", "resource_attributes", "events", "links")
# Past this many (map, key) cells a row group's keys are sorted rather than counted in a table of them.
_COUNTED_CELLS = 1 << 25

_memory: dict[str, pa.Table] = {}
_lock = threading.Lock()


def _key(store: Path, path: Path) -> str:
    st = path.stat()
    relative = path.relative_to(store).as_posix().replace("/", "~")
    return f"v{_VERSION}~{relative}-{st.st_size}-{st.st_mtime_ns}"


def _load(index: Path, key: str) -> tuple[pa.Table, bool] | None:
    try:
        table = pq.read_table(index / f"{key}.parquet")
        return table.cast(SCHEMA), (table.schema.metadata or {}).get(_UNIQUE_KEYS) == b"1"
    except (OSError, ValueError, pa.ArrowException):  # unreadable, or from an older index layout
        return None


def _save(index: Path, key: str, table: pa.Table, unique: bool) -> None:
    try:
        index.mkdir(parents=True, exist_ok=True)
        temp = index / f".{key}.{os.getpid()}.tmp"
        pq.write_table(table.replace_schema_metadata({_UNIQUE_KEYS: b"1" if unique else b"0"}), temp)
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


def roots(store: Path, files: list[str], extract: Callable[[str], pa.Table]) -> tuple[pa.Table, set[str]]:
    """The root-attribute rows of the given Parquet files (`extract(file)` computes one file's rows), and
    which of the files hold each key once in every map (the others: not known to)."""
    index = store / INDEX_DIR
    tables: list[pa.Table] = []
    keys: set[str] = set()
    unique: set[str] = set()
    for file in files:
        try:
            key = _key(store, Path(file))
        except (OSError, ValueError):
            continue
        keys.add(key)
        with _lock:
            entry = _memory.get(key)
        if entry is None:
            entry = _load(index, key)
            if entry is None:
                entry = extract(file).cast(SCHEMA), not repeats_a_key(file)
                _save(index, key, *entry)
            with _lock:
                _memory[key] = entry
        tables.append(entry[0])
        if entry[1]:
            unique.add(file)
    if index.is_dir():
        _prune(index, keys)
    return (pa.concat_tables(tables) if tables else SCHEMA.empty_table()), unique


def repeats_a_key(file: str) -> bool:
    """Whether a map of the Parquet file (`_MAP_COLUMNS`, in a span, an event or a link) holds a key twice;
    True too when that cannot be told (a file that does not read as expected: the safe answer).

    Reads the maps' key columns alone, as dictionary codes (their values, the bulk of a file, are never
    decoded): ~0.7 s CPU for a million spans, once per file. A key repeated within a map is a (map, code)
    pair seen twice."""
    try:
        parquet = pq.ParquetFile(file)
        paths = [c.path for c in (parquet.schema.column(i) for i in range(len(parquet.schema)))
                 if c.path.split(".")[0] in _MAP_COLUMNS and c.path.split(".")[-1] == "key"]
        reader = pq.ParquetFile(file, read_dictionary=paths)
        for group in range(reader.num_row_groups):
            table = reader.read_row_group(group, columns=paths)
            for name in table.column_names:
                column = table.column(name).combine_chunks()
                maps = column if name in _MAP_COLUMNS[:2] else column.flatten().field("attributes")
                if _repeats(maps):
                    return True
        return False
    except Exception:  # noqa: BLE001 - a file not shaped as expected: read through the macro, which copes
        return True


def _repeats(maps: pa.ListArray) -> bool:
    """Whether a list (one per map) of {key} structs holds a key twice in one list."""
    keys = maps.flatten().field("key")
    if len(keys) == 0:
        return False
    if not pa.types.is_dictionary(keys.type):  # a chunk Parquet stored without a dictionary
        keys = keys.dictionary_encode()
    width = max(len(keys.dictionary), 1)
    cells = pc.list_parent_indices(maps).to_numpy().astype(np.int64) * width + keys.indices.to_numpy(
        zero_copy_only=False).astype(np.int64)
    if len(maps) * width <= _COUNTED_CELLS:
        return bool(np.bincount(cells).max() > 1)
    cells.sort()
    return bool((cells[1:] == cells[:-1]).any())
