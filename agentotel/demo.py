"""`agentotel demo`: a small order-support agent, run twice, recorded, rebuilt and diffed — offline.

The agent is an ordinary OpenAI tool-calling loop using the real `openai` SDK. The "model" is a
scripted one served from a thread on 127.0.0.1, so no network and no API key are needed. Between the
two runs the orders backend changes the shape of its answer (v1 -> v2: fields moved into nested
objects). The agent does not crash: the model no longer finds a tracking number and gives a vaguer
answer — the silent failure agentotel is for. The diff points at the tool step whose output changed
shape.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import agentotel
from agentotel import _config

MODEL = "gpt-4o-mini"
QUESTION = "Where is my order A-1042 and when will it arrive?"
DESCRIPTION_A = "orders API v1"
DESCRIPTION_B = "orders API v2 (lookup_order's answer changed shape)"

Responder = Callable[[dict[str, Any]], dict[str, Any]]


# -- a scripted model behind the real SDK ----------------------------------------------------------------
@contextlib.contextmanager
def serve_model(responder: Responder) -> Iterator[str]:
    """Serve `responder(request_json) -> chat completion JSON` on 127.0.0.1; yields the base URL for the SDK."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            try:
                payload, status = json.dumps(responder(body)).encode(), 200
            except Exception as exc:  # noqa: BLE001 - the client sees a server error, as from a real API
                payload, status = json.dumps({"error": {"message": str(exc), "type": "server_error"}}).encode(), 500
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:  # keep the demo's output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="agentotel-demo-model", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def completion(content: str | None = None, tool_calls: list[tuple[Any, ...]] = (), *,
               prompt_tokens: int = 0, completion_tokens: int = 0, model: str = MODEL) -> dict[str, Any]:
    """A chat.completions response body: text, and tool calls as (name, arguments) or (id, name, arguments)."""
    calls = []
    for call in tool_calls:
        call_id, name, arguments = call if len(call) == 3 else (f"call_{uuid.uuid4().hex[:24]}", *call)
        calls.append({"id": call_id, "type": "function",
                      "function": {"name": name, "arguments": json.dumps(arguments)}})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:20]}", "object": "chat.completion", "created": 1_780_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _support_model(request: dict[str, Any]) -> dict[str, Any]:
    """The demo's scripted model: reads the conversation like a model would and decides the next step."""
    messages = request.get("messages") or []
    prompt_tokens = sum(len(json.dumps(m)) for m in messages) // 4
    tool_results = {}
    for m in messages:
        if m.get("role") == "tool":
            tool_results[m.get("tool_call_id")] = m.get("content")
    calls_by_id = {c["id"]: c["function"]["name"] for m in messages for c in (m.get("tool_calls") or [])}
    latest = {calls_by_id.get(i): json.loads(content) for i, content in tool_results.items() if content}
    if "track_shipment" in latest:
        eta = latest["track_shipment"]
        order = latest["lookup_order"]
        return completion(
            f"Order {order.get('order_id')} has shipped with {order.get('carrier')}. It should arrive on "
            f"{eta['eta']} (last scan: {eta['last_scan']}).", prompt_tokens=prompt_tokens, completion_tokens=38)
    if "lookup_order" in latest:
        order = latest["lookup_order"]
        if order.get("carrier") and order.get("tracking"):
            return completion(None, [("track_shipment", {"carrier": order["carrier"], "tracking": order["tracking"]})],
                              prompt_tokens=prompt_tokens, completion_tokens=24)
        # The fields it expects are gone: no crash, just a worse answer.
        return completion("Your order A-1042 is being processed. I could not find tracking details yet; "
                          "please check back in a few days.", prompt_tokens=prompt_tokens, completion_tokens=31)
    return completion(None, [("lookup_order", {"order_id": "A-1042"})], prompt_tokens=prompt_tokens,
                      completion_tokens=18)


# -- the agent's tools and loop ------------------------------------------------------------------------
class _Shop:
    """The backend the tools call; its orders API version is what changes between the two runs."""

    api_version = 1


_SHOP = _Shop()


@agentotel.retrieval(data_source="help-center")
def search_help(query: str, k: int = 2) -> list[dict[str, Any]]:
    """Help-center articles relevant to the customer's question."""
    articles = [
        {"id": "kb-12", "score": 0.91, "content": "Orders ship within 2 business days; tracking is emailed."},
        {"id": "kb-31", "score": 0.77, "content": "Delivery takes 3-5 days after shipping within the EU."},
    ]
    return articles[:k]


@agentotel.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status, carrier and tracking number."""
    if _SHOP.api_version == 1:
        return {"order_id": order_id, "status": "shipped", "carrier": "DHL", "tracking": "JD014600003"}
    # v2 nests everything: same facts, different shape.
    return {"order": {"id": order_id, "state": "shipped"},
            "shipment": {"carrier_name": "DHL", "tracking_number": "JD014600003"}}


@agentotel.tool
def track_shipment(carrier: str, tracking: str) -> dict[str, Any]:
    """Where a parcel is and when it should arrive."""
    return {"carrier": carrier, "tracking": tracking, "eta": "2026-06-02", "last_scan": "Leipzig hub"}


_TOOLS = {"lookup_order": lookup_order, "track_shipment": track_shipment}


def _tool_definitions() -> list[dict[str, Any]]:
    from agentotel.tools import registered_tools

    known = registered_tools()
    return [
        {"type": "function", "function": {"name": name, "description": known[name].description,
                                          "parameters": known[name].schema["parameters"]}}
        for name in _TOOLS
    ]


def support_agent(client: Any, question: str, *, max_turns: int = 6) -> str:
    """An ordinary tool-calling loop: ask the model, run the tools it asks for, until it answers."""
    articles = search_help(question)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent for an online shop. Use the tools. Be brief.\n"
         + "\n".join(a["content"] for a in articles)},
        {"role": "user", "content": question},
    ]
    for _ in range(max_turns):
        response = client.chat.completions.create(model=MODEL, messages=messages, tools=_tool_definitions())
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = _TOOLS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    return "I could not finish in time."


# -- the demo ---------------------------------------------------------------------------------------------
@dataclass
class DemoResult:
    directory: Path
    run_a: str
    run_b: str
    answers: tuple[str, str]

    @property
    def traces(self) -> Any:
        return agentotel.open(self.directory)


def run_demo(directory: str | Path | None = None) -> DemoResult:
    """Record two runs of the support agent (orders API v1, then v2) in the store; returns their run ids.

    It sets agentotel up for its own duration (instrument ... shutdown), so call it from a process
    that has not called `agentotel.instrument()` itself — the `agentotel demo` command does.
    """
    import openai

    directory = Path(directory) if directory is not None else _config.Settings.resolve().directory
    # The demo's spans are for its own store: not for an OTLP endpoint the user's shell points at.
    with _config.parquet_only():
        agentotel.instrument(directory=directory, service_name="agentotel-demo")
    answers = []
    run_ids = []
    try:
        with serve_model(_support_model) as base_url:
            client = openai.OpenAI(base_url=base_url, api_key="demo-key-not-a-secret", max_retries=0)
            for version in (1, 2):
                _SHOP.api_version = version
                with agentotel.run("order-support", user="demo-user", trigger="cli", task=QUESTION,
                                   metadata={"orders_api": f"v{version}"}) as run:
                    answer = support_agent(client, QUESTION)
                    run.output = answer
                run_ids.append(run.id)
                answers.append(answer)
    finally:
        _SHOP.api_version = 1
        agentotel.shutdown()  # flushes and folds the WAL into Parquet
    return DemoResult(directory, run_ids[0], run_ids[1], (answers[0], answers[1]))
