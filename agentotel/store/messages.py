"""A conversation stored once: a model call's input kept as parts of its conversation plus the messages it adds.

An agent sends the whole conversation again on every model call, so a run's inputs grow with the square
of its length. The writer (`StoreWriter.append`, the one path of the in-process exporter, the collector
and `agentotel import`) keeps, per run, each conversation's *text*: every message its rows stored, in
offset order, joined by commas, and where each message starts in it. A model call whose input shares
messages with one of them is stored as a continuation:

    input         NULL
    input_chain   the span id of the conversation's first call (whose row holds its input whole)
    input_offset  how many characters of the conversation's text came before this row
    input_added   the messages the text did not hold, as a JSON array (`[]` when none), appended to it
    input_ranges  the parts of the text (with this row's messages) the input is, in order; NULL: all of it

Every other row keeps `input` whole and the columns NULL. A conversation's rows tile its text: the first
call's messages, then each continuation's, in offset order. Readers fold them back
(query/sql/_whole_input.sql for the views, `whole_rows` for a trajectory): a row's text is the messages of
the rows before its offset plus its own, only when those add up to exactly `input_offset` characters, and
its input is that text or its ranges of it; otherwise an earlier row is missing (a damaged file set aside,
say) and the input is NULL, never a wrong one.

What keeps that true:
- A row continues a conversation only when the writer already wrote (durably) the rows it refers to, and
  messages are matched by their text (compared, not hashed), at message boundaries.
- The cheap case first: an input that is the conversation's latest one with messages appended (NULL
  ranges while the conversation only grew that way). Else (an agent dropped or summarised turns, a
  branch, a late call) each message is looked up in the run's conversations, and the input is stored as
  ranges of the one it shares most with. An input sharing nothing, or whose conversation's text has grown
  past `_SLACK` times its size, starts a conversation of its own.
- A conversation never leaves its run, user, session, trace and start date: erasing a user, session or
  run, or dropping a day's partition, removes whole conversations.
- Within one append, model calls are taken in start order, so a batch holding a later call before an
  earlier one still stores both once.
- The same span delivered again to the same writer is stored exactly as the first time (compaction's
  duplicate removal then keeps one). A span delivered again to another writer is stored whole there.

Text, not parsed messages: JSON is compared and cut as text (an input is `[` + messages + `]`), so the
rebuilt input is byte for byte the one recorded. Each message is parsed once, when its row adds it.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, MutableMapping, Sequence

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from agentotel.store import dialects
from agentotel.store.schema import CONVERSATION, SPAN_SCHEMA

CHAIN, OFFSET, ADDED, RANGES, BORROWED = (name for name, _ in CONVERSATION)
_DAY_NS = 86_400 * 10**9
_MODEL_OPERATIONS = pa.array(sorted(dialects.MODEL_OPERATIONS), pa.string())
_RANGE = SPAN_SCHEMA.field(RANGES).type
_BORROWED = SPAN_SCHEMA.field(BORROWED).type
_CHAINS_PER_RUN = 8  # conversations followed at once in one run (an agent and its parallel helpers)
_RUNS = 4096  # runs followed at once: the least recently written ones are forgotten first
_CHARS = 64 * 1024 * 1024  # characters of conversations kept in memory, in all
_SPANS_PER_RUN = 4096  # spans per run whose stored form is remembered (for a second delivery)
_scan = json.JSONDecoder().raw_decode
# An appended message the conversation already holds (an identical tool result, say) is stored as a range
# of it from this size: a range costs a few bytes in this row and in every later one of the conversation.
_WORTH_A_RANGE = 256
# A conversation whose agent drops old turns keeps growing while its inputs do not; readers rebuild an
# input from the conversation's text before it (in SQL a window over it, per row), so past this many
# times the input's size the input starts a conversation of its own: one whole input stored, and what a
# reader builds per row stays within a constant factor of the input itself.
_SLACK = 4
# A new message that holds an earlier span's output (the model's reply, a tool's result) stores a
# reference to it instead from this size; the most recent outputs of each run are followed.
_WORTH_BORROWING = 128
_OUTPUTS_PER_RUN = 32
_PARTS = 16  # parts a conversation's latest input is kept in at most (then joined into one)
_HEAD = 64  # characters of a result whose JSON string form is searched for before the whole form is made
_ENCODE_STRING = json.encoder.encode_basestring  # JSON string literal, non-ASCII as it is (json.dumps(ensure_ascii=False))
# Characters DuckDB's to_json escapes otherwise than Python's json (upper-case hex): an output holding one is
# not borrowed as a JSON string, so every reader rebuilds exactly the recorded text.
_ESCAPED_APART = re.compile("[\x0b\x0e\x0f\x1a-\x1f]")

Form = tuple  # how a call is stored: (chain, offset, added, ranges, borrowed), or five Nones when whole
_WHOLE: Form = (None, None, None, None, None)


@dataclass
class _Chain:
    """One conversation as the writer knows it: its text (every message its rows stored, in offset
    order, joined by commas) by size and by where each message sits, and its latest input."""

    id: str  # the span id of its first call
    size: int  # characters of the conversation's text
    where: dict[str, int]  # message text -> where it starts in the conversation's text
    # The latest input without the brackets, in parts to be joined by commas (the messages each call added):
    # the next input is compared with it in place, never copied whole into one string of its own.
    latest: list[str]
    length: int  # characters of the latest input without the brackets
    ranges: list[tuple[int, int]] | None  # the latest input as ranges of the text; None: all of it
    checked: bool  # whether `latest` is known to be valid JSON messages
    added: dict[str, int] = field(default_factory=dict)  # `where` of the messages added since the last commit
    # `where` and `added` the other way round (start -> message), for `_split_known`'s guesses: made once it is
    # needed, then kept by `_add`, shared with the staged copies. Only a guess, checked against the text before
    # it is used, so a failed append's messages left in it cost nothing but a guess that does not match.
    starts: dict[int, str] | None = None

    def staged(self) -> _Chain:
        """A copy whose additions stay apart from this chain's until `commit` (an append may fail)."""
        return _Chain(self.id, self.size, self.where, self.latest, self.length, self.ranges, self.checked, starts=self.starts)

    def extended_by(self, text: str) -> bool:
        """Whether the input `text` (with its brackets) is the latest input with messages appended (or the same)."""
        n, at = len(text) - 2, 1
        if n != self.length and (n < self.length or text[1 + self.length] != ","):
            return False
        for part in self.latest:
            if not text.startswith(part, at) or (at > 1 and text[at - 1] != ","):
                return False
            at += len(part) + 1
        return True

    def commit(self) -> _Chain:
        if self.added:
            self.where.update(self.added)
            self.added = {}
        return self

    def at(self, message: str) -> int | None:
        """Where `message` starts in the conversation's text, if it holds it."""
        at = self.where.get(message)
        return self.added.get(message) if at is None else at

    def positions(self, messages: Sequence[str], least: int = 0) -> list[int | None]:
        """`at` of each message at least `least` characters long (None for a shorter one): dict look-ups in bulk."""
        get, more = self.where.get, self.added.get
        if not self.added:
            return [get(m) if len(m) >= least else None for m in messages]
        return [(at if (at := get(m)) is not None else more(m)) if len(m) >= least else None for m in messages]


class _Result:
    """A tool's result a later message may give back whole, as it is or as a JSON string. Its JSON string form
    is made only once a message holds that form's start (`head`): most results are never given back so."""

    __slots__ = ("output", "span", "start", "head", "_string")

    def __init__(self, output: str, span: str) -> None:
        self.output, self.span, self.start = output, span, output[:_HEAD]
        head = _as_json_string(self.start)  # escaped character by character: the full form's start
        # The same object when nothing in it is escaped (most results): `lent` then searches for it once, not twice.
        self.head = self.start if head == self.start else head
        self._string: str | None | bool = False  # False: not made yet

    def string(self) -> str | None:
        """Its JSON string form without quotes, None when it holds a character DuckDB escapes otherwise."""
        if self._string is False:
            string = _as_json_string(self.output)
            # Each such character is escaped as \u00XX: only a form holding that needs the closer look.
            self._string = None if "\\u00" in string and _ESCAPED_APART.search(self.output) else string
        return self._string  # type: ignore[return-value]


class _Outputs:
    """A run's most recent outputs, which a later call's new messages may hold: a model's reply message by
    message (the input giving it back may leave out a field or two at its end, `finish_reason` say: the
    part they share from the start is borrowed), tools' results whole, as they are or as a JSON string."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, int]] = []  # (message, span id, where it starts in the span's output), the latest last
        self.replies: dict[str, tuple[str, str, int]] = {}  # a message's first _WORTH_BORROWING characters -> the latest such
        self.results: list[_Result] = []  # the latest last
        self.chars = 0  # characters held, a result counted twice (its JSON string form, once made)

    def copy(self) -> _Outputs:
        copy = _Outputs()
        copy.messages, copy.replies, copy.results, copy.chars = list(self.messages), dict(self.replies), list(self.results), self.chars
        return copy

    def add(self, span: str, output: str, model: bool) -> None:
        if model:
            if output[:1] != "[" or output[-1:] != "]":
                return
            for s, e in _split(output[1:-1]) or ():
                if e - s >= _WORTH_BORROWING:
                    reply = (output[1 + s : 1 + e], span, 1 + s)
                    self.messages.append(reply)
                    self.replies[reply[0][:_WORTH_BORROWING]] = reply
                    self.chars += e - s
            if len(self.messages) > _OUTPUTS_PER_RUN:
                for old in self.messages[:-_OUTPUTS_PER_RUN]:
                    key = old[0][:_WORTH_BORROWING]
                    if self.replies.get(key) is old:  # else a later reply starts alike: the one found first
                        del self.replies[key]
                    self.chars -= len(old[0])
                del self.messages[:-_OUTPUTS_PER_RUN]
        else:
            self.results.append(_Result(output, span))
            self.chars += 2 * len(output)
            if len(self.results) > _OUTPUTS_PER_RUN:
                self.chars -= 2 * len(self.results.pop(0).output)

    def lent(self, messages: list[str]) -> list[tuple[int, int, str, int, int, bool]]:
        """Where `messages` (their text joined by commas: `rest`) hold an output: (start in rest, length in
        rest, span, start and length in its output, whether `rest` holds it as a JSON string), in order."""
        cuts = []
        e = -1
        for message in messages:
            s, e = e + 1, e + 1 + len(message)
            if e - s < _WORTH_BORROWING:
                continue
            reply = self.replies.get(message[:_WORTH_BORROWING])  # the model's reply given back
            if reply is not None:
                shared = _shared_prefix(reply[0], message)
                cuts.append((s, shared, reply[1], reply[2], shared, False))
                continue
            for result in reversed(self.results):  # a tool's result inside the message giving it back
                output, head = result.output, result.head
                if len(output) <= e - s:
                    at = message.find(result.start)
                    found = at if at < 0 or message.startswith(output, at) else message.find(output, at + 1)
                    if found >= 0:
                        cuts.append((s + found, len(output), result.span, 0, len(output), False))
                        break
                    # Its JSON string form starts as it does: first found where the search above first found it.
                    found = at if head is result.start else message.find(head)
                else:
                    found = message.find(head)  # every place its JSON string form is starts so
                if found >= 0:
                    string = result.string()
                    found = -1 if string is None else _find(message, string, result.head, found)
                    if found >= 0:
                        cuts.append((s + found, len(string), result.span, 0, len(output), True))
                        break
        return cuts


def _find(text: str, part: str, head: str, at: int | None = None) -> int:
    """`text.find(part)` given `head`, the start of `part` (and `at`, where `head` is first found, if known): a
    miss costs a search for the short head only, a hit a comparison (str.find prepares a long part first)."""
    at = text.find(head) if at is None else at
    if at < 0 or text.startswith(part, at):
        return at
    return text.find(part, at + 1)


def _shared_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share from their start (compared in halves: C speed, not per character)."""
    low, high = 0, min(len(a), len(b))
    if (a.startswith(b) if len(a) >= len(b) else b.startswith(a)):  # one given back whole: no slice copied
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _as_json_string(text: str) -> str:
    """`text` as a JSON string literal without its quotes, escaped as DuckDB's to_json escapes it (the views
    rebuild a borrowed JSON string with to_json)."""
    # orjson escapes exactly as json.dumps(ensure_ascii=False) does, code point by code point
    # (tests/store/test_messages.py), about seven times faster: the writer escapes every tool result a later
    # message gives back as a string. It refuses a lone surrogate (not UTF-8), which json keeps as it is.
    try:
        return orjson.dumps(text)[1:-1].decode()
    except TypeError:
        return _ENCODE_STRING(text)[1:-1]


def _lend(rest: str, cuts: list[tuple[int, int, str, int, int, bool]]) -> tuple[str, list[dict[str, Any]] | None]:
    """The stored form of new messages `rest` with the parts `cuts` left out: input_added and input_borrowed."""
    if not cuts:
        return f"[{rest}]", None
    literal, borrowed, at, size = ["["], [], 0, 1
    for start, length, span, source, source_length, as_string in cuts:
        literal.append(rest[at:start])
        size += start - at
        borrowed.append({"at": size, "span_id": span, "start": source, "length": source_length, "as_string": as_string})
        at = start + length
    literal.append(rest[at:])
    literal.append("]")
    return "".join(literal), borrowed


@dataclass
class _Run:
    chains: list[_Chain]
    stored: dict[str, Form]  # span id -> its form
    outputs: _Outputs


@dataclass
class _Staged:
    """A run's state during one append: its chains copied (a few), its spans' forms added beside the old."""

    chains: list[_Chain]
    committed: dict[str, Form]
    added: dict[str, Form]
    outputs: _Outputs


def _valid(messages: str) -> bool:
    """Whether `[messages]` is a JSON array (so `messages` are whole JSON values joined by commas)."""
    try:
        return isinstance(json.loads(f"[{messages}]"), list)
    except (ValueError, RecursionError):
        return False


def _split(messages: str, values: list[Any] | None = None) -> list[tuple[int, int]] | None:
    """Where each message of `messages` (JSON values joined by commas, nothing else between) starts and
    ends (their parsed values appended to `values`); None when they are not that (whitespace between,
    say: then only a whole prefix is shared)."""
    bounds: list[tuple[int, int]] = []
    at, n = 0, len(messages)
    try:
        while at < n:
            value, end = _scan(messages, at)
            bounds.append((at, end))
            if values is not None:
                values.append(value)
            if end < n and messages[end] != ",":
                return None
            at = end + 1
    except (ValueError, StopIteration, RecursionError):
        return None
    return bounds if at == n + 1 or (not bounds and n == 0) else None


def _split_known(messages: str, chains: Sequence[_Chain]) -> tuple[list[tuple[int, int]], list[str]] | None:
    """`_split(messages)`, the same bounds, without parsing again the messages `chains` hold in the same order;
    with the messages themselves.

    After a message a conversation holds, the next one is most often the one that followed it there (an agent
    that drops old turns sends the rest as they were); that text at this place, followed by a comma or the
    end, is one whole JSON value exactly where `_split` would end it (it was one when its row stored it).
    Anything else is parsed as `_split` parses it. A message found so is the conversation's own string: looking
    it up again (`_Chain.positions`) finds it by identity, without slicing, hashing or comparing its text.
    """
    bounds: list[tuple[int, int]] = []
    pieces: list[str] = []
    at, n = 0, len(messages)
    guess = None
    try:
        while at < n:
            end = at + len(guess) if guess is not None and messages.startswith(guess, at) else -1
            if end < 0 or (end < n and messages[end] != ","):
                _value, end = _scan(messages, at)
                if end < n and messages[end] != ",":
                    return None
                piece = messages[at:end]
            else:
                piece = guess
            bounds.append((at, end))
            pieces.append(piece)
            at = end + 1
            guess = _following(piece, chains, n - at) if at < n else None
    except (ValueError, StopIteration, RecursionError):
        return None
    return (bounds, pieces) if at == n + 1 or (not bounds and n == 0) else None


def _following(piece: str, chains: Sequence[_Chain], left: int) -> str | None:
    """The message that follows `piece` in a conversation holding it, if any; a conversation's index of its
    messages (`_Chain.starts`) is built only when the text left to split is long enough to repay it, then kept."""
    for chain in chains:
        at = chain.at(piece)
        if at is None:
            continue
        index = chain.starts
        if index is None:
            maps = (chain.where, chain.added)
            if left < 8 * sum(len(m) for m in maps):  # parsing the rest costs less than indexing the conversation
                continue
            index = chain.starts = {start: text for m in maps for text, start in m.items()}
        after = index.get(at + len(piece) + 1)
        if after is not None:
            return after
    return None


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ranges of a conversation's text that follow each other across one comma, made one."""
    out: list[tuple[int, int]] = []
    for start, length in ranges:
        if out and out[-1][0] + out[-1][1] + 1 == start:
            out[-1] = (out[-1][0], out[-1][1] + 1 + length)
        else:
            out.append((start, length))
    return out


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

    def encode(self, batches: Sequence[pa.RecordBatch], inputs: Sequence[list[str | None] | None] | None = None,
               outputs: Sequence[list[str | None] | None] | None = None) -> tuple[list[pa.RecordBatch], Callable[[], None]]:
        """`inputs`, per batch: its input values as Python strings, its input column NULL (SpanColumns.to_batch),
        or None: read from the batch. `outputs`, per batch: its output column's values as Python strings
        (SpanColumns.to_batch(outputs=)), or None: read from the batch."""
        staged: dict[tuple, _Staged] = {}
        out = [self._encode(batch, staged, None if inputs is None else inputs[i], None if outputs is None else outputs[i])
               for i, batch in enumerate(batches)]
        return out, lambda: self._commit(staged)

    def _run(self, key: tuple, staged: dict[tuple, _Staged]) -> _Staged:
        run = staged.get(key)
        if run is None:
            known = self._runs.get(key)
            run = staged[key] = _Staged(
                [c.staged() for c in known.chains] if known else [],
                known.stored if known else {},
                {},
                known.outputs.copy() if known else _Outputs(),
            )
        return run

    def _encode(self, batch: pa.RecordBatch, staged: dict[tuple, _Staged], given: list[str | None] | None,
                given_outputs: list[str | None] | None) -> pa.RecordBatch:
        # Model calls' inputs to store, and outputs long enough to be worth borrowing: both in start order,
        # so a call borrows from the outputs that came before it (a run's most recent ones are followed).
        if given is not None:  # the input column is NULL, its values are these: the column is made from them here
            if not any(given):
                return _with_input(batch, given)
            inputs = pa.array([None if text is None else "" for text in given], pa.string())  # validity only
        else:
            inputs = batch.column("input")
        outputs = batch.column("output")
        if inputs.null_count == batch.num_rows:  # content capture off: nothing to look at (3 % of such an ingest)
            return batch
        model = pc.fill_null(pc.is_in(batch.column("operation"), _MODEL_OPERATIONS), False)
        candidates = pc.and_(model, pc.is_valid(inputs))
        if given_outputs is not None:  # as the column holds them: no output is converted back from Arrow
            lenders = pa.array([o is not None and len(o) >= _WORTH_BORROWING for o in given_outputs], pa.bool_())
        else:
            lenders = pc.fill_null(pc.greater_equal(pc.utf8_length(outputs), _WORTH_BORROWING), False)
        rows = pc.indices_nonzero(pc.or_(candidates, lenders)).to_pylist()
        if not rows:
            return batch if given is None else _with_input(batch, given)
        take = pa.array(rows, pa.int64())
        picked = batch.select(["trace_id", "span_id", "run_id", "session_id", "user_id", "start_time"]).take(take)
        starts = picked.column("start_time").cast(pa.int64()).to_pylist()
        columns = {name: picked.column(name).to_pylist() for name in ("trace_id", "span_id", "run_id", "session_id", "user_id")}
        is_call, is_model = candidates.take(take).to_pylist(), model.take(take).to_pylist()
        lends = lenders.take(take).to_pylist()
        # Row by row: a take would first copy every conversation's text (the batch's bulk) only to read it.
        texts = [(inputs[row].as_py() if given is None else given[row]) if call else None for row, call in zip(rows, is_call)]
        if given_outputs is not None:
            output_of = [given_outputs[row] if lend else None for row, lend in zip(rows, lends)]
        else:
            lending = [row for row, lend in zip(rows, lends) if lend]
            lent = iter(outputs.take(pa.array(lending, pa.int64())).to_pylist() if lending else ())  # a few KB each
            output_of = [next(lent) if lend else None for lend in lends]
        chain_of: dict[int, Form] = {}
        for i in sorted(range(len(rows)), key=lambda i: (starts[i] or 0, i)):
            span = columns["span_id"][i]
            key = (columns["trace_id"][i], columns["run_id"][i], columns["session_id"][i], columns["user_id"][i],
                   (starts[i] or 0) // _DAY_NS)
            run = self._run(key, staged)
            text = texts[i]
            if is_call[i] and len(text) >= 3 and text[0] == "[" and text[-1] == "]":  # else stored as it is
                form = run.added.get(span) or run.committed.get(span)
                if form is None:
                    form = run.added[span] = self._continue(run.chains, span, text, run.outputs)
                # else delivered again: stored as it was the first time
                if form[0] is not None:
                    chain_of[rows[i]] = form
            if lends[i]:
                run.outputs.add(span, output_of[i], is_model[i])
        if not chain_of:
            return batch if given is None else _with_input(batch, given)
        n = batch.num_rows
        chain, offset, added, ranges, borrowed = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        for row, (c, o, a, r, b) in chain_of.items():
            # `r`: (start, length) pairs, which Arrow takes as the struct's fields in order.
            chain[row], offset[row], added[row], ranges[row], borrowed[row] = c, o, a, r, b
        if given is None:
            kept = pc.if_else(pc.is_null(pa.array(chain, pa.string())), inputs, pa.nulls(n, pa.string()))
        else:  # only what is stored whole is converted to Arrow: a conversation's history never is
            kept = pa.array([text if c is None else None for text, c in zip(given, chain)], pa.string())
        replaced = {"input": kept, CHAIN: pa.array(chain, pa.string()), OFFSET: pa.array(offset, pa.int64()),
                    ADDED: pa.array(added, pa.string()), RANGES: pa.array(ranges, _RANGE),
                    BORROWED: pa.array(borrowed, _BORROWED)}
        return pa.RecordBatch.from_arrays(
            [replaced.get(name, batch.column(name)) for name in SPAN_SCHEMA.names], schema=SPAN_SCHEMA
        )

    @staticmethod
    def _continue(chains: list[_Chain], span: str, text: str, outputs: _Outputs) -> Form:
        """How a call whose input is `text` (a JSON array) is stored: (chain, offset, added, ranges), or Nones when whole.

        The common case first, and cheap: the input is a conversation's latest one with messages appended
        (compared as text, so only the new messages are parsed). Else, when an agent dropped or summarised
        turns (or two branches grew from one prompt), the input is matched message by message against each
        conversation of the run and stored as ranges of the one it shares most with, plus the messages
        that one does not hold. An input that shares no message starts a conversation of its own.
        """
        best, n = None, len(text) - 2  # n: characters of its messages
        for chain in chains:  # the longest latest input this input extends at a message boundary
            if (best is None or chain.length > best.length) and chain.extended_by(text):
                best = chain
        if best is not None and (best.checked or _valid(",".join(best.latest))):
            best.checked = True
            rest = text[best.length + 2 : -1]
            latest = best.latest + [rest] if rest else best.latest
            if len(latest) > _PARTS:
                latest = [",".join(latest)]
            bounds = _split(rest) if rest else []
            head = best.ranges if best.ranges is not None else [(0, best.size)]
            if bounds is not None:
                form = Conversations._assemble(best, head, [rest[s:e] for s, e in bounds], latest, n, _WORTH_A_RANGE, outputs,
                                               joined=rest)
                if form is not None:
                    return form
            elif _valid(rest):  # messages with whitespace between: kept as they are, after the whole latest input
                start = best.size + 1 if best.size and rest else best.size
                ranges = None if best.ranges is None else _merged(best.ranges + [(start, len(rest))])
                if ranges is None or start + len(rest) <= _SLACK * n:
                    return Conversations._add(best, rest, [], start, latest, n, ranges, outputs)
        messages = text[1:-1]
        split = _split_known(messages, chains)
        bounds, pieces = (None, []) if split is None else split
        if bounds is not None and chains:
            shared, known, most = None, [], -1
            for chain in chains:  # the first that holds the most of it
                positions = chain.positions(pieces)
                held = sum(len(p) for p, at in zip(pieces, positions) if at is not None)
                if held > most:
                    shared, known, most = chain, positions, held
            if shared is not None and most > 0:
                form = Conversations._assemble(shared, [], pieces, [messages], n, 0, outputs, known)
                if form is not None:
                    return form
        where = {} if bounds is None else {p: s for p, (s, _e) in zip(reversed(pieces), reversed(bounds))}
        chains.append(_Chain(span, n, where, [messages], n, None, bounds is not None))
        if len(chains) > _CHAINS_PER_RUN:
            chains.pop(0)
        return _WHOLE

    @staticmethod
    def _assemble(chain: _Chain, head: list[tuple[int, int]], pieces: list[str], latest: list[str], n: int,
                  least: int, outputs: _Outputs, known: list[int | None] | None = None, joined: str | None = None,
                  ) -> Form | None:
        """Store an input as the ranges `head` of `chain`'s text, then `pieces`: each one the chain holds
        (at least `least` characters long) as a range of it, the others as new messages. None when the
        conversation's text would grow past `_SLACK` times the input (the input then starts a new one).
        `latest`: the input's messages in parts (`_Chain.latest`), `n` characters.
        `known`: `chain.positions(pieces, least)` when the caller has it; `joined`: the pieces joined by commas."""
        if known is None:
            known = chain.positions(pieces, least)
        new = [p for p, at in zip(pieces, known) if at is None]
        rest = joined if joined is not None and len(new) == len(pieces) else ",".join(new)
        start = chain.size + 1 if chain.size and rest else chain.size
        ranges, at = list(head), start
        for p, found in zip(pieces, known):
            if found is None:
                found, at = at, at + len(p) + 1
            ranges.append((found, len(p)))
        ranges = _merged(ranges)
        if ranges == [(0, start + len(rest))]:
            return Conversations._add(chain, rest, new, start, latest, n, None, outputs)
        if start + len(rest) > _SLACK * n:
            return None
        return Conversations._add(chain, rest, new, start, latest, n, ranges, outputs)

    @staticmethod
    def _add(chain: _Chain, rest: str, pieces: list[str], start: int, latest: list[str], n: int,
             ranges: list[tuple[int, int]] | None, outputs: _Outputs) -> Form:
        """Append a call's new messages `rest` (`pieces` joined by commas, or [] when not split into messages)
        to `chain` at `start`; its form, with the outputs they give back to the model left out of
        `input_added` and referred to."""
        added, borrowed = _lend(rest, outputs.lent(pieces))
        form = (chain.id, chain.size, added, ranges, borrowed)
        where, new, at, index = chain.where, chain.added, start, chain.starts
        for message in pieces:
            if message not in where and message not in new:  # a message's first place in the text
                new[message] = at
                if index is not None:
                    index[at] = message
            at += len(message) + 1
        chain.size = start + len(rest)
        chain.latest, chain.length, chain.ranges = latest, n, ranges
        return form

    def _commit(self, staged: dict[tuple, _Staged]) -> None:
        for key, change in staged.items():
            run = self._runs.pop(key, None)
            if run is None:
                run = _Run([], change.committed, change.outputs)
            self._chars -= sum(c.size for c in run.chains) + run.outputs.chars
            run.chains = [c.commit() for c in change.chains]
            run.outputs = change.outputs
            run.stored.update(change.added)
            while len(run.stored) > _SPANS_PER_RUN:
                run.stored.pop(next(iter(run.stored)))
            self._runs[key] = run  # most recently written last
            self._chars += sum(c.size for c in run.chains) + run.outputs.chars
        while self._runs and (self._chars > self._max_chars or len(self._runs) > self._max_runs):
            _key, run = self._runs.popitem(last=False)
            self._chars -= sum(c.size for c in run.chains) + run.outputs.chars


def _with_input(batch: pa.RecordBatch, inputs: list[str | None]) -> pa.RecordBatch:
    column = pa.array(inputs, pa.string())
    return pa.RecordBatch.from_arrays([column if name == "input" else batch.column(name) for name in SPAN_SCHEMA.names],
                                      schema=SPAN_SCHEMA)


def chain_table(table: pa.Table) -> pa.Table:
    """Rows written before conversations were stored once (schema version 2 and older: every input whole),
    stored once: for `agentotel compact`, which rewrites such files. Only for rows no other row refers to."""
    if table.num_rows == 0:
        return table
    batches, _commit = Conversations(max_chars=2**62, max_runs=2**62).encode(table.combine_chunks().to_batches())
    return pa.Table.from_batches(batches, schema=SPAN_SCHEMA)


def borrow_outputs(table: pa.Table, rows: set[tuple[str, str]]) -> pa.Table:
    """Continuations written before a message could borrow an earlier output (schema versions 3 and 4), with
    what the table's earlier outputs of their run hold left out of `input_added` (`input_borrowed`), as the
    writer now stores them: for `agentotel compact`, which rewrites such files. `rows`: (trace_id, span_id)
    of the rows to store so. Only a row's own new messages change: its conversation's text, offsets and
    ranges stay as they are, so every row that refers to them still does."""
    chains = table.column(CHAIN)
    if table.num_rows == 0 or not rows or chains.null_count == table.num_rows:
        return table
    names = ["trace_id", "span_id", "run_id", "session_id", "user_id", "operation", "output", CHAIN, ADDED, BORROWED]
    columns = {name: table.column(name).to_pylist() for name in names}
    starts = table.column("start_time").cast(pa.int64()).to_pylist()
    added, borrowed = list(columns[ADDED]), list(columns[BORROWED])
    outputs: dict[tuple, _Outputs] = {}
    changed = False
    for i in sorted(range(table.num_rows), key=lambda i: (starts[i] or 0, i)):  # as the writer meets them
        trace, span = columns["trace_id"][i], columns["span_id"][i]
        run = outputs.setdefault((trace, columns["run_id"][i], columns["session_id"][i], columns["user_id"][i],
                                  (starts[i] or 0) // _DAY_NS), _Outputs())
        own = added[i]
        if columns[CHAIN][i] is not None and borrowed[i] is None and own and len(own) > 2 and (trace, span) in rows:
            rest = own[1:-1]
            bounds = _split(rest)
            if bounds:
                stored, lent = _lend(rest, run.lent([rest[s:e] for s, e in bounds]))
                if lent:
                    added[i], borrowed[i], changed = stored, lent, True
        output = columns["output"][i]
        if output is not None and len(output) >= _WORTH_BORROWING:
            run.add(span, output, columns["operation"][i] in dialects.MODEL_OPERATIONS)
    if not changed:
        return table
    table = table.set_column(table.schema.get_field_index(ADDED), ADDED, pa.array(added, pa.string()))
    return table.set_column(table.schema.get_field_index(BORROWED), BORROWED, pa.array(borrowed, _BORROWED))


def _rebuilt(text: str | None, ranges: Sequence[Mapping[str, int]] | None) -> str | None:
    """A continuation's input from its conversation's text up to and with its own messages (`text`)."""
    if text is None:
        return None
    if ranges is None:
        return f"[{text}]"
    parts = []
    for r in ranges:
        start, length = r["start"], r["length"]
        if start < 0 or length < 0 or start + length > len(text):
            return None
        parts.append(text[start : start + length])
    return "[" + ",".join(parts) + "]"


def returned(added: str | None, borrowed: Sequence[Mapping[str, Any]] | None,
             output_of: Callable[[str], str | None]) -> str | None:
    """A continuation's own messages: `added` with the outputs it borrowed put back (None if one is missing)."""
    if added is None or not borrowed:
        return added
    parts, at = [], 0
    for b in borrowed:
        output = output_of(b["span_id"])
        start, length, where = b["start"], b["length"], b["at"]
        if output is None or start < 0 or length < 0 or start + length > len(output) or not at <= where <= len(added):
            return None
        part = output[start : start + length]
        parts += (added[at:where], _as_json_string(part) if b.get("as_string") else part)
        at = where
    parts.append(added[at:])
    return "".join(parts)


def _joined(before: str, own: str) -> str:
    return f"{before},{own}" if before and own else before or own


def full_inputs(table: pa.Table) -> list[str | None]:
    """Each row's whole input, rebuilt from the conversations in `table` (None when its base is missing).

    The Python twin of query/sql/_whole_input.sql, for code that holds rows in memory (compaction, tests).
    """
    inputs = table.column("input").to_pylist()
    chains = table.column(CHAIN).to_pylist()
    offsets = table.column(OFFSET).to_pylist()
    added = table.column(ADDED).to_pylist()
    ranges = table.column(RANGES).to_pylist()
    traces = table.column("trace_id").to_pylist()
    spans = table.column("span_id").to_pylist()
    borrowed = table.column(BORROWED).to_pylist()
    if any(b is not None for b in borrowed):
        outputs = dict(zip(zip(traces, spans), table.column("output").to_pylist()))
        added = [returned(a, b, lambda span, t=t: outputs.get((t, span))) for a, b, t in zip(added, borrowed, traces)]
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
        before = ",".join(v for _k, v in pieces)
        if len(before) != offsets[i] or added[i] is None:
            out.append(None)
            continue
        out.append(_rebuilt(_joined(before, added[i][1:-1]), ranges[i]))
    return out


def whole(table: pa.Table) -> pa.Table:
    """`table` with every input rebuilt whole and the conversation columns NULL (as written before)."""
    if table.num_rows == 0 or not pc.any(pc.is_valid(table.column(CHAIN))).as_py():
        return table
    table = table.set_column(table.schema.get_field_index("input"), "input", pa.array(full_inputs(table), pa.string()))
    for name, arrow in CONVERSATION:
        table = table.set_column(table.schema.get_field_index(name), name, pa.nulls(table.num_rows, arrow))
    return table


class _Text:
    """A conversation's text as a reader rebuilds it, piece by piece, each message parsed once."""

    def __init__(self, first: str) -> None:
        self.text = ""
        self.starts: list[int] = []  # where each parsed message starts in `text`
        self.ends: list[int] = []
        self.values: list[Any] = []
        self.aligned = True  # every piece split into messages (else a ranged input is parsed whole)
        self.add(first)

    def add(self, piece: str) -> None:
        if not piece:
            return
        at = len(self.text) + 1 if self.text else 0
        self.text = _joined(self.text, piece)
        values: list[Any] = []
        bounds = _split(piece, values)
        if bounds is None:
            self.aligned = False
            self.values.extend(json.loads(f"[{piece}]"))
            return
        self.starts.extend(at + s for s, _e in bounds)
        self.ends.extend(at + e for _s, e in bounds)
        self.values.extend(values)

    def messages_with(self, own: str, ranges: Sequence[Mapping[str, int]], text: str) -> list[Any]:
        """The parsed messages of a ranged input whose row adds `own` (its ranges may point into it)."""
        kept = (self.text, len(self.starts), len(self.values), self.aligned)
        self.add(own)
        try:
            return self.messages(ranges, text)
        finally:
            self.text, self.aligned = kept[0], kept[3]
            del self.starts[kept[1]:], self.ends[kept[1]:], self.values[kept[2]:]

    def messages(self, ranges: Sequence[Mapping[str, int]] | None, text: str) -> list[Any]:
        """The parsed messages of an input: all of the text (`ranges` None) or its ranges of it."""
        if ranges is None:
            return list(self.values)
        if not self.aligned:
            return json.loads(text)
        out: list[Any] = []
        for r in ranges:
            first = bisect.bisect_left(self.starts, r["start"])
            last = bisect.bisect_right(self.ends, r["start"] + r["length"])
            if first >= len(self.starts) or self.starts[first] != r["start"] or last == 0 or \
                    self.ends[last - 1] != r["start"] + r["length"]:
                return json.loads(text)
            out.extend(self.values[first:last])
        return out


def whole_rows(rows: Sequence[MutableMapping[str, Any]]) -> bool:
    """Set `input` whole in each row dict stored as a continuation, from the other rows (one trace's, as a
    trajectory reads them), and `input_messages` to its parsed messages. False, having set nothing
    reliable, when a row's base is not among `rows` or anything does not add up: the caller then asks the
    store (query/sql/_whole_input.sql), which has every copy of every row and gives NULL where an input is unknown.

    Linear in what it parses: each conversation's messages are parsed once, as their row adds them, and
    shared by the inputs that hold them (so a long run's trajectory does not parse its history again at
    every step).
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
    outputs = {(row["trace_id"], row["span_id"]): row.get("output") for row in rows}
    try:
        for key, members in conversations.items():
            start = starts.get(key)
            if start is None or start.get("input") is None or len(start["input"]) < 2:
                return False
            conversation = _Text(start["input"][1:-1])
            members.sort(key=lambda r: (r[OFFSET], r["span_id"]))
            seen: set[tuple[int, str]] = set()
            pending: list[str] = []  # pieces at the current offset: part of the larger ones' bases
            at = None
            for row in members:
                if row[OFFSET] != at:
                    for piece in pending:
                        conversation.add(piece)
                    pending, at = [], row[OFFSET]
                added = returned(row.get(ADDED), row.get(BORROWED), lambda span, t=key[0]: outputs.get((t, span)))
                if added is None or len(conversation.text) != row[OFFSET]:
                    return False
                own = added[1:-1]
                ranges = row.get(RANGES)
                if ranges is None:
                    row["input"] = f"[{_joined(conversation.text, own)}]"
                    row["input_messages"] = conversation.messages(None, "") + (json.loads(added) if own else [])
                else:
                    text = _joined(conversation.text, own)
                    row["input"] = _rebuilt(text, ranges)
                    if row["input"] is None:
                        return False
                    row["input_messages"] = conversation.messages_with(own, ranges, row["input"])
                if own and (row[OFFSET], row["span_id"]) not in seen:
                    seen.add((row[OFFSET], row["span_id"]))
                    pending.append(own)
    except (ValueError, TypeError, RecursionError):
        return False
    return True
