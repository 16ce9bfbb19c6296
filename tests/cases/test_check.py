"""Checking a run against a case's gates, and trajectory-match semantics for expected tool calls."""

from __future__ import annotations

import pytest

from agentotel.cases import Assertions, ExpectedCall, check_record, new_case, trajectory_match
from agentotel.cases._check import arguments_match
from cases_build import healthy_run_for_history, llm, looping_run, record, tool


def gates(report):
    return {g.name: g for g in report.gates}


def test_the_buggy_run_fails_the_case_cut_from_it():
    case = new_case(looping_run(), at=3, layer="tool")
    report = check_record(case, looping_run("replay-1"))
    assert not report.passed
    assert gates(report)["must_not_repeat"].evidence.startswith('search_orders {"customer":"acme"} at steps 2, 4, 6')
    assert report.lines()[0] == "case run-step-3 on run replay-1: FAIL"


def test_the_fixed_run_passes_it():
    case = new_case(looping_run(), at=3, layer="tool")
    report = check_record(case, healthy_run_for_history())
    assert report.passed, report.lines()
    assert set(gates(report)) == {"replay", "final_status", "must_not_repeat"}


def test_every_gate_reports_its_evidence():
    case = new_case(looping_run(), at=3, layer="tool")
    case.assertions = Assertions(
        final_status="ok", forbidden_tools=["delete_order"], required_tools=["search_orders", "notify"],
        max_tool_calls=1, max_steps=10, max_cost_usd=0.01,
        expected_tool_calls=[ExpectedCall("search_orders", {"customer": "acme"})], trajectory_match="strict",
        final_output_contains=["1 order"],
    )
    run = record(
        llm(1, calls=[("delete_order", {"id": 1})], cost=0.02),
        tool(2, "delete_order", {"id": 1}, {"ok": True}),
        tool(3, "search_orders", {"customer": "acme"}, "boom", status="error"),
        llm(4, text="acme has 1 order"), status="error",
    )
    g = gates(check_record(case, run))
    assert not g["final_status"].passed and "run ended error" in g["final_status"].evidence
    assert not g["forbidden_tools"].passed and g["forbidden_tools"].evidence == "delete_order at step 2"
    assert not g["required_tools"].passed and g["required_tools"].evidence == "never called notify"
    assert not g["max_tool_calls"].passed and g["max_tool_calls"].evidence == "2 (limit 1)"
    assert g["max_steps"].passed
    assert not g["max_cost_usd"].passed
    assert not g["expected_tool_calls (strict)"].passed
    assert g["final_output_contains"].passed


def test_calls_the_replay_refused_fail_the_replay_gate():
    case = new_case(looping_run(), at=3, layer="tool")
    run = healthy_run_for_history()
    run.steps[1]["status"] = "error"
    run.span_attributes["s2"] = {"error.type": "agentotel.cases._replay.ReplayMismatch"}
    g = gates(check_record(case, run))
    assert not g["replay"].passed and "step 2" in g["replay"].evidence


A, B, C = ("search", {"q": "x", "page": 1}), ("fetch", {"id": 7}), ("summarise", {})


def exp(call, match="exact", arguments=None):
    return ExpectedCall(call[0], call[1] if arguments is None else arguments, match)


@pytest.mark.parametrize(
    "mode, expected, actual, ok",
    [
        ("strict", [A, B], [A, B], True),
        ("strict", [A, B], [B, A], False),
        ("strict", [A, B], [A, B, C], False),
        ("unordered", [A, B], [B, A], True),
        ("unordered", [A, B], [B, A, C], False),
        ("unordered", [A, A], [A], False),
        ("superset", [A, B], [C, B, A], True),
        ("superset", [A, B], [A, C], False),
        ("subset", [A, B, C], [B, A], True),
        ("subset", [A], [A, B], False),
        ("subset", [A], [], True),
        ("superset", [], [A], True),
    ],
)
def test_trajectory_match_modes(mode, expected, actual, ok):
    passed, evidence = trajectory_match([exp(c) for c in expected], list(actual), mode)
    assert passed is ok, evidence


def test_argument_matching_exact_subset_ignore():
    assert arguments_match({"q": "x"}, {"q": "x"}, "exact")
    assert not arguments_match({"q": "x"}, {"q": "x", "page": 1}, "exact")
    assert arguments_match({"q": "x"}, {"q": "x", "page": 1}, "subset")
    assert arguments_match({"f": {"a": 1}}, {"f": {"a": 1, "b": 2}, "g": 0}, "subset")
    assert not arguments_match({"q": "y"}, {"q": "x", "page": 1}, "subset")
    assert arguments_match({"q": "y"}, {"anything": True}, "ignore")
    assert arguments_match('{"q": "x"}', {"q": "x"}, "exact")  # JSON text and data compare alike


def test_argument_modes_inside_a_trajectory_match():
    actual = [A, B]
    assert trajectory_match([exp(A, "subset", {"q": "x"}), exp(B, "ignore", {})], actual, "strict")[0]
    assert not trajectory_match([exp(A, "exact", {"q": "x"}), exp(B)], actual, "strict")[0]
    # a loose expectation must not steal the only call a strict one can match
    ok, evidence = trajectory_match([exp(A, "ignore", {}), exp(A, "exact")], [A, ("search", {"q": "z"})], "unordered")
    assert ok, evidence


def test_failures_say_what_was_missing_or_extra():
    ok, evidence = trajectory_match([exp(A), exp(B)], [A, C], "unordered")
    assert not ok and evidence == 'not made: fetch {"id":7}; not expected: summarise {}'
