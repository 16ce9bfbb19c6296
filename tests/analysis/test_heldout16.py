"""`diff` and `check` on a sixteenth held-out fault-injection set (tests/analysis/heldout16.py), built blind (the
detectors unread): a payroll assistant with written pay rules and an employee over several turns (pydantic-ai under
agentotel), a legal team where a drafter hands a contract to a reviewer who clears and sends it (the OpenAI Agents
SDK), and a freight dispatcher choosing a carrier from shipment, dangerous-goods and carrier records (a LangGraph
create_react_agent under agentotel, and under OpenInference through agentotel-collector).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a
rule, an old model configured, a carrier API's changed shape, stale retrieval indexes, a tool answering another
record); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout16.py [RECORDER|PAIR ...]     # the table

heldout16.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout16's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout16


@pytest.mark.slow  # four framework processes (one through agentotel-collector), ~1 min
def test_the_whole_sixteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout16, tmp_path)
