"""`diff` and `check` on a ninth held-out fault-injection set (tests/analysis/heldout9.py), built blind (the
detectors unread): a personal email + calendar assistant (the openai SDK loop, MCP tools on a stdio server in its own
process called from the anthropic SDK loop, pydantic-ai) and a planner -> executor -> verifier incident-response team
(a hand-built LangGraph StateGraph, the OpenAI Agents SDK's handoffs, the StateGraph under OpenInference through
agentotel-collector). Faults from how mail and calendar assistants fail, MAST's inter-agent and verification
failures and TRAIL's API issues; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout9.py [RECORDER|PAIR ...]     # the table

heldout9.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout9
from heldout import table


@pytest.mark.slow  # six framework processes and a server process per MCP run, a few minutes under load
def test_the_whole_ninth_held_out_set(tmp_path):
    scores = heldout9.score(tmp_path, heldout9.record(tmp_path, heldout9.pairs()))
    report = table(scores)
    assert len(scores) == len(heldout9.pairs()), report
    assert all(s.expected is not None and s.diff_expected is not None for s in scores), report
    assert kit.unlisted(scores, heldout9.DIFF_MISSED, heldout9.CHECK_MISSED, heldout9.FALSE_ALARMS) == {
        "diff": set(), "check": set(), "alarms": set()}, report
