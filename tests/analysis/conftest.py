"""Each test module of this folder sees the tools it declared, as when it runs alone.

`@agentotel.tool` keeps the latest tool of each name in a process-wide registry, and every test module is
imported before any test runs: another module's `lookup_order` or `get_weather` (tests/query/test_diff_given.py,
benchmarks/diagnosis_corpus.py) would otherwise be the one a run's environment lists, depending on which
modules share a pytest-xdist worker. While a module's tests run, the scripted agent's tools and the tools
the module's own import declared (its decorators, and modules first imported with it) are the registered
ones; the process's registry is put back afterwards.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from agentotel import tools

_AT_IMPORT: dict[str, dict[str, Any]] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    before = dict(tools._registry)
    yield  # a module is imported while it is collected
    if isinstance(collector, pytest.Module):
        _AT_IMPORT[str(collector.path)] = {name: info for name, info in tools._registry.items()
                                           if before.get(name) is not info}


@pytest.fixture(autouse=True)
def _own_tools_declared(request: pytest.FixtureRequest) -> Iterator[None]:
    from scripted import _OWN

    saved = dict(tools._registry)
    tools._registry.update(_OWN)
    tools._registry.update(_AT_IMPORT.get(str(request.node.path), {}))
    yield
    tools._registry.clear()
    tools._registry.update(saved)
