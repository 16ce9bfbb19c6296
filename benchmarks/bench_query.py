"""Query: list runs, rebuild one trajectory, diff two runs — the store vs DuckDB over OTLP JSON files.

The corpus's SDK spans (realistic agent runs of 10-200 steps; chat histories capped at a few KB so a
million spans fit on this machine's disk) are written twice: through `ParquetSpanExporter` into a
store (then compacted, as an operator would), and as OTLP JSON lines, one 512-span request a line, as
the Collector's file exporter writes them. The same questions are then asked of both, each side
warmed up once and measured alternately: ours through `agentotel.open()` (`runs()`, `trajectory()`,
`diff()`), the comparison with DuckDB's `read_json` over the OTLP files (unnest resource, scope and
span, pick attributes out of the key/value lists). The OTLP side of "diff" only fetches both runs'
spans; it is not charged for aligning them.
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

import agentotel
from agentotel import semconv as sc
from agentotel.store import ParquetSpanExporter, compact
from benchmarks import corpus
from benchmarks.bench_store import BATCH, _otlp_json_line
from benchmarks.harness import Result, interleave

FULL_SPANS = 1_000_000
QUICK_SPANS = 2_000
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
    sc.AGENTOTEL_RUN_NAME: "RUN_NAME",
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


def _write_corpus(n_spans: int, scratch: Path) -> tuple[Path, list[str], int]:
    """The corpus as a compacted store and as OTLP JSON files; returns (store, json files, runs)."""
    store = scratch / "store"
    otlp = scratch / "otlp"
    otlp.mkdir(parents=True)
    exporter = ParquetSpanExporter(store)
    files: list[str] = []
    runs = 0
    lines: list[bytes] = []
    for chunk in corpus.iter_chunks(n_spans, context_budget_chars=CONTEXT_CHARS):
        runs += sum(1 for s in chunk if s.parent is None)
        for i in range(0, len(chunk), BATCH):
            batch = chunk[i : i + BATCH]
            exporter.export(batch)
            lines.append(_otlp_json_line(batch))
        if sum(map(len, lines)) > 64 << 20:  # the file exporter rotates files; so do we
            files.append(_flush_lines(otlp, lines, len(files)))
    if lines:
        files.append(_flush_lines(otlp, lines, len(files)))
    exporter.shutdown()
    compact(store)
    return store, files, runs


def _flush_lines(directory: Path, lines: list[bytes], n: int) -> str:
    path = directory / f"traces-{n:04d}.json"
    path.write_bytes(b"".join(lines))
    lines.clear()
    return str(path)


def _bytes(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def run(quick: bool) -> list[Result]:
    n_spans = QUICK_SPANS if quick else FULL_SPANS
    # A query over OTLP JSON re-reads every file (GBs at full size): a few repeats are plenty.
    repeats = 2 if quick else 3
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-query-"))
    try:
        started = time.perf_counter()
        store, files, n_runs = _write_corpus(n_spans, scratch)
        build_s = time.perf_counter() - started
        print(f"bench_query: corpus of {n_spans:,} spans written in {build_s:.0f} s", file=sys.stderr)
        parquet_bytes = _bytes(list((store / "spans").rglob("*.parquet")))
        json_bytes = _bytes([Path(f) for f in files])

        started = time.perf_counter()
        traces = agentotel.open(store)
        open_s = time.perf_counter() - started
        con = duckdb.connect()
        for key, name in _VARIABLES.items():
            con.execute(f"SET VARIABLE {name} = $v", {"v": key})
        con.execute("CREATE TEMP TABLE _files AS SELECT unnest($f) AS f", {"f": files})
        con.sql(_OTLP_SPANS, params={"files": files}).create_view("otlp_spans")

        # Two runs of the same agent, picked reproducibly among the mid-sized ones.
        rows = traces.sql("SELECT run_id, trace_id, name, steps FROM runs WHERE parent_run_id IS NULL "
                          "AND steps BETWEEN 40 AND 150 ORDER BY run_id").fetchall()
        rng = random.Random(0)
        by_name: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_name.setdefault(row[2], []).append(row)
        pool = max(by_name.values(), key=len)
        (run_a, trace_a, _, steps_a), (run_b, trace_b, _, steps_b) = rng.sample(pool, 2)

        samples = interleave(
            {
                "runs": lambda: traces.runs().to_arrow_table(),
                "runs_otlp": lambda: con.sql(_OTLP_RUNS).to_arrow_table(),
                "trajectory": lambda: traces.trajectory(run_a),
                "trajectory_otlp": lambda: con.sql(_OTLP_TRAJECTORY, params={"trace": trace_a}).to_arrow_table(),
                "diff": lambda: traces.diff(run_a, run_b),
                "diff_otlp": lambda: (con.sql(_OTLP_TRAJECTORY, params={"trace": trace_a}).to_arrow_table(),
                                      con.sql(_OTLP_TRAJECTORY, params={"trace": trace_b}).to_arrow_table()),
            },
            repeats=repeats,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    ms = {name: sample.scaled(1e3) for name, sample in samples.items()}
    described = (f"corpus seed={corpus.DEFAULT_SEED}, {n_spans:,} spans in {n_runs:,} runs (chat history capped at "
                 f"{CONTEXT_CHARS:,} chars); store {parquet_bytes / 1e6:,.0f} MB Parquet, OTLP JSON "
                 f"{json_bytes / 1e6:,.0f} MB in {len(files)} files")

    def row(name: str, metric: str, target_ms: float | None, notes: str) -> Result:
        ours, peer = ms[name], ms[f"{name}_otlp"]
        met = None
        target = None
        if target_ms is not None:
            target = f"< {target_ms:g} ms and >= 10x faster than DuckDB over OTLP JSON"
            met = ours.median < target_ms and peer.median >= 10 * ours.median
        else:
            target = ">= 10x faster than DuckDB over OTLP JSON"
            met = peer.median >= 10 * ours.median
        return Result(benchmark=f"query: {name}", metric=metric, unit="ms", ours=ours.median,
                      peer_name="DuckDB read_json over OTLP JSON files", peer=peer.median, target=target, met=met,
                      notes=notes, corpus=described, ours_spread=ours.spread, peer_spread=peer.spread,
                      repeats=repeats)

    return [
        row("runs", "list every run (one row per run, aggregated)", None,
            f"agentotel.open() itself took {open_s * 1e3:.0f} ms (file validation, cold); corpus written in {build_s:.0f} s"),
        row("trajectory", f"rebuild one run ({steps_a} steps), by run id", 100, "resolve the run id, fetch its trace, build steps"),
        row("diff", f"diff two runs ({steps_a} and {steps_b} steps)", 200,
            "ours includes alignment; the OTLP side only fetches the two runs"),
    ]
