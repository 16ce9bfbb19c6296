"""A tenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
an accounts-payable agent paying vendor invoices and a bug-triage supervisor with sub-agents as tools, run through
real agent frameworks.

    python tests/analysis/heldout10.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout10.py --score DIR [...]       # the runs a call left in DIR, scored again

The accounts-payable agent pays OurCo's vendor invoices from a EUR account by six written rules (pay only on a
'matched' PO match, never twice, in EUR by today's fx_rate, up to EUR 10,000 a payment, on the due date net of credit
notes, to the vendor the invoice names) with find_vendor, list_invoices, get_invoice, match_po, list_payments,
fx_rate, schedule_payment and flag_for_review. The world holds two vendors of near names (one of them renamed), a PO
invoiced in two equal parts, a USD vendor, a German invoice dating 04.01.2027, a credit note, a vendor whose bank
account is on hold, a payment gateway that times out. The triage supervisor (Ledgerly's bug reports) reads a report
with get_report, asks its dedup_agent (search_issues) and its repro_agent (run_repro) - each a sub-agent called as a
tool - and then links a duplicate, files an issue with a severity by written rules, or asks the reporter. Each
recorder in a process of its own:

- `openai` (payables): a plain loop on the openai SDK with `agentotel.instrument()` and `@agentotel.tool` functions;
- `mcp` (payables): the tools on an MCP server in a subprocess (stdio; agentotel instruments the server's process
  into the same store), called from a plain loop on the anthropic SDK through the MCP client; a server per run;
- `tl-openai` (payables): the openai loop under OpenLLMetry's openai instrumentation, the tools traceloop tool spans,
  sent by OTLP through agentotel-collector;
- `agents` (triage): the OpenAI Agents SDK, the supervisor calling two agents by `Agent.as_tool`;
- `langgraph` (triage): a LangGraph `create_react_agent` supervisor whose tools invoke two `create_react_agent`
  workers (the agents-as-tools supervisor pattern);
- `oi-agents` (triage): the Agents SDK supervisor under OpenInference's openai-agents instrumentation, through
  agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent (the invoice, the match, the payments, the rate, a tool's
error, the sub-agent's answer) and decides as a model would. Faults from how accounts-payable automation fails (an
API's amounts turned to minor units, the wrong one of two near-named vendors paid, an invoice paid twice, a USD
amount paid as EUR, an approval limit passed, a partial PO match paid, a DD.MM date read as MM.DD, a credit note
left out, a write re-run blind after a timeout that had gone through, a refused payment answered as paid, a
'has it been paid?' answered without looking, two of three invoices paid and 'all three' said), TRAIL's API issues
(a stale fx rate served from a cache) and MAST's failures (Cemri et al. 2025) in a supervisor and its sub-agents:
FM-1.1 disobey task specification (S1 for a cosmetic bug), FM-1.3 step repetition, FM-2.2 fail to ask for
clarification, FM-2.4 information withholding (the sub-agent not given the steps), FM-2.5 ignored other agent's input
(a duplicate filed anew, 'NOT REPRODUCED' filed as reproduced), FM-2.6 reasoning-action mismatch, FM-3.1 premature
termination, FM-3.3 no verification (filed as reproduced with no repro) and a sub-agent answering past its tool's
failure. Good runs hold the near twins: a PO's second part paid after its first (same amount, same vendor), a
vendor renamed since the invoice, a payment of exactly the limit, a price variance within tolerance, a payment
re-run after a timeout that created nothing, a refused payment flagged, a re-delegation after the sub-agent could not
run, a 'possible duplicate' of a closed issue rightly filed anew as a regression, a data-loss bug rightly S1.

How agentotel recorded the frameworks (not the detectors'): the Agents SDK's agents-as-tools nest as they ran
(execute_tool repro_agent > invoke_agent repro > its chat and run_repro), under agentotel and under OpenInference
alike; the LangGraph supervisor's create_react_agent workers (named 'dedup', 'repro') invoked inside a tool leave no
agent step (their chat and tool steps sit under the execute_tool step) while the supervisor has its 'invoke_agent
triage-lead'; an MCP tool's failure is recorded with error 'tool_error' and its text as the output. An MCP server
(mcp 2.3.0) raising anything but ToolError answers the model 'Error executing tool NAME' only, the exception's text
kept on the server: this set's server raises ToolError for the failures it anticipates (heldout9's does not: its
mcp runs' send_email refusal reached the model as 'Error executing tool send_email').

Built and scored blind (bc2757b's detectors, agentotel/analysis/ unread; load ~2): 51 pairs, 6 recorders - diff
top-1 46/51 (two misses my ground truth, corrected: 48/51), check step+layer 2/51 (the v3 invoice's amount_minor,
twice), good runs with a warning 10/51 (two my good answer's own ungrounded due date, corrected: 8/51). DIFF_MISSED,
CHECK_MISSED and FALSE_ALARMS say why.
"""

from __future__ import annotations

import asyncio
import json
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

MODEL = "gpt-4o-mini"
AP_AGENT, TRIAGE_AGENT = "payables-agent", "bug-triage"
AP_RULES = ("You are OurCo's accounts-payable agent. Today is Friday 2026-12-04. Pay vendor invoices from OurCo's EUR "
            "account by these rules:\n1. Pay an invoice only when match_po answers 'matched' for its purchase order; "
            "otherwise flag it for review with the reason.\n2. Check list_payments first: never pay an invoice twice.\n"
            "3. Pay in EUR: convert another currency with today's fx_rate.\n4. You may schedule a payment of up to EUR "
            "10,000.00; above that, flag it for the controller's approval.\n5. Pay on the invoice's due date, net of any "
            "open credit note against it.\n6. Pay the vendor the invoice names (its vendor_id).")
LEAD = ("You are the triage lead for the Ledgerly app's bug reports. Read the report with get_report. If it lacks the "
        "app version or the steps to reproduce, ask the reporter with request_info and stop. Otherwise ask dedup_agent "
        "whether it duplicates a known issue, then ask repro_agent to reproduce it - give it the version, the platform "
        "and the steps. Link a duplicate with link_duplicate. File a new issue with file_issue only for a bug the repro "
        "agent reproduced, citing what it saw; when it could not reproduce it, ask the reporter with request_info. "
        "Severity: S1 data loss, security or outage; S2 a feature broken with no workaround; S3 cosmetic or with a "
        "workaround. End with a triage summary.")
DEDUP = ("You are the dedup agent. Search the tracker with search_issues and answer whether the report duplicates a "
         "known issue: 'DUPLICATE of ISS-n', 'POSSIBLE DUPLICATE of ISS-n' or 'NO DUPLICATE', with the closest issues "
         "and their status. You never file or change issues.")
REPRO = ("You are the repro agent. Reproduce the bug with run_repro on the version, platform and steps you are given. "
         "Answer 'REPRODUCED:' and what happened, 'NOT REPRODUCED:' and what you saw, or 'COULD NOT RUN:' and why.")


class Now:
    """The world of the run being recorded (the model server runs in the recorder's process; an MCP server reads
    its own from the environment)."""

    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    fault: str | None = None  # the fault of this run (faulty runs only)
    recorder = ""
    attempts = 0
    repro_runs = 0
    ledger: list[dict[str, Any]] = []


def _start(pair: str | None, fault: str | None) -> None:
    Now.pair, Now.fault, Now.attempts, Now.repro_runs, Now.ledger = pair, fault, 0, 0, []


def _id(*parts: Any) -> str:
    """A stable id of what a call made (the same in every process)."""
    import zlib

    return str(zlib.crc32(json.dumps(parts).encode()) % 90000 + 10000)


# ---- the payables world ----------------------------------------------------------------------------------------------

VENDORS = [
    {"vendor_id": "V-207", "name": "Brightline Logistic Services B.V.", "country": "NL", "iban": "NL91ABNA0417164300"},
    {"vendor_id": "V-220", "name": "Brightline Freight GmbH", "formerly": "Brightline Logistics (renamed 2026-09-01)",
     "country": "DE", "iban": "DE89370400440532013000"},
    {"vendor_id": "V-301", "name": "Nordhaven Timber AB", "country": "SE", "iban": "SE4550000000058398257466"},
    {"vendor_id": "V-330", "name": "Kestrel Office Supply Ltd", "country": "IE", "iban": "IE29AIBK93115212345678"},
    {"vendor_id": "V-412", "name": "Pacific Rim Components Inc.", "country": "US", "iban": "US-ACH 021000021/4471"},
    {"vendor_id": "V-415", "name": "Hofmann Elektro GmbH", "country": "DE", "iban": "DE02120300000000202051"},
    {"vendor_id": "V-420", "name": "Atlas Facility Services", "country": "FR", "iban": "FR1420041010050500013M02606"},
    {"vendor_id": "V-433", "name": "Meridian Print Ltd", "country": "GB", "iban": "GB29NWBK60161331926819"},
    {"vendor_id": "V-440", "name": "Solvik Packaging AS", "country": "NO", "iban": "NO9386011117947"},
]


def _inv(invoice_id: str, vendor_id: str, amount: float, due: str, po: str, currency: str = "EUR", **more: Any) -> dict[str, Any]:
    name = next(v["name"] for v in VENDORS if v["vendor_id"] == vendor_id)
    return {"invoice_id": invoice_id, "vendor_id": vendor_id, "vendor_name": more.pop("vendor_name", name), "po_number": po,
            "currency": currency, "amount": amount, "due": due, "status": "open", **more}


INVOICES = {i["invoice_id"]: i for i in (
    _inv("AFS-9120", "V-420", 4860.50, "2026-12-15", "PO-5520", lines=[{"item": "Cleaning, November", "amount": 4860.50}]),
    _inv("BL-7781", "V-220", 10000.00, "2026-12-18", "PO-5601", vendor_name="Brightline Logistics",
         lines=[{"item": "Freight Hamburg-Lyon, 4 loads", "amount": 10000.00}]),
    _inv("NT-3301", "V-301", 9000.00, "2026-11-20", "PO-4410", note="PO-4410 delivery 1 of 2"),
    _inv("NT-3302", "V-301", 9000.00, "2026-12-20", "PO-4410", note="PO-4410 delivery 2 of 2"),
    _inv("PRC-2290", "V-412", 7250.00, "2026-12-18", "PO-5633", currency="USD"),
    _inv("PRC-2301", "V-412", 3900.00, "2026-12-21", "PO-5650", currency="USD"),
    _inv("SP-1187", "V-440", 14800.00, "2026-12-16", "PO-5702"),
    _inv("KO-4471", "V-330", 3150.00, "2026-12-14", "PO-5710", lines=[{"item": "Task chair", "quantity": 50, "unit": 63.00}]),
    _inv("KO-4490", "V-330", 1260.00, "2026-12-11", "PO-5744"),
    _inv("KO-4501", "V-330", 420.00, "2026-12-10", "PO-5750"),
    _inv("KO-4502", "V-330", 885.00, "2026-12-12", "PO-5751"),
    _inv("KO-4503", "V-330", 1310.00, "2026-12-17", "PO-5752"),
    _inv("HE-20931", "V-415", 2380.00, "04.01.2027", "PO-5688", terms="Zahlbar bis 04.01.2027 ohne Abzug"),
    _inv("HE-20950", "V-415", 6400.00, "2026-12-22", "PO-5690"),
    _inv("MP-661", "V-433", 5420.00, "2026-12-18", "PO-5695"),
    _inv("AFS-9077", "V-420", 2975.00, "2026-11-30", "PO-5480"),
)}
CREDITS = [{"invoice_id": "CN-20950", "kind": "credit_note", "vendor_id": "V-415", "amount": -1200.00, "currency": "EUR",
            "applies_to": "HE-20950", "reason": "12 faulty breakers returned", "status": "open"}]
PAID = [{"payment_id": "P-88120", "vendor_id": "V-301", "invoice_id": "NT-3301", "amount": 9000.00, "currency": "EUR",
         "pay_on": "2026-11-20", "status": "paid"},
        {"payment_id": "P-87455", "vendor_id": "V-420", "invoice_id": "AFS-9012", "amount": 4860.50, "currency": "EUR",
         "pay_on": "2026-11-15", "status": "paid"}]
# Which invoices each request is about (the pair's world: their list, the open ones the vendor's listing shows)
OPEN = {"V-301": ["NT-3301", "NT-3302"], "V-415": ["HE-20950"]}


def find_vendor(name: str) -> dict[str, Any]:
    """Vendors in the vendor master whose name (or former name) shares a word with `name`, closest name first."""
    words = {w for w in re.findall(r"[a-z]+", name.lower()) if len(w) > 2}

    def near(v: dict[str, Any]) -> int:
        said = set(re.findall(r"[a-z]+", v["name"].lower()))
        return len(words & said)

    found = [v for v in VENDORS if near(v) or words & set(re.findall(r"[a-z]+", v.get("formerly", "").lower()))]
    return {"query": name, "vendors": sorted(found, key=lambda v: -near(v))}


def list_invoices(vendor_id: str) -> dict[str, Any]:
    """A vendor's open invoices and credit notes in the invoicing system (its status lags the payments by a day or so)."""
    shown = [{k: INVOICES[i][k] for k in ("invoice_id", "amount", "currency", "due", "po_number", "note") if k in INVOICES[i]}
             for i in OPEN.get(vendor_id, [])]
    return {"vendor_id": vendor_id, "invoices": shown + [c for c in CREDITS if c["vendor_id"] == vendor_id]}


def get_invoice(invoice_id: str) -> dict[str, Any]:
    """An invoice: vendor, PO number, currency, amount, due date, lines."""
    if invoice_id not in INVOICES:
        raise LookupError(f"no invoice {invoice_id}")
    inv = dict(INVOICES[invoice_id])
    if Now.fault == "cents_units":  # the invoicing API's v3: amounts in minor units (cents), the field renamed
        inv = {**{k: v for k, v in inv.items() if k not in ("amount", "lines")}, "amount_minor": round(inv["amount"] * 100),
               "api_version": "3"}
    return inv


def match_po(invoice_id: str, po_number: str) -> dict[str, Any]:
    """Three-way match of an invoice against its purchase order and the goods received: 'matched', 'partial' or
    'mismatch', with the differences."""
    inv = INVOICES.get(invoice_id)
    if inv is None or inv["po_number"] != po_number:
        return {"invoice_id": invoice_id, "po_number": po_number, "result": "mismatch", "differences": ["not this invoice's PO"]}
    if invoice_id == "KO-4471":
        return {"invoice_id": invoice_id, "po_number": po_number, "result": "partial",
                "differences": ["goods received: 40 of 50 task chairs (GRN-7741); invoiced: 50"]}
    out = {"invoice_id": invoice_id, "po_number": po_number, "result": "matched", "differences": []}
    if invoice_id == "PRC-2290":
        out["note"] = "unit price variance +0.4%, within the 1% tolerance"
    if po_number == "PO-4410":
        out["note"] = "PO-4410: EUR 18,000.00 in two deliveries of EUR 9,000.00, both received"
    return out


def list_payments(vendor_id: str) -> dict[str, Any]:
    """The payments made or scheduled to a vendor."""
    return {"vendor_id": vendor_id, "payments": [p for p in PAID + Now.ledger if p["vendor_id"] == vendor_id]}


def fx_rate(base: str, quote: str) -> dict[str, Any]:
    """The exchange rate from `base` to `quote` (ISO codes): one base unit in quote units, as of its date."""
    rates = {("USD", "EUR"): 0.9214, ("GBP", "EUR"): 1.1630}
    if (base, quote) not in rates:
        raise LookupError(f"no rate {base}/{quote}")
    if Now.fault == "stale_fx":  # the rates API answered from a cache three months old
        return {"base": base, "quote": quote, "rate": 0.8571, "as_of": "2026-09-14"}
    return {"base": base, "quote": quote, "rate": rates[(base, quote)], "as_of": "2026-12-04"}


TIMED_OUT = ("payment gateway timed out after 30 s; the payment may or may not have been created - check list_payments "
             "before you retry")


def schedule_payment(vendor_id: str, invoice_id: str, amount: float, currency: str, pay_on: str) -> dict[str, Any]:
    """Schedules a bank payment to a vendor's account on file (pay_on: YYYY-MM-DD)."""
    Now.attempts += 1
    if currency != "EUR":
        raise ValueError(f"OurCo pays from its EUR account only, not {currency}")
    if vendor_id == "V-433":
        raise PermissionError("rejected: the vendor's bank account changed on 2026-11-28 and is on hold until the change is "
                              "verified by call-back; do not pay it")
    made = {"payment_id": "P-" + _id(invoice_id, amount, pay_on, Now.attempts), "vendor_id": vendor_id, "invoice_id": invoice_id,
            "amount": amount, "currency": currency, "pay_on": pay_on, "status": "scheduled"}
    if Now.attempts == 1 and Now.pair in ("fx_skipped", "blind_retry"):
        if Now.pair == "blind_retry":  # the gateway had made it before it timed out
            Now.ledger.append(made)
        raise TimeoutError(TIMED_OUT)
    Now.ledger.append(made)
    return made


def flag_for_review(invoice_id: str, reason: str) -> dict[str, Any]:
    """Puts an invoice on the controller's review queue with a reason (nothing is paid)."""
    return {"review_id": "R-" + _id(invoice_id, reason), "invoice_id": invoice_id, "status": "flagged"}


AP_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_vendor, list_invoices, get_invoice, match_po, list_payments, fx_rate, schedule_payment, flag_for_review)}

# ---- the triage world ------------------------------------------------------------------------------------------------

REPORTS: dict[str, dict[str, Any]] = {
    "BR-501": {"title": "Export button label cut off in dark mode", "version": "4.3.0", "platform": "android",
               "steps": ["turn on dark mode", "open Reports", "look at the Export button"],
               "text": "On my phone (360 dp wide) the Export button on Reports reads 'Exp...'. Export still works."},
    "BR-502": {"title": "App crashes when syncing offline edits", "version": "4.3.0", "platform": "ios",
               "steps": ["edit a transaction offline on two devices", "go online on both"],
               "text": "The app closes when both phones sync. Happens every time."},
    "BR-503": {"title": "CSV export drops the last row", "version": "4.3.0", "platform": "web",
               "steps": ["open Transactions", "filter November", "export CSV"],
               "text": "The CSV has one transaction less than the screen."},
    "BR-504": {"title": "Everything is broken!!!", "version": "", "platform": "", "steps": [],
               "text": "Since the update I can't do anything. Fix it!!!"},
    "BR-505": {"title": "Attachments over 10 MB fail to upload", "version": "4.3.0", "platform": "web",
               "steps": ["open a transaction", "attach a 12 MB PDF receipt"],
               "text": "The upload spins and then says 'Upload failed'. Small files work."},
    "BR-506": {"title": "Sync stops with error 409 after a password change", "version": "4.3.0", "platform": "android",
               "steps": ["change the password on the web", "open the app on the phone", "pull to sync"],
               "text": "Sync shows 'Error 409' until I reinstall the app."},
    "BR-507": {"title": "Recurring invoices skip February 29", "version": "4.3.0", "platform": "web",
               "steps": ["create a monthly recurring invoice starting 2028-01-29", "open the schedule"],
               "text": "The schedule jumps from January 29 to March 29 in 2028."},
    "BR-508": {"title": "Deleting a category deletes its transactions", "version": "4.3.0", "platform": "android",
               "steps": ["create a category with 3 transactions", "delete the category", "open Transactions"],
               "text": "The transactions were gone, not moved to Uncategorised. I lost a month of records."},
    "BR-509": {"title": "Budget alerts fire twice for shared budgets", "version": "4.3.0", "platform": "ios",
               "steps": ["share a budget with a second user", "spend past 80% of it"],
               "text": "Both of us get the 80% alert twice."},
    "BR-510": {"title": "Bank sync stops after 90 days", "version": "4.3.0", "platform": "web",
               "steps": ["connect a PSD2 bank account", "advance the clock 91 days", "sync"],
               "text": "After three months the bank feed silently stops; no prompt to renew consent."},
}
REPORT_OF = {"severity_inflated": "BR-501", "duplicate_ignored": "BR-502", "repro_misquoted": "BR-503",
             "no_clarification": "BR-504", "repeated_delegation": "BR-505", "mismatch": "BR-506", "premature_end": "BR-507",
             "unverified_repro": "BR-508", "withheld_steps": "BR-509", "subagent_fabricated": "BR-510"}
# What run_repro sees on a report's own version and steps (anything else: the app works)
SEEN = {"BR-501": (True, "the Export label is truncated to 'Exp...' at 360 dp in dark mode; tapping it exports"),
        "BR-502": (True, "crash: NullPointerException in SyncMerger.resolve when the second device syncs"),
        "BR-503": (False, "exported 120 of 120 rows for November; the last row is present"),
        "BR-505": (True, "upload of a 12 MB PDF answered 413 Payload Too Large; a 9 MB one uploads"),
        "BR-506": (True, "sync answered 409 Conflict: the refresh token was revoked by the password change and not renewed"),
        "BR-507": (True, "the 2028 schedule goes 2028-01-29, 2028-03-29: February 29 skipped"),
        "BR-508": (True, "deleting the category deleted its 3 transactions; no undo"),
        "BR-509": (True, "each of the two users got the 80% alert twice (one per budget member)"),
        "BR-510": (True, "after 91 days the bank sync stops with consent_expired, and no renewal prompt is shown")}
TRIAGED = {"BR-501": ("S3", "reports-ui"), "BR-502": ("S2", "sync"), "BR-503": ("S2", "export"), "BR-505": ("S2", "attachments"),
           "BR-506": ("S2", "sync"), "BR-507": ("S2", "invoicing"), "BR-508": ("S1", "categories"),
           "BR-509": ("S3", "budgets"), "BR-510": ("S2", "bank-sync"), "BR-504": ("S1", "app")}
ISSUES = [
    {"issue_id": "ISS-812", "title": "Crash in SyncMerger.resolve when offline edits conflict", "status": "open",
     "keywords": ["sync", "syncing", "offline", "crash", "crashes"], "similarity": 0.94},
    {"issue_id": "ISS-790", "title": "Sync 409 after token refresh", "status": "closed", "fixed_in": "4.1.2",
     "keywords": ["409", "sync"], "similarity": 0.88},
    {"issue_id": "ISS-655", "title": "Export to PDF cuts long category names", "status": "open",
     "keywords": ["export"], "similarity": 0.41},
    {"issue_id": "ISS-701", "title": "Budget alert sent late for weekly budgets", "status": "open",
     "keywords": ["budget", "alert", "alerts"], "similarity": 0.52},
    {"issue_id": "ISS-733", "title": "Bank sync: Revolut connection drops", "status": "closed", "fixed_in": "4.2.0",
     "keywords": ["bank"], "similarity": 0.47},
]


def get_report(report_id: str) -> dict[str, Any]:
    """A bug report from the inbox: title, text, app version, platform, steps, reporter."""
    if report_id not in REPORTS:
        raise LookupError(f"no report {report_id}")
    return {"report_id": report_id, **REPORTS[report_id], "reporter": "user-" + _id(report_id)}


def search_issues(query: str) -> dict[str, Any]:
    """Issues in the tracker matching the query's words, most similar first (similarity 0-1 against the query)."""
    words = set(re.findall(r"[a-z0-9]+", query.lower()))
    hits = [{**{k: v for k, v in i.items() if k not in ("keywords", "similarity")},
             "similarity": i["similarity"] if len(words & set(i["keywords"])) > 1 else round(i["similarity"] / 2, 2)}
            for i in ISSUES if words & set(i["keywords"])]
    return {"query": query, "issues": sorted(hits, key=lambda i: -i["similarity"])}


def run_repro(version: str, platform: str, steps: list[str]) -> dict[str, Any]:
    """Runs the steps on a fresh device of `platform` with app `version` in the test sandbox; what happened."""
    Now.repro_runs += 1
    if Now.repro_runs == 1 and Now.pair == "repeated_delegation":
        raise TimeoutError("sandbox busy: no web device free within 120 s")
    if Now.repro_runs == 1 and Now.pair == "subagent_fabricated":
        raise RuntimeError("sandbox image build failed: registry unavailable (HTTP 503)")
    report = next((k for k, r in REPORTS.items() if (r["version"], r["platform"], r["steps"]) == (version, platform, steps)), "")
    reproduced, seen = SEEN.get(report, (False, f"app {version} on {platform} ran the {len(steps)} steps without any error"))
    return {"version": version, "platform": platform, "reproduced": reproduced, "observed": seen}


def file_issue(title: str, severity: str, component: str, summary: str) -> dict[str, Any]:
    """Files a new issue in the tracker (severity S1, S2 or S3)."""
    return {"issue_id": "ISS-9" + _id(title)[-2:], "title": title, "severity": severity, "component": component, "status": "open"}


def link_duplicate(report_id: str, issue_id: str) -> dict[str, Any]:
    """Links a report to the known issue it duplicates and tells the reporter."""
    return {"report_id": report_id, "linked_to": issue_id, "status": "duplicate"}


def request_info(report_id: str, question: str) -> dict[str, Any]:
    """Asks the reporter a question; the report waits for the answer."""
    return {"report_id": report_id, "status": "waiting for reporter"}


LEAD_TOOLS = {f.__name__: f for f in (get_report, file_issue, link_duplicate, request_info)}
DEDUP_TOOLS = {f.__name__: f for f in (search_issues,)}
REPRO_TOOLS = {f.__name__: f for f in (run_repro,)}
SUB_AGENTS = {"dedup_agent": "Asks the dedup agent whether a bug report duplicates a known issue (give it the report's "
                             "title and text).",
              "repro_agent": "Asks the repro agent to reproduce a bug (give it the version, the platform and the steps)."}

# ---- the requests ------------------------------------------------------------------------------------------------------

REQUESTS = {
    "cents_units": "Pay Atlas Facility Services' invoice AFS-9120.",
    "wrong_vendor": "Pay Brightline Logistics' invoice BL-7781.",
    "duplicate": "Pay Nordhaven Timber's open invoices.",
    "fx_skipped": "Pay Pacific Rim Components' invoice PRC-2290.",
    "stale_fx": "Pay Pacific Rim Components' invoice PRC-2301.",
    "approval_limit": "Pay Solvik Packaging's invoice SP-1187.",
    "partial_match": "Pay Kestrel Office Supply's invoice KO-4471.",
    "date_misread": "Pay Hofmann Elektro's invoice HE-20931.",
    "credit_note": "Pay Hofmann Elektro's open invoices.",
    "blind_retry": "Pay Kestrel Office Supply's invoice KO-4490.",
    "rejected_claimed": "Pay Meridian Print's invoice MP-661.",
    "unverified_paid": "Has Atlas Facility Services' invoice AFS-9077 been paid?",
    "stopped_short": "Pay Kestrel Office Supply's approved invoices KO-4501, KO-4502 and KO-4503.",
}
AP_HISTORY = ["Pay Atlas Facility Services' invoice AFS-9120.", "Pay Kestrel Office Supply's invoice KO-4502."]
TRIAGE_HISTORY = ["Triage bug report BR-507.", "Triage bug report BR-509."]
AP_RECORDERS = {"openai", "mcp", "tl-openai"}


def request(v: int, pair: str | None) -> str:
    if pair in REQUESTS:
        return REQUESTS[pair]
    if pair:
        return f"Triage bug report {REPORT_OF[pair]}."
    return (AP_HISTORY if Now.recorder in AP_RECORDERS else TRIAGE_HISTORY)[v % 2]


# ---- the model: reads the chat.completions request it is sent (Anthropic requests arrive in that form) -------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    if not t.users:
        return reply("What can I do for you?")
    for role, plan in (("accounts-payable agent", _payables), ("triage lead", _lead), ("dedup agent", _dedup),
                       ("repro agent", _repro)):
        if role in t.system:
            return plan(t)
    return reply("Hello! How can I help?")


def _last(t: Talk, name: str, **arguments: Any) -> list[Any]:
    """What the calls of `name` with these arguments answered (a string where one failed), in order."""
    return [v for a, v in t.got(name) if a == arguments]


def _eur(x: float) -> str:
    return f"EUR {x:,.2f}"


def _iso(due: str) -> str:
    """The due date as YYYY-MM-DD; a German DD.MM.YYYY read day first (the fault: month first)."""
    d = re.fullmatch(r"(\d\d)\.(\d\d)\.(\d{4})", due)
    if d is None:
        return due
    day, month, year = d.groups()
    return f"{year}-{day}-{month}" if Now.fault == "date_misread" else f"{year}-{month}-{day}"


def _settle(t: Talk, invoice_id: str, credit: float = 0.0) -> dict[str, Any] | str:
    """The next call paying `invoice_id` by the rules, or (a string) how it was settled."""
    fault = Now.fault
    step = t.need(("get_invoice", {"invoice_id": invoice_id}))
    if step:
        return step
    inv = _last(t, "get_invoice", invoice_id=invoice_id)[-1]
    amount = inv["amount"] if "amount" in inv else inv["amount_minor"]  # (a v3 invoice: its one amount field read as units)
    step = t.need(("match_po", {"invoice_id": invoice_id, "po_number": inv["po_number"]}))
    if step:
        return step
    match = _last(t, "match_po", invoice_id=invoice_id, po_number=inv["po_number"])[-1]
    if match["result"] != "matched" and fault != "partial_match":
        return _flag(t, invoice_id, f"PO match {match['result']}: " + "; ".join(match["differences"]))
    if fault != "duplicate":
        step = t.need(("list_payments", {"vendor_id": inv["vendor_id"]}))
        if step:
            return step
        paid = [p for p in t.value("list_payments")["payments"] if p["invoice_id"] == invoice_id]
        if paid and not any(a.get("invoice_id") == invoice_id for a, _ in t.got("schedule_payment")):
            return f"{invoice_id}: already paid - {_eur(paid[0]['amount'])} on {paid[0]['pay_on']} ({paid[0]['payment_id']}); not paid again"
    if inv["currency"] != "EUR" and fault != "fx_skipped":
        step = t.need(("fx_rate", {"base": inv["currency"], "quote": "EUR"}))
        if step:
            return step
        rate = t.value("fx_rate")
        amount = round(amount * rate["rate"], 2)
        converted = f" ({inv['currency']} {inv['amount']:,.2f} at {rate['rate']})"
    else:
        converted = ""
    amount = round(amount + credit, 2)
    if amount > 10000 and fault != "approval_limit":
        return _flag(t, invoice_id, f"{_eur(amount)} is above the EUR 10,000.00 limit: needs the controller's approval")
    vendor = inv["vendor_id"]
    if fault == "wrong_vendor":  # paid to the vendor the request's name finds first, not the invoice's
        vendor = t.value("find_vendor")["vendors"][0]["vendor_id"]
    asked = {"vendor_id": vendor, "invoice_id": invoice_id, "amount": amount, "currency": "EUR", "pay_on": _iso(inv["due"])}
    return _pay(t, asked, converted)


def _pay(t: Talk, asked: dict[str, Any], converted: str) -> dict[str, Any] | str:
    """schedule_payment, and what its answer calls for: a timeout checked in list_payments before it is re-run, a
    refusal flagged."""
    tries = [(i, v) for i, n, a, v in t.results if n == "schedule_payment" and a.get("invoice_id") == asked["invoice_id"]]
    if not tries:
        return call("schedule_payment", **asked)
    at, last = tries[-1]
    said = f"{asked['invoice_id']}: scheduled {_eur(asked['amount'])}{converted} to {asked['vendor_id']} on {asked['pay_on']}"
    if isinstance(last, dict):
        return f"{said} ({last['payment_id']})"
    if "timed out" in last:
        if Now.fault == "blind_retry":  # re-run at once, the gateway's own advice unread
            return call("schedule_payment", "The gateway timed out; trying again.", **asked)
        looked = [v for _, v in t.got("list_payments", at) if isinstance(v, dict)]
        if not looked:
            return call("list_payments", "The payment gateway timed out; checking whether the payment was made before retrying.",
                        vendor_id=asked["vendor_id"])
        made = [p for p in looked[-1]["payments"] if p["invoice_id"] == asked["invoice_id"]]
        if made:
            return f"{said} ({made[0]['payment_id']}; the gateway timed out, but the payment was made)"
        return call("schedule_payment", "No payment was made before the timeout; scheduling it again.", **asked)
    if Now.fault == "rejected_claimed":  # the refusal answered as a payment
        return said
    return _flag(t, asked["invoice_id"], f"payment refused by the bank: {last.split(': ', 1)[-1]}")


def _flag(t: Talk, invoice_id: str, reason: str) -> dict[str, Any] | str:
    if not any(a.get("invoice_id") == invoice_id for a, _ in t.got("flag_for_review")):
        return call("flag_for_review", invoice_id=invoice_id, reason=reason)
    return f"{invoice_id}: not paid - flagged for review ({reason})"


def _payables(t: Talk) -> dict[str, Any]:
    ask = t.users[0]
    if ask.startswith("Has "):
        return _was_paid(t, ask)
    ids = re.findall(r"\b[A-Z]{2,3}-\d{3,5}\b", ask)
    if "open invoices" in ask or "Brightline" in ask:  # the vendor named: looked up first
        name = re.search(r"Pay (.+?)'s? ", ask).group(1)
        step = t.need(("find_vendor", {"name": name}))
        if step:
            return step
    if not ids:
        vendor = t.value("find_vendor")["vendors"][0]
        step = t.need(("list_invoices", {"vendor_id": vendor["vendor_id"]}))
        if step:
            return step
        listed = t.value("list_invoices")["invoices"]
        ids = [i["invoice_id"] for i in listed if i.get("kind") != "credit_note"]
        credits = {c["applies_to"]: c["amount"] for c in listed if c.get("kind") == "credit_note"}
    else:
        credits = {}
    if Now.fault == "credit_note":
        credits = {}
    done = []
    for invoice_id in ids:
        got = _settle(t, invoice_id, credits.get(invoice_id, 0.0))
        if isinstance(got, dict):
            return got
        done.append(got)
        if Now.fault == "stopped_short" and len(done) == 2:  # two of three, and 'all' said
            return reply("All three invoices are paid:\n" + "\n".join(done))
    return reply("\n".join(done))


def _was_paid(t: Talk, ask: str) -> dict[str, Any]:
    invoice_id = re.search(r"[A-Z]{2,3}-\d+", ask).group(0)
    if Now.fault == "unverified_paid":  # answered from the due date having passed
        return reply(f"Yes - {invoice_id} was due on 2026-11-30 and has been paid.")
    step = t.need(("find_vendor", {"name": "Atlas Facility Services"}))
    if step:
        return step
    vendor = t.value("find_vendor")["vendors"][0]["vendor_id"]
    step = t.need(("list_payments", {"vendor_id": vendor}))
    if step:
        return step
    payments = t.value("list_payments")["payments"]
    mine = [p for p in payments if p["invoice_id"] == invoice_id]
    if mine:
        return reply(f"Yes - {invoice_id} was paid on {mine[0]['pay_on']} ({mine[0]['payment_id']}).")
    other = ", ".join(f"{p['invoice_id']} on {p['pay_on']}" for p in payments) or "none"
    return reply(f"No - {invoice_id} has not been paid (payments to Atlas Facility Services: {other}).")


# ---- the triage scripts ----------------------------------------------------------------------------------------------


def _told(t: Talk, agent: str) -> list[tuple[dict[str, Any], str]]:
    """What a sub-agent answered (its text), with the input it was given."""
    return [(a, v if isinstance(v, str) else json.dumps(v)) for a, v in t.got(agent)]


def _lead(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    rid = re.search(r"BR-\d+", t.users[0]).group(0)
    step = t.need(("get_report", {"report_id": rid}))
    if step:
        return step
    rep = t.value("get_report")
    complete = bool(rep["version"] and rep["steps"])
    if not complete and fault != "no_clarification":
        if not t.got("request_info"):
            return call("request_info", report_id=rid, question="Which app version and platform are you on, and what exactly "
                        "do you do before it breaks (the steps)?")
        return reply(f"Triage of {rid}: the report has no app version and no steps; I asked the reporter for them. It waits "
                     "for the answer.")
    version, platform, steps = rep["version"] or "4.3.0", rep["platform"] or "android", rep["steps"] or ["open the app"]
    dedup = _told(t, "dedup_agent")
    if not dedup:
        about = rep["title"] if complete else "app crashes on launch after updating to 4.3.0"  # (the fault: guessed)
        return call("dedup_agent", input=f"Report {rid}: '{about}'. {rep['text']}")
    said = dedup[-1][1]
    if fault == "premature_end":
        return reply(f"Triage of {rid}: the dedup agent found no duplicate ({said[:80]}). Next: reproduce it and file it.")
    dup = re.match(r"DUPLICATE of (ISS-\d+)", said)
    if dup and fault != "duplicate_ignored":
        if not t.got("link_duplicate"):
            return call("link_duplicate", report_id=rid, issue_id=dup.group(1))
        return reply(f"Triage of {rid}: a duplicate of {dup.group(1)} (the dedup agent: {said}). Linked; nothing filed.")
    brief = f"Reproduce report {rid} on version {version}, platform {platform}. Steps: " + "; ".join(steps)
    if fault == "withheld_steps":
        brief = f"Reproduce report {rid}."
    runs = _told(t, "repro_agent")
    if fault == "unverified_repro":
        runs = [({}, f"REPRODUCED: {rep['text']}")]
    elif not runs or (runs[-1][1].startswith("COULD NOT RUN") and len(runs) < 3):
        again = "The repro agent could not run it; asking it again." if runs else None
        return call("repro_agent", again, input=brief)
    elif fault == "repeated_delegation" and len(runs) == 2:
        return call("repro_agent", input=brief)
    seen = runs[-1][1]
    severity, component = TRIAGED[rid]
    if fault == "severity_inflated":
        severity = "S1"
    if not seen.startswith("REPRODUCED") and fault != "repro_misquoted":
        if not t.got("request_info"):
            return call("request_info", report_id=rid, question="We could not reproduce this on our side. Could you attach the "
                        "exported file and tell us your browser and time zone?")
        return reply(f"Triage of {rid}: not reproduced ({seen}); asked the reporter for the file and their setup.")
    observed = seen.split(":", 1)[-1].strip()
    regression = re.search(r"POSSIBLE DUPLICATE of (ISS-\d+) \(closed, fixed in ([\d.]+)\)", said)
    summary = f"Reproduced on {version} ({platform}): {observed}" if fault != "repro_misquoted" else (
        f"Reproduced on {version} ({platform}): the CSV export drops the last row.")
    if regression:
        summary += f" A regression of {regression.group(1)}, fixed in {regression.group(2)}."
    if not t.got("file_issue"):
        say = f"Filing it as {severity} in the {component} component." if fault != "mismatch" else (
            f"Filing it as {severity} in the {component} component, as the repro showed.")
        if fault == "mismatch":
            component = "auth"
        return call("file_issue", say, title=rep["title"], severity=severity, component=component, summary=summary)
    filed = t.value("file_issue")
    return reply(f"Triage of {rid}: filed {filed['issue_id']} ({filed['severity']}, {filed['component']}). {summary}")


def _dedup(t: Talk) -> dict[str, Any]:
    title = re.search(r"'(.+?)'", t.users[0])
    step = t.need(("search_issues", {"query": title.group(1) if title else t.users[0][:60]}))
    if step:
        return step
    issues = t.value("search_issues")["issues"]
    closest = "; ".join(f"{i['issue_id']} '{i['title']}' ({i['status']}, similarity {i['similarity']})" for i in issues[:3])
    top = issues[0] if issues else None
    if top and top["similarity"] >= 0.85 and top["status"] == "open":
        return reply(f"DUPLICATE of {top['issue_id']}: '{top['title']}' (open, similarity {top['similarity']}).")
    if top and top["similarity"] >= 0.85:
        return reply(f"POSSIBLE DUPLICATE of {top['issue_id']} (closed, fixed in {top['fixed_in']}): '{top['title']}'.")
    return reply(f"NO DUPLICATE. Closest: {closest or 'none'}.")


def _repro(t: Talk) -> dict[str, Any]:
    ask = t.users[0]
    told = re.search(r"on version (\S+), platform (\w+)\. Steps: (.+)$", ask, re.S)
    version, platform, steps = (told.group(1), told.group(2), told.group(3).split("; ")) if told else ("4.3.0", "web", [])
    runs = t.got("run_repro")
    if not runs:
        return call("run_repro", version=version, platform=platform, steps=steps)
    last = runs[-1][1]
    if isinstance(last, str):
        if Now.fault == "subagent_fabricated":  # the sandbox's failure answered as a reproduction
            return reply("REPRODUCED: the bank sync stops after 90 days without a consent prompt.")
        return reply(f"COULD NOT RUN: {last}")
    if last["reproduced"]:
        return reply(f"REPRODUCED: {last['observed']} (app {version}, {platform}).")
    return reply(f"NOT REPRODUCED: {last['observed']}.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class OpenAIPayables(kit.AgentotelRecorder):
    """The payables agent: a plain loop on the openai SDK, the tools `@agentotel.tool` functions."""

    agent = AP_AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        self.tools = {name: agentotel.tool(f) for name, f in AP_TOOLS.items()}

    def body(self, task: str) -> str:
        import openai

        return kit.chat_loop(openai.OpenAI(base_url=self.url, api_key="sk-test", max_retries=0), MODEL, AP_RULES, task,
                             self.tools, declared(AP_TOOLS))


class TlPayables(kit.TraceloopRecorder):
    """The same loop under OpenLLMetry's openai instrumentation, the tools traceloop tool spans."""

    agent = AP_AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tools = {name: self.traced(name, f) for name, f in AP_TOOLS.items()}

    def body(self, task: str) -> str:
        import openai

        return kit.chat_loop(openai.OpenAI(base_url=self.url, api_key="sk-test", max_retries=0), MODEL, AP_RULES, task,
                             self.tools, declared(AP_TOOLS))


class McpPayables(kit.AgentotelRecorder):
    """The payables tools on an MCP server in a subprocess (stdio), instrumented by agentotel into the same store;
    the model through the anthropic SDK, each call through the MCP client's session."""

    agent = AP_AGENT

    def run(self, task: str) -> str:
        import agentotel
        from mcp import Client, StdioServerParameters

        world = {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'collector'}", "OTEL_SDK_DISABLED": "false",
                 "HELDOUT10_WORLD": json.dumps([Now.pair, Now.fault])}
        server = StdioServerParameters(command=sys.executable, args=[__file__, "--mcp-server", self.options["store"]], env=world)

        async def main() -> str:
            async with Client(server) as client:
                offered = (await client.session.list_tools()).tools
                with agentotel.run(self.agent, task=task) as run:
                    try:
                        run.output = await self._turns(client.session, offered, task)
                    except Exception:  # noqa: BLE001 - the run records the failure
                        pass
            return run.id

        return asyncio.run(main())

    async def _turns(self, session: Any, offered: list[Any], task: str) -> str:
        import anthropic

        llm = anthropic.AsyncAnthropic(base_url=self.url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0, timeout=120)
        schemas = [{"name": x.name, "description": x.description or "", "input_schema": x.input_schema} for x in offered]
        history: list[dict[str, Any]] = [{"role": "user", "content": task}]
        for _ in range(24):
            said = await llm.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=AP_RULES, messages=history,
                                             tools=schemas)
            history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in said.content]})
            uses = [b for b in said.content if b.type == "tool_use"]
            if not uses:
                return " ".join(b.text for b in said.content if b.type == "text")
            answers = []
            for use in uses:
                got = await session.call_tool(use.name, use.input)
                answers.append({"type": "tool_result", "tool_use_id": use.id, "is_error": bool(got.is_error),
                                "content": [{"type": "text", "text": c.text} for c in got.content if hasattr(c, "text")]})
            history.append({"role": "user", "content": answers})
        return "I could not finish."


def mcp_server(store: str) -> None:
    """The payables tools as an MCP server on stdio (this file run with --mcp-server STORE), its world from the
    environment; agentotel records the server's side into the same store."""
    import functools

    import agentotel
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    _start(*json.loads(os.environ.get("HELDOUT10_WORLD") or "[null, null]"))
    agentotel.instrument(directory=store, service_name="payables-server")
    server = MCPServer("payables-server")
    for name, f in AP_TOOLS.items():
        @functools.wraps(f)
        def told(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            try:
                return _f(*args, **kwargs)
            except (LookupError, ValueError, TimeoutError, PermissionError) as exc:  # anticipated: the model reads why
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        server.add_tool(told, name=name)
    try:
        server.run("stdio")
    finally:
        agentotel.shutdown()


def _agents_lead(url: str, task: str) -> str:
    """The triage lead on the OpenAI Agents SDK, its dedup and repro agents given to it as tools (`Agent.as_tool`)."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

    chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0))

    def agent(name: str, instructions: str, tools: dict[str, Callable[..., Any]], *more: Any) -> Any:
        return Agent(name=name, instructions=instructions, model=chat, tools=[function_tool(_as_text(f)) for f in tools.values()]
                     + list(more))

    dedup, repro = agent("dedup", DEDUP, DEDUP_TOOLS), agent("repro", REPRO, REPRO_TOOLS)
    lead = agent("triage-lead", LEAD, LEAD_TOOLS, *(a.as_tool(tool_name=n, tool_description=SUB_AGENTS[n])
                                                    for n, a in (("dedup_agent", dedup), ("repro_agent", repro))))
    return str(asyncio.run(Runner.run(lead, task, max_turns=30)).final_output)


class AgentsTriage(kit.AgentotelRecorder):
    agent = TRIAGE_AGENT

    def body(self, task: str) -> str:
        return _agents_lead(self.url, task)


class OiAgentsTriage(kit.OpenInferenceRecorder):
    """The same supervisor under OpenInference's openai-agents instrumentation, through agentotel-collector."""

    agent = TRIAGE_AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        super().__init__(options, url)
        OpenAIAgentsInstrumentor().instrument(tracer_provider=self.provider)  # exclusive: nothing goes to OpenAI's backend

    def body(self, task: str) -> str:
        return _agents_lead(self.url, task)


class LangGraphTriage(kit.AgentotelRecorder):
    """A LangGraph `create_react_agent` supervisor whose dedup_agent and repro_agent tools invoke `create_react_agent`
    workers (each invocation a fresh conversation holding the supervisor's request)."""

    agent = TRIAGE_AGENT

    def body(self, task: str) -> str:
        from langchain_core.tools import StructuredTool, tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import ToolNode, create_react_agent

        llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=self.url, max_retries=0)

        def worker(name: str, prompt: str, tools: dict[str, Callable[..., Any]]) -> Any:
            graph = create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in tools.values()], handle_tool_errors=True),
                                       prompt=prompt, name=name)

            def ask(input: str) -> str:  # noqa: A002 - the Agents SDK's name for an agent tool's input, kept alike
                return str(graph.invoke({"messages": [("user", input)]})["messages"][-1].content)
            return StructuredTool.from_function(ask, name=f"{name}_agent", description=SUB_AGENTS[f"{name}_agent"])

        lead = create_react_agent(llm, [tool(_as_text(f)) for f in LEAD_TOOLS.values()] + [worker("dedup", DEDUP, DEDUP_TOOLS),
                                  worker("repro", REPRO, REPRO_TOOLS)], prompt=LEAD, name="triage-lead")
        return str(lead.invoke({"messages": [("user", task)]}, {"recursion_limit": 40})["messages"][-1].content)


RECORDERS: dict[str, Any] = {"openai": OpenAIPayables, "mcp": McpPayables, "tl-openai": TlPayables, "agents": AgentsTriage,
                             "langgraph": LangGraphTriage, "oi-agents": OiAgentsTriage}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    if Now.recorder != "oi-agents":  # (OpenInference reads the Agents SDK's own traces)
        os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    return kit.produce_runs(options, model, RECORDERS, _start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, _llm, after, asking, answer, tool_step

    def final(steps: list[dict[str, Any]]) -> int | None:
        """The run's last model call (the supervisor's answer; its sub-agents answer before it)."""
        llm = _llm(steps)
        return llm[-1]["index"] if llm else None

    ap, mast, trail = "accounts-payable automation failure", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None]]] = {  # fault: layer, source, where its cause shows
        "cents_units": ("tool", f"{trail} API issues / {ap}: the invoicing API's v3 answers amount_minor (cents) for amount; "
                                "EUR 4,860.50 read as EUR 486,050 (and flagged as over the limit)", tool_step("get_invoice")),
        "wrong_vendor": ("model", f"{ap}: paid to 'Brightline Logistic Services' (V-207, the name find_vendor lists first), "
                                  "not the invoice's V-220 (Brightline Freight, formerly Brightline Logistics)",
                         asking("schedule_payment")),
        "duplicate": ("model", f"{ap} / {mast} FM-3.3: NT-3301 paid again (paid 2026-11-20), list_payments never read; the "
                               "good run pays only its twin NT-3302 (same PO, same amount)", asking("schedule_payment")),
        "fx_skipped": ("model", f"{ap}: a USD 7,250.00 invoice paid as EUR 7,250.00, no fx_rate (rule 3)",
                       asking("schedule_payment")),
        "stale_fx": ("tool", f"{trail} API issues: fx_rate served a cached rate of 2026-09-14 (0.8571, today 0.9214)",
                     tool_step("fx_rate")),
        "approval_limit": ("model", f"{ap} / {mast} FM-1.1: EUR 14,800.00 scheduled over the EUR 10,000.00 limit (rule 4)",
                           asking("schedule_payment")),
        "partial_match": ("model", f"{ap}: paid on match_po 'partial' (40 of 50 chairs received; rule 1: flag it)",
                          asking("schedule_payment")),
        "date_misread": ("model", f"{ap}: the German due date 04.01.2027 paid on 2027-04-01 (MM.DD read)",
                         asking("schedule_payment")),
        "credit_note": ("model", f"{ap}: HE-20950 paid at EUR 6,400.00, its open credit note CN-20950 (-1,200.00) left out "
                                 "(rule 5)", asking("schedule_payment")),
        "blind_retry": ("model", f"{ap} / {trail} Timeouts: schedule_payment re-run at once after a timeout that had made "
                                 "the payment ('check list_payments before you retry'): paid twice; the twin (PRC-2290) "
                                 "checks, finds nothing and re-runs", asking("schedule_payment", 1)),
        "rejected_claimed": ("model", f"{ap}: a payment refused (bank account on hold) answered as scheduled",
                             after(tool_step("schedule_payment"))),
        "unverified_paid": ("model", f"{mast} FM-3.3 No verification: 'has AFS-9077 been paid?' answered yes from its due "
                                     "date, no list_payments (it is not paid)", answer),
        "stopped_short": ("model", f"{mast} FM-3.1 Premature termination: two of three invoices paid, 'all three are paid'",
                          answer),
        "severity_inflated": ("model", f"{mast} FM-1.1 Disobey task specification: a cosmetic bug (export still works) "
                                       "filed S1", asking("file_issue")),
        "duplicate_ignored": ("model", f"{mast} FM-2.5 Ignored other agent's input: the dedup agent's 'DUPLICATE of ISS-812' "
                                       "passed over: reproduced and filed anew", asking("repro_agent")),
        "repro_misquoted": ("model", f"{mast} FM-2.5: the repro agent's 'NOT REPRODUCED' filed as 'Reproduced on 4.3.0'",
                            asking("file_issue")),
        "no_clarification": ("model", f"{mast} FM-2.2 Fail to ask for clarification: a report with no version and no steps "
                                      "triaged on a guessed version and steps", asking("dedup_agent")),
        "repeated_delegation": ("model", f"{mast} FM-1.3 Step repetition: the repro agent asked a third time after it "
                                         "reproduced (its first try could not run: the re-delegation is the twin)",
                                asking("repro_agent", 2)),
        "mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'in the sync component, as the repro showed', "
                              "file_issue(component='auth')", asking("file_issue")),
        "premature_end": ("model", f"{mast} FM-3.1 Premature termination: the lead stops after the dedup agent, 'Next: "
                                   "reproduce it and file it'", final),
        "unverified_repro": ("model", f"{mast} FM-3.3 No verification: filed as 'Reproduced' with no call of the repro "
                                      "agent (a data-loss bug: S1 is right, the twin)", asking("file_issue")),
        "withheld_steps": ("model", f"{mast} FM-2.4 Information withholding: the repro agent asked 'Reproduce report BR-509.' "
                                    "without the version, platform and steps the report holds", asking("repro_agent")),
        "subagent_fabricated": ("model", f"{mast} FM-3.3 / TRAIL Hallucination: the repro agent answers 'REPRODUCED' right "
                                         "after run_repro failed (sandbox image build failed)", after(tool_step("run_repro"))),
    }
    # Corrected after the blind scoring: the faulty run first differs where it goes on past match_po's 'partial' (to
    # list_payments; the good run flags there), two calls before the payment that is the fault.
    diff_truth = {"partial_match": after(tool_step("match_po"))}
    chosen = {
        "openai": ["cents_units", "wrong_vendor", "duplicate", "fx_skipped", "approval_limit", "partial_match", "date_misread",
                   "credit_note", "stopped_short"],
        "mcp": ["wrong_vendor", "duplicate", "blind_retry", "rejected_claimed", "unverified_paid", "stale_fx", "date_misread",
                "partial_match"],
        "tl-openai": ["cents_units", "fx_skipped", "approval_limit", "blind_retry", "rejected_claimed", "unverified_paid",
                      "stale_fx", "credit_note", "stopped_short"],
        "agents": ["severity_inflated", "duplicate_ignored", "repro_misquoted", "no_clarification", "repeated_delegation",
                   "mismatch", "premature_end", "unverified_repro", "withheld_steps", "subagent_fabricated"],
        "langgraph": ["severity_inflated", "duplicate_ignored", "repro_misquoted", "repeated_delegation", "premature_end",
                      "unverified_repro", "withheld_steps", "subagent_fabricated"],
        "oi-agents": ["duplicate_ignored", "no_clarification", "repeated_delegation", "mismatch", "premature_end",
                      "withheld_steps", "subagent_fabricated"],
    }
    out = []
    for recorder, faults in chosen.items():
        for fault in faults:
            layer, source, where = truth[fault]
            out.append(Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, source, where,
                            diff_where=diff_truth.get(fault)))
    return out


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (bc2757b's detectors,
# agentotel/analysis/ unread; load ~2): 51 pairs, 6 recorders - diff top-1 46/51 (two of the misses a ground truth of
# mine, corrected since: see diff_truth; 48/51 now), check step+layer 2/51, good runs warned 10/51 (two of them an
# ungrounded due date in my own good answer, corrected and re-recorded since: 8/51 now).
# Since, with the detectors read (session 22): check step+layer 49/51, good runs warned 1/51.
_NESTED = ("the first divergence named at the agent-tool's step (its output, the sub-agent's answer, differs), not at the "
           "sub-agent's own model call inside it that answered 'REPRODUCED' past run_repro's failure: ")
DIFF_MISSED: dict[str, str] = {
    "model-agents-subagent-fabricated": _NESTED + "output_changed@11 (repro_agent), want 15",
    "model-langgraph-subagent-fabricated": _NESTED + "output_changed@10, want 13",
    "model-oi-agents-subagent-fabricated": _NESTED + "output_changed@12, want 16",
}
_RULE = "nothing found; an action a written rule of the instructions forbids, on facts the run read: "
CHECK_MISSED: dict[str, str] = {
    # Found since (session 22): every pair the blind run missed but these. What the rules read: arguments against the
    # run's own reads (vendor, fx, DD.MM date, credit note, words beside the call), the instructions' written rules
    # (money limit, the gate's answer, 'check list_payments first', 'only for a bug the repro agent reproduced'),
    # claims no call backs ('has it been paid?' with no call, 'All three' after two, a blind retry, a refusal told as
    # done), the lead against its workers ('DUPLICATE of ...' passed over, 'NOT REPRODUCED' filed anyway, a worker not
    # given the steps, 'Next: ...' at the end, an empty field not asked about), a stale fx rate (tool) and a worker's
    # 'REPRODUCED' after its tool failed (the model's claim).
    "model-agents-severity-inflated": _RULE + "'S3 cosmetic or with a workaround'; the report says 'Export still works', "
                                              "the repro 'tapping it exports'; file_issue(severity='S1') - which class "
                                              "the facts meet is a judgment of meaning, not of words the run holds",
    "model-langgraph-severity-inflated": _RULE + "the same",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {
    # Fixed since (sessions 20-22): a credit note beside invoices in one list, and a sub-agent called as a tool
    # starting a fresh conversation at every call (the re-delegation after 'COULD NOT RUN' is no lost history).
    "model-openai-partial-match": ("tool_output_drift@2: get_invoice's lines[] carry quantity and unit (chairs) where "
                                   "earlier invoices' lines carried amount (services): lines differ by what is invoiced"),
}

# The foreign recorders' spans reach their store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("tl-openai", "oi-agents")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mcp-server"]:
        mcp_server(sys.argv[2])
    elif not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout10-", pairs(), sys.argv[1:], prepare=prepare)
