"""`diff` and `check` on a twenty-eighth held-out fault-injection set (tests/analysis/heldout28.py), built blind (the
detectors unread): a city council's parking-permit desk talking with a resident over several turns under a written
permit policy (a google-genai generate_content loop under agentotel), a building-materials supplier's team where an
estimator hands to a credit controller who hands to a dispatcher (Microsoft Agent Framework, three agents run by the
app, under agentotel) and an agronomy advisory agent reading field records, dated soil tests and versioned pesticide
labels (a plain openai loop calling an MCP server's tools, under agentotel; the same loop under OpenInference through
agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions
rewritten without a rule, old models configured, a labels API's changed shape, a stale label index, three APIs
answering another record, a handover that lost its fields); ground truth located on the recorded faulty run by what
its steps did.

    python tests/analysis/heldout28.py [RECORDER|PAIR ...]     # the table

heldout28.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout28's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout28


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector, one with an MCP server), ~3 min
def test_the_whole_twenty_eighth_held_out_set(tmp_path):
    kit.held_to_lists(heldout28, tmp_path, count=30)
