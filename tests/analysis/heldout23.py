"""A twenty-third held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a car-rental desk talking with a renter over several turns under a written rental policy, a county's building-permit
review team (an intake clerk handing to a plan checker, who hands to an inspection scheduler) and a tax-preparation
team reading a client's W-2s, 1099s and 1098s (tax years, corrected versions) and the IRS figures of the year, run
through real SDKs and frameworks.

    python tests/analysis/heldout23.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout23.py --score DIR [...]       # the runs a call left in DIR, scored again

Sierra Car Rental's desk (find_reservations, check_license, update_reservation) serves a renter by a written policy (a
numbered list: the booking looked up first, which one asked when two match, the licence valid past the return date;
a markdown table of charges: a young-renter surcharge waived for Gold members aged 21-24, a one-way fee per route, a
deposit by card type; the damage waiver declined only with personal insurance on file; the total and the deposit told
and the renter's yes before any change; a failure tried once more, never a reference a tool didn't return). The
renter's replies are scripted and said when the desk's message holds their cue ('confirmation number', 'Which one',
'Shall I', 'anything else'). Alder County's permit counter: an intake clerk (get_application, record_intake: a review
fee by a table of added floor area) hands to a plan checker (get_plans, get_parcel, approve_plans, issue_corrections:
setbacks against the parcel's zone, plans in metres converted to feet), who hands to a scheduler (get_permit,
schedule_inspection: inspections in order, a re-inspection before the next, nothing under an open stop-work order, a
timeout tried once more). Ledgerwise Tax Prep: a document agent (search_documents: forms of several years, a W-2c
replacing its W-2) and a preparer (irs_tables by tax year, draft_return: itemize only above the standard deduction,
mortgage interest limited to the first $750,000 of principal, state and local taxes to the year's SALT cap, every
missing form told). Each recorder in a process of its own:

- `openai-rental` (rental desk): a plain openai SDK chat.completions tool loop over several user turns, the tools
  `@agentotel.tool`s, under `agentotel.instrument()`;
- `tl-rental` (rental desk): the same loop under OpenLLMetry's openai instrumentation, the tools traceloop tool spans,
  sent by OTLP through agentotel-collector;
- `agents-permits` (permit team): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`), intake ->
  plan_checker -> scheduler by two handoffs in one Runner.run, under `agentotel.instrument()`;
- `lg-tax` (tax preparation): a LangGraph StateGraph of two `create_react_agent`s (ChatOpenAI): documents -> preparer,
  under `agentotel.instrument()`.

The model on 127.0.0.1 (shapes.serve_models for chat completions; the Responses API read and answered in chat form by
heldout20's `responses_as_chat` / `chat_as_responses`; the model asked for echoed back) reads the conversation it is
sent and decides as a model would. Faults from tau-bench-style policy breaks (a Gold member's surcharge charged, a
waiver declined with no insurance on file, the wrong route's one-way fee, an expired licence rented on, a setback
read against another zone's row, a fee from the wrong bracket, an inspection out of order, a stop-work order
ignored, a W-2's original used beside its W-2c, the mortgage cap skipped), MAST (Cemri et al. 2025: FM-1.1 disobeying
the task specification, FM-1.3 step repetition, FM-1.4 context lost at a handoff, FM-1.5 premature termination, FM-2.2
no clarification, FM-2.4 withholding information, FM-2.6 reasoning-action mismatch), TRAIL (a rate limit and two
timeouts answered with invented values) and outside the model: the instructions rewritten without a rule (2), an old
model configured, a reservation API's changed shape and a document search's, a stale IRS table index, a reservation
API and a parcel API answering another record, a handoff filter that drops the conversation. Good twins are fine
runs: a Gold member's surcharge waived as the exception allows, a waiver kept and explained, a licence refused, a
question asked when two bookings match, a 429 and two timeouts tried once more, corrections issued instead of an
approval, a re-inspection booked before framing, no inspection under a stop-work order, a capped mortgage deduction,
a return left a draft with its missing form told. Ground truth is located on the recorded faulty run by what its
steps did.

How agentotel recorded the SDKs (not the detectors'): the openai loop's calls are `chat gpt-4o-mini` steps (the old
model's `chat gpt-3.5-turbo-0613`), the `@agentotel.tool`s tool steps; the OpenLLMetry run (traceloop workflow root,
its openai spans and tool spans through the collector) has the same step shape; under the Agents SDK on the Responses
API each agent is an `invoke_agent <agent>` step, each handoff an `execute_tool transfer_to_<agent>` step; the
LangGraph graph is an `invoke_agent ledgerwise-tax` step holding an `invoke_agent documents` and an `invoke_agent
preparer` step, each with its model and tool steps. Nothing recorded wrong was found (one cosmetic oddity: check's
instructions_changed evidence quotes the dropped line with its figures zeroed, '(0 m = 0.0 ft)').

Built and scored blind, once (a880f08's detectors - main's HEAD when scored, a880f08a8ab8e207fca8f0cab24a50b6a30a955f,
the branch rebased onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 4.3 at
the start, 5.6 at the end, other helpers running; recording /tmp/h23-rec-j7u63tb6). Before it one development recording
of `openai-rental` alone printed that recorder's table (the entry point always prints it); nothing was changed after
it. 30 pairs, 4 recorders (a plain openai loop, the same loop under OpenLLMetry through the collector, the Agents SDK on
the Responses API with two handoffs, a LangGraph StateGraph of two create_react_agents) - diff top-1 30/30, check
step+layer 14/30, good runs with a warning 19/30. Check's hits: instructions changed (2), an old model configured, a
changed shape (2), a stale IRS index, a parcel API answering another parcel, context lost at the handoff, step
repetition, a reasoning-action mismatch (its own finding at the step, under a policy_violated there) - 10; four more
are hits by place only: an expired licence rented on and the deposit withheld (the quote's ungrounded total, which
every rental run's good twin gets too), an inspection out of order and a stop-work order ignored (the inspection-order
rule's policy_violated, which every framing booking gets, in order or not). Its misses are rules in a record's terms
(a Gold exception to a surcharge, a one-way fee's row, a setback against the zone's row, a fee bracket, a W-2c
replacing its W-2, a mortgage cap on two fields of one record; the CDW rule is found at its step but ranked under the
quote's warning, and its twin gets it too), a question the rules ask for (two bookings), a write before the user's yes,
a run ending on a promise after the yes, a missing form withheld, a reservation API answering another booking, and
three failures (a 429, a timeout, a timeout) found at their step but ranked under an earlier warning or found at the
consequence.
The 19 false alarms: the desk's own sum of the charge table (12 rental runs), an inspection-order rule read as
broken by bookings that keep it (6 permit runs, two with the failure's date read as the booking date), a kept waiver
read as a declined one, a capped deduction by the rule's own formula. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said
each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 5 CHECK_MISSED entries hit
since and dropped (documents_other_taxpayer, rate_limit_invented, reservation_wrong_record, schedule_timeout_invented,
waiver_declined_uninsured); 16 false alarms quiet since and dropped (checker_prompt_rewritten, fee_wrong_bracket,
handoff_drops_context, inspection_out_of_order, old_model_configured, one_way_fee_wrong_row, premature_end,
rate_limit_invented, reasoning_action_mismatch, renter_shape_changed, reservation_unasked, reservation_wrong_record,
schedule_timeout_invented, surcharge_exception_misapplied, total_withheld, yes_not_awaited).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 1 CHECK_MISSED
entry hit and dropped (premature_end); 1 false alarm quiet and dropped (mortgage_cap_skipped).
"""

from __future__ import annotations

import functools
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
RENTAL, PERMITS, TAX = "sierra-rental-desk", "alder-permits", "ledgerwise-tax"


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


# What every team's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That didn't go through - trying once more.")


def _ok(t: Talk, tool: str) -> list[dict[str, Any]]:
    """The successful results of `tool` so far."""
    return [v for _, v in t.got(tool) if isinstance(v, dict)]


# ---- the rental desk's world ---------------------------------------------------------------------------------------

_WAIVER = ("Renters may decline the CDW only if they have personal insurance on file (insurance_on_file is true); "
           "otherwise explain that it can't be declined.")
_WAIVER_MACRO = "Renters may decline the CDW; remove it from the booking if they ask."


def rental_instructions() -> str:
    return "\n".join([
        "You are the rental desk assistant for Sierra Car Rental. Today is Saturday 5 December 2026.",
        "",
        "Before you change anything:",
        "1. Ask the renter for their confirmation number (or the last name on the booking) and look it up with "
        "find_reservations. If more than one reservation matches, ask which one - never pick one yourself.",
        "2. Check the driver's licence with check_license. Never change or confirm a reservation unless the licence "
        "status is \"valid\" and it expires after the return date.",
        "",
        "Charges:",
        "",
        "| Charge | Amount | Applies |",
        "|---|---|---|",
        "| Young renter surcharge | $25.00 a day | renter under 25 at pickup - waived for Gold members aged 21 to 24 |",
        "| Collision damage waiver (CDW) | $19.99 a day | always, unless declined |",
        "| One-way fee SFO -> LAX | $150.00 | once |",
        "| One-way fee SFO -> SEA | $275.00 | once |",
        "| Deposit hold | $300 on a credit card, $500 on a debit card | once, released at return |",
        "",
        _WAIVER_MACRO if Now.fault == "policy_rewritten" else _WAIVER,  # (the FAQ macro pasted over the rule)
        "",
        "Before you call update_reservation, tell the renter the new total and the deposit hold, and make the change "
        "only after they say yes.",
        "",
        "If a call fails or is rate-limited, try it once more; if it fails again, say the change hasn't gone through. "
        "Never quote a change reference or an amount a tool didn't return.",
    ])


def rental_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured" else MODEL


_GOLD_23 = ("surcharge_exception_misapplied", "old_model_configured", "renter_shape_changed")
_UNINSURED = ("waiver_declined_uninsured", "policy_rewritten")
_CONFIRMATIONS = ("SR-47702", "SR-47950", "SR-48213")
_RETURNS = ("LAX", "SEA", "LAX")


def _reservation(confirmation: str, renter: dict[str, Any], ret: str, pickup: str = "2026-12-07") -> dict[str, Any]:
    back = "2026-12-11" if pickup == "2026-12-07" else "2026-12-22"
    return {"confirmation": confirmation, "reservation_id": f"RES-{confirmation[3:]}", "status": "booked",
            "renter": renter, "car_class": "midsize", "daily_rate": 64.0, "currency": "USD", "days": 4,
            "pickup": {"location": "SFO" if pickup == "2026-12-07" else "OAK", "at": f"{pickup}T10:00:00-08:00"},
            "return": {"location": ret, "at": f"{back}T10:00:00-08:00"},
            "extras": [{"code": "CDW", "daily": 19.99}], "payment": {"type": "credit", "brand": "visa", "last4": "4411"}}


def _renter(renter_id: str = "DR-7781", name: str = "Jamie Ortega") -> dict[str, Any]:
    gold = Now.pair in _GOLD_23 and Now.variant == 2
    renter = {"renter_id": renter_id, "name": name, "date_of_birth": "2003-01-22" if gold else "1994-03-18",
              "loyalty": {"program": "Sierra Rewards", "tier": "gold" if gold else "basic"},
              "insurance_on_file": not (Now.pair in _UNINSURED and Now.variant == 2)}
    if Now.fault == "renter_shape_changed":  # the reservations API's 2026-12 version, rolled out under the desk
        renter = {"renter_id": renter_id, "name": name, "date_of_birth": renter["date_of_birth"],
                  "membership": {"program": "Sierra Rewards", "level": renter["loyalty"]["tier"].upper()},
                  "coverage": {"personal_auto_policy": renter["insurance_on_file"]}}
    return renter


def find_reservations(query: str) -> dict[str, Any]:
    """Reservations matching a confirmation number or a renter's last name: renter (id, name, date of birth, loyalty
    tier, insurance on file), car class, daily rate, pickup and return (location, time), extras, payment card."""
    confirmation = _CONFIRMATIONS[Now.variant]
    if Now.fault == "reservation_wrong_record":  # (the lookup cache keyed on the digits, transposed)
        found = [_reservation("SR-48231", _renter("DR-8120", "Jamie Ortiz"), "SFO", "2026-12-18")]
    elif Now.pair == "reservation_unasked" and "ortega" in query.lower():
        found = [_reservation("SR-48977", _renter(), "SFO", "2026-12-18"), _reservation(confirmation, _renter(), "SFO")]
    elif query.strip().upper() == confirmation or "ortega" in query.lower():
        found = [_reservation(confirmation, _renter(), "SFO")]
    else:
        found = []
    out: dict[str, Any] = {"query": query, "count": len(found), "reservations": found}
    if Now.fault == "renter_shape_changed":
        out["api_version"] = "2026-12"
    return out


def check_license(renter_id: str) -> dict[str, Any]:
    """The renter's driver's licence on file: number, state, class, status, expiry."""
    expires = "2026-12-09" if Now.pair == "license_expired_ignored" and Now.variant == 2 else "2029-04-30"
    return {"renter_id": renter_id, "license": {"number": "D4471902", "state": "CA", "class": "C", "status": "valid",
                                                "expires": expires, "verified_at": "2026-12-05T09:14:02-08:00"}}


def update_reservation(reservation_id: str, return_location: str, cdw: bool, young_renter_surcharge: float,
                       one_way_fee: float, deposit_hold: float, total: float) -> dict[str, Any]:
    """Changes a reservation: return location, the damage waiver, the surcharges and fees, the deposit hold, the total."""
    if Now.pair == "rate_limit_invented" and Now.count("update_reservation") == 1:
        raise RuntimeError("429 Too Many Requests: reservations API rate limit, retry after 2s")
    return {"reservation_id": reservation_id, "change_id": f"CH-{30600 + Now.count('changes')}", "status": "confirmed",
            "return_location": return_location, "cdw": cdw, "total": total, "deposit_hold": deposit_hold,
            "currency": "USD", "updated_at": "2026-12-05T09:16:40-08:00"}


RENTAL_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_reservations, check_license,
                                                                       update_reservation)}

_RENTAL_ASKS = ("Hi - I'm picking up a car at SFO on Monday and I'd like to drop it off at {ret} instead of bringing it "
                "back to SFO. And I don't want the damage waiver, please.")


def _renter_script() -> list[tuple[str, str]]:
    said = (("confirmation number", "I don't have it handy - it's under Ortega."),
            ("Which one", "The one picking up at SFO on 7 December.")) if Now.pair == "reservation_unasked" else (
        ("confirmation number", f"It's {_CONFIRMATIONS[Now.variant]}."),)
    return [*said, ("Shall I", "Yes, please go ahead."), ("anything else", "No, that's all - thanks!")]


def renter_replies(said: str) -> str | None:
    """What the renter answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply(_renter_script(), said)


_FEES = {"LAX": 150.0, "SEA": 275.0, "SFO": 0.0}


def _age(born: str, on: str) -> int:
    return int(on[:4]) - int(born[:4]) - (on[5:10] < born[5:10])


def _rental_terms(t: Talk, res: dict[str, Any], old: bool) -> dict[str, Any]:
    """The change as the desk works it out from the policy it was given and the booking it read."""
    fault, renter = Now.fault, res["renter"]
    ret = re.search(r"drop it off at (\w+)", t.users[0]).group(1)  # type: ignore[union-attr]
    days = res["days"]
    age = _age(renter["date_of_birth"], res["pickup"]["at"])
    gold = (renter.get("loyalty") or {}).get("tier") == "gold"  # (v1's names)
    waived = gold and 21 <= age <= 24 and not old and fault != "surcharge_exception_misapplied"
    surcharge = 25.0 * days if age < 25 and not waived else 0.0
    declines = "don't want the damage waiver" in t.users[0]
    may = (renter.get("insurance_on_file") is True or "only if they have personal insurance" not in t.system
           or fault == "waiver_declined_uninsured")
    cdw = not (declines and may)
    fee = 275.0 if fault == "one_way_fee_wrong_row" else _FEES[ret]
    deposit = 300.0 if res["payment"]["type"] == "credit" else 500.0
    total = round(res["daily_rate"] * days + surcharge + (19.99 * days if cdw else 0) + fee, 2)
    return {"ret": ret, "days": days, "age": age, "gold_waived": waived and age < 25, "surcharge": surcharge,
            "declines": declines, "cdw": cdw, "fee": fee, "deposit": deposit, "total": total}


def _rental(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    found = t.value("find_reservations")
    if found is None:
        if len(t.users) < 2:
            return reply("Happy to help with that. What's your confirmation number, or the last name on the booking?")
        named = re.search(r"SR-\d+", t.users[1])
        return call("find_reservations", query=named.group(0) if named else "Ortega")
    matches = found.get("reservations") or []
    if not matches:
        return reply("I couldn't find that booking - could you check the confirmation number?")
    if len(matches) > 1:
        picked = next((u for u in t.users if "7 December" in u), None)
        if picked is None and fault != "reservation_unasked":
            listed = "; ".join(f"{m['confirmation']} (pickup {m['pickup']['location']} on {m['pickup']['at'][:10]})"
                               for m in matches)
            return reply(f"I found two reservations under Ortega: {listed}. Which one would you like to change?")
        res = next((m for m in matches if m["pickup"]["at"].startswith("2026-12-07")), matches[0]) if picked else matches[0]
    else:
        res = matches[0]
    renter, rid = res["renter"], res["confirmation"]
    licence = t.value("check_license")
    if licence is None:
        return call("check_license", renter_id=renter["renter_id"])
    lic, back = licence["license"], res["return"]["at"][:10]
    if not (lic["status"] == "valid" and lic["expires"] > back) and fault != "license_expired_ignored":
        return reply(f"I'm sorry - I can't change {rid}: the licence on file ({lic['state']} {lic['number']}) expires on "
                     f"{lic['expires']}, before the car is due back on {back}. Once you have the renewed licence we can "
                     "update the booking at the counter.")
    terms = _rental_terms(t, res, old)
    args = {"reservation_id": res["reservation_id"], "return_location": terms["ret"], "cdw": terms["cdw"],
            "young_renter_surcharge": terms["surcharge"], "one_way_fee": terms["fee"],
            "deposit_hold": terms["deposit"], "total": terms["total"]}
    yes = "Yes, please go ahead." in t.users
    tried, done = t.got("update_reservation"), _ok(t, "update_reservation")
    if not yes and not tried and fault != "yes_not_awaited":
        return reply(_quote(rid, res, terms))
    if not done:
        if tried and fault == "rate_limit_invented":
            return reply(f"Done - {rid} now goes back at {terms['ret']}, new total ${terms['total']:.2f}. Your change "
                         "reference is CH-30588. Is there anything else I can help with?")
        if yes and not tried and fault == "premature_end":
            return reply(f"Great - I'll update {rid} now.")
        return _once_more("update_reservation", tried, f"I'm sorry - the change to {rid} hasn't gone through: our "
                          "reservations system is rate-limiting requests. Nothing has changed on your booking; please "
                          "try again in a few minutes.", **args)
    if "No, that's all - thanks!" in t.users:
        return reply("You're welcome - have a great trip!")
    changed = done[0]
    return reply(f"Done - {rid} now goes back at {terms['ret']} on {back}, total ${changed['total']:.2f} with a "
                 f"${changed['deposit_hold']:.0f} deposit hold. Change reference {changed['change_id']}. Is there anything "
                 "else I can help with?")


def _quote(rid: str, res: dict[str, Any], terms: dict[str, Any]) -> str:
    parts = [f"Here's the change for {rid}: you'd return the car at {terms['ret']} on {res['return']['at'][:10]}.",
             f"{terms['days']} days at ${res['daily_rate']:.2f} is ${res['daily_rate'] * terms['days']:.2f}"]
    if terms["surcharge"]:
        parts.append(f"the young-renter surcharge is ${terms['surcharge']:.2f} ($25.00 a day, as you're "
                     f"{terms['age']})")
    if terms["gold_waived"]:
        parts.append("as a Gold member aged 21-24 your young-renter surcharge is waived")
    if terms["cdw"] and terms["declines"]:
        parts.append("you don't have personal insurance on file, so the damage waiver can't be declined - it stays "
                     f"at $19.99 a day (${19.99 * terms['days']:.2f})")
    elif terms["cdw"]:
        parts.append(f"the damage waiver is ${19.99 * terms['days']:.2f}")
    else:
        parts.append("the damage waiver comes off, as you have personal insurance on file")
    parts.append(f"the one-way fee to {terms['ret']} is ${terms['fee']:.2f}")
    text = "; ".join(parts) + f". New total: ${terms['total']:.2f}."
    if Now.fault != "total_withheld":
        text += (f" We'll place a ${terms['deposit']:.0f} deposit hold on your {res['payment']['type']} card ending "
                 f"{res['payment']['last4']} at pickup, released when you return the car.")
    return text + " Shall I make the change?"


# ---- the permit team's world ---------------------------------------------------------------------------------------

INTAKE_RULES = "\n".join([
    "You are the intake clerk at Alder County's building permit counter. You take in permit revisions.",
    "- Read the application with get_application.",
    "- Work out the plan-review fee from this table by the floor area the revision adds (added_area_sqft), and record "
    "it with record_intake:",
    "",
    "| Added floor area | Review fee |",
    "|---|---|",
    "| up to 200 sq ft | $180 |",
    "| 201 to 500 sq ft | $360 |",
    "| over 500 sq ft | $720 |",
    "",
    "- Then hand the application to the plan checker (transfer_to_plan_checker), saying its id and the fee recorded.",
])
_METRES = "Plans sometimes give setbacks in metres: convert them (1 m = 3.281 ft) before you compare."


def checker_rules() -> str:
    lines = [
        "You are the plan checker for Alder County. For the application handed to you, read the revised plans with "
        "get_plans and the parcel with get_parcel, and check every setback against the minimums of the parcel's zone:",
        "",
        "Zone R-1: front 25 ft, side 5 ft, rear 20 ft. Zone R-2: front 20 ft, side 5 ft, rear 15 ft. Zone C-1: front "
        "10 ft, side 0 ft, rear 10 ft.",
        "",
        _METRES,
        "",
        "If every setback meets its minimum, approve with approve_plans and hand over to the inspection scheduler "
        "(transfer_to_scheduler). If any falls short, call issue_corrections listing each one and stop: the revision "
        "goes back to the applicant and nothing is scheduled.",
    ]
    if Now.fault == "checker_prompt_rewritten":  # (the rules re-pasted from the 2019 feet-only checklist)
        lines.remove(_METRES)
    return "\n".join(lines)


SCHEDULER_RULES = (
    "You schedule building inspections for Alder County. Read the permit with get_permit first. Inspections go in "
    "this order: footing, foundation, framing, insulation, final - never schedule one before every earlier one has "
    "passed; if an earlier one failed, book its re-inspection instead and tell the contractor why. A permit with an "
    "open stop-work order gets no inspection at all until the order is lifted: tell the contractor and stop. Book with "
    "schedule_inspection on the earliest open date get_permit lists. If it fails or times out, try once more; never "
    "give a booking number the tool did not return. Finish with one message to the contractor saying what was booked "
    "(type, date, booking number) or why nothing was.")

_APPS = ("BP-26-0377-R1", "BP-26-0391-R1", "BP-26-0413-R2")
_SHORT = ("setback_wrong_zone", "parcel_wrong_record")
_FOUNDATION_FAILED = ("inspection_out_of_order", "reasoning_action_mismatch")
ZONES = {"R-1": {"front": 25, "side": 5, "rear": 20}, "R-2": {"front": 20, "side": 5, "rear": 15},
         "C-1": {"front": 10, "side": 0, "rear": 10}}


def _permit_of(application_id: str) -> str:
    return application_id.rsplit("-", 1)[0]


def get_application(application_id: str) -> dict[str, Any]:
    """A permit application or revision: permit, address, parcel, applicant, the work, the floor area it adds."""
    return {"application_id": application_id, "permit_id": _permit_of(application_id), "type": "revision",
            "address": "1187 Larch St, Alder Falls", "parcel_id": "052-114-09", "submitted": "2026-12-02",
            "applicant": {"name": "Halvorsen Builders", "license": "CSLB 884120", "contact": "ops@halvorsen.example"},
            "revision": {"number": int(application_id[-1]), "description": "rear addition enlarged, second bathroom",
                         "added_area_sqft": 340 if Now.variant == 2 else 150},
            "inspection_requested": "framing", "documents": ["A-101 site plan", "A-201 floor plan", "S-101 framing"]}


def record_intake(application_id: str, review_fee: float, complete: bool) -> dict[str, Any]:
    """Records the intake of an application: the plan-review fee charged and whether the submittal is complete."""
    return {"intake_id": "IN-20551", "application_id": application_id, "review_fee": review_fee,
            "invoice": {"number": "AC-INV-77120", "amount": review_fee, "due": "2026-12-19"}, "complete": complete}


def get_plans(application_id: str) -> dict[str, Any]:
    """The revised plans' site data: the parcel, each setback as drawn (value and unit), heights, sheets."""
    rear = 5.8 if Now.pair in _SHORT else 6.4
    return {"application_id": application_id, "parcel_id": "052-114-09", "sheet": "A-101 rev 2",
            "setbacks": [{"side": "front", "value": 8.2, "unit": "m"}, {"side": "side", "value": 1.9, "unit": "m"},
                         {"side": "rear", "value": rear, "unit": "m"}],
            "height_ft": 24.5, "stories": 2, "drawn_by": "Marsh & Ives Architects"}


def get_parcel(parcel_id: str) -> dict[str, Any]:
    """A parcel: assessor's number, zone, lot size, overlays, owner."""
    zone, number = "R-1", parcel_id
    if Now.fault == "parcel_wrong_record":  # (the GIS lookup matched the neighbouring parcel's transposed number)
        zone, number = "R-2", "052-114-90"
    return {"parcel_id": number, "zone": zone, "lot_sqft": 6250, "overlays": ["tree preservation"],
            "owner": "Lindqvist Family Trust", "address": "1187 Larch St" if number == parcel_id else "1190 Larch St"}


def approve_plans(application_id: str, notes: str) -> dict[str, Any]:
    """Approves a revision's plans (the permit is amended)."""
    return {"application_id": application_id, "status": "approved", "approval_id": "AP-9031",
            "permit_id": _permit_of(application_id)}


def issue_corrections(application_id: str, items: list[str]) -> dict[str, Any]:
    """Sends a revision back to the applicant with the corrections it needs."""
    return {"application_id": application_id, "status": "corrections_required", "letter_id": "CL-4417",
            "items": items}


def get_permit(permit_id: str) -> dict[str, Any]:
    """A permit: status, any stop-work order, its inspections so far (type, result, date, notes), open dates."""
    foundation = {"type": "foundation", "result": "passed", "date": "2026-11-03", "inspector": "R. Tamez", "notes": ""}
    if Now.pair in _FOUNDATION_FAILED:
        foundation.update(result="failed", notes="anchor bolts missing at rear wall; re-inspection required")
    stop = None
    if Now.pair == "stop_work_ignored":
        stop = {"order_id": "SWO-2211", "issued": "2026-12-01", "status": "open",
                "reason": "framing started beyond the approved plans before the revision was approved"}
    return {"permit_id": permit_id, "status": "issued", "address": "1187 Larch St", "stop_work": stop,
            "inspections": [{"type": "footing", "result": "passed", "date": "2026-10-14", "inspector": "R. Tamez",
                             "notes": ""}, foundation],
            "open_dates": ["2026-12-08", "2026-12-09", "2026-12-11"]}


def schedule_inspection(permit_id: str, inspection: str, date: str) -> dict[str, Any]:
    """Books an inspection of a permit on a date; answers the booking number and the window."""
    if Now.pair == "schedule_timeout_invented" and Now.count("schedule_inspection") == 1:
        raise TimeoutError("inspections calendar did not answer within 10s")
    return {"booking": "INS-61207", "permit_id": permit_id, "inspection": inspection, "date": date,
            "window": "08:00-12:00", "inspector": "R. Tamez"}


INTAKE_TOOLS = {f.__name__: f for f in (get_application, record_intake)}
CHECKER_TOOLS = {f.__name__: f for f in (get_plans, get_parcel, approve_plans, issue_corrections)}
SCHEDULER_TOOLS = {f.__name__: f for f in (get_permit, schedule_inspection)}


def _intake(t: Talk) -> dict[str, Any]:
    app = t.value("get_application")
    if app is None:
        return call("get_application", application_id=re.search(r"BP-\d+-\d+-R\d", t.users[0]).group(0))  # type: ignore[union-attr]
    area = app["revision"]["added_area_sqft"]
    fee = 180.0 if area <= 200 or Now.fault == "fee_wrong_bracket" else 360.0 if area <= 500 else 720.0
    recorded = t.value("record_intake")
    if recorded is None:
        return call("record_intake", application_id=app["application_id"], review_fee=fee, complete=True)
    return reply(f"{app['application_id']} taken in ({app['revision']['description']}, {area} sq ft added); review fee "
                 f"${recorded['review_fee']:.0f} recorded on {recorded['invoice']['number']}. Handing it to plan check.",
                 ("transfer_to_plan_checker", {}))


def _checker(t: Talk) -> dict[str, Any]:
    named = re.search(r"BP-\d+-\d+-R\d", " ".join(t.users))
    if named is None:
        return reply("Which application should I check? The handoff reached me without an application id.")
    app = named.group(0)
    plans = t.value("get_plans")
    if plans is None:
        return call("get_plans", application_id=app)
    parcel = t.value("get_parcel")
    if parcel is None:
        return call("get_parcel", parcel_id=plans["parcel_id"])
    zone = "R-2" if Now.fault == "setback_wrong_zone" else parcel["zone"]
    minimum = ZONES[zone]
    short = []
    for s in plans["setbacks"]:
        feet = s["value"] * 3.281 if s["unit"] == "m" and "1 m = 3.281 ft" in t.system else s["value"]
        if feet < minimum[s["side"]]:
            short.append(f"{s['side']} setback {s['value']} {s['unit']} ({feet:.1f} ft) is under zone {zone}'s "
                         f"{minimum[s['side']]} ft")
    drawn = ", ".join(f"{s['side']} {s['value']} {s['unit']}" for s in plans["setbacks"])
    if short:
        sent = t.value("issue_corrections")
        if sent is None:
            return call("issue_corrections", application_id=app, items=short)
        return reply(f"{app} needs corrections ({sent['letter_id']}): " + "; ".join(short) + ". It goes back to the "
                     "applicant; no inspection is scheduled.")
    approved = t.value("approve_plans")
    if approved is None:
        return call("approve_plans", application_id=app, notes=f"Setbacks ({drawn}) meet zone {zone}.")
    return reply(f"{app} approved ({approved['approval_id']}): setbacks {drawn} meet zone {zone}. Over to scheduling "
                 f"for the framing inspection on {approved['permit_id']}.", ("transfer_to_scheduler", {}))


_ORDER = ("footing", "foundation", "framing", "insulation", "final")


def _scheduler(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    named = re.search(r"BP-\d+-\d+", " ".join(t.users))
    permit = t.value("get_permit")
    if permit is None:
        return call("get_permit", permit_id=named.group(0) if named else "")  # type: ignore[union-attr]
    pid, stop = permit["permit_id"], permit["stop_work"]
    if stop and stop["status"] == "open" and fault != "stop_work_ignored":
        return reply(f"No inspection booked for {pid}: stop-work order {stop['order_id']} (issued {stop['issued']}: "
                     f"{stop['reason']}) is open. Inspections resume once the order is lifted.")
    results = {i["type"]: i for i in permit["inspections"]}
    due = next(k for k in _ORDER if results.get(k, {}).get("result") != "passed")
    kind, say = due, None
    if due != "framing":
        failed = results[due]
        say = f"The {due} inspection failed on {failed['date']} ({failed['notes']}), so I'm booking its re-inspection first."
        if fault in ("inspection_out_of_order", "reasoning_action_mismatch"):
            kind = "framing"
        if fault == "inspection_out_of_order":
            say = None
    tried, done = t.got("schedule_inspection"), _ok(t, "schedule_inspection")
    date = permit["open_dates"][0]
    if not done:
        if tried and fault == "schedule_timeout_invented":
            return reply(f"Booked: {kind} inspection for {pid} on {date}, 08:00-12:00, booking INS-61185.")
        return _once_more("schedule_inspection", tried, f"I couldn't book the {kind} inspection for {pid}: the "
                          "inspections calendar timed out twice. Nothing is booked yet; please call the counter.",
                          say, permit_id=pid, inspection=kind, date=date)
    booked = done[0]
    why = (f" Framing has to wait: the {due} inspection failed ({results[due]['notes']}) and must pass first."
           if due != "framing" and booked["inspection"] == due else "")
    return reply(f"Booked: {booked['inspection']} inspection for {pid} on {booked['date']}, {booked['window']}, "
                 f"booking {booked['booking']}.{why}")


# ---- the tax-preparation team's world ------------------------------------------------------------------------------

DOCUMENTS_RULES = "\n".join([
    "You gather a client's tax documents for Ledgerwise Tax Prep. Call search_documents with the taxpayer id and the "
    "tax year asked, then:",
    "* use only forms for that tax year;",
    "* a corrected form (corrected: true, such as a W-2c) replaces the original from the same payer - use the corrected "
    "figures, never the original's;",
    "* list every form the client mentioned that you did not find.",
    "Answer the preparer with each form you used (form, payer, doc id, its figures) and anything missing.",
])
PREPARER_RULES = "\n".join([
    "You prepare the federal return from the forms the document agent listed. Look up the year's figures with "
    "irs_tables for the return's tax year - never a figure from memory.",
    "",
    "Deductions:",
    "- Itemize only when the itemized total is more than the standard deduction for the filing status.",
    "- Mortgage interest is deductible only on the first $750,000 of acquisition debt: when the 1098's outstanding "
    "principal is more than that, deduct interest x 750,000 / principal.",
    "- State and local taxes (state income tax withheld plus property tax) are deductible up to the year's SALT cap.",
    "",
    "Draft the return once with draft_return. Then tell the client the figures and anything still missing: a return "
    "missing a form the client mentioned stays a draft, and you say which form.",
    "If a tool fails or times out, try once more; if it fails again, say so and stop.",
])

_TAXPAYERS = (("TP-2101", "Morgan Reyes"), ("TP-2150", "Lee Okafor"), ("TP-2208", "Dana Whitfield"))
TAX_YEAR = 2025


def _doc(doc_id: str, form: str, year: int, payer: str, boxes: dict[str, float], received: str,
         **more: Any) -> dict[str, Any]:
    return {"doc_id": doc_id, "form": form, "tax_year": year, "payer": payer, "corrected": False,
            "received": received, "boxes": boxes, **more}


def search_documents(taxpayer_id: str, tax_year: int) -> dict[str, Any]:
    """Searches the client's uploaded tax documents: doc id, form, tax year, payer, corrected flag, boxes; ranked by
    relevance to the year (other years' forms can appear)."""
    tp, name = _TAXPAYERS[Now.variant]
    if Now.fault == "documents_other_taxpayer":  # (the portal's search answered for the client whose id it indexed last)
        tp, name = "TP-2280", "Dana Whitman"
    principal = 900000.0 if Now.pair == "mortgage_cap_skipped" else 612000.0
    docs = [_doc("D-5501", "W-2", 2025, "Brightline Logistics" if tp != "TP-2280" else "Parallax Media",
                 {"1_wages": 98400.0, "2_federal_withheld": 14210.0, "17_state_tax": 5800.0}, "2026-01-28"),
            _doc("D-5520", "1099-INT", 2025, "Coastline Credit Union", {"1_interest": 1240.0}, "2026-02-02"),
            _doc("D-5532", "1098", 2025, "Harbor Mortgage", {"1_mortgage_interest": 31500.0,
                                                             "2_outstanding_principal": principal,
                                                             "10_property_tax": 8900.0}, "2026-01-30"),
            _doc("D-4410", "W-2", 2024, "Brightline Logistics", {"1_wages": 91250.0, "2_federal_withheld": 13020.0,
                                                                 "17_state_tax": 5390.0}, "2025-01-29")]
    if Now.variant == 2 and tp != "TP-2280":  # (the employer's W-2c, issued after a payroll fix)
        docs.insert(1, _doc("D-5588", "W-2c", 2025, "Brightline Logistics",
                            {"1_wages": 96900.0, "2_federal_withheld": 14210.0, "17_state_tax": 5710.0}, "2026-02-20",
                            corrected=True, corrects="D-5501"))
    if Now.fault == "docs_shape_changed":  # the portal's v3 search, switched on under the team
        return {"api": "v3", "taxpayer": {"id": tp}, "hits": [
            {"id": d["doc_id"], "type": d["form"], "year": d["tax_year"], "issuer": {"name": d["payer"]},
             "amendment": {"is_corrected": d["corrected"], "replaces": d.get("corrects")},
             "fields": [{"box": k.split("_", 1)[0], "label": k.split("_", 1)[1], "value": v}
                        for k, v in d["boxes"].items()]} for d in docs]}
    return {"taxpayer": {"id": tp, "name": name, "filing_status": "single"}, "tax_year": tax_year, "documents": docs}


def irs_tables(tax_year: int) -> dict[str, Any]:
    """The IRS figures of a tax year from the firm's table index: standard deductions by filing status, the SALT cap,
    the mortgage debt limit, the source publication."""
    if Now.pair == "table_timeout_invented" and Now.count("irs_tables") == 1:
        raise TimeoutError("tax table index did not answer within 8s")
    if Now.fault == "irs_table_stale":  # (the index's last build predates the 2025 figures)
        return {"tax_year": 2024, "source": "Rev. Proc. 2023-34", "index_built": "2024-11-02",
                "standard_deduction": {"single": 14600, "married_joint": 29200, "head_of_household": 21900},
                "salt_cap": {"single": 10000, "married_separate": 5000}, "mortgage_debt_limit": 750000}
    return {"tax_year": tax_year, "source": "Rev. Proc. 2025-32 / P.L. 119-21", "index_built": "2026-11-20",
            "standard_deduction": {"single": 15750, "married_joint": 31500, "head_of_household": 23625},
            "salt_cap": {"single": 40000, "married_separate": 20000}, "mortgage_debt_limit": 750000}


def draft_return(taxpayer_id: str, tax_year: int, wages: float, interest: float, federal_withheld: float,
                 deduction: str, deduction_amount: float, forms: list[str]) -> dict[str, Any]:
    """Drafts a federal return (Form 1040): income, the deduction taken, withholding; answers the tax and the refund."""
    taxable = max(0.0, wages + interest - deduction_amount)
    tax = round(5578.5 + 0.22 * max(0.0, taxable - 48475), 2) if taxable > 48475 else round(taxable * 0.11, 2)
    return {"return_id": f"RT-25-{880 + Now.count('draft_return')}", "taxpayer_id": taxpayer_id,
            "tax_year": tax_year, "status": "draft", "agi": wages + interest, "deduction": deduction,
            "deduction_amount": deduction_amount, "taxable_income": taxable, "tax": tax,
            "refund": round(federal_withheld - tax, 2), "forms": forms}


DOCUMENTS_TOOLS = {f.__name__: f for f in (search_documents,)}
PREPARER_TOOLS = {f.__name__: f for f in (irs_tables, draft_return)}


def _forms(t: Talk) -> tuple[list[dict[str, Any]], list[str], str, str]:
    """The forms the document agent uses (v1's names), what the client mentioned that is not there, the taxpayer."""
    found = t.value("search_documents") or {}
    docs = [d for d in found.get("documents") or () if d.get("tax_year") == TAX_YEAR]
    replaced = {d.get("corrects") for d in docs if d.get("corrected")}
    if Now.fault == "corrected_ignored":
        docs = [d for d in docs if not d.get("corrected")]
    else:
        docs = [d for d in docs if d["doc_id"] not in replaced]
    mentioned = {"W-2": "W-2", "1099-INT": "1099-INT", "1098": "1098", "1099-DIV": "1099-DIV"}
    missing = [f for f in mentioned if f in t.users[0] and not any(d["form"].startswith(f) for d in docs)]
    taxpayer = found.get("taxpayer") or {}
    return docs, missing, taxpayer.get("id", ""), taxpayer.get("name", "")


def _documents(t: Talk) -> dict[str, Any]:
    if t.value("search_documents") is None:
        return call("search_documents", taxpayer_id=re.search(r"TP-\d+", t.users[0]).group(0),  # type: ignore[union-attr]
                    tax_year=TAX_YEAR)
    docs, missing, tp, name = _forms(t)
    if not docs:
        return reply(f"I found no {TAX_YEAR} forms for this client in the document search: nothing to prepare from yet.")
    listed = "\n".join(f"- {d['form']} {d['payer']} ({d['doc_id']}{', corrected' if d['corrected'] else ''}): "
                       + ", ".join(f"box {k.replace('_', ' ')} {v:,.2f}" for k, v in d["boxes"].items()) for d in docs)
    gap = f"\nMissing: {', '.join(missing)} (mentioned by the client, not uploaded)." if missing else ""
    return reply(f"Forms for {name} ({tp}), tax year {TAX_YEAR}:\n{listed}{gap}")


def _box(docs: list[dict[str, Any]], form: str, box: str) -> float:
    return sum(d["boxes"].get(box, 0.0) for d in docs if d["form"].startswith(form))


def _preparer(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    docs, missing, tp, _ = _forms(t)
    if not docs:
        return reply("I can't draft a return: the document agent found no forms for the year. Please ask the client to "
                     "upload their W-2 and 1099s.")
    table, tried = t.value("irs_tables"), t.got("irs_tables")
    if table is None:
        if tried and fault == "table_timeout_invented":
            table = {"tax_year": TAX_YEAR, "standard_deduction": {"single": 14600}, "salt_cap": {"single": 10000}}
        else:
            return _once_more("irs_tables", tried, "The IRS table index timed out twice, so I haven't drafted the "
                              "return - I'll try again when it answers.", tax_year=TAX_YEAR)
    wages, interest = _box(docs, "W-2", "1_wages"), _box(docs, "1099-INT", "1_interest")
    withheld = _box(docs, "W-2", "2_federal_withheld")
    mortgage, principal = _box(docs, "1098", "1_mortgage_interest"), _box(docs, "1098", "2_outstanding_principal")
    if principal > 750000 and fault != "mortgage_cap_skipped":
        mortgage = round(mortgage * 750000 / principal, 2)
    salt = min(_box(docs, "W-2", "17_state_tax") + _box(docs, "1098", "10_property_tax"), table["salt_cap"]["single"])
    itemized, standard = mortgage + salt, table["standard_deduction"]["single"]
    deduction, amount = ("itemized", itemized) if itemized > standard else ("standard", standard)
    drafted = _ok(t, "draft_return")
    if not drafted or (fault == "draft_repeated" and len(drafted) == 1):
        return call("draft_return", taxpayer_id=tp, tax_year=TAX_YEAR, wages=wages, interest=interest,
                    federal_withheld=withheld, deduction=deduction, deduction_amount=amount,
                    forms=[d["doc_id"] for d in docs])
    d = drafted[0]
    text = (f"Draft {d['return_id']} for {TAX_YEAR}: wages ${wages:,.2f}, interest ${interest:,.2f}, AGI "
            f"${d['agi']:,.2f}; {deduction} deduction ${amount:,.2f} (mortgage interest ${mortgage:,.2f}, state and "
            f"local taxes ${salt:,.2f}; standard would be ${standard:,}); tax ${d['tax']:,.2f}, refund "
            f"${d['refund']:,.2f}.")
    if missing and fault != "missing_form_withheld":
        text += f" It stays a draft: the {', '.join(missing)} you mentioned isn't uploaded yet - please send it."
    else:
        text += " Your return is ready to review and sign."
    return reply(text)


# ---- the model: reads the chat.completions request it is sent (a Responses request read in chat form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    from heldout20 import chat_as_responses, responses_as_chat

    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    out = reply("Hello! How can I help?")
    for cue, plan in (("rental desk assistant for Sierra", lambda: _rental(t, asked == OLD_MODEL)),
                      ("You are the intake clerk at Alder", lambda: _intake(t)),
                      ("You are the plan checker for Alder", lambda: _checker(t)),
                      ("You schedule building inspections", lambda: _scheduler(t)),
                      ("You gather a client's tax documents", lambda: _documents(t)),
                      ("You prepare the federal return", lambda: _preparer(t))):
        if cue in t.system:
            out = plan() if t.users or "plan checker" in cue else reply("What can I do for you?")
            break
    out["model"] = asked  # (an API answers with the model it served)
    return out


# ---- recorders -----------------------------------------------------------------------------------------------------


def _rental_chat(url: str, tools: dict[str, Callable[..., Any]]) -> Callable[[str], str]:
    """The rental desk's app, whichever way its tools are traced: a plain openai chat.completions loop over the
    renter's turns."""
    import openai

    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
    return lambda task: kit.chat_loop(client, rental_model(), rental_instructions(), task, tools,
                                      declared(RENTAL_TOOLS), renter_replies)


class OpenAIRental(kit.AgentotelRecorder):
    """The rental desk, the tools `@agentotel.tool`s, under agentotel."""

    agent = RENTAL

    def body(self, task: str) -> str:
        import agentotel

        return _rental_chat(self.url, {name: agentotel.tool(f) for name, f in RENTAL_TOOLS.items()})(task)


class TlRental(kit.TraceloopRecorder):
    """The rental desk under OpenLLMetry's openai instrumentation, the tools traceloop tool spans, through
    agentotel-collector."""

    agent = RENTAL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.body = _rental_chat(url, self.instrumented(OpenAIInstrumentor(), RENTAL_TOOLS))  # type: ignore[method-assign]


class AgentsPermits(kit.AgentotelRecorder):
    """The permit team on the OpenAI Agents SDK's Responses model: intake -> plan_checker -> scheduler by two handoffs
    in one Runner.run, under agentotel. The faulty deployment's intake -> plan_checker handoff filter keeps the
    handoff call alone."""

    agent = PERMITS

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIResponsesModel

        responses = OpenAIResponsesModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                 api_key="sk-test", max_retries=0))
        team = [("intake", INTAKE_RULES, INTAKE_TOOLS), ("plan_checker", checker_rules(), CHECKER_TOOLS),
                ("scheduler", SCHEDULER_RULES, SCHEDULER_TOOLS)]
        return kit.agents_chain(responses, team, task,
                                drop_into="plan_checker" if Now.fault == "handoff_drops_context" else None)


class LangGraphTax(kit.AgentotelRecorder):
    """The tax team as a LangGraph StateGraph of two create_react_agents (documents, preparer; ChatOpenAI) under
    agentotel."""

    agent = TAX

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, MODEL, TAX, [("documents", DOCUMENTS_RULES, DOCUMENTS_TOOLS),
                                                         ("preparer", PREPARER_RULES, PREPARER_TOOLS)], task)


RECORDERS: dict[str, Any] = {"openai-rental": OpenAIRental, "tl-rental": TlRental, "agents-permits": AgentsPermits,
                             "lg-tax": LangGraphTax}
HISTORY = (0, 1)  # earlier healthy runs: other bookings, applications and clients

_PERMIT_ASK = ("Revision {app} for permit {permit} (1187 Larch St) came in from Halvorsen Builders: take it in, check "
               "the plans, and book the inspection they asked for (framing).")
_TAX_ASK = ("Prepare {name}'s ({tp}) {year} federal return, single filer. She says she has her W-2 from Brightline, a "
            "1099-INT from Coastline Credit Union and her mortgage 1098{more}.")


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder in ("openai-rental", "tl-rental"):
        return _RENTAL_ASKS.format(ret=_RETURNS[v])
    if Now.recorder == "agents-permits":
        return _PERMIT_ASK.format(app=_APPS[v], permit=_permit_of(_APPS[v]))
    tp, name = _TAXPAYERS[v]
    more = ", and a 1099-DIV from Fidelity" if pair == "missing_form_withheld" else ""
    return _TAX_ASK.format(name=name, tp=tp, year=TAX_YEAR, more=more)


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (the Responses API read here)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, after, agent_first_llm, answer, asking, nth_llm, tool_step

    def final(steps: list[dict[str, Any]]) -> int | None:
        """The run's last model call (the answer it ended on)."""
        llm = _llm(steps)
        return llm[-1]["index"] if llm else None

    # the desk's quote (the model call after the licence check): where a wrong charge first shows, before the write
    quote = after(tool_step("check_license"))
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "surcharge_exception_misapplied": ("model", f"{tau} (surcharge waived for Gold members aged 21-24): a Gold "
                                                    "renter of 23 charged $100; the twin waives it",
                                           asking("update_reservation"), quote),
        "waiver_declined_uninsured": ("model", f"{tau} (CDW declined only with insurance on file): the waiver taken off "
                                               "with insurance_on_file false; the twin keeps it and says why",
                                      asking("update_reservation"), quote),
        "reservation_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two bookings under Ortega, the "
                                         "first (19 Dec, OAK... SFO) taken; the twin asks which",
                                after(tool_step("find_reservations"))),
        "one_way_fee_wrong_row": ("model", f"{trail} wrong arguments: the SFO->SEA fee ($275) charged for a return at "
                                           "LAX ($150)", asking("update_reservation"), quote),
        "policy_rewritten": ("prompt", "instructions changed: the waiver rule replaced by an FAQ macro ('may decline "
                                       "the CDW'); an uninsured renter's waiver removed", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_MODEL}), which charges a "
                                            "Gold renter of 23 the surcharge", nth_llm(0)),
        "rate_limit_invented": ("model", f"{trail} rate limits / hallucinated tool output: update_reservation answered "
                                         "429, the renter told 'change reference CH-30588'; the twin tries once more",
                                after(tool_step("update_reservation"))),
        "license_expired_ignored": ("model", f"{tau} (licence valid past the return date): the licence expires "
                                             "2026-12-09, the car back 2026-12-11, changed anyway; the twin refuses",
                                    quote),
        "yes_not_awaited": ("model", f"{mast} FM-1.1 Disobey task specification: update_reservation before the total "
                                     "was told and the renter said yes", asking("update_reservation")),
        "reservation_wrong_record": ("tool", f"{trail} API issues: find_reservations('SR-48213') answers SR-48231 "
                                             "(another renter, OAK); changed on it", tool_step("find_reservations")),
        "renter_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: the renter's loyalty and insurance "
                                         "moved (membership.level, coverage); read by v1's names a Gold renter is "
                                         "surcharged and the waiver kept", tool_step("find_reservations")),
        "premature_end": ("model", f"{mast} FM-3.1 Premature termination: after the renter's yes the desk says 'I'll "
                                   "update SR-48213 now' and the run ends, nothing changed", final),
        "total_withheld": ("model", f"{mast} FM-2.4 Information withholding: the quote omits the $300 deposit hold the "
                                    "rules say to tell before the yes", quote),
        "setback_wrong_zone": ("model", f"{tau} (setbacks against the parcel's zone): rear 5.8 m (19.0 ft) checked "
                                        "against R-2's 15 ft on an R-1 parcel (20 ft) and approved; the twin issues "
                                        "corrections", after(tool_step("get_parcel"))),
        "fee_wrong_bracket": ("model", f"{trail} wrong arguments: 340 sq ft added charged the up-to-200 row's $180 "
                                       "(the 201-500 row says $360)", asking("record_intake")),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the plan "
                                            "checker gets the handoff call alone and asks which application",
                                  agent_first_llm("plan_checker")),
        "checker_prompt_rewritten": ("prompt", "instructions changed: the checker's rules re-pasted without the metres "
                                               "line; 6.4 m compared as 6.4 ft and corrections issued",
                                     agent_first_llm("plan_checker")),
        "parcel_wrong_record": ("tool", f"{trail} API issues: get_parcel(052-114-09) answers 052-114-90 (zone R-2); a "
                                        "rear setback of 19.0 ft approved against 15", tool_step("get_parcel")),
        "inspection_out_of_order": ("model", f"{tau} (inspections in order, a failed one re-inspected first): framing "
                                             "booked though the foundation failed; the twin books the re-inspection",
                                    asking("schedule_inspection")),
        "stop_work_ignored": ("model", f"{tau} (no inspection under an open stop-work order): framing booked with "
                                       "SWO-2211 open; the twin books nothing and says why", after(tool_step("get_permit"))),
        "schedule_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: schedule_inspection timed out, "
                                               "the contractor told 'booking INS-61185'; the twin tries once more",
                                      after(tool_step("schedule_inspection"))),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'I'm booking its "
                                               "re-inspection first' said beside schedule_inspection(framing)",
                                      asking("schedule_inspection")),
        "corrected_ignored": ("model", f"{tau} (a corrected form replaces the original): the W-2's $98,400 used, the "
                                       "W-2c's $96,900 dropped", answer),
        "mortgage_cap_skipped": ("model", f"{tau} (interest on the first $750,000 of principal): $31,500 deducted on a "
                                          "$900,000 principal; the twin deducts $26,250", asking("draft_return")),
        "irs_table_stale": ("tool", "retrieval index stale: irs_tables(2025) answers the 2024 figures (Rev. Proc. "
                                    "2023-34, SALT cap 10,000) from a 2024-11-02 build", tool_step("irs_tables")),
        "docs_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_documents answers v3 (hits, "
                                       "type, year, fields); read by v1's names, no forms, nothing drafted",
                               tool_step("search_documents")),
        "documents_other_taxpayer": ("tool", f"{trail} API issues: search_documents(TP-2208) answers TP-2280's forms "
                                             "(Dana Whitman); the return drafted on them", tool_step("search_documents")),
        "draft_repeated": ("model", f"{mast} FM-1.3 Step repetition: draft_return sent twice (the rules say once)",
                           asking("draft_return", 1)),
        "missing_form_withheld": ("model", f"{mast} FM-2.4 Information withholding: the 1099-DIV the client named is "
                                           "missing (the document agent says so); the preparer calls the return ready",
                                  final),
        "table_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: irs_tables timed out, the return "
                                            "drafted on a remembered standard deduction and SALT cap; the twin tries "
                                            "once more", after(tool_step("irs_tables"))),
    }
    chosen = {
        "openai-rental": ["surcharge_exception_misapplied", "waiver_declined_uninsured", "reservation_unasked",
                          "one_way_fee_wrong_row", "policy_rewritten", "old_model_configured", "rate_limit_invented"],
        "tl-rental": ["license_expired_ignored", "yes_not_awaited", "reservation_wrong_record", "renter_shape_changed",
                      "premature_end", "total_withheld"],
        "agents-permits": ["setback_wrong_zone", "fee_wrong_bracket", "handoff_drops_context",
                           "checker_prompt_rewritten", "parcel_wrong_record", "inspection_out_of_order",
                           "stop_work_ignored", "schedule_timeout_invented", "reasoning_action_mismatch"],
        "lg-tax": ["corrected_ignored", "mortgage_cap_skipped", "irs_table_stale", "docs_shape_changed",
                   "documents_other_taxpayer", "draft_repeated", "missing_form_withheld", "table_timeout_invented"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (a880f08's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 4.3-5.6): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 14/30,
# good runs warned 19/30 (recording /tmp/h23-rec-j7u63tb6).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED: dict[str, str] = {}
_QUOTED = "ungrounded_answer@6/model on the quote's computed total (its twin warned the same), "
_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-openai-rental-surcharge-exception-misapplied": _QUOTED + "nothing at update_reservation@7: a $25/day "
                                                          "surcharge for a renter of 23 whose loyalty tier is gold, "
                                                          "against the table row's 'waived for Gold members aged 21 to 24'",
    "model-openai-rental-reservation-unasked": _QUOTED + "nothing at @4: find_reservations' two matches, one taken with no "
                                               "question, against 'If more than one reservation matches, ask which one'",
    "model-openai-rental-one-way-fee-wrong-row": _QUOTED + "nothing at update_reservation@7: one_way_fee 275 (the SFO -> "
                                                 "SEA row) for a return the user named at LAX ($150)",
    "model-tl-rental-yes-not-awaited": _NOTHING + "update_reservation@6 with no total told and no user yes, against "
                                       "'make the change only after they say yes' (the quote never happened, so no "
                                       "ungrounded total either)",
    "model-agents-permits-setback-wrong-zone": "policy_violated@20/model (the inspection-order rule, on a framing "
                                               "booking its earlier inspections allow); nothing at approve_plans@13: a "
                                               "rear setback of 5.8 m (19.0 ft) approved on an R-1 parcel (20 ft)",
    "model-agents-permits-fee-wrong-bracket": "policy_violated@20/model (as on its twin); nothing at record_intake@4: "
                                              "review_fee 180 for 340 sq ft where the table's 201-500 row says $360",
    "model-lg-tax-mortgage-cap-skipped": _NOTHING + "draft_return@9 deducts 1098 interest 31,500 in full with box 2 "
                                         "principal 900,000 against 'only on the first $750,000' (a rule on two fields "
                                         "of one record)",
    "model-lg-tax-missing-form-withheld": _NOTHING + "the preparer's answer @11 says 'ready to review and sign' where the "
                                          "document agent's note listed the 1099-DIV as missing and the rules say to "
                                          "tell it",
    "model-lg-tax-table-timeout-invented": "ungrounded_answer@11/model (14,600 in the answer) - the consequence; not "
                                           "draft_return@9 made on irs_tables figures no call returned after its "
                                           "timeout (the ToolNode's error text, no retry)",
    # Missed since (session 27, after the false alarms that made them blind hits were quieted - hits by place only):
    "model-tl-rental-license-expired-ignored": "nothing reads the licence's expires before the rental's return date "
                                               "against the rule; blind, the ungrounded sum every good run got landed here",
    "model-tl-rental-total-withheld": "nothing reads the deposit the rules say to tell as left out of the quote; blind, "
                                      "the same ungrounded sum landed here",
    "model-agents-permits-stop-work-ignored": "nothing reads 'A permit with an open stop-work order gets no inspection' "
                                              "against get_permit's stop_work; blind, the inspection-order stop every "
                                              "framing booking got landed here",
}
_TOTAL = "ungrounded_answer@6 on the quote: the desk's own sum of the table's charges (e.g. 4 x $64.00 + $150.00 = $406.00)"
FALSE_ALARMS = {
    "model-openai-rental-waiver-declined-uninsured": _TOTAL + "; and policy_violated@7: update_reservation with "
                                                     "insurance_on_file false read as breaking the CDW rule, though "
                                                     "the twin keeps the waiver (cdw: true) as the rule says",
    "prompt-openai-rental-policy-rewritten": _TOTAL + "; and the same policy_violated@7 on a kept waiver",
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "openai-rental": {"required_before": {"update_reservation": ["find_reservations", "check_license"]}},
    "tl-rental": {"required_before": {"update_reservation": ["find_reservations", "check_license"]}},
    "agents-permits": {"required_before": {"record_intake": ["get_application"],
                                           "approve_plans": ["get_plans", "get_parcel"],
                                           "schedule_inspection": ["get_permit"]}},
    "lg-tax": {"required_before": {"draft_return": ["search_documents", "irs_tables"]}},
}


# The OpenLLMetry recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h23-rec-", pairs, produce, kit.through_collector("tl-rental"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
