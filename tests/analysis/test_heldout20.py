"""`diff` and `check` on a twentieth held-out fault-injection set (tests/analysis/heldout20.py), built blind (the
detectors unread): an event-ticketing refunds desk with a written refund policy and a fan over several turns (a plain
anthropic SDK tool_use loop under agentotel), a community grants committee where a screener, a reviewer and a panel
chair run one after the other (Microsoft Agent Framework under agentotel) and a hotel's reservations desk repricing a
stay from dated, versioned rate sheets and a corporate contract (the OpenAI Agents SDK on the Responses API with the
rate desk an agent given as a tool, under agentotel; an openai loop under OpenInference through agentotel-collector).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a
rule, an old model configured, two APIs' changed shapes, a stale rate index, two APIs answering another record);
ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout20.py [RECORDER|PAIR ...]     # the table

heldout20.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout20's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout20


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_twentieth_held_out_set(tmp_path):
    kit.held_to_lists(heldout20, tmp_path, count=30)
