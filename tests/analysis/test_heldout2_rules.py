"""The general rules the second held-out set (heldout2.py) led to, each over plain step data on run shapes that
are not that set's: a run that triggers the rule at its step, and a run near it that must not."""

from __future__ import annotations

import json

from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool

SYSTEM = text_message("system", "You are the warehouse desk.")


def user(text: str) -> dict:
    return text_message("user", text)


def asked(name: str, arguments: dict, call_id: str) -> dict:
    return {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]}


def result(call_id: str, value: str) -> dict:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": value}]}


def found(run, kind):
    return [(f.index, f.layer) for f in detect(run) if f.kind == kind]


# ---- a code of its own in place of the task's ---------------------------------------------------------------

TASK = "Ship pallet P-77 from the RTM hub to the HAM hub tomorrow."


def _shipment(destination: str, task: str = TASK) -> object:
    given = [SYSTEM, user(task)]
    return record(
        llm(1, calls=[("create_shipment", {"pallet": "P-77", "origin": "RTM", "destination": destination}, "c1")], messages=given),
        tool(2, "create_shipment", {"pallet": "P-77", "origin": "RTM", "destination": destination}, {"shipment": "SH-4410"},
             requested_by=1, call_id="c1"),
        llm(3, text=f"Shipment SH-4410 booked for P-77 to {destination}.",
            messages=[*given, asked("create_shipment", {}, "c1"), result("c1", '{"shipment": "SH-4410"}')]),
        task=task)


def test_a_code_nothing_gave_in_place_of_the_one_the_task_names_is_task_ignored_at_the_call():
    run = _shipment("BRE")
    assert found(run, "task_ignored") == [(1, "model")], format_findings(detect(run))


def test_the_task_s_own_codes_and_a_code_the_model_resolves_from_a_name_are_no_finding():
    assert found(_shipment("HAM"), "task_ignored") == []
    # "Hamburg" resolved to HAM: no code of the task is left unused
    assert found(_shipment("HAM", "Ship pallet P-77 from the RTM hub to Hamburg tomorrow."), "task_ignored") == []


# ---- a failed model call decided nothing ------------------------------------------------------------------


def test_a_tool_error_gone_past_is_placed_at_the_retried_model_call_not_the_failed_attempt():
    given = [SYSTEM, user("How many units of SKU-4471 are in stock?")]
    shown = [*given, asked("stock_level", {"sku": "SKU-4471"}, "c1"), result("c1", "Error: inventory service timed out")]
    run = record(
        llm(1, calls=[("stock_level", {"sku": "SKU-4471"}, "c1")], messages=given),
        tool(2, "stock_level", {"sku": "SKU-4471"}, None, status="error", error="TimeoutError: inventory service timed out",
             requested_by=1, call_id="c1"),
        llm(3, status="error", error="429 Too Many Requests", messages=shown),
        llm(4, text="There are 412 units of SKU-4471 in stock.", messages=shown))
    # (412 no call returned: the model's invention past the timeout, its layer)
    assert found(run, "tool_error_ignored") == [(4, "model")], format_findings(detect(run))


# ---- only results are elided in place ---------------------------------------------------------------------


def test_a_window_that_replaces_the_models_own_request_is_history_lost():
    task = user("Reorder SKU-4471 if it is below its threshold.")
    first = [SYSTEM, task]
    read = {"sku": "SKU-4471", "warehouse": "W-12"}
    second = [*first, asked("stock_level", read, "c1"), result("c1", '{"sku": "SKU-4471", "units": 12, "threshold": 50}')]
    # the context manager kept the task and the latest exchange only: the stock level the model read is gone (the
    # exchange that replaced it is shorter, where it stood)
    third = [SYSTEM, task, asked("rules", {"sku": "SKU-4471"}, "c2"), result("c2", '{"reorder": 200}')]
    run = record(
        llm(1, calls=[("stock_level", read, "c1")], messages=first),
        tool(2, "stock_level", read, {"sku": "SKU-4471", "units": 12, "threshold": 50}, requested_by=1, call_id="c1"),
        llm(3, calls=[("rules", {"sku": "SKU-4471"}, "c2")], messages=second),
        tool(4, "rules", {"sku": "SKU-4471"}, {"reorder": 200}, requested_by=3, call_id="c2"),
        llm(5, calls=[("stock_level", read, "c3")], messages=third))
    assert found(run, "history_lost") == [(5, "memory")], format_findings(detect(run))


def test_old_results_shortened_where_they_stood_are_still_no_history_loss():
    task = user("Reorder SKU-4471 if it is below its threshold.")
    first = [SYSTEM, task]
    second = [*first, asked("stock_level", {"sku": "SKU-4471"}, "c1"), result("c1", '{"sku": "SKU-4471", "units": 12, "threshold": 50}')]
    third = [SYSTEM, task, asked("stock_level", {"sku": "SKU-4471"}, "c1"), result("c1", "[output omitted]"),
             asked("threshold_rules", {"sku": "SKU-4471"}, "c2"), result("c2", '{"rule": "reorder 200"}')]
    run = record(
        llm(1, calls=[("stock_level", {"sku": "SKU-4471"}, "c1")], messages=first),
        tool(2, "stock_level", {"sku": "SKU-4471"}, {"sku": "SKU-4471", "units": 12, "threshold": 50}, requested_by=1, call_id="c1"),
        llm(3, calls=[("threshold_rules", {"sku": "SKU-4471"}, "c2")], messages=second),
        tool(4, "threshold_rules", {"sku": "SKU-4471"}, {"rule": "reorder 200"}, requested_by=3, call_id="c2"),
        llm(5, text="Reordered 200 units of SKU-4471.", messages=third))
    assert found(run, "history_lost") == [], format_findings(detect(run))


# ---- unanswered calls: where the loop first went on without them ---------------------------------------


def test_parallel_calls_left_unrun_are_placed_at_the_next_model_call_not_the_final_answer():
    given = [SYSTEM, user("Compare stock of SKU-4471 and SKU-9902.")]
    run = record(
        llm(1, calls=[("stock_level", {"sku": "SKU-4471"}, "c1"), ("stock_level", {"sku": "SKU-9902"}, "c2")], messages=given),
        tool(2, "stock_level", {"sku": "SKU-4471"}, {"units": 12}, requested_by=1, call_id="c1"),
        llm(3, calls=[("warehouse_of", {"sku": "SKU-4471"}, "c3")], messages=given),
        tool(4, "warehouse_of", {"sku": "SKU-4471"}, {"warehouse": "W-12"}, requested_by=3, call_id="c3"),
        llm(5, text="SKU-4471 has 12 units in W-12.", messages=given))
    assert found(run, "unanswered_tool_calls") == [(3, "workflow")], format_findings(detect(run))


# ---- asked again, unchanged, after unrelated calls ----------------------------------------------------------


def _reserved_then(second: tuple[str, dict], second_output: dict) -> object:
    given = [SYSTEM, user("Reserve dock D-3 for truck TR-5512 at 14:00.")]
    shown = [*given, asked("dock_schedule", {"dock": "D-3", "day": "2026-12-03"}, "c1"), result("c1", '{"free": ["14:00", "16:00"]}'),
             asked("reserve_slot", {"truck": "TR-5512", "slot": "14:00"}, "c2"), result("c2", '{"reservation": "RS-88120"}')]
    return record(
        llm(1, calls=[("dock_schedule", {"dock": "D-3", "day": "2026-12-03"}, "c1")], messages=given),
        tool(2, "dock_schedule", {"dock": "D-3", "day": "2026-12-03"}, {"free": ["14:00", "16:00"]}, requested_by=1, call_id="c1"),
        llm(3, calls=[("reserve_slot", {"truck": "TR-5512", "slot": "14:00"}, "c2")], messages=given),
        tool(4, "reserve_slot", {"truck": "TR-5512", "slot": "14:00"}, {"reservation": "RS-88120"}, requested_by=3, call_id="c2"),
        llm(5, calls=[(second[0], second[1], "c3")], messages=shown),
        tool(6, second[0], second[1], second_output, requested_by=5, call_id="c3"),
        llm(7, text="Dock D-3 is reserved for TR-5512 at 14:00 (RS-88120).",
            messages=[*shown, asked(second[0], second[1], "c3"), result("c3", json.dumps(second_output))]))


def test_the_same_read_again_after_unrelated_calls_with_the_same_answer_is_a_model_repetition():
    run = _reserved_then(("dock_schedule", {"dock": "D-3", "day": "2026-12-03"}), {"free": ["14:00", "16:00"]})
    assert found(run, "repeated_tool_call") == [(5, "model")], format_findings(detect(run))


def test_reading_again_what_the_action_changed_or_a_changed_answer_is_no_repetition():
    # the slot is gone: the read answered otherwise (checking after acting)
    assert found(_reserved_then(("dock_schedule", {"dock": "D-3", "day": "2026-12-03"}), {"free": ["16:00"]}), "repeated_tool_call") == []
