"""`diff` and `check` on a fifth held-out fault-injection set (tests/analysis/heldout5.py), built blind (the detectors
unread): an IT helpdesk (look up and verify a user, reset a password, run a laptop's diagnostics, open a ticket) run
through a plain openai SDK loop, the OpenAI Agents SDK (an accounts desk handing over to a network desk), LangGraph's
create_react_agent under agentotel, and the same under OpenInference's langchain instrumentation through
agentotel-collector. Faults from MAST's three groups and tau-bench-style tool-agent faults; ground truth located on
the recorded faulty run by what its steps did.

    python tests/analysis/heldout5.py [RECORDER|PAIR ...]     # the table

heldout5.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

from heldout import table
from heldout5 import CHECK_MISSED, DIFF_MISSED, FALSE_ALARMS, pairs, record, score


@pytest.mark.slow  # four framework processes, a few minutes under load
def test_the_whole_fifth_held_out_set(tmp_path):
    scores = score(tmp_path, record(tmp_path, pairs()))
    report = table(scores)
    assert len(scores) == len(pairs()), report
    assert all(s.expected is not None and s.diff_expected is not None for s in scores), report
    # No miss the lists do not name (a miss fixed later passes: the lists then say more than is missed)
    assert set(s.pair.id for s in scores if not s.diff_ok) <= set(DIFF_MISSED), report
    assert set(s.pair.id for s in scores if not s.check_ok) <= set(CHECK_MISSED), report
    assert set(s.pair.id for s in scores if s.alarms) <= set(FALSE_ALARMS), report
