"""`diff` and `check` on a nineteenth held-out fault-injection set (tests/analysis/heldout19.py), built blind (the
detectors unread): a property manager's resident assistant with a written lease policy and a tenant over several turns
(pydantic-ai, its own instrumentation on beside agentotel's), a power utility's outage desk where a triage agent hands
the outage to a crew dispatcher (two LangGraph create_react_agents in one StateGraph under agentotel) and an analytics
agent answering with SQL over a real DuckDB warehouse and a versioned metrics glossary (an anthropic SDK loop over an
MCP client session under agentotel; an openai loop under OpenLLMetry through agentotel-collector). Faults from
tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, an old
model configured, three APIs' changed shapes, a stale glossary index); ground truth located on the recorded faulty run
by what its steps did.

    python tests/analysis/heldout19.py [RECORDER|PAIR ...]     # the table

heldout19.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout19's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout19


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~1.5 min
def test_the_whole_nineteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout19, tmp_path, count=30)
