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
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
    # OpenInference's LangChain spans: each graph node an agent step holding its model call's answer; the tools
    # offered as llm.tools.N.tool.json_schema
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


def _verdicts(tmp_path: Path, framework: str, instrumentation: str, faults: list[str]) -> list:
    store = tmp_path / "store"
    store.mkdir()
    return judge(store, produce(store, framework, instrumentation, faults), framework, instrumentation)


def _assert_right(verdicts: list) -> None:
    wrong = [v.row() for v in verdicts if v.good_alarms or not v.check_ok or not v.diff_ok]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("config", list(FAST), ids=[f"{f}-{i}" for f, i in FAST])
def test_check_and_diff_name_the_injected_fault(tmp_path, config):
    framework, instrumentation = config
    verdicts = _verdicts(tmp_path, framework, instrumentation, FAST[config])
    assert [v.fault for v in verdicts] == FAST[config]
    _assert_right(verdicts)


@pytest.mark.slow
@pytest.mark.parametrize("config", MATRIX, ids=[f"{f}-{i}" for f, i in MATRIX])
def test_every_fault_on_every_framework_and_instrumentation(tmp_path, config):
    framework, instrumentation = config
    _assert_right(_verdicts(tmp_path, framework, instrumentation, list(EXPECTED)))
