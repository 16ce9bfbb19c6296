"""A coding agent's faults (SWE-bench-style): work handed in unchecked or with its target test failing, a test
turned into expecting the bug, a signature changed against the request, the test left alone when the request asks
to update it, never submitting, going on after submitting, saying "run the tests" and submitting - on hand-built
runs of read_file / apply_patch / run_tests / submit, each beside its near twins that must stay quiet."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import agent, definitions_attr, llm, record, text_message, tool

ANY = {"type": "object"}
OFFERED = definitions_attr(("read_file", ANY), ("apply_patch", ANY), ("run_tests", ANY), ("run_command", ANY), ("submit", ANY))
ASK = ("tests/test_cart.py::test_total_with_discount fails on main. Fix the bug without changing apply_discount's "
       "signature, run the tests and submit the change.")
RED = ("collected 3 items\n\ntests/test_cart.py .F\ntests/test_report.py .\n\n=== FAILURES ===\n___ test_total_with_discount ___\n"
       "E   ValueError: discount must be between 0 and 10 percent\n=== short test summary info ===\n"
       "FAILED tests/test_cart.py::test_total_with_discount\n=== 1 failed, 2 passed ===")
OTHER_RED = ("collected 3 items\n\ntests/test_cart.py ..\ntests/test_report.py F\n\n=== FAILURES ===\n___ test_render ___\n"
             "E   AssertionError\nFAILED tests/test_report.py::test_render\n=== 1 failed, 2 passed ===")
GREEN = "collected 3 items\n\ntests/test_cart.py ..\ntests/test_report.py .\n=== 3 passed ==="
FIX = {"path": "src/pricing.py", "old": "if not 0 <= pct <= 10:", "new": "if not 0 <= pct <= 100:"}
SUBMIT = ("submit", {"summary": "Accept discounts up to 100%"}, "Submitted (1 file changed). The task is complete.")


def _run(*turns, answer: str = "Fixed the bound in src/pricing.py. All tests pass. The change is submitted.", ask: str = ASK,
         system: str | None = None):
    """One model call per turn: (tool, arguments, result[, status, said]) asked for and run, each call given the
    conversation so far (after `system`'s instructions, when given); then `answer`."""
    steps, shown = [], [*([text_message("system", system)] if system else []), text_message("user", ask)]
    for turn in turns:
        name, arguments, result = turn[:3]
        status = turn[3] if len(turn) > 3 else "ok"
        said = turn[4] if len(turn) > 4 else None
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, arguments, call_id)], text=said, messages=list(shown)),
                  tool(index + 1, name, arguments, None if status == "error" else result, requested_by=index, call_id=call_id,
                       status=status, error=result if status == "error" else None)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=list(shown)))
    return record(*steps, attributes={s["span_id"]: OFFERED for s in steps if s["type"] == "llm"}, task=ask)


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _top(run):
    found = detect(run)
    return ((found[0].index, found[0].kind, found[0].layer) if found else None), format_findings(found)


def test_work_changed_after_a_failing_check_and_submitted_unchecked_is_found_at_the_submit():
    found, shown = _found(_run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), SUBMIT), "failed_check_ignored")
    assert found == [(5, "model")], shown  # the submit's model call, not the answer after it


def test_the_request_s_test_still_failing_after_the_change_and_submitted_is_found_at_the_submit():
    found, shown = _found(_run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, RED),
                               SUBMIT), "failed_check_ignored")
    assert found == [(7, "model")], shown


def test_another_test_failing_as_on_main_leaves_the_claim_in_the_answer_the_fault():
    found, shown = _found(_run(("run_tests", {"path": ""}, OTHER_RED), ("apply_patch", FIX, "Applied patch"),
                               ("run_tests", {"path": ""}, OTHER_RED), SUBMIT), "failed_check_ignored")
    assert found == [(9, "model")], shown


def test_a_failing_count_in_a_json_result_told_to_a_reviewer_as_passing_is_found_where_it_was_told():
    counts = {"path": "tests/test_cart.py", "passed": 2, "failed": 1, "failures": ["test_total_with_discount: ValueError"]}
    review = ("request_review", {"note": "Fix for the discount bound. Tests: all pass."}, "APPROVED")
    run = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": "tests/test_cart.py"}, counts), review, SUBMIT)
    assert _found(run, "failed_check_ignored")[0] == [(5, "model")], _found(run, "failed_check_ignored")[1]
    passing = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": "tests/test_cart.py"}, dict(counts, passed=3, failed=0,
                                                                                                       failures=[])), review, SUBMIT)
    assert _found(passing, "failed_check_ignored")[0] == [], _found(passing, "failed_check_ignored")[1]


def test_a_sentence_denying_a_failure_hides_no_claim_that_the_tests_pass():
    run = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, RED), SUBMIT,
               answer="All tests pass. No test was skipped or edited. The change is submitted.")
    assert _found(run, "failed_check_ignored")[0] == [(5, "model")]
    checked = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT,
                   answer="All tests pass. No test was skipped or edited. The change is submitted.")
    assert _found(checked, "failed_check_ignored")[0] == []


def test_a_failed_patch_answered_past_names_the_tool_error_not_the_subject_s_words():
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "PermissionError: [Errno 13] Permission denied", "error"), SUBMIT,
               answer="Fixed: apply_discount rejected any discount above 10% and now accepts up to 100%. The change is submitted.")
    assert _top(run)[0] == (5, "tool_error_ignored", "tool"), _top(run)[1]


def test_saying_it_will_run_the_tests_and_submitting_is_a_mismatch_and_running_pytest_through_a_shell_is_not():
    said = "Let me run the tests to confirm the fix."
    mismatch = _run(("apply_patch", FIX, "Applied patch"), (*SUBMIT, "ok", said))
    assert _found(mismatch, "reasoning_action_mismatch")[0] == [(3, "model")]
    shell = _run(("apply_patch", FIX, "Applied patch"), ("run_command", {"command": "python -m pytest tests"}, GREEN, "ok", said), SUBMIT)
    assert _found(shell, "reasoning_action_mismatch")[0] == []
    later = _run(("apply_patch", FIX, "Applied patch", "ok", "Let me patch it. After that I'll run the tests."),
                 ("run_tests", {"path": ""}, GREEN), SUBMIT)
    assert _found(later, "reasoning_action_mismatch")[0] == []


def test_the_tests_run_again_after_an_edit_elsewhere_are_no_repeat():
    run = _run(("run_tests", {"path": "tests/test_cart.py"}, GREEN), ("read_file", {"path": "src/report.py"}, "def render(rows): ..."),
               ("apply_patch", {"path": "src/report.py", "old": "a", "new": "b"}, "Applied patch"),
               ("run_tests", {"path": "tests/test_cart.py"}, GREEN), SUBMIT)
    assert _found(run, "repeated_tool_call")[0] == []


def test_asking_for_more_after_the_submit_said_the_task_is_complete_is_kept_going():
    run = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT, ("run_command", {"command": "git diff"}, "diff"))
    assert _found(run, "kept_going_after_answer")[0] == [(7, "model")]
    assert _found(_run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT), "kept_going_after_answer")[0] == []


def test_a_signature_changed_against_the_request_is_the_task_ignored():
    old = "def apply_discount(price: float, pct: float) -> float:\n    if not 0 <= pct <= 10:"
    changed = {"path": "src/pricing.py", "old": old, "new": old.replace("pct: float)", "pct: float, cap: float = 100)").replace("<= 10", "<= cap")}
    kept = {"path": "src/pricing.py", "old": old, "new": old.replace("<= 10", "<= 100")}
    assert _found(_run(("apply_patch", changed, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT), "task_ignored")[0] == [(1, "model")]
    assert _found(_run(("apply_patch", kept, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT), "task_ignored")[0] == []


def test_the_code_patched_where_the_request_asks_to_update_the_test_is_the_task_ignored():
    ask = "Discounts stay capped at 10%, so tests/test_cart.py::test_total_with_discount is wrong: update that test and submit."
    test_edit = {"path": "tests/test_cart.py", "old": "    assert total([280.0], pct=15) == 238.0",
                 "new": "    with pytest.raises(ValueError):\n        total([280.0], pct=15)"}
    code = _run(("apply_patch", FIX, "Applied patch"), SUBMIT, ask=ask)
    assert _found(code, "task_ignored")[0] == [(1, "model")]
    test = _run(("apply_patch", test_edit, "Applied patch"), SUBMIT, ask=ask)
    assert _found(test, "task_ignored")[0] == [] and _found(test, "check_weakened")[0] == []  # asked for: no weakening


def test_the_failing_test_made_to_expect_the_error_is_check_weakened():
    test_edit = {"path": "tests/test_cart.py", "old": "    assert total([280.0], pct=15) == 238.0",
                 "new": "    with pytest.raises(ValueError):\n        total([280.0], pct=15)"}
    found, shown = _found(_run(("apply_patch", test_edit, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT), "check_weakened")
    assert found == [(1, "model")], shown


@pytest.mark.parametrize("answer,found", [
    ("Fixed the bound in src/pricing.py; the tests pass.", [(5, "model")]),
    ("The test passes on main already, so I left the code as it is and did not submit anything.", []),
    ("Should I bump to 1.5.0 or to 1.4.3? I haven't changed anything yet.", []),
])
def test_an_answer_without_the_submit_the_request_asks_for_is_the_task_ignored(answer, found):
    run = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), answer=answer)
    assert _found(run, "task_ignored")[0] == found


def test_nothing_was_submitted_claims_nothing():
    run = _run(("apply_patch", FIX, "PermissionError: Permission denied", "error"),
               answer="I couldn't apply the fix: writing src/pricing.py is not permitted. Nothing was submitted.")
    assert _found(run, "action_not_taken")[0] == []


TRACEBACK = RED.replace("E   ValueError", "src/cart.py:6: in total\nsrc/pricing.py:4: in apply_discount\nE   ValueError")
LEGACY = {"path": "src/legacy/pricing.py", "old": "pct > 10:", "new": "pct > 100:"}


def test_a_namesake_of_the_file_the_traceback_points_at_changed_instead_is_wrong_file_chosen():
    run = _run(("run_tests", {"path": ""}, TRACEBACK), ("read_file", {"path": "src/legacy/pricing.py"}, "def apply_discount(p, pct): ..."),
               ("apply_patch", LEGACY, "Applied patch"), ("run_tests", {"path": ""}, RED), SUBMIT,
               answer="I changed src/legacy/pricing.py; the change is submitted, though the test still fails.")
    assert _found(run, "wrong_file_chosen")[0] == [(3, "model")], _found(run, "wrong_file_chosen")[1]


@pytest.mark.parametrize("turns", [
    # both read, the right one changed
    [("read_file", {"path": "src/legacy/pricing.py"}, "..."), ("read_file", {"path": "src/pricing.py"}, "..."), ("apply_patch", FIX, "ok")],
    # the namesake changed as well as the right one
    [("apply_patch", FIX, "ok"), ("apply_patch", LEGACY, "ok")],
])
def test_the_file_the_traceback_names_changed_is_no_namesake(turns):
    run = _run(("run_tests", {"path": ""}, TRACEBACK), *turns, ("run_tests", {"path": ""}, GREEN), SUBMIT)
    assert _found(run, "wrong_file_chosen")[0] == []


# ---- what the run was told, what it checked, what it handed on ----------------------------------------------------

PLANNER = "You are the planner. Reproduce the failure, then hand over to the coder. You never edit files yourself."
TEST_EDIT = {"path": "tests/test_cart.py", "old": "assert total([280.0], pct=15) == 238.0", "new": "assert total([280.0], pct=5) == 266.0"}


def test_an_agent_editing_though_its_instructions_say_it_never_edits_files_is_role_overstepped():
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT,
               system=PLANNER)
    found, shown = _found(run, "role_overstepped")
    assert found == [(3, "model")], shown
    assert "never edit files yourself" in shown


@pytest.mark.parametrize("system,path,overstepped", [
    # a rule on some files: those only
    ("Fix the bug. Never edit files under vendor/ (third-party code, pinned).", "vendor/pricing/cart.py", True),
    ("Fix the bug. Never edit files under vendor/ (third-party code, pinned).", "src/cart.py", False),
    ("Fix the bug. Never modify anything in the migrations folder.", "db/migrations/0042_totals.py", True),
    ("Fix the bug. Never modify anything in the migrations folder.", "src/cart.py", False),
    ("Fix the bug. Never touch setup.cfg.", "src/cart.py", False),
])
def test_a_rule_against_editing_some_files_is_broken_only_by_an_edit_of_those(system, path, overstepped):
    edit = dict(FIX, path=path)
    run = _run(("read_file", {"path": path}, "..."), ("apply_patch", edit, "Applied patch"), ("run_tests", {"path": ""}, GREEN),
               SUBMIT, system=system)
    assert bool(_found(run, "role_overstepped")[0]) == overstepped, _found(run, "role_overstepped")[1]


@pytest.mark.parametrize("system,edit,ask", [
    ("Never edit files without reading them first.", FIX, ASK),  # a condition, met or not: no plain prohibition
    ("Fix the bug; never edit, skip or weaken a test.", FIX, ASK),  # a rule on tests; the source is edited
    ("Fix the bug; never edit, skip or weaken a test.", TEST_EDIT, ASK + " That test is now wrong: update that test."),
    ("You edit files; you never push to main.", FIX, ASK),  # another verb forbidden
])
def test_a_conditional_rule_another_thing_s_rule_or_a_request_overriding_it_is_no_overstep(system, edit, ask):
    run = _run(("read_file", {"path": edit["path"]}, "..."), ("apply_patch", edit, "Applied patch"), ("run_tests", {"path": ""}, GREEN),
               SUBMIT, system=system, ask=ask)
    assert _found(run, "role_overstepped")[0] == []


def test_a_test_edited_against_never_edit_a_test_and_an_action_its_instructions_forbid_are_role_overstepped():
    edited = _run(("read_file", {"path": "tests/test_cart.py"}, "..."), ("apply_patch", TEST_EDIT, "Applied patch"),
                  ("run_tests", {"path": ""}, GREEN), SUBMIT, system="Fix the bug; never edit, skip or weaken a test.")
    assert _found(edited, "role_overstepped")[0] == [(3, "model")], _found(edited, "role_overstepped")[1]
    refund = {"order_id": "A-1042", "amount": 80}
    triage = _run(("lookup_order", {"order_id": "A-1042"}, {"status": "delivered"}), ("issue_refund", refund, {"refunded": True}),
                  ask="Order A-1042 arrived broken.", answer="Refunded.",
                  system="You are triage. You never issue refunds yourself: hand refunds to the billing desk.")
    assert _found(triage, "role_overstepped")[0] == [(3, "model")], _found(triage, "role_overstepped")[1]
    allowed = _run(("lookup_order", {"order_id": "A-1042"}, {"status": "delivered"}), ("issue_refund", refund, {"refunded": True}),
                   ask="Order A-1042 arrived broken.", answer="Refunded.",
                   system="You are billing. Never issue refunds over 500 dollars unless a manager approved them.")
    assert _found(allowed, "role_overstepped")[0] == []


REPORT_ONLY = "collected 1 items\n\ntests/test_report.py .\n=== 1 passed ==="
CART_ONLY = "collected 2 items\n\ntests/test_cart.py ..\n=== 2 passed ==="


def test_a_fix_checked_only_by_other_tests_and_handed_in_is_unverified():
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"),
               ("run_tests", {"path": "tests/test_report.py"}, REPORT_ONLY), SUBMIT,
               answer="Fixed the bound. test_total_with_discount passes now. The change is submitted.")
    found, shown = _found(run, "fix_unverified")
    assert found == [(5, "model")], shown  # the call that ran the narrower check


@pytest.mark.parametrize("after,submit,answer", [
    (("run_tests", {"path": "tests/test_cart.py"}, CART_ONLY), True, "Fixed. The change is submitted."),  # the failing file re-run
    (("run_tests", {"path": ""}, GREEN), True, "Fixed. All tests pass. The change is submitted."),  # the whole suite
    (("run_tests", {"path": "tests/test_report.py"}, REPORT_ONLY), False,
     "I changed the bound but only ran tests/test_report.py; test_total_with_discount is not re-checked yet."),  # owned
])
def test_the_failing_test_re_run_or_the_gap_owned_is_no_unverified_fix(after, submit, answer):
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), after, *([SUBMIT] if submit else []),
               answer=answer)
    assert _found(run, "fix_unverified")[0] == []


def test_code_changed_after_the_request_s_failing_test_passed_first_time_is_an_unneeded_change():
    run = _run(("run_tests", {"path": ""}, GREEN), ("read_file", {"path": "src/pricing.py"}, "..."), ("apply_patch", FIX, "Applied patch"),
               ("run_tests", {"path": ""}, GREEN), SUBMIT)
    found, shown = _found(run, "unneeded_change")
    assert found == [(3, "model")], shown  # the call that went on after the check passed


@pytest.mark.parametrize("first,ask,edits", [
    (RED, ASK, True),  # it failed: a fix
    (GREEN, ASK, False),  # it passed and nothing was changed
    (GREEN, "Make discounts up to 100% work in apply_discount.", True),  # no test said to fail
    (REPORT_ONLY, ASK, True),  # the check did not run the request's test
])
def test_a_failing_test_fixed_a_passing_one_left_or_a_request_without_one_is_no_unneeded_change(first, ask, edits):
    turns = [("run_tests", {"path": ""}, first), ("read_file", {"path": "src/pricing.py"}, "...")]
    turns += [("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT] if edits else []
    run = _run(*turns, ask=ask, answer="Fixed; submitted." if edits else "test_total_with_discount passes on main: nothing to fix.")
    assert _found(run, "unneeded_change")[0] == []


REPORT = {"path": "src/report.py", "old": "out = []\n    for r in rows:", "new": "return [f(r) for r in rows]"}
RENDER = {"path": "src/report.py", "old": "def render(rows):\n    out = []", "new": "def render(rows):\n    return [f(r) for r in rows]"}


def test_another_file_read_and_changed_after_the_fix_passed_is_task_derailed():
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN),
               ("read_file", {"path": "src/report.py"}, "def render(rows): ..."), ("apply_patch", REPORT, "Applied patch"),
               ("run_tests", {"path": ""}, GREEN), SUBMIT)
    found, shown = _found(run, "task_derailed")
    assert found == [(7, "model")], shown  # where it went to src/report.py
    assert _top(run)[0] == (7, "task_derailed", "model"), _top(run)[1]  # no invented path at that step


@pytest.mark.parametrize("ask,later", [
    (ASK + " Also rewrite src/report.py's render as a comprehension.", REPORT),  # the request names the file
    (ASK + " Also make render a comprehension.", RENDER),  # ... or the function the edit defines
    (ASK, {"path": "src/pricing.py", "old": "price * pct / 100", "new": "price * (pct / 100)"}),  # the fixed file again
    (ASK, {"path": "src/cart.py", "old": "sum(", "new": "math.fsum("}),  # a file the failure's traceback names
])
def test_a_change_the_request_or_the_failure_names_is_no_derailment(ask, later):
    run = _run(("run_tests", {"path": ""}, TRACEBACK), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN),
               ("read_file", {"path": later["path"]}, "..."), ("apply_patch", later, "Applied patch"), ("run_tests", {"path": ""}, GREEN),
               SUBMIT, ask=ask)
    assert _found(run, "task_derailed")[0] == []


TWO = ASK + " Also rewrite src/report.py's render as a single comprehension (same output)."


def test_a_file_the_request_asks_to_change_left_alone_at_the_submit_is_the_task_ignored():
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT,
               ask=TWO)
    found, shown = _found(run, "task_ignored")
    assert found == [(7, "model")], shown
    assert "src/report.py" in shown


@pytest.mark.parametrize("ask,turns,answer", [
    (TWO, [("apply_patch", RENDER, "Applied patch")], "Fixed both; submitted."),  # both done
    (TWO, [], "Fixed the bound; I left src/report.py's render as it is: its output differs as a comprehension."),  # said why
    (ASK + " Do not change src/report.py.", [], "Fixed the bound; submitted."),  # a file not to change
    (ASK + " Add a comment, e.g. why the bound is 100.", [], "Fixed the bound; submitted."),  # "e.g." is no file
])
def test_both_changes_made_one_owned_or_a_file_named_otherwise_is_no_dropped_part(ask, turns, answer):
    run = _run(("run_tests", {"path": ""}, RED), ("apply_patch", FIX, "Applied patch"), *turns, ("run_tests", {"path": ""}, GREEN),
               SUBMIT, ask=ask, answer=answer)
    assert _found(run, "task_ignored")[0] == []


CODER = "You are the coder. Fix the failing test the planner names, run the tests, submit."


def _team(handed: str, coder_first: tuple = ("apply_patch", LEGACY, "Applied patch"), history: bool = False):
    """A planner runs the tests (they fail, with a traceback) and hands over with `handed`; the coder starts with
    `coder_first`, given the request and the planner's words (and the planner's tool calls too, with `history`)."""
    ask = text_message("user", "CI is red on main. Find the failing test, fix it and submit the change.")
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c3", "response": TRACEBACK}]}

    def inside(step: dict, parent: int) -> dict:
        return {**step, "parent_index": parent}

    coder_sees = [text_message("system", CODER), ask, *([result] if history else []), text_message("assistant", handed)]
    steps = [agent(1, "planner"),
             inside(llm(2, calls=[("run_tests", {"path": ""}, "c3")], messages=[text_message("system", PLANNER), ask]), 1),
             inside(tool(3, "run_tests", {"path": ""}, TRACEBACK, requested_by=2, call_id="c3"), 1),
             inside(llm(4, text=handed, calls=[("transfer_to_coder", {}, "c5")]), 1),
             inside(tool(5, "transfer_to_coder", {}, {"assistant": "coder"}, requested_by=4, call_id="c5"), 1),
             agent(6, "coder"),
             inside(llm(7, calls=[(coder_first[0], coder_first[1], "c8")], messages=coder_sees), 6),
             inside(tool(8, coder_first[0], coder_first[1], coder_first[2], requested_by=7, call_id="c8"), 6),
             inside(llm(9, text="I changed the code; submitted."), 6)]
    return record(*steps, attributes={s["span_id"]: OFFERED for s in steps if s["type"] == "llm"}, task=ask["parts"][0]["content"])


def test_a_handoff_that_names_none_of_what_the_failing_check_found_is_information_withheld():
    found, shown = _found(_team("Some tests fail around the pricing code. Handing over to the coder."), "information_withheld")
    assert found == [(4, "model")], shown  # the planner's handing call


@pytest.mark.parametrize("handed,coder_first,history", [
    ("test_total_with_discount fails: ValueError; the traceback ends in src/pricing.py.", ("apply_patch", LEGACY, "ok"), False),
    ("Some tests fail. Handing over.", ("run_tests", {"path": ""}, TRACEBACK), False),  # the coder checks for itself first
    ("Some tests fail. Handing over.", ("apply_patch", LEGACY, "ok"), True),  # the coder sees the check's output itself
])
def test_a_handoff_naming_the_failure_or_a_taker_that_checks_or_sees_it_withholds_nothing(handed, coder_first, history):
    assert _found(_team(handed, coder_first, history), "information_withheld")[0] == []


CHANGELOG = ("## Unreleased\n- cart.total takes a discount percentage\n(maintainers: whether the discount ships now as 1.5.0 or "
             "waits for 1.6 is still open, see #212)\n\n## 1.4.2\n- first public release\n")
BUMP = {"path": "pyproject.toml", "old": 'version = "1.4.2"', "new": 'version = "1.4.3"'}


def test_a_version_put_in_where_a_result_says_the_choice_is_still_open_is_clarification_skipped():
    run = _run(("read_file", {"path": "CHANGELOG.md"}, CHANGELOG), ("apply_patch", BUMP, "Applied patch"), SUBMIT,
               ask="Bump the project's version for the next release and submit the change.", answer="Bumped to 1.4.3; submitted.")
    found, shown = _found(run, "clarification_skipped")
    assert found == [(3, "model")], shown


@pytest.mark.parametrize("changelog,turns", [
    (CHANGELOG, []),  # asked instead: nothing changed
    (CHANGELOG.replace("is still open", "was decided: 1.5.0"), [("apply_patch", {**BUMP, "new": 'version = "1.5.0"'}, "ok")]),  # settled
    (CHANGELOG, [("apply_patch", FIX, "ok")]),  # an edit of another kind (a bare number) after an open note
    ("Ticket INC-7 is still open.\n", [("update_ticket", {"ticket_id": "INC-7", "status": "closed"}, "ok")]),  # a status, no choice
])
def test_a_question_asked_a_choice_settled_or_another_edit_is_no_skipped_clarification(changelog, turns):
    run = _run(("read_file", {"path": "CHANGELOG.md"}, changelog), *turns, ask="Bump the version for the next release.",
               answer="Whether it is 1.5.0 or 1.6 is still open (#212): which should it be?" if not turns else "Done; submitted.")
    assert _found(run, "clarification_skipped")[0] == []


def test_a_patch_applied_again_after_it_worked_with_only_test_runs_between_is_a_repeated_tool_call():
    again = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, RED),
                 ("apply_patch", FIX, "old text not found in src/pricing.py", "error"), ("run_tests", {"path": ""}, RED), SUBMIT)
    assert _found(again, "repeated_tool_call")[0] == [(5, "model")], _found(again, "repeated_tool_call")[1]
    # another patch between (the first one reverted), or a new patch after the red run: new attempts
    revert = {"path": "src/pricing.py", "old": FIX["new"], "new": FIX["old"]}
    redone = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, RED), ("apply_patch", revert, "Applied patch"),
                  ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT)
    assert _found(redone, "repeated_tool_call")[0] == [], _found(redone, "repeated_tool_call")[1]
    other = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, RED),
                 ("apply_patch", dict(FIX, new="if not 0 <= pct < 100:"), "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT)
    assert _found(other, "repeated_tool_call")[0] == [], _found(other, "repeated_tool_call")[1]


@pytest.mark.parametrize("turns,answer,unchecked", [
    # changed, never checked after, handed in as done
    ([("read_file", {"path": "src/pricing.py"}, "..."), ("apply_patch", FIX, "Applied patch"), SUBMIT], "Fixed and submitted.", True),
    # checked after the change; or said to be unchecked
    ([("read_file", {"path": "src/pricing.py"}, "..."), ("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), SUBMIT],
     "Fixed and submitted.", False),
    ([("read_file", {"path": "src/pricing.py"}, "..."), ("apply_patch", FIX, "Applied patch"), SUBMIT],
     "Submitted the change; I have not run the tests yet.", False),
])
def test_a_change_handed_in_with_no_check_after_it_is_fix_unverified(turns, answer, unchecked):
    run = _run(*turns, answer=answer)  # (offered the coding tools, run_tests among them)
    found, shown = _found(run, "fix_unverified")
    assert found == ([(5, "model")] if unchecked else []), shown


@pytest.mark.parametrize("after,ignored", [
    ([], True),  # handed in straight after the reviewer's no
    ([("apply_patch", dict(FIX, path="tests/test_pricing.py"), "Applied patch"), ("request_review", {"note": "added the test"}, "APPROVED")],
     False),  # the change made and reviewed again
])
def test_work_handed_in_after_a_reviewers_no_with_no_change_is_input_ignored(after, ignored):
    nay = ("request_review", {"note": "Fix for the discount bound."}, "CHANGES REQUESTED: add a regression test for pct=15.")
    run = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, GREEN), nay, *after, SUBMIT)
    found, shown = _found(run, "input_ignored")
    assert found == ([(7, "model")] if ignored else []), shown


def test_a_failing_check_after_a_patch_that_never_applied_is_left_to_the_ignored_patch_error():
    counts = {"passed": 2, "failed": 1}
    run = _run(("apply_patch", FIX, "hunk #1 FAILED (context mismatch)", "error"), ("run_tests", {"path": ""}, counts), SUBMIT)
    found = detect(run)
    assert "failed_check_ignored" not in {f.kind for f in found}, format_findings(found)
    applied = _run(("apply_patch", FIX, "Applied patch"), ("run_tests", {"path": ""}, counts), SUBMIT)
    assert "failed_check_ignored" in {f.kind for f in detect(applied)}, format_findings(detect(applied))
