"""heldout10's false alarms: a sub-agent called as a tool (the Agents SDK's `agent.as_tool`, a LangGraph worker run
inside a tool) starts afresh at every call, so a supervisor asking it again is no lost history and no loop; and a
list whose items are of several kinds (an invoice beside its credit note) has not lost a field one kind lacks.
Each beside the fault it must still find. Hand-built runs."""

from __future__ import annotations

import json

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from runs_build import agent, llm, record, text_message, tool

ASK = "Reproduce report BR-505 on version 4.3.0, platform web."


def _worker(start: int, parent: int, result) -> list[dict]:
    """One call of the repro sub-agent under the tool step `parent`: run_repro, then its answer."""
    shown = [text_message("system", "You are the repro agent."), text_message("user", ASK)]
    arguments = {"version": "4.3.0", "platform": "web"}
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"r{start}", "name": "run_repro", "arguments": arguments}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"r{start}", "response": json.dumps(result)}]}
    return [dict(agent(start, "repro"), parent_index=parent),
            llm(start + 1, calls=[("run_repro", arguments, f"r{start}")], messages=shown, parent=start),
            dict(tool(start + 2, "run_repro", arguments, result, requested_by=start + 1, call_id=f"r{start}"), parent_index=start),
            llm(start + 3, text=f"REPRODUCED: {result}", messages=[*shown, call, answer], parent=start)]


def _supervised():
    said = [text_message("system", "You are the triage lead."), text_message("user", "Triage BR-505.")]
    steps = [agent(1, "triage-lead")]
    for at, answer in ((2, "COULD NOT RUN: sandbox busy"), (8, "REPRODUCED: the upload fails")):
        call = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"a{at}", "name": "repro_agent", "arguments": {"input": ASK}}]}
        steps += [llm(at, calls=[("repro_agent", {"input": ASK}, f"a{at}")], messages=list(said), parent=1),
                  dict(tool(at + 1, "repro_agent", {"input": ASK}, answer, requested_by=at, call_id=f"a{at}"), parent_index=1),
                  *_worker(at + 2, at + 1, {"reproduced": at == 8, "observed": "the upload spins and fails"})]
        said += [call, {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"a{at}", "response": answer}]}]
    steps.append(llm(14, text="Reproduced on 4.3.0: the upload spins and fails.", messages=said, parent=1))
    return record(*steps, task="Triage BR-505.")


def test_a_sub_agent_called_again_as_a_tool_starts_afresh():
    run = _supervised()
    kinds = {f.kind for f in detect(run)}
    assert not kinds & {"history_lost", "repeated_model_request"}, format_findings(detect(run))


def test_history_lost_inside_one_call_of_a_sub_agent_is_still_found():
    shown = [text_message("system", "You are the repro agent."), text_message("user", ASK)]
    arguments = {"version": "4.3.0", "platform": "web"}
    def turn(n, result="sandbox busy"):
        return [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"r{n}", "name": "run_repro", "arguments": arguments}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"r{n}", "response": result}]}]
    lead = [text_message("user", "Triage BR-505.")]
    # the sub-agent's third model call was given its first result rewritten
    run = record(agent(1, "triage-lead"), llm(2, calls=[("repro_agent", {"input": ASK}, "a1")], messages=lead, parent=1),
                 dict(tool(3, "repro_agent", {"input": ASK}, "REPRODUCED.", requested_by=2, call_id="a1"), parent_index=1),
                 dict(agent(4, "repro"), parent_index=3),
                 llm(5, calls=[("run_repro", arguments, "r5")], messages=shown, parent=4),
                 dict(tool(6, "run_repro", arguments, "busy", requested_by=5, call_id="r5"), parent_index=4),
                 llm(7, calls=[("run_repro", arguments, "r7")], messages=[*shown, *turn(5)], parent=4),
                 dict(tool(8, "run_repro", arguments, "busy", requested_by=7, call_id="r7"), parent_index=4),
                 llm(9, text="REPRODUCED.", messages=[*shown, *turn(5, "reproduced: 413"), *turn(7, "still busy")], parent=4),
                 task="Triage BR-505.")
    assert "history_lost" in {f.kind for f in detect(run)}, format_findings(detect(run))


def _invoices(items):
    arguments = {"vendor_id": "V-415"}
    steps = [llm(1, calls=[("list_invoices", arguments, "c1")], messages=[text_message("user", "Pay V-415's invoices.")]),
             tool(2, "list_invoices", arguments, {"vendor_id": "V-415", "invoices": items}, requested_by=1, call_id="c1"),
             llm(3, text="Two invoices are open.")]
    return record(*steps, task="Pay V-415's invoices.")


INVOICE = {"invoice_id": "HE-1", "amount": 6400.0, "currency": "EUR", "due": "2026-12-22", "po_number": "PO-5690"}


def test_a_list_holding_items_of_two_kinds_has_lost_no_field():
    earlier = [_invoices([dict(INVOICE, invoice_id=f"HE-{n}"), dict(INVOICE, invoice_id=f"HE-{n + 10}")]) for n in range(3)]
    history = History.from_records([record(*r.steps, run_id=f"h{n}", task=r.run["task"]) for n, r in enumerate(earlier)])
    credit = {"invoice_id": "CN-1", "kind": "credit_note", "amount": -1200.0, "currency": "EUR", "applies_to": "HE-1"}
    mixed = _invoices([INVOICE, credit])
    assert "tool_output_drift" not in {f.kind for f in detect(mixed, history)}, format_findings(detect(mixed, history))
    # the due date gone from every invoice is drift, as ever
    undated = _invoices([{k: v for k, v in INVOICE.items() if k != "due"}, dict(credit, invoice_id="CN-2")])
    assert "tool_output_drift" in {f.kind for f in detect(undated, history)}, format_findings(detect(undated, history))
