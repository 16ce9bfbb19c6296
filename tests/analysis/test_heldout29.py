"""`diff` and `check` on a twenty-ninth held-out fault-injection set (tests/analysis/heldout29.py), built blind (the
detectors unread): a leisure club's membership desk talking with a member over several turns under a written policy (a
boto3 Bedrock converse loop under agentotel), a translation agency's project manager delegating to a translator agent
and a QA reviewer agent from inside its tools (pydantic-ai, under agentotel) and an aircraft maintenance-records agent
reading AD revisions, logbook entries, life-limited parts in hours and cycles and deferred defects (the OpenAI Agents
SDK under agentotel; a plain openai loop under OpenLLMetry through agentotel-collector). Faults from tau-bench-style
policy breaks, MAST and TRAIL, and outside the model (instructions rewritten without a rule, old models configured, a
logbook API's changed shape, a stale directives index, two APIs answering another record, a delegation that drops the
brief); ground truth located on the recorded faulty run by what its steps did.

    python tests/analysis/heldout29.py [RECORDER|PAIR ...]     # the table

heldout29.DIFF_MISSED / CHECK_MISSED name the pairs missed now, FALSE_ALARMS the good runs warned about now, and why
(what was missed blind, when the set was built, is in heldout29's docstring).
"""

from __future__ import annotations

import pytest

import _heldout_kit as kit
import heldout29


@pytest.mark.slow  # four SDK/framework processes (one through agentotel-collector), ~3 min
def test_the_whole_twenty_ninth_held_out_set(tmp_path):
    kit.held_to_lists(heldout29, tmp_path, count=30)
