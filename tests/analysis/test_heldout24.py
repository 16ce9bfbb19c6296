"""`diff` and `check` on a twenty-fourth held-out fault-injection set (tests/analysis/heldout24.py), built blind (the
detectors unread): a caterer's orders desk talking with a client over several turns under a written booking and
cancellation policy (a plain anthropic tool_use loop under agentotel), an HR leave team where an intake agent hands to
a policy checker who hands to a payroll adjuster (Microsoft Agent Framework, three agents, under agentotel) and a
mortgage-underwriting agent reading pay stubs, bank statements, a rate lock and versioned rate sheets (pydantic-ai under
agentotel alone; a plain openai loop under OpenInference through agentotel-collector). Faults from tau-bench-style
policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, old models configured, two
APIs' changed shapes, a stale rate-sheet index, two APIs answering another person); ground truth located on the
recorded faulty run by what its steps did.

    python tests/analysis/heldout24.py [RECORDER|PAIR ...]     # the table

heldout24.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout24's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout24


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~3 min
def test_the_whole_twenty_fourth_held_out_set(tmp_path):
    kit.held_to_lists(heldout24, tmp_path, count=30)
