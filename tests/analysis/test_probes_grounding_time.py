"""Probe: an answer holding a long run of characters (200 KB of "1.1.1..." or "ACC-ACC-...": a tool result echoed
back), through `agentotel check`. The grounding rules (agentotel/analysis/_ground.py) looked for an e-mail address
with an unbounded local part, [\\w.+-]+ running from each position of the run to its end, and for an identifier
with look-aheads running to the run's end from each word boundary: quadratic, past ten minutes here. The check
runs in a child process bounded at 120 s: no performance threshold (it takes a few seconds now) but a stop for
the old behaviour.
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
RUNS = {"dotted digits": ".".join(["1"] * 100_000) + "x", "hyphenated words": "ACC-" * 50_000}


@pytest.mark.parametrize("run_of", RUNS)
def test_check_of_an_answer_holding_a_long_run_ends(tmp_path, run_of):
    store = SpanStore(tmp_path / "store")
    run = store.run("agent", "run-dots")
    run.llm(assistant(calls=[("c1", "lookup", {"q": "order"})]), prompt="Look up my order, please")
    run.tool("lookup", {"q": "order"}, {"status": "ok"}, call_id="c1")
    run.llm(assistant("Here it is: " + RUNS[run_of]))
    store.write()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")])}
    try:
        proc = subprocess.run([sys.executable, "-m", "agentotel.cli", "check", "run-dots", "--dir", str(store.directory)],
                              capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"agentotel check of an answer holding 200 KB of {run_of} ran past 120 s (catastrophic backtracking)")
    assert proc.returncode == 0, proc.stderr


def test_e_mail_addresses_and_ids_are_still_found_around_such_runs():
    answer = (f"Write to jane.doe+orders@example.com or ops@example.co.uk about INV-20931 and A-1042; {'1.' * 1000}x; "
              f"{'ACC-' * 1000} not me@localhost, not a 30-day window")
    assert ungrounded(answer, "jane.doe+orders@example.com, A-1042") == ["ops@example.co.uk", "INV-20931"]
