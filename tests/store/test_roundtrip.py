"""Spans made by the real OTel SDK, through ParquetSpanExporter, read back with pyarrow and DuckDB."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from agentotel import semconv as sc
from agentotel.store import SCHEMA_VERSION, SPAN_SCHEMA, ParquetSpanExporter, parquet_files, read_wal
from tests.store.conftest import T0

MESSAGES_IN = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Where is my parcel?"}]}])
MESSAGES_OUT = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "On its way."}]}])


def _agent_run(tracer):
    """A run with a model call (an event, a link, an error) and a tool call, as an instrumented agent makes them."""
    root = tracer.start_span("invoke_agent triage", kind=SpanKind.INTERNAL, start_time=T0)
    root.set_attributes(
        {
            sc.GEN_AI_OPERATION_NAME: "invoke_agent",
            sc.GEN_AI_AGENT_NAME: "triage",
            sc.AGENTOTEL_RUN_ID: "run-1",
            sc.ENDUSER_ID: "alice",
            sc.GEN_AI_CONVERSATION_ID: "session-9",
            sc.AGENTOTEL_RUN_TASK: "find the parcel",
            sc.AGENTOTEL_RUN_OUTPUT: "on its way",
        }
    )
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    chat = tracer.start_span(
        "chat gpt-4o",
        context=ctx,
        kind=SpanKind.CLIENT,
        start_time=T0 + 1_000,
        links=[Link(root.get_span_context(), {"link.reason": "retry-of", "attempt": 2})],
    )
    chat.set_attributes(
        {
            sc.GEN_AI_OPERATION_NAME: "chat",
            sc.GEN_AI_PROVIDER_NAME: "openai",
            sc.GEN_AI_REQUEST_MODEL: "gpt-4o",
            sc.GEN_AI_RESPONSE_MODEL: "gpt-4o-2024-08-06",
            sc.GEN_AI_USAGE_INPUT_TOKENS: 120,
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: 15,
            sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: 100,
            sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: 7,
            sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: 3,
            sc.AGENTOTEL_COST_USD: 0.00125,
            sc.GEN_AI_RESPONSE_FINISH_REASONS: ("stop", "length"),
            sc.GEN_AI_INPUT_MESSAGES: MESSAGES_IN,
            sc.GEN_AI_OUTPUT_MESSAGES: MESSAGES_OUT,
            sc.GEN_AI_REQUEST_TEMPERATURE: 0.5,
            sc.GEN_AI_REQUEST_STREAM: True,
            sc.GEN_AI_REQUEST_STOP_SEQUENCES: ("\n\n", "END"),
            sc.SERVER_PORT: 443,
            sc.AGENTOTEL_RUN_ID: "run-1",
            sc.ERROR_TYPE: "RateLimitError",
        }
    )
    chat.add_event("gen_ai.retry", {"attempt": 1, "delay_s": 0.25}, timestamp=T0 + 2_000)
    chat.set_status(Status(StatusCode.ERROR, "429 Too Many Requests"))
    chat.end(end_time=T0 + 5_000)
    tool = tracer.start_span("execute_tool lookup", context=ctx, start_time=T0 + 6_000)
    tool.set_attributes(
        {
            sc.GEN_AI_OPERATION_NAME: "execute_tool",
            sc.GEN_AI_TOOL_NAME: "lookup",
            sc.GEN_AI_TOOL_CALL_ID: "call_1",
            sc.GEN_AI_TOOL_CALL_ARGUMENTS: '{"parcel":"P-1"}',
            sc.GEN_AI_TOOL_CALL_RESULT: '{"status":"shipped"}',
        }
    )
    tool.set_status(Status(StatusCode.OK))
    tool.end(end_time=T0 + 7_000)
    root.end(end_time=T0 + 8_000)


TRACE = f"{(0xABC << 100) + 1:032x}"
ROOT, CHAT, TOOL = (f"{i:016x}" for i in (1, 2, 3))
RESOURCE = {
    "service.name": "store-tests",
    "deployment.environment": "test",
}

EXPECTED = {
    CHAT: {
        "trace_id": TRACE,
        "span_id": CHAT,
        "parent_span_id": ROOT,
        "name": "chat gpt-4o",
        "kind": "CLIENT",
        "status_code": "ERROR",
        "status_message": "429 Too Many Requests",
        "start_time": T0 + 1_000,
        "end_time": T0 + 5_000,
        "duration_ns": 4_000,
        "service_name": "store-tests",
        "scope_name": "tests.store",
        "scope_version": "1.2.3",
        "run_id": "run-1",
        "session_id": None,
        "user_id": None,
        "agent_name": None,
        "operation": "chat",
        "provider": "openai",
        "request_model": "gpt-4o",
        "response_model": "gpt-4o-2024-08-06",
        "tool_name": None,
        "tool_call_id": None,
        "input_tokens": 120,
        "output_tokens": 15,
        "cache_read_tokens": 100,
        "cache_write_tokens": 7,
        "reasoning_tokens": 3,
        "cost_usd": 0.00125,
        "finish_reasons": ["stop", "length"],
        "error_type": "RateLimitError",
        "dialect": "genai",  # a scope other than agentotel's: its GenAI attributes are the rules that applied
        "input": MESSAGES_IN,
        "output": MESSAGES_OUT,
        # The first call of its conversation: its input whole, nothing to refer to (store/messages.py).
        "input_chain": None,
        "input_offset": None,
        "input_added": None,
        "input_ranges": None,
        "input_borrowed": None,
        "attributes": {
            sc.GEN_AI_OPERATION_NAME: "chat",
            sc.GEN_AI_PROVIDER_NAME: "openai",
            sc.GEN_AI_REQUEST_MODEL: "gpt-4o",
            sc.GEN_AI_RESPONSE_MODEL: "gpt-4o-2024-08-06",
            sc.GEN_AI_USAGE_INPUT_TOKENS: "120",
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: "15",
            sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: "100",
            sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: "7",
            sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: "3",
            sc.AGENTOTEL_COST_USD: "0.00125",
            sc.GEN_AI_RESPONSE_FINISH_REASONS: '["stop","length"]',
            sc.GEN_AI_REQUEST_TEMPERATURE: "0.5",
            sc.GEN_AI_REQUEST_STREAM: "true",
            sc.GEN_AI_REQUEST_STOP_SEQUENCES: '["\\n\\n","END"]',
            sc.SERVER_PORT: "443",
            sc.AGENTOTEL_RUN_ID: "run-1",
            sc.ERROR_TYPE: "RateLimitError",
        },
        "resource_attributes": RESOURCE,
        "events": [{"time": T0 + 2_000, "name": "gen_ai.retry", "attributes": {"attempt": "1", "delay_s": "0.25"}}],
        "links": [{"trace_id": TRACE, "span_id": ROOT, "attributes": {"link.reason": "retry-of", "attempt": "2"}}],
    },
    ROOT: {
        "parent_span_id": None,
        "kind": "INTERNAL",
        "status_code": "UNSET",
        "status_message": None,
        "duration_ns": 8_000,
        "run_id": "run-1",
        "user_id": "alice",
        "session_id": "session-9",
        "agent_name": "triage",
        "operation": "invoke_agent",
        "input": "find the parcel",
        "output": "on its way",
        "input_tokens": None,
        "cost_usd": None,
        "finish_reasons": None,
        "events": [],
        "links": [],
    },
    TOOL: {
        "parent_span_id": ROOT,
        "status_code": "OK",
        "tool_name": "lookup",
        "tool_call_id": "call_1",
        "input": '{"parcel":"P-1"}',
        "output": '{"status":"shipped"}',
        "attributes": {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: "lookup", sc.GEN_AI_TOOL_CALL_ID: "call_1"},
    },
}


def _normalise(row: dict) -> dict:
    """pyarrow and DuckDB rows in one comparable shape: maps as dicts, times as integer ns."""
    out = dict(row)
    for key in ("attributes", "resource_attributes"):
        if isinstance(out[key], list):
            out[key] = dict(out[key])
    for key in ("events", "links"):
        out[key] = [
            {**item, "attributes": dict(item["attributes"]) if isinstance(item["attributes"], list) else item["attributes"]}
            for item in out[key] or []
        ]
    return out


@pytest.fixture
def stored(tmp_path, sdk):
    tracer, finished = sdk
    _agent_run(tracer)
    exporter = ParquetSpanExporter(tmp_path)
    assert exporter.export(finished()) is SpanExportResult.SUCCESS
    exporter.shutdown()
    return tmp_path


def _pyarrow_rows(directory) -> dict[str, dict]:
    table = pa.concat_tables(pq.read_table(f) for f in parquet_files(directory))
    # Times as integer ns, so nothing is lost in conversion to Python.
    for name in ("start_time", "end_time"):
        table = table.set_column(table.schema.get_field_index(name), name, table.column(name).cast(pa.int64()))
    event = pa.struct([("time", pa.int64()), ("name", pa.string()), ("attributes", pa.map_(pa.string(), pa.string()))])
    table = table.set_column(table.schema.get_field_index("events"), "events", table.column("events").cast(pa.list_(event)))
    rows = table.to_pylist()
    return {row["span_id"]: _normalise(row) for row in rows}


def test_every_column_round_trips_through_pyarrow(stored):
    rows = _pyarrow_rows(stored)
    assert set(rows) == {ROOT, CHAT, TOOL}
    assert set(rows[CHAT]) == set(SPAN_SCHEMA.names)
    assert rows[CHAT] == EXPECTED[CHAT]  # every column of the richest span
    for span_id in (ROOT, TOOL):
        for column, value in EXPECTED[span_id].items():
            assert rows[span_id][column] == value, (span_id, column)


def test_files_carry_schema_version_zstd_bloom_filter_and_time_order(stored):
    (path,) = parquet_files(stored)
    assert "/spans/date=2026-01-01/" in path
    metadata = pq.read_metadata(path)
    assert metadata.metadata[b"agentotel.schema_version"] == str(SCHEMA_VERSION).encode()
    column = metadata.row_group(0).column(metadata.schema.names.index("trace_id"))
    assert column.compression == "ZSTD"
    assert column.bloom_filter_offset is not None and column.bloom_filter_offset > 0
    # No page index: no reader uses one, and in a small file it is a twentieth of the bytes.
    assert not metadata.row_group(0).column(0).has_offset_index
    # Times and random ids in the encodings measured smallest for them; payloads without a dictionary.
    encodings = {metadata.row_group(0).column(i).path_in_schema: metadata.row_group(0).column(i).encodings
                 for i in range(metadata.num_columns)}
    assert "DELTA_BINARY_PACKED" in encodings["start_time"] and "DELTA_BINARY_PACKED" in encodings["duration_ns"]
    assert "DELTA_LENGTH_BYTE_ARRAY" in encodings["span_id"]
    # A file this small has no dictionary at all (test_dictionaries_only_where_they_pay).
    assert not any("RLE_DICTIONARY" in e for e in encodings.values())
    # A column without a value (no model call here is a continuation, so input_ranges is NULL in every row)
    # is not compressed: a zstd frame outweighs its few bytes of levels. Every column with a value is.
    codecs = {metadata.row_group(0).column(i).path_in_schema: metadata.row_group(0).column(i).compression
              for i in range(metadata.num_columns)}
    assert {codecs[leaf] for leaf in codecs if leaf.startswith("input_ranges.")} == {"UNCOMPRESSED"}
    assert codecs["links.list.element.trace_id"] == codecs["output"] == codecs["input_tokens"] == "ZSTD"
    assert pq.read_table(path, schema=SPAN_SCHEMA).schema.equals(SPAN_SCHEMA)
    # The Parquet types alone give SPAN_SCHEMA back (tz-aware ns timestamps, maps, structs): the footer
    # does not carry the Arrow schema again.
    assert b"ARROW:schema" not in metadata.metadata
    assert pq.read_table(path).schema.remove_metadata().equals(SPAN_SCHEMA.remove_metadata())
    starts = pq.read_table(path, columns=["start_time"]).column(0).cast(pa.int64()).to_pylist()
    assert starts == sorted(starts)
    probe = duckdb.sql(f"select bloom_filter_excludes from parquet_bloom_probe('{path}', 'trace_id', 'ffff')").fetchall()
    assert probe == [(True,)]


def test_min_max_statistics_are_kept_for_filtered_columns_only(stored):
    """Queries prune row groups by time, ids and the promoted columns; payloads and maps carry no min/max
    (kilobytes of text per page header and page index, for no query)."""
    (path,) = parquet_files(stored)
    group = pq.read_metadata(path).row_group(0)
    has = {group.column(i).path_in_schema: group.column(i).is_stats_set for i in range(group.num_columns)}
    assert all(has[c] for c in ("trace_id", "span_id", "start_time", "run_id", "operation", "input_tokens",
                                "finish_reasons.list.element"))
    assert not any(v for k, v in has.items() if k.split(".")[0] in ("input", "output", "attributes", "events"))
    stats = group.column(list(has).index("start_time")).statistics
    assert stats.has_min_max and stats.min <= stats.max


def test_duckdb_reads_the_same_rows_by_glob(stored):
    con = duckdb.connect()
    relation = con.sql(
        "select * replace (epoch_ns(start_time) as start_time, epoch_ns(end_time) as end_time, "
        "list_transform(events, lambda e: {'time': epoch_ns(e.time), 'name': e.name, 'attributes': e.attributes}) as events) "
        f"from read_parquet('{stored}/spans/**/*.parquet', hive_partitioning=false) order by span_id"
    )
    names = relation.columns
    rows = {}
    for values in relation.fetchall():
        row = dict(zip(names, values))
        rows[row["span_id"]] = _normalise(row)
    assert rows == _pyarrow_rows(stored)
    assert rows[CHAT]["events"][0]["time"] == T0 + 2_000
    hive = con.sql(f"select distinct date::varchar from read_parquet('{stored}/spans/**/*.parquet', hive_partitioning=true)").fetchall()
    assert hive == [("2026-01-01",)]


def test_wal_holds_spans_until_folded(tmp_path, sdk):
    tracer, finished = sdk
    _agent_run(tracer)
    exporter = ParquetSpanExporter(tmp_path, wal_max_bytes=1 << 30, wal_max_age_s=3600)
    assert exporter.export(finished()) is SpanExportResult.SUCCESS
    assert parquet_files(tmp_path) == []
    wal = read_wal(tmp_path)
    assert sorted(wal.column("span_id").to_pylist()) == [ROOT, CHAT, TOOL]
    exporter.shutdown()
    assert read_wal(tmp_path).num_rows == 0
    assert len(parquet_files(tmp_path)) == 1
    assert list((tmp_path / "wal").iterdir()) == []  # no WAL segment, no writer lock left behind


def test_dictionaries_only_where_they_pay(tmp_path, sdk):
    """A file of a few hundred spans has no dictionary (each is a page of its own, more than it saves); a larger
    one has them, but not for a column of NULLs only. Either way every reader gets the same values back."""
    tracer, finished = sdk
    for i in range(300):
        span = tracer.start_span(f"search-{i % 3}", kind=SpanKind.CLIENT, start_time=T0 + i * 1000)
        span.set_attributes({sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: ["grep", "read"][i % 2],
                             sc.AGENTOTEL_RUN_ID: f"run-{i // 100}", "i": i})
        span.end(end_time=T0 + i * 1000 + 500)
    spans = finished()
    encodings = {}
    for label, count in (("small", 255), ("large", 300)):
        exporter = ParquetSpanExporter(tmp_path / label)
        exporter.export(spans[:count])
        exporter.shutdown()
        (path,) = parquet_files(tmp_path / label)
        group = pq.read_metadata(path).row_group(0)
        encodings[label] = {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}
        got = duckdb.sql(f"select span_id, name, tool_name, run_id, attributes['i'], events from read_parquet('{path}') "
                         "order by start_time").fetchall()
        assert got == [(f"{s.context.span_id:016x}", s.name, s.attributes[sc.GEN_AI_TOOL_NAME], s.attributes[sc.AGENTOTEL_RUN_ID],
                        str(s.attributes["i"]), []) for s in spans[:count]]
    assert not any("RLE_DICTIONARY" in e for e in encodings["small"].values())
    large = encodings["large"]
    assert all("RLE_DICTIONARY" in large[c] for c in ("name", "tool_name", "run_id", "attributes.key_value.value"))
    assert "RLE_DICTIONARY" not in large["request_model"] and "RLE_DICTIONARY" not in large["events.list.element.name"]


def test_instructions_that_vary_by_run_are_stored_once_per_file(tmp_path, sdk):
    """A model call's system instructions, sent again on every call of its run and different in each run (a
    template with the customer's name), are kept in the attributes map's dictionary once each, also when a
    file's runs hold more of them than pyarrow's 1 MiB default dictionary page. Readers get every call's
    instructions back."""
    from opentelemetry import trace

    block = hashlib.sha256(b"template").hexdigest()
    template = "".join(block := hashlib.sha256(block.encode()).hexdigest() for _ in range(125))  # 8 KB
    tracer, finished = sdk
    for run in range(300):  # 300 runs x 8 KB of distinct instructions: 2.4 MB
        root = tracer.start_span("invoke_agent support", start_time=T0 + run * 10**9)
        context = trace.set_span_in_context(root)
        for call in range(4):
            span = tracer.start_span("chat gpt-4o", context=context, kind=SpanKind.CLIENT, start_time=T0 + run * 10**9 + call)
            span.set_attributes({sc.GEN_AI_OPERATION_NAME: "chat", sc.AGENTOTEL_RUN_ID: f"run-{run}",
                                 sc.GEN_AI_SYSTEM_INSTRUCTIONS: json.dumps([{"type": "text", "content": f"{template} Customer {run}."}])})
            span.end(end_time=T0 + run * 10**9 + call + 1)
        root.end(end_time=T0 + run * 10**9 + 10)
    spans = finished()
    exporter = ParquetSpanExporter(tmp_path)
    exporter.export(spans)
    exporter.shutdown()
    (path,) = parquet_files(tmp_path)

    metadata = pq.read_metadata(path)
    values = [metadata.row_group(g).column(c) for g in range(metadata.num_row_groups)
              for c in range(metadata.num_columns) if metadata.row_group(g).column(c).path_in_schema == "attributes.key_value.value"]
    distinct = {s.attributes[sc.GEN_AI_SYSTEM_INSTRUCTIONS] for s in spans if sc.GEN_AI_SYSTEM_INSTRUCTIONS in s.attributes}
    # The column's values before compression: each run's instructions once (the dictionary), not once more per
    # later call in pages of plain values (a dictionary cut at 1 MiB: 2.4 -> 5.9 MB here).
    assert sum(v.total_uncompressed_size for v in values) < 1.2 * sum(len(i.encode()) for i in distinct)
    got = duckdb.sql(f"select span_id, attributes['{sc.GEN_AI_SYSTEM_INSTRUCTIONS}'] from read_parquet('{path}')").fetchall()
    assert sorted(got) == sorted((f"{s.context.span_id:016x}", s.attributes.get(sc.GEN_AI_SYSTEM_INSTRUCTIONS)) for s in spans)
