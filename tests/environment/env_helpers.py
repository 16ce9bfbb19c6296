"""Helpers for the environment tests: a lockfile, an AGENTS.md, git, run contexts."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from typing import Any

from agentotel._context import RunContext

UV_LOCK = """version = 1
requires-python = ">=3.11"

[[package]]
name = "httpx"
version = "0.27.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "requests"
version = "2.31.0"
source = { registry = "https://pypi.org/simple" }
"""

AGENTS_MD = "# Agent rules\n\nAlways run the tests.\nNever push to main.\n"


def git(repo: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout


_run_ids = itertools.count()


def new_run(name: str = "triage", **kw: Any) -> RunContext:
    return RunContext(run_id=f"run-{next(_run_ids)}", name=name, trigger=kw.pop("trigger", "test"), **kw)
