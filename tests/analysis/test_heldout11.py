"""`diff` and `check` on an eleventh held-out fault-injection set (tests/analysis/heldout11.py), built blind (the
detectors unread): a tau-bench-style airline customer-service agent holding a written policy, talking with a
simulated user over several turns (pydantic-ai, the anthropic SDK loop with `@agentotel.tool`, a LangGraph
create_react_agent under OpenInference through agentotel-collector). Faults from tau-bench's policy violations, MAST
and TRAIL, and outside the model (the instructions' rule text, the deployment's tool list, the session's memory, the
app's conversation loop); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout11.py [RECORDER|PAIR ...]     # the table

heldout11.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout11


@pytest.mark.slow  # three framework processes (one through agentotel-collector), ~1.5 min under load
def test_the_whole_eleventh_held_out_set(tmp_path):
    kit.held_to_lists(heldout11, tmp_path)
