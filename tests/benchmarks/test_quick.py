"""The benchmark runner and harness: error rows, ratios, statistics, RESULTS.md; each area's quick run is in
test_quick_<area>.py."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from benchmarks import __main__ as runner
from benchmarks import _report
from benchmarks.harness import Result, Sample, interleave

HERE = Path(__file__).resolve().parent


def test_every_benchmark_has_a_quick_run_test_of_its_own():
    """The quick runs are one file per area (test_quick_<area>.py, see quick.py): a new benchmark needs one."""
    areas = runner.discover()
    assert "store" in areas
    assert sorted(p.stem.removeprefix("test_quick_") for p in HERE.glob("test_quick_*.py")) == areas


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
