"""The general rules the fourth held-out set (heldout4.py, a SQL data desk through real frameworks) led to, each on
small hand-built trajectories in another domain (a warehouse of parcels): a run that needs the rule, and a run near
it that must not change."""

from __future__ import annotations

import json

from agentotel import semconv

from agentotel.analysis.diff import diff_trajectories
from agentotel.query.trajectory import Step, Trajectory


def _llm(index: int, *calls: tuple[str, dict], text: str | None = None) -> Step:
    parts = [{"type": "text", "content": text}] if text else []
    parts += [{"type": "tool_call", "id": f"c{index}{n}", "name": name, "arguments": args} for n, (name, args) in enumerate(calls)]
    output = [{"role": "assistant", "parts": parts}]
    return Step(index, "llm", "chat gpt-4o-mini", f"s{index}", None, 0, "ok", None, 1.0, model="gpt-4o-mini",
                input=[{"role": "user", "parts": [{"type": "text", "content": "where are parcels P-1 and P-2?"}]}],
                output=output, raw_output=json.dumps(output))


def _tool(index: int, name: str, args: dict, output: object = None, *, error: str | None = None, call_id: str | None = None,
          requested_by: int | None = None) -> Step:
    return Step(index, "tool", f"execute_tool {name}", f"s{index}", None, 0, "error" if error else "ok", None, 1.0, tool_name=name,
                tool_call_id=call_id, requested_by=requested_by, input=args, output=None if error else output, error=error)


def _run(*steps: Step) -> Trajectory:
    return Trajectory({"run_id": "r"}, list(steps))


def _parallel(first_fails: bool, error: str) -> Trajectory:
    """Two parcels looked up in parallel, a span without call id for the failed one (as OpenInference's langchain
    instrumentation records a failed tool), then the failed one asked for again and the answer."""
    one = _tool(2, "track", {"parcel": "P-1"}, error=error) if first_fails else _tool(2, "track", {"parcel": "P-2"}, {"at": "depot"}, call_id="c11", requested_by=1)
    two = _tool(3, "track", {"parcel": "P-2"}, {"at": "depot"}, call_id="c11", requested_by=1) if first_fails else _tool(3, "track", {"parcel": "P-1"}, error=error)
    return _run(_llm(1, ("track", {"parcel": "P-1"}), ("track", {"parcel": "P-2"})), one, two, _llm(4, ("track", {"parcel": "P-1"})),
                _tool(5, "track", {"parcel": "P-1"}, {"at": "van"}, call_id="c40", requested_by=4), _llm(6, text="P-1 is on the van, P-2 at the depot."))


def test_parallel_calls_run_in_the_other_order_with_a_call_id_less_failure_are_no_divergence():
    found = diff_trajectories(_parallel(False, "ConnectionError: 503 busy"), _parallel(True, "ConnectionError: 503 busy")).to_dict()
    assert found["first_divergence"] is None, found["first_divergence"]


def test_another_failure_at_the_same_step_is_the_first_divergence():
    a = _parallel(True, "ConnectionError: 503 busy, retry (request 8f3a9c21)")
    same = diff_trajectories(a, _parallel(True, "ConnectionError: 503 busy, retry (request 77b0e412)")).to_dict()
    assert same["first_divergence"] is None, same["first_divergence"]  # the same failure, another request id
    other = diff_trajectories(a, _parallel(True, "PermissionError: permission denied for relation parcels")).to_dict()
    assert (other["first_divergence"] or {}).get("index_b") == 2, other["first_divergence"]


# ---- a turn limit reached after the history was lost: the limit is spent where it was first lost ---------------


def _gave_up(window: bool):
    from runs_build import llm, record, text_message, tool

    system, task = text_message("system", "You are the stock desk."), text_message("user", "Reorder SKU-4471 if it is low.")

    def asked(call_id: str, n: int) -> dict:
        return {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": "stock_level", "arguments": {"warehouse": f"W-{n}"}}]}

    def answered(call_id: str, n: int) -> dict:
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": json.dumps({"units": 12 + n})}]}

    steps, given = [], [system, task]
    for n in range(4):  # the model reads one warehouse after another, never shown all it read before
        i = 2 * n + 1
        steps.append(llm(i, calls=[("stock_level", {"warehouse": f"W-{n}"}, f"c{i}")], messages=given))
        steps.append(tool(i + 1, "stock_level", {"warehouse": f"W-{n}"}, {"units": 12 + n}, requested_by=i, call_id=f"c{i}"))
        # a faulty window keeps the task and the latest exchange only; a good one keeps everything
        exchange = [asked(f"c{i}", n), answered(f"c{i}", n)]
        given = [system, task, *exchange] if window else [*given, *exchange]
    run = record(*steps, status="error", task="Reorder SKU-4471 if it is low.")
    run.run["error"] = "MaxTurnsExceeded: Max turns (8) exceeded"
    return run


def test_a_turn_limit_after_history_was_lost_is_placed_where_it_was_first_lost():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_gave_up(True))
    assert [(f.index, f.layer) for f in found if f.kind == "run_failed"] == [(5, "memory")], format_findings(found)


def test_a_turn_limit_with_the_history_kept_stays_the_loop_s():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_gave_up(False))
    assert [(f.index, f.layer) for f in found if f.kind == "run_failed"] == [(8, "workflow")], format_findings(found)


# ---- the answer's form, as the request states it ------------------------------------------------------------


def _answered(question: str, answer: str):
    from runs_build import llm, record, text_message, tool

    given = [text_message("system", "You are the parcel desk."), text_message("user", question)]
    return record(
        llm(1, calls=[("track", {"parcel": "P-31"}, "c1")], messages=given),
        tool(2, "track", {"parcel": "P-31"}, {"parcel": "P-31", "at": "Leeds depot", "eta": "2026-12-04"}, requested_by=1, call_id="c1"),
        llm(3, text=answer, messages=[*given, {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "track", "arguments": {"parcel": "P-31"}}]},
                                      {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": '{"at": "Leeds depot", "eta": "2026-12-04"}'}]}]),
        task=question)


ASKED = 'Where is parcel P-31? Reply in the format "AT: {place} | ETA: {date}".'


def test_an_answer_out_of_the_form_the_request_states_is_answer_format_violated_at_the_answer():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_answered(ASKED, "Parcel P-31 is at the Leeds depot and should arrive on 2026-12-04."))
    assert [(f.index, f.layer) for f in found if f.kind == "answer_format_violated"] == [(3, "model")], format_findings(found)


def test_the_form_with_words_around_it_or_no_form_asked_is_no_finding():
    from agentotel.analysis.detectors import detect, format_findings

    for question, answer in ((ASKED, "Found it. AT: Leeds depot | ETA: 2026-12-04"),
                             ("Where is parcel P-31?", "Parcel P-31 is at the Leeds depot, arriving 2026-12-04.")):
        found = detect(_answered(question, answer))
        assert [f for f in found if f.kind == "answer_format_violated"] == [], format_findings(found)


def test_a_long_answer_out_of_a_many_placeholder_form_is_judged_without_backtracking():
    # One pattern with a lazy gap per placeholder backtracked polynomially on a long answer without the form
    # (five placeholders, 3,000 separators: hours); each literal searched for in turn is linear.
    from agentotel.analysis.detectors import detect, format_findings

    asked = 'Reply in the format "{a}, {b}, {c}, {d}, {e} (done)".'
    found = detect(_answered(asked, ", " * 3000))
    assert [(f.index, f.layer) for f in found if f.kind == "answer_format_violated"] == [(3, "model")], format_findings(found)


# ---- session 14: the rules the set's remaining misses led to ----------------------------------------------------


def _kinds(found, kind: str) -> list[tuple[int | None, str]]:
    return [(f.index, f.layer) for f in found if f.kind == kind]


def _agent(index: int, name: str, *, status: str = "ok", error: str | None = None, parent: int | None = None) -> dict:
    return {"index": index, "type": "agent", "name": f"invoke_agent {name}", "span_id": f"s{index}", "status": status,
            "parent_index": parent, "model": None, "tool_name": None, "tool_call_id": None, "requested_by": None,
            "input_tokens": None, "output_tokens": None, "cost_usd": None, "error": error, "input": None, "output": None}


def _in(step: dict, parent: int) -> dict:
    return {**step, "parent_index": parent}


def _limited(agent_error: str):
    """An agent whose tool asked to be retried (the framework hands the error back), then stopped by the agent."""
    from runs_build import llm, record, tool

    return record(_agent(1, "dispatcher", status="error", error=agent_error),
                  _in(llm(2, calls=[("track", {"parcel": "P-7"}, "c2")]), 1),
                  _in(tool(3, "track", {"parcel": "P-7"}, None, status="error", error="ToolRetryError: 503 depot feed busy", call_id="c2"), 1),
                  status="error", task="Where is P-7?")


def test_a_loop_limit_after_a_retried_tool_is_the_loop_giving_up():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_limited("UsageLimitExceeded: The next request would exceed the request_limit of 2"))
    assert _kinds(found, "run_failed") == [(3, "workflow")], format_findings(found)
    # the agent failing with the tool's own error (it propagated): the tool's failure
    found = detect(_limited("ToolRetryError: 503 depot feed busy"))
    assert _kinds(found, "run_failed") == [(3, "tool")], format_findings(found)


def _two_counts(second: object, answer: str):
    from runs_build import llm, record, tool

    calls = [("count_parcels", {"day": "2026-11-30"}, "c1"), ("count_parcels", {"day": "2026-11-29"}, "c2")]
    return record(llm(1, calls=calls),
                  tool(2, "count_parcels", {"day": "2026-11-30"}, {"columns": ["n"], "rows": [[4120]], "row_count": 1}, requested_by=1, call_id="c1"),
                  tool(3, "count_parcels", {"day": "2026-11-29"}, second, requested_by=1, call_id="c2"),
                  llm(4, text=answer), task="How many parcels on 2026-11-30, and the change from the day before?")


def test_an_empty_result_answered_with_figures_nothing_gave_is_an_answer_without_evidence():
    from agentotel.analysis.detectors import detect, format_findings

    empty = {"columns": ["n"], "rows": [], "row_count": 0}
    found = detect(_two_counts(empty, "4120 parcels, up 3.5% on the day before."))
    assert _kinds(found, "answer_without_evidence") == [(4, "product")], format_findings(found)
    assert _kinds(found, "ungrounded_answer") == [], format_findings(found)  # explained: the gap is the empty result's
    for second, answer in ((empty, "4120 parcels; there were no rows for 2026-11-29, so no change can be given."),
                           ({"columns": ["n"], "rows": [[3980]], "row_count": 1}, "4120 parcels, 3980 the day before.")):
        found = detect(_two_counts(second, answer))
        assert _kinds(found, "answer_without_evidence") == [], format_findings(found)


def test_a_graph_s_model_node_called_an_agent_sits_beside_its_tools():
    """OpenInference names LangGraph's `agent` node an agent: one per turn, each holding one model call, the tools
    beside them. The answer at the last node glossing over a tool error is still found."""
    from runs_build import llm, record, text_message, tool

    from agentotel.analysis.detectors import detect, format_findings

    steps = [_agent(1, "agent"), _in(llm(2, calls=[("track", {"parcel": "P-9"}, "c2")]), 1),
             tool(3, "track", {"parcel": "P-9"}, None, status="error",
                  error="PermissionError('depot feed denied')Traceback (most recent call last):\n  File \"feed.py\", line 3"),
             _agent(4, "agent"), _in(llm(5, text="P-9 is at the Leeds depot, arriving 2026-12-04.", messages=[
                 text_message("user", "Where is P-9?"),
                 {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "track", "arguments": {"parcel": "P-9"}}]},
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": "PermissionError: depot feed denied"}]}]), 4)]
    found = detect(record(*steps, task="Where is P-9?"))
    assert _kinds(found, "tool_error_ignored") == [(5, "tool")], format_findings(found)
    assert "Traceback" not in format_findings(found)  # the error's message, not the traceback the span appended


def test_numbers_changed_inside_a_result_s_rows_are_tool_result_altered():
    from runs_build import llm, record, text_message, tool

    from agentotel.analysis.detectors import detect, format_findings

    def run(shown: str):
        asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weigh", "arguments": {"parcel": "P-4"}}]}
        back = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": shown}]}
        return record(llm(1, calls=[("weigh", {"parcel": "P-4"}, "c1")]),
                      tool(2, "weigh", {"parcel": "P-4"}, {"columns": ["kg", "cm"], "rows": [[12.75, 140]]}, requested_by=1, call_id="c1"),
                      llm(3, text="done", messages=[text_message("user", "weigh P-4"), asked, back]), task="weigh P-4")

    found = detect(run('{"columns": ["kg", "cm"], "rows": [[17.25, 140]]}'))
    assert _kinds(found, "tool_result_altered") == [(3, "memory")], format_findings(found)
    found = detect(run('{"columns": ["kg", "cm"], "rows": [[12.75, 140]]}'))
    assert _kinds(found, "tool_result_altered") == [], format_findings(found)


def _handing(targets: list[str], answer: str | None):
    from runs_build import llm, record

    steps, index = [_agent(1, "intake")], 2
    for target in targets:
        steps.append(llm(index, calls=[(f"transfer_to_{target}", {}, f"c{index}")]))
        steps.append(_agent(index + 1, target))
        index += 2
    if answer is not None:
        steps.append(_in(llm(index, text=answer), index - 1))
    return record(*steps, status="ok" if answer else "error", task="Where is P-5?")


def test_agents_handing_a_run_back_and_forth_is_a_handoff_loop_at_the_first_hand_back():
    from agentotel.analysis.detectors import detect, format_findings

    run = _handing(["tracking", "intake", "tracking", "intake", "tracking"], None)
    run.run["error"] = "MaxTurnsExceeded: Max turns (6) exceeded"
    found = detect(run)
    assert _kinds(found, "handoff_loop") == [(4, "workflow")], format_findings(found)
    assert _kinds(found, "run_failed") == [(4, "workflow")], format_findings(found)
    # handed there and back once, then answered: a sub-agent returning its work
    found = detect(_handing(["tracking", "intake"], "P-5 is at the Leeds depot."))
    assert _kinds(found, "handoff_loop") == [], format_findings(found)


def test_a_handoff_to_an_agent_that_declines_the_request_is_handoff_declined_at_the_handoff():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_handing(["billing"], "I can only help with invoices and refunds. Please ask the tracking team."))
    assert _kinds(found, "handoff_declined") == [(2, "workflow")], format_findings(found)
    found = detect(_handing(["tracking"], "P-5 is at the Leeds depot."))
    assert _kinds(found, "handoff_declined") == [], format_findings(found)


def _offered(chosen: str, offered: tuple[str, ...] = ("track", "track_cached")):
    from runs_build import llm, record, tool

    descriptions = {"track": "Where a parcel is now, from the depot feed.",
                    "track_cached": "Where a parcel was, from a cache up to a day old: fast, not for answering customers."}
    definitions = [{"type": "function", "name": n, "description": descriptions[n],
                    "parameters": {"type": "object", "properties": {"parcel": {"type": "string"}}}} for n in offered]
    return record(llm(1, calls=[(chosen, {"parcel": "P-2"}, "c1")]),
                  tool(2, chosen, {"parcel": "P-2"}, {"at": "Leeds depot"}, requested_by=1, call_id="c1"),
                  llm(3, text="P-2 is at the Leeds depot."),
                  attributes={"s1": {semconv.GEN_AI_TOOL_DEFINITIONS: json.dumps(definitions)}}, task="Where is P-2?")


def test_a_tool_chosen_against_its_own_description_over_a_twin_is_wrong_tool_chosen():
    from agentotel.analysis.detectors import detect, format_findings

    found = detect(_offered("track_cached"))
    assert _kinds(found, "wrong_tool_chosen") == [(1, "tool")], format_findings(found)
    for run in (_offered("track"), _offered("track_cached", ("track_cached",))):  # the right one; no other offered
        found = detect(run)
        assert _kinds(found, "wrong_tool_chosen") == [], format_findings(found)


def test_a_code_from_nowhere_where_earlier_runs_put_their_task_s_is_task_ignored():
    from runs_build import llm, record, text_message

    from agentotel.analysis._record import History
    from agentotel.analysis.detectors import detect, format_findings

    def query(depot: str) -> str:
        return json.dumps({"sql": f"SELECT COUNT(*) FROM parcels WHERE depot = '{depot}' AND day = '2026-11-30'"})

    def asked(depot: str) -> str:
        return f"How many parcels did the {depot} depot take on 2026-11-30? Answer in GBP terms."

    earlier = {"r1": "LEEDS", "r2": "YORK"}
    history = History(inputs={"count": [(r, query(d)) for r, d in earlier.items()]},
                      first_calls=[(r, {"type": "llm", "input": [text_message("user", asked(d))]}) for r, d in earlier.items()])

    def run(depot: str):
        return record(llm(1, calls=[("count", json.loads(query(depot)), "c1")], messages=[text_message("user", asked("HULL"))]),
                      task=asked("HULL"))

    found = detect(run("LEEDS"), history)
    assert _kinds(found, "task_ignored") == [(1, "model")], format_findings(found)
    assert "HULL" in next(f.message for f in found if f.kind == "task_ignored")
    found = detect(run("HULL"), history)
    assert _kinds(found, "task_ignored") == [], format_findings(found)
