"""`diff` and `check` on a forty-second held-out fault-injection set (tests/analysis/heldout42.py), built blind (the
detectors unread): a blood-donation centre's donor desk with a written eligibility policy and a donor over several
turns (a plain anthropic messages loop under agentotel; an openai loop under OpenInference through
agentotel-collector), an auction house's consignment team where an intake clerk, an appraiser and a catalogue editor
hand over on the OpenAI Agents SDK (Responses API, under agentotel) and a greenhouse climate desk reading sensor,
irrigation and alarm rows by SQL (DuckDB) and a versioned crop-threshold table (a LangGraph StateGraph of two
create_react_agents under agentotel). Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the
model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout42.py [RECORDER|PAIR ...]     # the table

heldout42.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout42


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_second_held_out_set(tmp_path):
    kit.held_to_lists(heldout42, tmp_path, count=31)
