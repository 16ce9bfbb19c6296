"""A case is cut and named at the step where its finding's cause shows (`index`), not its first step."""

from __future__ import annotations

from agentotel.analysis.detectors import Finding
from agentotel.cases.case import primary_finding, suggest_cut
from runs_build import llm, record, tool


def finding(kind, index, steps, layer="model"):
    return Finding(kind, layer, tuple(steps), kind, index=index)


def test_the_case_is_about_the_cause_even_when_it_is_not_the_first_step_involved():
    run = record(llm(1, calls=[("search", {"q": "x"}, "c1")]), tool(2, "search", {"q": "x"}, [], requested_by=1, call_id="c1"),
                 llm(3, text="nothing"), llm(4, text="nothing"))
    kept_going = finding("kept_going_after_answer", 4, (3, 4), layer="workflow")  # involves 3, caused at 4
    drift = finding("tool_output_drift", 2, (2,), layer="tool")
    assert primary_finding([kept_going]) is kept_going and suggest_cut(run, [kept_going]) == 4
    assert primary_finding([kept_going, drift]) is drift
    assert suggest_cut(run, [drift]) == 3  # a tool's bad response is frozen: the cut moves past it
    assert primary_finding([kept_going], before=4) is None  # its cause is not before step 4
    legacy = Finding("x", "model", (3, 4), "x")  # no index: its first step stands for the cause
    assert suggest_cut(run, [legacy]) == 3
