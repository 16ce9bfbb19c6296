"""`diff` and `check` on good/faulty twins of one order-support agent run by REAL frameworks (the OpenAI Agents
SDK with a handoff, LangGraph's create_react_agent, pydantic-ai, a plain loop whose tool runs on an MCP server)
under `agentotel.instrument()`, and the same agent recorded by OTHER instrumentations (OpenInference,
OpenLLMetry, opentelemetry-instrumentation-openai-v2, pydantic-ai's own) through the store's dialect mapping.

Each fault is drawn from a published taxonomy and injected at a known step (tests/analysis/twins_producer.py):
MAST step repetition, premature termination (a turn limit), loss of conversation history, disobeyed task
specification (an edited prompt); TRAIL tool selection (a tool that does not exist), formatting (arguments that
are no JSON), tool output misinterpretation (a tool error answered past, an error returned as a result),
rate-limit errors, language-only hallucination; ToolScan incorrect argument name and value; an empty answer.
`check`'s top finding must be at the step where the cause shows, in the right layer; `diff`'s first divergence
must name that step of the faulty run; the healthy twin gets no warning. The fast tests run one framework or
instrumentation each, on the faults whose rule it exercises; `-m slow` runs the whole matrix.

The Agents SDK's handoff, recorded by `agentotel.instrument()` (the integration's handoff span, with the call's id)
and by OpenInference's openai-agents instrumentation (a TOOL span "handoff to orders" that keeps only the two agents'
names, and `{}` arguments left out of the flattened messages), is a tool step paired with the `transfer_to_orders`
call that asked for it: its tests read the `repeat` twins the fast Agents SDK recordings add for them (the pairing
rule's own cases, on hand-built rows, are in test_handoff_pairing.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentotel
from twins import EXPECTED, judge, produce

# (framework, instrumentation) -> the faults its fast test runs: the shapes each fix was made for.
FAST = {
    # a handoff: the desk is a sub-agent; a follow-up turn is the agent run again; the SDK raises on an unknown
    # tool; a failure inside an agent step makes that step fail too (diff names the call inside)
    ("agents", "agentotel"): ["history", "empty", "unknown_tool", "rate_limit", "prompt"],
    # pydantic-ai's own instrumentation: tool results named `result` (an earlier GenAI conventions version) and
    # carried back in user messages; the framework asks again after an empty answer (its retry prompt a system
    # message), then gives up; history of runs with no agentotel root
    ("pydantic-ai", "pydantic-ai"): ["ungrounded", "empty", "prompt", "repeat"],
    # OpenInference's LangChain spans: a one-agent graph's nodes no steps (its tool node's task without a tool span,
    # an unknown tool's, too); the tools offered as llm.tools.N.tool.json_schema
    ("langgraph", "openinference"): ["ungrounded", "bad_json", "unknown_tool"],
    # only the model client instrumented: tool calls and results only in the messages
    ("openai", "openinference"): ["repeat", "tool_error", "ungrounded", "wrong_args"],
    # the Agents SDK under OpenInference: the handoff a tool span, no tool definitions on the generation spans
    ("agents", "openinference"): ["prompt", "wrong_args"],
    # no tool definitions recorded at all, tools only in the messages
    ("openai", "openai-v2"): ["unknown_tool"],
}
MATRIX = [("openai", "agentotel"), ("mcp", "agentotel"), ("agents", "agentotel"), ("langgraph", "agentotel"),
          ("pydantic-ai", "agentotel"), ("openai", "openinference"), ("openai", "openllmetry"), ("openai", "openai-v2"),
          ("agents", "openinference"), ("langgraph", "openinference"), ("langgraph", "openllmetry"),
          ("pydantic-ai", "pydantic-ai")]


# The handoff tests' twins, recorded in the same process as the fast test's faults of each Agents SDK config: a
# recording's process start and SDK imports (~7 s of CPU) are most of what it costs.
HANDOFF = "repeat"


def _verdicts(tmp_path: Path, framework: str, instrumentation: str, faults: list[str]) -> list:
    store = tmp_path / "store"
    store.mkdir()
    return judge(store, produce(store, framework, instrumentation, faults), framework, instrumentation)


def _assert_right(verdicts: list) -> None:
    wrong = [v.row() for v in verdicts if v.good_alarms or not v.check_ok or not v.diff_ok]
    assert not wrong, "\n".join(wrong)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory):
    """(framework, instrumentation) -> its store and manifest, each config recorded once for the module: the fast
    test's faults, and for the Agents SDK the handoff tests' twins too."""
    done: dict[tuple[str, str], tuple[Path, list[dict[str, Any]]]] = {}

    def get(config: tuple[str, str]) -> tuple[Path, list[dict[str, Any]]]:
        if config not in done:
            store = tmp_path_factory.mktemp("-".join(config)) / "store"
            store.mkdir()
            faults = FAST[config] + ([HANDOFF] if config[0] == "agents" else [])
            done[config] = store, produce(store, *config, faults)
        return done[config]

    return get


@pytest.mark.parametrize("config", list(FAST), ids=[f"{f}-{i}" for f, i in FAST])
def test_check_and_diff_name_the_injected_fault(recorded, config):
    store, manifest = recorded(config)
    verdicts = judge(store, [m for m in manifest if m["fault"] in FAST[config]], *config)
    assert [v.fault for v in verdicts] == FAST[config]
    _assert_right(verdicts)


# -- an Agents SDK handoff is a tool step paired with the transfer call that asked for it ---------------------


@pytest.fixture(scope="module", params=["agentotel", "openinference"])
def handoff(request: pytest.FixtureRequest, recorded) -> tuple[Any, list[Any]]:
    """Three runs of the handing-over agent (two good, one repeating its lookup) under one instrumentation."""
    store, manifest = recorded(("agents", request.param))
    traces = agentotel.open(store)
    runs = traces.sql("SELECT run_id FROM runs WHERE name = $n ORDER BY start_time", {"n": f"orders-{HANDOFF}"}).fetchall()
    assert len(runs) == len([m for m in manifest if m["fault"] == HANDOFF]) == 3
    return traces, [traces.trajectory(run) for (run,) in runs]


def _calls(messages: Any) -> list[dict[str, Any]]:
    return [p for m in messages or () for p in m["parts"] if p["type"] == "tool_call"]


def test_the_handoff_step_answers_the_transfer_call(handoff: tuple[Any, list[Any]]) -> None:
    _traces, trajectories = handoff
    for trajectory in trajectories:
        steps = trajectory.steps
        asking = next(s for s in steps if s.type == "llm")
        (call,) = _calls(asking.output)
        assert (call["name"], call["arguments"]) == ("transfer_to_orders", {})
        handoff_step = steps[asking.index]  # the step right after it
        assert handoff_step.type == "tool"
        assert (handoff_step.tool_name, handoff_step.tool_call_id, handoff_step.requested_by) == ("transfer_to_orders", call["id"], asking.index)
        # the next agent takes over after it, and its model call is sent the same call back
        assert steps[handoff_step.index].type == "agent"
        sent_back = next(s for s in steps if s.type == "llm" and s.index > handoff_step.index)
        assert [(c["id"], c["arguments"]) for c in _calls(sent_back.input)] == [(call["id"], {})]


def test_check_sees_the_handoff_as_a_run_call(handoff: tuple[Any, list[Any]]) -> None:
    traces, trajectories = handoff
    good = trajectories[1]  # the first run is history for the second
    assert [f.kind for f in traces.findings(good.run["run_id"])] == []
    kinds = {f.kind for f in traces.findings(trajectories[2].run["run_id"])}
    assert "repeated_tool_call" in kinds and "unanswered_tool_calls" not in kinds


@pytest.mark.slow
@pytest.mark.parametrize("config", MATRIX, ids=[f"{f}-{i}" for f, i in MATRIX])
def test_every_fault_on_every_framework_and_instrumentation(tmp_path, config):
    framework, instrumentation = config
    _assert_right(_verdicts(tmp_path, framework, instrumentation, list(EXPECTED)))
