"""Probe: payloads nested hundreds of levels deep (another instrumentation's tool result, a message holding one),
sent to the collector as OTLP/JSON. Every command answers, and a payload reads cut at _json.MAX_DEPTH levels
with a marker, never a RecursionError."""

from __future__ import annotations

import json

import pytest
import requests
from collector_support import T0, http_url

from agentotel import _json, semconv
from agentotel.cli import main

DEPTH = 700  # json.loads reads it; a recursive walk of the result, a few frames a level, does not


def _deep(kind: str) -> str:
    return ("[" * DEPTH + '"leaf"' + "]" * DEPTH) if kind == "list" else ('{"k":' * DEPTH + '"leaf"' + "}" * DEPTH)


def _span(run: int, number: int, name: str, attributes: dict[str, str], parent: str | None = None) -> dict:
    start = T0 + run * 10**9 + number * 10**6
    span = {"traceId": f"{run + 1:032x}", "spanId": f"{run * 16 + number + 1:016x}", "name": name, "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + (5 if parent is None else 1) * 10**6),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]}
    if parent:
        span["parentSpanId"] = parent
    return span


def _run(run: int, kind: str) -> list[dict]:
    ids = {semconv.AGENTOTEL_RUN_ID: f"run-{run}"}
    root = _span(run, 0, "invoke_agent deep", {**ids, semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
                                                semconv.AGENTOTEL_RUN_NAME: "deep", semconv.GEN_AI_AGENT_NAME: "deep"})
    tool = _span(run, 1, "execute_tool lookup", {
        **ids, semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: "lookup",
        semconv.GEN_AI_TOOL_CALL_ID: "c1", semconv.GEN_AI_TOOL_CALL_ARGUMENTS: '{"id": 1}',
        semconv.GEN_AI_TOOL_CALL_RESULT: _deep(kind)}, root["spanId"])
    history = ('[{"role":"user","parts":[{"type":"text","content":"look it up"}]},{"role":"tool","parts":'
               '[{"type":"tool_call_response","id":"c1","response":' + _deep(kind) + "}]}]")
    chat = _span(run, 2, "chat m", {
        **ids, semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_REQUEST_MODEL: "m",
        semconv.GEN_AI_INPUT_MESSAGES: history,
        semconv.GEN_AI_OUTPUT_MESSAGES: '[{"role":"assistant","parts":[{"type":"text","content":"found it"}]}]'},
        root["spanId"])
    return [root, tool, chat]


@pytest.fixture
def deep_store(collector):
    spans = _run(0, "list") + _run(1, "dict") + _run(2, "list")
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "other"}, "spans": spans}]}]}
    answer = requests.post(http_url(collector), data=json.dumps(body), headers={"Content-Type": "application/json"},
                           timeout=30)
    assert answer.status_code == 200, answer.content
    return collector.settings.dir


def _depth(value) -> tuple[int, object]:
    depth = 0
    while isinstance(value, (list, dict)):
        value = value[0] if isinstance(value, list) else value["k"]
        depth += 1
    return depth, value


def test_a_payload_nested_hundreds_of_levels_reads_cut_at_the_limit_with_a_marker(deep_store, capsys):
    # Before: RecursionError out of `trajectory --json` (dataclasses.asdict walking the parsed result).
    assert main(["trajectory", "run-1", "--json", "--dir", str(deep_store)]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [s["type"] for s in steps] == ["tool", "llm"]
    assert _depth(steps[0]["output"]) == (_json.MAX_DEPTH, _json.DEPTH_MARKER)


@pytest.mark.parametrize("command", [("diff", "run-0", "run-1", "--json"), ("diff", "run-0", "run-2"),
                                     ("check", "run-0", "run-1"), ("report", "run-0", "run-1", "-o", "{tmp}/r.html"),
                                     ("report", "run-1", "-o", "{tmp}/one.html")])
def test_every_command_answers_over_deep_payloads(deep_store, tmp_path, capsys, command):
    # Before: RecursionError out of `report` (the page's payload conversion), and `check` left rules out
    # ("the rule _clarification_skipped failed on run run-1") with a RecursionError each.
    code = main([part.format(tmp=tmp_path) for part in command] + ["--dir", str(deep_store)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Recursion" not in captured.err and "failed on run" not in captured.err
