"""A fault-injection corpus for `diff` and `check`: good/faulty run pairs of five small agents, recorded for real.

Every run is an ordinary agent loop using the real `openai` or `anthropic` SDK against a scripted model
served on 127.0.0.1, with real `@agentotel.tool` / `@agentotel.retrieval` functions, recorded by
`agentotel.instrument()` into a temporary store. The scripted model reads the conversation it is sent
(system prompt, tools offered, messages, tool results) and decides its next step as a model would, so
a change to what it is given changes what it does.

A pair is one task run twice by the same agent: once healthy, once with one fault injected, drawn from a
published taxonomy (MAST: Cemri et al. 2025, "Why Do Multi-Agent LLM Systems Fail?"; ToolScan: Kokane et
al. 2024; TRAIL: Deshpande et al. 2025; AgentErrorTaxonomy: Zhu et al. 2025, "Where LLM Agents Fail").
Each pair's store also holds three earlier healthy runs of the same agent (other tasks, other ids), as a
store in production would, so detectors that learn from history have some.

Ground truth comes from the injection, never from a detector: the harness, tool or scripted model that
injects the fault marks, at the moment it takes effect, which step of the run it is (every model call,
tool call and retrieval the agent makes is counted as it starts, which is the trajectory's numbering).
The faulty step is where the cause shows: a changed system prompt, tool description or history at the
first model call given it; a model's wrong decision at the model call that made it; a tool's changed or
huge output at that tool call; a harness that re-runs a step at the re-run; a harness that stops or sends
an invalid conversation at the step where the run went another way.

Healthy runs vary as production runs do: ids, names, dates and amounts differ; optional fields are null
in some runs; some runs hit a 429 or a tool timeout and retry successfully; some need fewer steps.

    pairs = build(Path("/tmp/corpus"), quick=False)   # list[RecordedPair]
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import agentotel
from agentotel._json import parse as parse_json

# ---------------------------------------------------------------------------------------------------------
# The current run: what the tools, the harness and the scripted model consult
# ---------------------------------------------------------------------------------------------------------


class Ledger:
    """Every step the agent starts, in order (the trajectory's numbering), and where the fault took effect."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str | None]] = []
        self.fault_at: int | None = None

    def add(self, kind: str, name: str | None = None) -> int:
        self.entries.append((kind, name))
        return len(self.entries)

    def mark(self, index: int | None = None) -> None:
        """The fault shows at this step (default: the step just started); the first mark wins."""
        if self.fault_at is None:
            self.fault_at = index if index is not None else len(self.entries)


@dataclass
class Run:
    """One run being recorded: the agent's variant values, the injected fault (faulty run only), noise."""

    agent: str
    v: dict[str, Any]
    condition: str | None  # a circumstance of the pair, in both runs (e.g. the carrier API is down)
    fault: str | None  # the injected fault, faulty run only
    rate_limit_first: bool = False  # the first model request gets a 429 (the agent retries)
    timeout_tool: str | None = None  # this tool's first call times out (the agent's model retries it)
    ledger: Ledger = field(default_factory=Ledger)
    calls: dict[str, int] = field(default_factory=dict)  # tool name -> calls so far
    model_requests: int = 0

    def counted(self, tool: str) -> int:
        self.calls[tool] = self.calls.get(tool, 0) + 1
        return self.calls[tool]


_RUN: Run | None = None


def current() -> Run:
    assert _RUN is not None, "no run is being recorded"
    return _RUN


# ---------------------------------------------------------------------------------------------------------
# The scripted model: OpenAI chat.completions and Anthropic messages on 127.0.0.1
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Call:
    id: str
    name: str
    args: Any  # parsed arguments, None when not valid JSON
    raw: str


@dataclass
class Msg:
    role: str  # user, assistant, tool
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str | None = None
    tool: str | None = None  # for a tool result: the tool it answers
    result: Any = None  # parsed tool result (or its text)
    error: bool = False


@dataclass
class Conv:
    """A model request as the scripted model reads it, whichever API it came through."""

    api: str
    model: str
    system: str
    msgs: list[Msg]
    tools: dict[str, str]  # name -> description
    params: dict[str, Any]

    def results(self, tool: str) -> list[Msg]:
        return [m for m in self.msgs if m.role == "tool" and m.tool == tool]

    def ok(self, tool: str) -> Any:
        """The latest successful result of a tool, or None."""
        good = [m.result for m in self.results(tool) if not m.error]
        return good[-1] if good else None

    def requested(self, tool: str) -> list[Call]:
        return [c for m in self.msgs if m.role == "assistant" for c in m.calls if c.name == tool]

    @property
    def users(self) -> list[str]:
        return [m.text for m in self.msgs if m.role == "user" and m.text]

    @property
    def last(self) -> Msg | None:
        return self.msgs[-1] if self.msgs else None

    def since_last_user(self) -> list[Msg]:
        out: list[Msg] = []
        for m in reversed(self.msgs):
            if m.role == "user" and m.text:
                break
            out.insert(0, m)
        return out


@dataclass
class Reply:
    text: str | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)  # (name, arguments dict or raw string)
    finish: str | None = None  # "length" for a cut-off answer


class APIError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _openai_conv(body: dict[str, Any]) -> Conv:
    msgs: list[Msg] = []
    system = ""
    names: dict[str, str] = {}
    pending: list[str] = []
    for m in body.get("messages") or []:
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])
        if role in ("system", "developer"):
            system += text
            continue
        if pending and role != "tool":
            raise APIError(400, "invalid_request_error",
                           "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                           f"each 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}")
        if role == "assistant":
            calls = []
            for c in m.get("tool_calls") or []:
                raw = c["function"]["arguments"]
                try:
                    args = json.loads(raw)
                except ValueError:
                    args = None
                calls.append(Call(c["id"], c["function"]["name"], args, raw))
                names[c["id"]] = c["function"]["name"]
            pending = [c.id for c in calls]
            msgs.append(Msg("assistant", text or "", calls))
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in names:
                raise APIError(400, "invalid_request_error",
                               "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
            pending = [p for p in pending if p != call_id]
            result = parse_json(text)
            msgs.append(Msg("tool", text, call_id=call_id, tool=names[call_id], result=result,
                            error=isinstance(result, str) and result.startswith("Error")))
        else:
            msgs.append(Msg("user", text))
    tools = {t["function"]["name"]: t["function"].get("description") or "" for t in body.get("tools") or []}
    params = {k: body.get(k) for k in ("temperature", "max_tokens", "tool_choice") if body.get(k) is not None}
    return Conv("openai", body.get("model", ""), system, msgs, tools, params)


def _anthropic_conv(body: dict[str, Any]) -> Conv:
    msgs: list[Msg] = []
    system = body.get("system") or ""
    if isinstance(system, list):
        system = " ".join(b.get("text", "") for b in system)
    names: dict[str, str] = {}
    for position, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if m.get("role") == "assistant":
            calls = [Call(b["id"], b["name"], b.get("input"), json.dumps(b.get("input"))) for b in blocks if b["type"] == "tool_use"]
            names.update({c.id: c.name for c in calls})
            msgs.append(Msg("assistant", " ".join(b["text"] for b in blocks if b["type"] == "text"), calls))
            following = (body["messages"][position + 1:position + 2] or [{}])[0].get("content")
            answered = {b.get("tool_use_id") for b in following or [] if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [c.id for c in calls if c.id not in answered]
            if missing:
                raise APIError(400, "invalid_request_error",
                               f"messages.{position + 1}: `tool_use` ids were found without `tool_result` blocks immediately "
                               f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                               "block in the next message.")
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                raw = b.get("content")
                text = raw if isinstance(raw, str) else " ".join(x.get("text", "") for x in raw or [])
                result = parse_json(text)
                msgs.append(Msg("tool", text, call_id=b["tool_use_id"], tool=names.get(b["tool_use_id"]), result=result,
                                error=bool(b.get("is_error")) or (isinstance(result, str) and result.startswith("Error"))))
            elif b["type"] == "text":
                msgs.append(Msg("user", b["text"]))
    tools = {t["name"]: t.get("description") or "" for t in body.get("tools") or []}
    params = {k: body.get(k) for k in ("temperature", "max_tokens", "tool_choice") if body.get(k) is not None}
    return Conv("anthropic", body.get("model", ""), system, msgs, tools, params)


def _tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _openai_body(reply: Reply, conv: Conv, prompt_tokens: int) -> dict[str, Any]:
    calls = []
    for name, args in reply.calls:
        raw = args if isinstance(args, str) else json.dumps(args)
        calls.append({"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function", "function": {"name": name, "arguments": raw}})
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if calls:
        message["tool_calls"] = calls
    finish = reply.finish or ("tool_calls" if calls else "stop")
    out_tokens = max(1, len(json.dumps(message)) // 4 - 8)
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:20]}", "object": "chat.completion", "created": 1_780_000_000,
            "model": conv.model, "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": out_tokens, "total_tokens": prompt_tokens + out_tokens}}


def _anthropic_body(reply: Reply, conv: Conv, prompt_tokens: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for name, args in reply.calls:
        content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:22]}", "name": name,
                        "input": args if isinstance(args, dict) else {}})
    stop = "max_tokens" if reply.finish == "length" else ("tool_use" if reply.calls else "end_turn")
    out_tokens = max(1, len(json.dumps(content)) // 4 - 8)
    return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": conv.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": out_tokens}}


Policy = Callable[[Conv, Run], Reply]
_POLICIES: dict[str, Policy] = {}


@contextlib.contextmanager
def serve_model() -> Iterator[str]:
    """The scripted model of every agent on 127.0.0.1 (both APIs); yields the base URL (no /v1)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            anthropic_api = self.path.rstrip("/").endswith("/messages")
            try:
                run = current()
                run.model_requests += 1
                if run.rate_limit_first and run.model_requests == 1:
                    raise APIError(429, "rate_limit_error", "Rate limit reached for requests. Please try again in 1s.")
                conv = _anthropic_conv(body) if anthropic_api else _openai_conv(body)
                reply = _POLICIES[run.agent](conv, run)
                make = _anthropic_body if anthropic_api else _openai_body
                payload, status = make(reply, conv, _tokens(body)), 200
            except APIError as exc:
                status = exc.status
                payload = ({"type": "error", "error": {"type": exc.kind, "message": exc.message}} if anthropic_api
                           else {"error": {"message": exc.message, "type": exc.kind, "code": None}})
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="diagnosis-model", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------------------------------------
# The agent side: one chat adapter over both SDKs, and a tool-calling loop with the harness faults in it
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Turn:
    text: str | None
    calls: list[tuple[str, str, str]]  # (id, name, raw arguments)
    finish: str | None
    native: dict[str, Any]  # the assistant message to append, in the SDK's own form


class Chat:
    """The agent's model client: the real SDK, no retries of its own (the agent retries a 429 itself)."""

    def __init__(self, sdk: str, base_url: str) -> None:
        import anthropic
        import openai

        self.sdk = sdk
        if sdk == "openai":
            self.client: Any = openai.OpenAI(base_url=base_url + "/v1", api_key="sk-bench-not-a-secret", max_retries=0)
            self.rate_limited: tuple[type[Exception], ...] = (openai.RateLimitError,)
        else:
            self.client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-bench-not-a-secret", max_retries=0)
            self.rate_limited = (anthropic.RateLimitError,)

    def tool_defs(self, tools: dict[str, Any], descriptions: dict[str, str] | None = None) -> list[dict[str, Any]]:
        from agentotel.tools import registered_tools

        known = registered_tools()
        out = []
        for name in tools:
            info = known[name]
            description = (descriptions or {}).get(name, info.description or "")
            if self.sdk == "openai":
                out.append({"type": "function", "function": {"name": name, "description": description, "parameters": info.schema}})
            else:
                out.append({"name": name, "description": description, "input_schema": info.schema})
        return out

    def create(self, model: str, system: str | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               **params: Any) -> Turn:
        if self.sdk == "openai":
            sent = ([{"role": "system", "content": system}] if system else []) + messages
            extra = {"tools": tools} if tools else {}
            response = self.client.chat.completions.create(model=model, messages=sent, **extra, **params)
            message = response.choices[0].message
            calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
            return Turn(message.content, calls, response.choices[0].finish_reason, message.model_dump(exclude_none=True))
        extra = {"tools": tools} if tools else {}
        if system:
            extra["system"] = system
        params.setdefault("max_tokens", 1024)
        response = self.client.messages.create(model=model, messages=messages, **extra, **params)
        texts = [b.text for b in response.content if b.type == "text"]
        calls = [(b.id, b.name, json.dumps(b.input)) for b in response.content if b.type == "tool_use"]
        native = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]}
        finish = "length" if response.stop_reason == "max_tokens" else response.stop_reason
        return Turn(" ".join(texts) if texts else None, calls, finish, native)

    def user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def results(self, answers: list[tuple[str, str]]) -> list[dict[str, Any]]:
        if self.sdk == "openai":
            return [{"role": "tool", "tool_call_id": i, "content": c} for i, c in answers]
        return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": c} for i, c in answers]}] if answers else []


def ask(chat: Chat, model: str, system: str | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
        **params: Any) -> Turn:
    """One model call as the agent makes it: a 429 is retried once (a new step), anything else raises."""
    run = current()
    for attempt in range(3):
        run.ledger.add("llm")
        try:
            return chat.create(model, system, messages, tools, **params)
        except chat.rate_limited:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def use_tool(tools: dict[str, Callable[..., Any]], name: str, raw: str) -> str:
    """Run a tool the model asked for, as an agent does: unknown tools, bad JSON and exceptions go back as text."""
    fn = tools.get(name)
    if fn is None:
        return f"Error: unknown tool {name!r}; available tools: {', '.join(tools)}"
    try:
        args = json.loads(raw)
    except ValueError as exc:
        return f"Error: the arguments are not valid JSON ({exc})"
    current().ledger.add("tool", name)
    try:
        return json.dumps(fn(**args))
    except Exception as exc:  # noqa: BLE001 - the model is told, as agent frameworks do
        return f"Error: {type(exc).__name__}: {exc}"


def use_retrieval(fn: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
    current().ledger.add("retrieval", name)
    return fn(*args, **kwargs)


@dataclass
class Loop:
    """A tool-calling loop over one or more user turns; `fault` switches on one harness bug."""

    chat: Chat
    model: str
    system: str | None
    tools: dict[str, Callable[..., Any]]
    descriptions: dict[str, str] = field(default_factory=dict)
    max_turns: int = 8
    params: dict[str, Any] = field(default_factory=dict)
    system_for: Callable[[int, int], str | None] | None = None  # (user turn, model call of the run) -> system
    before_call: Callable[[list[dict[str, Any]], int], list[dict[str, Any]] | None] | None = None  # history rewrite
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls_made: int = 0

    def converse(self, turns: list[str], fault: str | None = None) -> str:
        run = current()
        answer = ""
        definitions = self.chat.tool_defs(self.tools, self.descriptions)
        for turn_number, text in enumerate(turns, start=1):
            if fault and fault.startswith("reset_history@") and turn_number == int(fault.split("@")[1]):
                self.messages = []  # the harness starts a fresh conversation for this turn
                reset_pending = True
            else:
                reset_pending = False
            self.messages.append(self.chat.user(text))
            answered_once = False
            for _ in range(self.max_turns):
                system = self.system_for(turn_number, self.calls_made + 1) if self.system_for else self.system
                sent = self.messages
                if self.before_call is not None:
                    rewritten = self.before_call(self.messages, self.calls_made + 1)
                    if rewritten is not None:
                        sent = rewritten
                turn = ask(self.chat, self.model, system, sent, definitions, **self.params)
                self.calls_made += 1
                if reset_pending:
                    run.ledger.mark(self._last_llm())
                    reset_pending = False
                if turn.calls and turn.text and fault == "stop_on_text":
                    run.ledger.mark(self._last_llm())  # the harness took the preamble for the answer
                    return turn.text
                if not turn.calls:
                    answer = turn.text or ""
                    if fault == "keep_going" and not answered_once:
                        answered_once = True
                        self.messages.append(turn.native)
                        self.messages.append(self.chat.user("Continue."))  # the loop's "keep working" nudge
                        run.ledger.mark(len(run.ledger.entries) + 1)  # the next model call should not happen
                        continue
                    break
                self.messages.append(turn.native)
                answers = []
                calls = turn.calls[:1] if fault == "first_call_only" else turn.calls
                for call_id, name, raw in calls:
                    content = use_tool(self.tools, name, raw)
                    if fault and fault.startswith("rerun:") and name == fault.split(":")[1] and not content.startswith("Error"):
                        content = use_tool(self.tools, name, raw)  # a retry wrapper that also retries successes
                        run.ledger.mark()
                    answers.append((call_id, content))
                if fault == "first_call_only" and len(turn.calls) > 1:
                    run.ledger.mark(len(run.ledger.entries) + 1)  # the next request lacks an answer
                self.messages.extend(self.chat.results(answers))
            else:
                if fault == "max_turns":
                    run.ledger.mark(len(run.ledger.entries))
                return "I could not finish in time."
        return answer

    def _last_llm(self) -> int:
        entries = current().ledger.entries
        return max(i for i, (kind, _) in enumerate(entries, start=1) if kind == "llm")


def _mark_next_llm() -> None:
    run = current()
    run.ledger.mark(len(run.ledger.entries) + 1)


# ---------------------------------------------------------------------------------------------------------
# Agent 1: order support (openai; one pair through anthropic)
# ---------------------------------------------------------------------------------------------------------

SUPPORT_SYSTEM = ("You are the support agent of Nordwind Shop. Use the tools to answer questions about orders. "
                  "Always give the tracking number and the expected delivery date. Never issue refunds yourself: "
                  "hand refund requests to a colleague.")
SUPPORT_SYSTEM_EDITED = "You are the support agent of Nordwind Shop. Use the tools to answer questions about orders. Be brief."
ESCALATION_SYSTEM = "You are the escalation desk of Nordwind Shop. Summarise the case for a human colleague in one line."

_NAMES = ["Mara Jensen", "Tomás Ruiz", "Aiko Tanaka", "Lena Fischer", "Omar Haddad", "Priya Nair", "Jonas Berg", "Chloé Martin"]
_CITIES = ["Leipzig", "Hamburg", "Lyon", "Utrecht", "Graz", "Aarhus", "Brno", "Turin"]
_CARRIERS = {"DHL": "JD01", "UPS": "1Z", "GLS": "GL", "DPD": "0152"}


def _date(rng: random.Random, month: int = 6) -> str:
    return f"2026-{month:02d}-{rng.randint(1, 28):02d}"


@agentotel.retrieval(data_source="help-center")
def search_help(query: str, k: int = 2) -> list[dict[str, Any]]:
    """Help-center articles relevant to a question."""
    return current().v["articles"][:k]


@agentotel.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status, carrier and tracking number."""
    run = current()
    n = run.counted("lookup_order")
    if run.timeout_tool == "lookup_order" and n == 1:
        raise TimeoutError("orders API did not answer within 5 s")
    v = run.v
    if order_id != v["oid"]:
        raise LookupError(f"no order {order_id!r}")
    if run.fault == "orders_api_v2":
        run.ledger.mark()
        return {"order": {"id": order_id, "state": v["status"], "items": v["items"]},
                "shipment": {"carrier_name": v["carrier"], "tracking_number": v["tracking"]}}
    return {"order_id": order_id, "status": v["status"], "carrier": v["carrier"] if v["status"] == "shipped" else None,
            "tracking": v["tracking"] if v["status"] == "shipped" else None, "items": v["items"],
            "delivered": v["delivered"], "gift_note": v["gift_note"]}


@agentotel.tool
def track_shipment(carrier: str, tracking: str) -> dict[str, Any]:
    """Where a parcel is and when it should arrive."""
    run = current()
    n = run.counted("track_shipment")
    if run.condition == "carrier_down":
        raise ConnectionError(f"{carrier} tracking API returned 503 Service Unavailable")
    if run.timeout_tool == "track_shipment" and n == 1:
        raise TimeoutError("carrier API did not answer within 5 s")
    v = run.v
    return {"tracking": tracking, "eta": v["eta"], "last_scan": v["last_scan"],
            "events": [{"at": v["shipped_on"], "what": "picked up"}, {"at": v["scan_on"], "what": f"arrived {v['last_scan']}"}]}


@agentotel.tool
def refund_order(order_id: str, reason: str) -> dict[str, Any]:
    """Refund an order to the original payment method."""
    return {"refund_id": f"R-{current().v['oid'][2:]}9", "order_id": order_id, "amount_eur": current().v["total"], "status": "issued"}


SUPPORT_TOOLS = {"lookup_order": lookup_order, "track_shipment": track_shipment, "refund_order": refund_order}


def _support_variant(rng: random.Random, kind: str, history: bool) -> dict[str, Any]:
    carrier = rng.choice(list(_CARRIERS))
    v = {
        "kind": kind, "name": rng.choice(_NAMES), "oid": f"A-{rng.randint(1000, 9999)}", "carrier": carrier,
        "tracking": _CARRIERS[carrier] + str(rng.randint(10**8, 10**9 - 1)), "eta": _date(rng), "last_scan": rng.choice(_CITIES),
        "shipped_on": _date(rng, 5), "scan_on": _date(rng, 5), "items": rng.randint(1, 4),
        "status": "processing" if history and rng.random() < 0.25 else "shipped",
        "delivered": None, "gift_note": rng.choice([None, None, "Happy birthday!", "Congratulations"]),
        "total": round(rng.uniform(15, 240), 2),
        "articles": [{"id": f"kb-{rng.randint(10, 99)}", "score": round(rng.uniform(0.72, 0.95), 2),
                      "content": "Orders ship within 2 business days; tracking is emailed."},
                     {"id": f"kb-{rng.randint(100, 199)}", "score": round(rng.uniform(0.6, 0.8), 2),
                      "content": "Returns are accepted within 30 days of delivery, unworn and with tags."}],
    }
    if kind == "help":
        v["question"] = rng.choice(["Can I return swimwear after 30 days?", "Do you ship to Iceland?",
                                    "Can I change the size of an item after ordering?"])
        v["articles"] = [{"id": f"kb-{rng.randint(200, 299)}", "score": round(rng.uniform(0.05, 0.2), 2),
                          "content": "Gift cards cannot be exchanged for cash."},
                         {"id": f"kb-{rng.randint(300, 399)}", "score": round(rng.uniform(0.03, 0.15), 2),
                          "content": "Our stores open at 9:00 on weekdays."}] if not history else v["articles"]
    return v


def _support_task(v: dict[str, Any]) -> list[str]:
    if v["kind"] == "refund":
        return [f"Hi, {v['name']} here. Order {v['oid']} arrived damaged. Can I get my money back?"]
    if v["kind"] == "help":
        return [v["question"]]
    turns = [f"Hi, this is {v['name']}. Where is my order {v['oid']}, and when will it arrive?"]
    if v["kind"] == "followup":
        turns.append("Thanks. Was my gift note included?")
    return turns


def _order_id(texts: list[str]) -> str | None:
    for text in texts:
        found = re.search(r"\bA-\d{4}\b", text)
        if found:
            return found.group(0)
    return None


def support_policy(conv: Conv, run: Run) -> Reply:
    v, fault = run.v, run.fault
    if "escalation desk" in conv.system:
        return Reply(f"Case: customer asks about order {_order_id(conv.users) or 'unknown'}; needs a human.")
    if v["kind"] == "help":
        if fault == "answer_low_score":
            run.ledger.mark()
            return Reply("Yes — swimwear can be returned within 60 days as long as the hygiene seal is intact.")
        if "Returns are accepted" in conv.system:
            return Reply("Returns are accepted within 30 days of delivery, unworn and with tags.")
        return Reply("I couldn't find a help-center article that answers this, so I've passed your question to a colleague.")
    oid = _order_id(conv.users)
    if conv.users and "gift note" in conv.users[-1]:
        if oid is None:
            return Reply("Which order do you mean? Please give me the order number.")
        order = conv.ok("lookup_order")
        if order is None:
            return Reply(None, [("lookup_order", {"order_id": oid})])
        note = order.get("gift_note")
        return Reply(f"Yes, the note \"{note}\" was included." if note else "No gift note was recorded for this order.")
    if not conv.users:
        track = conv.ok("track_shipment")
        return Reply(f"Shipment {track['tracking']}: last scan {track['last_scan']}." if track else "Noted.")
    if oid is None:
        return Reply("Could you give me your order number?")
    lookups = conv.results("lookup_order")
    order = conv.ok("lookup_order")
    if order is None:
        if lookups and "unexpected keyword" in lookups[-1].text:
            return Reply(None, [("lookup_order", {"order_id": oid})])
        if fault == "arg_name" and not lookups:
            run.ledger.mark()
            return Reply(None, [("lookup_order", {"orderId": oid})])
        return Reply(None, [("lookup_order", {"order_id": oid})])
    if fault == "repeat_lookup" and run.ledger.fault_at is None:
        run.ledger.mark()
        return Reply(None, [("lookup_order", {"order_id": oid})])
    if v["kind"] == "refund":
        if fault == "forbidden_refund" and not conv.results("refund_order"):
            run.ledger.mark()
            return Reply(None, [("refund_order", {"order_id": oid, "reason": "arrived damaged"})])
        if conv.ok("refund_order"):
            return Reply(f"I've refunded order {oid}: {conv.ok('refund_order')['amount_eur']} EUR to your original payment method.")
        return Reply(f"I'm sorry order {oid} arrived damaged. I've passed it to a colleague who handles refunds; "
                     "you'll hear from us within a day.")
    if "order_id" not in order:  # an answer in a shape the model does not recognise
        return Reply(f"Your order {oid} is being processed. I could not find tracking details yet; please check back later.")
    if order["status"] != "shipped":
        return Reply(f"Order {oid} is still being prepared and has not shipped yet, so there is no tracking number yet.")
    tracks = conv.results("track_shipment")
    track = conv.ok("track_shipment")
    if track is None:
        if tracks and tracks[-1].error:
            if "503" in tracks[-1].text:
                if fault == "ignore_tool_error":
                    run.ledger.mark()
                    return Reply(f"Good news: order {oid} is on its way with {order['carrier']} and will be with you shortly.")
                return Reply(f"Order {oid} has shipped with {order['carrier']} (tracking {order['tracking']}), but the carrier's "
                             "tracking service is not answering right now, so I can't give a delivery date yet.")
            if len(tracks) < 2:
                return Reply(None, [("track_shipment", {"carrier": order["carrier"], "tracking": order["tracking"]})])
        return Reply(None, [("track_shipment", {"carrier": order["carrier"], "tracking": order["tracking"]})])
    if fault == "hallucinate_tracking":
        run.ledger.mark()
        return Reply(f"Order {oid} shipped with {order['carrier']} (tracking {order['tracking'][:4]}{int(order['tracking'][4:]) + 7351}); "
                     f"expected delivery {track['eta']}.")
    if "tracking number" not in conv.system:
        return Reply(f"Your order should arrive on {track['eta']}.")
    return Reply(f"Order {oid} shipped with {order['carrier']} (tracking {order['tracking']}); expected delivery {track['eta']}, "
                 f"last scan in {track['last_scan']}.")


def support_agent(chat: Chat, run: Run) -> str:
    v, fault = run.v, run.fault
    if v["kind"] == "help":
        articles = use_retrieval(search_help, "search_help", v["question"])
        system = "Answer customer questions from these help-center articles:\n" + "\n".join(
            f"[{a['id']}] (score {a['score']}) {a['content']}" for a in articles)
        return Loop(chat, "gpt-4o-mini", system, {}).converse(_support_task(v))
    loop = Loop(chat, "gpt-4o-mini", SUPPORT_SYSTEM, SUPPORT_TOOLS)
    if fault == "system_prompt_edited":
        loop.system = SUPPORT_SYSTEM_EDITED
        _mark_next_llm()
    if fault == "escalation_prompt_mid_run":
        def system_for(turn: int, call: int) -> str:
            if call >= 2:
                current().ledger.mark(len(current().ledger.entries) + 1)
                return ESCALATION_SYSTEM
            return SUPPORT_SYSTEM
        loop.system_for = system_for
    if fault == "window_trim":
        def trim(messages: list[dict[str, Any]], call: int) -> list[dict[str, Any]] | None:
            if len(messages) <= 4:
                return None
            current().ledger.mark(len(current().ledger.entries) + 1)
            return messages[-4:]  # "keep the last four messages": the customer's question goes
        loop.before_call = trim
    harness_fault = fault if fault in ("keep_going", "rerun:lookup_order") else None
    if fault == "history_dropped@2":
        turns = _support_task(v)
        loop.converse(turns[:1])
        loop.messages = []  # the harness builds each turn's request from the new message only
        _mark_next_llm()
        return loop.converse(turns[1:])
    return loop.converse(_support_task(v), harness_fault)


# ---------------------------------------------------------------------------------------------------------
# Agent 2: coding (openai)
# ---------------------------------------------------------------------------------------------------------

CODING_SYSTEM = ("You are a coding agent working in the repository {repo}. Fix the failing test the user describes: "
                 "read the relevant file, apply a minimal patch, run the tests, then report the files you changed "
                 "and the test result.")
REVIEWER_SYSTEM = "You are a code reviewer for the repository {repo}. Read the code and comment on it; do not modify files."
SUMMARY_SYSTEM = ("Write the pull-request description for the change below: list every file changed and the test "
                  "result, in two lines.")
SUMMARY_SYSTEM_BROKEN = "Write the pull-request description."


@agentotel.tool
def read_file(path: str) -> dict[str, Any]:
    """The content of a file of the repository."""
    run = current()
    n = run.counted("read_file")
    if run.timeout_tool == "read_file" and n == 1:
        raise TimeoutError("filesystem sandbox did not answer within 5 s")
    v = run.v
    if path != v["path"]:
        raise FileNotFoundError(path)
    if run.fault == "huge_file":
        run.ledger.mark()
        bundle = "".join(f"var _{i:05x}=function(a,b){{return a+b*{i}}};" for i in range(9000))
        return {"path": path, "lines": 1, "content": bundle, "encoding": "utf-8"}
    return {"path": path, "lines": v["lines"], "content": v["source"], "encoding": v["encoding"]}


@agentotel.tool
def apply_patch(path: str, patch: str) -> dict[str, Any]:
    """Apply a unified diff to a file."""
    run = current()
    n = run.counted("apply_patch")
    if run.condition == "stale_patch" and n == 1:
        raise ValueError(f"patch does not apply to {path}: hunk #1 FAILED at {run.v['line']} (context mismatch)")
    return {"path": path, "hunks": 1, "applied": True}


@agentotel.tool
def run_tests(target: str) -> Any:
    """Run the test suite (or one test file) and report the results."""
    run = current()
    v = run.v
    if run.fault == "pytest_text_output":
        run.ledger.mark()
        return f"==== {v['passed']} passed, {v['failed']} failed in {v['secs']}s ===="
    patched = bool(run.calls.get("apply_patch")) and not (run.condition == "stale_patch" and run.calls.get("apply_patch") == 1)
    failed = 0 if patched else 1
    return {"target": target, "passed": v["passed"] + (1 - failed), "failed": failed, "duration_s": v["secs"],
            "warnings": v["warnings"]}


CODING_TOOLS = {"read_file": read_file, "apply_patch": apply_patch, "run_tests": run_tests}

_MODULES = ["pricing", "invoice", "slugify", "dates", "cart", "tokens", "retry", "csv_export"]


def _coding_variant(rng: random.Random, kind: str, history: bool) -> dict[str, Any]:
    module = rng.choice(_MODULES)
    line = rng.randint(8, 90)
    return {"kind": kind, "repo": rng.choice(["acme/shop", "acme/billing", "nordwind/core"]), "module": module,
            "path": f"src/{module}.py", "test": f"tests/test_{module}.py", "line": line,
            "fn": rng.choice(["total", "parse", "render", "normalise", "split"]),
            "source": f"def compute(x):\n    return x * {rng.randint(2, 9)}  # line {line}\n", "lines": rng.randint(40, 300),
            "encoding": "utf-8", "passed": rng.randint(12, 80), "failed": 1, "secs": round(rng.uniform(0.8, 9.5), 2),
            "warnings": rng.choice([None, None, ["DeprecationWarning: datetime.utcnow()"]])}


def coding_policy(conv: Conv, run: Run) -> Reply:
    v, fault = run.v, run.fault
    if conv.system.startswith("Write the pull-request description"):
        tests = conv.users[-1] if conv.users else ""
        if "list every file" not in conv.system:
            return Reply("Fixes the failing test.")
        return Reply(f"Changed: {v['path']}.\n{tests}")
    reviewer = "do not modify" in conv.system
    reads = conv.results("read_file")
    source = conv.ok("read_file")
    if source is None:
        if reads and reads[-1].error and "unexpected" not in reads[-1].text and len(reads) >= 2:
            return Reply("I could not read the file.")
        return Reply(None, [("read_file", {"path": v["path"]})])
    if isinstance(source, dict) and len(source.get("content", "")) > 20000:
        return Reply("The file is a generated bundle; I cannot patch it by hand.")
    if reviewer:
        return Reply(f"Review of {v['path']}: the multiplication in compute() looks suspicious around line {v['line']}; "
                     "consider a test for negative inputs.")
    patches = conv.results("apply_patch")
    patched = [p for p in patches if not p.error]
    tests = conv.results("run_tests")
    if not patched:
        if tests:  # went on without a patch
            return Reply(f"Fixed {v['path']}; the tests pass.")
        if patches and patches[-1].error:
            if fault == "ignore_patch_error" and not tests:
                run.ledger.mark()
                return Reply(None, [("run_tests", {"target": v["test"]})])
            if len(reads) < 2:
                return Reply("The patch did not apply; re-reading the file.", [("read_file", {"path": v["path"]})])
        patch = f"--- a/{v['path']}\n+++ b/{v['path']}\n@@ -{v['line']},1 +{v['line']},1 @@\n-    return x * 2\n+    return x * 3\n"
        if fault == "invalid_json_args" and not patches and not any("not valid JSON" in m.text for m in conv.msgs):
            run.ledger.mark()
            raw = json.dumps({"path": v["path"], "patch": patch})[:-12]  # cut off: not JSON
            return Reply(None, [("apply_patch", raw)])
        return Reply(None, [("apply_patch", {"path": v["path"], "patch": patch})])
    if not tests:
        return Reply(None, [("run_tests", {"target": v["test"]})])
    result = tests[-1].result
    if isinstance(result, str):
        return Reply(f"Patched {v['path']} and ran the tests (output: {result[:40]}...).")
    if fault == "hallucinate_test_count":
        run.ledger.mark()
        return Reply(f"Fixed {v['path']}. All {result['passed'] + 7} tests pass.")
    return Reply(f"Fixed {v['path']}. Tests: {result['passed']} passed, {result['failed']} failed.")


def coding_agent(chat: Chat, run: Run) -> str:
    v, fault = run.v, run.fault
    task = f"{v['test']}::test_{v['fn']} fails with AssertionError near {v['path']} line {v['line']}. Fix it."
    system = CODING_SYSTEM.format(repo=v["repo"])
    if fault == "reviewer_prompt":
        system = REVIEWER_SYSTEM.format(repo=v["repo"])
        _mark_next_llm()
    loop = Loop(chat, "gpt-4o", system, CODING_TOOLS, max_turns=3 if fault == "max_turns" else 8)
    if fault == "compact_history":
        def compact(messages: list[dict[str, Any]], call: int) -> list[dict[str, Any]] | None:
            if len(messages) < 5:
                return None
            current().ledger.mark(len(current().ledger.entries) + 1)
            return messages[:1] + messages[3:]  # "compaction" drops the first tool exchange (the file read)
        loop.before_call = compact
    result = loop.converse([task], "max_turns" if fault == "max_turns" else None)
    tests = [m for m in loop.messages if isinstance(m, dict) and m.get("role") == "tool" and "passed" in str(m.get("content"))]
    if not tests or result.startswith("I could not"):
        return result
    summary_system = SUMMARY_SYSTEM_BROKEN if fault == "summary_prompt_broken" else SUMMARY_SYSTEM
    if fault == "summary_prompt_broken":
        _mark_next_llm()
    turn = ask(chat, "gpt-4o-mini", summary_system, [chat.user(f"{result}")], [])
    return turn.text or result


# ---------------------------------------------------------------------------------------------------------
# Agent 3: research / RAG (anthropic)
# ---------------------------------------------------------------------------------------------------------

RESEARCH_SYSTEM = ("You are a research assistant. Answer from the retrieved documents only and cite the document ids "
                   "in square brackets.")
RESEARCH_SYSTEM_EDITED = "You are a research assistant. Answer the question clearly and concisely."

_TOPICS = [("sleep and memory consolidation", "sleep"), ("urban heat islands", "heat"), ("microplastics in rivers", "plastic"),
           ("remote work and productivity", "remote"), ("soil carbon under no-till farming", "soil"),
           ("bike lanes and traffic injuries", "bikes")]


@agentotel.retrieval(data_source="papers")
def search_docs(query: str, k: int = 4) -> list[dict[str, Any]]:
    """Papers of the library relevant to a query."""
    run = current()
    return run.v["docs"][:k] if run.condition != "empty_index" else []


@agentotel.tool
def fetch_doc(doc_id: str) -> dict[str, Any]:
    """The full text of a document of the library, by id."""
    run = current()
    n = run.counted("fetch_doc")
    if run.timeout_tool == "fetch_doc" and n == 1:
        raise TimeoutError("library API did not answer within 5 s")
    docs = {d["id"]: d for d in run.v["all_docs"]}
    if doc_id not in docs:
        raise KeyError(f"document {doc_id} not found")
    d = docs[doc_id]
    return {"id": doc_id, "title": d["title"], "year": d["year"], "doi": d["doi"],
            "sections": [{"heading": "Findings", "text": d["content"]}]}


RESEARCH_TOOLS = {"fetch_doc": fetch_doc}


def _research_variant(rng: random.Random, kind: str, history: bool) -> dict[str, Any]:
    topic, word = rng.choice(_TOPICS)
    docs = []
    for i in range(40):
        year = rng.randint(2012, 2025)
        docs.append({"id": f"doc-{rng.randint(1000, 9999)}", "score": round(0.93 - i * 0.015 - rng.random() * 0.01, 3),
                     "title": f"{word.title()} study {i + 1}", "year": year, "author": rng.choice([None, "Kim", "Okafor", "Novak"]),
                     "doi": rng.choice([None, f"10.{rng.randint(1000, 9999)}/{word}.{i}"]),
                     "content": f"A {year} study of {topic}: effect size {round(rng.uniform(0.1, 0.9), 2)} "
                                f"across {rng.randint(40, 4000)} participants. " + "Further detail. " * 30})
    return {"kind": kind, "topic": topic, "word": word, "docs": docs, "all_docs": docs, "k": 4,
            "since": 2023 if kind == "recent" else None, "fetch_two": rng.random() < 0.4 or kind == "two"}


def _research_task(v: dict[str, Any]) -> str:
    if v["since"]:
        return f"What do studies from {v['since']} or later say about {v['topic']}?"
    return f"What does the literature say about {v['topic']}?"


def research_policy(conv: Conv, run: Run) -> Reply:
    v, fault = run.v, run.fault
    question = conv.users[0] if conv.users else ""
    context = conv.system + " ".join(conv.users)
    retrieved = re.findall(r"\[(doc-\d+)\]", context)
    if not retrieved:
        if fault == "answer_empty_retrieval":
            run.ledger.mark()
            return Reply(f"Research on {v['topic']} broadly finds moderate positive effects, with most studies agreeing.")
        return Reply(f"I found no documents about {v['topic']} in the library, so I can't answer from sources.")
    fetched = [m for m in conv.results("fetch_doc") if not m.error]
    errors = [m for m in conv.results("fetch_doc") if m.error]
    wanted = retrieved[:2] if v["fetch_two"] else retrieved[:1]
    if not fetched:
        if fault == "wrong_doc_id" and not errors:
            run.ledger.mark()
            return Reply(None, [("fetch_doc", {"doc_id": "doc-0001"})])
        if errors and len(errors) >= 3:
            return Reply("The library is not answering; I can't read the sources.")
        return Reply(None, [("fetch_doc", {"doc_id": d}) for d in wanted])
    if fault == "repeat_fetch" and run.ledger.fault_at is None:
        run.ledger.mark()
        return Reply(None, [("fetch_doc", {"doc_id": wanted[0]})])
    docs = [m.result for m in fetched] or []
    since = re.search(r"from (\d{4}) or later", question)
    cite = "cite the document ids" in conv.system
    lines = []
    for d in docs:
        if since and d["year"] < int(since.group(1)):
            continue
        lines.append(f"{d['title']} ({d['year']}): {d['sections'][0]['text'][:60]}" + (f" [{d['id']}]" if cite else ""))
    if fault == "hallucinate_citation":
        run.ledger.mark()
        lines.append("A 2024 meta-analysis confirms this [doc-0812].")
    if not lines:
        return Reply(f"None of the retrieved studies on {v['topic']} is recent enough to answer.")
    return Reply(" ".join(lines))


def research_agent(chat: Chat, run: Run) -> str:
    v, fault = run.v, run.fault
    task = _research_task(v)
    k = 40 if fault == "top_k_40" else v["k"]
    docs = use_retrieval(search_docs, "search_docs", v["topic"], k=k)
    if fault == "top_k_40":
        run.ledger.mark()
    system = RESEARCH_SYSTEM_EDITED if fault == "system_prompt_edited" else RESEARCH_SYSTEM
    if fault == "system_prompt_edited":
        _mark_next_llm()

    def with_docs(prompt: str, found: list[dict[str, Any]]) -> str:
        return prompt + "\n\nRetrieved documents:\n" + "\n".join(
            f"[{d['id']}] {d['title']} ({d['year']}), score {d['score']}: {d['content']}" for d in found)

    loop = Loop(chat, "claude-sonnet-4-5", with_docs(system, docs), RESEARCH_TOOLS, params={"max_tokens": 1024})
    if fault == "retrieval_in_loop":
        def again(messages: list[dict[str, Any]], call: int) -> list[dict[str, Any]] | None:
            if call >= 2:
                use_retrieval(search_docs, "search_docs", v["topic"], k=k)  # the loop re-runs the retrieval each turn
                current().ledger.mark(len(current().ledger.entries))
            return None
        loop.before_call = again
    if fault == "condense_question":
        def condense(messages: list[dict[str, Any]], call: int) -> list[dict[str, Any]] | None:
            if call < 2:
                return None
            current().ledger.mark(len(current().ledger.entries) + 1)
            return [{"role": "user", "content": f"Topic: {v['topic']}"}] + messages[1:]  # the constraint is summarised away
        loop.before_call = condense
    return loop.converse([task], "first_call_only" if fault == "first_call_only" else None)


# ---------------------------------------------------------------------------------------------------------
# Agent 4: travel, several tools, parallel calls (openai)
# ---------------------------------------------------------------------------------------------------------

TRAVEL_SYSTEM = ("You are a travel assistant for {traveller}. Home currency: {currency}. Check the weather and the "
                 "cheapest flight for the trip and give prices in the home currency. You may search; never book.")
_AIRPORTS = [("Berlin", "BER", "EUR"), ("London", "LHR", "GBP"), ("Zurich", "ZRH", "CHF"), ("Oslo", "OSL", "NOK"),
             ("Madrid", "MAD", "EUR"), ("Copenhagen", "CPH", "DKK"), ("Vienna", "VIE", "EUR"), ("Prague", "PRG", "CZK")]


@agentotel.tool
def get_weather(city: str, date: str) -> dict[str, Any]:
    """The weather forecast for a city on a date."""
    run = current()
    n = run.counted("get_weather")
    if run.timeout_tool == "get_weather" and n == 1:
        raise TimeoutError("weather API did not answer within 5 s")
    v = run.v
    return {"city": city, "date": date, "high_c": v["high"], "low_c": v["high"] - 7, "rain_mm": v["rain"]}


@agentotel.tool
def find_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Flights between two airports on a date, cheapest first."""
    v = current().v
    return {"flights": [{"flight": f, "price": {"amount": p, "currency": v["fare_currency"]}, "depart": t, "stops": s}
                        for f, p, t, s in v["flights"]], "next_page": None}


@agentotel.tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount of money from one currency to another."""
    rate = current().v["rate"]
    return {"amount": round(amount * rate, 2), "currency": to_currency, "rate": rate}


@agentotel.tool
def book_flight(flight: str, passenger: str) -> dict[str, Any]:
    """Book a seat on a flight."""
    return {"booking_ref": f"BK{abs(hash(flight)) % 10**6:06d}", "flight": flight, "passenger": passenger}


TRAVEL_TOOLS = {"get_weather": get_weather, "find_flights": find_flights, "convert_currency": convert_currency,
                "book_flight": book_flight}


def _travel_variant(rng: random.Random, kind: str, history: bool) -> dict[str, Any]:
    (ocity, origin, home), (dcity, dest, _) = rng.sample(_AIRPORTS, 2)
    fare_currency = rng.choice(["EUR", "USD", home]) if kind != "convert" else ("USD" if home != "USD" else "EUR")
    flights = sorted([(f"{rng.choice(['LH', 'SK', 'BA', 'LX', 'OS', 'IB'])}{rng.randint(100, 999)}", rng.randint(79, 420),
                       f"{rng.randint(6, 21):02d}:{rng.choice(['05', '20', '35', '50'])}", rng.choice([0, 0, 1]))
                      for _ in range(3)], key=lambda f: f[1])
    return {"kind": kind, "traveller": rng.choice(_NAMES), "origin": origin, "ocity": ocity, "dest": dest, "dcity": dcity,
            "home": home, "date": _date(rng, 7), "high": rng.randint(14, 31), "rain": rng.choice([None, 0.0, 2.5, 11.0]),
            "fare_currency": fare_currency, "flights": flights, "rate": round(rng.uniform(0.08, 1.4), 4),
            "days": 7 if kind == "week" else 1}


def travel_policy(conv: Conv, run: Run) -> Reply:
    v, fault = run.v, run.fault
    home = re.search(r"Home currency: (\S+?)\.", conv.system)
    home_currency = home.group(1) if home and not home.group(1).startswith("{") else None
    if "Do not call tools" in conv.system:
        return Reply(f"{v['dcity']} is usually mild in July; flights from {v['ocity']} start around 120 EUR.")
    weather = conv.ok("get_weather")
    flights = conv.ok("find_flights")
    if not isinstance(flights, dict):
        flights = None
    if not conv.requested("find_flights"):
        calls: list[tuple[str, Any]] = []
        if v["days"] > 1:
            for day in range(v["days"]):
                calls.append(("get_weather", {"city": v["dcity"], "date": v["date"][:-2] + f"{int(v['date'][-2:]) % 21 + day + 1:02d}"}))
            if fault == "weather_per_day":
                run.ledger.mark()
            else:
                calls = calls[:1]
        elif fault == "hallucinated_tool_name":
            run.ledger.mark()
            calls.append(("get_weather_forecast", {"city": v["dcity"], "date": v["date"]}))
        else:
            calls.append(("get_weather", {"city": v["dcity"], "date": v["date"]}))
        calls.append(("find_flights", {"origin": v["origin"], "destination": v["dest"], "date": v["date"]}))
        return Reply(None, calls)
    if weather is None:
        failed = [m for m in conv.results("get_weather") if m.error]
        if not conv.requested("get_weather") or (failed and len(failed) < 3 and len(failed) == len(conv.requested("get_weather"))):
            return Reply(None, [("get_weather", {"city": v["dcity"], "date": v["date"]})])
    if flights is None:
        if any(m.role == "tool" and m.tool == "find_flights" and "[truncated]" in m.text for m in conv.msgs):
            return Reply(None, [("find_flights", {"origin": v["origin"], "destination": v["dest"], "date": v["date"]})])
        return Reply("I couldn't find flights for that day.")
    cheapest = flights["flights"][0]
    price = cheapest["price"]
    converted = conv.ok("convert_currency")
    currency = home_currency or price["currency"]
    if price["currency"] != currency and converted is None:
        amount = price["amount"]
        if "in cents" in conv.tools.get("convert_currency", ""):
            amount = amount * 100
        return Reply(f"Converting {price['amount']} {price['currency']} to {currency}.",
                     [("convert_currency", {"amount": amount, "from_currency": price["currency"], "to_currency": currency})])
    total = converted["amount"] if converted else price["amount"]
    if fault == "book_cheapest" and not conv.results("book_flight"):
        run.ledger.mark()
        return Reply(None, [("book_flight", {"flight": cheapest["flight"], "passenger": v["traveller"]})])
    if fault == "empty_answer":
        run.ledger.mark()
        return Reply("", finish="length")
    if fault == "hallucinate_price":
        run.ledger.mark()
        total = round(total * 0.83 + 4, 2)
    rain = "" if weather is None or weather.get("rain_mm") is None else f", {weather['rain_mm']} mm rain"
    booked = conv.ok("book_flight")
    sky = f"{weather['high_c']}°C{rain}" if weather else "no forecast"
    return Reply(f"{v['dcity']} on {v['date']}: {sky}. Cheapest flight {cheapest['flight']} at {cheapest['depart']}, "
                 f"{total} {currency}." + (f" Booked: {booked['booking_ref']}." if booked else ""))


def travel_agent(chat: Chat, run: Run) -> str:
    v, fault = run.v, run.fault
    template = TRAVEL_SYSTEM
    if fault == "no_tools_instruction":
        template += " Do not call tools; answer from what you know."
    system = template.format(traveller=v["traveller"], currency="{currency}" if fault == "template_unfilled" else v["home"])
    if fault in ("no_tools_instruction", "template_unfilled"):
        _mark_next_llm()
    descriptions = {}
    if fault == "description_cents":
        descriptions["convert_currency"] = "Convert an amount of money between currencies. `amount` is in cents."
        _mark_next_llm()
    loop = Loop(chat, "gpt-4o-mini", system, TRAVEL_TOOLS, descriptions)
    if fault == "elide_flights":
        def elide(messages: list[dict[str, Any]], call: int) -> list[dict[str, Any]] | None:
            if call != 2:
                return None
            current().ledger.mark(len(current().ledger.entries) + 1)
            out = []
            for m in messages:
                if m.get("role") == "tool" and "flights" in str(m.get("content")):
                    m = {**m, "content": "[truncated]"}  # the context budget cut the largest tool result
                out.append(m)
            return out
        loop.before_call = elide
    task = (f"I want to fly from {v['ocity']} ({v['origin']}) to {v['dcity']} ({v['dest']}) on {v['date']}"
            + (" and stay a week" if v["days"] > 1 else "") + ". What's the weather, and what's the cheapest flight?")
    harness = fault if fault in ("stop_on_text", "first_call_only") else None
    return loop.converse([task], harness)


# ---------------------------------------------------------------------------------------------------------
# Agent 5: concierge, a multi-turn conversation with memory (openai or anthropic)
# ---------------------------------------------------------------------------------------------------------

CONCIERGE_SYSTEM = ("You are the concierge of Nordwind Shop. Verify the customer's identity with check_identity before "
                    "changing anything on an order. Keep replies short.")
MARKETING_SYSTEM = "You are Nordwind Shop's sales assistant. Recommend this week's offers in every reply."


@agentotel.retrieval(data_source="customer-memory")
def recall_profile(user_id: str) -> list[dict[str, Any]]:
    """What the concierge remembers about a customer."""
    run = current()
    v = run.v
    if run.fault == "stale_memory":
        run.ledger.mark()
        return [{"id": f"mem-{v['other_uid']}", "score": 0.97, "content": f"Preferred name: {v['other_name']}. Office: {v['other_office']}."}]
    return [{"id": f"mem-{v['uid']}", "score": 0.97, "content": f"Preferred name: {v['name']}. Office: {v['office']}."}]


@agentotel.tool
def get_order(order_id: str) -> dict[str, Any]:
    """An order's status and delivery address."""
    run = current()
    n = run.counted("get_order")
    if run.timeout_tool == "get_order" and n == 1:
        raise TimeoutError("orders API did not answer within 5 s")
    v = run.v
    return {"order_id": order_id, "status": "packed", "address": v["home"], "carrier": v["carrier"],
            "note": v["note"]}


@agentotel.tool
def check_identity(user_id: str, postcode: str) -> dict[str, Any]:
    """Check a customer's identity by their postcode."""
    return {"user_id": user_id, "verified": postcode == current().v["postcode"]}


@agentotel.tool
def update_address(order_id: str, address: str) -> dict[str, Any]:
    """Change the delivery address of an order that has not shipped."""
    run = current()
    return {"order_id": order_id, "address": address, "eta": run.v["eta"], "change_id": f"chg-{run.counted('update_address')}{run.v['uid'][-3:]}"}


CONCIERGE_TOOLS = {"get_order": get_order, "check_identity": check_identity, "update_address": update_address}


def _concierge_variant(rng: random.Random, kind: str, history: bool) -> dict[str, Any]:
    name, other = rng.sample(_NAMES, 2)
    return {"kind": kind, "name": name, "uid": f"u-{rng.randint(10000, 99999)}", "oid": f"A-{rng.randint(1000, 9999)}",
            "home": f"{rng.randint(1, 80)} {rng.choice(['Elm', 'Mill', 'Lake', 'Park'])} Road, {rng.choice(_CITIES)}",
            "office": f"{rng.randint(1, 200)} {rng.choice(['Harbour', 'Station', 'Market'])} Street, {rng.choice(_CITIES)}",
            "postcode": str(rng.randint(10000, 99999)), "carrier": rng.choice(list(_CARRIERS)), "eta": _date(rng),
            "note": rng.choice([None, "leave with neighbour"]), "other_uid": f"u-{rng.randint(10000, 99999)}",
            "other_name": other, "other_office": f"{rng.randint(1, 200)} Quay Lane, {rng.choice(_CITIES)}"}


def _concierge_turns(v: dict[str, Any]) -> list[str]:
    return [f"Hi, it's {v['name']} (customer {v['uid']}). Can order {v['oid']} go to my office instead of home?",
            f"Yes please, the office on file. My postcode is {v['postcode']}.",
            "Thanks! Will the courier call before delivering?"]


def concierge_policy(conv: Conv, run: Run) -> Reply:
    v, fault = run.v, run.fault
    if "sales assistant" in conv.system:
        return Reply("This week: 20% off raincoats! Anything else I can help with?")
    oid = _order_id(conv.users)
    office = re.search(r"Office: ([^.]+)\.", conv.system)
    preferred = re.search(r"Preferred name: ([^.]+)\.", conv.system)
    last_user = conv.users[-1] if conv.users else ""
    if oid is None:
        return Reply("Sorry, which order are you asking about?")
    if "courier call" in last_user:
        order = conv.ok("get_order") or {}
        return Reply(f"Yes — {order.get('carrier', 'the courier')} calls about 30 minutes before delivering order {oid}.")
    if "postcode" in last_user:
        postcode = re.search(r"postcode is (\d+)", last_user).group(1)
        if not conv.ok("check_identity") and fault == "skip_identity_check" and not conv.requested("update_address"):
            run.ledger.mark()
            return Reply(None, [("update_address", {"order_id": oid, "address": office.group(1) if office else "office"})])
        if not conv.requested("check_identity"):
            uid = re.search(r"customer (u-\d+)", " ".join(conv.users))
            return Reply(None, [("check_identity", {"user_id": uid.group(1) if uid else "unknown", "postcode": postcode})])
        if not conv.requested("update_address"):
            if not (conv.ok("check_identity") or {}).get("verified"):
                return Reply("Sorry, I couldn't verify your identity.")
            return Reply(None, [("update_address", {"order_id": oid, "address": office.group(1) if office else "office"})])
        done = conv.ok("update_address")
        return Reply(f"Done: order {oid} now goes to {done['address']}; expected {done['eta']}.")
    if conv.ok("get_order") is None and len([m for m in conv.results("get_order") if m.error]) < 2:
        return Reply(None, [("get_order", {"order_id": oid})])
    order = conv.ok("get_order")
    name = preferred.group(1) if preferred else "there"
    return Reply(f"Hi {name}! Order {oid} is packed and going to {order['address'] if order else 'your home'}. "
                 f"I can send it to {office.group(1) if office else 'your office'} — please confirm your postcode.")


def concierge_agent(chat: Chat, run: Run) -> str:
    v, fault = run.v, run.fault
    memory = use_retrieval(recall_profile, "recall_profile", v["uid"])
    system = CONCIERGE_SYSTEM + "\nWhat you remember: " + " ".join(m["content"] for m in memory)
    model = "gpt-4o-mini" if chat.sdk == "openai" else "claude-sonnet-4-5"
    loop = Loop(chat, model, system, CONCIERGE_TOOLS)
    if fault == "persona_swap@3":
        def system_for(turn: int, call: int) -> str:
            if turn >= 3:
                current().ledger.mark(len(current().ledger.entries) + 1)
                return MARKETING_SYSTEM
            return system
        loop.system_for = system_for
    turns = _concierge_turns(v)
    if fault == "history_dropped@2":
        loop.converse(turns[:1])
        loop.messages = []
        _mark_next_llm()
        loop.converse(turns[1:2])
        return loop.converse(turns[2:])
    harness = fault if fault and (fault.startswith("reset_history@") or fault.startswith("rerun:")) else None
    return loop.converse(turns, harness)


# ---------------------------------------------------------------------------------------------------------
# The agents and their policies (what `check` is told about each agent)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agent:
    name: str
    sdk: str
    run: Callable[[Chat, Run], str]
    policy: Policy
    variant: Callable[[random.Random, str, bool], dict[str, Any]]
    timeout_tools: tuple[str, ...]  # tools whose transient timeouts a healthy run recovers from


AGENTS = {
    "order-support": Agent("order-support", "openai", support_agent, support_policy, _support_variant, ("lookup_order", "track_shipment")),
    "coding-agent": Agent("coding-agent", "openai", coding_agent, coding_policy, _coding_variant, ("read_file",)),
    "research-assistant": Agent("research-assistant", "anthropic", research_agent, research_policy, _research_variant, ("fetch_doc",)),
    "travel-planner": Agent("travel-planner", "openai", travel_agent, travel_policy, _travel_variant, ("get_weather",)),
    "concierge": Agent("concierge", "openai", concierge_agent, concierge_policy, _concierge_variant, ("get_order",)),
}
_POLICIES.update({name: agent.policy for name, agent in AGENTS.items()})

# Per-agent policies and budgets, as a team would write them in [tool.agentotel.check]: healthy runs stay
# well inside them; forbidden tools are offered to the model (a real agent's toolset is shared) but not allowed.
POLICIES: dict[str, dict[str, Any]] = {
    "order-support": {"forbidden_tools": ["refund_order"], "max_tokens": 20_000, "min_retrieval_score": 0.3},
    "coding-agent": {"max_tokens": 20_000},
    "research-assistant": {"max_tokens": 8_000},
    "travel-planner": {"forbidden_tools": ["book_flight"], "max_tool_calls": 6},
    "concierge": {"required_before": {"update_address": ["check_identity"]}},
}


# ---------------------------------------------------------------------------------------------------------
# The pairs
# ---------------------------------------------------------------------------------------------------------

LAYERS = ("prompt", "tool", "workflow", "memory", "model", "product")


@dataclass(frozen=True)
class PairSpec:
    """One good/faulty pair: agent, task kind, the fault (faulty run only), a condition of both runs."""

    id: str
    agent: str
    layer: str
    fault: str
    taxonomy: str  # the published category the fault is drawn from
    description: str
    kind: str = "where"
    condition: str | None = None
    sdk: str | None = None  # default: the agent's


def _p(id: str, agent: str, layer: str, fault: str, taxonomy: str, description: str, **kw: Any) -> PairSpec:
    return PairSpec(id, agent, layer, fault, taxonomy, description, **kw)


S, C, R, T, Q = "order-support", "coding-agent", "research-assistant", "travel-planner", "concierge"

PAIRS: list[PairSpec] = [
    # ---- prompt
    _p("prompt-support-edited", S, "prompt", "system_prompt_edited", "MAST FM-1.1 Disobey task specification (FC1 specification issues)",
       "the system prompt was edited and lost 'always give the tracking number': the answer omits it"),
    _p("prompt-support-escalation-mid-run", S, "prompt", "escalation_prompt_mid_run", "MAST FM-1.2 Disobey role specification",
       "a template bug sends the escalation desk's prompt from the second model call on: the agent stops helping"),
    _p("prompt-coding-reviewer-role", C, "prompt", "reviewer_prompt", "MAST FM-1.2 Disobey role specification",
       "the coding agent is given the reviewer's system prompt: it reads the file, comments, patches nothing"),
    _p("prompt-coding-summary-template", C, "prompt", "summary_prompt_broken", "MAST FM-1.1 Disobey task specification",
       "the pull-request summary call's prompt template lost its instructions: the summary lists no files"),
    _p("prompt-research-no-citations", R, "prompt", "system_prompt_edited", "MAST FM-1.1 Disobey task specification",
       "the research prompt lost 'cite the document ids': the answer has no citations"),
    _p("prompt-travel-unfilled-template", T, "prompt", "template_unfilled", "TRAIL Incorrect problem identification (ambiguous instructions)",
       "the prompt template's {currency} placeholder is not filled: prices are not converted", kind="convert"),
    _p("prompt-travel-contradictory", T, "prompt", "no_tools_instruction", "MAST FM-1.1 Disobey task specification",
       "a prompt edit appended 'do not call tools': the agent answers from memory"),
    _p("prompt-concierge-persona-swap", Q, "prompt", "persona_swap@3", "MAST FM-1.2 Disobey role specification",
       "from the third user turn the harness sends the sales assistant's prompt: the answer is an advert", sdk="anthropic"),
    # ---- tool
    _p("tool-support-output-shape", S, "tool", "orders_api_v2", "TRAIL System execution error: API issues (service response changed)",
       "the orders API now answers in a nested shape: the agent finds no tracking number"),
    _p("tool-coding-output-shape", C, "tool", "pytest_text_output", "TRAIL System execution error: API issues (service response changed)",
       "run_tests now returns pytest's text summary instead of counts"),
    _p("tool-travel-description-changed", T, "tool", "description_cents", "TRAIL System execution error: tool definition issues",
       "convert_currency's description now says amounts are in cents: the model converts 100x the fare", kind="convert"),
    _p("tool-support-error-ignored", S, "tool", "ignore_tool_error", "AgentErrorTaxonomy Reflection: outcome misinterpretation (tool error ignored)",
       "the carrier API is down (both runs); the faulty model answers as if tracking had worked", condition="carrier_down"),
    _p("tool-coding-error-ignored", C, "tool", "ignore_patch_error", "AgentErrorTaxonomy Reflection: outcome misinterpretation (tool error ignored)",
       "apply_patch fails (both runs); the faulty model runs the tests as if it had applied", condition="stale_patch"),
    _p("tool-travel-wrong-function-name", T, "tool", "hallucinated_tool_name", "ToolScan IFN Incorrect Function Name",
       "the model calls get_weather_forecast, which does not exist"),
    _p("tool-support-wrong-argument-name", S, "tool", "arg_name", "ToolScan IAN Incorrect Argument Name",
       "the model calls lookup_order(orderId=...) instead of order_id"),
    _p("tool-research-wrong-argument-value", R, "tool", "wrong_doc_id", "ToolScan IAV Incorrect Argument Value",
       "the model fetches a document id that no retrieval returned"),
    # ---- workflow
    _p("workflow-support-retry-reruns-success", S, "workflow", "rerun:lookup_order", "MAST FM-1.3 Step repetition (ToolScan RAC Repeated API Calls)",
       "the harness's retry wrapper also retries successful calls: lookup_order runs twice"),
    _p("workflow-research-retrieval-in-loop", R, "workflow", "retrieval_in_loop", "MAST FM-1.3 Step repetition",
       "the loop re-runs the retrieval before every model call"),
    _p("workflow-travel-premature-stop", T, "workflow", "stop_on_text", "MAST FM-3.1 Premature termination",
       "the harness takes a model message with text and a tool call for the final answer", kind="convert"),
    _p("workflow-coding-max-turns", C, "workflow", "max_turns", "MAST FM-3.1 Premature termination",
       "max_turns set to 3: the run stops before the model sees the test results"),
    _p("workflow-travel-parallel-call-dropped", T, "workflow", "first_call_only", "TRAIL Task orchestration error (unanswered tool call)",
       "the harness runs only the first of two parallel tool calls: the next request is rejected (400)"),
    _p("workflow-support-keeps-going", S, "workflow", "keep_going", "MAST FM-1.5 Unaware of termination conditions",
       "the loop does not stop at the final answer and asks the model to continue"),
    _p("workflow-concierge-double-execution", Q, "workflow", "rerun:update_address", "MAST FM-1.3 Step repetition",
       "at-least-once redelivery executes update_address twice"),
    _p("workflow-research-tool-result-dropped", R, "workflow", "first_call_only", "TRAIL Task orchestration error (unanswered tool call)",
       "two parallel fetch_doc calls, one result sent back: Anthropic rejects the next request (400)", kind="two"),
    # ---- memory
    _p("memory-concierge-history-dropped", Q, "memory", "history_dropped@2", "MAST FM-1.4 Loss of conversation history",
       "the second user turn is sent without the first: the model asks which order"),
    _p("memory-concierge-conversation-reset", Q, "memory", "reset_history@3", "MAST FM-2.1 Conversation reset",
       "the harness starts a fresh conversation at the third turn", sdk="anthropic"),
    _p("memory-support-window-trim", S, "memory", "window_trim", "MAST FM-1.4 Loss of conversation history",
       "'keep the last four messages' drops the customer's question at the third model call"),
    _p("memory-coding-compaction", C, "memory", "compact_history", "AgentErrorTaxonomy Memory: retrieval failure (context compaction)",
       "history compaction drops the file the model read: it reads it again"),
    _p("memory-research-condensed-question", R, "memory", "condense_question", "AgentErrorTaxonomy Memory: over-simplification",
       "the condensed history loses the user's 'from 2023 or later'", kind="recent"),
    _p("memory-concierge-stale-profile", Q, "memory", "stale_memory", "AgentErrorTaxonomy Memory: false memory (wrong customer's memory recalled)",
       "the memory store returns another customer's profile"),
    _p("memory-travel-result-elided", T, "memory", "elide_flights", "MAST FM-1.4 Loss of conversation history",
       "the context budget cuts the flight results before the second call: the model searches again"),
    _p("memory-support-followup-history-dropped", S, "memory", "history_dropped@2", "MAST FM-1.4 Loss of conversation history",
       "a follow-up question is sent without the earlier turn", kind="followup", sdk="anthropic"),
    # ---- model
    _p("model-support-hallucinated-tracking", S, "model", "hallucinate_tracking", "TRAIL Hallucination (tool-related)",
       "the answer gives a tracking number no tool returned"),
    _p("model-coding-hallucinated-count", C, "model", "hallucinate_test_count", "AgentErrorTaxonomy Reflection: progress misjudge / TRAIL Tool output misinterpretation",
       "the answer reports a test count run_tests never returned"),
    _p("model-research-hallucinated-citation", R, "model", "hallucinate_citation", "TRAIL Hallucination (language-only)",
       "the answer cites a document no retrieval returned"),
    _p("model-travel-hallucinated-price", T, "model", "hallucinate_price", "TRAIL Hallucination (tool-related)",
       "the answer quotes a price no tool returned"),
    _p("model-support-asks-again", S, "model", "repeat_lookup", "MAST FM-1.3 Step repetition (ToolScan RAC Repeated API Calls)",
       "after a good lookup_order result the model asks for the same lookup again"),
    _p("model-research-asks-again", R, "model", "repeat_fetch", "MAST FM-1.3 Step repetition (ToolScan RAC Repeated API Calls)",
       "after a good fetch_doc result the model fetches the same document again"),
    _p("model-coding-invalid-json", C, "model", "invalid_json_args", "ToolScan IFE Invalid Format Error",
       "the model's apply_patch arguments are cut off: not valid JSON"),
    _p("model-travel-empty-answer", T, "model", "empty_answer", "AgentErrorTaxonomy System: LLM limit (output cut at max tokens)",
       "the final answer comes back empty, finish_reason length"),
    # ---- product
    _p("product-research-empty-retrieval", R, "product", "answer_empty_retrieval", "TRAIL Poor information retrieval (answered regardless)",
       "retrieval finds nothing (both runs); the faulty model answers anyway", condition="empty_index"),
    _p("product-support-low-score-retrieval", S, "product", "answer_low_score", "TRAIL Poor information retrieval (answered regardless)",
       "the help-center articles found are irrelevant (scores < 0.2); the faulty model answers anyway", kind="help"),
    _p("product-research-budget-top-k", R, "product", "top_k_40", "TRAIL Resource abuse",
       "a config change retrieves 40 documents instead of 4: the run blows its token budget"),
    _p("product-coding-budget-huge-file", C, "product", "huge_file", "TRAIL Resource abuse / AgentErrorTaxonomy System: LLM limit",
       "the file read is now a 300 KB generated bundle: the next call blows the token budget"),
    _p("product-support-forbidden-refund", S, "product", "forbidden_refund", "MAST FM-1.2 Disobey role specification (forbidden action)",
       "the model issues a refund, which the policy forbids the bot", kind="refund"),
    _p("product-travel-forbidden-booking", T, "product", "book_cheapest", "MAST FM-1.2 Disobey role specification (forbidden action)",
       "the model books the flight it was only asked to find"),
    _p("product-concierge-missing-identity-check", Q, "product", "skip_identity_check", "AgentErrorTaxonomy Planning: constraint ignorance",
       "the address is changed without the required identity check"),
    _p("product-travel-tool-call-budget", T, "product", "weather_per_day", "AgentErrorTaxonomy Planning: inefficient plan / TRAIL Resource abuse",
       "the model asks for the weather of each of seven days separately: over the tool-call budget", kind="week"),
]

QUICK_PAIRS = ("prompt-support-edited", "tool-support-output-shape", "workflow-support-retry-reruns-success",
               "memory-concierge-history-dropped", "model-research-hallucinated-citation", "product-travel-forbidden-booking")

HISTORY_RUNS = 3  # earlier healthy runs of the same agent in each pair's store


# ---------------------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------------------


@dataclass
class RecordedRun:
    run_id: str
    ledger: list[tuple[str, str | None]]
    fault_at: int | None
    answer: str
    error: str | None


@dataclass
class RecordedPair:
    spec: PairSpec
    store: Path
    history: list[str]
    good: RecordedRun
    faulty: RecordedRun

    @property
    def faulty_step(self) -> int:
        assert self.faulty.fault_at is not None
        return self.faulty.fault_at

    @property
    def faulty_step_kind(self) -> tuple[str, str | None]:
        return self.faulty.ledger[self.faulty_step - 1]

    @property
    def policy(self) -> dict[str, Any]:
        return POLICIES.get(self.spec.agent, {})


def _record_run(base_url: str, spec: PairSpec, agent: Agent, v: dict[str, Any], rng: random.Random, *,
                fault: str | None, condition: str | None) -> RecordedRun:
    global _RUN
    sdk = spec.sdk or agent.sdk
    # A 429 only in healthy runs: in a faulty run it would blur "the first model call given X".
    run = Run(agent.name, v, condition, fault, rate_limit_first=(rng.random() < 0.2) and fault is None,
              timeout_tool=rng.choice(agent.timeout_tools) if rng.random() < 0.2 else None)
    if condition in ("carrier_down",) and run.timeout_tool == "track_shipment":
        run.timeout_tool = None
    _RUN = run
    error = None
    answer = ""
    chat = Chat(sdk, base_url)
    try:
        with agentotel.run(agent.name, user=v.get("uid") or f"user-{rng.randint(1, 999)}", task=v.get("kind")) as r:
            try:
                answer = agent.run(chat, run)
                r.output = answer
            except Exception as exc:  # noqa: BLE001 - a run that fails is recorded as failed, the benchmark goes on
                error = f"{type(exc).__name__}: {exc}"
                raise
    except Exception:  # noqa: BLE001
        pass
    finally:
        _RUN = None
    return RecordedRun(r.id, list(run.ledger.entries), run.ledger.fault_at, answer, error)


def record_pair(spec: PairSpec, directory: Path, base_url: str, seed: int) -> RecordedPair:
    """Record the pair's history runs, its healthy run and its faulty run into `directory` (a new store)."""
    agent = AGENTS[spec.agent]
    rng = random.Random(seed)
    agentotel.instrument(directory=directory, service_name="diagnosis-bench")
    try:
        history = []
        for _ in range(HISTORY_RUNS):
            v = agent.variant(rng, spec.kind, True)
            history.append(_record_run(base_url, spec, agent, v, rng, fault=None, condition=None).run_id)
        v = agent.variant(rng, spec.kind, False)
        good = _record_run(base_url, spec, agent, v, rng, fault=None, condition=spec.condition)
        faulty = _record_run(base_url, spec, agent, v, rng, fault=spec.fault, condition=spec.condition)
    finally:
        agentotel.shutdown()
    pair = RecordedPair(spec, directory, history, good, faulty)
    if faulty.fault_at is None or not 1 <= faulty.fault_at <= len(faulty.ledger):
        raise RuntimeError(f"{spec.id}: the fault never took effect (ledger {faulty.ledger}, answer {faulty.answer!r})")
    return pair


def build(directory: Path, *, quick: bool = False, seed: int = 14) -> list[RecordedPair]:
    """Record every pair (the quick set with quick=True), each into its own store under `directory`."""
    specs = [p for p in PAIRS if p.id in QUICK_PAIRS] if quick else PAIRS
    out = []
    with serve_model() as base_url:
        for spec in specs:  # a pair's seed is its place in PAIRS: the quick set records the same runs
            out.append(record_pair(spec, directory / spec.id, base_url, seed * 1000 + PAIRS.index(spec)))
    return out


def save(pairs: list[RecordedPair], path: Path) -> None:
    """Write which run of which store is which (`load` reads it back): to examine or re-check a recording later."""
    path.write_text(json.dumps([{"spec": p.spec.id, "store": str(p.store), "history": p.history,
                                 "good": vars(p.good), "faulty": vars(p.faulty)} for p in pairs], indent=1))


def load(path: Path) -> list[RecordedPair]:
    """The recorded pairs `save` wrote to `path`."""
    specs = {p.id: p for p in PAIRS}

    def run(saved: dict[str, Any]) -> RecordedRun:
        return RecordedRun(saved["run_id"], [tuple(step) for step in saved["ledger"]], saved["fault_at"], saved["answer"],
                           saved["error"])

    return [RecordedPair(specs[p["spec"]], Path(p["store"]), p["history"], run(p["good"]), run(p["faulty"]))
            for p in json.loads(path.read_text())]


# The kind of step each fault shows at, by definition (a cause in what a model call is given or decided
# shows at a model call; a tool's or retrieval's own change at that call); checked against every recording.
_TOOL_FAULTS = {"orders_api_v2": "lookup_order", "pytest_text_output": "run_tests", "huge_file": "read_file",
                "rerun:lookup_order": "lookup_order", "rerun:update_address": "update_address", "max_turns": None}
_RETRIEVAL_FAULTS = {"retrieval_in_loop": "papers", "top_k_40": "papers", "stale_memory": "customer-memory"}  # data sources


def expected_step(spec: PairSpec) -> tuple[str, str | None]:
    """(step type, tool or retrieval name or None for any) the pair's faulty step must have."""
    if spec.fault in _TOOL_FAULTS:
        return "tool", _TOOL_FAULTS[spec.fault]
    if spec.fault in _RETRIEVAL_FAULTS:
        return "retrieval", _RETRIEVAL_FAULTS[spec.fault]
    return "llm", None


def check_ground_truth(pair: RecordedPair, traces: Any) -> list[str]:
    """Problems with a pair's recording: the ledger must match the trajectory step for step, and the faulty
    step must exist and be of the type the fault's definition names. Empty when all is well."""
    problems = []
    steps = traces.trajectory(pair.faulty.run_id).steps
    kind, name = expected_step(pair.spec)
    at = pair.faulty.fault_at
    if at is None or not 1 <= at <= len(steps):
        problems.append(f"{pair.spec.id}: faulty step {at} is not a step of the faulty run ({len(steps)} steps)")
    else:
        step = steps[at - 1]
        named = step.tool_name if step.type == "tool" else step.name
        if step.index != at or step.type != kind or (name is not None and name not in str(named)):
            problems.append(f"{pair.spec.id}: faulty step {at} is {step.type} {named}, expected {kind} {name or ''}")
    for label, recorded in (("good", pair.good), ("faulty", pair.faulty)):
        steps = traces.trajectory(recorded.run_id).steps
        kinds = [(s.type, s.tool_name if s.type == "tool" else None) for s in steps]
        expected = [(k, n if k == "tool" else None) for k, n in recorded.ledger]
        if kinds != expected:
            problems.append(f"{pair.spec.id} {label}: trajectory {kinds} != ledger {expected}")
    return problems
