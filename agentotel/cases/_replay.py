"""Replay: run an agent against a case's recorded world, by kind of step.

    with agentotel.replay("cases/orders.yaml", tools="live", models="frozen") as replayer:
        my_agent(task)                      # @tool bodies run; model requests equal to the recorded ones are answered
    print(replayer.frontier, replayer.violations)

Before the case's cut every recorded tool result and model answer is served (the world the failure
happened in). At and after the cut, `tools` and `models` (default: the case's `replay:`) say what runs:
`live` runs it for real, `frozen` serves the recording.

Tools: a call is answered by the fixture with the same tool name and canonical arguments, occurrence by
occurrence; frozen, a used-up key's last result is served again (a tool is a function of its arguments)
and a call the recording has no result for is a violation (`ReplayMiss`). Policy `strict` makes a call
the fixtures cannot answer, while recorded calls before the cut are still unserved, a violation (the
agent left the recorded path before the failure step); `fifo` serves each tool's recordings in order
whatever the arguments and reports the argument drift instead. Retrievals (`@agentotel.retrieval`) are
served like tool calls, keyed by data source and query text; they return `[{id, score, content}]`.

Model calls (OpenAI chat completions and responses, Anthropic messages, through `httpx2`, the HTTP
client of both SDKs) are answered when the request equals a recorded one — the same messages, compared
on canonical content (roles, text, tool calls, and the tool results the agent sends) — occurrence by
occurrence (`strict`), or in order (`fifo`), as real HTTP responses the SDK parses itself. With frozen
models a request that equals none stops the run (`ReplayFrontier`): it `departed` from the recording (a
fixed tool returned something else: what it sends is in the run, for the gates to judge) or reached the
`frontier` (the recording has no more answers). A request that leaves the recorded path before the cut
(`strict`) gets an HTTP 400 naming the replay.

Every span started under a replay carries `agentotel.replay.case`; agentotel's exporters leave such
spans out of the store, and the replay records them in its own (`<store>/replays` by default). A step
served from the recording carries `agentotel.replay.frozen`; a replayed model answer costs 0, its
recorded cost kept in `agentotel.replay.recorded_cost.usd`.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import sys
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentotel import semconv
from agentotel._context import canonical_arguments, current_run
from agentotel._internal import internal_errors
from agentotel.cases import _active
from agentotel.cases._model import (
    anthropic_message,
    anthropic_stream,
    neutral_from_anthropic,
    neutral_from_openai,
    neutral_from_openai_responses,
    openai_completion,
    openai_response,
    openai_response_stream,
    openai_stream,
    request_hash,
    scrub,
)
from agentotel.cases._steps import call_key, retrieval_call
from agentotel.cases.case import Case, ModelFixture, ToolFixture

__all__ = ["replay", "replay_directory", "Replayer", "ReplayEvent", "ReplayMismatch", "ReplayMiss", "ReplayFrontier", "ReplayedToolError"]

POLICIES = ("strict", "fifo")
MODES = ("live", "frozen")


class ReplayMismatch(Exception):
    """A call the replay policy forbids: the agent left the case's recorded path before the failure step."""


class ReplayMiss(ReplayMismatch):
    """A call a frozen replay has no recording for."""


class ReplayFrontier(BaseException):
    """A frozen replay reached a model request the case has no answer for: the replayed run stops there.

    A BaseException, like KeyboardInterrupt, so the agent's own `except Exception` cannot swallow it and
    carry on as if the model had answered; `run_case` expects it. A run it ends is not failed (`runs`).
    """

    stops_a_replay = True


class ReplayedToolError(Exception):
    """A recorded tool failure whose exception type is not a built-in one, raised again on replay."""


@dataclass
class ReplayEvent:
    """One call seen during a replay: what was asked, and how it was answered."""

    kind: str  # "tool", "retrieval" or "model"
    name: str
    outcome: str  # "served", "repeated", "live", "violation", "frontier"
    detail: str = ""
    fixture_step: int | None = None


@dataclass
class Replayer:
    """Serves a case's fixtures; `events` and `violations` say what happened, `run_ids` which runs it served.

    `tools` and `models` say what happens at and after the case's cut, per kind of step: `live` runs it
    for real, `frozen` serves the recording. Before the cut both kinds are served from the recording.
    (`mode`, the old single switch, sets both.)
    """

    case: Case
    policy: str = "strict"
    mode: str | None = None
    tools: str | None = None
    models: str | None = None
    events: list[ReplayEvent] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    sink: Any = field(default=None, repr=False)  # the span processor writing the replay's own store
    directory: Path | None = None  # that store

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"policy {self.policy!r}: use one of {', '.join(POLICIES)}")
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r}: use one of {', '.join(MODES)}")
        self.tools = self.tools or self.mode or self.case.replay_tools
        self.models = self.models or self.mode or self.case.replay_models
        for kind, value in (("tools", self.tools), ("models", self.models)):
            if value not in MODES:
                raise ValueError(f"{kind} {value!r}: use one of {', '.join(MODES)}")
        if self.mode is None:
            self.mode = "frozen" if (self.tools, self.models) == ("frozen", "frozen") else "live"
        self._lock = threading.Lock()
        self._tools_by_key: dict[str, deque[ToolFixture]] = defaultdict(deque)
        self._tools_by_name: dict[str, deque[ToolFixture]] = defaultdict(deque)
        self._last_by_key: dict[str, ToolFixture] = {}
        at = self.case.at_step
        self.at = at if isinstance(at, int) else None

        def wanted(step: int, kind: str) -> bool:  # before the cut always; from it on when that kind is frozen
            return self.at is None or step < self.at or kind == "frozen"

        # A retrieval is served as a call of its own kind: its data source and query are its name and arguments.
        as_calls = [
            ToolFixture(r.step, *retrieval_call(r.data_source, r.query), output=r.documents, error=r.error)
            for r in self.case.retrievals
        ]
        for fixture in sorted([*self.case.tools, *as_calls], key=lambda f: f.step):
            if wanted(fixture.step, self.tools):
                self._tools_by_key[call_key(fixture.name, fixture.arguments)].append(fixture)
                self._tools_by_name[fixture.name].append(fixture)
        self._models = [m for m in self.case.models if wanted(m.step, self.models)]
        self._served_models: set[int] = set()
        self._model_seen: dict[str, int] = defaultdict(int)

    # ---- what happened ---------------------------------------------------------------------------

    @property
    def violations(self) -> list[ReplayEvent]:
        return [e for e in self.events if e.outcome == "violation"]

    @property
    def frontier(self) -> ReplayEvent | None:
        """Where a replay with frozen models stopped, if it did: `frontier` (the recording ran out) or
        `departed` (the agent's request differs from the recorded one: what it sent is in the run)."""
        return next((e for e in self.events if e.outcome in ("frontier", "departed")), None)

    @property
    def live_calls(self) -> list[ReplayEvent]:
        return [e for e in self.events if e.outcome == "live"]

    @property
    def run_id(self) -> str | None:
        """The run the replay served first (the replayed run)."""
        return self.run_ids[0] if self.run_ids else None

    def _note(self, event: ReplayEvent) -> None:
        self.events.append(event)
        run = current_run()
        if run is not None and run.run_id not in self.run_ids:
            self.run_ids.append(run.run_id)

    # Strict judges each kind on its own: a tool call is off the recorded path while recorded tool calls
    # are unserved, whatever the model calls did (they may go through a client replay does not answer).
    def _unserved_tools(self) -> int:
        return sum(len(q) for q in self._tools_by_name.values())

    def _unserved_models(self, before_cut: bool = False) -> list[ModelFixture]:
        return [m for i, m in enumerate(self._models)
                if i not in self._served_models and (not before_cut or self.at is None or m.step < self.at)]

    # ---- tools -----------------------------------------------------------------------------------

    def serve_retrieval(self, data_source: str, query: Any) -> tuple[bool, Any]:
        """(True, recorded documents) for a retrieval the case answers; as `serve_tool` otherwise."""
        return self.serve_tool(*retrieval_call(data_source, query), kind="retrieval")

    def serve_tool(self, name: str, arguments: Any, kind: str = "tool") -> tuple[bool, Any]:
        """(True, recorded result) for a call the case answers; raises for a forbidden call; else (False, None)."""
        # Keyed as the record keys them: JSON-safe and redacted, so a secret argument still matches.
        arguments = scrub(arguments)
        key = call_key(name, arguments)
        frozen = self.tools == "frozen"
        with self._lock:
            fixture, outcome, detail = self._pick_tool(name, key, arguments)
            if fixture is None:
                forbidden = frozen or (self.policy == "strict" and self._unserved_tools() > 0)
                outcome = "violation" if forbidden else "live"
                if forbidden and not detail:
                    detail = (
                        f"no recorded result for {key}"
                        if frozen
                        else f"{key} is not the recorded call (recorded calls are still unserved)"
                    )
            self._note(ReplayEvent(kind, name, outcome, detail, fixture.step if fixture else None))
        if outcome == "violation":
            error = ReplayMiss if frozen else ReplayMismatch
            raise error(f"agentotel replay of {self.case.name}: {detail}")
        if fixture is None:
            return False, None
        _mark_served()
        if fixture.error is not None:
            raise _recorded_error(fixture.error)
        return True, fixture.output

    def _pick_tool(self, name: str, key: str, arguments: Any) -> tuple[ToolFixture | None, str, str]:
        queue = self._tools_by_key.get(key)
        if self.policy == "fifo" and self._tools_by_name.get(name):
            fixture = self._tools_by_name[name].popleft()
            fixture_key = call_key(fixture.name, fixture.arguments)
            if fixture in self._tools_by_key[fixture_key]:
                self._tools_by_key[fixture_key].remove(fixture)
            self._last_by_key[fixture_key] = fixture
            drift = "" if fixture_key == key else f"arguments drifted: recorded {canonical_arguments(fixture.arguments)}, got {canonical_arguments(arguments)}"
            return fixture, "served", drift
        if queue:
            fixture = queue.popleft()
            if fixture in self._tools_by_name[name]:
                self._tools_by_name[name].remove(fixture)
            self._last_by_key[key] = fixture
            return fixture, "served", ""
        # Frozen tools are functions of their arguments: a used-up recording answers again. Live tools
        # past their recordings run for real.
        if key in self._last_by_key and self.tools == "frozen":
            return self._last_by_key[key], "repeated", ""
        return None, "", ""

    # ---- model calls -----------------------------------------------------------------------------

    def answer_model(self, neutral: list[dict[str, Any]]) -> tuple[ModelFixture | None, str, str]:
        """The recorded answer for a model request (in neutral form), and how it was chosen.

        A request is answered when it equals a recorded one (the same messages, compared on canonical
        content: the tool results it sends too), occurrence by occurrence. One that equals none is a
        `violation` while recorded requests before the cut are unserved (the agent left the recorded
        path before the failure step); past them it goes `live`, or, with frozen models, stops the run:
        `departed` (recorded answers remain: the agent now sends something else, say a fixed tool's
        result) or `frontier` (the recording has no more answers).
        """
        digest = request_hash(neutral)
        with self._lock:
            self._model_seen[digest] += 1
            fixture, detail = None, ""
            if self.policy == "fifo":
                fixture = next(iter(self._unserved_models()), None)
                if fixture is not None and fixture.request_hash != digest:
                    detail = f"request drifted from the recording at step {fixture.step}"
            else:
                occurrence = self._model_seen[digest]
                fixture = next((m for m in self._models if m.request_hash == digest and m.occurrence == occurrence), None)
            if fixture is not None:
                self._served_models.add(self._models.index(fixture))
                outcome = "served"
            elif self.policy == "strict" and self._unserved_models(before_cut=True):
                outcome = "violation"
                detail = f"no recorded answer for model request {digest} (recorded calls are still unserved)"
            elif self.models == "frozen":
                waiting = self._unserved_models()
                if waiting:
                    outcome = "departed"
                    detail = (f"the request departs from the recording at step {waiting[0].step} "
                              f"(it sends {_sent(neutral)}); frozen models have no answer for it, the run stops here")
                else:
                    outcome = "frontier"
                    detail = f"every recorded answer is served; the run stops at this request ({digest})"
            else:
                outcome = "live"
            self._note(ReplayEvent("model", digest, outcome, detail, fixture.step if fixture else None))
        return fixture, outcome, detail


def _sent(neutral: list[dict[str, Any]]) -> str:
    """What a request adds at its end (the tool results after the last assistant turn), in short."""
    tail: list[str] = []
    for message in reversed(neutral):
        if message.get("role") == "assistant":
            break
        tail[:0] = message.get("results") or ([message["text"]] if message.get("text") else [])
    text = "; ".join(tail) or "a different conversation"
    return text if len(text) <= 200 else text[:199] + "…"


def _mark_served() -> None:
    """Mark the current step's span (a tool's, or the model call's) as answered from the recording."""
    with internal_errors("replay.mark"):
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute(semconv.AGENTOTEL_REPLAY_FROZEN, True)


def _recorded_error(text: str) -> Exception:
    """The recorded tool failure raised again: as its own exception class when that class is a built-in
    or already imported (a case never imports a module by name), else as `ReplayedToolError`."""
    kind, sep, message = str(text).partition(": ")
    if not sep:
        kind, message = str(text), ""
    module_name, _, class_name = kind.strip().rpartition(".")
    owner = sys.modules.get(module_name) if module_name else builtins
    exc_type = getattr(owner, class_name, None) if owner is not None else None
    if isinstance(exc_type, type) and issubclass(exc_type, Exception):
        try:
            return exc_type(message) if message else exc_type()
        except Exception:  # noqa: BLE001 - a class that needs other arguments: keep the text
            pass
    return ReplayedToolError(text)


# ---- HTTP: answering model requests inside the SDK's own client --------------------------------------

_patch_lock = threading.Lock()
_patched = False


# Model endpoints replay answers, by the end of the request path: how to read the request, and how to
# write a recorded answer as the provider's response (whole, and as an event stream).
def _openai_error(message: str) -> dict[str, Any]:
    return {"error": {"type": "invalid_request_error", "code": "agentotel_replay_miss", "message": message}}


def _anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


_ENDPOINTS: dict[str, tuple[Callable[..., Any], ...]] = {
    "/chat/completions": (neutral_from_openai, openai_completion, openai_stream, _openai_error),
    "/responses": (neutral_from_openai_responses, openai_response, openai_response_stream, _openai_error),
    "/v1/messages": (neutral_from_anthropic, anthropic_message, anthropic_stream, _anthropic_error),
}


def _answer_http(request: Any) -> Any:
    """An httpx2 response for a model request the active replay answers, else None (send it for real)."""
    replayer = _active.current()
    if not isinstance(replayer, Replayer) or request.method != "POST":
        return None
    endpoint = next((e for suffix, e in _ENDPOINTS.items() if request.url.path.endswith(suffix)), None)
    if endpoint is None:
        return None
    read, whole, streamed, error = endpoint
    import httpx2

    try:
        body = json.loads(request.content or b"{}")
    except ValueError:
        return None
    fixture, outcome, detail = replayer.answer_model(read(body))
    if fixture is not None:
        _mark_served()
    if outcome == "violation":  # a 400: SDKs do not retry it, and its message names the replay
        return httpx2.Response(400, json=error(f"agentotel replay of {replayer.case.name}: {detail}"), request=request)
    if outcome in ("frontier", "departed"):
        raise ReplayFrontier(f"agentotel replay frontier of {replayer.case.name}: {detail}")
    if fixture is None:
        return None
    data = fixture.__dict__
    if body.get("stream"):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=streamed(data), request=request)
    return httpx2.Response(200, json=whole(data), request=request)


def _install_http_patch() -> None:
    """Route httpx2 sends through the active replayer (once; a contextvar read when none is active)."""
    global _patched
    with _patch_lock:
        if _patched:
            return
        try:
            import httpx2
        except ImportError:  # no SDK that could call a model: nothing to answer
            return
        sync_send, async_send = httpx2.Client.send, httpx2.AsyncClient.send

        def send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            response = _answer_http(request) if _active.current() is not None else None
            return response if response is not None else sync_send(self, request, *args, **kwargs)

        async def asend(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            response = _answer_http(request) if _active.current() is not None else None
            return response if response is not None else await async_send(self, request, *args, **kwargs)

        httpx2.Client.send = send  # type: ignore[method-assign]
        httpx2.AsyncClient.send = asend  # type: ignore[method-assign]
        _patched = True


# ---- recording replays apart from production data -----------------------------------------------------


class _ReplayRecorder(SpanProcessor):
    """Stamps `agentotel.replay.case` on every span started while a replay is active, and hands the span,
    once ended, to that replay's own store. agentotel's production exporters skip stamped spans (see
    `agentotel._setup`), so a replay never shows in the store's runs, totals or cost."""

    def __init__(self) -> None:
        self._owners: dict[int, Replayer] = {}  # by span id: on_end gets a new object for the span

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        replayer = _active.current()
        if isinstance(replayer, Replayer):
            with internal_errors("replay.stamp"):
                span.set_attribute(semconv.AGENTOTEL_REPLAY_CASE, replayer.case.ref)
                if replayer.sink is not None:
                    self._owners[span.context.span_id] = replayer

    def on_end(self, span: Any) -> None:
        replayer = self._owners.pop(span.context.span_id, None) if span.context is not None else None
        if replayer is not None and replayer.sink is not None:
            with internal_errors("replay.record"):
                replayer.sink.on_end(_as_replayed(span))


def _as_replayed(span: Any) -> Any:
    """The span as a replay store keeps it: an answer served from the recording cost nothing now, so its
    cost is 0 and the recorded call's cost is kept apart (`agentotel.replay.recorded_cost.usd`)."""
    attributes = span.attributes or {}
    if not attributes.get(semconv.AGENTOTEL_REPLAY_FROZEN) or semconv.AGENTOTEL_COST_USD not in attributes:
        return span
    changed = dict(attributes)
    changed[semconv.AGENTOTEL_REPLAY_RECORDED_COST_USD] = changed[semconv.AGENTOTEL_COST_USD]
    changed[semconv.AGENTOTEL_COST_USD] = 0.0
    return ReadableSpan(
        name=span.name, context=span.context, parent=span.parent, resource=span.resource, attributes=changed,
        events=span.events, links=span.links, kind=span.kind, status=span.status, start_time=span.start_time,
        end_time=span.end_time, instrumentation_scope=span.instrumentation_scope,
    )


_recorders: dict[int, _ReplayRecorder] = {}


def _install_recorder() -> None:
    from agentotel._tracing import tracer_provider

    provider = tracer_provider()
    add = getattr(provider, "add_span_processor", None)
    with _patch_lock:
        if add is None or id(provider) in _recorders:
            return
        # Attributes set in on_start reach every exporter whatever the processor order; inert outside a replay.
        recorder = _recorders[id(provider)] = _ReplayRecorder()
        add(recorder)


def replay_directory(store: str | Path | None = None) -> Path:
    """Where replays of cases are recorded: `<store>/replays` (the store: given, else the configured one)."""
    from agentotel import _config

    base = Path(store) if store is not None else Path(_config.current().directory)
    return base / "replays"


@contextlib.contextmanager
def replay(
    case: Case | str | Path,
    *,
    policy: str | None = None,
    mode: str | None = None,
    tools: str | None = None,
    models: str | None = None,
    directory: str | Path | None = None,
) -> Iterator[Replayer]:
    """Serve a case's recorded tool results and model answers to the code run inside the block.

    `tools` / `models` (default: the case's `replay:`) say what runs live at and after the cut; `mode`
    sets both. The spans recorded inside go to `directory` (default `<store>/replays`), not the store.
    """
    if not isinstance(case, Case):
        case = Case.load(case)
    replayer = Replayer(case, policy or case.policy, mode, tools, models)
    # Absolute: the path a failure names must work from wherever it is read.
    replayer.directory = (Path(directory) if directory is not None else replay_directory()).absolute()
    replayer.sink = _Sink(replayer.directory)
    with internal_errors("replay.install"):
        _install_http_patch()
        _install_recorder()
    token = _active.activate(replayer)
    try:
        yield replayer
    finally:
        _active.deactivate(token)
        with internal_errors("replay.close"):
            replayer.sink.close()


class _Sink:
    """A replay's own store, opened on its first span (a replay that records nothing writes nothing)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._processor: BatchSpanProcessor | None = None
        self._lock = threading.Lock()

    def on_end(self, span: Any) -> None:
        from agentotel import _setup

        if _setup._state is None:  # agentotel is not recording (never instrumented, or shut down): neither is a replay
            return
        with self._lock:
            if self._processor is None:
                from agentotel.store import ParquetSpanExporter

                self._processor = BatchSpanProcessor(ParquetSpanExporter(self.directory))
        self._processor.on_end(span)

    def close(self) -> None:
        """Write what was recorded and fold the log into Parquet: the replay is readable once this returns."""
        with self._lock:
            processor, self._processor = self._processor, None
        if processor is not None:
            processor.force_flush()
            processor.shutdown()
