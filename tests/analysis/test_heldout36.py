"""`diff` and `check` on a thirty-sixth held-out fault-injection set (tests/analysis/heldout36.py), built blind (the
detectors unread): a ski resort's lessons and rentals desk with a written policy and a guest over several turns (a
google-genai function-calling loop under agentotel), a pharmaceutical cold-chain team where an order taker, a picker
and a dispatcher hand over in one LangGraph StateGraph (under agentotel) and a software-licence compliance auditor
reading a contract, dated amendments and DuckDB seat usage (the OpenAI Agents SDK under agentotel; an openai loop under
OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the
model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout36.py [RECORDER|PAIR ...]     # the table

heldout36.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout36


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_sixth_held_out_set(tmp_path):
    kit.held_to_lists(heldout36, tmp_path, count=30)
