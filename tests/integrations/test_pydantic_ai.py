"""pydantic-ai under `agentotel.instrument()` only, and next to pydantic-ai's own instrumentation."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import agentotel
from agentotel import semconv as sc
from tests.integrations.conftest import ANSWER, assert_one_linked_tool_call


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
    spans = store.traces().sql("select scope_name, name from spans where operation = 'execute_tool'").fetchall()
    assert len(spans) == 1, spans  # one record of the call, whoever else instruments it
    if instrument is not None:
        assert spans[0][0] == "pydantic-ai"  # its own span, completed by agentotel
        ((schema_hash,),) = store.traces().sql(
            f"select attributes['{sc.AGENTOTEL_TOOL_SCHEMA_HASH}'] from tool_calls").fetchall()
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
