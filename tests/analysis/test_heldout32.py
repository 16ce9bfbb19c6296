"""`diff` and `check` on a thirty-second held-out fault-injection set (tests/analysis/heldout32.py), built blind (the
detectors unread): a municipal waste-collection desk talking with a resident over several turns under a written
service policy (a plain anthropic SDK tool loop under agentotel), a container-terminal planning team where a berth
planner hands to a yard planner who hands to a gate clerk (the OpenAI Agents SDK on chat completions, two handoffs,
under agentotel) and a museum loans registrar reading dated condition reports, versioned loan agreements, valuations in
EUR and venue readings in Fahrenheit (a plain openai loop calling an MCP server's tools, under agentotel; the same
loop under OpenInference through agentotel-collector). Faults from tau-bench-style policy breaks, MAST and TRAIL, and
outside the model; ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout32.py [RECORDER|PAIR ...]     # the table

heldout32.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout32's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout32


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector, one with an MCP server), ~1 min
def test_the_whole_thirty_second_held_out_set(tmp_path):
    kit.held_to_lists(heldout32, tmp_path, count=27)
