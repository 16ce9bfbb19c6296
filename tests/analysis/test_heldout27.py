"""`diff` and `check` on a twenty-seventh held-out fault-injection set (tests/analysis/heldout27.py), built blind (the
detectors unread): a household-moving company's quoting desk talking with a customer over several turns under a written
quoting policy (a plain anthropic SDK tool loop under agentotel; a plain openai loop under OpenLLMetry through
agentotel-collector), a rooftop-solar team where a site surveyor hands to a system designer who hands to an
interconnection filer (the OpenAI Agents SDK on the Responses API with two handoffs, under agentotel) and a
systematic-review screening agent reading search records with retraction notices, preprint and published versions,
designs, populations and dates, and extracting effect sizes in mmHg and kPa (a LangGraph StateGraph whose node is a
create_react_agent, under agentotel). Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model
(instructions rewritten without a rule, an old model configured, a survey API's changed shape, a stale literature
index, three APIs answering another record, conversation lost between turns and at a handoff); ground truth located on
the recorded faulty run by what its steps did.

    python tests/analysis/heldout27.py [RECORDER|PAIR ...]     # the table

heldout27.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout27's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout27


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~2 min
def test_the_whole_twenty_seventh_held_out_set(tmp_path):
    kit.held_to_lists(heldout27, tmp_path, count=30)
