"""A multi-agent LangGraph graph under `agentotel.instrument()`: each agent node's turn is an agent step of its own.

The model on 127.0.0.1 answers by the system prompt it is sent (which agent calls it) and by the conversation:
an agent with tools asks for one, then answers once the tool's result is in.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, create_react_agent
from langgraph.types import Command, Send

import agentotel
from tests.integrations.conftest import chat_tool_calls
from tests.integrations.test_langchain import get_time, get_weather

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

PROMPTS = {"planner": "You are the planner.", "executor": "You are the executor.", "verifier": "You are the verifier.",
           "supervisor": "You are the supervisor.", "researcher": "You are the researcher.", "timekeeper": "You are the timekeeper.",
           "worker": "You are a worker.", "lead": "You are the lead; ask the researcher.", "handing": "You are the researcher; hand the time question over."}
TOOLS = {"planner": get_weather, "executor": get_time, "researcher": get_weather, "timekeeper": get_time}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _team(body: dict[str, Any]) -> dict[str, Any]:
    """The reply of the agent whose system prompt the request carries."""
    messages = body["messages"]
    who = next(name for name, prompt in PROMPTS.items() if _text(messages[0]) == prompt)
    answered = messages[-1]["role"] == "tool" and messages[-1]["tool_call_id"].startswith(f"call_{who}")  # its own call
    asked = sum(1 for m in messages if m.get("tool_calls"))
    if who == "verifier":  # rejects the first report
        reports = sum(1 for m in messages if m["role"] == "assistant" and _text(m).startswith("DONE"))
        return chat_tool_calls(content="VERIFIED" if reports > 1 or not REJECT_FIRST else "REJECTED: check Lyon too")
    if who == "supervisor":  # the researcher, then the timekeeper, then done
        seen = " ".join(_text(m) for m in messages)
        return chat_tool_calls(content="researcher" if "18C" not in seen else "timekeeper" if "12:00" not in seen else "FINISH")
    if who == "handing":  # the weather, then a handoff to the timekeeper
        if "18C" not in " ".join(_text(m) for m in messages):
            return chat_tool_calls((f"call_{who}_{asked}", "get_weather", {"city": "Paris"}))
        return chat_tool_calls(("call_handoff", "transfer_to_timekeeper", {}))
    if who == "lead":  # asks its researcher tool, then answers
        if not answered:
            return chat_tool_calls((f"call_{who}_{asked}", "ask_researcher", {"question": "Weather in Paris?"}))
        return chat_tool_calls(content="The researcher says 18C.")
    if who == "worker":
        return chat_tool_calls(content=f"report on {_text(messages[-1])}")
    if answered or who not in TOOLS:
        return chat_tool_calls(content=("DONE: " if who == "executor" else "") + f"{who} finished")
    city = "Lyon" if any(_text(m).startswith("REJECTED") for m in messages) else "Paris"  # what the verifier asked for
    return chat_tool_calls((f"call_{who}_{asked}", TOOLS[who].name, {"city": city}))


REJECT_FIRST = False


def _model(model_server) -> ChatOpenAI:
    model_server.chat = _team
    return ChatOpenAI(model="gpt-4o-mini", api_key="k", base_url=model_server.url, max_retries=0)


def _agent_node(llm: ChatOpenAI, who: str):
    bound = llm.bind_tools([TOOLS[who]]) if who in TOOLS else llm

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke([SystemMessage(PROMPTS[who])] + state["messages"])]}

    async def anode(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke([SystemMessage(PROMPTS[who])] + state["messages"])]}
    return node, anode


def _team_graph(model_server, asynchronous: bool = False):
    """planner -> handover (a state transform) -> executor -> verifier, planner and executor each with a ToolNode of its
    own; a rejection takes the verifier back to the executor."""
    from langchain_core.runnables import RunnableLambda

    llm = _model(model_server)
    graph = StateGraph(MessagesState)
    for who in ("planner", "executor", "verifier"):
        node, anode = _agent_node(llm, who)
        graph.add_node(who, RunnableLambda(node, afunc=anode) if asynchronous else node)
        if who in TOOLS:
            graph.add_node(f"{who}_tools", ToolNode([TOOLS[who]]))
            graph.add_edge(f"{who}_tools", who)
    graph.add_node("handover", lambda state: {"messages": [HumanMessage("Executor, carry out the plan.")]})

    def then(who: str, after: str):
        return lambda state: f"{who}_tools" if state["messages"][-1].tool_calls else after

    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", then("planner", "handover"))
    graph.add_edge("handover", "executor")
    graph.add_conditional_edges("executor", then("executor", "verifier"))
    graph.add_conditional_edges("verifier", lambda state: "executor" if state["messages"][-1].content.startswith("REJECTED") else END)
    return graph.compile()


def _question() -> dict[str, Any]:
    return {"messages": [HumanMessage("Is Paris ready for the launch?")]}


def _agents(trajectory: Any) -> list[tuple[str, str | None]]:
    """Each step's type and the agent step it is in (its nearest enclosing one), in order."""
    by_index = {s.index: s for s in trajectory.steps}

    def agent_of(step: Any) -> str | None:
        at = step.parent_index
        while at is not None:
            if by_index[at].type == "agent":
                return by_index[at].name.removeprefix("invoke_agent ")
            at = by_index[at].parent_index
        return None
    return [(s.name if s.type == "agent" else s.type, agent_of(s)) for s in trajectory.steps]


TEAM = [("invoke_agent planner", None), ("llm", "planner"), ("tool", "planner"), ("llm", "planner"),
        ("invoke_agent executor", None), ("llm", "executor"), ("tool", "executor"), ("llm", "executor"),
        ("invoke_agent verifier", None), ("llm", "verifier")]


@pytest.mark.parametrize("mode", ["invoke", "stream", "ainvoke", "astream"])
def test_planner_executor_verifier_are_three_agent_steps_holding_their_calls(store, model_server, mode):
    graph = _team_graph(model_server, asynchronous=mode.startswith("a"))
    if mode == "invoke":
        graph.invoke(_question())
    elif mode == "stream":
        assert list(graph.stream(_question(), stream_mode="updates"))
    elif mode == "ainvoke":
        asyncio.run(graph.ainvoke(_question()))
    else:
        async def main():
            return [chunk async for chunk in graph.astream(_question(), stream_mode=["updates", "messages"])]
        assert asyncio.run(main())
    trajectory = store.only_run()
    assert _agents(trajectory) == TEAM
    # the handover node and the tool nodes add nothing; each tool step answers its own agent's model call
    tools = [s for s in trajectory.steps if s.type == "tool"]
    assert [(s.tool_name, s.tool_call_id, s.requested_by) for s in tools] == [
        ("get_weather", "call_planner_0", 2), ("get_time", "call_executor_1", 6)]
    # an agent's step lasts its turn: it starts before its first call and ends after its last
    for agent in (s for s in trajectory.steps if s.type == "agent"):
        inside = [s for s in trajectory.steps if s.parent_index == agent.index]
        assert agent.start_time <= inside[0].start_time
        assert agent.duration_ms >= sum(s.duration_ms for s in inside) - 1


def test_a_node_visited_again_after_another_agent_is_a_step_of_its_own(store, model_server, monkeypatch):
    monkeypatch.setattr(f"{__name__}.REJECT_FIRST", True)
    _team_graph(model_server).invoke(_question())
    trajectory = store.only_run()
    agents = [name for name, inside in _agents(trajectory) if name.startswith("invoke_agent")]
    assert agents == ["invoke_agent planner", "invoke_agent executor", "invoke_agent verifier",
                      "invoke_agent executor", "invoke_agent verifier"]
    # the second executor turn holds its own model and tool calls
    assert _agents(trajectory)[10:14] == [("invoke_agent executor", None), ("llm", "executor"), ("tool", "executor"),
                                          ("llm", "executor")]


def test_inside_a_user_run_the_agents_nest_in_the_graphs_step(store, model_server):
    with agentotel.run("launch-check"):
        _team_graph(model_server).invoke(_question())
    trajectory = store.only_run()
    assert _agents(trajectory) == [("invoke_agent LangGraph", None)] + [
        (name, inside or "LangGraph") for name, inside in TEAM]


def _supervised(model_server):
    """A supervisor node routing to two create_react_agent sub-agents (nodes of their own) and back."""
    llm = _model(model_server)
    researcher = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"], name="research_expert")
    timekeeper = create_react_agent(llm, [get_time], prompt=PROMPTS["timekeeper"], name="time_expert")

    async def supervisor(state: MessagesState) -> dict[str, Any]:
        said = await llm.ainvoke([SystemMessage(PROMPTS["supervisor"])] + state["messages"])
        return {"messages": [AIMessage(said.content, name="supervisor")]}

    graph = StateGraph(MessagesState)
    graph.add_node("supervisor", supervisor)
    graph.add_node("researcher", researcher)
    graph.add_node("timekeeper", timekeeper)
    graph.add_edge(START, "supervisor")
    graph.add_conditional_edges("supervisor", lambda state: END if state["messages"][-1].content == "FINISH" else state["messages"][-1].content)
    graph.add_edge("researcher", "supervisor")
    graph.add_edge("timekeeper", "supervisor")
    return graph.compile(name="launch-team")


SUPERVISED = [
    ("invoke_agent supervisor", None), ("llm", "supervisor"),
    ("invoke_agent research_expert", None), ("llm", "research_expert"), ("tool", "research_expert"), ("llm", "research_expert"),
    ("invoke_agent supervisor", None), ("llm", "supervisor"),
    ("invoke_agent time_expert", None), ("llm", "time_expert"), ("tool", "time_expert"), ("llm", "time_expert"),
    ("invoke_agent supervisor", None), ("llm", "supervisor")]


@pytest.mark.parametrize("mode", ["ainvoke", "astream subgraphs"])
def test_a_supervisor_of_two_react_sub_agents(store, model_server, mode):
    graph = _supervised(model_server)
    if mode == "ainvoke":
        asyncio.run(graph.ainvoke(_question()))
    else:  # the sub-agents' own updates streamed too: LangGraph runs them through their astream
        async def main():
            return [chunk async for chunk in graph.astream(_question(), stream_mode="updates", subgraphs=True)]
        assert any(namespace for namespace, _ in asyncio.run(main()))
    trajectory = store.only_run()
    assert trajectory.run["name"] == "launch-team"
    assert _agents(trajectory) == SUPERVISED


def test_a_sub_agent_made_and_invoked_inside_a_node_is_that_nodes_agent(store, model_server):
    llm = _model(model_server)

    def research(state: MessagesState) -> dict[str, Any]:  # LangGraph cannot see this graph before the node runs
        sub = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"])
        return {"messages": sub.invoke(state)["messages"][-1:]}

    graph = StateGraph(MessagesState)
    graph.add_node("research", research)
    graph.add_node("verifier", _agent_node(llm, "verifier")[0])
    graph.add_edge(START, "research")
    graph.add_edge("research", "verifier")
    graph.compile().invoke(_question())
    assert _agents(store.only_run()) == [("invoke_agent research", None), ("llm", "research"), ("tool", "research"),
                                         ("llm", "research"), ("invoke_agent verifier", None), ("llm", "verifier")]


def test_a_handoff_between_react_sub_agents_by_a_command_to_the_parent(store, model_server):
    llm = _model(model_server)

    @tool
    def transfer_to_timekeeper(state: Annotated[dict, InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Hand the conversation over to the timekeeper."""
        told = ToolMessage("Transferred to the timekeeper", tool_call_id=tool_call_id, name="transfer_to_timekeeper")
        return Command(goto="timekeeper", graph=Command.PARENT, update={"messages": state["messages"] + [told]})

    graph = StateGraph(MessagesState)
    graph.add_node("researcher", create_react_agent(llm, [get_weather, transfer_to_timekeeper], prompt=PROMPTS["handing"],
                                                    name="researcher"), destinations=("timekeeper",))
    graph.add_node("timekeeper", create_react_agent(llm, [get_time], prompt=PROMPTS["timekeeper"], name="timekeeper"))
    graph.add_edge(START, "researcher")
    graph.compile().invoke(_question())
    trajectory = store.only_run()
    # the handoff (LangGraph's ParentCommand through the researcher's node) ends its turn, no failure
    assert [(s.status, name, inside) for s, (name, inside) in zip(trajectory.steps, _agents(trajectory))] == [
        ("ok", "invoke_agent researcher", None), ("ok", "llm", "researcher"), ("ok", "tool", "researcher"),
        ("ok", "llm", "researcher"), ("ok", "tool", "researcher"),
        ("ok", "invoke_agent timekeeper", None), ("ok", "llm", "timekeeper"), ("ok", "tool", "timekeeper"), ("ok", "llm", "timekeeper")]
    assert [s.tool_name for s in trajectory.steps if s.type == "tool"] == ["get_weather", "transfer_to_timekeeper", "get_time"]


def test_an_agent_node_interrupted_for_a_human_is_no_failure(store, model_server):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    llm = _model(model_server)

    def verifier(state: MessagesState) -> dict[str, Any]:
        said = llm.invoke([SystemMessage(PROMPTS["verifier"])] + state["messages"])
        return {"messages": [said, HumanMessage(interrupt("Publish the verdict?"))]}

    graph = StateGraph(MessagesState)
    graph.add_node("verifier", verifier)
    graph.add_node("publish", lambda state: {})
    graph.add_edge(START, "verifier")
    graph.add_edge("verifier", "publish")
    compiled = graph.compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t-1"}}
    with agentotel.run("approval"):
        assert "__interrupt__" in compiled.invoke(_question(), thread)
        compiled.invoke(Command(resume="yes"), thread)  # the node runs again from its start
    trajectory = store.only_run(check=False)  # check: the same model request sent twice (repeated_model_request), as it was
    assert [(s.status, name, inside) for s, (name, inside) in zip(trajectory.steps, _agents(trajectory))] == [
        ("ok", "invoke_agent LangGraph", None), ("ok", "invoke_agent verifier", "LangGraph"), ("ok", "llm", "verifier"),
        ("ok", "invoke_agent LangGraph", None), ("ok", "invoke_agent verifier", "LangGraph"), ("ok", "llm", "verifier")]


def test_a_react_agent_used_as_a_tool_is_an_agent_step_inside_the_tool_step(store, model_server):
    llm = _model(model_server)
    researcher = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"], name="research_expert")

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher."""
        return researcher.invoke({"messages": [HumanMessage(question)]})["messages"][-1].content

    create_react_agent(llm, [ask_researcher], prompt=PROMPTS["lead"], name="lead").invoke(_question())
    trajectory = store.only_run()
    by_index = {s.index: s for s in trajectory.steps}
    assert [(s.name if s.type == "agent" else s.type, by_index[s.parent_index].name if s.parent_index else None)
            for s in trajectory.steps] == [
        ("llm", None), ("tool", None), ("invoke_agent research_expert", "execute_tool ask_researcher"),
        ("llm", "invoke_agent research_expert"), ("tool", "invoke_agent research_expert"), ("llm", "invoke_agent research_expert"),
        ("llm", None)]


class Outage(Exception):
    pass


def test_a_failing_agent_node_is_an_error_step_and_the_exception_passes_through(store, model_server):
    llm = _model(model_server)
    planner = _agent_node(llm, "planner")[0]

    def executor(state: MessagesState) -> dict[str, Any]:
        llm.invoke([SystemMessage(PROMPTS["verifier"])] + state["messages"])
        raise Outage("the deploy API is down")

    graph = StateGraph(MessagesState)
    graph.add_node("planner", planner)
    graph.add_node("planner_tools", ToolNode([get_weather]))
    graph.add_node("executor", executor)
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", lambda state: "planner_tools" if state["messages"][-1].tool_calls else "executor")
    graph.add_edge("planner_tools", "planner")
    with pytest.raises(Outage, match="the deploy API is down"):
        graph.compile().invoke(_question())
    trajectory = store.only_run()
    assert trajectory.run["status"] == "error"
    steps = {s.name: s for s in trajectory.steps if s.type == "agent"}
    assert (steps["invoke_agent planner"].status, steps["invoke_agent executor"].status) == ("ok", "error")
    assert steps["invoke_agent executor"].error_type.endswith("Outage")


def _fan_out(model_server):
    """A planner with its tool node, then a worker agent per city (Send), then a collect node."""
    from langchain_core.runnables import RunnableLambda

    llm = _model(model_server)
    worker_node, worker_anode = _agent_node(llm, "worker")
    planner_node, planner_anode = _agent_node(llm, "planner")
    graph = StateGraph(MessagesState)
    graph.add_node("planner", RunnableLambda(planner_node, afunc=planner_anode))
    graph.add_node("planner_tools", ToolNode([get_weather]))
    graph.add_edge("planner_tools", "planner")
    graph.add_node("worker", RunnableLambda(worker_node, afunc=worker_anode))
    graph.add_node("collect", lambda state: {})
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", lambda state: "planner_tools" if state["messages"][-1].tool_calls else [
        Send("worker", {"messages": [HumanMessage(city)]}) for city in ("Paris", "Lyon")])
    graph.add_edge("worker", "collect")
    return graph.compile()


def _assert_fanned_out(trajectory: Any) -> None:
    assert _agents(trajectory)[:4] == [("invoke_agent planner", None), ("llm", "planner"), ("tool", "planner"), ("llm", "planner")]
    workers = [s for s in trajectory.steps if s.name == "invoke_agent worker"]
    assert len(workers) == 2 and all(w.parent_index is None for w in workers)
    calls = [s for s in trajectory.steps if s.type == "llm" and s.parent_index in {w.index for w in workers}]
    assert sorted(s.parent_index for s in calls) == sorted(w.index for w in workers)  # one model call in each
    assert sorted(s.output[0]["parts"][0]["content"] for s in calls) == ["report on Lyon", "report on Paris"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_agents_fanned_out_with_send_each_have_their_step(store, model_server, mode):
    compiled = _fan_out(model_server)
    if mode == "sync":
        compiled.invoke(_question())
    else:
        asyncio.run(compiled.ainvoke(_question()))
    _assert_fanned_out(store.only_run())


def test_agents_side_by_side_each_with_a_tool_node_of_its_own(store, model_server):
    from langgraph.graph.message import add_messages

    llm = _model(model_server)
    Desk = TypedDict("Desk", {"researcher": Annotated[list, add_messages], "timekeeper": Annotated[list, add_messages]})

    def agent(who: str):
        bound = llm.bind_tools([TOOLS[who]])

        def node(state: dict[str, Any]) -> dict[str, Any]:
            seed = [] if state[who] else [SystemMessage(PROMPTS[who]), HumanMessage("Paris, please.")]
            return {who: seed + [bound.invoke(seed + state[who])]}
        return node

    graph = StateGraph(Desk)
    for who in ("researcher", "timekeeper"):  # both start at once, and go through their tool nodes in the same supersteps
        graph.add_node(who, agent(who))
        graph.add_node(f"{who}_tools", ToolNode([TOOLS[who]], messages_key=who))
        graph.add_edge(START, who)
        graph.add_conditional_edges(who, lambda state, who=who: f"{who}_tools" if state[who][-1].tool_calls else END)
        graph.add_edge(f"{who}_tools", who)
    graph.compile().invoke({"researcher": [], "timekeeper": []})

    trajectory = store.only_run()
    agents = {s.index: s.name for s in trajectory.steps if s.type == "agent"}
    assert sorted(agents.values()) == ["invoke_agent researcher", "invoke_agent timekeeper"]
    held = {name: [(s.type, s.tool_name) for s in trajectory.steps if s.parent_index == index] for index, name in agents.items()}
    assert held == {"invoke_agent researcher": [("llm", None), ("tool", "get_weather"), ("llm", None)],
                    "invoke_agent timekeeper": [("llm", None), ("tool", "get_time"), ("llm", None)]}


def test_a_react_agent_alone_has_no_step_for_its_nodes(store, model_server):
    llm = _model(model_server)
    graph = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"], name="research_expert")
    with agentotel.run("research"):
        graph.invoke(_question())
    assert _agents(store.only_run()) == [("invoke_agent research_expert", None), ("llm", "research_expert"),
                                          ("tool", "research_expert"), ("llm", "research_expert")]


# -- the same graphs recorded by OpenInference's LangChain instrumentation alone (its spans into a store) ------


def _openinference(tmp_path, run) -> Any:
    """The trajectory of the one run `run(provider)` records with OpenInference's LangChainInstrumentor alone."""
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agentotel.store import ParquetSpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(tmp_path)))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        run()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    traces = agentotel.open(tmp_path)
    (run_id,) = [r[0] for r in traces.sql("select run_id from runs").fetchall()]
    trajectory = traces.trajectory(run_id)
    # the views say the same: the steps view's steps, the runs view's counts
    assert traces.sql("select type, name, duration_ms from steps order by index").fetchall() == [
        (s.type, s.name, s.duration_ms) for s in trajectory.steps]
    (run,) = traces.sql("select * from runs").to_arrow_table().to_pylist()
    assert {k: run[k] for k in ("name", "steps", "model_calls", "tool_calls")} == {
        k: trajectory.run[k] for k in ("name", "steps", "model_calls", "tool_calls")}
    return trajectory


@pytest.mark.parametrize("mode", ["invoke", "astream"])
def test_openinference_records_the_same_agent_steps(tmp_path, model_server, monkeypatch, mode):
    monkeypatch.setattr(f"{__name__}.REJECT_FIRST", True)  # the executor's second turn, after the verifier's

    def run():
        if mode == "invoke":
            return _team_graph(model_server).invoke(_question())

        async def main():
            return [chunk async for chunk in _team_graph(model_server, asynchronous=True).astream(_question(), stream_mode="updates")]
        assert asyncio.run(main())
    trajectory = _openinference(tmp_path, run)
    assert trajectory.run["name"] == "LangGraph"
    assert _agents(trajectory) == TEAM[:-2] + [("invoke_agent verifier", None), ("llm", "verifier")] + TEAM[4:]
    tools = [s for s in trajectory.steps if s.type == "tool"]
    assert [(s.tool_name, s.requested_by) for s in tools] == [("get_weather", 2), ("get_time", 6), ("get_time", 12)]
    for agent in (s for s in trajectory.steps if s.type == "agent"):  # a step lasts its turn
        inside = [s for s in trajectory.steps if s.parent_index == agent.index]
        assert agent.start_time <= inside[0].start_time
        assert agent.duration_ms >= sum(s.duration_ms for s in inside) - 1


def test_openinference_a_supervisor_of_two_react_sub_agents(tmp_path, model_server):
    trajectory = _openinference(tmp_path, lambda: asyncio.run(_supervised(model_server).ainvoke(_question())))
    assert _agents(trajectory) == SUPERVISED


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_openinference_agents_fanned_out_with_send_each_have_their_step(tmp_path, model_server, mode):
    compiled = _fan_out(model_server)
    _assert_fanned_out(_openinference(tmp_path, lambda: compiled.invoke(_question()) if mode == "sync" else asyncio.run(
        compiled.ainvoke(_question()))))


def test_openinference_a_react_agent_alone_has_no_step_for_its_nodes(tmp_path, model_server):
    llm = _model(model_server)
    graph = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"], name="research_expert")
    trajectory = _openinference(tmp_path, lambda: graph.invoke(_question()))
    assert [(s.type, s.parent_index) for s in trajectory.steps] == [("llm", None), ("tool", None), ("llm", None)]


def test_with_openinference_on_too_each_agent_step_is_agentotels_once(store, model_server):
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=store.provider)
    try:
        _team_graph(model_server).invoke(_question())
    finally:
        instrumentor.uninstrument()
    trajectory = store.only_run()
    assert _agents(trajectory) == TEAM
    assert [s.name for s in trajectory.steps if s.type != "agent"][:2] == ["chat gpt-4o-mini", "execute_tool get_weather"]


def test_openinference_a_react_agent_asking_for_an_unknown_tool_has_no_step_for_its_nodes(tmp_path, model_server):
    """Its tool node runs no tool (it answers the unknown tool's error itself): still a tool node, no agent of its own."""
    llm = _model(model_server)
    model_server.chat = lambda body: chat_tool_calls(content="Done.") if body["messages"][-1]["role"] == "tool" else chat_tool_calls(
        ("call_unknown", "get_forecast", {"city": "Paris"}))
    graph = create_react_agent(llm, [get_weather], prompt=PROMPTS["researcher"])
    trajectory = _openinference(tmp_path, lambda: graph.invoke(_question()))
    assert [(s.type, s.parent_index) for s in trajectory.steps] == [("llm", None), ("llm", None)]
