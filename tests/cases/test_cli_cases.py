"""`agentotel check` and `agentotel case new|check|run`: the three commands from a bad run to a case."""

from __future__ import annotations

import io
import json

import pytest

import agentotel
from agentotel.cli import build_parser, main
from orders_agent import TASK, World, buggy_agent


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    World.shape, World.live_calls = 1, 0
    with agentotel.run("orders", task=TASK):
        buggy_agent(TASK)
    World.shape = 2
    with agentotel.run("orders", task=TASK) as bad:
        buggy_agent(TASK)
    agentotel.flush()
    yield directory, bad.id
    agentotel.shutdown()


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_three_commands_from_a_bad_run_to_a_case_that_fails_on_the_bug_and_passes_on_the_fix(store, tmp_path, monkeypatch):
    directory, run = store
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("case", "new", run[:8], "--dir", str(directory), "-o", "cases/orders.yaml")
    assert code == 0, err
    assert "wrote cases/orders.yaml: cut at step 3 [tool, tool_output_drift], 4 tool and 5 model fixture(s)" in out
    assert "replay: tools frozen, models frozen" in out
    assert "warning: offline (models frozen), a fix that changes what the model is shown stops the replay at step 3" in err
    code, out, err = cli("case", "run", "cases/orders.yaml", "--agent", "orders_agent:buggy_agent", "--dir", str(directory),
                         "--html", "artifacts")
    assert code == 3 and "FAIL  must_not_repeat" in out, err
    page = (tmp_path / "artifacts" / "orders.html").read_text()  # the failing replay, as one page for CI
    assert "connect-src 'none'" in page and '"kind":"run"' in page and "page: artifacts/orders.html" in out
    # Offline, the fix departs from the recording at step 3 and nothing says what the model must see there:
    # the gates about the rest of the run are not reached, and that fails the case (no vacuous pass).
    code, out, _err = cli("case", "run", "cases/orders.yaml", "--agent", "orders_agent:fixed_agent", "--dir", str(directory))
    assert code == 3 and "replay stopped at step 3 (departed)" in out
    assert "NOT REACHED  must_not_repeat" in out and "--evidence TEXT" in out
    World.model_calls = 0
    code, out, _err = cli("case", "run", "cases/orders.yaml", "--agent", "orders_agent:fixed_agent", "--dir", str(directory),
                          "--models", "live")
    assert code == 0 and "PASS" in out and World.model_calls == 1  # step 3 went to the (scripted) model
    code, out, _err = cli("case", "check", "cases/orders.yaml", "--dir", str(directory), "--json")
    assert code == 0 and json.loads(out)["passed"] is True  # the latest replay is the fixed agent's


def test_mistakes_are_one_line_errors(store, tmp_path):
    directory, run = store
    case = tmp_path / "c.yaml"
    assert cli("case", "new", run, "--dir", str(directory), "-o", str(case))[0] == 0
    code, _out, err = cli("case", "check", str(case), "--dir", str(directory))
    assert code == 1 and err.strip().endswith("replay it first, or name a run") and "Traceback" not in err
    code, _out, err = cli("case", "new", run, "--dir", str(directory), "--at", "99", "-o", str(case))
    assert code == 1 and "has no step 99" in err
    code, _out, err = cli("case", "run", str(case), "--dir", str(directory))
    assert code == 1 and "no agent entry point" in err
    code, _out, err = cli("case", "run", str(case), "--agent", "nowhere:agent", "--dir", str(directory))
    assert code == 1 and "cannot import nowhere" in err


def test_the_commands_have_help_with_an_example():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("check", "case"):
        text = sub.choices[name].format_help()
        assert "Example:\n  agentotel " + name in text


def test_a_frozen_case_with_evidence_runs_offline(store, tmp_path, monkeypatch):
    directory, run = store
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("case", "new", run, "--dir", str(directory), "-o", "cases/offline.yaml", "--mode", "frozen",
                         "--evidence", "2 orders", "--agent", "orders_agent:buggy_agent")
    assert code == 0, err
    World.model_calls = World.live_calls = 0
    code, out, _err = cli("case", "run", "cases/offline.yaml", "--dir", str(directory))
    assert code == 3 and "FAIL  required_evidence: step 3 was not shown '2 orders'" in out
    code, out, _err = cli("case", "run", "cases/offline.yaml", "--agent", "orders_agent:fixed_agent", "--dir", str(directory))
    assert code == 0, out
    assert World.model_calls == 0 and World.live_calls == 0


def test_each_case_subcommand_has_its_own_help_with_an_example(capsys):
    for action in ("new", "check", "run", "compare"):
        with pytest.raises(SystemExit):
            main(["case", action, "--help"])
        text = capsys.readouterr().out
        assert f"usage: agentotel case {action}" in text and f"Example:\n  agentotel case {action} " in text


def test_a_suite_is_reported_and_two_reports_compared_for_a_pull_request(store, tmp_path, monkeypatch):
    directory, run = store
    monkeypatch.chdir(tmp_path)
    for name in ("orders", "orders-again"):
        code, _out, err = cli("case", "new", run, "--dir", str(directory), "-o", f"cases/{name}.yaml", "--mode", "frozen",
                              "--evidence", "2 orders")
        assert code == 0, err
    (tmp_path / "cases" / "notes.yaml").write_text("not: a case\n")
    code, out, err = cli("case", "run", "cases", "--agent", "orders_agent:fixed_agent", "--dir", str(directory),
                         "--report", "before.json")
    assert code == 0 and "2/2 case(s) passed; report: before.json" in out, out + err
    code, out, _err = cli("case", "run", "cases", "--agent", "orders_agent:buggy_agent", "--dir", str(directory),
                          "--report", "after.json")
    assert code == 3
    code, out, _err = cli("case", "compare", "before.json", "after.json")
    assert code == 1  # a case that passed now fails
    assert "**2 case(s) that passed now fail:** `orders-again`, `orders`" in out
    assert "| pass rate | 2/2 (100%) | 0/2 (0%) |" in out
    assert "| failed `must_not_repeat` | 0 | 2 |" in out and "| unsafe actions (forbidden tools or arguments) | 0 | 0 |" in out
    assert "| `orders` | pass | **FAIL** | must_not_repeat, required_evidence | 1 → 4 | 2 → 9 |" in out  # tool calls, steps
    code, out, _err = cli("case", "compare", "after.json", "before.json", "--json")
    data = json.loads(out)
    assert code == 0 and data["fixed"] == ["orders-again", "orders"] and data["regressions"] == []
    assert data["after"]["pass_rate"] == 1.0 and data["before"]["gate_failures"]["must_not_repeat"] == 2
    # Replays are not production data: the store's runs are the two recorded ones; the replays are apart.
    code, out, _err = cli("runs", "--dir", str(directory), "--json")
    assert [r["name"] for r in json.loads(out)] == ["orders", "orders"]
    code, out, _err = cli("runs", "--dir", str(directory / "replays"), "--json")
    assert {r["name"] for r in json.loads(out)} == {"replay orders", "replay orders-again"}
    assert all(r["status"] == "ok" and not r["cost_usd"] for r in json.loads(out))
    code, out, _err = cli("runs", "--dir", str(directory), "--json", "--include-replays", "--limit", "0")
    assert sorted(r["name"] for r in json.loads(out)) == ["orders", "orders"] + ["replay orders"] * 2 + ["replay orders-again"] * 2


def test_an_agent_that_cannot_be_imported_names_the_module_and_the_paths_tried(store, tmp_path, monkeypatch):
    directory, run = store
    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert cli("case", "new", run, "--dir", str(directory), "-o", "cases/c.yaml")[0] == 0
    code, _out, err = cli("case", "run", "cases/c.yaml", "--agent", "support_agent:answer", "--dir", str(directory))
    assert code == 1 and "cannot import support_agent (No module named 'support_agent')" in err
    assert f"looked in {project / 'cases'}, {project} and the Python path" in " ".join(err.split())
    # The agent next to the project (the current directory): found with no PYTHONPATH.
    (project / "support_agent.py").write_text("from orders_agent import fixed_agent as answer\n")
    code, out, err = cli("case", "run", "cases/c.yaml", "--agent", "support_agent:answer", "--dir", str(directory), "--models", "live")
    assert code == 0, out + err
