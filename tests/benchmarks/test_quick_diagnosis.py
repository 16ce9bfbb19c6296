"""`python -m benchmarks --quick diagnosis` exits 0 with no error row, prints a ratio, and writes nothing; the
diagnosis corpus it records is recorded for real, and every pair's ground truth is a step of the type its fault names.

The quick run keeps the six pairs it recorded (AGENTOTEL_BENCH_DIAGNOSIS_KEEP), and the corpus tests read those: the
same pairs were recorded twice, here in-process and in the benchmark's process (~10 s of a worker's time).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

import agentotel
from benchmarks import diagnosis_corpus as dc
from quick import quick_section


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The quick run's section of the output, and the pairs it recorded."""
    keep = tmp_path_factory.mktemp("diagnosis")
    section = quick_section("diagnosis", AGENTOTEL_BENCH_DIAGNOSIS_KEEP=str(keep))
    return section, dc.load(keep / "pairs.json")


@pytest.fixture(scope="module")
def quick_pairs(quick_run):
    return quick_run[1]


def test_quick_mode_runs_the_diagnosis_benchmark_prints_a_ratio_and_writes_nothing(quick_run):
    section, pairs = quick_run
    assert section  # quick_section checked the exit, the error rows, the ratio and RESULTS.md / results.json
    assert len(pairs) == len(dc.QUICK_PAIRS)


def test_the_corpus_covers_six_layers_with_at_least_forty_pairs_from_published_taxonomies():
    assert len(dc.PAIRS) >= 40
    assert len({p.id for p in dc.PAIRS}) == len(dc.PAIRS)
    layers = Counter(p.layer for p in dc.PAIRS)
    assert set(layers) == set(dc.LAYERS) and min(layers.values()) >= 6
    assert len({p.agent for p in dc.PAIRS}) >= 4
    assert any((p.sdk or dc.AGENTS[p.agent].sdk) == "anthropic" for p in dc.PAIRS)
    for pair in dc.PAIRS:
        assert pair.taxonomy.split()[0] in {"MAST", "ToolScan", "TRAIL", "AgentErrorTaxonomy"}, pair.id
    assert set(dc.QUICK_PAIRS) <= {p.id for p in dc.PAIRS}
    assert {p.layer for p in dc.PAIRS if p.id in dc.QUICK_PAIRS} == set(dc.LAYERS)


def _assert_recorded(pairs):
    for pair in pairs:
        with agentotel.open(pair.store) as traces:
            assert dc.check_ground_truth(pair, traces) == [], pair.spec.id
            runs = {row[0] for row in traces.sql("SELECT run_id FROM runs").fetchall()}
            steps = traces.trajectory(pair.faulty.run_id).steps
        assert {pair.good.run_id, pair.faulty.run_id, *pair.history} <= runs
        assert len(pair.history) == dc.HISTORY_RUNS
        kind, _name = dc.expected_step(pair.spec)
        assert steps[pair.faulty_step - 1].type == kind, pair.spec.id
        assert pair.good.error is None, f"{pair.spec.id}: the healthy run failed: {pair.good.error}"


def test_the_quick_pairs_record_through_the_real_sdks_with_ground_truth_on_a_step_of_the_right_type(quick_pairs):
    assert [p.spec.id for p in quick_pairs] == [p.id for p in dc.PAIRS if p.id in dc.QUICK_PAIRS]
    _assert_recorded(quick_pairs)
    # The corpus is recorded, not scripted into the store: the faulty run differs from the healthy one.
    for pair in quick_pairs:
        assert pair.good.ledger != pair.faulty.ledger or pair.good.answer != pair.faulty.answer, pair.spec.id


def test_a_ground_truth_that_names_another_step_type_is_reported(quick_pairs):
    [pair] = [p for p in quick_pairs if p.spec.id == "tool-support-output-shape"]
    moved = dataclasses.replace(pair, faulty=dataclasses.replace(pair.faulty, fault_at=pair.faulty_step - 1))
    with agentotel.open(pair.store) as traces:
        assert dc.check_ground_truth(pair, traces) == []
        problems = dc.check_ground_truth(moved, traces)
    # The model call before the tool step is not where a tool's changed output shows.
    assert problems and "expected tool lookup_order" in problems[0]


def test_saved_pairs_load_back_as_they_were_recorded(quick_pairs, tmp_path):
    dc.save(quick_pairs, tmp_path / "pairs.json")
    assert dc.load(tmp_path / "pairs.json") == quick_pairs


@pytest.mark.slow
def test_every_pair_records_with_ground_truth_on_a_step_of_the_right_type(tmp_path):
    _assert_recorded(dc.build(tmp_path))
