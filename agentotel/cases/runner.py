"""Running a case: replay it against the agent's entry point, record the run, and check it.

    report = run_case("cases/orders-shape-drift.yaml", agent="my_agent:answer", directory="traces")

The agent entry point is a `module:function` taking the case's task (sync or async) and returning the
answer; it is named in the case (`agent:`), or given here / in the pytest plugin's configuration.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from pathlib import Path
from typing import Any, Callable

from agentotel.cases.case import Case, CaseError
from agentotel.cases._check import CheckReport, check
from agentotel.cases._replay import ReplayFrontier, replay

__all__ = ["run_case", "load_agent"]


def load_agent(spec: str) -> Callable[..., Any]:
    """The callable named by `package.module:function` (dots after the colon walk attributes)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CaseError(f"agent {spec!r}: expected 'package.module:function'")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise CaseError(f"agent {spec!r}: cannot import {module_name} ({exc})") from None
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise CaseError(f"agent {spec!r}: {module_name} has no {attribute}") from None
    if not callable(target):
        raise CaseError(f"agent {spec!r} is not callable")
    return target


def _call(agent: Callable[..., Any], task: Any) -> Any:
    result = agent(task)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def run_case(
    case: Case | str | Path,
    *,
    agent: str | Callable[..., Any] | None = None,
    directory: str | Path | None = None,
    policy: str | None = None,
    mode: str | None = None,
) -> CheckReport:
    """Replay the case against the agent inside a recorded run, then check that run against the case.

    The agent's own exceptions do not escape: a run that raised simply ends with status error, which
    the case's `final_status` gate judges. Replay and recording need `agentotel.instrument()`; it is
    called with `directory` when agentotel is not instrumented yet.
    """
    import agentotel

    if not isinstance(case, Case):
        case = Case.load(case)
    spec = agent or case.agent
    if spec is None:
        raise CaseError(f"case {case.name}: no agent entry point (set 'agent: module:function' in the case, or configure one)")
    entry = load_agent(spec) if isinstance(spec, str) else spec
    from agentotel import _config

    with _config.parquet_only():  # the replayed run is checked from the store, so it must be written there
        agentotel.instrument(directory)
    task = case.input.get("task")
    with replay(case, policy=policy or case.policy, mode=mode or case.mode) as replayer:
        try:
            with agentotel.run(f"replay {case.name}", trigger="test", task=task) as run:
                run.output = _call(entry, task)
        except (Exception, ReplayFrontier):  # noqa: BLE001 - the run's status (or where a frozen replay stopped) is judged by the case
            pass
    agentotel.flush()
    # The store the runs went to: an earlier instrument() (the user's) wins over `directory`.
    traces = agentotel.open(_config.current().directory)
    try:
        return check(case, traces, replayer.run_id or run.id, replayer=replayer)
    finally:
        close = getattr(traces, "close", None)
        if close is not None:
            close()
