"""`diff` and `check` on an eighteenth held-out fault-injection set (tests/analysis/heldout18.py), built blind (the
detectors unread): a pharmacy's refill assistant with a written dispensing policy and a patient over several turns (a
google-genai generate_content loop under agentotel), a recruiting team where a sourcer hands a shortlist to a screener
and the screener the passes to a scheduler (the OpenAI Agents SDK's handoffs under agentotel) and a customs broker's
entry agent reading a shipment, dated tariff revisions, rulings, rates and a sanctions screen (a boto3 Bedrock converse
loop under agentotel; an openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style
policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, an old model configured,
three APIs' changed shapes, a stale tariff index, a shipment API answering another record); ground truth located on
the recorded faulty run by what its steps did.

    python tests/analysis/heldout18.py [RECORDER|PAIR ...]     # the table

heldout18.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout18's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout18


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_eighteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout18, tmp_path, count=30)
