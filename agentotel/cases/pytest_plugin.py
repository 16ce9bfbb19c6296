"""pytest plugin: every regression case file (`cases/*.yaml`) is a test, marked with its harness layer.

    pytest cases/                    # replay every case against its agent; one test per case
    pytest cases/ -m tool            # only the tool-layer cases

Each case is replayed by kind of step, as its `replay: {tools, models}` says (by default, cut at a tool
step: the tool runs for real and model calls are answered from the recording, so the case runs in CI
without network or credentials), against the agent entry point named in the case (`agent:
package.module:function`, imported from the case's folder and the current one, like pytest imports a
test's modules), else `--agentotel-agent` / the `agentotel_agent` ini option, inside a recorded run; the
run is then checked against the case's assertions, and a failure lists every gate with its evidence,
the replay store and the replayed run's id.

Options (command line, or ini without the dashes): `--agentotel-agent`, `--agentotel-tools` /
`--agentotel-models` (live or frozen, over the cases' own), `--agentotel-dir` (the store whose
`replays/` folder the replayed runs are recorded in; default `$AGENTOTEL_DIR`, else ./agentotel-traces —
a replay never goes into the store itself), and the ini `agentotel_cases` (globs matched against the end
of a file's path; default `cases/*.yaml`, `cases/*.yml`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from agentotel.analysis._layers import LAYERS

_MARK = "agentotel_case"
_DEFAULT_GLOBS = ["cases/*.yaml", "cases/*.yml"]


class CaseFailed(AssertionError):
    """A replayed case failed one of its gates."""

    def __init__(self, report: Any) -> None:
        super().__init__("\n".join(report.lines()))
        self.report = report


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentotel", "agentotel regression cases")
    group.addoption("--agentotel-agent", default=None, help="agent entry point (module:function) for cases that name none")
    group.addoption("--agentotel-dir", default=None,
                    help="the store whose replays/ folder records the replayed runs (default: $AGENTOTEL_DIR, else ./agentotel-traces)")
    group.addoption("--agentotel-tools", choices=("live", "frozen"), default=None, help="run tools live or frozen (default: each case's)")
    group.addoption("--agentotel-models", choices=("live", "frozen"), default=None, help="call models live or frozen (default: each case's)")
    parser.addini("agentotel_cases", "globs of regression case files (matched against the end of the path)", type="linelist",
                  default=list(_DEFAULT_GLOBS))
    parser.addini("agentotel_agent", "agent entry point (module:function) for cases that name none", default="")
    parser.addini("agentotel_dir", "the store whose replays/ folder records the replayed runs", default="")


def pytest_configure(config: pytest.Config) -> None:
    for layer in LAYERS:
        config.addinivalue_line("markers", f"{layer}: agentotel regression cases filed under the {layer} layer")
    config.addinivalue_line("markers", f"{_MARK}: an agentotel regression case replayed from a case file")


def _is_case_file(path: Path, config: pytest.Config) -> bool:
    if path.suffix not in (".yaml", ".yml"):
        return False
    if not any(path.match(glob) for glob in config.getini("agentotel_cases") or _DEFAULT_GLOBS):
        return False
    try:
        with path.open("r", encoding="utf-8") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return "agentotel_case:" in head  # other YAML in a cases/ folder is not ours


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_case_file(file_path, parent.config):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    """A case file: one test."""

    def collect(self) -> Iterator[pytest.Item]:
        from agentotel.cases.case import Case

        case = Case.load(self.path)
        item = CaseItem.from_parent(self, name=case.name, case=case)
        item.add_marker(case.layer)
        item.add_marker(_MARK)
        yield item


def _store(config: pytest.Config) -> Path | None:
    """The store named by the options, else None (the configured store). Never a temporary folder: the run
    ids a failure names must be there to read afterwards (`agentotel trajectory RUN --dir ...`)."""
    given = config.getoption("--agentotel-dir") or config.getini("agentotel_dir")
    return Path(given) if given else None


class CaseItem(pytest.Item):
    """One replay of a case against the agent, judged by the case's gates."""

    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from agentotel.cases.runner import run_case

        agent = self.case.agent or self.config.getoption("--agentotel-agent") or self.config.getini("agentotel_agent") or None
        report = run_case(self.case, agent=agent, directory=_store(self.config),
                          tools=self.config.getoption("--agentotel-tools"), models=self.config.getoption("--agentotel-models"))
        self.user_properties.append(("agentotel_run", report.run_id))
        if not report.passed:
            raise CaseFailed(report)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from agentotel.cases.case import CaseError

        if isinstance(excinfo.value, (CaseFailed, CaseError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"agentotel case {self.case.name} [{self.case.layer}]"
