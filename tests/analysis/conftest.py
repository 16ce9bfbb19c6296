"""The scripted agent's tools are the declared ones while a test of this folder runs.

`@agentotel.tool` keeps the latest tool of each name in a process-wide registry, and every test module is
imported before any test runs: another folder's `lookup_order` (tests/query/test_diff_given.py) would
otherwise be the one a run's environment lists. The registry is put back afterwards.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from agentotel import tools


@pytest.fixture(autouse=True)
def _scripted_tools_declared() -> Iterator[None]:
    from scripted import _OWN

    saved = dict(tools._registry)
    tools._registry.update(_OWN)
    yield
    tools._registry.clear()
    tools._registry.update(saved)
