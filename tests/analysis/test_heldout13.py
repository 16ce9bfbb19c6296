"""`diff` and `check` on a thirteenth held-out fault-injection set (tests/analysis/heldout13.py), built blind (the
detectors unread): an IT helpdesk agent with written identity and security rules and an employee over several turns
(pydantic-ai; the OpenAI Agents SDK, a triage agent handing over to the account specialist), and an e-commerce
operations agent serving an operations manager (pydantic-ai; the openai SDK under OpenInference through
agentotel-collector).
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (the instructions' rule text, the
deployment's configured model, a handoff dropping the conversation, the orders API's v2); ground truth located on the
recorded faulty run by what its steps did.

    python tests/analysis/heldout13.py [RECORDER|PAIR ...]     # the table

heldout13.DIFF_MISSED / CHECK_MISSED name the pairs missed when the set was built, FALSE_ALARMS the good runs warned
about, and why.
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout13


@pytest.mark.slow  # four framework processes (one through agentotel-collector), ~0.5 min under load
def test_the_whole_thirteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout13, tmp_path)
