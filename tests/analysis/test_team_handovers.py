"""Between the agents of a team (heldout9's planner -> executor -> verifier misses): a step of the plan the executor
skipped, a rollback done in part reported as done, a run ending where the work was handed on, and a meeting booked
over one the calendar showed - each beside the legitimate run that looks like it. Hand-built runs in the shape a
hand-built LangGraph graph records (one agent, a system prompt per node) and the Agents SDK's (agent steps, handoff
tools)."""

from __future__ import annotations

import json

from agentotel.analysis.detectors import detect, format_findings
from runs_build import agent, definitions_attr, llm, record, text_message, tool, tool_loop

TASK = "Incident INC-5521: checkout-api 5xx error rate 14% since 21:02 UTC. Mitigate it per the runbook."
PLAN = ("Plan for the executor:\n1. Roll back checkout-api from v2.14.0 to v2.13.2.\n2. Scale checkout-api from 6 to 10 "
        "replicas (CPU 91%).\n3. Leave orders-db alone: its slow query is the DBA's.\nThen the verifier confirms recovery.")
TEAM = "You are the {} of the incident-response team. Only the verifier declares an incident resolved."
ROLLED = ("rollback", {"service": "checkout-api", "version": "v2.13.2"}, {"status": "ok", "regions": ["eu-west", "us-east"]})
SCALED = ("scale_deployment", {"service": "checkout-api", "replicas": 10}, {"status": "ok", "replicas": 10})
HEALTH = ("check_health", {"service": "checkout-api"}, {"error_rate_percent": 0.4})
TOOLS = ("rollback", "scale_deployment", "check_health", "post_status")


class Team:
    """Steps of one run, turn by turn: each turn an agent (its system prompt) calls tools and ends with a text."""

    def __init__(self, task: str = TASK) -> None:
        self.steps: list[dict] = []
        self.task, self.said = task, [text_message("user", task)]

    def turn(self, role: str, *calls, report: str, handoff: str | None = None, parent: int | None = None) -> Team:
        shown = [text_message("system", TEAM.format(role)), *self.said]
        for name, arguments, result in calls:
            index, call_id = len(self.steps) + 1, f"c{len(self.steps) + 1}"
            self.steps += [llm(index, calls=[(name, arguments, call_id)], messages=list(shown), parent=parent),
                           dict(tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id), parent_index=parent)]
            shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                      {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": json.dumps(result)}]}]
        index = len(self.steps) + 1
        self.steps.append(llm(index, text=report, messages=shown, parent=parent,
                              calls=((handoff, {}, f"h{index}"),) if handoff else ()))
        if handoff:
            self.steps.append(dict(tool(index + 1, handoff, {}, {"assistant": handoff.rsplit("_", 1)[-1]}, requested_by=index,
                                        call_id=f"h{index}"), parent_index=parent))
        self.said = [*self.said, text_message("assistant", report)]
        return self

    def agent(self, name: str) -> int:
        self.steps.append(agent(len(self.steps) + 1, name))
        return len(self.steps)

    def run(self, offered=TOOLS, handoffs: dict[int, tuple[str, ...]] | None = None):
        def attrs(step):
            names = (*offered, *((handoffs or {}).get(step.get("parent_index")) or ()))
            return definitions_attr(*((n, {"type": "object"}) for n in names))
        return record(*self.steps, attributes={s["span_id"]: attrs(s) for s in self.steps if s["type"] == "llm"}, task=self.task)


def _found(run, kind):
    return [(f.index, f.layer) for f in detect(run) if f.kind == kind], format_findings(detect(run))


def _executed(*calls, report: str, verifier: bool = True):
    team = Team().turn("planner", report=PLAN).turn("executor", *calls, report=report)
    if verifier:
        team.turn("verifier", HEALTH, report="VERIFIED: error rate 0.4%.")
    return team


def test_a_step_of_the_plan_the_executor_never_took_nor_mentioned_is_a_task_ignored():
    skipped = _executed(ROLLED, report="Executor's report:\n1. rolled back checkout-api to v2.13.2.\nThe plan is carried out.")
    found, report = _found(skipped.run(), "task_ignored")
    assert found == [(4, "model")], report
    assert "Scale checkout-api" in next(f.message for f in detect(skipped.run()) if f.kind == "task_ignored")
    # every deed of the plan done ("Leave orders-db alone" asks for none), or the skipped one accounted for
    done = _executed(ROLLED, SCALED, report="1. rolled back checkout-api.\n2. scaled it to 10 replicas.")
    assert _found(done.run(), "task_ignored")[0] == [], _found(done.run(), "task_ignored")[1]
    said = _executed(ROLLED, report="1. rolled back checkout-api.\n2. Did not scale: CPU was back to 60% after the rollback.")
    assert _found(said.run(), "task_ignored")[0] == [], _found(said.run(), "task_ignored")[1]


def test_a_numbered_request_the_planner_turns_into_a_plan_is_no_skipped_step():
    # The planner is handed the user's numbered list and does none of it itself: the executor is the one to act.
    ask = "1. Roll back checkout-api to v2.13.2.\n2. Scale checkout-api to 10 replicas."
    team = Team(ask).turn("planner", ("query_logs", {"service": "checkout-api"}, {"lines": ["ERROR"]}), report=PLAN)
    team.turn("executor", ROLLED, SCALED, report="1. rolled back.\n2. scaled to 10.")
    assert _found(team.run(offered=(*TOOLS, "query_logs")), "task_ignored")[0] == [], _found(team.run(), "task_ignored")[1]


PARTIAL = ("rollback", {"service": "checkout-api", "version": "v2.13.2"},
           {"status": "partial", "rolled_back": ["eu-west", "us-west"], "failed": {"us-east": "image pull error: registry timeout"}})


def test_an_action_done_in_part_reported_as_done_is_information_withheld():
    withheld = _executed(PARTIAL, SCALED, report="Executor's report:\n1. rolled back checkout-api to v2.13.2.\n2. scaled to 10.")
    assert _found(withheld.run(), "information_withheld")[0] == [(6, "model")], _found(withheld.run(), "information_withheld")[1]
    told = _executed(PARTIAL, SCALED, report="1. rolled back checkout-api to v2.13.2 in eu-west and us-west; us-east failed "
                                             "(image pull error).\n2. scaled to 10.")
    finished = _executed(PARTIAL, ROLLED, SCALED, report="1. rolled back checkout-api to v2.13.2 in every region.\n2. scaled to 10.")
    for run in (told.run(), finished.run()):
        assert _found(run, "information_withheld")[0] == [], _found(run, "information_withheld")[1]


def test_the_same_report_beside_the_handoff_of_an_agents_sdk_team():
    team = Team()
    planner = team.agent("planner")
    team.turn("planner", report=PLAN, handoff="transfer_to_executor", parent=planner)
    executor = team.agent("executor")
    team.turn("executor", PARTIAL, SCALED, report="1. rolled back checkout-api to v2.13.2.\n2. scaled to 10.",
              handoff="transfer_to_verifier", parent=executor)
    verifier = team.agent("verifier")
    team.turn("verifier", HEALTH, report="VERIFIED.", parent=verifier)
    run = team.run(handoffs={planner: ("transfer_to_executor",), executor: ("transfer_to_verifier",)})
    report = next(s["index"] for s in run.steps if s["type"] == "llm" and "scaled to 10" in (s["output"] or ""))
    assert _found(run, "information_withheld")[0] == [(report, "model")], _found(run, "information_withheld")[1]


READY = "Executor's report:\n1. rolled back checkout-api.\n2. scaled to 10.\nReady for verification."


def test_a_run_that_ends_where_the_work_is_handed_to_an_agent_that_never_ran():
    # A graph's edge that stops after the executor: the workflow's.
    graph = _executed(ROLLED, SCALED, report=READY, verifier=False).run()
    assert _found(graph, "handover_dropped")[0] == [(6, "workflow")], _found(graph, "handover_dropped")[1]
    # An Agents SDK executor offered the handoff that answered instead: the model's.
    team = Team()
    planner = team.agent("planner")
    team.turn("planner", report=PLAN, handoff="transfer_to_executor", parent=planner)
    executor = team.agent("executor")
    team.turn("executor", ROLLED, SCALED, report=READY, parent=executor)
    run = team.run(handoffs={planner: ("transfer_to_executor",), executor: ("transfer_to_verifier",)})
    assert _found(run, "handover_dropped")[0] == [(len(run.steps), "model")], _found(run, "handover_dropped")[1]
    # The verifier ran; or one agent alone ends by handing its work to a person.
    assert _found(_executed(ROLLED, SCALED, report=READY).run(), "handover_dropped")[0] == []
    alone = Team("Draft the renewal e-mail to Jordan.").turn("assistant", report="Here is the draft. Ready for your review.")
    assert _found(alone.run(), "handover_dropped")[0] == [], _found(alone.run(), "handover_dropped")[1]


DAY = {"date": "2026-12-08", "timezone": "Europe/Berlin",
       "events": [{"title": "Team standup", "start": "09:30", "end": "09:45"}, {"title": "Northwind review", "start": "10:00", "end": "11:00"}]}


def _booked(start: str, ask: str = "Book a 30-minute call with Jordan on Tuesday 8 December at 10:00.", shown=("list_events", DAY)):
    team = Team(ask)
    arguments = {"title": "Call with Jordan", "date": "2026-12-08", "start": start, "minutes": 30, "timezone": "Europe/Berlin"}
    team.turn("assistant", (shown[0], {"date": "2026-12-08"}, shown[1]), ("create_event", arguments, {"event_id": "E-1"}),
              report=f"Booked {start} on 8 December.")
    return team.run(offered=("list_events", "find_free_slots", "create_event"))


def test_a_meeting_booked_over_one_the_calendar_showed_is_an_input_ignored():
    assert _found(_booked("10:00"), "input_ignored")[0] == [(3, "model")], _found(_booked("10:00"), "input_ignored")[1]
    assert _found(_booked("10:45"), "input_ignored")[0] == [(3, "model")]
    free = {"date": "2026-12-08", "slots": [{"start": "11:00", "end": "12:00"}]}
    for run in (_booked("11:00"), _booked("09:00"), _booked("11:00", shown=("find_free_slots", free)),
                _booked("10:00", ask="Book a call with Jordan at 10:00 on 8 December, even if it clashes with the review.")):
        assert _found(run, "input_ignored")[0] == [], _found(run, "input_ignored")[1]


def _said_and_called(words: str, service: str, looked_up: str = "checkout-api"):
    """The executor handed the plan: a health check of `looked_up`, then one model call that says what it does and
    calls rollback."""
    shown = [text_message("system", TEAM.format("executor")), text_message("user", TASK), text_message("assistant", PLAN)]
    arguments = {"service": service, "version": "v2.13.2"}
    steps = [llm(1, calls=[("check_health", {"service": looked_up}, "c1")], messages=shown),
             tool(2, "check_health", {"service": looked_up}, {"error_rate_percent": 14.2}, requested_by=1, call_id="c1"),
             llm(3, text=words, calls=[("rollback", arguments, "c3")], messages=[*shown, text_message("tool", "14.2")]),
             tool(4, "rollback", arguments, {"status": "ok", "service": service}, requested_by=3, call_id="c3"),
             llm(5, text="Rolled back.", messages=[*shown, text_message("assistant", words), text_message("tool", "ok")])]
    return record(*steps, attributes={s["span_id"]: definitions_attr(*((n, {"type": "object"}) for n in TOOLS))
                                      for s in steps if s["type"] == "llm"}, task=TASK)


def test_a_call_on_another_service_than_the_words_beside_it_name_is_the_models_reasoning_action_mismatch():
    # The model's own words name what it means: the slip is the model's, not the tool's (no invented_argument).
    slip = _said_and_called("Rolling back checkout-api to v2.13.2.", "cart-api")
    assert [(f.index, f.layer, f.kind) for f in detect(slip) if f.index == 3] == [(3, "model", "reasoning_action_mismatch")], \
        format_findings(detect(slip))
    for run in (_said_and_called("Rolling back checkout-api to v2.13.2.", "checkout-api"),
                # a noun, not the verb: "the rollback failed in us-east" names where, not what
                _said_and_called("The rollback failed in us-east; retrying it.", "checkout-api"),
                # a name the run never had as a service: no service the model meant
                _said_and_called("Rolling back release-train to v2.13.2.", "checkout-api")):
        assert _found(run, "reasoning_action_mismatch")[0] == [], _found(run, "reasoning_action_mismatch")[1]


REJECTED = "REJECTED: checkout-api error rate 3.9% is above the runbook's 2%; scale out to 12."


def _executor_again(*given):
    """A graph's executor invoked twice (agent steps of one name), the verifier's rejection between: its second
    turn given `given` (after its instructions)."""
    first = [text_message("system", TEAM.format("executor")), text_message("user", TASK + "\n\n" + PLAN)]
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "rollback", "arguments": ROLLED[1]}]}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": json.dumps(ROLLED[2])}]}
    worked = [*first, call, result]
    second = [first[0], *given]
    steps = [agent(1, "executor"), llm(2, calls=[("rollback", ROLLED[1], "c2")], messages=first, parent=1),
             dict(tool(3, "rollback", ROLLED[1], ROLLED[2], requested_by=2, call_id="c2"), parent_index=1),
             llm(4, text="Executor's report: rolled back checkout-api.", messages=worked, parent=1),
             agent(5, "verifier"), llm(6, text=REJECTED, parent=5, messages=[
                 text_message("system", TEAM.format("verifier")), text_message("user", TASK + "\n\n" + PLAN)]),
             agent(7, "executor"), llm(8, calls=[("scale_deployment", SCALED[1], "c9")], messages=second, parent=7),
             dict(tool(9, "scale_deployment", SCALED[1], SCALED[2], requested_by=8, call_id="c9"), parent_index=7)]
    return record(*steps, task=TASK)


def test_an_agent_given_its_request_again_without_its_plan_and_work_has_lost_its_history():
    # (MAST FM-2.1 conversation reset: the graph re-invokes the executor with the incident and the rejection only)
    reset = _executor_again(text_message("user", TASK), text_message("user", "Verifier: " + REJECTED))
    assert _found(reset, "history_lost")[0] == [(8, "memory")], _found(reset, "history_lost")[1]
    for run in (
        # its conversation carried on, the rejection added
        _executor_again(text_message("user", TASK + "\n\n" + PLAN),
                        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "rollback", "arguments": ROLLED[1]}]},
                        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": json.dumps(ROLLED[2])}]},
                        text_message("assistant", "Executor's report: rolled back checkout-api."),
                        text_message("user", "Verifier: " + REJECTED)),
        # the next incident of a batch, in a fresh conversation
        _executor_again(text_message("user", "Incident INC-5530: search-api p99 latency 2.4 s. Mitigate it per the runbook.")),
    ):
        assert _found(run, "history_lost")[0] == [], _found(run, "history_lost")[1]


def _handed_back(*given):
    """An Agents SDK team: the executor's work, the verifier's rejection handed back to it (transfer_to_executor),
    and the executor's next call given `given` (after its instructions)."""
    system = text_message("system", TEAM.format("executor"))
    first = [system, text_message("user", TASK), text_message("assistant", PLAN)]
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "rollback", "arguments": ROLLED[1]}]}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": json.dumps(ROLLED[2])}]}
    worked = [*first, call, result]
    steps = [agent(1, "executor"), llm(2, calls=[("rollback", ROLLED[1], "c2")], messages=first, parent=1),
             dict(tool(3, "rollback", ROLLED[1], ROLLED[2], requested_by=2, call_id="c2"), parent_index=1),
             llm(4, text="Executor's report: rolled back checkout-api.", calls=[("transfer_to_verifier", {}, "h4")],
                 messages=worked, parent=1),
             dict(tool(5, "transfer_to_verifier", {}, {"assistant": "verifier"}, requested_by=4, call_id="h4"), parent_index=1),
             agent(6, "verifier"), llm(7, text=REJECTED, calls=[("transfer_to_executor", {}, "h7")], parent=6,
                                       messages=[text_message("system", TEAM.format("verifier")), *worked]),
             dict(tool(8, "transfer_to_executor", {}, {"assistant": "executor"}, requested_by=7, call_id="h7"), parent_index=6),
             agent(9, "executor"), llm(10, calls=[("scale_deployment", SCALED[1], "c10")], messages=[system, *given], parent=9),
             dict(tool(11, "scale_deployment", SCALED[1], SCALED[2], requested_by=10, call_id="c10"), parent_index=9)]
    return record(*steps, task=TASK)


def test_a_rejection_handed_back_alone_is_no_summary_of_the_work_it_replaced():
    # The handoff's input filter kept the incident and the rejection: the plan and the executor's work are gone
    reset = _handed_back(text_message("user", TASK), text_message("assistant", REJECTED))
    assert _found(reset, "history_lost")[0] == [(10, "memory")], _found(reset, "history_lost")[1]
    whole = _handed_back(text_message("user", TASK), text_message("assistant", PLAN),
                         {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "rollback", "arguments": ROLLED[1]}]},
                         {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": json.dumps(ROLLED[2])}]},
                         text_message("assistant", "Executor's report: rolled back checkout-api."), text_message("assistant", REJECTED))
    assert _found(whole, "history_lost")[0] == [], _found(whole, "history_lost")[1]


def _planned(deploys: list[dict], *more):
    """A planner reading the deploys of checkout-api, then its logs (and `more`), then writing its plan."""
    logs = {"lines": ["21:02:11Z ERROR PaymentClient.authorize: NullPointerException (v2.14.0)", "21:07:00Z INFO cpu 91%"]}
    turns = [("get_deploys", {"service": "checkout-api"}, {"service": "checkout-api", "deploys": deploys}),
             ("query_logs", {"service": "checkout-api", "minutes": 30}, logs), *more]
    return record(*tool_loop([text_message("system", TEAM.format("planner")), text_message("user", TASK)], turns, PLAN), task=TASK)


OLD = {"version": "v2.13.2", "at": "2026-11-30T10:12:00Z"}
NEW = {"version": "v2.14.0", "at": "2026-12-03T20:58:00Z"}


def test_a_listing_of_versions_without_the_one_the_runs_other_results_show_running_is_a_stale_tool_result():
    # (TRAIL's API issue: the deploy list served from a stale cache; the logs name v2.14.0)
    stale = _planned([OLD])
    assert _found(stale, "tool_result_stale")[0] == [(2, "tool")], _found(stale, "tool_result_stale")[1]
    for run in (
        _planned([NEW, OLD]),
        # a newer version of another service
        _planned([NEW, OLD], ("query_logs", {"service": "search-api"}, {"lines": ["ERROR timeout (v2.15.0)"]})),
        # the run deployed the newer version itself: the listing was read before it existed
        _planned([NEW, OLD], ("deploy", {"service": "checkout-api", "version": "v2.15.0"}, {"status": "ok"}),
                 ("check_health", {"service": "checkout-api"}, {"version": "v2.15.0", "error_rate_percent": 0.2})),
    ):
        assert _found(run, "tool_result_stale")[0] == [], _found(run, "tool_result_stale")[1]


KENNEL = ("get_kennel", {"kennel_id": "K-12"}, {"kennel_id": "K-12", "dog_id": "D-4471", "issues": ["EAR-03"]})


def _kennel_team(handed: bool, reply: str):
    team = Team(task="Kennel K-12 was flagged at the morning round. Check the dog and book the vet.")
    team.turn("caretaker", KENNEL, report="Checked K-12: dog D-4471, issue EAR-03 (ear infection signs).", parent=team.agent("caretaker"))
    if not handed:
        team.said = [text_message("user", "Vet visit: book it.")]  # the graph's state reset at the handover
    team.turn("scheduler", report=reply, parent=team.agent("scheduler"))
    return team.run(offered=("get_kennel", "book_vet"))


def test_an_agent_taking_over_without_what_the_one_before_found_and_asking_for_it_lost_the_handover():
    lost = _kennel_team(False, "I haven't been given the caretaker's note - which dog should I book?")
    found, report = _found(lost, "history_lost")
    assert found == [(6, "memory")], report
    # handed the note, a question about the booking itself is no loss; nor the request alone when nothing was found
    assert _found(_kennel_team(True, "D-4471 (EAR-03): morning or afternoon slot?"), "history_lost")[0] == []
    said = Team(task="Check kennel K-12.").turn("caretaker", report="K-12 looks fine.", parent=0)
    assert _found(said.run(), "history_lost")[0] == []


def _delegated(sent: str):
    brief = "Write the product page for SKU-4410 (oak bench).\nStyle guide: SG-22 - follow it.\nDue: 2026-12-11."
    steps = [llm(1, calls=[("ask_writer", {"writer_id": "W-3", "brief": brief}, "c1")], messages=[text_message("user", "Get SKU-4410's page written.")]),
             tool(2, "ask_writer", {"writer_id": "W-3", "brief": brief}, {"reply": "Submitted PG-90."}, requested_by=1, call_id="c1"),
             dict(agent(3, "writer"), parent_index=2),
             llm(4, text="Submitted PG-90.", messages=[text_message("system", "You are a copywriter."), text_message("user", sent)], parent=3),
             llm(5, text="The page is written (PG-90).", messages=[text_message("user", "Get SKU-4410's page written.")])]
    return record(*steps, task="Get SKU-4410's page written.")


def test_a_sub_agent_sent_only_part_of_the_brief_its_delegating_call_carried_lost_it():
    found, report = _found(_delegated("Write the product page for SKU-4410 (oak bench)."), "history_lost")
    assert found == [(4, "memory")], report
    whole = "Write the product page for SKU-4410 (oak bench).\nStyle guide: SG-22 - follow it.\nDue: 2026-12-11."
    assert _found(_delegated(whole), "history_lost")[0] == []
