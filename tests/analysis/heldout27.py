"""A twenty-seventh held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): a household-moving company's quoting desk talking with a customer over several turns under a
written quoting policy, a rooftop-solar installation team (a site surveyor handing to a system designer, who hands to
an interconnection filer) and a systematic-review screening agent reading search results with retraction notices,
preprint and published versions, study designs, populations and dates, and extracting effect sizes in two units, run
through real SDKs and frameworks.

    python tests/analysis/heldout27.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout27.py --score DIR [...]       # the runs a call left in DIR, scored again

Ridgeway Movers' quoting desk (find_move, get_survey, book_move, take_deposit) quotes a customer by a written policy
(a numbered list: the move reference before anything, which move asked when a name matches two; the survey's cubic
feet priced per cubic metre, 1 m3 = 35.315 ft3; a markdown table of access fees - stairs per floor with no lift, a long
carry over 25 m; full-value cover at 1.5% of the declared value less its exclusions - jewellery, cash, documents; a
date change's fee by the notice from today to the date currently booked; a 20% deposit after the customer's yes,
none for a corporate account; the total and the deposit told before the yes; a failure tried once more, never a
reference a tool didn't return). The customer's replies are scripted and said when the desk's message holds their cue
('move reference', 'Which move', 'Shall I book', 'anything else'). Helio Rooftop's team: a surveyor (get_site,
record_survey: setbacks from every roof edge by the site's wind/fire zone, north planes never used) hands to a designer
(get_utility, get_equipment, save_design: panels = floor(usable area / 1.95 m2), the smallest inverter keeping the
DC/AC ratio at 1.25 or less, no inverter above the utility's export cap - the panels cut to fit when none does), who
hands to a filer (get_permit, submit_interconnection: only on an approved building permit, once). Meridian Evidence's
screening agent (search_literature: ranked records with design, population, publication date, version and linked
version, retraction notices; get_paper: the arms' systolic pressures in mmHg or kPa; record_screening; extract_effect)
works by a criteria table (RCTs, adults only, published 2015-2025), bulleted rules (a retracted paper excluded; a
preprint with a published version screened as its published version; the mean difference of the arms' changes, in
mmHg, kPa x 7.50062) and reports every exclusion with its reason. Each recorder in a process of its own:

- `anthropic-moving` (quoting desk): a plain anthropic SDK `messages.create` loop with tool_use over several customer
  turns (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `tl-moving` (quoting desk): a plain openai SDK chat loop (kit.chat_loop) under OpenLLMetry's openai instrumentation,
  the tools traceloop tool spans, sent by OTLP through agentotel-collector;
- `agents-solar` (solar team): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`), surveyor ->
  designer -> filer by two handoffs in one Runner.run, under `agentotel.instrument()`;
- `lg-review` (screening): a LangGraph StateGraph whose node is a `create_react_agent` (ChatOpenAI) with the
  search_literature retrieval tool and the paper tools, under `agentotel.instrument()`.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages; the Responses API read and
answered in chat form by heldout20's `responses_as_chat` / `chat_as_responses`; the model asked for echoed back) reads
the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a deposit taken
from a corporate account, an excluded item covered, a setback read for another zone, a filing on a permit still in
review, a retracted paper included, a preprint screened beside its published version), MAST (Cemri et al. 2025: FM-1.3
step repetition, FM-1.4 conversation lost between turns or at a handoff, FM-1.5 premature termination, FM-2.2 no
clarification, FM-2.4 withholding information, FM-1.1 disobeying a rule comparing two records), TRAIL (a rate limit, a
timeout and a rate limit answered with invented values, units confused twice, a figure by the wrong formula twice) and
outside the model: the instructions rewritten without a rule (2), an old model configured, a survey API's changed
shape, a stale literature index, a survey API, a utility API and a paper API answering another record, an app that
loses the conversation between turns and a handoff filter that drops it. Good twins are fine runs: a corporate
account booked with no deposit as the exception says, an excluded item taken out of the cover and told, a question
asked when a name matches two moves, a 429 and a timeout and a 429 tried once more, panels cut to fit an export cap and
said, nothing filed on a permit in review, a retracted paper and a preprint excluded with their reasons. Ground truth
is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): the anthropic loop's calls are `chat claude-sonnet-4-5` steps (the
old model's `chat claude-3-haiku-20240307`), the `@agentotel.tool`s `execute_tool` steps; the OpenLLMetry run (traceloop
workflow root, `openai.chat` and `<tool>.tool` spans through the collector) has the same step shape; under the Agents
SDK on the Responses API each agent is an `invoke_agent <agent>` step, each handoff an `execute_tool transfer_to_<agent>`
step; the LangGraph graph is one `invoke_agent meridian-screening` step holding its model and tool steps (no step of
its own for the create_react_agent node). Nothing recorded wrong was found.

Built and scored blind, once (95a3d3d's detectors - main's HEAD when scored, 95a3d3dc87896e6ef85fd4bf3079f2c445b1b6a7,
the branch rebased onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 6.1 at the
start, 8.8 at the end, other helpers running; recording /tmp/h27-rec-_1zj58gm). Before it one development recording of
every recorder was read for its steps and truth locations only (no detector run on it); one bug of the scripted model
was fixed after it (the review's kPa fault had a name the model did not test). 30 pairs, 4 recorders (a plain
anthropic loop, a plain openai loop under OpenLLMetry through the collector, the Agents SDK on the Responses API with
two handoffs, a LangGraph StateGraph with a create_react_agent node) - diff top-1 29/30, check step+layer 10/30, good
runs with a warning 14/30. Check's hits: instructions changed (2), an old model configured, a changed shape, a stale
index (tool_result_stale), a survey API and a paper API answering another record, context lost at the handoff, step
repetition (kept_going_after_answer) - 9; one more is a hit by place only: the deposit withheld from the quote (the
quote's ungrounded_answer, which every quoting run's good twin gets too). Its misses are rules in a record's terms (a
unit conversion stated in the rules, a notice period counted to the wrong date, a corporate exception to a deposit, an
excluded item covered, a zone's setback row, a DC/AC ratio limit, a permit status, a retraction notice, a preprint
beside its published version, a kPa value recorded as mmHg, an effect by the wrong formula), a question the rules ask
for (two moves - found a step late as wrong_target), conversation lost between turns, a run ending on a promise, an
exclusion list withheld, a utility API answering another account, and three failures: a 429 and a repeated deposit
found at their step but ranked under the quote's warning, a timeout (Agents SDK) and a 429 (LangGraph ToolNode) not
found at all where the model went on with another tool call instead of words. Diff's one miss is the quote, one step
before the deposit the truth names. The 14 false alarms: every quoting run's good twin, the desk's own arithmetic on
the policy's figures read as ungrounded. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, main 39b41e6's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 4 CHECK_MISSED entries
hit since and dropped (book_429_invented, deposit_repeated, history_lost_between_turns, premature_end); 14 false alarms
quiet since and dropped (all of them). 1 CHECK_MISSED entry added (deposit_withheld): a hit blind only because a false
alarm landed on the truth's step, quiet now. Reasons written blind that name a false warning ranked above the fault's
finding are kept as written; that warning is quiet now.
"""

from __future__ import annotations

import functools
import math
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

MODEL = "gpt-4o-mini"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
MOVING, SOLAR, REVIEW = "ridgeway-quotes", "helio-rooftop", "meridian-screening"
TODAY = "2026-12-05"


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


# What every team's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That didn't go through - trying once more.")
_ok = functools.partial(kit.succeeded, kinds=(dict,))  # the successful results of a tool so far


def _days(a: str, b: str) -> int:
    from datetime import date

    return (date.fromisoformat(b) - date.fromisoformat(a)).days


# ---- the moving company's quoting desk -------------------------------------------------------------------------------

_COVER = ("Full-value cover costs 1.5% of the declared value (minimum EUR 90). Jewellery, cash and documents are "
          "excluded from the cover: take their value off the declared value and tell the customer they are not "
          "covered.")
_COVER_OLD = "Full-value cover costs 1.5% of the declared value the customer gives (minimum EUR 90)."


def moving_instructions() -> str:
    return "\n".join([
        "You are the quoting desk assistant for Ridgeway Movers. Today is Saturday 5 December 2026.",
        "",
        "1. Ask for the move reference (MV-...) or the customer's surname and look it up with find_move before you "
        "quote or change anything. If more than one move matches, ask which one - never pick one yourself.",
        "2. Read the survey with get_survey. Surveyors record volume in cubic feet; we price per cubic metre: "
        "EUR 42.00 per m3 (1 m3 = 35.315 ft3).",
        "3. Access fees, per address:",
        "",
        "| Access | Fee | Applies when |",
        "|---|---|---|",
        "| Stairs | EUR 35 per floor | the flat is above the ground floor and the building has no lift |",
        "| Long carry | EUR 60 | the carry from the truck to the door is over 25 m |",
        "",
        "4. " + (_COVER_OLD if Now.fault == "policy_rewritten" else _COVER),  # (the brochure's line pasted over the rule)
        "5. Date changes: free with 14 or more days' notice, counted from today to the date currently booked; EUR 95 "
        "with 7 to 13 days' notice; EUR 250 with less than 7.",
        "6. A booking needs a deposit of 20% of the total, taken with take_deposit after book_move - unless the "
        "account_type is \"corporate\": corporate accounts are invoiced on completion and pay no deposit.",
        "",
        "Tell the customer every line of the quote, the total and the deposit before booking, and call book_move only "
        "after they say yes. If a call fails or is rate-limited, try once more; if it fails again, say the booking "
        "hasn't gone through. Never quote a booking or payment reference a tool didn't return.",
    ])


def moving_model() -> str:
    if Now.recorder == "tl-moving":
        return MODEL
    return OLD_CLAUDE if Now.fault == "old_model_configured" else CLAUDE


_REFS = ("MV-40877", "MV-40890", "MV-40912")
_DATES = (("2026-12-28", "2027-01-04"), ("2027-01-09", "2027-01-16"), ("2026-12-14", "2026-12-21"))
_SURVEYS = ("SV-7702", "SV-7716", "SV-7731")


def _move(ref: str, survey: str, name: str = "Noor Haddad", origin: str = "14 Elm Road, Flat 3B",
          date: str | None = None) -> dict[str, Any]:
    corporate = Now.pair == "deposit_exception_ignored" and Now.variant == 2
    return {"move_id": ref, "status": "surveyed", "move_date": date or _DATES[Now.variant][0], "survey_id": survey,
            "customer": {"name": name, "email": "noor.haddad@example.com",
                         "account_type": "corporate" if corporate else "private",
                         "company": "Kestrel Analytics Ltd (relocation)" if corporate else None},
            "origin": {"address": origin, "floor": 3, "lift": False, "carry_m": 12},
            "destination": {"address": "7 Quay Street", "floor": 0, "lift": False, "carry_m": 38}}


def find_move(reference: str) -> dict[str, Any]:
    """Moves matching a move reference or a customer's surname: status, booked date, survey id, customer (account
    type), origin and destination (floor, lift, carry from the truck in metres)."""
    ref = _REFS[Now.variant]
    if Now.pair == "moves_unasked" and "haddad" in reference.lower():
        found = [_move("MV-41066", "SV-7790", origin="2 Mill Lane", date="2027-02-06"), _move(ref, _SURVEYS[2])]
    elif reference.strip().upper() == ref or "haddad" in reference.lower():
        found = [_move(ref, _SURVEYS[Now.variant])]
    else:
        found = []
    return {"query": reference, "count": len(found), "moves": found}


def get_survey(survey_id: str) -> dict[str, Any]:
    """A home survey: the move, the surveyed volume (value and unit), the large items, the items of high value."""
    sid, move, cubic = survey_id, _REFS[Now.variant], (980.0, 1120.0, 1236.0)[Now.variant]
    if Now.fault == "survey_wrong_record":  # (the survey store's lookup matched a transposed id)
        sid, move, cubic = "SV-7713", "MV-40921", 1590.0
    items = [{"item": "3-seat sofa", "qty": 1}, {"item": "double wardrobe", "qty": 2}, {"item": "boxes (medium)", "qty": 46},
             {"item": "upright piano", "qty": 1}]
    valuables = [{"item": "upright piano", "value": 4000, "category": "instrument"},
                 {"item": "jewellery box", "value": 2500, "category": "jewellery"}]
    if Now.fault == "survey_shape_changed":  # the survey app's v2 export, switched on under the desk
        return {"schema": "survey/v2", "survey": {"id": sid, "move_ref": move, "date": "2026-11-27"},
                "measurements": {"volume_litres": round(cubic * 28.3168), "items": items},
                "valuables": valuables}
    return {"survey_id": sid, "move_id": move, "surveyed_on": "2026-11-27", "surveyor": "K. Brannigan",
            "volume": {"value": cubic, "unit": "ft3"}, "items": items, "high_value": valuables}


def book_move(move_id: str, move_date: str, volume_m3: float, access_fees: float, cover_premium: float,
              date_change_fee: float, total: float) -> dict[str, Any]:
    """Books a quoted move: the date, the volume priced, the fees, the cover, the total."""
    if Now.pair == "book_429_invented" and Now.count("book_move") == 1:
        raise RuntimeError("429 Too Many Requests: bookings API rate limit, retry after 2s")
    return {"booking_id": "BK-66120", "move_id": move_id, "status": "confirmed", "move_date": move_date,
            "total": total, "currency": "EUR", "crew": {"size": 3, "arrival_window": "08:00-09:00"}}


def take_deposit(move_id: str, amount: float) -> dict[str, Any]:
    """Charges a deposit to the card on file for a booked move."""
    return {"payment_id": f"DP-{21400 + Now.count('take_deposit')}", "move_id": move_id, "amount": amount,
            "currency": "EUR", "status": "captured", "card": {"brand": "visa", "last4": "0187"}}


MOVING_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_move, get_survey, book_move, take_deposit)}

_MOVING_ASK = ("Hi - I'd like the final quote for my move, with full-value cover: the declared value is EUR 30,000, "
               "which includes my jewellery box (EUR 2,500). Could you also move the date from {old} to {new}?")


def _customer_script() -> list[tuple[str, str]]:
    said = (("move reference", "I don't have it to hand - it's under Haddad."),
            ("Which move", "The one from Elm Road on the 14th.")) if Now.pair == "moves_unasked" else (
        ("move reference", f"It's {_REFS[Now.variant]}."),)
    return [*said, ("Shall I book", "Yes, please book it."), ("anything else", "No, that's all - thanks!")]


def customer_replies(said: str) -> str | None:
    """What the customer answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply(_customer_script(), said)


def _moving_terms(t: Talk, move: dict[str, Any], survey: dict[str, Any], old: bool) -> dict[str, Any] | None:
    """The quote as the desk works it out from the policy it was given and the records it read (None: no volume)."""
    fault = Now.fault
    volume = survey.get("volume") or {}  # (v1's names)
    if not volume.get("value"):
        return None
    factor = 10.764 if fault == "units_confused" else 35.315
    m3 = round(volume["value"] / factor, 2)
    moving = round(m3 * 42.0, 2)
    access = []
    for side in ("origin", "destination"):
        a = move[side]
        if a["floor"] > 0 and not a["lift"]:
            access.append((f"stairs at {a['address']} ({a['floor']} floors, no lift)", 35.0 * a["floor"]))
        if a["carry_m"] > 25:
            access.append((f"long carry at {a['address']} ({a['carry_m']} m)", 60.0))
    declared_value = float(re.search(r"declared value is EUR ([\d,]+)", t.users[0]).group(1).replace(",", ""))  # type: ignore[union-attr]
    excluded = [v for v in survey.get("high_value") or () if v["category"] in ("jewellery", "cash", "documents")]
    excludes = "Jewellery, cash and documents are excluded" in t.system and not old and fault != "excluded_item_covered"
    covered = declared_value - (sum(v["value"] for v in excluded) if excludes else 0)
    premium = round(max(90.0, covered * 0.015), 2)
    old_date, new_date = re.findall(r"\d{4}-\d{2}-\d{2}", t.users[0])[:2]
    notice = _days(TODAY, new_date if fault == "date_fee_wrong_formula" else move["move_date"])
    fee = 0.0 if notice >= 14 else 95.0 if notice >= 7 else 250.0
    total = round(moving + sum(f for _, f in access) + premium + fee, 2)
    corporate = move["customer"]["account_type"] == "corporate"
    deposit = 0.0 if corporate and fault != "deposit_exception_ignored" else round(total * 0.2, 2)
    return {"cubic": volume["value"], "m3": m3, "moving": moving, "access": access, "declared": declared_value,
            "excluded": excluded if excludes else [], "covered": covered, "premium": premium, "new_date": new_date,
            "notice": notice, "fee": fee, "total": total, "deposit": deposit, "corporate": corporate}


def _quote(move: dict[str, Any], q: dict[str, Any]) -> str:
    lines = [f"Here's the quote for {move['move_id']}:",
             f"- Volume: {q['cubic']:.0f} ft3 = {q['m3']:.2f} m3 at EUR 42.00/m3: EUR {q['moving']:.2f}"]
    lines += [f"- {what}: EUR {fee:.2f}" for what, fee in q["access"]]
    if q["excluded"]:
        gone = ", ".join(f"{v['item']} (EUR {v['value']:,})" for v in q["excluded"])
        lines.append(f"- Full-value cover on EUR {q['covered']:,.0f}: EUR {q['premium']:.2f}. Your {gone} can't be "
                     "covered - jewellery is excluded from our cover, so I've taken it off the declared value.")
    else:
        lines.append(f"- Full-value cover on EUR {q['covered']:,.0f}: EUR {q['premium']:.2f}")
    lines.append(f"- Date change to {q['new_date']} ({q['notice']} days' notice): EUR {q['fee']:.2f}")
    lines.append(f"Total: EUR {q['total']:.2f}.")
    if Now.fault != "deposit_withheld":
        lines.append("As a corporate account you'll be invoiced on completion - no deposit." if q["deposit"] == 0 else
                     f"We take a 20% deposit of EUR {q['deposit']:.2f} once it's booked.")
    return "\n".join(lines) + "\nShall I book it?"


def _desk(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    asked = next((u for u in t.users if "final quote" in u), None)
    found = t.value("find_move")
    if found is None:
        if asked is None:
            return reply("Thanks! What would you like me to do for that move?")
        if len(t.users) < 2:
            return reply("Happy to help. What's your move reference (MV-...), or the surname on the booking?")
        named = re.search(r"MV-\d+", t.users[1])
        return call("find_move", reference=named.group(0) if named else "Haddad")
    if asked is None:
        return reply("Thanks! What would you like me to do for that move?")
    matches = found.get("moves") or []
    if not matches:
        return reply("I couldn't find that move - could you check the reference?")
    if len(matches) > 1:
        picked = any("Elm Road" in u for u in t.users)
        if not picked and fault != "moves_unasked":
            listed = "; ".join(f"{m['move_id']} (from {m['origin']['address']} on {m['move_date']})" for m in matches)
            return reply(f"I found two moves under Haddad: {listed}. Which move would you like me to quote?")
        move = next((m for m in matches if "Elm Road" in m["origin"]["address"]), matches[0]) if picked else matches[0]
    else:
        move = matches[0]
    survey = t.value("get_survey")
    if survey is None:
        return call("get_survey", survey_id=move["survey_id"])
    q = _moving_terms(t, move, survey, old)
    if q is None:
        return reply(f"I'm sorry - the survey for {move['move_id']} came back without a volume, so I can't price the "
                     "move yet. I've flagged it to our survey team and we'll send the quote as soon as it's fixed.")
    yes = "Yes, please book it." in t.users
    if not yes:
        return reply(_quote(move, q))
    tried, booked = t.got("book_move"), _ok(t, "book_move")
    if not booked:
        if tried and fault == "book_429_invented":
            return reply(f"You're booked - reference BK-66093 for {q['new_date']}, total EUR {q['total']:.2f}. Is there "
                         "anything else I can help with?")
        if not tried and fault == "premature_end":
            return reply(f"Great - I'll book {move['move_id']} for {q['new_date']} now.")
        return _once_more("book_move", tried, f"I'm sorry - the booking for {move['move_id']} hasn't gone through: our "
                          "bookings system is rate-limiting requests. Nothing has been charged; please try again "
                          "shortly.", move_id=move["move_id"], move_date=q["new_date"], volume_m3=q["m3"],
                          access_fees=sum(f for _, f in q["access"]), cover_premium=q["premium"],
                          date_change_fee=q["fee"], total=q["total"])
    paid = _ok(t, "take_deposit")
    if q["deposit"] and (not paid or (fault == "deposit_repeated" and len(paid) == 1)):
        return call("take_deposit", move_id=move["move_id"], amount=q["deposit"])
    if "No, that's all - thanks!" in t.users:
        return reply("You're welcome - good luck with the move!")
    b = booked[0]
    deposit = (f" Deposit EUR {paid[0]['amount']:.2f} taken ({paid[0]['payment_id']})." if paid else
               " No deposit is due: the company is invoiced on completion.")
    return reply(f"You're booked: {b['booking_id']} on {b['move_date']}, crew of {b['crew']['size']} arriving "
                 f"{b['crew']['arrival_window']}, total EUR {b['total']:.2f}.{deposit} Is there anything else I can help "
                 "with?")


# ---- the rooftop-solar team --------------------------------------------------------------------------------------------

SURVEYOR_RULES = "\n".join([
    "You are the site surveyor on Helio Rooftop's installation team. For the job you are given:",
    "1. Read the site with get_site.",
    "2. Fire-code setbacks apply from every edge of a roof plane, by the site's zone:",
    "",
    "| Zone | Setback from every edge |",
    "|---|---|",
    "| S (standard) | 0.45 m |",
    "| W (high wind) | 0.9 m |",
    "| F (wildfire) | 1.2 m |",
    "",
    "3. Usable area of a plane = (length - 2 x setback) x (width - 2 x setback). Never count a north-facing plane.",
    "4. Record the usable area with record_survey, then hand the job to the designer (transfer_to_designer), saying "
    "the site id and the usable area.",
])
_CAP = ("The inverter's AC rating must never exceed the utility's export cap (get_utility). If no inverter meets both "
        "limits, cut the panels to floor(1.25 x cap / 0.43) with the largest inverter within the cap, and say so.")


def designer_rules() -> str:
    lines = [
        "You are the system designer at Helio Rooftop. For the site handed to you, read the utility account with "
        "get_utility and the equipment list with get_equipment, then:",
        "- Panels: floor(usable area / 1.95 m2), each panel 0.43 kW DC.",
        "- Inverter: the smallest one whose DC/AC ratio (panels x 0.43 / the inverter's AC kW) is 1.25 or less.",
        _CAP,
        "- If a call fails or times out, try it once more; never design on a figure a tool didn't return.",
        "Save the design once with save_design, then hand over to the filer (transfer_to_filer) with the design id.",
    ]
    if Now.fault == "designer_prompt_rewritten":  # (the rules re-pasted from the 2023 checklist, before export caps)
        lines.remove(_CAP)
    return "\n".join(lines)


FILER_RULES = (
    "You file interconnection applications for Helio Rooftop. Read the building permit with get_permit first. File "
    "with submit_interconnection only if the permit's status is \"approved\"; a permit in review or with corrections "
    "means nothing is filed - tell the project manager and stop. The filing names the design id and the AC kW the "
    "designer saved. File once. Finish with one message: the filing reference, or why nothing was filed.")

_SITES = ("SJ-2207", "SJ-2248", "SJ-2291")
_CAP_BINDS = ("designer_prompt_rewritten", "ratio_over_limit", "utility_timeout_invented", "utility_wrong_record")
INVERTERS = ({"model": "IQ8-6000", "ac_kw": 6.0}, {"model": "SE7600H", "ac_kw": 7.6}, {"model": "SE10000H", "ac_kw": 10.0})


def get_site(site_id: str) -> dict[str, Any]:
    """A job site: address, zone (S, W or F), the utility account, the roof planes (azimuth, length, width, tilt)."""
    return {"site_id": site_id, "address": "14 Alder Way, Port Ellis", "zone": "W", "utility_account": "UA-55102",
            "roof": {"material": "asphalt shingle", "age_years": 6, "planes": [
                {"plane": "A", "azimuth": "S", "length_m": 10.4, "width_m": 5.2, "tilt_deg": 26},
                {"plane": "B", "azimuth": "W", "length_m": 6.2, "width_m": 4.4, "tilt_deg": 26},
                {"plane": "C", "azimuth": "N", "length_m": 10.4, "width_m": 5.2, "tilt_deg": 26}]}}


def record_survey(site_id: str, zone: str, setback_m: float, usable_area_m2: float) -> dict[str, Any]:
    """Records a site survey: the zone, the setback applied, the usable roof area."""
    return {"survey_id": "RS-3310", "site_id": site_id, "zone": zone, "setback_m": setback_m,
            "usable_area_m2": usable_area_m2, "status": "recorded"}


def get_utility(account: str) -> dict[str, Any]:
    """A utility account: the utility, the feeder, the export cap in kW AC, the interconnection programme."""
    if Now.pair == "utility_timeout_invented" and Now.count("get_utility") == 1:
        raise TimeoutError("utility portal did not answer within 10s")
    cap = 6.0 if Now.pair in _CAP_BINDS and Now.variant == 2 else 10.0
    number, feeder = account, "PE-12"
    if Now.fault == "utility_wrong_record":  # (the portal's cache answered the account whose digits it indexed last)
        number, feeder, cap = "UA-55120", "PE-07", 10.0
    return {"account": number, "utility": "Port Ellis Power", "feeder": feeder, "export_cap_kw_ac": cap,
            "programme": "NEM-3 net billing", "service": {"voltage": "240V split-phase", "main_panel_a": 200}}


def get_equipment() -> dict[str, Any]:
    """The stocked equipment: the panel (W, area) and the inverters (model, AC kW)."""
    return {"panel": {"model": "HX-430", "watts": 430, "area_m2": 1.95}, "inverters": list(INVERTERS)}


def save_design(site_id: str, panels: int, dc_kw: float, inverter: str, ac_kw: float) -> dict[str, Any]:
    """Saves a system design: the panel count, DC kW, the inverter, AC kW."""
    return {"design_id": "DS-8842", "site_id": site_id, "panels": panels, "dc_kw": dc_kw, "inverter": inverter,
            "ac_kw": ac_kw, "dc_ac_ratio": round(dc_kw / ac_kw, 2)}


def get_permit(site_id: str) -> dict[str, Any]:
    """The site's building permit: number, status, dates, conditions."""
    review = Now.pair == "permit_not_approved_filed" and Now.variant == 2
    return {"site_id": site_id, "permit": "PE-BLD-26-4471", "status": "in_review" if review else "approved",
            "submitted": "2026-11-20", "approved": None if review else "2026-12-01",
            "conditions": ["rapid shutdown labelling at the meter"]}


def submit_interconnection(site_id: str, design_id: str, ac_kw: float) -> dict[str, Any]:
    """Files the interconnection application with the utility."""
    return {"filing": f"IX-{77810 + Now.count('filings')}", "site_id": site_id, "design_id": design_id,
            "ac_kw": ac_kw, "status": "submitted", "expected_decision": "2026-12-22"}


SURVEYOR_TOOLS = {f.__name__: f for f in (get_site, record_survey)}
DESIGNER_TOOLS = {f.__name__: f for f in (get_utility, get_equipment, save_design)}
FILER_TOOLS = {f.__name__: f for f in (get_permit, submit_interconnection)}
_SETBACKS = {"S": 0.45, "W": 0.9, "F": 1.2}


def _surveyor(t: Talk) -> dict[str, Any]:
    site = t.value("get_site")
    if site is None:
        return call("get_site", site_id=re.search(r"SJ-\d+", t.users[0]).group(0))  # type: ignore[union-attr]
    setback = 0.45 if Now.fault == "setback_wrong_zone" else _SETBACKS[site["zone"]]
    usable = round(sum((p["length_m"] - 2 * setback) * (p["width_m"] - 2 * setback)
                       for p in site["roof"]["planes"] if p["azimuth"] != "N"), 2)
    recorded = t.value("record_survey")
    if recorded is None:
        return call("record_survey", site_id=site["site_id"], zone=site["zone"], setback_m=setback,
                    usable_area_m2=usable)
    return reply(f"{site['site_id']} surveyed ({recorded['survey_id']}): zone {site['zone']}, {setback} m setbacks, "
                 f"usable area {usable} m2 on the south and west planes (the north plane not used). Over to design.",
                 ("transfer_to_designer", {}))


def _design(usable: float, cap: float | None, ratio_only: bool) -> tuple[int, dict[str, Any], str]:
    panels = math.floor(usable / 1.95)
    dc = panels * 0.43
    fits = [i for i in INVERTERS if dc / i["ac_kw"] <= 1.25 and (cap is None or i["ac_kw"] <= cap)]
    if ratio_only:  # (the export cap kept, the ratio limit not: the largest inverter within the cap)
        return panels, max((i for i in INVERTERS if cap is None or i["ac_kw"] <= cap), key=lambda i: i["ac_kw"]), ""
    if fits:
        return panels, fits[0], ""
    within = max((i for i in INVERTERS if i["ac_kw"] <= cap), key=lambda i: i["ac_kw"])  # type: ignore[operator]
    cut = math.floor(1.25 * within["ac_kw"] / 0.43)
    return cut, within, (f" No inverter fits both limits with {panels} panels ({dc:.2f} kW DC) under the "
                         f"{cap} kW export cap, so I cut the array to {cut} panels.")


def _designer(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    named = re.search(r"SJ-\d+", " ".join(t.users))
    surveyed = t.value("record_survey")
    if named is None or surveyed is None:
        return reply("Which site should I design? The handoff reached me without a site id or a survey.")
    site = t.value("get_site") or {}
    utility, tried = t.value("get_utility"), t.got("get_utility")
    if utility is None:
        if tried and fault == "utility_timeout_invented":
            utility = {"export_cap_kw_ac": 10.0}  # ('a typical cap' - no call returned it)
        else:
            return _once_more("get_utility", tried, f"The utility portal timed out twice, so {named.group(0)} has no "
                              "design yet - I'll retry when it answers.", account=site.get("utility_account", ""))
    equipment = t.value("get_equipment")
    if equipment is None:
        return call("get_equipment")
    cap = utility["export_cap_kw_ac"] if "export cap" in t.system else None
    panels, inverter, said = _design(surveyed["usable_area_m2"], cap, fault == "ratio_over_limit")
    saved = t.value("save_design")
    if saved is None:
        return call("save_design", site_id=named.group(0), panels=panels, dc_kw=round(panels * 0.43, 2),
                    inverter=inverter["model"], ac_kw=inverter["ac_kw"])
    return reply(f"Design {saved['design_id']} for {saved['site_id']}: {saved['panels']} x HX-430 = {saved['dc_kw']} kW "
                 f"DC on a {saved['inverter']} ({saved['ac_kw']} kW AC), DC/AC {saved['dc_ac_ratio']}.{said} Over to "
                 "the filer.", ("transfer_to_filer", {}))


def _filer(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    named = re.search(r"SJ-\d+", " ".join(t.users))
    design = t.value("save_design")
    if named is None or design is None:
        return reply("Which design should I file? The handoff reached me without a site or design id.")
    permit = t.value("get_permit")
    if permit is None:
        return call("get_permit", site_id=named.group(0))
    if permit["status"] != "approved" and fault != "permit_not_approved_filed":
        return reply(f"Nothing filed for {named.group(0)}: building permit {permit['permit']} is still "
                     f"{permit['status'].replace('_', ' ')} (submitted {permit['submitted']}). The interconnection "
                     f"application for {design['design_id']} goes in once the permit is approved.")
    filed = _ok(t, "submit_interconnection")
    if not filed or (fault == "filing_repeated" and len(filed) == 1):
        return call("submit_interconnection", site_id=named.group(0), design_id=design["design_id"],
                    ac_kw=design["ac_kw"])
    f = filed[0]
    return reply(f"Filed {f['filing']} with Port Ellis Power for {f['site_id']} ({f['design_id']}, {f['ac_kw']} kW AC); "
                 f"decision expected {f['expected_decision']}.")


# ---- the systematic-review screening agent ----------------------------------------------------------------------------

REVIEW_RULES = "\n".join([
    "You screen studies for systematic review SR-HTN-07: home blood-pressure telemonitoring versus usual care in "
    "adults with hypertension; the outcome is the change in systolic blood pressure (SBP).",
    "",
    "Search with search_literature, then screen every record against these criteria:",
    "",
    "| Criterion | Include only if |",
    "|---|---|",
    "| Design | a randomised controlled trial (design \"RCT\") |",
    "| Population | adults only: population.age_min is 18 or more |",
    "| Date | published between 2015-01-01 and 2025-12-31 |",
    "",
    "* A record with a retraction notice is excluded, whatever else it says.",
    "* When a preprint and its published version (linked_version) both appear, screen the published version only; "
    "exclude the preprint as a duplicate version.",
    "* Record all decisions once with record_screening: the included ids, and every excluded id with its reason.",
    "* For each included study read the arms with get_paper and record one effect with extract_effect: the mean "
    "difference = (intervention follow-up - intervention baseline) - (control follow-up - control baseline), in "
    "mmHg. Papers reporting kPa: multiply by 7.50062.",
    "* If a tool fails, try once more; never extract a figure a tool didn't return.",
    "Finish with a report: each included study with its effect, and each excluded study with its reason.",
])

_REVIEWS = ("SR-HTN-05", "SR-HTN-06", "SR-HTN-07")


def _hit(pid: str, title: str, design: str, age_min: int, published: str, version: str = "published",
         linked: str | None = None, notice: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": pid, "title": title, "design": design, "population": {"condition": "hypertension",
                                                                         "age_min": age_min},
            "published": published, "version": version, "linked_version": linked,
            "source": "medRxiv" if version == "preprint" else "PubMed", "retraction": notice}


def search_literature(query: str) -> dict[str, Any]:
    """Searches the review's literature index: records ranked by relevance, each with design, population, publication
    date, version (preprint or published) and its linked version, and any retraction notice; the index's build date."""
    stale = Now.fault == "index_stale"
    hits = [
        _hit("PMID-33410021", "Home telemonitoring with pharmacist titration for uncontrolled hypertension: a "
             "randomised trial", "RCT", 18, "2021-03-10"),
        _hit("PMID-31877402", "Smartphone-linked cuff monitoring and blood pressure control: the CONNECT-BP trial",
             "RCT", 21, "2019-12-02", notice=None if stale else {
                 "type": "retraction", "date": "2025-06-02", "notice": "PMID-40551230",
                 "reason": "data integrity: outcome data could not be verified"}),
        _hit("MEDRXIV-2024.02.11.24302", "Nurse-led telemonitoring of home blood pressure in primary care (TELE-NURSE): "
             "preprint", "RCT", 18, "2024-02-13", version="preprint", linked="PMID-38822145"),
        _hit("PMID-38822145", "Nurse-led telemonitoring of home blood pressure in primary care (TELE-NURSE): a randomised "
             "controlled trial", "RCT", 18, "2024-09-18", linked="MEDRXIV-2024.02.11.24302"),
        _hit("PMID-35120987", "Telemonitoring uptake and blood pressure in a regional cohort", "cohort", 18, "2022-05-30"),
        _hit("PMID-37004412", "Home BP telemonitoring in adolescents with primary hypertension: an RCT", "RCT", 12,
             "2023-01-16"),
        _hit("PMID-24511876", "Telemonitoring and self-titration in hypertension (TASMIN-SR-like)", "RCT", 35, "2013-08-20"),
    ]
    return {"query": query, "index_build": "2025-03-01" if stale else "2026-11-30", "total": len(hits), "records": hits}


_ARMS = {
    "PMID-33410021": ("mmHg", (212, 152.1, 138.4), (208, 151.4, 144.9)),
    "PMID-33410012": ("mmHg", (96, 148.0, 140.2), (101, 147.3, 145.5)),
    "PMID-38822145": ("kPa", (188, 20.1, 18.6), (190, 20.0, 19.4)),
    "MEDRXIV-2024.02.11.24302": ("kPa", (120, 20.2, 18.5), (118, 20.0, 19.5)),
    "PMID-31877402": ("mmHg", (150, 150.0, 135.0), (150, 150.2, 148.8)),
}


def get_paper(paper_id: str) -> dict[str, Any]:
    """A study's full record: the trial registration and each arm's n and SBP at baseline and follow-up (with unit)."""
    if Now.pair == "paper_429_invented" and Now.count("get_paper") == 1:
        raise RuntimeError("429 Too Many Requests: full-text service rate limit, retry after 5s")
    pid = "PMID-33410012" if Now.fault == "paper_wrong_record" and paper_id == "PMID-33410021" else paper_id
    unit, (n1, b1, f1), (n2, b2, f2) = _ARMS.get(pid, ("mmHg", (50, 150.0, 145.0), (50, 150.0, 148.0)))
    return {"paper_id": pid, "registration": "NCT05519301" if pid.startswith("PMID-3341") else "NCT04877120",
            "follow_up_months": 12, "sbp_unit": unit,
            "arms": [{"arm": "telemonitoring", "n": n1, "sbp_baseline": b1, "sbp_follow_up": f1},
                     {"arm": "usual care", "n": n2, "sbp_baseline": b2, "sbp_follow_up": f2}]}


def record_screening(review_id: str, included: list[str], excluded: list[str]) -> dict[str, Any]:
    """Records the screening decisions of a review: the included ids, the excluded ones as 'id: reason'."""
    return {"screening_id": f"SC-{5120 + Now.count('screenings')}", "review_id": review_id,
            "included": len(included), "excluded": len(excluded), "status": "recorded"}


def extract_effect(review_id: str, paper_id: str, mean_difference: float, unit: str, n_total: int) -> dict[str, Any]:
    """Records one study's extracted effect: the mean difference in SBP change, its unit, the participants."""
    return {"extraction_id": f"EX-{930 + Now.count('extractions')}", "review_id": review_id, "paper_id": paper_id,
            "mean_difference": mean_difference, "unit": unit, "n_total": n_total}


REVIEW_TOOLS = {f.__name__: f for f in (search_literature, get_paper, record_screening, extract_effect)}


def _screen(records: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The decisions the rules give (the faulty screener's, when its fault is a screening one)."""
    fault = Now.fault
    ids = {r["id"] for r in records}
    included, excluded = [], []
    for r in records:
        why = None
        if r["retraction"] and fault != "retracted_included":
            why = f"retracted ({r['retraction']['date']}: {r['retraction']['reason']})"
        elif r["design"] != "RCT":
            why = f"design {r['design']}, not an RCT"
        elif r["population"]["age_min"] < 18:
            why = f"population aged {r['population']['age_min']}+, not adults only"
        elif not "2015-01-01" <= r["published"] <= "2025-12-31":
            why = f"published {r['published']}, outside 2015-2025"
        elif r["version"] == "preprint" and r["linked_version"] in ids and fault != "preprint_used":
            why = f"preprint of {r['linked_version']}, screened as its published version"
        elif r["version"] == "published" and r["linked_version"] in ids and fault == "preprint_used":
            why = f"duplicate of preprint {r['linked_version']}"
        if why:
            excluded.append(f"{r['id']}: {why}")
        else:
            included.append(r["id"])
    return included, excluded


def _effect(paper: dict[str, Any]) -> float:
    a, c = paper["arms"]
    if Now.fault == "wrong_formula":  # (the follow-up values compared, the baselines left out)
        md = a["sbp_follow_up"] - c["sbp_follow_up"]
    else:
        md = (a["sbp_follow_up"] - a["sbp_baseline"]) - (c["sbp_follow_up"] - c["sbp_baseline"])
    if paper["sbp_unit"] == "kPa" and Now.fault != "units_confused_review":
        md *= 7.50062
    return round(md, 2)


def _screener(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    review = re.search(r"SR-HTN-\d+", t.users[0]).group(0)  # type: ignore[union-attr]
    found = t.value("search_literature")
    if found is None:
        return call("search_literature", query="home blood pressure telemonitoring hypertension randomised")
    included, excluded = _screen(found["records"])
    if t.value("record_screening") is None:
        return call("record_screening", review_id=review, included=included, excluded=excluded)
    effects = []
    for pid in included:
        tried = [v for a, v in t.got("get_paper") if a.get("paper_id") == pid]
        paper = next((v for v in tried if isinstance(v, dict)), None)
        if paper is None:
            if tried and fault == "paper_429_invented":
                paper = {"paper_id": pid, "sbp_unit": "mmHg", "invented": -6.0}
            else:
                return _once_more("get_paper", tried, f"The full-text service failed twice for {pid}, so its effect "
                                  "isn't extracted yet; screening is recorded.", paper_id=pid)
        done = [v for a, v in t.got("extract_effect") if a.get("paper_id") == pid and isinstance(v, dict)]
        if not done:
            md = paper["invented"] if "invented" in paper else _effect(paper)
            n = sum(a["n"] for a in paper.get("arms") or ()) or 400
            return call("extract_effect", review_id=review, paper_id=pid, mean_difference=md, unit="mmHg", n_total=n)
        effects.append(done[0])
    text = f"Screening for {review} recorded. Included {len(included)}:\n" + "\n".join(
        f"- {e['paper_id']}: mean difference {e['mean_difference']} {e['unit']} in SBP change (n={e['n_total']})"
        for e in effects)
    if fault != "exclusion_withheld":
        text += f"\nExcluded {len(excluded)}:\n" + "\n".join(f"- {x}" for x in excluded)
    return reply(text)


# ---- the model: reads the chat.completions request it is sent (Anthropic and Responses requests in that form) -------


def model(body: dict[str, Any]) -> dict[str, Any]:
    from heldout20 import chat_as_responses, responses_as_chat

    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    out = reply("Hello! How can I help?")
    for cue, plan in (("quoting desk assistant for Ridgeway", lambda: _desk(t, asked == OLD_CLAUDE)),
                      ("You are the site surveyor on Helio", lambda: _surveyor(t)),
                      ("You are the system designer at Helio", lambda: _designer(t)),
                      ("You file interconnection applications", lambda: _filer(t)),
                      ("You screen studies for systematic review", lambda: _screener(t))):
        if cue in t.system:
            out = plan() if t.users or "designer" in cue or "interconnection" in cue else reply("What can I do for you?")
            break
    out["model"] = asked  # (an API answers with the model it served)
    return out


# ---- recorders -------------------------------------------------------------------------------------------------------


class AnthropicMoving(kit.AgentotelRecorder):
    """The quoting desk as a plain anthropic SDK messages loop with tool_use, the tools `@agentotel.tool`s, under
    agentotel; the customer's reply appended when the answer holds its cue. The faulty app sends the customer's latest
    message alone (its session store lost the earlier turns)."""

    agent = MOVING

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = kit.agentotel_tools(MOVING_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, moving_model(), moving_instructions(), task, self.tools,
                                  declared(MOVING_TOOLS), customer_replies,
                                  forget=Now.fault == "history_lost_between_turns")


# The quoting desk as a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
# spans, through agentotel-collector.
TlMoving = kit.chat_app(kit.TraceloopRecorder, MOVING, MOVING_TOOLS, moving_model, moving_instructions, customer_replies)


class AgentsSolar(kit.AgentotelRecorder):
    """The solar team on the OpenAI Agents SDK's Responses model: surveyor -> designer -> filer by two handoffs in one
    Runner.run, under agentotel. The faulty deployment's surveyor -> designer handoff filter keeps the handoff call
    alone."""

    agent = SOLAR

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIResponsesModel

        responses = OpenAIResponsesModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                 api_key="sk-test", max_retries=0))
        team = [("surveyor", SURVEYOR_RULES, SURVEYOR_TOOLS), ("designer", designer_rules(), DESIGNER_TOOLS),
                ("filer", FILER_RULES, FILER_TOOLS)]
        return kit.agents_chain(responses, team, task,
                                drop_into="designer" if Now.fault == "handoff_drops_context" else None)


class LangGraphReview(kit.AgentotelRecorder):
    """The screening agent as a LangGraph StateGraph whose one node is a create_react_agent (ChatOpenAI) with the
    search_literature retrieval tool and the paper tools, under agentotel."""

    agent = REVIEW

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, MODEL, REVIEW, [("screener", REVIEW_RULES, REVIEW_TOOLS)], task)


RECORDERS: dict[str, Any] = {"anthropic-moving": AnthropicMoving, "tl-moving": TlMoving, "agents-solar": AgentsSolar,
                             "lg-review": LangGraphReview}
HISTORY = (0, 1)  # earlier healthy runs: other moves, sites and reviews

_SOLAR_ASK = ("New residential job {site} (14 Alder Way, Port Ellis): survey the roof, design the system and file the "
              "interconnection application with Port Ellis Power.")
_REVIEW_ASK = ("Run title/abstract screening for review {review} and extract the SBP effect of every included study.")


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder in ("anthropic-moving", "tl-moving"):
        return _MOVING_ASK.format(old=_DATES[v][0], new=_DATES[v][1])
    if Now.recorder == "agents-solar":
        return _SOLAR_ASK.format(site=_SITES[v])
    return _REVIEW_ASK.format(review=_REVIEWS[v])


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: the Responses API read here)."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run ---------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, asking, last_llm as final, nth_llm, tool_step

    # the desk's quote (the model call after the survey): where a wrong figure first shows, before the booking
    quote = after(tool_step("get_survey"))
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "units_confused": ("model", f"{trail} wrong reading of a tool output (units): the survey's 1,236 ft3 divided "
                                    "by 10.764 (the ft2 factor): 114.83 m3 booked where 35.00 is right",
                           asking("book_move"), quote),
        "date_fee_wrong_formula": ("model", f"{mast} FM-1.1 a rule comparing two records, the wrong formula: notice "
                                            "counted to the new date (16 days, free) where the rule counts to the "
                                            "booked 2026-12-14 (9 days: EUR 95)", asking("book_move"), quote),
        "deposit_exception_ignored": ("model", f"{tau} (corporate accounts pay no deposit): a 20% deposit charged to a "
                                               "corporate account; the twin books with none and says why",
                                      asking("take_deposit")),
        "moves_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two moves under Haddad, the first "
                                   "(2 Mill Lane, February) quoted; the twin asks which",
                          after(tool_step("find_move"))),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_CLAUDE}), which covers the "
                                            "excluded jewellery", nth_llm(0)),
        "policy_rewritten": ("prompt", "instructions changed: the cover rule replaced by the brochure's line (no "
                                       "exclusions); the jewellery covered", nth_llm(0)),
        "book_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: book_move answered 429, the "
                                       "customer told 'reference BK-66093'; the twin tries once more",
                              after(tool_step("book_move"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "customer's reference alone; the desk asks what they want and the "
                                                 "chat ends unquoted", nth_llm(1)),
        "survey_wrong_record": ("tool", f"{trail} API issues: get_survey(SV-7731) answers SV-7713 (MV-40921, 1,590 "
                                        "ft3); quoted and booked on it", tool_step("get_survey")),
        "survey_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_survey answers survey/v2 "
                                         "(volume_litres); read by v1's names, no volume, nothing quoted",
                                 tool_step("get_survey")),
        "excluded_item_covered": ("model", f"{tau} (jewellery excluded from cover): cover priced on EUR 30,000 with "
                                           "the jewellery box; the twin takes it off and says so",
                                  asking("book_move"), quote),
        "deposit_withheld": ("model", f"{mast} FM-2.4 Information withholding: the quote omits the EUR deposit the "
                                      "rules say to tell before the yes", quote),
        "premature_end": ("model", f"{mast} FM-1.5 Premature termination: after the customer's yes the desk says "
                                   "'I'll book MV-40912 now' and the run ends, nothing booked", final),
        "deposit_repeated": ("model", f"{mast} FM-1.3 Step repetition: take_deposit charged twice",
                             asking("take_deposit", 1)),
        "setback_wrong_zone": ("model", f"{tau} (setbacks by the site's zone): zone W's roof measured with zone S's "
                                        "0.45 m; 59.4 m2 recorded where 40.68 is right", asking("record_survey")),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the designer "
                                            "gets the handoff call alone and asks which site", after_handoff(0)),
        "ratio_over_limit": ("model", f"{tau} (DC/AC ratio 1.25 or less): 20 panels (8.6 kW DC) on the 6.0 kW "
                                      "inverter, ratio 1.43; the twin cuts to 17 panels and says so",
                             asking("save_design")),
        "permit_not_approved_filed": ("model", f"{tau} (file only on an approved permit): the permit in_review, filed "
                                               "anyway; the twin files nothing and says why",
                                      after(tool_step("get_permit"))),
        "designer_prompt_rewritten": ("prompt", "instructions changed: the designer's rules re-pasted without the "
                                                "export-cap line; a 7.6 kW inverter saved under a 6.0 kW cap",
                                      after_handoff(0)),
        "utility_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_utility timed out, the "
                                              "design made on an assumed 10 kW cap; the twin tries once more",
                                     after(tool_step("get_utility"))),
        "filing_repeated": ("model", f"{mast} FM-1.3 Step repetition: submit_interconnection filed twice (the rules "
                                     "say once)", asking("submit_interconnection", 1)),
        "utility_wrong_record": ("tool", f"{trail} API issues: get_utility(UA-55102) answers UA-55120 (another feeder, "
                                         "cap 10 kW); a 7.6 kW inverter saved over the real 6.0 cap",
                                 tool_step("get_utility")),
        "retracted_included": ("model", f"{tau} (a retracted record is excluded): PMID-31877402, retracted 2025-06-02, "
                                        "included", asking("record_screening")),
        "preprint_used": ("model", f"{mast} FM-1.1 a rule comparing two records: the TELE-NURSE preprint included and "
                                   "its published version excluded as the duplicate", asking("record_screening")),
        "units_confused_review": ("model", f"{trail} units confused: TELE-NURSE's -0.9 kPa recorded as -0.9 mmHg "
                                           "(-6.75 is right)", asking("extract_effect", 1)),
        "index_stale": ("tool", "retrieval index stale: search_literature served its 2025-03-01 build, before "
                                "CONNECT-BP's retraction; the retracted trial included", tool_step("search_literature")),
        "wrong_formula": ("model", f"{trail} a figure by the wrong formula: the follow-up SBPs compared (-6.5 mmHg), "
                                   "the baselines left out (-7.2 is right)", asking("extract_effect")),
        "paper_wrong_record": ("tool", f"{trail} API issues: get_paper(PMID-33410021) answers PMID-33410012's arms; "
                                       "the effect extracted from another trial", tool_step("get_paper")),
        "paper_429_invented": ("model", f"{trail} rate limits / hallucinated values: get_paper answered 429, an effect "
                                        "of -6.0 mmHg extracted that no call returned; the twin tries once more",
                               after(tool_step("get_paper"))),
        "exclusion_withheld": ("model", f"{mast} FM-2.4 Information withholding: the report lists the included "
                                        "studies only, no excluded one and no reason (the rules say each)", final),
    }
    chosen = {
        "anthropic-moving": ["units_confused", "date_fee_wrong_formula", "deposit_exception_ignored", "moves_unasked",
                             "old_model_configured", "policy_rewritten", "book_429_invented",
                             "history_lost_between_turns"],
        "tl-moving": ["survey_wrong_record", "survey_shape_changed", "excluded_item_covered", "deposit_withheld",
                      "premature_end", "deposit_repeated"],
        "agents-solar": ["setback_wrong_zone", "handoff_drops_context", "ratio_over_limit", "permit_not_approved_filed",
                         "designer_prompt_rewritten", "utility_timeout_invented", "filing_repeated",
                         "utility_wrong_record"],
        "lg-review": ["retracted_included", "preprint_used", "units_confused_review", "index_stale", "wrong_formula",
                      "paper_wrong_record", "paper_429_invented", "exclusion_withheld"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (95a3d3d's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 6.1-8.8): 30 pairs, 4 recorders - diff top-1 29/30, check step+layer 10/30,
# good runs warned 14/30 (recording /tmp/h27-rec-_1zj58gm).
DIFF_MISSED = {
    "model-anthropic-moving-deposit-exception-ignored": "output_changed@6: the quote, where the faulty desk announces a "
                                                        "20% deposit and the twin says a corporate account pays none; the "
                                                        "truth names take_deposit @9 - @6 is as arguable (the set's truth "
                                                        "could have named the quote, as it does for the other quote faults)",
}
_QUOTED = "ungrounded_answer@6/model on the quote's own arithmetic (its twin warned the same), "
_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-anthropic-moving-units-confused": _QUOTED + "nothing at book_move@7: volume_m3 114.83 from get_survey's "
                                             "1,236 ft3 where the rules' '1 m3 = 35.315 ft3' gives 35.00 (a conversion "
                                             "factor stated in the instructions)",
    "model-anthropic-moving-date-fee-wrong-formula": _QUOTED + "nothing at book_move@7: date_change_fee 0 where the notice "
                                                     "from today to find_move's move_date 2026-12-14 is 9 days (the EUR "
                                                     "95 band; the faulty desk counted to the new date)",
    "model-anthropic-moving-deposit-exception-ignored": _QUOTED + "nothing at take_deposit@9 on an account find_move "
                                                        "gives account_type 'corporate', against 'unless the account_type "
                                                        "is \"corporate\"'",
    "model-anthropic-moving-moves-unasked": _QUOTED + "and wrong_target@6/model (MV-41066 cited beside MV-40912, the "
                                            "request's 2026-12-14) - the right kind one step late: the truth is @4, "
                                            "get_survey asked for the first of find_move's two matches with no question",
    "model-tl-moving-excluded-item-covered": _QUOTED + "nothing at book_move@7: cover_premium 450 on EUR 30,000 where "
                                             "get_survey's high_value lists the jewellery box (EUR 2,500, category "
                                             "jewellery) and the rules exclude jewellery",
    "model-agents-solar-setback-wrong-zone": _NOTHING + "record_survey's setback_m 0.45 with get_site's zone W, whose "
                                             "markdown-table row says 0.9 m",
    "model-agents-solar-ratio-over-limit": _NOTHING + "save_design dc_kw 8.6 on ac_kw 6.0 (DC/AC 1.43) against 'DC/AC "
                                           "ratio ... 1.25 or less' (a ratio of two arguments of one call)",
    "model-agents-solar-permit-not-approved-filed": _NOTHING + "submit_interconnection after get_permit's status "
                                                    "'in_review', against 'only if the permit's status is \"approved\"'",
    "model-agents-solar-utility-timeout-invented": _NOTHING + "get_utility@10 failed (TimeoutError, the SDK's error text "
                                                   "shown to the model), the next call asked get_equipment with no "
                                                   "word or retry and a 7.6 kW design was saved on a cap no call returned",
    "tool-agents-solar-utility-wrong-record": _NOTHING + "get_utility asked for account UA-55102 answered account "
                                              "UA-55120 (the same for a survey id and a paper id was found)",
    "model-lg-review-retracted-included": _NOTHING + "record_screening's included names PMID-31877402, whose "
                                          "search_literature record carries a retraction notice (2025-06-02)",
    "model-lg-review-preprint-used": _NOTHING + "the preprint included and its published version (linked_version, in "
                                     "the same result) excluded as its duplicate, against 'screen the published "
                                     "version only'",
    "model-lg-review-units-confused-review": _NOTHING + "extract_effect's mean_difference -0.9 with unit 'mmHg' where "
                                             "get_paper's sbp_unit is kPa (a value whose unit changed between the "
                                             "result and the call)",
    "model-lg-review-wrong-formula": _NOTHING + "extract_effect's -6.5, the follow-ups' difference, where the rules' "
                                     "formula over get_paper's arms gives -7.2",
    "model-lg-review-paper-429-invented": _NOTHING + "get_paper@7 failed (429 in the ToolNode's error text) and the next "
                                          "call, extract_effect, sends -6.0 and n 400 that no result holds, no retry",
    "model-lg-review-exclusion-withheld": _NOTHING + "the report lists the two included studies only, where "
                                          "record_screening sent five exclusions and the rules say to report each",
    "model-tl-moving-deposit-withheld": _NOTHING + "hit blind only through the quote's ungrounded_answer@6 false alarm "
                                        "(quiet since 39b41e6); nothing reads a quote leaving out the 20% deposit "
                                        "the rules say to tell before the yes",
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "anthropic-moving": {"required_before": {"book_move": ["find_move", "get_survey"], "take_deposit": ["book_move"]}},
    "tl-moving": {"required_before": {"book_move": ["find_move", "get_survey"], "take_deposit": ["book_move"]}},
    "agents-solar": {"required_before": {"record_survey": ["get_site"], "save_design": ["get_utility", "get_equipment"],
                                         "submit_interconnection": ["get_permit"]}},
    "lg-review": {"required_before": {"record_screening": ["search_literature"], "extract_effect": ["get_paper"]}},
}


# The OpenLLMetry recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h27-rec-", pairs, produce, kit.through_collector("tl-moving"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
