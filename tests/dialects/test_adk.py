"""Google's Agent Development Kit: the spans its runner writes become the same runs and steps as agentotel's own.

google-adk is not installed here (it pulls Google Cloud's client libraries, well over 100 MB), so these spans are
made with the real OpenTelemetry SDK under ADK's tracer name (`gcp.vertex.agent`) in the shapes its telemetry.py
writes (1.x: `call_llm` with the google-genai request and response as JSON, `execute_tool <tool>` with the GenAI tool
attributes and `gcp.vertex.agent.tool_call_args` / `tool_response`), and stored by the in-process exporter. The
tool of the second run fails and the model answers past its error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import StatusCode

import agentotel
from agentotel.query import Traces
from agentotel.store import ParquetSpanExporter
from agentotel.store.dialects import derive
from test_dialects import IN, TOKENS, glob_sum
from weather_variants import assert_tool_error_named, good_and_faulty

TOOLS = [{"function_declarations": [{"name": "get_weather", "description": "Weather in a city.",
                                     "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}]
QUESTION = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
CALL = {"role": "model", "parts": [{"function_call": {"id": "adk-call-1", "name": "get_weather", "args": {"city": "Paris"}}}]}


def _llm(span, contents: list, answer: dict, tokens: tuple[int, int]) -> None:
    """What ADK's trace_call_llm sets on its `call_llm` span."""
    request = {"model": "gemini-2.0-flash", "config": {"system_instruction": "Answer briefly.", "tools": TOOLS},
               "contents": contents}
    response = {"content": answer, "finish_reason": "STOP", "model_version": "gemini-2.0-flash-001",
                "usage_metadata": {"prompt_token_count": tokens[0], "candidates_token_count": tokens[1],
                                   "total_token_count": sum(tokens)}}
    span.set_attributes({"gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": "gemini-2.0-flash",
                         "gcp.vertex.agent.session_id": "adk-session-1", "gcp.vertex.agent.invocation_id": "e-1",
                         "gcp.vertex.agent.llm_request": json.dumps(request), "gcp.vertex.agent.llm_response": json.dumps(response)})


def _run(tracer, result: dict, error: Exception | None = None) -> None:
    """One ADK invocation: a model call asking for get_weather, the tool (`error` leaving its span), a model call
    answering."""
    answered = {"role": "user", "parts": [{"function_response": {"id": "adk-call-1", "name": "get_weather", "response": result}}]}
    with tracer.start_as_current_span("invocation"):
        with tracer.start_as_current_span("invoke_agent weather_agent", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}):
            with tracer.start_as_current_span("call_llm") as span:
                _llm(span, [QUESTION], CALL, TOKENS[0])
            with tracer.start_as_current_span("execute_tool get_weather") as span:
                span.set_attributes({"gen_ai.system": "gcp.vertex.agent", "gen_ai.operation.name": "execute_tool",
                                     "gen_ai.tool.name": "get_weather", "gen_ai.tool.description": "Weather in a city.",
                                     "gen_ai.tool.call.id": "adk-call-1",
                                     "gcp.vertex.agent.tool_call_args": json.dumps({"city": "Paris"}),
                                     "gcp.vertex.agent.tool_response": json.dumps(result),
                                     "gcp.vertex.agent.llm_request": "{}", "gcp.vertex.agent.llm_response": "{}"})
                if error is not None:  # as the SDK records an exception leaving the span
                    span.record_exception(error)
                    span.set_status(StatusCode.ERROR, str(error))
            with tracer.start_as_current_span("call_llm") as span:
                _llm(span, [QUESTION, CALL, answered], {"role": "model", "parts": [{"text": "Sunny in Paris."}]}, TOKENS[1])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("adk") / "store"
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(store)))
    tracer = provider.get_tracer("gcp.vertex.agent")
    _run(tracer, {"result": "sunny in Paris"})  # ADK wraps a tool's plain return value
    # The tool raised; an on_tool_error_callback gave the model its error as the response, and the model went on.
    error = RuntimeError("weather service unavailable for Paris")
    _run(tracer, {"error": str(error)}, error)
    provider.shutdown()
    return store


@pytest.fixture(scope="module")
def traces(store: Path) -> Traces:
    return agentotel.open(store)


def test_adk_spans_are_model_and_tool_steps_of_the_invocation(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert good["session_id"] == "adk-session-1"
    steps = [s for s in traces.trajectory(good["run_id"]).steps if s.type != "agent"]
    assert [(s.type, s.input_tokens, s.output_tokens) for s in steps] == [("llm", *TOKENS[0]), ("tool", None, None), ("llm", *TOKENS[1])]
    first, tool, second = steps
    assert first.input[0] == {"role": "system", "parts": [{"type": "text", "content": "Answer briefly."}]}
    assert first.output[0]["parts"] == [{"type": "tool_call", "id": "adk-call-1", "name": "get_weather", "arguments": {"city": "Paris"}}]
    assert (tool.tool_name, tool.tool_call_id, tool.requested_by) == ("get_weather", "adk-call-1", first.index)
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")
    assert second.output[0]["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    assert second.input[-1]["parts"][0]["type"] == "tool_call_response"
    assert {d for (d,) in traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()} == {"adk+genai-legacy"}
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))


def test_before_1_0_the_tool_span_names_its_tool_and_call_in_its_name_and_response_event() -> None:
    event = {"id": "ev-1", "author": "weather_agent", "content": {"role": "user", "parts": [
        {"function_response": {"id": "adk-call-1", "name": "get_weather", "response": {"result": "sunny in Paris"}}}]}}
    attributes = {"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.tool_call_args": '{"city": "Paris"}',
                  "gcp.vertex.agent.tool_response": json.dumps(event), "gcp.vertex.agent.llm_request": "{}"}
    derived = derive(attributes, "execute_tool get_weather", "INTERNAL", "gcp.vertex.agent", "OK", ())
    assert {k: derived.columns[k] for k in ("operation", "tool_name", "tool_call_id")} == {
        "operation": "execute_tool", "tool_name": "get_weather", "tool_call_id": "adk-call-1"}
    assert (derived.input, derived.output) == ('{"city": "Paris"}', "sunny in Paris")
