"""Probe: an answer holding a long run of e-mail characters ("1.1.1.1...", 200 KB: a tool result echoed back),
through `agentotel check`. The grounding rules (agentotel/analysis/_ground.py) looked for an e-mail address with
an unbounded local part, [\\w.+-]+ running from each position of the run to its end: quadratic, past ten minutes
here. The check runs in a child process bounded at 120 s: no performance threshold (it takes a few seconds now)
but a stop for the old behaviour.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "query"))
from spanbuild import SpanStore, assistant  # noqa: E402

from agentotel.analysis._ground import ungrounded  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUN_OF_DOTS = ".".join(["1"] * 100_000) + "x"


def test_check_of_an_answer_holding_a_long_run_of_dotted_digits_ends(tmp_path):
    store = SpanStore(tmp_path / "store")
    run = store.run("agent", "run-dots")
    run.llm(assistant(calls=[("c1", "lookup", {"q": "order"})]), prompt="Look up my order, please")
    run.tool("lookup", {"q": "order"}, {"status": "ok"}, call_id="c1")
    run.llm(assistant("Here it is: " + RUN_OF_DOTS))
    store.write()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")])}
    try:
        proc = subprocess.run([sys.executable, "-m", "agentotel.cli", "check", "run-dots", "--dir", str(store.directory)],
                              capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("agentotel check of an answer holding 200 KB of '1.1.1...' ran past 120 s (catastrophic backtracking)")
    assert proc.returncode == 0, proc.stderr


def test_e_mail_addresses_are_still_found_around_such_runs():
    answer = f"Write to jane.doe+orders@example.com or ops@example.co.uk; {'1.' * 1000}x; not me@localhost"
    assert ungrounded(answer, "jane.doe+orders@example.com") == ["ops@example.co.uk"]
