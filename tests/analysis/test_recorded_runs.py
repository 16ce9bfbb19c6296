"""Detectors over runs recorded through the real openai SDK (a scripted model on 127.0.0.1) and read back
from a real store: each fault is found at its step and layer, and the good run next to it has no finding."""

from __future__ import annotations

import pytest

import agentotel
from agentotel.analysis.detectors import Policy, findings, format_findings
from scripted import Shop, calls, default_order, definitions, fails, says, scripted_client, support_agent

QUESTION = "Where is my order A-1042?"
LOOKUP = ("lookup_order", {"order_id": "A-1042"})
GOOD_ANSWER = "Order A-1042 has shipped with DHL, tracking JD014600003. Items total 69.75."


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    Shop.order, Shop.documents, Shop.card_declined = default_order(), [], False
    with scripted_client() as (client, model):
        yield Recorder(directory, client, model)
    agentotel.shutdown()


class Recorder:
    def __init__(self, directory, client, model):
        self.directory, self.client, self.model = directory, client, model

    def run(self, *turns, name="order-support", question=QUESTION, **harness):
        """Record one run of the agent with the model's turns scripted; returns its run id."""
        self.model.script(*turns)
        with agentotel.run(name, task=question) as run:
            try:
                run.output = support_agent(self.client, question, **harness)
            except Exception:  # noqa: BLE001 - a failing run is recorded as failed; the test looks at the record
                pass
        agentotel.flush()
        return run.id

    def good(self):
        return self.run(calls(LOOKUP), says(GOOD_ANSWER))

    def findings(self, run, **policy):
        return findings(agentotel.open(self.directory), run, policy=Policy(**policy) if policy else None)


def cause(found, kind):
    chosen = [f for f in found if f.kind == kind]
    assert chosen, format_findings(found)
    return chosen[0].index, chosen[0].layer


def test_a_good_run_has_no_findings(store):
    assert store.findings(store.good()) == []
    assert store.findings(store.good()) == []  # and none against the schema learned from the first


def test_an_uncaught_tool_exception_fails_the_run_at_the_tool_with_its_message(store):
    Shop.card_declined = True
    run = store.run(calls(("charge_card", {"amount": 20})), says("Charged."), catch_tool_errors=False)
    found = store.findings(run)
    assert cause(found, "run_failed") == (2, "tool")
    assert "card declined by issuer (code 51)" in found[0].message and found[0].severity == "error"


def test_a_model_api_error_not_recovered_fails_the_run_but_a_retried_one_does_not(store):
    failed = store.run(calls(LOOKUP), fails("upstream overloaded"))
    found = store.findings(failed)
    assert cause(found, "run_failed") == (3, "model") and "upstream overloaded" in found[0].message
    recovered = store.run(calls(LOOKUP), fails("upstream overloaded"), says(GOOD_ANSWER), retry_model=True)
    assert store.findings(recovered) == []


def test_the_model_asking_again_after_a_good_answer_is_a_model_loop_at_its_step(store):
    store.good()
    run = store.run(calls(LOOKUP), calls(LOOKUP), says(GOOD_ANSWER))
    assert cause(store.findings(run), "repeated_tool_call") == (3, "model")


def test_the_loop_running_a_call_twice_is_a_workflow_loop_at_the_second_call(store):
    store.good()
    run = store.run(calls(LOOKUP), says(GOOD_ANSWER), rerun_calls=True)
    assert cause(store.findings(run), "repeated_tool_call") == (3, "workflow")


def test_a_tool_error_the_model_glossed_over_is_found_at_the_model_step(store):
    Shop.card_declined = True
    ignored = store.run(calls(("charge_card", {"amount": 20})), says("Your order will be with you on Friday."))
    assert cause(store.findings(ignored), "tool_error_ignored") == (3, "tool")
    # answered as done: the claim is the model's (heldout9/10: a refused send or payment reported as made)
    claimed = store.run(calls(("charge_card", {"amount": 20})), says("Done! Your card was charged 20 EUR."))
    assert cause(store.findings(claimed), "action_not_taken") == (3, "model")
    admitted = store.run(calls(("charge_card", {"amount": 20})), says("Sorry, the payment did not go through: the card was declined."))
    assert store.findings(admitted) == []


def test_output_drift_learns_optional_fields_and_alarms_on_a_field_gone(store):
    for delivered in (None, "2026-06-02", None):
        Shop.order = dict(default_order(), delivered=delivered)
        store.good()
    Shop.order = {k: v for k, v in default_order().items() if k != "delivered"}  # sometimes null: absent is fine
    assert store.findings(store.good()) == []
    Shop.order = {k: v for k, v in default_order().items() if k != "tracking"}  # always there before
    found = store.findings(store.run(calls(LOOKUP), says("Order A-1042 has shipped with DHL.")))
    assert cause(found, "tool_output_drift") == (2, "tool")
    assert [f.evidence["missing"] for f in found if f.kind == "tool_output_drift"] == [["$.tracking"]]


def test_history_dropped_between_turns_is_a_memory_finding_at_the_turn_that_lost_it(store):
    run = store.run(calls(LOOKUP), calls(("charge_card", {"amount": 5})), says("Charged 5."), forget_at=2)
    assert cause(store.findings(run), "history_lost") == (5, "memory")


def test_instructions_changed_mid_run_is_a_prompt_finding(store):
    run = store.run(calls(LOOKUP), says(GOOD_ANSWER), new_system_at=1)
    assert cause(store.findings(run), "instructions_changed") == (3, "prompt")


def test_an_answer_with_a_tracking_number_no_tool_gave_is_ungrounded(store):
    run = store.run(calls(LOOKUP), says("Order A-1042 has shipped with DHL, tracking JD014699999, arriving 2026-06-09."))
    found = store.findings(run)
    assert cause(found, "ungrounded_answer") == (3, "model")
    assert found[0].evidence["values"] == ["2026-06-09", "JD014699999"]


def test_an_answer_after_an_empty_retrieval_needs_to_say_it_found_nothing(store):
    confident = store.run(says("Returns are free within 30 days."), search=True, question="How do returns work?")
    assert cause(store.findings(confident), "answer_without_evidence") == (2, "product")
    honest = store.run(says("I could not find anything about returns in the help center."), search=True,
                       question="How do returns work?")
    assert store.findings(honest) == []


def test_a_tool_offered_with_another_description_than_its_own(store):
    offered = definitions(lookup_order="Cancel an order immediately.")
    run = store.run(calls(LOOKUP), says(GOOD_ANSWER), offered=offered)
    assert cause(store.findings(run), "tools_offered_mismatch") == (1, "tool")


def test_tool_calls_asked_for_and_never_run_before_a_final_answer(store):
    run = store.run(calls(LOOKUP, ("charge_card", {"amount": 5})), says(GOOD_ANSWER), skip=("charge_card",))
    found = store.findings(run)
    assert cause(found, "unanswered_tool_calls") == (3, "workflow")  # the answer given without it
    assert found[0].evidence["calls"][0]["name"] == "charge_card"


def test_a_budget_is_blamed_on_the_retrieval_that_blew_it(store):
    Shop.documents = [{"id": f"kb-{n}", "score": 0.8, "content": f"Article {n}: " + "shipping policy details " * 30}
                      for n in range(40)]
    run = store.run(calls(LOOKUP), says(GOOD_ANSWER), search=True)
    found = store.findings(run, max_tokens=4000)
    assert cause(found, "budget_exceeded") == (1, "product")  # the 40-document retrieval, not the model call


def test_a_prompt_other_than_earlier_runs_used_is_a_prompt_finding_at_the_first_model_call(store):
    store.good()
    assert store.findings(store.good()) == []  # one earlier run is no baseline; two of the same task are
    changed = store.run(calls(LOOKUP), says(GOOD_ANSWER), system="You are a support agent. Never share tracking numbers.")
    assert cause(store.findings(changed), "instructions_changed") == (1, "prompt")
    assert store.findings(store.good()) == []


def test_a_prompt_quoting_the_task_is_no_change_between_tasks(store):
    for question in ("Where is my order A-1042?", "Has order A-1042 shipped yet?", "Tracking for A-1042 please"):
        run = store.run(calls(LOOKUP), says(GOOD_ANSWER), question=question,
                        system=f"You are a support agent. The customer asks: {question}")
        assert store.findings(run) == [], question


def test_tools_offered_otherwise_than_earlier_runs_is_a_tool_finding(store):
    store.good()
    store.good()
    run = store.run(calls(LOOKUP), says(GOOD_ANSWER), offered=definitions(charge_card="Refund the customer's card."))
    found = store.findings(run)
    assert cause(found, "tools_offered_changed") == (1, "tool")
    assert [f.evidence["tools"] for f in found if f.kind == "tools_offered_changed"] == [["charge_card"]]
