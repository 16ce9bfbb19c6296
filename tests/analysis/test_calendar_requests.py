"""A calendar assistant's reading of the user's days and times (heldout9's misses): "Friday next week" taken as
tomorrow, "9:00 his time" booked as the user's own 9:00, "Actually make it Wednesday" left out of the e-mail sent -
each beside the legitimate readings (both meanings of "next Friday", a time converted right, a correction followed).
Hand-built runs."""

from __future__ import annotations


from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool, tool_loop

SYSTEM = "You are Sam's calendar assistant. Sam works in Berlin (Europe/Berlin); today is Thursday 2026-12-03."
JORDAN = [{"name": "Jordan Lee", "email": "jordan.lee@vendorly.com", "timezone": "America/New_York"}]


def _run(*turns, says: list[str], answer: str = "Done."):
    """The user's messages (`says`), then one model call per turn: (tool, arguments, result) asked for and run."""
    shown = [text_message("system", SYSTEM), *(text_message("user", s) for s in says)]
    steps = tool_loop(shown, turns, answer)
    return record(*steps, task=says[0])


def _found(run, kind):
    return [(f.index, f.layer) for f in detect(run) if f.kind == kind], format_findings(detect(run))


def _slots(day: str, ask: str):
    return _run(("find_free_slots", {"date": day, "minutes": 45}, {"date": day, "free": ["13:00-16:00"]}), says=[ask])


def test_a_day_named_by_its_relation_to_today_looked_up_on_another_day_is_a_task_ignored():
    found, report = _found(_slots("2026-12-04", "Find a 45-minute slot on Friday next week for the budget review."), "task_ignored")
    assert found == [(1, "model")], report
    assert _found(_slots("2026-12-05", "Find a slot tomorrow afternoon."), "task_ignored")[0] == [(1, "model")]
    for day, ask in (("2026-12-11", "Find a 45-minute slot on Friday next week."), ("2026-12-04", "Find a slot tomorrow."),
                     ("2026-12-04", "Find a slot next Friday."), ("2026-12-11", "Find a slot next Friday."),
                     ("2026-12-08", "Find a slot on Tuesday."), ("2026-12-07", "Find a slot on Monday or Tuesday."),
                     ("2026-12-09", "Find a slot on Friday 11 December, or Wednesday.")):
        run = _slots(day, ask)
        assert _found(run, "task_ignored")[0] == [], (ask, _found(run, "task_ignored")[1])


def _booked(start: str, zone: str, ask: str = "Set up a 30-minute call with Jordan Lee on Wednesday 9 December at 9:00 his time."):
    event = {"title": "Call with Jordan", "date": "2026-12-09", "start": start, "minutes": 30, "timezone": zone}
    return _run(("find_contact", {"name": "Jordan"}, JORDAN), ("create_event", event, dict(event, event_id="E-1")), says=[ask])


def test_a_time_in_the_other_persons_zone_booked_as_the_users_own_is_a_task_ignored():
    found, report = _found(_booked("09:00", "Europe/Berlin"), "task_ignored")
    assert found == [(3, "model")], report
    for run in (_booked("15:00", "Europe/Berlin"), _booked("09:00", "America/New_York"),
                _booked("09:00", "Europe/Berlin", ask="Set up a call with Jordan on Wednesday 9 December at 9:00.")):
        assert _found(run, "task_ignored")[0] == [], _found(run, "task_ignored")[1]


def _replied(body: str, correction: str = "Actually make it Wednesday, same time and place. Then send it."):
    draft = "Here is the reply to Mei: \"Hi Mei, Tuesday works for me - 12:30 at Cafe Einstein?\" Shall I send it?"
    ask = "Reply to Mei's lunch email: Tuesday works, 12:30 at Cafe Einstein. Show me before you send."
    shown = [text_message("system", SYSTEM), text_message("user", ask), text_message("assistant", draft), text_message("user", correction)]
    arguments = {"to": "mei@tanaka-design.jp", "body": body}
    return record(llm(1, text=draft, messages=shown[:2]), llm(2, calls=[("send_email", arguments, "c2")], messages=shown),
                  tool(3, "send_email", arguments, {"status": "sent"}, requested_by=2, call_id="c2"), llm(4, text="Sent."), task=ask)


def test_a_corrected_day_left_out_of_the_message_sent_is_a_correction_ignored():
    found, report = _found(_replied("Hi Mei, Tuesday works for me - 12:30 at Cafe Einstein? Best, Sam"), "correction_ignored")
    assert found == [(2, "model")], report
    for run in (_replied("Hi Mei, Wednesday works for me - 12:30 at Cafe Einstein? Best, Sam"),
                # no correction: the user adds a day, the reply keeps the first one as well
                _replied("Hi Mei, Tuesday works for me, and Wednesday too. Best, Sam", correction="Also say Wednesday works. Send it.")):
        assert _found(run, "correction_ignored")[0] == [], _found(run, "correction_ignored")[1]
