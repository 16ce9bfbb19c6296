"""An agent instrumented by other instrumentations (and optionally agentotel), run in its own process.

    python producer.py '{"store": DIR, "instrumentations": ["openinference-openai"], "flow": "openai",
                         "agentotel": false, "run": false, "otlp": null}'

The real openai SDK (directly, or through langchain-openai) talks to a scripted model server on
127.0.0.1: a model call that asks for `get_weather`, the tool, a second model call that answers. The
spans go into the store in DIR (in-process ParquetSpanExporter, or agentotel's own set-up), or to an
OTLP/HTTP endpoint (`otlp`: an agentotel-collector). Each scenario runs in a fresh process because
these instrumentations patch the openai and langchain modules for good.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "gpt-4o-mini"
REPLIES = [
    {"id": "chatcmpl-dialects-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
         {"id": "call_weather_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
     "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}},
    {"id": "chatcmpl-dialects-2", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
     "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sunny in Paris."}}],
     "usage": {"prompt_tokens": 70, "completion_tokens": 5, "total_tokens": 75}},
]


# The same run through the anthropic and google-genai SDKs: a model call asking for get_weather (one call, or
# two in parallel: Paris and Oslo), the tool, a second model call answering. Gemini's calls carry no id.
CITIES = {False: ["Paris"], True: ["Paris", "Oslo"]}


def anthropic_replies(parallel: bool) -> list[dict]:
    calls = [{"type": "tool_use", "id": f"toolu_weather_{i + 1}", "name": "get_weather", "input": {"city": c}}
             for i, c in enumerate(CITIES[parallel])]
    common = {"type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514", "stop_sequence": None}
    return [{**common, "id": "msg_dialects_1", "content": calls, "stop_reason": "tool_use",
             "usage": {"input_tokens": 50, "output_tokens": 10}},
            {**common, "id": "msg_dialects_2", "content": [{"type": "text", "text": "Sunny in Paris."}],
             "stop_reason": "end_turn", "usage": {"input_tokens": 70, "output_tokens": 5}}]


def gemini_replies(parallel: bool) -> list[dict]:
    def reply(parts: list[dict], n: int, tokens: tuple[int, int]) -> dict:
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "modelVersion": "gemini-2.0-flash-001", "responseId": f"resp-dialects-{n}",
                "usageMetadata": {"promptTokenCount": tokens[0], "candidatesTokenCount": tokens[1],
                                  "totalTokenCount": sum(tokens)}}

    calls = [{"functionCall": {"name": "get_weather", "args": {"city": c}}} for c in CITIES[parallel]]
    return [reply(calls, 1, (50, 10)), reply([{"text": "Sunny in Paris."}], 2, (70, 5))]


def openai_replies(parallel: bool) -> list[dict]:
    replies = json.loads(json.dumps(REPLIES))
    if parallel:
        calls = replies[0]["choices"][0]["message"]["tool_calls"]
        calls.append({"id": "call_weather_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}})
    return replies


def chunks(reply: dict) -> bytes:
    """A chat completion as the server-sent events of its stream: the message in one delta, then usage."""
    choice = reply["choices"][0]
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    for i, call in enumerate(delta.get("tool_calls", ())):
        call["index"] = i
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    events = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
              {**base, "choices": [], "usage": reply["usage"]}]
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def handoff_replies(parallel: bool) -> list[dict]:
    """A triage agent handing off to the weather agent (a transfer_to_weather call), then the usual two calls."""
    handoff = json.loads(json.dumps(REPLIES[0]))
    handoff["id"] = "chatcmpl-dialects-0"
    handoff["choices"][0]["message"]["tool_calls"] = [
        {"id": "call_handoff_1", "type": "function", "function": {"name": "transfer_to_weather", "arguments": "{}"}}]
    handoff["usage"] = {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
    return [handoff, *openai_replies(parallel)]


def bedrock_replies(parallel: bool) -> list[dict]:
    calls = [{"toolUse": {"toolUseId": f"tooluse_weather_{i + 1}", "name": "get_weather", "input": {"city": c}}}
             for i, c in enumerate(CITIES[parallel])]
    return [{"output": {"message": {"role": "assistant", "content": calls}}, "stopReason": "tool_use",
             "usage": {"inputTokens": 50, "outputTokens": 10, "totalTokens": 60}, "metrics": {"latencyMs": 1}},
            {"output": {"message": {"role": "assistant", "content": [{"text": "Sunny in Paris."}]}}, "stopReason": "end_turn",
             "usage": {"inputTokens": 70, "outputTokens": 5, "totalTokens": 75}, "metrics": {"latencyMs": 1}}]


def serve(flow: str = "openai", parallel: bool = False, runs: int = 1) -> str:
    replies = {"anthropic-tools": anthropic_replies, "gemini": gemini_replies, "adk": gemini_replies, "agents-handoff": handoff_replies,
               "bedrock": bedrock_replies}.get(flow, openai_replies)(parallel) * runs

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            request = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path.endswith("/messages") and flow == "anthropic":  # the anthropic SDK, one call
                reply = {"id": "msg_dialects_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                         "content": [{"type": "text", "text": "Sunny in Paris."}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 10}}
            else:
                reply = replies.pop(0) if replies else {"error": {"message": "no reply"}}
            stream = "choices" in reply and b'"stream":true' in request.replace(b" ", b"")
            body = chunks(reply) if stream else json.dumps(reply).encode()
            self.send_response(200 if body[:8] != b'{"error"' else 500)
            self.send_header("content-type", "text/event-stream" if stream else "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def instrument(names: list[str], provider: object) -> None:
    for name in names:
        if name == "openinference-openai":
            from openinference.instrumentation.openai import OpenAIInstrumentor
        elif name == "openinference-langchain":
            from openinference.instrumentation.langchain import LangChainInstrumentor as OpenAIInstrumentor
        elif name == "openllmetry-openai":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        elif name == "openllmetry-langchain":
            from opentelemetry.instrumentation.langchain import LangchainInstrumentor as OpenAIInstrumentor
        elif name == "openinference-openai-agents":
            import agents

            agents.set_trace_processors([])  # not the SDK's own exporter to OpenAI's servers: only OpenInference's
            from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OpenAIInstrumentor
        elif name == "openai-v2":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        elif name == "openinference-anthropic":
            from openinference.instrumentation.anthropic import AnthropicInstrumentor as OpenAIInstrumentor
        elif name == "openllmetry-anthropic":
            from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor as OpenAIInstrumentor
        elif name == "openinference-google-genai":
            from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor as OpenAIInstrumentor
        elif name == "openllmetry-google-genai":
            from opentelemetry.instrumentation.google_generativeai import GoogleGenerativeAiInstrumentor as OpenAIInstrumentor
        elif name == "contrib-botocore":
            from opentelemetry.instrumentation.botocore import BotocoreInstrumentor as OpenAIInstrumentor
        elif name == "contrib-google-genai":
            from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor as OpenAIInstrumentor
        elif name == "openinference-llama-index":
            from openinference.instrumentation.llama_index import LlamaIndexInstrumentor as OpenAIInstrumentor
        elif name == "openinference-crewai":
            from openinference.instrumentation.crewai import CrewAIInstrumentor as OpenAIInstrumentor
        elif name == "langfuse":  # the client's own processor exports nowhere: the store's exporter gets the spans
            from langfuse import Langfuse
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

            Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", host="http://127.0.0.1:9", tracer_provider=provider,
                     span_exporter=InMemorySpanExporter())
            continue
        elif name.startswith("openlit-"):  # openlit-openai, openlit-openai-agents: only those of its instrumentors
            import openlit
            from openlit._instrumentors import MODULE_NAME_MAP

            wanted = name.removeprefix("openlit-").split("+")
            openlit.init(disabled_instrumentors=[n for n in MODULE_NAME_MAP if n not in wanted], disable_metrics=True,
                         disable_events=True, capture_message_content=True,
                         pricing_json=os.environ.get("OPENLIT_PRICING_JSON"))
            continue
        else:
            raise SystemExit(f"unknown instrumentation {name}")
        # skip_dep_check: the contrib google-genai instrumentation declares google-genai < 3, and patches 3.x alike
        OpenAIInstrumentor().instrument(tracer_provider=provider, skip_dep_check=name == "contrib-google-genai")


class OtlpFiles:
    """Writes each export as the OpenTelemetry Collector's file exporter does (OTLP/JSON, one request a
    line, ids in hex) to <prefix>.jsonl, and as OTLP protobuf (one request) to <prefix>-N.pb."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.count = prefix, 0

    def export(self, spans):
        import base64

        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        request = encode_spans(spans)
        self.count += 1
        with open(f"{self.prefix}-{self.count}.pb", "wb") as f:
            f.write(request.SerializeToString())
        document = json_format.MessageToDict(request)
        for resource in document.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
        with open(f"{self.prefix}.jsonl", "a") as f:
            f.write(json.dumps(document) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis=30000):
        return True


def weather(city: str) -> str:
    return f"sunny in {city}"


def openai_flow(url: str, tool, client=None) -> None:
    import openai

    client = client or openai.OpenAI(base_url=url, api_key="test-key")
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
                                               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    result = tool(**json.loads(call.function.arguments))
    messages += [first.choices[0].message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": result}]
    client.chat.completions.create(model=MODEL, messages=messages, tools=tools)


def langchain_flow(url: str, retrieve: bool = False, fail: bool = False) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    if retrieve:  # a retriever first: the forecast documents the agent reads
        from langchain_core.documents import Document
        from langchain_core.retrievers import BaseRetriever

        class Forecasts(BaseRetriever):
            def _get_relevant_documents(self, query, *, run_manager):
                return [Document(page_content="Paris: sunny, 24C", metadata={"source": "forecast-1"})]

        Forecasts().invoke("Paris weather")

    @tool
    def get_weather(city: str) -> str:
        """Weather in a city."""
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    model = ChatOpenAI(model=MODEL, base_url=url, api_key="test-key").bind_tools([get_weather])
    messages = [("user", "What is the weather in Paris?")]
    first = model.invoke(messages)
    try:
        result = get_weather.invoke(first.tool_calls[0])
    except RuntimeError as error:  # the loop hands the model the error, and the model answers past it
        from langchain_core.messages import ToolMessage

        result = ToolMessage(content=f"error: {error}", tool_call_id=first.tool_calls[0]["id"])
    model.invoke(messages + [first, result])


def pydantic_ai_flow(url: str, provider: object) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=url, api_key="test-key")), name="weather")
    agent.tool_plain(weather, name="get_weather")
    agent.run_sync("What is the weather in Paris?")


def agents_flow(url: str) -> None:
    """The OpenAI Agents SDK (chat completions model) running the same two turns around its function tool."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

    @function_tool(name_override="get_weather")
    def get_weather(city: str) -> str:
        """Weather in a city."""
        return weather(city)

    model = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=url, api_key="test-key"))
    Runner.run_sync(Agent(name="weather", model=model, tools=[get_weather]), "What is the weather in Paris?")


def anthropic_flow(url: str) -> None:
    """One call through the anthropic SDK, whose own tracing records it too (scope com.anthropic.sdk.python)."""
    import anthropic

    client = anthropic.Anthropic(api_key="test-key", base_url=url.removesuffix("/v1"))
    client.messages.create(model="claude-sonnet-4-20250514", max_tokens=100,
                           messages=[{"role": "user", "content": "What is the weather in Paris?"}])


def agents_handoff_flow(url: str) -> None:
    """The Agents SDK: a triage agent hands the question off to the weather agent, which calls its tool."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

    @function_tool(name_override="get_weather")
    def get_weather(city: str) -> str:
        """Weather in a city."""
        return weather(city)

    model = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=url, api_key="test-key"))
    forecaster = Agent(name="weather", model=model, tools=[get_weather], handoff_description="Answers weather questions.")
    Runner.run_sync(Agent(name="triage", model=model, handoffs=[forecaster]), "What is the weather in Paris?")


def bedrock_flow(url: str, tool, parallel: bool) -> None:
    """Two Bedrock Converse calls (botocore) around the tool."""
    import boto3

    client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url.removesuffix("/v1"),
                          aws_access_key_id="test", aws_secret_access_key="test")
    model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    config = {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather in a city.",
                                      "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}}]}
    question = "What is the weather in Paris and Oslo?" if parallel else "What is the weather in Paris?"
    messages = [{"role": "user", "content": [{"text": question}]}]
    first = client.converse(modelId=model, messages=messages, toolConfig=config)["output"]["message"]
    uses = [block["toolUse"] for block in first["content"] if "toolUse" in block]
    results = [{"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": tool(**use["input"])}]}} for use in uses]
    messages += [first, {"role": "user", "content": results}]
    client.converse(modelId=model, messages=messages, toolConfig=config)


def anthropic_tools_flow(url: str, tool, parallel: bool) -> None:
    """Two anthropic calls around the tool (run once per tool_use block), as a tool loop makes them."""
    import anthropic

    client = anthropic.Anthropic(api_key="test-key", base_url=url.removesuffix("/v1"))
    tools = [{"name": "get_weather", "description": "Weather in a city.",
              "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    question = "What is the weather in Paris and Oslo?" if parallel else "What is the weather in Paris?"
    messages: list = [{"role": "user", "content": question}]
    first = client.messages.create(model="claude-sonnet-4-20250514", max_tokens=100, messages=messages, tools=tools)
    uses = [block for block in first.content if block.type == "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": use.id, "content": tool(**use.input)} for use in uses]
    messages += [{"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
                 {"role": "user", "content": results}]
    client.messages.create(model="claude-sonnet-4-20250514", max_tokens=100, messages=messages, tools=tools)


def gemini_flow(url: str, tool, parallel: bool) -> None:
    """Two google-genai calls around the tool; Gemini's function calls and the app's responses carry no id."""
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="test-key", http_options={"base_url": url.removesuffix("/v1")})
    config = {"tools": [{"function_declarations": [{"name": "get_weather", "description": "Weather in a city.",
              "parameters_json_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}]}
    question = "What is the weather in Paris and Oslo?" if parallel else "What is the weather in Paris?"
    history = [types.Content(role="user", parts=[types.Part(text=question)])]
    first = client.models.generate_content(model="gemini-2.0-flash", contents=history, config=config)
    responses = [types.Part(function_response=types.FunctionResponse(name=call.name, response={"output": tool(**call.args)}))
                 for call in first.function_calls]
    history += [first.candidates[0].content, types.Content(role="user", parts=responses)]
    client.models.generate_content(model="gemini-2.0-flash", contents=history, config=config)


def mcp_flow() -> None:
    """A tool called over MCP (the mcp SDK's client and server, in memory): both sides trace the call."""
    import anyio
    from mcp.client.client import Client
    from mcp.server.mcpserver.server import MCPServer

    server = MCPServer("weather")
    server.tool(name="get_weather")(weather)

    async def call() -> None:
        async with Client(server) as client:
            await client.call_tool("get_weather", {"city": "Paris"})

    anyio.run(call)


def langfuse_flow(url: str, fail: bool) -> None:
    """The openai SDK through Langfuse's wrapper (GENERATION observations) and a tool under its @observe (TOOL),
    inside an @observe'd function (the trace) with a user and session; `fail`: the tool raises, and the agent goes on past its error."""
    from langfuse import get_client, observe, propagate_attributes
    from langfuse.openai import openai

    @observe(name="get_weather", as_type="tool")
    def get_weather(city: str) -> str:
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    @observe(name="weather-agent")
    def agent() -> str:
        with propagate_attributes(user_id="alice", session_id="s-1"):
            def tool(**arguments):
                try:
                    return get_weather(**arguments)
                except RuntimeError as error:
                    return f"error: {error}"
            client = openai.OpenAI(base_url=url, api_key="test-key")
            openai_flow(url, tool, client)
            return "Sunny in Paris."

    agent()
    get_client().flush()


def mlflow_flow(url: str, fail: bool) -> None:
    """The openai SDK under MLflow's autolog (its LLM spans) and a tool under @mlflow.trace (TOOL), in a traced
    function (the trace's root) that names the run's user and session (MLflow's trace metadata); `fail` as in langfuse_flow."""
    import mlflow

    mlflow.openai.autolog()

    @mlflow.trace(name="get_weather", span_type="TOOL")
    def get_weather(city: str) -> str:
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    @mlflow.trace(name="weather-agent", span_type="AGENT")
    def agent(question: str) -> str:
        mlflow.update_current_trace(metadata={"mlflow.trace.user": "alice", "mlflow.trace.session": "s-1"})

        def tool(**arguments):
            try:
                return get_weather(**arguments)
            except RuntimeError as error:
                return f"error: {error}"
        openai_flow(url, tool)
        return "Sunny in Paris."

    agent("What is the weather in Paris?")


def strands_flow(url: str, fail: bool) -> None:
    """Strands Agents (its OpenAI model provider, streaming) running the two turns around its @tool; `fail`: the
    tool raises, Strands hands the model its error, and the model answers past it."""
    from strands import Agent
    from strands import tool as strands_tool
    from strands.models.openai import OpenAIModel

    @strands_tool(name="get_weather")
    def get_weather(city: str) -> str:
        """Weather in a city."""
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    model = OpenAIModel(client_args={"base_url": url, "api_key": "test-key"}, model_id=MODEL)
    agent = Agent(model=model, tools=[get_weather], name="weather", system_prompt="Answer briefly.", callback_handler=None)
    agent("What is the weather in Paris?")


def agent_framework_flow(url: str) -> None:
    """Microsoft Agent Framework (its chat completions client) running the two turns around its function tool."""
    import asyncio

    from agent_framework import Agent, tool as af_tool
    from agent_framework.observability import enable_instrumentation
    from agent_framework.openai import OpenAIChatCompletionClient

    enable_instrumentation(enable_sensitive_data=True)

    @af_tool(name="get_weather", description="Weather in a city.")
    def get_weather(city: str) -> str:
        return weather(city)

    client = OpenAIChatCompletionClient(MODEL, api_key="test-key", base_url=url)
    agent = Agent(client=client, name="weather", instructions="Answer briefly.", tools=[get_weather])

    async def run() -> None:  # the workflow needs a running loop from its start
        await agent.run("What is the weather in Paris?")

    asyncio.run(run())


def litellm_flow(url: str, tool, provider: object, fail: bool) -> None:
    """LiteLLM's OpenTelemetry callback around two litellm.completion calls (the openai provider) and the tool;
    `fail`: the tool raises and the app hands the model its error."""
    import time

    import litellm
    from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig

    if not any(isinstance(c, OpenTelemetry) for c in litellm.callbacks):  # its default: the messages on the span
        litellm.callbacks = [OpenTelemetry(OpenTelemetryConfig(capture_message_content="SPAN_ONLY"), tracer_provider=provider)]
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
                                               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = litellm.completion(model=f"openai/{MODEL}", api_base=url, api_key="test-key", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    try:
        if fail:
            raise RuntimeError("weather service unavailable for Paris")
        result = tool(**json.loads(call.function.arguments))
    except RuntimeError as error:
        result = f"error: {error}"
    messages += [first.choices[0].message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": result}]
    litellm.completion(model=f"openai/{MODEL}", api_base=url, api_key="test-key", messages=messages, tools=tools)
    time.sleep(0.5)  # its success callbacks (which write the spans) run on a worker thread after the call


def llama_index_flow(url: str, retrieve: bool, fail: bool) -> None:
    """LlamaIndex's FunctionAgent (its OpenAI LLM, streaming) around a function tool; `retrieve`: a retriever first
    (the forecast documents); `fail`: the tool raises, the agent hands the model its error."""
    import asyncio

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    if retrieve:
        from llama_index.core.retrievers import BaseRetriever
        from llama_index.core.schema import NodeWithScore, TextNode

        class Forecasts(BaseRetriever):
            def _retrieve(self, query_bundle):
                return [NodeWithScore(node=TextNode(text="Paris: sunny, 24C", id_="forecast-1"), score=0.9)]

        Forecasts().retrieve("Paris weather")

    def get_weather(city: str) -> str:
        """Weather in a city."""
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    agent = FunctionAgent(name="weather", tools=[FunctionTool.from_defaults(get_weather)], system_prompt="Answer briefly.",
                          llm=OpenAI(model=MODEL, api_base=url, api_key="test-key"))

    async def run() -> None:  # the workflow needs a running loop from its start
        await agent.run("What is the weather in Paris?")

    asyncio.run(run())


def semantic_kernel_flow(url: str, fail: bool) -> None:
    """Semantic Kernel's ChatCompletionAgent (its OpenAI connector) around a kernel function, with its GenAI
    diagnostics on (sensitive: the messages too); `fail`: the function raises, the kernel hands the model its error."""
    import asyncio

    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    import openai
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    class Weather:
        @kernel_function(name="get_weather", description="Weather in a city.")
        def get_weather(self, city: str) -> str:
            if fail:
                raise RuntimeError(f"weather service unavailable for {city}")
            return weather(city)

    service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=openai.AsyncOpenAI(base_url=url, api_key="test-key"))
    agent = ChatCompletionAgent(service=service, name="weather", instructions="Answer briefly.", plugins=[Weather()])

    async def run() -> None:
        await agent.get_response(messages="What is the weather in Paris?")

    asyncio.run(run())


def crewai_flow(url: str, fail: bool) -> None:
    """A CrewAI crew of one agent (CrewAI's OpenAI LLM) and one task around a tool; `fail`: the tool raises."""
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # CrewAI's own usage reporting: off (no network)
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool as crew_tool

    @crew_tool("get_weather")
    def get_weather(city: str) -> str:
        """Weather in a city."""
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    agent = Agent(role="Weather reporter", goal="Answer weather questions briefly.", backstory="Knows the weather.",
                  llm=LLM(model=MODEL, base_url=url, api_key="test-key"), tools=[get_weather], verbose=False)
    task = Task(description="What is the weather in Paris?", expected_output="The weather, briefly.", agent=agent)
    Crew(agents=[agent], tasks=[task], verbose=False).kickoff()


def adk_flow(url: str, fail: bool) -> None:
    """Google's ADK: an LlmAgent (Gemini through google-genai, at the scripted server) around a function tool, run by
    its InMemoryRunner; `fail`: the tool raises and an on_tool_error callback hands the model its error."""
    import asyncio

    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    os.environ["GOOGLE_API_KEY"] = "test-key"
    os.environ["GOOGLE_GEMINI_BASE_URL"] = url.removesuffix("/v1")

    def get_weather(city: str) -> str:
        """Weather in a city."""
        if fail:
            raise RuntimeError(f"weather service unavailable for {city}")
        return weather(city)

    def on_error(tool, args, tool_context, error):  # the model is told, and goes on
        return {"error": str(error)}

    agent = LlmAgent(name="weather_agent", model="gemini-2.0-flash", instruction="Answer briefly.", tools=[get_weather],
                     on_tool_error_callback=on_error)

    async def run() -> None:
        runner = InMemoryRunner(agent=agent, app_name="weather")
        session = await runner.session_service.create_session(app_name="weather", user_id="alice")
        question = types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")])
        async for _event in runner.run_async(user_id="alice", session_id=session.id, new_message=question):
            pass

    asyncio.run(run())


def main(options: dict) -> None:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    if options.get("semconv"):
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = options["semconv"]
        # The newer conventions take where to put content, not a boolean ("true" reads as NO_CONTENT).
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
    parallel = bool(options.get("parallel"))
    # `failures`: the flow once per entry (a trace each), its tool failing where true (langfuse, mlflow, langchain)
    failures = options.get("failures") or [False]
    url = serve(options["flow"], parallel, len(failures))
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource

    tool = weather
    if options.get("agentotel"):
        import agentotel

        agentotel.instrument(directory=options["store"], service_name="weather-agent")
        provider = trace.get_tracer_provider()
        tool = agentotel.tool(name="get_weather")(weather)
    else:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
        if options.get("otlp_files"):
            provider.add_span_processor(BatchSpanProcessor(OtlpFiles(options["otlp_files"])))
        elif options.get("otlp"):
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=options["otlp"])))
        else:
            from agentotel.store import ParquetSpanExporter

            provider.add_span_processor(BatchSpanProcessor(ParquetSpanExporter(options["store"])))
        trace.set_tracer_provider(provider)
    instrument(options["instrumentations"], provider)
    tracer = provider.get_tracer("weather-app")
    if options.get("tool_spans") == "openinference":  # the app traces its tool with OpenInference's decorator
        from openinference.instrumentation import OITracer, TraceConfig

        tool = OITracer(tracer, TraceConfig()).tool(name="get_weather")(weather)
    fail = False  # the flows that can fail read it when they run: each entry of `failures` in turn
    flow = {
        "openai": lambda: openai_flow(url, tool),
        "langchain": lambda: langchain_flow(url, options.get("retrieve", False), fail),
        "pydantic-ai": lambda: pydantic_ai_flow(url, provider),
        "mcp": mcp_flow,
        "mlflow": lambda: mlflow_flow(url, fail),
        "langfuse": lambda: langfuse_flow(url, fail),
        "anthropic": lambda: anthropic_flow(url),
        "agents": lambda: agents_flow(url),
        "agents-handoff": lambda: agents_handoff_flow(url),
        "anthropic-tools": lambda: anthropic_tools_flow(url, tool, parallel),
        "gemini": lambda: gemini_flow(url, tool, parallel),
        "bedrock": lambda: bedrock_flow(url, tool, parallel),
        "strands": lambda: strands_flow(url, fail),
        "agent-framework": lambda: agent_framework_flow(url),
        "litellm": lambda: litellm_flow(url, tool, provider, fail),
        "llama-index": lambda: llama_index_flow(url, options.get("retrieve", False), fail),
        "semantic-kernel": lambda: semantic_kernel_flow(url, fail),
        "crewai": lambda: crewai_flow(url, fail),
        "adk": lambda: adk_flow(url, fail),
    }[options["flow"]]
    if options.get("setup_trace"):  # a framework's set-up work in a trace of its own: no model, no tool
        with tracer.start_as_current_span("initialize"):
            with tracer.start_as_current_span("tools/list"):
                pass
    if options.get("run"):
        import agentotel

        with agentotel.run("weather", user="alice", session="s-1"):
            flow()
            # A span of code agentotel does not see (another service's, joined by context propagation):
            # its own tracer provider, so no run attributes are stamped on it.
            if options.get("foreign_child"):
                from opentelemetry.sdk.trace import TracerProvider
                from opentelemetry.sdk.trace.export import SimpleSpanProcessor
                from agentotel.store import ParquetSpanExporter

                other = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
                exporter = ParquetSpanExporter(options["store"])
                other.add_span_processor(SimpleSpanProcessor(exporter))
                # The GenAI conventions' tool span, as an MCP server's middleware writes it.
                attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_forecast"}
                with other.get_tracer("weather-service").start_as_current_span("execute_tool lookup_forecast", attributes=attributes):
                    pass
                other.shutdown()
    elif options.get("root_span"):
        for fail in failures:  # noqa: B007 - the flow reads it
            with tracer.start_as_current_span(options["root_span"], attributes=options.get("root_attributes") or {}):
                flow()
    else:
        for fail in failures:  # noqa: B007 - the flow reads it
            flow()
    if options.get("agentotel"):
        import agentotel

        agentotel.shutdown()
    else:
        provider.shutdown()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
