"""agentotel next to another instrumentation of the same framework, both into one store: each model and tool
call is one step (agentotel's record, with its call-id link), at the nesting agentotel alone gives it; and the
same agent under the other instrumentation alone keeps every step that instrumentation records.

The other instrumentations: OpenInference's OpenAIAgentsInstrumentor (its spans hold agentotel's), its
LangChainInstrumentor (its spans sit beside agentotel's: LangChain callbacks do not make them current), and
pydantic-ai's own instrumentation (its tool span holds agentotel's, and writes its own result after ours).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import ToolReturn
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel.store import ParquetSpanExporter
from tests.integrations.conftest import ANSWER, assert_one_linked_tool_call

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


def _openai_agents(model_server, provider):
    from agents import Runner, set_tracing_disabled
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    from tests.integrations.test_openai_agents import _agent

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    set_tracing_disabled(False)  # OpenInference reads the SDK's own tracing
    try:
        result = asyncio.run(Runner.run(_agent(model_server, "chat"), "Weather in Paris?"))
    finally:
        set_tracing_disabled(True)
        instrumentor.uninstrument()
    assert result.final_output == ANSWER


def _langgraph(model_server, provider):
    from openinference.instrumentation.langchain import LangChainInstrumentor

    from tests.integrations.test_langchain import _graph, _question

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        result = _graph(model_server).invoke(_question())
    finally:
        instrumentor.uninstrument()
    assert result["messages"][-1].content == ANSWER


def _pydantic_ai(model_server, provider):
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from tests.integrations.test_pydantic_ai import _agent

    agent = _agent(model_server, weather=False)

    @agent.tool_plain
    def get_weather(city: str) -> ToolReturn:
        """Current weather of a city."""
        # The model gets the return value; the metadata is for the app (the step's result is the former).
        return ToolReturn(return_value=f"18C, cloudy in {city}", metadata={"station": "LFPG"})

    previous = Agent._instrument_default
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    try:
        assert agent.run_sync("Weather in Paris?").output == ANSWER
    finally:
        Agent.instrument_all(previous)


AGENTS = {"openai-agents+openinference": _openai_agents, "langgraph+openinference": _langgraph,
          "pydantic-ai+own": _pydantic_ai}

# What the other instrumentation alone records of the same agent (its step types and names), which it must
# keep: the rules that find second records must never take a step that has no agentotel twin.
ALONE = {
    # the SDK's trace span ("Agent workflow") is the run
    "openai-agents+openinference": [("agent", "weather"), ("llm", "generation"), ("tool", "get_weather"), ("llm", "generation")],
    # a one-agent graph: its nodes are no steps (OpenInference calls the node named "agent" an AGENT), as agentotel's
    "langgraph+openinference": [("llm", "ChatOpenAI"), ("tool", "get_weather"), ("llm", "ChatOpenAI")],
    "pydantic-ai+own": [("llm", "chat gpt-4o-mini"), ("tool", "execute_tool get_weather"), ("llm", "chat gpt-4o-mini")],
}


# With both on: agentotel's model and tool steps, each once.
BOTH = {
    "openai-agents+openinference": ["llm", "tool", "llm"],
    "langgraph+openinference": ["llm", "tool", "llm"],
    "pydantic-ai+own": ["llm", "tool", "llm"],
}


@pytest.mark.parametrize("name", list(AGENTS))
def test_each_call_is_one_step_with_both_on(store, model_server, name):
    AGENTS[name](model_server, store.provider)
    trajectory = store.only_run()
    assert [s.type for s in trajectory.steps] == BOTH[name]
    step = assert_one_linked_tool_call(trajectory)
    assert step.output == "18C, cloudy in Paris"  # agentotel's record of the result, not a framework wrapper
    calls = [(s.type, s.name, s.parent_index) for s in trajectory.steps if s.type != "agent"]
    # agentotel's records, each once, where agentotel alone puts them (directly in the run)
    assert calls == [("llm", "chat gpt-4o-mini", None), ("tool", "execute_tool get_weather", None),
                     ("llm", "chat gpt-4o-mini", None)]
    traces = store.traces()
    assert traces.sql("select type, name from steps order by index").fetchall() == [(s.type, s.name) for s in trajectory.steps]
    assert traces.sql("select count(*) from tool_calls").fetchall() == [(1,)]
    assert traces.sql("select count(*), sum(input_tokens) from llm_calls").fetchall() == [(2, 100)]


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_other_instrumentation_alone_keeps_its_steps(tmp_path: Path, model_server, name):
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(tmp_path)))
    AGENTS[name](model_server, provider)
    provider.shutdown()
    traces = agentotel.open(tmp_path)
    (run,) = [r[0] for r in traces.sql("select run_id from runs").fetchall()]
    assert [(s.type, s.name) for s in traces.trajectory(run).steps] == ALONE[name]


def test_an_mcp_servers_span_of_the_call_whatever_its_parent_is_no_second_step(tmp_path):
    """An MCP server in its own process records the call into the same store, parented to whatever span context the
    client put in `_meta` - the MCP client SDK's own span, which another tracer provider may never export. Of the
    same tool, inside agentotel's tool span in time, with no call id: a second record, found without its parent."""
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(tmp_path / "traces")))
    agentotel.instrument(tmp_path / "unused", tracer_provider=provider)
    try:
        @agentotel.tool
        def get_alerts(city: str) -> str:
            outer = trace.get_current_span().get_span_context()
            lost = SpanContext(outer.trace_id, 0x91BD65E9B2DF1195, True, TraceFlags(TraceFlags.SAMPLED))  # never exported
            server = provider.get_tracer("mcp.server")
            with server.start_as_current_span("tools/call get_alerts", context=trace.set_span_in_context(NonRecordingSpan(lost)),
                                              kind=SpanKind.SERVER, attributes={"mcp.method.name": "tools/call"}):
                return "no alerts"

        with agentotel.run("weather") as run:
            get_alerts("Paris")
        provider.force_flush()
        with agentotel.open(tmp_path / "traces") as traces:
            steps = traces.trajectory(run.id).steps
            counted = traces.sql("SELECT count(*) FROM tool_calls").fetchall()[0][0]
    finally:
        agentotel.shutdown()
        provider.shutdown()
    assert [(s.type, s.name) for s in steps] == [("tool", "execute_tool get_alerts")]
    assert counted == 1
