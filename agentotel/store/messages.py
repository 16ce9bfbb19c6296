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
(query/sql/_whole_input.sql for the views, `whole_rows` for a trajectory): a row's input is the
messages of the rows before its offset plus its own, and only when those add up to exactly
`input_offset` characters; otherwise an earlier row is missing (a damaged file set aside, say) and the
input is NULL, never a wrong one.

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
from typing import Any, Callable, MutableMapping, Sequence

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


@dataclass
class _Staged:
    """A run's state during one append: its chains copied (a few), its spans' forms added beside the old."""

    chains: list[_Chain]
    committed: dict[str, tuple[str | None, int | None, str | None]]
    added: dict[str, tuple[str | None, int | None, str | None]]


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
        staged: dict[tuple, _Staged] = {}
        out = [self._encode(batch, staged) for batch in batches]
        return out, lambda: self._commit(staged)

    def _run(self, key: tuple, staged: dict[tuple, _Staged]) -> _Staged:
        run = staged.get(key)
        if run is None:
            known = self._runs.get(key)
            run = staged[key] = _Staged(
                [_Chain(c.id, c.text, c.checked) for c in known.chains] if known else [],
                known.stored if known else {},
                {},
            )
        return run

    def _encode(self, batch: pa.RecordBatch, staged: dict[tuple, _Staged]) -> pa.RecordBatch:
        inputs = batch.column("input")
        candidates = pc.and_(pc.is_in(batch.column("operation"), _MODEL_OPERATIONS), pc.is_valid(inputs))
        rows = pc.indices_nonzero(pc.fill_null(candidates, False)).to_pylist()
        if not rows:
            return batch
        picked = batch.select(["trace_id", "span_id", "run_id", "session_id", "user_id", "start_time"])
        picked = picked.take(pa.array(rows, pa.int64()))
        starts = picked.column("start_time").cast(pa.int64()).to_pylist()
        columns = {name: picked.column(name).to_pylist() for name in ("trace_id", "span_id", "run_id", "session_id", "user_id")}
        # Row by row: a take would first copy every conversation's text (the batch's bulk) only to read it.
        texts = [inputs[row].as_py() for row in rows]
        chain_of: dict[int, tuple[str, int, str]] = {}
        for i in sorted(range(len(rows)), key=lambda i: (starts[i] or 0, i)):
            text = texts[i]
            if len(text) < 3 or text[0] != "[" or text[-1] != "]":
                continue  # not a list of messages (or an empty one): stored as it is
            span = columns["span_id"][i]
            key = (columns["trace_id"][i], columns["run_id"][i], columns["session_id"][i], columns["user_id"][i],
                   (starts[i] or 0) // _DAY_NS)
            run = self._run(key, staged)
            form = run.added.get(span) or run.committed.get(span)
            if form is not None:  # delivered again: stored as it was the first time
                if form[0] is not None:
                    chain_of[rows[i]] = form  # type: ignore[assignment]
                continue
            form = self._continue(run.chains, span, text[1:-1])
            run.added[span] = form
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
    def _continue(chains: list[_Chain], span: str, messages: str) -> tuple[str | None, int | None, str | None]:
        """How a call whose input holds `messages` is stored: (chain, offset, added), or Nones when whole."""
        best = None
        for chain in chains:  # the longest conversation this input extends at a message boundary
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
        chains.append(_Chain(span, messages, False))
        if len(chains) > _CHAINS_PER_RUN:
            chains.pop(0)
        return None, None, None

    def _commit(self, staged: dict[tuple, _Staged]) -> None:
        for key, change in staged.items():
            run = self._runs.pop(key, None)
            if run is None:
                run = _Run([], change.committed)
            self._chars -= sum(len(c.text) for c in run.chains)
            run.chains = change.chains
            run.stored.update(change.added)
            while len(run.stored) > _SPANS_PER_RUN:
                run.stored.pop(next(iter(run.stored)))
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

    The Python twin of query/sql/_whole_input.sql, for code that holds rows in memory (compaction, tests).
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


def whole_rows(rows: Sequence[MutableMapping[str, Any]]) -> bool:
    """Set `input` whole in each row dict stored as a continuation, from the other rows (one trace's, as a
    trajectory reads them), and `input_messages` to its parsed messages. False, having set nothing
    reliable, when a row's base is not among `rows` or anything does not add up: the caller then asks the
    store (query/sql/_whole_input.sql), which has every copy of every row and gives NULL where an input is unknown.

    Linear in what it builds: each conversation's text and message list grow call by call, and the
    messages of earlier calls are parsed once and shared between the lists (so a long run's trajectory
    does not parse its history again at every step).
    """
    conversations: dict[tuple[str, str], list[MutableMapping[str, Any]]] = {}
    for row in rows:
        chain = row.get(CHAIN)
        if chain is not None:
            conversations.setdefault((row["trace_id"], chain), []).append(row)
    if not conversations:
        return True
    starts = {(row["trace_id"], row["span_id"]): row for row in rows
              if row.get(CHAIN) is None and (row["trace_id"], row["span_id"]) in conversations}
    try:
        for key, members in conversations.items():
            start = starts.get(key)
            if start is None or start.get("input") is None or len(start["input"]) < 2:
                return False
            text, parsed = start["input"][1:-1], json.loads(start["input"])
            members.sort(key=lambda r: (r[OFFSET], r["span_id"]))
            seen: set[tuple[int, str]] = set()
            pending: list[tuple[str, list]] = []  # pieces at the current offset: part of the larger ones' bases
            at = None
            for row in members:
                if row[OFFSET] != at:
                    for piece, messages_ in pending:
                        text, parsed = f"{text},{piece}", parsed + messages_
                    pending, at = [], row[OFFSET]
                added = row.get(ADDED)
                if added is None or len(text) != row[OFFSET]:
                    return False
                own = added[1:-1]
                messages_ = json.loads(added) if own else []
                row["input"] = f"[{text},{own}]" if own else f"[{text}]"
                row["input_messages"] = parsed + messages_
                if own and (row[OFFSET], row["span_id"]) not in seen:
                    seen.add((row[OFFSET], row["span_id"]))
                    pending.append((own, messages_))
    except (ValueError, TypeError, RecursionError):
        return False
    return True
