"""A conversation stored once: a model call's input kept as an earlier call's plus the messages it adds.

An agent sends the whole conversation again on every model call, so a run's inputs grow with the square
of its length. The writer (`StoreWriter.append`, the one path of the in-process exporter, the collector
and `agentotel import`) keeps, per run, the text of each conversation's latest input. When a model
call's input is that text with messages appended, its row stores only those:

    input         NULL
    input_chain   the span id of the conversation's first call (whose row holds its input whole)
    input_offset  how many characters of messages came before (the base's input, without its brackets)
    input_added   the messages it adds, as a JSON array (`[]` when none: a retry of the same input)

Every other row keeps `input` whole and the three columns NULL. A conversation's rows tile its text:
the first call's messages, then each continuation's, in offset order. Readers fold them back
(`FULL_INPUT_SQL`, used by the query views): a row's input is the messages of the rows before its
offset plus its own, and only when those add up to exactly `input_offset` characters; otherwise an
earlier row is missing (a damaged file set aside, say) and the input is NULL, never a wrong one.

What keeps that true:
- A row continues a conversation only when the writer already wrote (durably) the conversation's latest
  input and the new input extends it at a message boundary; the texts are compared, not hashes. An input
  that ends before the latest one (spans end out of order, across batches) starts a conversation of its own.
- A conversation never leaves its run, user, session, trace and start date: erasing a user, session or
  run, or dropping a day's partition, removes whole conversations.
- Within one append, model calls are taken in start order, so a batch holding a later call before an
  earlier one still stores both once.
- The same span delivered again to the same writer is stored exactly as the first time (compaction's
  duplicate removal then keeps one). A span delivered again to another writer is stored whole there.

Text, not parsed messages: JSON is compared and cut as text (an input is `[` + messages + `]`), so the
rebuilt input is byte for byte the one recorded. Each piece is checked to be valid JSON once.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from agentotel.store import dialects
from agentotel.store.schema import CONVERSATION, SPAN_SCHEMA

CHAIN, OFFSET, ADDED = (name for name, _ in CONVERSATION)
_DAY_NS = 86_400 * 10**9
_MODEL_OPERATIONS = pa.array(sorted(dialects.MODEL_OPERATIONS), pa.string())
_CHAINS_PER_RUN = 8  # conversations followed at once in one run (an agent and its parallel helpers)
_RUNS = 4096  # runs followed at once: the least recently written ones are forgotten first
_CHARS = 64 * 1024 * 1024  # characters of latest inputs kept in memory, in all
_SPANS_PER_RUN = 4096  # spans per run whose stored form is remembered (for a second delivery)


@dataclass
class _Chain:
    id: str  # the span id of its first call
    text: str  # its latest input without the brackets: the messages, joined by commas
    checked: bool  # whether `text` is known to be valid JSON messages


@dataclass
class _Run:
    chains: list[_Chain]
    stored: dict[str, tuple[str | None, int | None, str | None]]  # span id -> (chain, offset, added)


def _valid(messages: str) -> bool:
    """Whether `[messages]` is a JSON array (so `messages` are whole JSON values joined by commas)."""
    try:
        return isinstance(json.loads(f"[{messages}]"), list)
    except (ValueError, RecursionError):
        return False


class Conversations:
    """The writer's memory of each run's conversations: turns model-call rows into continuations.

    `encode(batches)` returns the batches as they should be stored and a `commit` to call once they are
    durable; until then nothing is remembered (an append that failed must not become anyone's base).
    Not thread-safe: the writer calls it under its lock.
    """

    def __init__(self, *, max_chars: int = _CHARS, max_runs: int = _RUNS) -> None:
        self._runs: OrderedDict[tuple, _Run] = OrderedDict()
        self._chars = 0
        self._max_chars = max_chars
        self._max_runs = max_runs

    def encode(self, batches: Sequence[pa.RecordBatch]) -> tuple[list[pa.RecordBatch], Callable[[], None]]:
        staged: dict[tuple, _Run] = {}
        out = [self._encode(batch, staged) for batch in batches]
        return out, lambda: self._commit(staged)

    def _run(self, key: tuple, staged: dict[tuple, _Run]) -> _Run:
        run = staged.get(key)
        if run is None:
            known = self._runs.get(key)
            run = staged[key] = _Run(
                [_Chain(c.id, c.text, c.checked) for c in known.chains] if known else [],
                dict(known.stored) if known else {},
            )
        return run

    def _encode(self, batch: pa.RecordBatch, staged: dict[tuple, _Run]) -> pa.RecordBatch:
        inputs = batch.column("input")
        candidates = pc.and_(pc.is_in(batch.column("operation"), _MODEL_OPERATIONS), pc.is_valid(inputs))
        rows = pc.indices_nonzero(pc.fill_null(candidates, False)).to_pylist()
        if not rows:
            return batch
        picked = batch.select(["trace_id", "span_id", "run_id", "session_id", "user_id", "start_time", "input"])
        picked = picked.take(pa.array(rows, pa.int64()))
        starts = picked.column("start_time").cast(pa.int64()).to_pylist()
        columns = {name: picked.column(name).to_pylist() for name in ("trace_id", "span_id", "run_id", "session_id", "user_id")}
        texts = picked.column("input").to_pylist()
        chain_of: dict[int, tuple[str, int, str]] = {}
        for i in sorted(range(len(rows)), key=lambda i: (starts[i] or 0, i)):
            text = texts[i]
            if len(text) < 3 or text[0] != "[" or text[-1] != "]":
                continue  # not a list of messages (or an empty one): stored as it is
            span = columns["span_id"][i]
            key = (columns["trace_id"][i], columns["run_id"][i], columns["session_id"][i], columns["user_id"][i],
                   (starts[i] or 0) // _DAY_NS)
            run = self._run(key, staged)
            form = run.stored.get(span)
            if form is not None:  # delivered again: stored as it was the first time
                if form[0] is not None:
                    chain_of[rows[i]] = form  # type: ignore[assignment]
                continue
            form = self._continue(run, span, text[1:-1])
            run.stored[span] = form
            if len(run.stored) > _SPANS_PER_RUN:
                run.stored.pop(next(iter(run.stored)))
            if form[0] is not None:
                chain_of[rows[i]] = form  # type: ignore[assignment]
        if not chain_of:
            return batch
        n = batch.num_rows
        chain, offset, added = [None] * n, [None] * n, [None] * n
        for row, (c, o, a) in chain_of.items():
            chain[row], offset[row], added[row] = c, o, a
        kept = pc.if_else(pc.is_null(pa.array(chain, pa.string())), inputs, pa.nulls(n, pa.string()))
        replaced = {"input": kept, CHAIN: pa.array(chain, pa.string()), OFFSET: pa.array(offset, pa.int64()),
                    ADDED: pa.array(added, pa.string())}
        return pa.RecordBatch.from_arrays(
            [replaced.get(name, batch.column(name)) for name in SPAN_SCHEMA.names], schema=SPAN_SCHEMA
        )

    @staticmethod
    def _continue(run: _Run, span: str, messages: str) -> tuple[str | None, int | None, str | None]:
        """How a call whose input holds `messages` is stored: (chain, offset, added), or Nones when whole."""
        best = None
        for chain in run.chains:  # the longest conversation this input extends at a message boundary
            size = len(chain.text)
            if (best is None or size > len(best.text)) and messages.startswith(chain.text) and (
                len(messages) == size or messages[size] == ","
            ):
                best = chain
        if best is not None:
            rest = messages[len(best.text) + 1 :]
            if (best.checked or _valid(best.text)) and (not rest or _valid(rest)):
                best.checked = True
                form = (best.id, len(best.text), f"[{rest}]")
                best.text = messages
                return form
        run.chains.append(_Chain(span, messages, False))
        if len(run.chains) > _CHAINS_PER_RUN:
            run.chains.pop(0)
        return None, None, None

    def _commit(self, staged: dict[tuple, _Run]) -> None:
        for key, run in staged.items():
            old = self._runs.pop(key, None)
            if old is not None:
                self._chars -= sum(len(c.text) for c in old.chains)
            self._runs[key] = run  # most recently written last
            self._chars += sum(len(c.text) for c in run.chains)
        while self._runs and (self._chars > self._max_chars or len(self._runs) > self._max_runs):
            _key, run = self._runs.popitem(last=False)
            self._chars -= sum(len(c.text) for c in run.chains)


def chain_table(table: pa.Table) -> pa.Table:
    """Rows written before conversations were stored once (schema version 2 and older: every input whole),
    stored once: for `agentotel compact`, which rewrites such files. Only for rows no other row refers to."""
    if table.num_rows == 0:
        return table
    batches, _commit = Conversations(max_chars=2**62, max_runs=2**62).encode(table.combine_chunks().to_batches())
    return pa.Table.from_batches(batches, schema=SPAN_SCHEMA)


def full_inputs(table: pa.Table) -> list[str | None]:
    """Each row's whole input, rebuilt from the conversations in `table` (None when its base is missing).

    The Python twin of FULL_INPUT_SQL, for code that holds rows in memory (compaction, tests).
    """
    inputs = table.column("input").to_pylist()
    chains = table.column(CHAIN).to_pylist()
    offsets = table.column(OFFSET).to_pylist()
    added = table.column(ADDED).to_pylist()
    traces = table.column("trace_id").to_pylist()
    spans = table.column("span_id").to_pylist()
    segments: dict[tuple, dict[tuple[int, str], str]] = {}
    for i, chain in enumerate(chains):
        if chain is None:
            if inputs[i] is not None and len(inputs[i]) >= 2:
                segments.setdefault((traces[i], spans[i]), {})[(0, spans[i])] = inputs[i][1:-1]
        elif added[i] is not None:
            segments.setdefault((traces[i], chain), {})[(offsets[i], spans[i])] = added[i][1:-1]
    out: list[str | None] = []
    for i, chain in enumerate(chains):
        if chain is None:
            out.append(inputs[i])
            continue
        pieces = sorted((k, v) for k, v in segments.get((traces[i], chain), {}).items() if k[0] < offsets[i] and v)
        prefix = ",".join(v for _k, v in pieces)
        if len(prefix) != offsets[i] or added[i] is None:
            out.append(None)
            continue
        own = added[i][1:-1]
        out.append(f"[{prefix},{own}]" if own else f"[{prefix}]")
    return out


def whole(table: pa.Table) -> pa.Table:
    """`table` with every input rebuilt whole and the conversation columns NULL (as written before)."""
    if table.num_rows == 0 or not pc.any(pc.is_valid(table.column(CHAIN))).as_py():
        return table
    table = table.set_column(table.schema.get_field_index("input"), "input", pa.array(full_inputs(table), pa.string()))
    for name, arrow in CONVERSATION:
        table = table.set_column(table.schema.get_field_index(name), name, pa.nulls(table.num_rows, arrow))
    return table
