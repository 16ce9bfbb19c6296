"""The diagnosis corpus records for real, and every pair's ground truth is a step of the type its fault names."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

import agentotel
from benchmarks import diagnosis_corpus as dc


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


@pytest.fixture(scope="module")
def quick_pairs(tmp_path_factory):
    return dc.build(tmp_path_factory.mktemp("diagnosis"), quick=True)


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


@pytest.mark.slow
def test_every_pair_records_with_ground_truth_on_a_step_of_the_right_type(tmp_path):
    _assert_recorded(dc.build(tmp_path))
