"""Bedrock's InvokeModel bodies, per model family: Anthropic Messages, Titan, Llama, Mistral, Cohere
Command and Command R, AI21 Jurassic-2, old Claude text completions (Nova's body is the Converse shape).

The family comes from the model id (an inference-profile prefix such as `us.` and an ARN's path are
looked through) or, for an id that names none, from the body's shape. Read by `bedrock.py`.
"""

from __future__ import annotations

import json
from typing import Any

from agentotel.providers import anthropic as anthropic_adapter
from agentotel.providers import openai as openai_adapter
from agentotel.providers._bedrock_converse import (
    BedrockRequest,
    ConverseStream,
    converse_request,
    converse_response,
    converse_usage,
    pending_calls,
)
from agentotel.providers._core import Request, Response, Usage, capturing, field_of, put, text_part, tool_call_part
from agentotel.providers._stream import Bounded, limits
from agentotel.semconv import (
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
)


# family -> the body's (max tokens, temperature, top_p, top_k, stop sequences) parameter names
_PARAMETERS = {
    "anthropic": ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences"),
    "claude_text": ("max_tokens_to_sample", "temperature", "top_p", "top_k", "stop_sequences"),
    "titan": ("maxTokenCount", "temperature", "topP", None, "stopSequences"),
    "llama": ("max_gen_len", "temperature", "top_p", None, None),
    "mistral": ("max_tokens", "temperature", "top_p", "top_k", "stop"),
    "cohere": ("max_tokens", "temperature", "p", "k", "stop_sequences"),
    "cohere_chat": ("max_tokens", "temperature", "p", "k", "stop_sequences"),
    "ai21": ("maxTokens", "temperature", "topP", None, "stopSequences"),
}


def family_of(model: str, body: Any) -> str:
    name = model.rpartition("/")[2].lower()
    prefix, dot, rest = name.partition(".")
    if dot and prefix in ("us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"):  # a cross-region inference profile
        name = rest
    body = body if isinstance(body, dict) else {}
    if name.startswith("anthropic.") or "anthropic_version" in body:
        return "claude_text" if "prompt" in body else "anthropic"
    if name.startswith("amazon.nova") or "schemaVersion" in body or ("messages" in body and "inferenceConfig" in body):
        return "nova"
    if name.startswith("amazon.titan") or "inputText" in body:
        return "titan"
    if name.startswith("meta.") or "max_gen_len" in body:
        return "llama"
    if name.startswith("ai21.j2"):  # Jurassic-2 (Jamba takes OpenAI-like messages: read as Mistral's chat form)
        return "ai21"
    if name.startswith("cohere.command-r") or ("message" in body and "chat_history" in body):
        return "cohere_chat"
    if name.startswith("cohere.") or "k" in body or "p" in body:
        return "cohere"
    if name.startswith("mistral.") or "messages" in body or "prompt" in body:
        return "mistral"
    return "unknown"


def body_request(body: dict[str, Any], family: str, attributes: dict[str, Any], request: BedrockRequest) -> None:
    if family == "nova":
        converse_request(body, attributes, request, nova=True)
        return
    names = _PARAMETERS.get(family)
    if names is not None:
        config = body.get("textGenerationConfig") or {} if family == "titan" else body
        for attribute, name, kind in zip(
            (GEN_AI_REQUEST_MAX_TOKENS, GEN_AI_REQUEST_TEMPERATURE, GEN_AI_REQUEST_TOP_P, GEN_AI_REQUEST_TOP_K, GEN_AI_REQUEST_STOP_SEQUENCES),
            names,
            (int, (int, float), (int, float), int, (list, tuple)),
        ):
            if name is not None:
                put(attributes, attribute, config.get(name), kind)
    if family == "anthropic":
        if capturing():
            request.input_messages = anthropic_adapter._messages(body.get("messages"))
            request.system_instructions = anthropic_adapter._blocks(body["system"]) if body.get("system") else None
        request.tool_definitions = anthropic_adapter._tool_definitions(body.get("tools"))
        return
    if family == "cohere_chat":
        if capturing():
            history = [
                {"role": "assistant" if m.get("role") == "CHATBOT" else "user", "parts": [text_part(m.get("message", ""))]}
                for m in body.get("chat_history") or ()
            ]
            request.input_messages = [*history, {"role": "user", "parts": [text_part(body.get("message", ""))]}]
            request.system_instructions = [text_part(body["preamble"])] if body.get("preamble") else None
        definitions = [
            {"type": "function", "name": t.get("name"), "description": t.get("description"), "parameters": t.get("parameter_definitions")}
            for t in body.get("tools") or ()
        ]
        request.tool_definitions = definitions or None
        return
    if not capturing():
        return
    if "messages" in body:  # Mistral's chat form: OpenAI-like messages
        request.input_messages = [
            {"role": m.get("role", "user"), "parts": [text_part(m["content"])] if isinstance(m.get("content"), str) else []}
            for m in body["messages"]
        ]
    else:
        prompt = body.get("inputText", body.get("prompt"))
        if isinstance(prompt, str):
            request.input_messages = [{"role": "user", "parts": [text_part(prompt)]}]


def _text_of(body: dict[str, Any], family: str) -> tuple[str | None, str | None, int | None, int | None]:
    """A text family's body (or stream chunk): its text, finish reason, input and output tokens."""
    if family == "titan":
        result = (body.get("results") or [body])[0]
        output = result.get("tokenCount", body.get("totalOutputTextTokenCount"))
        return result.get("outputText"), result.get("completionReason"), body.get("inputTextTokenCount"), output
    if family == "llama":
        return body.get("generation"), body.get("stop_reason"), body.get("prompt_token_count"), body.get("generation_token_count")
    if family == "cohere":
        generation = (body.get("generations") or [body])[0]
        return generation.get("text"), generation.get("finish_reason"), None, None
    if family == "claude_text":
        return body.get("completion"), body.get("stop_reason"), None, None
    if family == "cohere_chat":
        billed = field_of(field_of(body.get("response", body), "meta"), "billed_units") or {}
        text = body.get("text") if body.get("event_type") in (None, "text-generation") else None
        return text, body.get("finish_reason"), billed.get("input_tokens"), billed.get("output_tokens")
    if family == "ai21":
        completion = (body.get("completions") or [{}])[0]
        return field_of(completion.get("data"), "text"), field_of(completion.get("finishReason"), "reason"), None, None
    # mistral (prompt form: outputs; chat form: choices)
    if "choices" in body:
        choice = body["choices"][0] if body["choices"] else {}
        message = choice.get("message") or choice.get("delta") or {}
        return message.get("content"), choice.get("stop_reason") or choice.get("finish_reason"), None, None
    output = (body.get("outputs") or [{}])[0]
    return output.get("text"), output.get("stop_reason"), None, None


def _cohere_calls(body: dict[str, Any], response_id: Any) -> list[dict[str, Any]]:
    calls = field_of(body.get("response", body), "tool_calls") or ()
    return [tool_call_part(f"{response_id or 'call'}-{i}", c.get("name"), c.get("parameters")) for i, c in enumerate(calls)]


def body_response(body: Any, family: str, counts: tuple[int | None, int | None]) -> Response:
    if family == "anthropic":
        return anthropic_adapter._response(body)
    if family == "nova":
        response = converse_response(body)
    elif "choices" in body and isinstance(body["choices"], list):  # OpenAI-shaped (gpt-oss, Jamba, Mistral chat, imported models)
        response = openai_adapter._chat_response_of(body)
    else:
        text, finish, input_tokens, output_tokens = _text_of(body, family)
        parts = [text_part(text)] if text else []
        response_id = body.get("response_id") or body.get("id")
        if response_id is not None and not isinstance(response_id, str):  # AI21's is a number
            response_id = str(response_id)
        if family == "cohere_chat":
            parts.extend(_cohere_calls(body, response_id))
        finish = finish or None
        response = Response(
            id=response_id,
            finish_reasons=[finish] if finish else [],
            usage=Usage(input_tokens, output_tokens) if input_tokens is not None or output_tokens is not None else None,
            output_messages=[{"role": "assistant", "parts": parts, "finish_reason": finish}],
            tool_calls=pending_calls(parts),
        )
    return _counted(response, *counts)


def _counted(response: Response, input_tokens: int | None, output_tokens: int | None) -> Response:
    """Token counts the body left out (all, or one: a guardrail's trace may carry input only) from Bedrock's own."""
    if input_tokens is None and output_tokens is None:
        return response
    usage = response.usage
    if usage is None:
        response.usage = Usage(input_tokens, output_tokens)
    else:
        if usage.input_tokens is None:
            usage.input_tokens = input_tokens
        if usage.output_tokens is None:
            usage.output_tokens = output_tokens
    return response


class InvokeStream:
    """InvokeModelWithResponseStream events: each `{"chunk": {"bytes": json}}` read by the body's family."""

    def __init__(self, request: Request) -> None:
        self.family = request.family  # type: ignore[attr-defined]
        self.inner: Any = None
        if self.family == "anthropic":
            self.inner = anthropic_adapter._Stream(request)
        elif self.family == "nova":
            self.inner = ConverseStream(request)
        self.text = Bounded(limits()[0])
        self.finish: str | None = None
        self.tokens: list[int | None] = [None, None]
        self.metrics: dict[str, Any] | None = None
        self.last: dict[str, Any] = {}

    def chunk(self, event: Any) -> None:
        data = (event.get("chunk") or {}).get("bytes")
        if not data:
            return
        body = json.loads(data)
        metrics = body.get("amazon-bedrock-invocationMetrics")
        if metrics is not None:
            self.metrics = metrics
        if self.inner is not None:
            self.inner.chunk(body)
            return
        text, finish, input_tokens, output_tokens = _text_of(body, self.family)
        self.text.add(text)
        self.finish = finish or self.finish
        if input_tokens is not None:
            self.tokens[0] = input_tokens
        if output_tokens is not None:
            self.tokens[1] = output_tokens
        self.last = body

    def response(self) -> Response:
        if self.inner is not None:
            response = self.inner.response()
        else:
            parts = [text_part(self.text.text())] if self.text else []
            if self.family == "cohere_chat":
                parts.extend(_cohere_calls(self.last, (self.last.get("response") or {}).get("response_id")))
            response = Response(
                finish_reasons=[self.finish] if self.finish else [],
                usage=Usage(*self.tokens) if self.tokens != [None, None] else None,
                output_messages=[{"role": "assistant", "parts": parts, "finish_reason": self.finish}],
                tool_calls=pending_calls(parts),
            )
        metrics = self.metrics
        if metrics and response.usage is None:
            response.usage = converse_usage(
                {
                    "inputTokens": metrics.get("inputTokenCount"),
                    "outputTokens": metrics.get("outputTokenCount"),
                    "cacheReadInputTokenCount": metrics.get("cacheReadInputTokenCount"),
                    "cacheWriteInputTokenCount": metrics.get("cacheWriteInputTokenCount"),
                }
            )
        elif metrics:
            _counted(response, metrics.get("inputTokenCount"), metrics.get("outputTokenCount"))
        return response


def body_of(params: dict[str, Any]) -> Any:
    """The request body as JSON, or None (not JSON, or a stream that cannot be read twice)."""
    body = params.get("body")
    if hasattr(body, "read") and hasattr(body, "seek"):  # a seekable file: read, then put back where it was
        position = body.tell()
        data = body.read()
        body.seek(position)
        body = data
    if not isinstance(body, (bytes, bytearray, str)):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
