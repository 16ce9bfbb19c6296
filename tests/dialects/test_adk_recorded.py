"""Google's ADK 2.x for real: the spans its runner writes become the same runs and steps as agentotel's own.

The spans are recorded (recorded/adk-latest.jsonl and adk-v1.jsonl, made by `recorded/record.py adk-latest` and
`adk-v1`: google-adk pulls Google Cloud's client libraries): an LlmAgent (Gemini through google-genai, producer.py's
scripted server) around a function tool, twice; the second time the tool raises and an on_tool_error callback hands
the model its error. With the latest GenAI conventions opted in (the messages on the spans) and with ADK's 1.x span
schema. Either way ADK's model spans keep no id for the call the model asked (Gemini gives none; the form with the
latest conventions writes `get_weather_0`), while its tool span has the id ADK gave the call (`adk-...`).
"""

from __future__ import annotations

from pathlib import Path

from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, recorded_store
from weather_variants import assert_tool_error_named, good_and_faulty

store = recorded_store("adk-latest", "adk-v1")


def test_the_tool_step_is_the_call_the_model_asked_for(traces: Traces) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["model_calls"], good["tool_calls"], good["input_tokens"], good["output_tokens"]) == (2, 1, IN, OUT)
    steps = traces.trajectory(good["run_id"]).steps
    first, last = [s for s in steps if s.type == "llm"]
    [tool] = [s for s in steps if s.type == "tool"]
    assert [(s.input_tokens, s.output_tokens) for s in (first, last)] == TOKENS
    assert [p["name"] for m in first.output for p in m["parts"] if p["type"] == "tool_call"] == ["get_weather"]
    # Paired by tool and arguments (the ids differ), its own id kept.
    assert (tool.tool_name, tool.requested_by) == ("get_weather", first.index) and tool.tool_call_id.startswith("adk-")
    # The function's return value, not ADK's {"result": ...} around it.
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))
