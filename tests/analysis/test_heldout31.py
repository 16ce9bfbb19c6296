"""`diff` and `check` on a thirty-first held-out fault-injection set (tests/analysis/heldout31.py), built blind (the
detectors unread): a bike-share support desk with a written policy and a rider over several turns (a google-genai
function-calling loop under agentotel), a wind-farm maintenance team where an inspector, a work planner and a dispatcher
hand over in one LangGraph StateGraph (under agentotel) and a journal editorial office deciding from versioned
manuscripts, reviews with conflicts of interest and a DuckDB similarity table (pydantic-ai under agentotel alone; an
openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL,
and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout31.py [RECORDER|PAIR ...]     # the table

heldout31.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout31


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_first_held_out_set(tmp_path):
    kit.held_to_lists(heldout31, tmp_path, count=26)
