"""pydantic-ai under `agentotel.instrument()` only, and next to pydantic-ai's own instrumentation."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest
from pydantic_ai import Agent, RunContext, ToolReturn
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import agentotel
from agentotel import semconv as sc
from tests.integrations.conftest import ANSWER, ARGUMENTS, CALL_ID, assert_one_linked_tool_call, chat_tool_calls


def _agent(model_server, weather: bool = True) -> Agent:
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", instructions="Answer about weather.")

    if weather:
        @agent.tool_plain
        def get_weather(city: str) -> str:
            """Current weather of a city."""
            return f"18C, cloudy in {city}"

    @agent.tool
    def get_time(ctx: RunContext[None], city: str) -> str:
        """Local time of a city."""
        return "12:00"

    return agent


@pytest.fixture(params=[False, True], ids=["own-instrumentation-off", "own-instrumentation-on"])
def instrument(request, store):
    """pydantic-ai's own instrumentation (`Agent.instrument_all`), on or off, into the same provider."""
    previous = Agent._instrument_default
    settings = InstrumentationSettings(tracer_provider=store.provider) if request.param else False
    Agent.instrument_all(settings)
    yield settings or None
    Agent.instrument_all(previous)


def test_agent_run_is_a_run_with_a_linked_tool_step(store, model_server, instrument):
    result = _agent(model_server).run_sync("Weather in Paris?")
    assert result.output == ANSWER
    trajectory = store.only_run()
    step = assert_one_linked_tool_call(trajectory)
    assert step.output == "18C, cloudy in Paris"
    # The agent is the run itself: no agent step, whether pydantic-ai records its own agent span or not.
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]
    spans = store.traces().sql("select scope_name, name from tool_calls").fetchall()
    assert spans == [("agentotel", "execute_tool get_weather")], spans  # one record of the call, whoever else instruments it
    ((schema_hash,),) = store.traces().sql(f"select attributes['{sc.AGENTOTEL_TOOL_SCHEMA_HASH}'] from tool_calls").fetchall()
    assert schema_hash


def test_inside_a_user_run_the_agent_is_a_step(store, model_server, instrument):
    with agentotel.run("support") as run:
        asyncio.run(_agent(model_server).run("Weather in Paris?"))
    trajectory = store.only_run()
    assert trajectory.run["run_id"] == run.id
    assert_one_linked_tool_call(trajectory)
    # One agent step, with pydantic-ai's own agent span of it recorded or not.
    assert [(s.type, s.name) for s in trajectory.steps if s.type == "agent"] == [("agent", "invoke_agent weather")]
    assert store.traces().sql("select steps from runs").fetchall() == [(len(trajectory.steps),)]


def test_through_a_collector_with_own_instrumentation_one_agent_step(tmp_path, model_server):
    """Spans exported over OTLP to an agentotel-collector (agentotel's and pydantic-ai's, as they come): the same steps."""
    import sys
    from pathlib import Path

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "collector"))
    from agentotel_collector import Collector

    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=None).start()
    provider = TracerProvider()
    previous = Agent._instrument_default
    try:
        host, port = collector.http_address
        agentotel.instrument(tracer_provider=provider, exporters=[OTLPSpanExporter(endpoint=f"http://{host}:{port}/v1/traces")])
        Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
        with agentotel.run("support"):
            _agent(model_server).run_sync("Weather in Paris?")
        assert agentotel.flush()
    finally:
        Agent.instrument_all(previous)
        agentotel.shutdown()
        provider.shutdown()
        collector.stop()
    traces = agentotel.open(tmp_path / "store")
    assert len(traces.sql("select run_id from runs").fetchall()) == 1
    run_id = traces.sql("select run_id from runs").fetchall()[0][0]
    trajectory = traces.trajectory(run_id)
    assert_one_linked_tool_call(trajectory)
    assert [s.name for s in trajectory.steps if s.type == "agent"] == ["invoke_agent weather"]
    assert traces.sql("select count(*) from steps where type = 'agent'").fetchall() == [(1,)]


def test_context_object_is_never_an_argument(store, model_server):
    agent = _agent(model_server, weather=False)

    @agent.tool(name="get_weather")
    @agentotel.tool(name="get_weather")
    def weather_with_context(ctx: RunContext[None], city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    agent.run_sync("Weather in Paris?")
    step = assert_one_linked_tool_call(store.only_run())
    assert step.input == {"city": "Paris"}
    assert "RunContext" not in json.dumps(step.input)


def test_agentotel_tool_alone_takes_the_call_id_from_the_context(store):
    @agentotel.tool
    def lookup(ctx: RunContext[None], order: str) -> str:
        return "shipped"

    class Ctx:  # what a RunContext offers a tool: its call id
        tool_call_id = "call_ctx"

    with agentotel.run("r"):
        lookup(Ctx(), "A-1")
    (step,) = store.only_run().steps
    assert step.input == {"order": "A-1"} and step.tool_call_id == "call_ctx"


# --- the paths real agents take ---------------------------------------------------------------------------


@dataclass
class Deps:  # at module level: pydantic-ai resolves the RunContext[Deps] annotation from the module
    api_key: str
    unit: str


def test_run_stream_is_a_run_with_a_linked_tool_step(store, model_server):
    async def main():
        async with _agent(model_server).run_stream("Weather in Paris?") as result:
            return await result.get_output()

    assert asyncio.run(main()) == ANSWER
    assert [r["body"].get("stream") for r in model_server.requests] == [True, True]
    trajectory = store.only_run()
    assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


def test_iter_node_by_node_is_a_run_with_a_linked_tool_step(store, model_server):
    async def main():
        nodes = []
        async with _agent(model_server).iter("Weather in Paris?") as agent_run:
            async for node in agent_run:
                nodes.append(type(node).__name__)
        return agent_run.result.output, nodes

    output, nodes = asyncio.run(main())
    assert output == ANSWER and "CallToolsNode" in nodes
    trajectory = store.only_run()
    assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


def test_model_retry_is_an_error_step_then_a_second_linked_step(store, model_server, instrument):
    """The tool asks the model to retry (ModelRetry): two tool steps, each linked to the model call that asked."""
    from pydantic_ai import ModelRetry

    model_server.before.append(chat_tool_calls(("call_retry_0", "get_weather", {"city": "paris"})))
    agent = _agent(model_server, weather=False)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        if city != "Paris":
            raise ModelRetry("Spell the city with a capital letter.")
        return f"18C, cloudy in {city}"

    assert agent.run_sync("Weather in Paris?").output == ANSWER
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "llm", "tool", "llm"]
    retry, call = steps[1], steps[3]
    assert (retry.tool_call_id, retry.requested_by, retry.input, retry.status) == ("call_retry_0", 1, {"city": "paris"}, "error")
    # The retry text: the status message, or (pydantic-ai's own span, which it ends) the tool response it records.
    assert retry.error_type.endswith("ToolRetryError") and "capital letter" in f"{retry.error} {retry.output}"
    assert (call.tool_call_id, call.requested_by, call.status, call.output) == (CALL_ID, 3, "ok", "18C, cloudy in Paris")


def test_a_tool_with_deps_records_only_the_models_arguments(store, model_server):
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", deps_type=Deps)

    @agent.tool
    def get_weather(ctx: RunContext[Deps], city: str) -> str:
        """Current weather of a city."""
        return f"18{ctx.deps.unit}, cloudy in {city}"

    agent.run_sync("Weather in Paris?", deps=Deps(api_key="sk-secret", unit="C"))
    step = assert_one_linked_tool_call(store.only_run())
    assert step.input == ARGUMENTS
    assert "sk-secret" not in str(store.traces().sql("select * from spans").fetchall())


def test_structured_output_tool_is_a_linked_tool_step(store, model_server, instrument):
    """The `final_result` output tool call is answered by a step (its result the validated output), so no call
    the model made is left unanswered (see agentotel/integrations/pydantic_ai.py)."""
    from pydantic import BaseModel

    class Weather(BaseModel):
        temperature: int
        sky: str

    model_server.before.append(chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)))
    model_server.before.append(chat_tool_calls(("call_final", "final_result", {"temperature": 18, "sky": "cloudy"})))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", output_type=Weather)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    assert agent.run_sync("Weather in Paris?").output == Weather(temperature=18, sky="cloudy")
    trajectory = store.only_run()
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm", "tool"]
    final = trajectory.steps[3]
    assert (final.tool_name, final.tool_call_id, final.requested_by, final.status) == ("final_result", "call_final", 3, "ok")
    assert final.input == {"temperature": 18, "sky": "cloudy"} and final.output == {"temperature": 18, "sky": "cloudy"}


def test_function_toolset_tool_is_a_linked_tool_step(store, model_server):
    from pydantic_ai.toolsets import FunctionToolset

    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", toolsets=[FunctionToolset([get_weather])])
    agent.run_sync("Weather in Paris?")
    assert assert_one_linked_tool_call(store.only_run()).output == "18C, cloudy in Paris"


def test_parallel_tool_calls_in_one_response_are_two_linked_steps(store, model_server, instrument):
    calls = [("call_time_7", "get_time", {"city": "Oslo"}), (CALL_ID, "get_weather", {"city": "Oslo"})]
    model_server.before.append(chat_tool_calls(*calls))
    assert _agent(model_server).run_sync("Weather and time in Oslo?").output == ANSWER
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "tool", "llm"]
    tools = sorted((s.tool_call_id, s.tool_name, s.input, s.requested_by, s.status) for s in steps if s.type == "tool")
    assert tools == sorted((call_id, name, arguments, 1, "ok") for call_id, name, arguments in calls)


def test_a_tool_exception_passes_through_unchanged_and_is_an_error_step(store, model_server):
    class WeatherDown(Exception):
        pass

    agent = _agent(model_server, weather=False)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        raise WeatherDown("weather service down")

    with pytest.raises(WeatherDown, match="weather service down"):
        agent.run_sync("Weather in Paris?")
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    (step,) = [s for s in trajectory.steps if s.type == "tool"]
    assert (step.status, step.tool_call_id, step.requested_by) == ("error", CALL_ID, 1)
    assert "weather service down" in step.error


def test_streamed_structured_output_is_one_output_step(store, model_server, instrument):
    """run_stream validates the partial output as it streams: only the final validation is a step."""
    from pydantic import BaseModel

    class Weather(BaseModel):
        temperature: int
        sky: str

    model_server.before.append(chat_tool_calls(("call_final", "final_result", {"temperature": 18, "sky": "cloudy"})))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", output_type=Weather)

    async def main():
        async with agent.run_stream("Weather in Paris?") as result:
            partial = [output async for output in result.stream_output(debounce_by=None)]
            return partial, await result.get_output()

    partial, output = asyncio.run(main())
    assert output == Weather(temperature=18, sky="cloudy") and partial
    steps = store.only_run().steps
    assert [(s.type, s.tool_name) for s in steps] == [("llm", None), ("tool", "final_result")]
    assert (steps[1].tool_call_id, steps[1].requested_by, steps[1].output) == ("call_final", 1, {"temperature": 18, "sky": "cloudy"})


def test_an_output_function_failing_for_good_passes_through_as_an_error_step(store, model_server):
    class Refused(Exception):
        pass

    def deliver(city: str, temperature: int) -> str:
        """Deliver the weather report."""
        raise Refused("no deliveries today")

    model_server.before.append(chat_tool_calls(("call_final", "final_result", {"city": "Paris", "temperature": 18})))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="weather", output_type=deliver)
    with pytest.raises(Refused, match="no deliveries today"):
        agent.run_sync("Weather in Paris?")
    (step,) = [s for s in store.only_run().steps if s.type == "tool"]
    assert (step.tool_call_id, step.status, step.input) == ("call_final", "error", {"city": "Paris", "temperature": 18})


def test_arguments_that_fail_validation_are_an_error_step_then_the_retried_call(store, model_server, instrument):
    """The model's arguments do not validate: pydantic-ai answers with a retry prompt, and the call is an error step."""
    model_server.before.append(chat_tool_calls(("call_bad_0", "get_weather", {"town": "Paris"})))
    assert _agent(model_server).run_sync("Weather in Paris?").output == ANSWER
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "llm", "tool", "llm"]
    bad, good = steps[1], steps[3]
    assert (bad.tool_call_id, bad.requested_by, bad.input, bad.status) == ("call_bad_0", 1, {"town": "Paris"}, "error")
    assert (good.tool_call_id, good.requested_by, good.status) == (CALL_ID, 3, "ok")


def test_run_stream_events_is_a_run_with_a_linked_tool_step(store, model_server):
    async def main():
        async with _agent(model_server).run_stream_events("Weather in Paris?") as stream:
            return [type(event).__name__ async for event in stream]

    events = asyncio.run(main())
    assert "FunctionToolResultEvent" in events
    trajectory = store.only_run()
    assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


def test_agent_delegation_nests_the_delegate_under_the_tool_step(store, model_server):
    """A tool that runs another agent (pydantic-ai's delegation pattern): the delegate is an agent step inside it."""
    delegate = _agent(model_server)
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    boss = Agent(model, name="boss")

    @boss.tool
    async def ask_weather(ctx: RunContext[None], question: str) -> str:
        """Ask the weather agent."""
        return (await delegate.run(question, usage=ctx.usage)).output

    model_server.before += [
        chat_tool_calls(("call_ask", "ask_weather", {"question": "Weather in Paris?"})),
        chat_tool_calls((CALL_ID, "get_weather", ARGUMENTS)),
        chat_tool_calls(content=ANSWER),
        chat_tool_calls(content=ANSWER),
    ]
    assert boss.run_sync("Weather in Paris?").output == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "boss"
    steps = trajectory.steps
    ask = next(s for s in steps if s.tool_name == "ask_weather")
    agent = next(s for s in steps if s.type == "agent")
    assert (ask.tool_call_id, ask.requested_by, ask.output) == ("call_ask", 1, ANSWER)
    assert (agent.name, agent.parent_index) == ("invoke_agent weather", ask.index)
    inner = [s for s in steps if s.parent_index == agent.index]
    assert [s.type for s in inner] == ["llm", "tool", "llm"] and inner[1].requested_by == inner[0].index


def test_an_output_tool_call_failing_validation_is_an_error_step_then_the_answer(store, model_server, instrument):
    from pydantic import BaseModel

    class Weather(BaseModel):
        temperature: int
        sky: str

    model_server.before.append(chat_tool_calls(("call_final_0", "final_result", {"temperature": "hot", "sky": "cloudy"})))
    model_server.before.append(chat_tool_calls(("call_final", "final_result", {"temperature": 18, "sky": "cloudy"})))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    assert Agent(model, name="weather", output_type=Weather).run_sync("Weather in Paris?").output.temperature == 18
    steps = store.only_run().steps
    assert [(s.type, s.tool_call_id, s.status) for s in steps] == [
        ("llm", None, "ok"), ("tool", "call_final_0", "error"), ("llm", None, "ok"), ("tool", "call_final", "ok")]
    assert (steps[1].requested_by, steps[1].input) == (1, {"temperature": "hot", "sky": "cloudy"})


def test_a_tool_return_records_what_the_model_gets(store, model_server):
    """`ToolReturn(return_value=..., metadata=...)`: the step's result is the return value the model gets
    (with pydantic-ai's own instrumentation on too: test_two_instrumentations.py)."""
    agent = _agent(model_server, weather=False)

    @agent.tool_plain
    def get_weather(city: str) -> ToolReturn:
        """Current weather of a city."""
        return ToolReturn(return_value=f"18C, cloudy in {city}", metadata={"station": "LFPG"})

    assert agent.run_sync("Weather in Paris?").output == ANSWER
    assert assert_one_linked_tool_call(store.only_run()).output == "18C, cloudy in Paris"


@pytest.mark.parametrize("client_spans", [False, True], ids=["fastmcp-spans-off", "fastmcp-spans-on"])
def test_an_mcp_tools_list_result_is_the_list_whatever_its_length(store, model_server, monkeypatch, client_spans):
    """An MCPToolset (pydantic-ai's MCP path: fastmcp's client over mcp's session, a stdio server): each call is one
    tool step - fastmcp's own `tools/call` span, recorded or not, between pydantic-ai's call and mcp's session -, its
    result the list the tool returned, with one item as with two."""
    import os
    import sys
    from pathlib import Path

    pydantic_ai_mcp = pytest.importorskip("pydantic_ai.mcp", exc_type=ImportError)  # pydantic-ai-slim[mcp]: fastmcp
    from fastmcp.client import Client, telemetry
    from fastmcp.client.transports import StdioTransport

    from tests.integrations.mcp_server_process import CONTACTS

    if client_spans:  # fastmcp traces through the global provider: this store's here
        monkeypatch.setattr(telemetry, "get_tracer", lambda version=None: store.provider.get_tracer("fastmcp"))
    root = Path(__file__).resolve().parents[2]
    transport = StdioTransport(command=sys.executable, args=[str(Path(__file__).with_name("mcp_server_process.py")), str(store.directory)],
                               env={"PYTHONPATH": f"{root}{os.pathsep}{root / 'collector'}"})
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=model_server.url, api_key="k"))
    agent = Agent(model, name="contacts", instructions="Find people.", toolsets=[pydantic_ai_mcp.MCPToolset(Client(transport))])
    model_server.before += [chat_tool_calls(("call_one", "find_contacts", {"name": "Alex Chen"})),
                            chat_tool_calls(("call_two", "find_contacts", {"name": "Alex"}))]
    assert agent.run_sync("Who is Alex?").output == ANSWER
    trajectory = store.only_run()
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm", "tool", "llm", "tool", "llm"]
    steps = [s for s in trajectory.steps if s.tool_name == "find_contacts"]
    assert [(s.tool_call_id, s.status, s.output) for s in steps] == [("call_one", "ok", CONTACTS[:1]), ("call_two", "ok", CONTACTS)]
    assert store.traces().sql("select count(*) from tool_calls").fetchall() == [(3,)]  # one row a call in SQL too
