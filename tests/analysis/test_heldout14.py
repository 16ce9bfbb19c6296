"""`diff` and `check` on a fourteenth held-out fault-injection set (tests/analysis/heldout14.py), built blind (the
detectors unread): an insurance claims agent with written settlement rules and a claimant over several turns (LangGraph
under agentotel; the anthropic SDK under OpenInference through agentotel-collector), a data pipeline agent
rebuilding a warehouse table (Microsoft Agent Framework under agentotel) and a help-center agent answering from a
retriever (the OpenAI Agents SDK, an agentotel.retrieval under its function tool).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (the instructions' rule text, the
deployment's configured model, the session store losing the conversation, a tool answering another record, an
upstream column rename, a stale search index); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout14.py [RECORDER|PAIR ...]     # the table

heldout14.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout14


@pytest.mark.slow  # four framework processes (one through agentotel-collector), ~1.5 min under load
def test_the_whole_fourteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout14, tmp_path)
