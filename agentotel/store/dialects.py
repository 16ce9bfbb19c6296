"""Other instrumentations' spans → the store's promoted columns: one model call or tool call, one shape.

Ops teams send whatever their services emit: OpenInference, OpenLLMetry (Traceloop), the GenAI conventions in
older forms, pydantic-ai / Logfire, MCP's own spans, the Vercel AI SDK in Node.js, the anthropic SDK's native
spans, OpenLIT, Langfuse's SDK (v3 on: OpenTelemetry spans), MLflow tracing, Google's ADK, Strands Agents, LiteLLM's
callback, Semantic Kernel, LlamaIndex's OpenInference spans (Microsoft Agent Framework writes the current GenAI
attributes: nothing to add). `SpanColumns` (the
store's one span→row path, used by the in-process exporter, the collector and `agentotel import`) calls
`derive()` for every span that is not agentotel's own; it returns the promoted columns those attributes mean
(operation, provider, models, tokens, tool name and call id, user, session, error type), the payload in the
GenAI JSON shape (messages as `[{"role", "parts": [...]}]`, tool arguments and result, retrieval query and
documents), and the GenAI attributes the span means but lacks (`gen_ai.tool.definitions`: the tools a model
call was offered).

The span's own attributes always stay in its `attributes` map; `derive()` only fills columns the
current GenAI attributes left empty, and says in `dialect` which rules did (`genai`, `genai-legacy`,
`openinference`, `traceloop`, `vercel-ai`, `mcp`, `pydantic-ai`, `anthropic-sdk`, `openlit`, `langfuse`,
`mlflow`, `adk`, `strands`, `litellm`, `semantic-kernel`, `llama-index`, joined by `+`). LiteLLM's and Semantic
Kernel's own messages of a known broken shape are mended (`Derived.mends`): the mended ones take the payload
columns, theirs stay in the attribute map.

This is the one module where other instrumentations' attribute names may be written out; the table of
what maps to which column is in docs/STORE.md. Cheap by construction: a span of none of these dialects
costs a handful of dictionary lookups, and only a span of a dialect has its keys scanned.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Mapping, Sequence

from agentotel import semconv

# -- names ---------------------------------------------------------------------------------------------
# The GenAI conventions' older forms (before semantic-conventions 1.37), still emitted by many producers.
GEN_AI_SYSTEM = "gen_ai.system"
GEN_AI_USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
GEN_AI_USAGE_CACHE_READ_OLD = "gen_ai.usage.cache_read_input_tokens"
GEN_AI_USAGE_CACHE_CREATION_OLD = "gen_ai.usage.cache_creation_input_tokens"
GEN_AI_USAGE_CACHE_WRITE = "gen_ai.usage.cache_write.input_tokens"  # the anthropic SDK's spelling
GEN_AI_PROMPT_PREFIX = "gen_ai.prompt."  # gen_ai.prompt.N.role / .content / .tool_calls.K.*
GEN_AI_COMPLETION_PREFIX = "gen_ai.completion."
GEN_AI_TOOL_ARGUMENTS_OLD = "gen_ai.tool.arguments"
GEN_AI_EVENT_CONTENT = "gen_ai.event.content"
GEN_AI_EVENT_PROMPT = "gen_ai.prompt"  # on OpenLLMetry's gen_ai.content.prompt event
GEN_AI_EVENT_COMPLETION = "gen_ai.completion"
GEN_AI_OPERATION_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
_CHOICE_EVENT = "gen_ai.choice"
_CONTENT_PROMPT_EVENT = "gen_ai.content.prompt"
_CONTENT_COMPLETION_EVENT = "gen_ai.content.completion"
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"

# OpenInference (Arize).
OI_SPAN_KIND = "openinference.span.kind"
OI_INPUT_VALUE = "input.value"
OI_OUTPUT_VALUE = "output.value"
OI_LLM_PROVIDER = "llm.provider"
OI_LLM_SYSTEM = "llm.system"
OI_LLM_MODEL_NAME = "llm.model_name"
OI_LLM_INVOCATION_PARAMETERS = "llm.invocation_parameters"
OI_TOKENS_PROMPT = "llm.token_count.prompt"
OI_TOKENS_COMPLETION = "llm.token_count.completion"
OI_TOKENS_CACHE_READ = "llm.token_count.prompt_details.cache_read"
OI_TOKENS_CACHE_WRITE = "llm.token_count.prompt_details.cache_write"
OI_TOKENS_REASONING = "llm.token_count.completion_details.reasoning"
OI_FINISH_REASON = "llm.finish_reason"
OI_INPUT_MESSAGES = "llm.input_messages."
OI_OUTPUT_MESSAGES = "llm.output_messages."
OI_TOOL_NAME = "tool.name"
OI_TOOL_CALL_ID = "tool_call.id"
OI_TOOL_ID = "tool.id"
OI_RETRIEVAL_DOCUMENTS = "retrieval.documents."
OI_EMBEDDING_MODEL = "embedding.model_name"
OI_AGENT_NAME = "agent.name"
OI_GRAPH_NODE = "graph.node.id"  # an agent's node in a multi-agent graph (CrewAI's: the agent's role), beside no agent.name
OI_TOOLS = "llm.tools"  # a JSON list of tool definitions, or flattened: llm.tools.N.tool.json_schema / .name / .description
OI_TOOLS_PREFIX = OI_TOOLS + "."
OI_TOOL_JSON_SCHEMA = "tool.json_schema"
OI_TOOL_DESCRIPTION = "tool.description"
OI_TOOL_PARAMETERS = "tool.parameters"  # a TOOL span's own parameter schema (JSON), beside its tool.description
OI_METADATA = "metadata"  # JSON: the LangChain run's metadata (LangGraph's langgraph_node, langgraph_step, ...)
# A LangGraph node's task, as OpenInference's LangChain instrumentation records it: a CHAIN span (AGENT when the node
# is called "agent") named by the node, whose metadata names that node. Which nodes are agents is the graph's to say
# (query/trajectory.py replays agentotel/_agent_turns.py over these spans), so such a span is no step by itself: its
# dialect says `langgraph`.
LG_NODE = "langgraph_node"
LANGGRAPH_NODE = "langgraph"  # the dialect of a node's span
# ... of a tool node's (what LangGraph's ToolNode writes: tool messages only, `{"type": "tool", ...}` as OpenInference
# serialises them; one that ran no tool span too, an unknown tool's error say): no agent, whatever the graph
LANGGRAPH_TOOL_NODE = "langgraph-tools"
OI_KINDS = {"LLM": "chat", "TOOL": "execute_tool", "RETRIEVER": "retrieval", "EMBEDDING": "embeddings",
            "AGENT": "invoke_agent"}  # CHAIN, RERANKER, GUARDRAIL, EVALUATOR: not steps

# LlamaIndex through OpenInference's instrumentation: a span a method LlamaIndex's dispatcher instruments, named
# `Class.method`. A private method's span (`OpenAI._prepare_chat_with_tools` inside chat_with_tools, a retriever's
# `_retrieve` inside its `retrieve`) is the inside of a public one of the same kind: no step again. A FunctionTool
# span's input is `{"kwargs": {...}}`, its output the ToolOutput (`raw_output`: what the function returned).
LLAMA_INDEX_SCOPE = "openinference.instrumentation.llama_index"
LI_KWARGS = "kwargs"
LI_RAW_OUTPUT = "raw_output"
LI_TOOL_OUTPUT = frozenset({"blocks", "tool_name", "raw_input", "raw_output", "is_error"})  # ToolOutput's fields

# OpenLLMetry (Traceloop).
TL_SPAN_KIND = "traceloop.span.kind"
TL_ENTITY_NAME = "traceloop.entity.name"
TL_ENTITY_INPUT = "traceloop.entity.input"
TL_ENTITY_OUTPUT = "traceloop.entity.output"
TL_REQUEST_TYPE = "llm.request.type"
TL_USER = "traceloop.association.properties.user_id"
TL_SESSION = "traceloop.association.properties.session_id"
TL_FUNCTIONS_PREFIX = "llm.request.functions."  # before gen_ai.tool.definitions: llm.request.functions.N.name / .description / .parameters
TL_KINDS = {"tool": "execute_tool", "agent": "invoke_agent"}  # workflow, task: not steps
TL_REQUEST_TYPES = {"chat": "chat", "completion": "text_completion", "embedding": "embeddings"}

# The Vercel AI SDK (`ai` on npm), experimental_telemetry.
AI_OPERATION_ID = "ai.operationId"
AI_MODEL_ID = "ai.model.id"
AI_MODEL_PROVIDER = "ai.model.provider"
AI_RESPONSE_MODEL = "ai.response.model"
AI_RESPONSE_ID = "ai.response.id"
AI_RESPONSE_TEXT = "ai.response.text"
AI_RESPONSE_TOOL_CALLS = "ai.response.toolCalls"
AI_RESPONSE_FINISH_REASON = "ai.response.finishReason"
AI_PROMPT = "ai.prompt"  # the outer call's (ai.generateText, ai.streamText, ...) prompt: {"prompt"} or {"system", "messages"}
AI_PROMPT_MESSAGES = "ai.prompt.messages"
AI_PROMPT_TOOLS = "ai.prompt.tools"  # a list of JSON texts, one per tool: {type, name, description, inputSchema | parameters}
AI_USAGE_INPUT = ("ai.usage.inputTokens", "ai.usage.promptTokens", "ai.usage.tokens")
AI_USAGE_OUTPUT = ("ai.usage.outputTokens", "ai.usage.completionTokens")
AI_USAGE_CACHED = ("ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens")
AI_USAGE_CACHE_WRITE = "ai.usage.inputTokenDetails.cacheWriteTokens"
AI_USAGE_REASONING = ("ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens")
AI_TOOL_NAME = "ai.toolCall.name"
AI_TOOL_ID = "ai.toolCall.id"
AI_TOOL_ARGS = ("ai.toolCall.input", "ai.toolCall.args")
AI_TOOL_RESULT = ("ai.toolCall.output", "ai.toolCall.result")
AI_METADATA_USER = ("ai.telemetry.metadata.userId", "ai.telemetry.metadata.user_id", "ai.telemetry.metadata.user")
AI_METADATA_SESSION = ("ai.telemetry.metadata.sessionId", "ai.telemetry.metadata.session_id",
                       "ai.telemetry.metadata.conversationId")
_AI_MODEL_CALL = (".doGenerate", ".doStream")
_AI_EMBED_CALL = ".doEmbed"
_AI_TOOL_CALL = "ai.toolCall"

# MCP's own spans (the mcp Python SDK; the MCP semantic conventions).
MCP_METHOD = "mcp.method.name"
MCP_TOOLS_CALL = "tools/call"

# pydantic-ai (and Logfire, which shows its spans).
PYDANTIC_AI_SCOPE = "pydantic-ai"
PAI_TOOL_ARGUMENTS = "tool_arguments"
PAI_TOOL_RESPONSE = "tool_response"
PAI_FINAL_RESULT = "final_result"
PAI_ALL_MESSAGES = "pydantic_ai.all_messages"

ANTHROPIC_SDK_SCOPE = "com.anthropic.sdk.python"

# OpenLIT: the current GenAI attributes mostly, from tracers named openlit.instrumentation.<library> (before
# 1.3x: openlit.otel.tracing); a model span also names the tool calls it asked for, joined by ", ".
OPENLIT_SCOPE = "openlit"
OL_TOOL_ARGS = ("gen_ai.tool.args", "gen_ai.tool.input")  # before gen_ai.tool.call.arguments
OL_TOOL_OUTPUT = "gen_ai.tool.output"
_OL_JOIN = ", "

# Langfuse's SDK (v3 on: OpenTelemetry spans, exported over OTLP), one observation a span.
LF_TYPE = "langfuse.observation.type"  # generation, tool, span, agent, chain, retriever, embedding, event, ...
LF_INPUT = "langfuse.observation.input"
LF_OUTPUT = "langfuse.observation.output"
LF_MODEL = "langfuse.observation.model.name"
LF_USAGE = "langfuse.observation.usage_details"  # {"input", "output", ...} or the provider's own usage keys
LF_COST = "langfuse.observation.cost_details"  # {"input", "output", "total"} in USD
LF_TRACE_INPUT = "langfuse.trace.input"
LF_TRACE_OUTPUT = "langfuse.trace.output"
LF_KINDS = {"generation": "chat", "tool": "execute_tool", "retriever": "retrieval", "embedding": "embeddings",
            "agent": "invoke_agent"}  # span, chain, event, evaluator, guardrail: not steps

# MLflow tracing (every value JSON-encoded, strings too).
ML_SPAN_TYPE = "mlflow.spanType"
ML_INPUTS = "mlflow.spanInputs"
ML_OUTPUTS = "mlflow.spanOutputs"
ML_FUNCTION_NAME = "mlflow.spanFunctionName"
ML_CHAT_MESSAGES = "mlflow.chat.messages"  # MLflow 2.x: the call's messages, its answer last
ML_CHAT_TOOLS = "mlflow.chat.tools"
ML_TOKEN_USAGE = "mlflow.chat.tokenUsage"  # {"input_tokens", "output_tokens", "cache_read_input_tokens", ...}
ML_MODEL = "mlflow.llm.model"
ML_PROVIDER = "mlflow.llm.provider"
ML_MESSAGE_FORMAT = "mlflow.message.format"  # the provider whose message shape the payloads have: openai, anthropic, ...
ML_COST = "mlflow.llm.cost"  # {"input_cost", "output_cost", "total_cost"} in USD
ML_KINDS = {"LLM": "chat", "CHAT_MODEL": "chat", "TOOL": "execute_tool", "RETRIEVER": "retrieval",
            "EMBEDDING": "embeddings", "AGENT": "invoke_agent"}  # CHAIN, PARSER, RERANKER, ...: not steps

# Google's Agent Development Kit (tracer gcp.vertex.agent): the model call's request and response as the
# google-genai SDK's objects in JSON, a tool's arguments and response beside the GenAI tool attributes (which
# versions before 1.0 leave out: the span's name, `execute_tool <tool>`, and the response event name the call).
ADK_SCOPE = "gcp.vertex.agent"
ADK_LLM_REQUEST = "gcp.vertex.agent.llm_request"  # {"model", "config": {"system_instruction", "tools"}, "contents"}
ADK_LLM_RESPONSE = "gcp.vertex.agent.llm_response"  # {"content": {"role", "parts"}, "finish_reason", "usage_metadata"}
ADK_TOOL_ARGS = "gcp.vertex.agent.tool_call_args"
ADK_TOOL_RESPONSE = "gcp.vertex.agent.tool_response"  # the response ({"result": ...} around a non-dict), or its event
ADK_SESSION = "gcp.vertex.agent.session_id"
_ADK_TOOL_SPAN = "execute_tool "

# Strands Agents (AWS; tracer strands.telemetry.tracer): the GenAI conventions' older event form, each message's
# content as Bedrock Converse blocks in JSON ({"text"}, {"toolUse"}, {"toolResult"}), the answer plain text on the
# agent's span; a tool's arguments and result in its own gen_ai.tool.message and gen_ai.choice events. With
# OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: the current attributes and the operation.details event.
# Its gen_ai.system (gen_ai.provider.name) names Strands, not the model's provider.
STRANDS_SCOPE = "strands.telemetry.tracer"
STRANDS_SYSTEM = "strands-agents"
ST_CONTENT = "content"  # on the gen_ai.*.message events
ST_MESSAGE = "message"  # on gen_ai.choice
ST_FINISH_REASON = "finish_reason"
ST_TOOL_SCHEMA = "gen_ai.tool.json_schema"  # an execute_tool span's own parameter schema
ST_TOOL_INPUT_EVENT = "gen_ai.tool.message"  # on an execute_tool span: the call's arguments

# LiteLLM's OpenTelemetry callback (tracer litellm; a litellm_request span a call, raw_gen_ai_request under it with
# the provider's request as Python reprs): gen_ai.input/output.messages with OpenAI's leftovers - an assistant
# message's calls in its own `tool_calls` (OpenAI's form) beside an empty text part, a tool message's call in its
# `tool_call_id` - and the answer's calls only in gen_ai.completion.K.function_call.name / .arguments (no id).
LITELLM_SCOPE = "litellm"
LL_TOOL_CALLS = "tool_calls"
LL_TOOL_CALL_ID = "tool_call_id"
LL_FUNCTION_CALL = "function_call."

# Semantic Kernel (tracers semantic_kernel.*): the GenAI attributes, a model call's messages only in log records
# (not on the span); finish reasons in gen_ai.response.finish_reason as its enum's text joined by "," (`FinishReason.
# TOOL_CALLS`); an agent span's gen_ai.input/output.messages in OpenAI's message form (`content`, `name`), no parts.
SK_SCOPE = "semantic_kernel."
SK_FINISH_REASON = "gen_ai.response.finish_reason"
SK_ENUM = "FinishReason."

# An instance id in a run's root span's name (CrewAI's `Crew_<uuid>.kickoff` through OpenInference): no part of the
# run's name, which earlier runs of the same agent share (a history). A uuid and the separator before it.
INSTANCE_ID = r"[-_ .:]?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_INSTANCE_ID = re.compile(INSTANCE_ID)


def run_name(root_name: str) -> str:
    """The name of a run another instrumentation recorded, from its root span's: without instance ids (the `runs`
    view's macro_run_name.sql says the same)."""
    return _INSTANCE_ID.sub("", root_name) or root_name


# Who started a trace, as other tools write it.
USER_ATTRIBUTES = ("user.id", "langfuse.user.id", TL_USER, *AI_METADATA_USER, "mlflow.trace.user")
SESSION_ATTRIBUTES = ("session.id", "langfuse.session.id", TL_SESSION, *AI_METADATA_SESSION, "mlflow.trace.session")

_WHO = frozenset((*USER_ATTRIBUTES, *SESSION_ATTRIBUTES))

MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})
TOOL_OPERATION = "execute_tool"

_OPERATION = semconv.GEN_AI_OPERATION_NAME
_PROVIDER = semconv.GEN_AI_PROVIDER_NAME
_REQUEST_MODEL = semconv.GEN_AI_REQUEST_MODEL
_RESPONSE_MODEL = semconv.GEN_AI_RESPONSE_MODEL
_INPUT_TOKENS = semconv.GEN_AI_USAGE_INPUT_TOKENS
_OUTPUT_TOKENS = semconv.GEN_AI_USAGE_OUTPUT_TOKENS

# Any one of these keys makes a span worth a closer look (the rest of the rules only run then).
_MARKERS = frozenset({
    OI_SPAN_KIND, TL_SPAN_KIND, TL_REQUEST_TYPE, AI_OPERATION_ID, MCP_METHOD, GEN_AI_SYSTEM, LF_TYPE, ML_SPAN_TYPE,
    GEN_AI_USAGE_PROMPT_TOKENS, _OPERATION, _PROVIDER, _REQUEST_MODEL, _INPUT_TOKENS, semconv.GEN_AI_TOOL_NAME,
    *USER_ATTRIBUTES, *SESSION_ATTRIBUTES,
})


class Derived:
    """What the rules say about one span: column values (by store column name), payloads, dialect."""

    __slots__ = ("columns", "input", "output", "dialects", "attributes", "input_from", "mends")

    def __init__(self) -> None:
        self.columns: dict[str, Any] = {}
        self.input: str | None = None
        self.output: str | None = None
        self.dialects: list[str] = []
        # GenAI attributes the span means but does not carry, added to its attribute map beside its own:
        # `gen_ai.tool.definitions` (the tools offered to the model, in the GenAI form), which every reader
        # of offered tools (check, diff, env) reads by that one name.
        self.attributes: dict[str, str] = {}
        # The payload attribute that belongs in `input` when another one took its place (OpenLIT's model span
        # carries the arguments of the tool calls it asked for as gen_ai.tool.call.arguments, before its messages).
        self.input_from: str | None = None
        # The span's own GenAI payloads are of a shape known to be broken (LiteLLM's): `input` / `output`, when
        # set, take their place in the payload columns, and they stay in the span's attribute map.
        self.mends = False

    def set(self, column: str, value: Any) -> None:
        if value is not None and value != "" and column not in self.columns:
            self.columns[column] = value

    def offer(self, definitions: list[dict[str, Any]]) -> None:
        """The tools the model call was offered (GenAI form), unless an earlier rule found them."""
        if definitions and semconv.GEN_AI_TOOL_DEFINITIONS not in self.attributes:
            self.attributes[semconv.GEN_AI_TOOL_DEFINITIONS] = _dump(definitions)

    @property
    def dialect(self) -> str | None:
        return "+".join(self.dialects) if self.dialects else None


def derive(
    attributes: Mapping[str, Any],
    name: str,
    kind: str,
    scope_name: str | None,
    status_code: str,
    events: Sequence[tuple[int, str, Mapping[str, Any] | None]],
) -> Derived | None:
    """The promoted columns another instrumentation's span means; None when it is of no known dialect."""
    if not attributes:
        return None
    if attributes.keys().isdisjoint(_MARKERS) and scope_name != PYDANTIC_AI_SCOPE:
        if not events or status_code != "ERROR":
            return None
    out = Derived()
    get = attributes.get
    if get(_OPERATION) is not None or get(_PROVIDER) is not None or get(_INPUT_TOKENS) is not None or get(
        semconv.GEN_AI_TOOL_NAME
    ) is not None:
        out.dialects.append("genai")
    if OI_SPAN_KIND in attributes:
        if scope_name != LLAMA_INDEX_SCOPE:
            _openinference(attributes, out, name)
        elif name.rpartition(".")[2].startswith("_"):
            out.dialects += ["openinference", "llama-index"]  # a private method's span: inside a public one's
        else:
            _openinference(attributes, out, name)
            _llama_index(out)
    if TL_SPAN_KIND in attributes or TL_REQUEST_TYPE in attributes:
        _traceloop(attributes, out)
    if AI_OPERATION_ID in attributes:
        _vercel(attributes, out)
    if MCP_METHOD in attributes:
        _mcp(attributes, name, kind, out)
    if scope_name == PYDANTIC_AI_SCOPE:
        _pydantic_ai(attributes, out)
    if scope_name == ANTHROPIC_SDK_SCOPE:
        out.dialects.append("anthropic-sdk")
        out.set("cache_write_tokens", _int(get(GEN_AI_USAGE_CACHE_WRITE)))
    if scope_name == ADK_SCOPE:
        _adk(attributes, name, out)
    if scope_name == LITELLM_SCOPE:
        _litellm(attributes, out)
    elif scope_name is not None and scope_name.startswith(SK_SCOPE):
        _semantic_kernel(attributes, out)
    if scope_name == STRANDS_SCOPE or get(GEN_AI_SYSTEM) == STRANDS_SYSTEM or get(_PROVIDER) == STRANDS_SYSTEM:
        _strands(attributes, events, out)
    if LF_TYPE in attributes:
        _langfuse(attributes, name, out)
    if ML_SPAN_TYPE in attributes:
        _mlflow(attributes, name, out)
    _legacy_genai(attributes, events, out)
    if scope_name is not None and scope_name.startswith(OPENLIT_SCOPE):
        _openlit(attributes, out)
    if not attributes.keys().isdisjoint(_WHO):  # one pass in C over the span's keys, not two over these names
        for key in USER_ATTRIBUTES:
            if key in attributes:
                out.set("user_id", _str(attributes[key]))
                break
        for key in SESSION_ATTRIBUTES:
            if key in attributes:
                out.set("session_id", _str(attributes[key]))
                break
    if status_code == "ERROR" and semconv.ERROR_TYPE not in attributes:
        for _time, event_name, event_attributes in events:
            if event_name == EXCEPTION_EVENT and event_attributes:
                out.set("error_type", _str(event_attributes.get(EXCEPTION_TYPE)))
                break
    if out.attributes and semconv.GEN_AI_TOOL_DEFINITIONS in attributes:
        del out.attributes[semconv.GEN_AI_TOOL_DEFINITIONS]  # the span says it in the current form already
    if not out.dialects and not out.columns:
        return None
    return out


# -- GenAI, older forms ---------------------------------------------------------------------------------


def _legacy_genai(attributes: Mapping[str, Any], events: Sequence[Any], out: Derived) -> None:
    get = attributes.get
    used = False
    system = get(GEN_AI_SYSTEM)
    if system is not None:
        out.set("provider", _str(system))
        used = True
    for attr, column in ((GEN_AI_USAGE_PROMPT_TOKENS, "input_tokens"), (GEN_AI_USAGE_COMPLETION_TOKENS, "output_tokens"),
                         (GEN_AI_USAGE_CACHE_READ_OLD, "cache_read_tokens"),
                         (GEN_AI_USAGE_CACHE_CREATION_OLD, "cache_write_tokens")):
        value = get(attr)
        if value is not None:
            out.set(column, _int(value))
            used = True
    if out.input is None and (
        (GEN_AI_PROMPT_PREFIX + "0.role") in attributes or (GEN_AI_PROMPT_PREFIX + "0.content") in attributes
    ):
        out.input = _dump(_flat_messages(_unflatten(attributes, GEN_AI_PROMPT_PREFIX), "", "user"))
        used = True
    if out.output is None and ((GEN_AI_COMPLETION_PREFIX + "0.content") in attributes or (
        GEN_AI_COMPLETION_PREFIX + "0.role"
    ) in attributes or (GEN_AI_COMPLETION_PREFIX + "0.tool_calls.0.name") in attributes):
        messages = _flat_messages(_unflatten(attributes, GEN_AI_COMPLETION_PREFIX), "", "assistant")
        out.output = _dump(messages)
        reasons = [m["finish_reason"] for m in messages if m.get("finish_reason")]
        if reasons:
            out.set("finish_reasons", reasons)
        used = True
    if events and (out.input is None or out.output is None):
        used = _message_events(attributes, events, out) or used
    if used:
        out.dialects.append("genai-legacy")
        if _OPERATION not in attributes and "operation" not in out.columns and (
            out.input is not None or out.columns.get("input_tokens") is not None or _REQUEST_MODEL in attributes
        ):
            out.set("operation", "chat")


def _message_events(attributes: Mapping[str, Any], events: Sequence[Any], out: Derived) -> bool:
    """Prompt and completion recorded as span events (the GenAI conventions' event form, OpenLLMetry's)."""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for _time, event_name, event_attributes in events:
        attrs = event_attributes or {}
        if event_name in _MESSAGE_EVENTS:
            body = _event_body(attrs)
            inputs.append(_message(_MESSAGE_EVENTS[event_name], body.get("content"), body.get("tool_calls"),
                                   body.get("id") or body.get("tool_call_id")))
        elif event_name == _CHOICE_EVENT:
            body = _event_body(attrs)
            message = body.get("message") if isinstance(body.get("message"), dict) else body
            converted = _message("assistant", message.get("content"), message.get("tool_calls"), None)
            if body.get("finish_reason"):
                converted["finish_reason"] = body["finish_reason"]
            outputs.append(converted)
        elif event_name == _CONTENT_PROMPT_EVENT and out.input is None:
            out.input = _str(attrs.get(GEN_AI_EVENT_PROMPT))
        elif event_name == _CONTENT_COMPLETION_EVENT and out.output is None:
            out.output = _str(attrs.get(GEN_AI_EVENT_COMPLETION))
        elif event_name == GEN_AI_OPERATION_DETAILS_EVENT:  # one event, or one a field (Strands)
            if out.input is None and attrs.get(semconv.GEN_AI_INPUT_MESSAGES) is not None:
                out.input = _str(attrs[semconv.GEN_AI_INPUT_MESSAGES])
            if out.output is None and attrs.get(semconv.GEN_AI_OUTPUT_MESSAGES) is not None:
                out.output = _str(attrs[semconv.GEN_AI_OUTPUT_MESSAGES])
            # What the call was told and offered, read by their attribute names (calls, check, cases).
            instructions = attrs.get(semconv.GEN_AI_SYSTEM_INSTRUCTIONS)
            if instructions is not None and semconv.GEN_AI_SYSTEM_INSTRUCTIONS not in attributes:
                out.attributes.setdefault(semconv.GEN_AI_SYSTEM_INSTRUCTIONS, _str(instructions))
            offered = _load(attrs.get(semconv.GEN_AI_TOOL_DEFINITIONS))
            if isinstance(offered, list):
                out.offer(tool_definitions(offered))
    if inputs and out.input is None:
        out.input = _dump(inputs)
    if outputs and out.output is None:
        out.output = _dump(outputs)
        reasons = [m["finish_reason"] for m in outputs if m.get("finish_reason")]
        if reasons:
            out.set("finish_reasons", reasons)
    return bool(inputs or outputs)


def _event_body(attrs: Mapping[str, Any]) -> dict[str, Any]:
    raw = attrs.get(GEN_AI_EVENT_CONTENT)
    if raw is not None:
        parsed = _load(raw)
        if isinstance(parsed, dict):
            return parsed
    return {k: (_load(v) if k in ("tool_calls", "message") else v) for k, v in attrs.items()}


# -- OpenInference --------------------------------------------------------------------------------------


def _openinference(attributes: Mapping[str, Any], out: Derived, name: str) -> None:
    get = attributes.get
    out.dialects.append("openinference")
    kind = str(get(OI_SPAN_KIND) or "").upper()
    operation = OI_KINDS.get(kind)
    if kind in ("CHAIN", "AGENT") and _langgraph_node(get(OI_METADATA)) == name:
        out.dialects.append(LANGGRAPH_TOOL_NODE if _tool_messages(get(OI_OUTPUT_VALUE)) else LANGGRAPH_NODE)
        return
    out.set("operation", operation)
    if operation == "chat":
        out.set("provider", _str(get(OI_LLM_PROVIDER) or get(OI_LLM_SYSTEM)))
        model = _str(get(OI_LLM_MODEL_NAME))
        requested = _load(get(OI_LLM_INVOCATION_PARAMETERS))
        requested = requested.get("model") if isinstance(requested, dict) else None
        out.set("request_model", _str(requested) or model)
        out.set("response_model", model)
        out.set("input_tokens", _int(get(OI_TOKENS_PROMPT)))
        out.set("output_tokens", _int(get(OI_TOKENS_COMPLETION)))
        out.set("cache_read_tokens", _int(get(OI_TOKENS_CACHE_READ)))
        out.set("cache_write_tokens", _int(get(OI_TOKENS_CACHE_WRITE)))
        out.set("reasoning_tokens", _int(get(OI_TOKENS_REASONING)))
        reason = get(OI_FINISH_REASON)
        if reason is not None:
            out.set("finish_reasons", [_str(reason)])
        keys = [k for k in attributes if k.startswith("llm.")]
        inputs = _flat_messages(_unflatten(attributes, OI_INPUT_MESSAGES, keys), "message.", "user", _NO_ARGUMENTS)
        outputs = _flat_messages(_unflatten(attributes, OI_OUTPUT_MESSAGES, keys), "message.", "assistant", _NO_ARGUMENTS)
        if outputs and reason is not None and len(outputs) == 1:
            outputs[0]["finish_reason"] = _str(reason)
        out.input = _dump(inputs) if inputs else _str(get(OI_INPUT_VALUE))
        out.output = _dump(outputs) if outputs else _str(get(OI_OUTPUT_VALUE))
        out.offer(_openinference_tools(attributes, keys))
    elif operation == "embeddings":
        out.set("request_model", _str(get(OI_EMBEDDING_MODEL)))
        out.set("provider", _str(get(OI_LLM_PROVIDER) or get(OI_LLM_SYSTEM)))
        out.set("input_tokens", _int(get(OI_TOKENS_PROMPT)))
        out.input = _str(get(OI_INPUT_VALUE))
    elif operation == "execute_tool":
        name = _str(get(OI_TOOL_NAME))
        out.set("tool_name", name)
        out.set("tool_call_id", _str(get(OI_TOOL_CALL_ID) or get(OI_TOOL_ID)) or _call_id_in(get(OI_OUTPUT_VALUE)))
        out.input = _str(get(OI_INPUT_VALUE))
        out.output = tool_result(get(OI_OUTPUT_VALUE))
        # What the tool declares of itself (the Agents SDK and LangChain instrumentations read it off the live
        # tool): its description, and its schema as its one definition, which check holds the offered one to.
        description = _str(get(OI_TOOL_DESCRIPTION))
        if description and semconv.GEN_AI_TOOL_DESCRIPTION not in attributes:
            out.attributes[semconv.GEN_AI_TOOL_DESCRIPTION] = description
        parameters = _load(get(OI_TOOL_PARAMETERS))
        if name and isinstance(parameters, dict):
            out.offer([{"type": "function", "name": name, **({"description": description} if description else {}),
                        "parameters": parameters}])
    elif operation == "retrieval":
        out.input = _str(get(OI_INPUT_VALUE))
        documents = _unflatten(attributes, OI_RETRIEVAL_DOCUMENTS)
        if documents:
            out.output = _dump([_document(d) for _, d in sorted(documents.items())])
        else:
            out.output = _str(get(OI_OUTPUT_VALUE))
    elif operation == "invoke_agent":
        out.set("agent_name", _str(get(OI_AGENT_NAME) or get(OI_GRAPH_NODE)))
        out.input = _str(get(OI_INPUT_VALUE))
        out.output = _str(get(OI_OUTPUT_VALUE))


def _langgraph_node(metadata: Any) -> str | None:
    """The LangGraph node a span's metadata names (None: none, or no metadata: most spans, looked at cheaply)."""
    if not isinstance(metadata, str) or LG_NODE not in metadata:
        return None
    found = _load(metadata)
    return _str(found.get(LG_NODE)) if isinstance(found, dict) else None


def _tool_messages(output: Any) -> bool:
    """Whether a node's output (its state update, JSON) holds messages, tool messages all."""
    found = _load(output) if isinstance(output, str) and '"tool"' in output else None
    messages = [m for v in found.values() if isinstance(v, list) for m in v] if isinstance(found, dict) else []
    return bool(messages) and all(isinstance(m, dict) and m.get("type") == "tool" for m in messages)


def _llama_index(out: Derived) -> None:
    """A FunctionTool span's arguments and result, out of LlamaIndex's wrappers."""
    out.dialects.append("llama-index")
    if out.columns.get("operation") != TOOL_OPERATION:
        return
    arguments = _load(out.input)
    if isinstance(arguments, dict) and set(arguments) == {LI_KWARGS} and isinstance(arguments[LI_KWARGS], dict):
        out.input = _dump(arguments[LI_KWARGS])
    result = _load(out.output)
    if isinstance(result, dict) and LI_TOOL_OUTPUT <= result.keys():
        raw = result[LI_RAW_OUTPUT]
        out.output = raw if isinstance(raw, str) else _dump(raw)


def _openinference_tools(attributes: Mapping[str, Any], keys: Sequence[str]) -> list[dict[str, Any]]:
    """The tools an LLM span was offered: `llm.tools` (a JSON list), else `llm.tools.N.tool.json_schema` (the
    provider's own form: OpenAI's, the Responses API's, Anthropic's ...), whose `tool.name` / `tool.description`
    beside it win."""
    listed = _load(attributes.get(OI_TOOLS))
    if isinstance(listed, list) and (found := tool_definitions(listed)):
        return found
    out = []
    for _, fields in sorted(_unflatten(attributes, OI_TOOLS_PREFIX, keys).items()):
        found = tool_definitions([fields[OI_TOOL_JSON_SCHEMA]]) if OI_TOOL_JSON_SCHEMA in fields else []
        definition = found[0] if found else {"type": "function"}
        for field, target in ((OI_TOOL_NAME, "name"), (OI_TOOL_DESCRIPTION, "description")):
            if fields.get(field):
                definition[target] = _str(fields[field])
        if len(definition) > 1:
            out.append(definition)
    return out


def _document(flat: Mapping[str, Any]) -> dict[str, Any]:
    document = {}
    for key, target in (("document.id", "id"), ("document.content", "content"), ("document.score", "score")):
        if key in flat:
            document[target] = flat[key]
    metadata = flat.get("document.metadata")
    if metadata is not None:
        document["metadata"] = _load(metadata) if isinstance(metadata, str) else metadata
    return document


# -- OpenLLMetry ----------------------------------------------------------------------------------------


def _traceloop(attributes: Mapping[str, Any], out: Derived) -> None:
    get = attributes.get
    out.dialects.append("traceloop")
    kind = get(TL_SPAN_KIND)
    operation = TL_KINDS.get(str(kind)) if kind is not None else TL_REQUEST_TYPES.get(str(get(TL_REQUEST_TYPE)))
    out.set("operation", operation)
    if operation == "execute_tool":
        out.set("tool_name", _str(get(TL_ENTITY_NAME)))
        out.set("tool_call_id", _call_id_in(get(TL_ENTITY_INPUT)) or _call_id_in(get(TL_ENTITY_OUTPUT)))
    elif operation == "invoke_agent":
        out.set("agent_name", _str(get(TL_ENTITY_NAME)))
    elif operation in MODEL_OPERATIONS:
        # OpenLLMetry before gen_ai.tool.definitions (0.4x): each offered function flattened.
        functions = _unflatten(attributes, TL_FUNCTIONS_PREFIX)
        out.offer(tool_definitions([functions[i] for i in sorted(functions)]))
    if operation == "execute_tool":
        out.input = tool_arguments(get(TL_ENTITY_INPUT))
        out.output = tool_result(get(TL_ENTITY_OUTPUT))
    elif kind is not None:
        out.input = _str(get(TL_ENTITY_INPUT))
        out.output = _str(get(TL_ENTITY_OUTPUT))


# -- the Vercel AI SDK ----------------------------------------------------------------------------------


def _vercel(attributes: Mapping[str, Any], out: Derived) -> None:
    get = attributes.get
    out.dialects.append("vercel-ai")
    operation_id = str(get(AI_OPERATION_ID))
    if operation_id.endswith(_AI_MODEL_CALL) or operation_id.endswith(_AI_EMBED_CALL):
        embed = operation_id.endswith(_AI_EMBED_CALL)
        out.set("operation", "embeddings" if embed else "chat")
        provider = _str(get(AI_MODEL_PROVIDER))
        out.set("provider", provider.split(".", 1)[0] if provider else None)
        out.set("request_model", _str(get(AI_MODEL_ID)))
        out.set("response_model", _str(get(AI_RESPONSE_MODEL)))
        out.set("input_tokens", _int(_first(attributes, AI_USAGE_INPUT)))
        out.set("output_tokens", _int(_first(attributes, AI_USAGE_OUTPUT)))
        out.set("cache_read_tokens", _int(_first(attributes, AI_USAGE_CACHED)))
        out.set("cache_write_tokens", _int(get(AI_USAGE_CACHE_WRITE)))
        out.set("reasoning_tokens", _int(_first(attributes, AI_USAGE_REASONING)))
        if embed:
            return
        reason = _str(get(AI_RESPONSE_FINISH_REASON))
        if reason:
            out.set("finish_reasons", [reason])
        prompt = _load(get(AI_PROMPT_MESSAGES))
        if isinstance(prompt, list):
            out.input = _dump([_vercel_message(m) for m in prompt if isinstance(m, dict)])
        tools = _load(get(AI_PROMPT_TOOLS))
        out.offer(tool_definitions(tools if isinstance(tools, (list, tuple)) else [tools]))
        parts: list[dict[str, Any]] = []
        text = get(AI_RESPONSE_TEXT)
        if text:
            parts.append({"type": "text", "content": _str(text)})
        calls = _load(get(AI_RESPONSE_TOOL_CALLS))
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                parts.append({"type": "tool_call", "id": call.get("toolCallId"), "name": call.get("toolName"),
                              "arguments": _load(call.get("input", call.get("args")))})
        if parts:
            message: dict[str, Any] = {"role": "assistant", "parts": parts}
            if reason:
                message["finish_reason"] = reason
            out.output = _dump([message])
    elif operation_id == _AI_TOOL_CALL:
        out.set("operation", "execute_tool")
        out.set("tool_name", _str(get(AI_TOOL_NAME)))
        out.set("tool_call_id", _str(get(AI_TOOL_ID)))
        out.input = _str(_first(attributes, AI_TOOL_ARGS))
        out.output = _str(_first(attributes, AI_TOOL_RESULT))


def _vercel_message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        return {"role": role, "parts": [{"type": "text", "content": content}]}
    parts = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append({"type": "text", "content": part.get("text")})
        elif kind == "tool-call":
            parts.append({"type": "tool_call", "id": part.get("toolCallId"), "name": part.get("toolName"),
                          "arguments": part.get("input", part.get("args"))})
        elif kind == "tool-result":
            result = part.get("output", part.get("result"))
            if isinstance(result, dict) and "value" in result:  # ai v5: {"type": "text"|"json", "value": ...}
                result = result["value"]
            parts.append({"type": "tool_call_response", "id": part.get("toolCallId"), "response": result})
        else:
            parts.append(part)
    return {"role": role, "parts": parts}


# -- MCP ------------------------------------------------------------------------------------------------


def _mcp(attributes: Mapping[str, Any], name: str, kind: str, out: Derived) -> None:
    out.dialects.append("mcp")
    if attributes.get(MCP_METHOD) != MCP_TOOLS_CALL:
        return
    out.set("operation", "execute_tool")
    if semconv.GEN_AI_TOOL_NAME not in attributes:
        # The client's span names the tool only in its name: "MCP send tools/call <tool>".
        _, _, tool = name.partition(MCP_TOOLS_CALL)
        out.set("tool_name", tool.strip() or None)


# -- pydantic-ai ----------------------------------------------------------------------------------------


def _pydantic_ai(attributes: Mapping[str, Any], out: Derived) -> None:
    get = attributes.get
    out.dialects.append("pydantic-ai")
    if get(PAI_TOOL_ARGUMENTS) is not None or get(PAI_TOOL_RESPONSE) is not None:
        out.set("operation", "execute_tool")
        out.input = _str(get(PAI_TOOL_ARGUMENTS))
        out.output = _str(get(PAI_TOOL_RESPONSE))
    elif get(PAI_FINAL_RESULT) is not None or get(PAI_ALL_MESSAGES) is not None:
        out.set("operation", "invoke_agent")
        out.output = _str(get(PAI_FINAL_RESULT))


# -- OpenLIT -------------------------------------------------------------------------------------------


def _openlit(attributes: Mapping[str, Any], out: Derived) -> None:
    get = attributes.get
    out.dialects.append("openlit")
    operation = get(_OPERATION) or out.columns.get("operation")
    if operation == TOOL_OPERATION:
        if semconv.GEN_AI_TOOL_CALL_ARGUMENTS not in attributes:
            out.input = tool_arguments(_first(attributes, OL_TOOL_ARGS))
        if semconv.GEN_AI_TOOL_CALL_RESULT not in attributes:
            out.output = tool_result(get(OL_TOOL_OUTPUT))
        return
    if operation not in MODEL_OPERATIONS:
        return
    if semconv.GEN_AI_TOOL_CALL_ARGUMENTS in attributes and semconv.GEN_AI_INPUT_MESSAGES in attributes:
        out.input_from = semconv.GEN_AI_INPUT_MESSAGES
    if semconv.GEN_AI_OUTPUT_MESSAGES in attributes:
        return
    # Before gen_ai.*.messages (1.3x): the prompt as "role: content" lines, the answer's text, and the calls it
    # asked for in gen_ai.tool.* beside them.
    if out.input is not None and out.input[:1] not in ("[", "{"):
        out.input = _dump(_role_lines(out.input))
    names = _str(get(semconv.GEN_AI_TOOL_NAME))
    if not names:
        return
    text = out.output
    ids = (_str(get(semconv.GEN_AI_TOOL_CALL_ID)) or "").split(_OL_JOIN)
    arguments = _joined_json(_str(_first(attributes, OL_TOOL_ARGS)) or "")
    parts: list[dict[str, Any]] = [{"type": "text", "content": text}] if text and text[:1] not in ("[", "{") else []
    for i, tool in enumerate(names.split(_OL_JOIN)):
        parts.append({"type": "tool_call", "id": ids[i] if i < len(ids) and ids[i] else None, "name": tool,
                      "arguments": arguments[i] if i < len(arguments) else None})
    out.output = _dump([{"role": "assistant", "parts": parts}])


_ROLE_NAMES = ("system", "developer", "user", "assistant", "tool", "function")


def _role_lines(text: str) -> list[dict[str, Any]]:
    """OpenLIT's prompt text (`user: ...` a message, a message's further lines after it) as GenAI messages."""
    messages: list[dict[str, Any]] = []
    for line in text.split("\n"):
        role, colon, content = line.partition(": ")
        if colon and role in _ROLE_NAMES:
            messages.append({"role": role, "parts": [{"type": "text", "content": content}]})
        elif messages:
            messages[-1]["parts"][0]["content"] += "\n" + line
        else:
            messages.append({"role": "user", "parts": [{"type": "text", "content": line}]})
    return messages


def _joined_json(text: str) -> list[Any]:
    """JSON values joined by ", " (OpenLIT's several tool calls' arguments), each as its value."""
    values: list[Any] = []
    decoder = json.JSONDecoder()
    at = 0
    while at < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return values + [text[at:]]
        values.append(value)
        if text.startswith(_OL_JOIN, at):
            at += len(_OL_JOIN)
    return values


# -- Google ADK ----------------------------------------------------------------------------------------


def _adk(attributes: Mapping[str, Any], name: str, out: Derived) -> None:
    get = attributes.get
    out.dialects.append("adk")
    out.set("session_id", _str(get(ADK_SESSION)))
    if ADK_TOOL_ARGS in attributes:
        out.set("operation", TOOL_OPERATION)
        if name.startswith(_ADK_TOOL_SPAN):
            out.set("tool_name", name[len(_ADK_TOOL_SPAN):])
        response = _load(get(ADK_TOOL_RESPONSE))
        content = response.get("content") if isinstance(response, dict) else None
        if isinstance(content, dict):  # before 1.0: the whole response event
            answers = [p["function_response"] for p in content.get("parts") or () if isinstance(p, dict)
                       and isinstance(p.get("function_response"), dict)]
            if answers:
                out.set("tool_call_id", _str(answers[0].get("id")))
                response = answers[0].get("response")
        if isinstance(response, dict) and set(response) == {"result"}:
            response = response["result"]  # ADK's wrapping of a tool's plain return value
        out.input = _str(get(ADK_TOOL_ARGS))
        out.output = None if response is None else response if isinstance(response, str) else _dump(response)
        return
    result = _load(get(semconv.GEN_AI_TOOL_CALL_RESULT))
    if isinstance(result, dict) and set(result) == {"result"}:  # 2.x, the current attributes: the same wrapping
        value = result["result"]
        out.output = value if isinstance(value, str) else _dump(value)
        out.mends = True
        return
    request = _load(get(ADK_LLM_REQUEST))
    if not isinstance(request, dict) or not request.get("contents"):
        return  # a tool span's placeholder ("{}"), or no model call
    out.set("operation", "chat")
    out.set("request_model", _str(request.get("model")))
    config = request.get("config") if isinstance(request.get("config"), dict) else {}
    messages = [_gemini_content(c) for c in request["contents"] if isinstance(c, dict)]
    system = config.get("system_instruction")
    if system:
        messages.insert(0, {**_gemini_content(system if isinstance(system, dict) else {"parts": [{"text": system}]}),
                            "role": "system"})
    out.input = _dump(messages)
    out.offer(tool_definitions(config.get("tools")))
    response = _load(get(ADK_LLM_RESPONSE))
    if not isinstance(response, dict):
        return
    usage = response.get("usage_metadata")
    if isinstance(usage, dict):
        out.set("input_tokens", _int(usage.get("prompt_token_count")))
        out.set("output_tokens", _int(usage.get("candidates_token_count")))
        out.set("cache_read_tokens", _int(usage.get("cached_content_token_count")))
        out.set("reasoning_tokens", _int(usage.get("thoughts_token_count")))
    out.set("response_model", _str(response.get("model_version")))
    if isinstance(response.get("content"), dict):
        answer = _gemini_content(response["content"])
        reason = _str(response.get("finish_reason"))
        if reason:
            answer["finish_reason"] = reason.lower()
            out.set("finish_reasons", [reason.lower()])
        out.output = _dump([answer])


def _gemini_content(content: Mapping[str, Any]) -> dict[str, Any]:
    """A google-genai Content (`{"role", "parts": [{"text"} | {"function_call"} | {"function_response"}]}`) as a
    GenAI message."""
    parts: list[dict[str, Any]] = []
    for part in content.get("parts") or ():
        if not isinstance(part, dict):
            continue
        call, answer = part.get("function_call"), part.get("function_response")
        if isinstance(call, dict):
            parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("name"), "arguments": call.get("args")})
        elif isinstance(answer, dict):
            parts.append({"type": "tool_call_response", "id": answer.get("id"), "name": answer.get("name"),
                          "response": answer.get("response")})
        elif part.get("text") is not None:
            parts.append({"type": "text", "content": part["text"]})
        else:
            parts.append(part)
    role = str(content.get("role") or "user")
    return {"role": _ROLES.get(role, role), "parts": parts}


# -- LiteLLM --------------------------------------------------------------------------------------------


def _litellm(attributes: Mapping[str, Any], out: Derived) -> None:
    out.dialects.append("litellm")
    messages = _load(attributes.get(semconv.GEN_AI_INPUT_MESSAGES))
    if isinstance(messages, list) and any(isinstance(m, dict) and (LL_TOOL_CALLS in m or LL_TOOL_CALL_ID in m)
                                          for m in messages):
        out.input = _dump([_without_leftovers(m) for m in messages])
        out.mends = True
    answers = _load(attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES))
    calls = [fields for _, fields in sorted(_unflatten(attributes, GEN_AI_COMPLETION_PREFIX).items())
             if fields.get(LL_FUNCTION_CALL + "name")]
    if isinstance(answers, list) and len(answers) == 1 and isinstance(answers[0], dict) and calls and not any(
            isinstance(p, dict) and p.get("type") == "tool_call" for p in answers[0].get("parts") or ()):
        answer = _without_leftovers(answers[0])
        answer["parts"] += [{"type": "tool_call", "id": None, "name": _str(c[LL_FUNCTION_CALL + "name"]),
                             "arguments": _load(c.get(LL_FUNCTION_CALL + "arguments"))} for c in calls]
        out.output = _dump([answer])
        out.mends = True


def _without_leftovers(message: Any) -> Any:
    """One of LiteLLM's messages in the GenAI shape: its OpenAI-form `tool_calls` as tool_call parts (the empty
    text beside them dropped), a tool message's text as the response to its `tool_call_id`."""
    if not isinstance(message, dict):
        return message
    message = dict(message)
    calls, call_id = message.pop(LL_TOOL_CALLS, None), message.pop(LL_TOOL_CALL_ID, None)
    given = message.get("parts")
    parts = [p for p in given if not (isinstance(p, dict) and p.get("type") == "text" and p.get("content") in ("", None))
             ] if isinstance(given, list) else []
    if call_id is not None and message.get("role") == "tool":
        texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        response = texts[0] if len(texts) == 1 and len(parts) == 1 else parts
        parts = [{"type": "tool_call_response", "id": _str(call_id), "response": response}]
    message["parts"] = parts + _message("assistant", None, calls, None)["parts"]
    return message


# -- Semantic Kernel ------------------------------------------------------------------------------------


def _semantic_kernel(attributes: Mapping[str, Any], out: Derived) -> None:
    out.dialects.append("semantic-kernel")
    reasons = _str(attributes.get(SK_FINISH_REASON))
    if reasons:
        out.set("finish_reasons", [r.strip().removeprefix(SK_ENUM).lower() for r in reasons.split(",")])
    for key, side in ((semconv.GEN_AI_INPUT_MESSAGES, "input"), (semconv.GEN_AI_OUTPUT_MESSAGES, "output")):
        messages = _load(attributes.get(key))
        if isinstance(messages, list) and any(isinstance(m, dict) and "parts" not in m for m in messages):
            setattr(out, side, _dump([_provider_message(m) if isinstance(m, dict) and "parts" not in m else m
                                      for m in messages]))
            out.mends = True


# -- Strands Agents -------------------------------------------------------------------------------------


def _strands(attributes: Mapping[str, Any], events: Sequence[Any], out: Derived) -> None:
    get = attributes.get
    out.dialects.append("strands")
    operation = get(_OPERATION)
    if operation == TOOL_OPERATION:
        name, schema = _str(get(semconv.GEN_AI_TOOL_NAME)), _load(get(ST_TOOL_SCHEMA))
        if name and isinstance(schema, dict):  # the tool's own definition, which check holds the offered one to
            description = _str(get(semconv.GEN_AI_TOOL_DESCRIPTION))
            out.offer([{"type": "function", "name": name, **({"description": description} if description else {}),
                        "parameters": schema}])
        for _time, event_name, event_attributes in events:
            attrs = event_attributes or {}
            if event_name == ST_TOOL_INPUT_EVENT and out.input is None:
                out.input = _str(attrs.get(ST_CONTENT))
            elif event_name == _CHOICE_EVENT and out.output is None and attrs.get(ST_MESSAGE) is not None:
                out.output = tool_result(attrs[ST_MESSAGE])
            elif event_name == GEN_AI_OPERATION_DETAILS_EVENT and out.output is None:
                # The latest form: the result as a tool message (a failed call's only record of its error text).
                messages = _load(attrs.get(semconv.GEN_AI_OUTPUT_MESSAGES))
                parts = [p for m in messages if isinstance(m, dict) for p in m.get("parts") or ()] if isinstance(
                    messages, list) else []
                answers = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
                if answers:
                    out.output = tool_result(answers[0].get("response"))
        return
    if operation not in MODEL_OPERATIONS and operation != "invoke_agent":
        return  # execute_event_loop_cycle: one turn of the loop, no step of its own
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for _time, event_name, event_attributes in events:
        attrs = event_attributes or {}
        role = _MESSAGE_EVENTS.get(event_name)
        if role is not None and ST_CONTENT in attrs:
            inputs.append(_converse_message(role, _load(attrs[ST_CONTENT])))
        elif event_name == _CHOICE_EVENT and ST_MESSAGE in attrs:
            answer = _converse_message("assistant", _load(attrs[ST_MESSAGE]))
            reason = _str(attrs.get(ST_FINISH_REASON))
            if reason:
                answer["finish_reason"] = reason
                out.set("finish_reasons", [reason])
            outputs.append(answer)
    if inputs and out.input is None:
        out.input = _dump(inputs)
    if outputs and out.output is None:
        out.output = _dump(outputs)


def _converse_message(role: str, content: Any) -> dict[str, Any]:
    """A Strands message (Converse blocks, or plain text) as a GenAI message."""
    from agentotel.providers._bedrock_converse import converse_parts  # only once a Strands span comes

    if not isinstance(content, list):
        return _message(role, content, None, None)
    try:
        parts = converse_parts([b for b in content if isinstance(b, (dict, str))])
    except (TypeError, KeyError, AttributeError):  # blocks of some other shape: kept as they came
        parts = [p if isinstance(p, dict) else {"type": "text", "content": _str(p)} for p in content]
    if role == "user" and parts and all(p.get("type") == "tool_call_response" for p in parts):
        role = "tool"
    return {"role": role, "parts": parts}


# -- Langfuse -------------------------------------------------------------------------------------------


def _langfuse(attributes: Mapping[str, Any], name: str, out: Derived) -> None:
    get = attributes.get
    out.dialects.append("langfuse")
    operation = LF_KINDS.get(str(get(LF_TYPE)).lower())
    out.set("operation", operation)
    payload_in, payload_out = get(LF_INPUT), get(LF_OUTPUT)
    if operation == "chat" or operation == "embeddings":
        model = _str(get(LF_MODEL))
        out.set("request_model", model)
        out.set("response_model", model)
        _usage(_load(get(LF_USAGE)), out)
        cost = _load(get(LF_COST))
        if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)):
            out.set("cost_usd", float(cost["total"]))
        if operation == "chat":
            _chat_payloads(_load(payload_in), _load(payload_out), out)
            return
    elif operation == TOOL_OPERATION:
        out.set("tool_name", name)
        out.set("tool_call_id", _call_id_in(payload_in) or _call_id_in(payload_out))
        payload_in, payload_out = tool_arguments(payload_in), tool_result(payload_out)
    out.input = _str(payload_in if payload_in is not None else get(LF_TRACE_INPUT))
    out.output = _str(payload_out if payload_out is not None else get(LF_TRACE_OUTPUT))


# -- MLflow ---------------------------------------------------------------------------------------------


def _mlflow(attributes: Mapping[str, Any], name: str, out: Derived) -> None:
    get = attributes.get
    out.dialects.append("mlflow")
    operation = ML_KINDS.get(str(_load(get(ML_SPAN_TYPE))).upper())
    out.set("operation", operation)
    inputs, outputs = _load(get(ML_INPUTS)), _load(get(ML_OUTPUTS))
    if operation == "chat" or operation == "embeddings":
        out.set("provider", _str(_load(get(ML_PROVIDER)) or _load(get(ML_MESSAGE_FORMAT))))
        requested = inputs.get("model") if isinstance(inputs, dict) else None
        model = _str(_load(get(ML_MODEL)))
        out.set("request_model", _str(requested) or model)
        out.set("response_model", model)
        _usage(_load(get(ML_TOKEN_USAGE)), out)
        cost = _load(get(ML_COST))
        if isinstance(cost, dict) and isinstance(cost.get("total_cost"), (int, float)):
            out.set("cost_usd", float(cost["total_cost"]))
        if operation == "chat":
            messages = _load(get(ML_CHAT_MESSAGES))
            if isinstance(messages, list) and not (isinstance(inputs, dict) and "messages" in inputs):
                # MLflow 2.x: the answer is the last message of the list
                answer = messages[-1:] if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "assistant" else []
                inputs, outputs = {"messages": messages[:len(messages) - len(answer)]}, outputs or (answer[0] if answer else None)
            _chat_payloads(inputs, outputs, out)
            out.offer(tool_definitions(_load(get(ML_CHAT_TOOLS))))
            return
    elif operation == TOOL_OPERATION:
        out.set("tool_name", _str(name or _load(get(ML_FUNCTION_NAME))))
        out.set("tool_call_id", _call_id_in(_str(inputs)) or _call_id_in(_str(outputs)))
        out.input = tool_arguments(inputs if inputs is None or isinstance(inputs, str) else _dump(inputs))
        out.output = tool_result(_str(outputs))
        return
    out.input = _str(inputs)
    out.output = _str(outputs)


# -- what Langfuse's and MLflow's model calls hold: the provider's own request and response ----------------

_USAGE_KEYS = (
    ("input_tokens", ("input", "input_tokens", "prompt_tokens", "promptTokens")),
    ("output_tokens", ("output", "output_tokens", "completion_tokens", "completionTokens")),
    ("cache_read_tokens", ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "cached_tokens")),
    ("cache_write_tokens", ("cache_creation_input_tokens", "input_cache_creation")),
    ("reasoning_tokens", ("output_reasoning_tokens", "reasoning_tokens", "output_reasoning")),
)


def _usage(usage: Any, out: Derived) -> None:
    """Token counts out of a usage object: Langfuse's (`input`, `output`, `input_cached_tokens`, ...), MLflow's,
    or the provider's own (OpenAI's `prompt_tokens` and `*_details`, Anthropic's `cache_*_input_tokens`)."""
    if not isinstance(usage, dict):
        return
    flat = dict(usage)
    for details in ("prompt_tokens_details", "input_tokens_details", "completion_tokens_details", "output_tokens_details"):
        if isinstance(usage.get(details), dict):
            flat.update({k: v for k, v in usage[details].items() if k not in flat})
    for column, keys in _USAGE_KEYS:
        out.set(column, _int(_first(flat, keys)))


def _chat_payloads(request: Any, response: Any, out: Derived) -> None:
    """A model call's request (`{"messages", "tools", ...}`, a message list, or text) and response (a chat
    completion, an Anthropic message, one message, or text) in the GenAI shape; the tools it was offered."""
    messages = request.get("messages") if isinstance(request, dict) else request
    if isinstance(messages, list):
        converted = [_provider_message(m) for m in messages if isinstance(m, dict)]
        system = request.get("system") if isinstance(request, dict) else None  # Anthropic's
        if system:
            converted.insert(0, _message("system", system, None, None))
        out.input = _dump(converted)
    elif messages is not None:
        out.input = _dump([_message("user", messages, None, None)])
    if isinstance(request, dict):
        out.offer(tool_definitions(request.get("tools")))
    answers: list[dict[str, Any]] = []
    reasons: list[str] = []
    choices = response.get("choices") if isinstance(response, dict) else None
    if isinstance(choices, list):  # a chat completion
        for choice in choices:
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                answers.append(_provider_message(choice["message"], choice.get("finish_reason")))
    elif isinstance(response, dict) and ("role" in response or "content" in response):
        answers.append(_provider_message({"role": "assistant", **response}, response.get("stop_reason")))
    elif isinstance(response, str) and response:
        answers.append(_message("assistant", response, None, None))
    for answer in answers:
        if answer.get("finish_reason"):
            reasons.append(answer["finish_reason"])
    if answers:
        out.output = _dump(answers)
    if reasons:
        out.set("finish_reasons", reasons)


def _provider_message(message: Mapping[str, Any], finish_reason: Any = None) -> dict[str, Any]:
    """One provider message (OpenAI's, or Anthropic's content blocks) as a GenAI message."""
    content = message.get("content")
    calls = message.get("tool_calls")
    tool_call_id = message.get("tool_call_id")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result", "text")
                                         for b in content):
        parts: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                parts.append({"type": "text", "content": block.get("text")})
            elif kind == "tool_use":
                parts.append({"type": "tool_call", "id": block.get("id"), "name": block.get("name"),
                              "arguments": block.get("input")})
            elif kind == "tool_result":
                parts.append({"type": "tool_call_response", "id": block.get("tool_use_id"), "response": block.get("content")})
            else:
                parts.append(block if isinstance(block, dict) else {"type": "text", "content": _str(block)})
        converted = {"role": _ROLES.get(str(message.get("role")), message.get("role")), "parts": parts}
    else:
        converted = _message(str(message.get("role") or "user"), content, calls, tool_call_id, _str(message.get("name")))
    if finish_reason:
        converted["finish_reason"] = _str(finish_reason)
    return converted


# -- helpers --------------------------------------------------------------------------------------------


def _unflatten(attributes: Mapping[str, Any], prefix: str, keys: Sequence[str] | None = None) -> dict[int, dict[str, Any]]:
    """`prefix.N.rest = v` attributes as {N: {rest: v}}."""
    found: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key in keys if keys is not None else attributes:
        if not key.startswith(prefix):
            continue
        index, _, rest = key[size:].partition(".")
        if index.isdigit() and rest:
            found.setdefault(int(index), {})[rest] = attributes[key]
    return found


# OpenInference leaves a call's arguments out when they are `{}` (a handoff's transfer_to_<agent>, any call
# without parameters): a named call without them had none.
_NO_ARGUMENTS = "{}"


def _flat_messages(flat: Mapping[int, Mapping[str, Any]], at: str, default_role: str,
                   omitted_arguments: str | None = None) -> list[dict[str, Any]]:
    """Flattened messages (OpenInference's `message.*`, the older GenAI `N.*`) as GenAI messages; a named tool
    call without arguments gets `omitted_arguments` (the flattening's way of writing none), when given."""
    messages = []
    for _, fields in sorted(flat.items()):
        calls: dict[int, dict[str, Any]] = {}
        texts: dict[int, str] = {}
        for key, value in fields.items():
            if not key.startswith(at):
                continue
            key = key[len(at):]
            if key.startswith("tool_calls."):
                index, _, rest = key[len("tool_calls."):].partition(".")
                if index.isdigit():
                    rest = rest.removeprefix("tool_call.")
                    calls.setdefault(int(index), {})[rest.removeprefix("function.")] = value
            elif key.startswith("contents."):
                index, _, rest = key[len("contents."):].partition(".")
                if index.isdigit() and rest.endswith("text") and value != "":  # (LlamaIndex's beside a call: empty)
                    texts[int(index)] = _str(value)
        if omitted_arguments is not None:
            for call in calls.values():
                if call.get("name") and "arguments" not in call:
                    call["arguments"] = omitted_arguments
        message = _message(
            _str(fields.get(at + "role")) or default_role,
            fields.get(at + "content"),
            [calls[i] for i in sorted(calls)],
            fields.get(at + "tool_call_id"),
            _str(fields.get(at + "name")),
        )
        for i in sorted(texts):
            message["parts"].append({"type": "text", "content": texts[i]})
        reason = fields.get(at + "finish_reason")
        if reason is not None:
            message["finish_reason"] = _str(reason)
        messages.append(message)
    return messages


# Gemini's role for the model's turns (OpenInference keeps it as the SDK has it): the GenAI shape's `assistant`.
_ROLES = {"model": "assistant"}


def _message(role: str, content: Any, tool_calls: Any, tool_call_id: Any, name: str | None = None) -> dict[str, Any]:
    """One GenAI message: text content, tool calls (`{id, name, arguments}` or OpenAI's `function` form).

    A tool message names the call it answers by id, or (Gemini's function responses: no ids) by its tool's
    `name`, which its result part keeps so the trajectory can pair it with the call (query/trajectory.py)."""
    role = _ROLES.get(role, role)
    parts: list[dict[str, Any]] = []
    if role == "tool" and tool_call_id is not None:
        parts.append({"type": "tool_call_response", "id": _str(tool_call_id), "response": content})
    elif role == "tool" and name:
        parts.append({"type": "tool_call_response", "id": None, "name": name, "response": content})
    elif isinstance(content, list):
        parts.extend(p if isinstance(p, dict) else {"type": "text", "content": _str(p)} for p in content)
    elif content is not None and content != "":
        parts.append({"type": "text", "content": _str(content)})
    for call in tool_calls if isinstance(tool_calls, list) else ():
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        parts.append({"type": "tool_call", "id": _str(call.get("id")), "name": _str(function.get("name")),
                      "arguments": _load(function.get("arguments"))})
    return {"role": role, "parts": parts}


_CALL_ID_KEY = "tool_call_id"


def _call_id_in(payload: Any) -> str | None:
    """The tool call id a framework's serialised tool input or output holds (LangChain's ToolMessage, say)."""
    if not isinstance(payload, str) or f'"{_CALL_ID_KEY}"' not in payload:
        return None
    stack = [_load(payload)]
    for _ in range(64):  # a few levels of wrapping, never a deep walk
        if not stack:
            break
        value = stack.pop()
        if isinstance(value, dict):
            found = value.get(_CALL_ID_KEY)
            if isinstance(found, str) and found:
                return found
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
    return None


_TOOL_MESSAGE = "ToolMessage"


# Where an app's own root span (OpenInference CHAIN, traceloop workflow, the AI SDK's ai.generateText /
# ai.streamText: no step of its own) keeps what it was asked and what it answered, in order of preference.
RUN_INPUT_KEYS = (OI_INPUT_VALUE, TL_ENTITY_INPUT, AI_PROMPT)
RUN_OUTPUT_KEYS = (OI_OUTPUT_VALUE, TL_ENTITY_OUTPUT, AI_RESPONSE_TEXT)


def run_payloads(attributes: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The task and the answer a run recorded by another instrumentation keeps on its root span's attributes."""
    def first(keys: Sequence[str]) -> str | None:
        return next((_str(attributes[k]) for k in keys if attributes.get(k) not in (None, "")), None)

    return first(RUN_INPUT_KEYS), first(RUN_OUTPUT_KEYS)


def tool_result(payload: Any) -> str | None:
    """A tool's result, out of the LangChain ToolMessage other instrumentations serialise around it.

    OpenInference stores `{"type": "tool", "data": {...}}`, OpenLLMetry `{"output": {"lc": 1, "id":
    [..., "ToolMessage"], "kwargs": {...}}, "kwargs": {...}}`: the tool returned the message's content. Strands
    keeps its ToolResult's text blocks (`[{"text": ...}]`): the tool returned their text. Anything else is kept
    as it came.
    """
    text = _str(payload)
    if text is None:
        return None
    if text.startswith(_REPR_CONTENT):
        return _repr_content(text)
    if text.startswith(_TEXT_BLOCKS):
        return _converse_text(text)
    if f'"{_CALL_ID_KEY}"' not in text:
        return text
    value = _load(text)
    if isinstance(value, dict) and "output" in value and set(value) <= {"output", "kwargs"}:
        value = value["output"]
    if isinstance(value, dict):
        ids = value.get("id")
        if value.get("type") == "tool" and isinstance(value.get("data"), dict):
            value = value["data"]
        elif value.get("lc") and isinstance(ids, list) and ids[-1:] == [_TOOL_MESSAGE] and isinstance(value.get("kwargs"), dict):
            value = value["kwargs"]
        else:
            return text
        if "content" in value and _CALL_ID_KEY in value:
            content = value["content"]
            return content if isinstance(content, str) else _dump(content)
    return text


# LangChain's ToolMessage as Python prints it, `content='...' name='...' tool_call_id='...'` (OpenLIT's tool results).
_REPR_CONTENT = "content="
_REPR_STRING = re.compile(r"""content=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(?= name=| tool_call_id=)""")


# A Strands tool's result: its ToolResult's content, Converse blocks ([{"text": ...}], as the model is given it).
_TEXT_BLOCKS = '[{"text"'


def _converse_text(text: str) -> str:
    """The text of Converse text blocks; anything else as it came."""
    value = _load(text)
    if isinstance(value, list) and all(isinstance(b, dict) and set(b) == {"text"} and isinstance(b["text"], str)
                                       for b in value):
        return "".join(b["text"] for b in value)
    return text


def _repr_content(text: str) -> str:
    """The content of a ToolMessage's repr; anything else as it came."""
    found = _REPR_STRING.match(text)
    if found is None or f" {_CALL_ID_KEY}=" not in text:
        return text
    try:
        return str(ast.literal_eval(found.group(1)))
    except (ValueError, SyntaxError):
        return text


def _literal(text: str) -> str:
    """A Python literal's repr as JSON text; anything else as it came."""
    try:
        return _dump(ast.literal_eval(text))
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return text


def tool_arguments(payload: Any) -> str | None:
    """A tool's arguments, out of OpenLLMetry's LangChain wrapper (`{"input_str": ..., "inputs": {...}}`) or its
    `@tool` decorator's (`{"args": [], "kwargs": {...}}`: a call by keyword, as tool loops make them; positional
    values have no names to give, so such a call is kept as it came)."""
    text = _str(payload)
    if text is not None and text.startswith("{'"):  # a Python dict's repr (OpenLIT's LangChain tool spans)
        return _literal(text)
    if text is None or ('"inputs"' not in text and '"kwargs"' not in text):
        return text
    value = _load(text)
    if isinstance(value, dict) and "input_str" in value and isinstance(value.get("inputs"), dict):
        return _dump(value["inputs"])
    if isinstance(value, dict) and set(value) == {"args", "kwargs"} and value["args"] == [] and isinstance(value["kwargs"], dict):
        return _dump(value["kwargs"])
    return text


def tool_definitions(items: Any) -> list[dict[str, Any]]:
    """Tool definitions as providers and instrumentations write them, in the GenAI form (`{"type", "name",
    "description", "parameters"}`): OpenAI's `{"type": "function", "function": {...}}`, the Responses API's and
    the GenAI flat form, Anthropic's `input_schema`, the AI SDK's and MCP's `inputSchema`, Bedrock's
    `toolSpec`, Gemini's `function_declarations`; each item a value or its JSON text. A tool with no name (a
    provider's built-in one) is kept as it came."""
    out: list[dict[str, Any]] = []
    for item in items if isinstance(items, (list, tuple)) else ():
        item = _load(item)
        if not isinstance(item, dict):
            continue
        declarations = item.get("function_declarations", item.get("functionDeclarations"))
        if isinstance(declarations, list):
            out.extend(tool_definitions(declarations))
            continue
        function = item.get("function") if isinstance(item.get("function"), dict) else item.get("toolSpec")
        function = function if isinstance(function, dict) else item
        name = function.get("name")
        if not name:
            out.append(item)
            continue
        definition: dict[str, Any] = {"type": _str(item.get("type")) or "function", "name": _str(name)}
        if function.get("description"):
            definition["description"] = _str(function["description"])
        parameters = _load(_first(function, ("parameters", "input_schema", "inputSchema")))
        if isinstance(parameters, dict) and set(parameters) == {"json"}:  # Bedrock: {"inputSchema": {"json": {...}}}
            parameters = _load(parameters["json"])
        if parameters is not None:
            definition["parameters"] = parameters
        out.append(definition)
    return out


def _first(attributes: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None


def _str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return _dump(value)


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return None


def _load(value: Any) -> Any:
    """A JSON text as its value (a value that is not JSON text stays as it is)."""
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)
