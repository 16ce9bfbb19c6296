"""A conversation stored once: each model call's input kept as its conversation's earlier input plus the
messages it adds (store/messages.py), and every reader given the input whole, exactly as before.

The writer is driven through its one path (`StoreWriter.append`) with rows built by `SpanColumns`, the
way the exporter and the collector build them; readers are the real query views over real Parquet files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentotel
from agentotel import semconv as sc
from agentotel.store import StoreWriter, compact, messages, parquet_files
from agentotel.store.schema import SCHEMA_VERSION, SPAN_SCHEMA, STORAGE_COLUMNS, SpanColumns, conform

DAY = 86_400 * 10**9
T0 = 1_780_000_000 * 10**9  # a fixed clock, mid-day UTC


def message(role: str, text: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def history(turns: int, *, first: str = "fix the failing test", size: int = 40) -> list[dict]:
    """A coding agent's conversation after `turns` tool round trips (tool results of `size` characters)."""
    out = [message("system", "You are a careful coding agent."), message("user", first)]
    for k in range(turns):
        out.append(message("assistant", f"step {k}: run the tests é✓"))
        out.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{k}", "response": f"{k}:" + "x" * size}]})
    return out


def text(messages_: list[dict]) -> str:
    return json.dumps(messages_, ensure_ascii=False, separators=(",", ":"))


def chat(columns: SpanColumns, span: str, start: int, messages_: list[dict] | str, *, trace: str = "a" * 32,
         run: str = "run-1", user: str | None = "u1", tool: bool = False) -> None:
    attributes = {sc.GEN_AI_OPERATION_NAME: "execute_tool" if tool else "chat", sc.AGENTOTEL_RUN_ID: run,
                  sc.GEN_AI_INPUT_MESSAGES if not tool else sc.GEN_AI_TOOL_CALL_ARGUMENTS:
                      messages_ if isinstance(messages_, str) else text(messages_)}
    if user is not None:
        attributes[sc.ENDUSER_ID] = user
    columns.append(
        trace_id=trace, span_id=span, parent_span_id=None, name="chat m", kind="CLIENT", status_code="UNSET",
        status_message=None, start_time_ns=start, end_time_ns=start + 1000, attributes=attributes,
        resource_attributes={}, scope_name="agentotel.openai", scope_version="1",
    )


def batch(*calls: tuple) -> pa.RecordBatch:
    columns = SpanColumns()
    for args, kwargs in calls:
        chat(columns, *args, **kwargs)
    return columns.to_batch()


def c(span: str, start: int, messages_, **kwargs) -> tuple:
    return (span, start, messages_), kwargs


def stored(directory: Path) -> dict[str, dict]:
    """Each stored row's input and conversation columns, by span id, as the files hold them."""
    out = {}
    for path in parquet_files(directory):
        table = conform(pq.read_table(path))
        for r in table.select(["span_id", "input", *STORAGE_COLUMNS]).to_pylist():
            out[r["span_id"]] = {"input": r["input"], "chain": r["input_chain"], "offset": r["input_offset"],
                                 "added": r["input_added"], "ranges": r["input_ranges"], "borrowed": r["input_borrowed"]}
    return out


def inputs(directory: Path) -> dict[str, str | None]:
    """Each span's input as the `spans` view gives it."""
    return dict(agentotel.open(directory).sql("SELECT span_id, input FROM spans").fetchall())


# -- the writer ------------------------------------------------------------------------------------------


def test_each_call_stores_only_the_messages_it_adds_and_every_view_gets_the_input_whole(tmp_path):
    calls = [history(k) for k in range(6)]
    writer = StoreWriter(tmp_path)
    for k, conversation in enumerate(calls):  # one export batch per call, as an agent's calls end
        writer.append(batch(c(f"{k:016x}", T0 + k * 10**9, conversation)))
    writer.close()

    rows = stored(tmp_path)
    first = rows[f"{0:016x}"]
    assert first["input"] == text(calls[0]) and first["chain"] is None  # the first call: whole
    for k in range(1, 6):
        row = rows[f"{k:016x}"]
        assert row["input"] is None and row["chain"] == f"{0:016x}"
        assert json.loads(row["added"]) == calls[k][len(calls[k - 1]):]  # only its new messages
        assert row["offset"] == len(text(calls[k - 1])) - 2
    assert inputs(tmp_path) == {f"{k:016x}": text(calls[k]) for k in range(6)}  # byte for byte
    traces = agentotel.open(tmp_path)
    assert [json.loads(r[0]) for r in traces.sql("SELECT input FROM llm_calls ORDER BY start_time").fetchall()] == calls
    assert [s.input for s in traces.trajectory("run-1").steps] == calls
    assert set(traces.sql("SELECT * FROM spans").columns).isdisjoint(STORAGE_COLUMNS)


def test_calls_that_end_out_of_order_in_one_batch_are_still_stored_once(tmp_path):
    a, b, d = history(1), history(2), history(3)
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("3" * 16, T0 + 3, d), c("1" * 16, T0 + 1, a), c("2" * 16, T0 + 2, b)))
    writer.close()
    rows = stored(tmp_path)
    assert rows["1" * 16]["chain"] is None and rows["2" * 16]["chain"] == rows["3" * 16]["chain"] == "1" * 16
    assert inputs(tmp_path) == {"1" * 16: text(a), "2" * 16: text(b), "3" * 16: text(d)}


def test_an_earlier_call_arriving_after_a_later_one_is_stored_as_part_of_its_conversation(tmp_path):
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0 + 1, history(1))))
    writer.append(batch(c("3" * 16, T0 + 3, history(3))))
    writer.append(batch(c("2" * 16, T0 + 2, history(2))))  # its base has moved on: a range of what is stored
    writer.append(batch(c("4" * 16, T0 + 4, history(4))))  # continues the latest input it extends
    writer.close()
    rows = stored(tmp_path)
    assert rows["2" * 16]["chain"] == "1" * 16 and rows["2" * 16]["added"] == "[]"
    assert rows["2" * 16]["ranges"] == [{"start": 0, "length": len(text(history(2))) - 2}]
    assert rows["4" * 16]["chain"] == "1" * 16 and rows["4" * 16]["offset"] == len(text(history(3))) - 2
    assert inputs(tmp_path) == {f"{k}" * 16: text(history(k)) for k in range(1, 5)}


def test_a_conversation_that_forks_or_is_rewritten_stays_one_conversation(tmp_path):
    base = history(2)
    left = base + [message("user", "left")]
    right = base + [message("user", "right")]
    rewritten = [message("system", "summary of the work so far")] + right[-1:]  # history compacted by the agent
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0 + 1, base), c("2" * 16, T0 + 2, left), c("3" * 16, T0 + 3, right)))
    writer.append(batch(c("4" * 16, T0 + 4, right + [message("user", "again")]), c("5" * 16, T0 + 5, rewritten)))
    writer.append(batch(c("6" * 16, T0 + 6, base)))  # a retry of the first prompt
    writer.close()
    expected = {"1" * 16: base, "2" * 16: left, "3" * 16: right, "4" * 16: right + [message("user", "again")],
                "5" * 16: rewritten, "6" * 16: base}
    assert inputs(tmp_path) == {k: text(v) for k, v in expected.items()}
    rows = stored(tmp_path)
    assert all(rows[s * 16]["chain"] == "1" * 16 for s in "2346")  # every branch: one conversation
    assert rows["3" * 16]["added"] == text(right[-1:]) and rows["3" * 16]["ranges"] is not None
    assert rows["6" * 16]["added"] == "[]"
    # A rewritten input a fraction of its conversation's size starts its own: a reader never builds more
    # than a few times an input to rebuild it.
    assert rows["5" * 16]["chain"] is None


def test_conversations_never_cross_runs_users_traces_or_days(tmp_path):
    one, two = history(1), history(2)
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0, one)))
    writer.append(batch(
        c("2" * 16, T0 + 1, two, run="run-2"),
        c("3" * 16, T0 + 2, two, user="u2"),
        c("4" * 16, T0 + 3, two, trace="b" * 32),
        c("5" * 16, T0 + DAY, two),  # the next day's partition: dropping a day never leaves half a conversation
        c("6" * 16, T0 + 4, two),
    ))
    writer.close()
    rows = stored(tmp_path)
    assert [rows[s * 16]["chain"] for s in "23456"] == [None, None, None, None, "1" * 16]
    assert inputs(tmp_path) == {"1" * 16: text(one), **{s * 16: text(two) for s in "23456"}}


def test_inputs_that_are_not_message_lists_are_stored_as_they_are(tmp_path):
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0, "[]"), c("2" * 16, T0 + 1, "[1,"), c("3" * 16, T0 + 2, "not json"),
                        c("4" * 16, T0 + 3, "[1,"), c("5" * 16, T0 + 4, '[1, {"a": 2}]'),
                        c("6" * 16, T0 + 5, '[1, {"a": 2},3]'), c("7" * 16, T0 + 6, history(1), tool=True),
                        c("8" * 16, T0 + 7, '[1, {"a": 2},3] ')))
    writer.close()
    rows = stored(tmp_path)
    assert all(rows[s * 16]["chain"] is None for s in "123457") and rows["8" * 16]["chain"] is None
    assert rows["6" * 16]["chain"] == "5" * 16 and rows["6" * 16]["added"] == "[3]"
    expected = {"1": "[]", "2": "[1,", "3": "not json", "4": "[1,", "5": '[1, {"a": 2}]', "6": '[1, {"a": 2},3]',
                "7": text(history(1)), "8": '[1, {"a": 2},3] '}
    assert inputs(tmp_path) == {k * 16: v for k, v in expected.items()}


def test_a_span_delivered_twice_is_stored_alike_and_compaction_keeps_one(tmp_path):
    writer = StoreWriter(tmp_path)
    calls = [c(f"{k}" * 16, T0 + k, history(k)) for k in range(1, 4)]
    writer.append(batch(*calls))
    writer.fold()
    writer.append(batch(calls[1], calls[2]))  # an exporter's retry of a batch that was written after all
    writer.close()
    assert len(parquet_files(tmp_path)) == 2
    assert inputs(tmp_path) == {f"{k}" * 16: text(history(k)) for k in range(1, 4)}
    stats = compact(tmp_path, grace_s=0)
    assert stats["duplicates_dropped"] == 2 and stats["rows_after"] == 3
    assert inputs(tmp_path) == {f"{k}" * 16: text(history(k)) for k in range(1, 4)}


def test_a_failed_append_is_no_later_call_s_base(tmp_path, monkeypatch):
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0 + 1, history(1))))
    real = writer._wal.append

    def failing(batches):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer._wal, "append", failing)
    with pytest.raises(OSError):
        writer.append(batch(c("2" * 16, T0 + 2, history(2))))
    monkeypatch.setattr(writer._wal, "append", real)
    writer.append(batch(c("3" * 16, T0 + 3, history(3))))
    writer.close()
    rows = stored(tmp_path)
    assert "2" * 16 not in rows and rows["3" * 16]["chain"] == "1" * 16
    assert rows["3" * 16]["offset"] == len(text(history(1))) - 2  # relative to what is stored, not to the lost call
    assert inputs(tmp_path) == {"1" * 16: text(history(1)), "3" * 16: text(history(3))}


def test_a_missing_base_gives_no_input_rather_than_a_wrong_one(tmp_path):
    writer = StoreWriter(tmp_path)
    writer.append(batch(c("1" * 16, T0 + 1, history(1))))
    (first,) = writer.fold()
    writer.append(batch(c("2" * 16, T0 + 2, history(2)), c("3" * 16, T0 + 3, history(3))))
    writer.close()
    first.unlink()  # e.g. set aside as damaged
    got = inputs(tmp_path)
    assert got == {"2" * 16: None, "3" * 16: None}
    assert [s.input for s in agentotel.open(tmp_path).trajectory("run-1").steps] == [None, None]
    assert messages.full_inputs(pq.read_table(parquet_files(tmp_path)[0])) == [None, None]


def test_the_python_and_sql_rebuilds_agree(tmp_path):
    writer = StoreWriter(tmp_path)
    for k in range(5):
        writer.append(batch(c(f"{k}" * 16, T0 + k, history(k, size=k * 7)), c(f"{k}f" * 8, T0 + k, history(k)[:1], run="r2")))
    writer.close()
    table = pa.concat_tables(pq.read_table(p, schema=SPAN_SCHEMA) for p in parquet_files(tmp_path))
    assert dict(zip(table.column("span_id").to_pylist(), messages.full_inputs(table))) == inputs(tmp_path)


# -- long runs: no truncation --------------------------------------------------------------------------------


def test_a_400_step_run_is_recorded_whole_and_stored_in_bytes_that_grow_with_its_length(tmp_path):
    """Per-message limits at capture (content.py) plus the conversation stored once: nothing is cut, and
    the stored bytes grow linearly with the run, not with its square."""
    from agentotel.content import Payload

    def store(turns: int, directory: Path) -> int:
        writer = StoreWriter(directory)
        conversation = history(0)
        for k in range(turns):
            conversation = conversation + history(k + 1, size=1500)[-2:]
            payload = Payload()
            encoded = payload.encode_messages(conversation)
            assert not payload.truncated
            columns = SpanColumns()
            chat(columns, f"{k:016x}", T0 + k, encoded)
            writer.append(columns.to_batch())
        writer.close()
        return sum(Path(p).stat().st_size for p in parquet_files(directory))

    small, large = store(50, tmp_path / "50"), store(400, tmp_path / "400")
    assert large / 400 < 1.3 * small / 50  # bytes per step flat
    traces = agentotel.open(tmp_path / "400")
    last = traces.sql("SELECT input FROM llm_calls ORDER BY start_time DESC LIMIT 1").fetchall()[0][0]
    whole = json.loads(last)
    assert len(last) > 600_000 and len(whole) == 2 + 800 and whole[-1]["parts"][0]["response"].endswith("x" * 1500)


def test_one_huge_message_is_cut_alone(monkeypatch):
    from agentotel import _config
    from agentotel.content import Payload

    monkeypatch.setenv("AGENTOTEL_MAX_VALUE_BYTES", "2000")
    _config.reset()
    conversation = [message("user", "hi")] + [message("tool", "y" * 1500) for _ in range(5)] + [message("tool", "z" * 9000)]
    payload = Payload()
    _config.reset()
    parsed = json.loads(payload.encode_messages(conversation))
    assert parsed[:6] == conversation[:6] and payload.truncated
    assert len(json.dumps(parsed[6])) <= 2000 and parsed[6]["parts"][0]["content"].startswith("zzz")


# -- old stores ------------------------------------------------------------------------------------------


def write_as_version_2(source: Path, target: Path) -> None:
    """`source`'s Parquet files as the writer before this change wrote them: every input whole, schema 2."""
    files = parquet_files(source)
    tables = [pq.read_table(p, schema=SPAN_SCHEMA) for p in files]
    whole = messages.full_inputs(pa.concat_tables(tables))  # conversations may span files
    begin = 0
    for path, table in zip(files, tables):
        table = table.set_column(table.schema.get_field_index("input"), "input",
                                 pa.array(whole[begin:begin + table.num_rows], pa.string()))
        begin += table.num_rows
        table = table.drop_columns(list(STORAGE_COLUMNS)).replace_schema_metadata({b"agentotel.schema_version": b"2"})
        out = target / Path(path).relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, out, compression="zstd")


def test_a_store_written_before_reads_the_same_and_compacts_into_the_new_form(tmp_path):
    writer = StoreWriter(tmp_path / "new")
    for k in range(6):
        writer.append(batch(c(f"{k}" * 16, T0 + k, history(k))))
        if k == 2:
            writer.fold()
    writer.close()
    write_as_version_2(tmp_path / "new", tmp_path / "old")
    assert all(r["chain"] is None for r in stored(tmp_path / "old").values())
    assert inputs(tmp_path / "old") == inputs(tmp_path / "new")
    compact(tmp_path / "old", grace_s=0)
    (merged,) = parquet_files(tmp_path / "old")
    assert pq.read_schema(merged).metadata[b"agentotel.schema_version"] == str(SCHEMA_VERSION).encode()
    assert sum(r["chain"] is not None for r in stored(tmp_path / "old").values()) == 5
    assert inputs(tmp_path / "old") == inputs(tmp_path / "new")


# -- every reader, a store written the old way and the new way --------------------------------------------


def _record_real_runs(directory: Path) -> None:
    """The demo's two support-agent runs and two replayed SWE-agent runs (real openai SDK, loopback HTTP),
    exported in small WAL segments so conversations span several Parquet files."""
    import openai

    from agentotel.demo import completion, run_demo, serve_model

    sys_path = str(Path(__file__).parent.parent / "query")
    import sys

    sys.path.insert(0, sys_path)
    try:
        from test_golden import DATA, recorded, replay
    finally:
        sys.path.remove(sys_path)
    run_demo(directory)
    agentotel.instrument(directory=directory)
    try:
        for name in ("6e44b9__sweagenttestrepo-1c2844.traj", "function_calling_simple.traj"):
            turns, calls, observations = recorded(DATA / name)

            def model(request: dict, turns=turns) -> dict:
                k = sum(1 for m in request["messages"] if m["role"] == "assistant")
                if k >= len(turns):
                    return completion("done", model="gpt-4o")
                tool_calls = [(t["id"], t["function"]["name"], json.loads(t["function"]["arguments"]))
                              for t in turns[k].get("tool_calls") or []]
                return completion(turns[k]["content"], tool_calls, prompt_tokens=1000 + k, completion_tokens=50, model="gpt-4o")

            with serve_model(model) as base_url:
                client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
                with agentotel.run("swe-agent", user="golden"):
                    replay(DATA / name, client, observations, calls)
                    assert agentotel.flush()
    finally:
        agentotel.shutdown()


def _rounded(value):
    """Floats to 12 significant digits: DuckDB sums costs in whatever order its threads finish."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def _readers(directory: Path) -> dict:
    """What every reader returns for the store: the views, trajectories, diffs, checks, cases, the web view."""
    from dataclasses import asdict

    from agentotel.cases import load_run, new_case
    from agentotel.view import _data

    traces = agentotel.open(directory)
    out: dict = {}
    for view in ("spans", "llm_calls", "tool_calls", "retrievals", "steps", "runs"):
        out[view] = sorted(map(repr, _rounded(traces.sql(f"SELECT * FROM {view}").fetchall())))
    runs = [r[0] for r in traces.sql("SELECT run_id FROM runs ORDER BY start_time").fetchall()]
    for run in runs:
        out["trajectory", run] = traces.trajectory(run).to_dict()
        out["check", run] = [asdict(f) for f in traces.findings(run)]
        out["case", run] = new_case(load_run(traces, run), at=1, layer="tool", name="x").to_dict()
        out["view", run] = json.loads(_data.to_json(_data.run_payload(traces, run)))
    for a, b in zip(runs, runs[1:]):
        out["diff", a, b] = traces.diff(a, b).to_dict()
        out["view diff", a, b] = json.loads(_data.to_json(_data.diff_payload(traces, a, b)))
    return _rounded(out)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory) -> tuple[Path, dict]:
    """The real runs recorded once for the tests below (each takes a copy), and what every reader returns for them."""
    from agentotel import _config

    directory = tmp_path_factory.mktemp("real-runs") / "new"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("AGENTOTEL_WAL_MAX_BYTES", "8000")
        monkeypatch.setattr(_config, "_current", None)  # resolved again here, and again after (not with 8000)
        _record_real_runs(directory)
    return directory, _readers(directory)


def test_every_reader_returns_the_same_from_a_store_written_the_old_way_and_the_new_way(tmp_path, real_runs):
    new, old = tmp_path / "new", tmp_path / "old"
    shutil.copytree(real_runs[0], new)
    rows = stored(new)
    assert len(parquet_files(new)) > 3
    continued = [r for r in rows.values() if r["chain"] is not None]
    assert len(continued) >= 8 and all(r["input"] is None for r in continued)
    assert any(r["borrowed"] for r in continued)  # replies and tool results given back: referred to
    write_as_version_2(new, old)
    expected = _readers(old)
    assert len([k for k in expected if k[0] == "trajectory"]) == 4
    assert real_runs[1] == expected  # _readers(new)
    compact(old, grace_s=0)  # the old store, brought into the new form
    assert any(r["chain"] is not None for r in stored(old).values())
    assert _readers(old) == expected
    assert sum(Path(p).stat().st_size for p in parquet_files(old)) > 0


def test_a_version_4_store_reads_the_same_and_compaction_borrows_what_its_rows_give_back(tmp_path, real_runs):
    """Version 4 stored every new message in input_added: read as it is, and `agentotel compact` leaves out
    what earlier outputs hold (only a row's own messages change, so rows in other files still add up)."""
    new, old = tmp_path / "new", tmp_path / "old"
    shutil.copytree(real_runs[0], new)
    expected = real_runs[1]  # _readers(new)
    files = parquet_files(new)
    tables = [pq.read_table(p, schema=SPAN_SCHEMA) for p in files]
    whole = pa.concat_tables(tables)
    output_of = dict(zip(zip(whole.column("trace_id").to_pylist(), whole.column("span_id").to_pylist()),
                         whole.column("output").to_pylist()))
    for path, table in zip(files, tables):  # as version 4 stored them: every new message in input_added
        traces = table.column("trace_id").to_pylist()
        own = [messages.returned(a, b, lambda span, t=t: output_of.get((t, span)))
               for a, b, t in zip(table.column("input_added").to_pylist(), table.column("input_borrowed").to_pylist(), traces)]
        table = table.set_column(table.schema.get_field_index("input_added"), "input_added", pa.array(own, pa.string()))
        out = old / Path(path).relative_to(new)
        out.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.drop_columns(["input_borrowed"]).replace_schema_metadata({b"agentotel.schema_version": b"4"}), out)
    assert _readers(old) == expected
    before = sum(len(r["added"] or "") for r in stored(old).values())
    compact(old, grace_s=0)
    after = stored(old)
    assert any(r["borrowed"] for r in after.values()) and sum(len(r["added"] or "") for r in after.values()) < 0.6 * before
    assert _readers(old) == expected


def test_the_documented_macro_gives_a_plain_glob_every_input_whole(tmp_path):
    import re


    docs = (Path(__file__).parent.parent.parent / "docs" / "STORE.md").read_text()
    from agentotel.query import _sql

    macro = re.search(r"```sql\n(CREATE OR REPLACE MACRO agentotel_spans.*?)```", docs, re.S).group(1)
    assert _sql("macro_agentotel_spans").endswith(macro)  # one text: the docs print what agentotel itself defines
    writer = StoreWriter(tmp_path)
    for k in range(4):
        writer.append(batch(c(f"{k}" * 16, T0 + k, history(k))))
        if k == 1:
            writer.fold()
    writer.close()
    con = duckdb.connect()
    con.execute(macro)
    glob = f"{tmp_path}/spans/**/*.parquet"
    assert con.sql(f"SELECT count(*) FROM '{glob}' WHERE input IS NULL").fetchall() == [(3,)]  # what a plain glob sees
    assert dict(con.sql(f"SELECT span_id, input FROM agentotel_spans('{glob}')").fetchall()) == inputs(tmp_path)
    traces = agentotel.open(tmp_path)
    assert traces.sql(f"SELECT count(*) FROM agentotel_spans('{glob}') WHERE input IS NULL").fetchall() == [(0,)]
    assert set(con.sql(f"SELECT * FROM agentotel_spans('{glob}')").columns) == set(traces.sql("SELECT * FROM spans").columns)


def test_spans_through_the_collector_s_conversion_are_stored_alike(tmp_path):
    """OTLP requests (protobuf, as another service's exporter sends them), one model call each, go through
    the collector's conversion (`agentotel import`): stored once, read whole, like the exporter's."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentotel.store.otlp import import_files

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("another-service")  # not agentotel's scope: the GenAI dialect rules apply
    with tracer.start_as_current_span("invoke_agent coder", attributes={sc.GEN_AI_OPERATION_NAME: "invoke_agent"}):
        for k in range(4):
            with tracer.start_as_current_span("chat gpt-4o", attributes={
                sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_INPUT_MESSAGES: text(history(k)),
            }):
                pass
    files = []
    for i, span in enumerate(memory.get_finished_spans()):
        path = tmp_path / f"request-{i}.pb"
        path.write_bytes(encode_spans([span]).SerializeToString())
        files.append(path)
    store = tmp_path / "store"
    import_files(store, files)
    rows = stored(store)
    assert sum(r["chain"] is not None for r in rows.values()) == 3
    traces = agentotel.open(store)
    (run,) = traces.sql("SELECT run_id FROM runs").fetchall()
    assert [s.input for s in traces.trajectory(run[0]).steps] == [history(k) for k in range(4)]


# -- message by message: turns dropped or summarised, outputs given back -------------------------------------


def _agent_run(directory: Path, *, keep: int, summarise_every: int, steps: int = 24, separators=(",", ":"),
               split: int = 5) -> dict[str, list[dict]]:
    """A support agent (not a coding one) whose history is cut to its system prompt plus the last `keep`
    messages, and every `summarise_every` steps replaced by a summary of its own; each model reply and
    each tool result (a JSON order record) is given back in the next input. Exported a few spans per
    batch, in end order, as an SDK's BatchSpanProcessor would; returns each model call's input by span id."""
    def dump(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=separators)

    writer = StoreWriter(directory)
    system = {"role": "system", "parts": [{"type": "text", "content": "Answer as the Acme support desk. " * 6}]}
    history_: list[dict] = [{"role": "user", "parts": [{"type": "text", "content": "Where is my order?"}]}]
    expected, pending, t = {}, SpanColumns(), T0

    def span(span_id: str, attributes: dict) -> None:
        nonlocal t
        pending.append(trace_id="c" * 32, span_id=span_id, parent_span_id=None, name="x", kind="CLIENT",
                       status_code="UNSET", status_message=None, start_time_ns=t, end_time_ns=t + 500,
                       attributes={sc.AGENTOTEL_RUN_ID: "support", sc.ENDUSER_ID: "u9", **attributes},
                       resource_attributes={}, scope_name="agentotel.anthropic", scope_version="1")
        t += 1000
        if len(pending) >= split:
            writer.append(pending.to_batch())

    for k in range(steps):
        if summarise_every and k and k % summarise_every == 0:
            summary = {"role": "user", "parts": [{"type": "text", "content": f"Summary of steps before {k}: " + "ok " * 40}]}
            history_ = [summary] + history_[-2:]
        messages_ = [system] + history_[-keep:]
        reply = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"t{k}", "name": "lookup_order",
                                                   "arguments": {"order": f"A-{k:04d}", "why": "the customer asked " * 5}}]}
        expected[f"{k:04x}" + "a" * 12] = messages_
        span(f"{k:04x}" + "a" * 12, {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_INPUT_MESSAGES: dump(messages_),
                                    sc.GEN_AI_OUTPUT_MESSAGES: dump([reply])})
        result = {"order": f"A-{k:04d}", "status": "shipped", "lines": [{"sku": f"S{k}{i}", "qty": i} for i in range(12)]}
        span(f"{k:04x}" + "b" * 12, {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: "lookup_order",
                                    sc.GEN_AI_TOOL_CALL_RESULT: dump(result)})
        history_ = history_ + [reply, {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"t{k}",
                                                                   "response": result}]}]
    if len(pending):
        writer.append(pending.to_batch())
    writer.close()
    return {span_id: messages_ for span_id, messages_ in expected.items()}


@pytest.mark.parametrize("keep, summarise_every", [(6, 0), (9, 7), (1000, 5)])
def test_dropped_and_summarised_turns_keep_the_conversation_stored_once(tmp_path, keep, summarise_every):
    expected = _agent_run(tmp_path, keep=keep, summarise_every=summarise_every)
    rows = stored(tmp_path)
    calls = [rows[s] for s in sorted(expected)]
    assert calls[0]["chain"] is None and sum(r["chain"] is None for r in calls) <= len(calls) // 4
    assert any(r["ranges"] is not None for r in calls)  # turns were dropped: some inputs keep only part
    kept = sum(len(r["added"]) if r["chain"] else len(r["input"]) for r in calls)
    whole = sum(len(text(m)) for m in expected.values())
    assert kept < 0.25 * whole  # each message about once, and what outputs hold not at all
    assert all(r["borrowed"] for r in calls[1:] if r["chain"])  # the reply and the tool result: referred to
    got = inputs(tmp_path)
    assert {s: got[s] for s in expected} == {s: text(m) for s, m in expected.items()}  # byte for byte
    steps = agentotel.open(tmp_path).trajectory("support").steps
    assert [s.input for s in steps if s.type == "llm"] == [expected[s] for s in sorted(expected)]
    table = pa.concat_tables(pq.read_table(p, schema=SPAN_SCHEMA) for p in parquet_files(tmp_path))
    python = dict(zip(table.column("span_id").to_pylist(), messages.full_inputs(table)))
    assert {s: python[s] for s in expected} == {s: text(m) for s, m in expected.items()}


def test_messages_with_whitespace_between_are_stored_whole_or_appended_exactly(tmp_path):
    expected = _agent_run(tmp_path, keep=5, summarise_every=0, separators=(", ", ": "), steps=10)
    got = inputs(tmp_path)
    assert {s: got[s] for s in expected} == {s: json.dumps(m, ensure_ascii=False) for s, m in expected.items()}


def test_a_missing_output_gives_no_input_rather_than_a_wrong_one(tmp_path):
    expected = _agent_run(tmp_path, keep=1000, summarise_every=0, steps=12, split=4)
    files = parquet_files(tmp_path)
    rows = stored(tmp_path)
    lender = next(b["span_id"] for s in sorted(expected) for b in rows[s]["borrowed"] or () if b["span_id"].endswith("b" * 12))
    # The lender's row alone taken out of its file (as if lost): the inputs that borrowed from it, and the
    # later inputs of the conversation, become NULL; the earlier ones stay whole.
    for path in files:
        table = pq.read_table(path)
        keep = pa.compute.not_equal(table.column("span_id"), lender)
        pq.write_table(table.filter(keep), path)
    got = inputs(tmp_path)
    borrowers = sorted(s for s in expected if any(b["span_id"] == lender for b in rows[s]["borrowed"] or ()))
    assert borrowers and all(got[s] is None for s in expected if s >= borrowers[0])
    assert all(got[s] == text(expected[s]) for s in expected if s < borrowers[0])
    steps = agentotel.open(tmp_path).trajectory("support").steps
    assert [s.input for s in steps if s.type == "llm"] == [expected[s] if s < borrowers[0] else None for s in sorted(expected)]


@pytest.mark.parametrize("version, missing", [(3, ["input_ranges", "input_borrowed"]), (4, ["input_borrowed"])])
def test_an_older_store_reads_the_same_and_compacts_as_it_is(tmp_path, version, missing):
    writer = StoreWriter(tmp_path / "new")
    for k in range(6):  # each input appends to the last: stored as versions 3 and 4 stored it (no ranges, nothing borrowed)
        writer.append(batch(c(f"{k}" * 16, T0 + k, history(k))))
        if k == 2:
            writer.fold()
    writer.close()
    old = tmp_path / "old"
    for path in parquet_files(tmp_path / "new"):
        table = pq.read_table(path).drop_columns(missing)
        out = old / Path(path).relative_to(tmp_path / "new")
        out.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.replace_schema_metadata({b"agentotel.schema_version": str(version).encode()}), out)
    assert inputs(old) == inputs(tmp_path / "new") == {f"{k}" * 16: text(history(k)) for k in range(6)}
    con = duckdb.connect()
    con.execute(agentotel.query._sql("macro_agentotel_spans"))
    assert dict(con.sql(f"SELECT span_id, input FROM agentotel_spans('{old}/spans/**/*.parquet')").fetchall()) == inputs(old)
    compact(old, grace_s=0)
    (merged,) = parquet_files(old)
    assert pq.read_schema(merged).metadata[b"agentotel.schema_version"] == str(SCHEMA_VERSION).encode()
    assert sum(r["chain"] is not None for r in stored(old).values()) == 5
    assert inputs(old) == inputs(tmp_path / "new")


# -- outputs given back: a run shape of its own (Anthropic-style content blocks, JSON tool results) ------------


def _blocks_run(directory: Path, steps: int, result: Callable[[int], str]) -> dict[str, str]:
    """A run whose model replies (with a trailing `stop_reason` the next input leaves out) and tools' JSON
    results (given back inside a `tool_result` block's string) each come back in the next input; one export
    batch per span, in end order. Returns each model call's recorded input by span id."""
    writer = StoreWriter(directory)
    history = [{"role": "user", "content": [{"type": "text", "text": "Tidy the customer table, please."}]}]
    recorded = {}
    for k in range(steps):
        span, tool_span, start = f"{k:015x}a", f"{k:015x}b", T0 + k * 10**9
        reply = {"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}: I will look at the rows again, then fix what is wrong with them. " * 3},
            {"type": "tool_use", "id": f"t{k}", "name": "query", "input": {"sql": f"SELECT * FROM customers LIMIT {k}"}}]}
        recorded[span] = text(history)
        columns = SpanColumns()
        attributes = {sc.GEN_AI_OPERATION_NAME: "chat", sc.AGENTOTEL_RUN_ID: "blocks", sc.GEN_AI_INPUT_MESSAGES: recorded[span],
                      sc.GEN_AI_OUTPUT_MESSAGES: text([{**reply, "stop_reason": "tool_use"}])}
        columns.append(trace_id="b" * 32, span_id=span, parent_span_id=None, name="chat claude", kind="CLIENT",
                       status_code="UNSET", status_message=None, start_time_ns=start, end_time_ns=start + 1000,
                       attributes=attributes, resource_attributes={}, scope_name="agentotel.anthropic", scope_version="1")
        writer.append(columns.to_batch())
        output = result(k)
        columns = SpanColumns()
        attributes = {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.AGENTOTEL_RUN_ID: "blocks", sc.GEN_AI_TOOL_NAME: "query",
                      sc.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(reply["content"][1]["input"]), sc.GEN_AI_TOOL_CALL_RESULT: output}
        columns.append(trace_id="b" * 32, span_id=tool_span, parent_span_id=None, name="execute_tool query", kind="INTERNAL",
                       status_code="UNSET", status_message=None, start_time_ns=start + 2000, end_time_ns=start + 3000,
                       attributes=attributes, resource_attributes={}, scope_name="agentotel", scope_version="1")
        writer.append(columns.to_batch())
        history = history + [reply, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": output}]}]
    writer.close()
    return recorded


def _customers(k: int) -> str:
    rows = [{"name": f"Zoë \"{k}\" O'Brien", "path": f"C:\\data\\{k}.csv", "note": "first line\nsecond\tline ✓"}] * 4
    return json.dumps({"rows": rows, "step": k}, ensure_ascii=False)


def test_replies_and_json_tool_results_given_back_are_stored_once_and_read_back_byte_for_byte(tmp_path):
    recorded = _blocks_run(tmp_path, 8, _customers)
    rows = stored(tmp_path)
    continuations = [rows[s] for s in sorted(recorded)[1:]]
    assert all(r["chain"] and r["borrowed"] for r in continuations)
    kinds = {b["as_string"] for r in continuations for b in r["borrowed"]}
    assert kinds == {False, True}  # the reply as it was, the tool result as the JSON string holding it
    added = sum(len(r["added"]) for r in continuations)
    assert added < 0.1 * sum(len(v) - len(recorded[min(recorded)]) for v in recorded.values())
    # Every reader gives what was recorded: the views, the documented macro over a plain glob, a trajectory,
    # the Python rebuild compaction uses.
    assert {s: v for s, v in inputs(tmp_path).items() if s in recorded} == recorded
    con = duckdb.connect()
    con.execute(agentotel.query._sql("macro_agentotel_spans"))
    glob = f"{tmp_path}/spans/**/*.parquet"
    assert dict(con.sql(f"SELECT span_id, input FROM agentotel_spans('{glob}') WHERE operation = 'chat'").fetchall()) == recorded
    steps = agentotel.open(tmp_path).trajectory("blocks").steps
    assert [json.dumps(s.input, ensure_ascii=False, separators=(",", ":")) for s in steps if s.type == "llm"] == [recorded[s] for s in sorted(recorded)]
    table = pa.concat_tables([conform(pq.read_table(p)) for p in parquet_files(tmp_path)])
    full = dict(zip(table.column("span_id").to_pylist(), messages.full_inputs(table)))
    assert {s: full[s] for s in recorded} == recorded
    compact(tmp_path, grace_s=0)
    assert {s: v for s, v in inputs(tmp_path).items() if s in recorded} == recorded


def test_a_result_duckdb_would_escape_otherwise_is_stored_as_it_is_not_borrowed_as_a_string(tmp_path):
    # A terminal's colour codes: Python's json writes ESC as \u001b, DuckDB's to_json as \u001B.
    recorded = _blocks_run(tmp_path, 4, lambda k: f"\x1b[31mred {k}\x1b[0m " * 20)
    rows = stored(tmp_path)
    assert not any(b["as_string"] for s in recorded for b in rows[s]["borrowed"] or ())
    assert {s: v for s, v in inputs(tmp_path).items() if s in recorded} == recorded
