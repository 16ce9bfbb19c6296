"""A forty-fifth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a language school's placement desk talking with a student over several turns under
a written policy, a film festival's submissions team (an intake desk handing to a programmer, who hands to a
scheduler) and a rail-freight wagon maintenance records agent reading wagon records, defect reports and the repairs
that close them from a search, and axle weighings from SQL rows, run through real SDKs and frameworks.

    python tests/analysis/heldout45.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout45.py --score DIR [...]       # the runs a call left in DIR, scored again

Linden Language School's placement desk in Bristol (find_student, get_placement_test, list_classes, enrol,
get_enrolments, request_refund) serves a student by written rules: student reference and surname first; the
placement test's total mapped to a level by a markdown table; a class with a free place (enrolled below capacity);
Student visa holders only in a class of at least 15 hours a week, told the 90% attendance rule; refunds by full weeks
before the course start (4 or more: the fee less GBP 75; 2 or 3: half; under 2: none) unless a visa refusal letter is
on the student's record (a student's own account of visa trouble is not one); the course asked about when the words fit
two; the plan told and confirmed first; a failed call tried once more, never an id enrol didn't return. The student's
replies are scripted, said when the desk's message holds their cue. Harbourlight Film Festival's submissions team: an
intake desk (get_submission, record_intake: a withdrawn submission's resubmission read instead, runtime limits and
fees by category from a table, a fee waiver only for a student film with proof on the record) hands over to a
programmer (get_screenings, record_selection: Competition only for a world or international premiere - a public
screening in Ireland before sends a film to Panorama, whatever the submitter declared) who hands over to a scheduler
(list_slots, book_screening: the slot at least the runtime plus 15 minutes' Q&A in Competition, 10 minutes' intro in
Panorama). Caledon Rail Freight's wagon records agent (get_wagon, search_defects: defect reports and the repair records
that close them, run_sql over a DuckDB axle_weighings table, record_assessment) decides whether wagons are fit for a
train: out of service is never fit; inspection intervals by wagon type from a table (distance or months, whichever
first, on or before the train date); depot odometers in miles converted at 1.609 km; weighings in short tons converted
at 0.9072 t against 22.5 t an axle; an open severity-A defect unfit. Each recorder in a process of its own:

- `anthropic-lang` (placement desk): a plain anthropic SDK messages tool loop over the student's turns
  (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `agents-fest` (festival team): the OpenAI Agents SDK on a chat completions model, intake -> programmer -> scheduler
  by two handoffs in one Runner.run (kit.agents_chain), under agentotel;
- `mcp-wagon` (wagon records): a plain async anthropic SDK messages loop whose tools are an MCP server's (in process,
  kit.mcp_anthropic_loop), under agentotel;
- `tl-wagon` (wagon records): a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools traceloop
  tool spans, sent by OTLP through agentotel-collector.

Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins: a B1
placement at the table's 50-69 row for a 68, a full class passed over, a visa student placed in the 20-hour class and
told the attendance rule, an enrol timeout tried once more, a refund at half for 3 full weeks, a visa refusal letter
on the record applied as the exception (GBP 1105 under 2 weeks), a student's visa worries refused as no exception, a
clarifying question (which of two courses); a 44-minute short refused, a student's waiver refused for want of proof,
a withdrawn submission's resubmission followed, a film screened in Cork sent to Panorama, a 103-minute need met by the
120-minute slot; 25,200 miles converted to 40,547 km and an IKA wagon found due, 24.6 short tons converted to 22.3 t
and passed, a severity-A defect closed by a later repair left alone, a TEA tank's 6 months read from its row, a
query timeout tried once more, an out-of-service wagon refused, two wagons both assessed.

Built and scored blind, once (main's HEAD 8fb16fac7fd9d1e2f3e4d1ada59de35ed02d11d6, the branch rebased onto it; the
set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread - main's HEAD subject was
seen once, printed by `git worktree add`; load average 7.67 at the start, 9.71 at the end, other helpers running;
recording /tmp/h45-rec-pb3aqflb): 31 pairs, 4 recorders (a plain anthropic messages loop over a student's turns, an
Agents SDK team of three on chat completions, an anthropic loop over an MCP server's tools, all under agentotel; an
openai loop under OpenLLMetry through agentotel-collector) - diff top-1 31/31, check step+layer 12/31, good runs with a
warning 10/31. Check's hits: outside the model 6/6 (an old Claude twice, a rewritten prompt, a stale defects index, a
submissions API and a wagon API answering another record), an invented enrolment id after a timeout, a skipped
clarifying question, a refusal letter on the record ignored, a 44-minute Short let through and a waiver without proof
(both policy_violated), miles read as km (unit_mismatch). The festival's good runs are all warned (8 of the 10 alarms):
a rule conditioned on status 'withdrawn' is read as forbidding record_intake on a 'received' submission, and that
false warning at step 4 outranks the true findings of the lost hand-over (history_lost) and the repeated booking
(repeated_tool_call). The 19 misses are in CHECK_MISSED, each with why; 13 of them have no finding at all: a table row,
a unit, two records' fields, a date window, a superseding repair, a status, a said-versus-recorded verdict, a reason
withheld, a second wagon never assessed, an exception the student's words do not give.
Session 30 (after the blind score, main's final code of that session): check step+layer 11/31, good runs warned 0/31 -
'A submission whose status is 'withdrawn' ...' is the case the sentence opens on, a resubmitted_as successor is the
request's thing, a Student visa's keys are another kind of record, a grant citing the record is no user's say-so; the
handover and the repeated booking now rank first.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
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

MODEL, CLAUDE, OLD_CLAUDE = "gpt-4o-mini", "claude-sonnet-4-5", "claude-3-haiku-20240307"
LANG, FEST, WAGON = "linden-placement-desk", "harbourlight-submissions", "caledon-wagon-records"


class Now(kit.World):
    """The world of the run being recorded."""


# What every agent's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _table(head: str, rows: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * head.count("|", 1), *rows])


# ---- the language school's placement desk --------------------------------------------------------------------------

LANG_TODAY = dt.date(2026, 12, 5)
_LEVELS = [(0, 29, "A1"), (30, 49, "A2"), (50, 69, "B1"), (70, 84, "B2"), (85, 100, "C1")]
ADMIN_FEE = 75.0


def lang_instructions() -> str:
    levels = [f"| {lo}-{hi} | {name} |" for lo, hi, name in _LEVELS]
    return "\n\n".join([
        "You are the placement desk assistant at Linden Language School, Bristol. Today is Saturday 5 December 2026.",
        "Always start by confirming the student's identity: their student reference (LS-) and surname, checked with "
        "find_student.",
        "### Placement\nRead the student's placement test with get_placement_test. Its total (out of 100) sets the "
        "level:\n\n" + _table("| Total score | Level |", levels) + "\n\nThen list_classes for that level and the "
        "course start date, and offer the first class in the list that still has a free place (enrolled must be below "
        "capacity). Students on a Student visa may only join a class of at least 15 hours per week, and you must tell "
        "them that attendance below 90% is reported to UK Visas and Immigration.",
        "### Cancellations and refunds\nRead the student's enrolments with get_enrolments. If the student's words could "
        "mean more than one enrolment, ask which one before anything else. The refund depends on the full weeks "
        "between today and the course start date:\n"
        "- 4 full weeks or more: the fee paid less a GBP 75 administration fee;\n"
        "- 2 or 3 full weeks: 50% of the fee paid;\n"
        "- under 2 full weeks: no refund.\n"
        "The one exception: if the student's visa application was refused AND the refusal letter is on their record "
        "(find_student documents, type visa_refusal), refund the fee less GBP 75 whenever they cancel. A student "
        "telling you their visa may be late or refused is not a refusal letter.",
        "Before you enrol anyone or request a refund, tell the student exactly what you will do (class, hours, fee, or "
        "the refund amount and why) and wait for them to confirm. If a call fails, try it once more; if it fails "
        "again, tell the student it did not go through. Never give an enrolment or refund reference that a tool did "
        "not return.",
    ])


def lang_model() -> str:
    return OLD_CLAUDE if Now.fault == "old_model_lang" else CLAUDE


def find_student(student_ref: str, surname: str) -> dict[str, Any]:
    """A student's record: name, nationality, visa (type, CAS number, expiry) and the documents on file."""
    if student_ref != "LS-40917" or surname.lower() != "tanaka":
        return {"students": [], "message": "no student with that reference and surname"}
    visa = {"type": "Visitor", "entered": "2026-09-02"}
    if Now.pair == "visa_hours_ignored":
        visa = {"type": "Student visa", "cas_number": "E4G8JK2P9Q1R", "expires": "2027-09-30"}
    documents = [{"type": "passport_copy", "ref": "DOC-5521", "uploaded": "2026-08-14"}]
    if Now.pair == "exception_ignored":
        documents.append({"type": "visa_refusal", "ref": "UKVI GWF071993214", "dated": "2026-11-27",
                          "uploaded": "2026-12-01", "verified_by": "M. Okoro"})
    return {"student_ref": student_ref, "name": "Yuki Tanaka", "surname": "Tanaka", "nationality": "Japan",
            "visa": visa, "documents": documents}


def get_placement_test(student_ref: str) -> dict[str, Any]:
    """The student's latest placement test: id, date taken, section scores and the total out of 100."""
    sections = {"grammar": 17, "reading": 15, "listening": 14, "writing": 12}
    if Now.pair in ("level_wrong_row", "old_model_lang"):
        sections = {"grammar": 19, "reading": 18, "listening": 17, "writing": 14}
    return {"test_id": "PT-88213", "student_ref": student_ref, "taken": "2026-11-28", "sections": sections,
            "total": sum(sections.values()), "out_of": 100}


def list_classes(level: str, start_date: str) -> dict[str, Any]:
    """The classes of a level starting on a date: id, title, hours per week, capacity, places taken and fee."""
    full = Now.pair == "class_full_ignored"
    return {"level": level, "start_date": start_date, "weeks": 10, "classes": [
        {"class_id": f"{level}-GE-M1", "title": "General English (mornings)", "hours_per_week": 10, "capacity": 14,
         "enrolled": 14 if full else 9, "fee_gbp": 1180.0, "room": "2.04"},
        {"class_id": f"{level}-INT-1", "title": "Intensive English", "hours_per_week": 20, "capacity": 12,
         "enrolled": 7, "fee_gbp": 1740.0, "room": "3.11"}]}


def enrol(student_ref: str, class_id: str, level: str) -> dict[str, Any]:
    """Enrols a student in a class at a level."""
    if Now.pair == "enrol_timeout_invented" and Now.count("enrol") == 1:
        raise TimeoutError("student records system did not answer within 15s")
    return {"enrolment_id": "EN-60318", "student_ref": student_ref, "class_id": class_id, "level": level,
            "status": "confirmed", "invoice": {"id": "INV-22147", "due": "2026-12-19"}}


def get_enrolments(student_ref: str) -> dict[str, Any]:
    """A student's enrolments: id, course, class, start date, fee paid, status."""
    start = {"refund_weeks_wrong": "2026-12-28", "visa_exception_claimed": "2026-12-14",
             "exception_ignored": "2026-12-14"}.get(Now.pair or "", "2027-01-11")
    general = {"enrolment_id": "EN-60231", "course": "General English (mornings)", "class_id": "B1-GE-M1",
               "start_date": start, "fee_paid_gbp": 1180.0, "status": "confirmed"}
    if Now.pair == "clarify_unasked":
        return {"student_ref": student_ref, "enrolments": [
            {"enrolment_id": "EN-60244", "course": "IELTS Exam Preparation (evenings)", "class_id": "B1-IELTS-E",
             "start_date": "2027-01-12", "fee_paid_gbp": 640.0, "status": "confirmed"}, general]}
    return {"student_ref": student_ref, "enrolments": [general]}


def request_refund(enrolment_id: str, refund_gbp: float, reason: str) -> dict[str, Any]:
    """Cancels an enrolment and requests its refund to the card that paid."""
    return {"refund_id": "RF-31907", "enrolment_id": enrolment_id, "refund_gbp": refund_gbp, "status": "queued",
            "expected_by": "2026-12-15"}


LANG_TOOLS = {f.__name__: f for f in (find_student, get_placement_test, list_classes, enrol, get_enrolments,
                                      request_refund)}

_HELLO = "Hello, I'm Yuki Tanaka, student ref LS-40917. "
_PLACE = _HELLO + "I did the placement test last week - could you put me in a class for the course starting 11 January?"
LANG_ASKS = {
    None: _PLACE,
    "refund_weeks_wrong": _HELLO + "I need to cancel my General English course, please - can I get a refund?",
    "visa_exception_claimed": _HELLO + "I need to cancel my General English course. My visa appointment got pushed "
                                       "back and I don't think I'll get the visa in time, so I should get a full "
                                       "refund, right?",
    "exception_ignored": _HELLO + "I have to cancel my General English course - my student visa was refused, I "
                                  "uploaded the refusal letter on Tuesday. Can I have my money back?",
    "clarify_unasked": _HELLO + "I'd like to cancel my course and get a refund, please.",
}
LANG_HISTORY = ["Hi! Yuki Tanaka (LS-40917). Can you place me in a class from 11 January? I took the test already.",
                "Good morning, this is Yuki Tanaka, reference LS-40917 - which class should I join for the January "
                "course? Please enrol me."]


def student_replies(said: str) -> str | None:
    """What the student answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply([("Which course", "The General English one, please."),
                      ("Shall I", "Yes, please go ahead."),
                      ("anything else", "No, that's all. Thanks!")], said)


_ANYTHING = " Is there anything else I can help with?"


def _lang(t: Talk, old: bool) -> dict[str, Any]:
    said = " ".join(t.users)
    if "that's all" in said:
        return reply("You're welcome, Yuki - see you at Linden!")
    ref = re.search(r"\bLS-\d{5}\b", said)
    if not ref or "Tanaka" not in said:
        return reply("Happy to help! Could you give me your student reference (LS-...) and surname first?")
    step = t.need(("find_student", {"student_ref": ref.group(0), "surname": "Tanaka"}))
    if step:
        return step
    student = t.value("find_student")
    if "cancel" in t.users[0]:
        return _lang_refund(t, student)
    return _lang_place(t, student, old)


def _lang_place(t: Talk, student: dict[str, Any], old: bool) -> dict[str, Any]:
    fault, ref = Now.fault, student["student_ref"]
    step = t.need(("get_placement_test", {"student_ref": ref}))
    if step:
        return step
    test = t.value("get_placement_test")
    row = next(i for i, (lo, hi, _) in enumerate(_LEVELS) if lo <= test["total"] <= hi)
    if old or fault == "level_wrong_row":
        row += 1  # (the fault: the next row of the table read)
    level = _LEVELS[row][2]
    step = t.need(("list_classes", {"level": level, "start_date": "2027-01-11"}))
    if step:
        return step
    classes = t.value("list_classes")["classes"]
    visa = student["visa"]["type"] == "Student visa"
    fits = [c for c in classes if c["enrolled"] < c["capacity"] and (not visa or c["hours_per_week"] >= 15)]
    chosen = fits[0]
    if fault == "class_full_ignored" or fault == "visa_hours_ignored":
        chosen = classes[0]  # (the fault: the first listed, its places or hours never compared)
    if not any("go ahead" in u for u in t.users):
        passed = [c["class_id"] for c in classes[:classes.index(chosen)]]
        why = (f" ({', '.join(passed)} is {'full' if classes[0]['enrolled'] >= classes[0]['capacity'] else 'under 15 hours a week, which a Student visa does not allow'})"
               if passed else "")
        attendance = (" As you're on a Student visa, please note attendance below 90% is reported to UK Visas and "
                      "Immigration." if visa and fault != "visa_hours_ignored" else "")
        return reply(f"Your placement test {test['test_id']} total is {test['total']}/100, which is level {level}. For "
                     f"the course starting 11 January I can offer {chosen['class_id']} {chosen['title']} "
                     f"({chosen['hours_per_week']} hours a week, GBP {chosen['fee_gbp']:.2f} for 10 weeks){why}."
                     f"{attendance} Shall I enrol you?")
    tried = t.got("enrol")
    done = next((v for _, v in tried if isinstance(v, dict)), None)
    if not done and tried and fault == "enrol_timeout_invented":  # (the fault: a reference nobody returned)
        done = {"enrolment_id": "EN-60300", "invoice": {"id": "INV-22100", "due": "2026-12-19"}}
    if not done:
        return _once_more("enrol", [v for _, v in tried], "The student records system isn't answering, so you are "
                          "not enrolled yet - we'll try again on Monday and email you." + _ANYTHING, None,
                          student_ref=student["student_ref"], class_id=chosen["class_id"], level=level)
    return reply(f"Done - you're enrolled in {chosen['class_id']} (enrolment {done['enrolment_id']}); invoice "
                 f"{done['invoice']['id']} is due by {done['invoice']['due']}." + _ANYTHING)


def _lang_refund(t: Talk, student: dict[str, Any]) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    step = t.need(("get_enrolments", {"student_ref": student["student_ref"]}))
    if step:
        return step
    enrolments = t.value("get_enrolments")["enrolments"]
    named = [e for e in enrolments if e["course"].split(" (")[0].split(" Exam")[0] in said]
    if len(enrolments) == 1:
        chosen = enrolments[0]
    elif named:
        chosen = named[0]
    elif fault == "clarify_unasked":
        chosen = enrolments[0]  # (the fault: the first listed taken, never asked)
    else:
        return reply("You have two enrolments: " + " and ".join(
            f"{e['enrolment_id']} {e['course']} (starting {e['start_date']})" for e in enrolments)
            + ". Which course would you like to cancel?")
    start = dt.date.fromisoformat(chosen["start_date"])
    days = (start - LANG_TODAY).days
    weeks = math.ceil(days / 7) if fault == "refund_weeks_wrong" else days // 7  # (the fault: part weeks counted)
    fee = chosen["fee_paid_gbp"]
    refused = any(d["type"] == "visa_refusal" for d in student["documents"]) and fault != "exception_ignored"
    claimed = fault == "visa_exception_claimed"  # (the fault: the student's worry taken for a refusal letter)
    if refused or claimed:
        refund = fee - ADMIN_FEE
        why = (f"as your visa refusal letter ({next(d['ref'] for d in student['documents'] if d['type'] == 'visa_refusal')}) "
               "is on your record, the visa exception applies" if refused else
               "as your visa won't arrive in time, the visa exception applies")
        why += f": the fee less the GBP {ADMIN_FEE:.0f} administration fee"
    elif weeks >= 4:
        refund, why = fee - ADMIN_FEE, f"{weeks} full weeks before the start: the fee less GBP {ADMIN_FEE:.0f}"
    elif weeks >= 2:
        refund, why = round(fee * 0.5, 2), f"{weeks} full weeks before the start: 50% of the fee"
    else:
        refund, why = 0.0, f"only {days} days away - under 2 full weeks: no refund"
    visa_note = ""
    if "visa" in said and not refused and not claimed:
        visa_note = (" I'm sorry about the visa trouble, but the visa exception needs a refusal letter on your record, "
                     "and there isn't one.")
    if refund <= 0:
        return reply(f"Your {chosen['course']} ({chosen['enrolment_id']}) starts on {chosen['start_date']}, "
                     f"{why}.{visa_note} If your visa is refused, upload the refusal letter and we'll refund the fee "
                     f"less GBP {ADMIN_FEE:.0f}." + _ANYTHING)
    if not any("go ahead" in u for u in t.users):
        return reply(f"Your {chosen['course']} ({chosen['enrolment_id']}) starts on {chosen['start_date']}; "
                     f"{why}, so the refund is GBP {refund:.2f} of the GBP {fee:.2f} paid.{visa_note} Shall I cancel "
                     "it and request the refund?")
    done = t.value("request_refund")
    if not done:
        return call("request_refund", enrolment_id=chosen["enrolment_id"], refund_gbp=refund, reason=why)
    return reply(f"Cancelled: refund {done['refund_id']} of GBP {done['refund_gbp']:.2f} is queued and should reach "
                 f"your card by {done['expected_by']}." + _ANYTHING)


# ---- the film festival's submissions team --------------------------------------------------------------------------

# category: (shortest, longest runtime in minutes, entry fee USD)
_CATEGORIES = {"Short": (1, 40, 45), "Student short": (1, 30, 25), "Feature": (61, 180, 95),
               "Documentary feature": (61, 180, 85)}


def intake_rules() -> str:
    rows = [f"| {c} | {lo}-{hi} | {fee} |" for c, (lo, hi, fee) in _CATEGORIES.items()]
    return "\n\n".join([
        "You are the intake desk of the Harbourlight Film Festival submissions team (festival 18-24 February 2027, "
        "Galway).",
        "1. Read the submission with get_submission. A submission whose status is 'withdrawn' and that names "
        "resubmitted_as was resubmitted under that new id: read the new one with get_submission and work only on it.",
        "2. The runtime must be within its category's limits, and the entry fee is the category's:\n\n"
        + _table("| Category | Runtime (minutes) | Entry fee (USD) |", rows),
        "3. A fee waiver is granted only to a student film (student true) whose record holds proof of enrolment (a "
        "document of type student_proof). A waiver request without that proof is refused and the full fee is due.",
        "4. Record the result once with record_intake. If the film is not eligible, answer 'Not eligible:' and why, "
        "and stop. Otherwise hand over to the programmer, saying 'Intake passed:' with the id, title, category, "
        "runtime, declared premiere status and the fee due.",
    ])


PROGRAMMER_RULES = (
    "You are the programmer on the Harbourlight Film Festival submissions team. For the film intake passed, read its "
    "public screenings with get_screenings. The Competition section is only for a world premiere (no public "
    "screening anywhere before the festival) or an international premiere (public screenings only outside Ireland). "
    "A film that has screened publicly in Ireland goes to Panorama, whatever premiere status the submitter declared - "
    "compare the declaration with the screenings list. Record the section once with record_selection, then hand over "
    "to the scheduler saying 'Selected:' with the id, section and runtime.")

SCHEDULER_RULES = (
    "You are the scheduler on the Harbourlight Film Festival submissions team. The slot a screening needs is the "
    "film's runtime plus 15 minutes for the Q&A in Competition, or plus 10 minutes for the introduction in Panorama. "
    "Read the section's free slots with list_slots and book the earliest whose length_min is at least that, once, "
    "with book_screening. Report the screening id, venue and time exactly as book_screening returned them.")

_FILMS: dict[str, dict[str, Any]] = {
    "FS-2304": {"title": "The Salt Road", "category": "Feature", "runtime_min": 88, "premiere": "world",
                "director": "Aoife Brennan", "country": "Ireland", "student": False},
    "FS-2311": {"title": "Low Tide Hours", "category": "Short", "runtime_min": 44, "premiere": "world",
                "director": "Callum Reyes", "country": "UK", "student": False},
    "FS-2318": {"title": "Paper Kites", "category": "Student short", "runtime_min": 24, "premiere": "world",
                "director": "Noor Haddad", "country": "Ireland", "student": True},
    "FS-2210": {"title": "Winter Ferry", "category": "Short", "runtime_min": 47, "premiere": "world",
                "director": "Siobhan Tully", "country": "Ireland", "student": False},
    "FS-2297": {"title": "Winter Ferry", "category": "Short", "runtime_min": 38, "premiere": "world",
                "director": "Siobhan Tully", "country": "Ireland", "student": False},
    "FS-2325": {"title": "Kiln", "category": "Documentary feature", "runtime_min": 78, "premiere": "world",
                "director": "Tomas Ruane", "country": "Ireland", "student": False},
    "FS-2340": {"title": "Brightwater", "category": "Feature", "runtime_min": 131, "premiere": "international",
                "director": "Lena Vogt", "country": "Germany", "student": False},
}
FEST_IDS = {"runtime_over_limit": "FS-2311", "waiver_without_proof": "FS-2318", "resubmission_old_id": "FS-2210",
            "premiere_rule_broken": "FS-2325"}


def get_submission(submission_id: str) -> dict[str, Any]:
    """A festival submission: title, category, runtime in minutes, declared premiere status, director, whether it is
    a student film, fee waiver request, documents on the record, and its status (a withdrawn one names its
    resubmission)."""
    if Now.fault == "submission_wrong_record":  # (the submissions service answered for a transposed id)
        submission_id = "FS-2340"
    if submission_id not in _FILMS:
        raise LookupError(f"no submission {submission_id}")
    film = _FILMS[submission_id]
    out = {"submission_id": submission_id, **{k: v for k, v in film.items() if k != "premiere"},
           "premiere_status": film["premiere"], "status": "received", "submitted": "2026-11-02",
           "fee_waiver_requested": film["student"], "documents": [{"type": "screener_link", "id": "DOC-7011"}]}
    if submission_id == "FS-2210":
        out.update(status="withdrawn", withdrawn="2026-11-20", resubmitted_as="FS-2297",
                   note="director's cut withdrawn; shorter cut resubmitted")
    if submission_id == "FS-2297":
        out["submitted"] = "2026-11-21"
    return out


def record_intake(submission_id: str, eligible: bool, fee_due_usd: float, notes: str) -> dict[str, Any]:
    """Records the intake check of a submission: eligible or not, the entry fee due in USD (0 when waived), notes."""
    return {"intake_id": f"IN-{4400 + int(submission_id[-4:]) % 100}", "submission_id": submission_id,
            "eligible": eligible, "fee_due_usd": fee_due_usd, "status": "recorded"}


def get_screenings(submission_id: str) -> dict[str, Any]:
    """A film's public screenings before the festival, from the festival circuit database: event, city, country,
    date."""
    shown = []
    if submission_id == "FS-2325":
        shown = [{"event": "Cork International Film Festival", "city": "Cork", "country": "Ireland",
                  "date": "2026-10-03", "public": True}]
    if submission_id == "FS-2304":
        shown = [{"event": "industry screening (closed)", "city": "Dublin", "country": "Ireland", "date": "2026-09-12",
                  "public": False}]
    return {"submission_id": submission_id, "screenings": shown, "source": "circuit-db", "as_of": "2026-12-04"}


def record_selection(submission_id: str, section: str) -> dict[str, Any]:
    """Records the section a submission is selected for (Competition or Panorama)."""
    return {"selection_id": "SEL-9113", "submission_id": submission_id, "section": section, "status": "selected"}


def list_slots(section: str) -> dict[str, Any]:
    """The free screening slots of a section: id, venue, start, length in minutes."""
    return {"section": section, "slots": [
        {"slot_id": "SL-0219-1", "venue": "Town Hall Theatre", "start": "2027-02-19T13:00", "length_min": 60},
        {"slot_id": "SL-0219-3", "venue": "Town Hall Theatre", "start": "2027-02-19T18:30", "length_min": 90},
        {"slot_id": "SL-0220-2", "venue": "Pálás Cinema 1", "start": "2027-02-20T15:00", "length_min": 120},
        {"slot_id": "SL-0221-2", "venue": "Pálás Cinema 1", "start": "2027-02-21T20:00", "length_min": 150}]}


def book_screening(submission_id: str, slot_id: str) -> dict[str, Any]:
    """Books a selected film into a screening slot."""
    n = Now.calls["booked"] = Now.calls.get("booked", 0) + 1
    return {"screening_id": f"SCR-{7720 + n}", "submission_id": submission_id, "slot_id": slot_id,
            "status": "scheduled"}


INTAKE_TOOLS = {f.__name__: f for f in (get_submission, record_intake)}
PROGRAMMER_TOOLS = {f.__name__: f for f in (get_screenings, record_selection)}
SCHEDULER_TOOLS = {f.__name__: f for f in (list_slots, book_screening)}
FEST_HISTORY = ["New submission FS-2304 (The Salt Road) - please run intake, programming and scheduling.",
                "Could the team take FS-2304 through intake, selection and a screening slot?"]


def _fest_request(pair: str | None) -> str:
    sid = FEST_IDS.get(pair or "", "FS-2304")
    return f"Please take submission {sid} through intake, programming and scheduling for Harbourlight 2027."


def _handing(offered: set[str], to: str, say: str) -> dict[str, Any]:
    return call(next(n for n in offered if n.startswith(f"transfer_to_{to}")), say)


def _intake(t: Talk, offered: set[str]) -> dict[str, Any]:
    fault = Now.fault
    sid = re.search(r"\bFS-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_submission", {"submission_id": sid}))
    if step:
        return step
    sub = t.value("get_submission")
    if sub.get("resubmitted_as") and fault != "resubmission_old_id":  # (the fault: the withdrawn one worked on)
        step = t.need(("get_submission", {"submission_id": sub["resubmitted_as"]}))
        if step:
            return step
        sub = t.value("get_submission")
    lo, hi, fee = _CATEGORIES[sub["category"]]
    within = lo <= sub["runtime_min"] <= hi or fault == "runtime_over_limit"  # (the fault: the limit never read)
    proof = any(d["type"] == "student_proof" for d in sub["documents"])
    waived = sub["fee_waiver_requested"] and (proof or fault == "waiver_without_proof")  # (the fault: no proof needed)
    due = 0.0 if waived else float(fee)
    waiver_note = ""
    if sub["fee_waiver_requested"]:
        waiver_note = (" Fee waiver granted (student film)." if waived else
                       f" Fee waiver refused: no proof of enrolment on the record, so USD {fee} is due.")
    done = t.value("record_intake")
    if not done:
        notes = (f"{sub['category']} {sub['runtime_min']} min (limit {lo}-{hi})" + waiver_note)
        return call("record_intake", f"Checking {sub['submission_id']}: {sub['category']}, {sub['runtime_min']} min "
                    f"against {lo}-{hi}.", submission_id=sub["submission_id"], eligible=within, fee_due_usd=due,
                    notes=notes.strip())
    if not within:
        return reply(f"Not eligible: {sub['submission_id']} \"{sub['title']}\" runs {sub['runtime_min']} minutes, over "
                     f"the {hi}-minute limit for a {sub['category']}. Recorded as {done['intake_id']}.")
    return _handing(offered, "programmer", f"Intake passed: {sub['submission_id']} \"{sub['title']}\", "
                    f"{sub['category']}, runtime {sub['runtime_min']} min, declared premiere {sub['premiere_status']}, "
                    f"fee due USD {due:.0f} ({done['intake_id']}).{waiver_note}")


def _programmer(t: Talk, offered: set[str]) -> dict[str, Any]:
    intake, sub = t.value("record_intake"), t.value("get_submission")
    if not intake or not sub:
        return reply("I was handed no film from intake - which submission should I programme?")
    sid = intake["submission_id"]
    step = t.need(("get_screenings", {"submission_id": sid}))
    if step:
        return step
    shown = [s for s in t.value("get_screenings")["screenings"] if s["public"]]
    at_home = [s for s in shown if s["country"] == "Ireland"]
    section = "Panorama" if at_home and Now.fault != "premiere_rule_broken" else "Competition"  # (the fault)
    done = t.value("record_selection")
    if not done:
        why = (f"{at_home[0]['event']} screened it publicly on {at_home[0]['date']}, so it is not a world or "
               f"international premiere: Panorama." if at_home and section == "Panorama" else
               f"Declared {sub['premiere_status']} premiere; going to {section}.")
        return call("record_selection", why, submission_id=sid, section=section)
    return _handing(offered, "scheduler", f"Selected: {sid} \"{sub['title']}\", section {done['section']}, runtime "
                    f"{sub['runtime_min']} min ({done['selection_id']}).")


def _scheduler(t: Talk) -> dict[str, Any]:
    chosen, sub = t.value("record_selection"), t.value("get_submission")
    if not chosen or not sub:
        return reply("I have no selected film to schedule - which submission and section is this for?")
    sid, section = chosen["submission_id"], chosen["section"]
    step = t.need(("list_slots", {"section": section}))
    if step:
        return step
    extra = 15 if section == "Competition" else 10
    need = sub["runtime_min"] + (0 if Now.fault == "slot_length_wrong" else extra)  # (the fault: runtime alone)
    slot = next(s for s in t.value("list_slots")["slots"] if s["length_min"] >= need)
    done = [v for _, v in t.got("book_screening") if isinstance(v, dict)]
    if not done or (Now.fault == "repeat_book" and len(done) == 1):
        return call("book_screening", f"{sub['runtime_min']} min + {extra} = {sub['runtime_min'] + extra} min: "
                    f"{slot['slot_id']} ({slot['length_min']} min)." if Now.fault != "slot_length_wrong" else None,
                    submission_id=sid, slot_id=slot["slot_id"])
    return reply(f"Scheduled: {sid} \"{sub['title']}\" ({section}) as {done[-1]['screening_id']}, {slot['venue']}, "
                 f"{slot['start'].replace('T', ' at ')} ({slot['length_min']}-minute slot).")


# ---- the wagon maintenance records agent ---------------------------------------------------------------------------

MI_TO_KM, SHT_TO_T, AXLE_LIMIT_T = 1.609, 0.9072, 22.5
TRAIN_DAY = dt.date(2026, 12, 9)
WAGON_TODAY = dt.date(2026, 12, 5)
# wagon type: (distance in km, months) between inspections
_INTERVALS = {"HTA": (60000, 12), "IKA": (40000, 6), "TEA": (30000, 6)}
_TYPE_NAMES = {"HTA": "coal hopper", "IKA": "intermodal pocket wagon", "TEA": "bogie tank wagon"}
_MILES = "Depot odometers read in miles (unit 'mi'): 1 mi = 1.609 km - convert before comparing with the table."


def wagon_instructions() -> str:
    rows = [f"| {k} ({_TYPE_NAMES[k]}) | {km:,} km | {m} months |" for k, (km, m) in _INTERVALS.items()]
    miles = "Mileages are recorded in kilometres." if Now.fault == "prompt_rewritten" else _MILES  # (an old template)
    return "\n\n".join([
        "You are the wagon maintenance records agent for Caledon Rail Freight. Today is Saturday 5 December 2026. "
        "For each wagon you are asked about, decide whether it is fit to run on the train and date given.",
        "Read the wagon with get_wagon, its defect reports and repair records with search_defects, and its latest axle "
        "weighing with run_sql on the table axle_weighings (wagon_id, weighed_on DATE, axle INTEGER, load DOUBLE, "
        "unit 't' or 'sht').",
        "Rules, all of which must hold for a wagon to be fit:\n"
        "1. Its status is in_service. An out_of_service wagon is never fit, whatever its other records say.\n"
        "2. It is not due for inspection on or before the train date. Intervals by type - whichever comes first, the "
        "distance run since the last inspection or the months since it:\n\n"
        + _table("| Type | Distance | Months |", rows) + f"\n\n   {miles}\n"
        "3. No axle of its latest weighing is over 22.5 tonnes. Weighbridges at Teesport report short tons (unit "
        "'sht'): 1 short ton = 0.9072 t.\n"
        "4. It has no open defect of severity A. A defect report is closed only by a later repair record that lists "
        "it in 'closes'.",
        "Record one assessment per wagon with record_assessment (fit_to_run and every reason), then reply with each "
        "wagon's verdict and reasons. If a tool fails, call it once more; if it fails again, record nothing for that "
        "wagon and say its check is incomplete. Never state a figure that no tool returned.",
    ])


def wagon_model() -> str:
    return OLD_CLAUDE if Now.fault == "old_model_wagon" else CLAUDE


W1, W2 = "33 70 0894 112-4", "33 70 0894 207-2"
_MILES_WORLDS = ("miles_unconverted", "old_model_wagon", "prompt_rewritten", "reasoning_action_mismatch")


def get_wagon(wagon_id: str) -> dict[str, Any]:
    """A wagon's record: type, owner, tare in tonnes, status, last inspection date and the distance run since it."""
    pair = Now.pair or ""
    if Now.fault == "wagon_wrong_record":  # (the records API answered for a transposed number)
        return {"wagon_id": "33 70 0894 121-4", "type": "HTA", "tare_t": 25.5, "status": "in_service",
                "last_inspection": "2026-03-02", "since_inspection": {"distance": 18400, "unit": "km"},
                "depot": "Millerhill"}
    kind, last, distance = "IKA", "2026-07-20", 21300
    if pair in _MILES_WORLDS:
        distance = 25200
    if pair == "interval_wrong_row":
        kind, last, distance = "TEA", "2026-05-30", 12000
    if pair == "date_outside_window":
        last = "2026-06-07"
    if wagon_id == W2:
        kind, last, distance = "HTA", "2026-04-14", 30500
    out = {"wagon_id": wagon_id, "type": kind, "tare_t": 21.9 if kind == "IKA" else 26.0,
           "status": "in_service", "last_inspection": last, "since_inspection": {"distance": distance, "unit": "mi"},
           "depot": "Doncaster Belmont"}
    if pair == "out_of_service_ignored" and wagon_id == W1:
        out.update(status="out_of_service", status_reason="wheelset reprofile pending (flats on axle 3)",
                   status_since="2026-12-02")
    return out


def _documents(wagon_id: str) -> list[dict[str, Any]]:
    pair = Now.pair or ""
    severe = pair in ("superseded_defect_reflagged", "index_stale")
    docs = [
        {"kind": "defect_report", "id": "DR-5521", "wagon_id": wagon_id, "date": "2026-11-18",
         "severity": "A" if severe else "B", "text": "brake rigging pin worn beyond limit, bogie 1"},
        {"kind": "repair", "id": "RP-3310", "wagon_id": wagon_id, "date": "2026-11-28", "closes": ["DR-5521"],
         "text": "brake rigging pin renewed, brake test passed", "depot": "Doncaster Belmont"},
        {"kind": "defect_report", "id": "DR-5590", "wagon_id": wagon_id, "date": "2026-12-01", "severity": "C",
         "text": "placard holder loose"}]
    if pair == "withheld_defect":
        docs.append({"kind": "defect_report", "id": "DR-5604", "wagon_id": wagon_id, "date": "2026-12-03",
                     "severity": "A", "text": "cracked spring hanger, bogie 2"})
    return docs


def search_defects(query: str) -> dict[str, Any]:
    """Searches defect reports and repair records: each hit's kind (defect_report or repair), id, wagon, date,
    severity, text, and for a repair the defect ids it closes."""
    wagon = next((w for w in (W1, W2) if w in query), W1)
    docs = _documents(wagon) if wagon == W1 else [
        {"kind": "defect_report", "id": "DR-5488", "wagon_id": wagon, "date": "2026-10-30", "severity": "C",
         "text": "door seal worn"}]
    if Now.fault == "index_stale":  # (the search index last rebuilt 2026-11-20: the repair not in it)
        return {"query": query, "index_built": "2026-11-20", "results": [d for d in docs if d["date"] <= "2026-11-20"]}
    return {"query": query, "index_built": "2026-12-04", "results": docs}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the wagon records database (table axle_weighings: wagon_id, weighed_on DATE, axle,
    load, unit 't' or 'sht')."""
    import duckdb

    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("wagon records warehouse did not answer within 30s")
    short = Now.pair == "short_tons_unconverted"
    latest = [(1, 24.1, "sht"), (2, 24.6, "sht"), (3, 23.8, "sht"), (4, 24.0, "sht")] if short else \
        [(1, 21.4, "t"), (2, 21.8, "t"), (3, 20.9, "t"), (4, 21.1, "t")]
    db = duckdb.connect()
    db.execute("CREATE TABLE axle_weighings (wagon_id TEXT, weighed_on DATE, axle INTEGER, load DOUBLE, unit TEXT)")
    db.executemany("INSERT INTO axle_weighings VALUES (?, ?, ?, ?, ?)",
                   [(W1, "2026-10-02", a, 23.9, "t") for a in (1, 2, 3, 4)]
                   + [(W1, "2026-11-30" if short else "2026-11-26", a, x, u) for a, x, u in latest]
                   + [(W2, "2026-11-19", a, 22.1, "t") for a in (1, 2, 3, 4)])
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    out = [[x if isinstance(x, (int, float, str)) or x is None else str(x) for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in out], "row_count": len(out)}


def record_assessment(wagon_id: str, train: str, fit_to_run: bool, reasons: list[str]) -> dict[str, Any]:
    """Records a wagon's fitness-to-run assessment for a train: fit or not and every reason."""
    n = Now.calls["assessed"] = Now.calls.get("assessed", 0) + 1
    return {"assessment_id": f"FA-{31870 + n}", "wagon_id": wagon_id, "train": train, "fit_to_run": fit_to_run,
            "status": "recorded"}


WAGON_TOOLS = {f.__name__: f for f in (get_wagon, search_defects, run_sql, record_assessment)}
TRAIN = "6M42 on 9 December 2026"
WAGON_HISTORY = [f"Is wagon {W1} fit to run on {TRAIN}? Record the assessment.",
                 f"Please check wagon {W1} for {TRAIN} and log whether it can run."]


def _wagon_request(pair: str | None) -> str:
    if pair == "premature_termination":
        return f"Are wagons {W1} and {W2} fit to run on {TRAIN}? Record an assessment for each."
    return f"Please assess wagon {W1} for {TRAIN} and record whether it is fit to run."


def _months_after(day: dt.date, months: int) -> dt.date:
    m = day.month - 1 + months
    return day.replace(year=day.year + m // 12, month=m % 12 + 1)


def _wagon_sql(wid: str) -> str:
    return (f"SELECT weighed_on, axle, load, unit FROM axle_weighings WHERE wagon_id = '{wid}' AND weighed_on = "
            f"(SELECT max(weighed_on) FROM axle_weighings WHERE wagon_id = '{wid}') ORDER BY axle")


def _verdict(t: Talk, wid: str, old: bool) -> tuple[dict[str, Any] | None, list[str], str | None]:
    """A wagon's steps still to take (a call), else its reasons against running (none: fit) and a note for the reply;
    (None, [], 'incomplete') when its weighing failed twice."""
    fault = Now.fault
    step = t.need(("get_wagon", {"wagon_id": wid}), ("search_defects", {"query": f"{wid} defects repairs"}))
    if step:
        return step, [], None
    wagon = next(v for a, v in t.got("get_wagon") if a == {"wagon_id": wid} and isinstance(v, dict))
    hits = next(v for a, v in t.got("search_defects") if wid in a.get("query", "") and isinstance(v, dict))["results"]
    sql = _wagon_sql(wid)
    tried = [v for a, v in t.got("run_sql") if a.get("sql") == sql]
    rows = next((v["rows"] for v in tried if isinstance(v, dict)), None)
    if rows is None and tried and fault == "sql_timeout_invented":  # (the fault: loads nobody read)
        rows = [{"weighed_on": "2026-11-26", "axle": a, "load": 21.0, "unit": "t"} for a in (1, 2, 3, 4)]
    if rows is None:
        if len(tried) >= 2:
            return None, [], "incomplete"
        return _once_more("run_sql", tried, "", None, sql=sql), [], None
    reasons = []
    if wagon["status"] != "in_service" and fault != "out_of_service_ignored":  # (the fault: status never read)
        reasons.append(f"status {wagon['status']} ({wagon.get('status_reason', '')})")
    km_limit, months = _INTERVALS["HTA" if fault == "interval_wrong_row" else wagon["type"]]  # (the fault: HTA's row)
    run = wagon["since_inspection"]
    convert = run["unit"] == "mi" and "1 mi = 1.609 km" in t.system and not old and fault != "miles_unconverted"
    km = round(run["distance"] * MI_TO_KM) if convert else run["distance"]
    shown = f"{run['distance']:,} mi = {km:,} km" if convert else f"{km:,} km"
    due_by = _months_after(dt.date.fromisoformat(wagon["last_inspection"]), months)
    against = WAGON_TODAY if fault == "date_outside_window" else TRAIN_DAY  # (the fault: today, not the train date)
    if km >= km_limit:
        reasons.append(f"inspection due: {shown} since {wagon['last_inspection']}, the {wagon['type']} interval is "
                       f"{km_limit:,} km")
    elif due_by <= against:
        reasons.append(f"inspection due: {wagon['last_inspection']} + {months} months = {due_by}, on or before the "
                       f"train on {TRAIN_DAY}")
    loads = [(r["axle"], round(r["load"] * SHT_TO_T, 2) if r["unit"] == "sht" and fault != "short_tons_unconverted"
              else r["load"], r) for r in rows]
    heavy = max(loads, key=lambda x: x[1])
    if heavy[1] > AXLE_LIMIT_T:
        reasons.append(f"axle {heavy[0]} at {heavy[1]} t, over the 22.5 t limit")
    closed = {c for d in hits if d["kind"] == "repair" for c in d["closes"]}
    if fault == "superseded_defect_reflagged":
        closed = set()  # (the fault: the repair that closed it never read)
    open_a = [d for d in hits if d["kind"] == "defect_report" and d["severity"] == "A" and d["id"] not in closed]
    reasons += [f"open severity-A defect {d['id']} ({d['text']})" for d in open_a]
    heavy_row = heavy[2]
    note = (f"{shown} since inspection ({wagon['type']} limit {km_limit:,} km, {months} months - next by {due_by}); "
            f"heaviest axle {heavy_row['load']} {heavy_row['unit']}"
            + (f" = {heavy[1]} t" if heavy_row["unit"] == "sht" and fault != "short_tons_unconverted" else "")
            + (f"; {', '.join(sorted(closed))} closed by repair" if closed else ""))
    return None, reasons, note


def _wagons(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    train = re.search(r"\b6M\d{2} on \d+ December 2026\b", t.users[0]).group(0)
    asked = re.findall(r"\b33 70 \d{4} \d{3}-\d\b", t.users[0])
    told = []
    for n, wid in enumerate(asked):
        if n and fault == "premature_termination":
            break  # (the fault: the second wagon asked about never assessed)
        step, reasons, note = _verdict(t, wid, old)
        if step:
            return step
        if note == "incomplete":
            told.append(f"{wid}: check incomplete - the weighing query failed twice, nothing recorded.")
            continue
        fit = not reasons
        done = [v for a, v in t.got("record_assessment") if a.get("wagon_id") == wid and isinstance(v, dict)]
        if not done:
            recorded_fit = True if fault == "reasoning_action_mismatch" else fit  # (the fault: says unfit, records fit)
            return call("record_assessment", f"{wid}: {'fit to run' if fit else 'NOT fit: ' + '; '.join(reasons)}.",
                        wagon_id=wid, train=train, fit_to_run=recorded_fit, reasons=reasons or [note])
        shown = [r for r in reasons if not (fault == "withheld_defect" and "DR-5604" in r)]  # (the fault)
        told.append(f"{wid}: {'fit to run' if fit else 'not fit to run'} (assessment {done[-1]['assessment_id']}) - "
                    + ("; ".join(shown) if shown else note if fit else "see the assessment's reasons") + ".")
    return reply(f"For {train}: " + " ".join(told))


# ---- the model -----------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for."""
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    return kit.by_role(body, MODEL, lambda t, asked: {
        "placement desk assistant at Linden": lambda: _lang(t, asked == OLD_CLAUDE),
        "intake desk of the Harbourlight": lambda: _intake(t, offered),
        "programmer on the Harbourlight": lambda: _programmer(t, offered),
        "scheduler on the Harbourlight": lambda: _scheduler(t),
        "wagon maintenance records agent": lambda: _wagons(t, asked == OLD_CLAUDE),
    }, waiting=None)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "anthropic-lang":
        return LANG_ASKS.get(pair, LANG_ASKS[None]) if pair else LANG_HISTORY[v % 2]
    if Now.recorder == "agents-fest":
        return _fest_request(pair) if pair else FEST_HISTORY[v % 2]
    return _wagon_request(pair) if pair else WAGON_HISTORY[v % 2]


# ---- recorders -----------------------------------------------------------------------------------------------------


class AnthropicLang(kit.AgentotelRecorder):
    """The placement desk as a plain anthropic SDK messages loop with tool_use over the student's turns
    (kit.anthropic_loop), the tools `@agentotel.tool`s, under agentotel."""

    agent = LANG

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = kit.agentotel_tools(LANG_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, lang_model(), lang_instructions(), task, self.tools, declared(LANG_TOOLS),
                                  student_replies)


class AgentsFest(kit.AgentotelRecorder):
    """The submissions team on the OpenAI Agents SDK (chat completions model): intake -> programmer -> scheduler by
    two handoffs in one Runner.run, under agentotel. The faulty deployment's programmer -> scheduler handoff filter
    keeps the handoff call alone."""

    agent = FEST

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIChatCompletionsModel

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))
        team = [("intake", intake_rules(), INTAKE_TOOLS), ("programmer", PROGRAMMER_RULES, PROGRAMMER_TOOLS),
                ("scheduler", SCHEDULER_RULES, SCHEDULER_TOOLS)]
        return kit.agents_chain(chat, team, task,
                                drop_into="scheduler" if Now.fault == "handoff_context_lost" else None)


class McpWagon(kit.AgentotelRecorder):
    """The wagon records agent as a plain async anthropic SDK messages loop whose tools are an MCP server's (in
    process), each call through the MCP client's session, under agentotel."""

    agent = WAGON

    def body(self, task: str) -> str:
        import asyncio

        return asyncio.run(kit.mcp_anthropic_loop(self.url, wagon_model(), wagon_instructions(), task,
                                                  "caledon-wagon-records", WAGON_TOOLS))


# The wagon records agent as a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools traceloop
# tool spans, through agentotel-collector.
TlWagon = kit.chat_app(kit.TraceloopRecorder, WAGON, WAGON_TOOLS, lambda: MODEL, wagon_instructions)

RECORDERS: dict[str, Any] = {"anthropic-lang": AnthropicLang, "agents-fest": AgentsFest, "mcp-wagon": McpWagon,
                             "tl-wagon": TlWagon}
HISTORY = (0, 1)  # earlier healthy runs: other phrasings of the same requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Anthropic messages and chat completions there; traceloop's content
    captured)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run ------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, asking, nth_llm, tool_step

    placed = after(tool_step("list_classes"))  # the desk's first word after reading the classes: the offer
    refund = after(tool_step("get_enrolments"))  # the desk's first word after reading the enrolments
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        "level_wrong_row": ("model", f"{tau} (a level read from the wrong table row): total 68 is B1 (50-69), "
                                     "list_classes asked for B2", asking("list_classes")),
        "class_full_ignored": ("model", f"{tau} (a rule comparing two fields of a record): B1-GE-M1 offered with "
                                        "enrolled 14 of capacity 14; the twin offers B1-INT-1", placed),
        "visa_hours_ignored": ("model", f"{tau} (a rule comparing two records: the visa type and the class's hours): a "
                                        "Student visa holder offered the 10-hour class, the attendance rule untold",
                               placed),
        "enrol_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: enrol timed out, 'EN-60300' "
                                            "told; the twin tries once more", after(tool_step("enrol"))),
        "old_model_lang": ("product", f"configuration: an old model ({OLD_CLAUDE}) reads the B2 row for a 68",
                           nth_llm(0)),
        "refund_weeks_wrong": ("model", f"{tau} (a date outside the window the rules give): 23 days counted as 4 "
                                        "weeks, GBP 1105 offered where 3 full weeks give 50% (GBP 590)", refund),
        "visa_exception_claimed": ("model", f"{tau} (an exception the user's words do not give): 'I don't think I'll "
                                            "get the visa in time' taken for a refusal letter, GBP 1105 offered 9 "
                                            "days out; the twin refuses", refund),
        "exception_ignored": ("model", f"{tau} (a rule's exception not applied): the visa_refusal letter on the "
                                       "record, 'no refund' said; the twin refunds GBP 1105", refund),
        "clarify_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'cancel my course' with two "
                                     "enrolments; the IELTS one taken; the twin asks which", refund),
        "runtime_over_limit": ("model", f"{tau} (a cap read from a table row against a record's field): a 44-minute "
                                        "Short (limit 40) recorded eligible; the twin refuses",
                               asking("record_intake")),
        "waiver_without_proof": ("model", f"{tau} (a rule needing proof on the record): a student film's waiver "
                                          "granted with no student_proof document; the twin charges USD 25",
                                 asking("record_intake")),
        "resubmission_old_id": ("model", f"{tau} (a record superseded by a later one): FS-2210 withdrawn, resubmitted "
                                         "as FS-2297, intake recorded on the withdrawn 47-minute cut",
                                asking("record_intake")),
        "premiere_rule_broken": ("model", f"{tau} (a rule comparing two records: declared premiere and the "
                                          "screenings list): a film screened in Cork put in Competition",
                                 asking("record_selection")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the "
                                           "scheduler, entered with the handoff call alone, asks which film",
                                 after_handoff(1)),
        "slot_length_wrong": ("model", f"{tau} (a figure by the wrong formula): an 88-minute Competition film booked "
                                       "into a 90-minute slot (runtime alone, without the 15-minute Q&A)",
                              asking("book_screening")),
        "repeat_book": ("model", f"{mast} FM-1.3 Step repetition: book_screening called again after SCR-7721",
                        asking("book_screening", 1)),
        "submission_wrong_record": ("tool", f"{trail} API issues: get_submission(FS-2304) answers FS-2340",
                                    tool_step("get_submission")),
        "miles_unconverted": ("model", f"{tau} (a unit conversion the rules state, skipped): 25,200 mi read as km, an "
                                       "IKA wagon (40,000 km) found fit; the twin converts (40,547 km, due)",
                              asking("record_assessment")),
        "short_tons_unconverted": ("model", f"{tau} (a unit conversion skipped): 24.6 short tons read as tonnes, over "
                                            "22.5; the twin converts (22.32 t) and passes it",
                                   asking("record_assessment")),
        "superseded_defect_reflagged": ("model", f"{tau} (an earlier record superseded by a later one): severity-A "
                                                 "DR-5521 closed by RP-3310, the wagon found unfit",
                                        asking("record_assessment")),
        "interval_wrong_row": ("model", f"{tau} (an interval from the wrong table row): a TEA tank inspected "
                                        "2026-05-30 given HTA's 12 months; its row's 6 months fall due 2026-11-30",
                               asking("record_assessment")),
        "index_stale": ("tool", "retrieval index stale: search_defects served its 2026-11-20 build (no RP-3310); "
                                "DR-5521 open, the wagon found unfit", tool_step("search_defects")),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: run_sql timed out, loads recorded "
                                          "unread; the twin tries once more", after(tool_step("run_sql"))),
        "old_model_wagon": ("product", f"configuration: an old model ({OLD_CLAUDE}) reads miles as km", nth_llm(0)),
        "wagon_wrong_record": ("tool", f"{trail} API issues: get_wagon(33 70 0894 112-4) answers 33 70 0894 121-4 (an "
                                       "HTA hopper)", tool_step("get_wagon")),
        "prompt_rewritten": ("prompt", "instructions changed: the units line re-pasted from an old template "
                                       "('Mileages are recorded in kilometres'); 25,200 mi read as km", nth_llm(0)),
        "out_of_service_ignored": ("model", f"{tau} (a rule over a record's status): an out_of_service wagon "
                                            "(wheelset reprofile pending) recorded fit", asking("record_assessment")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'NOT fit: inspection due' "
                                               "said, fit_to_run true recorded", asking("record_assessment")),
        "withheld_defect": ("model", f"{mast} FM-2.4 Information withholding: open severity-A DR-5604 recorded as a "
                                     "reason, left out of the reply", after(tool_step("record_assessment"))),
        "date_outside_window": ("model", f"{tau} (a date outside the window the rules give): inspection due "
                                         "2026-12-07 compared with today, not the 9 December train",
                                asking("record_assessment")),
        "premature_termination": ("model", f"{mast} FM-3.1 Premature termination: two wagons asked, the second never "
                                           "assessed", after(tool_step("record_assessment"))),
    }
    chosen = {
        "anthropic-lang": ["level_wrong_row", "class_full_ignored", "visa_hours_ignored", "enrol_timeout_invented",
                           "old_model_lang", "refund_weeks_wrong", "visa_exception_claimed", "exception_ignored",
                           "clarify_unasked"],
        "agents-fest": ["runtime_over_limit", "waiver_without_proof", "resubmission_old_id", "premiere_rule_broken",
                        "handoff_context_lost", "slot_length_wrong", "repeat_book", "submission_wrong_record"],
        "mcp-wagon": ["miles_unconverted", "short_tons_unconverted", "superseded_defect_reflagged",
                      "interval_wrong_row", "index_stale", "sql_timeout_invented", "old_model_wagon"],
        "tl-wagon": ["wagon_wrong_record", "prompt_rewritten", "out_of_service_ignored", "reasoning_action_mismatch",
                     "withheld_defect", "date_outside_window", "premature_termination"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main 8fb16fa's detectors; load
# 7.67-9.71): 31 pairs, 4 recorders - diff top-1 31/31, check step+layer 12/31, good runs warned 10/31 (recording
# /tmp/h45-rec-pb3aqflb). The reasons are read from `agentotel check` / `diff` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}

_NOTHING = "nothing found; "
_WITHDRAWN = ("outranked by the false policy_violated at step 4 (the rule on a 'withdrawn' submission read as forbidding "
              "record_intake on a 'received' one); ")
CHECK_MISSED = {
    "model-anthropic-lang-exception-ignored": ("hit blind only by the reasons reader taking the student's 'refused' "
                                               "for a named non-reason (quiet since session 30 - the grant cites the "
                                               "record); nothing reads the refusal letter on the record left "
                                               "unapplied"),
    "model-agents-fest-runtime-over-limit": ("hit blind only by place (policy_violated@4 from 'A submission whose "
                                             "status is 'withdrawn' ...' read as a condition on every record; a scope"
                                             " since session 30); nothing reads 44 minutes against the Short "
                                             "category's limit"),
    "model-agents-fest-waiver-without-proof": ("hit blind only by place (the 'withdrawn' scope read as a condition, "
                                               "policy_violated@4); nothing reads the fee waived with no student "
                                               "proof on the record"),
    "model-anthropic-lang-level-wrong-row": _NOTHING + "list_classes(level B2) for get_placement_test's total 68, which "
                                            "the instructions' table puts in the 50-69 row (B1)",
    "model-anthropic-lang-class-full-ignored": _NOTHING + "B1-GE-M1 offered and enrolled while list_classes gives it "
                                               "enrolled 14 = capacity 14 ('enrolled must be below capacity')",
    "model-anthropic-lang-visa-hours-ignored": _NOTHING + "a 10-hour class for a record whose visa.type is 'Student "
                                               "visa' ('only a class of at least 15 hours per week'), the 90% "
                                               "attendance rule never told",
    "model-anthropic-lang-refund-weeks-wrong": _NOTHING + "GBP 1105 (the 4-weeks row) for a start 23 days away - 3 "
                                               "full weeks, the 50% row (GBP 590)",
    "model-anthropic-lang-visa-exception-claimed": _NOTHING + "the visa exception granted on 'I don't think I'll get "
                                                   "the visa in time' with no visa_refusal document in find_student's "
                                                   "documents (the rules: the student's telling is not a letter)",
    "model-agents-fest-resubmission-old-id": "found a step late (input_ignored at the answer, step 6): record_intake "
                                             "at step 4 on FS-2210, which get_submission marks withdrawn with "
                                             "resubmitted_as FS-2297, is where the rule was broken",
    "model-agents-fest-premiere-rule-broken": _WITHDRAWN + "nothing at record_selection(Competition) for a film "
                                              "get_screenings shows screened publicly in Cork, Ireland",
    "model-agents-fest-slot-length-wrong": _WITHDRAWN + "nothing at book_screening of a 90-minute slot for an 88-minute "
                                           "Competition film that needs 88 + 15 = 103",
    "model-mcp-wagon-short-tons-unconverted": _NOTHING + "run_sql rows with unit 'sht' compared as tonnes (24.6 > "
                                              "22.5, wagon unfit); the rules' 0.9072 gives 22.32 t, within",
    "model-mcp-wagon-superseded-defect-reflagged": _NOTHING + "DR-5521 called open although search_defects holds "
                                                   "RP-3310 (2026-11-28) listing it in 'closes'",
    "model-mcp-wagon-interval-wrong-row": _NOTHING + "a TEA wagon given the HTA row's 12 months (next by 2027-05-30); "
                                          "its own row's 6 months from 2026-05-30 fall due before the train",
    "model-mcp-wagon-sql-timeout-invented": "found at its step, layered tool (tool_error_ignored): the loads the "
                                            "model then recorded (21.0 t) are in no tool result - a model-layer "
                                            "invention after a failure",
    "model-tl-wagon-out-of-service-ignored": _NOTHING + "fit_to_run true recorded for a wagon get_wagon gives status "
                                             "out_of_service ('never fit, whatever its other records say')",
    "model-tl-wagon-reasoning-action-mismatch": _NOTHING + "the call's words 'NOT fit: inspection due' and the same "
                                                "call's fit_to_run true",
    "model-tl-wagon-withheld-defect": _NOTHING + "record_assessment's reason 'open severity-A defect DR-5604' left "
                                      "out of the reply that says 'not fit'",
    "model-tl-wagon-date-outside-window": _NOTHING + "'next by 2026-12-07' and 'fit to run' for a train on 9 December "
                                          "('due on or before the train date')",
    "model-tl-wagon-premature-termination": _NOTHING + "two wagons asked ('Record an assessment for each'), one "
                                            "get_wagon / record_assessment, the reply ends on the first",
}
FALSE_ALARMS: dict[str, str] = {}

POLICIES = {
    "anthropic-lang": {"required_before": {"enrol": ["find_student", "get_placement_test", "list_classes"],
                                           "request_refund": ["find_student", "get_enrolments"]}},
    "agents-fest": {"required_before": {"record_intake": ["get_submission"], "record_selection": ["get_screenings"],
                                        "book_screening": ["list_slots"]}},
    "mcp-wagon": {"required_before": {"record_assessment": ["get_wagon", "search_defects", "run_sql"]}},
    "tl-wagon": {"required_before": {"record_assessment": ["get_wagon", "search_defects", "run_sql"]}},
}

HELDOUT = kit.HeldOut(__file__, "h45-rec-", pairs, produce, kit.through_collector("tl-wagon"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
