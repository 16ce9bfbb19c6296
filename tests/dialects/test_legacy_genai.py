"""The GenAI conventions' older attribute form (OpenLLMetry before 0.4x, many other producers).

No installed package emits this form any more (opentelemetry-instrumentation-openai-v2, the one with a
legacy switch, does not import beside this opentelemetry-util-genai), so the span is built with the
attribute names OpenLLMetry publishes for it (opentelemetry-semantic-conventions-ai's SpanAttributes),
in the layout its older releases wrote, and stored through the real SDK and exporter.
"""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.semconv_ai import SpanAttributes as S
from opentelemetry.trace import SpanKind

import agentotel
from agentotel.store import ParquetSpanExporter
from test_dialects import only_run


def test_older_genai_attributes_fill_the_model_call_columns(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    provider = TracerProvider(resource=Resource.create({"service.name": "legacy-agent"}))
    exporter = ParquetSpanExporter(directory)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attributes = {
        S.LLM_SYSTEM: "openai", S.LLM_REQUEST_TYPE: "chat", S.LLM_REQUEST_MODEL: "gpt-4o-mini",
        S.LLM_RESPONSE_MODEL: "gpt-4o-mini-2024-07-18",
        f"{S.LLM_PROMPTS}.0.role": "system", f"{S.LLM_PROMPTS}.0.content": "Be brief.",
        f"{S.LLM_PROMPTS}.1.role": "user", f"{S.LLM_PROMPTS}.1.content": "Weather in Paris?",
        f"{S.LLM_COMPLETIONS}.0.role": "assistant", f"{S.LLM_COMPLETIONS}.0.finish_reason": "tool_calls",
        f"{S.LLM_COMPLETIONS}.0.tool_calls.0.id": "call_1", f"{S.LLM_COMPLETIONS}.0.tool_calls.0.name": "get_weather",
        f"{S.LLM_COMPLETIONS}.0.tool_calls.0.arguments": '{"city": "Paris"}',
        S.LLM_USAGE_PROMPT_TOKENS: 50, S.LLM_USAGE_COMPLETION_TOKENS: 10,
    }
    with provider.get_tracer("legacy").start_as_current_span("openai.chat", kind=SpanKind.CLIENT, attributes=attributes):
        pass
    provider.shutdown()

    traces = agentotel.open(directory)
    run = only_run(traces)
    [step] = traces.trajectory(run["run_id"]).steps
    assert (step.type, step.model, step.input_tokens, step.output_tokens) == ("llm", "gpt-4o-mini-2024-07-18", 50, 10)
    assert step.cost_usd is not None and step.cost_usd > 0
    assert step.input == [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                          {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    assert step.output == [{"role": "assistant", "finish_reason": "tool_calls", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}]
    [(provider_name, dialect, reasons)] = traces.sql("SELECT provider, dialect, finish_reasons FROM llm_calls").fetchall()
    assert (provider_name, reasons) == ("openai", ["tool_calls"])
    assert dialect == "traceloop+genai-legacy"
    # The attributes stay as they came.
    attrs = dict(traces.sql("SELECT attributes FROM spans").fetchall()[0][0])
    assert json.loads(attrs[S.LLM_USAGE_PROMPT_TOKENS]) == 50


def test_the_operation_details_event_gives_what_the_call_was_told_and_offered(tmp_path: Path) -> None:
    """The latest conventions' event form: gen_ai.client.inference.operation.details on the span, carrying the
    messages, the system instructions and the tools offered, which readers look for as the span's attributes."""
    from agentotel import semconv

    directory = tmp_path / "store"
    provider = TracerProvider(resource=Resource.create({"service.name": "event-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
    told = [{"type": "text", "content": "Be brief."}]
    offered = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    attributes = {semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_PROVIDER_NAME: "openai",
                  semconv.GEN_AI_REQUEST_MODEL: "gpt-4o-mini", semconv.GEN_AI_USAGE_INPUT_TOKENS: 50}
    with provider.get_tracer("event-form").start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT,
                                                                 attributes=attributes) as span:
        span.add_event("gen_ai.client.inference.operation.details", {
            semconv.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]),
            semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]),
            semconv.GEN_AI_SYSTEM_INSTRUCTIONS: json.dumps(told), semconv.GEN_AI_TOOL_DEFINITIONS: json.dumps(offered)})
    provider.shutdown()
    traces = agentotel.open(directory)
    [step] = traces.trajectory(only_run(traces)["run_id"]).steps
    assert (step.input[0]["parts"][0]["content"], step.output[0]["parts"][0]["content"]) == ("Weather?", "Sunny.")
    [(instructions, definitions)] = traces.sql("SELECT attributes[$i], attributes[$d] FROM llm_calls", {
        "i": semconv.GEN_AI_SYSTEM_INSTRUCTIONS, "d": semconv.GEN_AI_TOOL_DEFINITIONS}).fetchall()
    assert (json.loads(instructions), json.loads(definitions)) == (told, offered)
