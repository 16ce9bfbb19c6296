"""Spans are flushed when the interpreter exits and when the process gets SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from agentotel.store import parquet_files, read_wal

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import signal, sys, time
import agentotel
from opentelemetry import trace
"""

RECORD = """
agentotel.instrument(sys.argv[1])
tracer = trace.get_tracer("exit")
for i in range(20):
    with tracer.start_as_current_span(f"span-{i}"):
        pass
"""

WAIT_FOR_SIGNAL = """
print("ready", flush=True)
time.sleep(60)
print("not interrupted", flush=True)
"""


def _run(tmp_path, body: str, *, sigterm: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body)
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    if sigterm:
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _names(directory) -> set[str]:
    import duckdb

    names = set(read_wal(directory).column("name").to_pylist())
    files = parquet_files(directory)
    if files:
        names |= {n for (n,) in duckdb.connect().execute("select name from read_parquet(?)", [files]).fetchall()}
    return names


EXPECTED = {f"span-{i}" for i in range(20)}


def test_spans_are_folded_into_parquet_at_interpreter_exit(tmp_path):
    result = _run(tmp_path, RECORD, sigterm=False)
    assert result.returncode == 0, result.stderr
    assert read_wal(tmp_path).num_rows == 0 and list((tmp_path / "wal").glob("*.arrows")) == []
    assert _names(tmp_path) == EXPECTED


def test_sigterm_flushes_then_terminates_as_before(tmp_path):
    result = _run(tmp_path, RECORD + WAIT_FOR_SIGNAL, sigterm=True)
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert "not interrupted" not in result.stdout
    assert _names(tmp_path) == EXPECTED


def test_sigterm_chains_the_previous_handler(tmp_path):
    previous = """
def previous(signum, frame):
    print("previous handler ran", flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, previous)
"""
    result = _run(tmp_path, previous + RECORD + WAIT_FOR_SIGNAL, sigterm=True)
    assert result.returncode == 3, result.stderr
    assert "previous handler ran" in result.stdout
    assert _names(tmp_path) == EXPECTED
    assert read_wal(tmp_path).num_rows == 0  # sys.exit() ran atexit, which folded the WAL


def test_instrument_from_a_thread_installs_no_signal_handler_but_still_flushes_at_exit(tmp_path):
    body = """
import threading
t = threading.Thread(target=lambda: agentotel.instrument(sys.argv[1]))
t.start(); t.join()
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
with trace.get_tracer("exit").start_as_current_span("from-thread"):
    pass
"""
    result = _run(tmp_path, body, sigterm=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert _names(tmp_path) == {"from-thread"}
