"""`diff` and `check` on a fifteenth held-out fault-injection set (tests/analysis/heldout15.py), built blind (the
detectors unread): a bank's customer agent with written KYC and payment rules and a customer over several turns
(pydantic-ai under agentotel; the plain openai SDK under OpenLLMetry through agentotel-collector), a clinic's front desk
where a receptionist hands the patient to a scheduler (the OpenAI Agents SDK), and a planner -> searcher -> writer
research team (the OpenAI Agents SDK) whose handoff can lose the request's constraint.
Faults from tau-bench-style policy breaks, MAST and TRAIL, and outside the model (the instructions' rule text, the
deployment's configured model, a handoff that passes only the plan, a tool answering another record); ground truth
located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout15.py [RECORDER|PAIR ...]     # the table

heldout15.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout15's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout15


@pytest.mark.slow  # four framework processes (one through agentotel-collector), ~1 min
def test_the_whole_fifteenth_held_out_set(tmp_path):
    kit.held_to_lists(heldout15, tmp_path)
