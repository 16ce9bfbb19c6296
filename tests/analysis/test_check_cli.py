"""`agentotel check RUN... [--fail-on]`, the agent's policy from pyproject.toml, and the `findings` view."""

from __future__ import annotations

import io
import json

import pytest

import agentotel
from agentotel.analysis.detectors import findings_table
from agentotel.cli import build_parser, main
from scripted import Shop, calls, default_order, says, scripted_client, support_agent

LOOKUP = ("lookup_order", {"order_id": "A-1042"})


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def runs(tmp_path):
    """A good run, a run whose tool output lost a field, and a run that crashed on a declined card."""
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    Shop.order, Shop.documents, Shop.card_declined = default_order(), [], False
    ids = {}
    with scripted_client() as (client, model):
        for name, setup, turns, harness in (
            ("good", lambda: None, (calls(LOOKUP), says("Order A-1042 has shipped with DHL.")), {}),
            ("drift", lambda: Shop.order.pop("carrier"), (calls(LOOKUP), says("Order A-1042 has shipped.")), {}),
            ("crash", lambda: setattr(Shop, "card_declined", True), (calls(("charge_card", {"amount": 9})), says("ok")),
             {"catch_tool_errors": False}),
        ):
            setup()
            model.script(*turns)
            with agentotel.run("order-support", task="Where is my order A-1042?") as run:
                try:
                    support_agent(client, "Where is my order A-1042?", **harness)
                except RuntimeError:
                    pass
            ids[name] = run.id
    agentotel.flush()
    yield directory, ids
    agentotel.shutdown()


def test_check_shows_each_finding_at_its_step_with_the_error_and_a_suggestion(runs):
    directory, ids = runs
    code, out, _err = cli("check", ids["good"], ids["drift"][:8], "--dir", str(directory))
    assert code == 0
    assert f"run {ids['good']}: no findings" in out
    assert "tool_output_drift" in out and "missing $.carrier" in out and "→ the tool's output changed shape" in out
    assert f"agentotel case new {ids['drift'][:12]} --at 3 --layer tool" in out
    code, out, _err = cli("check", ids["crash"], "--dir", str(directory))
    assert "run_failed" in out and "card declined by issuer (code 51)" in out


def test_fail_on_gates_ci_by_severity(runs):
    directory, ids = runs
    assert cli("check", ids["good"], "--dir", str(directory), "--fail-on", "warning")[0] == 0
    assert cli("check", ids["drift"], "--dir", str(directory))[0] == 0  # no --fail-on: a report, never a gate
    assert cli("check", ids["drift"], "--dir", str(directory), "--fail-on", "error")[0] == 0  # a warning only
    code, _out, err = cli("check", ids["good"], ids["drift"], "--dir", str(directory), "--fail-on", "warning")
    assert code == 1 and "--fail-on warning" in err
    code, out, _err = cli("check", ids["crash"], "--dir", str(directory), "--fail-on", "error", "--json")
    data = json.loads(out)
    assert code == 1 and data["worst"] == "error" and data["failed"] is True
    (finding,) = data["runs"][0]["findings"]
    assert set(finding) >= {"run_id", "index", "steps", "kind", "layer", "severity", "evidence", "suggestion"}
    assert (finding["run_id"], finding["index"], finding["kind"], finding["layer"]) == (ids["crash"], 2, "run_failed", "tool")


def test_the_agents_policy_comes_from_pyproject_and_options_override_it(runs, tmp_path, monkeypatch):
    directory, ids = runs
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.agentotel.check]\nmax_steps = 50\n[tool.agentotel.check.agents.order-support]\nforbidden_tools = ["lookup_order"]\n')
    monkeypatch.chdir(project)
    code, out, _err = cli("check", ids["good"], "--dir", str(directory), "--fail-on", "error", "--json")
    (finding,) = json.loads(out)["runs"][0]["findings"]
    assert code == 1 and (finding["kind"], finding["layer"], finding["index"]) == ("forbidden_tool", "product", 1)
    code, out, _err = cli("check", ids["good"], "--dir", str(directory), "--max-steps", "1", "--json")
    assert {f["kind"] for f in json.loads(out)["runs"][0]["findings"]} == {"forbidden_tool", "budget_exceeded"}
    (project / "pyproject.toml").write_text("[tool.agentotel.check]\nmax_step = 1\n")
    code, _out, err = cli("check", ids["good"], "--dir", str(directory))
    assert code == 1 and "unknown setting 'max_step'" in err


def test_findings_of_every_run_as_a_table_and_a_view(runs):
    directory, ids = runs
    table = findings_table(agentotel.open(directory))
    rows = sorted(zip(table["run_id"].to_pylist(), table["kind"].to_pylist(), table["index"].to_pylist()))
    assert rows == sorted([(ids["drift"], "tool_output_drift", 2), (ids["crash"], "run_failed", 2)])
    assert json.loads(table["evidence"].to_pylist()[0]) and set(table["severity"].to_pylist()) == {"warning", "error"}
    traces = agentotel.open(directory)
    by_sql = traces.sql('SELECT run_id, kind, "index" FROM findings ORDER BY kind').fetchall()
    assert sorted(by_sql) == rows
    assert [(f.kind, f.index) for f in traces.findings(ids["drift"])] == [("tool_output_drift", 2)]
    held = traces.findings(ids["good"], policy={"forbidden_tools": ["lookup_order"]})  # a policy as plain settings
    assert [(f.kind, f.layer, f.severity) for f in held] == [("forbidden_tool", "product", "error")]


def test_check_has_help_with_an_example():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert "Example:\n  agentotel check" in sub.choices["check"].format_help()


def test_a_rule_that_raises_costs_its_own_findings_only(caplog, monkeypatch):
    """One rule's bug on a run's odd data must not cost the user every other finding: it is left out and logged
    once (the suite's conftest fails any test where a rule raised, so here the record is cleared after)."""
    from agentotel.analysis import detectors
    from runs_build import llm, record, tool

    def broken(_run):
        raise KeyError("charge_id")

    run = record(llm(1, calls=[("lookup", {"q": "x"}, "c1")]), tool(2, "lookup", {"q": "x"}, {"rows": []}, status="error",
                                                                    error="RuntimeError: down", requested_by=1, call_id="c1"),
                 llm(3, text="Here are the rows."))
    expected = [(f.kind, f.index) for f in detectors.detect(run)]
    assert expected
    monkeypatch.setattr(detectors, "_DETECTORS", (broken, *detectors._DETECTORS))
    with caplog.at_level("ERROR", logger="agentotel.analysis.detectors"):
        assert [(f.kind, f.index) for f in detectors.detect(run)] == expected
        assert [(f.kind, f.index) for f in detectors.detect(run)] == expected
    assert [r.getMessage() for r in caplog.records if "broken" in r.getMessage()] == [
        "agentotel check: the rule broken failed on run run-b and was left out"]
    assert detectors.BROKEN == {"broken"}
    detectors.BROKEN.clear()
