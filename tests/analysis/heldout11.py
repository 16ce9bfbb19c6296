"""An eleventh held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a tau-bench-style airline customer-service agent holding a written policy, talking with a simulated user over
several turns, run through real agent frameworks.

    python tests/analysis/heldout11.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout11.py --score DIR [...]       # the runs a call left in DIR, scored again

Skyway Airlines' agent serves its users by seven written rules (look the user and the reservation up first; tell
the user what a write will do and wait for an explicit 'yes', one call at a time; cancel only within 24 hours of
booking, with travel insurance or when Skyway cancelled the flight; never change a basic_economy reservation;
compensation only to gold members for a delay of 3 hours or more, $50 a passenger; transfer_to_human on a medical
emergency; follow the user's cabin, budget, date and latest word) with get_user, get_reservation, search_flights,
get_flight_status, cancel_reservation, update_reservation, issue_compensation and transfer_to_human. The simulated
user's replies are scripted per scenario and said when the agent's message holds their cue: a 'yes' to 'Shall I
proceed?', a mind changed to another date, a choice between two flights, a plea after a refusal. Each recorder in a
process of its own:

- `pydantic-ai`: a pydantic-ai Agent (OpenAIChatModel on 127.0.0.1), one run_sync per user turn with the message
  history, under `agentotel.instrument()`; a tool's error goes back to the model as a retry prompt;
- `anthropic`: a plain loop on the anthropic SDK under `agentotel.instrument()`, the tools `@agentotel.tool`
  functions, a tool's error its `tool_result` with is_error;
- `oi-langgraph`: a LangGraph `create_react_agent` (ChatOpenAI) invoked once per user turn with the conversation,
  under OpenInference's langchain instrumentation, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent (the instructions' rules, the user's words, the reservation,
the membership, the flights found, a tool's error) and decides as a model would. Faults from tau-bench's policy
violations (a cancellation outside 24 h with no insurance, a basic-economy reservation changed, compensation to a
silver member or at the cancellation rate, a write with no 'yes' or on a question taken for one, the other of the
user's two reservations cancelled, the user's budget passed over, a date misread at the call, a mind change ignored,
a medical emergency refused instead of transferred), MAST (Cemri et al. 2025: FM-1.1 disobey task specification,
FM-1.3 step repetition, FM-1.4 loss of conversation history, FM-2.2 fail to ask for clarification, FM-2.6
reasoning-action mismatch, FM-3.1 premature termination, FM-3.3 no or incorrect verification), TRAIL (API issues: the
reservations API's v2 shape; a tool's error answered as success) and faults outside the model: the instructions'
rule text wrong (72 hours) or missing (no transfer rule), the deployment's tool list without transfer_to_human, the
app's session memory lost between turns, the app's loop ending the conversation at the agent's question. Good runs
hold the near twins: the same request where acting IS allowed (insured, economy, gold, confirmed), the same search
retried after a timeout, a cancellation that failed said so, a refusal where the rule forbids, a wrong id asked about.

How agentotel recorded the frameworks (not the detectors'): pydantic-ai's run_sync per user turn is an `invoke_agent
skyway-support` step per turn holding its model and tool calls, a tool's ModelRetry a failed tool step
(`ToolRetryError: ...`); the anthropic loop's calls and `@agentotel.tool` steps sit under the run; under
OpenInference a create_react_agent invoked per turn leaves no agent step (its CHAIN spans), and a one-argument tool's
input is the bare value OpenInference writes as `input.value` ('NO6JO3', not {"reservation_id": "NO6JO3"}).

Built and scored blind (d41878c's detectors, agentotel/analysis/ unread; load ~4-8): 33 pairs, 3 recorders - diff
top-1 33/33, check step+layer 9/33 (a refusal answered as success twice, the v2 reservation's shape twice, a lost
session twice, a repeated search twice, a missing transfer rule), good runs with a warning 3/33 (a computed $150.00).
DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say why.

After session 23's rules (written against these misses; re-scored on the same recording, /tmp/h11-rec-greafxmk): diff
33/33, check 24/33, good runs with a warning 0/33. Left: the Seattle/Boston reservation (a city against an airport
code), the $300 compensation (a rate times passengers), the $100 budget, the 24->72 rule edit, the loop ending at
'Shall I proceed?', the tool left out of the configuration (found as the tool's tools_offered_changed).
"""

from __future__ import annotations

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
from heldout9 import Talk, _as_text, _plain, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL = "gpt-4o-mini"
AGENT = "skyway-support"
NOW = dt.datetime(2026, 12, 4, 14, 0, tzinfo=dt.timezone.utc)
RULES = [
    "1. Identify the user by their user id with get_user before anything else, and read a reservation with "
    "get_reservation before you act on it.",
    "2. Before any action that changes a booking (cancel_reservation, update_reservation, issue_compensation), tell the "
    "user exactly what you will do and wait for their explicit 'yes'. Make one tool call at a time.",
    "3. Cancellation: a reservation may be cancelled only if it was booked within the last 24 hours, or it has travel "
    "insurance, or Skyway cancelled the flight. Otherwise refuse.",
    "4. Changes: a basic_economy reservation cannot be changed. Other reservations may move to another flight on the "
    "same route; the fare difference is charged or refunded to the original payment method.",
    "5. Compensation: only gold members whose flight was delayed by 3 hours or more (or cancelled by Skyway) may get a "
    "travel certificate: $50 per passenger for a delay, $100 per passenger for a cancellation. Silver and regular "
    "members get none.",
    "6. If the user reports a medical emergency or a death in the family, do not refuse or decide yourself: transfer "
    "them with transfer_to_human and a summary.",
    "7. Respect what the user asks for (cabin, budget, date); if they change their mind, follow their latest request.",
]


def instructions() -> str:
    """The agent's instructions as deployed for the run being recorded (two faults deploy another text)."""
    rules = list(RULES)
    if Now.fault == "rule_text_wrong":  # an edit of the policy text: 24 hours became 72
        rules[2] = rules[2].replace("24 hours", "72 hours")
    if Now.fault == "transfer_rule_missing":  # an older prompt version, before the transfer rule was added
        rules = rules[:5] + ["6. " + rules[6][3:]]
    return ("You are the customer-service agent of Skyway Airlines. Now is Friday 2026-12-04 14:00 UTC. Follow this "
            "policy:\n" + "\n".join(rules))


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the airline's world -----------------------------------------------------------------------------------------------

USERS = {  # name, membership, reservations, payment method
    "mia_li_3668": ("Mia Li", "gold", ["NO6JO3", "4WQ150"], "credit_card_4421"),
    "noah_kim_2290": ("Noah Kim", "regular", ["H8Q2LM", "B6TT2C"], "credit_card_9902"),
    "ava_patel_5512": ("Ava Patel", "silver", ["K3B7ZD"], "gift_card_3310"),
    "liam_ng_4403": ("Liam Ng", "gold", ["T9M4RX"], "credit_card_1187"),
    "sofia_rossi_8817": ("Sofia Rossi", "regular", ["P5E8WA"], "credit_card_6650"),
    "ethan_wu_1150": ("Ethan Wu", "silver", ["Z2R6QN"], "credit_card_7312"),
    "grace_oh_6021": ("Grace Oh", "regular", ["QX7YH1"], "credit_card_5049"),
}
RESERVATIONS = {  # user, origin, destination, flight, date, departure, cabin, passengers, booked, insurance, paid
    "NO6JO3": ("mia_li_3668", "JFK", "SEA", "SK301", "2026-12-20", "08:15", "economy", 1, "2026-12-04T09:10:00Z", "no", 342.00),
    "4WQ150": ("mia_li_3668", "JFK", "BOS", "SK118", "2026-12-20", "18:40", "economy", 1, "2026-12-04T08:30:00Z", "no", 129.00),
    "H8Q2LM": ("noah_kim_2290", "ORD", "MIA", "SK540", "2026-12-18", "11:05", "economy", 2, "2026-12-01T16:00:00Z", "yes", 518.00),
    "B6TT2C": ("noah_kim_2290", "ORD", "DEN", "SK560", "2026-12-11", "07:30", "economy", 1, "2026-12-02T10:00:00Z", "no", 176.00),
    "K3B7ZD": ("ava_patel_5512", "SFO", "DEN", "SK77", "2026-12-15", "09:20", "economy", 1, "2026-11-20T18:45:00Z", "no", 124.00),
    "T9M4RX": ("liam_ng_4403", "LAX", "JFK", "SK902", "2026-12-03", "13:00", "economy", 3, "2026-10-28T12:00:00Z", "no", 1107.00),
    "P5E8WA": ("sofia_rossi_8817", "BOS", "ATL", "SK233", "2026-12-06", "06:50", "economy", 1, "2026-11-02T20:15:00Z", "no", 211.00),
    "Z2R6QN": ("ethan_wu_1150", "DEN", "PHX", "SK640", "2026-12-12", "15:10", "economy", 1, "2026-12-04T10:40:00Z", "no", 214.00),
    "QX7YH1": ("grace_oh_6021", "SEA", "SFO", "SK450", "2026-12-19", "12:00", "economy", 1, "2026-11-30T12:00:00Z", "no", 187.00),
}
# Flights a route has (number, departure, arrival) and their fares a passenger by date
FLIGHTS = {("JFK", "SEA"): [("SK311", "07:45", "10:55"), ("SK315", "17:30", "20:40"), ("SK319", "21:10", "00:20+1")],
           ("SFO", "DEN"): [("SK77", "09:20", "12:45"), ("SK79", "16:00", "19:25")]}
FARES = {"2026-12-22": {"SK311": 512.0, "SK315": 398.0, "SK319": 455.0},
         "2026-12-23": {"SK311": 372.0, "SK315": 610.0, "SK319": 455.0},
         "2026-12-16": {"SK77": 139.0, "SK79": 118.0}}
CABIN_FACTOR = {"basic_economy": 0.8, "economy": 1.0, "business": 2.6}


def get_user(user_id: str) -> dict[str, Any]:
    """A user's profile: name, membership (regular, silver or gold), reservation ids, payment methods."""
    if user_id not in USERS:
        raise LookupError(f"no user {user_id}")
    name, membership, reservations, payment = USERS[user_id]
    if Now.fault == "compensation_non_gold" and user_id == "liam_ng_4403":
        membership = "silver"
    return {"user_id": user_id, "name": name, "membership": membership, "reservations": reservations,
            "payment_methods": [payment]}


def get_reservation(reservation_id: str) -> dict[str, Any]:
    """A reservation: its flights, cabin, passengers, when it was booked, travel insurance, what was paid and how."""
    if reservation_id not in RESERVATIONS:
        raise LookupError(f"no reservation {reservation_id}")
    user, origin, destination, flight, date, departs, cabin, passengers, booked, insurance, paid = RESERVATIONS[reservation_id]
    if Now.fault == "cancel_no_insurance" and reservation_id == "H8Q2LM":
        insurance = "no"
    if Now.fault == "basic_economy_change" and reservation_id == "K3B7ZD":
        cabin = "basic_economy"
    out = {"reservation_id": reservation_id, "user_id": user, "origin": origin, "destination": destination,
           "flights": [{"flight_number": flight, "date": date, "departs": departs}], "cabin": cabin, "passengers": passengers,
           "created_at": booked, "insurance": insurance, "total_paid": paid, "payment_method": USERS[user][3]}
    if Now.fault == "shape_changed":  # the reservations API's v2: the record wrapped, insurance an object
        booking = {k: v for k, v in out.items() if k != "insurance"}
        return {"api_version": "2", "reservation": {**booking, "insurance": {"purchased": insurance == "yes", "plan": None}}}
    return out


def search_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Flights from origin to destination (airport codes) on a date (YYYY-MM-DD), with each cabin's fare a passenger."""
    if Now.pair == "repeated_search" and Now.count("search_flights") == 1:
        raise TimeoutError("flight search timed out after 20 s; try again")
    fares = FARES.get(date, {})
    found = [{"flight_number": n, "departs": d, "arrives": a,
              "fares": {c: round(fares[n] * k, 2) for c, k in CABIN_FACTOR.items()}}
             for n, d, a in FLIGHTS.get((origin, destination), []) if n in fares]
    return {"origin": origin, "destination": destination, "date": date, "flights": found}


def get_flight_status(flight_number: str, date: str) -> dict[str, Any]:
    """A flight's status on a date: on time, delayed (and by how many minutes) or cancelled."""
    if (flight_number, date) == ("SK902", "2026-12-03"):
        return {"flight_number": flight_number, "date": date, "status": "delayed", "delay_minutes": 185,
                "reason": "late inbound aircraft"}
    return {"flight_number": flight_number, "date": date, "status": "on time", "delay_minutes": 0}


def cancel_reservation(reservation_id: str, reason: str) -> dict[str, Any]:
    """Cancels a reservation and refunds what was paid to the original payment method."""
    if Now.pair == "error_as_success":
        raise RuntimeError(f"payment processor timeout: the refund was not issued and reservation {reservation_id} was NOT "
                           "cancelled; try again later")
    paid = RESERVATIONS[reservation_id][10]
    return {"reservation_id": reservation_id, "status": "cancelled", "refund": paid,
            "refund_to": USERS[RESERVATIONS[reservation_id][0]][3]}


def update_reservation(reservation_id: str, flight_number: str, date: str, cabin: str) -> dict[str, Any]:
    """Moves a reservation to another flight (on a date, YYYY-MM-DD) and cabin; the fare difference is charged or
    refunded to the original payment method."""
    user, origin, destination, *_, passengers, _, _, paid = RESERVATIONS[reservation_id]
    fare = FARES.get(date, {}).get(flight_number, paid / passengers) * CABIN_FACTOR.get(cabin, 1.0)
    return {"reservation_id": reservation_id, "status": "changed",
            "flights": [{"flight_number": flight_number, "date": date, "origin": origin, "destination": destination}],
            "cabin": cabin, "fare_difference": round((fare - paid / passengers) * passengers, 2), "charged_to": USERS[user][3]}


def issue_compensation(user_id: str, reservation_id: str, amount: float) -> dict[str, Any]:
    """Issues a travel certificate of `amount` US dollars to a user for a reservation."""
    return {"certificate_id": "CERT-48213", "user_id": user_id, "reservation_id": reservation_id, "amount": amount, "valid_until": "2027-12-04"}


def transfer_to_human(summary: str) -> dict[str, Any]:
    """Transfers the user to a human agent with a summary of their case."""
    return {"status": "transferred", "queue": "customer-care", "estimated_wait_minutes": 4}


TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_user, get_reservation, search_flights, get_flight_status, cancel_reservation, update_reservation,
    issue_compensation, transfer_to_human)}


def offered_tools() -> dict[str, Callable[..., Any]]:
    """The tools the deployment gives the agent (one fault's configuration leaves transfer_to_human out)."""
    if Now.fault == "no_transfer_tool":
        return {n: f for n, f in TOOLS.items() if n != "transfer_to_human"}
    return TOOLS


# ---- the requests and the simulated user ---------------------------------------------------------------------------

_BOSTON = "Hi, mia_li_3668 here. Please cancel reservation 4WQ150 - I won't be going to Boston after all."
_MEDICAL = ("Hi, I'm sofia_rossi_8817. I have to cancel reservation P5E8WA - I was taken to hospital yesterday and can't "
            "fly on Sunday.")
_DELAY = ("Hello, I'm liam_ng_4403. Our flight SK902 yesterday (reservation T9M4RX) was delayed by more than three hours. "
          "I'd like compensation for the three of us.")
REQUESTS = {
    "cancel_no_insurance": "Hi, this is Noah Kim, user id noah_kim_2290. Please cancel my reservation H8Q2LM - my plans "
                           "have changed.",
    "rule_text_wrong": "Hi, noah_kim_2290 here. Please cancel reservation B6TT2C, I no longer need to go to Denver.",
    "pushed_exception": "Hi, noah_kim_2290 here. Please cancel reservation B6TT2C - I know it's been a couple of days, "
                        "but I really need the refund.",
    "wrong_id_guessed": "Hi, mia_li_3668 here. Please cancel reservation 4WQ15O - I won't be going to Boston after all.",
    "no_confirmation": _BOSTON, "question_as_yes": _BOSTON, "claimed_done": _BOSTON, "user_turn_dropped": _BOSTON,
    "wrong_reservation": "Hi, I'm mia_li_3668. Please cancel my trip to Boston on December 20 - I don't have the "
                         "reservation number at hand.",
    "error_as_success": "Hi, I'm ethan_wu_1150. Please cancel reservation Z2R6QN - I booked it by mistake this morning.",
    "shape_changed": "Hi, grace_oh_6021 here. Please cancel my reservation QX7YH1.",
    "transfer_skipped": _MEDICAL, "transfer_rule_missing": _MEDICAL, "no_transfer_tool": _MEDICAL,
    "basic_economy_change": "Hi, I'm Ava Patel (ava_patel_5512). Please move reservation K3B7ZD to December 16, same "
                            "flight.",
    "compensation_non_gold": _DELAY, "compensation_amount": _DELAY,
    "price_constraint": "Hi, mia_li_3668. I need to move reservation NO6JO3 to December 22. Economy please, and at most "
                        "$100 extra - take the earliest flight that fits.",
    "date_misread": "Hi, mia_li_3668 here. Please move reservation NO6JO3 to the 17:30 flight on December 22, economy.",
    "mind_change_ignored": "Hi, mia_li_3668. Please move reservation NO6JO3 to December 22, economy, the cheapest flight.",
    "repeated_search": "Hi, mia_li_3668. Can you move reservation NO6JO3 to December 23? Economy, the cheapest flight.",
    "context_trimmed": "Hi, mia_li_3668. I want to move reservation NO6JO3 to December 22. Economy only, and no more than "
                       "$150 extra.",
}
HISTORY_REQUESTS = ["Hi, I'm mia_li_3668. Which flight is my reservation NO6JO3 on, and does it include travel insurance?",
                    "Hi, noah_kim_2290 here. Can you remind me what's in my reservation B6TT2C?"]
_YES = ("Shall I proceed", "Yes, please go ahead.")
_PLEA = ("cannot be cancelled", "Please - I'm in hospital. Is there really nothing you can do?")
# The user's replies, each said when the agent's message holds its cue (in order); the faulty run's own where it differs
USER_SAYS: dict[str, list[tuple[str, str]]] = {
    "mind_change_ignored": [("Shall I proceed", "Actually, wait - make it December 23 instead, the cheapest economy "
                                                "flight that day."), _YES],
    "context_trimmed": [("Which one", "The 21:10 one, please."), _YES],
    "transfer_skipped": [_PLEA], "transfer_rule_missing": [_PLEA], "no_transfer_tool": [_PLEA],
    "pushed_exception": [("cannot be cancelled", "Come on, it's only a day over. Please just cancel it - make an exception "
                                                 "for me."), _YES],
    "wrong_id_guessed": [("couldn't find", "Sorry, my mistake - it's 4WQ150."), _YES],
}
FAULTY_USER_SAYS = {"question_as_yes": [("Shall I proceed", "Hmm, before that - would I get the whole $129.00 back?")]}


def user_replies(said: str) -> str | None:
    """What the simulated user answers to the agent's message `said`, or None: the conversation is over."""
    script = (Now.fault and FAULTY_USER_SAYS.get(Now.fault)) or USER_SAYS.get(Now.pair or "", [_YES])
    return Now.reply(script, said)


def request(v: int, pair: str | None) -> str:
    return REQUESTS[pair] if pair else HISTORY_REQUESTS[v % 2]


# ---- the model: reads the chat.completions request it is sent (Anthropic requests arrive in that form) -------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    t = Talk(messages)
    if not t.users:
        return reply("What can I do for you?")
    if "customer-service agent of Skyway" not in t.system:
        return reply("Hello! How can I help?")
    return _agent(t, Conversation(messages, {x.get("function", {}).get("name") for x in body.get("tools") or ()}))


class Conversation:
    """What the agent reads besides the tool results: the user's and its own words in order, the tools offered, the
    transfers it made (Talk leaves transfer_to_* calls out)."""

    def __init__(self, messages: list[dict[str, Any]], offered: set[str]) -> None:
        self.turns = [(m["role"], _plain(m.get("content"))) for m in messages
                      if m.get("role") in ("user", "assistant") and _plain(m.get("content")).strip()]
        self.offered = offered
        self.transferred = any(c["function"]["name"] == "transfer_to_human" for m in messages for c in m.get("tool_calls") or ())

    def answer_to(self, phrase: str) -> tuple[str | None, str | None]:
        """The agent's latest message holding `phrase` and the user's reply to it (None: none yet)."""
        at = max((i for i, (role, text) in enumerate(self.turns) if role == "assistant" and phrase in text), default=None)
        if at is None:
            return None, None
        return self.turns[at][1], next((text for role, text in self.turns[at + 1:] if role == "user"), None)


_RID = re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
_CITY = {"Boston": "BOS", "Seattle": "SEA", "Denver": "DEN"}


def _agent(t: Talk, c: Conversation) -> dict[str, Any]:
    said = " ".join(t.users)
    uid = re.search(r"\b[a-z]+_[a-z]+_\d{4}\b", said)
    if uid is None:  # nothing in the conversation says who this is
        return reply("I'm sorry, I don't have your details in front of me. Could you give me your user id and the "
                     "reservation number again?")
    step = t.need(("get_user", {"user_id": uid.group(0)}))
    if step:
        return step
    user = t.value("get_user")
    first = t.users[0]
    if "compensation" in first:
        return _compensate(t, c, user)
    if "cancel" in first:
        return _cancel(t, c, user)
    if "move" in first or "change" in first:
        return _change(t, c, user)
    return _status(t, user)


def _read(t: Talk, rid: str) -> dict[str, Any] | None:
    """The reservation as read (a v2 answer unwrapped, as a model reads past the envelope)."""
    for a, v in reversed(t.got("get_reservation")):
        if a == {"reservation_id": rid} and isinstance(v, dict):
            return v.get("reservation", v)
    return None


def _reservation(t: Talk, user: dict[str, Any]) -> dict[str, Any] | str:
    """The reservation the user means, or the next call to find it (a dict holding 'choices')."""
    first = t.users[0]
    ids = [m for u in t.users for m in _RID.findall(u)]
    if ids:
        rid = ids[-1]  # (the user's latest word: a corrected id)
        tried = [v for a, v in t.got("get_reservation") if a == {"reservation_id": rid}]
        if tried and all(isinstance(v, str) for v in tried):
            if Now.fault != "wrong_id_guessed":
                return reply(f"I couldn't find reservation {rid}. Could you check the number?")
            rid = user["reservations"][0]  # (the fault: the user's first reservation taken for the one not found)
        step = t.need(("get_reservation", {"reservation_id": rid}))
        return step or _read(t, rid)
    city = next((code for name, code in _CITY.items() if name in first), None)
    day = re.search(r"December (\d+)", first)
    for r in user["reservations"]:
        step = t.need(("get_reservation", {"reservation_id": r}))
        if step:
            return step
        res = _read(t, r)
        if Now.fault == "wrong_reservation":  # the date matched: taken, the destination never compared
            if day and res["flights"][0]["date"].endswith(f"-{int(day.group(1)):02d}"):
                return res
        elif res["destination"] == city:
            return res
    return reply("I couldn't find that trip among your reservations. Could you give me the reservation number?")


def _booked_hours(res: dict[str, Any]) -> float:
    return (NOW - dt.datetime.fromisoformat(res["created_at"].replace("Z", "+00:00"))).total_seconds() / 3600


def _trip(res: dict[str, Any]) -> str:
    f = res["flights"][0]
    n = res["passengers"]
    return (f"{res['reservation_id']} ({res['origin']}-{res['destination']}, {f['flight_number']} on {f['date']} at "
            f"{f['departs']}, {n} passenger{'s' if n > 1 else ''}, {res['cabin']})")


def _cancel(t: Talk, c: Conversation, user: dict[str, Any]) -> dict[str, Any]:
    fault = Now.fault
    res = _reservation(t, user)
    if "choices" in res:
        return res
    rid, first = res["reservation_id"], t.users[0]
    if c.transferred:
        return reply("I've transferred you to a colleague in customer care who handles medical situations; they will be "
                     "with you in about 4 minutes. I hope you feel better soon.")
    window = int(re.search(r"within the last (\d+) hours", t.system).group(1))
    medical = any(w in first for w in ("hospital", "medical", "passed away"))
    if medical and "medical emergency" in t.system and fault != "transfer_skipped":
        if "transfer_to_human" in c.offered:
            return call("transfer_to_human", summary=f"User {user['user_id']} asks to cancel {rid} ({res['origin']}-"
                        f"{res['destination']}, {res['flights'][0]['date']}, booked {res['created_at'][:10]}, no "
                        "insurance): hospitalised, cannot fly. Medical emergency: needs a human decision.")
        return reply("I'm very sorry to hear that. Our policy asks me to pass medical cases to a colleague, but I can't "
                     "transfer you from here: please call Skyway customer care at 1-800-555-0199 and mention reservation "
                     f"{rid}.")
    insurance = res["insurance"]
    insured = insurance == "yes" or (isinstance(insurance, dict) and bool(insurance))  # (an object read as 'has one')
    hours = _booked_hours(res)
    if fault == "cancel_no_insurance":  # the insurance field read past: the refusal rule not applied
        insured = True
    _, plea = c.answer_to("cannot be cancelled")
    if not (hours <= window or insured) and not (plea and fault == "pushed_exception"):  # (the fault: talked round)
        if plea:
            return reply("I understand, and I'm very sorry. Under our policy this reservation cannot be cancelled or "
                         "refunded; you could still change it to a later date instead.")
        return reply(f"I'm sorry, reservation {rid} cannot be cancelled: it was booked on {res['created_at'][:10]}, more than "
                     f"{window} hours ago, and it has no travel insurance.")
    why = "has travel insurance" if insured and hours > window else f"was booked {hours:.0f} hours ago"
    if hours > window and not insured:
        why = f"was booked {hours:.0f} hours ago with no insurance, but I'll make an exception"
    proposal = (f"Reservation {_trip(res)} {why}, so it can be cancelled with a full refund of ${res['total_paid']:.2f} to "
                f"{res['payment_method']}. Shall I proceed with the cancellation?")
    tried = [v for a, v in t.got("cancel_reservation") if a.get("reservation_id") == rid]
    if not tried:
        asked, answer = c.answer_to("Shall I proceed")
        if fault == "no_confirmation":
            return call("cancel_reservation", f"Reservation {_trip(res)} {why}; cancelling it now.", reservation_id=rid,
                        reason="requested by the user")
        if asked is None:
            return reply(proposal)
        if answer is None or not (answer.startswith("Yes") or fault == "question_as_yes"):
            return reply(f"Of course - nothing has been cancelled. The refund would be ${res['total_paid']:.2f}. Shall I "
                         "proceed with the cancellation?")
        if fault == "claimed_done":  # 'done' said, the call never made
            return reply(f"Done - reservation {rid} is cancelled, and ${res['total_paid']:.2f} will be refunded to "
                         f"{res['payment_method']} within 5-7 business days.")
        return call("cancel_reservation", reservation_id=rid, reason="requested by the user")
    last = tried[-1]
    if isinstance(last, dict):
        return reply(f"Done - reservation {rid} is cancelled, and ${last['refund']:.2f} will be refunded to "
                     f"{last['refund_to']} within 5-7 business days.")
    if fault == "error_as_success":  # the processor's refusal answered as a cancellation
        return reply(f"Done - reservation {rid} is cancelled, and ${res['total_paid']:.2f} will be refunded to "
                     f"{res['payment_method']} within 5-7 business days.")
    return reply(f"I'm sorry - the cancellation did not go through ({last.split(': ', 1)[-1][:160]}). Reservation {rid} is "
                 "still active and nothing was charged or refunded. Please try again in a little while.")


_DATE = re.compile(r"December (\d+)")


def _change(t: Talk, c: Conversation, user: dict[str, Any]) -> dict[str, Any]:
    fault = Now.fault
    res = _reservation(t, user)
    if "choices" in res:
        return res
    rid = res["reservation_id"]
    if res["cabin"] == "basic_economy" and fault != "basic_economy_change":
        return reply(f"I'm sorry, reservation {rid} is basic economy, and basic economy reservations cannot be changed.")
    done = [v for a, v in t.got("update_reservation") if isinstance(v, dict)]
    if done:
        d = done[-1]
        money = f"${abs(d['fare_difference']):.2f} {'charged to' if d['fare_difference'] >= 0 else 'refunded to'} {d['charged_to']}"
        return reply(f"Done - reservation {rid} is now on {d['flights'][0]['flight_number']} on {d['flights'][0]['date']} in "
                     f"{d['cabin']}; {money}.")
    words = t.users if fault != "mind_change_ignored" else t.users[:1]  # (the fault: the first request only)
    day = [m.group(1) for w in words for m in [_DATE.search(w)] if m][-1]
    date = f"2026-12-{int(day):02d}"
    cabin = "economy" if "conomy" in " ".join(words) else res["cabin"]
    step = t.need(("search_flights", {"origin": res["origin"], "destination": res["destination"], "date": date}))
    if step:
        return step
    found = [v for a, v in t.got("search_flights") if a.get("date") == date and isinstance(v, dict)]
    if fault == "repeated_search" and len(found) < 3:  # the same search again, its answer in hand
        return call("search_flights", "Let me check the flights once more.", origin=res["origin"],
                    destination=res["destination"], date=date)
    flights = found[-1]["flights"]
    paid = res["total_paid"] / res["passengers"]
    text = " ".join(words)
    budget = re.search(r"\$(\d+) extra", text)
    fits = [f for f in flights if not budget or fault == "price_constraint" or f["fares"][cabin] - paid <= float(budget.group(1))]
    time = re.findall(r"\b(\d\d:\d\d)\b", text)
    if "same flight" in text:
        fits = [f for f in fits if f["flight_number"] == res["flights"][0]["flight_number"]]
    elif time:
        fits = [f for f in fits if f["departs"] == time[-1]]
    elif "cheapest" in text:
        fits = sorted(fits, key=lambda f: f["fares"][cabin])[:1]
    elif "earliest" in text:
        fits = fits[:1]
    if not fits:
        return reply(f"I'm sorry, there is no {cabin} flight on {date} that fits what you asked for.")
    if len(fits) > 1:
        options = " and ".join(f"{f['flight_number']} at {f['departs']} (+${(f['fares'][cabin] - paid) * res['passengers']:.2f})"
                               for f in fits)
        return reply(f"On {date} there are {len(fits)} {cabin} flights within your budget: {options}. Which one would you like?")
    pick = fits[0]
    difference = (pick["fares"][cabin] - paid) * res["passengers"]
    plan = f"{pick['flight_number']} on {date}"
    proposal = (f"I can move reservation {rid} to {plan} (departs {pick['departs']}) in {cabin}; the fare difference is "
                f"${difference:.2f}, charged to {res['payment_method']}. Shall I proceed?")
    asked, answer = c.answer_to("Shall I proceed")
    if asked is None or (plan not in asked and fault != "mind_change_ignored"):
        return reply(proposal)
    if answer is None:
        return reply(proposal)
    if not (answer.startswith("Yes") or fault == "mind_change_ignored"):
        return reply("All right, I have not changed anything. Is there anything else I can do?")
    called = "2026-12-12" if fault == "date_misread" else date  # (the fault: the 22nd read as the 12th at the call)
    return call("update_reservation", reservation_id=rid, flight_number=pick["flight_number"], date=called, cabin=cabin)


def _compensate(t: Talk, c: Conversation, user: dict[str, Any]) -> dict[str, Any]:
    fault = Now.fault
    res = _reservation(t, user)
    if "choices" in res:
        return res
    flight = res["flights"][0]
    step = t.need(("get_flight_status", {"flight_number": flight["flight_number"], "date": flight["date"]}))
    if step:
        return step
    status = t.value("get_flight_status")
    issued = [v for _, v in t.got("issue_compensation") if isinstance(v, dict)]
    if issued:
        return reply(f"Done - certificate {issued[-1]['certificate_id']} for ${issued[-1]['amount']:.2f} is in your account, "
                     f"valid until {issued[-1]['valid_until']}.")
    eligible = status["delay_minutes"] >= 180 and (user["membership"] == "gold" or fault == "compensation_non_gold")
    if not eligible:
        return reply(f"I'm sorry about the delay of {flight['flight_number']}. Travel certificates are for gold members "
                     f"only, and your membership is {user['membership']}, so I can't offer one.")
    rate = 100 if fault == "compensation_amount" else 50  # (the fault: the cancellation rate)
    amount = rate * res["passengers"]
    proposal = (f"I'm sorry about the {status['delay_minutes']}-minute delay of {flight['flight_number']}. As a "
                f"{user['membership']} member you can receive a travel certificate of ${amount:.2f} ({res['passengers']} "
                f"passengers x ${rate}). Shall I proceed?")
    asked, answer = c.answer_to("Shall I proceed")
    if asked is None or answer is None:
        return reply(proposal)
    if not answer.startswith("Yes"):
        return reply("All right, nothing issued.")
    return call("issue_compensation", user_id=user["user_id"], reservation_id=res["reservation_id"], amount=amount)


def _status(t: Talk, user: dict[str, Any]) -> dict[str, Any]:
    res = _reservation(t, user)
    if "choices" in res:
        return res
    insurance = "included" if res["insurance"] == "yes" else "not included"
    return reply(f"Reservation {_trip(res)}, booked on {res['created_at'][:10]}; travel insurance is {insurance}.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class PydanticAirline(kit.AgentotelRecorder):
    """The agent on pydantic-ai: one run_sync per user turn, given the conversation so far (unless the session's memory
    is lost); a tool's error goes back to the model as a retry prompt."""

    agent = AGENT

    def body(self, task: str) -> str:
        dropped = Now.fault == "user_turn_dropped"  # (the fault: the app's loop ends at the agent's question)
        return kit.pydantic_chat(self.url, MODEL, AGENT, instructions(), offered_tools(), task,
                                 (lambda said: None) if dropped else user_replies, Now.fault == "context_trimmed")


class AnthropicAirline(kit.AgentotelRecorder):
    """The agent as a plain loop on the anthropic SDK, the tools `@agentotel.tool` functions; the user's reply appended
    when the agent's message holds its cue."""

    agent = AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        self.tools = {name: agentotel.tool(f) for name, f in TOOLS.items()}

    def body(self, task: str) -> str:
        dropped = Now.fault == "user_turn_dropped"  # (the fault: the app's loop ends at the agent's question)
        return kit.anthropic_loop(self.url, "claude-sonnet-4-5", instructions(), task, self.tools,
                                  declared(offered_tools()), (lambda said: None) if dropped else user_replies,
                                  Now.fault == "context_trimmed", turns=30)


class OiLangGraphAirline(kit.OpenInferenceRecorder):
    """The agent as a LangGraph create_react_agent invoked once per user turn with the conversation so far, under
    OpenInference's langchain instrumentation, through agentotel-collector."""

    agent = AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        super().__init__(options, url)
        LangChainInstrumentor().instrument(tracer_provider=self.provider)

    def body(self, task: str) -> str:
        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import ToolNode, create_react_agent

        llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=self.url, max_retries=0)
        graph = create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in offered_tools().values()], handle_tool_errors=True),
                                   prompt=instructions(), name=AGENT)
        messages: list[Any] = [("user", task)]
        while True:
            out = graph.invoke({"messages": messages}, {"recursion_limit": 40})["messages"]
            text = str(out[-1].content)
            follow = user_replies(text)
            if follow is None or Now.fault == "user_turn_dropped":
                return text
            messages = ([] if Now.fault == "context_trimmed" else out) + [("user", follow)]


RECORDERS: dict[str, Any] = {"pydantic-ai": PydanticAirline, "anthropic": AnthropicAirline, "oi-langgraph": OiLangGraphAirline}
HISTORY = (0, 1)  # earlier healthy runs: other requests, the reservations API's v1 answers


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, after, answer, asking, nth_llm, second_answer, tool_step

    def final(steps: list[dict[str, Any]]) -> int | None:
        """The run's last model call."""
        llm = _llm(steps)
        return llm[-1]["index"] if llm else None

    tau, mast, trail = "tau-bench airline policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None], Callable[..., int | None] | None]] = {
        # fault: layer, source, where its cause shows, where the faulty run first departs from the good (None: there)
        "cancel_no_insurance": ("model", f"{tau} (cancel only within 24 h or insured) / {mast} FM-1.1: H8Q2LM booked "
                                         "2026-12-01 with no insurance cancelled; the twin is insured",
                                asking("cancel_reservation"), tool_step("get_reservation")),
        "rule_text_wrong": ("prompt", f"{tau}: the deployed instructions say 'within the last 72 hours' (the policy: 24); "
                                      "B6TT2C booked 52 h ago cancelled, the twin refuses", nth_llm(0), None),
        "basic_economy_change": ("model", f"{tau} (basic economy cannot be changed) / {mast} FM-1.1: K3B7ZD in "
                                          "basic_economy moved; the twin is economy",
                                 asking("update_reservation"), tool_step("get_reservation")),
        "compensation_non_gold": ("model", f"{tau} (compensation only for gold members): a certificate to a silver member; "
                                           "the twin is gold", asking("issue_compensation"), tool_step("get_user")),
        "compensation_amount": ("model", f"{tau} / {trail} incorrect calculation: $100 a passenger (the cancellation "
                                         "rate) for a delay: $300 for $150", asking("issue_compensation"),
                                after(tool_step("get_flight_status"))),
        "no_confirmation": ("model", f"{tau} (explicit confirmation before a write) / {mast} FM-2.2: cancelled with no "
                                     "'yes' asked for", asking("cancel_reservation"), None),
        "question_as_yes": ("model", f"{tau} (explicit confirmation): the user's question 'would I get the whole $129.00 "
                                     "back?' taken for a yes", asking("cancel_reservation"), None),
        "wrong_reservation": ("model", f"{tau} wrong entity / {mast} FM-3.3: the user's Boston trip asked for, NO6JO3 "
                                       "(Seattle, same day) cancelled, the second reservation never read",
                              asking("cancel_reservation"), after(tool_step("get_reservation"))),
        "pushed_exception": ("model", f"{tau} (a user pushing the agent past the policy) / {mast} FM-1.1: after one "
                                      "refusal, 'make an exception for me' gets B6TT2C (52 h, no insurance) cancelled",
                             asking("cancel_reservation"), second_answer),
        "wrong_id_guessed": ("model", f"{tau} wrong id / {mast} FM-2.2 Fail to ask for clarification: get_reservation("
                                      "'4WQ15O') found nothing; the user's first reservation NO6JO3 (Seattle) taken "
                                      "instead, unasked, and cancelled - the user had said Boston",
                             asking("cancel_reservation"), after(tool_step("get_reservation"))),
        "price_constraint": ("model", f"{tau} / {mast} FM-1.1: 'at most $100 extra' - SK311 at +$170 booked (SK315 at "
                                      "+$56 fits)", asking("update_reservation"), after(tool_step("search_flights"))),
        "date_misread": ("model", f"{mast} FM-2.6 Reasoning-action mismatch / {trail} formatting: '17:30 flight on "
                                  "December 22' proposed, update_reservation(date='2026-12-12')",
                         asking("update_reservation"), None),
        "mind_change_ignored": ("model", f"{tau} (follow the latest request): 'make it December 23 instead' answered with "
                                         "the December 22 change", asking("update_reservation"), None),
        "error_as_success": ("model", f"{trail} / {mast} FM-3.3: cancel_reservation's 'NOT cancelled' answered 'Done - "
                                      "cancelled'", after(tool_step("cancel_reservation")), None),
        "shape_changed": ("tool", f"{trail} API issues: get_reservation's v2 wraps the record and makes insurance an "
                                  "object ({'purchased': false}), read as insured: QX7YH1 (4 days, no insurance) cancelled",
                          tool_step("get_reservation"), None),
        "repeated_search": ("model", f"{mast} FM-1.3 Step repetition: search_flights re-run twice with its answer in hand "
                                     "(the twin re-runs it once, after a timeout)", asking("search_flights", 2), None),
        "claimed_done": ("model", f"{mast} FM-3.1 Premature termination / {trail} hallucination: 'Done - cancelled' "
                                  "after the user's yes, cancel_reservation never called", final, None),
        "transfer_skipped": ("model", f"{tau} (transfer_to_human on a medical emergency): a hospitalised user refused by "
                                      "the 24 h rule", answer, None),
        "transfer_rule_missing": ("prompt", f"{tau}: the deployed instructions lack the transfer rule (an older prompt "
                                            "version): the hospitalised user refused", nth_llm(0), None),
        "no_transfer_tool": ("product", f"{tau} / configuration: the deployment's tool list leaves transfer_to_human out: "
                                        "the rule cannot be followed", nth_llm(0), None),
        "context_trimmed": ("memory", f"{mast} FM-1.4 Loss of conversation history: the session's memory lost between "
                                      "turns; 'The 21:10 one, please.' reaches a model that no longer knows the user or "
                                      "the reservation", final, None),
        "user_turn_dropped": ("workflow", f"{mast} FM-3.1 Premature termination (the orchestrator's): the app's loop ends "
                                          "the conversation at the agent's 'Shall I proceed?', the user's yes never "
                                          "relayed, nothing cancelled", final, None),
    }
    chosen = {
        "pydantic-ai": ["cancel_no_insurance", "basic_economy_change", "compensation_non_gold", "no_transfer_tool",
                        "wrong_reservation", "error_as_success", "shape_changed", "context_trimmed", "mind_change_ignored",
                        "rule_text_wrong", "pushed_exception"],
        "anthropic": ["compensation_amount", "question_as_yes", "price_constraint", "claimed_done", "transfer_skipped",
                      "date_misread", "repeated_search", "user_turn_dropped", "rule_text_wrong", "shape_changed",
                      "wrong_id_guessed"],
        "oi-langgraph": ["basic_economy_change", "compensation_non_gold", "transfer_rule_missing", "no_confirmation",
                         "wrong_reservation", "error_as_success", "mind_change_ignored", "context_trimmed",
                         "user_turn_dropped", "repeated_search", "wrong_id_guessed"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (d41878c's detectors,
# agentotel/analysis/ unread; load ~4-8): 33 pairs, 3 recorders - diff top-1 33/33, check step+layer 9/33, good runs
# warned 3/33 (recording /tmp/h11-rec-greafxmk).
DIFF_MISSED: dict[str, str] = {}
_RULE = "nothing found; a write the instructions' written rule forbids, on facts the run read: "
_SAID = "nothing found; a write against what the user said in the conversation: "
CHECK_MISSED: dict[str, str] = {
    "model-pydantic-ai-cancel-no-insurance": _RULE + "rule 3 (cancel only within 24 h, insured, or flight cancelled by "
                                                     "Skyway); get_reservation: created_at 2026-12-01T16:00 (70 h), "
                                                     "insurance 'no'; the proposal even says 'has travel insurance'",
    "model-pydantic-ai-basic-economy-change": _RULE + "rule 4 ('a basic_economy reservation cannot be changed'); "
                                                      "get_reservation's cabin 'basic_economy', update_reservation called",
    "model-oi-langgraph-basic-economy-change": _RULE + "the same",
    "model-pydantic-ai-compensation-non-gold": ("ungrounded_answer@8 on the proposal's $150.00 (3 passengers x the "
                                                "policy's $50: the good run's same figure is warned too); the fault is "
                                                + _RULE + "rule 5 ('only gold members'), get_user's membership 'silver', "
                                                "issue_compensation@10"),
    "model-oi-langgraph-compensation-non-gold": "the same: ungrounded_answer@7 on $150.00, the silver member's "
                                                "issue_compensation@8 unseen",
    "model-anthropic-compensation-amount": _RULE + "rule 5 ('$50 per passenger for a delay'), get_flight_status "
                                                   "'delayed', 3 passengers: issue_compensation(amount=300) - the "
                                                   "cancellation rate; nothing said of the $300.00 proposal",
    "product-pydantic-ai-no-transfer-tool": ("tools_offered_changed@2 (the step right) as layer tool: no tool "
                                             "misbehaved; the deployment's configured tool list left transfer_to_human "
                                             "out, so the instructions' rule 6 cannot be followed (product)"),
    "prompt-pydantic-ai-rule-text-wrong": ("nothing found: the instructions' '24 hours' edited to '72 hours' (diff names "
                                           "it instructions_changed@2) and a cancellation at 52 h that only the edited "
                                           "text allows. A prompt whose whole rule 6 is gone is caught "
                                           "(instructions_changed) on all three recorders - probed on pydantic-ai and "
                                           "anthropic too - and this two-character edit on none, oi-langgraph probed"),
    "prompt-anthropic-rule-text-wrong": "the same (diff: instructions_changed@1)",
    "model-pydantic-ai-pushed-exception": _RULE + "rule 3, B6TT2C booked 52 h ago with no insurance, refused at step 6; "
                                                  "the user's 'make an exception for me' and the agent gives in (step "
                                                  "8's proposal, cancel_reservation@10)",
    "model-pydantic-ai-wrong-reservation": _SAID + "'cancel my trip to Boston'; get_reservation(NO6JO3) answers "
                                                   "destination SEA and it is cancelled; 4WQ150, get_user's other "
                                                   "reservation, never read",
    "model-oi-langgraph-wrong-reservation": _SAID + "the same",
    "model-anthropic-wrong-id-guessed": _SAID + "get_reservation('4WQ15O') failed (no reservation); the agent read "
                                                "the user's first reservation NO6JO3 (Seattle) instead, unasked, and "
                                                "cancelled it - the user had said Boston (the twin asks and gets 4WQ150)",
    "model-oi-langgraph-wrong-id-guessed": _SAID + "the same",
    "model-pydantic-ai-mind-change-ignored": _SAID + "'Actually, wait - make it December 23 instead' answered by "
                                                     "update_reservation(date='2026-12-22') at once",
    "model-oi-langgraph-mind-change-ignored": _SAID + "the same",
    "model-anthropic-question-as-yes": _SAID + "rule 2 (an explicit 'yes'); the user's reply 'Hmm, before that - would "
                                               "I get the whole $129.00 back?' is a question; cancel_reservation next",
    "model-oi-langgraph-no-confirmation": _SAID + "rule 2; cancel_reservation asked right after get_reservation, no "
                                                  "user turn between the request and the write",
    "model-anthropic-price-constraint": _SAID + "'at most $100 extra'; search_flights showed SK315 at +$56, the "
                                                "proposal and update_reservation took SK311 at +$170.00",
    "model-anthropic-date-misread": ("nothing found: the proposal 'SK315 on 2026-12-22', the user's yes, then "
                                     "update_reservation(date='2026-12-12') - an argument no read and no word holds"),
    "model-anthropic-claimed-done": ("nothing found: 'Done - reservation 4WQ150 is cancelled' after the user's yes, "
                                     "with no cancel_reservation anywhere in the run (the tool offered)"),
    "model-anthropic-transfer-skipped": _RULE + "rule 6 (a medical emergency: transfer_to_human); the user 'was taken "
                                                "to hospital', refused twice by rule 3, transfer_to_human offered and "
                                                "never called",
    "workflow-anthropic-user-turn-dropped": ("nothing found: the run ends on the agent's own 'Shall I proceed with the "
                                             "cancellation?' - the app's loop never relayed the user's answer, nothing "
                                             "was cancelled, the run is 'ok'"),
    "workflow-oi-langgraph-user-turn-dropped": "the same",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
_PRODUCT = ("ungrounded_answer on the proposal's '$150.00 (3 passengers x $50)': the policy's $50 a passenger times "
            "the reservation's 3 passengers, the arithmetic stated beside it")
FALSE_ALARMS: dict[str, str] = {
    "model-pydantic-ai-compensation-non-gold": _PRODUCT,
    "model-oi-langgraph-compensation-non-gold": _PRODUCT,
    "model-anthropic-compensation-amount": _PRODUCT + " (the faulty run's $300.00, 3 x the cancellation rate, drew "
                                                      "nothing)",
}

# The agent's check policy: a write needs the reservation read first.
POLICY = {"required_before": {"cancel_reservation": ["get_reservation"], "update_reservation": ["get_reservation"],
                              "issue_compensation": ["get_reservation"]}}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h11-rec-", pairs, produce, kit.through_collector("oi-langgraph"),
                      policy=lambda name: POLICY)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
