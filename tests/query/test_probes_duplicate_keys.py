"""Probe: a file in spans/ whose attribute maps hold a key twice (Parquet's MAP allows it, pyarrow writes it;
agentotel never does). Every query answers, the key reads as its LAST value everywhere (as the OTLP receiver
and the SDK keep the last value set), and compaction keeps every entry of the file as it was."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel import semconv as sc
from agentotel.cli import main
from agentotel.store import compact
from agentotel.view import _data
from spanbuild import SpanStore, assistant

PARTITION = "date=2026-05-28"
# key -> the value written after the first one, in every map that holds the key
SECOND = {sc.AGENTOTEL_RUN_NAME: "forecast", sc.ENDUSER_ID: "mallory", "service.name": "other-service",
          "exception.type": "TimeoutError"}


def weather_run(store: SpanStore, run_id: str):
    run = store.run("weather", run_id)
    run.llm(assistant(calls=[("c1", "get_weather", {"city": "Paris"})]))
    run.tool("get_weather", {"city": "Paris"}, {"temp": 20}, call_id="c1")
    run.llm(assistant("It is 20 degrees in Paris"))
    return run


def _twice(entries):
    """A map's entries with each key of SECOND written again, after the others, with its second value."""
    if entries is None:
        return None
    return list(entries) + [(key, SECOND[key]) for key, _ in entries if key in SECOND]


def _with_keys_twice(table: pa.Table) -> pa.Table:
    for name in ("attributes", "resource_attributes"):
        field = table.schema.field(name)
        table = table.set_column(table.schema.get_field_index(name), field,
                                 pa.array([_twice(m) for m in table.column(name).to_pylist()], field.type))
    events = table.schema.field("events")
    rows = [[{**e, "attributes": _twice(e["attributes"])} for e in row or ()] for row in table.column("events").to_pylist()]
    rows[1] = [{"time": 0, "name": "exception", "attributes": [("exception.type", "ValueError")] * 1 + [
        ("exception.type", "TimeoutError")]}]
    return table.set_column(table.schema.get_field_index("events"), events, pa.array(rows, events.type))


@pytest.fixture
def store(tmp_path):
    own = SpanStore(tmp_path / "store")
    weather_run(own, "run-good")
    own.write()
    other = SpanStore(tmp_path / "other")
    weather_run(other, "run-twice")
    table = pa.Table.from_batches([other.batch()])
    pq.write_table(_with_keys_twice(table).replace_schema_metadata(table.schema.metadata),
                   own.directory / "spans" / PARTITION / "foreign.parquet")
    return own.directory


def _answers(directory) -> dict:
    traces = agentotel.open(directory)
    rows = traces.sql("SELECT span_id, attributes, resource_attributes, events FROM spans WHERE run_id = 'run-twice' "
                      "ORDER BY start_time").fetchall()
    trajectory = traces.trajectory("run-twice")
    diff = traces.diff("run-good", "run-twice")
    return {
        "runs": traces.sql("SELECT run_id, name FROM runs ORDER BY run_id").fetchall(),
        "root": rows[0][1],
        "resource": {r[2]["service.name"] for r in rows},
        "event": rows[1][3][0]["attributes"],
        "steps": [(s.type, s.tool_name) for s in trajectory.steps],
        "environment": traces.environment("run-twice"),
        "diverged": diff.first_divergence is not None,
        "view": [(s["type"], p["findings_error"]) for p in [_data.run_payload(traces, "run-twice")] for s in p["steps"]],
        "view diff": bool(_data.diff_payload(traces, "run-good", "run-twice")),
    }


def test_a_key_held_twice_reads_as_its_last_value_in_every_answer(store):
    # Before: "Map keys must be unique" from `SELECT attributes FROM spans`, from diff, env and the view,
    # while the runs listing read the run's name as the first value.
    answers = _answers(store)
    assert answers["runs"] == [("run-good", "weather"), ("run-twice", "forecast")]
    assert answers["root"][sc.AGENTOTEL_RUN_NAME] == "forecast" and answers["root"][sc.ENDUSER_ID] == "mallory"
    assert answers["resource"] == {"other-service"}
    assert answers["event"] == {"exception.type": "TimeoutError"}
    assert answers["steps"] == [("llm", None), ("tool", "get_weather"), ("llm", None)]
    assert answers["view"] == [("llm", None), ("tool", None), ("llm", None)] and answers["view diff"]
    assert isinstance(answers["environment"], dict)


@pytest.mark.parametrize("command", [("runs",), ("trajectory", "run-twice", "--full"), ("diff", "run-good", "run-twice"),
                                     ("check", "run-twice"),
                                     ("sql", "SELECT * FROM spans", "--format", "json")])
def test_every_command_answers_over_such_a_file(store, capsys, command):
    code = main([*command, "--dir", str(store)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "unique" not in captured.err


def test_compaction_keeps_every_entry_and_the_answers(store):
    before = _answers(store)
    entries = sorted(map(tuple, pq.read_table(store / "spans" / PARTITION / "foreign.parquet")
                         .column("attributes").to_pylist()))
    compact(store, grace_s=0)
    (merged,) = (store / "spans" / PARTITION).glob("c-*.parquet")
    kept = sorted(map(tuple, (m for m in pq.read_table(merged).column("attributes").to_pylist()
                              if (sc.AGENTOTEL_RUN_ID, "run-twice") in m)))
    assert kept == entries  # both values of each key: compaction drops nothing it was given
    assert _answers(store) == before


def test_a_store_of_our_file_and_a_foreign_one_reads_each_as_written_opened_again_too(store):
    # Our file reads as written beside the foreign one, whose repeated keys read as their last value: at the
    # first open (the files looked at) and the next (what the roots index saved about each file).
    for _ in range(2):
        assert agentotel.open(store).sql("SELECT run_id, name FROM runs ORDER BY run_id").fetchall() == [
            ("run-good", "weather"), ("run-twice", "forecast")]
        traces = agentotel.open(store)
        users = traces.sql("SELECT run_id, list_distinct(list(attributes[$k] ORDER BY span_id)) FROM spans "
                           "GROUP BY run_id ORDER BY run_id", params={"k": sc.ENDUSER_ID}).fetchall()
        assert users == [("run-good", ["alice"]), ("run-twice", ["mallory"])]
        root = traces.sql("SELECT attributes FROM spans WHERE run_id = 'run-twice' AND parent_span_id IS NULL").fetchall()[0][0]
        assert root[sc.AGENTOTEL_RUN_NAME] == "forecast"
        assert [s.tool_name for s in traces.trajectory("run-twice").steps] == [None, "get_weather", None]
        diff = traces.diff("run-good", "run-twice")
        assert (diff.a.run["name"], diff.b.run["name"]) == ("weather", "forecast")


def test_a_file_replaced_by_one_of_the_same_name_and_time_but_another_size_is_read_anew(tmp_path):
    # The index's cache of a file (its roots, and whether its maps repeat a key) must not answer for a file
    # of another size under the same name, even with the same modification time.
    own = SpanStore(tmp_path / "store")
    weather_run(own, "run-good")
    own.write()
    other = SpanStore(tmp_path / "other")
    weather_run(other, "run-twice")
    table = pa.Table.from_batches([other.batch()])
    path = own.directory / "spans" / PARTITION / "shared.parquet"
    pq.write_table(table, path)
    assert agentotel.open(own.directory).sql("SELECT run_id, name FROM runs ORDER BY run_id").fetchall() == [
        ("run-good", "weather"), ("run-twice", "weather")]
    before = path.stat()
    pq.write_table(_with_keys_twice(table).replace_schema_metadata(table.schema.metadata), path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size != before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    traces = agentotel.open(own.directory)
    assert traces.sql("SELECT run_id, name FROM runs ORDER BY run_id").fetchall() == [
        ("run-good", "weather"), ("run-twice", "forecast")]
    rows = traces.sql("SELECT attributes, resource_attributes FROM spans WHERE run_id = 'run-twice' "
                      "ORDER BY start_time").fetchall()
    assert rows[0][0][sc.ENDUSER_ID] == "mallory" and {r[1]["service.name"] for r in rows} == {"other-service"}
    assert [s.tool_name for s in traces.trajectory("run-twice").steps] == [None, "get_weather", None]
