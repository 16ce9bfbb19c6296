"""Query: list runs, rebuild one trajectory, diff two runs — the store vs DuckDB over OTLP JSON files.

The corpus's SDK spans (realistic agent runs of 10-200 steps; chat histories capped at a few KB so a
million spans fit on this machine's disk) are written twice: through `ParquetSpanExporter` into a
store (then compacted, as an operator would), and as OTLP JSON lines, one 512-span request a line, as
the Collector's file exporter writes them. The same questions are then asked of both, our side warmed
up once, the two measured alternately (3 rounds: a pass over the JSON takes about a minute), then ours
alone 15 more times for its median and spread: ours through `agentotel.open()` (`runs()`, `trajectory()`,
`diff()`), the comparison with DuckDB's `read_json` over the OTLP files (unnest resource, scope and
span, pick attributes out of the key/value lists). The OTLP side of "diff" only fetches both runs'
spans; it is not charged for aligning them.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import agentotel
from agentotel import semconv as sc
from agentotel.store import SPAN_SCHEMA, ParquetSpanExporter, StoreWriter, compact, parquet_files
from benchmarks import corpus
from benchmarks.bench_store import BATCH, _otlp_json_line
from benchmarks.harness import Result, interleave

FULL_SPANS = 1_000_000
_UNIQUE = 100_000  # distinct spans generated; the rest are re-identified copies (see _write_corpus)
QUICK_SPANS = 1_000
CONTEXT_CHARS = 2_000  # chat history re-sent per call; the default (96 KB) would make ~24 GB of JSON

# DuckDB over the Collector's file-exporter output: every span with the attributes a question needs.
_OTLP_SPANS = """
WITH requests AS (
    SELECT unnest(resourceSpans) AS rs
    FROM read_json($files, format = 'newline_delimited', maximum_object_size = 1073741824)
), scopes AS (
    SELECT unnest(rs.scopeSpans) AS ss FROM requests
), spans AS (
    SELECT unnest(ss.spans) AS s FROM scopes
)
SELECT
    s.traceId AS trace_id, s.spanId AS span_id, s.parentSpanId AS parent_span_id, s.name AS name,
    CAST(s.startTimeUnixNano AS BIGINT) AS start_ns, CAST(s.endTimeUnixNano AS BIGINT) AS end_ns,
    s.status.code AS status_code, s.attributes AS attributes
FROM spans
"""


def _attr(key: str, kind: str = "stringValue") -> str:
    # The attribute name is bound through a DuckDB variable; only the value field name is spliced in.
    return f"list_filter(attributes, lambda a: a.key = getvariable('{_VARIABLES[key]}'))[1].value.{kind}"


_VARIABLES = {
    sc.AGENTOTEL_RUN_ID: "RUN_ID", sc.GEN_AI_OPERATION_NAME: "OPERATION", sc.GEN_AI_TOOL_NAME: "TOOL",
    sc.GEN_AI_REQUEST_MODEL: "MODEL", sc.GEN_AI_USAGE_INPUT_TOKENS: "IN_TOKENS",
    sc.GEN_AI_USAGE_OUTPUT_TOKENS: "OUT_TOKENS", sc.AGENTOTEL_COST_USD: "COST", sc.ENDUSER_ID: "USER",
    sc.GEN_AI_TOOL_CALL_ARGUMENTS: "ARGS", sc.GEN_AI_TOOL_CALL_RESULT: "RESULT",
    sc.GEN_AI_INPUT_MESSAGES: "IN_MESSAGES", sc.GEN_AI_OUTPUT_MESSAGES: "OUT_MESSAGES",
    sc.AGENTOTEL_RUN_NAME: "RUN_NAME", sc.AGENTOTEL_RUN_PARENT_ID: "PARENT_RUN_ID",
}

_OTLP_RUNS = f"""
SELECT {_attr(sc.AGENTOTEL_RUN_ID)} AS run_id,
       any_value({_attr(sc.AGENTOTEL_RUN_NAME)}) AS name,
       any_value({_attr(sc.ENDUSER_ID)}) AS user_id,
       min(start_ns) AS start_ns, max(end_ns) - min(start_ns) AS duration_ns,
       count(*) FILTER (WHERE {_attr(sc.GEN_AI_OPERATION_NAME)} = 'chat') AS model_calls,
       count(*) FILTER (WHERE {_attr(sc.GEN_AI_OPERATION_NAME)} = 'execute_tool') AS tool_calls,
       count(*) FILTER (WHERE status_code = 2) AS errors,
       sum(CAST({_attr(sc.GEN_AI_USAGE_INPUT_TOKENS, 'intValue')} AS BIGINT)) AS input_tokens,
       sum(CAST({_attr(sc.GEN_AI_USAGE_OUTPUT_TOKENS, 'intValue')} AS BIGINT)) AS output_tokens,
       sum({_attr(sc.AGENTOTEL_COST_USD, 'doubleValue')}) AS cost_usd
FROM otlp_spans
GROUP BY ALL
ORDER BY start_ns DESC
"""

_OTLP_TRAJECTORY = f"""
SELECT span_id, parent_span_id, name, start_ns, end_ns - start_ns AS duration_ns, status_code,
       {_attr(sc.GEN_AI_OPERATION_NAME)} AS operation, {_attr(sc.GEN_AI_TOOL_NAME)} AS tool_name,
       {_attr(sc.GEN_AI_REQUEST_MODEL)} AS model,
       coalesce({_attr(sc.GEN_AI_TOOL_CALL_ARGUMENTS)}, {_attr(sc.GEN_AI_INPUT_MESSAGES)}) AS input,
       coalesce({_attr(sc.GEN_AI_TOOL_CALL_RESULT)}, {_attr(sc.GEN_AI_OUTPUT_MESSAGES)}) AS output
FROM otlp_spans
WHERE trace_id = $trace
ORDER BY start_ns
"""

# Both runs of a diff in one pass over the files (what a careful analyst would write).
_OTLP_TWO_TRAJECTORIES = _OTLP_TRAJECTORY.replace("trace_id = $trace", "trace_id IN ($a, $b)").replace(
    "SELECT span_id", "SELECT trace_id, span_id")


def _write_corpus(n_spans: int, scratch: Path, unique: int) -> tuple[Path, list[str], int, int]:
    """The corpus as a compacted store and as OTLP JSON files; returns (store, json files, runs, unique spans).

    Generating SDK spans and encoding OTLP JSON run at about a thousand spans a second here, so a
    million-span corpus is made of copies of a `_UNIQUE`-span corpus: each copy gets its own trace,
    span and run ids (the first hex digit turned by the copy number, `_COPY_SQL`) and is shifted later in time,
    identically on both sides. The store side goes through `ParquetSpanExporter` (the first copy) and
    `StoreWriter` (the others), then `compact()`.
    """
    unique = min(n_spans, unique)
    copies = -(-n_spans // unique)
    store, otlp = scratch / "store", scratch / "otlp"
    otlp.mkdir(parents=True)
    exporter = ParquetSpanExporter(store)
    lines: list[bytes] = []
    runs = 0
    last_ns = 0
    for chunk in corpus.iter_chunks(unique, context_budget_chars=CONTEXT_CHARS):
        runs += sum(1 for s in chunk if s.parent is None)
        last_ns = max(last_ns, max(s.end_time for s in chunk))
        for i in range(0, len(chunk), BATCH):
            exporter.export(chunk[i : i + BATCH])
            lines.append(_otlp_json_line(chunk[i : i + BATCH]))
    exporter.shutdown()
    base_json = b"".join(lines)
    del lines
    shift = last_ns - corpus._EPOCH_NS + 86_400 * 10**9  # copies follow each other, a day apart
    base = pa.concat_tables([pq.read_table(f, partitioning=None) for f in parquet_files(store)])
    files: list[str] = []
    writer = StoreWriter(store)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.register("base", base)
    for key, name in _VARIABLES.items():
        con.execute(f"SET VARIABLE {name} = $v", {"v": key})
    for copy in range(copies):
        if copy:
            table = con.sql(_COPY_SQL, params={"copy": copy, "shift": shift * copy}).to_arrow_table()
            for batch in table.cast(SPAN_SCHEMA).to_batches(max_chunksize=10_000):
                writer.append(batch)
        path = otlp / f"traces-{copy:04d}.json"
        path.write_bytes(base_json if copy == 0 else _copy_json(base_json, copy, shift * copy))
        files.append(str(path))
    writer.close()
    compact(store)
    return store, files, runs * copies, unique


# A copy's ids: the first hex digit turned `$copy` places on (mod 16). Copy 0 is the original, so every
# copy's ids differ from the original's and from each other copy's (replacing the digit with the copy
# number gave copy k the ids of the original's runs whose id starts with k: ~1 run in 18 was recorded twice).
_HEX = "0123456789abcdef"


def _turned(column: str) -> str:
    return (f"CASE WHEN coalesce({column}, '') = '' THEN {column} ELSE substr('{_HEX}', "
            f"(instr('{_HEX}', {column}[1]) - 1 + $copy) % 16 + 1, 1) || substr({column}, 2) END")


_COPY_SQL = f"""
SELECT * REPLACE (
    {_turned("trace_id")} AS trace_id,
    {_turned("span_id")} AS span_id,
    {_turned("parent_span_id")} AS parent_span_id,
    {_turned("run_id")} AS run_id,
    make_timestamp_ns(epoch_ns(start_time) + $shift) AS start_time,
    make_timestamp_ns(epoch_ns(end_time) + $shift) AS end_time,
    map_from_entries(list_transform(map_entries(attributes), lambda e: struct_pack(
        key := e.key,
        value := CASE WHEN e.key IN (getvariable('RUN_ID'), getvariable('PARENT_RUN_ID'))
                      THEN {_turned("e.value")} ELSE e.value END))) AS attributes
)
FROM base
"""

_IDS = re.compile(rb'("(?:traceId|spanId|parentSpanId)":")([0-9a-f])')
_RUN_IDS = re.compile(rb'("key":"(?:' + re.escape(sc.AGENTOTEL_RUN_ID.encode()) + rb"|"
                      + re.escape(sc.AGENTOTEL_RUN_PARENT_ID.encode()) + rb')","value":\{"stringValue":")([0-9a-f])')
_TIMES = re.compile(rb'("(?:startTimeUnixNano|endTimeUnixNano|timeUnixNano)":")(\d+)"')


def _copy_json(data: bytes, copy: int, shift_ns: int) -> bytes:
    """The OTLP JSON of copy `copy`: ids turned as `_COPY_SQL` turns them, times shifted by `shift_ns`."""
    def turn(m: re.Match[bytes]) -> bytes:
        return m.group(1) + _HEX[(_HEX.index(m.group(2).decode()) + copy) % 16].encode()

    data = _IDS.sub(turn, data)
    data = _RUN_IDS.sub(turn, data)
    return _TIMES.sub(lambda m: m.group(1) + str(int(m.group(2)) + shift_ns).encode() + b'"', data)


def _reuse(scratch: Path, marker: Path) -> tuple[Path, list[str], int, int]:
    data = json.loads(marker.read_text())
    shutil.rmtree(scratch / "store-16k", ignore_errors=True)
    return scratch / "store", data["files"], data["runs"], data["unique"]


def _bytes(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def run(quick: bool) -> list[Result]:
    n_spans = QUICK_SPANS if quick else FULL_SPANS
    # A query over OTLP JSON re-reads every file (GBs at full size): a few repeats are plenty.
    repeats = 2 if quick else 3
    # AGENTOTEL_BENCH_QUERY_KEEP=DIR keeps the written corpus there and reuses it next time (re-measuring
    # a change to the query side need not regenerate a million spans).
    keep = os.environ.get("AGENTOTEL_BENCH_QUERY_KEEP")
    scratch = Path(keep) / ("quick" if quick else "full") if keep else Path(tempfile.mkdtemp(prefix="agentotel-bench-query-"))
    done_marker = scratch / "corpus.json"
    try:
        started = time.perf_counter()
        if keep and done_marker.exists():
            store, files, n_runs, unique = _reuse(scratch, done_marker)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
            store, files, n_runs, unique = _write_corpus(n_spans, scratch, QUICK_SPANS // 2 if quick else _UNIQUE)
            shutil.rmtree(scratch / "store-16k", ignore_errors=True)
            done_marker.write_text(json.dumps({"files": files, "runs": n_runs, "unique": unique}))
        build_s = time.perf_counter() - started
        print(f"bench_query: corpus of {n_spans:,} spans written in {build_s:.0f} s", file=sys.stderr)
        parquet_bytes = _bytes(list((store / "spans").rglob("*.parquet")))
        json_bytes = _bytes([Path(f) for f in files])

        shutil.rmtree(store / ".index", ignore_errors=True)  # the first open builds the roots index
        started = time.perf_counter()
        agentotel.open(store).close()
        cold_open_s = time.perf_counter() - started
        started = time.perf_counter()
        traces = agentotel.open(store)
        open_s = time.perf_counter() - started
        small_groups = agentotel.open(_with_row_groups(store, scratch / "store-16k", _SMALL_ROW_GROUP))
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        for key, name in _VARIABLES.items():
            con.execute(f"SET VARIABLE {name} = $v", {"v": key})
        con.sql(_OTLP_SPANS, params={"files": files}).create_view("otlp_spans")

        # Two runs of the same agent, picked reproducibly among the mid-sized ones.
        rows = traces.sql("SELECT run_id, trace_id, name, steps FROM runs WHERE parent_run_id IS NULL "
                          "AND steps BETWEEN 40 AND 150 ORDER BY run_id").fetchall()
        rng = random.Random(0)
        by_name: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_name.setdefault(row[2], []).append(row)
        pool = max(by_name.values(), key=len)
        (run_a, trace_a, _, steps_a) = rng.choice(pool)
        # Another run of the same agent, not a copy of the same generated run (copies share all but the first digit).
        others = [r for r in pool if r[0][1:] != run_a[1:]] or [r for r in rows if r[0][1:] != run_a[1:]]
        (run_b, trace_b, _, steps_b) = rng.choice(others or [r for r in rows if r[0] != run_a])

        for t in (traces, small_groups):  # warm-up
            t.runs().to_arrow_table(), t.trajectory(run_a), t.diff(run_a, run_b)
        cases = {
            "runs": lambda: traces.runs().to_arrow_table(),
            "runs_otlp": lambda: con.sql(_OTLP_RUNS).to_arrow_table(),
            "trajectory": lambda: traces.trajectory(run_a),
            "trajectory_otlp": lambda: con.sql(_OTLP_TRAJECTORY, params={"trace": trace_a}).to_arrow_table(),
            "diff": lambda: traces.diff(run_a, run_b),
            "diff_otlp": lambda: con.sql(_OTLP_TWO_TRAJECTORIES, params={"a": trace_a, "b": trace_b}).to_arrow_table(),
            "trajectory_16k": lambda: small_groups.trajectory(run_a),
            "diff_16k": lambda: small_groups.diff(run_a, run_b),
        }
        samples = interleave(
            cases,
            repeats=repeats,
            warmup=1 if quick else 0,  # a pass over GBs of JSON warms nothing; ours is warmed just above
        )
        # A pass over GBs of JSON takes a minute, so the comparison alternates only a few times; our side,
        # a few milliseconds a call, gets more repeats in a block of its own right after.
        ours_cases = {name: fn for name, fn in cases.items() if not name.endswith("_otlp")}
        if not quick:
            samples.update(interleave(ours_cases, repeats=_OUR_REPEATS, warmup=1))
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)

    ms = {name: sample.scaled(1e3) for name, sample in samples.items()}
    described = (f"corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans ({unique:,} generated, re-identified copies "
                 f"for the rest) in {n_runs:,} runs (chat history capped at "
                 f"{CONTEXT_CHARS:,} chars); store {parquet_bytes / 1e6:,.0f} MB Parquet, OTLP JSON "
                 f"{json_bytes / 1e6:,.0f} MB in {len(files)} files")

    def row(name: str, metric: str, target_ms: float | None, notes: str, variant: str = "") -> Result:
        ours, peer = ms[name + variant], ms[f"{name}_otlp"]
        met = None
        target = None
        if target_ms is not None:
            target = f"< {target_ms:g} ms and >= 10x faster than DuckDB over OTLP JSON"
            met = ours.median < target_ms and peer.median >= 10 * ours.median
        else:
            target = ">= 10x faster than DuckDB over OTLP JSON"
            met = peer.median >= 10 * ours.median
        if quick:  # the targets are for the million-span store; a smoke run's figures say nothing about them
            met = None
        return Result(benchmark=f"query: {name}" + (f" ({variant.strip('_')}-row row groups)" if variant else ""), metric=metric, unit="ms", ours=ours.median,
                      peer_name="DuckDB read_json over OTLP JSON files", peer=peer.median, target=target, met=met,
                      notes=notes, corpus=described, ours_spread=ours.spread, peer_spread=peer.spread,
                      repeats=len(ours.values))

    return [
        row("runs", "list every run (one row per run, aggregated)", None,
            f"agentotel.open(): {cold_open_s:.1f} s the first time (validates files, builds the roots index), "
            f"{open_s * 1e3:.0f} ms after; corpus written in {build_s:.0f} s"),
        row("trajectory", f"rebuild one run ({steps_a} steps), by run id", 100, "resolve the run id, fetch its trace, build steps"),
        row("diff", f"diff two runs ({steps_a} and {steps_b} steps)", 200,
            "ours includes alignment; the OTLP side only fetches both runs' spans, in one pass"),
        row("trajectory", f"rebuild one run ({steps_a} steps), by run id", 100,
            "the same store with its files rewritten in 16,384-row row groups (the writer uses 131,072): "
            "a trajectory decompresses one row group", "_16k"),
        row("diff", f"diff two runs ({steps_a} and {steps_b} steps)", 200, "as above, 16,384-row row groups", "_16k"),
    ]


_SMALL_ROW_GROUP = 16_384
_OUR_REPEATS = 15


def _with_row_groups(store: Path, target: Path, rows: int) -> Path:
    """A copy of the store whose files have `rows`-row row groups (everything else as the writer does)."""
    for path in parquet_files(store):
        source = pq.ParquetFile(path)
        out = target / Path(path).relative_to(store)
        out.parent.mkdir(parents=True, exist_ok=True)
        table = source.read()
        pq.write_table(table, out, compression="zstd", write_page_index=True, row_group_size=rows,
                       bloom_filter_options={"trace_id": {"ndv": max(table.num_rows, 16), "fpp": 0.01}},
                       sorting_columns=source.metadata.row_group(0).sorting_columns or None)
    return target
