"""`diff` and `check` on a thirty-eighth held-out fault-injection set (tests/analysis/heldout38.py), built blind (the
detectors unread): a ferry ticketing desk with a written policy and a traveller over several turns (a google-genai
function-calling loop under agentotel), a hospital bed-management team where a bed manager, a ward coordinator and
patient transport hand over by OpenAI Agents SDK handoffs on the Responses API (under agentotel) and a core facility's
instrument booking agent reading certifications, quotas, SQL rows of used hours and versioned maintenance notices
(pydantic-ai under agentotel; an openai loop under OpenInference through agentotel-collector). Faults from
tau-bench-style policy breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run
by what its steps did.

    python tests/analysis/heldout38.py [RECORDER|PAIR ...]     # the table

heldout38.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout38


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_eighth_held_out_set(tmp_path):
    kit.held_to_lists(heldout38, tmp_path, count=32)
