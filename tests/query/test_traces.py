"""Traces over a store: views, runs, run names, bad input."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentotel
import agentotel.query
from agentotel import semconv as sc
from agentotel.query import RunNotFound, SQLError, StoreNotFound, StoreWarning
from spanbuild import MS, T0, SpanStore, assistant


def weather_run(store: SpanStore, run_id: str, *, user: str = "alice", result=None, error: str | None = None, **kw):
    run = store.run("weather", run_id, user=user, **kw)
    run.llm(assistant(calls=[("c1", "get_weather", {"city": "Paris"})]), http_child=True)
    run.tool("get_weather", {"city": "Paris"}, result if result is not None else {"temp": 20}, call_id="c1", error=error)
    run.llm(assistant("It is 20 degrees in Paris"))
    return run


@pytest.fixture
def store(tmp_path):
    s = SpanStore(tmp_path)
    weather_run(s, "run-aaaa1111")
    weather_run(s, "run-aaaa2222", user="bob", error="TimeoutError")
    s.write()
    return s


def test_views_are_available_to_sql(store):
    traces = agentotel.open(store.directory)
    counts = {v: traces.sql(f"SELECT count(*) FROM {v}").fetchall()[0][0]
              for v in ("spans", "llm_calls", "tool_calls", "retrievals", "runs", "steps")}
    # 2 runs x (root + 2 chat + 1 http + 1 tool)
    assert counts == {"spans": 10, "llm_calls": 4, "tool_calls": 2, "retrievals": 0, "runs": 2, "steps": 6}


def test_sql_returns_a_duckdb_relation_with_bound_parameters(store):
    traces = agentotel.open(store.directory)
    relation = traces.sql("SELECT run_id, user_id FROM runs WHERE user_id = $user", {"user": "bob"})
    assert relation.fetchall() == [("run-aaaa2222", "bob")]
    assert relation.to_arrow_table().num_rows == 1


def test_runs_summarise_each_run(store):
    rows = {r["run_id"]: r for r in agentotel.open(store.directory).runs().to_arrow_table().to_pylist()}
    ok, failed = rows["run-aaaa1111"], rows["run-aaaa2222"]
    assert (ok["name"], ok["user_id"], ok["status"], ok["trigger"]) == ("weather", "alice", "ok", "api")
    assert (ok["steps"], ok["model_calls"], ok["tool_calls"], ok["errors"]) == (3, 2, 1, 0)
    assert (ok["input_tokens"], ok["output_tokens"]) == (200, 40)
    assert ok["cost_usd"] == pytest.approx(0.002)
    assert ok["models"] == ["gpt-4o-mini"]
    assert failed["errors"] == 1 and failed["user_id"] == "bob"


def test_duplicate_spans_are_collapsed(store):
    store.write(name="again.parquet")  # the same spans delivered twice
    traces = agentotel.open(store.directory)
    assert traces.sql("SELECT count(*) FROM spans").fetchall()[0][0] == 10
    assert len(traces.trajectory("run-aaaa1111").steps) == 3


def test_a_span_stored_twice_keeps_its_latest_ending_copy_and_the_others_pass_whole(store):
    first = store.write(name="again.parquet")
    table = pq.read_table(first)
    tool = table.column("operation").to_pylist().index("execute_tool")
    later = table.column("end_time").to_pylist()
    later[tool] = later[tool] + dt.timedelta(seconds=5)
    status = table.column("status_message").to_pylist()
    status[tool] = "the later copy"
    table = table.set_column(table.schema.get_field_index("end_time"), table.schema.field("end_time"),
                             pa.array(later, table.schema.field("end_time").type))
    table = table.set_column(table.schema.get_field_index("status_message"), table.schema.field("status_message"),
                             pa.array(status, pa.string()))
    pq.write_table(table.slice(tool, 1), first, compression="zstd")  # only that span, later-ending, again
    traces = agentotel.open(store.directory)
    rows = traces.sql("SELECT span_id, status_message, count(*) OVER (PARTITION BY span_id) AS n FROM spans").fetchall()
    assert len(rows) == 10 and {n for _span, _status, n in rows} == {1}
    assert [status for span, status, _n in rows if span == table.column("span_id")[tool].as_py()] == ["the later copy"]
    assert traces.sql("SELECT count(*) FROM spans WHERE status_message IS DISTINCT FROM 'the later copy'").fetchall()[0][0] == 9
    (steps,) = traces.sql("SELECT steps FROM runs WHERE run_id = 'run-aaaa1111'").fetchall()[0]
    assert steps == 3


def test_a_run_is_named_by_id_trace_id_or_unambiguous_prefix(store):
    traces = agentotel.open(store.directory)
    trace_id = store.runs[1].trace_id
    assert traces.resolve("run-aaaa1111").run_id == "run-aaaa1111"
    assert traces.resolve("run-aaaa2").run_id == "run-aaaa2222"
    assert traces.resolve(trace_id).run_id == "run-aaaa2222"
    assert traces.resolve(trace_id[:8]).run_id == "run-aaaa2222"


def test_an_ambiguous_or_unknown_run_name_is_a_clear_error(store):
    traces = agentotel.open(store.directory)
    with pytest.raises(RunNotFound) as ambiguous:
        traces.trajectory("run-aaaa")
    assert ambiguous.value.candidates == ["run-aaaa1111", "run-aaaa2222"]
    assert "ambiguous" in str(ambiguous.value) and "run-aaaa1111" in str(ambiguous.value)
    with pytest.raises(RunNotFound, match="no run matches 'nope'"):
        traces.trajectory("nope")


def test_missing_and_empty_directories_are_clear_errors(tmp_path):
    with pytest.raises(StoreNotFound, match="no trace store at"):
        agentotel.open(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreNotFound, match="empty is not a trace store .*run an instrumented agent first"):
        agentotel.open(tmp_path / "empty")
    (tmp_path / "empty" / "wal").mkdir()  # what instrument() leaves before any span is written
    with pytest.raises(StoreNotFound, match="no spans in"):
        agentotel.open(tmp_path / "empty")
    with pytest.raises(StoreNotFound, match=r"wal is not a trace store .* did you mean .*empty\?"):
        agentotel.open(tmp_path / "empty" / "wal")  # a folder inside the store


def test_a_corrupt_parquet_file_is_skipped_with_a_warning_naming_it(store):
    bad = store.directory / "spans" / "date=2026-05-28" / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    with pytest.warns(StoreWarning, match="broken.parquet"):
        traces = agentotel.open(store.directory)
    assert any("broken.parquet" in w for w in traces.warnings)
    assert traces.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 2


def test_temp_files_are_not_read(store):
    (store.directory / "spans" / "date=2026-05-28" / ".tmp-123.parquet").write_bytes(b"half written")
    traces = agentotel.open(store.directory)
    assert traces.warnings == []


def test_an_older_schema_version_is_read_through_a_migration(store, tmp_path):
    # A span file rewritten by another tool: no agentotel version metadata, some columns missing.
    other = SpanStore(tmp_path / "other")
    weather_run(other, "run-old")
    table = pa.Table.from_batches([other.batch()]).drop_columns(["reasoning_tokens", "links", "events"])
    table = table.replace_schema_metadata(None)
    pq.write_table(table, store.directory / "spans" / "date=2026-05-28" / "legacy.parquet")
    traces = agentotel.open(store.directory)
    assert traces.warnings == []
    assert [s.tool_name for s in traces.trajectory("run-old").steps] == [None, "get_weather", None]
    assert traces.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 3


def test_a_newer_schema_version_is_skipped_with_a_warning(store):
    table = pa.Table.from_batches([store.batch()])
    table = table.replace_schema_metadata({b"agentotel.schema_version": b"99"})
    pq.write_table(table, store.directory / "spans" / "date=2026-05-28" / "future.parquet")
    with pytest.warns(StoreWarning, match="future.parquet.*newer"):
        agentotel.open(store.directory)


def test_sql_errors_are_duckdbs_message_on_one_line(store):
    traces = agentotel.open(store.directory)
    with pytest.raises(SQLError) as error:
        traces.sql("SELECT no_such_column FROM runs")
    assert "no_such_column" in str(error.value) and "\n" not in str(error.value)


def test_a_run_in_progress_is_listed_from_the_spans_already_recorded(tmp_path):
    store = SpanStore(tmp_path)
    run = weather_run(store, "run-live")
    run.finished = False  # the root span ends last: not written yet
    store.write()
    traces = agentotel.open(tmp_path)
    (row,) = traces.runs().to_arrow_table().to_pylist()
    assert (row["run_id"], row["status"], row["steps"]) == ("run-live", "running", 3)
    assert not any(s.orphan for s in traces.trajectory("run-live").steps)


def test_spans_recorded_outside_any_run_form_a_run_named_by_trace(tmp_path):
    store = SpanStore(tmp_path)
    run = store.run("x", "unused", user=None)
    run.finished = False
    root = run.raw("handle_request", {}, span_id="ab" * 8)
    run.spans[-1]["parent_span_id"] = None
    for span in run.spans:
        span["attributes"].pop(sc.AGENTOTEL_RUN_ID)
    run.llm(assistant("hello"), parent=root)
    for span in run.spans:
        span["attributes"].pop(sc.AGENTOTEL_RUN_ID, None)
    store.write()
    traces = agentotel.open(tmp_path)
    (row,) = traces.runs().to_arrow_table().to_pylist()
    assert row["run_id"] == run.trace_id and row["name"] == "handle_request" and row["steps"] == 1
    assert [s.type for s in traces.trajectory(run.trace_id[:10]).steps] == ["llm"]


def test_failed_tool_calls_for_a_user_last_week_and_their_cost_in_one_query(tmp_path):
    """The analyst's question, answered by one SQL query over the views."""
    store = SpanStore(tmp_path)
    now = T0 + 10 * 24 * 3600 * 1000 * MS
    weather_run(store, "old-fail", user="carol", error="TimeoutError", start=now - 9 * 24 * 3600 * 1000 * MS)
    weather_run(store, "recent-fail", user="carol", error="TimeoutError", start=now - 2 * 24 * 3600 * 1000 * MS)
    weather_run(store, "recent-ok", user="carol", start=now - 1 * 24 * 3600 * 1000 * MS)
    weather_run(store, "other-user", user="dave", error="KeyError", start=now - 1 * 24 * 3600 * 1000 * MS)
    store.write()
    traces = agentotel.open(tmp_path)
    rows = traces.sql(
        """
        SELECT t.run_id, t.tool_name, t.error_type, t.start_time,
               (SELECT sum(l.cost_usd) FROM llm_calls l WHERE l.run_id = t.run_id) AS run_cost_usd
        FROM tool_calls t
        WHERE t.user_id = $user AND t.status_code = 'ERROR'
          AND t.start_time >= $now - INTERVAL 7 DAY AND t.start_time < $now
        ORDER BY t.start_time
        """,
        {"user": "carol", "now": dt.datetime.fromtimestamp(now / 1e9, dt.timezone.utc)},
    ).fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [("recent-fail", "get_weather", "TimeoutError")]
    assert rows[0][4] == pytest.approx(0.002)


def test_every_sql_file_opens_with_a_comment_and_names_no_attribute():
    folder = Path(agentotel.query.__file__).parent / "sql"
    files = sorted(folder.glob("*.sql"))
    assert len(files) >= 10
    for path in files:
        text = path.read_text()
        assert text.startswith("-- "), path.name
        assert "gen_ai." not in text and "agentotel." not in text and "enduser." not in text, path.name


def test_other_parts_can_add_a_view(store):
    traces = agentotel.open(store.directory)
    traces.add_view("failed_tools", "SELECT run_id, tool_name FROM tool_calls WHERE status_code = 'ERROR'")
    assert traces.sql("SELECT * FROM failed_tools").fetchall() == [("run-aaaa2222", "get_weather")]
    with pytest.raises(agentotel.query.QueryError):
        traces.add_view("runs", "SELECT 1")


def test_the_roots_index_follows_the_files(store):
    index = store.directory / ".index" / "roots"
    agentotel.open(store.directory)
    assert len(list(index.glob("*.parquet"))) == 1
    other = SpanStore(store.directory)
    late = weather_run(other, "run-late")
    late.status = "ERROR"
    path = other.write(name="late.parquet")
    traces = agentotel.open(store.directory)
    assert len(list(index.glob("*.parquet"))) == 2
    assert traces.sql("SELECT status FROM runs WHERE run_id = 'run-late'").fetchall() == [("error",)]
    path.unlink()
    traces = agentotel.open(store.directory)
    assert len(list(index.glob("*.parquet"))) == 1  # the vanished file's entry is gone
    assert traces.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 2


def test_a_store_where_the_index_cannot_be_written_still_works(store):
    (store.directory / ".index").write_text("not a directory")  # writing the index fails, even as root
    traces = agentotel.open(store.directory)
    assert traces.sql("SELECT count(*) FROM runs WHERE name = 'weather'").fetchall()[0][0] == 2


def test_a_reader_never_misses_a_span_while_the_store_is_written_folded_and_compacted(tmp_path):
    """Readers open the store while a writer appends and folds and compaction merges: no span goes missing."""
    import threading

    from agentotel.store import StoreWriter, compact

    builder = SpanStore(tmp_path)
    writer = StoreWriter(tmp_path, wal_max_bytes=1)  # every append starts a new segment and folds the last
    written = 0
    done = threading.Event()
    seen: list[tuple[int, int]] = []

    def read() -> None:
        while not done.is_set():
            floor = written  # spans appended (durable) before this open: all of them must be visible
            count = agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0]
            seen.append((floor, count))

    def squash() -> None:
        while not done.is_set():
            compact(tmp_path)

    threads = [threading.Thread(target=read), threading.Thread(target=squash)]
    try:
        for i in range(30):
            run = builder.run("agent", f"run-{i:04d}")
            run.tool("get_weather", {"city": "Paris"}, {"temp": i})
            batch = builder.batch([run])
            writer.append(batch)
            written += batch.num_rows
            if i == 2:
                for thread in threads:
                    thread.start()
    finally:
        done.set()
        for thread in threads:
            if thread.is_alive() or thread.ident:
                thread.join()
        writer.close()
    assert seen, "the reader never ran"
    assert all(count >= floor for floor, count in seen), [s for s in seen if s[1] < s[0]][:3]
    assert agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0] == written


def test_an_open_traces_follows_a_compaction_that_removed_its_files(tmp_path):
    from agentotel.store import compact

    s = SpanStore(tmp_path)
    for i in range(3):
        run = s.run("r", f"run-{i}")
        run.tool("t", {"i": i}, {"ok": True})
        s.write([run])
    traces = agentotel.open(tmp_path)
    before = traces.sql("SELECT count(*) FROM spans").fetchall()[0][0]
    traces.add_view("tool_names", "SELECT DISTINCT tool_name FROM tool_calls")
    compact(tmp_path, grace_s=0)  # every file the snapshot read is gone now
    assert traces.sql("SELECT count(*) FROM spans").fetchall()[0][0] == before
    assert traces.sql("SELECT * FROM tool_names").fetchall() == [("t",)]
    assert [s.tool_name for s in traces.trajectory("run-1").steps if s.type == "tool"] == ["t"]
