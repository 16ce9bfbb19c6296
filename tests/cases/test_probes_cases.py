"""`agentotel case new` names its file after the run, and a run's name is whatever its spans said."""

from __future__ import annotations

import io

import pytest

import agentotel
from agentotel.cli import main


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)

    @agentotel.tool
    def lookup(order):
        return {"order": order}

    names = ["../../escaped", str(tmp_path / "absolute")]  # as a collector's sender may name runs
    for name in names:
        with agentotel.run(name):
            lookup(1)
            lookup(2)
    assert agentotel.flush()
    yield directory, names
    agentotel.shutdown()


def test_a_run_name_cannot_choose_where_the_case_file_is_written(store, tmp_path, monkeypatch):
    directory, names = store
    work = tmp_path / "project" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for name in names:
        out, err = io.StringIO(), io.StringIO()
        assert main(["case", "new", name, "--at", "1", "--layer", "tool", "--dir", str(directory)], stdout=out, stderr=err) == 0, err.getvalue()
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml"))
    assert len(written) == 2 and all(p.startswith("project/work/cases/") and "/" not in p[19:] for p in written), written
    assert "project/work/cases/escaped-step-1.yaml" in written  # "../../" became nothing to climb
    assert written[1].endswith("-absolute-step-1.yaml") and not written[1][19:].startswith(("-", "."))
