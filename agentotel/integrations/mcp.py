"""MCP clients (`mcp` 1.x and 2.x): tool calls, tool listings, trace context to the server.

- `ClientSession.call_tool` is an `execute_tool {tool}` span (tool type `extension`, the server's name
  in `agentotel.tool.server`): the arguments, the result (the structured content - what a tool with an
  output schema returned -, else the list of its content blocks, a single text block's text; an error's text), `isError` as an ERROR
  status, and the model's call id when a model of the run asked for this call (MCP itself carries none).
  Called inside a framework's tool call of the same tool (an Agents SDK agent's MCP tools, a pydantic-ai
  `MCPToolset`'s through fastmcp's client and its span), it completes that call's span, its result the
  step's, instead of adding one below it.
- `ClientSession.list_tools`' definitions go into the environment with their schema hashes: the current
  run's tool definitions, or, outside any run, the process's tools the next run records.
- The request's `_meta` carries the W3C trace context of the tool's span, so an instrumented server's
  spans join the run (mcp 2.x injects it itself; on 1.x agentotel adds it where `call_tool` takes `meta`).
  mcp 2.x's own client span of the call and the server's span below it (from the server's process, in
  a batch of its own) are second records of this step: the store counts one tool step, the server's
  span kept below it in the span tree.
- A session's own requests outside any run and any span (initialize, tools/list before the agent starts)
  are not traced: mcp 2.x would otherwise record each as a trace, and so a run, of its own.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from agentotel import _context, _json
from agentotel._internal import report_internal_error
from agentotel.integrations._common import current_tool_span, suppressed
from agentotel.semconv import GEN_AI_TOOL_CALL_ID
from agentotel.tools import DefinedTool, ToolCall, defined_tool, start_tool_call

_TOOL_TYPE = "extension"  # GenAI: a tool the agent calls on an external service


def patches() -> list[tuple[Any, str, Any]]:
    from mcp.client.session import ClientSession

    global _injects_itself, _takes_meta
    _injects_itself = importlib.util.find_spec("mcp.shared._otel") is not None
    try:
        _takes_meta = "meta" in inspect.signature(ClientSession.call_tool).parameters
    except (TypeError, ValueError):
        _takes_meta = False
    out: list[tuple[Any, str, Any]] = [(ClientSession, "call_tool", _call_tool), (ClientSession, "list_tools", _list_tools)]
    if _injects_itself:  # mcp 2.x traces its own requests (every request goes through one of these)
        out += [(ClientSession, name, _send_request) for name in ("send_request", "send_discover") if name in ClientSession.__dict__]
    return out


_injects_itself = False
_takes_meta = False


# --- tools -------------------------------------------------------------------------------------------------


def _server_name(session: Any) -> str | None:
    info = getattr(session, "server_info", None)  # 2.x
    if info is None:
        result = getattr(session, "_initialize_result", None) or getattr(session, "initialize_result", None)
        info = getattr(result, "server_info", None) or getattr(result, "serverInfo", None)
    name = getattr(info, "name", None)
    return str(name) if name else None


# The definitions a session listed, by (session, tool name): a call's span carries its schema hash, and
# its result is unwrapped when the output schema is a server's `{"result": ...}` wrapper.
_listed: dict[tuple[int, str], tuple[Any, DefinedTool, bool]] = {}


def _listed_tool(session: Any, name: str) -> tuple[DefinedTool, bool] | None:
    entry = _listed.get((id(session), name))
    return (entry[1], entry[2]) if entry is not None and entry[0] is session else None


def _definition(session: Any, name: str) -> DefinedTool:
    listed = _listed_tool(session, name)
    return listed[0] if listed is not None else defined_tool(name, None, None, _TOOL_TYPE, _server_name(session))


def _wraps_result(schema: Any) -> bool:
    """The output schema is the `{"result": X}` object a Python server made of a tool returning X that is no
    object (a list, a string, a number): fastmcp marks it `x-fastmcp-wrap-result`; the mcp SDK's MCPServer /
    FastMCP says nothing, its wrapper is the model `<function>Output` with the one required field `result`. A
    tool's own model of one field `result` (titled by its class) is an object the tool returned: kept."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    if schema.get("x-fastmcp-wrap-result") is True:
        return True
    properties = schema.get("properties")
    return (isinstance(properties, dict) and list(properties) == ["result"] and schema.get("required") == ["result"]
            and str(schema.get("title", "")).endswith("Output"))


def _field(obj: Any, *names: str) -> Any:
    """The first of `names` the object's model declares (mcp 2.x's snake_case, else 1.x's camelCase): reading a
    field 2.x only keeps as a camelCase alias warns in the user's program."""
    declared = getattr(type(obj), "model_fields", None)
    for name in names:
        if declared is not None and name not in declared:
            continue
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return None


async def _list_tools(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    result = await wrapped(*args, **kwargs)
    try:
        if not suppressed():
            server = _server_name(instance)
            if len(_listed) > 4096:
                _listed.clear()
            for tool in getattr(result, "tools", None) or ():
                schema = _field(tool, "input_schema", "inputSchema")
                definition = defined_tool(str(tool.name), getattr(tool, "description", None), schema, _TOOL_TYPE, server)
                definition.register()
                wraps = _wraps_result(_field(tool, "output_schema", "outputSchema"))
                _listed[(id(instance), definition.name)] = (instance, definition, wraps)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.mcp.list_tools", exc)
    return result


def _tool_name(args: tuple, kwargs: dict) -> str:
    return str(args[0] if args else kwargs.get("name"))  # call_tool(name, arguments, ...)


def _start(session: Any, args: tuple, kwargs: dict) -> ToolCall | None:
    if suppressed():
        return None
    try:
        name = _tool_name(args, kwargs)
        arguments = args[1] if len(args) > 1 else kwargs.get("arguments")
        # A framework's tool that forwards to this MCP tool (an Agents SDK agent's `mcp_servers`) already has
        # the call's span: it becomes the MCP call (server, tool type, isError) instead of a second span
        # under it, which the store would count once but whose error status would then be lost.
        outer = current_tool_span(name)
        call_id = outer.attributes.get(GEN_AI_TOOL_CALL_ID) if outer is not None else None
        return start_tool_call(_definition(session, name), arguments if arguments is not None else {}, call_id, adopt=outer)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.mcp.call_tool", exc)
        return None


def _result(result: Any, wraps: bool, failed: bool) -> Any:
    """What the tool returned: its structured content (unwrapped from a server's `{"result": X}` wrapper), else
    the list of its content blocks; a failure's text as the server said it."""
    structured = _field(result, "structured_content", "structuredContent")
    if structured is not None and not failed:
        if wraps and isinstance(structured, dict) and list(structured) == ["result"]:
            return structured["result"]
        return structured
    parts = getattr(result, "content", None) or ()
    if failed:
        texts = [getattr(part, "text", None) for part in parts]
        if texts and all(isinstance(text, str) for text in texts):
            return "\n".join(texts)  # the error's message, one text as the model read it
    # The list, even of one block: a server answers a returned list as one block an item, so one block cannot be
    # told from a list of one, and a tool's result would otherwise change shape with its item count. But a single
    # block of plain text is a text tool's answer (a file's contents, a page): the text, as the model read it.
    blocks = [_block(part) for part in parts]
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return blocks[0]
    return blocks


def _block(part: Any) -> Any:
    """A content block as the tool gave it: a text block's text (the value, when the text is a JSON object or
    array - how a server writes an item that is not text), another block as its JSON."""
    text = getattr(part, "text", None)
    if isinstance(text, str):
        return _json.parse(text) if text[:1] in ("{", "[") else text
    dump = getattr(part, "model_dump", None)
    return dump(mode="json", exclude_none=True, by_alias=True) if callable(dump) else part


def _with_trace_context(kwargs: dict) -> dict:
    # mcp 1.x sends no trace context: put the tool span's into the request's `_meta`.
    meta = dict(kwargs.get("meta") or {})
    propagate.inject(meta)
    return {**kwargs, "meta": meta} if meta else kwargs


async def _call_tool(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return await wrapped(*args, **kwargs)
    call.attach()
    try:
        if not _injects_itself and _takes_meta:
            kwargs = _with_trace_context(kwargs)
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        call.fail(exc)
        raise
    failed = bool(_field(result, "is_error", "isError"))
    try:
        listed = _listed_tool(instance, _tool_name(args, kwargs))  # listed by now: the SDK lists them to validate a result
        value = _result(result, listed is not None and listed[1], failed)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.mcp.result", exc)
        value = None
    if failed:
        call.failed(value)
    else:
        call.succeed(value)
    return result


# --- a session's own requests outside runs ---------------------------------------------------------------


async def _send_request(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if _context.current_run() is not None or trace.get_current_span().get_span_context().is_valid:
        return await wrapped(*args, **kwargs)
    # A parent that is not sampled: the SDK's span of this request (and an instrumented server's, which
    # gets this trace context) are not recorded, so set-up before a run is no run of its own.
    parent = NonRecordingSpan(SpanContext(
        trace_id=int.from_bytes(os.urandom(16), "big") or 1, span_id=int.from_bytes(os.urandom(8), "big") or 1,
        is_remote=False, trace_flags=TraceFlags(TraceFlags.DEFAULT),
    ))
    token = context.attach(trace.set_span_in_context(parent))
    try:
        return await wrapped(*args, **kwargs)
    finally:
        context.detach(token)
