"""`diff` and `check` on a forty-fourth held-out fault-injection set (tests/analysis/heldout44.py), built blind (the
detectors unread): an RV park's reservations desk with a written pitch and cancellation policy and a guest over several
turns (a plain openai chat loop under agentotel), an aircraft charter quoting team where a sales agent delegates to an
operations agent and a crew scheduler (pydantic-ai under agentotel) and a water utility's leak analytics agent reading
district flows by SQL (DuckDB), dated classification notes and work orders (a LangGraph StateGraph under agentotel; a
plain openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and
TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout44.py [RECORDER|PAIR ...]     # the table

heldout44.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout44


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_fourth_held_out_set(tmp_path):
    kit.held_to_lists(heldout44, tmp_path, count=30)
