"""Microsoft Agent Framework: the spans its own telemetry writes (the latest GenAI conventions: invoke_agent, chat,
execute_tool) become the same runs and steps as agentotel's own, alone and beside agentotel's.

The real agent-framework-core and agent-framework-openai run producer.py's agent (its chat completions client, a
function tool, instructions) against the scripted model server on 127.0.0.1, with sensitive data on.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

import agentotel
from agentotel import semconv
from test_dialects import IN, OUT, assert_weather_steps, glob_sum, only_run, produce


def test_agent_framework_spans_are_the_agents_model_and_tool_steps(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[], flow="agent-framework", root_span="weather-job")
    traces = agentotel.open(store)
    run = only_run(traces)
    assert (run["name"], run["model_calls"], run["tool_calls"]) == ("weather-job", 2, 1)
    assert_weather_steps(traces, run)  # the agent span's own usage sum is not counted again
    steps = traces.trajectory(run["run_id"]).steps
    [agent] = [s for s in steps if s.type == "agent"]
    assert agent.name == "invoke_agent weather" and all(s.depth > agent.depth for s in steps if s is not agent)
    [tool] = [s for s in steps if s.type == "tool"]
    assert (tool.input, tool.output) == ({"city": "Paris"}, "sunny in Paris")
    told = {r[0] for r in traces.sql("SELECT attributes[$k] FROM llm_calls", {"k": semconv.GEN_AI_SYSTEM_INSTRUCTIONS}).fetchall()}
    assert [json.loads(t) for t in told] == [[{"type": "text", "content": "Answer briefly."}]]
    assert glob_sum(store, "input_tokens") == IN


def test_beside_agentotel_each_call_counts_once_and_the_tool_step_is_linked(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[], flow="agent-framework", agentotel=True, run=True)
    traces = agentotel.open(store)
    run = only_run(traces)
    assert (run["name"], run["user_id"], run["model_calls"], run["tool_calls"]) == ("weather", "alice", 2, 1)
    assert (run["input_tokens"], run["output_tokens"]) == (IN, OUT)
    first, tool, last = traces.trajectory(run["run_id"]).steps
    assert (first.type, tool.type, last.type) == ("llm", "tool", "llm")
    assert (tool.tool_name, tool.tool_call_id, tool.requested_by) == ("get_weather", "call_weather_1", first.index)
    assert last.output[0]["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    assert (glob_sum(store, "input_tokens"), glob_sum(store, "output_tokens")) == (IN, OUT)
    duplicates = duckdb.sql(f"SELECT count(*) FROM '{store}/spans/**/*.parquet' WHERE ends_with(dialect, 'duplicate')")
    assert duplicates.fetchall()[0][0] == 2  # the framework's chat spans, beside agentotel's records of the calls
