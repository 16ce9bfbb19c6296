"""The general rules the fourth held-out set (heldout4.py, a SQL data desk through real frameworks) led to, each on
small hand-built trajectories in another domain (a warehouse of parcels): a run that needs the rule, and a run near
it that must not change."""

from __future__ import annotations

import json

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
