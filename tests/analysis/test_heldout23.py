"""`diff` and `check` on a twenty-third held-out fault-injection set (tests/analysis/heldout23.py), built blind (the
detectors unread): a car-rental desk talking with a renter over several turns under a written rental policy (a plain
openai chat loop under agentotel; the same loop under OpenLLMetry through agentotel-collector), a building-permit review
team where an intake clerk hands to a plan checker who hands to an inspection scheduler (the OpenAI Agents SDK on the
Responses API with two handoffs, under agentotel) and a tax-preparation team reading W-2s, W-2cs, 1099s and 1098s of
several years and the IRS figures of the year (a LangGraph StateGraph of two create_react_agents, under agentotel).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a
rule, an old model configured, two APIs' changed shapes, a stale IRS table index, two APIs answering another record, a
handoff filter that drops the conversation); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout23.py [RECORDER|PAIR ...]     # the table

heldout23.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout23's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout23


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~2 min
def test_the_whole_twenty_third_held_out_set(tmp_path):
    kit.held_to_lists(heldout23, tmp_path, count=30)
