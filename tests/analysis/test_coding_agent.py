"""A coding agent's faults (SWE-bench-style): work handed in unchecked or with its target test failing, a test
turned into expecting the bug, a signature changed against the request, the test left alone when the request asks
to update it, never submitting, going on after submitting, saying "run the tests" and submitting - on hand-built
runs of read_file / apply_patch / run_tests / submit, each beside its near twins that must stay quiet."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool

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


def _run(*turns, answer: str = "Fixed the bound in src/pricing.py. All tests pass. The change is submitted.", ask: str = ASK):
    """One model call per turn: (tool, arguments, result[, status, said]) asked for and run, each call given the
    conversation so far; then `answer`."""
    steps, shown = [], [text_message("user", ask)]
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
