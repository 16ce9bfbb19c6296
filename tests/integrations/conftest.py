"""A scripted OpenAI-compatible model on 127.0.0.1 (chat completions and the Responses API), and a store.

The model plays a two-tool agent's two turns: the first request gets one tool call
(`get_weather(city="Paris")`, call id `call_weather_1`), the request carrying that tool's result gets
the final answer. Every test then reads the run back with `agentotel.open(dir).trajectory(run)`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider

import agentotel

CALL_ID = "call_weather_1"
ARGUMENTS = {"city": "Paris"}
ANSWER = "It is 18C and cloudy in Paris."
MODEL = "gpt-4o-mini"


def _saw_tool_result(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    if any(m.get("role") == "tool" and m.get("tool_call_id") == CALL_ID for m in messages if isinstance(m, dict)):
        return True
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" and i.get("call_id") == CALL_ID for i in items)


def chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    if _saw_tool_result(body):
        message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(ARGUMENTS)}}]}
        finish = "tool_calls"
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}


def responses_reply(body: dict[str, Any]) -> dict[str, Any]:
    if _saw_tool_result(body):
        output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}]
    else:
        output = [{"type": "function_call", "id": "fc_1", "call_id": CALL_ID, "name": "get_weather",
                   "arguments": json.dumps(ARGUMENTS), "status": "completed"}]
    return {"id": "resp_1", "object": "response", "created_at": 0, "model": MODEL, "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def chat_tool_calls(*calls: tuple[str, str, dict[str, Any]], content: str | None = None) -> dict[str, Any]:
    """A chat completion asking for the tool calls `(call id, tool name, arguments)` at once (for `ModelServer.before`)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
                                 for call_id, name, arguments in calls]
    return {"id": "chatcmpl-0", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}


def chat_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat reply as a stream's chunks (`stream=True`)."""
    message = reply["choices"][0]
    delta = {k: v for k, v in message["message"].items() if v is not None}
    for i, call in enumerate(delta.get("tool_calls") or []):
        call["index"] = i
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": message["finish_reason"]}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}},
    ]


def responses_events(final: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses reply as a stream's events (`stream=True`): each output item added, its text or
    arguments in two deltas, done; then `response.completed` with the whole response."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**final, "status": "in_progress", "output": []}}]
    for index, item in enumerate(final["output"]):
        common = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "function_call":
            events.append({"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}})
            half = len(item["arguments"]) // 2
            for delta in (item["arguments"][:half], item["arguments"][half:]):
                events.append({"type": "response.function_call_arguments.delta", **common, "delta": delta})
            events.append({"type": "response.function_call_arguments.done", **common, "arguments": item["arguments"]})
        elif item["type"] != "message":  # reasoning: added and done whole
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        else:
            text = item["content"][0]["text"]
            events.append({"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}})
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append({"type": "response.content_part.added", **common, "content_index": 0, "part": part})
            for delta in (text[: len(text) // 2], text[len(text) // 2 :]):
                events.append({"type": "response.output_text.delta", **common, "content_index": 0, "delta": delta, "logprobs": []})
            events.append({"type": "response.output_text.done", **common, "content_index": 0, "text": text, "logprobs": []})
            events.append({"type": "response.content_part.done", **common, "content_index": 0, "part": {**part, "text": text}})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


@dataclass
class ModelServer:
    url: str  # base URL for an OpenAI client (ends in /v1)
    requests: list[dict[str, Any]] = field(default_factory=list)
    before: list[dict[str, Any]] = field(default_factory=list)  # replies to give before the two turns (a streamed Responses one as events)
    chat: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # the chat reply to a request, instead of the two turns


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    state: dict[str, ModelServer] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            state["s"].requests.append({"path": self.path, "body": body})
            if body.get("stream") and self.path.endswith("/responses"):
                final = state["s"].before.pop(0) if state["s"].before else responses_reply(body)
                events = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in responses_events(final))
                data, content_type = events.encode(), "text/event-stream"
            elif body.get("stream"):
                reply = state["s"].before.pop(0) if state["s"].before else (state["s"].chat or chat_reply)(body)
                events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chat_chunks(reply))
                data, content_type = (events + "data: [DONE]\n\n").encode(), "text/event-stream"
            elif state["s"].before:
                data, content_type = json.dumps(state["s"].before.pop(0)).encode(), "application/json"
            else:
                reply = responses_reply(body) if self.path.endswith("/responses") else (state["s"].chat or chat_reply)(body)
                data, content_type = json.dumps(reply).encode(), "application/json"
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["s"] = ModelServer(url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["s"]
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class Store:
    directory: Path
    provider: TracerProvider

    def traces(self) -> Any:
        assert agentotel.flush()
        return agentotel.open(self.directory)

    def runs(self) -> list[dict[str, Any]]:
        return self.traces().sql("select * from runs").df().to_dict("records")

    def only_run(self, check: bool = True) -> Any:
        """The trajectory of the one run recorded (asserting there is exactly one).

        A run whose steps all succeeded is a good run: `check` must find nothing to warn about in it (unless
        `check=False`: a known false alarm, named where it is turned off).
        """
        traces = self.traces()
        ids = [r[0] for r in traces.sql("select run_id from runs").fetchall()]
        assert len(ids) == 1, traces.sql("select run_id, name, steps from runs").fetchall()
        trajectory = traces.trajectory(ids[0])
        if check and trajectory.run.get("status") == "ok" and all(s.status == "ok" for s in trajectory.steps):
            alarms = [(f.kind, f.index, f.message) for f in traces.findings(ids[0]) if f.severity in ("warning", "error")]
            assert not alarms, alarms
        return trajectory


@pytest.fixture
def store(tmp_path, monkeypatch) -> Iterator[Store]:
    """`agentotel.instrument()` into a fresh directory, with its own tracer provider, for this test only."""
    monkeypatch.setenv("AGENTOTEL_RAISE_INTERNAL_ERRORS", "1")
    provider = TracerProvider()
    directory = tmp_path / "traces"
    agentotel.instrument(directory, tracer_provider=provider)
    try:
        yield Store(directory, provider)
    finally:
        agentotel.shutdown()
        provider.shutdown()


def assert_one_linked_tool_call(trajectory: Any, tool: str = "get_weather", arguments: Any = None,
                                result_contains: str = "18C") -> Any:
    """2 model steps and 1 tool step (arguments, result, call id, requested_by the first model step)."""
    types = [s.type for s in trajectory.steps]
    assert types.count("llm") == 2, [(s.type, s.name) for s in trajectory.steps]
    tools = [s for s in trajectory.steps if s.type == "tool"]
    assert len(tools) == 1, [(s.type, s.name) for s in trajectory.steps]
    step = tools[0]
    first_llm = next(s for s in trajectory.steps if s.type == "llm")
    assert step.name == f"execute_tool {tool}"
    assert step.tool_call_id == CALL_ID
    assert step.requested_by == first_llm.index
    assert step.input == (arguments if arguments is not None else ARGUMENTS)
    assert result_contains in json.dumps(step.output)
    assert step.status == "ok"
    return step
