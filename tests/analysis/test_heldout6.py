"""`diff` and `check` on a sixth held-out fault-injection set (tests/analysis/heldout6.py), built blind (the detectors
unread): a coding agent fixing a failing test in a tiny in-memory repository (read, patch, run the tests, submit),
run through a plain anthropic SDK loop, pydantic-ai, LangGraph's create_react_agent, the OpenAI Agents SDK (a
planner handing over to a coder) under agentotel, and the anthropic loop under OpenLLMetry's instrumentation
through agentotel-collector. SWE-bench-style coding-agent failures and MAST's three groups; ground truth located
on the recorded faulty run by what its steps did.

    python tests/analysis/heldout6.py [RECORDER|PAIR ...]     # the table

heldout6.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

from heldout import table
from heldout6 import CHECK_MISSED, DIFF_MISSED, FALSE_ALARMS, pairs, record, score


@pytest.mark.slow  # five framework processes, a few minutes under load
def test_the_whole_sixth_held_out_set(tmp_path):
    scores = score(tmp_path, record(tmp_path, pairs()))
    report = table(scores)
    assert len(scores) == len(pairs()), report
    assert all(s.expected is not None and s.diff_expected is not None for s in scores), report
    # No miss the lists do not name (a miss fixed later passes: the lists then say more than is missed)
    assert set(s.pair.id for s in scores if not s.diff_ok) <= set(DIFF_MISSED), report
    assert set(s.pair.id for s in scores if not s.check_ok) <= set(CHECK_MISSED), report
    assert set(s.pair.id for s in scores if s.alarms) <= set(FALSE_ALARMS), report
