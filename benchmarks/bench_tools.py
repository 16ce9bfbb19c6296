"""Tool overhead: `@agentotel.tool` against a hand-written span with the same attributes.

Both sides run inside one `agentotel.run()`, on a tracer provider with agentotel's attribution processor
and a span processor whose exporter drops spans (so export cost, equal for both, does not dilute the
difference). The hand-written side is what a careful user would write instead of the decorator:
`tracer.start_as_current_span("execute_tool add", attributes=...)` with the same static attributes, the
arguments and the result set as `json.dumps` strings. Ours additionally binds arguments by name,
applies the content policy (JSON-safe conversion, secret redaction, size limits) and checks for a
pending model tool call. Rows: a trivial function (the issue's target), a tool whose arguments
and result are a realistic ~1 KB of text (informational), a framework's tool call: the wrapper
`instrument()` puts around LangChain's `BaseTool.run` against the same call in a hand-written span, and a
multi-agent LangGraph graph's invoke (planner with its ToolNode, executor, verifier, on LangChain's fake chat
models: the framework's own work on both sides) under `instrument()` (a step per agent) against OpenInference's
LangChain instrumentation (a span per node, model and tool call), each patched in for its side's turn only.
"""

from __future__ import annotations

import json

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

from agentotel import _config, _tracing
from agentotel import semconv as sc
from agentotel.runs import AttributionProcessor, run as agent_run
from agentotel.tools import tool
from benchmarks.harness import Result, alternate

TARGET = 1.5


class _Drop(SpanExporter):
    def export(self, spans):  # noqa: ANN001
        return SpanExportResult.SUCCESS


def _add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


def _summarise(document: dict, style: str = "short") -> dict:
    """Summarise a document."""
    return {"title": document["title"], "summary": document["body"][:300], "style": style}


_DOCUMENT = {
    "title": "Incident 4711: checkout latency",
    "body": ("Latency on the checkout service rose after the deploy of build 812; the cache hit rate fell "
             "from 93% to 41% and the database connection pool saturated. ") * 5,
    "tags": ["checkout", "latency", "cache", "database"],
    "severity": 2,
}  # fmt: skip


def _hand_written(tracer, fn, name: str, description: str, schema_hash: str):  # noqa: ANN001, ANN202
    attributes = {
        sc.GEN_AI_OPERATION_NAME: "execute_tool",
        sc.GEN_AI_TOOL_NAME: name,
        sc.GEN_AI_TOOL_TYPE: "function",
        sc.AGENTOTEL_TOOL_SCHEMA_HASH: schema_hash,
        sc.GEN_AI_TOOL_DESCRIPTION: description,
    }
    span_name = f"execute_tool {name}"

    def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        with tracer.start_as_current_span(span_name, kind=SpanKind.INTERNAL, attributes=attributes) as span:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_ARGUMENTS, json.dumps({**dict(zip(("a", "b"), args)), **kwargs}))
            result = fn(*args, **kwargs)
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, json.dumps(result))
            return result

    return call


def _loop(fn, calls: int, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
    def body() -> None:
        for _ in range(calls):
            fn(*args, **kwargs)

    return body


def run(quick: bool) -> list[Result]:
    calls = 300 if quick else 2000
    repeats = 3 if quick else 11
    provider = TracerProvider()
    provider.add_span_processor(AttributionProcessor())
    provider.add_span_processor(SimpleSpanProcessor(_Drop()))
    _tracing.set_providers(provider)
    previous = _config.current()
    _config.configure(_config.Settings.resolve(capture_environment=False, capture_content=True))
    results: list[Result] = []
    try:
        tracer = provider.get_tracer("hand-written")
        cases = [
            ("trivial function", _add, (1,), {"b": 3}, TARGET),
            ("~1 KB arguments and result", _summarise, (_DOCUMENT,), {"style": "bullets"}, None),
        ]
        with agent_run("bench", user="bench", session="bench", trigger="test"):
            for label, fn, args, kwargs, target in cases:
                ours = tool(fn)
                info = ours.tool_info
                peer = _hand_written(tracer, fn, info.name, info.description or "", info.schema_hash)
                assert ours(*args, **kwargs) == peer(*args, **kwargs)
                ours_s, peer_s = alternate(_loop(ours, calls, *args, **kwargs), _loop(peer, calls, *args, **kwargs),
                                           repeats=repeats, warmup=1)  # fmt: skip
                ours_us = ours_s.scaled(1e6 / calls)
                peer_us = peer_s.scaled(1e6 / calls)
                ratio = ours_us.median / peer_us.median
                results.append(
                    Result(
                        benchmark=f"@tool overhead, {label}",
                        metric="time per call, capture on, inside run()",
                        unit="µs/call",
                        ours=round(ours_us.median, 2),
                        peer_name="hand-written start_as_current_span, same attributes (json.dumps payloads)",
                        peer=round(peer_us.median, 2),
                        target=f"<= {target}x the hand-written span" if target else None,
                        met=(ratio <= target) if target else None,
                        notes="ours adds argument binding, redaction, size limits and the tool-call-id check",
                        corpus=f"{calls} calls per repeat",
                        ours_spread=ours_us.spread,
                        peer_spread=peer_us.spread,
                        repeats=repeats,
                    )
                )
            results.append(_framework_row(tracer, calls, repeats))
            results.append(_graph_row(provider, max(calls // 20, 15), repeats))
    finally:
        _tracing.set_providers(None)
        _config.configure(previous)
        provider.shutdown()
    return results


def _framework_row(tracer, calls: int, repeats: int) -> Result:  # noqa: ANN001
    """A framework's tool call (LangChain `BaseTool.run`, the wrapper agentotel patches in) against the same
    call wrapped in a hand-written span; the framework's own work is left out of both (a stand-in body)."""
    try:
        from langchain_core.tools import StructuredTool

        from agentotel.integrations import langchain as integration
    except ImportError as exc:
        return Result(benchmark="framework tool call overhead (LangChain BaseTool.run)", metric="time per call",
                      unit="µs/call", ours=None, peer_name="hand-written span", peer=None, notes=f"not run: {exc}")
    framework_tool = StructuredTool.from_function(_add, name="add", description="Add two numbers.")
    definition = integration._definition(framework_tool)[1]
    tool_input = {"a": 1, "b": 3}

    def body(tool_input, **kwargs):  # noqa: ANN001, ANN003, ANN202 - what BaseTool.run would do
        return _add(**tool_input)

    def ours() -> None:
        integration._run(body, framework_tool, (tool_input,), {"tool_call_id": "call_1"})

    attributes = dict(definition.attributes)
    span_name = definition.span_name

    def peer() -> None:
        with tracer.start_as_current_span(span_name, kind=SpanKind.INTERNAL, attributes=attributes) as span:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_ARGUMENTS, json.dumps(tool_input))
            span.set_attribute(sc.GEN_AI_TOOL_CALL_ID, "call_1")
            result = body(tool_input, tool_call_id="call_1")
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, json.dumps(result))

    ours_s, peer_s = alternate(_loop(ours, calls), _loop(peer, calls), repeats=repeats, warmup=1)
    ours_us, peer_us = ours_s.scaled(1e6 / calls), peer_s.scaled(1e6 / calls)
    return Result(
        benchmark="framework tool call overhead (LangChain BaseTool.run, as patched by instrument())",
        metric="time per call, capture on, inside run()",
        unit="µs/call",
        ours=round(ours_us.median, 2),
        peer_name="the same call in a hand-written start_as_current_span (json.dumps payloads, call id)",
        peer=round(peer_us.median, 2),
        target=f"<= {TARGET}x the hand-written span",
        met=ours_us.median / peer_us.median <= TARGET,
        notes="ours: injected-argument filter, definition and schema hash (kept per tool), content policy, "
              "the tool message's content as result; the framework's own work left out of both sides",
        corpus=f"{calls} calls per repeat",
        ours_spread=ours_us.spread,
        peer_spread=peer_us.spread,
        repeats=repeats,
    )


def _graph_row(provider, calls: int, repeats: int) -> Result:  # noqa: ANN001
    name = "framework agent steps overhead (a LangGraph StateGraph of three agent nodes, as patched by instrument())"
    try:
        from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.tools import StructuredTool
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode
        from openinference.instrumentation.langchain import LangChainInstrumentor

        from agentotel.integrations import instrument_integrations, uninstrument_integrations
    except ImportError as exc:
        return Result(benchmark=name, metric="time per graph invoke", unit="µs/invoke", ours=None,
                      peer_name="OpenInference LangChain instrumentation", peer=None, notes=f"not run: {exc}")
    add = StructuredTool.from_function(_add, name="add", description="Add two numbers.")
    asks = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1"}])
    graph = StateGraph(MessagesState)
    for who, said in (("planner", [asks, AIMessage("1. add")]), ("executor", [AIMessage("done")]), ("verifier", [AIMessage("ok")])):
        model = FakeMessagesListChatModel(responses=said)  # cycles through its replies
        graph.add_node(who, lambda state, model=model: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("planner_tools", ToolNode([add]))
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", lambda state: "planner_tools" if state["messages"][-1].tool_calls else "executor")
    graph.add_edge("planner_tools", "planner")
    graph.add_edge("executor", "verifier")
    graph.add_edge("verifier", END)
    compiled = graph.compile()
    question = {"messages": [HumanMessage("go")]}
    peer_instrumentor = LangChainInstrumentor()

    def ours() -> None:
        instrument_integrations()
        try:
            for _ in range(calls):
                compiled.invoke(question)
        finally:
            uninstrument_integrations()

    def peer() -> None:
        peer_instrumentor.instrument(tracer_provider=provider)
        try:
            for _ in range(calls):
                compiled.invoke(question)
        finally:
            peer_instrumentor.uninstrument()

    ours_s, peer_s = alternate(ours, peer, repeats=repeats, warmup=1)
    ours_us, peer_us = ours_s.scaled(1e6 / calls), peer_s.scaled(1e6 / calls)
    return Result(
        benchmark=name,
        metric="time per graph invoke, capture on, inside run()",
        unit="µs/invoke",
        ours=round(ours_us.median, 1),
        peer_name="OpenInference LangChain instrumentation (a span per node, model and tool call)",
        peer=round(peer_us.median, 1),
        notes="ours: the graph's step, an agent step per agent node's turn (planner, executor, verifier), the tool "
              "step; no model span (fake models, no provider SDK); LangGraph's own work on both sides",
        corpus=f"{calls} invokes per repeat, 5 node tasks and 4 model calls each",
        ours_spread=ours_us.spread,
        peer_spread=peer_us.spread,
        repeats=repeats,
    )
