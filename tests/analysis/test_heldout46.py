"""`diff` and `check` on a forty-sixth held-out fault-injection set (tests/analysis/heldout46.py), built blind (the
detectors unread): a musical-instrument rental desk with a written policy and a parent over several turns (a
google-genai function-calling loop under agentotel), a conference travel approvals team where a request intake agent,
a travel coordinator and a finance approver hand over in one LangGraph StateGraph (under agentotel) and a stadium
ticket-resale fraud analyst reading the match, a versioned resale policy and DuckDB resale listings (pydantic-ai under
agentotel; an openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks,
MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout46.py [RECORDER|PAIR ...]     # the table

heldout46.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout46


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_sixth_held_out_set(tmp_path):
    kit.held_to_lists(heldout46, tmp_path, count=30)
