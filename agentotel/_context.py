"""The run an agent step belongs to, and the tool calls a model asked for inside it.

This is the seam between the halves of the instrumentation: `runs.run()` sets the current run,
the provider adapters record the tool calls each model response asked for, and `@tool` claims the
matching call so its span carries the model's `gen_ai.tool.call.id`.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable


@dataclass(frozen=True)
class PendingToolCall:
    """A tool call a model asked for and no `@tool` execution has claimed yet."""

    id: str
    name: str
    arguments: Any  # parsed JSON arguments (dict), or the raw string when it was not valid JSON


# One encoder for every call (json.dumps with options builds a new one each time): providers canonicalise
# every call of a history they are sent back.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_arguments(arguments: Any) -> str:
    """Arguments as canonical JSON (sorted keys, no spaces) so equal arguments compare equal."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses: the text itself
            return arguments
    try:
        return _CANONICAL.encode(arguments)
    except (TypeError, ValueError, RecursionError):
        return repr(arguments)


def stable_call_id(name: Any, canonical: str, count: int) -> str:
    """An id made from an id-less tool call itself (Gemini's): its tool, canonical arguments and how many equal
    calls came before it, counting it (the same calls get the same ids in every process, whoever reads them:
    the google-genai provider at record time, the trajectory for other instrumentations' spans)."""
    return "fc-" + hashlib.blake2b(f"{name}\0{canonical}\0{count}".encode(), digest_size=6).hexdigest()


_ASKED_KEPT = 1024  # a run's asked calls remembered: a history holds the recent ones; a long run stays bounded


@dataclass
class RunContext:
    """What every span started inside a run is stamped with, plus the run's pending tool calls."""

    run_id: str
    name: str
    trigger: str
    user: str | None = None
    session: str | None = None
    parent: "RunContext | None" = None
    attributes: dict[str, Any] = field(default_factory=dict)  # attribution stamped on every span of the run
    # Tool definitions sent to a model during the run: name -> JSON schema (the environment records them).
    tool_definitions: dict[str, Any] = field(default_factory=dict)
    tool_descriptions: dict[str, str] = field(default_factory=dict)  # name -> the description the model was given
    instructions: str | None = None  # the system prompt of the run's first model call that had one
    failed: bool | None = None  # set when the run ends: whether an exception ended it
    _pending: deque[PendingToolCall] = field(default_factory=deque, repr=False)
    # Every call the run's model responses asked for, claimed or not (the latest _ASKED_KEPT), in order: a
    # history sent back without call ids (Gemini's) is given the ids these calls were recorded with.
    _asked: deque[PendingToolCall] = field(default_factory=lambda: deque(maxlen=_ASKED_KEPT), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Streams whose reader left its loop early, by call: each one's `end`, called when the run ends.
    _left_streams: dict[int, Any] = field(default_factory=dict, repr=False)

    def stream_left(self, call: Any, end: Any) -> None:
        """A stream of this run whose reader left its loop early: `end` finishes it if the run ends first."""
        with self._lock:
            self._left_streams[id(call)] = end

    def end(self, failed: bool) -> None:
        """The run ended: streams it left unread end now, as errors only when the run failed."""
        self.failed = failed
        with self._lock:
            ends, self._left_streams = list(self._left_streams.values()), {}
        for end in ends:
            end(abandoned=True)

    def record_tool_calls(self, calls: Iterable[PendingToolCall]) -> None:
        """Remember tool calls a model response asked for, in the order it asked."""
        if not isinstance(calls, list):
            calls = list(calls)  # read twice
        with self._lock:
            self._pending.extend(calls)
            self._asked.extend(calls)

    def claim_tool_call(self, name: str, arguments: Any) -> str | None:
        """The id of the oldest pending call with this tool name and equal arguments, removed; else None."""
        wanted = canonical_arguments(arguments)
        with self._lock:
            for call in self._pending:
                if call.name == name and canonical_arguments(call.arguments) == wanted:
                    self._pending.remove(call)
                    return call.id
        return None

    def release_tool_call(self, call_id: str) -> bool:
        """Remove the pending call with this id (a framework named it); True when it was pending."""
        with self._lock:
            for call in self._pending:
                if call.id == call_id:
                    self._pending.remove(call)
                    return True
        return False

    def record_tool_definitions(self, definitions: dict[str, Any], descriptions: dict[str, str] | None = None) -> None:
        """Remember tool definitions (name -> schema, and name -> description) a model request carried."""
        with self._lock:
            self.tool_definitions.update(definitions)
            if descriptions:
                self.tool_descriptions.update(descriptions)

    def pending_tool_calls(self) -> list[PendingToolCall]:
        with self._lock:
            return list(self._pending)

    def asked_tool_calls(self) -> list[PendingToolCall]:
        """Every tool call the run's model responses asked for (the latest _ASKED_KEPT), oldest first."""
        with self._lock:
            return list(self._asked)


_current_run: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar("agentotel_run", default=None)


# `current_run()`: the innermost run active in this context (thread or task), or None. The variable's own
# method, not a function calling it: every model call asks, and a Python call on that path costs more
# than the lookup (see providers/_core.ModelCall).
current_run: Callable[[], RunContext | None] = _current_run.get


def set_current_run(run: RunContext | None) -> contextvars.Token:
    return _current_run.set(run)


def reset_current_run(token: contextvars.Token) -> None:
    _current_run.reset(token)


def record_tool_calls(calls: Iterable[PendingToolCall]) -> None:
    """Record a model response's tool calls in the current run; no-op outside a run."""
    calls = list(calls)
    run = current_run()
    if run is not None and calls:
        run.record_tool_calls(calls)


def record_tool_definitions(definitions: dict[str, Any]) -> None:
    """Record tool definitions (name -> schema) sent to a model in the current run; no-op outside a run."""
    run = current_run()
    if run is not None and definitions:
        run.record_tool_definitions(definitions)


def has_pending_tool_calls(run: RunContext | None) -> bool:
    """Whether `run` or an enclosing run holds unclaimed tool calls (a cheap check before claiming)."""
    while run is not None:
        if run._pending:
            return True
        run = run.parent
    return False


def claim_tool_call(name: str, arguments: Any) -> str | None:
    """The tool-call id a model gave for this tool execution, if it asked for it in the current run."""
    run = current_run()
    while run is not None:
        call_id = run.claim_tool_call(name, arguments)
        if call_id is not None:
            return call_id
        run = run.parent
    return None


def release_tool_call(call_id: str) -> None:
    """A framework executes the tool call with this id: it is no longer pending (no `@tool` may claim it)."""
    run = current_run()
    while run is not None:
        if run.release_tool_call(call_id):
            return
        run = run.parent
