"""Files in spans/ that agentotel did not write: another tool's output, a hand-copied file, a column of
another type. Queries keep answering from the store's own files, the odd file is read where its values
can be, else named once in a warning; compaction leaves what it cannot read as spans where it is."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel.query import StoreWarning
from agentotel.store import compact, schema
from spanbuild import SpanStore, assistant

PARTITION = "date=2026-05-28"


def weather_run(store: SpanStore, run_id: str, *, user: str = "alice"):
    run = store.run("weather", run_id, user=user)
    run.llm(assistant(calls=[("c1", "get_weather", {"city": "Paris"})]))
    run.tool("get_weather", {"city": "Paris"}, {"temp": 20}, call_id="c1")
    run.llm(assistant("It is 20 degrees in Paris"))
    return run


@pytest.fixture
def store(tmp_path):
    s = SpanStore(tmp_path / "store")
    weather_run(s, "run-good1")
    weather_run(s, "run-good2", user="bob")
    s.write()
    return s


@pytest.fixture
def foreign(tmp_path) -> pa.Table:
    """One run's span rows as agentotel stores them (schema version and all), to be altered."""
    other = SpanStore(tmp_path / "other")
    weather_run(other, "run-foreign")
    return pa.Table.from_batches([other.batch()])


def _retyped(table: pa.Table, name: str, arrow: pa.DataType, fill=None) -> pa.Table:
    column = pa.array([fill] * table.num_rows, arrow) if fill is not None else table.column(name).cast(arrow)
    return table.set_column(table.schema.get_field_index(name), pa.field(name, arrow), column).replace_schema_metadata(
        table.schema.metadata)


def _answers(directory) -> tuple[list, list, list]:
    traces = agentotel.open(directory)
    runs = traces.sql("SELECT run_id, user_id, steps, input_tokens FROM runs ORDER BY run_id").fetchall()
    steps = [(s.type, s.tool_name, s.input_tokens) for s in traces.trajectory("run-good1").steps]
    return runs, steps, traces.sql("SELECT * FROM spans").columns


# (how the file differs, whether its run is still readable, the column a warning names when it is not)
ALTERED = {
    "tokens written as text": (lambda t: _retyped(t, "input_tokens", pa.string()), True, None),
    "timestamps without a time zone": (lambda t: _retyped(t, "end_time", pa.timestamp("ns")), True, None),
    "an extra column": (lambda t: t.append_column("other_tool_score", pa.array([0.5] * t.num_rows)), True, None),
    "attributes as one JSON string": (lambda t: _retyped(t, "attributes", pa.string(), "{}"), False, "attributes"),
    "start times as dates": (lambda t: _retyped(t, "start_time", pa.string(), "2026-05-28"), False, "start_time"),
}


@pytest.mark.parametrize("altered", ALTERED)
def test_a_file_with_a_column_of_another_type_never_fails_the_store_s_queries(store, foreign, altered):
    expected = _answers(store.directory)
    alter, readable, column = ALTERED[altered]
    path = store.directory / "spans" / PARTITION / "foreign.parquet"
    pq.write_table(alter(foreign), path)
    if readable:
        with warnings.catch_warnings():
            warnings.simplefilter("error", StoreWarning)  # read whole: nothing to warn of
            runs, steps, columns = _answers(store.directory)
        assert (steps, columns) == expected[1:]  # the extra column is no column of the views
        assert runs == sorted(expected[0] + [("run-foreign", "alice", 3, 200)])
    else:
        with pytest.warns(StoreWarning, match=rf"skipped {path}: cannot read it as spans \(its column {column} "):
            assert _answers(store.directory) == expected


@pytest.mark.parametrize("table", [
    pa.table({"user": ["alice", "bob"], "score": [1, 2]}),  # another tool's table in spans/
    pa.table({"span_id": ["ab" * 8], "name": ["chat"]}),  # spans without a trace or a start
])
def test_a_table_that_holds_no_spans_is_named_not_read_as_empty_spans(store, table):
    expected = _answers(store.directory)
    path = store.directory / "spans" / PARTITION / "notes.parquet"
    pq.write_table(table, path)
    with pytest.warns(StoreWarning, match=rf"skipped {path}: not a span table: it has no trace_id"):
        assert _answers(store.directory) == expected
        traces = agentotel.open(store.directory)
    assert traces.sql("SELECT count(*) FROM spans WHERE trace_id IS NULL").fetchall() == [(0,)]


def test_compaction_leaves_what_it_cannot_read_as_spans_where_it_is_and_merges_the_rest(store, foreign):
    second = SpanStore(store.directory)
    weather_run(second, "run-good3")
    second.write(name="part-0002.parquet")
    partition = store.directory / "spans" / PARTITION
    newer = foreign.append_column("later_column", pa.array(["x"] * foreign.num_rows)).replace_schema_metadata(
        {schema.METADATA_KEY: str(schema.SCHEMA_VERSION + 1).encode()})
    odd = {"empty.parquet": b"", "notes.parquet": b"name,score\nalice,1\n"}
    pq.write_table(pa.table({"user": ["alice"], "score": [1]}), partition / "other-tool.parquet")
    pq.write_table(newer, partition / "newer.parquet")
    odd.update({name: (partition / name).read_bytes() for name in ("other-tool.parquet", "newer.parquet")})
    for name, data in odd.items():
        (partition / name).write_bytes(data)

    compact(store.directory, grace_s=0)

    left = {p.name: p.read_bytes() for p in partition.glob("*.parquet")}
    merged = [name for name in left if name.startswith("c-")]
    assert {name: data for name, data in left.items() if name in odd} == odd  # every one, byte for byte
    assert len(merged) == 1 and set(left) == set(odd) | set(merged)
    with pytest.warns(StoreWarning):
        traces = agentotel.open(store.directory)
    assert [r[0] for r in traces.sql("SELECT run_id FROM runs ORDER BY run_id").fetchall()] == [
        "run-good1", "run-good2", "run-good3"]
    assert sorted(w.split(":")[0] for w in traces.warnings) == sorted(f"skipped {partition / name}" for name in odd)


def test_token_counts_whose_total_is_past_64_bits_never_fail_the_runs_listing(tmp_path):
    # Before: DuckDB's "Type INT128 with value ... can't be cast" for every runs listing of the store, from two
    # spans of one run whose (valid 64-bit) token counts a sender made up.
    s = SpanStore(tmp_path)
    weather_run(s, "run-good1")
    bogus = s.run("weather", "run-bogus")
    for text in ("one", "two"):
        bogus.llm(assistant(text), input_tokens=2**62 + 1)
    s.write()
    rows = dict(agentotel.open(tmp_path).sql("SELECT run_id, input_tokens FROM runs").fetchall())
    assert rows == {"run-good1": 200, "run-bogus": 2**63 - 1}  # as far as it goes
