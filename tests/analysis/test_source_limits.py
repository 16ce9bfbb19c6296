"""A request that limits its sources ("only open-access reports from 2020 or later") and a team run whose report cites
one the limits rule out (heldout15's research-team misses, in another trade: a policy-analysis team, planner ->
searcher -> writer). Where the limit was lost decides the step: the citing call, the search whose caller was given
the limit and left it out, the plan a searcher briefed only by it worked from - or, where the searcher was handed the
conversation in the latest and most earlier runs and not in this one, that handoff (history_lost). Hand-built runs."""

from __future__ import annotations

import json

import pytest

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from runs_build import agent, llm, record, text_message, tool

ASK = "Please write a short note on congestion pricing and air quality - only open-access reports from 2020 or later."
REPORTS = [{"report_id": "RP-4410", "title": "London ULEZ: two years on", "year": 2023, "open_access": True},
           {"report_id": "RP-2290", "title": "Stockholm charges and NO2", "year": 2016, "open_access": True},
           {"report_id": "RP-5120", "title": "Milan Area C review", "year": 2022, "open_access": False}]
FULL_PLAN = "Plan: search reports on congestion pricing and air quality, open-access, from 2020 or later; the writer drafts."
SHORT_PLAN = "Plan: search reports on congestion pricing and air quality; the writer drafts."


def _team(plan: str, since: int, cited: list[str], *, handed: bool) -> object:
    """planner -> searcher -> writer; `handed`: the searcher and writer are given the user's message beside the plan."""
    planner_in = [text_message("system", "You are the planner. Write the searcher a plan carrying every constraint."),
                  text_message("user", ASK)]
    plan_msg = {"role": "assistant", "parts": [{"type": "text", "content": plan},
                                               {"type": "tool_call", "id": "h1", "name": "transfer_to_searcher", "arguments": {}}]}
    handed_msgs = ([text_message("user", ASK)] if handed else []) + [
        plan_msg, {"role": "tool", "parts": [{"type": "tool_call_response", "id": "h1", "response": {"assistant": "searcher"}}]}]
    found = [r for r in REPORTS if r["year"] >= since]
    search_args = {"query": "congestion pricing air quality", "since_year": since}
    searched = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "s1", "name": "search_reports", "arguments": search_args}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "s1", "response": {"reports": found}}]}]
    searcher_in = [text_message("system", "You are the searcher. Find the reports the plan asks for.")] + handed_msgs
    writer_in = [text_message("system", "You are the writer. Write the note from the reports found and save it.")] + handed_msgs + searched
    note = {"title": "Congestion pricing and air quality", "text": " ".join(f"[{c}]" for c in cited), "cited": cited}
    steps = [agent(1, "planner"),
             {**llm(2, text=plan, calls=[("transfer_to_searcher", {}, "h1")], messages=planner_in), "parent_index": 1},
             {**tool(3, "transfer_to_searcher", {}, {"assistant": "searcher"}, requested_by=2, call_id="h1"), "parent_index": 1},
             agent(4, "searcher"),
             {**llm(5, calls=[("search_reports", search_args, "s1")], messages=searcher_in), "parent_index": 4},
             {**tool(6, "search_reports", search_args, {"reports": found}, requested_by=5, call_id="s1"), "parent_index": 4},
             {**llm(7, text=f"Found {len(found)} reports.", calls=[("transfer_to_writer", {}, "h2")], messages=searcher_in + searched),
              "parent_index": 4},
             {**tool(8, "transfer_to_writer", {}, {"assistant": "writer"}, requested_by=7, call_id="h2"), "parent_index": 4},
             agent(9, "writer"),
             {**llm(10, calls=[("save_note", note, "w1")], messages=writer_in), "parent_index": 9},
             {**tool(11, "save_note", note, {"note_id": "NT-7", "status": "saved"}, requested_by=10, call_id="w1"), "parent_index": 9},
             {**llm(12, text=f"The note is saved (NT-7), citing {', '.join(cited)}.", messages=writer_in), "parent_index": 9}]
    return record(*steps, task=ASK)


def _history(*handed: bool) -> History:
    """Earlier runs, newest first: whether the searcher's first call was given the user's message."""
    history = History()
    for n, given in enumerate(handed):
        first = _team(FULL_PLAN, 2020, ["RP-4410"], handed=given).steps[4]
        history.first_calls.append((f"earlier-{n}", {"type": "llm", "model": first["model"], "input": json.loads(first["input"]),
                                                     "agent": "invoke_agent searcher"}))
    return history


def _found(run, history=None):
    found = detect(run, history or History())
    return [(f.kind, f.index, f.layer) for f in found if f.kind in ("task_ignored", "history_lost")], format_findings(found)


@pytest.mark.parametrize("plan,since,cited,handed,expected", [
    (FULL_PLAN, 2020, ["RP-4410"], True, []),  # every limit kept
    (FULL_PLAN, 2020, ["RP-4410", "RP-5120"], True, [("task_ignored", 10, "model")]),  # a closed report cited: no search could tell
    (FULL_PLAN, 0, ["RP-4410", "RP-2290"], True, [("task_ignored", 5, "model")]),  # the searcher was told and searched without it
    (SHORT_PLAN, 0, ["RP-4410", "RP-2290"], False, [("task_ignored", 2, "model")]),  # briefed only by a plan that left it out
])
def test_a_source_the_requests_limits_rule_out_is_flagged_where_the_limit_was_lost(plan, since, cited, handed, expected):
    found, shown = _found(_team(plan, since, cited, handed=handed))
    assert found == expected, shown


def test_a_searcher_not_handed_the_conversation_it_was_handed_in_the_latest_and_most_earlier_runs_lost_it():
    run = _team(SHORT_PLAN, 0, ["RP-4410", "RP-2290"], handed=False)
    # the latest earlier run and most of them gave it the user's message: the handoff lost it
    found, shown = _found(run, _history(True, False, True))
    assert found == [("history_lost", 5, "memory")], shown
    # the latest earlier run gave it only the plan too: how this deployment hands over; the plan lost the limit
    found, shown = _found(run, _history(False, True, True))
    assert found == [("task_ignored", 2, "model")], shown
