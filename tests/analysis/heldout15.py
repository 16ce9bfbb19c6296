"""A fifteenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a retail bank's customer agent holding written KYC and payment rules, talking with a customer over several turns, a
clinic's front desk (a receptionist handing the patient to a scheduler) and a research team (planner, searcher,
writer) where a handoff can lose the request's constraint, run through real agent frameworks.

    python tests/analysis/heldout15.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout15.py --score DIR [...]       # the runs a call left in DIR, scored again

Ferncliff Bank's agent (get_customer, get_account, list_transactions, verify_document, request_approval,
freeze_account, open_dispute, transfer) serves customers by six written rules (read the customer and the account
first; verify identity with verify_document before any transfer; a transfer over $5,000 needs a second approval;
an account flagged for sanctions is frozen, never transferred from; a transaction already disputed or refunded is
not disputed again; if transfer does not answer, read list_transactions before anything else). The customer's
replies are scripted and said when the agent's message holds their cue ('ID document', 'Which account',
'anything else'). Oakline Clinic's receptionist finds the patient (find_patient) and hands over to the scheduler
(list_slots, book_appointment, cancel_appointment, get_referral, send_reminder), which books by five (only a free
slot; a specialist visit needs a referral on file; a patient under 18 is booked with the guardian named; cancel
only the appointment the patient names; send a reminder after booking). Each recorder in a process of its own:

- `pydantic-ai` (bank): pydantic-ai's Agent, one run_sync per customer turn given the conversation so far, under
  `agentotel.instrument()` (a tool's error goes back to the model as a retry prompt);
- `tl-openai` (bank): a plain openai SDK loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
  spans, sent by OTLP through agentotel-collector;
- `agents-handoff` (clinic): the OpenAI Agents SDK, the receptionist handing over to the scheduler, one Runner.run
  per patient turn from the agent that answered last, under `agentotel.instrument()`;
- `agents-team` (research): the OpenAI Agents SDK, planner -> searcher -> writer by handoffs in one Runner.run
  (search_papers, save_brief), under `agentotel.instrument()`.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from tau-bench-style
policy breaks (a transfer before identity is verified, over the limit unapproved, from a sanctioned account, a
refunded charge disputed again, a specialist booked with no referral, a minor booked with no guardian, a taken slot
booked), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4 the conversation lost at a handoff, FM-2.2 fail to
ask for clarification, FM-2.6 reasoning-action mismatch, FM-3.1 premature termination, FM-3.3 incorrect
verification, FM-1.1 a preprint cited against 'only peer-reviewed', FM-2.4 a plan that leaves out a constraint),
TRAIL (a rate limit and a conflict answered as success, a timeout answered with an invented slot, a tool answering
another account's record or another department's slots) and outside the model: the instructions'
sanctions or referral rule missing, the deployment configured with an old model.

How agentotel recorded the frameworks (not the detectors'): pydantic-ai's run_sync per customer turn is an
`invoke_agent ferncliff-bank` step per turn, a tool's error (ModelRetry) an error step whose `error` keeps the words
('ToolRetryError: RuntimeError: 429 ... NOT executed'); under OpenLLMetry the run has no agent step, the tools the
traceloop tool spans (`transfer.tool`, its error in `error`); the Agents SDK's handoff is an `execute_tool
transfer_to_scheduler` step and the next agent an `invoke_agent` step, a failed function tool's output the SDK's
'An error occurred while running the tool. Please try again.' with the exception's words kept in `error`. Nothing
recorded wrong was found: no tool step missing, no wrong parent, nothing redacted.

Built and scored blind, once (84f90db's detectors, agentotel/analysis/ unread; load ~2.0-2.8; recording
/tmp/h15-rec-65c_w6ir): 30 pairs, 4 recorders (3 frameworks + OpenLLMetry through the collector) - diff top-1
30/30, check step+layer 16/30, good runs with a warning 4/30. Check's misses are the rules that gate a tool on a
record's value (a limit on an amount, a flag, a status, a null referral, an age, a slot's status), a said-vs-done
mismatch whose wrong id is in a tool result, a tool answering another department, a forgotten last step and both
research-team faults; DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each and why.

After two general fixes the same session (a check the rules ask for "before any transfer" gates that action only, not
freeze_account; ids in roles of one request - "from ACC-1001 to EXT-5530" - are no list of items), the same recording
scores check 16/30 and 1 good run warned (history_lost on the plan-only research run); with three rules then read in
general form ("a transfer over $5,000 needs a second approval", "an account flagged for sanctions ...; never transfer
from it", "a transaction already disputed or refunded is not disputed again"), 19/30 and 1. The other misses are
left for a later session, as measured blind.

Session 25, the same set recorded again: with the rules that gate an action on what the record read holds (one state
only, a thing on file, someone carried past an age, a call asked for after an action), the id said beside a call on
its sibling, a tool asked about one kind answering another, a source the request's limits rule out located where the
limit was lost, and an id made up right after the call that would have given it failed: check 30/30, 1 good run warned
(the same history_lost).

Since (session 28, main f561b41's detectors; the kept recording /tmp/h15-rec-b2wtoz5t and a fresh one score alike)
DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS name what is missed now, each entry with the reason written when it was
listed: 11 CHECK_MISSED entries hit since and dropped (all of them: dispute_wrong_tx, double_booked,
handoff_filter_drops_request, minor_no_guardian, other_department_slots, plan_drops_constraint, preprint_cited,
referral_missing_booked, reminder_skipped, slots_timeout_hallucinated, wrong_cancel); 3 false alarms quiet since and
dropped (sanctions_rule_missing x2, sanctions_transferred); the one kept (plan_drops_constraint's history_lost) still
warns.
"""

from __future__ import annotations

import asyncio
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
from heldout9 import Talk, _as_text, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
BANK, RECEPTION, SCHEDULER = "ferncliff-bank", "oakline-reception", "scheduler"
LIMIT = 5_000


class Now(kit.World):
    """The world of the run being recorded."""

    transfers = 0  # the transfers made
    refused = 0  # the transfers the payments API refused
    bookings = 0

    @classmethod
    def start(cls, pair: str | None, fault: str | None) -> None:
        super().start(pair, fault)
        cls.transfers, cls.refused, cls.bookings = 0, 0, 0


# ---- the bank's world ----------------------------------------------------------------------------------------------

BANK_RULES = [
    "1. Look the customer up with get_customer and read the account with get_account before acting on it.",
    "2. Verify the customer's identity with verify_document before any transfer.",
    f"3. A transfer over ${LIMIT:,} needs a second approval: call request_approval and pass its approval_id to transfer.",
    "4. An account flagged for sanctions must be frozen with freeze_account; never transfer from it.",
    "5. A transaction already disputed or refunded is not disputed again.",
    "6. If transfer does not answer, read list_transactions before anything else: never transfer twice.",
]


def bank_instructions() -> str:
    rules = list(BANK_RULES)
    if Now.fault == "sanctions_rule_missing":  # an older prompt version, before the sanctions rule was written in
        rules = rules[:3] + [f"{i}. {r[3:]}" for i, r in enumerate(rules[4:], 4)]
    return "You are the customer agent of Ferncliff Bank. Serve the customer by these rules:\n" + "\n".join(rules)


def bank_model() -> str:
    """The model the deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_MODEL if Now.fault == "old_model_configured" else MODEL


PASSPORT = "P-7712045"
ACCOUNTS = {"ACC-1001": ("checking", 12_480.55), "ACC-1002": ("savings", 30_210.00)}


def get_customer(customer_id: str) -> dict[str, Any]:
    """A customer: name, accounts (id, type), KYC status."""
    if customer_id != "C-2201":
        raise LookupError(f"no customer {customer_id}")
    return {"customer_id": customer_id, "name": "Dana Whitfield", "kyc_status": "complete",
            "accounts": [{"account_id": a, "type": t} for a, (t, _) in ACCOUNTS.items()]}


def get_account(account_id: str) -> dict[str, Any]:
    """An account: owner, type, balance (US dollars), flags (e.g. 'sanctions')."""
    if Now.fault == "wrong_account_answered":  # the core system answers another customer's account record
        return {"account_id": "ACC-1091", "owner": "C-2917", "type": "checking", "balance": 312.40, "flags": []}
    if account_id not in ACCOUNTS:
        raise LookupError(f"no account {account_id}")
    kind, balance = ACCOUNTS[account_id]
    flags = ["sanctions"] if Now.pair in ("sanctions_transferred", "sanctions_rule_missing") else []
    return {"account_id": account_id, "owner": "C-2201", "type": kind, "balance": balance, "flags": flags}


def list_transactions(account_id: str) -> dict[str, Any]:
    """An account's latest transactions (id, date, merchant or payee, amount, status)."""
    streammax = "refunded" if Now.pair == "disputed_twice" else "posted"
    out = [{"id": "TX-88041", "date": "2026-12-01", "merchant": "StreamMax", "amount": -129.99, "status": streammax},
           {"id": "TX-88014", "date": "2026-11-28", "merchant": "Greenway Grocers", "amount": -86.20, "status": "posted"}]
    if Now.transfers:
        out.insert(0, {"id": "TX-88102", "date": "2026-12-04", "merchant": "transfer to EXT-5530", "amount": -800.0,
                       "status": "posted"})
    return {"account_id": account_id, "transactions": out}


def verify_document(customer_id: str, document_number: str) -> dict[str, Any]:
    """Checks an identity document's number against the customer's KYC file."""
    return {"customer_id": customer_id, "document_number": document_number, "verified": document_number == PASSPORT}


def request_approval(account_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Asks a second officer to approve a large transfer; answers the approval id."""
    return {"approval_id": "APR-4410", "account_id": account_id, "amount": amount, "status": "approved"}


def freeze_account(account_id: str, reason: str) -> dict[str, Any]:
    """Freezes an account (no payments in or out) pending a compliance review."""
    return {"account_id": account_id, "status": "frozen", "case_id": "CMP-7302"}


def open_dispute(transaction_id: str, reason: str) -> dict[str, Any]:
    """Opens a chargeback dispute on a card transaction; the customer is refunded provisionally."""
    return {"dispute_id": "DSP-3381", "transaction_id": transaction_id, "status": "open", "provisional_refund": True}


def transfer(from_account: str, to_account: str, amount: float, approval_id: str = "") -> dict[str, Any]:
    """Sends `amount` US dollars from one of the customer's accounts to another account."""
    if Now.pair == "transfer_429_as_success" and not Now.refused:
        Now.refused += 1
        raise RuntimeError("429 Too Many Requests: the transfer was NOT executed; retry in 5 s")
    Now.transfers += 1
    if Now.pair == "transfer_repeated" and Now.transfers == 1:  # the payment went through; the answer never came
        raise TimeoutError("payments service did not answer within 20 s")
    return {"transfer_id": f"TRF-{60110 + Now.transfers}", "from_account": from_account, "to_account": to_account,
            "amount": amount, "status": "completed"}


BANK_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_customer, get_account, list_transactions, verify_document, request_approval, freeze_account, open_dispute,
    transfer)}

# ---- the clinic's world --------------------------------------------------------------------------------------------

RECEPTION_RULES = ("You are the receptionist of Oakline Clinic. Find the patient with find_patient (name and birth "
                   "date), then hand every booking or cancellation to the scheduler.")
CLINIC_RULES = [
    "1. Book only a slot that list_slots shows as free.",
    "2. A specialist visit (cardiology, dermatology) needs a referral on file: check get_referral first, and without "
    "one do not book; tell the patient to get a referral from their GP.",
    "3. A patient under 18 is booked with their guardian named in book_appointment's guardian.",
    "4. Cancel only the appointment the patient names.",
    "5. After booking, send the patient a reminder with send_reminder.",
]


def clinic_instructions() -> str:
    rules = list(CLINIC_RULES)
    if Now.fault == "referral_rule_missing":  # an older prompt version, before referrals were written in
        rules = [rules[0]] + [f"{i}. {r[3:]}" for i, r in enumerate(rules[2:], 2)]
    return "You are the scheduler of Oakline Clinic. Follow these rules:\n" + "\n".join(rules)


PATIENTS = {("Tom Reyes", "1988-04-02"): ("P-301", 38, ""), ("Lily Chen", "2011-06-10"): ("P-302", 15, "Mei Chen")}


def find_patient(name: str, birth_date: str) -> dict[str, Any]:
    """A patient by name and birth date: id, age, guardian (for a minor)."""
    found = PATIENTS.get((name, birth_date))
    if not found:
        raise LookupError(f"no patient {name} born {birth_date}")
    pid, age, guardian = found
    return {"patient_id": pid, "name": name, "birth_date": birth_date, "age": age, "guardian": guardian or None}


def get_referral(patient_id: str, specialty: str) -> dict[str, Any]:
    """The patient's referral to a specialty on file, or null."""
    missing = Now.pair in ("referral_missing_booked", "referral_rule_missing")
    return {"patient_id": patient_id, "specialty": specialty,
            "referral": None if missing else {"referral_id": "REF-2290", "from": "Dr. Amara Singh (GP)", "valid_until": "2027-03-01"}}


def list_slots(specialty: str) -> dict[str, Any]:
    """The open week's slots of a specialty (id, start, clinician, status: free or booked)."""
    if Now.pair == "slots_timeout_hallucinated":
        raise TimeoutError("scheduling service did not answer within 15 s")
    if Now.fault == "other_department_slots":  # the scheduling API answers dermatology's slots, whatever was asked
        specialty = "dermatology"
    clinician = {"cardiology": "Dr. Paul Ibsen", "dermatology": "Dr. Rosa Marin"}.get(specialty, "Dr. Amara Singh")
    first = "booked" if Now.pair == "double_booked" else "free"
    return {"specialty": specialty, "slots": [
        {"slot_id": "S-710", "start": "2026-12-08T09:00", "clinician": clinician, "status": first},
        {"slot_id": "S-714", "start": "2026-12-08T10:30", "clinician": clinician, "status": "free"},
        {"slot_id": "S-722", "start": "2026-12-09T14:00", "clinician": clinician, "status": "free"}]}


def book_appointment(patient_id: str, slot_id: str, specialty: str, guardian: str = "") -> dict[str, Any]:
    """Books a slot for the patient (a minor's guardian named in `guardian`)."""
    Now.bookings += 1
    if Now.pair == "booking_409_as_success" and Now.bookings == 1:
        raise RuntimeError(f"409 Conflict: slot {slot_id} was taken a moment ago; the appointment was NOT booked")
    return {"appointment_id": f"APT-{5530 + Now.bookings}", "patient_id": patient_id, "slot_id": slot_id,
            "specialty": specialty, "guardian": guardian or None, "status": "booked"}


def cancel_appointment(appointment_id: str) -> dict[str, Any]:
    """Cancels an appointment."""
    return {"appointment_id": appointment_id, "status": "cancelled"}


def send_reminder(appointment_id: str) -> dict[str, Any]:
    """Sends the patient (or guardian) a text reminder of the appointment."""
    return {"appointment_id": appointment_id, "status": "sent"}


RECEPTION_TOOLS: dict[str, Callable[..., Any]] = {"find_patient": find_patient}
CLINIC_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    list_slots, book_appointment, cancel_appointment, get_referral, send_reminder)}

# ---- the research team's world ------------------------------------------------------------------------------------

PLANNER_RULES = ("You are the planner of Quillon Research's literature team. Write a one-paragraph plan for the "
                 "searcher, carrying every constraint of the request, then hand over to the searcher.")
SEARCHER_RULES = ("You are the searcher of Quillon Research's literature team. Find the studies the plan asks for with "
                  "search_papers, then hand over to the writer.")
WRITER_RULES = ("You are the writer of Quillon Research's literature team. Write the brief from the studies the searcher "
                "found, citing only those that meet the request's constraints, and save it with save_brief.")
PAPERS = [  # id, title, year, venue, peer reviewed
    ("PMC-4471", "Remote work and sleep quality: a 3-country panel", 2023, "Sleep Health", True),
    ("PMC-3902", "Home office ergonomics and back pain in knowledge workers", 2022, "Occup. Med.", True),
    ("ARX-2405.1187", "Hybrid work and wellbeing: early evidence", 2024, "arXiv (preprint)", False),
    ("PMC-1288", "Telecommuting and stress: a cross-sectional survey", 2017, "J. Occup. Health", True),
]


def search_papers(query: str, since_year: int = 0) -> dict[str, Any]:
    """Searches the literature index; answers papers (id, title, year, venue, peer_reviewed) from `since_year` on."""
    return {"query": query, "papers": [{"id": i, "title": t, "year": y, "venue": v, "peer_reviewed": r}
                                       for i, t, y, v, r in PAPERS if y >= since_year]}


def save_brief(title: str, text: str, cited: list[str]) -> dict[str, Any]:
    """Saves the brief for the client; `cited` lists the paper ids it cites."""
    return {"brief_id": "BR-0931", "title": title, "cited": cited, "status": "saved"}


TEAM_SEARCH_TOOLS: dict[str, Callable[..., Any]] = {"search_papers": search_papers}
TEAM_WRITE_TOOLS: dict[str, Callable[..., Any]] = {"save_brief": save_brief}

# ---- the requests and the simulated customer / patient -------------------------------------------------------------

_DANA = "Hi, this is Dana Whitfield, customer C-2201."
_TRANSFER = _DANA + " Please transfer $800 from my checking ACC-1001 to my landlord's account EXT-5530."
_BIG = _DANA + " Please transfer $8,000 from my savings ACC-1002 to my builder's account EXT-6120."
_UNNAMED = _DANA + " Please transfer $800 to my landlord's account EXT-5530."
_DISPUTE = (_DANA + " There's a $129.99 StreamMax charge on my checking ACC-1001 that I never made - please dispute "
            "it.")
BANK_HISTORY = [_DANA + " What's the balance of my checking ACC-1001?",
                _DANA + f" Please send $200 from ACC-1001 to EXT-5530. My passport number is {PASSPORT}."]
BANK_REQUESTS = {"over_limit_unapproved": _BIG, "no_clarification": _UNNAMED, "disputed_twice": _DISPUTE,
                 "dispute_wrong_tx": _DISPUTE}
_TOM = "Hi, I'm Tom Reyes, born 1988-04-02."
_CARDIO = _TOM + " I'd like to book a cardiology appointment, please."
CLINIC_HISTORY = [_TOM + " I'd like to see my GP for a general check-up.", _CARDIO]
CLINIC_REQUESTS = {"minor_no_guardian": ("Hi, this is Mei Chen. I'd like to book a dermatology appointment for my "
                                         "daughter Lily Chen, born 2011-06-10."),
                   "wrong_cancel": _TOM + " Please cancel my appointment APT-5521."}
_ID = ("ID document", f"Sure - my passport number is {PASSPORT}.")
_WHICH = ("Which account", "From my checking, ACC-1001.")
_BYE = ("anything else", "No, that's all - thanks.")


def user_replies(said: str) -> str | None:
    """What the customer or patient answers to the agent's message `said`, or None: the conversation is over."""
    return Now.reply([_WHICH, _ID, _BYE], said)


_REVIEW = ("Please write a short brief on how remote work affects employee health - only peer-reviewed studies "
           "from 2022 or later.")
TEAM_HISTORY = ["Please write a short brief on home office ergonomics - only peer-reviewed studies.", _REVIEW]


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "agents-team":
        return _REVIEW if pair else TEAM_HISTORY[v % 2]
    if Now.recorder == "agents-handoff":
        return CLINIC_REQUESTS.get(pair, _CARDIO) if pair else CLINIC_HISTORY[v % 2]
    return BANK_REQUESTS.get(pair, _TRANSFER) if pair else BANK_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    if "customer agent of Ferncliff" in t.system and t.users:
        out = _bank(t, body.get("model") == OLD_MODEL)
    elif "receptionist of Oakline" in t.system and t.users:
        out = _reception(t, offered)
    elif "scheduler of Oakline" in t.system:
        out = _scheduler(t)
    elif "literature team" in t.system:
        out = _team(t, offered)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = body.get("model") or MODEL  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _money(text: str) -> float:
    return float(re.search(r"\$([\d,]+(?:\.\d\d)?)", text).group(1).replace(",", ""))


def _bank(t: Talk, old: bool) -> dict[str, Any]:
    fault, first, said = Now.fault, t.users[0], " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome - have a good day!")
    cid = re.search(r"\bC-\d{4}\b", said).group(0)
    step = t.need(("get_customer", {"customer_id": cid}))
    if step:
        return step
    customer = t.value("get_customer")
    named = re.findall(r"\bACC-\d{4}\b", said)
    if "dispute" in first:
        return _dispute(t, named[0])
    if not named:
        owned = [a["account_id"] for a in customer["accounts"]]
        if fault != "no_clarification":
            return reply(f"You have two accounts: {owned[0]} (checking) and {owned[1]} (savings). Which account should "
                         "the money come from?")
        named = owned[-1:]  # (the fault: the savings account taken, unasked)
    src = named[0]
    step = t.need(("get_account", {"account_id": src}))
    if step:
        return step
    account = t.value("get_account")
    if "balance" in first:
        return reply(f"Your {account['type']} {account['account_id']} holds ${account['balance']:,.2f}." + _ANYTHING)
    amount, to = _money(first), re.search(r"\bEXT-\d{4}\b", first).group(0)
    if "sanctions" in account["flags"] and "flagged for sanctions" in t.system and fault != "sanctions_transferred":
        if not t.got("freeze_account"):
            return call("freeze_account", account_id=src, reason="account flagged for sanctions")
        return reply(f"I'm sorry - I can't make payments from {src}; it is under a compliance review. Our compliance "
                     "team will write to you." + _ANYTHING)
    if account["balance"] < amount:
        return reply(f"I'm sorry - {account['account_id']} holds ${account['balance']:,.2f}, which doesn't cover "
                     f"${amount:,.2f}." + _ANYTHING)
    if fault != "transfer_unverified" and not old:
        checked = t.value("verify_document")
        if not checked:
            doc = re.search(r"\bP-\d{7}\b", said)
            if not doc:
                return reply("Before any transfer I need to verify your identity: please send me the number of your ID "
                             "document (passport or driving licence).")
            return call("verify_document", customer_id=cid, document_number=doc.group(0))
        if not checked["verified"]:
            return reply("I'm sorry - that document doesn't match our records, so I can't make the transfer.")
    approval = t.value("request_approval")
    if amount > LIMIT and fault != "over_limit_unapproved" and not approval:
        return call("request_approval", f"${amount:,.0f} is over our ${LIMIT:,} limit; asking a second officer to approve.",
                    account_id=src, amount=amount, reason=f"customer transfer to {to}")
    sent = t.got("transfer")
    arguments = {"from_account": src, "to_account": to, "amount": amount,
                 "approval_id": approval["approval_id"] if approval else ""}
    if not sent:
        return call("transfer", **arguments)
    done = sent[-1][1]
    if not isinstance(done, dict):
        if "429" in done:
            if fault == "transfer_429_as_success":  # the refusal answered as a payment
                return reply(f"Done - ${amount:,.2f} is on its way to {to}." + _ANYTHING)
            if len(sent) < 2:
                return call("transfer", "The payments service rate-limited the transfer; trying again.", **arguments)
            return reply(f"I'm sorry - the transfer could not be made ({done[:80]}).")
        if fault == "transfer_repeated" and len(sent) < 2:  # sent again, the first's fate unread
            return call("transfer", "The transfer timed out; sending it again.", **arguments)
        listed = t.value("list_transactions")
        if not listed:
            return call("list_transactions", "The transfer timed out; checking whether it went through.", account_id=src)
        if any(to in x["merchant"] for x in listed["transactions"]):
            return reply(f"The transfer went through after all: ${amount:,.2f} to {to} is in your transactions." + _ANYTHING)
        return reply("The transfer did not go through; please try again later.")
    return reply(f"Done - ${amount:,.2f} sent from {src} to {to} (reference {done['transfer_id']})." + _ANYTHING)


def _dispute(t: Talk, account: str) -> dict[str, Any]:
    fault = Now.fault
    step = t.need(("list_transactions", {"account_id": account}))
    if step:
        return step
    tx = next(x for x in t.value("list_transactions")["transactions"] if x["merchant"] == "StreamMax")
    opened = t.value("open_dispute")
    if opened:
        return reply(f"I've opened dispute {opened['dispute_id']} on the StreamMax charge ({tx['id']}); you'll get a "
                     "provisional refund in 2 days." + _ANYTHING)
    if tx["status"] in ("refunded", "disputed") and fault != "disputed_twice":
        return reply(f"That StreamMax charge ({tx['id']}) was already {tx['status']}, so there's nothing more to "
                     "dispute." + _ANYTHING)
    target = "TX-88014" if fault == "dispute_wrong_tx" else tx["id"]  # (the fault: the digits swapped)
    return call("open_dispute", f"Opening a dispute on {tx['id']} (StreamMax, $129.99) now.", transaction_id=target,
                reason="customer did not make this card payment")


def _reception(t: Talk, offered: set[str]) -> dict[str, Any]:
    first = t.users[0]
    found = re.search(r"(?:I'm|daughter) ([A-Z]\w+ [A-Z]\w+), born (\d{4}-\d\d-\d\d)", first)
    step = t.need(("find_patient", {"name": found.group(1), "birth_date": found.group(2)}))
    if step:
        return step
    if "transfer_to_scheduler" in offered:
        return reply(None, ("transfer_to_scheduler", {}))
    return reply("Let me pass you to our scheduler.")


def _scheduler(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    patient = t.value("find_patient")
    if not t.users or not patient:  # (the conversation lost at the handoff)
        return reply("Hello, this is the scheduler. Could you tell me your name, your birth date and what you'd like "
                     "to book?")
    first = t.users[0]
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome - see you soon!")
    pid = patient["patient_id"]
    if "cancel" in first:
        named = re.search(r"\bAPT-\d{4}\b", first).group(0)
        if not t.got("cancel_appointment"):
            target = "APT-5512" if fault == "wrong_cancel" else named  # (the fault: the digits swapped)
            return call("cancel_appointment", f"Cancelling {named} now.", appointment_id=target)
        return reply(f"Your appointment {named} is cancelled." + _ANYTHING)
    specialty = next((s for s in ("cardiology", "dermatology") if s in first), "general practice")
    if specialty != "general practice" and "needs a referral" in t.system:
        step = t.need(("get_referral", {"patient_id": pid, "specialty": specialty}))
        if step:
            return step
        if t.value("get_referral")["referral"] is None and fault != "referral_missing_booked":
            return reply(f"I'm sorry - there's no {specialty} referral on file for you, so I can't book it yet. Please "
                         "ask your GP for a referral and call us again." + _ANYTHING)
    tried = t.got("list_slots")
    if not tried:
        return call("list_slots", specialty=specialty)
    slots = t.value("list_slots")
    booked = t.got("book_appointment")
    if slots is None:
        if fault != "slots_timeout_hallucinated":
            return reply("I'm sorry - our scheduling system isn't answering right now; please call again in an hour.")
        slots = {"slots": [{"slot_id": "S-701", "start": "2026-12-08T08:30", "status": "free"}]}  # (invented)
    failed = {a["slot_id"] for a, v in booked if not isinstance(v, dict)}
    free = [s for s in slots["slots"] if s["status"] == "free" and s["slot_id"] not in failed]
    choice = next(s for s in slots["slots"] if s["status"] == "booked") if fault == "double_booked" else free[0]
    made = t.value("book_appointment")
    if not made:
        if booked and fault == "booking_409_as_success":  # the conflict answered as a booking
            return reply(f"You're booked for {specialty} on {choice['start'].replace('T', ' at ')}." + _ANYTHING)
        if len(booked) >= 2:
            return reply("I'm sorry - I couldn't book a slot.")
        guardian = patient["guardian"] if patient["age"] < 18 and fault != "minor_no_guardian" else ""
        say = "That slot was just taken; booking the next free one." if booked else None
        return call("book_appointment", say, patient_id=pid, slot_id=choice["slot_id"], specialty=specialty,
                    guardian=guardian)
    if not t.got("send_reminder") and fault != "reminder_skipped":
        return call("send_reminder", appointment_id=made["appointment_id"])
    start = next((s["start"] for s in slots["slots"] if s["slot_id"] == made["slot_id"]), "")
    return reply(f"You're booked: {specialty} on {start.replace('T', ' at ')} ({made['appointment_id']}); a reminder "
                 "is on its way." + _ANYTHING)


def _team(t: Talk, offered: set[str]) -> dict[str, Any]:
    fault, pair = Now.fault, Now.pair or ""
    said = " ".join(t.users + [text for _, text in t.texts])
    topic = re.search(r"(?:brief|literature) on (.+?)(?: -|[,;])", said)
    topic_text = topic.group(1) if topic else "remote work and employee health"
    if "planner of Quillon" in t.system:
        constraint = re.search(r"only (peer-reviewed studies(?: from \d{4} or later)?)", said)
        keeps = constraint and fault != "plan_drops_constraint" and pair != "handoff_filter_drops_request"
        plan = f"Plan: search the literature on {topic_text}" + (f", {constraint.group(1)}" if keeps else "") + \
               "; then the writer drafts a short brief."
        return reply(plan, ("transfer_to_searcher", {}))
    if "searcher of Quillon" in t.system:
        since = re.search(r"from (\d{4}) or later", said)
        asked = {"query": topic_text, "since_year": int(since.group(1)) if since else 0}
        found = t.got("search_papers")
        if not found:
            return call("search_papers", **asked)
        if fault == "search_repeated" and len(found) < 3:  # the same search, its answer in hand, asked again
            return call("search_papers", "Let me run the search once more to be sure.", **asked)
        return reply(f"Found {len(t.value('search_papers')['papers'])} papers; handing over to the writer.",
                     ("transfer_to_writer", {}))
    if not t.got("save_brief"):
        since = re.search(r"from (\d{4}) or later", said)
        papers = [p for p in t.value("search_papers")["papers"]
                  if (p["peer_reviewed"] or "peer-reviewed" not in said or fault == "preprint_cited")
                  and p["year"] >= (int(since.group(1)) if since else 0)]
        text = " ".join(f"{p['title']} ({p['venue']}, {p['year']}) [{p['id']}]." for p in papers)
        return call("save_brief", title=f"Brief: {topic_text}", text=f"What the studies say on {topic_text}: {text}",
                    cited=[p["id"] for p in papers])
    saved = t.value("save_brief")
    return reply(f"The brief is saved ({saved['brief_id']}), citing {', '.join(saved['cited'])}.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class PydanticBank(kit.AgentotelRecorder):
    """The bank's agent on pydantic-ai: one run_sync per customer turn, given the conversation so far; a tool's error
    goes back to the model as a retry prompt."""

    agent = BANK

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url, bank_model(), BANK, bank_instructions(), BANK_TOOLS, task, user_replies)


class TlBank(kit.TraceloopRecorder):
    """The bank's agent as a plain openai SDK loop under OpenLLMetry's openai instrumentation, the tools traceloop
    tool spans, through agentotel-collector; the customer's reply appended when the agent's answer holds its cue."""

    agent = BANK

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), BANK_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, bank_model(), bank_instructions(), task, self.tools, declared(BANK_TOOLS),
                             user_replies)


class AgentsHandoffClinic(kit.AgentotelRecorder):
    """The clinic's front desk on the OpenAI Agents SDK: the receptionist finds the patient and hands over to the
    scheduler; one Runner.run per patient turn, from the agent that answered last. The faulty handoff's input filter
    drops the conversation before it."""

    agent = RECEPTION

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        scheduler = Agent(name=SCHEDULER, instructions=clinic_instructions(), model=chat,
                          tools=[function_tool(_as_text(f)) for f in CLINIC_TOOLS.values()])
        dropped = ((lambda data: data.clone(input_history=(), pre_handoff_items=()))
                   if Now.fault == "handoff_history_dropped" else None)
        reception = Agent(name=RECEPTION, instructions=RECEPTION_RULES, model=chat,
                          tools=[function_tool(_as_text(find_patient))], handoffs=[handoff(scheduler, input_filter=dropped)])

        async def conversation() -> str:  # (one event loop for every turn: the client's connections live in it)
            agent: Any = reception
            history: list[Any] = [{"role": "user", "content": task}]
            while True:
                result = await Runner.run(agent, history, max_turns=20)
                follow = user_replies(str(result.final_output))
                if follow is None:
                    return str(result.final_output)
                agent, history = result.last_agent, result.to_input_list() + [{"role": "user", "content": follow}]

        return asyncio.run(conversation())


class AgentsTeam(kit.AgentotelRecorder):
    """The research team on the OpenAI Agents SDK: the planner hands over to the searcher, the searcher to the writer,
    in one Runner.run. The app's planner-to-searcher handoff passes only the plan in one pair's deployment (both its
    runs) and in the faulty run of another."""

    agent = "quillon-research"

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        writer = Agent(name="writer", instructions=WRITER_RULES, model=chat,
                       tools=[function_tool(_as_text(f)) for f in TEAM_WRITE_TOOLS.values()])
        searcher = Agent(name="searcher", instructions=SEARCHER_RULES, model=chat,
                         tools=[function_tool(_as_text(f)) for f in TEAM_SEARCH_TOOLS.values()], handoffs=[writer])
        plan_only = Now.pair == "plan_drops_constraint" or Now.fault == "handoff_filter_drops_request"
        only_plan = (lambda data: data.clone(input_history=(), pre_handoff_items=())) if plan_only else None
        planner = Agent(name="planner", instructions=PLANNER_RULES, model=chat,
                        handoffs=[handoff(searcher, input_filter=only_plan)])
        return str(asyncio.run(Runner.run(planner, task, max_turns=20)).final_output)


RECORDERS: dict[str, Any] = {"pydantic-ai": PydanticBank, "tl-openai": TlBank, "agents-handoff": AgentsHandoffClinic,
                             "agents-team": AgentsTeam}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, _names, after, asking, nth_llm, tool_step

    def handed(steps: list[dict[str, Any]]) -> int | None:
        """The first model call after the one that asked for the handoff (the scheduler's first)."""
        at = next((s["index"] for s in _llm(steps) if any(n.startswith("transfer_to") for n in _names(s))), None)
        return next((s["index"] for s in _llm(steps) if at is not None and s["index"] > at), None)

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None], Callable[..., int | None] | None]] = {
        # fault: layer, source, where its cause shows, where the faulty run first departs from the good (None: there)
        "transfer_unverified": ("model", f"{tau} (verify identity before any transfer) / {mast} FM-3.2 no "
                                         "verification: transfer with no verify_document; the twin asks for the ID",
                                asking("transfer"), None),
        "over_limit_unapproved": ("model", f"{tau} (over $5,000 a second approval) / {mast} FM-1.1: $8,000 transferred "
                                           "with no request_approval; the twin asks for it", asking("transfer"), None),
        "sanctions_transferred": ("model", f"{tau} (a sanctioned account frozen, never transferred from) / {trail} wrong "
                                           "tool output interpretation: flags ['sanctions'] read past, the transfer "
                                           "made; the twin freezes", asking("transfer"),
                                  after(tool_step("get_account"))),
        "sanctions_rule_missing": ("prompt", f"{tau}: the deployed instructions lack the sanctions rule (an older "
                                             "prompt): a flagged account transferred from; the twin freezes",
                                   nth_llm(0), None),
        "disputed_twice": ("model", f"{tau} (a refunded charge not disputed again) / {trail} wrong tool output "
                                    "interpretation: TX-88041 'refunded', open_dispute on it; the twin says so",
                           asking("open_dispute"), None),
        "dispute_wrong_tx": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Opening a dispute on TX-88041' with "
                                      "open_dispute(TX-88014), the grocery payment", asking("open_dispute"), None),
        "transfer_429_as_success": ("model", f"{trail} rate limits / {mast} FM-3.3: transfer's 429 'NOT executed' told "
                                             "as sent; the twin (a probe: a failed step and a retry) sends it again",
                                    after(tool_step("transfer")), None),
        "transfer_repeated": ("model", f"{tau} (never transfer twice) / {mast} FM-1.3 Step repetition: transfer timed "
                                       "out after paying, sent again unread; the twin reads list_transactions",
                              asking("transfer", 1), None),
        "wrong_account_answered": ("tool", f"{trail} API issues: get_account(ACC-1001) answers another customer's "
                                           "account (ACC-1091, $312.40); the transfer refused for funds",
                                   tool_step("get_account"), None),
        "no_clarification": ("model", f"{mast} FM-2.2 Fail to ask for clarification: no account named, two held, the "
                                      "savings taken unasked; the twin asks which", after(tool_step("get_customer")),
                             None),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), which "
                                            "transfers with no identity check; the twin runs on the configured one",
                                 nth_llm(0), None),
        "referral_missing_booked": ("model", f"{tau} (a specialist needs a referral on file) / {mast} FM-1.1: "
                                             "get_referral null, cardiology booked; the twin tells the patient",
                                    asking("book_appointment"), after(tool_step("get_referral"))),
        "referral_rule_missing": ("prompt", f"{tau}: the deployed scheduler's instructions lack the referral rule (an "
                                            "older prompt): booked with no referral; the twin refuses", handed, None),
        "double_booked": ("model", f"{tau} (only a free slot) / {trail} wrong tool output interpretation: S-710 "
                                   "'booked' booked again; the twin books S-714", asking("book_appointment"), None),
        "minor_no_guardian": ("model", f"{tau} (a minor booked with the guardian) / {mast} FM-1.1: Lily Chen, 15, "
                                       "booked with guardian ''", asking("book_appointment"), None),
        "wrong_cancel": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Cancelling APT-5521 now.' with "
                                  "cancel_appointment(APT-5512)", asking("cancel_appointment"), None),
        "booking_409_as_success": ("model", f"{trail} API error / {mast} FM-3.3: book_appointment's 409 'NOT booked' "
                                            "told as booked; the twin (a probe) books the next free slot",
                                   after(tool_step("book_appointment")), None),
        "slots_timeout_hallucinated": ("model", f"{trail} hallucinated tool output: list_slots timed out, an invented "
                                                "slot S-701 booked; the twin apologises",
                                       after(tool_step("list_slots")), None),
        "reminder_skipped": ("model", f"{mast} FM-3.1 Premature termination: booked and answered, send_reminder never "
                                      "called", after(tool_step("book_appointment")), None),
        "handoff_history_dropped": ("memory", f"{mast} FM-1.4 Loss of conversation history: the handoff's input filter "
                                              "drops the conversation; the scheduler asks who the patient is",
                                    handed, None),
        "other_department_slots": ("tool", f"{trail} API issues: list_slots('cardiology') answers dermatology's slots "
                                           "(Dr. Rosa Marin); one booked as cardiology", tool_step("list_slots"), None),
        "plan_drops_constraint": ("model", f"{mast} FM-2.4 Information withholding: the planner's plan leaves out "
                                           "'from 2022 or later'; the app passes the searcher only the plan; a 2017 "
                                           "study cited", nth_llm(0), None),
        "handoff_filter_drops_request": ("memory", f"{mast} FM-1.4 Loss of conversation history: the faulty "
                                                   "deployment's handoff passes the searcher only the plan (which never "
                                                   "held the constraint), not the request: no year limit searched",
                                         handed, None),
        "preprint_cited": ("model", f"{mast} FM-1.1 Disobey task specification: 'only peer-reviewed', the arXiv "
                                    "preprint cited", asking("save_brief"), None),
        "search_repeated": ("model", f"{mast} FM-1.3 Step repetition: search_papers asked twice more with the same "
                                     "arguments, its answer in hand", asking("search_papers", 1), None),
    }
    bank = ["transfer_unverified", "over_limit_unapproved", "sanctions_transferred", "sanctions_rule_missing",
            "disputed_twice", "dispute_wrong_tx", "transfer_429_as_success", "transfer_repeated",
            "wrong_account_answered", "no_clarification", "old_model_configured"]
    chosen = {
        "pydantic-ai": bank,
        "tl-openai": ["transfer_unverified", "sanctions_rule_missing", "transfer_429_as_success",
                      "wrong_account_answered", "old_model_configured"],
        "agents-handoff": ["referral_missing_booked", "referral_rule_missing", "double_booked", "minor_no_guardian",
                           "wrong_cancel", "booking_409_as_success", "slots_timeout_hallucinated", "reminder_skipped",
                           "handoff_history_dropped", "other_department_slots"],
        "agents-team": ["plan_drops_constraint", "handoff_filter_drops_request", "preprint_cited", "search_repeated"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (84f90db's detectors,
# agentotel/analysis/ unread; load ~2.0-2.8): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 16/30, good
# runs warned 4/30 (recording /tmp/h15-rec-65c_w6ir).
DIFF_MISSED: dict[str, str] = {}
CHECK_MISSED: dict[str, str] = {}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {
    "model-agents-team-plan-drops-constraint": ("history_lost@5/memory: this pair's deployment passes the searcher only "
                                                "the plan in both runs, and the good plan carries every constraint "
                                                "(the brief is right); a true change from the history runs, no fault "
                                                "of this run"),
}

# The agents' check policies: a write needs its record read first.
POLICY = {"required_before": {"transfer": ["get_customer", "get_account"], "open_dispute": ["list_transactions"],
                              "book_appointment": ["list_slots"]}}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h15-rec-", pairs, produce, kit.through_collector("tl-openai"),
                      policy=lambda name: POLICY)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
