"""diff(): what differs between two runs' environments, key by key, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from agentotel import semconv
from agentotel.environment import EnvDiff, capture_for_run, diff, finish_for_run, snapshot_from_attributes

from env_helpers import AGENTS_MD, UV_LOCK, git, new_run

SEARCH_V1 = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
SEARCH_V2 = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}


def run_snapshot(repo: Path, tool_schema: dict) -> dict:
    run = new_run()
    capture_for_run(run, repo=repo)
    run.record_tool_definitions({"search": tool_schema})
    attrs = finish_for_run(run)
    stored = {k: v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items()}
    return snapshot_from_attributes(stored)


def test_bump_agents_edit_and_tool_change_are_exactly_the_differences(repo: Path) -> None:
    a = run_snapshot(repo, SEARCH_V1)
    (repo / "uv.lock").write_text(UV_LOCK.replace('version = "2.31.0"', 'version = "2.32.0"'))
    (repo / "AGENTS.md").write_text(AGENTS_MD.replace("Always run the tests.", "Always run the tests twice."))
    b = run_snapshot(repo, SEARCH_V2)

    result = diff(a, b)
    assert [(c.section, c.key, c.kind) for c in result.changes] == [
        ("lockfiles", "uv.lock", "changed"),
        ("config_files", "AGENTS.md", "changed"),
        ("model_tools", "search", "changed"),
    ]
    lockfile, agents, tool = result.changes
    assert lockfile.detail == ("requests 2.31.0 → 2.32.0", "uncommitted")
    assert agents.detail[-1] == "uncommitted"
    assert tool.detail == ("schema.properties.limit added",)
    assert result.lines() == [
        "lockfile uv.lock changed: requests 2.31.0 → 2.32.0; uncommitted",
        f"config file AGENTS.md changed: sha256: {a['config_files']['AGENTS.md']['sha256'][:12]} → "
        f"{b['config_files']['AGENTS.md']['sha256'][:12]}; uncommitted",
        "tool definition search changed: schema.properties.limit added",
    ]
    assert not result.same and result.hash_a != result.hash_b
    assert json.loads(json.dumps(result.to_dict()))["changes"][0]["key"] == "uv.lock"


def test_same_environment(repo: Path) -> None:
    a = run_snapshot(repo, SEARCH_V1)
    b = run_snapshot(repo, SEARCH_V1)
    result = diff(a, b)
    assert result.same and result.changes == []
    assert result.lines() == [f"same environment (hash {result.hash_a})"]


def test_a_commit_and_other_uncommitted_files_are_reported(repo: Path) -> None:
    a = run_snapshot(repo, SEARCH_V1)
    (repo / "AGENTS.md").write_text("new rules\n")
    git(repo, "commit", "-q", "-am", "rules")
    (repo / "main.py").write_text("print('edited')\n")  # not a file the snapshot names: the tree change stays
    b = run_snapshot(repo, SEARCH_V1)
    changes = {(c.section, c.key): c for c in diff(a, b).changes}
    assert set(changes) == {("repo", "commit"), ("repo", "working tree"), ("config_files", "AGENTS.md")}
    assert changes["repo", "working tree"].detail == ("dirty false → true", "uncommitted: main.py")
    assert changes["config_files", "AGENTS.md"].detail[-1] != "uncommitted"


def synthetic(**sections) -> dict:
    base = {
        "schema": 1,
        "os": {"name": "Linux", "image": "debian 12", "kernel": "6.1"},
        "python": {"implementation": "CPython", "version": "3.11.7", "executable": "/usr/bin/python"},
        "packages": {"openai": "1.40.0", "rich": "13.7.1"},
        "agent": {"agentotel": "0.1.0", "sdks": {"openai": "1.40.0"}},
        "credentials": {"env": ["OPENAI_API_KEY"]},
        "host": {"hostname": "a"},
        "who": {"user": "alice"},
    }
    base.update(sections)
    return base


def test_packages_added_removed_and_changed() -> None:
    a = synthetic()
    b = synthetic(packages={"openai": "1.42.0", "httpx": "0.27.0"}, agent={"agentotel": "0.1.0", "sdks": {"openai": "1.42.0"}})
    lines = diff(a, b).lines()
    assert lines == [
        "package httpx added (0.27.0)",
        "package openai: 1.40.0 → 1.42.0",
        "package rich removed (13.7.1)",
        "agent sdks.openai: 1.40.0 → 1.42.0",
    ]


def test_volatile_facts_are_not_differences() -> None:
    a = synthetic()
    b = synthetic(host={"hostname": "b", "container_id": "abc"}, who={"user": "bob"},
                  python={**synthetic()["python"], "executable": "/opt/venv/bin/python"})  # fmt: skip
    assert diff(a, b).same


def test_os_python_credentials_and_models() -> None:
    a = synthetic(models={"request": ["gpt-4o"], "response": ["gpt-4o-2024-08-06"]})
    b = synthetic(
        os={"name": "Linux", "image": "debian 13", "kernel": "6.1"},
        python={"implementation": "CPython", "version": "3.12.1", "executable": "/usr/bin/python"},
        credentials={"env": ["ANTHROPIC_API_KEY"]},
        models={"request": ["gpt-4o-mini"], "response": ["gpt-4o-mini-2024-07-18"]},
    )
    assert diff(a, b).lines() == [
        "model gpt-4o-mini added",
        "model gpt-4o-mini-2024-07-18 added",
        "model gpt-4o removed",
        "model gpt-4o-2024-08-06 removed",
        "credential ANTHROPIC_API_KEY added",
        "credential OPENAI_API_KEY removed",
        "os image: debian 12 → debian 13",
        "python version: 3.11.7 → 3.12.1",
    ]


def test_repository_appearing_and_missing_reasons() -> None:
    a = synthetic(repo=None)
    b = synthetic(repo={"commit": "c" * 40, "branch": "main"})
    assert [c.line() for c in diff(a, b).changes] == [f"repo repository: (none) → {'c' * 12}"]
    c = synthetic(repo={"commit": "c" * 40, "branch": "main", "dirty": False})
    d = synthetic(repo={"commit": "c" * 40, "branch": "main"}, missing={"repo.dirty": "git not found on PATH"})
    (change,) = diff(c, d).changes
    assert change.key == "working tree" and change.b["dirty"] is None


def test_diff_of_a_partial_snapshot(repo: Path) -> None:
    run = new_run()
    capture_for_run(run, repo=repo)
    attrs = finish_for_run(run)
    stored = {k: v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items() if k != semconv.AGENTOTEL_ENV_SNAPSHOT}
    partial = snapshot_from_attributes(stored)
    result = diff(partial, partial)
    assert isinstance(result, EnvDiff) and result.same
