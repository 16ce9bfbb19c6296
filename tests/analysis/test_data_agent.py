"""A data-analysis agent's and a policy-bound support agent's good runs (heldout8's blind set): what they work out
or look up on the way is no fault - a share of a total, a date a policy's period away, "the 30-day window", a
query corrected after reading the schema, a result whose columns follow the query, a rejected refund's own shape -
each beside the fault it must still find. Hand-built runs."""

from __future__ import annotations

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool

POLICY = "You are a support agent. Refunds only within 30 days of delivery. Confirm with the user before any refund."
ROWS = [{"region": "EU", "revenue": 1640.4}, {"region": "APAC", "revenue": 1161.5}, {"region": "US", "revenue": 1040.2}]
Q3 = "SELECT c.region, SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1"


def _run(*turns, answer: str, ask: str = "Which region had the most revenue in Q3 2026?", system: str | None = None,
         run_id: str = "run-b"):
    """One model call per turn: (tool, arguments, result[, status, error]) asked for and run, then `answer`."""
    steps, shown = [], [*([text_message("system", system)] if system else []), text_message("user", ask)]
    for name, arguments, result, *failed in turns:
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        status, error = (failed + [None])[:2] if failed else ("ok", None)
        steps += [llm(index, calls=[(name, arguments, call_id)], messages=list(shown)),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id, status=status, error=error)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result if status == "ok" else error}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=list(shown)))
    return record(*steps, task=ask, run_id=run_id)


def _kinds(run, history=None):
    found = detect(run, history)
    return {(f.kind, f.index) for f in found}, format_findings(found)


def test_a_share_of_the_rows_total_is_worked_out_and_a_share_of_nothing_is_not():
    worked = _run(("run_sql", {"query": Q3}, ROWS), answer="EU led with 1,640.40 USD, 42.7% of the 3,842.10 USD total.")
    assert _kinds(worked)[0] == set(), _kinds(worked)[1]
    made_up = _run(("run_sql", {"query": Q3}, ROWS), answer="EU led with 1,640.40 USD, 47.3% of the 3,842.10 USD total.")
    assert ("ungrounded_answer", 3) in _kinds(made_up)[0]


ORDER = {"order_id": "#1034", "item": "desk lamp", "amount": 35.0, "status": "delivered", "delivered_at": "2026-11-10"}


def test_a_policys_period_and_a_date_that_far_from_a_result_are_grounded():
    for answer in ("Order #1034 is within the 30-day window: you can ask for a refund until 2026-12-10.",
                   "The refund window for #1034 stays open until 10 December 2026."):
        run = _run(("get_order", {"order_id": "#1034"}, ORDER), answer=answer, ask="Can I still return #1034?", system=POLICY)
        assert _kinds(run)[0] == set(), _kinds(run)[1]
    # a day no period away from anything given (durations in prose - "a 45-day window" - are never judged)
    run = _run(("get_order", {"order_id": "#1034"}, ORDER), answer="You can ask for a refund until 2026-12-17.",
               ask="Can I still return #1034?", system=POLICY)
    found = [f for f in detect(run) if f.kind == "ungrounded_answer"]
    assert found and "2026-12-17" in found[0].message, format_findings(detect(run))


BINDER = "BinderException: Binder Error: Table \"o\" does not have a column named \"total\""
SCHEMA = {"columns": [["id", "INTEGER"], ["customer_id", "INTEGER"], ["amount", "DECIMAL"], ["created_at", "DATE"]]}


def test_a_query_corrected_after_reading_the_schema_is_no_ignored_error():
    wrong = {"query": "SELECT SUM(o.total) FROM orders o"}
    corrected = _run(("run_sql", wrong, None, "error", BINDER), ("describe_table", {"name": "orders"}, SCHEMA),
                     ("run_sql", {"query": "SELECT SUM(o.amount) AS revenue FROM orders o"}, [{"revenue": 3842.1}]),
                     answer="Revenue was 3,842.10 USD.")
    assert not {k for k, _i in _kinds(corrected)[0]} & {"tool_error_ignored"}, _kinds(corrected)[1]
    gone_past = _run(("run_sql", wrong, None, "error", BINDER), ("describe_table", {"name": "orders"}, SCHEMA),
                     answer="Revenue was about 3,900 USD.")
    assert "tool_error_ignored" in {k for k, _i in _kinds(gone_past)[0]}, _kinds(gone_past)[1]


def _sql_history(*results):
    return History.from_records([_run(("run_sql", {"query": query}, rows), answer="ok", run_id=f"h{n}")
                                 for n, (query, rows) in enumerate(results)])


def test_a_result_whose_columns_follow_its_query_is_no_drift_and_a_column_still_asked_for_that_is_gone_is():
    history = _sql_history(*[(Q3, ROWS)] * 3)
    orders = "SELECT c.region, COUNT(*) AS orders FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1"
    other = _run(("run_sql", {"query": orders}, [{"region": "EU", "orders": 14}]), answer="EU had 14 orders.")
    assert not {k for k, _i in _kinds(other, history)[0]} & {"tool_output_drift"}, _kinds(other, history)[1]
    lost = _run(("run_sql", {"query": Q3}, [{"region": "EU"}, {"region": "US"}]), answer="EU led.")
    assert ("tool_output_drift", 2) in _kinds(lost, history)[0], _kinds(lost, history)[1]


REFUNDED = {"status": "refunded", "refund_id": "R-7781", "order_id": "#1038", "amount": 19.0, "eta_days": 5}


def test_an_outcome_earlier_runs_never_had_has_its_own_shape_and_a_known_outcome_missing_a_field_is_drift():
    history = History.from_records([_run(("refund", {"order_id": "#1038", "amount": 19.0}, REFUNDED), answer="Refunded.",
                                         run_id=f"h{n}") for n in range(3)])
    rejected = _run(("refund", {"order_id": "#1038", "amount": 19.0},
                     {"status": "rejected", "reason": "order #1038 was already refunded"}),
                    answer="Order #1038 was already refunded; no new refund was issued.")
    assert not {k for k, _i in _kinds(rejected, history)[0]} & {"tool_output_drift"}, _kinds(rejected, history)[1]
    thin = _run(("refund", {"order_id": "#1038", "amount": 19.0}, {"status": "refunded", "order_id": "#1038"}),
                answer="Refunded 19.00 USD.")
    assert ("tool_output_drift", 2) in _kinds(thin, history)[0], _kinds(thin, history)[1]
    # a status where earlier results had none is new structure, judged as ever
    plain = History.from_records([_run(("run_sql", {"query": Q3}, ROWS), answer="ok", run_id=f"p{n}") for n in range(3)])
    wrapped = _run(("run_sql", {"query": Q3}, {"status": "ok", "rows": ROWS}), answer="EU led.")
    assert ("tool_output_drift", 2) in _kinds(wrapped, plain)[0], _kinds(wrapped, plain)[1]


SUPPORT = ("You are the support agent. Policy: 1. Refunds only within 30 days of delivery. 2. Before any write action "
           "(refund, exchange, cancel) state the action and its details and obtain the user's explicit confirmation (yes).")
KETTLE = {"order_id": "#1043", "item": "blue kettle", "amount": 49.9, "status": "delivered", "delivered_at": "2026-11-24"}
REFUNDED_1043 = {"status": "refunded", "order_id": "#1043", "amount": 49.9, "refund_id": "R-81043"}


def _conversation(*turns, system: str = SUPPORT, answer: str = "Done."):
    """A support conversation as the model calls see it: turns are ("user", text), ("assistant", text) or
    (tool, arguments, result); each tool turn is one model call asking for it and its step, then `answer`."""
    steps, shown = [], [text_message("system", system)]
    for turn in turns:
        if turn[0] in ("user", "assistant"):
            shown.append(text_message(*turn))
            if turn[0] == "assistant":
                steps.append(llm(len(steps) + 1, text=turn[1], messages=list(shown[:-1])))
            continue
        name, arguments, result = turn
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, arguments, call_id)], messages=list(shown)),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=list(shown)))
    return record(*steps, task=turns[0][1])


ASK_REFUND = ("user", "The blue kettle from order #1043 arrived broken. Can I get a refund?")
LOOKED_UP = ("get_order", {"order_id": "#1043"}, KETTLE)
OFFER = ("assistant", "Order #1043 (blue kettle, 49.90 USD) is within the 30-day window. Shall I refund 49.90 USD?")
REFUND = ("refund", {"order_id": "#1043", "amount": 49.9}, REFUNDED_1043)


def test_a_write_the_instructions_gate_on_the_users_yes_without_one_is_an_unconfirmed_action():
    for turns in ([ASK_REFUND, LOOKED_UP, REFUND],  # never asked
                  [ASK_REFUND, LOOKED_UP, OFFER, ("user", "Not yet, I need to think about it."), REFUND]):  # a no
        found = [(f.kind, f.layer) for f in detect(_conversation(*turns)) if f.kind == "unconfirmed_action"]
        assert found == [("unconfirmed_action", "model")], format_findings(detect(_conversation(*turns)))
    for turns, system in (([ASK_REFUND, LOOKED_UP, OFFER, ("user", "Yes, please go ahead."), REFUND], SUPPORT),
                          ([ASK_REFUND, LOOKED_UP, REFUND], "You are the support agent. Refund broken items."),  # no rule
                          # a handoff changes nothing: "any write action" does not cover it
                          ([ASK_REFUND, LOOKED_UP, ("transfer_to_human", {"summary": "broken kettle"}, {"ticket": "HD-1"})],
                           "Before any write action obtain the user's explicit confirmation.")):
        run = _conversation(*turns, system=system)
        assert "unconfirmed_action" not in {f.kind for f in detect(run)}, format_findings(detect(run))


def test_an_action_on_another_id_or_amount_than_the_models_own_words_is_a_wrong_target():
    partial = ("assistant", "Shall I refund 15.00 USD of order #1043 as a partial refund, and you keep the kettle?")
    run = _conversation(ASK_REFUND, LOOKED_UP, partial, ("user", "Yes please."), REFUND)
    assert [(f.kind, f.index) for f in detect(run) if f.kind == "wrong_target"] == [("wrong_target", 4)], format_findings(detect(run))
    right = _conversation(ASK_REFUND, LOOKED_UP, partial, ("user", "Yes please."),
                          ("refund", {"order_id": "#1043", "amount": 15.0}, dict(REFUNDED_1043, amount=15.0)))
    assert "wrong_target" not in {f.kind for f in detect(right)}, format_findings(detect(right))
    # the model's own words beside the call: "I'll cancel order #1066" and cancel(#1065)
    steps = [llm(1, text="I'll cancel order #1066 now.", calls=[("cancel", {"order_id": "#1065"}, "c1")]),
             tool(2, "cancel", {"order_id": "#1065"}, {"status": "cancelled"}, requested_by=1, call_id="c1"),
             llm(3, text="Done.")]
    assert [f.index for f in detect(record(*steps)) if f.kind == "wrong_target"] == [1]
    steps[0] = llm(1, text="I'll cancel order #1065 now.", calls=[("cancel", {"order_id": "#1065"}, "c1")])
    assert "wrong_target" not in {f.kind for f in detect(record(*steps))}


def test_an_answer_saying_done_what_the_tool_answered_it_did_not_do_is_an_action_not_taken():
    rejected = ("refund", {"order_id": "#1043", "amount": 49.9},
                {"status": "rejected", "reason": "order #1043 was already refunded; no new refund was issued"})
    yes = ("user", "Yes.")
    claimed = _conversation(ASK_REFUND, LOOKED_UP, OFFER, yes, rejected, answer="Done: I refunded 49.90 USD for order #1043.")
    found = [(f.kind, f.layer) for f in detect(claimed) if f.kind == "action_not_taken"]
    assert found == [("action_not_taken", "model")], format_findings(detect(claimed))
    for answer in ("Order #1043 was already refunded, so no new refund was issued.", "I could not refund it: it was refunded before."):
        honest = _conversation(ASK_REFUND, LOOKED_UP, OFFER, yes, rejected, answer=answer)
        assert "action_not_taken" not in {f.kind for f in detect(honest)}, format_findings(detect(honest))
    done = _conversation(ASK_REFUND, LOOKED_UP, OFFER, yes, REFUND, answer="Done: I refunded 49.90 USD for order #1043.")
    assert detect(done) == [], format_findings(detect(done))


def test_one_rows_figure_under_another_rows_label_is_an_answer_misread():
    misread = _run(("run_sql", {"query": Q3}, ROWS), answer="APAC had the highest revenue in Q3 2026: 1,640.40 USD.")
    found = [(f.kind, f.index, f.layer) for f in detect(misread) if f.kind == "answer_misread"]
    assert found == [("answer_misread", 3, "model")], format_findings(detect(misread))
    customers = [{"name": "Granite Inc", "orders": 11}, {"name": "Acme GmbH", "orders": 3}, {"name": "Delta BV", "orders": 3}]
    months = [{"month": "2026-07", "revenue": 1603.4}, {"month": "2026-08", "revenue": 1184.8}]
    for rows, answer in [
        (ROWS, "EU had the highest revenue in Q3 2026: 1,640.40 USD, 478.90 USD ahead of APAC."),
        (ROWS, "EU (1,640.40 USD) led APAC (1,161.50 USD)."),  # two rows in one clause: each beside its own
        (customers, "The top 3 customers by orders: Granite Inc (11 orders), Acme GmbH (3 orders), Delta BV (3 orders)."),
        (months, "Revenue by month: 2026-07 1,603.40 USD, 2026-08 1,184.80 USD."),
    ]:
        run = _run(("run_sql", {"query": Q3}, rows), answer=answer)
        assert "answer_misread" not in {f.kind for f in detect(run)}, format_findings(detect(run))


def test_a_thing_claimed_checked_by_its_id_that_nothing_looked_up_is_an_action_not_taken():
    user = ("get_user", {"email": "li.wei@example.com"}, {"user_id": "U-503", "orders": ["#1061", "#1065"]})
    claimed = _conversation(("user", "Where is my order #1065?"), user,
                            answer="I checked the status of order #1065: it has shipped and should arrive within 2 days.")
    found = [(f.kind, f.layer) for f in detect(claimed) if f.kind == "action_not_taken"]
    assert found == [("action_not_taken", "model")], format_findings(detect(claimed))
    looked_up = ("get_order", {"order_id": "#1065"}, {"order_id": "#1065", "status": "shipped"})
    listed = ("list_orders", {"user_id": "U-503"}, [{"order_id": "#1065", "status": "shipped"}])
    for turns in ([user, looked_up], [user, listed]):  # looked up by id, or a result holding its record
        run = _conversation(("user", "Where is my order #1065?"), *turns,
                            answer="I checked the status of order #1065: it has shipped.")
        assert "action_not_taken" not in {f.kind for f in detect(run)}, format_findings(detect(run))
    honest = _conversation(("user", "Where is my order #1065?"), user,
                           answer="I have not checked order #1065 yet; shall I look it up?")
    assert "action_not_taken" not in {f.kind for f in detect(honest)}, format_findings(detect(honest))


def test_the_same_failing_query_asked_for_again_is_the_models_retry_loop_and_a_failing_database_the_tools():
    bad = {"query": "SELECT COUNT(*) FROM customers WHERE churn_date >= DATE '2026-11-01'"}
    binder = 'BinderException: Referenced column "churn_date" not found in FROM clause! Candidate bindings: "churned_at"'
    looped = _run(*[("run_sql", bad, None, "error", binder)] * 3, answer="3 customers churned in November.", ask="How many churned?")
    found = [(f.index, f.layer) for f in detect(looped) if f.kind == "retry_loop"]
    assert found == [(3, "model")], format_findings(detect(looped))  # the model's first asking again
    down = _run(*[("run_sql", bad, None, "error", "IOException: could not connect to the database server")] * 3,
                answer="The database is unreachable, I could not count them.", ask="How many churned?")
    assert [(f.index, f.layer) for f in detect(down) if f.kind == "retry_loop"] == [(2, "tool")], format_findings(detect(down))


def test_a_ranking_query_keeping_fewer_rows_than_the_top_n_asked_is_a_task_ignored():
    ask = "Who are our top 3 customers by revenue this year?"
    ranked = "SELECT c.name, SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1 ORDER BY 2 DESC"
    rows = [{"name": "Granite Inc", "revenue": 1640.4}]
    one = _run(("run_sql", {"query": ranked + " LIMIT 1"}, rows), answer="Our top customer is Granite Inc (1,640.40 USD).", ask=ask)
    assert [(f.kind, f.index) for f in detect(one) if f.kind == "task_ignored"] == [("task_ignored", 1)], format_findings(detect(one))
    for query in (ranked + " LIMIT 3", ranked + " LIMIT 10", "SELECT * FROM customers LIMIT 1"):  # as asked, more, a peek
        run = _run(("run_sql", {"query": query}, rows), answer="Granite Inc leads with 1,640.40 USD.", ask=ask)
        assert "task_ignored" not in {f.kind for f in detect(run)}, (query, format_findings(detect(run)))
