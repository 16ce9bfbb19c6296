"""Running a case: replay it against the agent's entry point, record the run, and check it.

    report = run_case("cases/orders-shape-drift.yaml", agent="my_agent:answer")

The agent entry point is a `module:function` taking the case's task (sync or async) and returning the
answer; it is named in the case (`agent:`), or given here / in the pytest plugin's configuration. It is
imported as pytest imports a test's modules: the case file's folder (and the folders above it up to the
current one) and the current directory are on `sys.path`, so `support_agent:answer` is found from the
project folder with no PYTHONPATH.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from agentotel.cases.case import Case, CaseError
from agentotel.cases._check import CheckReport, check
from agentotel.cases._replay import ReplayFrontier, replay, replay_directory

__all__ = ["run_case", "load_agent"]


def _search_paths(near: Path | None) -> list[str]:
    """Where an agent module is looked for, first to last: the case's folder and each folder above it up
    to the current directory (a `cases/` folder inside the project finds the project's modules), then
    the current directory."""
    cwd = Path.cwd().resolve()
    paths: list[Path] = []
    if near is not None:
        folder = near.resolve().parent
        while True:
            paths.append(folder)
            if folder == cwd or folder.parent == folder or cwd not in folder.parents:
                break
            folder = folder.parent
    paths.append(cwd)
    return list(dict.fromkeys(str(p) for p in paths))


@contextlib.contextmanager
def _importable(paths: Sequence[str]) -> Iterator[None]:
    added = [p for p in paths if p not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for p in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(p)


def load_agent(spec: str, *, near: str | Path | None = None) -> Callable[..., Any]:
    """The callable named by `package.module:function` (dots after the colon walk attributes).

    `near`: the case file; its folder (and those above it, up to the current directory) and the current
    directory are searched first, as pytest's rootdir-relative imports do."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CaseError(f"agent {spec!r}: expected 'package.module:function'")
    paths = _search_paths(Path(near) if near is not None else None)
    try:
        with _importable(paths):
            target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name != exc.name and not module_name.startswith(exc.name + "."):
            raise CaseError(f"agent {spec!r}: importing {module_name} failed: {exc}") from None
        raise CaseError(f"agent {spec!r}: cannot import {module_name} ({exc}); looked in {', '.join(paths)} "
                        "and the Python path") from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised while importing: say which
        raise CaseError(f"agent {spec!r}: importing {module_name} raised {type(exc).__name__}: {exc}") from None
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


# The keys model SDKs refuse to build a client without. Frozen models never send a request, so a replay
# in CI needs no real key: a placeholder lets the agent build its client (unset ones only, for the replay).
_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_PLACEHOLDER_KEY = "agentotel-replay-no-key"


@contextlib.contextmanager
def _placeholder_keys(frozen: bool) -> Iterator[None]:
    missing = [name for name in _KEY_VARIABLES if frozen and not os.environ.get(name)]
    for name in missing:
        os.environ[name] = _PLACEHOLDER_KEY
    try:
        yield
    finally:
        for name in missing:
            if os.environ.get(name) == _PLACEHOLDER_KEY:
                del os.environ[name]


@contextlib.contextmanager
def _no_production_exporter() -> Iterator[None]:
    """`instrument()` inside exports nowhere: a replay is recorded in its own store, and nothing else runs."""
    from agentotel import _config

    variable = _config.TRACES_EXPORTER_VARIABLE
    previous = os.environ.get(variable)
    os.environ[variable] = "none"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous


def run_case(
    case: Case | str | Path,
    *,
    agent: str | Callable[..., Any] | None = None,
    directory: str | Path | None = None,
    policy: str | None = None,
    mode: str | None = None,
    tools: str | None = None,
    models: str | None = None,
    replay_dir: str | Path | None = None,
) -> CheckReport:
    """Replay the case against the agent inside a recorded run, then check that run against the case.

    `tools` / `models` (`live` or `frozen`; default: the case's `replay:`) say what runs for real at and
    after the cut; `mode` sets both (with frozen models an unset OPENAI_API_KEY / ANTHROPIC_API_KEY is
    set to a placeholder for the replay: no request is sent). The replayed run is recorded in `replay_dir`, default
    `<directory>/replays` (`directory`: the store, default the configured one), never in the store.
    The agent's own exceptions do not escape: a run that raised ends with status error, which the
    case's `final_status` gate judges; a replay that stopped (frozen models, no recorded answer) ends ok.
    """
    import agentotel

    if not isinstance(case, Case):
        case = Case.load(case)
    spec = agent or case.agent
    if spec is None:
        raise CaseError(f"case {case.name}: no agent entry point (set 'agent: module:function' in the case, or configure one)")
    entry = load_agent(spec, near=case.path) if isinstance(spec, str) else spec
    with _no_production_exporter():  # not instrumented yet: a provider to record with, and nothing else
        agentotel.instrument()
    target = Path(replay_dir) if replay_dir is not None else replay_directory(directory)
    task = case.input.get("task")
    with replay(case, policy=policy, mode=mode, tools=tools, models=models, directory=target) as replayer, \
            _placeholder_keys(replayer.models == "frozen"):
        try:
            with agentotel.run(f"replay {case.name}", trigger="test", task=task) as run:
                try:
                    run.output = _call(entry, task)
                except ReplayFrontier:  # the replay stopped the run where the recording has no answer: not an error
                    pass
        except Exception:  # noqa: BLE001 - the run's status is judged by the case
            pass
        except ReplayFrontier:  # raised outside the run (a thread's): where it stopped is in the record
            pass
    traces = agentotel.open(replayer.directory or target)
    try:
        return check(case, traces, replayer.run_id or run.id, replayer=replayer)
    finally:
        close = getattr(traces, "close", None)
        if close is not None:
            close()
