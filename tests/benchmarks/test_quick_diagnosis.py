"""`python -m benchmarks --quick diagnosis` exits 0 with no error row, prints a ratio, and writes nothing."""

from __future__ import annotations

from quick import quick_section


def test_quick_mode_runs_the_diagnosis_benchmark_prints_a_ratio_and_writes_nothing():
    quick_section("diagnosis")
