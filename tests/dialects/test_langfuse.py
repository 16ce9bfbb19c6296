"""Langfuse's SDK (v3 on: OpenTelemetry spans): its observations become the same runs and steps as agentotel's.

One process runs the real langfuse client twice: the openai SDK through Langfuse's wrapper (a GENERATION per
call) against the scripted model, the tool under `@observe(as_type="tool")`, inside an `@observe`'d function with
the run's user and session; the second time the tool fails and the model answers past its error. The openai-v2
instrumentation records every call as well, inside Langfuse's GENERATION: one call, two spans.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentotel
from agentotel import semconv
from agentotel.query import Traces
from test_dialects import IN, OUT, assert_weather_steps, glob_sum, produce
from weather_variants import assert_tool_error_named, good_and_faulty


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("langfuse") / "store"
    produce(store, instrumentations=["langfuse", "openai-v2"], flow="langfuse", failures=[False, True])
    return store


@pytest.fixture(scope="module")
def traces(store: Path) -> Traces:
    return agentotel.open(store)


def test_observations_are_model_and_tool_steps_of_the_traces_run(traces: Traces) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["name"], good["user_id"], good["session_id"]) == ("weather-agent", "alice", "s-1")
    assert_weather_steps(traces, good)  # tokens, model, cost, messages, the tool's arguments and its call's id
    tool = next(s for s in traces.trajectory(good["run_id"]).steps if s.type == "tool")
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")  # not @observe's {"args", "kwargs"}
    dialects = traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()
    assert dialects == [("langfuse",)]
    offered = traces.sql(f"SELECT DISTINCT attributes['{semconv.GEN_AI_TOOL_DEFINITIONS}'] FROM llm_calls").fetchall()
    assert [[t["name"] for t in json.loads(o)] for (o,) in offered] == [["get_weather"]]


def test_a_generation_around_the_openai_instrumentations_span_counts_once(traces: Traces, store: Path) -> None:
    for run in good_and_faulty(traces):
        assert (run["model_calls"], run["input_tokens"], run["output_tokens"]) == (2, IN, OUT)
    marked = traces.sql("SELECT scope_name, count(*) FROM spans WHERE ends_with(dialect, 'duplicate') GROUP BY 1").fetchall()
    assert marked == [("opentelemetry.instrumentation.openai_v2", 4)]  # Langfuse's record, the outer one, is kept
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))
