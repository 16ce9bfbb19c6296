"""`agentotel case new|check|run|compare`: from "this run was wrong" to a regression case.

    agentotel check 3f2a                                        # what went wrong, and where to cut (agentotel.cli)
    agentotel case new 3f2a --at 2 --layer tool --evidence 10.5 -o cases/orders.yaml
    agentotel case run cases/orders.yaml --agent my_agent:answer   # or: pytest cases/
    agentotel case run cases/ --report after.json && agentotel case compare before.json after.json

A case replays by kind of step: `--tools live|frozen --models live|frozen` (default: the case's `replay:`;
cut at a tool step, the tool runs live and model calls are answered from the recording, offline). With
frozen models the replay stops where the agent's request departs from the recording, and `--evidence TEXT`
says what the model must be shown there. `case run cases/ --report FILE` and `case compare BEFORE AFTER`
compare suites.

Registered into the `agentotel` command by `agentotel.cli` (its `_EXTENSIONS`); each handler only
parses, calls `agentotel.cases`, and formats. Exit status 3 means a case failed one of its gates.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentotel.cli import Output, UserError, _open, command

CASE_FAILED = 3

_CASE_ACTIONS = {
    "new": ("cut a regression case from a recorded run",
            "agentotel case new 3f2a --at 2 --layer tool --evidence '2 orders' --agent support_agent:answer -o cases/orders.yaml"),
    "check": ("judge a recorded run (default: the case's latest replay) against a case",
              "agentotel case check cases/orders.yaml"),
    "run": ("replay cases against the agent and judge each (exit 3 when one fails)",
            "agentotel case run cases/ --tools live --models frozen --report before.json"),
    "compare": ("compare two suite reports: pass rate, gate failures, tool calls, steps, latency, cost, flips",
                "agentotel case compare before.json after.json > comment.md"),
}


def _replay_options(p: argparse.ArgumentParser, stored: bool) -> None:
    where = "stored in the case" if stored else "default: the case's replay:"
    p.add_argument("--tools", choices=("live", "frozen"),
                   help=f"at and after the cut, run @tool/@retrieval functions for real (live) or serve their recorded results ({where})")
    p.add_argument("--models", choices=("live", "frozen"),
                   help="at and after the cut, call the model for real (live) or answer requests equal to the recorded ones "
                        f"and stop where the agent departs from the recording (frozen: offline) ({where})")
    p.add_argument("--mode", choices=("live", "frozen"), help="both --tools and --models at once (the old single switch)")
    p.add_argument("--policy", choices=("strict", "fifo"),
                   help=f"how replay matches calls with the recording: by content (strict) or in order (fifo) ({where})")


def _store_options(p: argparse.ArgumentParser, replays: bool = True) -> None:
    p.add_argument("--dir", default=None, help="the trace store (default: $AGENTOTEL_DIR, else ./agentotel-traces)")
    if replays:
        p.add_argument("--replay-dir", metavar="DIR", help="where replays are recorded (default: <store>/replays)")


def _case_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    parsers = {}
    for action, (summary, example) in _CASE_ACTIONS.items():
        parsers[action] = sub.add_parser(action, help=summary, description=summary[:1].upper() + summary[1:] + ".",
                                         epilog=f"Example:\n  {example}", formatter_class=argparse.RawDescriptionHelpFormatter)
        # SUPPRESS: `case --json run ...` (given before the action) is not reset by the action's default.
        parsers[action].add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text")

    new = parsers["new"]
    new.add_argument("target", metavar="RUN", help="the run to cut: run id, trace id, a prefix, or a run name (its latest run)")
    new.add_argument("--at", type=int, metavar="STEP", help="the first affected step (default: suggested by the findings)")
    new.add_argument("--layer", help="prompt, tool, workflow, memory, model or product (default: the finding's)")
    new.add_argument("-o", "--output", metavar="FILE", help="where to write the case (default: cases/NAME.yaml)")
    new.add_argument("--name", help="the case name (default: from the file name)")
    new.add_argument("--failure-mode", help="the failure-mode tag (default: the finding's kind)")
    new.add_argument("--agent", metavar="MODULE:FUNCTION", help="the agent entry point a replay calls with the recorded task")
    new.add_argument("--evidence", action="append", default=[], metavar="TEXT",
                     help="text the model must be shown at the failure step (repeatable): what an offline replay judges")
    _replay_options(new, stored=True)
    _store_options(new, replays=False)

    check = parsers["check"]
    check.add_argument("target", metavar="CASE", help="the case file")
    check.add_argument("run", metavar="RUN", nargs="?", help="the run to judge (default: the case's latest replay)")
    _store_options(check)

    run = parsers["run"]
    run.add_argument("targets", metavar="CASE", nargs="+", help="case files, or folders of them")
    run.add_argument("--agent", metavar="MODULE:FUNCTION",
                     help="the agent to replay (default: the case's agent:); imported from the case's folder and the current one")
    run.add_argument("--report", metavar="FILE", help="write every case's verdict and measures as JSON (for case compare)")
    run.add_argument("--html", metavar="DIR",
                     help="write each failing case's replayed run as a self-contained HTML page into DIR (a CI artifact)")
    _replay_options(run, stored=False)
    _store_options(run)

    compare = parsers["compare"]
    compare.add_argument("before", metavar="BEFORE", help="the suite report before the change")
    compare.add_argument("after", metavar="AFTER", help="the suite report after it")


@command("case", help="regression cases: cut one from a run (new), judge a run (check), replay and judge (run), compare suites",
         example="agentotel case new 3f2a --at 3 --layer tool -o cases/orders.yaml", arguments=_case_arguments, store=False)
def _case(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases.case import CaseError

    try:
        return {"new": _case_new, "check": _case_check, "run": _case_run, "compare": _case_compare}[args.action](args, out)
    except CaseError as exc:
        raise UserError(str(exc)) from None


def _case_new(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases import load_history, load_run, new_case, suggest_cut
    from agentotel.cases.case import offline_warnings, primary_finding
    from agentotel.cases.detectors import detect

    traces = _open(args, out)
    record = load_run(traces, args.target)  # a run name means its latest run (Traces.resolve)
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
    if args.mode:
        case.mode = args.mode
    case.replay_tools = args.tools or case.replay_tools
    case.replay_models = args.models or case.replay_models
    case.assertions.required_evidence = list(args.evidence)
    path = case.save(args.output or Path("cases") / f"{_file_name(name)}.yaml")
    warnings = offline_warnings(case, record)
    if out.json:
        out.emit_json({"path": str(path), "case": case.to_dict(), "warnings": warnings})
        return 0
    gates = ", ".join(k for k in case.to_dict().get("assertions", {}))
    out.console.print(
        f"wrote {path}: cut at step {at} [{layer}{', ' + case.failure_mode if case.failure_mode else ''}], "
        f"{len(case.tools)} tool and {len(case.models)} model fixture(s), replay: tools {case.replay_tools}, "
        f"models {case.replay_models}, gates: {gates or 'none'}",
        markup=False, highlight=False,
    )
    for warning in warnings:
        out.warn(warning)
    return 0


def _print_report(out: Output, report: Any) -> int:
    if out.json:
        out.emit_json(report.to_dict())
    else:
        out.console.print("\n".join(report.lines()), markup=False, highlight=False)
    return 0 if report.passed else CASE_FAILED


def _replay_store(args: argparse.Namespace) -> Path:
    from agentotel.cases._replay import replay_directory

    return Path(args.replay_dir) if args.replay_dir else replay_directory(args.dir)


def _case_check(args: argparse.Namespace, out: Output) -> int:
    from agentotel import query
    from agentotel.cases import check

    from agentotel.cases.case import Case

    case = Case.load(args.target)
    # A replay is in the replay store; a run named explicitly may be in either.
    store = _replay_store(args)
    traces = None
    if args.run is not None and not args.replay_dir:
        traces = _open(args, out)
        try:
            traces.trajectory(args.run)
        except query.QueryError:
            traces = None
    if traces is None:
        try:
            traces = query.open(store)
        except query.StoreNotFound:
            raise UserError(f"no replay of case {case.ref!r} in {store}: replay it first, or name a run") from None
    report = check(case, traces, args.run)
    report.store = str(traces.directory)
    return _print_report(out, report)


def _file_name(name: str) -> str:
    """`name` as one file name: a case is named after its run, and a run's name is whatever its spans say
    ("../../x" or "/etc/x" must not choose where a file is written), neither hidden from a glob nor read as an option."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name).lstrip(".-") or "case"


def _write_html(out: Output, folder: str, name: str, report: Any) -> None:
    """The failing case's replayed run as one HTML page (agentotel.view), for a bug report or a CI artifact."""
    from agentotel.query import QueryError, open as open_store
    from agentotel.view import report_html

    if not (report.store and report.run_id):
        out.warn(f"case {name}: no replayed run to write as HTML")
        return
    try:
        text = report_html(open_store(report.store), report.run_id)
    except QueryError as exc:
        out.warn(f"case {name}: its replay could not be read for the HTML page: {exc}")
        return
    target = Path(folder) / f"{_file_name(name)}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    if not out.json:
        out.console.print(f"  page: {target}", markup=False, highlight=False)


def _case_run(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases import run_case
    from agentotel.cases._suite import case_files, suite_entry, write_report
    from agentotel.cases.case import Case, CaseError

    paths = case_files(args.targets)
    if not paths:
        raise UserError(f"no case files in {', '.join(args.targets)}")
    entries, reports, failed = [], [], False
    for path in paths:
        case = None
        try:
            case = Case.load(path)
            with out.progress(f"Replaying {case.name}…"):
                report = run_case(case, agent=args.agent, directory=args.dir, policy=args.policy, mode=args.mode,
                                  tools=args.tools, models=args.models, replay_dir=args.replay_dir)
        except CaseError as exc:
            if len(paths) == 1 and not args.report:
                raise
            entries.append(suite_entry(case, path, error=str(exc)))
            failed = True
            if not out.json:
                out.console.print(f"case {case.name if case else path}: ERROR {exc}", markup=False, highlight=False)
            continue
        entries.append(suite_entry(case, path, report))
        reports.append(report)
        failed = failed or not report.passed
        if not out.json:
            out.console.print("\n".join(report.lines()), markup=False, highlight=False)
        if args.html and not report.passed:
            _write_html(out, args.html, case.name, report)
    if args.report:
        written = write_report(entries, args.report)
        if not out.json:
            passed = sum(1 for e in entries if e.get("passed"))
            out.console.print(f"{passed}/{len(entries)} case(s) passed; report: {written}", markup=False, highlight=False)
    if out.json:
        out.emit_json(entries[0] if len(entries) == 1 and not args.report else {"cases": entries})
    return CASE_FAILED if failed else 0


def _case_compare(args: argparse.Namespace, out: Output) -> int:
    from agentotel.cases._suite import compare_reports, read_report

    comparison = compare_reports(read_report(args.before), read_report(args.after))
    if out.json:
        out.emit_json(comparison.to_dict())
    else:
        out.console.file.write(comparison.markdown())
    return 1 if comparison.regressions else 0
