"""Helpers for the collector tests: deterministic SDK spans, reading the store, a collector child process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

COLLECTOR_ROOT = Path(__file__).resolve().parents[1]
PROJECT_ROOT = COLLECTOR_ROOT.parent
if str(COLLECTOR_ROOT) not in sys.path:  # the distribution is not installed in the development tree
    sys.path.insert(0, str(COLLECTOR_ROOT))

from agentotel import semconv  # noqa: E402
from agentotel.store import parquet_files, read_wal  # noqa: E402
from agentotel_collector import Collector  # noqa: E402

T0 = 1_764_000_000_000_000_000  # a fixed clock: 2025-11-24T16:00:00Z in ns


class _SequentialIds(IdGenerator):
    """Ids that are the same on every run, so stored rows are comparable byte for byte."""

    def __init__(self, seed: int) -> None:
        self._next = seed << 32

    def generate_span_id(self) -> int:
        self._next += 1
        return self._next & 0xFFFF_FFFF_FFFF_FFFF

    def generate_trace_id(self) -> int:
        self._next += 1
        return (0xA6E7 << 112) | self._next


def make_spans(runs: int, *, seed: int = 1, steps: int = 3) -> list[ReadableSpan]:
    """Finished SDK spans of `runs` agent runs: an invoke_agent root, chat and tool steps, every attribute type."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "support-agent", "deployment.environment": "test", "host.cpus": 2}),
        id_generator=_SequentialIds(seed),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agentotel", "0.1.0")
    clock = T0 + seed * 10**12
    for run in range(runs):
        run_id = f"run-{seed}-{run}"
        root = tracer.start_span(
            "invoke_agent support",
            kind=SpanKind.INTERNAL,
            start_time=clock,
            attributes={
                semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
                semconv.GEN_AI_AGENT_NAME: "support",
                semconv.AGENTOTEL_RUN_ID: run_id,
                semconv.ENDUSER_ID: "alice",
                semconv.GEN_AI_CONVERSATION_ID: "session-1",
                semconv.AGENTOTEL_RUN_TASK: '{"question":"where is my order?"}',
            },
        )
        ctx = trace.set_span_in_context(root)
        for step in range(steps):
            clock += 1_000_000
            chat = tracer.start_span("chat gpt-4o", context=ctx, kind=SpanKind.CLIENT, start_time=clock)
            chat.set_attributes(
                {
                    semconv.GEN_AI_OPERATION_NAME: "chat",
                    semconv.GEN_AI_PROVIDER_NAME: "openai",
                    semconv.GEN_AI_REQUEST_MODEL: "gpt-4o",
                    semconv.GEN_AI_RESPONSE_MODEL: "gpt-4o-2024-08-06",
                    semconv.GEN_AI_USAGE_INPUT_TOKENS: 100 + step,
                    semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 7,
                    semconv.AGENTOTEL_COST_USD: 0.00125 * (step + 1),
                    semconv.GEN_AI_REQUEST_TEMPERATURE: 0.2,
                    semconv.GEN_AI_REQUEST_STREAM: step % 2 == 0,
                    semconv.GEN_AI_RESPONSE_FINISH_REASONS: ("tool_calls",),
                    semconv.GEN_AI_REQUEST_STOP_SEQUENCES: ("\n\n", "END"),
                    semconv.GEN_AI_INPUT_MESSAGES: '[{"role":"user","parts":[{"type":"text","content":"héllo ✓"}]}]',
                    semconv.GEN_AI_OUTPUT_MESSAGES: '[{"role":"assistant","parts":[{"type":"tool_call","name":"lookup"}]}]',
                    semconv.AGENTOTEL_RUN_ID: run_id,
                    semconv.SERVER_PORT: 443,
                    "test.int_list": (1, 2, 3),
                    "test.float_list": (0.5, 1.25),
                    "test.bool_list": (True, False),
                }
            )
            chat.add_event("gen_ai.content.chunk", {"index": step, "ok": True}, timestamp=clock + 10)
            clock += 2_000_000
            chat.end(end_time=clock)
            tool = tracer.start_span(
                "execute_tool lookup",
                context=ctx,
                start_time=clock,
                links=[Link(chat.get_span_context(), {"reason": "requested_by"})],
            )
            tool.set_attributes(
                {
                    semconv.GEN_AI_OPERATION_NAME: "execute_tool",
                    semconv.GEN_AI_TOOL_NAME: "lookup",
                    semconv.GEN_AI_TOOL_CALL_ID: f"call_{run}_{step}",
                    semconv.GEN_AI_TOOL_CALL_ARGUMENTS: '{"order": 42}',
                    semconv.GEN_AI_TOOL_CALL_RESULT: '{"status": "shipped"}',
                    semconv.AGENTOTEL_RUN_ID: run_id,
                }
            )
            if step == steps - 1:
                tool.set_status(Status(StatusCode.ERROR, "lookup failed"))
                tool.set_attribute(semconv.ERROR_TYPE, "TimeoutError")
                tool.add_event("exception", {"exception.type": "TimeoutError"}, timestamp=clock + 5)
            clock += 500_000
            tool.end(end_time=clock)
        clock += 1_000_000
        root.set_status(Status(StatusCode.OK))
        root.end(end_time=clock)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_url(collector: Collector, path: str = "/v1/traces") -> str:
    host, port = collector.http_address
    return f"http://{host}:{port}{path}"


def stored_table(directory: Path) -> pa.Table:
    """Every row in the store: Parquet files and the WAL's complete batches."""
    tables = [pq.read_table(f) for f in parquet_files(directory)]
    wal = read_wal(directory)
    if wal.num_rows:
        tables.append(wal)
    if not tables:
        return pa.table({"span_id": pa.array([], pa.string())})
    return pa.concat_tables([t.select(tables[0].schema.names) for t in tables])


def _integer_times(arrow: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(arrow):
        return pa.int64()
    if pa.types.is_list(arrow):
        return pa.list_(_integer_times(arrow.value_type))
    if pa.types.is_struct(arrow):
        return pa.struct([pa.field(f.name, _integer_times(f.type)) for f in arrow])
    return arrow


def plain_rows(table: pa.Table) -> list[dict]:
    """Rows as Python values, timestamps as integer nanoseconds (datetime would round them to microseconds)."""
    schema = pa.schema([pa.field(f.name, _integer_times(f.type)) for f in table.schema])
    return table.cast(schema).to_pylist()


def rows_by_span(table: pa.Table) -> dict[str, dict]:
    return {row["span_id"]: row for row in plain_rows(table)}


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(COLLECTOR_ROOT), str(PROJECT_ROOT), env.get("PYTHONPATH", "")])
    return env


class CollectorProcess:
    """`agentotel-collector` as a child process (python -m agentotel_collector), for kill and signal tests."""

    def __init__(self, directory: Path, port: int, *extra: str) -> None:
        self.directory, self.port, self.extra = directory, port, extra
        self.process: subprocess.Popen | None = None

    def start(self) -> "CollectorProcess":
        args = [sys.executable, "-m", "agentotel_collector", "--dir", str(self.directory),
                "--http", f"127.0.0.1:{self.port}", "--grpc", "off", "--log-level", "WARNING", *self.extra]
        self.process = subprocess.Popen(args, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"collector exited: {self.process.stderr.read().decode()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("collector did not start listening")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def terminate(self, timeout: float = 60) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)


def spans_of(batch: Sequence[ReadableSpan]) -> set[str]:
    return {f"{s.context.span_id:016x}" for s in batch}
