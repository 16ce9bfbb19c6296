"""`python -m benchmarks --quick store` exits 0 with no error row, prints a ratio, and writes nothing."""

from __future__ import annotations

import re

from quick import quick_section


def test_quick_mode_runs_the_store_benchmark_with_numeric_ratios_and_verdicts():
    section = quick_section("store")
    assert re.search(r"export throughput .* ratio \d[\d.]*× \| target >= 3x .*: (met|MISSED)", section)
    assert re.search(r"bytes per span .* OTLP JSON .* ratio \d[\d.]*× \| target < 1/10 .*: (met|MISSED)", section)
    # Where an export's time goes: its Python part (the floor of both export rows) and the folds, measured apart.
    assert re.search(r"export throughput .* ReadableSpan -> stored rows .*: ours [\d,]+ spans/s", section)
    assert re.search(r"export throughput .* stored rows -> Parquet .*: ours [\d,]+ spans/s", section)
