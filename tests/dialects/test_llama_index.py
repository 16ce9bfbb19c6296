"""LlamaIndex through OpenInference's instrumentation: the spans become the same runs and steps as agentotel's own.

The spans are recorded (recorded/llama-index.jsonl, made by `recorded/record.py llama-index`: llama-index-llms-openai
0.8 cannot be installed beside the openai 3.x the project tests): a retriever, then a FunctionAgent (its OpenAI LLM,
streaming, producer.py's scripted server) around a function tool, in the app's root span, twice; the second time
the tool raises and the agent hands the model its error. LlamaIndex's dispatcher writes a span a method: the
private ones inside the public (`OpenAI._prepare_chat_with_tools`, `Forecasts._retrieve`) are of the same kind.
"""

from __future__ import annotations

from pathlib import Path

from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, glob_sum, recorded_store
from weather_variants import assert_tool_error_named, good_and_faulty

store = recorded_store("llama-index")


def test_one_step_a_call_a_tool_and_a_retrieval_not_one_a_method(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["name"], good["model_calls"], good["tool_calls"], good["retrievals"]) == ("weather-job", 2, 1, 1)
    assert (good["input_tokens"], good["output_tokens"]) == (IN, OUT)
    retrieval, first, tool, last = traces.trajectory(good["run_id"]).steps
    assert (retrieval.type, retrieval.name) == ("retrieval", "Forecasts.retrieve")
    assert retrieval.output == [{"id": "forecast-1", "content": "Paris: sunny, 24C", "score": 0.9}]
    assert [(s.type, s.name) for s in (first, last)] == [("llm", "OpenAI.astream_chat")] * 2
    assert [(s.input_tokens, s.output_tokens) for s in (first, last)] == TOKENS
    # The call asked for, and nothing else: the empty text LlamaIndex writes beside it is no part.
    assert first.output[0]["parts"] == [{"type": "tool_call", "id": "call_weather_1", "name": "get_weather",
                                         "arguments": {"city": "Paris"}}]
    assert (tool.tool_name, tool.tool_call_id, tool.requested_by) == ("get_weather", "call_weather_1", first.index)
    # The function's arguments and what it returned, not FunctionTool's {"kwargs"} and ToolOutput around them.
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))
