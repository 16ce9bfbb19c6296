"""Good/faulty twins of one order-support agent, run by a real framework under one instrumentation, in a fresh process.

    python twins_producer.py '{"store": DIR, "framework": "agents", "instrumentation": "agentotel", "faults": [...]}'

Frameworks: `openai` (a plain tool loop on the openai SDK), `agents` (the OpenAI Agents SDK: function tools, a
handoff from a triage agent), `langgraph` (create_react_agent + ChatOpenAI), `pydantic-ai`, `mcp` (a plain loop
whose tool runs on an MCP server, called through the mcp SDK's client). Instrumentations: `agentotel`
(`agentotel.instrument()`), or another project's, exported into the store through the in-process
ParquetSpanExporter and the store's dialect mapping: `openinference` (openai-agents / langchain / openai),
`openllmetry` (langchain / openai), `openai-v2`, `pydantic-ai` (its own OpenTelemetry instrumentation).
Each runs in its own process: these instrumentations patch the SDKs for good.

Every fault gets its own agent name (`orders-<fault>`) and three runs of the same task: two healthy ones
(the first is history for the second, a good run `check` must find nothing in) and the faulty twin. The
scripted model on 127.0.0.1 reads the conversation it is sent and decides as a model would; the fault is
injected by the model (a wrong decision), the tool (an error, an error returned as a result) or the harness
(history dropped, instructions edited, a turn limit). The manifest (`DIR/manifest.json`) names each run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

MODEL = "gpt-4o-mini"
ORDER = "A-1042"
QUESTION = f"Where is my order {ORDER} and when will it arrive?"
FOLLOW_UP = "And what did it cost?"
INSTRUCTIONS = "You are the order desk. Look orders up with get_order and answer with the status and arrival date."
EDITED = "You are the order desk. Answer from what you know; keep it short."  # the prompt fault: the lookup rule is gone

# The fault -> what the scripted model, the tool or the harness does differently in the faulty twin.
FAULTS = ("repeat", "tool_error", "ungrounded", "unknown_tool", "wrong_args", "invented_id", "bad_json", "prompt",
          "history", "empty", "rate_limit", "error_result", "max_turns")


class State:
    fault: str | None = None  # the fault of the run in progress (None: a healthy run)
    requests = 0  # model requests in this run
    instrumentation = "agentotel"
    framework = "openai"


# ---- the tool ------------------------------------------------------------------------------------------


def get_order(order_id: str) -> str:
    """An order's status, total and arrival date."""
    if State.fault == "tool_error":
        raise ConnectionError("orders service timed out after 30 s")
    if State.fault == "error_result":
        return json.dumps({"error": "401 Unauthorized: the orders API token has expired"})
    return json.dumps({"order_id": order_id, "status": "shipped", "total_eur": 59.9, "arrives": "2026-12-04",
                       "carrier": "DHL"})


# ---- the model ------------------------------------------------------------------------------------------


class RateLimited(Exception):
    pass


def reply(content: str | None, *calls: tuple[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:16]}", "type": "function", "function": {
            "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}} for name, arguments in calls]
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:10]}", "object": "chat.completion", "created": 1_780_000_000, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140}}


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def model(body: dict[str, Any]) -> dict[str, Any]:
    """What the order desk's model does with a request: look the order up, then answer from the result."""
    State.requests += 1
    messages = body.get("messages") or []
    offered = [t.get("function", {}).get("name") for t in body.get("tools") or ()]
    if "transfer_to_orders" in offered:  # the Agents SDK's triage agent: hand the customer over
        return reply(None, ("transfer_to_orders", {}))
    fault = State.fault
    if fault == "rate_limit" and State.requests >= 2:
        raise RateLimited("Rate limit reached for gpt-4o-mini: 3 requests per min")
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    handoffs = {c.get("id") for m in messages for c in m.get("tool_calls") or () if c.get("function", {}).get("name", "").startswith("transfer_to")}
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool" and m.get("tool_call_id") not in handoffs]
    found = []
    for r in results:
        try:
            value = json.loads(r)
        except ValueError:
            continue
        if isinstance(value, str):  # a framework that JSON-encodes the tool's text once more
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, dict) and "status" in value:
            found.append(value)
    mentioned = ORDER in " ".join(users)
    errors = [r for r in results if r and not any(json.dumps(f["order_id"]) in r or f["order_id"] in r for f in found)]
    asked_cost = bool(users) and "cost" in users[-1]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    if not mentioned:
        return reply("Which order do you mean? Please give me its number.")
    if not found and not results and "get_order" not in system and system:
        return reply("Your order is on its way and should arrive soon.")  # the edited prompt: no lookup
    if not results:  # the first decision
        if fault == "unknown_tool":
            return reply(None, ("track_parcel", {"order_id": ORDER}))
        if fault == "wrong_args":
            return reply(None, ("get_order", {"orderId": ORDER}))
        if fault == "bad_json":
            return reply(None, ("get_order", '{"order_id": "A-1042"'))
        if fault == "invented_id":
            return reply(None, ("get_order", {"order_id": "A-1024"}))
        return reply(None, ("get_order", {"order_id": ORDER}))
    if not found:
        if fault in ("tool_error", "error_result"):
            return reply(f"Order {ORDER} has shipped and is on its way to you.")  # the failure glossed over
        if len(results) >= 3:
            return reply(f"Sorry, I could not look order {ORDER} up.")
        return reply(None, ("get_order", {"order_id": ORDER}))  # corrected after the framework reported the error
    order = found[-1]
    if fault == "repeat" and len(found) < 3:
        return reply(None, ("get_order", {"order_id": order["order_id"]}))  # asks again for what it just read
    if asked_cost:
        return reply(f"Order {order['order_id']} cost EUR {order['total_eur']:.2f}.")
    if fault == "empty":
        return reply("")
    if fault == "ungrounded":
        return reply(f"Order {order['order_id']} has {order['status']} with {order['carrier']}, tracking number "
                     f"JJD000390007781; it arrives on {order['arrives']}.")
    return reply(f"Order {order['order_id']} has {order['status']} with {order['carrier']} and arrives on {order['arrives']}.")


def serve() -> str:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            status = 200
            try:
                answer = model(body)
                if body.get("stream"):
                    data = _stream(answer)
                else:
                    data = json.dumps(answer).encode()
            except RateLimited as exc:
                status, data = 429, json.dumps({"error": {"message": str(exc), "type": "rate_limit_exceeded"}}).encode()
            self.send_response(status)
            self.send_header("content-type", "text/event-stream" if body.get("stream") and status == 200 else "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _stream(answer: dict[str, Any]) -> bytes:
    choice = answer["choices"][0]
    message = choice["message"]
    base = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
              {**base, "choices": [], "usage": answer["usage"]}]
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


# ---- the agents ---------------------------------------------------------------------------------------------


def _instructions() -> str:
    return EDITED if State.fault == "prompt" else INSTRUCTIONS


def _turns() -> int:
    return 1 if State.fault == "max_turns" else 8


def _offered() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "get_order", "description": "An order's status, total and arrival date.",
                                              "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                             "required": ["order_id"], "additionalProperties": False}}}]


def plain_loop(url: str, call_tool: Callable[[str, dict[str, Any]], str]) -> Callable[[], str]:
    """An ordinary tool loop on the openai SDK: two user turns (the second one a follow-up about the same order)."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)

    def turn(messages: list[dict[str, Any]]) -> str:
        for _ in range(_turns()):
            message = client.chat.completions.create(model=MODEL, messages=messages, tools=_offered()).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                try:
                    arguments = json.loads(call.function.arguments)
                    result = call_tool(call.function.name, arguments)
                except Exception as exc:  # noqa: BLE001 - the loop shows the model the error, as most loops do
                    result = f"Error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError(f"max turns ({_turns()}) exceeded")

    def body() -> str:
        messages = [{"role": "system", "content": _instructions()}, {"role": "user", "content": QUESTION}]
        first = turn(messages)
        if not _second_turn():
            return first
        if State.fault == "history":  # the harness builds the follow-up's request from the new message only
            messages = [{"role": "system", "content": _instructions()}]
        return turn(messages + [{"role": "user", "content": FOLLOW_UP}])

    return body


def _second_turn() -> bool:
    return State.fault in ("history", "history-good")


def openai_agent(url: str) -> Callable[[], str]:
    tool = get_order
    if State.instrumentation == "agentotel":  # a user of agentotel marks the tool; other instrumentations see no tool
        import agentotel

        tool = agentotel.tool(get_order)

    def call(name: str, arguments: dict[str, Any]) -> str:
        if name != "get_order":
            raise KeyError(f"no tool named {name}")
        return tool(**arguments)
    return plain_loop(url, call)


def mcp_agent(url: str) -> Callable[[], str]:
    """The plain loop, its tool on an MCP server (in memory) called through the mcp SDK's client."""
    import anyio
    from mcp.client.client import Client
    from mcp.server.mcpserver.server import MCPServer

    server = MCPServer("orders")
    server.tool(name="get_order")(get_order)

    def call(name: str, arguments: dict[str, Any]) -> str:
        async def go() -> str:
            async with Client(server) as client:
                result = await client.call_tool(name, arguments)
            text = " ".join(getattr(c, "text", "") for c in result.content)
            if getattr(result, "is_error", None) or getattr(result, "isError", None):
                raise RuntimeError(text)
            return text
        return anyio.run(go)
    return plain_loop(url, call)


def agents_agent(url: str) -> Callable[[], str]:
    """The Agents SDK: a triage agent hands over to the order desk, whose function tool looks the order up."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

    def body() -> str:
        # A client per run: each asyncio.run has its own event loop.
        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0))
        tool = function_tool(get_order, name_override="get_order")
        desk = Agent(name="orders", instructions=_instructions(), tools=[tool], model=chat)
        triage = Agent(name="triage", instructions="Route the customer to the right desk.", handoffs=[desk], model=chat)
        async def conversation() -> str:
            result = await Runner.run(triage, QUESTION, max_turns=_turns() + 1)
            if not _second_turn():
                return str(result.final_output)
            kept = [] if State.fault == "history" else result.to_input_list()
            again = await Runner.run(result.last_agent, kept + [{"role": "user", "content": FOLLOW_UP}], max_turns=8)
            return str(again.final_output)
        return asyncio.run(conversation())
    return body


def langgraph_agent(url: str) -> Callable[[], str]:
    import warnings

    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    lc_tool = tool(get_order)
    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)

    def body() -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(llm, [lc_tool], prompt=_instructions())
        limit = {"recursion_limit": 2 * _turns()}
        out = graph.invoke({"messages": [("user", QUESTION)]}, limit)
        if not _second_turn():
            return str(out["messages"][-1].content)
        kept = [] if State.fault == "history" else out["messages"]
        again = graph.invoke({"messages": [*kept, ("user", FOLLOW_UP)]}, limit)
        return str(again["messages"][-1].content)
    return body


def pydantic_ai_agent(url: str) -> Callable[[], str]:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=url, api_key="sk-test"))

    def body() -> str:
        agent = Agent(chat, name="orders", instructions=_instructions(), retries=2)
        agent.tool_plain(get_order)
        limits = UsageLimits(request_limit=_turns())
        first = agent.run_sync(QUESTION, usage_limits=limits)
        if not _second_turn():
            return str(first.output)
        kept = None if State.fault == "history" else first.all_messages()
        return str(agent.run_sync(FOLLOW_UP, usage_limits=limits, message_history=kept).output)
    return body


AGENTS = {"openai": openai_agent, "mcp": mcp_agent, "agents": agents_agent, "langgraph": langgraph_agent,
          "pydantic-ai": pydantic_ai_agent}


# ---- instrumentation ------------------------------------------------------------------------------------


def instrument(framework: str, name: str, store: str) -> Any:
    """The tracer provider the runs are recorded with (agentotel's own, or a plain SDK one exporting to the store)."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource

    if name == "agentotel":
        import agentotel

        agentotel.instrument(directory=store, service_name="orders")
        return trace.get_tracer_provider()
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agentotel.store import ParquetSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "orders"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(store)))
    trace.set_tracer_provider(provider)
    if name == "openinference":
        if framework == "agents":
            import agents

            agents.set_trace_processors([])
            from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor as Instrumentor
        elif framework == "langgraph":
            from openinference.instrumentation.langchain import LangChainInstrumentor as Instrumentor
        else:
            from openinference.instrumentation.openai import OpenAIInstrumentor as Instrumentor
    elif name == "openllmetry":
        if framework == "langgraph":
            from opentelemetry.instrumentation.langchain import LangchainInstrumentor as Instrumentor
        else:
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Instrumentor
    elif name == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Instrumentor
    elif name == "pydantic-ai":
        from pydantic_ai import Agent
        from pydantic_ai.models.instrumented import InstrumentationSettings

        Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
        return provider
    else:
        raise SystemExit(f"unknown instrumentation {name}")
    Instrumentor().instrument(tracer_provider=provider)
    return provider


def record(instrumentation: str, provider: Any, agent: str, body: Callable[[], str]) -> str:
    """One run: agentotel.run() under agentotel, else a root span of the app's own tracer. Returns its run or trace id."""
    if instrumentation == "agentotel":
        import agentotel

        try:
            with agentotel.run(agent, task=QUESTION) as run:
                run.output = body()
        except Exception:  # noqa: BLE001 - the run records the exception and fails
            pass
        return run.id
    if State.framework == "agents" and instrumentation == "openinference":
        # OpenInference turns the Agents SDK's own trace into the OTel trace: name it, and find it by name.
        from agents import trace

        try:
            with trace(agent):
                body()
        except Exception:  # noqa: BLE001 - the trace records the failure
            pass
        return f"name:{agent}"
    tracer = provider.get_tracer("orders-app")
    span_id = None
    try:
        with tracer.start_as_current_span(agent) as span:
            span_id = format(span.get_span_context().trace_id, "032x")
            body()
    except Exception:  # noqa: BLE001 - the root span records the exception and fails
        pass
    return str(span_id)


def main(options: dict[str, Any]) -> None:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    if options["instrumentation"] != "openinference":  # OpenInference reads the Agents SDK's own tracing
        os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    if options["instrumentation"] == "openai-v2":  # its message content is on the span only under the latest conventions
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
    framework, instrumentation, store = options["framework"], options["instrumentation"], options["store"]
    url = serve()
    State.instrumentation, State.framework = instrumentation, framework
    provider = instrument(framework, instrumentation, store)
    if framework == "agents" and instrumentation != "openinference":
        from agents import set_tracing_disabled

        set_tracing_disabled(True)
    body = AGENTS[framework](url)
    manifest = []
    for fault in options["faults"]:
        for role in ("good1", "good2", "faulty"):
            State.fault, State.requests = (fault if role == "faulty" else None), 0
            if role != "faulty" and fault == "history":
                State.fault = "history-good"
            manifest.append({"fault": fault, "role": role, "run": record(instrumentation, provider, f"orders-{fault}", body)})
    State.fault = None
    if instrumentation == "agentotel":
        import agentotel

        agentotel.shutdown()
    else:
        provider.shutdown()
    with open(os.path.join(store, "manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
