"""`diff` and `check` on a twenty-fifth held-out fault-injection set (tests/analysis/heldout25.py), built blind (the
detectors unread): a university registration desk talking with a student over several turns under a written
registration policy (a google-genai function-calling loop under agentotel), a food-delivery dispatch team where a router
hands to a courier assigner who hands to a customer notifier (the OpenAI Agents SDK on chat completions, two handoffs,
under agentotel) and a brokerage trade-surveillance agent reading trades, a versioned restricted list, positions and
limits (an anthropic loop over an MCP client session under agentotel; a plain openai loop under OpenLLMetry through
agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions
rewritten without a rule, old models configured, a trades API's changed shape, a stale restricted-list index, APIs
answering another student, zone and account); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout25.py [RECORDER|PAIR ...]     # the table

heldout25.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout25's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout25


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~3 min
def test_the_whole_twenty_fifth_held_out_set(tmp_path):
    kit.held_to_lists(heldout25, tmp_path, count=32)
