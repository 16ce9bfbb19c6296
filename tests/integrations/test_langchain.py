"""LangChain / LangGraph under `agentotel.instrument()` only: a ReAct graph's tool calls, retrievers, graph runs."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import pytest
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import InjectedToolCallId, ToolException, tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import InjectedState, ToolRuntime, create_react_agent
from langgraph.types import Command

import agentotel
from agentotel import semconv as sc
from tests.integrations.conftest import ANSWER, ARGUMENTS, CALL_ID, assert_one_linked_tool_call, chat_tool_calls

# create_react_agent is what most LangGraph agents in the wild still use.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


@tool
def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f"18C, cloudy in {city}"


@tool
def get_time(city: str) -> str:
    """Local time of a city."""
    return "12:00"


def _graph(model_server, tools=(get_weather, get_time)):
    model = ChatOpenAI(model="gpt-4o-mini", api_key="k", base_url=model_server.url)
    return create_react_agent(model, list(tools))


def _question():
    return {"messages": [HumanMessage("Weather in Paris?")]}


def test_graph_invoke_opens_a_run_with_a_linked_tool_step(store, model_server):
    result = _graph(model_server).invoke(_question())
    assert result["messages"][-1].content == ANSWER
    trajectory = store.only_run()
    step = assert_one_linked_tool_call(trajectory)
    assert step.output == "18C, cloudy in Paris"
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


def test_inside_a_user_run_the_graph_is_a_step(store, model_server):
    with agentotel.run("support") as run:
        asyncio.run(_graph(model_server).ainvoke(_question()))
    trajectory = store.only_run()
    assert trajectory.run["run_id"] == run.id
    assert_one_linked_tool_call(trajectory)
    (graph,) = [s for s in trajectory.steps if s.type == "agent"]
    assert all(s.parent_index == graph.index for s in trajectory.steps if s.type in ("llm", "tool"))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_streamed_graph(store, model_server, mode):
    graph = _graph(model_server)
    if mode == "sync":
        chunks = list(graph.stream(_question()))
    else:
        async def main():
            return [chunk async for chunk in graph.astream(_question())]
        chunks = asyncio.run(main())
    assert chunks
    assert_one_linked_tool_call(store.only_run())


def test_a_handled_tool_error_is_an_error_step(store, model_server):
    @tool
    def get_weather(city: str) -> str:  # noqa: F811 - the same name the model calls
        """Current weather of a city."""
        raise ToolException("weather service down")

    get_weather.handle_tool_error = True
    _graph(model_server, (get_weather, get_time)).invoke(_question())
    (step,) = [s for s in store.only_run().steps if s.type == "tool"]
    assert step.status == "error" and step.tool_call_id == CALL_ID and step.output == "weather service down"


def test_an_agentotel_tool_under_langchain_tool_is_one_step_without_injected_arguments(store, model_server):
    @tool
    @agentotel.tool
    def get_weather(city: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:  # noqa: F811
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    _graph(model_server, (get_weather, get_time)).invoke(_question())
    step = assert_one_linked_tool_call(store.only_run())
    assert step.input == {"city": "Paris"}


def test_agentotel_tool_alone_reads_the_injected_call_id(store):
    @agentotel.tool
    def lookup(order: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        return "shipped"

    with agentotel.run("r"):
        lookup("A-1", tool_call_id="call_x")
    (step,) = store.only_run().steps
    assert step.input == {"order": "A-1"} and step.tool_call_id == "call_x"


class Docs(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager=None) -> list[Document]:
        return [Document(page_content="Paris is in France", id="d1", metadata={"source": "atlas"})]


def test_retriever_is_a_retrieval_step(store):
    with agentotel.run("rag"):
        docs = Docs().invoke("where is Paris")
        asyncio.run(Docs().ainvoke("where is Lyon"))  # the same query twice would be a repeated retrieval
    assert docs[0].page_content == "Paris is in France"
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["retrieval", "retrieval"]
    assert steps[1].input == "where is Lyon"
    assert steps[0].name == "retrieval Docs"
    assert steps[0].input == "where is Paris"
    assert steps[0].output == [{"id": "d1", "content": "Paris is in France"}]


def test_tool_schema_is_in_the_environment_and_on_the_span(store, model_server):
    _graph(model_server).invoke(_question())
    traces = store.traces()
    ((schema_hash,),) = traces.sql(
        f"select attributes['{sc.AGENTOTEL_TOOL_SCHEMA_HASH}'] from tool_calls").fetchall()
    assert schema_hash
    run = store.only_run()
    assert "get_weather" in json.loads(run.environment[sc.AGENTOTEL_ENV_SNAPSHOT])["model_tools"]


def test_a_changed_tool_schema_shows_in_env_and_check(store, model_server):
    from agentotel.analysis.diff import compare_environments

    @tool("get_weather")
    def weather_v2(city: str, units: str = "metric") -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    with agentotel.run("weather") as first:
        _graph(model_server).invoke(_question())
    with agentotel.run("weather") as second:
        _graph(model_server, (weather_v2, get_time)).invoke(_question())
    traces = store.traces()
    kinds = {f.kind: f for f in traces.findings(second.id)}
    assert "tool_interface_drift" in kinds and kinds["tool_interface_drift"].evidence["tool"] == "get_weather"
    env = compare_environments(traces.trajectory(first.id), traces.trajectory(second.id))
    assert any("get_weather" in line for line in env.lines()), env.lines()


def test_another_agentotel_tool_called_inside_a_framework_tool_is_a_step_of_its_own(store):
    @agentotel.tool
    def search(query: str) -> str:
        return "found"

    @tool
    def plan(goal: str) -> str:
        """Plan a goal."""
        return search(goal)

    with agentotel.run("r"):
        plan.invoke({"goal": "ship"})
    steps = store.only_run().steps
    assert [(s.name, s.depth) for s in steps] == [("execute_tool plan", 0), ("execute_tool search", 1)]


def test_suppressed_instrumentation_records_no_tool_step(store):
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    with agentotel.run("r"):
        with suppress_instrumentation():
            assert get_weather.invoke({"city": "Paris"}) == "18C, cloudy in Paris"
    assert store.only_run().steps == []


# --- the paths real agents take ---------------------------------------------------------------------------


def test_async_tool_in_an_ainvoked_graph(store, model_server):
    @tool("get_weather")
    async def weather(city: str) -> str:
        """Current weather of a city."""
        await asyncio.sleep(0)
        return f"18C, cloudy in {city}"

    result = asyncio.run(_graph(model_server, (weather, get_time)).ainvoke(_question()))
    assert result["messages"][-1].content == ANSWER
    trajectory = store.only_run()
    assert assert_one_linked_tool_call(trajectory).output == "18C, cloudy in Paris"
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_node_with_two_parallel_calls_is_two_linked_steps(store, model_server, mode):
    calls = [("call_time_7", "get_time", {"city": "Oslo"}), (CALL_ID, "get_weather", {"city": "Oslo"})]
    model_server.before.append(chat_tool_calls(*calls))
    graph = _graph(model_server)
    question = {"messages": [HumanMessage("Weather and time in Oslo?")]}
    graph.invoke(question) if mode == "sync" else asyncio.run(graph.ainvoke(question))
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "tool", "llm"]
    tools = sorted((s.tool_call_id, s.tool_name, s.input, s.requested_by, s.status) for s in steps if s.type == "tool")
    assert tools == sorted((call_id, name, arguments, 1, "ok") for call_id, name, arguments in calls)


def test_content_and_artifact_tool_records_the_content(store, model_server):
    @tool("get_weather", response_format="content_and_artifact")
    def weather(city: str) -> tuple[str, dict]:
        """Current weather of a city."""
        return f"18C, cloudy in {city}", {"raw": {"temp_c": 18}}

    result = _graph(model_server, (weather, get_time)).invoke(_question())
    assert result["messages"][2].artifact == {"raw": {"temp_c": 18}}
    assert assert_one_linked_tool_call(store.only_run()).output == "18C, cloudy in Paris"


def test_structured_tool_from_function(store, model_server):
    from langchain_core.tools import StructuredTool

    def weather(city: str) -> str:
        return f"18C, cloudy in {city}"

    tool_ = StructuredTool.from_function(weather, name="get_weather", description="Current weather of a city.")
    _graph(model_server, (tool_, get_time)).invoke(_question())
    assert assert_one_linked_tool_call(store.only_run()).output == "18C, cloudy in Paris"


def test_return_direct_tool_ends_the_graph_with_its_result(store, model_server):
    @tool("get_weather", return_direct=True)
    def weather(city: str) -> str:
        """Current weather of a city."""
        return f"18C, cloudy in {city}"

    result = _graph(model_server, (weather, get_time)).invoke(_question())
    assert result["messages"][-1].content == "18C, cloudy in Paris"
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool"]
    assert (steps[1].tool_call_id, steps[1].requested_by, steps[1].output) == (CALL_ID, 1, "18C, cloudy in Paris")


class WeatherDown(Exception):
    pass


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_unhandled_tool_exception_passes_through_unchanged(store, model_server, mode):
    error = WeatherDown("weather service down")

    @tool("get_weather")
    def weather(city: str) -> str:
        """Current weather of a city."""
        raise error

    graph = _graph(model_server, (weather, get_time))
    with pytest.raises(WeatherDown) as raised:
        graph.invoke(_question()) if mode == "sync" else asyncio.run(graph.ainvoke(_question()))
    assert raised.value is error
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    (step,) = [s for s in trajectory.steps if s.type == "tool"]
    assert (step.status, step.tool_call_id, step.requested_by, step.input) == ("error", CALL_ID, 1, ARGUMENTS)
    assert "weather service down" in step.error


def test_a_retriever_inside_an_lcel_chain_is_a_retrieval_step(store, model_server):
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    model_server.before.append(chat_tool_calls(content=ANSWER))
    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    model = ChatOpenAI(model="gpt-4o-mini", api_key="k", base_url=model_server.url)

    def format_docs(docs):
        return "\n".join(d.page_content for d in docs)

    chain = {"context": Docs() | format_docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
    with agentotel.run("rag"):
        assert chain.invoke("where is Paris") == ANSWER
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["retrieval", "llm"]
    assert (steps[0].input, steps[0].output) == ("where is Paris", [{"id": "d1", "content": "Paris is in France"}])
    assert "Paris is in France" in json.dumps(steps[1].input)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_graph_streaming_model_tokens(store, model_server, mode):
    """stream_mode="messages": the model is called with stream=True; each call is still one model step."""
    graph = _graph(model_server)
    if mode == "sync":
        chunks = list(graph.stream(_question(), stream_mode="messages"))
    else:
        async def main():
            return [chunk async for chunk in graph.astream(_question(), stream_mode="messages")]
        chunks = asyncio.run(main())
    assert chunks and all(r["body"].get("stream") for r in model_server.requests)
    trajectory = store.only_run()
    assert_one_linked_tool_call(trajectory)
    assert [s.type for s in trajectory.steps] == ["llm", "tool", "llm"]


def test_arguments_that_fail_validation_are_an_error_step(store, model_server):
    model_server.before.append(chat_tool_calls(("call_bad_0", "get_weather", {"town": "Paris"})))
    _graph(model_server).invoke(_question())
    steps = store.only_run().steps
    assert [s.type for s in steps] == ["llm", "tool", "llm", "tool", "llm"]
    bad = steps[1]
    assert (bad.tool_call_id, bad.requested_by, bad.input, bad.status) == ("call_bad_0", 1, {"town": "Paris"}, "error")


def _rag_chain(model_server):
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    model = ChatOpenAI(model="gpt-4o-mini", api_key="k", base_url=model_server.url)

    def format_docs(docs):
        return "\n".join(d.page_content for d in docs)

    return {"context": Docs() | format_docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
def test_an_lcel_chain_alone_is_one_run_with_its_retrieval_and_model_steps(store, model_server, mode):
    """Only `instrument()`: the chain is the run (before, the retrieval was a run of its own and the model call in none)."""
    model_server.before.append(chat_tool_calls(content=ANSWER))
    chain = _rag_chain(model_server).with_config(run_name="rag")
    if mode == "invoke":
        answer = chain.invoke("where is Paris")
    elif mode == "stream":
        answer = "".join(chain.stream("where is Paris"))
    else:
        async def main():
            if mode == "ainvoke":
                return await chain.ainvoke("where is Paris")
            return "".join([chunk async for chunk in chain.astream("where is Paris")])
        answer = asyncio.run(main())
    assert answer == ANSWER
    trajectory = store.only_run()
    assert trajectory.run["name"] == "rag"
    assert [(s.type, s.depth) for s in trajectory.steps] == [("retrieval", 0), ("llm", 0)]
    assert "Paris is in France" in json.dumps(trajectory.steps[1].input)


def test_injected_state_store_and_runtime_are_never_arguments(store, model_server):
    """ToolNode injects the graph's state, its store and a ToolRuntime: what the tool gets, not what the model gave."""
    from langgraph.store.memory import InMemoryStore

    @tool("get_weather")
    def weather(city: str, state: Annotated[dict, InjectedState], runtime: ToolRuntime) -> str:
        """Current weather of a city."""
        assert state["messages"] and runtime.tool_call_id == CALL_ID
        return f"18C, cloudy in {city}"

    model = ChatOpenAI(model="gpt-4o-mini", api_key="k", base_url=model_server.url)
    create_react_agent(model, [weather, get_time], store=InMemoryStore()).invoke(_question())
    step = assert_one_linked_tool_call(store.only_run())
    assert step.input == ARGUMENTS


def test_a_tool_returning_a_command_records_its_tool_message(store, model_server):
    """A tool that updates the graph's state (`Command(update=...)`, the handoff and state-update form): the
    step's result is the tool message the model gets, not the Command."""
    @tool("get_weather")
    def weather(city: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Current weather of a city."""
        return Command(update={"messages": [ToolMessage(f"18C, cloudy in {city}", tool_call_id=tool_call_id)]})

    result = _graph(model_server, (weather, get_time)).invoke(_question())
    assert result["messages"][-1].content == ANSWER
    step = assert_one_linked_tool_call(store.only_run())
    assert step.output == "18C, cloudy in Paris"
