"""Tool calls judged when the record keeps no tool definitions.

Some instrumentations record no `gen_ai.tool.definitions` (opentelemetry-instrumentation-openai-v2, the
OpenAI Agents SDK's generation spans under OpenInference), and a run of another instrumentation has no
agentotel environment snapshot: nothing says what the model was offered. `check` then judges a call that
failed by the calls that worked: a tool nothing ran and no call of it ever worked is `unknown_tool`; a
renamed argument, or arguments the model corrected into a call that worked, is `wrong_arguments`; a call
that failed with the same arguments as one that worked (the service's failure) is neither. The runs are a
calendar agent's, written as GenAI spans through the real OTel SDK into the store, with the tools recorded
as spans or only in the messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

import agentotel
from agentotel import semconv
from agentotel.analysis.detectors import findings
from agentotel.store import ParquetSpanExporter

ASK = "Put the design review on my calendar for Friday 10:00."
EVENT = {"title": "Design review", "start": "2026-12-04T10:00"}
CREATED = {"event_id": "evt_5521", "title": "Design review", "start": "2026-12-04T10:00"}
TOOLS = {"create_event", "list_events"}  # what the agent has: a call of another name runs nothing (no span)


class Calendar:
    """Records runs of the calendar agent; each model turn is (what it asks for, what each call returned)."""

    def __init__(self, directory: Path, tool_spans: bool) -> None:
        self.provider = TracerProvider(resource=Resource.create({"service.name": "calendar"}))
        self.provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
        self.tracer = self.provider.get_tracer("calendar-app")
        self.tool_spans, self.directory = tool_spans, directory

    def run(self, *turns: list[tuple[str, dict[str, Any], Any, bool]], answer: str) -> str:
        """`turns`: per model call, its calls as (tool, arguments, result, failed)."""
        messages: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": ASK}]}]
        with self.tracer.start_as_current_span("calendar-agent") as root:
            for turn, asked in enumerate(turns):
                calls = [{"type": "tool_call", "id": f"call_{turn}_{i}", "name": name, "arguments": arguments}
                         for i, (name, arguments, _result, _failed) in enumerate(asked)]
                said = {"role": "assistant", "parts": calls, "finish_reason": "tool_call"}
                self._chat(messages, said)
                messages.append(said)
                for i, (name, arguments, result, failed) in enumerate(asked):
                    if self.tool_spans and name in TOOLS:
                        self._tool(f"call_{turn}_{i}", name, arguments, result, failed)
                    shown = f"Error: {result}" if failed else json.dumps(result)
                    messages.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{turn}_{i}",
                                                                "response": shown}]})
            self._chat(messages, {"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"})
        self.provider.force_flush()
        return format(root.get_span_context().trace_id, "032x")

    def _chat(self, given: list[dict[str, Any]], said: dict[str, Any]) -> None:
        with self.tracer.start_as_current_span("chat gpt-4o-mini", attributes={
                semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_PROVIDER_NAME: "openai",
                semconv.GEN_AI_REQUEST_MODEL: "gpt-4o-mini", semconv.GEN_AI_USAGE_INPUT_TOKENS: 90,
                semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 12, semconv.GEN_AI_INPUT_MESSAGES: json.dumps(given),
                semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps([said])}):
            pass

    def _tool(self, call_id: str, name: str, arguments: Any, result: Any, failed: bool) -> None:
        with self.tracer.start_as_current_span(f"execute_tool {name}", attributes={
                semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: name,
                semconv.GEN_AI_TOOL_CALL_ID: call_id, semconv.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(arguments),
                **({} if failed else {semconv.GEN_AI_TOOL_CALL_RESULT: json.dumps(result)})}) as span:
            if failed:
                span.set_status(Status(StatusCode.ERROR, str(result)))

    def check(self, run: str) -> list[tuple[str, int, str]]:
        with agentotel.open(self.directory) as traces:
            return [(f.kind, f.index, f.layer) for f in findings(traces, run) if f.severity in ("warning", "error")]

    def first_llm(self, run: str) -> int:
        with agentotel.open(self.directory) as traces:
            return next(s.index for s in traces.trajectory(run).steps if s.type == "llm")


@pytest.fixture(params=[True, False], ids=["tool-spans", "messages-only"])
def calendar(request: pytest.FixtureRequest, tmp_path: Path) -> Calendar:
    recorder = Calendar(tmp_path / "store", request.param)
    yield recorder
    recorder.provider.shutdown()


def test_a_tool_that_does_not_exist_is_unknown_and_a_renamed_argument_wrong(calendar: Calendar) -> None:
    unknown = calendar.run([("book_meeting", EVENT, "no such tool: book_meeting", True)],
                           [("create_event", EVENT, CREATED, False)], answer="Booked: Design review, Friday 10:00 (evt_5521).")
    assert ("unknown_tool", calendar.first_llm(unknown), "tool") in calendar.check(unknown)
    renamed = calendar.run([("create_event", {"name": "Design review", "start": "2026-12-04T10:00"},
                             "create_event() got an unexpected keyword argument 'name'", True)],
                           [("create_event", EVENT, CREATED, False)], answer="Booked: Design review, Friday 10:00 (evt_5521).")
    assert ("wrong_arguments", calendar.first_llm(renamed), "tool") in calendar.check(renamed)


def test_a_service_failure_with_the_arguments_that_work_is_no_wrong_call(calendar: Calendar) -> None:
    retried = calendar.run([("create_event", EVENT, "503 Service Unavailable", True)], [("create_event", EVENT, CREATED, False)],
                           answer="Booked: Design review, Friday 10:00 (evt_5521).")
    assert not [f for f in calendar.check(retried) if f[0] in ("unknown_tool", "wrong_arguments")]
    with_notes = dict(EVENT, notes="bring the mockups")
    extra = calendar.run([("create_event", EVENT, CREATED, False)], [("create_event", with_notes, "timed out after 30 s", True)],
                         answer="Booked evt_5521; adding the notes timed out, so they are not on the event.")
    assert not [f for f in calendar.check(extra) if f[0] in ("unknown_tool", "wrong_arguments")]
