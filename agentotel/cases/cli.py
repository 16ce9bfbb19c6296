"""`agentotel case new|check|run`: from "this run was wrong" to a regression case.

    agentotel check 3f2a                                        # what went wrong, and where to cut (agentotel.cli)
    agentotel case new 3f2a --at 3 --layer tool -o cases/orders.yaml
    agentotel case run cases/orders.yaml --agent my_agent:answer   # or: pytest cases/

A `--mode frozen` case runs offline (no model, no live tool: CI without network or keys): the replay stops
at the first model request past the recorded answers, and `--evidence TEXT` says what the model must be
shown there.

Registered into the `agentotel` command by `agentotel.cli` (its `_EXTENSIONS`); each handler only
parses, calls `agentotel.cases`, and formats. Exit status 3 means a case failed one of its gates.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentotel.cli import Output, UserError, _open, _table, command

CASE_FAILED = 3

def _case_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("new", "check", "run"),
                   help="new: cut a case from RUN; check: judge a run against CASE; run: replay CASE and judge it")
    p.add_argument("target", metavar="RUN|CASE", help="the run to cut (new), or the case file (check, run)")
    p.add_argument("run", metavar="RUN", nargs="?", help="check: the run to judge (default: the case's latest replay)")
    p.add_argument("--at", type=int, metavar="STEP", help="new: the first affected step (default: suggested by the findings)")
    p.add_argument("--layer", help="new: prompt, tool, workflow, memory, model or product (default: the finding's)")
    p.add_argument("-o", "--output", metavar="FILE", help="new: where to write the case (default: cases/NAME.yaml)")
    p.add_argument("--name", help="new: the case name (default: from the file name)")
    p.add_argument("--failure-mode", help="new: the failure-mode tag (default: the finding's kind)")
    p.add_argument("--agent", metavar="MODULE:FUNCTION", help="new: record the agent entry point; run: the agent to replay")
    p.add_argument("--policy", choices=("strict", "fifo"),
                   help="how replay matches calls with the fixtures (new: stored in the case, default strict; run: override)")
    p.add_argument("--mode", choices=("live", "frozen"),
                   help="past the fixtures: live calls, or frozen (offline: stop at the first unanswered model request) "
                        "(new: stored in the case, default live; run: override)")
    p.add_argument("--evidence", action="append", default=[], metavar="TEXT",
                   help="new: text the model must be shown at the failure step (repeatable; what a frozen replay judges)")


@command("case", help="regression cases: cut one from a run (new), judge a run (check), replay and judge (run)",
         example="agentotel case new 3f2a --at 3 --layer tool -o cases/orders.yaml", arguments=_case_arguments)
def _case(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases.case import CaseError

    try:
        return {"new": _case_new, "check": _case_check, "run": _case_run}[args.action](args, out)
    except CaseError as exc:
        raise UserError(str(exc)) from None


def _case_new(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases import load_history, load_run, new_case, suggest_cut
    from agentotel.cases.case import primary_finding
    from agentotel.cases.detectors import detect

    traces = _open(args, out)
    record = load_run(traces, args.target)
    found = detect(record, load_history(traces, record))
    at = args.at if args.at is not None else suggest_cut(record, found)
    if at is None:
        raise UserError(f"run {record.run_id} has no findings to suggest a step: give --at STEP")
    cause = primary_finding(found, at + 2)
    layer = args.layer or (cause.layer if cause else None)
    if layer is None:
        raise UserError("give --layer (prompt, tool, workflow, memory, model or product)")
    name = args.name or (Path(args.output).stem if args.output else f"{record.run.get('name') or 'run'}-step-{at}")
    case = new_case(record, at=at, layer=layer, name=name, failure_mode=args.failure_mode, agent=args.agent, found=found)
    case.policy = args.policy or case.policy
    case.mode = args.mode or case.mode
    case.assertions.required_evidence = list(args.evidence)
    path = case.save(args.output or Path("cases") / f"{name}.yaml")
    if out.json:
        out.emit_json({"path": str(path), "case": case.to_dict()})
        return 0
    gates = ", ".join(k for k in case.to_dict().get("assertions", {}))
    out.console.print(
        f"wrote {path}: cut at step {at} [{layer}{', ' + case.failure_mode if case.failure_mode else ''}], "
        f"{len(case.tools)} tool and {len(case.models)} model fixture(s), gates: {gates or 'none'}",
        markup=False, highlight=False,
    )
    return 0


def _print_report(out: Output, report: Any) -> int:
    if out.json:
        out.emit_json(report.to_dict())
    else:
        out.console.print("\n".join(report.lines()), markup=False, highlight=False)
    return 0 if report.passed else CASE_FAILED


def _case_check(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases import check

    traces = _open(args, out)
    return _print_report(out, check(args.target, traces, args.run))


def _case_run(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases import run_case

    with out.progress("Replaying the case…"):
        report = run_case(args.target, agent=args.agent, directory=args.dir, policy=args.policy, mode=args.mode)
    return _print_report(out, report)
