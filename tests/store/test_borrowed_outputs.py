"""Outputs given back to the model: what the writer borrows, on run shapes of their own.

The writer finds a later message's copy of an earlier output by look-ups (a reply by its start, a tool's
result by a short head before the whole of it) instead of trying each output in turn. These tests hold it
to the plain search's answer on random texts, and read back byte for byte a run whose results come back
late, in parallel, and with characters the JSON encoders treat apart.
"""

from __future__ import annotations

import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

import agentotel
from agentotel import semconv as sc
from agentotel.store import StoreWriter, messages, parquet_files
from agentotel.store.schema import SpanColumns, conform

T0 = 1_790_000_000 * 10**9


def _plain_lent(replies: list, results: list, rest: str, bounds: list) -> list:
    """The plain search: every followed output tried in turn, the latest first (the writer's rule, spelled out)."""
    cuts = []
    for s, e in bounds:
        if e - s < messages._WORTH_BORROWING:
            continue
        message, cut = rest[s:e], None
        for reply, span, at in reversed(replies[-messages._OUTPUTS_PER_RUN:]):
            if reply[: messages._WORTH_BORROWING] == message[: messages._WORTH_BORROWING]:
                shared = len(os.path.commonprefix([reply, message]))
                cut = (s, shared, span, at, shared, False)
                break
        if cut is None:
            for output, span in reversed(results[-messages._OUTPUTS_PER_RUN:]):
                as_string = json.dumps(output, ensure_ascii=False)[1:-1]
                if messages._ESCAPED_APART.search(output):
                    as_string = None
                found = message.find(output) if len(output) <= e - s else -1
                if found >= 0:
                    cut = (s + found, len(output), span, 0, len(output), False)
                    break
                found = message.find(as_string) if as_string is not None else -1
                if found >= 0:
                    cut = (s + found, len(as_string), span, 0, len(output), True)
                    break
        if cut is not None:
            cuts.append(cut)
    return cuts


def test_the_look_ups_find_what_trying_every_output_in_turn_finds() -> None:
    rng = random.Random(21)
    # Heads shared by many outputs (only the whole tells them apart), characters JSON escapes (DEL: kept by
    # one Python encoder, escaped by the other), and ones DuckDB escapes otherwise.
    alphabet = list("abc xyz,:{}[]") + ['"', "\\", "\n", "\t", "\x7f", "\x1b", "\x0b", "é", "✓", "\U0001f600"]
    heads = ["".join(rng.choice("ab ") for _ in range(70)) for _ in range(3)]

    def output() -> str:
        body = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60, 300)))
        return (rng.choice(heads) if rng.random() < 0.6 else "") + body

    for trial in range(60):
        lent = messages._Outputs()
        replies, results, made = [], [], []
        for k in range(rng.randrange(5, 90)):
            span = f"{trial:04x}{k:012x}"
            if rng.random() < 0.3:  # a model's reply: one or more messages
                reply = [{"role": "assistant", "content": output()} for _ in range(rng.randrange(1, 3))]
                text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
                lent.add(span, text, True)
                for s, e in messages._split(text[1:-1]) or ():
                    if e - s >= messages._WORTH_BORROWING:
                        replies.append((text[1 + s : 1 + e], span, 1 + s))
                made.append(json.dumps(reply[0], ensure_ascii=False, separators=(",", ":")))
            else:
                result = output()
                lent.add(span, result, False)
                results.append((result, span))
                made.append(result)
            # A call's new messages: outputs given back (as they are, as JSON strings, cut short, changed after
            # their head), from any turn so far, and messages that hold none.
            pieces = []
            for _ in range(rng.randrange(0, 4)):
                given = rng.choice(made)
                shape = rng.random()
                if shape < 0.3:
                    pieces.append(json.dumps({"role": "tool", "content": given}, ensure_ascii=False, separators=(",", ":")))
                elif shape < 0.5 and given.startswith('{"role":"assistant"'):  # a reply given back with a field more
                    pieces.append(given[:-1] + ',"extra":1}')
                elif shape < 0.7:
                    pieces.append(json.dumps({"role": "tool", "content": given[:80] + "changed" + given[80:]}, ensure_ascii=False))
                elif shape < 0.85:
                    pieces.append(json.dumps({"role": "user", "parts": [given, output()]}, ensure_ascii=False, separators=(",", ":")))
                else:
                    pieces.append(json.dumps(output(), ensure_ascii=False))
            rest = ",".join(pieces)
            bounds = messages._split(rest)
            assert bounds is not None
            assert lent.lent([rest[s:e] for s, e in bounds]) == _plain_lent(replies, results, rest, bounds), (trial, k)


def _tool(columns: SpanColumns, span: str, start: int, result: str, run: str) -> None:
    columns.append(trace_id="c" * 32, span_id=span, parent_span_id=None, name="execute_tool shell", kind="INTERNAL",
                   status_code="UNSET", status_message=None, start_time_ns=start, end_time_ns=start + 1000,
                   attributes={sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.AGENTOTEL_RUN_ID: run, sc.GEN_AI_TOOL_NAME: "shell",
                               sc.GEN_AI_TOOL_CALL_RESULT: result},
                   resource_attributes={}, scope_name="agentotel", scope_version="1")


def _chat(columns: SpanColumns, span: str, start: int, history: list, reply: dict, run: str) -> str:
    recorded = json.dumps(history, ensure_ascii=False, separators=(",", ":"))
    columns.append(trace_id="c" * 32, span_id=span, parent_span_id=None, name="chat gpt", kind="CLIENT",
                   status_code="UNSET", status_message=None, start_time_ns=start, end_time_ns=start + 1000,
                   attributes={sc.GEN_AI_OPERATION_NAME: "chat", sc.AGENTOTEL_RUN_ID: run,
                               sc.GEN_AI_INPUT_MESSAGES: recorded,
                               sc.GEN_AI_OUTPUT_MESSAGES: json.dumps([reply], ensure_ascii=False, separators=(",", ":"))},
                   resource_attributes={}, scope_name="agentotel.openai", scope_version="1")
    return recorded


def test_results_given_back_late_in_parallel_and_with_odd_characters_read_back_byte_for_byte(tmp_path):
    """An OpenAI-shaped run (tool messages carry the result as a string): three parallel calls a turn whose
    results share their first 100 characters, results holding DEL, quotes and backslashes, and at turn 20 a
    user message quoting turn 0's result again. Batches hold several turns, out of order."""
    run, history, recorded, spans = "late", [{"role": "system", "content": "You run shell commands."},
                                            {"role": "user", "content": "Find the flaky test."}], {}, []
    results: dict[str, str] = {}
    shared = "$ pytest -q tests/unit --maxfail=1 -p no:cacheprovider  # the same command, another shard: " + "=" * 20
    for k in range(24):
        start = T0 + k * 10**10
        calls = [{"id": f"call_{k}_{j}", "type": "function", "function": {"name": "shell", "arguments": json.dumps({"shard": j})}}
                 for j in range(3 if k % 4 == 1 else 1)]
        reply = {"role": "assistant", "content": f"Turn {k}: running the shards again to see which one fails. " * 3,
                 "tool_calls": calls}
        span = f"{k:014x}00"
        recorded[span] = None
        spans.append(("chat", span, start, list(history), reply))
        history.append(reply)
        for j, call in enumerate(calls):
            result = f"{shared}\nshard {j} of turn {k}: " + ("passed \x7f\"ok\" C:\\tmp\\x " if j else "FAILED é✓ ") * (8 + k)
            tool_span = f"{k:014x}1{j}"
            results[tool_span] = result
            spans.append(("tool", tool_span, start + 10**9 + j, result))
            history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if k == 20:  # the user gives turn 0's result back, quoted in a message of their own
            history.append({"role": "user", "content": [{"type": "text", "text": "Compare with the first run:"},
                                                        {"type": "text", "text": results[f"{0:014x}10"]}]})
    writer = StoreWriter(tmp_path)
    for at in range(0, len(spans), 7):  # several turns per append, each batch in reverse end order
        columns = SpanColumns()
        for item in reversed(spans[at : at + 7]):
            if item[0] == "chat":
                recorded[item[1]] = _chat(columns, item[1], item[2], item[3], item[4], run)
            else:
                _tool(columns, item[1], item[2], item[3], run)
        writer.append(columns.to_batch())
    writer.close()

    table = pa.concat_tables([conform(pq.read_table(p)) for p in parquet_files(tmp_path)])
    rows = {r["span_id"]: r for r in table.select(["span_id", "input_chain", "input_added", "input_borrowed"]).to_pylist()}
    borrowed = [b for s in recorded for b in rows[s]["input_borrowed"] or ()]
    # Each parallel result is borrowed from its own span (they differ only after the shared start), DEL and all.
    given_back = {s for s in results if not s.startswith(f"{23:014x}")}  # the last turn's results: no call after them
    assert {b["span_id"] for b in borrowed if b["as_string"]} == given_back
    late = rows[f"{21:014x}00"]["input_borrowed"]
    assert any(b["span_id"] == f"{0:014x}10" and b["as_string"] for b in late)  # 20 turns later
    assert sum(len(rows[s]["input_added"] or "") for s in recorded) < 0.25 * sum(len(r) for r in results.values())
    # Every reader gives back what was recorded.
    traces = agentotel.open(tmp_path)
    assert dict(traces.sql("SELECT span_id, input FROM llm_calls").fetchall()) == recorded
    steps = traces.trajectory(run).steps
    assert [json.dumps(s.input, ensure_ascii=False, separators=(",", ":")) for s in steps if s.type == "llm"] == \
        [recorded[s] for s in sorted(recorded)]
    full = dict(zip(table.column("span_id").to_pylist(), messages.full_inputs(table)))
    assert {s: full[s] for s in recorded} == recorded


def test_a_json_string_is_escaped_as_json_dumps_escapes_it_for_every_code_point() -> None:
    """The writer's fast escaping (orjson) against json.dumps(ensure_ascii=False), the form DuckDB's readers
    rebuild: every code point (in blocks: escaping is character by character; the first 256 also alone, in
    text of each width), and lone surrogates, which orjson refuses."""
    expected = lambda text: json.dumps(text, ensure_ascii=False)[1:-1]  # noqa: E731
    for start in range(0, 0x110000, 512):
        text = "".join(chr(cp) for cp in range(start, start + 512) if not 0xD800 <= cp <= 0xDFFF)
        assert messages._as_json_string(text) == expected(text), hex(start)
    for cp in range(256):
        for text in (chr(cp), f"a{chr(cp)}é", f"{chr(cp)}\U0001f600"):
            assert messages._as_json_string(text) == expected(text), hex(cp)
    for text in ("\ud800", "ok \udfff \x7f", "\U0001f600\udc80\n"):
        assert messages._as_json_string(text) == expected(text)
