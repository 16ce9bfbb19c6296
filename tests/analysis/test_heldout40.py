"""`diff` and `check` on a fortieth held-out fault-injection set (tests/analysis/heldout40.py), built blind (the
detectors unread): a tour operator's excursions desk with a written policy and a traveller over several turns (a boto3
Bedrock converse loop under agentotel), a recycling plant's intake team where a gate clerk, a sampler and a permit
officer hand over (the OpenAI Agents SDK under agentotel) and a youth football league's registration agent reading
players and corrected registrations by SQL, team rosters and dated bulletins (a pydantic-ai Agent under agentotel; an
openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and
TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout40.py [RECORDER|PAIR ...]     # the table

heldout40.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout40


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_fortieth_held_out_set(tmp_path):
    kit.held_to_lists(heldout40, tmp_path, count=30)
