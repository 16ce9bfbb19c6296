"""From a failed run to a regression case: findings, case files, replay and checking.

    from agentotel.cases import findings, load_run, new_case, run_case, suggest_cut
    traces = agentotel.open()
    found = findings(traces, "5f1c2a8e")                  # loops, drift, ignored errors, bad calls, overruns
    record = load_run(traces, "5f1c2a8e")
    case = new_case(record, at=2, layer="tool", found=found)   # cut at the tool step the bug is in
    case.assertions.required_evidence = ["10.5"]          # what the model must be shown after it
    case.save("cases/orders-shape-drift.yaml")            # commit it
    report = run_case(case, agent="my_agent:answer")      # live tools, frozen models: offline
    assert report.passed, "\n".join(report.lines())

The same from the command line: `agentotel check RUN`, `agentotel case new RUN --at STEP --layer LAYER
--evidence TEXT -o FILE`, then `pytest cases/` (the pytest plugin) or `agentotel case run FILE`; a suite
with `agentotel case run cases/ --report FILE` and `agentotel case compare BEFORE AFTER`. Every gate
ends pass, fail or not_reached, and a case passes only when all were reached and passed. Replays are
recorded in `<store>/replays`, never in the store. Lower level: `with agentotel.replay(case): ...` serves
the recording to any code, and `check(case, traces, run)` judges a recorded run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Loaded on first use: `agentotel.tools` imports `agentotel.cases._active` (the replay seam) on every
# program's start, which must not pull in YAML, the case model or the query side.
_EXPORTS = {
    "History": "agentotel.cases._record",
    "RunRecord": "agentotel.cases._record",
    "load_history": "agentotel.cases._record",
    "load_run": "agentotel.cases._record",
    "Assertions": "agentotel.cases.case",
    "Case": "agentotel.cases.case",
    "CaseError": "agentotel.cases.case",
    "ExpectedCall": "agentotel.cases.case",
    "new_case": "agentotel.cases.case",
    "suggest_cut": "agentotel.cases.case",
    "CheckReport": "agentotel.cases._check",
    "Gate": "agentotel.cases._check",
    "check": "agentotel.cases._check",
    "check_record": "agentotel.cases._check",
    "trajectory_match": "agentotel.cases._check",
    "Finding": "agentotel.cases.detectors",
    "Thresholds": "agentotel.cases.detectors",
    "detect": "agentotel.cases.detectors",
    "findings": "agentotel.cases.detectors",
    "ReplayMismatch": "agentotel.cases._replay",
    "ReplayMiss": "agentotel.cases._replay",
    "ReplayFrontier": "agentotel.cases._replay",
    "Replayer": "agentotel.cases._replay",
    "replay": "agentotel.cases._replay",
    "replay_directory": "agentotel.cases._replay",
    "run_case": "agentotel.cases.runner",
}

if TYPE_CHECKING:  # pragma: no cover
    from agentotel.cases._record import History, RunRecord, load_history, load_run
    from agentotel.cases.case import Assertions, Case, CaseError, ExpectedCall, new_case, suggest_cut
    from agentotel.cases._check import CheckReport, Gate, check, check_record, trajectory_match
    from agentotel.cases.detectors import Finding, Thresholds, detect, findings
    from agentotel.cases._replay import ReplayFrontier, ReplayMismatch, ReplayMiss, Replayer, replay, replay_directory
    from agentotel.cases.runner import run_case


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentotel.cases' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
