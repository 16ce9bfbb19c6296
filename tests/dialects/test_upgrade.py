"""Files written before the dialect rules (schema version 1) read as steps, and `agentotel compact` rewrites them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel import store
from agentotel.store import schema
from test_dialects import IN, assert_weather_steps, glob_sum, only_run, produce

# What a version-1 writer filled for a span with no gen_ai.* attributes: none of these.
_DERIVED = [c for c in schema.SPAN_SCHEMA.names if c in schema._PROMOTED_NAMES or c in ("input", "output")]


def as_version_1(path: Path) -> None:
    """Rewrite a store file as the version-1 writer stored OpenInference spans: no dialect column, and
    nothing promoted from attributes it did not know."""
    table = pq.read_table(path)
    foreign = pc.invert(pc.fill_null(pc.equal(table.column("dialect"), "agentotel"), False))
    for name in _DERIVED:
        column = table.column(name)
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pc.if_else(foreign, pa.nulls(len(table), column.type), column))
    table = table.drop_columns(["dialect"]).replace_schema_metadata({schema.METADATA_KEY: b"1"})
    pq.write_table(table, path)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of OpenInference's LangChain spans, recorded once for the module (a recorder's process start and
    imports are most of its cost); each test rewrites a copy of it."""
    directory = tmp_path_factory.mktemp("recorded") / "store"
    produce(directory, instrumentations=["openinference-langchain"], flow="langchain", root_span="weather-job")
    return directory


def test_version_1_files_read_as_steps_and_compact_brings_them_up_to_date(tmp_path: Path, recorded: Path) -> None:
    directory = shutil.copytree(recorded, tmp_path / "store")
    [path] = map(Path, store.parquet_files(directory))
    as_version_1(path)
    assert glob_sum(directory, "input_tokens") is None  # as it was: nothing promoted

    traces = agentotel.open(directory)  # upgraded in memory
    assert_weather_steps(traces, only_run(traces))
    traces.close()

    store.compact(directory, grace_s=0)
    [path] = map(Path, store.parquet_files(directory))
    assert schema.file_version(pq.read_schema(path).metadata) == schema.SCHEMA_VERSION
    assert set(pq.read_table(path).column("dialect").to_pylist()) == {None, "openinference"}
    assert glob_sum(directory, "input_tokens") == IN
    traces = agentotel.open(directory)
    assert_weather_steps(traces, only_run(traces))


def test_a_version_1_file_with_nanosecond_event_times_is_read_not_skipped(tmp_path: Path) -> None:
    # Real spans have event times with nanoseconds no Python datetime holds: upgrading must not need one.
    import warnings

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("other.instrumentation")
    with tracer.start_as_current_span("llm call", start_time=1_767_607_412_391_548_070,
                                      attributes={"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                                                  "gen_ai.usage.prompt_tokens": 7}) as span:
        span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": "hi"}, timestamp=1_767_607_412_391_548_071)
    table = pa.Table.from_batches([store.spans_to_batch(exporter.get_finished_spans())])
    partition = tmp_path / "store" / "spans" / "date=2026-01-05"
    partition.mkdir(parents=True)
    path = partition / "1-old-1.parquet"
    pq.write_table(table.drop_columns(["dialect"]).replace_schema_metadata({schema.METADATA_KEY: b"1"}), path)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a skipped file is a StoreWarning
        traces = agentotel.open(tmp_path / "store")
    assert traces.sql("SELECT count(*), sum(input_tokens) FROM spans").fetchall() == [(1, 7)]


def test_many_version_1_rows_are_read_as_they_are_and_compact_is_advised(tmp_path: Path, recorded: Path, monkeypatch) -> None:
    # Upgrading in memory costs a Python pass at every open: a big older store is read directly instead.
    from agentotel.query import _sources

    directory = shutil.copytree(recorded, tmp_path / "store")
    [path] = map(Path, store.parquet_files(directory))
    as_version_1(path)
    rows = pq.read_metadata(path).num_rows
    monkeypatch.setattr(_sources, "_MIGRATE_IN_MEMORY_ROWS", rows - 1)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traces = agentotel.open(directory)
    assert any("run `agentotel compact`" in str(w.message) for w in caught)
    assert traces.sql("SELECT count(*), count(dialect) FROM spans").fetchall() == [(rows, 0)]  # read as stored
    traces.close()
    store.compact(directory, grace_s=0)  # upgrades them on disk, once
    traces = agentotel.open(directory)
    assert_weather_steps(traces, only_run(traces))
