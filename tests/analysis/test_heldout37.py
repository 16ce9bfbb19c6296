"""`diff` and `check` on a thirty-seventh held-out fault-injection set (tests/analysis/heldout37.py), built blind (the
detectors unread): a dental practice's front desk with a written policy and a patient over several turns (a boto3
Bedrock converse loop under agentotel), a construction site-safety permit team where a requester, a safety officer and
a site manager hand over (Microsoft Agent Framework under agentotel) and an EV charging network's support agent
reading sessions by SQL, dated firmware notices and a tariff table (a LangGraph create_react_agent under agentotel; an
openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL,
and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout37.py [RECORDER|PAIR ...]     # the table

heldout37.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout37


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_seventh_held_out_set(tmp_path):
    kit.held_to_lists(heldout37, tmp_path, count=30)
