"""The tools another instrumentation says a model call was offered become `gen_ai.tool.definitions`.

OpenInference writes them as `llm.tools.N.tool.json_schema` (each the provider's own form: OpenAI's chat
tool, the Responses API's flat tool, Anthropic's `input_schema`), older OpenLLMetry as
`llm.request.functions.N.*`, the Vercel AI SDK as `ai.prompt.tools` (test_dialects' Node agent). The store
adds the GenAI attribute beside the span's own, so `check` knows what the model was given (an unknown
tool, arguments its schema rejects) on such runs, and a plain glob over the files reads it too. The spans
are built by hand with the attribute names the peers publish (their semantic-conventions packages), in a
billing agent's shape, and reach the store through the real OTel SDK: the in-process exporter, and an
agentotel-collector over OTLP/HTTP.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import duckdb
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes, ToolAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.semconv_ai import SpanAttributes as TL
from opentelemetry.trace import SpanKind

import agentotel
from agentotel import semconv
from agentotel.store import ParquetSpanExporter

ROOT = Path(__file__).parent.parent.parent
TOOLS = f"{SpanAttributes.LLM_TOOLS}."
INVOICE_SCHEMA = {"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"],
                  "additionalProperties": False}
REFUND_SCHEMA = {"type": "object", "properties": {"invoice_id": {"type": "string"}, "amount_cents": {"type": "integer"}},
                 "required": ["invoice_id", "amount_cents"]}


def _offered() -> dict[str, Any]:
    """Two tools as OpenInference records them: Anthropic's form, and the Responses API's with its name beside it."""
    return {
        f"{TOOLS}0.{ToolAttributes.TOOL_JSON_SCHEMA}": json.dumps(
            {"name": "lookup_invoice", "description": "An invoice by id.", "input_schema": INVOICE_SCHEMA}),
        f"{TOOLS}1.{ToolAttributes.TOOL_JSON_SCHEMA}": json.dumps(
            {"type": "function", "name": "issue_refund", "parameters": REFUND_SCHEMA, "strict": False}),
        f"{TOOLS}1.{ToolAttributes.TOOL_DESCRIPTION}": "Refund part of an invoice.",
    }


def _message(prefix: str, role: str, text: str = "", calls: list[tuple[str, dict[str, Any]]] = (), answers: str = "") -> dict[str, Any]:
    """One OpenInference message, flattened under `prefix` (`llm.input_messages.N.message.`)."""
    attributes: dict[str, Any] = {prefix + "role": role}
    if text:
        attributes[prefix + "content"] = text
    if answers:
        attributes[prefix + "tool_call_id"] = answers
    for i, (name, arguments) in enumerate(calls):
        attributes[f"{prefix}tool_calls.{i}.tool_call.id"] = f"toolu_{i}"
        attributes[f"{prefix}tool_calls.{i}.tool_call.function.name"] = name
        attributes[f"{prefix}tool_calls.{i}.tool_call.function.arguments"] = json.dumps(arguments)
    return attributes


def _llm(turn: int, messages: list[dict[str, Any]], said: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.LLM.value,
        SpanAttributes.LLM_PROVIDER: "anthropic", SpanAttributes.LLM_MODEL_NAME: "claude-sonnet-4-5",
        SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 300 + turn, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 20, **_offered(),
    }
    for i, message in enumerate(messages):
        attributes.update({f"{SpanAttributes.LLM_INPUT_MESSAGES}.{i}.message.{k}": v for k, v in message.items()})
    attributes.update({f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.message.{k}": v for k, v in said.items()})
    return attributes


def _billing_run(provider: TracerProvider, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """One run of a billing agent (a CHAIN root): the model asks for `calls`, then answers."""
    tracer = provider.get_tracer("billing-app")
    conversation = [_message("", "system", "You are the billing desk. Use lookup_invoice and issue_refund."),
                    _message("", "user", "Please refund 5 euros on invoice INV-7731.")]
    asked = _message("", "assistant", calls=calls)
    result = _message("", "tool", '{"invoice_id": "INV-7731", "status": "refunded", "amount_cents": 500}', answers="toolu_0")
    chain = {SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.CHAIN.value}
    with tracer.start_as_current_span("billing-bot", attributes=chain):
        with tracer.start_as_current_span("Messages", kind=SpanKind.CLIENT, attributes=_llm(0, conversation, asked)):
            pass
        with tracer.start_as_current_span("Messages", kind=SpanKind.CLIENT, attributes=_llm(
                1, [*conversation, asked, result], _message("", "assistant", "Invoice INV-7731: 500 cents refunded."))):
            pass


def _definitions(directory: Path) -> list[list[dict[str, Any]]]:
    """`gen_ai.tool.definitions` of every model call, read with a plain glob over the files."""
    rows = duckdb.sql(f"SELECT attributes['{semconv.GEN_AI_TOOL_DEFINITIONS}'] FROM '{directory}/spans/**/*.parquet' "
                      "WHERE operation = 'chat' ORDER BY start_time").fetchall()
    return [json.loads(r[0]) for r in rows]


def test_openinference_tools_offered_are_stored_in_the_genai_form_beside_their_own(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    provider = TracerProvider(resource=Resource.create({"service.name": "billing"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
    _billing_run(provider, [("lookup_invoice", {"invoice_id": "INV-7731"})])
    provider.shutdown()

    expected = [{"type": "function", "name": "lookup_invoice", "description": "An invoice by id.", "parameters": INVOICE_SCHEMA},
                {"type": "function", "name": "issue_refund", "description": "Refund part of an invoice.", "parameters": REFUND_SCHEMA}]
    assert _definitions(directory) == [expected, expected]
    # The span's own attributes stay as they came.
    own = duckdb.sql(f"SELECT attributes['{TOOLS}1.{ToolAttributes.TOOL_DESCRIPTION}'] FROM '{directory}/spans/**/*.parquet' "
                     "WHERE operation = 'chat' LIMIT 1").fetchall()[0][0]
    assert own == "Refund part of an invoice."


def test_check_finds_an_unknown_tool_and_rejected_arguments_on_runs_sent_through_the_collector(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "collector"))
    from agentotel_collector import Collector
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    directory = tmp_path / "store"
    collector = Collector(dir=directory, http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
    try:
        host, port = collector.http_address
        provider = TracerProvider(resource=Resource.create({"service.name": "billing"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"http://{host}:{port}/v1/traces")))
        _billing_run(provider, [("lookup_invoice", {"invoice_id": "INV-7731"})])  # healthy
        _billing_run(provider, [("void_invoice", {"invoice_id": "INV-7731"})])  # a tool it was not given
        _billing_run(provider, [("issue_refund", {"invoice_id": "INV-7731", "amount": "5"})])  # not its parameters
        provider.shutdown()
    finally:
        collector.stop()

    with agentotel.open(directory) as traces:
        runs = [r[0] for r in traces.sql("SELECT run_id FROM runs ORDER BY start_time").fetchall()]
        assert len(runs) == 3
        healthy, unknown, wrong = ([(f.kind, f.index, f.layer) for f in traces.findings(run)
                                    if f.severity in ("warning", "error")] for run in runs)
        asking = [s.index for s in traces.trajectory(runs[1]).steps if s.type == "llm"][0]
    assert healthy == []
    assert ("unknown_tool", asking, "tool") in unknown
    assert ("wrong_arguments", asking, "tool") in wrong


def test_older_openllmetry_functions_are_tool_definitions(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    provider = TracerProvider(resource=Resource.create({"service.name": "billing"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
    functions = f"{TL.LLM_REQUEST_FUNCTIONS}.0."
    attributes = {TL.LLM_SYSTEM: "openai", TL.LLM_REQUEST_TYPE: "chat", TL.LLM_REQUEST_MODEL: "gpt-4o-mini",
                  TL.LLM_USAGE_PROMPT_TOKENS: 40, TL.LLM_USAGE_COMPLETION_TOKENS: 5,
                  functions + "name": "lookup_invoice", functions + "description": "An invoice by id.",
                  functions + "parameters": json.dumps(INVOICE_SCHEMA)}
    with provider.get_tracer("legacy").start_as_current_span("openai.chat", kind=SpanKind.CLIENT, attributes=attributes):
        pass
    provider.shutdown()
    assert _definitions(directory) == [[{"type": "function", "name": "lookup_invoice", "description": "An invoice by id.",
                                         "parameters": INVOICE_SCHEMA}]]
