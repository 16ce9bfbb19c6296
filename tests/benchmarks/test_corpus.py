"""The benchmark corpus: deterministic for a seed, real SDK spans, shaped like agent runs."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from opentelemetry.sdk.resources import SERVICE_NAME
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from agentotel import semconv as sc
from benchmarks import corpus

N = 3_000


@pytest.fixture(scope="module")
def spans() -> list[ReadableSpan]:
    return corpus.generate(N, seed=11)


def _key(span: ReadableSpan) -> tuple:
    return (
        span.context.trace_id,
        span.context.span_id,
        span.parent.span_id if span.parent else None,
        span.name,
        span.kind,
        span.start_time,
        span.end_time,
        span.status.status_code,
        tuple(sorted((k, str(v)) for k, v in span.attributes.items())),
        tuple((e.name, e.timestamp) for e in span.events),
        span.resource.attributes.get(SERVICE_NAME),
    )


def test_same_seed_same_corpus_other_seed_other_corpus(spans):
    again = corpus.generate(N, seed=11)
    assert [_key(s) for s in again] == [_key(s) for s in spans]
    other = corpus.generate(N, seed=12)
    assert [_key(s) for s in other[:50]] != [_key(s) for s in spans[:50]]


def test_exact_size_in_chunks_of_whole_runs(spans):
    chunks = list(corpus.iter_chunks(N, seed=11, chunk_size=1_000))
    assert sum(len(c) for c in chunks) == N == len(spans)
    assert len(chunks) >= 3
    # A run never straddles two chunks: every chunk ends with a root span (the last span a run ends).
    for chunk in chunks:
        assert chunk[-1].parent is None and chunk[-1].name.startswith("invoke_agent ")
    assert all(isinstance(s, ReadableSpan) for s in spans)


def test_runs_have_a_root_and_10_to_200_steps(spans):
    by_trace = defaultdict(list)
    for span in spans:
        by_trace[span.context.trace_id].append(span)
    sizes = []
    for members in by_trace.values():
        roots = [s for s in members if s.parent is None]
        assert len(roots) == 1 and roots[0].name.startswith("invoke_agent ")
        assert roots[0].kind is SpanKind.INTERNAL
        ids = {s.context.span_id for s in members}
        assert all(s.parent is None or s.parent.span_id in ids for s in members)
        run_ids = {s.attributes[sc.AGENTOTEL_RUN_ID] for s in members}
        sizes.append(len(members) - 1)
        # Attribution is stamped on every span of the run (sub-runs have their own run id).
        assert all(s.attributes[sc.ENDUSER_ID] == roots[0].attributes[sc.ENDUSER_ID] for s in members)
        assert roots[0].attributes[sc.AGENTOTEL_RUN_ID] in run_ids
    assert min(sizes[:-1]) >= corpus.MIN_STEPS and max(sizes) <= corpus.MAX_STEPS
    assert len(set(sizes)) > 5


def test_chats_resend_a_growing_history_in_the_genai_shape(spans):
    by_run = defaultdict(list)
    for span in spans:
        if span.attributes.get(sc.GEN_AI_OPERATION_NAME) == "chat" and span.status.status_code is not StatusCode.ERROR:
            by_run[span.attributes[sc.AGENTOTEL_RUN_ID]].append(span)
    grown = 0
    for chats in by_run.values():
        chats.sort(key=lambda s: s.start_time)
        assert all(s.kind is SpanKind.CLIENT and s.name == f"chat {s.attributes[sc.GEN_AI_REQUEST_MODEL]}" for s in chats)
        first = json.loads(chats[0].attributes[sc.GEN_AI_INPUT_MESSAGES])
        assert first[-1]["role"] == "user" and first[-1]["parts"][0]["type"] == "text"
        for earlier, later in zip(chats, chats[1:]):
            a = earlier.attributes[sc.GEN_AI_INPUT_MESSAGES]
            b = later.attributes[sc.GEN_AI_INPUT_MESSAGES]
            if b.startswith(a[:-1]):  # the same prefix re-sent, plus the new turn
                grown += 1
        output = json.loads(chats[0].attributes[sc.GEN_AI_OUTPUT_MESSAGES])
        assert output[0]["role"] == "assistant" and output[0]["finish_reason"] in ("tool_call", "stop")
        assert chats[0].attributes[sc.GEN_AI_TOOL_DEFINITIONS] == chats[-1].attributes[sc.GEN_AI_TOOL_DEFINITIONS]
        assert chats[0].attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] > 0
    assert grown > 100


def test_tool_calls_match_the_model_requests_and_some_fail(spans):
    requested = {}
    for span in spans:
        if span.attributes.get(sc.GEN_AI_OPERATION_NAME) == "chat" and sc.GEN_AI_OUTPUT_MESSAGES in span.attributes:
            for part in json.loads(span.attributes[sc.GEN_AI_OUTPUT_MESSAGES])[0]["parts"]:
                if part["type"] == "tool_call":
                    requested[part["id"]] = part
    tools = [s for s in spans if s.attributes.get(sc.GEN_AI_OPERATION_NAME) == "execute_tool"]
    assert tools
    for span in tools:
        call = requested[span.attributes[sc.GEN_AI_TOOL_CALL_ID]]
        assert call["name"] == span.attributes[sc.GEN_AI_TOOL_NAME]
        assert json.loads(span.attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS]) == call["arguments"]
    failed = [s for s in tools if s.status.status_code is StatusCode.ERROR]
    assert 0.005 < len(failed) / len(tools) < 0.08
    assert all(s.attributes[sc.ERROR_TYPE] and s.events[0].name == "exception" for s in failed)
    results = sorted(len(s.attributes[sc.GEN_AI_TOOL_CALL_RESULT]) for s in tools if sc.GEN_AI_TOOL_CALL_RESULT in s.attributes)
    assert results[0] < 100 and results[-1] > 10_000


def test_variety_and_registered_attribute_names_only(spans):
    data = corpus.stats(spans)
    assert data["spans"] == N
    assert {"invoke_agent", "chat", "execute_tool", "retrieval", "embeddings"} <= set(data["spans_by_type"])
    assert data["users"] >= 5 and data["sessions"] >= 5 and len(data["models"]) >= 4
    assert data["payload_bytes_by_type"]["chat"]["p50"] > 1_000
    for span in spans:
        assert set(span.attributes) <= set(sc.ATTRIBUTE_TYPES), set(span.attributes) - set(sc.ATTRIBUTE_TYPES)
    retrieval = next(s for s in spans if s.attributes.get(sc.GEN_AI_OPERATION_NAME) == "retrieval")
    documents = json.loads(retrieval.attributes[sc.GEN_AI_RETRIEVAL_DOCUMENTS])
    assert documents and {"id", "score", "content"} <= set(documents[0])
    text = corpus.format_stats(data, title="t")
    assert "| chat |" in text and "p99" in text


def test_cached_store_holds_the_corpus_and_is_reused(tmp_path):
    import duckdb

    directory = corpus.cached_store(600, seed=3, cache_dir=tmp_path)
    files = sorted(directory.glob("spans/date=*/*.parquet"))
    assert files and (directory / ".complete").exists()
    [(count, runs)] = duckdb.sql(
        f"select count(*), count(distinct run_id) from read_parquet('{directory}/spans/**/*.parquet')"
    ).fetchall()
    assert count == 600 and runs >= 3
    assert corpus.cached_store(600, seed=3, cache_dir=tmp_path) == directory
    assert sorted(directory.glob("spans/date=*/*.parquet")) == files  # reused, not rebuilt


def test_the_million_span_corpus_copies_share_no_id_with_the_original_or_each_other(tmp_path):
    """bench_query and bench_diagnosis build a million spans from copies of one generated corpus; a copy
    whose ids equalled the original's made one run id name two executions (and doubled its history)."""
    import duckdb
    import pyarrow.parquet as pq

    from agentotel.store import ParquetSpanExporter, parquet_files
    from benchmarks.bench_query import _COPY_SQL, _VARIABLES, _copy_json
    from benchmarks.bench_store import _otlp_json_line

    generated = corpus.generate(120, seed=5)
    exporter = ParquetSpanExporter(tmp_path / "store")
    exporter.export(generated)
    exporter.shutdown()
    base = pq.read_table(parquet_files(tmp_path / "store")[0], partitioning=None)
    con = duckdb.connect()
    con.register("base", base)
    for key, name in _VARIABLES.items():
        con.execute(f"SET VARIABLE {name} = $v", {"v": key})
    line = _otlp_json_line(generated)
    seen_spans: set[str] = set()
    seen_runs: set[str] = set()
    for copy in range(16):
        table = con.sql(_COPY_SQL, params={"copy": copy, "shift": 0}).to_arrow_table()
        spans = table.column("span_id").to_pylist()
        runs = {r for r in table.column("run_id").to_pylist() if r}
        assert len(set(spans)) == len(spans) and not seen_spans & set(spans), copy
        assert runs and not seen_runs & runs, copy
        seen_spans |= set(spans)
        seen_runs |= runs
        if copy not in (0, 1, 15):
            continue
        # The OTLP JSON side of the same copy names the same spans.
        document = json.loads(_copy_json(line, copy, 0))
        json_spans = {s["spanId"] for r in document["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]}
        assert json_spans == set(spans), copy
    assert table.column("parent_span_id").null_count == base.column("parent_span_id").null_count
