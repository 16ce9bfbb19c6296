"""From a failed run to a regression case: findings, case files, replay and checking.

    from agentotel.cases import findings, new_case, replay, check
    found = findings(traces, "5f1c2a8e")                     # loops, drift, ignored errors, ...
    case = new_case(load_run(traces, "5f1c2a8e"), at=3, layer="tool", found=found)
    case.save("cases/orders-shape-drift.yaml")
    with replay(case):                                        # tools and early model calls served from the case
        my_agent(case.input["task"])
    assert check(case, agentotel.open()).passed
"""

from __future__ import annotations

from agentotel.cases._record import History, RunRecord, load_history, load_run
from agentotel.cases.case import Assertions, Case, CaseError, ExpectedCall, new_case, suggest_cut
from agentotel.cases.check import CheckReport, Gate, check, check_record, trajectory_match
from agentotel.cases.detectors import Finding, Thresholds, detect, findings
from agentotel.cases.replay import ReplayMismatch, ReplayMiss, Replayer, replay

__all__ = [
    "Assertions",
    "Case",
    "CaseError",
    "CheckReport",
    "ExpectedCall",
    "Finding",
    "Gate",
    "History",
    "ReplayMiss",
    "ReplayMismatch",
    "Replayer",
    "RunRecord",
    "Thresholds",
    "check",
    "check_record",
    "detect",
    "findings",
    "load_history",
    "load_run",
    "new_case",
    "replay",
    "suggest_cut",
    "trajectory_match",
]
