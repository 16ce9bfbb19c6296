"""Run shapes the diagnosis benchmark's corpus lacks, recorded through the real openai SDK (and the Agents SDK)
against a model on 127.0.0.1 that answers from the conversation it is sent: batch loops, silent
fallbacks, parallel calls, streams, retried 429s and 500s, handoffs, long runs that summarise or
window their history, reranked retrieval, tools whose outputs vary, answers that compute numbers, dates
in other formats. Each shape has a good run and, where one exists, a faulty twin; `SHAPES` says what
`check` should find on each (nothing on a good run).
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import openai

import agentotel

MODEL = "gpt-4o-mini"


# ---- the model server: a reply per request, streamed when asked, or an HTTP error ------------------------


class Status(Exception):
    """Raised by a model to answer an HTTP error (a 429, a 500) as an API would."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def reply(content: str | None = None, *calls: tuple[str, dict[str, Any]], tokens: int = 0) -> dict[str, Any]:
    """A chat.completions body: text and/or tool calls (name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(arguments)}} for name, arguments in calls]
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": 1_780_000_000, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 12, "total_tokens": tokens + 12}}


def _chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A reply as a stream: the text in two deltas, each tool call's arguments in two deltas, then usage."""
    choice = body["choices"][0]
    message = choice["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    out = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    text = message.get("content") or ""
    for piece in (text[: len(text) // 2], text[len(text) // 2:]) if text else ():
        out.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    for i, call in enumerate(message.get("tool_calls") or ()):
        arguments = call["function"]["arguments"]
        head = {"index": i, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": arguments[:5]}}
        out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]})
        tail = {"index": i, "function": {"arguments": arguments[5:]}}
        out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [tail]}, "finish_reason": None}]})
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    out.append({**base, "choices": [], "usage": body["usage"]})
    return out


def _as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages request as a chat.completions one (what the models here read)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    for m in body.get("messages") or ():
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        text = " ".join(b["text"] for b in content if b.get("type") == "text")
        if m["role"] == "assistant":
            calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                     for b in content if b.get("type") == "tool_use"]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for b in content:
            if b.get("type") == "tool_result":
                result = b["content"] if isinstance(b["content"], str) else " ".join(x.get("text", "") for x in b["content"])
                messages.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": result})
        if text:
            messages.append({"role": "user", "content": text})
    return {**body, "messages": messages, "tools": [{"type": "function", "function": {"name": t["name"]}} for t in body.get("tools") or ()]}


def _anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A chat.completions reply as an Anthropic Messages reply."""
    message = body["choices"][0]["message"]
    content: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    content += [{"type": "tool_use", "id": "toolu_" + c["id"][5:], "name": c["function"]["name"],
                 "input": json.loads(c["function"]["arguments"])} for c in message.get("tool_calls") or ()]
    return {"id": "msg_" + body["id"][9:], "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
            "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": body["usage"]["prompt_tokens"] or 100, "output_tokens": body["usage"]["completion_tokens"]}}


@contextlib.contextmanager
def serve(model: Callable[[dict[str, Any]], dict[str, Any]]) -> Iterator[str]:
    """The model on 127.0.0.1 (chat completions, plain or streamed; Anthropic messages); yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            status, content_type = 200, "application/json"
            try:
                if self.path.endswith("/messages"):  # the Anthropic API: the model reads and answers in chat form
                    answer = _anthropic(model(_as_chat(body)))
                    answer["model"] = body.get("model") or answer["model"]  # the model asked for, as the API answers
                    data = json.dumps(answer).encode()
                    self._send(200, content_type, data)
                    return
                answer = model(body)
                body["messages"] = body.get("messages") or []
                answer["usage"]["prompt_tokens"] = answer["usage"]["prompt_tokens"] or len(json.dumps(body["messages"])) // 4
                if body.get("stream"):
                    data = ("".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(answer)) + "data: [DONE]\n\n").encode()
                    content_type = "text/event-stream"
                else:
                    data = json.dumps(answer).encode()
            except Status as exc:
                status, data = exc.code, json.dumps({"error": {"message": str(exc), "type": "api_error"}}).encode()
            self._send(status, content_type, data)

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            if status == 429:
                self.send_header("retry-after-ms", "1")
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# ---- reading a request ---------------------------------------------------------------------------------


def users(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body.get("messages") or () if m.get("role") == "user"]


def results(body: dict[str, Any]) -> list[Any]:
    """The tool results the request carries, parsed, oldest first."""
    out = []
    for m in body.get("messages") or ():
        if m.get("role") == "tool":
            try:
                out.append(json.loads(m["content"]))
            except (TypeError, ValueError):
                out.append(m["content"])
    return out


def system(body: dict[str, Any]) -> str:
    return next((str(m.get("content")) for m in body.get("messages") or () if m.get("role") in ("system", "developer")), "")


# ---- a loop: what every plain agent of these shapes does ---------------------------------------------------


def loop(client: Any, messages: list[dict[str, Any]], tools: dict[str, Callable[..., Any]], offered: list[dict[str, Any]], *,
         stream: bool = False, max_turns: int = 8, before_call: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
         run_only: int | None = None) -> str:
    """An ordinary tool-calling loop over `messages` (extended in place). `before_call` may rewrite what is
    sent (a window, a summary); `run_only` runs only the first n calls of a turn (a fault)."""
    for _ in range(max_turns):
        sent = before_call(messages) if before_call else messages
        if stream:
            message = _streamed(client.chat.completions.create(model=MODEL, messages=sent, tools=offered, stream=True,
                                                               stream_options={"include_usage": True}))
        else:
            message = client.chat.completions.create(model=MODEL, messages=sent, tools=offered).choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return message.get("content") or ""
        for call in calls[:run_only]:
            arguments = json.loads(call["function"]["arguments"])
            try:
                result: Any = tools[call["function"]["name"]](**arguments)
            except Exception as exc:  # noqa: BLE001 - the loop shows the model the error, as most agents do
                result = f"Error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "I could not finish."


def _streamed(stream: Any) -> dict[str, Any]:
    text, calls = "", {}
    for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": call.id, "type": "function", "function": {"name": "", "arguments": ""}})
                entry["id"] = entry["id"] or call.id
                entry["function"]["name"] += call.function.name or "" if call.function else ""
                entry["function"]["arguments"] += (call.function.arguments or "") if call.function else ""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


@dataclass
class Recorder:
    directory: Any
    base_url: str

    def client(self, **kwargs: Any) -> Any:
        return openai.OpenAI(base_url=self.base_url, api_key="sk-test", max_retries=kwargs.pop("max_retries", 0), **kwargs)

    def run(self, name: str, task: Any, body: Callable[[], str]) -> str:
        """Record one run of an agent; a failing run is recorded as failed. Returns its run id."""
        with agentotel.run(name, task=task) as run:
            try:
                run.output = body()
            except Exception:  # noqa: BLE001 - the record is what the test looks at
                pass
        agentotel.flush()
        return run.id


# ---- Gemini generateContent and Bedrock Converse bodies, read and answered in chat form ------------------------------


def gemini_as_chat(body: dict[str, Any], model_name: str) -> dict[str, Any]:
    """A Gemini generateContent request (the model named in its URL) as a chat.completions one; a function call and
    its response meet on the call's id (or the function's name and turn when the client sent none)."""
    messages: list[dict[str, Any]] = []
    instruction = body.get("systemInstruction") or body.get("system_instruction")
    if instruction:
        messages.append({"role": "system", "content": " ".join(p.get("text", "") for p in instruction.get("parts") or ())})
    for turn, content in enumerate(body.get("contents") or ()):
        parts = content.get("parts") or ()
        text = " ".join(p["text"] for p in parts if "text" in p)
        if content.get("role") == "model":
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": [
                {"id": f.get("id") or f"{f['name']}-{turn + 1}", "type": "function",
                 "function": {"name": f["name"], "arguments": json.dumps(f.get("args") or {})}} for f in calls]} if calls else {})})
            continue
        for part in parts:
            if "functionResponse" in part:
                answer = part["functionResponse"]
                response = answer.get("response") or {}
                messages.append({"role": "tool", "tool_call_id": answer.get("id") or f"{answer['name']}-{turn}",
                                 "content": json.dumps(response["output"]) if "output" in response
                                 else f"Error: {response.get('error')}"})
        if text:
            messages.append({"role": "user", "content": text})
    tools = [{"type": "function", "function": {"name": f["name"], "description": f.get("description")}}
             for t in body.get("tools") or () for f in t.get("functionDeclarations") or ()]
    return {"model": model_name, "messages": messages, "tools": tools}


def chat_as_gemini(answer: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    """A chat.completions reply as a Gemini generateContent reply, `modelVersion` the model the reply names."""
    message = answer["choices"][0]["message"]
    parts: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    parts += [{"functionCall": {"id": c["id"], "name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}}
              for c in message.get("tool_calls") or ()]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 12, "totalTokenCount": prompt_tokens + 12},
            "modelVersion": answer["model"], "responseId": answer["id"]}


def converse_as_chat(body: dict[str, Any], model_id: str) -> dict[str, Any]:
    """A Bedrock Converse request (the model id from its URL) as a chat.completions one; a toolResult of status error
    reads 'Error: ...'."""
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": " ".join(s.get("text", "") for s in body["system"])})
    for m in body.get("messages") or ():
        blocks = m.get("content") or ()
        text = " ".join(b["text"] for b in blocks if "text" in b)
        if m["role"] == "assistant":
            calls = [{"id": b["toolUse"]["toolUseId"], "type": "function",
                      "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"])}}
                     for b in blocks if "toolUse" in b]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for b in blocks:
            if "toolResult" in b:
                result = b["toolResult"]
                inner = (result.get("content") or [{}])[0]
                value = json.dumps(inner["json"]) if "json" in inner else inner.get("text", "")
                messages.append({"role": "tool", "tool_call_id": result["toolUseId"],
                                 "content": f"Error: {value}" if result.get("status") == "error" else value})
        if text:
            messages.append({"role": "user", "content": text})
    tools = [{"type": "function", "function": {"name": t["toolSpec"]["name"], "description": t["toolSpec"].get("description")}}
             for t in (body.get("toolConfig") or {}).get("tools") or ()]
    return {"model": model_id, "messages": messages, "tools": tools}


def chat_as_converse(answer: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    """A chat.completions reply as a Bedrock Converse reply."""
    message = answer["choices"][0]["message"]
    content: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    content += [{"toolUse": {"toolUseId": "tooluse_" + c["id"][5:], "name": c["function"]["name"],
                             "input": json.loads(c["function"]["arguments"])}} for c in message.get("tool_calls") or ()]
    return {"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if message.get("tool_calls") else "end_turn",
            "usage": {"inputTokens": prompt_tokens, "outputTokens": 12, "totalTokens": prompt_tokens + 12},
            "metrics": {"latencyMs": 5}}


@contextlib.contextmanager
def serve_models(model: Callable[[dict[str, Any]], dict[str, Any]]) -> Iterator[str]:
    """The model on 127.0.0.1 behind four APIs, each read and answered in chat form: chat completions at /v1, Anthropic
    messages at /v1/messages, Gemini at /v1beta/models/M:generateContent, Bedrock Converse at /model/M/converse. Yields
    the root URL (no /v1). The model the request names reaches `model` as the chat body's `model`."""
    from urllib.parse import unquote

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}"
            body, path, tokens = json.loads(raw), unquote(self.path.split("?")[0]), len(raw) // 4
            status = 200
            try:
                if path.endswith("/messages"):
                    out = _anthropic(model(_as_chat(body)))
                    out["model"] = body.get("model") or out["model"]
                elif path.endswith(":generateContent"):
                    out = chat_as_gemini(model(gemini_as_chat(body, path.rsplit("/", 1)[1].split(":")[0])), tokens)
                elif path.endswith("/converse"):
                    out = chat_as_converse(model(converse_as_chat(body, path.split("/model/", 1)[1].rsplit("/", 1)[0])), tokens)
                else:
                    out = model(body)
                    out["usage"]["prompt_tokens"] = out["usage"]["prompt_tokens"] or tokens
                data = json.dumps(out).encode()
            except Status as exc:
                status, data = exc.code, json.dumps({"error": {"message": str(exc), "type": "api_error"}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
