"""Fixtures more than one folder's tests read."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, float]:
    """`agentotel demo` run once a worker, as a user would: a fresh process, a new directory. Its store (run A, two
    tools; run B, lookup_order changed shape: divergence at step 3), the process, and how long it took. The store is
    read, never written, by the tests that share it (the CLI's and the view's: ~3 s of CPU a demo)."""
    directory = tmp_path_factory.mktemp("demo") / "traces"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")]), "NO_COLOR": "1"}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "agentotel.cli", "demo", "--dir", str(directory)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=directory.parent)
    return directory, proc, time.monotonic() - started


@pytest.fixture(scope="session")
def demo_store(demo_run) -> Path:
    """The demo's store, once the demo exited 0."""
    directory, proc, _elapsed = demo_run
    assert proc.returncode == 0, proc.stderr
    return directory


@pytest.fixture(autouse=True)
def _no_check_rule_broke() -> Iterator[None]:
    """`check` leaves out a rule that raises (logged once) so the user keeps every other finding; a test that made a
    rule raise fails here, so the suite still sees the bug."""
    loaded = sys.modules.get("agentotel.analysis.detectors")  # (never imported for a test that does not use it)
    if loaded is not None:
        loaded.BROKEN.clear()
    yield
    loaded = sys.modules.get("agentotel.analysis.detectors")
    assert loaded is None or not loaded.BROKEN, f"check rules raised: {sorted(loaded.BROKEN)} (see the log)"
