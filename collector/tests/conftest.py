"""Fixtures for the collector tests: deterministic SDK spans and a running collector."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from collector_support import Collector, make_spans


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow (100,000-span kill run); select it with -m slow")
    here = Path(__file__).parent
    for item in items:
        # This hook sees the whole session's items: decide only for this folder's tests.
        if "slow" in item.keywords and here in Path(item.path).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def sdk_spans():
    return make_spans(4)


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    """A collector on ephemeral loopback ports (HTTP and gRPC), writing to tmp_path/store."""
    running = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
    yield running
    running.stop()
