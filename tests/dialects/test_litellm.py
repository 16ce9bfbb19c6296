"""LiteLLM's OpenTelemetry callback: the spans it writes become the same runs and model steps as agentotel's own.

LiteLLM's spans are recorded (recorded/litellm.jsonl, made by `recorded/record.py litellm`: litellm 1.110 cannot be
installed beside the project's aiobotocore): two litellm.completion calls (the openai provider, producer.py's
scripted server) around the tool, each in the app's root span, twice; the second time the tool fails and the model
answers past its error. LiteLLM writes gen_ai.input/output.messages with OpenAI's leftovers (a message's calls in
its own `tool_calls`, a tool message's call in `tool_call_id`) and the answer's calls only in
gen_ai.completion.K.function_call.* (no id). They go in through `agentotel import`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentotel import semconv
from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, glob_sum, recorded_store
from weather_variants import check, good_and_faulty

store = recorded_store("litellm")


def test_litellm_requests_are_model_steps_with_the_calls_they_asked_for(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["name"], good["user_id"], good["model_calls"]) == ("weather-job", "bob", 2)
    assert (good["input_tokens"], good["output_tokens"]) == (IN, OUT)
    first, last = traces.trajectory(good["run_id"]).steps
    assert (first.type, last.type) == ("llm", "llm")
    assert [(s.input_tokens, s.output_tokens) for s in (first, last)] == TOKENS and all(s.cost_usd for s in (first, last))
    # The call asked for: only in gen_ai.completion.0.function_call.*, its id (LiteLLM keeps none there) the one
    # the conversation sent back gives it.
    assert first.output == [{"role": "assistant", "finish_reason": "tool_calls", "parts": [
        {"type": "tool_call", "id": "call_weather_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}]
    # The conversation sent back in the GenAI shape: the call a part, its result the response to it.
    assert last.input[1:] == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_weather_1", "name": "get_weather",
                                         "arguments": {"city": "Paris"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_weather_1", "response": "sunny in Paris"}]}]
    assert last.output[0]["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_what_litellm_wrote_stays_in_the_spans_attributes(traces: Traces) -> None:
    rows = traces.sql(f"""SELECT output, attributes['{semconv.GEN_AI_OUTPUT_MESSAGES}'], dialect
                          FROM llm_calls WHERE input_tokens = 50""").fetchall()
    assert len(rows) == 2
    for mended, kept, dialect in rows:
        assert "litellm" in dialect.split("+")
        assert json.loads(kept) == [{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]
        assert json.loads(mended)[0]["parts"][0]["name"] == "get_weather"


def test_check_names_the_model_step_that_answered_past_the_tool_error_and_nothing_in_the_good_run(
        traces: Traces, store: Path) -> None:
    good, faulty = good_and_faulty(traces)
    assert check(store, good) == []  # no call unanswered: the asked call and its result pair by their id
    steps = traces.trajectory(faulty["run_id"]).steps
    assert [(f["kind"], f["index"]) for f in check(store, faulty)] == [("tool_error_ignored", steps[-1].index)]


def test_the_tools_offered_are_genai_definitions(traces: Traces) -> None:
    offered = {r[0] for r in traces.sql("SELECT attributes[$k] FROM llm_calls", {"k": semconv.GEN_AI_TOOL_DEFINITIONS}).fetchall()}
    [definitions] = [json.loads(o) for o in offered]
    assert [(d["name"], d["description"]) for d in definitions] == [("get_weather", "Weather in a city.")]


@pytest.mark.parametrize(("given", "kept"), [(None, "true"), ("false", "false")])
def test_instrument_keeps_litellms_calls_out_of_the_run_span(tmp_path: Path, given: str | None, kept: str) -> None:
    """Under agentotel.run(), LiteLLM's callback (by default) wrote each call's attributes onto the run's own span
    (run name lost, one "model call" left of two: measured with litellm 1.110); instrument() asks it for a span of its
    own, the setting the recorded spans were made with. A user's own choice stays."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "USE_OTEL_LITELLM_REQUEST_SPAN"}
    if given is not None:
        env["USE_OTEL_LITELLM_REQUEST_SPAN"] = given
    code = ("import os, agentotel; agentotel.instrument(directory=os.environ['STORE']);"
            "print(os.environ.get('USE_OTEL_LITELLM_REQUEST_SPAN')); agentotel.shutdown()")
    run = subprocess.run([sys.executable, "-c", code], env={**env, "STORE": str(tmp_path / "store")},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == kept
