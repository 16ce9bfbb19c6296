"""A process killed with SIGKILL right after `agentotel.flush()` returned loses none of the flushed spans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb

from agentotel.store import StoreWriter, parquet_files, read_wal

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import sys
    import agentotel
    from opentelemetry import trace

    agentotel.instrument(sys.argv[1])
    tracer = trace.get_tracer("durability")
    run = sys.argv[2]
    for i in range(200):
        with tracer.start_as_current_span(f"{run}-flushed-{i}") as span:
            span.set_attribute("payload", "x" * 200)
    assert agentotel.flush(), "flush() reported spans that are not durable"
    print("flushed", flush=True)
    i = 0
    while True:  # keep writing and folding, so the kill lands in the middle of something
        with tracer.start_as_current_span(f"{run}-after-{i}"):
            pass
        i += 1
        if i % 25 == 0:
            agentotel.flush()
    """
)


def _names(directory: Path) -> set[str]:
    con = duckdb.connect()
    names = set(read_wal(directory).column("name").to_pylist())  # the WAL first, then Parquet
    files = parquet_files(directory)
    if files:
        names |= {row[0] for row in con.execute("select name from read_parquet(?)", [files]).fetchall()}
    return names


def test_sigkill_after_flush_loses_nothing(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), AGENTOTEL_WAL_MAX_BYTES="20000")  # fold often
    for run in range(5):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path), f"run{run}"], stdout=subprocess.PIPE, env=env, text=True
        )
        try:
            assert child.stdout.readline().strip() == "flushed"
            time.sleep(0.02 * run)  # land the kill at a different point each time
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert child.returncode == -signal.SIGKILL

        # Every visible file is complete and readable; temp files are dot-named and never match the glob.
        visible = list((tmp_path / "spans").glob("date=*/*.parquet"))
        assert all(not p.name.startswith(".") for p in visible)
        glob = f"{tmp_path}/spans/**/*.parquet"
        if visible:
            duckdb.sql(f"select count(*) from read_parquet('{glob}')").fetchall()
        names = _names(tmp_path)
        for done in range(run + 1):
            missing = {f"run{done}-flushed-{i}" for i in range(200)} - names
            assert not missing, f"run {run}: {len(missing)} flushed spans lost"

    # The next start folds what the dead writers left in their WALs.
    StoreWriter(tmp_path).close()
    assert list((tmp_path / "wal").glob("*.arrows")) == []
    assert list((tmp_path / "wal").glob(".*.lock")) == []  # the killed writers' lock files are cleaned up too
    stored = duckdb.sql(f"select name from read_parquet('{tmp_path}/spans/**/*.parquet')").fetchall()
    for run in range(5):
        assert {f"run{run}-flushed-{i}" for i in range(200)} <= {name for (name,) in stored}
