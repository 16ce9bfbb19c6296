"""A seventh held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a research assistant answering from a small document index and a small browser, run through real agent frameworks.

    python tests/analysis/heldout7.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout7.py --score DIR [...]       # the runs a call left in DIR, scored again

The documents (policies, product notes, legal pages, prices; each with an id, a source and a date) and the web pages
(an intranet behind a sign-in wall, a docs site with a missing page, a report that is still being generated, a
room-booking form, a page of report links, a shop cart) are strings here. The tools: search_docs (ranked passages
by word overlap, ids, sources, dates, scores), fetch_page, click, fill_form and cite. Recorded through the
frameworks' own tool execution, each recorder in a process of its own:

- `openai`: a plain loop on the openai SDK with `agentotel.instrument()`, search_docs an `@agentotel.retrieval`
  function and the browser `@agentotel.tool` functions;
- `langgraph`: LangGraph's create_react_agent with ChatOpenAI; search_docs is langchain's create_retriever_tool over
  a BaseRetriever subclass (a tool step with the retrieval inside it), the browser @tool functions;
- `pydantic-ai`: a pydantic-ai Agent under agentotel, every tool plain (search_docs returns the passages as a dict);
- `agents`: the OpenAI Agents SDK, a researcher (searches, reads) handing over to a writer (writes the answer), the
  handoff filtered with `handoff_filters.remove_all_tools` (the writer sees the researcher's words, not its results);
- `oi-lg`: the LangGraph agent under OpenInference's langchain instrumentation (the retriever as a RETRIEVER span),
  sent by OTLP through agentotel-collector;
- `oi-openai`: the openai loop under OpenInference's openai instrumentation, search_docs and the browser tools
  OITracer's RETRIEVER and TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from RAG failure
taxonomies (Barnett et al. 2024, "Seven Failure Points When Engineering a RAG System": missing content answered
anyway, the right document ranked low, not extracted, incomplete, wrong specificity), WebArena-style browser-agent
failures (a sign-in wall or a 404 read as content, a fetch loop, a form filled with another value, another element
clicked, a stale page) and MAST (Cemri et al. 2025: task and role specification, lost history, no clarification,
premature termination, incorrect verification, information withheld at a handoff, reasoning-action mismatch). Good
runs include near twins: a sign-in wall passed and the page fetched again; a 404 followed by a search; an empty
search retried with a broader query; a report fetched again once because it said "refresh in a moment"; two sources
that disagree, said so; "the documents do not say" said honestly; a question asked when the request is ambiguous;
a busy search index and a timed-out fetch retried unchanged; a follow-up search that finds nothing, the answer
standing on the first; a failed click corrected; "sign in" in a page's own text;
a sign-in wall reported honestly; an offer after a complete answer; figures worked out (50 EUR a month, a cart's
new total); dates in words; the old policy ranked first and read past by date.

Built and scored blind (11ab534's detectors, agentotel/analysis/ unread; load ~6-12): 61 pairs, 6 recorders - diff
top-1 61/61, check step+layer 7/61, good runs with a warning 2/61. After session 17's and 18's rules: check 53/61, 0 good
runs warned. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say why.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply  # noqa: E402

MODEL = "gpt-4o-mini"
AGENT = "research-assistant"
SOLO = ("You are a research assistant. Answer the user's question from the company's documents (search_docs) and "
        "web pages (fetch_page, click, fill_form). Cite the passages you use by their id, say when the documents do not "
        "answer the question, and ask the user when the request is ambiguous.")
RESEARCHER = ("You are the researcher of a research team. Search the documents and read the pages the question needs, "
              "then hand over to the writer with the passages you found (ids, dates, and every caveat they carry). You "
              "never write the final answer yourself.")
WRITER = ("You are the writer of a research team. Write the final answer from the passages the researcher handed you, "
          "citing their ids. You never search or browse yourself: ask the researcher's findings only.")

# ---- the documents and the pages ----------------------------------------------------------------------------------

DOCS: dict[str, tuple[str, str, str]] = {  # id: (source, date, text)
    "D-101": ("policies/remote-work-2024.md", "2024-03-01",
              "Remote work policy (2024). Employees may work remotely up to 3 days a week. The home-office stipend is "
              "600 EUR a year; the eligible expenses are listed on the full policy page "
              "https://intranet.example/policies/remote-2024."),
    "D-087": ("policies/remote-work-2021.md", "2021-06-15",
              "Remote work policy (2021). Employees may work remotely up to 2 days a week. The home-office stipend is "
              "400 EUR a year."),
    "D-095": ("hr/faq.md", "2023-09-10", "HR FAQ: remote days are agreed with your manager; the remote work policy sets "
                                         "the maximum number of days a week."),
    "D-110": ("policies/travel-2024.md", "2024-01-20", "Travel policy (2024). Hotel nights are reimbursed up to 150 EUR."),
    "D-210": ("kb/acmedb-5-upgrade.md", "2025-05-02",
              "Upgrading AcmeDB 5.x to 5.4: install driver 3.2 or later first, then run `acmectl migrate --online`; "
              "no downtime is needed."),
    "D-211": ("kb/acmedb-4-upgrade.md", "2023-11-12",
              "Upgrading AcmeDB 4.x: stop the service, back up the data directory, then run `acmectl migrate --offline` "
              "(about 20 minutes of downtime)."),
    "D-212": ("kb/acmedb-5-limits.md", "2025-05-02", "AcmeDB 5 accepts at most 500 client connections per node "
                                                     "(max_connections)."),
    "D-301": ("legal/logs-eu.md", "2024-07-01", "EU region: customer logs are kept for 30 days, then deleted."),
    "D-302": ("legal/logs-us.md", "2024-07-01", "US region: customer logs are kept for 90 days (log retention), "
                                                     "then deleted."),
    "D-401": ("web/pricing.html", "2025-02-01", "Pricing: the Pro plan costs 49 USD per seat per month."),
    "D-402": ("sales/faq.md", "2025-01-15", "Sales FAQ: the Pro plan price is 45 USD per seat per month."),
    "D-501": ("legal/sla-enterprise.md", "2024-10-01",
              "Enterprise SLA: 99.95% monthly uptime. If uptime falls below the target, the customer receives service "
              "credits of 10% of the monthly fee for each full hour below target, up to 30% of the monthly fee."),
    "D-601": ("products/atlas-db.md", "2025-03-03", "Atlas DB (the database service) keeps its query logs for 14 days "
                                                    "(data retention)."),
    "D-602": ("products/atlas-crm.md", "2025-03-03", "Atlas CRM (the sales tool) keeps contact history for 365 days "
                                                     "(data retention)."),
    "D-701": ("policies/travel-2027-draft.md", "2026-11-02",
              "DRAFT, not approved: the 2027 travel policy would cap hotel nights at 180 EUR."),
}
_STOP = {"the", "a", "an", "of", "for", "in", "on", "is", "are", "and", "to", "how", "what", "do", "i", "my", "we", "our",
         "does", "with", "by", "at", "be", "many", "much", "long", "may"}


def _words(text: str) -> set[str]:
    return {w.rstrip(".").removesuffix("s") for w in re.findall(r"[a-z0-9][a-z0-9.]*", text.lower())} - _STOP


class Now:
    fault: str | None = None  # the fault of this run (faulty runs only)
    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    variant = 0
    recorder = ""
    signed_in = False
    fetches: dict[str, int] = {}
    form: dict[str, str] = {}
    lamps = 2
    busy = False


# Pairs whose search index is busy at the run's first search (both runs): the model searches again, unchanged
BUSY = {"disagree_silent"}


def _start(pair: str | None, fault: str | None, variant: int) -> None:
    Now.pair, Now.fault, Now.variant = pair, fault, variant
    Now.signed_in, Now.fetches, Now.form, Now.lamps, Now.busy = False, {}, {}, 2, pair in BUSY


def hits(query: str) -> list[dict[str, Any]]:
    """The passages whose words cover at least half the query's, best first (ties: the newer first)."""
    if Now.busy:
        Now.busy = False
        raise ConnectionError("search index busy (503 Service Unavailable): retry in a moment")
    asked = _words(query)
    scored = []
    for doc_id, (source, date, text) in DOCS.items():
        if doc_id == "D-701" and Now.pair != "withholding":
            continue  # (a draft indexed for the travel team's runs only)
        overlap = len(asked & _words(f"{source} {text}")) / max(len(asked), 1)
        if overlap >= 0.5:
            if Now.fault == "truncated" and doc_id == "D-501":  # the chunker cut the passage mid-sentence
                text = text.split(" for each")[0] + " for each"
            passage = {"id": doc_id, "source": source, "date": date, "score": round(0.45 + 0.5 * overlap, 2), "text": text}
            if doc_id == "D-501":  # a legal page's passage says its section (a field the others do not have)
                passage["section"] = "4.2 Service credits"
            scored.append(passage)
    if Now.fault == "outdated" or Now.pair == "outdated" and Now.recorder in RANKED_LOW:  # the old policy ranked above the current
        for p in scored:
            p["score"] = {"D-087": 0.93, "D-101": 0.71}.get(p["id"], p["score"])
    scored.sort(key=lambda p: p["date"], reverse=True)
    scored.sort(key=lambda p: -p["score"])
    return scored[:4]


# Recorders whose good outdated run gets the same bad ranking as the faulty one (and reads past it, by date)
RANKED_LOW = {"oi-lg", "agents"}


def search_docs(query: str) -> dict[str, Any]:
    """Searches the company's documents; returns the best passages with their id, source, date and score."""
    found = hits(query)
    if Now.fault == "shape_change":  # a new search service: passages under "results", no score
        return {"query": query, "results": [{"document": {k: v for k, v in p.items() if k != "score"}} for p in found]}
    return {"query": query, "passages": found}


SIGN_IN = ("Acme SSO - Sign in to continue\n[sso-continue] Continue with single sign-on\nUsername: ____  Password: ____\n"
           "Forgot your password? Contact the IT desk.")
PAGES = {
    "https://intranet.example/policies/remote-2024": (
        "Remote work policy 2024 (full text). Up to 3 remote days a week, agreed with your manager. Home-office stipend: "
        "600 EUR a year. Eligible expenses: a desk, an office chair, a monitor, a headset, and internet costs up to 20 EUR "
        "a month."),
    "https://intranet.example/policies/remote-2021": (
        "Remote work policy 2021 (superseded by the 2024 policy). Up to 2 remote days a week. Home-office stipend: "
        "400 EUR a year."),
    "https://intranet.example/hr/holidays": (
        "Holidays. Up to 5 unused holiday days carry over to the next year; carried-over days must be taken by 31 "
        "March. To book days, sign in to the HR portal."),
    "https://status.example/reports/q3": "Q3 uptime report: 99.97% uptime, 2 incidents (14 and 9 minutes).",
    "https://rooms.example/book": ("Book a meeting room. form #booking: [date] (YYYY-MM-DD)  [people]  [room]  "
                                   "[book-submit] Book"),
    "https://reports.example/quarterly": ("Quarterly reports. [e12] Q3 2026 report (PDF)  [e13] Q2 2026 report (PDF)  "
                                          "[e14] Archive"),
}
REPORTS = {"e12": "Q3 2026 report: revenue 4.2 M EUR, up 8% on Q2.", "e13": "Q2 2026 report: revenue 3.9 M EUR, up 2% on Q1."}


def fetch_page(url: str) -> str:
    """Fetches a web page and returns its text (links and form fields as [id] labels)."""
    n = Now.fetches[url] = Now.fetches.get(url, 0) + 1
    if n == 1 and Now.pair in TIMEOUT:
        raise TimeoutError(f"timed out after 10 s fetching {url}")
    if url == "https://intranet.example/hr/holidays" and not Now.signed_in:
        return SIGN_IN
    if url == "https://status.example/reports/q3" and (n == 1 or Now.fault == "fetch_loop"):
        return "Q3 uptime report\nThe report is being generated. Refresh the page in a moment."
    if url == "https://shop.example/cart":
        return (f"Your cart. Desk lamp x {Now.lamps} (24.00 EUR each) [qty-lamp]. Total: {24 * Now.lamps:.2f} EUR. "
                "[checkout] Checkout. Do not refresh this page during payment.")
    if url in PAGES:
        return PAGES[url]
    return f"404 Not Found\nThe page {url.split('//')[-1].split('/', 1)[-1]} does not exist. Docs home | Guides | API reference"


def click(element_id: str) -> str:
    """Clicks the element of the current page with that id; returns the page it leads to."""
    element_id = element_id.strip("[]#")
    if element_id == "sso-continue":
        Now.signed_in = True
        return "Signed in as j.doe@acme.example. Go back to the page you asked for."
    if element_id in REPORTS:
        return REPORTS[element_id]
    if element_id == "book-submit":
        return f"Booking confirmed: room {Now.form.get('room')} on {Now.form.get('date')} for {Now.form.get('people')} people. Reference BK-5521."
    raise ValueError(f"no element [{element_id}] on the current page")


def fill_form(form_id: str, field: str, value: str) -> str:
    """Sets a field of a form on the current page to a value."""
    if form_id == "cart" and field == "qty-lamp":
        Now.lamps = int(value)
        return f"Cart updated: Desk lamp quantity set to {value}."
    Now.form[field] = value
    return f"Field {field} of form {form_id} set to {value!r}."


def cite(source_id: str) -> str:
    """Adds a document to the answer's sources by its id."""
    if source_id not in DOCS:
        raise ValueError(f"unknown source id {source_id}")
    source, date, _ = DOCS[source_id]
    return f"Citation [{source_id}] {source} ({date}) added."


BROWSER: dict[str, Callable[..., Any]] = {f.__name__: f for f in (fetch_page, click, fill_form, cite)}
TOOLS: dict[str, Callable[..., Any]] = {"search_docs": search_docs, **BROWSER}


def schema(f: Callable[..., Any]) -> dict[str, Any]:
    params = inspect.signature(f).parameters
    return {"type": "object", "properties": {n: {"type": "string"} for n in params},
            "required": [n for n, p in params.items() if p.default is inspect.Parameter.empty]}


# ---- the questions ------------------------------------------------------------------------------------------------

QUESTIONS = {
    "made_up": "What home-office stipend do part-time employees get under the 2024 remote work policy?",
    "outdated": "How many days a week may I work remotely?",
    "empty_answered": "Which driver version do I need before upgrading AcmeDB to 5.4?",
    "cite_unretrieved": "What is the home-office stipend? Add the source you used with cite.",
    "contradicts": "How many days a week may I work remotely under the remote work policy?",
    "dropped_constraint": "We run AcmeDB 4.x (4.8). How do we upgrade it?",
    "region": "How long are customer logs kept in the EU region?",
    "truncated": "What service credits does the Enterprise SLA give when uptime falls below target?",
    "disagree_silent": "How much does the Pro plan cost per seat per month?",
    "shape_change": "What is the home-office stipend under the 2024 remote work policy?",
    "sign_in_wall": "What does https://intranet.example/hr/holidays say about carrying over unused holiday days?",
    "not_found": "What does https://docs.example/acmedb/v5/limits say about the maximum number of client connections?",
    "fetch_loop": "What uptime does the Q3 report at https://status.example/reports/q3 give?",
    "form_value": "Book meeting room R-4 for 6 people on 2026-04-03 at https://rooms.example/book.",
    "click_mismatch": "Open the Q3 2026 report on https://reports.example/quarterly and tell me the revenue.",
    "stale_page": "Set the desk lamp quantity in my cart (https://shop.example/cart) to 3 and tell me the new total.",
    "three_sources": "Give me three sources on remote work (with their dates), each with what it says.",
    "table_format": "As a table with the columns region and retention: how long are customer logs kept in the EU and US regions?",
    "history_lost": "What is the home-office stipend in the 2024 remote work policy, and which expenses are eligible?",
    "no_clarify": "What is the data retention of Atlas?",
    "premature_stop": "Which expenses does the 2024 home-office stipend cover?",
    "incorrect_verification": "Check the full 2024 remote work policy page and confirm the home-office stipend.",
    "mismatch": "Open the full 2024 remote work policy page and tell me how many remote days it allows.",
    "role_spec": "How many days a week may I work remotely under the 2024 policy?",
    "withholding": "What is the hotel cap in the 2027 travel policy?",
}
HISTORY_QUESTIONS = ["How many remote days a week does the 2024 policy allow?", "How long are customer logs kept in the US region?"]


def task(v: int, pair: str | None) -> str:
    if pair == "form_value" and Now.recorder in WORDED:
        return QUESTIONS[pair].replace("on 2026-04-03", "on 3 April 2026")
    return QUESTIONS[pair] if pair else HISTORY_QUESTIONS[v % 2]


WORDED = {"oi-lg"}  # the booking's date given in words (the form takes it as YYYY-MM-DD)
TIMEOUT = {"click_mismatch"}  # pairs whose first fetch times out (both runs): fetched again, unchanged


# ---- the model: reads the chat.completions request it is sent ----------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def _parsed(text: str) -> Any:
    value: Any = text
    while isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value


class Seen:
    """What the conversation sent shows: the question, the tool results in order, the assistant's words."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.asked = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        self.notes = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "assistant")
        calls = {c["id"]: (c["function"]["name"], _parsed(c["function"]["arguments"])) for mm in messages
                 for c in mm.get("tool_calls") or () if not c["function"]["name"].startswith("transfer_to")}
        self.outs: list[tuple[str, dict[str, Any], str]] = []
        for mm in messages:
            if mm.get("role") == "tool" and mm.get("tool_call_id") in calls:
                name, arguments = calls[mm["tool_call_id"]]
                value = _parsed(_text(mm.get("content")))
                self.outs.append((name, arguments if isinstance(arguments, dict) else {},
                                  value if isinstance(value, str) else json.dumps(value)))

    def of(self, name: str) -> list[tuple[dict[str, Any], str]]:
        return [(a, t) for n, a, t in self.outs if n == name]

    def passages(self) -> list[str]:
        """The passage ids the searches returned, in order (read off each result, whatever its form)."""
        out: list[str] = []
        for _, text in self.of("search_docs"):
            value = _parsed(text)
            if isinstance(value, dict) and "passages" not in value:
                continue  # (read as the model was told the service answers: passages, or nothing)
            for doc_id in re.findall(r"D-\d{3}", text):
                if doc_id not in out:
                    out.append(doc_id)
        return out


def call(name: str, say: str | None = None, **arguments: Any) -> dict[str, Any]:
    return reply(say, (name, arguments))


def model(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    role = "researcher" if "researcher of a research team" in system else "writer" if "writer of a research team" in system \
        else "solo" if "research assistant" in system else None
    if role is None:
        return reply("Hello! What should I look up?")
    seen = Seen(messages)
    if not seen.asked.strip():
        return reply("Sorry, could you tell me again what you would like me to find out?")
    if role == "writer":
        return _writer(seen)
    plan = PLANS.get(Now.pair or "", _history)
    return plan(seen, Now.fault is not None, role)


def _history(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if "US region" in seen.asked:
        return _search_answer(seen, "customer logs kept US region", "Customer logs in the US region are kept for 90 days "
                                                                    "[D-302].", role)
    return _search_answer(seen, "remote work policy 2024 days a week", "The 2024 policy allows up to 3 remote days a week "
                                                                       "[D-101].", role)


def _search_answer(seen: Seen, query: str, text: str, role: str) -> dict[str, Any]:
    """Search (again after a busy index), then answer (or hand the passages over, as a researcher)."""
    if not [t for _, t in seen.of("search_docs") if "503" not in t]:
        return call("search_docs", "The index was busy; searching again." if seen.of("search_docs") else None, query=query)
    if role == "researcher":
        return _hand_over(seen)
    return reply(text)


def _hand_over(seen: Seen, note: str = "") -> dict[str, Any]:
    found = "; ".join(f"[{d}] {DOCS[d][0]} ({DOCS[d][1]}): {DOCS[d][2]}" for d in seen.passages())
    return reply(f"Passages for the writer: {found}{note}", ("transfer_to_writer", {}))


def _writer(seen: Seen) -> dict[str, Any]:
    pair, faulty = Now.pair, Now.fault is not None
    if pair == "role_spec" and faulty and not seen.of("search_docs"):
        return call("search_docs", "Let me check the policy myself.", query="remote work days a week")
    if pair == "withholding":
        if "DRAFT" in seen.notes:
            return reply("The 2027 travel policy is still a draft and not approved: it would cap hotel nights at 180 EUR "
                         "[D-701]. Until it is approved, the 2024 cap applies.")
        return reply("The 2027 travel policy caps hotel nights at 180 EUR [D-701].")
    if pair == "region":
        if "[D-301]" in seen.notes:
            return reply("Customer logs in the EU region are kept for 30 days, then deleted [D-301].")
        return reply("Customer logs are kept for 90 days, then deleted [D-302].")
    if pair == "no_clarify":
        if faulty:
            return reply("Atlas keeps its query logs for 14 days [D-601].")
        return reply("Two products are called Atlas: Atlas DB keeps query logs for 14 days [D-601] and Atlas CRM keeps "
                     "contact history for 365 days [D-602]. Which one do you mean?")
    if pair == "outdated":
        return _remote_days(seen.notes)
    if pair == "premature_stop":
        return reply("The 2024 home-office stipend of 600 EUR a year covers a desk, an office chair, a monitor and a headset "
                     "[D-101]; the full policy page has the whole list.")
    if pair == "incorrect_verification":
        checked = "Checked on the full policy page" in seen.notes
        if checked or faulty:
            return reply("Verified against the full 2024 policy page: the home-office stipend is 600 EUR a year [D-101].")
        return reply("The home-office stipend is 600 EUR a year [D-101].")
    return reply("You may work remotely up to 3 days a week under the 2024 policy [D-101].")


def _remote_days(read: str) -> dict[str, Any]:
    """The answer from the passages read: the top one (a faulty model trusts the ranking), else the newest."""
    first = re.search(r"D-(087|101)", read)
    if first and first.group(0) == "D-087" and Now.fault:
        return reply("You may work remotely up to 2 days a week [D-087].")
    return reply("You may work remotely up to 3 days a week [D-101]; the 2021 policy's 2 days [D-087] is superseded.")


# ---- each pair's script (the good run and its faulty twin) ---------------------------------------------------------


def _made_up(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if faulty:
        return _search_answer(seen, "2024 remote work policy home-office stipend part-time",
                              "Under the 2024 remote work policy, part-time employees get a home-office stipend of 300 EUR "
                              "a year, half the full-time amount [D-101].", role)
    return _search_answer(seen, "2024 remote work policy home-office stipend part-time",
                          "The 2024 remote work policy sets the home-office stipend at 600 EUR a year [D-101]. It says "
                          "nothing about part-time employees, and I could not find a rule for them in the documents; HR "
                          "would know.", role)


def _outdated(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="remote work days a week policy")
    if role == "researcher":
        return _hand_over(seen)
    return _remote_days(seen.of("search_docs")[0][1])


def _empty_answered(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    searched = seen.of("search_docs")
    if not searched:
        return call("search_docs", query="AcmeDB 5.4 JDBC driver compatibility matrix certified versions")
    if faulty:
        return reply("Before upgrading AcmeDB to 5.4 you need driver 3.0 or later.")
    if Now.recorder in ("openai", "oi-openai"):  # an honest "not found"; the others search again, broader
        return reply("I could not find which driver version AcmeDB 5.4 needs: the documents returned nothing for it. The "
                     "AcmeDB release notes or the DB team would know.")
    if len(searched) == 1:
        return call("search_docs", "Nothing matched; let me search more broadly.", query="AcmeDB 5.4 upgrade driver")
    return reply("Install driver 3.2 or later before upgrading AcmeDB to 5.4; the upgrade itself runs online "
                 "(`acmectl migrate --online`) [D-210].")


def _cite_unretrieved(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="home-office stipend")
    if not seen.of("cite"):
        return call("cite", source_id="D-110" if faulty else "D-101")
    return reply(f"The home-office stipend is 600 EUR a year [{'D-110' if faulty else 'D-101'}].")


def _contradicts(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    return _search_answer(seen, "remote work policy days a week",
                          f"Under the remote work policy you may work remotely up to {4 if faulty else 3} days a week "
                          "[D-101].", role)


def _dropped_constraint(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="AcmeDB upgrade" if faulty else "AcmeDB 4.x upgrade")
    top = seen.passages()[0] if seen.passages() else ""
    if top == "D-211":
        return reply("AcmeDB 4.x upgrades offline: stop the service, back up the data directory, then run `acmectl "
                     "migrate --offline`; plan about 20 minutes of downtime [D-211].")
    return reply("Install driver 3.2 or later, then run `acmectl migrate --online`; no downtime is needed [D-210].")


def _region(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="customer log retention" if faulty else "customer logs kept EU region")
    if role == "researcher":
        keep = [d for d in seen.passages() if faulty or "EU" in DOCS[d][2]][:1]
        found = "; ".join(f"[{d}] {DOCS[d][0]} ({DOCS[d][1]}): {DOCS[d][2]}" for d in keep)
        return reply(f"Passages for the writer: {found}", ("transfer_to_writer", {}))
    return reply("Customer logs in the EU region are kept for 30 days [D-301].")


def _truncated(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="Enterprise SLA service credits uptime below target")
    if faulty:  # the passage ends at "for each": the rest filled in
        return reply("Below 99.95% monthly uptime, the Enterprise SLA gives service credits of 10% of the monthly fee for "
                     "each day below target, up to 50% of the monthly fee [D-501].")
    return reply("Below 99.95% monthly uptime, the Enterprise SLA gives service credits of 10% of the monthly fee for each "
                 "full hour below target, up to 30% of the monthly fee [D-501].")


def _disagree(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    return _search_answer(seen, "Pro plan price per seat per month",
                          "The Pro plan costs 45 USD per seat per month [D-402]." if faulty else
                          "The sources disagree: the pricing page says 49 USD per seat per month [D-401, 2025-02-01], the "
                          "sales FAQ says 45 USD [D-402, 2025-01-15]. The pricing page is the newer one, so 49 USD is "
                          "likely current; sales can confirm.", role)


def _shape_change(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="2024 remote work policy home-office stipend")
    if "D-101" not in seen.passages():
        return reply("I could not find anything about the home-office stipend in the documents.")
    return reply("The 2024 remote work policy sets the home-office stipend at 600 EUR a year [D-101].")


def _sign_in_wall(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    url = "https://intranet.example/hr/holidays"
    fetched = seen.of("fetch_page")
    if not fetched:
        return call("fetch_page", url=url)
    if "Sign in" in fetched[-1][1]:
        if not faulty and Now.recorder == "oi-openai":  # no credentials: said so
            return reply("I could not read https://intranet.example/hr/holidays: it shows the Acme SSO sign-in page, and I "
                         "have no account to sign in with. Open it signed in, or ask HR about carrying over holiday days.")
        if faulty:
            return reply("The holidays page (https://intranet.example/hr/holidays) asks you to sign in with Acme SSO and "
                         "lists no carry-over rule, so unused holiday days do not carry over.")
        if not seen.of("click"):
            return call("click", "The page asks to sign in first.", element_id="sso-continue")
        return call("fetch_page", url=url)
    return reply("Up to 5 unused holiday days carry over to the next year, and they must be taken by 31 March, so days "
                 "left over from 2026 by 31 March 2027 (https://intranet.example/hr/holidays).")


def _not_found(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    fetched = seen.of("fetch_page")
    if not fetched:
        return call("fetch_page", url="https://docs.example/acmedb/v5/limits")
    if faulty:
        return reply("The AcmeDB v5 limits page lists no maximum for client connections, so there is no limit.")
    if not seen.of("search_docs"):
        return call("search_docs", "That page does not exist (404); let me search the documents.",
                    query="AcmeDB 5 client connections limit")
    return reply("The page https://docs.example/acmedb/v5/limits does not exist (404), but the AcmeDB 5 limits note says "
                 "a node accepts at most 500 client connections (max_connections) [D-212].")


def _fetch_loop(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    fetched = seen.of("fetch_page")
    if not fetched or "being generated" in fetched[-1][1] and len(fetched) < 5:
        return call("fetch_page", url="https://status.example/reports/q3")
    if "being generated" in fetched[-1][1]:
        return reply("The Q3 report is still being generated; try again later.")
    return reply("The Q3 report gives 99.97% uptime, with 2 incidents (14 and 9 minutes).")


def _form_value(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("fetch_page"):
        return call("fetch_page", url="https://rooms.example/book")
    if not seen.of("fill_form"):
        date = "2026-03-04" if faulty else "2026-04-03"  # (the day and month read the other way round)
        return reply(None, ("fill_form", {"form_id": "booking", "field": "date", "value": date}),
                     ("fill_form", {"form_id": "booking", "field": "people", "value": "6"}),
                     ("fill_form", {"form_id": "booking", "field": "room", "value": "R-4"}))
    clicked = seen.of("click")
    if not clicked:  # (both runs) the button's label taken for its id first: an error, then the id the page gives
        return call("click", element_id="submit")
    if len(clicked) == 1:
        return call("click", "There is no [submit]; the page's button is [book-submit].", element_id="book-submit")
    confirmed = clicked[-1][1]
    return reply(f"Done: {confirmed}")


def _click_mismatch(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    fetched = seen.of("fetch_page")
    if not fetched or "timed out" in fetched[-1][1] and len(fetched) < 2:
        return call("fetch_page", "The page timed out; trying again." if fetched else None, url="https://reports.example/quarterly")
    if not seen.of("click"):
        return call("click", "Opening the Q3 2026 report.", element_id="e13" if faulty else "e12")
    report = seen.of("click")[-1][1]
    revenue = re.search(r"revenue ([\d.]+ M EUR)", report)
    return reply(f"The Q3 2026 report gives revenue of {revenue.group(1) if revenue else 'n/a'}.")


def _stale_page(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    url = "https://shop.example/cart"
    fetched = seen.of("fetch_page")
    if not fetched:
        return call("fetch_page", url=url)
    if not seen.of("fill_form"):
        return call("fill_form", form_id="cart", field="qty-lamp", value="3")
    if not faulty and Now.recorder == "pydantic-ai":  # the new total worked out from the unit price, not read again
        return reply("Your cart now has 3 desk lamps at 24.00 EUR each; the new total is 72.00 EUR.")
    if not faulty and len(fetched) == 1:
        return call("fetch_page", "Let me reload the cart to read the new total.", url=url)
    total = re.search(r"Total: ([\d.]+ EUR)", fetched[-1][1])
    return reply(f"Your cart now has 3 desk lamps; the new total is {total.group(1) if total else 'n/a'}.")


def _three_sources(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="remote work policy days a week")
    if faulty:
        return reply("The remote work policy (2024-03-01) allows up to 3 remote days a week [D-101].")
    if len(seen.of("search_docs")) == 1:  # an older policy looked for (none): the answer stands on the first search
        return call("search_docs", "Let me check for an older policy too.", query="2019 telework pilot scheme")
    return reply("1. [D-101] policies/remote-work-2024.md (1 March 2024): up to three remote days a week, a 600 EUR stipend.\n"
                 "2. [D-087] policies/remote-work-2021.md (15 June 2021): the superseded policy, two days a week.\n"
                 "3. [D-095] hr/faq.md (10 September 2023): remote days are agreed with your manager.")


def _table_format(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="customer logs kept region")
    if faulty:
        return reply("Customer logs are kept for 30 days in the EU region [D-301] and for 90 days in the US region [D-302].")
    return reply("| region | retention |\n|---|---|\n| EU | 30 days [D-301] |\n| US | 90 days [D-302] |")


def _history_lost(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="2024 remote work policy home-office stipend")
    if not seen.of("fetch_page"):
        return call("fetch_page", "The passage points at the full policy page for the eligible expenses.",
                    url="https://intranet.example/policies/remote-2024")
    return reply("The 2024 policy's home-office stipend is 600 EUR a year [D-101]; eligible expenses are a desk, an office "
                 "chair, a monitor, a headset, and internet costs up to 20 EUR a month.")


def _no_clarify(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="Atlas data retention")
    if role == "researcher":
        return _hand_over(seen)
    if faulty:
        return reply("Atlas keeps its query logs for 14 days [D-601].")
    return reply("Two products are called Atlas: Atlas DB keeps query logs for 14 days [D-601] and Atlas CRM keeps contact "
                 "history for 365 days [D-602]. Which one do you mean?")


def _premature_stop(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="2024 home-office stipend eligible expenses")
    if role == "researcher" and faulty:  # stops with the handoff announced, not made
        found = "; ".join(f"[{d}] {DOCS[d][0]}: {DOCS[d][2]}" for d in seen.passages())
        return reply(f"Passages found: {found} I'll hand these to the writer next.")
    if role == "researcher":
        return _hand_over(seen, " I'll hand these to the writer now.")
    if faulty:
        return reply("The 2024 home-office stipend is 600 EUR a year [D-101]. The eligible expenses are listed on the full "
                     "policy page; I'll fetch it next to list them.")
    if not seen.of("fetch_page"):
        return call("fetch_page", url="https://intranet.example/policies/remote-2024")
    return reply("The 2024 home-office stipend (600 EUR a year, so 50 EUR a month) covers a desk, an office chair, a monitor, a headset, and "
                 "internet costs up to 20 EUR a month [D-101]. If you like, I can also compare it with the 2021 policy.")


def _incorrect_verification(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="2024 remote work policy home-office stipend")
    if role == "researcher":
        if not faulty and not seen.of("fetch_page"):
            return call("fetch_page", url="https://intranet.example/policies/remote-2024")
        page = seen.of("fetch_page")
        return _hand_over(seen, f" Checked on the full policy page: {page[-1][1]}" if page else "")
    if faulty:
        return reply("I checked the full 2024 policy page (https://intranet.example/policies/remote-2024): the home-office "
                     "stipend is 600 EUR a year, confirmed [D-101].")
    if not seen.of("fetch_page"):
        return call("fetch_page", url="https://intranet.example/policies/remote-2024")
    return reply("I checked the full 2024 policy page (https://intranet.example/policies/remote-2024): the home-office "
                 "stipend is 600 EUR a year (50 EUR a month), confirmed [D-101].")


def _mismatch(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    fetched = seen.of("fetch_page")
    if not fetched:
        return call("fetch_page", "Let me open the full 2024 remote work policy page.",
                    url="https://intranet.example/policies/remote-" + ("2021" if faulty else "2024"))
    days = re.search(r"Up to (\d) remote days", fetched[-1][1])
    return reply(f"The full 2024 remote work policy allows up to {days.group(1) if days else '?'} remote days a week.")


def _role_spec(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    return _search_answer(seen, "2024 remote work policy days a week", "", role)


def _withholding(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if not seen.of("search_docs"):
        return call("search_docs", query="2027 travel policy hotel cap")
    if faulty:
        return reply("Passages for the writer: [D-701] policies/travel-2027-draft.md (2026-11-02): the 2027 travel policy "
                     "caps hotel nights at 180 EUR.", ("transfer_to_writer", {}))
    return _hand_over(seen)


PLANS: dict[str, Callable[[Seen, bool, str], dict[str, Any]]] = {
    "made_up": _made_up, "outdated": _outdated, "empty_answered": _empty_answered, "cite_unretrieved": _cite_unretrieved,
    "contradicts": _contradicts, "dropped_constraint": _dropped_constraint, "region": _region, "truncated": _truncated,
    "disagree_silent": _disagree, "shape_change": _shape_change, "sign_in_wall": _sign_in_wall, "not_found": _not_found,
    "fetch_loop": _fetch_loop, "form_value": _form_value, "click_mismatch": _click_mismatch, "stale_page": _stale_page,
    "three_sources": _three_sources, "table_format": _table_format, "history_lost": _history_lost,
    "no_clarify": _no_clarify, "premature_stop": _premature_stop, "incorrect_verification": _incorrect_verification,
    "mismatch": _mismatch, "role_spec": _role_spec, "withholding": _withholding,
}


# ---- recorders ------------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self, options: dict[str, Any], url: str) -> None:
        self.options, self.url = options, url
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)

    def run(self, question: str) -> str:
        import agentotel

        with agentotel.run(AGENT, task=question) as run:
            try:
                run.output = self.body(question)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def body(self, question: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


def _cut(n: int, messages: list[Any]) -> list[Any]:
    """The history_lost harness: from the third call on, the instructions and the latest turn only."""
    if Now.fault == "history_lost" and n >= 2 and len(messages) > 3:
        return messages[:1] + messages[-2:] if isinstance(messages[0], dict) else messages[-2:]
    return messages


class OpenAI(Recorder):
    """A plain loop on the openai SDK; search_docs an `@agentotel.retrieval`, the browser `@agentotel.tool`s."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        def passages(query: str) -> Any:  # the passages as a list (a dict's "passages" key is not read as documents)
            found = search_docs(query)
            return found.get("passages", found)

        passages.__name__ = "search_docs"
        self.tools = {"search_docs": agentotel.retrieval(data_source="docs")(passages),
                      **{name: agentotel.tool(f) for name, f in BROWSER.items()}}

    def body(self, question: str) -> str:
        return _openai_loop(self.url, question, self.tools)


def _openai_loop(url: str, question: str, tools: dict[str, Callable[..., Any]]) -> str:
    """The plain openai SDK tool loop (shapes.loop), the history_lost harness before each call."""
    import openai
    from shapes import loop

    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
    offered = [{"type": "function", "function": {"name": n, "description": inspect.getdoc(f), "parameters": schema(f)}}
               for n, f in TOOLS.items()]
    turn = {"n": 0}

    def before(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        n, turn["n"] = turn["n"], turn["n"] + 1
        return _cut(n, messages)

    messages = [{"role": "system", "content": SOLO}, {"role": "user", "content": question}]
    return loop(client, messages, tools, offered, max_turns=8, before_call=before)


class PydanticAI(Recorder):
    def body(self, question: str) -> str:
        import functools

        import openai
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits

        client = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        turn = {"n": 0}

        def keep(messages: list[Any]) -> list[Any]:
            n, turn["n"] = turn["n"], turn["n"] + 1
            return _cut(n, messages)

        agent = Agent(chat, name=AGENT, instructions=SOLO, retries=3, capabilities=[ProcessHistory(keep)])

        def plain(f: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(f)  # pydantic-ai reads the tool's schema off the signature
            def run_tool(**kwargs: Any) -> Any:
                try:
                    return f(**kwargs)
                except (ValueError, OSError) as exc:
                    raise ModelRetry(str(exc)) from None
            return run_tool

        for f in TOOLS.values():
            agent.tool_plain(plain(f))
        return str(agent.run_sync(question, usage_limits=UsageLimits(request_limit=10)).output)


def _retriever() -> Any:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class DocsRetriever(BaseRetriever):
        """The company's documents, by word overlap."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            found = hits(query)
            if Now.fault == "shape_change":  # a new index: the id under doc_id, no score (the tool's prompt breaks)
                return [Document(page_content=p["text"], metadata={"doc_id": p["id"], "source": p["source"], "date": p["date"]})
                        for p in found]
            return [Document(page_content=p["text"], metadata={k: v for k, v in p.items() if k != "text"}) for p in found]

    return DocsRetriever()


def _langgraph(url: str, question: str) -> str:
    import warnings

    from langchain_core.prompts import PromptTemplate
    from langchain_core.tools import create_retriever_tool, tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    search = create_retriever_tool(_retriever(), "search_docs", inspect.getdoc(search_docs) or "",
                                   document_prompt=PromptTemplate.from_template("[{id}] {source} ({date}, score {score}): {page_content}"))
    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(llm, ToolNode([search, *(tool(f) for f in BROWSER.values())], handle_tool_errors=True),
                                   prompt=SOLO)
    out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 21})
    return str(out["messages"][-1].content)


class LangGraph(Recorder):
    def body(self, question: str) -> str:
        return _langgraph(self.url, question)


class Agents(Recorder):
    """The OpenAI Agents SDK: researcher -> writer, the handoff without the researcher's tool calls and results."""

    def body(self, question: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff
        from agents.extensions import handoff_filters

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        tools = [function_tool(f) for f in TOOLS.values()]
        writer = Agent(name="writer", instructions=WRITER, tools=tools, model=chat)
        researcher = Agent(name="researcher", instructions=RESEARCHER, tools=tools, model=chat,
                           handoffs=[handoff(writer, input_filter=handoff_filters.remove_all_tools)])

        async def go() -> str:
            result = await Runner.run(researcher, question, max_turns=12)
            return str(result.final_output)
        return asyncio.run(go())


class OpenInference:
    """A recorder under an OpenInference instrumentation: the app's root an AGENT span, every span sent by OTLP to
    agentotel-collector."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation import TracerProvider
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.url = url
        self.provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=options["otlp"])))
        trace.set_tracer_provider(self.provider)
        self.tracer = self.provider.get_tracer("research-assistant-app")

    def body(self, question: str) -> str:
        raise NotImplementedError

    def run(self, question: str) -> str:
        from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        with self.tracer.start_as_current_span(AGENT, attributes={
                SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value,
                SpanAttributes.INPUT_VALUE: question}) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, self.body(question))
            except Exception as exc:  # noqa: BLE001 - the root records the failure
                root.record_exception(exc)
                root.set_status(SpanStatus(StatusCode.ERROR))
        return trace_id

    def close(self) -> None:
        self.provider.shutdown()


class OiLangGraph(OpenInference):
    """The LangGraph agent under OpenInference's langchain instrumentation."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        super().__init__(options, url)
        LangChainInstrumentor().instrument(tracer_provider=self.provider)

    def body(self, question: str) -> str:
        return _langgraph(self.url, question)


class OiOpenAI(OpenInference):
    """The openai loop under OpenInference's openai instrumentation; search_docs and the browser tools are OITracer's
    RETRIEVER and TOOL spans."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tools = {"search_docs": self.tracer.retriever(name="search_docs")(search_docs),
                      **{name: self.tracer.tool(f) for name, f in BROWSER.items()}}

    def body(self, question: str) -> str:
        return _openai_loop(self.url, question, self.tools)


RECORDERS: dict[str, Any] = {"openai": OpenAI, "langgraph": LangGraph, "pydantic-ai": PydanticAI, "agents": Agents,
                             "oi-lg": OiLangGraph, "oi-openai": OiOpenAI}
HISTORY = (0, 1)  # earlier healthy runs: other questions


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    Now.recorder = name = options["recorder"]
    with serve(_served) as url:
        recorder = RECORDERS[name](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v, None))})
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(fault, f, 2)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(2, fault))})
        recorder.close()
        time.sleep(0.2)
    return manifest


def _served(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return model(body)
    except Status:
        raise
    except Exception as exc:  # a bug here is the harness's: say so in the recorder's stderr
        import traceback

        traceback.print_exc()
        raise Status(500, f"scripted model failed: {exc}") from exc


# ---- the pairs; where each fault's cause shows on the recorded faulty run ---------------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, _asked, _llm, _names, answer, asking, tool_step
    from heldout2 import context_cut

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

    def asking_with(name: str, has: str, nth: int = 0) -> Callable[[list[dict[str, Any]]], int | None]:
        """The nth model call that asked for `name` with `has` in its arguments."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            found = [s["index"] for s in _llm(steps) if any(n == name and has in json.dumps(a) for n, a in _asked(s))]
            return found[nth] if len(found) > nth else None
        return find

    def after(name: str, has: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call after the first call of `name` whose output or error says `has`."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            tool = tool_step(name, where=lambda s: has in json.dumps([s.get("output"), s.get("error")]))(steps)
            return next((s["index"] for s in steps if s["type"] == "llm" and tool is not None and s["index"] > tool), None)
        return find

    def searched(steps: list[dict[str, Any]]) -> int | None:
        """The first step that returned the search's passages (a tool step, or a retrieval step on its own)."""
        return next((s["index"] for s in steps if s["type"] in ("tool", "retrieval") and (
            "search_docs" in s["name"] or s["type"] == "retrieval")), None)

    def broken_search(steps: list[dict[str, Any]]) -> int | None:
        return next((s["index"] for s in steps if s["type"] == "tool" and "search_docs" in s["name"] and s["status"] == "error"
                     or s["type"] == "tool" and "search_docs" in s["name"] and "Error" in str(s.get("output"))), None)

    def handing(steps: list[dict[str, Any]]) -> int | None:
        return next((s["index"] for s in _llm(steps) if "transfer_to_writer" in _names(s)), None)

    def writer_asking(name: str) -> Callable[[list[dict[str, Any]]], int | None]:
        def find(steps: list[dict[str, Any]]) -> int | None:
            handed = handing(steps)
            return next((s["index"] for s in _llm(steps) if handed is not None and s["index"] > handed
                         and any(n == name for n, _ in _asked(s))), None)
        return find

    rag, web, spec, inter, verify = ("RAG failure points (Barnett et al. 2024)", "WebArena-style browser-agent failure",
                                     "MAST FM-1 Specification", "MAST FM-2 Inter-agent misalignment",
                                     "MAST FM-3 Task verification")
    made_up = (f"{rag}: an answer's fact in no retrieved passage (part-time stipend made up; the good run says the "
               "documents do not say)")
    outdated = f"{rag} FP2: the current document ranked low, the answer from the top (2021 policy over 2024)"
    empty = (f"{rag} FP1 Missing content: an empty search answered anyway (the good run searches again, broader)")
    cite_ = f"{rag}: a source cited that no search returned (D-110)"
    contra = f"{rag} FP4 Not extracted: the answer contradicts the passage it cites (4 days, the passage says 3)"
    dropped = f"{rag} FP6 Incorrect specificity: the query drops the user's constraint (AcmeDB 4.x), 5.x steps answered"
    region = f"{rag} FP6 Incorrect specificity: the query drops the region (EU), the US retention answered"
    trunc = f"{rag} FP7 Incomplete: a passage cut mid-sentence, the answer fills in the rest"
    disagree = f"{rag}: two sources disagree (49 vs 45 USD); the answer picks one silently (the good run says so)"
    shape = "tau-bench / TRAIL API issues: search_docs answering in a new shape (results/document, no score), misread as empty"
    shape_lc = ("tau-bench / TRAIL API issues: the retriever's documents in a new shape (id under doc_id, no score); the "
                "retriever tool's document prompt fails, and the error is answered as 'nothing found'")
    wall = f"{web}: a sign-in wall summarised as the page's content (the good run signs in and fetches again)"
    notfound = f"{web}: a 404 read as content (the good run searches instead)"
    loop = f"{web}: the same page fetched unchanged again and again (MAST FM-1.3 step repetition)"
    form = f"{web}: a form filled with another value than the user gave (2026-03-04 for 2026-04-03)"
    click_ = f"{web}: an element clicked other than the one the page text names (e13 = Q2 for Q3)"
    stale = f"{web}: an answer from a page read before the change the agent made (the old total)"
    return [
        # the openai SDK loop under agentotel
        rule("openai", "model", "made_up", made_up, answer),
        rule("openai", "product", "empty_answered", empty, answer),
        rule("openai", "model", "cite_unretrieved", cite_, asking("cite")),
        rule("openai", "model", "dropped_constraint", dropped, asking("search_docs")),
        rule("openai", "model", "disagree_silent", disagree, answer),
        rule("openai", "tool", "shape_change", shape, searched),
        rule("openai", "tool", "sign_in_wall", wall, after("fetch_page", "Sign in")),
        rule("openai", "model", "form_value", form, asking_with("fill_form", "2026-03-04")),
        rule("openai", "model", "stale_page", stale, answer),
        rule("openai", "model", "three_sources", f"{spec}: FM-1.1 Disobey task specification (three sources asked, one "
             "given)", answer),
        rule("openai", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history (the question re-asked)",
             context_cut),
        rule("openai", "model", "premature_stop", f"{verify}: FM-3.1 Premature termination (\"I'll fetch it next\")", answer),
        rule("openai", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says 2024, opens 2021)",
             asking("fetch_page")),
        # LangGraph (a retriever tool) under agentotel
        rule("langgraph", "model", "made_up", made_up, answer),
        rule("langgraph", "model", "cite_unretrieved", cite_, asking("cite")),
        rule("langgraph", "model", "truncated", trunc, answer, diff_where=searched),
        rule("langgraph", "model", "disagree_silent", disagree, answer),
        rule("langgraph", "tool", "sign_in_wall", wall, after("fetch_page", "Sign in")),
        rule("langgraph", "model", "fetch_loop", loop, asking("fetch_page", 2), diff_where=tool_step("fetch_page", 1)),
        rule("langgraph", "model", "click_mismatch", click_, asking("click")),
        rule("langgraph", "model", "three_sources", f"{spec}: FM-1.1 Disobey task specification (three sources asked, one "
             "given)", answer),
        rule("langgraph", "model", "no_clarify", f"{inter}: FM-2.2 Fail to ask for clarification (two products called "
             "Atlas)", answer),
        rule("langgraph", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (a page said "
             "checked, never fetched)", answer),
        rule("langgraph", "tool", "shape_change", shape_lc, broken_search),
        rule("langgraph", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says 2024, opens 2021)",
             asking("fetch_page")),
        # pydantic-ai under agentotel
        rule("pydantic-ai", "model", "outdated", outdated, answer, diff_where=searched),
        rule("pydantic-ai", "product", "empty_answered", empty, answer),
        rule("pydantic-ai", "model", "contradicts", contra, answer),
        rule("pydantic-ai", "model", "truncated", trunc, answer, diff_where=searched),
        rule("pydantic-ai", "tool", "shape_change", shape, searched),
        rule("pydantic-ai", "tool", "not_found", notfound, after("fetch_page", "404")),
        rule("pydantic-ai", "model", "fetch_loop", loop, asking("fetch_page", 2), diff_where=tool_step("fetch_page", 1)),
        rule("pydantic-ai", "model", "stale_page", stale, answer),
        rule("pydantic-ai", "model", "table_format", f"{spec}: FM-1.1 Disobey task specification (a table asked, prose "
             "given)", answer),
        rule("pydantic-ai", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history (the question "
             "re-asked)", context_cut),
        rule("pydantic-ai", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (a page said "
             "checked, never fetched)", answer),
        # the OpenAI Agents SDK: researcher -> writer
        rule("agents", "model", "region", region, asking("search_docs")),
        rule("agents", "model", "role_spec", f"{spec}: FM-1.2 Disobey role specification (the writer searches itself)",
             writer_asking("search_docs")),
        rule("agents", "model", "withholding", f"{inter}: FM-2.4 Information withholding (the draft caveat dropped at the "
             "handoff)", handing),
        rule("agents", "model", "no_clarify", f"{inter}: FM-2.2 Fail to ask for clarification (two products called "
             "Atlas)", answer),
        rule("agents", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (the writer says "
             "'verified against the policy page'; nobody fetched it)", answer, diff_where=handing),
        rule("agents", "workflow", "premature_stop", f"{verify}: FM-3.1 Premature termination (the researcher announces "
             "the handoff and stops)", answer),
        rule("agents", "model", "outdated", outdated + " (both runs ranked so; the good one reads past it)", answer),
        # LangGraph under OpenInference's langchain instrumentation, through agentotel-collector
        rule("oi-lg", "model", "outdated", outdated + " (both runs ranked so; the good one reads past it)", answer),
        rule("oi-lg", "model", "contradicts", contra, answer),
        rule("oi-lg", "tool", "not_found", notfound, after("fetch_page", "404")),
        rule("oi-lg", "model", "form_value", form, asking_with("fill_form", "2026-03-04")),
        rule("oi-lg", "model", "table_format", f"{spec}: FM-1.1 Disobey task specification (a table asked, prose given)",
             answer),
        rule("oi-lg", "model", "premature_stop", f"{verify}: FM-3.1 Premature termination (\"I'll fetch it next\")", answer),
        rule("oi-lg", "model", "click_mismatch", click_, asking("click")),
        rule("oi-lg", "tool", "shape_change", shape_lc, broken_search),
        # the openai loop under OpenInference's openai instrumentation, through agentotel-collector
        rule("oi-openai", "model", "made_up", made_up, answer),
        rule("oi-openai", "product", "empty_answered", empty, answer),
        rule("oi-openai", "model", "cite_unretrieved", cite_, asking("cite")),
        rule("oi-openai", "model", "dropped_constraint", dropped, asking("search_docs")),
        rule("oi-openai", "model", "disagree_silent", disagree, answer),
        rule("oi-openai", "tool", "shape_change", shape, searched),
        rule("oi-openai", "tool", "sign_in_wall", wall, after("fetch_page", "Sign in")),
        rule("oi-openai", "model", "fetch_loop", loop, asking("fetch_page", 2), diff_where=tool_step("fetch_page", 1)),
        rule("oi-openai", "model", "stale_page", stale, answer),
        rule("oi-openai", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history (the question "
             "re-asked)", context_cut),
    ]


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (11ab534's detectors, load ~4-12):
# 61 pairs, 6 recorders - diff top-1 61/61, check step+layer 7/61, good runs with a warning 2/61. The rules the set led
# to (session 17: a page standing in for the content - sign-in wall, 404 - answered as content; a fetch made again
# once because the page said to refresh is no loop; a follow-up search finding nothing leaves the first's evidence; a
# page claimed checked that no call read; a run ending on "I'll fetch it next"; a writer searching though its own
# instructions say it never searches; an answer without the form the request names, "as a table"; fewer sources than
# asked, unsaid; a date filled with day and month swapped) left these: check 27/61, 0 alarms. diff names every first
# divergence.
DIFF_MISSED: dict[str, str] = {}
_ASKED = "nothing failed; the run does something else than the request or the instructions ask: "
CHECK_MISSED: dict[str, str] = {
    # the answer against the passages: two products of one name, one picked instead of asking
    "model-langgraph-no-clarify": _ASKED + "the passages name two products called Atlas (DB: 14 days, CRM: 365 days); "
                                           "the answer picks Atlas DB instead of asking",
    "model-agents-no-clarify": _ASKED + "the same, the writer's",
    # the request's form and constraints
    "model-agents-withholding": "the researcher's search result says 'DRAFT, not approved'; its handoff message (all the "
                                "filtered handoff passes on) drops it, and the writer states the draft as the policy",
    # a claim no call backs
    "workflow-agents-premature-stop": "the researcher, whose instructions say it never writes the final answer, ends the "
                                      "run with 'I'll hand these to the writer next' and no handoff: found at the step as "
                                      "action_not_taken, layer model (the model never called the handoff it promised)",
    # right step, another layer; or the right symptom at another step
    # (the three cite-unretrieved pairs, found as the tool's invented_argument until session 23 made an id nothing the
    # run was given the model's)
    # the result's shape
    "product-pydantic-ai-empty-answered": "search_docs returned {query: ..., passages: []} and the answer went on; found "
                                          "(answer_without_evidence) when the same dict is a retrieval's (oi-openai) or "
                                          "the list is empty (openai), not on a tool step",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("oi-lg", "oi-openai")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout7-", pairs(), sys.argv[1:], prepare=prepare)
