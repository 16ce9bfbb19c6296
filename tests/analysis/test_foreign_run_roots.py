"""A run recorded by another instrumentation has no agentotel run span: its app's root span (an OpenInference
CHAIN, a traceloop workflow) is the run's root, and keeps what the run was asked and what it answered in its own
attributes (`input.value` / `output.value`, `traceloop.entity.input` / `.output`). `check` reads them as the run's
task and output, so rules about the run's answer hold for those runs too: here, a loop that stopped after a tool
call and answered with text no model wrote (MAST premature termination). Before, such a run had no output for
the rules: no finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel.analysis import _record
from agentotel.analysis.detectors import findings
from agentotel.store import ParquetSpanExporter, dialects
from test_foreign_tool_spans import _messages  # OpenInference's flattened message attributes

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
TASK = "Restock shelf B4 with the oat milk the store sells most."


def _record_run(directory: Path, root_attributes: Callable[[str], dict[str, Any]], stopped: bool) -> str:
    """Model asks for `sales_rank`, the tool answers; then either the model answers, or the loop stops there."""
    provider = TracerProvider(resource=Resource.create({"service.name": "shelf-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))
    tracer = provider.get_tracer("shelf-bot")
    user = {"role": "user", "content": TASK}
    asked = {"role": "assistant", "calls": [("call_1", "sales_rank", {"category": "oat milk"})]}
    result = json.dumps({"top": [{"sku": "OAT-221", "units": 340}, {"sku": "OAT-107", "units": 120}]})
    answer = "Shelf B4 gets OAT-221, the best seller (340 units)."

    def llm(given: list[dict[str, Any]], said: dict[str, Any]) -> None:
        attributes = {KIND: OpenInferenceSpanKindValues.LLM.value, SpanAttributes.LLM_MODEL_NAME: "gpt-4o-mini",
                      SpanAttributes.LLM_PROVIDER: "openai", SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 60,
                      SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 15,
                      **_messages(SpanAttributes.LLM_INPUT_MESSAGES, given), **_messages(SpanAttributes.LLM_OUTPUT_MESSAGES, [said])}
        with tracer.start_as_current_span("ChatCompletion", attributes=attributes):
            pass

    output = "Stopped: step limit reached." if stopped else answer
    with tracer.start_as_current_span("shelf-bot", attributes=root_attributes(output)) as root:
        llm([user], asked)
        with tracer.start_as_current_span("sales_rank", attributes={
                KIND: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: "sales_rank",
                SpanAttributes.INPUT_VALUE: json.dumps({"category": "oat milk"}), SpanAttributes.OUTPUT_VALUE: result}):
            pass
        if not stopped:
            llm([user, asked, {"role": "tool", "content": result}], {"role": "assistant", "content": answer})
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def _openinference_chain(output: str) -> dict[str, Any]:
    return {KIND: OpenInferenceSpanKindValues.CHAIN.value, SpanAttributes.INPUT_VALUE: TASK, SpanAttributes.OUTPUT_VALUE: output}


def _traceloop_workflow(output: str) -> dict[str, Any]:
    return {dialects.TL_SPAN_KIND: "workflow", dialects.TL_ENTITY_NAME: "shelf-bot",
            dialects.TL_ENTITY_INPUT: json.dumps({"args": [TASK], "kwargs": {}}), dialects.TL_ENTITY_OUTPUT: json.dumps(output)}


def test_a_foreign_root_gives_the_run_its_task_and_output(tmp_path: Path) -> None:
    for recorder in (_openinference_chain, _traceloop_workflow):
        store = tmp_path / recorder.__name__
        run = _record_run(store, recorder, stopped=True)
        with agentotel.open(store) as traces:
            record = _record.load_run(traces, run)
        assert TASK in str(record.run["task"]), recorder.__name__
        assert "step limit reached" in str(record.run["output"]), recorder.__name__
        # read as the run's, not left among the span attributes detectors read
        assert not set(record.root_attributes) & {*dialects.RUN_INPUT_KEYS, *dialects.RUN_OUTPUT_KEYS}


def test_check_finds_a_loop_that_stopped_before_the_model_answered(tmp_path: Path) -> None:
    for recorder in (_openinference_chain, _traceloop_workflow):
        stopped = _record_run(tmp_path / f"{recorder.__name__}-stopped", recorder, stopped=True)
        done = _record_run(tmp_path / f"{recorder.__name__}-done", recorder, stopped=False)
        with agentotel.open(tmp_path / f"{recorder.__name__}-stopped") as traces:
            found = findings(traces, stopped)
        assert [(f.kind, f.layer, f.index) for f in found if f.kind == "stopped_before_answer"] == [
            ("stopped_before_answer", "workflow", 2)], (recorder.__name__, found)
        with agentotel.open(tmp_path / f"{recorder.__name__}-done") as traces:
            assert not [f for f in findings(traces, done) if f.severity != "info"], recorder.__name__
