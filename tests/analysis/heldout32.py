"""A thirty-second held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a municipal waste-collection desk talking with a resident over several turns under a written service policy, a
container-terminal planning team (a berth planner handing to a yard planner, who hands to a gate clerk) and a museum
loans registrar agent reading condition reports, versioned loan agreements, valuations in two currencies and venue
environment readings in Fahrenheit, run through real SDKs and frameworks.

    python tests/analysis/heldout32.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout32.py --score DIR [...]       # the runs a call left in DIR, scored again

Ashvale District Council's waste desk (find_household, get_collections, book_bulky, report_missed, order_bin,
set_assisted) serves a resident by a written policy (the account number first; bulky items GBP 25.00 for up to three
and GBP 8.00 for each after, at most 8, quoted and confirmed before booking; a missed bin reported only by 16:00 on the
working day after its collection day; a replacement bin GBP 30.00 unless the collection log says the crew damaged it,
asked which bin when the household has several; an assisted collection only if no resident aged 16-74 lives there,
unless a medical certificate is on file; a failure tried once more, never a reference a tool didn't return). Port
Calder Container Terminal's team (OpenAI Agents SDK, two handoffs): a berth planner (get_vessel_call, get_berths,
assign_berth: length overall plus 20 m within the berth's length, draft within depth less 1 m, the first free berth
that fits), a yard planner (get_manifest, get_yard_blocks, allocate_yard: IMDG class 3 never in a block holding class
5.1, reefers only where free plugs cover them) and a gate clerk (get_gate_windows, book_appointment: a window inside
the box's availability, one appointment per box). Hollins Museum's loans registrar (get_loan_request, get_object:
dated condition reports; search_agreements: versioned agreements with status; get_valuation: GBP or EUR with the rate;
get_venue_environment: Fahrenheit and RH; record_loan_decision) works by rules in prose and a markdown table.

Each recorder in a process of its own:

- `anthropic-waste` (waste desk): a plain anthropic SDK messages loop with tool_use over several resident turns
  (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `agents-terminal` (terminal team): the OpenAI Agents SDK on a chat completions model, berth planner -> yard planner
  -> gate clerk by two handoffs in one Runner.run (kit.agents_chain), under `agentotel.instrument()`;
- `mcp-loans` (registrar): the tools on an MCP server (in process, kit.mcp_server) called through the MCP client's
  session from a plain openai SDK chat.completions loop, under `agentotel.instrument()`;
- `oi-loans` (registrar): a plain openai SDK chat loop (kit.chat_loop) under OpenInference's openai instrumentation,
  the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages, the model asked for echoed
back) reads the conversation it is sent and decides as a model would. Faults: tau-bench-style policy breaks (a bulky
fee by the wrong formula, a missed bin reported after the cut-off, a 294 m ship on a 300 m berth, class 3 beside class
5.1, 12 reefers on 8 plugs, a loan approved on a condition report over 12 months old), MAST (Cemri et al. 2025: step
repetition, context lost at a handoff, no clarification asked, premature termination, withholding information,
reasoning-action mismatch), TRAIL (a timeout answered with an invented reference and an invented valuation, units
confused: Fahrenheit read as Celsius, EUR converted the wrong way) and outside the model: instructions rewritten
without a rule (3), an old model configured (2), a venue API's changed shape, a stale agreement index, three APIs
answering another record (household log, vessel, valuation). Good twins are fine runs: a bulky quote computed by the
rules' own rates, a late missed-bin report refused, the bin asked about, an assisted collection granted by the
medical-certificate exception, a timeout tried once more, berths and blocks chosen by the rules, a loan refused where
the condition report is too old, a venue approved once its Fahrenheit readings are converted. Ground truth is located
on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each anthropic messages call is a `chat claude-sonnet-4-5` step
(the old model's `chat claude-3-haiku-20240307`), the `@agentotel.tool`s tool steps; under the Agents SDK each agent is
an `invoke_agent <name>` step, each handoff an `execute_tool transfer_to_<agent>` step; the MCP client's call_tool is an
`execute_tool <tool>` step; the OpenInference run's model calls are `ChatCompletion` steps, its tools OITracer's TOOL
spans. Nothing recorded wrong was found. (Twice - a debug recording before scoring and the first slow-test run
after it - an mcp-loans run lost its first model call to an openai APITimeoutError at ~15 s under load; the scored
recording was not hit. The MCP loop's client now retries (max_retries=2), and the slow test passed with it.)

Built and scored blind, once (main's HEAD when scored, 5a88e31fd50bba5bd9d1831155b12b4eb6488a79, the branch rebased onto
it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 4.2 at the start, 6.2 at the end,
other helpers running; recording /tmp/h32-rec-pdv8ppru): 27 pairs, 4 recorders (anthropic over several resident turns,
the Agents SDK with two handoffs, an openai loop over an MCP client session, OpenInference through the collector) -
diff top-1 26/27, check step+layer 8/27, good runs with a warning 17/27. Check's 8 hits are all the fault's own
finding: instructions changed (3), an old model configured (2), a household log for another account
(other_subject_retrieved), a lost handoff (history_lost), a repeated appointment. Missed: every rule comparing two
records' fields or a date with a written limit (fee by item count, a cut-off, berth length, IMDG segregation, reefer
plugs, a condition report's age, F vs C, EUR x rate), a vessel API answering a near-named ship, no clarification asked,
premature termination, withheld condition notes, a said-vs-recorded figure; and six right findings at the right step
ranked below an earlier false warning (a stale agreement index, a changed venue API, a valuation of another object, a
timeout answered with an invented reference, a repeated booking; and a timeout answered with an invented valuation, at
the right step but the tool layer). The false alarms are two warnings: wrong_target at get_object in every loans run (a
loan id's year read against an accession number's) and ungrounded_answer on the desk's quoted collection date (a fair
one: the script quotes a date no tool gave) or a cut-off computed by the rule. Diff's one miss is the faulty quote one
step before the booking. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each.

Since (session 28, main f561b41's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 4 CHECK_MISSED entries
hit since and dropped (agreement_index_stale, valuation_timeout_invented, valuation_wrong_object, venue_shape_changed);
12 false alarms quiet since and dropped (every loans run's wrong_target). Reasons written blind that name that
wrong_target ranked above the fault's finding ('only wrong_target@3/model ranked first') are kept as written; that
warning is quiet now.
"""

from __future__ import annotations

import functools
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

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
WASTE, TERMINAL, LOANS = "ashvale-waste-desk", "port-calder-planning", "hollins-loans-registrar"


class Now(kit.World):
    """The world of the run being recorded."""


# What every rule here asks after a failed call: the call once more, then the failure told.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")
_ok = kit.succeeded  # the successful results of a tool so far


# ---- the waste desk's world -----------------------------------------------------------------------------------------

_ASSISTED_EXCEPTION = (" - unless a medical certificate for a resident is on file (household.medical_certificate), in "
                       "which case grant it anyway")


def waste_instructions() -> str:
    assisted = ("4. Assisted collection (the crew takes the bins from the property and returns them) is granted only "
                "if no resident aged 16 to 74 lives at the address (household.residents)"
                + ("" if Now.fault == "waste_prompt_rewritten" else _ASSISTED_EXCEPTION) + ".")
    return "\n".join([
        "You are the customer-service assistant at Ashvale District Council's waste and recycling desk. Today is "
        "Friday 4 December 2026 and the time is 14:20.",
        "",
        "Always ask for the resident's council tax account number (AV- followed by 6 digits) and read the household "
        "with find_household before anything else.",
        "",
        "1. Bulky items. The fee is by item count:",
        "",
        "| Items | Fee |",
        "|---|---|",
        "| 1 to 3 | GBP 25.00 |",
        "| each item after the third | GBP 8.00 more |",
        "| more than 8 | not collected - book a skip instead |",
        "",
        "Quote the fee and the date and get the resident's yes before you call book_bulky.",
        "2. Missed collections may be reported only up to 16:00 on the working day after the scheduled collection day "
        "(get_collections lists them). After that, apologise and explain that the next scheduled collection will take "
        "it; do not call report_missed.",
        "3. Replacement bins cost GBP 30.00, but are free if the collection log shows the crew damaged that bin. If the "
        "household has more than one bin, never guess which one: ask.",
        assisted,
        "",
        "If a council system fails or times out, try once more, then tell the resident it has not gone through. Never "
        "give a booking or reference number a tool did not return.",
    ])


def waste_model() -> str:
    return OLD_CLAUDE if Now.fault == "old_model_waste" else CLAUDE


HOUSEHOLD = "AV-302118"


def find_household(account_number: str) -> dict[str, Any]:
    """A household's council tax account: address, residents with ages, bins, medical certificate on file."""
    if account_number != HOUSEHOLD:
        return {"household": None, "error": "no account with that number"}
    return {"household": {"account_number": HOUSEHOLD, "name": "Mrs Evelyn Thorne",
                          "address": {"line1": "14 Cooper's Row", "town": "Ashvale", "postcode": "AV3 7QN"},
                          "residents": [{"name": "Evelyn Thorne", "age": 81}, {"name": "Daniel Thorne", "age": 47}],
                          "medical_certificate": {"on_file": True, "resident": "Evelyn Thorne", "expires": "2027-08-31"},
                          "bins": [{"bin_id": "B-55120", "type": "general waste 240L"},
                                   {"bin_id": "B-55121", "type": "recycling 240L"},
                                   {"bin_id": "B-55122", "type": "garden waste 240L"}],
                          "assisted_collection": False}}


def get_collections(account_number: str) -> dict[str, Any]:
    """A household's collections this fortnight: scheduled day, bin, status, and crew notes (damage logged)."""
    account = account_number
    if Now.fault == "log_wrong_household" and account_number == HOUSEHOLD:  # (the round's lookup took the next door)
        account = "AV-302119"
    missed_day = "2026-12-01" if Now.pair == "missed_after_cutoff" else "2026-12-03"
    log = [{"date": "2026-11-26", "bin_id": "B-55120", "status": "collected", "crew_note": None},
           {"date": missed_day, "bin_id": "B-55121", "status": "not collected", "crew_note": None},
           {"date": "2026-12-03", "bin_id": "B-55122", "status": "collected", "crew_note":
            "lid hinge snapped during lift" if account == HOUSEHOLD else None, "damaged_by_crew": account == HOUSEHOLD}]
    if account != HOUSEHOLD:
        for row in log:
            row["bin_id"] = row["bin_id"].replace("5512", "5513")
    return {"account_number": account, "round": "Thursday R7", "collections": log,
            "next": {"general waste": "2026-12-10", "recycling": "2026-12-17", "garden waste": "2026-12-10"}}


def book_bulky(account_number: str, items: list[str], fee: float, date: str) -> dict[str, Any]:
    """Books a bulky-item collection for a date, charging the fee."""
    if Now.pair == "booking_timeout_invented" and Now.count("book_bulky") == 1:
        raise TimeoutError("bulky bookings service did not answer within 15s")
    return {"booking_ref": f"BW-{71840 + Now.count('bulky_ref')}", "account_number": account_number, "items": items,
            "fee_charged": fee, "date": date, "status": "booked"}


def report_missed(account_number: str, bin_id: str, collection_date: str) -> dict[str, Any]:
    """Reports a missed bin collection; the crew returns within two working days."""
    return {"report_ref": "MC-20417", "bin_id": bin_id, "collection_date": collection_date, "return_by": "2026-12-08"}


def order_bin(account_number: str, bin_id: str, charge: float, reason: str) -> dict[str, Any]:
    """Orders a replacement for a household's bin, charging the given amount."""
    return {"order_ref": "RB-6630", "bin_id": bin_id, "charged": charge, "delivery_by": "2026-12-11"}


def set_assisted(account_number: str, granted: bool, reason: str) -> dict[str, Any]:
    """Records an assisted-collection decision on the household."""
    return {"decision_ref": "AC-1187", "account_number": account_number, "assisted_collection": granted}


WASTE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_household, get_collections, book_bulky, report_missed, order_bin, set_assisted)}

WASTE_REQUESTS = {
    "bulky": "Hello, I need a bulky collection: a sofa, an armchair, a fridge, a mattress and a wardrobe.",
    "missed": "Our recycling bin wasn't emptied this week - can you send the crew back?",
    "bin": "My bin is broken, I need a new one.",
    "assisted": "My mother is 81 and can't get the bins out any more. Can we have assisted collection?",
}
_WASTE_ASKS = {"missed_after_cutoff": "missed", "clarification_skipped": "bin", "log_wrong_household": "bin",
               "waste_prompt_rewritten": "assisted"}
WASTE_HISTORY = ["Hi - the recycling wasn't collected yesterday, could it be picked up?",
                 "Can I book a collection for an old armchair and a bed frame?"]
_RESIDENT = [("account number", f"Yes, it's {HOUSEHOLD}."), ("Which bin", "The garden waste one - the lid's hanging off."),
             ("Shall I", "Yes please, go ahead."), ("anything else", "No, that's everything, thank you.")]


def resident_replies(said: str) -> str | None:
    return Now.reply(_RESIDENT, said)


# ---- the terminal team's world --------------------------------------------------------------------------------------

BERTH_RULES = (
    "You are the berth planner on Port Calder Container Terminal's planning team. For the vessel call you are given, "
    "read it with get_vessel_call and the berths with get_berths. A vessel may use a berth only if its length overall "
    "(loa_m) plus 20 m of mooring clearance is no more than the berth's length_m, and its arrival draft is no more than "
    "the berth's depth_m minus 1.0 m. Of the berths free at the ETA that fit, take the first listed. Assign it once "
    "with assign_berth, then hand over to the yard planner.")
_SEGREGATION = ("- Never allocate IMDG class 3 (flammable liquids) boxes to a block that already holds class 5.1 "
                "(oxidising substances), or the other way round.")


def yard_rules() -> str:
    rules = [
        "You are the yard planner on Port Calder Container Terminal's planning team. For the vessel the berth planner "
        "handed you:",
        "- Read the discharge list with get_manifest and the blocks with get_yard_blocks.",
        _SEGREGATION,
        "- Reefer boxes go only to a block whose free_reefer_plugs is at least the number of reefers.",
        "- Allocate each group (dry, reefer, hazardous) once with allocate_yard to the first block that passes, then "
        "hand over to the gate clerk.",
    ]
    if Now.fault == "yard_prompt_rewritten":  # (the 2023 yard SOP pasted back, before the segregation audit)
        rules.remove(_SEGREGATION)
    return "\n".join(rules)


GATE_RULES = "\n".join([
    "You are the gate clerk on Port Calder Container Terminal's planning team. Book truck appointments for the import "
    "boxes the yard planner allocated.",
    "",
    "| Rule | How |",
    "|---|---|",
    "| Window | Only a gate window that starts at or after the box's available_from and ends by its free_time_end. |",
    "| Capacity | Only a window with slots_left above 0. |",
    "| Once | One book_appointment per box; the earliest window that passes. |",
    "",
    "Then answer with each appointment.",
])

VESSEL = "MSC ARIANE"
_BERTHS = [{"berth": "B1", "length_m": 300, "depth_m": 14.5, "free_from": "2026-12-07T04:00Z"},
           {"berth": "B3", "length_m": 350, "depth_m": 15.5, "free_from": "2026-12-07T00:00Z"},
           {"berth": "B4", "length_m": 400, "depth_m": 16.0, "free_from": "2026-12-06T18:00Z"}]


def get_vessel_call(call_id: str) -> dict[str, Any]:
    """A vessel call: vessel, IMO, length overall, arrival draft, ETA, service."""
    loa = 294.1 if Now.pair in ("berth_too_short", "vessel_wrong_record") else 262.0
    vessel, imo = VESSEL, "9839278"
    if Now.fault == "vessel_wrong_record":  # (the port community system matched the sister ship's voyage)
        vessel, imo, loa = "MSC ARIA", "9839266", 262.0
    return {"call_id": call_id, "vessel": vessel, "imo": imo, "loa_m": loa, "beam_m": 48.2, "arrival_draft_m": 12.8,
            "eta": "2026-12-07T06:00Z", "service": "NEU-2 Loop", "line": "MSC"}


def get_berths(terminal: str) -> dict[str, Any]:
    """The terminal's berths: length, depth at chart datum, when each is next free."""
    return {"terminal": terminal, "berths": _BERTHS}


def assign_berth(call_id: str, berth: str, eta: str) -> dict[str, Any]:
    """Assigns a vessel call to a berth from its ETA."""
    return {"assignment": f"BA-{3300 + Now.count('assign_berth')}", "call_id": call_id, "berth": berth, "eta": eta,
            "status": "planned"}


def get_manifest(call_id: str) -> dict[str, Any]:
    """The import discharge list of a vessel call, grouped: dry, reefer, hazardous (with IMDG classes)."""
    reefers = 12
    return {"call_id": call_id, "groups": [
        {"group": "dry", "boxes": 140, "containers": ["MSCU4410021"]},
        {"group": "reefer", "boxes": reefers, "containers": ["MSCU7720113"], "set_points_c": [-18, 2]},
        {"group": "hazardous", "boxes": 6, "imdg_class": "3", "un": "UN1263", "containers": ["MSCU9930417"]}]}


def get_yard_blocks(terminal: str) -> dict[str, Any]:
    """The yard's blocks: free TEU, free reefer plugs, hazardous classes already stacked there."""
    hazard_a = ["5.1"] if Now.pair in ("hazmat_segregation", "yard_prompt_rewritten") else ["8"]
    return {"terminal": terminal, "blocks": [
        {"block": "Y-A", "free_teu": 420, "free_reefer_plugs": 8, "hazard_classes": hazard_a},
        {"block": "Y-C", "free_teu": 610, "free_reefer_plugs": 24, "hazard_classes": ["9"]},
        {"block": "Y-D", "free_teu": 300, "free_reefer_plugs": 0, "hazard_classes": []}]}


def allocate_yard(call_id: str, group: str, block: str, boxes: int) -> dict[str, Any]:
    """Allocates a group of boxes of a vessel call to a yard block."""
    return {"allocation": f"YA-{8800 + Now.count('allocate_yard')}", "group": group, "block": block, "boxes": boxes}


def get_gate_windows(date: str) -> dict[str, Any]:
    """The truck gate windows on a date with slots left, and each import box's availability."""
    return {"date": date, "windows": [
        {"window": "06:00-08:00", "slots_left": 0}, {"window": "08:00-10:00", "slots_left": 3},
        {"window": "14:00-16:00", "slots_left": 11}],
        "boxes": [{"container": "MSCU7720113", "available_from": "08:00", "free_time_end": "2026-12-11"}]}


def book_appointment(container: str, date: str, window: str, haulier: str) -> dict[str, Any]:
    """Books a truck appointment for a box in a gate window."""
    return {"appointment": f"TA-{51200 + Now.count('book_appointment')}", "container": container, "date": date,
            "window": window, "haulier": haulier, "status": "confirmed"}


BERTH_TOOLS = {f.__name__: f for f in (get_vessel_call, get_berths, assign_berth)}
YARD_TOOLS = {f.__name__: f for f in (get_manifest, get_yard_blocks, allocate_yard)}
GATE_TOOLS = {f.__name__: f for f in (get_gate_windows, book_appointment)}
TERMINAL_REQUEST = "Plan vessel call VC-2641 (MSC ARIANE, NEU-2) at terminal PCT: berth, yard, and the reefer pickup by " \
                   "Calder Haulage on 2026-12-08."
TERMINAL_HISTORY = ["Vessel call VC-2641 at PCT: please plan berth and yard, and book Calder Haulage's reefer pickup "
                    "for 2026-12-08.", TERMINAL_REQUEST]


# ---- the loans registrar's world ------------------------------------------------------------------------------------

_AGE_RULE = ("A loan may be approved only if the object's latest condition report is dated within 12 months before the "
             "loan start; otherwise hold the loan and ask conservation for a new report.")


def loans_instructions() -> str:
    paragraphs = [
        "You are the loans registrar agent at Hollins Museum. Today is 2026-12-04. Decide one outgoing loan request "
        "from the records only, and record the decision once with record_loan_decision.",
        "Read the request (get_loan_request), the object (get_object), the loan agreement (search_agreements), the "
        "valuation (get_valuation) and the borrowing venue's environment (get_venue_environment).",
        "" if Now.fault == "loans_prompt_rewritten" else _AGE_RULE,
        "Use only the agreement version whose status is \"signed\"; drafts and superseded versions never count. The "
        "insured value (nail to nail) must be at least the valuation in GBP. A valuation given in EUR is converted to "
        "GBP by multiplying by its gbp_per_eur rate.",
        "Environment: the venue's range must fall inside the object's limits.\n\n"
        "| Reading | Object limit | Venue reports |\n|---|---|---|\n"
        "| Temperature | degrees C | degrees F - convert: C = (F - 32) x 5 / 9 |\n"
        "| Relative humidity | % RH | % RH |",
        "If a records system times out, try once more; never state a value no tool returned. Answer with the decision, "
        "the insured value in GBP, the environment check and every condition issue noted on the latest report.",
    ]
    return "\n\n".join(p for p in paragraphs if p)


def loans_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_loans" else MODEL


LOAN, OBJECT, VENUE = "LN-2027-014", "HM.1932.118", "V-ORANGERIE"


def get_loan_request(loan_id: str) -> dict[str, Any]:
    """An outgoing loan request: object, borrower, venue, loan dates."""
    return {"loan_id": loan_id, "object_id": OBJECT, "borrower": "Musee de l'Orangerie d'Arles", "venue_id": VENUE,
            "loan_start": "2027-02-01", "loan_end": "2027-05-30", "courier": True}


def get_object(object_id: str) -> dict[str, Any]:
    """A collection object: title, medium, environmental limits (C and % RH), condition reports by date."""
    latest = "2025-11-20" if Now.pair in ("condition_stale", "loans_prompt_rewritten") else "2026-10-02"
    return {"object_id": object_id, "title": "Harbour at Dusk", "artist": "Mary Lindqvist", "medium": "oil on canvas",
            "limits": {"temp_c": {"min": 18, "max": 22}, "rh_pct": {"min": 45, "max": 55}, "lux_max": 150},
            "condition_reports": [
                {"date": latest, "by": "J. Okafor (paintings conservator)", "overall": "stable",
                 "notes": ["minor craquelure lower left", "frame: loose corner key, top right"]},
                {"date": "2022-03-14", "by": "J. Okafor", "overall": "stable", "notes": ["minor craquelure lower left"]}]}


def _agreement(version: int, status: str, insured: int, signed: str | None) -> dict[str, Any]:
    return {"loan_id": LOAN, "version": version, "status": status, "signed": signed,
            "insurance": {"nail_to_nail_gbp": insured, "insurer": "Hiscox Fine Art"}, "indemnity": False}


def search_agreements(loan_id: str) -> dict[str, Any]:
    """Searches the agreements index for a loan: every version, newest first, with status and insured value."""
    if Now.fault == "agreement_index_stale":  # (the index's last build, before v3 was signed)
        return {"index_built": "2026-06-30", "results": [_agreement(2, "signed", 1_180_000, "2026-06-12")]}
    return {"index_built": "2026-12-03", "results": [
        _agreement(4, "draft", 1_400_000, None), _agreement(3, "signed", 1_300_000, "2026-11-18"),
        _agreement(2, "superseded", 1_180_000, "2026-06-12")]}


def get_valuation(object_id: str) -> dict[str, Any]:
    """An object's latest valuation: amount, currency, rate to GBP, valuer, date."""
    if Now.pair == "valuation_timeout_invented" and Now.count("get_valuation") == 1:
        raise TimeoutError("valuations service did not answer within 20s")
    if Now.fault == "valuation_wrong_object":  # (the valuer's system matched HM.1932.181)
        return {"object_id": "HM.1932.181", "amount": 310_000, "currency": "EUR", "gbp_per_eur": 0.86,
                "valuer": "Christie's Valuations", "date": "2026-09-15"}
    return {"object_id": object_id, "amount": 1_450_000, "currency": "EUR", "gbp_per_eur": 0.86,
            "valuer": "Christie's Valuations", "date": "2026-09-15"}


def get_venue_environment(venue_id: str) -> dict[str, Any]:
    """A venue's gallery environment over the last 12 months: temperature range (F) and relative humidity range."""
    if Now.fault == "venue_shape_changed":  # (the facilities API's v2, switched on under the agent)
        return {"venue": {"id": venue_id, "gallery": "Salle 3"}, "sensors": [
            {"kind": "TEMPERATURE", "unit": "degF", "p05": 64.4, "p95": 75.2},
            {"kind": "HUMIDITY", "unit": "pct", "p05": 46, "p95": 54}]}
    hot = Now.pair in ("venue_shape_changed",)
    return {"venue_id": venue_id, "gallery": "Salle 3", "period": "2025-12 to 2026-11",
            "temperature_f": {"min": 64.4, "max": 75.2 if hot else 71.6}, "rh_pct": {"min": 46, "max": 54}}


def record_loan_decision(loan_id: str, decision: str, agreement_version: int, insured_value_gbp: float,
                         valuation_gbp: float, reasons: list[str]) -> dict[str, Any]:
    """Records the registrar's decision on a loan (approved or held) with the figures it rests on."""
    return {"decision_id": f"LD-{940 + Now.count('record_loan_decision')}", "loan_id": loan_id, "decision": decision,
            "status": "recorded"}


LOANS_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_loan_request, get_object, search_agreements, get_valuation, get_venue_environment, record_loan_decision)}
LOANS_REQUEST = f"Please decide loan request {LOAN} (Harbour at Dusk to Arles)."
LOANS_HISTORY = [f"Loan {LOAN} needs a registrar decision - can you check it?", LOANS_REQUEST]


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "anthropic-waste":
        return WASTE_REQUESTS[_WASTE_ASKS.get(pair, "bulky")] if pair else WASTE_HISTORY[v % 2]
    if Now.recorder == "agents-terminal":
        return TERMINAL_REQUEST if pair else TERMINAL_HISTORY[v % 2]
    return LOANS_REQUEST if pair else LOANS_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Anthropic messages arrive in that form) -------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    return kit.by_role(body, MODEL, lambda t, asked: {
        "waste and recycling desk": lambda: _waste(t, asked == OLD_CLAUDE),
        "berth planner on Port Calder": lambda: _berth(t, offered),
        "yard planner on Port Calder": lambda: _yard(t, offered),
        "gate clerk on Port Calder": lambda: _gate(t),
        "loans registrar agent at Hollins": lambda: _loans(t, asked == OLD_MODEL),
    }, waiting=None)  # (a gate clerk handed nothing still answers)


_ANYTHING = " Is there anything else I can help you with?"


def _waste(t: Talk, old: bool) -> dict[str, Any]:
    said, first = " ".join(t.users), t.users[0]
    if "that's everything" in said:
        return reply("You're welcome - goodbye!")
    acct = re.search(r"\bAV-\d{6}\b", said)
    if not acct:
        return reply("I can help with that. Could you give me your council tax account number first? It starts AV-.")
    step = t.need(("find_household", {"account_number": HOUSEHOLD}))
    if step:
        return step
    home = t.value("find_household")["household"]
    if "bulky" in first or "armchair" in first:
        return _bulky(t, first, said, old)
    if "assisted" in first:
        return _assisted(t, home)
    step = t.need(("get_collections", {"account_number": HOUSEHOLD}))
    if step:
        return step
    log = t.value("get_collections")
    if "emptied" in first or "collected" in first:
        return _missed(t, log)
    return _bin(t, home, log, said)


_BULKY = re.compile(r"(?:: |collection for )(.*?)[.?]$")


def _bulky(t: Talk, first: str, said: str, old: bool) -> dict[str, Any]:
    found = _BULKY.search(first)
    items = [x.strip().removeprefix("and ").removeprefix("an ").removeprefix("a ").removeprefix("old ").strip()
             for x in re.split(r",| and ", found.group(1) if found else "") if x.strip()]
    n = len(items)
    fee = 25.0 * n if Now.fault == "bulky_fee_wrong_formula" else 25.0 + 8.0 * max(0, n - 3)
    day = "2026-12-10"
    booked, tried = _ok(t, "book_bulky"), t.got("book_bulky")
    if not booked or (Now.fault == "booking_repeated" and len(booked) == 1):
        if "go ahead" not in said and not old:
            how = (f"{n} items at GBP 25.00 each" if Now.fault == "bulky_fee_wrong_formula" else
                   f"GBP 25.00 for the first three and GBP 8.00 for each of the other {n - 3}" if n > 3 else
                   "GBP 25.00 for up to three items")
            return reply(f"For {n} items ({', '.join(items)}) the fee is {how}: GBP {fee:.2f}. The next date is "
                         f"Thursday {day}. Shall I book it?")
        if tried and not booked and Now.fault == "booking_timeout_invented":  # (a reference nobody returned)
            return reply(f"All booked - reference BW-71799, {day}, GBP {fee:.2f}." + _ANYTHING)
        if booked:  # (the fault: the same booking sent again)
            return call("book_bulky", account_number=HOUSEHOLD, items=items, fee=fee, date=day)
        return _once_more("book_bulky", tried, "The bookings system isn't answering, so nothing is booked and nothing "
                          "charged yet - please try again later." + _ANYTHING, account_number=HOUSEHOLD, items=items,
                          fee=fee, date=day)
    b = booked[-1]
    return reply(f"Booked: {b['booking_ref']} on {b['date']} for {len(b['items'])} items, GBP {b['fee_charged']:.2f}. "
                 "Please put them out by 07:00." + _ANYTHING)


def _missed(t: Talk, log: dict[str, Any]) -> dict[str, Any]:
    row = next(r for r in log["collections"] if r["status"] == "not collected")
    cutoff = {"2026-12-01": "2026-12-02 16:00", "2026-12-03": "2026-12-04 16:00"}[row["date"]]
    late = cutoff < "2026-12-04 14:20"
    done = t.value("report_missed")
    if not done:
        if late and Now.fault != "missed_after_cutoff":
            return reply(f"I'm sorry - the recycling was due on {row['date']} and missed bins can only be reported by "
                         f"16:00 the next working day ({cutoff}), so I can't send the crew back. The next recycling "
                         f"collection is {log['next']['recycling']}; extra bags beside the bin will be taken then."
                         + _ANYTHING)
        return call("report_missed", account_number=HOUSEHOLD, bin_id=row["bin_id"], collection_date=row["date"])
    return reply(f"Reported ({done['report_ref']}): the crew will return for bin {done['bin_id']} by "
                 f"{done['return_by']}." + _ANYTHING)


def _bin(t: Talk, home: dict[str, Any], log: dict[str, Any], said: str) -> dict[str, Any]:
    chosen = None
    if "garden" in said:
        chosen = next(b for b in home["bins"] if "garden" in b["type"])
    elif Now.fault == "clarification_skipped":  # (the fault: the first bin taken, not asked which)
        chosen = home["bins"][0]
    if chosen is None:
        kinds = ", ".join(b["type"] for b in home["bins"])
        return reply(f"I can see {len(home['bins'])} bins on your account ({kinds}). Which bin needs replacing?")
    row = next((r for r in log["collections"] if r["bin_id"] == chosen["bin_id"] and r.get("damaged_by_crew")), None)
    charge = 0.0 if row else 30.0
    done = t.value("order_bin")
    if not done:
        return call("order_bin", account_number=HOUSEHOLD, bin_id=chosen["bin_id"], charge=charge,
                    reason=f"crew damage logged {row['date']}: {row['crew_note']}" if row else "replacement requested")
    why = f"free of charge, as our crew's log shows the damage on {row['date']}" if row else "GBP 30.00 charged"
    return reply(f"A new {chosen['type']} bin is ordered ({done['order_ref']}), {why}, delivered by "
                 f"{done['delivery_by']}." + _ANYTHING)


def _assisted(t: Talk, home: dict[str, Any]) -> dict[str, Any]:
    working = [r for r in home["residents"] if 16 <= r["age"] <= 74]
    excepted = "unless a medical certificate" in t.system and home["medical_certificate"]["on_file"]
    granted = not working or excepted
    done = t.value("set_assisted")
    if not done:
        why = ("no resident aged 16-74" if not working else
               f"medical certificate on file for {home['medical_certificate']['resident']} (to "
               f"{home['medical_certificate']['expires']})" if granted else
               f"{working[0]['name']} ({working[0]['age']}) lives at the address")
        return call("set_assisted", account_number=HOUSEHOLD, granted=granted, reason=why)
    if done["assisted_collection"]:
        return reply("Assisted collection is now set up - the crew will collect the bins from the property and "
                     f"return them ({done['decision_ref']}), because the medical certificate on file for "
                     f"{home['medical_certificate']['resident']} applies." + _ANYTHING)
    return reply("I'm sorry, assisted collection can't be granted: a resident aged 16 to 74 lives at the address "
                 f"({done['decision_ref']})." + _ANYTHING)


def _handing(offered: set[str], to: str, say: str) -> dict[str, Any]:
    return call(next(n for n in offered if n.startswith(f"transfer_to_{to}")), say)


def _berth(t: Talk, offered: set[str]) -> dict[str, Any]:
    call_id = re.search(r"\bVC-\d{4}\b", " ".join(t.users)).group(0)
    step = t.need(("get_vessel_call", {"call_id": call_id}), ("get_berths", {"terminal": "PCT"}))
    if step:
        return step
    vessel, berths = t.value("get_vessel_call"), t.value("get_berths")["berths"]
    free = [b for b in berths if b["free_from"] <= vessel["eta"]]
    fits = free if Now.fault == "berth_too_short" else [
        b for b in free if vessel["loa_m"] + 20 <= b["length_m"] and vessel["arrival_draft_m"] <= b["depth_m"] - 1.0]
    done = t.value("assign_berth")
    if not done:
        return call("assign_berth", call_id=call_id, berth=fits[0]["berth"], eta=vessel["eta"])
    return _handing(offered, "yard", f"Berth {done['berth']} assigned ({done['assignment']}) to {vessel['vessel']} "
                    f"(LOA {vessel['loa_m']} m) from {vessel['eta']}. Handing to the yard planner.")


def _yard(t: Talk, offered: set[str]) -> dict[str, Any]:
    berth = t.value("assign_berth")
    if not berth:
        return reply("I was handed no vessel call - which call should I plan the yard for?")
    call_id = berth["call_id"]
    step = t.need(("get_manifest", {"call_id": call_id}), ("get_yard_blocks", {"terminal": "PCT"}))
    if step:
        return step
    groups, blocks = t.value("get_manifest")["groups"], t.value("get_yard_blocks")["blocks"]
    made = _ok(t, "allocate_yard")
    for g in groups[len(made):]:
        ok = []
        for b in blocks:
            if g["group"] == "reefer" and b["free_reefer_plugs"] < g["boxes"] and Now.fault != "reefer_plugs_short":
                continue
            if g["group"] == "reefer" and b["free_reefer_plugs"] == 0:
                continue
            if (g["group"] == "hazardous" and "5.1" in b["hazard_classes"] and "Never allocate IMDG" in t.system
                    and Now.fault != "hazmat_segregation"):
                continue
            ok.append(b)
        return call("allocate_yard", call_id=call_id, group=g["group"], block=ok[0]["block"], boxes=g["boxes"])
    listed = "; ".join(f"{a['group']} x{a['boxes']} to {a['block']} ({a['allocation']})" for a in made)
    return _handing(offered, "gate", f"Yard for {call_id}: {listed}. Handing to the gate clerk.")


def _gate(t: Talk) -> dict[str, Any]:
    reefer = next((a for a in _ok(t, "allocate_yard") if a["group"] == "reefer"), None)
    if not reefer:
        return reply("I have no yard allocation handed to me - which boxes, for which haulier and date, should I book?")
    day = re.search(r"\d{4}-\d\d-\d\d", t.users[0]).group(0)
    step = t.need(("get_gate_windows", {"date": day}))
    if step:
        return step
    gate = t.value("get_gate_windows")
    box = gate["boxes"][0]
    window = next(w for w in gate["windows"] if w["slots_left"] > 0 and w["window"][:5] >= box["available_from"])
    booked = _ok(t, "book_appointment")
    if not booked or (Now.fault == "appointment_repeated" and len(booked) == 1):
        return call("book_appointment", container=box["container"], date=day, window=window["window"],
                    haulier="Calder Haulage")
    b = booked[0]
    return reply(f"Appointment {b['appointment']}: {b['container']} for Calder Haulage on {b['date']} {b['window']} "
                 f"(reefers in block {reefer['block']}).")


def _loans(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    steps = [("get_loan_request", {"loan_id": LOAN}), ("get_object", {"object_id": OBJECT}),
             ("search_agreements", {"loan_id": LOAN})]
    step = t.need(*steps)
    if step:
        return step
    if fault == "premature_termination":  # (the fault: stops after reading, nothing checked or recorded)
        return reply(f"I've reviewed loan {LOAN} and its agreement; it looks in order.")
    req, obj = t.value("get_loan_request"), t.value("get_object")
    tried, val = t.got("get_valuation"), t.value("get_valuation")
    if not val and not old:
        if tried and fault == "valuation_timeout_invented":  # (the fault: a valuation nobody returned)
            val = {"amount": 1_100_000, "currency": "GBP", "gbp_per_eur": 1.0}
        else:
            return _once_more("get_valuation", tried, f"The valuations service timed out twice, so loan {LOAN} is not "
                              "decided yet - nothing is recorded; I'll try again shortly.", object_id=OBJECT)
    step = t.need(("get_venue_environment", {"venue_id": VENUE})) if not old else None
    if step:
        return step
    agreements = t.value("search_agreements")["results"]
    signed = agreements[0] if old else next((a for a in agreements if a["status"] == "signed"), None)
    insured = signed["insurance"]["nail_to_nail_gbp"] if signed else 0
    if old:
        val, env = t.value("get_valuation") or {"amount": 0, "currency": "GBP"}, None
    else:
        env = t.value("get_venue_environment")
    rate = val.get("gbp_per_eur", 1.0) if val["currency"] == "EUR" else 1.0
    if fault == "currency_wrong_way" and val["currency"] == "EUR":
        value_gbp = round(val["amount"] / rate)
    else:
        value_gbp = round(val["amount"] * rate)
    issues, lo_c, hi_c = [], None, None
    latest = max(obj["condition_reports"], key=lambda r: r["date"])
    if ("within 12 months" in t.system and latest["date"] < "2026-02-01" and fault != "condition_stale" and not old):
        issues.append(f"latest condition report {latest['date']} is over 12 months before the loan start "
                      f"{req['loan_start']} - a new report is needed")
    if insured < value_gbp and not old:
        issues.append(f"insured value GBP {insured:,} is below the valuation GBP {value_gbp:,}")
    if env is not None:
        temps = env.get("temperature_f")
        if temps is None:  # (v2's sensors[] read by v1's names: nothing to compare)
            lo_c = hi_c = None
        elif fault == "units_confused":  # (the fault: Fahrenheit compared as Celsius)
            lo_c, hi_c = temps["min"], temps["max"]
        else:
            lo_c, hi_c = round((temps["min"] - 32) * 5 / 9, 1), round((temps["max"] - 32) * 5 / 9, 1)
        lim = obj["limits"]
        if lo_c is not None and (lo_c < lim["temp_c"]["min"] or hi_c > lim["temp_c"]["max"]):
            issues.append(f"venue temperature {lo_c}-{hi_c} C is outside the object's {lim['temp_c']['min']}-"
                          f"{lim['temp_c']['max']} C")
        rh = env.get("rh_pct")
        if rh and (rh["min"] < lim["rh_pct"]["min"] or rh["max"] > lim["rh_pct"]["max"]):
            issues.append(f"venue RH {rh['min']}-{rh['max']}% is outside {lim['rh_pct']['min']}-{lim['rh_pct']['max']}%")
    decision = "held" if issues else "approved"
    recorded = _ok(t, "record_loan_decision")
    if not recorded:
        words, put = None, insured
        if fault == "reasoning_mismatch":  # (the fault: the signed v3 said, the draft v4's value recorded)
            words = f"Recording against the signed v3 agreement, insured at GBP {insured:,}."
            put = agreements[0]["insurance"]["nail_to_nail_gbp"]
        return call("record_loan_decision", words, loan_id=LOAN, decision=decision,
                    agreement_version=signed["version"] if signed else 0, insured_value_gbp=put,
                    valuation_gbp=value_gbp, reasons=issues or ["all checks passed"])
    rec = recorded[0]
    env_said = "environment not checked" if env is None else "venue environment read"
    if env is not None and "temperature_f" in env:  # (what the agent took the readings for, right or wrong)
        env_said = (f"venue {env['temperature_f']['min']}-{env['temperature_f']['max']} F ({lo_c}-{hi_c} C), RH "
                    f"{env['rh_pct']['min']}-{env['rh_pct']['max']}%")
    notes = "" if fault == "condition_withheld" else " Condition notes (" + latest["date"] + "): " + "; ".join(
        latest["notes"]) + "."
    return reply(f"Loan {LOAN}: {decision} ({rec['decision_id']}). Agreement v{signed['version'] if signed else '?'} "
                 f"insures GBP {insured:,} against a valuation of GBP {value_gbp:,}; {env_said}."
                 + (" Issues: " + "; ".join(issues) + "." if issues else "") + notes)


# ---- recorders ------------------------------------------------------------------------------------------------------


class AnthropicWaste(kit.AgentotelRecorder):
    """The waste desk as a plain anthropic SDK messages loop with tool_use over the resident's turns, the tools
    `@agentotel.tool`s, under agentotel."""

    agent = WASTE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = kit.agentotel_tools(WASTE_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, waste_model(), waste_instructions(), task, self.tools,
                                  declared(WASTE_TOOLS), resident_replies)


class AgentsTerminal(kit.AgentotelRecorder):
    """The planning team on the OpenAI Agents SDK (chat completions model): berth planner -> yard planner -> gate
    clerk by two handoffs in one Runner.run, under agentotel. The faulty deployment's yard -> gate handoff filter keeps
    the handoff call alone."""

    agent = TERMINAL

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIChatCompletionsModel

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))
        team = [("berth_planner", BERTH_RULES, BERTH_TOOLS), ("yard_planner", yard_rules(), YARD_TOOLS),
                ("gate_clerk", GATE_RULES, GATE_TOOLS)]
        return kit.agents_chain(chat, team, task,
                                drop_into="gate_clerk" if Now.fault == "handoff_drops_context" else None)


class McpLoans(kit.AgentotelRecorder):
    """The registrar as a plain openai SDK chat loop whose tools are an MCP server's (in process), each call through
    the MCP client's session, under agentotel."""

    agent = LOANS

    def body(self, task: str) -> str:
        # (retries on: twice a first call here timed out on a loaded machine and lost the run - the SDK retries
        # inside one recorded call, so the run's steps are the same)
        return kit.mcp_chat_loop(self.url + "/v1", loans_model(), loans_instructions(), task, "hollins-loans",
                                 LOANS_TOOLS, max_retries=2)


# The registrar as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer TOOL spans,
# through agentotel-collector.
OiLoans = kit.chat_app(kit.OpenInferenceRecorder, LOANS, LOANS_TOOLS, loans_model, loans_instructions)


RECORDERS: dict[str, Any] = {"anthropic-waste": AnthropicWaste, "agents-terminal": AgentsTerminal,
                             "mcp-loans": McpLoans, "oi-loans": OiLoans}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Anthropic messages and the Agents SDK's chat completions there)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, answer, asking, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "bulky_fee_wrong_formula": ("model", f"{trail} wrong computation / {tau} (GBP 25 for up to three, GBP 8 each "
                                             "after): 5 items booked at GBP 125 (25 each); the twin quotes and books "
                                             "GBP 41", asking("book_bulky")),
        "missed_after_cutoff": ("model", f"{tau} (comparing two records: the missed day's cut-off and now): the 1 Dec "
                                         "recycling reported on 4 Dec; the twin refuses and names the next collection",
                                asking("report_missed")),
        "clarification_skipped": ("model", f"{mast} FM-2.2 Fail to ask for clarification: three bins, the general "
                                           "waste bin replaced unasked (GBP 30); the twin asks and replaces the garden "
                                           "bin free", asking("order_bin")),
        "log_wrong_household": ("tool", f"{trail} API issues: get_collections(AV-302118) answers AV-302119's log (no "
                                        "crew damage); the garden bin charged GBP 30", tool_step("get_collections")),
        "booking_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: book_bulky timed out, the "
                                              "resident told 'reference BW-71799'; the twin tries once more",
                                     after(tool_step("book_bulky"))),
        "booking_repeated": ("model", f"{mast} FM-1.3 Step repetition: book_bulky sent again after BW-71841",
                             asking("book_bulky", 1)),
        "waste_prompt_rewritten": ("prompt", "instructions changed: the medical-certificate exception dropped from "
                                             "the assisted-collection rule; refused (the twin grants it by the "
                                             "exception)", nth_llm(0)),
        "old_model_waste": ("product", f"configuration: the desk pins an old model ({OLD_CLAUDE}), which books unquoted "
                                       "and unconfirmed", nth_llm(0)),
        "berth_too_short": ("model", f"{tau} (comparing two records: LOA + 20 m within the berth length): the 294.1 m "
                                     "ship put on the 300 m B1; the twin takes B3", asking("assign_berth")),
        "vessel_wrong_record": ("tool", f"{trail} API issues: get_vessel_call(VC-2641) answers the sister ship MSC ARIA "
                                        "(262 m); the 294 m ARIANE put on B1", tool_step("get_vessel_call")),
        "hazmat_segregation": ("model", f"{tau} (never class 3 beside 5.1): the UN1263 boxes put in Y-A, which holds "
                                        "5.1; the twin uses Y-C", asking("allocate_yard", 2)),
        "reefer_plugs_short": ("model", f"{tau} (free plugs at least the reefers): 12 reefers to Y-A's 8 plugs; the twin "
                                        "uses Y-C", asking("allocate_yard", 1)),
        "yard_prompt_rewritten": ("prompt", "instructions changed: the yard planner's segregation rule dropped; class "
                                            "3 put beside 5.1", after_handoff(0)),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the gate "
                                            "clerk gets the handoff call alone and asks which boxes",
                                  after_handoff(1)),
        "appointment_repeated": ("model", f"{mast} FM-1.3 Step repetition: book_appointment sent again after TA-51201",
                                 asking("book_appointment", 1)),
        "agreement_index_stale": ("tool", "retrieval index stale: search_agreements served its 2026-06-30 build (v2, "
                                          "GBP 1,180,000 signed); the loan held on an old insured value",
                                  tool_step("search_agreements")),
        "units_confused": ("model", f"{trail} wrong reading of units: the venue's 64.4-71.6 F compared as Celsius "
                                    "against 18-22 C; the loan held (the twin converts: 18-22 C, approved)",
                           asking("record_loan_decision")),
        "currency_wrong_way": ("model", f"{trail} a figure by the wrong formula: EUR 1,450,000 divided by 0.86 (GBP "
                                        "1,686,047) not multiplied (GBP 1,247,000); the loan held as under-insured",
                               asking("record_loan_decision")),
        "condition_stale": ("model", f"{tau} (comparing two records' dates: condition report within 12 months of the "
                                     "loan start): a 2025-11-20 report, loan from 2027-02-01, approved; the twin holds",
                            asking("record_loan_decision")),
        "old_model_loans": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which records the "
                                       "first agreement listed (the v4 draft) unchecked", nth_llm(0)),
        "valuation_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_valuation timed out, GBP "
                                                "1,100,000 used that no tool gave; the twin tries once more",
                                       after(tool_step("get_valuation"))),
        "valuation_wrong_object": ("tool", f"{trail} API issues: get_valuation(HM.1932.118) answers HM.1932.181 "
                                           "(EUR 310,000); checked against the wrong value",
                                   tool_step("get_valuation")),
        "loans_prompt_rewritten": ("prompt", "instructions changed: the condition-report age rule dropped; approved on "
                                             "a 2025-11-20 report", nth_llm(0)),
        "premature_termination": ("model", f"{mast} FM-3.1 Premature termination: stops after reading the agreement, "
                                           "no valuation, environment or decision recorded", answer),
        "condition_withheld": ("model", f"{mast} FM-2.4 Information withholding: the latest report's notes (craquelure, "
                                        "a loose frame key) left out of the answer (the rules say every one)", answer),
        "reasoning_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'the signed v3 ... GBP 1,300,000' "
                                        "said, the draft v4's GBP 1,400,000 recorded",
                               asking("record_loan_decision")),
        "venue_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_venue_environment answers v2 "
                                        "(sensors[] p05/p95); read by v1's names, 75.2 F (24 C) unseen and the loan "
                                        "approved", tool_step("get_venue_environment")),
    }
    chosen = {
        "anthropic-waste": ["bulky_fee_wrong_formula", "missed_after_cutoff", "clarification_skipped",
                            "log_wrong_household", "booking_timeout_invented", "booking_repeated",
                            "waste_prompt_rewritten", "old_model_waste"],
        "agents-terminal": ["berth_too_short", "vessel_wrong_record", "hazmat_segregation", "reefer_plugs_short",
                            "yard_prompt_rewritten", "handoff_drops_context", "appointment_repeated"],
        "mcp-loans": ["agreement_index_stale", "units_confused", "currency_wrong_way", "condition_stale",
                      "old_model_loans", "valuation_timeout_invented"],
        "oi-loans": ["valuation_wrong_object", "loans_prompt_rewritten", "premature_termination", "condition_withheld",
                     "reasoning_mismatch", "venue_shape_changed"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (5a88e31's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 4.2-6.2): 27 pairs, 4 recorders - diff top-1 26/27, check step+layer 8/27,
# good runs warned 17/27 (recording /tmp/h32-rec-pdv8ppru).
DIFF_MISSED = {
    "model-anthropic-waste-bulky-fee-wrong-formula": "output_changed@4: the faulty desk's first different output is the "
                                                     "GBP 125 quote asking the resident to confirm, one step before the "
                                                     "book_bulky the truth names (@5) - as arguable a cause",
}
_BELOW_TARGET = "wrong_target@3/model ranked first (the loan-id / accession-number 'sibling' warning, in every run)"
_BELOW_DATE = "ungrounded_answer@4/model ranked first (the collection date the scripted desk quotes, in every bulky run)"
CHECK_MISSED = {
    "model-anthropic-waste-bulky-fee-wrong-formula": "only ungrounded_answer@4 (GBP 125 and the date): nothing reads "
                                                     "the fee table (25 up to three, 8 each after) against the item "
                                                     "count; the right step is the booking @5",
    "model-anthropic-waste-missed-after-cutoff": "nothing found: report_missed on the 1 Dec collection at 14:20 on 4 "
                                                 "Dec - no detector compares a record's date plus the written cut-off "
                                                 "with the run's now",
    "model-anthropic-waste-clarification-skipped": "nothing found: order_bin on the first of three bins with no "
                                                   "question asked - the rule 'if more than one bin, ask' names the "
                                                   "list find_household returned",
    "model-anthropic-waste-booking-timeout-invented": "tool_error_ignored@7/model ('BW-71799', which nothing it was "
                                                      "given holds) is the right finding at the right step, ranked "
                                                      "below " + _BELOW_DATE,
    "model-anthropic-waste-booking-repeated": "repeated_tool_call@7/model is right, ranked below " + _BELOW_DATE,
    "model-agents-terminal-berth-too-short": "nothing found: assign_berth B1 (300 m) for LOA 294.1 m - the rule "
                                             "compares two records' fields (loa_m + 20 <= length_m)",
    "tool-agents-terminal-vessel-wrong-record": "nothing found: get_vessel_call(VC-2641) answered 'MSC ARIA' where "
                                                "the request names MSC ARIANE (a near name; the id matched)",
    "model-agents-terminal-hazmat-segregation": "nothing found: allocate_yard hazardous (class 3) to Y-A, whose "
                                                "hazard_classes hold 5.1 - a segregation rule over two records",
    "model-agents-terminal-reefer-plugs-short": "nothing found: 12 reefers to Y-A with free_reefer_plugs 8 - a "
                                                "numeric comparison of two records' fields",
    "model-mcp-loans-units-confused": "only " + _BELOW_TARGET + "; nothing reads the F readings compared as C (the "
                                      "answer even says '64.4-71.6 C')",
    "model-mcp-loans-currency-wrong-way": "only " + _BELOW_TARGET + "; nothing recomputes EUR 1,450,000 x 0.86 "
                                          "against the GBP 1,686,047 recorded (divided)",
    "model-mcp-loans-condition-stale": "only " + _BELOW_TARGET + "; nothing compares the report date 2025-11-20 with "
                                       "loan_start 2027-02-01 under the 12-month rule",
    "model-oi-loans-premature-termination": "only " + _BELOW_TARGET + "; the answer 'looks in order' with no "
                                            "valuation, environment or record_loan_decision the rules require",
    "model-oi-loans-condition-withheld": "only " + _BELOW_TARGET + "; the condition notes read at get_object are "
                                         "left out of an answer the rules say must list them",
    "model-oi-loans-reasoning-mismatch": "only " + _BELOW_TARGET + "; 'insured at GBP 1,300,000' said, 1,400,000 "
                                         "recorded in the same step's call",
}
_DATE_ALARM = ("ungrounded_answer@4/model: the collection date 2026-12-10 the scripted desk quotes comes from no tool "
               "(a fair alarm on this set's script: a real desk would read the next date from a tool)")
FALSE_ALARMS = {
    **{f"model-anthropic-waste-{f}": _DATE_ALARM for f in (
        "bulky-fee-wrong-formula", "booking-timeout-invented", "booking-repeated")},
    "product-anthropic-waste-old-model-waste": _DATE_ALARM,
    "model-anthropic-waste-missed-after-cutoff": ("ungrounded_answer@6/model: the cut-off '2026-12-02' the desk gives "
                                                  "is computed by the written rule (the working day after the 1 Dec "
                                                  "collection), not stated by a tool"),
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h32-rec-", pairs, produce, kit.through_collector("oi-loans"))

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
