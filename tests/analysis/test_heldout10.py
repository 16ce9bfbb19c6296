"""`diff` and `check` on a tenth held-out fault-injection set (tests/analysis/heldout10.py), built blind (the
detectors unread): an accounts-payable agent paying vendor invoices (the openai SDK loop, MCP tools on a stdio server
called from the anthropic SDK loop, the openai loop under OpenLLMetry through agentotel-collector) and a bug-triage
supervisor with sub-agents as tools (the OpenAI Agents SDK's `Agent.as_tool`, LangGraph create_react_agent workers
as a supervisor's tools, the Agents SDK under OpenInference through agentotel-collector). Faults from how
accounts-payable automation fails, TRAIL's API issues and MAST's failures in a supervisor and its sub-agents; ground
truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout10.py [RECORDER|PAIR ...]     # the table
    python tests/analysis/heldout10.py --score DIR [...]       # the runs a call left in DIR, scored again

heldout10.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout10
from heldout import table


@pytest.mark.slow  # six framework processes and a server process per MCP run, a few minutes under load
def test_the_whole_tenth_held_out_set(tmp_path):
    scores = heldout10.score(tmp_path, heldout10.record(tmp_path, heldout10.pairs()))
    report = table(scores)
    assert len(scores) == len(heldout10.pairs()), report
    assert all(s.expected is not None and s.diff_expected is not None for s in scores), report
    assert kit.unlisted(scores, heldout10.DIFF_MISSED, heldout10.CHECK_MISSED, heldout10.FALSE_ALARMS) == {
        "diff": set(), "check": set(), "alarms": set()}, report
