"""Trajectories: steps in order, their tree, the requesting model step, lost parents."""

from __future__ import annotations

import json

import pytest

import agentotel
from agentotel import semconv as sc
from agentotel.providers import ANTHROPIC_SDK_SCOPE
from agentotel.query import pylist
from agentotel.store.dialects import OI_AGENT_NAME, OI_SPAN_KIND
from spanbuild import MS, SpanStore, assistant


def test_steps_are_numbered_by_start_time_with_their_tree_and_requests(tmp_path):
    store = SpanStore(tmp_path)
    run = store.run("research", "run-1", env={sc.AGENTOTEL_ENV_HASH: "e1"})
    run.retrieval("docs", "what is otel", [{"id": "d1", "score": 0.9}])
    run.llm(assistant(calls=[("call_1", "search", {"q": "otel"}), ("call_2", "fetch", {"url": "u"})]), http_child=True)
    run.tool("search", {"q": "otel"}, ["r1"], call_id="call_1")
    fetch = run.tool("fetch", {"url": "u"}, {"body": "x"}, call_id="call_2")
    run.llm(assistant("summarised"), parent=fetch)  # a model call made inside a tool
    run.llm(assistant("done"))
    store.write()

    t = agentotel.open(tmp_path).trajectory("run-1")
    assert [(s.index, s.type, s.tool_name or s.model) for s in t.steps] == [
        (1, "retrieval", None), (2, "llm", "gpt-4o-mini"), (3, "tool", "search"), (4, "tool", "fetch"),
        (5, "llm", "gpt-4o-mini"), (6, "llm", "gpt-4o-mini"),
    ]
    assert [s.requested_by for s in t.steps] == [None, None, 2, 2, None, None]
    assert [(s.parent_index, s.depth) for s in t.steps] == [(None, 0)] * 4 + [(4, 1), (None, 0)]
    assert t.steps[2].input == {"q": "otel"} and t.steps[2].output == ["r1"]
    assert t.run["steps"] == 6 and t.run["tool_calls"] == 2
    assert t.environment == {sc.AGENTOTEL_ENV_HASH: "e1"}
    # The steps view numbers steps exactly as the trajectory does.
    view = agentotel.open(tmp_path).sql('SELECT "index", span_id FROM steps WHERE run_id = $r ORDER BY 1', {"r": "run-1"})
    assert view.fetchall() == [(s.index, s.span_id) for s in t.steps]


def test_to_dict_is_the_json_form(tmp_path):
    store = SpanStore(tmp_path)
    run = store.run("r", "run-1")
    run.tool("lookup", {"id": 1}, {"ok": True})
    store.write()
    data = json.loads(json.dumps(agentotel.open(tmp_path).trajectory("run-1").to_dict()))
    assert set(data) == {"run", "steps"}
    assert set(data["steps"][0]) >= {
        "index", "type", "name", "span_id", "parent_index", "depth", "status", "start_time", "duration_ms", "model",
        "tool_name", "tool_call_id", "requested_by", "input_tokens", "output_tokens", "cost_usd", "input", "output",
    }
    assert data["steps"][0]["output"] == {"ok": True}


def test_transport_spans_and_sdk_duplicate_spans_are_not_steps(tmp_path):
    store = SpanStore(tmp_path)
    run = store.run("r", "run-1")
    chat = run.llm(assistant("hi"), http_child=True)
    sdk = {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_USAGE_INPUT_TOKENS: 100}
    run.raw("anthropic.messages.create", sdk, parent=chat, scope=ANTHROPIC_SDK_SCOPE)  # the SDK's copy of our call
    alone = store.run("r", "run-2")  # agentotel's patches off: the SDK's span is the only record of the call
    alone.raw("anthropic.messages.create", sdk, scope=ANTHROPIC_SDK_SCOPE)
    store.write()
    traces = agentotel.open(tmp_path)
    assert [s.name for s in traces.trajectory("run-1").steps] == ["chat gpt-4o-mini"]
    assert [s.name for s in traces.trajectory("run-2").steps] == ["anthropic.messages.create"]
    calls = traces.sql("SELECT run_id, count(*), sum(input_tokens) FROM llm_calls GROUP BY 1 ORDER BY 1").fetchall()
    assert calls == [("run-1", 1, 100), ("run-2", 1, 100)]
    counts = traces.sql("SELECT run_id, steps, model_calls, input_tokens FROM runs ORDER BY 1").fetchall()
    assert counts == [("run-1", 1, 1, 100), ("run-2", 1, 1, 100)]
    assert traces.sql("SELECT count(*) FROM steps").fetchall()[0][0] == 2


def test_calls_two_instrumentations_record_as_siblings_count_once_each_even_when_every_call_has_the_same_counts(tmp_path):
    """OpenLLMetry's anthropic span and the SDK's own beside it, for each of three calls a scripted model answers
    with the same token counts: each pair is one call (not all six against the first)."""
    store = SpanStore(tmp_path)
    run = store.run("r", "run-1")
    same = {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_USAGE_INPUT_TOKENS: 100, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 12}
    for _ in range(3):
        run.raw("anthropic.chat", same, scope="opentelemetry.instrumentation.anthropic", ms=10)
        run.clock -= 8 * MS  # the SDK's span of the same call, inside the first one's time
        run.raw("anthropic.messages.create", same, scope=ANTHROPIC_SDK_SCOPE, ms=4)
        run.clock += 5 * MS  # the next call after both ended
    store.write()
    traces = agentotel.open(tmp_path)
    assert [s.name for s in traces.trajectory("run-1").steps] == ["anthropic.chat"] * 3
    assert traces.sql("SELECT count(*), sum(input_tokens) FROM llm_calls").fetchall() == [(3, 300)]


def test_another_instrumentations_span_of_a_call_agentotel_recorded_counts_once_inside_or_outside(tmp_path):
    """OpenLLMetry, OpenInference & co. patching the same client: their chat span sits inside ours or wraps it."""
    store = SpanStore(tmp_path)
    other = {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_USAGE_INPUT_TOKENS: 100, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 20}
    inside = store.run("r", "run-inside")
    ours = inside.llm(assistant("hi"))
    inside.raw("openai.chat", other, parent=ours, scope="opentelemetry.instrumentation.openai")
    outside = store.run("r", "run-outside")
    wrapper = outside.raw("openai.chat", other, scope="openinference.instrumentation.openai")
    outside.clock -= 10_000_000
    outside.llm(assistant("hi"), parent=wrapper)
    alone = store.run("r", "run-alone")  # agentotel's patches off: the other span is the only record
    alone.raw("openai.chat", other, scope="opentelemetry.instrumentation.openai")
    store.write()
    traces = agentotel.open(tmp_path)
    counts = traces.sql("SELECT run_id, steps, model_calls, input_tokens FROM runs ORDER BY 1").fetchall()
    assert counts == [("run-alone", 1, 1, 100), ("run-inside", 1, 1, 100), ("run-outside", 1, 1, 100)]
    assert traces.sql("SELECT run_id, count(*) FROM llm_calls GROUP BY 1 ORDER BY 1").fetchall() == [
        ("run-alone", 1), ("run-inside", 1), ("run-outside", 1)]
    for run_id in ("run-inside", "run-outside"):
        assert [s.name for s in traces.trajectory(run_id).steps] == ["chat gpt-4o-mini"], run_id


def test_a_frameworks_own_agent_span_of_an_agent_agentotel_recorded_counts_once(tmp_path):
    """A framework's own agent span (OpenInference's AGENT kind here) inside or around agentotel's span of
    the same agent is that agent once; another agent's span stays a step, and so does the run's root."""
    store = SpanStore(tmp_path)
    agent = {sc.GEN_AI_OPERATION_NAME: "invoke_agent"}
    oi_agent = {OI_SPAN_KIND: "AGENT"}
    inside = store.run("job", "run-inside")
    ours = inside.raw("invoke_agent planner", {**agent, sc.GEN_AI_AGENT_NAME: "planner"})
    inside.clock -= 10 * 1_000_000
    theirs = inside.raw("planner", {**oi_agent, OI_AGENT_NAME: "planner"}, parent=ours, ms=8, scope="openinference.instrumentation.x")
    inside.llm(assistant("plan"), parent=theirs)
    inside.raw("researcher", {**oi_agent, OI_AGENT_NAME: "researcher"}, parent=theirs, scope="openinference.instrumentation.x")
    around = store.run("job", "run-around")
    wrapper = around.raw("invoke_agent planner", {**agent, sc.GEN_AI_AGENT_NAME: "planner"}, scope="pydantic-ai")
    around.clock -= 10 * 1_000_000
    around.raw("invoke_agent planner", {**agent, sc.GEN_AI_AGENT_NAME: "planner"}, parent=wrapper, ms=8)
    as_root = store.run("planner", "run-root")  # no run was open: the agent's own run, its root ours
    as_root.raw("invoke_agent planner", {**agent, sc.GEN_AI_AGENT_NAME: "planner"}, scope="pydantic-ai")
    store.write()
    traces = agentotel.open(tmp_path)
    steps = {run: [(s.type, s.name) for s in traces.trajectory(run).steps] for run in ("run-inside", "run-around", "run-root")}
    assert steps == {
        "run-inside": [("agent", "invoke_agent planner"), ("llm", "chat gpt-4o-mini"), ("agent", "researcher")],
        "run-around": [("agent", "invoke_agent planner")],
        "run-root": [],
    }
    counts = dict(traces.sql("SELECT run_id, steps FROM runs").fetchall())
    assert counts == {"run-inside": 3, "run-around": 1, "run-root": 0}
    assert traces.sql("SELECT count(*) FROM steps WHERE type = 'agent'").fetchall()[0][0] == 3


def test_a_third_record_of_a_call_written_in_another_batch_counts_once(tmp_path):
    """ours → another instrumentation's copy (marked by the writer, same batch) → a third copy written later
    in a file of its own (another process exporting): the third, inside the marked one, is no step either."""
    store = SpanStore(tmp_path)
    other = {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_USAGE_INPUT_TOKENS: 100, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 20}
    first = store.run("r", "run-1")
    ours = first.llm(assistant("hi"))
    first.clock -= 10_000_000
    copy = first.raw("openai.chat", other, parent=ours, ms=8, scope="opentelemetry.instrumentation.openai")
    store.write([first])
    later = store.run("r", "run-1", trace_id=first.trace_id, finished=False)
    later.clock = first.clock - 9_000_000
    later.raw("ChatCompletion", other, parent=copy, ms=6, scope="openinference.instrumentation.openai", span_id="00000000000c0ffe")
    store.write([later])
    traces = agentotel.open(tmp_path)
    assert [s.name for s in traces.trajectory("run-1").steps] == ["chat gpt-4o-mini"]
    assert traces.sql("SELECT steps, model_calls, input_tokens FROM runs").fetchall() == [(1, 1, 100)]


def test_a_span_whose_parent_never_arrived_still_appears_flagged(tmp_path):
    store = SpanStore(tmp_path)
    run = store.run("r", "run-1")
    run.llm(assistant("hi"))
    run.tool("lost", {}, {}, parent="00000000deadbeef")
    store.write()
    steps = agentotel.open(tmp_path).trajectory("run-1").steps
    assert [(s.tool_name, s.orphan) for s in steps] == [(None, False), ("lost", True)]


def test_a_nested_run_is_an_agent_step_of_the_outer_run(tmp_path):
    store = SpanStore(tmp_path)
    outer = store.run("planner", "outer")
    delegate = outer.tool("delegate", {"task": "t"}, {"ok": True})
    inside_delegate = outer.spans[-1]["start_time_ns"] + 1_000_000
    inner = store.run("worker", "inner", trace_id=outer.trace_id, start=inside_delegate,
                      env={sc.AGENTOTEL_RUN_PARENT_ID: "outer", "_parent_span": delegate})
    inner.tool("work", {}, {"done": 1})
    store.write()
    traces = agentotel.open(tmp_path)
    outer_steps = traces.trajectory("outer").steps
    assert [(s.type, s.parent_index, s.depth) for s in outer_steps] == [("tool", None, 0), ("agent", 1, 1)]
    assert [s.tool_name for s in traces.trajectory("inner").steps] == ["work"]
    # The shared trace id names the outermost run.
    assert traces.resolve(outer.trace_id).run_id == "outer"


def test_a_runs_totals_include_its_sub_agents_and_a_failure_counts_once(tmp_path):
    store = SpanStore(tmp_path)
    outer = store.run("planner", "outer", status="ERROR")
    outer.llm(assistant("plan"), input_tokens=100, output_tokens=10, cost=0.5)
    delegate = outer.tool("delegate", {}, None, error="RuntimeError")  # failed, and the run failed with it
    inner = store.run("worker", "inner", trace_id=outer.trace_id, start=outer.spans[-1]["start_time_ns"] + 1_000_000,
                      env={sc.AGENTOTEL_RUN_PARENT_ID: "outer", "_parent_span": delegate})
    inner.llm(assistant("work"), input_tokens=1000, output_tokens=200, cost=0.25)
    store.write()
    traces = agentotel.open(tmp_path)
    rows = traces.sql("SELECT run_id, input_tokens, total_input_tokens, total_output_tokens, cost_usd, total_cost_usd, "
                      "errors FROM runs ORDER BY run_id").fetchall()
    assert rows == [("inner", 1000, 1000, 200, 0.25, 0.25, 0), ("outer", 100, 1100, 210, 0.5, 0.75, 1)]
    run = traces.trajectory("outer").run
    assert (run["total_input_tokens"], run["total_output_tokens"], run["total_cost_usd"], run["errors"]) == (1100, 210, 0.75, 1)


def test_a_trajectorys_run_summary_is_the_runs_view_row(tmp_path):
    """Traces.trajectory() computes the run row in Python (for speed); it must equal the `runs` view's."""
    store = SpanStore(tmp_path)
    done = store.run("research", "run-done", env={sc.AGENTOTEL_ENV_HASH: "e1"})
    done.retrieval("docs", "q", [{"id": "d1"}])
    done.llm(assistant(calls=[("c1", "search", {"q": "x"})]), model="gpt-4o", cost=0.25)
    done.tool("search", {"q": "x"}, {"hits": []}, call_id="c1", error="TimeoutError")
    done.llm(assistant("done"), cost=None, http_child=True)
    failed = store.run("failing", "run-failed", user="bob", status="ERROR")
    failed.tool("boom", {}, None, error="ValueError")
    live = store.run("live", "run-live")
    live.finished = False
    live.llm(assistant("thinking"))
    outer = store.run("planner", "run-outer")
    delegate = outer.tool("delegate", {}, {"ok": True})
    inner = store.run("worker", "run-inner", trace_id=outer.trace_id, start=outer.spans[-1]["start_time_ns"] + 1_000_000,
                      env={sc.AGENTOTEL_RUN_PARENT_ID: "run-outer", "_parent_span": delegate})
    inner.tool("work", {}, {})
    store.write()
    traces = agentotel.open(tmp_path)
    view = {r["run_id"]: r for r in pylist(traces.sql("SELECT * FROM runs").to_arrow_table())}
    assert set(view) == {"run-done", "run-failed", "run-live", "run-outer", "run-inner"}
    for run_id, expected in view.items():
        got = traces.trajectory(run_id).run
        assert set(got) == set(expected), run_id
        for key, value in expected.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value), (run_id, key)
            else:
                assert got[key] == value, (run_id, key)


def test_the_steps_view_and_the_trajectory_agree_on_every_shared_field(tmp_path):
    """The `steps` view is the SQL form of Traces.trajectory() (the tree and requests are Python-only)."""
    store = SpanStore(tmp_path)
    main = store.run("research", "run-main")
    main.retrieval("docs", "q", [{"id": "d1"}])
    main.llm(assistant(calls=[("call_1", "search", {"q": "x"}), ("call_2", "fetch", {"u": 1})]), http_child=True)
    main.tool("search", {"q": "x"}, ["r1"], call_id="call_1")
    fetch = main.tool("fetch", {"u": 1}, {"body": "x"}, call_id="call_2")
    inside = main.llm(assistant(calls=[("call_3", "search", {"q": "y"})]), parent=fetch)
    main.tool("search", {"q": "y"}, [], call_id="call_3", parent=inside)
    main.tool("unasked", {}, {}, call_id="call_9")  # no model step asked for it
    main.tool("lost", {}, {}, parent="00000000deadbeef")
    outer = store.run("planner", "run-outer")
    delegate = outer.tool("delegate", {}, {"ok": True})
    inner = store.run("worker", "run-inner", trace_id=outer.trace_id, start=outer.spans[-1]["start_time_ns"] + 1_000_000,
                      env={sc.AGENTOTEL_RUN_PARENT_ID: "run-outer", "_parent_span": delegate})
    inner.llm(assistant(calls=[("call_4", "work", {})]))
    inner.tool("work", {}, {"done": 1}, call_id="call_4")
    store.write()

    traces = agentotel.open(tmp_path)
    fields = ("index", "type", "name", "span_id", "status", "model",
              "tool_name", "tool_call_id", "input_tokens", "output_tokens", "cost_usd")
    rows = pylist(traces.sql(f"SELECT run_id, {', '.join(repr(f).replace(chr(39), chr(34)) for f in fields)} "
                             "FROM steps ORDER BY run_id, \"index\"").to_arrow_table())
    assert {r["run_id"] for r in rows} == {"run-main", "run-outer", "run-inner"}
    for run_id in ("run-main", "run-outer", "run-inner"):
        steps = traces.trajectory(run_id).steps
        view = [{f: r[f] for f in fields} for r in rows if r["run_id"] == run_id]
        assert view == [{f: getattr(s, f) for f in fields} for s in steps], run_id
    main_steps = {s.index: s for s in traces.trajectory("run-main").steps}
    # The check above compares two implementations; this pins what the trajectory must say.
    assert [(s.tool_name, s.parent_index, s.depth, s.requested_by) for s in main_steps.values() if s.type == "tool"] == [
        ("search", None, 0, 2), ("fetch", None, 0, 2), ("search", 5, 2, 5), ("unasked", None, 0, None),
        ("lost", None, 0, None),
    ]
