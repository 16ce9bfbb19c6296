"""`diff` and `check` on a thirty-ninth held-out fault-injection set (tests/analysis/heldout39.py), built blind (the
detectors unread): a university exam-accommodations office with a written policy and a student over several turns (a
plain anthropic messages tool loop under agentotel), an air-cargo dangerous-goods acceptance team where a shipper desk,
a DG checker and a load planner hand over in one LangGraph StateGraph (under agentotel) and a fleet fuel-card fraud
reviewer reading card and vehicle records, earlier alerts and DuckDB transactions (an openai loop over an MCP server's
tools under agentotel; an openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy
breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout39.py [RECORDER|PAIR ...]     # the table

heldout39.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout39


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_thirty_ninth_held_out_set(tmp_path):
    kit.held_to_lists(heldout39, tmp_path, count=30)
