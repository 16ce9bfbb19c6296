"""MCP client under `agentotel.instrument()` only: a real in-memory MCP server, an openai tool loop."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from openai import AsyncOpenAI
from opentelemetry import trace
from pydantic import BaseModel

import agentotel
from agentotel import semconv as sc
from tests.integrations.conftest import ANSWER, assert_one_linked_tool_call

_SDK_TRACES = importlib.util.find_spec("mcp.shared._otel") is not None  # mcp 2.x traces its own requests
server = MCPServer("weather-server")
seen_traces: list[str] = []


@server.tool()
def get_weather(city: str) -> str:
    """Current weather of a city."""
    seen_traces.append(format(trace.get_current_span().get_span_context().trace_id, "032x"))
    return f"18C, cloudy in {city}"


@server.tool()
def get_time(city: str) -> str:
    """Local time of a city."""
    return "12:00"


@server.tool()
def get_alerts(city: str) -> str:
    """Weather alerts of a city."""
    raise ValueError("alerts service down")


def _openai_tools(listed) -> list[dict]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                              "parameters": t.input_schema}} for t in listed.tools]


async def _agent(model_server, client: Client, listed) -> str:
    model = AsyncOpenAI(api_key="k", base_url=model_server.url)
    messages: list = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        reply = await model.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=_openai_tools(listed))
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            result = await client.session.call_tool(call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content[0].text})


def test_call_tool_in_an_openai_loop_is_a_linked_tool_step(store, model_server):
    seen_traces.clear()

    async def main():
        async with Client(server) as client:  # initialize and tools/list before the run
            listed = await client.session.list_tools()
            with agentotel.run("mcp-agent") as run:
                answer = await _agent(model_server, client, listed)
        return run, answer

    run, answer = asyncio.run(main())
    assert answer == ANSWER
    trajectory = store.only_run()  # session set-up made no run of its own
    assert trajectory.run["run_id"] == run.id
    step = assert_one_linked_tool_call(trajectory)
    assert step.output == "18C, cloudy in Paris"
    # The server ran the tool inside the run's trace: the request's _meta carried it.
    assert seen_traces == [run.trace_id]
    ((server_name, tool_type, schema_hash),) = store.traces().sql(
        f"select attributes['{sc.AGENTOTEL_TOOL_SERVER}'], attributes['{sc.GEN_AI_TOOL_TYPE}'], "
        f"attributes['{sc.AGENTOTEL_TOOL_SCHEMA_HASH}'] from tool_calls").fetchall()
    assert (server_name, tool_type) == ("weather-server", "extension") and schema_hash
    # The listed definitions are in the run's environment, with the span's schema hash.
    tools = json.loads(trajectory.environment[sc.AGENTOTEL_ENV_SNAPSHOT])["tools"]
    assert tools["get_weather"]["schema_hash"] == schema_hash and "get_time" in tools


def test_an_error_result_is_an_error_step(store):
    async def main():
        async with Client(server) as client:
            with agentotel.run("mcp-errors"):
                return await client.session.call_tool("get_alerts", {"city": "Paris"})

    result = asyncio.run(main())
    assert result.is_error
    (step,) = store.only_run().steps
    assert step.name == "execute_tool get_alerts" and step.status == "error"
    assert step.input == {"city": "Paris"} and step.error_type == "tool_error"
    assert step.output == "Error executing tool get_alerts"  # what the server answered (isError)


def test_session_set_up_with_the_sdks_own_tracing_is_no_run_of_its_own(store, model_server, monkeypatch):
    # mcp 2.x traces every request itself (its tracer comes from the global provider): record it here.
    from mcp.shared import _otel

    monkeypatch.setattr(_otel, "_tracer", store.provider.get_tracer("mcp-python-sdk"))

    async def main():
        async with Client(server) as client:
            listed = await client.session.list_tools()
            with agentotel.run("mcp-agent") as run:
                await _agent(model_server, client, listed)
        return run

    run = asyncio.run(main())
    traces = store.traces()
    assert [r[0] for r in traces.sql("select run_id from runs").fetchall()] == [run.id]
    # Inside the run the SDK's own spans are recorded: the server's span of the call joined the run.
    names = [r[0] for r in traces.sql("select name from spans where run_id = $r", {"r": run.id}).fetchall()]
    assert "tools/call get_weather" in names
    trajectory = traces.trajectory(run.id)
    own = [s for s in trajectory.steps if s.type == "tool" and s.depth == 0]
    assert len(own) == 1 and own[0].tool_call_id == "call_weather_1"


@pytest.mark.skipif(not _SDK_TRACES, reason="only mcp 2.x records its own client and server spans")
def test_a_server_in_its_own_process_recording_into_the_same_store_adds_no_step(store, model_server, monkeypatch):
    """mcp 2.x over stdio: the client SDK's span of tools/call inside agentotel's, the server's (written by
    the server's process, in a batch of its own) inside that: one tool step, the server's span below it."""
    from mcp import StdioServerParameters
    from mcp.shared import _otel

    monkeypatch.setattr(_otel, "_tracer", store.provider.get_tracer("mcp-python-sdk"))
    root = Path(__file__).resolve().parents[2]
    params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).with_name("mcp_server_process.py")),
                                   str(store.directory)], env={"PYTHONPATH": f"{root}{os.pathsep}{root / 'collector'}"})  # fmt: skip

    async def main():
        async with Client(params) as client:
            listed = await client.session.list_tools()
            with agentotel.run("mcp-agent") as run:
                await _agent(model_server, client, listed)
        return run

    run = asyncio.run(main())
    traces = store.traces()
    spans = traces.sql("select span_id, parent_span_id, name, kind from spans where operation = 'execute_tool'").fetchall()
    by_kind = {kind: (span_id, parent) for span_id, parent, _, kind in spans}
    assert set(by_kind) == {"INTERNAL", "CLIENT", "SERVER"}, spans  # agentotel's, the client SDK's, the server's
    trajectory = traces.trajectory(run.id)
    step = assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]
    assert traces.sql("select count(*) from steps where type = 'tool'").fetchall() == [(1,)]
    assert traces.sql("select span_id from tool_calls").fetchall() == [(step.span_id,)]  # one row a call in SQL too
    # The server's span stays in the store, linked below the step: its parent is the client SDK's span of the call.
    assert by_kind["SERVER"][1] == by_kind["CLIENT"][0] and by_kind["CLIENT"][1] == step.span_id == by_kind["INTERNAL"][0]


class Forecast(BaseModel):
    city: str
    temperature_c: int
    sky: str


@server.tool()
def get_forecast(city: str) -> Forecast:
    """Tomorrow's forecast of a city, as structured content."""
    return Forecast(city=city, temperature_c=18, sky="cloudy")


def test_a_structured_result_is_recorded_as_the_structured_content(store):
    """A tool with an output schema answers `structuredContent` (and its JSON as text): the step's result is the
    structured value, so a changed shape shows as one in diff and check."""
    async def main():
        async with Client(server) as client:
            with agentotel.run("mcp-structured"):
                return await client.session.call_tool("get_forecast", {"city": "Paris"})

    result = asyncio.run(main())
    assert result.structured_content == {"city": "Paris", "temperature_c": 18, "sky": "cloudy"}
    (step,) = store.only_run().steps
    assert (step.name, step.status, step.input) == ("execute_tool get_forecast", "ok", {"city": "Paris"})
    assert step.output == {"city": "Paris", "temperature_c": 18, "sky": "cloudy"}


def test_paginated_tool_listings_all_reach_the_environment(store):
    """A server that lists its tools a page at a time (`nextCursor`): every page's definitions are the run's."""
    from mcp import types
    from mcp.server.lowlevel import Server

    pages = {None: (["get_weather"], "page-2"), "page-2": (["get_time"], None)}

    async def list_tools(ctx, params):
        names, cursor = pages[params.cursor if params else None]
        tools = [types.Tool(name=n, description=f"{n} of a city", input_schema={"type": "object", "properties": {"city": {"type": "string"}}})
                 for n in names]
        return types.ListToolsResult(tools=tools, next_cursor=cursor)

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="18C, cloudy in Paris")])

    paged = Server("paged-server", on_list_tools=list_tools, on_call_tool=call_tool)

    async def main():
        async with Client(paged) as client:
            with agentotel.run("mcp-pages"):
                first = await client.session.list_tools()
                second = await client.session.list_tools(params=types.PaginatedRequestParams(cursor=first.next_cursor))
                await client.session.call_tool("get_time", {"city": "Paris"})
        return [t.name for t in first.tools + second.tools]

    assert asyncio.run(main()) == ["get_weather", "get_time"]
    trajectory = store.only_run()
    # Listed inside the run: the run's tool definitions, every page's.
    assert {"get_weather", "get_time"} <= set(json.loads(trajectory.environment[sc.AGENTOTEL_ENV_SNAPSHOT])["model_tools"])
    # The call's span carries the second page's definition (its description and schema hash).
    ((description, schema_hash),) = store.traces().sql(
        f"select attributes['{sc.GEN_AI_TOOL_DESCRIPTION}'], attributes['{sc.AGENTOTEL_TOOL_SCHEMA_HASH}'] from tool_calls").fetchall()
    assert description == "get_time of a city" and schema_hash


def test_calling_an_unknown_tool(store):
    async def main():
        async with Client(server) as client:
            with agentotel.run("mcp-unknown"):
                try:
                    return await client.session.call_tool("get_tides", {"city": "Paris"})
                except Exception as exc:  # noqa: BLE001 - mcp raises or answers isError, depending on the version
                    return exc

    outcome = asyncio.run(main())
    (step,) = store.only_run().steps
    assert (step.name, step.status, step.input) == ("execute_tool get_tides", "error", {"city": "Paris"})
    assert isinstance(outcome, Exception) or outcome.is_error


def test_the_high_level_clients_call_tool_is_one_step(store):
    """`Client.call_tool` (mcp 2.x) drives `ClientSession.call_tool`: one step a call, its error an error."""
    async def main():
        async with Client(server) as client:
            with agentotel.run("mcp-client"):
                ok = await client.call_tool("get_weather", {"city": "Paris"})
                failed = await client.call_tool("get_alerts", {"city": "Paris"})
        return ok, failed

    ok, failed = asyncio.run(main())
    assert not ok.is_error and failed.is_error
    steps = store.only_run().steps
    assert [(s.name, s.status) for s in steps] == [("execute_tool get_weather", "ok"), ("execute_tool get_alerts", "error")]
    assert steps[0].output == "18C, cloudy in Paris"


CONTACTS = [{"name": "Alex Chen", "email": "alex.chen@example.com"}, {"name": "Alex Kim", "email": "alex.kim@example.com"}]


@server.tool()
def find_contacts(name: str) -> list[dict[str, str]]:
    """People in the address book whose name contains `name`."""
    return [c for c in CONTACTS if name.lower() in c["name"].lower()]


class Total(BaseModel):
    result: int


@server.tool()
def add(a: int, b: int) -> Total:
    """The sum, as the tool's own model of one field `result`."""
    return Total(result=a + b)


def test_a_list_result_is_the_list_whatever_its_length(store):
    """A tool returning a list answers one text block an item and `structuredContent` {"result": [...]}: the step's
    result is the list the tool returned, with no item, one or two (not the item alone, nor a list of JSON texts)."""
    async def main():
        async with Client(server) as client:  # no list_tools first: the SDK lists them to validate the result
            with agentotel.run("mcp-lists"):
                for name in ("Sam", "Alex Chen", "Alex"):
                    await client.session.call_tool("find_contacts", {"name": name})

    asyncio.run(main())
    steps = store.only_run().steps
    assert [s.output for s in steps] == [[], CONTACTS[:1], CONTACTS]
    # One shape for diff and check: every result a JSON array.
    shapes = store.traces().sql("select json_type(output) from tool_calls order by start_time").fetchall()
    assert shapes == [("ARRAY",)] * 3


def test_a_tools_own_model_of_one_field_result_is_kept(store):
    async def main():
        async with Client(server) as client:
            await client.session.list_tools()
            with agentotel.run("mcp-model"):
                return await client.session.call_tool("add", {"a": 2, "b": 3})

    assert asyncio.run(main()).structured_content == {"result": 5}
    (step,) = store.only_run().steps
    assert step.output == {"result": 5}  # what the tool returned: its model, not the wrapper of a bare 5


def _low_level_server(results: dict[str, object], output_schema: dict | None = None):
    """A server answering each tool with the CallToolResult given (as a non-Python server would)."""
    from mcp import types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name=n, input_schema={"type": "object"}, output_schema=output_schema)
                                            for n in results])

    async def call_tool(ctx, params):
        return results[params.name]

    return Server("plain-server", on_list_tools=list_tools, on_call_tool=call_tool)


def _recorded(store, target, names: list[str]) -> list:
    async def main():
        async with Client(target) as client:
            await client.session.list_tools()
            with agentotel.run("mcp-plain"):
                for name in names:
                    await client.session.call_tool(name, {})

    asyncio.run(main())
    return [s.output for s in store.only_run().steps]


def test_content_blocks_without_structured_content_are_one_list_whatever_their_number(store):
    """No output schema (an unannotated Python tool, most other servers): the content blocks, each as the value it
    holds - one block a list of one, as two are a list of two, not a bare item one time and JSON texts the other;
    a single block of plain text is a text tool's answer, the text."""
    from mcp import types

    def texts(*items: str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in items])

    one, two = json.dumps(CONTACTS[0], indent=2), json.dumps(CONTACTS[1], indent=2)
    image = types.ImageContent(type="image", data="aGk=", mime_type="image/png")
    target = _low_level_server({"one": texts(one), "two": texts(one, two), "none": texts(), "words": texts("18C, cloudy"),
                                "mixed": types.CallToolResult(content=[types.TextContent(type="text", text="a map"), image])})
    assert _recorded(store, target, ["one", "two", "none", "words", "mixed"]) == [
        CONTACTS[:1], CONTACTS, [], "18C, cloudy", ["a map", {"type": "image", "data": "aGk=", "mimeType": "image/png"}]]


def test_a_wrapper_the_output_schema_marks_is_unwrapped(store):
    """fastmcp marks its {"result": X} wrapper `x-fastmcp-wrap-result`: the result is X (the number 5, not its text)."""
    from mcp import types

    wrapper = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"], "x-fastmcp-wrap-result": True}
    answer = types.CallToolResult(content=[types.TextContent(type="text", text="5")], structured_content={"result": 5})
    assert _recorded(store, _low_level_server({"wrapped": answer}, wrapper), ["wrapped"]) == [5]


def test_an_object_of_one_key_result_under_no_wrapper_schema_is_kept(store):
    """Structured content of one key `result` under a schema that is no wrapper: the object the server sent."""
    from mcp import types

    schema = {"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"], "title": "Listing"}
    answer = types.CallToolResult(content=[types.TextContent(type="text", text="[1, 2]")], structured_content={"result": [1, 2]})
    assert _recorded(store, _low_level_server({"listing": answer}, schema), ["listing"]) == [{"result": [1, 2]}]
