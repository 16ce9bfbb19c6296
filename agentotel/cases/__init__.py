"""From a failed run to a regression case: findings, case files, replay and checking.

    from agentotel.cases import findings, load_run, new_case, run_case, suggest_cut
    traces = agentotel.open()
    found = findings(traces, "5f1c2a8e")                  # loops, drift, ignored errors, bad calls, overruns
    record = load_run(traces, "5f1c2a8e")
    case = new_case(record, at=suggest_cut(record, found), layer="tool", found=found)
    case.save("cases/orders-shape-drift.yaml")            # commit it
    report = run_case(case, agent="my_agent:answer")      # replay (tools, early model calls from the case), then check
    assert report.passed, "\n".join(report.lines())

The same from the command line: `agentotel check RUN`, `agentotel case new RUN --at STEP --layer LAYER
-o FILE`, then `pytest cases/` (the pytest plugin) or `agentotel case run FILE`. Lower level:
`with agentotel.replay(case): ...` serves the fixtures to any code, and `check(case, traces, run)`
judges a recorded run.
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
    "run_case": "agentotel.cases.runner",
}

if TYPE_CHECKING:  # pragma: no cover
    from agentotel.cases._record import History, RunRecord, load_history, load_run
    from agentotel.cases.case import Assertions, Case, CaseError, ExpectedCall, new_case, suggest_cut
    from agentotel.cases._check import CheckReport, Gate, check, check_record, trajectory_match
    from agentotel.cases.detectors import Finding, Thresholds, detect, findings
    from agentotel.cases._replay import ReplayFrontier, ReplayMismatch, ReplayMiss, Replayer, replay
    from agentotel.cases.runner import run_case


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentotel.cases' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
