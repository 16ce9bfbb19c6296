"""MLflow tracing: its spans, exported over OTLP to an agentotel-collector, become the same runs and steps.

One process runs the real mlflow-tracing twice (OTLP export: its own tracer provider, as an MLflow user routes
traces to an OpenTelemetry collector): the openai SDK under `mlflow.openai.autolog()` against the scripted model, the
tool under `@mlflow.trace(span_type="TOOL")`, inside a traced AGENT function; the second time the tool fails and
the model answers past its error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import agentotel
from agentotel import semconv
from agentotel.query import Traces
from test_dialects import IN, ROOT, assert_weather_steps, glob_sum, produce
from weather_variants import assert_tool_error_named, good_and_faulty


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "collector"))
    from agentotel_collector import Collector

    folder = tmp_path_factory.mktemp("mlflow")
    collector = Collector(dir=folder / "store", http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
    try:
        host, port = collector.http_address
        with pytest.MonkeyPatch.context() as env:
            # A tracking server MLflow never reaches (OTLP export replaces it); without one it looks for a local store.
            env.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
            env.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://{host}:{port}/v1/traces")
            env.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
            produce(folder / "unused", instrumentations=[], flow="mlflow", failures=[False, True])
    finally:
        collector.stop()
    return folder / "store"


@pytest.fixture(scope="module")
def traces(store: Path) -> Traces:
    return agentotel.open(store)


def test_mlflow_spans_are_model_and_tool_steps_of_the_agents_run(traces: Traces, store: Path) -> None:
    good, _ = good_and_faulty(traces)
    assert good["name"] == "weather-agent"  # the AGENT span: the run itself
    assert_weather_steps(traces, good)
    steps = traces.trajectory(good["run_id"]).steps
    assert [s.type for s in steps] == ["llm", "tool", "llm"]
    assert (steps[1].input, steps[1].output) == ({"city": "Paris"}, "sunny in Paris")  # JSON-encoded by MLflow
    assert [m["finish_reason"] for s in steps if s.type == "llm" for m in s.output] == ["tool_calls", "stop"]
    assert traces.sql("SELECT DISTINCT dialect FROM spans").fetchall() == [("mlflow",)]
    offered = traces.sql(f"SELECT DISTINCT attributes['{semconv.GEN_AI_TOOL_DEFINITIONS}'] FROM llm_calls").fetchall()
    assert [[t["name"] for t in json.loads(o)] for (o,) in offered] == [["get_weather"]]
    assert glob_sum(store, "input_tokens") == 2 * IN


def test_check_names_the_model_step_that_answered_past_the_tool_error(traces: Traces, store: Path) -> None:
    assert_tool_error_named(traces, store, *good_and_faulty(traces))
