"""`diff` and `check` on a forty-first held-out fault-injection set (tests/analysis/heldout41.py), built blind (the
detectors unread): a scuba-diving charter desk with a written policy and a diver over several turns (a google-genai
generate_content loop under agentotel), a grain elevator's intake team where a truck grader, a quality tester and a
contract officer hand over (Microsoft Agent Framework under agentotel) and a tenancy-deposit dispute adjudicator reading
the tenancy, its agreement, addenda and inventory reports from a document search and the claims by SQL (a pydantic-ai
Agent under agentotel; an openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style
policy breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps
did.

    python tests/analysis/heldout41.py [RECORDER|PAIR ...]     # the table

heldout41.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout41


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_first_held_out_set(tmp_path):
    kit.held_to_lists(heldout41, tmp_path, count=30)
