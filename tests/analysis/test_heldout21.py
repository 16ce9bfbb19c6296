"""`diff` and `check` on a twenty-first held-out fault-injection set (tests/analysis/heldout21.py), built blind (the
detectors unread): a school admissions office with a written policy and a parent over several turns (a google-genai
function-calling loop under agentotel), a fleet maintenance team where an inspector, a service planner and a parts
buyer hand over in one LangGraph StateGraph (ChatOpenAI, under agentotel) and a marketing-campaign agent scheduling an
email send from a versioned segment catalogue, a DuckDB consent table and a suppression list (pydantic-ai under
agentotel alone; an openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy
breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, an old model configured, two APIs'
changed shapes, a stale segment index, two APIs answering another record); ground truth located on the recorded
faulty run by what its steps did.

    python tests/analysis/heldout21.py [RECORDER|PAIR ...]     # the table

heldout21.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout21's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout21


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_twenty_first_held_out_set(tmp_path):
    kit.held_to_lists(heldout21, tmp_path, count=30)
