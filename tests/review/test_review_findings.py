"""Review findings pinned as tests: each is a user-visible defect, reproduced end to end.

Each test runs a small real agent in a subprocess, the way a user would: the real openai SDK against a
scripted model on 127.0.0.1, `agentotel.instrument()` writing a real store, then the `agentotel`
command or `agentotel.open()` reading it back. A defect not fixed yet is marked `xfail(strict=True)`
with the defect as its reason: when it is fixed the test passes, strict xfail turns that into a
failure, and the marker is removed.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

import agentotel
from agentotel import cli, semconv

ROOT = Path(__file__).resolve().parents[2]

# A scripted OpenAI-compatible model on 127.0.0.1: a tool call first, then an answer. The usage has
# cached and reasoning tokens, so cost depends on more than input and output tokens.
_MODEL_SERVER = '''
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if self.path.endswith("/v1/traces"):
            status, reply = self.server.traces_status, {}
        else:
            asked = body.get("tools") and not any(m.get("role") == "tool" for m in body["messages"])
            message = ({"role": "assistant", "content": None, "tool_calls": [{"id": "call_R1", "type": "function",
                        "function": {"name": "lookup", "arguments": json.dumps({"key": "k1"})}}]}
                       if asked else {"role": "assistant", "content": "done"})
            status, reply = 200, {"id": "chatcmpl-r", "object": "chat.completion", "created": 1780000000,
                "model": body["model"], "choices": [{"index": 0, "message": message,
                "finish_reason": "tool_calls" if asked else "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200,
                          "prompt_tokens_details": {"cached_tokens": 400},
                          "completion_tokens_details": {"reasoning_tokens": 50}}}
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

def start_server(traces_status=200):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.traces_status = traces_status
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return "http://127.0.0.1:%d" % server.server_address[1]
'''

_AGENT = '''
import json, agentotel, openai

@agentotel.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": 42}

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a key up.",
          "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}}]

def agent(task, client=None):
    client = client or openai.OpenAI(api_key="sk-review", max_retries=0)
    messages = [{"role": "user", "content": task}]
    for _ in range(3):
        message = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(lookup(**json.loads(call.function.arguments)))})
'''

# A long line (over 200 characters) ending in a marker: what `trajectory --full` must show whole.
LONG_TASK = "please look up the key " + "and then some more words " * 12 + "END_OF_TASK_MARKER"


def _python(tmp_path: Path, body: str, *, env: dict[str, str] | None = None) -> str:
    """Run `body` as a user's script in a fresh interpreter (cwd tmp_path); its stdout."""
    (tmp_path / "review_model.py").write_text(_MODEL_SERVER)
    (tmp_path / "review_agent.py").write_text(_AGENT)
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(body))
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTOTEL_"))}
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
    environ.update(env or {})
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environ, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    """Two runs of the agent (the first with a sub-agent inside) in one store; their ids."""
    tmp_path = tmp_path_factory.mktemp("review")
    out = _python(tmp_path, f'''
        import json, agentotel, openai
        from review_model import start_server
        from review_agent import agent
        agentotel.instrument("store")
        client = openai.OpenAI(base_url=start_server() + "/v1", api_key="sk-review", max_retries=0)
        ids = []
        for name in ("review-a", "review-b"):
            with agentotel.run(name, user="rita", task={LONG_TASK!r}) as run:
                run.output = agent({LONG_TASK!r}, client)
                if name == "review-a":
                    with agentotel.run("helper"):
                        pass
            ids.append(run.id)
        agentotel.shutdown()
        print(json.dumps(ids))
    ''')
    run_a, run_b = json.loads(out)
    return {"dir": str(tmp_path / "store"), "a": run_a, "b": run_b}


def test_sql_prints_summed_tokens_as_numbers(recorded):
    code, out, _ = _cli("sql", "SELECT sum(input_tokens) AS tokens FROM llm_calls", "--format", "json",
                        "--dir", recorded["dir"])
    assert code == 0
    assert json.loads(out) == [{"tokens": 4000}]
    code, out, _ = _cli("sql", "SELECT sum(input_tokens) AS tokens FROM llm_calls", "--format", "csv",
                        "--dir", recorded["dir"])
    assert out.splitlines() == ["tokens", "4000"]


def test_trajectory_full_shows_a_long_message_whole_when_piped(recorded):
    code, out, _ = _cli("trajectory", recorded["a"], "--full", "--dir", recorded["dir"])
    assert code == 0
    assert "END_OF_TASK_MARKER" in out


def test_env_compare_reports_the_recorded_environment_hash(recorded):
    code, out, _ = _cli("env", recorded["a"], recorded["b"], "--json", "--dir", recorded["dir"])
    assert code == 0
    with agentotel.open(recorded["dir"]) as traces:
        recorded_hash = traces.run(recorded["a"])["env_hash"]
    assert recorded_hash
    assert json.loads(out)["hash_a"] == recorded_hash


def test_a_trace_id_prefix_names_the_outermost_run(recorded):
    with agentotel.open(recorded["dir"]) as traces:
        trace_id = traces.run(recorded["a"])["trace_id"]
        assert traces.resolve(trace_id).run_id == recorded["a"]  # the full trace id works
        assert traces.resolve(trace_id[:12]).run_id == recorded["a"]


def test_another_instrumentations_span_of_the_same_call_counts_once(tmp_path):
    # What opentelemetry-instrument does when another openai instrumentation is installed: that
    # instrumentation records the same HTTP call as a chat span with usage. An httpx request hook stands
    # in for it (it runs inside the SDK call, in agentotel's chat span context).
    out = _python(tmp_path, '''
        import json, agentotel, openai
        from opentelemetry import trace
        from agentotel import semconv
        from review_model import start_server
        from review_agent import agent
        agentotel.instrument("store")
        other = trace.get_tracer("other.openai.instrumentation")
        def hook(request):
            with other.start_as_current_span("openai.chat", kind=trace.SpanKind.CLIENT) as span:
                span.set_attribute(semconv.GEN_AI_OPERATION_NAME, "chat")
                span.set_attribute(semconv.GEN_AI_REQUEST_MODEL, "gpt-4o-mini")
                span.set_attribute(semconv.GEN_AI_USAGE_INPUT_TOKENS, 1000)
                span.set_attribute(semconv.GEN_AI_USAGE_OUTPUT_TOKENS, 200)
        client = openai.OpenAI(base_url=start_server() + "/v1", api_key="sk-review", max_retries=0,
                               http_client=openai.DefaultHttpxClient(event_hooks={"request": [hook]}))
        with agentotel.run("doubled") as run:
            agent("look it up", client)
        agentotel.shutdown()
        print(run.id)
    ''')
    with agentotel.open(tmp_path / "store") as traces:
        run = traces.run(out.strip())
        assert traces.sql("SELECT count(*) FROM spans WHERE scope_name = 'other.openai.instrumentation'").fetchall() == [(2,)]
        assert run["model_calls"] == 2  # two model calls were made
        assert run["input_tokens"] == 2000


def test_flush_is_false_when_the_otlp_endpoint_rejects_the_spans(tmp_path):
    out = _python(tmp_path, '''
        import agentotel, os
        from review_model import start_server
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = start_server(traces_status=401)
        agentotel.instrument()

        @agentotel.tool
        def step(x: int) -> int:
            return x

        with agentotel.run("rejected"):
            step(1)
        print(agentotel.flush(timeout_s=10))
    ''', env={"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
    assert out.strip().splitlines()[-1] == "False"


def test_instrument_with_a_directory_under_opentelemetry_instrument_writes_parquet(tmp_path):
    _python(tmp_path, '''
        import agentotel
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from agentotel._instrumentor import AgentotelInstrumentor
        # What `opentelemetry-instrument python script.py` does before the script runs:
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
        AgentotelInstrumentor().instrument(tracer_provider=provider)
        # The script:
        agentotel.instrument("store")

        @agentotel.tool
        def step(x: int) -> int:
            return x

        with agentotel.run("configured"):
            step(1)
        agentotel.flush()
        agentotel.shutdown()
    ''')
    assert (tmp_path / "store").is_dir()
    with agentotel.open(tmp_path / "store") as traces:
        assert traces.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]


def test_a_replayed_model_call_costs_nothing_and_keeps_what_the_recorded_one_cost(tmp_path):
    out = _python(tmp_path, '''
        import agentotel, openai
        from review_model import start_server
        from review_agent import agent
        agentotel.instrument("store")
        client = openai.OpenAI(base_url=start_server() + "/v1", api_key="sk-review", max_retries=0)
        with agentotel.run("to-replay", task="look it up") as run:
            run.output = agent("look it up", client)
        agentotel.shutdown()
        print(run.id)
    ''')
    recorded_run = out.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTOTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
    for argv in (["case", "new", recorded_run, "--at", "3", "--layer", "tool", "--agent", "review_agent:agent",
                  "-o", "case.yaml", "--dir", "store"],
                 ["case", "run", "case.yaml", "--mode", "frozen", "--dir", "store"]):
        done = subprocess.run([sys.executable, "-m", "agentotel", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    with agentotel.open(tmp_path / "store") as traces:  # replays are not production data: not in the store
        recorded = traces.sql("SELECT s.cost_usd FROM steps s WHERE s.index = 1").fetchall()
    assert recorded == [(pytest.approx(0.00024),)]  # (600 + 400 cached at half price) input, 200 output
    with agentotel.open(tmp_path / "store" / "replays") as traces:
        replayed = traces.sql("SELECT cost_usd, attributes[$kept] FROM llm_calls WHERE start_time = "
                              "(SELECT min(start_time) FROM llm_calls)", {"kept": semconv.AGENTOTEL_REPLAY_RECORDED_COST_USD}).fetchall()
    assert replayed[0][0] == 0 and float(replayed[0][1]) == pytest.approx(0.00024)  # nothing spent now; the recorded cost kept apart


def test_a_plain_parquet_glob_counts_each_span_once_after_compact(tmp_path):
    for _ in range(2):  # two processes: two Parquet files to merge
        _python(tmp_path, '''
            import agentotel
            agentotel.instrument("store")

            @agentotel.tool
            def step(x: int) -> int:
                return x

            with agentotel.run("compacted"):
                step(1)
            agentotel.shutdown()
        ''')
    code, _, err = _cli("compact", "--dir", str(tmp_path / "store"))
    assert code == 0, err
    with agentotel.open(tmp_path / "store") as traces:
        [(spans,)] = traces.sql("SELECT count(*) FROM spans").fetchall()
    glob = str(tmp_path / "store" / "spans" / "**" / "*.parquet")
    [(raw,)] = duckdb.sql(f"SELECT count(*) FROM '{glob}'").fetchall()
    assert spans == 4 and raw == spans


def test_the_demo_works_for_a_user_whose_shell_sets_otel_traces_exporter(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTOTEL_"))}
    env.update(PYTHONPATH=str(ROOT), OTEL_TRACES_EXPORTER="none")
    done = subprocess.run([sys.executable, "-m", "agentotel", "demo", "--dir", "traces"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "output_shape_changed" in done.stdout


def test_a_run_ended_by_sys_exit_zero_is_not_a_failure(tmp_path):
    subprocess.run([sys.executable, "-c", "import agentotel, sys\nagentotel.instrument('store')\n"
                    "with agentotel.run('exits'):\n    sys.exit(0)\n"], cwd=tmp_path, check=True, timeout=120,
                   env={**{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTOTEL_"))},
                        "PYTHONPATH": str(ROOT)})
    with agentotel.open(tmp_path / "store") as traces:
        assert traces.sql("SELECT status FROM runs").fetchall() == [("ok",)]
