"""`diff` and `check` on a third held-out fault-injection set (tests/analysis/heldout3.py): a literature desk
(a scored search, two reads, a citation) recorded through google-genai and Bedrock converse under agentotel, MCP
tools driven by the anthropic SDK, and OpenInference spans (the openai instrumentation, the app's RETRIEVER,
TOOL and CHAIN spans), with faults from MAST, TRAIL, ToolScan and AgentErrorTaxonomy. Ground truth is located on
the recorded faulty run by what its steps did.

    python tests/analysis/heldout3.py [RECORDER|PAIR ...]     # the table
    python tests/analysis/heldout3.py --score DIR [...]       # the runs a call left in DIR, scored again

Numbers on the whole set (38 pairs; 4 recorders; `test_the_whole_third_held_out_set`, `-m slow`; load ~6-12):

- first version (20 pairs), cc06531's detectors: diff top-1 20/20, check step+layer 16/20, good runs with a warning
  0/20 (after a scripted-model bug was fixed; one good MCP run had timed out under load in the very first try).
- before (cc06531's detectors, one recording of all 38 pairs, scored by each tree): diff 38/38, check 28/38,
  good runs with a warning 0/38. Misses: a loop that stopped on a search's documents unseen (a retrieval, not a
  tool, was the last step: bedrock, oi); the model asking for the same search again after reading its hits (a
  retrieval the model asked for was judged by no repetition rule: bedrock, oi); a weak search (every score under
  the policy's minimum) whose own hits the model read and answered from (the reads counted as other evidence:
  bedrock, oi; and mcp, where the search is a plain tool returning scored documents and was not judged at all); a
  tool result the model was given with other numbers than the tool returned (oi: its tool spans have no call
  id); a result replaced by a placeholder, which the model asked for again (ranked as a repetition; and not found
  at all on Gemini, whose calls and results carry no ids in the messages: genai, bedrock).
- after: diff top-1 38/38, check step+layer 38/38, good runs with a warning 0/38.
- the coordinator took back the rule for results without call ids (3dde73c: Gemini's calls and results paired
  by their place, tool_result_cut superseding repeated_tool_call): it raised tool_result_cut on the regression
  story's drifted tool output (tests/cases: 10 failures) and hid its repetition. Its four pairs (parallel calls
  dropped, a result cut; genai, bedrock) are out of this set again: 34 pairs, 34/34/0 as before them.
- back in (38 pairs), with two changes instead of that rule: google-genai gives a history's id-less calls and
  results the ids the run's responses gave the calls (so Gemini's histories pair by id like every other
  provider's), and a result counts as cut only on evidence of a cut (a placeholder's words or an ellipsis, or the
  start of the result alone: not the regression story's "no orders found", the app's own words), which then
  explains the model asking again for it at that step. Load ~7: before (main 758674d; its four pairs recorded
  alone) diff 4/4, check 2/4 (both result cuts ranked as repetitions), good runs with a warning 0/4; after (one
  recording of all 38) diff 38/38, check 38/38, good runs with a warning 0/38.

The default run records two OpenInference pairs (one process, the openai SDK patched by OpenInference only); the
slow test all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from heldout import Score, table
from heldout3 import pairs, record, score

# Two pairs (the default suite stays small); the rule tests (test_heldout3_rules.py) hold each rule on plain data.
FAST = ("product-oi-weak-retrieval", "memory-oi-history-rewritten")


def _scores(root: Path, chosen: list[Any]) -> dict[str, Score]:
    return {s.pair.id: s for s in score(root, record(root, chosen))}


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Score]:
    return _scores(tmp_path_factory.mktemp("heldout3"), [p for p in pairs() if p.id in FAST])


@pytest.mark.parametrize("pair", FAST)
def test_diff_and_check_on_openinference_retriever_spans(fast, pair):
    s = fast[pair]
    assert s.expected is not None, "the faulty run lacks the step its fault names"
    assert s.diff_ok, table([s])
    assert s.check_ok, table([s])
    assert s.alarms == [], table([s])


@pytest.mark.slow
def test_the_whole_third_held_out_set(tmp_path):
    scores = list(_scores(tmp_path, pairs()).values())
    report = table(scores)
    assert all(s.expected is not None for s in scores), report
    assert sum(s.diff_ok for s in scores) == len(scores), report
    assert [s.pair.id for s in scores if not s.check_ok] == [p.id for p in pairs() if p.check_missed], report
    assert [s.pair.id for s in scores if s.alarms] == [], report
