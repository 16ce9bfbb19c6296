"""`diff` and `check` on a second held-out fault-injection set (tests/analysis/heldout2.py): a travel desk recorded
the ways the detectors saw least — OpenInference and OpenLLMetry (through the collector's OTLP receiver) spans of
a plain openai loop, Vercel AI SDK `ai.*` spans, LangGraph and pydantic-ai under agentotel — with faults from
MAST, TRAIL, ToolScan and AgentErrorTaxonomy. Ground truth is located on the recorded faulty run by what its
steps did.

    python tests/analysis/heldout2.py [RECORDER|PAIR ...]     # the table

Numbers on the whole set (29 pairs, 5 recorders; `test_the_whole_second_held_out_set`, `-m slow`; load ~8):

- before (6e7bb9d): diff top-1 29/29, check step+layer 17/29, good runs with a warning 0/29 (measured on the 27
  pairs of the first version, 27/17/0; the two Vercel pairs added later, a goal deviation and a task cut,
  rescored with 6e7bb9d's detectors: both check misses).
  Misses: a failed (429) model call taken as the step that went on past a tool error or was given a cut context
  (the retry is); a window that replaced the model's own search request read as results "elided in place"; a
  made-up airport code in place of the task's (no rule); unanswered parallel calls placed at the final answer,
  two model calls after the loop went on without them; a search made again after the booking, unchanged
  (OpenLLMetry's `@tool` input `{"args": [], "kwargs": {...}}` was not read as the call's arguments, so no
  tool step could be matched to the model's request); plus the two below.
- after: diff top-1 29/29, check step+layer 27/29, good runs with a warning 0/29 (load ~18; `-m slow` took ~4 min).
- then 28/29: a run's task and answer also come from a trace root outside any run (an OpenInference CHAIN or a
  traceloop workflow span keeps them in its attributes), so a premature stop whose "I could not finish." sits on
  the CHAIN root is found. Known miss (`check_missed`): a sold-out flight chosen as the cheapest (a misreading of
  data no rule judges).

The default run records five Vercel-recorder pairs (`FAST`: one process, no SDK patched); the slow test all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from heldout import Score, table
from heldout2 import pairs, record, score

# The default run: the Vercel recorder's pairs each rule added for this set is judged on (one process, no SDK patched).
FAST = ("tool-vercel-search-timeout", "workflow-vercel-parallel-dropped", "model-vercel-goal-deviation",
        "memory-vercel-task-truncated", "model-vercel-misread-output")


def _scores(root: Path, chosen: list[Any]) -> dict[str, Score]:
    return {s.pair.id: s for s in score(root, record(root, chosen))}


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Score]:
    return _scores(tmp_path_factory.mktemp("heldout2"), [p for p in pairs() if p.id in FAST])


@pytest.mark.parametrize("pair", FAST)
def test_diff_and_check_on_vercel_ai_sdk_spans(fast, pair):
    s = fast[pair]
    assert s.expected is not None, "the faulty run lacks the step its fault names"
    assert s.diff_ok, table([s])
    assert s.check_ok or s.pair.check_missed, table([s])
    assert not (s.check_ok and s.pair.check_missed), f"{pair} is found now: drop its check_missed\n" + table([s])
    assert s.alarms == [], table([s])


def test_a_failed_model_call_is_not_the_step_that_went_on(fast):
    # search_flights timed out; a 429 hit the next model call, which the loop retried: the retry went on
    s = fast["tool-vercel-search-timeout"]
    failed = [f for f in s.faulty if f.kind == "tool_error_ignored"]
    assert [f.index for f in failed] == [s.expected], table([s])


@pytest.mark.slow
def test_the_whole_second_held_out_set(tmp_path):
    scores = list(_scores(tmp_path, pairs()).values())
    report = table(scores)
    assert all(s.expected is not None for s in scores), report
    assert sum(s.diff_ok for s in scores) == len(scores), report
    assert [s.pair.id for s in scores if not s.check_ok] == [p.id for p in pairs() if p.check_missed], report
    assert [s.pair.id for s in scores if s.alarms] == [], report
