"""`diff` and `check` on a twelfth held-out fault-injection set (tests/analysis/heldout12.py), built blind (the
detectors unread): a coding agent whose patches a reviewer sub-agent approves (the OpenAI Agents SDK with the reviewer
as a tool and as a handoff, the openai loop under OpenLLMetry through agentotel-collector) and a web agent answering
from pages and filling forms (Microsoft Agent Framework, MCP tools on a stdio server called from the anthropic SDK
loop). Faults from MAST's specification, inter-agent and verification failures, TRAIL's API issues, retrieval and
hallucination errors, a page's prompt injection and a blind re-submission; ground truth located on the recorded
faulty run by what its steps did.

    python tests/analysis/heldout12.py [RECORDER|PAIR ...]     # the table
    python tests/analysis/heldout12.py --score DIR [...]       # the runs a call left in DIR, scored again

heldout12.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout12


@pytest.mark.slow  # five framework processes and a server process per MCP run, a few minutes under load
def test_the_whole_twelfth_held_out_set(tmp_path):
    kit.held_to_lists(heldout12, tmp_path)
