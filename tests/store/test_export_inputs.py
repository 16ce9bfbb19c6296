"""The exporter hands model-call inputs to the writer as Python strings (`StoreWriter.append(inputs=)`), so a
conversation's repeated history is never converted to Arrow: what is stored must be exactly what the
batch path (`spans_to_batch` then `append`) stores, row for row, in the WAL and in the Parquet files.

Spans come from the real OTel SDK; the run shape is not the benchmark corpus's: two helpers branching
from one prompt inside one trace, a retried call, an agent that summarises its history, inputs in
Latin-1, BMP and astral characters, one with a lone surrogate (which Arrow cannot hold), a tool's
arguments, an empty message list and an input that is not a list at all; and outputs a later input gives back
(`append(outputs=)`): a model's reply, tool results as strings, one with a lone surrogate. The collector's
OTLP conversion hands inputs and outputs over the same way, and is held to the same rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agentotel import semconv as sc
from agentotel.store import ParquetSpanExporter, StoreWriter, parquet_files, spans_to_batch
from agentotel.store.schema import SpanColumns
from agentotel.store.wal import read_wal

T0 = 1_790_000_000 * 10**9


def _say(role: str, content: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _dump(messages: list[dict]) -> str:
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


def _spans() -> list:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agentotel.anthropic")
    now = T0
    root = tracer.start_span("invoke_agent triage", start_time=now)
    context = trace.set_span_in_context(root)

    def call(messages: list[dict] | str, *, run: str = "triage", operation: str = "chat", output: str | None = None) -> None:
        nonlocal now
        value = messages if isinstance(messages, str) else _dump(messages)
        key = sc.GEN_AI_TOOL_CALL_ARGUMENTS if operation == "execute_tool" else sc.GEN_AI_INPUT_MESSAGES
        attributes = {sc.GEN_AI_OPERATION_NAME: operation, sc.AGENTOTEL_RUN_ID: run, key: value}
        if output is not None:
            attributes[sc.GEN_AI_TOOL_CALL_RESULT if operation == "execute_tool" else sc.GEN_AI_OUTPUT_MESSAGES] = output
        span = tracer.start_span(f"{operation} x", context=context, kind=SpanKind.CLIENT, start_time=now, attributes=attributes)
        now += 10**6
        span.end(end_time=now)

    base = [_say("system", "Triage tickets. Antworte höflich."), _say("user", "Ticket 7: der Export hängt ⏳")]
    history = list(base)
    for k in range(6):
        call(history)
        if k == 2:
            call(history)  # a retry: the same input again
        history = history + [_say("assistant", f"Schritt {k} 🛠"), _say("tool", f"result {k}: " + "é" * (20 + k))]
    # Two helpers branch from the same prompt, interleaved.
    left, right = list(base), list(base)
    for k in range(3):
        left = left + [_say("user", f"left {k}")]
        right = right + [_say("user", f"right {k} ✓")]
        call(left, run="helper-a")
        call(right, run="helper-b")
    # The agent summarises: old turns dropped, a summary in their place, then it goes on.
    summary = base + [_say("assistant", "Zusammenfassung: " + "ß" * 30)] + history[-4:]
    call(summary)
    call(summary + [_say("user", "weiter")])
    call(history[:2] + [_say("user", "kaputt \ud800 text")])  # a lone surrogate: Arrow cannot hold it as it is
    call(history + [_say("user", "and after the surrogate")])
    call(json.dumps({"path": "src/ä.py"}), operation="execute_tool")
    # Outputs given back: the model's reply, then tool results the next input holds as JSON strings.
    reply = {"role": "assistant", "parts": [{"type": "text", "content": "Ich prüfe die Logs „Export“ 🔍 " * 6}]}
    call(history, run="logs", output=_dump([reply]))
    given = history + [reply]
    for k, result in enumerate(["Zeile 1: \"Zeitüberschreitung\" bei C:\\export ⏳\n" * 5,
                                "broken \udc80 bytes in the log\t" * 8, "plain ascii result line\n" * 9]):
        call(json.dumps({"k": k}), operation="execute_tool", run="logs", output=result)
        given = given + [{"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{k}", "response": result}]}]
        call(given, run="logs")
    call("[]")
    call("not a list of messages")
    root.end(end_time=now)
    provider.shutdown()
    return list(memory.get_finished_spans())


def _rows(table: pa.Table) -> pa.Table:
    table = table.replace_schema_metadata(None).combine_chunks()
    return table.take(pc.sort_indices(table, [("span_id", "ascending")]))


def _parquet(directory: Path) -> pa.Table:
    return _rows(pa.concat_tables([pq.read_table(f) for f in parquet_files(directory)]))


@pytest.mark.parametrize("batch_size", [1, 4, 100])
def test_the_exporter_stores_what_the_batch_path_stores(tmp_path: Path, batch_size: int) -> None:
    spans = _spans()
    batches = [spans[i : i + batch_size] for i in range(0, len(spans), batch_size)]
    exporter = ParquetSpanExporter(tmp_path / "exporter", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    writer = StoreWriter(tmp_path / "batches", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    for batch in batches:
        assert exporter.export(batch).name == "SUCCESS"
        writer.append(spans_to_batch(batch))
    # The WAL (what a crash leaves and queries read before a fold) and then the Parquet files.
    ours, theirs = _rows(read_wal(tmp_path / "exporter")), _rows(read_wal(tmp_path / "batches"))
    assert ours.num_rows == len(spans)
    assert ours.equals(theirs)
    assert pc.sum(pc.is_valid(ours.column("input_chain"))).as_py() >= 8  # conversations were stored once
    # The reply and the two results Arrow holds as they are were referred to, not stored again.
    assert sum(len(b) for b in ours.column("input_borrowed").to_pylist() if b) == 3
    exporter.shutdown()
    writer.close()
    assert _parquet(tmp_path / "exporter").equals(_parquet(tmp_path / "batches"))


def _encodable(span) -> bool:
    """Whether OTLP can carry the span whole (protobuf strings are UTF-8: a lone surrogate is not)."""
    try:
        for value in span.attributes.values():
            if isinstance(value, str):
                value.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@pytest.mark.parametrize("per_request", [1, 5, 100])
def test_otlp_requests_store_what_the_batch_path_stores(tmp_path: Path, per_request: int) -> None:
    """The collector's conversion (`otlp.convert`) hands the inputs over as strings too (`Converted.inputs`,
    `outputs`), one list per batch, a request's chunks included: stored row for row as the batch path
    stores the same spans, in the WAL and in the Parquet files."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from agentotel.store import otlp

    spans = [span for span in _spans() if _encodable(span)]
    requests = [spans[i : i + per_request] for i in range(0, len(spans), per_request)]
    collector = StoreWriter(tmp_path / "otlp", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    writer = StoreWriter(tmp_path / "batches", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    chunked = 0
    for group in requests:
        body = encode_spans(group).SerializeToString()
        converted = otlp.convert(ExportTraceServiceRequest.FromString(body))
        assert len(converted.inputs) == len(converted.outputs) == len(converted.batches)
        assert all(b.column("input").null_count == b.num_rows for b in converted.batches)  # the texts are in `inputs`
        chunked += len(converted.batches) > 1
        collector.append(converted.batches, inputs=converted.inputs, outputs=converted.outputs)
        writer.append(spans_to_batch(group))
    ours, theirs = _rows(read_wal(tmp_path / "otlp")), _rows(read_wal(tmp_path / "batches"))
    assert ours.num_rows == len(spans) > 20
    assert ours.equals(theirs)
    assert pc.sum(pc.is_valid(ours.column("input_chain"))).as_py() >= 8  # conversations were stored once
    assert sum(len(b) for b in ours.column("input_borrowed").to_pylist() if b) >= 2  # outputs were referred to
    collector.close()
    writer.close()
    assert _parquet(tmp_path / "otlp").equals(_parquet(tmp_path / "batches"))


def test_a_request_converted_in_chunks_hands_each_chunk_its_own_inputs(tmp_path: Path, monkeypatch) -> None:
    """A big request becomes several batches (`otlp._MAX_CHUNK_SPANS`): each keeps its own rows' inputs."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from agentotel.store import otlp

    spans = [span for span in _spans() if _encodable(span)]
    monkeypatch.setattr(otlp, "_MAX_CHUNK_SPANS", 7)  # a setting, made small: the chunking code runs as it is
    converted = otlp.convert(ExportTraceServiceRequest.FromString(encode_spans(spans).SerializeToString()))
    assert len(converted.batches) == -(-len(spans) // 7)
    assert [len(i) for i in converted.inputs] == [len(o) for o in converted.outputs] == [b.num_rows for b in converted.batches]
    collector = StoreWriter(tmp_path / "otlp", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    writer = StoreWriter(tmp_path / "batches", wal_max_bytes=1 << 40, wal_max_age_s=1e9)
    collector.append(converted.batches, inputs=converted.inputs, outputs=converted.outputs)
    writer.append(spans_to_batch(spans))
    assert _rows(read_wal(tmp_path / "otlp")).equals(_rows(read_wal(tmp_path / "batches")))
    collector.close()
    writer.close()


def test_an_input_arrow_cannot_hold_is_stored_repaired_and_continued_from(tmp_path: Path) -> None:
    exporter = ParquetSpanExporter(tmp_path)
    assert exporter.export(_spans()).name == "SUCCESS"
    exporter.shutdown()
    from agentotel.query import Traces

    with Traces(tmp_path) as traces:
        inputs = [row[0] for row in traces.sql("SELECT input FROM llm_calls ORDER BY start_time").fetchall()]
    broken = [i for i in inputs if i is not None and "kaputt" in i]
    recorded = _dump([_say("system", "Triage tickets. Antworte höflich."), _say("user", "Ticket 7: der Export hängt ⏳"),
                      _say("user", "kaputt \ud800 text")])
    assert broken == [recorded.replace("\ud800", "\\ud800")]  # as the batch path repairs it: backslashreplace
    assert all(i is not None for i in inputs)  # every continuation found its base


def test_append_checks_that_inputs_match_the_rows(tmp_path: Path) -> None:
    columns = SpanColumns()
    columns.append(trace_id="1" * 32, span_id="2" * 16, parent_span_id=None, name="chat", kind="CLIENT",
                   status_code="UNSET", status_message=None, start_time_ns=T0, end_time_ns=T0 + 1,
                   attributes={sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_INPUT_MESSAGES: "[]"},
                   resource_attributes={}, scope_name="agentotel.openai", scope_version=None)
    inputs: list[str | None] = []
    batch = columns.to_batch(inputs=inputs)
    assert inputs == ["[]"] and batch.column("input").null_count == 1
    writer = StoreWriter(tmp_path)
    with pytest.raises(ValueError):
        writer.append(batch, inputs=[[]])
    writer.append(batch, inputs=[inputs])
    writer.close()
    assert pq.read_table(parquet_files(tmp_path)[0]).column("input").to_pylist() == ["[]"]


def test_splitting_with_known_messages_finds_exactly_what_parsing_finds() -> None:
    """`_split_known` reuses messages a conversation holds instead of parsing them: on any text, known
    messages or not, valid JSON or not, it must give `_split`'s answer."""
    import random

    from agentotel.store import messages

    rng = random.Random(11)
    known = ['{"role":"system","content":"be brief"}', '{"role":"user","content":"hi, there"}', "1", "12", '"a"',
             "[1,2]", '{"a":{"b":[1,{"c":"}"}]}}', "null", "true", '{"k":"\\u00e9 ✓"}', "NaN", "-0.5e3", "[]"]
    chains: list = []
    lent = messages._Outputs()  # no earlier outputs to borrow from
    messages.Conversations._continue(chains, "s1", f"[{','.join(known)}]", lent)  # a conversation holding them all, in order
    messages.Conversations._continue(chains, "s2", f"[{','.join(reversed(known[:5]))}]", lent)
    assert len(chains[0].where) == len(known)
    pieces = known + ['{"role":"user","content":"new"}', "123", '"a"x', "1 ", " 1", "{", "]", "", '{"a":1}}', "[1,2]3",
                      '{"role":"system","content":"be brief"} ', "1e", "[" * 3000 + "]" * 3000]
    for _ in range(3000):
        chosen = [rng.choice(known) if rng.random() < 0.7 else rng.choice(pieces) for _ in range(rng.randrange(0, 7))]
        separators = [rng.choice([",", ",", ",", ", ", "", ",,"]) for _ in chosen]
        text = "".join(p + s for p, s in zip(chosen, separators))
        if rng.random() < 0.5 and text.endswith(","):
            text = text[:-1]
        split = messages._split_known(text, chains)
        assert (None if split is None else split[0]) == messages._split(text), text
        if split is not None:  # with the messages themselves
            assert split[1] == [text[s:e] for s, e in split[0]], text
    # And it does skip parsing: a known run of messages is split with one parse, of its first message.
    calls = []
    scan = messages._scan
    messages._scan = lambda s, at: calls.append(at) or scan(s, at)
    try:
        bounds, found = messages._split_known(",".join(known), chains)
        assert bounds == messages._split(",".join(known))
        assert len(calls) == len(known) + 1  # _split's own parses; _split_known's of the first message only
        # The messages after the first are the conversation's own strings, not copies: looking them up again
        # costs no hashing or comparing of their text.
        held = {id(message) for message in chains[0].where}
        assert found == known and all(id(message) in held for message in found[1:])
    finally:
        messages._scan = scan
