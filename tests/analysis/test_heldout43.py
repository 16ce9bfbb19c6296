"""`diff` and `check` on a forty-third held-out fault-injection set (tests/analysis/heldout43.py), built blind (the
detectors unread): a driving school's booking desk with a written policy and a learner over several turns (boto3 Bedrock
converse under agentotel), a university chemical-stores team where a requests desk, a safety officer and a stores clerk
hand over in one LangGraph StateGraph (under agentotel) and a bridge-inspection records analyst reading a structure's
record, inspection reports and re-inspections, and DuckDB load ratings (an openai loop over an MCP server's tools under
agentotel; an openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style policy breaks,
MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout43.py [RECORDER|PAIR ...]     # the table

heldout43.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout43


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_third_held_out_set(tmp_path):
    kit.held_to_lists(heldout43, tmp_path, count=30)
