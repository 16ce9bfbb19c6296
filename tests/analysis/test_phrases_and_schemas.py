"""Two pieces of check that run on every tool result or answer: a failure word read in a phrase of the run's
own material, and a learned output schema checked against many outputs. Shapes unlike the benchmark corpus's:
words glued to letters, digits, underscores and hyphens, multi-word failure phrases, a schema learned further
after it was used."""

from __future__ import annotations

import pytest

from agentotel.analysis import detectors
from agentotel.analysis._schema import OutputSchema


def _in_domain(text: str, domain: str) -> bool:
    match = detectors._ADMITS_FAILURE.search(text)
    assert match is not None, text
    return detectors._in_domain_phrase(text, match, domain)


@pytest.mark.parametrize(("text", "domain", "expected"), [
    ("The error rate is 2%.", "dashboards show the error rate per service", True),
    ("The error rate is 2%.", "dashboards show the error_rate per service", True),  # _ and - join a phrase's words
    ("The error rate is 2%.", "dashboards show the error-\n-rate per service", True),
    ("The error rate is 2%.", "the terror rate of the novel", False),  # a letter just before the phrase
    ("The error rate is 2%.", "see 5error rate", False),  # a digit just before it
    ("The error rate is 2%.", "see error rates", False),  # and just after it
    ("The error rate is 2%.", "error rate", True),  # at both ends of the text
    ("Please try again later.", "users may try again later", True),  # a failure phrase of two words
    ("Please try again later.", "users may retry again later", False),
    ("It failed twice.", "a job that failed twice is paged", True),  # the word before counts too
    ("It failed twice.", "nothing like that", False),
    ("Déjà error vu.", "un déjà error vu", True),  # words outside ASCII
])
def test_a_failure_word_counts_as_a_phrase_of_the_run_only_at_word_boundaries(text, domain, expected):
    assert _in_domain(text, domain) is expected


def test_a_schema_learned_further_after_a_check_is_checked_by_what_it_learned_since():
    """What `drift` finds required is kept between outputs checked; an output learned afterwards is seen."""
    schema = OutputSchema()
    schema.learn({"id": 1, "total": 10})
    assert schema.drift({"id": 2}).gone == ["$.total"]
    assert schema.drift({"id": 3}).gone == ["$.total"]  # asked again: the same answer
    schema.learn({"id": 4})  # `total` is optional from now on
    assert schema.drift({"id": 5}) is None
    schema.learn({"id": 6, "total": 7, "lines": [{"sku": "a"}]})
    drift = schema.drift({"id": 8, "total": "x"})
    assert list(drift.new_types) == ["$.total"] and drift.gone == []


def test_file_paths_given_the_other_way_are_a_drift_and_a_field_of_mixed_text_is_not():
    from agentotel.analysis._schema import OutputSchema

    schema = OutputSchema()
    for n in range(3):
        schema.learn({"matches": [{"path": f"/repo/src/mod{n}.py", "line": n}, {"path": "/repo/tests/test_x.py", "line": 1}]})
    drift = schema.drift({"matches": [{"path": "src/mod1.py", "line": 4}]})
    assert drift is not None and "$.matches[].path" in drift.new_types, drift
    assert schema.drift({"matches": [{"path": "/repo/src/other.py", "line": 4}]}) is None
    mixed = OutputSchema()
    for value in ("/repo/a.py", "see the README", "/repo/b.py"):
        mixed.learn({"note": value})
    assert mixed.drift({"note": "src/a.py"}) is None  # a field that is not always a path: nothing to compare


@pytest.mark.parametrize(("now", "drifted"), [
    ({"patient_id": "P-2", "isolation": {"required": False}}, False),  # a flag switched off: the record's variant
    ({"patient_id": "P-2", "isolation": {"required": True}}, True),  # the flag on and its fields gone: a change
    ({"patient_id": "P-2", "isolation": {"needed": "yes"}}, True),
])
def test_an_object_a_flag_switched_off_empties_is_no_drift(now, drifted):
    schema = OutputSchema()
    for n in range(3):
        schema.learn({"patient_id": f"P-{n}", "isolation": {"required": True, "organism": "MRSA", "side_room": True}})
    assert (schema.drift(now) is not None) == drifted
