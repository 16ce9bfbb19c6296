"""Small stores for query tests: runs built step by step, written as real Parquet span rows.

Rows go through `SpanColumns` (the store's one span -> row path) and land where the store puts them,
`<dir>/spans/date=YYYY-MM-DD/<name>.parquet`, with the schema version in the file metadata.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from agentotel import semconv as sc
from agentotel.store.schema import SpanColumns

T0 = 1_780_000_000_000_000_000  # 2026-05-28T20:26:40Z, in ns
MS = 1_000_000


def hexid(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def assistant(text: str | None = None, calls: list[tuple[str, str, dict]] = ()) -> str:
    """GenAI output messages: an assistant turn with optional text and tool calls (id, name, arguments)."""
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"type": "text", "content": text})
    for call_id, name, arguments in calls:
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_calls" if calls else "stop"}])


def user(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


@dataclass
class RunBuilder:
    store: "SpanStore"
    run_id: str
    name: str
    user: str | None
    start: int
    attributes: dict[str, Any] = field(default_factory=dict)
    status: str = "UNSET"
    clock: int = 0
    spans: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = True
    trace_id: str = ""
    root_id: str = ""

    def __post_init__(self) -> None:
        self.trace_id = self.trace_id or hexid("trace:" + self.run_id, 32)
        self.root_id = hexid("root:" + self.run_id, 16)
        self.clock = self.start + MS

    def _span(self, name: str, attributes: dict[str, Any], *, parent: str | None = None, ms: int = 10,
              status: str = "UNSET", scope: str = "agentotel", kind: str = "INTERNAL", span_id: str | None = None) -> str:
        span_id = span_id or hexid(f"{self.run_id}:{len(self.spans)}", 16)
        base = {sc.AGENTOTEL_RUN_ID: self.run_id}
        if self.user:
            base[sc.ENDUSER_ID] = self.user
        self.spans.append(dict(
            trace_id=self.trace_id, span_id=span_id, parent_span_id=parent or self.root_id, name=name, kind=kind,
            status_code=status, status_message=None, start_time_ns=self.clock, end_time_ns=self.clock + ms * MS,
            attributes={**base, **attributes}, resource_attributes={"service.name": "test-agent"},
            scope_name=scope, scope_version="0.1.0",
        ))
        self.clock += (ms + 1) * MS
        return span_id

    def llm(self, output: str, *, model: str = "gpt-4o-mini", input_tokens: int = 100, output_tokens: int = 20,
            cost: float | None = 0.001, prompt: str = "hi", status: str = "UNSET", parent: str | None = None,
            http_child: bool = False) -> str:
        attributes = {
            sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: "openai", sc.GEN_AI_REQUEST_MODEL: model,
            sc.GEN_AI_RESPONSE_MODEL: model, sc.GEN_AI_USAGE_INPUT_TOKENS: input_tokens,
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: output_tokens, sc.GEN_AI_INPUT_MESSAGES: user(prompt),
            sc.GEN_AI_OUTPUT_MESSAGES: output,
        }
        if cost is not None:
            attributes[sc.AGENTOTEL_COST_USD] = cost
        span = self._span(f"chat {model}", attributes, parent=parent, status=status, kind="CLIENT", scope="agentotel.openai")
        if http_child:  # a transport span under the model call: never a step
            self.clock -= 9 * MS
            self._span("POST", {"http.request.method": "POST"}, parent=span, ms=5, scope="opentelemetry.instrumentation.httpx")
        return span

    def tool(self, name: str, arguments: Any, result: Any, *, call_id: str | None = None, status: str = "UNSET",
             error: str | None = None, parent: str | None = None) -> str:
        attributes = {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: name,
                      sc.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(arguments)}
        if result is not None:
            attributes[sc.GEN_AI_TOOL_CALL_RESULT] = json.dumps(result)
        if call_id:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = call_id
        if error:
            attributes[sc.ERROR_TYPE] = error
            status = "ERROR"
        return self._span(f"execute_tool {name}", attributes, parent=parent, status=status)

    def retrieval(self, source: str, query: str, documents: Any) -> str:
        return self._span(f"retrieval {source}", {
            sc.GEN_AI_OPERATION_NAME: "retrieval", sc.GEN_AI_DATA_SOURCE_ID: source,
            sc.GEN_AI_RETRIEVAL_QUERY_TEXT: query, sc.GEN_AI_RETRIEVAL_DOCUMENTS: json.dumps(documents)})

    def raw(self, name: str, attributes: dict[str, Any], **kw: Any) -> str:
        return self._span(name, attributes, **kw)

    def root_row(self) -> dict[str, Any]:
        attributes = {sc.GEN_AI_OPERATION_NAME: "invoke_agent", sc.GEN_AI_AGENT_NAME: self.name,
                      sc.AGENTOTEL_RUN_ID: self.run_id, sc.AGENTOTEL_RUN_NAME: self.name,
                      sc.AGENTOTEL_RUN_TRIGGER: "api", **self.attributes}
        if self.user:
            attributes[sc.ENDUSER_ID] = self.user
        return dict(
            trace_id=self.trace_id, span_id=self.root_id, parent_span_id=self.attributes.pop("_parent_span", None),
            name=f"invoke_agent {self.name}", kind="INTERNAL", status_code=self.status, status_message=None,
            start_time_ns=self.start, end_time_ns=self.clock + MS, attributes=attributes,
            resource_attributes={"service.name": "test-agent"}, scope_name="agentotel", scope_version="0.1.0",
        )

    def rows(self) -> list[dict[str, Any]]:
        return ([self.root_row()] if self.finished else []) + self.spans


class SpanStore:
    """A store directory under construction: add runs, then `write()` them as one Parquet file."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.runs: list[RunBuilder] = []
        self._files = 0

    def run(self, name: str, run_id: str, *, user: str | None = "alice", start: int | None = None,
            env: dict[str, Any] | None = None, **kw: Any) -> RunBuilder:
        start = start if start is not None else T0 + len(self.runs) * 60_000 * MS
        builder = RunBuilder(self, run_id, name, user, start, attributes=dict(env or {}), **kw)
        self.runs.append(builder)
        return builder

    def batch(self, runs: list[RunBuilder] | None = None) -> pa.RecordBatch:
        columns = SpanColumns()
        for run in runs if runs is not None else self.runs:
            for row in run.rows():
                columns.append(**row)
        return columns.to_batch()

    def write(self, runs: list[RunBuilder] | None = None, *, date: str = "2026-05-28", name: str | None = None) -> Path:
        """Write the runs (default: all) as one Parquet file the way the store lays them out."""
        self._files += 1
        folder = self.directory / "spans" / f"date={date}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (name or f"part-{self._files:04d}.parquet")
        pq.write_table(pa.Table.from_batches([self.batch(runs)]), path, compression="zstd")
        return path
