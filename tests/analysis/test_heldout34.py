"""`diff` and `check` on a thirty-fourth held-out fault-injection set (tests/analysis/heldout34.py), built blind (the
detectors unread): a marina's visitor-berth desk with a written policy and a boat owner over several turns (a plain
anthropic messages loop under agentotel; an openai loop under OpenInference through agentotel-collector), a wedding
agency team where a planner, a vendor booker and a budget controller hand over on the OpenAI Agents SDK (Responses API,
under agentotel) and a workplace-pension calculator reading a member record, DuckDB salary rows and versioned plan
documents (a LangGraph StateGraph of two create_react_agents under agentotel). Faults from tau-bench-style policy
breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout34.py [RECORDER|PAIR ...]     # the table

heldout34.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout34


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_fourth_held_out_set(tmp_path):
    kit.held_to_lists(heldout34, tmp_path, count=31)
