"""OpenAI Agents SDK under `agentotel.instrument()` only: function tools, runs, agents and handoffs."""

from __future__ import annotations

import asyncio
import json

import pytest
from agents import Agent, RunContextWrapper, Runner, function_tool, set_trace_processors, set_tracing_disabled
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.tool_context import ToolContext
from agents.tracing.processor_interface import TracingProcessor
from openai import AsyncOpenAI

import agentotel
from agentotel import semconv as sc
from tests.integrations.conftest import ANSWER, ARGUMENTS, CALL_ID, assert_one_linked_tool_call, chat_tool_calls


@function_tool
def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f"18C, cloudy in {city}"


@function_tool
def get_time(ctx: RunContextWrapper[None], city: str) -> str:
    """Local time of a city."""
    return "12:00"


class Collected(TracingProcessor):
    """The SDK's own tracing, kept in memory (no upload): proves it keeps working next to agentotel."""

    def __init__(self) -> None:
        self.spans: list[str] = []

    def on_trace_start(self, trace): pass
    def on_trace_end(self, trace): pass
    def on_span_start(self, span): pass
    def on_span_end(self, span): self.spans.append(span.span_data.type)
    def shutdown(self): pass
    def force_flush(self): pass


@pytest.fixture(params=[False, True], ids=["sdk-tracing-off", "sdk-tracing-on"])
def sdk_tracing(request):
    collected = Collected()
    set_trace_processors([collected])
    set_tracing_disabled(not request.param)
    yield collected if request.param else None
    set_tracing_disabled(True)


def _agent(model_server, api: str, **kwargs) -> Agent:
    client = AsyncOpenAI(api_key="k", base_url=model_server.url)
    model = OpenAIResponsesModel("gpt-4o-mini", client) if api == "responses" else OpenAIChatCompletionsModel("gpt-4o-mini", client)
    return Agent(name="weather", instructions="Answer about weather.", tools=[get_weather, get_time], model=model, **kwargs)


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_runner_run_opens_a_run_with_a_linked_tool_step(store, model_server, sdk_tracing, api):
    result = asyncio.run(Runner.run(_agent(model_server, api), "Weather in Paris?"))
    assert result.final_output == ANSWER

    trajectory = store.only_run()
    assert trajectory.run["name"] == "weather"
    step = assert_one_linked_tool_call(trajectory)
    assert step.output == "18C, cloudy in Paris"
    # The Runner's scope is the run itself: no agent step repeats it.
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]
    if sdk_tracing is not None:
        assert {"agent", "function"} <= set(sdk_tracing.spans)


def test_inside_a_user_run_the_agent_is_a_step(store, model_server, sdk_tracing):
    with agentotel.run("support") as run:
        result = Runner.run_sync(_agent(model_server, "chat"), "Weather in Paris?")
    assert result.final_output == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["run_id"] == run.id
    assert_one_linked_tool_call(trajectory)
    agent = [s for s in trajectory.steps if s.type == "agent"]
    assert [s.name for s in agent] == ["invoke_agent weather"]
    assert all(s.parent_index == agent[0].index for s in trajectory.steps if s.type in ("llm", "tool"))


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_streamed_run(store, model_server, sdk_tracing, api):
    async def main():
        result = Runner.run_streamed(_agent(model_server, api), "Weather in Paris?")
        async for _event in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == ANSWER
    assert [r["body"].get("stream") for r in model_server.requests] == [True, True]
    trajectory = store.only_run()
    step = assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]
    first, last = (s for s in trajectory.steps if s.type == "llm")
    # Each streamed model call ended with its stream: the call that asked holds the call id, the answer its text.
    assert any(p.get("id") == step.tool_call_id for m in first.output for p in m["parts"] if p["type"] == "tool_call")
    assert last.output[0]["parts"] == [{"type": "text", "content": ANSWER}]
    assert (first.input_tokens, first.output_tokens) == (50, 10)


def test_streamed_responses_with_parallel_calls_and_a_reasoning_item(store, model_server, sdk_tracing):
    """run_streamed on the Responses API, the model asking for two tools at once after reasoning: two tool
    steps, each with its own call id, both requested by that first model step."""
    calls = [("call_time_7", "get_time", {"city": "Oslo"}), (CALL_ID, "get_weather", {"city": "Oslo"})]
    model_server.before.append(
        {"id": "resp_0", "object": "response", "created_at": 0, "model": "gpt-4o-mini", "status": "completed",
         "output": [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Two lookups."}]}]
                   + [{"type": "function_call", "id": f"fc_{i}", "call_id": call_id, "name": name,
                       "arguments": json.dumps(arguments), "status": "completed"} for i, (call_id, name, arguments) in enumerate(calls)],
         "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
         "usage": {"input_tokens": 40, "output_tokens": 12, "total_tokens": 52, "input_tokens_details": {"cached_tokens": 0},
                   "output_tokens_details": {"reasoning_tokens": 4}}})  # fmt: skip

    async def main():
        result = Runner.run_streamed(_agent(model_server, "responses"), "Weather and time in Oslo?")
        async for _event in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == ANSWER
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "tool", "llm"]
    tools = sorted((s.tool_call_id, s.tool_name, s.input, s.requested_by) for s in steps if s.type == "tool")
    assert tools == sorted((call_id, name, arguments, 1) for call_id, name, arguments in calls)
    assert steps[0].output[0]["parts"][0] == {"type": "reasoning", "content": "Two lookups."}


def test_a_failing_tool_answered_by_the_sdk_is_an_error_step(store, model_server, sdk_tracing):
    @function_tool(name_override="get_weather")
    def broken(city: str) -> str:
        """Current weather of a city."""
        raise RuntimeError("weather service down")

    agent = _agent(model_server, "chat")
    agent.tools = [broken, get_time]
    asyncio.run(Runner.run(agent, "Weather in Paris?"))
    step = next(s for s in store.only_run().steps if s.type == "tool")
    assert step.status == "error" and step.tool_call_id == CALL_ID and step.error_type == "RuntimeError"
    assert "error occurred" in step.output  # what the SDK answered the model
    ((message,),) = store.traces().sql("select status_message from tool_calls").fetchall()
    assert "weather service down" in message


def test_handoff_is_a_tool_step_and_its_target_an_agent_step(store, model_server, sdk_tracing):
    # The triage agent hands off at once; the weather agent then calls its tool and answers.
    client = AsyncOpenAI(api_key="k", base_url=model_server.url)
    weather = _agent(model_server, "chat")
    triage = Agent(name="triage", instructions="Route.", handoffs=[weather],
                   model=OpenAIChatCompletionsModel("gpt-4o-mini", client))
    model_server.before.append(
        {"id": "chatcmpl-h", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                      "tool_calls": [{"id": "call_handoff", "type": "function",
                                      "function": {"name": "transfer_to_weather", "arguments": "{}"}}]}}],
         "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})
    result = asyncio.run(Runner.run(triage, "Weather in Paris?"))
    assert result.final_output == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "triage"
    agent = [s for s in trajectory.steps if s.type == "agent"]
    assert [s.name for s in agent] == ["invoke_agent weather"]
    # The handoff is the call the model made: a tool step answering it, before the agent it handed to.
    handoff = trajectory.steps[1]
    assert [s.type for s in trajectory.steps[:3]] == ["llm", "tool", "agent"]
    assert (handoff.tool_name, handoff.tool_call_id, handoff.requested_by) == ("transfer_to_weather", "call_handoff", 1)
    assert (handoff.input, handoff.output) == ({}, {"assistant": "weather"})
    # The weather agent's model calls and tool call are its steps.
    assert [s.type for s in trajectory.steps if s.parent_index == agent[0].index] == ["llm", "tool", "llm"]


def test_an_agentotel_tool_under_function_tool_is_one_step_without_the_context(store, model_server, sdk_tracing):
    seen = []

    @function_tool(name_override="get_weather")
    @agentotel.tool(name="get_weather")
    def weather(ctx: ToolContext, city: str) -> str:
        """Current weather of a city."""
        seen.append(ctx.tool_call_id)
        return f"18C, cloudy in {city}"

    agent = _agent(model_server, "chat")
    agent.tools = [weather, get_time]
    asyncio.run(Runner.run(agent, "Weather in Paris?"))
    assert seen == [CALL_ID]
    step = assert_one_linked_tool_call(store.only_run())
    assert step.input == {"city": "Paris"}


def test_agentotel_tool_alone_takes_the_call_id_from_the_tool_context(store):
    @agentotel.tool
    def lookup(ctx: ToolContext, order: str) -> str:
        return "shipped"

    context = ToolContext(context=None, tool_name="lookup", tool_call_id="call_tc", tool_arguments='{"order": "A-1"}')
    with agentotel.run("r"):
        lookup(context, "A-1")
    (step,) = store.only_run().steps
    assert step.input == {"order": "A-1"} and step.tool_call_id == "call_tc"


def test_capture_off_keeps_the_link_but_no_content(store, model_server, sdk_tracing):
    from agentotel import _config

    _config.configure(_config.Settings.resolve(capture_content=False))
    asyncio.run(Runner.run(_agent(model_server, "chat"), "Weather in Paris?"))
    (step,) = [s for s in store.only_run().steps if s.type == "tool"]
    assert step.tool_call_id == CALL_ID and step.input is None and step.output is None


def test_a_hand_made_function_tool_is_a_tool_step(store, model_server, sdk_tracing):
    from agents import FunctionTool

    async def invoke(ctx, arguments: str) -> str:
        return f"18C, cloudy in {json.loads(arguments)['city']}"

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}
    agent = _agent(model_server, "chat")
    agent.tools = [FunctionTool(name="get_weather", description="Current weather of a city.",
                                params_json_schema=schema, on_invoke_tool=invoke), get_time]
    asyncio.run(Runner.run(agent, "Weather in Paris?"))
    assert assert_one_linked_tool_call(store.only_run()).output == "18C, cloudy in Paris"


# --- the paths real agents take ---------------------------------------------------------------------------


def _chat_model(model_server) -> OpenAIChatCompletionsModel:
    return OpenAIChatCompletionsModel("gpt-4o-mini", AsyncOpenAI(api_key="k", base_url=model_server.url))


def test_an_agent_as_a_tool_nests_its_steps_under_the_outer_tool_step(store, model_server, sdk_tracing):
    """The outer agent calls the inner one as a tool: the inner agent's model and tool steps sit under that tool step."""
    expert = _agent(model_server, "chat").as_tool(tool_name="weather_expert", tool_description="Ask the weather expert.")
    outer = Agent(name="assistant", instructions="Delegate.", tools=[expert], model=_chat_model(model_server))
    model_server.before += [
        chat_tool_calls(("call_expert", "weather_expert", {"input": "Weather in Paris?"})),  # outer
        chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)),  # inner
        chat_tool_calls(content=ANSWER),  # inner
        chat_tool_calls(content=ANSWER),  # outer
    ]
    assert asyncio.run(Runner.run(outer, "Weather in Paris?")).final_output == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "assistant"
    steps = trajectory.steps
    (outer_tool,) = [s for s in steps if s.tool_name == "weather_expert"]
    assert (outer_tool.tool_call_id, outer_tool.requested_by, outer_tool.output) == ("call_expert", 1, ANSWER)
    inner = [s for s in steps if s.index > outer_tool.index and s.depth > outer_tool.depth]
    assert [s.type for s in inner if s.type != "agent"] == ["llm", "tool", "llm"]
    (tool,) = [s for s in inner if s.type == "tool"]
    assert (tool.tool_call_id, tool.input, tool.requested_by) == (CALL_ID, ARGUMENTS, inner[[s.type for s in inner].index("llm")].index)
    assert len([s for s in steps if s.type == "llm"]) == 4 and len([s for s in steps if s.type == "tool"]) == 2


def test_run_sync_opens_a_run(store, model_server, sdk_tracing):
    result = Runner.run_sync(_agent(model_server, "chat"), "Weather in Paris?")
    assert result.final_output == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "weather"
    assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


class WeatherDown(Exception):
    pass


def test_a_tool_without_failure_function_raises_the_users_exception_and_is_an_error_step(store, model_server, sdk_tracing):
    error = WeatherDown("weather service down")

    @function_tool(name_override="get_weather", failure_error_function=None)
    def broken(city: str) -> str:
        """Current weather of a city."""
        raise error

    agent = _agent(model_server, "chat")
    agent.tools = [broken, get_time]
    with pytest.raises(Exception) as raised:
        asyncio.run(Runner.run(agent, "Weather in Paris?"))
    # The SDK wraps it (UserError "Error running tool ...") with the user's very exception as the cause.
    chain = [raised.value, raised.value.__cause__, getattr(raised.value.__cause__, "__cause__", None)]
    assert error in chain, chain
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    (step,) = [s for s in trajectory.steps if s.type == "tool"]
    assert (step.status, step.tool_call_id, step.requested_by) == ("error", CALL_ID, 1)
    assert "weather service down" in step.error


def test_a_tripped_input_guardrail_ends_the_run_with_its_exception(store, model_server, sdk_tracing):
    from agents import GuardrailFunctionOutput, InputGuardrailTripwireTriggered, input_guardrail

    @input_guardrail
    def no_weather(ctx, agent, user_input) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="weather is off-topic", tripwire_triggered=True)

    agent = _agent(model_server, "chat", input_guardrails=[no_weather])
    with pytest.raises(InputGuardrailTripwireTriggered):
        asyncio.run(Runner.run(agent, "Weather in Paris?"))
    roots = store.traces().sql("select name, status_code, error_type from spans where parent_span_id is null").fetchall()
    assert len(roots) == 1 and roots[0][:2] == ("invoke_agent weather", "ERROR"), roots
    assert roots[0][2].endswith("InputGuardrailTripwireTriggered")
    assert store.only_run().run["status"] == "error"


def test_a_tripped_output_guardrail_ends_the_run_with_its_exception(store, model_server, sdk_tracing):
    from agents import GuardrailFunctionOutput, OutputGuardrailTripwireTriggered, output_guardrail

    @output_guardrail
    def no_clouds(ctx, agent, output) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="cloudy", tripwire_triggered="cloudy" in output)

    agent = _agent(model_server, "chat", output_guardrails=[no_clouds])
    with pytest.raises(OutputGuardrailTripwireTriggered):
        asyncio.run(Runner.run(agent, "Weather in Paris?"))
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    assert_one_linked_tool_call(trajectory)  # the steps before the guardrail tripped are all there


def _stdio_server(store, name: str):
    """tests/integrations/mcp_server_process.py as an agent's MCP server (stdio), recording into the store."""
    import os
    import sys
    from pathlib import Path

    from agents.mcp import MCPServerStdio

    root = Path(__file__).resolve().parents[2]
    params = {"command": sys.executable, "args": [str(Path(__file__).with_name("mcp_server_process.py")), str(store.directory)],
              "env": {"PYTHONPATH": f"{root}{os.pathsep}{root / 'collector'}"}}
    return MCPServerStdio(params, name=name, client_session_timeout_seconds=30)


def test_mcp_server_tools_are_one_step_each(store, model_server, sdk_tracing):
    """An Agent with `mcp_servers=[...]` (a stdio server): the SDK's MCP tool and agentotel's MCP client patch
    both see each call: one tool step a call, linked, its error an error."""
    async def main():
        async with _stdio_server(store, "weather-server") as server:
            agent = Agent(name="weather", instructions="Answer about weather.", mcp_servers=[server], model=_chat_model(model_server))
            return (await Runner.run(agent, "Weather in Paris?")).final_output

    model_server.before.append(chat_tool_calls(("call_alerts", "get_alerts", {"city": "Paris"})))  # fails on the server
    assert asyncio.run(main()) == ANSWER
    trajectory = store.only_run()
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm", "tool", "llm"]
    alerts, weather = trajectory.steps[1], trajectory.steps[3]
    # The MCP tool's isError result is an error step, though the SDK answered the model with its text.
    assert (alerts.tool_name, alerts.tool_call_id, alerts.requested_by, alerts.status) == ("get_alerts", "call_alerts", 1, "error")
    assert (weather.tool_call_id, weather.requested_by, weather.status, weather.input) == (CALL_ID, 3, "ok", ARGUMENTS)
    assert "18C" in json.dumps(weather.output)
    # One span a call (the SDK's tool call completed as the MCP call), with the server's name.
    rows = store.traces().sql(f"select tool_name, attributes['{sc.AGENTOTEL_TOOL_SERVER}'], attributes['{sc.GEN_AI_TOOL_TYPE}'] "
                              "from spans where operation = 'execute_tool' and kind = 'INTERNAL' order by start_time").fetchall()
    assert rows == [("get_alerts", "weather-server", "extension"), ("get_weather", "weather-server", "extension")]


def test_an_mcp_tools_list_result_is_the_list_whatever_its_length(store, model_server, sdk_tracing):
    """The SDK answers the model with an MCP tool's content blocks (one block as an object, two as a list): the
    step's result is what the tool returned, the list, with one item as with two."""
    from tests.integrations.mcp_server_process import CONTACTS

    async def main():
        async with _stdio_server(store, "contacts-server") as server:
            agent = Agent(name="contacts", instructions="Find people.", mcp_servers=[server], model=_chat_model(model_server))
            return (await Runner.run(agent, "Who is Alex?")).final_output

    model_server.before += [chat_tool_calls(("call_one", "find_contacts", {"name": "Alex Chen"})),
                            chat_tool_calls(("call_two", "find_contacts", {"name": "Alex"}))]
    assert asyncio.run(main()) == ANSWER
    steps = [s for s in store.only_run().steps if s.tool_name == "find_contacts"]
    assert [(s.tool_call_id, s.status, s.output) for s in steps] == [("call_one", "ok", CONTACTS[:1]), ("call_two", "ok", CONTACTS)]


def test_a_tool_input_guardrail_rejecting_the_call_is_an_error_step(store, model_server, sdk_tracing):
    """A tool guardrail rejects the call: the tool never runs and the SDK answers the model with the rejection."""
    from agents import ToolGuardrailFunctionOutput, tool_input_guardrail

    ran = []

    @tool_input_guardrail
    def no_paris(data) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.reject_content("Paris is not allowed.")

    @function_tool(name_override="get_weather", tool_input_guardrails=[no_paris])
    def guarded(city: str) -> str:
        """Current weather of a city."""
        ran.append(city)
        return f"18C, cloudy in {city}"

    agent = _agent(model_server, "chat")
    agent.tools = [guarded, get_time]
    model_server.before += [chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)), chat_tool_calls(content=ANSWER)]
    assert asyncio.run(Runner.run(agent, "Weather in Paris?")).final_output == ANSWER
    assert ran == []
    trajectory = store.only_run()
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]
    step = trajectory.steps[1]
    assert (step.tool_call_id, step.requested_by, step.status, step.input) == (CALL_ID, 1, "error", ARGUMENTS)
    assert (step.output, step.error_type) == ("Paris is not allowed.", "guardrail_rejected")


def test_a_tool_input_guardrail_tripping_ends_the_run_with_an_error_step(store, model_server, sdk_tracing):
    from agents import ToolGuardrailFunctionOutput, ToolInputGuardrailTripwireTriggered, tool_input_guardrail

    @tool_input_guardrail
    def no_paris(data) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.raise_exception(output_info="Paris")

    @function_tool(name_override="get_weather", tool_input_guardrails=[no_paris])
    def guarded(city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    agent = _agent(model_server, "chat")
    agent.tools = [guarded, get_time]
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(Runner.run(agent, "Weather in Paris?"))
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    (step,) = [s for s in trajectory.steps if s.type == "tool"]
    assert (step.tool_call_id, step.requested_by, step.status) == (CALL_ID, 1, "error")
    assert step.error_type.endswith("ToolInputGuardrailTripwireTriggered")


def test_stop_on_first_tool_ends_the_run_with_the_tool_step(store, model_server, sdk_tracing):
    agent = _agent(model_server, "chat", tool_use_behavior="stop_on_first_tool")
    assert asyncio.run(Runner.run(agent, "Weather in Paris?")).final_output == "18C, cloudy in Paris"
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool"]
    assert (steps[1].tool_call_id, steps[1].requested_by, steps[1].output) == (CALL_ID, 1, "18C, cloudy in Paris")


def test_an_agent_as_a_tool_under_a_streamed_run(store, model_server, sdk_tracing):
    expert = _agent(model_server, "chat").as_tool(tool_name="weather_expert", tool_description="Ask the weather expert.")
    outer = Agent(name="assistant", instructions="Delegate.", tools=[expert], model=_chat_model(model_server))
    model_server.before += [
        chat_tool_calls(("call_expert", "weather_expert", {"input": "Weather in Paris?"})),
        chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)),
        chat_tool_calls(content=ANSWER),
        chat_tool_calls(content=ANSWER),
    ]

    async def main():
        result = Runner.run_streamed(outer, "Weather in Paris?")
        async for _event in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == ANSWER
    steps = store.only_run().steps
    (outer_tool,) = [s for s in steps if s.tool_name == "weather_expert"]
    assert (outer_tool.tool_call_id, outer_tool.requested_by) == ("call_expert", 1)
    (tool,) = [s for s in steps if s.tool_name == "get_weather"]
    assert tool.depth > outer_tool.depth and tool.tool_call_id == CALL_ID and tool.requested_by is not None
    assert [s.type for s in steps].count("llm") == 4


@pytest.mark.parametrize("behavior", ["reject", "raise", "allow"])
def test_a_tool_output_guardrail(store, model_server, sdk_tracing, behavior):
    """The tool ran, then its output guardrail rejected the result (the model gets the rejection: an error step
    with that rejection as its result), tripped (the run ends with its exception) or let it through (ok)."""
    from agents import ToolGuardrailFunctionOutput, ToolOutputGuardrailTripwireTriggered, tool_output_guardrail

    @tool_output_guardrail
    def no_clouds(data) -> ToolGuardrailFunctionOutput:
        if behavior == "reject":
            return ToolGuardrailFunctionOutput.reject_content("Cloud reports are withheld.")
        if behavior == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(output_info="cloudy")
        return ToolGuardrailFunctionOutput.allow()

    @function_tool(name_override="get_weather", tool_output_guardrails=[no_clouds])
    def guarded(city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    agent = _agent(model_server, "chat")
    agent.tools = [guarded, get_time]
    if behavior == "raise":
        with pytest.raises(ToolOutputGuardrailTripwireTriggered):
            asyncio.run(Runner.run(agent, "Weather in Paris?"))
    else:
        assert asyncio.run(Runner.run(agent, "Weather in Paris?")).final_output == ANSWER
    trajectory = store.only_run()
    (step,) = [s for s in trajectory.steps if s.type == "tool"]
    assert (step.tool_call_id, step.requested_by, step.input) == (CALL_ID, 1, ARGUMENTS)
    if behavior == "reject":
        assert (step.status, step.error_type, step.output) == ("error", "guardrail_rejected", "Cloud reports are withheld.")
    elif behavior == "raise":
        assert step.status == "error" and step.error_type.endswith("ToolOutputGuardrailTripwireTriggered")
        assert trajectory.run["status"] == "error"
    else:
        assert (step.status, step.output) == ("ok", "18C, cloudy in Paris")


def test_a_runner_run_inside_a_tool_nests_the_sub_agent_under_the_tool_step(store, model_server, sdk_tracing):
    """The hand-written form of an agent as a tool: a function tool that runs another agent with Runner.run."""
    expert = _agent(model_server, "chat")

    @function_tool
    async def ask_expert(question: str) -> str:
        """Ask the weather expert."""
        return (await Runner.run(expert, question)).final_output

    outer = Agent(name="assistant", instructions="Delegate.", tools=[ask_expert], model=_chat_model(model_server))
    model_server.before += [
        chat_tool_calls(("call_expert", "ask_expert", {"question": "Weather in Paris?"})),
        chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)),
        chat_tool_calls(content=ANSWER),
        chat_tool_calls(content=ANSWER),
    ]
    assert asyncio.run(Runner.run(outer, "Weather in Paris?")).final_output == ANSWER
    trajectory = store.only_run()
    steps = trajectory.steps
    ask = next(s for s in steps if s.tool_name == "ask_expert")
    agent = next(s for s in steps if s.type == "agent")
    assert (agent.name, agent.parent_index) == ("invoke_agent weather", ask.index)
    inner = [s for s in steps if s.parent_index == agent.index]
    assert [s.type for s in inner] == ["llm", "tool", "llm"] and inner[1].requested_by == inner[0].index


def test_handoff_in_a_streamed_run(store, model_server, sdk_tracing):
    weather = _agent(model_server, "chat")
    triage = Agent(name="triage", instructions="Route.", handoffs=[weather], model=_chat_model(model_server))
    model_server.before.append(chat_tool_calls(("call_handoff", "transfer_to_weather", {})))

    async def main():
        result = Runner.run_streamed(triage, "Weather in Paris?")
        async for _event in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "triage"
    assert [s.type for s in trajectory.steps[:3]] == ["llm", "tool", "agent"]
    assert (trajectory.steps[1].tool_call_id, trajectory.steps[1].requested_by) == ("call_handoff", 1)
    agent = trajectory.steps[2]
    assert [s.type for s in trajectory.steps if s.parent_index == agent.index] == ["llm", "tool", "llm"]
