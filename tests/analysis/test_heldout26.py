"""`diff` and `check` on a twenty-sixth held-out fault-injection set (tests/analysis/heldout26.py), built blind (the
detectors unread): an energy retailer's tariffs desk talking with a household over several turns under a written
policy (a boto3 Bedrock converse loop under agentotel), an event venue's booking team where sales hands to operations
who hand to finance (a LangGraph StateGraph of three create_react_agents, under agentotel) and a visa document checker
reading versioned rules, passports and bank statements (pydantic-ai with its own instrumentation on beside agentotel; a
plain openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and
TRAIL, and outside the model (instructions rewritten without a rule, old models configured, two APIs' changed shapes, a
stale rules index, two APIs answering another record); ground truth located on the recorded faulty run by what its
steps did.

    python tests/analysis/heldout26.py [RECORDER|PAIR ...]     # the table

heldout26.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout26's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout26


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~3 min
def test_the_whole_twenty_sixth_held_out_set(tmp_path):
    kit.held_to_lists(heldout26, tmp_path, count=30)
