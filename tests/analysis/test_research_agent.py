"""A research agent's faults (heldout7's blind set): a sign-in wall or a 404 page fetched as an ok result and
answered as content, a page fetched again and again after it said to refresh once, and - kept quiet - a follow-up
search that found nothing after one that did; each beside its near twins, on hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool

ANY = {"type": "object"}

OFFERED = definitions_attr(("search_docs", ANY), ("fetch_page", ANY), ("transfer_to_writer", ANY))
WALL = ("Acme SSO - Sign in to continue\n[sso-continue] Continue with single sign-on\nUsername: ____\n"
        "Forgot your password? Contact the IT desk.")
MISSING = "404 Not Found\nThe page acmedb/v5/limits does not exist. Docs home | Guides | API reference"
URL = {"url": "https://intranet.example/hr/holidays"}


def _run(*turns, answer: str, ask: str = "What does the holidays page say about carrying over unused days?",
         system: str | None = None, offered: bool = False):
    """One model call per turn: (tool, arguments, result[, said]) asked for and run, then `answer` (after `system`'s
    instructions, when given; each call offered search_docs, fetch_page and a handoff to the writer with `offered`)."""
    steps, shown = [], [*([text_message("system", system)] if system else []), text_message("user", ask)]
    for turn in turns:
        name, arguments, result = turn[:3]
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, arguments, call_id)], text=turn[3] if len(turn) > 3 else None, messages=list(shown)),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=list(shown)))
    return record(*steps, task=ask, attributes={s["span_id"]: OFFERED for s in steps if s["type"] == "llm" and offered})


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


@pytest.mark.parametrize("page,answer", [
    (WALL, "The holidays page asks you to sign in with Acme SSO and lists no carry-over rule, so days do not carry over."),
    (MISSING, "The AcmeDB v5 limits page lists no maximum for client connections, so there is no limit."),
    ("403 Forbidden\nYou do not have access to this resource.", "The page sets no carry-over rule."),
])
def test_a_page_standing_in_for_the_content_answered_as_content_is_a_tool_error_ignored(page, answer):
    found, shown = _found(_run(("fetch_page", URL, page), answer=answer), "tool_error_ignored")
    assert found == [(3, "tool")], shown


@pytest.mark.parametrize("turns,answer", [
    # said so
    ([("fetch_page", URL, MISSING)], "That page does not exist (404), so I cannot say what it holds."),
    ([("fetch_page", URL, WALL)], "I could not read the holidays page: it is behind the Acme SSO sign-in."),
    # signed in, fetched again
    ([("fetch_page", URL, WALL), ("fetch_page", URL, "Holidays\nUp to 5 unused days carry over to March.")],
     "Up to 5 unused days carry over to March."),
    # a real page whose text (not its title) speaks of signing in, or a long article about 404s
    ([("fetch_page", URL, "Holidays\nUp to 5 days carry over. Sign in to continue to the booking tool.")], "Up to 5 days carry over."),
    ([("fetch_page", URL, "Fixing 404 Not Found errors\n" + "A long guide. " * 100)], "The guide explains redirects."),
])
def test_a_wall_said_so_passed_or_a_real_page_is_no_ignored_error(turns, answer):
    assert _found(_run(*turns, answer=answer), "tool_error_ignored")[0] == []


BUSY = "Q3 uptime report\nThe report is being generated. Refresh the page in a moment."
READY = "Q3 uptime report: 99.97% uptime, 2 incidents."
Q3 = {"url": "https://status.example/reports/q3"}


def test_a_page_fetched_again_once_as_it_said_is_no_loop_and_the_fetch_after_that_is():
    again = _run(("fetch_page", Q3, BUSY), ("fetch_page", Q3, BUSY), ("fetch_page", Q3, BUSY), ("fetch_page", Q3, BUSY),
                 answer="The Q3 report is still being generated; try again later.")
    assert _found(again, "repeated_tool_call")[0] == [(5, "model")], _found(again, "repeated_tool_call")[1]
    once = _run(("fetch_page", Q3, BUSY), ("fetch_page", Q3, READY), answer="99.97% uptime, 2 incidents.")
    assert _found(once, "repeated_tool_call")[0] == []
    # a result that said nothing of trying again: the first repeat is the loop
    plain = _run(("fetch_page", Q3, "Q3 uptime report (draft)"), ("fetch_page", Q3, "Q3 uptime report (draft)"),
                 ("fetch_page", Q3, "Q3 uptime report (draft)"), answer="The report is a draft.")
    assert _found(plain, "repeated_tool_call")[0] == [(3, "model")], _found(plain, "repeated_tool_call")[1]


PASSAGES = [{"id": "D-101", "score": 0.95, "content": "Remote work policy (2024): up to 3 remote days a week, a 600 EUR stipend."}]


def test_a_follow_up_search_finding_nothing_leaves_an_answer_from_the_first_its_evidence():
    run = _run(("search_docs", {"query": "remote work policy"}, PASSAGES), ("search_docs", {"query": "2019 telework pilot"}, ""),
               answer="[D-101] Up to 3 remote days a week and a 600 EUR stipend.")
    assert _found(run, "answer_without_evidence")[0] == []
    # the only search found nothing: the answer has no evidence
    alone = _run(("search_docs", {"query": "2019 telework pilot"}, ""), answer="The 2019 pilot allowed 2 remote days a week.")
    assert _found(alone, "answer_without_evidence")[0] == [(3, "product")], _found(alone, "answer_without_evidence")[1]


POLICY = "https://intranet.example/policies/remote-2024"


@pytest.mark.parametrize("answer", [
    f"I checked the full 2024 policy page ({POLICY}): the stipend is 600 EUR a year [D-101].",
    "Verified against the full 2024 policy page: the stipend is 600 EUR a year [D-101].",
])
def test_an_answer_saying_it_checked_a_page_no_call_read_is_an_action_not_taken(answer):
    run = _run(("search_docs", {"query": "stipend"}, PASSAGES), answer=answer, offered=True)
    found, shown = _found(run, "action_not_taken")
    assert found == [(3, "model")], shown


@pytest.mark.parametrize("turns,answer", [
    ([("fetch_page", {"url": POLICY}, "Remote work policy 2024: stipend 600 EUR.")],
     f"I checked the full 2024 policy page ({POLICY}): the stipend is 600 EUR a year."),  # it was read
    ([], "I could not check the full policy page; the passage says 600 EUR a year [D-101]."),  # said it was not
    ([], "The passage [D-101] says 600 EUR a year; the full policy page lists the eligible expenses."),  # no claim of reading
])
def test_a_page_read_or_no_claim_of_reading_it_is_no_action_not_taken(turns, answer):
    run = _run(("search_docs", {"query": "stipend"}, PASSAGES), *turns, answer=answer, offered=True)
    assert _found(run, "action_not_taken")[0] == []


@pytest.mark.parametrize("answer,layer", [
    ("The passage says the expenses are on the full policy page. I'll fetch it next to list them.", "model"),
    # a handoff promised and never made: the run ended at an agent meant to pass control on (the orchestration's)
    ("Passages found: [D-101]. I'll hand these to the writer next.", "workflow"),
])
def test_a_run_ending_on_a_promise_of_an_offered_tool_is_an_action_not_taken(answer, layer):
    run = _run(("search_docs", {"query": "eligible expenses"}, PASSAGES), answer=answer, offered=True)
    found, shown = _found(run, "action_not_taken")
    assert found == [(3, layer)], shown


@pytest.mark.parametrize("answer", [
    "The stipend is 600 EUR a year [D-101]. If you like, I can also fetch the full page.",  # an offer
    "The stipend is 600 EUR a year [D-101]. I'll fetch the full page when it is back online.",  # under a condition
    "Passages found: [D-101]. I'll hand these to the reviewer next.",  # no such handoff offered
])
def test_an_offer_a_conditional_plan_or_another_agent_is_no_broken_promise(answer):
    run = _run(("search_docs", {"query": "eligible expenses"}, PASSAGES), answer=answer, offered=True)
    assert _found(run, "action_not_taken")[0] == []


WRITER = "You are the writer. Write the answer from the passages you are handed. You never search or browse yourself."


def test_a_writer_searching_though_its_instructions_say_it_never_searches_is_role_overstepped():
    run = _run(("search_docs", {"query": "remote days"}, PASSAGES), answer="Up to 3 days a week [D-101].", system=WRITER)
    assert _found(run, "role_overstepped")[0] == [(1, "model")], _found(run, "role_overstepped")[1]
    # a rule on another object: "never search the web" says nothing of the documents' search
    other = _run(("search_docs", {"query": "remote days"}, PASSAGES), answer="Up to 3 days a week [D-101].",
                 system="You are the writer. Never search the web; use the document search.")
    assert _found(other, "role_overstepped")[0] == []


LOGS = [{"id": "D-301", "score": 0.95, "text": "EU region: customer logs are kept for 30 days."},
        {"id": "D-302", "score": 0.95, "text": "US region: customer logs are kept for 90 days."}]
TABLE = "As a table with the columns region and retention: how long are customer logs kept in the EU and US?"


@pytest.mark.parametrize("ask,answer,found", [
    (TABLE, "Customer logs are kept for 30 days in the EU [D-301] and 90 days in the US [D-302].", [(3, "model")]),
    (TABLE, "| region | retention |\n|---|---|\n| EU | 30 days [D-301] |\n| US | 90 days [D-302] |", []),
    ("As a bulleted list: how long are logs kept?", "EU: 30 days [D-301]; US: 90 days [D-302].", [(3, "model")]),
    ("As a bulleted list: how long are logs kept?", "- EU: 30 days [D-301]\n- US: 90 days [D-302]", []),
    ("How long are logs kept in the orders table's region?", "30 days in the EU [D-301].", []),  # a table named, no form
])
def test_an_answer_without_the_form_the_request_names_is_answer_format_violated(ask, answer, found):
    run = _run(("search_docs", {"query": "customer logs kept"}, LOGS), answer=answer, ask=ask)
    assert _found(run, "answer_format_violated")[0] == found, _found(run, "answer_format_violated")[1]


THREE = "Give me three sources on log retention, each with what it says."


@pytest.mark.parametrize("answer,found", [
    ("Logs are kept 30 days in the EU [D-301].", [(3, "model")]),  # one of three
    ("EU: 30 days [D-301]. US: 90 days [D-302]. See also https://legal.example/retention.", []),  # three
    ("I found only two: EU 30 days [D-301], US 90 days [D-302].", []),  # short, and says so
])
def test_fewer_sources_than_the_request_asks_for_unsaid_is_the_task_ignored(answer, found):
    run = _run(("search_docs", {"query": "log retention"}, LOGS), answer=answer, ask=THREE)
    assert _found(run, "task_ignored")[0] == found, _found(run, "task_ignored")[1]


@pytest.mark.parametrize("ask,value,found", [
    ("Book room R-4 for 6 people on 3 April 2026.", "2026-03-04", [(1, "model")]),  # day and month swapped
    ("Book room R-4 for 6 people on 2026-04-03.", "2026-03-04", [(1, "model")]),
    ("Book room R-4 for 6 people on 3 April 2026.", "2026-04-03", []),  # the same date, written otherwise
    ("Book room R-4 on 3 April 2026, or else on 4 March 2026.", "2026-03-04", []),  # the other date asked for too
])
def test_a_date_passed_with_day_and_month_swapped_is_the_task_ignored(ask, value, found):
    run = _run(("fill_form", {"form_id": "booking", "field": "date", "value": value}, f"Field date set to '{value}'."),
               answer="Booked.", ask=ask)
    assert _found(run, "task_ignored")[0] == found, _found(run, "task_ignored")[1]


# ---- answers against the passages they stand on -----------------------------------------------------------

def _docs(*passages):
    """A search result: (id, date, text) passages as a retriever returns them."""
    return {"query": "q", "passages": [{"id": i, "source": f"docs/{i}.md", "date": d, "score": 0.9, "text": t}
                                       for i, d, t in passages]}


REMOTE_2024 = ("D-101", "2024-03-01", "Remote work policy (2024). Employees may work remotely up to 3 days a week. "
               "The home-office stipend is 600 EUR a year.")
REMOTE_2021 = ("D-087", "2021-06-15", "Remote work policy (2021). Employees may work remotely up to 2 days a week. "
               "The home-office stipend is 400 EUR a year.")
PRICE_FAQ = ("D-402", "", "Sales FAQ: the Pro plan price is 45 USD per seat per month.")
PRICE_PAGE = ("D-401", "", "Pricing: the Pro plan costs 49 USD per seat per month.")
LOGS_EU = ("D-301", "2024-07-01", "EU region: customer logs are kept for 30 days, then deleted.")
LOGS_US = ("D-302", "2024-07-01", "US region: customer logs are kept for 90 days, then deleted.")
SEARCH = {"query": "remote work days a week"}


@pytest.mark.parametrize("passages,answer,kind", [
    # the cited passage says 3 days; the answer says 4
    ([REMOTE_2024], "You may work remotely up to 4 days a week [D-101].", "source_contradicted"),
    # the older policy's figure over the newer one's, both found, nothing said of it
    ([REMOTE_2021, REMOTE_2024], "You may work remotely up to 2 days a week [D-087].", "sources_disagree"),
    # two undated sources about the same plan, one figure picked silently
    ([PRICE_FAQ, PRICE_PAGE], "The Pro plan costs 45 USD per seat per month [D-402].", "sources_disagree"),
])
def test_an_answer_against_its_passages_is_found_at_the_answer(passages, answer, kind):
    found, shown = _found(_run(("search_docs", SEARCH, _docs(*passages)), answer=answer), kind)
    assert found == [(3, "model")], shown


@pytest.mark.parametrize("passages,answer", [
    ([REMOTE_2024], "You may work remotely up to 3 days a week [D-101]."),
    # the newer passage over the older one, silently: right
    ([REMOTE_2021, REMOTE_2024], "You may work remotely up to 3 days a week [D-101]."),
    # the disagreement said
    ([PRICE_FAQ, PRICE_PAGE], "The sources disagree: 49 USD per seat per month [D-401], the sales FAQ says 45 USD [D-402]."),
    ([REMOTE_2021, REMOTE_2024], "Up to 3 days a week [D-101]; the 2021 policy's 2 days [D-087] is superseded."),
    # which one it speaks of, said
    ([REMOTE_2024, REMOTE_2021], "The 2021 policy allowed up to 2 days a week [D-087]."),
    # another subject: another region
    ([LOGS_EU, LOGS_US], "Customer logs in the EU region are kept for 30 days [D-301]."),
    # a figure worked out: another unit
    ([REMOTE_2024], "The stipend is 600 EUR a year [D-101], so 50 EUR a month."),
    # no citations: not judged here
    ([PRICE_FAQ, PRICE_PAGE], "The Pro plan costs 45 USD per seat per month."),
])
def test_an_answer_true_to_its_passages_is_no_finding(passages, answer):
    found = detect(_run(("search_docs", SEARCH, _docs(*passages)), answer=answer))
    assert not [f for f in found if f.kind in ("source_contradicted", "sources_disagree")], format_findings(found)


def test_a_search_that_drops_the_requests_qualifier_is_found_at_the_call_that_asked_for_it():
    ask = "How long are customer logs kept in the EU region?"
    dropped = _run(("search_docs", {"query": "customer log retention"}, _docs(LOGS_US)),
                   answer="Customer logs are kept for 90 days, then deleted [D-302].", ask=ask)
    found, shown = _found(dropped, "task_ignored")
    assert found == [(1, "model")], shown
    kept = _run(("search_docs", {"query": "customer logs EU region"}, _docs(LOGS_EU)),
                answer="Customer logs are kept for 30 days, then deleted [D-301].", ask=ask)
    assert _found(kept, "task_ignored")[0] == []
    # the answer says it is about the other one, or the request names no region
    said = _run(("search_docs", {"query": "customer log retention"}, _docs(LOGS_US)),
                answer="I only found the US rule: 90 days [D-302]; nothing on the EU region.", ask=ask)
    assert _found(said, "task_ignored")[0] == []
    plain = _run(("search_docs", {"query": "customer log retention"}, _docs(LOGS_US)),
                 answer="Customer logs are kept for 90 days [D-302].", ask="How long are customer logs kept?")
    assert _found(plain, "task_ignored")[0] == []


CART = {"url": "https://shop.example/cart"}
CART_PAGE = "Your cart. Desk lamp x 2 (24.00 EUR each) [qty-lamp]. Total: 48.00 EUR. [checkout] Checkout."
SET_QTY = ("fill_form", {"form_id": "cart", "field": "qty-lamp", "value": "3"}, "Cart updated: Desk lamp quantity set to 3.")


def test_a_value_read_before_the_run_changed_its_page_is_a_stale_value():
    stale = _run(("fetch_page", CART, CART_PAGE), SET_QTY, answer="Your cart now has 3 desk lamps; the new total is 48.00 EUR.",
                 ask="Set the desk lamps in my cart to 3 and tell me the new total.")
    found, shown = _found(stale, "stale_value")
    assert found == [(5, "model")], shown
    for turns, answer in [
        ([("fetch_page", CART, CART_PAGE), SET_QTY], "The new total is 72.00 EUR (3 x 24.00 EUR)."),  # worked out
        # a rate the change left as it was
        ([("fetch_page", CART, CART_PAGE), SET_QTY], "Your cart now has 3 desk lamps at 24.00 EUR each; the new total is 72.00 EUR."),
        ([("fetch_page", CART, CART_PAGE), SET_QTY,  # read again
          ("fetch_page", CART, CART_PAGE.replace("x 2", "x 3").replace("48.00", "72.00"))], "The new total is 72.00 EUR."),
        ([("fetch_page", CART, CART_PAGE), SET_QTY], "The total was 48.00 EUR before the change."),  # said as before
        # a call that changed something else (a citation added) leaves the page as read
        ([("fetch_page", CART, CART_PAGE), ("cite", {"source_id": "D-1"}, "Citation [D-1] added.")], "The total is 48.00 EUR."),
    ]:
        assert _found(_run(*turns, answer=answer), "stale_value")[0] == [], answer


REPORTS = {"url": "https://reports.example/quarterly"}
REPORTS_PAGE = "Quarterly reports. [e12] Q3 2026 report (PDF)  [e13] Q2 2026 report (PDF)  [e14] Archive"


@pytest.mark.parametrize("said,call", [
    ("Opening the Q3 2026 report.", ("click", {"element_id": "e13"}, "Q2 2026 report: revenue 3.9 M EUR.")),
    ("Let me open the full 2024 remote work policy page.",
     ("fetch_page", {"url": "https://intranet.example/policies/remote-2021"}, "Remote work policy 2021. Up to 2 days.")),
])
def test_a_call_naming_a_sibling_of_what_the_model_said_is_a_wrong_target(said, call):
    run = _run(("fetch_page", REPORTS, REPORTS_PAGE), (*call, said), answer="Done.")
    found, shown = _found(run, "wrong_target")
    assert found == [(3, "model")], shown


@pytest.mark.parametrize("said,call", [
    ("Opening the Q3 2026 report.", ("click", {"element_id": "e12"}, "Q3 2026 report: revenue 4.1 M EUR.")),
    ("The Q3 report is not out yet; opening the Q2 2026 one.", ("click", {"element_id": "e13"}, "Q2 2026 report.")),
    ("Comparing Q3 with Q2: opening Q2 first.", ("click", {"element_id": "e13"}, "Q2 2026 report.")),
    ("Opening the archive.", ("click", {"element_id": "e14"}, "Archive of reports.")),
])
def test_a_call_on_what_the_model_said_is_no_wrong_target(said, call):
    run = _run(("fetch_page", REPORTS, REPORTS_PAGE), (*call, said), answer="Done.")
    assert _found(run, "wrong_target")[0] == []


def test_a_retrievals_documents_that_changed_shape_since_earlier_runs_are_a_tool_output_drift(tmp_path):
    """Read back from a real store: the shape a retrieval's documents had in earlier runs of the agent is learned
    like a tool's (history_payloads.sql), so a retriever whose documents moved under another key shows."""
    import agentotel
    from agentotel.analysis.detectors import findings

    shape = {"now": "list"}

    @agentotel.retrieval(data_source="policies")
    def search_docs(query):
        passages = [{"id": "D-101", "score": 0.9, "text": "Up to 3 remote days a week."}]
        return passages if shape["now"] == "list" else {"query": query, "results": [{"document": dict(passages[0], score=None)}]}

    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    try:
        ids = {}
        for name in ("a", "b", "c", "same", "moved"):
            shape["now"] = "moved" if name == "moved" else "list"
            with agentotel.run("policy-desk", task="How many remote days?") as run:
                search_docs("remote days")
            ids[name] = run.id
        agentotel.flush()
        with agentotel.open(directory) as traces:
            assert [f.kind for f in findings(traces, ids["same"])] == []
            drift = [f for f in findings(traces, ids["moved"]) if f.kind == "tool_output_drift"]
    finally:
        agentotel.shutdown()
    assert [(f.index, f.layer) for f in drift] == [(1, "tool")], drift
    assert "(a retrieval)" in drift[0].message


@pytest.mark.parametrize("name,layer", [
    # a source claimed for the answer that no search returned: a made-up citation, the model's
    ("cite", "model"), ("add_source", "model"), ("attachReference", "model"),
    # the same id read or acted on: the tool's to refuse (an incorrect argument value)
    ("fetch_doc", "tool"), ("publish_doc", "tool"),
])
def test_an_id_no_search_returned_cited_is_the_models_and_fetched_the_tools(name, layer):
    turns = [("search_docs", SEARCH, _docs(REMOTE_2024, REMOTE_2021)), (name, {"doc_id": "D-110"}, {"ok": True})]
    found, shown = _found(_run(*turns, answer="Up to 3 days a week."), "invented_argument")
    assert found == [(3, layer)], shown
    # the id the search gave: nothing invented, whatever the tool
    kept = [turns[0], (name, {"doc_id": "D-101"}, {"ok": True})]
    assert _found(_run(*kept, answer="Up to 3 days a week."), "invented_argument")[0] == []


CHURN_REPORTS = {"results": [{"url": "https://intranet.example/reports/q2-2026", "title": "Q2 2026 report"},
                       {"url": "https://intranet.example/reports/q3-2026", "title": "Q3 2026 report"}]}


@pytest.mark.parametrize("ask,url,said,wrong", [
    ("What does the Q3 2026 report say about churn?", "https://intranet.example/reports/q2-2026", None, True),
    ("What does the Q3 2026 report say about churn?", "https://intranet.example/reports/q3-2026", None, False),
    ("How did churn move from the Q2 2026 report to Q3?", "https://intranet.example/reports/q2-2026", None, False),  # both asked
    ("What does the Q3 2026 report say about churn?", "https://intranet.example/reports/q2-2026",
     "Opening the Q2 report first, to compare.", False),  # said why
])
def test_the_sibling_of_what_the_request_names_opened_silently_is_a_wrong_target(ask, url, said, wrong):
    turns = [("search_docs", {"query": "churn report"}, CHURN_REPORTS), ("fetch_page", {"url": url}, "Churn: 2.1%", *([said] if said else []))]
    found, shown = _found(_run(*turns, answer="Churn was 2.1%.", ask=ask), "wrong_target")
    assert found == ([(3, "model")] if wrong else []), shown
