"""An agent written with run(), @tool and @retrieval lands in the Parquet store, every row attributable."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentotel import _context, _tracing
from agentotel.runs import AttributionProcessor, run
from agentotel.store import ParquetSpanExporter, parquet_files, read_wal
from agentotel.tools import retrieval, tool

SECRET = "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90KlMnOpQr"


@tool
def read_file(path: str) -> str:
    """Read a file from the repository."""
    return f"contents of {path}; OPENAI_API_KEY={SECRET}"


@retrieval(data_source="docs")
def search_docs(query: str) -> list[dict]:
    return [{"id": "guide.md", "score": 0.82, "content": "install with pip"}]


def agent(http_tracer) -> str:
    with run("fixer", user="alice", session="sess-7", trigger="test", run_id="run-42", task="fix the bug") as current:
        search_docs("how to install")
        # What a provider adapter records when the model's response asks for a tool call.
        _context.record_tool_calls([_context.PendingToolCall("call_abc", "read_file", {"path": "setup.py"})])
        read_file("setup.py")
        http_tracer.start_span("GET /pypi").end()  # another instrumentation's span
        current.output = "patched"
        return current.trace_id


@pytest.fixture
def store(tmp_path, configure):
    provider = TracerProvider()
    exporter = ParquetSpanExporter(tmp_path / "traces")
    provider.add_span_processor(AttributionProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _tracing.set_providers(provider)

    def rows() -> list[dict]:
        provider.shutdown()  # folds the WAL into Parquet
        files = parquet_files(tmp_path / "traces")
        tables = [pq.read_table(f) for f in files] + [read_wal(tmp_path / "traces")]
        table = pa.concat_tables(tables, promote_options="default")
        # Timestamps are nanoseconds; these tests look at the other columns.
        return table.drop_columns(["start_time", "end_time", "events"]).to_pylist()

    yield provider, rows
    _tracing.set_providers(None)


def test_every_row_of_the_run_is_attributable(store):
    provider, rows = store
    trace_id = agent(provider.get_tracer("httpx"))
    table = rows()
    assert sorted(r["name"] for r in table) == ["GET /pypi", "execute_tool read_file", "invoke_agent fixer", "retrieval docs"]
    for row in table:
        assert (row["trace_id"], row["run_id"], row["user_id"], row["session_id"]) == (trace_id, "run-42", "alice", "sess-7"), row["name"]
    by_name = {r["name"]: r for r in table}

    tool_row = by_name["execute_tool read_file"]
    assert (tool_row["tool_name"], tool_row["tool_call_id"], tool_row["operation"]) == ("read_file", "call_abc", "execute_tool")
    assert json.loads(tool_row["input"]) == {"path": "setup.py"}
    assert "OPENAI_API_KEY=[REDACTED]" in json.loads(tool_row["output"])
    assert SECRET not in json.dumps(table, default=str)

    retrieval_row = by_name["retrieval docs"]
    assert json.loads(retrieval_row["input"]) == "how to install"
    assert json.loads(retrieval_row["output"]) == [{"id": "guide.md", "score": 0.82, "content": "install with pip"}]

    root = by_name["invoke_agent fixer"]
    assert root["parent_span_id"] is None and root["agent_name"] == "fixer"
    assert (json.loads(root["input"]), json.loads(root["output"])) == ("fix the bug", "patched")


def test_capture_off_leaves_no_content_in_the_store(store, configure):
    configure(capture_content=False)
    provider, rows = store
    agent(provider.get_tracer("httpx"))
    table = rows()
    assert len(table) == 4
    text = json.dumps(table, default=str)
    for content in ("setup.py", "fix the bug", "patched", "install with pip", "how to install", "contents of"):
        assert content not in text, content
    assert all(r["input"] is None for r in table)
    # Still attributable and linked without content.
    tool_row = next(r for r in table if r["tool_name"] == "read_file")
    assert (tool_row["run_id"], tool_row["user_id"], tool_row["tool_call_id"]) == ("run-42", "alice", "call_abc")
