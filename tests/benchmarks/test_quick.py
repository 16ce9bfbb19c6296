"""`python -m benchmarks --quick` runs every benchmark, prints a ratio for each, and writes nothing."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from benchmarks import __main__ as runner
from benchmarks import _report
from benchmarks.harness import Result, Sample, interleave

ROOT = Path(__file__).resolve().parents[2]
RESULTS = [ROOT / "benchmarks" / "RESULTS.md", ROOT / "benchmarks" / "results.json"]


def _fingerprint() -> dict[str, str | None]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in RESULTS}


@pytest.fixture(scope="module")
def quick_run() -> subprocess.CompletedProcess:
    before = _fingerprint()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert _fingerprint() == before, "quick mode must not rewrite RESULTS.md or results.json"
    return done


def test_quick_mode_exits_zero(quick_run):
    assert quick_run.returncode == 0, quick_run.stdout[-3000:] + quick_run.stderr[-3000:]
    assert "ERROR" not in quick_run.stdout


def test_quick_mode_prints_a_ratio_for_every_benchmark(quick_run):
    areas = runner.discover()
    assert "store" in areas
    sections = dict(re.findall(r"^== (\S+)\n(.*?)(?=^== |\Z)", quick_run.stdout, flags=re.M | re.S))
    assert sorted(sections) == areas
    for area, body in sections.items():
        assert re.search(r"ratio (\d[\d.e+-]*×|n/a)", body), f"{area}: no ratio printed\n{body}"


def test_store_benchmark_reports_numeric_ratios_and_verdicts(quick_run):
    section = quick_run.stdout.split("== store", 1)[1].split("\n== ", 1)[0]
    assert re.search(r"export throughput .* ratio \d[\d.]*× \| target >= 3x .*: (met|MISSED)", section)
    assert re.search(r"bytes per span .* OTLP JSON .* ratio \d[\d.]*× \| target < 1/10 .*: (met|MISSED)", section)


def test_a_failing_benchmark_becomes_an_error_row(monkeypatch):
    broken = types.ModuleType("benchmarks.bench_broken_for_test")
    broken.__doc__ = "Broken: raises."

    def run(quick):
        raise RuntimeError("boom")

    broken.run = run
    monkeypatch.setitem(sys.modules, "benchmarks.bench_broken_for_test", broken)
    doc, results, _elapsed = runner.run_module("broken_for_test", quick=True)
    assert doc == "Broken: raises."
    assert [r.error for r in results] == ["RuntimeError: boom"]
    assert "ERROR RuntimeError: boom" in _report.format_row(results[0])

    _doc, results, _elapsed = runner.run_module("missing_for_test", quick=True)
    assert results[0].error.startswith("ModuleNotFoundError")


def test_result_ratio_is_ours_over_peer():
    assert Result("b", "m", "spans/s", 300.0, "peer", 100.0).ratio == 3.0
    assert Result("b", "m", "s", 1.0).ratio is None
    assert Result("b", "m", "s", 1.0, "peer", 0.0).ratio is None
    assert Result("b", "m", "us", 5.0, "peer", -2.0).ratio is None  # a negative baseline is noise, not a ratio
    row = Result("b", "m", "s", 2.0, "peer", 4.0, "< 1x", True, "n")
    assert Result.from_dict(row.to_dict()) == row
    assert row.to_dict()["ratio"] == 0.5


def test_sample_statistics_and_interleaving():
    sample = Sample((1.0, 2.0, 3.0, 4.0, 5.0))
    assert sample.median == 3.0
    assert sample.spread == pytest.approx(2.0 / 3.0)
    assert sample.per_second(10).median == pytest.approx(10 / 3)
    calls = []
    samples = interleave({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert [len(s) for s in samples.values()] == [3, 3]


def test_results_markdown_has_a_table_per_benchmark_with_target_and_verdict():
    row = Result("export throughput", "spans/s end to end", "spans/s", 9000.0, "OTLP", 3000.0, ">= 3x", True, corpus="c")
    missed = Result("bytes per span", "on disk", "bytes/span", 500.0, "OTLP JSON", 4000.0, "< 1/10", False)
    stored = {
        "machine": _report.machine(),
        "sections": {"store": _report.section("store", "Store: title.\n\nWhat is measured.", [row, missed], 1.0)},
        "corpus": "Standard corpus: 10 spans.\n",
    }
    text = _report.render(stored)
    assert "## store: Store: title." in text
    assert "What is measured." in text
    assert "| export throughput: spans/s end to end | c | 9,000 spans/s | OTLP: 3,000 spans/s | 3.00× | >= 3x | met |" in text
    assert "| 0.125× | < 1/10 | MISSED |" in text
    assert "cores" in text and "Python" in text and "pyarrow" in text
    assert "## Corpus" in text


def test_a_module_that_cannot_run_in_its_child_process_becomes_an_error_row():
    doc, results, _elapsed = runner.run_isolated("missing_for_test", quick=True, timeout_s=120)
    assert doc == ""
    assert len(results) == 1 and results[0].error.startswith("ModuleNotFoundError")
