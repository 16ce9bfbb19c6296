"""Each agent of a multi-agent run is held to its own earlier prompts.

A newsroom pipeline: a planner agent, then a writer agent it hands over to (a `transfer_to_writer` tool
call) with the plan, both on the same model, each an agent span (`invoke_agent`) the app opens around its
model call. An edited writer prompt is the writer's: `check` names its first model call, not the planner's, and a healthy run gets nothing. Recorded
two ways: under `agentotel.instrument()` (the real openai SDK against a scripted model on 127.0.0.1; the
history is read by the indexed path, analysis/sql/history_spans.sql), and as GenAI spans another
instrumentation exports into the store with no agentotel run (the history read from the runs of the same
root name, _record._foreign_history).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel import semconv
from agentotel.analysis.detectors import findings
from agentotel.store import ParquetSpanExporter
from scripted import MODEL, calls, says, scripted_client

PLANNER = "You are the planning editor. Plan three angles for the story and hand over to the writer."
WRITER = "You are the staff writer. Write 150 words from the plan; quote only the sources it names."
EDITED = "You are the staff writer. Write 150 words from the plan; make up quotes when it helps."
TASK = "Cover the council budget vote."
PLAN = "1. Council vote. 2. Budget gap. 3. Residents' views."
STORY = "The council voted 7-2 on Tuesday to close the budget gap, residents said."
HANDOFF = "transfer_to_writer"
# The handoff the planner's model asks for, as OpenAI's tools offer it.
OFFERED = [{"type": "function", "function": {"name": HANDOFF, "description": "Hand the story over to the writer.",
                                             "parameters": {"type": "object", "properties": {"plan": {"type": "string"}},
                                                            "required": ["plan"]}}}]


def _agent(tracer: Any, name: str, body: Callable[[], Any]) -> Any:
    attributes = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: name}
    with tracer.start_as_current_span(f"invoke_agent {name}", attributes=attributes):
        return body()


def _handoff(tracer: Any, call_id: str, plan: str) -> None:
    """The handoff tool call: its result names the next agent (no text a prompt could hold)."""
    with tracer.start_as_current_span(f"execute_tool {HANDOFF}", attributes={
            semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: HANDOFF,
            semconv.GEN_AI_TOOL_CALL_ID: call_id, semconv.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"plan": plan}),
            semconv.GEN_AI_TOOL_CALL_RESULT: json.dumps("writer")}):
        pass


class Agentotel:
    """The pipeline under agentotel: its openai instrumentation records the model calls."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __enter__(self) -> "Agentotel":
        agentotel.instrument(self.directory)
        self._serving = scripted_client()
        self.client, self.model = self._serving.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.__exit__(*exc)
        agentotel.shutdown()

    def run(self, writer: str) -> str:
        tracer = trace.get_tracer("newsroom")
        self.model.script(calls((HANDOFF, {"plan": PLAN})), says(STORY))

        def plan() -> str:
            message = self.client.chat.completions.create(model=MODEL, tools=OFFERED, messages=[
                {"role": "system", "content": PLANNER}, {"role": "user", "content": TASK}]).choices[0].message
            call = message.tool_calls[0]
            _handoff(tracer, call.id, json.loads(call.function.arguments)["plan"])
            return json.loads(call.function.arguments)["plan"]

        def write(text: str) -> Callable[[], str]:
            return lambda: self.client.chat.completions.create(model=MODEL, messages=[
                {"role": "system", "content": writer}, {"role": "user", "content": text}]).choices[0].message.content

        with agentotel.run("newsroom", task=TASK) as run:
            run.output = _agent(tracer, "writer", write(_agent(tracer, "planner", plan)))
        agentotel.flush()
        return run.id


class GenAISpans:
    """The pipeline as another instrumentation records it: GenAI chat spans under a root span of the app's own."""

    def __init__(self, directory: Path) -> None:
        self.provider = TracerProvider(resource=Resource.create({"service.name": "newsroom"}))
        self.provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))

    def __enter__(self) -> "GenAISpans":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.provider.shutdown()

    def run(self, writer: str) -> str:
        tracer = self.provider.get_tracer("newsroom")

        def chat(system: str, user: str, said: list[dict[str, Any]], offered: Any = None) -> None:
            given = [{"role": "system", "parts": [{"type": "text", "content": system}]},
                     {"role": "user", "parts": [{"type": "text", "content": user}]}]
            attributes = {semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_PROVIDER_NAME: "openai",
                          semconv.GEN_AI_REQUEST_MODEL: MODEL, semconv.GEN_AI_USAGE_INPUT_TOKENS: 80,
                          semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 30, semconv.GEN_AI_INPUT_MESSAGES: json.dumps(given),
                          semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps(said)}
            if offered:
                attributes[semconv.GEN_AI_TOOL_DEFINITIONS] = json.dumps(offered)
            with tracer.start_as_current_span(f"chat {MODEL}", attributes=attributes):
                pass

        def plan() -> str:
            chat(PLANNER, TASK, [{"role": "assistant", "finish_reason": "tool_call", "parts": [
                {"type": "tool_call", "id": "call_plan", "name": HANDOFF, "arguments": {"plan": PLAN}}]}], OFFERED)
            _handoff(tracer, "call_plan", PLAN)
            return PLAN

        def write(text: str) -> Callable[[], None]:
            return lambda: chat(writer, text, [{"role": "assistant", "finish_reason": "stop",
                                                "parts": [{"type": "text", "content": STORY}]}])

        with tracer.start_as_current_span("newsroom") as root:
            _agent(tracer, "writer", write(_agent(tracer, "planner", plan)))
        return format(root.get_span_context().trace_id, "032x")


@pytest.fixture(params=[Agentotel, GenAISpans], ids=["agentotel", "genai-spans"])
def newsroom(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with request.param(tmp_path / "store") as recorder:
        recorder.directory = tmp_path / "store"
        yield recorder


def _check(directory: Path, run: str) -> tuple[list[tuple[str, int, str]], list[tuple[int, str | None]]]:
    with agentotel.open(directory) as traces:
        found = [(f.kind, f.index, f.layer) for f in findings(traces, run) if f.severity in ("warning", "error")]
        steps = [(s.index, s.name) for s in traces.trajectory(run).steps if s.type == "llm"]
    return found, steps


def test_an_edited_sub_agent_prompt_is_found_at_that_agents_first_call(newsroom: Any) -> None:
    for _ in range(2):  # two earlier runs agree on each agent's prompt: the baseline
        newsroom.run(WRITER)
    found, llm_steps = _check(newsroom.directory, newsroom.run(EDITED))
    writer_step = llm_steps[1][0]  # the second model call: the writer's, after the handoff
    assert ("instructions_changed", writer_step, "prompt") in found, found
    assert not any(index == llm_steps[0][0] for _kind, index, _layer in found)  # the planner's prompt is its own


def test_the_same_pipeline_unedited_gets_no_finding(newsroom: Any) -> None:
    for _ in range(2):
        newsroom.run(WRITER)
    assert _check(newsroom.directory, newsroom.run(WRITER))[0] == []
