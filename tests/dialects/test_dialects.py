"""Other instrumentations' spans become the same runs and steps as agentotel's own.

Each scenario runs `producer.py` in a fresh process: the real instrumentation packages (OpenInference,
OpenLLMetry, ...) drive the real openai SDK, directly or through langchain-openai, against a scripted
model server on 127.0.0.1, and the spans reach the store through the in-process ParquetSpanExporter,
agentotel's own set-up, or an agentotel-collector over OTLP/HTTP.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

import agentotel
from agentotel import semconv
from agentotel.query import Traces, pylist
from tests import forkserver

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
# What the scripted server answers: two model calls (50 in / 10 out, 70 in / 5 out) around one tool call.
TOKENS = [(50, 10), (70, 5)]
IN, OUT = 120, 15


def produce(store: Path, **options: Any) -> None:
    env_path = f"{ROOT}{':' + str(ROOT / 'collector')}"
    if os.environ.get("PYTHONPATH"):  # where the test's own packages come from (a probe's --target folder)
        env_path += ":" + os.environ["PYTHONPATH"]
    # A process of its own, forked from one that imported openai, langchain and pyarrow once (tests/forkserver.py).
    result = forkserver.run(
        [HERE / "producer.py", json.dumps({"store": str(store), **options})], timeout=180,
        # Spans leave only at shutdown, in one batch: the plain-glob assertions rely on a call's two records
        # (agentotel's and another instrumentation's) reaching the writer together, which a scheduled export
        # on a loaded machine (the SDK's default is every 5 s) could split.
        env={**os.environ, "PYTHONPATH": env_path, "OTEL_SDK_DISABLED": "false", "OTEL_BSP_SCHEDULE_DELAY": "600000"},
    )
    assert result.returncode == 0, result.stderr[-4000:]


def recorded_store(*names: str) -> Any:
    """A module's `store` fixture: recorded/<name>.jsonl (OTLP/JSON, as the collector's file exporter writes it)
    stored through `agentotel import`, once per name given."""
    from agentotel.cli import main

    @pytest.fixture(scope="module", params=names)
    def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
        store = tmp_path_factory.mktemp(request.param) / "store"
        recorded = HERE / "recorded" / f"{request.param}.jsonl"
        assert main(["import", str(recorded), "--dir", str(store)], stdout=io.StringIO(), stderr=io.StringIO()) == 0
        return store

    return store


def only_run(traces: Traces) -> dict[str, Any]:
    runs = pylist(traces.sql("SELECT * FROM runs").to_arrow_table())
    assert len(runs) == 1, runs
    return runs[0]


def glob_sum(store: Path, column: str) -> Any:
    return duckdb.sql(f"SELECT sum({column}) FROM '{store}/spans/**/*.parquet'").fetchall()[0][0]


def assert_weather_steps(traces: Traces, run: dict[str, Any], *, tool_step: bool = True, tool_call_id: bool = True,
                         content: bool = True) -> None:
    """The two model calls (tokens, cost, messages in the GenAI shape) and, when recorded, the tool call between them."""
    steps = traces.trajectory(run["run_id"]).steps
    llm = [s for s in steps if s.type == "llm"]
    assert [(s.input_tokens, s.output_tokens) for s in llm] == TOKENS
    assert all(s.model and s.model.startswith("gpt-4o-mini") for s in llm)
    assert all(s.cost_usd is not None and s.cost_usd > 0 for s in llm)  # gpt-4o-mini is priced by genai-prices
    assert run["model_calls"] == 2
    if not content:
        assert all(s.input is None and s.output is None for s in llm)
        return
    first_in = llm[0].input
    assert first_in[0]["role"] == "user" and first_in[0]["parts"][0]["content"] == "What is the weather in Paris?"
    call = [p for m in llm[0].output for p in m["parts"] if p["type"] == "tool_call"]
    assert [(c["name"], c["id"]) for c in call] == [("get_weather", "call_weather_1")]
    assert "Sunny in Paris." in json.dumps(llm[1].output)
    tools = [s for s in steps if s.type == "tool" and s.tool_name == "get_weather"]
    if tool_step:
        assert len(tools) == 1
        assert llm[0].index < tools[0].index < llm[1].index
        assert "Paris" in json.dumps(tools[0].input)
        if tool_call_id:
            assert tools[0].tool_call_id == "call_weather_1"
            assert tools[0].requested_by == llm[0].index
    assert run["model_calls"] == 2
    assert (run["input_tokens"], run["output_tokens"]) == (IN, OUT)
    assert run["cost_usd"] == pytest.approx(sum(s.cost_usd for s in llm))


# -- another instrumentation alone ----------------------------------------------------------------------


def test_openinference_openai_spans_are_model_steps_of_a_run_named_after_the_root(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openinference-openai"], flow="openai", root_span="weather-job",
            root_attributes={"user.id": "bob", "session.id": "sess-7"}, setup_trace=True)
    traces = agentotel.open(store)
    run = only_run(traces)  # the set-up trace (initialize, tools/list: no model or tool) is not a run
    assert (run["name"], run["user_id"], run["session_id"], run["service_name"]) == ("weather-job", "bob", "sess-7", "weather-agent")
    assert_weather_steps(traces, run, tool_step=False)
    assert {r[0] for r in traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()} == {"openinference"}
    assert glob_sum(store, "input_tokens") == IN


def test_openinference_langchain_model_and_tool_steps_are_linked(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openinference-langchain"], flow="langchain", root_span="weather-job")
    traces = agentotel.open(store)
    run = only_run(traces)
    assert run["tool_calls"] == 1
    assert_weather_steps(traces, run)
    assert_tool_result_unwrapped(traces)


def test_openllmetry_langchain_model_and_tool_steps(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openllmetry-langchain"], flow="langchain", root_span="weather-job")
    traces = agentotel.open(store)
    run = only_run(traces)
    assert_weather_steps(traces, run)
    tool = traces.sql("SELECT dialect FROM tool_calls").fetchall()
    assert tool == [("genai+traceloop",)]
    assert_tool_result_unwrapped(traces)


def assert_tool_result_unwrapped(traces: Traces) -> None:
    """The tool's own result and arguments, not the LangChain ToolMessage / callback wrapper around them."""
    (tool,) = pylist(traces.sql("SELECT input, output FROM tool_calls").to_arrow_table())
    assert tool["output"] == "sunny in Paris"
    assert "Paris" in tool["input"] and "input_str" not in tool["input"]


def test_tool_results_that_only_look_like_a_wrapper_are_kept() -> None:
    from agentotel.store.dialects import tool_arguments, tool_result

    own = '{"tool_call_id": "c1", "content": "x", "type": "ticket"}'  # a tool's own dict result
    assert tool_result(own) == own
    assert tool_result("plain text") == "plain text" and tool_result(None) is None
    wrapped = '{"type": "tool", "data": {"content": [{"k": 1}], "tool_call_id": "c1"}}'
    assert json.loads(tool_result(wrapped)) == [{"k": 1}]
    assert tool_arguments('{"inputs": {"a": 1}}') == '{"inputs": {"a": 1}}'
    assert json.loads(tool_arguments('{"input_str": "a=1", "inputs": {"a": 1}}')) == {"a": 1}
    # traceloop's @tool decorator: the call's positional and keyword arguments
    assert json.loads(tool_arguments('{"args": [], "kwargs": {"city": "Paris"}}')) == {"city": "Paris"}
    assert tool_arguments('{"args": ["Paris"], "kwargs": {}}') == '{"args": ["Paris"], "kwargs": {}}'  # no names to give
    assert tool_arguments('{"kwargs": {"a": 1}, "mode": "x"}') == '{"kwargs": {"a": 1}, "mode": "x"}'


def test_through_the_collector_the_same_steps_and_cost(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "collector"))
    from agentotel_collector import Collector

    collector = Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
    try:
        host, port = collector.http_address
        produce(tmp_path / "unused", instrumentations=["openinference-langchain"], flow="langchain",
                root_span="weather-job", otlp=f"http://{host}:{port}/v1/traces")
    finally:
        collector.stop()
    traces = agentotel.open(tmp_path / "store")
    assert_weather_steps(traces, only_run(traces))


def test_openinference_openai_agents_spans_are_one_run_of_model_and_tool_steps(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openinference-openai-agents"], flow="agents")
    traces = agentotel.open(store)
    run = only_run(traces)  # the SDK's trace, its workflow span the run
    # OpenInference's Agents SDK tool span carries no call id: the step takes the id of the call it ran.
    assert_weather_steps(traces, run)
    assert {r[0] for r in traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()} == {"openinference"}
    assert not [(f.kind, f.message) for f in traces.findings(run["run_id"]) if f.severity in ("warning", "error")]


@pytest.mark.parametrize("conventions", ["gen_ai_latest_experimental", ""])
def test_opentelemetry_openai_v2_spans_are_model_steps(tmp_path: Path, conventions: str) -> None:
    try:
        import opentelemetry.instrumentation.openai_v2  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"opentelemetry-instrumentation-openai-v2 does not import here: {exc}")
    store = tmp_path / "store"
    produce(store, instrumentations=["openai-v2"], flow="openai", root_span="weather-job", semconv=conventions)
    traces = agentotel.open(store)
    # The legacy conventions (gen_ai.system) put content in log events, which are not spans: no messages.
    assert_weather_steps(traces, only_run(traces), tool_step=False, content=bool(conventions))
    dialects = {r[0] for r in traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()}
    assert dialects == ({"genai"} if conventions else {"genai+genai-legacy"})


# -- beside agentotel's own instrumentation: each call counts once ---------------------------------------


@pytest.mark.parametrize("other", ["openllmetry-openai", "openinference-openai"])
def test_a_call_recorded_by_agentotel_and_another_instrumentation_counts_once(tmp_path: Path, other: str) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[other], flow="openai", agentotel=True, run=True)
    traces = agentotel.open(store)
    run = only_run(traces)
    assert (run["name"], run["user_id"]) == ("weather", "alice")
    assert_weather_steps(traces, run)
    assert traces.sql("SELECT count(*) FROM llm_calls").fetchall()[0][0] == 2
    # A good run: nothing to warn about (the hand-written tool list leaves `required` out: info at most).
    assert not [(f.kind, f.message) for f in traces.findings(run["run_id"]) if f.severity in ("warning", "error")]
    # A plain glob over the files counts each call once: the writer saw both records in one batch.
    assert glob_sum(store, "input_tokens") == IN
    assert glob_sum(store, "output_tokens") == OUT
    assert duckdb.sql(f"SELECT count(*) FROM '{store}/spans/**/*.parquet' WHERE ends_with(dialect, 'duplicate')").fetchall()[0][0] == 2
    assert not [f for f in traces.findings(run["run_id"]) if "repeat" in f.kind]


def test_openllmetry_langchain_spans_beside_agentotels_count_once_and_join_the_run(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openllmetry-langchain"], flow="langchain", agentotel=True, run=True,
            foreign_child=True, setup_trace=True)
    traces = agentotel.open(store)
    run = only_run(traces)
    assert_weather_steps(traces, run)
    assert glob_sum(store, "input_tokens") == IN
    # The other service's tool span carries no run attributes, but its trace is the run's: it is a step.
    steps = traces.trajectory(run["run_id"]).steps
    assert [s.tool_name for s in steps if s.type == "tool"] == ["get_weather", "lookup_forecast"]
    assert run["tool_calls"] == 2
    assert traces.sql("SELECT count(*) FROM steps WHERE run_id = ?", [run["run_id"]]).fetchall()[0][0] == len(steps)
    assert not [f for f in traces.findings(run["run_id"]) if "repeat" in f.kind]


def test_pydantic_ai_instrument_all_spans_are_a_run_with_linked_steps(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[], flow="pydantic-ai")
    traces = agentotel.open(store)
    run = only_run(traces)
    assert run["name"] == "invoke_agent weather"  # pydantic-ai's root span: the run itself, not one of its steps
    assert run["steps"] == 3
    assert_weather_steps(traces, run)
    assert glob_sum(store, "input_tokens") == IN  # the agent span's aggregated usage is not counted again


# -- another language ------------------------------------------------------------------------------------

NODE_PACKAGES = ["ai@6", "@ai-sdk/openai@3", "@opentelemetry/sdk-node", "@opentelemetry/exporter-trace-otlp-proto", "zod"]


@pytest.fixture(scope="module")
def node_agent() -> Path:
    """A folder with the Node agent and its npm packages installed (skipped only when npm cannot reach its registry)."""
    import shutil

    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed here")
    # A cache folder outside the test's temporary one: the install (a minute or more) happens once a machine.
    cache = Path(os.environ.get("AGENTOTEL_TEST_CACHE", Path.home() / ".cache" / "agentotel-tests"))
    folder = cache / ("vercel-agent-" + hashlib.sha256(" ".join(NODE_PACKAGES).encode()).hexdigest()[:12])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"name": "weather-node", "private": true, "type": "module"}')
    shutil.copy(HERE / "vercel_agent.mjs", folder / "agent.mjs")
    if (folder / ".installed").exists():
        return folder
    install = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", *NODE_PACKAGES],
                             cwd=folder, capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        reachable = subprocess.run(["npm", "ping"], cwd=folder, capture_output=True, timeout=60).returncode == 0
        if not reachable:
            pytest.skip(f"npm cannot reach its registry: {install.stderr[-300:]}")
        raise AssertionError(install.stderr[-3000:])
    (folder / ".installed").touch()
    return folder


def run_node_agent(folder: Path, store: Path, *, stream: bool = False, parallel: bool = False) -> None:
    """The Node agent once, its spans through an agentotel-collector into `store`."""
    import producer

    sys.path.insert(0, str(ROOT / "collector"))
    from agentotel_collector import Collector

    model_url = producer.serve("openai", parallel)
    collector = Collector(dir=store, http=("127.0.0.1", 0), grpc=("127.0.0.1", 0)).start()
    try:
        host, port = collector.http_address
        env = {**os.environ, "MODEL_URL": model_url, "OTLP_URL": f"http://{host}:{port}/v1/traces", "STREAM": str(int(stream))}
        if parallel:
            env["PROMPT"] = "What is the weather in Paris and Oslo?"
        run = subprocess.run(["node", "agent.mjs"], cwd=folder, capture_output=True, text=True, timeout=120, env=env)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Sunny in Paris." in run.stdout
    finally:
        collector.stop()


def test_a_vercel_ai_sdk_agent_in_node_through_the_collector(node_agent: Path, tmp_path: Path) -> None:
    from agentotel.analysis import _record

    run_node_agent(node_agent, tmp_path / "store")
    traces = agentotel.open(tmp_path / "store")
    run_row = only_run(traces)  # the trace of ai.generateText, named after it
    assert (run_row["name"], run_row["user_id"], run_row["session_id"], run_row["service_name"]) == (
        "ai.generateText", "carol", "s-9", "weather-node")
    assert_weather_steps(traces, run_row)
    assert glob_sum(tmp_path / "store", "input_tokens") == IN  # the outer span's usage is not a call's
    assert {r[0] for r in traces.sql("SELECT DISTINCT dialect FROM llm_calls").fetchall()} == {"genai+vercel-ai+genai-legacy"}
    # The tools offered (`ai.prompt.tools`, one JSON text per tool) as gen_ai.tool.definitions, in the GenAI form.
    offered = {r[0] for r in traces.sql("SELECT attributes[$k] FROM spans WHERE operation = 'chat'",
                                        {"k": semconv.GEN_AI_TOOL_DEFINITIONS}).fetchall()}
    [(tool,)] = [[(d["name"], d["type"], sorted(d["parameters"]["properties"])) for d in json.loads(o)] for o in offered]
    assert tool == ("get_weather", "function", ["city"])
    # The outer span (ai.generateText: no step) keeps the run's task and answer: ai.prompt, ai.response.text.
    record = _record.load_run(traces, run_row["run_id"])
    assert "What is the weather in Paris?" in record.run["task"] and record.run["output"] == "Sunny in Paris."


def test_a_vercel_ai_sdk_agent_streaming_two_parallel_tool_calls(node_agent: Path, tmp_path: Path) -> None:
    from agentotel.analysis import _record

    run_node_agent(node_agent, tmp_path / "store", stream=True, parallel=True)
    traces = agentotel.open(tmp_path / "store")
    run_row = only_run(traces)
    assert (run_row["name"], run_row["model_calls"], run_row["tool_calls"]) == ("ai.streamText", 2, 2)
    assert (run_row["input_tokens"], run_row["output_tokens"]) == (IN, OUT)
    steps = traces.trajectory(run_row["run_id"]).steps
    first, last = [s for s in steps if s.type == "llm"]
    assert [(s.input_tokens, s.output_tokens) for s in (first, last)] == TOKENS and all(s.cost_usd for s in (first, last))
    asked = {p["arguments"]["city"]: p["id"] for m in first.output for p in m["parts"] if p["type"] == "tool_call"}
    assert asked == {"Paris": "call_weather_1", "Oslo": "call_weather_2"}
    ran = {s.input["city"]: (s.tool_call_id, s.requested_by, s.output) for s in steps if s.type == "tool"}
    assert ran == {"Paris": ("call_weather_1", first.index, "sunny in Paris"), "Oslo": ("call_weather_2", first.index, "sunny in Oslo")}
    results = {p["id"]: p["response"] for m in last.input for p in m["parts"] if p["type"] == "tool_call_response"}
    assert results == {"call_weather_1": "sunny in Paris", "call_weather_2": "sunny in Oslo"}
    assert last.output[0]["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    record = _record.load_run(traces, run_row["run_id"])
    assert "Paris and Oslo" in record.run["task"] and record.run["output"] == "Sunny in Paris."


def test_mcp_native_server_spans_a_tool_step_and_set_up_calls_are_not(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[], flow="mcp", root_span="weather-job", setup_trace=True)
    traces = agentotel.open(store)
    run = only_run(traces)
    steps = traces.trajectory(run["run_id"]).steps
    assert [(s.type, s.tool_name) for s in steps] == [("tool", "get_weather")]  # not server/discover, tools/list
    assert traces.sql("SELECT dialect FROM tool_calls").fetchall() == [("genai+mcp",)]


def test_openinference_retriever_spans_are_retrieval_steps_with_their_documents(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=["openinference-langchain"], flow="langchain", root_span="weather-job", retrieve=True)
    traces = agentotel.open(store)
    run = only_run(traces)
    assert run["retrievals"] == 1
    [retrieval] = [s for s in traces.trajectory(run["run_id"]).steps if s.type == "retrieval"]
    assert retrieval.index == 1 and retrieval.input == "Paris weather"
    assert retrieval.output == [{"content": "Paris: sunny, 24C", "metadata": {"source": "forecast-1"}}]
    assert_weather_steps(traces, run)


def test_the_anthropic_sdks_own_span_under_agentotels_counts_once_even_in_a_plain_glob(tmp_path: Path) -> None:
    store = tmp_path / "store"
    produce(store, instrumentations=[], flow="anthropic", agentotel=True, run=True)
    spans = duckdb.sql(f"SELECT scope_name, dialect, input_tokens FROM '{store}/spans/**/*.parquet' "
                       "WHERE operation = 'chat' ORDER BY scope_name").fetchall()
    assert spans == [("agentotel.anthropic", "agentotel", 50), ("com.anthropic.sdk.python", "genai+anthropic-sdk+duplicate", None)]
    assert glob_sum(store, "input_tokens") == 50
    traces = agentotel.open(store)
    assert only_run(traces)["input_tokens"] == 50
