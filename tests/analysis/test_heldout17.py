"""`diff` and `check` on a seventeenth held-out fault-injection set (tests/analysis/heldout17.py), built blind (the
detectors unread): a mobile carrier's chat agent with written account-security and billing rules and a customer over
several turns (Microsoft Agent Framework under agentotel), a procurement desk where an intake agent briefs a buyer (a
hand-built LangGraph StateGraph under agentotel) and a release agent shipping by a written runbook (its tools on an
MCP server called from an openai loop under agentotel; an anthropic loop under OpenLLMetry through agentotel-collector).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a
rule, an old model configured, a plans API's and a CI API's changed shape, a stale catalogue index, a metrics API
answering another deployment); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout17.py [RECORDER|PAIR ...]     # the table

heldout17.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout17's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout17


@pytest.mark.slow  # four framework processes (one through agentotel-collector), ~1 min
def test_the_whole_seventeenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout17, tmp_path)
