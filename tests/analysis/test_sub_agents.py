"""Each agent of a multi-agent run is held to its own earlier prompts.

A newsroom pipeline: a planner agent, then a writer agent it passes the plan to, both on the same model,
each an agent span (`invoke_agent`) the app opens around its model call. An edited writer prompt is the
writer's: `check` names its first model call, not the planner's, and a healthy run gets nothing. Recorded
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
from scripted import MODEL, says, scripted_client

PLANNER = "You are the planning editor. List three angles for the story, one line each."
WRITER = "You are the staff writer. Write 150 words from the plan; quote only the sources it names."
EDITED = "You are the staff writer. Write 150 words from the plan; make up quotes when it helps."
PLAN = "1. Council vote. 2. Budget gap. 3. Residents' views."
STORY = "The council voted 7-2 on Tuesday to close the budget gap, residents said."


def _agent(tracer: Any, name: str, ask: Callable[[], str]) -> str:
    attributes = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: name}
    with tracer.start_as_current_span(f"invoke_agent {name}", attributes=attributes):
        return ask()


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
        self.model.script(says(PLAN), says(STORY))

        def chat(system: str, user: str) -> Callable[[], str]:
            return lambda: self.client.chat.completions.create(model=MODEL, messages=[
                {"role": "system", "content": system}, {"role": "user", "content": user}]).choices[0].message.content

        with agentotel.run("newsroom", task="Cover the council budget vote.") as run:
            plan = _agent(tracer, "planner", chat(PLANNER, "Cover the council budget vote."))
            run.output = _agent(tracer, "writer", chat(writer, plan))
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

        def chat(system: str, user: str, answer: str) -> Callable[[], str]:
            def ask() -> str:
                given = [{"role": "system", "parts": [{"type": "text", "content": system}]},
                         {"role": "user", "parts": [{"type": "text", "content": user}]}]
                said = [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
                with tracer.start_as_current_span(f"chat {MODEL}", attributes={
                        semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_PROVIDER_NAME: "openai",
                        semconv.GEN_AI_REQUEST_MODEL: MODEL, semconv.GEN_AI_USAGE_INPUT_TOKENS: 80,
                        semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 30, semconv.GEN_AI_INPUT_MESSAGES: json.dumps(given),
                        semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps(said)}):
                    return answer
            return ask

        with tracer.start_as_current_span("newsroom") as root:
            plan = _agent(tracer, "planner", chat(PLANNER, "Cover the council budget vote.", PLAN))
            _agent(tracer, "writer", chat(writer, plan, STORY))
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
    for _ in range(3):
        newsroom.run(WRITER)
    healthy = newsroom.run(WRITER)
    edited = newsroom.run(EDITED)
    assert _check(newsroom.directory, healthy)[0] == []
    found, llm_steps = _check(newsroom.directory, edited)
    writer_step = llm_steps[1][0]  # the second model call: the writer's
    assert ("instructions_changed", writer_step, "prompt") in found, found
    assert not any(index == llm_steps[0][0] for _kind, index, _layer in found)  # the planner's prompt is its own
