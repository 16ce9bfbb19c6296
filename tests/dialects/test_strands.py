"""Strands Agents (AWS): the spans it emits become the same runs and steps as agentotel's own.

Strands' spans are recorded (recorded/strands.jsonl and strands-latest.jsonl, made by `recorded/record.py strands`:
strands-agents 1.62 cannot be installed beside the openai 3.x and mcp 2.3 the project tests): its agent, through its
OpenAI model provider (streaming), around producer.py's scripted server, twice; the second time the tool raises,
Strands hands the model the error and the model answers past it. Once in Strands' default conventions (messages as
Converse blocks in gen_ai.*.message / gen_ai.choice events) and once with the latest GenAI conventions opted in
(the gen_ai.client.inference.operation.details event). They go in through `agentotel import`.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentotel import semconv
from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, glob_sum, recorded_store
from weather_variants import assert_tool_error_named, good_and_faulty

store = recorded_store("strands", "strands-latest")


def test_strands_spans_are_model_and_tool_steps_of_the_agents_run(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["name"], good["agent_name"], good["model_calls"], good["tool_calls"]) == ("invoke_agent weather", "weather", 2, 1)
    assert (good["input_tokens"], good["output_tokens"]) == (IN, OUT)  # the agent span's own sum is not counted again
    steps = traces.trajectory(good["run_id"]).steps
    first, last = [s for s in steps if s.type == "llm"]
    assert [(s.input_tokens, s.output_tokens) for s in (first, last)] == TOKENS and all(s.cost_usd for s in (first, last))
    # Messages in the GenAI shape, not Converse blocks as text.
    asked = [m for m in first.input if m["role"] == "user"]
    assert asked == [{"role": "user", "parts": [{"type": "text", "content": "What is the weather in Paris?"}]}]
    calls = [p for m in first.output for p in m["parts"]]
    assert [(p["type"], p["id"], p["name"], p["arguments"]) for p in calls] == [
        ("tool_call", "call_weather_1", "get_weather", {"city": "Paris"})]
    results = [p for m in last.input for p in m["parts"] if p["type"] == "tool_call_response"]
    assert [p["id"] for p in results] == ["call_weather_1"] and "sunny in Paris" in json.dumps(results)
    assert [p for m in last.output for p in m["parts"]] == [{"type": "text", "content": "Sunny in Paris."}]
    [tool] = [s for s in steps if s.type == "tool"]
    assert (tool.tool_name, tool.tool_call_id, tool.requested_by) == ("get_weather", "call_weather_1", first.index)
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")  # the tool's text, not its blocks
    assert first.index < tool.index < last.index
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_the_runs_task_and_answer_are_the_agent_spans(traces: Traces) -> None:
    from agentotel.analysis import _record

    good, _ = good_and_faulty(traces)
    record = _record.load_run(traces, good["run_id"])
    assert "What is the weather in Paris?" in record.run["task"] and "Sunny in Paris." in record.run["output"]


def test_the_failed_tools_error_text_is_its_result(traces: Traces) -> None:
    _, faulty = good_and_faulty(traces)
    [tool] = [s for s in traces.trajectory(faulty["run_id"]).steps if s.type == "tool"]
    assert tool.status == "error"
    assert tool.output == "Error: RuntimeError - weather service unavailable for Paris"


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))


def test_what_the_model_was_told_and_the_tools_own_definition_are_genai_attributes(traces: Traces) -> None:
    """The instructions (a system message event, or the operation.details event's gen_ai.system_instructions) and
    the tool's schema (gen_ai.tool.json_schema) reach the readers that look for them by their GenAI names."""
    rows = traces.sql(f"""SELECT operation, input, attributes['{semconv.GEN_AI_SYSTEM_INSTRUCTIONS}'],
                                 attributes['{semconv.GEN_AI_TOOL_DEFINITIONS}']
                          FROM spans WHERE operation IN ('chat', 'execute_tool')""").fetchall()
    for operation, messages, instructions, offered in rows:
        if operation == "chat":
            told = json.loads(instructions)[0]["content"] if instructions else json.loads(messages)[0]["parts"][0]["content"]
            assert told == "Answer briefly."
        else:
            [definition] = json.loads(offered)
            assert (definition["name"], definition["description"], sorted(definition["parameters"]["properties"])) == (
                "get_weather", "Weather in a city.", ["city"])
