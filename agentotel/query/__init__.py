"""The query side: DuckDB over the store — runs, step-by-step trajectories, run diffs and plain SQL.

    traces = agentotel.open()                    # ./agentotel-traces, or $AGENTOTEL_DIR
    traces.runs().df()                           # one row per run
    t = traces.trajectory("3f2a")                # a run id, a trace id, or an unambiguous prefix
    d = traces.diff("3f2a", "9c1e")              # where two runs diverged, and why
    traces.sql("SELECT tool_name, count(*) FROM tool_calls GROUP BY 1").fetchall()

Views for SQL: spans, llm_calls, tool_calls, retrievals, runs, steps (see ARCHITECTURE.md).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import os
import re
import warnings as _warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import duckdb
import pyarrow as pa

from agentotel import _config, _tracing, semconv
from agentotel.query import _graph_agents, _roots, _sources
from agentotel.analysis.diff import RunDiff, diff_trajectories
from agentotel.query.trajectory import EXCLUDED_SCOPES, Step, Trajectory, build_trajectory
from agentotel.store import dialects, fs as store_fs, messages, schema
from agentotel.store.writer import SPANS_DIR

__all__ = [
    "open",
    "Traces",
    "Trajectory",
    "Step",
    "RunDiff",
    "QueryError",
    "StoreNotFound",
    "RunNotFound",
    "SQLError",
    "StoreWarning",
]


class QueryError(Exception):
    """A mistake in what was asked (no store there, no such run, bad SQL); the message says what to do."""


class StoreNotFound(QueryError):
    """The directory does not exist or holds no spans yet."""


class RunNotFound(QueryError):
    """A run name matched no run, or more than one."""

    def __init__(self, message: str, candidates: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


class SQLError(QueryError):
    """DuckDB rejected a query; the message is DuckDB's, on one line."""


class StoreWarning(UserWarning):
    """Part of the store was skipped (a damaged file, say); the rest was read."""


# Attribute names the SQL reads, bound as DuckDB variables so no attribute name is written in SQL.
_SQL_VARIABLES = {
    "AGENTOTEL_RUN_NAME": semconv.AGENTOTEL_RUN_NAME,
    "AGENTOTEL_RUN_TRIGGER": semconv.AGENTOTEL_RUN_TRIGGER,
    "AGENTOTEL_RUN_PARENT_ID": semconv.AGENTOTEL_RUN_PARENT_ID,
    "AGENTOTEL_ENV_HASH": semconv.AGENTOTEL_ENV_HASH,
    "INSTANCE_ID": dialects.INSTANCE_ID,
}
# What trace_spans.sql reads as `call_attributes` for a diff: the attribute maps of model calls, and of the
# spans that may be a run's root, whose map a diff reads for the environment: in the same pass, since a
# second query decompresses the row group's attribute maps again (~80 ms CPU a run at 1M spans).
_MODEL_CALL_ATTRIBUTES = ("CASE WHEN operation IN ('chat', 'invoke_agent') OR parent_span_id IS NULL "
                          "THEN attributes END")
_GRAPH_NODE_SPAN = f"contains(dialect, '{dialects.LANGGRAPH_NODE}')"  # a LangGraph node's span (store/dialects.py)
_MACROS = ("macro_step_type", "macro_duplicates", "macro_is_run_root", "macro_step_run", "macro_agentotel_spans",
           "macro_run_name", "macro_unique_keys")
# Every map column of the span rows read with each key once (macro_unique_keys.sql): a REPLACE list for what
# reads the files not known to hold each key once (`Traces._span_rows`). A query that reads no map pays nothing for it.
_UNIQUE_KEYS = ("agentotel_unique_keys(attributes) AS attributes, "
                "agentotel_unique_keys(resource_attributes) AS resource_attributes, "
                "agentotel_unique_event_keys(events) AS events, agentotel_unique_link_keys(links) AS links")
# In creation order; the underscored ones are internal layers the public views share.
_VIEWS = ("_spans_stored", "_whole_inputs", "spans", "_duplicate_spans", "_run_roots", "_graph_agent_steps", "_spans_marked", "llm_calls", "tool_calls", "retrievals", "steps",
          "runs")
# Layers computed once when the store is opened rather than at each query: `_run_roots` (one row per run,
# small) is read by every run lookup, trajectory and check, and grouping the roots index anew each time
# cost more than the lookup itself. Tables of the connection's own in-memory database rather than TEMP
# ones, so that `Traces._side` (a second connection to it, for a query run alongside) sees them too.
_MATERIALIZED = ("_run_roots",)
# The views `Traces._ensure_views` makes, each after the ones it reads.
_LAYERS = ("_raw_spans",) + tuple(v for v in _VIEWS if v not in _MATERIALIZED)
# A view or internal layer a query's text reads, outside its comments: a name after FROM or JOIN (not a
# column, a $parameter or a field of the same name). What `_ensure_views` makes for a query.
_VIEW_NAME = re.compile(r'(?i)\b(?:FROM|JOIN)\s+"?(' + "|".join(_LAYERS) + r')\b')
_SQL_COMMENT = re.compile(r"--[^\n]*")
# What in a user's SQL may read the catalog (`SHOW TABLES`, `duckdb_views()`): every view is made for it.
_CATALOG = re.compile(r"(?i)\b(?:duckdb_\w+|information_schema|pg_catalog|sqlite_master|show|describe|pragma)\b")
# Columns no query over held rows reads (`Traces._hold`): held as NULLs of their type, and so never decoded.
_NOT_HELD = ("resource_attributes", "events", "links")


@functools.cache
def _sql(name: str) -> str:
    """The text of `sql/<name>.sql` (one query a file, opening with a comment saying what it is for).

    `{whole_input:ROWS}` in it becomes `_whole_input.sql` over the relation ROWS: its rows with each model
    call's input whole (a query filters the stored rows first, so DuckDB still skips row groups).
    """
    return _whole_input(_read_sql(name))


def _whole_input(text: str) -> str:
    return _WHOLE_INPUT.sub(lambda m: f"(\n{_whole_input_body().replace('{rows}', m.group(1))})", text)


def _whole_input_body() -> str:
    """_whole_input.sql without its header comment: one text for the views and the documented macro."""
    lines = _read_sql("_whole_input").splitlines(keepends=True)
    return "".join(line for i, line in enumerate(lines) if not (line.startswith("--") and all(
        earlier.startswith("--") for earlier in lines[:i])))


def _named_views(query: str) -> set[str]:
    """The views (`_LAYERS`) a query's text reads."""
    return {name.lower() for name in _VIEW_NAME.findall(_SQL_COMMENT.sub("", query))}


@functools.cache
def _view_closure(name: str) -> frozenset[str]:
    """A view and every view its definition reads, directly or through another: what must exist before
    it is made (DuckDB binds a view when it is made)."""
    return frozenset({name}).union(*(_view_closure(n) for n in _named_views(_sql(name)) - {name}))


@functools.cache  # the package's files do not change while it runs
def _read_sql(name: str) -> str:
    return resources.files("agentotel.query").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


_WHOLE_INPUT = re.compile(r"\{whole_input:(\w+)\}")


_SPAN_COLUMNS: list[str] = []  # `_span_columns`'s answer, found once a process


def _span_columns(con: duckdb.DuckDBPyConnection) -> str:
    """The store's span columns with their DuckDB types, as a CREATE TABLE column list: DuckDB's reading
    of the Arrow schema (schema.SPAN_SCHEMA), found once a process (registering an Arrow table and
    copying it costs ~3 ms an open, the list ~1 ms)."""
    if not _SPAN_COLUMNS:
        con.register("_span_schema", schema.SPAN_SCHEMA.empty_table())
        try:
            columns = con.execute("DESCRIBE SELECT * FROM _span_schema").fetchall()
        finally:
            con.unregister("_span_schema")
        _SPAN_COLUMNS.append(", ".join(f'"{name}" {kind}' for name, kind, *_ in columns))
    return _SPAN_COLUMNS[0]


def pylist(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts; nanosecond timestamps become datetimes (to the microsecond, all Python keeps)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type) and f.type.unit == "ns":
            table = table.set_column(i, f.name, table.column(i).cast(pa.timestamp("us", tz=f.type.tz), safe=False))
    return table.to_pylist()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


@dataclass(frozen=True)
class _RunRef:
    run_id: str
    trace_id: str
    first_start: Any = None  # the run's spans start within [first_start, last_start]
    last_start: Any = None


def _ref(row: Mapping[str, Any]) -> _RunRef:
    # Python datetimes keep microseconds, the store nanoseconds: widen the window so no edge span is lost.
    slack = dt.timedelta(milliseconds=1)
    first, last = row.get("first_start"), row.get("last_start")
    return _RunRef(row["run_id"], row["trace_id"], first - slack if first else _EPOCH, last + slack if last else _FOREVER)


@dataclass
class _Held:
    """Span rows read once into a DuckDB table (`Traces._hold`), queried in place of the files by
    `_rows(held=...)`. A table rather than Arrow rows registered with DuckDB: the rows never leave DuckDB,
    and each query scans them natively (an Arrow scan converted every column again, the maps included).
    Not a TEMP table: a second connection to the same database (`Traces._side`) reads it too."""

    name: str  # what `{spans}` becomes
    fill: Callable[[duckdb.DuckDBPyConnection], None]  # (re)creates the table on a connection
    con: duckdb.DuckDBPyConnection | None = None  # the connection it was created on


_held_count = itertools.count()


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_FOREVER = dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc)


_FINDINGS = re.compile(r"\bfindings\b", re.IGNORECASE)
_SNAPSHOT_ATTEMPTS = 5
# DuckDB's words for a file it could not decode (it names the file only for some of them); not words
# of the errors a query itself can cause ("Out of Range", "Invalid Input"): checking means reading every file.
# "don't know what type": Thrift's word for a page header whose field type byte is damaged.
_DAMAGE = re.compile(r"(?i)corrupt|decompress|payload value|out of buffer|checksum|tprotocol|don't know what type")
_T = TypeVar("_T")
_GLOB_CHARACTERS = re.compile(r"[*?\[\]{}]")


# Date partitions an open over object storage fetches first: the newest day, and the day before it, where
# a run that crossed midnight started.
_FIRST_DATES = 2


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.timezone.utc)


def _day(moment: dt.datetime, shift: int = 0) -> str:
    """The date partition (`YYYY-MM-DD`, UTC) of a moment, `shift` days on."""
    return (_aware(moment).astimezone(dt.timezone.utc) + dt.timedelta(days=shift)).date().isoformat()


def _ns(moment: dt.datetime) -> int:
    """A datetime as nanoseconds since the epoch (a naive one is UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return (moment - _EPOCH) // dt.timedelta(microseconds=1) * 1_000


def _pattern(file: str) -> str:
    """What DuckDB reads for a listed file: `<dir>/*/date=.../<name>`, the file in spans/ or, once a
    compaction retired it, in .replaced/ (it moved by one rename). DuckDB resolves the pattern at each
    query, so a query planned before a compaction still finds every file of its snapshot for the grace
    period. DuckDB looks in the two folders one after the other: a query resolving it at the very
    instant of the rename can match the file twice (the views keep one copy of a span) or not at all (an
    error, which `_retrying` answers with a new snapshot). A path that is already a glob is read as it is.
    """
    path = Path(file)
    if _GLOB_CHARACTERS.search(file) or path.parent.parent.name != SPANS_DIR:
        return file
    return str(path.parent.parent.parent / "*" / path.parent.name / path.name)


_ALL_ROWS = 2**63 - 1  # a LIMIT past DuckDB's BIGINT fails to bind


class Traces:
    """DuckDB over one store directory: `.sql()`, `.runs()`, `.trajectory()`, `.diff()`.

    The files present when it was opened are what it reads; open again to see newer spans.
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else _config.current().directory
        self._mirror: store_fs.Mirror | None = None
        if store_fs.is_remote(self.directory):
            # Object storage: queries run on this machine's mirror of its Parquet files (store/fs.py),
            # fetched a date partition at a time as queries need them (`_need`); the newest two first.
            try:
                self._mirror = store_fs.Mirror(self.directory)
                self._mirror.fetch(self._mirror.dates[-_FIRST_DATES:])
            except OSError as exc:
                raise StoreNotFound(f"cannot read the trace store at {store_fs.remote_uri(self.directory)}: {_one_line(exc)}") from exc
            self.directory = self._mirror.root
        if not self.directory.is_dir():
            raise StoreNotFound(
                f"no trace store at {self.directory}: run an instrumented agent first "
                "(or `agentotel demo`), or point --dir / AGENTOTEL_DIR at the right directory"
            )
        if not any((self.directory / part).is_dir() for part in ("spans", "wal")):
            inside = next((p for p in self.directory.parents if (p / "spans").is_dir() or (p / "wal").is_dir()), None)
            hint = f" — did you mean {inside}?" if inside is not None else (
                ": run an instrumented agent first (or `agentotel demo`), or point --dir / AGENTOTEL_DIR at the folder agentotel writes")
            raise StoreNotFound(f"{self.directory} is not a trace store (no spans/ or wal/ folder in it){hint}")
        sources = _sources.load(self.directory)
        self.warnings: list[str] = list(sources.warnings)
        for message in self.warnings:
            _warnings.warn(message, StoreWarning, stacklevel=2)
        if sources.empty:
            more = f" and {len(self.warnings) - 1} more" if len(self.warnings) > 1 else ""
            skipped = f" ({self.warnings[0]}{more})" if self.warnings else ""
            raise StoreNotFound(
                f"no spans in {self.directory} yet{skipped}: run an instrumented agent first (or `agentotel demo`)"
            )
        self._views: dict[str, str] = {}  # add_view()'s, re-created when the snapshot is renewed
        self._connect(sources)

    def _connect(self, sources: _sources.Sources) -> None:
        """Bind the views to a snapshot whose files are all still in spans/ once bound (else to a newer one).

        A compaction that retires a file while we bind (the roots index reads each file's path) would
        leave this snapshot without that file's runs, so it is taken again.
        """
        for attempt in range(_SNAPSHOT_ATTEMPTS):
            try:
                self._bind(sources)
            except duckdb.Error as exc:
                if attempt + 1 == _SNAPSHOT_ATTEMPTS or not (self._moved() or self._set_aside_damaged(exc)):
                    raise
            else:
                if attempt + 1 == _SNAPSHOT_ATTEMPTS or not self._moved():
                    return
            sources = _sources.load(self.directory)

    def _bind(self, sources: _sources.Sources) -> None:
        self._sources = sources
        self._files = list(sources.parquet) + list(sources.older)
        self._views.pop("findings", None)  # computed from this snapshot's runs: again on demand
        self._con = duckdb.connect()
        self._views_made: set[str] = set()  # `_ensure_views`: each view is made on first use
        self._side_con: duckdb.DuckDBPyConnection | None = None  # `_side`'s, made on first use
        self._not_held_list: str | None = None  # `_not_held`'s, found on first use
        self._setup(sources)
        if self._views:
            self._ensure_views()
        for name, query in self._views.items():
            self._con.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS {query}')

    def _moved(self) -> bool:
        """Whether a file of this snapshot has left spans/ (a compaction merged and retired it)."""
        return any(not os.path.exists(path) for path in self._files)

    def _current(self) -> duckdb.DuckDBPyConnection:
        """The connection, renewed when a compaction has retired a file this snapshot reads.

        A Traces reads the files present when it was opened. `agentotel compact` moves the small files it
        merged out of spans/ (to .replaced/, deleted after a grace period); the views find them there
        (see `_pattern`), so a query bound before that keeps working, and the next one takes a new
        snapshot (the merged file: the same spans, or more).
        """
        if self._moved():
            self._connect(_sources.load(self.directory))
        return self._con

    def _need(self, dates: Sequence[str] | None = None) -> bool:
        """Over object storage: fetch the date partitions (`YYYY-MM-DD`; None: all) the mirror lacks, and
        rebind the views if any file came (then True). A local store has everything already."""
        if self._mirror is None or not self._mirror.missing():
            return False
        try:
            fetched = self._mirror.fetch(dates)
        except OSError as exc:
            raise QueryError(f"cannot read the trace store at {self._mirror.remote.uri}: {_one_line(exc)}") from exc
        if fetched:
            self._connect(_sources.load(self.directory))
        return fetched > 0

    def _need_between(self, first: dt.datetime, last: dt.datetime) -> None:
        """`_need` of the partitions of spans starting within [first, last]."""
        if self._mirror is not None:
            low, high = _day(first), _day(last)
            self._need([d for d in self._mirror.dates if low <= d <= high])

    def _retrying(self, run: Callable[[duckdb.DuckDBPyConnection], _T]) -> _T:
        """`run(connection)`, again on a new snapshot if it failed because a compaction moved a file meanwhile.

        DuckDB resolves a file when it scans it: a file retired between the check in `_current()` and
        then is found under .replaced/ by its pattern, except in the instant of the rename itself (or
        once deleted, with `--grace 0`).
        """
        for _attempt in range(_SNAPSHOT_ATTEMPTS - 1):
            try:
                return run(self._current())
            except duckdb.Error as exc:
                if self._moved():
                    continue
                if not self._set_aside_damaged(exc):
                    raise
                self._connect(_sources.load(self.directory))  # without the file set aside
        return run(self._current())

    def _set_aside_damaged(self, exc: duckdb.Error) -> bool:
        """After a query failed reading the store: check the snapshot's files (the one the error names,
        else all) and set the damaged ones aside (agentotel.store.integrity). True when one was."""
        from agentotel.store import integrity

        message = str(exc)
        named = [f for f in self._files if f in message]
        if not named and not _DAMAGE.search(message):
            return False  # an error of the query itself (syntax, types), not of a file
        found = []
        for path in named or self._files:
            try:
                reason = integrity.check_file(path)
            except FileNotFoundError:
                continue
            if reason is not None:
                integrity.quarantine(self.directory, path, reason)
                found.append(f"left out {path}: damaged ({reason})")
        for note in found:
            self.warnings.append(note)
            _warnings.warn(note, StoreWarning, stacklevel=3)
        return bool(found)

    # -- set-up ---------------------------------------------------------------------------------
    def _setup(self, sources: _sources.Sources) -> None:
        con = self._con
        con.execute("SET enable_progress_bar = false")  # the CLI shows its own, and only on a terminal
        # Store files are written once under a unique name (a compaction writes new ones), so their footers
        # can be kept between queries; DuckDB still re-reads a footer whose file changed since.
        con.execute("SET parquet_metadata_cache = true")
        for name, value in _SQL_VARIABLES.items():
            con.execute(f"SET VARIABLE {name} = $value", {"value": value})
        con.execute("SET VARIABLE EXCLUDED_SCOPES = $value", {"value": list(EXCLUDED_SCOPES)})
        con.execute("SET VARIABLE OWN_SCOPE = $value", {"value": _tracing.SCOPE})
        # No span row, in every column of the schema: what `_raw_spans` and a window read union the files
        # with when neither the WAL nor a migrated file has rows (`_not_in_parquet`).
        con.execute(f"CREATE TEMP TABLE _no_spans ({_span_columns(con)})")
        if any(t is not None and t.num_rows for t in (sources.wal, sources.migrated)):  # else never read
            empty = schema.SPAN_SCHEMA.empty_table()
            con.register("_wal_spans", sources.wal if sources.wal is not None else empty)
            con.register("_migrated_spans", sources.migrated if sources.migrated is not None else empty)
        for macro in _MACROS:
            con.execute(_sql(macro))
        _graph_agents.register(con)
        con.register("_root_rows", self._root_rows(sources.parquet + sources.older))
        # The files whose maps hold each key once (the roots index says which), and the others: two views,
        # so that only the others' rows go through macro_unique_keys.sql (`_span_rows`).
        for view, files in (("_parquet_spans", self._unique), ("_parquet_unsure", self._unsure)):
            if files:
                # Files of the schema before `dialect` are read as they are: the column is NULL in their rows.
                con.read_parquet([_pattern(f) for f in files], hive_partitioning=False,
                                 union_by_name=self._by_name(files)).create_view(view)
        for table in _MATERIALIZED:  # of the roots index alone: every run lookup reads it
            con.execute(f"CREATE TABLE {table} AS {_sql(table)}")

    def _ensure_views(self, query: str | None = None) -> None:
        """Make the views (`_LAYERS`) a query's text names, and those they read, where not made yet on
        this connection; without `query`, all of them. DuckDB binds a view when it is made, and again
        inside each view made over it (tens of milliseconds for the larger ones, ~0.1 s for all): a
        trajectory, diff or check of a run named by id reads none of them, listing runs only `runs` and
        what it reads, so opening a store for one question pays for what that question reads."""
        wanted = _LAYERS if query is None else frozenset().union(*map(_view_closure, _named_views(query)))
        for view in _LAYERS:
            if view in wanted and view not in self._views_made:
                text = _sql(view).replace("{span_rows}", self._span_rows(
                    "_parquet_spans" if self._unique else None, "_parquet_unsure" if self._unsure else None))
                if view == "_graph_agent_steps":
                    text = text.replace("{graph_traces}", self._graph_traces())
                self._con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {text}")
                self._views_made.add(view)

    def _graph_traces(self) -> str:
        """`_graph_agent_steps`'s filter: the traces holding node spans of a LangGraph graph another instrumentation
        recorded, or `false` when none does (looked at once; the store is read as it was at open)."""
        found = self._con.execute(f"SELECT 1 FROM _raw_spans WHERE {_GRAPH_NODE_SPAN} LIMIT 1").fetchall()
        return f"trace_id IN (SELECT trace_id FROM _raw_spans WHERE {_GRAPH_NODE_SPAN})" if found else "false"

    def _not_in_parquet(self) -> str:
        """A query of the span rows not in Parquet files, the WAL's and migrated files'; when neither has
        any, of the empty table `_no_spans` (the same columns): binding an Arrow scan costs milliseconds, and
        every view binds `_raw_spans` again each time it reads it (all views: ~110 -> ~70 ms CPU)."""
        if any(t is not None and t.num_rows for t in (self._sources.wal, self._sources.migrated)):
            return "SELECT * FROM _wal_spans UNION ALL BY NAME SELECT * FROM _migrated_spans"
        return "SELECT * FROM _no_spans"

    def _with_user_views(self, query: str, run: Callable[[], _T]) -> _T:
        """`run()` once the views a user's SQL may read exist: those its text names (every view when it
        names none or reads the catalog: `SHOW TABLES`, `duckdb_views()`), or, when DuckDB still finds a
        name missing (`temp.spans`, say), every view and `run()` again."""
        self._ensure_views(None if _CATALOG.search(query) or not _named_views(query) else query)
        try:
            return run()
        except duckdb.CatalogException:
            if len(self._views_made) == len(_LAYERS):
                raise
            self._ensure_views()
            return run()

    def _root_rows(self, files: list[str]) -> pa.Table:
        """The roots index (see _roots.py) of the Parquet files, plus the WAL's and migrated files' roots."""
        query = _sql("root_attributes")
        one_file = query.replace("{source}", "read_parquet($file)")

        def extract(file: str) -> pa.Table:
            return self._con.sql(one_file, params={"file": _pattern(file)}).to_arrow_table()

        indexed, unique = _roots.roots(self.directory, files, extract)
        # Order kept (as _sources listed them); a file the index could not stat is unsure.
        self._unique = [f for f in files if f in unique]
        self._unsure = [f for f in files if f not in unique]
        recent = self._con.sql(query.replace("{source}", f"({self._not_in_parquet()})")).to_arrow_table().cast(_roots.SCHEMA)
        return pa.concat_tables([indexed, recent])

    def _by_name(self, files: Sequence[str]) -> bool:
        """Whether DuckDB must read these files' columns by name: when one of them is of an older schema."""
        return bool(set(files) & set(self._sources.older))

    def _span_rows(self, unique: str | None, unsure: str | None) -> str:
        """A query of span rows: those of `unique` (a FROM source of Parquet files whose maps hold each key
        once, or None) as they are, then those of `unsure` (other Parquet files, or None) and the rows not
        in Parquet (`_not_in_parquet`: the WAL's and migrated files') with each map's keys made unique
        (macro_unique_keys.sql, `_UNIQUE_KEYS`). The macro costs every query reading a map, so only what
        the roots index has not seen to be clean goes through it."""
        rest = self._not_in_parquet() if unsure is None else f"SELECT * FROM {unsure} UNION ALL BY NAME {self._not_in_parquet()}"
        made_unique = f"SELECT * REPLACE ({_UNIQUE_KEYS}) FROM ({rest})"
        return made_unique if unique is None else f"SELECT * FROM {unique} UNION ALL BY NAME {made_unique}"

    # -- SQL ------------------------------------------------------------------------------------
    def sql(self, query: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> duckdb.DuckDBPyRelation:
        """A DuckDB relation for the query over the views (`.df()`, `.pl()`, `.arrow()`, `.fetchall()`).

        Bind values with `params` (`?` or `$name` placeholders), never by formatting them into the text.
        """
        self._need()  # any SQL may read any span
        self._current()
        if _FINDINGS.search(query) and "findings" not in self._views:
            self._register_findings()

        def run(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
            return self._with_user_views(query, lambda: con.sql(query, params=params))

        try:
            return self._retrying(run)
        except duckdb.Error as exc:
            raise SQLError(_one_line(exc)) from None

    def findings(self, run: str, **options: Any) -> list[Any]:
        """Where and why a run went wrong: each finding at the step where its cause shows, with its layer,
        severity, evidence and a suggestion (agentotel.analysis.detectors; `policy=` overrides the agent's)."""
        from agentotel.analysis.detectors import findings

        return findings(self, run, **options)

    def _register_findings(self) -> None:
        # Detectors are Python, so the `findings` view is computed the first time a query names it.
        from agentotel.analysis.detectors import findings_table

        self._con.register("_findings", findings_table(self))
        self.add_view("findings", "SELECT * FROM _findings")

    def add_view(self, name: str, query: str) -> None:
        """Make `query` (over the views) available to SQL as the view `name`, e.g. a `findings` view."""
        if not name.isidentifier() or name.lower() in _VIEWS:
            raise QueryError(f"{name!r} cannot be a view name (a plain identifier, not one of {', '.join(_VIEWS)})")
        self._need()
        try:
            con = self._current()
            self._with_user_views(query, lambda: con.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS {query}'))
        except duckdb.Error as exc:
            raise SQLError(_one_line(exc)) from None
        self._views[name] = query

    def _spans_within(self, first: dt.datetime, last: dt.datetime) -> tuple[str, dict[str, Any]]:
        """A FROM source with every span row of `_raw_spans` that starts within [first, last] (and others):
        only the Parquet files whose footer statistics overlap the window are read, plus the WAL's and
        migrated files' rows. DuckDB binds and prunes each file of a source at every query (~1 ms a file),
        so a query of one run's window costs the same in a store of a thousand files as of ten."""
        files = self._sources.files_starting_within(_ns(first), _ns(last))
        unique = set(self._unique)
        groups = {"window_unique": [f for f in files if f in unique], "window_unsure": [f for f in files if f not in unique]}

        def source(name: str) -> str | None:  # read as `_setup` reads the same files
            by_name = "true" if self._by_name(groups[name]) else "false"
            return (f"read_parquet(${name}, hive_partitioning = false, union_by_name = {by_name})"
                    if groups[name] else None)

        return (f"({self._span_rows(source('window_unique'), source('window_unsure'))})",
                {name: [_pattern(f) for f in group] for name, group in groups.items() if group})

    def _side(self) -> duckdb.DuckDBPyConnection:
        """A second connection to this snapshot's database, for a query over held rows (`_hold`) that runs
        in another thread while this connection runs one (DuckDB runs the two at once, outside the GIL).
        It sees the held tables and `_run_roots`, and has the macros; not the TEMP views or the variables."""
        if self._side_con is None:
            side = self._con.cursor()
            for macro in _MACROS:
                side.execute(_sql(macro))
            self._side_con = side
        return self._side_con

    def _rows(self, query: str, params: Mapping[str, Any] | None = None, *,
              within: tuple[dt.datetime, dt.datetime] | None = None, held: "_Held | None" = None,
              con: duckdb.DuckDBPyConnection | None = None) -> list[dict[str, Any]]:
        """The query's rows as dicts. A query reading `{spans}` reads `_raw_spans`, or with `within`
        (first, last) only the files that may hold spans starting then, or with `held` those rows in memory
        (`_hold`): its own filters must keep to them. `con`: run there as it is (`_side()`, with `held`
        rows filled on this snapshot's connection); an error is the caller's to answer."""
        if con is not None:
            if held is None or held.con is not self._con:
                raise QueryError("a query on another connection reads rows held on this one")
            cursor = con.execute(query.replace("{spans}", held.name), dict(params or {}))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

        # The DB-API path: a relation's planning costs tens of milliseconds, too much per trajectory.
        def run(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            text, bound = query, dict(params or {})
            if "{spans}" in query and held is not None:
                if held.con is not con:  # a renewed connection (a compaction moved a file): read them again
                    held.fill(con)
                    held.con = con
                text = query.replace("{spans}", held.name)
            elif "{spans}" in query:
                source, extra = self._spans_within(*within) if within is not None else ("_raw_spans", {})
                text, bound = query.replace("{spans}", source), {**bound, **extra}
            self._ensure_views(text)
            cursor = con.execute(text, bound)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

        try:
            return self._retrying(run)
        except duckdb.Error as exc:  # a file damaged past its footer, say: still one clear line
            raise QueryError(f"reading {self.directory} failed: {_one_line(exc)}") from None

    def _hold(self, trace_ids: Sequence[str], first: dt.datetime, last: dt.datetime, *,
              runs: tuple[Sequence[str], str, dt.datetime] | None = None) -> "_Held":
        """Every stored row of the given traces that started within [first, last], read once and kept in
        a table for `_rows(held=...)` (until `_release`; without `_NOT_HELD`'s columns). With `runs` (run ids, since, before):
        also the traces holding any span of those runs that started in [since, before), found in the same
        statement (`since`: a start as text, to the nanosecond; the window must cover [since, before)).

        For queries that read the same row groups: DuckDB decompresses a row group's payload columns for
        each query that wants any row of it, and that is most of what a query of a few traces costs.
        """
        # A list of traces (an IN list or a semi-join on a subquery), not an OR of conditions: DuckDB checks
        # the traces while it scans (a semi-join's, once its subquery ran), and decompresses no payload of
        # a row group none of whose rows pass.
        chosen = "SELECT unnest($traces::VARCHAR[])"
        params: dict[str, Any] = {"traces": sorted(set(trace_ids)), "first": first, "last": last}
        if runs is not None:
            chosen += (" UNION SELECT trace_id FROM {spans} WHERE run_id IN (SELECT unnest($runs::VARCHAR[])) "
                       "AND start_time >= $since::TIMESTAMPTZ_NS AND start_time < $before")
            params.update(runs=list(runs[0]), since=runs[1], before=runs[2])
        name = f"_held_spans_{next(_held_count)}"

        def fill(con: duckdb.DuckDBPyConnection) -> None:
            source, extra = self._spans_within(first, last)
            where = f"WHERE trace_id IN ({chosen.replace('{spans}', source)}) AND start_time BETWEEN $first AND $last"
            con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * REPLACE ({self._not_held(con)}) FROM {source} {where}",
                        {**params, **extra})

        held = _Held(name, fill)

        def run(con: duckdb.DuckDBPyConnection) -> None:
            fill(con)
            held.con = con

        try:
            self._retrying(run)
        except duckdb.Error as exc:
            raise QueryError(f"reading {self.directory} failed: {_one_line(exc)}") from None
        return held

    def _not_held(self, con: duckdb.DuckDBPyConnection) -> str:
        """`_NOT_HELD`'s columns as NULLs of their types (a REPLACE list): a payload column DuckDB decodes
        costs milliseconds in each row group read, and these are read by no query over held rows."""
        if self._not_held_list is None or con is not self._con:
            types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                     "WHERE table_name = '_no_spans' AND database_name = 'temp'").fetchall())
            self._not_held_list = ", ".join(f"NULL::{types[column]} AS {column}" for column in _NOT_HELD)
        return self._not_held_list

    def _release(self, held: "_Held") -> None:
        """Forget rows `_hold` read (their memory is freed)."""
        if held.con is None:
            return
        try:
            held.con.execute(f"DROP TABLE IF EXISTS {held.name}")
        except duckdb.Error:
            pass
        held.con = None

    # -- runs -----------------------------------------------------------------------------------
    def runs(self, *, user: str | None = None, limit: int | None = None, status: str | None = None,
             agent: str | None = None, since: dt.datetime | None = None, until: dt.datetime | None = None) -> duckdb.DuckDBPyRelation:
        """Runs, newest first, as a DuckDB relation (one row per run, the `runs` view's columns), optionally
        only one user's, one status ('ok', 'error', 'running'), one agent's, or started in [since, until)."""
        if limit is not None and limit >= _ALL_ROWS:
            limit = None  # more runs than any store holds (and than DuckDB's LIMIT takes): all of them
        params = {"user": user, "limit": limit, "status": status, "agent": agent, "since": since, "until": until}
        if self._mirror is not None:
            params["since"] = self._fetch_runs(params)
        def run(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
            self._ensure_views(_sql("runs_list"))
            return con.sql(_sql("runs_list"), params=params)

        return self._retrying(run)

    def _fetch_runs(self, params: dict[str, Any]) -> dt.datetime | None:
        """Over object storage: fetch the partitions `runs(**params)` needs; returns the `since` to query with.

        Runs in [since, until) start in partitions from since's date to until's, and their spans run on
        into the next day at most (a run longer than a day that crosses a boundary is counted from the
        partitions fetched); a day more on each side is fetched so a run that started the day before is
        whole (and left out by its start) rather than taken for one starting in the window. With a limit,
        partitions are fetched newest first, doubling, until the newest `limit` runs all start after the
        oldest fetched day: only those are listed, which is exactly what the whole store would list.
        """
        mirror = self._mirror
        since, until, limit = params["since"], params["until"], params["limit"]
        if mirror is None or not mirror.missing():
            return since
        low = _day(since, -1) if since is not None else ""
        high = _day(until, +1) if until is not None else "9999"
        candidates = [d for d in mirror.dates if low <= d <= high]
        if limit is None:
            self._need(candidates)
            return since
        count = f"SELECT count(*) AS n FROM ({_sql('runs_list')}\n)"
        fetched = _FIRST_DATES
        while True:
            chosen = candidates[-fetched:]
            self._need(chosen)
            if len(chosen) == len(candidates):
                return since
            boundary = dt.datetime.fromisoformat(chosen[0]).replace(tzinfo=dt.timezone.utc) + dt.timedelta(days=1)
            within = boundary if since is None else max(_aware(since), boundary)
            if self._rows(count, {**params, "since": within})[0]["n"] >= limit:
                return within
            fetched *= 2

    def resolve(self, name: str) -> _RunRef:
        """The run a name means: a run id, a trace id, an unambiguous prefix of either, or a run's name (its latest run)."""
        name = (name or "").strip()
        if not name:
            raise RunNotFound("a run name is empty: give a run id, a trace id, or a prefix of one")
        by_id = self._rows(_sql("run_by_id"), {"name": name})
        if len(by_id) == 1:  # a full run id or trace id of a finished run: the roots index knows it
            ref = _ref(by_id[0])
            self._need_between(ref.first_start, ref.last_start)  # over object storage: its partitions
            return ref
        if self._need():  # a prefix, a name, or a run in no partition fetched yet: every partition decides
            by_id = self._rows(_sql("run_by_id"), {"name": name})
            if len(by_id) == 1:
                return _ref(by_id[0])
        matches = self._rows(_sql("run_lookup"), {"name": name})
        exact = [m for m in matches if name in (m["run_id"], m["trace_id"])]
        runs: dict[str, dict[str, Any]] = {}
        for m in exact or matches:  # a run whose spans span two traces is still one run: its first row's trace
            runs.setdefault(m["run_id"], m)
        if not runs:
            named = self._rows(_sql("run_named"), {"name": name})  # a run's name means its latest run
            if named and named[0]["run_id"] != name:
                return self.resolve(named[0]["run_id"])
            raise RunNotFound(f"no run matches {name!r}: not a run id, trace id, prefix or run name (try `agentotel runs`)")
        traces = {m["trace_id"] for m in runs.values()}
        if len(runs) > 1 and len(traces) == 1 and next(iter(traces)).startswith(name):
            # A trace id (or a prefix of one) naming several runs: nested runs share their trace, and no
            # number of characters tells them apart. The outermost one is meant.
            outer = self._rows("SELECT run_id FROM runs WHERE trace_id = $t AND parent_run_id IS NULL", {"t": next(iter(traces))})
            if len(outer) == 1 and outer[0]["run_id"] in runs:
                return _ref(runs[outer[0]["run_id"]])
        if len(runs) > 1:
            shown = sorted(runs)[:10]
            more = f" and {len(runs) - len(shown)} more" if len(runs) > len(shown) else ""
            raise RunNotFound(
                f"{name!r} is ambiguous: it matches {len(runs)} runs ({', '.join(shown)}{more}); give more characters",
                sorted(runs),
            )
        (ref,) = runs.values()
        return _ref(ref)

    def run(self, name: str) -> dict[str, Any]:
        """One run's summary (the `runs` view's columns) by run id, trace id or prefix."""
        return self.trajectory(name).run

    # -- trajectories and diffs -----------------------------------------------------------------
    def trajectory(self, run: str) -> Trajectory:
        """The run's steps in order (model calls, tool calls, retrievals, embeddings, sub-agents)."""
        return self._trajectory(run)

    def _trajectory(self, run: str, *, model_attributes: bool = False) -> Trajectory:
        """`trajectory(run)`; with `model_attributes`, the model calls' attribute maps read in the same pass."""
        ref = self.resolve(run)
        window = {"trace": ref.trace_id, "first": ref.first_start, "last": ref.last_start}
        within = (ref.first_start, ref.last_start)
        rows = self._trace_rows(ref, _MODEL_CALL_ATTRIBUTES if model_attributes else "NULL::MAP(VARCHAR, VARCHAR)")

        def root_attributes(root: Mapping[str, Any]) -> dict[str, str]:
            if root.get("call_attributes") is not None:  # read with the rows (a diff's)
                return dict(root["call_attributes"])
            found = self._rows(_sql("root_span_attributes"), {**window, "span": root["span_id"]}, within=within)
            return dict(found[0]["attributes"] or {}) if found else {}

        def span_attributes(spans: list[str]) -> dict[str, dict[str, str]]:
            found = self._rows(_sql("span_attributes"), {**window, "spans": spans}, within=within)
            return {row["span_id"]: dict(row["attributes"] or {}) for row in found}

        return build_trajectory(rows, ref.run_id, root_attributes, span_attributes)

    def _trace_rows(self, ref: _RunRef, call_attributes: str, params: Mapping[str, Any] | None = None, *,
                    held: "_Held | None" = None) -> list[dict[str, Any]]:
        """The span rows a trajectory is built from (sql/trace_spans.sql: the run's trace, within its window,
        inputs made whole), each with `call_attributes`, an SQL expression over the stored row (`params` binds
        its values): what a caller reads of each span in the same pass, since a second pass decompresses the
        row group's payload columns again. `held`: read from those rows in memory (`_hold`, of that window)."""
        window = {"trace": ref.trace_id, "first": ref.first_start, "last": ref.last_start, **(params or {})}
        within = (ref.first_start, ref.last_start)
        query = _sql("trace_spans").replace("{call_attributes}", call_attributes)
        rows = self._rows(query.replace("{rows}", "stored"), window, within=within, held=held)
        if not messages.whole_rows(rows):  # an input's base is not in this window's rows: the store decides
            rows = self._rows(_whole_input(query.replace("{rows}", "{whole_input:stored}")), window, within=within, held=held)
        return rows

    def diff(self, run_a: str, run_b: str) -> RunDiff:
        """Where and why two runs diverged: aligned steps, the first divergence, environment, totals."""
        return diff_trajectories(self._trajectory(run_a, model_attributes=True),
                                 self._trajectory(run_b, model_attributes=True))

    def environment(self, run: str) -> dict[str, str]:
        """The `agentotel.env.*` attributes of a run's root span (the snapshot is under agentotel.env.snapshot)."""
        return self.trajectory(run).environment

    # -- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        if self._side_con is not None:
            self._side_con.close()
        self._con.close()

    def __enter__(self) -> "Traces":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Traces({str(self.directory)!r})"


def open(directory: str | Path | None = None) -> Traces:  # noqa: A001 - the public name is agentotel.open
    """DuckDB over the store at `directory` (else $AGENTOTEL_DIR, else ./agentotel-traces)."""
    return Traces(directory)
