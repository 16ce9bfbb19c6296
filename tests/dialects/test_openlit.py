"""OpenLIT: the spans it emits become the same runs and steps as agentotel's own.

OpenLIT's spans are recorded (recorded/openlit-langchain.jsonl, made by `recorded/record.py openlit`: OpenLIT 1.45
cannot be installed beside the openai 3.x and anthropic 2.x the project tests): its LangChain instrumentation
around producer.py's LangChain flow, twice, in a root span each; the second time the tool fails and the model
answers past its error. They go in through `agentotel import`, as an archive of the collector's file exporter would.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentotel import semconv
from agentotel.query import Traces
from agentotel.store.dialects import derive
from test_dialects import IN, assert_weather_steps, glob_sum, recorded_store
from weather_variants import assert_tool_error_named, good_and_faulty

store = recorded_store("openlit-langchain")


def test_openlit_spans_are_model_and_tool_steps_of_the_root_spans_run(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["name"], good["user_id"], good["session_id"]) == ("weather-job", "bob", "sess-7")
    assert_weather_steps(traces, good)  # the model steps' input: their messages, not the tool call's arguments
    tool = next(s for s in traces.trajectory(good["run_id"]).steps if s.type == "tool")
    # OpenLIT writes LangChain's Python reprs: {'city': 'Paris'}, content='sunny in Paris' name=... tool_call_id=...
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")
    assert {d for (d,) in traces.sql("SELECT DISTINCT dialect FROM spans WHERE operation IS NOT NULL").fetchall()} == {"genai+openlit"}
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_the_model_spans_tool_call_arguments_stay_in_its_attributes(traces: Traces) -> None:
    rows = traces.sql(f"""SELECT input, attributes['{semconv.GEN_AI_TOOL_CALL_ARGUMENTS}'],
                          attributes['{semconv.GEN_AI_INPUT_MESSAGES}'] FROM llm_calls WHERE tool_name IS NOT NULL""").fetchall()
    assert len(rows) == 2
    for messages, arguments, kept in rows:
        assert json.loads(messages)[0]["parts"][0]["content"] == "What is the weather in Paris?"
        assert (json.loads(arguments), kept) == ({"city": "Paris"}, None)  # each in one place: the span rebuilds


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))


def test_before_the_message_attributes_the_prompt_text_and_the_calls_asked_become_messages() -> None:
    """OpenLIT 1.3x: the prompt as `role: content` lines in an event, the calls the model asked for (joined by
    ", ") in gen_ai.tool.* attributes beside the answer's text."""
    attributes = {semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
                  "gen_ai.system": "openai", semconv.GEN_AI_TOOL_NAME: "get_weather, get_weather",
                  semconv.GEN_AI_TOOL_CALL_ID: "call_1, call_2", "gen_ai.tool.args": '{"city": "Paris"}, {"city": "Oslo"}'}
    events = [(1, "gen_ai.content.prompt", {"gen_ai.prompt": "system: Be brief.\nuser: Weather in Paris\nand Oslo?"}),
              (2, "gen_ai.content.completion", {"gen_ai.completion": ""})]
    derived = derive(attributes, "chat gpt-4o-mini", "CLIENT", "openlit.otel.tracing", "OK", events)
    assert "openlit" in derived.dialects
    assert json.loads(derived.input) == [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                                         {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris\nand Oslo?"}]}]
    calls = [(p["id"], p["name"], p["arguments"]) for m in json.loads(derived.output) for p in m["parts"]]
    assert calls == [("call_1", "get_weather", {"city": "Paris"}), ("call_2", "get_weather", {"city": "Oslo"})]
