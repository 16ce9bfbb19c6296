"""`StoreWriter`: spans appended durably to a WAL, folded into immutable, atomically published Parquet files.

    <dir>/spans/date=YYYY-MM-DD/<segment>.parquet   one file per WAL segment and start date
    <dir>/wal/<writer>.arrows                       the durable tail not yet folded

A file becomes visible only by `rename` from a dot-prefixed temporary name after its bytes are
fsync'd, and the folder is fsync'd after the rename, so a reader (or a crash) never sees half a file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from agentotel.store import fs, wal
from agentotel.store.messages import Conversations
from agentotel.store.schema import SCHEMA_VERSION, SPAN_SCHEMA, storable

log = logging.getLogger("agentotel.store")

SPANS_DIR = "spans"
REPLACES_KEY = b"agentotel.replaces"  # in a compacted file: the names of the files it supersedes
_DAY_NS = 86_400 * 10**9
KEPT_ORDER: list[tuple[str, str]] = []
"""`publish()`'s sort_by for a table already in the store's order: by trace, traces in the order they started
(`by_trace_start`). No stored column holds that order, so the files declare no sorting column."""
_AGE_RETRY_S = 0.05  # the age timer's shortest wait
_AGE_MAX_WAIT_S = 3600.0  # and its longest
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# Files a fold writes at once when its spans start on several dates: one per core, the Parquet
# encoding and compression run without the GIL (each file still takes its own memory for its pages).
_FOLD_THREADS = max(2, min(4, os.cpu_count() or 2))
# With slow_start, a writer's first segments are smaller: an eighth, a quarter, a half of wal_max_bytes,
# then whole. A short-lived process (an agent run from the command line) then has most of its spans
# folded in the background while it runs, instead of all of them at exit; a long-running one writes 3
# more files in all.
_SLOW_START = 3
FOLD_PAYLOAD_LEVEL = 3
"""zstd level of the payload columns in a fold (every other column's always). Level 3 costs no more CPU
than pyarrow's default (1) here, and its longer match window finds the prompts agent runs repeat from
call to call: about half the bytes per span."""
COMPACT_PAYLOAD_LEVEL = 7
"""zstd level of the payload columns when `agentotel compact` rewrites a file, once and off the export path:
bench_store's compacted standard corpus 576 -> 545 bytes/span for 16 -> 41 us/span of write CPU (level 9:
542 for 61 us). Readers decompress every level at the same speed. Higher levels cost far more than they save
on agent text (the same merged file, write CPU at load ~5-9, so relative): level 11 or 12 530 bytes/span for
twice level 7's CPU; 16 490 for 13 times, 19 486 (0.53x zstd OTLP JSON, whose half is 456) for 17 times."""


def partition_name(day: int) -> str:
    return "date=" + time.strftime("%Y-%m-%d", time.gmtime(day * 86_400))


def parquet_files(directory: str | os.PathLike[str]) -> list[str]:
    """The store's visible Parquet files as one consistent snapshot (no span in two of them).

    While a compaction is publishing, a glob can see a merged file next to the inputs it replaces
    for an instant; this drops any input a listed merged file names in its metadata.
    """
    spans = Path(directory) / SPANS_DIR
    files = sorted(str(p) for p in spans.glob("date=*/*.parquet") if not p.name.startswith("."))
    replaced: set[str] = set()
    for path in files:
        if Path(path).name.startswith("c-"):
            replaced.update(str(Path(path).parent / name) for name in replaces(path))
    return [f for f in files if f not in replaced]


def replaces(path: str | os.PathLike[str]) -> list[str]:
    """The file names a compacted file supersedes (empty for a folded file, or one that vanished)."""
    try:
        metadata = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowException):
        return []
    raw = metadata.get(REPLACES_KEY)
    return json.loads(raw) if raw else []


def publish(table: pa.Table, partition: Path, name: str, *, sort_by: list[tuple[str, str]], extra: dict[bytes, bytes] | None = None,
            payload_level: int = FOLD_PAYLOAD_LEVEL) -> Path:
    """Write `table` as `partition/name` atomically: dot-prefixed temp, fsync, rename, fsync the folder.

    `payload_level`: the zstd level of the payload columns (`write_parquet`)."""
    created = not partition.exists()
    partition.mkdir(parents=True, exist_ok=True)
    if created:
        wal.fsync_dir(partition.parent)
    table = _prepared(table, sort_by, extra)
    final = partition / name
    temp = partition / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        # An Arrow-native file: a Python file object would take the GIL back for
        # every page written, slowing the fold down behind a busy process's other threads.
        with pa.OSFile(str(temp), "wb") as sink:
            write_parquet(table, sink, sort_by, payload_level=payload_level)
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    wal.fsync_dir(partition)
    return final


def _prepared(table: pa.Table, sort_by: list[tuple[str, str]], extra: dict[bytes, bytes] | None) -> pa.Table:
    table = sorted_table(table, sort_by)
    metadata = dict(SPAN_SCHEMA.metadata or {})
    metadata.update(extra or {})
    return table.replace_schema_metadata(metadata)


def publish_remote(table: pa.Table, remote: fs.Remote, partition: str, name: str, *,
                   sort_by: list[tuple[str, str]]) -> str:
    """Upload `table` as the object `partition/name` of a remote store: encoded in memory, then one PUT,
    which makes it visible whole; a retry overwrites the same key."""
    table = _prepared(table, sort_by, None)
    sink = pa.BufferOutputStream()
    write_parquet(table, sink, sort_by)
    relative = f"{partition}/{name}"
    remote.put(relative, sink.getvalue())
    return f"{remote.uri}/{relative}"


def _leaves(name: str, arrow: pa.DataType) -> list[str]:
    """The Parquet leaf columns (their dotted paths) an Arrow column is stored as."""
    if pa.types.is_map(arrow):
        return _leaves(f"{name}.key_value.key", arrow.key_type) + _leaves(f"{name}.key_value.value", arrow.item_type)
    if pa.types.is_list(arrow):
        return _leaves(f"{name}.list.element", arrow.value_type)
    if pa.types.is_struct(arrow):
        return [leaf for field in arrow for leaf in _leaves(f"{name}.{field.name}", field.type)]
    return [name]


_LEAVES = [leaf for field in SPAN_SCHEMA for leaf in _leaves(field.name, field.type)]
_PAYLOADS = ("input", "output", "input_added")
# Min/max statistics for the columns a query filters or prunes by (time, ids, the promoted columns), not
# for payloads, maps and the other free-text or storage columns: no query filters on those, and their
# min and max are text in every page header and column chunk (a file of a few hundred spans: bench_store's
# 50-step runs, 305 -> 301 bytes/span).
_UNFILTERED = frozenset({*_PAYLOADS, "input_ranges", "input_borrowed", "input_chain", "attributes", "resource_attributes",
                         "events", "links", "parent_span_id", "kind", "status_code", "status_message", "service_name",
                         "scope_name", "scope_version", "tool_call_id", "error_type", "dialect"})
_STATISTICS = [leaf for leaf in _LEAVES if leaf.split(".")[0] not in _UNFILTERED]
# Encodings other than a dictionary, where one measures smaller (bench_store, bytes/span of the standard
# corpus / 50-step runs, each change alone): times, in start order within each trace (measured when a fold
# file was in start order throughout), as deltas (start_time 5.8 -> 3.8 / 5.3 -> 0.8, end_time and
# duration_ns alike; 3.9 -> 4.8 with folds by trace, which save 11 in all); random
# hex ids, which never repeat in a file, as their bytes without a dictionary's index (span_id 11.5 -> 8.5
# / 10.8 -> 8.9); the conversation columns' character counts as deltas.
_ENCODINGS = {
    **dict.fromkeys(["start_time", "end_time", "duration_ns", "input_offset", "input_ranges.list.element.start",
                     "input_ranges.list.element.length", "input_borrowed.list.element.at",
                     "input_borrowed.list.element.start", "input_borrowed.list.element.length"], "DELTA_BINARY_PACKED"),
    **dict.fromkeys(["span_id", "parent_span_id", "tool_call_id", "input_borrowed.list.element.span_id"],
                    "DELTA_LENGTH_BYTE_ARRAY"),
}
# A dictionary for every other column but the payloads: a payload seldom repeats whole within a row group,
# and building the dictionary before falling back to plain pages costs the write a fifth of its CPU
# (standard corpus 19 -> 16 us/span) for the same bytes (+0.2 / -2.4 bytes/span).
_DICTIONARY = [leaf for leaf in _LEAVES if leaf not in _ENCODINGS and leaf not in _PAYLOADS]
# Below this many rows a file has no dictionary at all: each dictionary is a page of its own (a header, a
# zstd frame) beside a data page of a few values, which outweighs what it saves (bench_store's 50-step runs,
# files of ~150 spans: 257 -> 245 bytes/span; standard corpus, 100 rows: 856 -> 848, 300 rows: 761 -> 765).
_DICTIONARY_ROWS = 256
# A column chunk's dictionary may hold this many bytes (pyarrow's default: 1 MiB) before its later pages fall
# back to plain values. The attributes map's dictionary is what stores a model call's system instructions and
# tool definitions, sent again on every call of a run, once per row group (standard corpus: 1,997 bytes/span
# of them as given, 0.7 bytes/span saved if they were not stored at all, so a reference to a run's first
# call would gain nothing). Where they vary by run (a prompt template with the user's name, the date) and a
# row group's runs add up to more than 1 MiB, the fallback stores them again page by page: the standard
# corpus with a 20 KB per-run variant of each, one 16,384-row group, 626.5 -> 577.9 bytes/span (578.0 with
# them referenced once per trace), 13.3 -> 12.3 us/span to write, one trace read by DuckDB 34 -> 26 ms,
# a full scan of the map 64 -> 65 ms. The standard corpus itself is written byte for byte as before.
_DICTIONARY_PAGE_BYTES = 8 << 20


def _empty_columns(table: pa.Table) -> frozenset[str]:
    """The columns of `table` that hold no value (`_no_values`)."""
    return frozenset(name for name, column in zip(table.column_names, table.columns) if _no_values(column))


def _dictionary(table: pa.Table, empty: frozenset[str]) -> list[str]:
    """The leaves `table` is written with dictionaries for: none in a small file, never a column without a value
    (an empty dictionary page, ~30 bytes, for nothing)."""
    if table.num_rows < _DICTIONARY_ROWS:
        return []
    return [leaf for leaf in _DICTIONARY if leaf.split(".")[0] not in empty] if empty else _DICTIONARY


def _compression(empty: frozenset[str], payload_level: int) -> tuple[dict[str, str], dict[str, int]]:
    """Each leaf's codec and zstd level: zstd, but none for a column without a value, whose pages hold only
    a few bytes of levels that a zstd frame's header outweighs (bench_store's 50-step runs, files of ~150
    spans: 42 column chunks larger compressed than not, 1.2 bytes/span)."""
    codecs = {leaf: "none" if leaf.split(".")[0] in empty else "zstd" for leaf in _LEAVES}
    levels = {leaf: payload_level if leaf in _PAYLOADS else 3 for leaf in _LEAVES if codecs[leaf] == "zstd"}
    return codecs, levels


def _no_values(column: pa.ChunkedArray) -> bool:
    """Whether a column holds no value: NULL in every row, or (a list or map) only empty ones."""
    if column.null_count == len(column):
        return True
    if pa.types.is_list(column.type) or pa.types.is_map(column.type):
        # Offsets of a sliced chunk are its own: the values it holds are the difference of the first and last.
        return all(len(c) == 0 or c.offsets[-1] == c.offsets[0] for c in column.chunks)
    return False


def write_parquet(table: pa.Table, sink: pa.NativeFile, sort_by: list[tuple[str, str]], *,
                  payload_level: int = FOLD_PAYLOAD_LEVEL) -> None:
    """The store's Parquet encoding of a table already in `sort_by` order."""
    empty = _empty_columns(table)
    codecs, levels = _compression(empty, payload_level)
    with pq.ParquetWriter(
        sink,
        table.schema,
        compression=codecs,
        compression_level=levels,
        use_dictionary=_dictionary(table, empty),
        dictionary_pagesize_limit=_DICTIONARY_PAGE_BYTES,
        column_encoding=_ENCODINGS,
        # No page index: no reader of the store uses one (DuckDB prunes by row-group and page-header
        # statistics), and in a small file it is a twentieth of the bytes (50-step runs: -8 bytes/span).
        write_page_index=False,
        write_statistics=_STATISTICS,
        # A CRC-32 per page: DuckDB does not check them, agentotel.store.integrity does.
        write_page_checksum=True,
        # NDV sized to the file keeps the filter small; trace ids are the needle users search for.
        bloom_filter_options={"trace_id": {"ndv": max(table.num_rows, 16), "fpp": 0.01}},
        sorting_columns=pq.SortingColumn.from_ordering(table.schema, sort_by),
        # Not the Arrow schema again in the footer (4.6 KB a file, a fold of a few hundred spans: 15 B a
        # span): the Parquet types read back as exactly SPAN_SCHEMA's (tests/store/test_roundtrip.py).
        store_schema=False,
    ) as writer:
        # A trajectory decompresses whole row groups: smaller ones make one run cheaper to read
        # (bench_query: trajectory 64 -> 51 ms, diff 188 -> 139 ms at 1M spans). Pages stay at pyarrow's
        # 1 MiB: DuckDB skips the payload pages that hold none of a run's rows, and 8 MiB pages, though a
        # zstd frame then spans more of a trace's text (standard corpus folded 582.8 -> 578.5 bytes/span),
        # cost a trajectory 35 % more CPU (30 runs of the compacted standard corpus, 74 -> 104 ms).
        # Larger pages and row groups buy little more at these levels because a wider zstd window finds
        # little: the standard corpus's outputs in one zstd stream take 402 bytes/span at level 3 against
        # 410 in our pages, and a 128 MiB window with long-distance matching at level 19 299 against 301
        # without (session 25, load ~7: folded, 4 / 8 / 64 MiB pages 579.1 / 578.5 / 578.1 bytes/span,
        # 64 MiB pages in 65,536-row groups 578.1; compacted at level 7, 538.8 / 538.1 / 537.1, and 533.1).
        # The level is what counts: a compaction at level 19 is 485.6 bytes/span in 1 MiB pages and 450.8
        # (0.494x zstd OTLP JSON) in 64 MiB pages and 65,536-row groups, for ~1.1 ms of CPU a span (~35x
        # level 7) and 3x the time to read a run (30 trajectories of that store, load ~4: 49 -> 153 ms each).
        writer.write_table(table, row_group_size=16 * 1024)
        # The schema version and a compaction's list of the files it replaces (store_schema=False drops
        # the schema's own metadata).
        writer.add_key_value_metadata(table.schema.metadata or {})


def by_trace_start(table: pa.Table, *, within: pa.Array | pa.ChunkedArray | None = None) -> pa.Table:
    """The spans by (start of their trace, trace id, start time): each trace's spans together, the traces
    in the order they started; every fold and compaction writes its files in this order.

    `within` (one integer per row, a fold's start dates): a coarser key before all of them, each value's rows
    a block of their own. Together, a trace's spans compress as neighbours: its model calls and tool calls
    share their agent's text (bench_store's standard corpus folded 593.9 -> 583.1 bytes/span, output 417 ->
    410, against start order). In start order of the traces, the runs of one stretch of time share row groups:
    `check` reads the runs an agent made just before the one it checks, which trace-id order scattered over
    every row group of a merged file (a 100-step run's history read 5 of 7). One trace is still read from one
    row group: its start-time window and the trace_id bloom filter rule out the others. Runs of one agent
    together (agent, then this order) measured 587.5 against 582.8 bytes/span folded, and a tool's results
    together (agent, operation, tool, then this order) 651.8: a trace's own text is the better neighbour.
    """
    if table.num_rows < 2:
        return table.combine_chunks()
    firsts = table.group_by("trace_id", use_threads=False).aggregate([("start_time", "min")])
    where = pc.index_in(table.column("trace_id"), value_set=firsts.column("trace_id"))
    keys = {"trace_start": firsts.column("start_time_min").take(where),
            "trace_id": table.column("trace_id"), "start_time": table.column("start_time")}
    order = [(name, "ascending") for name in keys]
    if within is not None:
        keys = {"within": within, **keys}
        order = [("within", "ascending"), *order]
    return sorted_table(table, order, keys=pa.table(keys))


def sorted_table(table: pa.Table, sort_by: list[tuple[str, str]], *, keys: pa.Table | None = None) -> pa.Table:
    """`table` in `sort_by` order (stable, nulls last), as one chunk; no copy when it is already in order.

    `keys` (default: `table`) holds the columns `sort_by` names. `Table.sort_by` takes from the chunked
    columns, which for big string columns (prompts) costs several times a plain copy; taking from the
    combined columns once is the cheap way.
    """
    table = table.combine_chunks()
    if table.num_rows < 2 or not sort_by:  # no sort_by: the caller's order (a compaction's, compact.py)
        return table
    order = pc.sort_indices(table if keys is None else keys, sort_keys=sort_by)
    # Already in order when the permutation is 0, 1, 2, ...: its first index is 0 and every step is 1.
    steps = pc.subtract(order.slice(1), order.slice(0, len(order) - 1))  # wraps around (never 1) on a step back
    if order[0].as_py() == 0 and pc.all(pc.equal(steps, pa.scalar(1, order.type))).as_py():
        return table
    return table.take(order)


def _is_published(partition: Path, name: str) -> bool:
    """Whether `name` is already in `partition`, directly or merged into a compacted file."""
    if (partition / name).exists():
        return True
    return any(name in replaces(p) for p in partition.glob("c-*.parquet"))


def _is_published_remote(remote: fs.Remote, partition: str, name: str) -> bool:
    """`_is_published` in object storage: the object is there, or a compacted file names it."""
    listed = remote.files(partition)
    if f"{partition}/{name}" in listed:
        return True
    for relative in listed:
        if relative.rsplit("/", 1)[-1].startswith("c-"):
            try:
                raw = pq.read_schema(remote.fs.open_input_file(remote.key(relative))).metadata or {}
            except (OSError, pa.ArrowException):
                continue
            if name in json.loads(raw.get(REPLACES_KEY) or b"[]"):
                return True
    return False


def fold_batches(directory: Path | str, segment: str, batches: Iterable[pa.RecordBatch], *, skip_published: bool = False) -> list[Path | str]:
    """Publish a segment's batches as one Parquet file per start date, rows by trace (`by_trace_start`).

    `directory` may be an object-storage URI: each file is then uploaded under the same name (fs.py)."""
    table = pa.Table.from_batches([_current(b) for b in batches], schema=SPAN_SCHEMA)
    if table.num_rows == 0:
        return []
    # Integer division truncates toward zero, so times before 1970 (or missing) land in date=1970-01-01.
    starts = table.column("start_time")
    days = pc.divide(pc.max_element_wise(pc.fill_null(starts.cast(pa.int64()), 0), 0), _DAY_NS)
    # Sorted once by date, then by trace: each date is a contiguous slice (no copy), already in order.
    table = by_trace_start(table, within=days)
    counts = sorted((entry["values"], entry["counts"]) for entry in pc.value_counts(days).to_pylist())
    remote = fs.open_remote(directory) if fs.is_remote(directory) else None
    name = f"{segment}.parquet"

    def publish_day(day: int, begin: int, count: int) -> Path | str | None:
        if remote is not None:
            relative = f"{SPANS_DIR}/{partition_name(day)}"
            if skip_published and _is_published_remote(remote, relative, name):
                return None
            return publish_remote(table.slice(begin, count), remote, relative, name, sort_by=KEPT_ORDER)
        partition = Path(directory) / SPANS_DIR / partition_name(day)
        if skip_published and _is_published(partition, name):
            return None
        return publish(table.slice(begin, count), partition, name, sort_by=KEPT_ORDER)

    begins = [0]
    for _day, count in counts:
        begins.append(begins[-1] + count)
    jobs = [(day, begin, count) for (day, count), begin in zip(counts, begins)]
    return [path for path in _each_day(publish_day, jobs) if path is not None]


def _each_day(publish_day: Callable[[int, int, int], Path | str | None], jobs: list[tuple[int, int, int]]) -> list[Path | str | None]:
    """`publish_day` for each date of a fold, dates written side by side (pyarrow encodes and compresses
    a file without the GIL); results in date order. Every date is attempted before the first error is raised,
    so a retry (skip_published) finds all the others done."""
    if len(jobs) < 2:
        return [publish_day(*job) for job in jobs]
    results: list[Path | str | None] = [None] * len(jobs)
    errors: list[BaseException | None] = [None] * len(jobs)
    next_job = iter(range(len(jobs)))
    taking = threading.Lock()

    def work() -> None:
        while True:
            with taking:
                index = next(next_job, None)
            if index is None:
                return
            try:
                results[index] = publish_day(*jobs[index])
            except BaseException as exc:  # noqa: BLE001 - raised below, once every date was attempted
                errors[index] = exc

    # Plain threads, not an executor: a fold at interpreter exit (a provider's atexit shutdown) comes
    # after concurrent.futures stops taking work; where no thread can start, the caller does every date.
    helpers = []
    for _ in range(min(len(jobs), _FOLD_THREADS) - 1):
        helper = threading.Thread(target=work, name="agentotel-store-fold-date", daemon=True)
        try:
            helper.start()
        except RuntimeError:
            break
        helpers.append(helper)
    work()  # the calling thread takes dates too
    for helper in helpers:
        helper.join()
    for error in errors:
        if error is not None:
            raise error
    return results


def _current(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A batch of the current schema: a dead writer of an older agentotel may have left another in its WAL."""
    if batch.schema.equals(SPAN_SCHEMA):
        return batch
    from agentotel.store.schema import upgrade

    # The WAL writes SPAN_SCHEMA's version into its stream; batches without the dialect column are version 1.
    version = 1 if "dialect" not in batch.schema.names else SCHEMA_VERSION
    return upgrade(pa.Table.from_batches([batch]), version).combine_chunks().to_batches()[0]


def _unique_writer_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _observed_fold(on_fold: Callable[[float, list[Path]], None] | None, directory: Path, segment: str,
                   batches: Iterable[pa.RecordBatch], **options: bool) -> list[Path]:
    """`fold_batches`, reporting its time and files to `on_fold` (a collector's metrics); the report never fails a fold."""
    started = time.monotonic()
    files = fold_batches(directory, segment, batches, **options)
    if on_fold is not None:
        try:
            on_fold(time.monotonic() - started, files)
        except Exception:  # noqa: BLE001 - an observer's bug must not cost the fold
            log.debug("agentotel: fold observer failed", exc_info=True)
    return files


class _Fold:
    """A sealed WAL segment being folded into Parquet on a background thread."""

    def __init__(self, directory: Path, segment: wal.WalFile, batches: list[pa.RecordBatch],
                 on_fold: Callable[[float, list[Path]], None] | None = None) -> None:
        self.directory, self.wal, self.batches, self.on_fold = directory, segment, batches, on_fold
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="agentotel-store-fold", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.finish()
        except BaseException as exc:  # noqa: BLE001 - kept, retried by the writer, reported there
            self.error = exc

    def finish(self) -> None:
        # skip_published: a failed earlier attempt may have published some of the dates already.
        _observed_fold(self.on_fold, self.directory, self.wal.segment, self.batches, skip_published=self.error is not None)
        self.wal.close(remove=True)  # only now that the Parquet files are durable
        self.batches = []


class StoreWriter:
    """Appends span batches durably (WAL, fsync'd) and folds them into Parquet files; thread-safe.

    When the spans in the current WAL segment reach `wal_max_bytes` (uncompressed Arrow size; the
    file itself is zstd-compressed; with `slow_start`, the first three segments at an eighth, a quarter, a
    half of it, as the in-process exporter does) or the segment is `wal_max_age_s` old (checked at each append,
    and by a timer thread, so an idle writer's spans reach Parquet too), appends move on to a new
    segment and the full one is folded on a background thread, so `append()` never waits for Parquet. `fold()` and `close()` fold synchronously. At start the writer
    folds the WAL files of writers that died.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        writer_id: str | None = None,
        wal_max_bytes: int | None = None,
        wal_max_age_s: float | None = None,
        wal_dir: str | os.PathLike[str] | None = None,
        slow_start: bool = False,
    ) -> None:
        from agentotel import _config

        settings = _config.current()
        # An object-storage URI: Parquet goes to the bucket, the WAL stays on local disk (fs.py).
        uri = fs.remote_uri(directory)
        self.directory: Path | str = uri if uri is not None else Path(directory)
        self.wal_max_bytes = settings.wal_max_bytes if wal_max_bytes is None else wal_max_bytes
        self.wal_max_age_s = settings.wal_max_age_s if wal_max_age_s is None else wal_max_age_s
        self.writer_id = _UNSAFE.sub("_", writer_id) if writer_id else _unique_writer_id()
        self._lock = threading.Lock()
        self._batches: list[pa.RecordBatch] = []
        self._pending_bytes = 0
        self._seq = 0
        self._pid = os.getpid()
        self._fold: _Fold | None = None
        self._fold_failed = False
        self._folds_started = 0 if slow_start else _SLOW_START
        self._closed = False
        self._conversations = Conversations()  # each conversation's latest input: later calls store only what they add
        # Called with (seconds, files published) after each fold of this writer's WAL (the collector's metrics).
        self.on_fold: Callable[[float, list[Path]], None] | None = None
        # A local store's WAL is always <dir>/wal: its readers look for it there.
        self._wal_dir = wal_folder(self.directory, (wal_dir or settings.wal_dir) if uri is not None else None)
        self._wal_dir.mkdir(parents=True, exist_ok=True)
        if uri is None:
            (Path(directory) / SPANS_DIR).mkdir(parents=True, exist_ok=True)
        self._id_lock = wal.lock_writer_id(self._wal_dir, self.writer_id)
        try:
            self._wal = self._new_wal()
        except BaseException:
            os.close(self._id_lock)
            raise
        try:
            self.recover()
        except BaseException:
            self._wal.close(remove=False)
            os.close(self._id_lock)
            raise
        self._start_age_timer()

    def _start_age_timer(self) -> None:
        """A thread that folds a segment once it is `wal_max_age_s` old even when no append comes to check."""
        self._timer_stop = threading.Event()
        thread = threading.Thread(
            target=_fold_when_old, args=(weakref.ref(self), self._timer_stop), name="agentotel-store-age", daemon=True
        )
        thread.start()

    def _fold_if_old(self) -> float:
        """Seal the segment when it is old enough (called by the age timer); returns seconds until the next check."""
        with self._lock:
            if self._closed or self._pid != os.getpid():
                return -1.0
            if self._batches:
                age = time.monotonic() - self._wal.started
                if age < self.wal_max_age_s:
                    return self.wal_max_age_s - age
                try:
                    self._seal_locked()
                except Exception as exc:  # noqa: BLE001 - the batches stay durable in the WAL; retried later
                    self._warn_fold_failed(exc)
                if self._batches:  # a fold was still running (or failed): look again soon
                    return _AGE_RETRY_S
            return self.wal_max_age_s

    @property
    def wal_path(self) -> Path:
        """The WAL segment file appends go to now."""
        return self._wal.path

    def _new_wal(self) -> wal.WalFile:
        self._seq += 1
        return wal.WalFile(self._wal_dir, f"{time.time_ns() // 1_000_000:013d}-{self.writer_id}-{self._seq:06d}")

    def _after_fork(self) -> None:
        """In a forked child: write to WAL files of its own; the parent's files, locks and batches stay the parent's."""
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._lock = threading.Lock()  # another thread may have held it at the fork
        self._batches, self._pending_bytes = [], 0
        self._conversations = Conversations()
        self._wal.abandon()
        if self._fold is not None:
            self._fold.wal.abandon()  # its thread did not survive the fork; the parent finishes it
            self._fold = None
        os.close(self._id_lock)
        self.writer_id = _unique_writer_id()
        self._id_lock = wal.lock_writer_id(self._wal_dir, self.writer_id)
        self._wal = self._new_wal()
        self._start_age_timer()  # the parent's timer thread did not survive the fork

    def append(self, batch: pa.RecordBatch | Sequence[pa.RecordBatch], *,
               inputs: Sequence[list[str | None]] | None = None, outputs: Sequence[list[str | None]] | None = None) -> None:
        """Append span rows of `SPAN_SCHEMA`; durable when this returns. Raises OSError on I/O failure.

        A list of batches is written with one write and one fsync (group commit), without first
        being copied into one batch. `inputs` (one list per batch, from `SpanColumns.to_batch(inputs=)`):
        the batches' input values, their input columns NULL; a model call's whole conversation is then
        never converted to Arrow, only what is stored of it. `outputs` (likewise, from `to_batch(outputs=)`): the
        batches' output values as their columns hold them, so none is read back from Arrow.
        """
        given = [batch] if isinstance(batch, pa.RecordBatch) else list(batch)
        if inputs is not None:
            if len(inputs) != len(given) or any(len(i) != b.num_rows for i, b in zip(inputs, given)):
                raise ValueError("StoreWriter.append: inputs must hold one value per row of each batch")
            inputs = [i for i, b in zip(inputs, given) if b.num_rows]
        if outputs is not None:
            if len(outputs) != len(given) or any(len(o) != b.num_rows for o, b in zip(outputs, given)):
                raise ValueError("StoreWriter.append: outputs must hold one value per row of each batch")
            outputs = [o for o, b in zip(outputs, given) if b.num_rows]
        batches = [b for b in given if b.num_rows]
        if not batches:
            return
        for b in batches:
            if not b.schema.equals(SPAN_SCHEMA):
                # One foreign batch would make the whole IPC stream unreadable after it.
                raise ValueError("StoreWriter.append: the batch does not have SPAN_SCHEMA (build it with SpanColumns)")
        self._after_fork()
        with self._lock:
            if self._closed:
                raise OSError(f"{self.directory}: the store writer is closed")
            # Stored as continuations of this writer's earlier, durable rows; remembered once durable too.
            try:
                batches, remember = self._conversations.encode(batches, inputs, outputs)
            except (pa.ArrowException, UnicodeError, TypeError, ValueError):
                if inputs is None:
                    raise
                # Rare: an input Arrow cannot hold (a lone surrogate). Encoded again (nothing is remembered of a
                # failed encode) from the inputs as a column stores them, so conversations hold the stored text.
                inputs = [[storable(text) for text in values] for values in inputs]
                batches, remember = self._conversations.encode(batches, inputs, outputs)
            # The whole append compressed at once, after its conversations are stored: the exporter's caller
            # (a BatchSpanProcessor) hands it the next batch only once this one is durable, so the only overlap
            # left is within one append. Cut into slices, the WAL compressing one on a thread while the next
            # one's conversations are stored, measured worse (session 25, 512-span batches, both ways taking
            # turns in one process): each slice's IPC message compresses its columns anew (128-row slices 13.4
            # -> 24.3 us of CPU per span, 256-row 15.5), and bench_store's WAL row went 128 -> 172 us/span with
            # slices of 128 and 130 -> 149 with 256 at load ~8, 106 -> 126 with 256 at load ~3 (CPU 68 -> 85);
            # end to end alike.
            self._wal.append(batches)
            remember()
            self._batches.extend(batches)
            self._pending_bytes += sum(b.nbytes for b in batches)
            # Measured uncompressed: it bounds the memory held for the fold as well as the file.
            limit = self.wal_max_bytes >> max(0, _SLOW_START - self._folds_started)
            if self._pending_bytes >= limit or time.monotonic() - self._wal.started >= self.wal_max_age_s:
                try:
                    self._seal_locked()
                except Exception as exc:  # noqa: BLE001 - the batch is durable: a fold problem must not fail it
                    # Folding is retried at the next append and at close.
                    self._warn_fold_failed(exc)

    def _warn_fold_failed(self, exc: BaseException) -> None:
        if not self._fold_failed:
            log.warning("agentotel: cannot fold the WAL in %s into Parquet yet: %s", self._wal_dir, exc)
        self._fold_failed = True

    def _join_fold(self) -> None:
        """Wait for the background fold to end (its outcome is for `_settle_locked`)."""
        if self._fold is not None:
            self._fold.thread.join()

    def _settle_locked(self, *, wait: bool) -> bool:
        """Finish the background fold (retrying it here if it failed); False when it is still running."""
        fold = self._fold
        if fold is None:
            return True
        if wait:
            fold.thread.join()
        elif fold.thread.is_alive():
            return False
        if fold.error is not None:
            self._warn_fold_failed(fold.error)
            fold.finish()  # raises again if the cause persists; the fold stays pending
        self._fold = None
        self._fold_failed = False
        return True

    def _seal_locked(self) -> None:
        """Hand the current segment to a background fold and start a new one (unless a fold is still running)."""
        if not self._batches or not self._settle_locked(wait=False):
            return  # the previous fold is still running: keep appending to this segment meanwhile
        sealed = self._wal
        self._wal = self._new_wal()
        batches, self._batches, self._pending_bytes = self._batches, [], 0
        self._fold = _Fold(self.directory, sealed, batches, self.on_fold)
        self._folds_started += 1

    def fold(self) -> list[Path]:
        """Publish everything in the WAL as Parquet now; returns the files written for the current segment."""
        self._after_fork()
        with self._lock:
            if self._closed:
                return []
            files: list[Path] = []
            try:
                if self._batches:
                    # Side by side with the background fold of the previous segment, if it still runs.
                    files = _observed_fold(self.on_fold, self.directory, self._wal.segment, self._batches)
                    sealed = self._wal
                    self._wal = self._new_wal()
                    self._batches, self._pending_bytes = [], 0
                    sealed.close(remove=True)
            finally:
                self._join_fold()
            self._settle_locked(wait=True)
            return files

    def close(self) -> None:
        """Fold what is in the WAL and release it. Idempotent."""
        self._after_fork()
        self._timer_stop.set()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                try:
                    if self._batches:
                        # Side by side with the background fold of the previous segment, if it still runs:
                        # two files, each encoded without the GIL. The segments are independent (each
                        # WAL file goes only once its own Parquet files are durable).
                        _observed_fold(self.on_fold, self.directory, self._wal.segment, self._batches)
                        self._batches = []
                finally:
                    self._join_fold()
                self._settle_locked(wait=True)
            except BaseException:
                # Keep the WAL files: the next start recovers them.
                self._wal.close(remove=False)
                if self._fold is not None:
                    self._fold.wal.close(remove=False)
                os.close(self._id_lock)
                raise
            self._wal.close(remove=True)
            wal.release_writer_id(self._wal_dir, self.writer_id, self._id_lock)

    def recover(self) -> int:
        """Fold the WAL files of dead writers into Parquet; returns the number of spans recovered."""
        return recover(self.directory, wal_dir=self._wal_dir)


def _fold_when_old(ref: "weakref.ref[StoreWriter]", stop: threading.Event) -> None:
    """The age timer's loop: holds the writer only weakly, so an abandoned writer is not kept alive by it."""
    wait = 0.0
    # Capped: a "never" age (1e12 s, inf) must not overflow the wait; NaN compares false and is capped too.
    while not stop.wait(max(wait, _AGE_RETRY_S) if wait < _AGE_MAX_WAIT_S else _AGE_MAX_WAIT_S):
        writer = ref()
        if writer is None:
            return
        wait = writer._fold_if_old()
        del writer
        if wait < 0:
            return


def wal_folder(directory: str | os.PathLike[str], wal_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a store's WAL lives: `wal_dir` when given; else `<dir>/wal`, or for an object-storage URI
    `wal/` in this machine's folder for it (fs.local_root), where readers on this machine find it too."""
    if wal_dir is not None:
        return Path(wal_dir)
    if fs.is_remote(directory):
        return fs.local_root(directory) / wal.WAL_DIR
    return Path(directory) / wal.WAL_DIR


def recover(directory: str | os.PathLike[str], *, wal_dir: str | os.PathLike[str] | None = None) -> int:
    """Fold the WAL files of dead writers (those whose lock is free) into Parquet; returns the spans recovered."""
    folder = wal_folder(directory, wal_dir)
    directory = fs.remote_uri(directory) or Path(directory)
    recovered = 0
    if folder.is_dir():
        wal.remove_stale_locks(folder)
    for path in wal.segment_files(folder):
        fd = wal.lock_orphan(path)  # None for a live writer's file, ours included (flock is per open file)
        if fd is None:
            continue
        try:
            contents = wal.read_file(path)
            if contents.batches:
                segment = contents.segment or f"recovered-{uuid.uuid4().hex}"
                fold_batches(directory, segment, contents.batches, skip_published=True)
                log.info("agentotel: recovered %d span(s) from %s", contents.rows, path)
            recovered += contents.rows
            if contents.damaged:
                wal.set_aside(path, contents.damaged)
            if path.exists():
                path.unlink()
                wal.fsync_dir(path.parent)
        finally:
            os.close(fd)
    return recovered
