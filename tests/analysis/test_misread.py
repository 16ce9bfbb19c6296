"""`answer_misread`: an answer that puts a figure a tool returned under the wrong label (two results read the wrong way
round: every figure grounded, so `ungrounded_answer` cannot see it). Learned from the agent's earlier runs asked the
same way: which call each labelled figure of their answers came from, the calls compared by tool and by arguments
with the task's values put as their places in the task. Hand-built runs of an energy desk reading two meter days;
heldout4.py's misread pairs (a SQL desk through real frameworks) are the same failure recorded."""

from __future__ import annotations

from typing import Any

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool

SITES = {"WEST": (48_211.5, 46_930.25), "EAST": (51_377.75, 52_004.0), "NORTH": (39_120.5, 38_005.75), "SOUTH": (44_750.25, 43_118.5)}


def _task(site: str, asked_other_way: bool = False) -> str:
    if asked_other_way:  # the same values, another request: the days named the other way round
        return f"How did the {site} meter change from 2026-10-31 to 2026-11-30? Answer as 'READING: <kwh> kWh; CHANGE: <pct>%'."
    return f"What did the {site} meter read on 2026-11-30, and how did it change from 2026-10-31? Answer as 'READING: <kwh> kWh; CHANGE: <pct>%'."


def _run(run_id: str, site: str, *, swapped: bool = False, reversed_calls: bool = False, asked_other_way: bool = False) -> Any:
    """The desk reads both days (in parallel, in either order) and answers with the later day's reading."""
    task = _task(site, asked_other_way)
    now, before = SITES[site]
    days = [("2026-11-30", now), ("2026-10-31", before)]
    if reversed_calls:
        days.reverse()
    given = [text_message("system", "You are the energy desk."), text_message("user", task)]
    calls = [("meter", {"site": site, "day": day}, f"c{n}") for n, (day, _) in enumerate(days)]
    steps = [llm(1, calls=calls, messages=given)]
    steps += [tool(2 + n, "meter", {"site": site, "day": day}, {"site": site, "day": day, "kwh": kwh}, requested_by=1, call_id=f"c{n}")
              for n, (day, kwh) in enumerate(days)]
    reading, other = (before, now) if swapped else (now, before)
    answer = f"READING: {reading:.2f} kWh; CHANGE: {(reading - other) / other * 100:+.1f}%"
    steps.append(llm(4, text=answer, messages=given))
    return record(*steps, run_id=run_id, task=task)


def _history(*runs: Any) -> History:
    """What load_history gives for these earlier runs (oldest first): their calls, answers and first model calls."""
    history = History.from_records(runs)
    history.first_calls = [(str(r.run_id), r.steps[0]) for r in reversed(runs)]
    return history


EARLIER = (_run("r1", "WEST"), _run("r2", "EAST", reversed_calls=True), _run("r3", "NORTH"))


def _misread(run: Any, history: History) -> list[tuple[int, str, tuple[int, ...]]]:
    found = detect(run, history)
    assert not [f for f in found if f.kind == "ungrounded_answer"], format_findings(found)  # every figure is grounded
    return [(f.index, f.layer, f.steps) for f in found if f.kind == "answer_misread"]


def test_a_figure_of_the_other_call_under_the_label_is_answer_misread_at_the_answer():
    # REVENUE-like slot READING: the earlier runs took it from the call for the task's first day; this answer gives
    # the result of the call for its second day (step 3), while the first day's call (step 2) ran too.
    assert _misread(_run("r4", "SOUTH", swapped=True), _history(*EARLIER)) == [(4, "model", (4, 2, 3))]
    # the calls made in the other order change nothing but which step is which
    assert _misread(_run("r4", "SOUTH", swapped=True, reversed_calls=True), _history(*EARLIER)) == [(4, "model", (4, 2, 3))]


def test_the_figure_from_the_usual_call_is_no_finding():
    assert _misread(_run("r4", "SOUTH"), _history(*EARLIER)) == []
    assert _misread(_run("r4", "SOUTH", reversed_calls=True), _history(*EARLIER)) == []


def test_a_task_asked_another_way_is_not_judged_by_runs_asked_this_way():
    # The days named the other way round in the request: the task's first value is now the earlier day, so the
    # earlier runs say nothing about which of this run's calls READING comes from.
    assert _misread(_run("r4", "SOUTH", asked_other_way=True), _history(*EARLIER)) == []
    assert _misread(_run("r4", "SOUTH", asked_other_way=True, swapped=True), _history(*EARLIER)) == []


def test_one_earlier_run_is_no_habit():
    assert _misread(_run("r4", "SOUTH", swapped=True), _history(EARLIER[0])) == []


def test_a_habit_most_earlier_runs_share_survives_one_that_broke_it():
    # one earlier run was itself a misread: three of four still took READING from the first day's call
    earlier = (*EARLIER, _run("r0", "EAST", swapped=True))
    assert _misread(_run("r4", "SOUTH", swapped=True), _history(*earlier)) == [(4, "model", (4, 2, 3))]
    # two of four are no habit
    earlier = (*EARLIER[:2], _run("r0", "EAST", swapped=True), _run("r00", "NORTH", swapped=True))
    assert _misread(_run("r4", "SOUTH", swapped=True), _history(*earlier)) == []
