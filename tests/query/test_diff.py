"""Run diffs: alignment, each divergence kind, environment, totals, the --json form."""

from __future__ import annotations

import json

import pytest

import agentotel
from agentotel import semconv as sc
from agentotel.analysis.diff import KINDS, shape
from spanbuild import SpanStore, assistant

BASE = [("search", {"q": "otel"}, {"hits": [{"id": 1, "title": "t"}]}),
        ("fetch", {"url": "u1"}, {"body": "text"}),
        ("summarise", {"n": 3}, {"summary": "s"}),
        ("save", {"path": "p"}, {"ok": True})]


def agent_run(store: SpanStore, run_id: str, tools=BASE, *, model: str = "gpt-4o-mini", env: str = "e1",
              status_of: dict | None = None, llm: bool = True):
    run = store.run("agent", run_id, env={sc.AGENTOTEL_ENV_HASH: env, sc.AGENTOTEL_ENV_COMMIT: env + "-commit"})
    for i, (name, arguments, result) in enumerate(tools):
        call = f"call_{run_id}_{i}"
        if llm:
            run.llm(assistant(calls=[(call, name, arguments)]), model=model)
        run.tool(name, arguments, result, call_id=call, error=(status_of or {}).get(name))
    if llm:
        run.llm(assistant("done"), model=model)
    return run


def diff(tmp_path, b_tools=BASE, **b_kw):
    store = SpanStore(tmp_path)
    agent_run(store, "run-a", llm=b_kw.get("llm", True))
    agent_run(store, "run-b", b_tools, **b_kw)
    store.write()
    return agentotel.open(tmp_path).diff("run-a", "run-b")


def test_identical_runs_have_no_divergence(tmp_path):
    d = diff(tmp_path)
    assert d.first_divergence is None
    assert {p.status for p in d.pairs} == {"same"} and len(d.pairs) == 9


def test_an_inserted_step_followed_by_identical_steps_is_one_difference(tmp_path):
    store = SpanStore(tmp_path)
    a = store.run("agent", "run-a")
    b = store.run("agent", "run-b")
    for i, (name, arguments, result) in enumerate(BASE):
        a.tool(name, arguments, result)
        if i == 1:
            b.tool("retry_fetch", {"url": "u1"}, {"body": "text"})
        b.tool(name, arguments, result)
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    assert [(p.index_a, p.index_b, p.status) for p in d.differences] == [(None, 2, "step_added")]
    assert d.first_divergence["kind"] == "step_added" and d.first_divergence["index_b"] == 2
    # Every later step is still paired with its counterpart.
    assert [(p.index_a, p.index_b) for p in d.pairs if p.status == "same"] == [(1, 1), (2, 3), (3, 4), (4, 5)]


def test_a_removed_step(tmp_path):
    d = diff(tmp_path, BASE[:1] + BASE[2:])
    kinds = {p.status for p in d.differences}
    assert kinds == {"step_removed"}
    first = d.first_divergence
    assert first["kind"] == "step_removed"
    # index_b names the step of B where it went another way: B goes on, so its first model call after the
    # gap (the one that asked for summarise where A's asked for fetch), not the identical step before it.
    (after,) = [p.index_b for p in d.pairs if p.index_a == first["index_a"] + 2]
    assert d.b.steps[after - 1].type == "llm"
    assert first["index_b"] == after == 3


def test_a_different_tool(tmp_path):
    d = diff(tmp_path, BASE[:1] + [("download", {"url": "u1"}, {"body": "text"})] + BASE[2:], llm=False)
    assert d.first_divergence["kind"] == "tool_changed"
    assert (d.first_divergence["index_a"], d.first_divergence["index_b"]) == (2, 2)
    assert "fetch" in d.first_divergence["detail"] and "download" in d.first_divergence["detail"]


def test_in_an_agent_loop_the_model_step_that_chose_another_tool_diverges_first(tmp_path):
    d = diff(tmp_path / "agent", BASE[:1] + [("download", {"url": "u1"}, {"body": "text"})] + BASE[2:])
    assert [(p.index_a, p.status) for p in d.differences] == [(3, "output_changed"), (4, "tool_changed")]
    assert d.first_divergence["index_a"] == 3
    changes = d.differences[0].changes
    assert {"path": "$.output[0].parts[0].name", "a": "fetch", "b": "download"} in changes


def test_changed_arguments_report_json_paths(tmp_path):
    d = diff(tmp_path, BASE[:1] + [("fetch", {"url": "u2"}, {"body": "text"})] + BASE[2:], llm=False)
    first = d.first_divergence
    assert first["kind"] == "arguments_changed" and first["index_a"] == 2
    (pair,) = d.differences
    assert {"path": "$.input.url", "a": "u1", "b": "u2"} in pair.changes


def test_a_different_model(tmp_path):
    d = diff(tmp_path, model="gpt-4o")
    assert d.first_divergence["kind"] == "model_changed" and d.first_divergence["index_a"] == 1


def test_changed_output_with_the_same_shape(tmp_path):
    d = diff(tmp_path, BASE[:1] + [("fetch", {"url": "u1"}, {"body": "other text"})] + BASE[2:])
    assert d.first_divergence["kind"] == "output_changed"
    (pair,) = d.differences
    assert pair.changes == [{"path": "$.output.body", "a": "text", "b": "other text"}]


def test_a_tool_output_whose_shape_changed_is_schema_drift(tmp_path):
    drifted = [("search", {"q": "otel"}, {"results": [{"id": "1", "title": "t"}]})] + BASE[1:]
    d = diff(tmp_path, drifted)
    assert d.first_divergence["kind"] == "output_shape_changed" and d.first_divergence["index_a"] == 2
    assert "$.output.hits" in d.first_divergence["detail"]


def test_a_changed_status(tmp_path):
    d = diff(tmp_path, status_of={"save": "PermissionError"})
    assert d.first_divergence["kind"] == "status_changed" and d.first_divergence["index_a"] == 8
    assert d.totals["errors"] == {"a": 0, "b": 1}


def test_environment_differences_and_totals_side_by_side(tmp_path):
    d = diff(tmp_path, env="e2")
    environment = d.to_dict()["environment"]
    assert environment, "the environment comparison must say something"
    text = json.dumps(environment)
    assert "e1" in text and "e2" in text
    assert d.totals["steps"] == {"a": 9, "b": 9}
    assert d.totals["tool_calls"] == {"a": 4, "b": 4}
    assert d.totals["cost_usd"]["a"] == pytest.approx(0.005)


def test_the_json_form(tmp_path):
    d = diff(tmp_path, BASE[:1] + [("fetch", {"url": "u2"}, {"body": "text"})] + BASE[2:])
    data = json.loads(json.dumps(d.to_dict()))
    assert set(data) == {"a", "b", "first_divergence", "pairs", "environment", "totals"}
    assert set(data["first_divergence"]) == {"index_a", "index_b", "kind", "detail"}
    assert set(data["pairs"][0]) == {"index_a", "index_b", "status", "changes", "delta"}
    assert data["pairs"][0]["delta"] == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0}
    assert data["a"]["run_id"] == "run-a" and data["b"]["run_id"] == "run-b"
    assert {p["status"] for p in data["pairs"]} <= {"same", *KINDS}


def test_shape_keeps_keys_and_types_not_values():
    assert shape({"a": 1, "b": [{"x": "s"}, {"x": "t"}]}) == {"a": "number", "b": [{"x": "string"}]}
    assert shape({"a": 1}) != shape({"a": "1"})


def test_the_environment_difference_names_a_changed_model_even_when_the_snapshots_hash_equal(tmp_path):
    snapshot = json.dumps({"python": {"version": "3.11.7"}, "packages": {"openai": "3.57.0"}})
    env = {sc.AGENTOTEL_ENV_SNAPSHOT: snapshot, sc.AGENTOTEL_ENV_HASH: "same-hash"}
    s = SpanStore(tmp_path)
    s.run("agent", "run-model-a", env=env).llm("hi", model="gpt-4o-mini")
    s.run("agent", "run-model-b", env=env).llm("hi", model="gpt-4.1")
    s.write()
    result = agentotel.open(tmp_path).diff("run-model-a", "run-model-b").to_dict()
    assert result["environment"]["same"] is False
    text = json.dumps(result["environment"])
    assert "gpt-4o-mini" in text and "gpt-4.1" in text


def test_a_failed_tool_call_and_its_retry_are_one_inserted_step(tmp_path):
    store = SpanStore(tmp_path)
    a, b = store.run("agent", "run-a"), store.run("agent", "run-b")
    for i, (name, arguments, result) in enumerate(BASE):
        a.tool(name, arguments, result)
        if i == 1:
            b.tool(name, arguments, None, error="TimeoutError")
        b.tool(name, arguments, result)
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    # The failed attempt is the extra step; the identical successful call pairs with A's, unblamed.
    assert [(p.index_a, p.index_b, p.status) for p in d.differences] == [(None, 2, "step_added")]
    assert (2, 3, "same") in [(p.index_a, p.index_b, p.status) for p in d.pairs]
    assert d.first_divergence["detail"] == "run B has an extra step 2: tool fetch (failed: TimeoutError)"


def test_a_step_that_failed_without_a_retry_is_a_status_change(tmp_path):
    d = diff(tmp_path, BASE[:3] + [("save", {"path": "p"}, None)], status_of={"save": "PermissionError"}, llm=False)
    assert [(p.index_a, p.index_b, p.status) for p in d.differences] == [(4, 4, "status_changed")]
    assert {"path": "$.error", "a": None, "b": "PermissionError"} in d.differences[0].changes


def test_a_failure_the_good_run_recovered_from_is_not_the_first_divergence(tmp_path):
    # A timed out once and retried (a 429, a flaky tool); B's real difference comes later: that is the divergence.
    store = SpanStore(tmp_path)
    a, b = store.run("agent", "run-a"), store.run("agent", "run-b")
    for i, (name, arguments, result) in enumerate(BASE):
        if i == 1:
            a.tool(name, arguments, None, error="TimeoutError")
        a.tool(name, arguments, result)
        b.tool(name, arguments, {"summary": "other"} if name == "summarise" else result)
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    assert (d.first_divergence["index_a"], d.first_divergence["index_b"], d.first_divergence["kind"]) == (4, 3, "output_changed")
    assert (2, None, "step_removed") in [(p.index_a, p.index_b, p.status) for p in d.pairs]  # still listed


def test_a_repeated_stretch_is_the_second_copy_never_the_identical_first(tmp_path):
    # B repeats fetch + summarise: the extra steps are B's second copies (5, 6), its first ones pair with A's.
    d = diff(tmp_path, BASE[:3] + BASE[1:3] + BASE[3:], llm=False)
    assert [(p.index_a, p.index_b, p.status) for p in d.differences] == [(None, 4, "step_added"), (None, 5, "step_added")]
    assert d.first_divergence["index_b"] == 4
    assert [(p.index_a, p.index_b) for p in d.pairs if p.status == "same"] == [(1, 1), (2, 2), (3, 3), (4, 6)]


def test_an_agent_called_as_a_tool_diverges_where_its_own_model_answered_otherwise(tmp_path):
    """A sub-agent run inside a tool step (the Agents SDK's as_tool, a LangGraph worker in a tool): the tool's output
    is the sub-agent's answer, so the first divergence is the sub-agent's model call that answered otherwise, not the
    tool step holding it."""
    store = SpanStore(tmp_path)
    for run_id, answer in (("run-a", "COULD NOT RUN: sandbox down"), ("run-b", "REPRODUCED: the sync stops")):
        run = store.run("lead", run_id)
        run.llm(assistant(calls=[(f"c_{run_id}", "repro_agent", {"input": "Reproduce BR-508."})]))
        worker = run.tool("repro_agent", {"input": "Reproduce BR-508."}, answer, call_id=f"c_{run_id}")
        run.llm(assistant(calls=[(f"r_{run_id}", "run_repro", {"version": "4.3.0"})]), parent=worker)
        run.tool("run_repro", {"version": "4.3.0"}, None, call_id=f"r_{run_id}", error="RuntimeError: sandbox down", parent=worker)
        run.llm(assistant(answer), parent=worker)
        run.llm(assistant("Triage done."))
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    assert d.first_divergence["index_b"] == 5 and d.first_divergence["kind"] == "output_changed", d.first_divergence
    # a tool with nothing inside it is still where its own output changed
    assert diff(tmp_path / "flat", [BASE[0], ("fetch", {"url": "u1"}, {"body": "other"}), *BASE[2:]]).first_divergence["index_b"] == 4


def test_an_agent_that_failed_after_looping_pairs_with_its_counterpart_not_with_its_namesake_inside(tmp_path):
    """A handoff loop ending on max turns: run B's top agent failed, and agents of the same name recur inside it. The top
    agents pair (the difference is its status), so the first divergence is the analyst's model call that handed back
    instead of working, not a top agent 'added'."""
    store = SpanStore(tmp_path)
    agent = {sc.GEN_AI_OPERATION_NAME: "invoke_agent"}

    def run_of(run_id: str, looped: bool):
        run = store.run("desk", run_id)
        top = run.raw("invoke_agent intake", {**agent, sc.GEN_AI_AGENT_NAME: "intake"}, status="ERROR" if looped else "UNSET")
        for turn in range(3 if looped else 1):
            run.llm(assistant(calls=[(f"h{run_id}{turn}", "transfer_to_analyst", {})]), parent=top)
            run.tool("transfer_to_analyst", {}, {"assistant": "analyst"}, call_id=f"h{run_id}{turn}", parent=top)
            analyst = run.raw("invoke_agent analyst", {**agent, sc.GEN_AI_AGENT_NAME: "analyst"}, parent=top)
            if looped:
                run.llm(assistant(calls=[(f"b{run_id}{turn}", "transfer_to_intake", {})]), parent=analyst)
                run.tool("transfer_to_intake", {}, {"assistant": "intake"}, call_id=f"b{run_id}{turn}", parent=analyst)
                top = run.raw("invoke_agent intake", {**agent, sc.GEN_AI_AGENT_NAME: "intake"}, parent=analyst)
            else:
                run.llm(assistant(calls=[(f"q{run_id}", "run_sql", {"query": "SELECT 1"})]), parent=analyst)
                run.tool("run_sql", {"query": "SELECT 1"}, [{"1": 1}], call_id=f"q{run_id}", parent=analyst)
                run.llm(assistant("AMER revenue: 1.43M."), parent=analyst)
    run_of("run-a", looped=False)
    run_of("run-b", looped=True)
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    assert d.first_divergence["index_b"] == 5, d.first_divergence
    assert d.pairs[0].index_a == 1 and d.pairs[0].index_b == 1 and d.pairs[0].status == "status_changed", d.pairs[0]


def test_a_tool_that_failed_on_what_its_own_retriever_gave_is_where_the_runs_diverge(tmp_path):
    """A tool reading through a retriever of its own (no model inside) stays the unit: when it fails on a reshaped
    result, the first divergence is the tool, not the retrieval inside it (an agent called as a tool is held instead)."""
    store = SpanStore(tmp_path)
    for run_id, documents, error in (("run-a", [{"id": "D-1", "score": 0.9}], None),
                                     ("run-b", [{"id": "D-1", "relevance": "high"}], "ValueError: no score")):
        run = store.run("docs", run_id)
        run.llm(assistant(calls=[(f"s{run_id}", "search_docs", {"query": "stipend"})]))
        searched = run.tool("search_docs", {"query": "stipend"}, None if error else "[D-1] ...", call_id=f"s{run_id}", error=error,
                            status="ERROR" if error else "UNSET")
        run.raw("retrieval docs", {sc.GEN_AI_OPERATION_NAME: "retrieval", sc.GEN_AI_DATA_SOURCE_ID: "docs",
                                   sc.GEN_AI_RETRIEVAL_QUERY_TEXT: "stipend", sc.GEN_AI_RETRIEVAL_DOCUMENTS: json.dumps(documents)},
                parent=searched)
        run.llm(assistant("done"))
    store.write()
    d = agentotel.open(tmp_path).diff("run-a", "run-b")
    assert d.first_divergence["index_b"] == 2 and d.first_divergence["kind"] == "status_changed", d.first_divergence
