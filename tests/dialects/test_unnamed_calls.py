"""Tool calls recorded without an id pair with their results and tool steps, whichever instrumentation recorded them.

Gemini's function calls carry no id, and other instrumentations' spans of them (OpenInference, OpenLLMetry)
keep none; a tool traced by a decorator (OpenInference's `tracer.tool`) never knows its call's id. Each run
here is the real instrumentation package driving the real SDK against the scripted model server
(producer.py): a model call asking for get_weather in Paris and Oslo at once, the two tool calls, a model
call answering. One producer run per package, shared by the module's assertions.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

import agentotel
from agentotel._context import canonical_arguments, stable_call_id
from test_dialects import only_run, produce

PACKAGES = {
    "openinference-google-genai": "openinference.instrumentation.google_genai",
    "openllmetry-google-genai": "opentelemetry.instrumentation.google_generativeai",
    "openinference-anthropic": "openinference.instrumentation.anthropic",
    "openllmetry-anthropic": "opentelemetry.instrumentation.anthropic",
}
FLOWS = {"openinference-google-genai": "gemini", "openllmetry-google-genai": "gemini",
         "openinference-anthropic": "anthropic-tools", "openllmetry-anthropic": "anthropic-tools"}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each instrumentation's parallel-call run, recorded once: its trajectory's steps, by instrumentation."""
    cache: dict[str, Any] = {}

    def steps(instrumentation: str) -> list[Any]:
        if instrumentation not in cache:
            if not _installed(PACKAGES[instrumentation]):
                pytest.skip(f"{PACKAGES[instrumentation]} is not installed here")
            store = tmp_path_factory.mktemp(instrumentation) / "store"
            produce(store, instrumentations=[instrumentation], flow=FLOWS[instrumentation], parallel=True,
                    tool_spans="openinference", root_span="weather-job")
            traces = agentotel.open(store)
            run = only_run(traces)
            assert (run["model_calls"], run["tool_calls"], run["input_tokens"], run["output_tokens"]) == (2, 2, 120, 15)
            cache[instrumentation] = traces.trajectory(run["run_id"]).steps
        return cache[instrumentation]

    return steps


def tool_parts(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [p for m in messages for p in m["parts"] if p["type"] == kind]


def assert_paired(steps: list[Any]) -> dict[str, str]:
    """Each call's id (by city) is the one its tool step, the history's copy of it and its result carry."""
    assert [s.type for s in steps] == ["llm", "tool", "tool", "llm"]
    first, paris, oslo, second = steps
    asked = {c["arguments"]["city"]: c["id"] for c in tool_parts(first.output, "tool_call")}
    assert set(asked) == {"Paris", "Oslo"} and all(asked.values()) and asked["Paris"] != asked["Oslo"]
    assert (paris.tool_call_id, oslo.tool_call_id) == (asked["Paris"], asked["Oslo"])
    assert paris.requested_by == oslo.requested_by == first.index
    history = {c["arguments"]["city"]: c["id"] for c in tool_parts(second.input, "tool_call")}
    assert history == asked
    results = tool_parts(second.input, "tool_call_response")
    assert sorted((r["id"], "Paris" in json.dumps(r["response"])) for r in results) == sorted(
        [(asked["Paris"], True), (asked["Oslo"], False)])
    assert [m["role"] for m in first.output] == ["assistant"]
    return asked


@pytest.mark.parametrize("instrumentation", ["openinference-google-genai", "openllmetry-google-genai"])
def test_gemini_calls_without_ids_pair_with_their_results_and_tool_steps(recorded, instrumentation: str) -> None:
    asked = assert_paired(recorded(instrumentation))
    # Made from the call itself: the same ids whichever instrumentation recorded the run, in any process, and
    # the ones agentotel's own google-genai provider gives an id-less history's calls.
    assert asked == {city: stable_call_id("get_weather", canonical_arguments({"city": city}), 1) for city in asked}


def test_a_gemini_run_recorded_by_openinference_or_openllmetry_has_the_same_ids(recorded) -> None:
    ids = [[(s.type, s.tool_call_id, s.requested_by) for s in recorded(name)]
           for name in ("openinference-google-genai", "openllmetry-google-genai")]
    assert ids[0] == ids[1]


@pytest.mark.parametrize("instrumentation", ["openinference-anthropic", "openllmetry-anthropic"])
def test_a_decorated_tools_span_takes_the_id_of_the_anthropic_call_it_ran(recorded, instrumentation: str) -> None:
    asked = assert_paired(recorded(instrumentation))
    assert asked == {"Paris": "toolu_weather_1", "Oslo": "toolu_weather_2"}  # the ids the model gave are kept
