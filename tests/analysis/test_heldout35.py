"""`diff` and `check` on a thirty-fifth held-out fault-injection set (tests/analysis/heldout35.py), built blind (the
detectors unread): a university interlibrary-loan desk talking with a patron over several turns under a written ILL
policy (a plain openai chat loop under agentotel), a broadcast newsroom where a web editor delegates to a reporter and
to a legal reviewer (pydantic-ai agent delegation through tools, under agentotel) and a utilities meter-read anomaly
agent reading gas reads in m3, calorific values, electricity reads and versioned tariff notices (a plain anthropic loop
calling an MCP server's tools, under agentotel; a plain openai loop under OpenLLMetry through agentotel-collector).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a
rule, old models configured, a reads API's changed shape, a stale tariff index, three APIs answering another record, a
delegation that drops the brief); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout35.py [RECORDER|PAIR ...]     # the table

heldout35.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout35's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout35


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector, one over an MCP server), ~2 min
def test_the_whole_thirty_fifth_held_out_set(tmp_path):
    kit.held_to_lists(heldout35, tmp_path, count=30)
