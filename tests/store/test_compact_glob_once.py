"""After `compact()` a plain glob over spans/ sees each span once, and agentotel's readers neither fail nor
double count: during the grace period, across a reader opened before, and after a crash mid-compaction."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest

import agentotel
from agentotel.store import StoreWriter, compact, parquet_files
from agentotel.store.compact import REPLACED_DIR
from tests.query.spanbuild import SpanStore, assistant

ROOT = Path(__file__).resolve().parents[2]
RUNS = 6
SPANS_PER_RUN = 3  # the root, a model call, a tool call


def _store(directory: Path, runs: int = RUNS) -> set[str]:
    """One Parquet file per run, as one short-lived process per run leaves; returns every span id."""
    build = SpanStore(directory)
    for i in range(runs):
        run = build.run(f"job-{i}", f"run-{i:03d}")
        run.llm(assistant("looking"))
        run.tool("search", {"q": i}, {"hits": i})
    for run in build.runs:
        writer = StoreWriter(directory)
        writer.append(build.batch([run]))
        writer.close()
    ids = {row["span_id"] for run in build.runs for row in run.rows()}
    assert len(ids) == runs * SPANS_PER_RUN and len(parquet_files(directory)) == runs
    return ids


def _glob(directory: Path) -> list[str]:
    """The span ids a plain glob over spans/ reads, one per row it sees (the README's query)."""
    pattern = f"{directory}/spans/**/*.parquet"
    return [span for (span,) in duckdb.sql(f"SELECT span_id FROM '{pattern}'").fetchall()]


def _traces_ids(directory: Path) -> list[str]:
    with agentotel.open(directory) as traces:
        # _raw_spans: every row the views read, before duplicates are collapsed.
        return [span for (span,) in traces.sql("SELECT span_id FROM _raw_spans").fetchall()]


def test_a_glob_counts_each_span_once_during_the_grace_period(tmp_path):
    ids = _store(tmp_path)

    stats = compact(tmp_path)  # the default grace period: the inputs are kept for readers that listed them

    assert stats["files_after"] == 1
    assert sorted(_glob(tmp_path)) == sorted(ids)
    assert len(list((tmp_path / "spans").rglob("*.parquet"))) == 1
    retired = list((tmp_path / REPLACED_DIR).rglob("*.parquet"))
    assert len(retired) == RUNS  # still there, outside spans/, for readers that listed them
    assert compact(tmp_path)["leftovers_removed"] == 0  # retired less than the grace period ago
    assert sorted(_glob(tmp_path)) == sorted(ids)
    assert compact(tmp_path, grace_s=0)["leftovers_removed"] == RUNS
    assert not list((tmp_path / REPLACED_DIR).rglob("*.parquet"))
    assert sorted(_glob(tmp_path)) == sorted(_traces_ids(tmp_path)) == sorted(ids)


_COUNT_RAW = "SELECT count(*), count(DISTINCT span_id) FROM _raw_spans"  # every row read, before deduplication


def test_a_traces_opened_before_compaction_answers_once_after_it(tmp_path):
    ids = _store(tmp_path)
    with agentotel.open(tmp_path) as traces:
        before = traces.trajectory("run-003")
        # Planned now, executed after the compaction: bound to the files that are about to be retired.
        planned_raw = traces.sql(_COUNT_RAW)
        planned_runs = traces.runs()

        compact(tmp_path)

        assert planned_raw.fetchall() == [(len(ids), len(ids))]
        assert sorted(r[0] for r in planned_runs.fetchall()) == [f"run-{i:03d}" for i in range(RUNS)]
        assert traces.sql(_COUNT_RAW).fetchall() == [(len(ids), len(ids))]
        assert traces.sql("SELECT count(*) FROM runs").fetchall() == [(RUNS,)]
        after = traces.trajectory("run-003")
        assert [s.type for s in after.steps] == [s.type for s in before.steps] == ["llm", "tool"]

        compact(tmp_path, grace_s=0)  # the retired files are gone now too

        assert traces.sql(_COUNT_RAW).fetchall() == [(len(ids), len(ids))]
        assert len(traces.trajectory("run-005").steps) == 2


def test_a_traces_queried_while_compactions_run_never_fails_nor_loses_a_step(tmp_path):
    runs = 40
    _store(tmp_path, runs)
    results: list[tuple[str, int]] = []
    errors: list[BaseException] = []
    stop, started = threading.Event(), threading.Event()

    def reader():
        # agentotel's own queries (run lookup, trajectory) run to completion inside Traces, which retries
        # them on a new snapshot when a compaction moved a file at the very instant DuckDB resolved it.
        with agentotel.open(tmp_path) as traces:
            while not stop.is_set():
                name = f"run-{len(results) % runs:03d}"
                try:
                    trajectory = traces.trajectory(name)
                except BaseException as exc:  # noqa: BLE001 - collected, asserted below
                    errors.append(exc)
                    return
                results.append((trajectory.run["run_id"] == name and trajectory.run["steps"], len(trajectory.steps)))
                started.set()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        assert started.wait(120), errors
        # Two rounds: small merged files first, then those merged again (supersession is transitive).
        compact(tmp_path, target_bytes=20_000)
        assert len(parquet_files(tmp_path)) > 1
        compact(tmp_path)
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    assert set(results) == {(2, 2)}
    assert len(parquet_files(tmp_path)) == 1


# A compaction killed at a chosen rename: after it published the merged file, at the first retirement
# (all inputs still in spans/) or at the third (some already moved). `os.rename` is wrapped in the child
# only to pick the instant; the process then really dies.
_KILLED_COMPACTION = """
    import os, sys
    from agentotel.store import compact

    rename, retired = os.rename, 0

    def dying_rename(source, target, *args, **kwargs):
        global retired
        if "/{replaced}/" in str(target):
            retired += 1
            if retired == int(sys.argv[2]):
                os._exit(9)
        return rename(source, target, *args, **kwargs)

    os.rename = dying_rename
    compact(sys.argv[1])
"""


@pytest.mark.parametrize("killed_at", [1, 3])
@pytest.mark.parametrize("recovery", ["open", "compact"])
def test_a_compaction_killed_between_publishing_and_retiring_loses_nothing_and_is_read_once(
    tmp_path, killed_at, recovery
):
    ids = _store(tmp_path)
    script = textwrap.dedent(_KILLED_COMPACTION).replace("{replaced}", REPLACED_DIR)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(killed_at)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 9, done.stderr
    merged = list((tmp_path / "spans").glob("date=*/c-*.parquet"))
    assert len(merged) == 1  # published before it died...
    assert len(list((tmp_path / "spans").rglob("*.parquet"))) == 1 + RUNS - (killed_at - 1)  # ...not all retired
    assert sorted(set(_glob(tmp_path))) == sorted(ids) and len(_glob(tmp_path)) > len(ids)  # the crash's state

    if recovery == "open":
        assert sorted(_traces_ids(tmp_path)) == sorted(ids)  # agentotel's listing hides the inputs anyway
    else:
        compact(tmp_path)

    assert sorted(_glob(tmp_path)) == sorted(ids)  # the leftovers left spans/ at that open/compaction
    assert sorted(_traces_ids(tmp_path)) == sorted(ids)
    assert list((tmp_path / "spans").rglob("*.parquet")) == merged
    compact(tmp_path, grace_s=0)
    assert sorted(_glob(tmp_path)) == sorted(_traces_ids(tmp_path)) == sorted(ids)
