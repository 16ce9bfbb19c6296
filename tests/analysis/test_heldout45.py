"""`diff` and `check` on a forty-fifth held-out fault-injection set (tests/analysis/heldout45.py), built blind (the
detectors unread): a language school's placement desk with a written policy and a student over several turns (a plain
anthropic messages loop under agentotel), a film festival's submissions team where an intake desk, a programmer and a
scheduler hand over on the OpenAI Agents SDK (chat completions, under agentotel) and a rail-freight wagon records agent
reading wagon records, defect reports and repairs from a search and axle weighings from DuckDB rows (an anthropic loop
over an MCP server's tools under agentotel; an openai loop under OpenLLMetry through agentotel-collector). Faults from
tau-bench-style policy breaks, MAST and TRAIL, and outside the model; ground truth located on the recorded faulty run
by what its steps did.

    python tests/analysis/heldout45.py [RECORDER|PAIR ...]     # the table

heldout45.DIFF_MISSED / CHECK_MISSED name the pairs missed, FALSE_ALARMS the good runs warned about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout45


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1 min
def test_the_whole_forty_fifth_held_out_set(tmp_path):
    kit.held_to_lists(heldout45, tmp_path, count=31)
