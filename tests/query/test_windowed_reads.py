"""Queries of one run, or of an agent's recent runs, read only the Parquet files (and row groups) that can
hold their spans, and answer exactly what a scan of every file answers.

The stores here are laid out unlike the benchmarks': runs split across files and days, a run with spans
in a second trace, files sorted by trace (as a compaction writes them), a file without statistics.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel import semconv as sc
from agentotel.analysis import _record
from agentotel.analysis._record import History
from agentotel.analysis._steps import tool_name, tool_payload
from agentotel.query import _sources
from spanbuild import MS, T0, SpanStore, assistant

HOUR = 3_600_000 * MS


def _billing_run(store: SpanStore, n: int, start: int, *, items: int | None = None, failed: bool = False):
    run = store.run("billing", f"bill-{n:02d}", start=start)
    run.llm(assistant(calls=[(f"c{n}", "invoice", {"id": n})]), prompt=f"invoice {n}")
    output = {"id": n, "total": 10 * n} if items is None else {"id": n, "total": 10 * n, "items": items}
    run.tool("invoice", {"id": n}, None if failed else output, call_id=f"c{n}", error="Timeout" if failed else None)
    run.tool("ledger", {"id": n}, {"ok": True})
    run.llm(assistant("done"))
    return run


@pytest.fixture
def spread(tmp_path):
    """Fourteen runs of one agent over four days and five files (two trace-sorted with small row groups,
    one without statistics), another agent's runs in between, and one run with spans in a second trace."""
    store = SpanStore(tmp_path)
    runs = [_billing_run(store, n, T0 + n * 7 * HOUR, items=n if n % 3 == 0 else None, failed=n == 9) for n in range(14)]
    for n in range(4):
        other = store.run("support", f"support-{n}", start=T0 + (n * 21 + 3) * HOUR)
        other.tool("invoice", {"id": 99}, {"refund": True})
    # Run 12 calls a tool whose span was recorded in a trace of its own (another process joined by run id).
    stray = runs[12]
    stray.tool("invoice", {"id": 112}, {"id": 112, "total": 5, "currency": "EUR"})
    stray.spans[-1]["trace_id"] = "f" * 32
    stray.spans[-1]["parent_span_id"] = None
    others = [r for r in store.runs if r.name == "support"]
    by_day: dict[int, list] = {}
    for run in runs + others:
        by_day.setdefault((run.start - T0) // (24 * HOUR), []).append(run)
    for day, chosen in sorted(by_day.items()):
        date = f"2026-05-{28 + day:02d}"
        table = pa.Table.from_batches([store.batch(chosen)])
        folder = tmp_path / "spans" / f"date={date}"
        folder.mkdir(parents=True, exist_ok=True)
        if day == 1:  # as a compaction writes: sorted by trace, several row groups
            table = table.sort_by([("trace_id", "ascending"), ("start_time", "ascending")])
            pq.write_table(table, folder / "c-sorted.parquet", row_group_size=4)
        elif day == 2:  # a file some other tool wrote without statistics: read for every window
            pq.write_table(table, folder / "no-stats.parquet", write_statistics=False)
        else:
            half = table.num_rows // 2  # one day in two files, a run split between them
            pq.write_table(table.slice(0, half), folder / "a.parquet")
            pq.write_table(table.slice(half), folder / "b.parquet")
    return tmp_path, runs


def test_a_files_start_range_comes_from_its_footer_and_is_absent_without_statistics(spread):
    directory, _runs = spread
    sources = _sources.load(directory)
    files = sources.parquet
    assert len(files) == 6
    without = [f for f in files if f.endswith("no-stats.parquet")]
    assert without and all(f not in sources.starts for f in without)
    for file in set(files) - set(without):
        times = pq.read_table(file, columns=["start_time"]).column(0).cast(pa.int64()).to_pylist()
        assert sources.starts[file] == (min(times), max(times))
    # A window inside one day: that day's files and the file without statistics, nothing else.
    first, last = T0 + 2 * HOUR, T0 + 3 * HOUR
    chosen = sources.files_starting_within(first, last)
    assert set(chosen) == {f for f in files if "date=2026-05-28" in f or f in without}


def test_every_runs_trajectory_and_history_match_a_scan_of_every_file(spread):
    directory, _runs = spread
    with agentotel.open(directory) as traces:
        # Every run's steps in one query of the view (one a run was a third of this test's CPU).
        steps = traces.sql("SELECT run_id, trace_id, index, type, span_id, tool_name, output FROM steps ORDER BY index").fetchall()
        for run in traces.sql("SELECT run_id FROM runs ORDER BY run_id").fetchall():
            run_id = run[0]
            trajectory = traces.trajectory(run_id)
            # A span of the run recorded in another trace is a step in the views, not in the trajectory.
            expected = [row[2:] for row in steps if row[:2] == (run_id, trajectory.run["trace_id"])]
            got = [(s.index, s.type, s.span_id, s.tool_name, s.raw_output) for s in trajectory.steps]
            assert expected and got == [tuple(row) for row in expected], run_id
            record = _record.load_run(traces, run_id)
            _assert_same_history(traces, record, _record.load_history(traces, record))


def test_history_learns_from_the_latest_earlier_runs_including_spans_in_another_trace(spread):
    directory, _runs = spread
    with agentotel.open(directory) as traces:
        record = _record.load_run(traces, "bill-13")
        history = _record.load_history(traces, record)
    # Runs 3..12 are the ten latest earlier runs of `billing` (run 9's call failed: no output learned);
    # support's runs, which call a tool of the same name, and runs 0..2 are left out.
    assert history.runs["invoice"] == [f"bill-{n:02d}" for n in (12, 11, 10, 8, 7, 6, 5, 4, 3)]
    assert [run for run, _call in history.first_calls] == [f"bill-{n:02d}" for n in range(12, 2, -1)]
    learned = history.outputs["invoice"]
    assert learned.outputs == 10  # run 12 called it twice, once recorded in another trace
    assert "$.currency" in learned.present and "$.refund" not in learned.present


def _plain(traces, run_id):
    record = _record.load_run(traces, run_id)
    history = _record.load_history(traces, record)
    return record, (history.runs, history.schema_hashes, history.outputs, history.first_calls)


@pytest.mark.parametrize("shared", [True, False], ids=["one read", "small files read apart"])
def test_a_checks_one_read_of_its_run_and_history_gives_what_two_reads_give(spread, monkeypatch, shared):
    """`load` (what `check` reads) takes a run's trace and its history's traces in one read, the row groups
    they share decompressed once, and builds both from those rows: on every run of a store laid out unlike
    the benchmarks' it gives exactly what load_run and load_history give reading the files apart (and
    so it does reading them apart, as it does when the files are small)."""
    directory, _runs = spread
    if shared:
        monkeypatch.setattr(_record, "SHARED_READ_BYTES", 0)
    with agentotel.open(directory) as traces:
        held = []
        hold = traces._hold
        traces._hold = lambda *args, **kwargs: held.append(args) or hold(*args, **kwargs)
        for (run_id,) in traces.sql("SELECT run_id FROM runs ORDER BY run_id").fetchall():
            record, history = _record.load(traces, run_id)
            expected, expected_history = _plain(traces, run_id)
            assert record == expected, run_id
            assert (history.runs, history.schema_hashes, history.outputs, history.first_calls) == expected_history, run_id
            _assert_same_history(traces, record, history)
        # Every run with an earlier run of its agent was read in one pass (13 billing runs, 3 support runs).
        assert len(held) == (16 if shared else 0)


def test_a_check_of_one_read_finds_what_detecting_on_its_run_and_history_finds_and_lets_the_held_rows_go(spread, monkeypatch):
    """`check` (detectors.findings) over the one read (`Traces._hold`, every tool's earlier calls read on the
    second connection) finds what `detect` finds on `load`'s run and history, and leaves no held rows behind."""
    from agentotel.analysis import detectors

    directory, _runs = spread
    monkeypatch.setattr(_record, "SHARED_READ_BYTES", 0)
    with agentotel.open(directory) as traces:
        for (run_id,) in traces.sql("SELECT run_id FROM runs ORDER BY run_id").fetchall():
            record, history = _record.load(traces, run_id)
            expected = detectors.detect(record, history, policy=detectors.load_policy(detectors._agent(record)))
            assert detectors.findings(traces, run_id) == expected, run_id
            held = traces.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_held_spans_%'").fetchall()[0][0]
            assert held == 0, run_id


def test_a_run_whose_span_started_before_its_root_gets_the_history_its_trajectory_says(tmp_path, monkeypatch):
    """The one read is planned from the run's root span (its start, its run name); a run whose trajectory
    starts earlier (a span from a process whose clock runs behind) has its history read by what its
    trajectory says, as before."""
    store = SpanStore(tmp_path)
    for n in range(4):
        _billing_run(store, n, T0 + n * HOUR, items=n if n % 2 else None)
    skewed = _billing_run(store, 4, T0 + 4 * HOUR)
    skewed.spans[0]["start_time_ns"] = skewed.start - MS // 2
    store.write()
    monkeypatch.setattr(_record, "SHARED_READ_BYTES", 0)  # read in one pass, as in a store of large files
    with agentotel.open(tmp_path) as traces:
        record, history = _record.load(traces, "bill-04")
        assert record.run["start_time"] < traces.resolve("bill-04").first_start + dt.timedelta(milliseconds=1)
        expected, expected_history = _plain(traces, "bill-04")
        assert record == expected
        assert (history.runs, history.schema_hashes, history.outputs, history.first_calls) == expected_history
        assert history.runs["invoice"] == [f"bill-{n:02d}" for n in (3, 2, 1, 0)]


def _assert_same_history(traces, record, history: History) -> None:
    """`history` equals what a plain reading of the public views gives: the latest earlier runs of the
    agent, every call of this run's tools in them newest first, and each run's first model call."""
    expected, first = _views_history(traces, record)
    assert (history.runs, history.schema_hashes, history.outputs) == (expected.runs, expected.schema_hashes, expected.outputs)
    assert [(run_id, call["input"]) for run_id, call in history.first_calls] == first


# The views' rows a plain reading needs, by the store's bytes: three tests compare every run of `spread` (the same
# files each time, made anew for each) with it. Read once for every run of a store (three queries of the views), not
# three queries a run: each query of the spans view was ~0.3 s, most of this file's CPU.
_READ: dict[str, tuple[list, list, dict]] = {}


def _views_history(traces, record) -> tuple[History, list]:
    """The history the views give `record`'s run, and each earlier run's first model call input."""
    key = _fingerprint(traces.directory)
    if key not in _READ:
        runs = traces.sql("SELECT run_id, name, start_time FROM runs").fetchall()
        tools = traces.sql("SELECT run_id, tool_name, output, status_code, attributes[$h], start_time FROM spans "
                           "WHERE operation = 'execute_tool'", params={"h": sc.AGENTOTEL_TOOL_SCHEMA_HASH}).fetchall()
        first_inputs = dict(traces.sql("SELECT run_id, arg_min(input, start_time) FROM spans WHERE operation = 'chat' "
                                       "GROUP BY run_id").fetchall())
        _READ[key] = runs, tools, first_inputs
    runs, tools, first_inputs = _READ[key]
    names = {str(tool_name(s)) for s in record.tool_steps()}
    start = record.run.get("start_time")
    agent = record.root_attributes.get(sc.AGENTOTEL_RUN_NAME) or record.run.get("name")
    # The latest earlier runs of the agent, newest first (the runs view's name, start, run id).
    earlier = [run_id for run_id, name, started in sorted(runs, key=lambda r: r[2], reverse=True)
               if name == agent and started < start and run_id != record.run_id][:_record.HISTORY_RUNS]
    expected = History()
    if names and earlier:
        chosen = [row for row in tools if row[0] in earlier and row[1] in names and row[5] < start]
        for run_id, name, output, status, schema_hash, _started in sorted(chosen, key=lambda r: r[5], reverse=True):
            expected.add(run_id, name, tool_payload(output), schema_hash, status == "ERROR")
    first = [(run_id, json.loads(first_inputs[run_id])) for run_id in earlier if run_id in first_inputs]
    return expected, first


def _fingerprint(directory) -> str:
    """The store's files, names and bytes (not the index an open writes beside them)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and ".index" not in p.relative_to(directory).parts):
        digest.update(f"{path.relative_to(directory)}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_history_of_an_agent_that_only_talks_and_of_a_job_that_only_calls_tools(tmp_path):
    """A chat agent (no tool to learn: only earlier runs' first model calls are read) and a scheduled job
    (no model call: only its tools' outputs), their runs interleaved in time, each in a file of its own and
    then compacted into one: every run's history equals a plain reading of the views."""
    from agentotel.store import compact

    store = SpanStore(tmp_path)
    for n in range(6):
        talk = store.run("talker", f"talk-{n}", start=T0 + n * HOUR)
        talk.llm(assistant(f"answer {n}"), prompt=f"question {n}")
        job = store.run("nightly", f"job-{n}", start=T0 + n * HOUR + 1_800_000 * MS)
        job.tool("sync", {"n": n}, {"synced": n, "extra": [n] if n % 2 else None})
        if n == 3:
            job.tool("sync", {"n": n}, None, error="Timeout")
    for run in store.runs:
        store.write([run])
    compact(tmp_path)
    with agentotel.open(tmp_path) as traces:
        talk = _record.load_run(traces, "talk-5")
        history = _record.load_history(traces, talk)
        assert not talk.tool_steps() and not history.outputs
        assert [run for run, _call in history.first_calls] == [f"talk-{n}" for n in range(4, -1, -1)]
        _assert_same_history(traces, talk, history)
        job = _record.load_run(traces, "job-5")
        history = _record.load_history(traces, job)
        assert not history.first_calls and history.runs["sync"] == [f"job-{n}" for n in range(4, -1, -1)]
        assert history.outputs["sync"].outputs == 5  # the failed call teaches nothing
        _assert_same_history(traces, job, history)


def test_a_runs_record_holds_its_roots_task_output_error_and_each_steps_status_message(tmp_path):
    """What load_run reads besides the trajectory (in the trajectory's own pass) is what the views hold:
    the root's input, output and status message, and each step's chosen attributes and status message."""
    store = SpanStore(tmp_path)
    run = store.run("billing", "bill-x", status="ERROR", env={sc.AGENTOTEL_RUN_TASK: json.dumps("bill order 1"),
                                                              sc.AGENTOTEL_RUN_OUTPUT: json.dumps("gave up")})
    run.llm(assistant(calls=[("c1", "invoice", {"id": 1})]), prompt="invoice 1")
    run.tool("invoice", {"id": 1}, None, call_id="c1", error="Timeout")
    run.spans[-1]["status_message"] = "invoice service timed out after 30 s"
    root_row = run.root_row
    run.root_row = lambda: {**root_row(), "status_message": "run failed: invoice unavailable"}
    other = store.run("billing", "bill-y")  # another run in the same file
    other.tool("invoice", {"id": 2}, {"id": 2})
    store.write()
    with agentotel.open(tmp_path) as traces:
        traces.sql("SELECT 1").fetchall()
        con = traces._con
        root = run.root_id
        con.execute("CREATE TEMP TABLE expected AS SELECT span_id, input, output, status_message, attributes FROM spans "
                    "WHERE trace_id = $t", {"t": run.trace_id})
        record = _record.load_run(traces, "bill-x")
        task, output, message = con.execute("SELECT input, output, status_message FROM expected WHERE span_id = $s",
                                            {"s": root}).fetchone()
        assert (record.run["task"], record.run["output"], record.run["error"]) == (task, output, message)
        assert message == "run failed: invoice unavailable" and "bill order 1" in task and "gave up" in output
        assert record.root_attributes[sc.AGENTOTEL_RUN_NAME] == "billing"
        for step in record.steps:
            attributes, status = con.execute("SELECT attributes, status_message FROM expected WHERE span_id = $s",
                                             {"s": step["span_id"]}).fetchone()
            chosen = {k: v for k, v in dict(attributes).items() if k in _record.ATTRIBUTES}
            if status:
                chosen[_record.STATUS_MESSAGE] = status
            assert record.span_attributes[step["span_id"]] == chosen
        assert set(record.span_attributes) == {s["span_id"] for s in record.steps} | {root}
        tool = record.tool_steps()[0]
        assert record.attribute(tool, sc.ERROR_TYPE) == "Timeout"
        assert record.error(tool) == "invoice service timed out after 30 s"


def test_held_rows_take_the_traces_of_earlier_runs_and_outlive_a_renewed_connection(spread):
    """`_hold` with `runs` reads the run's trace and every trace an earlier run has spans in (run 12's tool
    span sits in a trace of its own), the same rows a scan of every file gives; its table is made again on
    a connection renewed mid-check (what a compaction retiring a file causes), and is gone once released."""
    directory, _runs = spread
    with agentotel.open(directory) as traces:
        ref = traces.resolve("bill-13")
        earlier = traces.sql("SELECT run_id, start_time FROM runs WHERE name = 'billing' AND run_id IN ('bill-11', 'bill-12') "
                             "ORDER BY start_time").fetchall()
        since = traces.sql("SELECT min(start_time)::VARCHAR FROM _run_roots WHERE run_id = 'bill-11'").fetchall()[0][0]
        first = earlier[0][1] - dt.timedelta(milliseconds=1)
        held = traces._hold([ref.trace_id], first, ref.last_start, runs=(["bill-11", "bill-12"], since, ref.first_start))
        query = "SELECT trace_id, span_id, output FROM {spans} ORDER BY trace_id, span_id"
        rows = traces._rows(query, held=held)
        expected = traces.sql("SELECT trace_id, span_id, output FROM _raw_spans WHERE trace_id IN (SELECT trace_id FROM _raw_spans "
                              "WHERE run_id IN ('bill-11', 'bill-12', 'bill-13')) AND start_time BETWEEN $a AND $b ORDER BY trace_id, span_id",
                              params={"a": first, "b": ref.last_start}).fetchall()
        assert [tuple(r.values()) for r in rows] == [tuple(r) for r in expected]
        assert "f" * 32 in {r["trace_id"] for r in rows}  # the stray trace of run 12
        traces._connect(_sources.load(directory))  # a new connection, as after a compaction
        assert traces._rows(query, held=held) == rows
        traces._release(held)
        with pytest.raises(agentotel.query.QueryError):
            traces._rows(f"SELECT count(*) FROM {held.name}")


def _tools_store(tmp_path):
    """An agent whose earlier runs called tools its latest run does not (refund, audit), with a schema hash on
    one tool, and whose latest run calls one tool no earlier run did (ship): files of 2 runs each."""
    store = SpanStore(tmp_path)
    for n in range(8):
        run = store.run("orders", f"order-{n}", start=T0 + n * HOUR)
        run.llm(assistant(calls=[(f"c{n}", "lookup", {"id": n})]), prompt=f"order {n}")
        run.tool("lookup", {"id": n}, {"id": n, "status": "open", **({"eta": "2d"} if n % 2 else {})}, call_id=f"c{n}")
        if n < 7:
            run.tool("refund", {"id": n}, {"refunded": n % 3 == 0})
            run.spans[-1]["attributes"][sc.AGENTOTEL_TOOL_SCHEMA_HASH] = f"h{n // 4}"
            run.tool("audit", {"id": n}, None, error="Timeout" if n == 5 else None)
        else:
            run.tool("ship", {"id": n}, {"carrier": "ups"})
        run.llm(assistant("done"))
    for i in range(0, 8, 2):
        store.write(store.runs[i:i + 2], name=f"part-{i}.parquet")
    return tmp_path


def test_a_history_read_alongside_the_run_has_only_the_runs_tools(tmp_path, monkeypatch):
    """`load` reads the history on a second connection before the run's tools are known, so it reads every
    tool's earlier calls; what it gives is still the history of the run's own tools (a tool only earlier
    runs called is not one the run knows), the same as `load_history` reading the files apart."""
    monkeypatch.setattr(_record, "SHARED_READ_BYTES", 0)
    directory = _tools_store(tmp_path)
    learned_apart = []  # every tool's history, as learned alongside the run
    tool_history = _record._tool_history
    monkeypatch.setattr(_record, "_tool_history", lambda found, names=None: learned_apart.append(tool_history(found)) or
                        tool_history(found, names) if names is None else tool_history(found, names))
    with agentotel.open(directory) as traces:
        for n in range(1, 8):
            record, history = _record.load(traces, f"order-{n}")
            expected, expected_history = _plain(traces, f"order-{n}")
            assert record == expected
            assert (history.runs, history.schema_hashes, history.outputs, history.first_calls) == expected_history, n
            _assert_same_history(traces, record, history)
        assert set(history.outputs) == {"lookup"} and "refund" in learned_apart[-1].outputs  # the latest run: no refund
        assert _record.load(traces, "order-6")[1].schema_hashes["refund"] == ("order-5", "h1")
    assert len(learned_apart) == 8  # every load read its history alongside its run


def test_a_check_by_run_id_makes_no_view_and_every_view_is_there_when_asked(spread):
    """Opening a store binds the roots table and macros; the views (tens of milliseconds each to bind) are
    made when a query names one: a check, trajectory or diff of runs named by id makes none, and SQL,
    runs(), a prefix lookup and add_view() find them all, also on a connection renewed afterwards."""
    directory, _runs = spread
    with agentotel.open(directory) as traces:
        traces.findings("bill-13")
        traces.trajectory("bill-12")
        traces.diff("bill-11", "bill-12")
        assert not traces._views_made
        assert traces._con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name IN ('spans', 'runs', 'steps')").fetchone()[0] == 0
        assert [r[0] for r in traces.runs(agent="billing", limit=2).fetchall()] == ["bill-13", "bill-12"]
        assert traces._views_made
    with agentotel.open(directory) as traces:
        assert traces.sql("SELECT count(*) FROM tool_calls WHERE tool_name = 'invoice'").fetchall()[0][0] == 19
    with agentotel.open(directory) as traces:
        assert traces.resolve(traces.resolve("bill-03").trace_id[:12]).run_id == "bill-03"  # a prefix: run_lookup.sql
    with agentotel.open(directory) as traces:
        traces.add_view("billing_tools", "SELECT * FROM tool_calls WHERE run_id LIKE 'bill-%'")
        traces._connect(_sources.load(directory))  # a renewed connection makes the views again
        assert traces.sql("SELECT count(*) FROM billing_tools").fetchall()[0][0] == 29
        assert traces.sql("SELECT count(*) FROM findings WHERE run_id = 'bill-13'").fetchall()[0][0] >= 0


def _made_views(traces) -> set[str]:
    return {r[0] for r in traces._con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}


def test_a_query_makes_only_the_views_it_reads_and_sql_finds_every_view(spread):
    """DuckDB binds a view when it is made, and again inside every view made over it: listing runs makes
    `runs` and what it reads, not `steps`, `spans` or `llm_calls` (~0.1 s CPU a store open), while a
    user's SQL still finds every view, however it names one (a schema, a list after FROM) or lists them."""
    directory, _runs = spread
    documented = {"spans", "llm_calls", "tool_calls", "retrievals", "runs", "steps"}
    with agentotel.open(directory) as traces:
        assert [r[0] for r in traces.runs(agent="billing", limit=2).fetchall()] == ["bill-13", "bill-12"]
        assert "runs" in _made_views(traces) and not {"steps", "spans", "llm_calls", "tool_calls"} & _made_views(traces)
        assert traces.sql("SELECT count(*) FROM tool_calls WHERE tool_name = 'invoice'").fetchall()[0][0] == 19
        tool_calls = traces.sql("SELECT count(*) FROM tool_calls").fetchall()[0][0]
        assert "steps" not in _made_views(traces)
        together = "SELECT count(*) FROM runs r, temp.steps s WHERE s.run_id = r.run_id AND r.run_id = 'bill-13'"
        assert traces.sql(together).fetchall()[0][0] == traces.trajectory("bill-13").run["steps"]
    with agentotel.open(directory) as traces:
        assert documented <= {r[0] for r in traces.sql("SHOW TABLES").fetchall()}
    with agentotel.open(directory) as traces:
        assert traces.sql("SELECT count(*) FROM temp.main.tool_calls").fetchall()[0][0] == tool_calls
        assert documented <= _made_views(traces)


@pytest.mark.parametrize("older_first", [True, False], ids=["older file first", "newer file first"])
def test_a_run_id_given_to_two_executions_means_the_latest_every_time(tmp_path, older_first):
    """Two executions recorded under one run id (each its own trace and root, as when a caller passes the
    same id twice, or a copied store): the id means the latest of them, at every lookup — never one or the
    other by the order a scan returned rows in (check's findings came out of a coin toss there)."""
    store = SpanStore(tmp_path)
    first = store.run("billing", "twice", start=T0)
    first.llm(assistant("the first"))
    later = store.run("billing", "twice", start=T0 + 3 * HOUR, trace_id="e" * 32)
    later.llm(assistant("the second"))
    later.tool("invoice", {"id": 2}, {"id": 2, "total": 7})
    # In two files, in either order: a scan returns the two traces in file order.
    store.write([first if older_first else later], name="a.parquet")
    store.write([later if older_first else first], name="b.parquet")
    with agentotel.open(tmp_path) as traces:
        seen = {(traces.resolve("twice").trace_id, len(traces.trajectory("twice").steps)) for _ in range(20)}
        assert seen == {("e" * 32, 2)}
        assert {traces.resolve("twic").trace_id for _ in range(10)} == {"e" * 32}
