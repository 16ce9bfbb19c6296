"""Environment capture: time added to run() start and end, in a 50,000-file git repository.

A fresh Python process (so every cache is cold), with what `run()` itself loads already imported,
imports `agentotel.environment` and captures the environment of one run, then of later runs, in a temporary git repository of 50,000 committed files
with a uv.lock and an AGENTS.md. "Start" is `capture_for_run` (including the import on the first run,
as `run()` imports it lazily); "end" is `finish_for_run`, which waits for the background `git status`
started at run start. The comparison is one plain `git status --porcelain` in the same repository:
what a synchronous dirtiness check would add to every run start.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result, Sample

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
import agentotel.runs, agentotel.tools  # what run() has loaded by the time it captures the environment
from agentotel._context import RunContext
t0 = time.perf_counter()
from agentotel.environment import capture_for_run, finish_for_run
repo = sys.argv[1]
later = int(sys.argv[2])
out = {"start": [], "end": []}
for i in range(1 + later):
    run = RunContext(run_id=f"r{i}", name="bench", trigger="test")
    s = time.perf_counter()
    capture_for_run(run, repo=repo)
    m = time.perf_counter()
    attrs = finish_for_run(run)
    e = time.perf_counter()
    out["start"].append((m - (t0 if i == 0 else s)) * 1e3)
    out["end"].append((e - m) * 1e3)
    assert "agentotel.env.hash" in attrs and "agentotel.env.dirty" in attrs, sorted(attrs)
print(json.dumps(out))
"""


def _make_repo(directory: Path, files: int) -> None:
    for i in range(files):
        sub = directory / f"d{i // 500:03d}"
        if i % 500 == 0:
            sub.mkdir()
        (sub / f"f{i}.txt").write_text(str(i))
    (directory / "uv.lock").write_text('version = 1\n\n[[package]]\nname = "requests"\nversion = "2.31.0"\n')
    (directory / "AGENTS.md").write_text("# Rules\nRun the tests.\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=directory, check=True, env=env, capture_output=True)


def _child(repo: Path, later: int, pycache: Path) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("AGENTOTEL_RAISE_INTERNAL_ERRORS", None)
    # Bytecode cached (outside the source tree), as in any installed package: imports are not compiles.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(repo), str(later)], cwd=repo, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _git_status_ms(repo: Path) -> float:
    s = time.perf_counter()
    subprocess.run(["git", "status", "--porcelain"], cwd=repo, check=True, capture_output=True)
    return (time.perf_counter() - s) * 1e3


def run(quick: bool) -> list[Result]:
    files = 1_000 if quick else 50_000
    processes = 1 if quick else 7
    later = 20 if quick else 200
    tmp = Path(tempfile.mkdtemp(prefix="agentotel-bench-env-"))
    pycache = Path(tempfile.mkdtemp(prefix="agentotel-bench-pycache-"))
    try:
        _make_repo(tmp, files)
        _git_status_ms(tmp)  # warm the page cache as a long-lived checkout would be
        _child(tmp, 1, pycache)  # and write the bytecode cache
        firsts_start, firsts_end, later_start, later_end, status = [], [], [], [], []
        for _ in range(processes):
            status.append(_git_status_ms(tmp))
            out = _child(tmp, later, pycache)
            firsts_start.append(out["start"][0])
            firsts_end.append(out["end"][0])
            later_start.append(statistics.median(out["start"][1:]))
            later_end.append(statistics.median(out["end"][1:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(pycache, ignore_errors=True)

    corpus = f"git repository of {files:,} committed files + uv.lock + AGENTS.md; {processes} fresh processes, {later} later runs each"
    git_ms = Sample(tuple(status))

    def row(metric: str, values: list[float], target: str | None, limit: float | None, notes: str, peer: bool = True) -> Result:
        sample = Sample(tuple(values))
        return Result("environment capture", metric, "ms", round(sample.median, 3),
                      "git status --porcelain (one call)" if peer else None, round(git_ms.median, 2) if peer else None,
                      target, None if limit is None else sample.median < limit, notes, corpus,
                      ours_spread=sample.spread, peer_spread=git_ms.spread if peer else None, repeats=len(sample))  # fmt: skip

    return [
        row("time added to run() start, first run in a process (incl. import)", firsts_start, "< 50 ms", 50,
            "git status runs in a background thread; see the run-end rows"),
        row("time added to run() start, later runs (median of each process)", later_start, "< 1 ms", 1,
            "cached facts, a stat per named file, HEAD read from .git"),
        row("time added to run() end, first run (waits for the background git status)", firsts_end, None, None,
            "only a run shorter than git status waits; includes snapshot JSON + hash"),
        row("time added to run() end, later runs (median of each process)", later_end, None, None,
            "dirty check reused while HEAD, index, top-level entries and hashed files are unchanged (max 60 s)", peer=False),
    ]  # fmt: skip
