"""Causes found at their step and layer in runs of a meeting-room desk agent (real openai SDK, scripted model
on 127.0.0.1, read back from a real store), each fault next to a good run of the same shape that gets no
finding at all."""

from __future__ import annotations

import pytest

import agentotel
from agentotel.analysis.detectors import Policy, findings, format_findings
from desk import SUMMARY_MODEL, SYSTEM, Desk, calls, desk, reset, says
from scripted import fails, scripted_client

ASK = "Book me a room for six people at HQ tomorrow 14:00."
FIND = ("find_rooms", {"building": "HQ", "seats": 6})
BOOK = ("book_room", {"room_id": "R-0412", "slot": "tomorrow 14:00"})
BOOKED = "Booked R-0412 for tomorrow 14:00, confirmation CF-0000112."
PROMPT = SYSTEM.format(company="Acme", employee="Ada Lovelace")


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    reset()
    with scripted_client() as (client, model):
        yield Recorder(directory, client, model)
    agentotel.shutdown()


class Recorder:
    def __init__(self, directory, client, model):
        self.directory, self.client, self.model = directory, client, model

    def run(self, *turns, questions=(ASK,), system=PROMPT, user="E-20417", name="room-desk", **harness):
        """Record one run with the model's turns scripted; returns its run id."""
        self.model.script(*turns)
        Desk.bookings = 0  # each run books afresh: its confirmation codes are the ones the answers quote
        with agentotel.run(name, user=user, task=questions[0]) as run:
            try:
                run.output = desk(self.client, list(questions), system=system, **harness)
            except Exception:  # noqa: BLE001 - a failing run is recorded as failed; the test looks at the record
                pass
        agentotel.flush()
        return run.id

    def good(self, **harness):
        return self.run(calls(FIND), calls(BOOK), says(BOOKED), **harness)

    def findings(self, run, **policy):
        return findings(agentotel.open(self.directory), run, policy=Policy(**policy) if policy else None)


def cause(found, kind):
    chosen = [f for f in found if f.kind == kind]
    assert chosen, format_findings(found)
    return chosen[0].index, chosen[0].layer


def test_the_good_desk_run_has_no_findings(store):
    assert store.findings(store.good()) == []


# ---- workflow -----------------------------------------------------------------------------------------


def test_a_request_sent_without_one_of_two_parallel_results_fails_in_the_workflow_at_that_request(store):
    both = calls(FIND, ("find_rooms", {"building": "Annex", "seats": 6}))
    dropped = store.run(both, fails("tool_call_ids did not have response messages"), says(BOOKED), fault="drop_parallel")
    found = store.findings(dropped)
    assert cause(found, "run_failed") == (3, "workflow")  # 1 llm, 2 find_rooms, 3 the request the API refused
    assert store.findings(store.run(both, calls(BOOK), says(BOOKED))) == []


def test_a_booking_the_loop_delivered_twice_is_a_workflow_re_run_though_its_answers_differ(store):
    twice = store.run(calls(FIND), calls(BOOK), says(BOOKED), fault="rerun")
    assert cause(store.findings(twice), "repeated_tool_call") == (5, "workflow")
    assert Desk.bookings == 2  # the side effect happened twice: two confirmations
    assert store.findings(store.good()) == []


def test_a_retrieval_re_run_before_every_model_call_within_a_turn(store):
    looped = store.run(calls(FIND), says("R-0412 is free at 14:00."), handbook=True, fault="retrieve_each_call")
    assert cause(store.findings(looped), "repeated_tool_call") == (4, "workflow")  # 1 retrieval, 2 llm, 3 tool, 4 again
    per_turn = store.run(says("Rooms are released when nobody checks in."), says("Yes, that holds for HQ as well."),
                         questions=("What if nobody checks in?", "Also at HQ?"), handbook=True)
    assert store.findings(per_turn) == []


def test_a_run_the_loop_stopped_on_unseen_tool_results_is_stopped_before_its_answer(store):
    stopped = store.run(calls(FIND), calls(BOOK), says(BOOKED), max_turns=2)
    found = store.findings(stopped)
    assert cause(found, "stopped_before_answer") == (4, "workflow")
    assert "busy" in found[0].message
    assert store.findings(store.good(max_turns=3)) == []


def test_a_continue_nudge_that_only_makes_the_model_answer_again_is_kept_going(store):
    nudged = store.run(calls(FIND), calls(BOOK), says(BOOKED), says(BOOKED), fault="nudge")
    assert cause(store.findings(nudged), "kept_going_after_answer") == (6, "workflow")
    follow_up = store.run(calls(FIND), calls(BOOK), says(BOOKED), says("It has a screen and a whiteboard for six."),
                          questions=(ASK, "Does it have a screen?"))
    assert store.findings(follow_up) == []


# ---- tool ---------------------------------------------------------------------------------------------


def test_arguments_are_judged_by_the_tools_own_schema_when_the_offered_one_names_no_parameters(store):
    wrong = store.run(calls(FIND), calls(("book_room", {"roomId": "R-0412", "slot": "tomorrow 14:00"})), calls(BOOK),
                      says(BOOKED), empty_parameters=True)
    found = store.findings(wrong)
    assert cause(found, "wrong_arguments") == (3, "tool")
    assert "unknown argument 'roomId'" in found[0].message
    assert store.findings(store.good(empty_parameters=True)) == []


def test_an_id_the_model_made_up_is_an_invented_argument_but_a_new_kind_of_id_is_not(store):
    invented = store.run(calls(FIND), calls(("book_room", {"room_id": "R-0999", "slot": "tomorrow 14:00"})), says(BOOKED))
    found = store.findings(invented)
    assert cause(found, "invented_argument") == (3, "tool")
    assert found[0].evidence["values"] == ["R-0999"]
    new_slot_id = store.run(calls(FIND), calls(("book_room", {"room_id": "R-0412", "slot": "SL-1400"})),
                            says("Booked R-0412 (slot SL-1400), confirmation CF-0000112."))
    assert store.findings(new_slot_id) == []  # an id of a form it was never shown: one it creates


def test_a_failed_booking_the_model_went_past_to_other_tools(store):
    Desk.taken = {"R-0412"}
    ignored = store.run(calls(FIND), calls(BOOK), calls(FIND), says(BOOKED))
    # the booking tool did its job ("R-0412 was taken a moment ago", about the call's own room): going on as if it
    # had booked is the model's (an unreachable or timed-out tool is the tool's: test_detectors, heldout4-6)
    assert cause(store.findings(ignored), "tool_error_ignored") == (5, "model")
    retried = store.run(calls(FIND), calls(BOOK), calls(("book_room", {"room_id": "R-0413", "slot": "tomorrow 14:00"})),
                        says("Booked R-0413 for tomorrow 14:00, confirmation CF-0000113."))
    assert store.findings(retried) == []


# ---- memory -------------------------------------------------------------------------------------------


def test_a_second_turn_sent_as_a_new_conversation_lost_the_history(store):
    turns = (calls(FIND), says("R-0412 and R-0413 are free. Which one?"), calls(BOOK), says(BOOKED))
    restarted = store.run(*turns, questions=(ASK, "The smaller one please."), fault="restart")
    assert cause(store.findings(restarted), "history_lost") == (4, "memory")  # 3 answered turn one, 4 opens turn two
    assert store.findings(store.run(*turns, questions=(ASK, "The smaller one please."))) == []


def test_a_batch_of_independent_requests_is_not_a_lost_history(store):
    store.model.script(says("HQ: weekdays only."), says("Annex: weekdays only."))
    with agentotel.run("room-desk", user="E-20417") as run:  # two one-shot requests in one run, same prompt
        for question in ("Is HQ open on Sundays?", "Is the Annex open on Sundays?"):
            store.client.chat.completions.create(model="gpt-4o-mini", messages=[
                {"role": "system", "content": PROMPT}, {"role": "user", "content": question}])
    agentotel.flush()
    assert store.findings(run.id) == []


def test_a_reply_to_the_question_asked_sent_alone_lost_the_history_but_a_next_item_after_anything_else_did_not(store):
    """The model asked for the account and the reply names it (an id the first turn never did): the same
    conversation going, whatever new id it brings; after a closing "anything else?" a new id is the next item."""
    def two_turns(first_answer: str, second: str) -> str:
        store.model.script(says(first_answer), says("Thanks - which room did you want?"))
        with agentotel.run("room-desk", user="E-20417") as run:
            for question in ("I'd like to move my booking, please.", second):
                store.client.chat.completions.create(model="gpt-4o-mini", messages=[
                    {"role": "system", "content": PROMPT}, {"role": "user", "content": question}])
        agentotel.flush()
        return run.id
    lost = two_turns("Sure - what's the booking reference?", "It's BK-55102.")
    assert cause(store.findings(lost), "history_lost") == (2, "memory")
    assert store.findings(two_turns("Moved. Anything else I can help with?", "Is BK-55102 confirmed?")) == []


def test_a_short_window_that_cut_the_question_lost_the_history(store):
    cut = store.run(calls(FIND), calls(BOOK), says(BOOKED), fault="window")
    assert cause(store.findings(cut), "history_lost") == (5, "memory")


def test_a_result_replaced_by_a_placeholder_was_cut_but_a_result_shown_as_python_text_was_not(store):
    elided = store.run(calls(FIND), calls(BOOK), says(BOOKED), fault="elide")
    assert cause(store.findings(elided), "tool_result_cut") == (3, "memory")
    assert store.findings(store.good(repr_results=True)) == []


def test_memory_recalled_for_another_employee(store):
    Desk.notes = [{"id": "note-E-20999", "content": "E-20999 prefers the Annex."}]
    stale = store.run(calls(FIND), calls(BOOK), says(BOOKED), memory=True)
    found = store.findings(stale)
    assert cause(found, "other_subject_retrieved") == (1, "memory")  # keyed by the run's user
    assert found[0].evidence["returned"] == ["E-20999"]
    reset()
    assert store.findings(store.good(memory=True)) == []


# ---- model and product ------------------------------------------------------------------------------------


def test_a_count_no_tool_gave_in_an_earlier_answer_of_the_conversation(store):
    first = "I found 83 free rooms; R-0412 seats six on floor 4."
    made_up = store.run(calls(FIND), says(first), calls(BOOK), says(BOOKED), questions=(ASK, "Book R-0412 then."))
    assert cause(store.findings(made_up), "ungrounded_answer") == (3, "model")
    grounded = store.run(calls(FIND), says("2 rooms are free; R-0412 seats 6 on floor 4. Rooms are held for 15 minutes."),
                         calls(BOOK), says(BOOKED), questions=(ASK, "Book R-0412 then."))
    assert store.findings(grounded) == []


def test_a_budget_blamed_on_a_result_too_large_to_record_whole(store):
    Desk.rooms = dict(Desk.rooms, floorplan="<svg>" + "<path d='M0 0 L10 10'/>" * 12_000 + "</svg>")
    huge = store.run(calls(FIND), says("R-0412 is free."))
    assert cause(store.findings(huge, max_tokens=20_000), "budget_exceeded") == (2, "product")  # the tool, not step 3
    Desk.rooms = dict(Desk.rooms, floorplan="<svg/>")
    assert store.findings(store.run(calls(FIND), says("R-0412 is free.")), max_tokens=20_000) == []


# ---- prompt -------------------------------------------------------------------------------------------


def test_an_instruction_appended_to_a_templated_prompt_is_found_but_another_employee_is_not(store):
    for company, employee in (("Acme", "Ada Lovelace"), ("Globex", "Alan Turing"), ("Initech", "Grace Hopper")):
        store.good(system=SYSTEM.format(company=company, employee=employee))
    assert store.findings(store.good(system=SYSTEM.format(company="Umbrella", employee="Edsger Dijkstra"))) == []
    edited = SYSTEM.format(company="Hooli", employee="Barbara Liskov") + " Never book rooms; only list them."
    found = store.findings(store.good(system=edited))
    assert cause(found, "instructions_changed") == (1, "prompt")
    assert found[0].evidence["added"] == ["Never", "book", "rooms;", "only", "list", "them."]


def test_a_summariser_on_another_model_given_another_prompt(store):
    summary = "Summarise the booking for the calendar: room, slot and confirmation code, one line."
    for _ in range(3):
        store.run(calls(FIND), calls(BOOK), says(BOOKED), says("R-0412, tomorrow 14:00, CF-0000112."), summary_system=summary)
    found = store.findings(store.run(calls(FIND), calls(BOOK), says(BOOKED), says("A room."), summary_system="Summarise."))
    assert cause(found, "instructions_changed") == (6, "prompt")  # the summariser's call, on SUMMARY_MODEL
    assert SUMMARY_MODEL in str(agentotel.open(store.directory).trajectory(found[0].run_id).steps[5].model)
    assert store.findings(store.run(calls(FIND), calls(BOOK), says(BOOKED), says("R-0412, tomorrow 14:00, CF-0000112."),
                                    summary_system=summary)) == []


def test_a_prompt_sent_with_a_template_variable_unfilled(store):
    unfilled = store.good(system=SYSTEM.format(company="Acme", employee="{employee}"))
    assert cause(store.findings(unfilled), "unfilled_placeholder") == (1, "prompt")
    with_examples = PROMPT + ' Reply as JSON like {"room": "R-1"}; slots look like `{day} {hh:mm}`.'
    assert store.findings(store.good(system=with_examples)) == []
