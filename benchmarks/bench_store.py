"""Store: export throughput and bytes per span, against OTLP protobuf and OTLP JSON.

Throughput: the corpus's SDK `ReadableSpan`s are handed to `ParquetSpanExporter.export` in batches of
512 (the BatchSpanProcessor's default batch), against the SDK's OTLP encoder
(`opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans`) on the same batches. "End to
end" is every export (each batch converted to Arrow, written to the WAL and fsync'd before it returns)
plus the folds into zstd Parquet files and the final fold at shutdown; "to the WAL" defers folding
(the WAL alone is durable); "conversion" is `spans_to_batch` alone, CPU only; "stored rows" is the
conversion plus each conversation stored once (what an export hands the WAL, no I/O: the part of an
export that runs in Python, under the GIL); "fold" is the stored rows of every batch folded into Parquet
as one segment. The OTLP side does no I/O at all, so every I/O cost falls on our side. All cases take
turns within each repeat.

Size: the same corpus written through the exporter with default settings, bytes of the resulting
Parquet files per span, against the OTLP protobuf request bytes (`encode_spans(batch).SerializeToString()`,
per 512-span batch as an OTLP exporter sends them) and OTLP JSON (the same requests in the OTLP JSON
mapping with hex ids, integer enums and int64 as strings, one line per request, as the Collector's
file exporter writes them). Compressed OTLP rows are for context, but for zstd OTLP JSON: at most half
of it is the target (issue 21), on the standard corpus and on the long-run corpus (one coding agent's
runs of 50 to 400 steps, its conversation growing), where bytes per step must also stay flat and every
model call's input must read back whole.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from agentotel.store import ParquetSpanExporter, compact, spans_to_batch
from agentotel.store.exporter import _columns
from agentotel.store.messages import Conversations
from agentotel.store.writer import fold_batches
from benchmarks import corpus
from benchmarks.harness import Result, interleave

BATCH = 512  # BatchSpanProcessor's default max_export_batch_size
_NEVER_FOLD = {"wal_max_bytes": 1 << 50, "wal_max_age_s": 1e12}


def _batches(spans: Sequence[ReadableSpan]) -> list[Sequence[ReadableSpan]]:
    return [spans[i : i + BATCH] for i in range(0, len(spans), BATCH)]


def _parquet_bytes(directory: Path) -> tuple[int, int]:
    files = [p for p in (directory / "spans").rglob("*.parquet") if not p.name.startswith(".")]
    return sum(p.stat().st_size for p in files), len(files)


def _where_bytes_go(directory: Path, spans: int, top: int = 4) -> str:
    """The columns that hold most of the store's bytes (compressed, per span), for a row's notes."""
    import pyarrow.parquet as pq

    sizes: dict[str, int] = {}
    for path in (directory / "spans").rglob("*.parquet"):
        if path.name.startswith("."):
            continue
        metadata = pq.read_metadata(path)
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                name = column.path_in_schema.split(".")[0]
                sizes[name] = sizes.get(name, 0) + column.total_compressed_size
    ranked = sorted(sizes.items(), key=lambda item: -item[1])[:top]
    return "bytes/span by column: " + ", ".join(f"{name} {size / spans:,.0f}" for name, size in ranked)


def _unique_payload_zstd(directory: Path, columns: Sequence[str] = ("input", "input_added", "output")) -> int | None:
    """Bytes of every payload value the store keeps (input, input_added, output: each message stored once,
    outputs given back not again) in one zstd-3 stream: what those columns cost at best at this level,
    whatever the file layout. `columns`: those payloads only (the output alone: what no reference to an
    earlier row can take away, since every output is a new span's result)."""
    import pyarrow.parquet as pq

    parts: list[str] = []
    for path in (directory / "spans").rglob("*.parquet"):
        if not path.name.startswith("."):
            table = pq.read_table(path, columns=list(columns))
            for column in table.columns:
                parts.extend(v for v in column.to_pylist() if v)
    return _zstd("\n".join(parts).encode())


def _otlp_json_line(spans: Sequence[ReadableSpan]) -> bytes:
    """One OTLP JSON request as the Collector's file exporter writes it (hex ids, integer enums)."""
    request = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in request.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                _hex_ids(span)
                for link in span.get("links", ()):
                    _hex_ids(link)
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _hex_ids(item: dict[str, Any]) -> None:
    # protobuf's JSON mapping writes bytes as base64; OTLP JSON requires ids as lower-case hex.
    for key in ("traceId", "spanId", "parentSpanId"):
        if item.get(key):
            item[key] = base64.b64decode(item[key]).hex()


def _zstd(data: bytes) -> int | None:
    try:
        import zstandard
    except ImportError:
        return None
    return len(zstandard.ZstdCompressor(level=3).compress(data))


def _stored(batches: Sequence[Sequence[ReadableSpan]]) -> list:
    """The rows an export hands the WAL, batch by batch: converted, each conversation stored once
    (as `ParquetSpanExporter.export` and `StoreWriter.append` do, without the I/O)."""
    conversations = Conversations()
    stored = []
    for batch in batches:
        inputs: list[str | None] = []
        outputs: list[str | None] = []
        converted = _columns(batch).to_batch(inputs=inputs, outputs=outputs)
        encoded, remember = conversations.encode([converted], [inputs], [outputs])
        remember()
        stored.extend(encoded)
    return stored


def _throughput(spans: Sequence[ReadableSpan], label: str, *, repeats: int, warmup: int) -> list[Result]:
    batches = _batches(spans)
    stored_rows = _stored(batches)
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-"))
    counter = iter(range(1 << 30))
    open_exporters: list[ParquetSpanExporter] = []

    def clean() -> None:
        # Untimed: close what the WAL-only case left open (that folds), then drop every file.
        while open_exporters:
            open_exporters.pop().shutdown()
        for child in scratch.iterdir():
            shutil.rmtree(child, ignore_errors=True)

    def end_to_end() -> None:
        exporter = ParquetSpanExporter(scratch / f"e2e-{next(counter)}")
        for batch in batches:
            exporter.export(batch)
        exporter.shutdown()

    def to_wal() -> None:
        exporter = ParquetSpanExporter(scratch / f"wal-{next(counter)}", **_NEVER_FOLD)
        for batch in batches:
            exporter.export(batch)
        open_exporters.append(exporter)

    def conversion() -> None:
        for batch in batches:
            spans_to_batch(batch)

    def stored() -> None:
        _stored(batches)

    def fold() -> None:
        fold_batches(scratch / f"fold-{next(counter)}", "fold", stored_rows)

    def otlp_encode() -> None:
        for batch in batches:
            encode_spans(batch)

    def otlp_serialize() -> None:
        for batch in batches:
            encode_spans(batch).SerializeToString()

    try:
        samples = interleave(
            {"e2e": end_to_end, "wal": to_wal, "conversion": conversion, "stored": stored, "fold": fold,
             "otlp": otlp_encode, "otlp_bytes": otlp_serialize},
            repeats=repeats,
            warmup=warmup,
            before=clean,
        )
    finally:
        clean()
        shutil.rmtree(scratch, ignore_errors=True)

    n = len(spans)
    rates = {name: sample.per_second(n) for name, sample in samples.items()}
    peer, peer_name = rates["otlp"], "OTLP protobuf encode_spans"
    serialized = rates["otlp_bytes"].median
    us = {name: 1e6 / rate.median for name, rate in rates.items()}  # median microseconds per span
    load = f"load average {os.getloadavg()[0]:.2f} at the end (the machine is shared)"
    # Where an export's time goes, from the cases' medians: what runs under the GIL (stored rows) bounds the
    # rate whatever runs beside it; the WAL frame (zstd-1 IPC, write, fsync) and the folds can use other cores.
    parts = (f"per span: conversion {us['conversion']:.1f} us, conversations stored once {us['stored'] - us['conversion']:.1f} us, "
             f"WAL frame (zstd-1 IPC, write, fsync) {us['wal'] - us['stored']:.1f} us, folding {us['fold']:.1f} us "
             f"(the last segment's at shutdown, the others beside the exports); OTLP encode_spans {us['otlp']:.1f} us; "
             f"3x needs <= {us['otlp'] / 3:.1f} us in all, the stored rows alone take {us['stored']:.1f}")

    def row(metric: str, name: str, target: str | None, notes: str) -> Result:
        ours = rates[name]
        ratio = ours.median / peer.median
        return Result(
            benchmark="export throughput",
            metric=metric,
            unit="spans/s",
            ours=ours.median,
            peer_name=peer_name,
            peer=peer.median,
            target=target,
            met=None if target is None else ratio >= 3.0,
            notes=notes,
            corpus=label,
            ours_spread=ours.spread,
            peer_spread=peer.spread,
            repeats=repeats,
        )

    return [
        row(
            "ReadableSpan -> Parquet, end to end (WAL fsync per batch, folds, shutdown)",
            "e2e",
            ">= 3x the OTLP encoder's rate",
            f"OTLP encode + SerializeToString: {serialized:,.0f} spans/s; {parts}; {load}",
        ),
        row(
            "ReadableSpan -> WAL, durable (fsync per batch; folding deferred)",
            "wal",
            ">= 3x the OTLP encoder's rate",
            f"what export() costs its caller before it returns; {load}",
        ),
        row("ReadableSpan -> Arrow batch (spans_to_batch, no I/O)", "conversion", None, "CPU cost of the conversion alone"),
        row("ReadableSpan -> stored rows (conversion + each conversation stored once, no I/O)", "stored", None,
            "what an export hands the WAL: its Python part, under the GIL (the floor of both rows above)"),
        row("stored rows -> Parquet (one fold of every batch: sort, zstd Parquet, fsync)", "fold", None,
            "what the folds cost in all, on a thread of their own (pyarrow encodes without the GIL)"),
    ]


def _size(spans: Sequence[ReadableSpan], label: str) -> list[Result]:
    batches = _batches(spans)
    n = len(spans)
    protobuf = [encode_spans(batch).SerializeToString() for batch in batches]
    protobuf_bytes = sum(len(b) for b in protobuf)
    protobuf_gzip = sum(len(gzip.compress(b, compresslevel=6)) for b in protobuf)
    del protobuf
    json_lines = b"".join(_otlp_json_line(batch) for batch in batches)
    json_bytes = len(json_lines)
    json_zstd = _zstd(json_lines)
    del json_lines

    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-size-"))
    floor = outputs = None
    try:
        exporter = ParquetSpanExporter(scratch)
        for batch in batches:
            exporter.export(batch)
        exporter.shutdown()
        parquet_bytes, files = _parquet_bytes(scratch)
        columns = _where_bytes_go(scratch, n)
        try:
            compact(scratch, grace_s=0)  # the replaced inputs removed now, so disk bytes are the merged files
            compacted_bytes, compacted_files = _parquet_bytes(scratch)
            floor = _unique_payload_zstd(scratch)
            outputs = _unique_payload_zstd(scratch, ("output",))
        except Exception as exc:  # noqa: BLE001 - compaction is reported, not required, here
            compacted_bytes, compacted_files = None, f"compact failed: {exc!r}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    ours = parquet_bytes / n
    where = f"{files} Parquet file(s) after fold, default settings"
    floor_note = "" if floor is None else (
        f"; floor: the payload values kept (each message once) in one zstd-3 stream are {floor / n:,.0f} bytes/span"
        + (f", {floor / json_zstd:.2f}x zstd OTLP JSON before any other column" if json_zstd else "")
        + ("" if outputs is None or not json_zstd else f"; the outputs alone {outputs / n:,.0f} ({outputs / json_zstd:.2f}x)"))

    def row(
        peer_name: str, peer_total: int | None, target: str | None, limit: float | None,
        notes: str = where, value: float = ours, metric: str = "on disk (Parquet, zstd)",
    ) -> Result:
        peer = None if peer_total is None else peer_total / n
        met = None if limit is None or peer is None else value < peer * limit
        return Result(
            benchmark="bytes per span",
            metric=metric,
            unit="bytes/span",
            ours=value,
            peer_name=peer_name,
            peer=peer,
            target=target,
            met=met,
            notes=notes,
            corpus=label,
        )

    rows = [
        row("OTLP protobuf (request bytes)", protobuf_bytes, "< 1/3 of OTLP protobuf", 1 / 3),
        row("OTLP JSON (file exporter lines)", json_bytes, "< 1/10 of OTLP JSON", 1 / 10),
        row("OTLP protobuf, gzip per request", protobuf_gzip, None, None, "context: what OTLP/HTTP with gzip sends"),
    ]
    if json_zstd is not None:
        rows.append(row("OTLP JSON, zstd-compressed file", json_zstd, "<= 0.5x zstd OTLP JSON", 0.5,
                        f"the Collector's file exporter with compression: zstd; {where}; {columns}{floor_note}"))
    if compacted_bytes is not None:
        rows.append(
            row(
                "OTLP protobuf (request bytes)", protobuf_bytes, None, None,
                f"{compacted_files} file(s) after `agentotel compact --grace 0`", compacted_bytes / n, "on disk after compaction",
            )
        )
        if json_zstd is not None:
            rows.append(row("OTLP JSON, zstd-compressed file", json_zstd, None, None,
                            f"{compacted_files} file(s) after `agentotel compact --grace 0`", compacted_bytes / n,
                            "on disk after compaction"))
    else:
        rows.append(Result("bytes per span", "after compact", "bytes/span", None, notes=str(compacted_files), corpus=label))
    return rows


# -- a run's repeated request values ---------------------------------------------------------------------


def _per_run_requests(spans: Sequence[ReadableSpan], *, referenced: bool) -> list[ReadableSpan]:
    """The spans with each run's system instructions and tool definitions its own (one more item naming the
    run, as a template filled in per user or per day would be); `referenced`: a run's later model calls carry
    a one-character reference instead, what storing them once per run would leave in those rows."""
    from agentotel import semconv as sc

    keys = (sc.GEN_AI_SYSTEM_INSTRUCTIONS, sc.GEN_AI_TOOL_DEFINITIONS)
    seen: set[tuple[Any, str]] = set()
    changed = []
    for span in spans:
        attributes = dict(span.attributes or {})
        run = attributes.get(sc.AGENTOTEL_RUN_ID)
        for key in keys:
            value = attributes.get(key)
            if isinstance(value, str) and value.endswith("]"):
                item = json.dumps({"type": "text", "content": f"For run {run}."})
                attributes[key] = "=" if referenced and (run, key) in seen else f"{value[:-1]},{item}]"
                seen.add((run, key))
        changed.append(ReadableSpan(
            name=span.name, context=span.context, parent=span.parent, resource=span.resource, attributes=attributes,
            events=span.events, links=span.links, kind=span.kind, status=span.status, start_time=span.start_time,
            end_time=span.end_time, instrumentation_scope=span.instrumentation_scope))
    return changed


def _repeated_requests(spans: Sequence[ReadableSpan], label: str) -> Result:
    """Bytes per span when every run's system instructions and tool definitions differ from the other runs',
    against the same spans with them stored once per run: what a reference to a run's first call would save
    over the attributes map's dictionary (bench_store's standard corpus has a few values shared by all runs)."""
    from agentotel import semconv as sc

    n = len(spans)
    given = sum(len(str((s.attributes or {}).get(k, ""))) for s in spans
                for k in (sc.GEN_AI_SYSTEM_INSTRUCTIONS, sc.GEN_AI_TOOL_DEFINITIONS))
    sizes = {}
    for referenced in (False, True):
        scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-requests-"))
        try:
            exporter = ParquetSpanExporter(scratch)
            for batch in _batches(_per_run_requests(spans, referenced=referenced)):
                exporter.export(batch)
            exporter.shutdown()
            folded, _ = _parquet_bytes(scratch)
            compact(scratch, grace_s=0)
            sizes[referenced] = (folded / n, _parquet_bytes(scratch)[0] / n)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return Result(
        benchmark="bytes per span",
        metric="system instructions and tool definitions that differ by run, on disk after compaction",
        unit="bytes/span",
        ours=sizes[False][1],
        peer_name="the same spans with each run's stored once (its later calls: a reference)",
        peer=sizes[True][1],
        notes=(f"given: {given / n:,.0f} bytes/span of them (each model call carries its run's); folded "
               f"{sizes[False][0]:,.1f} against {sizes[True][0]:,.1f}; the attributes map's dictionary (up to 8 MiB a "
               "column chunk) already keeps each value once per row group"),
        corpus=label + ", each run's instructions and tool definitions its own",
    )


# -- long runs: a coding agent's growing conversation ----------------------------------------------------

_REPOSITORY = Path(__file__).resolve().parent.parent
_SHARED_TRAJECTORIES = Path("shared") / "trajectories" / "swe-agent"
LONG_RUN_STEPS = (50, 100, 200, 400)


def _trajectories() -> tuple[Path, str]:
    """Where the long-run corpus's turns come from, and how a row names it: ../shared/trajectories beside the
    repository, or beside its main checkout when this is a git worktree (whose `.git` file names it), else the
    copies the tests keep, a smaller set that gives other rows: a worktree without this search measured the
    50-step runs at 0.757x zstd OTLP JSON against 0.698x from the main checkout."""
    checkouts = [_REPOSITORY]
    dot_git = _REPOSITORY / ".git"
    if dot_git.is_file():  # "gitdir: <main>/.git/worktrees/<name>"
        text = dot_git.read_text().strip()
        if text.startswith("gitdir:"):
            checkouts.append(Path(text.split(":", 1)[1].strip()).parent.parent.parent)
    for checkout in checkouts:
        if (checkout.parent / _SHARED_TRAJECTORIES).is_dir():
            return checkout.parent / _SHARED_TRAJECTORIES, "SWE-agent turns"
    return _REPOSITORY / "tests" / "query" / "data", "SWE-agent turns, the tests' copies only"


def _recorded_turns() -> list[tuple[str, str]]:
    """(assistant text, observation) pairs of the SWE-agent trajectories (`_trajectories`): the shape of a
    coding agent's turns."""
    folder = _trajectories()[0]
    pairs = []
    for path in sorted(folder.glob("*.traj")):
        history = json.loads(path.read_text())["history"]
        messages = [m for m in history[2:] if m.get("content")]
        for turn, observation in zip(messages[::2], messages[1::2]):
            pairs.append((str(turn["content"]), str(observation["content"])))
    return pairs


def _long_turns(steps: int, run_index: int) -> Iterator[tuple[str, dict[str, Any], str, list[dict[str, Any]]]]:
    """The turns of one coding agent's run of `steps` model calls: (tool call id, the assistant's message,
    the tool's result, the conversation the model call was given). Each result joins the conversation."""
    import random

    rng = random.Random(run_index)
    text = corpus._Text(rng)
    pairs = _recorded_turns()
    messages = [{"role": "system", "parts": [{"type": "text", "content": "You are a coding agent. Use the tools."}]},
                {"role": "user", "parts": [{"type": "text", "content": f"Fix issue #{run_index}: the parser fails on empty input."}]}]
    for k in range(steps):
        turn, observation = pairs[rng.randrange(len(pairs))]
        call_id = f"call_{run_index}_{k}"
        # The recorded observation's shape, with text of this step's own (a real run reads new code and
        # test output at every step): ~1.5 KB per tool result, as the issue measured.
        observation = f"[{k}] " + observation[:300] + "\n" + text.code(rng.randrange(10, 40))
        assistant = {"role": "assistant", "parts": [{"type": "text", "content": f"Step {k}. {turn}"},
                                                    {"type": "tool_call", "id": call_id, "name": "bash", "arguments": {"command": f"sed -n {k},{k + 40}p src/parser.py"}}]}
        yield call_id, assistant, observation, messages
        messages = messages + [assistant, {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": observation}]}]


def _long_run(steps: int, run_index: int) -> list[ReadableSpan]:
    """One run of `steps` model calls, each followed by a tool call whose result joins the conversation:
    every call's input is the whole conversation so far (what agentotel records), as SDK spans."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    from agentotel import semconv as sc

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agentotel.openai")
    tools = provider.get_tracer("agentotel.tools")
    now = 1_780_000_000 * 10**9 + run_index * 10**13
    run_id = f"long-{steps}-{run_index}"
    common = {sc.AGENTOTEL_RUN_ID: run_id, sc.ENDUSER_ID: "dev"}
    root = tracer.start_span("invoke_agent coder", kind=SpanKind.INTERNAL, start_time=now,
                             attributes={sc.GEN_AI_OPERATION_NAME: "invoke_agent", sc.AGENTOTEL_RUN_NAME: "coder", **common})
    context = trace.set_span_in_context(root)
    for k, (call_id, assistant, observation, messages) in enumerate(_long_turns(steps, run_index)):
        span = tracer.start_span("chat gpt-4o", context=context, kind=SpanKind.CLIENT, start_time=now, attributes={
            sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: "openai", sc.GEN_AI_REQUEST_MODEL: "gpt-4o",
            sc.GEN_AI_INPUT_MESSAGES: json.dumps(messages, ensure_ascii=False, separators=(",", ":")),
            sc.GEN_AI_OUTPUT_MESSAGES: json.dumps([assistant], ensure_ascii=False, separators=(",", ":")),
            sc.GEN_AI_USAGE_INPUT_TOKENS: 1000 + 300 * k, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 80, **common})
        now += 2 * 10**9
        span.end(end_time=now)
        tool = tools.start_span("execute_tool bash", context=context, start_time=now, attributes={
            sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: "bash", sc.GEN_AI_TOOL_CALL_ID: call_id,
            sc.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"command": f"sed -n {k},{k + 40}p src/parser.py"}),
            sc.GEN_AI_TOOL_CALL_RESULT: json.dumps(observation, ensure_ascii=False), **common})
        now += 10**9
        tool.end(end_time=now)
    root.end(end_time=now)
    provider.shutdown()
    return list(memory.get_finished_spans())


def _long_runs(runs: int, lengths: Sequence[int] = LONG_RUN_STEPS) -> list[Result]:
    """Bytes per span and per step of coding-agent runs of 50 to 400 steps, against zstd OTLP JSON."""
    from agentotel.query import Traces

    rows = []
    per_step = {}
    for steps in lengths:
        spans = [s for i in range(runs) for s in _long_run(steps, i)]
        batches = _batches(spans)
        json_zstd = _zstd(b"".join(_otlp_json_line(batch) for batch in batches))
        scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-long-"))
        try:
            exporter = ParquetSpanExporter(scratch)
            for batch in batches:
                exporter.export(batch)
            exporter.shutdown()
            parquet_bytes, files = _parquet_bytes(scratch)
            columns = _where_bytes_go(scratch, len(spans), top=3)
            floor = _unique_payload_zstd(scratch)
            # No input cut short: the store gives back each call's conversation exactly as recorded.
            recorded = {f"{s.context.span_id:016x}": s.attributes.get("gen_ai.input.messages") for s in spans}
            with Traces(scratch) as traces:
                got = dict(traces.sql("SELECT span_id, input FROM llm_calls").fetchall())
            whole = sum(1 for span_id, value in got.items() if value == recorded[span_id])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        n = len(spans)
        per_step[steps] = parquet_bytes / (runs * steps)
        peer = None if json_zstd is None else json_zstd / n
        rows.append(Result(
            benchmark="bytes per span, long runs",
            metric=f"{steps}-step coding-agent runs, on disk (Parquet, zstd)",
            unit="bytes/span", ours=parquet_bytes / n, peer_name="OTLP JSON, zstd-compressed file", peer=peer,
            target="<= 0.5x zstd OTLP JSON", met=None if peer is None else parquet_bytes / n <= 0.5 * peer,
            notes=(f"{per_step[steps]:,.0f} bytes per step; {whole} of {len(got)} model-call inputs read back whole "
                   f"(none truncated); {files} file(s); {columns}"
                   + ("" if floor is None or peer is None else
                      f"; floor: the payload values kept in one zstd-3 stream are {floor / n:,.0f} bytes/span, "
                      f"{floor / n / peer:.2f}x zstd OTLP JSON before any other column")),
            corpus=f"{runs} run(s) of {steps} steps ({_trajectories()[1]}), {n:,} spans",
        ))
    growth = per_step[lengths[-1]] / per_step[lengths[0]]
    rows.append(Result(
        benchmark="bytes per span, long runs", metric=f"bytes per step, {lengths[-1]} vs {lengths[0]} steps",
        unit="x", ours=growth, target="<= 1.3x (flat as runs grow)", met=growth <= 1.3,
        notes=f"{per_step[lengths[0]]:,.0f} -> {per_step[lengths[-1]]:,.0f} bytes per step",
        corpus=f"{runs} run(s) per length",
    ))
    return rows


def _capture_long_run(steps: int, repeats: int) -> Result:
    """What recording a long run's model-call inputs costs the agent, per call: `Payload.encode_messages`
    (redaction, the per-message limit) on the conversation each call is given, against `json.dumps` of it
    (what an instrumentation without either records). Past the 64 KB value limit (~40 steps) every
    message is encoded on its own, on every call."""
    import time

    from agentotel import _config
    from agentotel.content import Payload

    conversations = [messages for *_, messages in _long_turns(steps, 0)]
    ours, peer = [], []
    for _ in range(repeats):
        _config.reset()  # a new policy: no message is known from the repeat before, as in a new process
        start = time.process_time()
        for messages in conversations:
            Payload().encode_messages(messages)
        ours.append((time.process_time() - start) / steps * 1e3)
        start = time.process_time()
        for messages in conversations:
            json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
        peer.append((time.process_time() - start) / steps * 1e3)
    ours_ms, peer_ms = sorted(ours)[len(ours) // 2], sorted(peer)[len(peer) // 2]
    return Result(
        benchmark="capture cost, long runs", metric=f"CPU per model call's input, {steps}-step coding-agent run",
        unit="ms", ours=ours_ms, peer_name="json.dumps of the same messages", peer=peer_ms,
        notes=f"median of {repeats}; {len(conversations[-1])} messages at the last call",
        corpus=f"1 run of {steps} steps ({_trajectories()[1]})", repeats=repeats,
    )


def throughput(quick: bool) -> list[Result]:
    """The export throughput rows alone: `python -m benchmarks.bench_store throughput` prints them (writes nothing)."""
    # Throughput repeats every case several times, so it runs on half the standard corpus; a rate per
    # span does not depend on the count once batches are full.
    n_rate = 1_000 if quick else corpus.STANDARD_SIZE // 2
    repeats, warmup = (1, 0) if quick else (5, 1)
    spans = corpus.generate(n_rate, seed=corpus.DEFAULT_SEED)
    return _throughput(spans, f"corpus seed={corpus.DEFAULT_SEED}, {n_rate:,} spans", repeats=repeats, warmup=warmup)


def run(quick: bool) -> list[Result]:
    rows = throughput(quick)  # first, with no other corpus in memory
    # Size is measured once, on the whole standard corpus.
    n_size = 1_000 if quick else corpus.STANDARD_SIZE
    spans = corpus.generate(n_size, seed=corpus.DEFAULT_SEED)
    label = f"corpus seed={corpus.DEFAULT_SEED}, {n_size:,} spans"
    return rows + _size(spans, label) + [_repeated_requests(spans, label)] + (
        _long_runs(1, LONG_RUN_STEPS[:2]) if quick else _long_runs(3)) + [
        _capture_long_run(LONG_RUN_STEPS[1] if quick else LONG_RUN_STEPS[-1], 1 if quick else 5)]


if __name__ == "__main__":
    import sys

    from benchmarks._report import format_row

    quick = bool(os.environ.get("QUICK"))
    for result in throughput(quick) if sys.argv[1:] == ["throughput"] else run(quick):
        print(format_row(result))
