"""Golden trajectories from real recorded material, through the whole pipeline.

A recorded SWE-agent run is replayed: its model turns are served by a scripted model behind the real
openai SDK (loopback HTTP), its tools are `@agentotel.tool` functions returning the recorded
observations. Spans go through the OTel SDK and ParquetSpanExporter into a store; the trajectory
rebuilt from that store must hold exactly the recorded tool calls, in order.
"""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

import agentotel
from agentotel.demo import completion, serve_model

DATA = Path(__file__).parent / "data"


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "store"
    agentotel.instrument(directory=directory)
    yield directory
    agentotel.shutdown()


def recorded(path: Path) -> tuple[list[dict], list[tuple[str, str, dict]], dict[str, str]]:
    history = json.loads(path.read_text())["history"]
    assistant_turns = [m for m in history if m["role"] == "assistant"]
    calls = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
             for m in assistant_turns for c in m.get("tool_calls") or []]
    observations = {m["tool_call_ids"][0]: m["content"] for m in history if m["role"] == "tool"}
    return assistant_turns, calls, observations


def replay(path: Path, client: openai.OpenAI, observations: dict[str, str], calls) -> None:
    history = json.loads(path.read_text())["history"]
    queue = {(name, json.dumps(args, sort_keys=True)): observations[call_id] for call_id, name, args in calls}

    def make_tool(name: str):
        @agentotel.tool(name=name)
        def replayed(**arguments):
            return queue[(name, json.dumps(arguments, sort_keys=True))]

        return replayed

    tools = {name: make_tool(name) for _, name, _ in calls}
    messages = [{"role": m["role"], "content": m["content"]} for m in history if m["role"] in ("system", "user")][:2]
    for _ in range(len(calls) + 2):
        response = client.chat.completions.create(model="gpt-4o", messages=messages)
        message = response.choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = tools[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@pytest.mark.parametrize("name", ["function_calling_simple.traj", "6e44b9__sweagenttestrepo-1c2844.traj"])
def test_a_replayed_swe_agent_run_rebuilds_the_recorded_tool_calls(store, name):
    path = DATA / name
    turns, calls, observations = recorded(path)
    assert len(calls) >= 4

    def model(request: dict) -> dict:
        k = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if k >= len(turns):
            return completion("done", model="gpt-4o")
        turn = turns[k]
        tool_calls = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                      for c in turn.get("tool_calls") or []]
        return completion(turn["content"], tool_calls, prompt_tokens=1000 + k, completion_tokens=50, model="gpt-4o")

    with serve_model(model) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        with agentotel.run("swe-agent", user="golden", task={"trajectory": name}) as run:
            replay(path, client, observations, calls)
    assert agentotel.flush()

    trajectory = agentotel.open(store).trajectory(run.id)
    tools = [s for s in trajectory.steps if s.type == "tool"]
    assert [(s.tool_call_id, s.tool_name, s.input) for s in tools] == calls
    assert [s.output for s in tools] == [observations[c[0]] for c in calls]
    # Each tool call was asked for by the model step right before it.
    assert [s.requested_by for s in tools] == [s.index - 1 for s in tools]
    assert [s.type for s in trajectory.steps] == ["llm", "tool"] * len(calls) + ["llm"] * (
        len(trajectory.steps) - 2 * len(calls))
    assert trajectory.run["tool_calls"] == len(calls) and trajectory.run["status"] == "ok"
    assert trajectory.run["models"] and trajectory.run["input_tokens"] > 1000 * len(calls)


def test_a_run_in_progress_is_visible_from_the_wal(store):
    @agentotel.tool
    def add(a: int, b: int) -> int:
        return a + b

    with agentotel.run("live", user="u") as run:
        add(1, 2)
        add(3, 4)
        assert agentotel.flush()
        traces = agentotel.open(store)
        (row,) = [r for r in traces.runs().to_arrow_table().to_pylist() if r["run_id"] == run.id]
        assert row["status"] == "running" and row["tool_calls"] == 2
        assert [s.output for s in traces.trajectory(run.id).steps] == [3, 7]
    assert agentotel.flush()
    assert agentotel.open(store).run(run.id)["status"] == "ok"
