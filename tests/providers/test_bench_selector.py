"""`AGENTOTEL_BENCH_PROVIDERS`: which rows of the providers benchmark are measured, and the others carried over."""

from __future__ import annotations

import json

import pytest

from benchmarks import bench_providers as bench
from benchmarks.harness import Result


def row(benchmark: str, notes: str = "") -> dict:
    return Result(benchmark=benchmark, metric="µs added per call", unit="µs", ours=1.0, notes=notes).to_dict()


def test_groups_from_the_environment(monkeypatch):
    monkeypatch.delenv("AGENTOTEL_BENCH_PROVIDERS", raising=False)
    assert bench.selected_groups() == ("openai", "genai", "bedrock")
    monkeypatch.setenv("AGENTOTEL_BENCH_PROVIDERS", " bedrock, genai ")
    assert bench.selected_groups() == ("genai", "bedrock")
    monkeypatch.setenv("AGENTOTEL_BENCH_PROVIDERS", "bedrock,anthropic")
    with pytest.raises(ValueError, match="anthropic"):
        bench.selected_groups()


def test_rows_not_measured_are_carried_over_with_their_date(tmp_path):
    stored = {"sections": {"providers": {"date": "2026-12-01 15:53 UTC", "results": [
        row("openai chat overhead, plain call"),
        row("google-genai generate_content overhead, plain call", notes="uninstrumented call: 1285 µs"),
        row("Bedrock converse (botocore) overhead, plain call", notes="carried over from the run of 2026-11-30 10:00 UTC"),
    ]}}}  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps(stored))
    carried = bench.carried_rows(("genai",), path)
    assert [r.benchmark.split()[0] for r in carried] == ["openai", "Bedrock"]
    assert carried[0].notes == "carried over from the run of 2026-12-01 15:53 UTC"
    assert carried[1].notes == "carried over from the run of 2026-11-30 10:00 UTC"  # its first date, not noted twice
    assert bench.carried_rows(("genai",), tmp_path / "missing.json") == []


def test_a_selected_run_measures_only_those_rows(monkeypatch):
    monkeypatch.setenv("AGENTOTEL_BENCH_PROVIDERS", "bedrock")
    rows = bench.run(quick=True)  # quick: agentotel alone, one short round, nothing carried
    assert rows and {r.benchmark.split(" overhead")[0] for r in rows} == {"Bedrock converse (botocore)"}
    # Measured (a quick run's one short round may come out at or below zero on a loaded machine: noise).
    assert all(r.ours is not None for r in rows)


def test_the_ratio_interval_keeps_each_rounds_two_overheads_together():
    import random

    rng = random.Random(3)
    # Each round's overheads share that round's uninstrumented slot (its noise subtracted from both).
    shared = [rng.gauss(0, 200) for _ in range(400)]
    mine = [380 - s + rng.gauss(0, 20) for s in shared]
    theirs = [400 - s + rng.gauss(0, 20) for s in shared]
    low, high = bench._ratio_interval(mine, theirs)
    assert low < statistics_ratio(mine, theirs) < high
    assert bench._ratio_interval(mine, theirs) == (low, high)  # the same rounds, the same interval
    # Resampled apart, the shared noise would not cancel: a wider interval.
    apart = bench._ratio_interval(mine, [theirs[(i * 7) % 400] for i in range(400)])
    assert apart[1] - apart[0] >= high - low
    assert bench._ratio_interval(mine[:10], theirs[:10]) is None
    assert bench._ratio_interval(mine, theirs[:-1]) is None


def statistics_ratio(mine, theirs):
    import statistics

    return statistics.median(mine) / statistics.median(theirs)
