"""Fixtures: a temporary git repository with a lockfile and an AGENTS.md, and fresh caches per test."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from agentotel import _config
from agentotel._context import RunContext
from agentotel.environment import capture_for_run, clear_caches, finish_for_run
from agentotel.environment._system import _CI

from env_helpers import AGENTS_MD, UV_LOCK, git, new_run

@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch):
    """Every test starts with empty caches and settings read from its own environment."""
    monkeypatch.delenv("AGENTOTEL_CONFIG_FILES", raising=False)
    monkeypatch.delenv("AGENTOTEL_CREDENTIAL_NAMES", raising=False)
    monkeypatch.delenv("AGENTOTEL_AGENT_VERSION", raising=False)
    monkeypatch.delenv("AGENTOTEL_CAPTURE_ENVIRONMENT", raising=False)
    # CI facts are part of the snapshot; tests that expect none must not see the CI they run in.
    monkeypatch.delenv("CI", raising=False)
    for _provider, detect, _facts in _CI:
        monkeypatch.delenv(detect, raising=False)
    clear_caches()
    _config.reset()
    yield
    clear_caches()
    _config.reset()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git repository holding uv.lock and AGENTS.md, with an origin remote."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / "uv.lock").write_text(UV_LOCK)
    (root / "AGENTS.md").write_text(AGENTS_MD)
    (root / "main.py").write_text("print('hi')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "remote", "add", "origin", "https://github.com/example/project.git")
    return root


@pytest.fixture
def capture() -> Callable[..., dict[str, Any]]:
    """Run capture_for_run + finish_for_run for one run; returns every env attribute."""

    def _capture(repo: Path | None = None, run: RunContext | None = None, **kw: Any) -> dict[str, Any]:
        run = run or new_run(**kw)
        start = capture_for_run(run, repo=repo)
        end = finish_for_run(run)
        assert set(start) <= set(end)
        return end

    return _capture
