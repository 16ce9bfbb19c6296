"""The general rules the third held-out set (heldout3.py, a literature desk) led to, each over plain step data in
another domain (an IT helpdesk's knowledge base and tickets): a run that triggers the rule at its step, and a run
near it that must not."""

from __future__ import annotations

import json

from agentotel.analysis.detectors import detect, format_findings
from agentotel.analysis.policy import Policy
from runs_build import llm, record, text_message, tool

SYSTEM = text_message("system", "You are the IT helpdesk. Answer from the knowledge base.")
QUESTION = "How do I reset my VPN token?"
GIVEN = [SYSTEM, text_message("user", QUESTION)]
WEAK = Policy(min_retrieval_score=0.3)


def found(run, kind, policy=None):
    return [(f.index, f.layer) for f in detect(run, policy=policy) if f.kind == kind]


def asked(name: str, arguments: dict, call_id: str) -> dict:
    return {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]}


def result(call_id: str, value: str) -> dict:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": value}]}


def articles(*scores: float) -> list[dict]:
    return [{"id": f"KB-{310 + i}", "score": s, "content": f"Article {i} on tokens."} for i, s in enumerate(scores)]


def search(index: int, query: str, docs: list[dict]) -> dict:
    return tool(index, "kb", query, docs, kind="retrieval")


# ---- a loop stopped on a retrieval's documents, unseen ---------------------------------------------------------


def _stopped(last_is_answer: bool) -> object:
    steps = [llm(1, calls=[("search_kb", {"query": QUESTION}, "c1")], messages=GIVEN), search(2, QUESTION, articles(0.9, 0.7))]
    if last_is_answer:
        steps.append(llm(3, text="Open the VPN portal and choose Reset token (KB-310).", messages=GIVEN))
    run = record(*steps, task=QUESTION)
    run.run["output"] = json.dumps("Turn limit reached." if not last_is_answer else "Open the VPN portal and choose Reset token (KB-310).")
    return run


def test_a_run_ended_on_a_search_the_model_asked_for_is_stopped_before_answer():
    run = _stopped(False)
    assert found(run, "stopped_before_answer") == [(2, "workflow")], format_findings(detect(run))


def test_a_search_whose_documents_a_model_answered_from_is_no_stop():
    assert found(_stopped(True), "stopped_before_answer") == []


# ---- the model asks for the same search again -----------------------------------------------------------------


def _searched_twice(between: tuple[str, dict, object], second_docs: list[dict]) -> object:
    docs = articles(0.91, 0.62)
    name, arguments, output = between
    return record(
        llm(1, calls=[("search_kb", {"query": "vpn token reset"}, "c1")], messages=GIVEN),
        search(2, "vpn token reset", docs),
        llm(3, calls=[(name, arguments, "c2")], messages=[*GIVEN, asked("search_kb", {"query": "vpn token reset"}, "c1"),
                                                        result("c1", json.dumps(docs))]),
        tool(4, name, arguments, output, requested_by=3, call_id="c2"),
        llm(5, calls=[("search_kb", {"query": "vpn token reset"}, "c3")], messages=GIVEN),
        search(6, "vpn token reset", second_docs),
        llm(7, text="Choose Reset token in the VPN portal (KB-310).", messages=GIVEN), task=QUESTION)


def test_the_same_search_asked_again_after_reading_a_hit_is_a_model_repetition():
    run = _searched_twice(("open_article", {"id": "KB-310"}, {"id": "KB-310", "steps": ["portal", "reset"]}), articles(0.91, 0.62))
    assert found(run, "repeated_tool_call") == [(5, "model")], format_findings(detect(run))


def test_searching_again_after_changing_what_it_searches_or_for_other_documents_is_no_repetition():
    # an article was added on that very subject: searching again is checking it is found
    added = _searched_twice(("add_article", {"title": "vpn token reset (2026)"}, {"id": "KB-399"}), articles(0.91, 0.62))
    assert found(added, "repeated_tool_call") == []
    other = _searched_twice(("open_article", {"id": "KB-310"}, {"id": "KB-310"}), articles(0.95, 0.91))
    assert found(other, "repeated_tool_call") == []


# ---- reading what a weak search found is no evidence -------------------------------------------------------------


def _weak_then_read(scores: tuple[float, ...], *, kind: str = "retrieval", again: tuple[float, ...] | None = None) -> object:
    docs = articles(*scores)
    first = search(2, QUESTION, docs) if kind == "retrieval" else tool(2, "search_kb", {"query": QUESTION}, docs, requested_by=1,
                                                                       call_id="c1")
    steps = [llm(1, calls=[("search_kb", {"query": QUESTION}, "c1")], messages=GIVEN), first]
    if again is not None:
        steps += [llm(3, calls=[("search_kb", {"query": "vpn token"}, "c5")], messages=GIVEN), search(4, "vpn token", articles(*again))]
    n = len(steps) + 1
    steps += [llm(n, calls=[("open_article", {"id": "KB-310"}, "c2")], messages=GIVEN),
              tool(n + 1, "open_article", {"id": "KB-310"}, {"id": "KB-310", "body": "Tokens rotate every 90 days."}, requested_by=n,
                   call_id="c2"),
              llm(n + 2, text="Tokens rotate every 90 days; reset yours in the VPN portal (KB-310).", messages=GIVEN)]
    return record(*steps, task=QUESTION)


def test_an_answer_from_reading_a_weak_searchs_own_hits_is_placed_where_the_model_went_on_with_them():
    run = _weak_then_read((0.12, 0.08))
    assert found(run, "answer_without_evidence", WEAK) == [(3, "product")], format_findings(detect(run, policy=WEAK))


def test_weak_scored_documents_from_a_plain_search_tool_are_judged_too():
    run = _weak_then_read((0.12, 0.08), kind="tool")
    assert found(run, "answer_without_evidence", WEAK) == [(3, "product")], format_findings(detect(run, policy=WEAK))


def test_a_strong_search_or_a_second_search_that_found_strong_hits_is_evidence():
    assert found(_weak_then_read((0.92, 0.41)), "answer_without_evidence", WEAK) == []
    assert found(_weak_then_read((0.12, 0.08), again=(0.93, 0.55)), "answer_without_evidence", WEAK) == []
    assert found(_weak_then_read((0.12, 0.08), kind="tool"), "answer_without_evidence") == []  # no minimum score set


# ---- a tool's result given to the model with other numbers -------------------------------------------------------


def _ticket_shown(shown: dict) -> object:
    returned = {"ticket": "INC-20431", "priority": 2, "open_days": 6, "assignee": "m.okafor"}
    # a tool span of another instrumentation: no call id of its own; the model's call says which call it was
    return record(
        llm(1, calls=[("get_ticket", {"ticket": "INC-20431"}, "c1")], messages=GIVEN),
        tool(2, "get_ticket", {"ticket": "INC-20431"}, returned),
        llm(3, text="INC-20431 is priority 2.", messages=[*GIVEN, asked("get_ticket", {"ticket": "INC-20431"}, "c1"),
                                                          result("c1", json.dumps(shown))]), task=QUESTION)


def test_a_result_given_to_the_model_with_other_numbers_than_the_tool_returned_is_altered():
    run = _ticket_shown({"ticket": "INC-20431", "priority": 2, "open_days": 60, "assignee": "m.okafor"})
    assert found(run, "tool_result_altered") == [(3, "memory")], format_findings(detect(run))


def test_a_result_given_as_returned_or_with_a_string_redacted_is_not_altered():
    assert found(_ticket_shown({"ticket": "INC-20431", "priority": 2, "open_days": 6, "assignee": "m.okafor"}), "tool_result_altered") == []
    assert found(_ticket_shown({"ticket": "INC-20431", "priority": 2, "open_days": 6, "assignee": "[REDACTED]"}), "tool_result_altered") == []


# ---- a result shown cut (a placeholder, the start of it) explains asking again; a result put in other words does not


TICKET = {"ticket": "INC-20431", "priority": 2, "open_days": 6, "assignee": "m.okafor", "summary": "VPN token expired"}


def _ticket_asked_thrice(shown: str) -> object:
    """get_ticket asked for three times, each time given `shown` in place of the ticket the tool returned."""
    args = {"ticket": "INC-20431"}
    history: list[dict] = [*GIVEN]
    steps = []
    for n, at in enumerate((1, 3, 5)):
        steps += [llm(at, calls=[("get_ticket", args, f"c{n}")], messages=list(history)),
                  tool(at + 1, "get_ticket", args, TICKET, requested_by=at, call_id=f"c{n}")]
        history += [asked("get_ticket", args, f"c{n}"), result(f"c{n}", shown)]
    steps.append(llm(7, text="I cannot read INC-20431.", messages=history))
    return record(*steps, task=QUESTION)


def test_a_result_shown_as_a_placeholder_or_its_first_characters_is_cut_and_explains_asking_again():
    for shown in ("[ticket omitted to save context]", json.dumps(TICKET)[:30], "Ticket INC-2... (trimmed)"):
        run = _ticket_asked_thrice(shown)
        assert found(run, "tool_result_cut") == [(3, "memory")], (shown, format_findings(detect(run)))
        assert found(run, "repeated_tool_call") == [], (shown, format_findings(detect(run)))


def test_a_result_the_app_put_in_its_own_words_is_no_cut_and_asking_again_is_a_repetition():
    run = _ticket_asked_thrice("no open ticket found")  # the app's parser missed the ticket: what it said, not a cut
    assert found(run, "tool_result_cut") == [], format_findings(detect(run))
    assert found(run, "repeated_tool_call") == [(3, "model")], format_findings(detect(run))


def test_a_cut_result_explains_asking_again_for_that_tool_only():
    """The ticket shown as a placeholder, the queue shown whole: asking for the queue again is still a repetition."""
    queue = {"queue": "network", "open": 14, "oldest_days": 9}
    ticket, queue_args = {"ticket": "INC-20431"}, {"queue": "network"}
    given = [*GIVEN, {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "get_ticket", "arguments": ticket},
        {"type": "tool_call", "id": "c2", "name": "list_queue", "arguments": queue_args}]},
        result("c1", "[ticket omitted]"), result("c2", json.dumps(queue))]
    run = record(
        llm(1, calls=[("get_ticket", ticket, "c1"), ("list_queue", queue_args, "c2")], messages=GIVEN),
        tool(2, "get_ticket", ticket, TICKET, requested_by=1, call_id="c1"),
        tool(3, "list_queue", queue_args, queue, requested_by=1, call_id="c2"),
        llm(4, calls=[("list_queue", queue_args, "c3")], messages=given),
        tool(5, "list_queue", queue_args, queue, requested_by=4, call_id="c3"),
        llm(6, text="The network queue has 14 open tickets.", messages=[*given, asked("list_queue", queue_args, "c3"),
                                                                          result("c3", json.dumps(queue))]), task=QUESTION)
    assert found(run, "tool_result_cut") == [(4, "memory")], format_findings(detect(run))
    assert found(run, "repeated_tool_call") == [(4, "model")], format_findings(detect(run))
