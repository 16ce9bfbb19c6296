"""An e-mail and calendar assistant's and an incident team's good runs (heldout9's false alarms): what they work out
or do again on purpose is no fault - a meeting's end from its start and length, a time in another zone, a field one
earlier event had, a rollback asked again after it failed in part - each beside the fault it must still find.
Hand-built runs."""

from __future__ import annotations

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool

DAY = {"date": "2026-12-08", "timezone": "Europe/Berlin",
       "events": [{"title": "Team standup", "start": "09:30", "end": "09:45"}, {"title": "Review", "start": "10:00", "end": "11:00"}]}


def _run(*turns, answer: str, ask: str, run_id: str = "run-b"):
    """One model call per turn: (tool, arguments, result) asked for and run, then `answer`."""
    steps, shown = [], [text_message("user", ask)]
    for name, arguments, result in turns:
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, arguments, call_id)], messages=list(shown)),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=list(shown)))
    return record(*steps, task=ask, run_id=run_id)


def _ungrounded(run):
    return [f.message for f in detect(run) if f.kind == "ungrounded_answer"]


def test_a_meetings_end_worked_out_from_its_start_and_length_is_grounded():
    ask = "Book a 30-minute call with Jordan on Tuesday 8 December, after the review."
    run = _run(("list_events", {"date": "2026-12-08"}, DAY), answer="11:00-11:30 is free after the review: shall I book it?", ask=ask)
    assert _ungrounded(run) == [], format_findings(detect(run))
    # the length in the call's own arguments ("minutes": 45) grounds the end it gives
    booked = {"event_id": "E-1", "start": "14:00", "minutes": 45}
    run = _run(("create_event", {"date": "2026-12-08", "start": "14:00", "minutes": 45}, booked),
               answer="Booked 14:00-14:45 on 8 December.", ask="Book 45 minutes with Jordan at 14:00 on 8 December.")
    assert _ungrounded(run) == [], format_findings(detect(run))
    # a time no length and no zone away from any time given is still judged
    run = _run(("list_events", {"date": "2026-12-08"}, DAY), answer="13:10 is free: shall I book it?", ask=ask)
    assert any("13:10" in m for m in _ungrounded(run)), format_findings(detect(run))


def test_a_time_given_in_another_zone_the_texts_name_is_grounded():
    vendor = {"name": "Jordan Lee", "city": "New York", "timezone": "America/New_York"}
    run = _run(("find_contact", {"name": "Jordan"}, vendor), ("list_events", {"date": "2026-12-08"}, DAY),
               answer="How about 15:00 Berlin time, which is 9:00 New York time for Jordan?", ask="Find a slot with Jordan on 8 December at 15:00.")
    assert _ungrounded(run) == [], format_findings(detect(run))
    # 10:00 New York is 16:00 in Berlin, not 15:00: no zone pair moves 15:00 to 10:00
    run = _run(("find_contact", {"name": "Jordan"}, vendor), ("list_events", {"date": "2026-12-08"}, DAY),
               answer="How about 15:00 Berlin time, which is 10:20 New York time for Jordan?", ask="Find a slot with Jordan on 8 December at 15:00.")
    assert any("10:20" in m for m in _ungrounded(run)), format_findings(detect(run))


def test_a_field_one_earlier_item_had_is_not_required_of_every_later_item():
    noted = {"date": "2026-12-04", "events": [{"title": "1:1", "start": "16:00", "end": "16:30", "note": "moved by Priya"}]}
    history = History.from_records([_run(("list_events", {"date": "2026-12-04"}, noted), answer="ok", ask="day?", run_id="h1")])
    run = _run(("list_events", {"date": "2026-12-08"}, DAY), answer="Two events on 8 December.", ask="What is on 8 December?")
    assert "tool_output_drift" not in {f.kind for f in detect(run, history)}, format_findings(detect(run, history))
    # one day's events each with a note: still no rule for the next day's (a list's items vary by kind)
    twice = {"date": "2026-12-04", "events": [dict(e, note="n") for e in DAY["events"]]}
    history = History.from_records([_run(("list_events", {"date": "2026-12-04"}, twice), answer="ok", ask="day?", run_id="h1")])
    assert "tool_output_drift" not in {f.kind for f in detect(run, history)}, format_findings(detect(run, history))
    # every item of three days' lists had it, and no item has it now: drift as before
    history = History.from_records([_run(("list_events", {"date": f"2026-12-0{n}"}, dict(twice, date=f"2026-12-0{n}")), answer="ok",
                                         ask="day?", run_id=f"h{n}") for n in (2, 3, 4)])
    assert "tool_output_drift" in {f.kind for f in detect(run, history)}, format_findings(detect(run, history))


def test_an_action_asked_again_after_it_answered_it_was_done_in_part_is_a_retry():
    partial = {"status": "partial", "rolled_back": ["eu-west"], "failed": {"us-east": "image pull error"}}
    done = {"status": "ok", "regions": ["eu-west", "us-east"]}
    args = {"service": "checkout-api", "version": "v2.13.2"}
    retried = _run(("rollback", args, partial), ("rollback", args, done), answer="Rolled back in every region.",
                   ask="Roll checkout-api back to v2.13.2.")
    assert "repeated_tool_call" not in {f.kind for f in detect(retried)}, format_findings(detect(retried))
    twice = _run(("rollback", args, done), ("rollback", args, done), answer="Rolled back.", ask="Roll checkout-api back to v2.13.2.")
    assert "repeated_tool_call" in {f.kind for f in detect(twice)}, format_findings(detect(twice))


def _asked(*turns, ask: str, system: str | None = None):
    run = _run(*turns, answer="Done.", ask=ask)
    if system is not None:
        for step in run.steps:
            if step["type"] == "llm":
                step["input"] = step["input"].replace('[{"role": "user"', '[' + __import__("json").dumps(text_message("system", system)) + ', {"role": "user"', 1)
    return run


SENT = ("send_email", {"to": "jordan.lee@vendorly.com", "body": "We'd like to renew."}, {"status": "sent"})


def test_an_action_the_user_said_not_to_take_is_a_task_ignored():
    run = _asked(SENT, ask="Draft a reply to Jordan: we want to renew. Don't send it yet - I'll read it first.")
    assert [(f.index, f.layer) for f in detect(run) if f.kind == "task_ignored"] == [(1, "model")], format_findings(detect(run))
    for ask in ("Draft a reply to Jordan and send it.", "Don't send it to Alex, send it to Jordan."):
        run = _asked(SENT, ask=ask)
        assert "task_ignored" not in {f.kind for f in detect(run)}, (ask, format_findings(detect(run)))


RUNBOOK = ("You are the executor of the incident team. Runbook: 1. Never restart a database (orders-db): page the DBA. "
           "2. Scale out at most 12 replicas without the commander's approval. 3. Only the verifier declares an incident "
           "resolved and posts the resolution.")


def test_the_runbooks_rules_broken_by_the_executor():
    restarted = _asked(("restart_service", {"service": "orders-db"}, {"status": "restarted"}), ask="Fix checkout.", system=RUNBOOK)
    assert [(f.kind, f.index) for f in detect(restarted)] == [("role_overstepped", 1)], format_findings(detect(restarted))
    other = _asked(("restart_service", {"service": "checkout-api"}, {"status": "restarted"}), ask="Fix checkout.", system=RUNBOOK)
    assert detect(other) == [], format_findings(detect(other))
    scaled = _asked(("scale_deployment", {"service": "checkout-api", "replicas": 20}, {"status": "scaled"}), ask="Fix it.", system=RUNBOOK)
    assert [(f.kind, f.index) for f in detect(scaled)] == [("policy_violated", 1)], format_findings(detect(scaled))
    within = _asked(("scale_deployment", {"service": "checkout-api", "replicas": 10}, {"status": "scaled"}), ask="Fix it.", system=RUNBOOK)
    assert detect(within) == [], format_findings(detect(within))
    posted = _asked(("post_status", {"channel": "#incidents", "text": "Resolved"}, {"status": "posted"}), ask="Fix it.", system=RUNBOOK)
    assert [(f.kind, f.index) for f in detect(posted)] == [("role_overstepped", 1)], format_findings(detect(posted))
    verifier = _asked(("post_status", {"channel": "#incidents", "text": "Resolved"}, {"status": "posted"}), ask="Check it.",
                      system=RUNBOOK.replace("the executor of", "the verifier of"))
    assert detect(verifier) == [], format_findings(detect(verifier))


VERIFIER = ("You are the verifier of the incident team. Check the executor's work with check_health before you approve it. "
            "The incident is resolved when check_health shows the error rate under 2%. Approve with 'VERIFIED' and post the "
            "resolution with post_status.")
POSTED = ("post_status", {"channel": "#incidents", "message": "Resolved INC-5521: checkout-api back to normal."}, {"status": "posted"})


def _offered(run, *names):
    from runs_build import definitions_attr

    offered = definitions_attr(*((n, {"type": "object"}) for n in names))
    return record(*run.steps, attributes={s["span_id"]: offered for s in run.steps if s["type"] == "llm"}, task=run.run["task"])


def test_an_approval_without_the_check_the_instructions_name_or_against_its_reading():
    unchecked = _offered(_asked(POSTED, ask="Verify the executor's report.", system=VERIFIER), "check_health", "post_status")
    assert [(f.kind, f.index) for f in detect(unchecked)] == [("missing_evidence", 1)], format_findings(detect(unchecked))
    health = {"service": "checkout-api", "error_rate_percent": 4.8, "p99_ms": 1900}
    failing = _offered(_asked(("check_health", {"service": "checkout-api"}, health), POSTED, ask="Verify.", system=VERIFIER),
                       "check_health", "post_status")
    assert [(f.kind, f.index) for f in detect(failing)] == [("policy_violated", 3)], format_findings(detect(failing))
    healthy = _offered(_asked(("check_health", {"service": "checkout-api"}, dict(health, error_rate_percent=1.2)), POSTED,
                              ask="Verify.", system=VERIFIER), "check_health", "post_status")
    assert detect(healthy) == [], format_findings(detect(healthy))
    # the reading fails and the verifier says so: a rejection is no approval
    rejected = ("post_status", {"channel": "#incidents", "message": "Still failing: error rate 4.8%."}, {"status": "posted"})
    run = _offered(_asked(("check_health", {"service": "checkout-api"}, health), rejected, ask="Verify.", system=VERIFIER),
                   "check_health", "post_status")
    assert detect(run) == [], format_findings(detect(run))


def test_a_message_saying_attached_sent_with_no_attachment_is_a_reasoning_action_mismatch():
    def send(attachments, body="Hi Alex,\n\nplease find attached the Q1 proposal.\n\nSam"):
        arguments = {"to": "alex.chen@northwind.io", "body": body, "attachments": attachments}
        return _run(("send_email", arguments, {"status": "sent", "attachments": attachments}), answer="Sent.", ask="Send Alex the proposal.")
    found = [(f.kind, f.index) for f in detect(send([]))]
    assert found == [("reasoning_action_mismatch", 1)], format_findings(detect(send([])))
    for run in (send(["F-88"]), send([], body="Hi Alex, the proposal is on the shared drive. Sam")):
        assert detect(run) == [], format_findings(detect(run))


PLAN = ("assistant", "Plan for the executor:\n1. Roll back checkout-api from v2.14.0 to v2.13.2.\n2. Scale checkout-api to 10 replicas.")


def test_an_action_on_another_version_than_the_plan_it_was_handed_is_a_wrong_target():
    def executed(version):
        from runs_build import llm, record, tool

        shown = [text_message("user", "Fix the checkout incident."), text_message(*PLAN)]
        args = {"service": "checkout-api", "version": version}
        return record(llm(1, calls=[("rollback", args, "c1")], messages=shown),
                      tool(2, "rollback", args, {"status": "ok"}, requested_by=1, call_id="c1"), llm(3, text="Rolled back."))
    def targets(run):
        return [(f.kind, f.index) for f in detect(run) if f.kind == "wrong_target"]
    assert targets(executed("v2.12.0")) == [("wrong_target", 1)], format_findings(detect(executed("v2.12.0")))
    assert targets(executed("v2.13.2")) == [], format_findings(detect(executed("v2.13.2")))
