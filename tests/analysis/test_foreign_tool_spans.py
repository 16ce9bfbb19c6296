"""A tool span recorded by OpenInference says what the tool declares (`tool.description`, `tool.parameters`, as
its Agents SDK and LangChain instrumentations read them off the live tool): `check` holds the tools offered to
the model to it, as it holds agentotel runs to their environment snapshot.

An invoice desk recorded as OpenInference spans (LLM, TOOL, LLM under the app's root span) through the real
OpenTelemetry SDK and the store's exporter; the faulty run offers the model a stale hand-written definition of
`lookup_invoice` without the `region` parameter the tool now requires. Before the dialect mapped `tool.parameters`,
a run of another instrumentation had no declared schema to compare with: no finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openinference.semconv.trace import MessageAttributes, OpenInferenceSpanKindValues, SpanAttributes, ToolAttributes, ToolCallAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel.analysis.detectors import findings, format_findings
from agentotel.store import ParquetSpanExporter

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
DECLARED = {"type": "object", "properties": {"invoice_id": {"type": "string"}, "region": {"type": "string", "enum": ["eu", "us"]}},
            "required": ["invoice_id", "region"]}
STALE = {"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]}
DESCRIPTION = "An invoice's status and amount, from the region's ledger."


def _messages(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, m in enumerate(messages):
        at = f"{prefix}.{n}."
        out[at + MessageAttributes.MESSAGE_ROLE] = m["role"]
        if m.get("content"):
            out[at + MessageAttributes.MESSAGE_CONTENT] = m["content"]
        for k, (call_id, name, arguments) in enumerate(m.get("calls", ())):
            call = f"{at}{MessageAttributes.MESSAGE_TOOL_CALLS}.{k}."
            out[call + ToolCallAttributes.TOOL_CALL_ID] = call_id
            out[call + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME] = name
            out[call + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON] = json.dumps(arguments)
    return out


def _run(directory: Path, offered: dict[str, Any], n: int) -> str:
    provider = TracerProvider(resource=Resource.create({"service.name": "invoice-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
    tracer = provider.get_tracer("invoice-desk")
    question = {"role": "user", "content": f"Is invoice INV-{700 + n} paid? It is an EU customer."}
    definition = {"type": "function", "function": {"name": "lookup_invoice", "description": DESCRIPTION, "parameters": offered}}
    arguments = {"invoice_id": f"INV-{700 + n}", **({"region": "eu"} if "region" in offered["properties"] else {})}
    asked = {"role": "assistant", "calls": [(f"call_{n}", "lookup_invoice", arguments)]}
    if "region" in arguments:
        result, answer = json.dumps({"invoice_id": f"INV-{700 + n}", "status": "paid", "amount_eur": 120.0 + n}), \
            f"Yes, INV-{700 + n} is paid (EUR {120.0 + n:.2f})."
    else:  # the model filled what it was offered; the tool wants its region
        result, answer = json.dumps({"error": "region is required"}), "I could not look the invoice up: the ledger needs a region."

    def llm(given: list[dict[str, Any]], said: dict[str, Any]) -> None:
        attributes = {KIND: OpenInferenceSpanKindValues.LLM.value, SpanAttributes.LLM_MODEL_NAME: "gpt-4o-mini",
                      SpanAttributes.LLM_PROVIDER: "openai", SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 90,
                      SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 20,
                      f"{SpanAttributes.LLM_TOOLS}.0.{ToolAttributes.TOOL_JSON_SCHEMA}": json.dumps(definition),
                      **_messages(SpanAttributes.LLM_INPUT_MESSAGES, given), **_messages(SpanAttributes.LLM_OUTPUT_MESSAGES, [said])}
        with tracer.start_as_current_span("ChatCompletion", attributes=attributes):
            pass

    with tracer.start_as_current_span("invoice-desk") as root:
        system = {"role": "system", "content": "You answer invoice questions with lookup_invoice."}
        llm([system, question], asked)
        with tracer.start_as_current_span("lookup_invoice", attributes={
                KIND: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: "lookup_invoice",
                SpanAttributes.TOOL_DESCRIPTION: DESCRIPTION, SpanAttributes.TOOL_PARAMETERS: json.dumps(DECLARED),
                SpanAttributes.INPUT_VALUE: json.dumps(arguments),
                SpanAttributes.OUTPUT_VALUE: result}):
            pass
        llm([system, question, asked, {"role": "tool", "content": result}], {"role": "assistant", "content": answer})
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def _found(directory: Path, run: str) -> list[Any]:
    with agentotel.open(directory) as traces:
        return [f for f in findings(traces, run) if f.severity in ("warning", "error")]


def test_a_stale_definition_offered_for_a_tool_that_declares_its_schema_on_its_span_is_found(tmp_path):
    store = tmp_path / "store"
    found = _found(store, _run(store, STALE, 1))
    assert [(f.kind, f.index, f.layer) for f in found] == [("tools_offered_mismatch", 1, "tool")], format_findings(found)
    assert "region" in found[0].message


def test_the_definition_the_tool_declares_offered_as_it_is_is_no_finding(tmp_path):
    store = tmp_path / "store"
    found = _found(store, _run(store, DECLARED, 2))
    assert found == [], format_findings(found)
