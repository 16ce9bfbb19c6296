"""The pytest plugin: case files collected as tests, marked with their layer, replayed and judged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentotel
from agentotel.cases import Case, findings, load_run, new_case
from orders_agent import TASK, World, buggy_agent

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def project(tmp_path):
    """A user's project: the agent module, and three cases cut from a recorded looping run."""
    store = tmp_path / "traces"
    agentotel.instrument(store)
    World.shape, World.live_calls = 1, 0
    try:
        with agentotel.run("orders", task=TASK) as good:
            good.output = buggy_agent(TASK)
        World.shape = 2
        with agentotel.run("orders", task=TASK) as bad:
            bad.output = buggy_agent(TASK)
        agentotel.flush()
        traces = agentotel.open(store)
        found = findings(traces, bad.id)
        base = new_case(load_run(traces, bad.id), at=3, layer="tool", found=found)
        base.assertions.required_evidence = ["2 orders"]  # offline, what the model must be shown at step 3
    finally:
        agentotel.shutdown()
    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n")
    shutil.copy(HERE / "orders_agent.py", project / "orders_agent.py")
    for name, layer, agent in (("buggy", "tool", "buggy_agent"), ("fixed", "tool", "fixed_agent"), ("prompt-side", "prompt", "fixed_agent")):
        case = Case.from_dict(base.to_dict())
        case.name, case.layer, case.agent = name, layer, f"orders_agent:{agent}"
        case.save(project / "cases" / f"{name}.yaml")
    (project / "cases" / "notes.yaml").write_text("not: a case\n")  # other YAML is left alone
    return project


def pytest_in(project: Path, *args: str, tmpdir: Path | None = None) -> subprocess.CompletedProcess:
    """pytest run from the project folder as a user runs it: agentotel importable, the project NOT on
    PYTHONPATH (the plugin imports the agent from the case's folder and the current directory)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTOTEL_", "OTEL_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "collector")]), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "agentotel.cases.pytest_plugin", "-p", "no:cacheprovider", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )


def collect_in(project: Path, capsys, monkeypatch, *args: str) -> tuple[int, list[str]]:
    """Collection only, in this process (nothing is replayed, so nothing global changes)."""
    monkeypatch.chdir(project)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the plugin under test
    code = pytest.main(["-p", "agentotel.cases.pytest_plugin", "-p", "no:cacheprovider", "--collect-only", "-q",
                        "--rootdir", str(project), "cases", *args])
    out = capsys.readouterr().out
    return int(code), out.splitlines()


def test_each_case_is_one_test_selected_by_its_layer(project, capsys, monkeypatch):
    code, lines = collect_in(project, capsys, monkeypatch)
    assert code == 0, lines
    assert sorted(line for line in lines if "::" in line) == [
        "cases/buggy.yaml::buggy", "cases/fixed.yaml::fixed", "cases/prompt-side.yaml::prompt-side"]
    code, lines = collect_in(project, capsys, monkeypatch, "-m", "prompt")
    assert [line for line in lines if "::" in line] == ["cases/prompt-side.yaml::prompt-side"]


def test_a_broken_case_file_is_a_clear_collection_error(project, capsys, monkeypatch):
    (project / "cases" / "broken.yaml").write_text("agentotel_case: 1\nlayer: network\n")
    code, lines = collect_in(project, capsys, monkeypatch)
    assert code != 0
    assert any("layer 'network' is not one of prompt, tool" in line for line in lines)


def test_replaying_the_tool_cases_fails_the_bug_and_passes_the_fix(project, tmp_path):
    temp = tmp_path / "system-temp"
    temp.mkdir()
    World.model_calls = 0
    result = pytest_in(project, "cases", "-m", "tool", "-rA", tmpdir=temp)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 1 passed, 1 deselected" in out
    assert "FAILED cases/buggy.yaml::buggy" in out and "PASSED cases/fixed.yaml::fixed" in out
    assert 'FAIL  must_not_repeat: search_orders {"customer":"acme"} at steps 2, 4, 6, 8' in out
    # The failure names the replay store and the run, and the run is there to read.
    store = project / "agentotel-traces" / "replays"
    line = next(line for line in out.splitlines() if line.strip().startswith("replayed run "))
    run_id = line.split()[2]
    assert f"in {store}: agentotel trajectory {run_id} --dir {store}" in line
    assert agentotel.open(store).trajectory(run_id).run["status"] == "ok"
    assert not (project / "agentotel-traces" / "spans").exists()  # replays never go into the store itself
    assert list(temp.iterdir()) == []  # nothing left in the system temp folder


def test_loading_the_plugin_imports_neither_the_store_nor_the_detectors():
    # pytest loads the plugin in every project where agentotel is installed: its start-up must stay light.
    code = ("import sys, agentotel.cases.pytest_plugin as plugin; "
            "print(sorted(m for m in ('pyarrow', 'duckdb', 'agentotel.store', 'agentotel.analysis.detectors') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded
