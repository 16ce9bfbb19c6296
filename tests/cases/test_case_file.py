"""Cutting a case from a run, and the case file: versioned, readable YAML, secrets kept out."""

from __future__ import annotations

import pytest
import yaml

from agentotel.cases import Case, CaseError, detect, new_case, suggest_cut
from agentotel.cases._record import History
from cases_build import NEW_SHAPE, healthy_run_for_history, looping_run


def cut(tmp_path, at=3):
    run = looping_run()
    found = detect(run, History.from_records([healthy_run_for_history()]))
    return new_case(run, at=at, layer="tool", name="orders-shape-drift", found=found), found


def test_the_first_affected_step_is_the_model_call_after_the_drifted_tool_output():
    run = looping_run()
    found = detect(run, History.from_records([healthy_run_for_history()]))
    assert {f.kind for f in found} >= {"repeated_tool_call", "tool_output_drift"}
    assert suggest_cut(run, found) == 3  # the drift is at tool step 2; its response must be frozen


def test_a_case_freezes_every_recorded_response_and_replays_by_kind_of_step(tmp_path):
    case, _found = cut(tmp_path)
    # Before the cut (step 3) the world the failure happened in; from it on, what frozen kinds replay.
    assert [(t.step, t.name, t.arguments, t.output) for t in case.tools] == [
        (step, "search_orders", {"customer": "acme"}, NEW_SHAPE) for step in (2, 4, 6)]
    assert [(m.step, m.occurrence, m.model) for m in case.models] == [(1, 1, "gpt-4o-mini"), (3, 1, "gpt-4o-mini"),
                                                                      (5, 1, "gpt-4o-mini"), (7, 1, "gpt-4o-mini")]
    assert (case.replay_tools, case.replay_models) == ("frozen", "frozen")  # cut at a model step: nothing live
    at_tool, _found = cut(tmp_path, at=2)
    assert (at_tool.replay_tools, at_tool.replay_models) == ("live", "frozen")  # cut at the tool: it runs, offline
    assert case.models[0].response[0]["parts"][0]["name"] == "search_orders"
    assert case.input["task"] == "How many orders does acme have?"
    assert case.input["messages"][-1]["role"] == "tool"  # what the model was sent at step 3
    assert case.failure_mode == "tool_output_drift" and case.layer == "tool"
    assert case.source["at_step"] == 3 and case.source["run_id"] == "run-b"
    assert case.environment["models"] == ["gpt-4o-mini"]
    assert case.assertions.must_not_repeat == ["search_orders"] and case.assertions.final_status == "ok"


def test_the_file_round_trips_and_reads_like_a_document(tmp_path):
    case, _found = cut(tmp_path)
    path = case.save(tmp_path / "cases" / "orders-shape-drift.yaml")
    text = path.read_text()
    assert text.startswith("# agentotel regression case")
    data = yaml.safe_load(text)
    assert data["agentotel_case"] == 1 and list(data)[:3] == ["agentotel_case", "name", "layer"]
    loaded = Case.load(path)
    assert loaded.to_dict() == case.to_dict()
    assert loaded.path == path
    assert data["replay"] == {"tools": "frozen", "models": "frozen", "policy": "strict"}


def test_the_old_mode_switch_still_reads_as_both_kinds(tmp_path):
    case, _found = cut(tmp_path)
    data = case.to_dict()
    for mode in ("live", "frozen"):
        data["replay"] = {"policy": "strict", "mode": mode}
        loaded = Case.from_dict(data)
        assert (loaded.replay_tools, loaded.replay_models, loaded.mode) == (mode, mode, mode)
    data["replay"] = {"mode": "live", "models": "frozen"}  # the kind named wins over the old switch
    assert (Case.from_dict(data).replay_tools, Case.from_dict(data).replay_models) == ("live", "frozen")
    data["replay"] = {"tools": "sometimes"}
    with pytest.raises(CaseError, match="tools and models are live or frozen"):
        Case.from_dict(data)


def test_secrets_never_enter_a_case(tmp_path):
    run = looping_run()
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    run.steps[1]["output"] = '{"orders": [], "api_key": "%s", "note": "token %s"}' % (secret, secret)
    case = new_case(run, at=3, layer="tool")
    path = case.save(tmp_path / "c.yaml")
    assert secret not in path.read_text()
    assert "[REDACTED]" in path.read_text()


def test_bad_requests_are_one_clear_error(tmp_path):
    run = looping_run()
    with pytest.raises(CaseError, match="layer 'network' is not one of prompt, tool"):
        new_case(run, at=3, layer="network")
    with pytest.raises(CaseError, match="has no step 42"):
        new_case(run, at=42, layer="tool")
    no_content = looping_run()
    no_content.steps[0]["input"] = None
    with pytest.raises(CaseError, match="content capture off"):
        new_case(no_content, at=3, layer="tool")


def test_reading_a_file_that_is_not_a_case(tmp_path):
    (tmp_path / "x.yaml").write_text("just: a mapping\n")
    with pytest.raises(CaseError, match="not an agentotel case"):
        Case.load(tmp_path / "x.yaml")
    (tmp_path / "y.yaml").write_text("agentotel_case: 99\nlayer: tool\n")
    with pytest.raises(CaseError, match="newer than this agentotel reads"):
        Case.load(tmp_path / "y.yaml")
    (tmp_path / "z.yaml").write_text("agentotel_case: 1\nlayer: tool\nassertions: {max_stepz: 3}\n")
    with pytest.raises(CaseError, match="unknown assertion.*max_stepz"):
        Case.load(tmp_path / "z.yaml")
    with pytest.raises(CaseError, match="cannot read"):
        Case.load(tmp_path / "missing.yaml")


def test_a_fixture_cut_by_the_content_policy_is_flagged_in_the_case():
    from agentotel import semconv

    run = looping_run()
    run.span_attributes["s2"] = {semconv.AGENTOTEL_PAYLOAD_TRUNCATED: "true"}
    assert new_case(run, at=3, layer="tool").source["truncated_fixtures"] == [2]
    assert "truncated_fixtures" not in new_case(looping_run(), at=3, layer="tool").source


def test_a_damaged_fixture_list_is_one_clear_error(tmp_path):
    (tmp_path / "f.yaml").write_text("agentotel_case: 1\nlayer: tool\nfixtures:\n  tools:\n  - {name: x, colour: red}\n")
    with pytest.raises(CaseError, match=r"fixtures.tools\[1\]: .*colour"):
        Case.load(tmp_path / "f.yaml")
    (tmp_path / "g.yaml").write_text("agentotel_case: 1\nlayer: tool\nfixtures: {models: oops}\n")
    with pytest.raises(CaseError, match="fixtures.models: expected a list"):
        Case.load(tmp_path / "g.yaml")


def test_a_prompt_layer_case_replays_in_order_rather_than_by_request_hash():
    assert new_case(looping_run(), at=3, layer="prompt").policy == "fifo"
    assert new_case(looping_run(), at=3, layer="tool").policy == "strict"
