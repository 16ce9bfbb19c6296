"""`diff` and `check` on a twenty-second held-out fault-injection set (tests/analysis/heldout22.py), built blind (the
detectors unread): a SaaS billing desk talking with a customer over several turns under a written billing policy (a boto3
Bedrock converse loop under agentotel), a warehouse fulfilment team where a picker hands to a packer who hands to a
carrier booker (the OpenAI Agents SDK with two handoffs, under agentotel) and a clinical trial's pre-screening agent
reading versioned protocol documents, patient records and lab values in several units (a plain openai loop calling an
MCP server's tools, under agentotel; the same loop under OpenInference through agentotel-collector). Faults from
tau-bench-style policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, old models
configured, two APIs' changed shapes, a stale protocol index, two APIs answering another record, a handoff filter that
drops the conversation); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout22.py [RECORDER|PAIR ...]     # the table

heldout22.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout22's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout22


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector, one with an MCP server a run), ~3 min
def test_the_whole_twenty_second_held_out_set(tmp_path):
    kit.held_to_lists(heldout22, tmp_path, count=30)
