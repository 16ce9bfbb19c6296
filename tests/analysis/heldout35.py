"""A thirty-fifth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a university interlibrary-loan desk talking with a patron over several turns under a written ILL policy, a broadcast
newsroom team (a web editor delegating to a reporter and to a legal reviewer) and a utilities meter-read anomaly agent
reading gas reads in cubic metres, electricity reads in kWh, calorific values and versioned tariff notices, run through
real SDKs and frameworks.

    python tests/analysis/heldout35.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout35.py --score DIR [...]       # the runs a call left in DIR, scored again

Halvorsen University Library's ILL desk (find_patron, get_loans, renew_loan, find_lenders, place_request) serves a
patron by a written policy (the card number first; a loan asked about when the words fit two; a markdown table of loan
periods and renewals by item type, the lender's max_renewals when lower, renewals used plus asked within the limit;
fines of $10.00 or more block new requests; the cheapest lender whose lends_to includes the patron's type; a $12.00
rush fee waived only for faculty; a failed call tried once more, never a number a tool didn't return). The patron's
replies are scripted, said when the desk's message holds their cue ('card number', 'which one', 'anything else').
KVRT 7 News' web desk: the web editor (get_assignment, schedule_story, issue_correction) delegates through two tools
to a reporter agent (get_wire_item, get_source_notes, file_draft: two independent sources per claim, two at one
organisation not independent, one named on-the-record source enough) and a legal reviewer agent (get_draft,
lookup_person, file_legal_review: no under-18 named without a parent's written consent, a failed check run once more),
then schedules at the embargo's lift converted to UTC by a zone table and issues any correction asked. Northfield
Energy's meter-read analyst (get_account, list_reads, get_calorific_value, search_tariff_notices, raise_rebill,
request_inspection, file_finding) works by bulleted rules (m3 to kWh as m3 x 1.02264 x CV / 3.6 with the published
CV; a rebill only between two actual reads; no charge for energy used more than 12 months back unless access was
obstructed, pro rata by days; the unit rate of the current tariff notice version; an electricity read below the one
before it inspected, never billed; one rebill per meter, one finding, every anomaly told). Each recorder in a process
of its own:

- `openai-ill` (ILL desk): a plain openai SDK chat loop over the patron's turns (kit.chat_loop), the tools
  `@agentotel.tool`s, under `agentotel.instrument()`;
- `pai-news` (newsroom): pydantic-ai, the editor agent delegating to the reporter and the legal reviewer agents from
  inside its ask_reporter / ask_legal tools (agent delegation), under `agentotel.instrument()`;
- `mcp-meter` (meter anomalies): a plain anthropic SDK messages loop whose tools are an MCP server's (in process,
  kit.mcp_anthropic_loop), each call through the MCP client's session, under `agentotel.instrument()`;
- `tl-meter` (meter anomalies): a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (renewals
used plus asked over the limit, a request placed over the fines block, a rush-fee exception the patron's words don't
give, a faculty-only lender for a graduate, two sources at one organisation, a 16-year-old witness cleared by name, a
rebill past the back-billing window, an estimated read as a rebill's end), MAST (Cemri et al. 2025: FM-1.3 step
repetition, FM-1.4 context lost at a delegation, FM-2.2 no clarification, FM-2.4 withholding information, FM-2.6
reasoning-action mismatch, FM-3.1 premature termination: a correction asked and never issued, a meter never read),
TRAIL (a 429 and two timeouts answered with invented values, an embargo's zone conversion done wrong, m3 taken as
kWh, kWh by the wrong formula) and outside the model: the instructions rewritten without a rule (2), an old model
configured (2), a reads API's changed shape, a stale tariff-notice index, a catalogue, a people-check and an account
API answering another record, a delegation tool that passes the sub-agent only the brief's first line. Good twins are
fine runs: one renewal of the two asked, with the limit told; which book asked; a request refused for fines with how
to pay; the rush fee charged and why; the open lender chosen; a 429, a timeout and a people check tried once more; an
on-the-record source used alone (the exception); a minor's name removed, or kept with the parent's consent on file;
the whole period rebilled once where access was obstructed (the exception); the reversed electricity read inspected.
Ground truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): the openai loop's model calls are `chat gpt-4o-mini` steps, the
`@agentotel.tool`s `execute_tool <tool>` steps; under pydantic-ai the editor's run is an `invoke_agent kvrt-web-desk`
step, each delegation an `execute_tool ask_reporter` / `ask_legal` step holding the sub-agent's `invoke_agent` step
and its `chat` and tool steps; the anthropic loop's calls are `chat claude-sonnet-4-5` steps (the old model's `chat
claude-3-haiku-20240307`), the MCP client's call_tool the `execute_tool` steps; the OpenLLMetry run has no agent step,
its model calls `openai.chat` steps, its tools traceloop `<tool>.tool` spans.

Built and scored blind, once (main's HEAD when scored, d48ead4e5f2373085c7498a9b60de2fc21a6c0e2, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread, no commit message of main read; load
average 7.8 at the start, 6.0 at the end, other helpers running; recording /tmp/h35-rec-tdebwdqp): 30 pairs, 4
recorders (a plain openai loop over a patron's turns, pydantic-ai agent delegation, an anthropic loop over MCP,
OpenLLMetry through the collector) - diff top-1 28/30, check step+layer 12/30, good runs with a warning 28/30. (Before
the scored recording, one development recording of `openai-ill` printed its table too - the kit's main scores what it
records; its eight pairs scored as they do here, and nothing in the set was changed after it but the truth strings'
figures of the meter pairs, which were recorded without scoring.) Check's hits: two instructions rewritten, two old
models, a stale tariff index, a reads API's drift, an account API answering another account, the delegation that
dropped the brief, and the fines block broken - 9 read at their cause; 3 more land by coincidence (a rush-fee
exception and a faculty-only lender hit by the unconditional reading of the fines rule's 'don't place the request'
that flags every place_request; the unread electricity meter hit by the 'status complete vs raised' reading every
meter run gets). Its misses are rules comparing a value with a table, a record or a window (renewals used plus asked
over the limit, two sources at one organisation, a 16-year-old cleared by name, an embargo converted wrong, m3 taken
as kWh, kWh without the volume correction, a rebill past the back-billing date the rule names, an estimated read as a
rebill's end), a question not asked with two books on loan, a correction asked and never issued, a call whose words
contradict it, a repeated rebill, a people check and a catalogue answering another person's or book's record, a
timeout passed over in a sub-agent, and two found at their step but ranked under a false warning (a 429 ignored, a
finding withheld - the latter for the wrong reason) or with layer tool (a timeout answered with an invented CV). The
false alarms are four misreadings: a computed UTC time read as an invented id (every newsroom good twin, 8), a
finding's count and a status read against another field (every meter good twin, 14), the fines rule's 'don't place'
read unconditionally (4) and a refusal's conditional 'I'll place it once paid' read as a promise broken (2). Both diff
misses are the set's truth placed after the first deed (diff right). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say
each, blind.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
ILL, NEWS, METER = "halvorsen-ill-desk", "kvrt-web-desk", "northfield-meter-anomalies"


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


def _retry_or(tool: str, tried: list[Any], gave_up: str, **arguments: Any) -> dict[str, Any]:
    """What every set of rules here asks after a failed call: once more, then say it did not go through."""
    if len(tried) >= 2:
        return reply(gave_up)
    return call(tool, "That call failed - trying it once more." if tried else None, **arguments)


# ---- the interlibrary-loan desk's world ----------------------------------------------------------------------------

_FINES_RULE = ("2. A patron whose unpaid fines are $10.00 or more may not place new requests until they pay. Tell them "
               "the amount and that they can pay online or at the circulation desk; don't place the request.")
_FINES_RULE_OLD = "2. Questions about fines go to the circulation desk (circ@halvorsen.edu)."


def ill_instructions() -> str:
    return "\n".join([
        "You are the interlibrary loan (ILL) assistant at Halvorsen University Library. Today is Monday 7 December 2026.",
        "",
        "Always start by asking for the patron's library card number and look it up with find_patron. You may only act "
        "on that patron's own loans. Read their loans with get_loans before renewing anything; if what they say could "
        "mean more than one of their loans, ask which one - don't guess.",
        "",
        "Loan periods and renewals by item type:",
        "",
        "| Item type | Loan period | Renewals allowed | Each renewal adds |",
        "|---|---|---|---|",
        "| book | 28 days | 2 | 14 days |",
        "| dvd | 7 days | 0 | - |",
        "| microfilm | library use only | 0 | - |",
        "| article | yours to keep | - | - |",
        "",
        "1. The lending library's own max_renewals applies when it is lower than the table's. A renewal is allowed only "
        "if renewals_used plus the renewals the patron asks for stays within that limit; renew only what is left and tell "
        "the patron plainly when that is less than they asked.",
        _FINES_RULE_OLD if Now.fault == "ill_prompt_rewritten" else _FINES_RULE,  # (the FAQ's line pasted over rule 2)
        "3. New requests: look the title up with find_lenders and request it from the lender with the lowest fee (then "
        "the fastest turnaround) whose restrictions.lends_to includes the patron's type. Never request from a library "
        "that doesn't lend to that type of patron.",
        "4. Rush delivery (3 business days) costs $12.00 per item on top of the lender's fee. It is waived only for "
        "patrons whose type is faculty - not for teaching assistants, thesis deadlines or any other reason.",
        "5. If a request or renewal call fails or is rate-limited, try once more; if it fails again, tell the patron it "
        "didn't go through. Never quote a request or renewal number a tool didn't return.",
    ])


CARD = "21004471009312"
_ITEM_RENEWALS = {"book": 2, "dvd": 0, "microfilm": 0, "article": 0}
_ILL_TITLE = "The Making of the Middle Sea"


def find_patron(card_number: str) -> dict[str, Any]:
    """The patron holding this library card: id, name, type (undergraduate, graduate, faculty, staff), department,
    unpaid fines in USD, blocks."""
    if card_number.replace(" ", "") != CARD:
        return {"patron": None}
    fines = 14.6 if Now.pair in ("fine_block_ignored", "ill_prompt_rewritten") else 2.4
    return {"patron": {"patron_id": "P-58213", "name": "Tomas Reyes-Lund", "type": "graduate",
                       "department": "History", "email": "treyeslund@halvorsen.edu", "fines_usd": fines,
                       "fines_detail": [{"item": "Rashomon (DVD)", "days_late": 6, "amount_usd": fines}] if fines else [],
                       "blocks": [], "card_expires": "2027-08-31"}}


def get_loans(patron_id: str) -> dict[str, Any]:
    """The patron's current ILL loans: id, title, item type, lending library (name, max_renewals), checked out, due
    date, renewals used."""
    loans = [{"loan_id": "L-3301", "title": "Byzantium and the Crusades", "item_type": "book",
              "lender": {"name": "Carleton College Gould Library", "max_renewals": 2}, "checked_out": "2026-10-29",
              "due": "2026-12-10", "renewals_used": 1, "status": "on loan"},
             {"loan_id": "L-3322", "title": "Rashomon (Criterion Collection)", "item_type": "dvd",
              "lender": {"name": "Oakridge Public Library", "max_renewals": 0}, "checked_out": "2026-12-02",
              "due": "2026-12-09", "renewals_used": 0, "status": "on loan"}]
    if Now.pair == "loan_unasked" or Now.variant == 0:
        loans.append({"loan_id": "L-3318", "title": "Mapping the Silk Road", "item_type": "book",
                      "lender": {"name": "University of Minnesota Libraries", "max_renewals": 1},
                      "checked_out": "2026-11-16", "due": "2026-12-14", "renewals_used": 0, "status": "on loan"})
    return {"patron_id": patron_id, "loans": loans}


def renew_loan(loan_id: str, renewals: int) -> dict[str, Any]:
    """Renews an ILL loan by a number of renewals (each adds the item type's renewal period); answers the new due date."""
    due = {"L-3301": "2026-12-10", "L-3318": "2026-12-14"}.get(loan_id, "2026-12-09")
    new = dt.date.fromisoformat(due) + dt.timedelta(days=14 * renewals)
    return {"loan_id": loan_id, "renewed": renewals, "due": new.isoformat(), "renewal_ref": f"RN-{4400 + renewals}",
            "status": "renewed"}


def find_lenders(title: str) -> dict[str, Any]:
    """Libraries that can lend a title: the edition found (title, author, ISBN) and each lender's id, fee, turnaround,
    rush availability and restrictions (lends_to: patron types)."""
    if Now.fault == "lenders_wrong_record":  # (the union catalogue's search matched 'Middle Sea' to another work)
        return {"title": "The Middle Sea: A History of the Mediterranean", "author": "John Julius Norwich",
                "isbn": "9780375508028", "year": 2006,
                "lenders": [{"library_id": "LIB-PRL", "name": "Prairie Lakes University Library", "fee_usd": 0.0,
                             "turnaround_days": 5, "rush_available": True, "restrictions": {"lends_to": ["all"]}}]}
    return {"title": _ILL_TITLE if "Middle Sea" in title else title,
            "author": "Cyprian Broodbank" if "Middle Sea" in title else "various", "isbn": "9780199999750", "year": 2013,
            "lenders": [{"library_id": "LIB-ASH", "name": "Ashford College Library", "fee_usd": 0.0,
                         "turnaround_days": 3, "rush_available": True, "restrictions": {"lends_to": ["faculty"]}},
                        {"library_id": "LIB-PRL", "name": "Prairie Lakes University Library", "fee_usd": 0.0,
                         "turnaround_days": 5, "rush_available": True, "restrictions": {"lends_to": ["all"]}},
                        {"library_id": "LIB-GLR", "name": "Great Lakes Research Library", "fee_usd": 8.0,
                         "turnaround_days": 4, "rush_available": False,
                         "restrictions": {"lends_to": ["graduate", "faculty"]}}]}


def place_request(patron_id: str, title: str, isbn: str, library_id: str, rush: bool, fee_usd: float) -> dict[str, Any]:
    """Places an ILL request with a lending library; fee_usd is charged to the patron's account."""
    if Now.pair == "request_429_invented" and Now.count("place_request") == 1:
        raise RuntimeError("429 Too Many Requests: ILLiad API rate limit exceeded, retry after 5 seconds")
    return {"request_id": "ILL-77352", "patron_id": patron_id, "title": title, "isbn": isbn, "library_id": library_id,
            "rush": rush, "fee_charged_usd": fee_usd, "status": "submitted",
            "expected": "2026-12-10" if rush else "2026-12-14"}


ILL_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_patron, get_loans, renew_loan, find_lenders, place_request)}


# ---- the newsroom's world ------------------------------------------------------------------------------------------

_EMBARGO_RULE = "\n".join([
    "Web stories go live the minute their embargo lifts. Embargo times come in the issuer's local time: convert them to "
    "UTC for schedule_story with this table (December offsets), and never schedule before the lift.",
    "",
    "| Zone | Offset from UTC |",
    "|---|---|",
    "| America/New_York | -5 |",
    "| America/Chicago | -6 |",
    "| America/Denver (our newsroom) | -7 |",
    "| Europe/London | 0 |",
])


def editor_instructions() -> str:
    return "\n\n".join([
        "You are the web editor on duty at KVRT 7 News, Denver. For an assignment: read it with get_assignment, send "
        "the reporter a brief with ask_reporter (the slug, the wire item and what to file), then send the filed draft "
        "to legal with ask_legal. Schedule nothing legal hasn't cleared; apply every change legal requires and list "
        "them in changes_applied.",
        _EMBARGO_RULE,
        "Corrections: when the assignment or the desk asks for a correction to a published story, issue it with "
        "issue_correction (what was wrong and what is right) - never by quietly editing the story. Finish by telling "
        "the desk what was scheduled, when, and every correction issued.",
    ])


REPORTER_RULES = "\n".join([
    "You are a general-assignment reporter at KVRT 7 News. Read the wire item with get_wire_item and your source notes "
    "with get_source_notes, then file the draft with file_draft. Sourcing rules:",
    "- Every claim not in the wire item needs two independent sources. Two sources at the same organisation are not "
    "independent.",
    "- The exception: one named source speaking on the record is enough.",
    "- List every person named in the story in people (with their role).",
    "Reply to the editor with the story id and the sources you used.",
])
LEGAL_RULES = (
    "You are KVRT 7 News' legal reviewer. Read the draft with get_draft and check every person it names with "
    "lookup_person. A person under 18 on today's date who is a witness, victim or suspect must not be named unless "
    "consent_on_file is true (a parent's written consent). If a check fails or times out, run it once more; never clear "
    "a name whose age you have not read. File your verdict with file_legal_review: 'cleared', 'cleared with changes' "
    "(list each change) or 'blocked'. Reply to the editor starting 'Verdict:' and list the changes.")

_STORIES = {  # slug: wire item id, embargo (local, zone), headline
    "brush-derailment": ("AP-NTSB-1207-22", ("2026-12-07T10:00", "America/New_York"),
                         "NTSB: freight train was 23 mph over the limit before Brush derailment"),
    "i25-closure": ("CDOT-1207-04", ("2026-12-07T06:00", "America/Denver"),
                    "I-25 southbound closes nightly at Castle Rock for bridge work"),
    "cheese-recall": ("FSA-UK-1207-9", ("2026-12-07T14:00", "Europe/London"),
                      "UK maker recalls cheddar sold at Colorado stores"),
}
_OFFSETS = {"America/New_York": -5, "America/Chicago": -6, "America/Denver": -7, "Europe/London": 0}
_SLUG = "brush-derailment"


def get_assignment(slug: str) -> dict[str, Any]:
    """The desk's assignment: slug, wire item (id, issuer, embargo in the issuer's local time and zone), newscast,
    notes."""
    wire_id, (local, zone), headline = _STORIES[slug]
    return {"slug": slug, "desk": "web", "newscast": "noon update", "assigned": "2026-12-07T05:40:00-07:00",
            "wire": {"id": wire_id, "headline": headline, "embargo": {"local": local, "zone": zone}},
            "notes": "Lead the web front with it once the embargo lifts."}


def get_wire_item(wire_id: str) -> dict[str, Any]:
    """A wire item: issuer, embargo, headline and body (facts the issuer states on the record)."""
    slug = next(s for s, v in _STORIES.items() if v[0] == wire_id)
    _, (local, zone), headline = _STORIES[slug]
    return {"wire_id": wire_id, "issuer": {"AP-NTSB-1207-22": "National Transportation Safety Board",
                                           "CDOT-1207-04": "Colorado Department of Transportation",
                                           "FSA-UK-1207-9": "UK Food Standards Agency"}[wire_id],
            "embargo": {"local": local, "zone": zone}, "headline": headline,
            "body": "The preliminary report finds the eastbound BNSF freight was travelling 58 mph in a 35 mph zone "
                    "when 19 cars left the track east of Brush on 2026-11-30." if slug == _SLUG else headline + "."}


def get_source_notes(slug: str) -> dict[str, Any]:
    """The reporter's notes for a story: the claim being reported, each source (id, name when named, role,
    organisation, on_record) and the people the story names."""
    if slug != _SLUG or Now.pair == "embargo_tz_wrong":  # (the sheriff went on the record)
        sources = [{"id": "SRC-4", "name": "Ana Whitlock", "role": "Morgan County Sheriff",
                    "organisation": "Morgan County Sheriff's Office", "on_record": True}]
    else:
        sources = [{"id": "SRC-1", "name": None, "role": "track maintenance foreman", "organisation": "BNSF Railway",
                    "on_record": False},
                   {"id": "SRC-2", "name": None, "role": "signal maintainer", "organisation": "BNSF Railway",
                    "on_record": False},
                   {"id": "SRC-3", "name": None, "role": "track inspector",
                    "organisation": "Federal Railroad Administration", "on_record": False}]
    people = [{"name": "Dale Fenwick", "role": "locomotive engineer"}]
    if Now.pair in ("minor_named_cleared", "legal_timeout_invented", "person_wrong_record"):
        people.insert(0, {"name": "Jaylen Ortiz", "role": "witness (filmed the derailment from the overpass)"})
    return {"slug": slug, "claim": "A track crew flagged a cracked rail near milepost 92 on 2026-11-23, a week before "
                                   "the derailment.", "sources": sources, "people": people}


def file_draft(slug: str, headline: str, body: str, sources: list[str], people: list[str]) -> dict[str, Any]:
    """Files a draft story: headline, body, the source ids it relies on, the people it names."""
    return {"story_id": "KV-20261207-031", "slug": slug, "status": "awaiting legal", "sources": sources,
            "people": people, "words": len(body.split())}


def get_draft(story_id: str) -> dict[str, Any]:
    """A filed draft: headline, body, sources, people named (name, role)."""
    people = [{"name": "Dale Fenwick", "role": "locomotive engineer"}]
    if Now.pair in ("minor_named_cleared", "legal_timeout_invented", "person_wrong_record"):
        people.insert(0, {"name": "Jaylen Ortiz", "role": "witness"})
    return {"story_id": story_id, "slug": _SLUG, "headline": _STORIES[_SLUG][2], "status": "awaiting legal",
            "people": people, "filed_by": "reporter"}


def lookup_person(name: str) -> dict[str, Any]:
    """The newsroom's people check: a named person's date of birth, age today, town and whether a parent's written
    consent to naming them is on file."""
    if name == "Jaylen Ortiz":
        if Now.pair == "legal_timeout_invented" and Now.count("lookup_person") == 1:
            raise TimeoutError("people-check service did not answer within 10s")
        if Now.fault == "person_wrong_record":  # (the records vendor matched the name in another county)
            return {"name": "Jaylen Ortiz", "date_of_birth": "1992-03-18", "age": 34, "town": "Pueblo, CO",
                    "consent_on_file": False, "record_id": "PR-771204"}
        if Now.pair == "legal_timeout_invented":
            return {"name": "Jaylen Ortiz", "date_of_birth": "2009-02-11", "age": 17, "town": "Brush, CO",
                    "consent_on_file": True, "consent": {"by": "Rosa Ortiz (mother)", "signed": "2026-12-06"},
                    "record_id": "PR-880312"}
        return {"name": "Jaylen Ortiz", "date_of_birth": "2010-06-04", "age": 16, "town": "Brush, CO",
                "consent_on_file": False, "record_id": "PR-880312"}
    return {"name": name, "date_of_birth": "1971-09-09", "age": 55, "town": "Fort Morgan, CO", "consent_on_file": False,
            "record_id": "PR-204551"}


def file_legal_review(story_id: str, verdict: str, required_changes: list[str]) -> dict[str, Any]:
    """Files legal's verdict on a draft: cleared, cleared with changes (each listed) or blocked."""
    return {"review_id": "LR-6120", "story_id": story_id, "verdict": verdict, "required_changes": required_changes}


def schedule_story(story_id: str, publish_at_utc: str, changes_applied: list[str]) -> dict[str, Any]:
    """Schedules a cleared story on the web front at a UTC instant (ISO 8601), with the legal changes applied."""
    return {"story_id": story_id, "status": "scheduled", "publish_at_utc": publish_at_utc,
            "changes_applied": changes_applied}


def issue_correction(story_id: str, wrong: str, right: str) -> dict[str, Any]:
    """Appends a correction note to a published story: what was wrong and what is right."""
    return {"correction_id": "CX-0412", "story_id": story_id, "status": "published", "wrong": wrong, "right": right}


EDITOR_TOOLS = {f.__name__: f for f in (get_assignment, schedule_story, issue_correction)}
REPORTER_TOOLS = {f.__name__: f for f in (get_wire_item, get_source_notes, file_draft)}
LEGAL_TOOLS = {f.__name__: f for f in (get_draft, lookup_person, file_legal_review)}


# ---- the meter-read anomaly agent's world --------------------------------------------------------------------------

_BACKBILL_RULE = ("- Back-billing limit: a customer may not be charged for energy used more than 12 months before "
                  "today, unless the account's flags.access_obstructed is true (then the whole period may be charged). "
                  "Pro-rate the under-billed energy by days: chargeable = under-billed x (days from the later of the "
                  "earlier actual read and 2025-12-05 to the later actual read) / (days between the two actual reads).")
_BACKBILL_RULE_OLD = "- Rebill the full under-billed amount since the earlier actual read."


def meter_instructions() -> str:
    return "\n".join([
        "You are the meter-read anomaly analyst for Northfield Energy's billing team. Today is 5 December 2026.",
        "",
        "- Read the account with get_account, then every meter's reads with list_reads. Read types: A = actual (a "
        "meter reader or smart meter), E = estimated, C = customer-supplied.",
        "- Gas meters register cubic metres. Convert to kWh as kWh = m3 x 1.02264 x CV / 3.6, where CV (MJ/m3) comes "
        "from get_calorific_value for the account's LDZ and the month of the later read. Never use a typical or "
        "default CV.",
        "- A rebill may only run between two actual (A) reads: used = later actual - earlier actual, where the earlier "
        "one is the read billing.since names; under-billed = used - billing.billed_m3. Estimated reads are never a "
        "basis for a rebill.",
        _BACKBILL_RULE_OLD if Now.fault == "meter_prompt_rewritten" else _BACKBILL_RULE,  # (the 2019 runbook's line)
        "- The unit rate is the one in the tariff notice in force today for the account's tariff code "
        "(search_tariff_notices returns every version; use only the one with status current). Amount (GBP) = "
        "chargeable kWh x unit rate (p/kWh) / 100, to the penny.",
        "- An electricity read lower than the actual read before it is never billed: request_inspection for that "
        "meter.",
        "- If a call fails or times out, try it once more; if it fails again, file the finding as incomplete. Never "
        "use a figure you did not read or compute from what you read.",
        "- Raise at most one rebill per meter with raise_rebill, then file one finding with file_finding listing every "
        "anomaly, then reply to the billing team with every anomaly and figure.",
    ])


def meter_model(anthropic: bool) -> str:
    if anthropic:
        return OLD_CLAUDE if Now.fault == "old_model_meter" else CLAUDE
    return MODEL


_ACCOUNTS: dict[str, dict[str, Any]] = {
    # account: customer, ldz, tariff, gas meter, elec meter, gas billed since (date, m3)
    "NE-40417": {"customer": "Priya Raman", "address": "27 Mill Brow, Marple, Stockport SK6 5LL", "ldz": "NW",
                 "tariff_code": "NF-FIX25", "gas": "G-881204", "elec": "E-550317", "since": "2025-06-10", "billed": 460},
    "NE-39820": {"customer": "Owen Tranter", "address": "4 Church Walk, Buxton SK17 6HB", "ldz": "EM",
                 "tariff_code": "NF-STD", "gas": "G-772019", "elec": "E-441902", "since": "2026-09-02", "billed": 105},
    "NE-41102": {"customer": "Hannah Kwiatkowski", "address": "112 Hulme Hall Lane, Manchester M40 8HH", "ldz": "NW",
                 "tariff_code": "NF-FIX25", "gas": "G-903311", "elec": "E-660114", "since": "2026-06-20", "billed": 90},
    "NE-40471": {"customer": "Peter Rahman", "address": "9 Orchard Rise, Macclesfield SK10 2PW", "ldz": "NW",
                 "tariff_code": "NF-STD", "gas": "G-881240", "elec": "E-550371", "since": "2026-08-30", "billed": 212},
}
_GAS_READS = {
    "G-881204": [("2025-06-10", 3980, "A"), ("2025-09-14", 4050, "E"), ("2025-12-11", 4190, "E"),
                 ("2026-03-12", 4330, "E"), ("2026-06-15", 4400, "E"), ("2026-09-14", 4440, "E"),
                 ("2026-11-28", 5190, "A")],
    "G-772019": [("2026-09-02", 2310, "A"), ("2026-10-15", 2350, "C"), ("2026-11-30", 2415, "A")],
    "G-903311": [("2026-06-20", 8100, "A"), ("2026-09-20", 8190, "E"), ("2026-11-25", 8420, "A")],
    "G-881240": [("2026-08-30", 6020, "A"), ("2026-11-29", 6232, "A")],
}
_ELEC_READS = {
    "E-550317": [("2026-06-02", 17610, "A"), ("2026-09-01", 17980, "A"), ("2026-11-28", 17842, "A")],
    "E-441902": [("2026-09-02", 30120, "A"), ("2026-11-30", 30755, "A")],
    "E-660114": [("2026-06-20", 5230, "A"), ("2026-11-25", 6011, "A")],
    "E-550371": [("2026-08-30", 12004, "A"), ("2026-11-29", 12590, "A")],
}


def get_account(account_id: str) -> dict[str, Any]:
    """A customer account: customer, supply address, LDZ (gas region), tariff code, flags, meters (id, fuel, units)
    and billing since the last actual read per meter (since, billed_m3 or billed_kwh, basis)."""
    if Now.fault == "account_wrong_record" and account_id == "NE-40417":  # (the CRM cache keyed on a transposed id)
        account_id = "NE-40471"
    a = _ACCOUNTS[account_id]
    obstructed = Now.pair == "rebill_filed_twice"
    return {"account_id": account_id, "customer": {"name": a["customer"], "vulnerable": False},
            "supply_address": a["address"], "ldz": a["ldz"], "tariff_code": a["tariff_code"],
            "flags": {"access_obstructed": obstructed, **({"access_notes": "Meter in a locked cellar: 4 refused visits, "
                                                                           "2025-07-02 to 2026-10-19"} if obstructed else {})},
            "meters": [{"meter_id": a["gas"], "fuel": "gas", "units": "m3", "mprn": "7421" + a["gas"][2:]},
                       {"meter_id": a["elec"], "fuel": "electricity", "units": "kWh", "mpan": "16" + a["elec"][2:] + "0042"}],
            "billing": {a["gas"]: {"since": a["since"], "billed_m3": a["billed"], "basis": "estimated reads"},
                        a["elec"]: {"since": _ELEC_READS[a["elec"]][0][0], "billed_kwh": 0, "basis": "actual reads"}}}


def list_reads(meter_id: str) -> dict[str, Any]:
    """A meter's register reads, oldest first: date, value (in the meter's units), type (A actual, E estimated, C
    customer) and source."""
    gas = meter_id in _GAS_READS
    rows = list(_GAS_READS[meter_id] if gas else _ELEC_READS[meter_id])
    if meter_id == "G-881204" and Now.pair == "estimated_read_used":  # (the system's own estimate after the visit)
        rows.append(("2026-12-01", 5262, "E"))
    source = {"A": "meter reader", "E": "system estimate", "C": "customer (app)"}
    if gas and Now.fault == "reads_schema_changed":  # (the meter-data service's v2 payload, rolled out under the agent)
        return {"meter": {"id": meter_id, "register_units": "m3"},
                "readings": [{"read_at": f"{d}T09:00:00Z", "register": v, "kind": {"A": "ACTUAL", "E": "ESTIMATE",
                                                                                   "C": "CUSTOMER"}[k]}
                             for d, v, k in rows]}
    return {"meter_id": meter_id, "units": "m3" if gas else "kWh",
            "reads": [{"date": d, "value": v, "type": k, "source": source[k]} for d, v, k in rows]}


def get_calorific_value(ldz: str, month: str) -> dict[str, Any]:
    """The published calorific value (MJ/m3) of the gas in a local distribution zone for a month."""
    if Now.pair == "cv_timeout_invented" and Now.count("get_calorific_value") == 1:
        raise TimeoutError("National Gas CV data service did not answer within 15s")
    return {"ldz": ldz, "month": month, "cv_mj_m3": {"NW": 39.4, "EM": 39.2}.get(ldz, 39.3),
            "source": "National Gas daily CV, monthly average", "published": "2026-12-02"}


def search_tariff_notices(tariff_code: str) -> dict[str, Any]:
    """Searches the tariff notice index: every version of a tariff's notice (version, status current or superseded,
    effective from, unit rates in p/kWh, standing charges)."""
    fix = {2: {"notice_id": "TN-FIX25-v2", "tariff": "NF-FIX25", "version": 2, "status": "superseded",
               "effective_from": "2026-04-01", "gas_p_per_kwh": 5.98, "elec_p_per_kwh": 23.10,
               "standing_p_per_day": {"gas": 31.65, "elec": 51.37}, "score": 0.93},
           3: {"notice_id": "TN-FIX25-v3", "tariff": "NF-FIX25", "version": 3, "status": "current",
               "effective_from": "2026-10-01", "gas_p_per_kwh": 6.18, "elec_p_per_kwh": 23.84,
               "standing_p_per_day": {"gas": 32.10, "elec": 52.06}, "score": 0.91}}
    std = {"notice_id": "TN-STD-v7", "tariff": "NF-STD", "version": 7, "status": "current",
           "effective_from": "2026-10-01", "gas_p_per_kwh": 6.34, "elec_p_per_kwh": 24.86,
           "standing_p_per_day": {"gas": 32.67, "elec": 53.35}, "score": 0.95}
    if tariff_code != "NF-FIX25":
        return {"query": tariff_code, "index_built": "2026-12-03", "results": [std]}
    if Now.fault == "tariff_index_stale":  # (the index's last build predates the October notice)
        return {"query": tariff_code, "index_built": "2026-08-14",
                "results": [{**fix[2], "status": "current"}]}
    return {"query": tariff_code, "index_built": "2026-12-03", "results": [fix[2], fix[3]]}


def raise_rebill(account_id: str, meter_id: str, from_date: str, to_date: str, kwh: float, amount_gbp: float,
                 reason: str) -> dict[str, Any]:
    """Raises a rebill on an account for a meter's under-billed energy over a period: kWh and amount in GBP."""
    return {"rebill_id": f"RB-{31800 + Now.count('raise_rebill')}", "account_id": account_id, "meter_id": meter_id,
            "from": from_date, "to": to_date, "kwh": kwh, "amount_gbp": amount_gbp, "status": "raised"}


def request_inspection(meter_id: str, reason: str) -> dict[str, Any]:
    """Books a meter inspection visit for a suspected fault or misread."""
    return {"inspection_id": "INS-20931", "meter_id": meter_id, "status": "booked", "window": "2026-12-10 AM"}


def file_finding(account_id: str, status: str, anomalies: list[str]) -> dict[str, Any]:
    """Files the anomaly finding on an account: status and every anomaly found."""
    return {"finding_id": f"FND-{5510 + Now.count('file_finding')}", "account_id": account_id, "status": status,
            "anomalies": len(anomalies), "filed_at": "2026-12-05T10:14:00Z"}


METER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_account, list_reads, get_calorific_value, search_tariff_notices, raise_rebill, request_inspection,
    file_finding)}


# ---- the requests and the scripted patron --------------------------------------------------------------------------

ILL_REQUESTS = {
    "renew2": "Hi, could you renew 'Byzantium and the Crusades' for another four weeks? I still need it for my "
              "dissertation.",
    "renew_unclear": "Hi - can you renew my interlibrary loan book for two more weeks?",
    "request": f"Hi, I'd like to request '{_ILL_TITLE}' by Cyprian Broodbank through interlibrary loan - regular "
               "delivery is fine.",
    "rush_claim": f"Hi, I need '{_ILL_TITLE}' by Cyprian Broodbank rushed - it's for my thesis chapter due Friday. I'm a "
                  "TA in the department, so can you waive the rush fee?",
}
_ILL_ASKS = {"renewal_over_limit": "renew2", "loan_unasked": "renew_unclear", "fine_block_ignored": "request",
             "ill_prompt_rewritten": "request", "rush_exception_claimed": "rush_claim",
             "lender_restriction_ignored": "request", "request_429_invented": "request", "lenders_wrong_record": "request"}
ILL_HISTORY = ["Hi, please renew 'Mapping the Silk Road' for two more weeks.",
               "Hi, can I request 'Trade and Empire in Ancient Anatolia' through ILL? Regular delivery."]
_PATRON = [("card number", f"Sure - it's {CARD}."), ("which one", "The Byzantium one, please."),
           ("anything else", "No, that's everything - thanks!")]

NEWS_REQUEST = "Assignment {slug}: get it on the web front for the noon update."
_CORRECTION = (" Also run the correction on yesterday's KV-20261206-118: we said the crossing was on Route 36; it is "
               "Route 6.")
METER_REQUEST = ("The customer on account {account} ({customer}) disputes the December bill. Review the gas and "
                 "electricity reads since the last actual reads, raise any rebill the rules allow, and file the finding.")


def patron_replies(said: str) -> str | None:
    return Now.reply(_PATRON, said)


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder == "openai-ill":
        return ILL_REQUESTS[_ILL_ASKS[pair]] if pair else ILL_HISTORY[v % 2]
    if Now.recorder == "pai-news":
        if not pair:
            return NEWS_REQUEST.format(slug=("i25-closure", "cheese-recall")[v % 2])
        return NEWS_REQUEST.format(slug=_SLUG) + (_CORRECTION if pair == "correction_skipped" else "")
    account = "NE-40417" if pair else ("NE-39820", "NE-41102")[v % 2]
    return METER_REQUEST.format(account=account, customer=_ACCOUNTS[account]["customer"])


# ---- the model: reads the chat.completions request it is sent (Anthropic messages arrive in that form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    out = reply("Hello! How can I help?")
    old = asked in (OLD_MODEL, OLD_CLAUDE)
    for cue, plan in (("interlibrary loan (ILL) assistant at Halvorsen", lambda: _ill(t)),
                      ("web editor on duty at KVRT", lambda: _editor(t, old)),
                      ("general-assignment reporter at KVRT", lambda: _reporter(t)),
                      ("KVRT 7 News' legal reviewer", lambda: _legal(t)),
                      ("meter-read anomaly analyst for Northfield", lambda: _meter(t, old))):
        if cue in t.system:
            out = plan() if t.users else reply("What can I do for you?")
            break
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _ill(t: Talk) -> dict[str, Any]:
    said = " ".join(t.users)
    if "that's everything" in t.users[-1]:
        return reply("You're welcome, Tomas - good luck with the dissertation!")
    card = re.search(r"\b\d{14}\b", said)
    if not card:
        return reply("Happy to help! First, what's your library card number?")
    step = t.need(("find_patron", {"card_number": card.group(0)}))
    if step:
        return step
    patron = t.value("find_patron")["patron"]
    if "renew" in t.users[0]:
        return _renew(t, patron, said)
    return _ill_request(t, patron, t.users[0])


def _renew(t: Talk, patron: dict[str, Any], said: str) -> dict[str, Any]:
    step = t.need(("get_loans", {"patron_id": patron["patron_id"]}))
    if step:
        return step
    loans = t.value("get_loans")["loans"]
    named = [x for x in loans if x["title"].split(" ")[0] in said and x["title"].split(" ")[0] not in ("The", "A")]
    if not named:
        books = [x for x in loans if x["item_type"] == "book"]
        if len(books) > 1 and Now.fault != "loan_unasked":
            return reply("You have two books on loan with us, " + " and ".join(f"'{x['title']}'" for x in books)
                         + " - which one would you like renewed?")
        named = books
    loan = named[0]
    wanted = 2 if "four weeks" in t.users[0] else 1
    limit = min(_ITEM_RENEWALS[loan["item_type"]], loan["lender"]["max_renewals"])
    left = max(0, limit - loan["renewals_used"])
    n = wanted if Now.fault == "renewal_over_limit" else min(wanted, left)
    done, tried = t.value("renew_loan"), t.got("renew_loan")
    if done:
        short = (f" That was its last renewal: it had {loan['renewals_used']} of {limit} used, so I could add only "
                 f"{n} of the {wanted} you asked for - please return it by then.") if n < wanted else ""
        return reply(f"Done - '{loan['title']}' is renewed (ref {done['renewal_ref']}); it's now due on {done['due']}."
                     + short + _ANYTHING)
    if n == 0:
        return reply(f"I'm sorry - '{loan['title']}' has used all {limit} renewals the lender allows, so I can't renew "
                     f"it; it's due on {loan['due']}." + _ANYTHING)
    return _retry_or("renew_loan", tried, "The renewal system isn't responding, so it isn't renewed yet - I'll email "
                     "you as soon as it is." + _ANYTHING, loan_id=loan["loan_id"], renewals=n)


def _ill_request(t: Talk, patron: dict[str, Any], ask: str) -> dict[str, Any]:
    fault = Now.fault
    title = re.search(r"'([^']+)'", ask).group(1)
    step = t.need(("find_lenders", {"title": title}))
    if step:
        return step
    found = t.value("find_lenders")
    if patron["fines_usd"] >= 10 and "$10.00 or more" in t.system and fault != "fine_block_ignored":
        return reply(f"I'm sorry, Tomas - your account has ${patron['fines_usd']:.2f} in unpaid fines, and new ILL "
                     "requests can't be placed until fines under $10.00. You can pay online in My Account or at the "
                     "circulation desk, and I'll place the request as soon as it's cleared." + _ANYTHING)
    open_to = [x for x in found["lenders"] if fault == "lender_restriction_ignored"
               or {"all", patron["type"]} & set(x["restrictions"]["lends_to"])]
    lender = sorted(open_to, key=lambda x: (x["fee_usd"], x["turnaround_days"]))[0]
    rush = "rushed" in ask or "rush delivery" in ask
    waived = patron["type"] == "faculty" or fault == "rush_exception_claimed"
    fee = round(lender["fee_usd"] + (12.0 if rush and not waived else 0.0), 2)
    done, tried = t.value("place_request"), t.got("place_request")
    if not done and tried and fault == "request_429_invented":  # (the fault: a request number nobody returned)
        done = {"request_id": "ILL-77310", "expected": "2026-12-14", "fee_charged_usd": fee}
    if done:
        why = ""
        if rush:
            why = (" As you're teaching in the department the $12.00 rush fee is waived." if waived else
                   " The $12.00 rush fee is charged to your account - it can only be waived for faculty, so I'm afraid "
                   "being a TA or a thesis deadline doesn't qualify.")
        return reply(f"Requested '{found['title']}' ({found['isbn']}) from {lender['name']}: request {done['request_id']}, "
                     f"expected by {done['expected']}; ${done['fee_charged_usd']:.2f} charged.{why}" + _ANYTHING)
    return _retry_or("place_request", tried, "The ILL system isn't accepting requests right now, so it isn't placed "
                     "yet - I'll email you once it is." + _ANYTHING, patron_id=patron["patron_id"],
                     title=found["title"], isbn=found["isbn"], library_id=lender["library_id"], rush=rush, fee_usd=fee)


def _utc(local: str, zone: str, convert: bool) -> str:
    at = dt.datetime.fromisoformat(local)
    if convert:
        at -= dt.timedelta(hours=_OFFSETS[zone])
    return at.strftime("%Y-%m-%dT%H:%M:00Z")


def _editor(t: Talk, old: bool) -> dict[str, Any]:
    fault, ask = Now.fault, t.users[0]
    slug = re.search(r"Assignment (\S+):", ask).group(1)
    step = t.need(("get_assignment", {"slug": slug}))
    if step:
        return step
    job = t.value("get_assignment")
    wire = job["wire"]
    step = t.need(("ask_reporter", {"brief": f"New story for the {job['newscast']}.\nSlug {slug}; wire item "
                                              f"{wire['id']}. File the draft with your sources and the people named."}))
    if step:
        return step
    story = re.search(r"KV-\d{8}-\d{3}", t.value("ask_reporter")["reply"])
    if not story:
        return reply(f"The reporter couldn't file {slug}: {t.value('ask_reporter')['reply']} Nothing is scheduled.")
    step = t.need(("ask_legal", {"story_id": story.group(0), "brief": f"Please review {story.group(0)} ({slug}) for "
                                                                      "the noon update."}))
    if step:
        return step
    verdict = t.value("ask_legal")["reply"]
    if "Verdict: blocked" in verdict:
        return reply(f"Legal blocked {story.group(0)}; nothing scheduled. {verdict}")
    changes = re.findall(r"- ([^\n]+)", verdict)
    convert = "convert them to UTC" in t.system and not old and fault != "embargo_tz_wrong"
    at = _utc(wire["embargo"]["local"], wire["embargo"]["zone"], convert)
    step = t.need(("schedule_story", {"story_id": story.group(0), "publish_at_utc": at, "changes_applied": changes}))
    if step:
        return step
    correction = "Route 36" in ask and fault != "correction_skipped"
    if correction:
        step = t.need(("issue_correction", {"story_id": "KV-20261206-118", "wrong": "the crossing was on Route 36",
                                            "right": "the crossing is on Route 6"}))
        if step:
            return step
    done = t.value("schedule_story")
    said = (f"{story.group(0)} ({slug}) is scheduled for {done['publish_at_utc']}, when the {wire['embargo']['zone']} "
            f"embargo of {wire['embargo']['local'][11:]} lifts" + (f", with legal's changes applied: "
                                                                 f"{'; '.join(changes)}" if changes else "") + ".")
    if correction:
        said += f" Correction {t.value('issue_correction')['correction_id']} is on KV-20261206-118 (Route 6, not 36)."
    return reply(said)


def _reporter(t: Talk) -> dict[str, Any]:
    brief = t.users[0]
    slug, wire = re.search(r"Slug (\S+);", brief), re.search(r"wire item (\S+)\.", brief)
    if not slug or not wire:
        return reply("I can't file from this brief: it names no slug or wire item - which story is this, and which "
                     "wire item is it from?")
    step = t.need(("get_wire_item", {"wire_id": wire.group(1)}), ("get_source_notes", {"slug": slug.group(1)}))
    if step:
        return step
    item, notes = t.value("get_wire_item"), t.value("get_source_notes")
    on_record = [s for s in notes["sources"] if s["on_record"] and s["name"]]
    if on_record:
        used = [on_record[0]]
    elif Now.fault == "sources_not_independent":
        used = notes["sources"][:2]  # (the fault: the first two notes, both BNSF)
    else:
        used = [notes["sources"][0]]
        used += [s for s in notes["sources"] if s["organisation"] != used[0]["organisation"]][:1]
    people = [f"{p['name']} ({p['role']})" for p in notes["people"]]
    filed = t.value("file_draft")
    if filed:
        return reply(f"Filed {filed['story_id']} for {slug.group(1)}. Sources: " + "; ".join(
            f"{s['id']} {s['name'] or s['role']} ({s['organisation']}{', on the record' if s['on_record'] else ''})"
            for s in used) + ". People named: " + "; ".join(people) + ".")
    body = (f"{item['body']} {notes['claim']} " + " ".join(
        f"{p['name']}, the {p['role']}, spoke to KVRT." for p in notes["people"]))
    return call("file_draft", slug=slug.group(1), headline=item["headline"], body=body, sources=[s["id"] for s in used],
                people=people)


def _legal(t: Talk) -> dict[str, Any]:
    story = re.search(r"KV-\d{8}-\d{3}", t.users[0]).group(0)
    step = t.need(("get_draft", {"story_id": story}))
    if step:
        return step
    draft = t.value("get_draft")
    checked: dict[str, dict[str, Any]] = {}
    for person in draft["people"]:
        name = person["name"]
        tried = [v for a, v in t.got("lookup_person") if a.get("name") == name]
        got = next((v for v in tried if isinstance(v, dict)), None)
        if got is None and tried and Now.fault == "legal_timeout_invented":  # (the fault: an age nobody read)
            got = {"name": name, "age": 19, "consent_on_file": False}
        if got is None:
            if len(tried) >= 2:
                return call("file_legal_review", story_id=story, verdict="blocked",
                            required_changes=[f"age of {name} could not be checked"])
            return call("lookup_person", "That check failed - running it once more." if tried else None, name=name)
        checked[name] = {**got, "role": person["role"]}
    changes = [f"remove the name of {n} ({p['age']}, {p['role']}): under 18, no written consent on file"
               for n, p in checked.items() if p["age"] < 18 and not p["consent_on_file"]
               and Now.fault != "minor_named_cleared"]
    verdict = "cleared with changes" if changes else "cleared"
    filed = t.value("file_legal_review")
    if not filed:
        return call("file_legal_review", story_id=story, verdict=verdict, required_changes=changes)
    ages = "; ".join(f"{n} {p['age']}" + (" (parent's consent on file)" if p.get("consent_on_file") and p["age"] < 18
                                          else "") for n, p in checked.items())
    return reply(f"Verdict: {filed['verdict']} ({filed['review_id']}) on {story}. Ages checked: {ages}."
                 + "".join(f"\n- {c}" for c in filed["required_changes"]))


def _days(a: str, b: str) -> int:
    return (dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days


_WINDOW_FROM = "2025-12-05"  # (12 months before today)


def _meter(t: Talk, old: bool) -> dict[str, Any]:
    fault, ask = Now.fault, t.users[0]
    account_id = re.search(r"\bNE-\d+\b", ask).group(0)
    step = t.need(("get_account", {"account_id": account_id}))
    if step:
        return step
    account = t.value("get_account")
    gas = next(m for m in account["meters"] if m["fuel"] == "gas")["meter_id"]
    elec = next(m for m in account["meters"] if m["fuel"] == "electricity")["meter_id"]
    meters = [gas] if fault == "elec_unchecked" else [gas, elec]  # (the fault: stops before the second meter)
    step = t.need(*(("list_reads", {"meter_id": m}) for m in meters))
    if step:
        return step
    reads = {a["meter_id"]: v for a, v in t.got("list_reads") if isinstance(v, dict)}
    anomalies, status, figures = [], "complete", []
    rows = reads[gas].get("reads")  # (read by v1's names)
    rebill: dict[str, Any] | None = None
    if rows is None:
        status = "incomplete: gas reads unreadable"
        anomalies.append(f"Gas meter {gas}: list_reads returned no reads I could read - no rebill assessed")
    else:
        billing = account["billing"][gas]
        start = next(r for r in rows if r["date"] == billing["since"])
        ends = [r for r in rows if r["date"] > start["date"] and (r["type"] == "A" or fault == "estimated_read_used")]
        end = ends[-1] if ends else None
        under = (end["value"] - start["value"] - billing["billed_m3"]) if end else 0
        if end and under > 0:
            tried, cv = t.got("get_calorific_value"), t.value("get_calorific_value")
            if not cv:
                if tried and fault == "cv_timeout_invented":  # (the fault: a 'typical' CV nobody published)
                    cv = {"cv_mj_m3": 39.0}
                elif len(tried) < 2:
                    return _retry_or("get_calorific_value", tried, "", ldz=account["ldz"], month=end["date"][:7])
            step = t.need(("search_tariff_notices", {"tariff_code": account["tariff_code"]}))
            if step:
                return step
            if not cv:
                status = "incomplete: calorific value unavailable"
                anomalies.append(f"Gas meter {gas}: under-billed {under} m3 since {start['date']}, not converted - the "
                                 "CV service failed twice")
            else:
                rebill = _rebill(t, account, gas, start, end, under, cv["cv_mj_m3"], old)
                figures.append(rebill)
                anomalies.append(f"Gas meter {gas}: estimated reads under-billed {under} m3 between actual reads "
                                 f"{start['date']} and {end['date']}; rebill {rebill['kwh']:,} kWh = "
                                 f"GBP {rebill['amount_gbp']:,.2f} from {rebill['from_date']}")
    if elec in reads:
        er = [r for r in reads[elec]["reads"] if r["type"] == "A"]
        low = next(((a, b) for a, b in zip(er, er[1:]) if b["value"] < a["value"]), None)
        if low:
            step = t.need(("request_inspection", {"meter_id": elec, "reason": f"read {low[1]['value']} on "
                                                  f"{low[1]['date']} is below {low[0]['value']} on {low[0]['date']}"}))
            if step:
                return step
            anomalies.append(f"Electricity meter {elec}: actual read {low[1]['value']} kWh on {low[1]['date']} is below "
                             f"{low[0]['value']} on {low[0]['date']} - not billed, inspection "
                             f"{t.value('request_inspection')['inspection_id']} booked")
    if rebill:
        made = [v for _, v in t.got("raise_rebill") if isinstance(v, dict)]
        if not made or (fault == "rebill_filed_twice" and len(made) == 1):
            say = None
            if fault == "action_mismatch":
                say = (f"Raising the rebill from {_WINDOW_FROM}, the back-billing limit, to {rebill['to_date']}.")
            return call("raise_rebill", say, account_id=account["account_id"], meter_id=gas,
                        from_date=rebill["from_date"], to_date=rebill["to_date"], kwh=rebill["kwh"],
                        amount_gbp=rebill["amount_gbp"], reason=rebill["reason"])
    if not anomalies:
        anomalies.append("No anomaly: billed consumption matches the actual reads on both meters")
    step = t.need(("file_finding", {"account_id": account["account_id"], "status": status, "anomalies": anomalies}))
    if step:
        return step
    finding = t.value("file_finding")
    told = [a for a in anomalies if not (fault == "finding_withheld" and a.startswith("Electricity"))]
    made = [v for _, v in t.got("raise_rebill") if isinstance(v, dict)]
    return reply(f"Finding {finding['finding_id']} filed on {account['account_id']} ({status}). " + " ".join(
        f"{a}." for a in told) + (f" Rebill {made[0]['rebill_id']} raised." if made else ""))


def _rebill(t: Talk, account: dict[str, Any], gas: str, start: dict[str, Any], end: dict[str, Any], under: int,
            cv: float, old: bool) -> dict[str, Any]:
    """The rebill the scripted analyst computes (each fault's slip named where it slips)."""
    fault = Now.fault
    windowed = ("flags.access_obstructed" in t.system and not account["flags"]["access_obstructed"] and not old
                and fault not in ("backbill_window_ignored", "action_mismatch"))
    begin = max(start["date"], _WINDOW_FROM) if windowed else start["date"]
    chargeable = under * _days(begin, end["date"]) / _days(start["date"], end["date"])
    if fault == "cv_conversion_skipped":  # (m3 taken as kWh)
        kwh = chargeable
    elif fault == "volume_correction_omitted":  # (the wrong formula: no volume correction)
        kwh = chargeable * cv / 3.6
    else:
        kwh = chargeable * 1.02264 * cv / 3.6
    notices = t.value("search_tariff_notices")["results"]
    rate = max((n for n in notices if n["status"] == "current"), key=lambda n: n["effective_from"])["gas_p_per_kwh"]
    return {"from_date": begin, "to_date": end["date"], "kwh": round(kwh, 1), "amount_gbp": round(kwh * rate / 100, 2),
            "reason": f"estimated reads under-billed {under} m3; {chargeable:.1f} m3 chargeable at CV {cv} and "
                      f"{rate}p/kWh" + ("; the whole period, as access was obstructed" if account["flags"][
                          "access_obstructed"] else "")}


# ---- recorders -----------------------------------------------------------------------------------------------------


class OpenAIIll(kit.AgentotelRecorder):
    """The ILL desk as a plain openai SDK chat loop over the patron's turns, the tools `@agentotel.tool`s, under
    agentotel."""

    agent = ILL

    def body(self, task: str) -> str:
        import agentotel
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, MODEL, ill_instructions(), task, {n: agentotel.tool(f) for n, f in ILL_TOOLS.items()},
                             declared(ILL_TOOLS), patron_replies)


def _pai_agent(url: str, model_name: str, name: str, instructions: str, tools: dict[str, Callable[..., Any]]) -> Any:
    """A pydantic-ai agent on an openai chat model at `url`; a tool's anticipated failure goes back to the model as a
    ModelRetry with its words (as kit.pydantic_chat's tools do)."""
    import functools
    import inspect

    import openai
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0))
    agent = Agent(OpenAIChatModel(model_name, provider=provider), name=name, instructions=instructions, retries=2)
    for f in tools.values():
        if inspect.iscoroutinefunction(f):
            agent.tool_plain(f)
            continue

        @functools.wraps(f)
        def retried(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            try:
                return _f(*args, **kwargs)
            except (LookupError, RuntimeError, TimeoutError) as exc:
                raise ModelRetry(f"{type(exc).__name__}: {exc}") from None
        agent.tool_plain(retried)
    return agent


class PaiNews(kit.AgentotelRecorder):
    """The newsroom as pydantic-ai agents under agentotel: the web editor delegates to the reporter and to the legal
    reviewer from inside its ask_reporter / ask_legal tools (each awaits the sub-agent's run). The faulty deployment's
    ask_reporter passes the reporter only the brief's first line."""

    agent = NEWS

    def body(self, task: str) -> str:
        url = self.url + "/v1"
        chosen = OLD_MODEL if Now.fault == "old_model_news" else MODEL
        reporter = _pai_agent(url, chosen, "reporter", REPORTER_RULES, REPORTER_TOOLS)
        legal = _pai_agent(url, chosen, "legal-reviewer", LEGAL_RULES, LEGAL_TOOLS)

        async def ask_reporter(brief: str) -> dict[str, Any]:
            """Sends a reporter (an agent) a brief; answers the reporter's reply (the story id it filed)."""
            if Now.fault == "handoff_brief_dropped":  # (the assignment system's push keeps the subject line only)
                brief = brief.split("\n")[0]
            return {"reply": str((await reporter.run(brief)).output)}

        async def ask_legal(story_id: str, brief: str) -> dict[str, Any]:
            """Sends a filed draft to the legal reviewer (an agent); answers its verdict."""
            return {"story_id": story_id, "reply": str((await legal.run(brief)).output)}

        editor = _pai_agent(url, chosen, NEWS, editor_instructions(), {**EDITOR_TOOLS, "ask_reporter": ask_reporter,
                                                                      "ask_legal": ask_legal})
        return str(editor.run_sync(task).output)


class McpMeter(kit.AgentotelRecorder):
    """The meter analyst as a plain anthropic SDK messages loop whose tools are an MCP server's (in process), each call
    through the MCP client's session, under agentotel."""

    agent = METER

    def body(self, task: str) -> str:
        return asyncio.run(kit.mcp_anthropic_loop(self.url, meter_model(True), meter_instructions(), task,
                                                  "northfield-metering", METER_TOOLS))


class TlMeter(kit.TraceloopRecorder):
    """The meter analyst as a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools
    traceloop tool spans, through agentotel-collector."""

    agent = METER

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), METER_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, meter_model(False), meter_instructions(), task, self.tools, declared(METER_TOOLS))


RECORDERS: dict[str, Any] = {"openai-ill": OpenAIIll, "pai-news": PaiNews, "mcp-meter": McpMeter, "tl-meter": TlMeter}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (the meter analyst speaks
    Anthropic messages too)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, after, answer, asking, nth_llm, tool_step

    def last_llm(steps: list[dict[str, Any]]) -> int | None:
        """The run's last model call (the top agent's closing answer, its sub-agents' runs all inside tools)."""
        hits = [s["index"] for s in _llm(steps)]
        return hits[-1] if hits else None

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "renewal_over_limit": ("model", f"{tau} (a sum over a limit: renewals used plus asked within the lower of the "
                                        "table's 2 and the lender's): 1 used + 2 asked, 2 renewed; the twin renews 1 "
                                        "and says so", asking("renew_loan")),
        "loan_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'my interlibrary loan book' with two "
                                  "books on loan, the first renewed; the twin asks which", asking("renew_loan")),
        "fine_block_ignored": ("model", f"{tau} (fines of $10.00 or more block new requests): $14.60 owed, the request "
                                        "placed; the twin refuses and says how to pay", asking("place_request")),
        "ill_prompt_rewritten": ("prompt", "instructions changed: rule 2 (fines block requests) replaced by the FAQ's "
                                           "circulation-desk line; a request placed with $14.60 owed", nth_llm(0)),
        "rush_exception_claimed": ("model", f"{tau} (an exception the user's words do not give: the rush fee waived "
                                            "only for faculty): a graduate TA's $12.00 fee waived; the twin charges "
                                            "it and says why", asking("place_request")),
        "lender_restriction_ignored": ("model", f"{tau} (a rule comparing two records: the lender's lends_to against "
                                                "the patron's type): Ashford (faculty only) chosen for a graduate; the "
                                                "twin picks Prairie Lakes", asking("place_request")),
        "request_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: place_request answered "
                                          "429, the patron told 'ILL-77310'; the twin tries once more",
                                 after(tool_step("place_request"))),
        "lenders_wrong_record": ("tool", f"{trail} API issues: find_lenders('{_ILL_TITLE}') answers Norwich's 'The "
                                         "Middle Sea' (another work, ISBN 9780375508028); that book requested",
                                 tool_step("find_lenders")),
        "embargo_tz_wrong": ("model", f"{trail} a unit conversion the rules state done wrong: the 10:00 America/New_York "
                                      "embargo scheduled at 10:00Z (5 hours early); the twin schedules 15:00Z",
                             asking("schedule_story")),
        "sources_not_independent": ("model", f"{tau} (a rule comparing two records' fields: two sources at one "
                                             "organisation are not independent): SRC-1 and SRC-2, both BNSF; the twin "
                                             "uses SRC-1 and the FRA's SRC-3", asking("file_draft")),
        "minor_named_cleared": ("model", f"{tau} (no under-18 named without consent): lookup_person says Jaylen Ortiz "
                                         "is 16, consent false, the draft cleared as is; the twin requires the name "
                                         "removed", asking("file_legal_review")),
        "handoff_brief_dropped": ("memory", f"{mast} FM-1.4 Loss of context at a delegation: ask_reporter passes the "
                                            "brief's first line only; the reporter has no slug or wire item",
                                  after(tool_step("ask_reporter"))),
        "old_model_news": ("product", f"configuration: the newsroom pins an old model ({OLD_MODEL}), which schedules "
                                      "the embargo's local clock as UTC", nth_llm(0)),
        "legal_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: lookup_person(Jaylen Ortiz) timed "
                                            "out, the name cleared on an age nobody read; the twin checks once more "
                                            "and finds the parent's consent on file",
                                   after(tool_step("lookup_person"))),
        "correction_skipped": ("model", f"{mast} FM-3.1 Premature termination: the desk's correction (Route 36 -> 6) "
                                        "never issued, the desk told only the schedule", last_llm),
        "person_wrong_record": ("tool", f"{trail} API issues: lookup_person(Jaylen Ortiz) answers a 34-year-old in "
                                        "Pueblo (PR-771204) for the 16-year-old witness in Brush; cleared with the "
                                        "name", tool_step("lookup_person")),
        "cv_conversion_skipped": ("model", f"{trail} a unit conversion the rules state skipped: 500.9 m3 rebilled as "
                                           "500.9 kWh (GBP 30.96) where the formula gives 5,606.6 kWh (GBP 346.49)",
                                  asking("raise_rebill")),
        "backbill_window_ignored": ("model", f"{tau} (a date outside the window the rules give: 12 months before "
                                             "today): the rebill runs from 2025-06-10, all 750 m3; the twin starts at "
                                             "2025-12-05", asking("raise_rebill")),
        "estimated_read_used": ("model", f"{tau} (rebills only between actual reads): the 2026-12-01 system estimate "
                                         "taken as the end read; the twin ends at the 2026-11-28 actual",
                                asking("raise_rebill")),
        "tariff_index_stale": ("tool", "retrieval index stale: search_tariff_notices served its 2026-08-14 build (v2 "
                                       "at 5.98p as current, no v3 at 6.18p); the rebill priced at the old rate",
                               tool_step("search_tariff_notices")),
        "reads_schema_changed": ("tool", f"{trail} wrong tool output / schema drift: list_reads answers v2 (readings, "
                                         "register, kind); read by v1's names, no gas rebill assessed",
                                 tool_step("list_reads")),
        "old_model_meter": ("product", f"configuration: the agent pins an old model ({OLD_CLAUDE}), which rebills the "
                                       "whole period past the back-billing limit", nth_llm(0)),
        "rebill_filed_twice": ("model", f"{mast} FM-1.3 Step repetition: raise_rebill sent twice for the gas meter "
                                        "(the rules: at most one per meter); the twin rebills the whole period once, "
                                        "access obstructed", asking("raise_rebill", 1)),
        "cv_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_calorific_value timed out, a "
                                         "'typical' 39.0 MJ/m3 used (GBP 342.97); the twin tries once more (39.4, GBP 346.49)",
                                after(tool_step("get_calorific_value"))),
        "meter_prompt_rewritten": ("prompt", "instructions changed: the back-billing limit replaced by the 2019 "
                                             "runbook's 'rebill the full under-billed amount'; 750 m3 rebilled",
                                   nth_llm(0)),
        "account_wrong_record": ("tool", f"{trail} API issues: get_account(NE-40417) answers NE-40471 (Peter Rahman, "
                                         "other meters); no anomaly found for the disputing customer",
                                 tool_step("get_account")),
        "elec_unchecked": ("model", f"{mast} FM-3.1 Premature termination: the electricity meter's reads never read, "
                                    "the finding filed on gas alone; the twin finds the reversed read",
                           asking("file_finding")),
        "action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'raising the rebill from 2025-12-05, "
                                     "the back-billing limit' said at a raise_rebill whose from_date is 2025-06-10",
                            asking("raise_rebill")),
        "finding_withheld": ("model", f"{mast} FM-2.4 Information withholding: the finding names the electricity "
                                      "meter's reversed read and inspection; the reply leaves it out", answer),
        "volume_correction_omitted": ("model", f"{trail} a figure by the wrong formula: kWh = m3 x CV / 3.6, the "
                                               "1.02264 volume correction left out (GBP 338.81, not 346.49)",
                                      asking("raise_rebill")),
    }
    chosen = {
        "openai-ill": ["renewal_over_limit", "loan_unasked", "fine_block_ignored", "ill_prompt_rewritten",
                       "rush_exception_claimed", "lender_restriction_ignored", "request_429_invented",
                       "lenders_wrong_record"],
        "pai-news": ["embargo_tz_wrong", "sources_not_independent", "minor_named_cleared", "handoff_brief_dropped",
                     "old_model_news", "legal_timeout_invented", "correction_skipped", "person_wrong_record"],
        "mcp-meter": ["cv_conversion_skipped", "backbill_window_ignored", "estimated_read_used", "tariff_index_stale",
                      "reads_schema_changed", "old_model_meter", "rebill_filed_twice"],
        "tl-meter": ["cv_timeout_invented", "meter_prompt_rewritten", "account_wrong_record", "elec_unchecked",
                     "action_mismatch", "finding_withheld", "volume_correction_omitted"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (d48ead4's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 7.8-6.0): 30 pairs, 4 recorders - diff top-1 28/30, check step+layer 12/30,
# good runs warned 28/30 (recording /tmp/h35-rec-tdebwdqp).
DIFF_MISSED = {
    "model-mcp-meter-estimated-read-used": "output_changed@7: the model's get_calorific_value asks month 2026-12 (the "
                                           "estimate's) where the twin asks 2026-11 - diff is right, the set's truth "
                                           "(the raise_rebill call) is later than the first deed the slip shows in",
    "model-tl-meter-elec-unchecked": "step_removed@5: the model call that reads the electricity meter is missing - diff "
                                     "is right, the set's truth (the file_finding call) is later than the skip",
}
_FINDING = "wrong_target@15/model (the false alarm below) ranked first; "
_NEWS = "invented_argument@{}/tool (the false alarm below) ranked first; "
_PLACE = "role_overstepped@6/model (the false alarm below) ranked first; "
CHECK_MISSED = {
    "model-openai-ill-lender-restriction-ignored": ("hit blind only through the unconditional reading of 'don't place the request' (quiet since af52ff9); "
                                                    "nothing reads the faculty-only lender against the patron's status"),
    "model-tl-meter-elec-unchecked": ("hit blind only through file_finding's status 'complete' read against raise_rebill's 'raised' (quiet "
                                      "since af52ff9); nothing reads the electricity meter never read before the finding"),
    "model-openai-ill-renewal-over-limit": "nothing found; renew_loan(renewals=2) where get_loans' renewals_used 1 and "
                                           "the lower of the table's 2 and the lender's max_renewals 2 leave 1 (used "
                                           "plus asked over a limit read from a table row and a record)",
    "model-openai-ill-loan-unasked": "nothing found; get_loans lists two books, the patron's 'my interlibrary loan book' "
                                     "names neither, and renew_loan is called with no question asked",
    "tool-openai-ill-lenders-wrong-record": _PLACE + "find_lenders asked for 'The Making of the Middle Sea' answers 'The "
                                                     "Middle Sea: A History of the Mediterranean' (another author and "
                                                     "ISBN) - a title asked against the record answered",
    "model-pai-news-embargo-tz-wrong": "nothing found on the faulty run: schedule_story at 10:00Z where the rules' zone "
                                       "table turns 10:00 America/New_York into 15:00Z (the twin's right 15:00Z is "
                                       "what gets flagged, as invented)",
    "model-pai-news-sources-not-independent": _NEWS.format(24) + "file_draft's sources SRC-1 and SRC-2 both have "
                                              "organisation 'BNSF Railway' against 'two sources at the same "
                                              "organisation are not independent'",
    "model-pai-news-minor-named-cleared": _NEWS.format(26) + "file_legal_review 'cleared' with no change where "
                                         "lookup_person says age 16, consent_on_file false, against the legal rules",
    "model-pai-news-legal-timeout-invented": _NEWS.format(26) + "lookup_person(Jaylen Ortiz) is an error step at 20, "
                                             "the model calls lookup_person for another name at 21 and clears without "
                                             "retrying: the error is not read as passed over",
    "model-pai-news-correction-skipped": "wrong_target@17/model (legal's get_draft on the story under review, read as "
                                         "the wrong record because the request names the correction's story) ranked "
                                         "first; issue_correction, which the request asks for, is never called and "
                                         "the closing answer says nothing of it",
    "tool-pai-news-person-wrong-record": _NEWS.format(26) + "lookup_person(Jaylen Ortiz) answers a 34-year-old in "
                                         "Pueblo (PR-771204) for the Brush witness: a same-name record whose town "
                                         "differs from the story's",
    "model-mcp-meter-cv-conversion-skipped": _FINDING + "raise_rebill's kwh 500.9 equals the m3 its own reason "
                                             "gives, where the rules' m3 x 1.02264 x CV / 3.6 makes 5,606.6",
    "model-mcp-meter-backbill-window-ignored": _FINDING + "raise_rebill's from_date 2025-06-10 is before the "
                                               "2025-12-05 the back-billing rule names",
    "model-mcp-meter-estimated-read-used": _FINDING + "raise_rebill's to_date 2026-12-01 is a list_reads row of type "
                                           "E, against 'estimated reads are never a basis for a rebill'",
    "model-mcp-meter-rebill-filed-twice": "wrong_target@17/model (the false alarm below) ranked first; the second "
                                          "raise_rebill repeats the first's arguments right after its 'raised' "
                                          "result, against 'at most one rebill per meter'",
    "model-tl-meter-cv-timeout-invented": "tool_error_ignored@9 found at the right step with layer tool; the model went "
                                          "on with a CV (39.0) no call returned - the invention is the model's",
    "model-tl-meter-action-mismatch": _FINDING + "the words at the raise_rebill call say 'from 2025-12-05, the "
                                      "back-billing limit' and its from_date is 2025-06-10",
    "model-tl-meter-volume-correction-omitted": _FINDING + "raise_rebill's kwh 5,482.4 is m3 x CV / 3.6 without the "
                                                "rules' 1.02264 volume correction (5,606.6)",
}
# (every blind alarm - a timestamp read as an id, another deed's status, a receipt's count, the conditional 'don't place the request', a promise on payment - is quiet since af52ff9; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
_METER_READS = ["get_account", "list_reads"]
POLICIES = {
    "openai-ill": {"required_before": {"renew_loan": ["find_patron", "get_loans"],
                                       "place_request": ["find_patron", "find_lenders"]}},
    "pai-news": {"required_before": {"file_draft": ["get_wire_item", "get_source_notes"],
                                     "file_legal_review": ["get_draft"], "schedule_story": ["ask_legal"]}},
    "mcp-meter": {"required_before": {"raise_rebill": [*_METER_READS, "get_calorific_value", "search_tariff_notices"],
                                      "file_finding": _METER_READS}},
    "tl-meter": {"required_before": {"raise_rebill": [*_METER_READS, "get_calorific_value", "search_tariff_notices"],
                                     "file_finding": _METER_READS}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h35-rec-", pairs, produce, kit.through_collector("tl-meter"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
