"""Semantic Kernel: the spans its GenAI diagnostics write become the same runs and steps as agentotel's own.

The spans are recorded (recorded/semantic-kernel.jsonl, made by `recorded/record.py semantic-kernel`: semantic-kernel
1.45 cannot be installed beside the mcp 2.x the project tests): a ChatCompletionAgent around a kernel function,
twice; the second time the function raises. Semantic Kernel writes a model call's messages only as log records,
not on its span: its model steps have tokens and finish reasons, no messages.
"""

from __future__ import annotations

from agentotel.query import Traces
from test_dialects import IN, OUT, TOKENS, recorded_store
from weather_variants import good_and_faulty

store = recorded_store("semantic-kernel")


def test_the_agents_run_of_model_and_tool_steps(traces: Traces) -> None:
    good, faulty = good_and_faulty(traces)
    assert (good["name"], good["agent_name"], good["model_calls"], good["tool_calls"]) == ("invoke_agent weather", "weather", 2, 1)
    assert (good["input_tokens"], good["output_tokens"]) == (IN, OUT)
    first, tool, last = traces.trajectory(good["run_id"]).steps
    assert [(s.type, s.input_tokens, s.output_tokens) for s in (first, last)] == [("llm", *t) for t in TOKENS]
    # Its enum's text (`FinishReason.TOOL_CALLS`, in gen_ai.response.finish_reason) as the GenAI finish reasons.
    reasons = [r for (r,) in traces.sql("SELECT finish_reasons FROM llm_calls ORDER BY start_time").fetchall()]
    assert reasons[:2] == [["tool_calls"], ["stop"]]
    assert (tool.tool_name, tool.tool_call_id, tool.input, tool.output) == (
        "Weather-get_weather", "call_weather_1", {"city": "Paris"}, "sunny in Paris")
    [failed] = [s for s in traces.trajectory(faulty["run_id"]).steps if s.type == "tool"]
    assert failed.status == "error"


def test_the_agents_answer_is_a_genai_message(traces: Traces) -> None:
    from agentotel.analysis import _record

    good, _ = good_and_faulty(traces)
    record = _record.load_run(traces, good["run_id"])
    assert record.run["output"] == '[{"role":"assistant","parts":[{"type":"text","content":"Sunny in Paris."}]}]'
