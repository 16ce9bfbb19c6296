"""CrewAI through OpenInference's CrewAI and OpenAI instrumentations: the same runs and steps as agentotel's own.

The spans are recorded (recorded/crewai.jsonl, made by `recorded/record.py crewai`: crewai 1.15 pulls hundreds of MB
the project does not need): a crew of one agent and one task around a tool, twice; the second time the tool
raises and CrewAI hands the model its error.
"""

from __future__ import annotations

from pathlib import Path

from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, recorded_store
from weather_variants import assert_tool_error_named, good_and_faulty

store = recorded_store("crewai")


def test_the_crews_agent_its_model_calls_and_tool(traces: Traces) -> None:
    good, _ = good_and_faulty(traces)
    assert (good["model_calls"], good["tool_calls"], good["input_tokens"], good["output_tokens"]) == (2, 1, IN, OUT)
    # The agent by its role (OpenInference's graph.node.id: CrewAI's AGENT span has no agent.name).
    assert good["agent_name"] == "Weather reporter"
    agent, first, tool, last = traces.trajectory(good["run_id"]).steps
    assert (agent.type, agent.name) == ("agent", "Weather reporter._execute_core")
    assert [(s.type, s.input_tokens, s.output_tokens) for s in (first, last)] == [("llm", *t) for t in TOKENS]
    assert (tool.tool_name, tool.tool_call_id, tool.requested_by, tool.input, tool.output) == (
        "get_weather", "call_weather_1", first.index, {"city": "Paris"}, "sunny in Paris")


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))


def test_two_runs_of_the_crew_share_a_name_and_a_history(traces: Traces) -> None:
    """Each kickoff's root span is named after the crew's instance (`Crew_<uuid>.kickoff`): the runs' name leaves the
    uuid out, so the second run's history holds the first (what tool_output_drift learns from)."""
    from agentotel.analysis._record import load_history, load_run

    good, faulty = good_and_faulty(traces)
    assert (good["name"], faulty["name"]) == ("Crew.kickoff", "Crew.kickoff")
    assert traces.trajectory(faulty["run_id"]).run["name"] == "Crew.kickoff"  # the trajectory's summary says the same
    history = load_history(traces, load_run(traces, faulty["run_id"]))
    assert [run_id for run_id, _call in history.first_calls] == [good["run_id"]]
    assert traces.resolve("Crew.kickoff").run_id == faulty["run_id"]  # a run's name means its latest run
