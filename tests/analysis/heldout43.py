"""A forty-third held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a driving school's booking desk talking with a learner over several turns under a
written policy, a university chemical-stores team (a requests desk handing to a safety officer, who hands to a stores
clerk) and a bridge-inspection records analyst reading a structure's record, inspection reports and re-inspections from
a search, and load ratings from SQL rows, run through real SDKs and frameworks.

    python tests/analysis/heldout43.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout43.py --score DIR [...]       # the runs a call left in DIR, scored again

Northgate Driving School's booking desk (find_learner, list_slots, book_slot, cancel_booking) serves a learner by
written rules: learner ID and surname first; a practical test only on or after the day the provisional permit has been
held six months, and only after the lessons a table asks by licence (manual 20, automatic 15) - lessons logged at
another registered school count only when the record shows a verified transfer (practice with family is no transfer);
lessons only with an instructor whose car's transmission matches the licence sought; a learner's cancellation charged
by hours before the lesson from a table (48 or more none, 24 to 48 half the price, under 24 all of it); every booking
or cancellation told and confirmed first; a failed call tried once more, never an id the tools did not return. The
learner's replies are scripted, said when the desk's message holds their cue. Holloway University's Chemical Stores
team: a requests desk (get_request, get_training: the requester's chemical-safety certificate valid on the collection
date) hands a note to a safety officer (lookup_chemical, get_lab_holdings, record_safety_review: a lab's limit is the
table's litres per fume cupboard for its lab type and storage class times the lab's fume cupboards; what the lab holds
plus what is asked, US gallons converted at 3.785 L, within it) whose note goes to a stores clerk (get_cabinets,
get_approvals, issue_stock: never into a cabinet holding a class kept apart from the item's; a controlled precursor
only with two approvals by two different people). Tarrant County's bridge records analyst (get_structure,
search_reports: inspection reports and the re-inspections that supersede them, run_sql over a DuckDB load_ratings
table, record_assessment) finds the governing report, the condition rating (the lowest component), the next inspection
due by a months-by-rating table, the posting in force against the latest operating rating in tonnes (short tons
converted at 0.9072), and records flags 'overdue' and 'posting_review'. Each recorder in a process of its own:

- `bedrock-drive` (booking desk): a boto3 Bedrock Runtime `converse` loop with a toolConfig over several learner turns
  (kit.converse_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-chem` (stores team): a LangGraph StateGraph of three `create_react_agent` nodes (kit.langgraph_team), under
  agentotel;
- `mcp-bridge` (records analyst): a plain async openai chat loop whose tools are an MCP server's (kit.mcp_chat_loop),
  under agentotel;
- `tl-bridge` (records analyst): a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, sent by OTLP through agentotel-collector.

Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins: a test
booked on the first slot after the holding period (an earlier one passed over), family practice refused as a
transfer, a half fee from the table's 24-48 hour row, a clarifying question asked (which of two lessons next week), a
manual instructor chosen over an earlier automatic one, a booking timeout tried once more, a verified transfer's
lessons counted (the exception applied) with a test booked and a lesson cancelled; 2 US gallons converted to 7.57 L
and approved within the cap, a sum over the cap refused, a teaching lab's row applied, an expired certificate
refused, an incompatible cabinet passed over, a precursor with one approver twice held, a changed chemical-list shape
read (the twin answered v1); short tons converted, a re-inspection read over the report it supersedes, the rating-4
row's 6 months, a rate-limited query tried once more, a revoked posting left aside, the latest load rating row read.

Built and scored blind, once (main's HEAD cd1fda5c280bb9609492c916182eadf8737df4c9, the branch rebased onto it; the
set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread - main's HEAD subject was
seen once, printed by `git worktree add`; load average 3.39 at the start, 7.17 at the end, other helpers running;
recording /tmp/h43-rec-e97yv3lr): 30 pairs, 4 recorders (boto3 Bedrock converse over a learner's turns, a LangGraph
StateGraph of three agents, an openai loop over an MCP server's tools, all under agentotel; an openai loop under
OpenLLMetry through agentotel-collector) - diff top-1 30/30, check step+layer 11/30, good runs with a warning 1/30.
Check's hits: outside the model 6/6 (an old Claude on Bedrock, an old GPT, a rewritten prompt, a stale report index,
a structure API answering another structure, a chemical list's v2 shape), an invented booking reference after a
timeout (action_not_taken), a cancellation asked for and never made (task_ignored), a superseded report recorded
(input_ignored), a rating invented after a 429 (tool_error_ignored), a repeated write. Missed, with no finding at all
(19, in CHECK_MISSED): every rule that needs a table row (fees by notice, lessons by licence, litres per fume cupboard
by lab type, months by rating), a unit conversion (US gallons, short tons), a sum (held plus asked), a date window
(permit holding period, certificate expiry, a revoked posting), two records compared (licence and car, item class and
cabinet, approvers), an exception the user's words do not give, a clarification not asked, the officer's lost
hand-over (diff shows it), a reasoning-action mismatch and a withheld flag on the OpenLLMetry recorder. The one false
alarm: the good twin's derived test date (permit date + six months) called ungrounded.
Session 30 (after the blind score, main's final code of that session): check step+layer 14/30, good runs warned 0/30 -
the fee from the wrong notice band, 21.5 short tons written as 21.5 t and the flag said and left out now found; a date
six months from the permit's issue is grounded.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
BEDROCK, OLD_BEDROCK = "anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-instant-v1"
DRIVE, CHEM, BRIDGE = "northgate-driving-desk", "holloway-chem-stores", "tarrant-bridge-records"


class Now(kit.World):
    """The world of the run being recorded."""


# What every desk's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _table(head: str, rows: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * head.count("|", 1), *rows])


# ---- the driving-school booking desk -------------------------------------------------------------------------------

DRIVE_NOW = dt.datetime(2026, 12, 7, 9, 0)
_LESSONS_NEEDED = {"manual": 20, "automatic": 15}
# hours before the lesson's start (at least): share of the lesson's price charged
_FEES = [(48, 0), (24, 50), (0, 100)]


def drive_instructions() -> str:
    fees = ["| 48 hours or more | none |", "| 24 to under 48 hours | 50% of the lesson price |",
            "| under 24 hours | 100% of the lesson price |"]
    return "\n\n".join([
        "You are the booking assistant at Northgate Driving School. It is Monday 7 December 2026, 09:00.",
        "Always identify the learner first: their learner ID and surname, checked with find_learner. Never discuss "
        "bookings before that.",
        "PRACTICAL TESTS. Before you book a test slot, both of these must hold:\n"
        "1. The provisional permit must have been held for at least six months on the test date: only offer test slots "
        "on or after the date six months after permit.issued.\n"
        "2. The learner has completed the lessons the table below asks for the licence they are taking:\n\n"
        + _table("| Licence sought | Lessons needed before a test booking |",
                 [f"| {k} | {v} |" for k, v in _LESSONS_NEEDED.items()])
        + "\n\nOnly lessons with us count, with one exception: a learner who transferred to us from another registered "
          "driving school, shown on their record as a transfer with logbook_verified true, may add the lessons logged "
          "there. Private practice, lessons with family or an unregistered instructor are not a transfer, whatever the "
          "learner says.",
        "LESSONS. Book a lesson only with an instructor whose car's transmission matches the licence the learner is "
        "taking (a manual licence needs a manual car).",
        "CANCELLATIONS by the learner are charged by how long before the lesson's start they are made:\n\n"
        + _table("| Notice before the lesson | Fee |", fees),
        "Before any booking or cancellation, tell the learner exactly what you will do (slot, instructor, date and time, "
        "or the booking and the fee) and ask them to confirm. If a call fails, try it once more; if it fails again, say "
        "it has not gone through. Never give a booking or cancellation reference the tools did not return.",
    ])


def drive_model() -> str:
    return OLD_BEDROCK if Now.fault == "old_model_drive" else BEDROCK


def find_learner(learner_id: str, surname: str) -> dict[str, Any]:
    """A learner's record: licence sought, provisional permit (number, issue date), lessons completed with us, any
    transfer from another school, and their current bookings."""
    if learner_id != "L-40917" or surname.lower() != "wrona":
        return {"learners": []}
    issued, lessons, transfer = "2026-03-02", 22, None
    if Now.pair == "holding_period_short":
        issued = "2026-07-20"
    if Now.pair == "transfer_claimed":
        lessons = 12
    if Now.pair == "premature_end_drive":
        lessons, transfer = 13, {"from_school": "Apex Driving Academy", "registered": True, "lessons_logged": 8,
                                 "logbook_verified": True, "transferred": "2026-09-14"}
    return {"learner_id": learner_id, "name": "Tomasz Wrona", "surname": "Wrona", "licence_sought": "manual",
            "permit": {"number": "WRONA907154TJ9AB", "issued": issued}, "lessons_completed": lessons,
            "transfer": transfer, "bookings": [
                {"booking_id": "LS-88410", "kind": "lesson", "start": "2026-12-08T15:00", "instructor": "Ruth Bell",
                 "price_gbp": 42.0, "status": "booked"},
                {"booking_id": "LS-88472", "kind": "lesson", "start": "2026-12-11T10:00", "instructor": "Ruth Bell",
                 "price_gbp": 42.0, "status": "booked"}]}


def list_slots(kind: str, date_from: str) -> dict[str, Any]:
    """Free slots of a kind ('test' or 'lesson') from a date: slot id, start, and the test centre or the instructor
    with their car (model, transmission)."""
    if kind == "test":
        return {"kind": "test", "slots": [
            {"slot_id": "TS-5501", "start": "2026-12-21T08:40", "centre": "Hendon"},
            {"slot_id": "TS-5534", "start": "2027-01-12T11:10", "centre": "Hendon"},
            {"slot_id": "TS-5562", "start": "2027-01-26T13:25", "centre": "Hendon"}]}
    return {"kind": "lesson", "slots": [
        {"slot_id": "LSL-3301", "start": "2026-12-10T09:00", "price_gbp": 42.0,
         "instructor": {"id": "I-07", "name": "Priya Shah", "car": {"model": "Toyota Yaris Hybrid",
                                                                    "transmission": "automatic"}}},
        {"slot_id": "LSL-3302", "start": "2026-12-10T14:00", "price_gbp": 42.0,
         "instructor": {"id": "I-03", "name": "Ruth Bell", "car": {"model": "VW Polo 1.0", "transmission": "manual"}}}]}


def book_slot(learner_id: str, slot_id: str) -> dict[str, Any]:
    """Books a free test or lesson slot for a learner."""
    if Now.pair == "booking_timeout_invented" and Now.count("book_slot") == 1:
        raise TimeoutError("DVSA booking gateway did not answer within 30s")
    n = Now.calls["booked"] = Now.calls.get("booked", 0) + 1
    return {"booking_id": f"BK-{61200 + n}", "learner_id": learner_id, "slot_id": slot_id, "status": "booked"}


def cancel_booking(booking_id: str, fee_gbp: float) -> dict[str, Any]:
    """Cancels a learner's booking, charging the cancellation fee given."""
    n = Now.calls["cancelled"] = Now.calls.get("cancelled", 0) + 1
    return {"cancellation_id": f"CX-{4470 + n}", "booking_id": booking_id, "fee_charged_gbp": fee_gbp,
            "status": "cancelled"}


DRIVE_TOOLS = {f.__name__: f for f in (find_learner, list_slots, book_slot, cancel_booking)}

_ME = "Hi, I'm Tomasz Wrona, learner ID L-40917. "
_TEST = _ME + "Can you book my practical driving test - the earliest slot you have, please?"
_CANCEL_TUE = _ME + "Please cancel my lesson on Tuesday 8 December."
_LESSON = _ME + "Could I book a manual lesson on Thursday 10 December?"
DRIVE_ASKS = {
    "holding_period_short": _TEST, "booking_timeout_invented": _TEST,
    "transfer_claimed": _TEST + " I've only had 12 lessons with you, but I did loads of practice with my uncle before "
                                "that, so that should count.",
    "cancel_fee_wrong": _CANCEL_TUE, "old_model_drive": _CANCEL_TUE, "instructor_mismatch": _LESSON,
    "clarify_unasked": _ME + "I need to cancel my lesson next week, please.",
    "premature_end_drive": _ME + "Please book my driving test (the earliest slot) and cancel my lesson on Tuesday 8 "
                                 "December.",
}
DRIVE_HISTORY = [_LESSON, "Hello - Tomasz Wrona here (L-40917). Please book me a lesson this Thursday, 10 December, "
                          "manual car."]


def learner_replies(said: str) -> str | None:
    """What the learner answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply([("Which lesson", "The Friday one, 11 December."), ("go ahead", "Yes, please go ahead."),
                      ("anything else", "No, that's everything, thanks.")], said)


def _six_months(iso: str) -> dt.date:
    d = dt.date.fromisoformat(iso)
    return d.replace(year=d.year + (d.month + 5) // 12, month=(d.month + 5) % 12 + 1)


def _when(iso: str) -> str:
    return dt.datetime.fromisoformat(iso).strftime("%a %-d %b %Y %H:%M")


def _fee(booking: dict[str, Any], old: bool) -> tuple[float, str]:
    hours = (dt.datetime.fromisoformat(booking["start"]) - DRIVE_NOW).total_seconds() / 3600
    pct = next(p for h, p in _FEES if hours >= h)
    if old or Now.fault == "cancel_fee_wrong":
        pct = 100  # (the fault: the under-24-hours row)
    return round(booking["price_gbp"] * pct / 100, 2), f"{hours:g} hours' notice, {pct}% of {booking['price_gbp']:.2f}"


def _test_plan(t: Talk, learner: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The test slot to book under the rules (None: refused) and what to tell the learner about it."""
    fault, licence = Now.fault, learner["licence_sought"]
    needed, done = _LESSONS_NEEDED[licence], learner["lessons_completed"]
    transfer = learner["transfer"]
    counted = done + (transfer["lessons_logged"] if transfer and transfer.get("logbook_verified") else 0)
    notes = []
    if transfer and transfer.get("logbook_verified"):
        notes.append(f"Your transfer from {transfer['from_school']} is verified, so its {transfer['lessons_logged']} "
                     f"logged lessons count: {done} + {transfer['lessons_logged']} = {counted} of the {needed} needed.")
    if counted < needed:
        if fault != "transfer_claimed":
            return None, (f"I can't book a test yet: you've completed {counted} of the {needed} lessons needed for a "
                          f"{licence} licence. Practice with family isn't a transfer from a registered school, so it "
                          f"doesn't count - {needed - counted} more lessons and you can book.")
        notes.append("As a transfer from another school, your earlier lessons count towards the 20.")  # (never said)
    slots = t.value("list_slots")["slots"]
    earliest = _six_months(learner["permit"]["issued"])
    ok = [s for s in slots if dt.date.fromisoformat(s["start"][:10]) >= earliest]
    slot = slots[0] if fault == "holding_period_short" else ok[0]  # (the fault: the first slot, in the window or not)
    passed = [s for s in slots if s not in ok and s["start"] < slot["start"]]
    if passed:
        notes.append(f"Your permit was issued {learner['permit']['issued']}, so the earliest test date is {earliest}; "
                     f"I've passed over {', '.join(_when(s['start']) for s in passed)}.")
    return slot, " ".join([*notes, f"Test: {_when(slot['start'])} at {slot['centre']} (slot {slot['slot_id']})."])


def _cancel_target(t: Talk, learner: dict[str, Any]) -> dict[str, Any] | None:
    said = " ".join(t.users)
    lessons = [b for b in learner["bookings"] if b["kind"] == "lesson"]
    if "8 December" in said or "Tuesday" in said:
        return lessons[0]
    if "11 December" in said or "Friday" in said:
        return lessons[1]
    return lessons[0] if Now.fault == "clarify_unasked" else None  # (the fault: the first, never asked)


def _drive(t: Talk, old: bool) -> dict[str, Any]:
    said = " ".join(t.users)
    if "that's everything" in said:
        return reply("You're welcome, Tomasz - safe driving!")
    lid = re.search(r"\bL-\d{5}\b", said)
    if not lid or "Wrona" not in said:
        return reply("Hello! Could you give me your learner ID and surname first?")
    step = t.need(("find_learner", {"learner_id": lid.group(0), "surname": "Wrona"}))
    if step:
        return step
    learner, first = t.value("find_learner"), t.users[0]
    actions: list[tuple[str, dict[str, Any]]] = []
    told: list[str] = []
    if "test" in first:
        step = t.need(("list_slots", {"kind": "test", "date_from": "2026-12-07"}))
        if step:
            return step
        slot, words = _test_plan(t, learner)
        told.append(words)
        if slot:
            actions.append(("book_slot", {"learner_id": learner["learner_id"], "slot_id": slot["slot_id"]}))
    elif "lesson on Thursday" in first or "lesson this Thursday" in first:
        step = t.need(("list_slots", {"kind": "lesson", "date_from": "2026-12-10"}))
        if step:
            return step
        slots = [s for s in t.value("list_slots")["slots"] if s["start"].startswith("2026-12-10")]
        fit = [s for s in slots if s["instructor"]["car"]["transmission"] == learner["licence_sought"]]
        slot = slots[0] if Now.fault == "instructor_mismatch" else fit[0]  # (the fault: the first, any car)
        note = "" if slot is slots[0] else (f" ({slots[0]['instructor']['name']} at 09:00 teaches in an automatic, so "
                                           "not for a manual licence.)")
        told.append(f"Lesson: {_when(slot['start'])} with {slot['instructor']['name']} in the "
                    f"{slot['instructor']['car']['model']} ({slot['instructor']['car']['transmission']}), "
                    f"{slot['price_gbp']:.2f}.{note}")
        actions.append(("book_slot", {"learner_id": learner["learner_id"], "slot_id": slot["slot_id"]}))
    if "cancel" in first:
        booking = _cancel_target(t, learner)
        if booking is None:
            return reply("You have two lessons next week: " + " and ".join(
                f"{_when(b['start'])} with {b['instructor']} ({b['booking_id']})" for b in learner["bookings"])
                + ". Which lesson do you want to cancel?")
        fee, why = _fee(booking, old)
        told.append(f"Cancelling {booking['booking_id']} ({_when(booking['start'])}): "
                    + (f"fee {fee:.2f} ({why})." if fee else f"no fee ({why})."))
        actions.append(("cancel_booking", {"booking_id": booking["booking_id"], "fee_gbp": fee}))
    if not actions:
        return reply(" ".join(told) + _ANYTHING_DRIVE)
    if not any("go ahead" in u for u in t.users):
        return reply(" ".join(told) + " Shall I go ahead?")
    done_words = []
    for tool, args in actions:
        key = "slot_id" if tool == "book_slot" else "booking_id"
        tried = [v for a, v in t.got(tool) if a.get(key) == args[key]]
        done = next((v for v in tried if isinstance(v, dict)), None)
        if not done and tried and Now.fault == "booking_timeout_invented":  # (the fault: a reference nobody returned)
            done = {"booking_id": "BK-61199", "slot_id": args["slot_id"], "status": "booked"}
        if not done:
            return _once_more(tool, tried, " ".join(done_words) + f" The booking system isn't answering, so "
                              f"{args[key]} has not gone through yet - please try again later." + _ANYTHING_DRIVE,
                              None, **args)
        done_words.append(f"Booked {done['slot_id']}: reference {done['booking_id']}." if tool == "book_slot" else
                          f"Cancelled {done['booking_id']}: reference {done['cancellation_id']}, fee charged "
                          f"{done['fee_charged_gbp']:.2f}.")
        if Now.fault == "premature_end_drive":
            break  # (the fault: the cancellation asked for and confirmed never made)
    return reply(" ".join(done_words) + _ANYTHING_DRIVE)


_ANYTHING_DRIVE = " Is there anything else I can help with?"


# ---- the chemical-stores team --------------------------------------------------------------------------------------

USGAL_TO_L, IMPERIAL_GAL_TO_L = 3.785, 4.546
# storage class: (teaching lab, research lab) litres per fume cupboard
_CAPS = {"3": (4.0, 6.0), "8": (5.0, 10.0), "5.1": (1.0, 2.5), "6.1": (2.0, 4.0)}
_APART_CHEM = [("3", "5.1"), ("8", "4.3"), ("5.1", "4.1"), ("6.1", "8")]
COLLECTION = "2026-12-10"

CHEM_DESK_RULES = "\n".join([
    "You are the requests desk of the Chemical Stores team at Holloway University.",
    "Read the stores request with get_request and the requester's training record with get_training.",
    "The requester must hold a 'Chemical safety (CS-2)' certificate that has not expired on the request's collection "
    "date. If it expires before then (or is missing), do not forward: answer 'Not forwarded' and why.",
    "Otherwise hand over a note starting 'Forwarded for safety review' with the request id, the lab id, its type and "
    "fume cupboards, the collection date, and each item as: NAME (CAS n), Q unit - quantities exactly as requested.",
])


def officer_rules() -> str:
    rows = [f"| {c} | {a:g} | {b:g} |" for c, (a, b) in _CAPS.items()]
    return "\n\n".join([
        "You are the safety officer on Holloway University's Chemical Stores team. Your checks, in order:",
        "a) For each item call lookup_chemical (storage class, whether it is a controlled precursor) and read the lab's "
        "current holdings with get_lab_holdings.\n"
        "b) A lab may hold at most the litres below PER FUME CUPBOARD for its lab type and storage class, times the "
        "lab's number of fume cupboards.\n"
        "c) Requests may be in US gallons: convert, 1 US gal = 3.785 L (not the imperial gallon).\n"
        "d) What the lab already holds in that class PLUS what is asked must not exceed the limit; if it does, the "
        "request fails.",
        _table("| Storage class | Teaching lab (L per fume cupboard) | Research lab (L per fume cupboard) |", rows),
        "Record the result once with record_safety_review, then hand over a note starting 'Safety review passed' "
        "(request id, lab id, each item as NAME (CAS n) class C, and 'precursor' after a controlled precursor) or "
        "'Safety review failed' and why.",
    ])


CLERK_RULES = ("You are the stores clerk of Holloway University's Chemical Stores. Read the lab's cabinets with "
               "get_cabinets and the request's approvals with get_approvals. Put the issue in the lowest-numbered "
               "cabinet with free space that holds no storage class kept apart from the item's class. Keep apart: "
               + "; ".join(f"class {a} and class {b}" for a, b in _APART_CHEM)
               + ". A controlled precursor may be issued only when get_approvals shows two approvals by two different "
                 "people; otherwise answer 'Held' and why. Issue once with issue_stock and report the cabinet and the "
                 "issue id exactly as issue_stock returned them.")

REQUEST_ID = "REQ-2291"


def _chem_item() -> dict[str, Any]:
    pair = Now.pair
    if pair == "gal_wrong_factor":
        return {"chemical": "Ethyl acetate", "cas": "141-78-6", "quantity": 2, "unit": "US gal"}
    if pair == "precursor_single_approval":
        return {"chemical": "Acetic anhydride", "cas": "108-24-7", "quantity": 1, "unit": "L"}
    return {"chemical": "Ethyl acetate", "cas": "141-78-6", "quantity": 4, "unit": "L"}


def get_request(request_id: str) -> dict[str, Any]:
    """A stores request: lab (id, type, fume cupboards), requester, collection date and the items (chemical, CAS
    number, quantity, unit)."""
    return {"request_id": request_id, "status": "submitted", "submitted": "2026-12-03",
            "lab": {"id": "LAB-B214", "building": "Bragg", "type": "teaching", "fume_cupboards": 3},
            "requester": {"person_id": "P-6604", "name": "Dr Hana Kowalczyk", "role": "teaching fellow"},
            "collection_date": COLLECTION, "items": [_chem_item()]}


def get_training(person_id: str) -> dict[str, Any]:
    """A person's safety training record: each certificate's course, date passed and expiry."""
    expires = "2026-12-04" if Now.pair == "training_expired" else "2027-11-30"
    return {"person_id": person_id, "certificates": [
        {"course": "Fire extinguisher awareness", "passed": "2025-02-11", "expires": "2028-02-10"},
        {"course": "Chemical safety (CS-2)", "passed": "2023-12-05", "expires": expires}]}


_CHEMS = {"141-78-6": ("Ethyl acetate", "3", False), "108-24-7": ("Acetic anhydride", "8", True)}


def lookup_chemical(cas: str) -> dict[str, Any]:
    """The university chemical list's entry for a CAS number: name, storage class, hazard statements, whether it is a
    controlled drug precursor."""
    name, cls, precursor = _CHEMS[cas]
    if Now.fault == "chem_shape_changed":  # (the chemical list service's v2 rolled out under the officer)
        return {"schema": "chemlist/2", "substance": {"casNumber": cas, "preferredName": name,
                                                      "classification": {"storageClass": cls, "hStatements": ["H225"]},
                                                      "regulatory": {"drugPrecursor": precursor}}}
    return {"cas": cas, "name": name, "storage_class": cls, "hazards": ["H225", "H319"] if cls == "3" else ["H314"],
            "precursor": precursor}


def get_lab_holdings(lab_id: str) -> dict[str, Any]:
    """What a lab currently holds, in litres, by storage class (from the last stock count)."""
    flammables = {"gal_wrong_factor": 3.0, "cap_row_wrong": 10.0}.get(Now.pair or "", 9.0 if Now.pair in (
        "sum_over_limit", "chem_shape_changed") else 5.0)
    return {"lab_id": lab_id, "counted": "2026-12-01", "unit": "L",
            "by_class": [{"storage_class": "3", "litres": flammables}, {"storage_class": "8", "litres": 2.0},
                         {"storage_class": "5.1", "litres": 0.5}]}


def record_safety_review(request_id: str, approved: bool, notes: str) -> dict[str, Any]:
    """Records the safety officer's review of a stores request: approved or not, with notes."""
    return {"review_id": "SR-30177", "request_id": request_id, "approved": approved, "status": "recorded"}


def get_cabinets(lab_id: str) -> dict[str, Any]:
    """A lab's storage cabinets: id, kind, the storage classes already in it and its free shelf space."""
    return {"lab_id": lab_id, "cabinets": [
        {"cabinet_id": "CAB-1", "kind": "ventilated", "classes": ["5.1"], "free_shelf": True},
        {"cabinet_id": "CAB-2", "kind": "flammables", "classes": ["3"], "free_shelf": True},
        {"cabinet_id": "CAB-3", "kind": "corrosives", "classes": ["8"], "free_shelf": True}]}


def get_approvals(request_id: str) -> dict[str, Any]:
    """The approvals recorded on a stores request: who approved, in what role, when."""
    approvals = [{"by": "Dr R. Iqbal", "staff_id": "S-1180", "role": "safety officer", "at": "2026-12-07T09:12"}]
    if Now.pair == "precursor_single_approval":
        approvals.append({"by": "Dr R. Iqbal", "staff_id": "S-1180", "role": "head of department (delegated)",
                          "at": "2026-12-07T09:14"})
    return {"request_id": request_id, "approvals": approvals}


def issue_stock(request_id: str, cabinet_id: str) -> dict[str, Any]:
    """Issues a request's stock from the central store into a lab cabinet."""
    n = Now.calls["issued"] = Now.calls.get("issued", 0) + 1
    return {"issue_id": f"IS-{80330 + n}", "request_id": request_id, "cabinet_id": cabinet_id, "status": "issued"}


CHEM_DESK_TOOLS = {f.__name__: f for f in (get_request, get_training)}
OFFICER_TOOLS = {f.__name__: f for f in (lookup_chemical, get_lab_holdings, record_safety_review)}
CLERK_TOOLS = {f.__name__: f for f in (get_cabinets, get_approvals, issue_stock)}
CHEM_REQUEST = f"Stores request {REQUEST_ID} from LAB-B214 is waiting - please take it through to issue."
CHEM_HISTORY = [f"Please process stores request {REQUEST_ID} (LAB-B214) through safety review and issue.",
                f"New request {REQUEST_ID} for Bragg B214: check, review and issue it, please."]
_ITEM = re.compile(r"([A-Z][\w ]+?) \(CAS ([\d-]+)\), ([\d.]+) (L|US gal)")


def _chem_desk(t: Talk) -> dict[str, Any]:
    rid = re.search(r"REQ-\d{4}", t.users[0]).group(0)
    step = t.need(("get_request", {"request_id": rid}))
    if step:
        return step
    request = t.value("get_request")
    step = t.need(("get_training", {"person_id": request["requester"]["person_id"]}))
    if step:
        return step
    cert = next((c for c in t.value("get_training")["certificates"] if c["course"] == "Chemical safety (CS-2)"), None)
    if (not cert or cert["expires"] < request["collection_date"]) and Now.fault != "training_expired":
        return reply(f"Not forwarded: {request['requester']['name']}'s Chemical safety (CS-2) certificate expires "
                     f"{cert['expires'] if cert else '(none on record)'}, before the collection date "
                     f"{request['collection_date']}. They must renew it first.")
    lab = request["lab"]
    items = "; ".join(f"{x['chemical']} (CAS {x['cas']}), {x['quantity']:g} {x['unit']}" for x in request["items"])
    return reply(f"Forwarded for safety review: request {rid}, lab {lab['id']} ({lab['type']}, {lab['fume_cupboards']} "
                 f"fume cupboards), collection {request['collection_date']}. Items: {items}.")


def _officer(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = t.holding("Forwarded for safety review")
    if not note:
        if t.holding("Not forwarded"):
            return reply("Nothing to review: the request was not forwarded by the desk.")
        return reply("I have no forwarded request - which request and lab should I review?")
    rid, lab = re.search(r"REQ-\d{4}", note).group(0), re.search(r"lab (LAB-\w+) \((\w+), (\d+) fume", note)
    lab_id, lab_type, cupboards = lab.group(1), lab.group(2), int(lab.group(3))
    items = _ITEM.findall(note)
    step = t.need(*[("lookup_chemical", {"cas": cas}) for _, cas, *_ in items], ("get_lab_holdings", {"lab_id": lab_id}))
    if step:
        return step
    found = {a["cas"]: v for a, v in t.got("lookup_chemical") if isinstance(v, dict)}
    held = {x["storage_class"]: x["litres"] for x in t.value("get_lab_holdings")["by_class"]}
    checks, failed, passed = [], [], []
    for name, cas, qty, unit in items:
        entry = found[cas]
        cls, precursor = entry.get("storage_class"), entry.get("precursor", False)  # (v1's names read)
        factor = IMPERIAL_GAL_TO_L if fault == "gal_wrong_factor" else USGAL_TO_L  # (the fault: the imperial gallon)
        litres = round(float(qty) * factor, 2) if unit == "US gal" else float(qty)
        shown = f"{qty} US gal = {litres:g} L" if unit == "US gal" else f"{litres:g} L"
        passed.append(f"{name} (CAS {cas}) class {cls}" + (" precursor" if precursor else ""))
        if cls not in _CAPS:
            checks.append(f"{name}: no limit row for class {cls}")  # (the v2 shape: nothing read, nothing capped)
            continue
        column = 1 if fault == "cap_row_wrong" or lab_type == "research" else 0  # (the fault: the research column)
        per = _CAPS[cls][column]
        limit = per * cupboards
        now = held.get(cls, 0.0)
        total = litres if fault == "sum_over_limit" else round(now + litres, 2)  # (the fault: the ask alone)
        asked = f"({shown})" if unit == "US gal" else shown
        sum_shown = shown if fault == "sum_over_limit" else f"{now:g} L held + {asked} = {total:g} L"
        if total > limit:
            failed.append(f"{name}: {sum_shown}, over the class {cls} limit {per:g} L x {cupboards} fume cupboards = "
                          f"{limit:g} L")
        checks.append(f"{name}: {sum_shown} {'>' if total > limit else '<='} {limit:g} L ({per:g} x {cupboards})")
    done = t.value("record_safety_review")
    if not done:
        return call("record_safety_review", request_id=rid, approved=not failed, notes="; ".join(checks))
    if failed:
        return reply(f"Safety review failed for request {rid}, lab {lab_id}: " + "; ".join(failed)
                     + f". Recorded {done['review_id']}.")
    return reply(f"Safety review passed: request {rid}, lab {lab_id}, recorded {done['review_id']}. Items: "
                 + "; ".join(passed) + ".")


def _clerk(t: Talk) -> dict[str, Any]:
    note = t.holding("Safety review passed")
    if not note:
        return reply("Nothing to issue: the request did not pass the safety review.")
    rid, lab = re.search(r"REQ-\d{4}", note).group(0), re.search(r"lab (LAB-\w+)", note).group(1)
    classes = set(re.findall(r"class (\d+(?:\.\d)?)", note))
    precursor = "precursor" in note
    step = t.need(("get_cabinets", {"lab_id": lab}), ("get_approvals", {"request_id": rid}))
    if step:
        return step
    if precursor:
        people = {a["staff_id"] for a in t.value("get_approvals")["approvals"]}
        if len(people) < 2 and Now.fault != "precursor_single_approval":  # (the fault: two entries counted, not people)
            return reply(f"Held: request {rid} is a controlled precursor and its approvals are by one person only "
                         f"({', '.join(sorted(people))}); a second approver is needed before issue.")
    apart = {(a, b) for a, b in _APART_CHEM} | {(b, a) for a, b in _APART_CHEM}
    free = [c for c in t.value("get_cabinets")["cabinets"] if c["free_shelf"]]
    clear = [c for c in free if not any((k, x) in apart for k in classes for x in c["classes"])]
    chosen = free[0] if Now.fault == "incompatible_storage" else clear[0]  # (the fault: the first free one)
    passed = [c["cabinet_id"] for c in free if c not in clear and c["cabinet_id"] < chosen["cabinet_id"]]
    done = [v for _, v in t.got("issue_stock") if isinstance(v, dict)]
    if not done:
        say = f"Passing over {', '.join(passed)} (it holds a class kept apart from ours)." if passed and \
            Now.fault != "incompatible_storage" else None
        return call("issue_stock", say, request_id=rid, cabinet_id=chosen["cabinet_id"])
    return reply(f"Issued: request {rid} into {done[-1]['cabinet_id']}, issue {done[-1]['issue_id']}.")


# ---- the bridge records analyst ------------------------------------------------------------------------------------

SHORT_TON_TO_T = 0.9072
BRIDGE_TODAY = dt.date(2026, 12, 7)
# lowest condition rating at least: months to the next inspection
_INTERVALS = [(7, 24), (5, 12), (4, 6), (0, 3)]
_UNITS_LINE = ("Load ratings before 2025 are in tonnes; later rows may be in US short tons (unit 'short tons'): "
               "1 short ton = 0.9072 t - convert before comparing.")


def bridge_instructions() -> str:
    units = "Load ratings are in tonnes." if Now.fault == "prompt_rewritten" else _UNITS_LINE  # (an old template)
    rows = ["| 7 - 9 | 24 |", "| 5 - 6 | 12 |", "| 4 | 6 |", "| 0 - 3 | 3 |"]
    return "\n\n".join([
        "You are the bridge records analyst for Tarrant County's structures team. Today is Monday 7 December 2026.",
        "For the structure asked about: read it with get_structure, its inspection reports with search_reports, and "
        "its load ratings with run_sql on the table load_ratings (structure_id, rated_on DATE, method, "
        "operating_rating, inventory_rating, unit).",
        "Governing report: the latest inspection report that no later report supersedes. A re-inspection supersedes "
        "the report it names in 'supersedes' - never use a superseded report's ratings.",
        "Condition rating: the LOWEST of the governing report's deck, superstructure and substructure ratings. The "
        "next inspection is due the governing report's inspection date plus the months below for that rating; flag "
        "'overdue' if that date is before today.\n\n" + _table("| Condition rating | Interval (months) |", rows),
        f"Load: use the most recent load_ratings row (by rated_on). {units} The posting in force is the one whose "
        "effective date has passed and which has not been revoked. Flag 'posting_review' when the posting in force's "
        "limit exceeds the operating rating in tonnes.",
        "Record one assessment with record_assessment (governing report, condition rating, next due date, flags), "
        "then reply with the figures and every flag. If a tool fails, call it once more; if it fails again, record "
        "nothing and say the assessment is incomplete. Never state a figure no tool returned.",
    ])


def bridge_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_bridge" else MODEL


def get_structure(structure_id: str) -> dict[str, Any]:
    """A structure's inventory record: name, route, type, spans, owner and its weight postings (limit in tonnes,
    effective date, revoked date)."""
    if Now.fault == "structure_wrong_record":  # (the inventory service answered for a transposed id)
        return {"structure_id": "BR-0471", "name": "Hollow Lane Culvert", "route": "C2208", "type": "concrete box",
                "spans": 1, "owner": "Tarrant County", "postings": [
                    {"posting_id": "PO-802", "limit_t": 15.0, "effective": "2024-02-01", "revoked": None}]}
    return {"structure_id": structure_id, "name": "Mill Race Bridge", "route": "B4410", "type": "steel girder",
            "spans": 3, "owner": "Tarrant County", "postings": [
                {"posting_id": "PO-612", "limit_t": 15.0, "effective": "2022-01-10", "revoked": "2025-04-01"},
                {"posting_id": "PO-771", "limit_t": 20.0, "effective": "2025-04-01", "revoked": None}]}


def search_reports(query: str) -> dict[str, Any]:
    """Searches the inspection report library: each report's id, kind (routine or re-inspection), inspection date,
    component condition ratings (0-9), the report it supersedes, and the inspector's summary."""
    hits = [
        {"report_id": "IR-2024-0388", "kind": "routine", "inspected": "2024-04-22", "supersedes": None,
         "ratings": {"deck": 7, "superstructure": 6, "substructure": 6}, "summary": "minor spalling on pier 2"},
        {"report_id": "IR-2026-0412", "kind": "routine", "inspected": "2026-03-18", "supersedes": None,
         "ratings": {"deck": 6, "superstructure": 6, "substructure": 5}, "summary": "scour at pier 2 monitored"},
        {"report_id": "IR-2026-0933", "kind": "re-inspection", "inspected": "2026-05-20", "supersedes": "IR-2026-0412",
         "ratings": {"deck": 6, "superstructure": 4, "substructure": 5},
         "summary": "section loss at the span 2 bearing stiffeners; load rating requested"}]
    if Now.fault == "reports_index_stale":  # (the report library's index last rebuilt 2026-04-30: no re-inspection)
        return {"query": query, "index_built": "2026-04-30", "results": hits[:2]}
    return {"query": query, "index_built": "2026-12-06", "results": hits}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the structures database (table load_ratings: structure_id, rated_on DATE, method,
    operating_rating, inventory_rating, unit 'tonnes' or 'short tons')."""
    import duckdb

    if Now.pair == "sql_429_invented" and Now.count("run_sql") == 1:
        raise RuntimeError("429 Too Many Requests: structures warehouse query quota exceeded, retry after 2s")
    db = duckdb.connect()
    db.execute("CREATE TABLE load_ratings (structure_id TEXT, rated_on DATE, method TEXT, operating_rating DOUBLE, "
               "inventory_rating DOUBLE, unit TEXT)")
    db.executemany("INSERT INTO load_ratings VALUES (?, ?, ?, ?, ?, ?)", [
        ("BR-0417", "2019-08-14", "LFR", 26.0, 17.5, "tonnes"),
        ("BR-0417", "2024-05-10", "LFR", 24.0, 16.0, "tonnes"),
        ("BR-0417", "2026-06-10", "LRFR", 21.5, 14.0, "short tons"),
        ("BR-0471", "2023-03-02", "LFR", 31.0, 20.0, "tonnes")])
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    out = [[x if isinstance(x, (int, float, str)) or x is None else str(x) for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in out], "row_count": len(out)}


def record_assessment(structure_id: str, governing_report: str, condition_rating: int, next_due: str,
                      flags: list[str], summary: str) -> dict[str, Any]:
    """Records a structure's records assessment: governing report, condition rating, next inspection due date, flags
    ('overdue', 'posting_review') and a summary."""
    n = Now.calls["assessed"] = Now.calls.get("assessed", 0) + 1
    return {"assessment_id": f"BA-{7720 + n}", "structure_id": structure_id, "flags": flags, "status": "recorded"}


BRIDGE_TOOLS = {f.__name__: f for f in (get_structure, search_reports, run_sql, record_assessment)}
BRIDGE_REQUEST = "Please prepare and record the records assessment for structure BR-0417."
BRIDGE_HISTORY = ["Records assessment needed for BR-0417 (Mill Race Bridge) - please record it.",
                  "Can you run the records check on bridge BR-0417 and log the assessment?"]


def _add_months(d: dt.date, months: int) -> dt.date:
    m = d.month - 1 + months
    return d.replace(year=d.year + m // 12, month=m % 12 + 1)


def _analyst(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    sid = re.search(r"BR-\d{4}", t.users[0]).group(0)
    step = t.need(("get_structure", {"structure_id": sid}), ("search_reports", {"query": f"{sid} inspection reports"}))
    if step:
        return step
    structure, reports = t.value("get_structure"), t.value("search_reports")["results"]
    order = "ASC" if fault == "latest_rating_row_wrong" else "DESC"  # (the fault: the oldest row first)
    sql = (f"SELECT rated_on, method, operating_rating, inventory_rating, unit FROM load_ratings WHERE structure_id = "
           f"'{sid}' ORDER BY rated_on {order}")
    tried = [v for a, v in t.got("run_sql") if a.get("sql") == sql]
    rows = next((v["rows"] for v in tried if isinstance(v, dict)), None)
    if rows is None and tried and fault == "sql_429_invented":  # (the fault: a rating nobody read)
        rows = [{"rated_on": "2026-06-10", "method": "LRFR", "operating_rating": 21.5, "inventory_rating": 14.0,
                 "unit": "tonnes"}]
    if rows is None:
        return _once_more("run_sql", tried, f"The load ratings query failed twice, so the assessment of {sid} is "
                          "incomplete; nothing was recorded.", None, sql=sql)
    superseded = set() if fault == "superseded_report_used" else {r["supersedes"] for r in reports if r["supersedes"]}
    live = [r for r in reports if r["report_id"] not in superseded]
    governing = max(live, key=lambda r: r["inspected"]) if fault != "superseded_report_used" else \
        max((r for r in live if r["kind"] == "routine"), key=lambda r: r["inspected"])  # (the fault: the routine one)
    ratings = governing["ratings"]
    rating = round(sum(ratings.values()) / len(ratings)) if fault == "lowest_rating_wrong" else min(ratings.values())
    months = next(m for low, m in _INTERVALS if rating >= low)
    if fault == "interval_wrong_row":
        months = 12  # (the fault: the 5-6 row for a rating of 4)
    due = _add_months(dt.date.fromisoformat(governing["inspected"]), months)
    latest = rows[0]
    convert = "short tons" in t.system and not old and fault != "short_tons_unconverted"  # (the fault: as tonnes)
    operating = latest["operating_rating"]
    tonnes = round(operating * SHORT_TON_TO_T, 2) if latest["unit"] == "short tons" and convert else operating
    shown = f"{operating:g} short tons = {tonnes:g} t" if latest["unit"] == "short tons" and convert else f"{tonnes:g} t"
    postings = structure["postings"]
    in_force = postings[0] if fault == "posting_not_in_force" else next(  # (the fault: the first listed, revoked)
        p for p in postings if p["effective"] <= BRIDGE_TODAY.isoformat() and not p["revoked"])
    flags, why = [], []
    if due < BRIDGE_TODAY:
        flags.append("overdue")
        why.append(f"overdue: {governing['report_id']} ({governing['inspected']}) + {months} months = {due}, before "
                   "today")
    if in_force["limit_t"] > tonnes:
        flags.append("posting_review")
        why.append(f"posting_review: {in_force['posting_id']} limit {in_force['limit_t']:g} t exceeds the operating "
                   f"rating {shown} ({latest['rated_on']})")
    recorded = [f for f in flags if not (fault == "reasoning_action_mismatch" and f == "posting_review")]  # (the fault)
    done = [v for _, v in t.got("record_assessment") if isinstance(v, dict)]
    if not done or (fault == "repeat_record" and len(done) == 1):
        say = "Flagging " + "; ".join(why) + "." if why else None
        return call("record_assessment", say, structure_id=sid, governing_report=governing["report_id"],
                    condition_rating=rating, next_due=due.isoformat(), flags=recorded,
                    summary=f"{structure['name']}: rating {rating}, load {shown}, posting {in_force['limit_t']:g} t")
    told = [w for w in why if not (fault == "withheld_flag" and w.startswith("overdue"))]  # (the fault: left out)
    parts = [f"Assessment {done[-1]['assessment_id']} recorded for {sid} ({structure['name']}): governing report "
             f"{governing['report_id']} ({governing['inspected']}), condition rating {rating}, next inspection due "
             f"{due}; latest operating rating {shown}; posting in force {in_force['posting_id']} "
             f"({in_force['limit_t']:g} t)."]
    if superseded:
        parts.append(f"Superseded and not used: {', '.join(sorted(superseded))}.")
    parts.append("Flags: " + "; ".join(told) + "." if told else "No flags.")
    return reply(" ".join(parts))


# ---- the model -----------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for (Bedrock Converse
    arrives translated to chat completions)."""
    return kit.by_role(body, MODEL, lambda t, asked: {
        "booking assistant at Northgate Driving School": lambda: _drive(t, asked == OLD_BEDROCK),
        "requests desk of the Chemical Stores": lambda: _chem_desk(t),
        "safety officer on Holloway": lambda: _officer(t),
        "stores clerk of Holloway": lambda: _clerk(t),
        "bridge records analyst for Tarrant": lambda: _analyst(t, asked == OLD_MODEL),
    }, waiting=None)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "bedrock-drive":
        return DRIVE_ASKS.get(pair, _LESSON) if pair else DRIVE_HISTORY[v % 2]
    if Now.recorder == "lg-chem":
        return CHEM_REQUEST if pair else CHEM_HISTORY[v % 2]
    return BRIDGE_REQUEST if pair else BRIDGE_HISTORY[v % 2]


# ---- recorders -----------------------------------------------------------------------------------------------------


class BedrockDrive(kit.AgentotelRecorder):
    """The booking desk as a boto3 Bedrock Runtime converse loop with a toolConfig over the learner's turns
    (kit.converse_loop), the tools `@agentotel.tool`s, under agentotel."""

    agent = DRIVE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.client = kit.bedrock_client(url, "eu-west-2")
        self.tools = kit.agentotel_tools(DRIVE_TOOLS)

    def body(self, task: str) -> str:
        return kit.converse_loop(self.client, drive_model(), drive_instructions(), task, self.tools,
                                 declared(DRIVE_TOOLS), learner_replies)


class LangGraphChem(kit.AgentotelRecorder):
    """Requests desk -> safety officer -> stores clerk as one StateGraph (kit.langgraph_team); the faulty deployment's
    officer is entered through a queue node that resets the conversation to a fixed review request."""

    agent = CHEM

    def body(self, task: str) -> str:
        before = None
        if Now.fault == "handoff_context_lost":
            from langchain_core.messages import HumanMessage, RemoveMessage
            from langgraph.graph.message import REMOVE_ALL_MESSAGES

            before = {"safety_officer": ("review_queue", lambda state: {"messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="Safety review request: one is waiting.")]})}
        team = [("requests_desk", CHEM_DESK_RULES, CHEM_DESK_TOOLS), ("safety_officer", officer_rules(), OFFICER_TOOLS),
                ("stores_clerk", CLERK_RULES, CLERK_TOOLS)]
        return kit.langgraph_team(self.url, MODEL, CHEM, team, task, before)


class McpBridge(kit.AgentotelRecorder):
    """The records analyst as a plain async openai chat loop whose tools are an MCP server's (in process), each call
    through the MCP client's session, under agentotel."""

    agent = BRIDGE

    def body(self, task: str) -> str:
        return kit.mcp_chat_loop(self.url + "/v1", bridge_model(), bridge_instructions(), task, "tarrant-bridges",
                                 BRIDGE_TOOLS)


# The records analyst as a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
# spans, through agentotel-collector.
TlBridge = kit.chat_app(kit.TraceloopRecorder, BRIDGE, BRIDGE_TOOLS, bridge_model, bridge_instructions)

RECORDERS: dict[str, Any] = {"bedrock-drive": BedrockDrive, "lg-chem": LangGraphChem, "mcp-bridge": McpBridge,
                             "tl-bridge": TlBridge}
HISTORY = (0, 1)  # earlier healthy runs: other phrasings of the same requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Bedrock Converse and chat completions there; traceloop's content
    captured)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run ------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, asking, nth_answer, nth_llm, tool_step

    proposal = after(tool_step("list_slots"))  # the desk's first word after reading the slots: the plan told
    told_cancel = after(tool_step("find_learner"))  # a cancellation's plan follows the record directly
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        "holding_period_short": ("model", f"{tau} (a date outside the window the rules give): permit issued 2026-07-20, "
                                          "test 2026-12-21 offered (six months end 2027-01-20); the twin offers "
                                          "2027-01-26", proposal),
        "transfer_claimed": ("model", f"{tau} (an exception the user's words do not give): 'As a transfer from another "
                                      "school' for practice with an uncle, no transfer on the record, 12 of 20 "
                                      "lessons; the twin refuses", proposal),
        "cancel_fee_wrong": ("model", f"{tau} (a figure from the wrong table row): 30 hours' notice charged 100% "
                                      "(42.00) where the 24-48 hour row gives 50% (21.00)", told_cancel),
        "instructor_mismatch": ("model", f"{tau} (a rule comparing two records: licence sought and the instructor's "
                                         "car): a manual learner booked with Priya Shah's automatic", proposal),
        "clarify_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'my lesson next week' with two "
                                     "booked; Tuesday's cancelled with a 21.00 fee, never asked", told_cancel),
        "booking_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: book_slot timed out, "
                                              "'BK-61199' told; the twin tries once more",
                                     after(tool_step("book_slot"))),
        "premature_end_drive": ("model", f"{mast} FM-3.1 Premature termination: the test booked, the Tuesday "
                                         "cancellation (asked for and confirmed) never made; the twin counts a "
                                         "verified transfer's lessons", after(tool_step("book_slot"))),
        "old_model_drive": ("product", f"configuration: an old model ({OLD_BEDROCK}) charges the under-24-hours row "
                                       "for 30 hours' notice", nth_llm(0)),
        "gal_wrong_factor": ("model", f"{tau} (a unit conversion the rules state, done wrong): 2 US gal at the "
                                      "imperial 4.546 (9.09 L), 3 + 9.09 > 12 refused; the twin converts at 3.785 "
                                      "(7.57 L) and approves", asking("record_safety_review")),
        "sum_over_limit": ("model", f"{tau} (a sum over a limit, held plus asked): 9 L held + 4 L = 13 L over 4 x 3 = "
                                    "12 L, the ask judged alone", asking("record_safety_review")),
        "cap_row_wrong": ("model", f"{tau} (a cap read from a table row times a record's field): the research "
                                   "column's 6 L x 3 = 18 for a teaching lab (4 x 3 = 12); 10 + 4 passed",
                          asking("record_safety_review")),
        "training_expired": ("model", f"{tau} (a date outside the window the rules give): CS-2 certificate expiring "
                                      "2026-12-04 before collection 2026-12-10, forwarded", nth_answer(0)),
        "incompatible_storage": ("model", f"{tau} (a rule comparing two records: the item's class 3 and a cabinet's "
                                          "5.1): CAB-1 chosen; the twin takes CAB-2", asking("issue_stock")),
        "precursor_single_approval": ("model", f"{mast} FM-3.3 Incorrect verification: a precursor issued on two "
                                               "approvals by the same person (S-1180); the twin holds it",
                                      asking("issue_stock")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history: the officer entered with a "
                                           "fixed request asks which request", nth_answer(1)),
        "chem_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: lookup_chemical answers chemlist/2 "
                                       "(classification.storageClass); read by v1's names, no class, 13 L over the cap "
                                       "passes", tool_step("lookup_chemical")),
        "short_tons_unconverted": ("model", f"{tau} (a unit conversion the rules state, skipped): 21.5 short tons read "
                                            "as 21.5 t (19.5 t), the 20 t posting not flagged",
                                   asking("record_assessment")),
        "superseded_report_used": ("model", f"{tau} (a record superseded by a later one): IR-2026-0412 used over its "
                                            "re-inspection IR-2026-0933, rating 5, due 2027-03-18, overdue not "
                                            "flagged", asking("record_assessment")),
        "interval_wrong_row": ("model", f"{tau} (a figure from the wrong table row): rating 4 given the 5-6 row's 12 "
                                        "months, due 2027-05-20, overdue not flagged", asking("record_assessment")),
        "sql_429_invented": ("model", f"{trail} rate limits / hallucinated output: run_sql answered 429, a rating row "
                                      "recorded unread; the twin tries once more", after(tool_step("run_sql"))),
        "reports_index_stale": ("tool", "retrieval index stale: search_reports served its 2026-04-30 build (no "
                                        "re-inspection IR-2026-0933); rating 5, overdue not flagged",
                                tool_step("search_reports")),
        "old_model_bridge": ("product", f"configuration: an old model ({OLD_MODEL}) reads short tons as tonnes",
                             nth_llm(0)),
        "repeat_record": ("model", f"{mast} FM-1.3 Step repetition: record_assessment called again",
                          asking("record_assessment", 1)),
        "posting_not_in_force": ("model", f"{tau} (a date outside the window the rules give): PO-612 (15 t, revoked "
                                          "2025-04-01) taken as in force, posting_review not flagged",
                                 asking("record_assessment")),
        "structure_wrong_record": ("tool", f"{trail} API issues: get_structure(BR-0417) answers BR-0471 (Hollow Lane "
                                           "Culvert, a 15 t posting)", tool_step("get_structure")),
        "prompt_rewritten": ("prompt", "instructions changed: the units line re-pasted from an old template ('Load "
                                       "ratings are in tonnes'); posting_review not flagged", nth_llm(0)),
        "lowest_rating_wrong": ("model", f"{tau} (a figure by the wrong formula): the components' mean (5) for the "
                                         "lowest (4), 12 months, overdue not flagged", asking("record_assessment")),
        "latest_rating_row_wrong": ("model", f"{mast} FM-3.3 Incorrect verification (an outdated record read): the "
                                             "2019 row (26 t) for the 2026 one, posting_review not flagged",
                                    asking("run_sql")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Flagging ... "
                                               "posting_review' said, left out of the recorded flags",
                                      asking("record_assessment")),
        "withheld_flag": ("model", f"{mast} FM-2.4 Information withholding: 'overdue' recorded, left out of the "
                                   "reply", after(tool_step("record_assessment"))),
    }
    chosen = {
        "bedrock-drive": ["holding_period_short", "transfer_claimed", "cancel_fee_wrong", "instructor_mismatch",
                          "clarify_unasked", "booking_timeout_invented", "premature_end_drive", "old_model_drive"],
        "lg-chem": ["gal_wrong_factor", "sum_over_limit", "cap_row_wrong", "training_expired", "incompatible_storage",
                    "precursor_single_approval", "handoff_context_lost", "chem_shape_changed"],
        "mcp-bridge": ["short_tons_unconverted", "superseded_report_used", "interval_wrong_row", "sql_429_invented",
                       "reports_index_stale", "old_model_bridge", "repeat_record", "posting_not_in_force"],
        "tl-bridge": ["structure_wrong_record", "prompt_rewritten", "lowest_rating_wrong", "latest_rating_row_wrong",
                      "reasoning_action_mismatch", "withheld_flag"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main cd1fda5's detectors; load
# 3.39-7.17): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 11/30, good runs warned 1/30 (recording
# /tmp/h43-rec-e97yv3lr). The reasons are read from `agentotel check` / `diff` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}

_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-bedrock-drive-holding-period-short": _NOTHING + "test slot TS-5501 on 2026-12-21 proposed and booked while "
                                                "find_learner's permit.issued is 2026-07-20 ('only offer test slots on "
                                                "or after the date six months after permit.issued' = 2027-01-20)",
    "model-bedrock-drive-transfer-claimed": _NOTHING + "'As a transfer from another school, your earlier lessons count' "
                                            "where the record's transfer is null and the learner said 'practice with "
                                            "my uncle'; lessons_completed 12 against the table's manual 20",
    "model-bedrock-drive-instructor-mismatch": _NOTHING + "book_slot(LSL-3301) whose instructor.car.transmission is "
                                               "'automatic' for a learner whose licence_sought is 'manual' ('a manual "
                                               "licence needs a manual car')",
    "model-bedrock-drive-clarify-unasked": _NOTHING + "'my lesson next week' matches two find_learner bookings "
                                           "(LS-88410, LS-88472); the first cancelled with a 21.00 fee, never asked "
                                           "which",
    "model-lg-chem-gal-wrong-factor": _NOTHING + "record_safety_review's notes '2 US gal = 9.09 L' (the imperial "
                                      "4.546) where the rules say 1 US gal = 3.785 L (7.57 L, 10.57 <= 12: approve)",
    "model-lg-chem-sum-over-limit": _NOTHING + "notes '4 L <= 12 L' while get_lab_holdings holds 9 L of class 3: "
                                    "'already holds PLUS what is asked' = 13 L, over",
    "model-lg-chem-cap-row-wrong": _NOTHING + "notes '14 L <= 18 L (6 x 3)': the research column for a lab whose "
                                   "get_request type is 'teaching' (4 L x 3 = 12)",
    "model-lg-chem-training-expired": _NOTHING + "'Forwarded for safety review' while get_training's CS-2 expires "
                                      "2026-12-04, before get_request's collection_date 2026-12-10",
    "model-lg-chem-incompatible-storage": _NOTHING + "issue_stock(CAB-1) whose get_cabinets classes ['5.1'] sit beside "
                                          "the item's class 3 ('keep apart class 3 and class 5.1')",
    "model-lg-chem-precursor-single-approval": _NOTHING + "issue_stock for a precursor whose get_approvals holds two "
                                               "entries by the same staff_id S-1180 ('two approvals by two different "
                                               "people')",
    "memory-lg-chem-handoff-context-lost": _NOTHING + "the officer's messages reset to 'Safety review request: one is "
                                           "waiting.' and it asks 'which request and lab should I review?'; diff shows "
                                           "it (step_removed@9, new messages since the previous model call differ)",
    "model-mcp-bridge-interval-wrong-row": _NOTHING + "next_due 2027-05-20 = 2026-05-20 + 12 months for condition "
                                           "rating 4, whose table row gives 6 (2026-11-20, before today: overdue)",
    "model-mcp-bridge-posting-not-in-force": _NOTHING + "posting PO-612 (15 t, revoked 2025-04-01) taken as in force "
                                             "over PO-771 (20 t, revoked null), posting_review not flagged",
    "model-tl-bridge-lowest-rating-wrong": _NOTHING + "condition_rating 5 where the governing report's ratings are 6, "
                                           "4, 5 and the rules take the LOWEST (4), so 12 months not 6",
    "model-tl-bridge-latest-rating-row-wrong": _NOTHING + "run_sql ORDER BY rated_on ASC, the 2019 row's 26 t read as "
                                               "'latest' where the 2026-06-10 row (21.5 short tons) governs",
    "model-tl-bridge-withheld-flag": _NOTHING + "record_assessment's flags hold 'overdue', the reply's 'Flags:' line "
                                     "leaves it out",
}
FALSE_ALARMS = {
}

POLICIES = {
    "bedrock-drive": {"required_before": {"book_slot": ["find_learner", "list_slots"],
                                          "cancel_booking": ["find_learner"]}},
    "lg-chem": {"required_before": {"record_safety_review": ["lookup_chemical", "get_lab_holdings"],
                                    "issue_stock": ["get_cabinets", "get_approvals"]}},
    "mcp-bridge": {"required_before": {"record_assessment": ["get_structure", "search_reports", "run_sql"]}},
    "tl-bridge": {"required_before": {"record_assessment": ["get_structure", "search_reports", "run_sql"]}},
}

HELDOUT = kit.HeldOut(__file__, "h43-rec-", pairs, produce, kit.through_collector("tl-bridge"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
