"""A data agent's query and outputs against the question (heldout8's misses, in another trade): a limit the question
sets that no query applies while the answer claims it; a file written under another name than the one asked for; a
chart of one column titled as another. Each beside the legitimate run that looks like it. Hand-built runs."""

from __future__ import annotations

from agentotel.analysis.detectors import detect, format_findings
from runs_build import record, text_message, tool_loop

ANALYST = "You are an HR analyst. Answer from the HR database with run_sql; chart with make_chart; save files with save_file."


def _run(ask: str, turns, answer: str):
    return record(*tool_loop([text_message("system", ANALYST), text_message("user", ask)], turns, answer), task=ask)


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _headcount(sql: str, answer: str, ask: str = "What is our headcount by department, excluding contractors?"):
    return _run(ask, [("run_sql", {"query": sql}, [{"department": "Sales", "n": 41}, {"department": "R&D", "n": 77}])], answer)


def test_a_limit_the_question_sets_that_no_query_applies_while_the_answer_claims_it_is_task_ignored():
    unlimited = _headcount("SELECT department, COUNT(*) AS n FROM employees GROUP BY department",
                           "Headcount excluding contractors: Sales 41, R&D 77.")
    assert _found(unlimited, "task_ignored")[0] == [(1, "model")], _found(unlimited, "task_ignored")[1]
    limited = _headcount("SELECT department, COUNT(*) AS n FROM employees WHERE contract_type <> 'contractor' GROUP BY department",
                         "Headcount excluding contractors: Sales 41, R&D 77.")
    assert _found(limited, "task_ignored")[0] == [], _found(limited, "task_ignored")[1]
    # the answer says what it counted: not passed off as the question's
    said = _headcount("SELECT department, COUNT(*) AS n FROM employees GROUP BY department",
                      "Headcount (all staff; the database has no contract type): Sales 41, R&D 77.")
    assert _found(said, "task_ignored")[0] == [], _found(said, "task_ignored")[1]
    place = _headcount("SELECT department, COUNT(*) AS n FROM employees GROUP BY department",
                       "Headcount in the UK: Sales 41, R&D 77.", ask="What is our headcount by department in the UK?")
    assert _found(place, "task_ignored")[0] == [(1, "model")], _found(place, "task_ignored")[1]
    placed = _headcount("SELECT department, COUNT(*) AS n FROM employees WHERE country = 'UK' GROUP BY department",
                        "Headcount in the UK: Sales 41, R&D 77.", ask="What is our headcount by department in the UK?")
    assert _found(placed, "task_ignored")[0] == [], _found(placed, "task_ignored")[1]


def test_a_file_written_under_another_name_than_the_one_asked_for_is_task_ignored():
    ask = "Count the leavers of 2026 and save the figure to exports/leavers-2026.csv."
    rows = ("run_sql", {"query": "SELECT COUNT(*) AS n FROM employees WHERE left_on >= DATE '2026-01-01'"}, [{"n": 12}])
    elsewhere = _run(ask, [rows, ("save_file", {"path": "exports/leavers.csv", "text": "n\n12\n"}, {"saved": True})], "12 leavers; saved.")
    assert _found(elsewhere, "task_ignored")[0] == [(3, "model")], _found(elsewhere, "task_ignored")[1]
    there = _run(ask, [rows, ("save_file", {"path": "exports/leavers-2026.csv", "text": "n\n12\n"}, {"saved": True})], "12 leavers; saved.")
    assert _found(there, "task_ignored")[0] == [], _found(there, "task_ignored")[1]
    # a path the request only reads from is no file to write
    read = _run("Compare exports/leavers-2025.csv with this year's leavers and save a note.", [
        rows, ("save_file", {"path": "notes/leavers.md", "text": "12 this year"}, {"saved": True})], "Saved.")
    assert _found(read, "task_ignored")[0] == [], _found(read, "task_ignored")[1]


def test_a_chart_of_one_column_titled_as_another_is_answer_misread():
    rows = [{"week": "W1", "signups": 120, "churned": 14}, {"week": "W2", "signups": 98, "churned": 21},
            {"week": "W3", "signups": 143, "churned": 9}]
    query = ("run_sql", {"query": "SELECT week, signups, churned FROM weekly"}, rows)

    def charted(data):
        return _run("Chart weekly signups.", [query, ("make_chart", {"title": "Signups by week", "data": data}, {"chart": "c.png"})],
                    "Charted.")
    wrong = charted({"W1": 14, "W2": 21, "W3": 9})
    assert _found(wrong, "answer_misread")[0] == [(3, "model")], _found(wrong, "answer_misread")[1]
    right = charted({"W1": 120, "W2": 98, "W3": 143})
    assert _found(right, "answer_misread")[0] == [], _found(right, "answer_misread")[1]


def test_figures_answered_over_a_query_that_returned_no_rows_are_the_models_and_over_an_empty_search_the_products():
    ask = "How many people did we hire in March 2026, and at what total salary?"
    sql = ("run_sql", {"query": "SELECT id, salary FROM employees WHERE hired_on >= DATE '2026-03-01' AND hired_on < DATE '2026-04-01'"}, [])
    made_up = _run(ask, [sql], "We hired 3 people in March 2026, at a total salary of 214,500 EUR.")
    assert _found(made_up, "answer_without_evidence")[0] == [(3, "model")], _found(made_up, "answer_without_evidence")[1]
    honest = _run(ask, [sql], "We hired nobody in March 2026: the query returned no rows.")
    assert _found(honest, "answer_without_evidence")[0] == [], _found(honest, "answer_without_evidence")[1]
    # the handbook searched and nothing found: the knowledge the product holds falls short (its layer)
    search = ("search_handbook_docs", {"query": "relocation allowance"}, {"query": "relocation allowance", "passages": []})
    unknown = _run("What relocation allowance do new hires get?", [search], "New hires get a 5,000 EUR relocation allowance.")
    assert _found(unknown, "answer_without_evidence")[0] == [(3, "product")], _found(unknown, "answer_without_evidence")[1]


def _payroll(sql: str):
    return _run("What did we pay in salaries in 2026 to people who took a training course?",
                [("run_sql", {"query": sql}, [{"paid": 1843200.0}])], "We paid 1,843,200 EUR to people who took a course.")


def test_a_sum_over_a_join_to_a_table_with_several_rows_per_key_is_an_aggregate_fanned_out():
    for sql in ("SELECT SUM(p.amount) AS paid FROM payslips p JOIN enrolments e ON e.employee_id = p.employee_id WHERE p.year = 2026",
                "SELECT AVG(p.amount) FROM payslips AS p INNER JOIN enrolments AS e ON p.employee_id = e.employee_id",
                "SELECT COUNT(p.id) FROM payslips p JOIN enrolments e ON e.payslip_ref = p.id"):
        found = _found(_payroll(sql), "aggregate_fanned_out")
        assert found[0] == [(1, "model")], (sql, found[1])
    for sql in (  # each payslip kept once: the other table's key, a DISTINCT subquery, EXISTS, DISTINCT values, no join
            "SELECT SUM(p.amount) FROM payslips p JOIN employees e ON e.id = p.employee_id WHERE e.trained",
            "SELECT SUM(p.amount) FROM payslips p JOIN employees e ON p.employee_id = e.employee_id",
            "SELECT SUM(p.amount) FROM payslips p JOIN (SELECT DISTINCT employee_id FROM enrolments) t ON t.employee_id = p.employee_id",
            "SELECT SUM(p.amount) FROM payslips p WHERE EXISTS (SELECT 1 FROM enrolments e WHERE e.employee_id = p.employee_id)",
            "SELECT COUNT(DISTINCT p.id) FROM payslips p JOIN enrolments e ON e.employee_id = p.employee_id",
            "SELECT e.course, SUM(e.fee) FROM enrolments e JOIN courses c ON c.course_id = e.course_id GROUP BY 1",
            "SELECT e.id, SUM(p.amount) FROM payslips p JOIN enrolments e ON e.employee_id = p.employee_id GROUP BY e.id",
            "SELECT SUM(amount) FROM payslips WHERE year = 2026"):
        assert _found(_payroll(sql), "aggregate_fanned_out")[0] == [], sql


def test_a_query_one_literal_apart_from_one_that_returned_rows_is_a_hole_in_the_data():
    def month(m, rows):
        return ("run_sql", {"query": f"SELECT COUNT(*) AS n FROM employees WHERE hired_month = '2026-{m:02d}'"}, rows)
    hole = _run("How did March 2026 hiring compare with February?", [month(3, [{"n": 14}]), month(2, [])],
                "We hired 14 people in March 2026, up from 11 in February.")
    assert _found(hole, "answer_without_evidence")[0] == [(5, "product")], _found(hole, "answer_without_evidence")[1]
