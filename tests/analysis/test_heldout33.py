"""`diff` and `check` on a thirty-third held-out fault-injection set (tests/analysis/heldout33.py), built blind (the
detectors unread): a home-internet installation desk talking with a customer over several turns under a written policy
(a boto3 Bedrock converse loop under agentotel), a restaurant kitchen's ordering team where a chef hands to a purchaser
who hands to a receiver (Microsoft Agent Framework, three agents run by the app, under agentotel) and a clinical-lab
results reporting agent reading versioned results and dated reference-range documents (a LangGraph create_react_agent
under agentotel; a plain openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy
breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout33.py [RECORDER|PAIR ...]     # the table

heldout33.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout33's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout33


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1-2 min
def test_the_whole_thirty_third_held_out_set(tmp_path):
    kit.held_to_lists(heldout33, tmp_path, count=20)
